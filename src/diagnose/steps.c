/*
 * steps.c - the step-to-step differential: a worker's steps compared with
 * its other steps, per function, with the robust statistics of the
 * worker-to-worker comparison.  A step is slow against the worker's
 * typical steps (stats.c pt_robust_typical: the slow ones cannot hide each
 * other); the slow steps of a worker are one finding, named by number with
 * what grew on their critical path ("steps 1011 and 1014 (2 of 6) take
 * 1.45x the others (166.3 vs 115.0 ms); both wait in `##
 * wait_sparse_data_dist ##` (... queued behind `ncclKernel_AllReduce...`)
 * (+47.4-50.4 ms on their critical paths, ...)").  Fewer than 3 steps are
 * no baseline: nothing is said.  A trace of one worker needs nothing else.
 *
 * When the summary carries the critical path (version 3) the extra time is
 * what grew on the slow steps' paths (critpath.c: the waiting annotation
 * and what it waited for, a kernel that grew, a CPU op that grew); without
 * it, what grew in the functions' own time.
 *
 * Flow: pt_summary steps + patterns' step_ms (src/analysis/patterns.c) +
 * critical path -> diag_steps -> report "Steps" (per worker, per step: time, extra over the
 * median, the function that takes it) + findings (category "Steps") ->
 * report.json, text, PerfDisplay's per-step view.  docs/diagnose.md
 * "Steps".
 */
#include "internal.h"
#include "sections.h"
#include "../report/keys.h"
#include "../util/strbuf.h"
#include "../util/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#define SEC PT_KEY_STEPS

/* A step is slow when it exceeds the typical steps' median by more than
 * this share of it and by more than z robust deviations of theirs (the
 * worker comparison's z, MAD floored at mad_floor of the median), or by
 * more than STEP_CLEAR of it however the typical steps spread (which then
 * sets the finding's confidence, not whether the step is named). */
#define STEP_REL 0.10
#define STEP_CLEAR 0.25
/* Fewer steps are no baseline: no step is slow, nothing is said. */
#define STEP_MIN 3
/* Findings for every worker up to this many workers; above, for the
 * worker whose slow steps cost most. */
#define PER_WORKER_MAX 8
/* Per-step causes are worked out for at most this many steps. */
#define CAUSE_STEPS_MAX 500

typedef struct cause {
	const pt_pattern *p;
	dexcess x;
} cause;

/* Median of v[0..n) (from a copy in tmp). */
static double median_of(const double *v, size_t n, double *tmp)
{
	if (!n)
		return 0;
	memcpy(tmp, v, n * sizeof(*v));
	return pt_robust_median(tmp, n, 0);
}

static int is_gpu_class(int cls)
{
	return cls == PT_C_COMPUTE || cls == PT_C_MEMORY || cls == PT_C_COMM;
}

void dx_excess(const double *v, const unsigned char *slow, size_t ns, double *tmp,
	       dexcess *out)
{
	size_t i, no = 0, nsl = 0;
	double sum = 0;

	out->lo = INFINITY;
	out->hi = -INFINITY;
	out->omax = 0;
	for (i = 0; i < ns; i++)
		if (!slow[i]) {
			tmp[no++] = v[i];
			if (v[i] > out->omax)
				out->omax = v[i];
		}
	out->omed = pt_robust_median(tmp, no, 0);
	for (i = 0; i < ns; i++)
		if (slow[i]) {
			nsl++;
			sum += v[i] - out->omed;
			out->lo = v[i] < out->lo ? v[i] : out->lo;
			out->hi = v[i] > out->hi ? v[i] : out->hi;
		}
	out->exc = nsl ? sum / (double)nsl : 0;
}

void dx_text(pt_sb *sb, const char *name, const dexcess *x, size_t nslow)
{
	pt_sb_addf(sb, "`%s`", name);
	if (nslow > 1 && x->hi - x->lo >= 0.05)
		pt_sb_addf(sb, ", %.1f-%.1f ms there", x->lo, x->hi);
	else
		pt_sb_addf(sb, ", %.1f ms there", x->hi);
	if (x->lo > x->omax)
		pt_sb_addf(sb, " against at most %.1f ms in the other steps (median %.1f ms)",
			   x->omax, x->omed);
	else
		pt_sb_addf(sb, " against a median of %.1f ms in the other steps", x->omed);
}

