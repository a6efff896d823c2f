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
#include "nodechan.h"
#include "../util/strbuf.h"

/* Where a live worker probably is now: its step plus the steps its rate
 * makes since that step (its step_time; the heartbeat's time when it has
 * none), at most 30 s worth; none without a heartbeat or a known rate, and
 * none once it has made no step for max(10 s, 3 step times): a worker that
 * stopped stepping (stuck, between jobs' phases) is where it stopped. */
double pt_trigger_est_step(const pt_worker_entry *w, double now);

/* The same at a given rate (steps/s; <= 0: none): workers compared with
 * each other (status' laggards) are carried forward at one rate, so that
 * two lockstep workers stopped at the same step never differ by how their
 * own rate estimates happened to sample the stop. */
double pt_trigger_est_step_at(const pt_worker_entry *w, double now, double rate);

/* What the master knows of one expected worker. */
enum {
	PT_TW_WAITING,     /* has not seen the trigger yet */
	PT_TW_ARMED,       /* waits for the start step */
	PT_TW_PROFILING,
	PT_TW_TRACED,      /* raw trace in its node's spool: an agent summarises it */
	PT_TW_SUMMARIZED,  /* summary in summaries/<tid>/ */
	PT_TW_FAILED,      /* said so in its status */
	PT_TW_MISSING,     /* exited, died or went silent before its trace */
	PT_TW_LATE,        /* saw the round after its start step: waits for a re-arm */
	PT_TW_NSTATES
};

/* "waiting", "armed", ... "missing". */
const char *pt_trigger_state_name(int state);

typedef struct pt_trigger_worker {
	pt_worker_entry e;   /* its records as last read */
	pt_node_worker nw;   /* as its node file (or direct records) last said */
	int has_nw;
	int state;           /* PT_TW_* */
	char late[512];      /* its last "late" status ("" when it never was) */
	int exited;          /* unregistered: ended normally */
	int agent_warned;    /* "no agent runs for host" said for its host */
	char why[600];       /* why it delivers nothing ("" while it may) */
} pt_trigger_worker;

/* Lines for the user (one each, no prefix) while the run goes on: warnings
 * ("removing stale trigger lock '...'") and, with is_error set, errors that
 * cost one worker's result (an unreadable summary); the CLI prints them. */
typedef void pt_trigger_note_fn(void *ctx, int is_error, const char *msg);

typedef struct pt_trigger_options {
	const char *dir;        /* control directory (NULL: pt_control_default_dir) */
	const char *outdir;     /* runs go to outdir/<timestamp>/ (NULL: the default) */
	int64_t wait, steps;    /* --wait, --steps (>= 1) */
	int save_raw;           /* PT_RAW_* */
	double timeout;         /* <= 0: from the step rate */
	double stale;           /* no heartbeat for this long: not expected (30) */
	const char *reason;     /* NULL or "": by hand */
	int nsys_hz;            /* --nsys-gpu-metrics, 0: no */
	int rounds;             /* re-arms allowed when a worker is late (<= 0: 3) */
	pt_trigger_note_fn *note;  /* warnings (NULL: dropped) */
	void *note_ctx;
} pt_trigger_options;

/* One trigger from start to collect.  The caller reads t, w, n, cur and
 * timeout; the rest is the run's own. */
typedef struct pt_trigger_run {
	pt_trigger t;             /* as written to trigger.json */
	pt_trigger_worker *w;     /* the expected workers, n of them */
	size_t n;
	size_t nregistered;       /* workers registered when it started */
	int64_t cur;              /* the furthest worker's estimated step at the start */
	double timeout;           /* seconds from the start to t.deadline */
	/* private */
	pt_trigger_options o;
	char dir[PT_CONTROL_PATH_MAX];
	char node[PT_CONTROL_HOST_MAX];
	char lockpath[PT_CONTROL_PATH_MAX];
	char claim[PT_CONTROL_PATH_MAX + 16]; /* the run directory's name claim */
	int locked, wrote;
	double started, last_live, last_agent_check;
	double margin_s;          /* seconds of steps between the estimate and the start */
	char old_ids[8][PT_CONTROL_TID_MAX]; /* earlier rounds' ids (their records go) */
	int nold;
} pt_trigger_run;

/* How complete the job looks in dir at time now: *live workers alive
 * (heartbeat within stale s) and *world, the largest world size they
 * report (0 when none is live), and *stepping of them with a measured step
 * rate (training, not still starting up).  A job just started has fewer live workers
 * than its world size until every rank has registered: the trigger waits
 * for that (bounded) before it names the steps.  PT_OK or an error. */
