/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host benchmark shim: a BUG or WARN is a bug in what is measured, so it
 * stops the benchmark instead of being counted as an operation.
 */
#ifndef _HOSTBENCH_BUG_H
#define _HOSTBENCH_BUG_H
#include <linux/compiler_types.h>

void __noreturn hostbench_die(const char *file, int line, const char *what);

#define BUG()		hostbench_die(__FILE__, __LINE__, "BUG")
#define BUG_ON(c)	do { if (unlikely(c)) hostbench_die(__FILE__, __LINE__, "BUG_ON(" #c ")"); } while (0)
#define WARN_ON(c) ({							\
	int __ret_warn_on = !!(c);					\
	if (unlikely(__ret_warn_on))					\
		hostbench_die(__FILE__, __LINE__, "WARN_ON(" #c ")");	\
	unlikely(__ret_warn_on);					\
})
#define WARN_ON_ONCE(c)	WARN_ON(c)
#define WARN(c, fmt...)	WARN_ON(c)
#define WARN_ONCE(c, fmt...) WARN_ON(c)
#define BUILD_BUG_ON(c)	((void)sizeof(char[1 - 2 * !!(c)]))
#define BUILD_BUG_ON_MSG(c, msg) BUILD_BUG_ON(c)
#define BUILD_BUG_ON_ZERO(e) ((int)(sizeof(struct { int:(-!!(e)); })))
#define BUILD_BUG()	BUILD_BUG_ON(1)
#undef static_assert
#define static_assert(expr, ...) __static_assert(expr, ##__VA_ARGS__, #expr)
#define __static_assert(expr, msg, ...) _Static_assert(expr, msg)
#endif
