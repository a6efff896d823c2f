/*
 * nodechan.h - the node-local channel between the workers of one node and
 * their agent, and the per-node records it feeds in the shared control
 * directory (docs/collector.md, "Node channel").
 *
 * Flow: each worker writes one small record (registration, heartbeat, the
 * status of the trigger it handles) to <node-dir>/w/<id>.json on a local
 * tmpfs; the agent reads them, mirrors trigger.json and stacks/request.json
 * from the shared directory into <node-dir>/, and writes the whole node as
 * agents/<host>.json (the node file) at most once a second, only when
 * something changed.  So the shared file system sees one agent per node,
 * not every worker.  The trigger, status, hang-check and the agent's own
 * auto-profiling read the node files (pt_nodechan_workers), merged with
 * the per-worker records of workers that talk to the shared directory
 * directly (no agent on their node).
 *
 * Thread-safe (no shared state); never prints.  Errors as in control.h.
 */
#ifndef PT_NODECHAN_H
#define PT_NODECHAN_H

#include <stddef.h>
#include <stdint.h>

#include "../util/error.h"
#include "../util/strbuf.h"
#include "control.h"

/* One worker as the node channel carries it: registration, heartbeat, and
 * the status of the trigger it handles (tid, st), when it has one. */
typedef struct pt_node_worker {
	pt_worker_entry e;
	int has_status;
	char tid[PT_CONTROL_TID_MAX];
	pt_wstatus st;
	int summarized;         /* the agent wrote the summary of tid */
	int via_node;           /* readers: the heartbeat came from a node file */
	double node_time;       /* readers: when that node file was written */
} pt_node_worker;

/* ---- where ---------------------------------------------------------------- */

/* The node-local directory of (control dir, host):
 * <base>/perftracker-<uid>/<host>-<16 hex of the control dir's absolute
 * path>, where base is $PERFTRACKER_NODE_DIR, else /dev/shm when it is a
 * writable directory, else $XDG_RUNTIME_DIR, else /tmp.  0, or -1 when the
 * path would not fit in cap. */
int pt_nodechan_path(char *out, size_t cap, const char *dir, const char *host);
/* Its last component alone, "<host>-<16 hex>" (the spool uses the same
 * name, src/control/job.h); and the per-user parent,
 * <base>/perftracker-<uid>.  0, or -1 when it would not fit. */
int pt_nodechan_key(char *out, size_t cap, const char *dir, const char *host);
int pt_nodechan_base(char *out, size_t cap);

/* Create the node directory and its w/ (mode 0700; the per-user parent is
 * created 0700 and must be a real directory owned by this user, not a
 * link).  An existing directory is fine. */
int pt_nodechan_prepare(const char *ndir, pt_error *err);

/* <ndir>/<name> into out; 0 or -1 (too long). */
int pt_nodechan_file(char *out, size_t cap, const char *ndir, const char *name);

/* ---- agent liveness: an flock held by the agent on <ndir>/agent.lock ------ */

/* Take the node's agent lock (LOCK_EX, held until the returned fd is
 * closed or the process dies; O_CLOEXEC).  Returns the fd, -1 when another
 * agent holds it, -2 on error (err filled). */
int pt_nodechan_agent_hold(const char *ndir, pt_error *err);
/* Does an agent hold the node's lock?  A local open + flock probe: no
 * shared-file-system operation, a few microseconds. */
int pt_nodechan_agent_alive(const char *ndir);

/* ---- worker records --------------------------------------------------------- */

/* Write <ndir>/w/<id>.json (w->e.info.id) atomically. */
int pt_nodechan_worker_write(const char *ndir, const pt_node_worker *w, pt_error *err);
/* Remove <ndir>/w/<id>.json (missing is fine). */
void pt_nodechan_worker_remove(const char *ndir, const char *id);
/* Every record in <ndir>/w/, sorted by (host, rank, pid); unreadable ones
 * are skipped.  *out is a new array (x_free). */
int pt_nodechan_workers_read(const char *ndir, pt_node_worker **out, size_t *n, pt_error *err);

/* ---- the node file (agents/<host>.json) -------------------------------------- */

typedef struct pt_node_agent {
	char host[PT_CONTROL_HOST_MAX];
	char node[PT_CONTROL_HOST_MAX];
	int64_t pid;
	double started, time;
	uint64_t processed, failed;
} pt_node_agent;

/* Append the node file's JSON: {"format":"perftracker-agent",<agent>,
 * "workers":[{"worker":{...},"hb":{...},"status":{...}}]}. */
void pt_nodechan_node_json(pt_sb *sb, const pt_node_agent *a, const pt_node_worker *w,
			   size_t n);
/* The JSON of one worker's part without volatile fields (heartbeat time,
 * step, rate): two equal strings mean only progress changed.  Appends. */
void pt_nodechan_worker_key(pt_sb *sb, const pt_node_worker *w);

/* Parse a node file's text: its workers (via_node 1, node_time its
 * "time") as a new array (*out, x_free; NULL and 0 when none).  Entries
 * without a worker id are skipped.  PT_EPARSE / PT_EFORMAT (not a
 * "perftracker-agent" object) with err filled; never reads past len. */
int pt_nodechan_node_parse(const char *buf, size_t len, pt_node_worker **out, size_t *n,
			   pt_error *err);

/* Every worker the control directory knows: those of every node file
 * (agents/<host>.json) and those registered directly (workers/ and
 * heartbeats/, pt_control_workers).  One id listed twice keeps the fresher
 * heartbeat.  Sorted by (host, rank, pid).  *out is a new array (x_free). */
int pt_nodechan_all(const char *dir, pt_node_worker **out, size_t *n, pt_error *err);
/* The same as plain entries: a drop-in for pt_control_workers. */
int pt_nodechan_workers(const char *dir, pt_worker_entry **out, size_t *n, pt_error *err);

/* ---- mirrors the agent keeps in the node directory ---------------------------- */

#define PT_NODECHAN_TRIGGER "trigger.json"         /* copy of <control>/trigger.json */
#define PT_NODECHAN_STACKS_REQUEST "stacks-request.json" /* copy of stacks/request.json */
#define PT_NODECHAN_NODE "node.json"               /* copy of the last node file */

#endif
