/*
 * trigger.h - the master's side of the trigger protocol (docs/collector.md):
 * pick the live workers, name one absolute start step for all of them,
 * write trigger.json under the O_EXCL lock, follow every worker through
 * armed / profiling / traced / summarized (or failed, missing) as the
 * workers and their node agents report it, and collect the summaries.
 * `perftracker --trigger-on` (src/cli/trigger.c) drives it and prints;
 * the node agent shares the step estimate.
 *
 * Never prints: errors fill a pt_error, warnings go to the note callback.
 * Not thread-safe per run (one pt_trigger_run per thread).
 */
#ifndef PT_CONTROL_TRIGGER_H
#define PT_CONTROL_TRIGGER_H

#include <stddef.h>
#include <stdint.h>

#include "../util/error.h"
#include "control.h"

/* Where a live worker probably is now: its step plus the steps its rate
 * makes since its heartbeat was written (at most 30 s worth; none without
 * a heartbeat or a known rate). */
double pt_trigger_est_step(const pt_worker_entry *w, double now);

#endif
