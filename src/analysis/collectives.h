/*
 * collectives.h - one worker's collective instances for the lockstep
 * analysis (docs/design.md "Lockstep: culprits and victims"): which collectives
 * it entered, in what order per communicator, when it arrived and when
 * each ended, and what ran on it in the span before each arrival.
 *
 * Flow: pt_store + window --pt_coll_find--> instances and their spans
 *       --(the attribution sweep's items, pt_coll_tap)--> time per function
 *       in each span --pt_coll_finish--> pt_summary "collectives"
 *       --pt_coll_write / pt_coll_parse--> the master (src/diagnose/lockstep_match.c).
 * Internal (not installed).  Thread-safe for distinct builders.
 */
#ifndef PT_COLLECTIVES_H
#define PT_COLLECTIVES_H

#include <stddef.h>
#include <stdint.h>

#include "analysis.h"
#include "summary.h"

/* Instances kept per summary, at most (about 30 bytes each in the file). */
#define PT_COLL_MAX 200000
/* Functions kept per span (the largest), and the least time one must take. */
#define PT_COLL_CAUSES 8

typedef struct pt_coll_build {
	size_t n;              /* instances, by channel then order */
	int64_t *arr, *end;    /* ns, the store's clock */
	uint32_t *chan, *name; /* channel index; store string id of the name */
	uint32_t *ev;          /* the instance's event (index into the store) */
	uint32_t *pg;          /* store string id of its process group, 0 unknown */
	int64_t *seq;          /* its sequence number in the group, -1 unknown */
	size_t nchan;
	char (*chans)[32];
	/* Spans of the main channel (the one with most instances), in order:
	 * [gs, ge) ends at instance ginst's arrival. */
	size_t ngap;
	int64_t *gs, *ge;
	uint32_t *ginst;
	/* Per span: internal pattern -> ns, a small open-addressing table
	 * each (the sweep's runs move through the spans together, so the
	 * tables in use stay in cache); cur: per run, the span last hit. */
	struct pt_coll_gtab *gt;
	size_t hn;
	size_t *cur;
	size_t ncur;
	int oom;
} pt_coll_build;

/* Find st's collective instances inside w: NCCL/RCCL kernels per GPU
 * stream in start order; without any, the outermost CPU collectives
 * (gloo:*, c10d::*, nccl:*, record_param_comms) per thread.  b is
 * initialised here; free it with pt_coll_build_free.  PT_OK or PT_ENOMEM. */
int pt_coll_find(const pt_store *st, const pt_window *w, pt_coll_build *b);
/* Add items (as the attribution sweep gets them from its run `run`, in
 * start order within a thread) to the spans they overlap: the exclusive
 * time of each function before each arrival.  A no-op when b has no spans.
 * On allocation failure b->oom is set. */
void pt_coll_tap(pt_coll_build *b, size_t run, const pt_item *it, size_t n);
/* Fill s->coll* from b.  patmap[internal pattern] is its index in
 * s->patterns, or UINT32_MAX when not kept (npat entries).  PT_OK or
 * PT_ENOMEM. */
int pt_coll_finish(pt_coll_build *b, const pt_store *st, const pt_window *w,
		   const uint32_t *patmap, size_t npat, pt_summary *s);
void pt_coll_build_free(pt_coll_build *b);  /* zeroed: no-op */

/* The value of the "collectives" member (docs/summary.md); the summary
 * writer leaves the member out when the summary has no channels. */
void pt_coll_write(const pt_summary *s, pt_sb *out);
/* Parse the "collectives" value buf[0..len) into s (which must hold no
 * collectives yet) and check it against s->npatterns when known (npat,
 * (size_t)-1 to skip).  PT_OK, or PT_EFORMAT/PT_EPARSE/PT_ENOMEM with err
 * filled (offset relative to buf). */
int pt_coll_parse(const char *buf, size_t len, pt_summary *s, pt_error *err);
/* Check cause pattern indices against s->npatterns (after all members are
 * read): PT_OK or PT_EFORMAT. */
int pt_coll_check(const pt_summary *s, pt_error *err);
/* Free and clear s's collectives (NULL-safe). */
void pt_coll_free(pt_summary *s);

#endif
