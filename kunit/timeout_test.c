// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit cases for processing deadlines (controller-runtime#798): a key
 * processing past its deadline loses its lease and is requeued as a
 * failure, as kwq_add_rate_limited() then kwq_done() by its holder
 * would; kwq_touch() moves the deadline; a later done by the old holder
 * is -ESTALE and changes nothing. One behaviour per case, on a fake
 * clock, whose expiry is the one queue timer's.
 */

#include <kunit/test.h>
#include <linux/kwq.h>
#include <linux/string.h>

#include "kwq_internal.h"
#include "kwq_test.h"

#define MS	NSEC_PER_MSEC

/* A queue with a processing timeout of @timeout and a 10 ms..1 s backoff. */
static struct kwq *kto_create(struct kunit *test, u64 timeout,
			      struct kt_clock **c)
{
	struct kwq_config cfg = {
		.nr_limiters = 1,
		.limiters[0] = {
			.type = KWQ_LIMITER_EXPONENTIAL,
			.exp = { .base_ns = 10 * MS, .max_ns = 1000 * MS },
		},
		.processing_timeout_ns = timeout,
	};

	return kt_create(test, &cfg, c);
}

#define KTO(q, field)	KT_STAT(test, q, field)

static struct kwq_key kto_key(const char *key)
{
	return (struct kwq_key){ .key = key, .len = strlen(key) };
}

static void deadline_revokes_and_requeues_as_failure(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kto_create(test, 100 * MS, &c);
	struct kwq_item a;

	kt_add(q, "a");
	a = kt_get(test, q, "a");
	kt_advance(c, 100 * MS - 1);
	KUNIT_EXPECT_EQ(test, 1ULL, KTO(q, processing));
	kt_advance(c, 1);
	/* As add_rate_limited + done: one failure, waiting 10 ms. */
	KUNIT_EXPECT_EQ(test, 0ULL, KTO(q, processing));
	KUNIT_EXPECT_EQ(test, 1ULL, KTO(q, waiting));
	KUNIT_EXPECT_EQ(test, 1, kt_requeues(q, "a"));
	KUNIT_EXPECT_EQ(test, 1ULL, KTO(q, retries_total));
	KUNIT_EXPECT_EQ(test, 1ULL, KTO(q, processing_timeouts_total));
	/* The old holder's done changes nothing. */
	KUNIT_EXPECT_EQ(test, -ESTALE, kwq_done(q, &a));
	KUNIT_EXPECT_EQ(test, -ESTALE, kwq_touch(q, &a, 0));
	KUNIT_EXPECT_EQ(test, 1ULL, KTO(q, waiting));
	kt_expect_ready_at(test, q, c, 10 * MS);
	kt_expect_last_run(test, q, c, "a", 10000 * MS);
	KUNIT_EXPECT_EQ(test, 1ULL, KTO(q, processing_timeouts_total));
}

static void done_before_deadline_cancels_it(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kto_create(test, 100 * MS, &c);

	kt_add(q, "a");
	kt_advance(c, 0);
	kt_expect_last_run(test, q, c, "a", 10000 * MS);
	KUNIT_EXPECT_EQ(test, 0ULL, KTO(q, processing_timeouts_total));
	KUNIT_EXPECT_EQ(test, 0, kt_requeues(q, "a"));
}

/* The deadline and a done at the same moment: the expiry runs first. */
static void deadline_wins_at_the_same_moment_as_done(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kto_create(test, 100 * MS, &c);
	struct kwq_item a;

	kt_add(q, "a");
	a = kt_get(test, q, "a");
	kt_advance(c, 100 * MS);
	KUNIT_EXPECT_EQ(test, -ESTALE, kwq_done(q, &a));
	/* Nothing lost, nothing twice: the key runs once more, then is gone. */
	kt_advance(c, 10 * MS);
	kt_expect_last_run(test, q, c, "a", 10000 * MS);
	KUNIT_EXPECT_EQ(test, 1ULL, KTO(q, processing_timeouts_total));
}

