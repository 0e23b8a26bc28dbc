// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit cases for priority levels (src/ready.c) and for what a queue is
 * charged. A level other than priority 0's exists while a node may become
 * ready at it (a node whose ->prio or ->requeue_prio it is, in any state):
 * one key re-added with ever new priorities, or adds that change nothing,
 * leave no level and no charge behind, on a queue with a byte budget and
 * on one without; yet a key is made ready at its pending requeue's
 * priority, its waiting priority, its dead priority, with no allocation.
 * Each allocation is charged the size of its slab object.
 *
 * The cases look at struct kwq (layout.h) under q->lock: its levels, and
 * the nodes of its table (few keys: the table never grows).
 */

#include <kunit/test.h>
#include <linux/err.h>
#include <linux/kwq.h>
#include <linux/mm.h>
#include <linux/prandom.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "kwq_internal.h"
#include "kwq_test.h"
#include "queue.h"
#include "ready.h"

#define MS		NSEC_PER_MSEC
/* Distinct priorities a case goes through: levels never freed made 2N. */
#define KL_PRIOS	2000

/* The levels @q holds (level 0 not counted). */
static unsigned long kl_levels(struct kwq *q)
{
	unsigned long flags, nr = 0;
	struct rb_node *rb;

	spin_lock_irqsave(&q->lock, flags);
	for (rb = rb_first(&q->all_levels); rb; rb = rb_next(rb))
		nr++;
	spin_unlock_irqrestore(&q->lock, flags);
	return nr;
}

static bool kl_has_level(struct kwq *q, int prio)
{
	unsigned long flags;
	bool found;

	spin_lock_irqsave(&q->lock, flags);
	found = kwq_level_find(q, prio);
	spin_unlock_irqrestore(&q->lock, flags);
	return found;
}

/* The references to @q's level of @prio (0: there is none). */
static unsigned long kl_refs(struct kwq *q, int prio)
{
	struct kwq_level *l;
	unsigned long flags, refs;

	spin_lock_irqsave(&q->lock, flags);
	l = kwq_level_find(q, prio);
	refs = l ? l->refs : 0;
	spin_unlock_irqrestore(&q->lock, flags);
	return refs;
}

static long kl_used(struct kwq_budget *b)
{
	return atomic_long_read(&b->used);
}

static int kl_add(struct kwq *q, const char *key, int prio, s64 after_ns)
{
	struct kwq_add_opts o = { .after_ns = after_ns, .priority = prio };

	return kwq_add_opts(q, key, strlen(key), &o);
}

/*
 * One failed run of ready @key, retried at @prio: get, add_rate_limited,
 * done. Returns the delay of the retry (KWQ_DELAY_DEAD: it died).
 */
static u64 kl_fail(struct kunit *test, struct kwq *q, const char *key,
		   int prio)
{
	struct kwq_add_opts o = { .priority = prio };
	struct kwq_item item = kt_get(test, q, key);
	u64 delay = 0;

	KUNIT_EXPECT_EQ(test, 0, kwq_add_rate_limited(q, key, strlen(key), &o,
						      &delay));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
	return delay;
}

/*
 * One key re-added with KL_PRIOS ever higher priorities (each moves it
 * to a new level), then KL_PRIOS lower ones (each changes nothing): at
 * most its own level is left at any time, none once it is gone, and the
 * budget is back where it was. Levels used to live until the queue died:
 * 2 * KL_PRIOS of them, on a queue with no budget too.
 */
static void kl_readd(struct kunit *test, struct kwq *q, struct kwq_budget *b)
{
	long used = b ? kl_used(b) : 0;
	unsigned long most = 0;
	struct kwq_item item;
	int i;

	KUNIT_ASSERT_EQ(test, 0, kt_add(q, "k"));
	for (i = 1; i <= KL_PRIOS; i++) {
		KUNIT_ASSERT_EQ(test, 0, kl_add(q, "k", i, 0));
		most = max(most, kl_levels(q));
	}
	for (i = -1; i >= -KL_PRIOS; i--) {
		KUNIT_ASSERT_EQ(test, 0, kl_add(q, "k", i, 0));
		most = max(most, kl_levels(q));
	}
	KUNIT_EXPECT_EQ(test, 1UL, most);
	KUNIT_EXPECT_TRUE(test, kl_has_level(q, KL_PRIOS));
	item = kt_get(test, q, "k");
	KUNIT_EXPECT_EQ(test, KL_PRIOS, item.priority);
	/* Processing: each add raises its pending requeue's priority. */
	for (i = 1; i <= KL_PRIOS; i++) {
		KUNIT_ASSERT_EQ(test, 0, kl_add(q, "k", i + KL_PRIOS, 0));
		most = max(most, kl_levels(q));
	}
	KUNIT_EXPECT_EQ(test, 2UL, most);
	/* The requeue cancelled, the run over: the key is gone. */
	KUNIT_ASSERT_EQ(test, 0, kwq_remove(q, "k", 1));
	KUNIT_ASSERT_EQ(test, 0, kwq_done(q, &item));
	KUNIT_EXPECT_EQ(test, 0UL, kl_levels(q));
	if (b)
		KUNIT_EXPECT_EQ(test, used, kl_used(b));
}

