// SPDX-License-Identifier: GPL-2.0
/*
 * kwqctl: command-line access to kwq queues through /dev/kwq.
 *
 * Exit status: 0 ok; 1 error (stderr names the errno); 2 usage; 3 `get`
 * found nothing before its timeout; 4 queue shut down and empty (`get`).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kwq.h"

extern char **environ;

enum { EX_OK = 0, EX_ERR = 1, EX_USAGE = 2, EX_EMPTY = 3, EX_SHUT = 4 };

static const char *device = KWQ_DEFAULT_DEVICE;
static const char *cmd_name = "";

/* --- messages --------------------------------------------------------- */

static const char *errname(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "E?";
}

/* "kwqctl: CMD: [CONTEXT: ]strerror (ENAME)" and nothing else. */
static void __attribute__((format(printf, 2, 3)))
err_errno(int e, const char *fmt, ...)
{
	char ctx[512] = "";
	va_list ap;

	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(ctx, sizeof(ctx), fmt, ap);
		va_end(ap);
	}
	fprintf(stderr, "kwqctl: %s: %s%s%s (%s)\n", cmd_name, ctx,
		*ctx ? ": " : "", strerror(e), errname(e));
}

static void __attribute__((format(printf, 1, 2)))
err_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "kwqctl: %s%s", cmd_name, *cmd_name ? ": " : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see kwqctl %s%s--help)\n", cmd_name,
		*cmd_name ? " " : "");
}

/* Print a key as a line: its bytes, then a newline. */
static void put_key(FILE *f, const void *key, size_t len)
{
	fwrite(key, 1, len, f);
}

/* --- argument parsing ------------------------------------------------- */

struct opt {
	const char *lng;	/* without "--", or NULL */
	char shrt;		/* or 0 */
	bool arg;
	int id;
};

enum { A_END = -1, A_POS = 0, A_BAD = -2, O_HELP = 1000 };

struct args {
	int argc;
	char **argv;
	int i;
	bool dashdash;
};

/*
 * Next argument: an option id (its value in *val), A_POS with a
 * positional in *val, A_END, or A_BAD (message printed). Options and
 * positionals may be mixed; "--" makes every later argument positional.
 */
static int next_arg(struct args *a, const struct opt *opts, const char **val)
{
	static const struct opt help = { "help", 'h', false, O_HELP };
	const struct opt *o;
	char *s;

	if (a->i >= a->argc)
		return A_END;
	s = a->argv[a->i++];
	*val = s;
	if (a->dashdash || s[0] != '-' || s[1] == '\0')
		return A_POS;
	if (strcmp(s, "--") == 0) {
		a->dashdash = true;
		return next_arg(a, opts, val);
	}
	if (s[1] == '-') {
		const char *name = s + 2, *eq = strchr(name, '=');
		size_t nl = eq ? (size_t)(eq - name) : strlen(name);

		for (o = opts;; o++) {
			if (!o->id)
				o = &help;
			if (o->lng && strlen(o->lng) == nl &&
			    strncmp(o->lng, name, nl) == 0)
				break;
			if (o == &help) {
				err_usage("unknown option '%s'", s);
				return A_BAD;
			}
		}
		if (!o->arg) {
			if (eq) {
				err_usage("option '--%s' takes no value", o->lng);
				return A_BAD;
			}
			return o->id;
		}
		if (eq) {
			*val = eq + 1;
			return o->id;
		}
		if (a->i >= a->argc) {
			err_usage("option '--%s' needs a value", o->lng);
			return A_BAD;
		}
		*val = a->argv[a->i++];
		return o->id;
	}
	for (o = opts;; o++) {
		if (!o->id)
			o = &help;
		if (o->shrt && o->shrt == s[1])
			break;
		if (o == &help) {
			err_usage("unknown option '%s'", s);
			return A_BAD;
		}
	}
	if (!o->arg) {
		if (s[2]) {
			err_usage("unknown option '%s'", s);
			return A_BAD;
		}
		return o->id;
	}
	if (s[2]) {
		*val = s + 2;
		return o->id;
	}
	if (a->i >= a->argc) {
		err_usage("option '-%c' needs a value", o->shrt);
		return A_BAD;
	}
	*val = a->argv[a->i++];
	return o->id;
}

static int parse_u32(const char *s, unsigned long max, unsigned int *out)
{
	char *end;
	unsigned long v;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return -1;
	*out = (unsigned int)v;
	return 0;
}

