/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host benchmark prelude, force-included (-include) into every kernel-side
 * file (the core sources from src/ and the kernel's own rbtree.c and siphash.c): what Kbuild's
 * autoconf.h and compiler_types.h give a kernel translation unit. The
 * configuration is Debian's x86-64 kernel, as far as the code measured
 * here cares.
 */
#ifndef _HOSTBENCH_PRELUDE_H
#define _HOSTBENCH_PRELUDE_H

#define HOSTBENCH 1

#define CONFIG_64BIT 1
#define CONFIG_X86_64 1
#define CONFIG_SMP 1
#define CONFIG_HAVE_EFFICIENT_UNALIGNED_ACCESS 1
#define CONFIG_DCACHE_WORD_ACCESS 1
#define CONFIG_HZ 250
#define HZ CONFIG_HZ
/* Not set: CONFIG_KUNIT, CONFIG_LOCKDEP, CONFIG_DEBUG_LIST, CONFIG_TRACING. */

#define __is_defined(x)		___is_defined(x)
#define ___is_defined(val)	____is_defined(__ARG_PLACEHOLDER_##val)
#define __ARG_PLACEHOLDER_1	0,
#define ____is_defined(arg1_or_junk) __take_second_arg(arg1_or_junk 1, 0)
#define __take_second_arg(__ignored, val, ...) val
#define IS_ENABLED(option)	__is_defined(option)
#define IS_BUILTIN(option)	__is_defined(option)
#define IS_MODULE(option)	0
#define IS_REACHABLE(option)	__is_defined(option)

#include <linux/compiler_types.h>

#endif
