// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit cases for key handles (kwq_key_get(), kwq_add_ref(),
 * kwq_key_put()): an add by handle is kwq_add() of the key, applied by
 * the next call that takes the queue lock; a redundant one changes
 * nothing; the handle keeps the key's node while the key comes and goes;
 * the validation; and kthreads that add by handle while others take and
 * finish the keys, with no add lost and no key handed out twice.
 */

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/kwq.h>
#include <linux/slab.h>

#include "kwq_test.h"

static void kr_put_action(void *ref)
{
	kwq_key_put(ref);
}

/* A handle, put at the end of the case unless kr_put() put it. */
static struct kwq_key_ref *kr_get_key(struct kunit *test, struct kwq *q,
				      const void *key, size_t len)
{
	struct kwq_key_ref *ref = kwq_key_get(q, key, len, GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ref);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, kr_put_action,
							   ref));
	return ref;
}

static struct kwq_key_ref *kr_get(struct kunit *test, struct kwq *q,
				  const char *key)
{
	return kr_get_key(test, q, key, strlen(key));
}

static void kr_put(struct kunit *test, struct kwq_key_ref *ref)
{
	kunit_release_action(test, kr_put_action, ref);
}

static void keyref_add_of_idle_key_makes_it_ready(struct kunit *test)
{
	struct kwq *q = kt_create(test, NULL, NULL);
	struct kwq_key_ref *ref = kr_get(test, q, "a");

	/* Pinned, not queued. */
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_IDLE, kt_state(q, "a"));
	KUNIT_EXPECT_EQ(test, 0L, kwq_len(q));
	KUNIT_EXPECT_EQ(test, 0, kwq_add_ref(ref));
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
	kt_get_done(test, q, "a");
	kt_expect_empty(test, q);
	kr_put(test, ref);
}

static void keyref_redundant_add_changes_nothing(struct kunit *test)
{
	struct kwq *q = kt_create(test, NULL, NULL);
	struct kwq_key_ref *ref = kr_get(test, q, "a");
	int i;

	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, 0, kwq_add_ref(ref));
	KUNIT_EXPECT_EQ(test, 0, kt_add(q, "a"));
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, adds_total));
	kt_get_done(test, q, "a");
	kt_expect_empty(test, q);
	kr_put(test, ref);
}

static void keyref_add_after_get_runs_the_key_again(struct kunit *test)
{
	struct kwq *q = kt_create(test, NULL, NULL);
	struct kwq_key_ref *ref = kr_get(test, q, "a");
	struct kwq_item item;

	KUNIT_EXPECT_EQ(test, 0, kwq_add_ref(ref));
	item = kt_get(test, q, "a");
	/* The get took the key: this add makes it dirty, once. */
	KUNIT_EXPECT_EQ(test, 0, kwq_add_ref(ref));
	KUNIT_EXPECT_EQ(test, 0, kwq_add_ref(ref));
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, depth));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
	kt_get_done(test, q, "a");
	kt_expect_empty(test, q);
	kr_put(test, ref);
}

static void keyref_add_before_done_is_not_lost(struct kunit *test)
{
	struct kwq *q = kt_create(test, NULL, NULL);
	struct kwq_key_ref *ref = kr_get(test, q, "a");
	struct kwq_item item;

	KUNIT_EXPECT_EQ(test, 0, kt_add(q, "a"));
	item = kt_get(test, q, "a");
	/* Not applied yet when done comes: done applies it first. */
	KUNIT_EXPECT_EQ(test, 0, kwq_add_ref(ref));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_READY, kt_state(q, "a"));
	kt_get_done(test, q, "a");
	kt_expect_empty(test, q);
	kr_put(test, ref);
}

static void keyref_add_after_remove_queues_again(struct kunit *test)
{
	struct kwq *q = kt_create(test, NULL, NULL);
	struct kwq_key_ref *ref = kr_get(test, q, "a");

	KUNIT_EXPECT_EQ(test, 0, kwq_add_ref(ref));
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
	KUNIT_EXPECT_EQ(test, 0, kt_remove(q, "a"));
	KUNIT_EXPECT_EQ(test, 0L, kwq_len(q));
	/* The handle's node stays; the add is no longer redundant. */
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_IDLE, kt_state(q, "a"));
	KUNIT_EXPECT_EQ(test, 0, kwq_add_ref(ref));
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
	kr_put(test, ref);
}

