/*
 * patterns.c - from one worker's events to its behaviour patterns
 * (docs/design.md "Behaviour pattern", "Function key"): groups events by
 * (class, key), nests each CPU thread's frames to key Python/CPU functions
 * by call stack and to cut them into exclusive segments owned by the
 * deepest frame, runs the attribution sweep (attribute.c), and computes
 * the per-pattern statistics.
 *
 * Flow: pt_store + window (window.c) -> pt_patterns_build -> pt_summary
 * patterns, class_ms, gpu_util (summary.c does the rest).
 *
 * Stacks are interned as (parent node, name) pairs, so a frame's key costs
 * one hash probe; key strings are materialised only for kept patterns.
 *
 * Memory: beside the store (40 bytes per event) this keeps 4 bytes per
 * event, 4 per frame and 8 per non-frame item, twice that while sorting;
 * items themselves are made for the sweep as it goes (nf_next, seg_next).
 * Peak RSS of summarize on a 198 MB TraceLens trace with 520,685 events
 * went from 89 to 31 MiB (0.47 to 0.16 x the file), on a 202 MB DLRM one
 * from 62 to 32 MiB, with byte-identical summaries.
 */
#include "analysis.h"
#include "breakdown.h"
#include "collectives.h"
#include "patterns.h"
#include "stats.h"
#include "../model/commkind.h"
#include "../model/keys.h"
#include "../util/strbuf.h"
#include "../util/bsearch.h"
#include "../util/hash.h"
#include "../util/xalloc.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NONE32 UINT32_MAX
#define ROOT 0u

/* Items made per call of the sweep's runs (seg_next: at least, a frame may
 * close many): 6 KB of chunk per run. */
#define SEG_CHUNK 256
/* Frames ahead whose event a pass in nest order asks for early. */
#define PF_AHEAD 16

/* A pattern while it is being built. */
typedef struct bpat {
	uint32_t key;         /* store name id, or stack node id (Python class) */
	uint8_t cls;
	uint8_t span;         /* a Python stack whose frame is a user annotation */
	uint64_t count;
	uint64_t clipped_ns;  /* sum of durations clipped to the window */
} bpat;

/* An open frame on the nesting stack of one thread. */
typedef struct open_frame {
	int64_t end;      /* clipped to the parent's end */
	uint32_t node;    /* stack node (key) */
	uint32_t pat;     /* Python pattern owning its exclusive time, NONE32 for CPU_COMM */
	uint32_t stack;   /* old-style "Call stack" id in effect (own or inherited) */
	uint8_t dl;       /* inside a data-loader frame (breakdown.c) */
} open_frame;

/* An open frame when the nesting is replayed for the sweep (seg_next). */
typedef struct open_seg {
	int64_t end;
	uint32_t pat;
} open_seg;

/* One presorted run of Python items for the sweep: the frames fo[i..end)
 * of one or more whole threads, whose exclusive segments seg_next makes a
 * chunk at a time by replaying their nesting. */
typedef struct segrun {
	size_t i, end;    /* next frame, end of the run's frames in fo */
	uint32_t lane;    /* thread being replayed; NONE32 before the first */
	int64_t cur;      /* as in nest_lane */
	open_seg *stk;
	size_t depth, stkcap;
	pt_item *buf;     /* the chunk handed to the sweep */
	size_t bufcap;
} segrun;

typedef struct builder {
	const pt_store *st;
	pt_window w;

	bpat *pats;
	size_t npats, patcap;
	uint32_t *map[PT_C_COUNT];  /* store name id -> pattern + 1, per class */
	uint32_t nnames;            /* pt_strtab_count(st->strs) */

	/* Memory (see pt_patterns_build): what is kept per event is 4 bytes
	 * of evpat and, per frame, 4 bytes of fo; items are not stored. */
	uint32_t *evpat;  /* event -> the pattern counting it, NONE32 if none */
	size_t nrec;      /* counted events */

	/* The items of non-frame events (GPU, runtime, collectives), by
	 * start: (start - window start) << nfib | event id when that fits in
	 * 64 bits (nf), else pairs (nfkv); nf_next makes the items. */
	uint64_t *nf;
	pt_kv *nfkv;
	size_t nnf, nfpos;
	unsigned nfib;
	uint64_t nfmask;
	pt_item *nfbuf;

	uint32_t *fo;     /* frames (event ids) by thread, start, frame_cmp */
	pt_frame_order *fro; /* the same from the critical path's index, NULL */
	segrun *runs;     /* Python item runs for the sweep */
	size_t nruns, runcap;
	int lane_seg;     /* nest_lane: the thread has items; their first, last start */
	int64_t lane_first, lane_last;

	/* Stack nodes: node 0 is the root.  name is an id in loc. */
	pt_strtab *loc;
	uint32_t *node_parent, *node_name, *node_pat;
	size_t nnodes, nodecap, nodecap2, nodecap3;
	pt_hmap nodes;            /* node_hash(parent, name) -> node id */
	uint32_t *norm;           /* store name id -> loc id of its normalised form */
	uint32_t *stack_node;     /* store string id of a "Call stack" -> node */
	char *nbuf;
	size_t nbufcap;

	/* Where the GPU time goes (breakdown.c): frames of the launching
	 * thread are fed to it as they are nested. */
	pt_bd_builder *bd;
	uint32_t cur_lane, main_lane;
	uint8_t *dlmemo;          /* loc name id -> 1 + is data loader, 0 unknown */
	size_t dlcap;
	pt_coll_build *coll;      /* collective spans fed from the sweep's items, or NULL */
} builder;

/* ---- patterns and counted events --------------------------------------- */

static uint32_t new_pat(builder *b, uint32_t key, int cls)
{
	if (b->npats >= NONE32 - 1 || X_GROW(b->pats, b->patcap, b->npats + 1))
		return NONE32;
	b->pats[b->npats].key = key;
	b->pats[b->npats].cls = (uint8_t)cls;
	b->pats[b->npats].span = 0;
	b->pats[b->npats].count = 0;
	b->pats[b->npats].clipped_ns = 0;
	return (uint32_t)b->npats++;
}

static uint32_t named_pat(builder *b, int cls, uint32_t name)
{
	uint32_t p;

	if (name >= b->nnames)
		name = 0; /* unknown id reads as "" (strtab contract) */
	if (!b->map[cls]) {
		b->map[cls] = x_calloc(b->nnames, sizeof(uint32_t));
		if (!b->map[cls])
			return NONE32;
	}
	if (b->map[cls][name])
		return b->map[cls][name] - 1;
	p = new_pat(b, name, cls);
	if (p != NONE32)
		b->map[cls][name] = p + 1;
	return p;
}

/* Count event ev, spanning [ts, end), for pattern pat (it overlaps the
 * window); its duration is found again through evpat for the statistics. */
static int count_ev(builder *b, uint32_t pat, uint32_t ev, int64_t ts, int64_t end)
{
	int64_t s = ts > b->w.start ? ts : b->w.start;

	if (end > b->w.end)
		end = b->w.end;
	b->pats[pat].count++;
	if (end > s)
		b->pats[pat].clipped_ns += (uint64_t)end - (uint64_t)s;
	b->evpat[ev] = pat; /* each event is counted at most once */
	b->nrec++;
	return PT_OK;
}

/* Clip [*s, *e) to the window; 0 when nothing of it is inside (items and
 * segments of no length are dropped). */
static inline int clip_window(const builder *b, int64_t *s, int64_t *e)
{
	if (*s < b->w.start)
		*s = b->w.start;
	if (*e > b->w.end)
		*e = b->w.end;
	return *e > *s;
}

/* Event ev, spanning [ts, end), is an item: note its start if it lasts
 * inside the window (items are clipped to it; empty ones dropped). */
