// SPDX-License-Identifier: GPL-2.0
/*
 * kwqctl: diagnostics. Every message is one line on stderr that starts
 * "kwqctl: COMMAND: "; an error names the errno, a usage error points at
 * the command's --help.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kwqctl.h"

/*
 * The command running, for the messages' prefix: set by run_command()
 * before the command runs (no thread runs then), back to "batch" by
 * batch after it; "" while the global options are parsed.
 */
static const char *cmd_name = "";

void msg_set_command(const char *name)
{
	cmd_name = name;
}

static const char *errname(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "E?";
}

/* "kwqctl: CMD: [CONTEXT: ]strerror (ENAME)" and nothing else. */
void err_errno(int e, const char *fmt, ...)
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

void err_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "kwqctl: %s%s", cmd_name, *cmd_name ? ": " : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see kwqctl %s%s--help)\n", cmd_name,
		*cmd_name ? " " : "");
}

/* "kwqctl: CMD: TEXT": neither an errno nor a usage error. */
void err_msg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "kwqctl: %s: ", cmd_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
