/*
 * lockstep.c - who waited for whom (docs/design.md "Lockstep: culprits and
 * victims"): matches the workers' collective instances, estimates each
 * worker's clock offset from the instances' ends, finds each instance's
 * last arriver and every member's wait, names the stragglers (the workers
 * the others waited for), what made them late (function by function, in
 * the span before their late arrivals) and what fixing them is worth, and
 * takes the victims' waiting out of the other sections' findings.
 *
 * Flow: pt_summary "collectives" (src/analysis/collectives.c) --> here,
 * after the five sections and before findings.c ranks the findings -->
 * report "Lockstep" + "Lockstep" findings.  Rules and thresholds:
 * docs/diagnose.md "Lockstep".
 */
#include "internal.h"
#include "../model/commkind.h"
#include "sections.h"
#include "../util/strbuf.h"
#include "../util/xalloc.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX
/* Instances of one straggler looked at for its cause functions, at most
 * (the latest arrivals first). */
#define MAX_CAUSE_INST 64
#define MAX_CAUSES 3

typedef struct lkw {
	uint32_t w;            /* index into c->w */
	const char *mismatch;  /* why it is left out (report arena), NULL: takes part */
	uint32_t *cs, *cn;     /* per job channel: first instance, count (NONE: absent) */
	uint64_t *sig;         /* per job channel: signature of its op sequence */
	int *sh;               /* per job channel: reference index - own index */
	double shift_us;       /* window_start_us - the reference's */
	double offset_us, resid_us;
	double waited_us, blamed_us, saved_us;
	uint32_t last;
	int straggler;
} lkw;

typedef struct lk {
	dctx *c;
	lkw *w;                /* participants (version >= 2 with collectives) */
	size_t nw;
	uint32_t *m;           /* matched participants (indices into w) */
	size_t nm;
	char **chans;          /* job channel names (borrowed from summaries) */
	size_t nchan;
	size_t ninst;          /* instances per matched worker, all channels */
	uint32_t *ich, *ipos;  /* instance -> channel, reference index */
	uint32_t *lo, *hi;     /* per channel: reference indices every matched worker has */
	uint32_t *ref;         /* per channel: the reference participant */
	double *arr, *end;     /* [inst * nm + k]: aligned µs (reference clock) */
	uint32_t *ilast;       /* instance -> last arriver (index into m) */
	double *isaved;        /* instance -> how much later the last arriver came
	                          than the median member or the second last (µs) */
	double *tmp;
	size_t main_ch;
	size_t nbad;           /* instances whose ends disagree: left out */
} lk;

/* ---- collective names ------------------------------------------------------ */

/* The collective a kernel or op name stands for, as a small token, so that
 * "ncclKernel_AllReduce_RING_LL_Sum_float" and "nccl:all_reduce" compare
 * equal and a different order shows. */
static const char *const op_names[] = {
	"allreduce", "allgather", "reducescatter", "alltoall", "sendrecv", "broadcast",
	"barrier", "reduce", "send", "recv", "gather", "scatter",
};

static int op_token(const char *name)
{
	char buf[256];
	size_t n = 0, i;

	for (; *name && n + 1 < sizeof(buf); name++)
		if (*name != '_' && *name != ' ')
			buf[n++] = (char)tolower((unsigned char)*name);
	buf[n] = 0;
	for (i = 0; i < sizeof(op_names) / sizeof(op_names[0]); i++)
		if (strstr(buf, op_names[i]))
			return (int)i + 1;
	return 0;
}

static const char *op_label(int t)
{
	return t > 0 ? op_names[t - 1] : "other";
}

/* ---- small helpers ----------------------------------------------------------- */

static double median_of(double *v, size_t n)
{
	return n ? pt_robust_median(v, n, 0) : 0;
}

static const char *wname(const dctx *c, uint32_t w, char *buf, size_t cap)
{
	const pt_summary *s = c->w[w].s;

	if (s->rank >= 0)
		snprintf(buf, cap, "rank %lld (%s)", (long long)s->rank, c->w[w].id);
	else
		snprintf(buf, cap, "%s", c->w[w].id);
	return buf;
}

