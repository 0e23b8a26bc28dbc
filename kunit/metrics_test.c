// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit cases for the queue metrics (kwq_get_stats()): client-go's
 * TestMetrics scenario step by step on the fake clock, the histogram
 * bucket boundaries, the unfinished-work gauges, dirty keys in the
 * depth, and the per-priority depth.
 */

#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/kwq.h>
#include <linux/string.h>

#include "kwq_internal.h"
#include "kwq_test.h"

#define US	1000ULL
#define MS	1000000ULL

/* Observations of @h whose duration fell in bucket @i exactly. */
static u64 km_bucket(const struct kwq_histogram *h, unsigned int i)
{
	if (i == KWQ_HIST_BUCKETS)
		return h->count - h->le[KWQ_HIST_BUCKETS - 1];
	return i ? h->le[i] - h->le[i - 1] : h->le[0];
}

/* Get @key after it waited @ns; returns the item. */
static struct kwq_item km_get_after(struct kunit *test, struct kwq *q,
				    struct kt_clock *c, const char *key,
				    u64 ns)
{
	kt_advance(c, ns);
	return kt_get(test, q, key);
}

/*
 * client-go util/workqueue TestMetrics, with kwq's snapshot in place of
 * the test metrics provider: a histogram's "last observation" is the
 * change of its sum.
 */
static void client_go_test_metrics(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item i;
	struct kwq_stats st;
	int n;

	KUNIT_EXPECT_EQ(test, 0, kt_add(q, "foo"));
	st = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, 1ULL, st.adds_total);
	KUNIT_EXPECT_EQ(test, 1ULL, st.depth);

	kt_advance(c, 50 * US);
	/* Start processing. */
	i = kt_get(test, q, "foo");
	st = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, 1ULL, st.queue_duration.count);
	KUNIT_EXPECT_EQ(test, 50 * US, st.queue_duration.sum_ns); /* 5e-05 */
	KUNIT_EXPECT_EQ(test, 0ULL, st.depth);

	/* Add it back while processing; multiple adds are de-duped. */
	for (n = 0; n < 5; n++)
		KUNIT_EXPECT_EQ(test, 0, kt_add(q, "foo"));
	st = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, 2ULL, st.adds_total);
	/* One thing remains in the queue (dirty, not ready: Len is 0). */
	KUNIT_EXPECT_EQ(test, 1ULL, st.depth);
	KUNIT_EXPECT_EQ(test, 0ULL, st.len);

	kt_advance(c, 25 * US);
	/* Finish it up. */
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &i));
	st = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, 1ULL, st.work_duration.count);
	KUNIT_EXPECT_EQ(test, 25 * US, st.work_duration.sum_ns); /* 2.5e-05 */
	/* One thing remains in the queue. */
	KUNIT_EXPECT_EQ(test, 1ULL, st.depth);
	KUNIT_EXPECT_EQ(test, 1ULL, st.len);

	/* It should be back on the queue. */
	i = kt_get(test, q, "foo");
	st = kt_stats(test, q);
	/* Waited from the add at 50 us to now (75 us): 2.5e-05. */
	KUNIT_EXPECT_EQ(test, 2ULL, st.queue_duration.count);
	KUNIT_EXPECT_EQ(test, 50 * US + 25 * US, st.queue_duration.sum_ns);

	kt_advance(c, 1 * MS);
	st = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, 1 * MS, st.unfinished_work_ns);	/* .001 */
	KUNIT_EXPECT_EQ(test, 1 * MS, st.longest_running_ns);	/* .001 */

	/* Finish that one up. */
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &i));
	st = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, 2ULL, st.work_duration.count);
	KUNIT_EXPECT_EQ(test, 25 * US + 1 * MS, st.work_duration.sum_ns);
	KUNIT_EXPECT_EQ(test, 0ULL, st.unfinished_work_ns);
	KUNIT_EXPECT_EQ(test, 0ULL, st.longest_running_ns);
	KUNIT_EXPECT_EQ(test, 0ULL, st.depth);
	KUNIT_EXPECT_EQ(test, 2ULL, st.adds_total);
	KUNIT_EXPECT_EQ(test, 0ULL, st.retries_total);
	/* 50 us and 25 us: le 1e-04; 25 us and 1 ms: le 1e-04 and 1e-03. */
	KUNIT_EXPECT_EQ(test, 2ULL, km_bucket(&st.queue_duration, 4));
	KUNIT_EXPECT_EQ(test, 1ULL, km_bucket(&st.work_duration, 4));
	KUNIT_EXPECT_EQ(test, 1ULL, km_bucket(&st.work_duration, 5));
}

