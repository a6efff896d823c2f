/*
 * patterns.h - the core of pt_summary_build: events -> behaviour patterns,
 * class totals and GPU utilisation (patterns.c).  summary.c wraps it with
 * the worker's identity, window and steps.
 * Internal (not installed).  Thread-safe for distinct stores.
 */
#ifndef PT_PATTERNS_H
#define PT_PATTERNS_H

#include "analysis.h"
#include "summary.h"

/* Fill out->patterns, npatterns, class_ms and gpu_util from st inside window
 * w.  out->patterns must be NULL on entry; on failure what was filled is
 * left for pt_summary_free.  Returns PT_OK or PT_ENOMEM with err filled. */
int pt_patterns_build(const pt_store *st, const pt_window *w, const pt_summary_options *opt,
		      pt_summary *out, pt_error *err);

struct pt_coll_build;
/* The same, also filling out's collective instances from coll (found by
 * pt_coll_find beforehand; NULL: none), with the time each function took
 * in the span before each arrival (collectives.h); fr: the frames in nest
 * order as pt_cpath_build found them (NULL, or fr->ok 0: sorted here),
 * whose arrays it may take (fr stays the caller's to free). */
int pt_patterns_build_coll(const pt_store *st, const pt_window *w, const pt_summary_options *opt,
			   struct pt_coll_build *coll, pt_frame_order *fr, pt_summary *out,
			   pt_error *err);

#endif
