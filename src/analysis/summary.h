/*
 * summary.h - one worker's behaviour patterns: the output of `summarize`
 * and the only thing the master reads (docs/design.md "Behaviour pattern").
 *
 * Flow: pt_store (src/model) --pt_summary_build--> pt_summary
 *       --pt_summary_write--> summary JSON (a few KB to a few MB)
 *       --pt_summary_read--> pt_summary --> src/diagnose.
 * A pt_summary owns all its strings; worker, file, host, backend and device
 * are never NULL ("" when unknown).  Thread-safe for distinct summaries.
 */
#ifndef PT_SUMMARY_H
#define PT_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "../model/store.h"
#include "../util/error.h"
#include "../util/strbuf.h"
#include "../util/api.h"

PT_API_BEGIN

#define PT_SUMMARY_FORMAT "perftracker-summary"
/* Version 2 added "collectives", version 3 "critical_path", version 4
 * "timeline", version 5 "p2p" (docs/summary.md); older versions still read (without them:
 * no lockstep analysis, no critical path, no spans on the timeline, no p2p matrix for
 * that worker). */
#define PT_SUMMARY_VERSION 5
#define PT_SUMMARY_VERSION_MIN 1

/* Link throughput inside the kernels of one communication pattern, from
 * hardware samples (docs/hardware.md "The join").  Percentages are of the
 * link's capacity; avg is the mean of all samples inside the kernels, std
 * and peak the sample-weighted means of each kernel's own std and maximum. */
typedef struct pt_hw_link {
	char group[48];     /* "<link> <algorithm> <send|recv>", e.g. "nvlink ring send" */
	double avg_pct, std_pct, peak_pct;
	uint64_t samples;   /* samples inside the kernels */
	uint64_t kernels;   /* kernels with at least one sample */
} pt_hw_link;

/* GPU state during the worker's compute kernels (union of their intervals,
 * per GPU the kernels ran on), from hardware samples; -1 = not sampled. */
typedef struct pt_hw_gpu {
	uint64_t samples;        /* 0: no samples covered the compute kernels */
	double sm_active_pct;    /* mean SM activity (%) */
	double gpu_util_pct;     /* mean NVML utilisation / nsys GR Active (%) */
	double sm_clock_mhz;     /* mean SM clock */
	double sm_clock_max_mhz; /* highest SM clock sampled over the whole file */
	double throttle_frac;    /* share of samples with a throttle reason other than idle */
	uint64_t throttle_reasons; /* OR of those reasons (NVML bitmask) */
	double temperature_c, power_w;
} pt_hw_gpu;

/* All fields unknown: samples 0, the rest -1 (reasons 0). */
void pt_hw_gpu_init(pt_hw_gpu *g);

/* The behaviour pattern of one function on one worker.  Times in ms. */
typedef struct pt_pattern {
	/* What the comparison of every worker reads comes first: a digest's
	 * patterns, as the master holds them, end at PT_PATTERN_HOT
	 * (pt_summary.pat_stride). */
	char *key;          /* function key (docs/design.md): kernel name+grid|block,
	                       op/runtime name, or Python stack "a|b|c" */
	uint64_t count;
	double total_ms;    /* sum of durations, overlap included */
	double median_ms;
	double bottleneck;  /* owned time / window (priority rule), in [0,1] */
	double exec_ratio;  /* total_ms / window, overlap included (may exceed 1) */
	double busbw_gbps;  /* communication: algbw times the nccl-tests factor for
	                       the collective (0 unknown) */
	uint32_t group;     /* communication: group size, 0 unknown */
	uint8_t cls;        /* pt_class */
	uint8_t kind;       /* pt_kind of the events (most common one) */
	uint8_t role;       /* communication: pt_comm_role (src/model/commkind.h),
	                       0 (PT_ROLE_NONE) for other classes */
	/* ---- PT_PATTERN_HOT: below, what only a full summary has ---- */
	double p10_ms, p90_ms, mad_ms;
	/* Communication only (0 when unknown): */
	double bytes;       /* median message bytes per call */
	double algbw_gbps;  /* median bytes / duration */
	/* Compute kernels whose trace records launch efficiency (Kineto's
	 * "est. achieved occupancy %", "blocks per SM", "registers per
	 * thread", "shared memory"): medians over the calls that carry each;
	 * eff_n calls carried any, 0 none (then the four are 0). */
	uint64_t eff_n;
	double occupancy_pct, blocks_per_sm, registers, shared_mem;
	/* Per step of the summary (nsteps values, ms of this function's calls
	 * that start in each step; Python stacks inclusive), owned; NULL when
	 * the worker has fewer than 2 steps or the pattern is too small to
	 * matter (docs/summary.md "Steps"). */
	double *step_ms;
	size_t nstep_ms;    /* values in step_ms (== the summary's nsteps when valid) */
	/* Communication kernels with hardware samples (owned; NULL/0 none). */
	pt_hw_link *hw;
	uint32_t nhw;
} pt_pattern;