static int parse_dur_opt(const char *opt, const char *s, uint64_t *ns)
{
	if (kwq_parse_duration(s, ns) == 0)
		return 0;
	err_usage("bad duration '%s' for %s (an integer with ns, us, ms, s, m or h)",
		  s, opt);
	return -1;
}

/* Open the device and attach to @queue; prints the error. */
static int attach(const char *queue)
{
	int fd = kwq_open_dev(device);

	if (fd < 0) {
		err_errno(errno, "%s", device);
		return -1;
	}
	if (kwq_open(fd, queue) < 0) {
		err_errno(errno, "queue %s", queue);
		close(fd);
		return -1;
	}
	return fd;
}

/* Pack positionals as keys. */
static int pack_keys(struct kwq_recbuf *rb, char **keys, int n, int prio)
{
	int i;

	for (i = 0; i < n; i++) {
		if (kwq_recbuf_push_str(rb, keys[i], prio) < 0) {
			if (errno == EINVAL)
				err_usage("bad key '%s' (1..%d bytes)", keys[i],
					  KWQ_KEY_LEN_MAX);
			else
				err_errno(errno, NULL);
			return -1;
		}
	}
	return 0;
}

/* --- commands --------------------------------------------------------- */

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *synopsis;
	const char *help;
};

static const struct cmd *cur;

static void cmd_help(FILE *f)
{
	fprintf(f, "usage: kwqctl [-d DEVICE] %s %s\n\n%s", cur->name,
		cur->synopsis, cur->help);
}

/*
 * Collect the positionals of a command that takes no options but --help;
 * returns -1 with the exit code in *rc when done.
 */
static int simple_args(int argc, char **argv, const struct opt *opts,
		       char **pos, int maxpos, int *npos, int *rc,
		       int (*on_opt)(int id, const char *val))
{
	struct args a = { argc, argv, 1, false };
	const char *val;
	int c;

	*npos = 0;
	while ((c = next_arg(&a, opts, &val)) != A_END) {
		if (c == A_BAD) {
			*rc = EX_USAGE;
			return -1;
		}
		if (c == O_HELP) {
			cmd_help(stdout);
			*rc = EX_OK;
			return -1;
		}
		if (c == A_POS) {
			if (*npos >= maxpos) {
				err_usage("unexpected argument '%s'", val);
				*rc = EX_USAGE;
				return -1;
			}
			pos[(*npos)++] = (char *)val;
			continue;
		}
		if (on_opt(c, val) < 0) {
			*rc = EX_USAGE;
			return -1;
		}
	}
	return 0;
}

static int no_opt(int id, const char *val)
{
	(void)id;
	(void)val;
	return 0;
}

static const struct opt no_opts[] = { { NULL, 0, false, 0 } };

/* create */
static struct kwq_queue_opts create_opts;
static int create_nr_spec, create_default_only;

static int create_opt(int id, const char *val)
{
	uint64_t ns;
	unsigned int v;
	char *end;
	unsigned long mode;

	switch (id) {
	case 'l':
		create_nr_spec++;
		create_default_only = create_nr_spec == 1 &&
				      strcmp(val, "default") == 0;
		if (kwq_parse_limiter(val, &create_opts) == 0)
			return 0;
		if (errno == E2BIG)
			err_usage("at most %d limiters ('default' counts as 2)",
				  KWQ_LIMITS_MAX);
		else
			err_usage("bad limiter SPEC '%s' (exponential:BASE:MAX, fastslow:FAST:SLOW:N, bucket:QPS:BURST or default)",
				  val);
		return -1;
	case 'w':
		if (parse_dur_opt("--max-wait", val, &ns))
			return -1;
		create_opts.max_wait_ns = ns;
		return 0;
	case 'i':
		if (parse_u32(val, UINT32_MAX, &v)) {
			err_usage("bad --max-items '%s'", val);
			return -1;
		}
		create_opts.max_items = v;
		return 0;
	case 'm':
		errno = 0;
		mode = strtoul(val, &end, 8);
		if (!*val || *end || errno || mode > 0777 || *val == '-') {
			err_usage("bad --mode '%s' (octal, 0..0777)", val);
			return -1;
		}
		create_opts.mode = (unsigned int)mode;
		return 0;
	}
	return -1;
}

