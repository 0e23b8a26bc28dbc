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
 * Parse QUEUE KEY... (and @on_opt's options) and check the keys: 0, or
 * -1 with the exit status in a->rc. Every key is checked before the
 * first call, so a bad one changes nothing.
 */
static int parse_keys(const struct cmd_ctx *ctx, int argc, char **argv,
		      cmd_opt_fn on_opt, void *st, struct cmd_args *a)
{
	if (cmd_parse(ctx, argc, argv, on_opt, st, a))
		return -1;
	if (check_keys(a->pos + 1, a->npos - 1)) {
		a->rc = EX_USAGE;
		return -1;
	}
	return 0;
}

/*
 * A batch call on the @rb->nr keys from @keys[@first] on: 0, or -1 with
 * errno and *@done the keys handled. @arg is keys_batch()'s.
 */
typedef int (*chunk_fn)(int fd, const struct kwq_recbuf *rb, char **keys,
			unsigned int first, unsigned int *done, void *arg);

/*
 * @fn over the keys of @a (pos[1..]) with priority @prio, in order, in
 * calls of at most KWQ_BATCH_MAX keys (the most the kernel takes in
 * one), stopping at the first error, which names its key. Exit status.
 */
static int keys_batch(const struct cmd_ctx *ctx, const struct cmd_args *a,
		      int prio, chunk_fn fn, void *arg)
{
	struct kwq_recbuf rb = KWQ_RECBUF_INIT;
	unsigned int nr = (unsigned int)a->npos - 1, first, i, done;
	char **keys = a->pos + 1;
	int fd = attach(ctx, a->pos[0]), rc = EX_OK;

	if (fd < 0)
		return EX_ERR;
	for (first = 0; first < nr && rc == EX_OK; first += rb.nr) {
		kwq_recbuf_reset(&rb);
		for (i = first; i < nr && rb.nr < KWQ_BATCH_MAX; i++) {
			if (kwq_recbuf_push_str(&rb, keys[i], prio) < 0) {
				err_errno(errno, NULL);
				rc = EX_ERR;
				break;
			}
		}
		if (rc == EX_OK && fn(fd, &rb, keys, first, &done, arg) < 0) {
			batch_error(fd, a->pos[0], errno, keys + first, rb.nr,
				    done);
			rc = EX_ERR;
		}
	}
	close(fd);
	kwq_recbuf_free(&rb);
	return rc;
}

static int add_chunk(int fd, const struct kwq_recbuf *rb, char **keys,
		     unsigned int first, unsigned int *done, void *bo)
{
	(void)keys;
	(void)first;
	return kwq_add_batch(fd, rb, bo, done);
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
	struct kwq_batch_opts bo = { 0, 0, NULL };
	struct add_args o = { 0, false, 0, 0 };
	struct cmd_args a;
	const char *why;

	if (parse_keys(ctx, argc, argv, add_opt, &o, &a))
		return a.rc;
	why = add_conflict(&o);
	if (why) {
		err_usage("%s", why);
		return EX_USAGE;
	}
	if (o.has_after) {
		bo.flags = KWQ_ADD_AFTER | o.which;
		bo.after_ns = (int64_t)o.after;
	}
	return keys_batch(ctx, &a, o.prio, add_chunk, &bo);
}

/* add-rate-limited: the queue, its delays, its max_retries (0: none). */
struct arl_args {
	const char *queue;
	struct kwq_batch_opts bo;
	long max_retries;	/* -1: not asked yet */
};

/*
 * Key @key moved to the dead set (KWQ_DELAY_DEAD): say so, with its
 * failures and the queue's max_retries (KWQ_IOC_INFO; a kernel module's
 * queue does not say: left out).
 */
static void arl_dead(int fd, struct arl_args *r, const char *key)
{
	struct kwq_queue_opts qo;
	long n = kwq_num_requeues(fd, key, strlen(key));
	char failed[64] = "", max[64] = "";

	if (r->max_retries < 0)
		r->max_retries = kwq_queue_info(fd, &qo, NULL) == 0 ?
				 (long)qo.max_retries : 0;
	if (n >= 0)
		snprintf(failed, sizeof(failed), " after %ld failures", n);
	if (r->max_retries > 0)
		snprintf(max, sizeof(max), " (max-retries %ld)", r->max_retries);
	err_msg("queue %s: key %s: dead%s%s; kwqctl revive %s %s requeues it",
		r->queue, key, failed, max, r->queue, key);
}

/*
 * Print "KEY DELAY" for each key handled ("KEY dead" for one moved to the
 * dead set), also those before a failing one.
 */
static int arl_chunk(int fd, const struct kwq_recbuf *rb, char **keys,
		     unsigned int first, unsigned int *done, void *arg)
{
	struct arl_args *r = arg;
	int ret = kwq_add_batch(fd, rb, &r->bo, done), e = errno;
	unsigned int i;
	char dur[32];

	for (i = 0; i < *done && i < rb->nr; i++) {
		if (r->bo.delays[i] == KWQ_DELAY_DEAD) {
			printf("%s dead\n", keys[first + i]);
			fflush(stdout);
			arl_dead(fd, r, keys[first + i]);
			continue;
		}
		kwq_format_duration(dur, sizeof(dur), r->bo.delays[i]);
		printf("%s %s\n", keys[first + i], dur);
	}
	fflush(stdout);
	errno = e;
	return ret;
}

int cmd_add_rate_limited(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct arl_args r = { NULL, { KWQ_ADD_RATE_LIMITED, 0, NULL }, -1 };
	struct cmd_args a;
	int rc;

	if (parse_keys(ctx, argc, argv, NULL, NULL, &a))
		return a.rc;
	r.queue = a.pos[0];
	r.bo.delays = calloc(KWQ_BATCH_MAX, sizeof(*r.bo.delays));
	if (!r.bo.delays) {
		err_errno(errno, NULL);
		return EX_ERR;
	}
	rc = keys_batch(ctx, &a, 0, arl_chunk, &r);
	free(r.bo.delays);
	return rc;
}

/* forget, remove, done: batch calls over the keys */
struct keys_fn {
	int (*fn)(int fd, const struct kwq_recbuf *rb, unsigned int *done);
};

static int keys_chunk(int fd, const struct kwq_recbuf *rb, char **keys,
		      unsigned int first, unsigned int *done, void *arg)
{
	const struct keys_fn *k = arg;

	(void)keys;
	(void)first;
	return k->fn(fd, rb, done);
}

static int keys_cmd(const struct cmd_ctx *ctx, int argc, char **argv,
		    int (*fn)(int, const struct kwq_recbuf *, unsigned int *))
{
	struct keys_fn k = { fn };
	struct cmd_args a;

	if (parse_keys(ctx, argc, argv, NULL, NULL, &a))
		return a.rc;
	return keys_batch(ctx, &a, 0, keys_chunk, &k);
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
		"the new deadline, DUR from now (1ms..365d); 0: the\n"
		"queue's --processing-timeout from now (the default;\n"
		"no deadline on a queue without one); none: no deadline" },
	[TOUCH_NR_OPTS] = { NULL, 0, NULL, NULL },
};

