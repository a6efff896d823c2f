/*
 * watch_eval.c - the watch's detection (see watch.h; the definitions in
 * docs/watch.md).  Over the window (the steps that ended in the last
 * window_s seconds of the newest data): collective instances matched
 * across ranks by (process group, sequence number); at each, every
 * member's lateness against the median member, the time it waited, and
 * the waiting blamed on the members not yet there; per rank the step
 * numbers, its straggler score (the share of all waiting blamed on it)
 * and, with persistence and hysteresis, whether it is a straggler.
 * Linear in the instances of the window (a hash map by instance, a sort
 * per instance over its members).
 */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/hash.h"
#include "../util/xalloc.h"

typedef struct ref {
	uint32_t w, s, c;    /* worker, step, instance */
	uint32_t next;       /* the next member of its group */
	int64_t arr;
} ref;

typedef struct grp {
	uint32_t first, n;
} grp;

typedef struct ectx {
	pt_watch *w;
	int64_t lo;           /* the window's first end time (µs) */
	int64_t recent;       /* the persistence span's first end time (µs) */
	ref *r;
	size_t nr, rcap;
	grp *g;
	size_t ng, gcap;
	pt_hmap map;
	double total;         /* all waiting blamed (µs) */
} ectx;

static const winst *inst(const ectx *e, const ref *r)
{
	return &e->w->w[r->w].st[r->s].c[r->c];
}

static uint64_t key_hash(const winst *c)
{
	return pt_hash_mix(pt_hash_fnv1a_str_from(PT_HASH_SEED, c->pg), (uint64_t)c->seq);
}

/* Every instance of the window into its group. */
static int group(ectx *e)
{
	pt_watch *w = e->w;

	for (uint32_t i = 0; i < w->n; i++) {
		wworker *k = &w->w[i];
		for (uint32_t j = 0; j < k->n; j++) {
			if (k->st[j].t1 < e->lo)
				continue;
			for (uint32_t c = 0; c < k->st[j].nc; c++) {
				const winst *x = &k->st[j].c[c];
				uint64_t h = key_hash(x);
				size_t it = 0;
				uint32_t gi;
				ref *r;
				while ((gi = pt_hmap_next(&e->map, h, &it)) != PT_HMAP_NONE) {
					const winst *y = inst(e, &e->r[e->g[gi].first]);
					if (y->seq == x->seq && !strcmp(y->pg, x->pg))
						break;
				}
				if (e->nr + 1 > e->rcap && X_GROW(e->r, e->rcap, e->nr + 1))
					return -1;
				if (gi == PT_HMAP_NONE) {
					if (e->ng + 1 > e->gcap && X_GROW(e->g, e->gcap, e->ng + 1))
						return -1;
					gi = (uint32_t)e->ng++;
					e->g[gi].first = UINT32_MAX;
					e->g[gi].n = 0;
					if (pt_hmap_put(&e->map, h, gi))
						return -1;
				}
				r = &e->r[e->nr];
				r->w = i;
				r->s = j;
				r->c = c;
				r->arr = x->start >= 0 ? x->start : x->arr;
				r->next = e->g[gi].first;
				e->g[gi].first = (uint32_t)e->nr++;
				e->g[gi].n++;
			}
		}
	}
	return 0;
}

static int by_arr(const void *a, const void *b)
{
	const ref *x = *(const ref *const *)a, *y = *(const ref *const *)b;

	return x->arr < y->arr ? -1 : x->arr > y->arr;
}