static void readd_with_new_priorities_leaves_no_level(struct kunit *test)
{
	struct kwq_budget *b = kt_budget(test, ULONG_MAX);

	kl_readd(test, kt_create_charged(test, NULL, NULL, b), b);
}

static void readd_on_queue_without_budget_leaves_no_level(struct kunit *test)
{
	kl_readd(test, kt_create(test, NULL, NULL), NULL);
}

/*
 * Adds that change nothing leave no level of their priority: a ready
 * key added lower, a dirty one added lower, a waiting one added later
 * and lower, a key that cannot be added (the item cap).
 */
static void add_that_changes_nothing_leaves_no_level(struct kunit *test)
{
	struct kwq_budget *b = kt_budget(test, ULONG_MAX);
	struct kwq_config cfg = { .max_items = 3 };
	struct kt_clock *c;
	struct kwq *q = kt_create_charged(test, &cfg, &c, b);
	long used;

	KUNIT_ASSERT_EQ(test, 0, kl_add(q, "r", 10, 0));
	KUNIT_ASSERT_EQ(test, 0, kl_add(q, "p", 20, 0));
	kt_get(test, q, "p");
	KUNIT_ASSERT_EQ(test, 0, kl_add(q, "p", 8, 0));
	KUNIT_ASSERT_EQ(test, 0, kl_add(q, "w", 4, 10 * MS));
	used = kl_used(b);
	KUNIT_ASSERT_EQ(test, 4UL, kl_levels(q));

	KUNIT_EXPECT_EQ(test, 0, kl_add(q, "r", 5, 0));
	KUNIT_EXPECT_EQ(test, 0, kl_add(q, "p", 3, 0));
	KUNIT_EXPECT_EQ(test, 0, kl_add(q, "w", 2, 20 * MS));
	KUNIT_EXPECT_EQ(test, -ENOSPC, kl_add(q, "x", 6, 0));
	KUNIT_EXPECT_EQ(test, 4UL, kl_levels(q));
	KUNIT_EXPECT_FALSE(test, kl_has_level(q, 5));
	KUNIT_EXPECT_FALSE(test, kl_has_level(q, 3));
	KUNIT_EXPECT_FALSE(test, kl_has_level(q, 2));
	KUNIT_EXPECT_FALSE(test, kl_has_level(q, 6));
	KUNIT_EXPECT_EQ(test, used, kl_used(b));
}

/*
 * A level goes with the last node that may become ready at it: ready
 * keys, a waiting key's, a key got, done, removed, a dead key's purged.
 */
