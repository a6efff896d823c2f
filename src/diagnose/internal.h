/*
 * internal.h - what the files of src/diagnose share: the diagnosis context
 * (the workers that ran, the function-key index built once over all
 * summaries, scratch arrays), per-key metric vectors with their robust
 * statistics, and the findings list: the helpers the sections depend on
 * (keyindex.c, metric.c, findings.c).  The sections themselves are in
 * sections.h, which only diagnose.c calls.  Not part of the public API.
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
#include "../analysis/stats.h"
#include "../report/names.h"
#include "../util/hash.h"
#include "../report/phrase.h"

typedef struct dkey {
	const char *key;     /* borrowed from the first summary that has it */
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
	uint32_t in;         /* its index in pt_diagnose's s[] */
	size_t stride;       /* bytes from one pattern to the next (pt_summary.pat_stride):
	                        a digest's end at PT_PATTERN_HOT */
	int whole;           /* pt_summary_whole(s), here where the loops over the
	                        index look (a miss less per entry) */
} dworker;

/* Pattern p of worker w.  Past PT_PATTERN_HOT only where
 * pt_summary_whole(w->s). */
static inline const pt_pattern *dw_pat(const dworker *w, size_t p)
{
	return (const pt_pattern *)((const char *)w->pat + p * w->stride);
}

/* At scale the report keeps per-worker rows (Time breakdown, display,
 * the timeline, a Python function's workers, Lockstep's workers) for at
 * most this many workers: those the findings name, the stragglers, the
 * reference, the ones read in full, then workers spread over the job
 * (docs/diagnose.md "At scale").  "workers" keeps every one. */
#define DIAG_ROWS_MAX 1000

/* What a finding is about: the report section that writes it (its
 * "category" in report.json is dcat_names[cat]). */
typedef enum {
	DC_SUMMARY = 0,  /* "summary": a fact about the traces (unreadable, other steps) */
	DC_COMPUTE,      /* "GPU Compute" */
	DC_MEMORY,       /* "GPU memory operations" */
	DC_COMM,         /* "Communication" */
	DC_RUNTIME,      /* "CUDA Runtime" */
	DC_PYTHON,       /* "Python functions" */
	DC_GPU_IDLE,     /* "GPU idle": one worker's where-the-time-goes */
	DC_STEPS,        /* "Steps": slow steps against the worker's own */
	DC_LOCKSTEP,     /* "Lockstep": who waited for whom */
	DC_COUNT
} dcat;
extern const char *const dcat_names[DC_COUNT];

/* How a piece of evidence relates to the finding that holds it (merge.c):
 * the report model's pt_ev_kind (src/report/report.h).  PT_EV_OWN_WAIT on
 * a straggler is a thread that waits for the cause's work on another, or
 * its GPU idle while its CPU stalls. */

/* One section's diagnosis, kept as evidence of the finding it merged into:
 * the report model's evidence (report.h), its explanation owned by the
 * diagnosis (df_free frees it). */
typedef pt_finding_ev devidence;

/* A diagnosis.  Sections fill the first eight members (df_add, df_explain);
 * the merge pass (merge.c) gives each cause one finding: its identity is
 * (worker, function key), the other sections' findings of it become
 * evidence, and so do the frames it explains and, for a straggler, its
 * victims' symptoms.  noise_ms and noise_src are the job's noise against
 * which it is graded (noise.c). */
/* A host whose tasks waited for a core at least this share of the time
 * (psi_cpu, %) is contended (docs/diagnose.md "Noise"): confidence.c,
 * noise.c. */
#define CONTENDED_PSI 10.0

#define DF_MAX_METRICS 12
#define DF_MAX_ARGS 6