/* One instance's members: lateness, waiting and blame. */
static void score_group(ectx *e, const grp *g, const ref **m, double *blame)
{
	size_t n = 0, i;
	double med, last, acc = 0;

	for (uint32_t x = g->first; x != UINT32_MAX; x = e->r[x].next)
		m[n++] = &e->r[x];
	qsort(m, n, sizeof(*m), by_arr);
	med = n % 2 ? (double)m[n / 2]->arr : ((double)m[n / 2 - 1]->arr + (double)m[n / 2]->arr) / 2;
	last = (double)m[n - 1]->arr;
	/* In [t(k), t(k+1)] the k+1 arrived wait; the n-k-1 not yet there
	 * share the blame: member p's blame is the sum over k < p. */
	blame[0] = 0;
	for (i = 1; i < n; i++) {
		double dt = (double)(m[i]->arr - m[i - 1]->arr);
		acc += (double)i * dt / (double)(n - i);
		blame[i] = acc;
	}
	for (i = 0; i < n; i++) {
		wworker *k = &e->w->w[m[i]->w];
		wstep *s = &k->st[m[i]->s];
		const winst *c = inst(e, m[i]);
		double late = (double)m[i]->arr - med;
		double waited = c->start >= 0 && c->done >= c->start ? (double)(c->done - c->start)
								       : last - (double)m[i]->arr;

		s->wait += waited;
		if (!s->has_late || late > s->late) {
			s->late = late;
			s->at = m[i]->c;
			s->has_late = 1;
		}
		k->blamed += blame[i];
		e->total += blame[i];
	}
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* A worker's numbers over the window; *late_v scratch of k->n. */
static void rank_numbers(ectx *e, wworker *k, double *late_v, double span_s)
{
	pt_watch_rank *r = &k->r;
	size_t nl = 0;
	double sum_t = 0, sum_w = 0, max_late = -INFINITY;

	size_t nrecent = 0, nlate = 0;

	r->steps = 0;
	r->at_name[0] = r->at_pg[0] = 0;
	r->at_seq = r->at_step = -1;
	for (size_t j = 0; j < k->n; j++) {
		const wstep *s = &k->st[j];
		if (s->t1 < e->lo)
			continue;
		r->steps++;
		sum_t += (double)(s->t1 - s->t0);
		sum_w += s->wait;
		if (!s->has_late)
			continue;
		if (s->t1 >= e->recent) {
			nrecent++;
			nlate += s->late > 0;
		}
		late_v[nl++] = s->late;
		if (s->late > max_late) {
			max_late = s->late;
			snprintf(r->at_name, sizeof(r->at_name), "%s", s->c[s->at].name);
			snprintf(r->at_pg, sizeof(r->at_pg), "%s", s->c[s->at].pg);
			r->at_seq = s->c[s->at].seq;
			r->at_step = s->s;
		}
	}
	k->step_sum = sum_t;
	k->late_frac = nrecent ? (double)nlate / (double)nrecent : 0;
	r->step_s = r->steps ? sum_t / (double)r->steps / 1e6 : 0;
	r->wait_s = r->steps ? sum_w / (double)r->steps / 1e6 : 0;
	if (nl) {
		qsort(late_v, nl, sizeof(*late_v), cmp_dbl);
		r->late_s = (nl % 2 ? late_v[nl / 2] : (late_v[nl / 2 - 1] + late_v[nl / 2]) / 2) / 1e6;
	} else {
		r->late_s = 0;
	}
	r->late_max_s = nl ? max_late / 1e6 : 0;
	r->score = e->total > 0 ? k->blamed / e->total : 0;
	r->lost_gpu_s_per_min = span_s > 0 ? k->blamed / 1e6 / span_s * 60 : 0;
}

/* Where the run of late steps that made it a straggler began. */
static void since_of(const ectx *e, wworker *k)
{
	size_t j = k->n;

	while (j > 0 && k->st[j - 1].t1 >= e->lo && k->st[j - 1].has_late && k->st[j - 1].late > 0)
		j--;
	if (j == k->n)
		j--;
	k->r.since = k->st[j].t0 / 1e6;
	k->r.since_step = k->st[j].s;
}

/* Persistence and hysteresis at data time now (s). */
static void persist(ectx *e, wworker *k, double others, double now)
{
	const pt_watch_options *o = &e->w->o;
	int cond = k->r.score >= o->score_min && others > 0 && k->blamed >= o->lost_min * others &&
		   k->late_frac >= o->late_share;

	if (cond) {
		k->off_since = 0;
		if (!k->cond_since) {
			k->cond_since = now;
			k->cond_step = k->r.step;
		}
		if (!k->r.flagged && now - k->cond_since >= o->persist_s &&
		    k->r.step - k->cond_step >= o->persist_steps) {
			k->r.flagged = 1;
			since_of(e, k);
		}
		return;
	}
	k->cond_since = 0;
	if (!k->r.flagged)
		return;
	if (!k->off_since)
		k->off_since = now;
	if (now - k->off_since >= o->persist_s) {
		k->r.flagged = 0;
		k->r.since = 0;
		k->r.since_step = -1;
		k->off_since = 0;
	}
}

static int publish(pt_watch *w)
{
	if (w->n > w->nout || !w->out) {
		pt_watch_rank *o = x_reallocarray(w->out, w->n ? w->n : 1, sizeof(*o));
		if (!o)
			return -1;
		w->out = o;
	}
	for (size_t i = 0; i < w->n; i++)
		w->out[i] = w->w[i].r;
	w->nout = w->n;
	if (w->nout > 1)
		qsort(w->out, w->nout, sizeof(*w->out), pt_watch_by_rank);
	return 0;
}

int pt_watch_eval(pt_watch *w, double now)
{
	ectx e;
	const ref **m = NULL;
	double *scratch = NULL, all_steps = 0, span_s;
	int64_t newest = 0, oldest = INT64_MAX;
	size_t maxn = 1, maxsteps = 1;
	int rc = PT_ENOMEM;

	(void)now;
	memset(&e, 0, sizeof(e));
	e.w = w;
	for (size_t i = 0; i < w->n; i++) {
		wworker *k = &w->w[i];
		if (k->n && k->st[k->n - 1].t1 > newest)
			newest = k->st[k->n - 1].t1;
		if (k->n > maxsteps)
			maxsteps = k->n;
		k->blamed = 0;
		for (size_t j = 0; j < k->n; j++) {
			k->st[j].late = k->st[j].wait = 0;
			k->st[j].has_late = 0;
		}
	}
	e.lo = newest - (int64_t)(w->o.window_s * 1e6);
	e.recent = newest - (int64_t)(w->o.persist_s * 1e6);
	if (group(&e))
		goto out;
	for (size_t g = 0; g < e.ng; g++)
		if (e.g[g].n > maxn)
			maxn = e.g[g].n;
	m = x_reallocarray(NULL, maxn, sizeof(*m));
	scratch = x_reallocarray(NULL, maxn > maxsteps ? maxn : maxsteps, sizeof(*scratch));
	if (!m || !scratch)
		goto out;
	for (size_t g = 0; g < e.ng; g++)
		if (e.g[g].n >= 2)
			score_group(&e, &e.g[g], m, scratch);
	for (size_t i = 0; i < w->n; i++)
		for (size_t j = 0; j < w->w[i].n; j++)
			if (w->w[i].st[j].t1 >= e.lo && w->w[i].st[j].t0 < oldest)
				oldest = w->w[i].st[j].t0;
	span_s = newest > oldest ? (double)(newest - oldest) / 1e6 : 0;
	for (size_t i = 0; i < w->n; i++) {
		rank_numbers(&e, &w->w[i], scratch, span_s);
		all_steps += w->w[i].step_sum;
	}
	for (size_t i = 0; i < w->n; i++)
		persist(&e, &w->w[i], all_steps - w->w[i].step_sum, newest / 1e6);
	rc = publish(w) ? PT_ENOMEM : PT_OK;
out:
	x_free(scratch);
	x_free(m);
	pt_hmap_free(&e.map);
	x_free(e.g);
	x_free(e.r);
	return rc;
}

const pt_watch_rank *pt_watch_ranks(const pt_watch *w, size_t *n)
{
	*n = w ? w->nout : 0;
	return *n ? w->out : NULL;
}
