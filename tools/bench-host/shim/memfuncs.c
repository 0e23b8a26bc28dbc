// SPDX-License-Identifier: GPL-2.0
/*
 * The benchmark's own memcpy, memset, memmove and memcmp. They take the
 * place of glibc's for the whole program, so that an instruction count
 * does not depend on which of glibc's CPU-specific variants the host (or
 * valgrind's view of it) selects. memset and memcpy follow the shape of
 * x86-64's memset_orig and memcpy_orig (arch/x86/lib: 64 and 32 bytes
 * per loop, then words, then bytes), the kernel's choice on CPUs without
 * fast short rep stos/movs; memcmp is lib/string.c's with
 * CONFIG_HAVE_EFFICIENT_UNALIGNED_ACCESS.
 * Compiled with -fno-builtin -fno-tree-loop-distribute-patterns so the
 * loops are not turned back into calls to themselves.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef uint64_t __attribute__((__may_alias__, __aligned__(1))) hb_word;
typedef uint32_t __attribute__((__may_alias__, __aligned__(1))) hb_u32;

void *memcpy(void *restrict dst, const void *restrict src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;
	uint64_t a, b, c, e;

	for (; n >= 32; n -= 32, d += 32, s += 32) {
		a = ((const hb_word *)s)[0];
		b = ((const hb_word *)s)[1];
		c = ((const hb_word *)s)[2];
		e = ((const hb_word *)s)[3];
		((hb_word *)d)[0] = a;
		((hb_word *)d)[1] = b;
		((hb_word *)d)[2] = c;
		((hb_word *)d)[3] = e;
	}
	/* The tail as memcpy_orig: overlapping head and tail moves. */
	if (n >= 16) {
		a = ((const hb_word *)s)[0];
		b = ((const hb_word *)s)[1];
		c = *(const hb_word *)(s + n - 16);
		e = *(const hb_word *)(s + n - 8);
		((hb_word *)d)[0] = a;
		((hb_word *)d)[1] = b;
		*(hb_word *)(d + n - 16) = c;
		*(hb_word *)(d + n - 8) = e;
	} else if (n >= 8) {
		a = *(const hb_word *)s;
		b = *(const hb_word *)(s + n - 8);
		*(hb_word *)d = a;
		*(hb_word *)(d + n - 8) = b;
	} else if (n >= 4) {
		uint32_t x = *(const hb_u32 *)s, y = *(const hb_u32 *)(s + n - 4);

		*(hb_u32 *)d = x;
		*(hb_u32 *)(d + n - 4) = y;
	} else if (n) {
		d[0] = s[0];
		if (n > 1) {
			d[1] = s[1];
			if (n > 2)
				d[2] = s[2];
		}
	}
	return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	if (d <= s || d >= s + n)
		return memcpy(dst, src, n);
	d += n;
	s += n;
	for (; n >= 8; n -= 8) {
		d -= 8;
		s -= 8;
		*(hb_word *)d = *(const hb_word *)s;
	}
	while (n--)
		*--d = *--s;
	return dst;
}

void *memset(void *dst, int c, size_t n)
{
	unsigned char *d = dst;
	uint64_t w = 0x0101010101010101ULL * (unsigned char)c;

	for (; n >= 64; n -= 64, d += 64) {
		((hb_word *)d)[0] = w;
		((hb_word *)d)[1] = w;
		((hb_word *)d)[2] = w;
		((hb_word *)d)[3] = w;
		((hb_word *)d)[4] = w;
		((hb_word *)d)[5] = w;
		((hb_word *)d)[6] = w;
		((hb_word *)d)[7] = w;
	}
	for (; n >= 8; n -= 8, d += 8)
		*(hb_word *)d = w;
	while (n--)
		*d++ = (unsigned char)c;
	return dst;
}

int memcmp(const void *cs, const void *ct, size_t count)
{
	const unsigned char *su1, *su2;
	int res = 0;

	if (count >= sizeof(unsigned long)) {
		const hb_word *u1 = cs;
		const hb_word *u2 = ct;

		do {
			if (*u1 != *u2)
				break;
			u1++;
			u2++;
			count -= sizeof(unsigned long);
		} while (count >= sizeof(unsigned long));
		cs = u1;
		ct = u2;
	}
	for (su1 = cs, su2 = ct; 0 < count; ++su1, ++su2, count--)
		if ((res = *su1 - *su2) != 0)
			break;
	return res;
}

int bcmp(const void *a, const void *b, size_t n)
{
	return memcmp(a, b, n);
}
