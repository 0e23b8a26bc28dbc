// SPDX-License-Identifier: GPL-2.0
/*
 * kwqctl: a command's arguments, parsed by getopt_long() from its row of
 * the command table, and its --help, printed from the same row.
 *
 * getopt_long() runs in RETURN_IN_ORDER mode ("-" first in optstring):
 * options and positionals may be mixed, "--" makes every later argument
 * positional, POSIXLY_CORRECT changes nothing, and argv is never
 * permuted. Options must be spelt out, as kwqctl always took them: a
 * long name in full (an abbreviation is an unknown option), a short
 * flag alone (no clusters).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kwqctl.h"

/* getopt_long()'s value of an option without a letter: its index + this. */
#define OPT_NOLETTER	256
#define OPT_HELP	'h'
/* Most options a command has, but --help. */
#define MAX_OPTS	16
/* Column of an option's help text in --help. */
#define HELP_COL	19

/*
 * The length of the n-th positional's name in @usage (set *@w), or 0;
 * with @opt, optional ones ("[NAME]", "[NAME...]") count too.
 */
static size_t usage_positional(const char *usage, int n, const char **w,
			       bool *many, bool opt)
{
	int depth = 0, nth = 0;
	const char *s = usage;
	size_t len;

	*many = false;
	while (*s) {
		int before = depth;
		const char *c;

		s += strspn(s, " ");
		len = strcspn(s, " ");
		for (c = s; c < s + len; c++)
			depth += (*c == '[') - (*c == ']');
		if (len && before == 0 && !memchr(s, '[', len) &&
		    *s != '-' && *s != '|' && nth++ == n) {
			*w = s;
			*many = len > 3 && strncmp(s + len - 3, "...", 3) == 0;
			return *many ? len - 3 : len;
		}
		/* "[NAME]" or "[NAME...]": an optional positional, last */
		if (opt && len > 2 && before == 0 && *s == '[' && isupper((unsigned char)s[1]) &&
		    s[len - 1] == ']' && nth++ == n) {
			*w = s + 1;
			*many = len > 5 && strncmp(s + len - 4, "...]", 4) == 0;
			return *many ? len - 5 : len - 2;
		}
		s += len;
	}
	return 0;
}

/* Whether @tok ("--NAME" or "--NAME=VALUE") names long option @name. */
static bool long_opt_is_exact(const char *tok, const char *name)
{
	size_t len = strlen(name);

	return strncmp(tok + 2, name, len) == 0 &&
	       (tok[2 + len] == '\0' || tok[2 + len] == '=');
}

static int opt_index(const struct cmd_opt *opts, int c)
{
	int i;

	if (c >= OPT_NOLETTER)
		return c - OPT_NOLETTER;
	for (i = 0; opts && (opts[i].name || opts[i].letter); i++)
		if (opts[i].letter == c)
			return i;
	return -1;
}

/*
 * Whether option @c came as kwqctl always took it from token @tok: a
 * long name in full, a short flag alone ("-h", not "-hx").
 */
static bool spelt_out(const struct cmd_opt *opts, int c, const char *tok)
{
	int i = opt_index(opts, c);

	if (strncmp(tok, "--", 2) == 0)
		return long_opt_is_exact(tok, i < 0 ? "help" : opts[i].name);
	return (i >= 0 && opts[i].arg) || strlen(tok) == 2;
}

/* The message of a '?' or ':' from getopt_long() for token @tok. */
static void bad_option(const struct cmd_opt *opts, int c, const char *tok)
{
	int i = opt_index(opts, optopt);
	const char *name = optopt == OPT_HELP ? "help" :
			   i >= 0 ? opts[i].name : NULL;

	if (c == ':' && strncmp(tok, "--", 2) == 0 && name)
		err_usage("option '--%s' needs a value", name);
	else if (c == ':')
		err_usage("option '-%c' needs a value", optopt);
	else if (optopt && strncmp(tok, "--", 2) == 0 && name)
		err_usage("option '--%s' takes no value", name);
	else
		err_usage("unknown option '%s'", tok);
}

/*
 * How many positionals @usage names (@opt: as usage_positional()); *@many
 * if the last takes any number.
 */
static int usage_count(const char *usage, bool *many, bool opt)
{
	const char *w;
	int n = 0;

	*many = false;
	while (usage_positional(usage, n, &w, many, opt))
		n++;
	if (n)
		usage_positional(usage, n - 1, &w, many, opt);
	return n;
}

