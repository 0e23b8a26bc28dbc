// SPDX-License-Identifier: GPL-2.0
/*
 * Observability end to end, in the test VM: a scripted workload through
 * libkwq, then
 *  - /sys/kernel/debug/kwq/ipc:INUM/QUEUE/metrics (a queue created through
 *    /dev/kwq in the IPC namespace of inode number INUM) must pass a
 *    strict parser of the
 *    Prometheus text exposition format (below) and hold the values the
 *    workload implies; `kwqctl stats --prometheus` must print the same
 *    text; the stats ioctl must agree, in its new and its old size;
 *  - with the kwq trace events enabled, each operation must leave exactly
 *    one event, keys escaped and cut at 64 bytes.
 * Without debugfs or tracefs the respective cases are skipped.
 */
#include "kwqtest.h"

#include <ctype.h>
#include <math.h>
#include <sys/mount.h>
#include <sys/stat.h>

#define NCASES		48
#define HOUR		(3600 * KT_SEC)
#define DEBUGFS		"/sys/kernel/debug"

/* --- a strict parser of the Prometheus text format (version 0.0.4) --- */

#define MAX_SAMPLES	256
#define MAX_FAMILIES	64

struct sample {
	char name[96];
	char labels[160];	/* as written, between the braces */
	double value;
};

struct family {
	char name[96];
	char type[16];
	int has_help, has_type, nsamples, closed;
};

struct expo {
	struct sample s[MAX_SAMPLES];
	int ns;
	struct family f[MAX_FAMILIES];
	int nf;
	char err[256];
};

static int name_ok(const char *p, size_t n, int colon)
{
	size_t i;

	if (!n)
		return 0;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];

		if (!(isalpha(c) || c == '_' || (colon && c == ':') ||
		      (i && isdigit(c))))
			return 0;
	}
	return 1;
}

static int perr(struct expo *e, int line, const char *msg, const char *text)
{
	snprintf(e->err, sizeof(e->err), "line %d: %s: '%.120s'", line, msg,
		 text);
	return -1;
}

static struct family *family_of(struct expo *e, const char *name)
{
	int i;

	for (i = 0; i < e->nf; i++)
		if (!strcmp(e->f[i].name, name))
			return &e->f[i];
	return NULL;
}

/* The family a sample name belongs to: histograms own _bucket/_sum/_count. */
static struct family *sample_family(struct expo *e, const char *name)
{
	static const char *const sfx[] = { "_bucket", "_sum", "_count" };
	struct family *f = family_of(e, name);
	char base[96];
	size_t n = strlen(name), k;
	unsigned int i;

	if (f && strcmp(f->type, "histogram"))
		return f;
	for (i = 0; i < 3; i++) {
		k = strlen(sfx[i]);
		if (n > k && !strcmp(name + n - k, sfx[i])) {
			snprintf(base, sizeof(base), "%.*s", (int)(n - k), name);
			f = family_of(e, base);
			if (f && !strcmp(f->type, "histogram"))
				return f;
		}
	}
	return NULL;
}

/* Labels: name="value" pairs, comma separated; escapes \\ \" \n only. */
static int labels_ok(const char *p, const char *end)
{
	char seen[8][64];
	int nseen = 0, i;

	while (p < end) {
		const char *n = p;

		while (p < end && *p != '=')
			p++;
		if (p == end || !name_ok(n, p - n, 0) || p - n >= 64 ||
		    nseen == 8)
			return 0;
		for (i = 0; i < nseen; i++)
			if (strlen(seen[i]) == (size_t)(p - n) &&
			    !strncmp(seen[i], n, p - n))
				return 0;	/* duplicate label */
		snprintf(seen[nseen++], 64, "%.*s", (int)(p - n), n);
		if (++p == end || *p++ != '"')
			return 0;
		while (p < end && *p != '"') {
			if (*p == '\\') {
				if (p + 1 == end || !strchr("\\\"n", p[1]))
					return 0;
				p++;
			} else if (*p == '\n') {
				return 0;
			}
			p++;
		}
		if (p == end)
			return 0;
		p++;
		if (p < end && *p++ != ',')
			return 0;
	}
	return 1;
}

static int value_ok(const char *s, double *v)
{
	char *end;

	if (!strcmp(s, "+Inf"))
		*v = INFINITY;
	else if (!strcmp(s, "-Inf"))
		*v = -INFINITY;
	else if (!strcmp(s, "NaN"))
		*v = NAN;
	else {
		if (!*s || !(isdigit((unsigned char)*s) || *s == '-' ||
			     *s == '.'))
			return 0;
		errno = 0;
		*v = strtod(s, &end);
		if (*end || errno)
			return 0;
	}
	return 1;
}

