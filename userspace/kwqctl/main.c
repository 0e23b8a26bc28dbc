// SPDX-License-Identifier: GPL-2.0
/*
 * kwqctl: command-line access to kwq queues through /dev/kwq. This file
 * owns the command table, as git.c owns its builtins: a row names the
 * command, its handler, its usage, its options and its --help. main()
 * parses the global options and hands the rest to the handler.
 */
#include <stdio.h>
#include <string.h>

#include "kwqctl.h"

static const struct cmd commands[] = {
	{ .name = "create", .fn = cmd_create,
	  .usage = "QUEUE [--limiter SPEC]... [OPTION]...",
	  .desc = "Create a queue: its rate limiters, caps, mode and dead set.\n",
	  .opts = create_opts },
	{ .name = "destroy", .fn = cmd_destroy, .usage = "QUEUE",
	  .desc = "Destroy a queue.\n" },
	{ .name = "list", .fn = cmd_list, .usage = "",
	  .desc = "Print the queue names, one per line.\n" },
	{ .name = "info", .fn = cmd_info, .usage = "QUEUE",
	  .desc = "Print the options the queue was created with, a line each, named\n"
		  "as create's (0: none or no cap; limiter default: the kernel's\n"
		  "exponential:5ms:1000s + bucket:10:100; max-dead 0 of a dead set:\n"
		  STR(KWQ_DEFAULT_MAX_DEAD) "), and whether it is ephemeral (destroyed with its\n"
		  "last fd). A queue a kernel module published has none to tell.\n" },
	{ .name = "add", .fn = cmd_add,
	  .usage = "QUEUE [--after DUR [--replace|--later]] [--priority N] KEY...",
	  .desc = "Add keys: one call for up to " STR(KWQ_BATCH_MAX) ", the most the kernel takes\n"
		  "at once, and as many as more need (the first error stops them).\n",
	  .opts = add_opts },
	{ .name = "add-rate-limited", .fn = cmd_add_rate_limited,
	  .usage = "QUEUE KEY...",
	  .desc = "Add keys with the delay of the queue's rate limiter; prints\n"
		  "\"KEY DELAY\" per key (DELAY in the largest exact unit up to h, 0\n"
		  "for none), or \"KEY dead\" for a key the queue moved to its dead set\n"
		  "(create --max-retries), with a message on stderr. More than\n"
		  STR(KWQ_BATCH_MAX) " keys go in several calls.\n" },
	{ .name = "forget", .fn = cmd_forget, .usage = "QUEUE KEY...",
	  .desc = "Clear the keys' rate limiter failure counts.\n" },
	{ .name = "requeues", .fn = cmd_requeues, .usage = "QUEUE KEY",
	  .desc = "Print the key's failure count.\n" },
	{ .name = "remove", .fn = cmd_remove, .usage = "QUEUE KEY...",
	  .desc = "Remove queued keys (ready or waiting) or cancel a pending requeue.\n" },
	{ .name = "len", .fn = cmd_len, .usage = "QUEUE",
	  .desc = "Print the number of ready keys.\n" },
	{ .name = "get", .fn = cmd_get,
	  .usage = "QUEUE [--timeout DUR] [-n COUNT] [--processing-timeout DUR|none]",
	  .desc = "Take up to COUNT (default 1) ready keys and print one per line. They\n"
		  "stay processing, detached from this process, until `kwqctl done`.\n",
	  .opts = get_opts,
	  .tail = "Exit status 3: nothing before the timeout; 4: shut down and empty.\n" },
	{ .name = "done", .fn = cmd_done, .usage = "QUEUE KEY...",
	  .desc = "Mark processing keys done (also keys another process got).\n" },
	{ .name = "touch", .fn = cmd_touch,
	  .usage = "QUEUE [--processing-timeout DUR|none] KEY...",
	  .desc = "Move the processing deadline of keys taken by `kwqctl get` to DUR\n"
		  "from now (a heartbeat for a shell worker). Keys leased to a\n"
		  "process (kwqctl work, libkwq) only their holder can touch.\n",
	  .opts = touch_opts },
	{ .name = "shutdown", .fn = cmd_shutdown, .usage = "QUEUE [--drain]",
	  .desc = "Shut the queue down: no more adds, delayed keys dropped.\n",
	  .opts = shutdown_opts },
	{ .name = "stats", .fn = cmd_stats,
	  .usage = "[QUEUE] [--all] [--json | --prometheus] [-o FILE]",
	  .desc = "Print the queue's counters as a table, JSON or Prometheus text;\n"
		  "with --all those of every queue this user may open (the others\n"
		  "are left out), in Prometheus text as one exposition.\n",
	  .opts = stats_opts },
	{ .name = "work", .fn = cmd_work,
	  .usage = "QUEUE [-j N] [--max-retries N] [--heartbeat DUR] -- CMD [ARG...]",
	  .desc = "Process keys: run CMD with the key as its last argument and in\n"
		  "KWQ_KEY. Exit 0: forget + done; else add-rate-limited + done. A\n"
		  "queue with a dead set (create --max-retries) moves a key that failed\n"
		  "for good there (a message says so); without one, --max-retries\n"
		  "forgets it after N failed retries. Keys are leased: if kwqctl dies\n"
		  "they go back to the queue. Returns 0 once the queue is shut down\n"
		  "and drained.\n",
	  .opts = work_opts, .passthrough = true },
	{ .name = "inspect", .fn = cmd_inspect,
	  .usage = "QUEUE [KEY] [--state S[,S]...] [--limit N]",
	  .desc = "Print where keys are, a line each: KEY STATE prio=N failures=N, then\n"
		  "since= (ready: waited; processing: held; dead: since the last\n"
		  "failure), due= (time left to a deadline), timeout= (processing:\n"
		  "time left to its processing deadline), holder= (the pid holding\n"
		  "it) and dirty/delayed/dying for processing keys. Without KEY every\n"
		  "key, walked a chunk at a time.\n",
	  .opts = inspect_opts },
	{ .name = "dead", .fn = cmd_dead, .usage = "QUEUE [--limit N]",
	  .desc = "Print the dead set, a key a line, as inspect --state dead.\n",
	  .opts = dead_opts },
	{ .name = "revive", .fn = cmd_revive, .usage = "QUEUE [KEY...] [--all]",
	  .desc = "Move dead keys back to the ready queue, their failure counts reset.\n",
	  .opts = dead_op_opts },
	{ .name = "purge", .fn = cmd_purge, .usage = "QUEUE [KEY...] [--all]",
	  .desc = "Drop dead keys and their failure counts.\n",
	  .opts = dead_op_opts },
	{ .name = "batch", .fn = cmd_batch, .usage = "[--force] FILE",
	  .desc = "Run the commands in FILE (- for stdin), a line each as on the\n"
		  "command line without \"kwqctl [-d DEVICE]\", in this process, in\n"
		  "order. Blank lines and '#' comments are skipped; words are split\n"
		  "at blanks, '...' and \"...\" quote, \\ escapes. Each command's\n"
		  "output is as if run alone. The first failing command stops the\n"
		  "batch: a message names its line.\n",
	  .opts = batch_opts,
	  .tail = "Exit status: 0 if every command succeeded, else the first failing\n"
		  "command's (2 for a line that does not parse).\n" },
};

