// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit cases for the end of a key's run: whichever call finishes a
 * processing key (kwq_done(), kwq_done_key(), kwq_done_batch(),
 * kwq_done_get(), and dev.c's kwq_done_keys() and kwq_done_keys_take()),
 * what happens next depends only on what happened to the key meanwhile:
 * nothing (it goes), an add (ready again), a delayed add (it waits, or is
 * ready if its deadline passed, or is dropped after a shutdown), a failure
 * (its count is kept, within max_failure_records) or its last failure (the
 * dead set). Each case is one of those, run once per finishing call.
 */

#include <kunit/test.h>
#include <linux/kwq.h>
#include <linux/string.h>

#include "kwq_internal.h"
#include "kwq_test.h"

#define MS	NSEC_PER_MSEC

/*
 * One way to finish the processing @key held through @item. The calls
 * that go on to take the next key give back what they took (kwq_unget()),
 * so that the queue's state reads the same after each of them.
 */
struct ft_finisher {
	const char *name;
	int (*finish)(struct kwq *q, struct kwq_item *item, const char *key);
	bool charged;
};

static int ft_done(struct kwq *q, struct kwq_item *item, const char *key)
{
	return kwq_done(q, item);
}

static int ft_done_key(struct kwq *q, struct kwq_item *item, const char *key)
{
	return kwq_done_key(q, key, strlen(key), NULL);
}

static int ft_done_batch(struct kwq *q, struct kwq_item *item,
			 const char *key)
{
	unsigned int done = 0;
	int ret = kwq_done_batch(q, item, 1, &done);

	return ret ?: done == 1 ? 0 : -EPROTO;
}

/*
 * After the done part: @taken, give back the key taken into @item; else
 * @ret -EAGAIN or -ESHUTDOWN, nothing to take (the done was made).
 */
static int ft_taken(struct kwq *q, struct kwq_item *item, bool taken,
		    int ret)
{
	if (taken) {
		kwq_unget(q, item);
		return 0;
	}
	return ret == -EAGAIN || ret == -ESHUTDOWN ? 0 : ret;
}

static int ft_done_get(struct kwq *q, struct kwq_item *item, const char *key)
{
	int ret = kwq_done_get(q, NULL, KWQ_GET_NONBLOCK, 0, item);

	return ft_taken(q, item, !ret, ret);
}

static int ft_done_keys(struct kwq *q, struct kwq_item *item,
			const char *key)
{
	struct kwq_key k = { .key = key, .len = strlen(key) };
	unsigned int done = 0;
	int ret = kwq_done_keys(q, &k, 1, NULL, &done);

	return ret ?: done == 1 ? 0 : -EPROTO;
}

static int ft_done_keys_take(struct kwq *q, struct kwq_item *item,
			     const char *key)
{
	struct kwq_key k = { .key = key, .len = strlen(key) };
	unsigned int done = 0;
	int ret;

	ret = kwq_done_keys_take(q, &k, 1, NULL, &done, NULL, item, 1, NULL);
	if (done != 1)
		return ret < 0 ? ret : -EPROTO;
	return ft_taken(q, item, ret > 0, ret);
}

/*
 * Each on a kernel queue, which keeps freed nodes for its next keys, and
 * on one charged to its creator (KWQ_CONFIG_CHARGE_CALLER, as /dev/kwq's
 * are), which gives them back to the slab once it drops its lock.
 */
static const struct ft_finisher ft_finishers[] = {
	{ "kwq_done", ft_done },
	{ "kwq_done charged", ft_done, true },
	{ "kwq_done_key", ft_done_key },
	{ "kwq_done_key charged", ft_done_key, true },
	{ "kwq_done_batch", ft_done_batch },
	{ "kwq_done_batch charged", ft_done_batch, true },
	{ "kwq_done_get", ft_done_get },
	{ "kwq_done_get charged", ft_done_get, true },
	{ "kwq_done_keys", ft_done_keys },
	{ "kwq_done_keys charged", ft_done_keys, true },
	{ "kwq_done_keys_take", ft_done_keys_take },
	{ "kwq_done_keys_take charged", ft_done_keys_take, true },
};

static void ft_desc(const struct ft_finisher *f, char *desc)
{
	strscpy(desc, f->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(ft_finish, ft_finishers, ft_desc);

/* A queue (of @cfg if not NULL) charged or not as the case's run says. */
static struct kwq *ft_create(struct kunit *test, struct kwq_config *cfg,
			     struct kt_clock **c)
{
	const struct ft_finisher *f = test->param_value;
	struct kwq_config local = {};

	if (!cfg)
		cfg = &local;
	if (f->charged)
		cfg->flags |= KWQ_CONFIG_CHARGE_CALLER;
	return kt_create(test, cfg, c);
}

/* Finish "a", held through @item, the way this run of the case says. */
static void ft_finish(struct kunit *test, struct kwq *q,
		      struct kwq_item *item)
{
	const struct ft_finisher *f = test->param_value;

	KUNIT_EXPECT_EQ_MSG(test, 0, f->finish(q, item, "a"), "%s", f->name);
}

/* What happened to "a" while it ran. */
enum ft_meanwhile { FT_NOTHING, FT_ADDED, FT_DELAYED, FT_DELAYED_ADDED };

/* A queue (ft_create()) where "a" runs, *@item its lease, after @m. */
static struct kwq *ft_running(struct kunit *test, struct kt_clock **c,
			      enum ft_meanwhile m, struct kwq_item *item)
{
	struct kwq *q = ft_create(test, NULL, c);

	kt_add(q, "a");
	*item = kt_get(test, q, "a");
	if (m == FT_ADDED)
		kt_add(q, "a");
	else if (m == FT_DELAYED)
		kt_add_after(q, "a", 10 * MS);
	else if (m == FT_DELAYED_ADDED)
		KUNIT_EXPECT_TRUE(test, !kt_add_after(q, "a", 10 * MS) &&
				  !kt_add(q, "a"));
	return q;
}

static void clean_key_is_forgotten(struct kunit *test)
{
	struct kwq_item item;
	struct kwq *q = ft_running(test, NULL, FT_NOTHING, &item);

	ft_finish(test, q, &item);
	KUNIT_EXPECT_EQ(test, 0U, kt_state(q, "a"));
	KUNIT_EXPECT_EQ(test, 0ULL, KT_STAT(test, q, processing));
	kt_expect_empty(test, q);
}

static void dirty_key_is_ready_again(struct kunit *test)
{
	struct kwq_item item;
	struct kwq *q = ft_running(test, NULL, FT_ADDED, &item);

	ft_finish(test, q, &item);
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_READY, kt_state(q, "a"));
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, depth));
}