typedef struct dfinding {
	dcat cat;
	const char *category;    /* dcat_names[cat] */
	const char *worker;      /* worker id (NULL for the summary finding) */
	const char *function;    /* function key or "" */
	const char *metric;
	double value, others;    /* others NAN: null */
	double impact_ms;
	char *explanation;       /* owned: its sentence once rendered (df_sentence) */
	/* The typed content its sentence is rendered from (report.h, phrase.h):
	 * the cause kind, its numbers (m[0] the headline: metric, value), the
	 * phrase's words (owned), the steps (owned) and the what-if. */
	pt_cause cause;
	pt_metric m[DF_MAX_METRICS];
	size_t nm;
	char *args[DF_MAX_ARGS];
	size_t nargs;
	int64_t *steps;
	size_t nsteps;
	int has_what_if;
	double what_if_ms, instead_ms;
	size_t ninside;          /* frames folded into it (merge.c) */
	double inside_ms;        /* their time per step */
	const char *caused_by;   /* a symptom: the straggler it waited for (lockstep_blame.c) */
	const char **waits;      /* a straggler's: the frames that wait for its cause
	                            (lockstep_blame.c); array owned, keys borrowed */
	size_t nwaits;
	const char **also;       /* a straggler's: its other cause functions (the
	                            first is function); owned, keys borrowed */
	size_t nalso;
	devidence *ev;           /* owned, nev of them */
	size_t nev, evcap;
	double noise_ms;         /* per step; NAN: not measured */
	const char *noise_src;   /* which noise: a static string */
	double psi;              /* CPU-side: its host's psi_cpu (%), NAN unknown */
	uint32_t *group;         /* the same cause on several workers (merge.c
	                            diag_group): their indexes in c->w, worst
	                            first, this finding's own the first; owned */
	size_t ngroup;           /* 0: not grouped */
	double group_ms;         /* their ms per step in all */
	int fkind;               /* its function's pt_kind where the section knows
	                            it and the key index may not (a slow step's
	                            cause on the critical path); -1 unknown */
	struct dconf {           /* its grade (confidence.c, diag_grade) */
		const char *level;   /* "strong", "moderate", "weak"; NULL: none */
		double lost, apart;  /* apart NAN: unknown */
		size_t same;         /* other workers with a finding on it */
		const char *calls;
		char *evidence;      /* owned */
	} conf;
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

/* What the lockstep analysis (lockstep_match.c) knows of one worker's own
 * collective instances (index into its summary's coll), for the critical
 * path (critpath.c): the wait for the last arriver (-1: not matched),
 * that arriver (index into dctx.w, UINT32_MAX none) and, for the last
 * arriver itself, how much later it arrived than the median member or the
 * second last (its what-if), else 0. */
typedef struct dlkwait {
	size_t n;
	double *wait_ms, *saved_ms;
	uint32_t *last;
} dlkwait;

/* How much more a function took in a worker's slow steps than in its
 * other steps (steps.c, dx_excess). */
typedef struct dexcess {
	double exc;               /* mean excess per slow step over the others' median */
	double lo, hi;            /* its ms in the slow steps */
	double omax, omed;        /* in the other steps */
} dexcess;

/* What grew on the path of a worker's slow steps (critpath.c). */
typedef struct dcp_cause {
	const pt_cp_func *func;   /* the function named */
	dexcess x;                /* its path ms */
	int grew_itself;          /* a GPU event whose own duration grew */
	const pt_cp_wait *wait;   /* the wait it names, NULL */
	size_t wait_step;         /* the step of that wait (index) */
	/* Where the step's thread spends the growth and what the GPU does
	 * meanwhile (the Steps finding's words): the outermost annotation
	 * that holds most of it, NULL none; the GPU function that grew most
	 * when the path's GPU time grew by half the step's extra time, NULL
	 * when it did not (gpu_idle: a blocking call grew with the GPU idle). */
	const pt_cp_func *span;
	dexcess sx;
	const pt_cp_func *gpu;
	dexcess gx;
	int gpu_idle;
} dcp_cause;

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
	pt_hmap kmap;             /* pt_hash_words(key, cls) -> key index */
	dent *ent;
	dmetric m[3];
	dfinding *f;
	size_t nf, fcap;
	dlkwait *lkw;             /* per worker (lockstep_match.c), NULL without lockstep */
	struct dlk *lk;           /* diag_lockstep_match's, for diag_lockstep */
	unsigned char *waiting;   /* per worker: waited for its peers, no straggler
	                             (diag_lockstep_match); NULL without lockstep */
	size_t comm_waiting;      /* Communication entries left out for it (comm.c) */
	unsigned char **slow;     /* per worker: its slow steps (steps.c), NULL */
	unsigned char *detail;    /* per worker: given rows in the sections written
	                             after the findings (diag_row), NULL: all */
	unsigned char *gmark;     /* per worker: in the group being graded
	                             (df_group_mark), NULL before diag_group */
	int oom;
} dctx;

/* The watch's stragglers (watch.c): after ranking, the first finding about
 * each one's worker gets its evidence (PT_EV_WATCH).  Out of memory sets
 * c->oom. */
void diag_watch(dctx *c);

/* The key index (keyindex.c).  diag_index_build fills c->keys, c->kmap
 * and c->ent from c->w (pt_diagnose frees them); 0, or -1 when
 * out of memory. */
int diag_index_build(dctx *c);
/* Index of the key (cls, key) in c->keys, UINT32_MAX when no worker has it. */
uint32_t diag_key_find(const dctx *c, int cls, const char *key);

