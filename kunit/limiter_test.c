// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit cases for kwq's rate limiters, seen through
 * kwq_add_rate_limited() on a fake clock: each limiter's exact delay
 * sequence (the client-go default_rate_limiters_test.go cases, plus the
 * edges of the integer arithmetic), max-of, the max-wait cap, failure
 * record bookkeeping and when token buckets are charged.
 */

#include <kunit/test.h>
#include <linux/kwq.h>
#include <linux/string.h>

#include "kwq_test.h"

#define MS	NSEC_PER_MSEC
#define SEC	NSEC_PER_SEC

static struct kwq *kl_queue(struct kunit *test,
			    const struct kwq_limiter_config *list,
			    unsigned int n, u64 max_wait, struct kt_clock **c)
{
	struct kwq_config cfg = { .nr_limiters = n, .max_wait_ns = max_wait };

	memcpy(cfg.limiters, list, n * sizeof(*list));
	return kt_create(test, &cfg, c);
}

#define EXP(base, max) \
	{ .type = KWQ_LIMITER_EXPONENTIAL, \
	  .exp = { .base_ns = (base), .max_ns = (max) } }
#define FAST_SLOW(fast, slow, n) \
	{ .type = KWQ_LIMITER_FAST_SLOW, \
	  .fast_slow = { .fast_ns = (fast), .slow_ns = (slow), .max_fast = (n) } }
#define BUCKET(qps_milli_, burst_) \
	{ .type = KWQ_LIMITER_BUCKET, \
	  .bucket = { .qps_milli = (qps_milli_), .burst = (burst_) } }

/* Rate-limit a fresh key "k<i>". */
static u64 kl_fresh(struct kunit *test, struct kwq *q, int i)
{
	char key[16];

	snprintf(key, sizeof(key), "k%d", i);
	return kt_rate_limited(test, q, key);
}

/* client-go TestItemExponentialFailureRateLimiter, continued to the cap */
static void exponential_doubles_from_base_up_to_max(struct kunit *test)
{
	static const struct kwq_limiter_config l[] = { EXP(1 * MS, 1 * SEC) };
	struct kt_clock *c;
	struct kwq *q = kl_queue(test, l, 1, 0, &c);
	int i;

	for (i = 0; i < 10; i++)
		KUNIT_EXPECT_EQ(test, (1ULL << i) * MS,
				kt_rate_limited(test, q, "one"));
	KUNIT_EXPECT_EQ(test, 1 * SEC, kt_rate_limited(test, q, "one"));
	KUNIT_EXPECT_EQ(test, 1 * SEC, kt_rate_limited(test, q, "one"));
	KUNIT_EXPECT_EQ(test, 12, kt_requeues(q, "one"));

	KUNIT_EXPECT_EQ(test, 1 * MS, kt_rate_limited(test, q, "two"));
	KUNIT_EXPECT_EQ(test, 2 * MS, kt_rate_limited(test, q, "two"));
	KUNIT_EXPECT_EQ(test, 2, kt_requeues(q, "two"));

	KUNIT_EXPECT_EQ(test, 0, kwq_forget(q, "one", 3));
	KUNIT_EXPECT_EQ(test, 0, kt_requeues(q, "one"));
	KUNIT_EXPECT_EQ(test, 1 * MS, kt_rate_limited(test, q, "one"));
}

