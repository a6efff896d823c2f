/*
 * compare_internal.h - what the files of `perftracker compare` share
 * (compare.c: matching and findings; compare_keys.c: what one function or
 * class is across runs; compare_report.c: the "Compare" section and its
 * sentences; compare.c calls compare_report.c, both call compare_keys.c).
 * Not part of the public API (compare.h).
 */
#ifndef PT_COMPARE_INTERNAL_H
#define PT_COMPARE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "compare.h"
#include "../model/family.h"
#include "../util/hash.h"

enum { CH_SLOWER, CH_FASTER, CH_APPEARED, CH_DISAPPEARED };
extern const char *const cmp_change_name[4];  /* compare_keys.c */

/* Classes compared, in report order (idle is the rest of the step;
 * compare_keys.c). */
#define NCLS 6
extern const int cmp_class_order[NCLS];

#define TOP_FUNCS 5      /* functions named in a class finding */
#define WATERFALL_MAX 12 /* bars before "other" */

typedef struct cworker {
	const pt_summary *s;
	int side;                /* 0 BASELINE, 1 NEW */
	double steps;            /* profiled steps (the window counts as one) */
	double step_ms;          /* median step time */
	double own[PT_C_COUNT];  /* owned ms per step by class */
} cworker;

typedef struct cfunc {
	const char *key;         /* report arena */
	uint64_t hash;
	uint8_t cls, kind;
	uint8_t wait;            /* a Python stack blocked in a wait: idle, never a finding */
	uint8_t grp;             /* 1: the group of all Python stacks ending in frame key,
	                            or of all kernels of family key (fam) */
	uint8_t fam;             /* a kernel family (grp is 1 too; compare_keys.c) */
	uint8_t span;            /* a Python stack whose frame is a user annotation: how
	                            long it lasts (inclusive) is compared too */
	pt_kfamily kf;           /* kernels and families: what the name says */
	size_t grp_of;           /* a Python stack: its group's index, (size_t)-1 none */
	size_t nmem;             /* a group: its stacks */
	double ma, mb;           /* whole-side medians of owned ms/step */
	double ea, eb;           /* and of execution ms/step */
	double ca, cb;           /* calls per step */
	double pa, pb;           /* per-call ms (median over workers that ran it), NAN none */
	size_t na, nb;           /* workers that ran it */
	double sa, sb;           /* each side's noise in it, ms per step: its own
	                            step-to-step spread (and, for populations, the
	                            uncertainty of the median over workers); NAN
	                            when no worker has per-step values */
	double thr;              /* a change of it must exceed this (ms per step) */
	/* GPU functions (kernels, collectives, memory operations), from the
	 * summaries' critical path (compare_path.c): */
	double qa, qb;           /* ms per step on the critical path (median over the
	                            workers that have one), NAN when a side has none */
	double qthr;             /* a change of it must exceed this: the larger side's
	                            step-to-step spread of it, at least the floor */
	const char *kn[2];       /* a collective group: the kernel (pattern key) that
	                            runs longest on each side, NULL none */
	double knms[2];          /* and its execution ms (the largest over workers) */
} cfunc;

/* What a finding is about. */
enum { SC_FUNC = 0, SC_CLASS = 1, SC_SPAN = 2 };

typedef struct cfind {
	int scope_class;         /* SC_FUNC: function f (owned time); SC_CLASS: class f;
	                            SC_SPAN: annotation f, how long it lasts (inclusive,
	                            overlapping the owned-time findings) */
	size_t f;
	int change;
	int beyond;              /* d is what changed beyond the whole job's
	                            finding for f (function) or beyond the
	                            function findings (class) */
	double a, b, d;          /* owned ms per step: BASELINE, NEW, and the change */
	size_t nin;              /* findings of frames inside it folded into it (their
	                            change is in d) */
	double din;              /* and their change together */
	int by_exec;             /* a GPU function whose running time or time on the
	                            critical path changed while its owned time did not
	                            follow (it overlaps other work) */
	double ea, eb;           /* by_exec: its execution ms per step on both sides */
	int path;                /* qa, qb, cost are known (both sides have a path) */
	double qa, qb;           /* ms per step on the critical path */
	double cost;             /* what its path change cost the step (signed): the
	                            path change, at most the step's change the same
	                            way, else 0 */
	int reach;               /* cost is beyond the path threshold: the what-if */
	int aside;               /* the step time did not change beyond its threshold
	                            (nor with it): it ran beside other work */
	double ca, cb, pa, pb;   /* calls per step, per-call ms (function scope) */
	double ratio;            /* class scope: median per-call ratio NEW/BASELINE (NAN) */
	size_t nratio;           /* functions behind that ratio */
	size_t nspan;            /* span scope: annotations that changed (top[] lists
	                            the largest TOP_FUNCS) */
	size_t *pairs;           /* pair indices; NULL: the whole job */
	double *pd;              /* per pair: its difference */
	size_t npairs;
	size_t top[TOP_FUNCS];   /* class scope: functions that changed most */
	double topd[TOP_FUNCS];
	size_t ntop;
} cfind;

