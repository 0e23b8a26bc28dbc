/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The keys of the host benchmarks (hostbench.c, tablebench.c):
 * "namespace/deploy-NNNNNNN", 18 to 28 bytes, as a controller's keys.
 */
#ifndef _BENCHKEYS_H
#define _BENCHKEYS_H

#include <stddef.h>
#include <stdint.h>

static const char *const bench_namespaces[] = {
	"default", "kube-system", "monitoring", "payments",
	"web", "ingress-nginx", "batch", "ml-training",
};

/*
 * Key @i into @buf (at least 32 bytes; pad it to a word past the key:
 * lib/siphash.c reads the last partial word whole, as the kernel does,
 * with load_unaligned_zeropad()); returns its length. Byte loops, not
 * memcpy()/strlen(): the benchmark's memcpy is the one the core calls,
 * and its cost must be the core's alone.
 */
static inline size_t bench_key(char *buf, uint64_t i)
{
	const char *ns = bench_namespaces[i % 8], *s;
	char *p = buf;
	int d;

	for (s = ns; *s; s++)
		*p++ = *s;
	for (s = "/deploy-"; *s; s++)
		*p++ = *s;
	for (d = 6; d >= 0; d--) {
		p[d] = '0' + i % 10;
		i /= 10;
	}
	p += 7;
	return p - buf;
}

#endif /* _BENCHKEYS_H */