static void level_freed_when_last_key_leaves(struct kunit *test)
{
	struct kwq_budget *b = kt_budget(test, ULONG_MAX);
	struct kwq_config cfg = { .max_retries = 1 };
	struct kwq_item item;
	struct kt_clock *c;
	struct kwq *q;
	long used;

	q = kt_create_charged(test, &cfg, &c, b);
	used = kl_used(b);
	KUNIT_ASSERT_EQ(test, 0, kl_add(q, "a", 7, 0));
	KUNIT_ASSERT_EQ(test, 0, kl_add(q, "b", 7, 0));
	kt_get_done(test, q, "a");
	KUNIT_EXPECT_TRUE(test, kl_has_level(q, 7));
	KUNIT_ASSERT_EQ(test, 0, kwq_remove(q, "b", 1));
	KUNIT_EXPECT_EQ(test, 0UL, kl_levels(q));

	/* Waiting at 3, then ready at 3 and done. */
	KUNIT_ASSERT_EQ(test, 0, kl_add(q, "w", 3, 10 * MS));
	KUNIT_EXPECT_TRUE(test, kl_has_level(q, 3));
	kt_advance(c, 10 * MS);
	item = kt_get(test, q, "w");
	KUNIT_EXPECT_EQ(test, 3, item.priority);
	KUNIT_EXPECT_TRUE(test, kl_has_level(q, 3));
	KUNIT_ASSERT_EQ(test, 0, kwq_done(q, &item));
	KUNIT_EXPECT_EQ(test, 0UL, kl_levels(q));

	/* Dead at 9: its level stays for a revive, goes with the purge. */
	KUNIT_ASSERT_EQ(test, 0, kl_add(q, "d", 9, 0));
	kt_advance(c, kl_fail(test, q, "d", 9));
	KUNIT_EXPECT_EQ(test, KWQ_DELAY_DEAD, kl_fail(test, q, "d", 9));
	KUNIT_ASSERT_EQ(test, (u32)KWQ_KEY_DEAD, kt_state(q, "d"));
	KUNIT_EXPECT_TRUE(test, kl_has_level(q, 9));
	KUNIT_ASSERT_EQ(test, 0, kwq_purge(q, "d", 1));
	KUNIT_EXPECT_EQ(test, 0UL, kl_levels(q));
	KUNIT_EXPECT_EQ(test, used, kl_used(b));
}

#ifdef CONFIG_FAULT_INJECTION
/* Fail the calling task's next allocation (current->fail_nth). */
static void kl_fail_next(void)
{
	WRITE_ONCE(current->fail_nth, 1);
}

/* Disarm; true if an allocation was tried (and failed). */
static bool kl_allocated(void)
{
	bool hit = !READ_ONCE(current->fail_nth);

	WRITE_ONCE(current->fail_nth, 0);
	return hit;
}
#else
static void kl_fail_next(void) { }
static bool kl_allocated(void) { return false; }
#endif

/*
 * The last other key of level 9 leaves while a processing key has a
 * pending requeue at 9: the key holds the level, and its done makes it
 * ready there with no allocation (one tried would fail, as
 * CONFIG_FAULT_INJECTION makes it). Likewise a requeue with a delay, a
 * lease given back, an unget, a processing deadline that passes, and a
 * dead key's revive.
 *
 * fail-nth counts every allocation of the task, and a kfree() under KASAN
 * can allocate (a stack depot page for the free's stack): so no level is
 * freed inside a window. A ready key "h" holds the level the step lets
 * go of; the step must drop its reference (one left), and the level goes
 * with "h", after the window.
 */