static int do_create(int argc, char **argv)
{
	static const struct opt opts[] = {
		{ "limiter", 0, true, 'l' },
		{ "max-wait", 0, true, 'w' },
		{ "max-items", 0, true, 'i' },
		{ "mode", 0, true, 'm' },
		{ NULL, 0, false, 0 },
	};
	char *pos[1];
	int npos, rc, fd;

	if (simple_args(argc, argv, opts, pos, 1, &npos, &rc, create_opt))
		return rc;
	if (npos != 1) {
		err_usage("missing QUEUE");
		return EX_USAGE;
	}
	/* A lone "default" leaves the choice to the kernel (nr_limits 0). */
	if (create_default_only && create_nr_spec == 1)
		create_opts.nr_limits = 0;
	fd = kwq_open_dev(device);
	if (fd < 0) {
		err_errno(errno, "%s", device);
		return EX_ERR;
	}
	if (kwq_create(fd, pos[0], &create_opts) < 0) {
		err_errno(errno, "queue %s", pos[0]);
		return EX_ERR;
	}
	close(fd);
	return EX_OK;
}

static int do_destroy(int argc, char **argv)
{
	char *pos[1];
	int npos, rc, fd;

	if (simple_args(argc, argv, no_opts, pos, 1, &npos, &rc, no_opt))
		return rc;
	if (npos != 1) {
		err_usage("missing QUEUE");
		return EX_USAGE;
	}
	fd = kwq_open_dev(device);
	if (fd < 0) {
		err_errno(errno, "%s", device);
		return EX_ERR;
	}
	if (kwq_destroy(fd, pos[0]) < 0) {
		err_errno(errno, "queue %s", pos[0]);
		return EX_ERR;
	}
	close(fd);
	return EX_OK;
}

static int do_list(int argc, char **argv)
{
	char (*names)[KWQ_NAME_LEN] = NULL;
	unsigned int cap = 64;
	int npos, rc, fd, n, i;

	if (simple_args(argc, argv, no_opts, NULL, 0, &npos, &rc, no_opt))
		return rc;
	fd = kwq_open_dev(device);
	if (fd < 0) {
		err_errno(errno, "%s", device);
		return EX_ERR;
	}
	for (;;) {
		free(names);
		names = calloc(cap, KWQ_NAME_LEN);
		if (!names) {
			err_errno(errno, NULL);
			return EX_ERR;
		}
		n = kwq_list(fd, names, cap);
		if (n < 0) {
			err_errno(errno, NULL);
			return EX_ERR;
		}
		if ((unsigned int)n <= cap)
			break;
		cap = (unsigned int)n + 16;
	}
	for (i = 0; i < n; i++)
		printf("%.*s\n", KWQ_NAME_LEN, names[i]);
	free(names);
	close(fd);
	return EX_OK;
}

/* add */
static uint64_t add_after;
static bool add_has_after;
static int add_prio;

static int add_opt(int id, const char *val)
{
	char *end;
	long v;

	if (id == 'a') {
		add_has_after = true;
		return parse_dur_opt("--after", val, &add_after);
	}
	errno = 0;
	v = strtol(val, &end, 10);
	if (!*val || *end || errno || v < INT32_MIN || v > INT32_MAX) {
		err_usage("bad --priority '%s' (a 32-bit integer)", val);
		return -1;
	}
	add_prio = (int)v;
	return 0;
}

/* Report a failed batch call: which key stopped it. */
static void batch_error(int e, char **keys, unsigned int nr, unsigned int done)
{
	if (done < nr)
		err_errno(e, "key %s", keys[done]);
	else
		err_errno(e, NULL);
}

static int do_add(int argc, char **argv)
{
	static const struct opt opts[] = {
		{ "after", 0, true, 'a' },
		{ "priority", 0, true, 'p' },
		{ NULL, 0, false, 0 },
	};
	struct kwq_recbuf rb = KWQ_RECBUF_INIT;
	struct kwq_batch_opts bo = { 0, 0, NULL };
	unsigned int done;
	char **pos;
	int npos, rc, fd;

	pos = calloc((size_t)argc + 1, sizeof(*pos));
	if (simple_args(argc, argv, opts, pos, argc, &npos, &rc, add_opt))
		return rc;
	if (npos < 2) {
		err_usage(npos ? "missing KEY" : "missing QUEUE");
		return EX_USAGE;
	}
	if (pack_keys(&rb, pos + 1, npos - 1, add_prio))
		return errno == EINVAL ? EX_USAGE : EX_ERR;
	if (add_has_after) {
		if (add_after > INT64_MAX) {
			err_usage("--after too large");
			return EX_USAGE;
		}
		bo.flags = KWQ_ADD_AFTER;
		bo.after_ns = (int64_t)add_after;
	}
	fd = attach(pos[0]);
	if (fd < 0)
		return EX_ERR;
	if (kwq_add_batch(fd, &rb, &bo, &done) < 0) {
		batch_error(errno, pos + 1, rb.nr, done);
		return EX_ERR;
	}
	close(fd);
	return EX_OK;
}

