/*
 * merge.c - one finding per cause (docs/diagnose.md "One finding per
 * cause").  The sections each write what they see (df_add); a cause seen
 * by several of them, a frame inside a cause, a straggler's own longer
 * collectives and its victims' waiting all come here as separate findings
 * and leave as one, the others kept as its evidence.  Then across
 * workers (diag_group): the same cause on many workers is one finding
 * that lists them, worst first, with the what-if of fixing all of them.
 *
 * Flow: sections, diag_lockstep (sets caused_by on the victims' symptoms),
 * diag_cpath -> diag_merge -> diag_group -> diag_noise -> diag_grade ->
 * diag_findings (rank, write).
 */
#include "internal.h"
#include "../util/bsearch.h"
#include "../util/xalloc.h"
#include "../report/keys.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_straggler(const dfinding *f)
{
	return f->cat == DC_LOCKSTEP && !strcmp(f->metric, "others_waited_ms");
}

static const char *wid(const dfinding *f)
{
	return f->worker ? f->worker : "";
}

/* Findings by worker, function, then the one that leads a cause first: a
 * straggler finding, then the largest impact. */
static int cmp_cause(const void *pa, const void *pb, void *arg)
{
	const dfinding *F = arg;
	const dfinding *a = &F[*(const size_t *)pa], *b = &F[*(const size_t *)pb];
	int r = strcmp(wid(a), wid(b));

	if (r)
		return r;
	if ((r = strcmp(a->function, b->function)))
		return r;
	if (is_straggler(a) != is_straggler(b))
		return is_straggler(a) ? -1 : 1;
	if (a->impact_ms != b->impact_ms)
		return a->impact_ms > b->impact_ms ? -1 : 1;
	if ((r = strcmp(a->category, b->category)))
		return r;
	return *(const size_t *)pa < *(const size_t *)pb ? -1 : 1;
}

/* Move from (and the evidence it holds) into to's evidence.  -1: no
 * memory (from is left as it was). */
static int absorb(dctx *c, dfinding *to, dfinding *from, pt_ev_kind kind)
{
	devidence *e;
	size_t need = to->nev + 1 + from->nev, i;

	if (need > to->evcap && X_GROW(to->ev, to->evcap, need))
		return -1;
	/* evidence keeps its sentence as report.json writes it */
	if (!df_sentence(c, from))
		return -1;
	e = &to->ev[to->nev++];
	e->kind = kind;
	e->category = from->category;
	e->worker = from->worker;
	e->function = from->function;
	e->metric = from->metric;
	e->value = from->value;
	e->others = from->others;
	e->impact_ms = from->impact_ms;
	e->explanation = from->explanation;
	from->explanation = NULL;
	for (i = 0; i < from->nev; i++) {
		to->ev[to->nev] = from->ev[i];
		/* a symptom stays a symptom; what from held as its own cause
		 * is now this cause's, as from itself is */
		if (to->ev[to->nev].kind == PT_EV_SAME)
			to->ev[to->nev].kind = kind;
		to->nev++;
	}
	x_free(from->ev);
	from->ev = NULL;
	from->nev = from->evcap = 0;
	return 0;
}

/* Is key one of the frames the straggler s's cause keeps waiting? */
static int waits_for(const dfinding *s, const char *key)
{
	size_t i;

	for (i = 0; i < s->nwaits; i++)
		if (!strcmp(s->waits[i], key))
			return 1;
	return 0;
}

/* Is key another of the functions the straggler s's finding names as
 * where its lateness comes from? */
static int names_cause(const dfinding *s, const char *key)
{
	size_t i;

	for (i = 0; key[0] && i < s->nalso; i++)
		if (!strcmp(s->also[i], key))
			return 1;
	return 0;
}

/* a's key is a proper ancestor of b's: b = a + "|" + more. */
static int is_ancestor(const char *a, const char *b)
{
	size_t n = strlen(a);

	return n && !strncmp(a, b, n) && b[n] == '|';
}

/* A frame's finding (a Python/CPU stack) that may fold into its
 * ancestor's or take its ancestor in: Python functions findings, and a
 * straggler finding whose cause is a stack. */
static int foldable(const dfinding *f)
{
	return f->function[0] && (f->cat == DC_PYTHON || is_straggler(f));
}

/* The first position in ix[0..n) (sorted by cmp_cause) of worker w's
 * findings, n when it has none. */
