/*
 * metric.c - the per-key metric vectors every diagnosis section tests
 * (internal.h): one metric of one key loaded over the workers, its robust
 * statistics (src/analysis/stats.c), the outlier test with its impact, and the sort
 * helper the sections share.  Sits between the key index (keyindex.c) and
 * the sections (compute.c, memory.c, comm.c, ...), which depend on it;
 * only diagnose.c depends on the sections.
 */
#include "internal.h"
#include "../util/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PREFETCH 8

int dm_alloc(dmetric *m, size_t n)
{
	memset(m, 0, sizeof(*m));
	n = n ? n : 1;
	m->val = x_malloc(n * sizeof(double));
	m->work = x_malloc(n * sizeof(double));
	m->tmp = x_malloc(n * sizeof(double));
	m->sorted = x_malloc(n * sizeof(double));
	m->wk = x_malloc(n * sizeof(uint32_t));
	m->pat = x_malloc(n * sizeof(*m->pat));
	return m->val && m->work && m->tmp && m->sorted && m->wk && m->pat ? 0 : -1;
}

void dm_free(dmetric *m)
{
	x_free(m->pat);
	x_free(m->wk);
	x_free(m->sorted);
	x_free(m->tmp);
	x_free(m->work);
	x_free(m->val);
}

void dm_load(dctx *c, dmetric *m, const dkey *k, dfield f)
{
	uint32_t i;

	m->n = 0;
	m->sorted_ok = 0;
	for (i = 0; i < k->n; i++) {
		const dent *e = &c->ent[k->off + i];
		const pt_pattern *p = dw_pat(&c->w[e->w], e->p);
		double v;

		/* Each entry lives in another worker's summary: a cache miss per
		 * value.  Prefetching a few entries ahead (with the patterns
		 * pointer cached in dworker) more than halves this loop's share
		 * of a 10,000-worker `diagnose` run (docs/bench.md). */
		if (i + PREFETCH < k->n) {
			const dent *nx = &c->ent[k->off + i + PREFETCH];

			__builtin_prefetch(dw_pat(&c->w[nx->w], nx->p));
		}

		switch (f) {
		case M_BOTTLENECK: v = p->bottleneck; break;
		case M_EXEC: v = p->exec_ratio; break;
		case M_MEDIAN: v = p->median_ms; break;
		case M_PER_STEP: {
			size_t ns = c->w[e->w].s->nsteps;

			v = p->total_ms / (double)(ns ? ns : 1);
			break;
		}
		default: v = p->busbw_gbps; break;
		}
		if (!isfinite(v) || v < 0)
			v = 0;
		/* Per-execution metrics exist only where the function ran. */
		if ((f == M_MEDIAN && !p->count) || (f == M_BUSBW && !(v > 0)))
			continue;
		m->val[m->n] = v;
		m->wk[m->n] = e->w;
		m->pat[m->n] = p;
		m->n++;
	}
	/* Ratio metrics: a worker without the key spent 0 there. */
	m->nzero = (f == M_BOTTLENECK || f == M_EXEC || f == M_PER_STEP) ? c->nw - m->n : 0;
}

void dm_load_gpu_util(dctx *c, dmetric *m)
{
	size_t i;

	m->n = 0;
	m->nzero = 0;
	m->sorted_ok = 0;
	for (i = 0; i < c->nw; i++) {
		double v = c->w[i].s->gpu_util;

		m->val[m->n] = isfinite(v) && v > 0 ? v : 0;
		m->wk[m->n] = (uint32_t)i;
		m->pat[m->n] = NULL;
		m->n++;
	}
}

void dm_prepare(dctx *c, dmetric *m)
{
	m->loo = m->n + m->nzero < c->o->loo_below;
	if (!m->loo) {
		memcpy(m->work, m->val, m->n * sizeof(double));
		pt_robust_stats(m->work, m->n, m->nzero, m->tmp, &m->all);
	}
}

void dm_stats(dctx *c, dmetric *m, size_t i, pt_robust *st)
{
	size_t j, k = 0;

	if (!m->loo) {
		*st = m->all;
		return;
	}
	for (j = 0; j < m->n; j++)
		if (j != i)
			m->work[k++] = m->val[j];
	pt_robust_stats(m->work, k, m->nzero, m->tmp, st);
}

double dm_median(dctx *c, dmetric *m)
{
	pt_robust st;

	memcpy(m->work, m->val, m->n * sizeof(double));
	pt_robust_stats(m->work, m->n, m->nzero, m->tmp, &st);
	return st.med;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double dm_others_median(dctx *c, dmetric *m, size_t i)
{
	size_t idx;

	/* Sorting is O(n log n) but only happens for keys where some worker
	 * already passed the statistical test, which is rare. */
	if (!m->sorted_ok) {
		memcpy(m->sorted, m->val, m->n * sizeof(double));
		if (m->n > 1)
			qsort(m->sorted, m->n, sizeof(double), cmp_double);
		m->sorted_ok = 1;
	}
	idx = pt_robust_find(m->sorted, m->n, m->val[i]);
	return pt_robust_sorted_median(m->sorted, m->n, m->nzero, idx);
}

double dm_impact_ratio(const dctx *c, const dmetric *m, size_t i, double others)
{
	return m->val[i] - others;
}

double dm_impact_duration(const dctx *c, const dmetric *m, size_t i, double others)
{
	double win = c->w[m->wk[i]].window_ms, imp;

	if (!(win > 0) || !m->pat[i])
		return 0;
	imp = (m->val[i] - others) * (double)m->pat[i]->count / win;
	/* What a worker loses in a function is at most the time it spent in
	 * it inside the window (its execution ratio): calls that began
	 * before the window (a collective waiting since before the profiled
	 * steps) count their median duration, not their time inside it, and
	 * the median times the count passed 40 times the window ("4214.6% of
	 * its time", issue 29). */
	if (m->pat[i]->exec_ratio > 0 && imp > m->pat[i]->exec_ratio)
		imp = m->pat[i]->exec_ratio;
	return imp;
}

int dm_test(dctx *c, dmetric *m, size_t i, int dir, dimpact_fn fn, double *others,
	    double *impact)
{
	pt_robust st;
	double imp;

	*others = NAN;
	*impact = 0;
	dm_stats(c, m, i, &st);
	if (!pt_robust_outlier(m->val[i], &st, dir, c->o->z, c->o->rel, c->o->mad_floor))
		return 0;
	*others = m->loo ? st.med : dm_others_median(c, m, i);
	imp = fn(c, m, i, *others);
	if (dir == PT_DIR_BOTH)
		imp = fabs(imp);
	else if (dir == PT_DIR_LOW)
		imp = -imp;
	*impact = imp;
	/* The direction must also hold against the exact others' median. */
	return pt_robust_dev(m->val[i], *others, dir) > 0 && imp > c->o->min_impact;
}

int dpair_cmp(const void *a, const void *b)
{
	const dpair *x = a, *y = b;

	if (x->v != y->v)
		return x->v > y->v ? -1 : 1;
	return strcmp(x->name, y->name);
}