static void nf_add(builder *b, uint32_t ev, int64_t s, int64_t e)
{
	if (!clip_window(b, &s, &e))
		return;
	if (b->nf) {
		b->nf[b->nnf++] = ((uint64_t)s - (uint64_t)b->w.start) << b->nfib | ev;
	} else {
		b->nfkv[b->nnf].k = (uint64_t)s - (uint64_t)b->w.start;
		b->nfkv[b->nnf++].v = ev;
	}
}

/* ---- stack nodes --------------------------------------------------------- */

static uint32_t node_hash(uint32_t parent, uint32_t name)
{
	uint64_t h = ((uint64_t)parent << 32 | name) * 0x9e3779b97f4a7c15ULL;
	return (uint32_t)(h >> 32);
}

/* The node for (parent, name), created if new; NONE32 on allocation failure. */
static uint32_t node_get(builder *b, uint32_t parent, uint32_t name)
{
	uint32_t h = node_hash(parent, name), id;
	size_t it = 0;

	while ((id = pt_hmap_next(&b->nodes, h, &it)) != PT_HMAP_NONE)
		if (b->node_parent[id] == parent && b->node_name[id] == name)
			return id;
	if (b->nnodes >= NONE32 - 1 || X_GROW(b->node_parent, b->nodecap, b->nnodes + 1) ||
	    X_GROW(b->node_name, b->nodecap2, b->nnodes + 1) ||
	    X_GROW(b->node_pat, b->nodecap3, b->nnodes + 1) ||
	    pt_hmap_put(&b->nodes, h, (uint32_t)b->nnodes))
		return NONE32;
	id = (uint32_t)b->nnodes++;
	b->node_parent[id] = parent;
	b->node_name[id] = name;
	b->node_pat[id] = NONE32;
	return id;
}

/* Intern the normalised form of s[0..n) in loc. */
static uint32_t norm_str(builder *b, const char *s, size_t n)
{
	size_t m;

	if (X_GROW(b->nbuf, b->nbufcap, n + 64))
		return NONE32;
	m = pt_key_normalize_name(s, n, b->nbuf, b->nbufcap);
	return pt_strtab_intern(b->loc, b->nbuf, m);
}

static uint32_t norm_name(builder *b, uint32_t name)
{
	const char *s;
	size_t n;
	uint32_t id;

	if (name >= b->nnames)
		name = 0;
	if (b->norm[name] != NONE32)
		return b->norm[name];
	s = pt_strtab_get(b->st->strs, name, &n);
	id = norm_str(b, s, n);
	if (id != NONE32)
		b->norm[name] = id;
	return id;
}

/* Node chain for an old-style "Call stack" string: frames separated by
 * ';', innermost first (as torch <= 1.x wrote them), so built from the
 * last frame to the first. */
static uint32_t stack_chain(builder *b, uint32_t stack)
{
	const char *s, *p, *q;
	size_t n, len;
	uint32_t node = ROOT, id;

	if (stack >= b->nnames)
		return ROOT;
	if (!b->stack_node) {
		b->stack_node = x_malloc(b->nnames * sizeof(uint32_t));
		if (!b->stack_node)
			return NONE32;
		memset(b->stack_node, 0xff, b->nnames * sizeof(uint32_t));
	}
	if (b->stack_node[stack] != NONE32)
		return b->stack_node[stack];
	s = pt_strtab_get(b->st->strs, stack, &n);
	q = s + n; /* end of the frame being cut, scanning backwards */
	while (q > s) {
		p = q;
		while (p > s && p[-1] != ';')
			p--;
		/* trim blanks around the frame */
		{
			const char *a = p, *z = q;
			while (a < z && isspace((unsigned char)*a))
				a++;
			while (z > a && isspace((unsigned char)z[-1]))
				z--;
			len = (size_t)(z - a);
			if (len) {
				id = norm_str(b, a, len);
				if (id == NONE32)
					return NONE32;
				node = node_get(b, node, id);
				if (node == NONE32)
					return NONE32;
			}
		}
		q = p > s ? p - 1 : s;
	}
	b->stack_node[stack] = node;
	return node;
}

/* ---- frames -------------------------------------------------------------- */

/* Frames (event ids into arg, the store's events) starting together on one
 * thread: longest first, then by pt_kind_nest_rank, then file order. */
static int frame_cmp(const void *pa, const void *pb, void *arg)
{
	const pt_event *E = arg;
	uint32_t ia = *(const uint32_t *)pa, ib = *(const uint32_t *)pb;
	const pt_event *a = &E[ia], *b = &E[ib];
	uint64_t da = (uint64_t)pt_end(a->ts, a->dur) - (uint64_t)a->ts;
	uint64_t db = (uint64_t)pt_end(b->ts, b->dur) - (uint64_t)b->ts;
	int ra = pt_kind_nest_rank(a->kind), rb = pt_kind_nest_rank(b->kind);

	if (da != db)
		return da > db ? -1 : 1;
	if (ra != rb)
		return ra - rb;
	return ia < ib ? -1 : ia > ib;
}

static uint32_t frame_lane(const pt_store *st, const pt_event *e)
{
	return e->lane < st->nlanes ? e->lane : (uint32_t)st->nlanes;
}

/* nest_lane meets the exclusive segment [s, e) of an open frame: it only
 * notes the thread's first and last item start (to group threads into
 * runs); seg_next makes the items, clipped and dropped alike. */
static void seg_note(builder *b, const open_frame *f, int64_t s, int64_t e)
{
	if (f->pat == NONE32)
		return; /* a CPU collective: its whole span is a comm item */
	if (!clip_window(b, &s, &e))
		return;
	if (!b->lane_seg)
		b->lane_first = s;
	b->lane_seg = 1;
	b->lane_last = s;
}

/* Nest the frames of one thread (fo[0..n), event ids sorted by start asc,
 * duration desc) and give them their keys and counts.  Their exclusive
 * segments are made later by seg_next, which repeats the nesting without
 * the keys. */
static int nest_lane(builder *b, const uint32_t *fo, size_t n, open_frame **stk, size_t *stkcap)
{
	const pt_event *E = b->st->ev;
	size_t depth = 0, i;
	int64_t cur = 0;
	int rc;

	for (i = 0; i < n; i++) {
		const pt_event *f = &E[fo[i]];
		int64_t ts = f->ts, end = pt_end(f->ts, f->dur);
		open_frame *top, nf;
		uint32_t base, name;

		if (i + PF_AHEAD < n)
			__builtin_prefetch(&E[fo[i + PF_AHEAD]]);

		while (depth && (*stk)[depth - 1].end <= ts) {
			top = &(*stk)[--depth];
			seg_note(b, top, cur, top->end);
			cur = top->end;
		}
		top = depth ? &(*stk)[depth - 1] : NULL;
		nf.end = end;
		if (top && nf.end > top->end)
			nf.end = top->end; /* overruns its parent (clock skew): clip */
		if (top)
			seg_note(b, top, cur, ts);
		cur = ts;

		/* Key: an own "Call stack" that differs from the one in effect
		 * restarts the key from that stack; otherwise extend the parent. */
		nf.stack = top ? top->stack : 0;
		base = top ? top->node : ROOT;
		if (f->stack && f->stack != nf.stack) {
			base = stack_chain(b, f->stack);
			nf.stack = f->stack;
		}
		name = norm_name(b, f->name);
		if (base == NONE32 || name == NONE32)
			return PT_ENOMEM;
		nf.node = node_get(b, base, name);
		if (nf.node == NONE32)
			return PT_ENOMEM;
		nf.dl = top ? top->dl : 0;
		if (b->bd && b->cur_lane == b->main_lane) {
			int dl_outer = 0;
			if (name >= b->dlcap) {
				size_t old = b->dlcap;
				if (X_GROW(b->dlmemo, b->dlcap, (size_t)name + 1))
					return PT_ENOMEM;
				memset(b->dlmemo + old, 0, b->dlcap - old);
			}
			if (!b->dlmemo[name]) {
				size_t ln;
				const char *ls = pt_strtab_get(b->loc, name, &ln);
				b->dlmemo[name] = (uint8_t)(1 + pt_bd_is_dataloader(ls, ln));
			}
			if (b->dlmemo[name] == 2 && !nf.dl)
				dl_outer = nf.dl = 1;
			if (pt_bd_node_grow(b->bd, b->nnodes))
				return PT_ENOMEM;
			pt_bd_frame(b->bd, b->cur_lane, nf.node, (int)depth, dl_outer, ts, nf.end);
		}
		nf.pat = NONE32;
		if (f->kind != PT_K_CPU_COMM) {
			nf.pat = b->node_pat[nf.node];
			if (nf.pat == NONE32) {
				nf.pat = new_pat(b, nf.node, PT_C_PYTHON);
				if (nf.pat == NONE32)
					return PT_ENOMEM;
				b->node_pat[nf.node] = nf.pat;
			}
			if (f->kind == PT_K_ANNOTATION)
				b->pats[nf.pat].span = 1;
			if ((rc = count_ev(b, nf.pat, fo[i], ts, end)))
				return rc;
		}
		if (depth == *stkcap && X_GROW(*stk, *stkcap, depth + 1))
			return PT_ENOMEM;
		(*stk)[depth++] = nf;
	}
	while (depth) {
		open_frame *top = &(*stk)[--depth];
		seg_note(b, top, cur, top->end);
		cur = top->end;
	}
	return PT_OK;
}

