/*
 * finding.c - the finding model (report.h): the ranked findings kept beside
 * the report tree, each copied into the report's arena, and their
 * report.json rendering under "findings".  Filled by src/diagnose/findings.c
 * and src/hang/hang.c; rendered again by the text reports (text.c,
 * text_people.c), which read the model, not the tree.
 */
#include "internal.h"
#include "../util/xalloc.h"
#include "keys.h"

#include <math.h>
#include <string.h>

const char *const pt_ev_kind_names[PT_EV_COUNT] = {
	"same cause", "inside it", "its own collectives", "its own waiting for it",
	"symptom on a worker that waited for it",
};

pt_rv *pt_report_findings_open(pt_report *r)
{
	if (r && !r->farr)
		r->farr = pt_rv_arr(r, pt_report_root(r), PT_K_FINDINGS);
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

static void write_json(pt_report *r, const pt_finding *f, size_t rank)
{
	pt_rv *o = pt_rv_obj(r, r->farr, NULL), *a;
	size_t i;

	pt_rv_int(r, o, PT_K_RANK, (int64_t)rank);
	pt_rv_str(r, o, PT_K_CATEGORY, f->category);
	a = pt_rv_arr(r, o, PT_K_WORKERS);
	for (i = 0; i < f->nworkers; i++)
		pt_rv_str(r, a, NULL, f->workers[i]);
	pt_rv_str(r, o, PT_K_FUNCTION, f->function);
	pt_rv_str(r, o, PT_K_METRIC, f->metric);
	pt_rv_num_or_null(r, o, PT_K_VALUE, f->value);
	pt_rv_num_or_null(r, o, "others", f->others);
	pt_rv_num_or_null(r, o, PT_K_IMPACT_MS, f->impact_ms);
	pt_rv_str(r, o, PT_K_EXPLANATION, f->explanation);
	if (f->caused_by)
		pt_rv_str(r, o, PT_K_CAUSED_BY, f->caused_by);
	if (f->conf.level) {
		const struct pt_finding_conf *c = &f->conf;
		pt_rv *cf = pt_rv_obj(r, o, "confidence");
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
	if (!f->nev)
		return;
	a = pt_rv_arr(r, o, "evidence");
	for (i = 0; i < f->nev; i++) {
		const pt_finding_ev *e = &f->ev[i];
		pt_rv *eo = pt_rv_obj(r, a, NULL);
		pt_rv_str(r, eo, PT_K_KIND, pt_ev_kind_names[e->kind]);
		pt_rv_str(r, eo, PT_K_CATEGORY, e->category);
		pt_rv_str(r, eo, PT_K_WORKER, e->worker);
		pt_rv_str(r, eo, PT_K_FUNCTION, e->function);
		pt_rv_str(r, eo, PT_K_METRIC, e->metric);
		pt_rv_num(r, eo, PT_K_VALUE, e->value);
		pt_rv_num_or_null(r, eo, "others", e->others);
		pt_rv_num(r, eo, PT_K_IMPACT_MS, e->impact_ms);
		pt_rv_str(r, eo, PT_K_EXPLANATION, e->explanation);
	}
}

int pt_report_add_finding(pt_report *r, const pt_finding *f)
{
	pt_finding *d;
	const char **ws = NULL;
	pt_finding_ev *ev = NULL;
	size_t i;

	if (!r || r->oom || !pt_report_findings_open(r))
		return -1;
	if (X_GROW(r->f, r->fcap, r->nf + 1)) {
		r->oom = 1;
		return -1;
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
	d->ev = ev;
	d->category = dup0(r, f->category);
	d->function = dup0(r, f->function);
	d->metric = dup0(r, f->metric);
	d->explanation = dup0(r, f->explanation);
	d->caused_by = f->caused_by ? dup0(r, f->caused_by) : NULL;
	if (f->conf.level) {
		d->conf.level = dup0(r, f->conf.level);
		d->conf.calls = dup0(r, f->conf.calls ? f->conf.calls : "unknown");
		d->conf.noise = dup0(r, f->conf.noise);
		d->conf.evidence = dup0(r, f->conf.evidence);
	}
	if (r->oom)
		return -1;
	r->nf++;
	write_json(r, d, r->nf);
	return r->oom ? -1 : 0;
}
