// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit cases for deadlines that kwq_add_after() asks for while a key is
 * ready or processing: a key remembers the earliest one in every state
 * and runs again once it has passed, as client-go's delaying queue does
 * (its delayed add fires later and adds the key again). One behaviour
 * per case, on a fake clock.
 */

#include <kunit/test.h>
#include <linux/kwq.h>

#include "kwq_test.h"

#define MS	NSEC_PER_MSEC

static void ready_key_remembers_add_after(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);

	kt_add(q, "a");
	KUNIT_EXPECT_EQ(test, 0, kt_add_after(q, "a", 100 * MS));
	/* Still one ready key, nothing waiting yet. */
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
	KUNIT_EXPECT_EQ(test, 0ULL, kt_stats(test, q).waiting);
	kt_get_done(test, q, "a");
	/* After its run, the key waits for what is left of the deadline. */
	KUNIT_EXPECT_EQ(test, 1ULL, kt_stats(test, q).waiting);
	kt_expect_ready_at(test, q, c, 100 * MS);
	kt_expect_last_run(test, q, c, "a", 1000 * MS);
}

static void remembered_deadline_passed_before_get_runs_once(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);

	kt_add(q, "a");
	kt_add_after(q, "a", 10 * MS);
	kt_advance(c, 20 * MS);
	/* This run starts after the deadline: it is the run asked for. */
	kt_get_done(test, q, "a");
	KUNIT_EXPECT_EQ(test, 0ULL, kt_stats(test, q).waiting);
	kt_advance(c, 1000 * MS);
	kt_expect_empty(test, q);
}

static void remembered_deadline_passing_during_run_requeues_at_done(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item a;

	kt_add(q, "a");
	kt_add_after(q, "a", 10 * MS);
	a = kt_get(test, q, "a");
	kt_advance(c, 20 * MS);
	/* The run began before the deadline, so it runs again. */
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &a));
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
	kt_expect_last_run(test, q, c, "a", 1000 * MS);
}

static void ready_key_earliest_remembered_deadline_wins(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);

	kt_add(q, "a");
	kt_add_after(q, "a", 100 * MS);
	kt_add_after(q, "a", 50 * MS);
	kt_add_after(q, "a", 200 * MS);
	kt_get_done(test, q, "a");
	kt_expect_ready_at(test, q, c, 50 * MS);
	/* Only one deadline is remembered: nothing at 100 or 200 ms. */
	kt_expect_last_run(test, q, c, "a", 1000 * MS);
}

static void dirty_key_remembers_add_after(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item a;

	kt_add(q, "a");
	a = kt_get(test, q, "a");
	kt_add(q, "a");
	KUNIT_EXPECT_EQ(test, 0, kt_add_after(q, "a", 100 * MS));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &a));
	/* Dirty: ready at done, and the deadline still ahead of it. */
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
	kt_get_done(test, q, "a");
	KUNIT_EXPECT_EQ(test, 1ULL, kt_stats(test, q).waiting);
	kt_advance(c, 100 * MS);
	kt_expect_last_run(test, q, c, "a", 1000 * MS);
}

static void add_of_delayed_processing_key_keeps_its_deadline(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item a;

	kt_add(q, "a");
	a = kt_get(test, q, "a");
	kt_add_after(q, "a", 100 * MS);
	kt_add(q, "a");
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &a));
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
	kt_get_done(test, q, "a");
	kt_advance(c, 100 * MS);
	kt_get_done(test, q, "a");
	kt_expect_empty(test, q);
}

static void rate_limited_add_of_ready_key_is_remembered(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	u64 delay;

	kt_add(q, "a");
	delay = kt_rate_limited(test, q, "a");
	KUNIT_EXPECT_GT(test, delay, 0ULL);
	kt_get_done(test, q, "a");
	kt_advance(c, delay);
	kt_get_done(test, q, "a");
	kt_expect_empty(test, q);
}

static void remove_cancels_remembered_deadline(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item a;

	kt_add(q, "a");
	a = kt_get(test, q, "a");
	kt_add(q, "a");
	kt_add_after(q, "a", 50 * MS);
	KUNIT_EXPECT_EQ(test, 0, kt_remove(q, "a"));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &a));
	kt_advance(c, 1000 * MS);
	kt_expect_empty(test, q);
	KUNIT_EXPECT_EQ(test, 0ULL, kt_stats(test, q).waiting);
}

static void remembered_deadline_is_dropped_after_shutdown(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);

	kt_add(q, "a");
	kt_add_after(q, "a", 100 * MS);
	KUNIT_EXPECT_EQ(test, 0, kwq_shutdown(q));
	/* The ready key still runs; its deadline goes like a waiting key. */
	kt_get_done(test, q, "a");
	KUNIT_EXPECT_EQ(test, 0ULL, kt_stats(test, q).waiting);
	KUNIT_EXPECT_EQ(test, 1ULL, kt_stats(test, q).dropped_at_shutdown);
}

static struct kunit_case kwq_deadline_cases[] = {
	KUNIT_CASE(ready_key_remembers_add_after),
	KUNIT_CASE(remembered_deadline_passed_before_get_runs_once),
	KUNIT_CASE(remembered_deadline_passing_during_run_requeues_at_done),
	KUNIT_CASE(ready_key_earliest_remembered_deadline_wins),
	KUNIT_CASE(dirty_key_remembers_add_after),
	KUNIT_CASE(add_of_delayed_processing_key_keeps_its_deadline),
	KUNIT_CASE(rate_limited_add_of_ready_key_is_remembered),
	KUNIT_CASE(remove_cancels_remembered_deadline),
	KUNIT_CASE(remembered_deadline_is_dropped_after_shutdown),
	{}
};

static struct kunit_suite kwq_deadline_suite = {
	.name = "kwq_deadline",
	.test_cases = kwq_deadline_cases,
};

kunit_test_suite(kwq_deadline_suite);
