// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit cases for the batch calls: kwq_add_batch(), kwq_get_batch() and
 * kwq_done_batch(), and kwq_add_key(), kwq_done_keys() and
 * kwq_done_keys_take() behind /dev/kwq's ADD, DONE and DONE_GET. One
 * behaviour per case; bad input changes nothing, and a batch that stops
 * part way says how far it got.
 */

#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/irqflags.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/kwq.h>
#include <linux/string.h>
#include <linux/wait.h>

#include "kwq_internal.h"
#include "kwq_test.h"
#include "layout.h"

#define MS	NSEC_PER_MSEC

#define KEY(s, p)	{ .key = (s), .len = sizeof(s) - 1, .priority = (p) }

static const struct kwq_batch_opts kb_now = { .gfp = GFP_KERNEL };

static void add_batch_adds_every_key_in_order(struct kunit *test)
{
	static const struct kwq_key keys[] = {
		KEY("a", 0), KEY("b", 0), KEY("c", 0),
	};
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	unsigned int done = 0;

	KUNIT_EXPECT_EQ(test, 0, kwq_add_batch(q, keys, 3, &kb_now, &done));
	KUNIT_EXPECT_EQ(test, 3U, done);
	kt_get_done(test, q, "a");
	kt_get_done(test, q, "b");
	kt_get_done(test, q, "c");
	kt_expect_empty(test, q);
}

static void add_batch_of_many_keys_crosses_chunks(struct kunit *test)
{
	struct kwq_key *keys = kunit_kcalloc(test, 100, sizeof(*keys),
					     GFP_KERNEL);
	char (*names)[8] = kunit_kcalloc(test, 100, 8, GFP_KERNEL);
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	unsigned int i, done = 0;

	KUNIT_ASSERT_NOT_NULL(test, keys);
	KUNIT_ASSERT_NOT_NULL(test, names);
	for (i = 0; i < 100; i++) {
		keys[i].len = snprintf(names[i], 8, "k%u", i);
		keys[i].key = names[i];
	}
	KUNIT_EXPECT_EQ(test, 0, kwq_add_batch(q, keys, 100, &kb_now, &done));
	KUNIT_EXPECT_EQ(test, 100U, done);
	KUNIT_EXPECT_EQ(test, 100L, kwq_len(q));
	for (i = 0; i < 100; i++)
		kt_get_done(test, q, names[i]);
}

/*
 * One chunk of keys of every length class (their nodes come from
 * different caches, so they are allocated one by one), then a chunk of
 * one length (one bulk allocation), some of whose keys are queued
 * already (no node wanted for them): every key is added once, in order.
 */
static void add_batch_of_mixed_and_queued_keys(struct kunit *test)
{
	static const unsigned int lens[] = {
		1, 20, 21, 28, 29, 64, 100, 200, KWQ_KEY_MAX,
	};
	struct kwq_key *keys = kunit_kcalloc(test, 16, sizeof(*keys),
					     GFP_KERNEL);
	char (*names)[KWQ_KEY_MAX] = kunit_kcalloc(test, 16, KWQ_KEY_MAX,
						   GFP_KERNEL);
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	unsigned int i, done = 0;

	KUNIT_ASSERT_NOT_NULL(test, keys);
	KUNIT_ASSERT_NOT_NULL(test, names);
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		memset(names[i], 'a' + i, lens[i]);
		keys[i].key = names[i];
		keys[i].len = lens[i];
	}
	KUNIT_EXPECT_EQ(test, 0, kwq_add_batch(q, keys, ARRAY_SIZE(lens),
					       &kb_now, &done));
	KUNIT_EXPECT_EQ(test, (unsigned int)ARRAY_SIZE(lens), done);

	/* 16 keys of 16 bytes; the even ones are queued already. */
	for (i = 0; i < 16; i++) {
		snprintf(names[i], KWQ_KEY_MAX, "sixteen-bytes-%02u", i);
		keys[i].key = names[i];
		keys[i].len = 16;
		if (!(i % 2))
			KUNIT_EXPECT_EQ(test, 0, kwq_add(q, names[i], 16));
	}
	KUNIT_EXPECT_EQ(test, 0, kwq_add_batch(q, keys, 16, &kb_now, &done));
	KUNIT_EXPECT_EQ(test, 16U, done);
	KUNIT_EXPECT_EQ(test, (long)ARRAY_SIZE(lens) + 16, kwq_len(q));
	KUNIT_EXPECT_EQ(test, (u64)ARRAY_SIZE(lens) + 16,
			kt_stats(test, q).adds_total);
}

