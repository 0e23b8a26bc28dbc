// SPDX-License-Identifier: GPL-2.0
/*
 * kwqctl: stats, the queue's counters as a table, one line of JSON or
 * Prometheus text (the queue's debugfs metrics file, byte for byte: both
 * come from include/kwq/metrics.h, through libkwq). With --all, those of
 * every queue the caller may attach to, the Prometheus text as one
 * exposition; -o FILE replaces FILE atomically (a temporary file beside
 * it, then rename()), as node_exporter's textfile collector needs.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
	{ "processing_timeouts_total",
	  offsetof(struct kwq_stats_args, processing_timeouts_total) },
	{ "dead", offsetof(struct kwq_stats_args, dead) },
	{ "dead_total", offsetof(struct kwq_stats_args, dead_total) },
	{ "dead_dropped_total",
	  offsetof(struct kwq_stats_args, dead_dropped_total) },
};

#define NFIELDS ARRAY_SIZE(stat_fields)
#define FIELD(st, f) (*(const __u64 *)((const char *)(st) + (f)->off))

static void print_json_hist(FILE *f, const char *name,
			    const struct kwq_stats_hist *h)
{
	int i;

	fprintf(f, ",\"%s\":{\"le\":[", name);
	for (i = 0; i < KWQ_STATS_BUCKETS; i++)
		fprintf(f, "%s%llu", i ? "," : "", (unsigned long long)h->le[i]);
	fprintf(f, "],\"count\":%llu,\"sum_ns\":%llu}",
		(unsigned long long)h->count, (unsigned long long)h->sum_ns);
}

static void print_json(FILE *f, const char *q, const struct kwq_stats_args *st)
{
	unsigned int i;

	fprintf(f, "{\"name\":\"%s\"", q);
	for (i = 0; i < NFIELDS; i++)
		fprintf(f, ",\"%s\":%llu", stat_fields[i].name,
			(unsigned long long)FIELD(st, &stat_fields[i]));
	print_json_hist(f, "queue_duration", &st->queue_duration);
	print_json_hist(f, "work_duration", &st->work_duration);
	fprintf(f, ",\"priorities\":[");
	for (i = 0; i < st->nr_prios && i < KWQ_STATS_PRIOS; i++)
		fprintf(f, "%s{\"priority\":%d,\"depth\":%llu}", i ? "," : "",
			st->prios[i].priority,
			(unsigned long long)st->prios[i].len);
	fprintf(f, "],\"priorities_other\":%llu",
		(unsigned long long)st->prios_other);
	fprintf(f, ",\"shutting_down\":%s}\n",
		st->shutting_down ? "true" : "false");
}

/*
 * The columns of the table: labels padded to the longest, numbers
 * right-aligned to the widest of every queue printed (so a queue's
 * large counters or a long field name never push a column out).
 */
struct table_width {
	int label;
	int value;	/* a field's number */
	int bucket;	/* a histogram bucket's count */
};

/* The rows' labels that are not fields. */
static const char *const table_labels[] = {
	"queue", "queue_duration", "work_duration", "ready_by_priority",
	"shutting_down",
};

