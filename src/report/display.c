/*
 * display.c - writes the "display" key of the report (display.h,
 * docs/display.md) from the rows, columns and cells the diagnosis chose
 * (src/diagnose/display.c): each worker's step times and time by class,
 * and the workers x functions heatmap.  O(workers x columns).
 */
#include "display.h"
#include "keys.h"
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

	a = pt_rv_arr(r, o, PT_KEY_STEP_MS);
	for (i = 0; i < s->nsteps && s->step_ms; i++)
		pt_rv_num(r, a, NULL, s->step_ms[i]);
	a = pt_rv_arr(r, o, PT_KEY_STEP_NUMBERS);
	for (i = 0; i < s->nsteps && s->step_numbers; i++)
		pt_rv_int(r, a, NULL, s->step_numbers[i]);
	a = pt_rv_obj(r, o, PT_KEY_CLASS_MS);
	for (k = PT_C_COUNT - 1; k >= 0; k--)
		pt_rv_num(r, a, pt_class_name(k), s->class_ms[k]);
	pt_rv_bool(r, o, PT_KEY_SLOW, w->slow);
}

pt_rv *pt_display_write(pt_report *r, double step_limit, const pt_display_row *rows,
			size_t nrow, const pt_display_col *cols, size_t ncol, const double *cell)
{
	pt_rv *d, *ws, *hm, *a, *vals;
	size_t i, j;
	int k;

	d = pt_rv_obj(r, pt_report_root(r), PT_KEY_DISPLAY);
	pt_rv_int(r, d, PT_KEY_VERSION, 1);
	a = pt_rv_arr(r, d, PT_KEY_CLASSES);
	for (k = PT_C_COUNT - 1; k >= 0; k--)
		pt_rv_str(r, a, NULL, pt_class_name(k));
	pt_rv_num_or_null(r, d, PT_KEY_STEP_THRESHOLD_MS, isfinite(step_limit) ? round4(step_limit) : NAN);
	ws = pt_rv_obj(r, d, PT_KEY_WORKERS);
	for (i = 0; i < nrow; i++)
		write_worker(r, ws, &rows[i]);
	hm = pt_rv_obj(r, d, PT_KEY_HEATMAP);
	pt_rv_str(r, hm, PT_KEY_METRIC, "ms per step");
	a = pt_rv_arr(r, hm, PT_KEY_FUNCTIONS);
	for (j = 0; j < ncol; j++) {
		pt_rv *f = pt_rv_obj(r, a, NULL);

		pt_rv_str(r, f, PT_KEY_KEY, cols[j].key);
		pt_rv_str(r, f, PT_KEY_CLASS, pt_class_name(cols[j].cls));
	}
	a = pt_rv_arr(r, hm, PT_KEY_WORKERS);
	for (i = 0; i < nrow; i++)
		pt_rv_str(r, a, NULL, rows[i].id);
	vals = pt_rv_arr(r, hm, PT_KEY_VALUE);
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
