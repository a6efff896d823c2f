/*
 * collector_internal.h - what the files of the collector extension share:
 * the process-wide state (G: step count, configuration, window), the types
 * and states, and the functions one file calls in another.  Not installed,
 * not part of any API: only the collector's own .c files include it.
 *
 * Everything declared here has hidden visibility, so the step path reads G
 * PC-relative (no GOT load) and the module exports PyInit__collector only.
 */
#ifndef PT_COLLECTOR_INTERNAL_H
#define PT_COLLECTOR_INTERNAL_H

/*
 * The flow, file by file (docs/collector.md, docs/hang.md):
 *
 *   _collector.c         module and type glue: Collector(), shutdown(), info()
 *   collector_env.c      configuration (Collector() arguments, PERFTRACKER_*)
 *                        and the collector's own log
 *   collector_bg.c       the background thread: node-channel mode, heartbeats,
 *                        registration, hand-over of window work
 *   collector_window.c   the window seen from the background thread: trigger
 *                        polling, arming, status records
 *   collector_agent.c    local rank 0 starts the node agent
 *   collector_step.c     step(): one increment and one compare; at the armed
 *                        step it starts, advances or stops the window through
 *                        the Python layer (_window.py)
 *   collector_tracer.c   the C Python-function tracer (torch without Kineto)
 *   collector_export.c   the raw trace in the spool: torch's export + tracer
 *   collector_watchdog.c Python stacks without the GIL, allocation-free
 *
 * Rules: step() never does I/O, never takes a lock and never raises; every
 * error is logged once to stderr and the collector goes quiet.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include "control/control.h"
#include "control/job.h"
#include "control/nodechan.h"

#pragma GCC visibility push(hidden)

#define NO_ACTION INT64_MAX

/* ---- log (collector_env.c) ------------------------------------------------ */

extern int log_verbose;

/* First message goes to stderr, later ones only with PERFTRACKER_DEBUG=1. */
void plog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Only with PERFTRACKER_DEBUG=1. */
void dlog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A control-directory failure: the first of a row goes to plog, the rest
 * to dlog, until a success clears G.io_failing. */
void io_error(const char *what, const pt_error *e);

/* ---- configuration (collector_env.c) -------------------------------------- */

/* Collector()'s arguments (borrowed references; valid during __init__). */
typedef struct config_args {
	const char *dir, *spool;
	long long rank, lrank, world, lworld, events;
	int hb_ms, poll_ms;
	double hang_s;
	PyObject *hook, *agent;
} config_args;

void config_log(void);  /* log_verbose from PERFTRACKER_DEBUG */
/* 0, or -1 (logged, no Python error left) on bad arguments. */
int config_parse(PyObject *args, PyObject *kw, config_args *a);
/* Fills G's configuration (GIL held, before the threads start); -1: the
 * collector stays inert (logged). */
int config_load(const config_args *a);

/* ---- collector state ------------------------------------------------------ */

enum { W_IDLE, W_ARMED, W_PROFILING, W_EXPORT, W_FAILED };

typedef struct window {
	int phase;
	char tid[PT_CONTROL_TID_MAX];
	int64_t start, steps, actual_start, end;
	double deadline;
	int save_raw;
	char torch_path[PT_CONTROL_PATH_MAX];
	char final_path[PT_CONTROL_PATH_MAX];
	/* From _window.stop(): */
	int legacy;
	int64_t trace_start_ns;
	char pid_tok[96], tid_tok[96];
	char backend[32];
	int64_t rank, world;
	char torch_version[32];
	char *colls;      /* torch's Flight Recorder entries of the window, a
	                     JSON array (malloc'd; NULL: none); freed after
	                     the export */
	char error[512];
	int status_dirty;
	int use_tracer;
	int abort;        /* the trigger was re-armed under a new id while this
	                     window ran: step() drops it at its next step */
} window;

/* How the worker talks to the control directory:
 * M_AGENT    through its node's agent (the node channel); no operation on
 *            the shared directory while idle;
 * M_DIRECT   no agent is expected (PERFTRACKER_AUTO_AGENT=0 and none seen):
 *            the shared directory directly at the configured rates;
 * M_FALLBACK an agent is expected or was seen but is down: the shared
 *            directory directly at FB_FACTOR times the configured
 *            intervals (a trigger still arrives, later);
 * M_WAIT     the first AGENT_GRACE_S seconds, while local rank 0 starts
 *            the agent: local only. */
enum { M_DIRECT, M_AGENT, M_FALLBACK, M_WAIT };
#define FB_POLL_FACTOR 20   /* fallback trigger/stack polls: 20 x 250 ms = 5 s */
#define FB_HB_FACTOR 5      /* fallback heartbeats: 5 x 1 s = 5 s */
#define AGENT_GRACE_S 5.0

