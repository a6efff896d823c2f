/*
 * lockstep_match.c - the first half of the lockstep analysis (lockstep.h):
 * matches the workers' collective instances channel by channel, by process
 * group and sequence number when every worker's carry them, else by
 * position (the same collectives in the same order), estimates each
 * worker's clock offset from
 * the instances' ends (one per host when the host's clock is shared),
 * finds each instance's last arriver and every member's wait, and names
 * the stragglers (the workers the others waited for) and the waiting
 * workers.
 *
 * Flow: pt_summary "collectives" (src/analysis/collectives.c) -->
 * diag_lockstep_match, before the sections --> c->waiting (diag_comm),
 * c->lkw (the critical path, critpath.c) and c->lk (lockstep_blame.c:
 * causes, victims, the section).  Rules: docs/diagnose.md "Lockstep".
 */
#include "lockstep.h"
#include "sections.h"
#include "../model/commkind.h"
#include "../util/hash.h"
#include "../util/xalloc.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- collective names ------------------------------------------------------ */

/* The collective a kernel or op name stands for, in commkind.c's roles
 * (the one vocabulary of collectives), so that
 * "ncclKernel_AllReduce_RING_LL_Sum_float" and "nccl:all_reduce" compare
 * equal, a send matches the recv it pairs with, and a different order
 * shows. */
static int op_token(const char *name)
{
	return pt_commkind_role_from_name(name, strlen(name));
}

static const char *op_label(int t)
{
	return pt_commkind_role_name(t);
}

/* ---- small helpers ----------------------------------------------------------- */

double lk_median(double *v, size_t n)
{
	return n ? pt_robust_median(v, n, 0) : 0;
}

const char *lk_wname(const dctx *c, uint32_t w, char *buf, size_t cap)
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

