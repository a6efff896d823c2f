/*
 * finding.c - the finding model (report.h): the ranked findings kept beside
 * the report tree, each copied into the report's arena, and their
 * report.json rendering under "findings".  Filled by src/diagnose/findings.c
 * and src/hang/hang.c; rendered again by the text reports (text.c,
 * text_people.c), which read the model, not the tree.
 */
#include "internal.h"
#include "phrase.h"
#include "../util/xalloc.h"
#include "keys.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *const pt_ev_kind_names[PT_EV_COUNT] = {
	"same cause", "inside it", "its own collectives", "its own waiting for it",
	"symptom on a worker that waited for it", "same cause on another worker",
	"the always-on watch",
};

pt_rv *pt_report_findings_open(pt_report *r)
{
	if (r && !r->farr)
		r->farr = pt_rv_arr(r, pt_report_root(r), PT_KEY_FINDINGS);
	return r ? r->farr : NULL;
}

const pt_finding *pt_report_findings(const pt_report *r, size_t *n)
{
	*n = r ? r->nf : 0;
	return *n ? r->f : NULL;
}

/* s in the arena ("" for NULL); NULL only when out of memory. */
static const char *dup0(pt_report *r, const char *s)
{
	return pt_report_strdup(r, s ? s : "");
}

/* The CONTRACT additions, after the seed's keys. */
static void write_typed(pt_report *r, pt_rv *o, const pt_finding *f)
{
	static const char *const unit_names[PT_UNIT_N] = PT_UNIT_NAMES;
	const char *view = f->view ? f->view : pt_category_view(f->category);
	pt_rv *a;
	size_t i;

	if (view)
		pt_rv_str(r, o, "view", view);
	a = pt_rv_arr(r, o, "labels");
	for (i = 0; i < f->nworkers; i++)
		pt_rv_str(r, a, NULL, f->labels[i]);
	pt_rv_str(r, o, "cause", pt_cause_name(f->cause));
	a = pt_rv_arr(r, o, "metrics");
	for (i = 0; i < f->nmetrics; i++) {
		const pt_metric *m = &f->metrics[i];
		pt_rv *mo = pt_rv_obj(r, a, NULL);
		pt_rv_str(r, mo, "name", m->name);
		pt_rv_num_or_null(r, mo, "value", m->value);
		pt_rv_str(r, mo, "unit", unit_names[(unsigned)m->unit < PT_UNIT_N ? m->unit : 0]);
	}
	if (f->nsteps) {
		a = pt_rv_arr(r, o, "steps");
		for (i = 0; i < f->nsteps; i++)
			pt_rv_int(r, a, NULL, f->steps[i]);
	}
	if (f->has_what_if) {
		pt_rv *w = pt_rv_obj(r, o, "what if");
		pt_rv_num(r, w, "step (ms)", f->what_if_ms);
		pt_rv_num(r, w, "instead of (ms)", f->instead_ms);
	}
}

/* The label of worker id: "rank N" when the report's "workers" give its
 * rank, else the id. */
static const char *label_of(pt_report *r, const char *id)
{
	const pt_rv *w = pt_rv_get(pt_rv_get(pt_report_root(r), "workers"), id);
	const pt_rv *rk = pt_rv_get(w, "rank");
	char b[48];

	if (!rk || rk->type != PT_RV_INT || rk->i < 0)
		return id;
	snprintf(b, sizeof(b), "rank %lld", (long long)rk->i);
	return pt_report_strdup(r, b);
}

