/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host benchmark shim: the kernel's generic helpers. Most other shim
 * headers include this one, as kernel headers reach them transitively.
 */
#ifndef _HOSTBENCH_KERNEL_H
#define _HOSTBENCH_KERNEL_H

#include <linux/types.h>
#include <linux/compiler.h>
#include <linux/stddef.h>
#include <linux/limits.h>
#include <linux/export.h>
#include <linux/bug.h>
#include <linux/printk.h>
#include <linux/minmax.h>
#include <linux/bitops.h>
#include <linux/log2.h>
#include <linux/overflow.h>
#include <linux/byteorder.h>
#include <linux/container_of.h>

#define ARRAY_SIZE(arr)		(sizeof(arr) / sizeof((arr)[0]))
#define __KERNEL_DIV_ROUND_UP(n, d) (((n) + (d) - 1) / (d))
#define DIV_ROUND_UP(n, d)	__KERNEL_DIV_ROUND_UP(n, d)
#define DIV_ROUND_UP_ULL(n, d)	DIV_ROUND_UP((unsigned long long)(n), d)
#define __ALIGN_MASK(x, mask)	(((x) + (mask)) & ~(mask))
#define ALIGN(x, a)		__ALIGN_MASK(x, (typeof(x))(a) - 1)
#define ALIGN_DOWN(x, a)	((x) & ~((typeof(x))(a) - 1))
#define PTR_ALIGN(p, a)		((typeof(p))ALIGN((unsigned long)(p), (a)))
#define IS_ALIGNED(x, a)	(((x) & ((typeof(x))(a) - 1)) == 0)
#define roundup(x, y)		((((x) + ((y) - 1)) / (y)) * (y))
#define rounddown(x, y)		((x) - ((x) % (y)))
#define upper_32_bits(n)	((u32)(((n) >> 16) >> 16))
#define lower_32_bits(n)	((u32)((n) & 0xffffffff))
#define swap(a, b) \
	do { typeof(a) __tmp = (a); (a) = (b); (b) = __tmp; } while (0)
#define __stringify_1(x...)	#x
#define __stringify(x...)	__stringify_1(x)

/* Nothing sleeps here: the benchmark is single threaded, gets never block. */
#define might_sleep()		do { } while (0)
#define might_sleep_if(c)	do { } while (0)
#define might_fault()		do { } while (0)
#define cond_resched()		do { } while (0)
#define cpu_relax()		barrier()

#define PAGE_SHIFT		12
#define PAGE_SIZE		(1UL << PAGE_SHIFT)
#define PAGE_MASK		(~(PAGE_SIZE - 1))
#define L1_CACHE_BYTES		64
#define SMP_CACHE_BYTES		64

#endif
