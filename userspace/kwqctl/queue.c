// SPDX-License-Identifier: GPL-2.0
/*
 * kwqctl: the commands on whole queues: create, destroy, list, info and
 * shutdown.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kwqctl.h"

enum {
	CREATE_LIMITER, CREATE_MAX_WAIT, CREATE_MAX_ITEMS, CREATE_MODE,
	CREATE_PROCESSING_TIMEOUT, CREATE_MAX_RETRIES, CREATE_MAX_DEAD,
	CREATE_EXIST_OK, CREATE_NR_OPTS
};

const struct cmd_opt create_opts[] = {
	[CREATE_LIMITER] = { "limiter", 0, "SPEC",
		"exponential:BASE:MAX, fastslow:FAST:SLOW:N,\n"
		"bucket:QPS:BURST (QPS may be fractional, e.g. 0.5)\n"
		"or default (exponential:5ms:1000s + bucket:10:100);\n"
		"up to 4, combined as the max of their delays" },
	[CREATE_MAX_WAIT] = { "max-wait", 0, "DUR",
		"cap on rate-limited delays (default: none)" },
	[CREATE_MAX_ITEMS] = { "max-items", 0, "N",
		"most keys queued at once (default: no cap)" },
	[CREATE_MODE] = { "mode", 0, "OCTAL",
		"permission bits for opening it (default 0600)" },
	[CREATE_MAX_RETRIES] = { "max-retries", 0, "N",
		"failures requeued before a key moves to the dead set\n"
		"(0.." STR(KWQ_MAX_RETRIES) "; default 0: no dead set)" },
	[CREATE_MAX_DEAD] = { "max-dead", 0, "N",
		"most dead keys kept, oldest dropped (0.." STR(KWQ_MAX_DEAD) ";\n"
		"default 0: " STR(KWQ_DEFAULT_MAX_DEAD) "); needs --max-retries" },
	[CREATE_PROCESSING_TIMEOUT] = { "processing-timeout", 0, "DUR",
		"a key processing longer is taken back and requeued\n"
		"as a failure (1ms..365d; default 0: never)" },
	[CREATE_EXIST_OK] = { "exist-ok", 0, NULL,
		"succeed if the queue exists with these options (a\n"
		"restart's create); one made with others is an error\n"
		"naming them (`kwqctl info` prints a queue's)" },
	[CREATE_NR_OPTS] = { NULL, 0, NULL, NULL },
};

#define SPECS "exponential:BASE:MAX, fastslow:FAST:SLOW:N, bucket:QPS:BURST or default"

struct create_args {
	struct kwq_queue_opts q;
	int nr_spec;		/* --limiter options given */
	bool default_only;	/* the first was "default" */
	bool exist_ok;		/* --exist-ok: EEXIST is success */
	const char *processing_timeout;	/* as given, for a message */
};

static int create_opt(void *st, int opt, const char *val)
{
	struct create_args *c = st;
	unsigned long mode, max;
	unsigned int v;
	uint64_t ns;
	char *end;

	switch (opt) {
	case CREATE_LIMITER:
		c->nr_spec++;
		c->default_only = c->nr_spec == 1 && strcmp(val, "default") == 0;
		if (kwq_parse_limiter(val, &c->q) == 0)
			return 0;
		if (errno == E2BIG)
			err_usage("at most %d limiters ('default' counts as 2)",
				  KWQ_LIMITS_MAX);
		else
			err_usage("bad limiter SPEC '%s' (%s)", val, SPECS);
		return -1;
	case CREATE_MAX_WAIT:
		if (parse_dur_opt("--max-wait", val, &ns))
			return -1;
		c->q.max_wait_ns = ns;
		return 0;
	case CREATE_MAX_ITEMS:
		if (parse_u32(val, UINT32_MAX, &v)) {
			err_usage("bad --max-items '%s'", val);
			return -1;
		}
		c->q.max_items = v;
		return 0;
	case CREATE_MAX_RETRIES:
	case CREATE_MAX_DEAD:
		max = opt == CREATE_MAX_DEAD ? KWQ_MAX_DEAD : KWQ_MAX_RETRIES;
		if (parse_u32(val, max, &v)) {
			err_usage("bad --%s '%s' (0..%lu)", create_opts[opt].name,
				  val, max);
			return -1;
		}
		if (opt == CREATE_MAX_DEAD)
			c->q.max_dead = v;
		else
			c->q.max_retries = v;
		return 0;
	case CREATE_MODE:
		errno = 0;
		mode = strtoul(val, &end, 8);
		if (!*val || *end || errno || mode > 0777 || *val == '-') {
			err_usage("bad --mode '%s' (octal, 0..0777)", val);
			return -1;
		}
		c->q.mode = (unsigned int)mode;
		return 0;
	case CREATE_PROCESSING_TIMEOUT:
		if (parse_processing_timeout("--processing-timeout", val, false,
					     &ns))
			return -1;
		c->q.processing_timeout_ns = ns;
		c->processing_timeout = val;
		return 0;
	case CREATE_EXIST_OK:
		c->exist_ok = true;
		return 0;
	}
	return -1;
}

