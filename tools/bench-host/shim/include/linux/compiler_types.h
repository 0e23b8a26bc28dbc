/* SPDX-License-Identifier: GPL-2.0 */
/* Host benchmark shim: compiler attributes and annotations. */
#ifndef _HOSTBENCH_COMPILER_TYPES_H
#define _HOSTBENCH_COMPILER_TYPES_H

/*
 * glibc's headers first: <sys/cdefs.h> redefines some of the names below
 * (__always_inline) and must not come after them.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <limits.h>
#include <errno.h>
#include <sys/types.h>

#define __user
#define __kernel
#define __iomem
#define __percpu
#define __rcu
#define __private
#define __force
#define __nocast
#define __safe
#define __bitwise
/* The kernel's: no stack auto-initialisation for the variable. */
#if __has_attribute(__uninitialized__)
#define __uninitialized		__attribute__((__uninitialized__))
#else
#define __uninitialized
#endif
#define __acquires(x)
#define __releases(x)
#define __acquire(x)		((void)0)
#define __release(x)		((void)0)
#define __must_hold(x)
#define __cond_lock(x, c)	(c)
#define __init
#define __exit
#define __initdata
#define __read_mostly
#define __ro_after_init
#define __visible		__attribute__((__externally_visible__))
#define __used			__attribute__((__used__))
#define __maybe_unused		__attribute__((__unused__))
#define __always_unused		__attribute__((__unused__))
#define __must_check		__attribute__((__warn_unused_result__))
#define __cold			__attribute__((__cold__))
#define __weak			__attribute__((__weak__))
#define __packed		__attribute__((__packed__))
#define __aligned(x)		__attribute__((__aligned__(x)))
#define __printf(a, b)		__attribute__((__format__(printf, a, b)))
#define __section(s)		__attribute__((__section__(s)))
#define __noreturn		__attribute__((__noreturn__))
#define __counted_by(m)
#define __nonstring		__attribute__((__nonstring__))
#define __randomize_layout
#define __no_randomize_layout
#define __designated_init
#define noinline		__attribute__((__noinline__))
#define notrace
#define noinstr
#undef __always_inline
#define __always_inline		inline __attribute__((__always_inline__))
#define __inline_maybe_unused	__maybe_unused
#define fallthrough		__attribute__((__fallthrough__))
#define likely(x)		__builtin_expect(!!(x), 1)
#define unlikely(x)		__builtin_expect(!!(x), 0)
#define barrier()		__asm__ __volatile__("" : : : "memory")
#define __same_type(a, b)	__builtin_types_compatible_p(typeof(a), typeof(b))
#define __must_be_array(a)	0
#define ____cacheline_aligned	__aligned(64)
#define ____cacheline_aligned_in_smp __aligned(64)
#define __cacheline_aligned	__aligned(64)
#define __cacheline_aligned_in_smp __aligned(64)

#endif