/* client-go TestItemExponentialFailureRateLimiterOverFlow */
static void exponential_overflow_returns_max(struct kunit *test)
{
	static const struct kwq_limiter_config l1[] = {
		EXP(1 * MS, 1000 * SEC)
	};
	static const struct kwq_limiter_config l2[] = {
		EXP(60 * SEC, 1000 * 3600 * SEC)
	};
	struct kt_clock *c;
	struct kwq *q = kl_queue(test, l1, 1, 0, &c);
	int i;

	for (i = 0; i < 5; i++)
		kt_rate_limited(test, q, "one");
	KUNIT_EXPECT_EQ(test, 32 * MS, kt_rate_limited(test, q, "one"));
	for (i = 0; i < 1000; i++)
		kt_rate_limited(test, q, "overflow1");
	KUNIT_EXPECT_EQ(test, 1000 * SEC,
			kt_rate_limited(test, q, "overflow1"));

	q = kl_queue(test, l2, 1, 0, &c);
	for (i = 0; i < 2; i++)
		kt_rate_limited(test, q, "two");
	KUNIT_EXPECT_EQ(test, 4 * 60 * SEC, kt_rate_limited(test, q, "two"));
	for (i = 0; i < 1000; i++)
		kt_rate_limited(test, q, "overflow2");
	KUNIT_EXPECT_EQ(test, 1000 * 3600 * SEC,
			kt_rate_limited(test, q, "overflow2"));
}

/* base * 2^n is exact up to 2^63; from there the cap applies. */
static void exponential_exact_up_to_int64_limit(struct kunit *test)
{
	static const struct kwq_limiter_config l1[] = { EXP(1, S64_MAX) };
	static const struct kwq_limiter_config l3[] = { EXP(3, S64_MAX) };
	struct kt_clock *c;
	struct kwq *q = kl_queue(test, l1, 1, 0, &c);
	int i;

	for (i = 0; i < 63; i++)
		KUNIT_EXPECT_EQ(test, 1ULL << i, kt_rate_limited(test, q, "a"));
	KUNIT_EXPECT_EQ(test, (u64)S64_MAX, kt_rate_limited(test, q, "a"));
	KUNIT_EXPECT_EQ(test, (u64)S64_MAX, kt_rate_limited(test, q, "a"));

	q = kl_queue(test, l3, 1, 0, &c);
	for (i = 0; i < 61; i++)
		kt_rate_limited(test, q, "b");
	KUNIT_EXPECT_EQ(test, 3ULL << 61, kt_rate_limited(test, q, "b"));
	KUNIT_EXPECT_EQ(test, (u64)S64_MAX, kt_rate_limited(test, q, "b"));
}

/* client-go multiplies float64(base): bases above 2^53 get rounded. */
static void exponential_base_rounds_like_float64(struct kunit *test)
{
	static const struct kwq_limiter_config odd[] = {
		EXP((1ULL << 53) + 1, S64_MAX)
	};
	static const struct kwq_limiter_config up[] = {
		EXP((1ULL << 53) + 3, S64_MAX)
	};
	struct kt_clock *c;
	struct kwq *q = kl_queue(test, odd, 1, 0, &c);

	/* A tie rounds to the even mantissa. */
	KUNIT_EXPECT_EQ(test, 1ULL << 53, kt_rate_limited(test, q, "a"));
	KUNIT_EXPECT_EQ(test, 1ULL << 54, kt_rate_limited(test, q, "a"));
	q = kl_queue(test, up, 1, 0, &c);
	KUNIT_EXPECT_EQ(test, (1ULL << 53) + 4, kt_rate_limited(test, q, "a"));
}

static void exponential_zero_base_adds_at_once(struct kunit *test)
{
	static const struct kwq_limiter_config l[] = { EXP(0, 1 * SEC) };
	struct kt_clock *c;
	struct kwq *q = kl_queue(test, l, 1, 0, &c);
	int i;

	for (i = 0; i < 100; i++)
		KUNIT_EXPECT_EQ(test, 0ULL, kt_rate_limited(test, q, "a"));
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
	KUNIT_EXPECT_EQ(test, 100, kt_requeues(q, "a"));
}

