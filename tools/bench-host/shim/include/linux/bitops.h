/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HOSTBENCH_BITOPS_H
#define _HOSTBENCH_BITOPS_H
#include <linux/types.h>

#define BIT(nr)			(1UL << (nr))
#define BIT_ULL(nr)		(1ULL << (nr))
#define BIT_MASK(nr)		(1UL << ((nr) % BITS_PER_LONG))
#define BIT_WORD(nr)		((nr) / BITS_PER_LONG)
#define BITS_TO_LONGS(nr)	(((nr) + BITS_PER_LONG - 1) / BITS_PER_LONG)
#define GENMASK(h, l)		(((~0UL) - (1UL << (l)) + 1) & (~0UL >> (BITS_PER_LONG - 1 - (h))))
#define GENMASK_ULL(h, l)	(((~0ULL) - (1ULL << (l)) + 1) & (~0ULL >> (63 - (h))))

static inline int fls(unsigned int x)
{
	return x ? 32 - __builtin_clz(x) : 0;
}

static inline int fls64(u64 x)
{
	return x ? 64 - __builtin_clzll(x) : 0;
}

static inline unsigned int fls_long(unsigned long l)
{
	return fls64(l);
}

static inline unsigned long __fls(unsigned long word)
{
	return 63 - __builtin_clzl(word);
}

static inline unsigned long __ffs(unsigned long word)
{
	return __builtin_ctzl(word);
}

static inline unsigned int __ffs64(u64 word)
{
	return __builtin_ctzll(word);
}

static inline int ffs(int x)
{
	return __builtin_ffs(x);
}

static inline unsigned long ffz(unsigned long word)
{
	return __builtin_ctzl(~word);
}

#define hweight8(w)		__builtin_popcount((u8)(w))
#define hweight16(w)		__builtin_popcount((u16)(w))
#define hweight32(w)		__builtin_popcount((u32)(w))
#define hweight64(w)		__builtin_popcountll((u64)(w))
#define hweight_long(w)		__builtin_popcountl((unsigned long)(w))

static inline u64 rol64(u64 word, unsigned int shift)
{
	return (word << (shift & 63)) | (word >> ((-shift) & 63));
}

static inline u64 ror64(u64 word, unsigned int shift)
{
	return (word >> (shift & 63)) | (word << ((-shift) & 63));
}

static inline u32 rol32(u32 word, unsigned int shift)
{
	return (word << (shift & 31)) | (word >> ((-shift) & 31));
}

static inline u32 ror32(u32 word, unsigned int shift)
{
	return (word >> (shift & 31)) | (word << ((-shift) & 31));
}

/* Single threaded: the atomic bit operations need no lock prefix here. */
static inline void __set_bit(unsigned long nr, volatile unsigned long *addr)
{
	addr[BIT_WORD(nr)] |= BIT_MASK(nr);
}

static inline void __clear_bit(unsigned long nr, volatile unsigned long *addr)
{
	addr[BIT_WORD(nr)] &= ~BIT_MASK(nr);
}

static inline bool test_bit(unsigned long nr, const volatile unsigned long *addr)
{
	return (addr[BIT_WORD(nr)] >> (nr % BITS_PER_LONG)) & 1;
}

static inline void set_bit(unsigned long nr, volatile unsigned long *addr)
{
	__atomic_fetch_or(&addr[BIT_WORD(nr)], BIT_MASK(nr), __ATOMIC_SEQ_CST);
}

static inline void clear_bit(unsigned long nr, volatile unsigned long *addr)
{
	__atomic_fetch_and(&addr[BIT_WORD(nr)], ~BIT_MASK(nr), __ATOMIC_SEQ_CST);
}

static inline bool test_and_set_bit(unsigned long nr, volatile unsigned long *addr)
{
	return __atomic_fetch_or(&addr[BIT_WORD(nr)], BIT_MASK(nr),
				 __ATOMIC_SEQ_CST) & BIT_MASK(nr);
}

static inline bool test_and_clear_bit(unsigned long nr, volatile unsigned long *addr)
{
	return __atomic_fetch_and(&addr[BIT_WORD(nr)], ~BIT_MASK(nr),
				  __ATOMIC_SEQ_CST) & BIT_MASK(nr);
}
#endif
