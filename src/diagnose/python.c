/*
 * python.c - the "Python functions" section: Python/CPU call stacks that
 * own more than the seed's threshold (1%) of some worker's window, listed
 * per stack with those workers; stacks where a listed worker also differs
 * from the other workers (a CPU-side stall, extra CPU work) become findings.
 */
#include "internal.h"
#include "sections.h"
#include "../util/xalloc.h"
#include "../report/keys.h"

#include <stdio.h>
#include <string.h>

typedef struct pentry {
	uint32_t k;
	double max;
	size_t off, n;
} pentry;

static int cmp_pentry(const void *a, const void *b, void *arg)
{
	const pentry *x = a, *y = b;
	const dctx *c = arg;

	if (x->max != y->max)
		return x->max > y->max ? -1 : 1;
	return strcmp(c->keys[x->k].key, c->keys[y->k].key);
}

/* A CPU frame owns time only while nothing of a higher class runs, so its
 * bottleneck ratio also rises when the worker's GPU merely idles more (the
 * last worker to reach a collective: measured on the unmodified DLRM set,
 * Adagrad.step owns 1.7% on two ranks and 0.7% on the others with the same
 * 1.35-1.42 ms duration everywhere).  A stall or extra CPU work also makes
 * the function itself take longer: require its execution ratio to be an
 * outlier too, when other workers report the stack. */
static int exec_confirms(dctx *c, dmetric *mx, size_t j)
{
	pt_robust st;

	if (mx->n < 2)
		return 1;
	dm_stats(c, mx, j, &st);
	return pt_robust_outlier(mx->val[j], &st, PT_DIR_HIGH, c->o->z, c->o->rel, c->o->mad_floor);
}

void diag_python(dctx *c)
{
	const char *name = PT_KEY_PYTHON_FUNCTIONS;
	pt_rv *sec = pt_rv_obj(c->rep, pt_report_root(c->rep), name);
	dmetric *m = &c->m[0], *mx = &c->m[1];
	pentry *ent = NULL;
	dpair *rec = NULL;
	size_t nent = 0, entcap = 0, nrec = 0, reccap = 0, i, j;
	double thr = c->o->python_threshold;

	for (i = 0; i < c->nkeys; i++) {
		const dkey *k = &c->keys[i];
		pentry *e;

		if (k->cls != PT_C_PYTHON)
			continue;
		dm_load(c, m, k, M_BOTTLENECK);
		for (j = 0; j < m->n && !(m->val[j] > thr); j++)
			;
		if (j == m->n)
			continue;
		if (X_GROW(ent, entcap, nent + 1))
			goto oom;
		e = &ent[nent++];
		e->k = (uint32_t)i;
		e->max = 0;
		e->off = nrec;
		dm_prepare(c, m);
		/* Time in the function overlap included, over the workers that
		 * report the stack (a missing stack was pruned, not absent). */
		dm_load(c, mx, k, M_EXEC);
		mx->nzero = 0;
		dm_prepare(c, mx);
		for (j = 0; j < m->n; j++) {
			const dworker *w = &c->w[m->wk[j]];
			double oth, imp;

			if (!(m->val[j] > thr))
				continue;
			if (m->val[j] > e->max)
				e->max = m->val[j];
			if (X_GROW(rec, reccap, nrec + 1))
				goto oom;
			rec[nrec].name = w->id;
			rec[nrec].v = m->val[j];
			rec[nrec++].idx = j;
			if (dm_test(c, m, j, PT_DIR_HIGH, dm_impact_ratio, &oth, &imp) &&
			    imp > c->o->python_min_impact && exec_confirms(c, mx, j)) {
				dfinding *f = df_add(c, DC_PYTHON, w->id, k->key, "bottleneck ratio",
						     m->val[j], oth, imp * w->window_ms);
				char fn[512];

				df_explain_share(c, f, pt_name_called_from(k->key, fn, sizeof(fn)), NULL,
						 "a CPU-side stall or extra CPU work in this "
						 "function on this worker");
			}
		}
		e->n = nrec - e->off;
		if (e->n > 1)
			qsort(rec + e->off, e->n, sizeof(*rec), dpair_cmp);
	}
	if (nent > 1)
		qsort_r(ent, nent, sizeof(*ent), cmp_pentry, c);
	for (i = 0; i < nent; i++) {
		pt_rv *o = pt_rv_obj(c->rep, sec, c->keys[ent[i].k].key);

		/* the workers over the threshold, largest first: at scale the
		 * first DIAG_ROWS_MAX (docs/diagnose.md "At scale") */
		for (j = 0; j < ent[i].n && j < DIAG_ROWS_MAX; j++)
			pt_rv_num(c->rep, o, rec[ent[i].off + j].name, rec[ent[i].off + j].v);
	}
	goto out;
oom:
	c->oom = 1;
out:
	x_free(rec);
	x_free(ent);
}
