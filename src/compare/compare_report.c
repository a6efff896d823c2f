/*
 * compare_report.c - the "Compare" section of a compare report
 * (docs/compare.md): both sides' step times, the class table, the ranked
 * findings with their sentences, the summary sentence that leads the text
 * report, the waterfall and the per-worker step times for the page.  Reads
 * what compare.c found; writes the report tree only.
 */
#include "compare_internal.h"
#include "../report/names.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../util/xalloc.h"
#include "../report/keys.h"

static const char *class_label(int cls)
{
	switch (cls) {
	case PT_C_COMPUTE: return "GPU compute";
	case PT_C_COMM: return "communication";
	case PT_C_MEMORY: return PT_KEY_GPU_MEMORY_OPERATIONS;
	case PT_C_RUNTIME: return "CUDA runtime";
	case PT_C_PYTHON: return "Python/CPU";
	default: return "idle";
	}
}

static const char *kind_label(int cls)
{
	switch (cls) {
	case PT_C_COMPUTE: return "kernel";
	case PT_C_COMM: return "collective";
	case PT_C_MEMORY: return "memory operation";
	case PT_C_RUNTIME: return "CUDA runtime call";
	default: return "Python/CPU function";
	}
}

/* The name a sentence uses (the report's one rule, src/report/names.c):
 * a stack's last frame, a kernel without "void ", template arguments and
 * parameters; a kernel family as its stem with "_*". */
static void short_name(const cfunc *u, char *out, size_t cap)
{
	if (u->fam)
		snprintf(out, cap, "%s_*", u->key);
	else
		pt_name_sentence(u->key, u->cls, out, cap);
}

/* "rank 3: " / "ranks 1, 3: " / "" for the whole job. */
static void who(const cctx *c, const cfind *x, pt_sb *sb)
{
	size_t k;

	if (!x->pairs)
		return;
	pt_sb_adds(sb, x->npairs > 1 ? "ranks " : "rank ");
	for (k = 0; k < x->npairs && k < 8; k++)
		pt_sb_addf(sb, "%s%lld", k ? ", " : "", (long long)c->w[c->pair[x->pairs[k]][0]].s->rank);
	if (k < x->npairs)
		pt_sb_addf(sb, " and %zu more", x->npairs - k);
	pt_sb_adds(sb, ": ");
}

static void fmt_ms(pt_sb *sb, double v)
{
	double a = fabs(v);

	pt_sb_addf(sb, a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : a >= 1 ? "%.2f" : "%.3f", v);
}

/* For a span finding on annotation key: what NEW's threads waited for
 * inside it on the critical path (the summaries' "waits": the call that
 * blocked, the GPU work it waited for and what that was queued behind),
 * the largest by path ms over NEW's workers and steps. */
static void span_wait(const cctx *c, const char *key, pt_sb *sb)
{
	const char *leaf = strrchr(key, '|');
	const pt_cp_wait *best = NULL;
	double bms = 0;
	size_t wi, j, k;
	char a[160], b[160];

	leaf = leaf ? leaf + 1 : key;
	for (wi = 0; wi < c->nw; wi++) {
		const pt_cpath *cp = c->w[wi].s->cpath;
		if (!c->w[wi].side || !cp)
			continue;
		for (j = 0; j < cp->nsteps; j++)
			for (k = 0; k < cp->steps[j].nwaits; k++) {
				const pt_cp_wait *w = &cp->steps[j].waits[k];
				if (w->span && !strcmp(w->span, leaf) && w->ms > bms) {
					bms = w->ms;
					best = w;
				}
			}
	}
	if (!best || !best->call || !best->target)
		return;
	pt_name_sentence(best->call, PT_C_RUNTIME, a, sizeof(a));
	if (!strncmp(best->target, "thread ", 7))
		/* a join: the frame waits for work it handed to another thread
		 * (autograd's engine runs backward on its own threads) */
		pt_sb_addf(sb, "; in NEW `%s` waits for another thread, %s", a, best->target);
	else {
		pt_name_sentence(best->target, PT_C_COMPUTE, b, sizeof(b));
		pt_sb_addf(sb, "; in NEW it waits in `%s` for `%s`", a, b);
	}
	if (best->behind) {
		pt_name_sentence(best->behind, PT_C_COMPUTE, b, sizeof(b));
		pt_sb_addf(sb, " queued behind `%s`", b);
	}
	pt_sb_adds(sb, ", up to ");
	fmt_ms(sb, bms);
	pt_sb_adds(sb, " ms of a step's critical path");
}

/* A collective group named with the kernels it ran: "`ring allreduce`
 * (collective: ncclKernel_AllReduce_RING_LL_Sum_float) ", or each side's
 * when they differ (another protocol or dtype of one collective,
 * RING_LL in BASELINE and RING_LL128 in NEW). */
static void kernels_named(const cfunc *u, const char *nm, pt_sb *sb)
{
	char k[2][160];
	int side;

	for (side = 0; side < 2; side++) {
		k[side][0] = 0;
		if (u->kn[side])
			pt_name_sentence(u->kn[side], PT_C_COMM, k[side], sizeof(k[side]));
	}
	if (k[0][0] && k[1][0] && strcmp(k[0], k[1]))
		pt_sb_addf(sb, "`%s` (collective: `%s` in BASELINE, `%s` in NEW) ", nm, k[0], k[1]);
	else
		pt_sb_addf(sb, "`%s` (collective: `%s`) ", nm, k[0][0] ? k[0] : k[1]);
}

