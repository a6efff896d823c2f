/*
 * control.h - the control-directory protocol: how the collector in every
 * worker, the node agent and the trigger command talk to each other.
 *
 * Flow: workers register and heartbeat here; `perftracker --trigger-on`
 * writes trigger.json; workers arm, profile and drop raw traces in the
 * node-local spool and report status here; the agent of each node writes
 * summaries here; the trigger reads them and diagnoses.  The transport is a
 * directory, local or on a shared file system (NFS, CPFS, Lustre): every
 * record is written to a temporary name in the same directory and renamed,
 * so a reader never sees half a file, and the only lock is a file created
 * with O_EXCL (reliable on NFSv3 and later).  Layout: docs/collector.md.
 *
 * All functions are thread-safe (no shared state) and never print.  They
 * return PT_OK or a pt_status with err filled (subject = the path).
 */
#ifndef PT_CONTROL_H
#define PT_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include "../util/error.h"

#define PT_CONTROL_DEFAULT_DIR "/tmp/perftracker/control"
#define PT_CONTROL_DEFAULT_SPOOL "/tmp/perftracker/spool"
#define PT_CONTROL_DEFAULT_OUTPUT "/tmp/perftracker/output"
#define PT_CONTROL_VERSION 1

#define PT_CONTROL_PATH_MAX 4096
#define PT_CONTROL_HOST_MAX 256
#define PT_CONTROL_ID_MAX 320  /* "<host>_<rank>_<pid>" */
#define PT_CONTROL_TID_MAX 64  /* trigger id */
/* Largest record we read back (registrations, heartbeats, trigger, status). */
#define PT_CONTROL_RECORD_MAX ((size_t)16 << 20)

/* Raw-trace policy of a trigger (--save-raw-trace). */
enum { PT_RAW_NONE = 0, PT_RAW_MASTER = 1, PT_RAW_ALL = 2 };
/* "none"/"master"/"all" -> PT_RAW_*, or -1. */
int pt_control_raw_policy(const char *s);
const char *pt_control_raw_name(int policy);

/* Where things are (<root> is $PERFTRACKER_ROOT, else /tmp/perftracker:
 * the PT_CONTROL_DEFAULT_* paths): the control directory from
 * $PERFTRACKER_CONTROL_DIR,
 * else the job's (src/control/job.h: <root>/jobs/<job> when the
 * environment names a job, else <root>/control); the node-local spool
 * root from $PERFTRACKER_SPOOL_DIR or <root>/spool (each control directory
 * and host uses its own folder in it, pt_job_spool_dir).  The returned
 * strings are static. */
const char *pt_control_default_dir(void);
const char *pt_control_default_spool(void);
/* <root>/output: where runs go without --output-dir.  Static. */
const char *pt_control_default_output(void);
/* The host name workers, agents and files are named by: $PERFTRACKER_HOST
 * when set (tests simulate several nodes on one machine with it), else
 * gethostname().  The node name is always gethostname(): pids are only
 * checked for liveness on the node that wrote them. */
void pt_control_hostname(char *host, size_t cap);
void pt_control_nodename(char *node, size_t cap);

/* Seconds since the epoch (CLOCK_REALTIME) as a double. */
double pt_control_now(void);

/* ---- files ---------------------------------------------------------------- */

/* mkdir -p path (mode 0775 before umask), refusing (PT_EPERM, one line
 * naming the directory) a directory another user could write through: the
 * directory itself, and every one below the first directory we own, must
 * be ours (those in between may be root's); one above ours must not be
 * writable by every user unless it is root's and sticky (/tmp); a symbolic
 * link counts as its owner's.  Group-writable directories of ours are fine
 * (a job's group on a shared file system).  Every user of the control and
 * spool directories calls this on them before writing there
 * (docs/collector.md, "Directories and other users").  The walk is
 * pt_file_mkdirs (src/util/file.h) with these rules as its judge. */
int pt_control_mkdirs(const char *path, pt_error *err);