static void pending_requeue_keeps_its_level(struct kunit *test)
{
	struct kwq_config cfg = {
		.max_retries = 2,
		.processing_timeout_ns = 100 * MS,
	};
	struct kwq_budget *b = kt_budget(test, ULONG_MAX);
	struct kwq_item item, other;
	struct kt_clock *c;
	int owner, ret;
	struct kwq *q;
	bool alloc;

	q = kt_create_charged(test, &cfg, &c, b);
	/* A get with a deadline keeps its record: none allocated later. */
	KUNIT_ASSERT_EQ(test, 0, kt_add(q, "warm"));
	kt_get_done(test, q, "warm");

	/* Dirty at 9 while processing at 0. */
	KUNIT_ASSERT_EQ(test, 0, kt_add(q, "k"));
	item = kt_get(test, q, "k");
	KUNIT_ASSERT_EQ(test, 0, kl_add(q, "k", 9, 0));
	KUNIT_ASSERT_EQ(test, 0, kl_add(q, "j", 9, 0));
	kt_get_done(test, q, "j");
	KUNIT_ASSERT_TRUE(test, kl_has_level(q, 9));
	kl_fail_next();
	ret = kwq_done(q, &item);
	alloc = kl_allocated();
	KUNIT_ASSERT_EQ(test, 0, ret);
	KUNIT_EXPECT_FALSE(test, alloc);
	item = kt_get(test, q, "k");
	KUNIT_EXPECT_EQ(test, 9, item.priority);

	/* Delayed at 5 while processing at 9: waits, then ready at 5. */
	KUNIT_ASSERT_EQ(test, 0, kl_add(q, "k", 5, 10 * MS));
	KUNIT_ASSERT_EQ(test, 0, kl_add(q, "h", 9, 0));
	kl_fail_next();
	ret = kwq_done(q, &item);
	alloc = kl_allocated();
	KUNIT_ASSERT_EQ(test, 0, ret);
	KUNIT_EXPECT_FALSE(test, alloc);
	KUNIT_EXPECT_EQ(test, 1UL, kl_refs(q, 9));
	KUNIT_ASSERT_EQ(test, 0, kt_remove(q, "h"));
	KUNIT_EXPECT_FALSE(test, kl_has_level(q, 9));
	kl_fail_next();
	kt_advance(c, 10 * MS);
	alloc = kl_allocated();
	KUNIT_EXPECT_FALSE(test, alloc);
	item = kt_get(test, q, "k");
	KUNIT_EXPECT_EQ(test, 5, item.priority);

	/* Dirty at 6, lease given back: ready at 6. */
	KUNIT_ASSERT_EQ(test, 0, kwq_done(q, &item));
	KUNIT_ASSERT_EQ(test, 0, kl_add(q, "k", 1, 0));
	KUNIT_ASSERT_EQ(test, 0, kwq_get(q, &owner, KWQ_GET_NONBLOCK, 0,
					 &item));
	KUNIT_ASSERT_EQ(test, 0, kl_add(q, "k", 6, 0));
	KUNIT_ASSERT_EQ(test, 0, kl_add(q, "h", 1, 0));
	kl_fail_next();
	ret = kwq_release_owner(q, &owner);
	alloc = kl_allocated();
	KUNIT_EXPECT_EQ(test, 1, ret);
	KUNIT_EXPECT_FALSE(test, alloc);
	KUNIT_EXPECT_EQ(test, 1UL, kl_refs(q, 1));
	KUNIT_ASSERT_EQ(test, 0, kt_remove(q, "h"));
	KUNIT_EXPECT_FALSE(test, kl_has_level(q, 1));

	/* Dirty at 8, the get undone: back at 8. */
	item = kt_get(test, q, "k");
	KUNIT_EXPECT_EQ(test, 6, item.priority);
	KUNIT_ASSERT_EQ(test, 0, kl_add(q, "k", 8, 0));
	KUNIT_ASSERT_EQ(test, 0, kl_add(q, "h", 6, 0));
	kl_fail_next();
	kwq_unget(q, &item);
	alloc = kl_allocated();
	KUNIT_EXPECT_FALSE(test, alloc);
	KUNIT_EXPECT_EQ(test, 1UL, kl_refs(q, 6));
	KUNIT_ASSERT_EQ(test, 0, kt_remove(q, "h"));
	KUNIT_EXPECT_FALSE(test, kl_has_level(q, 6));

	/* Its deadline passes: requeued (rate limited) at its 8. */
	other = kt_get(test, q, "k");
	KUNIT_EXPECT_EQ(test, 8, other.priority);
	kl_fail_next();
	kt_advance(c, 100 * MS);
	alloc = kl_allocated();
	KUNIT_EXPECT_FALSE(test, alloc);
	KUNIT_EXPECT_EQ(test, -ESTALE, kwq_done(q, &other));
	kt_advance(c, NSEC_PER_SEC);

	/* Its second failure at 8 kills it, every other level gone. */
	kt_advance(c, kl_fail(test, q, "k", 8));
	KUNIT_EXPECT_EQ(test, KWQ_DELAY_DEAD, kl_fail(test, q, "k", 8));
	KUNIT_ASSERT_EQ(test, (u32)KWQ_KEY_DEAD, kt_state(q, "k"));
	KUNIT_EXPECT_EQ(test, 1UL, kl_levels(q));
	kl_fail_next();
	ret = kwq_revive(q, "k", 1);
	alloc = kl_allocated();
	KUNIT_ASSERT_EQ(test, 0, ret);
	KUNIT_EXPECT_FALSE(test, alloc);
	KUNIT_EXPECT_EQ(test, 8, kt_get(test, q, "k").priority);
}

/* The references of the nodes of @q to the level of @prio. Under q->lock. */
static unsigned long kl_node_refs(struct kwq *q, int prio)
{
	unsigned long i, refs = 0;
	struct kwq_node *n;

	for (i = 0; i < (1UL << q->hash_bits); i++)
		for (n = q->hash[i]; n; n = n->hnext)
			refs += (n->prio == prio) + (n->requeue_prio == prio);
	return refs;
}

