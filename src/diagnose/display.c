/*
 * display.c - the "display" key of the report (docs/display.md): what the
 * PerfDisplay page draws per worker and the five sections do not carry:
 * each worker's step times and time by class, and a workers x functions
 * heatmap (ms per step) of the functions the findings name plus the most
 * expensive ones.  Runs last in pt_diagnose, over the key index of
 * diagnose.c: O(total patterns + workers x columns), nothing per pair of
 * workers.
 */
#include "internal.h"
#include "sections.h"
#include "display_hw.h"
#include "../util/xalloc.h"
#include "../report/keys.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Heatmap columns.  1,000 workers x 50 columns is 50,000 cells, which the
 * page still draws in under 2 s (docs/display.md). */
#define HEAT_MAX 50

/* A heatmap cell rounded to 4 decimals (0.1 us): plenty for a colour
 * scale, and short numbers keep report.json small. */
static double round4(double v)
{
	return fabs(v) < 1e11 ? round(v * 1e4) / 1e4 : v;
}

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

static void write_worker(dctx *c, pt_rv *ws, const dworker *w, double step, double lim)
{
	pt_report *r = c->rep;
	const pt_summary *s = w->s;
	pt_rv *o = pt_rv_obj(r, ws, w->id), *a;
	size_t i;
	int k;

	a = pt_rv_arr(r, o, PT_K_STEP_MS);
	for (i = 0; i < s->nsteps && s->step_ms; i++)
		pt_rv_num(r, a, NULL, s->step_ms[i]);
	a = pt_rv_arr(r, o, "step_numbers");
	for (i = 0; i < s->nsteps && s->step_numbers; i++)
		pt_rv_int(r, a, NULL, s->step_numbers[i]);
	a = pt_rv_obj(r, o, PT_K_CLASS_MS);
	for (k = PT_C_COUNT - 1; k >= 0; k--)
		pt_rv_num(r, a, pt_class_name(k), s->class_ms[k]);
	pt_rv_bool(r, o, PT_K_SLOW, isfinite(lim) && isfinite(step) && step > lim);
}

void diag_display(dctx *c)
{
	pt_report *r = c->rep;
	pt_rv *d, *ws, *hm, *a, *vals;
	row *rows = NULL;
	uint32_t *pos = NULL;
	double *med = NULL, *cell = NULL, *step = NULL, *tmp = NULL, lim;
	col cols[HEAT_MAX];
	size_t nrow = c->nw, ncol, i, j;
	int k;

	rows = x_malloc((nrow ? nrow : 1) * sizeof(*rows));
	pos = x_malloc((nrow ? nrow : 1) * sizeof(*pos));
	med = x_malloc((c->nkeys ? c->nkeys : 1) * sizeof(*med));
	step = x_malloc((nrow ? nrow : 1) * sizeof(*step));
	for (i = 0, j = nrow; i < nrow; i++)
		j = c->w[i].s->nsteps > j ? c->w[i].s->nsteps : j;
	tmp = x_malloc(2 * (j ? j : 1) * sizeof(*tmp));
	if (!rows || !pos || !med || !step || !tmp)
		goto oom;
	for (i = 0; i < nrow; i++) {
		int64_t rk = c->w[i].s->rank;

		rows[i] = (row){ rk < 0 ? INT64_MAX : rk, c->w[i].id, (uint32_t)i };
	}
	if (nrow > 1)
		qsort(rows, nrow, sizeof(*rows), row_cmp);
	for (i = 0; i < nrow; i++)
		pos[rows[i].w] = (uint32_t)i;

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

		for (e = 0; e < kk->n; e++) {
			const dent *en = &c->ent[kk->off + e];
			const dworker *w = &c->w[en->w];

			cell[pos[en->w] * ncol + j] = round4(per_step(w->s, &w->pat[en->p]));
		}
	}

	d = pt_rv_obj(r, pt_report_root(r), PT_K_DISPLAY);
	pt_rv_int(r, d, PT_K_VERSION, 1);
	a = pt_rv_arr(r, d, PT_K_CLASSES);
	for (k = PT_C_COUNT - 1; k >= 0; k--)
		pt_rv_str(r, a, NULL, pt_class_name(k));
	lim = step_limit(c, step, tmp);
	pt_rv_num_or_null(r, d, PT_K_STEP_THRESHOLD_MS, isfinite(lim) ? round4(lim) : NAN);
	ws = pt_rv_obj(r, d, PT_K_WORKERS);
	for (i = 0; i < nrow; i++)
		write_worker(c, ws, &c->w[rows[i].w], step[rows[i].w], lim);
	hm = pt_rv_obj(r, d, "heatmap");
	pt_rv_str(r, hm, PT_K_METRIC, "ms per step");
	a = pt_rv_arr(r, hm, PT_K_FUNCTIONS);
	for (j = 0; j < ncol; j++) {
		pt_rv *f = pt_rv_obj(r, a, NULL);

		pt_rv_str(r, f, PT_K_KEY, cols[j].key);
		pt_rv_str(r, f, PT_K_CLASS, pt_class_name(cols[j].cls));
	}
	a = pt_rv_arr(r, hm, PT_K_WORKERS);
	for (i = 0; i < nrow; i++)
		pt_rv_str(r, a, NULL, rows[i].id);
	vals = pt_rv_arr(r, hm, PT_K_VALUE);
	for (i = 0; i < nrow; i++) {
		a = pt_rv_arr(r, vals, NULL);
		for (j = 0; j < ncol; j++) {
			double v = cell[i * ncol + j];

			if (isnan(v))
				pt_rv_null(r, a, NULL);
			else
				pt_rv_num(r, a, NULL, v);
		}
	}
	/* Hardware timelines, when workers carry them (src/diagnose/display_hw.c). */
	diag_display_hw(c, d);
	if (pt_report_short_names(r, d))
		goto oom;
	goto out;
oom:
	c->oom = 1;
out:
	x_free(tmp);
	x_free(step);
	x_free(cell);
	x_free(med);
	x_free(pos);
	x_free(rows);
}
