/*
 * critpath.c - the critical path of each step (critpath.h): a backward walk
 * over the trace's dependency graph (CPU frames nested per thread, launch ->
 * GPU event by correlation id, GPU events in order on a stream, blocking
 * calls -> the GPU event they waited for, cross-stream waits, threads that
 * wait for other threads) from each step's end to its start.
 *
 * Flow: pt_store (read only) + the collective instances --> per lane index
 *       (events in start order, frame parents, clipped ends) --> one walk
 *       per step --> pt_cpath (split, functions, waits, instances) -->
 *       summary "critical_path" (written and read in critpath_format.c).
 *       The definitions are docs/summary.md's "Critical path";
 *       tests/tools/critpath_reference.py computes the same split
 *       independently.
 */
#include "critpath.h"
#include "collectives.h"
#include "stats.h"
#include "../model/keys.h"
#include "../util/json.h"
#include "../util/bsearch.h"
#include "../util/hash.h"
#include "../util/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#define NONE UINT32_MAX
#define KBIT 0x80000000u
/* A GPU event that starts this long after both its stream predecessor and
 * its launch were ready waited for another stream. */
#define XSTREAM_NS 20000
/* Moves in a row without time going back before the walk gives up. */
#define STALL_MAX 64
/* Waiters on the stack at most (a chain of joins and syncs). */
#define STACK_MAX 64
/* Functions kept: the largest on the path of any step, and the largest
 * excesses over their median of each step. */
#define KEEP_TOP 12
#define KEEP_GROWN 8
#define GROWN_MIN_MS 0.05
#define WAIT_MIN_MS 0.05
/* A runtime call longer than this blocked: it waited for the GPU. */
#define BLOCK_NS 100000
/* Chain credits held before they are summed (flush_credits). */
#define FLUSH_AT 4096
/* Events a GPU lane search looks back over for an end inside a range. */
#define LOOKBACK 8
/* Positions ahead whose event a pass in start order asks for early. */
#define PF_AHEAD 16

const char *pt_cp_kind_name(int k)
{
	static const char *const n[PT_CP_NKINDS] = { "cpu", "compute", "communication", "memory",
						     "launch", "gap", "wait" };
	return k >= 0 && k < PT_CP_NKINDS ? n[k] : "";
}

/* ---- the index ---------------------------------------------------------- */

typedef struct pacc {
	uint32_t pos;
	int64_t ns;
} pacc;

typedef struct corr_ent {
	uint32_t corr, ev;
} corr_ent;

/* A function slot: its path time per step (inclusive, own, longest). */
typedef struct fslot {
	uint32_t name;
	uint8_t kind;
	uint32_t open;    /* flush_credits: frames of this name on the chain */
	int64_t *ns;      /* per step: exact sums, converted to ms once */
	int64_t *self;    /* per step: time at its own frames (not below them) */
	int64_t *longest; /* per step: the longest GPU event on the path */
	double *ms;       /* keep_funcs: ns in ms */
} fslot;

/* A wait record of the step being walked. */
typedef struct wrec {
	uint32_t waiter;  /* event index of the blocking call / waiting frame */
	uint32_t target;  /* event index of the GPU event, NONE for a join */
	uint32_t tlane;   /* lane of the target (the thread for a join) */
	uint32_t behind;  /* event index, NONE unknown */
	double ns;
} wrec;

typedef struct waiter {
	uint32_t lane;    /* the thread that waits */
	uint32_t pos;     /* position of its waiting frame in the lane's order */
	uint32_t rec;     /* its wait record */
	int64_t s, e;     /* the frame's start and (clipped) end, held here: every
	                     segment asks, and the event is a cache miss away */
} waiter;

typedef struct cp {
	const pt_store *st;
	pt_window win;
	pt_frame_order *fr;  /* patterns.c's frames (index_build, order_give); NULL */
	uint64_t *frbit;    /* positions that are patterns.c's frames */
	int64_t *frts;      /* their starts by frame, on lanes with rest (fr->ts) */
	int frok;           /* none of them has a saturated end */
	size_t nl;
	size_t *off;        /* lane l's events are ord[off[l] .. off[l+1]) */
	size_t *hint;       /* per lane: the last search's answer (last_before) */
	uint32_t *ord;      /* event indexes, per lane, in start order */
	uint32_t *parent;   /* CPU lanes: position of the parent frame, NONE root */
	uint64_t *clipbit;  /* positions whose end is clipped to their parent's */
	struct clipent { uint32_t pos; int64_t end; } *clip; /* by pos */
	size_t nclip, clipcap;
	uint32_t *roots;    /* per CPU lane, positions of its root frames */
	int64_t *rend;      /* their ends (join_of bisects them for every CPU
	                       segment: through the events, a cache miss each) */
	size_t *roff;       /* lane l's roots: roots[roff[l] .. roff[l+1]) */
	uint32_t *sev;      /* the first 2 nsteps step events, in file order */
	size_t nsev;
	uint32_t *jl;       /* the CPU lanes that have frames */
	size_t njl;
	size_t *rh;         /* per lane: the last root search's answer (join_of) */
	/* the store's sync records: by correlation id (ysync) and the stream
	 * waits by waiting lane then time (swait), as indices */
	uint32_t *ysync, *swait;
	size_t nysync, nswait;
	corr_ent *launch, *gpuev;
	size_t hlaunch, hgpu;  /* corr_find's last answers */
	size_t nlaunch, ngpuev;
	/* collective instances: event -> instance */
	corr_ent *inst;     /* (event index, instance) sorted by event */
	size_t ninst;
	/* functions */
	fslot *f;
	size_t nf, fcap;
	pt_hmap fmap;       /* fhash(name, kind) -> slot */
	uint32_t *byname;   /* string id -> slot + 1 of its first kind, 0 none */
	/* Kernels by name without their launch shape (a kernel whose grid
	 * follows the data gets a new key every step: compared across steps
	 * it would never grow): ids of ks with KBIT set; kmap: store id ->
	 * ks id + 1, 0 not yet. */
	pt_strtab *ks;
	uint32_t *kmap;
	/* this step's chain credits: position -> ns (pmap: position -> index) */
	pacc *pa;
	size_t npa, pacap;
	pt_hmap pmap;
	unsigned char *rtkind; /* string id: its pt_key_runtime_kind, 0 not yet */
	size_t nbyname;
	size_t nsteps;      /* steps walked */
	/* the walk of one step */
	size_t step;
	int64_t w0;         /* the window's start */
	int64_t t0, t1;
	double split[PT_CP_NKINDS];
	waiter stk[STACK_MAX];
	size_t nstk;
	wrec *w;
	size_t nw, wcap;
	struct pin { uint32_t inst; double ns; } *pin; /* instances on the path */
	size_t npinst, pinstcap;
	uint32_t cur_target; /* wait record whose target the walk is at, NONE */
	int oom;
} cp;

static int64_t ev_end(const pt_event *e)
{
	return pt_end(e->ts, e->dur);
}

/* The end of position k: its event's, or its parent's when it ran past
 * it (the clipped ones are few: a binary search). */
static inline int64_t cend_of(const struct cp *c, uint32_t k);

static int is_frame_kind(int k)
{
	return k == PT_K_CPU_OP || k == PT_K_PYTHON || k == PT_K_ANNOTATION || k == PT_K_STEP ||
	       k == PT_K_CPU_COMM || k == PT_K_RUNTIME || k == PT_K_DRIVER;
}

static int is_gpu_kind(int k)
{
	return k == PT_K_KERNEL || k == PT_K_COMM_KERNEL || k == PT_K_MEMCPY || k == PT_K_MEMSET;
}

static inline int takes_part(const pt_store *st, const pt_event *e)
{
	if (e->dur <= 0 || e->lane >= st->nlanes)
		return 0;
	if (st->lanes[e->lane].gpu)
		return is_gpu_kind(e->kind);
	return is_frame_kind(e->kind);
}

/* Frames that start together nest longest first, then in the order step,
 * annotation, Python function, op, collective, runtime call (docs/summary.md
 * "Frames"), then file order. */
static int ord_cmp(const void *pa, const void *pb, void *ctx)
{
	const pt_event *ev = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	const pt_event *x = &ev[a], *y = &ev[b];
	int ra, rb;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->dur != y->dur)
		return x->dur > y->dur ? -1 : 1;
	ra = pt_kind_nest_rank(x->kind);
	rb = pt_kind_nest_rank(y->kind);
	if (ra != rb)
		return ra - rb;
	return a < b ? -1 : a > b;
}

static int corr_cmp(const void *pa, const void *pb)
{
	const corr_ent *a = pa, *b = pb;

	if (a->corr != b->corr)
		return a->corr < b->corr ? -1 : 1;
	return a->ev < b->ev ? -1 : a->ev > b->ev;
}

static int corr_sorted(const corr_ent *t, size_t n)
{
	size_t i;

	for (i = 1; i < n; i++)
		if (corr_cmp(&t[i - 1], &t[i]) > 0)
			return 0;
	return 1;
}

