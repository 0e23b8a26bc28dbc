/* SPDX-License-Identifier: GPL-2.0 */
/* Host benchmark shim: atomics as x86 does them (lock-prefixed RMW). */
#ifndef _HOSTBENCH_ATOMIC_H
#define _HOSTBENCH_ATOMIC_H
#include <linux/kernel.h>

#define ATOMIC_INIT(i)		{ (i) }
#define ATOMIC_LONG_INIT(i)	{ (i) }
#define ATOMIC64_INIT(i)	{ (i) }

#define HB_ATOMIC_OPS(pfx, atype, t)					\
static inline t pfx##_read(const atype *v) { return READ_ONCE(v->counter); } \
static inline void pfx##_set(atype *v, t i) { WRITE_ONCE(v->counter, i); } \
static inline void pfx##_add(t i, atype *v) { __atomic_fetch_add(&v->counter, i, __ATOMIC_SEQ_CST); } \
static inline void pfx##_sub(t i, atype *v) { __atomic_fetch_sub(&v->counter, i, __ATOMIC_SEQ_CST); } \
static inline void pfx##_inc(atype *v) { pfx##_add(1, v); }		\
static inline void pfx##_dec(atype *v) { pfx##_sub(1, v); }		\
static inline t pfx##_add_return(t i, atype *v) { return __atomic_add_fetch(&v->counter, i, __ATOMIC_SEQ_CST); } \
static inline t pfx##_sub_return(t i, atype *v) { return __atomic_sub_fetch(&v->counter, i, __ATOMIC_SEQ_CST); } \
static inline t pfx##_fetch_add(t i, atype *v) { return __atomic_fetch_add(&v->counter, i, __ATOMIC_SEQ_CST); } \
static inline t pfx##_fetch_sub(t i, atype *v) { return __atomic_fetch_sub(&v->counter, i, __ATOMIC_SEQ_CST); } \
static inline t pfx##_fetch_add_relaxed(t i, atype *v) { return __atomic_fetch_add(&v->counter, i, __ATOMIC_RELAXED); } \
static inline t pfx##_fetch_sub_release(t i, atype *v) { return __atomic_fetch_sub(&v->counter, i, __ATOMIC_RELEASE); } \
static inline t pfx##_inc_return(atype *v) { return pfx##_add_return(1, v); } \
static inline t pfx##_dec_return(atype *v) { return pfx##_sub_return(1, v); } \
static inline bool pfx##_dec_and_test(atype *v) { return pfx##_sub_return(1, v) == 0; } \
static inline bool pfx##_inc_and_test(atype *v) { return pfx##_add_return(1, v) == 0; } \
static inline bool pfx##_sub_and_test(t i, atype *v) { return pfx##_sub_return(i, v) == 0; } \
static inline t pfx##_xchg(atype *v, t n) { return __atomic_exchange_n(&v->counter, n, __ATOMIC_SEQ_CST); } \
static inline t pfx##_cmpxchg(atype *v, t o, t n)			\
{									\
	__atomic_compare_exchange_n(&v->counter, &o, n, false,		\
				    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
	return o;							\
}									\
static inline bool pfx##_try_cmpxchg(atype *v, t *o, t n)		\
{									\
	return __atomic_compare_exchange_n(&v->counter, o, n, false,	\
					   __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
}

HB_ATOMIC_OPS(atomic, atomic_t, int)

/* The bitwise ones of kwq's key handles (lock or, lock and, cmpxchg loop). */
static inline void atomic_or(int i, atomic_t *v) { __atomic_fetch_or(&v->counter, i, __ATOMIC_SEQ_CST); }
static inline void atomic_andnot(int i, atomic_t *v) { __atomic_fetch_and(&v->counter, ~i, __ATOMIC_SEQ_CST); }
static inline int atomic_fetch_or(int i, atomic_t *v) { return __atomic_fetch_or(&v->counter, i, __ATOMIC_SEQ_CST); }

HB_ATOMIC_OPS(atomic_long, atomic_long_t, long)
HB_ATOMIC_OPS(atomic64, atomic64_t, s64)

#define smp_mb()		__atomic_thread_fence(__ATOMIC_SEQ_CST)
#define smp_rmb()		barrier()
#define smp_wmb()		barrier()
#define smp_mb__before_atomic()	barrier()
#define smp_mb__after_atomic()	barrier()
#define smp_load_acquire(p)	__atomic_load_n(p, __ATOMIC_ACQUIRE)
#define smp_store_release(p, v)	__atomic_store_n(p, v, __ATOMIC_RELEASE)
#define smp_store_mb(var, v)	((void)__atomic_exchange_n(&(var), v, __ATOMIC_SEQ_CST))
#define xchg(p, v)		__atomic_exchange_n(p, v, __ATOMIC_SEQ_CST)
#define cmpxchg(p, o, n) ({						\
	typeof(*(p)) __o = (o);						\
	__atomic_compare_exchange_n(p, &__o, n, false,			\
				    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
	__o; })
#endif
