// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit cases that fail the allocations of kwq's exported calls one at a
 * time, as syzkaller does through /proc/thread-self/fail-nth: set
 * current->fail_nth to N, make one call, read it back (0: the Nth
 * allocation of the call was failed), for N = 1, 2, ... until the call
 * completes without reaching N. After each step the call succeeded, or
 * returned -ENOMEM with nothing changed (a batch: exactly its first *done
 * keys applied), checked on the counters of kwq_get_stats() and by
 * draining the ready keys; then the queue still works.
 *
 * Needs CONFIG_FAULT_INJECTION (current->fail_nth), CONFIG_FAILSLAB and
 * CONFIG_FAULT_INJECTION_DEBUG_FS, whose failslab/ignore-gfp-wait the
 * harness sets to N before loading the module (init.sh: fault_attrs) so
 * that GFP_KERNEL allocations fail too: without them every case fails,
 * none is skipped. CONFIG_FAIL_PAGE_ALLOC (the debug kernel) makes page
 * allocations fail as well.
 */

#include <kunit/test.h>
#include <linux/err.h>
#include <linux/bitmap.h>
#include <linux/gfp.h>
#include <linux/kstrtox.h>
#include <linux/kwq.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "kwq_internal.h"
#include "kwq_test.h"
#include "queue.h"

#define KF_MAX_STEPS	5000
#define KF_NR		34	/* batch keys: 3 chunks of the core's 16 */
#define KF_BASE		10	/* ready keys a0..a9 before each call */

static const bool kf_enabled = IS_ENABLED(CONFIG_FAULT_INJECTION) &&
			       IS_ENABLED(CONFIG_FAILSLAB) &&
			       IS_ENABLED(CONFIG_FAULT_INJECTION_DEBUG_FS);

#ifdef CONFIG_FAULT_INJECTION
static void kf_arm(unsigned int n)
{
	WRITE_ONCE(current->fail_nth, n);
}

/* Disarm; true if the armed allocation was reached (and failed). */
static bool kf_disarm(void)
{
	bool hit = !READ_ONCE(current->fail_nth);

	WRITE_ONCE(current->fail_nth, 0);
	return hit;
}
#else
static void kf_arm(unsigned int n) { }
static bool kf_disarm(void) { return false; }
#endif

/*
 * fail-nth must decide alone, GFP_KERNEL allocations (and with
 * CONFIG_FAIL_PAGE_ALLOC order-0 pages) included: failslab ignores
 * sleeping allocations by default, and debugfs attributes cannot be
 * written from here, so the harness sets them before loading this module
 * (tools/testing/init.sh: fault_attrs). Prove they are set.
 */
static void kf_init(struct kunit *test)
{
	struct page *page;
	void *p;
	bool hit;

	KUNIT_ASSERT_TRUE_MSG(test, kf_enabled,
			      "needs CONFIG_FAULT_INJECTION, CONFIG_FAILSLAB and CONFIG_FAULT_INJECTION_DEBUG_FS");
	kf_arm(1);
	p = kmalloc(64, GFP_KERNEL);
	hit = kf_disarm();
	kfree(p);
	KUNIT_ASSERT_TRUE_MSG(test, hit && !p,
			      "a GFP_KERNEL kmalloc() was not failed: set failslab/ignore-gfp-wait to N");
	if (!IS_ENABLED(CONFIG_FAIL_PAGE_ALLOC))
		return;
	kf_arm(1);
	page = alloc_page(GFP_KERNEL);
	hit = kf_disarm();
	if (page)
		__free_page(page);
	KUNIT_ASSERT_TRUE_MSG(test, hit && !page,
			      "an order-0 GFP_KERNEL page was not failed: set fail_page_alloc/ignore-gfp-wait N, min-order 0");
}

/* One step's queue, its keys and what it held before the call. */
struct kf_step {
	struct kunit *test;
	struct kwq *q;
	struct kt_clock *clock;
	struct kwq_key keys[KF_NR];
	char names[KF_NR][8];
	u64 delays[KF_NR];
	struct kwq_stats pre;
	unsigned int nr;	/* keys of the call */
	unsigned int done;	/* out: keys of the call applied */
};

/*
 * What a call did, as the state it must leave: @ready new keys "n0".. of
 * the batch ready, @waiting new waiting, @retries rate-limited adds.
 */