static int ysync_cmp(const void *pa, const void *pb, void *ctx)
{
	const pt_sync *y = ctx, *a = &y[*(const uint32_t *)pa], *b = &y[*(const uint32_t *)pb];

	if (a->corr != b->corr)
		return a->corr < b->corr ? -1 : 1;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

static int swait_cmp(const void *pa, const void *pb, void *ctx)
{
	const pt_sync *y = ctx, *a = &y[*(const uint32_t *)pa], *b = &y[*(const uint32_t *)pb];

	if (a->wlane != b->wlane)
		return a->wlane < b->wlane ? -1 : 1;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

/* The store's sync records, indexed (cuda_sync; none in older traces). */
static int sync_build(cp *c)
{
	const pt_store *st = c->st;
	size_t i;

	c->ysync = x_malloc((st->nsyncs + 1) * sizeof(*c->ysync));
	c->swait = x_malloc((st->nsyncs + 1) * sizeof(*c->swait));
	if (!c->ysync || !c->swait)
		return -1;
	for (i = 0; i < st->nsyncs; i++) {
		c->ysync[c->nysync++] = (uint32_t)i;
		if (st->syncs[i].kind == PT_SYNC_STREAM_WAIT && st->syncs[i].wlane < st->nlanes)
			c->swait[c->nswait++] = (uint32_t)i;
	}
	qsort_r(c->ysync, c->nysync, sizeof(*c->ysync), ysync_cmp, st->syncs);
	qsort_r(c->swait, c->nswait, sizeof(*c->swait), swait_cmp, st->syncs);
	return 0;
}

/* The key of the k-th entry of a sorted order. */
static inline uint64_t order_key(const pt_order *o, size_t k)
{
	return o->packed ? o->packed[k] >> o->ib : o->kv[k].k;
}

/* Merge the non-decreasing runs of o[0..m) (by start; inv descents between
 * them, whose positions are the bits base + 1 .. base + m - 1 of rs),
 * pairwise, bottom up: O(m log runs).  -1: out of memory. */
static int merge_runs(const pt_store *st, uint32_t *o, size_t m, size_t inv, const uint64_t *rs,
		      size_t base)
{
	uint32_t *tmp = x_malloc((m + 1) * sizeof(*tmp)), *src = o, *dst = tmp, *sw;
	size_t *b = x_malloc((inv + 2) * sizeof(*b)), nb = 0, k, q;

	if (!tmp || !b) {
		x_free(b);
		x_free(tmp);
		return -1;
	}
	/* run boundaries, 0 and m included: the descents were marked while
	 * the store was read in order (finding them here read the lane's
	 * events again: 2% of summarize's D1 read misses, cachegrind) */
	b[nb++] = 0;
	for (k = base + 1; k < base + m && nb < inv + 1;) {
		uint64_t wd = rs[k >> 6] >> (k & 63);
		if (!wd) {
			k = (k | 63) + 1;
			continue;
		}
		k += (size_t)__builtin_ctzll(wd);
		if (k >= base + m)
			break;
		b[nb++] = k - base;
		k++;
	}
	b[nb++] = m;
	while (nb > 2) {
		size_t nn = 0;
		for (q = 0; q + 1 < nb; q += 2) {
			size_t lo = b[q], mid = b[q + 1], hi = q + 2 < nb ? b[q + 2] : mid;
			size_t i = lo, j = mid, d = lo;
			while (i < mid && j < hi)
				dst[d++] = st->ev[src[j]].ts < st->ev[src[i]].ts ? src[j++] : src[i++];
			while (i < mid)
				dst[d++] = src[i++];
			while (j < hi)
				dst[d++] = src[j++];
			b[nn++] = lo;
		}
		b[nn++] = m;
		sw = src;
		src = dst;
		dst = sw;
		/* blocks already in order with the one before are one run: on a
		 * Kineto lane each step's ops and runtime calls merge into a
		 * block that follows the last step's, so one pass sorts it */
		for (q = 1, nb = 1; q < nn; q++)
			if (q == nn - 1 || st->ev[src[b[q]]].ts < st->ev[src[b[q] - 1]].ts)
				b[nb++] = b[q];
	}
	if (src != o)
		memcpy(o, src, m * sizeof(*o));
	x_free(b);
	x_free(tmp);
	return 0;
}

/* index_build's scratch, shared by its passes: per lane the fill count,
 * the span of starts, how many starts go back in time and the last start;
 * the nesting stack; the roots' count; the frames handed to patterns.c. */
typedef struct ixb {
	size_t n;                 /* events that take part */
	size_t *fill;
	int64_t *llo, *lhi, *lprev;
	size_t *lin;
	uint64_t *runbit;         /* positions in ord where a lane's run starts */
	size_t *nrest;            /* per lane: frames apart (fr->rest) */
	pt_order po;
	uint32_t *stk;
	int64_t *stkend;
	size_t stkcap, stkendcap, rootcap, rendcap, nroots;
	uint64_t *frbit;          /* c->frbit, held here */
	size_t pn;                /* frames handed to patterns.c */
	int sat;                  /* some frame's end saturated */
} ixb;

/* Count the events per lane (c->off as offsets), the launches and GPU
 * events with correlation ids, and allocate what the fill pass writes.
 * -1 when out of memory or too large. */
static int index_alloc(cp *c, ixb *b)
{
	const pt_store *st = c->st;
	pt_frame_order *fr = c->fr;
	size_t i, l;

	c->nl = st->nlanes;
	c->off = x_calloc(c->nl + 1, sizeof(*c->off));
	c->hint = x_calloc(c->nl + 1, sizeof(*c->hint));
	c->roff = x_calloc(c->nl + 1, sizeof(*c->roff));
	b->fill = x_calloc(c->nl + 1, sizeof(*b->fill));
	if (!c->off || !c->roff || !b->fill || !c->hint)
		return -1;
	for (i = 0; i < st->n; i++) {
		const pt_event *e = &st->ev[i];
		if (!takes_part(st, e))
			continue;
		c->off[e->lane + 1]++;
		b->n++;
		if (e->corr) {
			if (st->lanes[e->lane].gpu)
				c->ngpuev++;
			else if (e->kind == PT_K_RUNTIME || e->kind == PT_K_DRIVER)
				c->nlaunch++;
		}
	}
	for (l = 0; l < c->nl; l++)
		c->off[l + 1] += c->off[l];
	c->ord = x_malloc((b->n + 1) * sizeof(*c->ord));
	c->parent = x_malloc((b->n + 1) * sizeof(*c->parent));
	if (fr) {
		/* a bit per position: order_give compacts ord by them */
		c->frbit = x_calloc(b->n / 64 + 1, sizeof(*c->frbit));
		fr->off = x_calloc(c->nl + 1, sizeof(*fr->off));
		b->nrest = x_calloc(c->nl + 1, sizeof(*b->nrest));
		if (!c->frbit || !fr->off || !b->nrest)
			return -1;
		b->frbit = c->frbit;
	}
	c->launch = x_malloc((c->nlaunch + 1) * sizeof(*c->launch));
	c->gpuev = x_malloc((c->ngpuev + 1) * sizeof(*c->gpuev));
	if (!c->ord || !c->parent || !c->launch || !c->gpuev)
		return -1;
	c->nlaunch = c->ngpuev = 0;
	/* per lane, while the store is read in order: the span of starts and
	 * how many are out of order (a pass through ord later would touch the
	 * events in lane order: a cache miss each) */
	b->llo = x_malloc((c->nl + 1) * sizeof(*b->llo));
	b->lhi = x_malloc((c->nl + 1) * sizeof(*b->lhi));
	b->lin = x_calloc(c->nl + 1, sizeof(*b->lin));
	b->lprev = x_calloc(c->nl + 1, sizeof(*b->lprev));
	if (!b->llo || !b->lhi || !b->lin || !b->lprev)
		return -1;
	for (l = 0; l < c->nl; l++) {
		b->llo[l] = INT64_MAX;
		b->lhi[l] = INT64_MIN;
	}
	/* the step events too, for the walk's step threads: a pass of their
	 * own over the store was 2.4% of summarize's D1 read misses
	 * (cachegrind, dlrm0_40M) */
	if (st->nsteps > (SIZE_MAX / sizeof(*c->sev) - 1) / 2)
		return -1;
	c->sev = x_malloc((2 * st->nsteps + 1) * sizeof(*c->sev));
	b->runbit = x_calloc(b->n / 64 + 1, sizeof(*b->runbit));
	if (!c->sev || !b->runbit)
		return -1;
	return 0;
}

/* One pass over the store in order: each lane's events into ord in file
 * order (where a start goes back in time marked in runbit), the step
 * events, the frames patterns.c nests apart, and the correlation tables,
 * sorted by id.  -1 when out of memory. */
static int index_fill(cp *c, ixb *b)
{
	const pt_store *st = c->st;
	pt_frame_order *fr = c->fr;
	size_t i, *fill = b->fill, *lin = b->lin, *nrest = b->nrest;
	int64_t *llo = b->llo, *lhi = b->lhi, *lprev = b->lprev;
	uint64_t *runbit = b->runbit;

	for (i = 0; i < st->n; i++) {
		const pt_event *e = &st->ev[i];
		if (e->kind == PT_K_STEP && c->nsev < 2 * st->nsteps)
			c->sev[c->nsev++] = (uint32_t)i;
		if (!takes_part(st, e)) {
			/* a frame patterns.c nests that the index has not (zero
			 * length, mostly) goes to it apart, to be merged in */
			if (fr && pt_frame_nests(e->kind) && pt_window_hits(&c->win, e->ts, e->dur)) {
				if (fr->nrest == fr->restcap &&
				    X_GROW(fr->rest, fr->restcap, fr->nrest + 1))
					return -1;
				fr->rest[fr->nrest++] = (uint32_t)i;
				if (e->lane < c->nl)
					nrest[e->lane]++;
			}
			continue;
		}
		if (fill[e->lane] && e->ts < lprev[e->lane]) {
			size_t q = c->off[e->lane] + fill[e->lane];
			lin[e->lane]++;
			runbit[q >> 6] |= 1ULL << (q & 63);
		}
		lprev[e->lane] = e->ts;
		if (e->ts < llo[e->lane])
			llo[e->lane] = e->ts;
		if (e->ts > lhi[e->lane])
			lhi[e->lane] = e->ts;
		c->ord[c->off[e->lane] + fill[e->lane]++] = (uint32_t)i;
		if (e->corr) {
			corr_ent ce = { e->corr, (uint32_t)i };
			if (st->lanes[e->lane].gpu)
				c->gpuev[c->ngpuev++] = ce;
			else if (e->kind == PT_K_RUNTIME || e->kind == PT_K_DRIVER)
				c->launch[c->nlaunch++] = ce;
		}
	}
	/* correlation ids grow in file order: sort only when they do not */
	if (!corr_sorted(c->launch, c->nlaunch))
		qsort(c->launch, c->nlaunch, sizeof(*c->launch), corr_cmp);
	if (!corr_sorted(c->gpuev, c->ngpuev))
		qsort(c->gpuev, c->ngpuev, sizeof(*c->gpuev), corr_cmp);
	return 0;
}

/* Lane l's events in start order: up to m/8 descents the runs are merged,
 * beyond that a radix sort by start (b->po keeps the keys; *radix set).
 * -1 when out of memory. */
static int lane_sort(cp *c, ixb *b, size_t l, int *radix)
{
	const pt_store *st = c->st;
	uint32_t *o = c->ord + c->off[l];
	size_t m = c->off[l + 1] - c->off[l], k;
	int64_t lo = b->llo[l], hi = b->lhi[l];
	size_t inv = b->lin[l];
	uint32_t *cp_;

	*radix = 0;
	if (inv && inv <= m / 8) {
		if (merge_runs(st, o, m, inv, b->runbit, c->off[l]))
			return -1;
		inv = 0;
	}
	if (!inv)
		return 0;
	cp_ = x_malloc(m * sizeof(*cp_));
	if (!cp_ || pt_order_init(&b->po, m, (uint64_t)hi - (uint64_t)lo)) {
		x_free(cp_);
		return -1;
	}
	for (k = 0; k < m; k++)
		pt_order_set(&b->po, k, (uint64_t)st->ev[o[k]].ts - (uint64_t)lo);
	pt_order_sort(&b->po);
	memcpy(cp_, o, m * sizeof(*cp_));
	for (k = 0; k < m; k++)
		o[k] = cp_[pt_order_at(&b->po, k)];
	x_free(cp_);
	*radix = 1;
	return 0;
}

/* Lane l, sorted: the runs of equal starts by length and kind
 * (insertion), then, while a run's events are at hand, their parents, the
 * clipped ends, the roots and patterns.c's frames.  The stack and the
 * counts live in locals across the loop and go back to b at the end.
 * -1 when out of memory. */
static int lane_nest(cp *c, ixb *b, size_t l, int radix, int64_t *frts)
{
	const pt_store *st = c->st;
	uint32_t *o = c->ord + c->off[l];
	size_t m = c->off[l + 1] - c->off[l], k, a, ns = 0;
	int gpu = st->lanes[l].gpu;
	const pt_order *po = &b->po;
	uint64_t *frbit = b->frbit;
	uint32_t *stk = b->stk;
	int64_t *stkend = b->stkend;
	size_t stkcap = b->stkcap, stkendcap = b->stkendcap, rootcap = b->rootcap;
	size_t rendcap = b->rendcap, nroots = b->nroots, pn = b->pn;
	int64_t w0 = c->win.start, w1 = c->win.end;
	int sat = b->sat, rc = -1;

	/* runs of equal starts: from the sorted keys when there are any
	 * (o is in time order now, the events are not) */
	for (a = 0; a < m; a = k) {
		size_t bb, j;
		if (a + PF_AHEAD < m)
			__builtin_prefetch(&st->ev[o[a + PF_AHEAD]]);
		if (radix)
			for (k = a + 1; k < m && order_key(po, k) == order_key(po, a); k++)
				;
		else
			for (k = a + 1; k < m && st->ev[o[k]].ts == st->ev[o[a]].ts; k++)
				;
		for (bb = a + 1; bb < k; bb++) {
			uint32_t x = o[bb];
			for (j = bb; j > a && ord_cmp(&o[j - 1], &x, (void *)st->ev) > 0; j--)
				o[j] = o[j - 1];
			o[j] = x;
		}
		for (bb = a; bb < k; bb++) {
			size_t q = c->off[l] + bb;
			const pt_event *e;
			int64_t end;
			c->parent[q] = NONE;
			if (gpu)
				continue;
			e = &st->ev[o[bb]];
			end = ev_end(e);
			/* patterns.c's frames in its nest order, while the
			 * event is at hand (its own sort of them was 2.7% of
			 * summarize's samples on tf_200M, perf) */
			if (frbit && pt_frame_nests(e->kind) && e->ts < w1 && end > w0) {
				sat |= end == INT64_MAX; /* a clipped length orders otherwise */
				frbit[q >> 6] |= 1ULL << (q & 63);
				if (frts)
					frts[pn] = e->ts;
				pn++;
			}
			while (ns && stkend[ns - 1] <= e->ts)
				ns--;
			if (ns) {
				c->parent[q] = stk[ns - 1];
				if (end > stkend[ns - 1]) {
					end = stkend[ns - 1];
					if (c->nclip == c->clipcap &&
					    X_GROW(c->clip, c->clipcap, c->nclip + 1))
						goto out;
					c->clip[c->nclip].pos = (uint32_t)q;
					c->clip[c->nclip++].end = end;
					c->clipbit[q >> 6] |= 1ULL << (q & 63);
				}
			} else {
				if (X_GROW(c->roots, rootcap, nroots + 1) ||
				    X_GROW(c->rend, rendcap, nroots + 1))
					goto out;
				c->rend[nroots] = end;  /* a root is never clipped */
				c->roots[nroots++] = (uint32_t)q;
			}
			/* the stack grows to the lane's depth (it was sized
			 * for every event: 12 bytes each) */
			if (X_GROW(stk, stkcap, ns + 1) || X_GROW(stkend, stkendcap, ns + 1))
				goto out;
			stkend[ns] = end;
			stk[ns++] = (uint32_t)q;
		}
	}
	rc = 0;
out:
	b->stk = stk;
	b->stkend = stkend;
	b->stkcap = stkcap;
	b->stkendcap = stkendcap;
	b->rootcap = rootcap;
	b->rendcap = rendcap;
	b->nroots = nroots;
	b->pn = pn;
	b->sat = sat;
	return rc;
}

/* Per lane order, parents, clipped ends, roots, correlation tables. */
static int index_build(cp *c)
{
	pt_frame_order *fr = c->fr;
	ixb b;
	size_t l;
	int rc = -1;

	memset(&b, 0, sizeof(b));  /* pt_order_free: safe on b.po */
	if (index_alloc(c, &b) || index_fill(c, &b))
		goto out;

	/* Each lane in start order, then the short runs of equal starts by
	 * length and kind (insertion).  Kineto writes a thread's Python
	 * functions, its ops and its runtime calls as separate runs, per step:
	 * up to m/8 descents the runs are merged, beyond that a radix sort by
	 * start (qsort_r with a comparator over the events was 4% of summarize
	 * on the bench trace).
	 * Then, while a run's events are at hand, their parents, the ends of
	 * frames that run past their parent's (clipped: a bit per position
	 * and a side table, in position order; an array of ends for every
	 * position was a fifth of the index) and the roots.  These were two
	 * more passes over the lanes, each reading the events in start order
	 * (a cache miss each: a fifth of pt_cpath_build's CPU samples on the
	 * bench DLRM trace; cachegrind's D1 read misses in it 656 k -> 580 k
	 * on dlrm0_40M). */
	c->clipbit = x_calloc(b.n / 64 + 1, sizeof(*c->clipbit));
	if (!c->clipbit)
		goto out;
	for (l = 0; l < c->nl; l++) {
		int64_t *frts = NULL;
		int radix;

		if (lane_sort(c, &b, l, &radix))
			goto out;
		c->roff[l] = b.nroots;
		if (fr) {
			fr->off[l] = b.pn;
			/* a lane with rest to merge in: its frames' starts, kept
			 * while each is at hand (the merge read them from the
			 * events: a cache miss per frame) */
			if (b.nrest[l] && !c->frts) {
				c->frts = x_malloc((b.n + 1) * sizeof(*c->frts));
				if (!c->frts)
					goto out;
			}
			frts = b.nrest[l] ? c->frts : NULL;
		}
		if (lane_nest(c, &b, l, radix, frts))
			goto out;
		pt_order_free(&b.po);
	}
	c->roff[c->nl] = b.nroots;
	if (fr) {
		fr->off[c->nl] = fr->n = b.pn;
		c->frok = !b.sat;
	}
	c->jl = x_malloc((c->nl + 1) * sizeof(*c->jl));
	c->rh = x_calloc(c->nl + 1, sizeof(*c->rh));
	if (!c->jl || !c->rh)
		goto out;
	for (l = 0; l < c->nl; l++)
		if (c->roff[l + 1] > c->roff[l])
			c->jl[c->njl++] = (uint32_t)l;
	rc = 0;
out:
	pt_order_free(&b.po);
	x_free(b.nrest);
	x_free(b.runbit);
	x_free(b.lprev);
	x_free(b.lin);
	x_free(b.lhi);
	x_free(b.llo);
	x_free(b.stkend);
	x_free(b.stk);
	x_free(b.fill);
	return rc;
}

/* The instances' events, from the collectives builder. */
static int inst_build(cp *c, const pt_coll_build *b)
{
	size_t i;

	if (!b || !b->n || !b->ev)
		return 0;
	c->inst = x_malloc(b->n * sizeof(*c->inst));
	if (!c->inst)
		return -1;
	for (i = 0; i < b->n; i++) {
		c->inst[i].corr = b->ev[i];  /* sorted by event index below */
		c->inst[i].ev = (uint32_t)i;
	}
	c->ninst = b->n;
	qsort(c->inst, c->ninst, sizeof(*c->inst), corr_cmp);
	return 0;
}

static uint32_t inst_of(const cp *c, uint32_t ev)
{
	size_t lo = 0, hi = c->ninst;

	PT_BSEARCH(lo, hi, mid, c->inst[mid].corr < ev);
	return lo < c->ninst && c->inst[lo].corr == ev ? c->inst[lo].ev : NONE;
}

/* First entry of t[0..n) with corr == k, or n.  The path meets launches
 * in nearly descending correlation order: the search gallops from the
 * last answer (*h) before it bisects (a plain binary search over the
 * table was 6% of the walk on the bench trace: a cache miss per probe). */
static size_t corr_find(const corr_ent *t, size_t n, uint32_t k, size_t *h)
{
	size_t lo = 0, hi = n, step = 1, a = *h;

	if (a < n) {
		if (t[a].corr < k) {
			while (a + step < n && t[a + step].corr < k) {
				a += step;
				step *= 2;
			}
			lo = a + 1;
			hi = a + step < n ? a + step + 1 : n;
		} else {
			while (a >= step && t[a - step].corr >= k) {
				a -= step;
				step *= 2;
			}
			hi = a + 1;
			lo = a >= step ? a - step : 0;
		}
	}
	PT_BSEARCH(lo, hi, mid, t[mid].corr < k);
	*h = lo;
	return lo < n && t[lo].corr == k ? lo : n;
}

static inline int64_t cend_of(const cp *c, uint32_t k)
{
	const pt_event *e = &c->st->ev[c->ord[k]];

	if (c->clipbit[k >> 6] >> (k & 63) & 1) {
		size_t lo = 0, hi = c->nclip;
		PT_BSEARCH(lo, hi, mid, c->clip[mid].pos < k);
		return c->clip[lo].end;
	}
	return pt_end(e->ts, e->dur);
}

/* Last position in lane l with start < t, or NONE.  The walk moves back
 * along a lane a few positions at a time, so the search gallops from where
 * the lane's last search ended before it bisects (a plain binary search per
 * move was 5% of summarize on the bench trace). */
static uint32_t last_before(cp *c, size_t l, int64_t t)
{
	size_t lo = c->off[l], hi = c->off[l + 1], h = c->hint[l], step = 1;
	const pt_event *ev = c->st->ev;

	if (h >= lo && h < hi) {
		if (ev[c->ord[h]].ts < t) {
			/* answer >= h: gallop up */
			size_t a = h;
			while (a + step < hi && ev[c->ord[a + step]].ts < t) {
				a += step;
				step *= 2;
			}
			lo = a + 1;
			if (a + step < hi)
				hi = a + step;
		} else {
			size_t b = h;
			while (b >= lo + step && ev[c->ord[b - step]].ts >= t) {
				b -= step;
				step *= 2;
			}
			hi = b;
			if (b >= lo + step)
				lo = b - step + 1;
		}
	}
	PT_BSEARCH(lo, hi, mid, ev[c->ord[mid]].ts < t);
	if (lo > c->off[l]) {
		c->hint[l] = lo - 1;
		return (uint32_t)(lo - 1);
	}
	return NONE;
}

static int64_t pos_ts(const cp *c, uint32_t k)
{
	return c->st->ev[c->ord[k]].ts;
}

/* The deepest frame of CPU lane l at t (start < t <= end) and the start
 * of its exclusive segment at t.  NONE for a gap; *a is then the end of the
 * lane's last frame before t (or INT64_MIN). */
static uint32_t deepest(cp *c, size_t l, int64_t t, int64_t *a)
{
	uint32_t j = last_before(c, l, t), below = NONE;

	while (j != NONE && cend_of(c, j) < t) {
		below = j;
		j = c->parent[j];
	}
	if (j == NONE) {
		*a = below != NONE ? cend_of(c, below) : INT64_MIN;
		return NONE;
	}
	*a = below != NONE ? cend_of(c, below) : pos_ts(c, j);
	return j;
}

/* The GPU event of lane l with start < t <= end, or NONE: the last one
 * started before t, or one of the few before it when that one ended
 * already (an event inside a longer one on the same stream). */
static uint32_t gpu_at(cp *c, size_t l, int64_t t)
{
	uint32_t j = last_before(c, l, t);
	int k;

	for (k = 0; j != NONE && k < LOOKBACK; k++) {
		if (cend_of(c, j) >= t)
			return j;
		j = j > c->off[l] ? j - 1 : NONE;
	}
	return NONE;
}

/* The event of GPU lane l ending latest in (lo, hi], as a position; NONE. */
static uint32_t gpu_end_in(cp *c, size_t l, int64_t lo, int64_t hi)
{
	uint32_t j = last_before(c, l, hi), best = NONE;
	int k;

	for (k = 0; j != NONE && k < LOOKBACK; k++) {
		int64_t e = cend_of(c, j);
		if (e <= lo && pos_ts(c, j) <= lo)
			break;
		if (e > lo && e <= hi && (best == NONE || e > cend_of(c, best)))
			best = j;
		j = j > c->off[l] ? j - 1 : NONE;
	}
	return best;
}

/* Position of event ev in its lane's order. */
static uint32_t pos_of(const cp *c, uint32_t ev)
{
	const pt_event *e = &c->st->ev[ev];
	size_t l = e->lane, lo = c->off[l], hi = c->off[l + 1];

	/* among equal starts, scan: they are few */
	PT_BSEARCH(lo, hi, mid, c->st->ev[c->ord[mid]].ts < e->ts);
	for (; lo < c->off[l + 1] && c->st->ev[c->ord[lo]].ts == e->ts; lo++)
		if (c->ord[lo] == ev)
			return (uint32_t)lo;
	return NONE;
}

/* ---- functions --------------------------------------------------------- */

static uint32_t fhash(uint32_t name, uint8_t kind)
{
	uint32_t h = name * 2654435761u ^ (uint32_t)kind * 40503u;

	return h ^ (h >> 15);
}

static fslot *fslot_hash(cp *c, uint32_t name, uint8_t kind);

static fslot *fslot_get(cp *c, uint32_t name, uint8_t kind)
{
	fslot *got;

	/* most names have one kind: a dense index by name first (hashing
	 * every frame of every segment's chain was 4% of summarize) */
	if (name < c->nbyname && c->byname[name]) {
		fslot *f = &c->f[c->byname[name] - 1];
		if (f->kind == kind)
			return f;
	}
	got = fslot_hash(c, name, kind);
	if (got && name < c->nbyname && !c->byname[name])
		c->byname[name] = (uint32_t)(got - c->f) + 1;
	return got;
}

static fslot *fslot_hash(cp *c, uint32_t name, uint8_t kind)
{
	uint32_t h = fhash(name, kind), v;
	size_t it = 0;

	while ((v = pt_hmap_next(&c->fmap, h, &it)) != PT_HMAP_NONE)
		if (c->f[v].name == name && c->f[v].kind == kind)
			return &c->f[v];
	if (c->nf == c->fcap && X_GROW(c->f, c->fcap, c->nf + 1))
		return NULL;
	{
		c->f[c->nf].name = name;
		c->f[c->nf].kind = kind;
		c->f[c->nf].open = 0;
		c->f[c->nf].ms = NULL;
		c->f[c->nf].ns = x_calloc(c->nsteps ? c->nsteps : 1, sizeof(int64_t));
		c->f[c->nf].self = x_calloc(c->nsteps ? c->nsteps : 1, sizeof(int64_t));
		c->f[c->nf].longest = x_calloc(c->nsteps ? c->nsteps : 1, sizeof(int64_t));
		if (!c->f[c->nf].ns || !c->f[c->nf].self || !c->f[c->nf].longest ||
		    pt_hmap_put(&c->fmap, h, (uint32_t)c->nf)) {
			x_free(c->f[c->nf].ns);
			x_free(c->f[c->nf].self);
			x_free(c->f[c->nf].longest);
			return NULL;
		}
		return &c->f[c->nf++];
	}
}

/* The function id of an event: kernels by their name without the launch
 * shape, the rest by their name.  UINT32_MAX: out of memory. */
static uint32_t fname(cp *c, const pt_event *e)
{
	size_t n;
	const char *s;
	uint32_t id;

	if (e->kind != PT_K_KERNEL && e->kind != PT_K_COMM_KERNEL)
		return e->name;
	if (e->name < c->nbyname && c->kmap[e->name])
		return (c->kmap[e->name] - 1) | KBIT;
	s = pt_strtab_get(c->st->strs, e->name, &n);
	n = pt_key_strip_shape(s, n);
	id = pt_strtab_intern(c->ks, s, n);
	if (id == UINT32_MAX || id >= KBIT)
		return UINT32_MAX;
	if (e->name < c->nbyname)
		c->kmap[e->name] = id + 1;
	return id | KBIT;
}

/* Credit a GPU event or a launch call alone (no chain). */
static void credit_one(cp *c, uint32_t k, int64_t ns)
{
	const pt_event *e = &c->st->ev[c->ord[k]];
	fslot *f;
	uint32_t nm;

	if (ns <= 0 || e->kind == PT_K_STEP)
		return;
	if ((nm = fname(c, e)) == UINT32_MAX || !(f = fslot_get(c, nm, e->kind))) {
		c->oom = 1;
		return;
	}
	f->ns[c->step] += ns;
	f->self[c->step] += ns;
	if (e->dur > f->longest[c->step])
		f->longest[c->step] = e->dur;
}

/* The accumulator of position k in this step, inserted with its
 * ancestors (the set stays closed under parents).  NULL: no memory. */
static pacc *acc_of(cp *c, uint32_t k)
{
	uint32_t p = k, ki = NONE, v;

	for (;;) {
		uint32_t h = p * 2654435761u;
		size_t it = 0;

		/* an odd multiplier is a bijection on 32 bits: the first value
		 * with hash h is p's, no key to compare */
		if ((v = pt_hmap_next(&c->pmap, h, &it)) != PT_HMAP_NONE)
			break;  /* present: so are its ancestors */
		if ((c->npa == c->pacap && X_GROW(c->pa, c->pacap, c->npa + 1)) ||
		    pt_hmap_put(&c->pmap, h, (uint32_t)c->npa))
			return NULL;
		c->pa[c->npa].pos = p;
		c->pa[c->npa].ns = 0;
		v = (uint32_t)c->npa++;
		if (p == k)
			ki = v;  /* k's entry: no second probe for it */
		if (c->parent[p] == NONE)
			break;
		p = c->parent[p];
	}
	return &c->pa[ki != NONE ? ki : v];
}

static int flush_credits(cp *c);

/* Credit the frame at position k and its ancestors: accumulated at k and
 * summed up the tree once per step (flush_credits).  Crediting each
 * chain per segment was 13% of summarize on a trace of deep Python
 * stacks (bench timesformer). */
static void credit_chain(cp *c, uint32_t k, int64_t ns)
{
	pacc *a;

	if (ns <= 0)
		return;
	if (!(a = acc_of(c, k))) {
		c->oom = 1;
		return;
	}
	a->ns += ns;
	/* Flushed in parts on long steps: each part sums whole chains, so
	 * the credits are the same, and the table stays small (one per step
	 * held 1.5 MB on the bench timesformer trace). */
	if (c->npa >= FLUSH_AT && flush_credits(c))
		c->oom = 1;
}


/* The step's chain credits.  In position order a frame comes before its
 * descendants (preorder), so a stack of the frames at hand is always a
 * chain: a frame popped has all of its descendants' time, which goes to
 * its parent (the new top), and it is credited to its function when no
 * frame of the same name is still on the stack (its outermost frame of
 * that name: a recursion is not counted twice; open[] counts the names on
 * the stack). */
static void pop_credit(cp *c, uint32_t *stk, uint32_t *sl, size_t *ns)
{
	size_t top = --*ns;
	pacc *a = &c->pa[stk[top]];

	if (sl[top] != NONE && --c->f[sl[top]].open == 0)
		c->f[sl[top]].ns[c->step] += a->ns;
	if (top)
		c->pa[stk[top - 1]].ns += a->ns;
}

static int flush_credits(cp *c)
{
	size_t n = c->npa, i, ns = 0;
	uint32_t *stk = NULL, *sl = NULL;
	uint64_t *key = NULL, *tmp = NULL;
	int rc = -1;

	if (!n)
		return 0;
	key = x_malloc(n * sizeof(*key));
	tmp = x_malloc(n * sizeof(*tmp));
	stk = x_malloc(n * sizeof(*stk));
	sl = x_malloc(n * sizeof(*sl));
	if (!key || !tmp || !stk || !sl)
		goto out;
	/* position order: a radix sort of (position, index) pairs (qsort was
	 * 4% of summarize on the bench timesformer trace) */
	for (i = 0; i < n; i++)
		key[i] = (uint64_t)c->pa[i].pos << 32 | i;
	pt_sort_packed(key, tmp, n, 32);
	for (i = 0; i < n; i++) {
		uint32_t ix = (uint32_t)key[i], pos = c->pa[ix].pos, par = c->parent[pos];
		const pt_event *e = &c->st->ev[c->ord[pos]];
		fslot *f = NULL;
		/* positions ascend: ord is read in order, the events are not */
		if (i + PF_AHEAD < n)
			__builtin_prefetch(&c->st->ev[c->ord[c->pa[(uint32_t)key[i + PF_AHEAD]].pos]]);
		while (ns && c->pa[stk[ns - 1]].pos != par)
			pop_credit(c, stk, sl, &ns);
		if (e->kind != PT_K_STEP) {
			if (!(f = fslot_get(c, e->name, e->kind)))
				goto out;
			f->open++;
			/* before its descendants add in: the frame's own time */
			f->self[c->step] += c->pa[ix].ns;
		}
		sl[ns] = f ? (uint32_t)(f - c->f) : NONE;
		stk[ns++] = ix;
	}
	while (ns)
		pop_credit(c, stk, sl, &ns);
	rc = 0;
out:
	c->npa = 0;
	pt_hmap_clear(&c->pmap);
	x_free(sl);
	x_free(stk);
	x_free(tmp);
	x_free(key);
	return rc;
}

/* One segment [a, b) of kind kd owned by position k (NONE: none): the
 * split, the functions (own chain for CPU frames, or the GPU event, or the
 * launch call alone), and every waiter's chain for its overlap. */
static inline __attribute__((always_inline)) void segment(cp *c, int64_t a, int64_t b, int kd, uint32_t k,
						       int chain)
{
	size_t i;
	uint32_t klane = NONE;

	if (a < c->t0)
		a = c->t0;
	if (b > c->t1)
		b = c->t1;
	if (b <= a)
		return;
	c->split[kd] += (double)(b - a);
	if (k != NONE) {
		if (chain)
			credit_chain(c, k, b - a);
		else
			credit_one(c, k, b - a);
		if (c->ninst && (kd == PT_CP_COMM)) {
			uint32_t p = k, in = NONE;
			/* a collective's instance is its outermost collective frame */
			for (; p != NONE && in == NONE; p = chain ? c->parent[p] : NONE)
				in = inst_of(c, c->ord[p]);
			if (in != NONE) {
				if (c->npinst && c->pin[c->npinst - 1].inst == in) {
					c->pin[c->npinst - 1].ns += (double)(b - a);
				} else if (c->npinst == c->pinstcap &&
					   X_GROW(c->pin, c->pinstcap, c->npinst + 1)) {
					c->oom = 1;
				} else {
					c->pin[c->npinst].inst = in;
					c->pin[c->npinst++].ns = (double)(b - a);
				}
			}
		}
	}
	if (c->nstk && chain && k != NONE)
		klane = c->st->ev[c->ord[k]].lane;
	for (i = 0; i < c->nstk; i++) {
		const waiter *wt = &c->stk[i];
		int64_t lo = a > wt->s ? a : wt->s, hi = b < wt->e ? b : wt->e;
		if (hi > lo) {
			/* a segment of the waiter's own thread inside it is one of
			 * its descendants: its chain already holds the waiter's */
			if (!(chain && k != NONE && klane == wt->lane))
				credit_chain(c, wt->pos, hi - lo);
			c->w[wt->rec].ns += (double)(hi - lo);
		}
	}
}

/* ---- the walk ---------------------------------------------------------- */

static int push_waiter(cp *c, uint32_t lane, uint32_t pos, uint32_t target, uint32_t tlane,
		       int64_t t)
{
	size_t i, k = 0;

	/* drop waiters whose frame starts at or after t: the walk is before them */
	for (i = 0; i < c->nstk; i++)
		if (pos_ts(c, c->stk[i].pos) < t)
			c->stk[k++] = c->stk[i];
	c->nstk = k;
	if (c->nstk == STACK_MAX) {
		memmove(c->stk, c->stk + 1, (STACK_MAX - 1) * sizeof(*c->stk));
		c->nstk--;
	}
	if (c->nw == c->wcap && X_GROW(c->w, c->wcap, c->nw + 1)) {
		c->oom = 1;
		return -1;
	}
	c->w[c->nw].waiter = c->ord[pos];
	c->w[c->nw].target = target;
	c->w[c->nw].tlane = tlane;
	c->w[c->nw].behind = NONE;
	c->w[c->nw].ns = 0;
	c->stk[c->nstk].lane = lane;
	c->stk[c->nstk].pos = pos;
	c->stk[c->nstk].s = pos_ts(c, pos);
	c->stk[c->nstk].e = cend_of(c, pos);
	c->stk[c->nstk].rec = (uint32_t)c->nw++;
	c->nstk++;
	return 0;
}

/* Where the walk goes when its lane has nothing at t: the top waiter's
 * thread that still waits, else the step's thread. */
static uint32_t pop_lane(cp *c, int64_t t, uint32_t lane, uint32_t step_lane)
{
	while (c->nstk) {
		waiter wt = c->stk[--c->nstk];
		if (pos_ts(c, wt.pos) < t && wt.lane != lane)
			return wt.lane;
	}
	return lane != step_lane ? step_lane : NONE;
}

/* The sync record of the call with correlation id corr, NULL. */
static const pt_sync *sync_of(const cp *c, uint32_t corr)
{
	size_t lo = 0, hi = c->nysync;

	if (!corr)
		return NULL;
	PT_BSEARCH(lo, hi, mid, c->st->syncs[c->ysync[mid]].corr < corr);
	return lo < c->nysync && c->st->syncs[c->ysync[lo]].corr == corr ? &c->st->syncs[c->ysync[lo]]
									 : NULL;
}

/* Stream wait record y sorts at or before (lane l, time lts). */
static inline int wait_before(const pt_sync *y, uint32_t l, int64_t lts)
{
	return y->wlane < l || (y->wlane == l && y->ts <= lts);
}

/* The stream lane that GPU lane l was told to wait for before the launch
 * at lts and after the one at pts (the latest recorded stream wait between
 * them), NONE. */
static uint32_t stream_wait(const cp *c, uint32_t l, int64_t lts, int64_t pts)
{
	size_t lo = 0, hi = c->nswait;

	if (!hi)
		return NONE;
	/* first record after (l, lts) */
	PT_BSEARCH(lo, hi, mid, wait_before(&c->st->syncs[c->swait[mid]], l, lts));
	if (lo == 0)
		return NONE;
	{
		const pt_sync *y = &c->st->syncs[c->swait[lo - 1]];
		if (y->wlane != l || y->ts < pts || y->lane >= c->nl)
			return NONE;
		return y->lane;
	}
}

/* The start of GPU event ev's launch call, INT64_MIN unknown. */
static int64_t launch_ts(cp *c, uint32_t ev);

/* The wait target of the runtime call at position k ([r0, r1]): a GPU
 * event position, NONE none (docs/summary.md "Wait target"). */
static uint32_t wait_target(cp *c, uint32_t k)
{
	const pt_event *r = &c->st->ev[c->ord[k]];
	int64_t r0 = r->ts, r1 = cend_of(c, k);
	uint32_t best = NONE;
	size_t i, l;
	size_t len;
	const char *name;

	if (r->corr) {
		for (i = corr_find(c->gpuev, c->ngpuev, r->corr, &c->hgpu);
		     i < c->ngpuev && c->gpuev[i].corr == r->corr; i++) {
			const pt_event *g = &c->st->ev[c->gpuev[i].ev];
			int64_t ge = ev_end(g);
			if (ge > r0 && ge <= r1) {
				uint32_t p = pos_of(c, c->gpuev[i].ev);
				if (p != NONE && (best == NONE || cend_of(c, p) > cend_of(c, best)))
					best = p;
			}
		}
		if (best != NONE)
			return best;
	}
	if (r->name < c->nbyname && c->rtkind[r->name] == 0) {
		name = pt_strtab_get(c->st->strs, r->name, &len);
		c->rtkind[r->name] = (unsigned char)pt_key_runtime_kind(name, len);
	}
	/* A call that blocked (a launch on a full launch queue, an implicit
	 * synchronisation in cudaFree or a pageable copy) returned when the
	 * GPU made room: it waited for the GPU like a synchronisation.  On a
	 * GPU-bound trace every launch blocks so (HTA's ns_resolution trace:
	 * 0.6-2 ms per cudaLaunchKernel). */
	if ((r->name >= c->nbyname || c->rtkind[r->name] != PT_RT_SYNC) && r1 - r0 <= BLOCK_NS)
		return NONE;
	/* Newer Kineto says which stream the call waited for (cuda_sync) */
	{
		const pt_sync *y = sync_of(c, r->corr);
		uint32_t only = y && (y->kind == PT_SYNC_EVENT || y->kind == PT_SYNC_STREAM) &&
				y->lane < c->nl ? y->lane : NONE;
		if (only != NONE)
			return gpu_end_in(c, only, r0, r1);
	}
	for (l = 0; l < c->nl; l++) {
		uint32_t p;
		if (!c->st->lanes[l].gpu)
			continue;
		p = gpu_end_in(c, l, r0, r1);
		if (p != NONE && (best == NONE || cend_of(c, p) > cend_of(c, best)))
			best = p;
	}
	return best;
}

/* The join of a thread waiting in frame at position k, exclusive segment
 * [a, t]: the position of another thread's root frame that starts at or
 * after the frame and ends latest in (a, t], NONE. */
static uint32_t join_of(cp *c, size_t lane, uint32_t k, int64_t a, int64_t t)
{
	int64_t fts = pos_ts(c, k), bend = INT64_MIN;
	uint32_t best = NONE;
	size_t q;

	/* Asked for every CPU segment: only threads with frames, and each
	 * search starts from where the last one ended (t goes back). */
	for (q = 0; q < c->njl; q++) {
		size_t l = c->jl[q], lo = c->roff[l], hi = c->roff[l + 1], h = c->rh[l];
		uint32_t r;
		if (l == lane)
			continue;
		/* last root with end <= t: h first, then bisect */
		if (h > lo && h <= hi && c->rend[h - 1] <= t && (h == hi || c->rend[h] > t)) {
			lo = h;
		} else {
			PT_BSEARCH(lo, hi, mid, c->rend[mid] <= t);
			c->rh[l] = lo;
		}
		if (lo == c->roff[l])
			continue;
		r = c->roots[lo - 1];
		if (c->rend[lo - 1] > a && (best == NONE || c->rend[lo - 1] > bend) &&
		    pos_ts(c, r) >= fts) {
			best = r;
			bend = c->rend[lo - 1];
		}
	}
	return best;
}

static size_t lane_of_pos(const cp *c, uint32_t k)
{
	return c->st->ev[c->ord[k]].lane;
}

static int gpu_kind(int k)
{
	return k == PT_K_KERNEL ? PT_CP_COMPUTE : k == PT_K_COMM_KERNEL ? PT_CP_COMM : PT_CP_MEMORY;
}

/* The launch of GPU event ev: a runtime/driver position, NONE. */
static uint32_t launch_of(cp *c, uint32_t ev)
{
	const pt_event *g = &c->st->ev[ev];
	size_t i;

	if (!g->corr)
		return NONE;
	i = corr_find(c->launch, c->nlaunch, g->corr, &c->hlaunch);
	if (i == c->nlaunch || c->st->ev[c->launch[i].ev].ts > g->ts)
		return NONE;
	return pos_of(c, c->launch[i].ev);
}

/* One step back on a CPU lane from t: the deepest frame active there is
 * on the path; a launch or synchronisation that waited for a GPU event
 * moves to that event's lane, a frame that joined another thread moves to
 * it, no frame pops back to the lane that waited for this one.  Updates
 * *lanep and *tp; 1 when the walk must stop (out of memory). */
static int walk_cpu(cp *c, uint32_t *lanep, int64_t *tp, uint32_t step_lane)
{
	uint32_t lane = *lanep;
	int64_t t = *tp;
	int64_t a;
	uint32_t k = deepest(c, lane, t, &a), g, j;
	const pt_event *f;

	c->cur_target = NONE;
	if (k == NONE) {
		uint32_t nl = pop_lane(c, t, lane, step_lane);
		if (nl == NONE) {
			int64_t to = a > c->t0 ? a : c->t0;
			segment(c, to, t, PT_CP_GAP, NONE, 0);
			t = to;
		} else {
			lane = nl;
		}
		goto out;
	}
	f = &c->st->ev[c->ord[k]];
	if (f->kind == PT_K_RUNTIME || f->kind == PT_K_DRIVER) {
		g = wait_target(c, k);
		if (g != NONE && cend_of(c, g) > a && cend_of(c, g) <= t) {
			int64_t e = cend_of(c, g);
			/* pushed first: the return is part of its wait */
			if (push_waiter(c, (uint32_t)lane, k, c->ord[g],
					(uint32_t)lane_of_pos(c, g), e))
				goto stop;
			segment(c, e, t, PT_CP_LAUNCH, k, 1);
			c->cur_target = (uint32_t)(c->nw - 1);
			lane = (uint32_t)lane_of_pos(c, g);
			t = e;
			goto out;
		}
		segment(c, a, t, PT_CP_LAUNCH, k, 1);
		t = a;
		goto out;
	}
	if (f->kind == PT_K_CPU_COMM) {
		segment(c, a, t, PT_CP_COMM, k, 1);
		t = a;
		goto out;
	}
	j = join_of(c, lane, k, a, t);
	if (j != NONE) {
		int64_t e = cend_of(c, j);
		uint32_t bl = (uint32_t)lane_of_pos(c, j);
		if (push_waiter(c, (uint32_t)lane, k, NONE, bl, e))
			goto stop;
		segment(c, e, t, PT_CP_CPU, k, 1);
		lane = bl;
		t = e;
		goto out;
	}
	segment(c, a, t, PT_CP_CPU, k, 1);
	t = a;
out:
	*lanep = lane;
	*tp = t;
	return 0;
stop:
	return 1;
}

/* One step back on a GPU lane from t: the GPU event running there is on
 * the path; before it, whichever made it wait longest: its predecessor on
 * the stream, an event on another stream it waited for, or its launch.
 * Updates *lanep and *tp. */
static void walk_gpu(cp *c, uint32_t *lanep, int64_t *tp, uint32_t step_lane)
{
	uint32_t lane = *lanep;
	int64_t t = *tp;
	uint32_t g = gpu_at(c, lane, t), p = NONE, x = NONE, L, xw;
	int64_t gs, pe = INT64_MIN, lr = INT64_MIN, xe = INT64_MIN, ready;
	const pt_event *ge;
	size_t l;

	if (g == NONE) {
		c->cur_target = NONE;
		lane = pop_lane(c, t, lane, step_lane);
		goto out;
	}
	ge = &c->st->ev[c->ord[g]];
	gs = ge->ts;
	segment(c, gs, t, gpu_kind(ge->kind), g, 0);
	if (g > c->off[lane]) {
		p = g - 1;
		pe = cend_of(c, p) < gs ? cend_of(c, p) : gs;
	}
	/* A launch that returned before g started was ready at its
	 * end; one still running then (a synchronous copy) queued
	 * g at its start. */
	L = launch_of(c, c->ord[g]);
	if (L != NONE)
		lr = cend_of(c, L) <= gs ? cend_of(c, L) : pos_ts(c, L);
	ready = pe > lr ? pe : lr;
	/* a recorded stream wait (cuda_sync) names the stream;
	 * without one, a start well after both predecessors */
	xw = L != NONE ? stream_wait(c, (uint32_t)lane, pos_ts(c, L),
				      p != NONE ? launch_ts(c, c->ord[p]) : INT64_MIN)
		       : NONE;
	if (xw != NONE && ready != INT64_MIN) {
		x = gpu_end_in(c, xw, ready, gs);
		if (x != NONE)
			xe = cend_of(c, x);
	} else if (ready != INT64_MIN && gs - ready > XSTREAM_NS) {
		for (l = 0; l < c->nl; l++) {
			uint32_t q;
			if (l == lane || !c->st->lanes[l].gpu ||
			    c->st->lanes[l].pid != c->st->lanes[lane].pid)
				continue;
			q = gpu_end_in(c, l, ready, gs);
			if (q != NONE && (x == NONE || cend_of(c, q) > xe)) {
				x = q;
				xe = cend_of(c, q);
			}
		}
	}
	if (p == NONE && L == NONE && x == NONE) {
		c->cur_target = NONE;
		t = gs;
		lane = pop_lane(c, t, lane, step_lane);
		goto out;
	}
	if (p != NONE && pe >= xe && pe >= lr) {
		if (c->cur_target != NONE && c->w[c->cur_target].target == c->ord[g])
			c->w[c->cur_target].behind = c->ord[p];
		c->cur_target = NONE;
		segment(c, pe, gs, PT_CP_GAP, NONE, 0);
		t = pe;
	} else if (x != NONE && xe >= lr) {
		if (c->cur_target != NONE && c->w[c->cur_target].target == c->ord[g])
			c->w[c->cur_target].behind = c->ord[x];
		c->cur_target = NONE;
		segment(c, xe, gs, PT_CP_GAP, NONE, 0);
		lane = (uint32_t)lane_of_pos(c, x);
		t = xe;
	} else {
		c->cur_target = NONE;
		segment(c, lr, gs, PT_CP_LAUNCH, L, 0);
		lane = (uint32_t)lane_of_pos(c, L);
		t = lr;
	}
out:
	*lanep = lane;
	*tp = t;
}

static void walk(cp *c, uint32_t lane, uint32_t step_lane)
{
	int64_t t = c->t1, last_t = INT64_MAX;
	int stall = 0;

	c->nstk = 0;
	c->nw = 0;
	c->npinst = 0;
	c->cur_target = NONE;
	memset(c->split, 0, sizeof(c->split));
	while (t > c->t0 && !c->oom) {
		if (t < last_t) {
			last_t = t;
			stall = 0;
		} else if (++stall > STALL_MAX) {
			segment(c, c->t0, t, PT_CP_GAP, NONE, 0);
			break;
		}
		if (lane == NONE) {
			segment(c, c->t0, t, PT_CP_GAP, NONE, 0);
			break;
		}
		if (!c->st->lanes[lane].gpu) {
			if (walk_cpu(c, &lane, &t, step_lane))
				break;
		} else {
			walk_gpu(c, &lane, &t, step_lane);
		}
	}
}

/* ---- results ----------------------------------------------------------- */

static char *str_of(const cp *c, uint32_t id)
{
	size_t n;
	const char *s = id & KBIT ? pt_strtab_get(c->ks, id & ~KBIT, &n)
				  : pt_strtab_get(c->st->strs, id, &n);

	return x_strndup(s ? s : "", s ? n : 0);
}

/* The span a waiter blocked in: the innermost annotation of its chain,
 * else the innermost Python function, else the outermost op below the
 * step, else itself. */
static uint32_t span_of(const cp *c, uint32_t pos)
{
	uint32_t k, py = NONE, op = NONE;

	for (k = pos; k != NONE; k = c->parent[k]) {
		int kd = c->st->ev[c->ord[k]].kind;
		if (kd == PT_K_ANNOTATION)
			return k;
		if (kd == PT_K_PYTHON && py == NONE)
			py = k;
		if (kd == PT_K_CPU_OP)
			op = k;
	}
	return py != NONE ? py : op != NONE ? op : pos;
}

static int64_t launch_ts(cp *c, uint32_t ev)
{
	uint32_t L = launch_of(c, ev);

	return L != NONE ? pos_ts(c, L) : INT64_MIN;
}

static int wrec_cmp(const void *pa, const void *pb)
{
	const wrec *a = pa, *b = pb;

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return a->waiter < b->waiter ? -1 : a->waiter > b->waiter;
}

static int step_result(cp *c, pt_cp_step *o, int64_t number)
{
	size_t i, k;

	o->number = number;
	o->start_ms = (double)(c->t0 - c->w0) / 1e6;
	o->ms = (double)(c->t1 - c->t0) / 1e6;
	for (k = 0; k < PT_CP_NKINDS; k++)
		o->split[k] = c->split[k] / 1e6;
	/* merge records of the same waiter (a walk may wait in one call twice) */
	if (c->nw)
		qsort(c->w, c->nw, sizeof(*c->w), wrec_cmp);
	for (i = 0; i < c->nw && o->nwaits < PT_CP_WAITS; i++) {
		const wrec *r = &c->w[i];
		pt_cp_wait *w = &o->waits[o->nwaits];
		uint32_t wp;
		char tb[48];
		if (r->ns / 1e6 < WAIT_MIN_MS)
			break;
		wp = pos_of(c, r->waiter);
		if (wp == NONE)
			continue;
		w->ms = r->ns / 1e6;
		w->span = str_of(c, c->st->ev[c->ord[span_of(c, wp)]].name);
		w->call = str_of(c, c->st->ev[r->waiter].name);
		w->target_stream = w->behind_stream = -1;
		if (r->target != NONE) {
			w->target = str_of(c, fname(c, &c->st->ev[r->target]));
			w->target_stream = c->st->lanes[c->st->ev[r->target].lane].tid;
		} else {
			snprintf(tb, sizeof(tb), "thread %lld", (long long)c->st->lanes[r->tlane].tid);
			w->target = x_strndup(tb, strlen(tb));
		}
		if (r->behind != NONE) {
			w->behind = str_of(c, fname(c, &c->st->ev[r->behind]));
			w->behind_stream = c->st->lanes[c->st->ev[r->behind].lane].tid;
			if (!w->behind)
				return -1;
		}
		o->nwaits++;
		if (!w->span || !w->call || !w->target)
			return -1;
	}
	if (c->npinst) {
		o->inst = x_malloc(c->npinst * sizeof(*o->inst));
		o->inst_ms = x_malloc(c->npinst * sizeof(*o->inst_ms));
		if (!o->inst || !o->inst_ms)
			return -1;
		/* the walk goes backwards: store in time order */
		for (i = 0; i < c->npinst; i++) {
			o->inst[i] = c->pin[c->npinst - 1 - i].inst;
			o->inst_ms[i] = c->pin[c->npinst - 1 - i].ns / 1e6;
		}
		o->ninst = c->npinst;
	}
	return 0;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

typedef struct rank_ent {
	double v;
	uint32_t f;
} rank_ent;

static int rank_cmp(const void *pa, const void *pb)
{
	const rank_ent *a = pa, *b = pb;

	if (a->v != b->v)
		return a->v > b->v ? -1 : 1;
	return a->f < b->f ? -1 : a->f > b->f;
}

/* Insert e into the descending list t[0..*n) of at most k entries. */
static void top_insert(rank_ent *t, size_t *n, size_t k, rank_ent e)
{
	size_t j;

	if (*n == k && rank_cmp(&e, &t[k - 1]) >= 0)
		return;
	j = *n < k ? (*n)++ : k - 1;
	while (j > 0 && rank_cmp(&e, &t[j - 1]) < 0) {
		t[j] = t[j - 1];
		j--;
	}
	t[j] = e;
}

/* Keep the functions docs/summary.md names, ordered by total ms. */
static int keep_funcs(cp *c, pt_cpath *out)
{
	size_t ns = c->nsteps, i, s, k, nk = 0;
	unsigned char *keep = x_calloc(c->nf + 1, 1);
	double *med = x_malloc((c->nf + 1) * sizeof(*med)), *tmp = x_malloc((ns + 1) * sizeof(*tmp));
	rank_ent *r = x_malloc((c->nf + 1) * sizeof(*r));
	int rc = -1;

	if (!keep || !med || !tmp || !r)
		goto out;
	for (i = 0; i < c->nf; i++) {
		double *ms = x_malloc((ns + 1) * sizeof(*ms));
		if (!ms)
			goto out;
		for (s = 0; s < ns; s++)
			ms[s] = (double)c->f[i].ns[s] / 1e6;
		x_free(c->f[i].ns);
		c->f[i].ns = NULL;
		c->f[i].ms = ms;
	}
	for (i = 0; i < c->nf; i++) {
		memcpy(tmp, c->f[i].ms, ns * sizeof(*tmp));
		qsort(tmp, ns, sizeof(*tmp), cmp_dbl);
		med[i] = ns % 2 ? tmp[ns / 2] : (tmp[ns / 2 - 1] + tmp[ns / 2]) / 2;
	}
	for (s = 0; s < ns; s++) {
		rank_ent top[KEEP_TOP], grown[KEEP_GROWN];
		size_t nt = 0, ng = 0;
		/* the K largest by a sorted insert (a full sort per step was most
		 * of this function on the bench trace) */
		for (i = 0; i < c->nf; i++) {
			rank_ent e = { c->f[i].ms[s], (uint32_t)i };
			if (e.v > 0)
				top_insert(top, &nt, KEEP_TOP, e);
			e.v = c->f[i].ms[s] - med[i];
			if (ns >= 2 && e.v >= GROWN_MIN_MS)
				top_insert(grown, &ng, KEEP_GROWN, e);
		}
		for (i = 0; i < nt; i++)
			keep[top[i].f] = 1;
		for (i = 0; i < ng; i++)
			keep[grown[i].f] = 1;
	}
	for (i = 0; i < c->nf; i++) {
		if (!keep[i])
			continue;
		r[nk].v = 0;
		for (s = 0; s < ns; s++)
			r[nk].v += c->f[i].ms[s];
		r[nk++].f = (uint32_t)i;
	}
	qsort(r, nk, sizeof(*r), rank_cmp);
	out->funcs = x_calloc(nk + 1, sizeof(*out->funcs));
	if (!out->funcs)
		goto out;
	for (k = 0; k < nk; k++) {
		fslot *f = &c->f[r[k].f];
		pt_cp_func *o = &out->funcs[out->nfuncs];
		o->key = str_of(c, f->name);
		if (!o->key)
			goto out;
		o->kind = f->kind;
		o->ms = f->ms; /* ownership moves */
		f->ms = NULL;
		o->self_ms = x_malloc((ns + 1) * sizeof(*o->self_ms));
		if (!o->self_ms)
			goto out;
		for (s = 0; s < ns; s++)
			o->self_ms[s] = (double)f->self[s] / 1e6;
		if (is_gpu_kind(f->kind)) {
			o->longest_ms = x_malloc((ns + 1) * sizeof(*o->longest_ms));
			if (!o->longest_ms)
				goto out;
			for (s = 0; s < ns; s++)
				o->longest_ms[s] = (double)f->longest[s] / 1e6;
		}
		out->nfuncs++;
	}
	rc = 0;
out:
	x_free(r);
	x_free(tmp);
	x_free(med);
	x_free(keep);
	return rc;
}

static void cp_free(cp *c)
{
	size_t i;

	for (i = 0; i < c->nf; i++) {
		x_free(c->f[i].ms);
		x_free(c->f[i].ns);
		x_free(c->f[i].self);
		x_free(c->f[i].longest);
	}
	x_free(c->f);
	pt_hmap_free(&c->fmap);
	x_free(c->w);
	x_free(c->pin);
	x_free(c->inst);
	x_free(c->ysync);
	x_free(c->swait);
	x_free(c->launch);
	x_free(c->gpuev);
	x_free(c->roots);
	x_free(c->rend);
	x_free(c->jl);
	x_free(c->sev);
	x_free(c->rh);
	x_free(c->roff);
	x_free(c->clipbit);
	x_free(c->frbit);
	x_free(c->frts);
	x_free(c->clip);
	x_free(c->parent);
	x_free(c->ord);
	x_free(c->off);
	x_free(c->hint);
	x_free(c->byname);
	x_free(c->kmap);
	pt_strtab_free(c->ks);
	x_free(c->pa);
	pt_hmap_free(&c->pmap);
	x_free(c->rtkind);
}

void pt_cpath_free(pt_cpath *cp_)
{
	size_t i, k;

	if (!cp_)
		return;
	for (i = 0; i < cp_->nsteps; i++) {
		pt_cp_step *s = &cp_->steps[i];
		for (k = 0; k < s->nwaits; k++) {
			x_free(s->waits[k].span);
			x_free(s->waits[k].call);
			x_free(s->waits[k].target);
			x_free(s->waits[k].behind);
		}
		x_free(s->inst);
		x_free(s->inst_ms);
	}
	for (i = 0; i < cp_->nfuncs; i++) {
		x_free(cp_->funcs[i].key);
		x_free(cp_->funcs[i].ms);
		x_free(cp_->funcs[i].self_ms);
		x_free(cp_->funcs[i].longest_ms);
	}
	x_free(cp_->steps);
	x_free(cp_->funcs);
	x_free(cp_);
}

/* The step's thread: the lane of its ProfilerStep event (ev: the step
 * events, sorted by start; a binary search per step: a scan of the store
 * per step cost 165 M iterations on the 224-step bench trace). */
static uint32_t step_lane_of(const pt_store *st, const uint32_t *ev, size_t n, const pt_step *sp,
			     uint32_t fallback)
{
	size_t lo = 0, hi = n;

	PT_BSEARCH(lo, hi, mid, st->ev[ev[mid]].ts < sp->ts);
	for (; lo < n && st->ev[ev[lo]].ts == sp->ts; lo++)
		if (st->ev[ev[lo]].lane < st->nlanes && !st->lanes[st->ev[ev[lo]].lane].gpu)
			return st->ev[ev[lo]].lane;
	return fallback;
}

static int ev_ts_cmp(const void *pa, const void *pb, void *ctx)
{
	const pt_event *ev = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	if (ev[a].ts != ev[b].ts)
		return ev[a].ts < ev[b].ts ? -1 : 1;
	return a < b ? -1 : a > b;
}

static int step_ts_cmp(const void *pa, const void *pb)
{
	const pt_step *a = pa, *b = pb;

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->number < b->number ? -1 : a->number > b->number;
}

/* Hand patterns.c its frames: the positions marked in frbit, lane after
 * lane, are the order it wants; ord is compacted to them in place and
 * given away (a second array of them, filled beside the index, held
 * 0.9 MiB more at the peak on tf_200M: 32.5 -> 31.6 MiB). */
static void order_give(cp *c)
{
	pt_frame_order *fr = c->fr;
	size_t q, n = 0, nw = c->off[c->nl] / 64 + 1;
	uint32_t *o;

	for (q = 0; q < nw; q++) {
		uint64_t x = c->frbit[q];
		for (; x; x &= x - 1)
			c->ord[n++] = c->ord[q * 64 + (size_t)__builtin_ctzll(x)];
	}
	/* shrinking gives the tail back (glibc: mremap of the mapping) */
	o = x_reallocarray(c->ord, n + 1, sizeof(*o));
	fr->fo = o ? o : c->ord;
	c->ord = NULL;
	fr->ts = c->frts;
	c->frts = NULL;
	fr->ok = 1;
}

int pt_cpath_build(const pt_store *st, const pt_window *w, const pt_coll_build *coll,
		   pt_frame_order *fr, pt_summary *s, pt_error *err)
{
	cp c;
	pt_cpath *out = NULL;
	pt_step *steps = NULL;
	size_t i, ns, *cnt = NULL, nevents = 0;
	uint32_t main_lane = NONE, last_lane = NONE;
	int64_t last_end = INT64_MIN;
	int rc = PT_ENOMEM, index_ok = 0;

	memset(&c, 0, sizeof(c));
	c.st = st;
	c.win = *w;
	c.fr = fr;
	c.w0 = w->start;
	s->cpath = NULL;
	if (index_build(&c))
		goto out;
	index_ok = 1;
	if (inst_build(&c, coll) || sync_build(&c))
		goto out;
	c.nbyname = pt_strtab_count(st->strs);
	c.byname = x_calloc(c.nbyname + 1, sizeof(*c.byname));
	c.rtkind = x_calloc(c.nbyname + 1, 1);
	c.kmap = x_calloc(c.nbyname + 1, sizeof(*c.kmap));
	c.ks = pt_strtab_new();
	if (!c.byname || !c.rtkind || !c.kmap || !c.ks)
		goto out;
	/* The thread of most frames, and the lane of the event ending last. */
	cnt = x_calloc(st->nlanes + 1, sizeof(*cnt));
	if (!cnt)
		goto out;
	for (i = 0; i < st->nlanes; i++) {
		nevents += c.off[i + 1] - c.off[i];
		if (!st->lanes[i].gpu && (main_lane == NONE ||
					  c.off[i + 1] - c.off[i] > c.off[main_lane + 1] - c.off[main_lane]))
			main_lane = (uint32_t)i;
		if (!st->nsteps && c.off[i + 1] > c.off[i]) {
			int64_t e = cend_of(&c, (uint32_t)(c.off[i + 1] - 1));
			size_t k;
			for (k = c.off[i]; k < c.off[i + 1]; k++)
				if (cend_of(&c, k) > e)
					e = cend_of(&c, k);
			if (e > last_end || (e == last_end && st->lanes[i].gpu)) {
				last_end = e;
				last_lane = (uint32_t)i;
			}
		}
	}
	if (!nevents || main_lane == NONE || w->end <= w->start) {
		rc = PT_OK;
		goto out;
	}
	ns = st->nsteps ? st->nsteps : 1;
	if (ns > PT_CP_STEPS_MAX)
		ns = PT_CP_STEPS_MAX;
	c.nsteps = ns;
	out = x_calloc(1, sizeof(*out));
	if (!out)
		goto out;
	out->steps = x_calloc(ns, sizeof(*out->steps));
	if (!out->steps)
		goto out;
	if (st->nsteps) {
		steps = x_malloc(st->nsteps * sizeof(*steps));
		if (!steps)
			goto out;
		qsort_r(c.sev, c.nsev, sizeof(*c.sev), ev_ts_cmp, (void *)st->ev);
		memcpy(steps, st->steps, st->nsteps * sizeof(*steps));
		qsort(steps, st->nsteps, sizeof(*steps), step_ts_cmp);
	}
	for (i = 0; i < ns; i++) {
		uint32_t sl;
		int64_t number;
		c.step = i;
		if (steps) {
			c.t0 = steps[i].ts;
			c.t1 = pt_end(steps[i].ts, steps[i].dur);
			number = steps[i].number;
			sl = step_lane_of(st, c.sev, c.nsev, &steps[i], main_lane);
			walk(&c, sl, sl);
		} else {
			c.t0 = w->start;
			c.t1 = w->end;
			number = -1;
			walk(&c, last_lane, main_lane);
		}
		if (c.oom || flush_credits(&c) || step_result(&c, &out->steps[i], number))
			goto out;
		out->nsteps++;
	}
	if (keep_funcs(&c, out))
		goto out;
	s->cpath = out;
	out = NULL;
	rc = PT_OK;
out:
	if (rc)
		pt_error_set(err, PT_ENOMEM, -1, "out of memory while finding the critical path");
	else if (fr && index_ok && c.frok)
		order_give(&c);
	pt_cpath_free(out);
	x_free(steps);
	x_free(cnt);
	cp_free(&c);
	return rc;
}