/* How much of the slow steps' (slow[i] != 0) excess pattern p explains. */
static void excess_of(const pt_pattern *p, const unsigned char *slow, size_t ns, double *tmp,
		      cause *out)
{
	out->p = p;
	dx_excess(p->step_ms, slow, ns, tmp, &out->x);
}

/* Is key a call stack under prefix (prefix itself excluded)? */
static int under(const char *key, const char *prefix)
{
	size_t n = strlen(prefix);

	return !strncmp(key, prefix, n) && key[n] == '|';
}

/* The function that makes the slow steps slow: a GPU function when one
 * explains half of the step excess (the CPU's waits are its symptoms),
 * else the most specific Python/CPU stack that holds 70% of the largest
 * CPU excess; runtime calls only when the trace has no stacks.  Returns 0
 * when nothing explains any of it. */
static int find_cause(const pt_summary *s, const unsigned char *slow, double step_exc,
		      double *tmp, cause *best)
{
	cause g = { 0 }, py = { 0 }, rt = { 0 }, x;
	size_t i;

	if (!pt_summary_whole(s))  /* a digest: no per-step function times */
		return 0;
	for (i = 0; i < s->npatterns; i++) {
		const pt_pattern *p = pt_summary_pat(s, i);
		if (!p->step_ms || p->nstep_ms != s->nsteps)
			continue;
		excess_of(p, slow, s->nsteps, tmp, &x);
		if (is_gpu_class(p->cls)) {
			if (!g.p || x.x.exc > g.x.exc)
				g = x;
		} else if (p->cls == PT_C_PYTHON) {
			if (!py.p || x.x.exc > py.x.exc)
				py = x;
		} else if (!rt.p || x.x.exc > rt.x.exc) {
			rt = x;
		}
	}
	if (g.p && g.x.exc > 0 && g.x.exc >= 0.5 * step_exc) {
		*best = g;
		return 1;
	}
	if (py.p && py.x.exc > 0) {
		cause top = py;
		/* the most specific stack under it holding 70% of its excess */
		for (i = 0; i < s->npatterns; i++) {
			const pt_pattern *p = pt_summary_pat(s, i);
			if (p->cls != PT_C_PYTHON || !p->step_ms || p->nstep_ms != s->nsteps ||
			    !under(p->key, py.p->key))
				continue;
			excess_of(p, slow, s->nsteps, tmp, &x);
			if (x.x.exc >= 0.7 * top.x.exc && strlen(p->key) > strlen(py.p->key))
				py = x;
		}
		*best = py;
		return 1;
	}
	if (rt.p && rt.x.exc > 0) {
		*best = rt;
		return 1;
	}
	if (g.p && g.x.exc > 0) {
		*best = g;
		return 1;
	}
	return 0;
}

static void cause_text(pt_sb *sb, const cause *cz, size_t nslow)
{
	char fb[160];

	dx_text(sb, pt_name_sentence(cz->p->key, cz->p->cls, fb, sizeof(fb)), &cz->x, nslow);
}

typedef struct wres {
	double extra;      /* total ms of the slow steps over the median */
	double thr;        /* the slow-step threshold (ms) */
	unsigned char *slow; /* per step (owned) */
	int has_slow;
	int64_t *slow_no;  /* the slow steps' numbers (owned), nslow of them */
	size_t nslow;
	double med;        /* the worker's median step */
} wres;

/* The worker's member of the "Steps" section: its median, MAD and
 * threshold, the slow steps, and per step its time and, for a step above
 * the median (up to CAUSE_STEPS_MAX steps), the function its extra time
 * is in.  tmp: scratch for find_cause.  -1 when out of memory (c->oom). */