/* ", 3 calls per step, 2.80x as long per call". */
static void calls_clause(const cfind *x, pt_sb *sb)
{
	if (x->change != CH_DISAPPEARED && isfinite(x->cb))
		pt_sb_addf(sb, ", %.3g call%s per step", x->cb, fabs(x->cb - 1) < 0.005 ? "" : "s");
	if (x->pa > 0 && x->pb > 0)
		pt_sb_addf(sb, ", %.2fx as long per call", x->pb / x->pa);
}

/* For a GPU function with a critical path on both sides: its time on the
 * path and what its change cost the step, with the what-if ("if it took as
 * long as in BASELINE, a step would take X ms instead of Y ms", from the
 * path change, not the running time: overlapped time costs no step time),
 * or that it did not reach the step. */
static void path_clause(const cctx *c, const cfind *x, pt_sb *sb)
{
	double dq = x->qb - x->qa;

	if (!x->path)
		return;
	pt_sb_adds(sb, "; on the critical path ");
	fmt_ms(sb, x->qa);
	pt_sb_adds(sb, " -> ");
	fmt_ms(sb, x->qb);
	pt_sb_addf(sb, " ms per step (%s", dq >= 0 ? "+" : "");
	fmt_ms(sb, dq);
	pt_sb_adds(sb, " ms)");
	if (x->reach) {
		char w[32], y[32];
		double a = fabs(c->mean[1]);
		int prec = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3;

		/* as fmt_ms writes them, with the digits that tell them apart
		 * (never "X instead of X") */
		do {
			snprintf(w, sizeof(w), "%.*f", prec, c->mean[1] - x->cost);
			snprintf(y, sizeof(y), "%.*f", prec, c->mean[1]);
		} while (!strcmp(w, y) && ++prec < 6);
		pt_sb_addf(sb, ": if it took as long as in BASELINE, a step would take %s ms instead "
			   "of %s ms (%.0f%% of the difference)", w, y, 100 * x->cost / c->dstep);
	} else if (fabs(dq) <= c->f[x->f].qthr) {
		pt_sb_adds(sb, ": it overlaps other work, the step does not wait for it");
	} else if (sgn(c->dstep) != sgn(dq)) {
		pt_sb_adds(sb, ", but the step time did not follow it: the path runs through it "
			   "instead of other work");
	} else {
		pt_sb_adds(sb, ", but the step time changed only ");
		fmt_ms(sb, c->dstep);
		pt_sb_adds(sb, " ms, within its noise");
	}
}

