/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HOSTBENCH_EXPORT_H
#define _HOSTBENCH_EXPORT_H
#define EXPORT_SYMBOL(sym)
#define EXPORT_SYMBOL_GPL(sym)
#define EXPORT_SYMBOL_NS(sym, ns)
#define EXPORT_SYMBOL_NS_GPL(sym, ns)
#define THIS_MODULE		((struct module *)0)
#endif
