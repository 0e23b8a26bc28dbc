// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit cases for the dead set (&struct kwq_config.max_retries): a key
 * whose rate-limited add finds max_retries failures already counted is
 * not requeued but moves to the queue's bounded dead set, from where
 * kwq_revive() (or an add) brings it back with its count reset and
 * kwq_purge() drops it. One behaviour per case, on a fake clock.
 */

#include <kunit/test.h>
#include <linux/err.h>
#include <linux/kwq.h>
#include <linux/stddef.h>
#include <linux/string.h>

#include "kwq_internal.h"
#include "kwq_test.h"
#include "kwq_trace.h"

#define MS	NSEC_PER_MSEC

static struct kwq *dt_create(struct kunit *test, u32 max_retries,
			     u32 max_dead, struct kt_clock **c)
{
	struct kwq_config cfg = {
		.max_retries = max_retries,
		.max_dead = max_dead,
	};

	return kt_create(test, &cfg, c);
}

/* Fail @key until it is dead: @retries requeues, then the last failure. */
static void dt_kill(struct kunit *test, struct kwq *q, struct kt_clock *c,
		    const char *key, u32 retries)
{
	u32 i;

	kt_add(q, key);
	for (i = 0; i < retries; i++)
		kt_advance(c, kt_fail(test, q, key));
	KUNIT_EXPECT_EQ(test, KWQ_DELAY_DEAD, kt_fail(test, q, key));
}

/*
 * Add @key to a queue of max_retries 1, fail it once, take it and report
 * its last failure: the lease of the key, processing and due to die.
 */
static struct kwq_item dt_dying(struct kunit *test, struct kwq *q,
				struct kt_clock *c, const char *key)
{
	struct kwq_item item;

	kt_add(q, key);
	kt_advance(c, kt_fail(test, q, key));
	item = kt_get(test, q, key);
	KUNIT_EXPECT_EQ(test, KWQ_DELAY_DEAD, kt_rate_limited(test, q, key));
	return item;
}

static int dt_revive(struct kwq *q, const char *key)
{
	return kwq_revive(q, key, strlen(key));
}

static void key_dies_after_max_retries(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = dt_create(test, 2, 0, &c);

	kt_add(q, "a");
	/* Two retries are requeued as in client-go... */
	KUNIT_EXPECT_NE(test, KWQ_DELAY_DEAD, kt_fail(test, q, "a"));
	kt_advance(c, 1000 * MS);
	KUNIT_EXPECT_NE(test, KWQ_DELAY_DEAD, kt_fail(test, q, "a"));
	kt_advance(c, 1000 * MS);
	/* ...the third failure is the last. */
	KUNIT_EXPECT_EQ(test, KWQ_DELAY_DEAD, kt_fail(test, q, "a"));
	kt_advance(c, 1000 * MS);
	kt_expect_empty(test, q);
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, dead));
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, dead_total));
	KUNIT_EXPECT_EQ(test, 0ULL, KT_STAT(test, q, waiting));
	KUNIT_EXPECT_EQ(test, 3, kt_requeues(q, "a"));
}

static void no_max_retries_requeues_forever(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = dt_create(test, 0, 0, &c);
	int i;

	kt_add(q, "a");
	for (i = 0; i < 20; i++) {
		KUNIT_EXPECT_NE(test, KWQ_DELAY_DEAD, kt_fail(test, q, "a"));
		kt_advance(c, 2000 * NSEC_PER_SEC);
	}
	KUNIT_EXPECT_EQ(test, 0ULL, KT_STAT(test, q, dead));
}

static void processing_key_dies_at_done(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = dt_create(test, 1, 0, &c);
	struct kwq_item item = dt_dying(test, q, c, "a");

	/* Still the holder's until done. */
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, processing));
	KUNIT_EXPECT_EQ(test, 0ULL, KT_STAT(test, q, dead));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
	KUNIT_EXPECT_EQ(test, 0ULL, KT_STAT(test, q, processing));
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, dead));
}

static void waiting_key_dies_at_once(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = dt_create(test, 1, 0, &c);

	kt_add(q, "a");
	kt_fail(test, q, "a");
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, waiting));
	/* A failure reported while it waits is its last. */
	KUNIT_EXPECT_EQ(test, KWQ_DELAY_DEAD, kt_rate_limited(test, q, "a"));
	KUNIT_EXPECT_EQ(test, 0ULL, KT_STAT(test, q, waiting));
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, dead));
	kt_advance(c, 1000 * MS);
	kt_expect_empty(test, q);
}

