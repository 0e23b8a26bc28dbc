// SPDX-License-Identifier: GPL-2.0
/*
 * kwqctl: the dead set: revive and purge (dead lists it, see inspect.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kwqctl.h"

enum { DEAD_ALL, DEAD_NR_OPTS };

const struct cmd_opt dead_op_opts[] = {
	[DEAD_ALL] = { "all", 0, NULL, "every dead key (no KEY); prints how many" },
	[DEAD_NR_OPTS] = { NULL, 0, NULL, NULL },
};

static int dead_op_opt(void *st, int opt, const char *val)
{
	(void)val;
	*(bool *)st = opt == DEAD_ALL;
	return 0;
}

/* revive, purge: the keys named, in order, or --all. */
static int dead_op(const struct cmd_ctx *ctx, int argc, char **argv,
		   int (*one)(int, const void *, size_t), long (*all)(int))
{
	struct cmd_args a;
	bool every = false;
	int fd, i;
	long n;

	if (cmd_parse(ctx, argc, argv, dead_op_opt, &every, &a))
		return a.rc;
	if (every ? a.npos > 1 : a.npos == 1) {
		err_usage("give KEY... or --all");
		return EX_USAGE;
	}
	if (check_keys(a.pos + 1, a.npos - 1))
		return EX_USAGE;
	fd = attach(ctx, a.pos[0]);
	if (fd < 0)
		return EX_ERR;
	if (every) {
		n = all(fd);
		if (n < 0) {
			err_errno(errno, NULL);
			close(fd);
			return EX_ERR;
		}
		printf("%ld\n", n);
	}
	for (i = 1; i < a.npos; i++) {
		if (one(fd, a.pos[i], strlen(a.pos[i])) < 0) {
			err_errno(errno, "queue %s: key %s%s", a.pos[0], a.pos[i],
				  errno == ENOENT ? " (not dead)" : "");
			close(fd);
			return EX_ERR;
		}
	}
	close(fd);
	return EX_OK;
}

int cmd_revive(const struct cmd_ctx *ctx, int argc, char **argv)
{
	return dead_op(ctx, argc, argv, kwq_revive, kwq_revive_all);
}

int cmd_purge(const struct cmd_ctx *ctx, int argc, char **argv)
{
	return dead_op(ctx, argc, argv, kwq_purge, kwq_purge_all);
}