struct kf_effect {
	unsigned int ready;
	unsigned int waiting;
	unsigned int retries;
	unsigned int adds;
	unsigned int records;
};

/* Where a call's new keys go */
enum kf_kind { KF_READY, KF_WAITING, KF_LIMITED };

struct kf_scen {
	const char *name;
	unsigned int nr;	/* 0: one key, else a batch of @nr */
	/* The call; sets s->done for a batch. */
	int (*call)(struct kf_step *s);
	enum kf_kind kind;
	/*
	 * KWQ_CONFIG_CHARGE_CALLER, as /dev/kwq's queues: a single add then
	 * allocates its node under the lock and nothing else, so one failure
	 * fails the add (an uncharged queue preallocates, and a failed
	 * preallocation falls back to the allocation under the lock).
	 */
	bool charged;
};

/* What @sc did when it returned @err (a batch: s->done keys applied). */
static void kf_effect(const struct kf_scen *sc, const struct kf_step *s,
		      int err, struct kf_effect *e)
{
	unsigned int k = sc->nr ? (err ? s->done : s->nr) : !err;

	memset(e, 0, sizeof(*e));
	e->adds = k;
	if (sc->kind == KF_READY) {
		e->ready = k;
		return;
	}
	e->waiting = k;
	if (sc->kind == KF_LIMITED) {
		e->retries = k;
		e->records = k;
	}
}

static void kf_setup(struct kf_step *s, const struct kf_scen *sc)
{
	struct kwq_config cfg = {
		/* Rate-limited keys wait an hour of the fake clock. */
		.nr_limiters = 1,
		.limiters[0] = {
			.type = KWQ_LIMITER_EXPONENTIAL,
			.exp.base_ns = 3600 * NSEC_PER_SEC,
			.exp.max_ns = 3600 * NSEC_PER_SEC,
		},
	};
	struct kunit *test = s->test;
	char a[8];
	unsigned int i;

	if (sc->charged)
		cfg.flags = KWQ_CONFIG_CHARGE_CALLER;
	s->q = kt_create(test, &cfg, &s->clock);
	for (i = 0; i < KF_BASE; i++) {
		snprintf(a, sizeof(a), "a%u", i);
		KUNIT_ASSERT_EQ(test, 0, kt_add(s->q, a));
	}
	s->nr = sc->nr;
	for (i = 0; i < s->nr; i++) {
		s->keys[i].len = snprintf(s->names[i], 8, "n%u", i);
		s->keys[i].key = s->names[i];
		s->keys[i].priority = i % 5;
	}
	s->done = 0;
	s->pre = kt_stats(test, s->q);
}

/*
 * The queue holds what @e says on top of s->pre: counters, then every
 * ready key drained (a0..a9 and n0..n<e->ready - 1>, each once), then an
 * add, get and done work.
 */
static void kf_verify(struct kf_step *s, const struct kf_effect *e,
		      unsigned int n)
{
	struct kunit *test = s->test;
	struct kwq_stats st = kt_stats(test, s->q);
	unsigned long seen_a = 0;
	unsigned int i, got_n = 0;
	struct kwq_item item;
	bool *seen_n;
	size_t len;
	const char *k;

	seen_n = kunit_kcalloc(test, KF_NR, sizeof(*seen_n), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, seen_n);
	KUNIT_EXPECT_EQ_MSG(test, st.len, s->pre.len + e->ready,
			    "N=%u", n);
	KUNIT_EXPECT_EQ_MSG(test, st.waiting, s->pre.waiting + e->waiting,
			    "N=%u", n);
	KUNIT_EXPECT_EQ_MSG(test, st.adds_total, s->pre.adds_total + e->adds,
			    "N=%u", n);
	KUNIT_EXPECT_EQ_MSG(test, st.retries_total,
			    s->pre.retries_total + e->retries, "N=%u", n);
	KUNIT_EXPECT_EQ_MSG(test, st.failure_records,
			    s->pre.failure_records + e->records, "N=%u", n);
	KUNIT_EXPECT_EQ_MSG(test, st.processing, s->pre.processing, "N=%u", n);
	KUNIT_EXPECT_EQ_MSG(test, st.depth,
			    s->pre.depth + e->ready, "N=%u", n);

	while (!kwq_get(s->q, NULL, KWQ_GET_NONBLOCK, 0, &item)) {
		k = kwq_item_key(&item, &len);
		if (k[0] == 'a' && len == 2 && !(seen_a & BIT(k[1] - '0'))) {
			seen_a |= BIT(k[1] - '0');
		} else if (k[0] == 'n') {
			/* Keys are not NUL-terminated: parse a copy. */
			char b[8] = "";

			memcpy(b, k + 1, min(len - 1, sizeof(b) - 1));
			if (!kstrtouint(b, 10, &i) && i < KF_NR && !seen_n[i]) {
				seen_n[i] = true;
				got_n++;
			} else {
				KUNIT_FAIL(test, "N=%u: key n%s twice or unknown",
					   n, b);
			}
		}
		KUNIT_EXPECT_EQ(test, 0, kwq_done(s->q, &item));
	}
	KUNIT_EXPECT_EQ_MSG(test, seen_a, GENMASK(KF_BASE - 1, 0), "N=%u", n);
	KUNIT_EXPECT_EQ_MSG(test, got_n, e->ready, "N=%u", n);
	for (i = 0; i < e->ready && i < KF_NR; i++)
		KUNIT_EXPECT_TRUE_MSG(test, seen_n[i], "N=%u: n%u lost", n, i);
	/* Still works. */
	KUNIT_EXPECT_EQ(test, 0, kt_add(s->q, "zz"));
	kt_get_done(test, s->q, "zz");
	kunit_kfree(test, seen_n);
}

