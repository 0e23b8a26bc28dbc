// SPDX-License-Identifier: GPL-2.0
/*
 * kwqctl: the commands on keys: add, add-rate-limited, forget, remove,
 * done, touch, requeues, len and get. Keys are command-line arguments (one
 * batch ioctl for many); get prints one key a line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kwqctl.h"

enum { ADD_AFTER, ADD_PRIORITY, ADD_REPLACE, ADD_LATER, ADD_NR_OPTS };

const struct cmd_opt add_opts[] = {
	[ADD_AFTER] = { "after", 0, "DUR", "make them ready only after DUR" },
	[ADD_PRIORITY] = { "priority", 0, "N",
		"higher priorities are handed out first" },
	[ADD_REPLACE] = { "replace", 0, NULL,
		"with --after: DUR from now replaces a key's deadline, even a sooner one" },
	[ADD_LATER] = { "later", 0, NULL,
		"with --after: a key keeps the later of its deadline and DUR from now" },
	[ADD_NR_OPTS] = { NULL, 0, NULL, NULL },
};

struct add_args {
	uint64_t after;
	bool has_after;
	unsigned int which;	/* KWQ_ADD_REPLACE or KWQ_ADD_LATER */
	int prio;
};

static int add_opt(void *st, int opt, const char *val)
{
	struct add_args *o = st;
	char *end;
	long v;

	if (opt == ADD_AFTER) {
		o->has_after = true;
		return parse_dur_opt("--after", val, &o->after);
	}
	if (opt == ADD_REPLACE || opt == ADD_LATER) {
		o->which |= opt == ADD_REPLACE ? KWQ_ADD_REPLACE : KWQ_ADD_LATER;
		return 0;
	}
	errno = 0;
	v = strtol(val, &end, 10);
	if (!*val || *end || errno || v < INT32_MIN || v > INT32_MAX) {
		err_usage("bad --priority '%s' (a 32-bit integer)", val);
		return -1;
	}
	o->prio = (int)v;
	return 0;
}

/*
 * Parse QUEUE KEY... (and @on_opt's options) and pack the keys with
 * priority *@prio (read after parsing). 0, or -1 with the exit status
 * in a->rc. After 0 the caller frees @rb.
 */
static int parse_keys(const struct cmd_ctx *ctx, int argc, char **argv,
		      cmd_opt_fn on_opt, void *st, const int *prio,
		      struct cmd_args *a, struct kwq_recbuf *rb)
{
	if (cmd_parse(ctx, argc, argv, on_opt, st, a))
		return -1;
	if (pack_keys(rb, a->pos + 1, a->npos - 1, prio ? *prio : 0)) {
		a->rc = errno == EINVAL ? EX_USAGE : EX_ERR;
		kwq_recbuf_free(rb);
		return -1;
	}
	return 0;
}

/* One batch call over the keys of @a in @rb (freed); its error printed. */
static int keys_batch(const struct cmd_ctx *ctx, const struct cmd_args *a,
		      struct kwq_recbuf *rb, struct kwq_batch_opts *bo,
		      int (*fn)(int, const struct kwq_recbuf *, unsigned int *))
{
	unsigned int done;
	int fd = attach(ctx, a->pos[0]), rc = EX_OK;

	if (fd < 0) {
		kwq_recbuf_free(rb);
		return EX_ERR;
	}
	if ((bo ? kwq_add_batch(fd, rb, bo, &done) : fn(fd, rb, &done)) < 0) {
		batch_error(errno, a->pos + 1, rb->nr, done);
		rc = EX_ERR;
	}
	close(fd);
	kwq_recbuf_free(rb);
	return rc;
}

/* What is wrong with add's options together, or NULL. */
static const char *add_conflict(const struct add_args *o)
{
	if (o->which == (KWQ_ADD_REPLACE | KWQ_ADD_LATER))
		return "--replace and --later exclude each other";
	if (o->which && (!o->has_after || !o->after))
		return "--replace and --later need --after with a duration > 0";
	if (o->has_after && o->after > INT64_MAX)
		return "--after too large";
	return NULL;
}

