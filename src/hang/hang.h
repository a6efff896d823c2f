/*
 * hang.h - hang diagnosis: which worker is stuck, and where.
 *
 * Flow: each collector's watchdog writes its process's Python stacks to
 * <control>/stacks/<worker>.txt (header + CPython faulthandler text); the
 * master (trigger on a hang, `perftracker hang-check`) reads them with the
 * workers' liveness; stacks.c parses them (the format is in stacks.h);
 * this module groups the workers by the normalised stack of their
 * training thread, names the odd ones out and builds the report's "Hang"
 * section (docs/hang.md).  Never prints; one object per thread.
 */
#ifndef PT_HANG_H
#define PT_HANG_H

#include <stddef.h>
#include <stdint.h>

#include "../model/stacks.h"
#include "../report/report.h"
#include "../util/error.h"
#include "../util/strbuf.h"

/* ---- normalisation ------------------------------------------------------------ */

enum { PT_HANG_USER = 0, PT_HANG_LIBRARY = 1, PT_HANG_COLLECTOR = 2 };

/* Whose code a file is: the collector's own (a perftracker or
 * c4d_perftracker_collector package file), a library (under site-packages
 * or dist-packages, the standard library lib/pythonX.Y/, "<frozen ...>"),
 * or the user's (anything else). */
int pt_hang_file_kind(const char *file);

/* The file as it is grouped: the part after the last "site-packages/" or
 * "dist-packages/", or after "lib/pythonX.Y/", else the whole path (the
 * same library installed in different places groups together).  Returns a
 * pointer into file. */
const char *pt_hang_short_file(const char *file);

/* Append "<short file>: <func>" (no line number) to out. */
void pt_hang_frame_name(const pt_hang_frame *f, pt_sb *out);

/* The grouping key of a thread: its frames outermost first, the
 * collector's own frames dropped, each as pt_hang_frame_name, joined with
 * "|" (the Python-stack form of the report).  "" when no frame is left.
 * Returns a new string (x_free), NULL when out of memory. */
char *pt_hang_stack_key(const pt_hang_thread *t);

/* The frame named for a worker: the innermost frame of user code, else the
 * innermost frame that is not the collector's, else NULL. */
const pt_hang_frame *pt_hang_user_frame(const pt_hang_thread *t);
/* The innermost frame that is not the collector's, NULL when none. */
const pt_hang_frame *pt_hang_inner_frame(const pt_hang_thread *t);

/* ---- analysis ------------------------------------------------------------------ */

/* Worker states in the report. */
enum {
	PT_HANG_RUNNING = 0,  /* alive, stepped within the hang timeout */
	PT_HANG_HUNG,         /* alive (heartbeat), no step for the hang timeout */
	PT_HANG_DEAD,         /* process gone (checked on its own machine) */
	PT_HANG_LOST,         /* no heartbeat for the stale time (another machine) */
	PT_HANG_EXITED,       /* unregistered: ended normally */
};
const char *pt_hang_state_name(int state);

typedef struct pt_hang_worker {
	const char *id;           /* "<host>_<rank>_<pid>"; the report adds ".json" */
	const char *host;
	int64_t rank, pid;
	int state;                /* PT_HANG_* */
	int64_t step;             /* last step count known */
	double since_step;        /* seconds since that step, < 0 unknown */
	const pt_hang_dump *dump; /* NULL: no stacks */
	const char *stacks;       /* how the stacks were obtained ("on request", ...) */
} pt_hang_worker;

typedef struct pt_hang_options {
	double hang_timeout;      /* seconds without a step that make a worker hung */
	const char *detected_by;  /* e.g. "trigger <id>" or "hang-check" (NULL: "") */
	double now;               /* epoch seconds of the check */
} pt_hang_options;

typedef struct pt_hang_group {
	char *key;                /* pt_hang_stack_key of the members' training thread */
	char *function;           /* name of the innermost user frame ("" none) */
	char *where;              /* name of the innermost frame ("" none) */
	size_t *members;          /* indices into the worker array, in input order */
	size_t n;
	int64_t min_step, max_step;
	int suspect;
} pt_hang_group;

/* A rank that never entered the collective the others wait in, from the
 * Flight Recorder's last instances in the workers' dumps (issue 32). */
