// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit cases for the separation of kernel and /dev/kwq queue names:
 * queues made for /dev/kwq (kwq_create_anon(), what dev.c calls) never
 * enter the registry of kernel queues, so they take no kernel name and
 * kwq_find() never returns one; kwq_publish() checks its arguments and
 * refuses what it cannot publish; kwq_destroy() unpublishes; budgets
 * charge every parent and take back partial charges; an abortable get
 * ends with -EIDRM once told to. What a process sees through /dev/kwq
 * (IPC namespaces, name clashes with published queues, EIDRM on attached
 * files) is userspace/tests/namespace_test.c.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/kwq.h>
#include <linux/string.h>

#include "kwq_internal.h"
#include "kwq_test.h"

static void kn_destroy_action(void *q)
{
	kwq_destroy(q);
}

/* An anonymous queue, destroyed when the case ends. */
static struct kwq *kn_anon(struct kunit *test, const char *name,
			   struct kwq_budget *budget)
{
	struct kwq *q = kwq_create_anon(name, NULL, budget);

	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(q), "kwq_create_anon: %ld",
			       PTR_ERR(q));
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   kn_destroy_action,
							   q));
	return q;
}

static void anon_queue_is_never_found(struct kunit *test)
{
	struct kwq *a = kn_anon(test, "kt-ns-anon", NULL);
	struct kwq *b = kn_anon(test, "kt-ns-anon", NULL);

	/* Names of anonymous queues are their creator's business. */
	KUNIT_EXPECT_PTR_NE(test, a, b);
	KUNIT_EXPECT_STREQ(test, "kt-ns-anon", kwq_name(a));
	KUNIT_EXPECT_PTR_EQ(test, ERR_PTR(-ENOENT), kwq_find("kt-ns-anon"));
	KUNIT_EXPECT_EQ(test, 0, kt_add(a, "user-key"));
	KUNIT_EXPECT_PTR_EQ(test, ERR_PTR(-ENOENT), kwq_find("kt-ns-anon"));
}

/*
 * A user took a name (through /dev/kwq) before a module wants it: the
 * module gets its queue, and kwq_find() returns the module's, never the
 * user's, before and after the module's queue is gone.
 */
static void kernel_queue_gets_a_name_a_user_took(struct kunit *test)
{
	struct kwq *user = kn_anon(test, "kt-ns-squat", NULL);
	struct kwq *k, *f;

	KUNIT_ASSERT_EQ(test, 0, kt_add(user, "user-key"));
	k = kwq_create("kt-ns-squat", NULL);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(k), "kwq_create: %ld", PTR_ERR(k));
	f = kwq_find("kt-ns-squat");
	KUNIT_EXPECT_PTR_EQ(test, k, f);
	if (!IS_ERR(f)) {
		/* The module's queue, empty: not the user's with its key. */
		KUNIT_EXPECT_EQ(test, 0L, kwq_len(f));
		kwq_put(f);
	}
	/* A second kernel queue of the name is still refused. */
	KUNIT_EXPECT_PTR_EQ(test, ERR_PTR(-EEXIST),
			    kwq_create("kt-ns-squat", NULL));
	kwq_destroy(k);
	KUNIT_EXPECT_PTR_EQ(test, ERR_PTR(-ENOENT), kwq_find("kt-ns-squat"));
	/* The user's queue is untouched. */
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(user));
	KUNIT_EXPECT_FALSE(test, kwq_shutting_down(user));
}

static void publish_checks_its_arguments(struct kunit *test)
{
	struct kwq_publish_opts o = {
		.uid = GLOBAL_ROOT_UID,
		.gid = GLOBAL_ROOT_GID,
		.mode = 0600,
	};
	struct kwq *q = kt_create(test, NULL, NULL);
	struct kwq *anon = kn_anon(test, "kt-ns-anon-pub", NULL);
	struct kt_clock *c;
	struct kwq *fake = kt_create(test, NULL, &c);

	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_publish(NULL, &o));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_publish(q, NULL));
	o.mode = 01000;
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_publish(q, &o));
	o.mode = 0600;
	o.uid = INVALID_UID;
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_publish(q, &o));
	o.uid = GLOBAL_ROOT_UID;
	o.gid = INVALID_GID;
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_publish(q, &o));
	o.gid = GLOBAL_ROOT_GID;
	/* Not a kernel queue; a clock that lives in its module. */
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_publish(anon, &o));
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_publish(fake, &o));

	KUNIT_EXPECT_EQ(test, 0, kwq_publish(q, &o));
	KUNIT_EXPECT_EQ(test, -EBUSY, kwq_publish(q, &o));
	kwq_unpublish(q);
	kwq_unpublish(q);
	kwq_unpublish(NULL);
	/* Unpublished, it may be published again; mode 0 is valid. */
	o.mode = 0;
	KUNIT_EXPECT_EQ(test, 0, kwq_publish(q, &o));
	kwq_unpublish(q);
	/* The queue itself is not affected. */
	KUNIT_EXPECT_FALSE(test, kwq_shutting_down(q));
	KUNIT_EXPECT_EQ(test, 0, kt_add(q, "a"));
}

