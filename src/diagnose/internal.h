/*
 * internal.h - what the files of src/diagnose share: the diagnosis context
 * (the workers that ran, the function-key index built once over all
 * summaries, scratch arrays), per-key metric vectors with their robust
 * statistics, and the findings list.  Not part of the public API.
 *
 * Layout, shaped for 10,000 workers: every (class, key) string is hashed
 * once into a key index; each key owns a contiguous run of entries
 * (worker, pattern) in worker order, so a section walks a key's values as
 * flat arrays and computes medians by quickselect: O(total patterns), never
 * O(workers x keys x workers).
 */
#ifndef PT_DIAG_INTERNAL_H
#define PT_DIAG_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "diagnose.h"
#include "robust.h"

typedef struct dkey {
	const char *key;     /* borrowed from the first summary that has it */
	uint64_t hash;
	uint8_t cls, kind;
	uint32_t off, n;     /* entries ctx->ent[off .. off+n) */
	uint32_t last_w;     /* while indexing: last worker seen (dedup) */
} dkey;

typedef struct dent {
	uint32_t w;          /* index into ctx->w */
	uint32_t p;          /* pattern index in that worker's summary */
} dent;

typedef struct dworker {
	const pt_summary *s;
	const pt_pattern *pat;  /* s->patterns, one load less per value */
	const char *id;      /* unique worker id (report arena) */
	double window_ms;
} dworker;

/* A diagnosis before ranking. */
typedef struct dfinding {
	const char *category;    /* section name, or "summary" */
	const char *worker;      /* worker id (NULL for the summary finding) */
	const char *function;    /* function key or "" */
	const char *metric;
	double value, others;    /* others NAN: null */
	double impact_ms;
	char *explanation;       /* owned */
} dfinding;

/* M_PER_STEP: total_ms / steps (the window counts as one step when the
 * worker has none), a worker without the key counting 0; for "display". */
typedef enum { M_BOTTLENECK, M_EXEC, M_MEDIAN, M_BUSBW, M_PER_STEP } dfield;

/* The values of one metric of one key over the workers. */
typedef struct dmetric {
	size_t n;                /* present values */
	size_t nzero;            /* implicit zeros (ratio metrics) */
	double *val;             /* val[i]: value of entry i, worker wk[i] */
	uint32_t *wk;
	const pt_pattern **pat;  /* NULL entries for per-worker metrics */
	double *work, *tmp, *sorted;
	int sorted_ok, loo;
	pt_robust all;
} dmetric;

typedef struct dctx {
	const pt_diag_options *o;
	pt_report *rep;
	dworker *w;
	size_t nw;
	const char **failed_ids;  /* ids of failed workers (report arena) */
	const pt_summary **failed;
	size_t nfailed;
	dkey *keys;
	size_t nkeys;
	uint32_t *kslot;          /* hash index over keys: key index + 1, 0 empty */
	size_t kcap;              /* its size, a power of two */
	dent *ent;
	dmetric m[3];
	dfinding *f;
	size_t nf, fcap;
	int oom;
} dctx;

/* Index of the key (cls, key) in c->keys, UINT32_MAX when no worker has it. */
uint32_t diag_key_find(const dctx *c, int cls, const char *key);

/* Metric vectors (m is one of ctx->m, sized for ctx->nw, or a local one
 * of that size).  dm_alloc zeroes m first; on -1 (out of memory) m still
 * goes to dm_free. */
int dm_alloc(dmetric *m, size_t n);
void dm_free(dmetric *m);
void dm_load(dctx *c, dmetric *m, const dkey *k, dfield f);
void dm_load_gpu_util(dctx *c, dmetric *m);
void dm_prepare(dctx *c, dmetric *m);
/* Statistics to test entry i against: of the other workers (leave-one-out)
 * when fewer than loo_below values, else of all workers. */