static const char *arena_printf(dctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static const char *arena_printf(dctx *c, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return pt_report_strdup(c->rep, buf);
}

static void lk_free(lk *L)
{
	size_t i;

	for (i = 0; i < L->nw; i++) {
		x_free(L->w[i].cs);
		x_free(L->w[i].cn);
		x_free(L->w[i].sig);
		x_free(L->w[i].sh);
	}
	x_free(L->lo);
	x_free(L->hi);
	x_free(L->ref);
	x_free(L->tmp);
	x_free(L->ilast);
	x_free(L->isaved);
	x_free(L->end);
	x_free(L->arr);
	x_free(L->ipos);
	x_free(L->ich);
	x_free(L->chans);
	x_free(L->m);
	x_free(L->w);
}

/* ---- matching ------------------------------------------------------------------ */

static size_t chan_find(const lk *L, const char *name)
{
	size_t j;

	for (j = 0; j < L->nchan; j++)
		if (!strcmp(L->chans[j], name))
			return j;
	return (size_t)-1;
}

/* Channels of each participant: the job's channel list, each worker's
 * range of instances per channel and the signature of its ops. */
static int index_channels(lk *L)
{
	dctx *c = L->c;
	size_t i, j, k, cap = 0;

	for (i = 0; i < L->nw; i++) {
		const pt_summary *s = c->w[L->w[i].w].s;
		for (j = 0; j < s->ncoll_chans; j++)
			if (chan_find(L, s->coll_chans[j]) == (size_t)-1) {
				if (X_GROW(L->chans, cap, L->nchan + 1))
					return -1;
				L->chans[L->nchan++] = s->coll_chans[j];
			}
	}
	for (i = 0; i < L->nw; i++) {
		lkw *W = &L->w[i];
		const pt_summary *s = c->w[W->w].s;
		uint32_t *map = x_malloc((s->ncoll_chans ? s->ncoll_chans : 1) * sizeof(*map));
		int *tok = x_malloc((s->ncoll_names ? s->ncoll_names : 1) * sizeof(*tok));

		W->cs = x_malloc(L->nchan * sizeof(*W->cs));
		W->cn = x_malloc(L->nchan * sizeof(*W->cn));
		W->sig = x_calloc(L->nchan, sizeof(*W->sig));
		W->sh = x_calloc(L->nchan, sizeof(*W->sh));
		if (!map || !tok || !W->cs || !W->cn || !W->sig || !W->sh) {
			x_free(map);
			x_free(tok);
			return -1;
		}
		for (j = 0; j < s->ncoll_chans; j++)
			map[j] = (uint32_t)chan_find(L, s->coll_chans[j]);
		for (j = 0; j < s->ncoll_names; j++)
			tok[j] = op_token(s->coll_names[j]);
		for (j = 0; j < L->nchan; j++) {
			W->cs[j] = NONE;
			W->cn[j] = 0;
		}
		for (k = 0; k < s->ncoll; k++) {
			uint32_t ch = map[s->coll[k].chan];
			if (W->cs[ch] == NONE) {
				W->cs[ch] = (uint32_t)k;
			} else if (W->cs[ch] + W->cn[ch] != k && !W->mismatch) {
				W->mismatch = arena_printf(c, "its instances on %s are not in channel order",
							   L->chans[ch]);
			}
			W->cn[ch]++;
			W->sig[ch] = (W->sig[ch] ^ (uint64_t)(tok[s->coll[k].name] + 1)) *
				     0x100000001b3ull;
		}
		for (j = 0; j < L->nchan; j++)
			W->sig[j] = (W->sig[j] ^ W->cn[j]) * 0x9e3779b97f4a7c15ull;
		x_free(map);
		x_free(tok);
	}
	return 0;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Describe how W's channel ch differs from the reference R's. */
static const char *describe(lk *L, const lkw *W, const lkw *R, size_t ch)
{
	dctx *c = L->c;
	const pt_summary *ws = c->w[W->w].s, *rs = c->w[R->w].s;
	uint32_t n = W->cn[ch], rn = R->cn[ch], k;

	if (n < rn)
		return arena_printf(c, "%u of the %u collectives on %s are missing (it has %u)",
				    rn - n, rn, L->chans[ch], n);
	if (n > rn)
		return arena_printf(c, "it has %u extra collectives on %s (%u where the others have %u)",
				    n - rn, L->chans[ch], n, rn);
	for (k = 0; k < n; k++) {
		int a = op_token(ws->coll_names[ws->coll[W->cs[ch] + k].name]);
		int b = op_token(rs->coll_names[rs->coll[R->cs[ch] + k].name]);
		if (a != b)
			return arena_printf(c, "collective %u on %s is %s where the others have %s "
					    "(different order)", k + 1, L->chans[ch], op_label(a),
					    op_label(b));
	}
	return arena_printf(c, "its collectives on %s differ from the others'", L->chans[ch]);
}

/* Shifts tried when a worker's sequence starts or ends one or two
 * collectives off the reference's: its window boundaries fell on the
 * other side of a collective (a straggler starts its steps late). */
#define MAX_SHIFT 2

static int tok_at(const pt_summary *s, uint32_t idx)
{
	return op_token(s->coll_names[s->coll[idx].name]);
}

/* A fit on fewer instances than this cannot claim to be the steadier: the
 * spread of one or two differences is 0 or half their distance whatever
 * the clocks do.  (A gloo rank missing the window's last collective, on a
 * loaded host where matched ends spread 200 us: shifted by two, its one
 * remaining pair had no spread and beat the right fit of three.) */
#define MIN_STEADY 3

/* W's shift against R on channel ch: the one (|d| <= MAX_SHIFT) under which
 * the ops agree where both have instances, over all but at most
 * MAX_SHIFT of the shorter sequence, with the steadiest end-time
 * difference (the clock offset is one number).  0 and *ok = 0 when none. */
static int find_shift(lk *L, const lkw *W, const lkw *R, size_t ch, int *ok, double *madp,
		      double *maxp)
{
	dctx *c = L->c;
	const pt_summary *ws = c->w[W->w].s, *rs = c->w[R->w].s;
	int64_t nw = W->cn[ch], nr = R->cn[ch], d, k;
	double best = INFINITY, bestmx = INFINITY, shift = ws->window_start_us - rs->window_start_us;
	int64_t bestn = 0;
	int bestd = 0;

	*ok = 0;
	for (d = -MAX_SHIFT; d <= MAX_SHIFT; d++) {
		int64_t k0 = d < 0 ? -d : 0, k1 = nw < nr - d ? nw : nr - d, n = k1 - k0;
		int64_t need = (nw < nr ? nw : nr) - MAX_SHIFT;
		double med, mad, mx = 0;
		if (n < 1 || n < need)
			continue;
		for (k = k0; k < k1; k++)
			if (tok_at(ws, W->cs[ch] + (uint32_t)k) != tok_at(rs, R->cs[ch] + (uint32_t)(k + d)))
				break;
		if (k < k1)
			continue;
		for (k = k0; k < k1; k++)
			L->tmp[k - k0] = shift + ws->coll[W->cs[ch] + k].end_us -
					 rs->coll[R->cs[ch] + k + d].end_us;
		med = median_of(L->tmp, (size_t)n);
		for (k = 0; k < n; k++) {
			L->tmp[k] = fabs(L->tmp[k] - med);
			mx = L->tmp[k] > mx ? L->tmp[k] : mx;
		}
		mad = median_of(L->tmp, (size_t)n);
		/* The smallest shift wins unless another makes the ends
		 * clearly steadier (half the spread and 50 us less, over at
		 * least MIN_STEADY instances): ends agree to a few us when
		 * matched, are ms apart when not. */
		if (!*ok || (n >= MIN_STEADY && mad < 0.5 * best - 50 && llabs(d) != llabs(bestd)) ||
		    (llabs(d) < llabs(bestd) && !(bestn >= MIN_STEADY && best < 0.5 * mad - 50))) {
			best = mad;
			bestmx = mx;
			bestn = n;
			bestd = (int)d;
			*ok = 1;
		}
	}
	*madp = best;
	*maxp = bestmx;
	return bestd;
}

/* The most common signature per channel gives the reference; each worker
 * is matched to it with a shift of at most MAX_SHIFT at the ends, or is a
 * mismatch. */
static int match(lk *L)
{
	uint64_t *h = x_malloc(L->nw * sizeof(*h));
	size_t i, j, ch, maxn = 1;

	L->lo = x_calloc(L->nchan ? L->nchan : 1, sizeof(*L->lo));
	L->hi = x_calloc(L->nchan ? L->nchan : 1, sizeof(*L->hi));
	L->ref = x_calloc(L->nchan ? L->nchan : 1, sizeof(*L->ref));
	for (i = 0; i < L->nw; i++)
		for (ch = 0; ch < L->nchan; ch++)
			if (L->w[i].cn[ch] > maxn)
				maxn = L->w[i].cn[ch];
	L->tmp = x_malloc((maxn > L->nw ? maxn : L->nw) * sizeof(*L->tmp) + 8);
	if (!h || !L->lo || !L->hi || !L->ref || !L->tmp) {
		x_free(h);
		return -1;
	}
	for (ch = 0; ch < L->nchan; ch++) {
		uint64_t best = 0;
		size_t bestn = 0, run = 0, ref = 0;
		double base;

		for (i = 0; i < L->nw; i++)
			h[i] = L->w[i].sig[ch];
		qsort(h, L->nw, sizeof(*h), u64_cmp);
		for (i = 0; i < L->nw; i++) {
			run = i && h[i] == h[i - 1] ? run + 1 : 1;
			if (run > bestn) {
				bestn = run;
				best = h[i];
			}
		}
		for (i = 0; i < L->nw; i++)
			if (L->w[i].sig[ch] == best) {
				ref = i;
				break;
			}
		L->ref[ch] = (uint32_t)ref;
		/* How steady the end differences of the matching workers are:
		 * a shifted match must be about as steady to count. */
		{
			size_t nb = 0;
			double *bm = x_malloc(L->nw * sizeof(*bm));
			if (!bm) {
				x_free(h);
				return -1;
			}
			for (i = 0; i < L->nw; i++) {
				int ok;
				double mad, mx;
				if (i == ref || L->w[i].mismatch || L->w[i].sig[ch] != best)
					continue;
				find_shift(L, &L->w[i], &L->w[ref], ch, &ok, &mad, &mx);
				if (ok)
					bm[nb++] = mad;
			}
			base = nb ? median_of(bm, nb) : 0;
			x_free(bm);
		}
		for (i = 0; i < L->nw; i++) {
			lkw *W = &L->w[i];
			int ok;
			double mad, mx;
			if (W->mismatch)
				continue;
			if (W->cs[ch] == NONE || L->w[ref].cs[ch] == NONE) {
				W->mismatch = arena_printf(L->c, W->cs[ch] == NONE ?
							   "it has no collectives on %s" :
							   "it has collectives on %s, the others none",
							   L->chans[ch]);
				continue;
			}
			/* The same ops in the same number: the same instances (a
			 * shift by whole steps would fit the times as well). */
			if (W->sig[ch] == best)
				continue;
			W->sh[ch] = find_shift(L, W, &L->w[ref], ch, &ok, &mad, &mx);
			/* the ops fit, the times do not (every instance must end
			 * with the reference's, about as well as the matching
			 * workers' do): a collective missing or extra inside */
			if (ok && mx > 10 * base + 200)
				ok = 0;
			if (!ok)
				W->mismatch = describe(L, W, &L->w[ref], ch);
		}
	}
	x_free(h);
	L->m = x_malloc(L->nw * sizeof(*L->m));
	if (!L->m)
		return -1;
	for (i = j = 0; i < L->nw; i++)
		if (!L->w[i].mismatch)
			L->m[j++] = (uint32_t)i;
	L->nm = j;
	/* The reference indices every matched worker has. */
	for (ch = 0; ch < L->nchan; ch++) {
		int64_t lo = 0, hi = L->w[L->ref[ch]].cn[ch];
		for (j = 0; j < L->nm; j++) {
			const lkw *W = &L->w[L->m[j]];
			int64_t a = W->sh[ch], b = (int64_t)W->sh[ch] + W->cn[ch];
			if (a > lo)
				lo = a;
			if (b < hi)
				hi = b;
		}
		L->lo[ch] = (uint32_t)lo;
		L->hi[ch] = (uint32_t)(hi > lo ? hi : lo);
	}
	return 0;
}

/* Worker W's own index of reference index j on channel ch. */
static inline uint32_t own(const lkw *W, size_t ch, uint32_t j)
{
	return W->cs[ch] + (uint32_t)((int64_t)j - W->sh[ch]);
}

/* ---- clocks and waits ------------------------------------------------------------ */

/* Workers on one host read one clock: when the host is known and the
 * times are wall-clock times (epoch µs; a legacy trace counts from its own
 * profiler start, per process), they share one offset, the median of
 * theirs.  Otherwise a worker whose collectives take longer (its ends
 * later, a slow link) would pass for a worker with a skewed clock.  A
 * worker whose own offset lies further than HOST_CLOCK_TOL_US from its
 * host's keeps its own: its trace's base time was not read from that clock
 * (seen: a torch 1.13 legacy trace 157 ms off on a loaded node), and a
 * slow link does not move ends by that much. */
#define HOST_CLOCK_TOL_US 5000.0
static int host_cmp(const void *a, const void *b, void *arg)
{
	const lk *L = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int r = strcmp(L->c->w[L->w[L->m[x]].w].s->host, L->c->w[L->w[L->m[y]].w].s->host);

	return r ? r : (x < y ? -1 : x > y);
}

static int share_host_clocks(lk *L, double *tmp)
{
	dctx *c = L->c;
	size_t nm = L->nm, q, n = 0, i, j;
	uint32_t *ix = x_malloc((nm ? nm : 1) * sizeof(*ix));

	if (!ix)
		return -1;
	for (q = 0; q < nm; q++) {
		const pt_summary *s = c->w[L->w[L->m[q]].w].s;
		if (s->host && s->host[0] && s->window_start_us > 1e12)
			ix[n++] = (uint32_t)q;
	}
	qsort_r(ix, n, sizeof(*ix), host_cmp, L);
	for (i = 0; i < n; i = j) {
		const char *h = c->w[L->w[L->m[ix[i]]].w].s->host;
		double off;
		for (j = i; j < n && !strcmp(c->w[L->w[L->m[ix[j]]].w].s->host, h); j++)
			tmp[j - i] = L->w[L->m[ix[j]]].offset_us;
		if (j - i < 2)
			continue;
		off = median_of(tmp, j - i);
		for (q = i; q < j; q++)
			if (fabs(L->w[L->m[ix[q]]].offset_us - off) <= HOST_CLOCK_TOL_US)
				L->w[L->m[ix[q]]].offset_us = off;
	}
	x_free(ix);
	return 0;
}

static int align(lk *L)
{
	dctx *c = L->c;
	size_t nm = L->nm, ch, i, k, q;
	const lkw *R = &L->w[L->m[0]];
	const pt_summary *rs = c->w[R->w].s;
	double *d;

	L->ninst = 0;
	for (ch = 0; ch < L->nchan; ch++)
		L->ninst += L->hi[ch] - L->lo[ch];
	L->ich = x_malloc((L->ninst ? L->ninst : 1) * sizeof(*L->ich));
	L->ipos = x_malloc((L->ninst ? L->ninst : 1) * sizeof(*L->ipos));
	L->arr = x_malloc((L->ninst * nm != 0 ? L->ninst * nm : 1) * sizeof(*L->arr));
	L->end = x_malloc((L->ninst * nm != 0 ? L->ninst * nm : 1) * sizeof(*L->end));
	L->ilast = x_calloc(L->ninst ? L->ninst : 1, sizeof(*L->ilast));
	L->isaved = x_calloc(L->ninst ? L->ninst : 1, sizeof(*L->isaved));
	x_free(L->tmp);
	L->tmp = x_malloc((L->ninst > nm ? L->ninst : nm) * sizeof(*L->tmp) + 8);
	if (!L->ich || !L->ipos || !L->arr || !L->end || !L->ilast || !L->isaved || !L->tmp)
		return -1;
	for (ch = 0, i = 0; ch < L->nchan; ch++)
		for (k = L->lo[ch]; k < L->hi[ch]; k++, i++) {
			L->ich[i] = (uint32_t)ch;
			L->ipos[i] = (uint32_t)k;
		}
	/* Times on each worker's own clock, relative to the reference's
	 * window start (differences of ~1.7e15 µs starts first: exact). */
	for (q = 0; q < nm; q++) {
		lkw *W = &L->w[L->m[q]];
		const pt_summary *s = c->w[W->w].s;
		W->shift_us = s->window_start_us - rs->window_start_us;
		for (i = 0; i < L->ninst; i++) {
			const pt_coll *x = &s->coll[own(W, L->ich[i], L->ipos[i])];
			L->arr[i * nm + q] = W->shift_us + x->arrive_us;
			L->end[i * nm + q] = W->shift_us + x->end_us;
		}
	}
	/* Offset: the median of (own end - reference end), then refined
	 * against each instance's median end; residual: the median distance
	 * of a worker's aligned ends from the instances' median ends. */
	d = L->tmp;
	for (q = 0; q < nm; q++) {
		lkw *W = &L->w[L->m[q]];
		for (i = 0; i < L->ninst; i++)
			d[i] = L->end[i * nm + q] - L->end[i * nm];
		W->offset_us = median_of(d, L->ninst);
	}
	{
		double *med = x_malloc((L->ninst ? L->ninst : 1) * sizeof(*med));
		double *col = x_malloc(nm * sizeof(*col));
		if (!med || !col) {
			x_free(med);
			x_free(col);
			return -1;
		}
		for (i = 0; i < L->ninst; i++) {
			for (q = 0; q < nm; q++)
				col[q] = L->end[i * nm + q] - L->w[L->m[q]].offset_us;
			med[i] = median_of(col, nm);
		}
		for (q = 0; q < nm; q++) {
			lkw *W = &L->w[L->m[q]];
			for (i = 0; i < L->ninst; i++)
				d[i] = L->end[i * nm + q] - W->offset_us - med[i];
			W->offset_us += median_of(d, L->ninst);
		}
		if (share_host_clocks(L, col)) {
			x_free(col);
			x_free(med);
			return -1;
		}
		for (q = 0; q < nm; q++) {
			lkw *W = &L->w[L->m[q]];
			for (i = 0; i < L->ninst; i++)
				d[i] = fabs(L->end[i * nm + q] - W->offset_us - med[i]);
			W->resid_us = median_of(d, L->ninst);
		}
		x_free(col);
		x_free(med);
	}
	for (q = 0; q < nm; q++)
		for (i = 0; i < L->ninst; i++) {
			L->arr[i * nm + q] -= L->w[L->m[q]].offset_us;
			L->end[i * nm + q] -= L->w[L->m[q]].offset_us;
		}
	/* An instance at either end of its channel's matched range whose
	 * members do not end together (beyond 20 times the clock residual,
	 * and 1 ms) is not one instance: a window edge cut a different
	 * collective on some worker.  It takes no part.  Inside the range the
	 * position and the ops already say it is one instance, and the ends
	 * of CPU collectives spread by ms on a loaded host (gloo, 4 ranks on
	 * 2 busy cores: one rank's ring ended 3.9 ms before the others') with
	 * the step's whole wait in it. */
	for (q = 0; q < nm; q++)
		L->tmp[q] = L->w[L->m[q]].resid_us;
	{
		double thr = 20 * median_of(L->tmp, nm);
		if (thr < 1000)
			thr = 1000;
		for (i = 0; i < L->ninst; i++) {
			double lo = INFINITY, hi = -INFINITY;
			if (L->ipos[i] != L->lo[L->ich[i]] && L->ipos[i] + 1 != L->hi[L->ich[i]])
				continue;
			for (q = 0; q < nm; q++) {
				double e = L->end[i * nm + q];
				lo = e < lo ? e : lo;
				hi = e > hi ? e : hi;
			}
			if (hi - lo > 2 * thr) {
				L->ilast[i] = NONE;
				L->nbad++;
			}
		}
	}
	/* Waits and blame per instance. */
	for (i = 0; i < L->ninst; i++) {
		const double *a = &L->arr[i * nm];
		size_t last = 0;
		double sum = 0, second = -INFINITY, med;

		if (L->ilast[i] == NONE)
			continue;
		for (q = 1; q < nm; q++)
			if (a[q] > a[last])
				last = q;
		for (q = 0; q < nm; q++) {
			double wt = a[last] - a[q];
			L->w[L->m[q]].waited_us += wt;
			sum += wt;
			if (q != last && a[q] > second)
				second = a[q];
			L->tmp[q] = a[q];
		}
		med = median_of(L->tmp, nm);
		L->ilast[i] = (uint32_t)last;
		L->w[L->m[last]].blamed_us += sum;
		L->w[L->m[last]].last++;
		L->isaved[i] = a[last] - (second > med ? second : med);
		L->w[L->m[last]].saved_us += L->isaved[i];
	}
	/* The main channel: the one with most instances (as summarize chose). */
	L->main_ch = 0;
	for (ch = 1; ch < L->nchan; ch++)
		if (R->cn[ch] > R->cn[L->main_ch])
			L->main_ch = ch;
	(void)rs;
	return 0;
}

/* Each matched worker's own instances: its wait, the last arriver and its
 * what-if (align's), for the critical path (critpath.c).  -1: out of
 * memory. */
static int export_waits(lk *L)
{
	dctx *c = L->c;
	size_t nm = L->nm, q, i, k;

	c->lkw = x_calloc(c->nw ? c->nw : 1, sizeof(*c->lkw));
	if (!c->lkw)
		return -1;
	for (q = 0; q < nm; q++) {
		const lkw *W = &L->w[L->m[q]];
		const pt_summary *s = c->w[W->w].s;
		dlkwait *d = &c->lkw[W->w];
		d->wait_ms = x_malloc((s->ncoll + 1) * sizeof(*d->wait_ms));
		d->saved_ms = x_calloc(s->ncoll + 1, sizeof(*d->saved_ms));
		d->last = x_malloc((s->ncoll + 1) * sizeof(*d->last));
		if (!d->wait_ms || !d->saved_ms || !d->last)
			return -1;
		d->n = s->ncoll;
		for (k = 0; k < s->ncoll; k++) {
			d->wait_ms[k] = -1;
			d->last[k] = NONE;
		}
	}
	for (i = 0; i < L->ninst; i++) {
		const double *a = &L->arr[i * nm];
		uint32_t last = L->ilast[i];
		if (last == NONE)
			continue;
		for (q = 0; q < nm; q++) {
			const lkw *W = &L->w[L->m[q]];
			uint32_t j = own(W, L->ich[i], L->ipos[i]);
			dlkwait *d = &c->lkw[W->w];
			if (j >= d->n)
				continue;
			d->wait_ms[j] = (a[last] - a[q]) / 1e3;
			d->last[j] = L->w[L->m[last]].w;
			if (q == last)
				d->saved_ms[j] = L->isaved[i] / 1e3;
		}
	}
	return 0;
}

/* ---- cause functions ------------------------------------------------------------- */

static int blocking_leaf(const char *key);

typedef struct cacc {
	uint32_t key;
	const pt_pattern *p;   /* the straggler's */
	double extra, own, others, span;
	double score;
} cacc;

/* Share of the others' span a function fills (0..1). */
static double fill_share(const cacc *a)
{
	double f = a->span > 0 ? a->others / a->span : 0;

	return f < 0 ? 0 : f > 1 ? 1 : f;
}

static int cacc_cmp(const void *a, const void *b)
{
	const cacc *x = a, *y = b;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

typedef struct lateinst {
	size_t i;
	double late;
} lateinst;

static int late_cmp(const void *a, const void *b)
{
	const lateinst *x = a, *y = b;

	if (x->late != y->late)
		return x->late > y->late ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* ms of key at worker W's instance idx (0 when not among its causes). */
static double cause_ms(dctx *c, const pt_summary *s, uint32_t idx, uint32_t key)
{
	size_t lo = 0, hi = s->ncoll_cause, j;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s->coll_cause[mid].inst < idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (j = lo; j < s->ncoll_cause && s->coll_cause[j].inst == idx; j++) {
		const pt_pattern *p = &s->patterns[s->coll_cause[j].pat];
		if (diag_key_find(c, p->cls, p->key) == key)
			return s->coll_cause[j].ms;
	}
	return 0;
}

typedef struct sresult {
	double late_ms, span_extra_ms, predates_ms;
	size_t nlate;
	cacc *causes;
	size_t ncauses;
	/* the span-filling frames the causes explain (a thread that waits for
	 * the cause's work on another thread): keys borrowed from the summary */
	const char **waits;
	size_t nwaits;
} sresult;

static int causes_of(lk *L, size_t q, sresult *r)
{
	dctx *c = L->c;
	size_t nm = L->nm, i, k, nl = 0, j, nacc = 0, acap = 0;
	lkw *W = &L->w[L->m[q]];
	const pt_summary *s = c->w[W->w].s;
	lateinst *li = x_malloc((L->ninst ? L->ninst : 1) * sizeof(*li));
	double *v = x_malloc(nm * sizeof(*v));
	cacc *acc = NULL;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	if (!li || !v)
		goto out;
	for (i = 0; i < L->ninst; i++) {
		if (L->ilast[i] != q || L->ich[i] != L->main_ch)
			continue;
		for (k = j = 0; k < nm; k++)
			if (k != q)
				v[j++] = L->arr[i * nm + k];
		li[nl].i = i;
		li[nl].late = L->arr[i * nm + q] - median_of(v, j);
		nl++;
	}
	qsort(li, nl, sizeof(*li), late_cmp);
	if (nl > MAX_CAUSE_INST)
		nl = MAX_CAUSE_INST;
	for (j = 0; j < nl; j++) {
		size_t i2 = li[j].i, e;
		uint32_t pos = L->ipos[i2];
		double span_own = 0, span_med;

		/* Span on each worker's own clock: previous end (window start) to arrival. */
		for (k = e = 0; k < nm; k++) {
			const lkw *X = &L->w[L->m[k]];
			const pt_summary *xs = c->w[X->w].s;
			uint32_t o = own(X, L->main_ch, pos);
			double sp = xs->coll[o].arrive_us -
				    (o > X->cs[L->main_ch] ? xs->coll[o - 1].end_us : 0.0);
			if (k == q)
				span_own = sp;
			else
				v[e++] = sp;
		}
		span_med = median_of(v, e);
		r->late_ms += li[j].late / 1e3;
		r->span_extra_ms += (span_own - span_med > 0 ? span_own - span_med : 0) / 1e3;
		if (li[j].late > span_own - span_med)
			r->predates_ms += (li[j].late - (span_own - span_med > 0 ? span_own - span_med
										       : 0)) / 1e3;
		/* Function by function: own time minus the others' median. */
		for (e = 0; e < s->ncoll_cause; e++) {
			const pt_coll_cause *cc = &s->coll_cause[e];
			const pt_pattern *p;
			uint32_t key;
			size_t a, n2;
			double others;

			if (cc->inst != own(W, L->main_ch, pos))
				continue;
			p = &s->patterns[cc->pat];
			/* waiting in the span (a sync, a wait on a collective, a
			 * runtime call that blocks) is not what made it late */
			if (p->cls == PT_C_COMM ||
			    (p->cls == PT_C_PYTHON && blocking_leaf(p->key)) ||
			    (p->cls == PT_C_RUNTIME && strstr(p->key, "Synchronize")))
				continue;
			key = diag_key_find(c, p->cls, p->key);
			if (key == NONE)
				continue;
			for (k = n2 = 0; k < nm; k++) {
				const lkw *X = &L->w[L->m[k]];
				if (k == q)
					continue;
				v[n2++] = cause_ms(c, c->w[X->w].s, own(X, L->main_ch, pos), key);
			}
			others = median_of(v, n2);
			for (a = 0; a < nacc && acc[a].key != key; a++)
				;
			if (a == nacc) {
				if (X_GROW(acc, acap, nacc + 1))
					goto out;
				memset(&acc[nacc], 0, sizeof(acc[nacc]));
				acc[nacc].key = key;
				acc[nacc].p = p;
				nacc++;
			}
			acc[a].extra += cc->ms - others;
			acc[a].own += cc->ms;
			acc[a].others += others;
			acc[a].span += span_med / 1e3;
		}
	}
	r->nlate = nl;
	/* Order: the extra time, discounted by how much of the span the
	 * function fills on the others: a frame that waits for the span's work
	 * on another thread ("## backward ##" while autograd runs) grows with
	 * the span as much as the work does; the work fills little of it. */
	for (j = 0; j < nacc; j++)
		acc[j].score = acc[j].extra * (1 - 0.9 * fill_share(&acc[j]));
	if (nacc > 1)
		qsort(acc, nacc, sizeof(*acc), cacc_cmp);
	/* Name the functions that account for the extra time in the spans;
	 * drop a span-filling one whose extra the ones before it explain. */
	{
		double min = r->span_extra_ms * 0.1 > 0.05 ? r->span_extra_ms * 0.1 : 0.05;
		double named = 0;
		r->waits = x_malloc((nacc ? nacc : 1) * sizeof(*r->waits));
		if (!r->waits)
			goto out;
		for (j = 0; j < nacc && r->ncauses < MAX_CAUSES; j++) {
			if (acc[j].extra < min)
				continue;
			if (fill_share(&acc[j]) >= 0.7 && acc[j].extra <= 1.25 * named) {
				r->waits[r->nwaits++] = acc[j].p->key;
				continue;
			}
			named += acc[j].extra;
			acc[r->ncauses++] = acc[j];
		}
	}
	r->causes = acc;
	acc = NULL;
	rc = 0;
out:
	x_free(acc);
	x_free(v);
	x_free(li);
	return rc;
}

/* ---- symptoms on the victims ------------------------------------------------------ */

/* Is the innermost frame of this Python/CPU key a call that blocks on the
 * GPU or on a collective? */
static int blocking_leaf(const char *key)
{
	const char *leaf = strrchr(key, '|');

	return pt_wait_blocking_frame(leaf ? leaf + 1 : key);
}

/* Can waiting for peers make this finding?  Communication (a collective
 * lasts until the last member arrives), an idle GPU, and the host calls
 * that block on the GPU or on a collective (commkind.h, "waits").  A
 * compute kernel's own cost is never waiting. */
static int wait_symptom(const dfinding *f)
{
	if (f->cat == DC_COMM)
		return 1;
	if (f->cat == DC_COMPUTE)
		return !strcmp(f->metric, "gpu utilization");
	if (f->cat == DC_RUNTIME)
		return pt_wait_blocking_runtime(f->function);
	if (f->cat == DC_PYTHON)
		return blocking_leaf(f->function);
	/* a slow step whose extra time is in a collective or a sync */
	if (f->cat == DC_STEPS)
		return f->function[0] && blocking_leaf(f->function);
	return 0;
}

static int is_straggler(const lk *L, const char *id)
{
	size_t q;

	for (q = 0; q < L->nm; q++) {
		const lkw *W = &L->w[L->m[q]];
		if (W->straggler && !strcmp(L->c->w[W->w].id, id))
			return 1;
	}
	return 0;
}

/* Take the victims out of the Communication section's "abnormal_workers"
 * lists: a worker that waited for its peers (5% of the window or more)
 * and is no straggler has long collectives because it waited.  Returns
 * how many entries went. */
static size_t prune_comm(lk *L, double job_ms)
{
	dctx *c = L->c;
	pt_rv *sec = (pt_rv *)pt_rv_get(pt_report_root(c->rep), "Communication"), *g, *k;
	size_t n = 0, q;

	if (!sec || sec->type != PT_RV_OBJ)
		return 0;
	for (g = sec->child; g; g = g->next) {
		if (g->type != PT_RV_OBJ)
			continue;
		for (k = g->child; k; k = k->next) {
			pt_rv *arr = (pt_rv *)pt_rv_get(k, "abnormal_workers"), *e, *prev = NULL, *nx;
			if (!arr || arr->type != PT_RV_ARR)
				continue;
			for (e = arr->child; e; e = nx) {
				const pt_rv *wv = pt_rv_get(e, "worker");
				int drop = 0;
				nx = e->next;
				if (wv && wv->type == PT_RV_STR && !is_straggler(L, wv->str))
					for (q = 0; q < L->nm; q++) {
						const lkw *W = &L->w[L->m[q]];
						if (!strcmp(c->w[W->w].id, wv->str) &&
						    W->waited_us / 1e3 >= 0.05 * job_ms)
							drop = 1;
					}
				if (!drop) {
					prev = e;
					continue;
				}
				/* unlink e (its memory is the report arena's) */
				if (prev)
					prev->next = nx;
				else
					arr->child = nx;
				if (arr->last == e)
					arr->last = prev;
				arr->n--;
				n++;
			}
		}
	}
	return n;
}

/* The straggler worker w waited for longest (index into c->w), from its
 * instances' last arrivers; failing that the straggler the others waited
 * for most; UINT32_MAX when there is none.  acc: c->nw doubles. */
static uint32_t waited_for(const lk *L, size_t w, const unsigned char *strag, double *acc)
{
	const dctx *c = L->c;
	uint32_t best = UINT32_MAX;
	size_t i, q;
	double bv = 0;

	memset(acc, 0, c->nw * sizeof(*acc));
	if (c->lkw)
		for (i = 0; i < c->lkw[w].n; i++) {
			uint32_t a = c->lkw[w].last[i];
			if (a < c->nw && strag[a] && c->lkw[w].wait_ms[i] > 0)
				acc[a] += c->lkw[w].wait_ms[i];
		}
	for (i = 0; i < c->nw; i++)
		if (strag[i] && acc[i] > bv) {
			bv = acc[i];
			best = (uint32_t)i;
		}
	if (best != UINT32_MAX)
		return best;
	for (q = 0; q < L->nm; q++) {
		const lkw *W = &L->w[L->m[q]];
		if (W->straggler && W->w != w && W->blamed_us > bv) {
			bv = W->blamed_us;
			best = W->w;
		}
	}
	return best;
}

/* The findings on workers that waited for peers that waiting can make
 * (wait_symptom) and whose time lost is no more than that wait: it is
 * their waiting, not their own cost.  Each is listed under "explained" in
 * the section and linked to the straggler it waited for (caused_by: the
 * merge makes it evidence of that one's finding); without a straggler it
 * is dropped.  Returns how many. */
static size_t fold_symptoms(lk *L, pt_rv *explained, double job_ms)
{
	dctx *c = L->c;
	size_t i, j, q, nfold = 0;
	double *waited = x_calloc(c->nw ? c->nw : 1, sizeof(*waited));
	double *acc = x_calloc(c->nw ? c->nw : 1, sizeof(*acc));
	unsigned char *strag = x_calloc(c->nw ? c->nw : 1, 1);

	if (!waited || !acc || !strag) {
		c->oom = 1;
		x_free(strag);
		x_free(acc);
		x_free(waited);
		return 0;
	}
	for (q = 0; q < L->nm; q++) {
		const lkw *W = &L->w[L->m[q]];
		waited[W->w] = W->waited_us / 1e3;
		strag[W->w] = (unsigned char)W->straggler;
	}
	for (i = j = 0; i < c->nf; i++) {
		dfinding *f = &c->f[i];
		double wt = 0;
		size_t w = c->nw;

		if (f->worker && wait_symptom(f)) {
			uint32_t wi = df_worker(c, f);
			if (wi != UINT32_MAX) {
				w = wi;
				wt = waited[w];
			}
		}
		/* 5% slack: the wait is measured on kernel starts, the
		 * symptom on durations that also hold a little of the work.  A
		 * collective on a worker that waited is its waiting whatever
		 * the estimate of its time lost (a median duration times the
		 * count overstates it when a few instances hold the wait). */
		if ((wt > 0 && f->impact_ms <= wt * 1.05 + 0.005 * job_ms) ||
		    (f->cat == DC_COMM && wt >= 0.05 * job_ms &&
		     !is_straggler(L, f->worker))) {
			uint32_t s = w < c->nw ? waited_for(L, w, strag, acc) : UINT32_MAX;
			pt_rv *o;
			if (s == UINT32_MAX && w < c->nw && strag[w]) {
				/* a straggler that waited too, for no other: its
				 * own finding, which the merge gives its cause */
				c->f[j++] = *f;
				continue;
			}
			o = pt_rv_obj(c->rep, explained, NULL);
			pt_rv_str(c->rep, o, "worker", f->worker);
			pt_rv_str(c->rep, o, "category", f->category);
			pt_rv_str(c->rep, o, "function", f->function);
			pt_rv_num(c->rep, o, "impact (ms)", f->impact_ms);
			pt_rv_num(c->rep, o, "waited for others (ms)", wt);
			nfold++;
			if (s != UINT32_MAX) {
				f->caused_by = c->w[s].id;
				pt_rv_str(c->rep, o, "caused by", f->caused_by);
				c->f[j++] = *f;
				continue;
			}
			df_free(f);
			continue;
		}
		c->f[j++] = *f;
	}
	c->nf = j;
	x_free(strag);
	x_free(acc);
	x_free(waited);
	return nfold;
}

/* ---- the section ------------------------------------------------------------------- */

static double round3(double x)
{
	return round(x * 1e3) / 1e3;
}

static void straggler_finding(lk *L, size_t q, const sresult *r, double lost_ms,
			      double others_lost, double job_step_ms, double nsteps, size_t nfold)
{
	dctx *c = L->c;
	lkw *W = &L->w[L->m[q]];
	char nb[600], fb[160];
	pt_sb sb = { 0 };
	dfinding *f;
	double saved_ms = W->saved_us / 1e3 / nsteps;
	size_t j;
	int predates;

	f = df_add(c, DC_LOCKSTEP, c->w[W->w].id, r->ncauses ? r->causes[0].p->key : "",
		   "others_waited_ms", round3(lost_ms), round3(others_lost), lost_ms);
	if (!f)
		return;
	if (r->nwaits) {
		f->waits = x_malloc(r->nwaits * sizeof(*f->waits));
		if (!f->waits)
			c->oom = 1;
		else
			memcpy(f->waits, r->waits, r->nwaits * sizeof(*f->waits));
		f->nwaits = f->waits ? r->nwaits : 0;
	}
	if (r->ncauses > 1) {
		f->also = x_malloc((r->ncauses - 1) * sizeof(*f->also));
		if (!f->also)
			c->oom = 1;
		for (j = 1; f->also && j < r->ncauses; j++)
			f->also[f->nalso++] = r->causes[j].p->key;
	}
	pt_sb_addf(&sb, "%s is the worker the others waited for: it arrived last at %u of %zu "
		   "collectives, and the other %zu workers waited %.2f ms for it in all (%.2f ms "
		   "each on average, against a median of %.2f ms for the other workers).",
		   wname(c, W->w, nb, sizeof(nb)), W->last, L->ninst - L->nbad, L->nm - 1,
		   W->blamed_us / 1e3, lost_ms, others_lost);
	predates = r->late_ms > 0 && r->predates_ms >= 0.5 * r->late_ms;
	if (predates)
		pt_sb_addf(&sb, " Most of its lateness (%.2f of %.2f ms behind the median worker) "
			   "predates the profiled window: it started the window late, so the cause "
			   "lies in the previous step; profile more steps (--steps 2 or more) to see "
			   "it.", r->predates_ms, r->late_ms);
	if (r->ncauses) {
		pt_sb_addf(&sb, " %s the span from the previous collective to its late arrivals it "
			   "spent more time than the others in ", predates ? "Inside the window, in" : "In");
		for (j = 0; j < r->ncauses; j++) {
			const pt_pattern *p = r->causes[j].p;
			pt_sb_addf(&sb, "%s%s", j ? (j + 1 == r->ncauses ? " and " : ", ") : "",
				   df_short(p->key, p->cls, fb, sizeof(fb)));
			if (p->cls == PT_C_PYTHON && strchr(p->key, '|')) {
				/* the caller too: "sleep" alone says little */
				const char *e = strrchr(p->key, '|'), *b = e;
				while (b > p->key && b[-1] != '|')
					b--;
				pt_sb_addf(&sb, " (called from %.*s)", (int)(e - b > 120 ? 120 : e - b), b);
			}
			pt_sb_addf(&sb, " (+%.2f ms: %.2f ms against the others' median %.2f ms)",
				   r->causes[j].extra, r->causes[j].own, r->causes[j].others);
		}
		pt_sb_addc(&sb, '.');
	}
	pt_sb_addf(&sb, " If it arrived like the median worker, a step would take %.2f ms "
		   "instead of %.2f ms (-%.2f ms, -%.1f%%).", job_step_ms - saved_ms, job_step_ms,
		   saved_ms, job_step_ms > 0 ? 100 * saved_ms / job_step_ms : 0);
	if (nfold)
		pt_sb_addf(&sb, " %zu symptom finding%s on the workers that waited for it %s "
			   "folded under this one (its evidence; \"Lockstep\" \"explained\").",
			   nfold, nfold == 1 ? "" : "s", nfold == 1 ? "is" : "are");
	df_explain(c, f, "%s", sb.oom ? "" : sb.buf);
	if (sb.oom)
		c->oom = 1;
	pt_sb_free(&sb);
}

static int lkw_id_cmp(const void *a, const void *b, void *arg)
{
	const lkw *x = a, *y = b;
	const dctx *c = arg;

	return strcmp(c->w[x->w].id, c->w[y->w].id);
}

static int lost_cmp(const void *a, const void *b)
{
	const dpair *x = a, *y = b;

	if (x->v != y->v)
		return x->v > y->v ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* A finding and a "mismatched" entry for each worker whose collectives do
 * not match the others' (it is left out of the rest of the analysis). */
static void report_mismatches(lk *L, pt_rv *sec)
{
	dctx *c = L->c;
	pt_rv *mm = NULL;
	char nb[600];
	size_t i;

	for (i = 0; i < L->nw; i++) {
		const lkw *W = &L->w[i];
		dfinding *f;
		if (!W->mismatch)
			continue;
		if (!mm)
			mm = pt_rv_arr(c->rep, sec, "mismatched");
		{
			pt_rv *o = pt_rv_obj(c->rep, mm, NULL);
			pt_rv_str(c->rep, o, "worker", c->w[W->w].id);
			pt_rv_int(c->rep, o, "rank", c->w[W->w].s->rank);
			pt_rv_str(c->rep, o, "problem", W->mismatch);
		}
		f = df_add(c, DC_LOCKSTEP, c->w[W->w].id, "", "collectives_mismatch", 1, NAN, 0);
		df_explain(c, f, "%s: its collectives do not match the other workers' (%s); it is "
			   "left out of the lockstep analysis (who waited for whom), the rest goes on.",
			   wname(c, W->w, nb, sizeof(nb)), W->mismatch);
	}
}

/* Stragglers: the time each peer waited for a worker, on average, in
 * lost[] (most first) with the median of the others in medl[]; a worker
 * is a straggler when that is at least min_lost, twice the median and a
 * quarter of all waiting (*total_blame, ms). */
static void find_stragglers(lk *L, double min_lost, dpair *lost, double *medl,
			    double *total_blame)
{
	dctx *c = L->c;
	size_t q;

	for (q = 0; q < L->nm; q++) {
		lost[q].name = c->w[L->w[L->m[q]].w].id;
		lost[q].v = L->w[L->m[q]].blamed_us / 1e3 / (double)(L->nm - 1);
		lost[q].idx = q;
		*total_blame += L->w[L->m[q]].blamed_us / 1e3;
	}
	qsort(lost, L->nm, sizeof(*lost), lost_cmp);
	for (q = 0; q < L->nm; q++) {
		size_t k, n = 0;
		double v = lost[q].v, med;
		for (k = 0; k < L->nm; k++)
			if (k != q)
				L->tmp[n++] = lost[k].v;
		med = median_of(L->tmp, n);
		medl[q] = med;
		if (v >= min_lost && v >= 2 * med &&
		    v * (double)(L->nm - 1) >= 0.25 * *total_blame)
			L->w[L->m[lost[q].idx]].straggler = 1;
	}
}

/* The section's job-wide numbers: thresholds, instances, channels, the
 * job's window and step, all waiting and the median clock residual. */
static void report_job(lk *L, pt_rv *sec, double min_lost, double job_ms, double job_step_ms,
		       double total_blame)
{
	dctx *c = L->c;
	pt_rv *th, *a;
	size_t i, q;

	th = pt_rv_obj(c->rep, sec, "thresholds");
	pt_rv_num(c->rep, th, "min others waited per peer (ms)", round3(min_lost));
	pt_rv_num(c->rep, th, "min ratio to the median worker", 2);
	pt_rv_num(c->rep, th, "min share of all waiting", 0.25);
	pt_rv_int(c->rep, sec, "instances", (int64_t)(L->ninst - L->nbad));
	if (L->nbad)
		pt_rv_int(c->rep, sec, "instances left out (ends disagree)", (int64_t)L->nbad);
	a = pt_rv_arr(c->rep, sec, "channels");
	for (i = 0; i < L->nchan; i++)
		pt_rv_str(c->rep, a, NULL, L->chans[i]);
	pt_rv_num(c->rep, sec, "job window (ms)", round3(job_ms));
	pt_rv_num(c->rep, sec, "job step (ms)", round3(job_step_ms));
	pt_rv_num(c->rep, sec, "waiting in all (ms)", round3(total_blame));
	for (q = 0; q < L->nm; q++)
		L->tmp[q] = L->w[L->m[q]].resid_us;
	pt_rv_num(c->rep, sec, "clock residual (us)", round3(median_of(L->tmp, L->nm)));
}

/* The "stragglers" array, most waited-for first: for each, what it cost,
 * its causes (causes_of, kept in res[]), the step without it ("what
 * if") and its finding (the first one also names the nfold symptoms its
 * waiting explains).  -1: out of memory. */
static int report_stragglers(lk *L, pt_rv *sec, const dpair *lost, const double *medl,
			     sresult *res, double job_step_ms, double nsteps, size_t nfold)
{
	dctx *c = L->c;
	pt_rv *sa = pt_rv_arr(c->rep, sec, "stragglers");
	size_t i;

	for (i = 0; i < L->nm; i++) {
		size_t qq = lost[i].idx, j;
		lkw *W = &L->w[L->m[qq]];
		sresult *r = &res[qq];
		pt_rv *o, *ca, *wi;
		double saved_ms;

		if (!W->straggler)
			continue;
		if (causes_of(L, qq, r))
			return -1;
		saved_ms = W->saved_us / 1e3 / nsteps;
		o = pt_rv_obj(c->rep, sa, NULL);
		pt_rv_str(c->rep, o, "worker", c->w[W->w].id);
		pt_rv_int(c->rep, o, "rank", c->w[W->w].s->rank);
		pt_rv_num(c->rep, o, "others waited for it (ms)", round3(W->blamed_us / 1e3));
		pt_rv_num(c->rep, o, "per peer (ms)", round3(lost[i].v));
		pt_rv_int(c->rep, o, "last arrivals", W->last);
		pt_rv_num(c->rep, o, "late (ms)", round3(r->late_ms));
		pt_rv_num(c->rep, o, "late in the span before (ms)", round3(r->span_extra_ms));
		pt_rv_num(c->rep, o, "late before the span (ms)", round3(r->predates_ms));
		pt_rv_bool(c->rep, o, "predates window",
			   r->late_ms > 0 && r->predates_ms >= 0.5 * r->late_ms);
		ca = pt_rv_arr(c->rep, o, "causes");
		for (j = 0; j < r->ncauses; j++) {
			pt_rv *x = pt_rv_obj(c->rep, ca, NULL);
			pt_rv_str(c->rep, x, "function", r->causes[j].p->key);
			pt_rv_str(c->rep, x, "class", pt_class_name(r->causes[j].p->cls));
			pt_rv_num(c->rep, x, "extra (ms)", round3(r->causes[j].extra));
			pt_rv_num(c->rep, x, "own (ms)", round3(r->causes[j].own));
			pt_rv_num(c->rep, x, "others median (ms)", round3(r->causes[j].others));
		}
		wi = pt_rv_obj(c->rep, o, "what if");
		pt_rv_num(c->rep, wi, "step (ms)", round3(job_step_ms - saved_ms));
		pt_rv_num(c->rep, wi, "now (ms)", round3(job_step_ms));
		pt_rv_num(c->rep, wi, "saved (ms)", round3(saved_ms));
		pt_rv_num(c->rep, wi, "saved (%)",
			  job_step_ms > 0 ? round3(100 * saved_ms / job_step_ms) : 0);
		straggler_finding(L, qq, r, lost[i].v, medl[i],
				  job_step_ms, nsteps, i == 0 ? nfold : 0);
	}
	return 0;
}

/* The "workers" object: per worker with collectives, its waiting, the
 * waiting it caused, its clock fit and its own step (or its mismatch). */
static void report_workers(lk *L, pt_rv *sec, double nsteps)
{
	dctx *c = L->c;
	pt_rv *ws = pt_rv_obj(c->rep, sec, "workers");
	size_t q;

	for (q = 0; q < L->nw; q++) {
		const lkw *W = &L->w[q];
		pt_rv *o = pt_rv_obj(c->rep, ws, c->w[W->w].id);
		pt_rv_int(c->rep, o, "rank", c->w[W->w].s->rank);
		if (W->mismatch) {
			pt_rv_str(c->rep, o, "mismatch", W->mismatch);
			continue;
		}
		pt_rv_num(c->rep, o, "waited for others (ms)", round3(W->waited_us / 1e3));
		pt_rv_num(c->rep, o, "others waited for it (ms)", round3(W->blamed_us / 1e3));
		pt_rv_int(c->rep, o, "last arrivals", W->last);
		pt_rv_num(c->rep, o, "clock offset (us)", round3(W->offset_us));
		pt_rv_num(c->rep, o, "clock residual (us)", round3(W->resid_us));
		pt_rv_num(c->rep, o, "own step (ms)",
			  round3((c->w[W->w].window_ms - W->waited_us / 1e3) / nsteps));
		pt_rv_bool(c->rep, o, "straggler", W->straggler);
	}
}

void diag_lockstep(dctx *c)
{
	lk L;
	pt_rv *sec, *ex;
	dpair *lost = NULL;
	sresult *res = NULL;
	double job_ms, nsteps, job_step_ms, total_blame = 0, min_lost, *medl = NULL;
	size_t i, q, nfold = 0, nvers1 = 0;

	memset(&L, 0, sizeof(L));
	L.c = c;
	L.w = x_calloc(c->nw ? c->nw : 1, sizeof(*L.w));
	if (!L.w)
		goto oom;
	for (i = 0; i < c->nw; i++) {
		const pt_summary *s = c->w[i].s;
		if (s->version < 2)
			nvers1++;
		else if (s->ncoll && s->ncoll_chans)
			L.w[L.nw++].w = (uint32_t)i;
	}
	if (L.nw < 2)
		goto out;
	/* Worker id order: the same bytes whatever the order of the inputs
	 * (the reference worker, the order of sums). */
	qsort_r(L.w, L.nw, sizeof(*L.w), lkw_id_cmp, c);
	if (index_channels(&L) || match(&L))
		goto oom;

	sec = pt_rv_obj(c->rep, pt_report_root(c->rep), "Lockstep");
	report_mismatches(&L, sec);
	pt_rv_int(c->rep, sec, "workers with collectives", (int64_t)L.nw);
	pt_rv_int(c->rep, sec, "workers matched", (int64_t)L.nm);
	if (nvers1)
		pt_rv_int(c->rep, sec, "workers without collective data (summary version 1)",
			  (int64_t)nvers1);
	if (L.nm < 2)
		goto out;
	if (align(&L) || export_waits(&L))
		goto oom;

	/* The job's window and step: medians over the matched workers. */
	for (q = 0; q < L.nm; q++)
		L.tmp[q] = c->w[L.w[L.m[q]].w].window_ms;
	job_ms = median_of(L.tmp, L.nm);
	{
		const pt_summary *rs = c->w[L.w[L.m[0]].w].s;
		nsteps = rs->nsteps ? (double)rs->nsteps : 1;
	}
	job_step_ms = job_ms / nsteps;

	lost = x_malloc(L.nm * sizeof(*lost));
	medl = x_malloc(L.nm * sizeof(*medl));
	res = x_calloc(L.nm, sizeof(*res));
	if (!lost || !res || !medl)
		goto oom;
	min_lost = 0.05 * job_ms;
	find_stragglers(&L, min_lost, lost, medl, &total_blame);
	report_job(&L, sec, min_lost, job_ms, job_step_ms, total_blame);

	/* Symptoms explained by waiting, before the straggler findings. */
	ex = pt_rv_arr(c->rep, sec, "explained");
	nfold = fold_symptoms(&L, ex, job_ms);
	{
		size_t np = prune_comm(&L, job_ms);
		if (np)
			pt_rv_int(c->rep, sec, "Communication entries of waiting workers removed",
				  (int64_t)np);
	}
	if (report_stragglers(&L, sec, lost, medl, res, job_step_ms, nsteps, nfold))
		goto oom;
	report_workers(&L, sec, nsteps);
	goto out;
oom:
	c->oom = 1;
out:
	if (res)
		for (q = 0; q < L.nm; q++) {
			x_free(res[q].causes);
			x_free(res[q].waits);
		}
	x_free(res);
	x_free(medl);
	x_free(lost);
	lk_free(&L);
}