static void add_batch_dedups_keys_within_the_batch(struct kunit *test)
{
	static const struct kwq_key keys[] = {
		KEY("a", 0), KEY("a", 0), KEY("b", 0), KEY("a", 0),
	};
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	unsigned int done = 0;

	KUNIT_EXPECT_EQ(test, 0, kwq_add_batch(q, keys, 4, &kb_now, &done));
	KUNIT_EXPECT_EQ(test, 4U, done);
	KUNIT_EXPECT_EQ(test, 2L, kwq_len(q));
	KUNIT_EXPECT_EQ(test, 2ULL, kt_stats(test, q).adds_total);
}

static void add_batch_with_a_bad_key_changes_nothing(struct kunit *test)
{
	struct kwq_key keys[] = { KEY("a", 0), { .key = "b", .len = 0 } };
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	unsigned int done = 7;

	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_add_batch(q, keys, 2, &kb_now,
						     &done));
	KUNIT_EXPECT_EQ(test, 0U, done);
	KUNIT_EXPECT_EQ(test, 0L, kwq_len(q));
	keys[1].len = KWQ_KEY_MAX + 1;
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_add_batch(q, keys, 2, &kb_now,
						     NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_add_batch(q, NULL, 2, &kb_now,
						     NULL));
	KUNIT_EXPECT_EQ(test, 0L, kwq_len(q));
}

static void add_batch_rejects_bad_options(struct kunit *test)
{
	static const struct kwq_key keys[] = { KEY("a", 0) };
	struct kwq_batch_opts o = { .flags = 0x80 };
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);

	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_add_batch(q, keys, 1, &o, NULL));
	o.flags = KWQ_BATCH_RATE_LIMITED;
	o.after_ns = 5;
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_add_batch(q, keys, 1, &o, NULL));
	KUNIT_EXPECT_EQ(test, 0L, kwq_len(q));
	KUNIT_EXPECT_EQ(test, 0ULL, kt_stats(test, q).waiting);
}

/* NULL options are the defaults: plain adds, nodes allocated GFP_NOWAIT. */
static void add_batch_takes_null_options(struct kunit *test)
{
	static const struct kwq_key keys[] = { KEY("a", 0), KEY("b", 2) };
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	unsigned int done = 0;

	KUNIT_EXPECT_EQ(test, 0, kwq_add_batch(q, keys, 2, NULL, &done));
	KUNIT_EXPECT_EQ(test, 2U, done);
	kt_get_done(test, q, "b");
	kt_get_done(test, q, "a");
	kt_expect_empty(test, q);
}

static void add_batch_stops_at_the_item_cap(struct kunit *test)
{
	static const struct kwq_key keys[] = {
		KEY("a", 0), KEY("b", 0), KEY("c", 0), KEY("d", 0),
	};
	struct kwq_config cfg = { .max_items = 2 };
	struct kt_clock *c;
	struct kwq *q = kt_create(test, &cfg, &c);
	unsigned int done = 0;

	KUNIT_EXPECT_EQ(test, -ENOSPC, kwq_add_batch(q, keys, 4, &kb_now,
						     &done));
	KUNIT_EXPECT_EQ(test, 2U, done);
	kt_get_done(test, q, "a");
	kt_get_done(test, q, "b");
	kt_expect_empty(test, q);
}

