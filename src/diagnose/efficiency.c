/*
 * efficiency.c - two additions to the "GPU Compute" section: the GPU
 * compute utilization spread beside the seed's GPU utilization (GPU busy:
 * any kernel), and the heavy kernels that run at low estimated occupancy
 * or with less than one block per SM (Kineto's launch-efficiency args,
 * kept per pattern by src/analysis/patterns.c).
 *
 * Flow: summaries (gpu_compute_util, patterns' occupancy_pct ...) ->
 * diag_efficiency (called at the end of compute.c's section) -> report
 * "GPU Compute" + for a single worker a finding.  docs/diagnose.md.
 */
#include "internal.h"
#include "../model/commkind.h"
#include "sections.h"
#include "../util/xalloc.h"
#include "../report/keys.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A kernel is heavy at this median bottleneck ratio, and runs at low
 * occupancy below this estimated achieved occupancy (%) or below one
 * block per SM (the grid does not fill the GPU). */
#define HEAVY 0.01
#define LOW_OCC 20.0
#define MAX_LISTED 10

typedef struct lowk {
	uint32_t k;
	double bott, occ, bps, regs, smem;
} lowk;

static int cmp_lowk(const void *a, const void *b)
{
	const lowk *x = a, *y = b;

	if (x->bott != y->bott)
		return x->bott > y->bott ? -1 : 1;
	return x->k < y->k ? -1 : x->k > y->k;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double med(double *v, size_t n)
{
	return pt_robust_median(v, n, 0);
}

static void compute_util(dctx *c, pt_rv *sec)
{
	double *v = x_malloc((c->nw ? c->nw : 1) * sizeof(*v));
	size_t i, n = 0;
	pt_rv *a;

	if (!v) {
		c->oom = 1;
		return;
	}
	for (i = 0; i < c->nw; i++)
		if (c->w[i].s->gpu_compute_util >= 0)
			v[n++] = c->w[i].s->gpu_compute_util;
	if (n) {
		qsort(v, n, sizeof(*v), cmp_d);
		a = pt_rv_arr(c->rep, sec, "min/median/max GPU compute utilization (in [0,1])");
		pt_rv_num(c->rep, a, NULL, v[0]);
		pt_rv_num(c->rep, a, NULL, n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2);
		pt_rv_num(c->rep, a, NULL, v[n - 1]);
	}
	x_free(v);
}

void diag_efficiency(dctx *c, pt_rv *sec)
{
	double *tmp[5] = { 0 };
	lowk *low = NULL;
	size_t nlow = 0, i, j, f;
	pt_rv *o;

	compute_util(c, sec);
	for (f = 0; f < 5; f++)
		if (!(tmp[f] = x_malloc((c->nw ? c->nw : 1) * sizeof(double))))
			goto oom;
	low = x_malloc((c->nkeys ? c->nkeys : 1) * sizeof(*low));
	if (!low)
		goto oom;
	for (i = 0; i < c->nkeys; i++) {
		const dkey *k = &c->keys[i];
		size_t n = 0, ne = 0, no = 0;
		lowk x;

		/* no occupancy advice for communication kernels, even from a
		 * summary written before a rule named them (commkind.c) */
		if (k->cls != PT_C_COMPUTE ||
		    pt_commkind_classify(k->key, strlen(k->key)) != PT_ROLE_NONE)
			continue;
		/* (a digest read slim has no launch efficiency: the workers
		 * read in full give it, docs/diagnose.md "Two phases") */
		for (j = 0; j < k->n && !ne; j++) {
			const dent *e = &c->ent[k->off + j];
			ne = c->w[e->w].whole && dw_pat(&c->w[e->w], e->p)->eff_n > 0;
		}
		if (!ne) /* no worker's trace has launch efficiency for it */
			continue;
		ne = 0;
		for (j = 0; j < k->n; j++) {
			const dent *e = &c->ent[k->off + j];
			const pt_pattern *p = dw_pat(&c->w[e->w], e->p);
			tmp[0][n++] = p->bottleneck;
			if (!c->w[e->w].whole || !p->eff_n)
				continue;
			if (p->occupancy_pct >= 0) /* -1: not estimated */
				tmp[1][no++] = p->occupancy_pct;
			tmp[2][ne] = p->blocks_per_sm;
			tmp[3][ne] = p->registers;
			tmp[4][ne++] = p->shared_mem;
		}
		/* workers without the kernel count 0 towards its bottleneck
		 * (quickselect: O(workers) per kernel at 10,000 workers) */
		x.bott = pt_robust_median(tmp[0], n, c->nw - n);
		if (!ne || x.bott < HEAVY)
			continue;
		x.k = (uint32_t)i;
		x.occ = no ? med(tmp[1], no) : -1;
		x.bps = med(tmp[2], ne);
		x.regs = med(tmp[3], ne);
		x.smem = med(tmp[4], ne);
		if ((x.occ >= 0 && x.occ < LOW_OCC) || (x.bps > 0 && x.bps < 1))
			low[nlow++] = x;
	}
	if (!nlow)
		goto out;
	qsort(low, nlow, sizeof(*low), cmp_lowk);
	o = pt_rv_obj(c->rep, sec, "low-occupancy kernels");
	for (i = 0; i < nlow && i < MAX_LISTED; i++) {
		pt_rv *e = pt_rv_obj(c->rep, o, c->keys[low[i].k].key);
		pt_rv_num(c->rep, e, PT_KEY_BOTTLENECK_RATIO, low[i].bott);
		pt_rv_num(c->rep, e, PT_KEY_EST_ACHIEVED_OCCUPANCY_PCT, low[i].occ);
		pt_rv_num(c->rep, e, PT_KEY_BLOCKS_PER_SM, low[i].bps);
		pt_rv_num(c->rep, e, PT_KEY_REGISTERS_PER_THREAD, low[i].regs);
		pt_rv_num(c->rep, e, PT_KEY_SHARED_MEMORY, low[i].smem);
	}
	/* One sentence for a single worker: what its heaviest such kernel is. */
	if (c->nw == 1) {
		char fb[160], ob[64];
		dfinding *fd = df_add(c, DC_COMPUTE, c->w[0].id, c->keys[low[0].k].key,
				      PT_KEY_EST_ACHIEVED_OCCUPANCY_PCT, low[0].occ, NAN,
				      low[0].bott * c->w[0].window_ms * 0.1);
		if (low[0].occ >= 0)
			snprintf(ob, sizeof(ob), "at %.0f%% estimated achieved occupancy", low[0].occ);
		else
			snprintf(ob, sizeof(ob), "(occupancy not estimated)");
		df_cause(fd, PT_CAUSE_LOW_OCCUPANCY, PT_UNIT_NONE);
		df_metric(fd, "bottleneck ratio", low[0].bott, PT_UNIT_SHARE);
		df_metric(fd, "blocks per SM", low[0].bps, PT_UNIT_NONE);
		df_metric(fd, "registers per thread", low[0].regs, PT_UNIT_COUNT);
		df_metric(fd, "shared memory per block", low[0].smem, PT_UNIT_BYTES);
		df_arg(c, fd, "%s", pt_name_sentence(c->keys[low[0].k].key, PT_C_COMPUTE, fb,
						       sizeof(fb)));
		df_arg(c, fd, "%s", ob);
		df_arg(c, fd, "%s", low[0].bps > 0 && low[0].bps < 1
				  ? ": its grid does not fill the GPU (fewer blocks than SMs); larger "
				    "batches or a split-K/stream-K variant fill it"
				  : ": registers or shared memory per block limit how many warps an SM "
				    "runs at once");
	}
	goto out;
oom:
	c->oom = 1;
out:
	x_free(low);
	for (f = 0; f < 5; f++)
		x_free(tmp[f]);
}