static void keyref_add_after_dirty_removed_marks_dirty_again(struct kunit *test)
{
	struct kwq *q = kt_create(test, NULL, NULL);
	struct kwq_key_ref *ref = kr_get(test, q, "a");
	struct kwq_item item;

	KUNIT_EXPECT_EQ(test, 0, kwq_add_ref(ref));
	item = kt_get(test, q, "a");
	KUNIT_EXPECT_EQ(test, 0, kwq_add_ref(ref));
	/* Remove of a dirty key cancels its requeue. */
	KUNIT_EXPECT_EQ(test, 0, kt_remove(q, "a"));
	KUNIT_EXPECT_EQ(test, 0ULL, KT_STAT(test, q, depth));
	KUNIT_EXPECT_EQ(test, 0, kwq_add_ref(ref));
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, depth));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
	kr_put(test, ref);
}

static void keyref_raises_priority_as_kwq_add_does(struct kunit *test)
{
	struct kwq *q = kt_create(test, NULL, NULL);
	struct kwq_key_ref *ref = kr_get(test, q, "low");

	KUNIT_EXPECT_EQ(test, 0, kt_add_prio(q, "low", -5));
	KUNIT_EXPECT_EQ(test, 0, kt_add(q, "mid"));
	/* Ready at -5: not redundant at priority 0. */
	KUNIT_EXPECT_EQ(test, 0, kwq_add_ref(ref));
	kt_get_done(test, q, "mid");
	kt_get_done(test, q, "low");
	kr_put(test, ref);
}

static void keyref_opts_add_by_handle(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_key_ref *ref = kr_get(test, q, "a");
	struct kwq_add_opts opts = { .after_ns = 5 * NSEC_PER_MSEC };

	KUNIT_EXPECT_EQ(test, 0, kwq_add_ref_opts(ref, &opts));
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_WAITING, kt_state(q, "a"));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_add_ref_opts(ref, NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_add_ref_opts(NULL, &opts));
	/* A plain add by handle of a waiting key: ready now. */
	KUNIT_EXPECT_EQ(test, 0, kwq_add_ref(ref));
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
	kt_get_done(test, q, "a");
	kt_advance(c, 10 * NSEC_PER_MSEC);
	kt_expect_empty(test, q);
	kr_put(test, ref);
}

static void keyref_second_get_is_counted_node_stays_until_last_put(struct kunit *test)
{
	struct kwq *q = kt_create(test, NULL, NULL);
	struct kwq_key_ref *a = kr_get(test, q, "k");
	struct kwq_key_ref *b = kr_get(test, q, "k");

	/* One handle per key, counted. */
	KUNIT_EXPECT_PTR_EQ(test, a, b);
	KUNIT_EXPECT_EQ(test, 0, kwq_add_ref(a));
	kt_get_done(test, q, "k");
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_IDLE, kt_state(q, "k"));
	kr_put(test, a);
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_IDLE, kt_state(q, "k"));
	/* The other handle still adds. */
	KUNIT_EXPECT_EQ(test, 0, kwq_add_ref(b));
	kt_get_done(test, q, "k");
	kr_put(test, b);
	KUNIT_EXPECT_EQ(test, 0U, kt_state(q, "k"));
	kwq_key_put(NULL);
}

static void keyref_put_applies_its_pending_add(struct kunit *test)
{
	struct kwq *q = kt_create(test, NULL, NULL);
	struct kwq_key_ref *ref = kr_get(test, q, "a");

	KUNIT_EXPECT_EQ(test, 0, kwq_add_ref(ref));
	kr_put(test, ref);
	/* Queued by the add: the node is the queue's now. */
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_READY, kt_state(q, "a"));
	kt_get_done(test, q, "a");
	KUNIT_EXPECT_EQ(test, 0U, kt_state(q, "a"));
}

static void keyref_add_takes_no_room(struct kunit *test)
{
	struct kwq_config cfg = { .max_items = 1 };
	struct kwq *q = kt_create(test, &cfg, NULL);
	struct kwq_key_ref *ref = kr_get(test, q, "pinned");

	KUNIT_EXPECT_EQ(test, 0, kt_add(q, "x"));
	KUNIT_EXPECT_EQ(test, -ENOSPC, kt_add(q, "y"));
	KUNIT_EXPECT_EQ(test, 0, kwq_add_ref(ref));
	KUNIT_EXPECT_EQ(test, 2L, kwq_len(q));
	kr_put(test, ref);
}

