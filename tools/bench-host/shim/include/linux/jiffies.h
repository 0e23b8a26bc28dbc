/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HOSTBENCH_JIFFIES_H
#define _HOSTBENCH_JIFFIES_H
#include <linux/ktime.h>
#define jiffies			((unsigned long)(ktime_get_ns() / (NSEC_PER_SEC / HZ)))
#define msecs_to_jiffies(m)	((unsigned long)(m) * HZ / MSEC_PER_SEC)
#define nsecs_to_jiffies(n)	((unsigned long)((n) / (NSEC_PER_SEC / HZ)))
#define time_after(a, b)	((long)((b) - (a)) < 0)
#define time_before(a, b)	time_after(b, a)
#endif