static void failure_of_dead_key_keeps_it_dead(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = dt_create(test, 1, 0, &c);

	dt_kill(test, q, c, "a", 1);
	KUNIT_EXPECT_EQ(test, KWQ_DELAY_DEAD, kt_rate_limited(test, q, "a"));
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, dead));
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, dead_total));
	KUNIT_EXPECT_EQ(test, 3, kt_requeues(q, "a"));
	kt_expect_empty(test, q);
}

static void add_of_dead_key_revives_it(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = dt_create(test, 1, 0, &c);

	dt_kill(test, q, c, "a", 1);
	KUNIT_EXPECT_EQ(test, 0, kt_add(q, "a"));
	KUNIT_EXPECT_EQ(test, 0ULL, KT_STAT(test, q, dead));
	KUNIT_EXPECT_EQ(test, 0, kt_requeues(q, "a"));
	kt_get_done(test, q, "a");
	kt_expect_empty(test, q);
}

static void add_during_last_run_cancels_the_death(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = dt_create(test, 1, 0, &c);
	struct kwq_item item = dt_dying(test, q, c, "a");

	/* A change after the last failure: run it again, count reset. */
	kt_add(q, "a");
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
	KUNIT_EXPECT_EQ(test, 0ULL, KT_STAT(test, q, dead));
	KUNIT_EXPECT_EQ(test, 0, kt_requeues(q, "a"));
	kt_get_done(test, q, "a");
}

static void revive_makes_key_ready_with_count_reset(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = dt_create(test, 2, 0, &c);

	dt_kill(test, q, c, "a", 2);
	KUNIT_EXPECT_EQ(test, 0, dt_revive(q, "a"));
	KUNIT_EXPECT_EQ(test, 0ULL, KT_STAT(test, q, dead));
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, len));
	KUNIT_EXPECT_EQ(test, 0, kt_requeues(q, "a"));
	/* Its full max_retries again. */
	kt_advance(c, kt_fail(test, q, "a"));
	kt_advance(c, kt_fail(test, q, "a"));
	KUNIT_EXPECT_EQ(test, KWQ_DELAY_DEAD, kt_fail(test, q, "a"));
}

static void revive_of_key_not_dead_changes_nothing(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = dt_create(test, 1, 0, &c);
	struct kwq_item item;

	KUNIT_EXPECT_EQ(test, -ENOENT, dt_revive(q, "unknown"));
	kt_add(q, "ready");
	KUNIT_EXPECT_EQ(test, -ENOENT, dt_revive(q, "ready"));
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
	item = kt_get(test, q, "ready");
	KUNIT_EXPECT_EQ(test, -ENOENT, dt_revive(q, "ready"));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
	kt_add_after(q, "waiting", 10 * MS);
	KUNIT_EXPECT_EQ(test, -ENOENT, dt_revive(q, "waiting"));
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, waiting));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_revive(q, NULL, 1));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_revive(q, "x", 0));
	KUNIT_EXPECT_EQ(test, 0ULL, KT_STAT(test, q, dead));
}

static void revive_all_revives_every_dead_key(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = dt_create(test, 1, 0, &c);

	dt_kill(test, q, c, "a", 1);
	dt_kill(test, q, c, "b", 1);
	KUNIT_EXPECT_EQ(test, 2L, kwq_revive_all(q));
	KUNIT_EXPECT_EQ(test, 0ULL, KT_STAT(test, q, dead));
	/* Oldest death first. */
	kt_get_done(test, q, "a");
	kt_get_done(test, q, "b");
	KUNIT_EXPECT_EQ(test, 0L, kwq_revive_all(q));
}

static void revive_at_max_items_is_enospc(struct kunit *test)
{
	struct kwq_config cfg = { .max_retries = 1, .max_items = 1 };
	struct kt_clock *c;
	struct kwq *q = kt_create(test, &cfg, &c);

	dt_kill(test, q, c, "a", 1);
	kt_add(q, "b");
	KUNIT_EXPECT_EQ(test, -ENOSPC, dt_revive(q, "a"));
	KUNIT_EXPECT_EQ(test, -ENOSPC, kwq_revive_all(q));
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, dead));
}

static void revive_after_shutdown_is_eshutdown(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = dt_create(test, 1, 0, &c);

	dt_kill(test, q, c, "a", 1);
	KUNIT_EXPECT_EQ(test, 0, kwq_shutdown(q));
	KUNIT_EXPECT_EQ(test, -ESHUTDOWN, dt_revive(q, "a"));
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, dead));
	/* Still there to purge. */
	KUNIT_EXPECT_EQ(test, 1L, kwq_purge_all(q));
}