/* "confidence", when f is graded. */
static void write_conf(pt_report *r, pt_rv *o, const pt_finding *f)
{
	const struct pt_finding_conf *c = &f->conf;
	pt_rv *cf;

	if (!c->level)
		return;
	cf = pt_rv_obj(r, o, "confidence");
	pt_rv_str(r, cf, "level", c->level);
	pt_rv_num(r, cf, "time lost (share of window)", c->lost);
	pt_rv_num_or_null(r, cf, "apart (x)", c->apart);
	pt_rv_int(r, cf, "other workers flagged", (int64_t)c->same);
	pt_rv_str(r, cf, "calls", c->calls);
	if (isfinite(c->noise_ms)) {
		pt_rv_num(r, cf, "noise (ms per step)", c->noise_ms);
		pt_rv_str(r, cf, "noise", c->noise);
	}
	pt_rv_str(r, cf, "evidence", c->evidence);
}

static void write_json(pt_report *r, const pt_finding *f, size_t rank)
{
	pt_rv *o = pt_rv_obj(r, r->farr, NULL), *a;
	size_t i;

	pt_rv_int(r, o, PT_KEY_RANK, (int64_t)rank);
	pt_rv_str(r, o, PT_KEY_CATEGORY, f->category);
	a = pt_rv_arr(r, o, PT_KEY_WORKERS);
	for (i = 0; i < f->nworkers; i++)
		pt_rv_str(r, a, NULL, f->workers[i]);
	pt_rv_str(r, o, PT_KEY_FUNCTION, f->function);
	pt_rv_str(r, o, PT_KEY_METRIC, f->metric);
	pt_rv_num_or_null(r, o, PT_KEY_VALUE, f->value);
	pt_rv_num_or_null(r, o, "others", f->others);
	pt_rv_num_or_null(r, o, PT_KEY_IMPACT_MS, f->impact_ms);
	pt_rv_str(r, o, PT_KEY_EXPLANATION, f->explanation);
	if (f->caused_by)
		pt_rv_str(r, o, PT_KEY_CAUSED_BY, f->caused_by);
	write_conf(r, o, f);
	if (!f->nev)
		goto typed;
	a = pt_rv_arr(r, o, "evidence");
	for (i = 0; i < f->nev; i++) {
		const pt_finding_ev *e = &f->ev[i];
		pt_rv *eo = pt_rv_obj(r, a, NULL);
		pt_rv_str(r, eo, PT_KEY_KIND, pt_ev_kind_names[e->kind]);
		pt_rv_str(r, eo, PT_KEY_CATEGORY, e->category);
		pt_rv_str(r, eo, PT_KEY_WORKER, e->worker);
		pt_rv_str(r, eo, PT_KEY_FUNCTION, e->function);
		pt_rv_str(r, eo, PT_KEY_METRIC, e->metric);
		pt_rv_num(r, eo, PT_KEY_VALUE, e->value);
		pt_rv_num_or_null(r, eo, "others", e->others);
		pt_rv_num(r, eo, PT_KEY_IMPACT_MS, e->impact_ms);
		pt_rv_str(r, eo, PT_KEY_EXPLANATION, e->explanation);
	}
typed:
	write_typed(r, o, f);
}

/* d's typed fields as deep copies of f's, in the arena; labels resolved. */
static void copy_typed(pt_report *r, const pt_finding *f, pt_finding *d)
{
	const char **ls = NULL, **as = NULL;
	pt_metric *ms = NULL;
	int64_t *st = NULL;
	size_t i;

	if (d->nworkers && (ls = pt_report_alloc(r, d->nworkers * sizeof(*ls))))
		for (i = 0; i < d->nworkers; i++)
			ls[i] = f->labels ? dup0(r, f->labels[i]) :
				d->workers ? label_of(r, d->workers[i]) : "";
	if (f->nmetrics && (ms = pt_report_alloc(r, f->nmetrics * sizeof(*ms))))
		for (i = 0; i < f->nmetrics; i++) {
			ms[i] = f->metrics[i];
			ms[i].name = dup0(r, f->metrics[i].name);
		}
	if (!f->nmetrics && (ms = pt_report_alloc(r, sizeof(*ms)))) {
		/* no typed numbers: the headline alone */
		ms[0] = (pt_metric){ dup0(r, f->metric), f->value, PT_UNIT_NONE };
	}
	if (f->nargs && (as = pt_report_alloc(r, f->nargs * sizeof(*as))))
		for (i = 0; i < f->nargs; i++)
			as[i] = dup0(r, f->args[i]);
	if (f->nsteps && (st = pt_report_alloc(r, f->nsteps * sizeof(*st))))
		memcpy(st, f->steps, f->nsteps * sizeof(*st));
	d->labels = ls;
	d->metrics = ms;
	d->nmetrics = ms ? (f->nmetrics ? f->nmetrics : 1) : 0;
	d->args = as;
	d->nargs = as ? f->nargs : 0;
	d->steps = st;
	d->nsteps = st ? f->nsteps : 0;
	d->view = f->view ? dup0(r, f->view) : NULL;
}

