/*
 * display_hw.h - the "hw" member of the report's "display" key: per-worker
 * hardware timelines (GPU utilisation, clocks, power, NVLink/PCIe/NIC/
 * InfiniBand throughput, CPU, memory) over each worker's window, which the
 * PerfDisplay page draws as charts aligned with the window.
 *
 * Flow: the node agent's sampler --> compact timelines in each worker's
 * summary (pt_sampler_worker_series, summary member "hw_series") -->
 * diagnose (src/diagnose/display.c) --> display.hw here --> web/js/hardware.js
 * (Hardware view).  Format: docs/hardware.md, "Timelines".
 */
#ifndef PT_REPORT_DISPLAY_HW_H
#define PT_REPORT_DISPLAY_HW_H

#include <stddef.h>

#include "../model/samples.h"
#include "report.h"

/* Workers whose timelines go into the report (the page draws one chart
 * group per worker; each adds about 100 KB to report.json). */
#define PT_DISPLAY_HW_MAX_WORKERS 16
/* Points per series in the report (the summaries may carry more). */
#define PT_DISPLAY_HW_MAX_POINTS 120

typedef struct pt_display_hw_worker {
	const char *id;          /* worker id */
	const char *host;        /* "" unknown */
	long long rank;          /* -1 unknown */
	double window_start_us;  /* absolute us: t_ms = 0 */
	double window_ms;
	const pt_samples *hw;    /* compact timelines; NULL: none */
	int named;               /* rank of the first finding naming it (1 = first), 0 none */
} pt_display_hw_worker;

/* Add "hw" to the display object: {"version":1,"workers":{id:{...}}} for at
 * most PT_DISPLAY_HW_MAX_WORKERS workers that have timelines, chosen in
 * this order: named by findings (best-ranked finding first), one worker
 * per host not yet shown (lowest rank), the rest by rank.  Nothing is
 * added when no worker has timelines or on allocation failure (the page
 * then has no hardware view). */
void pt_display_hw_write(pt_report *r, pt_rv *display, const pt_display_hw_worker *w, size_t n);

#endif