static int do_add_rate_limited(int argc, char **argv)
{
	struct kwq_recbuf rb = KWQ_RECBUF_INIT;
	struct kwq_batch_opts bo = { KWQ_ADD_RATE_LIMITED, 0, NULL };
	unsigned int done, i;
	char **pos, dur[32];
	int npos, rc, fd, ret, e;

	pos = calloc((size_t)argc + 1, sizeof(*pos));
	if (simple_args(argc, argv, no_opts, pos, argc, &npos, &rc, no_opt))
		return rc;
	if (npos < 2) {
		err_usage(npos ? "missing KEY" : "missing QUEUE");
		return EX_USAGE;
	}
	if (pack_keys(&rb, pos + 1, npos - 1, 0))
		return errno == EINVAL ? EX_USAGE : EX_ERR;
	bo.delays = calloc(rb.nr, sizeof(*bo.delays));
	if (!bo.delays) {
		err_errno(errno, NULL);
		return EX_ERR;
	}
	fd = attach(pos[0]);
	if (fd < 0)
		return EX_ERR;
	ret = kwq_add_batch(fd, &rb, &bo, &done);
	e = errno;
	for (i = 0; i < done && i < rb.nr; i++) {
		kwq_format_duration(dur, sizeof(dur), bo.delays[i]);
		printf("%s %s\n", pos[1 + i], dur);
	}
	if (ret < 0) {
		fflush(stdout);
		batch_error(e, pos + 1, rb.nr, done);
		return EX_ERR;
	}
	close(fd);
	return EX_OK;
}

/* forget, remove, done: one batch ioctl over the keys */
static int keys_cmd(int argc, char **argv,
		    int (*fn)(int, const struct kwq_recbuf *, unsigned int *))
{
	struct kwq_recbuf rb = KWQ_RECBUF_INIT;
	unsigned int done;
	char **pos;
	int npos, rc, fd;

	pos = calloc((size_t)argc + 1, sizeof(*pos));
	if (simple_args(argc, argv, no_opts, pos, argc, &npos, &rc, no_opt))
		return rc;
	if (npos < 2) {
		err_usage(npos ? "missing KEY" : "missing QUEUE");
		return EX_USAGE;
	}
	if (pack_keys(&rb, pos + 1, npos - 1, 0))
		return errno == EINVAL ? EX_USAGE : EX_ERR;
	fd = attach(pos[0]);
	if (fd < 0)
		return EX_ERR;
	if (fn(fd, &rb, &done) < 0) {
		batch_error(errno, pos + 1, rb.nr, done);
		return EX_ERR;
	}
	close(fd);
	return EX_OK;
}

static int do_forget(int argc, char **argv)
{
	return keys_cmd(argc, argv, kwq_forget_batch);
}

static int do_remove(int argc, char **argv)
{
	return keys_cmd(argc, argv, kwq_remove_batch);
}

static int do_done(int argc, char **argv)
{
	return keys_cmd(argc, argv, kwq_done_batch);
}

static int do_requeues(int argc, char **argv)
{
	char *pos[2];
	int npos, rc, fd;
	long n;

	if (simple_args(argc, argv, no_opts, pos, 2, &npos, &rc, no_opt))
		return rc;
	if (npos != 2) {
		err_usage(npos ? "missing KEY" : "missing QUEUE");
		return EX_USAGE;
	}
	if (!*pos[1] || strlen(pos[1]) > KWQ_KEY_LEN_MAX) {
		err_usage("bad key '%s' (1..%d bytes)", pos[1], KWQ_KEY_LEN_MAX);
		return EX_USAGE;
	}
	fd = attach(pos[0]);
	if (fd < 0)
		return EX_ERR;
	n = kwq_num_requeues(fd, pos[1], strlen(pos[1]));
	if (n < 0) {
		err_errno(errno, "key %s", pos[1]);
		return EX_ERR;
	}
	printf("%ld\n", n);
	close(fd);
	return EX_OK;
}

