// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit cases for a queue after kwq_shutdown(): every add is refused
 * whatever state its key is in and changes nothing; the calls that only
 * take away (remove, forget, purge) still work and can end a drain; the
 * ones that would queue a key (revive) are refused; each of the others
 * returns what it documents. On a fake clock.
 */

#include <kunit/test.h>
#include <linux/kwq.h>
#include <linux/string.h>

#include "kwq_internal.h"
#include "kwq_test.h"

KUNIT_ARRAY_PARAM(kt_add, kt_adds, kt_add_desc);

static void every_add_is_refused_whatever_its_key(struct kunit *test)
{
	static const char * const keys[] = { "r", "p", "w", "i", "d", "new" };
	const struct kt_add *a = test->param_value;
	struct kwq_stats *before, *after;
	struct kwq_item p;
	struct kwq *q = kt_every_state(test, NULL, &p);
	unsigned int i;

	before = kunit_kzalloc(test, 2 * sizeof(*before), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, before);
	after = before + 1;
	KUNIT_ASSERT_EQ(test, 0, kwq_shutdown(q));
	KUNIT_ASSERT_EQ(test, 0, kwq_get_stats(q, before));
	for (i = 0; i < ARRAY_SIZE(keys); i++)
		KUNIT_EXPECT_EQ_MSG(test, -ESHUTDOWN, a->add(q, keys[i]),
				    "%s of %s", a->name, keys[i]);
	KUNIT_ASSERT_EQ(test, 0, kwq_get_stats(q, after));
	KUNIT_EXPECT_EQ(test, 1ULL, after->len);
	KUNIT_EXPECT_EQ(test, 1ULL, after->processing);
	KUNIT_EXPECT_EQ(test, 1ULL, after->dead);
	KUNIT_EXPECT_EQ(test, before->adds_total, after->adds_total);
	KUNIT_EXPECT_EQ(test, before->retries_total, after->retries_total);
	KUNIT_EXPECT_EQ(test, before->failure_records, after->failure_records);
	KUNIT_EXPECT_EQ(test, 0U, kt_state(q, "w"));
	KUNIT_EXPECT_EQ(test, 0U, kt_state(q, "new"));
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_PROCESSING, kt_state(q, "p"));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &p));
	kt_get_done(test, q, "r");
	KUNIT_EXPECT_EQ(test, 0, kwq_shutdown_drain(q));
}

/* A call on a shut down queue that holds nothing, and what it returns. */
struct st_call {
	const char *name;
	long (*call)(struct kwq *q);
	long ret;
};

static long st_forget(struct kwq *q)
{
	return kwq_forget(q, "a", 1);
}

static long st_remove(struct kwq *q)
{
	return kwq_remove(q, "a", 1);
}

static long st_revive(struct kwq *q)
{
	return kwq_revive(q, "a", 1);
}

static long st_purge(struct kwq *q)
{
	return kwq_purge(q, "a", 1);
}

static long st_num_requeues(struct kwq *q)
{
	return kwq_num_requeues(q, "a", 1);
}

static long st_done_key(struct kwq *q)
{
	return kwq_done_key(q, "a", 1, NULL);
}

static long st_touch_key(struct kwq *q)
{
	return kwq_touch_key(q, "a", 1, NULL, KWQ_NO_TIMEOUT);
}

static long st_release_owner(struct kwq *q)
{
	return kwq_release_owner(q, q);
}

/* Blocking gets: a wait that should not happen ends in -ETIMEDOUT. */
#define ST_WAIT		(5 * NSEC_PER_SEC)

static long st_get(struct kwq *q)
{
	struct kwq_item item;

	return kwq_get(q, NULL, 0, ST_WAIT, &item);
}

static long st_done_get(struct kwq *q)
{
	struct kwq_item item = {};

	return kwq_done_get(q, NULL, 0, ST_WAIT, &item);
}

static long st_done_keys_take(struct kwq *q)
{
	struct kwq_item item;
	unsigned int done;

	return kwq_done_keys_take(q, NULL, 0, NULL, &done, NULL, &item, 1,
				  NULL);
}

static long st_shutdown(struct kwq *q)
{
	return kwq_shutdown(q);
}

static const struct st_call st_calls[] = {
	{ "kwq_forget", st_forget, 0 },
	{ "kwq_remove", st_remove, -ENOENT },
	{ "kwq_revive", st_revive, -ENOENT },
	{ "kwq_purge", st_purge, -ENOENT },
	{ "kwq_revive_all", kwq_revive_all, 0 },
	{ "kwq_purge_all", kwq_purge_all, 0 },
	{ "kwq_num_requeues", st_num_requeues, 0 },
	{ "kwq_done_key", st_done_key, -ENOENT },
	{ "kwq_touch_key", st_touch_key, -ENOENT },
	{ "kwq_release_owner", st_release_owner, 0 },
	{ "kwq_get", st_get, -ESHUTDOWN },
	{ "kwq_done_get", st_done_get, -ESHUTDOWN },
	{ "kwq_done_keys_take", st_done_keys_take, -ESHUTDOWN },
	{ "kwq_len", kwq_len, 0 },
	{ "kwq_shutdown", st_shutdown, 0 },
};