/* The value of a label in a label string, or NULL. */
static const char *label(const char *labels, const char *name, char *buf,
			 size_t size)
{
	size_t n = strlen(name);
	const char *p = labels, *q;

	while ((p = strstr(p, name))) {
		if ((p == labels || p[-1] == ',') && p[n] == '=' &&
		    p[n + 1] == '"') {
			q = strchr(p + n + 2, '"');
			if (!q)
				return NULL;
			snprintf(buf, size, "%.*s", (int)(q - p - n - 2),
				 p + n + 2);
			return buf;
		}
		p += n;
	}
	return NULL;
}

/* Per-family checks once all lines are in: histogram structure etc. */
static int check_histograms(struct expo *e, const char *queue)
{
	char le[32], want[96];
	int i, j;

	for (i = 0; i < e->nf; i++) {
		struct family *f = &e->f[i];
		double prev_le = -INFINITY, prev = 0, inf = -1, count = -1;
		int nb = 0, have_sum = 0;

		if (f->nsamples == 0 && strcmp(f->name, "kwq_priority_ready"))
			return snprintf(e->err, sizeof(e->err),
					"family %s has no samples", f->name), -1;
		if (strcmp(f->type, "histogram"))
			continue;
		for (j = 0; j < e->ns; j++) {
			struct sample *s = &e->s[j];
			double b;

			snprintf(want, sizeof(want), "%s_bucket", f->name);
			if (!strcmp(s->name, want)) {
				if (!label(s->labels, "le", le, sizeof(le)) ||
				    !value_ok(le, &b) || b <= prev_le ||
				    s->value < prev ||
				    (double)(unsigned long long)s->value != s->value)
					return snprintf(e->err, sizeof(e->err),
							"%s: bad bucket le=%s %g",
							f->name, le, s->value), -1;
				prev_le = b;
				prev = s->value;
				nb++;
				if (isinf(b))
					inf = s->value;
				continue;
			}
			snprintf(want, sizeof(want), "%s_count", f->name);
			if (!strcmp(s->name, want))
				count = s->value;
			snprintf(want, sizeof(want), "%s_sum", f->name);
			if (!strcmp(s->name, want))
				have_sum = s->value >= 0;
		}
		if (nb != 11 || inf < 0 || inf != count || !have_sum)
			return snprintf(e->err, sizeof(e->err),
					"%s: %d buckets, +Inf %g, count %g, sum %d",
					f->name, nb, inf, count, have_sum), -1;
	}
	(void)queue;
	return 0;
}

static int parse_expo(struct expo *e, char *text, const char *queue)
{
	char *line, *save = NULL, *p, want[96];
	struct family *f, *cur = NULL;
	int lineno = 0, i;
	size_t len = strlen(text);

	memset(e, 0, sizeof(*e));
	if (!len || text[len - 1] != '\n')
		return perr(e, 0, "empty or no final newline", "");
	snprintf(want, sizeof(want), "name=\"%s\"", queue);
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		lineno++;
		if (line[0] == '#') {
			char kw[8], name[96], rest[512];

			if (sscanf(line, "# %7s %95s %511[^\n]", kw, name,
				   rest) != 3 || (strcmp(kw, "HELP") &&
						  strcmp(kw, "TYPE")))
				return perr(e, lineno, "bad comment", line);
			if (!name_ok(name, strlen(name), 1))
				return perr(e, lineno, "bad metric name", line);
			f = family_of(e, name);
			if (!f) {
				if (e->nf == MAX_FAMILIES)
					return perr(e, lineno, "too many", line);
				f = &e->f[e->nf++];
				snprintf(f->name, sizeof(f->name), "%s", name);
			}
			if (f->nsamples || f->closed)
				return perr(e, lineno, "HELP/TYPE after samples",
					    line);
			if (cur && cur != f)
				cur->closed = 1;
			cur = f;
			if (!strcmp(kw, "HELP")) {
				if (f->has_help++)
					return perr(e, lineno, "second HELP", line);
				continue;
			}
			if (f->has_type++)
				return perr(e, lineno, "second TYPE", line);
			if (strcmp(rest, "counter") && strcmp(rest, "gauge") &&
			    strcmp(rest, "histogram") && strcmp(rest, "summary") &&
			    strcmp(rest, "untyped"))
				return perr(e, lineno, "bad type", line);
			snprintf(f->type, sizeof(f->type), "%.15s", rest);
			continue;
		}
		/* name{labels} value */
		struct sample *s;
		char *brace = strchr(line, '{'), *close, *sp;

		if (!brace || !(close = strchr(brace, '}')) || close[1] != ' ')
			return perr(e, lineno, "not name{labels} value", line);
		if (!name_ok(line, brace - line, 1))
			return perr(e, lineno, "bad metric name", line);
		if (!labels_ok(brace + 1, close))
			return perr(e, lineno, "bad labels", line);
		if (e->ns == MAX_SAMPLES)
			return perr(e, lineno, "too many samples", line);
		s = &e->s[e->ns++];
		snprintf(s->name, sizeof(s->name), "%.*s", (int)(brace - line),
			 line);
		snprintf(s->labels, sizeof(s->labels), "%.*s",
			 (int)(close - brace - 1), brace + 1);
		sp = close + 2;
		if (strchr(sp, ' ') || !value_ok(sp, &s->value))
			return perr(e, lineno, "bad value", line);
		f = sample_family(e, s->name);
		if (!f || !f->has_type)
			return perr(e, lineno, "sample before its TYPE", line);
		if (f != cur || f->closed)
			return perr(e, lineno, "family not contiguous", line);
		f->nsamples++;
		if (strncmp(s->labels, want, strlen(want)) ||
		    (s->labels[strlen(want)] && s->labels[strlen(want)] != ','))
			return perr(e, lineno, "no name label first", line);
		if ((!strcmp(f->type, "counter") || !strcmp(f->type, "gauge")) &&
		    (s->value < 0 || isnan(s->value)))
			return perr(e, lineno, "negative value", line);
		if (!strcmp(f->type, "counter") &&
		    strcmp(s->name + strlen(s->name) - 6, "_total"))
			return perr(e, lineno, "counter without _total", line);
		for (i = 0; i < e->ns - 1; i++)
			if (!strcmp(e->s[i].name, s->name) &&
			    !strcmp(e->s[i].labels, s->labels))
				return perr(e, lineno, "duplicate series", line);
		(void)p;
	}
	for (i = 0; i < e->nf; i++)
		if (!e->f[i].has_type || !e->f[i].has_help)
			return perr(e, 0, "family without HELP or TYPE",
				    e->f[i].name);
	return check_histograms(e, queue);
}

