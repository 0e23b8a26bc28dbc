/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host benchmark shim: glibc's declarations. memcpy, memset, memmove and
 * memcmp are the benchmark's own (shim.c), so that the counts do not
 * depend on which glibc variant the host CPU selects.
 */
#ifndef _HOSTBENCH_STRING_H
#define _HOSTBENCH_STRING_H
#include <string.h>
#include <linux/kernel.h>
#include <linux/errno.h>
ssize_t strscpy(char *dst, const char *src, size_t count);
#define strscpy_pad(d, s, c)	({ memset(d, 0, c); strscpy(d, s, c); })
static inline void memzero_explicit(void *s, size_t count)
{
	memset(s, 0, count);
	barrier();
}
void *kmemdup(const void *src, size_t len, gfp_t gfp);
#endif