/* The bytes of a pattern a digest read by pt_summary_read_file_slim holds
 * (64): the fields before p10_ms. */
#define PT_PATTERN_HOT offsetof(pt_pattern, p10_ms)

/* One collective instance as this worker saw it (docs/summary.md
 * "collectives", docs/design.md "Lockstep"): what the master needs to match it
 * with the other members, find its clock offset and who waited. */
typedef struct pt_coll {
	uint32_t chan;       /* index into coll_chans (its communicator stream) */
	uint32_t name;       /* index into coll_names (kernel or op name) */
	double arrive_us;    /* entry (kernel or op start), µs after window_start_us */
	double end_us;       /* end, µs after window_start_us */
	uint32_t pg;         /* index into coll_pgs (its process group), UINT32_MAX unknown */
	int64_t seq;         /* its sequence number in that group, -1 unknown */
} pt_coll;

/* Time one function (pattern) took in the span before one instance: from
 * the end of the previous instance of the main channel (the window start
 * for the first) to this one's arrival. */
typedef struct pt_coll_cause {
	uint32_t inst;       /* index into coll */
	uint32_t pat;        /* index into patterns */
	double ms;           /* whole µs in the file */
} pt_coll_cause;

/* Kinds of time on a critical path (docs/summary.md "Critical path");
 * PT_CP_WAIT (waiting on another worker) is only filled by the master. */
enum { PT_CP_CPU = 0, PT_CP_COMPUTE, PT_CP_COMM, PT_CP_MEMORY, PT_CP_LAUNCH, PT_CP_GAP,
       PT_CP_WAIT, PT_CP_NKINDS };
/* The name of kind k ("cpu", "compute", "communication", "memory", "launch",
 * "gap", "wait"); "" out of range. */
const char *pt_cp_kind_name(int k);

/* Where a thread blocked on the path and what it waited for. */
typedef struct pt_cp_wait {
	char *span;          /* the annotation (or function) it blocked in, owned */
	char *call;          /* the blocking call (or the waiting frame), owned */
	char *target;        /* GPU event key, or "thread <tid>" for a join, owned */
	char *behind;        /* what the target was queued behind, owned; NULL none */
	double ms;           /* path time credited to the blocking call */
	int64_t target_stream, behind_stream;  /* GPU stream ids, -1 none */
} pt_cp_wait;

#define PT_CP_WAITS 3

typedef struct pt_cp_step {
	int64_t number;      /* ProfilerStep number, -1 for a window without steps */
	double start_ms;     /* start, ms after the window's start */
	double ms;
	double split[PT_CP_NKINDS];  /* ms by kind, sums to ms */
	pt_cp_wait waits[PT_CP_WAITS];
	size_t nwaits;
	uint32_t *inst;      /* collective instances on the path (index into coll), owned */
	double *inst_ms;     /* ms of the path inside each, owned */
	size_t ninst;
} pt_cp_step;

/* A function kept with its path time in every step. */
typedef struct pt_cp_func {
	char *key;           /* owned */
	uint8_t kind;        /* pt_kind of its events */
	double *ms;          /* one per step (the path's nsteps), owned */
	double *self_ms;     /* per step, the time at its own frames (exclusive,
	                        and the waits of a blocking call), owned; NULL
	                        when the summary has none */
	double *longest_ms;  /* GPU events: per step, the longest one on the
	                        path; NULL for CPU functions and older summaries */
} pt_cp_func;

typedef struct pt_cpath {
	pt_cp_step *steps;
	size_t nsteps;
	pt_cp_func *funcs;   /* by total path ms, descending */
	size_t nfuncs;
} pt_cpath;

/* What the timeline draws of a worker without its raw trace (version 4,
 * src/analysis/spans.h): integer µs after the window start. */
typedef struct pt_sum_tl {
	char **names;        /* span names, owned */
	size_t nnames;
	int64_t *spans;      /* 4 per span: step index, start, duration, name index */
	size_t nspans;
	int64_t *gpu;        /* 2 per stretch when a compute kernel ran: start, end */
	size_t ngpu;
} pt_sum_tl;

/* One peer's point-to-point transfers on this worker (version 5,
 * src/analysis/p2p.h): sends to it or receives from it. */