static void destroy_unpublishes(struct kunit *test)
{
	struct kwq_publish_opts o = {
		.uid = GLOBAL_ROOT_UID,
		.gid = GLOBAL_ROOT_GID,
		.mode = 0600,
	};
	struct kwq *q = kwq_create("kt-ns-pub", NULL);
	struct kwq *f;

	KUNIT_ASSERT_FALSE(test, IS_ERR(q));
	KUNIT_EXPECT_EQ(test, 0, kwq_publish(q, &o));
	f = kwq_find("kt-ns-pub");
	KUNIT_ASSERT_PTR_EQ(test, q, f);
	kwq_destroy(q);
	/* Destroyed (still referenced): it cannot be published again. */
	KUNIT_EXPECT_EQ(test, -EINVAL, kwq_publish(f, &o));
	kwq_put(f);
	/* The name is free in the IPC namespace again: no -EEXIST. */
	q = kwq_create("kt-ns-pub", NULL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(q));
	KUNIT_EXPECT_EQ(test, 0, kwq_publish(q, &o));
	kwq_destroy(q);
}

/*
 * A published kernel queue names no holder: its owner cookies are its
 * module's as well as the attached files', which kwq cannot tell apart,
 * so kwq_inspect() (and KWQ_IOC_INSPECT) report holder 0 for every key,
 * whoever holds it; the owner cookie is still reported.
 */
static void published_queue_names_no_holder(struct kunit *test)
{
	struct kwq_publish_opts o = {
		.uid = GLOBAL_ROOT_UID,
		.gid = GLOBAL_ROOT_GID,
		.mode = 0600,
	};
	struct kwq *q = kt_create(test, NULL, NULL);
	struct kwq_key_info info;
	struct kwq_item item;
	int owner;

	KUNIT_ASSERT_EQ(test, 0, kwq_publish(q, &o));
	KUNIT_EXPECT_EQ(test, 0, kt_add(q, "a"));
	KUNIT_ASSERT_EQ(test, 0, kwq_get(q, &owner, KWQ_GET_NONBLOCK, 0,
					 &item));
	KUNIT_ASSERT_EQ(test, 0, kwq_inspect(q, "a", 1, &info));
	KUNIT_EXPECT_EQ(test, (u32)KWQ_KEY_PROCESSING, info.state);
	KUNIT_EXPECT_PTR_EQ(test, (const void *)&owner, info.owner);
	KUNIT_EXPECT_EQ(test, 0U, info.holder);
	KUNIT_EXPECT_EQ(test, 0, kwq_done(q, &item));
	kwq_unpublish(q);
}

static void kn_budget_release(struct kwq_budget *b)
{
}

/*
 * A queue charges its budget and every parent of it; a charge that does
 * not fit at some level is taken back from the levels below it.
 */
