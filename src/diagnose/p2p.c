/*
 * p2p.c - point-to-point transfers across workers (docs/diagnose.md
 * "Point to point"): the pair matrix (source rank, destination rank: bytes,
 * time, bandwidth, transfers) from the workers' "p2p" rows
 * (src/analysis/p2p.c), report.json's "p2p" key, and a finding for a
 * destination, a source or a pair whose bandwidth is markedly below the
 * others'.
 *
 * Flow: summaries' p2p rows --pairs()--> matrix --judge()--> findings
 * (category Communication) and "p2p" rows; diagnose.c calls diag_p2p after
 * the Communication section.
 *
 * Each transfer is seen by both ends: the sender's send and the receiver's
 * receive.  Each end's time also holds its wait for the other end to
 * arrive, so a pair's time is the smaller of the two ends' (the end that
 * waited less is nearer the time on the wire); with one end profiled, that
 * end's.
 */
#include "internal.h"
#include "sections.h"
#include "../model/commkind.h"
#include "../report/keys.h"
#include "../util/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One end's view of a pair. */
typedef struct pend {
	int64_t src, dst;
	int dir;                 /* the end: PT_P2P_SEND (src's) or PT_P2P_RECV (dst's) */
	const pt_p2p_row *r;
} pend;

/* A pair of the matrix. */
typedef struct ppair {
	int64_t src, dst;
	uint64_t count, bytes;
	double ms;               /* the time of the transfers with bytes */
	double wall;             /* their union over time (they may overlap) */
	int from;                /* whose time: PT_P2P_SEND or PT_P2P_RECV */
	int slow;                /* named by a finding (itself, its source or destination) */
} ppair;

/* A destination, source or pair summed. */
typedef struct pent {
	int64_t rank, other;     /* other: the pair's source, else -1 */
	uint64_t count, bytes;
	double ms, wall, bw;
	size_t pair;             /* E_PAIR: its pair (index) */
} pent;

enum { E_DST, E_SRC, E_PAIR };

static int dbl_cmp(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return a < b ? -1 : a > b;
}

static int pend_cmp(const void *pa, const void *pb)
{
	const pend *a = pa, *b = pb;

	if (a->src != b->src)
		return a->src < b->src ? -1 : 1;
	if (a->dst != b->dst)
		return a->dst < b->dst ? -1 : 1;
	return a->dir - b->dir;
}

/* Every worker's rows as ends of (src, dst) pairs, sorted; NULL with *n 0
 * when none (or out of memory: c->oom). */
static pend *ends(dctx *c, size_t *n)
{
	size_t i, j, k = 0, tot = 0;
	pend *e;

	for (i = 0; i < c->nw; i++)
		if (c->w[i].s->rank >= 0)
			tot += c->w[i].s->np2p;
	*n = 0;
	if (!tot)
		return NULL;
	e = x_calloc(tot, sizeof(*e));
	if (!e) {
		c->oom = 1;
		return NULL;
	}
	for (i = 0; i < c->nw; i++) {
		const pt_summary *s = c->w[i].s;
		for (j = 0; s->rank >= 0 && j < s->np2p; j++) {
			const pt_p2p_row *r = &s->p2p[j];
			e[k].dir = r->dir;
			e[k].src = r->dir == PT_P2P_SEND ? s->rank : r->peer;
			e[k].dst = r->dir == PT_P2P_SEND ? r->peer : s->rank;
			e[k++].r = r;
		}
	}
	qsort(e, k, sizeof(*e), pend_cmp);
	*n = k;
	return e;
}

/* The pairs from the sorted ends: one per (src, dst), its time the smaller
 * of the two ends' (the file comment says why). */
static ppair *pairs(dctx *c, const pend *e, size_t ne, size_t *np)
{
	ppair *p = x_calloc(ne ? ne : 1, sizeof(*p));
	size_t i, n = 0;

	if (!p) {
		c->oom = 1;
		return NULL;
	}
	for (i = 0; i < ne; i++) {
		const pt_p2p_row *r = e[i].r;
		ppair *q;

		if (n && p[n - 1].src == e[i].src && p[n - 1].dst == e[i].dst) {
			q = &p[n - 1];
			if (r->nbytes && r->ms_bytes > 0 && (!q->bytes || r->ms_bytes < q->ms)) {
				q->ms = r->ms_bytes;
				q->wall = r->wall_ms;
				q->from = e[i].dir;
				q->bytes = r->bytes > q->bytes ? r->bytes : q->bytes;
			}
			q->count = r->count > q->count ? r->count : q->count;
			continue;
		}
		q = &p[n++];
		q->src = e[i].src;
		q->dst = e[i].dst;
		q->count = r->count;
		q->bytes = r->nbytes ? r->bytes : 0;
		q->ms = r->nbytes ? r->ms_bytes : 0;
		q->wall = r->nbytes ? r->wall_ms : 0;
		q->from = e[i].dir;
	}
	*np = n;
	return p;
}

