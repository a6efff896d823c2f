/*
 * diagnose.h - what the diagnosing commands (diagnose, analyze, compare,
 * the trigger) share: the diagnosis options on the command line and a
 * small pthread pool (src/cli/diagnose.c); finding the input files and the
 * final step, diagnose, write DIR/PerfDisplay and print the text report
 * (src/cli/common.c, around src/trace/inputs.h and pipeline.h).
 */
#ifndef PT_CLI_DIAGNOSE_H
#define PT_CLI_DIAGNOSE_H

#include <stddef.h>

#include "analysis/summary.h"
#include "diagnose/diagnose.h"
#include "trace/inputs.h"
#include "diagnose/pipeline.h"
#include "util/opts.h"

typedef struct cli_diag {
	pt_diag_options opt;
	const char *outdir;    /* -o DIR, NULL: text report only */
	long jobs;             /* --jobs, 0: online CPUs */
	size_t max_findings;   /* findings printed in the text report (0: all,
	                          SIZE_MAX: the format's default) */
	int format;            /* CLI_FMT_TEXT (for people) or CLI_FMT_JSON (seed) */
	int json;              /* --json: the whole report.json document on stdout */
	size_t width;          /* --width: line width of the text report (0: 120) */
	int quiet;             /* no text report on stdout */
	int time;              /* print phase times on stderr */
	char *const *raw;      /* raw traces whose events go into the timeline */
	size_t nraw;
	int no_timeline;       /* --no-timeline: no PerfDisplay/timeline.json.gz */
	long max_raw_mb;       /* --max-raw-mb: raw trace MB read for it (-1: the
	                          default, 0: all) */
	int digests;           /* --digests: CLI_DIGESTS_* */
} cli_diag;

enum { CLI_DIGESTS_AUTO, CLI_DIGESTS_ALWAYS, CLI_DIGESTS_NEVER };

enum { CLI_FMT_TEXT, CLI_FMT_JSON };

void cli_diag_init(cli_diag *d);
/* After pt_pipeline_timeline: one line on stderr when raw traces were
 * left out for max_raw_bytes, naming how to add them (run_dir: the
 * folder `perftracker timeline` takes). */
void cli_raw_note(const pt_pipeline_result *res, const char *run_dir);
/* The diagnosis options as option tables (util/opts.h) for PT_OPT_INCLUDE
 * with a cli_diag *: -o DIR (not the trigger's: its run folder is the
 * output); --no-timeline (analyze, diagnose, the trigger); --max-raw-mb
 * (cli_diag_raw_opts: analyze, the trigger, timeline); -j, -q, --time
 * (compare's and timeline's too); the thresholds (cli_diag_opts; timeline's
 * too) and the text report's form (cli_diag_text_opts: analyze, diagnose,
 * the trigger). */
extern const pt_opt cli_diag_output_opts[];
extern const pt_opt cli_diag_timeline_opts[];
extern const pt_opt cli_diag_raw_opts[];
extern const pt_opt cli_diag_run_opts[];
extern const pt_opt cli_diag_digest_opts[];
extern const pt_opt cli_diag_opts[];
extern const pt_opt cli_diag_text_opts[];

/* Input files (src/trace/inputs.h): a path as given, or a folder
 * searched recursively (hidden entries, folders named PerfDisplay and the
 * folder `skip` left out) for traces (*.json, *.json.gz, *.sqlite, not
 * *.summary.json) or summaries (*.json), sorted per folder.  0, or -1
 * after printing a one-line error. */
typedef pt_inputs cli_files;
enum { CLI_TRACES = PT_INPUTS_TRACES, CLI_SUMMARIES = PT_INPUTS_SUMMARIES };
int cli_files_add(cli_files *f, const char *path, int what, const char *skip);
/* After the last cli_files_add: one error when nothing was found (naming
 * the empty folders, or "no ... given") and -1; else a warning per empty
 * folder and 0.  cmd names the subcommand in the message. */
int cli_files_done(const cli_files *f, const char *cmd, int what);
/* argv[1..npos] (the positional arguments) added as files of kind what,
 * then cli_files_done.  -1 after the error. */
int cli_files_args(cli_files *f, char **argv, int npos, const char *cmd, int what);
/* --time: the read and the two phases of pt_pipeline_read, on stderr. */
void cli_read_times(const pt_pipeline_summaries *set);
void cli_files_free(cli_files *f);

/* The library's pipeline options for d: its diagnosis options, output
 * folder (written with pt_report_write_dir), threads (pt_pool_for) and
 * text report. */
void cli_pipeline_options(const cli_diag *d, pt_pipeline_options *o);

/* Diagnose s[0..n) (failed ones included), write the report files and print
 * the text report (pt_pipeline_report).  hook, when not NULL, is called
 * with the report and ctx before anything is written (trigger.c adds the
 * "trigger" key there).  Fails (one-line error, returns -1) when no worker
 * could be analysed or a file cannot be written. */
int cli_report(const cli_diag *d, pt_summary *const *s, size_t n, pt_pipeline_hook_fn *hook,
	       const void *ctx);

#endif