/* Put the exclusive segment [s, e) of an open frame owned by pattern pat
 * into buf[*n] as a Python item, clipped to the window; an empty one (and
 * a CPU collective's, pat NONE32) is dropped. */
static inline void seg_put(const builder *b, pt_item *buf, size_t *n, uint32_t pat, int64_t s,
			   int64_t e)
{
	pt_item *it;

	if (pat == NONE32)
		return;
	if (!clip_window(b, &s, &e))
		return;
	it = &buf[(*n)++];
	it->s = s;
	it->e = e;
	it->pat = pat;
	it->cls = PT_C_PYTHON;
	it->kernel = 0;
}

/* pt_item_runs.next for the Python items: replay the nesting of run r's
 * threads (the frames' clipped ends and patterns; nest_lane did the keys)
 * and emit the exclusive segments exactly as nest_lane met them, thread
 * after thread.  Storing those items instead (24 bytes each, 2 per frame)
 * made them the largest array of the summary, at the peak with the
 * store.  Replaying is cheaper than writing and reading them back was
 * (frames as event ids, do_frames): docs/bench.md, "Code shaped for
 * speed". */
static size_t seg_next(void *ctx, size_t r, const pt_item **chunk)
{
	builder *b = ctx;
	segrun *R = &b->runs[r];
	const pt_event *E = b->st->ev;
	size_t n = 0;

	while (n < SEG_CHUNK) {
		const pt_event *f = NULL;
		uint32_t lane = NONE32;
		open_seg nf;

		/* one frame emits at most depth + 1 items, a thread's end depth */
		if (R->depth + n + 1 > R->bufcap && X_GROW(R->buf, R->bufcap, R->depth + n + 1))
			return (size_t)-1;
		if (R->i < R->end) {
			f = &E[b->fo[R->i]];
			lane = frame_lane(b->st, f);
			if (R->i + PF_AHEAD < R->end) {
				__builtin_prefetch(&E[b->fo[R->i + PF_AHEAD]]);
				__builtin_prefetch(&b->evpat[b->fo[R->i + PF_AHEAD]]);
			}
		}
		if (lane != R->lane) {
			/* the thread ends: close its open frames */
			while (R->depth) {
				open_seg *top = &R->stk[--R->depth];
				seg_put(b, R->buf, &n, top->pat, R->cur, top->end);
				R->cur = top->end;
			}
			if (!f)
				break;
			R->lane = lane;
			R->cur = 0;
		}
		while (R->depth && R->stk[R->depth - 1].end <= f->ts) {
			open_seg *top = &R->stk[--R->depth];
			seg_put(b, R->buf, &n, top->pat, R->cur, top->end);
			R->cur = top->end;
		}
		nf.end = pt_end(f->ts, f->dur);
		if (R->depth) {
			open_seg *top = &R->stk[R->depth - 1];
			if (nf.end > top->end)
				nf.end = top->end;
			seg_put(b, R->buf, &n, top->pat, R->cur, f->ts);
		}
		R->cur = f->ts;
		nf.pat = f->kind == PT_K_CPU_COMM ? NONE32 : b->evpat[b->fo[R->i]];
		if (R->depth == R->stkcap && X_GROW(R->stk, R->stkcap, R->depth + 1))
			return (size_t)-1;
		R->stk[R->depth++] = nf;
		R->i++;
	}
	if (!n) { /* the run is done */
		x_free(R->buf);
		x_free(R->stk);
		R->buf = NULL;
		R->stk = NULL;
		R->bufcap = R->stkcap = 0;
	}
	*chunk = R->buf;
	return n;
}

/* The non-frame items, made from the events in start order (the order
 * pt_attr_sweep's radix sort of an item array gave them: stable, so equal
 * starts in event order).  Keeping 8 bytes per item here instead of the
 * 24-byte item (plus 16 while sorting it), together with sorting frames
 * in place, took peak RSS from 164 to 144 MB on the 1 GB DLRM trace
 * (2.75 M events, 735,839 such items). */
static size_t nf_next(builder *b, const pt_item **chunk)
{
	const pt_event *E = b->st->ev;
	size_t n = 0;

	for (; n < SEG_CHUNK && b->nfpos < b->nnf; b->nfpos++) {
		uint32_t id = b->nf ? (uint32_t)(b->nf[b->nfpos] & b->nfmask) : b->nfkv[b->nfpos].v;
		const pt_event *e = &E[id];
		int64_t end = pt_end(e->ts, e->dur);
		pt_item *it = &b->nfbuf[n++];

		it->s = e->ts > b->w.start ? e->ts : b->w.start;
		it->e = end < b->w.end ? end : b->w.end;
		it->pat = b->evpat[id];
		it->cls = (uint8_t)pt_kind_class(e->kind);
		it->kernel = e->kind == PT_K_KERNEL || e->kind == PT_K_COMM_KERNEL;
	}
	*chunk = b->nfbuf;
	return n;
}

/* The sweep's runs: the non-frame items (when there are any) first, as
 * their unsorted array was, then the Python runs. */
static size_t run_next(void *ctx, size_t r, const pt_item **chunk)
{
	builder *b = ctx;
	size_t n;

	if (b->nnf && r == 0)
		n = nf_next(b, chunk);
	else
		n = seg_next(b, b->nnf ? r - 1 : r, chunk);
	/* The spans before collective arrivals see the same items the sweep
	 * does (lockstep cause functions; no spans, no cost). */
	if (b->coll && n && n != (size_t)-1)
		pt_coll_tap(b->coll, r, *chunk, n);
	return n;
}

#define MERGE_MAX_RUNS 64

/* Sort one thread's frames in[0..n) (event ids into E) by start into
 * out[0..n).  They come in file order, which Kineto writes as a few sorted
 * runs per thread (one per category: 1 or 2 in every public trace we
 * have), so a heap merge of the runs does it in one pass; with many runs
 * (or hostile input), a radix sort.  Equal starts may come out in any
 * order: nest order is settled by frame_cmp afterwards.  This replaced a
 * global radix sort + gather, several times slower (docs/bench.md, "Code
 * shaped for speed"). */
