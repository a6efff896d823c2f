/*
 * timeline.h - every worker on one clock, the diagnosis marked: the model
 * the diagnosis leaves with its report, and its two writers.
 *
 * Flow: src/diagnose/timeline.c fills a pt_timeline from the lockstep
 * analysis (clock offsets, matched collective instances, last arrivers),
 * the slow steps and the findings, and hands it to the report
 * (pt_report_set_timeline) --> report.json's "timeline" key, what the
 * page's Timeline view draws (pt_timeline_add_key, timeline.c) and
 * PerfDisplay/timeline.json.gz in the Trace Event Format that Perfetto
 * and chrome://tracing open (pt_timeline_write, timeline_trace.c).
 * Definitions, bounds and keys: docs/display.md "The timeline".
 */
#ifndef PT_TIMELINE_H
#define PT_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "report.h"
#include "../analysis/summary.h"
#include "../model/store.h"
#include "../util/error.h"
#include "../util/api.h"

PT_API_BEGIN

#define PT_TL_NONE UINT32_MAX
/* A wait, or a late arrival past the median member, shorter than this is
 * not drawn (µs), in the page's key and in the file alike. */
#define PT_TL_MIN_WAIT_US 50.0

typedef struct pt_tl_worker {
	const pt_summary *s;      /* borrowed: the summary that was diagnosed */
	const char *id;           /* worker id as report.json writes it (report arena) */
	double shift_us;          /* job clock = shift_us + µs after its own window start */
	int aligned;              /* placed by the lockstep clock offset (else window start 0) */
	int straggler;            /* the Lockstep section names it */
	unsigned char *slow;      /* per step of s: 1 when slow (steps.c); NULL none; owned */
} pt_tl_worker;

typedef struct pt_tl_inst {
	const char *name, *chan;  /* borrowed from the reference worker's summary */
	uint32_t last;            /* the last arriver (index into w), PT_TL_NONE when the
	                             instance was left out (its ends disagree) */
	double saved_us;          /* how much later it came than the median member or
	                             the second last */
} pt_tl_inst;

/* A finding as the timeline marks it. */
typedef struct pt_tl_finding {
	size_t index;             /* in the report's findings (rank - 1) */
	uint32_t *w;              /* the workers it is about (indices into w), owned */
	size_t nw;
	int64_t *steps;           /* the step numbers it is about (its slow steps), owned */
	size_t nsteps;
} pt_tl_finding;

typedef struct pt_timeline {
	pt_tl_worker *w;          /* the workers that ran, by rank then id */
	size_t nw;
	size_t ref;               /* the reference worker (index into w), 0 without lockstep */
	pt_tl_inst *inst;         /* matched instances, per channel in order */
	size_t ninst;
	uint32_t *own;            /* [i * nw + k]: worker k's own instance (index into its
	                             summary's coll), PT_TL_NONE: not a member */
	pt_tl_finding *f;
	size_t nf;
	uint32_t *by_worker;      /* indices into w by summary worker name, then index
	                             (pt_timeline_index, pt_tl_find_worker) */
} pt_timeline;

/* A new empty model with room for nw workers (calloc'd), or NULL. */
pt_timeline *pt_timeline_new(size_t nw);
void pt_timeline_free(pt_timeline *t);
/* Sort t->w's indices by their summaries' worker name, once w and nw are
 * set, for pt_tl_find_worker.  0, or -1 out of memory. */
int pt_timeline_index(pt_timeline *t);
/* The workers whose summary's worker is name (a raw trace's file name,
 * pt_summary_worker_name): *n of them, at t->by_worker[ret .. ret + *n),
 * in index order; *n 0 when none (or t is not indexed).  O(log nw). */
size_t pt_tl_find_worker(const pt_timeline *t, const char *name, size_t *n);  /* NULL is a no-op */

/* The report takes t (freed with it; a previous one is freed).  The model
 * borrows the summaries given to pt_diagnose: write the file before they
 * are freed. */
