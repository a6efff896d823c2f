/*
 * patterns.c - from one worker's events to its behaviour patterns
 * (DESIGN.md "Behaviour pattern", "Function key"): groups events by
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
 */
#include "analysis.h"
#include "patterns.h"
#include "stats.h"
#include "../trace/kineto.h"
#include "../util/strbuf.h"
#include "../util/xalloc.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NONE32 UINT32_MAX
#define ROOT 0u

/* A pattern while it is being built. */
typedef struct bpat {
	uint32_t key;         /* store name id, or stack node id (Python class) */
	uint8_t cls;
	uint64_t count;
	uint64_t clipped_ns;  /* sum of durations clipped to the window */
} bpat;

/* What the frame loop needs of one CPU/Python frame: copied out of the
 * event so that, once sorted, nesting reads frames sequentially. */
typedef struct frame {
	int64_t ts, end;
	uint32_t ev, lane, name, stack;
	uint8_t kind;
} frame;

/* A counted event of a pattern (for its durations). */
typedef struct rec {
	uint32_t pat, ev;
} rec;

/* An open frame on the nesting stack of one thread. */
typedef struct open_frame {
	int64_t end;      /* clipped to the parent's end */
	uint32_t node;    /* stack node (key) */
	uint32_t pat;     /* Python pattern owning its exclusive time, NONE32 for CPU_COMM */
	uint32_t stack;   /* old-style "Call stack" id in effect (own or inherited) */
} open_frame;

typedef struct builder {
	const pt_store *st;
	pt_window w;

	bpat *pats;
	size_t npats, patcap;
	uint32_t *map[PT_C_COUNT];  /* store name id -> pattern + 1, per class */
	uint32_t nnames;            /* pt_strtab_count(st->strs) */

	rec *recs;  /* counted events, for durations */
	size_t nrec, reccap;

	pt_item *items;
	size_t nitems, itemcap;

	/* Stack nodes: node 0 is the root.  name is an id in loc. */
	pt_strtab *loc;
	uint32_t *node_parent, *node_name, *node_pat;
	size_t nnodes, nodecap, nodecap2, nodecap3;
	uint32_t *slots;          /* open addressing: node id + 1, 0 empty */
	size_t nslots;
	uint32_t *norm;           /* store name id -> loc id of its normalised form */
	uint32_t *stack_node;     /* store string id of a "Call stack" -> node */
	char *nbuf;
	size_t nbufcap;
} builder;

/* ---- patterns and counted events --------------------------------------- */

static uint32_t new_pat(builder *b, uint32_t key, int cls)
{
	if (b->npats >= NONE32 - 1 || X_GROW(b->pats, b->patcap, b->npats + 1))
		return NONE32;
	b->pats[b->npats].key = key;
	b->pats[b->npats].cls = (uint8_t)cls;
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
 * window). */
static int count_ev(builder *b, uint32_t pat, uint32_t ev, int64_t ts, int64_t end)
{
	int64_t s = ts > b->w.start ? ts : b->w.start;

	if (end > b->w.end)
		end = b->w.end;
	b->pats[pat].count++;
	if (end > s)
		b->pats[pat].clipped_ns += (uint64_t)end - (uint64_t)s;
	if (b->nrec == b->reccap && X_GROW(b->recs, b->reccap, b->nrec + 1))
		return PT_ENOMEM;
	b->recs[b->nrec].pat = pat;
	b->recs[b->nrec].ev = ev;
	b->nrec++;
	return PT_OK;
}

/* Add [s, e) clipped to the window as an item of class cls for pat. */
static int add_item(builder *b, int64_t s, int64_t e, uint32_t pat, int cls, int kernel)
{
	pt_item *it;

	if (s < b->w.start)
		s = b->w.start;
	if (e > b->w.end)
		e = b->w.end;
	if (e <= s)
		return PT_OK;
	if (b->nitems == b->itemcap &&
	    (b->nitems >= NONE32 || X_GROW(b->items, b->itemcap, b->nitems + 1)))
		return PT_ENOMEM;
	it = &b->items[b->nitems++];
	it->s = s;
	it->e = e;
	it->pat = pat;
	it->cls = (uint8_t)cls;
	it->kernel = (uint8_t)kernel;
	return PT_OK;
}

