/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HOSTBENCH_CONTAINER_OF_H
#define _HOSTBENCH_CONTAINER_OF_H
#include <linux/compiler_types.h>
#define container_of(ptr, type, member) ({				\
	void *__mptr = (void *)(ptr);					\
	((type *)(__mptr - offsetof(type, member))); })
#define container_of_const(ptr, type, member) container_of(ptr, type, member)
#endif
