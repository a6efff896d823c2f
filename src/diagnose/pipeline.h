/*
 * pipeline.h - the master's path from worker summaries to a written
 * report, shared by `diagnose`, `analyze` and the trigger: read the
 * summaries (in parallel, pattern keys shared), diagnose them
 * (pt_diagnose), write DIR/PerfDisplay/ and render the text report.
 *
 * Flow: inputs.c (which files) -> pt_pipeline_read (summaries) ->
 * pt_pipeline_report (pt_report, files written, text in a buffer).  The
 * caller prints the text and the per-file warnings; nothing here prints.
 * The report files are written by a function the caller passes (the page
 * writer lives with the display, outside this library), and reading in
 * parallel uses the caller's parallel-for (none: one thread).
 */
#ifndef PT_PIPELINE_H
#define PT_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "../analysis/summary.h"
#include "../analysis/summary_parse.h"
#include "../report/report.h"
#include "../util/error.h"
#include "../util/strbuf.h"
#include "diagnose.h"

/* Run fn(ctx, i) for i in [0, n) on up to jobs threads; fn is thread-safe
 * across different i. */
typedef void pt_pipeline_parallel_fn(size_t n, long jobs, void (*fn)(void *ctx, size_t i),
				     void *ctx);
/* Write the report's files to dir (pt_report_write_dir's contract). */
typedef int pt_pipeline_write_fn(const pt_report *r, const char *dir, pt_error *err);
/* Called with the report before anything is written (the trigger adds its
 * "trigger" key there). */
typedef void pt_pipeline_hook_fn(pt_report *r, const void *ctx);

enum {
	PT_PIPELINE_TEXT,       /* the text report for people (pt_report_text_people) */
	PT_PIPELINE_SEED_JSON,  /* the seed's section-by-section text (--format json) */
	PT_PIPELINE_REPORT,     /* the whole report.json document (--json) */
	PT_PIPELINE_NONE        /* no text (--quiet) */
};

typedef struct pt_pipeline_options {
	pt_diag_options diag;
	const char *outdir;            /* write outdir/PerfDisplay/ (NULL: no files) */
	pt_pipeline_write_fn *write_dir; /* needed with outdir */
	pt_pipeline_parallel_fn *parallel; /* NULL: read on this thread */
	long jobs;                     /* threads for parallel (0: its default) */
	int text;                      /* PT_PIPELINE_* */
	size_t max_findings;           /* findings in the text (0: all; SIZE_MAX: the
	                                  format's default, 10 or 50) */
	size_t width;                  /* text line width (0: 120) */
	pt_pipeline_hook_fn *hook;     /* NULL: none */
	const void *hook_ctx;
	/* With outdir: outdir/PerfDisplay/timeline.json.gz (docs/display.md
	 * "The timeline"), with the events of the raw traces raw[0..nraw)
	 * (a trace goes to the worker whose id is its file name; one that
	 * cannot be read is left out, as its warning in the result says). */
	int timeline;                  /* 1: write it (the default) */
	char *const *raw;
	size_t nraw;
	size_t max_raw_events;         /* 0: the default bound */
	/* Raw trace bytes read for it (0: PT_PIPELINE_RAW_BYTES, UINT64_MAX:
	 * all).  Over the bound, the traces of the workers the findings name
	 * come first, then the stragglers, the reference worker, the rest by
	 * rank; a trace is taken while the bytes fit (the first always).  The
	 * master reads them on the report's critical path: 1,000 traces of
	 * 200 MB would be minutes. */
	uint64_t max_raw_bytes;
	const char *generator;         /* "perftracker X.Y" for the file, NULL none */
	/* Two phases (docs/diagnose.md "Two phases"): with at least this many
	 * inputs, pt_pipeline_read reads each summary's digest where one lies
	 * beside it, and pt_pipeline_focus the full summaries of the workers
	 * the digests single out.  0: always; SIZE_MAX: never (every summary
	 * in full).  Default PT_PIPELINE_DIGEST_MIN. */
	size_t digest_min;
} pt_pipeline_options;

#define PT_PIPELINE_DIGEST_MIN 1000
/* Full summaries read before the first phase: every (digests / this)-th
 * worker (docs/diagnose.md "Two phases"). */
#define PT_PIPELINE_SAMPLE 256

