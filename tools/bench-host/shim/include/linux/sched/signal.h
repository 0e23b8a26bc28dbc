/* SPDX-License-Identifier: GPL-2.0 */
/* Host shim: signal_pending() and friends live in the shim's sched.h. */
#ifndef _SHIM_LINUX_SCHED_SIGNAL_H
#define _SHIM_LINUX_SCHED_SIGNAL_H
#include <linux/sched.h>
#endif
