// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit cases for src/compat.h: the shims must behave like the upstream
 * APIs they stand in for on every kernel kwq builds against.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/hrtimer.h>

#include "compat.h"

struct compat_timer {
	struct hrtimer timer;
	struct completion fired;
};

static enum hrtimer_restart compat_timer_fn(struct hrtimer *t)
{
	struct compat_timer *ct = container_of(t, struct compat_timer, timer);

	complete(&ct->fired);
	return HRTIMER_NORESTART;
}

/* Timers live on the heap: debugobjects rejects unannotated stack timers. */
static struct compat_timer *compat_timer_new(struct kunit *test)
{
	struct compat_timer *ct = kunit_kzalloc(test, sizeof(*ct), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ct);
	init_completion(&ct->fired);
	hrtimer_setup(&ct->timer, compat_timer_fn, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL);
	return ct;
}

static void hrtimer_setup_installs_callback(struct kunit *test)
{
	struct compat_timer *ct = compat_timer_new(test);

	KUNIT_EXPECT_TRUE(test, ct->timer.function == compat_timer_fn);
	KUNIT_EXPECT_FALSE(test, hrtimer_active(&ct->timer));
}

static void hrtimer_setup_timer_fires(struct kunit *test)
{
	struct compat_timer *ct = compat_timer_new(test);
	unsigned long left;

	hrtimer_start(&ct->timer, ms_to_ktime(1), HRTIMER_MODE_REL);
	/* Generous: TCG with KASAN can be slow, but 10 s is not "late". */
	left = wait_for_completion_timeout(&ct->fired, 10 * HZ);
	hrtimer_cancel(&ct->timer);
	KUNIT_EXPECT_GT(test, left, 0UL);
}

static struct kunit_case kwq_compat_cases[] = {
	KUNIT_CASE(hrtimer_setup_installs_callback),
	KUNIT_CASE(hrtimer_setup_timer_fires),
	{}
};

static struct kunit_suite kwq_compat_suite = {
	.name = "kwq_compat",
	.test_cases = kwq_compat_cases,
};

kunit_test_suite(kwq_compat_suite);

MODULE_DESCRIPTION("KUnit tests for kwq");
MODULE_LICENSE("GPL");
