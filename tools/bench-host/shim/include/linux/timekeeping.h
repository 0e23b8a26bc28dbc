/* SPDX-License-Identifier: GPL-2.0 */
/* Host benchmark shim: CLOCK_MONOTONIC (only the real kwq clock reads it). */
#ifndef _HOSTBENCH_TIMEKEEPING_H
#define _HOSTBENCH_TIMEKEEPING_H
#include <linux/ktime.h>
u64 ktime_get_ns(void);
static inline ktime_t ktime_get(void) { return ktime_get_ns(); }
#define ktime_get_mono_fast_ns()	ktime_get_ns()
#define ktime_get_boottime_ns()		ktime_get_ns()
#endif