/* Run @sc with N = 1, 2, ... until nothing is failed; the points reached. */
static unsigned int kf_run(struct kunit *test, const struct kf_scen *sc)
{
	struct kf_step *s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	struct kf_effect e;
	unsigned int n;
	bool hit;
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, s);
	s->test = test;
	for (n = 1; n <= KF_MAX_STEPS; n++) {
		kf_setup(s, sc);
		kf_arm(n);
		ret = sc->call(s);
		hit = kf_disarm();
		if (ret && ret != -ENOMEM)
			KUNIT_FAIL(test, "%s N=%u: %d", sc->name, n, ret);
		if (!hit)
			KUNIT_EXPECT_EQ_MSG(test, 0, ret,
					    "%s N=%u: error with no fault",
					    sc->name, n);
		kf_effect(sc, s, ret, &e);
		kf_verify(s, &e, n);
		kt_destroy(test, s->q);
		if (!hit || test->status == KUNIT_FAILURE)
			break;
	}
	KUNIT_EXPECT_LE(test, n, KF_MAX_STEPS);
	kunit_info(test, "%s: %u failure points\n", sc->name, n - 1);
	kunit_kfree(test, s);
	return n - 1;
}

static int kf_add(struct kf_step *s)
{
	return kwq_add(s->q, "n0", 2);
}

static int kf_add_prio(struct kf_step *s)
{
	const struct kwq_add_opts o = { .priority = 3 };

	return kwq_add_opts(s->q, "n0", 2, &o);
}

static int kf_add_after(struct kf_step *s)
{
	return kwq_add_after(s->q, "w0", 2, 3600 * NSEC_PER_SEC);
}

static int kf_add_rate_limited(struct kf_step *s)
{
	u64 delay;

	return kwq_add_rate_limited(s->q, "w0", 2, NULL, &delay);
}

static int kf_batch(struct kf_step *s, gfp_t gfp, u32 flags, s64 after)
{
	const struct kwq_batch_opts o = {
		.gfp = gfp, .flags = flags, .after_ns = after,
		.delays = flags ? s->delays : NULL,
	};

	return kwq_add_batch(s->q, s->keys, s->nr, &o, &s->done);
}

static int kf_batch_kernel(struct kf_step *s)
{
	return kf_batch(s, GFP_KERNEL, 0, 0);
}

static int kf_batch_nowait(struct kf_step *s)
{
	return kf_batch(s, 0, 0, 0);
}

static int kf_batch_after(struct kf_step *s)
{
	return kf_batch(s, GFP_KERNEL, 0, 3600 * NSEC_PER_SEC);
}

static int kf_batch_limited(struct kf_step *s)
{
	return kf_batch(s, GFP_KERNEL, KWQ_BATCH_RATE_LIMITED, 0);
}

