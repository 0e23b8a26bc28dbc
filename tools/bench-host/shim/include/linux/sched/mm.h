/* SPDX-License-Identifier: GPL-2.0 */
/* Host benchmark shim: the active memory cgroup, which nothing charges. */
#ifndef _HOSTBENCH_SCHED_MM_H
#define _HOSTBENCH_SCHED_MM_H
#include <linux/memcontrol.h>

static inline struct mem_cgroup *set_active_memcg(struct mem_cgroup *memcg)
{
	return NULL;
}
#endif