static void explain(const cctx *c, const cfind *x, double share, pt_sb *sb)
{
	char nm[160];

	who(c, x, sb);
	if (x->scope_class == SC_CLASS) {
		pt_sb_addf(sb, "%s got %s: ", class_label((int)x->f), cmp_change_name[x->change]);
		if (x->beyond)
			pt_sb_adds(sb, "in all ");
	} else if (x->scope_class == SC_SPAN) {
		size_t k;

		pt_sb_addf(sb, "On the CPU side, %s %s: ", x->nspan > 1 ? "annotations" : "an annotation",
			   x->d > 0 ? (x->nspan > 1 ? "last longer" : "lasts longer") :
				      (x->nspan > 1 ? "are shorter" : "is shorter"));
		for (k = 0; k < x->ntop; k++) {
			const cfunc *u = &c->f[x->top[k]];
			short_name(u, nm, sizeof(nm));
			pt_sb_addf(sb, "%s`%s` ", k ? ", " : "", nm);
			fmt_ms(sb, u->ea);
			pt_sb_adds(sb, " -> ");
			fmt_ms(sb, u->eb);
			pt_sb_addf(sb, " ms per step (%s", x->topd[k] >= 0 ? "+" : "");
			fmt_ms(sb, x->topd[k]);
			pt_sb_adds(sb, " ms)");
		}
		if (x->nspan > x->ntop)
			pt_sb_addf(sb, " and %zu more", x->nspan - x->ntop);
		pt_sb_addf(sb, ": the time inside %s, whatever owns it", x->nspan > 1 ? "them" : "it");
		if (isfinite(share))
			pt_sb_addf(sb, " (%s%.0f%% of the difference)", x->nspan > 1 ? "the largest is " : "",
				   share * 100);
		span_wait(c, c->f[x->f].key, sb);
		pt_sb_adds(sb, ".");
		return;
	} else {
		const cfunc *u = &c->f[x->f];

		short_name(u, nm, sizeof(nm));
		if (u->fam) {
			char m[64];
			pt_sb_addf(sb, "`%s` (kernel family, %zu kernels", nm, u->nmem);
			if (u->kf.gemm && u->kf.prec) {
				snprintf(m, sizeof(m), "%s", pt_precision_name(u->kf.prec));
				pt_sb_addf(sb, ": %s GEMMs%s%s%s", m,
					   u->kf.tensor_cores == 1 ? " on tensor cores" :
					   u->kf.tensor_cores == 0 ? " on CUDA cores" : "",
					   u->kf.lib[0] ? ", " : "", u->kf.lib);
			}
			pt_sb_adds(sb, ") ");
		} else if (u->grp) {
			pt_sb_addf(sb, "`%s` (%s, in %zu stacks) ", nm, kind_label(u->cls), u->nmem);
		} else if (u->kn[0] || u->kn[1]) {
			kernels_named(u, nm, sb);
		} else {
			pt_sb_addf(sb, "`%s` (%s) ", nm, u->span ? "annotation" : kind_label(u->cls));
		}
		pt_sb_adds(sb, x->beyond ? (x->d > 0 ? "got slower there: " : "got faster there: ") :
			   x->change == CH_APPEARED ? (u->fam ? "is new, BASELINE runs none of it: " :
							   "is new: ") :
			   x->change == CH_DISAPPEARED ? "is gone: " :
			   x->change == CH_SLOWER ? "got slower: " : "got faster: ");
	}
	if (x->by_exec) {
		fmt_ms(sb, x->ea);
		pt_sb_adds(sb, " -> ");
		fmt_ms(sb, x->eb);
		pt_sb_addf(sb, " ms per step running (%s", x->eb >= x->ea ? "+" : "");
		fmt_ms(sb, x->eb - x->ea);
		if (!x->path) {
			pt_sb_addf(sb, " ms; %s", x->d >= 0 ? "+" : "");
			fmt_ms(sb, x->d);
			pt_sb_adds(sb, " ms of it in the step time, the rest overlaps other work");
			if (isfinite(share))
				pt_sb_addf(sb, ", %.0f%% of the difference", share * 100);
		} else {
			pt_sb_adds(sb, " ms");
		}
		pt_sb_adds(sb, ")");
		calls_clause(x, sb);
		path_clause(c, x, sb);
		pt_sb_adds(sb, ".");
		return;
	}
	if (x->change == CH_APPEARED && !x->beyond) {
		fmt_ms(sb, x->b);
		pt_sb_adds(sb, " ms per step");
	} else if (x->change == CH_DISAPPEARED && !x->beyond) {
		pt_sb_adds(sb, "it took ");
		fmt_ms(sb, x->a);
		pt_sb_adds(sb, " ms per step in BASELINE");
	} else {
		fmt_ms(sb, x->a);
		pt_sb_adds(sb, " -> ");
		fmt_ms(sb, x->b);
		pt_sb_adds(sb, " ms per step");
	}
	pt_sb_addf(sb, " (%s", x->d >= 0 ? "+" : "");
	fmt_ms(sb, x->d);
	pt_sb_adds(sb, " ms");
	if (x->nin)
		pt_sb_addf(sb, " with the %zu frame%s inside it", x->nin, x->nin == 1 ? "" : "s");
	if (x->beyond)
		pt_sb_adds(sb, x->scope_class == SC_CLASS ? " beyond the functions listed" :
			   " beyond the whole job's change");
	/* with the path's what-if, its share is the one said */
	if (isfinite(share) && !x->reach)
		pt_sb_addf(sb, ", %.0f%% of the difference", share * 100);
	pt_sb_adds(sb, ")");
	if (x->scope_class == SC_FUNC) {
		calls_clause(x, sb);
		/* a GPU function that the step waits for more (or less), or
		 * one that runs beside other work */
		if (x->reach || x->aside) {
			pt_sb_adds(sb, "; it runs ");
			fmt_ms(sb, x->ea);
			pt_sb_adds(sb, " -> ");
			fmt_ms(sb, x->eb);
			pt_sb_adds(sb, " ms per step");
			path_clause(c, x, sb);
		}
	} else {
		size_t k;

		if (isfinite(x->ratio))
			pt_sb_addf(sb, "; its %ss take %.2fx as long per call (median of %zu)",
				   kind_label((int)x->f), x->ratio, x->nratio);
		for (k = 0; k < x->ntop; k++) {
			short_name(&c->f[x->top[k]], nm, sizeof(nm));
			pt_sb_addf(sb, "%s`%s` %s", k ? ", " : "; most: ", nm, x->topd[k] >= 0 ? "+" : "");
			fmt_ms(sb, x->topd[k]);
		}
	}
	pt_sb_adds(sb, ".");
}

