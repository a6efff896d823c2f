/*
 * compute.c - the "GPU Compute" section: GPU utilization spread and
 * outliers (both directions: a slow GPU is busier, a waiting one idler),
 * the major kernels by median bottleneck ratio over workers, and the
 * workers whose compute kernels run slower than the other workers' on the
 * same kernel keys ("workers with potential GPU issues", "detailed report").
 * When the summaries carry hardware samples (docs/hardware.md), a slow
 * GPU's finding names the cause the samples show: a low SM clock against
 * the other workers', NVML throttle reasons, a hotter GPU.
 */
#include "internal.h"
#include "sections.h"
#include "../util/xalloc.h"
#include "../report/keys.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define SEC PT_KEY_GPU_COMPUTE

/* NVML clocks-throttle reasons (nvml.h nvmlClocksThrottleReason*), idle excluded. */
static const struct { uint64_t bit; const char *name; } reasons[] = {
	{ 0x2, "applications clocks setting" }, { 0x4, "SW power cap" },
	{ 0x8, "HW slowdown" }, { 0x10, "sync boost" }, { 0x20, "SW thermal slowdown" },
	{ 0x40, "HW thermal slowdown" }, { 0x80, "HW power brake slowdown" },
	{ 0x100, "display clock setting" },
};

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median of one hw_gpu field over the other workers that sampled it (-1 none). */
static double others_hw(dctx *c, size_t wi, int field)
{
	double *v = x_malloc(c->nw * sizeof(double)), m = -1;
	size_t i, n = 0;

	if (!v)
		return -1;
	for (i = 0; i < c->nw; i++) {
		const pt_hw_gpu *g = &c->w[i].s->hw_gpu;
		double x = field == 0 ? g->sm_clock_mhz : g->temperature_c;

		if (i != wi && g->samples && x >= 0)
			v[n++] = x;
	}
	if (n) {
		qsort(v, n, sizeof(*v), cmp_dbl);
		m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	}
	x_free(v);
	return m;
}

/* What the hardware samples say about worker wi's slow GPU, as a clause
 * starting with "; " ("" when it has no samples). */
static const char *gpu_cause(dctx *c, size_t wi, char *buf, size_t cap)
{
	const pt_hw_gpu *g = &c->w[wi].s->hw_gpu;
	double oclk, otemp;
	size_t n = 0, i;
	int said = 0;

	buf[0] = 0;
	if (!g->samples)
		return buf;
	oclk = others_hw(c, wi, 0);
	otemp = others_hw(c, wi, 1);
	n += (size_t)snprintf(buf + n, cap - n, "; the hardware samples during its compute "
			      "kernels show");
	if (g->sm_clock_mhz >= 0 && oclk > 0 && g->sm_clock_mhz < (1 - c->o->rel / 2) * oclk) {
		n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, " a low SM clock %.0f MHz "
				      "(other workers %.0f MHz%s", g->sm_clock_mhz, oclk,
				      g->sm_clock_max_mhz > 0 ? ", this GPU's highest " : ")");
		if (g->sm_clock_max_mhz > 0 && n < cap)
			n += (size_t)snprintf(buf + n, cap - n, "%.0f MHz)", g->sm_clock_max_mhz);
		said = 1;
	}
	if (g->throttle_frac > 0.05 && g->throttle_reasons && n < cap) {
		n += (size_t)snprintf(buf + n, cap - n, "%s throttling %.0f%% of the time (",
				      said ? " and" : "", g->throttle_frac * 100);
		for (i = 0; i < sizeof(reasons) / sizeof(reasons[0]) && n < cap; i++)
			if (g->throttle_reasons & reasons[i].bit) {
				n += (size_t)snprintf(buf + n, cap - n, "%s%s",
						      buf[n - 1] == '(' ? "" : ", ", reasons[i].name);
			}
		if (n < cap)
			n += (size_t)snprintf(buf + n, cap - n, ")");
		said = 1;
	}
	if (g->temperature_c >= 0 && otemp > 0 && g->temperature_c > otemp + 10 && n < cap) {
		n += (size_t)snprintf(buf + n, cap - n, "%s %.0f C against %.0f C", said ? " and" : "",
				      g->temperature_c, otemp);
		said = 1;
	}
	if (!said && n < cap)
		snprintf(buf + n, cap - n, " normal clocks (%.0f MHz) and no throttling: look at the "
			 "kernels' inputs or the GPU's health (ECC, PCIe errors)", g->sm_clock_mhz);
	return buf;
}

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
		dfinding *f;

		if (!dm_test(c, m, i, PT_DIR_BOTH, dm_impact_ratio, &oth, &imp))
			continue;
		out[nout].name = w->id;
		out[nout].v = m->val[i];
		out[nout++].idx = i;
		f = df_add(c, DC_COMPUTE, w->id, "", PT_KEY_GPU_UTILIZATION, m->val[i], oth,
			   imp * w->window_ms);
		df_cause(f, m->val[i] < oth ? PT_CAUSE_GPU_WAITS : PT_CAUSE_GPU_BUSIER, PT_UNIT_SHARE);
		df_metric(f, "others", oth, PT_UNIT_SHARE);
	}
	if (nout > 1)
		qsort(out, nout, sizeof(*out), dpair_cmp);
	for (i = 0; i < nout; i++)
		pt_rv_num(c->rep, ab, out[i].name, out[i].v);
	x_free(out);
}