/* ---- stack nodes --------------------------------------------------------- */

static uint32_t node_hash(uint32_t parent, uint32_t name)
{
	uint64_t h = ((uint64_t)parent << 32 | name) * 0x9e3779b97f4a7c15ULL;
	return (uint32_t)(h >> 32);
}

static int node_rehash(builder *b)
{
	size_t ns = b->nslots ? b->nslots * 2 : 1024, i, j;
	uint32_t *sl = x_calloc(ns, sizeof(*sl));

	if (!sl)
		return -1;
	for (i = 0; i < b->nnodes; i++) {
		j = node_hash(b->node_parent[i], b->node_name[i]) & (ns - 1);
		while (sl[j])
			j = (j + 1) & (ns - 1);
		sl[j] = (uint32_t)i + 1;
	}
	x_free(b->slots);
	b->slots = sl;
	b->nslots = ns;
	return 0;
}

/* The node for (parent, name), created if new; NONE32 on allocation failure. */
static uint32_t node_get(builder *b, uint32_t parent, uint32_t name)
{
	size_t j;
	uint32_t id;

	if ((b->nnodes + 1) * 2 > b->nslots && node_rehash(b))
		return NONE32;
	j = node_hash(parent, name) & (b->nslots - 1);
	while ((id = b->slots[j])) {
		if (b->node_parent[id - 1] == parent && b->node_name[id - 1] == name)
			return id - 1;
		j = (j + 1) & (b->nslots - 1);
	}
	if (b->nnodes >= NONE32 - 1 || X_GROW(b->node_parent, b->nodecap, b->nnodes + 1) ||
	    X_GROW(b->node_name, b->nodecap2, b->nnodes + 1) ||
	    X_GROW(b->node_pat, b->nodecap3, b->nnodes + 1))
		return NONE32;
	id = (uint32_t)b->nnodes++;
	b->node_parent[id] = parent;
	b->node_name[id] = name;
	b->node_pat[id] = NONE32;
	b->slots[j] = id + 1;
	return id;
}

