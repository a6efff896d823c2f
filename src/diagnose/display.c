/*
 * display.c - the diagnosis's part of the report's "display" key
 * (docs/display.md): which rows and columns the page's heatmap shows and
 * their cells, chosen from the key index of diagnose.c: the functions the
 * findings name plus the most expensive ones by their median over the
 * workers.  src/report/display.c writes the key, src/report/display_hw.c
 * its hardware timelines.  Runs last in pt_diagnose: O(total patterns +
 * workers x columns), nothing per pair of workers.
 */
#include "internal.h"
#include "sections.h"
#include "../report/display.h"
#include "../report/display_hw.h"
#include "../util/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Heatmap columns.  1,000 workers x 50 columns is 50,000 cells, which the
 * page still draws in under 2 s (docs/display.md). */
#define HEAT_MAX 50

static double per_step(const pt_summary *s, const pt_pattern *p)
{
	double v = p->total_ms / (double)(s->nsteps ? s->nsteps : 1);

	return isfinite(v) && v > 0 ? v : 0;
}

typedef struct col {
	uint32_t k;     /* key index */
	double med;     /* median ms per step over the workers (0 where absent) */
	const char *key;
	int cls;
} col;

/* Most expensive first; ties by key and class, so the order does not
 * depend on which summary came first. */
static int col_cmp(const void *a, const void *b)
{
	const col *x = a, *y = b;
	int r;

	if (x->med != y->med)
		return x->med > y->med ? -1 : 1;
	r = strcmp(x->key, y->key);
	return r ? r : x->cls - y->cls;
}

typedef struct row {
	int64_t rank;   /* unknown (-1) sorts last */
	const char *id;
	uint32_t w;
} row;

/* The order of "workers": rank, then id. */
static int row_cmp(const void *a, const void *b)
{
	const row *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return strcmp(x->id, y->id);
}

/* Pick the columns: the findings' functions in rank order, then the keys
 * with the largest median ms per step, at most HEAT_MAX; sorted by median. */
static size_t pick_columns(dctx *c, col *cols, double *med)
{
	dmetric *m = &c->m[0];
	col *all = NULL;
	uint8_t *taken = NULL;
	size_t ncol = 0, i, nall = 0;

	taken = x_calloc(c->nkeys ? c->nkeys : 1, 1);
	all = x_malloc((c->nkeys ? c->nkeys : 1) * sizeof(*all));
	if (!taken || !all) {
		c->oom = 1;
		goto out;
	}
	/* A key fewer than half the workers run has median 0, so it is
	 * skipped; with that and the median alone (no MAD), this function
	 * takes less than half the time at 10,000 workers (docs/bench.md,
	 * "Code shaped for speed"). */
	for (i = 0; i < c->nkeys; i++) {
		med[i] = 0;
		if ((size_t)c->keys[i].n * 2 < c->nw)
			continue;
		dm_load(c, m, &c->keys[i], M_PER_STEP);
		med[i] = pt_robust_median(m->val, m->n, m->nzero);
	}
	for (i = 0; i < c->nf && ncol < HEAT_MAX; i++) {
		uint32_t k = df_key(c, &c->f[i]);

		if (k == UINT32_MAX || taken[k])
			continue;
		taken[k] = 1;
		cols[ncol++] = (col){ k, med[k], c->keys[k].key, c->keys[k].cls };
	}
	/* Keys most workers lack (median 0) would be arbitrary filler. */
	for (i = 0; i < c->nkeys; i++)
		if (!taken[i] && med[i] > 0)
			all[nall++] = (col){ (uint32_t)i, med[i], c->keys[i].key, c->keys[i].cls };
	if (nall > 1)
		qsort(all, nall, sizeof(*all), col_cmp);
	for (i = 0; i < nall && ncol < HEAT_MAX; i++)
		cols[ncol++] = all[i];
	if (ncol > 1)
		qsort(cols, ncol, sizeof(*cols), col_cmp);
out:
	x_free(all);
	x_free(taken);
	return ncol;
}

/* The hardware timelines' workers (src/report/display_hw.h): each one's
 * window, and the rank of the first finding that names it. */
static void display_hw(dctx *c, pt_rv *display)
{
	pt_display_hw_worker *w;
	size_t i, k;

	w = x_calloc(c->nw ? c->nw : 1, sizeof(*w));
	if (!w) {
		c->oom = 1;
		return;
	}
	for (i = 0; i < c->nw; i++) {
		const pt_summary *s = c->w[i].s;

		w[i].id = c->w[i].id;
		w[i].host = s->host;
		w[i].rank = s->rank;
		w[i].window_start_us = s->window_start_us;
		w[i].window_ms = s->window_ms;
#ifdef PT_SUMMARY_HW_SERIES
		w[i].hw = s->hw_series;
#else
		w[i].hw = NULL;  /* the summary carries no timelines yet */
#endif
	}
	/* Findings are ranked: the first that names a worker gives its rank. */
	for (k = 0; k < c->nf; k++) {
		const char *id = c->f[k].worker;

		if (!id)
			continue;
		for (i = 0; i < c->nw; i++)
			if (!w[i].named && (w[i].id == id || !strcmp(w[i].id, id))) {
				w[i].named = (int)(k + 1);
				break;
			}
	}
	pt_display_hw_write(c->rep, display, w, c->nw);
	if (pt_report_oom(c->rep))
		c->oom = 1;
	x_free(w);
}