/* GB/s of bytes in ms (bytes per ns), NAN when either is unknown. */
static double gbps(uint64_t bytes, double ms)
{
	return bytes && ms > 0 ? (double)bytes / (ms * 1e6) : NAN;
}

static int pent_cmp(const void *pa, const void *pb)
{
	const pent *a = pa, *b = pb;

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return a->other < b->other ? -1 : a->other > b->other;
}

/* The destinations (kind E_DST), sources (E_SRC) or pairs (E_PAIR) with
 * bytes, summed from the pairs; *n of them.  One sort: O(n log n) in the
 * pairs (an all-pairs job of 1,000 ranks has a million). */
static pent *entities(dctx *c, const ppair *p, size_t np, int kind, size_t *n)
{
	pent *e = x_calloc(np ? np : 1, sizeof(*e));
	size_t i, k = 0, m = 0;

	if (!e) {
		c->oom = 1;
		return NULL;
	}
	for (i = 0; i < np; i++) {
		if (!p[i].bytes || !(p[i].ms > 0))
			continue;
		e[m].rank = kind == E_SRC ? p[i].src : p[i].dst;
		e[m].other = kind == E_PAIR ? p[i].src : -1;
		e[m].count = p[i].count;
		e[m].bytes = p[i].bytes;
		e[m].ms = p[i].ms;
		e[m].wall = p[i].wall;
		e[m++].pair = i;
	}
	if (m)
		qsort(e, m, sizeof(*e), pent_cmp);
	for (i = 0; i < m; i++) {
		if (k && e[k - 1].rank == e[i].rank && e[k - 1].other == e[i].other) {
			e[k - 1].count += e[i].count;
			e[k - 1].bytes += e[i].bytes;
			e[k - 1].ms += e[i].ms;
			e[k - 1].wall += e[i].wall;
			continue;
		}
		e[k++] = e[i];
	}
	for (i = 0; i < k; i++)
		e[i].bw = gbps(e[i].bytes, e[i].ms);
	*n = k;
	return e;
}

/* The worker of a rank, UINT32_MAX when none. */
static uint32_t worker_of(const dctx *c, int64_t rank)
{
	size_t i;

	for (i = 0; i < c->nw; i++)
		if (c->w[i].s->rank == rank)
			return (uint32_t)i;
	return UINT32_MAX;
}

static const char *const ent_words[] = { "destinations", "sources", "pairs" };

/* The finding for entity x, slower than the others' median med, on the worker of
 * its rank (none when that rank was not profiled). */
static void finding(dctx *c, int kind, const pent *x, double med)
{
	uint32_t wi = worker_of(c, x->rank); /* a pair's: its destination's */
	const dworker *w;
	double extra, steps;
	dfinding *f;
	pt_sb who = { 0 };
	char fn[64];

	if (wi == UINT32_MAX)
		return;
	w = &c->w[wi];
	steps = dw_steps(w);
	/* the time beyond the others' bandwidth, scaled to the wall time
	 * (transfers that overlap lose their time once), at most the window */
	extra = (x->ms - (double)x->bytes / (med * 1e6)) * (x->ms > 0 ? x->wall / x->ms : 0);
	if (extra > w->window_ms)
		extra = w->window_ms;
	if (kind == E_PAIR)
		snprintf(fn, sizeof(fn), "p2p %lld->%lld", (long long)x->other, (long long)x->rank);
	else
		snprintf(fn, sizeof(fn), "p2p %s %lld", kind == E_DST ? "into" : "out of",
			 (long long)x->rank);
	f = df_add(c, DC_COMM, w->id, pt_report_strdup(c->rep, fn), "bandwidth (GB/s)", x->bw, med,
		   extra > 0 ? extra : 0);
	if (!f)
		return;
	df_cause(f, PT_CAUSE_SLOW_P2P, PT_UNIT_GBPS);
	df_metric(f, "others", med, PT_UNIT_GBPS);
	df_metric(f, "slower (x)", med / x->bw, PT_UNIT_X);
	df_metric(f, "transfers", (double)x->count, PT_UNIT_COUNT);
	df_metric(f, "bytes", (double)x->bytes, PT_UNIT_BYTES);
	df_metric(f, "ms per step", (extra > 0 ? extra : 0) / steps, PT_UNIT_MS_STEP);
	if (kind == E_PAIR) {
		uint32_t si = worker_of(c, x->other);
		pt_sb_adds(&who, "from ");
		if (si != UINT32_MAX)
			df_who(&who, c, si, 'R');
		else
			pt_sb_addf(&who, "rank %lld", (long long)x->other);
		pt_sb_adds(&who, " to ");
	}
	df_arg(c, f, "%s", kind == E_DST ? "into " : kind == E_SRC ? "out of " :
		   who.buf ? who.buf : "");
	df_arg(c, f, "%s", ent_words[kind]);
	if (x->bytes >= 1000000000)
		df_arg(c, f, "%.3g GB", (double)x->bytes / 1e9);
	else
		df_arg(c, f, "%.3g MB", (double)x->bytes / 1e6);
	df_arg(c, f, "%s", kind == E_DST ? "a slow link, NIC or switch port on the way into this "
		   "rank, or a receiver that posts its receives late" : kind == E_SRC ?
		   "a slow link, NIC or switch port on the way out of this rank, or a sender that "
		   "is late" : "a slow link between these two ranks (the other pairs into and out "
		   "of them are not slow)");
	pt_sb_free(&who);
}

