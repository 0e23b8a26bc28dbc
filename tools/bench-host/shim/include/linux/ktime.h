/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HOSTBENCH_KTIME_H
#define _HOSTBENCH_KTIME_H
#include <linux/kernel.h>
#include <linux/time64.h>
typedef s64 ktime_t;
#define KTIME_MAX		((s64)~((u64)1 << 63))
#define KTIME_SEC_MAX		(KTIME_MAX / NSEC_PER_SEC)
static inline ktime_t ns_to_ktime(u64 ns) { return ns; }
static inline s64 ktime_to_ns(const ktime_t kt) { return kt; }
static inline ktime_t ktime_set(const s64 secs, const unsigned long nsecs) { return secs * NSEC_PER_SEC + (s64)nsecs; }
#define ktime_add_ns(kt, nsval)		((kt) + (nsval))
#define ktime_sub_ns(kt, nsval)		((kt) - (nsval))
#define ktime_add(a, b)			((a) + (b))
#define ktime_sub(a, b)			((a) - (b))
#define ktime_compare(a, b)		((a) < (b) ? -1 : (a) > (b) ? 1 : 0)
#define ktime_after(a, b)		((a) > (b))
#define ktime_before(a, b)		((a) < (b))
static inline s64 ktime_to_us(const ktime_t kt) { return kt / NSEC_PER_USEC; }
static inline s64 ktime_to_ms(const ktime_t kt) { return kt / NSEC_PER_MSEC; }
#include <linux/timekeeping.h>
#endif
