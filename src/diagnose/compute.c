/*
 * compute.c - the "GPU Compute" section: GPU utilization spread and
 * outliers (both directions: a slow GPU is busier, a waiting one idler),
 * the major kernels by median bottleneck ratio over workers, and the
 * workers whose compute kernels run slower than the other workers' on the
 * same kernel keys ("workers with potential GPU issues", "detailed report").
 */
#include "internal.h"
#include "../util/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define SEC "GPU Compute"

static void gpu_util(dctx *c, pt_rv *sec)
{
	dmetric *m = &c->m[0];
	pt_rv *a = pt_rv_arr(c->rep, sec, "min/median/max GPU utilization (in [0,1])");
	pt_rv *ab;
	dpair *out = NULL;
	size_t i, nout = 0;
	double lo = 0, hi = 0;

	dm_load_gpu_util(c, m);
	for (i = 0; i < m->n; i++) {
		if (i == 0 || m->val[i] < lo)
			lo = m->val[i];
		if (i == 0 || m->val[i] > hi)
			hi = m->val[i];
	}
	pt_rv_num(c->rep, a, NULL, lo);
	pt_rv_num(c->rep, a, NULL, m->n ? dm_median(c, m) : 0);
	pt_rv_num(c->rep, a, NULL, hi);
	ab = pt_rv_obj(c->rep, sec, "workers with abnormal GPU utilization");
	out = x_malloc((m->n ? m->n : 1) * sizeof(*out));
	if (!out) {
		c->oom = 1;
		return;
	}
	dm_prepare(c, m);
	for (i = 0; i < m->n; i++) {
		const dworker *w = &c->w[m->wk[i]];
		double oth, imp;
		char p1[32], p2[32];
		dfinding *f;

		if (!dm_test(c, m, i, PT_DIR_BOTH, dm_impact_ratio, &oth, &imp))
			continue;
		out[nout].name = w->id;
		out[nout].v = m->val[i];
		out[nout++].idx = i;
		f = df_add(c, SEC, w->id, "", "gpu utilization", m->val[i], oth,
			   imp * w->window_ms);
		if (m->val[i] < oth)
			df_explain(c, f, "worker %s keeps its GPU busy %s of the time, other "
				   "workers %s: its GPU waits more (for the CPU, input data or "
				   "other workers); see this worker's other findings", w->id,
				   df_pct(m->val[i], p1, sizeof(p1)), df_pct(oth, p2, sizeof(p2)));
		else
			df_explain(c, f, "worker %s keeps its GPU busy %s of the time, other "
				   "workers %s: its GPU has more work or runs slower (see \"workers "
				   "with potential GPU issues\")", w->id,
				   df_pct(m->val[i], p1, sizeof(p1)), df_pct(oth, p2, sizeof(p2)));
	}
	if (nout > 1)
		qsort(out, nout, sizeof(*out), dpair_cmp);
	for (i = 0; i < nout; i++)
		pt_rv_num(c->rep, ab, out[i].name, out[i].v);
	x_free(out);
}

static void major_kernels(dctx *c, pt_rv *sec)
{
	pt_rv *mk = pt_rv_obj(c->rep, sec, "major_kernel_executions");
	dpair *ks = x_malloc((c->nkeys ? c->nkeys : 1) * sizeof(*ks));
	size_t i, nk = 0;

	if (!ks) {
		c->oom = 1;
		return;
	}
	for (i = 0; i < c->nkeys; i++) {
		if (c->keys[i].cls != PT_C_COMPUTE)
			continue;
		dm_load(c, &c->m[0], &c->keys[i], M_BOTTLENECK);
		ks[nk].name = c->keys[i].key;
		ks[nk].v = dm_median(c, &c->m[0]);
		ks[nk++].idx = i;
	}
	if (nk > 1)
		qsort(ks, nk, sizeof(*ks), dpair_cmp);
	for (i = 0; i < nk && i < c->o->top_kernels; i++) {
		pt_rv *o = pt_rv_obj(c->rep, mk, ks[i].name);

		dm_load(c, &c->m[1], &c->keys[ks[i].idx], M_MEDIAN);
		pt_rv_num(c->rep, o, "median cost per execution (ms)", dm_median(c, &c->m[1]));
		pt_rv_num(c->rep, o, "bottleneck ratio (in [0,1])", ks[i].v);
	}
	x_free(ks);
}

/* One kernel a worker runs slower than the others. */
typedef struct slow {
	uint32_t w, k;
	const char *key;
	double val, oth, imp;
} slow;

static int cmp_slow(const void *a, const void *b)
{
	const slow *x = a, *y = b;

	if (x->w != y->w)
		return x->w < y->w ? -1 : 1;
	if (x->imp != y->imp)
		return x->imp > y->imp ? -1 : 1;
	return strcmp(x->key, y->key);
}