static int sort_lane(const pt_event *E, const uint32_t *in, uint32_t *out, size_t n)
{
	struct head {
		int64_t ts;
		size_t pos, end;
	} h[MERGE_MAX_RUNS], x;
	size_t runs = 1, i, k, c, nh;
	int64_t mints, maxts, prev;
	pt_order ord;

	for (i = 1, prev = n ? E[in[0]].ts : 0; i < n; i++) {
		int64_t t = E[in[i]].ts;
		runs += t < prev;
		prev = t;
	}
	if (runs == 1) {
		memcpy(out, in, n * sizeof(*in));
		return PT_OK;
	}
	if (runs <= MERGE_MAX_RUNS) {
		for (i = 0, nh = 0, prev = 0; i < n; i++) {
			int64_t t = E[in[i]].ts;
			if (i == 0 || t < prev) {
				h[nh].ts = t;
				h[nh].pos = i;
				nh++;
			}
			h[nh - 1].end = i + 1;
			prev = t;
		}
		/* insertion sort the heads: a sorted array is a heap */
		for (i = 1; i < nh; i++) {
			x = h[i];
			for (k = i; k > 0 && h[k - 1].ts > x.ts; k--)
				h[k] = h[k - 1];
			h[k] = x;
		}
		for (k = 0; k < n; k++) {
			out[k] = in[h[0].pos];
			if (++h[0].pos < h[0].end)
				h[0].ts = E[in[h[0].pos]].ts;
			else if (--nh)
				h[0] = h[nh];
			/* sift the head down */
			x = h[0];
			for (i = 0; (c = 2 * i + 1) < nh; i = c) {
				if (c + 1 < nh && h[c + 1].ts < h[c].ts)
					c++;
				if (x.ts <= h[c].ts)
					break;
				h[i] = h[c];
			}
			h[i] = x;
		}
		return PT_OK;
	}
	for (i = 0, mints = INT64_MAX, maxts = INT64_MIN; i < n; i++) {
		if (E[in[i]].ts < mints)
			mints = E[in[i]].ts;
		if (E[in[i]].ts > maxts)
			maxts = E[in[i]].ts;
	}
	if (pt_order_init(&ord, n, (uint64_t)maxts - (uint64_t)mints))
		return PT_ENOMEM;
	for (i = 0; i < n; i++)
		pt_order_set(&ord, i, (uint64_t)E[in[i]].ts - (uint64_t)mints);
	pt_order_sort(&ord);
	for (k = 0; k < n; k++)
		out[k] = in[pt_order_at(&ord, k)];
	pt_order_free(&ord);
	return PT_OK;
}

/* Frames fo[0..n) of one thread by start: those that start together by
 * frame_cmp. */
static void sort_ties(const pt_event *E, uint32_t *fo, size_t n)
{
	size_t i, k;

	for (i = 0; i < n; i = k) {
		int64_t ts = E[fo[i]].ts;
		for (k = i + 1; k < n && E[fo[k]].ts == ts; k++)
			;
		if (k - i > 1)
			qsort_r(fo + i, k - i, sizeof(*fo), frame_cmp, (void *)E);
	}
}

/* Order the frames fr[0..n) (event ids, in file order) by (thread, start,
 * frame_cmp) into out (which may be fr); lanecnt (nlanes + 2 zeroes): [l]
 * the end of lane l's.  A stable counting sort by lane (fr -> tmp), then
 * sort_lane per thread into out, then frame_cmp on frames that start
 * together.  Frames are event ids (4 bytes) rather than copies of what
 * nesting reads (40 bytes, in two arrays while sorting): on a 198 MB
 * TraceLens trace with 504,478 frames that was 20 MB, 40 MB while
 * sorting. */
static int sort_frames(const pt_store *st, const uint32_t *fr, size_t n, uint32_t *out,
		       size_t *lanecnt)
{
	const pt_event *E = st->ev;
	size_t i, j, l, nl = st->nlanes + 1;
	uint32_t *tmp = x_malloc((n ? n : 1) * sizeof(*tmp));
	int rc = PT_ENOMEM;

	if (!tmp)
		goto out;
	for (i = 0; i < n; i++)
		lanecnt[frame_lane(st, &E[fr[i]]) + 1]++;
	for (i = 1; i <= nl; i++)
		lanecnt[i] += lanecnt[i - 1];
	for (i = 0; i < n; i++)
		tmp[lanecnt[frame_lane(st, &E[fr[i]])]++] = fr[i];
	/* lanecnt[l] is now the end of lane l's frames, the start of l + 1's */
	for (l = 0, i = 0; l < nl; l++, i = j) {
		j = lanecnt[l];
		if (j > i && sort_lane(E, tmp + i, out + i, j - i))
			goto out;
		sort_ties(E, out + i, j - i);
	}
	rc = PT_OK;
out:
	x_free(tmp);
	return rc;
}

/* The same order from the critical path's index (b->fro, analysis.h): its
 * frames of positive length as they are (on tf_200M all of them: its array
 * is taken), the rest (zero length, GPU lanes, no lane; dlrm0_200M has
 * zero-length ops) sorted by sort_frames and merged in.  A zero-length frame nests after the
 * longer ones that start with it (frame_cmp).  Sorting them here again
 * was 2.7% of summarize's samples on tf_200M (perf). */
static int frames_from_index(builder *b, size_t n, size_t *lanecnt)
{
	pt_frame_order *o = b->fro;
	const pt_event *E = b->st->ev;
	size_t nl = b->st->nlanes + 1, l, i, j, m, d = 0, *rcnt = NULL;
	uint32_t *rs = NULL;
	int rc = PT_ENOMEM;

	if (!o->nrest) {
		x_free(b->fo);
		b->fo = o->fo;
		o->fo = NULL;
		for (l = 0; l + 1 < nl; l++)
			lanecnt[l] = o->off[l + 1];
		lanecnt[nl - 1] = n;
		rc = PT_OK;
		goto out;
	}
	rcnt = x_calloc(nl + 1, sizeof(*rcnt));
	rs = x_malloc(o->nrest * sizeof(*rs));
	if (!rcnt || !rs || sort_frames(b->st, o->rest, o->nrest, rs, rcnt))
		goto out;
	for (l = 0, i = 0; l < nl; l++) {
		m = l + 1 < nl ? o->off[l] : 0;
		j = l + 1 < nl ? o->off[l + 1] : 0;
		while (m < j && i < rcnt[l])
			b->fo[d++] = E[rs[i]].ts < o->ts[m] ? rs[i++] : o->fo[m++];
		while (m < j)
			b->fo[d++] = o->fo[m++];
		while (i < rcnt[l])
			b->fo[d++] = rs[i++];
		lanecnt[l] = d;
	}
	/* no longer needed: held to the end they raised the peak RSS on
	 * dlrm0_200M (its zero-length ops come this way) by 1.7 MiB */
	x_free(o->fo);
	x_free(o->rest);
	x_free(o->ts);
	o->fo = o->rest = NULL;
	o->ts = NULL;
	o->nrest = o->restcap = 0;
	rc = PT_OK;
out:
	x_free(rs);
	x_free(rcnt);
	return rc;
}

/* Order the frames b->fo[0..n) (in file order, or b->fro's), nest each
 * thread's and group the threads into the sweep's runs. */