typedef struct pt_p2p_row {
	int64_t peer;        /* its rank as recorded */
	uint8_t dir;         /* PT_P2P_SEND or PT_P2P_RECV (model/commkind.h) */
	uint64_t count;      /* transfers */
	uint64_t bytes;      /* their bytes, where recorded (0 unknown) */
	uint64_t nbytes;     /* transfers with bytes */
	double ms;           /* their time, all of them */
	double ms_bytes;     /* the time of those with bytes (bandwidth's) */
	double wall_ms;      /* the union of those with bytes over time (they may overlap) */
} pt_p2p_row;

struct pt_samples;

typedef struct pt_summary {
	int version;
	char *worker;       /* worker id: the raw trace's file name */
	char *file;         /* path as given */
	char *host;         /* from <host>_<rank>_<pid>.json, or "" */
	int64_t rank;       /* distributedInfo.rank, else from the name, else -1 */
	int64_t pid;        /* from the name or the trace's main pid, else -1 */
	int64_t world_size; /* -1 unknown */
	char *backend;      /* "" unknown */
	char *device;       /* GPU name, "" none */
	char *torch;        /* torch version (the trace's "perftracker" member), NULL unknown */
	char *error;        /* non-NULL: the trace could not be read; nothing below is valid */
	char *warning;      /* first reader warning or NULL */
	uint64_t nwarnings; /* reader warnings in all (events skipped or repaired) */
	int truncated;

	/* Window (docs/design.md "Window"). */
	double window_start_us;  /* absolute µs (may be large) */
	double window_ms;
	int window_from_steps;   /* 1: ProfilerStep spans, 0: span of timed events */
	size_t nsteps;
	int64_t *step_numbers;
	double *step_ms;

	/* GPU busy: time with >= 1 kernel (compute or communication) running /
	 * window; the seed's "GPU utilization", what NVML's utilisation
	 * measures.  GPU compute utilisation: compute kernels only (-1 when
	 * the summary predates it).  docs/summary.md "Utilization". */
	double gpu_util;
	double gpu_compute_util;
	/* Where the GPU time goes (breakdown.h); owned, NULL when the summary
	 * has none. */
	struct pt_breakdown *breakdown;
	double class_ms[PT_C_COUNT];     /* owned time by class; sums to window_ms */
	uint64_t nevents;

	pt_pattern *patterns;  /* sorted by class (desc) then bottleneck (desc) */
	size_t npatterns;

	/* Hardware samples joined to the kernels (docs/hardware.md); hw_source
	 * NULL when none covered this worker. */
	char *hw_source;       /* "nvml+proc", "nsys", ... */
	pt_hw_gpu hw_gpu;
	/* Compact timelines of the samples over the window for PerfDisplay
	 * (docs/hardware.md "Timelines"; the agent fills it): owned, NULL none. */
	struct pt_samples *hw_series;

	/* Collective instances in the window, per channel in order (version
	 * >= 2; all NULL/0 for version 1 or a worker without collectives). */
	char **coll_chans;     /* owned, e.g. "nccl:0" (GPU stream), "cpu:0" (thread) */
	size_t ncoll_chans;
	char **coll_names;     /* owned */
	size_t ncoll_names;
	pt_coll *coll;
	size_t ncoll;
	pt_coll_cause *coll_cause;  /* by inst, then ms desc */
	size_t ncoll_cause;
	char **coll_pgs;       /* owned: process group names of the instances with a seq */
	size_t ncoll_pgs;

	/* The critical path per step (version >= 3; NULL for older summaries
	 * and traces without CPU frames or GPU events).  Owned. */
	pt_cpath *cpath;
	/* The main thread's top-level spans and the GPU's busy stretches per
	 * step (version >= 4; NULL for older summaries).  Owned. */
	pt_sum_tl *tl;
	/* Point-to-point transfers per peer and direction (version >= 5;
	 * NULL for older summaries and workers without any).  Owned. */
	pt_p2p_row *p2p;
	size_t np2p;
	/* A worker read from several files (torch's profiling cycles, one
	 * file each; src/diagnose/wfiles.c): their paths in time order and
	 * what grouped them ("rank+host+pid", "host+pid"), owned; 0 / NULL
	 * for a worker of one file.  Not in the summary file (a summary is
	 * one worker's, whatever it was read from).  Last, so that the
	 * members above keep their offsets. */
	char **files;
	size_t nfiles;
	char *grouped_by;
	/* A digest (src/analysis/digest.h, docs/summary.md "Digests"): the
	 * byte size of the full summary it was made from; 0 for a full
	 * summary.  A digest's pattern keys are "~" + 16 hex digits (the
	 * hash of the full key) and it has no critical path, timeline,
	 * collective causes, per-step function times or hardware series. */
	uint64_t digest_of;
	/* Bytes from one pattern to the next: 0 or sizeof(pt_pattern) for
	 * whole patterns, PT_PATTERN_HOT for a digest read slim (its patterns
	 * end there).  Index with pt_summary_pat. */
	size_t pat_stride;
} pt_summary;