/* Metric vectors (metric.c; m is one of ctx->m, sized for ctx->nw, or a
 * local one of that size).  dm_alloc zeroes m first; on -1 (out of memory) m still
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

/* One finding per cause (merge.c): after the sections and lockstep,
 * before diag_findings.  Merges the findings of one (worker, function),
 * folds a frame into its ancestor's finding when that one explains it,
 * moves a straggler's own collective findings and its victims' symptoms
 * (caused_by) into its Lockstep finding; the merged-away findings become
 * evidence and leave c->f. */
void diag_merge(dctx *c);
/* One finding per cause across workers (merge.c): the same cause (cause
 * kind, category, function key) on several workers becomes one finding
 * that lists them, worst first, with the what-if of fixing all of them;
 * after diag_merge, before diag_noise. */
void diag_group(dctx *c);
/* Is f a cause grouped across more than a tenth of the workers (any two of
 * fewer than 20)?  A spread of values more than one cause: it is graded as
 * other workers flagged for the same function were before grouping. */
int df_group_spread(const dctx *c, const dfinding *f);
/* Mark (on 1) or unmark (on 0) in c->gmark the workers of f's group but
 * f's own: noise.c and confidence.c compare a group with the workers
 * outside it; not a spread (df_group_spread), which is compared with all
 * the others as before. */
void df_group_mark(dctx *c, const dfinding *f, int on);
/* What f costs per step of its worker: the what-if's difference when it
 * has one (the time lost IS what fixing it saves), else its impact per
 * step. */
double df_cost_per_step(const dctx *c, const dfinding *f);
/* The job's noise (noise.c): sets noise_ms and noise_src of every finding
 * about a worker; after diag_merge. */
void diag_noise(dctx *c);
/* The key index of the function a finding names: in the class of its
 * category's section first, then in any class (the last class first: a
 * Lockstep or Steps finding names a Python stack or a runtime call);
 * UINT32_MAX when none, or for a finding without a function. */
uint32_t df_key(const dctx *c, const dfinding *f);
/* Free a finding's owned members (its explanation and evidence). */
void df_free(dfinding *f);

/* Findings (findings.c). */
dfinding *df_add(dctx *c, dcat cat, const char *worker, const char *function,
		 const char *metric, double value, double others, double impact_ms);
/* f's cause kind and its headline's unit (f->m[0]); f NULL: nothing. */
void df_cause(dfinding *f, pt_cause cause, pt_unit unit);
/* Append a number to f's metrics (at most DF_MAX_METRICS: more are
 * dropped). */
void df_metric(dfinding *f, const char *name, double value, pt_unit unit);
/* Append a word of f's phrase (printf; worker names as pt_who_token).
 * Out of memory: c->oom. */
void df_arg(dctx *c, dfinding *f, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* f's steps: a copy of steps[0..n). */
void df_steps(dctx *c, dfinding *f, const int64_t *steps, size_t n);
/* f's sentence as report.json writes it (rendered once, kept in
 * f->explanation); "" when it has none, NULL out of memory. */
const char *df_sentence(dctx *c, dfinding *f);
/* A share-of-time finding (PT_CAUSE_SHARE): "worker W spends 5.0% of its
 * time in NAME (GROUP), other workers 0.1%: WHY (about 0.964 ms per
 * step)"; group NULL: none.  The time is f's impact per step. */
void df_explain_share(dctx *c, dfinding *f, const char *name, const char *group,
		      const char *why);
/* A worker's name token for a phrase: "rank N (ID)" when its rank is known
 * (style 'R'), else as style says (phrase.h pt_who_token). */
void df_who(pt_sb *sb, const dctx *c, uint32_t w, char style);
/* The index in c->w of the worker f names, UINT32_MAX for none. */
uint32_t df_worker(const dctx *c, const dfinding *f);
/* A Communication finding that waiting for a peer cannot make, so neither
 * a victim's symptom nor a straggler's own longer collectives: a slow p2p
 * link (its time is the end that waited less, p2p.c) and a
 * communication-bound worker (its waits taken out, comm_bound.c). */
int df_comm_own_cause(const dfinding *f);
/* f's impact per profiled step of its worker (f->impact_ms is per window). */
double df_impact_per_step(const dctx *c, const dfinding *f);
/* "12.3%" (two decimals below 0.1%). */
const char *df_pct(double ratio, char *buf, size_t cap);

/* Sorting helper (metric.c): by value desc, ties by name asc. */
typedef struct dpair {
	const char *name;
	double v;
	size_t idx;
} dpair;
int dpair_cmp(const void *a, const void *b);

/* Does worker w (index in c->w) get rows in the sections written after
 * the findings?  Every one below DIAG_ROWS_MAX workers. */
static inline int diag_row(const dctx *c, size_t w)
{
	return !c->detail || c->detail[w];
}

#endif