static size_t first_of(const dfinding *F, const size_t *ix, size_t n, const char *w)
{
	size_t lo = 0, hi = n;

	PT_BSEARCH(lo, hi, mid, strcmp(wid(&F[ix[mid]]), w) < 0);
	return lo;
}

/* Append to f's sentence how much time it stands for with the frames
 * folded into it ("; with the 2 frames inside it, about 4.60 ms per
 * step"); nothing when none was.  -1: out of memory. */
static int say_inside(dctx *c, dfinding *f)
{
	size_t k, nin = 0, len;
	char ms[32], *e;

	for (k = 0; k < f->nev; k++)
		nin += f->ev[k].kind == PT_EV_INSIDE;
	if (!nin || is_straggler(f) || (!f->explanation && f->cause == PT_CAUSE_NONE))
		return 0;
	if (f->cause != PT_CAUSE_NONE) {
		/* a clause of the phrase (phrase.c) */
		f->ninside = nin;
		f->inside_ms = df_impact_per_step(c, f);
		x_free(f->explanation);
		f->explanation = NULL;
		return 0;
	}
	pt_fmt_ms(df_impact_per_step(c, f), ms, sizeof(ms));
	len = strlen(f->explanation) + 96;
	e = x_malloc(len);
	if (!e)
		return -1;
	snprintf(e, len, "%s; with the %zu frame%s inside it, about %s per step", f->explanation,
		 nin, nin == 1 ? "" : "s", ms);
	x_free(f->explanation);
	f->explanation = e;
	return 0;
}

/* Free the findings marked dead (dead[i] for c->f[i]) and close the gaps,
 * keeping the others' order. */
static void drop_dead(dctx *c, const unsigned char *dead)
{
	size_t i, j;

	for (i = j = 0; i < c->nf; i++) {
		if (dead[i]) {
			df_free(&c->f[i]);
			continue;
		}
		c->f[j++] = c->f[i];
	}
	c->nf = j;
}