/* /dev/kwq's single-key ADD: a new priority's level, a node, a record. */
static int kf_add_key(struct kf_step *s, u32 flags)
{
	const struct kwq_key k = {
		.key = flags ? "w0" : "n0", .len = 2, .priority = 3,
	};
	const struct kwq_batch_opts o = {
		.gfp = GFP_KERNEL | __GFP_RETRY_MAYFAIL, .flags = flags,
		.delays = flags ? s->delays : NULL,
	};

	return kwq_add_key(s->q, &k, &o);
}

static int kf_add_key_plain(struct kf_step *s)
{
	return kf_add_key(s, 0);
}

static int kf_add_key_limited(struct kf_step *s)
{
	return kf_add_key(s, KWQ_BATCH_RATE_LIMITED);
}

static const struct kf_scen kf_scens[] = {
	{ "kwq_add", 0, kf_add, KF_READY, false },
	{ "kwq_add_opts (new priority)", 0, kf_add_prio, KF_READY, false },
	{ "kwq_add_after", 0, kf_add_after, KF_WAITING, false },
	{ "kwq_add_rate_limited", 0, kf_add_rate_limited, KF_LIMITED, false },
	{ "kwq_add_batch GFP_KERNEL", KF_NR, kf_batch_kernel, KF_READY, false },
	{ "kwq_add_batch GFP_NOWAIT", KF_NR, kf_batch_nowait, KF_READY, false },
	{ "kwq_add_batch after", KF_NR, kf_batch_after, KF_WAITING, false },
	{ "kwq_add_batch rate-limited", KF_NR, kf_batch_limited, KF_LIMITED,
	  false },
	{ "kwq_add, charged", 0, kf_add, KF_READY, true },
	{ "kwq_add_after, charged", 0, kf_add_after, KF_WAITING, true },
	{ "kwq_add_batch GFP_KERNEL, charged", KF_NR, kf_batch_kernel,
	  KF_READY, true },
	{ "kwq_add_key, charged", 0, kf_add_key_plain, KF_READY, true },
	{ "kwq_add_key rate-limited, charged", 0, kf_add_key_limited,
	  KF_LIMITED, true },
};

/*
 * One case a call: a case must end well within the hung-task timeout
 * (30 s) that the module's insmod waits under.
 */
#define KF_CASE(fn, i)						\
static void fn(struct kunit *test)				\
{								\
	kf_init(test);						\
	KUNIT_EXPECT_GT(test, kf_run(test, &kf_scens[i]), 0U);	\
}

KF_CASE(fault_add, 0)
KF_CASE(fault_add_opts_new_priority, 1)
KF_CASE(fault_add_after, 2)
KF_CASE(fault_add_rate_limited, 3)
KF_CASE(fault_add_batch_gfp_kernel, 4)
KF_CASE(fault_add_batch_gfp_nowait, 5)
KF_CASE(fault_add_batch_after, 6)
KF_CASE(fault_add_batch_rate_limited, 7)
KF_CASE(fault_add_charged, 8)
KF_CASE(fault_add_after_charged, 9)
KF_CASE(fault_add_batch_charged, 10)
KF_CASE(fault_add_key_charged, 11)
KF_CASE(fault_add_key_rate_limited_charged, 12)

/* kwq_create(): -ENOMEM leaves no queue registered under the name. */
static void fault_create_fails_cleanly(struct kunit *test)
{
	const struct kwq_config cfg = {
		.nr_limiters = 1,
		.limiters[0] = { .type = KWQ_LIMITER_EXPONENTIAL,
				 .exp.base_ns = 1000, .exp.max_ns = 1000000 },
	};
	struct kwq *q, *found;
	unsigned int n;
	bool hit;

	kf_init(test);
	for (n = 1; n <= KF_MAX_STEPS; n++) {
		kf_arm(n);
		q = kwq_create("kf-create", &cfg);
		hit = kf_disarm();
		if (IS_ERR(q)) {
			KUNIT_EXPECT_EQ_MSG(test, -ENOMEM, PTR_ERR(q), "N=%u", n);
			KUNIT_EXPECT_TRUE_MSG(test, hit, "N=%u: no fault", n);
			found = kwq_find("kf-create");
			KUNIT_EXPECT_EQ_MSG(test, -ENOENT, PTR_ERR_OR_ZERO(found),
					    "N=%u: registered", n);
			if (!IS_ERR(found))
				kwq_put(found);
		} else {
			KUNIT_EXPECT_EQ(test, 0, kt_add(q, "a"));
			KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
			kwq_destroy(q);
		}
		if (!hit || test->status == KUNIT_FAILURE)
			break;
	}
	kunit_info(test, "kwq_create: %u failure points\n", n - 1);
	KUNIT_EXPECT_GT(test, n - 1, 0U);
}

