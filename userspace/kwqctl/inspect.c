// SPDX-License-Identifier: GPL-2.0
/*
 * kwqctl: inspect, where keys are and why, and dead, the dead set: a key
 * a line, walked with the queue's cursor (KWQ_IOC_INSPECT) a chunk at a
 * time, so a queue of any size is listed without holding it up.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kwq/keys.h"
#include "kwqctl.h"

/* Records asked for per call. */
#define CHUNK	64

/* --limit first: dead's table is its first row alone. */
enum { INSPECT_LIMIT, INSPECT_STATE, INSPECT_NR_OPTS };

const struct cmd_opt inspect_opts[] = {
	[INSPECT_LIMIT] = { "limit", 0, "N", "print at most N keys" },
	[INSPECT_STATE] = { "state", 0, "S[,S]...",
		"list only keys in these states: ready, waiting,\n"
		"processing, dead, idle (default: all)" },
	[INSPECT_NR_OPTS] = { NULL, 0, NULL, NULL },
};

const struct cmd_opt dead_opts[] = {
	[INSPECT_LIMIT] = { "limit", 0, "N", "print at most N keys" },
	[INSPECT_STATE] = { NULL, 0, NULL, NULL },
};

struct inspect_args {
	unsigned int states;
	unsigned int limit;	/* 0: no limit */
};

static int inspect_opt(void *st, int opt, const char *val)
{
	struct inspect_args *ia = st;
	char *list, *s, *save = NULL;
	unsigned int state;

	if (opt == INSPECT_LIMIT) {
		if (parse_u32(val, UINT32_MAX, &ia->limit) || !ia->limit) {
			err_usage("bad --limit '%s' (1 or more)", val);
			return -1;
		}
		return 0;
	}
	list = strdup(val);
	if (!list) {
		err_errno(errno, NULL);
		return -1;
	}
	for (s = strtok_r(list, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
		state = kwq_state_parse(s);
		if (!state) {
			err_usage("bad --state '%s' (ready, waiting, processing, dead, idle)",
				  s);
			free(list);
			return -1;
		}
		ia->states |= 1u << state;
	}
	free(list);
	return 0;
}

/* KEY, then the line the debugfs keys file prints (include/kwq/keys.h). */
static void print_key(const struct kwq_info_rec *r, const void *key)
{
	fwrite(key, 1, r->len, stdout);
	kwq_key_render(kwq_metrics_stdio, stdout, r);
}

/* Walk the keys of @states, printing up to @limit (0: all). */
static int walk(int fd, unsigned int states, unsigned int limit)
{
	static uint64_t buf[CHUNK * KWQ_INFO_REC_SIZE_MAX / 8];
	const struct kwq_info_rec *r;
	unsigned int printed = 0;
	uint64_t cursor = 0;
	const void *key;
	size_t used, off;
	long n;

	do {
		n = kwq_inspect_list(fd, states, &cursor, buf, sizeof(buf),
				     CHUNK, &used);
		if (n < 0 && errno == EAGAIN) {
			/* The queue's table is being resized: a moment. */
			usleep(1000);
			continue;
		}
		if (n < 0) {
			err_errno(errno, NULL);
			return EX_ERR;
		}
		off = 0;
		while ((!limit || printed < limit) &&
		       kwq_info_next(buf, used, &off, &r, &key) == 1) {
			print_key(r, key);
			printed++;
		}
	} while (cursor && (!limit || printed < limit));
	return EX_OK;
}

static int inspect_one(int fd, const char *queue, const char *key)
{
	struct kwq_info_rec r;

	if (kwq_inspect(fd, key, strlen(key), &r) < 0) {
		err_errno(errno, "queue %s: key %s%s", queue, key,
			  errno == ENOENT ? " (not in the queue)" : "");
		return EX_ERR;
	}
	print_key(&r, key);
	return EX_OK;
}

/* inspect QUEUE [KEY], dead QUEUE: @states set for dead. */
static int inspect(const struct cmd_ctx *ctx, int argc, char **argv,
		   unsigned int states)
{
	struct inspect_args ia = { states, 0 };
	struct cmd_args a;
	int fd, rc;

	if (cmd_parse(ctx, argc, argv, inspect_opt, &ia, &a))
		return a.rc;
	if (a.npos > 1 && (ia.states || ia.limit)) {
		err_usage("KEY excludes --state and --limit");
		return EX_USAGE;
	}
	if (a.npos > 1 && check_key(a.pos[1]))
		return EX_USAGE;
	fd = attach(ctx, a.pos[0]);
	if (fd < 0)
		return EX_ERR;
	if (a.npos > 1)
		rc = inspect_one(fd, a.pos[0], a.pos[1]);
	else
		rc = walk(fd, ia.states ?: KWQ_KEY_STATES_ALL, ia.limit);
	close(fd);
	return rc;
}

int cmd_inspect(const struct cmd_ctx *ctx, int argc, char **argv)
{
	return inspect(ctx, argc, argv, 0);
}

int cmd_dead(const struct cmd_ctx *ctx, int argc, char **argv)
{
	return inspect(ctx, argc, argv, 1u << KWQ_KEY_DEAD);
}