void diag_merge(dctx *c)
{
	dfinding *F = c->f;
	size_t n = c->nf, *ix = NULL, i, j, a, b, k;
	unsigned char *dead = NULL;

	if (n < 2)
		return;
	ix = x_malloc(n * sizeof(*ix));
	dead = x_calloc(n, 1);
	if (!ix || !dead)
		goto oom;
	for (i = 0; i < n; i++)
		ix[i] = i;
	qsort_r(ix, n, sizeof(*ix), cmp_cause, F);

	for (a = 0; a < n; a = b) {
		/* one worker's findings: ix[a .. b) */
		const char *w = wid(&F[ix[a]]);
		size_t s = SIZE_MAX;

		for (b = a; b < n && !strcmp(wid(&F[ix[b]]), w); b++)
			;
		if (!F[ix[a]].worker)
			continue;
		/* 1. the same function: one cause, the first in order leads */
		for (i = a; i < b; i = j) {
			dfinding *p = &F[ix[i]];
			for (j = i + 1; j < b && !strcmp(F[ix[j]].function, p->function); j++) {
				dfinding *q = &F[ix[j]];
				if (!p->function[0])
					break;
				if (absorb(c, p, q, PT_EV_SAME))
					goto oom;
				if (q->impact_ms > p->impact_ms)
					p->impact_ms = q->impact_ms;
				dead[ix[j]] = 1;
			}
			if (j == i)
				j = i + 1;
		}
		/* 2. a frame into its nearest ancestor's finding (its time is
		 * inside the ancestor's); a straggler's cause takes its
		 * ancestor in instead, the straggler leading */
		for (i = a; i < b; i++) {
			dfinding *q = &F[ix[i]], *p = NULL;
			size_t best = 0, pi = 0;
			if (dead[ix[i]] || !foldable(q))
				continue;
			for (k = a; k < b; k++) {
				dfinding *cand = &F[ix[k]];
				size_t len;
				if (k == i || dead[ix[k]] || !foldable(cand) ||
				    !is_ancestor(cand->function, q->function))
					continue;
				len = strlen(cand->function);
				if (len > best) {
					best = len;
					p = cand;
					pi = k;
				}
			}
			if (!p)
				continue;
			if (is_straggler(q) && !is_straggler(p)) {
				if (absorb(c, q, p, PT_EV_INSIDE))
					goto oom;
				if (p->impact_ms > q->impact_ms)
					q->impact_ms = p->impact_ms;
				dead[ix[pi]] = 1;
			} else {
				if (absorb(c, p, q, PT_EV_INSIDE))
					goto oom;
				if (!is_straggler(p))
					p->impact_ms += q->impact_ms;
				dead[ix[i]] = 1;
			}
		}
		/* 3. a straggler's own collectives, longer because it arrives
		 * last or pays for the reduction, and its own waiting for its
		 * cause (a frame that waits for the cause's work on another
		 * thread, which the lockstep analysis set aside; its GPU idle
		 * while its CPU stalls): not causes of their own */
		for (i = a; i < b; i++)
			if (!dead[ix[i]] && is_straggler(&F[ix[i]]))
				s = ix[i];
		if (s == SIZE_MAX)
			continue;
		for (i = a; i < b; i++) {
			dfinding *q = &F[ix[i]];
			pt_ev_kind kind = PT_EV_COUNT;
			if (dead[ix[i]] || ix[i] == s)
				continue;
			if (q->cat == DC_COMM && !df_comm_own_cause(q))
				kind = PT_EV_OWN_COMM;
			else if (q->cat == DC_COMPUTE && !strcmp(q->metric, PT_KEY_GPU_UTILIZATION) &&
				 q->value < q->others)
				kind = PT_EV_OWN_WAIT;
			else if (q->cat == DC_PYTHON && waits_for(&F[s], q->function))
				kind = PT_EV_OWN_WAIT;
			else if (names_cause(&F[s], q->function))
				kind = PT_EV_SAME;
			if (kind == PT_EV_COUNT)
				continue;
			if (absorb(c, &F[s], q, kind))
				goto oom;
			dead[ix[i]] = 1;
		}
	}
	/* 4. a victim's symptom into the finding of the straggler it waited
	 * for; without one it stays, linked */
	for (i = 0; i < n; i++) {
		dfinding *q = &F[i];
		size_t f0;
		if (dead[i] || !q->caused_by)
			continue;
		for (f0 = first_of(F, ix, n, q->caused_by);
		     f0 < n && !strcmp(wid(&F[ix[f0]]), q->caused_by); f0++)
			if (!dead[ix[f0]] && is_straggler(&F[ix[f0]]))
				break;
		if (f0 >= n || strcmp(wid(&F[ix[f0]]), q->caused_by))
			continue;
		if (absorb(c, &F[ix[f0]], q, PT_EV_SYMPTOM))
			goto oom;
		dead[i] = 1;
	}
	drop_dead(c, dead);
	/* a finding that took in the frames inside it says so, with the time
	 * it now stands for: its own sentence gave its own frame's */
	for (i = 0; i < c->nf; i++)
		if (say_inside(c, &F[i]))
			goto oom;
	goto out;
oom:
	c->oom = 1;
out:
	x_free(dead);
	x_free(ix);
}

/* ---- one finding per cause across workers ------------------------------ */

/* Causes that say one thing of one worker against the others, so that the
 * same on several workers is one cause: a share of time, slow calls, a
 * slow link or GPU, communication that no compute overlaps.  Not a straggler (the job waits for one, each has its
 * own what-if), a slow step (its worker's own steps), a fact about the
 * traces, nor a symptom that waits for a straggler. */
static int groupable(const dfinding *f)
{
	if (!f->worker || f->caused_by || f->has_what_if)
		return 0;
	switch (f->cause) {
	case PT_CAUSE_SHARE: case PT_CAUSE_SLOW_CALLS: case PT_CAUSE_LOW_BANDWIDTH:
	case PT_CAUSE_SLOW_LINK: case PT_CAUSE_WAITS_FOR_PEER: case PT_CAUSE_GPU_WAITS:
	case PT_CAUSE_GPU_BUSIER: case PT_CAUSE_SLOW_KERNELS: case PT_CAUSE_COMM_BOUND:
		return 1;
	default:
		return 0;
	}
}

/* The function key that names a finding's cause: none for a slower GPU,
 * whose function is only the example its sentence gives (the costliest
 * of its slow kernels, which differs from worker to worker). */
static const char *cause_key(const dfinding *f)
{
	return f->cause == PT_CAUSE_SLOW_KERNELS ? "" : f->function;
}

