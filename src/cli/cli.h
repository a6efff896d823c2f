/*
 * cli.h - what every subcommand file in src/cli shares: the command table
 * entry type and the only functions in the project that print errors.
 *
 * Each subcommand lives in its own file (src/cli/<name>.c) and exports
 * cmd_<name>(argc, argv); main.c dispatches through a table, as git's
 * builtin/ does.  error() prints "perftracker: <msg>" and returns -1;
 * die() prints and exits 1; warning() prints and returns.
 */
#ifndef PT_CLI_H
#define PT_CLI_H

#include "util/error.h"

struct pt_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
__attribute__((noreturn)) void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print a library error record as one line ("perftracker: file: msg (at byte N)"). */
int error_pt(const pt_error *e);

/* Parse a non-negative integer / double option value or die naming the option. */
long opt_long(const char *opt, const char *val);
double opt_double(const char *opt, const char *val);

int cmd_summarize(int argc, char **argv);
int cmd_diagnose(int argc, char **argv);
int cmd_analyze(int argc, char **argv);
int cmd_display(int argc, char **argv);
int cmd_trigger(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_hang_check(int argc, char **argv);

#endif
