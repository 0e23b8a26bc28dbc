/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A queue's statistics (stats.c): the duration histograms the hot paths
 * feed (inline here) and kwq_stats_fill(), the one snapshot every reader
 * of them goes through (by queue.c's kwq_get_stats(): metrics.c's
 * Prometheus text, dev.c's STATS).
 * The counters themselves are plain fields of struct kwq under q->lock;
 * ->queue_hist and ->work_hist are this file's.
 */
#ifndef _KWQ_STATS_H
#define _KWQ_STATS_H

#include <linux/bitops.h>
#include <linux/kwq.h>
#include <linux/string.h>

#include "layout.h"

/* stats.c: upper bounds of the buckets, and the bucket of each bit length */
extern const u64 kwq_hist_bounds[KWQ_HIST_BUCKETS + 1];
extern u8 kwq_hist_low[65];

/* Histogram bucket of a duration: the first bound >= @ns. */
static inline unsigned int kwq_hist_bucket(u64 ns)
{
	unsigned int i = kwq_hist_low[fls64(ns)];

	return i + (ns > kwq_hist_bounds[i]);
}

static inline void kwq_hist_observe(struct kwq_hist *h, u64 ns)
{
	h->counts[kwq_hist_bucket(ns)]++;
	h->sum_ns += ns;
}

/* Take back an observation of exactly @ns (kwq_unget()). */
static inline void kwq_hist_unobserve(struct kwq_hist *h, u64 ns)
{
	h->counts[kwq_hist_bucket(ns)]--;
	h->sum_ns -= ns;
}

void kwq_hist_init(void);

/*
 * Every counter and gauge of @q into @st (zeroed by the caller), with
 * q->lock held: kwq_get_stats() takes the lock and applies the pending
 * adds of key handles first, which only queue.c may do.
 */
void kwq_stats_fill(struct kwq *q, struct kwq_stats *st);

struct kwq_stats_args;
/* @s in the STATS ioctl's struct (all of @a written). */
void kwq_stats_to_args(const struct kwq_stats *s, struct kwq_stats_args *a);

/*
 * kwq_get_stats() in the STATS ioctl's struct, the one form both the
 * ioctl and the debugfs metrics file (include/kwq/metrics.h) read.
 * Inline so that stats.c, which queue.c uses, calls nothing of queue.c.
 */
static inline int kwq_get_stats_args(struct kwq *q, struct kwq_stats_args *a)
{
	struct kwq_stats st;
	int ret;

	ret = kwq_get_stats(q, &st);
	if (ret)
		memset(a, 0, sizeof(*a));
	else
		kwq_stats_to_args(&st, a);
	return ret;
}

#endif /* _KWQ_STATS_H */