/* Entities of one kind markedly slower than the others (the others'
 * median bandwidth, leave-one-out, at least --p2p-slow times its own; not
 * the z test: real pairs spread 2x on an idle host, docs/diagnose.md):
 * findings, and their pairs marked slow.  A pair whose source or
 * destination is already named is left to that finding (E_PAIR).  The
 * bandwidths are sorted once; each leave-one-out median is then O(1). */
static void judge(dctx *c, ppair *p, size_t np, int kind)
{
	size_t n = 0, i, j;
	pent *e = entities(c, p, np, kind, &n);
	double *v = e ? x_calloc(np ? 2 * np : 2, sizeof(*v)) : NULL;

	if (!e || !v) {
		c->oom = 1;
		goto out;
	}
	if (n < 3)
		goto out;
	for (i = 0; i < n; i++)
		v[i] = e[i].bw;
	qsort(v, n, sizeof(*v), dbl_cmp);
	for (i = 0; i < n; i++) {
		double med = pt_robust_sorted_median(v, n, 0, pt_robust_find(v, n, e[i].bw));

		if (!(med > 0) || !(e[i].bw > 0) || med / e[i].bw < c->o->p2p_slow)
			continue;
		if (kind == E_PAIR && p[e[i].pair].slow)
			continue;
		finding(c, kind, &e[i], med);
		for (j = 0; j < np; j++)
			if ((kind == E_DST && p[j].dst == e[i].rank) ||
			    (kind == E_SRC && p[j].src == e[i].rank) || (kind == E_PAIR && j == e[i].pair))
				p[j].slow = 1;
	}
out:
	x_free(v);
	x_free(e);
}

/* report.json's "p2p": one row per pair, by "SRC->DST" (a map of objects:
 * the text report draws it as a table). */
static void write_rows(dctx *c, const ppair *p, size_t np)
{
	pt_rv *a = pt_rv_obj(c->rep, pt_report_root(c->rep), PT_KEY_P2P);
	size_t i;
	char k[48];

	for (i = 0; i < np; i++) {
		pt_rv *o;
		snprintf(k, sizeof(k), "%lld->%lld", (long long)p[i].src, (long long)p[i].dst);
		o = pt_rv_obj(c->rep, a, k);
		pt_rv_int(c->rep, o, PT_KEY_SOURCE, p[i].src);
		pt_rv_int(c->rep, o, PT_KEY_DESTINATION, p[i].dst);
		pt_rv_int(c->rep, o, PT_KEY_COUNT, (int64_t)p[i].count);
		pt_rv_int(c->rep, o, PT_KEY_BYTES, (int64_t)p[i].bytes);
		pt_rv_num_or_null(c->rep, o, PT_KEY_TIME_MS, p[i].bytes ? p[i].ms : NAN);
		pt_rv_num_or_null(c->rep, o, PT_KEY_BANDWIDTH_GB_S, gbps(p[i].bytes, p[i].ms));
		pt_rv_str(c->rep, o, PT_KEY_TIME_FROM, p[i].from == PT_P2P_SEND ? "send" : "recv");
		pt_rv_bool(c->rep, o, PT_KEY_SLOW, p[i].slow);
	}
}

void diag_p2p(dctx *c)
{
	size_t ne = 0, np = 0;
	pend *e = ends(c, &ne);
	ppair *p = e ? pairs(c, e, ne, &np) : NULL;

	if (!p || !np)
		goto out;
	judge(c, p, np, E_DST);
	judge(c, p, np, E_SRC);
	judge(c, p, np, E_PAIR);
	write_rows(c, p, np);
out:
	x_free(p);
	x_free(e);
}