int cmd_add(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct kwq_recbuf rb = KWQ_RECBUF_INIT;
	struct kwq_batch_opts bo = { 0, 0, NULL };
	struct add_args o = { 0, false, 0, 0 };
	struct cmd_args a;
	const char *why;

	if (parse_keys(ctx, argc, argv, add_opt, &o, &o.prio, &a, &rb))
		return a.rc;
	why = add_conflict(&o);
	if (why) {
		err_usage("%s", why);
		kwq_recbuf_free(&rb);
		return EX_USAGE;
	}
	if (o.has_after) {
		bo.flags = KWQ_ADD_AFTER | o.which;
		bo.after_ns = (int64_t)o.after;
	}
	return keys_batch(ctx, &a, &rb, &bo, NULL);
}

int cmd_add_rate_limited(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct kwq_recbuf rb = KWQ_RECBUF_INIT;
	struct kwq_batch_opts bo = { KWQ_ADD_RATE_LIMITED, 0, NULL };
	unsigned int done = 0, i;
	int fd = -1, ret = -1, e;
	struct cmd_args a;
	char dur[32];

	if (parse_keys(ctx, argc, argv, NULL, NULL, NULL, &a, &rb))
		return a.rc;
	bo.delays = calloc(rb.nr, sizeof(*bo.delays));
	if (!bo.delays)
		err_errno(errno, NULL);
	else
		fd = attach(ctx, a.pos[0]);
	if (fd >= 0)
		ret = kwq_add_batch(fd, &rb, &bo, &done);
	e = errno;
	for (i = 0; i < done && i < rb.nr; i++) {
		kwq_format_duration(dur, sizeof(dur), bo.delays[i]);
		printf("%s %s\n", a.pos[1 + i], dur);
	}
	if (fd >= 0 && ret < 0) {
		fflush(stdout);
		batch_error(e, a.pos + 1, rb.nr, done);
	}
	if (fd >= 0)
		close(fd);
	free(bo.delays);
	kwq_recbuf_free(&rb);
	return ret < 0 ? EX_ERR : EX_OK;
}

/* forget, remove, done: one batch ioctl over the keys */
static int keys_cmd(const struct cmd_ctx *ctx, int argc, char **argv,
		    int (*fn)(int, const struct kwq_recbuf *, unsigned int *))
{
	struct kwq_recbuf rb = KWQ_RECBUF_INIT;
	struct cmd_args a;

	if (parse_keys(ctx, argc, argv, NULL, NULL, NULL, &a, &rb))
		return a.rc;
	return keys_batch(ctx, &a, &rb, NULL, fn);
}

int cmd_forget(const struct cmd_ctx *ctx, int argc, char **argv)
{
	return keys_cmd(ctx, argc, argv, kwq_forget_batch);
}

int cmd_remove(const struct cmd_ctx *ctx, int argc, char **argv)
{
	return keys_cmd(ctx, argc, argv, kwq_remove_batch);
}

int cmd_done(const struct cmd_ctx *ctx, int argc, char **argv)
{
	return keys_cmd(ctx, argc, argv, kwq_done_batch);
}

enum { TOUCH_PROCESSING_TIMEOUT, TOUCH_NR_OPTS };

const struct cmd_opt touch_opts[] = {
	[TOUCH_PROCESSING_TIMEOUT] = { "processing-timeout", 0, "DUR",
		"the new deadline, DUR from now, or none: no\n"
		"deadline (default: the queue's --processing-timeout)" },
	[TOUCH_NR_OPTS] = { NULL, 0, NULL, NULL },
};

static int touch_opt(void *st, int opt, const char *val)
{
	uint64_t *ns = st;

	(void)opt;
	if (!strcmp(val, "none")) {
		*ns = KWQ_TIMEOUT_NONE;
		return 0;
	}
	if (parse_dur_opt("--processing-timeout", val, ns))
		return -1;
	if (!*ns) {
		err_usage("bad --processing-timeout '%s' (more than 0)", val);
		return -1;
	}
	return 0;
}

/*
 * The processing deadline of each key moves to DUR from now: one
 * KWQ_IOC_TOUCH a key, in order, stopping at the first error. This fd
 * holds no lease, so only keys taken detached (kwqctl get) are ours to
 * touch; a key leased to a process is EPERM.
 */
