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
#include <linux/wait.h>

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

static struct kw_fixture *kw_setup(struct kunit *test)
{
	struct kw_fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, f);
	f->q = kt_create(test, NULL, &f->c);
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

static struct kunit_case kwq_wake_cases[] = {
	KUNIT_CASE(add_wakes_one_getter),
	KUNIT_CASE(add_that_changes_nothing_wakes_nobody),
	KUNIT_CASE(expiry_of_n_keys_wakes_n_getters),
	KUNIT_CASE(release_owner_of_n_keys_wakes_n_getters),
	KUNIT_CASE(done_of_dirty_key_wakes_one_getter),
	KUNIT_CASE(shutdown_wakes_every_getter),
	{}
};

static struct kunit_suite kwq_wake_suite = {
	.name = "kwq_wake",
	.test_cases = kwq_wake_cases,
};

kunit_test_suite(kwq_wake_suite);
