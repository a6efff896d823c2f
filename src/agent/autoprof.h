/*
 * autoprof.h - automatic profiling on slowdown (`perftracker agent
 * --auto-profile`, opt-in).  Flow: collectors' heartbeats (step count, time
 * it last moved) --> per worker of this node, the mean step time of the
 * last N iterations and the best such window since the last trigger -->
 * "profile now" when the current one is slower by more than a fraction and
 * the cool-down has passed --> the CLI starts `perftracker --trigger-on
 * --auto-analyze --reason "..."` (the report says why; docs/hang.md).
 * Library code: never prints, starts no process; one object per thread.
 */
#ifndef PT_AUTOPROF_H
#define PT_AUTOPROF_H

#include <stddef.h>
#include <stdint.h>

typedef struct pt_autoprof_options {
	int64_t window;     /* N: iterations per window (50) */
	double slowdown;    /* trigger when current > best x (1 + slowdown) (0.3) */
	double cooldown;    /* seconds after any trigger before the next (600) */
	double min_span;    /* a window spans at least this many seconds (more
			       than N iterations when steps are short), so that
			       the heartbeat's timing resolution (the collector's
			       250 ms poll) stays below 10% (2.5) */
	double watch_defer; /* where the watch reads this node's collectives,
			       a step-time slowdown with no straggler named
			       waits this long for the watch to name one
			       (a lockstep job slows on every rank alike; the
			       watch tells which rank) before it profiles (30) */
} pt_autoprof_options;

void pt_autoprof_options_default(pt_autoprof_options *o);

typedef struct pt_autoprof pt_autoprof;
struct pt_watch_rank;  /* src/watch/watch.h */

/* NULL on allocation failure. */
pt_autoprof *pt_autoprof_new(const pt_autoprof_options *o);
void pt_autoprof_free(pt_autoprof *ap);  /* NULL is a no-op */

/* Feed one observation of a worker: its step count and the time the count
 * reached it (the heartbeat's step_time).  Observations that repeat the
 * last step are ignored.  Returns the current window's mean step time in
 * seconds, or 0 when the window is not complete yet. */
double pt_autoprof_feed(pt_autoprof *ap, const char *wid, int64_t step, double step_time);

/* A trigger was seen (started by us, another agent or a person) at time
 * `created`: every baseline starts again (the slowdown that caused it must
 * not cause another one, and a profiling window slows steps), and the
 * cool-down runs from `created`.  Older or repeated times are ignored. */
void pt_autoprof_trigger_seen(pt_autoprof *ap, double created);

/* Is a worker slowed down?  1 with reason (cap bytes, NUL-terminated)
 * naming the worker, both windows and the threshold, when a worker's
 * current window is slower than its best by more than the set fraction
 * and the cool-down has passed at time now; 0 otherwise. */
int pt_autoprof_due(pt_autoprof *ap, double now, char *reason, size_t cap);

/* The watch's verdict on this node (docs/watch.md): 1 with reason filled
 * when one of the n ranks is a persistent straggler and the cool-down has
 * passed at time now (the most blamed one is named: since when, how late,
 * at which collective, its score); 0 otherwise.  *collectives is set to
 * whether some rank's arrivals at collectives are read (the watch can
 * name a straggler at all). */
int pt_autoprof_watch_due(pt_autoprof *ap, const struct pt_watch_rank *r, size_t n, double now,
			  int *collectives, char *reason, size_t cap);

/* One pass over the control directory: feed the heartbeats of host's live
 * workers, note the last trigger (trigger.json), read this node's watch
 * file (<dir>/watch/<host>.json): a persistent straggler there is due at
 * once; a slowdown of the step times (pt_autoprof_due) is due too, but
 * where the watch reads collectives, only after watch_defer seconds
 * without a straggler named.  An active trigger is never doubled.
 * Returns 1 with reason filled when profiling should start, 0 otherwise
 * (also when the directory cannot be read). */
int pt_autoprof_check(pt_autoprof *ap, const char *dir, const char *host, double now,
		      char *reason, size_t cap);

#endif