typedef struct pt_hang_missing {
	size_t worker;            /* index into the worker array */
	char pg[48], desc[48], name[48];
	int64_t seq;              /* the instance the others entered */
	int64_t last;             /* the last this worker entered in that group */
	size_t nwaiting;          /* the workers that entered it */
	char site[512];           /* their call site, "file:line in func" ("" none) */
} pt_hang_missing;

typedef struct pt_hang_result {
	int hung;                 /* some live worker is hung */
	pt_hang_group *groups;    /* suspects first, then larger groups, then by key */
	size_t ngroups;
	size_t *suspects;         /* worker indices: dead/lost, silent and behind,
	                             minority groups (smallest first), silent,
	                             then workers behind */
	size_t nsuspects;
	char *explanation;        /* one or two plain sentences */
	char **function;          /* per worker: innermost user frame name or NULL */
	size_t nworkers;          /* length of function */
	pt_hang_missing *missing; /* ranks that never entered the others' collective */
	size_t nmissing;
} pt_hang_result;

/* Per process group in the live workers' dumps, the highest sequence
 * number entered; a live worker whose Flight Recorder was read and whose
 * last instance there is lower never entered it (one entry per worker,
 * the first group found).  Fills res->missing; 0, or -1 out of memory.
 * Called by pt_hang_analyze (hang_coll.c). */
int pt_hang_collectives(const pt_hang_worker *w, size_t n, pt_hang_result *res);

/* What the master saw of one worker (src/cli/hangcheck.c reads it from the
 * control directory): its registration, heartbeat and liveness, and the
 * stacks it gave. */
typedef struct pt_hang_seen {
	const char *id, *host;
	int64_t rank, pid;
	int exited;               /* unregistered: ended normally */
	int dead;                 /* its process is gone (checked on its own machine) */
	int alive;                /* a heartbeat within the stale time */
	int answered;             /* its stacks came on request */
	int has_hb;
	int64_t hb_step;          /* the heartbeat's step count */
	double hb_step_time;      /* epoch seconds of that step (0: none yet) */
	double hb_time;           /* epoch seconds the heartbeat was written */
	double started;           /* epoch seconds it registered */
	const pt_hang_dump *dump; /* its stacks (on request or the watchdog's own
	                             dump of this stall), NULL none */
} pt_hang_seen;

/* Worker s as the analysis takes it, decided at epoch seconds now: its
 * state (exited, dead, lost, running, hung: no step for hang_timeout
 * seconds), its last step (the dump's when more precise than the
 * heartbeat) and the seconds since (as long as it has run when it never
 * stepped; -1 unknown).  note (cap bytes) says where its stacks came from,
 * unless the caller already wrote there for a running worker that did not
 * answer (s->answered 0); w->stacks points at it.  w's strings are s's. */
void pt_hang_classify(const pt_hang_seen *s, double now, double hang_timeout, pt_hang_worker *w,
		      char *note, size_t cap);

/* Group the live workers with stacks by key.  Suspects are the dead and
 * lost workers, then, when some worker is hung, the silent ones behind
 * (hung, no dump while others have one, step behind the hung maximum),
 * the members of the groups smaller than the largest (smallest first), the
 * other silent ones, then the hung workers whose step is behind the other
 * hung workers' maximum when they are not more than those at it.  PT_OK or PT_ENOMEM.  res is zeroed first; free with
 * pt_hang_result_free. */
int pt_hang_analyze(const pt_hang_worker *w, size_t n, const pt_hang_options *o,
		    pt_hang_result *res, pt_error *err);
void pt_hang_result_free(pt_hang_result *res);

/* Add the "Hang" object to parent (an object): "hung", "explanation",
 * "suspect_workers", "groups", "workers", "hang timeout (s)", "detected by",
 * "time" (docs/hang.md).  Errors are remembered by the report (oom). */
void pt_hang_add_section(pt_report *r, pt_rv *parent, const pt_hang_worker *w, size_t n,
			 const pt_hang_options *o, const pt_hang_result *res);

/* A whole report for a hang: the five seed sections (empty), "workers"
 * (with each worker's state as "error": nobody was profiled), "findings"
 * (one per suspect, category "Hang") and "Hang".  NULL on failure (err). */
pt_report *pt_hang_report(const pt_hang_worker *w, size_t n, const pt_hang_options *o,
			  const pt_hang_result *res, pt_error *err);

#endif
