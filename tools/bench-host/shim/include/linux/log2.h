/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _HOSTBENCH_LOG2_H
#define _HOSTBENCH_LOG2_H
#include <linux/bitops.h>
#define ilog2(n) ((int)(sizeof(n) <= 4 ? fls((u32)(n)) - 1 : fls64((u64)(n)) - 1))
static inline bool is_power_of_2(unsigned long n)
{
	return n != 0 && ((n & (n - 1)) == 0);
}
static inline unsigned long roundup_pow_of_two(unsigned long n)
{
	return n <= 1 ? 1 : 1UL << fls_long(n - 1);
}
static inline unsigned long rounddown_pow_of_two(unsigned long n)
{
	return 1UL << (fls_long(n) - 1);
}
#define order_base_2(n)	((n) > 1 ? ilog2((n) - 1) + 1 : 0)
#endif