/*
 * @o as its queue behaves: mode 0 is 0600, no limiter the default pair,
 * max_dead 0 of a dead set KWQ_DEFAULT_MAX_DEAD, none without one.
 */
static void opts_normalize(struct kwq_queue_opts *o)
{
	if (!o->mode)
		o->mode = 0600;
	if (!o->nr_limits)
		kwq_parse_limiter("default", o);
	if (!o->max_retries)
		o->max_dead = 0;
	else if (!o->max_dead)
		o->max_dead = KWQ_DEFAULT_MAX_DEAD;
}

static void limiters_format(char *buf, size_t size,
			    const struct kwq_queue_opts *o)
{
	size_t n = 0;
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; i < o->nr_limits && n < size; i++) {
		n += snprintf(buf + n, size - n, "%s", i ? " + " : "");
		if (n < size)
			n += kwq_format_limiter(buf + n, size - n, &o->limits[i]);
	}
}

/*
 * --exist-ok found the queue: its options (KWQ_IOC_INFO) against @want,
 * as kwq.New compares them. 0 if they match (or the kernel cannot tell:
 * ENOTTY, a published queue), else -1 after naming each that differs.
 */
static int create_compare(int fd, const char *queue,
			  const struct kwq_queue_opts *want)
{
	struct kwq_queue_opts w = *want, g;
	char a[160], b[160];
	int bad = 0;

	if (kwq_queue_info(fd, &g, NULL) < 0) {
		if (errno == ENOTTY || errno == EOPNOTSUPP)
			return 0;
		err_errno(errno, "queue %s: its options", queue);
		return -1;
	}
	opts_normalize(&w);
	opts_normalize(&g);
#define DIFF(cond, fmt, ...) do {					\
		if (cond) {						\
			err_msg("queue %s exists with " fmt, queue, __VA_ARGS__); \
			bad = 1;					\
		}							\
	} while (0)
	DIFF(w.mode != g.mode, "--mode %04o, not %04o", g.mode, w.mode);
	DIFF(w.max_items != g.max_items, "--max-items %u, not %u",
	     g.max_items, w.max_items);
	format_dur(a, sizeof(a), g.max_wait_ns);
	format_dur(b, sizeof(b), w.max_wait_ns);
	DIFF(w.max_wait_ns != g.max_wait_ns, "--max-wait %s, not %s", a, b);
	format_dur(a, sizeof(a), g.processing_timeout_ns);
	format_dur(b, sizeof(b), w.processing_timeout_ns);
	DIFF(w.processing_timeout_ns != g.processing_timeout_ns,
	     "--processing-timeout %s, not %s", a, b);
	DIFF(w.max_retries != g.max_retries, "--max-retries %u, not %u",
	     g.max_retries, w.max_retries);
	DIFF(w.max_dead != g.max_dead, "--max-dead %u, not %u",
	     g.max_dead, w.max_dead);
	limiters_format(a, sizeof(a), &g);
	limiters_format(b, sizeof(b), &w);
	DIFF(w.nr_limits != g.nr_limits ||
	     memcmp(w.limits, g.limits, w.nr_limits * sizeof(w.limits[0])),
	     "limiters %s, not %s", a, b);
#undef DIFF
	if (bad)
		err_msg("queue %s: not opened as asked (kwqctl info %s; destroy it to start over)",
			queue, queue);
	return bad ? -1 : 0;
}

/* Create (@opts) or destroy (@opts NULL) the queue named by pos[0]. */
static int create_or_destroy(const struct cmd_ctx *ctx, const char *queue,
			     const struct kwq_queue_opts *opts, bool exist_ok)
{
	int fd = open_dev(ctx), rc = EX_OK, ret;
	unsigned long cap;

	if (fd < 0)
		return EX_ERR;
	if (!opts)
		ret = kwq_destroy(fd, queue);
	else if (exist_ok)
		ret = kwq_create_or_open(fd, queue, opts, 0);
	else
		ret = kwq_create(fd, queue, opts);
	if (ret < 0) {
		cap = errno == EINVAL && opts ?
		      module_param("max_items_per_queue") : 0;
		if (cap && opts->max_items > cap)
			err_errno(EINVAL, "queue %s: --max-items %u over %s, %lu",
				  queue, opts->max_items,
				  "the module's max_items_per_queue", cap);
		else
			err_errno(errno, "queue %s", queue);
		rc = EX_ERR;
	} else if (opts && exist_ok && ret == 0 &&
		   create_compare(fd, queue, opts)) {
		rc = EX_ERR;
	}
	close(fd);
	return rc;
}