static void slow_kernels(dctx *c, pt_rv *sec)
{
	dmetric *m = &c->m[0];
	pt_rv *list = pt_rv_arr(c->rep, sec, "workers with potential GPU issues");
	pt_rv *det = pt_rv_obj(c->rep, sec, "detailed report");
	slow *sl = NULL;
	size_t nsl = 0, slcap = 0, i, j, nout = 0;
	double *sum = x_calloc(c->nw ? c->nw : 1, sizeof(*sum));
	size_t *first = x_malloc((c->nw ? c->nw : 1) * sizeof(*first));
	size_t *cnt = x_calloc(c->nw ? c->nw : 1, sizeof(*cnt));
	dpair *out = x_malloc((c->nw ? c->nw : 1) * sizeof(*out));

	if (!sum || !first || !cnt || !out)
		goto oom;
	for (i = 0; i < c->nkeys; i++) {
		if (c->keys[i].cls != PT_C_COMPUTE || c->keys[i].n < 2)
			continue;
		dm_load(c, m, &c->keys[i], M_MEDIAN);
		if (m->n < 2)
			continue;
		dm_prepare(c, m);
		for (j = 0; j < m->n; j++) {
			pt_robust st;
			double oth, imp;

			dm_stats(c, m, j, &st);
			if (!pt_robust_outlier(m->val[j], &st, PT_DIR_HIGH, c->o))
				continue;
			oth = m->loo ? st.med : dm_others_median(c, m, j);
			imp = dm_impact_duration(c, m, j, oth);
			if (!(imp > 0))
				continue;
			if (X_GROW(sl, slcap, nsl + 1))
				goto oom;
			sl[nsl].w = m->wk[j];
			sl[nsl].k = (uint32_t)i;
			sl[nsl].key = c->keys[i].key;
			sl[nsl].val = m->val[j];
			sl[nsl].oth = oth;
			sl[nsl++].imp = imp;
			sum[m->wk[j]] += imp;
		}
	}
	if (nsl > 1)
		qsort(sl, nsl, sizeof(*sl), cmp_slow);
	for (i = 0; i < nsl; i++) {
		if (!cnt[sl[i].w])
			first[sl[i].w] = i;
		cnt[sl[i].w]++;
	}
	for (i = 0; i < c->nw; i++) {
		if (cnt[i] && sum[i] >= c->o->min_impact) {
			out[nout].name = c->w[i].id;
			out[nout].v = sum[i];
			out[nout++].idx = i;
		}
	}
	if (nout > 1)
		qsort(out, nout, sizeof(*out), dpair_cmp);
	for (i = 0; i < nout; i++) {
		const dworker *w = &c->w[out[i].idx];
		const slow *top = &sl[first[out[i].idx]];
		const dkey *tk = &c->keys[top->k];
		pt_rv *o = pt_rv_obj(c->rep, det, w->id);
		char name[160], p1[32], p2[32];
		dfinding *f;

		pt_rv_str(c->rep, list, NULL, w->id);
		for (j = 0; j < cnt[out[i].idx]; j++) {
			const slow *s = &sl[first[out[i].idx] + j];
			pt_rv *k = pt_rv_obj(c->rep, o, c->keys[s->k].key);
			char by[48];

			pt_rv_num(c->rep, k, "median cost per execution (ms)", s->val);
			pt_rv_num(c->rep, k, "median of other workers (ms)", s->oth);
			if (s->oth > 0)
				snprintf(by, sizeof(by), "%.1f%%", (s->val - s->oth) / s->oth * 100);
			else
				snprintf(by, sizeof(by), "n/a");
			pt_rv_str(c->rep, k, "slower by", by);
		}
		f = df_add(c, SEC, w->id, tk->key, "median cost per execution (ms)", top->val,
			   top->oth, out[i].v * w->window_ms);
		df_explain(c, f, "worker %s runs %zu compute kernel%s slower than the other "
			   "workers, losing about %.3g ms per window (%s); the costliest, %s, "
			   "takes %.3g ms per execution, other workers %.3g ms (%s slower): a "
			   "slower GPU on this worker (clocks, temperature, power or a hardware "
			   "fault)", w->id, cnt[out[i].idx], cnt[out[i].idx] == 1 ? "" : "s",
			   out[i].v * w->window_ms, df_pct(out[i].v, p1, sizeof(p1)),
			   df_short(tk->key, tk->cls, name, sizeof(name)), top->val, top->oth,
			   top->oth > 0 ? df_pct((top->val - top->oth) / top->oth, p2, sizeof(p2))
					: "n/a");
	}
	goto out;
oom:
	c->oom = 1;
out:
	x_free(out);
	x_free(cnt);
	x_free(first);
	x_free(sum);
	x_free(sl);
}

void diag_compute(dctx *c)
{
	pt_rv *sec = pt_rv_obj(c->rep, pt_report_root(c->rep), SEC);

	gpu_util(c, sec);
	major_kernels(c, sec);
	slow_kernels(c, sec);
}