/* kwq_publish(): -ENOMEM publishes nothing, and a retry publishes. */
static void fault_publish_fails_cleanly(struct kunit *test)
{
	const struct kwq_publish_opts o = {
		.uid = GLOBAL_ROOT_UID, .gid = GLOBAL_ROOT_GID, .mode = 0600,
	};
	struct kwq *q;
	unsigned int n;
	bool hit;
	int ret;

	kf_init(test);
	for (n = 1; n <= KF_MAX_STEPS; n++) {
		q = kwq_create("kf-publish", NULL);
		KUNIT_ASSERT_FALSE(test, IS_ERR(q));
		kf_arm(n);
		ret = kwq_publish(q, &o);
		hit = kf_disarm();
		if (ret) {
			KUNIT_EXPECT_EQ_MSG(test, -ENOMEM, ret, "N=%u", n);
			KUNIT_EXPECT_TRUE_MSG(test, hit, "N=%u: no fault", n);
			ret = kwq_publish(q, &o);
			KUNIT_EXPECT_EQ_MSG(test, 0, ret, "N=%u: retry", n);
		}
		kwq_unpublish(q);
		kwq_destroy(q);
		if (!hit || test->status == KUNIT_FAILURE)
			break;
	}
	kunit_info(test, "kwq_publish: %u failure points\n", n - 1);
}

/*
 * The work items that allocate: the table's growth (kwq_grow_work()) and
 * the delay wheel's allocation (kwq_wheel_work()). fail-nth is per task
 * and a work item runs in a kworker, so each case keeps the work from
 * being queued and runs its function in its own task, failing the 1st,
 * 2nd, ... allocation of it until one completes with none failed. After
 * each step every key is there once, and a failed allocation is tried
 * again by a later add.
 *
 * The growth goes to a table of a page at most, which kvmalloc() does not
 * take from vmalloc(): one failure keeps the old table. The wheel is two
 * pages: vmalloc() stands in for a failed kmalloc(), and one failure at a
 * time never leaves the queue without it.
 */
#define KF_GROW_KEYS	200	/* 64 buckets to 256: 2 KiB */
#define KF_WHEEL_KEYS	(KWQ_WHEEL_MIN_TREE + 2)

/* Add "<p><i>" for i in [@from, @to), each after @after_ns (0: ready). */
static void kf_add_range(struct kunit *test, struct kwq *q, char p,
			 unsigned int from, unsigned int to, s64 after_ns)
{
	char key[16];

	for (; from < to; from++) {
		snprintf(key, sizeof(key), "%c%u", p, from);
		KUNIT_ASSERT_EQ(test, 0, after_ns ? kt_add_after(q, key, after_ns) :
						    kt_add(q, key));
	}
}

/* Every ready key is "<p><i>" for i < @nr, each once, and all are there. */
static void kf_expect_all(struct kunit *test, struct kwq *q, char p,
			  unsigned int nr, unsigned int n)
{
	unsigned long *seen = kunit_kcalloc(test, BITS_TO_LONGS(nr),
					    sizeof(long), GFP_KERNEL);
	struct kwq_item item;
	unsigned int i, got = 0;
	char b[16];
	size_t len;
	const char *k;

	KUNIT_ASSERT_NOT_NULL(test, seen);
	while (!kwq_get(q, NULL, KWQ_GET_NONBLOCK, 0, &item)) {
		k = kwq_item_key(&item, &len);
		memset(b, 0, sizeof(b));
		memcpy(b, k, min(len, sizeof(b) - 1));
		if (b[0] == p && !kstrtouint(b + 1, 10, &i) && i < nr &&
		    !test_and_set_bit(i, seen))
			got++;
		else
			KUNIT_FAIL(test, "N=%u: key %s twice or unknown", n, b);
		KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
	}
	KUNIT_EXPECT_EQ_MSG(test, got, nr, "N=%u: keys lost", n);
	kunit_kfree(test, seen);
}

