/*
 * critpath.c - the critical path across steps and workers: what grew on a
 * slow step's path (for the Steps findings), and the "Critical path"
 * section: per worker and step the path's split and its top functions,
 * the time a path spent waiting on another worker (from the lockstep
 * analysis' instances), and per step the job's path through the worker
 * the others waited for, with that worker's what-if.
 *
 * Flow: pt_summary.cpath (src/analysis/critpath.c) + the lockstep waits
 * (lockstep_match.c, dctx.lkw) -> diag_cpath_cause (steps.c) and diag_cpath ->
 * report "Critical path" -> text report, PerfDisplay's Critical path view.
 * docs/diagnose.md "Critical path".
 */
#include "internal.h"
#include "sections.h"
#include "../util/strbuf.h"
#include "../model/keys.h"
#include "../util/xalloc.h"
#include "../report/keys.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#define SEC PT_KEY_CRITICAL_PATH
/* Functions listed per step in the section. */
#define TOP_FUNCS 5
/* A candidate explains the growth when it holds this share of the largest
 * function's; the most specific such frame is named. */
#define EXPLAIN_SHARE 0.7
/* A GPU event is the cause when its path time grew by half the step's
 * extra time and its own duration by half of that. */
#define GPU_SHARE 0.5
/* An annotation around the one that waits is named instead when it adds
 * at most this share of the growth to the other steps' path. */
#define OUTER_SHARE 0.25
/* Growth that is mostly unexplained GPU gaps is not the path's to name. */
#define GAP_SHARE 0.5

/* Does the path of s line up with its steps (same count and numbers)? */
int diag_cpath_usable(const pt_summary *s)
{
	size_t i;

	if (!s->cpath || s->cpath->nsteps != s->nsteps || s->nsteps < 2)
		return 0;
	for (i = 0; i < s->nsteps; i++)
		if (s->cpath->steps[i].number != s->step_numbers[i])
			return 0;
	return 1;
}

static int is_gpu_kind(int k)
{
	return k == PT_K_KERNEL || k == PT_K_COMM_KERNEL || k == PT_K_MEMCPY || k == PT_K_MEMSET;
}

static int is_call_kind(int k)
{
	return k == PT_K_RUNTIME || k == PT_K_DRIVER;
}


/* The patterns of s that are function key (a kernel's patterns, one per
 * launch shape): their time per step summed into own[ns] and the median
 * of their median calls in *call.  0 when none has per-step times. */
static int patterns_of(const pt_summary *s, const char *key, int kind, double *own,
		       double *call, double *tmp)
{
	size_t i, k, n = 0, kl = strlen(key);
	int cls = pt_kind_class(kind);

	memset(own, 0, s->nsteps * sizeof(*own));
	for (i = 0; i < s->npatterns; i++) {
		const pt_pattern *p = pt_summary_pat(s, i);
		size_t pl = strlen(p->key);
		if (p->cls != cls || pt_key_strip_shape(p->key, pl) != kl ||
		    memcmp(p->key, key, kl) || !pt_summary_whole(s) || !p->step_ms ||
		    p->nstep_ms != s->nsteps)
			continue;
		for (k = 0; k < s->nsteps; k++)
			own[k] += p->step_ms[k];
		tmp[n++] = p->median_ms;
	}
	*call = pt_robust_median(tmp, n, 0);
	return n > 0;
}

/* The wait record of the slow steps whose call (or span) is name: the
 * largest one, of the slowest slow step that has one. */
static const pt_cp_wait *wait_named(const pt_summary *s, const unsigned char *slow,
				    const char *name, int span, size_t *step)
{
	const pt_cp_wait *best = NULL;
	size_t i, k;

	for (i = 0; i < s->cpath->nsteps; i++) {
		const pt_cp_step *st = &s->cpath->steps[i];
		if (!slow[i])
			continue;
		for (k = 0; k < st->nwaits; k++) {
			const pt_cp_wait *w = &st->waits[k];
			if (strcmp(span ? w->span : w->call, name))
				continue;
			if (!best || w->ms > best->ms) {
				best = w;
				*step = i;
			}
		}
	}
	return best;
}