/* The same moment, the done first: the expiry then finds nothing due. */
static void done_wins_at_the_same_moment_as_deadline(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kto_create(test, 100 * MS, &c);
	struct kwq_item a;

	kt_add(q, "a");
	a = kt_get(test, q, "a");
	KUNIT_EXPECT_TRUE(test, c->armed);
	KUNIT_EXPECT_EQ(test, KT_T0 + 100 * MS, c->deadline);
	/* Time reaches the deadline, the done takes the lock before the timer. */
	WRITE_ONCE(c->now, c->now + 100 * MS);
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &a));
	kt_advance(c, 0);
	kt_advance(c, 10000 * MS);
	kt_expect_empty(test, q);
	KUNIT_EXPECT_EQ(test, 0ULL, KTO(q, processing_timeouts_total));
	KUNIT_EXPECT_EQ(test, 0ULL, KTO(q, waiting));
	KUNIT_EXPECT_EQ(test, 0, kt_requeues(q, "a"));
}

static void touch_extends_the_deadline(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kto_create(test, 100 * MS, &c);
	struct kwq_item a;

	kt_add(q, "a");
	a = kt_get(test, q, "a");
	kt_advance(c, 80 * MS);
	KUNIT_EXPECT_EQ(test, 0, kwq_touch(q, &a, 0));
	kt_advance(c, 99 * MS);
	KUNIT_EXPECT_EQ(test, 1ULL, KTO(q, processing));
	KUNIT_EXPECT_EQ(test, 0, kwq_touch(q, &a, 30 * MS));
	kt_advance(c, 30 * MS - 1);
	KUNIT_EXPECT_EQ(test, 1ULL, KTO(q, processing));
	kt_advance(c, 1);
	KUNIT_EXPECT_EQ(test, 0ULL, KTO(q, processing));
	KUNIT_EXPECT_EQ(test, -ESTALE, kwq_done(q, &a));
}

static void touch_clears_or_sets_a_deadline(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kto_create(test, 100 * MS, &c);
	struct kwq *q0 = kto_create(test, 0, NULL);
	struct kwq_item a, b, x;

	kt_add(q, "a");
	kt_add(q, "b");
	a = kt_get(test, q, "a");
	kt_advance(c, 10 * MS);
	b = kt_get(test, q, "b");
	/* No deadline for a: back into the processing list, oldest first. */
	KUNIT_EXPECT_EQ(test, 0, kwq_touch(q, &a, KWQ_NO_TIMEOUT));
	KUNIT_EXPECT_EQ(test, 0, kwq_touch(q, &b, KWQ_NO_TIMEOUT));
	kt_advance(c, 10000 * MS);
	KUNIT_EXPECT_EQ(test, 2ULL, KTO(q, processing));
	KUNIT_EXPECT_EQ(test, 10010 * MS,
			KTO(q, longest_running_ns));
	/* And back: a deadline of its own. */
	KUNIT_EXPECT_EQ(test, 0, kwq_touch(q, &b, 5 * MS));
	KUNIT_EXPECT_EQ(test, 10010 * MS,
			KTO(q, longest_running_ns));
	kt_advance(c, 5 * MS);
	KUNIT_EXPECT_EQ(test, 1ULL, KTO(q, processing));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &a));
	/* A queue without a timeout: 0 means none. */
	kt_add(q0, "x");
	x = kt_get(test, q0, "x");
	KUNIT_EXPECT_EQ(test, 0, kwq_touch(q0, &x, 0));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q0, &x));
}

/*
 * The time a processing key became dirty is kept wherever its processing
 * deadline is (in the node, or in the deadline's record): the requeued
 * key's queue duration runs from that add, however touch moved the
 * deadline meanwhile.
 */