static int do_frames(builder *b, size_t n)
{
	size_t *lanecnt = NULL, i, j, l, nl = b->st->nlanes + 1;
	open_frame *stk = NULL;
	size_t stkcap = 0;
	int64_t prev_last = 0;
	int rc = PT_ENOMEM;

	if (!n) {
		rc = PT_OK;
		goto out;
	}
	lanecnt = x_calloc(nl + 1, sizeof(*lanecnt));
	if (!lanecnt)
		goto out;
	if (b->fro) {
		if (frames_from_index(b, n, lanecnt))
			goto out;
	} else if (sort_frames(b->st, b->fo, n, b->fo, lanecnt)) {
		goto out;
	}
	for (l = 0, i = 0; l < nl; l++, i = j) {
		j = lanecnt[l];
		if (j == i)
			continue;
		b->lane_seg = 0;
		b->cur_lane = (uint32_t)l;
		if ((rc = nest_lane(b, b->fo + i, j - i, &stk, &stkcap)))
			goto out;
		rc = PT_ENOMEM;
		if (!b->lane_seg)
			continue;
		/* The sweep merges runs whose starts do not decrease: a thread
		 * joins the run before it when it starts no earlier than that
		 * one's last item (the runs a single array of these items held
		 * thread after thread would have). */
		if (!b->nruns || b->lane_first < prev_last) {
			segrun *R;
			if (X_GROW(b->runs, b->runcap, b->nruns + 1))
				goto out;
			R = &b->runs[b->nruns++];
			memset(R, 0, sizeof(*R));
			R->i = i;
			R->lane = NONE32;
		}
		b->runs[b->nruns - 1].end = j;
		prev_last = b->lane_last;
	}
	rc = PT_OK;
out:
	x_free(stk);
	x_free(lanecnt);
	return rc;
}

/* ---- statistics ---------------------------------------------------------- */

typedef struct scratch {
	uint64_t *u, *t;
	double *d, *d2;
	uint32_t *ix;          /* kinfo entries of a pattern's calls */
	/* per-step values (step_values), when the window has 2+ steps */
	const pt_step *steps;
	size_t nsteps;
	uint64_t *step_sum;
} scratch;

/* Median of the non-negative values v[0..m) (sorted through their bits). */
static double median_nonneg(double *v, size_t m, uint64_t *u, uint64_t *t)
{
	size_t i;

	for (i = 0; i < m; i++)
		u[i] = pt_dbits(v[i]);
	pt_sort_u64(u, t, m);
	for (i = 0; i < m; i++)
		v[i] = pt_bitsd(u[i]);
	return pt_stats_percentile(v, m, 50);
}

/* Launch efficiency of a compute pattern: medians over its calls that
 * carry each member (store->kinfo, by event, searched per call). */
static void kernel_efficiency(const builder *b, const uint32_t *ev, size_t n, pt_pattern *pp,
			      scratch *sc)
{
	const pt_kinfo *K = b->st->kinfo;
	size_t nk = b->st->nkinfo, i, j, f, m, pos = 0;
	uint32_t *ix = sc->ix;

	/* The calls' entries in kinfo, found once: both are by event id
	 * ascending, so each search starts where the last one ended and
	 * gallops (four binary searches per call over all of kinfo were a
	 * third of the analysis' extra time on the 202 MB DLRM trace). */
	for (i = j = 0; i < n && pos < nk; i++) {
		size_t lo = pos, step = 1, hi;

		while (lo + step < nk && K[lo + step].ev < ev[i])
			step *= 2;
		hi = lo + step < nk ? lo + step + 1 : nk;
		PT_BSEARCH(lo, hi, mid, K[mid].ev < ev[i]);
		pos = lo;
		if (lo < nk && K[lo].ev == ev[i])
			ix[j++] = (uint32_t)lo;
	}
	pp->eff_n = j;
	for (f = 0; f < 4; f++) {
		double med;

		for (i = m = 0; i < j; i++) {
			const pt_kinfo *k = &K[ix[i]];
			double v = f == 0 ? k->occupancy : f == 1 ? k->blocks_per_sm
				 : f == 2 ? (double)k->registers : (double)k->shared_mem;
			if (v >= 0)
				sc->d[m++] = v;
		}
		med = m ? median_nonneg(sc->d, m, sc->u, sc->t) : -1;
		if (med > 0) /* float args: 4 decimals are what they hold */
			med = round(med * 1e4) / 1e4;
		if (f == 0)
			pp->occupancy_pct = med;
		else if (f == 1)
			pp->blocks_per_sm = med;
		else if (f == 2)
			pp->registers = med;
		else
			pp->shared_mem = med;
	}
}

/* Median, p10, p90 and MAD of pattern pp's durations (ev[0..n)), and for
 * communication the bytes and bandwidths. */
static void pattern_stats(const builder *b, const uint32_t *ev, size_t n, pt_pattern *pp,
			  scratch *sc)
{
	const pt_event *E = b->st->ev;
	uint32_t kc[PT_K_COUNT] = { 0 };
	uint64_t total = 0;
	size_t i, m;
	int k, best = 0;

	if (pp->step_ms) {
		/* the per-step sums in the same pass (the calls' events are
		 * random accesses: one pass instead of two) */
		size_t cur = 0, ns = sc->nsteps;
		const pt_step *steps = sc->steps;

		memset(sc->step_sum, 0, ns * sizeof(*sc->step_sum));
		for (i = 0; i < n; i++) {
			const pt_event *e = &E[ev[i]];
			size_t lo = 0, hi = ns;

			sc->u[i] = (uint64_t)e->dur;
			total += (uint64_t)e->dur;
			if (e->kind < PT_K_COUNT)
				kc[e->kind]++;
			/* calls come mostly in time order: the previous call's step first */
			if (steps[cur].ts <= e->ts && (cur + 1 == ns || steps[cur + 1].ts > e->ts))
				lo = hi = cur + 1;
			PT_BSEARCH(lo, hi, mid, steps[mid].ts <= e->ts); /* first step starting after the call */
			if (lo && e->ts < pt_end(steps[lo - 1].ts, steps[lo - 1].dur))
				sc->step_sum[lo - 1] += (uint64_t)e->dur;
			cur = lo ? lo - 1 : 0;
		}
		for (i = 0; i < ns; i++)
			pp->step_ms[i] = (double)sc->step_sum[i] / 1e6;
	} else {
		for (i = 0; i < n; i++) {
			sc->u[i] = (uint64_t)E[ev[i]].dur;
			total += (uint64_t)E[ev[i]].dur;
			if (E[ev[i]].kind < PT_K_COUNT)
				kc[E[ev[i]].kind]++;
		}
	}
	for (k = 1; k < PT_K_COUNT; k++)
		if (kc[k] > kc[best])
			best = k;
	pp->kind = (uint8_t)best;
	pp->total_ms = (double)total / 1e6;
	pt_sort_u64(sc->u, sc->t, n);
	for (i = 0; i < n; i++)
		sc->d[i] = (double)sc->u[i] / 1e6;
	pp->median_ms = pt_stats_percentile(sc->d, n, 50);
	pp->p10_ms = pt_stats_percentile(sc->d, n, 10);
	pp->p90_ms = pt_stats_percentile(sc->d, n, 90);
	pp->mad_ms = pt_stats_mad(sc->d, n, pp->median_ms, sc->d2);
	if (pp->cls == PT_C_COMPUTE && b->st->nkinfo)
		kernel_efficiency(b, ev, n, pp, sc);
	if (pp->cls != PT_C_COMM)
		return;
	/* Role: the kernel table (commkind.c), or what a CPU collective's
	 * name says; a kernel the table does not know (a reader's own rule
	 * made it communication) still gets the collective its name spells. */
	{
		int role = PT_ROLE_NONE;
		if (pp->kind == PT_K_COMM_KERNEL)
			role = pt_commkind_classify(pp->key, strlen(pp->key));
		if (role == PT_ROLE_NONE)
			role = pt_commkind_role_from_name(pp->key, strlen(pp->key));
		pp->role = (uint8_t)role;
	}

	/* Message bytes: median over the calls that record them. */
	for (i = m = 0; i < n; i++)
		if (E[ev[i]].bytes)
			sc->u[m++] = E[ev[i]].bytes;
	if (!m)
		return;
	pt_sort_u64(sc->u, sc->t, m);
	for (i = 0; i < m; i++)
		sc->d[i] = (double)sc->u[i];
	pp->bytes = pt_stats_percentile(sc->d, m, 50);
	/* algbw: bytes per ns is GB/s; median over calls with bytes and time. */
	for (i = m = 0; i < n; i++)
		if (E[ev[i]].bytes && E[ev[i]].dur > 0)
			sc->u[m++] = pt_dbits((double)E[ev[i]].bytes / (double)E[ev[i]].dur);
	if (m) {
		pt_sort_u64(sc->u, sc->t, m);
		for (i = 0; i < m; i++)
			sc->d[i] = pt_bitsd(sc->u[i]);
		pp->algbw_gbps = pt_stats_percentile(sc->d, m, 50);
	}
	/* Group size: the most common known one. */
	for (i = m = 0; i < n; i++)
		if (E[ev[i]].group)
			sc->u[m++] = E[ev[i]].group;
	if (m) {
		size_t run = 0, bestrun = 0;
		pt_sort_u64(sc->u, sc->t, m);
		for (i = 0; i < m; i++) {
			run = i && sc->u[i] == sc->u[i - 1] ? run + 1 : 1;
			if (run > bestrun) {
				bestrun = run;
				pp->group = (uint32_t)sc->u[i];
			}
		}
	}
	pp->busbw_gbps = pp->algbw_gbps * pt_commkind_busbw_factor(pp->key, strlen(pp->key), pp->group);
}

