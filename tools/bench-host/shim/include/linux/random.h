/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host benchmark shim: a fixed-seed generator, so that every run hashes
 * with the same siphash key and the counts repeat exactly.
 */
#ifndef _HOSTBENCH_RANDOM_H
#define _HOSTBENCH_RANDOM_H
#include <linux/kernel.h>
void get_random_bytes(void *buf, size_t len);
u32 get_random_u32(void);
u64 get_random_u64(void);
static inline u32 get_random_u32_below(u32 ceil)
{
	return (u32)(((u64)get_random_u32() * ceil) >> 32);
}
#endif
