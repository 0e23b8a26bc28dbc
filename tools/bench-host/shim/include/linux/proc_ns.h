/* SPDX-License-Identifier: GPL-2.0 */
/* Host benchmark shim: namespace operations are not used. */
#ifndef _HOSTBENCH_PROC_NS_H
#define _HOSTBENCH_PROC_NS_H
#endif
