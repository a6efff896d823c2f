/*
 * compare.c - two runs of one job, BASELINE and NEW, compared function by
 * function (`perftracker compare`, docs/compare.md).  Reads worker
 * summaries only and builds the "Compare" section of a report.
 *
 * Every function of both sides (kernels by name, Python/CPU functions by
 * stack, collectives by group: compare_keys.c) gets two numbers per worker,
 * both in ms per profiled step: the time it owns under the class priority
 * rule (these sum to the step time, so their differences account for the
 * step time's) and its execution time (overlap included).  A change is a
 * finding when the owned time moved by more than the threshold (each side's
 * step-to-step noise, at least min_share of BASELINE's step) and the
 * execution time moved the same way: time a function merely lost to a
 * slower higher-priority one (Python covered by a longer kernel) is a
 * symptom, not a change.  Per-rank and per-class findings come after the
 * whole job's; compare_report.c turns them into the report.
 */
#include "compare_internal.h"
#include "../diagnose/diagnose.h"
#include "../analysis/stats.h"
#include "../util/hash.h"
#include "../util/xalloc.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pt_compare_options_default(pt_compare_options *o)
{
	o->min_share = 0.005;
	o->noise_k = 1.0;
	o->min_rel = 0.05;
	o->unrelated = 0.25;
	o->max_findings = 200;
}

static uint64_t fnv(const char *s, int cls)
{
	return pt_hash_fnv1a_str_from(PT_HASH_SEED ^ (uint64_t)cls, s);
}

/* Index of (cls, key), added when insert is set; (size_t)-1 when absent or
 * out of memory (c->oom). */
static size_t func_find(cctx *c, const char *key, int cls, int grp, int kind, int insert)
{
	uint64_t h = fnv(key, cls + 16 * grp);
	size_t it = 0;
	uint32_t v;
	cfunc *f;

	while ((v = pt_hmap_next(&c->fmap, h, &it)) != PT_HMAP_NONE) {
		f = &c->f[v];
		if (f->cls == cls && f->grp == grp && !strcmp(f->key, key))
			return v;
	}
	if (!insert)
		return (size_t)-1;
	if (c->nf >= PT_HMAP_NONE - 1 || X_GROW(c->f, c->fcap, c->nf + 1) ||
	    pt_hmap_put(&c->fmap, h, (uint32_t)c->nf)) {
		c->oom = 1;
		return (size_t)-1;
	}
	f = &c->f[c->nf];
	memset(f, 0, sizeof(*f));
	f->key = pt_report_strdup(c->r, key);
	if (!f->key) {
		c->oom = 1;
		return (size_t)-1;
	}
	f->hash = h;
	f->cls = (uint8_t)cls;
	f->kind = (uint8_t)kind;
	f->grp = (uint8_t)grp;
	f->grp_of = (size_t)-1;
	f->wait = cls == PT_C_PYTHON && !grp && cmp_is_wait_stack(key);
	return c->nf++;
}