static void delayed_key_waits_for_its_deadline(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq_item item;
	struct kwq *q = ft_running(test, &c, FT_DELAYED, &item);

	kt_advance(c, 4 * MS);
	ft_finish(test, q, &item);
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_WAITING, kt_state(q, "a"));
	/* The deadline counts from the add, not from the finish. */
	kt_expect_ready_at(test, q, c, 6 * MS);
}

static void delayed_key_past_its_deadline_is_ready(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq_item item;
	struct kwq *q = ft_running(test, &c, FT_DELAYED, &item);

	kt_advance(c, 10 * MS);
	ft_finish(test, q, &item);
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_READY, kt_state(q, "a"));
	KUNIT_EXPECT_EQ(test, 0ULL, KT_STAT(test, q, waiting));
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
}

static void delayed_key_is_dropped_after_shutdown(struct kunit *test)
{
	struct kwq_item item;
	struct kwq *q = ft_running(test, NULL, FT_DELAYED, &item);

	KUNIT_EXPECT_EQ(test, 0, kwq_shutdown(q));
	ft_finish(test, q, &item);
	KUNIT_EXPECT_EQ(test, 0U, kt_state(q, "a"));
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, dropped_at_shutdown));
	/* Nothing ready nor processing: a drain is over at once. */
	KUNIT_EXPECT_EQ(test, 0, kwq_shutdown_drain(q));
}

