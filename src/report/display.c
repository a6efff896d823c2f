/*
 * display.c - writes the "display" key of the report (display.h,
 * docs/display.md) from the rows, columns and cells the diagnosis chose
 * (src/diagnose/display.c): each worker's step times and time by class,
 * and the workers x functions heatmap.  O(workers x columns).
 */
#include "display.h"
#include "../model/store.h"

#include <math.h>

/* A heatmap cell rounded to 4 decimals (0.1 us): plenty for a colour
 * scale, and short numbers keep report.json small. */
static double round4(double v)
{
	return fabs(v) < 1e11 ? round(v * 1e4) / 1e4 : v;
}

static void write_worker(pt_report *r, pt_rv *ws, const pt_display_row *w)
{
	const pt_summary *s = w->s;
	pt_rv *o = pt_rv_obj(r, ws, w->id), *a;
	size_t i;
	int k;

	a = pt_rv_arr(r, o, "step_ms");
	for (i = 0; i < s->nsteps && s->step_ms; i++)
		pt_rv_num(r, a, NULL, s->step_ms[i]);
	a = pt_rv_arr(r, o, "step_numbers");
	for (i = 0; i < s->nsteps && s->step_numbers; i++)
		pt_rv_int(r, a, NULL, s->step_numbers[i]);
	a = pt_rv_obj(r, o, "class_ms");
	for (k = PT_C_COUNT - 1; k >= 0; k--)
		pt_rv_num(r, a, pt_class_name(k), s->class_ms[k]);
}

pt_rv *pt_display_write(pt_report *r, const pt_display_row *rows, size_t nrow,
			const pt_display_col *cols, size_t ncol, const double *cell)
{
	pt_rv *d, *ws, *hm, *a, *vals;
	size_t i, j;
	int k;

	d = pt_rv_obj(r, pt_report_root(r), "display");
	pt_rv_int(r, d, "version", 1);
	a = pt_rv_arr(r, d, "classes");
	for (k = PT_C_COUNT - 1; k >= 0; k--)
		pt_rv_str(r, a, NULL, pt_class_name(k));
	ws = pt_rv_obj(r, d, "workers");
	for (i = 0; i < nrow; i++)
		write_worker(r, ws, &rows[i]);
	hm = pt_rv_obj(r, d, "heatmap");
	pt_rv_str(r, hm, "metric", "ms per step");
	a = pt_rv_arr(r, hm, "functions");
	for (j = 0; j < ncol; j++) {
		pt_rv *f = pt_rv_obj(r, a, NULL);

		pt_rv_str(r, f, "key", cols[j].key);
		pt_rv_str(r, f, "class", pt_class_name(cols[j].cls));
	}
	a = pt_rv_arr(r, hm, "workers");
	for (i = 0; i < nrow; i++)
		pt_rv_str(r, a, NULL, rows[i].id);
	vals = pt_rv_arr(r, hm, "value");
	for (i = 0; i < nrow; i++) {
		a = pt_rv_arr(r, vals, NULL);
		for (j = 0; j < ncol; j++) {
			double v = cell[i * ncol + j];

			if (isnan(v))
				pt_rv_null(r, a, NULL);
			else
				pt_rv_num(r, a, NULL, round4(v));
		}
	}
	return d;
}