/*
 * Each level is held by exactly the node priorities that are its own,
 * none by nothing; every priority a node has is a level's (or 0), so
 * there are at most two levels a node. Keys "r0".. only: few enough that
 * the table never grows. Checked under q->lock, reported after.
 */
static void kl_check_refs(struct kunit *test, struct kwq *q)
{
	unsigned long flags, i, refs = 0, bad_refs = 0, nodes = 0, levels = 0;
	int bad_prio = 0, orphan = 0;
	struct kwq_level *l, *bad = NULL;
	struct kwq_node *n;
	struct rb_node *rb;
	bool growing;

	spin_lock_irqsave(&q->lock, flags);
	growing = q->new_hash;
	for (rb = rb_first(&q->all_levels); rb && !growing; rb = rb_next(rb)) {
		l = rb_entry(rb, struct kwq_level, all_rb);
		refs = kl_node_refs(q, l->prio);
		levels++;
		if (!bad && (!l->prio || !l->refs || refs != l->refs)) {
			bad = l;
			bad_prio = l->prio;
			bad_refs = l->refs;
			break;
		}
	}
	for (i = 0; i < (1UL << q->hash_bits) && !growing; i++)
		for (n = q->hash[i]; n; n = n->hnext) {
			nodes++;
			if (!kwq_level_find(q, n->prio))
				orphan = n->prio;
			if (!kwq_level_find(q, n->requeue_prio))
				orphan = n->requeue_prio;
		}
	spin_unlock_irqrestore(&q->lock, flags);

	KUNIT_ASSERT_FALSE(test, growing);
	KUNIT_EXPECT_PTR_EQ_MSG(test, bad, NULL,
				"level %d held by %lu node priorities, counts %lu",
				bad_prio, refs, bad_refs);
	KUNIT_EXPECT_EQ_MSG(test, 0, orphan, "a node's priority has no level");
	KUNIT_EXPECT_LE(test, levels, 2 * nodes);
}

#define KL_KEYS		6
#define KL_STEPS	4000

/*
 * Random adds (plain, delayed, rate limited) at priorities -3..3, gets
 * (some with an owner), dones, ungets, lease returns, removes, forgets,
 * revives and purges, time passing: after each step every level is held
 * by exactly its nodes' priorities; once every key is gone, no level and
 * no charge is left.
 */
static void levels_follow_random_steps(struct kunit *test)
{
	struct kwq_config cfg = {
		.max_retries = 2,
		.max_dead = 2,
		.max_failure_records = 2,
	};
	struct kwq_budget *b = kt_budget(test, ULONG_MAX);
	struct kwq_item held[KL_KEYS];
	bool holding[KL_KEYS] = {};
	struct rnd_state rnd;
	struct kwq_item item;
	unsigned int step, i;
	struct kt_clock *c;
	char key[4];
	int owner;
	struct kwq *q;
	long used;
	u64 delay;

	prandom_seed_state(&rnd, 30);
	q = kt_create_charged(test, &cfg, &c, b);
	used = kl_used(b);
	for (step = 0; step < KL_STEPS; step++) {
		u32 r = prandom_u32_state(&rnd);
		int prio = (int)(r >> 8) % 7 - 3;

		i = (r >> 16) % KL_KEYS;
		snprintf(key, sizeof(key), "r%u", i);
		switch (r % 12) {
		case 0:
		case 1:
			kl_add(q, key, prio, 0);
			break;
		case 2:
			kl_add(q, key, prio, (r >> 20) % 4 * MS);
			break;
		case 3:
			kwq_add_rate_limited(q, key, 2, &(struct kwq_add_opts){
					     .priority = prio }, &delay);
			break;
		case 4:
		case 5:
			if (kwq_get(q, r & 1 ? &owner : NULL,
				    KWQ_GET_NONBLOCK, 0, &item))
				break;
			i = ((const char *)kwq_item_key(&item, NULL))[1] - '0';
			held[i] = item;
			holding[i] = true;
			break;
		case 6:
			if (holding[i] && (r & 0x100))
				kwq_unget(q, &held[i]);
			else if (holding[i])
				kwq_done(q, &held[i]);
			holding[i] = false;
			break;
		case 7:
			kwq_release_owner(q, &owner);
			break;
		case 8:
			kwq_remove(q, key, 2);
			break;
		case 9:
			kwq_forget(q, key, 2);
			break;
		case 10:
			if (r & 0x100)
				kwq_revive(q, key, 2);
			else
				kwq_purge(q, key, 2);
			break;
		default:
			kt_advance(c, (r >> 12) % 8 * MS);
			break;
		}
		kl_check_refs(test, q);
		if (test->status == KUNIT_FAILURE) {
			kunit_info(test, "step %u: op %u key %s prio %d",
				   step, r % 12, key, prio);
			return;
		}
	}
	/* Drain: every key out, every record dropped. */
	kwq_release_owner(q, &owner);
	for (i = 0; i < KL_KEYS; i++)
		if (holding[i])
			kwq_done(q, &held[i]);
	kt_advance(c, 10 * NSEC_PER_SEC);
	while (!kwq_get(q, NULL, KWQ_GET_NONBLOCK, 0, &item))
		kwq_done(q, &item);
	for (i = 0; i < KL_KEYS; i++) {
		snprintf(key, sizeof(key), "r%u", i);
		kwq_purge(q, key, 2);
		kwq_forget(q, key, 2);
	}
	kl_check_refs(test, q);
	KUNIT_EXPECT_EQ(test, 0UL, kl_levels(q));
	/* Kept deadline records are none: no get asked for one. */
	KUNIT_EXPECT_EQ(test, used, kl_used(b));
}

