/*
 * diagnose.c - `perftracker diagnose SUMMARY... -o DIR`: read worker
 * summaries in parallel, compare the workers, write DIR/PerfDisplay/
 * (report.json, the PerfDisplay page index.html, app.py), print the text
 * report; the work is src/diagnose/pipeline.c's.  Runs on the master; also
 * holds the diagnosis options and the thread pool the other diagnosing
 * commands share (diagnose.h).
 * An unreadable summary is one warning line and a failed worker in the
 * report; no readable worker at all is an error.
 */

#include "cli.h"
#include "diagnose.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Shared by analyze, diagnose, the trigger (and compare: -o, -j, -q, --time). */
const pt_opt cli_diag_output_opts[] = {
	PT_OPT_STRING('o', "output", PT_AT(cli_diag, outdir), "DIR",
		      "write DIR/PerfDisplay/ (report.json, index.html, app.py,\n"
		      "timeline.json.gz with analyze, diagnose and trigger)"),
	PT_OPT_END(),
};

/* Shared by analyze, diagnose and the trigger (docs/display.md "The timeline"). */
const pt_opt cli_diag_timeline_opts[] = {
	PT_OPT_FLAG(0, "no-timeline", PT_AT(cli_diag, no_timeline),
		    "do not write DIR/PerfDisplay/timeline.json.gz"),
	PT_OPT_END(),
};

/* Shared by analyze, the trigger and timeline: the commands with raw traces. */
const pt_opt cli_diag_raw_opts[] = {
	PT_OPT_INT_RANGE(0, "max-raw-mb", PT_AT(cli_diag, max_raw_mb), "N", 0, 1000000000,
			 "raw traces read for the timeline, in MB (2000; 0: all); the\n"
			 "workers the findings name first"),
	PT_OPT_END(),
};

const pt_opt cli_diag_run_opts[] = {
	PT_OPT_INT('j', "jobs", PT_AT(cli_diag, jobs), "N",
		   "threads reading/summarising files (default: online CPUs)"),
	PT_OPT_FLAG('q', "quiet", PT_AT(cli_diag, quiet), "do not print the text report"),
	PT_OPT_FLAG(0, "time", PT_AT(cli_diag, time), "print the time of each phase on stderr"),
	PT_OPT_END(),
};

/* --digests stores the index of the word: CLI_DIGESTS_*. */
static const char *const digest_words[] = { "auto", "always", "never", NULL };

/* Shared by diagnose and the trigger: the commands that read summaries. */
const pt_opt cli_diag_digest_opts[] = {
	PT_OPT_CHOICE(0, "digests", PT_AT(cli_diag, digests), "WHEN", digest_words,
		      "read each summary's digest first, then the full summaries of the\n"
		      "workers the digests single out: auto (from 1000 workers),\n"
		      "always, never"),
	PT_OPT_END(),
};

/* --format stores the index of the word: CLI_FMT_*. */
static const char *const formats[] = { "text", "json", NULL };
_Static_assert(CLI_FMT_TEXT == 0 && CLI_FMT_JSON == 1, "formats[] follows CLI_FMT_*");

const pt_opt cli_diag_opts[] = {  /* the thresholds */
	PT_OPT_DOUBLE(0, "z", PT_AT(cli_diag, opt.z), "Z",
		      "robust z-score above which a worker is an outlier (3.5)"),
	PT_OPT_DOUBLE(0, "rel", PT_AT(cli_diag, opt.rel), "R",
		      "and relative deviation above R (0.2 = 20%)"),
	PT_OPT_DOUBLE(0, "min-impact", PT_AT(cli_diag, opt.min_impact), "F",
		      "and time lost above F of the worker's window (0.005)"),
	PT_OPT_DOUBLE(0, "mad-floor", PT_AT(cli_diag, opt.mad_floor), "F",
		      "MAD is at least F x |median| (0.01)"),
	PT_OPT_DOUBLE(0, "memop-threshold", PT_AT(cli_diag, opt.memop_threshold), "R",
		      "memory ops above this bottleneck ratio are candidates (0.01)"),
	PT_OPT_DOUBLE(0, "runtime-threshold", PT_AT(cli_diag, opt.runtime_threshold), "R",
		      "CUDA runtime calls: same (0.01)"),
	PT_OPT_DOUBLE(0, "python-threshold", PT_AT(cli_diag, opt.python_threshold), "R",
		      "Python stacks above this ratio are listed (0.01)"),
	PT_OPT_DOUBLE(0, "python-min-impact", PT_AT(cli_diag, opt.python_min_impact), "F",
		      "Python findings need time lost above F of the window (0.02)"),
	PT_OPT_INT(0, "top-kernels", PT_AT(cli_diag, opt.top_kernels), "N",
		   "entries in \"major_kernel_executions\" (5)"),
	PT_OPT_INT(0, "loo-below", PT_AT(cli_diag, opt.loo_below), "N",
		   "leave-one-out statistics below N workers (8)"),
	PT_OPT_FLAG(0, "fixed-only", PT_AT(cli_diag, opt.fixed_only),
		    "abnormal_workers by the fixed threshold alone (seed rule)"),
	PT_OPT_DOUBLE(0, "p2p-slow", PT_AT(cli_diag, opt.p2p_slow), "X",
		      "p2p: a destination, source or pair X times slower than the\n"
		      "others' median bandwidth is a finding (2)"),
	PT_OPT_DOUBLE(0, "comm-bound", PT_AT(cli_diag, opt.comm_bound), "F",
		      "a worker whose communication not overlapped with compute is\n"
		      "at least F of its GPU busy time, and more than compute, is\n"
		      "communication-bound (0.5)"),
	PT_OPT_END(),
};

