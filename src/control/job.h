/*
 * job.h - which training job a process belongs to, and the folders that
 * keep jobs apart on one host (docs/collector.md, "Jobs on one host").
 *
 * Flow: the collector, the agent and the CLI derive the default control
 * directory from the job's identity, so two jobs on one host with the
 * default folders never share a control directory, an agent, a node
 * channel or a spool (the spool is further split by control directory,
 * pt_job_spool_dir).  The CLI on the master finds the job it is meant for
 * from the same environment, from --job, or as the only live one.
 *
 * Thread-safe: pt_job_id and the path helpers only read the environment;
 * pt_job_default_dir fills a static buffer once (pthread_once).  Never
 * prints.
 */
#ifndef PT_CONTROL_JOB_H
#define PT_CONTROL_JOB_H

#include <stddef.h>

#include "../util/error.h"

#define PT_JOB_ID_MAX 160

/* The job's identity from the environment, first found of:
 * $PERFTRACKER_JOB; $TORCHELASTIC_RUN_ID (not "none"); $MASTER_ADDR with
 * $MASTER_PORT as "ADDR:PORT" (every rank of a torch.distributed job has
 * them); "slurm-$SLURM_JOB_ID".  1 with out filled, 0 ("" in out) when the
 * process names no job. */
int pt_job_id(char *out, size_t cap);

/* The folder name of a job id: [A-Za-z0-9._-] kept, anything else '-',
 * never starting with '.', at most 128 bytes. */
void pt_job_dirname(char *out, size_t cap, const char *id);

/* $PERFTRACKER_ROOT, else "/tmp/perftracker": where the default folders
 * live.  Static (environment or constant). */
const char *pt_job_root(void);

/* <root>/jobs/<dirname of id>: the default control directory of job id.
 * 0, or -1 when it would not fit in cap. */
int pt_job_dir(char *out, size_t cap, const char *id);

/* The default control directory: $PERFTRACKER_CONTROL_DIR when set, else
 * the job's (pt_job_dir of pt_job_id) when the process names a job, else
 * <root>/control.  Static; computed once per process. */
const char *pt_job_default_dir(void);

/* The spool folder of one (control directory, host) inside spool root
 * `spool`: <spool>/<host>-<16 hex of the control directory> (the node
 * channel's name, src/control/nodechan.h), so that agents of different
 * jobs sharing a spool root never see, take or clean each other's traces.
 * 0, or -1 when it would not fit. */
int pt_job_spool_dir(char *out, size_t cap, const char *spool, const char *dir,
		     const char *host);

/* One job the master could mean: its control directory and its live
 * workers. */
typedef struct pt_job_entry {
	char dir[4096];
	char id[PT_JOB_ID_MAX];   /* "" for <root>/control (no job named) */
	size_t live;              /* live workers (heartbeat within stale_s) */
	size_t registered;
} pt_job_entry;

/* Every control directory under the default root (<root>/control and
 * <root>/jobs/<job>) with its live workers at time now; those without a
 * live worker are listed too (live 0).  *out is a new array (x_free), NULL
 * when there are none.  PT_ENOMEM. */
int pt_job_list(pt_job_entry **out, size_t *n, double now, double stale_s, pt_error *err);

/* The control directory a CLI command means when none was given: `job`
 * (--job) when not NULL; else pt_job_default_dir() when the environment
 * names one ($PERFTRACKER_CONTROL_DIR or a job); else the only default
 * directory with live workers, or <root>/control when none has any.
 * Several jobs live: PT_EINVAL naming them and how to choose.  out gets
 * the directory. */
int pt_job_resolve_dir(const char *job, char *out, size_t cap, double now, pt_error *err);

#endif