/* Write buf[0..len) to path atomically (pt_file_write_atomic: a new
 * temporary file in the same directory with an unguessable name, O_EXCL,
 * O_NOFOLLOW, then rename over path), without fsync: records are rewritten
 * on a period (the fsync rule in src/util/file.h).
 * Creates the parent directory when missing.  On failure (ENOSPC, EACCES,
 * ...) the temporary file is removed and path is unchanged. */
int pt_control_write_atomic(const char *path, const void *buf, size_t len, pt_error *err);
/* The same, fsync'ed before the rename: for results (a summary the agent
 * publishes while it deletes the raw trace). */
int pt_control_write_durable(const char *path, const void *buf, size_t len, pt_error *err);

/* Read a whole regular file of at most max bytes into a new NUL-terminated
 * buffer (*out, free with x_free; NULL on failure) with pt_file_read_fd.
 * ENOENT is PT_EIO with err->msg "no such file", anything but a regular
 * file PT_EIO "not a regular file"; err names path. */
int pt_control_read_file(const char *path, size_t max, char **out, size_t *len, pt_error *err);

/* Is this entry a record name (not hidden, not a temporary file)? */
int pt_control_is_record(const char *name);

/* ---- workers ------------------------------------------------------------- */

typedef struct pt_worker_info {
	char id[PT_CONTROL_ID_MAX];      /* "<host>_<rank>_<pid>" */
	char host[PT_CONTROL_HOST_MAX];
	char node[PT_CONTROL_HOST_MAX];  /* gethostname() of the worker's machine */
	int64_t rank, local_rank, world_size, local_world_size, pid;
	double started;                   /* epoch seconds */
} pt_worker_info;

/* Worker id and raw-trace base name: "<host>_<rank>_<pid>". */
void pt_control_worker_id(char *out, size_t cap, const char *host, int64_t rank, int64_t pid);

/* The fields of a worker record (workers/<id>.json, or the "worker" member
 * of a node file's entry) from its JSON object; absent numbers read as -1
 * (started 0), strings are cut to their buffers.  0, or -1 (w zeroed but
 * for what was read) when it has no id.  Thread-safe. */
struct pt_json;
int pt_control_worker_info_read(const struct pt_json *j, pt_worker_info *w);

/* workers/<id>.json */
int pt_control_register(const char *dir, const pt_worker_info *w, pt_error *err);
/* Remove a worker's registration and heartbeat (missing files are fine). */
int pt_control_unregister(const char *dir, const char *id, pt_error *err);

/* Collector states, as written in heartbeats and status records. */
#define PT_STATE_IDLE "idle"
#define PT_STATE_ARMED "armed"
#define PT_STATE_PROFILING "profiling"
#define PT_STATE_EXPORTING "exporting"
#define PT_STATE_TRACED "traced"        /* raw trace in the spool */
#define PT_STATE_FAILED "failed"
#define PT_STATE_LATE "late"            /* saw the trigger after its start step:
                                           not profiled, waits for a re-arm */
#define PT_STATE_QUIET "quiet"          /* collector disabled after an error */

typedef struct pt_heartbeat {
	int64_t step;          /* number of step() calls so far */
	double step_time;      /* epoch seconds of the last step() (0: none yet) */
	double time;           /* epoch seconds when the heartbeat was written */
	double rate;           /* recent steps per second, 0 unknown */
	char state[16];        /* PT_STATE_* */
	char trigger[PT_CONTROL_TID_MAX]; /* trigger being handled, "" none */
} pt_heartbeat;

/* heartbeats/<id>.json */
int pt_control_heartbeat_write(const char *dir, const char *id, const pt_heartbeat *h,
			       pt_error *err);
int pt_control_heartbeat_read(const char *dir, const char *id, pt_heartbeat *h, pt_error *err);

typedef struct pt_worker_entry {
	pt_worker_info info;
	pt_heartbeat hb;
	int has_hb;
} pt_worker_entry;

/* Every registered worker with its heartbeat, sorted by (host, rank, pid).
 * Unreadable records are skipped (they may be mid-rename on NFS).
 * *out is a new array (x_free); *n its length. */
int pt_control_workers(const char *dir, pt_worker_entry **out, size_t *n, pt_error *err);

