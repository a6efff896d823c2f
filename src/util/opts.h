/*
 * opts.h - command-line options from a table (git's parse-options in
 * spirit): each command declares its options once, as an array of pt_opt
 * (long name, short name, argument name, type, target, help), and
 * pt_opts_parse walks argv with it.  The CLI (src/cli/usage.c) prints
 * `--help` from the same table, so the parser and the help cannot drift.
 * Pure: no printing, no exit; errors come back in a pt_error.
 *
 * Syntax accepted: "--name VALUE", "--name=VALUE", "-x VALUE", "-xVALUE",
 * flags alone ("--name", "-x"; no bundling), "--" ends the options, "-"
 * alone is a positional, options and positionals may be mixed.  Long names
 * match exactly (no abbreviations).  "-h" and "--help" are built in unless
 * the table defines them.
 */
#ifndef PT_OPTS_H
#define PT_OPTS_H

#include <stddef.h>

#include "error.h"

typedef enum {
	PT_OPT_TEND = 0,  /* the last entry of every table */
	PT_OPT_TGROUP,    /* no option: a heading in --help (help is its text) */
	PT_OPT_TFLAG,     /* no argument: *(int *)target = ival */
	PT_OPT_TINT,      /* decimal integer in [min, max]: stored as a signed
	                     integer of `size` bytes (1, 2, 4 or 8; size_t and
	                     int64_t targets hold the non-negative values) */
	PT_OPT_TDOUBLE,   /* number (strtod) in [min, max]: *(double *)target */
	PT_OPT_TSTRING,   /* *(const char **)target = the argument (borrowed
	                     from argv: it lives as long as argv) */
	PT_OPT_TCHOICE,   /* one of choices[] (NULL-terminated): its index, as
	                     *(int *)target */
	PT_OPT_TCALLBACK, /* cb(opt, arg, target, e); arg NULL when an optional
	                     argument is absent */
	PT_OPT_TINCLUDE,  /* the options of table `sub`, their targets at
	                     offsets (`off`) from this entry's target; help,
	                     when set, is a heading printed before them */
} pt_opt_type;

/* Flags (pt_opt.flags). */
#define PT_OPT_OPTARG   1u  /* the argument is optional: "--name=V", or the
                               next argument when it starts with a digit */
#define PT_OPT_NONEMPTY 2u  /* STRING: "" is refused ("needs a value") */

typedef struct pt_opt pt_opt;

/* A callback option's action: 0, or -1 with e filled (its message is what
 * the user sees; name the option in it). */
typedef int pt_opt_cb(const pt_opt *o, const char *arg, void *target, pt_error *e);

struct pt_opt {
	pt_opt_type type;
	char short_name;            /* 'o' for -o, or 0 */
	const char *long_name;      /* "output" for --output (no dashes), or NULL */
	const char *argname;        /* "DIR" in the help, NULL for flags */
	void *target;               /* where the value goes (top-level tables) */
	size_t off;                 /* ... or its offset from an including
	                               entry's target (tables used by INCLUDE) */
	size_t size;                /* sizeof the target (INT) */
	const char *help;           /* one or more lines ('\n' between them) */
	long ival;                  /* FLAG: the value stored */
	double min, max;            /* INT, DOUBLE: the accepted range; no upper
	                               bound when max <= min (default: >= 0) */
	const char *const *choices; /* CHOICE */
	pt_opt_cb *cb;              /* CALLBACK */
	const pt_opt *sub;          /* INCLUDE */
	unsigned flags;             /* PT_OPT_OPTARG, PT_OPT_NONEMPTY */
};

/* Where an option's value goes, the `where` argument of the macros below:
 * PT_TO(&var) in a command's own table, PT_AT(type, member) in a table that
 * is included (PT_OPT_INCLUDE) with a pointer to a `type`. */
#define PT_TO(p) .target = (p), .size = sizeof(*(p))
#define PT_AT(type, member) .off = offsetof(type, member), .size = sizeof(((type *)0)->member)

#define PT_OPT_FLAG(s, l, where, h) \
	{ .type = PT_OPT_TFLAG, .short_name = (s), .long_name = (l), where, .ival = 1, .help = (h) }
#define PT_OPT_SET(s, l, where, v, h) \
	{ .type = PT_OPT_TFLAG, .short_name = (s), .long_name = (l), where, .ival = (v), .help = (h) }
#define PT_OPT_INT(s, l, where, a, h) \
	{ .type = PT_OPT_TINT, .short_name = (s), .long_name = (l), where, .argname = (a), .help = (h) }
#define PT_OPT_INT_RANGE(s, l, where, a, lo, hi, h) \
	{ .type = PT_OPT_TINT, .short_name = (s), .long_name = (l), where, .argname = (a), \
	  .min = (lo), .max = (hi), .help = (h) }
#define PT_OPT_DOUBLE(s, l, where, a, h) \
	{ .type = PT_OPT_TDOUBLE, .short_name = (s), .long_name = (l), where, .argname = (a), \
	  .help = (h) }
#define PT_OPT_STRING(s, l, where, a, h) \
	{ .type = PT_OPT_TSTRING, .short_name = (s), .long_name = (l), where, .argname = (a), \
	  .help = (h) }
#define PT_OPT_CHOICE(s, l, where, a, list, h) \
	{ .type = PT_OPT_TCHOICE, .short_name = (s), .long_name = (l), where, .argname = (a), \
	  .choices = (list), .help = (h) }
#define PT_OPT_CALLBACK(s, l, where, a, fn, fl, h) \
	{ .type = PT_OPT_TCALLBACK, .short_name = (s), .long_name = (l), where, .argname = (a), \
	  .cb = (fn), .flags = (fl), .help = (h) }
#define PT_OPT_INCLUDE(table, base, heading) \
	{ .type = PT_OPT_TINCLUDE, .sub = (table), .target = (base), .help = (heading) }
#define PT_OPT_GROUP(heading) { .type = PT_OPT_TGROUP, .help = (heading) }
#define PT_OPT_END() { .type = PT_OPT_TEND }

/* pt_opts_parse's results besides a count of positionals. */
enum {
	PT_OPTS_ERROR = -1,    /* a bad value or a callback's error: e says */
	PT_OPTS_HELP = -2,     /* -h or --help was given */
	PT_OPTS_UNKNOWN = -3,  /* an unknown option: e says "unknown option 'X'" */
};

/* Parse argv[1..argc) with opts, storing every option's value as it comes
 * (a later one wins; a callback runs once per occurrence).  The positional
 * arguments are moved, in order, to argv[1..n] (argv[n + 1] = NULL; argv[0]
 * is left alone) and n is returned; else one of PT_OPTS_*, with e filled
 * for ERROR and UNKNOWN ("option '--x' needs a value", "option '--x': 'y'
 * is not a non-negative integer", ...; the option as the user typed it).
 * Stops at the first error; targets set before it keep their values. */
int pt_opts_parse(const pt_opt *opts, int argc, char **argv, pt_error *e);

/* Check a table (and the tables it includes): every option has a name, no
 * name is used twice, INT sizes are 1, 2, 4 or 8, CHOICE has choices,
 * CALLBACK a function.  0, or -1 with e naming the entry (a programming
 * error, for tests and a debug check). */
int pt_opts_check(const pt_opt *opts, pt_error *e);

#endif