/* Where the growth is and what the GPU does meanwhile (dcp_cause's span,
 * gpu, gpu_idle).  The span is where the step's thread waited: the frame
 * of the wait that holds EXPLAIN_SHARE of the step's extra time (the
 * innermost annotation around the blocking call), widened to the
 * outermost annotation around it that holds the growth too and adds at
 * most OUTER_SHARE of it to the path of the other steps (`##
 * wait_sparse_data_dist ##` around `## all2all_tw_data:wait ##`, not `##
 * backward ##` around everything).  Without such a wait, the outermost
 * annotation holding the growth whose path time in the slow steps is
 * mostly that growth.  The GPU works through the growth when the path's
 * GPU kinds (compute, communication, memory) grew by GPU_SHARE of it, and
 * then the GPU function that grew most is what the span waits for; a wait
 * with the path's GPU time unchanged waits with the GPU idle. */
static void where(const pt_summary *s, const unsigned char *slow, double step_exc,
		  const dexcess *ex, size_t best_gpu, double *tmp, dcp_cause *out)
{
	const pt_cpath *cp = s->cpath;
	size_t ns = s->nsteps, i, k, base = (size_t)-1;
	double *g = x_malloc((ns + 1) * sizeof(*g)), best = -1;
	dexcess gx;

	if (!g)
		return;
	for (i = 0; i < ns && !out->wait; i++) {
		const pt_cp_step *st = &cp->steps[i];
		for (k = 0; slow[i] && k < st->nwaits; k++)
			if (st->waits[k].ms >= EXPLAIN_SHARE * step_exc &&
			    (!out->wait || st->waits[k].ms > out->wait->ms)) {
				out->wait = &st->waits[k];
				out->wait_step = i;
			}
	}
	for (i = 0; i < cp->nfuncs && out->wait && base == (size_t)-1; i++)
		if (!strcmp(cp->funcs[i].key, out->wait->span) && ex[i].exc >= EXPLAIN_SHARE * step_exc &&
		    (cp->funcs[i].kind == PT_K_ANNOTATION || cp->funcs[i].kind == PT_K_PYTHON ||
		     cp->funcs[i].kind == PT_K_CPU_OP))
			base = i;
	for (i = 0; i < cp->nfuncs; i++) {
		double tot = 0;
		if (cp->funcs[i].kind != PT_K_ANNOTATION || ex[i].exc < EXPLAIN_SHARE * step_exc)
			continue;
		if (base != (size_t)-1 ? ex[i].omed < ex[base].omed ||
					 ex[i].omed - ex[base].omed > OUTER_SHARE * step_exc :
					 ex[i].exc < 0.5 * ex[i].lo)
			continue;
		for (k = 0; k < ns; k++)
			tot += cp->funcs[i].ms[k];
		if (tot > best) {
			best = tot;
			out->span = &cp->funcs[i];
			out->sx = ex[i];
		}
	}
	if (!out->span && base != (size_t)-1) {
		out->span = &cp->funcs[base];
		out->sx = ex[base];
	}
	for (i = 0; i < ns; i++)
		g[i] = cp->steps[i].split[PT_CP_COMPUTE] + cp->steps[i].split[PT_CP_COMM] +
		       cp->steps[i].split[PT_CP_MEMORY];
	dx_excess(g, slow, ns, tmp, &gx);
	if (gx.exc >= GPU_SHARE * step_exc && best_gpu != (size_t)-1 && ex[best_gpu].exc > 0)
		out->gpu = &cp->funcs[best_gpu];
	else if (gx.exc < (1 - GPU_SHARE) * step_exc && out->wait)
		out->gpu_idle = 1;
	if (out->gpu)
		out->gx = ex[best_gpu];
	x_free(g);
}