static void st_call_desc(const struct st_call *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(st_call, st_calls, st_call_desc);

static void each_call_on_a_drained_queue_returns_at_once(struct kunit *test)
{
	const struct st_call *c = test->param_value;
	struct kwq *q = kt_create(test, NULL, NULL);

	KUNIT_ASSERT_EQ(test, 0, kwq_shutdown(q));
	KUNIT_EXPECT_EQ_MSG(test, c->ret, c->call(q), "%s", c->name);
	KUNIT_EXPECT_TRUE(test, kwq_shutting_down(q));
	KUNIT_EXPECT_EQ(test, 0, kwq_shutdown_drain(q));
}

/*
 * The cases that free keys run on a kernel queue, which keeps freed nodes
 * for its next keys, and on one charged to its creator, which gives them
 * back to the slab once it drops its lock.
 */
static const u32 st_flags[] = { 0, KWQ_CONFIG_CHARGE_CALLER };

static void st_flags_desc(const u32 *flags, char *desc)
{
	strscpy(desc, *flags ? "charged queue" : "kernel queue",
		KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(st_flags, st_flags, st_flags_desc);

static void removing_the_last_ready_key_ends_the_drain(struct kunit *test)
{
	struct kwq_config cfg = { .flags = *(const u32 *)test->param_value };
	struct kwq *q = kt_create(test, &cfg, NULL);

	kt_add(q, "a");
	KUNIT_ASSERT_EQ(test, 0, kwq_shutdown(q));
	KUNIT_EXPECT_EQ(test, 0, kt_remove(q, "a"));
	KUNIT_EXPECT_EQ(test, 0U, kt_state(q, "a"));
	KUNIT_EXPECT_EQ(test, 0, kwq_shutdown_drain(q));
}

static void failure_count_can_be_forgotten(struct kunit *test)
{
	struct kwq_config cfg = { .flags = *(const u32 *)test->param_value };
	struct kwq_item p;
	struct kwq *q = kt_every_state(test, &cfg, &p);

	KUNIT_ASSERT_EQ(test, 0, kwq_shutdown(q));
	KUNIT_EXPECT_EQ(test, 0, kwq_forget(q, "i", 1));
	KUNIT_EXPECT_EQ(test, 0U, kt_state(q, "i"));
	KUNIT_EXPECT_EQ(test, 0, kt_requeues(q, "i"));
	/* A dead key's count stays with it until it is purged. */
	KUNIT_EXPECT_EQ(test, 0, kwq_forget(q, "d", 1));
	KUNIT_EXPECT_EQ(test, 2, kt_requeues(q, "d"));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &p));
}

static void dead_key_can_be_purged_not_revived(struct kunit *test)
{
	struct kwq_config cfg = { .flags = *(const u32 *)test->param_value };
	struct kwq_item p;
	struct kwq *q = kt_every_state(test, &cfg, &p);

	KUNIT_ASSERT_EQ(test, 0, kwq_shutdown(q));
	KUNIT_EXPECT_EQ(test, -ESHUTDOWN, kwq_revive(q, "d", 1));
	KUNIT_EXPECT_EQ(test, -ESHUTDOWN, kwq_revive_all(q));
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_DEAD, kt_state(q, "d"));
	KUNIT_EXPECT_EQ(test, 1L, kwq_purge_all(q));
	KUNIT_EXPECT_EQ(test, 0U, kt_state(q, "d"));
	KUNIT_EXPECT_EQ(test, 0ULL, KT_STAT(test, q, dead));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &p));
}

static struct kunit_case kwq_shutdown_cases[] = {
	KUNIT_CASE_PARAM(every_add_is_refused_whatever_its_key,
			 kt_add_gen_params),
	KUNIT_CASE_PARAM(each_call_on_a_drained_queue_returns_at_once,
			 st_call_gen_params),
	KUNIT_CASE_PARAM(removing_the_last_ready_key_ends_the_drain,
			 st_flags_gen_params),
	KUNIT_CASE_PARAM(failure_count_can_be_forgotten, st_flags_gen_params),
	KUNIT_CASE_PARAM(dead_key_can_be_purged_not_revived,
			 st_flags_gen_params),
	{}
};

static struct kunit_suite kwq_shutdown_suite = {
	.name = "kwq_shutdown",
	.test_cases = kwq_shutdown_cases,
};

kunit_test_suite(kwq_shutdown_suite);