static void summary_sentence(const cctx *c, const size_t *order, size_t nord, pt_sb *sb)
{
	char nm[160];
	size_t k, used = 0, nall = 0, pick[3], span = (size_t)-1, onpath = (size_t)-1;
	double all = 0, named = 0, back = 0, ratio = c->mean[0] > 0 ? c->mean[1] / c->mean[0] : NAN;

	if (c->unrelated) {
		pt_sb_addf(sb, "BASELINE and NEW have little in common: only %.0f%% of BASELINE's "
			   "kernel and Python time and %.0f%% of NEW's is in functions both ran, so "
			   "they look like different models or setups and their functions are not "
			   "compared one by one; step time ", c->common[0] * 100, c->common[1] * 100);
		fmt_ms(sb, c->step[0]);
		pt_sb_adds(sb, " ms vs ");
		fmt_ms(sb, c->step[1]);
		pt_sb_adds(sb, " ms.");
		return;
	}
	if (fabs(c->dstep) <= c->thr) {
		pt_sb_adds(sb, "NEW runs at BASELINE's speed per step (");
		fmt_ms(sb, c->mean[1]);
		pt_sb_adds(sb, " vs ");
		fmt_ms(sb, c->mean[0]);
		pt_sb_adds(sb, " ms, within the noise of ");
		fmt_ms(sb, c->thr);
		pt_sb_adds(sb, " ms)");
		if (!nord) {
			pt_sb_adds(sb, " and no function changed beyond it.");
			return;
		}
		pt_sb_adds(sb, ", but ");
		explain(c, &c->fd[order[0]], NAN, sb);
		return;
	}
	pt_sb_addf(sb, "NEW is %.2fx %s per step: ", c->dstep > 0 ? ratio : 1 / ratio,
		   c->dstep > 0 ? "slower" : "faster");
	fmt_ms(sb, fabs(c->dstep));
	pt_sb_addf(sb, " ms %s", c->dstep > 0 ? "more" : "less");
	if (fabs(c->step[1] - c->step[0]) <= c->thr) {
		pt_sb_adds(sb, " on average (its median step did not change: the time is in a few "
			   "slow steps)");
	} else if (fabs((c->step[1] - c->step[0]) - c->dstep) > c->thr) {
		pt_sb_adds(sb, " on average (the median step: ");
		fmt_ms(sb, fabs(c->step[1] - c->step[0]));
		pt_sb_addf(sb, " ms %s)", c->step[1] > c->step[0] ? "more" : "less");
	}
	/* the accounting: the owned-time changes (they add up to the step's),
	 * the three largest in the step's direction and their share; the
	 * annotations that last longer are said apart (their time overlaps) */
	for (k = 0; k < nord; k++) {
		const cfind *x = &c->fd[order[k]];

		if (!x->pairs && x->scope_class != SC_SPAN && sgn(x->d) == -sgn(c->dstep))
			back += x->d;
		if (x->pairs || sgn(x->d) != sgn(c->dstep))
			continue;
		if (x->scope_class == SC_SPAN) {
			if (span == (size_t)-1)
				span = order[k];
			continue;
		}
		if (used < 3 && !x->by_exec) {
			pick[used++] = order[k];
			named += x->d;
		}
		all += x->d;
		nall++;
	}
	if (!used) {
		pt_sb_adds(sb, ", spread over functions none of which changed beyond its own noise");
	} else {
		pt_sb_addf(sb, ", %.0f%% of it in ", 100 * named / c->dstep);
		for (k = 0; k < used; k++) {
			const cfind *x = &c->fd[pick[k]];

			if (k)
				pt_sb_adds(sb, k + 1 == used ? " and " : ", ");
			if (x->scope_class == SC_CLASS) {
				pt_sb_addf(sb, "%s time", class_label((int)x->f));
				continue;
			}
			short_name(&c->f[x->f], nm, sizeof(nm));
			pt_sb_addf(sb, "%s%s`%s` (%s", x->change == CH_APPEARED ? "the new " :
				   x->change == CH_DISAPPEARED ? "the removed " : "",
				   c->f[x->f].fam ? "kernels " : "", nm, x->d >= 0 ? "+" : "");
			fmt_ms(sb, x->d);
			pt_sb_adds(sb, " ms)");
		}
		if (nall > used)
			pt_sb_addf(sb, "; %.0f%% with the %zu other change%s", 100 * all / c->dstep,
				   nall - used, nall - used == 1 ? "" : "s");
		if (fabs(back) > c->thr) {
			pt_sb_addf(sb, "; what went the other way gives back ");
			fmt_ms(sb, fabs(back));
			pt_sb_adds(sb, " ms");
		}
		/* what the findings leave unexplained */
		if (fabs(all) < 0.8 * fabs(c->dstep))
			pt_sb_addf(sb, "; the other %.0f%% is spread over functions each within its "
				   "own noise", 100 * (1 - all / c->dstep));
	}
	/* the first GPU function whose path change reached the step that the
	 * owned accounting does not name (its owned change says little) */
	for (k = 0; k < nord && onpath == (size_t)-1; k++) {
		const cfind *x = &c->fd[order[k]];
		size_t j;

		if (x->pairs || !x->reach || sgn(x->cost) != sgn(c->dstep))
			continue;
		for (j = 0; j < used && pick[j] != order[k]; j++)
			;
		if (j == used)
			onpath = order[k];
	}
	if (onpath != (size_t)-1) {
		const cfind *x = &c->fd[onpath];

		short_name(&c->f[x->f], nm, sizeof(nm));
		pt_sb_addf(sb, "; `%s` %s the critical path by ", nm, x->cost > 0 ? "lengthens" : "shortens");
		fmt_ms(sb, fabs(x->cost));
		pt_sb_adds(sb, " ms per step");
		if (x->pa > 0 && x->pb > 0)
			pt_sb_addf(sb, " (%.2fx as long per call)", x->pb / x->pa);
	}
	if (span != (size_t)-1) {
		const cfind *x = &c->fd[span];

		short_name(&c->f[x->f], nm, sizeof(nm));
		pt_sb_addf(sb, "; on the CPU side `%s` lasts ", nm);
		fmt_ms(sb, fabs(x->d));
		pt_sb_addf(sb, " ms %s per step", x->d > 0 ? "longer" : "less");
		if (x->nspan > 1)
			pt_sb_addf(sb, " (and %zu other annotation%s)", x->nspan - 1,
				   x->nspan == 2 ? "" : "s");
	}
	pt_sb_adds(sb, ".");
	if (c->hint[0])
		pt_sb_addf(sb, " Kernel families: %s.", c->hint);
}

static void add_side(cctx *c, pt_rv *cmp, const char *key, const pt_compare_side *sd, int side,
		     size_t nfailed)
{
	pt_report *r = c->r;
	pt_rv *o = pt_rv_obj(r, cmp, key), *st;

	pt_rv_str(r, o, PT_KEY_PATH, sd->path ? sd->path : "");
	pt_rv_str(r, o, "input", sd->input ? sd->input : "summaries");
	pt_rv_int(r, o, PT_KEY_WORKERS, (int64_t)c->nside[side]);
	pt_rv_int(r, o, PT_KEY_FAILED, (int64_t)nfailed);
	pt_rv_int(r, o, PT_KEY_STEPS_LC, (int64_t)c->steps_total[side]);
	st = pt_rv_obj(r, o, PT_KEY_STEP_MS);
	pt_rv_num(r, st, PT_KEY_MEDIAN, c->step[side]);
	pt_rv_num(r, st, PT_KEY_MEAN, c->mean[side]);
	pt_rv_num(r, st, PT_KEY_P10, c->p10[side]);
	pt_rv_num(r, st, PT_KEY_P90, c->p90[side]);
	pt_rv_num(r, o, PT_KEY_NOISE_MS, c->noise[side]);
	pt_rv_num(r, o, "common_share", c->common[side]);
}