/* A sample's value: name plus optional extra label ("le=\"0.001\""). */
static double val(const struct expo *e, const char *name, const char *extra)
{
	char buf[160];
	int i;

	for (i = 0; i < e->ns; i++) {
		const char *l = strchr(e->s[i].labels, ',');

		if (strcmp(e->s[i].name, name))
			continue;
		if (!extra && !l)
			return e->s[i].value;
		if (extra && l && !strcmp(l + 1, extra))
			return e->s[i].value;
	}
	(void)buf;
	return -1;
}

static const char *type_of(const struct expo *e, const char *name)
{
	int i;

	for (i = 0; i < e->nf; i++)
		if (!strcmp(e->f[i].name, name))
			return e->f[i].type;
	return "";
}

/* --- helpers --- */

static char *slurp(const char *path)
{
	size_t cap = 1 << 16, used = 0;
	char *buf = malloc(cap);
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || !buf) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while ((n = read(fd, buf + used, cap - used - 1)) > 0) {
		used += (size_t)n;
		if (used + 1 == cap) {
			char *nb = realloc(buf, cap *= 2);

			if (!nb)
				break;
			buf = nb;
		}
	}
	close(fd);
	buf[used] = '\0';
	return buf;
}

static char *run_output(const char *cmd)
{
	size_t cap = 1 << 16, used = 0, n;
	char *buf = malloc(cap);
	FILE *p = popen(cmd, "r");

	if (!p || !buf) {
		free(buf);
		if (p)
			pclose(p);
		return NULL;
	}
	while ((n = fread(buf + used, 1, cap - used - 1, p)) > 0)
		used += n;
	buf[used] = '\0';
	if (pclose(p) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static char metrics_path[128];

/* Read and parse the metrics file; 0 on success. */
static int read_metrics(struct expo *e, const char *queue, char **text)
{
	char *t = slurp(metrics_path), *copy;
	int r;

	if (!t)
		return snprintf(e->err, sizeof(e->err), "read %s: %s",
				metrics_path, strerror(errno)), -1;
	copy = strdup(t);
	r = parse_expo(e, copy, queue);
	free(copy);
	if (text)
		*text = t;
	else
		free(t);
	return r;
}

static int get_key(int fd, const char *want)
{
	char key[KWQ_KEY_LEN_MAX + 1];
	long n = kwq_get(fd, key, sizeof(key), 0, 0);

	if (n < 0)
		return -1;
	key[n] = '\0';
	return strcmp(key, want) ? -1 : 0;
}

/* --- the cases --- */

static void metrics_cases(void)
{
	struct kwq_queue_opts o = { 0 };
	struct kwq_stats_args st, old;
	char name[KWQ_NAME_LEN], cmd[160], *text, *ctl;
	struct expo *e = calloc(1, sizeof(*e));
	int fd, fd2, r, i;
	struct stat sb;
	double q0, w0;

	/* Rate-limited adds wait an hour: nothing fires behind our back. */
	if (kwq_parse_limiter("exponential:1h:1h", &o) < 0) {
		printf("    # parse limiter: %s\n", strerror(errno));
		exit(1);
	}
	fd = kt_queue("metrics", &o, name);
	snprintf(metrics_path, sizeof(metrics_path),
		 DEBUGFS "/kwq/ipc:%lu/%s/metrics", kt_ipc_inum(), name);
	if (stat(DEBUGFS "/kwq", &sb) < 0) {
		for (i = 0; i < 32; i++)
			ktap_skip("metrics", "no " DEBUGFS "/kwq (debugfs)");
		kwq_destroy(fd, name);
		close(fd);
		free(e);
		return;
	}

	/* an empty queue: every family, every value zero */
	r = read_metrics(e, name, NULL);
	ktap_check(r == 0, "empty_queue_file_parses", "%s", e->err);
	ktap_check(!strcmp(type_of(e, "workqueue_depth"), "gauge") &&
		   !strcmp(type_of(e, "workqueue_adds_total"), "counter") &&
		   !strcmp(type_of(e, "workqueue_queue_duration_seconds"),
			   "histogram") &&
		   !strcmp(type_of(e, "workqueue_work_duration_seconds"),
			   "histogram") &&
		   !strcmp(type_of(e, "workqueue_unfinished_work_seconds"),
			   "gauge") &&
		   !strcmp(type_of(e, "workqueue_longest_running_processor_seconds"),
			   "gauge") &&
		   !strcmp(type_of(e, "workqueue_retries_total"), "counter"),
		   "client_go_families_and_types", "%s", e->err);
	ktap_check(val(e, "workqueue_depth", NULL) == 0 &&
		   val(e, "workqueue_adds_total", NULL) == 0 &&
		   val(e, "workqueue_queue_duration_seconds_count", NULL) == 0 &&
		   val(e, "kwq_shutting_down", NULL) == 0,
		   "empty_queue_values_zero", "depth %g adds %g",
		   val(e, "workqueue_depth", NULL),
		   val(e, "workqueue_adds_total", NULL));
	ktap_check(val(e, "workqueue_queue_duration_seconds_bucket",
		       "le=\"1e-08\"") == 0 &&
		   val(e, "workqueue_queue_duration_seconds_bucket",
		       "le=\"10\"") == 0 &&
		   val(e, "workqueue_queue_duration_seconds_bucket",
		       "le=\"+Inf\"") == 0,
		   "client_go_bucket_bounds", "le=10 %g",
		   val(e, "workqueue_queue_duration_seconds_bucket",
		       "le=\"10\""));

	/* the parser rejects what it must (it can fail) */
	{
		static const char *const bad[] = {
			"workqueue_depth{name=\"Q\"} 1\n",	/* no TYPE */
			"# TYPE x gauge\n# HELP x h\nx{name=\"Q\"} 1",	/* no \n */
			"# HELP x h\n# TYPE x gauge\nx{name=\"Q\"} one\n",
			"# HELP 1x h\n# TYPE 1x gauge\n1x{name=\"Q\"} 1\n",
			"# HELP x h\n# TYPE x gauge\nx{name=\"Q\",=\"a\"} 1\n",
			"# HELP x_total h\n# TYPE x_total counter\n"
			"x_total{name=\"Q\"} -1\n",
			"# HELP h h\n# TYPE h histogram\n"
			"h_bucket{name=\"Q\",le=\"1\"} 2\n"
			"h_bucket{name=\"Q\",le=\"+Inf\"} 1\n"
			"h_sum{name=\"Q\"} 1\nh_count{name=\"Q\"} 1\n",
		};
		struct expo *b = calloc(1, sizeof(*b));
		int rejected = 0;
		unsigned int k;

		for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
			char *t = strdup(bad[k]);

			rejected += parse_expo(b, t, "Q") < 0;
			free(t);
		}
		ktap_check(rejected == (int)k, "strict_parser_rejects_bad_text",
			   "rejected %d of %u", rejected, k);
		free(b);
	}

	/* workload: 4 ready (one at priority 5), 1 waiting */
	kt_add(fd, "a");
	kt_add(fd, "b");
	kt_add(fd, "c");
	kwq_add_priority(fd, "p", 1, 5);
	kwq_add_after(fd, "w", 1, HOUR);
	r = read_metrics(e, name, NULL);
	ktap_check(r == 0, "loaded_queue_file_parses", "%s", e->err);
	ktap_check(val(e, "workqueue_depth", NULL) == 4 &&
		   val(e, "kwq_ready", NULL) == 4 &&
		   val(e, "kwq_waiting_depth", NULL) == 1 &&
		   val(e, "workqueue_adds_total", NULL) == 5,
		   "depth_waiting_adds", "depth %g ready %g waiting %g adds %g",
		   val(e, "workqueue_depth", NULL), val(e, "kwq_ready", NULL),
		   val(e, "kwq_waiting_depth", NULL),
		   val(e, "workqueue_adds_total", NULL));
	ktap_check(val(e, "kwq_priority_ready", "priority=\"5\"") == 1 &&
		   val(e, "kwq_priority_ready", "priority=\"0\"") == 3,
		   "priority_depth", "prio5 %g prio0 %g",
		   val(e, "kwq_priority_ready", "priority=\"5\""),
		   val(e, "kwq_priority_ready", "priority=\"0\""));

	/* processing: p is handed out first, added again (dirty) */
	ktap_check(get_key(fd, "p") == 0, "get_highest_priority_first", "%s",
		   strerror(errno));
	kwq_add(fd, "p", 1);
	kwq_add(fd, "p", 1);
	kt_sleep_ms(20);
	r = read_metrics(e, name, NULL);
	ktap_check(r == 0 && val(e, "workqueue_depth", NULL) == 4 &&
		   val(e, "kwq_ready", NULL) == 3 &&
		   val(e, "kwq_processing", NULL) == 1 &&
		   val(e, "workqueue_adds_total", NULL) == 6,
		   "dirty_key_counts_in_depth", "%s depth %g ready %g adds %g",
		   e->err, val(e, "workqueue_depth", NULL),
		   val(e, "kwq_ready", NULL),
		   val(e, "workqueue_adds_total", NULL));
	ktap_check(val(e, "workqueue_unfinished_work_seconds", NULL) >= 0.02 &&
		   val(e, "workqueue_longest_running_processor_seconds", NULL) >=
		   0.02 && val(e, "workqueue_longest_running_processor_seconds",
				NULL) < 600,
		   "unfinished_work_while_processing", "unfinished %g longest %g",
		   val(e, "workqueue_unfinished_work_seconds", NULL),
		   val(e, "workqueue_longest_running_processor_seconds", NULL));
	ktap_check(val(e, "workqueue_queue_duration_seconds_count", NULL) == 1 &&
		   val(e, "workqueue_work_duration_seconds_count", NULL) == 0,
		   "queue_duration_observed_at_get", "queue %g work %g",
		   val(e, "workqueue_queue_duration_seconds_count", NULL),
		   val(e, "workqueue_work_duration_seconds_count", NULL));

	/* ioctl agrees with the file */
	r = kwq_stats(fd, &st);
	ktap_check(r == 0 && st.depth == 4 && st.len == 3 &&
		   st.processing == 1 && st.nr_prios == 1 &&
		   st.prios[0].priority == 0 && st.prios[0].len == 3 &&
		   st.queue_duration.count == 1 && st.unfinished_work_ns > 0 &&
		   st.longest_running_ns <= st.unfinished_work_ns,
		   "stats_ioctl_new_fields", "depth %llu len %llu prios %u",
		   (unsigned long long)st.depth, (unsigned long long)st.len,
		   st.nr_prios);

	/* the version-1 struct size still works: the prefix, nothing more */
	memset(&old, 0xa5, sizeof(old));
	r = ioctl(fd, _IOC(_IOC_READ, KWQ_IOC_MAGIC, _IOC_NR(KWQ_IOC_STATS),
			   KWQ_STATS_ARGS_SIZE_VER1), &old);
	ktap_check(r == 0 && old.len == 3 && old.processing == 1 &&
		   old.waiting == 1 && old.pad == 0 &&
		   old.depth == 0xa5a5a5a5a5a5a5a5ULL,
		   "stats_ioctl_version1_size", "r %d len %llu depth %llx", r,
		   (unsigned long long)old.len, (unsigned long long)old.depth);
	r = ioctl(fd, _IOC(_IOC_READ, KWQ_IOC_MAGIC, _IOC_NR(KWQ_IOC_STATS),
			   KWQ_STATS_ARGS_SIZE_VER1 - 8), &old);
	ktap_check(r == -1 && errno == EINVAL, "stats_ioctl_too_small_einval",
		   "r %d errno %s", r, kt_ename(errno));

	/* done requeues p; everything processed */
	KT_OK(kwq_done(fd, "p", 1), "done_requeues_dirty_key");
	for (i = 0, r = 0; i < 4; i++) {
		char key[KWQ_KEY_LEN_MAX + 1];
		long n = kwq_get(fd, key, sizeof(key), 0, 0);

		if (n < 0 || kwq_done(fd, key, (size_t)n) < 0)
			r = -1;
	}
	ktap_check(r == 0 && kt_len(fd) == 0, "workload_processed", "len %ld",
		   kt_len(fd));
	/* a lease return: a second fd takes "l" and goes away */
	kt_add(fd, "l");
	fd2 = kt_attach(name);
	ktap_check(get_key(fd2, "l") == 0, "lease_get", "%s", strerror(errno));
	close(fd2);
	ktap_check(get_key(fd, "l") == 0 && kt_done(fd, "l") == 0,
		   "lease_returned_key_processed", "%s", strerror(errno));
	kwq_add_rate_limited(fd, "r", 1, NULL);
	kwq_add_rate_limited(fd, "r", 1, NULL);

	r = read_metrics(e, name, &text);
	ktap_check(r == 0, "after_workload_file_parses", "%s", e->err);
	q0 = val(e, "workqueue_queue_duration_seconds_count", NULL);
	w0 = val(e, "workqueue_work_duration_seconds_count", NULL);
	/* gets: p, p a b c, l (fd2), l (after the lease return) */
	ktap_check(q0 == 7 && w0 == 6, "duration_histogram_counts",
		   "queue %g work %g", q0, w0);
	ktap_check(val(e, "workqueue_work_duration_seconds_sum", NULL) >= 0.02 &&
		   val(e, "workqueue_work_duration_seconds_bucket",
		       "le=\"+Inf\"") == w0 &&
		   val(e, "workqueue_work_duration_seconds_bucket",
		       "le=\"10\"") == w0 &&
		   val(e, "workqueue_work_duration_seconds_bucket",
		       "le=\"1e-08\"") <
		   val(e, "workqueue_work_duration_seconds_bucket",
		       "le=\"10\""),
		   "work_duration_buckets", "sum %g le10 %g",
		   val(e, "workqueue_work_duration_seconds_sum", NULL),
		   val(e, "workqueue_work_duration_seconds_bucket", "le=\"10\""));
	ktap_check(val(e, "workqueue_depth", NULL) == 0 &&
		   val(e, "kwq_processing", NULL) == 0 &&
		   val(e, "workqueue_unfinished_work_seconds", NULL) == 0 &&
		   val(e, "workqueue_longest_running_processor_seconds",
		       NULL) == 0,
		   "idle_gauges_zero", "depth %g unfinished %g",
		   val(e, "workqueue_depth", NULL),
		   val(e, "workqueue_unfinished_work_seconds", NULL));
	ktap_check(val(e, "workqueue_retries_total", NULL) == 2 &&
		   val(e, "kwq_failure_records", NULL) == 1 &&
		   val(e, "kwq_waiting_depth", NULL) == 2 &&
		   val(e, "kwq_lease_returns_total", NULL) == 1 &&
		   val(e, "workqueue_adds_total", NULL) == 8,
		   "retries_records_leases_adds",
		   "retries %g records %g waiting %g leases %g adds %g",
		   val(e, "workqueue_retries_total", NULL),
		   val(e, "kwq_failure_records", NULL),
		   val(e, "kwq_waiting_depth", NULL),
		   val(e, "kwq_lease_returns_total", NULL),
		   val(e, "workqueue_adds_total", NULL));

	/* kwqctl stats --prometheus prints the same text */
	snprintf(cmd, sizeof(cmd), "kwqctl stats %s --prometheus 2>&1", name);
	ctl = run_output(cmd);
	if (!ctl)
		ktap_skip("kwqctl_prometheus_matches_file", "kwqctl not runnable");
	else
		ktap_check(text && !strcmp(ctl, text),
			   "kwqctl_prometheus_matches_file",
			   "kwqctl:\n%s\nfile:\n%s", ctl, text ? text : "");
	free(ctl);
	free(text);

	/* shutdown drops the waiting keys */
	kwq_shutdown(fd, 0);
	r = read_metrics(e, name, NULL);
	ktap_check(r == 0 && val(e, "kwq_shutting_down", NULL) == 1 &&
		   val(e, "kwq_dropped_at_shutdown_total", NULL) == 2 &&
		   val(e, "kwq_waiting_depth", NULL) == 0,
		   "shutdown_counts_dropped", "%s shut %g dropped %g", e->err,
		   val(e, "kwq_shutting_down", NULL),
		   val(e, "kwq_dropped_at_shutdown_total", NULL));

	/* the file lives exactly as long as the queue */
	fd2 = open(metrics_path, O_RDONLY);
	ktap_check(fd2 >= 0, "file_open_before_destroy", "%s", strerror(errno));
	KT_OK(kwq_destroy(fd, name), "destroy");
	ktap_check(stat(metrics_path, &sb) < 0 && errno == ENOENT,
		   "file_removed_with_queue", "%s", strerror(errno));
	{
		char buf[64];
		ssize_t n = fd2 >= 0 ? read(fd2, buf, sizeof(buf)) : 0;

		/* debugfs refuses operations on a removed file (EIO) */
		ktap_check(n < 0 && errno == EIO, "read_after_destroy_eio",
			   "read %zd %s", n, kt_ename(errno));
	}
	if (fd2 >= 0)
		close(fd2);
	close(fd);

	/* a queue of the same name gets a fresh file */
	fd = kt_dev();
	KT_OK(kwq_create(fd, name, NULL), "recreate_same_name");
	r = read_metrics(e, name, NULL);
	ktap_check(r == 0 && val(e, "workqueue_adds_total", NULL) == 0 &&
		   val(e, "workqueue_queue_duration_seconds_count", NULL) == 0,
		   "recreated_queue_starts_from_zero", "%s adds %g", e->err,
		   val(e, "workqueue_adds_total", NULL));
	kwq_destroy(fd, name);
	close(fd);
	free(e);
}

/* --- tracepoints --- */

static const char *tracefs(void)
{
	static const char *const dirs[] = {
		"/sys/kernel/tracing", DEBUGFS "/tracing",
	};
	static char path[128];
	unsigned int i;
	struct stat sb;

	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/events", dirs[i]);
		if (stat(path, &sb) == 0)
			return dirs[i];
	}
	if (mount("nodev", dirs[0], "tracefs", 0, NULL) == 0)
		return dirs[0];
	return NULL;
}