static int do_len(int argc, char **argv)
{
	char *pos[1];
	int npos, rc, fd;
	uint64_t len;

	if (simple_args(argc, argv, no_opts, pos, 1, &npos, &rc, no_opt))
		return rc;
	if (npos != 1) {
		err_usage("missing QUEUE");
		return EX_USAGE;
	}
	fd = attach(pos[0]);
	if (fd < 0)
		return EX_ERR;
	if (kwq_len(fd, &len) < 0) {
		err_errno(errno, NULL);
		return EX_ERR;
	}
	printf("%" PRIu64 "\n", len);
	close(fd);
	return EX_OK;
}

/* get */
static int64_t get_timeout = -1;
static unsigned int get_count = 1;

static int get_opt(int id, const char *val)
{
	uint64_t ns;

	if (id == 't') {
		if (parse_dur_opt("--timeout", val, &ns))
			return -1;
		get_timeout = (int64_t)ns;
		return 0;
	}
	if (parse_u32(val, UINT32_MAX, &get_count) || !get_count) {
		err_usage("bad -n '%s' (a count >= 1)", val);
		return -1;
	}
	return 0;
}

static int do_get(int argc, char **argv)
{
	static const struct opt opts[] = {
		{ "timeout", 0, true, 't' },
		{ NULL, 'n', true, 'n' },
		{ NULL, 0, false, 0 },
	};
	enum { BATCH = 64 };
	static unsigned char buf[BATCH * KWQ_REC_SIZE_MAX];
	unsigned int got = 0, want;
	const void *key;
	size_t used, off, len;
	char *pos[1];
	int npos, rc, fd, n;

	if (simple_args(argc, argv, opts, pos, 1, &npos, &rc, get_opt))
		return rc;
	if (npos != 1) {
		err_usage("missing QUEUE");
		return EX_USAGE;
	}
	fd = attach(pos[0]);
	if (fd < 0)
		return EX_ERR;
	/* The first call waits as told; the rest only take what is ready. */
	while (got < get_count) {
		want = get_count - got < BATCH ? get_count - got : BATCH;
		n = kwq_get_batch(fd, buf, sizeof(buf), want, KWQ_GET_DETACHED,
				  got ? 0 : get_timeout, &used);
		if (n < 0) {
			if (got)
				break;
			if (errno == EAGAIN || errno == ETIMEDOUT)
				return EX_EMPTY;
			if (errno == ESHUTDOWN)
				return EX_SHUT;
			err_errno(errno, NULL);
			return EX_ERR;
		}
		off = 0;
		while (kwq_rec_next(buf, used, &off, &key, &len, NULL) == 1) {
			put_key(stdout, key, len);
			putchar('\n');
		}
		got += (unsigned int)n;
		if (n == 0)
			break;
	}
	close(fd);
	return fflush(stdout) ? EX_ERR : EX_OK;
}

static bool shutdown_drain;

static int shutdown_opt(int id, const char *val)
{
	(void)id;
	(void)val;
	shutdown_drain = true;
	return 0;
}

static int do_shutdown(int argc, char **argv)
{
	static const struct opt opts[] = {
		{ "drain", 0, false, 'D' },
		{ NULL, 0, false, 0 },
	};
	char *pos[1];
	int npos, rc, fd;

	if (simple_args(argc, argv, opts, pos, 1, &npos, &rc, shutdown_opt))
		return rc;
	if (npos != 1) {
		err_usage("missing QUEUE");
		return EX_USAGE;
	}
	fd = attach(pos[0]);
	if (fd < 0)
		return EX_ERR;
	if (kwq_shutdown(fd, shutdown_drain ? KWQ_SHUTDOWN_DRAIN : 0) < 0) {
		err_errno(errno, NULL);
		return EX_ERR;
	}
	close(fd);
	return EX_OK;
}

/* stats */
static int stats_fmt;	/* 0 table, 'j' json, 'p' prometheus */

static int stats_opt(int id, const char *val)
{
	(void)val;
	if (stats_fmt && stats_fmt != id) {
		err_usage("--json and --prometheus exclude each other");
		return -1;
	}
	stats_fmt = id;
	return 0;
}

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