static void dirty_key_is_ready_again_after_shutdown(struct kunit *test)
{
	struct kwq_item item;
	struct kwq *q = ft_running(test, NULL, FT_ADDED, &item);

	KUNIT_EXPECT_EQ(test, 0, kwq_shutdown(q));
	ft_finish(test, q, &item);
	/* client-go hands out what is queued until it is empty. */
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_READY, kt_state(q, "a"));
	KUNIT_EXPECT_EQ(test, 0ULL, KT_STAT(test, q, dropped_at_shutdown));
	kt_get_done(test, q, "a");
	KUNIT_EXPECT_EQ(test, 0, kwq_shutdown_drain(q));
}

/* The flags inspect shows for "a". */
static u32 ft_flags(struct kunit *test, struct kwq *q)
{
	struct kwq_key_info info;

	KUNIT_EXPECT_EQ(test, 0, kwq_inspect(q, "a", 1, &info));
	return info.flags;
}

/*
 * A dirty key that remembers a deadline, shut down and finished once the
 * deadline passed: ready (the dirty run), and the get that takes it is
 * the run the deadline asked for too. It runs once, nothing is dropped.
 */
static void dirty_key_past_its_deadline_runs_once_after_shutdown(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq_item item;
	struct kwq *q = ft_running(test, &c, FT_DELAYED_ADDED, &item);

	KUNIT_EXPECT_EQ(test, 0, kwq_shutdown(q));
	kt_advance(c, 10 * MS);
	ft_finish(test, q, &item);
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_READY, kt_state(q, "a"));
	item = kt_get(test, q, "a");
	KUNIT_EXPECT_EQ(test, 0U, ft_flags(test, q));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
	KUNIT_EXPECT_EQ(test, 0U, kt_state(q, "a"));
	KUNIT_EXPECT_EQ(test, 0ULL, KT_STAT(test, q, dropped_at_shutdown));
	KUNIT_EXPECT_EQ(test, 0, kwq_shutdown_drain(q));
}

/*
 * The same, finished and taken before the deadline: the take carries the
 * deadline as a delayed requeue, which its done drops (and counts), as
 * for any delayed requeue after shutdown. It runs once.
 */
static void dirty_key_before_its_deadline_runs_once_after_shutdown(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq_item item;
	struct kwq *q = ft_running(test, &c, FT_DELAYED_ADDED, &item);

	KUNIT_EXPECT_EQ(test, 0, kwq_shutdown(q));
	ft_finish(test, q, &item);
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_READY, kt_state(q, "a"));
	item = kt_get(test, q, "a");
	KUNIT_EXPECT_EQ(test, (u32)(KWQ_KEY_DELAYED | KWQ_KEY_DUE),
			ft_flags(test, q));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
	KUNIT_EXPECT_EQ(test, 0U, kt_state(q, "a"));
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, dropped_at_shutdown));
	KUNIT_EXPECT_EQ(test, 0ULL, KT_STAT(test, q, waiting));
}

/*
 * The holder of a key with a delayed requeue goes away: the key is ready
 * now (the run that was lost) and remembers the deadline, as a ready key
 * given add_after does; taken before it, it waits for it at its done: it
 * runs now and again at the deadline.
 */
static void released_delayed_key_runs_now_and_at_its_deadline(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = kt_create(test, NULL, &c);
	struct kwq_item item;
	int owner;

	kt_add(q, "a");
	KUNIT_ASSERT_EQ(test, 0, kwq_get(q, &owner, KWQ_GET_NONBLOCK, 0,
					 &item));
	kt_add_after(q, "a", 10 * MS);
	KUNIT_EXPECT_EQ(test, 1, kwq_release_owner(q, &owner));
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_READY, kt_state(q, "a"));
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_DUE, ft_flags(test, q));
	item = kt_get(test, q, "a");
	KUNIT_EXPECT_EQ(test, (u32)(KWQ_KEY_DELAYED | KWQ_KEY_DUE),
			ft_flags(test, q));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_WAITING, kt_state(q, "a"));
	kt_expect_ready_at(test, q, c, 10 * MS);
}