/* Intern the normalised form of s[0..n) in loc. */
static uint32_t norm_str(builder *b, const char *s, size_t n)
{
	size_t m;

	if (X_GROW(b->nbuf, b->nbufcap, n + 64))
		return NONE32;
	m = pt_kineto_normalize_name(s, n, b->nbuf, b->nbufcap);
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

static int is_frame_kind(int k)
{
	return k == PT_K_CPU_OP || k == PT_K_PYTHON || k == PT_K_ANNOTATION || k == PT_K_CPU_COMM;
}

/* Order of frames that start together and last equally long: the one more
 * likely to be the caller first (an annotation wraps Python, Python calls
 * ops, an op may be a collective's wrapper). */
static int kind_rank(int k)
{
	switch (k) {
	case PT_K_ANNOTATION: return 0;
	case PT_K_PYTHON: return 1;
	case PT_K_CPU_OP: return 2;
	default: return 3;
	}
}

/* Frames starting together on one thread: longest first, then by kind
 * rank, then file order. */
static int frame_cmp(const void *pa, const void *pb)
{
	const frame *a = pa, *b = pb;
	uint64_t da = (uint64_t)a->end - (uint64_t)a->ts, db = (uint64_t)b->end - (uint64_t)b->ts;
	int ra = kind_rank(a->kind), rb = kind_rank(b->kind);

	if (da != db)
		return da > db ? -1 : 1;
	if (ra != rb)
		return ra - rb;
	return a->ev < b->ev ? -1 : a->ev > b->ev;
}

/* Emit the exclusive segment [s, e) of an open frame as a Python item. */
static int emit(builder *b, const open_frame *f, int64_t s, int64_t e)
{
	if (f->pat == NONE32)
		return PT_OK; /* a CPU collective: its whole span is a comm item */
	return add_item(b, s, e, f->pat, PT_C_PYTHON, 0);
}

/* Nest the frames of one thread (fr[0..n), sorted by start asc, duration
 * desc) and emit their keys, counts and exclusive segments. */
static int nest_lane(builder *b, const frame *fr, size_t n, open_frame **stk, size_t *stkcap)
{
	size_t depth = 0, i;
	int64_t cur = 0;
	int rc;

	for (i = 0; i < n; i++) {
		const frame *f = &fr[i];
		open_frame *top, nf;
		uint32_t base, name;

		while (depth && (*stk)[depth - 1].end <= f->ts) {
			top = &(*stk)[--depth];
			if ((rc = emit(b, top, cur, top->end)))
				return rc;
			cur = top->end;
		}
		top = depth ? &(*stk)[depth - 1] : NULL;
		nf.end = f->end;
		if (top && nf.end > top->end)
			nf.end = top->end; /* overruns its parent (clock skew): clip */
		if (top && (rc = emit(b, top, cur, f->ts)))
			return rc;
		cur = f->ts;

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
		nf.pat = NONE32;
		if (f->kind != PT_K_CPU_COMM) {
			nf.pat = b->node_pat[nf.node];
			if (nf.pat == NONE32) {
				nf.pat = new_pat(b, nf.node, PT_C_PYTHON);
				if (nf.pat == NONE32)
					return PT_ENOMEM;
				b->node_pat[nf.node] = nf.pat;
			}
			if ((rc = count_ev(b, nf.pat, f->ev, f->ts, f->end)))
				return rc;
		}
		if (depth == *stkcap && X_GROW(*stk, *stkcap, depth + 1))
			return PT_ENOMEM;
		(*stk)[depth++] = nf;
	}
	while (depth) {
		open_frame *top = &(*stk)[--depth];
		if ((rc = emit(b, top, cur, top->end)))
			return rc;
		cur = top->end;
	}
	return PT_OK;
}

#define MERGE_MAX_RUNS 64

/* Sort one thread's frames in[0..n) by start into out[0..n).  They come in
 * file order, which Kineto writes as a few sorted runs per thread (one per
 * category: 1 or 2 in every public trace we have), so a heap merge of the
 * runs does it in one pass; with many runs (or hostile input), a radix
 * sort.  Equal starts may come out in any order: nest order is settled by
 * frame_cmp afterwards.  Replacing a global radix sort + gather by this
 * took frame ordering from about 45 to 12 ms (CPU time) on a 208 MB trace
 * with 780 k frames. */
static int sort_lane(const frame *in, frame *out, size_t n)
{
	struct head {
		int64_t ts;
		size_t pos, end;
	} h[MERGE_MAX_RUNS], x;
	size_t runs = 1, i, k, c, nh;
	int64_t mints, maxts;
	pt_order ord;

	for (i = 1; i < n; i++)
		runs += in[i].ts < in[i - 1].ts;
	if (runs == 1) {
		memcpy(out, in, n * sizeof(*in));
		return PT_OK;
	}
	if (runs <= MERGE_MAX_RUNS) {
		for (i = 0, nh = 0; i < n; i++) {
			if (i == 0 || in[i].ts < in[i - 1].ts) {
				h[nh].ts = in[i].ts;
				h[nh].pos = i;
				nh++;
			}
			h[nh - 1].end = i + 1;
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
				h[0].ts = in[h[0].pos].ts;
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
		if (in[i].ts < mints)
			mints = in[i].ts;
		if (in[i].ts > maxts)
			maxts = in[i].ts;
	}
	if (pt_order_init(&ord, n, (uint64_t)maxts - (uint64_t)mints))
		return PT_ENOMEM;
	for (i = 0; i < n; i++)
		pt_order_set(&ord, i, (uint64_t)in[i].ts - (uint64_t)mints);
	pt_order_sort(&ord);
	for (k = 0; k < n; k++)
		out[k] = in[pt_order_at(&ord, k)];
	pt_order_free(&ord);
	return PT_OK;
}

/* Order the frames by (thread, start) and nest each thread's: a stable
 * counting sort by lane (fr -> tmp), then sort_lane per thread back into
 * fr, then frame_cmp on frames that start together. */
static int do_frames(builder *b, frame *fr, size_t n)
{
	size_t *lanecnt = NULL, i, j, nl = b->st->nlanes + 1;
	frame *tmp = NULL;
	open_frame *stk = NULL;
	size_t stkcap = 0;
	int rc = PT_ENOMEM;

	if (!n)
		return PT_OK;
	tmp = x_malloc(n * sizeof(*tmp));
	lanecnt = x_calloc(nl + 1, sizeof(*lanecnt));
	if (!tmp || !lanecnt)
		goto out;
	for (i = 0; i < n; i++)
		lanecnt[fr[i].lane + 1]++;
	for (i = 1; i <= nl; i++)
		lanecnt[i] += lanecnt[i - 1];
	for (i = 0; i < n; i++)
		tmp[lanecnt[fr[i].lane]++] = fr[i];
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && tmp[j].lane == tmp[i].lane; j++)
			;
		if (sort_lane(tmp + i, fr + i, j - i))
			goto out;
	}
	x_free(tmp);
	tmp = NULL;
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && fr[j].lane == fr[i].lane && fr[j].ts == fr[i].ts; j++)
			;
		if (j - i > 1)
			qsort(fr + i, j - i, sizeof(*fr), frame_cmp);
	}
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && fr[j].lane == fr[i].lane; j++)
			;
		if ((rc = nest_lane(b, fr + i, j - i, &stk, &stkcap)))
			goto out;
	}
	rc = PT_OK;