static void dirty_time_kept_across_deadline_changes(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kto_create(test, 500 * MS, &c);
	struct kwq_item a, b;

	kt_add(q, "a");
	kt_add(q, "b");
	a = kt_get(test, q, "a");
	b = kt_get(test, q, "b");
	KUNIT_EXPECT_EQ(test, 0, kwq_touch(q, &b, KWQ_NO_TIMEOUT));
	kt_advance(c, 10 * MS);
	/* Dirty: a with a deadline, b without. */
	kt_add(q, "a");
	kt_add(q, "b");
	kt_advance(c, 10 * MS);
	KUNIT_EXPECT_EQ(test, 0, kwq_touch(q, &a, KWQ_NO_TIMEOUT));
	KUNIT_EXPECT_EQ(test, 0, kwq_touch(q, &b, 300 * MS));
	kt_advance(c, 10 * MS);
	KUNIT_EXPECT_EQ(test, 0, kwq_touch(q, &a, 400 * MS));
	KUNIT_EXPECT_EQ(test, 0, kwq_touch(q, &b, 200 * MS));
	kt_advance(c, 10 * MS);
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &a));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &b));
	a = kt_get(test, q, "a");
	b = kt_get(test, q, "b");
	KUNIT_EXPECT_EQ(test, KT_T0 + 10 * MS, a.queued_ns);
	KUNIT_EXPECT_EQ(test, KT_T0 + 10 * MS, b.queued_ns);
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &a));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &b));
}

static void get_overrides_the_queue_timeout(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kto_create(test, 100 * MS, &c);
	struct kwq_get_ctl ctl = { .processing_timeout_ns = 20 * MS };
	struct kwq_item it[2];

	kt_add(q, "a");
	kt_add(q, "b");
	KUNIT_ASSERT_EQ(test, 1, kwq_get_batch_ctl(q, NULL, KWQ_GET_NONBLOCK, 0,
						   it, 0, 1, &ctl));
	ctl.processing_timeout_ns = KWQ_NO_TIMEOUT;
	KUNIT_ASSERT_EQ(test, 1, kwq_get_batch_ctl(q, NULL, KWQ_GET_NONBLOCK, 0,
						   it + 1, 0, 1, &ctl));
	kt_advance(c, 20 * MS);
	KUNIT_EXPECT_EQ(test, 1ULL, KTO(q, processing));
	KUNIT_EXPECT_EQ(test, -ESTALE, kwq_done(q, &it[0]));
	kt_advance(c, 10000 * MS);
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &it[1]));
	KUNIT_EXPECT_EQ(test, 1ULL, KTO(q, processing_timeouts_total));
}

static void deadlines_fire_in_order(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kto_create(test, 300 * MS, &c);
	struct kwq_item a, b, d;

	kt_add(q, "a");
	kt_add(q, "b");
	kt_add(q, "d");
	a = kt_get(test, q, "a");
	b = kt_get(test, q, "b");
	d = kt_get(test, q, "d");
	kwq_touch(q, &d, 100 * MS);
	kwq_touch(q, &b, 200 * MS);
	kt_advance(c, 100 * MS);
	KUNIT_EXPECT_EQ(test, -ESTALE, kwq_done(q, &d));
	KUNIT_EXPECT_EQ(test, 2ULL, KTO(q, processing));
	kt_advance(c, 100 * MS);
	KUNIT_EXPECT_EQ(test, -ESTALE, kwq_done(q, &b));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &a));
	KUNIT_EXPECT_EQ(test, 2ULL, KTO(q, processing_timeouts_total));
}