static void keyref_evicted_failure_record_keeps_node(struct kunit *test)
{
	struct kwq_config cfg = { .max_failure_records = 1 };
	struct kwq *q = kt_create(test, &cfg, NULL);
	struct kwq_key_ref *ref = kr_get(test, q, "a");

	/* "a" fails once and idles with its record; "b" pushes it out. */
	KUNIT_EXPECT_EQ(test, 0, kt_add(q, "a"));
	kt_fail(test, q, "a");
	KUNIT_EXPECT_EQ(test, 0, kt_remove(q, "a"));
	KUNIT_EXPECT_EQ(test, 1, kt_requeues(q, "a"));
	KUNIT_EXPECT_EQ(test, 0, kt_add(q, "b"));
	kt_fail(test, q, "b");
	KUNIT_EXPECT_EQ(test, 0, kt_remove(q, "b"));
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, failure_records_evicted));
	KUNIT_EXPECT_EQ(test, 0, kt_requeues(q, "a"));
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_IDLE, kt_state(q, "a"));
	KUNIT_EXPECT_EQ(test, 0, kwq_add_ref(ref));
	kt_get_done(test, q, "a");
	kr_put(test, ref);
	KUNIT_EXPECT_EQ(test, 0U, kt_state(q, "a"));
}

static void keyref_bad_arguments(struct kunit *test)
{
	struct kwq *q = kt_create(test, NULL, NULL);
	char big[KWQ_KEY_MAX + 1] = {};

	KUNIT_EXPECT_PTR_EQ(test, ERR_PTR(-EINVAL),
			    kwq_key_get(NULL, "a", 1, GFP_KERNEL));
	KUNIT_EXPECT_PTR_EQ(test, ERR_PTR(-EINVAL),
			    kwq_key_get(q, NULL, 1, GFP_KERNEL));
	KUNIT_EXPECT_PTR_EQ(test, ERR_PTR(-EINVAL),
			    kwq_key_get(q, "a", 0, GFP_KERNEL));
	KUNIT_EXPECT_PTR_EQ(test, ERR_PTR(-EINVAL),
			    kwq_key_get(q, big, sizeof(big), GFP_KERNEL));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_add_ref(NULL));
	/* Nothing was made. */
	KUNIT_EXPECT_EQ(test, 0U, kt_state(q, "a"));
	KUNIT_EXPECT_EQ(test, 0, kwq_shutdown(q));
	KUNIT_EXPECT_PTR_EQ(test, ERR_PTR(-ESHUTDOWN),
			    kwq_key_get(q, "a", 1, GFP_KERNEL));
}

static void keyref_outlives_destroyed_queue(struct kunit *test)
{
	struct kwq *q = kwq_create("kwq-keyref-destroy", NULL);
	struct kwq_key_ref *ref;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, q);
	ref = kwq_key_get(q, "a", 1, GFP_KERNEL);
	if (IS_ERR(ref)) {
		kwq_destroy(q);
		KUNIT_FAIL(test, "kwq_key_get: %ld", PTR_ERR(ref));
		return;
	}
	KUNIT_EXPECT_EQ(test, 0, kwq_add_ref(ref));
	kwq_destroy(q);
	/* Shut down; the handle's reference keeps the memory. */
	KUNIT_EXPECT_EQ(test, -ESHUTDOWN, kwq_add_ref(ref));
	KUNIT_EXPECT_PTR_EQ(test, ERR_PTR(-ENOENT), kwq_find("kwq-keyref-destroy"));
	/* The last reference: the queue goes (kmemleak would tell). */
	kwq_key_put(ref);
}

/*
 * The race: producers add by handle (after writing the key's next
 * version) while workers take and finish the keys. Every add is followed
 * by a run that sees what was written before it (no lost add, no lost
 * dirty), and no key is ever held by two workers at once.
 */
#define KR_PRODUCERS	2
#define KR_KEYS		4		/* per producer */
#define KR_ADDS		20000		/* per producer */
#define KR_WORKERS	2

struct kr_state {
	struct kwq *q;
	struct kwq_key_ref *ref[KR_PRODUCERS * KR_KEYS];
	u64 written[KR_PRODUCERS * KR_KEYS];	/* by its producer only */
	u64 seen[KR_PRODUCERS * KR_KEYS];	/* by the key's holder */
	atomic_t held[KR_PRODUCERS * KR_KEYS];
	atomic_t errors;
	atomic_t twice;
	atomic_t runs;
	struct kt_thread thread[KR_WORKERS + KR_PRODUCERS];
};

