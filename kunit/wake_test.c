// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit cases for who gets woken: getters wait exclusively, so a key
 * made ready wakes one of them, n keys wake n, and shutdown wakes all;
 * pollers (non-exclusive) see every change. Counted with wait entries
 * of the test's own on the queue's getter wait queue, which stay queued
 * and count each call, so the numbers are exact, not timing dependent.
 */

#include <kunit/test.h>
#include <linux/kwq.h>
#include <linux/string.h>
#include <linux/wait.h>

#include "kwq_internal.h"
#include "kwq_test.h"
#include "queue.h"

#define MS		NSEC_PER_MSEC
#define KW_WAITERS	4

struct kw_waiter {
	struct wait_queue_entry wq;
	unsigned int calls;
};

/* Count the wake-up and report it as taken (ends an exclusive wake). */
static int kw_wake(struct wait_queue_entry *wq, unsigned int mode, int sync,
		   void *key)
{
	container_of(wq, struct kw_waiter, wq)->calls++;
	return 1;
}

struct kw_fixture {
	struct kwq *q;
	struct kt_clock *c;
	struct kw_waiter getters[KW_WAITERS];
	struct kw_waiter poller;
};

static void kw_remove(void *data)
{
	struct kw_fixture *f = data;
	unsigned int i;

	for (i = 0; i < KW_WAITERS; i++)
		remove_wait_queue(&f->q->get_wq, &f->getters[i].wq);
	remove_wait_queue(&f->q->get_wq, &f->poller.wq);
}

static struct kw_fixture *kw_setup_cfg(struct kunit *test,
				       struct kwq_config *cfg)
{
	struct kw_fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, f);
	f->q = kt_create(test, cfg, &f->c);
	for (i = 0; i < KW_WAITERS; i++) {
		init_waitqueue_func_entry(&f->getters[i].wq, kw_wake);
		add_wait_queue_exclusive(&f->q->get_wq, &f->getters[i].wq);
	}
	init_waitqueue_func_entry(&f->poller.wq, kw_wake);
	add_wait_queue(&f->q->get_wq, &f->poller.wq);
	/* Runs before the queue's own teardown (actions unwind in reverse). */
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, kw_remove, f));
	return f;
}

static struct kw_fixture *kw_setup(struct kunit *test)
{
	return kw_setup_cfg(test, NULL);
}

static unsigned int kw_getter_calls(const struct kw_fixture *f)
{
	unsigned int i, n = 0;

	for (i = 0; i < KW_WAITERS; i++)
		n += f->getters[i].calls;
	return n;
}

static void add_wakes_one_getter(struct kunit *test)
{
	struct kw_fixture *f = kw_setup(test);

	kt_add(f->q, "a");
	KUNIT_EXPECT_EQ(test, 1U, kw_getter_calls(f));
	KUNIT_EXPECT_EQ(test, 1U, f->poller.calls);
}

static void add_that_changes_nothing_wakes_nobody(struct kunit *test)
{
	struct kw_fixture *f = kw_setup(test);

	kt_add(f->q, "a");
	kt_add(f->q, "a");
	kt_add_after(f->q, "b", 10 * MS);
	KUNIT_EXPECT_EQ(test, 1U, kw_getter_calls(f));
	KUNIT_EXPECT_EQ(test, 1U, f->poller.calls);
}

static void expiry_of_n_keys_wakes_n_getters(struct kunit *test)
{
	struct kw_fixture *f = kw_setup(test);

	kt_add_after(f->q, "a", 10 * MS);
	kt_add_after(f->q, "b", 10 * MS);
	kt_add_after(f->q, "c", 10 * MS);
	KUNIT_EXPECT_EQ(test, 0U, kw_getter_calls(f));
	kt_advance(f->c, 10 * MS);
	KUNIT_EXPECT_EQ(test, 3U, kw_getter_calls(f));
	KUNIT_EXPECT_EQ(test, 1U, f->poller.calls);
}

static void release_owner_of_n_keys_wakes_n_getters(struct kunit *test)
{
	struct kw_fixture *f = kw_setup(test);
	struct kwq_item a, b;
	int owner;

	kt_add(f->q, "a");
	kt_add(f->q, "b");
	KUNIT_ASSERT_EQ(test, 0, kwq_get(f->q, &owner, KWQ_GET_NONBLOCK, 0, &a));
	KUNIT_ASSERT_EQ(test, 0, kwq_get(f->q, &owner, KWQ_GET_NONBLOCK, 0, &b));
	KUNIT_EXPECT_EQ(test, 2U, kw_getter_calls(f));
	KUNIT_EXPECT_EQ(test, 2, kwq_release_owner(f->q, &owner));
	KUNIT_EXPECT_EQ(test, 4U, kw_getter_calls(f));
}

