/* SPDX-License-Identifier: GPL-2.0 OR LGPL-2.1-or-later */
/*
 * The metrics of a kwq queue, once: name, Prometheus type, help text and
 * where each value is in struct kwq_stats_args (the STATS ioctl's
 * answer), and the one renderer of their Prometheus text. The kernel's
 * debugfs file (src/metrics.c) and libkwq's kwq_stats_prometheus(), which
 * kwqctl prints, both compile this header, so their output is the same
 * byte for byte. Documentation/metrics.rst says what each figure is.
 *
 * Neither kernel API nor ABI: a header of source shared by the module and
 * libkwq. It needs struct kwq_stats_args (<linux/kwq.h> of the uapi) and
 * a print function: seq_printf() in the kernel, fprintf() in libkwq.
 */
#ifndef _KWQ_METRICS_TABLE_H
#define _KWQ_METRICS_TABLE_H

#ifdef __KERNEL__
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/stddef.h>
#include <uapi/linux/kwq.h>
#else
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/kwq.h>
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif
#endif

enum kwq_metric_kind {
	KWQ_METRIC_COUNT,	/* a __u64 as it is */
	KWQ_METRIC_FLAG,	/* a __u32 as it is */
	KWQ_METRIC_SECONDS,	/* a __u64 of nanoseconds, as seconds */
	KWQ_METRIC_HIST,	/* a struct kwq_stats_hist */
	KWQ_METRIC_PRIOS,	/* the per-priority depths, a label each */
};

struct kwq_metric {
	const char *name;
	const char *type;	/* gauge, counter or histogram */
	const char *help;
	enum kwq_metric_kind kind;
	size_t off;		/* in struct kwq_stats_args */
};

#define KWQ_METRIC(n, t, h, k, f) \
	{ .name = n, .type = t, .help = h, .kind = k, \
	  .off = offsetof(struct kwq_stats_args, f) }

/* client-go's workqueue metrics first, then kwq's own, in this order. */
static const struct kwq_metric kwq_metrics[] = {
	KWQ_METRIC("workqueue_depth", "gauge",
		   "Current depth of workqueue",
		   KWQ_METRIC_COUNT, depth),
	KWQ_METRIC("workqueue_adds_total", "counter",
		   "Total number of adds handled by workqueue",
		   KWQ_METRIC_COUNT, adds_total),
	KWQ_METRIC("workqueue_queue_duration_seconds", "histogram",
		   "How long in seconds an item stays in workqueue before being requested.",
		   KWQ_METRIC_HIST, queue_duration),
	KWQ_METRIC("workqueue_work_duration_seconds", "histogram",
		   "How long in seconds processing an item from workqueue takes.",
		   KWQ_METRIC_HIST, work_duration),
	KWQ_METRIC("workqueue_unfinished_work_seconds", "gauge",
		   "How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
		   KWQ_METRIC_SECONDS, unfinished_work_ns),
	KWQ_METRIC("workqueue_longest_running_processor_seconds", "gauge",
		   "How many seconds has the longest running processor for workqueue been running.",
		   KWQ_METRIC_SECONDS, longest_running_ns),
	KWQ_METRIC("workqueue_retries_total", "counter",
		   "Total number of retries handled by workqueue",
		   KWQ_METRIC_COUNT, retries_total),
	KWQ_METRIC("kwq_ready", "gauge",
		   "Keys ready to be handed out (client-go Len)",
		   KWQ_METRIC_COUNT, len),
	KWQ_METRIC("kwq_waiting_depth", "gauge",
		   "Keys waiting for a delay to pass",
		   KWQ_METRIC_COUNT, waiting),
	KWQ_METRIC("kwq_processing", "gauge",
		   "Keys handed out and not yet done",
		   KWQ_METRIC_COUNT, processing),
	KWQ_METRIC("kwq_dropped_at_shutdown_total", "counter",
		   "Delayed keys dropped by shutdown",
		   KWQ_METRIC_COUNT, dropped_at_shutdown),
	KWQ_METRIC("kwq_lease_returns_total", "counter",
		   "Processing keys put back because their holder went away",
		   KWQ_METRIC_COUNT, lease_returns),
	KWQ_METRIC("kwq_failure_records", "gauge",
		   "Keys with a non-zero rate limiter failure count",
		   KWQ_METRIC_COUNT, failure_records),
	KWQ_METRIC("kwq_failure_records_evicted_total", "counter",
		   "Idle failure records forgotten to honour the bound",
		   KWQ_METRIC_COUNT, failure_records_evicted),
	KWQ_METRIC("kwq_processing_timeouts_total", "counter",
		   "Processing keys taken back at their deadline and requeued as failures",
		   KWQ_METRIC_COUNT, processing_timeouts_total),
	KWQ_METRIC("kwq_priority_ready", "gauge",
		   "Ready keys of the highest priority levels (their Len); other: the rest",
		   KWQ_METRIC_PRIOS, prios),
	KWQ_METRIC("kwq_shutting_down", "gauge",
		   "1 once the queue was shut down",
		   KWQ_METRIC_FLAG, shutting_down),
	KWQ_METRIC("kwq_dead", "gauge",
		   "Keys in the dead set: failed max_retries times, not requeued",
		   KWQ_METRIC_COUNT, dead),
	KWQ_METRIC("kwq_dead_total", "counter",
		   "Keys moved to the dead set",
		   KWQ_METRIC_COUNT, dead_total),
	KWQ_METRIC("kwq_dead_dropped_total", "counter",
		   "Dead keys dropped to honour the dead set's bound",
		   KWQ_METRIC_COUNT, dead_dropped_total),
};

