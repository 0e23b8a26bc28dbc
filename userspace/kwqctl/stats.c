// SPDX-License-Identifier: GPL-2.0
/*
 * kwqctl: stats, the queue's counters as a table, one line of JSON or
 * Prometheus text (the queue's debugfs metrics file, byte for byte: both
 * come from include/kwq/metrics.h, through libkwq).
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>

#include "kwq/metrics.h"
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
	{ "dead", offsetof(struct kwq_stats_args, dead) },
	{ "dead_total", offsetof(struct kwq_stats_args, dead_total) },
	{ "dead_dropped_total",
	  offsetof(struct kwq_stats_args, dead_dropped_total) },
};

#define NFIELDS ARRAY_SIZE(stat_fields)
#define FIELD(st, f) (*(const __u64 *)((const char *)(st) + (f)->off))

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
		       (unsigned long long)st->prios[i].len);
	printf("],\"priorities_other\":%llu",
	       (unsigned long long)st->prios_other);
	printf(",\"shutting_down\":%s}\n",
	       st->shutting_down ? "true" : "false");
}

static void print_table_hist(const char *name, const struct kwq_stats_hist *h)
{
	int i;

	printf("%-24s count %llu, sum ", name, (unsigned long long)h->count);
	kwq_metrics_seconds(kwq_metrics_stdio, stdout, h->sum_ns);
	for (i = 0; i < KWQ_STATS_BUCKETS; i++)
		printf("%-24s le %-6s %llu\n", "", kwq_metrics_le[i],
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
		       (unsigned long long)st->prios[i].len);
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
		kwq_stats_prometheus(stdout, a.pos[0], &st);
		break;
	default:
		print_table(a.pos[0], &st);
		break;
	}
	return fflush(stdout) ? EX_ERR : EX_OK;
}