/* client-go TestItemFastSlowRateLimiter */
static void fast_slow_switches_after_max_fast(struct kunit *test)
{
	static const struct kwq_limiter_config l[] = {
		FAST_SLOW(5 * MS, 10 * SEC, 3)
	};
	struct kt_clock *c;
	struct kwq *q = kl_queue(test, l, 1, 0, &c);

	KUNIT_EXPECT_EQ(test, 5 * MS, kt_rate_limited(test, q, "one"));
	KUNIT_EXPECT_EQ(test, 5 * MS, kt_rate_limited(test, q, "one"));
	KUNIT_EXPECT_EQ(test, 5 * MS, kt_rate_limited(test, q, "one"));
	KUNIT_EXPECT_EQ(test, 10 * SEC, kt_rate_limited(test, q, "one"));
	KUNIT_EXPECT_EQ(test, 10 * SEC, kt_rate_limited(test, q, "one"));
	KUNIT_EXPECT_EQ(test, 5, kt_requeues(q, "one"));

	KUNIT_EXPECT_EQ(test, 5 * MS, kt_rate_limited(test, q, "two"));
	KUNIT_EXPECT_EQ(test, 5 * MS, kt_rate_limited(test, q, "two"));
	KUNIT_EXPECT_EQ(test, 2, kt_requeues(q, "two"));

	kwq_forget(q, "one", 3);
	KUNIT_EXPECT_EQ(test, 0, kt_requeues(q, "one"));
	KUNIT_EXPECT_EQ(test, 5 * MS, kt_rate_limited(test, q, "one"));
}

/* client-go TestMaxOfRateLimiter */
static void max_of_takes_the_largest_delay(struct kunit *test)
{
	static const struct kwq_limiter_config l[] = {
		FAST_SLOW(5 * MS, 3 * SEC, 3),
		EXP(1 * MS, 1 * SEC),
	};
	struct kt_clock *c;
	struct kwq *q = kl_queue(test, l, 2, 0, &c);

	KUNIT_EXPECT_EQ(test, 5 * MS, kt_rate_limited(test, q, "one"));
	KUNIT_EXPECT_EQ(test, 5 * MS, kt_rate_limited(test, q, "one"));
	KUNIT_EXPECT_EQ(test, 5 * MS, kt_rate_limited(test, q, "one"));
	KUNIT_EXPECT_EQ(test, 3 * SEC, kt_rate_limited(test, q, "one"));
	KUNIT_EXPECT_EQ(test, 3 * SEC, kt_rate_limited(test, q, "one"));
	KUNIT_EXPECT_EQ(test, 5, kt_requeues(q, "one"));

	KUNIT_EXPECT_EQ(test, 5 * MS, kt_rate_limited(test, q, "two"));
	KUNIT_EXPECT_EQ(test, 5 * MS, kt_rate_limited(test, q, "two"));
	KUNIT_EXPECT_EQ(test, 2, kt_requeues(q, "two"));

	kwq_forget(q, "one", 3);
	KUNIT_EXPECT_EQ(test, 0, kt_requeues(q, "one"));
	KUNIT_EXPECT_EQ(test, 5 * MS, kt_rate_limited(test, q, "one"));
}

static void bucket_allows_burst_then_spaces_by_rate(struct kunit *test)
{
	static const struct kwq_limiter_config l[] = { BUCKET(10000, 3) };
	struct kt_clock *c;
	struct kwq *q = kl_queue(test, l, 1, 0, &c);

	KUNIT_EXPECT_EQ(test, 0ULL, kl_fresh(test, q, 0));
	KUNIT_EXPECT_EQ(test, 0ULL, kl_fresh(test, q, 1));
	KUNIT_EXPECT_EQ(test, 0ULL, kl_fresh(test, q, 2));
	KUNIT_EXPECT_EQ(test, 100 * MS, kl_fresh(test, q, 3));
	KUNIT_EXPECT_EQ(test, 200 * MS, kl_fresh(test, q, 4));
	KUNIT_EXPECT_EQ(test, 300 * MS, kl_fresh(test, q, 5));
	/* Debt of 3 tokens, 10 refilled, capped at the burst of 3. */
	kt_advance(c, 1 * SEC);
	KUNIT_EXPECT_EQ(test, 0ULL, kl_fresh(test, q, 6));
	KUNIT_EXPECT_EQ(test, 0ULL, kl_fresh(test, q, 7));
	KUNIT_EXPECT_EQ(test, 0ULL, kl_fresh(test, q, 8));
	KUNIT_EXPECT_EQ(test, 100 * MS, kl_fresh(test, q, 9));
	/* A bucket-only queue keeps no failure counts. */
	KUNIT_EXPECT_EQ(test, 0, kt_requeues(q, "k9"));
	KUNIT_EXPECT_EQ(test, 0ULL, kt_stats(test, q).failure_records);
}