/*
 * The renderer prints through @pr, seq_printf() or fprintf() behind
 * @ctx; the kernel checks the formats below against their arguments.
 */
#ifdef __KERNEL__
#define KWQ_METRICS_PR	__printf(2, 3)
#else
#define KWQ_METRICS_PR
#endif

#ifndef __KERNEL__
/* The renderer's printer in userspace: @ctx is a FILE *. */
static inline void kwq_metrics_stdio(void *ctx, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	vfprintf(ctx, fmt, args);
	va_end(args);
}
#endif

/* Histogram bounds as client_golang prints them (10^(i+1) ns). */
static const char *const kwq_metrics_le[KWQ_STATS_BUCKETS] = {
	"1e-08", "1e-07", "1e-06", "1e-05", "0.0001",
	"0.001", "0.01", "0.1", "1", "10",
};

/* @ns in whole seconds, the nanoseconds left in *@frac. */
static inline __u64 kwq_metrics_split(__u64 ns, __u32 *frac)
{
#ifdef __KERNEL__
	return div_u64_rem(ns, 1000000000U, frac);
#else
	*frac = (__u32)(ns % 1000000000U);
	return ns / 1000000000U;
#endif
}

/* Nanoseconds as seconds, exactly, without trailing zeroes. */
static inline void
kwq_metrics_seconds(KWQ_METRICS_PR void (*pr)(void *ctx, const char *fmt, ...),
		    void *ctx, __u64 ns)
{
	__u32 frac;
	__u64 sec = kwq_metrics_split(ns, &frac);
	int width = 9;

	if (!frac) {
		pr(ctx, "%llu\n", (unsigned long long)sec);
		return;
	}
	while (!(frac % 10)) {
		frac /= 10;
		width--;
	}
	pr(ctx, "%llu.%0*u\n", (unsigned long long)sec, width, frac);
}

