// SPDX-License-Identifier: GPL-2.0
/*
 * kwqctl: stats, the queue's counters as a table, one line of JSON or
 * Prometheus text (the queue's debugfs metrics file, byte for byte).
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>

#include "kwqctl.h"

static const struct stat_field {
	const char *name;	/* table and JSON */
	size_t off;
} stat_fields[] = {
	{ "len", offsetof(struct kwq_stats_args, len) },
	{ "adds_total", offsetof(struct kwq_stats_args, adds_total) },
	{ "retries_total", offsetof(struct kwq_stats_args, retries_total) },
	{ "waiting", offsetof(struct kwq_stats_args, waiting) },
	{ "processing", offsetof(struct kwq_stats_args, processing) },
	{ "dropped_at_shutdown",
	  offsetof(struct kwq_stats_args, dropped_at_shutdown) },
	{ "lease_returns", offsetof(struct kwq_stats_args, lease_returns) },
	{ "failure_records", offsetof(struct kwq_stats_args, failure_records) },
	{ "depth", offsetof(struct kwq_stats_args, depth) },
	{ "failure_records_evicted",
	  offsetof(struct kwq_stats_args, failure_records_evicted) },
	{ "unfinished_work_ns",
	  offsetof(struct kwq_stats_args, unfinished_work_ns) },
	{ "longest_running_ns",
	  offsetof(struct kwq_stats_args, longest_running_ns) },
};

#define NFIELDS ARRAY_SIZE(stat_fields)
#define FIELD(st, f) (*(const __u64 *)((const char *)(st) + (f)->off))

/* Histogram bounds as client_golang prints them (10^(i+1) ns). */
static const char *const hist_le[KWQ_STATS_BUCKETS] = {
	"1e-08", "1e-07", "1e-06", "1e-05", "0.0001",
	"0.001", "0.01", "0.1", "1", "10",
};

/* Nanoseconds as seconds, exactly, without trailing zeroes. */
static void print_seconds(uint64_t ns)
{
	unsigned int frac = (unsigned int)(ns % 1000000000u);
	int width = 9;

	if (!frac) {
		printf("%" PRIu64 "\n", ns / 1000000000u);
		return;
	}
	while (!(frac % 10)) {
		frac /= 10;
		width--;
	}
	printf("%" PRIu64 ".%0*u\n", ns / 1000000000u, width, frac);
}

static void prom_head(const char *metric, const char *type, const char *help)
{
	printf("# HELP %s %s\n# TYPE %s %s\n", metric, help, metric, type);
}

static void prom_u64(const char *q, const char *metric, const char *type,
		     const char *help, uint64_t val)
{
	prom_head(metric, type, help);
	printf("%s{name=\"%s\"} %" PRIu64 "\n", metric, q, val);
}

static void prom_secs(const char *q, const char *metric, const char *help,
		      uint64_t ns)
{
	prom_head(metric, "gauge", help);
	printf("%s{name=\"%s\"} ", metric, q);
	print_seconds(ns);
}

static void prom_hist(const char *q, const char *metric, const char *help,
		      const struct kwq_stats_hist *h)
{
	int i;

	prom_head(metric, "histogram", help);
	for (i = 0; i < KWQ_STATS_BUCKETS; i++)
		printf("%s_bucket{name=\"%s\",le=\"%s\"} %llu\n", metric, q,
		       hist_le[i], (unsigned long long)h->le[i]);
	printf("%s_bucket{name=\"%s\",le=\"+Inf\"} %llu\n", metric, q,
	       (unsigned long long)h->count);
	printf("%s_sum{name=\"%s\"} ", metric, q);
	print_seconds(h->sum_ns);
	printf("%s_count{name=\"%s\"} %llu\n", metric, q,
	       (unsigned long long)h->count);
}

/*
 * The text of the queue's debugfs metrics file (kwq/ipc:INUM/QUEUE/metrics
 * for a /dev/kwq queue), byte for byte: keep in step with
 * kwq_metrics_show() in src/metrics.c.
 */
static void print_prometheus(const char *q, const struct kwq_stats_args *st)
{
	unsigned int i;

	prom_u64(q, "workqueue_depth", "gauge", "Current depth of workqueue",
		 st->depth);
	prom_u64(q, "workqueue_adds_total", "counter",
		 "Total number of adds handled by workqueue", st->adds_total);
	prom_hist(q, "workqueue_queue_duration_seconds",
		  "How long in seconds an item stays in workqueue before being requested.",
		  &st->queue_duration);
	prom_hist(q, "workqueue_work_duration_seconds",
		  "How long in seconds processing an item from workqueue takes.",
		  &st->work_duration);
	prom_secs(q, "workqueue_unfinished_work_seconds",
		  "How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
		  st->unfinished_work_ns);
	prom_secs(q, "workqueue_longest_running_processor_seconds",
		  "How many seconds has the longest running processor for workqueue been running.",
		  st->longest_running_ns);
	prom_u64(q, "workqueue_retries_total", "counter",
		 "Total number of retries handled by workqueue",
		 st->retries_total);
	prom_u64(q, "kwq_ready", "gauge",
		 "Keys ready to be handed out (client-go Len)", st->len);
	prom_u64(q, "kwq_waiting_depth", "gauge",
		 "Keys waiting for a delay to pass", st->waiting);
	prom_u64(q, "kwq_processing", "gauge",
		 "Keys handed out and not yet done", st->processing);
	prom_u64(q, "kwq_dropped_at_shutdown_total", "counter",
		 "Delayed keys dropped by shutdown", st->dropped_at_shutdown);
	prom_u64(q, "kwq_lease_returns_total", "counter",
		 "Processing keys put back because their holder went away",
		 st->lease_returns);
	prom_u64(q, "kwq_failure_records", "gauge",
		 "Keys with a non-zero rate limiter failure count",
		 st->failure_records);
	prom_u64(q, "kwq_failure_records_evicted_total", "counter",
		 "Idle failure records forgotten to honour the bound",
		 st->failure_records_evicted);
	prom_head("kwq_priority_depth", "gauge",
		  "Ready keys of the highest priority levels; other: the rest");
	for (i = 0; i < st->nr_prios && i < KWQ_STATS_PRIOS; i++)
		printf("kwq_priority_depth{name=\"%s\",priority=\"%d\"} %llu\n",
		       q, st->prios[i].priority,
		       (unsigned long long)st->prios[i].depth);
	if (st->prios_other)
		printf("kwq_priority_depth{name=\"%s\",priority=\"other\"} %llu\n",
		       q, (unsigned long long)st->prios_other);
	prom_u64(q, "kwq_shutting_down", "gauge",
		 "1 once the queue was shut down", st->shutting_down);
}

