/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kwqctl: what the command files share. main.c owns the command table
 * (name, handler, usage, options, help), parse.c turns a row's options
 * into getopt_long()'s arrays and its --help, message.c prints the
 * diagnostics, device.c opens /dev/kwq and packs keys. Each command file
 * (queue.c, keys.c, stats.c, work.c) holds handlers and their option
 * tables; a handler parses its options into a struct of its own.
 *
 * Exit status: 0 ok; 1 error (stderr names the errno); 2 usage; 3 `get`
 * found nothing before its timeout; 4 queue shut down and empty (`get`).
 */
#ifndef KWQCTL_H
#define KWQCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libkwq.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
/* A macro's value as a string: a uapi constant in a help text. */
#define STR_(x)		#x
#define STR(x)		STR_(x)

enum { EX_OK = 0, EX_ERR = 1, EX_USAGE = 2, EX_EMPTY = 3, EX_SHUT = 4 };

/**
 * struct cmd_opt - one option of a command: a row of its option table
 * @name: long name without "--", or NULL
 * @letter: short name, or 0
 * @arg: the name of its value ("DUR"), or NULL for a flag
 * @help: its text in --help; a '\n' starts an indented line
 *
 * A table ends with a row of zeroes; a handler's enum of option indexes
 * follows the table's order (designated initialisers keep them in step).
 */
struct cmd_opt {
	const char *name;
	char letter;
	const char *arg;
	const char *help;
};

struct cmd_ctx;

/* A command's handler: argv[0] is the command's name. The exit status. */
typedef int cmd_fn(const struct cmd_ctx *ctx, int argc, char **argv);

/**
 * struct cmd - a row of the command table (main.c)
 * @name: the command's word on the command line
 * @fn: its handler: the exit status
 * @usage: what follows "kwqctl [-d DEVICE] NAME " in the synopsis; its
 *	words outside brackets that are not options name the positionals
 *	("missing KEY"), a last one ending in "..." takes any number
 * @desc: the text of --help before the options
 * @opts: the option table, or NULL for none but --help
 * @tail: the text of --help after the options, or NULL
 * @passthrough: the last named positional and all after it are not
 *	parsed (`work`'s CMD): they reach the handler as they are
 */
struct cmd {
	const char *name;
	cmd_fn *fn;
	const char *usage;
	const char *desc;
	const struct cmd_opt *opts;
	const char *tail;
	bool passthrough;
};

/**
 * struct cmd_ctx - what main() (or batch) hands a handler
 * @device: the device to open (-d DEVICE, or the default)
 * @cmd: the running command's row
 */
struct cmd_ctx {
	const char *device;
	const struct cmd *cmd;
};

/**
 * struct cmd_args - what cmd_parse() found
 * @pos: the positionals, in order (@npos of them)
 * @npos: their number
 * @rest: with @passthrough, the arguments from the last named positional
 *	on (@nrest of them), as given
 * @nrest: their number
 * @rc: the exit status once cmd_parse() has ended the command
 */
struct cmd_args {
	char **pos;
	int npos;
	char **rest;
	int nrest;
	int rc;
};

/*
 * on_opt(st, opt, val): option @opt (its index in the table) was given,
 * with value @val (NULL for a flag). 0, or -1 after err_usage(). NULL
 * for a command whose table has no options.
 */
typedef int (*cmd_opt_fn)(void *st, int opt, const char *val);

/* main.c */
int run_command(const struct cmd_ctx *ctx, int argc, char **argv);

/* parse.c */
int cmd_parse(const struct cmd_ctx *ctx, int argc, char **argv,
	      cmd_opt_fn on_opt, void *st, struct cmd_args *a);
int cmd_parse_global(const struct cmd *global, int argc, char **argv,
		     cmd_opt_fn on_opt, void *st, struct cmd_args *a);
void cmd_help(const struct cmd *cmd);
int parse_u32(const char *s, unsigned long max, unsigned int *out);
int parse_dur_opt(const char *opt, const char *s, uint64_t *ns);
int parse_processing_timeout(const char *opt, const char *s, bool none,
			     uint64_t *ns);
int check_processing_timeout(const char *queue, const char *opt,
			     const char *s, uint64_t ns, bool none,
			     const char *zero);
void format_dur(char *buf, size_t size, uint64_t ns);

/* message.c */
void msg_set_command(const char *name);
void err_errno(int e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void err_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void err_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* device.c */
int open_dev(const struct cmd_ctx *ctx);
int attach(const struct cmd_ctx *ctx, const char *queue);
/**
 * struct queue_list - what list_queues() found
 * @names: the queue names, malloc'ed (free() it)
 * @nr: their number
 */
struct queue_list {
	char (*names)[KWQ_NAME_LEN];
	int nr;
};

int list_queues(const struct cmd_ctx *ctx, struct queue_list *ql);
int check_key(const char *key);
int check_keys(char **keys, int n);
void batch_error(int fd, const char *queue, int e, char **keys,
		 unsigned int nr, unsigned int done);
unsigned long module_param(const char *name);
int on_queue(const struct cmd_ctx *ctx, const char *queue,
	     int (*op)(int fd, void *arg), void *arg);

/* The commands and their option tables, by file. */
cmd_fn cmd_create, cmd_destroy, cmd_list, cmd_info, cmd_shutdown;	/* queue.c */
extern const struct cmd_opt create_opts[], shutdown_opts[];
cmd_fn cmd_add, cmd_add_rate_limited, cmd_forget, cmd_remove;	/* keys.c */
cmd_fn cmd_done, cmd_requeues, cmd_len, cmd_get, cmd_touch;
extern const struct cmd_opt add_opts[], get_opts[], touch_opts[];
cmd_fn cmd_stats;	/* stats.c */
extern const struct cmd_opt stats_opts[];
cmd_fn cmd_work;	/* work.c */
extern const struct cmd_opt work_opts[];
cmd_fn cmd_revive, cmd_purge;	/* dead.c */
extern const struct cmd_opt dead_op_opts[];
cmd_fn cmd_inspect, cmd_dead;	/* inspect.c */
extern const struct cmd_opt inspect_opts[], dead_opts[];
cmd_fn cmd_batch;	/* batch.c */
extern const struct cmd_opt batch_opts[];

#endif /* KWQCTL_H */