static inline void
kwq_metrics_hist(KWQ_METRICS_PR void (*pr)(void *ctx, const char *fmt, ...),
		 void *ctx, const char *m, const char *q,
		 const struct kwq_stats_hist *h)
{
	unsigned int i;

	for (i = 0; i < KWQ_STATS_BUCKETS; i++)
		pr(ctx, "%s_bucket{name=\"%s\",le=\"%s\"} %llu\n", m, q,
		   kwq_metrics_le[i], (unsigned long long)h->le[i]);
	pr(ctx, "%s_bucket{name=\"%s\",le=\"+Inf\"} %llu\n", m, q,
	   (unsigned long long)h->count);
	pr(ctx, "%s_sum{name=\"%s\"} ", m, q);
	kwq_metrics_seconds(pr, ctx, h->sum_ns);
	pr(ctx, "%s_count{name=\"%s\"} %llu\n", m, q,
	   (unsigned long long)h->count);
}

static inline void
kwq_metrics_prios(KWQ_METRICS_PR void (*pr)(void *ctx, const char *fmt, ...),
		  void *ctx, const char *m, const char *q,
		  const struct kwq_stats_args *st)
{
	unsigned int i;

	for (i = 0; i < st->nr_prios && i < KWQ_STATS_PRIOS; i++)
		pr(ctx, "%s{name=\"%s\",priority=\"%d\"} %llu\n", m, q,
		   st->prios[i].priority,
		   (unsigned long long)st->prios[i].len);
	if (st->prios_other)
		pr(ctx, "%s{name=\"%s\",priority=\"other\"} %llu\n", m, q,
		   (unsigned long long)st->prios_other);
}

/* The samples of metric @m for queue @q's statistics @st. */
static inline void
kwq_metrics_samples(KWQ_METRICS_PR void (*pr)(void *ctx, const char *fmt, ...),
		    void *ctx, const struct kwq_metric *m, const char *q,
		    const struct kwq_stats_args *st)
{
	const void *v = (const char *)st + m->off;

	switch (m->kind) {
	case KWQ_METRIC_COUNT:
		pr(ctx, "%s{name=\"%s\"} %llu\n", m->name, q,
		   (unsigned long long)*(const __u64 *)v);
		break;
	case KWQ_METRIC_FLAG:
		pr(ctx, "%s{name=\"%s\"} %u\n", m->name, q, *(const __u32 *)v);
		break;
	case KWQ_METRIC_SECONDS:
		pr(ctx, "%s{name=\"%s\"} ", m->name, q);
		kwq_metrics_seconds(pr, ctx, *(const __u64 *)v);
		break;
	case KWQ_METRIC_HIST:
		kwq_metrics_hist(pr, ctx, m->name, q, v);
		break;
	case KWQ_METRIC_PRIOS:
		kwq_metrics_prios(pr, ctx, m->name, q, st);
		break;
	}
}

/*
 * The Prometheus text of @n queues, one exposition: each metric's HELP
 * and TYPE once, then its samples of every queue, queue @qs[i]'s
 * statistics @sts[i] with the label name="@qs[i]".
 */
static inline void
kwq_metrics_render_all(KWQ_METRICS_PR void (*pr)(void *ctx, const char *fmt, ...),
		       void *ctx, unsigned int n, const char *const *qs,
		       const struct kwq_stats_args *sts)
{
	const struct kwq_metric *m;
	unsigned int i;

	for (m = kwq_metrics; m < kwq_metrics + ARRAY_SIZE(kwq_metrics); m++) {
		pr(ctx, "# HELP %s %s\n# TYPE %s %s\n", m->name, m->help,
		   m->name, m->type);
		for (i = 0; i < n; i++)
			kwq_metrics_samples(pr, ctx, m, qs[i], &sts[i]);
	}
}

/* The Prometheus text of queue @q's statistics @st, label name="@q". */
static inline void
kwq_metrics_render(KWQ_METRICS_PR void (*pr)(void *ctx, const char *fmt, ...),
		   void *ctx, const char *q,
		   const struct kwq_stats_args *st)
{
	kwq_metrics_render_all(pr, ctx, 1, &q, st);
}

#endif /* _KWQ_METRICS_TABLE_H */