/* Pattern i of s, whatever its stride. */
static inline pt_pattern *pt_summary_pat(const pt_summary *s, size_t i)
{
	size_t st = s->pat_stride ? s->pat_stride : sizeof(pt_pattern);

	return (pt_pattern *)((char *)s->patterns + i * st);
}

/* Do s's patterns have the fields after PT_PATTERN_HOT (p10_ms ... nhw)? */
static inline int pt_summary_whole(const pt_summary *s)
{
	return !s->pat_stride || s->pat_stride == sizeof(pt_pattern);
}

/* pt_summary has hw_series (src/agent and src/diagnose/display.c test this). */
#define PT_SUMMARY_HW_SERIES 1

/* Options for what a summary keeps (Python stacks can number thousands). */
typedef struct pt_summary_options {
	double min_python_ratio;  /* keep Python stacks owning >= this share (default 0.0005) */
	size_t max_python;        /* and at most this many of them (default 500) */
	/* Hardware samples to join (not owned; default none).  A file whose
	 * host is not "" applies only to a worker on that host (when the
	 * worker's host is known).  pt_summary_from_trace adds the samples an
	 * nsys export carries itself. */
	const struct pt_samples *const *hw;
	size_t nhw;
} pt_summary_options;

void pt_summary_options_default(pt_summary_options *o);

/* Build the summary of st (read only).  path names the raw trace (worker id
 * = basename; NULL gives ""); opt NULL means the defaults.  Returns a new
 * summary (free with pt_summary_free) or NULL with err filled (PT_ENOMEM).
 * Definitions and the algorithm: docs/summary.md. */
pt_summary *pt_summary_build(const pt_store *st, const char *path,
			     const pt_summary_options *opt, pt_error *err);

/* The worker name a summary of the trace at path gets (pt_summary.worker):
 * its file name, a pointer into path ("" for NULL).  A raw trace goes to
 * the worker of that name (the timeline's raw events). */
const char *pt_summary_worker_name(const char *path);

/* A summary for a trace that could not be read: worker, file, error, and
 * host/rank/pid as far as the file name tells them. */
pt_summary *pt_summary_failed(const char *path, const char *error);

/* Read the trace at path and summarise it (reader + build in one call).
 * NULL with err filled (subject = path, offset for parse errors) when the
 * trace cannot be read; callers summarising many workers turn that into
 * pt_summary_failed(path, message) so one bad worker costs no others. */
pt_summary *pt_summary_from_trace(const char *path, const pt_summary_options *opt,
				  pt_error *err);

void pt_summary_free(pt_summary *s);  /* NULL is a no-op */

/* Serialise as the versioned summary JSON (docs/summary.md), compact, one
 * line, no trailing newline; out->oom tells of allocation failure. */
void pt_summary_write(const pt_summary *s, pt_sb *out);
/* Write the JSON plus '\n' to a new unguessable temporary beside path,
 * fsync, rename to path (pt_file_write_atomic with PT_FILE_DURABLE), so
 * readers on a shared file system never see half a file.  err is cleared
 * first and gets path as subject.  PT_OK, PT_EIO, PT_ENOMEM or PT_EINVAL
 * (path too long). */
int pt_summary_write_file(const pt_summary *s, const char *path, pt_error *err);
/* Parse a summary JSON file: checks "format", "version" (1 or 2) and every
 * member's type; unknown members are ignored.  NULL with err filled (subject
 * = path; PT_EIO, PT_EPARSE with offset, PT_EFORMAT naming the member). */
pt_summary *pt_summary_read_file(const char *path, pt_error *err);
pt_summary *pt_summary_read_mem(const char *buf, size_t len, pt_error *err);

/* Parse "<host>_<rank>_<pid>.json" (any extensions): rank and pid are the
 * two last '_'-separated numeric fields, the pid followed by '.' or the end,
 * the host (non-empty, may hold '_' and '.') is what precedes them.  Fills
 * all three when the name matches, else host "" and -1 (NULL outputs are
 * skipped).  host gets at most hostcap-1 bytes plus the NUL. */
void pt_summary_parse_worker_name(const char *base, char *host, size_t hostcap,
				  int64_t *rank, int64_t *pid);

PT_API_END

#endif