/* Each worker's step time into step[i] (NAN: unknown): the median of its
 * steps, else window / steps, as the page draws it.  Returns the slow-step
 * limit over the workers, the diagnosis's outlier rule (z, rel, MAD floor:
 * pt_robust_limit), or NAN under 3 workers with a step (too few to judge).
 * tmp holds 2 * max(workers, steps) doubles. */
static double step_limit(dctx *c, double *step, double *tmp)
{
	pt_robust st;
	size_t i, j, n = 0;

	for (i = 0; i < c->nw; i++) {
		const pt_summary *s = c->w[i].s;

		step[i] = NAN;
		if (s->nsteps && s->step_ms) {
			for (j = 0; j < s->nsteps; j++)
				tmp[j] = s->step_ms[j];
			step[i] = pt_robust_median(tmp, s->nsteps, 0);
		} else if (s->nsteps && isfinite(s->window_ms)) {
			step[i] = s->window_ms / (double)s->nsteps;
		}
	}
	for (i = 0; i < c->nw; i++)
		if (isfinite(step[i]))
			tmp[n++] = step[i];
	if (n < 3)
		return NAN;
	pt_robust_stats(tmp, n, 0, tmp + n, &st);
	return st.med > 0 ? pt_robust_limit(st.med, st.mad, c->o->z, c->o->rel, c->o->mad_floor) : NAN;
}

void diag_display(dctx *c)
{
	row *rows = NULL;
	uint32_t *pos = NULL;
	double *med = NULL, *cell = NULL, *step = NULL, *tmp = NULL, lim;
	col cols[HEAT_MAX];
	pt_display_row *prow = NULL;
	pt_display_col pcol[HEAT_MAX];
	pt_rv *d;
	size_t nrow = c->nw, ncol, i, j;

	rows = x_malloc((nrow ? nrow : 1) * sizeof(*rows));
	pos = x_malloc((nrow ? nrow : 1) * sizeof(*pos));
	med = x_malloc((c->nkeys ? c->nkeys : 1) * sizeof(*med));
	prow = x_malloc((nrow ? nrow : 1) * sizeof(*prow));
	step = x_malloc((nrow ? nrow : 1) * sizeof(*step));
	for (i = 0, j = nrow; i < nrow; i++)
		j = c->w[i].s->nsteps > j ? c->w[i].s->nsteps : j;
	tmp = x_malloc(2 * (j ? j : 1) * sizeof(*tmp));
	if (!rows || !pos || !med || !prow || !step || !tmp)
		goto oom;
	lim = step_limit(c, step, tmp);
	/* At scale, the rows of the workers diag_row keeps (the step limit
	 * above is still every worker's). */
	for (i = 0, nrow = 0; i < c->nw; i++) {
		int64_t rk = c->w[i].s->rank;

		pos[i] = UINT32_MAX;
		if (diag_row(c, i))
			rows[nrow++] = (row){ rk < 0 ? INT64_MAX : rk, c->w[i].id, (uint32_t)i };
	}
	if (nrow > 1)
		qsort(rows, nrow, sizeof(*rows), row_cmp);
	for (i = 0; i < nrow; i++) {
		pos[rows[i].w] = (uint32_t)i;
		double st = step[rows[i].w];

		prow[i] = (pt_display_row){ rows[i].id, c->w[rows[i].w].s,
					    isfinite(lim) && isfinite(st) && st > lim };
	}

	ncol = pick_columns(c, cols, med);
	if (c->oom)
		goto out;
	/* The matrix, row-major; NAN = the worker does not run the function.
	 * Filled key by key from the index: each cell is touched once. */
	cell = x_malloc((nrow && ncol ? nrow * ncol : 1) * sizeof(*cell));
	if (!cell)
		goto oom;
	for (i = 0; i < nrow * ncol; i++)
		cell[i] = NAN;
	for (j = 0; j < ncol; j++) {
		const dkey *kk = &c->keys[cols[j].k];
		uint32_t e;

		pcol[j] = (pt_display_col){ cols[j].key, cols[j].cls };
		for (e = 0; e < kk->n; e++) {
			const dent *en = &c->ent[kk->off + e];
			const dworker *w = &c->w[en->w];

			if (pos[en->w] != UINT32_MAX)
				cell[pos[en->w] * ncol + j] = per_step(w->s, dw_pat(w, en->p));
		}
	}
	/* Hardware timelines, when workers carry them (src/report/display_hw.c). */
	display_hw(c, d = pt_display_write(c->rep, lim, prow, nrow, pcol, ncol, cell));
	if (pt_report_short_names(c->rep, d))
		goto oom;
	goto out;
oom:
	c->oom = 1;
out:
	x_free(cell);
	x_free(tmp);
	x_free(step);
	x_free(prow);
	x_free(med);
	x_free(pos);
	x_free(rows);
}