int diag_cpath_cause(const pt_summary *s, const unsigned char *slow, double step_exc,
		     dcp_cause *out)
{
	const pt_cpath *cp = s->cpath;
	size_t ns = s->nsteps, i, best_gpu = (size_t)-1, spec = (size_t)-1;
	double *tmp = NULL, emax = 0, spec_tot = INFINITY;
	dexcess *ex = NULL;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (!diag_cpath_usable(s) || !cp->nfuncs)
		return 0;
	tmp = x_malloc((ns + 1) * sizeof(*tmp));
	ex = x_calloc(cp->nfuncs, sizeof(*ex));
	if (!tmp || !ex)
		goto out;
	/* Growth the graph cannot explain: a GPU stream that sat idle with
	 * nothing recorded to wait for (a dependency outside the trace).  The
	 * functions' own time per step is the better witness then. */
	{
		double *g = x_malloc((ns + 1) * sizeof(*g));
		dexcess gx;
		if (!g)
			goto out;
		for (i = 0; i < ns; i++)
			g[i] = cp->steps[i].split[PT_CP_GAP];
		dx_excess(g, slow, ns, tmp, &gx);
		x_free(g);
		if (gx.exc >= GAP_SHARE * step_exc)
			goto out;
	}
	for (i = 0; i < cp->nfuncs; i++) {
		dx_excess(cp->funcs[i].ms, slow, ns, tmp, &ex[i]);
		if (ex[i].exc > emax)
			emax = ex[i].exc;
		if (is_gpu_kind(cp->funcs[i].kind) &&
		    (best_gpu == (size_t)-1 || ex[i].exc > ex[best_gpu].exc))
			best_gpu = i;
	}
	if (emax <= 0)
		goto out;
	/* A GPU event that grew itself (not only its place on the path, and
	 * not by running more often: a kernel queued more times before a
	 * copy is the wait's cause, named by the annotation that waits). */
	if (best_gpu != (size_t)-1 && ex[best_gpu].exc >= GPU_SHARE * step_exc) {
		const pt_cp_func *f = &cp->funcs[best_gpu];
		double call = 0, *ownv = x_malloc((ns + s->npatterns + 1) * sizeof(*ownv));
		dexcess own;
		int more = 0, has;
		if (!ownv)
			goto out;
		has = patterns_of(s, f->key, f->kind, ownv, &call, ownv + ns);
		/* one event ran longer: the longest on the path in the slow
		 * steps is well above the function's median call */
		if (f->longest_ms && has) {
			double lmin = INFINITY;
			for (i = 0; i < ns; i++)
				if (slow[i] && f->longest_ms[i] < lmin)
					lmin = f->longest_ms[i];
			more = lmin - call < GPU_SHARE * ex[best_gpu].exc;
		}
		if (has && !more)
			dx_excess(ownv, slow, ns, tmp, &own);
		x_free(ownv);
		if (has && !more) {
			if (own.exc >= GPU_SHARE * ex[best_gpu].exc) {
				out->x = ex[best_gpu];
				out->func = f;
				out->grew_itself = 1;
				where(s, slow, step_exc, ex, best_gpu, tmp, out);
				rc = 1;
				goto out;
			}
		}
	}
	/* The frame that explains the growth: of those holding most of it
	 * (inclusive), the one whose own time grew most (its exclusive path
	 * time, and a blocking call's wait): an op that ran longer inside the
	 * annotation that holds it, or the call an annotation blocked in.
	 * Older summaries without self times: the most specific one, the
	 * smallest inclusive path time over the steps. */
	for (i = 0; i < cp->nfuncs; i++) {
		double tot = 0;
		size_t k;
		if (is_gpu_kind(cp->funcs[i].kind) || ex[i].exc < EXPLAIN_SHARE * emax)
			continue;
		if (cp->funcs[i].self_ms) {
			dexcess se;
			dx_excess(cp->funcs[i].self_ms, slow, ns, tmp, &se);
			tot = -se.exc;
		} else {
			for (k = 0; k < ns; k++)
				tot += cp->funcs[i].ms[k];
		}
		if (tot < spec_tot || (tot == spec_tot && is_call_kind(cp->funcs[i].kind))) {
			spec_tot = tot;
			spec = i;
		}
	}
	if (spec == (size_t)-1) {
		if (best_gpu == (size_t)-1 || ex[best_gpu].exc <= 0)
			goto out;
		spec = best_gpu;
	}
	out->x = ex[spec];
	out->func = &cp->funcs[spec];
	/* A blocking call grew: name the span it blocked in and what it
	 * waited for (its wait record), with that span's numbers. */
	if (is_call_kind(out->func->kind)) {
		size_t st = 0;
		const pt_cp_wait *w = wait_named(s, slow, out->func->key, 0, &st);
		if (w) {
			for (i = 0; i < cp->nfuncs; i++)
				if (!strcmp(cp->funcs[i].key, w->span) && !is_gpu_kind(cp->funcs[i].kind) &&
				    ex[i].exc > 0) {
					out->x = ex[i];
					out->func = &cp->funcs[i];
					break;
				}
			out->wait = w;
			out->wait_step = st;
		}
	} else {
		size_t st = 0;
		out->wait = wait_named(s, slow, out->func->key, 1, &st);
		out->wait_step = st;
	}
	where(s, slow, step_exc, ex, best_gpu, tmp, out);
	rc = 1;
out:
	x_free(ex);
	x_free(tmp);
	return rc;
}