static void revoked_owner_gets_estale_by_key(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kto_create(test, 100 * MS, &c);
	struct kwq_key k = kto_key("a");
	struct kwq_item item;
	int mine, theirs;
	unsigned int done;

	kt_add(q, "a");
	KUNIT_ASSERT_EQ(test, 0, kwq_get(q, &mine, KWQ_GET_NONBLOCK, 0, &item));
	kt_advance(c, 100 * MS);
	/* Waiting again: ESTALE, not ENOENT. */
	KUNIT_EXPECT_EQ(test, -ESTALE, kwq_done_keys(q, &k, 1, &mine, &done));
	KUNIT_EXPECT_EQ(test, 0U, done);
	KUNIT_EXPECT_EQ(test, -ESTALE, kwq_done_key(q, "a", 1, &mine));
	KUNIT_EXPECT_EQ(test, -ESTALE, kwq_touch_key(q, "a", 1, &mine, 0));
	KUNIT_EXPECT_EQ(test, -ENOENT, kwq_done_keys(q, &k, 1, &theirs, &done));
	/* Taken by another owner: ESTALE, not EPERM; theirs is untouched. */
	kt_advance(c, 10 * MS);
	KUNIT_ASSERT_EQ(test, 0, kwq_get(q, &theirs, KWQ_GET_NONBLOCK, 0, &item));
	KUNIT_EXPECT_EQ(test, -ESTALE, kwq_done_keys(q, &k, 1, &mine, &done));
	KUNIT_EXPECT_EQ(test, 1ULL, KTO(q, processing));
	KUNIT_EXPECT_EQ(test, 0, kwq_done_keys(q, &k, 1, &theirs, &done));
	/* Gone from the queue altogether: still ESTALE for mine. */
	KUNIT_EXPECT_EQ(test, 0, kwq_forget(q, "a", 1));
	KUNIT_EXPECT_EQ(test, -ESTALE, kwq_done_keys(q, &k, 1, &mine, &done));
	KUNIT_EXPECT_EQ(test, -ENOENT, kwq_done_keys(q, &k, 1, &theirs, &done));
	/* Taken detached, then by the same owner again: its done works. */
	kt_add(q, "a");
	KUNIT_ASSERT_EQ(test, 0, kwq_get(q, NULL, KWQ_GET_NONBLOCK, 0, &item));
	KUNIT_EXPECT_EQ(test, -ESTALE, kwq_done_keys(q, &k, 1, &mine, &done));
	KUNIT_EXPECT_EQ(test, 1ULL, KTO(q, processing));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
	kt_add(q, "a");
	KUNIT_ASSERT_EQ(test, 0, kwq_get(q, &mine, KWQ_GET_NONBLOCK, 0, &item));
	KUNIT_EXPECT_EQ(test, 0, kwq_touch_key(q, "a", 1, &mine, 0));
	KUNIT_EXPECT_EQ(test, 0, kwq_done_keys(q, &k, 1, &mine, &done));
}

static void release_owner_forgets_revoked_leases(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kto_create(test, 100 * MS, &c);
	struct kwq_key k = kto_key("a");
	struct kwq_item item;
	unsigned int done;
	int mine;

	kt_add(q, "a");
	kt_add(q, "b");
	KUNIT_ASSERT_EQ(test, 0, kwq_get(q, &mine, KWQ_GET_NONBLOCK, 0, &item));
	kt_advance(c, 100 * MS);
	KUNIT_ASSERT_EQ(test, 0, kwq_get(q, &mine, KWQ_GET_NONBLOCK, 0, &item));
	/* b has a deadline: the release finds it in the due tree. */
	KUNIT_EXPECT_EQ(test, 1, kwq_release_owner(q, &mine));
	KUNIT_EXPECT_EQ(test, 1ULL, KTO(q, lease_returns));
	KUNIT_EXPECT_EQ(test, -ENOENT, kwq_done_keys(q, &k, 1, &mine, &done));
	kt_advance(c, 1000 * MS);
	KUNIT_EXPECT_EQ(test, 1ULL, KTO(q, processing_timeouts_total));
	KUNIT_EXPECT_EQ(test, 2L, kwq_len(q));
}