/* "classes": each class's median step time on both sides, the change
 * and its share of the step's change (null when the step did not
 * change beyond the threshold). */
static void add_classes(cctx *c, pt_rv *cmp)
{
	pt_report *r = c->r;
	pt_rv *arr = pt_rv_arr(r, cmp, PT_KEY_CLASSES), *o;
	size_t k;

	for (k = 0; k < NCLS; k++) {
		int cls = cmp_class_order[k];
		double a = cmp_class_median(c, 0, cls), b = cmp_class_median(c, 1, cls);

		o = pt_rv_obj(r, arr, NULL);
		pt_rv_str(r, o, PT_KEY_CLASS, pt_class_name(cls));
		pt_rv_num(r, o, PT_KEY_BASELINE_MS, a);
		pt_rv_num(r, o, PT_KEY_NEW_MS, b);
		pt_rv_num(r, o, PT_KEY_DELTA_MS, b - a);
		pt_rv_num_or_null(r, o, PT_KEY_SHARE, fabs(c->dstep) > c->thr ? (b - a) / c->dstep : NAN);
	}
}

/* "critical_path": each kind of time on the steps' critical paths, ms per
 * step on both sides (median over the workers whose summaries have one);
 * null when a side has none. */
static void add_critical_path(cctx *c, pt_rv *cmp)
{
	pt_report *r = c->r;
	pt_rv *arr, *o;
	int k;

	if (!c->ncp[0] || !c->ncp[1]) {
		pt_rv_null(r, cmp, PT_KEY_CRITICAL_PATH_LC);
		return;
	}
	arr = pt_rv_arr(r, cmp, PT_KEY_CRITICAL_PATH_LC);
	for (k = 0; k < PT_CP_NKINDS; k++) {
		if (k == PT_CP_WAIT)
			continue; /* waiting on another worker: the master's, not a summary's */
		o = pt_rv_obj(r, arr, NULL);
		pt_rv_str(r, o, PT_KEY_KIND, pt_cp_kind_name(k));
		pt_rv_num(r, o, PT_KEY_BASELINE_MS, c->cp[0][k]);
		pt_rv_num(r, o, PT_KEY_NEW_MS, c->cp[1][k]);
		pt_rv_num(r, o, PT_KEY_DELTA_MS, c->cp[1][k] - c->cp[0][k]);
	}
}

/* The cause kind of a change. */
static pt_cause change_cause(const cfind *x)
{
	if (x->scope_class == SC_SPAN || x->beyond)
		return x->d > 0 ? PT_CAUSE_GOT_SLOWER : PT_CAUSE_GOT_FASTER;
	return x->change == CH_APPEARED ? PT_CAUSE_APPEARED :
	       x->change == CH_DISAPPEARED ? PT_CAUSE_GONE :
	       x->change == CH_SLOWER ? PT_CAUSE_GOT_SLOWER : PT_CAUSE_GOT_FASTER;
}

/* The grade of a GPU function judged by its critical path: what its path
 * change cost the step against its path threshold (strong at twice it,
 * moderate above it, with the what-if); weak when the step did not follow
 * (it overlaps other work: noted, not the cause). */
static void path_grade(const cctx *c, const cfind *x, pt_finding *f, char *ev, size_t cap)
{
	const cfunc *u = &c->f[x->f];

	if (x->reach) {
		f->conf.apart = fabs(x->cost) / u->qthr;
		f->conf.level = f->conf.apart >= 2 ? "strong" : "moderate";
		f->conf.lost = c->mean[1] > 0 ? fabs(x->cost) / c->mean[1] : 0;
		f->impact_ms = fabs(x->cost);
		f->has_what_if = 1;
		f->what_if_ms = c->mean[1] - x->cost;
		f->instead_ms = c->mean[1];
		snprintf(ev, cap, "its time on the critical path changed %.3f ms per step, %.3f ms "
			 "of it in the step time, against its threshold of %.3f ms",
			 fabs(x->qb - x->qa), fabs(x->cost), u->qthr);
		return;
	}
	f->conf.level = "weak";
	f->conf.apart = u->qthr > 0 ? fabs(x->cost) / u->qthr : NAN;
	f->conf.lost = 0;
	snprintf(ev, cap, "it ran %.3f ms per step %s (threshold %.3f ms), but the step time did "
		 "not follow: %.3f ms of it on the critical path", fabs(x->eb - x->ea),
		 x->eb >= x->ea ? "longer" : "shorter", u->thr, fabs(x->cost));
}

/* x in the report's finding model (report.h), its typed keys written into
 * o.  Its grade is compare's own (every finding is beyond its threshold):
 * "strong" when the change is at least twice its threshold, else
 * "moderate"; never "weak". */