/* Steps in the order the summary lists them (summary.c: by start, then
 * number). */
static int step_cmp(const void *pa, const void *pb)
{
	const pt_step *a = pa, *b = pb;

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->number < b->number ? -1 : a->number > b->number;
}

/* Key string of a stack node: names from the outermost frame, joined by
 * PT_KEY_SEP (keys.h). */
static char *node_key(const builder *b, uint32_t node)
{
	pt_sb sb = { 0 };
	uint32_t chain[1024], *c = chain, *heap = NULL;
	size_t n = 0, cap = 1024, i;
	uint32_t x;

	for (x = node; x != ROOT; x = b->node_parent[x]) {
		if (n == cap) {
			uint32_t *nh = x_reallocarray(heap, cap * 2, sizeof(*nh));
			if (!nh) {
				x_free(heap);
				return NULL;
			}
			if (!heap)
				memcpy(nh, chain, sizeof(chain));
			heap = c = nh;
			cap *= 2;
		}
		c[n++] = x;
	}
	for (i = n; i-- > 0;) {
		size_t len;
		const char *s = pt_strtab_get(b->loc, b->node_name[c[i]], &len);
		if (i + 1 < n)
			pt_sb_addc(&sb, PT_KEY_SEP);
		pt_sb_add(&sb, s, len);
	}
	x_free(heap);
	if (!sb.len)
		pt_sb_add(&sb, "", 0);
	return pt_sb_detach(&sb, NULL);
}

/* The breakdown's key callback (pt_bd_finish). */
static char *bd_key(const void *ctx, uint32_t node)
{
	return node_key(ctx, node);
}

static int python_cmp(const void *pa, const void *pb, void *arg)
{
	const double *owned = arg;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	if (owned[a] != owned[b])
		return owned[a] > owned[b] ? -1 : 1;
	return a < b ? -1 : a > b;
}

static int pattern_cmp(const void *pa, const void *pb)
{
	const pt_pattern *a = pa, *b = pb;

	if (a->cls != b->cls)
		return a->cls > b->cls ? -1 : 1;
	if (a->bottleneck != b->bottleneck)
		return a->bottleneck > b->bottleneck ? -1 : 1;
	return strcmp(a->key, b->key);
}

/* ---- the build ----------------------------------------------------------- */

static void builder_free(builder *b)
{
	int c;

	pt_bd_free(b->bd);
	x_free(b->dlmemo);
	x_free(b->nbuf);
	x_free(b->stack_node);
	x_free(b->norm);
	pt_hmap_free(&b->nodes);
	x_free(b->node_pat);
	x_free(b->node_name);
	x_free(b->node_parent);
	pt_strtab_free(b->loc);
	while (b->nruns--) {
		x_free(b->runs[b->nruns].buf);
		x_free(b->runs[b->nruns].stk);
	}
	x_free(b->runs);
	x_free(b->fo);
	x_free(b->nfbuf);
	x_free(b->nfkv);
	x_free(b->nf);
	x_free(b->evpat);
	for (c = 0; c < PT_C_COUNT; c++)
		x_free(b->map[c]);
	x_free(b->pats);
}

static int order_cmp(const void *pa, const void *pb, void *arg)
{
	const pt_pattern *p = arg;

	return pattern_cmp(&p[*(const uint32_t *)pa], &p[*(const uint32_t *)pb]);
}

/* Sets up the builder: the name and event maps, room for the frames and
 * non-frame items, and the root node.  -1: out of memory. */
static int builder_init(builder *b, const pt_store *st, const pt_window *w, pt_coll_build *coll)
{
	memset(b, 0, sizeof(*b));
	b->st = st;
	b->w = *w;
	b->coll = coll && coll->ngap ? coll : NULL;
	b->nnames = pt_strtab_count(st->strs);
	b->loc = pt_strtab_new();
	b->norm = x_malloc((b->nnames ? b->nnames : 1) * sizeof(uint32_t));
	b->evpat = x_malloc((st->n ? st->n : 1) * sizeof(*b->evpat));
	/* Frames and non-frame items get room for every event: only the part
	 * used is ever touched, so it costs address space, not memory. */
	b->fo = x_malloc((st->n ? st->n : 1) * sizeof(*b->fo));
	b->nfib = st->n > 1 ? pt_bits(st->n - 1) : 0;
	b->nfmask = b->nfib ? ~0ULL >> (64 - b->nfib) : 0;
	if (pt_bits((uint64_t)w->end - (uint64_t)w->start) + b->nfib <= 64)
		b->nf = x_malloc((st->n ? st->n : 1) * sizeof(*b->nf));
	else
		b->nfkv = x_malloc((st->n ? st->n : 1) * sizeof(*b->nfkv));
	if (!b->loc || !b->norm || !b->evpat || !b->fo || (!b->nf && !b->nfkv) ||
	    node_get(b, NONE32, 0) != ROOT)
		return -1;
	memset(b->norm, 0xff, b->nnames * sizeof(uint32_t));
	memset(b->evpat, 0xff, st->n * sizeof(*b->evpat));
	return 0;
}

/* Counts the events of the GPU, runtime and collective classes (one
 * pattern per (class, name), one item each), collects the CPU frames for
 * nesting in *nfr, and sorts the non-frame items by start (stable: equal
 * starts in event order).  -1: out of memory. */
static int count_items(builder *b, size_t *nfr)
{
	const pt_store *st = b->st;
	size_t i;

	for (i = 0; i < st->n; i++) {
		const pt_event *e = &st->ev[i];
		int cls = pt_kind_class(e->kind);
		uint32_t p;

		if (cls == PT_C_NONE || !pt_window_hits(&b->w, e->ts, e->dur))
			continue;
		if (cls != PT_C_PYTHON) {
			p = named_pat(b, cls, e->name);
			if (p == NONE32 || count_ev(b, p, (uint32_t)i, e->ts, pt_end(e->ts, e->dur)))
				return -1;
			nf_add(b, (uint32_t)i, e->ts, pt_end(e->ts, e->dur));
		}
		if (pt_frame_nests(e->kind)) {
			if (!b->fro)
				b->fo[*nfr] = (uint32_t)i;
			(*nfr)++;
		}
	}
	if (b->nnf) {
		void *tmp = x_malloc(b->nnf * (b->nf ? sizeof(*b->nf) : sizeof(*b->nfkv)));
		if (!tmp)
			return -1;
		if (b->nf)
			pt_sort_packed(b->nf, tmp, b->nnf, b->nfib);
		else
			pt_sort_kv(b->nfkv, tmp, b->nnf);
		x_free(tmp);
	}
	return 0;
}