static int write_file(const char *dir, const char *file, const char *s)
{
	char path[160];
	int fd, r;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -1;
	r = write(fd, s, strlen(s)) == (ssize_t)strlen(s) ? 0 : -1;
	close(fd);
	return r;
}

/* Lines of @trace with event @ev (": ev: ") of queue @q containing @has. */
static int count_events(const char *trace, const char *ev, const char *q,
			const char *has)
{
	char pat[128], qpat[96];
	const char *p = trace;
	int n = 0;

	snprintf(pat, sizeof(pat), " %s: ", ev);
	snprintf(qpat, sizeof(qpat), "queue=%s ", q);
	while ((p = strstr(p, pat))) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char line[512];

		snprintf(line, sizeof(line), "%.*s", (int)len, p);
		if (strstr(line, qpat) && (!has || strstr(line, has)))
			n++;
		p += len;
	}
	return n;
}

/* One case: @nr events @ev of queue @q in all, @nr_has of them with @has. */
static void expect_events(const char *trace, const char *ev, const char *q,
			  const char *has, int nr_has, int nr, const char *name)
{
	int all = count_events(trace, ev, q, NULL);
	int with = count_events(trace, ev, q, has);

	ktap_check(all == nr && with == nr_has, name, "%d %s events, %d with '%s'",
		   all, ev, with, has);
}

