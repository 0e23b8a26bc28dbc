/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host benchmark shim: spinlocks as one exchange to take and one store to
 * drop, out of line like the kernel's _raw_spin_lock*() (shim.c). The
 * benchmark is single threaded, so a lock found taken is a self-deadlock
 * and stops it. shim.c can also report every acquire and release to a
 * hook: the driver times critical sections with it.
 */
#ifndef _HOSTBENCH_SPINLOCK_H
#define _HOSTBENCH_SPINLOCK_H
#include <linux/kernel.h>
#include <linux/lockdep.h>

typedef struct spinlock {
	int locked;
} spinlock_t;
typedef spinlock_t raw_spinlock_t;

typedef struct {
	int locked;
} rwlock_t;

#define __SPIN_LOCK_UNLOCKED(name)	{ .locked = 0 }
#define DEFINE_SPINLOCK(name)		spinlock_t name = __SPIN_LOCK_UNLOCKED(name)
#define DEFINE_RAW_SPINLOCK(name)	DEFINE_SPINLOCK(name)
#define spin_lock_init(l)		do { (l)->locked = 0; } while (0)
#define raw_spin_lock_init(l)		spin_lock_init(l)

void hostbench_spin_lock(spinlock_t *lock);
void hostbench_spin_unlock(spinlock_t *lock);
int hostbench_spin_trylock(spinlock_t *lock);
unsigned long hostbench_spin_lock_irqsave(spinlock_t *lock);
void hostbench_spin_unlock_irqrestore(spinlock_t *lock, unsigned long flags);

#define spin_lock(l)			hostbench_spin_lock(l)
#define spin_unlock(l)			hostbench_spin_unlock(l)
#define spin_trylock(l)			hostbench_spin_trylock(l)
#define spin_lock_irq(l)		hostbench_spin_lock(l)
#define spin_unlock_irq(l)		hostbench_spin_unlock(l)
#define spin_lock_bh(l)			hostbench_spin_lock(l)
#define spin_unlock_bh(l)		hostbench_spin_unlock(l)
#define spin_lock_nested(l, s)		hostbench_spin_lock(l)
#define spin_lock_irqsave(l, flags) \
	do { (flags) = hostbench_spin_lock_irqsave(l); } while (0)
#define spin_unlock_irqrestore(l, flags) \
	hostbench_spin_unlock_irqrestore(l, flags)
#define spin_is_locked(l)		(READ_ONCE((l)->locked) != 0)
#define assert_spin_locked(l)		BUG_ON(!spin_is_locked(l))
#define raw_spin_lock(l)		spin_lock(l)
#define raw_spin_unlock(l)		spin_unlock(l)
#define raw_spin_lock_irqsave(l, f)	spin_lock_irqsave(l, f)
#define raw_spin_unlock_irqrestore(l, f) spin_unlock_irqrestore(l, f)

#define local_irq_save(flags)		do { (flags) = 0; } while (0)
#define local_irq_restore(flags)	do { (void)(flags); } while (0)
#define local_irq_disable()		do { } while (0)
#define local_irq_enable()		do { } while (0)
#define irqs_disabled()			0
#define in_interrupt()			0
#define in_task()			1
#define preempt_disable()		barrier()
#define preempt_enable()		barrier()
#endif
