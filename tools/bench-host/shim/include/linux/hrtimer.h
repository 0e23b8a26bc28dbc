/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host benchmark shim: hrtimers that record what they were set to and
 * never fire. The benchmark's queues use their own clock (struct
 * kwq_clock): the real clock's timer is only set up and cancelled.
 */
#ifndef _HOSTBENCH_HRTIMER_H
#define _HOSTBENCH_HRTIMER_H
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/timekeeping.h>

#ifndef CLOCK_MONOTONIC
#define CLOCK_MONOTONIC		1
#endif

enum hrtimer_mode {
	HRTIMER_MODE_ABS	= 0x00,
	HRTIMER_MODE_REL	= 0x01,
	HRTIMER_MODE_PINNED	= 0x02,
	HRTIMER_MODE_SOFT	= 0x04,
	HRTIMER_MODE_HARD	= 0x08,
	HRTIMER_MODE_ABS_PINNED	= HRTIMER_MODE_ABS | HRTIMER_MODE_PINNED,
	HRTIMER_MODE_REL_PINNED	= HRTIMER_MODE_REL | HRTIMER_MODE_PINNED,
	HRTIMER_MODE_ABS_SOFT	= HRTIMER_MODE_ABS | HRTIMER_MODE_SOFT,
	HRTIMER_MODE_REL_SOFT	= HRTIMER_MODE_REL | HRTIMER_MODE_SOFT,
	HRTIMER_MODE_ABS_HARD	= HRTIMER_MODE_ABS | HRTIMER_MODE_HARD,
	HRTIMER_MODE_REL_HARD	= HRTIMER_MODE_REL | HRTIMER_MODE_HARD,
};

enum hrtimer_restart {
	HRTIMER_NORESTART,
	HRTIMER_RESTART,
};

struct hrtimer {
	enum hrtimer_restart (*function)(struct hrtimer *timer);
	ktime_t expires;
	bool active;
};

/* 6.12 has hrtimer_init() only; src/compat.h provides hrtimer_setup(). */
static inline void hrtimer_init(struct hrtimer *timer, clockid_t clock_id,
				enum hrtimer_mode mode)
{
	timer->function = NULL;
	timer->expires = 0;
	timer->active = false;
}

static inline void hrtimer_start(struct hrtimer *timer, ktime_t tim,
				 const enum hrtimer_mode mode)
{
	timer->expires = tim;
	timer->active = true;
}

static inline int hrtimer_try_to_cancel(struct hrtimer *timer)
{
	int was = timer->active;

	timer->active = false;
	return was;
}

static inline int hrtimer_cancel(struct hrtimer *timer)
{
	return hrtimer_try_to_cancel(timer);
}

static inline bool hrtimer_active(const struct hrtimer *timer)
{
	return timer->active;
}

static inline int schedule_hrtimeout(ktime_t *expires, const enum hrtimer_mode mode)
{
	hostbench_die(__FILE__, __LINE__, "schedule_hrtimeout(): would sleep");
}
#endif