int cmd_create(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct create_args c = { 0 };
	struct cmd_args a;

	if (cmd_parse(ctx, argc, argv, create_opt, &c, &a))
		return a.rc;
	if (check_processing_timeout(a.pos[0], "--processing-timeout",
				     c.processing_timeout,
				     c.q.processing_timeout_ns, false, "none"))
		return EX_USAGE;
	if (c.q.max_dead && !c.q.max_retries) {
		err_usage("queue %s: --max-dead %u needs --max-retries 1..%d (a dead set)",
			  a.pos[0], c.q.max_dead, KWQ_MAX_RETRIES);
		return EX_USAGE;
	}
	/* A lone "default" leaves the choice to the kernel (nr_limits 0). */
	if (c.default_only && c.nr_spec == 1)
		c.q.nr_limits = 0;
	return create_or_destroy(ctx, a.pos[0], &c.q, c.exist_ok);
}

int cmd_destroy(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct cmd_args a;

	if (cmd_parse(ctx, argc, argv, NULL, NULL, &a))
		return a.rc;
	return create_or_destroy(ctx, a.pos[0], NULL, false);
}

int cmd_list(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct queue_list ql;
	struct cmd_args a;
	int i;

	if (cmd_parse(ctx, argc, argv, NULL, NULL, &a))
		return a.rc;
	if (list_queues(ctx, &ql))
		return EX_ERR;
	for (i = 0; i < ql.nr; i++)
		printf("%.*s\n", KWQ_NAME_LEN, ql.names[i]);
	free(ql.names);
	return EX_OK;
}

/* The options queue @queue was created with, as create takes them. */
int cmd_info(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct kwq_queue_opts o;
	unsigned int flags, i;
	struct cmd_args a;
	char buf[64];
	int fd;

	if (cmd_parse(ctx, argc, argv, NULL, NULL, &a))
		return a.rc;
	fd = attach(ctx, a.pos[0]);
	if (fd < 0)
		return EX_ERR;
	if (kwq_queue_info(fd, &o, &flags) < 0) {
		if (errno == EOPNOTSUPP)
			err_errno(errno, "queue %s: %s", a.pos[0],
				  "published by a kernel module, which chose its options");
		else
			err_errno(errno, "queue %s", a.pos[0]);
		close(fd);
		return EX_ERR;
	}
	close(fd);
	printf("%-19s %04o\n", "mode", o.mode);
	if (!o.nr_limits)
		printf("%-19s default\n", "limiter");
	for (i = 0; i < o.nr_limits; i++) {
		kwq_format_limiter(buf, sizeof(buf), &o.limits[i]);
		printf("%-19s %s\n", "limiter", buf);
	}
	format_dur(buf, sizeof(buf), o.max_wait_ns);
	printf("%-19s %s\n", "max-wait", buf);
	printf("%-19s %u\n", "max-items", o.max_items);
	format_dur(buf, sizeof(buf), o.processing_timeout_ns);
	printf("%-19s %s\n", "processing-timeout", buf);
	printf("%-19s %u\n", "max-retries", o.max_retries);
	printf("%-19s %u\n", "max-dead", o.max_dead);
	printf("%-19s %s\n", "ephemeral",
	       flags & KWQ_CREATE_EPHEMERAL ? "yes" : "no");
	return EX_OK;
}

enum { SHUTDOWN_DRAIN, SHUTDOWN_NR_OPTS };

const struct cmd_opt shutdown_opts[] = {
	[SHUTDOWN_DRAIN] = { "drain", 0, NULL,
		"wait until nothing is ready or processing" },
	[SHUTDOWN_NR_OPTS] = { NULL, 0, NULL, NULL },
};

static int shutdown_opt(void *st, int opt, const char *val)
{
	unsigned int *flags = st;

	(void)opt;
	(void)val;
	*flags = KWQ_SHUTDOWN_DRAIN;
	return 0;
}

static int shutdown_op(int fd, void *flags)
{
	return kwq_shutdown(fd, *(unsigned int *)flags);
}

int cmd_shutdown(const struct cmd_ctx *ctx, int argc, char **argv)
{
	unsigned int flags = 0;
	struct cmd_args a;

	if (cmd_parse(ctx, argc, argv, shutdown_opt, &flags, &a))
		return a.rc;
	return on_queue(ctx, a.pos[0], shutdown_op, &flags);
}