/* A GPU event's name for a sentence: copies and memsets as Kineto names
 * them ("Memcpy DtoH (Device -> Pinned)"), kernels without arguments. */
static const char *gpu_name(const char *key, char *buf, size_t cap)
{
	if (!strncmp(key, "Memcpy", 6) || !strncmp(key, "Memset", 6)) {
		snprintf(buf, cap, "%s", key);
		return buf;
	}
	return pt_name_sentence(key, PT_C_COMPUTE, buf, cap);
}

int diag_cpath_same_gpu(const char *a, const char *b)
{
	size_t la = pt_key_strip_shape(a, strlen(a)), lb = pt_key_strip_shape(b, strlen(b));

	return la == lb && !memcmp(a, b, la);
}

void diag_cpath_gpu_text(pt_sb *sb, const char *key, int64_t stream, const char *lead)
{
	char b[160];

	pt_sb_addf(sb, "%s`%s`", lead, gpu_name(key, b, sizeof(b)));
	if (stream >= 0)
		pt_sb_addf(sb, " on stream %lld", (long long)stream);
}

void diag_cpath_wait_text(pt_sb *sb, const pt_summary *s, const dcp_cause *cz)
{
	const pt_cp_wait *w = cz->wait;
	char a[160], b[160];

	if (!w)
		return;
	pt_sb_addf(sb, "; in step %lld it waits %.1f ms in `%s` for ",
		   (long long)s->cpath->steps[cz->wait_step].number, w->ms,
		   pt_name_sentence(w->call, PT_C_RUNTIME, a, sizeof(a)));
	pt_sb_addf(sb, "`%s`", gpu_name(w->target, b, sizeof(b)));
	if (w->target_stream >= 0)
		pt_sb_addf(sb, " on stream %lld", (long long)w->target_stream);
	if (w->behind) {
		pt_sb_addf(sb, ", queued behind `%s`", gpu_name(w->behind, b, sizeof(b)));
		if (w->behind_stream >= 0)
			pt_sb_addf(sb, " on stream %lld", (long long)w->behind_stream);
	}
}

/* ---- the section --------------------------------------------------------- */

static void split_obj(dctx *c, pt_rv *parent, const char *key, const double *split)
{
	pt_rv *o = pt_rv_obj(c->rep, parent, key);
	int k;

	for (k = 0; k < PT_CP_NKINDS; k++)
		pt_rv_num(c->rep, o, pt_cp_kind_name(k), split[k]);
}

typedef struct fr {
	double v, ms, med;
	size_t f;
} fr;

static int fr_cmp(const void *pa, const void *pb)
{
	const fr *a = pa, *b = pb;

	if (a->v != b->v)
		return a->v > b->v ? -1 : 1;
	return a->f < b->f ? -1 : a->f > b->f;
}