static void purge_drops_dead_key(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = dt_create(test, 1, 0, &c);

	dt_kill(test, q, c, "a", 1);
	kt_add(q, "b");
	KUNIT_EXPECT_EQ(test, -ENOENT, kwq_purge(q, "b", 1));
	KUNIT_EXPECT_EQ(test, 0, kwq_purge(q, "a", 1));
	KUNIT_EXPECT_EQ(test, 0ULL, KT_STAT(test, q, dead));
	KUNIT_EXPECT_EQ(test, 0, kt_requeues(q, "a"));
	KUNIT_EXPECT_EQ(test, -ENOENT, kwq_purge(q, "a", 1));
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
}

static void dead_set_drops_oldest_beyond_bound(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = dt_create(test, 1, 2, &c);

	dt_kill(test, q, c, "a", 1);
	dt_kill(test, q, c, "b", 1);
	dt_kill(test, q, c, "c", 1);
	KUNIT_EXPECT_EQ(test, 2ULL, KT_STAT(test, q, dead));
	KUNIT_EXPECT_EQ(test, 3ULL, KT_STAT(test, q, dead_total));
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, dead_dropped_total));
	KUNIT_EXPECT_EQ(test, -ENOENT, dt_revive(q, "a"));
	KUNIT_EXPECT_EQ(test, 0, dt_revive(q, "b"));
	KUNIT_EXPECT_EQ(test, 0, dt_revive(q, "c"));
}

/*
 * A failure of a dead key makes it the newest death: the bound drops the
 * other, older one first.
 */
static void failure_of_dead_key_makes_it_the_newest_death(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = dt_create(test, 1, 2, &c);

	dt_kill(test, q, c, "a", 1);
	dt_kill(test, q, c, "b", 1);
	KUNIT_EXPECT_EQ(test, KWQ_DELAY_DEAD, kt_rate_limited(test, q, "a"));
	dt_kill(test, q, c, "c", 1);
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, dead_dropped_total));
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_DEAD, kt_state(q, "a"));
	KUNIT_EXPECT_EQ(test, 0U, kt_state(q, "b"));
}

/*
 * A queue of one retry, and @owner holding "a" past its last failure:
 * "a" dies when its lease ends.
 */
static struct kwq *dt_hold_dying(struct kunit *test, int *owner,
				 struct kwq_item *item)
{
	struct kt_clock *c;
	struct kwq *q = dt_create(test, 1, 0, &c);

	kt_add(q, "a");
	kt_advance(c, kt_fail(test, q, "a"));
	KUNIT_ASSERT_EQ(test, 0, kwq_get(q, owner, KWQ_GET_NONBLOCK, 0, item));
	kt_rate_limited(test, q, "a");
	return q;
}

static void release_owner_buries_dying_key(struct kunit *test)
{
	struct kwq_item item;
	int owner;
	struct kwq *q = dt_hold_dying(test, &owner, &item);

	/* Its holder went away after the last failure: dead, not ready. */
	kwq_release_owner(q, &owner);
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, dead));
	kt_expect_empty(test, q);
}

/*
 * The lease of a key that dies as its holder goes away ended all the
 * same: the release counts it, as lease_returns does.
 */
static void release_owner_counts_the_lease_of_a_dying_key(struct kunit *test)
{
	struct kwq_item item;
	int owner;
	struct kwq *q = dt_hold_dying(test, &owner, &item);

	KUNIT_EXPECT_EQ(test, 1, kwq_release_owner(q, &owner));
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, lease_returns));
	KUNIT_EXPECT_EQ(test, -ESTALE, kwq_done(q, &item));
}

/*
 * A dead key keeps the priority it had in the queue (for one that died
 * processing, the one it was handed out with): the last failure's
 * priority is not applied, and a revive makes it ready at the kept one.
 */
