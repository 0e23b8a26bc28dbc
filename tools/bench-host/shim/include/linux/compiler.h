/* SPDX-License-Identifier: GPL-2.0 */
/* Host benchmark shim: READ_ONCE and friends (single threaded). */
#ifndef _HOSTBENCH_COMPILER_H
#define _HOSTBENCH_COMPILER_H

#include <linux/compiler_types.h>

#define READ_ONCE(x)		(*(const volatile typeof(x) *)&(x))
#define WRITE_ONCE(x, val)	do { *(volatile typeof(x) *)&(x) = (val); } while (0)
#define data_race(expr)		(expr)
#define OPTIMIZER_HIDE_VAR(var)	__asm__ ("" : "=r" (var) : "0" (var))

#endif