static void bucket_refills_continuously(struct kunit *test)
{
	static const struct kwq_limiter_config l[] = { BUCKET(10000, 1) };
	struct kt_clock *c;
	struct kwq *q = kl_queue(test, l, 1, 0, &c);

	KUNIT_EXPECT_EQ(test, 0ULL, kl_fresh(test, q, 0));
	kt_advance(c, 50 * MS);
	/* Half a token back: wait for the other half. */
	KUNIT_EXPECT_EQ(test, 50 * MS, kl_fresh(test, q, 1));
	kt_advance(c, 100 * MS);
	KUNIT_EXPECT_EQ(test, 50 * MS, kl_fresh(test, q, 2));
	kt_advance(c, 1);
	KUNIT_EXPECT_EQ(test, 150 * MS - 1, kl_fresh(test, q, 3));
}

static void bucket_fractional_rate(struct kunit *test)
{
	static const struct kwq_limiter_config l[] = { BUCKET(500, 1) };
	struct kt_clock *c;
	struct kwq *q = kl_queue(test, l, 1, 0, &c);

	KUNIT_EXPECT_EQ(test, 0ULL, kl_fresh(test, q, 0));
	KUNIT_EXPECT_EQ(test, 2 * SEC, kl_fresh(test, q, 1));
	KUNIT_EXPECT_EQ(test, 4 * SEC, kl_fresh(test, q, 2));
	kt_advance(c, 3 * SEC);
	KUNIT_EXPECT_EQ(test, 3 * SEC, kl_fresh(test, q, 3));
}

/* controller-runtime#1594: no tokens for adds that change nothing. */
static void bucket_charged_only_when_add_lands(struct kunit *test)
{
	static const struct kwq_limiter_config l[] = { BUCKET(1000, 1) };
	struct kt_clock *c;
	struct kwq *q = kl_queue(test, l, 1, 0, &c);

	KUNIT_EXPECT_EQ(test, 0ULL, kt_rate_limited(test, q, "a"));
	/* "a" is ready: it remembers the deadline, which costs a token. */
	KUNIT_EXPECT_EQ(test, 1 * SEC, kt_rate_limited(test, q, "a"));
	/* A later deadline than the remembered one does not land. */
	KUNIT_EXPECT_EQ(test, 2 * SEC, kt_rate_limited(test, q, "a"));
	KUNIT_EXPECT_EQ(test, 2 * SEC, kt_rate_limited(test, q, "b"));
	/* "b" waits for 2 s: a later deadline does not land either. */
	KUNIT_EXPECT_EQ(test, 3 * SEC, kt_rate_limited(test, q, "b"));
	KUNIT_EXPECT_EQ(test, 3 * SEC, kt_rate_limited(test, q, "c"));
	KUNIT_EXPECT_EQ(test, 6ULL, kt_stats(test, q).retries_total);
	KUNIT_EXPECT_EQ(test, 4ULL, kt_stats(test, q).adds_total);
}