/*
 * What the budget is charged is the slab object of each allocation, not
 * the struct it holds: the queue (1464 bytes: a 2048-byte object), its
 * first hash table, a level (80: 96), a processing deadline (40: 64),
 * the records of revoked leases. Charges used to be sizeof().
 */
static void charges_are_slab_object_sizes(struct kunit *test)
{
	struct kwq_config cfg = { .processing_timeout_ns = 100 * MS };
	struct kwq_budget *b = kt_budget(test, ULONG_MAX);
	struct kwq_item item;
	unsigned long flags;
	struct kt_clock *c;
	struct kwq *q;
	long used;
	size_t sz;
	int owner;

	q = kt_create_charged(test, &cfg, &c, b);
	KUNIT_ASSERT_FALSE(test, is_vmalloc_addr(q->hash));
	KUNIT_EXPECT_EQ(test, kl_used(b), (long)(ksize(q) + ksize(q->hash)));

	/* A level: the key's node is there already. */
	KUNIT_ASSERT_EQ(test, 0, kt_add(q, "k"));
	used = kl_used(b);
	KUNIT_ASSERT_EQ(test, 0, kl_add(q, "k", 5, 0));
	spin_lock_irqsave(&q->lock, flags);
	sz = ksize(kwq_level_find(q, 5));
	spin_unlock_irqrestore(&q->lock, flags);
	KUNIT_EXPECT_EQ(test, kl_used(b) - used, (long)sz);

	/* A processing deadline. */
	used = kl_used(b);
	KUNIT_ASSERT_EQ(test, 0, kwq_get(q, &owner, KWQ_GET_NONBLOCK, 0,
					 &item));
	spin_lock_irqsave(&q->lock, flags);
	sz = ksize(kwq_node_due(item.node));
	spin_unlock_irqrestore(&q->lock, flags);
	KUNIT_EXPECT_EQ(test, kl_used(b) - used, (long)sz);

	/* It passes: the owner's lease is revoked and recorded. */
	used = kl_used(b);
	kt_advance(c, 100 * MS);
	KUNIT_ASSERT_NOT_NULL(test, q->tombs);
	KUNIT_EXPECT_EQ(test, kl_used(b) - used, (long)ksize(q->tombs));
}

static struct kunit_case kwq_levels_cases[] = {
	KUNIT_CASE(readd_with_new_priorities_leaves_no_level),
	KUNIT_CASE(readd_on_queue_without_budget_leaves_no_level),
	KUNIT_CASE(add_that_changes_nothing_leaves_no_level),
	KUNIT_CASE(level_freed_when_last_key_leaves),
	KUNIT_CASE(pending_requeue_keeps_its_level),
	KUNIT_CASE(levels_follow_random_steps),
	KUNIT_CASE(charges_are_slab_object_sizes),
	{}
};

static struct kunit_suite kwq_levels_suite = {
	.name = "kwq_levels",
	.test_cases = kwq_levels_cases,
};

kunit_test_suite(kwq_levels_suite);