/* touch's and get's --processing-timeout */
struct deadline_arg {
	uint64_t ns;		/* 0: the queue's; KWQ_TIMEOUT_NONE: none */
	const char *given;	/* as given, for a message */
};

static int deadline_opt(struct deadline_arg *d, const char *val)
{
	d->given = val;
	return parse_processing_timeout("--processing-timeout", val, true,
					&d->ns);
}

static int deadline_check(const char *queue, const struct deadline_arg *d)
{
	return check_processing_timeout(queue, "--processing-timeout",
					d->given, d->ns, true, "the queue's");
}

static int touch_opt(void *st, int opt, const char *val)
{
	(void)opt;
	return deadline_opt(st, val);
}

/*
 * The processing deadline of each key moves to DUR from now: one
 * KWQ_IOC_TOUCH a key, in order, stopping at the first error. This fd
 * holds no lease, so only keys taken detached (kwqctl get) are ours to
 * touch; a key leased to a process is EPERM.
 */
int cmd_touch(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct deadline_arg d = { 0, NULL };
	struct cmd_args a;
	const char *why;
	int fd, i;

	if (cmd_parse(ctx, argc, argv, touch_opt, &d, &a))
		return a.rc;
	if (deadline_check(a.pos[0], &d) || check_keys(a.pos + 1, a.npos - 1))
		return EX_USAGE;
	fd = attach(ctx, a.pos[0]);
	if (fd < 0)
		return EX_ERR;
	for (i = 1; i < a.npos; i++) {
		if (kwq_touch(fd, a.pos[i], strlen(a.pos[i]), d.ns) == 0)
			continue;
		why = "";
		if (errno == ENOENT)
			why = " (not processing)";
		else if (errno == EPERM)
			why = " (leased to a process: only keys taken by get can be)";
		err_errno(errno, "queue %s: key %s%s", a.pos[0], a.pos[i], why);
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
		err_errno(errno, "queue %s: key %s", a.pos[0], key);
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

enum { GET_TIMEOUT, GET_COUNT, GET_PROCESSING_TIMEOUT, GET_NR_OPTS };

const struct cmd_opt get_opts[] = {
	[GET_TIMEOUT] = { "timeout", 0, "DUR",
		"wait at most DUR for the first key (default:\n"
		"forever; 0: do not wait)" },
	[GET_COUNT] = { NULL, 'n', "COUNT",
		"take up to COUNT keys (default 1)" },
	[GET_PROCESSING_TIMEOUT] = { "processing-timeout", 0, "DUR",
		"the keys' processing deadline, DUR from the get\n"
		"(1ms..365d); 0: the queue's --processing-timeout\n"
		"(the default); none: no deadline" },
	[GET_NR_OPTS] = { NULL, 0, NULL, NULL },
};

struct get_args {
	int64_t timeout;	/* -1: forever */
	unsigned int count;
	struct deadline_arg processing;
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
	if (opt == GET_PROCESSING_TIMEOUT)
		return deadline_opt(&o->processing, val);
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
	struct get_args o = { -1, 1, { 0, NULL } };
	unsigned int got = 0, want;
	struct cmd_args a;
	size_t used, off, len;
	const void *key;
	int fd, n, e;

	if (cmd_parse(ctx, argc, argv, get_opt, &o, &a))
		return a.rc;
	if (deadline_check(a.pos[0], &o.processing))
		return EX_USAGE;
	fd = attach(ctx, a.pos[0]);
	if (fd < 0)
		return EX_ERR;
	/* The first call waits as told; the rest only take what is ready. */
	while (got < o.count) {
		want = o.count - got < BATCH ? o.count - got : BATCH;
		n = kwq_get_batch_deadline(fd, buf, sizeof(buf), want,
					   KWQ_GET_DETACHED, got ? 0 : o.timeout,
					   o.processing.ns, &used);
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