static void done_of_dirty_key_wakes_one_getter(struct kunit *test)
{
	struct kw_fixture *f = kw_setup(test);
	struct kwq_item a;

	kt_add(f->q, "a");
	a = kt_get(test, f->q, "a");
	kt_add(f->q, "a");
	KUNIT_EXPECT_EQ(test, 1U, kw_getter_calls(f));
	KUNIT_EXPECT_EQ(test, 0, kwq_done(f->q, &a));
	KUNIT_EXPECT_EQ(test, 2U, kw_getter_calls(f));
}

static void shutdown_wakes_every_getter(struct kunit *test)
{
	struct kw_fixture *f = kw_setup(test);
	unsigned int i;

	KUNIT_EXPECT_EQ(test, 0, kwq_shutdown(f->q));
	for (i = 0; i < KW_WAITERS; i++)
		KUNIT_EXPECT_EQ(test, 1U, f->getters[i].calls);
	KUNIT_EXPECT_EQ(test, 1U, f->poller.calls);
}

/*
 * One way to make key "a" ready: @prepare puts it where @ready's call
 * makes it ready (NULL: the key is new); @self_wakes, the call takes the
 * key itself (a done + get), so nobody else is woken. @item is the lease
 * @prepare leaves for @ready, if any.
 */
struct kw_maker {
	const char *name;
	void (*prepare)(struct kunit *test, struct kw_fixture *f,
			struct kwq_item *item);
	int (*ready)(struct kw_fixture *f, struct kwq_item *item);
	bool self_wakes;
};

static int kw_key_add_opts(struct kw_fixture *f, struct kwq_item *item)
{
	struct kwq_add_opts o = { .priority = 3 };

	return kwq_add_opts(f->q, "a", 1, &o);
}

static int kw_key_add_now(struct kw_fixture *f, struct kwq_item *item)
{
	return kt_add_after(f->q, "a", 0);
}

static int kw_key_add(struct kw_fixture *f, struct kwq_item *item)
{
	return kt_add(f->q, "a");
}

static int kw_key_add_batch(struct kw_fixture *f, struct kwq_item *item)
{
	struct kwq_key k = { .key = "a", .len = 1 };
	struct kwq_batch_opts o = {};
	unsigned int done = 0;

	return kwq_add_batch(f->q, &k, 1, &o, &done) ?: done == 1 ? 0 : -EPROTO;
}

static void kw_waiting(struct kunit *test, struct kw_fixture *f,
		       struct kwq_item *item)
{
	KUNIT_ASSERT_EQ(test, 0, kt_add_after(f->q, "a", 10 * MS));
}

/* "a" dead (max_retries 1: its second failure is its last). */
static void kw_dead(struct kunit *test, struct kw_fixture *f,
		    struct kwq_item *item)
{
	int i;

	for (i = 0; i < 2; i++) {
		kt_add(f->q, "a");
		kt_fail(test, f->q, "a");
		kt_advance(f->c, 1000 * MS);
	}
	KUNIT_ASSERT_EQ(test, 1ULL, KT_STAT(test, f->q, dead));
}

static int kw_revive(struct kw_fixture *f, struct kwq_item *item)
{
	return kwq_revive(f->q, "a", 1);
}

static int kw_revive_all(struct kw_fixture *f, struct kwq_item *item)
{
	return kwq_revive_all(f->q) == 1 ? 0 : -EPROTO;
}

/* "a" processing and added again: its done makes it ready. */
static void kw_dirty(struct kunit *test, struct kw_fixture *f,
		     struct kwq_item *item)
{
	kt_add(f->q, "a");
	*item = kt_get(test, f->q, "a");
	kt_add(f->q, "a");
}

static int kw_done(struct kw_fixture *f, struct kwq_item *item)
{
	return kwq_done(f->q, item);
}

static int kw_done_key(struct kw_fixture *f, struct kwq_item *item)
{
	return kwq_done_key(f->q, "a", 1, NULL);
}

static int kw_done_batch(struct kw_fixture *f, struct kwq_item *item)
{
	unsigned int done = 0;

	return kwq_done_batch(f->q, item, 1, &done) ?: done == 1 ? 0 : -EPROTO;
}

static int kw_done_keys(struct kw_fixture *f, struct kwq_item *item)
{
	struct kwq_key k = { .key = "a", .len = 1 };
	unsigned int done = 0;

	return kwq_done_keys(f->q, &k, 1, NULL, &done) ?:
	       done == 1 ? 0 : -EPROTO;
}

/* The done + gets take "a" again themselves. */
static int kw_done_get(struct kw_fixture *f, struct kwq_item *item)
{
	return kwq_done_get(f->q, NULL, KWQ_GET_NONBLOCK, 0, item);
}