static int steps_member(dctx *c, pt_rv *sec, const dworker *w, const pt_typical *ty,
			const unsigned char *slow, double *tmp)
{
	double med = ty->med;
	const pt_summary *s = w->s;
	size_t ns = s->nsteps, i;
	pt_rv *o, *arr, *sl;
	cause cz;
	dcp_cause pc;

	o = pt_rv_obj(c->rep, sec, w->id);
	pt_rv_num(c->rep, o, PT_KEY_MEDIAN_MS, median_of(s->step_ms, ns, tmp));
	pt_rv_num(c->rep, o, PT_KEY_TYPICAL_STEP_MS, med);
	pt_rv_num(c->rep, o, "MAD (ms)", ty->mad);
	pt_rv_num(c->rep, o, "threshold (ms)", ty->limit);
	sl = pt_rv_arr(c->rep, o, PT_KEY_SLOW_STEPS);
	for (i = 0; i < ns; i++)
		if (slow[i])
			pt_rv_int(c->rep, sl, NULL, s->step_numbers[i]);
	arr = pt_rv_arr(c->rep, o, PT_KEY_STEPS_LC);
	for (i = 0; i < ns; i++) {
		pt_rv *e = pt_rv_obj(c->rep, arr, NULL);
		pt_rv_int(c->rep, e, PT_KEY_NUMBER, s->step_numbers[i]);
		pt_rv_num(c->rep, e, PT_KEY_MS, s->step_ms[i]);
		pt_rv_num(c->rep, e, PT_KEY_EXTRA_MS, s->step_ms[i] - med);
		pt_rv_bool(c->rep, e, PT_KEY_SLOW, slow[i]);
		if (ns <= CAUSE_STEPS_MAX && s->step_ms[i] > med) {
			unsigned char *one = x_calloc(ns, 1);
			if (!one) {
				c->oom = 1;
				return -1;
			}
			one[i] = 1;
			if (diag_cpath_usable(s) &&
			    diag_cpath_cause(s, one, s->step_ms[i] - med, &pc)) {
				/* what the finding names: the frame that waits */
				if (pc.span && (pc.gpu || pc.gpu_idle)) {
					pc.func = pc.span;
					pc.x = pc.sx;
				}
				pt_rv_str(c->rep, e, PT_KEY_FUNCTION, pc.func->key);
				pt_rv_str(c->rep, e, PT_KEY_CLASS,
					  pt_class_name(pt_kind_class(pc.func->kind)));
				pt_rv_num(c->rep, e, "function (ms)", pc.x.hi);
				pt_rv_num(c->rep, e, "function in the other steps, median (ms)",
					  pc.x.omed);
				pt_rv_str(c->rep, e, "measured on", "critical path");
			} else if (find_cause(s, one, s->step_ms[i] - med, tmp, &cz)) {
				pt_rv_str(c->rep, e, PT_KEY_FUNCTION, cz.p->key);
				pt_rv_str(c->rep, e, PT_KEY_CLASS, pt_class_name(cz.p->cls));
				pt_rv_num(c->rep, e, "function (ms)", cz.x.hi);
				pt_rv_num(c->rep, e, "function in the other steps, median (ms)", cz.x.omed);
			}
			x_free(one);
		}
	}
	return 0;
}

/* The slow steps' clause (the finding's last arg), from what grew on their
 * critical path: where the step's thread waits and what for ("; both wait
 * in `A` (`call` for `copy`, queued behind `K` on stream 21) (+47.4-50.5
 * ms on their critical paths)"), or the function the extra time is in.
 * *fkey, *fkind: the function the finding is about; *grow: the growth on
 * the path (mean per slow step), NAN when no path says. */