/* Groupable findings by cause (category, cause kind, function key), then
 * worst first (impact, then worker). */
static int cmp_group(const void *pa, const void *pb, void *arg)
{
	const dfinding *F = arg;
	const dfinding *a = &F[*(const size_t *)pa], *b = &F[*(const size_t *)pb];
	int r;

	if (a->cat != b->cat)
		return a->cat < b->cat ? -1 : 1;
	if (a->cause != b->cause)
		return a->cause < b->cause ? -1 : 1;
	if ((r = strcmp(cause_key(a), cause_key(b))))
		return r;
	if (a->impact_ms != b->impact_ms)
		return a->impact_ms > b->impact_ms ? -1 : 1;
	return strcmp(wid(a), wid(b));
}

static int same_group(const dfinding *a, const dfinding *b)
{
	return a->cat == b->cat && a->cause == b->cause && !strcmp(cause_key(a), cause_key(b));
}

int df_group_spread(const dctx *c, const dfinding *f)
{
	return f->ngroup > 1 && (double)f->ngroup > fmax(1.0, 0.1 * (double)c->nw);
}

void df_group_mark(dctx *c, const dfinding *f, int on)
{
	size_t i;

	/* a spread is part of the job's own spread: compared with all */
	if (df_group_spread(c, f))
		return;
	for (i = 1; c->gmark && i < f->ngroup; i++)
		c->gmark[f->group[i]] = (unsigned char)on;
}

/* ix[a .. b) (worst first) into F[ix[a]]: its group, their ms per step,
 * the others its evidence, the what-if of fixing all of them.  -1: out
 * of memory. */
static int make_group(dctx *c, const size_t *ix, size_t a, size_t b, unsigned char *dead)
{
	dfinding *F = c->f, *p = &F[ix[a]];
	size_t i;
	uint32_t wi;
	double worst, step;

	p->group = x_malloc((b - a) * sizeof(*p->group));
	if (!p->group)
		return -1;
	p->ngroup = 0;
	p->group_ms = 0;
	for (i = a; i < b; i++) {
		dfinding *q = &F[ix[i]];
		uint32_t qw = df_worker(c, q);
		if (qw == UINT32_MAX)
			continue;
		p->group[p->ngroup++] = qw;
		p->group_ms += df_impact_per_step(c, q);
		if (i == a)
			continue;
		if (absorb(c, p, q, PT_EV_WORKER))
			return -1;
		dead[ix[i]] = 1;
	}
	/* In lockstep every worker waits for the slowest: fixed on all of
	 * them, a step is shorter by the worst one's time, not by their sum;
	 * its step (its window per step) is the one it would shorten, so the
	 * what-if's share is the share of its time it loses. */
	worst = df_impact_per_step(c, p);
	wi = df_worker(c, p);
	step = wi != UINT32_MAX ? c->w[wi].window_ms / dw_steps(&c->w[wi]) : 0;
	if (step > 0 && worst > 0) {
		p->has_what_if = 1;
		p->instead_ms = step;
		p->what_if_ms = step - fmin(worst, step);
	}
	df_metric(p, "workers with it", (double)p->ngroup, PT_UNIT_COUNT);
	df_metric(p, "ms per step on them all", p->group_ms, PT_UNIT_MS_STEP);
	return 0;
}

void diag_group(dctx *c)
{
	dfinding *F = c->f;
	size_t n = c->nf, *ix = NULL, ng = 0, i, a, b;
	unsigned char *dead = NULL;

	if (!c->nw)
		return;
	c->gmark = x_calloc(c->nw, 1);
	ix = x_malloc((n ? n : 1) * sizeof(*ix));
	dead = x_calloc(n ? n : 1, 1);
	if (!c->gmark || !ix || !dead)
		goto oom;
	for (i = 0; i < n; i++)
		if (groupable(&F[i]))
			ix[ng++] = i;
	qsort_r(ix, ng, sizeof(*ix), cmp_group, F);
	for (a = 0; a < ng; a = b) {
		for (b = a + 1; b < ng && same_group(&F[ix[a]], &F[ix[b]]); b++)
			;
		if (b - a < 2)
			continue;
		if (make_group(c, ix, a, b, dead))
			goto oom;
	}
	drop_dead(c, dead);
	goto out;
oom:
	c->oom = 1;
out:
	x_free(dead);
	x_free(ix);
}
