// SPDX-License-Identifier: GPL-2.0
/*
 * A queue's statistics: the duration histograms (client-go's
 * queue_duration and work_duration, in buckets of powers of ten) and
 * kwq_stats_fill(), which copies every counter and gauge of a queue in the
 * critical section of its caller (kwq_get_stats() in queue.c, which
 * first applies the key handles' pending adds), so a reader sees one
 * consistent moment. Readers
 * never touch struct kwq themselves. Documentation/metrics.rst names
 * what each figure is.
 */

#include <kunit/visibility.h>
#include <linux/bitops.h>
#include <linux/kwq.h>
#include <linux/list.h>
#include <linux/rbtree.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <uapi/linux/kwq.h>

#include "stats.h"

/* Upper bounds of the histogram buckets: 10^(i+1) ns, +Inf last. */
const u64 kwq_hist_bounds[KWQ_HIST_BUCKETS + 1] = {
	10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
	100000000ULL, 1000000000ULL, 10000000000ULL, U64_MAX,
};

static_assert(KWQ_HIST_BUCKETS == 10);

/*
 * The bucket of the smallest duration of each bit length (fls64() 0..64),
 * from kwq_hist_init(). A bit length spans less than a factor of two and
 * the bounds are a factor of ten apart, so a duration is in that bucket
 * or the next.
 */
u8 kwq_hist_low[65];

void kwq_hist_init(void)
{
	unsigned int f, i = 0;

	for (f = 0; f <= 64; f++) {
		u64 low = f ? 1ULL << (f - 1) : 0;

		while (low > kwq_hist_bounds[i])
			i++;
		kwq_hist_low[f] = i;
	}
}

static void kwq_hist_snapshot(const struct kwq_hist *h,
			      struct kwq_histogram *out)
{
	u64 sum = 0;
	unsigned int i;

	for (i = 0; i < KWQ_HIST_BUCKETS; i++) {
		sum += h->counts[i];
		out->le[i] = sum;
	}
	out->count = sum + h->counts[KWQ_HIST_BUCKETS];
	out->sum_ns = h->sum_ns;
}

/* For queue.c's kwq_get_stats(): see stats.h. */
void kwq_stats_fill(struct kwq *q, struct kwq_stats *st)
{
	struct kwq_node *oldest;
	struct rb_node *rb;
	u64 now, listed = 0;
	unsigned int i = 0;

	lockdep_assert_held(&q->lock);
	now = kwq_now(q);
	st->depth = q->nr_ready + q->nr_dirty;
	/* Sum of now - start_ns; the true value fits, so modulo 2^64 works. */
	st->unfinished_work_ns = (u64)q->nr_processing * now - q->start_ns_sum;
	/* The oldest key, past the marks of releases under way (lease 0). */
	list_for_each_entry(oldest, &q->processing, link) {
		if (oldest->lease) {
			st->longest_running_ns = kwq_since(now,
							   oldest->start_ns);
			break;
		}
	}
	kwq_hist_snapshot(&q->queue_hist, &st->queue_duration);
	kwq_hist_snapshot(&q->work_hist, &st->work_duration);
	for (rb = rb_first_cached(&q->levels);
	     rb && i < KWQ_STATS_PRIO_LEVELS; rb = rb_next(rb), i++) {
		const struct kwq_level *l = rb_entry(rb, struct kwq_level,
						     ready_rb);

		st->prio_len[i].priority = l->prio;
		st->prio_len[i].len = l->len;
		listed += l->len;
	}
	st->nr_prio_levels = i;
	st->prio_len_other = q->nr_ready - listed;
	st->len = q->nr_ready;
	st->waiting = q->nr_waiting;
	st->processing = q->nr_processing;
	st->adds_total = q->adds_total;
	st->retries_total = q->retries_total;
	st->dropped_at_shutdown = q->dropped_at_shutdown;
	st->lease_returns = q->lease_returns;
	st->failure_records = q->nr_failure_records;
	st->failure_records_evicted = q->failure_records_evicted;
	st->processing_timeouts_total = q->processing_timeouts_total;
	st->shutting_down = q->shutting_down;
	st->dead = q->nr_dead;
	st->dead_total = q->dead_total;
	st->dead_dropped_total = q->dead_dropped_total;
}

static void kwq_hist_to_args(struct kwq_stats_hist *dst,
			     const struct kwq_histogram *src)
{
	memcpy(dst->le, src->le, sizeof(dst->le));
	dst->count = src->count;
	dst->sum_ns = src->sum_ns;
}

/* For kwq_get_stats_args(): see stats.h. */
void kwq_stats_to_args(const struct kwq_stats *s, struct kwq_stats_args *a)
{
	unsigned int i;

	memset(a, 0, sizeof(*a));
	a->len = s->len;
	a->waiting = s->waiting;
	a->processing = s->processing;
	a->adds_total = s->adds_total;
	a->retries_total = s->retries_total;
	a->dropped_at_shutdown = s->dropped_at_shutdown;
	a->lease_returns = s->lease_returns;
	a->failure_records = s->failure_records;
	a->shutting_down = s->shutting_down;
	a->depth = s->depth;
	a->failure_records_evicted = s->failure_records_evicted;
	a->unfinished_work_ns = s->unfinished_work_ns;
	a->longest_running_ns = s->longest_running_ns;
	kwq_hist_to_args(&a->queue_duration, &s->queue_duration);
	kwq_hist_to_args(&a->work_duration, &s->work_duration);
	a->nr_prios = s->nr_prio_levels;
	for (i = 0; i < s->nr_prio_levels; i++) {
		a->prios[i].priority = s->prio_len[i].priority;
		a->prios[i].len = s->prio_len[i].len;
	}
	a->prios_other = s->prio_len_other;
	a->processing_timeouts_total = s->processing_timeouts_total;
	a->dead = s->dead;
	a->dead_total = s->dead_total;
	a->dead_dropped_total = s->dead_dropped_total;
}