#define NFIELDS (sizeof(stat_fields) / sizeof(stat_fields[0]))
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

static int do_stats(int argc, char **argv)
{
	static const struct opt opts[] = {
		{ "json", 0, false, 'j' },
		{ "prometheus", 0, false, 'p' },
		{ NULL, 0, false, 0 },
	};
	struct kwq_stats_args st;
	char *pos[1];
	int npos, rc, fd;

	if (simple_args(argc, argv, opts, pos, 1, &npos, &rc, stats_opt))
		return rc;
	if (npos != 1) {
		err_usage("missing QUEUE");
		return EX_USAGE;
	}
	fd = attach(pos[0]);
	if (fd < 0)
		return EX_ERR;
	if (kwq_stats(fd, &st) < 0) {
		err_errno(errno, NULL);
		return EX_ERR;
	}
	close(fd);
	switch (stats_fmt) {
	case 'j':
		print_json(pos[0], &st);
		break;
	case 'p':
		print_prometheus(pos[0], &st);
		break;
	default:
		print_table(pos[0], &st);
		break;
	}
	return fflush(stdout) ? EX_ERR : EX_OK;
}

/* work */
static const char *work_queue;
static char **work_cmd;
static int work_ncmd;
static long work_max_retries = -1;	/* -1: retry forever */
static pthread_mutex_t work_lock = PTHREAD_MUTEX_INITIALIZER;

