/*
 * memory.c - the "GPU memory operations" section (memcpy/memset by op
 * name), and the fixed-threshold + differential rule it shares with the
 * "CUDA Runtime" section (runtime.c): an op above the seed's fixed
 * bottleneck-ratio threshold on some worker is listed; its
 * "abnormal_workers" are the workers above that threshold that also differ
 * from the other workers (docs/diagnose.md), or all of them with fixed_only.
 */
#include "internal.h"
#include "sections.h"
#include "../util/xalloc.h"
#include "../report/keys.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct fentry {
	uint32_t k;
	double avg, avg_exec;
	size_t off, n;   /* abnormal workers: rec[off .. off+n) */
} fentry;

static int cmp_fentry(const void *a, const void *b, void *arg)
{
	const fentry *x = a, *y = b;
	const dctx *c = arg;

	if (x->avg != y->avg)
		return x->avg > y->avg ? -1 : 1;
	return strcmp(c->keys[x->k].key, c->keys[y->k].key);
}

void diag_fixed_section(dctx *c, dcat cat, int cls, double threshold, int with_exec,
			dexplain_fn explain)
{
	pt_rv *sec = pt_rv_obj(c->rep, pt_report_root(c->rep), dcat_names[cat]);
	dmetric *m = &c->m[0], *mx = &c->m[1];
	fentry *ent = NULL;
	dpair *rec = NULL;
	size_t nent = 0, entcap = 0, nrec = 0, reccap = 0, i, j;

	for (i = 0; i < c->nkeys; i++) {
		const dkey *k = &c->keys[i];
		double sum = 0;
		int any = 0;
		fentry *e;

		if (k->cls != cls)
			continue;
		dm_load(c, m, k, M_BOTTLENECK);
		for (j = 0; j < m->n; j++) {
			sum += m->val[j];
			any |= m->val[j] > threshold;
		}
		if (!any)
			continue;
		if (X_GROW(ent, entcap, nent + 1))
			goto oom;
		e = &ent[nent++];
		e->k = (uint32_t)i;
		e->avg = c->nw ? sum / (double)c->nw : 0;
		e->avg_exec = 0;
		if (with_exec) {
			dm_load(c, mx, k, M_EXEC);
			for (j = 0, sum = 0; j < mx->n; j++)
				sum += mx->val[j];
			e->avg_exec = c->nw ? sum / (double)c->nw : 0;
		}
		e->off = nrec;
		dm_prepare(c, m);
		for (j = 0; j < m->n; j++) {
			const dworker *w = &c->w[m->wk[j]];
			double oth, imp;
			int diff;

			if (!(m->val[j] > threshold))
				continue;
			diff = dm_test(c, m, j, PT_DIR_HIGH, dm_impact_ratio, &oth, &imp);
			if (diff) {
				dfinding *f = df_add(c, cat, w->id, k->key, "bottleneck ratio",
						     m->val[j], oth, imp * w->window_ms);

				explain(c, f, k->key, k->kind, m->val[j], oth);
			}
			if (!diff && !c->o->fixed_only)
				continue;
			if (X_GROW(rec, reccap, nrec + 1))
				goto oom;
			rec[nrec].name = w->id;
			rec[nrec].v = m->val[j];
			rec[nrec++].idx = j;
		}
		e->n = nrec - e->off;
		if (e->n > 1)
			qsort(rec + e->off, e->n, sizeof(*rec), dpair_cmp);
	}
	if (nent > 1)
		qsort_r(ent, nent, sizeof(*ent), cmp_fentry, c);
	for (i = 0; i < nent; i++) {
		pt_rv *o = pt_rv_obj(c->rep, sec, c->keys[ent[i].k].key);
		pt_rv *ab;

		pt_rv_num(c->rep, o, "avg bottleneck ratio (in [0,1])", ent[i].avg);
		if (with_exec)
			pt_rv_num(c->rep, o, "avg execution time / monitoring duration (in [0,1])",
				  ent[i].avg_exec);
		ab = pt_rv_obj(c->rep, o, PT_KEY_ABNORMAL_WORKERS);
		for (j = 0; j < ent[i].n; j++)
			pt_rv_num(c->rep, ab, rec[ent[i].off + j].name, rec[ent[i].off + j].v);
	}
	goto out;
oom:
	c->oom = 1;
out:
	x_free(rec);
	x_free(ent);
}

static void explain_memory(dctx *c, dfinding *f, const char *key, int kind, double value,
			   double others)
{
	const char *why;

	if (kind == PT_K_MEMSET || strstr(key, "Memset"))
		why = "extra memset work on this worker";
	else if (strstr(key, "DtoD"))
		why = "extra device-to-device copies on this worker";
	else if (strstr(key, "HtoD"))
		why = "more or slower host-to-device copies on this worker (pageable host "
		      "memory, a busy PCIe link or CPU contention)";
	else if (strstr(key, "DtoH"))
		why = "more or slower device-to-host copies on this worker (for example "
		      ".item() or .cpu() calls, or a busy PCIe link)";
	else if (strstr(key, "PtoP") || strstr(key, "Peer"))
		why = "more or slower peer-to-peer copies on this worker (check its NVLink/PCIe "
		      "path)";
	else
		why = "more time in this memory operation than on the other workers";
	df_explain_share(c, f, key, NULL, why);
}

void diag_memory(dctx *c)
{
	diag_fixed_section(c, DC_MEMORY, PT_C_MEMORY, c->o->memop_threshold, 0,
			   explain_memory);
}