static void fault_grow_work(struct kunit *test)
{
	unsigned int n, bits, nr, kept = 0;
	struct kwq *q;
	bool hit, grown;

	kf_init(test);
	for (n = 1; n <= KF_MAX_STEPS; n++) {
		q = kt_create(test, NULL, NULL);
		/* No growth queued: this task runs it (charged: no budget). */
		spin_lock_irq(&q->lock);
		q->grow_at = ULONG_MAX;
		q->grow_bits = q->hash_bits + 1;
		spin_unlock_irq(&q->lock);
		nr = KF_GROW_KEYS;
		kf_add_range(test, q, 'g', 0, nr, 0);
		bits = q->hash_bits;
		kf_arm(n);
		q->grow_work.func(&q->grow_work);
		hit = kf_disarm();
		grown = q->hash_bits > bits;
		KUNIT_EXPECT_TRUE_MSG(test, grown || hit, "N=%u: no growth, no fault", n);
		KUNIT_EXPECT_NULL_MSG(test, q->new_hash, "N=%u", n);
		if (!grown) {
			kept++;
			/* Known: a table full at 8 a bucket refuses -ENOMEM. */
			KUNIT_EXPECT_EQ_MSG(test, -ENOMEM, q->grow_err, "N=%u", n);
			/* The next add past a key a bucket grows it. */
			kf_add_range(test, q, 'g', nr, nr + 1, 0);
			nr++;
			flush_work(&q->grow_work);
			KUNIT_EXPECT_GT_MSG(test, q->hash_bits, bits, "N=%u: no retry", n);
			KUNIT_EXPECT_EQ_MSG(test, 0, q->grow_err, "N=%u", n);
		}
		kf_expect_all(test, q, 'g', nr, n);
		kt_destroy(test, q);
		if (!hit || test->status == KUNIT_FAILURE)
			break;
	}
	kunit_info(test, "kwq_grow_work: %u failure points, %u kept the table\n",
		   n - 1, kept);
	KUNIT_EXPECT_GT(test, kept, 0U);
}

static void fault_wheel_work(struct kunit *test)
{
	struct kt_clock *clock;
	unsigned int n, nr, none = 0;
	struct kwq *q;
	bool hit;

	kf_init(test);
	for (n = 1; n <= KF_MAX_STEPS; n++) {
		q = kt_create(test, NULL, &clock);
		/* As if queued: this task runs it. */
		spin_lock_irq(&q->lock);
		q->wheel_alloc_queued = true;
		spin_unlock_irq(&q->lock);
		nr = KF_WHEEL_KEYS;
		kf_add_range(test, q, 'w', 0, nr, 3600 * NSEC_PER_SEC);
		kf_arm(n);
		q->wheel_work.func(&q->wheel_work);
		hit = kf_disarm();
		KUNIT_EXPECT_TRUE_MSG(test, q->wheel || hit, "N=%u: no wheel, no fault", n);
		KUNIT_EXPECT_FALSE_MSG(test, q->wheel_alloc_queued, "N=%u", n);
		if (!q->wheel) {
			none++;
			/* The next add past the tree's size asks again. */
			kf_add_range(test, q, 'w', nr, nr + 1, 3600 * NSEC_PER_SEC);
			nr++;
			flush_work(&q->wheel_work);
			KUNIT_EXPECT_NOT_NULL_MSG(test, q->wheel, "N=%u: no retry", n);
		}
		/* Keys added once the wheel is there go to it. */
		kf_add_range(test, q, 'w', nr, nr + 1, 3600 * NSEC_PER_SEC);
		nr++;
		KUNIT_EXPECT_GT_MSG(test, q->wheel_nr, 0UL, "N=%u", n);
		KUNIT_EXPECT_EQ_MSG(test, kt_stats(test, q).waiting, (u64)nr, "N=%u", n);
		kt_advance(clock, 3601 * NSEC_PER_SEC);
		kf_expect_all(test, q, 'w', nr, n);
		kt_destroy(test, q);
		if (!hit || test->status == KUNIT_FAILURE)
			break;
	}
	kunit_info(test, "kwq_wheel_work: %u failure points, %u left no wheel\n",
		   n - 1, none);
	KUNIT_EXPECT_GT(test, n - 1, 0U);
}

