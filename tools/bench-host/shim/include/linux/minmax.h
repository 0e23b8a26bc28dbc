/* SPDX-License-Identifier: GPL-2.0 */
/* Host benchmark shim: min/max without the kernel's type checks. */
#ifndef _HOSTBENCH_MINMAX_H
#define _HOSTBENCH_MINMAX_H
#include <linux/compiler_types.h>
#define __hb_cmp(op, x, y) ({						\
	typeof(x) __x = (x); typeof(y) __y = (y);			\
	__x op __y ? __x : __y; })
#define min(x, y)		__hb_cmp(<, x, y)
#define max(x, y)		__hb_cmp(>, x, y)
#define umin(x, y)		min((unsigned long long)(x), (unsigned long long)(y))
#define umax(x, y)		max((unsigned long long)(x), (unsigned long long)(y))
#define min3(x, y, z)		min(min(x, y), z)
#define max3(x, y, z)		max(max(x, y), z)
#define min_t(type, x, y)	__hb_cmp(<, (type)(x), (type)(y))
#define max_t(type, x, y)	__hb_cmp(>, (type)(x), (type)(y))
#define min_not_zero(x, y) ({						\
	typeof(x) __x = (x); typeof(y) __y = (y);			\
	__x == 0 ? __y : ((__y == 0) ? __x : min(__x, __y)); })
#define clamp(val, lo, hi)	min(max(val, lo), hi)
#define clamp_t(type, val, lo, hi) min_t(type, max_t(type, val, lo), hi)
#define clamp_val(val, lo, hi)	clamp_t(typeof(val), val, lo, hi)
#define in_range(val, start, len) ((val) >= (start) && (val) - (start) < (len))
#endif