/* client-go DefaultControllerRateLimiter: exp 5ms..1000s, 10 qps/100 */
static void default_limiter_matches_client_go(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	int i;

	KUNIT_EXPECT_EQ(test, 5 * MS, kt_rate_limited(test, q, "one"));
	KUNIT_EXPECT_EQ(test, 10 * MS, kt_rate_limited(test, q, "one"));
	KUNIT_EXPECT_EQ(test, 20 * MS, kt_rate_limited(test, q, "one"));
	/* Only the first add of "one" landed: 99 tokens are left. */
	for (i = 0; i < 99; i++)
		KUNIT_EXPECT_EQ(test, 5 * MS, kl_fresh(test, q, i));
	KUNIT_EXPECT_EQ(test, 100 * MS, kl_fresh(test, q, 99));
	KUNIT_EXPECT_EQ(test, 200 * MS, kl_fresh(test, q, 100));
}

static void max_wait_caps_limiter_delay(struct kunit *test)
{
	static const struct kwq_limiter_config l[] = { EXP(1 * SEC, 1000 * SEC) };
	static const struct kwq_limiter_config big[] = { EXP(5 * SEC, 1000 * SEC) };
	struct kt_clock *c;
	struct kwq *q = kl_queue(test, l, 1, 3 * SEC, &c);

	KUNIT_EXPECT_EQ(test, 1 * SEC, kt_rate_limited(test, q, "a"));
	KUNIT_EXPECT_EQ(test, 2 * SEC, kt_rate_limited(test, q, "a"));
	KUNIT_EXPECT_EQ(test, 3 * SEC, kt_rate_limited(test, q, "a"));
	KUNIT_EXPECT_EQ(test, 3 * SEC, kt_rate_limited(test, q, "a"));
	/* Per key: "b" starts from the base again. */
	KUNIT_EXPECT_EQ(test, 1 * SEC, kt_rate_limited(test, q, "b"));
	/* The capped delay is the one the key waits. */
	q = kl_queue(test, big, 1, 3 * SEC, &c);
	KUNIT_EXPECT_EQ(test, 3 * SEC, kt_rate_limited(test, q, "c"));
	kt_expect_ready_at(test, q, c, 3 * SEC);
}

static void rate_limited_key_becomes_ready_after_delay(struct kunit *test)
{
	static const struct kwq_limiter_config l[] = { EXP(10 * MS, 1 * SEC) };
	struct kt_clock *c;
	struct kwq *q = kl_queue(test, l, 1, 0, &c);

	KUNIT_EXPECT_EQ(test, 10 * MS, kt_rate_limited(test, q, "a"));
	KUNIT_EXPECT_EQ(test, 1ULL, kt_stats(test, q).waiting);
	kt_expect_ready_at(test, q, c, 10 * MS);
	kt_get_done(test, q, "a");
}

static void rate_limited_retry_while_processing_waits_after_done(struct kunit *test)
{
	static const struct kwq_limiter_config l[] = { EXP(10 * MS, 1 * SEC) };
	struct kt_clock *c;
	struct kwq *q = kl_queue(test, l, 1, 0, &c);
	struct kwq_item a;

	kt_add(q, "a");
	a = kt_get(test, q, "a");
	KUNIT_EXPECT_EQ(test, 10 * MS, kt_rate_limited(test, q, "a"));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &a));
	KUNIT_EXPECT_EQ(test, 0L, kwq_len(q));
	kt_advance(c, 10 * MS);
	kt_get_done(test, q, "a");
	KUNIT_EXPECT_EQ(test, 1, kt_requeues(q, "a"));
}

