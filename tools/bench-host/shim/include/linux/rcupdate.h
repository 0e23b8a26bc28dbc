/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host benchmark shim: RCU for one thread. Readers cost nothing; a grace
 * period ends whenever the driver runs deferred work (hostbench_run_work()),
 * which is when call_rcu()/kfree_rcu() callbacks run.
 */
#ifndef _HOSTBENCH_RCUPDATE_H
#define _HOSTBENCH_RCUPDATE_H
#include <linux/kernel.h>

#define rcu_read_lock()			do { } while (0)
#define rcu_read_unlock()		do { } while (0)
#define rcu_read_lock_bh()		do { } while (0)
#define rcu_read_unlock_bh()		do { } while (0)
#define rcu_read_lock_held()		1
#define rcu_dereference(p)		READ_ONCE(p)
#define rcu_dereference_raw(p)		READ_ONCE(p)
#define rcu_dereference_check(p, c)	READ_ONCE(p)
#define rcu_dereference_protected(p, c)	(p)
#define rcu_access_pointer(p)		READ_ONCE(p)
#define rcu_assign_pointer(p, v)	smp_store_release(&(p), (v))
#define RCU_INIT_POINTER(p, v)		WRITE_ONCE(p, v)
#define synchronize_rcu()		do { } while (0)
#define rcu_barrier()			do { } while (0)

void call_rcu(struct rcu_head *head, rcu_callback_t func);
/* As the kernel: a small "function" is the offset of the rcu_head. */
#define kfree_rcu(ptr, rhf)						\
	call_rcu(&(ptr)->rhf,						\
		 (rcu_callback_t)(unsigned long)offsetof(typeof(*(ptr)), rhf))
#define kvfree_rcu(ptr, rhf)		kfree_rcu(ptr, rhf)
#include <linux/atomic.h>
#endif
