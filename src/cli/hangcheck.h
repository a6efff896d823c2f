/*
 * hangcheck.h - hang diagnosis on the master, shared by `perftracker
 * hang-check` and the trigger (src/cli/trigger.c) when the workers stop
 * stepping: ask every worker's watchdog for its stacks through the control
 * directory, wait for the answers, classify each worker (hung, running,
 * dead, lost, exited), and analyse with src/hang/hang.h.
 */
#ifndef PT_CLI_HANGCHECK_H
#define PT_CLI_HANGCHECK_H

#include <stddef.h>

#include "control/control.h"
#include "hang/hang.h"
#include "report/report.h"

typedef struct cli_hang {
	const char *dir;           /* control directory */
	double stale;              /* no heartbeat for this long: lost (30) */
	double hang_timeout;       /* no step for this long: hung (> 0) */
	double stack_wait;         /* wait this long for the stacks (5) */
	const char *detected_by;   /* "hang-check", "trigger <id>" */
	int progress;              /* a line on stderr while waiting */
} cli_hang;

/* The result of one check; free with cli_hang_free. */
typedef struct cli_hang_run {
	pt_worker_entry *e;        /* the workers' records, refreshed after the wait */
	pt_hang_worker *w;         /* one per worker, in input order */
	pt_hang_dump *dumps;       /* w[i].dump points here when it has stacks */
	char (*notes)[160];        /* w[i].stacks */
	char **texts;              /* the stack file's text for w[i], or NULL */
	size_t n;
	pt_hang_options opt;
	pt_hang_result res;
	size_t answered;           /* workers that answered this request */
	double seconds;            /* from the request to the last answer or the timeout */
	char request[PT_CONTROL_TID_MAX + 16];
} cli_hang_run;

/* max(60 s, 10 x the median step time of the workers with a known rate). */
double cli_hang_auto_timeout(const pt_worker_entry *w, size_t n);

/* Check the workers e[0..n) (exited[i] != 0: known to have ended normally;
 * exited may be NULL).  0, or -1 after printing a one-line error. */
int cli_hang_check(const cli_hang *h, const pt_worker_entry *e, const int *exited, size_t n,
		   cli_hang_run *run);
void cli_hang_free(cli_hang_run *run);

/* The report (pt_hang_report) plus, when t is given, its "trigger" key;
 * written to run_dir/PerfDisplay/ with each worker's stack file copied to
 * run_dir/stacks/.  0, or -1 after printing a one-line error. */
int cli_hang_write(const cli_hang_run *run, const char *run_dir, const pt_trigger *t);

/* The text report on stdout: "Hang:" and its JSON, then the suspects as
 * numbered sentences (the form of the diagnosis text report). */
void cli_hang_print(const cli_hang_run *run);

/* Add "trigger" (id, reason, requested by, steps, created) to the root of a
 * report; shared with the profiling path of the trigger. */
void cli_trigger_key(pt_report *r, const pt_trigger *t);

#endif
