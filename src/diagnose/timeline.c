/*
 * timeline.c - the diagnosis's model for the timeline (src/report/
 * timeline.h): every worker's shift onto the job clock, the matched
 * collective instances with their members and last arrivers (from the
 * lockstep analysis, lockstep_match.c), the stragglers, the slow steps
 * (steps.c) and which workers and steps each finding is about.  Runs last
 * in pt_diagnose, after the findings are ranked; the report keeps the
 * model and writes the "timeline" key from it (docs/display.md).
 */
#include "internal.h"
#include "lockstep.h"
#include "sections.h"
#include "../report/timeline.h"
#include "../util/xalloc.h"

#include <stdlib.h>
#include <string.h>

typedef struct wref {
	const char *id;
	int64_t rank;
	uint32_t w;       /* index into c->w */
} wref;

/* By rank (unknown last), then id: the order of "workers" in the page. */
static int wref_cmp(const void *a, const void *b)
{
	const wref *x = a, *y = b;
	int64_t rx = x->rank < 0 ? INT64_MAX : x->rank, ry = y->rank < 0 ? INT64_MAX : y->rank;

	if (rx != ry)
		return rx < ry ? -1 : 1;
	return strcmp(x->id, y->id);
}

static int id_cmp(const void *a, const void *b)
{
	const wref *x = a, *y = b;

	return strcmp(x->id, y->id);
}

/* The instances, members and last arrivers of the lockstep analysis. */
static int add_instances(dctx *c, pt_timeline *t, const uint32_t *inv)
{
	const lk *L = &c->lk->L;
	const lkw *R = &L->w[L->m[0]];
	const pt_summary *rs = c->w[R->w].s;
	size_t i, q, nm = L->nm;

	t->ref = inv[R->w];
	for (q = 0; q < nm; q++) {
		const lkw *W = &L->w[L->m[q]];
		pt_tl_worker *tw;

		if (inv[W->w] == UINT32_MAX)  /* not drawn (diag_row) */
			continue;
		tw = &t->w[inv[W->w]];
		tw->shift_us = c->w[W->w].s->window_start_us - rs->window_start_us - W->offset_us;
		tw->aligned = 1;
		tw->straggler = W->straggler;
	}
	if (!L->ninst)
		return 0;
	t->inst = x_calloc(L->ninst, sizeof(*t->inst));
	t->own = x_malloc(L->ninst * t->nw * sizeof(*t->own));
	if (!t->inst || !t->own)
		return -1;
	t->ninst = L->ninst;
	memset(t->own, 0xff, L->ninst * t->nw * sizeof(*t->own));
	for (i = 0; i < L->ninst; i++) {
		pt_tl_inst *x = &t->inst[i];
		uint32_t ch = L->ich[i], j = lk_own(R, ch, L->ipos[i]);
		x->chan = L->chans[ch];
		x->name = j < rs->ncoll && rs->coll[j].name < rs->ncoll_names ?
			rs->coll_names[rs->coll[j].name] : "";
		x->last = L->ilast[i] == NONE || inv[L->w[L->m[L->ilast[i]]].w] == UINT32_MAX
			  ? PT_TL_NONE : inv[L->w[L->m[L->ilast[i]]].w];
		x->saved_us = L->isaved[i];
		for (q = 0; q < nm; q++) {
			const lkw *W = &L->w[L->m[q]];
			if (inv[W->w] != UINT32_MAX)
				t->own[i * t->nw + inv[W->w]] = lk_own(W, ch, L->ipos[i]);
		}
	}
	return 0;
}

/* Which workers and steps each ranked finding is about. */
static int add_findings(dctx *c, pt_timeline *t, const wref *byid)
{
	size_t nf = 0, i, j, k, cap;
	const pt_finding *f = pt_report_findings(c->rep, &nf);

	if (!nf)
		return 0;
	t->f = x_calloc(nf, sizeof(*t->f));
	if (!t->f)
		return -1;
	for (i = 0; i < nf; i++) {
		pt_tl_finding *tf = &t->f[t->nf];
		int steps = f[i].category && !strcmp(f[i].category, dcat_names[DC_STEPS]);

		if (!f[i].nworkers)
			continue;
		tf->w = x_malloc(f[i].nworkers * sizeof(*tf->w));
		if (!tf->w)
			return -1;
		tf->index = i;
		for (j = 0; j < f[i].nworkers; j++) {
			wref key = { f[i].workers[j], 0, 0 };
			const wref *hit = bsearch(&key, byid, t->nw, sizeof(*byid), id_cmp);
			if (hit)
				tf->w[tf->nw++] = hit->w;
		}
		if (!tf->nw) {
			x_free(tf->w);
			tf->w = NULL;
			continue;
		}
		t->nf++;
		if (!steps)
			continue;
		/* A Steps finding is about its worker's slow steps. */
		cap = 0;
		for (j = 0; j < tf->nw; j++) {
			const pt_tl_worker *tw = &t->w[tf->w[j]];
			for (k = 0; tw->slow && k < tw->s->nsteps; k++) {
				if (!tw->slow[k])
					continue;
				if (X_GROW(tf->steps, cap, tf->nsteps + 1))
					return -1;
				tf->steps[tf->nsteps++] = tw->s->step_numbers[k];
			}
		}
	}
	return 0;
}

void diag_timeline(dctx *c)
{
	pt_timeline *t = pt_timeline_new(c->nw);
	wref *ord = x_malloc((c->nw ? c->nw : 1) * sizeof(*ord));
	uint32_t *inv = x_malloc((c->nw ? c->nw : 1) * sizeof(*inv));
	size_t i, nt;

	if (!t || !ord || !inv)
		goto oom;
	/* At scale, the workers diag_row keeps (the reference among them). */
	for (i = 0, nt = 0; i < c->nw; i++) {
		inv[i] = UINT32_MAX;
		if (!diag_row(c, i))
			continue;
		ord[nt].id = c->w[i].id;
		ord[nt].rank = c->w[i].s->rank;
		ord[nt++].w = (uint32_t)i;
	}
	qsort(ord, nt, sizeof(*ord), wref_cmp);
	for (i = 0; i < nt; i++) {
		const dworker *dw = &c->w[ord[i].w];
		pt_tl_worker *tw = &t->w[i];
		inv[ord[i].w] = (uint32_t)i;
		tw->s = dw->s;
		tw->id = dw->id;
		if (c->slow && c->slow[ord[i].w] && dw->s->nsteps) {
			tw->slow = x_malloc(dw->s->nsteps);
			if (!tw->slow)
				goto oom;
			memcpy(tw->slow, c->slow[ord[i].w], dw->s->nsteps);
		}
	}
	t->nw = nt;
	if (pt_timeline_index(t))
		goto oom;
	if (c->lk && c->lk->matched && c->lk->L.nm >= 2 && c->lk->L.ich &&
	    add_instances(c, t, inv))
		goto oom;
	/* byid: the model's indices, sorted by id for the findings' lookup. */
	for (i = 0; i < nt; i++)
		ord[i].w = (uint32_t)i, ord[i].id = t->w[i].id;
	qsort(ord, nt, sizeof(*ord), id_cmp);
	if (add_findings(c, t, ord))
		goto oom;
	pt_report_set_timeline(c->rep, t);
	t = NULL;
	pt_timeline_add_key(c->rep);
	goto out;
oom:
	c->oom = 1;
out:
	pt_timeline_free(t);
	x_free(inv);
	x_free(ord);
}
