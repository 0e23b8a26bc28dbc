/* SPDX-License-Identifier: GPL-2.0 */
/* Host benchmark shim: user and group ids, as opaque as the kernel's. */
#ifndef _HOSTBENCH_UIDGID_H
#define _HOSTBENCH_UIDGID_H
#include <linux/types.h>

typedef struct { unsigned int val; } kuid_t;
typedef struct { unsigned int val; } kgid_t;
#ifndef HOSTBENCH_HAVE_UMODE_T
#define HOSTBENCH_HAVE_UMODE_T
typedef unsigned short umode_t;
#endif
#endif