static void add_batch_after_shutdown_is_eshutdown(struct kunit *test)
{
	static const struct kwq_key keys[] = { KEY("a", 0), KEY("b", 0) };
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	unsigned int done = 9;

	kwq_shutdown(q);
	KUNIT_EXPECT_EQ(test, -ESHUTDOWN, kwq_add_batch(q, keys, 2, &kb_now,
							&done));
	KUNIT_EXPECT_EQ(test, 0U, done);
}

static void add_batch_delays_and_priorities(struct kunit *test)
{
	static const struct kwq_key keys[] = { KEY("lo", 1), KEY("hi", 5) };
	struct kwq_batch_opts o = { .after_ns = 10 * MS };
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);

	KUNIT_EXPECT_EQ(test, 0, kwq_add_batch(q, keys, 2, &o, NULL));
	KUNIT_EXPECT_EQ(test, 2ULL, kt_stats(test, q).waiting);
	kt_advance(c, 10 * MS);
	kt_get_done(test, q, "hi");
	kt_get_done(test, q, "lo");
}

static void add_batch_rate_limited_reports_each_delay(struct kunit *test)
{
	static const struct kwq_key keys[] = { KEY("a", 0), KEY("a", 0) };
	struct kwq_batch_opts o = { .flags = KWQ_BATCH_RATE_LIMITED };
	static const struct kwq_limiter_config l = {
		.type = KWQ_LIMITER_EXPONENTIAL,
		.exp = { .base_ns = MS, .max_ns = 1000 * MS },
	};
	struct kwq_config cfg = { .nr_limiters = 1, .limiters = { l } };
	struct kt_clock *c;
	struct kwq *q = kt_create(test, &cfg, &c);
	u64 delays[2] = {};

	o.delays = delays;
	KUNIT_EXPECT_EQ(test, 0, kwq_add_batch(q, keys, 2, &o, NULL));
	KUNIT_EXPECT_EQ(test, 1 * MS, delays[0]);
	KUNIT_EXPECT_EQ(test, 2 * MS, delays[1]);
	KUNIT_EXPECT_EQ(test, 2, kt_requeues(q, "a"));
}

/* kwq_add_key(), /dev/kwq's single-key ADD: kwq_add_batch() of one key. */
static void add_key_is_a_batch_of_one(struct kunit *test)
{
	static const struct kwq_limiter_config l = {
		.type = KWQ_LIMITER_EXPONENTIAL,
		.exp = { .base_ns = MS, .max_ns = 1000 * MS },
	};
	struct kwq_config cfg = {
		.nr_limiters = 1, .limiters = { l }, .max_items = 2,
		.flags = KWQ_CONFIG_CHARGE_CALLER,
	};
	const struct kwq_key a = KEY("a", 0), w = KEY("w", 2), r = KEY("r", 0);
	struct kwq_key bad = { .key = "b", .len = 0 };
	struct kwq_batch_opts o = { .gfp = GFP_KERNEL, .flags = 0x80 };
	struct kt_clock *c;
	struct kwq *q = kt_create(test, &cfg, &c);
	u64 delay = 0;

	/* Bad input changes nothing. */
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_add_key(q, &a, &o));
	o.flags = KWQ_BATCH_RATE_LIMITED;
	o.after_ns = 5;
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_add_key(q, &a, &o));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_add_key(q, &a, NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_add_key(q, NULL, &kb_now));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_add_key(NULL, &a, &kb_now));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_add_key(q, &bad, &kb_now));
	bad.len = KWQ_KEY_MAX + 1;
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_add_key(q, &bad, &kb_now));
	KUNIT_EXPECT_EQ(test, 0L, kwq_len(q));
	KUNIT_EXPECT_EQ(test, 0ULL, kt_stats(test, q).adds_total);

	/* A plain add, and again: once. */
	KUNIT_EXPECT_EQ(test, 0, kwq_add_key(q, &a, &kb_now));
	KUNIT_EXPECT_EQ(test, 0, kwq_add_key(q, &a, &kb_now));
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
	KUNIT_EXPECT_EQ(test, 1ULL, kt_stats(test, q).adds_total);
	/* A delayed one, at its priority; then the cap. */
	o.flags = 0;
	o.after_ns = 10 * MS;
	KUNIT_EXPECT_EQ(test, 0, kwq_add_key(q, &w, &o));
	KUNIT_EXPECT_EQ(test, 1ULL, kt_stats(test, q).waiting);
	KUNIT_EXPECT_EQ(test, -ENOSPC, kwq_add_key(q, &r, &kb_now));
	kt_get_done(test, q, "a");
	/* Rate-limited: each delay reported, the count kept. */
	o.after_ns = 0;
	o.flags = KWQ_BATCH_RATE_LIMITED;
	o.delays = &delay;
	KUNIT_EXPECT_EQ(test, 0, kwq_add_key(q, &r, &o));
	KUNIT_EXPECT_EQ(test, 1 * MS, delay);
	KUNIT_EXPECT_EQ(test, 0, kwq_add_key(q, &r, &o));
	KUNIT_EXPECT_EQ(test, 2 * MS, delay);
	KUNIT_EXPECT_EQ(test, 2, kt_requeues(q, "r"));
	kt_advance(c, 10 * MS);
	kt_get_done(test, q, "w");
	kt_get_done(test, q, "r");
	kt_expect_empty(test, q);
	kwq_shutdown(q);
	KUNIT_EXPECT_EQ(test, -ESHUTDOWN, kwq_add_key(q, &a, &kb_now));
}