static void major_kernels(dctx *c, pt_rv *sec)
{
	pt_rv *mk = pt_rv_obj(c->rep, sec, PT_KEY_MAJOR_KERNEL_EXECUTIONS);
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
		pt_rv_num(c->rep, o, PT_KEY_BOTTLENECK_RATIO, ks[i].v);
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

/* Is the kernel's time per call set by which worker runs it?  In a job of
 * 20 workers or more, more than a tenth of them slower than the rest on
 * it: the workers do different work in it (the DLRM ranks' embedding
 * kernels take 7 to 66 us a call by the tables each holds; 5,000 workers
 * made from those 8 ranks have 625 of each), so a slower GPU is not told
 * by it: a worker of the slow ranks read "237.5% slower" for its own work
 * at 1.5x.  A few outliers among 8 workers say too little to tell (the
 * planted 1.5x GPU among the DLRM ranks keeps all its kernels). */
static int rank_dependent(dctx *c, dmetric *m)
{
	size_t j, nout = 0;

	if (m->n < 20)
		return 0;
	for (j = 0; j < m->n; j++) {
		pt_robust st;
		dm_stats(c, m, j, &st);
		nout += pt_robust_outlier(m->val[j], &st, PT_DIR_HIGH, c->o->z, c->o->rel,
					  c->o->mad_floor);
	}
	return (double)nout > 0.1 * (double)m->n;
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
		if (rank_dependent(c, m))
			continue;
		for (j = 0; j < m->n; j++) {
			pt_robust st;
			double oth, imp;

			dm_stats(c, m, j, &st);
			if (!pt_robust_outlier(m->val[j], &st, PT_DIR_HIGH, c->o->z, c->o->rel, c->o->mad_floor))
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
		char name[160], cause[512];
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
		f = df_add(c, DC_COMPUTE, w->id, tk->key, "median cost per execution (ms)", top->val,
			   top->oth, out[i].v * w->window_ms);
		df_cause(f, PT_CAUSE_SLOW_KERNELS, PT_UNIT_MS);
		df_metric(f, "others", top->oth, PT_UNIT_MS);
		df_metric(f, "slow kernels", (double)cnt[out[i].idx], PT_UNIT_COUNT);
		df_metric(f, "ms per step", out[i].v * w->window_ms / dw_steps(w), PT_UNIT_MS_STEP);
		df_metric(f, "time lost (share of window)", out[i].v, PT_UNIT_SHARE);
		df_metric(f, "slower by", top->oth > 0 ? (top->val - top->oth) / top->oth : NAN,
			  PT_UNIT_SHARE);
		df_arg(c, f, "%s", pt_name_sentence(tk->key, tk->cls, name, sizeof(name)));
		df_arg(c, f, "%s", gpu_cause(c, out[i].idx, cause, sizeof(cause)));
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
	diag_efficiency(c, sec);
}