size_t cmp_func_lookup(cctx *c, const char *key, int cls)
{
	return func_find(c, key, cls, 0, 0, 0);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* sigma from the MAD (PT_STATS_SIGMA_PER_MAD x MAD, the standard deviation of
 * normal data) of v[0..n); reorders v. */
double cmp_spread(double *v, size_t n, double *tmp)
{
	pt_robust st;

	pt_robust_stats(v, n, 0, tmp, &st);
	return PT_STATS_SIGMA_PER_MAD * st.mad;
}

/* ---- loading ----------------------------------------------------------- */

static void load_worker(cctx *c, size_t wi)
{
	cworker *w = &c->w[wi];
	const pt_summary *s = w->s;
	size_t i, k;
	int g;

	w->steps = s->nsteps ? (double)s->nsteps : 1.0;
	if (s->nsteps) {
		memcpy(c->tmp, s->step_ms, s->nsteps * sizeof(double));
		w->step_ms = pt_robust_median(c->tmp, s->nsteps, 0);
	} else {
		w->step_ms = s->window_ms;
	}
	for (k = 0; k < PT_C_COUNT; k++)
		w->own[k] = s->class_ms[k] / w->steps;
	for (i = 0; i < s->npatterns; i++) {
		const pt_pattern *p = &s->patterns[i];
		size_t f, at;

		if (p->cls >= PT_C_COUNT)
			continue;
		f = c->pfun[wi][i];
		if (f == (size_t)-1)
			continue;
		/* a collective group: the kernel that runs longest on each side */
		if (p->cls == PT_C_COMM && p->kind == PT_K_COMM_KERNEL &&
		    p->total_ms > c->f[f].knms[w->side]) {
			c->f[f].knms[w->side] = p->total_ms;
			c->f[f].kn[w->side] = p->key;
		}
		if (c->f[f].wait) {
			w->own[PT_C_PYTHON] -= p->bottleneck * s->window_ms / w->steps;
			w->own[PT_C_IDLE] += p->bottleneck * s->window_ms / w->steps;
		}
		/* the stack, then the group of stacks ending in its frame */
		for (g = 0; g < 2 && f != (size_t)-1; g++, f = c->f[f].grp_of) {
			at = f * c->nw + wi;
			c->own[at] += p->bottleneck * s->window_ms / w->steps;
			c->exe[at] += p->total_ms / w->steps;
			c->calls[at] += (double)p->count / w->steps;
			c->pcall[at] += p->median_ms * (double)p->count; /* divided below */
		}
	}
}

#define NOISE_MIN_STEPS 4

/* Each function's step-to-step spread on worker wi: the per-step ms of
 * its patterns (the summary's step_ms, kept for patterns of 0.2% of the
 * window and more; Python stacks inclusive), summed over the patterns it
 * merges and into its group, then PT_STATS_SIGMA_PER_MAD x MAD over the steps.  Robust:
 * two slow steps of six do not make a function noisy (they are what the
 * comparison is to find).  c->fnz stays NAN where no pattern has them. */
static void func_noise(cctx *c, size_t wi)
{
	const pt_summary *s = c->w[wi].s;
	size_t ns = s->nsteps, i, k, nused = 0, npool = 0;
	size_t *used = NULL;
	double *pool = NULL;
	int g;

	/* the spread of 2 or 3 steps says little (two steps give a MAD of
	 * half their difference): such workers keep the whole step's noise */
	if (ns < NOISE_MIN_STEPS)
		return;
	for (i = 0; i < s->npatterns; i++)
		npool += s->patterns[i].step_ms && s->patterns[i].nstep_ms == ns;
	if (!npool)
		return;
	used = x_malloc(2 * npool * sizeof(*used));
	pool = x_calloc(2 * npool * ns, sizeof(*pool));
	if (!used || !pool) {
		c->oom = 1;
		goto out;
	}
	for (i = 0; i < s->npatterns; i++) {
		const pt_pattern *p = &s->patterns[i];
		size_t f = c->pfun[wi][i];

		if (!p->step_ms || p->nstep_ms != ns || f == (size_t)-1 || c->f[f].wait)
			continue;
		for (g = 0; g < 2 && f != (size_t)-1; g++, f = c->f[f].grp_of) {
			double *v;
			if (c->slot[f] == (size_t)-1) {
				c->slot[f] = nused;
				used[nused++] = f;
			}
			v = pool + c->slot[f] * ns;
			for (k = 0; k < ns; k++)
				v[k] += p->step_ms[k];
		}
	}
	for (k = 0; k < nused; k++) {
		size_t f = used[k];
		c->fnz[f * c->nw + wi] = cmp_spread(pool + c->slot[f] * ns, ns, c->tmp);
		c->slot[f] = (size_t)-1;
	}
out:
	x_free(pool);
	x_free(used);
}

static size_t ptr_hash(const void *p, int cls)
{
	return (size_t)((((uint64_t)(uintptr_t)p >> 3) ^ (uint64_t)cls) * 11400714819323198485ULL >> 20);
}

/* The function index cached for pattern key pointer k of class cls, or
 * (size_t)-1.  Summaries read with a shared key set repeat the same key
 * pointers, so most patterns skip hashing their key text: 4,000 DLRM
 * summaries hold 1.2 M patterns whose Python stacks run to 500 bytes. */
static size_t ptr_get(const cctx *c, const char *k, int cls)
{
	size_t it = 0;
	uint32_t v;

	while ((v = pt_hmap_next(&c->pmap, ptr_hash(k, cls), &it)) != PT_HMAP_NONE)
		if (c->pkey[v].p == k && c->pkey[v].cls == cls)
			return c->pkey[v].f;
	return (size_t)-1;
}

static int ptr_put(cctx *c, const char *k, int cls, size_t f)
{
	if (c->npkey >= PT_HMAP_NONE - 1 || X_GROW(c->pkey, c->pkeycap, c->npkey + 1) ||
	    pt_hmap_put(&c->pmap, ptr_hash(k, cls), (uint32_t)c->npkey))
		return -1;
	c->pkey[c->npkey].p = k;
	c->pkey[c->npkey].f = f;
	c->pkey[c->npkey].cls = (uint8_t)cls;
	c->npkey++;
	return 0;
}

static int index_functions(cctx *c)
{
	size_t wi, i, f, g, n0;
	const char *key, *leaf;
	char buf[4096];

	for (wi = 0; wi < c->nw; wi++) {
		const pt_summary *s = c->w[wi].s;

		c->pfun[wi] = x_malloc((s->npatterns ? s->npatterns : 1) * sizeof(size_t));
		if (!c->pfun[wi])
			return -1;
		for (i = 0; i < s->npatterns; i++) {
			const pt_pattern *p = &s->patterns[i];

			c->pfun[wi][i] = (size_t)-1;
			if (p->cls >= PT_C_COUNT || !p->key)
				continue;
			f = ptr_get(c, p->key, p->cls);
			if (f != (size_t)-1) {
				c->pfun[wi][i] = f;
				continue;
			}
			n0 = c->nf;
			f = func_find(c, key = cmp_func_key(p, buf, sizeof(buf)), p->cls, 0, p->kind, 1);
			if (c->oom || ptr_put(c, p->key, p->cls, f))
				return -1;
			c->pfun[wi][i] = f;
			if (c->nf == n0)
				continue;
			/* A new kernel joins its family: a change spread over many
			 * kernel names (tile variants of one GEMM) is one change. */
			if (p->cls == PT_C_COMPUTE) {
				char fam[256];
				pt_kfamily kf;

				if (!pt_kernel_family(key, strlen(key), fam, sizeof(fam), &kf))
					continue;
				c->f[f].kf = kf;
				g = func_find(c, fam, PT_C_COMPUTE, 1, p->kind, 1);
				if (c->oom)
					return -1;
				c->f[g].fam = 1;
				c->f[g].kf = kf;
				c->f[f].grp_of = g;
				c->f[g].nmem++;
				continue;
			}
			/* A user annotation is compared by how long it lasts too. */
			c->f[f].span = p->cls == PT_C_PYTHON && p->kind == PT_K_ANNOTATION;
			/* A new Python stack joins the group of its innermost frame:
			 * one function called from many places (aten::mm) or a new
			 * one added at a different place each step. */
			if (p->cls != PT_C_PYTHON || c->f[f].wait)
				continue;
			leaf = strrchr(key, '|');
			if (!leaf)
				continue;
			g = func_find(c, leaf + 1, PT_C_PYTHON, 1, p->kind, 1);
			if (c->oom)
				return -1;
			c->f[f].grp_of = g;
			c->f[g].nmem++;
		}
	}
	return 0;
}

/* Medians of one side over its workers (absent = 0) of the values
 * v[f * nw + w]. */
static double side_median(cctx *c, const double *v, size_t f, int side, int present_only)
{
	size_t wi, n = 0;

	for (wi = 0; wi < c->nw; wi++) {
		if (c->w[wi].side != side)
			continue;
		if (present_only && !(c->calls[f * c->nw + wi] > 0))
			continue;
		c->tmp[n++] = v[f * c->nw + wi];
	}
	return n ? pt_robust_median(c->tmp, n, 0) : NAN;
}

static void side_steps(cctx *c, int side)
{
	size_t wi, n = 0, nn = 0, ns = 0;
	double *all = NULL;

	for (wi = 0; wi < c->nw; wi++)
		if (c->w[wi].side == side)
			ns += c->w[wi].s->nsteps ? c->w[wi].s->nsteps : 1;
	c->steps_total[side] = ns;
	all = x_malloc(ns * sizeof(*all));
	if (!all) {
		c->oom = 1;
		return;
	}
	ns = 0;
	/* Each worker's own step-to-step spread, where it has two steps or more. */
	for (wi = 0; wi < c->nw; wi++) {
		const pt_summary *s = c->w[wi].s;

		if (c->w[wi].side != side)
			continue;
		if (s->nsteps) {
			memcpy(all + ns, s->step_ms, s->nsteps * sizeof(double));
			ns += s->nsteps;
		} else {
			all[ns++] = s->window_ms;
		}
		c->tmp[n++] = c->w[wi].step_ms;
	}
	c->step[side] = pt_robust_median(c->tmp, n, 0);
	for (wi = 0, n = 0; wi < c->nw; wi++) {
		const pt_summary *s = c->w[wi].s;
		double sum = 0;
		size_t k;

		if (c->w[wi].side != side)
			continue;
		for (k = 0; k < s->nsteps; k++)
			sum += s->step_ms[k];
		c->tmp[n++] = s->nsteps ? sum / (double)s->nsteps : s->window_ms;
	}
	c->mean[side] = pt_robust_median(c->tmp, n, 0);
	qsort(all, ns, sizeof(*all), cmp_dbl);
	c->p10[side] = ns ? pt_stats_percentile(all, ns, 10) : NAN;
	c->p90[side] = ns ? pt_stats_percentile(all, ns, 90) : NAN;
	x_free(all);
	for (wi = 0; wi < c->nw; wi++) {
		const pt_summary *s = c->w[wi].s;
		double *v;

		if (c->w[wi].side != side || s->nsteps < 2)
			continue;
		v = x_malloc(2 * s->nsteps * sizeof(*v));
		if (!v) {
			c->oom = 1;
			return;
		}
		memcpy(v, s->step_ms, s->nsteps * sizeof(double));
		c->tmp2[nn++] = cmp_spread(v, s->nsteps, v + s->nsteps);
		x_free(v);
	}
	/* One step per worker gives no step-to-step noise: the floor
	 * (min_share) alone applies.  The spread across workers is not a
	 * stand-in: ranks' windows start at different points of the step. */
	c->noise[side] = nn ? pt_robust_median(c->tmp2, nn, 0) : 0;
}

/* Pair by rank when every worker of both sides has a rank, unique on its
 * side, and both sides have the same ranks (a job rescaled from 8 to 16
 * GPUs is compared as two populations). */
static int make_pairs(cctx *c)
{
	size_t i, j, found;

	if (c->nside[0] != c->nside[1])
		return 0;
	for (i = 0; i < c->nw; i++) {
		if (c->w[i].s->rank < 0)
			return 0;
		for (j = i + 1; j < c->nw; j++)
			if (c->w[j].side == c->w[i].side && c->w[j].s->rank == c->w[i].s->rank)
				return 0;
	}
	for (i = 0; i < c->nw; i++) {
		if (c->w[i].side != 0)
			continue;
		for (j = 0, found = 0; j < c->nw; j++)
			found += c->w[j].side == 1 && c->w[j].s->rank == c->w[i].s->rank;
		if (!found)
			return 0;
	}
	c->pair = x_malloc((c->nw ? c->nw : 1) * sizeof(*c->pair));
	if (!c->pair) {
		c->oom = 1;
		return -1;
	}
	for (i = 0; i < c->nw; i++) {
		if (c->w[i].side != 0)
			continue;
		for (j = 0; j < c->nw; j++)
			if (c->w[j].side == 1 && c->w[j].s->rank == c->w[i].s->rank) {
				c->pair[c->npair][0] = i;
				c->pair[c->npair][1] = j;
				c->npair++;
			}
	}
	return 0;
}

/* ---- findings ---------------------------------------------------------- */

/* A change: owned time moved beyond the threshold thr and execution time
 * the same way (at least half of it). */
static int is_change(double thr, double d, double de)
{
	return fabs(d) > thr && sgn(de) == sgn(d) && fabs(de) > thr / 2;
}

/* The same for function f, against its own threshold and, when both
 * sides ran it, min_rel of its larger side (base and new: what d is a
 * change between, its owned ms). */
static int is_fchange(const cctx *c, size_t f, double d, double de, double base, double new_)
{
	const cfunc *u = &c->f[f];

	if (u->na && u->nb && fabs(d) <= c->o->min_rel * fmax(fabs(base), fabs(new_)))
		return 0;
	return is_change(u->thr, d, de);
}

static cfind *add_find(cctx *c, int scope_class, size_t f, int change, double a, double b)
{
	cfind *x;

	if (X_GROW(c->fd, c->fdcap, c->nfd + 1)) {
		c->oom = 1;
		return NULL;
	}
	x = &c->fd[c->nfd++];
	memset(x, 0, sizeof(*x));
	x->scope_class = scope_class;
	x->f = f;
	x->change = change;
	x->a = a;
	x->b = b;
	x->d = b - a;
	x->ca = x->cb = x->pa = x->pb = x->ratio = NAN;
	return x;
}

/* A paired finding's pairs: hit[0..nh) (indices into c->pair) and their
 * differences hd[], copied into x, and x->d, their median.  -1 when out
 * of memory (c->oom set). */
static int set_pairs(cctx *c, cfind *x, const size_t *hit, const double *hd, size_t nh)
{
	memcpy(c->tmp, hd, nh * sizeof(*hd));
	x->d = pt_robust_median(c->tmp, nh, 0);
	x->pairs = x_malloc(nh * sizeof(*x->pairs));
	x->pd = x_malloc(nh * sizeof(*x->pd));
	if (!x->pairs || !x->pd) {
		c->oom = 1;
		return -1;
	}
	memcpy(x->pairs, hit, nh * sizeof(*hit));
	memcpy(x->pd, hd, nh * sizeof(*hd));
	x->npairs = nh;
	return 0;
}

/* x's calls per step and per-call ms: f's, both sides. */
static void take_calls(cfind *x, const cfunc *u)
{
	x->ca = u->ca;
	x->cb = u->cb;
	x->pa = u->pa;
	x->pb = u->pb;
}

static int find_change(int present_a, int present_b, double d)
{
	if (!present_a && present_b)
		return CH_APPEARED;
	if (present_a && !present_b)
		return CH_DISAPPEARED;
	return d > 0 ? CH_SLOWER : CH_FASTER;
}

/* The job-level finding of (scope, f) in direction s, or NULL. */
static const cfind *job_find(const cctx *c, int scope_class, size_t f, int s)
{
	size_t i;

	for (i = 0; i < c->nfd; i++)
		if (!c->fd[i].pairs && c->fd[i].scope_class == scope_class && c->fd[i].f == f &&
		    sgn(c->fd[i].d) == s)
			return &c->fd[i];
	return NULL;
}

/* Does one pair's change d stand out from the changes of all pairs (st:
 * their median and MAD)?  With one profiled step per worker there is no
 * step-to-step noise to go by, and ranks differ from run to run by a few
 * percent each; a rank's relative change counts when it is an outlier
 * among the ranks' relative changes by the rule of docs/diagnose.md
 * (robust z > 3.5).  When the other ranks did not change at all (MAD 0) any
 * change stands out. */
static int stands_out(const pt_robust *st, double d)
{
	return fabs(d - st->med) * PT_ROBUST_K > 3.5 * st->mad;
}

/* A pair's change relative to a, its BASELINE value or, for a function new
 * to the whole job, the job's change (ranks run different amounts of a
 * function; run-to-run noise is proportional): d / a, or +-1e9 when a is 0. */
static double rel_change(double d, double a)
{
	return a > 0 ? d / a : d > 0 ? 1e9 : d < 0 ? -1e9 : 0;
}

/* Sum of the whole-job findings of group g's member stacks. */
static double member_job_sum(const cctx *c, size_t g)
{
	double sum = 0;
	size_t i;

	for (i = 0; i < c->nfd; i++)
		if (!c->fd[i].pairs && !c->fd[i].scope_class && c->f[c->fd[i].f].grp_of == g)
			sum += c->fd[i].d;
	return sum;
}

static int gpu_func(const cfunc *u)
{
	return !u->grp && (u->cls == PT_C_COMPUTE || u->cls == PT_C_COMM || u->cls == PT_C_MEMORY);
}

/* Did f's time on the critical path change beyond its path threshold (and
 * min_rel of its larger side)? */
static int path_change(const cctx *c, const cfunc *u)
{
	double dq = u->qb - u->qa;

	return isfinite(dq) && fabs(dq) > u->qthr && fabs(dq) > c->o->min_rel * fmax(u->qa, u->qb);
}

/* What f's change on the critical path cost the step: the path change, at
 * most the step's own (mean) change the same way, else 0 (a kernel that
 * took the path over from other work as long cost nothing); NAN without a
 * path on both sides.  Judged, as f's other changes, against f's own
 * noise, not the spread of whole steps. */
static double path_cost(const cctx *c, const cfunc *u)
{
	double dq = u->qb - u->qa;

	if (!isfinite(dq))
		return NAN;
	return sgn(c->dstep) == sgn(dq) ? sgn(dq) * fmin(fabs(dq), fabs(c->dstep)) : 0;
}

/* Did f's change on the critical path reach the step (beyond its path
 * threshold)? */
static int path_reach(const cctx *c, const cfunc *u)
{
	return path_change(c, u) && fabs(path_cost(c, u)) > u->qthr;
}

/* x's time on the critical path (f's, both sides that ran it) and what its
 * change cost the step. */
static void take_path(const cctx *c, cfind *x, const cfunc *u)
{
	if (!isfinite(u->qb - u->qa) || !u->na || !u->nb)
		return;
	x->path = 1;
	x->qa = u->qa;
	x->qb = u->qb;
	x->cost = path_cost(c, u);
	x->reach = path_reach(c, u);
	x->aside = !x->reach && fabs(c->dstep) <= c->thr;
}

/* Whole-job findings of plain functions (groups 0), then of the groups of
 * Python stacks by innermost frame (groups 1): what a group changed beyond
 * its member stacks' findings. */
static void job_functions(cctx *c, int groups)
{
	size_t f;

	for (f = 0; f < c->nf; f++) {
		cfunc *u = &c->f[f];
		cfind *x;
		double sm = 0;

		if (u->wait || u->grp != groups || u->fam || (groups && u->nmem < 2))
			continue;
		if (groups)
			sm = member_job_sum(c, f);
		if (!is_fchange(c, f, u->mb - u->ma - sm, u->eb - u->ea - sm, u->ma, u->mb)) {
			/* a GPU function that overlaps other work (a collective
			 * beside compute, a kernel or copy on a side stream): its
			 * running time or its time on the critical path is the
			 * change, and what of it reached the step is said */
			double de = u->eb - u->ea;
			int run, onpath;
			if (groups || !gpu_func(u) || !u->na || !u->nb)
				continue;
			/* its running time moved beyond its own noise, or its time
			 * on the path did, the step followed and it ran longer too
			 * (a kernel that runs as long as before but now lies on the
			 * path is not why: the path was rerouted through it) */
			run = is_fchange(c, f, de, de, u->ea, u->eb);
			onpath = path_reach(c, u) && sgn(de) == sgn(u->qb - u->qa) &&
				 fabs(de) > u->thr / 2;
			if (!run && !onpath)
				continue;
			x = add_find(c, SC_FUNC, f, (run ? de : u->qb - u->qa) > 0 ? CH_SLOWER : CH_FASTER,
				     u->ma, u->mb);
			if (!x)
				return;
			x->by_exec = 1;
			x->ea = u->ea;
			x->eb = u->eb;
			take_calls(x, u);
			take_path(c, x, u);
			continue;
		}
		x = add_find(c, 0, f, sm != 0 ? (u->mb - u->ma - sm > 0 ? CH_SLOWER : CH_FASTER) :
			     find_change(u->na > 0, u->nb > 0, u->mb - u->ma), u->ma, u->mb);
		if (!x)
			return;
		x->d = u->mb - u->ma - sm;
		x->beyond = sm != 0;
		take_calls(x, u);
		if (gpu_func(u)) {
			x->ea = u->ea;
			x->eb = u->eb;
			take_path(c, x, u);
		}
	}
}

/* Kernel families whose change is one change spread over their kernels:
 * when a family's owned time moved beyond its own noise and no single
 * kernel of it holds 80% of that, the family is the finding, with its
 * whole change, and its kernels' own whole-job findings fold into it (12
 * new volta_sgemm tile variants are one new family, not 12 findings). */
static void job_families(cctx *c)
{
	size_t f, i, j;

	for (f = 0; f < c->nf; f++) {
		const cfunc *u = &c->f[f];
		double d = u->mb - u->ma, big = 0;
		cfind *x;

		if (!u->fam || u->nmem < 2 || !is_fchange(c, f, d, u->eb - u->ea, u->ma, u->mb))
			continue;
		for (i = 0; i < c->nfd; i++) {
			const cfind *m = &c->fd[i];
			if (!m->pairs && m->scope_class == SC_FUNC && c->f[m->f].grp_of == f &&
			    sgn(m->d) == sgn(d) && fabs(m->d) > big)
				big = fabs(m->d);
		}
		if (big >= 0.8 * fabs(d))
			continue;
		for (i = 0, j = 0; i < c->nfd; i++) {
			const cfind *m = &c->fd[i];
			if (!m->pairs && m->scope_class == SC_FUNC && c->f[m->f].grp_of == f)
				continue;  /* whole-job findings own no pairs: nothing to free */
			c->fd[j++] = c->fd[i];
		}
		c->nfd = j;
		x = add_find(c, SC_FUNC, f, find_change(u->na > 0, u->nb > 0, d), u->ma, u->mb);
		if (!x)
			return;
		take_calls(x, u);
	}
}

/* One finding per cause: a Python stack's whole-job finding folds into
 * the finding of its nearest ancestor frame (the key up to a '|') that
 * changed the same way: a data loader's `aten::to` that is gone with the
 * `aten::copy_` it ran is one change, not two findings (ResNet50's
 * DataLoader pair).  The ancestor's change takes in its frames' (owned
 * times are exclusive, so they add). */
static void fold_frames(cctx *c)
{
	size_t i, j, k;
	char key[4096];

	for (i = 0; i < c->nfd; i++) {
		cfind *x = &c->fd[i];
		const cfunc *u = &c->f[x->f];
		char *bar;

		if (x->pairs || x->scope_class != SC_FUNC || u->grp || u->cls != PT_C_PYTHON ||
		    strlen(u->key) >= sizeof(key))
			continue;
		strcpy(key, u->key);
		while ((bar = strrchr(key, '|'))) {
			size_t g;
			*bar = 0;
			g = func_find(c, key, PT_C_PYTHON, 0, 0, 0);
			if (g == (size_t)-1)
				continue;
			for (k = 0; k < c->nfd; k++)
				if (k != i && !c->fd[k].pairs && c->fd[k].scope_class == SC_FUNC &&
				    c->fd[k].f == g && sgn(c->fd[k].d) == sgn(x->d))
					break;
			if (k == c->nfd)
				continue;
			c->fd[k].d += x->d;
			c->fd[k].din += x->d + x->din;
			c->fd[k].nin += 1 + x->nin;
			x->f = (size_t)-1; /* folded: removed below */
			break;
		}
	}
	for (i = 0, j = 0; i < c->nfd; i++)
		if (c->fd[i].f != (size_t)-1)
			c->fd[j++] = c->fd[i];
	c->nfd = j;
}

/* The whole-job owned-time finding of f, or NULL. */
static const cfind *owned_find(const cctx *c, size_t f)
{
	size_t i;

	for (i = 0; i < c->nfd; i++)
		if (!c->fd[i].pairs && c->fd[i].scope_class == SC_FUNC && c->fd[i].f == f)
			return &c->fd[i];
	return NULL;
}

/* User annotations whose length changed: a thread that now waits longer
 * inside `## sparse_data_dist ##` makes the annotation last longer while
 * the time itself belongs to the kernels that ran meanwhile, so no
 * owned-time finding names it.  An annotation whose inclusive ms per step
 * moved beyond its own noise (its per-step values are inclusive) counts,
 * unless its own owned-time finding already says most of it, or an
 * annotation inside it (a longer key with it as prefix) holds 70% of its
 * change or more: the deepest annotation that holds the change is the one
 * named.  They make one finding per direction (SC_SPAN: the CPU side's
 * view of the step, overlapping the owned-time findings), its size the
 * largest change, listing up to TOP_FUNCS of them.  Whole job only. */
static void job_spans(cctx *c)
{
	size_t f, g, n = 0, *cand = NULL;
	unsigned char *held = NULL;
	int s;

	cand = x_malloc((c->nf + 1) * sizeof(*cand));
	held = x_calloc(c->nf + 1, 1);
	if (!cand || !held) {
		c->oom = 1;
		goto out;
	}
	for (f = 0; f < c->nf; f++) {
		const cfunc *u = &c->f[f];
		const cfind *of;
		double de = u->eb - u->ea;

		if (!u->span || u->grp || u->wait)
			continue;
		/* summaries keep annotations of 0.5% of the window and more: one
		 * near that line on one side only is not new or gone */
		if ((!u->na || !u->nb) && fmax(u->ea, u->eb) < 0.02 * c->step[u->na ? 0 : 1])
			continue;
		if (!is_fchange(c, f, de, de, u->ea, u->eb))
			continue;
		of = owned_find(c, f);
		if (of && fabs(of->d) >= 0.7 * fabs(de))
			continue;
		cand[n++] = f;
	}
	for (f = 0; f < n; f++) {
		const cfunc *u = &c->f[cand[f]];
		size_t kl = strlen(u->key);
		double de = u->eb - u->ea;

		for (g = 0; g < n; g++) {
			const cfunc *v = &c->f[cand[g]];
			double dv = v->eb - v->ea;
			if (g != f && !strncmp(v->key, u->key, kl) && v->key[kl] == '|' &&
			    sgn(dv) == sgn(de) && fabs(dv) >= 0.7 * fabs(de))
				break;
		}
		held[f] = g < n; /* a deeper one holds it */
	}
	for (s = 1; s >= -1; s -= 2) {
		cfind *x = NULL;
		size_t j;

		for (f = 0; f < n; f++) {
			const cfunc *u;
			double de;
			if (held[f])
				continue;
			u = &c->f[cand[f]];
			de = u->eb - u->ea;
			if (sgn(de) != s)
				continue;
			if (!x) {
				x = add_find(c, SC_SPAN, cand[f], find_change(u->na > 0, u->nb > 0, de),
					     u->ea, u->eb);
				if (!x)
					goto out;
			}
			/* the list, largest change first; the finding is the largest */
			for (j = x->ntop; j > 0 && fabs(x->topd[j - 1]) < fabs(de); j--)
				if (j < TOP_FUNCS) {
					x->top[j] = x->top[j - 1];
					x->topd[j] = x->topd[j - 1];
				}
			if (j < TOP_FUNCS) {
				x->top[j] = cand[f];
				x->topd[j] = de;
				if (x->ntop < TOP_FUNCS)
					x->ntop++;
			}
			x->nspan++;
		}
		if (x) {
			const cfunc *u = &c->f[x->top[0]];
			x->f = x->top[0];
			x->change = find_change(u->na > 0, u->nb > 0, x->topd[0]);
			x->a = u->ea;
			x->b = u->eb;
			x->d = x->topd[0];
			x->ca = u->ca;
			x->cb = u->cb;
		}
	}
out:
	x_free(held);
	x_free(cand);
}

/* Per pair: changes the whole-job comparison does not already show, one
 * finding per (function, direction) listing the pairs.  Where the whole job
 * has a finding for the function, a pair counts with what changed beyond
 * it (a rank whose copy of a new kernel is also slower). */
static void pair_functions(cctx *c, int groups)
{
	size_t f, p, i, k, *hit = NULL;
	double *hd = NULL, *bs = NULL, *be = NULL;
	pt_robust st;
	int s;

	if (!c->npair)
		return;
	hit = x_malloc(c->npair * sizeof(*hit));
	hd = x_malloc(c->npair * sizeof(*hd));
	bs = x_malloc(c->npair * sizeof(*bs));
	be = x_malloc(c->npair * sizeof(*be));
	if (!hit || !hd || !bs || !be) {
		c->oom = 1;
		goto out;
	}
	for (f = 0; f < c->nf; f++) {
		const cfind *jf = job_find(c, 0, f, 1);
		int beyond;

		if (c->f[f].wait || c->f[f].grp != groups || c->f[f].fam || (groups && c->f[f].nmem < 2))
			continue;
		if (!jf)
			jf = job_find(c, 0, f, -1);
		/* What the pair's change is measured beyond: the whole job's
		 * finding for f, and for a group its member stacks' findings. */
		for (p = 0; p < c->npair; p++) {
			bs[p] = jf ? jf->d : 0;
			be[p] = jf ? c->f[f].eb - c->f[f].ea - (groups ? member_job_sum(c, f) : 0) : 0;
		}
		beyond = jf != NULL;
		for (i = 0; groups && i < c->nfd; i++) {
			const cfind *x = &c->fd[i];

			if (x->scope_class || c->f[x->f].grp_of != f)
				continue;
			beyond = 1;
			for (p = 0; p < c->npair; p++) {
				if (!x->pairs) {
					bs[p] += x->d;
					be[p] += x->d;
				}
			}
			for (k = 0; x->pairs && k < x->npairs; k++) {
				bs[x->pairs[k]] += x->pd[k];
				be[x->pairs[k]] += x->pd[k];
			}
		}
		for (p = 0; p < c->npair; p++) {
			double a = c->own[f * c->nw + c->pair[p][0]];

			c->tmp[p] = rel_change(c->own[f * c->nw + c->pair[p][1]] - a - bs[p],
					       fmax(a, fabs(bs[p])));
		}
		pt_robust_stats(c->tmp, c->npair, 0, c->tmp2, &st);
		for (s = -1; s <= 1; s += 2) {
			size_t nh = 0;
			int pa = 0, pb = 0;
			cfind *x;
			double a, b;

			for (p = 0; p < c->npair; p++) {
				size_t ia = f * c->nw + c->pair[p][0], ib = f * c->nw + c->pair[p][1];
				double d = c->own[ib] - c->own[ia] - bs[p];

				if (sgn(d) != s ||
				    !is_fchange(c, f, d, c->exe[ib] - c->exe[ia] - be[p], c->own[ia],
						c->own[ib]) ||
				    !stands_out(&st, rel_change(d, fmax(c->own[ia], fabs(bs[p])))))
					continue;
				hit[nh] = p;
				hd[nh++] = d;
				pa |= c->calls[ia] > 0;
				pb |= c->calls[ib] > 0;
			}
			if (!nh)
				continue;
			for (k = 0; k < nh; k++)
				c->tmp[k] = c->own[f * c->nw + c->pair[hit[k]][0]];
			a = pt_robust_median(c->tmp, nh, 0);
			for (k = 0; k < nh; k++)
				c->tmp[k] = c->own[f * c->nw + c->pair[hit[k]][1]];
			b = pt_robust_median(c->tmp, nh, 0);
			x = add_find(c, 0, f, beyond ? (s > 0 ? CH_SLOWER : CH_FASTER) : find_change(pa, pb, s),
				     a, b);
			if (!x)
				goto out;
			if (set_pairs(c, x, hit, hd, nh))
				goto out;
			x->beyond = beyond;
			x->ca = x->cb = x->pa = x->pb = 0;
			for (k = 0; k < nh; k++) {
				size_t ia = f * c->nw + c->pair[hit[k]][0], ib = f * c->nw + c->pair[hit[k]][1];

				x->ca += c->calls[ia] / (double)nh;
				x->cb += c->calls[ib] / (double)nh;
				x->pa += c->pcall[ia] / (double)nh;
				x->pb += c->pcall[ib] / (double)nh;
			}
			if (!pa)
				x->pa = NAN;
			if (!pb)
				x->pb = NAN;
		}
	}
out:
	x_free(hit);
	x_free(hd);
	x_free(bs);
	x_free(be);
}

/* How much of the change of class cls on pair p (or the whole job, p =
 * -1) the function findings already account for (signed). */
static double explained(const cctx *c, int cls, size_t p)
{
	double sum = 0;
	size_t i, k;

	for (i = 0; i < c->nfd; i++) {
		const cfind *x = &c->fd[i];

		if (x->scope_class || c->f[x->f].cls != cls)
			continue;
		if (!x->pairs) {
			sum += x->d;
			continue;
		}
		if (p == (size_t)-1)
			continue;
		for (k = 0; k < x->npairs; k++)
			if (x->pairs[k] == p)
				sum += x->pd[k];
	}
	return sum;
}

/* Has function f a finding (whole job, or one naming pair p)? */
static int has_finding(const cctx *c, size_t f, size_t p)
{
	size_t i, k;

	for (i = 0; i < c->nfd; i++) {
		const cfind *x = &c->fd[i];

		if (x->scope_class || x->f != f)
			continue;
		if (!x->pairs)
			return 1;
		for (k = 0; k < x->npairs; k++)
			if (x->pairs[k] == p)
				return 1;
	}
	return 0;
}

/* The functions of class cls that changed most (by execution time) over the
 * given pairs (NULL: the whole job), and their median per-call ratio. */
static void class_detail(cctx *c, cfind *x, int cls)
{
	size_t f, k, nr = 0, cap = 0;
	double *ratios = NULL;

	x->ntop = 0;
	for (f = 0; f < c->nf; f++) {
		double de = 0;
		size_t j;

		if (c->f[f].cls != cls || c->f[f].wait || c->f[f].grp)
			continue;
		if (has_finding(c, f, x->pairs ? x->pairs[0] : (size_t)-1))
			continue;
		if (!x->pairs) {
			de = c->f[f].eb - c->f[f].ea;
			if (c->f[f].na && c->f[f].nb && c->f[f].pa > 0 && c->f[f].pb > 0) {
				if (X_GROW(ratios, cap, nr + 1))
					goto oom;
				ratios[nr++] = c->f[f].pb / c->f[f].pa;
			}
		} else {
			for (k = 0; k < x->npairs; k++) {
				size_t ia = f * c->nw + c->pair[x->pairs[k]][0];
				size_t ib = f * c->nw + c->pair[x->pairs[k]][1];

				de += (c->exe[ib] - c->exe[ia]) / (double)x->npairs;
				if (c->pcall[ia] > 0 && c->pcall[ib] > 0) {
					if (X_GROW(ratios, cap, nr + 1))
						goto oom;
					ratios[nr++] = c->pcall[ib] / c->pcall[ia];
				}
			}
		}
		if (sgn(de) != sgn(x->d))
			continue;
		/* insertion into the top list, largest |de| first */
		for (j = x->ntop; j > 0 && fabs(x->topd[j - 1]) < fabs(de); j--) {
			if (j < TOP_FUNCS) {
				x->top[j] = x->top[j - 1];
				x->topd[j] = x->topd[j - 1];
			}
		}
		if (j < TOP_FUNCS) {
			x->top[j] = f;
			x->topd[j] = de;
			if (x->ntop < TOP_FUNCS)
				x->ntop++;
		}
	}
	if (nr) {
		x->ratio = pt_robust_median(ratios, nr, 0);
		x->nratio = nr;
	}
	x_free(ratios);
	return;
oom:
	x_free(ratios);
	c->oom = 1;
}

/* The change of a class's execution time over the whole job (p = -1) or
 * pair p, summed over its functions.  A function on one side only counts
 * when it owns a real share there; a Python stack on one side only never
 * does: summaries drop stacks owning under 0.05% of the window
 * (docs/summary.md), and a stack a longer kernel now covers owns nothing, so
 * its absence says nothing about how long it ran. */
static double class_exec_delta(const cctx *c, int cls, size_t p)
{
	double sum = 0;
	size_t f;

	for (f = 0; f < c->nf; f++) {
		const cfunc *u = &c->f[f];

		if (u->cls != cls || u->wait || u->grp)
			continue;
		if (p == (size_t)-1) {
			if ((!u->na || !u->nb) && (cls == PT_C_PYTHON || fmax(u->ma, u->mb) < c->thr / 2))
				continue;
			sum += u->eb - u->ea;
		} else {
			size_t ia = f * c->nw + c->pair[p][0], ib = f * c->nw + c->pair[p][1];

			if ((!(c->calls[ia] > 0) || !(c->calls[ib] > 0)) &&
			    (cls == PT_C_PYTHON || fmax(c->own[ia], c->own[ib]) < c->thr / 2))
				continue;
			sum += c->exe[ib] - c->exe[ia];
		}
	}
	return sum;
}

/* Classes that changed beyond what their function findings account for:
 * many functions a little each (a slower GPU makes every kernel 1.3x
 * longer, none of them above the noise alone). */
static void class_findings(cctx *c)
{
	size_t k, p, *hit = NULL;
	double *hd = NULL, *ex_p = NULL;
	pt_robust st;

	hit = x_malloc((c->npair ? c->npair : 1) * sizeof(*hit));
	hd = x_malloc((c->npair ? c->npair : 1) * sizeof(*hd));
	ex_p = x_malloc((c->npair ? c->npair : 1) * sizeof(*ex_p));
	if (!hit || !hd || !ex_p) {
		c->oom = 1;
		goto out;
	}
	for (k = 0; k + 1 < NCLS; k++) {
		int cls = cmp_class_order[k], s;
		double a = cmp_class_median(c, 0, cls), b = cmp_class_median(c, 1, cls);
		double ex = explained(c, cls, (size_t)-1), jd = 0;
		cfind *x;

		if (is_change(c->thr, b - a - ex, class_exec_delta(c, cls, (size_t)-1) - ex)) {
			x = add_find(c, 1, (size_t)cls, b - a - ex > 0 ? CH_SLOWER : CH_FASTER, a, b);
			if (!x)
				goto out;
			x->d = b - a - ex;
			x->beyond = ex != 0;
			jd = x->d;
			class_detail(c, x, cls);
		}
		for (p = 0; p < c->npair; p++) {
			ex_p[p] = explained(c, cls, p) + jd;
			c->tmp[p] = rel_change(c->w[c->pair[p][1]].own[cls] - c->w[c->pair[p][0]].own[cls] -
					       ex_p[p], c->w[c->pair[p][0]].own[cls]);
		}
		pt_robust_stats(c->tmp, c->npair, 0, c->tmp2, &st);
		for (s = -1; s <= 1; s += 2) {
			size_t nh = 0, q;

			for (p = 0; p < c->npair; p++) {
				const cworker *wa = &c->w[c->pair[p][0]], *wb = &c->w[c->pair[p][1]];
				double e = ex_p[p];
				double d = wb->own[cls] - wa->own[cls] - e;

				if (sgn(d) != s || !stands_out(&st, rel_change(d, wa->own[cls])) ||
				    !is_change(c->thr, d, class_exec_delta(c, cls, p) - e))
					continue;
				hit[nh] = p;
				hd[nh++] = d;
			}
			if (!nh)
				continue;
			for (q = 0; q < nh; q++)
				c->tmp[q] = c->w[c->pair[hit[q]][0]].own[cls];
			a = pt_robust_median(c->tmp, nh, 0);
			for (q = 0; q < nh; q++)
				c->tmp[q] = c->w[c->pair[hit[q]][1]].own[cls];
			b = pt_robust_median(c->tmp, nh, 0);
			x = add_find(c, 1, (size_t)cls, s > 0 ? CH_SLOWER : CH_FASTER, a, b);
			if (!x)
				goto out;
			if (set_pairs(c, x, hit, hd, nh))
				goto out;
			x->beyond = fabs(b - a - x->d) > 1e-9;
			class_detail(c, x, cls);
		}
	}
out:
	x_free(hit);
	x_free(hd);
	x_free(ex_p);
}

/* The direction a finding moved: its owned change's, or for a GPU
 * function found by its running time or path, that change's. */
static int find_dir(const cfind *x)
{
	return x->by_exec ? (x->change == CH_SLOWER ? 1 : -1) : sgn(x->d);
}

/* How much a finding weighs in the ranking: its owned change; for a GPU
 * function with a critical path on both sides, at least what its path
 * change cost the step (an overlapped collective whose growth did not
 * reach the step weighs what it owns); without a path, a function found by
 * its running time weighs that change. */
static double find_size(const cfind *x)
{
	if (x->path)
		return x->by_exec ? fabs(x->cost) : fmax(fabs(x->d), x->reach ? fabs(x->cost) : 0);
	return x->by_exec ? fmax(fabs(x->d), fabs(x->eb - x->ea)) : fabs(x->d);
}

/* ctx: the step's direction of change (int, 0 none). */
static int cmp_find(const void *pa, const void *pb, void *ctx)
{
	const cfind *x = pa, *y = pb;
	int rank_dir = *(const int *)ctx;
	double ax = find_size(x), ay = find_size(y);
	int dx = find_dir(x) == rank_dir;
	int dy = find_dir(y) == rank_dir;

	/* what moved the way the step did first: "why is NEW slower" is
	 * answered by what got slower, then by what gave some back */
	if (rank_dir && dx != dy)
		return dx ? -1 : 1;
	/* a class's rest beyond its functions' findings after the named
	 * changes: "and all other kernels got slower" is what is left */
	if ((x->scope_class == SC_CLASS && x->beyond) != (y->scope_class == SC_CLASS && y->beyond))
		return x->scope_class == SC_CLASS && x->beyond ? 1 : -1;
	if (ax != ay)
		return ax < ay ? 1 : -1;
	if (!x->pairs != !y->pairs)
		return x->pairs ? 1 : -1;
	/* at equal size the annotation first (it names where the time went
	 * in the user's own words), then the function, then the class */
	return (x->scope_class + 1) % 3 - (y->scope_class + 1) % 3;
}

/* A side's noise in function f: the median over its workers of their own
 * step-to-step spread in it (NAN when none has per-step values); for two
 * populations of 3 workers or more, at least the uncertainty of the
 * side's median over workers (1.2533 x PT_STATS_SIGMA_PER_MAD x MAD / sqrt(n): workers run
 * different shares of a function, and the side's value is their median). */
static double side_noise(cctx *c, size_t f, int side)
{
	size_t wi, n = 0, nw = 0;
	double nz = NAN;

	for (wi = 0; wi < c->nw; wi++)
		if (c->w[wi].side == side && isfinite(c->fnz[f * c->nw + wi]))
			c->tmp[n++] = c->fnz[f * c->nw + wi];
	if (n)
		nz = pt_robust_median(c->tmp, n, 0);
	if (c->npair || c->nside[side] < 3)
		return nz;
	for (wi = 0; wi < c->nw; wi++)
		if (c->w[wi].side == side)
			c->tmp[nw++] = c->own[f * c->nw + wi];
	{
		double se = 1.2533 * cmp_spread(c->tmp, nw, c->tmp2) / sqrt((double)nw);
		return isfinite(nz) ? fmax(nz, se) : se;
	}
}

static void side_medians(cctx *c)
{
	size_t f, wi;

	/* per-call: sum(median x count) -> count-weighted median per call */
	for (f = 0; f < c->nf; f++)
		for (wi = 0; wi < c->nw; wi++) {
			size_t at = f * c->nw + wi;

			if (c->calls[at] > 0)
				c->pcall[at] /= c->calls[at] * c->w[wi].steps;
		}
	for (f = 0; f < c->nf; f++) {
		cfunc *u = &c->f[f];

		u->na = u->nb = 0;
		for (wi = 0; wi < c->nw; wi++)
			if (c->calls[f * c->nw + wi] > 0) {
				if (c->w[wi].side)
					u->nb++;
				else
					u->na++;
			}
		u->ma = side_median(c, c->own, f, 0, 0);
		u->mb = side_median(c, c->own, f, 1, 0);
		u->ea = side_median(c, c->exe, f, 0, 0);
		u->eb = side_median(c, c->exe, f, 1, 0);
		u->ca = side_median(c, c->calls, f, 0, 0);
		u->cb = side_median(c, c->calls, f, 1, 0);
		u->pa = side_median(c, c->pcall, f, 0, 1);
		u->pb = side_median(c, c->pcall, f, 1, 1);
		u->sa = side_noise(c, f, 0);
		u->sb = side_noise(c, f, 1);
		/* A function on one side only is a change by itself above the
		 * floor; else beyond its own noise too.  Without its own noise
		 * (workers of fewer than NOISE_MIN_STEPS steps, or a function too
		 * small for per-step values) the whole step's noise stands in:
		 * run-to-run variation is at least what one run's steps show. */
		if (!isfinite(u->sa) && !isfinite(u->sb)) {
			u->thr = c->thr;
		} else {
			u->thr = c->floor;
			if (u->na && u->nb) {
				double nz = fmax(isfinite(u->sa) ? u->sa : 0,
						 isfinite(u->sb) ? u->sb : 0);
				if (c->o->noise_k * nz > u->thr)
					u->thr = c->o->noise_k * nz;
			}
		}
	}
}

/* Share of each side's kernel and Python time spent in functions the other
 * side ran too: collectives, runtime calls and copies are named alike in
 * any PyTorch job, so they do not count as common ground. */
static void commonality(cctx *c)
{
	size_t f, wi;
	int side;

	for (side = 0; side < 2; side++) {
		double all = 0, both = 0;

		for (f = 0; f < c->nf; f++) {
			const cfunc *u = &c->f[f];
			double sum = 0;

			if ((u->cls != PT_C_COMPUTE && u->cls != PT_C_PYTHON) || u->grp)
				continue;
			for (wi = 0; wi < c->nw; wi++)
				if (c->w[wi].side == side)
					sum += c->exe[f * c->nw + wi];
			all += sum;
			if (u->na && u->nb)
				both += sum;
		}
		c->common[side] = all > 0 ? both / all : 1.0;
	}
	c->unrelated = c->common[0] < c->o->unrelated && c->common[1] < c->o->unrelated;
}

pt_report *pt_compare(const pt_compare_side *base, const pt_compare_side *nw,
		      const pt_compare_options *opt, pt_error *err)
{
	pt_compare_options def;
	cctx c;
	size_t i, k, maxsteps = 0, nfailed[2] = { 0, 0 };
	const pt_compare_side *sd[2] = { base, nw };
	pt_report *out = NULL;
	int side;

	if (!opt) {
		pt_compare_options_default(&def);
		opt = &def;
	}
	memset(&c, 0, sizeof(c));
	c.o = opt;
	for (side = 0; side < 2; side++) {
		for (i = 0; i < sd[side]->n; i++) {
			const pt_summary *s = sd[side]->s[i];

			if (!s || s->error) {
				nfailed[side]++;
				continue;
			}
			c.nside[side]++;
			if (s->nsteps > maxsteps)
				maxsteps = s->nsteps;
		}
		if (!c.nside[side]) {
			pt_error_subject(err, sd[side]->path ? sd[side]->path : "");
			pt_error_set(err, PT_EINVAL, -1, "%s: no readable worker",
				     side ? "NEW" : "BASELINE");
			return NULL;
		}
	}
	c.nw = c.nside[0] + c.nside[1];
	c.r = pt_report_new();
	c.w = x_calloc(c.nw, sizeof(*c.w));
	c.tmp = x_malloc((c.nw + maxsteps + 1) * sizeof(double));
	c.tmp2 = x_malloc((c.nw + maxsteps + 1) * sizeof(double));
	if (!c.r || !c.w || !c.tmp || !c.tmp2)
		goto oom;
	for (side = 0, k = 0; side < 2; side++)
		for (i = 0; i < sd[side]->n; i++) {
			const pt_summary *s = sd[side]->s[i];

			if (!s || s->error)
				continue;
			c.w[k].s = s;
			c.w[k++].side = side;
		}
	c.pfun = x_calloc(c.nw, sizeof(*c.pfun));
	if (!c.pfun || index_functions(&c))
		goto oom;
	if (c.nf && c.nw > SIZE_MAX / sizeof(double) / c.nf)
		goto oom;
	c.own = x_calloc(c.nf * c.nw, sizeof(double));
	c.exe = x_calloc(c.nf * c.nw, sizeof(double));
	c.calls = x_calloc(c.nf * c.nw, sizeof(double));
	c.pcall = x_calloc(c.nf * c.nw, sizeof(double));
	c.fnz = x_malloc((c.nf * c.nw + 1) * sizeof(double));
	c.path = x_malloc((c.nf * c.nw + 1) * sizeof(double));
	c.pnz = x_malloc((c.nf * c.nw + 1) * sizeof(double));
	c.slot = x_malloc((c.nf + 1) * sizeof(size_t));
	if (!c.own || !c.exe || !c.calls || !c.pcall || !c.fnz || !c.path || !c.pnz || !c.slot)
		goto oom;
	for (i = 0; i < c.nf * c.nw; i++)
		c.fnz[i] = c.path[i] = c.pnz[i] = NAN;
	for (i = 0; i < c.nf; i++)
		c.slot[i] = (size_t)-1;
	for (i = 0; i < c.nw; i++) {
		load_worker(&c, i);
		func_noise(&c, i);
		cmp_func_path(&c, i);
	}
	side_steps(&c, 0);
	side_steps(&c, 1);
	if (c.oom || make_pairs(&c))
		goto oom;
	c.floor = opt->min_share * c.step[0];
	c.thr = opt->noise_k * (c.noise[0] > c.noise[1] ? c.noise[0] : c.noise[1]);
	if (c.thr < c.floor)
		c.thr = c.floor;
	side_medians(&c);
	commonality(&c);
	cmp_critical_path(&c);
	for (i = 0; i < c.nf; i++)
		cmp_func_path_sides(&c, i);
	/* the owned times of a side add up to its mean step: the difference
	 * they account for is the means' (two slow steps of six move the mean,
	 * not the median) */
	c.dstep = c.mean[1] - c.mean[0];
	if (!c.unrelated) {
		job_functions(&c, 0);
		job_families(&c);
		pair_functions(&c, 0);
		job_functions(&c, 1);
		pair_functions(&c, 1);
		fold_frames(&c);
		job_spans(&c);
		class_findings(&c);
		cmp_family_hint(&c);
		if (c.oom)
			goto oom;
		int dir = fabs(c.dstep) > c.thr ? sgn(c.dstep) : 0;
		if (c.nfd > 1)
			qsort_r(c.fd, c.nfd, sizeof(*c.fd), cmp_find, &dir);
	}
	cmp_build_report(&c, base, nw, nfailed[0], nfailed[1]);
	if (c.oom || pt_report_oom(c.r))
		goto oom;
	out = c.r;
	c.r = NULL;
	goto out;
oom:
	pt_error_set(err, PT_ENOMEM, -1, "out of memory comparing the runs");
out:
	for (i = 0; i < c.nfd; i++) {
		x_free(c.fd[i].pairs);
		x_free(c.fd[i].pd);
	}
	x_free(c.fd);
	x_free(c.pair);
	x_free(c.own);
	x_free(c.exe);
	x_free(c.calls);
	x_free(c.pcall);
	x_free(c.fnz);
	x_free(c.path);
	x_free(c.pnz);
	x_free(c.slot);
	pt_hmap_free(&c.fmap);
	x_free(c.f);
	for (i = 0; c.pfun && i < c.nw; i++)
		x_free(c.pfun[i]);
	x_free(c.pfun);
	x_free(c.pkey);
	pt_hmap_free(&c.pmap);
	x_free(c.tmp);
	x_free(c.tmp2);
	x_free(c.w);
	pt_report_free(c.r);
	return out;
}
