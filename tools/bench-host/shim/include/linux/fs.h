/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HOSTBENCH_FS_H
#define _HOSTBENCH_FS_H
#include <linux/kernel.h>
struct file;
struct inode;
struct file_operations;
#endif