/* Empty the trace buffer and trace kwq's events alone: one case. */
static void trace_start(const char *dir, const char *name)
{
	write_file(dir, "tracing_on", "0");
	write_file(dir, "trace", "");
	ktap_check(write_file(dir, "events/kwq/enable", "1") == 0 &&
		   write_file(dir, "tracing_on", "1") == 0, name,
		   "%s", strerror(errno));
}

/* Stop tracing kwq; what was traced (to free). */
static char *trace_stop(const char *dir)
{
	char path[160], *trace;

	write_file(dir, "tracing_on", "0");
	snprintf(path, sizeof(path), "%s/trace", dir);
	trace = slurp(path);
	write_file(dir, "events/kwq/enable", "0");
	write_file(dir, "tracing_on", "1");
	return trace ? trace : strdup("");
}

/* Wait up to 5 s for a key: 0 if it is @want. */
static int trace_get(int fd, const char *want)
{
	char key[KWQ_KEY_LEN_MAX + 1];
	long n = kwq_get(fd, key, sizeof(key), 0, 5 * KT_SEC);

	if (n < 0)
		return -1;
	key[n] = '\0';
	return strcmp(key, want) ? -1 : 0;
}

/* Get @key, add it rate-limited, done: one failure; the delay chosen. */
static uint64_t trace_fail(int fd, const char *key)
{
	uint64_t delay = 0;

	if (trace_get(fd, key) < 0 ||
	    kwq_add_rate_limited(fd, key, strlen(key), &delay) < 0 ||
	    kwq_done(fd, key, strlen(key)) < 0)
		printf("    # fail %s: %s\n", key, strerror(errno));
	return delay;
}