int pt_trigger_census(const char *dir, double now, double stale, size_t *live, int64_t *world,
		      size_t *stepping, pt_error *err);

/* Who is expected (the workers alive at the start), the start step (the
 * furthest estimated step, plus 3 s of the fastest worker's steps for the
 * workers to notice, plus wait), the deadline, the lock (a stale one is
 * removed with a note; a live holder is PT_EINVAL naming it), old
 * status/summaries records removed, the run directory named (created by
 * the first file written there) and trigger.json written.  On failure the
 * run still needs pt_trigger_end.  PT_EINVAL "no live worker in ..." when
 * nobody is expected. */
int pt_trigger_start(pt_trigger_run *r, const pt_trigger_options *o, double now, pt_error *err);

/* One look at the workers at time now (epoch seconds): the liveness of
 * every unfinished worker from the node files and direct records (at most
 * once a second; *live_checked says whether it happened), then each
 * one's status.  counts[PT_TW_*] and *step_now (the furthest step seen)
 * are filled when not NULL.  Returns 1 when every worker is finished
 * (summarized, failed or missing), else 0. */
int pt_trigger_poll(pt_trigger_run *r, double now, int counts[PT_TW_NSTATES], int64_t *step_now,
		    int *live_checked);

/* Some worker saw this round after its start step (PT_TW_LATE) and the
 * trigger may re-arm (t.round < t.rounds)?  Then re-arm at time now: a new
 * id (first_id kept), a start step past every worker's fresh estimate by
 * twice the last margin (at least 2 s of the slowest relay seen), a new
 * deadline, every unfinished worker back to waiting (the dead stay
 * missing), the old round's records removed, trigger.json rewritten.
 * Workers still profiling the old round drop it.  Returns 1 when it
 * re-armed, 0 when there was nothing to do, an error code (err filled)
 * when trigger.json could not be written. */
int pt_trigger_rearm(pt_trigger_run *r, double now, pt_error *err);

/* One line for the progress display: who is still awaited, the first few
 * by rank: "rank 2 (armed, step 60 of 64), rank 3 (traced)"; "" when
 * nobody is.  Appends to sb. */
void pt_trigger_awaited(const pt_trigger_run *r, pt_sb *sb, size_t max_named);

/* Every 5 s: a note for each host whose workers wait, traced, for an agent
 * that is not running (once per host). */
void pt_trigger_check_agents(pt_trigger_run *r, double now);

/* Is a worker that has not finished its window without a step for
 * hang_timeout seconds at time now?  Names the longest-silent one (*who,
 * index into r->w; *silent seconds).  1 or 0. */
int pt_trigger_looks_hung(const pt_trigger_run *r, double now, double hang_timeout, size_t *who,
			  double *silent);

/* Mark the trigger done in trigger.json: workers stop looking at it. */
int pt_trigger_finish(pt_trigger_run *r, pt_error *err);

/* The summaries: every summarized worker's copied to
 * <run_dir>/summaries/<id>.json and read; every other worker (or an
 * unreadable summary) becomes a failed summary whose error says why
 * (pt_summary_failed).  *sums is a new array of r->n summaries in the
 * order of r->w (free each with pt_summary_free, the array with x_free);
 * *ndelivered the readable ones.  Notes for copies that fail and for
 * unreadable summaries.  PT_ENOMEM; PT_EINVAL "no worker delivered a
 * trace for trigger <id>" (with *sums still filled) when none did. */
struct pt_summary;
int pt_trigger_collect(pt_trigger_run *r, struct pt_summary ***sums, size_t *ndelivered,
		       pt_error *err);

/* pt_trigger_collect without reading: every summarized worker's summary
 * (and its digest, docs/summary.md "Digests") moved to
 * <run_dir>/summaries/ (the trigger's folder renamed as a whole; else
 * file by file, copied across file systems), its path in (*paths)[i] and
 * (*sums)[i] NULL; every
 * other worker's (*sums)[i] a failed summary saying why, (*paths)[i] NULL.
 * *ndelivered the copied ones.  The caller reads them (the master's two
 * phases, src/diagnose/pipeline.h) and frees both arrays and what they
 * hold.  PT_ENOMEM (nothing returned); PT_EINVAL "no worker delivered a
 * trace for trigger <id>" (both arrays filled) when none did. */
int pt_trigger_gather(pt_trigger_run *r, char ***paths, struct pt_summary ***sums,
		      size_t *ndelivered, pt_error *err);

/* Clean up whatever the run did: trigger.json marked done when it was
 * written, this trigger's status/ and summaries/ records removed, the lock
 * released; frees the run.  A zeroed run (or NULL) is fine. */
void pt_trigger_end(pt_trigger_run *r);

#endif