/* Is the worker alive as seen at time now?  Alive when its heartbeat was
 * written within stale_s seconds and, when it runs on this machine (its
 * node equals local_node), its pid exists. */
int pt_control_worker_alive(const pt_worker_entry *w, double now, double stale_s,
			    const char *local_node);

/* Is the worker's process known to be gone?  1 only when it ran on this
 * machine (its node equals local_node) and its pid no longer exists (or is
 * a zombie); workers of other machines are never "dead", only stale. */
int pt_control_worker_dead(const pt_worker_entry *w, const char *local_node);

/* ---- trigger ------------------------------------------------------------- */

#define PT_TRIGGER_ACTIVE "active"
#define PT_TRIGGER_DONE "done"

typedef struct pt_trigger {
	char id[PT_CONTROL_TID_MAX];    /* "<YYYYmmdd-HHMMSS>-<4 hex>" */
	char state[16];                 /* PT_TRIGGER_* */
	int64_t start_step;             /* first profiled step (absolute step count) */
	int64_t steps;                  /* number of steps profiled */
	int64_t wait;                   /* --wait as given */
	int save_raw;                   /* PT_RAW_* */
	char run_dir[PT_CONTROL_PATH_MAX]; /* <output-dir>/<timestamp> */
	char raw_dir[PT_CONTROL_PATH_MAX]; /* <run_dir>/raw_trace */
	double created, deadline;       /* epoch seconds */
	char host[PT_CONTROL_HOST_MAX]; /* where the trigger command runs */
	char node[PT_CONTROL_HOST_MAX]; /* gethostname() there (written by
	                                   pt_control_trigger_write itself) */
	int64_t pid;
	char **workers;                 /* expected worker ids (owned) */
	size_t nworkers;
	char reason[512];               /* why it was started ("" by hand; the
	                                   agent's auto-profiling says why) */
	int64_t nsys_gpu_metrics;       /* --nsys-gpu-metrics: the agents capture
	                                   GPU metrics with nsys at this rate (Hz)
	                                   during the window; 0 no (the default,
	                                   and what a trigger.json without the
	                                   member reads as) */
	/* Agreement on the steps (docs/collector.md, "The trigger"): a worker
	 * that sees round `round` after its start step does not profile while
	 * round < rounds: it reports PT_STATE_LATE and the master re-arms
	 * every worker for a later start step under a new id (the rounds of
	 * one trigger share first_id and run_dir).  In the last round (and in
	 * a trigger.json without the members: round 0, rounds 0) a late
	 * worker profiles from its next step and says so. */
	int64_t round, rounds;
	char first_id[PT_CONTROL_TID_MAX]; /* the first round's id ("" = id) */
} pt_trigger;

/* trigger.json.  Reading a missing trigger is PT_OK with t->id[0] == 0.
 * An "active" trigger whose owner ran on this machine (its node equals
 * ours) and is gone (killed, even with SIGKILL) reads as "done": nobody
 * arms or waits for a trigger that no one will collect. */
int pt_control_trigger_write(const char *dir, const pt_trigger *t, pt_error *err);
int pt_control_trigger_read(const char *dir, pt_trigger *t, pt_error *err);
/* Free t->workers (the struct itself is the caller's). */
void pt_control_trigger_clear(pt_trigger *t);
/* Add a worker id to t->workers; PT_ENOMEM on failure. */
int pt_control_trigger_add_worker(pt_trigger *t, const char *id);
/* A fresh trigger id from the time and 16 random bits. */
void pt_control_trigger_id(char *out, size_t cap, double now);

/* ---- locks --------------------------------------------------------------- */

/* Create path with O_EXCL holding content.  Returns PT_OK when acquired; 1
 * when another holder has it (its content copied into holder, up to cap
 * bytes, NUL-terminated); an error code otherwise. */
int pt_control_lock(const char *path, const char *content, char *holder, size_t cap,
		    pt_error *err);
/* Remove the lock (a missing lock is fine). */
int pt_control_unlock(const char *path, pt_error *err);

/* Locks hold a JSON object with at least "node" and "pid", and "deadline"
 * where one applies ({"id","host","node","pid","created","deadline"} for the
 * trigger lock).  A lock is stale when its deadline has passed, when it was
 * taken on this machine (node equals local_node) by a process that no longer
 * exists, or when it cannot be parsed and is older than 60 s (a writer
 * that died between create and write). */
