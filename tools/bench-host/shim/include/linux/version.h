/* SPDX-License-Identifier: GPL-2.0 */
/* Host benchmark shim: the kernel of Debian's linux-source-6.12. */
#ifndef _HOSTBENCH_VERSION_H
#define _HOSTBENCH_VERSION_H
#define KERNEL_VERSION(a, b, c)	(((a) << 16) + ((b) << 8) + ((c) > 255 ? 255 : (c)))
#define LINUX_VERSION_CODE	KERNEL_VERSION(6, 12, 0)
#endif
