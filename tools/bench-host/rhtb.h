/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The table benchmark's rhashtable user (rhtb.c, built as kernel code),
 * as the driver (tablebench.c) sees it.
 */
#ifndef _HOSTBENCH_RHTB_H
#define _HOSTBENCH_RHTB_H
#include <linux/types.h>

enum rhtb_hash {
	RHTB_HSIPHASH,		/* hsiphash under a random key, as kwq */
	RHTB_JHASH,		/* rhashtable's default for a variable key */
};

struct rhtb;

struct rhtb *rhtb_create(enum rhtb_hash hash);
void rhtb_destroy(struct rhtb *t);
/* Insert a key that is not there: 0, or -EEXIST, -ENOMEM... */
int rhtb_insert(struct rhtb *t, const void *key, size_t len);
/* Remove a key that is there: 0, or -ENOENT. */
int rhtb_remove(struct rhtb *t, const void *key, size_t len);
unsigned long rhtb_count(struct rhtb *t);
/*
 * For the driver, outside measured runs: the indices (ascending) of the
 * current table's buckets with the longest chains, up to @max of them;
 * returns how many, and the longest chain's length in *@len.
 */
int rhtb_longest_chains(struct rhtb *t, unsigned long *idx, int max,
			unsigned int *len);
/* The current table: its buckets, and the first bucket's address. */
unsigned long rhtb_buckets(struct rhtb *t);
const void *rhtb_bucket0(struct rhtb *t);

#endif