extern struct collector {
	/* Step path: written by the training thread, read by the background one. */
	int64_t count;
	int64_t next_action;
	int started;
	int quiet;
	pid_t pid;

	/* The watch (collector_watch.c): step() stamps each step's end
	 * (CLOCK_REALTIME µs) at step_us[count & (WATCH_STEPS - 1)]. */
	int watch_on;
	int64_t step_us[1024];

	/* Configuration (set once before the thread starts). */
	char dir[PT_CONTROL_PATH_MAX];
	char spool[PT_CONTROL_PATH_MAX];
	char host[PT_CONTROL_HOST_MAX];
	char node[PT_CONTROL_HOST_MAX];
	pt_worker_info info;
	int heartbeat_ms, poll_ms;
	size_t trace_events;
	char **agent_argv;
	PyObject *hook;

	/* Background thread. */
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cond;
	int stop;
	int stopped;

	window w;
	char handled[PT_CONTROL_TID_MAX];
	int repoll;       /* the window is over: read trigger.json again at once
	                     (a round re-armed meanwhile is for us too) */
	int io_failing;

	/* Node channel (docs/collector.md, "Node channel"). */
	char ndir[PT_CONTROL_PATH_MAX];  /* "" when unusable: direct mode only */
	int agent_expected;              /* PERFTRACKER_AUTO_AGENT != 0 */
	int mode;                        /* M_*; atomic: the watchdog reads it */
	pt_node_worker rec;              /* our record (background thread only) */
	int rec_dirty;                   /* status changed: write the record now */
	int direct_status;               /* the status must (also) go to the shared dir */
} G;

/* ---- Python function tracer (collector_tracer.c) -------------------------- */

/* One tracer per process; not thread-safe: the training thread owns it
 * while a window runs, the background thread before and after. */
int tracer_alloc(size_t cap);  /* the event buffer, off the step path; no GIL */
void tracer_free(void);        /* NULL-safe; clears everything */
int tracer_start(void);        /* GIL held, in the traced thread; -1: not started */
void tracer_stop(void);        /* GIL held; drops the code-object references */
/* Pairs calls and returns into "X" events on f, ts relative to base_ns;
 * first: no comma before the first.  Returns the number written. */
size_t tracer_write(FILE *f, int64_t base_ns, const char *pid_tok, const char *tid_tok,
		    int first);
int tracer_active(void);
void tracer_pause(int on);     /* around the profiler's own Python calls */
int tracer_has_events(void);
uint64_t tracer_dropped(void);
int64_t tracer_start_ns(void);

/* ---- step path (collector_step.c) ----------------------------------------- */

/* Collector.step(): METH_NOARGS. */
PyObject *Collector_step(PyObject *self, PyObject *unused);

/* ---- background thread (collector_bg.c, collector_window.c, ...) ---------- */

void *bg_main(void *arg);

/* Trigger poll state of one source (the node channel's mirror or the
 * shared trigger.json). */
typedef struct tpoll {
	char dir[PT_CONTROL_PATH_MAX];   /* the directory holding trigger.json */
	char path[PT_CONTROL_PATH_MAX];
	struct timespec mtime;
	off_t size;
	ino_t ino;
	double last_read;
} tpoll;

void tpoll_init(tpoll *p, const char *dir);
/* Stat trigger.json, read it on change (and every reread_s), disarm or arm. */
void trigger_poll(tpoll *p, double now, double reread_s);
/* The status record of window w in state PT_STATE_* (node channel, and the
 * shared directory unless the agent carries it). */
void write_status(const window *w, const char *state);
int window_work(void);  /* G.mu held; 1: an export was done */
void window_exit(void); /* G.mu held; at shutdown */

/* collector_agent.c: start the node agent unless one runs (local rank 0). */
void ensure_agent(double now);

/* collector_export.c: the raw trace of window w (no GIL); 0, or -1 with
 * w->error set.  torch's export is removed either way. */
int export_trace(window *w);

/* ---- the watch (collector_watch.c; docs/watch.md) ------------------------- */

/* The last collective instance this process entered in each process group,
 * from the watch's latest Flight Recorder read: written by the watch thread
 * only, read by the watchdog without locks (a seqlock: gen is odd while an
 * update runs; a reader copies and retries while gen changed or is odd). */
#define WATCH_PGS 16
#define WATCH_STEPS 1024      /* G.step_us's size, a power of two */
typedef struct watch_last {
	char pg[48];          /* process group name (its process_group[0]) */
	char desc[48];        /* its description, e.g. "default_pg" */
	char name[48];        /* profiling_name, e.g. "gloo:all_reduce" */
	int64_t seq;          /* collective_seq_id */
	int64_t created_us, started_us, done_us;  /* CLOCK_REALTIME µs; -1 none */
	char state[16];       /* "scheduled", "started", "completed" */
} watch_last;

extern struct watch_table {
	uint32_t gen;         /* seqlock generation */
	int n;                /* entries in pg[] */
	watch_last pg[WATCH_PGS];
	int64_t read_us;      /* when the read they come from ran; 0: none yet */
	char fr[16];          /* the Flight Recorder state ("on", "none", ...) */
} WT;

/* GIL held (Collector()): start the watch thread unless PERFTRACKER_WATCH=0. */
void watch_start(void);
/* GIL released: stop it (waits up to 2 s) and remove the watch file. */
void watch_stop(void);
void watch_atfork_child(void);

/* ---- watchdog (collector_watchdog.c) -------------------------------------- */

void wd_start(double hang_s);   /* GIL held (Collector()); PERFTRACKER_WATCHDOG=0: off */
void wd_stop(void);             /* before the interpreter goes; waits for a dump */
void wd_atfork_child(void);
int wd_enabled(void);
double wd_hang_threshold(void); /* seconds without a step that mean stuck; 0: off */
int64_t wd_dumps(void);         /* stack dumps written so far */

#pragma GCC visibility pop

#endif
