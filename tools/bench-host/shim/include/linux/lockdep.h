/* SPDX-License-Identifier: GPL-2.0 */
/* Host benchmark shim: no lockdep; "held" checks look at the lock word. */
#ifndef _HOSTBENCH_LOCKDEP_H
#define _HOSTBENCH_LOCKDEP_H
#include <linux/kernel.h>
struct lock_class_key { };
#define lockdep_assert_held(l)		BUG_ON(!READ_ONCE((l)->locked))
#define lockdep_assert_not_held(l)	BUG_ON(READ_ONCE((l)->locked))
#define lockdep_assert_held_once(l)	lockdep_assert_held(l)
#define lockdep_assert_irqs_disabled()	do { } while (0)
#define lockdep_set_class(l, k)		do { } while (0)
#define might_lock(l)			do { } while (0)
#endif
