// SPDX-License-Identifier: GPL-2.0
/*
 * kwqctl: reaching a queue. Opening the device, attaching to a queue,
 * packing command-line keys into a batch and naming the key a failed
 * batch stopped at: each prints its own error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kwqctl.h"

/* Open the device; prints the error. The fd, or -1. */
int open_dev(const struct cmd_ctx *ctx)
{
	int fd = kwq_open_dev(ctx->device);

	if (fd < 0)
		err_errno(errno, "%s", ctx->device);
	return fd;
}

/* Open the device and attach to @queue; prints the error. */
int attach(const struct cmd_ctx *ctx, const char *queue)
{
	int fd = open_dev(ctx);

	if (fd < 0)
		return -1;
	if (kwq_open(fd, queue) < 0) {
		err_errno(errno, "queue %s", queue);
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Attach to @queue and run @op(fd, @arg), one call of libkwq; prints
 * its error. EX_OK or EX_ERR.
 */
int on_queue(const struct cmd_ctx *ctx, const char *queue,
	     int (*op)(int fd, void *arg), void *arg)
{
	int fd = attach(ctx, queue);

	if (fd < 0)
		return EX_ERR;
	if (op(fd, arg) < 0) {
		err_errno(errno, NULL);
		close(fd);
		return EX_ERR;
	}
	close(fd);
	return EX_OK;
}

/*
 * The queues of the caller's IPC namespace into @ql (its names NULL on
 * failure). 0, or -1 after printing the error.
 */
int list_queues(const struct cmd_ctx *ctx, struct queue_list *ql)
{
	unsigned int cap = 64;
	int fd;

	ql->names = NULL;
	fd = open_dev(ctx);
	if (fd < 0)
		return -1;
	for (;;) {
		free(ql->names);
		ql->names = calloc(cap, KWQ_NAME_LEN);
		ql->nr = ql->names ? kwq_list(fd, ql->names, cap) : -1;
		if (ql->nr < 0) {
			err_errno(errno, NULL);
			free(ql->names);
			ql->names = NULL;
			close(fd);
			return -1;
		}
		if ((unsigned int)ql->nr <= cap)
			break;
		cap = (unsigned int)ql->nr + 16;
	}
	close(fd);
	return 0;
}

/*
 * Check a command-line key's length: 0, or -1 after the usage error,
 * which names the length (not the key: it may be kilobytes).
 */
int check_key(const char *key)
{
	size_t len = strlen(key);

	if (len && len <= KWQ_KEY_LEN_MAX)
		return 0;
	if (!len)
		err_usage("empty key (keys are 1..%d bytes)", KWQ_KEY_LEN_MAX);
	else
		err_usage("key of %zu bytes is too long (keys are 1..%d bytes)",
			  len, KWQ_KEY_LEN_MAX);
	return -1;
}

/* check_key() of @n command-line keys. 0 or -1. */
int check_keys(char **keys, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (check_key(keys[i]))
			return -1;
	return 0;
}

/*
 * A module parameter of kwq (/sys/module/kwq/parameters/@name): 0 if
 * it cannot be read.
 */
unsigned long module_param(const char *name)
{
	char path[128];
	unsigned long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/kwq/parameters/%s", name);
	f = fopen(path, "re");
	if (f) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/*
 * Report a failed batch call on @queue (attached to @fd): which key
 * stopped it, and for an item cap (ENOSPC) the cap.
 */
void batch_error(int fd, const char *queue, int e, char **keys,
		 unsigned int nr, unsigned int done)
{
	struct kwq_queue_opts qo;
	unsigned long cap = 0;
	const char *what;
	char why[96] = "";

	if (e == ENOSPC) {
		if (kwq_queue_info(fd, &qo, NULL) == 0)
			cap = qo.max_items;
		/* 0: the module's cap, max_items_per_queue */
		what = cap ? "the queue's --max-items" :
			     "the module's max_items_per_queue";
		if (!cap)
			cap = module_param("max_items_per_queue");
		if (cap)
			snprintf(why, sizeof(why), " (%s, %lu, reached)", what,
				 cap);
	} else if (e == EDQUOT) {
		snprintf(why, sizeof(why), " (the creator's max_bytes_per_user, %lu bytes, spent)",
			 module_param("max_bytes_per_user"));
	}
	if (done < nr)
		err_errno(e, "queue %s: key %s%s", queue, keys[done], why);
	else
		err_errno(e, "queue %s%s", queue, why);
}