/* Bucket i holds durations in (10^i, 10^(i+1)] ns; 0 goes to the first. */
static void histogram_bucket_boundaries(struct kunit *test)
{
	static const struct {
		u64 ns;
		unsigned int bucket;
	} cases[] = {
		{ 0, 0 }, { 1, 0 }, { 10, 0 }, { 11, 1 }, { 100, 1 },
		{ 101, 2 }, { 1000, 2 }, { 999999, 5 }, { 1000000, 5 },
		{ 1000001, 6 }, { 1000000000, 8 }, { 1000000001, 9 },
		{ 10000000000ULL, 9 }, { 10000000001ULL, 10 },
		{ 3600000000000ULL, 10 },
	};
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_histogram before;
	struct kwq_item item;
	struct kwq_stats st;
	unsigned int k, b;
	u64 sum = 0;

	for (k = 0; k < ARRAY_SIZE(cases); k++) {
		before = kt_stats(test, q).queue_duration;
		KUNIT_ASSERT_EQ(test, 0, kt_add(q, "k"));
		item = km_get_after(test, q, c, "k", cases[k].ns);
		/* The same time in processing: the work histogram too. */
		kt_advance(c, cases[k].ns);
		KUNIT_ASSERT_EQ(test, 0, kwq_done(q, &item));
		st = kt_stats(test, q);
		sum += cases[k].ns;
		for (b = 0; b <= KWQ_HIST_BUCKETS; b++)
			KUNIT_EXPECT_EQ_MSG(test,
					    km_bucket(&before, b) +
					    (b == cases[k].bucket),
					    km_bucket(&st.queue_duration, b),
					    "%llu ns, bucket %u", cases[k].ns,
					    b);
		KUNIT_EXPECT_EQ(test, sum, st.queue_duration.sum_ns);
		KUNIT_EXPECT_EQ(test, sum, st.work_duration.sum_ns);
		KUNIT_EXPECT_EQ(test, (u64)k + 1, st.queue_duration.count);
		KUNIT_EXPECT_EQ(test, 0, memcmp(&st.queue_duration,
						&st.work_duration,
						sizeof(st.work_duration)));
	}
	/* Cumulative: never decreasing, +Inf is the count. */
	for (b = 1; b < KWQ_HIST_BUCKETS; b++)
		KUNIT_EXPECT_LE(test, st.queue_duration.le[b - 1],
				st.queue_duration.le[b]);
	KUNIT_EXPECT_EQ(test, 2ULL, st.queue_duration.count -
				    st.queue_duration.le[KWQ_HIST_BUCKETS - 1]);
}

/* client-go updateUnfinishedWork: sum and maximum over processing keys. */
static void unfinished_work_and_longest_running(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item a, b, d;
	struct kwq_stats st;
	int owner;

	kt_add(q, "a");
	kt_add(q, "b");
	kt_add(q, "d");
	a = kt_get(test, q, "a");
	kt_advance(c, 1 * MS);
	KUNIT_ASSERT_EQ(test, 0, kwq_get(q, &owner, KWQ_GET_NONBLOCK, 0, &b));
	kt_advance(c, 2 * MS);
	d = kt_get(test, q, "d");
	kt_advance(c, 4 * MS);
	st = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, 3ULL, st.processing);
	KUNIT_EXPECT_EQ(test, 7 * MS + 6 * MS + 4 * MS, st.unfinished_work_ns);
	KUNIT_EXPECT_EQ(test, 7 * MS, st.longest_running_ns);

	/* The oldest finishes: the next oldest is the longest. */
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &a));
	st = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, 6 * MS + 4 * MS, st.unfinished_work_ns);
	KUNIT_EXPECT_EQ(test, 6 * MS, st.longest_running_ns);
	KUNIT_EXPECT_EQ(test, 1ULL, st.work_duration.count);
	KUNIT_EXPECT_EQ(test, 7 * MS, st.work_duration.sum_ns);

	/* A lease return is not finished work: no work observation. */
	KUNIT_EXPECT_EQ(test, 1, kwq_release_owner(q, &owner));
	st = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, 4 * MS, st.unfinished_work_ns);
	KUNIT_EXPECT_EQ(test, 4 * MS, st.longest_running_ns);
	KUNIT_EXPECT_EQ(test, 1ULL, st.work_duration.count);
	KUNIT_EXPECT_EQ(test, 1ULL, st.lease_returns);
	KUNIT_EXPECT_EQ(test, 1ULL, st.depth);

	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &d));
	st = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, 0ULL, st.unfinished_work_ns);
	KUNIT_EXPECT_EQ(test, 0ULL, st.longest_running_ns);
	/* "b" is ready again since the lease return. */
	kt_advance(c, 3 * MS);
	kt_get_done(test, q, "b");
	st = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, 4ULL, st.queue_duration.count);
	KUNIT_EXPECT_EQ(test, 1 * MS + 3 * MS + 3 * MS,
			st.queue_duration.sum_ns);
}

