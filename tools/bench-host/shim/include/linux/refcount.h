/* SPDX-License-Identifier: GPL-2.0 */
/* Host benchmark shim: refcount_t with the kernel's saturation checks. */
#ifndef _HOSTBENCH_REFCOUNT_H
#define _HOSTBENCH_REFCOUNT_H
#include <linux/atomic.h>

typedef struct refcount_struct {
	atomic_t refs;
} refcount_t;

#define REFCOUNT_INIT(n)	{ .refs = ATOMIC_INIT(n), }

static inline void refcount_set(refcount_t *r, int n) { atomic_set(&r->refs, n); }
static inline unsigned int refcount_read(const refcount_t *r) { return atomic_read(&r->refs); }

static inline void refcount_add(int i, refcount_t *r)
{
	int old = atomic_fetch_add_relaxed(i, &r->refs);

	if (unlikely(old <= 0 || old + i <= 0))
		hostbench_die(__FILE__, __LINE__, "refcount_add on 0 or saturated");
}

static inline void refcount_inc(refcount_t *r)
{
	refcount_add(1, r);
}

static inline bool refcount_inc_not_zero(refcount_t *r)
{
	int old = atomic_read(&r->refs);

	do {
		if (!old)
			return false;
	} while (!atomic_try_cmpxchg(&r->refs, &old, old + 1));
	return true;
}

static inline bool refcount_sub_and_test(int i, refcount_t *r)
{
	int old = atomic_fetch_sub_release(i, &r->refs);

	if (old == i)
		return true;
	if (unlikely(old < 0 || old - i < 0))
		hostbench_die(__FILE__, __LINE__, "refcount underflow");
	return false;
}

static inline bool refcount_dec_and_test(refcount_t *r)
{
	return refcount_sub_and_test(1, r);
}

static inline void refcount_dec(refcount_t *r)
{
	if (unlikely(refcount_sub_and_test(1, r)))
		hostbench_die(__FILE__, __LINE__, "refcount_dec hit 0");
}
#endif
