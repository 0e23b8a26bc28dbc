/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host benchmark shim: x86's word-at-a-time helpers as lib/siphash.c uses
 * them. load_unaligned_zeropad() may read up to 7 bytes past the end of
 * the data, as in the kernel; there an exception fixup pads a read that
 * crosses into an unmapped page with zeroes, here the driver keeps its
 * key buffers padded so that never happens.
 */
#ifndef _HOSTBENCH_WORD_AT_A_TIME_H
#define _HOSTBENCH_WORD_AT_A_TIME_H
#include <linux/unaligned.h>
#define bytemask_from_count(cnt)	(~(~0ul << (cnt) * 8))
static inline unsigned long load_unaligned_zeropad(const void *addr)
{
	return __get_unaligned_t(unsigned long, addr);
}
#endif
