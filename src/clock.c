// SPDX-License-Identifier: GPL-2.0
/*
 * The real kwq clock: CLOCK_MONOTONIC and one hrtimer per queue.
 *
 * The timer is a soft hrtimer (its callback runs in softirq context), so
 * the expiry path can take the queue's spinlock_t on every configuration,
 * PREEMPT_RT included. arm and cancel are called under the queue lock
 * with interrupts off; they never wait for a running callback. The final
 * hrtimer_cancel() happens in queue.c without the lock held.
 *
 * The timer reaches the core through one function pointer, handed over
 * once by kwq_clock_init(): this file calls nothing of the core's.
 */

#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/timekeeping.h>

#include "compat.h"
#include "layout.h"

static u64 kwq_real_now(const struct kwq_clock *clock)
{
	return ktime_get_ns();
}

static void kwq_real_arm(const struct kwq_clock *clock, struct kwq *q,
			 u64 deadline_ns)
{
	hrtimer_start(&q->timer, ns_to_ktime(min_t(u64, deadline_ns, KTIME_MAX)),
		      HRTIMER_MODE_ABS_SOFT);
}

static void kwq_real_cancel(const struct kwq_clock *clock, struct kwq *q)
{
	/* Fails harmlessly if the callback runs: it finds nothing due. */
	hrtimer_try_to_cancel(&q->timer);
}

const struct kwq_clock kwq_real_clock = {
	.now = kwq_real_now,
	.arm = kwq_real_arm,
	.cancel = kwq_real_cancel,
};

/* What an expired timer runs: kwq_clock_expired(), set at module init. */
static void (*kwq_timer_expired)(struct kwq *q) __ro_after_init;

static enum hrtimer_restart kwq_timer_fn(struct hrtimer *timer)
{
	struct kwq *q = container_of(timer, struct kwq, timer);

	kwq_timer_expired(q);
	return HRTIMER_NORESTART;
}

void kwq_clock_init(void (*expired)(struct kwq *q))
{
	kwq_timer_expired = expired;
}

/* Set up q->timer; every queue has it, whatever its clock. */
void kwq_real_clock_setup(struct kwq *q)
{
	hrtimer_setup(&q->timer, kwq_timer_fn, CLOCK_MONOTONIC,
		      HRTIMER_MODE_ABS_SOFT);
}
