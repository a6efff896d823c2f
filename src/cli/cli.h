/*
 * cli.h - what every subcommand file in src/cli shares: the command table
 * entry type, the only functions in the project that print errors, and
 * the parsing and --help of a command's option table.
 *
 * Each subcommand lives in its own file (src/cli/<name>.c) and exports
 * cmd_<name>(argc, argv); main.c dispatches through a table, as git's
 * builtin/ does.  Each declares its options in a pt_opt table
 * (util/opts.h) and hands it to cli_parse_options.  The printing helpers
 * live in usage.c: error() prints "perftracker: <msg>" and returns -1;
 * die() prints and exits 1; warning() prints and returns.  Options and
 * control-directory helpers shared by several subcommands live in common.c
 * (and diagnose.h for the diagnosis options).
 */
#ifndef PT_CLI_H
#define PT_CLI_H

#include <stdio.h>

#include "util/error.h"
#include "util/opts.h"

struct pt_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

/* ---- usage.c ---- */
int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
__attribute__((noreturn)) void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print a library error record as one line ("perftracker: file: msg (at byte N)"). */
int error_pt(const pt_error *e);

/* A subcommand's command line for its --help and its messages; the options
 * themselves are a pt_opt table (util/opts.h) declared in the command. */
typedef struct cli_usage {
	const char *name;    /* "analyze": names the command in messages */
	const char *usage;   /* "perftracker analyze PATH... [-o DIR] [options]";
	                        more forms on more lines ('\n' between them) */
	const char *about;   /* what the command does (lines end in '\n'), or NULL */
	const char *footer;  /* printed after the options, or NULL */
} cli_usage;

#define CLI_HELP (-2)   /* cli_parse_options: --help was printed */

/* Parse argv with opts (util/opts.h); the positionals end up in
 * argv[1..n] and n is returned.  -h/--help print the help on stdout and
 * return CLI_HELP (the command then returns 0); an unknown option, a
 * missing or bad value print one line ("perftracker: analyze: unknown
 * option '--x' (see 'perftracker analyze --help')", "perftracker: option
 * '--z': 'abc' is not a non-negative number") and return -1. */
int cli_parse_options(const cli_usage *u, const pt_opt *opts, int argc, char **argv);
/* The help: usage line(s), about, the option table (included tables under
 * their headings) aligned in two columns, -h, the footer. */
void cli_usage_print(FILE *f, const cli_usage *u, const pt_opt *opts);
/* A usage error (a missing argument): the message, the usage line(s) and
 * where the options are, on stderr; returns -1. */
int cli_usage_error(const cli_usage *u, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An argument the command does not take: one line naming it, -1. */
int cli_usage_unexpected(const cli_usage *u, const char *arg);

/* Monotonic seconds; sleep for s seconds (s >= 0). */
double cli_now(void);
void cli_sleep(double s);
/* --nsys-gpu-metrics [HZ] (trigger, agent): the callback stores the rate in
 * Hz (an int) or PT_NSYS_HZ_DEFAULT when none is given; a bad rate is an
 * error naming the range. */
int cli_opt_nsys_hz(const pt_opt *o, const char *arg, void *target, pt_error *e);
/* --control-dir DIR, the same for every command that looks at a job. */
#define CLI_OPT_CONTROL_DIR(target) \
	PT_OPT_STRING(0, "control-dir", PT_TO(target), "DIR", \
		      "control directory ($PERFTRACKER_CONTROL_DIR, else the job's: docs/collector.md)")
/* --job NAME: the job's default control directory (src/control/job.h). */
#define CLI_OPT_JOB(target) \
	PT_OPT_STRING(0, "job", PT_TO(target), "NAME", \
		      "the job (MASTER_ADDR:MASTER_PORT, torchrun's run id, $PERFTRACKER_JOB)\n" \
		      "whose default control directory to use (default: the only live one)")
#define CLI_OPT_NSYS_HZ(target, help) \
	PT_OPT_CALLBACK(0, "nsys-gpu-metrics", PT_TO(target), "HZ", cli_opt_nsys_hz, \
			PT_OPT_OPTARG, help)
/* User rules for which kernels are communication (src/model/commkind.h):
 * the file named by PERFTRACKER_COMM_KERNELS, then every "--comm-kernels
 * FILE" of argv, which are taken out of argv (argc updated).  0, or -1
 * after printing the error. */
int cli_comm_kernels(int *argc, char **argv);

/* The workers registered in control directory *dir (NULL: the default,
 * written back to *dir): *w (x_free it) and *n.  0, or -1 after printing
 * a one-line error (no such directory, unreadable records). */
struct pt_worker_entry;
/* The control directory a command means: *dir when given (--control-dir),
 * else job's (--job), else the environment's, else the only live job's
 * (pt_job_resolve_dir); written back to *dir (a static buffer).  0, or -1
 * after printing the error (several jobs run: it names them). */
int cli_resolve_dir(const char **dir, const char *job);
int cli_control_workers(const char **dir, struct pt_worker_entry **w, size_t *n);

int cmd_summarize(int argc, char **argv);
int cmd_diagnose(int argc, char **argv);
int cmd_digest(int argc, char **argv);
int cmd_analyze(int argc, char **argv);
int cmd_timeline(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_display(int argc, char **argv);
int cmd_trigger(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_hang_check(int argc, char **argv);

#endif
