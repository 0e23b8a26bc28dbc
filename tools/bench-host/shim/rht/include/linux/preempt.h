/* SPDX-License-Identifier: GPL-2.0 */
/* Table benchmark shim: preempt_disable()/enable() are in spinlock.h. */
#include <linux/spinlock.h>
