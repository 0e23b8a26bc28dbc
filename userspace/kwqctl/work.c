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
#include <time.h>
#include <unistd.h>

#include "kwqctl.h"

extern char **environ;

enum { WORK_JOBS, WORK_MAX_RETRIES, WORK_HEARTBEAT, WORK_NR_OPTS };

const struct cmd_opt work_opts[] = {
	[WORK_JOBS] = { NULL, 'j', "N", "N workers (threads, default 1)" },
	[WORK_MAX_RETRIES] = { "max-retries", 0, "N",
		"for a queue without a dead set: forget a key after\n"
		"N retries (default: never). A queue created with\n"
		"--max-retries moves it to its dead set instead" },
	[WORK_HEARTBEAT] = { "heartbeat", 0, "DUR",
		"while CMD runs, renew the key's processing deadline\n"
		"(the queue's --processing-timeout) every DUR" },
	[WORK_NR_OPTS] = { NULL, 0, NULL, NULL },
};

/* What every worker of one `kwqctl work` shares. */
struct work {
	const char *device;
	const char *queue;
	char **cmd;		/* CMD [ARG...] */
	int ncmd;
	long max_retries;	/* -1: retry forever */
	uint64_t heartbeat_ns;	/* 0: no heartbeat */
	unsigned int jobs;
	pthread_mutex_t lock;	/* one message at a time on stderr */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Wait for @pid; with a heartbeat, renew the processing deadline of @key
 * (@n bytes, held on @fd) every heartbeat while it runs. Its wait status,
 * or -1.
 */
static int wait_cmd(const struct work *w, pid_t pid, int fd, const char *key,
		    size_t n, int *status)
{
	struct timespec tick = { 0, 10000000 };	/* 10 ms */
	uint64_t next = now_ns() + w->heartbeat_ns;
	pid_t r;

	for (;;) {
		r = waitpid(pid, status, w->heartbeat_ns ? WNOHANG : 0);
		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
		if (!w->heartbeat_ns || r < 0)
			continue;
		/* ESTALE: taken back already; the done will say so. */
		if (now_ns() >= next) {
			if (kwq_touch(fd, key, n, 0) < 0 && errno != ESTALE)
				return -1;
			next += w->heartbeat_ns;
		}
		nanosleep(&tick, NULL);
	}
}

/* Run CMD with @key appended and in KWQ_KEY: its exit status, or -1. */
static int run_cmd(const struct work *w, int fd, const char *key, size_t n)
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
	if (wait_cmd(w, pid, fd, key, n, &status) < 0)
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

/*
 * After CMD exited @rc for key @key (@n bytes, held): forget or retry.
 * False if the key's processing deadline passed meanwhile: the queue took
 * it back and requeued it as a failure already, and it is not held.
 */
static bool work_settle(struct work *w, int fd, const char *key, size_t n,
			int rc)
{
	uint64_t delay;
	long r;

	/*
	 * Still held? A touch says, and keeps the deadline from passing now.
	 * ESTALE: taken back; ENOENT: taken back and gone since (the queue
	 * forgot that it was this worker's).
	 */
	if (kwq_touch(fd, key, n, 0) < 0) {
		if (errno != ESTALE && errno != ENOENT)
			work_fatal(w, errno, "touch key", key);
		work_note(w, "key %s: deadline passed (exit status %d), taken back",
			  key, rc);
		return false;
	}
	if (rc == 0 || rc == -2) {
		if (kwq_forget(fd, key, n) < 0)
			work_fatal(w, errno, "forget key", key);
		return true;
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
	return true;
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
		if (n < 0 && held && errno == ESTALE) {
			/* Its deadline passed after the settle: taken back. */
			work_note(w, "key %s: deadline passed, taken back", key);
			held = false;
			continue;
		}
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
			rc = run_cmd(w, fd, key, (size_t)n);
			if (rc < 0)
				work_fatal(w, errno, "run", w->cmd[0]);
		}
		held = work_settle(w, fd, key, (size_t)n, rc);
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
	if (opt == WORK_HEARTBEAT) {
		if (parse_dur_opt("--heartbeat", val, &w->heartbeat_ns))
			return -1;
		if (!w->heartbeat_ns) {
			err_usage("bad --heartbeat '%s' (more than 0)", val);
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
		/* Workers started use @w: end them with the process. */
		if (c)
			work_fatal(&w, c, "thread", NULL);
	}
	for (i = 0; i < w.jobs; i++)
		pthread_join(tids[i], NULL);
	free(tids);
	return EX_OK;
}