/* Dirty keys count in the depth until done queues them or remove cancels. */
static void dirty_keys_in_depth(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item a, b;
	struct kwq_stats st;

	kt_add(q, "a");
	kt_add(q, "b");
	a = kt_get(test, q, "a");
	b = kt_get(test, q, "b");
	kt_add(q, "a");
	/* A delayed requeue is waiting, not dirty. */
	kt_add_after(q, "b", 10 * MS);
	st = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, 1ULL, st.depth);
	KUNIT_EXPECT_EQ(test, 0ULL, st.len);
	KUNIT_EXPECT_EQ(test, 0, kt_remove(q, "a"));
	KUNIT_EXPECT_EQ(test, 0ULL, kt_stats(test, q).depth);
	kt_add(q, "a");
	/* A plain add turns the delayed requeue of "b" dirty. */
	kt_add(q, "b");
	KUNIT_EXPECT_EQ(test, 2ULL, kt_stats(test, q).depth);
	kt_advance(c, 5 * MS);
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &a));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &b));
	st = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, 2ULL, st.depth);
	KUNIT_EXPECT_EQ(test, 2ULL, st.len);
	kt_advance(c, 1 * MS);
	kt_get_done(test, q, "a");
	kt_get_done(test, q, "b");
	st = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, 0ULL, st.depth);
	/* Both waited from their add while processing: 6 ms each. */
	KUNIT_EXPECT_EQ(test, 4ULL, st.queue_duration.count);
	KUNIT_EXPECT_EQ(test, 12 * MS, st.queue_duration.sum_ns);
}

/* A delayed requeue that came due while processing waited since then. */
static void delayed_requeue_waits_from_its_deadline(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item a;
	struct kwq_stats st;

	kt_add(q, "a");
	a = kt_get(test, q, "a");
	kt_add_after(q, "a", 2 * MS);
	KUNIT_EXPECT_EQ(test, 0ULL, kt_stats(test, q).depth);
	kt_advance(c, 5 * MS);
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &a));
	kt_advance(c, 1 * MS);
	kt_get_done(test, q, "a");
	st = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, 2ULL, st.queue_duration.count);
	KUNIT_EXPECT_EQ(test, 4 * MS, st.queue_duration.sum_ns);
}

/* A delayed key waits in the queue from the moment its delay passed. */
static void delayed_key_queue_duration_from_expiry(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_stats st;

	kt_add_after(q, "w", 10 * MS);
	st = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, 1ULL, st.waiting);
	KUNIT_EXPECT_EQ(test, 0ULL, st.depth);
	kt_advance(c, 10 * MS);
	KUNIT_EXPECT_EQ(test, 1ULL, kt_stats(test, q).depth);
	kt_advance(c, 3 * MS);
	kt_get_done(test, q, "w");
	st = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, 3 * MS, st.queue_duration.sum_ns);
	KUNIT_EXPECT_EQ(test, 1ULL, st.adds_total);
}

/* kwq_unget() (a get whose copy to userspace failed) did not happen. */
static void unget_takes_its_observation_back(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item a;
	struct kwq_stats st;

	kt_add(q, "a");
	a = km_get_after(test, q, c, "a", 7 * MS);
	KUNIT_EXPECT_EQ(test, 1ULL, kt_stats(test, q).queue_duration.count);
	kwq_unget(q, &a);
	st = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, 0ULL, st.queue_duration.count);
	KUNIT_EXPECT_EQ(test, 0ULL, st.queue_duration.sum_ns);
	KUNIT_EXPECT_EQ(test, 0ULL, st.queue_duration.le[KWQ_HIST_BUCKETS - 1]);
	KUNIT_EXPECT_EQ(test, 0ULL, st.unfinished_work_ns);
	KUNIT_EXPECT_EQ(test, 1ULL, st.prio_len[0].len);
	kt_advance(c, 1 * MS);
	kt_get_done(test, q, "a");
	st = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, 1ULL, st.queue_duration.count);
	KUNIT_EXPECT_EQ(test, 8 * MS, st.queue_duration.sum_ns);
}