static void cause_clause(pt_sb *sb, const pt_summary *s, const unsigned char *slow, size_t nslow,
			 double exc, double *tmp, const char **fkey, int *fkind, double *grow)
{
	const char *who = nslow == 1 ? "it waits" : nslow == 2 ? "both wait" : "all wait";
	char fb[160], gb[160];
	dcp_cause pc;
	cause cz;

	*grow = NAN;
	if (diag_cpath_usable(s) && diag_cpath_cause(s, slow, exc, &pc)) {
		const pt_cp_wait *w = pc.wait;
		*fkey = pc.func->key;
		*fkind = pc.func->kind;
		if (pc.span && (pc.gpu || pc.gpu_idle)) {
			/* the annotation that waits, and what for */
			*fkey = pc.span->key;
			*fkind = pc.span->kind;
			*grow = pc.sx.exc;
			pt_sb_addf(sb, "; %s in `%s`", nslow == 1 ? "it waits" : who,
				   pt_name_sentence(pc.span->key, PT_C_PYTHON, fb, sizeof(fb)));
			/* the annotation it blocked in, when it is inside */
			if (w && strcmp(w->span, pc.span->key) && strcmp(w->span, w->call))
				pt_sb_addf(sb, ", in `%s`", pt_name_sentence(w->span, PT_C_PYTHON, fb,
									      sizeof(fb)));
			if (w && pc.gpu_idle) {
				pt_sb_addf(sb, " (`%s`) with the GPU idle: nothing on the GPU to wait "
					   "for", pt_name_sentence(w->call, PT_C_RUNTIME, gb, sizeof(gb)));
			} else if (pc.gpu_idle) {
				pt_sb_adds(sb, " with the GPU idle: nothing on the GPU to wait for");
			} else if (w && w->behind && diag_cpath_same_gpu(w->behind, pc.gpu->key)) {
				pt_sb_addf(sb, " (`%s`", pt_name_sentence(w->call, PT_C_RUNTIME, gb, sizeof(gb)));
				diag_cpath_gpu_text(sb, w->target, w->target_stream, " for ");
				diag_cpath_gpu_text(sb, w->behind, w->behind_stream, ", queued behind ");
				pt_sb_adds(sb, ")");
			} else {
				diag_cpath_gpu_text(sb, pc.gpu->key, -1, " for ");
				if (w)
					pt_sb_addf(sb, " (`%s`)", pt_name_sentence(w->call, PT_C_RUNTIME, gb,
										    sizeof(gb)));
			}
			if (nslow > 1 && pc.sx.hi - pc.sx.lo >= 0.05)
				pt_sb_addf(sb, " (+%.1f-%.1f ms on their critical paths",
					   pc.sx.lo - pc.sx.omed, pc.sx.hi - pc.sx.omed);
			else
				pt_sb_addf(sb, " (+%.1f ms on %s critical path%s", pc.sx.hi - pc.sx.omed,
					   nslow > 1 ? "their" : "its", nslow > 1 ? "s" : "");
			pt_sb_addf(sb, ", against a median of %.1f ms in the other steps)", pc.sx.omed);
			return;
		}
		*grow = pc.x.exc;
		pt_sb_addf(sb, "; on %s critical path%s the extra time is in ",
			   nslow > 1 ? "their" : "its", nslow > 1 ? "s" : "");
		dx_text(sb, pt_name_sentence(pc.func->key, pt_kind_class(pc.func->kind), fb, sizeof(fb)),
			&pc.x, nslow);
		if (pc.grew_itself)
			pt_sb_adds(sb, ": the kernel itself ran longer");
		diag_cpath_wait_text(sb, s, &pc);
	} else if (find_cause(s, slow, exc, tmp, &cz)) {
		*fkey = cz.p->key;
		pt_sb_adds(sb, "; the extra time is in ");
		cause_text(sb, &cz, nslow);
	} else {
		pt_sb_adds(sb, "; no function's time explains the difference");
	}
}

/* "1011 and 1014", "3, 7 and 9" (at most 10 numbers). */
static void numbers(pt_sb *sb, const pt_summary *s, const unsigned char *slow)
{
	size_t i, n = 0, k = 0;

	for (i = 0; i < s->nsteps; i++)
		n += slow[i] != 0;
	for (i = 0; i < s->nsteps; i++) {
		if (!slow[i])
			continue;
		if (k)
			pt_sb_adds(sb, k + 1 == n ? " and " : ", ");
		if (k == 9 && n > 10) {
			pt_sb_addf(sb, "%zu more", n - k);
			break;
		}
		pt_sb_addf(sb, "%lld", (long long)s->step_numbers[i]);
		k++;
	}
}

/* A worker's step finding: its cause, numbers and the steps it names
 * (slow[i] set), its words (phrase.c): the steps' numbers, the verb and
 * the clause. */