/* "a" with one failure counted, processing with nothing pending. */
static struct kwq_item ft_failed_once(struct kunit *test, struct kwq *q,
				      struct kt_clock *c)
{
	kt_advance(c, kt_rate_limited(test, q, "a"));
	return kt_get(test, q, "a");
}

static void failure_count_outlives_the_run(struct kunit *test)
{
	struct kt_clock *c;
	struct kwq *q = ft_create(test, NULL, &c);
	struct kwq_item item = ft_failed_once(test, q, c);

	ft_finish(test, q, &item);
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_IDLE, kt_state(q, "a"));
	KUNIT_EXPECT_EQ(test, 1, kt_requeues(q, "a"));
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, failure_records));
	kt_expect_empty(test, q);
}

static void oldest_failure_count_goes_past_the_bound(struct kunit *test)
{
	struct kwq_config cfg = { .max_failure_records = 1 };
	struct kt_clock *c;
	struct kwq *q = ft_create(test, &cfg, &c);
	struct kwq_item item;

	/* "b" is kept idle with its count... */
	kt_advance(c, kt_rate_limited(test, q, "b"));
	kt_get_done(test, q, "b");
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_IDLE, kt_state(q, "b"));
	/* ...until the run of "a" ends with a count to keep too. */
	item = ft_failed_once(test, q, c);
	ft_finish(test, q, &item);
	KUNIT_EXPECT_EQ(test, 0U, kt_state(q, "b"));
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_IDLE, kt_state(q, "a"));
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, failure_records_evicted));
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, failure_records));
}

static void dying_key_goes_to_the_dead_set(struct kunit *test)
{
	struct kwq_config cfg = { .max_retries = 1 };
	struct kt_clock *c;
	struct kwq *q = ft_create(test, &cfg, &c);
	struct kwq_item item = ft_failed_once(test, q, c);

	KUNIT_EXPECT_EQ(test, KWQ_DELAY_DEAD, kt_rate_limited(test, q, "a"));
	KUNIT_EXPECT_EQ(test, 0ULL, KT_STAT(test, q, dead));
	ft_finish(test, q, &item);
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_DEAD, kt_state(q, "a"));
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, dead));
	KUNIT_EXPECT_EQ(test, 0ULL, KT_STAT(test, q, processing));
	kt_expect_empty(test, q);
}

static struct kunit_case kwq_finish_cases[] = {
	KUNIT_CASE_PARAM(clean_key_is_forgotten, ft_finish_gen_params),
	KUNIT_CASE_PARAM(dirty_key_is_ready_again, ft_finish_gen_params),
	KUNIT_CASE_PARAM(delayed_key_waits_for_its_deadline,
			 ft_finish_gen_params),
	KUNIT_CASE_PARAM(delayed_key_past_its_deadline_is_ready,
			 ft_finish_gen_params),
	KUNIT_CASE_PARAM(delayed_key_is_dropped_after_shutdown,
			 ft_finish_gen_params),
	KUNIT_CASE_PARAM(dirty_key_is_ready_again_after_shutdown,
			 ft_finish_gen_params),
	KUNIT_CASE_PARAM(dirty_key_past_its_deadline_runs_once_after_shutdown,
			 ft_finish_gen_params),
	KUNIT_CASE_PARAM(dirty_key_before_its_deadline_runs_once_after_shutdown,
			 ft_finish_gen_params),
	KUNIT_CASE(released_delayed_key_runs_now_and_at_its_deadline),
	KUNIT_CASE_PARAM(failure_count_outlives_the_run, ft_finish_gen_params),
	KUNIT_CASE_PARAM(oldest_failure_count_goes_past_the_bound,
			 ft_finish_gen_params),
	KUNIT_CASE_PARAM(dying_key_goes_to_the_dead_set, ft_finish_gen_params),
	{}
};

static struct kunit_suite kwq_finish_suite = {
	.name = "kwq_finish",
	.test_cases = kwq_finish_cases,
};

kunit_test_suite(kwq_finish_suite);