void lk_free(lk *L)
{
	size_t i;

	for (i = 0; i < L->nw; i++) {
		x_free(L->w[i].cs);
		x_free(L->w[i].cn);
		x_free(L->w[i].sig);
		x_free(L->w[i].sh);
		x_free(L->w[i].tok);
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
int lk_index_channels(lk *L)
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
			W->sig[ch] = pt_hash_mix(W->sig[ch], (uint64_t)(tok[s->coll[k].name] + 1));
		}
		for (j = 0; j < L->nchan; j++)
			W->sig[j] = (W->sig[j] ^ W->cn[j]) * 0x9e3779b97f4a7c15ull;
		x_free(map);
		/* kept: matching compares the ops instance by instance, and
		 * naming an op each time was 5% of a 100,000-worker run */
		W->tok = tok;
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

static int tok_at(const lkw *W, const pt_summary *s, uint32_t idx)
{
	return W->tok ? W->tok[s->coll[idx].name] : op_token(s->coll_names[s->coll[idx].name]);
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
			if (tok_at(W, ws, W->cs[ch] + (uint32_t)k) !=
			    tok_at(R, rs, R->cs[ch] + (uint32_t)(k + d)))
				break;
		if (k < k1)
			continue;
		for (k = k0; k < k1; k++)
			L->tmp[k - k0] = shift + ws->coll[W->cs[ch] + k].end_us -
					 rs->coll[R->cs[ch] + k + d].end_us;
		med = lk_median(L->tmp, (size_t)n);
		for (k = 0; k < n; k++) {
			L->tmp[k] = fabs(L->tmp[k] - med);
			mx = L->tmp[k] > mx ? L->tmp[k] : mx;
		}
		mad = lk_median(L->tmp, (size_t)n);
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

/* ---- matching by process group and sequence number ----------------------------- */

/* The instances of W on channel ch that carry a (pg, seq): own indices
 * [*a, *b] relative to W->cs[ch].  0 when there is none or an instance
 * between them carries none. */
static int seq_range(const pt_summary *s, const lkw *W, size_t ch, int64_t *a, int64_t *b)
{
	int64_t k, n = W->cn[ch];

	*a = -1;
	*b = -2;
	for (k = 0; k < n; k++)
		if (s->coll[W->cs[ch] + (uint32_t)k].seq >= 0) {
			if (*a < 0)
				*a = k;
			else if (*b != k - 1)
				return 0; /* a hole */
			*b = k;
		}
	return *a >= 0;
}

/* Do own instance x of ws and y of rs name the same call: the same process
 * group, sequence number and op? */
static int same_call(const lkw *W, const pt_summary *ws, uint32_t x, const lkw *R,
		     const pt_summary *rs, uint32_t y)
{
	const pt_coll *p = &ws->coll[x], *q = &rs->coll[y];

	return p->seq >= 0 && p->seq == q->seq && p->pg < ws->ncoll_pgs && q->pg < rs->ncoll_pgs &&
	       !strcmp(ws->coll_pgs[p->pg], rs->coll_pgs[q->pg]) &&
	       tok_at(W, ws, x) == tok_at(R, rs, y);
}

/* W's shift against R on ch from the calls they share (the first of W's
 * found among R's, or R's first among W's), every shared one checked; the
 * reference indices both have into [*lo, *hi).  0: they share none or
 * disagree somewhere. */
static int seq_shift(lk *L, lkw *W, const lkw *R, size_t ch, int64_t *lo, int64_t *hi)
{
	dctx *c = L->c;
	const pt_summary *ws = c->w[W->w].s, *rs = c->w[R->w].s;
	int64_t wa, wb, ra, rb, k, d = INT64_MIN;

	if (!seq_range(ws, W, ch, &wa, &wb) || !seq_range(rs, R, ch, &ra, &rb))
		return 0;
	for (k = ra; k <= rb && d == INT64_MIN; k++)
		if (same_call(W, ws, W->cs[ch] + (uint32_t)wa, R, rs, R->cs[ch] + (uint32_t)k))
			d = k - wa;
	for (k = wa; k <= wb && d == INT64_MIN; k++)
		if (same_call(W, ws, W->cs[ch] + (uint32_t)k, R, rs, R->cs[ch] + (uint32_t)ra))
			d = ra - k;
	if (d == INT64_MIN)
		return 0;
	*lo = wa + d > ra ? wa + d : ra;
	*hi = (wb + d < rb ? wb + d : rb) + 1;
	if (*hi <= *lo)
		return 0;
	for (k = *lo; k < *hi; k++)
		if (!same_call(W, ws, W->cs[ch] + (uint32_t)(k - d), R, rs, R->cs[ch] + (uint32_t)k))
			return 0;
	W->sh[ch] = (int)d;
	return 1;
}

/* Matching by (process group, sequence number) (docs/diagnose.md
 * "Lockstep"): when every participant's instances carry them (those
 * without only at a channel's ends, outside the Flight Recorder's window)
 * and every worker's line up with the reference's call for call, each
 * worker's shift is what the numbers say, whatever its window cut, and
 * the calls every worker has are the instances.  1: matched so (L->ref,
 * lo, hi, the shifts; nobody mismatched); 0: not, and position decides. */
static int match_seq(lk *L)
{
	dctx *c = L->c;
	size_t i, ch;

	for (i = 0; i < L->nw; i++)
		if (L->w[i].mismatch || !c->w[L->w[i].w].s->ncoll_pgs)
			return 0;
	for (ch = 0; ch < L->nchan; ch++) {
		size_t ref = 0;
		int64_t lo = INT64_MIN, hi = INT64_MAX;
		for (i = 0; i < L->nw; i++) {
			if (L->w[i].cs[ch] == NONE)
				return 0;
			if (L->w[i].cn[ch] > L->w[ref].cn[ch])
				ref = i;
		}
		L->ref[ch] = (uint32_t)ref;
		for (i = 0; i < L->nw; i++) {
			int64_t a, b;
			if (!seq_shift(L, &L->w[i], &L->w[ref], ch, &a, &b))
				return 0;
			lo = a > lo ? a : lo;
			hi = b < hi ? b : hi;
		}
		if (hi <= lo)
			return 0;
		L->lo[ch] = (uint32_t)lo;
		L->hi[ch] = (uint32_t)hi;
	}
	return 1;
}

/* The most common signature per channel gives the reference; each worker
 * is matched to it with a shift of at most MAX_SHIFT at the ends, or is a
 * mismatch. */
int lk_match(lk *L)
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
	L->byseq = match_seq(L);
	for (i = 0; i < L->nw && !L->byseq; i++)
		for (ch = 0; ch < L->nchan; ch++)
			L->w[i].sh[ch] = 0;
	for (ch = 0; ch < L->nchan && !L->byseq; ch++) {
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
			base = nb ? lk_median(bm, nb) : 0;
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
	/* The reference indices every matched worker has (match_seq's own). */
	for (ch = 0; ch < L->nchan && !L->byseq; ch++) {
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
		off = lk_median(tmp, j - i);
		for (q = i; q < j; q++)
			if (fabs(L->w[L->m[ix[q]]].offset_us - off) <= HOST_CLOCK_TOL_US)
				L->w[L->m[ix[q]]].offset_us = off;
	}
	x_free(ix);
	return 0;
}

int lk_align(lk *L)
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
			const pt_coll *x = &s->coll[lk_own(W, L->ich[i], L->ipos[i])];
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
		W->offset_us = lk_median(d, L->ninst);
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
			med[i] = lk_median(col, nm);
		}
		for (q = 0; q < nm; q++) {
			lkw *W = &L->w[L->m[q]];
			for (i = 0; i < L->ninst; i++)
				d[i] = L->end[i * nm + q] - W->offset_us - med[i];
			W->offset_us += lk_median(d, L->ninst);
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
			W->resid_us = lk_median(d, L->ninst);
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
		double thr = 20 * lk_median(L->tmp, nm);
		if (thr < 1000)
			thr = 1000;
		/* matched by sequence number, an instance is one call */
		for (i = 0; i < L->ninst && !L->byseq; i++) {
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
		med = lk_median(L->tmp, nm);
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
int lk_export_waits(lk *L)
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
			uint32_t j = lk_own(W, L->ich[i], L->ipos[i]);
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

/* ---- stragglers and the waiting workers ----------------------------------------- */

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
	/* The others' median of each one from the sorted values (ascending in
	 * tmp): a median of the rest per worker was O(workers^2), 22 s of a
	 * 100,000-worker diagnosis (issue 33). */
	for (q = 0; q < L->nm; q++)
		L->tmp[q] = lost[L->nm - 1 - q].v;
	for (q = 0; q < L->nm; q++) {
		double v = lost[q].v, med;
		med = pt_robust_sorted_median(L->tmp, L->nm, 0, L->nm - 1 - q);
		medl[q] = med;
		if (v >= min_lost && v >= 2 * med &&
		    v * (double)(L->nm - 1) >= 0.25 * *total_blame)
			L->w[L->m[lost[q].idx]].straggler = 1;
	}
}

/* The waiting workers: matched, no straggler, waited 5% of the window or
 * more; their long collectives are waiting, so the Communication section
 * leaves them out of its "abnormal_workers" (diag_comm).  -1: out of
 * memory. */
static int mark_waiting(lk *L, double job_ms)
{
	dctx *c = L->c;
	size_t q;

	c->waiting = x_calloc(c->nw ? c->nw : 1, 1);
	if (!c->waiting)
		return -1;
	for (q = 0; q < L->nm; q++) {
		const lkw *W = &L->w[L->m[q]];
		if (!W->straggler && W->waited_us / 1e3 >= 0.05 * job_ms)
			c->waiting[W->w] = 1;
	}
	return 0;
}

void diag_lockstep_match(dctx *c)
{
	struct dlk *d = x_calloc(1, sizeof(*d));
	lk *L;
	size_t i, q;

	if (!d)
		goto oom;
	c->lk = d;
	L = &d->L;
	L->c = c;
	L->w = x_calloc(c->nw ? c->nw : 1, sizeof(*L->w));
	if (!L->w)
		goto oom;
	for (i = 0; i < c->nw; i++) {
		const pt_summary *s = c->w[i].s;
		if (s->version < 2)
			d->nvers1++;
		else if (s->ncoll && s->ncoll_chans)
			L->w[L->nw++].w = (uint32_t)i;
	}
	if (L->nw < 2)
		return;
	/* Worker id order: the same bytes whatever the order of the inputs
	 * (the reference worker, the order of sums). */
	qsort_r(L->w, L->nw, sizeof(*L->w), lkw_id_cmp, c);
	if (lk_index_channels(L) || lk_match(L))
		goto oom;
	d->matched = 1;
	if (L->nm < 2)
		return;
	if (lk_align(L) || lk_export_waits(L))
		goto oom;

	/* The job's window and step: medians over the matched workers. */
	for (q = 0; q < L->nm; q++)
		L->tmp[q] = c->w[L->w[L->m[q]].w].window_ms;
	d->job_ms = lk_median(L->tmp, L->nm);
	{
		const pt_summary *rs = c->w[L->w[L->m[0]].w].s;
		d->nsteps = rs->nsteps ? (double)rs->nsteps : 1;
	}
	d->job_step_ms = d->job_ms / d->nsteps;
	d->lost = x_malloc(L->nm * sizeof(*d->lost));
	d->medl = x_malloc(L->nm * sizeof(*d->medl));
	if (!d->lost || !d->medl)
		goto oom;
	d->min_lost = 0.05 * d->job_ms;
	find_stragglers(L, d->min_lost, d->lost, d->medl, &d->total_blame);
	if (mark_waiting(L, d->job_ms))
		goto oom;
	return;
oom:
	c->oom = 1;
}

void lk_run_free(struct dlk *d)
{
	if (!d)
		return;
	x_free(d->medl);
	x_free(d->lost);
	lk_free(&d->L);
	x_free(d);
}