static void step_fields(dctx *c, dfinding *f, const pt_summary *s, const unsigned char *slow,
			size_t nslow, const pt_typical *ty, double slow_ms, double grow,
			const char *clause)
{
	int64_t *no = x_malloc((s->nsteps ? s->nsteps : 1) * sizeof(*no));
	size_t i, nn = 0;
	pt_sb sb = { 0 };

	df_cause(f, nslow ? PT_CAUSE_SLOW_STEPS : PT_CAUSE_SLOWEST_STEP,
		 nslow ? PT_UNIT_COUNT : PT_UNIT_MS);
	df_metric(f, PT_KEY_TYPICAL_STEP_MS, ty->med, PT_UNIT_MS);
	df_metric(f, "steps", (double)s->nsteps, PT_UNIT_COUNT);
	df_metric(f, "slow step, mean (ms)", slow_ms, PT_UNIT_MS);
	df_metric(f, "slower (x)", ty->med > 0 ? slow_ms / ty->med : NAN, PT_UNIT_X);
	df_metric(f, "threshold (ms)", ty->limit, PT_UNIT_MS);
	if (nslow)
		df_metric(f, "robust deviations", ty->sigma > 0 ? (slow_ms - ty->med) / ty->sigma :
				  INFINITY, PT_UNIT_NONE);
	if (isfinite(grow))
		df_metric(f, "on the critical path (ms)", grow, PT_UNIT_MS);
	for (i = 0; no && s->step_numbers && i < s->nsteps; i++)
		if (slow[i])
			no[nn++] = s->step_numbers[i];
	if (!no)
		c->oom = 1;
	df_steps(c, f, no, nn);
	x_free(no);
	numbers(&sb, s, slow);
	if (sb.oom)
		c->oom = 1;
	df_arg(c, f, "%s", sb.buf ? sb.buf : "");
	df_arg(c, f, "%s", nslow == 1 ? "takes" : "take");
	df_arg(c, f, "%s", clause ? clause : "");
	pt_sb_free(&sb);
}

/* The slow steps of s: those far above its typical steps (the rule and its
 * numbers in *ty, docs/diagnose.md "Steps"); none under STEP_MIN steps.
 * tmp holds 2 ns doubles. */
static void slow_steps(const dctx *c, const pt_summary *s, unsigned char *slow, double *tmp,
		       pt_typical *ty)
{
	pt_typical_rule r = { c->o->z, STEP_REL, STEP_CLEAR, c->o->mad_floor };

	pt_robust_typical(s->step_ms, s->nsteps, &r, slow, tmp, ty);
	if (s->nsteps < STEP_MIN) {
		memset(slow, 0, s->nsteps);
		ty->nhigh = 0;
	}
}