static int kw_done_keys_take(struct kw_fixture *f, struct kwq_item *item)
{
	struct kwq_key k = { .key = "a", .len = 1 };
	unsigned int done = 0;
	int ret;

	ret = kwq_done_keys_take(f->q, &k, 1, NULL, &done, NULL, item, 1,
				 NULL);
	return ret == 1 && done == 1 ? 0 : -EPROTO;
}

/* "a" processing: giving its lease back makes it ready. */
static void kw_taken(struct kunit *test, struct kw_fixture *f,
		     struct kwq_item *item)
{
	kt_add(f->q, "a");
	*item = kt_get(test, f->q, "a");
}

static int kw_unget(struct kw_fixture *f, struct kwq_item *item)
{
	kwq_unget(f->q, item);
	return 0;
}

/* "a" processing for an owner: releasing the owner makes it ready. */
static void kw_owned(struct kunit *test, struct kw_fixture *f,
		     struct kwq_item *item)
{
	kt_add(f->q, "a");
	KUNIT_ASSERT_EQ(test, 0, kwq_get(f->q, f, KWQ_GET_NONBLOCK, 0, item));
}

static int kw_release_owner(struct kw_fixture *f, struct kwq_item *item)
{
	return kwq_release_owner(f->q, f) == 1 ? 0 : -EPROTO;
}

static int kw_expire(struct kw_fixture *f, struct kwq_item *item)
{
	kt_advance(f->c, 10 * MS);
	return 0;
}

static const struct kw_maker kw_makers[] = {
	{ "kwq_add", NULL, kw_key_add },
	{ "kwq_add_opts", NULL, kw_key_add_opts },
	{ "kwq_add_after(0)", NULL, kw_key_add_now },
	{ "kwq_add_batch", NULL, kw_key_add_batch },
	{ "kwq_add of a waiting key", kw_waiting, kw_key_add },
	{ "kwq_add_batch of a waiting key", kw_waiting, kw_key_add_batch },
	{ "expiry", kw_waiting, kw_expire },
	{ "kwq_add of a dead key", kw_dead, kw_key_add },
	{ "kwq_revive", kw_dead, kw_revive },
	{ "kwq_revive_all", kw_dead, kw_revive_all },
	{ "kwq_done", kw_dirty, kw_done },
	{ "kwq_done_key", kw_dirty, kw_done_key },
	{ "kwq_done_batch", kw_dirty, kw_done_batch },
	{ "kwq_done_keys", kw_dirty, kw_done_keys },
	{ "kwq_done_get", kw_dirty, kw_done_get, true },
	{ "kwq_done_keys_take", kw_dirty, kw_done_keys_take, true },
	{ "kwq_unget", kw_taken, kw_unget },
	{ "kwq_release_owner", kw_owned, kw_release_owner },
};

static void kw_maker_desc(const struct kw_maker *m, char *desc)
{
	strscpy(desc, m->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(kw_maker, kw_makers, kw_maker_desc);

static void each_way_to_ready_wakes_one_getter(struct kunit *test)
{
	const struct kw_maker *m = test->param_value;
	struct kwq_config cfg = { .max_retries = 1 };
	struct kw_fixture *f = kw_setup_cfg(test, &cfg);
	struct kwq_item item = {};
	unsigned int getters, poller;

	if (m->prepare)
		m->prepare(test, f, &item);
	getters = kw_getter_calls(f);
	poller = f->poller.calls;
	KUNIT_ASSERT_EQ_MSG(test, 0, m->ready(f, &item), "%s", m->name);
	if (m->self_wakes) {
		KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_PROCESSING,
				kt_state(f->q, "a"));
		KUNIT_EXPECT_EQ(test, getters, kw_getter_calls(f));
		return;
	}
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(f->q));
	KUNIT_EXPECT_EQ(test, getters + 1, kw_getter_calls(f));
	KUNIT_EXPECT_EQ(test, poller + 1, f->poller.calls);
}

static struct kunit_case kwq_wake_cases[] = {
	KUNIT_CASE(add_wakes_one_getter),
	KUNIT_CASE(add_that_changes_nothing_wakes_nobody),
	KUNIT_CASE(expiry_of_n_keys_wakes_n_getters),
	KUNIT_CASE(release_owner_of_n_keys_wakes_n_getters),
	KUNIT_CASE(done_of_dirty_key_wakes_one_getter),
	KUNIT_CASE(shutdown_wakes_every_getter),
	KUNIT_CASE_PARAM(each_way_to_ready_wakes_one_getter,
			 kw_maker_gen_params),
	{}
};

static struct kunit_suite kwq_wake_suite = {
	.name = "kwq_wake",
	.test_cases = kwq_wake_cases,
};

kunit_test_suite(kwq_wake_suite);
