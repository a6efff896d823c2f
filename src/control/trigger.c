/*
 * trigger.c - the master's side of the trigger protocol (see trigger.h,
 * docs/collector.md): start (who is expected, the start step, the lock,
 * trigger.json), poll (each worker's state from the node files and the
 * status records), collect (the summaries into the run directory, a
 * failed summary naming why for every worker that delivered none).
 */
#include "trigger.h"

double pt_trigger_est_step(const pt_worker_entry *w, double now)
{
	double dt = now - w->hb.time;

	if (!w->has_hb || w->hb.rate <= 0)
		return (double)w->hb.step;
	return (double)w->hb.step + w->hb.rate * (dt < 0 ? 0 : dt > 30 ? 30 : dt);
}