/* Take positional argv[@at]; -1 once parsing must stop. */
static int take_positional(const struct cmd *cmd, int argc, char **argv,
			   int at, struct cmd_args *a)
{
	bool many;
	/* What a passthrough command passes on starts at its last name. */
	int names = usage_count(cmd->usage, &many, !cmd->passthrough);

	if (cmd->passthrough && a->npos == names - 1) {
		a->rest = argv + at;
		a->nrest = argc - at;
		return -1;
	}
	if (a->npos >= names && !many) {
		err_usage("unexpected argument '%s'", argv[at]);
		a->rc = EX_USAGE;
		return -1;
	}
	/* Gathered in place: RETURN_IN_ORDER never looks back at argv. */
	a->pos[a->npos++] = argv[at];
	return 0;
}

/*
 * Parse @argv (argv[0] is the command's name) by @cmd's option table:
 * on_opt() for each option, the positionals into @a. 0; 1 for --help
 * (a->rc EX_OK, the caller prints it); -1 after a usage error (printed,
 * a->rc EX_USAGE).
 */
static int parse(const struct cmd *cmd, int argc, char **argv,
		 cmd_opt_fn on_opt, void *st, struct cmd_args *a)
{
	struct option lopts[MAX_OPTS + 2];
	char optstring[2 + 3 * MAX_OPTS + 2] = "-:";
	char *p = optstring + 2;
	int n = 0, c, i, at;
	const char *tok;

	for (i = 0; cmd->opts && (cmd->opts[i].name || cmd->opts[i].letter); i++) {
		const struct cmd_opt *o = &cmd->opts[i];
		int val = o->letter ? o->letter : OPT_NOLETTER + i;

		if (i >= MAX_OPTS)
			abort();	/* a table longer than the arrays */
		if (o->letter) {
			*p++ = o->letter;
			if (o->arg)
				*p++ = ':';
		}
		if (o->name)
			lopts[n++] = (struct option){ o->name,
				o->arg ? required_argument : no_argument,
				NULL, val };
	}
	*p++ = OPT_HELP;
	*p = '\0';
	lopts[n++] = (struct option){ "help", no_argument, NULL, OPT_HELP };
	lopts[n] = (struct option){ NULL, 0, NULL, 0 };

	memset(a, 0, sizeof(*a));
	a->pos = argv + 1;
	optind = 0;
	opterr = 0;
	for (;;) {
		/* The token getopt_long() reads next (a cluster's, too). */
		at = optind ? optind : 1;
		tok = at < argc ? argv[at] : "";
		c = getopt_long(argc, argv, optstring, lopts, NULL);
		if (c == -1)
			break;
		if (c == 1) {
			if (take_positional(cmd, argc, argv, optind - 1, a))
				return a->rest ? 0 : -1;
			continue;
		}
		a->rc = EX_USAGE;
		if (c == '?' || c == ':') {
			bad_option(cmd->opts, c, tok);
			return -1;
		}
		if (!spelt_out(cmd->opts, c, tok)) {
			err_usage("unknown option '%s'", tok);
			return -1;
		}
		if (c == OPT_HELP) {
			a->rc = EX_OK;
			return 1;
		}
		if (on_opt(st, opt_index(cmd->opts, c), optarg))
			return -1;
	}
	/* After "--": positionals only. */
	for (at = optind; at < argc; at++)
		if (take_positional(cmd, argc, argv, at, a))
			return a->rest ? 0 : -1;
	return 0;
}

/*
 * A command's arguments: its options through on_opt(st, ...), its
 * positionals into @a, each named positional present. 0; or -1 when the
 * command is over, with its exit status in a->rc: --help printed (0), a
 * usage error printed (2).
 */
int cmd_parse(const struct cmd_ctx *ctx, int argc, char **argv,
	      cmd_opt_fn on_opt, void *st, struct cmd_args *a)
{
	const struct cmd *cmd = ctx->cmd;
	const char *w;
	bool many;
	size_t len;
	int ret = parse(cmd, argc, argv, on_opt, st, a);

	if (ret > 0)
		cmd_help(cmd);
	if (ret)
		return -1;
	if (a->rest)
		return 0;
	len = usage_positional(cmd->usage, a->npos, &w, &many, true);
	if (len && w[-1] != '[') {
		err_usage("missing %.*s", (int)len, w);
		a->rc = EX_USAGE;
		return -1;
	}
	return 0;
}