static void get_batch_takes_up_to_max_in_order(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item it[4];

	kt_add(q, "a");
	kt_add(q, "b");
	kt_add(q, "c");
	KUNIT_ASSERT_EQ(test, 2, kwq_get_batch(q, NULL, KWQ_GET_NONBLOCK, 0,
					       it, 0, 2));
	KUNIT_EXPECT_MEMEQ(test, it[0].key, "a", 1);
	KUNIT_EXPECT_MEMEQ(test, it[1].key, "b", 1);
	KUNIT_EXPECT_EQ(test, 2ULL, kt_stats(test, q).processing);
	KUNIT_EXPECT_EQ(test, 0, kwq_done_batch(q, it, 2, NULL));
	KUNIT_ASSERT_EQ(test, 1, kwq_get_batch(q, NULL, KWQ_GET_NONBLOCK, 0,
					       it, 0, 4));
	KUNIT_EXPECT_MEMEQ(test, it[0].key, "c", 1);
	KUNIT_EXPECT_EQ(test, 0, kwq_done_batch(q, it, 1, NULL));
	KUNIT_EXPECT_EQ(test, -EAGAIN, kwq_get_batch(q, NULL, KWQ_GET_NONBLOCK,
						     0, it, 0, 4));
}

struct kt_copied {
	char keys[4];
	unsigned int nr;
	bool locked;
};

static void kt_copy_key(void *arg, const struct kwq_item *item)
{
	struct kt_copied *c = arg;

	c->locked = c->locked && irqs_disabled();
	if (c->nr < ARRAY_SIZE(c->keys))
		c->keys[c->nr] = *(const char *)item->key;
	c->nr++;
}

/* dev.c's copy hook sees each key taken, in order, under the queue lock. */
static void get_batch_ctl_copies_each_key_under_the_lock(struct kunit *test)
{
	struct kt_copied copied = { .locked = true };
	struct kwq_get_ctl ctl = { .copy = kt_copy_key, .arg = &copied };
	struct kwq *q = kt_create(test, NULL, NULL);
	struct kwq_item it[4];

	kt_add(q, "a");
	kt_add(q, "b");
	kt_add(q, "c");
	KUNIT_ASSERT_EQ(test, 3, kwq_get_batch_ctl(q, NULL, KWQ_GET_NONBLOCK, 0,
						   it, 0, 4, &ctl));
	KUNIT_EXPECT_EQ(test, 3U, copied.nr);
	KUNIT_EXPECT_MEMEQ(test, copied.keys, "abc", 3);
	KUNIT_EXPECT_TRUE(test, copied.locked);
	KUNIT_EXPECT_EQ(test, 0, kwq_done_batch(q, it, 3, NULL));
}