/* A pattern key pointer and class seen, and the function they map to. */
typedef struct cpkey {
	const char *p;
	size_t f;
	uint8_t cls;
} cpkey;

typedef struct cctx {
	const pt_compare_options *o;
	pt_report *r;
	cworker *w;
	size_t nw, nside[2];
	cfunc *f;
	size_t nf, fcap;
	pt_hmap fmap;            /* FNV-1a of (key, cls, grp) -> function index */
	cpkey *pkey;             /* per pattern key pointer seen: its function
	                            (summaries read with a shared key set repeat
	                            the same pointers) */
	size_t pkeycap, npkey;
	pt_hmap pmap;            /* ptr_hash of (pointer, class) -> index in pkey */
	size_t **pfun;           /* per worker, per pattern: function index, (size_t)-1 none */
	double *own, *exe, *calls, *pcall; /* [f * nw + w] */
	double *fnz;             /* [f * nw + w]: its step-to-step spread, NAN none */
	double *path, *pnz;      /* [f * nw + w]: ms per step on the critical path and
	                            its step-to-step spread; NAN: no path (compare_path.c) */
	size_t *slot;            /* func_noise's scratch, nf entries */
	size_t (*pair)[2];       /* (BASELINE worker, NEW worker) */
	size_t npair;
	double step[2], p10[2], p90[2], noise[2];
	double mean[2];          /* median over workers of their mean step: what the
	                            owned times add up to, and what dstep compares */
	size_t steps_total[2];
	double thr, dstep;       /* thr: the step time's threshold (classes, the summary) */
	double floor;            /* min_share x BASELINE's step: no change at or below */
	double cp[2][PT_CP_NKINDS];  /* critical path split, ms per step (median) */
	size_t ncp[2];           /* workers with a critical path, per side */
	char hint[512];          /* what the kernel families say changed, "" none */
	double common[2];
	int unrelated;
	cfind *fd;
	size_t nfd, fdcap;
	double *tmp, *tmp2;      /* scratch, nw + max steps */
	int oom;
} cctx;

static inline int sgn(double x) { return (x > 0) - (x < 0); }

/* compare_keys.c: the key pattern p is compared by (kernels by name,
 * Python stacks without module instance numbers, collectives by group,
 * the rest by key): p->key itself or buf (cap bytes). */
const char *cmp_func_key(const pt_pattern *p, char *buf, size_t cap);
/* Is a Python stack's innermost frame a thread blocked in a wait? */
int cmp_is_wait_stack(const char *key);

/* compare_keys.c: median over one side's workers of the owned ms per step
 * of class cls (uses c->tmp). */
double cmp_class_median(cctx *c, int side, int cls);

/* compare_path.c: each side's critical path split, ms per step (median
 * over the workers whose summaries have one), into c->cp and c->ncp. */
void cmp_critical_path(cctx *c);
/* compare.c: the index of the plain function (key, cls), (size_t)-1 none. */
size_t cmp_func_lookup(cctx *c, const char *key, int cls);
/* compare.c: sigma (PT_STATS_SIGMA_PER_MAD x MAD) of v[0..n); reorders v. */
double cmp_spread(double *v, size_t n, double *tmp);
/* compare_path.c: worker wi's ms per step on the critical path of each GPU
 * function (kernels, collectives by group, memory operations) and its
 * step-to-step spread, into c->path and c->pnz; sets c->oom. */
void cmp_func_path(cctx *c, size_t wi);
/* compare_path.c: f's side medians of them, and its path threshold. */
void cmp_func_path_sides(cctx *c, size_t f);
/* compare_path.c: what the kernel families say changed between the sides
 * (the GEMMs' precision, tensor cores or CUDA cores, their library, the
 * GPU), as one sentence into c->hint ("" when nothing). */
void cmp_family_hint(cctx *c);

/* compare_report.c: the "Compare" section of c->r from c's findings (sorted);
 * sets c->oom on allocation failure. */
void cmp_build_report(cctx *c, const pt_compare_side *base, const pt_compare_side *nw,
		      size_t nfailed_a, size_t nfailed_b);

#endif