static void worker_steps(dctx *c, pt_rv *sec, const dworker *w, int findings, int single,
			 wres *res)
{
	const pt_summary *s = w->s;
	size_t ns = s->nsteps, i, nslow = 0, imax = 0;
	double *tmp = NULL, med, lo = INFINITY, hi = -INFINITY, extra = 0, slow_ms = 0, grow = NAN;
	unsigned char *slow = NULL;
	pt_sb sb = { 0 };
	pt_typical ty;
	dfinding *f;
	const char *fkey = "";
	int fkind = -1;

	memset(res, 0, sizeof(*res));
	tmp = x_malloc(2 * (ns + 1) * sizeof(*tmp));
	slow = x_calloc(ns + 1, 1);
	if (!tmp || !slow) {
		c->oom = 1;
		goto out;
	}
	/* One threshold, from the typical steps, stated as a number in every
	 * sentence that uses it (docs/diagnose.md "Steps"). */
	slow_steps(c, s, slow, tmp, &ty);
	med = ty.med;
	res->thr = ty.limit;
	for (i = 0; i < ns; i++) {
		if (s->step_ms[i] > s->step_ms[imax])
			imax = i;
		if (slow[i]) {
			nslow++;
			extra += s->step_ms[i] - med;
			slow_ms += s->step_ms[i];
		}
		if (s->step_ms[i] < lo)
			lo = s->step_ms[i];
		if (s->step_ms[i] > hi)
			hi = s->step_ms[i];
	}
	if (nslow)
		slow_ms /= (double)nslow;
	res->extra = extra;
	res->has_slow = nslow > 0;
	if ((res->slow = x_malloc(ns + 1)))
		memcpy(res->slow, slow, ns);
	res->med = med;
	if (nslow && (res->slow_no = x_malloc(nslow * sizeof(*res->slow_no)))) {
		for (i = 0; i < ns; i++)
			if (slow[i])
				res->slow_no[res->nslow++] = s->step_numbers[i];
	}

	if (sec && steps_member(c, sec, w, &ty, slow, tmp))
		goto out;
	/* one or two steps are no baseline: nothing to say about them */
	if (!findings || ns < STEP_MIN || (!nslow && !single))
		goto out;
	if (nslow) {
		cause_clause(&sb, s, slow, nslow, extra / (double)nslow, tmp, &fkey, &fkind, &grow);
		pt_sb_addc(&sb, '.');
	} else {
		/* No step beyond the threshold: say so, and which is the
		 * slowest; it has no extra time to explain. */
		pt_sb_addf(&sb, "the %zu steps take %.1f-%.1f ms (typical %.1f ms); none is above the "
			   "slow-step threshold of %.1f ms (the typical steps' median plus the larger "
			   "of %.0f%% and %.1f robust deviations, at most %.0f%%); the slowest, step "
			   "%lld, takes %.1f ms.", ns, lo, hi, med, res->thr, STEP_REL * 100, c->o->z,
			   STEP_CLEAR * 100, (long long)s->step_numbers[imax], s->step_ms[imax]);
		slow_ms = s->step_ms[imax];
	}
	/* The finding's function is the one the sentence names.  A slowest
	 * step under the threshold is within the worker's own spread: weak
	 * (confidence.c), its impact its ms over the typical step. */
	f = df_add(c, DC_STEPS, w->id, fkey,
		   nslow ? PT_KEY_SLOW_STEPS : "slowest step", nslow ? (double)nslow : s->step_ms[imax],
		   med, nslow ? extra : s->step_ms[imax] - med);
	if (f)
		f->fkind = fkind;
	if (f && !sb.oom)
		step_fields(c, f, s, slow, nslow, &ty, slow_ms, grow, sb.buf);
	if (sb.oom)
		c->oom = 1;
out:
	pt_sb_free(&sb);
	x_free(slow);
	x_free(tmp);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Is step number n in the sorted list v[0..k)? */
static int has_no(const int64_t *v, size_t k, int64_t n)
{
	if (!k)
		return 0;
	return bsearch(&n, v, k, sizeof(*v), cmp_i64) != NULL;
}

/* Across workers: the step numbers slow on at least half of the workers
 * that have steps (and on two or more) are the job's slow steps, said once
 * (every worker of a lockstep job waits in the same step) instead of once
 * per worker.  Returns how many, their numbers sorted in *job (owned). */
static size_t job_steps(dctx *c, const wres *r, size_t nwith, int64_t **job)
{
	int64_t *all = NULL;
	size_t n = 0, i, j, k, nj = 0;

	*job = NULL;
	for (i = 0; i < c->nw; i++)
		n += r[i].nslow;
	if (n < 2 || !(all = x_malloc(n * sizeof(*all))) || !(*job = x_malloc(n * sizeof(**job)))) {
		if (n >= 2)
			c->oom = 1;
		x_free(all);
		return 0;
	}
	for (i = 0, k = 0; i < c->nw; i++)
		for (j = 0; j < r[i].nslow; j++)
			all[k++] = r[i].slow_no[j];
	qsort(all, n, sizeof(*all), cmp_i64);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && all[j] == all[i]; j++)
			;
		if (j - i >= 2 && 2 * (j - i) >= nwith)
			(*job)[nj++] = all[i];
	}
	x_free(all);
	return nj;
}

