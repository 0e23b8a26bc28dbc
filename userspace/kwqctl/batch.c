// SPDX-License-Identifier: GPL-2.0
/*
 * kwqctl: batch, as `ip -batch`: commands read from a file or stdin, a
 * line each with the words of a command line (COMMAND [ARG...]), run one
 * after the other in this process. A line is split into words at blanks;
 * '...' quotes literally, "..." quotes with \" and \\, a backslash
 * outside quotes takes the next character as it is, and a word starting
 * with '#' starts a comment. Blank and comment lines are skipped.
 *
 * Each command runs as it would alone: its output is flushed before the
 * next starts, its messages name it, getopt starts afresh (parse.c sets
 * optind to 0) and it closes what it opened. A command leaving an fd
 * open is a kwqctl bug, and the batch says so and stops.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kwqctl.h"

enum { BATCH_FORCE, BATCH_NR_OPTS };

const struct cmd_opt batch_opts[] = {
	[BATCH_FORCE] = { "force", 0, NULL,
		"go on after a failing command (the exit status\n"
		"is still the first failing command's)" },
	[BATCH_NR_OPTS] = { NULL, 0, NULL, NULL },
};

static int batch_opt(void *st, int opt, const char *val)
{
	bool *force = st;

	(void)opt;
	(void)val;
	*force = true;
	return 0;
}

/* The words of a line: pointers into the line itself. */
struct words {
	char **w;
	int n;
	int cap;
};

static int push_word(struct words *ws, char *w)
{
	char **nw;

	/* Room for this word and argv's NULL. */
	if (ws->n + 2 > ws->cap) {
		nw = realloc(ws->w, (size_t)(ws->cap * 2 + 8) * sizeof(*nw));
		if (!nw)
			return -1;
		ws->w = nw;
		ws->cap = ws->cap * 2 + 8;
	}
	ws->w[ws->n++] = w;
	ws->w[ws->n] = NULL;
	return 0;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/*
 * Split @line into words, in place (unquoting only shortens a word).
 * NULL, or what is wrong with the line; *@oom on ENOMEM.
 */
static const char *split(char *line, struct words *ws, bool *oom)
{
	char *in = line, *out, *word;

	ws->n = 0;
	*oom = false;
	for (;;) {
		while (blank(*in))
			in++;
		if (!*in || *in == '#')
			return NULL;
		word = in;
		out = in;
		while (*in && !blank(*in)) {
			if (*in == '\'') {
				for (in++; *in && *in != '\''; )
					*out++ = *in++;
				if (!*in)
					return "unterminated '";
				in++;
			} else if (*in == '"') {
				for (in++; *in && *in != '"'; ) {
					if (*in == '\\' && (in[1] == '"' || in[1] == '\\'))
						in++;
					*out++ = *in++;
				}
				if (!*in)
					return "unterminated \"";
				in++;
			} else if (*in == '\\') {
				if (!in[1] || in[1] == '\n')
					return "backslash at the end of the line";
				*out++ = in[1];
				in += 2;
			} else {
				*out++ = *in++;
			}
		}
		/* @in is past the word: the separator (or end) is ours. */
		if (*in)
			in++;
		*out = '\0';
		if (push_word(ws, word)) {
			*oom = true;
			return "";
		}
	}
}

/* The lowest fd not open: a command that leaked one changes it. */
static int lowest_free_fd(void)
{
	int fd = fcntl(0, F_DUPFD, 0);

	if (fd >= 0)
		close(fd);
	return fd;
}

int cmd_batch(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct words ws = { NULL, 0, 0 };
	const char *name, *why;
	int rc = EX_OK, r, free_fd;
	unsigned long lineno = 0;
	bool force = false, oom;
	struct cmd_args a;
	char *line = NULL;
	size_t cap = 0;
	FILE *f;

	if (cmd_parse(ctx, argc, argv, batch_opt, &force, &a))
		return a.rc;
	name = a.pos[0];
	f = strcmp(name, "-") ? fopen(name, "re") : stdin;
	if (!f) {
		err_errno(errno, "%s", name);
		return EX_ERR;
	}
	if (f == stdin)
		name = "stdin";
	while (getline(&line, &cap, f) >= 0) {
		lineno++;
		why = split(line, &ws, &oom);
		if (oom) {
			err_errno(ENOMEM, NULL);
			rc = EX_ERR;
			break;
		}
		if (why) {
			err_usage("%s:%lu: %s", name, lineno, why);
			r = EX_USAGE;
		} else if (!ws.n) {
			continue;
		} else if (!strcmp(ws.w[0], ctx->cmd->name)) {
			err_usage("%s:%lu: a batch cannot run a batch", name,
				  lineno);
			r = EX_USAGE;
		} else {
			free_fd = lowest_free_fd();
			r = run_command(ctx, ws.n, ws.w);
			if (fflush(stdout) && !r)
				r = EX_ERR;
			msg_set_command(ctx->cmd->name);
			if (lowest_free_fd() != free_fd) {
				err_msg("%s:%lu: '%s' left an fd open (a kwqctl bug)",
					name, lineno, ws.w[0]);
				rc = EX_ERR;
				break;
			}
			if (r)
				err_msg("%s:%lu: '%s' failed (exit status %d)%s",
					name, lineno, ws.w[0], r,
					force ? "" : ", stopped");
		}
		if (r && !rc)
			rc = r;
		if (r && !force)
			break;
	}
	if (ferror(f) && !rc) {
		err_errno(errno, "%s", name);
		rc = EX_ERR;
	}
	free(ws.w);
	free(line);
	if (f != stdin)
		fclose(f);
	return rc;
}