static void dead_key_keeps_the_priority_it_ran_with(struct kunit *test)
{
	struct kwq_add_opts first = { .priority = 3 }, last = { .priority = 7 };
	struct kt_clock *c;
	struct kwq *q = dt_create(test, 1, 0, &c);
	struct kwq_key_info info;
	struct kwq_item item;
	u64 delay = 0;

	/* One failure at priority 3: it waits, then runs at 3. */
	KUNIT_EXPECT_EQ(test, 0, kwq_add_rate_limited(q, "a", 1, &first,
						      &delay));
	kt_advance(c, delay);
	item = kt_get(test, q, "a");
	KUNIT_EXPECT_EQ(test, 3, kwq_item_priority(&item));
	KUNIT_EXPECT_EQ(test, 0, kwq_add_rate_limited(q, "a", 1, &last,
						      &delay));
	KUNIT_EXPECT_EQ(test, KWQ_DELAY_DEAD, delay);
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
	KUNIT_ASSERT_EQ(test, 0, kwq_inspect(q, "a", 1, &info));
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_DEAD, info.state);
	KUNIT_EXPECT_EQ(test, 3, info.priority);
	KUNIT_EXPECT_EQ(test, 0, dt_revive(q, "a"));
	kt_get_done_prio(test, q, "a", 3);
}

/*
 * A dead key dropped for max_dead goes as a purge would: with its
 * failure count, so that the queue holds nothing of it and a later add
 * is a new key's.
 */
static void dead_key_dropped_beyond_bound_is_forgotten(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = dt_create(test, 1, 1, &c);
	struct kwq_key_info info;

	dt_kill(test, q, c, "a", 1);
	dt_kill(test, q, c, "b", 1);
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, dead_dropped_total));
	KUNIT_EXPECT_EQ(test, -ENOENT, kwq_inspect(q, "a", 1, &info));
	KUNIT_EXPECT_EQ(test, 0, kt_requeues(q, "a"));
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, failure_records));
	KUNIT_EXPECT_EQ(test, 0, kt_add(q, "a"));
	KUNIT_EXPECT_EQ(test, 0, kt_requeues(q, "a"));
}

/* What key_purged told: the last event for the case's queue. */
struct dt_purged {
	const struct kwq *q;
	char key[8];
	int ret;
	unsigned int events;
};

static void dt_purged_probe(void *data, const struct kwq *q, const void *key,
			    size_t len, s64 arg, int prio, int ret)
{
	struct dt_purged *p = data;

	if (q != p->q)
		return;
	p->events++;
	p->ret = ret;
	memcpy(p->key, key, min(len, sizeof(p->key) - 1));
	p->key[min(len, sizeof(p->key) - 1)] = '\0';
}

/*
 * A dead key dropped for max_dead leaves a trace: key_purged with ret 1
 * (a purge by kwq_purge() has ret 0), the key and its failure count.
 */
static void dead_key_dropped_beyond_bound_is_traced(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = dt_create(test, 1, 1, &c);
	struct dt_purged p = { .q = q };

	if (!IS_ENABLED(CONFIG_TRACEPOINTS))
		kunit_skip(test, "a kernel without tracepoints");
	KUNIT_ASSERT_EQ(test, 0, register_trace_key_purged(dt_purged_probe,
							   &p));
	dt_kill(test, q, c, "a", 1);
	dt_kill(test, q, c, "b", 1);
	unregister_trace_key_purged(dt_purged_probe, &p);
	tracepoint_synchronize_unregister();
	KUNIT_EXPECT_EQ(test, 1U, p.events);
	KUNIT_EXPECT_STREQ(test, "a", p.key);
	KUNIT_EXPECT_EQ(test, 1, p.ret);
}

static void forget_keeps_dead_key(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = dt_create(test, 1, 0, &c);

	dt_kill(test, q, c, "a", 1);
	KUNIT_EXPECT_EQ(test, 0, kwq_forget(q, "a", 1));
	KUNIT_EXPECT_EQ(test, 2, kt_requeues(q, "a"));
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, dead));
}

static void remove_of_dead_key_is_enoent(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = dt_create(test, 1, 0, &c);

	dt_kill(test, q, c, "a", 1);
	KUNIT_EXPECT_EQ(test, -ENOENT, kt_remove(q, "a"));
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, dead));
}

static void token_bucket_only_queue_counts_failures(struct kunit *test)
{
	struct kwq_config cfg = {
		.max_retries = 1,
		.nr_limiters = 1,
		.limiters[0] = {
			.type = KWQ_LIMITER_BUCKET,
			.bucket = { .qps_milli = 1000000, .burst = 100 },
		},
	};
	struct kt_clock *c;
	struct kwq *q = kt_create(test, &cfg, &c);

	dt_kill(test, q, c, "a", 1);
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, dead));
}

/*
 * The time of a dying key's last failure is kept wherever its processing
 * deadline is (in the node, or in the deadline's record), through touches
 * that move it from one to the other and an unget: the dead key dates
 * from the failure.
 */