static void job_finding(dctx *c, const wres *r, const int64_t *job, size_t nj, size_t nwith)
{
	pt_sb sb = { 0 };
	double *ms = NULL, *meds = NULL, *tmp = NULL;
	size_t i, j, n = 0, nm = 0, worst = (size_t)-1, nslowest = 0, cap = c->nw;
	dfinding *f;

	/* A worker adds one value per job-slow step it has (several when nj
	 * > 1), so ms holds up to every worker's steps; tmp sorts ms or meds. */
	for (i = 0; i < c->nw; i++)
		cap += c->w[i].s->nsteps;
	ms = x_malloc(cap * sizeof(*ms));
	meds = x_malloc(c->nw * sizeof(*meds));
	tmp = x_malloc(cap * sizeof(*tmp));
	if (!ms || !meds || !tmp) {
		c->oom = 1;
		goto out;
	}
	for (i = 0; i < c->nw; i++) {
		const pt_summary *s = c->w[i].s;
		int any = 0;
		if (s->nsteps < 2 || !s->step_ms)
			continue;
		meds[nm++] = r[i].med;
		for (j = 0; j < s->nsteps; j++)
			if (has_no(job, nj, s->step_numbers[j]))
				ms[n++] = s->step_ms[j];
		for (j = 0; j < r[i].nslow; j++)
			any |= has_no(job, nj, r[i].slow_no[j]);
		nslowest += any;
		if (any && (worst == (size_t)-1 || r[i].extra > r[worst].extra))
			worst = i;
	}
	if (worst == (size_t)-1)
		goto out;
	pt_sb_adds(&sb, nj == 1 ? "step " : "steps ");
	for (i = 0; i < nj; i++)
		pt_sb_addf(&sb, "%s%lld", i == 0 ? "" : i + 1 == nj ? " and " : ", ", (long long)job[i]);
	pt_sb_adds(&sb, nj == 1 ? " is" : " are");
	f = df_add(c, DC_STEPS, c->w[worst].id, "", "slow steps (job)", (double)nj, median_of(meds, nm, tmp),
		   r[worst].extra);
	if (f && !sb.oom) {
		df_cause(f, PT_CAUSE_JOB_SLOW_STEPS, PT_UNIT_COUNT);
		df_metric(f, "median step (ms)", f->others, PT_UNIT_MS);
		df_metric(f, "workers slow there", (double)nslowest, PT_UNIT_COUNT);
		df_metric(f, "workers with several steps", (double)nwith, PT_UNIT_COUNT);
		df_metric(f, "slow step, median (ms)", median_of(ms, n, tmp), PT_UNIT_MS);
		df_steps(c, f, job, nj);
		df_arg(c, f, "%s", sb.buf ? sb.buf : "");
	}
	if (sb.oom)
		c->oom = 1;
out:
	pt_sb_free(&sb);
	x_free(tmp);
	x_free(meds);
	x_free(ms);
}

void diag_steps(dctx *c, int write)
{
	pt_rv *sec = NULL;
	wres *r = NULL;
	int64_t *job = NULL;
	size_t i, j, nslow = 0, nwith = 0, nj = 0, worst = (size_t)-1;

	r = x_calloc(c->nw + 1, sizeof(*r));
	if (!r) {
		c->oom = 1;
		return;
	}
	/* First the per-step data of every worker, findings only where few
	 * workers have slow steps. */
	for (i = 0; i < c->nw; i++) {
		if (c->w[i].s->nsteps < 2 || !c->w[i].s->step_ms)
			continue;
		nwith++;
		if (write && !sec)
			sec = pt_rv_obj(c->rep, pt_report_root(c->rep), SEC);
		worker_steps(c, sec, &c->w[i], 0, 0, &r[i]);
		if (r[i].has_slow) {
			nslow++;
			if (worst == (size_t)-1 || r[i].extra > r[worst].extra)
				worst = i;
		}
	}
	if (!write && c->nw > 1 && (nj = job_steps(c, r, nwith, &job)))
		job_finding(c, r, job, nj, nwith);
	for (i = 0; i < c->nw && !write; i++) {
		pt_summary *s = (pt_summary *)c->w[i].s;
		int single = c->nw == 1, own = 0;
		wres dummy;

		if (s->nsteps < 2 || !s->step_ms)
			continue;
		if (!single && !r[i].has_slow)
			continue;
		/* a worker whose slow steps are all the job's gets no finding of
		 * its own, except the one the job finding points to */
		for (j = 0; j < r[i].nslow; j++)
			own |= !has_no(job, nj, r[i].slow_no[j]);
		if (!single && !own && i != worst)
			continue;
		if (!single && nslow > PER_WORKER_MAX && i != worst && !own)
			continue;
		/* findings only: the data was written above */
		worker_steps(c, NULL, &c->w[i], 1, single, &dummy);
		x_free(dummy.slow_no);
		x_free(dummy.slow);
	}
	if (!write && !c->slow)
		c->slow = x_calloc(c->nw + 1, sizeof(*c->slow));
	for (i = 0; i < c->nw; i++) {
		x_free(r[i].slow_no);
		if (c->slow && !c->slow[i] && !write) {
			c->slow[i] = r[i].slow;
			r[i].slow = NULL;
		}
		x_free(r[i].slow);
	}
	x_free(job);
	x_free(r);
}
