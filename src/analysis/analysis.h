/*
 * analysis.h - the pieces pt_summary_build is made of, exposed inside the
 * library so that unit tests can check each one: the window, the
 * attribution sweep (priority rule, equal sharing), and the per-thread
 * frame flattening that turns nested CPU/Python frames into exclusive
 * segments owned by the deepest frame.
 *
 * Flow: pt_store -> window.c -> patterns.c (items, frames, keys)
 *       -> attribute.c (owned time) -> summary.c (pt_summary).
 * Internal (not installed).  Thread-safe for distinct arguments.
 */
#ifndef PT_ANALYSIS_H
#define PT_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "../model/store.h"

/* End of [ts, ts+dur), saturating (hostile inputs may hold huge values). */
static inline int64_t pt_end(int64_t ts, int64_t dur)
{
	int64_t e;

	return __builtin_add_overflow(ts, dur, &e) ? INT64_MAX : e;
}

/* ---- window.c ---------------------------------------------------------- */

typedef struct pt_window {
	int64_t start, end;  /* ns, end >= start */
	int from_steps;      /* 1: [min step start, max step end] */
} pt_window;

/* The analysis window of st (docs/design.md "Window"): ProfilerStep spans when
 * st->steps is non-empty, else [min ts, max end] over all events.  An empty
 * store gives start == end == 0. */
void pt_window_find(const pt_store *st, pt_window *w);

/* Does [ts, ts+dur) take part in window w?  Positive-length events must
 * overlap it; zero-length ones must lie inside [start, end]. */
static inline int pt_window_hits(const pt_window *w, int64_t ts, int64_t dur)
{
	if (dur > 0)
		return ts < w->end && pt_end(ts, dur) > w->start;
	return ts >= w->start && ts <= w->end;
}

/* ---- the frame order (critpath.c -> patterns.c) ------------------------ */

/* The kinds patterns.c nests as a thread's frames (keys, exclusive time). */
static inline int pt_frame_nests(int kind)
{
	return kind == PT_K_CPU_OP || kind == PT_K_PYTHON || kind == PT_K_ANNOTATION ||
	       kind == PT_K_CPU_COMM;
}

/* The frames patterns.c nests, in its nest order, as the critical path's
 * index already sorted them (one sort of a thread's frames instead of two;
 * docs/bench.md "The critical path (issue 19)").  fo holds those of
 * positive length on CPU lanes inside the window, lane after lane, each
 * lane's by start, then longest first, pt_kind_nest_rank, file order
 * (lane l's: fo[off[l] .. off[l + 1])); rest the others patterns.c nests
 * (zero length, on a GPU lane or none), in file order, for it to sort and
 * merge in.  ok is 0 when there is none to use (the index failed, or a
 * frame's end saturates: pt_end's clipped length would order it
 * differently). */
typedef struct pt_frame_order {
	uint32_t *fo, *rest;
	int64_t *ts;        /* fo[k]'s start, on lanes that have rest (the merge's) */
	size_t *off;        /* nlanes + 1 entries */
	size_t n, nrest, restcap;
	int ok;
} pt_frame_order;

/* Free what o holds and clear it (patterns.c). */
void pt_frame_order_free(pt_frame_order *o);

/* ---- attribute.c ------------------------------------------------------- */

/* One attributed interval: an event clipped to the window, or one exclusive
 * segment of a CPU frame.  pat indexes the caller's owned[] array. */
typedef struct pt_item {
	int64_t s, e;    /* ns, already clipped to the window, s < e */
	uint32_t pat;
	uint8_t cls;     /* pt_class, PT_C_PYTHON..PT_C_COMPUTE */
	uint8_t kernel;  /* counts towards GPU utilisation (compute/NCCL kernel) */
} pt_item;

typedef struct pt_attr_totals {
	uint64_t class_ns[PT_C_COUNT]; /* time each class is top; sums to the window */
	uint64_t gpu_busy_ns;          /* time with >= 1 kernel item active */
} pt_attr_totals;

/* Run the priority sweep over items[0..n) inside [w0, w1]: adds each item's
 * owned time (ns) to owned[item.pat] and fills tot.  items[0..sorted_from)
 * may be in any order; items[sorted_from..n) must be a concatenation of
 * runs each sorted by start (such as the frame segments of one thread after
 * another), which are merged instead of sorted.  O(n log n) time (radix
 * sort of the unsorted part, a heap merge of the runs, a heap of active
 * items' ends), O(n) memory.  Returns PT_OK or PT_ENOMEM. */
int pt_attr_sweep(const pt_item *items, size_t n, size_t sorted_from, int64_t w0, int64_t w1,
		  double *owned, pt_attr_totals *tot);

/* Presorted runs of items made on demand, so that they need not all be
 * held at once (patterns.c replays each thread's frame nesting rather than
 * storing its 1-2 segments per frame).  next(ctx, run, &chunk) points
 * *chunk at the run's next items, in start order and continuing the run,
 * and returns how many; the chunk stays valid until the next call for the
 * same run.  It returns 0 once the run is done and (size_t)-1 on
 * allocation failure. */
typedef struct pt_item_runs {
	size_t nruns;
	size_t (*next)(void *ctx, size_t run, const pt_item **chunk);
	void *ctx;
} pt_item_runs;

/* The same sweep over items[0..n) in any order plus the runs of *runs
 * (NULL: none), each started in run order.  pt_attr_sweep is this with the
 * non-decreasing stretches of items[sorted_from..n) as runs, so both give
 * bit-identical results for the same items in the same runs. */
int pt_attr_sweep_runs(const pt_item *items, size_t n, const pt_item_runs *runs, int64_t w0,
		       int64_t w1, double *owned, pt_attr_totals *tot);

#endif