#define PT_PIPELINE_RAW_BYTES 2000000000ULL

/* The defaults: pt_diag_options_default, text for people, no files. */
void pt_pipeline_options_default(pt_pipeline_options *o);

/* Summaries read from files: s[i] for paths[i], never NULL (an unreadable
 * file is a failed summary, pt_summary_failed, and msg[i] says why,
 * without the path); free with pt_pipeline_summaries_free. */
typedef struct pt_pipeline_summaries {
	pt_summary **s;
	char **msg;                /* per input: the problem, or NULL */
	size_t n;
	pt_summary_keys *keys;     /* pattern keys shared by all of them: 10,000
	                              DLRM summaries hold 377 distinct keys; held
	                              in memory they take 430 MB instead of
	                              1,040 MB */
	double seconds;            /* wall time of the read */
	/* Two phases: full[i] the summary path when s[i] is its digest
	 * (owned), NULL otherwise; how many are digests; what
	 * pt_pipeline_focus did. */
	char **full;
	size_t ndigest;
	size_t nsample;            /* full summaries read before the first phase */
	size_t nsuspect;           /* workers the first phase singled out */
	size_t nfull_read;         /* their full summaries read in the second */
	size_t nkeys_open;         /* digest keys no full summary named */
	double focus_seconds;      /* first-phase diagnosis + second-phase read */
} pt_pipeline_summaries;

/* Read paths[0..n).  PT_ENOMEM (what was read is still in *out, to free);
 * a file that cannot be read is no error. */
int pt_pipeline_read(char *const *paths, size_t n, const pt_pipeline_options *o,
		     pt_pipeline_summaries *out, pt_error *err);
void pt_pipeline_summaries_free(pt_pipeline_summaries *set);  /* zeroed is fine */

/* The second phase, when set holds digests: read a sample of the full
 * summaries (PT_PIPELINE_SAMPLE), diagnose the set (pt_diag_options.suspect),
 * read the full summaries of the workers it
 * singles out in their place (in parallel), and give the digests' hashed
 * pattern keys the text the full summaries name.  A full summary that
 * cannot be read leaves its digest (msg[i] says why).  PT_ENOMEM, the
 * errors of pt_diagnose; nothing to do is PT_OK. */
int pt_pipeline_focus(const pt_pipeline_options *o, pt_pipeline_summaries *set, pt_error *err);

/* What pt_pipeline_report made: the text report (free with pt_sb_free),
 * and its times. */
typedef struct pt_pipeline_result {
	pt_sb text;
	double diagnose_wall, diagnose_cpu;  /* seconds (CPU: this thread's) */
	double write_seconds;                /* files written, text rendered */
	double timeline_seconds;             /* timeline.json.gz (raw traces read) */
	char *warning;                       /* a raw trace left out of the timeline,
	                                        NULL none; free with free() */
	size_t raw_used, raw_named;          /* raw traces read for the timeline, of
	                                        those that name a worker */
	uint64_t raw_used_bytes, raw_named_bytes;
} pt_pipeline_result;

/* Diagnose s[0..n) (failed ones included), call the hook, write the
 * report's files to o->outdir (and the timeline: one it cannot write is
 * res->warning, not an error), render the text.  PT_EINVAL "no worker
 * could be analysed (N inputs, all unreadable)" when none can be; the
 * errors of pt_diagnose and of the writer; PT_ENOMEM "out of memory
 * writing the text report".  res->text and res->warning are the caller's
 * to free either way. */
int pt_pipeline_report(const pt_pipeline_options *o, pt_summary *const *s, size_t n,
		       pt_pipeline_result *res, pt_error *err);

/* Write o->outdir/PerfDisplay/timeline.json.gz for rep (made by
 * pt_diagnose) with the events of o->raw[0..nraw), read on o->parallel's
 * threads a batch of o->jobs at a time, each store freed once added (so
 * memory holds one batch, not every trace), within o->max_raw_bytes (a
 * trace whose file name is no worker's is not read); res->timeline_seconds,
 * res->raw_* and res->warning (the first raw trace that could not be
 * read) are set, nothing else of res is touched.  The errors of pt_timeline_write and of the folder's
 * creation. */
int pt_pipeline_timeline(const pt_pipeline_options *o, const pt_report *rep,
			 pt_pipeline_result *res, pt_error *err);

#endif
