/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host benchmark shim: glibc's <errno.h> reaches this file through
 * <bits/errno.h>, so the uapi numbers come from <asm/errno.h> here.
 */
#ifndef _HOSTBENCH_ERRNO_H
#define _HOSTBENCH_ERRNO_H
#include <asm/errno.h>
#define ERESTARTSYS	512
#define ERESTARTNOINTR	513
#define ERESTARTNOHAND	514
#define ENOIOCTLCMD	515
#define ENOTSUPP	524
#endif