static void print_json_hist(const char *name, const struct kwq_stats_hist *h)
{
	int i;

	printf(",\"%s\":{\"le\":[", name);
	for (i = 0; i < KWQ_STATS_BUCKETS; i++)
		printf("%s%llu", i ? "," : "", (unsigned long long)h->le[i]);
	printf("],\"count\":%llu,\"sum_ns\":%llu}",
	       (unsigned long long)h->count, (unsigned long long)h->sum_ns);
}

static void print_json(const char *q, const struct kwq_stats_args *st)
{
	unsigned int i;

	printf("{\"name\":\"%s\"", q);
	for (i = 0; i < NFIELDS; i++)
		printf(",\"%s\":%llu", stat_fields[i].name,
		       (unsigned long long)FIELD(st, &stat_fields[i]));
	print_json_hist("queue_duration", &st->queue_duration);
	print_json_hist("work_duration", &st->work_duration);
	printf(",\"priorities\":[");
	for (i = 0; i < st->nr_prios && i < KWQ_STATS_PRIOS; i++)
		printf("%s{\"priority\":%d,\"depth\":%llu}", i ? "," : "",
		       st->prios[i].priority,
		       (unsigned long long)st->prios[i].depth);
	printf("],\"priorities_other\":%llu",
	       (unsigned long long)st->prios_other);
	printf(",\"shutting_down\":%s}\n",
	       st->shutting_down ? "true" : "false");
}

static void print_table_hist(const char *name, const struct kwq_stats_hist *h)
{
	int i;

	printf("%-24s count %llu, sum ", name, (unsigned long long)h->count);
	print_seconds(h->sum_ns);
	for (i = 0; i < KWQ_STATS_BUCKETS; i++)
		printf("%-24s le %-6s %llu\n", "", hist_le[i],
		       (unsigned long long)h->le[i]);
}

static void print_table(const char *q, const struct kwq_stats_args *st)
{
	unsigned int i;

	printf("%-24s %s\n", "queue", q);
	for (i = 0; i < NFIELDS; i++)
		printf("%-24s %llu\n", stat_fields[i].name,
		       (unsigned long long)FIELD(st, &stat_fields[i]));
	print_table_hist("queue_duration", &st->queue_duration);
	print_table_hist("work_duration", &st->work_duration);
	for (i = 0; i < st->nr_prios && i < KWQ_STATS_PRIOS; i++)
		printf("%-24s priority %d: %llu\n", "ready_by_priority",
		       st->prios[i].priority,
		       (unsigned long long)st->prios[i].depth);
	if (st->prios_other)
		printf("%-24s other: %llu\n", "ready_by_priority",
		       (unsigned long long)st->prios_other);
	printf("%-24s %s\n", "shutting_down", st->shutting_down ? "yes" : "no");
}

enum { STATS_JSON, STATS_PROMETHEUS, STATS_NR_OPTS };

const struct cmd_opt stats_opts[] = {
	[STATS_JSON] = { "json", 0, NULL, "one line of JSON" },
	[STATS_PROMETHEUS] = { "prometheus", 0, NULL,
		"Prometheus text, as the queue's debugfs metrics file" },
	[STATS_NR_OPTS] = { NULL, 0, NULL, NULL },
};

/* The format: -1 the table, else STATS_JSON or STATS_PROMETHEUS. */
static int stats_opt(void *st, int opt, const char *val)
{
	int *fmt = st;

	(void)val;
	if (*fmt >= 0 && *fmt != opt) {
		err_usage("--json and --prometheus exclude each other");
		return -1;
	}
	*fmt = opt;
	return 0;
}

static int stats_op(int fd, void *st)
{
	return kwq_stats(fd, st);
}

int cmd_stats(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct kwq_stats_args st;
	struct cmd_args a;
	int fmt = -1;

	if (cmd_parse(ctx, argc, argv, stats_opt, &fmt, &a))
		return a.rc;
	if (on_queue(ctx, a.pos[0], stats_op, &st))
		return EX_ERR;
	switch (fmt) {
	case STATS_JSON:
		print_json(a.pos[0], &st);
		break;
	case STATS_PROMETHEUS:
		print_prometheus(a.pos[0], &st);
		break;
	default:
		print_table(a.pos[0], &st);
		break;
	}
	return fflush(stdout) ? EX_ERR : EX_OK;
}
