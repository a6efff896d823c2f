/*
 * spans.h - the summary's "timeline" member (version 4): what the master's
 * timeline draws of one worker without its raw trace (docs/summary.md
 * "timeline", docs/display.md "The timeline").
 *
 * Flow: pt_store --pt_spans_build--> pt_summary.tl --pt_spans_write /
 * pt_spans_parse--> summary JSON --> src/diagnose/timeline.c and the
 * report's "timeline" key.  Per step, the main thread's top-level spans
 * (the children of its ProfilerStep, 1% of the step or longer, the 8
 * longest) and when a compute kernel ran (gaps under 0.5% of the step
 * closed, at most 16 stretches per step).  One pass over the events, no
 * sort of them.
 */
#ifndef PT_SPANS_H
#define PT_SPANS_H

#include "analysis.h"
#include "summary.h"

/* Fill s->tl from st (steps: the window's steps sorted by start, as the
 * summary numbers them; n 0 for a window without steps).  PT_OK or
 * PT_ENOMEM (err filled). */
int pt_spans_build(const pt_store *st, const pt_window *w, const pt_step *steps, size_t n,
		   pt_summary *s, pt_error *err);
/* Append `{"names":[...],"spans":[...],"gpu":[...]}`. */
void pt_spans_write(const pt_summary *s, pt_sb *out);
/* Parse that object into s->tl; PT_EFORMAT / PT_EPARSE / PT_ENOMEM with
 * err filled (nothing kept on error). */
int pt_spans_parse(const char *buf, size_t len, pt_summary *s, pt_error *err);
void pt_spans_free(pt_sum_tl *tl);  /* NULL is a no-op */

#endif