/* A deep copy of f appended to the model; NULL out of memory. */
static pt_finding *model_add(pt_report *r, const pt_finding *f)
{
	pt_finding *d;
	const char **ws = NULL;
	pt_finding_ev *ev = NULL;
	size_t i;

	if (X_GROW(r->f, r->fcap, r->nf + 1)) {
		r->oom = 1;
		return NULL;
	}
	if (f->nworkers) {
		ws = pt_report_alloc(r, f->nworkers * sizeof(*ws));
		for (i = 0; ws && i < f->nworkers; i++)
			ws[i] = dup0(r, f->workers[i]);
	}
	if (f->nev) {
		ev = pt_report_alloc(r, f->nev * sizeof(*ev));
		for (i = 0; ev && i < f->nev; i++) {
			const pt_finding_ev *e = &f->ev[i];
			ev[i] = *e;
			ev[i].kind = e->kind < PT_EV_COUNT ? e->kind : PT_EV_SAME;
			ev[i].category = dup0(r, e->category);
			ev[i].worker = dup0(r, e->worker);
			ev[i].function = dup0(r, e->function);
			ev[i].metric = dup0(r, e->metric);
			ev[i].explanation = dup0(r, e->explanation);
		}
	}
	d = &r->f[r->nf];
	*d = *f;
	d->workers = ws;
	copy_typed(r, f, d);
	d->ev = ev;
	d->category = dup0(r, f->category);
	d->function = dup0(r, f->function);
	d->metric = dup0(r, f->metric);
	if (f->explanation || f->cause == PT_CAUSE_NONE) {
		d->explanation = dup0(r, f->explanation);
	} else {
		pt_sb sb = { 0 };
		pt_finding_render(d, NULL, NULL, &sb);
		if (sb.oom)
			r->oom = 1;
		d->explanation = dup0(r, sb.buf);
		pt_sb_free(&sb);
	}
	d->caused_by = f->caused_by ? dup0(r, f->caused_by) : NULL;
	if (f->conf.level) {
		d->conf.level = dup0(r, f->conf.level);
		d->conf.calls = dup0(r, f->conf.calls ? f->conf.calls : "unknown");
		d->conf.noise = dup0(r, f->conf.noise);
		d->conf.evidence = dup0(r, f->conf.evidence);
	}
	if (r->oom)
		return NULL;
	r->nf++;
	return d;
}

int pt_report_add_finding(pt_report *r, const pt_finding *f)
{
	pt_finding *d;

	if (!r || r->oom || !pt_report_findings_open(r))
		return -1;
	d = model_add(r, f);
	if (!d)
		return -1;
	write_json(r, d, r->nf);
	return r->oom ? -1 : 0;
}

int pt_report_add_finding_in(pt_report *r, pt_rv *o, const pt_finding *f)
{
	pt_finding *d;

	if (!r || r->oom || !o)
		return -1;
	d = model_add(r, f);
	if (!d)
		return -1;
	pt_rv_str(r, o, "category", d->category);
	write_conf(r, o, d);
	write_typed(r, o, d);
	return r->oom ? -1 : 0;
}
