/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HOSTBENCH_MODULE_H
#define _HOSTBENCH_MODULE_H
#include <linux/kernel.h>
struct module;
#define MODULE_LICENSE(x)
#define MODULE_AUTHOR(x)
#define MODULE_DESCRIPTION(x)
#define MODULE_VERSION(x)
#define MODULE_ALIAS(x)
#define MODULE_IMPORT_NS(x)
#define module_init(fn)
#define module_exit(fn)
#define module_param(name, type, perm)
#define MODULE_PARM_DESC(name, desc)
#endif
