/*
 * agent.h - the node agent: one per node and control directory.
 *
 * Flow: workers on this node drop raw traces in the node-local spool
 * (<spool>/<host>-<16 hex>/<trigger-id>/<host>_<rank>_<pid>.json, one folder
 * per control directory and host: src/control/job.h); the agent turns each into
 * a worker summary with the analyzer (pt_summary_from_trace), applies the
 * trigger's raw-trace policy (keep in <run>/raw_trace/ or delete) and writes
 * the summary to <control>/summaries/<trigger-id>/, which is all the master
 * reads.  Raw traces never leave the node unless the policy keeps them.
 *
 * Library code: never prints (messages go to the log callback), never
 * exits.  One pt_agent per thread; the summaries of one poll are built in
 * parallel on up to `jobs` threads; the hardware sampler and an nsys
 * capture run on threads of their own, joined by pt_agent_free (which
 * cancels a capture still running: at most about 2 s).
 */
#ifndef PT_AGENT_H
#define PT_AGENT_H

#include <stddef.h>
#include <stdint.h>

#include "../analysis/summary.h"
#include "../control/control.h"
#include "../util/error.h"
#include "sampler.h"

typedef void (*pt_agent_log_fn)(void *ctx, const char *msg);

typedef struct pt_agent {
	/* Configuration: set by pt_agent_init, adjustable before running. */
	char dir[PT_CONTROL_PATH_MAX];     /* control directory */
	char spool[PT_CONTROL_PATH_MAX];   /* this job's folder of the node-local
	                                      spool (pt_job_spool_dir) */
	char spool_root[PT_CONTROL_PATH_MAX]; /* the spool itself (--spool-dir) */
	char host[PT_CONTROL_HOST_MAX];    /* logical host (PERFTRACKER_HOST) */
	char node[PT_CONTROL_HOST_MAX];    /* gethostname() */
	double poll_s;                     /* trigger/spool poll interval (0.2) */
	double hb_s;                       /* agents/<host>.json interval (5) */
	double idle_exit_s;                /* exit after this long without a live
	                                      worker on this host; 0 never (0) */
	long jobs;                         /* parallel summaries (min(4, CPUs)) */
	pt_summary_options sopt;
	pt_agent_log_fn log;               /* NULL: no log */
	void *log_ctx;
	/* Hardware sampler (docs/hardware.md): from the moment an active
	 * trigger is seen until every expected local worker delivered, the
	 * trigger ends or its deadline passes; hw_<host>.json beside the raw
	 * traces.  hw_opt.root/nvml/host: NULL = defaults. */
	int hw_off;                        /* 1: no sampling, no nsys capture (--no-hw) */
	pt_sampler_options hw_opt;
	/* Nsight Systems GPU metrics (docs/hardware.md, "10 kHz capture"):
	 * when a trigger asks (pt_trigger.nsys_gpu_metrics) or nsys_hz > 0
	 * (--nsys-gpu-metrics, the node's default; the trigger's rate wins),
	 * `nsys` from PATH samples every GPU during the window on a thread of
	 * its own; its series (label "nsys") join the sampler's in the samples
	 * the summaries and hw_<host>.json get (source "...+nsys").  Traces
	 * that arrive while it runs wait for it (never past the trigger's
	 * deadline).  Missing nsys or a failed capture: said in the samples'
	 * note and logged once; nothing else changes. */
	int nsys_hz;                       /* node default rate, 0: only on request (0) */
	double nsys_max_s;                 /* longest capture (60 s; never over 600,000
	                                      samples a series: 30 s at 20 kHz) */
	struct pt_agent_hw *hw;            /* sampling state (agent.c) */

	/* The node channel (src/control/nodechan.h): the agent reads its
	 * workers' records there, mirrors trigger.json and the stack request
	 * into it, and publishes the node as agents/<host>.json.  Intervals
	 * of its shared-directory operations (docs/collector.md, "Node
	 * channel"): */
	double trigger_poll_s;             /* stat trigger.json (1) */
	double stacks_poll_s;              /* stat stacks/request.json (2; 1 while a
	                                      trigger is active) */
	double node_min_s;                 /* node file: at most this often (1) */
	double node_progress_s;            /* ... when only step counts moved (2) */
	double node_max_s;                 /* ... and at least this often (10) */
	double lock_check_s;               /* does the lock still name us? (30) */

	/* State. */
	int locked;
	char ndir[PT_CONTROL_PATH_MAX];    /* node channel directory ("" none) */
	int nfd;                           /* its agent.lock, held (flock); -1 */
	int in_run;                        /* inside pt_agent_run: poll on timers */
	double tick_now;                   /* the time pt_agent_tick was given */
	struct pt_node_worker *local;      /* this node's workers, last read */
	size_t nlocal;
	pt_trigger trig;                   /* trigger.json as last read */
	double trig_stat, trig_read, req_stat, node_last, lock_last, local_read;
	struct { long long sec, nsec, size, ino; } trig_st, req_st;
	char *node_key, *node_pkey;        /* what the last node file said */
	double started, last_hb, last_alive, last_workers, last_clean;
	uint64_t processed, failed;
	char tid[PT_CONTROL_TID_MAX];      /* trigger whose traces are being handled */
	char **done;                       /* worker ids handled for tid */
	size_t ndone;
} pt_agent;