static void km_expect_levels(struct kunit *test, struct kwq *q,
			     const int (*want)[2], unsigned int n, u64 other)
{
	struct kwq_stats st = kt_stats(test, q);
	unsigned int i;

	KUNIT_ASSERT_EQ(test, n, st.nr_prio_levels);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ_MSG(test, want[i][0], st.prio_len[i].priority,
				    "level %u", i);
		KUNIT_EXPECT_EQ_MSG(test, (u64)want[i][1],
				    st.prio_len[i].len, "level %u", i);
	}
	KUNIT_EXPECT_EQ(test, other, st.prio_len_other);
}

/* Ready keys per priority level, highest first, through every path. */
static void per_priority_depth(struct kunit *test)
{
	static const int l1[][2] = { { 5, 2 }, { 0, 3 }, { -1, 1 } };
	static const int l2[][2] = { { 5, 1 }, { 0, 3 }, { -1, 1 } };
	static const int l3[][2] = { { 5, 1 }, { 0, 2 }, { -1, 1 } };
	static const int l4[][2] = { { 5, 2 }, { 0, 1 }, { -1, 1 } };
	static const int l5[][2] = { { 5, 3 }, { 0, 1 }, { -1, 1 } };
	static const int l6[][2] = { { 5, 2 }, { 0, 1 }, { -1, 1 } };
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item h;

	km_expect_levels(test, q, NULL, 0, 0);
	kt_add_prio(q, "h1", 5);
	kt_add_prio(q, "z1", 0);
	kt_add_prio(q, "z2", 0);
	kt_add_prio(q, "z3", 0);
	kt_add_prio(q, "h2", 5);
	kt_add_prio(q, "m1", -1);
	km_expect_levels(test, q, l1, 3, 0);
	/* get takes the level head. */
	h = kt_get(test, q, "h1");
	km_expect_levels(test, q, l2, 3, 0);
	/* remove of a key in the middle of a level. */
	KUNIT_EXPECT_EQ(test, 0, kt_remove(q, "z2"));
	km_expect_levels(test, q, l3, 3, 0);
	/* Raising a priority moves the key between levels. */
	kt_add_prio(q, "z3", 5);
	km_expect_levels(test, q, l4, 3, 0);
	/* unget puts the key back at the head of its level. */
	kwq_unget(q, &h);
	km_expect_levels(test, q, l5, 3, 0);
	kt_get_done(test, q, "h1");
	km_expect_levels(test, q, l6, 3, 0);
	kt_get_done(test, q, "h2");
	kt_get_done(test, q, "z3");
	kt_get_done(test, q, "z1");
	kt_get_done(test, q, "m1");
	km_expect_levels(test, q, NULL, 0, 0);
	kt_expect_empty(test, q);
}

/* Only KWQ_STATS_PRIO_LEVELS levels are listed; the rest is summed. */
static void per_priority_depth_is_bounded(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_stats st;
	char key[8];
	int i, j;

	for (i = 0; i < KWQ_STATS_PRIO_LEVELS + 3; i++)
		for (j = 0; j <= i; j++) {
			snprintf(key, sizeof(key), "%d.%d", i, j);
			KUNIT_ASSERT_EQ(test, 0, kt_add_prio(q, key, i));
		}
	st = kt_stats(test, q);
	KUNIT_ASSERT_EQ(test, (u32)KWQ_STATS_PRIO_LEVELS, st.nr_prio_levels);
	for (i = 0; i < KWQ_STATS_PRIO_LEVELS; i++) {
		int prio = KWQ_STATS_PRIO_LEVELS + 2 - i;

		KUNIT_EXPECT_EQ(test, prio, st.prio_len[i].priority);
		KUNIT_EXPECT_EQ(test, (u64)prio + 1, st.prio_len[i].len);
	}
	/* Levels 2, 1, 0: 3 + 2 + 1 keys. */
	KUNIT_EXPECT_EQ(test, 6ULL, st.prio_len_other);
	KUNIT_EXPECT_EQ(test, st.len, st.depth);
}

static struct kunit_case kwq_metrics_cases[] = {
	KUNIT_CASE(client_go_test_metrics),
	KUNIT_CASE(histogram_bucket_boundaries),
	KUNIT_CASE(unfinished_work_and_longest_running),
	KUNIT_CASE(dirty_keys_in_depth),
	KUNIT_CASE(delayed_requeue_waits_from_its_deadline),
	KUNIT_CASE(delayed_key_queue_duration_from_expiry),
	KUNIT_CASE(unget_takes_its_observation_back),
	KUNIT_CASE(per_priority_depth),
	KUNIT_CASE(per_priority_depth_is_bounded),
	{}
};

static struct kunit_suite kwq_metrics_suite = {
	.name = "kwq_metrics",
	.test_cases = kwq_metrics_cases,
};

kunit_test_suite(kwq_metrics_suite);