/* The split of step i of worker wi with the lockstep waits taken out of
 * communication; the worker the step waited for most in *who (NONE).  The
 * waits go by last arriver in a short list (a step's path meets few of
 * them; an array over all workers, per worker and step, was quadratic in
 * the job's size). */
static void step_split(const dctx *c, size_t wi, size_t i, double *split, size_t *who)
{
	const pt_summary *s = c->w[wi].s;
	const pt_cp_step *st = &s->cpath->steps[i];
	const dlkwait *lw = c->lkw ? &c->lkw[wi] : NULL;
	struct wms { uint32_t w; double ms; } one[16], *by = one, *big = NULL;
	size_t k, q, nby = 0, cap = 16;

	memcpy(split, st->split, sizeof(st->split));
	*who = (size_t)-1;
	if (!lw || !lw->n)
		return;
	for (k = 0; k < st->ninst; k++) {
		uint32_t in = st->inst[k], w;
		double wt;
		if (in >= lw->n || lw->wait_ms[in] < 0)
			continue;
		wt = st->inst_ms[k] < lw->wait_ms[in] ? st->inst_ms[k] : lw->wait_ms[in];
		if (wt > split[PT_CP_COMM])
			wt = split[PT_CP_COMM];
		split[PT_CP_COMM] -= wt;
		split[PT_CP_WAIT] += wt;
		if ((w = lw->last[in]) >= c->nw || !(wt > 0))
			continue;
		for (q = 0; q < nby && by[q].w != w; q++)
			;
		if (q == nby) {
			if (nby == cap) {
				struct wms *nb = x_malloc(2 * cap * sizeof(*nb));
				if (!nb)
					break; /* the split is right; *who is of those seen */
				memcpy(nb, by, nby * sizeof(*nb));
				x_free(big);
				by = big = nb;
				cap *= 2;
			}
			by[nby].w = w;
			by[nby++].ms = 0;
		}
		by[q].ms += wt;
	}
	for (q = 0; q < nby; q++)
		if (*who == (size_t)-1 || by[q].ms > by[*who].ms ||
		    (by[q].ms == by[*who].ms && by[q].w < by[*who].w))
			*who = q;
	if (*who != (size_t)-1)
		*who = by[*who].w;
	x_free(big);
}

