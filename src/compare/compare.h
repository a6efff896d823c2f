/*
 * compare.h - comparing two runs of the same job (`perftracker compare`):
 * "why is today's job slower than last week's".
 *
 * Flow: the worker summaries of a BASELINE run and of a NEW run
 * (src/analysis/summary.h) --pt_compare--> a pt_report whose "Compare"
 * section holds each side's step time, the per-class breakdown, the ranked
 * functions that account for the difference (slower, faster, appeared,
 * disappeared) and a waterfall for the PerfDisplay page --> report.json,
 * index.html and the text report (pt_compare_text).  Workers are paired by
 * rank when both sides have unique ranks, else the two sides are compared as
 * populations.  The rule and every key: docs/compare.md.
 */
#ifndef PT_COMPARE_H
#define PT_COMPARE_H

#include <stddef.h>

#include "../analysis/summary.h"
#include "../report/report.h"
#include "../util/error.h"

typedef struct pt_compare_options {
	double min_share;    /* differences below this share of BASELINE's step
	                        time are never findings, whatever the noise (0.005) */
	double noise_k;      /* a function's difference must exceed noise_k x the
	                        larger of the two sides' step-to-step spread of
	                        that function (1.0) */
	double min_rel;      /* and, when both sides ran it, this share of its
	                        larger side (0.05: run-to-run drift of clocks) */
	double unrelated;    /* below this share of time spent in functions both
	                        sides ran, on both sides: "nothing in common" (0.25) */
	size_t max_findings; /* findings kept in report.json (200; 0: all) */
} pt_compare_options;

void pt_compare_options_default(pt_compare_options *o);

/* One side: its summaries (failed ones, error != NULL, are counted and
 * listed but not compared), the path the user gave and what it was
 * ("traces", "summaries" or "report"); path and input may be NULL. */
typedef struct pt_compare_side {
	pt_summary *const *s;
	size_t n;
	const char *path;
	const char *input;
} pt_compare_side;

/* Compare NEW (nw) against BASELINE (base) and build a report whose only
 * top-level key is "Compare".  Both sides need at least one readable
 * summary (else PT_EINVAL naming the side).  The summaries are only read;
 * the report copies what it keeps.  opt NULL means the defaults.  Returns a
 * new report (pt_report_free) or NULL with err filled.  Thread-safe for
 * distinct calls. */
pt_report *pt_compare(const pt_compare_side *base, const pt_compare_side *nw,
		      const pt_compare_options *opt, pt_error *err);

/* The text report of a compare report: the summary sentence first, then
 * both sides' step times, the class table and the findings as numbered
 * sentences (at most max_findings, 0: all).  Nothing for a report without
 * "Compare". */
void pt_compare_text(const pt_report *r, size_t max_findings, pt_sb *out);

#endif