/*
 * The processing deadline's and the dead set's events, on a queue whose
 * keys are due again at once (1 us) and die at their second failure.
 */
static void trace_dead_cases(const char *dir)
{
	struct kwq_queue_opts o = { 0 };
	char name[KWQ_NAME_LEN], *trace;
	int fd, dead = 0;

	o.nr_limits = 1;
	o.limits[0].type = KWQ_LIMIT_EXPONENTIAL;
	o.limits[0].a = 1000;
	o.limits[0].b = 1000;
	o.processing_timeout_ns = 100 * KT_MS;
	o.max_retries = 1;
	fd = kt_queue("trace-dead", &o, name);
	trace_start(dir, "trace_enable_dead_set");
	/* t: not finished within its deadline */
	kt_add(fd, "t");
	trace_get(fd, "t");
	kt_sleep_ms(300);
	/* requeued as a failure, due at once: finish it */
	if (trace_get(fd, "t") < 0 || kwq_done(fd, "t", 1) < 0)
		printf("    # t after its deadline: %s\n", strerror(errno));
	/* x: dies, is revived, dies again and is purged */
	kt_add(fd, "x");
	trace_fail(fd, "x");
	dead += trace_fail(fd, "x") == KWQ_DELAY_DEAD;
	kwq_revive(fd, "x", 1);
	trace_fail(fd, "x");
	dead += trace_fail(fd, "x") == KWQ_DELAY_DEAD;
	kwq_purge(fd, "x", 1);
	trace = trace_stop(dir);
	kwq_destroy(fd, name);
	close(fd);

	expect_events(trace, "key_timed_out", name, "key=t ", 1, 1, "one_timed_out_event");
	ktap_check(dead == 2, "second_failure_kills_the_key", "%d deaths", dead);
	expect_events(trace, "key_died", name, "key=x ", 2, 2, "one_died_event_per_death");
	expect_events(trace, "key_revived", name, "key=x len=1 arg=1 ", 1, 1,
		      "one_revived_event_per_revive");
	expect_events(trace, "key_purged", name, "key=x ", 1, 1, "one_purged_event_per_purge");
	free(trace);
}

