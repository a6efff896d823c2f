/*
 * display.h - report.json's "display" key (docs/display.md): the page data
 * the PerfDisplay page draws per worker and the five sections do not carry:
 * each worker's step times and time by class, and a workers x functions
 * heatmap (ms per step).
 *
 * Flow: the diagnosis picks the rows, the columns and the cells from its
 * key index (src/diagnose/display.c) --> pt_display_write here --> the
 * hardware timelines (display_hw.h) into the same object --> web/ draws it.
 * Never prints; not thread-safe on one report.
 */
#ifndef PT_REPORT_DISPLAY_H
#define PT_REPORT_DISPLAY_H

#include <stddef.h>

#include "report.h"
#include "../analysis/summary.h"

/* A row of the heatmap and a member of "display"."workers". */
typedef struct pt_display_row {
	const char *id;          /* worker id (borrowed) */
	const pt_summary *s;     /* its summary: steps and time by class */
	int slow;                /* its step is above the step threshold */
} pt_display_row;

/* A column of the heatmap: a function by key and class. */
typedef struct pt_display_col {
	const char *key;         /* borrowed */
	int cls;                 /* PT_C_* */
} pt_display_col;

/* Add "display" to the report root: version, classes, "step threshold
 * (ms)" (step_limit, rounded to 4 decimals; NAN: null, too few workers to
 * judge), "workers" (rows in the order given, each with its "slow") and "heatmap" with cell[row * ncol + col] in ms per step
 * (NAN: the worker does not run the function, written null), rounded to
 * 4 decimals.  Returns the display object, to which the caller may add
 * "hw" (pt_display_hw_write); on allocation failure the report's oom is
 * set (pt_report_oom). */
pt_rv *pt_display_write(pt_report *r, double step_limit, const pt_display_row *rows,
			size_t nrow, const pt_display_col *cols, size_t ncol, const double *cell);

#endif