static void done_keeps_failure_record_until_forget(struct kunit *test)
{
	static const struct kwq_limiter_config l[] = { EXP(1 * MS, 1 * SEC) };
	struct kt_clock *c;
	struct kwq *q = kl_queue(test, l, 1, 0, &c);

	KUNIT_EXPECT_EQ(test, 1 * MS, kt_rate_limited(test, q, "a"));
	kt_advance(c, 1 * MS);
	kt_get_done(test, q, "a");
	KUNIT_EXPECT_EQ(test, 1, kt_requeues(q, "a"));
	KUNIT_EXPECT_EQ(test, 1ULL, kt_stats(test, q).failure_records);
	KUNIT_EXPECT_EQ(test, 2 * MS, kt_rate_limited(test, q, "a"));
	KUNIT_EXPECT_EQ(test, 0, kwq_forget(q, "a", 1));
	KUNIT_EXPECT_EQ(test, 0, kt_requeues(q, "a"));
	/* Forget keeps the key queued; the earlier new deadline wins. */
	KUNIT_EXPECT_EQ(test, 1 * MS, kt_rate_limited(test, q, "a"));
	kt_advance(c, 1 * MS);
	kt_get_done(test, q, "a");
	kwq_forget(q, "a", 1);
	KUNIT_EXPECT_EQ(test, 0ULL, kt_stats(test, q).failure_records);
	/* Forgetting an unknown key is fine. */
	KUNIT_EXPECT_EQ(test, 0, kwq_forget(q, "zz", 2));
}

static void idle_failure_records_are_bounded_oldest_first(struct kunit *test)
{
	struct kwq_config cfg = {
		.nr_limiters = 1,
		.limiters = { EXP(1 * MS, 1 * SEC) },
		.max_failure_records = 2,
	};
	struct kt_clock *c;
	struct kwq *q = kt_create(test, &cfg, &c);
	struct kwq_stats st;

	kt_rate_limited(test, q, "a");
	kt_rate_limited(test, q, "b");
	kt_rate_limited(test, q, "c");
	kt_advance(c, 1 * MS);
	kt_get_done(test, q, "a");
	kt_get_done(test, q, "b");
	kt_get_done(test, q, "c");
	KUNIT_EXPECT_EQ(test, 0, kt_requeues(q, "a"));
	KUNIT_EXPECT_EQ(test, 1, kt_requeues(q, "b"));
	KUNIT_EXPECT_EQ(test, 1, kt_requeues(q, "c"));
	st = kt_stats(test, q);
	KUNIT_EXPECT_EQ(test, 2ULL, st.failure_records);
	KUNIT_EXPECT_EQ(test, 1ULL, st.failure_records_evicted);
	/* A key that is queued again leaves the idle set. */
	KUNIT_EXPECT_EQ(test, 2 * MS, kt_rate_limited(test, q, "b"));
	KUNIT_EXPECT_EQ(test, 1 * MS, kt_rate_limited(test, q, "a"));
	KUNIT_EXPECT_EQ(test, 1ULL, kt_stats(test, q).failure_records_evicted);
}

static struct kunit_case kwq_limiter_cases[] = {
	KUNIT_CASE(exponential_doubles_from_base_up_to_max),
	KUNIT_CASE(exponential_overflow_returns_max),
	KUNIT_CASE(exponential_exact_up_to_int64_limit),
	KUNIT_CASE(exponential_base_rounds_like_float64),
	KUNIT_CASE(exponential_zero_base_adds_at_once),
	KUNIT_CASE(fast_slow_switches_after_max_fast),
	KUNIT_CASE(max_of_takes_the_largest_delay),
	KUNIT_CASE(bucket_allows_burst_then_spaces_by_rate),
	KUNIT_CASE(bucket_refills_continuously),
	KUNIT_CASE(bucket_fractional_rate),
	KUNIT_CASE(bucket_charged_only_when_add_lands),
	KUNIT_CASE(default_limiter_matches_client_go),
	KUNIT_CASE(max_wait_caps_limiter_delay),
	KUNIT_CASE(rate_limited_key_becomes_ready_after_delay),
	KUNIT_CASE(rate_limited_retry_while_processing_waits_after_done),
	KUNIT_CASE(done_keeps_failure_record_until_forget),
	KUNIT_CASE(idle_failure_records_are_bounded_oldest_first),
	{}
};

static struct kunit_suite kwq_limiter_suite = {
	.name = "kwq_limiter",
	.test_cases = kwq_limiter_cases,
};

kunit_test_suite(kwq_limiter_suite);