out:
	x_free(stk);
	x_free(lanecnt);
	x_free(tmp);
	return rc;
}

/* ---- collectives --------------------------------------------------------- */

double pt_collective_busbw_factor(const char *name, uint32_t g)
{
	char low[256];
	size_t i, n = 0;
	double gd = g;

	if (!name || g == 0)
		return 0;
	/* Case-folded, '_' and ' ' dropped: "AllReduce", "all_reduce",
	 * "allreduce_" and "ncclDevKernel_AllReduce_Sum" all read "allreduce". */
	for (i = 0; name[i] && n < sizeof(low) - 1; i++) {
		if (name[i] == '_' || name[i] == ' ')
			continue;
		low[n++] = (char)tolower((unsigned char)name[i]);
	}
	low[n] = 0;
	if (strstr(low, "allreduce"))
		return 2.0 * (gd - 1) / gd;
	if (strstr(low, "reducescatter") || strstr(low, "allgather") || strstr(low, "alltoall"))
		return (gd - 1) / gd;
	if (strstr(low, "broadcast") || strstr(low, "sendrecv") || strstr(low, "send") ||
	    strstr(low, "recv") || strstr(low, "reduce"))
		return 1;
	return 0;
}

/* ---- statistics ---------------------------------------------------------- */

typedef struct scratch {
	uint64_t *u, *t;
	double *d, *d2;
} scratch;

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

	for (i = 0; i < n; i++) {
		sc->u[i] = (uint64_t)E[ev[i]].dur;
		total += (uint64_t)E[ev[i]].dur;
		if (E[ev[i]].kind < PT_K_COUNT)
			kc[E[ev[i]].kind]++;
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
	pp->mad_ms = pt_stats_mad(sc->d, n, pp->median_ms, sc->d2, sc->t);
	if (pp->cls != PT_C_COMM)
		return;

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
	pp->busbw_gbps = pp->algbw_gbps * pt_collective_busbw_factor(pp->key, pp->group);
}

