/*
 * diagnose.h - what `perftracker diagnose` and `perftracker analyze` share
 * (src/cli/diagnose.c): the diagnosis options on the command line, a small
 * pthread pool for reading or summarising many files, and the final step
 * (diagnose, write DIR/PerfDisplay, print the text report).
 */
#ifndef PT_CLI_DIAGNOSE_H
#define PT_CLI_DIAGNOSE_H

#include <stddef.h>

#include "analysis/summary.h"
#include "diagnose/diagnose.h"

typedef struct cli_diag {
	pt_diag_options opt;
	const char *outdir;    /* -o DIR, NULL: text report only */
	long jobs;             /* --jobs, 0: online CPUs */
	size_t max_findings;   /* findings printed in the text report (0: all) */
	int quiet;             /* no text report on stdout */
	int time;              /* print phase times on stderr */
} cli_diag;

void cli_diag_init(cli_diag *d);
/* Consume argv[*i] (and its value) if it is a diagnosis option; 1 if it
 * was, 0 if not.  Dies with a one-line error on a bad value. */
int cli_diag_option(cli_diag *d, int argc, char **argv, int *i);
/* The option lines of both commands' --help. */
extern const char cli_diag_help[];

/* Run fn(ctx, i) for i in [0, n) on up to jobs threads (jobs <= 0: online
 * CPUs).  fn must be thread-safe across different i. */
void cli_parallel(size_t n, long jobs, void (*fn)(void *ctx, size_t i), void *ctx);

/* Input files: a path as given, or a folder searched recursively (hidden
 * entries, folders named PerfDisplay and the folder `skip` left out) for
 * traces (*.json, *.json.gz, not *.summary.json) or summaries (*.json),
 * sorted per folder.  0, or -1 after printing a one-line error. */
typedef struct cli_files {
	char **v;
	size_t n, cap;
} cli_files;
enum { CLI_TRACES, CLI_SUMMARIES };
int cli_files_add(cli_files *f, const char *path, int what, const char *skip);
void cli_files_free(cli_files *f);

/* Diagnose s[0..n) (failed ones included), write the report files and print
 * the text report.  hook, when not NULL, is called with the report and ctx
 * before anything is written (trigger.c adds the "trigger" key there).
 * Fails (one-line error, returns -1) when no worker could be analysed or a
 * file cannot be written. */
typedef void cli_report_hook(pt_report *r, const void *ctx);
int cli_diag_run(const cli_diag *d, pt_summary *const *s, size_t n, cli_report_hook *hook,
		 const void *ctx);

#endif
