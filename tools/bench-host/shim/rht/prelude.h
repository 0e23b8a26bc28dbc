/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Table benchmark prelude, force-included after ../prelude.h into the
 * kernel's lib/rhashtable.c and the table user (rhtb.c): what
 * rhashtable needs beyond what the queue core does. A kernel without
 * lockdep or memory allocation profiling, as Debian's: the lockdep maps
 * are empty and the allocation hooks are the plain calls.
 */
#ifndef _HOSTBENCH_RHT_PRELUDE_H
#define _HOSTBENCH_RHT_PRELUDE_H

#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/lockdep.h>

/* !CONFIG_LOCKDEP: an empty map, and the annotations cost nothing. */
struct lockdep_map { };
#define SINGLE_DEPTH_NESTING			1
#define lockdep_init_map(m, n, k, s)		do { } while (0)
#define lock_map_acquire(m)			do { } while (0)
#define lock_map_release(m)			do { } while (0)
#define lock_acquire_exclusive(m, s, t, n, i)	do { } while (0)
#define lockdep_is_held(l)			1
#define debug_locks				0
#define _THIS_IP_	({ __label__ __here; __here: (unsigned long)&&__here; })

#define NUMA_NO_NODE	(-1)
/* The _noprof allocators are the plain ones (no allocation tags). */
#define kmalloc_noprof(size, gfp)		kmalloc(size, gfp)
#define kvmalloc_node_noprof(size, gfp, node)	kvmalloc(size, gfp)

/* No debug objects: nothing to initialise or to look at in a head. */
#define rcu_head_init(head)			do { } while (0)
#define rcu_head_after_call_rcu(head, f)	false

#endif
