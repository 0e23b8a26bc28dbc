/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Table benchmark shim: bit spinlocks, as the kernel's (CONFIG_SMP) on
 * x86: a locked test-and-set of the bit to take, a locked and of the
 * bit's mask to drop; no cheaper than the kernel's uncontended path.
 * preempt_disable() is a compiler barrier (spinlock.h), as in a
 * non-preemptible kernel. The benchmark is single threaded, so a bit
 * found set is a self-deadlock and stops it (where the kernel would spin).
 *
 * Like the spinlock shim (shim.c), every acquire and release is reported
 * to hostbench_lock_hook while one is set: the driver dumps the critical
 * sections of the table growth with it. rhashtable also releases a
 * bucket's bit lock by storing a new pointer in the bucket
 * (rht_assign_unlock()); it marks that place, and bit_spin_unlock(), with
 * sparse's __release(bitlock), which is where the release is reported.
 */
#ifndef _HOSTBENCH_BIT_SPINLOCK_H
#define _HOSTBENCH_BIT_SPINLOCK_H
#include <linux/kernel.h>
#include <linux/spinlock.h>
#include <hostbench.h>

/*
 * Only __release(bitlock) is reported; any other __release() after this
 * header would not compile, rather than be ignored.
 */
#undef __release
#define __release(x)	__hostbench_release_##x()

static inline void __hostbench_release_bitlock(void)
{
	if (unlikely(hostbench_lock_hook))
		hostbench_lock_hook(NULL, false);
}

/* x86's test_and_set_bit_lock(): lock bts. */
static inline bool test_and_set_bit_lock(long nr, volatile unsigned long *addr)
{
	return __atomic_fetch_or(&addr[BIT_WORD(nr)], BIT_MASK(nr),
				 __ATOMIC_ACQUIRE) & BIT_MASK(nr);
}

/* x86's clear_bit_unlock(): a locked and of the bit's mask (lock andb). */
static inline void clear_bit_unlock(long nr, volatile unsigned long *addr)
{
	__atomic_fetch_and(&addr[BIT_WORD(nr)], ~BIT_MASK(nr), __ATOMIC_RELEASE);
}

static inline void bit_spin_lock(int bitnum, unsigned long *addr)
{
	preempt_disable();
	/* The kernel spins on test_bit() here; nobody would ever clear it. */
	if (unlikely(test_and_set_bit_lock(bitnum, addr)))
		hostbench_die(__FILE__, __LINE__,
			      "bit spinlock taken twice (self-deadlock)");
	if (unlikely(hostbench_lock_hook))
		hostbench_lock_hook(addr, true);
}

static inline int bit_spin_trylock(int bitnum, unsigned long *addr)
{
	preempt_disable();
	if (unlikely(test_and_set_bit_lock(bitnum, addr))) {
		preempt_enable();
		return 0;
	}
	if (unlikely(hostbench_lock_hook))
		hostbench_lock_hook(addr, true);
	return 1;
}

static inline void bit_spin_unlock(int bitnum, unsigned long *addr)
{
	clear_bit_unlock(bitnum, addr);
	preempt_enable();
	__release(bitlock);
}

static inline int bit_spin_is_locked(int bitnum, unsigned long *addr)
{
	return test_bit(bitnum, addr);
}
#endif