/* The options before COMMAND, parsed as a command's are. */
enum { GLOBAL_DEVICE, GLOBAL_NR_OPTS };

static const struct cmd_opt global_opts[] = {
	[GLOBAL_DEVICE] = { NULL, 'd', "DEVICE", NULL },
	[GLOBAL_NR_OPTS] = { NULL, 0, NULL, NULL },
};

static const struct cmd global = {
	.name = "", .usage = "COMMAND [ARG...]", .opts = global_opts,
	.passthrough = true,
};

static void print_usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: kwqctl [-d DEVICE] COMMAND [ARG...]\n\n"
		"  -d DEVICE   the kwq device (default " KWQ_DEFAULT_DEVICE ")\n\n"
		"commands:\n");
	for (i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  kwqctl %s %s\n", commands[i].name,
			commands[i].usage);
	fprintf(f, "\nDUR: an integer with ns, us, ms, s, m, h or d (0 allowed).\n"
		"`kwqctl COMMAND --help` describes a command. Exit status: 0 ok,\n"
		"1 error, 2 usage, 3 get timed out, 4 queue shut down and empty.\n");
}

static int global_opt(void *st, int opt, const char *val)
{
	struct cmd_ctx *ctx = st;

	(void)opt;
	ctx->device = val;
	return 0;
}

/*
 * Run the command @argv[0] names with the device of @ctx: its exit
 * status (2 for an unknown command). main() and batch run commands so.
 */
int run_command(const struct cmd_ctx *ctx, int argc, char **argv)
{
	struct cmd_ctx c = *ctx;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(commands); i++) {
		if (strcmp(commands[i].name, argv[0]) == 0) {
			c.cmd = &commands[i];
			msg_set_command(c.cmd->name);
			return c.cmd->fn(&c, argc, argv);
		}
	}
	msg_set_command("");
	err_usage("unknown command '%s'", argv[0]);
	return EX_USAGE;
}

int main(int argc, char **argv)
{
	struct cmd_ctx ctx = { KWQ_DEFAULT_DEVICE, NULL };
	struct cmd_args a;
	int ret;

	ret = cmd_parse_global(&global, argc, argv, global_opt, &ctx, &a);
	if (ret > 0)
		print_usage(stdout);
	if (ret)
		return a.rc;
	if (!a.nrest) {
		print_usage(stderr);
		return EX_USAGE;
	}
	return run_command(&ctx, a.nrest, a.rest);
}