static void model_finding(cctx *c, pt_rv *o, const cfind *x, double share, const char *text)
{
	enum { MAXW = 64 };
	const char *ws[MAXW], *ls[MAXW];
	char lb[MAXW][32], ev[160];
	pt_metric m[12];
	pt_finding f;
	size_t k, nm = 0;
	double thr = x->scope_class == SC_CLASS ? c->thr : c->f[x->f].thr;
	double apart = thr > 0 ? fabs(x->d) / thr : NAN;

	memset(&f, 0, sizeof(f));
	f.category = "Compare";
	if (!x->pairs) {
		ws[0] = ls[0] = "all";
		f.nworkers = 1;
	}
	for (k = 0; x->pairs && k < x->npairs && k < MAXW; k++) {
		int64_t rk = c->w[c->pair[x->pairs[k]][0]].s->rank;
		ws[k] = c->w[c->pair[x->pairs[k]][1]].s->worker;
		snprintf(lb[k], sizeof(lb[k]), "rank %lld", (long long)rk);
		ls[k] = rk >= 0 ? lb[k] : ws[k];
		f.nworkers = k + 1;
	}
	f.workers = ws;
	f.labels = ls;
	f.function = x->scope_class == SC_CLASS ? class_label((int)x->f) : c->f[x->f].key;
	f.metric = "delta_ms";
	f.value = x->d;
	f.others = NAN;
	f.impact_ms = fabs(x->d);
	f.cause = change_cause(x);
	f.view = "compare";
	m[nm++] = (pt_metric){ "delta_ms", x->d, PT_UNIT_MS_STEP };
	m[nm++] = (pt_metric){ "baseline_ms", x->a, PT_UNIT_MS_STEP };
	m[nm++] = (pt_metric){ "new_ms", x->b, PT_UNIT_MS_STEP };
	m[nm++] = (pt_metric){ "share", share, PT_UNIT_SHARE };
	if (x->scope_class != SC_CLASS) {
		m[nm++] = (pt_metric){ "baseline_calls", x->ca, PT_UNIT_COUNT };
		m[nm++] = (pt_metric){ "new_calls", x->cb, PT_UNIT_COUNT };
	}
	if (x->pa > 0 && x->pb > 0)
		m[nm++] = (pt_metric){ "per call (x)", x->pb / x->pa, PT_UNIT_X };
	if (x->by_exec) {
		m[nm++] = (pt_metric){ PT_KEY_BASELINE_RUNNING_MS, x->ea, PT_UNIT_MS_STEP };
		m[nm++] = (pt_metric){ PT_KEY_NEW_RUNNING_MS, x->eb, PT_UNIT_MS_STEP };
	}
	if (x->path) {
		m[nm++] = (pt_metric){ PT_KEY_BASELINE_PATH_MS, x->qa, PT_UNIT_MS_STEP };
		m[nm++] = (pt_metric){ PT_KEY_NEW_PATH_MS, x->qb, PT_UNIT_MS_STEP };
		m[nm++] = (pt_metric){ PT_KEY_PATH_COST_MS, x->cost, PT_UNIT_MS_STEP };
	}
	f.metrics = m;
	f.nmetrics = nm;
	f.args = &text;
	f.nargs = 1;
	f.conf.level = isfinite(apart) && apart >= 2 ? "strong" : "moderate";
	/* a share of the longer of the two steps: a function of a slower run
	 * can change by more than the baseline's whole step (the HTA
	 * control/filter pair: 2.61), and summed running time across
	 * streams by more than either step, hence the bound */
	f.conf.lost = fmax(c->mean[0], c->mean[1]) > 0 ?
		      fmin(fabs(x->d) / fmax(c->mean[0], c->mean[1]), 1.0) : 0;
	f.conf.apart = apart;
	f.conf.noise_ms = NAN;
	snprintf(ev, sizeof(ev), "changed %.3f ms per step against its threshold of %.3f ms",
		 fabs(x->d), thr);
	if (x->path && (x->by_exec || x->reach || x->aside))
		path_grade(c, x, &f, ev, sizeof(ev));
	f.conf.evidence = ev;
	if (pt_report_add_finding_in(c->r, o, &f))
		c->oom = 1;
}

/* One finding (the rank-th) as an object of arr: what changed, where
 * (a class, or a function and its kind), on which workers, the times and
 * calls on both sides, and its explanation (written through sb). */
