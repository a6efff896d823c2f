/*
 * diagnose.h - cross-worker differential diagnosis: the master side of the
 * analyzer.
 *
 * Flow: worker summaries (src/analysis/summary.h) --pt_diagnose--> a
 * pt_report (src/report/report.h) holding the seed report's five sections,
 * "workers", the ranked "findings" and "display" (per-worker data for the
 * PerfDisplay page) --> report.json, index.html and the text report.  The
 * comparison rule, every threshold and the report keys are described in
 * docs/diagnose.md.
 */
#ifndef PT_DIAGNOSE_H
#define PT_DIAGNOSE_H

#include <stddef.h>
#include <stdint.h>

#include "../analysis/summary.h"
#include "../report/report.h"
#include "../util/error.h"
#include "../util/api.h"

PT_API_BEGIN

typedef struct pt_diag_options {
	double z;                 /* robust z above which a value is an outlier (3.5) */
	double rel;               /* and relative deviation above this (0.2 = 20%) */
	double min_impact;        /* and time lost above this share of the window (0.005) */
	double mad_floor;         /* MAD is at least this share of |median| (0.01) */
	double memop_threshold;   /* memory ops: candidate above this bottleneck ratio (0.01) */
	double runtime_threshold; /* CUDA runtime calls: same (0.01) */
	double python_threshold;  /* Python stacks listed above this ratio (0.01) */
	double python_min_impact; /* Python findings: time lost above this share (0.02) */
	size_t top_kernels;       /* entries in "major_kernel_executions" (5) */
	size_t loo_below;         /* leave-one-out statistics below this many values (8) */
	int fixed_only;           /* 1: the seed's plain fixed-threshold rule for
	                             memory ops and runtime calls (0) */
	double p2p_slow;          /* a p2p destination, source or pair is slow when the
	                             others' median bandwidth is this many times its own (2) */
	double comm_bound;        /* a worker is communication-bound when communication
	                             not overlapped with compute is at least this share
	                             of its GPU's busy time and more than compute (0.5) */
	/* The always-on watch's persistent stragglers when the profile began
	 * (src/watch, docs/watch.md): the first finding about each one's
	 * worker cites them.  NULL/0: none.  Borrowed for the call. */
	const struct pt_diag_watch *watch;
	size_t nwatch;
	/* Out, NULL: not asked.  n flags (s[] order) the diagnosis sets for
	 * the workers a closer look needs (docs/diagnose.md "Two phases"):
	 * every worker a finding names or groups, the lockstep stragglers and
	 * the reference worker, the workers with slow steps.  Never cleared. */
	unsigned char *suspect;
} pt_diag_options;

/* One persistent straggler as the watch saw it (times in seconds; since
 * is CLOCK_REALTIME seconds since the epoch, 0 unknown). */
typedef struct pt_diag_watch {
	int64_t rank;
	double since;
	int64_t since_step;       /* -1: unknown */
	double late_s;            /* median lateness per step */
	double late_max_s;        /* the largest, at the instance below */
	const char *at_name, *at_pg;  /* NULL: unknown */
	int64_t at_seq;           /* -1: unknown */
	double score;             /* straggler score in [0, 1] */
	double lost_gpu_s_per_min;
} pt_diag_watch;

void pt_diag_options_default(pt_diag_options *o);

/* Compare the workers of s[0..n) (failed summaries, error != NULL, are
 * listed under "workers" and in a "summary" finding) and build the report.
 * opt NULL means the defaults.  The summaries are only read, and the report
 * copies every string it keeps, so they may be freed afterwards.  Returns a
 * new report (free with pt_report_free) or NULL with err filled (PT_EINVAL
 * when n is 0, PT_ENOMEM).  Thread-safe for distinct calls. */
pt_report *pt_diagnose(pt_summary *const *s, size_t n, const pt_diag_options *opt,
		       pt_error *err);

/* The group name of a communication function key without hardware samples:
 * "<algorithm> <collective>" lowercase ("ring allreduce", "tree allgather"),
 * "sendrecv" for point-to-point kernels, "gloo allreduce" for CPU
 * collectives.  Writes at most cap-1 bytes; returns out. */
char *pt_diag_comm_group(const char *key, int kind, char *out, size_t cap);

PT_API_END

#endif
