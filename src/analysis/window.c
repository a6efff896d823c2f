/*
 * window.c - the analysis window of one worker (docs/design.md "Window"):
 * the ProfilerStep#N spans when the trace has them, else the span of all
 * timed events.  First step of pt_summary_build; every ratio divides by it.
 */
#include "analysis.h"

void pt_window_find(const pt_store *st, pt_window *w)
{
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	size_t i;

	w->from_steps = st->nsteps > 0;
	if (w->from_steps) {
		for (i = 0; i < st->nsteps; i++) {
			if (st->steps[i].ts < lo)
				lo = st->steps[i].ts;
			if (pt_end(st->steps[i].ts, st->steps[i].dur) > hi)
				hi = pt_end(st->steps[i].ts, st->steps[i].dur);
		}
	} else {
		for (i = 0; i < st->n; i++) {
			if (st->ev[i].ts < lo)
				lo = st->ev[i].ts;
			if (pt_end(st->ev[i].ts, st->ev[i].dur) > hi)
				hi = pt_end(st->ev[i].ts, st->ev[i].dur);
		}
	}
	if (lo > hi) /* no steps and no events */
		lo = hi = 0;
	w->start = lo;
	w->end = hi;
}