static void get_batch_rejects_bad_arguments(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item it[2];

	kt_add(q, "a");
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_get_batch(q, NULL, 0, 0, it, 0, 0));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_get_batch(q, NULL, 0, 0, it, 3, 2));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_get_batch(q, NULL, 0, 0, NULL, 0,
						     1));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_get_batch(q, NULL, 0x100, 0, it, 0,
						     1));
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
}

static void get_batch_nonblocking_does_not_wait_for_min(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item it[4];

	kt_add(q, "a");
	KUNIT_EXPECT_EQ(test, 1, kwq_get_batch(q, NULL, KWQ_GET_NONBLOCK,
					       KWQ_WAIT_FOREVER, it, 3, 4));
	KUNIT_EXPECT_EQ(test, 0, kwq_done_batch(q, it, 1, NULL));
}

static void get_batch_returns_fewer_than_min_at_timeout(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item it[4];
	u64 start = ktime_get_ns();

	kt_add(q, "a");
	/* The key taken before the timeout is returned, not an error. */
	KUNIT_EXPECT_EQ(test, 1, kwq_get_batch(q, NULL, 0, 30 * MS, it, 3, 4));
	KUNIT_EXPECT_GE(test, ktime_get_ns() - start, 30 * MS);
	KUNIT_EXPECT_EQ(test, 0, kwq_done_batch(q, it, 1, NULL));
}

struct kb_adder {
	struct kwq *q;
	struct completion done;
};

static int kb_adder_fn(void *data)
{
	struct kb_adder *a = data;

	msleep(20);
	kt_add(a->q, "b");
	msleep(20);
	kt_add(a->q, "c");
	complete(&a->done);
	return 0;
}

static void get_batch_waits_until_min_nr(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kb_adder a = { .q = q };
	struct task_struct *t;
	struct kwq_item it[4];

	init_completion(&a.done);
	kt_add(q, "a");
	t = kthread_run(kb_adder_fn, &a, "kwq-kb-adder");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	KUNIT_EXPECT_EQ(test, 3, kwq_get_batch(q, NULL, 0,
					       10ULL * NSEC_PER_SEC, it, 3, 4));
	wait_for_completion(&a.done);
	KUNIT_EXPECT_MEMEQ(test, it[2].key, "c", 1);
	KUNIT_EXPECT_EQ(test, 0, kwq_done_batch(q, it, 3, NULL));
}

/* A getter in kwq_get_batch() for 2 keys, waiting up to 5 s. */
struct kb_getter {
	struct kwq *q;
	struct kwq_item it[2];
	int ret;
	s64 took_ms;
	struct completion done;
};

static int kb_getter_fn(void *data)
{
	struct kb_getter *g = data;
	ktime_t t0 = ktime_get();

	g->ret = kwq_get_batch(g->q, g, 0, 5LL * NSEC_PER_SEC, g->it, 2, 2);
	g->took_ms = ktime_ms_delta(ktime_get(), t0);
	complete(&g->done);
	return 0;
}

/* Start a getter on @q and wait until it holds a key and sleeps for more. */
static void kb_getter_start(struct kunit *test, struct kwq *q,
			    struct kb_getter *g)
{
	struct task_struct *t;
	int i;

	g->q = q;
	init_completion(&g->done);
	t = kthread_run(kb_getter_fn, g, "kwq-kb-getter");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	for (i = 0; i < 2000 && !completion_done(&g->done); i++) {
		if (kt_stats(test, q).processing == 1 &&
		    wq_has_sleeper(&q->get_wq))
			break;
		usleep_range(1000, 2000);
	}
}

/*
 * A get waiting for its second key while the first one's lease is
 * revoked at its processing deadline (and the key, requeued at once,
 * is ready again) takes no more: the call never hands out one key
 * twice, and returns the key it has.
 */