/*
 * The global options (before COMMAND): as cmd_parse(), but 1 for
 * --help, which the caller prints, and no "missing" message.
 */
int cmd_parse_global(const struct cmd *global, int argc, char **argv,
		     cmd_opt_fn on_opt, void *st, struct cmd_args *a)
{
	return parse(global, argc, argv, on_opt, st, a);
}

static void print_opt(const struct cmd_opt *o)
{
	char label[64];
	const char *s;
	int n;

	if (o->name && o->letter)
		n = snprintf(label, sizeof(label), "-%c, --%s", o->letter,
			     o->name);
	else if (o->name)
		n = snprintf(label, sizeof(label), "--%s", o->name);
	else
		n = snprintf(label, sizeof(label), "-%c", o->letter);
	if (o->arg)
		n += snprintf(label + n, sizeof(label) - (size_t)n, " %s",
			      o->arg);
	if (n > HELP_COL - 3)
		printf("  %s\n%*s", label, HELP_COL, "");
	else
		printf("  %-*s ", HELP_COL - 3, label);
	for (s = o->help; *s; s += *s == '\n') {
		n = (int)strcspn(s, "\n");
		printf("%.*s", n, s);
		s += n;
		if (*s)
			printf("\n%*s", HELP_COL, "");
	}
	putchar('\n');
}

void cmd_help(const struct cmd *cmd)
{
	const struct cmd_opt *o;

	printf("usage: kwqctl [-d DEVICE] %s %s\n\n%s", cmd->name, cmd->usage,
	       cmd->desc);
	for (o = cmd->opts; o && (o->name || o->letter); o++)
		if (o->help)
			print_opt(o);
	if (cmd->tail)
		fputs(cmd->tail, stdout);
}

int parse_u32(const char *s, unsigned long max, unsigned int *out)
{
	char *end;
	unsigned long v;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return -1;
	*out = (unsigned int)v;
	return 0;
}

int parse_dur_opt(const char *opt, const char *s, uint64_t *ns)
{
	if (kwq_parse_duration(s, ns) == 0)
		return 0;
	err_usage("bad duration '%s' for %s (an integer with ns, us, ms, s, m, h or d)",
		  s, opt);
	return -1;
}

/* As kwq_format_duration(), in days when it is whole days ("365d"). */
void format_dur(char *buf, size_t size, uint64_t ns)
{
	const uint64_t day = 86400ULL * 1000000000ULL;

	if (ns && ns % day == 0)
		snprintf(buf, size, "%" PRIu64 "d", ns / day);
	else
		kwq_format_duration(buf, size, ns);
}

/*
 * Check processing timeout @ns, given as @s to option @opt for queue
 * @queue: KWQ_PROCESSING_TIMEOUT_MIN..KWQ_PROCESSING_TIMEOUT_MAX, or 0
 * (what 0 means is @zero's, for the message), or with @none "none"
 * (KWQ_TIMEOUT_NONE). 0, or -1 after the usage error naming the range.
 */
int check_processing_timeout(const char *queue, const char *opt,
			     const char *s, uint64_t ns, bool none,
			     const char *zero)
{
	char lo[32], hi[32];

	if (!ns || (none && ns == KWQ_TIMEOUT_NONE) ||
	    (ns >= KWQ_PROCESSING_TIMEOUT_MIN && ns <= KWQ_PROCESSING_TIMEOUT_MAX))
		return 0;
	format_dur(lo, sizeof(lo), KWQ_PROCESSING_TIMEOUT_MIN);
	format_dur(hi, sizeof(hi), KWQ_PROCESSING_TIMEOUT_MAX);
	err_usage("queue %s: %s %s out of range (%s..%s, 0: %s%s)", queue, opt,
		  s, lo, hi, zero, none ? ", none: no deadline" : "");
	return -1;
}

/* A duration for @opt, or with @none "none": KWQ_TIMEOUT_NONE. */
int parse_processing_timeout(const char *opt, const char *s, bool none,
			     uint64_t *ns)
{
	if (none && !strcmp(s, "none")) {
		*ns = KWQ_TIMEOUT_NONE;
		return 0;
	}
	return parse_dur_opt(opt, s, ns);
}
