/*
 * lockstep_blame.c - the second half of the lockstep analysis (lockstep.h):
 * for the stragglers lockstep_match.c named, what made them
 * late (function by function, in the span before their late arrivals) and
 * what fixing them is worth, links the victims' waiting symptoms to the
 * straggler they waited for, and writes the "Lockstep" section and its
 * findings.
 *
 * Flow: lockstep_match.c's matched instances --> here, after the five
 * sections and before merge.c and findings.c --> report "Lockstep" +
 * "Lockstep" findings.  Rules and thresholds: docs/diagnose.md "Lockstep".
 */
#include "lockstep.h"
#include "../model/commkind.h"
#include "sections.h"
#include "../util/strbuf.h"
#include "../util/bsearch.h"
#include "../util/xalloc.h"
#include "../report/keys.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Instances of one straggler looked at for its cause functions, at most
 * (the latest arrivals first). */
#define MAX_CAUSE_INST 64
#define MAX_CAUSES 3
/* ---- cause functions ------------------------------------------------------------- */

static int blocking_leaf(const char *key);

typedef struct cacc {
	uint32_t key;
	const pt_pattern *p;   /* the straggler's */
	double extra, own, others, span;
	double score;
} cacc;

/* Share of the others' span a function fills (0..1). */
static double fill_share(const cacc *a)
{
	double f = a->span > 0 ? a->others / a->span : 0;

	return f < 0 ? 0 : f > 1 ? 1 : f;
}