static void get_batch_takes_no_key_twice(struct kunit *test)
{
	struct kwq_config cfg = {
		.processing_timeout_ns = 3600ULL * NSEC_PER_SEC,
		.nr_limiters = 1,
		.limiters[0] = { .type = KWQ_LIMITER_EXPONENTIAL },
	};
	struct kt_clock *c;
	struct kwq *q = kt_create(test, &cfg, &c);
	struct kb_getter g = {};

	kt_add(q, "a");
	kb_getter_start(test, q, &g);
	/* The deadline passes: revoked, due again at once (delay 0). */
	kt_advance(c, 3600ULL * NSEC_PER_SEC);
	kt_wait_exit(test, &g.done, "getter");
	KUNIT_EXPECT_EQ(test, 1, g.ret);
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, processing_timeouts_total));
	KUNIT_EXPECT_EQ(test, -ESTALE, kwq_done(q, &g.it[0]));
	if (g.ret == 2)
		kwq_done(q, &g.it[1]);
}

/*
 * The batching window ends at the first key's processing deadline: a
 * get that waits for more returns the key it has by then, still held,
 * however long its own timeout.
 */
static void get_batch_waits_no_longer_than_the_first_deadline(struct kunit *test)
{
	struct kwq_config cfg = { .processing_timeout_ns = 100 * MS };
	struct kt_clock *c;
	struct kwq *q = kt_create(test, &cfg, &c);
	struct kb_getter g = {};

	kt_add(q, "a");
	kb_getter_start(test, q, &g);
	kt_wait_exit(test, &g.done, "getter");
	KUNIT_EXPECT_EQ(test, 1, g.ret);
	KUNIT_EXPECT_LT(test, g.took_ms, 2000LL);
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &g.it[0]));
}

static void done_batch_stops_at_a_stale_item(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item it[3];
	unsigned int done = 0;

	kt_add(q, "a");
	kt_add(q, "b");
	kt_add(q, "c");
	KUNIT_ASSERT_EQ(test, 3, kwq_get_batch(q, NULL, KWQ_GET_NONBLOCK, 0,
					       it, 0, 3));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &it[1]));
	KUNIT_EXPECT_EQ(test, -ESTALE, kwq_done_batch(q, it, 3, &done));
	KUNIT_EXPECT_EQ(test, 1U, done);
	/* "c" is still held: the batch stopped before it. */
	KUNIT_EXPECT_EQ(test, 1ULL, kt_stats(test, q).processing);
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &it[2]));
}

static void done_keys_checks_owner_and_state(struct kunit *test)
{
	static const struct kwq_key mine[] = { KEY("a", 0), KEY("d", 0) };
	static const struct kwq_key theirs[] = { KEY("b", 0) };
	static const struct kwq_key idle[] = { KEY("z", 0) };
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item it;
	unsigned int done = 9;
	int me, other;

	kt_add(q, "a");
	kt_add(q, "b");
	kt_add(q, "d");
	KUNIT_ASSERT_EQ(test, 0, kwq_get(q, &me, KWQ_GET_NONBLOCK, 0, &it));
	KUNIT_ASSERT_EQ(test, 0, kwq_get(q, &other, KWQ_GET_NONBLOCK, 0, &it));
	/* "d" is detached: anyone may finish it. */
	KUNIT_ASSERT_EQ(test, 0, kwq_get(q, NULL, KWQ_GET_NONBLOCK, 0, &it));
	KUNIT_EXPECT_EQ(test, -EPERM, kwq_done_keys(q, theirs, 1, &me, &done));
	KUNIT_EXPECT_EQ(test, 0U, done);
	KUNIT_EXPECT_EQ(test, -ENOENT, kwq_done_keys(q, idle, 1, &me, &done));
	KUNIT_EXPECT_EQ(test, 0, kwq_done_keys(q, mine, 2, &me, &done));
	KUNIT_EXPECT_EQ(test, 2U, done);
	KUNIT_EXPECT_EQ(test, 0, kwq_done_keys(q, theirs, 1, &other, &done));
	KUNIT_EXPECT_EQ(test, 0ULL, kt_stats(test, q).processing);
}

