/*
 * sections.h - the steps of a diagnosis, in the order pt_diagnose
 * (diagnose.c) runs them: the sections (compute.c, memory.c, comm.c,
 * runtime.c, python.c, stepcheck.c, breakdown.c, steps.c, lockstep_blame.c),
 * one finding per cause (merge.c), the job's noise (noise.c), their
 * confidence (confidence.c), the ranked findings (findings.c) and
 * "display" (display.c).  Each adds its part to the report.  Only
 * diagnose.c calls them (a section may call a part of another, as
 * compute.c does efficiency.c); the sections depend on internal.h's
 * helpers, never on diagnose.c.  Not part of the public API.
 */
#ifndef PT_DIAG_SECTIONS_H
#define PT_DIAG_SECTIONS_H

#include "internal.h"
#include "../util/strbuf.h"

/* Sections (each adds its object to the report root and its findings). */
void diag_compute(dctx *c);
void diag_memory(dctx *c);
void diag_comm(dctx *c);
/* Point to point (p2p.c): the pair matrix ("p2p") and its slow destinations,
 * sources and pairs. */
void diag_p2p(dctx *c);
void diag_runtime(dctx *c);
void diag_python(dctx *c);
/* One "summary" finding per worker whose profiled step numbers differ from
 * those most workers profiled (stepcheck.c). */
void diag_step_mismatch(dctx *c);
/* Single-worker views (need no other worker): "Time breakdown" and its
 * "GPU idle" findings (breakdown.c), "Steps" and the step-to-step findings
 * (steps.c). */
/* write 0: add the findings (before diag_findings); 1: write the section
 * (after diag_display, so the seed's keys keep their places). */
void diag_breakdown(dctx *c, int write);
/* Communication-bound workers (comm_bound.c): diag_comm_bound_is says
 * whether worker wi's (index in c->w) exposed communication is at least --comm-bound of its GPU's
 * busy time and more than its compute and its idle time; diag_comm_bound adds a finding for
 * each (after diag_breakdown(c, 0), before diag_lockstep). */
int diag_comm_bound_is(const dctx *c, size_t wi);
void diag_comm_bound(dctx *c);
/* GPU compute utilization and low-occupancy heavy kernels, added to the
 * "GPU Compute" object sec (efficiency.c). */
void diag_efficiency(dctx *c, pt_rv *sec);
void diag_steps(dctx *c, int write);
extern const char *const pt_idle_cause_names[];
/* Fixed-threshold + differential section shared by memory and runtime. */
typedef void (*dexplain_fn)(dctx *c, dfinding *f, const char *key, int kind,
			    double value, double others);
void diag_fixed_section(dctx *c, dcat cat, int cls, double threshold, int with_exec,
			dexplain_fn explain);
/* Lockstep's second half (lockstep_blame.c): the stragglers' cause
 * functions; adds the "Lockstep" section and findings and links the other
 * sections' findings on workers whose time lost is their waiting for peers
 * to the straggler they waited for (caused_by).  After the five sections,
 * before diag_merge; nothing without 2 workers with collectives. */
void diag_lockstep(dctx *c);
/* Lockstep's first half, before the sections: match the instances, one
 * clock, the waits (c->lkw), the stragglers and the waiting workers
 * (c->waiting, which diag_comm leaves out of "abnormal_workers").  State
 * kept in c->lk for diag_lockstep, which writes the section and frees it;
 * the two are always called as a pair. */
void diag_lockstep_match(dctx *c);
/* The step differential's measure (steps.c): v[i] per step (ns of them),
 * slow[i] != 0 for the slow steps; tmp holds ns doubles.  And its words:
 * "`name`, 40.1-44.0 ms there against at most 3.2 ms in the other steps
 * (median 2.9 ms)" (the range when nslow > 1 and it differs). */
void dx_excess(const double *v, const unsigned char *slow, size_t ns, double *tmp,
	       dexcess *out);
void dx_text(pt_sb *sb, const char *name, const dexcess *x, size_t nslow);
/* The critical path (critpath.c).  diag_cpath_usable: the worker's path
 * has the same steps as the summary (2 or more).  diag_cpath_cause: what
 * grew on the path of the slow steps (slow[i] != 0) whose mean extra time
 * is step_exc; 1 and *out filled when a function explains it.
 * diag_cpath_wait_text: "; in step N it waits X ms in `call` for ..." for
 * a cause with a wait.  diag_cpath: the "Critical path" section (after
 * diag_lockstep, whose waits it uses, and diag_steps(0), whose slow steps
 * it marks). */
int diag_cpath_usable(const pt_summary *s);
int diag_cpath_cause(const pt_summary *s, const unsigned char *slow, double step_exc,
		     dcp_cause *out);
void diag_cpath_wait_text(pt_sb *sb, const pt_summary *s, const dcp_cause *cz);
/* Are GPU function keys a and b the same function (launch shapes aside)?
 * And a GPU event's words: lead, then "`name`" and " on stream N" (stream
 * >= 0). */
int diag_cpath_same_gpu(const char *a, const char *b);
void diag_cpath_gpu_text(pt_sb *sb, const char *key, int64_t stream, const char *lead);
void diag_cpath(dctx *c);
/* Grade every finding about a worker (confidence.c): its conf member,
 * level strong/moderate/weak from three cues and the job's noise (after
 * diag_noise). */
void diag_grade(dctx *c);
/* Rank the findings (summary first, then strong and moderate before weak,
 * then impact desc, worker, function) and write "findings" with their
 * confidence and evidence (findings.c). */
void diag_findings(dctx *c);
/* The "display" key (docs/display.md): per-worker step times and class
 * breakdown, and the workers x functions heatmap.  After diag_findings,
 * whose ranked findings name the heatmap's first columns. */
void diag_display(dctx *c);

/* The timeline's model and report.json's "timeline" key (timeline.c):
 * last, after the findings are ranked and the sections written. */
void diag_timeline(dctx *c);

#endif