const pt_opt cli_diag_text_opts[] = {
	PT_OPT_INT(0, "max-findings", PT_AT(cli_diag, max_findings), "N",
		   "findings printed in the text report (10, json: 50; 0 = all)"),
	PT_OPT_CHOICE(0, "format", PT_AT(cli_diag, format), "text|json", formats,
		      "text: summary, findings, tables (default); json: the seed's\n"
		      "section-by-section JSON text"),
	PT_OPT_FLAG(0, "json", PT_AT(cli_diag, json),
		    "print the whole report.json document instead of the text"),
	PT_OPT_INT_RANGE(0, "width", PT_AT(cli_diag, width), "N", 40, 0,
			 "text report line width (120)"),
	PT_OPT_END(),
};

static const cli_usage usage = {
	"diagnose",
	"perftracker diagnose SUMMARY... [-o DIR] [options]",
	"Compare worker summaries (written by 'perftracker summarize'; a folder means every\n"
	"*.json under it) and report the slow workers and the functions to blame\n"
	"(docs/diagnose.md).\n",
	NULL,
};

void cli_diag_init(cli_diag *d)
{
	memset(d, 0, sizeof(*d));
	pt_diag_options_default(&d->opt);
	d->max_findings = SIZE_MAX;
	d->max_raw_mb = -1;
}

/* ---- perftracker diagnose ------------------------------------------------ */

int cmd_diagnose(int argc, char **argv)
{
	cli_diag d;
	cli_files l = {0};
	pt_pipeline_options o;
	pt_pipeline_summaries set = {0};
	pt_error e;
	size_t i;
	int rc = -1, k, npos;
	const pt_opt opts[] = {
		PT_OPT_INCLUDE(cli_diag_output_opts, &d, NULL),
		PT_OPT_INCLUDE(cli_diag_timeline_opts, &d, NULL),
		PT_OPT_INCLUDE(cli_diag_run_opts, &d, NULL),
		PT_OPT_INCLUDE(cli_diag_digest_opts, &d, NULL),
		PT_OPT_INCLUDE(cli_diag_opts, &d, NULL),
		PT_OPT_INCLUDE(cli_diag_text_opts, &d, NULL),
		PT_OPT_END(),
	};

	cli_diag_init(&d);
	npos = cli_parse_options(&usage, opts, argc, argv);
	if (npos < 0)
		return npos == CLI_HELP ? 0 : -1;
	if (cli_files_args(&l, argv, npos, "diagnose", CLI_SUMMARIES))
		goto out;
	cli_pipeline_options(&d, &o);
	pt_error_clear(&e);
	k = pt_pipeline_read(l.v, l.n, &o, &set, &e);
	if (d.time)
		cli_read_times(&set);
	if (k) {
		error_pt(&e);
		goto out;
	}
	for (i = 0; i < set.n; i++) {
		if (set.msg[i])
			warning("'%s': %s", l.v[i], set.msg[i]);
		else if (set.s[i]->error)
			warning("'%s': worker '%s' was not analysed: %s", l.v[i],
				set.s[i]->worker ? set.s[i]->worker : "", set.s[i]->error);
	}
	rc = cli_report(&d, set.s, set.n, NULL, NULL);
out:
	pt_pipeline_summaries_free(&set);
	cli_files_free(&l);
	return rc;
}