static void add_finding(cctx *c, pt_rv *arr, const cfind *x, size_t rank, pt_sb *sb)
{
	pt_report *r = c->r;
	double share = !x->pairs && fabs(c->dstep) > c->thr ? x->d / c->dstep : NAN;
	pt_rv *o = pt_rv_obj(r, arr, NULL), *a2;
	char nm[160];
	size_t k;

	pt_rv_int(r, o, PT_KEY_RANK, (int64_t)rank);
	pt_rv_str(r, o, PT_KEY_CHANGE, cmp_change_name[x->change]);
	pt_rv_str(r, o, "scope", x->scope_class == SC_CLASS ? "class" :
		  x->scope_class == SC_SPAN ? "span" : "function");
	if (x->scope_class == SC_CLASS) {
		pt_rv_str(r, o, PT_KEY_CLASS, pt_class_name((int)x->f));
		pt_rv_str(r, o, PT_KEY_FUNCTION, class_label((int)x->f));
		pt_rv_str(r, o, PT_KEY_NAME, class_label((int)x->f));
	} else {
		pt_rv_str(r, o, PT_KEY_CLASS, pt_class_name(c->f[x->f].cls));
		pt_rv_str(r, o, PT_KEY_KIND, c->f[x->f].span ? "annotation" : kind_label(c->f[x->f].cls));
		if (c->f[x->f].fam) { /* all kernels of this family */
			const pt_kfamily *kf = &c->f[x->f].kf;
			pt_rv_int(r, o, PT_KEY_KERNELS, (int64_t)c->f[x->f].nmem);
			if (kf->gemm) {
				pt_rv_str(r, o, "precision", pt_precision_name(kf->prec));
				if (kf->tensor_cores >= 0)
					pt_rv_bool(r, o, "tensor_cores", kf->tensor_cores);
				pt_rv_str(r, o, "library", kf->lib);
			}
		} else if (c->f[x->f].grp) { /* all stacks ending in this frame */
			pt_rv_int(r, o, PT_KEY_STACKS, (int64_t)c->f[x->f].nmem);
		}
		pt_rv_str(r, o, PT_KEY_FUNCTION, c->f[x->f].key);
		short_name(&c->f[x->f], nm, sizeof(nm));
		pt_rv_str(r, o, PT_KEY_NAME, nm);
	}
	a2 = pt_rv_arr(r, o, PT_KEY_WORKERS);
	if (!x->pairs) {
		pt_rv_str(r, a2, NULL, "all");
	} else {
		for (k = 0; k < x->npairs; k++)
			pt_rv_str(r, a2, NULL, c->w[c->pair[x->pairs[k]][1]].s->worker);
		a2 = pt_rv_arr(r, o, "ranks");
		for (k = 0; k < x->npairs; k++)
			pt_rv_int(r, a2, NULL, c->w[c->pair[x->pairs[k]][0]].s->rank);
	}
	pt_rv_num(r, o, PT_KEY_BASELINE_MS, x->a);
	pt_rv_num(r, o, PT_KEY_NEW_MS, x->b);
	pt_rv_num(r, o, PT_KEY_DELTA_MS, x->d);
	pt_rv_num_or_null(r, o, PT_KEY_SHARE, share);
	if (x->nin) {
		pt_rv_int(r, o, "frames_inside", (int64_t)x->nin);
		pt_rv_num(r, o, "frames_inside_ms", x->din);
	}
	if (x->scope_class == SC_SPAN) {
		a2 = pt_rv_arr(r, o, PT_KEY_SPANS);
		for (k = 0; k < x->ntop; k++) {
			pt_rv *t = pt_rv_obj(r, a2, NULL);
			const cfunc *u = &c->f[x->top[k]];

			pt_rv_str(r, t, PT_KEY_FUNCTION, u->key);
			pt_rv_num(r, t, PT_KEY_BASELINE_MS, u->ea);
			pt_rv_num(r, t, PT_KEY_NEW_MS, u->eb);
			pt_rv_num(r, t, PT_KEY_DELTA_MS, x->topd[k]);
		}
		pt_rv_int(r, o, "spans_changed", (int64_t)x->nspan);
	}
	if (x->by_exec || x->path) {
		pt_rv_num(r, o, PT_KEY_BASELINE_RUNNING_MS, x->ea);
		pt_rv_num(r, o, PT_KEY_NEW_RUNNING_MS, x->eb);
	}
	if (x->path) {
		pt_rv_num(r, o, PT_KEY_BASELINE_PATH_MS, x->qa);
		pt_rv_num(r, o, PT_KEY_NEW_PATH_MS, x->qb);
		pt_rv_num(r, o, PT_KEY_PATH_COST_MS, x->cost);
		pt_rv_num(r, o, PT_KEY_PATH_THRESHOLD_MS, c->f[x->f].qthr);
	}
	if (x->scope_class == SC_FUNC && (c->f[x->f].kn[0] || c->f[x->f].kn[1])) {
		pt_rv_str(r, o, PT_KEY_BASELINE_KERNEL, c->f[x->f].kn[0] ? c->f[x->f].kn[0] : "");
		pt_rv_str(r, o, PT_KEY_NEW_KERNEL, c->f[x->f].kn[1] ? c->f[x->f].kn[1] : "");
	}
	if (x->scope_class != SC_CLASS) {
		pt_rv_num_or_null(r, o, PT_KEY_NOISE_MS, fmax(isfinite(c->f[x->f].sa) ? c->f[x->f].sa : 0,
						    isfinite(c->f[x->f].sb) ? c->f[x->f].sb : 0));
		pt_rv_num_or_null(r, o, PT_KEY_THRESHOLD_MS, c->f[x->f].thr);
		pt_rv_num_or_null(r, o, "baseline_calls", x->ca);
		pt_rv_num_or_null(r, o, "new_calls", x->cb);
		pt_rv_num_or_null(r, o, "baseline_per_call_ms", x->pa);
		pt_rv_num_or_null(r, o, "new_per_call_ms", x->pb);
	} else {
		pt_rv_num_or_null(r, o, "per_call_ratio", x->ratio);
		a2 = pt_rv_arr(r, o, PT_KEY_FUNCTIONS);
		for (k = 0; k < x->ntop; k++) {
			pt_rv *t = pt_rv_obj(r, a2, NULL);

			pt_rv_str(r, t, PT_KEY_FUNCTION, c->f[x->top[k]].key);
			pt_rv_num(r, t, PT_KEY_DELTA_MS, x->topd[k]);
		}
	}
	explain(c, x, share, sb);
	pt_rv_str(r, o, PT_KEY_EXPLANATION, sb->oom ? "" : (pt_sb_addc(sb, 0), sb->buf));
	model_finding(c, o, x, share, sb->oom ? "" : sb->buf);
	pt_sb_reset(sb);
}

/* The waterfall: BASELINE's step, the whole-job changes, the rest, NEW's
 * step.  Without whole-job findings the classes make the bars. */
