/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HOSTBENCH_TIME64_H
#define _HOSTBENCH_TIME64_H
#include <linux/kernel.h>
#define MSEC_PER_SEC	1000L
#define USEC_PER_MSEC	1000L
#define NSEC_PER_USEC	1000L
#define NSEC_PER_MSEC	1000000L
#define USEC_PER_SEC	1000000L
#define NSEC_PER_SEC	1000000000L
#endif