void dm_stats(dctx *c, dmetric *m, size_t i, pt_robust *st);
/* Exact median of the other workers' values (entry i left out). */
double dm_others_median(dctx *c, dmetric *m, size_t i);
/* Median over all values (implicit zeros included). */
double dm_median(dctx *c, dmetric *m);
/* Full test for entry i in direction dir: outlier by z and rel, and the
 * impact (share of the window, computed by the caller's impact function
 * from the value and the others' median) above min_impact.  Returns 1 when
 * abnormal and fills *others and *impact (impact may be filled even when 0
 * is returned). */
typedef double (*dimpact_fn)(const dctx *c, const dmetric *m, size_t i, double others);
int dm_test(dctx *c, dmetric *m, size_t i, int dir, dimpact_fn fn, double *others,
	    double *impact);
double dm_impact_ratio(const dctx *c, const dmetric *m, size_t i, double others);
double dm_impact_duration(const dctx *c, const dmetric *m, size_t i, double others);

/* A worker's window per profiled step: sentences say "ms per step" (the
 * window counts as one step when the worker has none). */
static inline double dw_steps(const dworker *w)
{
	return w->s && w->s->nsteps > 1 ? (double)w->s->nsteps : 1.0;
}

/* Findings. */
dfinding *df_add(dctx *c, const char *category, const char *worker, const char *function,
		 const char *metric, double value, double others, double impact_ms);
void df_explain(dctx *c, dfinding *f, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Short display name of a function key for explanations (no template
 * arguments, launch shape or stack prefix); writes into buf. */
const char *df_short(const char *key, int cls, char *buf, size_t cap);
/* f's impact per profiled step of its worker (f->impact_ms is per window). */
double df_impact_per_step(const dctx *c, const dfinding *f);
/* A duration in ms as people read it: three significant digits in s, ms,
 * µs or ns ("4.50 µs"). */
const char *df_ms(double ms, char *buf, size_t cap);
/* "12.3%" (two decimals below 0.1%). */
const char *df_pct(double ratio, char *buf, size_t cap);

/* Sections (each adds its object to the report root and its findings). */
void diag_compute(dctx *c);
void diag_memory(dctx *c);
void diag_comm(dctx *c);
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
/* GPU compute utilization and low-occupancy heavy kernels, added to the
 * "GPU Compute" object sec (efficiency.c). */
void diag_efficiency(dctx *c, pt_rv *sec);
void diag_steps(dctx *c, int write);
extern const char *const pt_idle_cause_names[];
/* Fixed-threshold + differential section shared by memory and runtime. */
typedef void (*dexplain_fn)(dctx *c, dfinding *f, const char *key, int kind,
			    double value, double others);
void diag_fixed_section(dctx *c, const char *name, int cls, double threshold, int with_exec,
			dexplain_fn explain);
/* Lockstep (lockstep.c): match the workers' collective instances, who
 * waited for whom, the stragglers and their cause functions; adds the
 * "Lockstep" section and findings and drops the other sections' findings
 * on workers whose time lost is their waiting for peers.  After the five
 * sections, before diag_findings; nothing without 2 workers with
 * collectives. */
void diag_lockstep(dctx *c);
/* Rank the findings (summary first, then impact desc, worker, function) and
 * write "findings". */
void diag_findings(dctx *c);
/* Add "confidence" (level strong/moderate/weak and its cues, confidence.c)
 * to every finding object of arr (written by diag_findings from c->f, in
 * that order), except the summary finding's. */
void diag_confidence(dctx *c, pt_rv *arr);
/* The "display" key (docs/display.md): per-worker step times and class
 * breakdown, and the workers x functions heatmap.  After diag_findings,
 * whose ranked findings name the heatmap's first columns. */
void diag_display(dctx *c);

/* Sorting helper: by value desc, ties by name asc. */
typedef struct dpair {
	const char *name;
	double v;
	size_t idx;
} dpair;
int dpair_cmp(const void *a, const void *b);

#endif