static void done_keys_take_finishes_then_takes(struct kunit *test)
{
	static const struct kwq_key ab[] = { KEY("a", 0), KEY("b", 0) };
	static const struct kwq_key cz[] = { KEY("c", 0), KEY("z", 0) };
	static const struct kwq_key b[] = { KEY("b", 0) };
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item it[2];
	unsigned int done = 9;
	int me;

	kt_add(q, "a");
	kt_add(q, "b");
	KUNIT_ASSERT_EQ(test, 2, kwq_get_batch(q, &me, KWQ_GET_NONBLOCK, 0,
					       it, 0, 2));
	kt_add(q, "c");
	/* "b" is dirty: its done makes it ready behind "c". */
	kt_add(q, "b");
	KUNIT_EXPECT_EQ(test, 1, kwq_done_keys_take(q, ab, 2, &me, &done, &me,
						    it, 1, NULL));
	KUNIT_EXPECT_EQ(test, 2U, done);
	KUNIT_EXPECT_EQ(test, 0, memcmp(it[0].key, "c", 1));
	KUNIT_EXPECT_EQ(test, 1ULL, kt_stats(test, q).processing);
	/* "z" is not held: "c" stays finished, "b" is not taken. */
	KUNIT_EXPECT_EQ(test, -ENOENT, kwq_done_keys_take(q, cz, 2, &me,
							  &done, &me, it, 2,
							  NULL));
	KUNIT_EXPECT_EQ(test, 1U, done);
	KUNIT_EXPECT_EQ(test, 0ULL, kt_stats(test, q).processing);
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
	/* No key to finish: a get. Nothing ready: -EAGAIN, all finished. */
	KUNIT_EXPECT_EQ(test, 1, kwq_done_keys_take(q, NULL, 0, &me, &done,
						    &me, it, 2, NULL));
	KUNIT_EXPECT_EQ(test, -EAGAIN, kwq_done_keys_take(q, b, 1, &me, &done,
							  &me, it, 2, NULL));
	KUNIT_EXPECT_EQ(test, 1U, done);
	KUNIT_EXPECT_EQ(test, 0ULL, kt_stats(test, q).processing);
}

static struct kunit_case kwq_batch_cases[] = {
	KUNIT_CASE(add_batch_adds_every_key_in_order),
	KUNIT_CASE(add_batch_of_many_keys_crosses_chunks),
	KUNIT_CASE(add_batch_of_mixed_and_queued_keys),
	KUNIT_CASE(add_batch_dedups_keys_within_the_batch),
	KUNIT_CASE(add_batch_with_a_bad_key_changes_nothing),
	KUNIT_CASE(add_batch_rejects_bad_options),
	KUNIT_CASE(add_batch_takes_null_options),
	KUNIT_CASE(add_batch_stops_at_the_item_cap),
	KUNIT_CASE(add_batch_after_shutdown_is_eshutdown),
	KUNIT_CASE(add_batch_delays_and_priorities),
	KUNIT_CASE(add_batch_rate_limited_reports_each_delay),
	KUNIT_CASE(add_key_is_a_batch_of_one),
	KUNIT_CASE(get_batch_takes_up_to_max_in_order),
	KUNIT_CASE(get_batch_ctl_copies_each_key_under_the_lock),
	KUNIT_CASE(get_batch_rejects_bad_arguments),
	KUNIT_CASE(get_batch_nonblocking_does_not_wait_for_min),
	KUNIT_CASE(get_batch_returns_fewer_than_min_at_timeout),
	KUNIT_CASE(get_batch_waits_until_min_nr),
	KUNIT_CASE(get_batch_takes_no_key_twice),
	KUNIT_CASE(get_batch_waits_no_longer_than_the_first_deadline),
	KUNIT_CASE(done_batch_stops_at_a_stale_item),
	KUNIT_CASE(done_keys_checks_owner_and_state),
	KUNIT_CASE(done_keys_take_finishes_then_takes),
	{}
};

static struct kunit_suite kwq_batch_suite = {
	.name = "kwq_batch",
	.test_cases = kwq_batch_cases,
};

kunit_test_suite(kwq_batch_suite);