static void add_waterfall(cctx *c, pt_rv *cmp, const size_t *order, size_t nord, pt_sb *sb)
{
	pt_report *r = c->r;
	pt_rv *arr = pt_rv_arr(r, cmp, "waterfall"), *o;
	double rest = c->dstep;
	char nm[160];
	size_t i, k;

	for (i = 0, k = 0; i < nord && k < WATERFALL_MAX && !c->unrelated; i++) {
		const cfind *x = &c->fd[order[i]];

		if (x->pairs || x->scope_class == SC_SPAN)
			continue;
		o = pt_rv_obj(r, arr, NULL);
		if (x->scope_class == SC_CLASS) {
			pt_rv_str(r, o, PT_KEY_LABEL, class_label((int)x->f));
		} else {
			short_name(&c->f[x->f], nm, sizeof(nm));
			pt_sb_addf(sb, "%s%s", x->change == CH_APPEARED ? "new: " :
				   x->change == CH_DISAPPEARED ? "gone: " : "", nm);
			pt_rv_str(r, o, PT_KEY_LABEL, sb->oom ? "" : (pt_sb_addc(sb, 0), sb->buf));
			pt_sb_reset(sb);
			pt_rv_str(r, o, PT_KEY_FUNCTION, c->f[x->f].key);
		}
		pt_rv_str(r, o, PT_KEY_CHANGE, cmp_change_name[x->change]);
		pt_rv_num(r, o, PT_KEY_DELTA_MS, x->d);
		rest -= x->d;
		k++;
	}
	if (!k) {
		for (i = 0; i + 1 < NCLS; i++) {
			int cls = cmp_class_order[i];
			double d = cmp_class_median(c, 1, cls) - cmp_class_median(c, 0, cls);

			o = pt_rv_obj(r, arr, NULL);
			pt_rv_str(r, o, PT_KEY_LABEL, class_label(cls));
			pt_rv_str(r, o, PT_KEY_CHANGE, d >= 0 ? "slower" : "faster");
			pt_rv_num(r, o, PT_KEY_DELTA_MS, d);
			rest -= d;
		}
	}
	o = pt_rv_obj(r, arr, NULL);
	pt_rv_str(r, o, PT_KEY_LABEL, k ? "everything else" : "idle");
	pt_rv_str(r, o, PT_KEY_CHANGE, "other");
	pt_rv_num(r, o, PT_KEY_DELTA_MS, rest);
}

/* "workers": each worker of both sides with its step times. */
static void add_workers(cctx *c, pt_rv *cmp)
{
	pt_report *r = c->r;
	pt_rv *arr = pt_rv_arr(r, cmp, PT_KEY_WORKERS), *o, *a2;
	size_t i, k;

	for (i = 0; i < c->nw; i++) {
		const pt_summary *s = c->w[i].s;

		o = pt_rv_obj(r, arr, NULL);
		pt_rv_str(r, o, "side", c->w[i].side ? "new" : "baseline");
		pt_rv_str(r, o, PT_KEY_ID, s->worker);
		if (s->rank >= 0)
			pt_rv_int(r, o, PT_KEY_RANK, s->rank);
		else
			pt_rv_null(r, o, PT_KEY_RANK);
		pt_rv_num(r, o, PT_KEY_STEP_MS, c->w[i].step_ms);
		a2 = pt_rv_arr(r, o, PT_KEY_STEPS_LC);
		for (k = 0; k < s->nsteps; k++)
			pt_rv_num(r, a2, NULL, s->step_ms[k]);
		if (!s->nsteps)
			pt_rv_num(r, a2, NULL, s->window_ms);
	}
}

void cmp_build_report(cctx *c, const pt_compare_side *base, const pt_compare_side *nw,
			 size_t nfailed_a, size_t nfailed_b)
{
	pt_report *r = c->r;
	pt_rv *cmp = pt_rv_obj(r, pt_report_root(r), PT_KEY_COMPARE);
	pt_rv *arr;
	size_t *order = NULL, nord = 0, i, nshown;
	pt_sb sb = {0};

	order = x_malloc((c->nfd ? c->nfd : 1) * sizeof(*order));
	if (!order) {
		c->oom = 1;
		return;
	}
	for (i = 0; i < c->nfd; i++)
		order[nord++] = i;
	summary_sentence(c, order, nord, &sb);
	pt_rv_str(r, cmp, PT_KEY_SUMMARY, sb.oom ? "" : (pt_sb_addc(&sb, 0), sb.buf));
	pt_sb_reset(&sb);
	add_side(c, cmp, "baseline", base, 0, nfailed_a);
	add_side(c, cmp, "new", nw, 1, nfailed_b);
	pt_rv_str(r, cmp, PT_KEY_PAIRING, c->npair ? "rank" : "population");
	pt_rv_int(r, cmp, PT_KEY_PAIRS, (int64_t)c->npair);
	pt_rv_num_or_null(r, cmp, "ratio", c->mean[0] > 0 ? c->mean[1] / c->mean[0] : NAN);
	pt_rv_num(r, cmp, PT_KEY_DELTA_MS, c->dstep);
	pt_rv_num(r, cmp, PT_KEY_THRESHOLD_MS, c->thr);
	pt_rv_num(r, cmp, PT_KEY_FLOOR_MS, c->floor);
	pt_rv_bool(r, cmp, PT_KEY_UNRELATED, c->unrelated);
	pt_rv_str(r, cmp, "hint", c->hint);
	add_classes(c, cmp);
	add_critical_path(c, cmp);

	arr = pt_rv_arr(r, cmp, PT_KEY_FINDINGS);
	nshown = c->o->max_findings && c->o->max_findings < nord ? c->o->max_findings : nord;
	for (i = 0; i < nshown; i++)
		add_finding(c, arr, &c->fd[order[i]], i + 1, &sb);
	pt_rv_int(r, cmp, PT_KEY_MORE_FINDINGS, (int64_t)(nord - nshown));

	add_waterfall(c, cmp, order, nord, &sb);
	add_workers(c, cmp);
	/* Reserved for changes in the lockstep picture (docs/compare.md). */
	pt_rv_null(r, cmp, "lockstep");
	if (sb.oom)
		c->oom = 1;
	pt_sb_free(&sb);
	x_free(order);
}