static int cacc_cmp(const void *a, const void *b)
{
	const cacc *x = a, *y = b;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

typedef struct lateinst {
	size_t i;
	double late;
} lateinst;

static int late_cmp(const void *a, const void *b)
{
	const lateinst *x = a, *y = b;

	if (x->late != y->late)
		return x->late > y->late ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* ms of key at worker W's instance idx (0 when not among its causes). */
static double cause_ms(dctx *c, const pt_summary *s, uint32_t idx, uint32_t key)
{
	size_t lo = 0, hi = s->ncoll_cause, j;

	PT_BSEARCH(lo, hi, mid, s->coll_cause[mid].inst < idx);
	for (j = lo; j < s->ncoll_cause && s->coll_cause[j].inst == idx; j++) {
		const pt_pattern *p = pt_summary_pat(s, s->coll_cause[j].pat);
		if (diag_key_find(c, p->cls, p->key) == key)
			return s->coll_cause[j].ms;
	}
	return 0;
}

typedef struct sresult {
	double late_ms, span_extra_ms, predates_ms;
	size_t nlate;
	cacc *causes;
	size_t ncauses;
	/* the span-filling frames the causes explain (a thread that waits for
	 * the cause's work on another thread): keys borrowed from the summary */
	const char **waits;
	size_t nwaits;
} sresult;

static int causes_of(lk *L, size_t q, sresult *r)
{
	dctx *c = L->c;
	size_t nm = L->nm, i, k, nl = 0, j, nacc = 0, acap = 0;
	lkw *W = &L->w[L->m[q]];
	const pt_summary *s = c->w[W->w].s;
	lateinst *li = x_malloc((L->ninst ? L->ninst : 1) * sizeof(*li));
	double *v = x_malloc(nm * sizeof(*v));
	cacc *acc = NULL;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	if (!li || !v)
		goto out;
	for (i = 0; i < L->ninst; i++) {
		if (L->ilast[i] != q || L->ich[i] != L->main_ch)
			continue;
		for (k = j = 0; k < nm; k++)
			if (k != q)
				v[j++] = L->arr[i * nm + k];
		li[nl].i = i;
		li[nl].late = L->arr[i * nm + q] - lk_median(v, j);
		nl++;
	}
	qsort(li, nl, sizeof(*li), late_cmp);
	if (nl > MAX_CAUSE_INST)
		nl = MAX_CAUSE_INST;
	for (j = 0; j < nl; j++) {
		size_t i2 = li[j].i, e;
		uint32_t pos = L->ipos[i2];
		double span_own = 0, span_med;

		/* Span on each worker's own clock: previous end (window start) to arrival. */
		for (k = e = 0; k < nm; k++) {
			const lkw *X = &L->w[L->m[k]];
			const pt_summary *xs = c->w[X->w].s;
			uint32_t o = lk_own(X, L->main_ch, pos);
			double sp = xs->coll[o].arrive_us -
				    (o > X->cs[L->main_ch] ? xs->coll[o - 1].end_us : 0.0);
			if (k == q)
				span_own = sp;
			else
				v[e++] = sp;
		}
		span_med = lk_median(v, e);
		r->late_ms += li[j].late / 1e3;
		r->span_extra_ms += (span_own - span_med > 0 ? span_own - span_med : 0) / 1e3;
		if (li[j].late > span_own - span_med)
			r->predates_ms += (li[j].late - (span_own - span_med > 0 ? span_own - span_med
										       : 0)) / 1e3;
		/* Function by function: own time minus the others' median. */
		for (e = 0; e < s->ncoll_cause; e++) {
			const pt_coll_cause *cc = &s->coll_cause[e];
			const pt_pattern *p;
			uint32_t key;
			size_t a, n2;
			double others;

			if (cc->inst != lk_own(W, L->main_ch, pos))
				continue;
			p = pt_summary_pat(s, cc->pat);
			/* waiting in the span (a sync, a wait on a collective, a
			 * runtime call that blocks) is not what made it late */
			if (p->cls == PT_C_COMM ||
			    (p->cls == PT_C_PYTHON && blocking_leaf(p->key)) ||
			    (p->cls == PT_C_RUNTIME && strstr(p->key, "Synchronize")))
				continue;
			key = diag_key_find(c, p->cls, p->key);
			if (key == NONE)
				continue;
			/* A digest has no causes (docs/diagnose.md "Two phases"):
			 * the others are the workers read in full, the suspects
			 * and a sample of the job (pipeline.c). */
			for (k = n2 = 0; k < nm; k++) {
				const lkw *X = &L->w[L->m[k]];
				if (k == q || c->w[X->w].s->digest_of)
					continue;
				v[n2++] = cause_ms(c, c->w[X->w].s, lk_own(X, L->main_ch, pos), key);
			}
			others = lk_median(v, n2);
			for (a = 0; a < nacc && acc[a].key != key; a++)
				;
			if (a == nacc) {
				if (X_GROW(acc, acap, nacc + 1))
					goto out;
				memset(&acc[nacc], 0, sizeof(acc[nacc]));
				acc[nacc].key = key;
				acc[nacc].p = p;
				nacc++;
			}
			acc[a].extra += cc->ms - others;
			acc[a].own += cc->ms;
			acc[a].others += others;
			acc[a].span += span_med / 1e3;
		}
	}
	r->nlate = nl;
	/* Order: the extra time, discounted by how much of the span the
	 * function fills on the others: a frame that waits for the span's work
	 * on another thread ("## backward ##" while autograd runs) grows with
	 * the span as much as the work does; the work fills little of it. */
	for (j = 0; j < nacc; j++)
		acc[j].score = acc[j].extra * (1 - 0.9 * fill_share(&acc[j]));
	if (nacc > 1)
		qsort(acc, nacc, sizeof(*acc), cacc_cmp);
	/* Name the functions that account for the extra time in the spans;
	 * drop a span-filling one whose extra the ones before it explain. */
	{
		double min = r->span_extra_ms * 0.1 > 0.05 ? r->span_extra_ms * 0.1 : 0.05;
		double named = 0;
		r->waits = x_malloc((nacc ? nacc : 1) * sizeof(*r->waits));
		if (!r->waits)
			goto out;
		for (j = 0; j < nacc && r->ncauses < MAX_CAUSES; j++) {
			if (acc[j].extra < min)
				continue;
			if (fill_share(&acc[j]) >= 0.7 && acc[j].extra <= 1.25 * named) {
				r->waits[r->nwaits++] = acc[j].p->key;
				continue;
			}
			named += acc[j].extra;
			acc[r->ncauses++] = acc[j];
		}
	}
	r->causes = acc;
	acc = NULL;
	rc = 0;
out:
	x_free(acc);
	x_free(v);
	x_free(li);
	return rc;
}

/* ---- symptoms on the victims ------------------------------------------------------ */

/* Is the innermost frame of this Python/CPU key a call that blocks on the
 * GPU or on a collective? */
static int blocking_leaf(const char *key)
{
	const char *leaf = strrchr(key, '|');

	return pt_wait_blocking_frame(leaf ? leaf + 1 : key);
}

/* Can waiting for peers make this finding?  Communication (a collective
 * lasts until the last member arrives), an idle GPU, and the host calls
 * that block on the GPU or on a collective (commkind.h, "waits").  A
 * compute kernel's own cost is never waiting, nor a slow p2p pair's
 * (src/diagnose/p2p.c: its time is the end that waited less). */
static int wait_symptom(const dfinding *f)
{
	if (f->cat == DC_COMM)
		return !df_comm_own_cause(f);
	if (f->cat == DC_COMPUTE)
		return !strcmp(f->metric, PT_KEY_GPU_UTILIZATION);
	if (f->cat == DC_RUNTIME)
		return pt_wait_blocking_runtime(f->function);
	if (f->cat == DC_PYTHON)
		return blocking_leaf(f->function);
	/* a slow step whose extra time is in a collective or a sync */
	if (f->cat == DC_STEPS)
		return f->function[0] && blocking_leaf(f->function);
	return 0;
}

static int is_straggler(const lk *L, const char *id)
{
	size_t q;

	for (q = 0; q < L->nm; q++) {
		const lkw *W = &L->w[L->m[q]];
		if (W->straggler && !strcmp(L->c->w[W->w].id, id))
			return 1;
	}
	return 0;
}

/* The straggler worker w waited for longest (index into c->w), from its
 * instances' last arrivers; failing that the straggler the others waited
 * for most; UINT32_MAX when there is none.  acc: c->nw doubles. */
static uint32_t waited_for(const lk *L, size_t w, const unsigned char *strag, double *acc)
{
	const dctx *c = L->c;
	uint32_t best = UINT32_MAX;
	size_t i, q;
	double bv = 0;

	memset(acc, 0, c->nw * sizeof(*acc));
	if (c->lkw)
		for (i = 0; i < c->lkw[w].n; i++) {
			uint32_t a = c->lkw[w].last[i];
			if (a < c->nw && strag[a] && c->lkw[w].wait_ms[i] > 0)
				acc[a] += c->lkw[w].wait_ms[i];
		}
	for (i = 0; i < c->nw; i++)
		if (strag[i] && acc[i] > bv) {
			bv = acc[i];
			best = (uint32_t)i;
		}
	if (best != UINT32_MAX)
		return best;
	for (q = 0; q < L->nm; q++) {
		const lkw *W = &L->w[L->m[q]];
		if (W->straggler && W->w != w && W->blamed_us > bv) {
			bv = W->blamed_us;
			best = W->w;
		}
	}
	return best;
}

/* The findings on workers that waited for peers that waiting can make
 * (wait_symptom) and whose time lost is no more than that wait: it is
 * their waiting, not their own cost.  Each is listed under "explained" in
 * the section and linked to the straggler it waited for (caused_by: the
 * merge makes it evidence of that one's finding); without a straggler it
 * is dropped.  Returns how many. */
static size_t fold_symptoms(lk *L, pt_rv *explained, double job_ms)
{
	dctx *c = L->c;
	size_t i, j, q, nfold = 0;
	double *waited = x_calloc(c->nw ? c->nw : 1, sizeof(*waited));
	double *acc = x_calloc(c->nw ? c->nw : 1, sizeof(*acc));
	unsigned char *strag = x_calloc(c->nw ? c->nw : 1, 1);

	if (!waited || !acc || !strag) {
		c->oom = 1;
		x_free(strag);
		x_free(acc);
		x_free(waited);
		return 0;
	}
	for (q = 0; q < L->nm; q++) {
		const lkw *W = &L->w[L->m[q]];
		waited[W->w] = W->waited_us / 1e3;
		strag[W->w] = (unsigned char)W->straggler;
	}
	for (i = j = 0; i < c->nf; i++) {
		dfinding *f = &c->f[i];
		double wt = 0;
		size_t w = c->nw;

		if (f->worker && wait_symptom(f)) {
			uint32_t wi = df_worker(c, f);
			if (wi != UINT32_MAX) {
				w = wi;
				wt = waited[w];
			}
		}
		/* 5% slack: the wait is measured on kernel starts, the
		 * symptom on durations that also hold a little of the work.  A
		 * collective on a worker that waited is its waiting whatever
		 * the estimate of its time lost (a median duration times the
		 * count overstates it when a few instances hold the wait). */
		if ((wt > 0 && f->impact_ms <= wt * 1.05 + 0.005 * job_ms) ||
		    (f->cat == DC_COMM && wt >= 0.05 * job_ms &&
		     !is_straggler(L, f->worker))) {
			uint32_t s = w < c->nw ? waited_for(L, w, strag, acc) : UINT32_MAX;
			pt_rv *o;
			if (s == UINT32_MAX && w < c->nw && strag[w]) {
				/* a straggler that waited too, for no other: its
				 * own finding, which the merge gives its cause */
				c->f[j++] = *f;
				continue;
			}
			o = pt_rv_obj(c->rep, explained, NULL);
			pt_rv_str(c->rep, o, PT_KEY_WORKER, f->worker);
			pt_rv_str(c->rep, o, PT_KEY_CATEGORY, f->category);
			pt_rv_str(c->rep, o, PT_KEY_FUNCTION, f->function);
			pt_rv_num(c->rep, o, PT_KEY_IMPACT_MS, f->impact_ms);
			pt_rv_num(c->rep, o, "waited for others (ms)", wt);
			nfold++;
			if (s != UINT32_MAX) {
				f->caused_by = c->w[s].id;
				pt_rv_str(c->rep, o, PT_KEY_CAUSED_BY, f->caused_by);
				c->f[j++] = *f;
				continue;
			}
			df_free(f);
			continue;
		}
		c->f[j++] = *f;
	}
	c->nf = j;
	x_free(strag);
	x_free(acc);
	x_free(waited);
	return nfold;
}

/* ---- the section ------------------------------------------------------------------- */

static double round3(double x)
{
	return round(x * 1e3) / 1e3;
}

static void straggler_finding(lk *L, size_t q, const sresult *r, double lost_ms,
			      double others_lost, double job_step_ms, double nsteps, size_t nfold)
{
	dctx *c = L->c;
	lkw *W = &L->w[L->m[q]];
	char fb[160];
	pt_sb sb = { 0 };
	dfinding *f;
	double saved_ms = W->saved_us / 1e3 / nsteps;
	size_t j;
	int predates;

	f = df_add(c, DC_LOCKSTEP, c->w[W->w].id, r->ncauses ? r->causes[0].p->key : "",
		   "others_waited_ms", round3(lost_ms), round3(others_lost), lost_ms);
	if (!f)
		return;
	if (r->nwaits) {
		f->waits = x_malloc(r->nwaits * sizeof(*f->waits));
		if (!f->waits)
			c->oom = 1;
		else
			memcpy(f->waits, r->waits, r->nwaits * sizeof(*f->waits));
		f->nwaits = f->waits ? r->nwaits : 0;
	}
	if (r->ncauses > 1) {
		f->also = x_malloc((r->ncauses - 1) * sizeof(*f->also));
		if (!f->also)
			c->oom = 1;
		for (j = 1; f->also && j < r->ncauses; j++)
			f->also[f->nalso++] = r->causes[j].p->key;
	}
	df_cause(f, PT_CAUSE_STRAGGLER, PT_UNIT_MS);
	df_metric(f, "late arrivals", W->last, PT_UNIT_COUNT);
	df_metric(f, "collectives", (double)(L->ninst - L->nbad), PT_UNIT_COUNT);
	df_metric(f, "workers that waited", (double)(L->nm - 1), PT_UNIT_COUNT);
	df_metric(f, "others waited in all (ms)", W->blamed_us / 1e3, PT_UNIT_MS);
	df_metric(f, "others waited each (ms)", lost_ms, PT_UNIT_MS);
	df_metric(f, "others' median wait (ms)", others_lost, PT_UNIT_MS);
	df_metric(f, "step saved (ms)", saved_ms, PT_UNIT_MS_STEP);
	df_metric(f, "step saved (%)", job_step_ms > 0 ? 100 * saved_ms / job_step_ms : 0,
		  PT_UNIT_PCT);
	f->has_what_if = 1;
	f->what_if_ms = job_step_ms - saved_ms;
	f->instead_ms = job_step_ms;
	df_who(&sb, c, W->w, 'R');
	df_arg(c, f, "%s", sb.oom || !sb.buf ? "" : sb.buf);
	pt_sb_reset(&sb);
	predates = r->late_ms > 0 && r->predates_ms >= 0.5 * r->late_ms;
	if (predates)
		pt_sb_addf(&sb, " Most of its lateness (%.2f of %.2f ms behind the median worker) "
			   "predates the profiled window: it started the window late, so the cause "
			   "lies in the previous step; profile more steps (--steps 2 or more) to see "
			   "it.", r->predates_ms, r->late_ms);
	df_arg(c, f, "%s", sb.oom || !sb.buf ? "" : sb.buf);
	pt_sb_reset(&sb);
	if (r->ncauses) {
		pt_sb_addf(&sb, " %s the span from the previous collective to its late arrivals it "
			   "spent more time than the others in ", predates ? "Inside the window, in" : "In");
		for (j = 0; j < r->ncauses; j++) {
			const pt_pattern *p = r->causes[j].p;
			pt_sb_addf(&sb, "%s%s", j ? (j + 1 == r->ncauses ? " and " : ", ") : "",
				   pt_name_sentence(p->key, p->cls, fb, sizeof(fb)));
			if (p->cls == PT_C_PYTHON && strchr(p->key, '|')) {
				/* the caller too: "sleep" alone says little */
				const char *e = strrchr(p->key, '|'), *b = e;
				while (b > p->key && b[-1] != '|')
					b--;
				pt_sb_addf(&sb, " (called from %.*s)", (int)(e - b > 120 ? 120 : e - b), b);
			}
			pt_sb_addf(&sb, " (+%.2f ms: %.2f ms against the others' median %.2f ms)",
				   r->causes[j].extra, r->causes[j].own, r->causes[j].others);
		}
		pt_sb_addc(&sb, '.');
	}
	df_arg(c, f, "%s", sb.oom || !sb.buf ? "" : sb.buf);
	pt_sb_reset(&sb);
	if (nfold)
		pt_sb_addf(&sb, " %zu symptom finding%s on the workers that waited for it %s "
			   "folded under this one (its evidence; \"Lockstep\" \"explained\").",
			   nfold, nfold == 1 ? "" : "s", nfold == 1 ? "is" : "are");
	df_arg(c, f, "%s", sb.oom || !sb.buf ? "" : sb.buf);
	if (sb.oom)
		c->oom = 1;
	pt_sb_free(&sb);
}

/* A finding and a "mismatched" entry for each worker whose collectives do
 * not match the others' (it is left out of the rest of the analysis). */
static void report_mismatches(lk *L, pt_rv *sec)
{
	dctx *c = L->c;
	pt_rv *mm = NULL;
	size_t i;

	for (i = 0; i < L->nw; i++) {
		const lkw *W = &L->w[i];
		dfinding *f;
		if (!W->mismatch)
			continue;
		if (!mm)
			mm = pt_rv_arr(c->rep, sec, "mismatched");
		{
			pt_rv *o = pt_rv_obj(c->rep, mm, NULL);
			pt_rv_str(c->rep, o, PT_KEY_WORKER, c->w[W->w].id);
			pt_rv_int(c->rep, o, PT_KEY_RANK, c->w[W->w].s->rank);
			pt_rv_str(c->rep, o, "problem", W->mismatch);
		}
		f = df_add(c, DC_LOCKSTEP, c->w[W->w].id, "", "collectives_mismatch", 1, NAN, 0);
		if (f) {
			pt_sb who = { 0 };
			df_cause(f, PT_CAUSE_MISMATCH, PT_UNIT_COUNT);
			df_who(&who, c, W->w, 'R');
			if (who.oom)
				c->oom = 1;
			df_arg(c, f, "%s", who.oom || !who.buf ? "" : who.buf);
			df_arg(c, f, "%s", W->mismatch);
			pt_sb_free(&who);
		}
	}
}

/* The section's job-wide numbers: thresholds, instances, channels, the
 * job's window and step, all waiting and the median clock residual. */
static void report_job(lk *L, pt_rv *sec, double min_lost, double job_ms, double job_step_ms,
		       double total_blame)
{
	dctx *c = L->c;
	pt_rv *th, *a;
	size_t i, q;

	th = pt_rv_obj(c->rep, sec, "thresholds");
	pt_rv_num(c->rep, th, "min others waited per peer (ms)", round3(min_lost));
	pt_rv_num(c->rep, th, "min ratio to the median worker", 2);
	pt_rv_num(c->rep, th, "min share of all waiting", 0.25);
	pt_rv_int(c->rep, sec, PT_KEY_INSTANCES, (int64_t)(L->ninst - L->nbad));
	if (L->nbad)
		pt_rv_int(c->rep, sec, "instances left out (ends disagree)", (int64_t)L->nbad);
	a = pt_rv_arr(c->rep, sec, PT_KEY_CHANNELS);
	for (i = 0; i < L->nchan; i++)
		pt_rv_str(c->rep, a, NULL, L->chans[i]);
	pt_rv_num(c->rep, sec, "job window (ms)", round3(job_ms));
	pt_rv_num(c->rep, sec, "job step (ms)", round3(job_step_ms));
	pt_rv_num(c->rep, sec, "waiting in all (ms)", round3(total_blame));
	for (q = 0; q < L->nm; q++)
		L->tmp[q] = L->w[L->m[q]].resid_us;
	pt_rv_num(c->rep, sec, "clock residual (us)", round3(lk_median(L->tmp, L->nm)));
}

/* The "stragglers" array, most waited-for first: for each, what it cost,
 * its causes (causes_of, kept in res[]), the step without it ("what
 * if") and its finding (the first one also names the nfold symptoms its
 * waiting explains).  -1: out of memory. */
static int report_stragglers(lk *L, pt_rv *sec, const dpair *lost, const double *medl,
			     sresult *res, double job_step_ms, double nsteps, size_t nfold)
{
	dctx *c = L->c;
	pt_rv *sa = pt_rv_arr(c->rep, sec, "stragglers");
	size_t i;

	for (i = 0; i < L->nm; i++) {
		size_t qq = lost[i].idx, j;
		lkw *W = &L->w[L->m[qq]];
		sresult *r = &res[qq];
		pt_rv *o, *ca, *wi;
		double saved_ms;

		if (!W->straggler)
			continue;
		if (causes_of(L, qq, r))
			return -1;
		saved_ms = W->saved_us / 1e3 / nsteps;
		o = pt_rv_obj(c->rep, sa, NULL);
		pt_rv_str(c->rep, o, PT_KEY_WORKER, c->w[W->w].id);
		pt_rv_int(c->rep, o, PT_KEY_RANK, c->w[W->w].s->rank);
		pt_rv_num(c->rep, o, PT_KEY_OTHERS_WAITED_FOR_IT_MS, round3(W->blamed_us / 1e3));
		pt_rv_num(c->rep, o, "per peer (ms)", round3(lost[i].v));
		pt_rv_int(c->rep, o, "last arrivals", W->last);
		pt_rv_num(c->rep, o, "late (ms)", round3(r->late_ms));
		pt_rv_num(c->rep, o, "late in the span before (ms)", round3(r->span_extra_ms));
		pt_rv_num(c->rep, o, "late before the span (ms)", round3(r->predates_ms));
		pt_rv_bool(c->rep, o, "predates window",
			   r->late_ms > 0 && r->predates_ms >= 0.5 * r->late_ms);
		ca = pt_rv_arr(c->rep, o, PT_KEY_CAUSES);
		for (j = 0; j < r->ncauses; j++) {
			pt_rv *x = pt_rv_obj(c->rep, ca, NULL);
			pt_rv_str(c->rep, x, PT_KEY_FUNCTION, r->causes[j].p->key);
			pt_rv_str(c->rep, x, PT_KEY_CLASS, pt_class_name(r->causes[j].p->cls));
			pt_rv_num(c->rep, x, PT_KEY_EXTRA_MS, round3(r->causes[j].extra));
			pt_rv_num(c->rep, x, "own (ms)", round3(r->causes[j].own));
			pt_rv_num(c->rep, x, "others median (ms)", round3(r->causes[j].others));
		}
		wi = pt_rv_obj(c->rep, o, "what if");
		pt_rv_num(c->rep, wi, "step (ms)", round3(job_step_ms - saved_ms));
		pt_rv_num(c->rep, wi, "now (ms)", round3(job_step_ms));
		pt_rv_num(c->rep, wi, "saved (ms)", round3(saved_ms));
		pt_rv_num(c->rep, wi, "saved (%)",
			  job_step_ms > 0 ? round3(100 * saved_ms / job_step_ms) : 0);
		straggler_finding(L, qq, r, lost[i].v, medl[i],
				  job_step_ms, nsteps, i == 0 ? nfold : 0);
	}
	return 0;
}

/* The "workers" object: per worker with collectives, its waiting, the
 * waiting it caused, its clock fit and its own step (or its mismatch). */
static int u32_cmp(const void *a, const void *b, void *ctx)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	(void)ctx;
	return x < y ? -1 : x > y;
}

/* Stragglers first, then most waiting caused, most waited, id order. */
static int row_cmp(const void *a, const void *b, void *ctx)
{
	const lk *L = ctx;
	const lkw *x = &L->w[*(const uint32_t *)a], *y = &L->w[*(const uint32_t *)b];

	if (x->straggler != y->straggler)
		return y->straggler - x->straggler;
	if (x->blamed_us != y->blamed_us)
		return x->blamed_us > y->blamed_us ? -1 : 1;
	if (x->waited_us != y->waited_us)
		return x->waited_us > y->waited_us ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* The participants to list: all, or at scale the stragglers and those that
 * caused (then waited) most, DIAG_ROWS_MAX in all, back in id order; NULL
 * out of memory.  *n is their number. */
static uint32_t *rows_to_list(lk *L, size_t *n)
{
	uint32_t *r = x_malloc((L->nw ? L->nw : 1) * sizeof(*r));
	size_t q;

	if (!r)
		return NULL;
	for (q = 0; q < L->nw; q++)
		r[q] = (uint32_t)q;
	*n = L->nw;
	if (L->nw > DIAG_ROWS_MAX) {
		qsort_r(r, L->nw, sizeof(*r), row_cmp, L);
		*n = DIAG_ROWS_MAX;
		qsort_r(r, *n, sizeof(*r), u32_cmp, NULL);
	}
	return r;
}

static void report_workers(lk *L, pt_rv *sec, double nsteps)
{
	dctx *c = L->c;
	pt_rv *ws = pt_rv_obj(c->rep, sec, PT_KEY_WORKERS);
	size_t q, n;
	uint32_t *r = rows_to_list(L, &n);

	if (!r) {
		c->oom = 1;
		return;
	}
	for (q = 0; q < n; q++) {
		const lkw *W = &L->w[r[q]];
		pt_rv *o = pt_rv_obj(c->rep, ws, c->w[W->w].id);
		pt_rv_int(c->rep, o, PT_KEY_RANK, c->w[W->w].s->rank);
		if (W->mismatch) {
			pt_rv_str(c->rep, o, "mismatch", W->mismatch);
			continue;
		}
		pt_rv_num(c->rep, o, "waited for others (ms)", round3(W->waited_us / 1e3));
		pt_rv_num(c->rep, o, PT_KEY_OTHERS_WAITED_FOR_IT_MS, round3(W->blamed_us / 1e3));
		pt_rv_int(c->rep, o, "last arrivals", W->last);
		pt_rv_num(c->rep, o, "clock offset (us)", round3(W->offset_us));
		pt_rv_num(c->rep, o, "clock residual (us)", round3(W->resid_us));
		pt_rv_num(c->rep, o, "own step (ms)",
			  round3((c->w[W->w].window_ms - W->waited_us / 1e3) / nsteps));
		pt_rv_bool(c->rep, o, PT_KEY_STRAGGLER, W->straggler);
	}
	x_free(r);
}

void diag_lockstep(dctx *c)
{
	struct dlk *d = c->lk;
	lk *L = NULL;
	pt_rv *sec, *ex;
	sresult *res = NULL;
	size_t q, nfold = 0;

	if (!d || !d->matched)
		goto out;
	L = &d->L;
	sec = pt_rv_obj(c->rep, pt_report_root(c->rep), PT_KEY_LOCKSTEP);
	report_mismatches(L, sec);
	pt_rv_int(c->rep, sec, "workers with collectives", (int64_t)L->nw);
	pt_rv_int(c->rep, sec, "workers matched", (int64_t)L->nm);
	pt_rv_str(c->rep, sec, "matched by",
		  L->byseq ? "process group and sequence number" : "position");
	if (d->nvers1)
		pt_rv_int(c->rep, sec, "workers without collective data (summary version 1)",
			  (int64_t)d->nvers1);
	if (L->nm < 2 || !d->lost)
		goto out;
	res = x_calloc(L->nm, sizeof(*res));
	if (!res)
		goto oom;
	report_job(L, sec, d->min_lost, d->job_ms, d->job_step_ms, d->total_blame);

	/* Symptoms explained by waiting, before the straggler findings. */
	ex = pt_rv_arr(c->rep, sec, "explained");
	nfold = fold_symptoms(L, ex, d->job_ms);
	if (c->comm_waiting)
		pt_rv_int(c->rep, sec, "Communication entries of waiting workers removed",
			  (int64_t)c->comm_waiting);
	if (report_stragglers(L, sec, d->lost, d->medl, res, d->job_step_ms, d->nsteps, nfold))
		goto oom;
	report_workers(L, sec, d->nsteps);
	goto out;
oom:
	c->oom = 1;
out:
	if (res)
		for (q = 0; q < L->nm; q++) {
			x_free(res[q].causes);
			x_free(res[q].waits);
		}
	x_free(res);
	/* c->lk stays for the timeline (diag_timeline); pt_diagnose frees it. */
}