/* Key string of a stack node: names from the outermost frame, '|'-joined. */
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
			pt_sb_addc(&sb, '|');
		pt_sb_add(&sb, s, len);
	}
	x_free(heap);
	if (!sb.len)
		pt_sb_add(&sb, "", 0);
	return pt_sb_detach(&sb, NULL);
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

	x_free(b->nbuf);
	x_free(b->stack_node);
	x_free(b->norm);
	x_free(b->slots);
	x_free(b->node_pat);
	x_free(b->node_name);
	x_free(b->node_parent);
	pt_strtab_free(b->loc);
	x_free(b->items);
	x_free(b->recs);
	for (c = 0; c < PT_C_COUNT; c++)
		x_free(b->map[c]);
	x_free(b->pats);
}

int pt_patterns_build(const pt_store *st, const pt_window *w, const pt_summary_options *opt,
		      pt_summary *out, pt_error *err)
{
	builder b;
	frame *fr = NULL;
	size_t nfr = 0, frcap = 0, i, j, nkeep = 0, npy = 0, nsorted_from;
	double *owned = NULL;
	uint32_t *keep = NULL, *off = NULL, *evs = NULL;
	pt_attr_totals tot;
	scratch sc = { 0 };
	double wns = (double)((uint64_t)w->end - (uint64_t)w->start);
	size_t maxcount = 0;
	int rc = PT_ENOMEM, c;

	memset(&b, 0, sizeof(b));
	b.st = st;
	b.w = *w;
	b.nnames = pt_strtab_count(st->strs);
	if (st->n >= NONE32) {
		rc = pt_error_set(err, PT_ENOMEM, -1, "too many events (%zu) for one summary", st->n);
		goto out;
	}
	b.loc = pt_strtab_new();
	b.norm = x_malloc((b.nnames ? b.nnames : 1) * sizeof(uint32_t));
	if (!b.loc || !b.norm || node_get(&b, NONE32, 0) != ROOT)
		goto fail;
	memset(b.norm, 0xff, b.nnames * sizeof(uint32_t));

	/* Events of the GPU, runtime and collective classes: one pattern per
	 * (class, name), one item each; CPU frames are collected for nesting. */
	for (i = 0; i < st->n; i++) {
		const pt_event *e = &st->ev[i];
		int cls = pt_kind_class(e->kind);
		uint32_t p;

		if (cls == PT_C_NONE || !pt_window_hits(w, e->ts, e->dur))
			continue;
		if (cls != PT_C_PYTHON) {
			p = named_pat(&b, cls, e->name);
			if (p == NONE32 || count_ev(&b, p, (uint32_t)i, e->ts, pt_end(e->ts, e->dur)) ||
			    add_item(&b, e->ts, pt_end(e->ts, e->dur), p, cls,
				     e->kind == PT_K_KERNEL || e->kind == PT_K_COMM_KERNEL))
				goto fail;
		}
		if (is_frame_kind(e->kind)) {
			if (nfr == frcap && X_GROW(fr, frcap, nfr + 1))
				goto fail;
			fr[nfr].ts = e->ts;
			fr[nfr].end = pt_end(e->ts, e->dur);
			fr[nfr].ev = (uint32_t)i;
			fr[nfr].lane = e->lane < st->nlanes ? e->lane : (uint32_t)st->nlanes;
			fr[nfr].name = e->name;
			fr[nfr].stack = e->stack;
			fr[nfr].kind = e->kind;
			nfr++;
		}
	}
	/* Frame segments come out of do_frames thread by thread, each thread's
	 * in time order: the sweep merges those runs rather than sorting. */
	nsorted_from = b.nitems;
	if (do_frames(&b, fr, nfr))
		goto fail;
	x_free(fr);
	fr = NULL;

	owned = x_calloc(b.npats, sizeof(*owned));
	if (!owned || pt_attr_sweep(b.items, b.nitems, nsorted_from, w->start, w->end, owned, &tot))
		goto fail;
	for (c = 0; c < PT_C_COUNT; c++)
		out->class_ms[c] = (double)tot.class_ns[c] / 1e6;
	out->gpu_util = wns > 0 ? (double)tot.gpu_busy_ns / wns : 0;

	/* Which patterns to keep: all but Python; Python stacks owning at
	 * least min_python_ratio, the max_python largest. */
	keep = x_malloc((b.npats ? b.npats : 1) * sizeof(*keep));
	if (!keep)
		goto fail;
	for (i = 0; i < b.npats; i++)
		if (b.pats[i].cls != PT_C_PYTHON)
			keep[nkeep++] = (uint32_t)i;
	for (i = 0; i < b.npats; i++) {
		double r = wns > 0 ? owned[i] / wns : 0;
		if (b.pats[i].cls == PT_C_PYTHON && r >= opt->min_python_ratio)
			keep[nkeep + npy++] = (uint32_t)i;
	}
	qsort_r(keep + nkeep, npy, sizeof(*keep), python_cmp, owned);
	if (npy > opt->max_python)
		npy = opt->max_python;
	nkeep += npy;

	/* Group the counted events by pattern (counting sort). */
	off = x_calloc(b.npats + 1, sizeof(*off));
	evs = x_malloc((b.nrec ? b.nrec : 1) * sizeof(*evs));
	if (!off || !evs)
		goto fail;
	for (i = 0; i < b.nrec; i++)
		off[b.recs[i].pat + 1]++;
	for (i = 0; i < b.npats; i++) {
		if (off[i + 1] > maxcount)
			maxcount = off[i + 1];
		off[i + 1] += off[i];
	}
	for (i = 0; i < b.nrec; i++)
		evs[off[b.recs[i].pat]++] = b.recs[i].ev;
	for (i = b.npats; i > 0; i--) /* off[p] is now the end: shift back */
		off[i] = off[i - 1];
	off[0] = 0;
	x_free(b.recs);
	b.recs = NULL;

	sc.u = x_malloc((maxcount + 1) * sizeof(*sc.u));
	sc.t = x_malloc((maxcount + 1) * sizeof(*sc.t));
	sc.d = x_malloc((maxcount + 1) * sizeof(*sc.d));
	sc.d2 = x_malloc((maxcount + 1) * sizeof(*sc.d2));
	out->patterns = x_calloc(nkeep ? nkeep : 1, sizeof(*out->patterns));
	if (!sc.u || !sc.t || !sc.d || !sc.d2 || !out->patterns)
		goto fail;
	for (j = 0; j < nkeep; j++) {
		uint32_t p = keep[j];
		const bpat *bp = &b.pats[p];
		pt_pattern *pp = &out->patterns[out->npatterns];

		if (bp->cls == PT_C_PYTHON) {
			pp->key = node_key(&b, bp->key);
		} else {
			size_t len;
			const char *s = pt_strtab_get(st->strs, bp->key, &len);
			pp->key = x_strndup(s, len);
		}
		if (!pp->key)
			goto fail;
		out->npatterns++;
		pp->cls = bp->cls;
		pp->count = bp->count;
		pp->bottleneck = wns > 0 ? owned[p] / wns : 0;
		pp->exec_ratio = wns > 0 ? (double)bp->clipped_ns / wns : 0;
		pattern_stats(&b, evs + off[p], off[p + 1] - off[p], pp, &sc);
	}
	qsort(out->patterns, out->npatterns, sizeof(*out->patterns), pattern_cmp);
	rc = PT_OK;
	goto out;
fail:
	rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory while summarising %zu events", st->n);
out:
	x_free(sc.d2);
	x_free(sc.d);
	x_free(sc.t);
	x_free(sc.u);
	x_free(evs);
	x_free(off);
	x_free(keep);
	x_free(owned);
	x_free(fr);
	builder_free(&b);
	return rc;
}