/*
 * A processing deadline is recorded apart from the node. A get on a queue
 * with a timeout, or a touch (@touch) giving a key its first deadline,
 * that cannot record it is -ENOMEM and changes nothing: the key stays
 * ready, or processing without a deadline, and the same call then works.
 */
static void kf_deadline(struct kunit *test, bool touch)
{
	struct kwq_config cfg = {
		.processing_timeout_ns = touch ? 0 : NSEC_PER_SEC,
	};
	struct kwq_key_info info;
	struct kwq_item item;
	struct kwq *q;
	unsigned int n;
	bool hit;
	int ret;

	kf_init(test);
	for (n = 1; n <= KF_MAX_STEPS; n++) {
		q = kt_create(test, &cfg, NULL);
		KUNIT_ASSERT_EQ(test, 0, kt_add(q, "a"));
		if (touch)
			KUNIT_ASSERT_EQ(test, 0, kwq_get(q, NULL, KWQ_GET_NONBLOCK,
							 0, &item));
		kf_arm(n);
		ret = touch ? kwq_touch(q, &item, NSEC_PER_SEC) :
			      kwq_get(q, NULL, KWQ_GET_NONBLOCK, 0, &item);
		hit = kf_disarm();
		if (ret) {
			KUNIT_EXPECT_EQ_MSG(test, -ENOMEM, ret, "N=%u", n);
			KUNIT_EXPECT_TRUE_MSG(test, hit, "N=%u: no fault", n);
			KUNIT_EXPECT_EQ(test, 0, kwq_inspect(q, "a", 1, &info));
			KUNIT_EXPECT_EQ_MSG(test, touch ? KWQ_KEY_PROCESSING :
					    KWQ_KEY_READY, info.state, "N=%u", n);
			KUNIT_EXPECT_EQ_MSG(test, 0ULL, info.timeout_ns, "N=%u",
					    n);
			ret = touch ? kwq_touch(q, &item, NSEC_PER_SEC) :
				      kwq_get(q, NULL, KWQ_GET_NONBLOCK, 0,
					      &item);
			KUNIT_EXPECT_EQ_MSG(test, 0, ret, "N=%u: retry", n);
		}
		KUNIT_EXPECT_EQ(test, 0, kwq_inspect(q, "a", 1, &info));
		KUNIT_EXPECT_EQ(test, KWQ_KEY_PROCESSING, info.state);
		KUNIT_EXPECT_GT(test, info.timeout_ns, 0ULL);
		KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
		kt_destroy(test, q);
		if (!hit || test->status == KUNIT_FAILURE)
			break;
	}
	kunit_info(test, "%s with a new deadline: %u failure points\n",
		   touch ? "kwq_touch" : "kwq_get", n - 1);
	KUNIT_EXPECT_GT(test, n - 1, 0U);
}

static void fault_get_with_deadline(struct kunit *test)
{
	kf_deadline(test, false);
}

static void fault_touch_first_deadline(struct kunit *test)
{
	kf_deadline(test, true);
}

static struct kunit_case kwq_fault_cases[] = {
	KUNIT_CASE(fault_add),
	KUNIT_CASE(fault_add_opts_new_priority),
	KUNIT_CASE(fault_add_after),
	KUNIT_CASE(fault_add_rate_limited),
	KUNIT_CASE_SLOW(fault_add_batch_gfp_kernel),
	KUNIT_CASE_SLOW(fault_add_batch_gfp_nowait),
	KUNIT_CASE_SLOW(fault_add_batch_after),
	KUNIT_CASE_SLOW(fault_add_batch_rate_limited),
	KUNIT_CASE(fault_add_charged),
	KUNIT_CASE(fault_add_after_charged),
	KUNIT_CASE_SLOW(fault_add_batch_charged),
	KUNIT_CASE(fault_add_key_charged),
	KUNIT_CASE(fault_add_key_rate_limited_charged),
	KUNIT_CASE(fault_create_fails_cleanly),
	KUNIT_CASE(fault_publish_fails_cleanly),
	KUNIT_CASE(fault_grow_work),
	KUNIT_CASE(fault_wheel_work),
	KUNIT_CASE(fault_get_with_deadline),
	KUNIT_CASE(fault_touch_first_deadline),
	{}
};

static struct kunit_suite kwq_fault_suite = {
	.name = "kwq_fault",
	.test_cases = kwq_fault_cases,
};

kunit_test_suite(kwq_fault_suite);