/* Defaults; dir/spool NULL mean pt_control_default_dir()/_spool(); host
 * NULL means pt_control_hostname(). */
void pt_agent_init(pt_agent *a, const char *dir, const char *spool, const char *host);
void pt_agent_free(pt_agent *a);  /* releases the lock if held */

/* Take agents/<host>.lock.  PT_OK when acquired (a stale lock is replaced),
 * 1 when a live agent holds it, an error code otherwise. */
int pt_agent_lock(pt_agent *a, pt_error *err);
void pt_agent_unlock(pt_agent *a);
/* Does the lock still name this process?  (Another agent may have taken
 * over a lock it judged stale; then this one must stop.) */
int pt_agent_owns_lock(const pt_agent *a);

/* One pass: summarise every new raw trace of this host for the active
 * trigger, clean up traces of finished triggers.  Returns the number of
 * traces handled (>= 0) or an error code. */
int pt_agent_poll(pt_agent *a, pt_error *err);

/* Handle one raw trace: summarise it (a failed summary when unreadable),
 * keep or delete it as the trigger says, write the summary.  wid is the
 * trace's base name without ".json". */
int pt_agent_process(pt_agent *a, const pt_trigger *t, const char *wid, const char *trace,
		     pt_error *err);

/* One turn of pt_agent_run at time now: the lock check (every
 * lock_check_s), the stack-request mirror, pt_agent_poll, the node file,
 * the idle check.  Returns 1 when the agent must stop (lock lost, idle),
 * else 0.  (bench/nodesim.c drives many agents with it.) */
int pt_agent_tick(pt_agent *a, double now);

/* Poll until *stop becomes non-zero, the lock is lost, or idle_exit_s
 * passes without a live worker of this host.  Writes the heartbeat.  On
 * the way out, pt_agent_leave. */
int pt_agent_run(pt_agent *a, volatile int *stop, pt_error *err);

/* reap.c.  Remove the node channels of this user whose agent is gone and
 * whose workers are all dead (left alone for 30 s after they appear),
 * with their spool folders in spool_root, and spool folders with no
 * channel for an hour.  Returns how many were removed.  pt_agent_lock
 * calls it once it holds the lock. */
int pt_agent_reap(pt_agent *a, double now);
/* The agent exits: its spool folder goes (unless a trigger is active: its
 * traces wait for the next agent), and its node channel when no live
 * worker's record is in it. */
void pt_agent_leave(pt_agent *a, double now);

#endif
