/* SPDX-License-Identifier: GPL-2.0 */
/* Host benchmark shim: IPC namespaces exist only as a type. */
#ifndef _HOSTBENCH_IPC_NAMESPACE_H
#define _HOSTBENCH_IPC_NAMESPACE_H
struct ipc_namespace;
#endif
