/* SPDX-License-Identifier: GPL-2.0 */
/* Host benchmark shim: no memory cgroups (the benchmark's queues charge none). */
#ifndef _HOSTBENCH_MEMCONTROL_H
#define _HOSTBENCH_MEMCONTROL_H
#include <linux/kernel.h>

struct mem_cgroup;
struct mm_struct;

static inline struct mem_cgroup *get_mem_cgroup_from_mm(struct mm_struct *mm)
{
	return NULL;
}

static inline void mem_cgroup_put(struct mem_cgroup *memcg)
{
}
#endif
