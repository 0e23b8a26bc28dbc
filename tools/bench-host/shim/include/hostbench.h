/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the host benchmark's shims (shim.c) offer its driver: running
 * deferred work, watching lock holds, and the memory the slab model saw.
 */
#ifndef _HOSTBENCH_H
#define _HOSTBENCH_H
#include <linux/types.h>

void __attribute__((__noreturn__)) hostbench_die(const char *file, int line,
						 const char *what);

/* Work queued with schedule_work() and friends, and RCU callbacks. */
extern unsigned long hostbench_nr_pending;
static inline bool hostbench_work_pending(void)
{
	return hostbench_nr_pending != 0;
}
/* Run everything pending (and what it queues); the number of items run. */
int hostbench_run_work(void);

/*
 * Called after every spinlock acquire (acquire = true) and before every
 * release while set: the driver times critical sections with it.
 */
extern void (*hostbench_lock_hook)(void *lock, bool acquire);

/* Keys the delay wheel of @q cascaded so far (src/queue.c). */
struct kwq;
u64 hostbench_wheel_moves(struct kwq *q);

struct hostbench_cache_stats {
	const char *name;
	unsigned int object_size;	/* kmem_cache_size() */
	unsigned int slab_bytes;	/* one slab: PAGE_SIZE << order */
	unsigned int objects_per_slab;
	unsigned long live;		/* objects allocated */
	unsigned long slabs;		/* slabs held */
};

/* Fill up to @max caches' stats; returns how many caches exist. */
int hostbench_caches(struct hostbench_cache_stats *st, int max);
/* Bytes currently allocated with kmalloc() and kvmalloc() (as asked). */
u64 hostbench_kmalloc_bytes(void);
u64 hostbench_kvmalloc_bytes(void);

#endif