int pt_control_lock_stale(const char *path, const char *holder_json, double now,
			  const char *local_node);

/* ---- per-trigger status, traces, summaries ------------------------------- */

typedef struct pt_wstatus {
	char state[16];                  /* PT_STATE_* */
	char host[PT_CONTROL_HOST_MAX];
	int64_t rank;
	int64_t start_step, end_step;    /* steps actually profiled [start, end) */
	double time;
	char trace[PT_CONTROL_PATH_MAX]; /* raw trace path (state traced) */
	char error[512];                 /* state failed */
} pt_wstatus;

/* status/<tid>/<wid>.json */
int pt_control_status_write(const char *dir, const char *tid, const char *wid,
			    const pt_wstatus *s, pt_error *err);
int pt_control_status_read(const char *dir, const char *tid, const char *wid, pt_wstatus *s,
			   pt_error *err);

/* Names (without ".json") of the records in <dir>/<sub>/<tid>/, sorted.
 * *names is a new array of new strings: free with pt_control_names_free. */
int pt_control_list(const char *dir, const char *sub, const char *tid, char ***names,
		    size_t *n, pt_error *err);
void pt_control_names_free(char **names, size_t n);

/* Path helpers: <dir>/<sub>/<tid>/<wid>.json and friends.  Return 0, or -1
 * when the result would not fit in cap. */
int pt_control_record_path(char *out, size_t cap, const char *dir, const char *sub,
			   const char *tid, const char *wid);
int pt_control_path(char *out, size_t cap, const char *dir, const char *name);

/* Remove <dir>/<sub>/<tid>/ and the records in it (not recursive beyond). */
int pt_control_remove_dir(const char *dir, const char *sub, const char *tid, pt_error *err);

/* ---- agents --------------------------------------------------------------- */

/* agents/<host>.lock and agents/<host>.json (heartbeat). */
int pt_control_agent_lock_path(char *out, size_t cap, const char *dir, const char *host);
/* agents/<host>.json, the agent's heartbeat. */
int pt_control_agent_hb_path(char *out, size_t cap, const char *dir, const char *host);
/* Is an agent for host running?  Yes when its lock exists and is not stale
 * (pid alive when it runs on this machine, else its heartbeat is younger
 * than stale_s). */
int pt_control_agent_running(const char *dir, const char *host, double now, double stale_s);

/* ---- stacks (hang diagnosis, docs/hang.md) ------------------------------- */

/* The collector's watchdog thread writes the Python stacks of every thread
 * of its process to stacks/<wid>.txt: on request (a new id in
 * stacks/request.json) and by itself when no step came for a while.  The
 * file's format and its parser: src/model/stacks.h. */
#define PT_STACKS_REQUEST_MAX 4096   /* largest request record the watchdog reads */

/* <dir>/stacks/<wid>.txt, <dir>/stacks/request.json, <dir>/stacks.  0, or
 * -1 when the result would not fit in cap.  (The watchdog writes its dump
 * to a new, unguessable temporary name first, as pt_file_create_tmp.) */
int pt_control_stacks_path(char *out, size_t cap, const char *dir, const char *wid);
int pt_control_stacks_request_path(char *out, size_t cap, const char *dir);
int pt_control_stacks_dir(char *out, size_t cap, const char *dir);

/* Ask every worker's watchdog for its stacks: writes stacks/request.json
 * {"format":"perftracker-stack-request","id","time","host","pid"} with a
 * fresh id (copied to id, cap bytes).  Watchdogs answer within their poll
 * interval (250 ms by default) and ignore requests older than 60 s. */
int pt_control_stacks_request(const char *dir, char *id, size_t cap, pt_error *err);

/* The request id in a request record's text (what the watchdog does without
 * allocating): copies the "id" string value to id (cap bytes) and the "time"
 * to *time; 0 when both were found, -1 otherwise. */
int pt_control_stacks_request_parse(const char *text, char *id, size_t cap, double *time);

#endif