void pt_report_set_timeline(pt_report *r, pt_timeline *t);
/* The report's model, or NULL (reports without lockstep still have one). */
const pt_timeline *pt_report_timeline(const pt_report *r);

/* A summary's steps as the timeline counts them: its ProfilerSteps, or
 * the window as one step (number -1) when it has none.  Span k in µs after
 * the worker's window start (the critical path's starts when the summary
 * has them, else the step times added up). */
size_t pt_tl_nsteps(const pt_summary *s);
int64_t pt_tl_step_number(const pt_summary *s, size_t k);
void pt_tl_step_span(const pt_summary *s, size_t k, double *start_us, double *end_us);

/* "rank N (host)", "rank N" or the worker id, into buf (cap bytes). */
const char *pt_tl_label(const pt_tl_worker *w, char *buf, size_t cap);

/* The median of instance i's members' arrivals on the job clock (µs;
 * NAN without members); tmp: scratch of t->nw doubles; *n (may be NULL)
 * the members. */
double pt_tl_median_arrival(const pt_timeline *t, size_t i, double *tmp, size_t *n);

/* Add report.json's "timeline" key (the page's view) to r's root, within
 * the bound of docs/display.md (100,000 entries).  Out of memory: the
 * report's oom is set. */
void pt_timeline_add_key(pt_report *r);

/* One worker's raw events for the file: its trace read into a store,
 * matched to the worker whose summary's worker is id.  Borrowed. */
typedef struct pt_tl_raw {
	const char *id;           /* the trace's file name (pt_summary.worker) */
	const pt_store *st;
} pt_tl_raw;

typedef struct pt_tl_write_options {
	size_t max_raw_events;    /* raw events kept in all, over every worker
	                             (0: 2,000,000; docs/display.md) */
	const char *generator;    /* "perftracker X.Y", NULL: none */
} pt_tl_write_options;

/* Write the Trace Event Format file for r's model (and raw[0..nraw), NULL
 * for none) to path, gzip-compressed, atomically (a temporary renamed).
 * opt NULL: defaults.  PT_EINVAL when r has no model, PT_EIO, PT_ENOMEM;
 * err's subject is path.  Not thread-safe for one report.  The same file
 * as pt_tlw_new, pt_tlw_add_raw for each raw[i], pt_tlw_finish. */
int pt_timeline_write(const pt_report *r, const pt_tl_raw *raw, size_t nraw,
		      const pt_tl_write_options *opt, const char *path, pt_error *err);

/* The file in steps, so that a raw trace's store can be freed as soon as
 * its events are in: the memory is the slices kept, not every store (8
 * traces of 200 MB: docs/bench.md).  One writer, one thread at a time;
 * r must outlive it.
 *
 * pt_tlw_new: the model's slices made.  ids[0..nids) are the file names of
 * the raw traces that will be added (NULL entries skipped): each that
 * names a worker gets an equal share of opt->max_raw_events.  opt is
 * copied (NULL: defaults).  NULL on error: PT_EINVAL when r has no model,
 * PT_ENOMEM.
 * pt_tlw_add_raw: st's events for the worker whose summary's worker is id
 * (none such, or st NULL: nothing), compacted to its share; st is only
 * read and may be freed after.  PT_OK or PT_ENOMEM (w is still freed by
 * pt_tlw_free or pt_tlw_finish).
 * pt_tlw_finish: write path as pt_timeline_write does; frees w, whatever
 * the result.
 * pt_tlw_free: free w without writing; NULL is a no-op. */
typedef struct pt_tlw pt_tlw;
pt_tlw *pt_tlw_new(const pt_report *r, const char *const *ids, size_t nids,
		   const pt_tl_write_options *opt, pt_error *err);
int pt_tlw_add_raw(pt_tlw *w, const char *id, const pt_store *st);
int pt_tlw_finish(pt_tlw *w, const char *path, pt_error *err);
void pt_tlw_free(pt_tlw *w);

PT_API_END

#endif
