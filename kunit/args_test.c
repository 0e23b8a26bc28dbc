// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit cases for argument checks: every call that takes a key refuses
 * each kind of bad key (and a NULL queue) with -EINVAL before it looks at
 * the queue, in its single-key and its batch form, and changes nothing;
 * the calls on the whole queue refuse a NULL queue the same way.
 */

#include <kunit/test.h>
#include <linux/kwq.h>
#include <linux/string.h>

#include "kwq_internal.h"
#include "kwq_test.h"

/* A call of @key, @len on @q, as one of the exported calls makes it. */
struct at_call {
	const char *name;
	long (*call)(struct kwq *q, const void *key, size_t len);
};

static long at_add(struct kwq *q, const void *key, size_t len)
{
	return kwq_add(q, key, len);
}

static long at_add_after(struct kwq *q, const void *key, size_t len)
{
	return kwq_add_after(q, key, len, NSEC_PER_MSEC);
}

static long at_add_opts(struct kwq *q, const void *key, size_t len)
{
	struct kwq_add_opts o = { .priority = 1 };

	return kwq_add_opts(q, key, len, &o);
}

static long at_add_rate_limited(struct kwq *q, const void *key, size_t len)
{
	u64 delay;

	return kwq_add_rate_limited(q, key, len, NULL, &delay);
}

static long at_forget(struct kwq *q, const void *key, size_t len)
{
	return kwq_forget(q, key, len);
}

static long at_num_requeues(struct kwq *q, const void *key, size_t len)
{
	return kwq_num_requeues(q, key, len);
}

static long at_remove(struct kwq *q, const void *key, size_t len)
{
	return kwq_remove(q, key, len);
}

static long at_revive(struct kwq *q, const void *key, size_t len)
{
	return kwq_revive(q, key, len);
}

static long at_purge(struct kwq *q, const void *key, size_t len)
{
	return kwq_purge(q, key, len);
}

static long at_inspect(struct kwq *q, const void *key, size_t len)
{
	struct kwq_key_info info;

	return kwq_inspect(q, key, len, &info);
}

static long at_done_key(struct kwq *q, const void *key, size_t len)
{
	return kwq_done_key(q, key, len, NULL);
}

static long at_touch_key(struct kwq *q, const void *key, size_t len)
{
	return kwq_touch_key(q, key, len, NULL, KWQ_NO_TIMEOUT);
}

/* The batch forms: the bad key second, after a good one. */
#define AT_KEYS(k, l)	{ { .key = "a", .len = 1 }, { .key = (k), .len = (l) } }

static long at_add_batch(struct kwq *q, const void *key, size_t len)
{
	struct kwq_key keys[] = AT_KEYS(key, len);
	struct kwq_batch_opts o = {};

	return kwq_add_batch(q, keys, ARRAY_SIZE(keys), &o, NULL);
}

static long at_done_keys(struct kwq *q, const void *key, size_t len)
{
	struct kwq_key keys[] = AT_KEYS(key, len);
	unsigned int done;

	return kwq_done_keys(q, keys, ARRAY_SIZE(keys), NULL, &done);
}

static long at_done_keys_take(struct kwq *q, const void *key, size_t len)
{
	struct kwq_key keys[] = AT_KEYS(key, len);
	struct kwq_item item;
	unsigned int done;

	return kwq_done_keys_take(q, keys, ARRAY_SIZE(keys), NULL, &done,
				  NULL, &item, 1, NULL);
}

static const struct at_call at_calls[] = {
	{ "kwq_add", at_add },
	{ "kwq_add_after", at_add_after },
	{ "kwq_add_opts", at_add_opts },
	{ "kwq_add_rate_limited", at_add_rate_limited },
	{ "kwq_forget", at_forget },
	{ "kwq_num_requeues", at_num_requeues },
	{ "kwq_remove", at_remove },
	{ "kwq_revive", at_revive },
	{ "kwq_purge", at_purge },
	{ "kwq_inspect", at_inspect },
	{ "kwq_done_key", at_done_key },
	{ "kwq_touch_key", at_touch_key },
	{ "kwq_add_batch", at_add_batch },
	{ "kwq_done_keys", at_done_keys },
	{ "kwq_done_keys_take", at_done_keys_take },
};

static void at_call_desc(const struct at_call *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(at_call, at_calls, at_call_desc);

/* The queue as the cases leave it when nothing changed: "a" processing. */
static void at_expect_unchanged(struct kunit *test, struct kwq *q)
{
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_PROCESSING, kt_state(q, "a"));
	KUNIT_EXPECT_EQ(test, 0L, kwq_len(q));
	KUNIT_EXPECT_EQ(test, 1ULL, KT_STAT(test, q, adds_total));
	KUNIT_EXPECT_EQ(test, 0ULL, KT_STAT(test, q, retries_total));
}

static void each_key_call_refuses_each_bad_key(struct kunit *test)
{
	const struct at_call *c = test->param_value;
	struct kwq *q = kt_create(test, NULL, NULL);
	char *big = kunit_kzalloc(test, KWQ_KEY_MAX + 1, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, big);
	kt_add(q, "a");
	kt_get(test, q, "a");
	KUNIT_EXPECT_EQ_MSG(test, -EINVAL, c->call(NULL, "b", 1),
			    "%s: NULL queue", c->name);
	KUNIT_EXPECT_EQ_MSG(test, -EINVAL, c->call(q, NULL, 1),
			    "%s: NULL key", c->name);
	KUNIT_EXPECT_EQ_MSG(test, -EINVAL, c->call(q, "b", 0),
			    "%s: empty key", c->name);
	KUNIT_EXPECT_EQ_MSG(test, -EINVAL, c->call(q, big, KWQ_KEY_MAX + 1),
			    "%s: key too long", c->name);
	at_expect_unchanged(test, q);
}

static void queue_calls_refuse_a_null_queue(struct kunit *test)
{
	struct kwq *q = kt_create(test, NULL, NULL);
	struct kwq_item item = {};
	unsigned int done = 1;
	int owner;

	kt_add(q, "a");
	item = kt_get(test, q, "a");
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_revive_all(NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_purge_all(NULL));
	KUNIT_EXPECT_TRUE(test, kwq_shutting_down(NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_touch(NULL, &item, KWQ_NO_TIMEOUT));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_touch(q, NULL, KWQ_NO_TIMEOUT));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_done_batch(NULL, &item, 1, &done));
	KUNIT_EXPECT_EQ(test, 0U, done);
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_done_batch(q, NULL, 1, &done));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			kwq_done_get(NULL, NULL, KWQ_GET_NONBLOCK, 0, &item));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			kwq_done_get(q, NULL, KWQ_GET_NONBLOCK, 0, NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			kwq_done_get(q, NULL, 0x80, 0, &item));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			kwq_get_batch(NULL, NULL, KWQ_GET_NONBLOCK, 0, &item,
				      1, 1));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_release_owner(q, NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL,
			kwq_done_keys_take(q, NULL, 0, NULL, &done, NULL,
					   NULL, 1, NULL));
	KUNIT_EXPECT_EQ(test, 0, kwq_release_owner(q, &owner));
	at_expect_unchanged(test, q);
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
}

static struct kunit_case kwq_args_cases[] = {
	KUNIT_CASE_PARAM(each_key_call_refuses_each_bad_key,
			 at_call_gen_params),
	KUNIT_CASE(queue_calls_refuse_a_null_queue),
	{}
};

static struct kunit_suite kwq_args_suite = {
	.name = "kwq_args",
	.test_cases = kwq_args_cases,
};

kunit_test_suite(kwq_args_suite);