static void budget_charges_every_parent(struct kunit *test)
{
	struct kwq_budget parent = {
		.limit = ULONG_MAX,
		.release = kn_budget_release,
	};
	struct kwq_budget child = {
		.limit = ULONG_MAX,
		.parent = &parent,
		.release = kn_budget_release,
	};
	struct kwq *q;
	long used;

	refcount_set(&parent.ref, 1);
	refcount_set(&child.ref, 1);
	q = kwq_create_anon("kt-ns-budget", NULL, &child);
	KUNIT_ASSERT_FALSE(test, IS_ERR(q));
	used = atomic_long_read(&child.used);
	KUNIT_EXPECT_GT(test, used, 0L);
	KUNIT_EXPECT_EQ(test, used, atomic_long_read(&parent.used));
	KUNIT_EXPECT_EQ(test, 0, kt_add(q, "a"));
	KUNIT_EXPECT_GT(test, atomic_long_read(&child.used), used);
	used = atomic_long_read(&child.used);
	KUNIT_EXPECT_EQ(test, used, atomic_long_read(&parent.used));

	/* The parent is full: a new key fails and charges nothing. */
	parent.limit = used;
	KUNIT_EXPECT_EQ(test, -EDQUOT, kt_add(q, "b"));
	KUNIT_EXPECT_EQ(test, used, atomic_long_read(&child.used));
	KUNIT_EXPECT_EQ(test, used, atomic_long_read(&parent.used));
	/* So is a new queue charging the child. */
	KUNIT_EXPECT_PTR_EQ(test, ERR_PTR(-EDQUOT),
			    kwq_create_anon("kt-ns-budget2", NULL, &child));
	KUNIT_EXPECT_EQ(test, used, atomic_long_read(&parent.used));
	parent.limit = ULONG_MAX;
	KUNIT_EXPECT_EQ(test, 0, kt_add(q, "b"));

	kwq_destroy(q);
	KUNIT_EXPECT_EQ(test, 0L, atomic_long_read(&child.used));
	KUNIT_EXPECT_EQ(test, 0L, atomic_long_read(&parent.used));
	/* The queue's reference is back; the parent's was never taken. */
	KUNIT_EXPECT_EQ(test, 1U, refcount_read(&child.ref));
	KUNIT_EXPECT_EQ(test, 1U, refcount_read(&parent.ref));
}

struct kn_getter {
	struct kwq *q;
	bool abort;
	struct completion done;
	struct kwq_item item;
	int ret;
};

static int kn_getter_fn(void *data)
{
	struct kn_getter *g = data;
	struct kwq_get_ctl ctl = { .abort = &g->abort };

	g->ret = kwq_get_batch_ctl(g->q, NULL, 0, KWQ_WAIT_FOREVER, &g->item,
				   1, 1, &ctl);
	kwq_put(g->q);
	complete(&g->done);
	return 0;
}

/* What dev.c does for a queue unpublished while a get waits on it. */
static void abortable_get_ends_with_eidrm(struct kunit *test)
{
	struct kwq *q = kt_create(test, NULL, NULL);
	struct kn_getter *g = kunit_kzalloc(test, sizeof(*g), GFP_KERNEL);
	struct task_struct *t;

	KUNIT_ASSERT_NOT_NULL(test, g);
	g->q = q;
	init_completion(&g->done);
	kwq_get_ref(q);
	t = kthread_run(kn_getter_fn, g, "kwq-kn-getter");
	if (IS_ERR(t))
		kwq_put(q);
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	msleep(30);
	/* A plain wake-up (a key taken by someone else) changes nothing. */
	kwq_wake_all(q);
	msleep(30);
	KUNIT_EXPECT_FALSE(test, completion_done(&g->done));
	WRITE_ONCE(g->abort, true);
	kwq_wake_all(q);
	if (!wait_for_completion_timeout(&g->done, 20 * HZ)) {
		KUNIT_FAIL(test, "getter still blocked after 20 s");
		wait_for_completion(&g->done);
	}
	KUNIT_EXPECT_EQ(test, -EIDRM, g->ret);
	/* The queue is intact: a key added now is there for others. */
	KUNIT_EXPECT_EQ(test, 0, kt_add(q, "a"));
	KUNIT_EXPECT_EQ(test, 1L, kwq_len(q));
}

static struct kunit_case kwq_namespace_cases[] = {
	KUNIT_CASE(anon_queue_is_never_found),
	KUNIT_CASE(kernel_queue_gets_a_name_a_user_took),
	KUNIT_CASE(publish_checks_its_arguments),
	KUNIT_CASE(destroy_unpublishes),
	KUNIT_CASE(published_queue_names_no_holder),
	KUNIT_CASE(budget_charges_every_parent),
	KUNIT_CASE(abortable_get_ends_with_eidrm),
	{}
};

static struct kunit_suite kwq_namespace_suite = {
	.name = "kwq_namespace",
	.test_cases = kwq_namespace_cases,
};

kunit_test_suite(kwq_namespace_suite);