static void worker_section(dctx *c, pt_rv *ws, size_t wi, const unsigned char *slow)
{
	const pt_summary *s = c->w[wi].s;
	const pt_cpath *cp = s->cpath;
	size_t ns = cp->nsteps, i, k;
	double tot[PT_CP_NKINDS] = { 0 }, *tmp = NULL, *med = NULL;
	pt_rv *o = pt_rv_obj(c->rep, ws, c->w[wi].id), *arr;
	fr *r = NULL;

	tmp = x_malloc((ns + 1) * sizeof(*tmp));
	med = x_malloc((cp->nfuncs + 1) * sizeof(*med));
	r = x_malloc((cp->nfuncs + 1) * sizeof(*r));
	if (!tmp || !med || !r) {
		c->oom = 1;
		goto out;
	}
	for (k = 0; k < cp->nfuncs; k++) {
		memcpy(tmp, cp->funcs[k].ms, ns * sizeof(*tmp));
		med[k] = pt_robust_median(tmp, ns, 0);
	}
	arr = pt_rv_arr(c->rep, o, PT_KEY_STEPS_LC);
	for (i = 0; i < ns; i++) {
		const pt_cp_step *st = &cp->steps[i];
		double split[PT_CP_NKINDS];
		size_t who, nr = 0;
		pt_rv *e = pt_rv_obj(c->rep, arr, NULL), *fa, *wa;
		int sl = slow && slow[i];

		step_split(c, wi, i, split, &who);
		for (k = 0; k < PT_CP_NKINDS; k++)
			tot[k] += split[k];
		pt_rv_int(c->rep, e, PT_KEY_NUMBER, st->number);
		pt_rv_num(c->rep, e, PT_KEY_MS, st->ms);
		pt_rv_bool(c->rep, e, PT_KEY_SLOW, sl);
		split_obj(c, e, PT_KEY_SPLIT_MS, split);
		if (who != (size_t)-1)
			pt_rv_str(c->rep, e, "waited for", c->w[who].id);
		/* the largest on the path; in a slow step what grew most first */
		for (k = 0; k < cp->nfuncs; k++) {
			double v = cp->funcs[k].ms[i];
			if (v <= 0)
				continue;
			r[nr].v = sl ? v - med[k] : v;
			r[nr].ms = v;
			r[nr].med = med[k];
			r[nr++].f = k;
		}
		qsort(r, nr, sizeof(*r), fr_cmp);
		fa = pt_rv_arr(c->rep, e, PT_KEY_FUNCTIONS);
		for (k = 0; k < nr && k < TOP_FUNCS; k++) {
			pt_rv *x = pt_rv_obj(c->rep, fa, NULL);
			pt_rv_str(c->rep, x, PT_KEY_NAME, cp->funcs[r[k].f].key);
			pt_rv_str(c->rep, x, PT_KEY_KIND, pt_kind_name(cp->funcs[r[k].f].kind));
			pt_rv_num(c->rep, x, PT_KEY_MS, r[k].ms);
			pt_rv_num(c->rep, x, PT_KEY_MEDIAN_MS, r[k].med);
		}
		wa = pt_rv_arr(c->rep, e, PT_KEY_WAITS);
		for (k = 0; k < st->nwaits; k++) {
			const pt_cp_wait *w = &st->waits[k];
			pt_rv *x = pt_rv_obj(c->rep, wa, NULL);
			pt_rv_str(c->rep, x, PT_KEY_SPAN, w->span);
			pt_rv_str(c->rep, x, PT_KEY_CALL, w->call);
			pt_rv_num(c->rep, x, PT_KEY_MS, w->ms);
			pt_rv_str(c->rep, x, PT_KEY_TARGET, w->target);
			if (w->target_stream >= 0)
				pt_rv_int(c->rep, x, "target stream", w->target_stream);
			if (w->behind) {
				pt_rv_str(c->rep, x, PT_KEY_BEHIND, w->behind);
				if (w->behind_stream >= 0)
					pt_rv_int(c->rep, x, "behind stream", w->behind_stream);
			}
		}
	}
	split_obj(c, o, PT_KEY_SPLIT_MS, tot);
out:
	x_free(r);
	x_free(med);
	x_free(tmp);
}

/* The instances of worker wi's step k (arrival inside the step, by its
 * own clock): [*a, *b) of its summary's coll, which is in channel then
 * time order, so scan all. */
static int in_step(const pt_summary *s, const pt_cp_step *st, size_t j)
{
	double a = s->coll[j].arrive_us / 1e3;

	return st->start_ms >= 0 && a >= st->start_ms && a < st->start_ms + st->ms;
}

/* Per step number: the job's path runs through the worker the others
 * waited for most in that step (the last arriver of the step's instances,
 * weighted by the waits it caused), or, without waits, the one whose own
 * path waited least.  The step's time is the job's (the median over the
 * workers); the what-if takes away the time that worker arrived later
 * than the median member (or the second last) at its instances in the
 * step (docs/diagnose.md "Critical path"). */
