// SPDX-License-Identifier: GPL-2.0
/*
 * kwqctl: work, a pool of workers that run a command for each key: the
 * key as its last argument and in KWQ_KEY; success forgets the key,
 * failure adds it back rate-limited. A queue with a dead set (create
 * --max-retries) decides when a key has failed for good and keeps it
 * there, to be listed and revived; --max-retries here is for queues
 * without one: it counts and forgets the key. Keys are leased: if
 * kwqctl dies they go back to the queue.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kwqctl.h"

extern char **environ;

enum { WORK_JOBS, WORK_MAX_RETRIES, WORK_NR_OPTS };

const struct cmd_opt work_opts[] = {
	[WORK_JOBS] = { NULL, 'j', "N", "N workers (threads, default 1)" },
	[WORK_MAX_RETRIES] = { "max-retries", 0, "N",
		"for a queue without a dead set: forget a key after\n"
		"N retries (default: never). A queue created with\n"
		"--max-retries moves it to its dead set instead" },
	[WORK_NR_OPTS] = { NULL, 0, NULL, NULL },
};

/* What every worker of one `kwqctl work` shares. */
struct work {
	const char *device;
	const char *queue;
	char **cmd;		/* CMD [ARG...] */
	int ncmd;
	long max_retries;	/* -1: retry forever */
	unsigned int jobs;
	pthread_mutex_t lock;	/* one message at a time on stderr */
};

/* Run CMD with @key appended and in KWQ_KEY: its exit status, or -1. */
static int run_cmd(const struct work *w, const char *key)
{
	char **args, **env, *kv;
	size_t ne = 0, i, j = 0;
	int status, ret;
	pid_t pid;

	while (environ[ne])
		ne++;
	args = calloc((size_t)w->ncmd + 2, sizeof(*args));
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
	memcpy(args, w->cmd, (size_t)w->ncmd * sizeof(*args));
	args[w->ncmd] = (char *)key;
	for (i = 0; i < ne; i++)
		if (strncmp(environ[i], "KWQ_KEY=", 8) != 0)
			env[j++] = environ[i];
	env[j] = kv;
	ret = posix_spawnp(&pid, w->cmd[0], NULL, NULL, args, env);
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

static void __attribute__((noreturn))
work_fatal(struct work *w, int e, const char *what, const char *key)
{
	pthread_mutex_lock(&w->lock);
	if (key)
		err_errno(e, "%s %s", what, key);
	else
		err_errno(e, "%s", what);
	fflush(stderr);
	/* Closing the fds (exit) returns every in-flight lease. */
	_exit(EX_ERR);
}

static void __attribute__((format(printf, 2, 3)))
work_note(struct work *w, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&w->lock);
	fputs("kwqctl: work: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	pthread_mutex_unlock(&w->lock);
}

/* After CMD exited @rc for key @key (@n bytes, held): forget or retry. */
static void work_settle(struct work *w, int fd, const char *key, size_t n,
			int rc)
{
	uint64_t delay;
	long r;

	if (rc == 0 || rc == -2) {
		if (kwq_forget(fd, key, n) < 0)
			work_fatal(w, errno, "forget key", key);
		return;
	}
	r = kwq_num_requeues(fd, key, n);
	if (r < 0)
		work_fatal(w, errno, "requeues key", key);
	if (w->max_retries >= 0 && r >= w->max_retries) {
		work_note(w, "key %s: giving up after %ld retries (last exit status %d)",
			  key, r, rc);
		if (kwq_forget(fd, key, n) < 0)
			work_fatal(w, errno, "forget key", key);
	} else if (kwq_add_rate_limited(fd, key, n, &delay) < 0) {
		if (errno != ESHUTDOWN)
			work_fatal(w, errno, "add-rate-limited key", key);
		work_note(w, "key %s: failed (exit status %d), not retried: queue shut down",
			  key, rc);
	} else if (delay == KWQ_DELAY_DEAD) {
		/* The queue's max_retries: it keeps the key in its dead set. */
		work_note(w, "key %s: dead after %ld retries (last exit status %d); "
			  "kwqctl revive %s %s", key, r, rc, w->queue, key);
	}
}

static void *worker(void *arg)
{
	struct work *w = arg;
	char key[KWQ_KEY_LEN_MAX + 1];
	int fd, rc, finished;
	bool held = false;
	long n = 0;

	fd = kwq_open_dev(w->device);
	if (fd < 0)
		work_fatal(w, errno, w->device, NULL);
	if (kwq_open(fd, w->queue) < 0)
		work_fatal(w, errno, "queue", w->queue);
	for (;;) {
		/* Finish the key held (if any) and take the next: one call. */
		n = kwq_done_get_one(fd, held ? key : NULL, (size_t)n,
				     &finished, key, sizeof(key), 0, -1);
		if (finished)
			held = false;
		if (n < 0) {
			if (held)
				work_fatal(w, errno, "done key", key);
			if (errno == EINTR)
				continue;
			if (errno == ESHUTDOWN)
				break;
			work_fatal(w, errno, "get", NULL);
		}
		held = true;
		key[n] = '\0';
		if (memchr(key, '\0', (size_t)n)) {
			work_note(w, "dropping a key with a NUL byte (cannot be an argument)");
			rc = -2;
		} else {
			rc = run_cmd(w, key);
			if (rc < 0)
				work_fatal(w, errno, "run", w->cmd[0]);
		}
		work_settle(w, fd, key, (size_t)n, rc);
	}
	close(fd);
	return NULL;
}

static int work_opt(void *st, int opt, const char *val)
{
	struct work *w = st;
	unsigned int v;

	if (opt == WORK_JOBS) {
		if (parse_u32(val, 1024, &w->jobs) || !w->jobs) {
			err_usage("bad -j '%s' (1..1024)", val);
			return -1;
		}
		return 0;
	}
	if (parse_u32(val, INT32_MAX, &v)) {
		err_usage("bad --max-retries '%s'", val);
		return -1;
	}
	w->max_retries = v;
	return 0;
}

int cmd_work(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct work w = {
		.device = ctx->device,
		.max_retries = -1,
		.jobs = 1,
		.lock = PTHREAD_MUTEX_INITIALIZER,
	};
	struct cmd_args a;
	pthread_t *tids;
	unsigned int i;
	int c, fd;

	if (cmd_parse(ctx, argc, argv, work_opt, &w, &a))
		return a.rc;
	w.queue = a.pos[0];
	w.cmd = a.rest;
	w.ncmd = a.nrest;
	/* Fail early and clearly if the queue cannot be opened. */
	fd = attach(ctx, w.queue);
	if (fd < 0)
		return EX_ERR;
	close(fd);
	if (w.jobs == 1) {
		worker(&w);
		return EX_OK;
	}
	tids = calloc(w.jobs, sizeof(*tids));
	if (!tids) {
		err_errno(errno, NULL);
		return EX_ERR;
	}
	for (i = 0; i < w.jobs; i++) {
		c = pthread_create(&tids[i], NULL, worker, &w);
		if (c) {
			err_errno(c, "thread");
			return EX_ERR;
		}
	}
	for (i = 0; i < w.jobs; i++)
		pthread_join(tids[i], NULL);
	return EX_OK;
}
