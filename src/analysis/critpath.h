/*
 * critpath.h - the critical path of each step of one worker (docs/design.md
 * "The critical path", docs/summary.md "Critical path"): why each step takes
 * as long as it does, as a split by kind, the functions on the path and the
 * waits of the threads that blocked.
 *
 * Flow: pt_store + window + collective instances --pt_cpath_build-->
 *       pt_cpath (pt_summary.cpath) --pt_cpath_write / pt_cpath_parse-->
 *       summary "critical_path" --> src/diagnose (Steps findings, the
 *       "Critical path" section).
 * Internal (not installed).  Thread-safe for distinct arguments.
 */
#ifndef PT_CRITPATH_H
#define PT_CRITPATH_H

#include <stddef.h>
#include <stdint.h>

#include "analysis.h"
#include "summary.h"
#include "../util/error.h"
#include "../util/strbuf.h"

struct pt_coll_build;

/* Steps walked per summary, at most (the first ones in time order); the
 * walk of a step costs O(P log N) for P segments on its path. */
#define PT_CP_STEPS_MAX 2000

/* The critical path of every step of st (window w; coll: the instances
 * pt_coll_find found, may be NULL) into s->cpath (NULL when st has no
 * CPU frames or GPU events in the window).  fr (zeroed by the caller;
 * NULL: not wanted) gets the frames patterns.c nests in its order, from
 * the walk's index (analysis.h), for pt_patterns_build_coll; the caller
 * frees it with pt_frame_order_free.  The store is read only.  PT_OK or
 * PT_ENOMEM (err filled). */
int pt_cpath_build(const pt_store *st, const pt_window *w, const struct pt_coll_build *coll,
		   pt_frame_order *fr, pt_summary *s, pt_error *err);

/* The value of the "critical_path" member (critpath_format.c; the writer
 * leaves the member out when s->cpath is NULL). */
void pt_cpath_write(const pt_summary *s, pt_sb *out);

/* Parse the "critical_path" value buf[0..len) into s->cpath (which must be
 * NULL).  PT_OK, or PT_EFORMAT/PT_EPARSE/PT_ENOMEM with err filled (offset
 * relative to buf). */
int pt_cpath_parse(const char *buf, size_t len, pt_summary *s, pt_error *err);

/* Free a path and everything it owns (NULL is a no-op). */
void pt_cpath_free(pt_cpath *cp);

#endif