static void job_section(dctx *c, pt_rv *sec)
{
	size_t wi, i, ref = (size_t)-1;
	double *blame = NULL, *ms = NULL;
	pt_rv *arr = NULL;

	for (wi = 0; wi < c->nw; wi++)
		if (c->w[wi].s->cpath && (ref == (size_t)-1 ||
					  c->w[wi].s->cpath->nsteps > c->w[ref].s->cpath->nsteps))
			ref = wi;
	blame = x_calloc(c->nw + 1, sizeof(*blame));
	ms = x_malloc((c->nw + 1) * sizeof(*ms));
	if (ref == (size_t)-1 || !blame || !ms)
		goto out;
	for (i = 0; i < c->w[ref].s->cpath->nsteps; i++) {
		int64_t no = c->w[ref].s->cpath->steps[i].number;
		size_t best = (size_t)-1, least = (size_t)-1, bi = 0, li = 0, n = 0, k, j;
		double lwait = INFINITY, saved = 0, split[PT_CP_NKINDS], lsplit[PT_CP_NKINDS];

		memset(blame, 0, c->nw * sizeof(*blame));
		for (wi = 0; wi < c->nw; wi++) {
			const pt_summary *s = c->w[wi].s;
			const dlkwait *lw = c->lkw ? &c->lkw[wi] : NULL;
			if (!s->cpath)
				continue;
			for (k = 0; k < s->cpath->nsteps; k++) {
				const pt_cp_step *st = &s->cpath->steps[k];
				size_t who;
				if (st->number != no)
					continue;
				ms[n++] = st->ms;
				step_split(c, wi, k, split, &who);
				if (split[PT_CP_WAIT] < lwait) {
					lwait = split[PT_CP_WAIT];
					least = wi;
					li = k;
					memcpy(lsplit, split, sizeof(split));
				}
				for (j = 0; lw && j < lw->n && j < s->ncoll; j++)
					if (lw->wait_ms[j] > 0 && lw->last[j] < c->nw && in_step(s, st, j))
						blame[lw->last[j]] += lw->wait_ms[j];
				break;
			}
		}
		if (n < 2)
			continue;
		for (wi = 0; wi < c->nw; wi++)
			if (blame[wi] > 0 && (best == (size_t)-1 || blame[wi] > blame[best]))
				best = wi;
		if (best == (size_t)-1) {
			best = least;
			bi = li;
			memcpy(split, lsplit, sizeof(split));
		} else {
			const pt_summary *s = c->w[best].s;
			size_t who;
			if (!s->cpath)  /* a digest (the first of two phases) */
				continue;
			for (bi = 0; bi < s->cpath->nsteps && s->cpath->steps[bi].number != no; bi++)
				;
			if (bi == s->cpath->nsteps)
				continue;
			step_split(c, best, bi, split, &who);
			for (j = 0; c->lkw && j < c->lkw[best].n && j < s->ncoll; j++)
				if (in_step(s, &s->cpath->steps[bi], j))
					saved += c->lkw[best].saved_ms[j];
		}
		if (best == (size_t)-1)
			continue;
		if (!arr)
			arr = pt_rv_arr(c->rep, sec, PT_KEY_JOB);
		{
			pt_rv *e = pt_rv_obj(c->rep, arr, NULL);
			double job = pt_robust_median(ms, n, 0);
			pt_rv_int(c->rep, e, PT_KEY_NUMBER, no);
			pt_rv_num(c->rep, e, PT_KEY_MS, job);
			pt_rv_str(c->rep, e, PT_KEY_THROUGH, c->w[best].id);
			pt_rv_num(c->rep, e, "through (ms)", c->w[best].s->cpath->steps[bi].ms);
			pt_rv_num(c->rep, e, PT_KEY_OTHERS_WAITED_FOR_IT_MS, blame[best]);
			split_obj(c, e, PT_KEY_SPLIT_MS, split);
			pt_rv_num(c->rep, e, PT_KEY_WHAT_IF_MS, job - saved > 0 ? job - saved : 0);
		}
	}
out:
	x_free(ms);
	x_free(blame);
}

void diag_cpath(dctx *c)
{
	pt_rv *sec = NULL, *ws = NULL, *kinds;
	size_t wi, k;

	for (wi = 0; wi < c->nw; wi++) {
		const pt_summary *s = c->w[wi].s;
		if (!s->cpath || !s->cpath->nsteps)
			continue;
		if (!sec) {
			sec = pt_rv_obj(c->rep, pt_report_root(c->rep), SEC);
			kinds = pt_rv_arr(c->rep, sec, "kinds");
			for (k = 0; k < PT_CP_NKINDS; k++)
				pt_rv_str(c->rep, kinds, NULL, pt_cp_kind_name((int)k));
			ws = pt_rv_obj(c->rep, sec, PT_KEY_WORKERS);
		}
		worker_section(c, ws, wi, c->slow && diag_cpath_usable(s) ? c->slow[wi] : NULL);
	}
	if (sec && c->nw > 1)
		job_section(c, sec);
}
