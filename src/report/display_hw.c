/*
 * display_hw.c - display.hw in the report (display_hw.h): the hardware
 * timelines of a bounded set of workers, times in ms from each worker's
 * window start, so the page draws them on the same axis as the steps.
 * The diagnosis fills the workers after the findings are ranked
 * (src/diagnose/display.c); costs O(workers log workers + points written).
 */
#include "display_hw.h"
#include "../util/xalloc.h"
#include "../report/keys.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Four significant digits: the charts cannot show more, and short numbers
 * keep report.json (indented one number per line) small. */
static double round_sig(double v)
{
	double m;

	if (!isfinite(v) || v == 0)
		return v;
	m = pow(10, 3 - floor(log10(fabs(v))));
	return isfinite(m) && isfinite(v * m) ? round(v * m) / m : v;
}

static int cmp_pick(const void *a, const void *b)
{
	const pt_display_hw_worker *x = *(const pt_display_hw_worker *const *)a;
	const pt_display_hw_worker *y = *(const pt_display_hw_worker *const *)b;
	long long rx = x->rank < 0 ? LLONG_MAX : x->rank, ry = y->rank < 0 ? LLONG_MAX : y->rank;

	if (rx != ry)
		return rx < ry ? -1 : 1;
	return strcmp(x->id, y->id);
}

static int cmp_named(const void *a, const void *b)
{
	const pt_display_hw_worker *x = *(const pt_display_hw_worker *const *)a;
	const pt_display_hw_worker *y = *(const pt_display_hw_worker *const *)b;

	int nx = x->named > 0 ? x->named : INT_MAX, ny = y->named > 0 ? y->named : INT_MAX;

	if (nx != ny)
		return nx < ny ? -1 : 1;
	return cmp_pick(a, b);
}

static void write_series(pt_report *r, pt_rv *arr, const pt_series *se, int64_t start_ns,
			 size_t max_points)
{
	pt_rv *o = pt_rv_obj(r, arr, NULL), *t, *v;
	size_t step = 1, i;

	/* The summaries carry at most 120 points; a larger series (an old
	 * summary, another writer) is thinned by taking every step-th one. */
	if (se->n > max_points)
		step = (se->n + max_points - 1) / max_points;
	pt_rv_str(r, o, PT_KEY_NAME, se->name);
	pt_rv_int(r, o, PT_KEY_DEVICE, se->device);
	pt_rv_str(r, o, PT_KEY_LABEL, se->label);
	pt_rv_str(r, o, PT_KEY_UNIT, se->unit);
	pt_rv_num(r, o, PT_KEY_MAX, se->max);
	t = pt_rv_arr(r, o, "t_ms");
	v = pt_rv_arr(r, o, PT_KEY_V);
	for (i = 0; i < se->n; i += step) {
		pt_rv_num(r, t, NULL, round((double)(se->t_ns[i] - start_ns) / 1e3) / 1e3);
		if (isnan(se->v[i]))
			pt_rv_null(r, v, NULL);
		else
			pt_rv_num(r, v, NULL, round_sig(se->v[i]));
	}
}

static void write_worker(pt_report *r, pt_rv *ws, const pt_display_hw_worker *w)
{
	pt_rv *o = pt_rv_obj(r, ws, w->id), *a;
	int64_t start_ns = (int64_t)llround(w->window_start_us * 1000.0);
	size_t k;

	pt_rv_str(r, o, PT_KEY_HOST, w->host ? w->host : "");
	if (w->rank >= 0)
		pt_rv_int(r, o, PT_KEY_RANK, w->rank);
	else
		pt_rv_null(r, o, PT_KEY_RANK);
	pt_rv_num(r, o, "t0_us", w->window_start_us);
	pt_rv_num(r, o, PT_KEY_WINDOW_MS, w->window_ms);
	pt_rv_str(r, o, PT_KEY_SOURCE, w->hw->source ? w->hw->source : "");
	pt_rv_str(r, o, PT_KEY_NOTE, w->hw->note ? w->hw->note : "");
	a = pt_rv_arr(r, o, PT_KEY_SERIES);
	for (k = 0; k < w->hw->n; k++)
		if (w->hw->s[k].n)
			write_series(r, a, &w->hw->s[k], start_ns, PT_DISPLAY_HW_MAX_POINTS);
}

void pt_display_hw_write(pt_report *r, pt_rv *display, const pt_display_hw_worker *w, size_t n)
{
	const pt_display_hw_worker **cand = NULL, **pick = NULL;
	const char **hosts = NULL;
	char *taken = NULL;
	size_t nc = 0, np = 0, nh = 0, i, j;
	pt_rv *hw, *ws;

	cand = x_malloc((n ? n : 1) * sizeof(*cand));
	pick = x_malloc((n ? n : 1) * sizeof(*pick));
	hosts = x_malloc((n ? n : 1) * sizeof(*hosts));
	taken = x_calloc(n ? n : 1, 1);
	if (!cand || !pick || !hosts || !taken)
		goto out;  /* nothing added: the page shows no hardware view */
	for (i = 0; i < n; i++)
		if (w[i].hw && w[i].hw->n && w[i].id)
			cand[nc++] = &w[i];
	if (!nc)
		goto out;
	/* 1. named by findings, best finding first */
	qsort(cand, nc, sizeof(*cand), cmp_named);
	for (i = 0; i < nc && np < PT_DISPLAY_HW_MAX_WORKERS && cand[i]->named > 0; i++) {
		pick[np++] = cand[i];
		taken[i] = 1;
	}
	/* 2. one per host not yet shown, by rank; 3. the rest by rank */
	qsort(cand, nc, sizeof(*cand), cmp_pick);
	memset(taken, 0, nc);
	for (i = 0; i < np; i++) {
		for (j = 0; j < nc; j++)
			if (cand[j] == pick[i])
				taken[j] = 1;
		hosts[nh++] = pick[i]->host ? pick[i]->host : "";
	}
	for (i = 0; i < nc && np < PT_DISPLAY_HW_MAX_WORKERS; i++) {
		const char *h = cand[i]->host ? cand[i]->host : "";
		int seen = 0;

		if (taken[i])
			continue;
		for (j = 0; j < nh && !seen; j++)
			seen = !strcmp(hosts[j], h);
		if (seen)
			continue;
		pick[np++] = cand[i];
		taken[i] = 1;
		hosts[nh++] = h;
	}
	for (i = 0; i < nc && np < PT_DISPLAY_HW_MAX_WORKERS; i++)
		if (!taken[i])
			pick[np++] = cand[i];
	qsort(pick, np, sizeof(*pick), cmp_pick);

	hw = pt_rv_obj(r, display, PT_KEY_HW);
	pt_rv_int(r, hw, PT_KEY_VERSION, 1);
	pt_rv_int(r, hw, "workers_with_samples", (int64_t)nc);
	ws = pt_rv_obj(r, hw, PT_KEY_WORKERS);
	for (i = 0; i < np; i++)
		write_worker(r, ws, pick[i]);
out:
	x_free(taken);
	x_free(hosts);
	x_free(pick);
	x_free(cand);
}