static int digits(unsigned long long v)
{
	int n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

static void max_width(int *w, int n)
{
	if (n > *w)
		*w = n;
}

static void table_widths(struct table_width *w, unsigned int n,
			 const struct kwq_stats_args *sts)
{
	unsigned int i, q;
	int b;

	memset(w, 0, sizeof(*w));
	for (i = 0; i < ARRAY_SIZE(table_labels); i++)
		max_width(&w->label, (int)strlen(table_labels[i]));
	for (i = 0; i < NFIELDS; i++)
		max_width(&w->label, (int)strlen(stat_fields[i].name));
	for (q = 0; q < n; q++) {
		for (i = 0; i < NFIELDS; i++)
			max_width(&w->value, digits(FIELD(&sts[q], &stat_fields[i])));
		for (b = 0; b < KWQ_STATS_BUCKETS; b++) {
			max_width(&w->bucket, digits(sts[q].queue_duration.le[b]));
			max_width(&w->bucket, digits(sts[q].work_duration.le[b]));
		}
	}
}

static void print_table_hist(FILE *f, const struct table_width *w,
			     const char *name, const struct kwq_stats_hist *h)
{
	int i;

	fprintf(f, "%-*s count %llu, sum ", w->label, name,
		(unsigned long long)h->count);
	kwq_metrics_seconds(kwq_metrics_stdio, f, h->sum_ns);
	for (i = 0; i < KWQ_STATS_BUCKETS; i++)
		fprintf(f, "%-*s le %-6s %*llu\n", w->label, "",
			kwq_metrics_le[i], w->bucket,
			(unsigned long long)h->le[i]);
}

static void print_table(FILE *f, const struct table_width *w, const char *q,
			const struct kwq_stats_args *st)
{
	unsigned int i;

	fprintf(f, "%-*s %s\n", w->label, "queue", q);
	for (i = 0; i < NFIELDS; i++)
		fprintf(f, "%-*s %*llu\n", w->label, stat_fields[i].name,
			w->value, (unsigned long long)FIELD(st, &stat_fields[i]));
	print_table_hist(f, w, "queue_duration", &st->queue_duration);
	print_table_hist(f, w, "work_duration", &st->work_duration);
	for (i = 0; i < st->nr_prios && i < KWQ_STATS_PRIOS; i++)
		fprintf(f, "%-*s priority %d: %llu\n", w->label,
			"ready_by_priority", st->prios[i].priority,
			(unsigned long long)st->prios[i].len);
	if (st->prios_other)
		fprintf(f, "%-*s other: %llu\n", w->label, "ready_by_priority",
			(unsigned long long)st->prios_other);
	fprintf(f, "%-*s %s\n", w->label, "shutting_down",
		st->shutting_down ? "yes" : "no");
}

enum { STATS_JSON, STATS_PROMETHEUS, STATS_ALL, STATS_OUTPUT, STATS_NR_OPTS };

const struct cmd_opt stats_opts[] = {
	[STATS_JSON] = { "json", 0, NULL, "one line of JSON (a line a queue)" },
	[STATS_PROMETHEUS] = { "prometheus", 0, NULL,
		"Prometheus text, as the queue's debugfs metrics file" },
	[STATS_ALL] = { "all", 0, NULL,
		"every queue this user may open, instead of QUEUE;\n"
		"with --prometheus one exposition of them all" },
	[STATS_OUTPUT] = { "output", 'o', "FILE",
		"replace FILE atomically (temporary file, rename)\n"
		"instead of writing to stdout" },
	[STATS_NR_OPTS] = { NULL, 0, NULL, NULL },
};

struct stats_args {
	int fmt;		/* -1 the table, else STATS_JSON or STATS_PROMETHEUS */
	bool all;
	const char *output;
};

static int stats_opt(void *st, int opt, const char *val)
{
	struct stats_args *s = st;

	switch (opt) {
	case STATS_ALL:
		s->all = true;
		return 0;
	case STATS_OUTPUT:
		s->output = val;
		return 0;
	}
	if (s->fmt >= 0 && s->fmt != opt) {
		err_usage("--json and --prometheus exclude each other");
		return -1;
	}
	s->fmt = opt;
	return 0;
}

static int stats_op(int fd, void *st)
{
	return kwq_stats(fd, st);
}

/* @n queues' statistics to @f in format @fmt. */
static void print_stats(FILE *f, int fmt, unsigned int n,
			const char *const *names,
			const struct kwq_stats_args *sts)
{
	struct table_width w;
	unsigned int i;

	if (fmt == STATS_PROMETHEUS) {
		kwq_metrics_render_all(kwq_metrics_stdio, f, n, names, sts);
		return;
	}
	table_widths(&w, n, sts);
	for (i = 0; i < n; i++) {
		if (fmt == STATS_JSON) {
			print_json(f, names[i], &sts[i]);
			continue;
		}
		if (i)
			fputc('\n', f);
		print_table(f, &w, names[i], &sts[i]);
	}
}

/*
 * The statistics of every queue this user may attach to: *@names and
 * *@sts (malloc'ed, the names point into @ql's), their number, or -1
 * after printing the error. A queue that refuses us (EACCES) or goes
 * away meanwhile (ENOENT, EIDRM) is left out.
 */
static int stats_all(const struct cmd_ctx *ctx, struct queue_list *ql,
		     const char ***names, struct kwq_stats_args **sts)
{
	int i, fd, nr, n = 0;

	if (list_queues(ctx, ql))
		return -1;
	nr = ql->nr;
	*names = calloc(nr ? nr : 1, sizeof(**names));
	*sts = calloc(nr ? nr : 1, sizeof(**sts));
	if (!*names || !*sts) {
		err_errno(ENOMEM, NULL);
		return -1;
	}
	for (i = 0; i < nr; i++) {
		fd = open_dev(ctx);
		if (fd < 0)
			return -1;
		if (kwq_open(fd, ql->names[i]) == 0 && kwq_stats(fd, &(*sts)[n]) == 0) {
			(*names)[n++] = ql->names[i];
		} else if (errno != EACCES && errno != ENOENT && errno != EIDRM) {
			err_errno(errno, "queue %s", ql->names[i]);
			close(fd);
			return -1;
		}
		close(fd);
	}
	return n;
}

/*
 * Print to @path through a temporary file beside it, renamed over it
 * once complete: a reader sees the old file or the new one, whole.
 */
static int print_to_file(const char *path, int fmt, unsigned int n,
			 const char *const *names,
			 const struct kwq_stats_args *sts)
{
	size_t len = strlen(path);
	char *tmp = malloc(len + sizeof(".XXXXXX"));
	FILE *f = NULL;
	int fd, e;

	if (!tmp) {
		err_errno(ENOMEM, NULL);
		return EX_ERR;
	}
	memcpy(tmp, path, len);
	memcpy(tmp + len, ".XXXXXX", sizeof(".XXXXXX"));
	fd = mkstemp(tmp);
	if (fd < 0) {
		err_errno(errno, "%s", tmp);
		free(tmp);
		return EX_ERR;
	}
	/* mkstemp() makes it 0600: others (node_exporter) read it. */
	if (fchmod(fd, 0644) == 0)
		f = fdopen(fd, "w");
	if (f) {
		print_stats(f, fmt, n, names, sts);
		if (fflush(f) == 0 && !ferror(f) && fsync(fd) == 0) {
			if (fclose(f) == 0 && rename(tmp, path) == 0) {
				free(tmp);
				return EX_OK;
			}
			f = NULL;
		}
	}
	e = errno;
	if (f)
		fclose(f);
	else
		close(fd);
	unlink(tmp);
	err_errno(e, "%s", path);
	free(tmp);
	return EX_ERR;
}

static int print_to_stdout(int fmt, unsigned int n, const char *const *names,
			   const struct kwq_stats_args *sts)
{
	print_stats(stdout, fmt, n, names, sts);
	return fflush(stdout) ? EX_ERR : EX_OK;
}

int cmd_stats(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct stats_args s = { .fmt = -1 };
	struct queue_list ql = { NULL, 0 };
	struct kwq_stats_args one, *sts = &one;
	const char **names = NULL;
	struct cmd_args a;
	int n = 1, rc;

	if (cmd_parse(ctx, argc, argv, stats_opt, &s, &a))
		return a.rc;
	if (s.all ? a.npos > 0 : a.npos == 0) {
		err_usage("give QUEUE or --all");
		return EX_USAGE;
	}
	if (s.all) {
		n = stats_all(ctx, &ql, &names, &sts);
	} else {
		names = malloc(sizeof(*names));
		if (names)
			names[0] = a.pos[0];
		else
			err_errno(ENOMEM, NULL);
		if (!names || on_queue(ctx, a.pos[0], stats_op, &one))
			n = -1;
	}
	if (n < 0)
		rc = EX_ERR;
	else if (s.output)
		rc = print_to_file(s.output, s.fmt, n, names, sts);
	else
		rc = print_to_stdout(s.fmt, n, names, sts);
	if (sts != &one)
		free(sts);
	free(names);
	free(ql.names);
	return rc;
}