static void dirty_key_keeps_its_priority_and_requeue(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kto_create(test, 100 * MS, &c);

	kt_add_prio(q, "a", 7);
	kt_get(test, q, "a");
	kt_add_prio(q, "a", 7);
	kt_add(q, "z");
	kt_advance(c, 100 * MS);
	/* Dirty: ready at once (as add_rate_limited + done), at priority 7. */
	KUNIT_EXPECT_EQ(test, 2L, kwq_len(q));
	KUNIT_EXPECT_EQ(test, 1, kt_requeues(q, "a"));
	kt_get_done_prio(test, q, "a", 7);
}

static void deadline_after_shutdown_lets_drain_end(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kto_create(test, 100 * MS, &c);
	struct kwq_item a;

	kt_add(q, "a");
	a = kt_get(test, q, "a");
	KUNIT_EXPECT_EQ(test, 0, kwq_shutdown(q));
	kt_advance(c, 100 * MS);
	/* The requeue fails after shutdown: the done drops the key. */
	KUNIT_EXPECT_EQ(test, 0ULL, KTO(q, processing));
	KUNIT_EXPECT_EQ(test, 0ULL, KTO(q, waiting));
	KUNIT_EXPECT_EQ(test, 1ULL, KTO(q, processing_timeouts_total));
	KUNIT_EXPECT_EQ(test, -ESTALE, kwq_done(q, &a));
	KUNIT_EXPECT_EQ(test, 0, kwq_shutdown_drain(q));
}

static void bad_timeouts_are_einval_and_change_nothing(struct kunit *test)
{
	struct kwq_config cfg = { .processing_timeout_ns = 1 };
	struct kt_clock *c;
	struct kwq *q = kto_create(test, 100 * MS, &c);
	struct kwq_item a, none = {};

	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR(kwq_create("kto-bad", &cfg)));
	cfg.processing_timeout_ns = KWQ_PROCESSING_TIMEOUT_MAX_NS + 1;
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR(kwq_create("kto-bad", &cfg)));
	kt_add(q, "a");
	a = kt_get(test, q, "a");
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_touch(q, &a, 1));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			kwq_touch(q, &a, KWQ_PROCESSING_TIMEOUT_MAX_NS + 1));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_touch(NULL, &a, 0));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_touch(q, NULL, 0));
	KUNIT_EXPECT_EQ(test, -ESTALE, kwq_touch(q, &none, 0));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_touch_key(q, "a", 1, NULL, 2));
	KUNIT_EXPECT_EQ(test, -ENOENT, kwq_touch_key(q, "b", 1, NULL, 0));
	/* The deadline did not move. */
	kt_advance(c, 100 * MS);
	KUNIT_EXPECT_EQ(test, -ESTALE, kwq_done(q, &a));
}

static struct kunit_case kwq_timeout_cases[] = {
	KUNIT_CASE(deadline_revokes_and_requeues_as_failure),
	KUNIT_CASE(done_before_deadline_cancels_it),
	KUNIT_CASE(deadline_wins_at_the_same_moment_as_done),
	KUNIT_CASE(done_wins_at_the_same_moment_as_deadline),
	KUNIT_CASE(touch_extends_the_deadline),
	KUNIT_CASE(touch_clears_or_sets_a_deadline),
	KUNIT_CASE(dirty_time_kept_across_deadline_changes),
	KUNIT_CASE(get_overrides_the_queue_timeout),
	KUNIT_CASE(deadlines_fire_in_order),
	KUNIT_CASE(revoked_owner_gets_estale_by_key),
	KUNIT_CASE(release_owner_forgets_revoked_leases),
	KUNIT_CASE(dirty_key_keeps_its_priority_and_requeue),
	KUNIT_CASE(deadline_after_shutdown_lets_drain_end),
	KUNIT_CASE(bad_timeouts_are_einval_and_change_nothing),
	{}
};

static struct kunit_suite kwq_timeout_suite = {
	.name = "kwq_timeout",
	.test_cases = kwq_timeout_cases,
};

kunit_test_suite(kwq_timeout_suite);