/* The frames count_items counts, in file order into fo (when count_items
 * did not collect them: b->fro). */
static void collect_frames(builder *b, size_t *nfr)
{
	const pt_store *st = b->st;
	size_t i;

	*nfr = 0;
	for (i = 0; i < st->n; i++) {
		const pt_event *e = &st->ev[i];
		if (pt_frame_nests(e->kind) && pt_window_hits(&b->w, e->ts, e->dur))
			b->fo[(*nfr)++] = (uint32_t)i;
	}
}

/* The GPU events by start (from the sorted non-frame items), for the
 * breakdown: it needs their idle gaps before the frames are nested.
 * Returns the caller's array of *ngev ids, NULL when out of memory. */
static uint32_t *gpu_by_start(const builder *b, size_t *ngev)
{
	uint32_t *gev = x_malloc((b->nnf ? b->nnf : 1) * sizeof(*gev));
	size_t i;

	if (!gev)
		return NULL;
	for (i = 0; i < b->nnf; i++) {
		uint32_t id = b->nf ? (uint32_t)(b->nf[i] & b->nfmask) : b->nfkv[i].v;
		if (b->st->ev[id].flags & PT_EV_GPU)
			gev[(*ngev)++] = id;
	}
	return gev;
}

/* The attribution sweep: merges the non-frame items and the frame
 * segments, which come thread by thread, each thread's in time order,
 * made as it goes (run_next).  Fills owned[pattern] and *tot, then frees
 * the item arrays it no longer needs.  -1: out of memory. */
static int sweep_items(builder *b, double *owned, pt_attr_totals *tot)
{
	pt_item_runs runs = { b->nruns + (b->nnf > 0), run_next, b };

	b->nfbuf = x_malloc(SEG_CHUNK * sizeof(*b->nfbuf));
	if (!b->nfbuf ||
	    pt_attr_sweep_runs(NULL, 0, &runs, b->w.start, b->w.end, owned, tot))
		return -1;
	x_free(b->nf);
	x_free(b->nfkv);
	x_free(b->fo);
	b->nf = NULL;
	b->nfkv = NULL;
	b->fo = NULL;
	return 0;
}

/* The window's totals into out: time per class, GPU utilization and the
 * breakdown.  -1: out of memory. */
static int window_totals(builder *b, const pt_attr_totals *tot, double wns, pt_summary *out)
{
	int c;

	for (c = 0; c < PT_C_COUNT; c++)
		out->class_ms[c] = (double)tot->class_ns[c] / 1e6;
	out->gpu_util = wns > 0 ? (double)tot->gpu_busy_ns / wns : 0;
	out->breakdown = x_calloc(1, sizeof(*out->breakdown));
	if (!out->breakdown || pt_bd_finish(b->bd, b->node_parent, b->nnodes, bd_key, b,
					    out->breakdown))
		return -1;
	out->gpu_compute_util = wns > 0 ? out->breakdown->compute_ms * 1e6 / wns : 0;
	return 0;
}

/* Which patterns to keep: all but Python; Python stacks owning at least
 * min_python_ratio, and user annotations lasting at least SPAN_KEEP of the
 * window however little they own (an annotation that waits owns nothing:
 * its children or the GPU own the time, and `compare` reads how long it
 * lasted), the max_python largest by owned time.  Returns the caller's
 * array of *nkeep pattern ids, NULL when out of memory. */
#define SPAN_KEEP 0.005

static uint32_t *choose_patterns(const builder *b, const double *owned, double wns,
				 const pt_summary_options *opt, size_t *nkeep)
{
	uint32_t *keep = x_malloc((b->npats ? b->npats : 1) * sizeof(*keep));
	size_t i, n = 0, npy = 0;

	if (!keep)
		return NULL;
	for (i = 0; i < b->npats; i++)
		if (b->pats[i].cls != PT_C_PYTHON)
			keep[n++] = (uint32_t)i;
	for (i = 0; i < b->npats; i++) {
		double r = wns > 0 ? owned[i] / wns : 0;
		if (b->pats[i].cls == PT_C_PYTHON &&
		    (r >= opt->min_python_ratio ||
		     (b->pats[i].span && wns > 0 && (double)b->pats[i].clipped_ns >= SPAN_KEEP * wns)))
			keep[n + npy++] = (uint32_t)i;
	}
	qsort_r(keep + n, npy, sizeof(*keep), python_cmp, (void *)owned);
	if (npy > opt->max_python)
		npy = opt->max_python;
	*nkeep = n + npy;
	return keep;
}

/* Groups the counted events by pattern (counting sort): pattern p's
 * events are evs[off[p] .. off[p + 1]); *maxcount is the largest group.
 * Frees b->evpat.  -1: out of memory. */
static int group_events(builder *b, uint32_t **offp, uint32_t **evsp, size_t *maxcount)
{
	const pt_store *st = b->st;
	uint32_t *off, *evs;
	size_t i;

	off = *offp = x_calloc(b->npats + 1, sizeof(*off));
	evs = *evsp = x_malloc((b->nrec ? b->nrec : 1) * sizeof(*evs));
	if (!off || !evs)
		return -1;
	for (i = 0; i < st->n; i++)
		if (b->evpat[i] != NONE32)
			off[b->evpat[i] + 1]++;
	for (i = 0; i < b->npats; i++) {
		if (off[i + 1] > *maxcount)
			*maxcount = off[i + 1];
		off[i + 1] += off[i];
	}
	for (i = 0; i < st->n; i++)
		if (b->evpat[i] != NONE32)
			evs[off[b->evpat[i]]++] = (uint32_t)i;
	for (i = b->npats; i > 0; i--) /* off[p] is now the end: shift back */
		off[i] = off[i - 1];
	off[0] = 0;
	x_free(b->evpat);
	b->evpat = NULL;
	return 0;
}

/* With two steps or more: per-step values for the functions of at least
 * 0.2% of the window, and at most max(16, 20,000 / steps) of them (the
 * largest), so that a window of many steps keeps the summary small:
 * 20,000 numbers are about 150 KB.  Sets *floor, *steps (the steps in
 * time order) and *step_sum (room for their sums), the caller's arrays.
 * -1: out of memory. */
static int step_setup(const builder *b, const uint32_t *keep, size_t nkeep, double wns,
		      double *floor, pt_step **steps, uint64_t **step_sum)
{
	const pt_store *st = b->st;
	size_t cap = 20000 / st->nsteps, nbig = 0, j;
	uint64_t *cl;

	if (cap < 16)
		cap = 16;
	*floor = 0.002 * wns;
	cl = x_malloc(2 * (nkeep ? nkeep : 1) * sizeof(*cl)); /* values, then scratch */
	*steps = x_malloc(st->nsteps * sizeof(**steps));
	*step_sum = x_malloc(st->nsteps * sizeof(**step_sum));
	if (!*steps || !*step_sum || !cl) {
		x_free(cl);
		return -1;
	}
	for (j = 0; j < nkeep; j++)
		if ((double)b->pats[keep[j]].clipped_ns >= *floor)
			cl[nbig++] = b->pats[keep[j]].clipped_ns;
	if (nbig > cap) {
		pt_sort_u64(cl, cl + nkeep, nbig);
		*floor = (double)cl[nbig - cap];
	}
	x_free(cl);
	memcpy(*steps, st->steps, st->nsteps * sizeof(**steps));
	qsort(*steps, st->nsteps, sizeof(**steps), step_cmp);
	return 0;
}

/* Room in sc for pattern_stats on a group of up to maxcount events.
 * -1: out of memory. */