/* Run CMD with @key appended and in KWQ_KEY: its exit status, or -1. */
static int run_cmd(const char *key)
{
	char **args, **env, *kv;
	size_t ne = 0, i, j = 0;
	int status, ret;
	pid_t pid;

	while (environ[ne])
		ne++;
	args = calloc((size_t)work_ncmd + 2, sizeof(*args));
	env = calloc(ne + 2, sizeof(*env));
	if (asprintf(&kv, "KWQ_KEY=%s", key) < 0)
		kv = NULL;
	if (!args || !env || !kv) {
		free(args);
		free(env);
		free(kv);
		errno = ENOMEM;
		return -1;
	}
	memcpy(args, work_cmd, (size_t)work_ncmd * sizeof(*args));
	args[work_ncmd] = (char *)key;
	for (i = 0; i < ne; i++)
		if (strncmp(environ[i], "KWQ_KEY=", 8) != 0)
			env[j++] = environ[i];
	env[j] = kv;
	ret = posix_spawnp(&pid, work_cmd[0], NULL, NULL, args, env);
	free(args);
	free(env);
	free(kv);
	if (ret) {
		errno = ret;
		return -1;
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static void __attribute__((noreturn)) work_fatal(int e, const char *what,
						 const char *key)
{
	pthread_mutex_lock(&work_lock);
	if (key)
		err_errno(e, "%s %s", what, key);
	else
		err_errno(e, "%s", what);
	fflush(stderr);
	/* Closing the fds (exit) returns every in-flight lease. */
	_exit(EX_ERR);
}

static void *worker(void *unused)
{
	char key[KWQ_KEY_LEN_MAX + 1];
	int fd, rc, finished;
	long n = 0, r;
	uint64_t delay;
	bool held = false;

	(void)unused;
	fd = kwq_open_dev(device);
	if (fd < 0)
		work_fatal(errno, device, NULL);
	if (kwq_open(fd, work_queue) < 0)
		work_fatal(errno, "queue", work_queue);
	for (;;) {
		/* Finish the key held (if any) and take the next: one call. */
		n = kwq_done_get_one(fd, held ? key : NULL, (size_t)n,
				     &finished, key, sizeof(key), 0, -1);
		if (finished)
			held = false;
		if (n < 0) {
			if (held)
				work_fatal(errno, "done key", key);
			if (errno == EINTR)
				continue;
			if (errno == ESHUTDOWN)
				break;
			work_fatal(errno, "get", NULL);
		}
		held = true;
		key[n] = '\0';
		if (memchr(key, '\0', (size_t)n)) {
			pthread_mutex_lock(&work_lock);
			fprintf(stderr, "kwqctl: work: dropping a key with a NUL byte (cannot be an argument)\n");
			pthread_mutex_unlock(&work_lock);
			rc = -2;
		} else {
			rc = run_cmd(key);
			if (rc < 0)
				work_fatal(errno, "run", work_cmd[0]);
		}
		if (rc == 0 || rc == -2) {
			if (kwq_forget(fd, key, (size_t)n) < 0)
				work_fatal(errno, "forget key", key);
		} else {
			r = kwq_num_requeues(fd, key, (size_t)n);
			if (r < 0)
				work_fatal(errno, "requeues key", key);
			if (work_max_retries >= 0 && r >= work_max_retries) {
				pthread_mutex_lock(&work_lock);
				fprintf(stderr, "kwqctl: work: key %s: giving up after %ld retries (last exit status %d)\n",
					key, r, rc);
				pthread_mutex_unlock(&work_lock);
				if (kwq_forget(fd, key, (size_t)n) < 0)
					work_fatal(errno, "forget key", key);
			} else if (kwq_add_rate_limited(fd, key, (size_t)n,
							&delay) < 0) {
				if (errno != ESHUTDOWN)
					work_fatal(errno, "add-rate-limited key",
						   key);
				pthread_mutex_lock(&work_lock);
				fprintf(stderr, "kwqctl: work: key %s: failed (exit status %d), not retried: queue shut down\n",
					key, rc);
				pthread_mutex_unlock(&work_lock);
			}
		}
	}
	close(fd);
	return NULL;
}

static unsigned int work_jobs = 1;

static int work_opt(int id, const char *val)
{
	unsigned int v;

	if (id == 'j') {
		if (parse_u32(val, 1024, &work_jobs) || !work_jobs) {
			err_usage("bad -j '%s' (1..1024)", val);
			return -1;
		}
		return 0;
	}
	if (parse_u32(val, INT32_MAX, &v)) {
		err_usage("bad --max-retries '%s'", val);
		return -1;
	}
	work_max_retries = v;
	return 0;
}

static int do_work(int argc, char **argv)
{
	static const struct opt opts[] = {
		{ NULL, 'j', true, 'j' },
		{ "max-retries", 0, true, 'r' },
		{ NULL, 0, false, 0 },
	};
	struct args a = { argc, argv, 1, false };
	pthread_t *tids;
	const char *val;
	unsigned int i;
	int c, fd;

	while ((c = next_arg(&a, opts, &val)) != A_END) {
		if (c == A_BAD)
			return EX_USAGE;
		if (c == O_HELP) {
			cmd_help(stdout);
			return EX_OK;
		}
		if (c != A_POS) {
			if (work_opt(c, val))
				return EX_USAGE;
			continue;
		}
		if (!work_queue) {
			work_queue = val;
			continue;
		}
		/* The first argument after QUEUE starts CMD. */
		work_cmd = &argv[a.i - 1];
		work_ncmd = argc - (a.i - 1);
		break;
	}
	if (!work_queue) {
		err_usage("missing QUEUE");
		return EX_USAGE;
	}
	if (!work_cmd) {
		err_usage("missing CMD");
		return EX_USAGE;
	}
	/* Fail early and clearly if the queue cannot be opened. */
	fd = attach(work_queue);
	if (fd < 0)
		return EX_ERR;
	close(fd);
	if (work_jobs == 1) {
		worker(NULL);
		return EX_OK;
	}
	tids = calloc(work_jobs, sizeof(*tids));
	if (!tids) {
		err_errno(errno, NULL);
		return EX_ERR;
	}
	for (i = 0; i < work_jobs; i++) {
		c = pthread_create(&tids[i], NULL, worker, NULL);
		if (c) {
			err_errno(c, "thread");
			return EX_ERR;
		}
	}
	for (i = 0; i < work_jobs; i++)
		pthread_join(tids[i], NULL);
	return EX_OK;
}

static const struct cmd cmds[] = {
	{ "create", do_create,
	  "QUEUE [--limiter SPEC]... [--max-wait DUR] [--max-items N] [--mode OCTAL]",
	  "Create a queue.\n"
	  "  --limiter SPEC   exponential:BASE:MAX, fastslow:FAST:SLOW:N,\n"
	  "                   bucket:QPS:BURST (QPS may be fractional, e.g. 0.5)\n"
	  "                   or default (exponential:5ms:1000s + bucket:10:100);\n"
	  "                   up to 4, combined as the max of their delays\n"
	  "  --max-wait DUR   cap on rate-limited delays (default: none)\n"
	  "  --max-items N    most keys queued at once (default: no cap)\n"
	  "  --mode OCTAL     permission bits for opening it (default 0600)\n" },
	{ "destroy", do_destroy, "QUEUE", "Destroy a queue.\n" },
	{ "list", do_list, "", "Print the queue names, one per line.\n" },
	{ "add", do_add, "QUEUE [--after DUR] [--priority N] KEY...",
	  "Add keys (one batch).\n"
	  "  --after DUR      make them ready only after DUR\n"
	  "  --priority N     higher priorities are handed out first\n" },
	{ "add-rate-limited", do_add_rate_limited, "QUEUE KEY...",
	  "Add keys with the delay of the queue's rate limiter; prints\n"
	  "\"KEY DELAY\" per key (DELAY in the largest exact unit, 0 for none).\n" },
	{ "forget", do_forget, "QUEUE KEY...",
	  "Clear the keys' rate limiter failure counts.\n" },
	{ "requeues", do_requeues, "QUEUE KEY",
	  "Print the key's failure count.\n" },
	{ "remove", do_remove, "QUEUE KEY...",
	  "Remove queued keys (ready or waiting) or cancel a pending requeue.\n" },
	{ "len", do_len, "QUEUE", "Print the number of ready keys.\n" },
	{ "get", do_get, "QUEUE [--timeout DUR] [-n COUNT]",
	  "Take up to COUNT (default 1) ready keys and print one per line. They\n"
	  "stay processing, detached from this process, until `kwqctl done`.\n"
	  "  --timeout DUR    wait at most DUR for the first key (default:\n"
	  "                   forever; 0: do not wait)\n"
	  "Exit status 3: nothing before the timeout; 4: shut down and empty.\n" },
	{ "done", do_done, "QUEUE KEY...",
	  "Mark processing keys done (also keys another process got).\n" },
	{ "shutdown", do_shutdown, "QUEUE [--drain]",
	  "Shut the queue down: no more adds, delayed keys dropped.\n"
	  "  --drain          wait until nothing is ready or processing\n" },
	{ "stats", do_stats, "QUEUE [--json | --prometheus]",
	  "Print the queue's counters as a table, JSON or Prometheus text.\n" },
	{ "work", do_work, "QUEUE [-j N] [--max-retries N] -- CMD [ARG...]",
	  "Process keys: run CMD with the key as its last argument and in\n"
	  "KWQ_KEY. Exit 0: forget + done; else add-rate-limited + done, and\n"
	  "after N failed retries forget + done with a message. Keys are leased:\n"
	  "if kwqctl dies they go back to the queue. Returns 0 once the queue\n"
	  "is shut down and drained.\n"
	  "  -j N             N workers (threads, default 1)\n"
	  "  --max-retries N  give a key up after N retries (default: never)\n" },
};

#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: kwqctl [-d DEVICE] COMMAND [ARG...]\n\n"
		"  -d DEVICE   the kwq device (default " KWQ_DEFAULT_DEVICE ")\n\n"
		"commands:\n");
	for (i = 0; i < NCMDS; i++)
		fprintf(f, "  kwqctl %s %s\n", cmds[i].name, cmds[i].synopsis);
	fprintf(f, "\nDUR: an integer with ns, us, ms, s, m or h (0 allowed).\n"
		"`kwqctl COMMAND --help` describes a command. Exit status: 0 ok,\n"
		"1 error, 2 usage, 3 get timed out, 4 queue shut down and empty.\n");
}

int main(int argc, char **argv)
{
	int i = 1;
	size_t c;

	while (i < argc && argv[i][0] == '-') {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return EX_OK;
		}
		if (strcmp(argv[i], "-d") == 0 && i + 1 < argc) {
			device = argv[i + 1];
			i += 2;
		} else if (strncmp(argv[i], "-d", 2) == 0 && argv[i][2]) {
			device = argv[i] + 2;
			i++;
		} else if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		} else {
			err_usage("unknown option '%s'", argv[i]);
			return EX_USAGE;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return EX_USAGE;
	}
	for (c = 0; c < NCMDS; c++) {
		if (strcmp(cmds[c].name, argv[i]) == 0) {
			cur = &cmds[c];
			cmd_name = cur->name;
			return cmds[c].fn(argc - i, argv + i);
		}
	}
	err_usage("unknown command '%s'", argv[i]);
	return EX_USAGE;
}