int cmd_touch(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct cmd_args a;
	uint64_t ns = 0;
	const char *why;
	int fd, i;

	if (cmd_parse(ctx, argc, argv, touch_opt, &ns, &a))
		return a.rc;
	if (check_keys(a.pos + 1, a.npos - 1))
		return EX_USAGE;
	fd = attach(ctx, a.pos[0]);
	if (fd < 0)
		return EX_ERR;
	for (i = 1; i < a.npos; i++) {
		if (kwq_touch(fd, a.pos[i], strlen(a.pos[i]), ns) == 0)
			continue;
		why = "";
		if (errno == ENOENT)
			why = " (not processing)";
		else if (errno == EPERM)
			why = " (leased to a process: only keys taken by get can be)";
		err_errno(errno, "key %s%s", a.pos[i], why);
		close(fd);
		return EX_ERR;
	}
	close(fd);
	return EX_OK;
}

int cmd_requeues(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct cmd_args a;
	const char *key;
	int fd;
	long n;

	if (cmd_parse(ctx, argc, argv, NULL, NULL, &a))
		return a.rc;
	key = a.pos[1];
	if (check_keys(a.pos + 1, 1))
		return EX_USAGE;
	fd = attach(ctx, a.pos[0]);
	if (fd < 0)
		return EX_ERR;
	n = kwq_num_requeues(fd, key, strlen(key));
	if (n < 0) {
		err_errno(errno, "key %s", key);
		close(fd);
		return EX_ERR;
	}
	printf("%ld\n", n);
	close(fd);
	return EX_OK;
}

static int len_op(int fd, void *len)
{
	return kwq_len(fd, len);
}

int cmd_len(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct cmd_args a;
	uint64_t len;

	if (cmd_parse(ctx, argc, argv, NULL, NULL, &a))
		return a.rc;
	if (on_queue(ctx, a.pos[0], len_op, &len))
		return EX_ERR;
	printf("%" PRIu64 "\n", len);
	return EX_OK;
}

enum { GET_TIMEOUT, GET_COUNT, GET_NR_OPTS };

const struct cmd_opt get_opts[] = {
	[GET_TIMEOUT] = { "timeout", 0, "DUR",
		"wait at most DUR for the first key (default:\n"
		"forever; 0: do not wait)" },
	[GET_COUNT] = { NULL, 'n', "COUNT",
		"take up to COUNT keys (default 1)" },
	[GET_NR_OPTS] = { NULL, 0, NULL, NULL },
};

struct get_args {
	int64_t timeout;	/* -1: forever */
	unsigned int count;
};

static int get_opt(void *st, int opt, const char *val)
{
	struct get_args *o = st;
	uint64_t ns;

	if (opt == GET_TIMEOUT) {
		if (parse_dur_opt("--timeout", val, &ns))
			return -1;
		o->timeout = (int64_t)ns;
		return 0;
	}
	if (parse_u32(val, UINT32_MAX, &o->count) || !o->count) {
		err_usage("bad -n '%s' (a count >= 1)", val);
		return -1;
	}
	return 0;
}

int cmd_get(const struct cmd_ctx *ctx, int argc, char **argv)
{
	enum { BATCH = 64 };
	static unsigned char buf[BATCH * KWQ_REC_SIZE_MAX];
	struct get_args o = { -1, 1 };
	unsigned int got = 0, want;
	struct cmd_args a;
	size_t used, off, len;
	const void *key;
	int fd, n, e;

	if (cmd_parse(ctx, argc, argv, get_opt, &o, &a))
		return a.rc;
	fd = attach(ctx, a.pos[0]);
	if (fd < 0)
		return EX_ERR;
	/* The first call waits as told; the rest only take what is ready. */
	while (got < o.count) {
		want = o.count - got < BATCH ? o.count - got : BATCH;
		n = kwq_get_batch(fd, buf, sizeof(buf), want, KWQ_GET_DETACHED,
				  got ? 0 : o.timeout, &used);
		if (n < 0) {
			if (got)
				break;
			e = errno;
			close(fd);
			if (e == EAGAIN || e == ETIMEDOUT)
				return EX_EMPTY;
			if (e == ESHUTDOWN)
				return EX_SHUT;
			err_errno(e, NULL);
			return EX_ERR;
		}
		off = 0;
		while (kwq_rec_next(buf, used, &off, &key, &len, NULL) == 1) {
			fwrite(key, 1, len, stdout);
			putchar('\n');
		}
		got += (unsigned int)n;
		if (n == 0)
			break;
	}
	close(fd);
	return fflush(stdout) ? EX_ERR : EX_OK;
}