static int scratch_alloc(scratch *sc, size_t maxcount)
{
	sc->ix = x_malloc((maxcount + 1) * sizeof(*sc->ix));
	if (!sc->ix)
		return -1;
	sc->u = x_malloc((maxcount + 1) * sizeof(*sc->u));
	sc->t = x_malloc((maxcount + 1) * sizeof(*sc->t));
	sc->d = x_malloc((maxcount + 1) * sizeof(*sc->d));
	sc->d2 = x_malloc((maxcount + 1) * sizeof(*sc->d2));
	return sc->u && sc->t && sc->d && sc->d2 ? 0 : -1;
}

/* One pt_pattern per kept pattern, in keep's order: key, class, count,
 * owned and executed share, per-step values (for those above
 * step_floor) and the statistics of pattern_stats.  -1: out of memory. */
static int emit_patterns(const builder *b, const uint32_t *keep, size_t nkeep, const double *owned,
			 const uint32_t *off, const uint32_t *evs, double wns, double step_floor,
			 scratch *sc, pt_summary *out)
{
	const pt_store *st = b->st;
	size_t j;

	out->patterns = x_calloc(nkeep ? nkeep : 1, sizeof(*out->patterns));
	if (!out->patterns)
		return -1;
	for (j = 0; j < nkeep; j++) {
		uint32_t p = keep[j];
		const bpat *bp = &b->pats[p];
		pt_pattern *pp = &out->patterns[out->npatterns];

		if (bp->cls == PT_C_PYTHON) {
			pp->key = node_key(b, bp->key);
		} else {
			size_t len;
			const char *s = pt_strtab_get(st->strs, bp->key, &len);
			pp->key = x_strndup(s, len);
		}
		if (!pp->key)
			return -1;
		out->npatterns++;
		pp->cls = bp->cls;
		pp->count = bp->count;
		pp->bottleneck = wns > 0 ? owned[p] / wns : 0;
		/* A share of the window, never above 1: instances that overlap
		 * (one kernel on several streams, a SendRecv per channel) sum
		 * past it, and a share of time above 100% reads as nonsense. */
		pp->exec_ratio = wns > 0 ? fmin((double)bp->clipped_ns / wns, 1.0) : 0;
		/* Per step (the step-to-step comparison, src/diagnose/steps.c):
		 * the functions above step_floor; filled by pattern_stats. */
		if (sc->steps && (double)bp->clipped_ns >= step_floor) {
			if (!(pp->step_ms = x_calloc(st->nsteps, sizeof(*pp->step_ms))))
				return -1;
			pp->nstep_ms = st->nsteps;
		}
		pattern_stats(b, evs + off[p], off[p + 1] - off[p], pp, sc);
	}
	return 0;
}

/* Sorts out->patterns (pattern_cmp).  With collectives, sorts an index
 * instead, to know where each kept pattern went: the spans' functions
 * name patterns by their place (pt_coll_finish).  -1: out of memory. */
static int order_patterns(const builder *b, pt_coll_build *coll, const uint32_t *keep,
			  size_t nkeep, pt_summary *out)
{
	uint32_t *ord, *patmap;
	pt_pattern *sorted;
	size_t j;
	int rc = -1;

	if (!coll || !coll->n) {
		qsort(out->patterns, out->npatterns, sizeof(*out->patterns), pattern_cmp);
		return 0;
	}
	ord = x_malloc((nkeep ? nkeep : 1) * sizeof(*ord));
	patmap = x_malloc((b->npats ? b->npats : 1) * sizeof(*patmap));
	sorted = x_malloc((nkeep ? nkeep : 1) * sizeof(*sorted));
	if (!ord || !patmap || !sorted) {
		x_free(sorted);
		goto out;
	}
	for (j = 0; j < out->npatterns; j++)
		ord[j] = (uint32_t)j;
	qsort_r(ord, out->npatterns, sizeof(*ord), order_cmp, out->patterns);
	memset(patmap, 0xff, b->npats * sizeof(*patmap));
	for (j = 0; j < out->npatterns; j++) {
		sorted[j] = out->patterns[ord[j]];
		patmap[keep[ord[j]]] = (uint32_t)j;
	}
	x_free(out->patterns);
	out->patterns = sorted;
	if (pt_coll_finish(coll, b->st, &b->w, patmap, b->npats, out) == 0)
		rc = 0;
out:
	x_free(patmap);
	x_free(ord);
	return rc;
}

int pt_patterns_build(const pt_store *st, const pt_window *w, const pt_summary_options *opt,
		      pt_summary *out, pt_error *err)
{
	return pt_patterns_build_coll(st, w, opt, NULL, NULL, out, err);
}

void pt_frame_order_free(pt_frame_order *o)
{
	x_free(o->fo);
	x_free(o->rest);
	x_free(o->ts);
	x_free(o->off);
	memset(o, 0, sizeof(*o));
}

int pt_patterns_build_coll(const pt_store *st, const pt_window *w, const pt_summary_options *opt,
			   pt_coll_build *coll, pt_frame_order *fr, pt_summary *out, pt_error *err)
{
	builder b;
	size_t nfr = 0, nkeep = 0, ngev = 0, maxcount = 0;
	double *owned = NULL;
	uint32_t *keep = NULL, *off = NULL, *evs = NULL, *gev = NULL;
	pt_step *steps = NULL;
	uint64_t *step_sum = NULL;
	double step_floor = 0;
	pt_attr_totals tot;
	scratch sc = { 0 };
	double wns = (double)((uint64_t)w->end - (uint64_t)w->start);
	int rc = PT_ENOMEM;

	if (st->n >= NONE32) {
		memset(&b, 0, sizeof(b));
		rc = pt_error_set(err, PT_ENOMEM, -1, "too many events (%zu) for one summary", st->n);
		goto out;
	}
	if (builder_init(&b, st, w, coll))
		goto fail;
	b.fro = fr && fr->ok ? fr : NULL;
	if (count_items(&b, &nfr))
		goto fail;
	/* the index's frames are the ones counted here, or it is not used */
	if (b.fro && nfr != b.fro->n + b.fro->nrest) {
		b.fro = NULL;
		collect_frames(&b, &nfr);
	}
	if (!(gev = gpu_by_start(&b, &ngev)))
		goto fail;
	b.main_lane = pt_bd_main_lane(st);
	b.bd = pt_bd_new(st, w->start, w->end, gev, ngev, b.main_lane);
	if (!b.bd || do_frames(&b, nfr))
		goto fail;
	if (!(owned = x_calloc(b.npats, sizeof(*owned))) || sweep_items(&b, owned, &tot) ||
	    window_totals(&b, &tot, wns, out))
		goto fail;
	x_free(gev);
	gev = NULL;

	if (!(keep = choose_patterns(&b, owned, wns, opt, &nkeep)) ||
	    group_events(&b, &off, &evs, &maxcount))
		goto fail;
	if (st->nsteps >= 2 && step_setup(&b, keep, nkeep, wns, &step_floor, &steps, &step_sum))
		goto fail;
	sc.steps = steps;
	sc.nsteps = st->nsteps;
	sc.step_sum = step_sum;
	if (scratch_alloc(&sc, maxcount) ||
	    emit_patterns(&b, keep, nkeep, owned, off, evs, wns, step_floor, &sc, out) ||
	    order_patterns(&b, coll, keep, nkeep, out))
		goto fail;
	rc = PT_OK;
	goto out;
fail:
	rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory while summarising %zu events", st->n);
out:
	x_free(sc.ix);
	x_free(sc.d2);
	x_free(sc.d);
	x_free(sc.t);
	x_free(sc.u);
	x_free(evs);
	x_free(off);
	x_free(keep);
	x_free(owned);
	x_free(gev);
	x_free(steps);
	x_free(step_sum);
	builder_free(&b);
	return rc;
}