static void trace_cases(void)
{
	static const char bin[] = { 'k', 0x01, (char)0xff, '"' };
	struct kwq_queue_opts o = { 0 };
	char name[KWQ_NAME_LEN], longkey[101], want[128], *trace;
	const char *dir = tracefs();
	struct kwq_stats_args st;
	char path[160];
	struct stat sb;
	int fd, i;

	if (dir)
		snprintf(path, sizeof(path), "%s/events/kwq/enable", dir);
	if (!dir || stat(path, &sb) < 0) {
		for (i = 0; i < 16; i++)
			ktap_skip("trace", "no tracefs or no kwq events");
		return;
	}
	kwq_parse_limiter("exponential:1h:1h", &o);
	fd = kt_queue("trace", &o, name);
	memset(longkey, 'x', 100);
	longkey[100] = '\0';

	trace_start(dir, "trace_enable");
	/* 5 adds, 1 rate-limited add, 2 gets, 2 dones, 1 delay, 1 shutdown */
	kt_add(fd, "a");
	kt_add(fd, "b");
	kwq_add(fd, bin, sizeof(bin));
	kwq_add(fd, longkey, 100);
	kwq_add_rate_limited(fd, "r", 1, NULL);
	get_key(fd, "a");
	get_key(fd, "b");
	kt_done(fd, "a");
	kt_done(fd, "b");
	kwq_add_after(fd, "d", 1, KT_MS);
	for (i = 0; i < 500; i++) {
		if (kwq_stats(fd, &st) == 0 && st.waiting == 1)
			break;
		kt_sleep_ms(10);
	}
	kwq_shutdown(fd, 0);
	trace = trace_stop(dir);
	kwq_destroy(fd, name);
	close(fd);

	ktap_check(count_events(trace, "key_added", name, NULL) == 5,
		   "one_add_event_per_add", "%d", count_events(trace, "key_added",
							       name, NULL));
	ktap_check(count_events(trace, "key_rate_limited", name,
				"arg=3600000000000 ") == 1,
		   "rate_limited_event_with_delay", "%d",
		   count_events(trace, "key_rate_limited", name, NULL));
	ktap_check(count_events(trace, "key_taken", name, NULL) == 2 &&
		   count_events(trace, "key_taken", name, "key=a ") == 1,
		   "one_get_event_per_get", "%d",
		   count_events(trace, "key_taken", name, NULL));
	ktap_check(count_events(trace, "key_finished", name, NULL) == 2 &&
		   count_events(trace, "key_finished", name, "key=b ") == 1,
		   "one_done_event_per_done", "%d",
		   count_events(trace, "key_finished", name, NULL));
	expect_events(trace, "key_due", name, "key=d ", 1, 1, "one_delay_fired_event");
	expect_events(trace, "queue_shutdown", name, "dropped=1 ", 1, 1, "one_shutdown_event");
	/* non-printable bytes escaped (octal), nothing raw */
	ktap_check(count_events(trace, "key_added", name,
				"key=k\\001\\377\\\" len=4 ") == 1,
		   "binary_key_escaped", "no escaped key in:\n%.2000s", trace);
	snprintf(want, sizeof(want), "key=%.64s... len=100 ", longkey);
	ktap_check(count_events(trace, "key_added", name, want) == 1,
		   "long_key_cut_at_64", "no '%s'", want);
	ktap_check(!memchr(trace, 0x01, strlen(trace)) &&
		   !memchr(trace, 0xff, strlen(trace)),
		   "no_raw_bytes_in_trace", "raw byte in trace");
	free(trace);
	trace_dead_cases(dir);
}

int main(void)
{
	kt_setup("kwq_metrics", NCASES, 120);
	metrics_cases();
	trace_cases();
	return ktap_end();
}