static int kr_worker(void *data)
{
	struct kt_thread *me = data;
	struct kr_state *s = me->s;
	struct kwq_item item;
	int ret;
	u32 k;

	for (;;) {
		ret = kwq_get(s->q, me, 0, KWQ_WAIT_FOREVER, &item);
		if (ret) {
			if (ret != -ESHUTDOWN)
				atomic_inc(&s->errors);
			break;
		}
		memcpy(&k, item.key, sizeof(k));
		if (item.len != sizeof(k) || k >= ARRAY_SIZE(s->seen)) {
			atomic_inc(&s->errors);
			kwq_done(s->q, &item);
			continue;
		}
		if (atomic_xchg(&s->held[k], 1))
			atomic_inc(&s->twice);
		atomic_inc(&s->runs);
		s->seen[k] = max(s->seen[k], READ_ONCE(s->written[k]));
		if (k % 3 == 0)
			cond_resched();
		atomic_set(&s->held[k], 0);
		if (kwq_done(s->q, &item))
			atomic_inc(&s->errors);
	}
	complete(&me->exited);
	return 0;
}

static int kr_producer(void *data)
{
	struct kt_thread *me = data;
	struct kr_state *s = me->s;
	int p = me->i - KR_WORKERS, i;
	u32 k;

	for (i = 0; i < KR_ADDS; i++) {
		k = p * KR_KEYS + i % KR_KEYS;
		WRITE_ONCE(s->written[k], s->written[k] + 1);
		if (kwq_add_ref(s->ref[k]))
			atomic_inc(&s->errors);
		/* Let the workers take keys: adds then race gets and dones. */
		if (i % 32 == 0)
			usleep_range(1, 5);
	}
	complete(&me->exited);
	return 0;
}

static void keyref_racing_adds_are_not_lost(struct kunit *test)
{
	struct kr_state *s;
	u32 k;

	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	s->q = kt_create(test, NULL, NULL);
	for (k = 0; k < ARRAY_SIZE(s->ref); k++)
		s->ref[k] = kr_get_key(test, s->q, &k, sizeof(k));
	kt_run_pool(test, s->q, s, s->thread, KR_WORKERS, kr_worker,
		    KR_PRODUCERS, kr_producer, "kwq-ref");
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&s->errors));
	KUNIT_EXPECT_EQ(test, 0, atomic_read(&s->twice));
	for (k = 0; k < ARRAY_SIZE(s->seen); k++) {
		KUNIT_EXPECT_EQ(test, (u64)KR_ADDS / KR_KEYS, s->written[k]);
		KUNIT_EXPECT_EQ_MSG(test, s->written[k], s->seen[k],
				    "key %u: an add by handle was lost", k);
	}
	kunit_info(test, "runs %d for %d adds\n", atomic_read(&s->runs),
		   KR_PRODUCERS * KR_ADDS);
}

static struct kunit_case kwq_keyref_cases[] = {
	KUNIT_CASE(keyref_add_of_idle_key_makes_it_ready),
	KUNIT_CASE(keyref_redundant_add_changes_nothing),
	KUNIT_CASE(keyref_add_after_get_runs_the_key_again),
	KUNIT_CASE(keyref_add_before_done_is_not_lost),
	KUNIT_CASE(keyref_add_after_remove_queues_again),
	KUNIT_CASE(keyref_add_after_dirty_removed_marks_dirty_again),
	KUNIT_CASE(keyref_raises_priority_as_kwq_add_does),
	KUNIT_CASE(keyref_opts_add_by_handle),
	KUNIT_CASE(keyref_second_get_is_counted_node_stays_until_last_put),
	KUNIT_CASE(keyref_put_applies_its_pending_add),
	KUNIT_CASE(keyref_add_takes_no_room),
	KUNIT_CASE(keyref_evicted_failure_record_keeps_node),
	KUNIT_CASE(keyref_bad_arguments),
	KUNIT_CASE(keyref_outlives_destroyed_queue),
	KUNIT_CASE_SLOW(keyref_racing_adds_are_not_lost),
	{}
};

static struct kunit_suite kwq_keyref_suite = {
	.name = "kwq_keyref",
	.test_cases = kwq_keyref_cases,
};

kunit_test_suite(kwq_keyref_suite);
