// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit cases for replaceable deadlines (client-go#131): the
 * KWQ_AFTER_REPLACE and KWQ_AFTER_LATER flags of kwq_add_opts() and
 * kwq_add_batch(), against the default (the earlier deadline wins), on
 * a fake clock.
 */

#include <kunit/test.h>
#include <linux/kwq.h>

#include "kwq_test.h"

#define MS	NSEC_PER_MSEC

static int kr_after(struct kwq *q, const char *key, s64 ns, u32 flags)
{
	struct kwq_add_opts o = { .after_ns = ns, .flags = flags };

	return kwq_add_opts(q, key, strlen(key), &o);
}

static void default_keeps_the_earlier_deadline(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);

	kt_add_after(q, "a", 50 * MS);
	KUNIT_EXPECT_EQ(test, 0, kr_after(q, "a", 100 * MS, 0));
	kt_expect_ready_at(test, q, c, 50 * MS);
}

static void replace_moves_a_waiting_key_later(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);

	kt_add_after(q, "a", 50 * MS);
	kt_advance(c, 40 * MS);
	/* Debounce: 100 ms after the last change, not the first. */
	KUNIT_EXPECT_EQ(test, 0, kr_after(q, "a", 100 * MS, KWQ_AFTER_REPLACE));
	KUNIT_EXPECT_EQ(test, 1ULL, kt_stats(test, q).waiting);
	kt_expect_ready_at(test, q, c, 100 * MS);
	kt_expect_last_run(test, q, c, "a", 1000 * MS);
}

static void replace_moves_a_waiting_key_earlier(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);

	kt_add_after(q, "a", 500 * MS);
	KUNIT_EXPECT_EQ(test, 0, kr_after(q, "a", 20 * MS, KWQ_AFTER_REPLACE));
	kt_expect_ready_at(test, q, c, 20 * MS);
}

static void later_keeps_the_later_deadline(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);

	kt_add_after(q, "a", 50 * MS);
	KUNIT_EXPECT_EQ(test, 0, kr_after(q, "a", 80 * MS, KWQ_AFTER_LATER));
	/* An earlier one changes nothing. */
	KUNIT_EXPECT_EQ(test, 0, kr_after(q, "a", 10 * MS, KWQ_AFTER_LATER));
	KUNIT_EXPECT_EQ(test, 2ULL, kt_stats(test, q).adds_total);
	kt_expect_ready_at(test, q, c, 80 * MS);
}

static void ready_key_stays_ready_and_remembers_the_replacement(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);

	kt_add(q, "a");
	kt_add_after(q, "a", 10 * MS);
	KUNIT_EXPECT_EQ(test, 0, kr_after(q, "a", 100 * MS, KWQ_AFTER_REPLACE));
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
	kt_get_done(test, q, "a");
	/* The remembered deadline is the replacement: 100 ms, not 10. */
	KUNIT_EXPECT_EQ(test, 1ULL, kt_stats(test, q).waiting);
	kt_expect_ready_at(test, q, c, 100 * MS);
}

static void processing_key_remembers_the_later_deadline(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item a;

	kt_add(q, "a");
	a = kt_get(test, q, "a");
	kt_add_after(q, "a", 10 * MS);
	KUNIT_EXPECT_EQ(test, 0, kr_after(q, "a", 60 * MS, KWQ_AFTER_LATER));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &a));
	kt_expect_ready_at(test, q, c, 60 * MS);
}

static void batch_takes_the_flags(struct kunit *test)
{
	struct kwq_key keys[] = { { "a", 1 }, { "b", 1 } };
	struct kwq_batch_opts o = { .after_ns = 300 * MS };
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	unsigned int done;

	KUNIT_EXPECT_EQ(test, 0, kwq_add_batch(q, keys, 2, &o, &done));
	o.after_ns = 30 * MS;
	o.flags = KWQ_AFTER_REPLACE;
	KUNIT_EXPECT_EQ(test, 0, kwq_add_batch(q, keys, 2, &o, &done));
	KUNIT_EXPECT_EQ(test, 2U, done);
	kt_advance(c, 30 * MS);
	KUNIT_EXPECT_EQ(test, 2L, kwq_len(q));
}

static void bad_flags_are_einval_and_change_nothing(struct kunit *test)
{
	struct kwq_key key = { "a", 1 };
	struct kwq_batch_opts o = { .after_ns = 30 * MS };
	struct kwq_add_opts ao = { .flags = KWQ_AFTER_REPLACE };
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	unsigned int done = 1;

	kt_add_after(q, "a", 50 * MS);
	KUNIT_EXPECT_EQ(test, -EINVAL, kr_after(q, "a", 10 * MS,
						KWQ_AFTER_REPLACE | KWQ_AFTER_LATER));
	KUNIT_EXPECT_EQ(test, -EINVAL, kr_after(q, "a", 10 * MS, 0x1));
	KUNIT_EXPECT_EQ(test, -EINVAL, kr_after(q, "a", 10 * MS, 0x80));
	/* Only with a delay. */
	KUNIT_EXPECT_EQ(test, -EINVAL, kr_after(q, "a", 0, KWQ_AFTER_LATER));
	KUNIT_EXPECT_EQ(test, -EINVAL, kr_after(q, "a", -5, KWQ_AFTER_REPLACE));
	/* Never with a rate limit. */
	KUNIT_EXPECT_EQ(test, -EINVAL,
			kwq_add_rate_limited(q, "a", 1, &ao, NULL));
	o.flags = KWQ_BATCH_RATE_LIMITED | KWQ_AFTER_REPLACE;
	o.after_ns = 0;
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_add_batch(q, &key, 1, &o, &done));
	KUNIT_EXPECT_EQ(test, 0U, done);
	o.flags = KWQ_AFTER_LATER;
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_add_batch(q, &key, 1, &o, &done));
	o.flags = KWQ_AFTER_LATER | KWQ_AFTER_REPLACE;
	o.after_ns = 30 * MS;
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_add_batch(q, &key, 1, &o, &done));
	KUNIT_EXPECT_EQ(test, 0ULL, kt_stats(test, q).retries_total);
	kt_expect_ready_at(test, q, c, 50 * MS);
}

static struct kunit_case kwq_replace_cases[] = {
	KUNIT_CASE(default_keeps_the_earlier_deadline),
	KUNIT_CASE(replace_moves_a_waiting_key_later),
	KUNIT_CASE(replace_moves_a_waiting_key_earlier),
	KUNIT_CASE(later_keeps_the_later_deadline),
	KUNIT_CASE(ready_key_stays_ready_and_remembers_the_replacement),
	KUNIT_CASE(processing_key_remembers_the_later_deadline),
	KUNIT_CASE(batch_takes_the_flags),
	KUNIT_CASE(bad_flags_are_einval_and_change_nothing),
	{}
};

static struct kunit_suite kwq_replace_suite = {
	.name = "kwq_replace",
	.test_cases = kwq_replace_cases,
};

kunit_test_suite(kwq_replace_suite);