static void dying_time_kept_across_deadlines_and_unget(struct kunit *test)
{
	struct kwq_config cfg = {
		.max_retries = 1,
		.processing_timeout_ns = 500 * MS,
	};
	struct kwq_key_info info;
	struct kt_clock *c;
	struct kwq *q = kt_create(test, &cfg, &c);
	struct kwq_item item = dt_dying(test, q, c, "a");

	kt_advance(c, 5 * MS);
	KUNIT_EXPECT_EQ(test, 0, kwq_touch(q, &item, KWQ_NO_TIMEOUT));
	kt_advance(c, 5 * MS);
	KUNIT_EXPECT_EQ(test, 0, kwq_touch(q, &item, 300 * MS));
	kt_advance(c, 5 * MS);
	kwq_unget(q, &item);
	KUNIT_ASSERT_EQ(test, 0, kwq_inspect(q, "a", 1, &info));
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_DEAD, info.state);
	KUNIT_EXPECT_EQ(test, 15 * MS, info.since_ns);
}

static void bad_dead_set_config_fails_create(struct kunit *test)
{
	struct kwq_config cfg = { .max_retries = KWQ_MAX_RETRIES_MAX + 1 };
	struct kwq *q;

	q = kwq_create("kt-dead-bad", &cfg);
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR_OR_ZERO(q));
	cfg.max_retries = 1;
	cfg.max_dead = KWQ_MAX_DEAD_MAX + 1;
	q = kwq_create("kt-dead-bad", &cfg);
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR_OR_ZERO(q));
	cfg.max_retries = 0;
	cfg.max_dead = 1;
	q = kwq_create("kt-dead-bad", &cfg);
	KUNIT_EXPECT_EQ(test, -EINVAL, PTR_ERR_OR_ZERO(q));
}

static void dead_keys_are_charged_as_keys(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = dt_create(test, 1, 0, &c);

	dt_kill(test, q, c, "a", 1);
	/* The dead key keeps its node: a failure record, no queued item. */
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, failure_records));
	KUNIT_EXPECT_EQ(test, 0ULL, KT_STAT(test, q, len));
	KUNIT_EXPECT_EQ(test, 0, kwq_purge(q, "a", 1));
	KUNIT_EXPECT_EQ(test, 0ULL, KT_STAT(test, q, failure_records));
}

static struct kunit_case kwq_dead_cases[] = {
	KUNIT_CASE(key_dies_after_max_retries),
	KUNIT_CASE(no_max_retries_requeues_forever),
	KUNIT_CASE(processing_key_dies_at_done),
	KUNIT_CASE(waiting_key_dies_at_once),
	KUNIT_CASE(failure_of_dead_key_keeps_it_dead),
	KUNIT_CASE(add_of_dead_key_revives_it),
	KUNIT_CASE(add_during_last_run_cancels_the_death),
	KUNIT_CASE(revive_makes_key_ready_with_count_reset),
	KUNIT_CASE(revive_of_key_not_dead_changes_nothing),
	KUNIT_CASE(revive_all_revives_every_dead_key),
	KUNIT_CASE(revive_at_max_items_is_enospc),
	KUNIT_CASE(revive_after_shutdown_is_eshutdown),
	KUNIT_CASE(purge_drops_dead_key),
	KUNIT_CASE(dead_set_drops_oldest_beyond_bound),
	KUNIT_CASE(failure_of_dead_key_makes_it_the_newest_death),
	KUNIT_CASE(release_owner_buries_dying_key),
	KUNIT_CASE(release_owner_counts_the_lease_of_a_dying_key),
	KUNIT_CASE(dead_key_keeps_the_priority_it_ran_with),
	KUNIT_CASE(dead_key_dropped_beyond_bound_is_forgotten),
	KUNIT_CASE(dead_key_dropped_beyond_bound_is_traced),
	KUNIT_CASE(forget_keeps_dead_key),
	KUNIT_CASE(remove_of_dead_key_is_enoent),
	KUNIT_CASE(dying_time_kept_across_deadlines_and_unget),
	KUNIT_CASE(token_bucket_only_queue_counts_failures),
	KUNIT_CASE(bad_dead_set_config_fails_create),
	KUNIT_CASE(dead_keys_are_charged_as_keys),
	{}
};

static struct kunit_suite kwq_dead_suite = {
	.name = "kwq_dead",
	.test_cases = kwq_dead_cases,
};

kunit_test_suite(kwq_dead_suite);
