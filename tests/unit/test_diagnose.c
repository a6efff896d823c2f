/*
 * test_diagnose.c - unit tests for src/diagnose: the robust statistics
 * (quickselect, median/MAD with implicit zeros, leave-one-out medians) and
 * the cross-worker diagnosis over synthetic summaries built in memory, with
 * exact expectations: 2 workers, 3 workers (leave-one-out), 16 workers, a
 * planted slow kernel, an extra-memcpy worker, a slow runtime worker, a CPU
 * stall, ties, missing keys, a failed worker, duplicate ids, hostile names
 * (in report.json and in the PerfDisplay page), the "display" key.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/summary.h"
#include "diagnose/diagnose.h"
#include "analysis/stats.h"
#include "analysis/stats.h"
#include "report/page.h"
#include "report/report.h"
#include "util/json.h"
#include "testutil.h"

/* ---- builders ------------------------------------------------------------ */

static pt_summary *mk(const char *name, int64_t rank, double window_ms, double util)
{
	pt_summary *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	s->version = PT_SUMMARY_VERSION;
	s->worker = strdup(name);
	s->file = strdup(name);
	s->host = strdup("");
	s->backend = strdup("nccl");
	s->device = strdup("");
	s->rank = rank;
	s->pid = 1000 + rank;
	s->world_size = -1;
	s->window_ms = window_ms;
	s->gpu_util = util;
	s->nsteps = 1;
	s->step_numbers = malloc(sizeof(int64_t));
	s->step_ms = malloc(sizeof(double));
	s->step_numbers[0] = 10;
	s->step_ms[0] = window_ms;
	return s;
}

static pt_pattern *pat(pt_summary *s, const char *key, int cls, int kind, uint64_t count,
		       double median_ms, double bottleneck)
{
	pt_pattern *p;

	s->patterns = realloc(s->patterns, (s->npatterns + 1) * sizeof(*s->patterns));
	assert_non_null(s->patterns);
	p = &s->patterns[s->npatterns++];
	memset(p, 0, sizeof(*p));
	p->key = strdup(key);
	p->cls = (uint8_t)cls;
	p->kind = (uint8_t)kind;
	p->count = count;
	p->median_ms = median_ms;
	p->total_ms = median_ms * (double)count;
	p->bottleneck = bottleneck;
	p->exec_ratio = s->window_ms > 0 ? p->total_ms / s->window_ms : 0;
	return p;
}

static void free_all(pt_summary **s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		pt_summary_free(s[i]);
}

static pt_report *diag(pt_summary **s, size_t n, const pt_diag_options *o)
{
	pt_error err;
	pt_report *r;

	pt_error_clear(&err);
	r = pt_diagnose(s, n, o, &err);
	if (!r)
		fail_msg("pt_diagnose: %s", err.msg);
	return r;
}

/* Path lookup: get(root, "GPU Compute", "detailed report", NULL). */
static const pt_rv *get(const pt_report *r, ...)
{
	const pt_rv *v = pt_report_root_c(r);
	const char *k;
	va_list ap;

	va_start(ap, r);
	while (v && (k = va_arg(ap, const char *)))
		v = pt_rv_get(v, k);
	va_end(ap);
	return v;
}

static size_t nfindings(const pt_report *r, const char *category)
{
	const pt_rv *f = get(r, "findings", NULL), *c;
	size_t n = 0;

	for (c = f ? f->child : NULL; c; c = c->next)
		n += !category || !strcmp(pt_rv_get(c, "category")->str, category);
	return n;
}

static const pt_rv *finding(const pt_report *r, size_t i)
{
	const pt_rv *c = get(r, "findings", NULL)->child;

	while (c && i--)
		c = c->next;
	assert_non_null(c);
	return c;
}

static const char *fworker(const pt_rv *f)
{
	const pt_rv *w = pt_rv_get(f, "workers");

	assert_int_equal(w->n, 1);
	return w->child->str;
}

static double num(const pt_rv *v)
{
	assert_non_null(v);
	assert_int_equal(v->type, PT_RV_NUM);
	return v->num;
}

#define K_GEMM "volta_sgemm_128x32_nt16_1_1|128_1_1"
#define K_ADD "void add_kernel<float>(int, float*)4_1_1|256_1_1"
#define DTOD "Memcpy DtoD (Device -> Device)"

/* ---- robust statistics ------------------------------------------------------ */

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double brute_median(double *v, size_t n)
{
	qsort(v, n, sizeof(double), cmpd);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void test_select(void **state)
{
	double v[7] = { 5, 1, 4, 1, 5, 9, 2 }, s[7];
	size_t k;

	memcpy(s, v, sizeof(v));
	qsort(s, 7, sizeof(double), cmpd);
	for (k = 0; k < 7; k++) {
		double w[7];

		memcpy(w, v, sizeof(v));
		assert_true(pt_stats_select(w, 7, k) == s[k]);
	}
}

/* Median and MAD with implicit zeros agree with materialised arrays. */
static void test_stats_zeros_random(void **state)
{
	unsigned seed = 12345;
	int iter;

	for (iter = 0; iter < 500; iter++) {
		size_t n = (size_t)(rand_r(&seed) % 12), nz = (size_t)(rand_r(&seed) % 6), i;
		double v[12], full[20], dev[20], tmp[12], med, mad;
		pt_robust st;

		if (!n && !nz)
			continue;
		for (i = 0; i < n; i++)
			v[i] = (double)(rand_r(&seed) % 5); /* many ties, zeros too */
		for (i = 0; i < n; i++)
			full[i] = v[i];
		for (i = 0; i < nz; i++)
			full[n + i] = 0;
		med = brute_median(full, n + nz);
		for (i = 0; i < n + nz; i++)
			dev[i] = fabs(full[i] - med);
		mad = brute_median(dev, n + nz);
		pt_robust_stats(v, n, nz, tmp, &st);
		assert_int_equal(st.n, n + nz);
		assert_true(st.med == med);
		assert_true(st.mad == mad);
	}
}

static void test_stats_exact(void **state)
{
	double v[5] = { 1, 2, 3, 4, 100 }, tmp[5];
	pt_robust st;

	pt_robust_stats(v, 5, 0, tmp, &st);
	assert_true(st.med == 3);
	assert_true(st.mad == 1); /* |dev| = 2 1 0 1 97 */
	/* 2 values + 2 zeros: {0, 0, 4, 6}: median 2, devs {2, 2, 2, 4}: MAD 2. */
	v[0] = 4;
	v[1] = 6;
	pt_robust_stats(v, 2, 2, tmp, &st);
	assert_true(st.med == 2);
	assert_true(st.mad == 2);
	pt_robust_stats(v, 0, 0, tmp, &st);
	assert_int_equal(st.n, 0);
	assert_true(st.med == 0);
}

static void test_sorted_median_loo(void **state)
{
	const double s[5] = { 1, 2, 3, 4, 10 };

	assert_true(pt_robust_sorted_median(s, 5, 0, (size_t)-1) == 3);
	assert_true(pt_robust_sorted_median(s, 5, 0, 4) == 2.5);  /* {1,2,3,4} */
	assert_true(pt_robust_sorted_median(s, 5, 0, 0) == 3.5);  /* {2,3,4,10} */
	assert_true(pt_robust_sorted_median(s, 5, 2, 4) == 1.5);  /* {0,0,1,2,3,4} */
	assert_true(pt_robust_sorted_median(s, 1, 0, 0) == 0);    /* nothing left */
	assert_int_equal(pt_robust_find(s, 5, 4), 3);
	assert_int_equal(pt_robust_find(s, 5, 5), (size_t)-1);
}

static void test_z_rel(void **state)
{
	pt_diag_options o;
	pt_robust st = { .med = 1.0, .mad = 0.0, .n = 7 };

	pt_diag_options_default(&o);
	/* MAD 0 is floored at 1% of the median: z = 0.6745 * 0.5 / 0.01. */
	assert_true(fabs(pt_robust_z(0.5, 1.0, 0.0, 0.01) - 33.725) < 1e-9);
	assert_true(isinf(pt_robust_z(0.1, 0.0, 0.0, 0.01)));
	assert_true(pt_robust_z(0.0, 0.0, 0.0, 0.01) == 0);
	assert_true(isinf(pt_robust_rel(0.1, 0.0)));
	assert_true(pt_robust_outlier(1.5, &st, PT_DIR_HIGH, o.z, o.rel, o.mad_floor));
	assert_false(pt_robust_outlier(0.5, &st, PT_DIR_HIGH, o.z, o.rel, o.mad_floor));  /* lower: no cost */
	assert_true(pt_robust_outlier(0.5, &st, PT_DIR_BOTH, o.z, o.rel, o.mad_floor));
	assert_true(pt_robust_outlier(0.5, &st, PT_DIR_LOW, o.z, o.rel, o.mad_floor));
	assert_false(pt_robust_outlier(1.15, &st, PT_DIR_HIGH, o.z, o.rel, o.mad_floor)); /* 15% < rel */
	st.mad = 0.2;  /* z = 0.6745 * 0.5 / 0.2 = 1.69 < 3.5 */
	assert_false(pt_robust_outlier(1.5, &st, PT_DIR_HIGH, o.z, o.rel, o.mad_floor));
}

/* The typical values and the slow-step limit (pt_robust_typical): two
 * high values of six cannot hide each other by widening the spread.
 * {100, 110, 120, 130, 166, 166}: all six have median 125 and, below it,
 * a MAD of 15 (of 25, 15, 5: the 166s cannot widen it), so 3.5 deviations
 * (77.8) are capped at 25% (156.25) and the first 166 goes; of five,
 * median 120, MAD 10, limit 150: the other 166 goes; the four left have
 * median 115 and MAD 10, limit 115 + 25% = 143.75, and two of six is as
 * many as may be high.  Tight steps: none high; a majority
 * is never high; two values have no baseline. */
static void test_typical(void **state)
{
	const pt_typical_rule r = { 3.5, 0.10, 0.25, 0.01 };
	const double v[6] = { 100, 110, 120, 130, 166, 166 };
	const double tight[6] = { 75.5, 76.9, 76.2, 76.7, 78.5, 81.1 };
	const double maj[3] = { 100, 200, 200 }, two[2] = { 100, 300 };
	unsigned char high[6];
	double tmp[12];
	pt_typical t;

	(void)state;
	pt_robust_typical(v, 6, &r, high, tmp, &t);
	assert_int_equal(t.nhigh, 2);
	assert_true(high[4] && high[5] && !high[0] && !high[1] && !high[2] && !high[3]);
	assert_true(t.med == 115 && t.mad == 10);
	assert_true(fabs(t.limit - 143.75) < 1e-9);
	assert_true(fabs(t.sigma - 10 / PT_ROBUST_K) < 1e-9);
	pt_robust_typical(tight, 6, &r, high, tmp, &t);
	assert_int_equal(t.nhigh, 0);
	assert_true(fabs(t.med - 76.8) < 1e-9 && fabs(t.limit - 76.8 * 1.1) < 1e-9);
	pt_robust_typical(maj, 3, &r, high, tmp, &t);
	assert_int_equal(t.nhigh, 0);
	pt_robust_typical(two, 2, &r, high, tmp, &t);
	assert_int_equal(t.nhigh, 0);
	assert_true(!high[0] && !high[1]);
}

/* The limit form of the same rule: med + max(rel med, z max(mad, floor med)
 * / 0.6745), and x above it is exactly what pt_robust_outlier flags. */
static void test_limit(void **state)
{
	pt_robust st = { .med = 100.0, .mad = 10.0, .n = 9 };
	double lim = pt_robust_limit(100.0, 10.0, 3.5, 0.2, 0.01);

	(void)state;
	assert_true(fabs(lim - (100.0 + 35.0 / 0.6745)) < 1e-9);
	assert_true(pt_robust_limit(100.0, 2.0, 3.5, 0.2, 0.01) == 120.0);  /* rel wins */
	assert_true(pt_robust_limit(100.0, 0.0, 3.5, 0.0, 0.01) == 100.0 + 3.5 / 0.6745);
	assert_true(pt_robust_outlier(lim + 1e-6, &st, PT_DIR_HIGH, 3.5, 0.2, 0.01));
	assert_false(pt_robust_outlier(lim - 1e-6, &st, PT_DIR_HIGH, 3.5, 0.2, 0.01));
}

/* ---- diagnosis ---------------------------------------------------------------- */

/* "display": the workers' slow-step rule decided here (the page draws it):
 * steps 100, 101, 99, 100 and 150 ms: median 100, MAD 1 (floored at 1%),
 * so the limit is the 20% of --rel, 120 ms; only the 150 ms worker is slow.
 * Two workers are too few to judge: null, nobody slow. */
static void test_display_slow_steps(void **state)
{
	static const double step[] = { 100, 101, 99, 100, 150 };
	pt_summary *s[5];
	pt_report *r;
	const pt_rv *d, *w;
	char id[16];
	size_t i;

	(void)state;
	for (i = 0; i < 5; i++) {
		snprintf(id, sizeof(id), "w%zu.json", i);
		s[i] = mk(id, (int64_t)i, step[i], 0.5);
	}
	r = diag(s, 5, NULL);
	d = get(r, "display", NULL);
	assert_true(num(pt_rv_get(d, "step threshold (ms)")) == 120.0);
	for (i = 0, w = pt_rv_get(d, "workers")->child; i < 5; i++, w = w->next) {
		assert_non_null(w);
		assert_int_equal(pt_rv_get(w, "slow")->i, i == 4);
	}
	pt_report_free(r);
	r = diag(s, 2, NULL);
	d = get(r, "display", NULL);
	assert_int_equal(pt_rv_get(d, "step threshold (ms)")->type, PT_RV_NULL);
	assert_int_equal(pt_rv_get(pt_rv_get(d, "workers")->child, "slow")->i, 0);
	pt_report_free(r);
	free_all(s, 5);
}

/* Two workers: B runs the GEMM 1.5x slower; leave-one-out against A alone. */
static void test_two_workers(void **state)
{
	pt_summary *s[2];
	pt_report *r;
	const pt_rv *d, *u;
	int i;

	for (i = 0; i < 2; i++) {
		s[i] = mk(i ? "B.json" : "A.json", i, 100.0, 0.5);
		pat(s[i], K_GEMM, PT_C_COMPUTE, PT_K_KERNEL, 100, i ? 0.15 : 0.10, i ? 0.15 : 0.10);
		pat(s[i], K_ADD, PT_C_COMPUTE, PT_K_KERNEL, 10, 0.02, 0.002);
	}
	r = diag(s, 2, NULL);
	u = get(r, "GPU Compute", "workers with potential GPU issues", NULL);
	assert_int_equal(u->n, 1);
	assert_string_equal(u->child->str, "B.json");
	d = get(r, "GPU Compute", "detailed report", "B.json", K_GEMM, NULL);
	assert_non_null(d);
	assert_true(num(pt_rv_get(d, "median cost per execution (ms)")) == 0.15);
	assert_true(num(pt_rv_get(d, "median of other workers (ms)")) == 0.10);
	assert_string_equal(pt_rv_get(d, "slower by")->str, "50.0%");
	assert_int_equal(get(r, "GPU Compute", "detailed report", "B.json", NULL)->n, 1);
	/* Major kernels: median over workers of the bottleneck ratio, top first. */
	d = get(r, "GPU Compute", "major_kernel_executions", NULL);
	assert_int_equal(d->n, 2);
	assert_string_equal(d->child->key, K_GEMM);
	assert_true(fabs(num(pt_rv_get(d->child, "bottleneck ratio (in [0,1])")) - 0.125) < 1e-12);
	assert_true(fabs(num(pt_rv_get(d->child, "median cost per execution (ms)")) - 0.125) < 1e-12);
	/* min/median/max utilization. */
	d = get(r, "GPU Compute", "min/median/max GPU utilization (in [0,1])", NULL);
	assert_int_equal(d->n, 3);
	assert_true(d->child->num == 0.5 && d->child->next->num == 0.5);
	/* One finding: B's GPU, impact (0.15 - 0.10) * 100 calls = 5 ms. */
	assert_int_equal(nfindings(r, NULL), 1);
	assert_string_equal(fworker(finding(r, 0)), "B.json");
	assert_string_equal(pt_rv_get(finding(r, 0), "category")->str, "GPU Compute");
	assert_string_equal(pt_rv_get(finding(r, 0), "function")->str, K_GEMM);
	assert_true(fabs(num(pt_rv_get(finding(r, 0), "impact (ms)")) - 5.0) < 1e-9);
	assert_int_equal(pt_rv_get(finding(r, 0), "rank")->i, 1);
	assert_non_null(strstr(pt_rv_get(finding(r, 0), "explanation")->str, "volta_sgemm_128x32_nt"));
	pt_report_free(r);
	free_all(s, 2);
}

/* Three workers, leave-one-out: C has extra DtoD copies (5%), A and B 0.1%. */
static void test_three_workers_memcpy(void **state)
{
	pt_summary *s[3];
	const char *names[3] = { "A.json", "B.json", "C.json" };
	const double ratio[3] = { 0.001, 0.001, 0.05 };
	pt_diag_options o;
	pt_report *r;
	const pt_rv *m, *f;
	int i;

	for (i = 0; i < 3; i++) {
		s[i] = mk(names[i], i, 200.0, 0.5);
		pat(s[i], DTOD, PT_C_MEMORY, PT_K_MEMCPY, 10, 0.01, ratio[i]);
	}
	r = diag(s, 3, NULL);
	m = get(r, "GPU memory operations", DTOD, NULL);
	assert_non_null(m);
	assert_true(fabs(num(pt_rv_get(m, "avg bottleneck ratio (in [0,1])")) - 0.052 / 3) < 1e-12);
	m = pt_rv_get(m, "abnormal_workers");
	assert_int_equal(m->n, 1);
	assert_string_equal(m->child->key, "C.json");
	assert_true(m->child->num == 0.05);
	assert_int_equal(nfindings(r, NULL), 1);
	f = finding(r, 0);
	assert_string_equal(fworker(f), "C.json");
	assert_string_equal(pt_rv_get(f, "category")->str, "GPU memory operations");
	assert_string_equal(pt_rv_get(f, "metric")->str, "bottleneck ratio");
	assert_true(num(pt_rv_get(f, "others")) == 0.001);
	assert_true(fabs(num(pt_rv_get(f, "impact (ms)")) - 0.049 * 200) < 1e-9);
	assert_non_null(strstr(pt_rv_get(f, "explanation")->str, "device-to-device"));
	assert_non_null(strstr(pt_rv_get(f, "explanation")->str, "5.0%"));
	pt_report_free(r);

	/* All three just above 1% (the seed's example): listed, none abnormal
	 * by the differential rule; --fixed-only lists all three, by ratio. */
	for (i = 0; i < 3; i++)
		s[i]->patterns[0].bottleneck = 0.0105 + 0.0001 * i;
	r = diag(s, 3, NULL);
	m = get(r, "GPU memory operations", DTOD, "abnormal_workers", NULL);
	assert_non_null(m);
	assert_int_equal(m->n, 0);
	assert_int_equal(nfindings(r, NULL), 0);
	pt_report_free(r);
	pt_diag_options_default(&o);
	o.fixed_only = 1;
	r = diag(s, 3, &o);
	m = get(r, "GPU memory operations", DTOD, "abnormal_workers", NULL);
	assert_int_equal(m->n, 3);
	assert_string_equal(m->child->key, "C.json");
	assert_string_equal(m->last->key, "A.json");
	assert_int_equal(nfindings(r, NULL), 0);
	pt_report_free(r);
	/* Below the fixed threshold everywhere: the op is not listed. */
	for (i = 0; i < 3; i++)
		s[i]->patterns[0].bottleneck = 0.009;
	r = diag(s, 3, NULL);
	assert_int_equal(get(r, "GPU memory operations", NULL)->n, 0);
	pt_report_free(r);
	free_all(s, 3);
}

/* 16 workers with jitter; worker 7 runs the GEMM 30% slower. */
static void test_sixteen_slow_kernel(void **state)
{
	pt_summary *s[16];
	pt_report *r;
	const pt_rv *u, *d;
	char name[32];
	int i;

	for (i = 0; i < 16; i++) {
		double med = 1.0 + 0.01 * (i % 5);

		snprintf(name, sizeof(name), "host_%d_%d.json", i, 500 + i);
		s[i] = mk(name, i, 1000.0, 0.6 + 0.001 * i);
		if (i == 7)
			med = 1.3;
		pat(s[i], K_GEMM, PT_C_COMPUTE, PT_K_KERNEL, 200, med, med * 0.2);
		pat(s[i], K_ADD, PT_C_COMPUTE, PT_K_KERNEL, 50, 0.05, 0.0025);
	}
	r = diag(s, 16, NULL);
	u = get(r, "GPU Compute", "workers with potential GPU issues", NULL);
	assert_int_equal(u->n, 1);
	assert_string_equal(u->child->str, "host_7_507.json");
	/* Others: i%5 over the 15 other workers = 0,0,0,0,1,1,1,2,2,2,3,3,3,4,4
	 * (one 2 left out): median 1.02. */
	d = get(r, "GPU Compute", "detailed report", "host_7_507.json", K_GEMM, NULL);
	assert_true(fabs(num(pt_rv_get(d, "median of other workers (ms)")) - 1.02) < 1e-12);
	assert_string_equal(pt_rv_get(d, "slower by")->str, "27.5%");
	assert_int_equal(nfindings(r, NULL), 1);
	assert_true(fabs(num(pt_rv_get(finding(r, 0), "impact (ms)")) - 0.28 * 200) < 1e-9);
	assert_int_equal(get(r, "GPU Compute", "workers with abnormal GPU utilization", NULL)->n, 0);
	assert_int_equal(get(r, "workers", NULL)->n, 16);
	assert_string_equal(get(r, "workers", NULL)->child->key, "host_0_500.json");
	pt_report_free(r);
	free_all(s, 16);
}

/* A share of the worker's time is never above 100% (issue 29): the same
 * slow kernel as above, but over a window of 10 ms while its 200 calls sum
 * to 260 ms (durations that reach outside the window, as a cycle shorter
 * than its kernels gives): (median - others) x count, 56 ms, is 560% of
 * the window; what it loses is at most its time in the kernel inside the
 * window (the summary's execution ratio, clipped to the window: 1), 10 ms,
 * the evidence "loses 100.0% of its time". */
static void test_time_lost_at_most_window(void **state)
{
	pt_summary *s[16];
	pt_report *r;
	const pt_rv *f, *c;
	char name[32];
	int i;

	for (i = 0; i < 16; i++) {
		double med = 1.0 + 0.01 * (i % 5);

		snprintf(name, sizeof(name), "host_%d_%d.json", i, 500 + i);
		s[i] = mk(name, i, 10.0, 0.6 + 0.001 * i);
		if (i == 7)
			med = 1.3;
		/* as summarize writes it: the calls clipped to the window */
		pat(s[i], K_GEMM, PT_C_COMPUTE, PT_K_KERNEL, 200, med, 0.9)->exec_ratio = 1.0;
	}
	r = diag(s, 16, NULL);
	assert_int_equal(nfindings(r, NULL), 1);
	f = finding(r, 0);
	assert_string_equal(fworker(f), "host_7_507.json");
	assert_true(fabs(num(pt_rv_get(f, "impact (ms)")) - 10.0) < 1e-9);
	c = pt_rv_get(f, "confidence");
	assert_non_null(c);
	assert_true(num(pt_rv_get(c, "time lost (share of window)")) == 1.0);
	assert_non_null(strstr(pt_rv_get(c, "evidence")->str, "loses 100.0% of its time"));
	pt_report_free(r);
	free_all(s, 16);
}

/* The impact floor: a 50% slower kernel that costs 0.1% of the window is
 * not a GPU issue. */
static void test_impact_floor(void **state)
{
	pt_summary *s[4];
	char name[32];
	pt_report *r;
	int i;

	for (i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "w%d.json", i);
		s[i] = mk(name, i, 100.0, 0.5);
		pat(s[i], K_ADD, PT_C_COMPUTE, PT_K_KERNEL, 10, i == 2 ? 0.03 : 0.02, 0.002);
	}
	r = diag(s, 4, NULL);
	assert_int_equal(get(r, "GPU Compute", "workers with potential GPU issues", NULL)->n, 0);
	assert_int_equal(nfindings(r, NULL), 0);
	pt_report_free(r);
	free_all(s, 4);
}

/* Slow kernel launches on one of 10 workers. */
static void test_slow_runtime(void **state)
{
	pt_summary *s[10];
	char name[32];
	pt_report *r;
	const pt_rv *o, *f;
	int i;

	for (i = 0; i < 10; i++) {
		pt_pattern *p;

		snprintf(name, sizeof(name), "w%02d.json", i);
		s[i] = mk(name, i, 50.0, 0.5);
		p = pat(s[i], "cudaLaunchKernel", PT_C_RUNTIME, PT_K_RUNTIME, 1000,
			i == 4 ? 0.02 : 0.005, i == 4 ? 0.2 : 0.05 + 0.001 * i);
		p->exec_ratio = i == 4 ? 0.4 : 0.1;
	}
	r = diag(s, 10, NULL);
	o = get(r, "CUDA Runtime", "cudaLaunchKernel", NULL);
	assert_non_null(o);
	assert_true(fabs(num(pt_rv_get(o, "avg bottleneck ratio (in [0,1])")) -
			 (0.2 + 0.05 * 9 + 0.001 * (45 - 4)) / 10) < 1e-12);
	assert_true(fabs(num(pt_rv_get(o, "avg execution time / monitoring duration (in [0,1])")) -
			 0.13) < 1e-12);
	o = pt_rv_get(o, "abnormal_workers");
	assert_int_equal(o->n, 1);
	assert_string_equal(o->child->key, "w04.json");
	assert_int_equal(nfindings(r, NULL), 1);
	f = finding(r, 0);
	assert_string_equal(pt_rv_get(f, "category")->str, "CUDA Runtime");
	assert_string_equal(pt_rv_get(f, "function")->str, "cudaLaunchKernel");
	assert_non_null(strstr(pt_rv_get(f, "explanation")->str, "launches are slower"));
	pt_report_free(r);
	free_all(s, 10);
}

/* A CPU-side stall in one Python stack on one of 5 workers; another stack
 * above 1% everywhere is listed but not a finding. */
#define STACK "train.py: main|train.py: step|aten::to"
#define STACK2 "train.py: main|train.py: forward"
static void test_cpu_stall(void **state)
{
	pt_summary *s[5];
	char name[32];
	pt_report *r;
	const pt_rv *o, *f;
	int i;

	for (i = 0; i < 5; i++) {
		pt_pattern *p;

		snprintf(name, sizeof(name), "w%d.json", i);
		s[i] = mk(name, i, 20.0, 0.5);
		p = pat(s[i], STACK, PT_C_PYTHON, PT_K_CPU_OP, 1, i == 3 ? 5.2 : 0.2,
			i == 3 ? 0.25 : 0.004);
		pat(s[i], STACK2, PT_C_PYTHON, PT_K_PYTHON, 1, 4.0, 0.05 + 0.001 * i);
		(void)p;
	}
	r = diag(s, 5, NULL);
	o = get(r, "Python functions", NULL);
	assert_int_equal(o->n, 2);
	assert_string_equal(o->child->key, STACK);         /* max 0.25 first */
	assert_int_equal(o->child->n, 1);                   /* only w3 above 1% */
	assert_string_equal(o->child->child->key, "w3.json");
	o = o->child->next;
	assert_string_equal(o->key, STACK2);
	assert_int_equal(o->n, 5);
	assert_string_equal(o->child->key, "w4.json");     /* by ratio desc */
	assert_int_equal(nfindings(r, NULL), 1);
	f = finding(r, 0);
	assert_string_equal(pt_rv_get(f, "category")->str, "Python functions");
	assert_string_equal(fworker(f), "w3.json");
	assert_string_equal(pt_rv_get(f, "function")->str, STACK);
	assert_true(num(pt_rv_get(f, "others")) == 0.004);
	assert_non_null(strstr(pt_rv_get(f, "explanation")->str, "aten::to (called from train.py: step)"));
	pt_report_free(r);

	/* Same owned time but the function itself is not longer (execution
	 * ratio like the others'): the GPU merely idles more; no finding. */
	s[3]->patterns[0].exec_ratio = s[0]->patterns[0].exec_ratio;
	r = diag(s, 5, NULL);
	assert_int_equal(nfindings(r, NULL), 0);
	pt_report_free(r);
	free_all(s, 5);
}

/* Ties: equal values are ordered by worker name; the workers of a
 * finding grouped across workers with equal impact too. */
static void test_ties(void **state)
{
	pt_summary *s[6];
	const char *names[6] = { "zeta.json", "alpha.json", "mid.json", "b.json", "c.json", "d.json" };
	pt_report *r;
	const pt_rv *o;
	int i;

	for (i = 0; i < 6; i++) {
		s[i] = mk(names[i], -1, 100.0, 0.5);
		pat(s[i], DTOD, PT_C_MEMORY, PT_K_MEMCPY, 10, 0.01, i < 2 ? 0.08 : 0.001);
	}
	/* 2 of 6 high: leave-one-out others = {0.08, 0.001 x4}: median 0.001. */
	r = diag(s, 6, NULL);
	o = get(r, "GPU memory operations", DTOD, "abnormal_workers", NULL);
	assert_int_equal(o->n, 2);
	assert_string_equal(o->child->key, "alpha.json");
	assert_string_equal(o->child->next->key, "zeta.json");
	/* One cause on both: one finding, the tie ordered by worker name. */
	assert_int_equal(nfindings(r, NULL), 1);
	o = pt_rv_get(finding(r, 0), "workers");
	assert_int_equal(o->n, 2);
	assert_string_equal(o->child->str, "alpha.json");
	assert_string_equal(o->child->next->str, "zeta.json");
	/* Workers without rank are ordered by name. */
	o = get(r, "workers", NULL);
	assert_string_equal(o->child->key, "alpha.json");
	assert_string_equal(o->last->key, "zeta.json");
	pt_report_free(r);
	free_all(s, 6);
}

/* A worker lacking a key counts 0 for ratios and is left out of durations. */
static void test_missing_keys(void **state)
{
	pt_summary *s[4];
	char name[32];
	pt_report *r;
	const pt_rv *o;
	int i;

	for (i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "w%d.json", i);
		s[i] = mk(name, i, 100.0, 0.5);
		if (i == 1)
			pat(s[i], DTOD, PT_C_MEMORY, PT_K_MEMCPY, 10, 0.4, 0.04);
		if (i != 2)
			pat(s[i], K_GEMM, PT_C_COMPUTE, PT_K_KERNEL, 100, 0.1, 0.1);
	}
	r = diag(s, 4, NULL);
	o = get(r, "GPU memory operations", DTOD, NULL);
	assert_true(num(pt_rv_get(o, "avg bottleneck ratio (in [0,1])")) == 0.01);
	o = pt_rv_get(o, "abnormal_workers");
	assert_int_equal(o->n, 1);
	assert_string_equal(o->child->key, "w1.json");
	/* w2 lacks the GEMM: major kernel median ratio over {0.1,0.1,0.1,0}. */
	o = get(r, "GPU Compute", "major_kernel_executions", K_GEMM, NULL);
	assert_true(num(pt_rv_get(o, "bottleneck ratio (in [0,1])")) == 0.1);
	assert_true(num(pt_rv_get(o, "median cost per execution (ms)")) == 0.1);
	assert_int_equal(get(r, "GPU Compute", "workers with potential GPU issues", NULL)->n, 0);
	assert_int_equal(nfindings(r, NULL), 1);
	assert_true(num(pt_rv_get(finding(r, 0), "others")) == 0);
	pt_report_free(r);
	free_all(s, 4);
}

/* A failed worker: listed with its error, named in a "summary" finding that
 * comes first, left out of every comparison. */
static void test_failed_worker(void **state)
{
	pt_summary *s[3];
	pt_report *r;
	const pt_rv *w, *f;
	int i;

	for (i = 0; i < 2; i++) {
		s[i] = mk(i ? "b.json" : "a.json", i, 100.0, 0.45 + 0.05 * i);
		pat(s[i], DTOD, PT_C_MEMORY, PT_K_MEMCPY, 10, 0.4, i ? 0.05 : 0.001);
	}
	s[2] = pt_summary_failed("/data/bad.json", "not a trace (at byte 12)");
	assert_non_null(s[2]);
	r = diag(s, 3, NULL);
	w = get(r, "workers", "bad.json", NULL);
	assert_non_null(w);
	assert_string_equal(pt_rv_get(w, "error")->str, "not a trace (at byte 12)");
	assert_string_equal(pt_rv_get(w, "file")->str, "/data/bad.json");
	assert_null(pt_rv_get(w, "window (ms)"));
	assert_null(pt_rv_get(get(r, "workers", "a.json", NULL), "error"));
	assert_int_equal(nfindings(r, NULL), 2);
	f = finding(r, 0);
	assert_string_equal(pt_rv_get(f, "category")->str, "summary");
	assert_string_equal(fworker(f), "bad.json");
	assert_non_null(strstr(pt_rv_get(f, "explanation")->str, "1 of 3 traces"));
	assert_non_null(strstr(pt_rv_get(f, "explanation")->str, "bad.json (not a trace (at byte 12))"));
	assert_string_equal(fworker(finding(r, 1)), "b.json");
	/* min/median/max over the two that ran. */
	w = get(r, "GPU Compute", "min/median/max GPU utilization (in [0,1])", NULL);
	assert_true(w->child->num == 0.45 && w->last->num == 0.5);
	pt_report_free(r);
	free_all(s, 3);
}

/* A worker that profiled other step numbers than the others gets a
 * "summary" finding first, naming it and both step ranges (issue 11). */
static void test_step_mismatch(void **state)
{
	pt_summary *s[4];
	pt_report *r;
	const pt_rv *f;
	int i;

	(void)state;
	for (i = 0; i < 4; i++) {
		char name[32];

		snprintf(name, sizeof(name), "w%d.json", i);
		s[i] = mk(name, i, 100.0, 0.5);
		s[i]->nsteps = 2;
		s[i]->step_numbers = realloc(s[i]->step_numbers, 2 * sizeof(int64_t));
		s[i]->step_ms = realloc(s[i]->step_ms, 2 * sizeof(double));
		s[i]->step_numbers[0] = i == 2 ? 12 : 10;
		s[i]->step_numbers[1] = i == 2 ? 13 : 11;
		s[i]->step_ms[0] = s[i]->step_ms[1] = 50;
		pat(s[i], "k|1_1_1", PT_C_COMPUTE, PT_K_KERNEL, 10, 1.0, 0.1);
	}
	r = diag(s, 4, NULL);
	assert_int_equal(nfindings(r, "summary"), 1);
	f = finding(r, 0);
	assert_string_equal(pt_rv_get(f, "category")->str, "summary");
	assert_string_equal(pt_rv_get(f, "metric")->str, "steps");
	assert_string_equal(fworker(f), "w2.json");
	assert_string_equal(pt_rv_get(f, "explanation")->str,
		"Worker w2.json profiled steps 12-13, while 3 of 4 workers profiled steps 10-11: it "
		"is compared with them across different iterations (it armed late, or counts steps "
		"differently); read its numbers with care.");
	pt_report_free(r);
	/* The same steps everywhere: no such finding. */
	s[2]->step_numbers[0] = 10;
	s[2]->step_numbers[1] = 11;
	r = diag(s, 4, NULL);
	assert_int_equal(nfindings(r, "summary"), 0);
	pt_report_free(r);
	free_all(s, 4);
}

static void test_all_failed_and_empty(void **state)
{
	pt_summary *s[1];
	pt_report *r;
	pt_error err;

	pt_error_clear(&err);
	assert_null(pt_diagnose(NULL, 0, NULL, &err));
	assert_int_equal(err.code, PT_EINVAL);
	s[0] = pt_summary_failed("x.json", "boom");
	r = diag(s, 1, NULL);
	assert_int_equal(nfindings(r, "summary"), 1);
	assert_int_equal(get(r, "GPU Compute", "major_kernel_executions", NULL)->n, 0);
	pt_report_free(r);
	free_all(s, 1);
}

/* GPU utilization: both directions, with 12 workers. */
static void test_gpu_util_both(void **state)
{
	pt_summary *s[12];
	char name[32];
	pt_report *r;
	const pt_rv *o;
	int i;

	for (i = 0; i < 12; i++) {
		snprintf(name, sizeof(name), "w%02d.json", i);
		s[i] = mk(name, i, 100.0, i == 3 ? 0.2 : i == 9 ? 0.9 : 0.6 + 0.002 * i);
	}
	r = diag(s, 12, NULL);
	o = get(r, "GPU Compute", "workers with abnormal GPU utilization", NULL);
	assert_int_equal(o->n, 2);
	assert_string_equal(o->child->key, "w09.json");
	assert_true(o->child->num == 0.9);
	assert_string_equal(o->last->key, "w03.json");
	assert_int_equal(nfindings(r, "GPU Compute"), 2);
	/* w03 loses 0.6xx - 0.2 of 100 ms: the larger impact comes first. */
	assert_string_equal(fworker(finding(r, 0)), "w03.json");
	assert_non_null(strstr(pt_rv_get(finding(r, 0), "explanation")->str, "waits more"));
	pt_report_free(r);
	free_all(s, 12);
}

/* Communication: groups, the normal example, a slow-bandwidth worker. */
static void test_comm(void **state)
{
	const char *ring = "ncclDevKernel_AllReduce_Sum_f16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
	pt_summary *s[8];
	char name[32];
	pt_report *r;
	const pt_rv *g, *k, *a;
	int i;

	for (i = 0; i < 8; i++) {
		/* Median bottleneck ratio 0.25, held by w2 and w6 exactly. */
		static const double b[8] = { 0.21, 0.22, 0.25, 0.23, 0.27, 0.28, 0.25, 0.29 };
		pt_pattern *p;

		snprintf(name, sizeof(name), "w%d.json", i);
		s[i] = mk(name, i, 100.0, 0.5);
		p = pat(s[i], ring, PT_C_COMM, PT_K_COMM_KERNEL, 20, 1.0 + 0.01 * i, b[i]);
		p->busbw_gbps = i == 5 ? 20.0 : 80.0 + i;
		p->bytes = 1e8;
		pat(s[i], "gloo:all_reduce", PT_C_COMM, PT_K_CPU_COMM, 4, 0.5, 0.01);
	}
	r = diag(s, 8, NULL);
	g = get(r, "Communication", NULL);
	assert_int_equal(g->n, 2);
	assert_string_equal(g->child->key, "ring allreduce");
	assert_string_equal(g->last->key, "gloo allreduce");
	k = pt_rv_get(g->child, ring);
	assert_non_null(k);
	a = pt_rv_get(k, "abnormal_workers");
	assert_int_equal(a->n, 1);
	assert_string_equal(pt_rv_get(a->child, "worker")->str, "w5.json");
	assert_int_equal(pt_rv_get(a->child, "different from other workers")->i, 1);
	assert_true(num(pt_rv_get(pt_rv_get(a->child, "features"), "bus bandwidth (GB/s)")) == 20.0);
	a = pt_rv_get(k, "example_of_normal_worker");
	assert_int_equal(pt_rv_get(a, "different from other workers")->i, 0);
	/* w2 and w6 sit on the median ratio: w2 wins by name. */
	assert_string_equal(pt_rv_get(a, "worker")->str, "w2.json");
	assert_int_equal(nfindings(r, NULL), 1);
	assert_string_equal(pt_rv_get(finding(r, 0), "metric")->str, "bus bandwidth (GB/s)");
	/* Others' median bandwidth {80..87} without 85 = 83; impact: 20 calls
	 * x 1.05 ms x (1 - 20/83), in ms per window. */
	assert_true(num(pt_rv_get(finding(r, 0), "others")) == 83.0);
	assert_true(fabs(num(pt_rv_get(finding(r, 0), "impact (ms)")) - 21.0 * (1 - 20.0 / 83.0)) < 1e-9);
	pt_report_free(r);
	free_all(s, 8);
}

static void test_comm_groups(void **state)
{
	char b[64];

	assert_string_equal(pt_diag_comm_group("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", PT_K_COMM_KERNEL, b, sizeof(b)), "ring allreduce");
	assert_string_equal(pt_diag_comm_group("ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", PT_K_COMM_KERNEL, b, sizeof(b)), "ring allgather");
	assert_string_equal(pt_diag_comm_group("ncclKernel_AllReduce_TREE_LL_Sum_float(ncclDevComm*)8_1_1|640_1_1", PT_K_COMM_KERNEL, b, sizeof(b)), "tree allreduce");
	assert_string_equal(pt_diag_comm_group("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", PT_K_COMM_KERNEL, b, sizeof(b)), "sendrecv");
	assert_string_equal(pt_diag_comm_group("ncclDevKernel_ReduceScatter_Sum_bf16_RING_SIMPLE(ncclDevComm*)", PT_K_COMM_KERNEL, b, sizeof(b)), "ring reducescatter");
	assert_string_equal(pt_diag_comm_group("ncclDevKernel_Broadcast_RING_LL(ncclDevComm*)", PT_K_COMM_KERNEL, b, sizeof(b)), "ring broadcast");
	assert_string_equal(pt_diag_comm_group("ncclDevKernel_Generic(ncclDevComm*)", PT_K_COMM_KERNEL, b, sizeof(b)), "nccl");
	assert_string_equal(pt_diag_comm_group("gloo:all_reduce", PT_K_CPU_COMM, b, sizeof(b)), "gloo allreduce");
	assert_string_equal(pt_diag_comm_group("nccl:all_to_all", PT_K_CPU_COMM, b, sizeof(b)), "nccl alltoall");
	assert_string_equal(pt_diag_comm_group("c10d::allreduce_", PT_K_CPU_COMM, b, sizeof(b)), "cpu allreduce");
	assert_string_equal(pt_diag_comm_group("record_param_comms", PT_K_CPU_COMM, b, sizeof(b)), "cpu collective");
	/* Truncation is safe. */
	assert_string_equal(pt_diag_comm_group("gloo:all_reduce", PT_K_CPU_COMM, b, 5), "gloo");
}

/* Two traces with the same file name get distinct ids. */
static void test_duplicate_ids(void **state)
{
	pt_summary *s[3];
	pt_report *r;
	int i;

	for (i = 0; i < 3; i++)
		s[i] = mk("same.json", 0, 10.0, 0.5);
	r = diag(s, 3, NULL);
	assert_non_null(get(r, "workers", "same.json", NULL));
	assert_non_null(get(r, "workers", "same.json#2", NULL));
	assert_non_null(get(r, "workers", "same.json#3", NULL));
	pt_report_free(r);
	free_all(s, 3);
}

/* A kernel named like a closing script tag cannot break out of the
 * PerfDisplay page (index.html), and report.json stays valid JSON with the
 * name intact. */
#define EVIL "</script><script>alert(1)</script>\"\\\n\xe2\x82\xac\xff"

static void test_hostile_name(void **state)
{
	pt_summary *s[2];
	pt_report *r;
	pt_sb sb = {0}, page = {0}, empty = {0};
	pt_error err;
	pt_json *doc;
	const pt_json *k;
	int i;

	for (i = 0; i < 2; i++) {
		s[i] = mk(i ? "b.json" : "a.json", i, 100.0, 0.5);
		pat(s[i], EVIL, PT_C_COMPUTE, PT_K_KERNEL, 100, i ? 0.2 : 0.1, 0.1);
	}
	r = diag(s, 2, NULL);
	pt_report_json(pt_report_root_c(r), 0, &sb);
	pt_error_clear(&err);
	/* The page as pt_report_write_dir writes it. */
	assert_int_equal(pt_page_render(sb.buf, sb.len, &page, &err), PT_OK);
	assert_int_equal(pt_page_render("{}", 2, &empty, &err), PT_OK);
	/* Exactly the template's own </script> tags: the name (in the GPU
	 * Compute section, the finding, the display heatmap and display's
	 * short-name map) adds none. */
	assert_int_equal(tu_count(page.buf, "</script>"), tu_count(empty.buf, "</script>"));
	assert_null(strstr(page.buf, "<script>alert"));
	assert_int_equal(tu_count(page.buf, "\\u003c/script\\u003e\\u003cscript\\u003ealert(1)"), 5);
	doc = pt_json_parse(sb.buf, sb.len, &err);
	assert_non_null(doc);
	k = pt_json_get(pt_json_get(pt_json_get(doc, "GPU Compute"), "detailed report"), "b.json");
	assert_non_null(k);
	assert_non_null(k->child);
	assert_string_equal(k->child->key, "</script><script>alert(1)</script>\"\\\n\xe2\x82\xac\xef\xbf\xbd");
	pt_json_free(doc);
	pt_sb_free(&empty);
	pt_sb_free(&page);
	pt_sb_free(&sb);
	pt_report_free(r);
	free_all(s, 2);
}

/* Every key of the seed report and ours is present, in order. */
static void test_report_keys(void **state)
{
	static const char *const top[] = {
		"GPU Compute", "GPU memory operations", "Communication", "CUDA Runtime",
		"Python functions", "workers", "findings", "display", "timeline",
	};
	static const char *const gc[] = {
		"min/median/max GPU utilization (in [0,1])", "workers with abnormal GPU utilization",
		"major_kernel_executions", "workers with potential GPU issues", "detailed report",
	};
	pt_summary *s[2];
	pt_report *r;
	const pt_rv *c;
	size_t i;

	for (i = 0; i < 2; i++)
		s[i] = mk(i ? "b.json" : "a.json", (int64_t)i, 10.0, 0.5);
	r = diag(s, 2, NULL);
	for (i = 0, c = pt_report_root_c(r)->child; i < 9; i++, c = c->next) {
		assert_non_null(c);
		assert_string_equal(c->key, top[i]);
	}
	assert_null(c);
	for (i = 0, c = get(r, "GPU Compute", NULL)->child; i < 5; i++, c = c->next)
		assert_string_equal(c->key, gc[i]);
	c = get(r, "workers", "a.json", NULL);
	assert_int_equal(pt_rv_get(c, "rank")->i, 0);
	assert_int_equal(pt_rv_get(c, "pid")->i, 1000);
	assert_string_equal(pt_rv_get(c, "host")->str, "");
	assert_int_equal(pt_rv_get(c, "steps")->child->i, 10);
	assert_true(num(pt_rv_get(c, "window (ms)")) == 10.0);
	assert_true(num(pt_rv_get(c, "gpu utilization")) == 0.5);
	pt_report_free(r);
	free_all(s, 2);
}

/* Give s two profiled steps (numbers 10, 11) of the given lengths, or none. */
static void two_steps(pt_summary *s, double a, double b, int none)
{
	s->nsteps = none ? 0 : 2;
	s->step_numbers = realloc(s->step_numbers, 2 * sizeof(int64_t));
	s->step_ms = realloc(s->step_ms, 2 * sizeof(double));
	s->step_numbers[0] = 10;
	s->step_numbers[1] = 11;
	s->step_ms[0] = a;
	s->step_ms[1] = b;
}

/* Two steps slow on every worker: one job finding naming both, its median
 * over all workers' slow steps (8 values: each worker gives two). */
static void test_job_slow_steps(void **state)
{
	static const char *const names[] = { "a.json", "b.json", "c.json", "d.json" };
	pt_summary *s[4];
	pt_report *r;
	const pt_rv *c, *f = NULL;
	size_t i, j;

	(void)state;
	for (i = 0; i < 4; i++) {
		s[i] = mk(names[i], (int64_t)i, 600.0, 0.5);
		s[i]->nsteps = 10;
		s[i]->step_numbers = realloc(s[i]->step_numbers, 10 * sizeof(int64_t));
		s[i]->step_ms = realloc(s[i]->step_ms, 10 * sizeof(double));
		for (j = 0; j < 10; j++) {
			s[i]->step_numbers[j] = 100 + (int64_t)j;
			s[i]->step_ms[j] = j == 3 || j == 7 ? 100.0 + (double)i : 50.0;
		}
		pat(s[i], "k", PT_C_COMPUTE, PT_K_KERNEL, 10, 1.0, 0.01);
	}
	r = diag(s, 4, NULL);
	for (c = get(r, "findings", NULL)->child; c; c = c->next)
		if (!strcmp(pt_rv_get(c, "metric")->str, "slow steps (job)"))
			f = c;
	assert_non_null(f);
	assert_string_equal(pt_rv_get(f, "category")->str, "Steps");
	assert_non_null(strstr(pt_rv_get(f, "explanation")->str,
			       "steps 103 and 107 are slow on 4 of the 4 workers with several "
			       "steps: 101.5 ms (median over workers and steps) against a median "
			       "step of 50.0 ms"));
	pt_report_free(r);
	free_all(s, 4);
}

/* ---- one finding per cause (merge.c), noise (noise.c) -------------------- */

#define PARENT "train.py(9): main|train.py(20): tokenize_batch"
#define CHILD PARENT "|<built-in method sqrt>"

/* A function every worker runs, 2x longer on one, with its child 2x longer
 * too: one finding, the parent's, the child inside it and its time added. */
static void test_merge_fold(void **state)
{
	pt_summary *s[5];
	char name[32];
	pt_report *r;
	const pt_rv *f, *ev;
	double lone;
	int i;

	(void)state;
	for (i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "w%d.json", i);
		s[i] = mk(name, i, 100.0, 0.5);
		pat(s[i], PARENT, PT_C_PYTHON, PT_K_PYTHON, 1, i == 3 ? 30.0 : 3.0,
		    i == 3 ? 0.30 : 0.03);
		pat(s[i], CHILD, PT_C_PYTHON, PT_K_PYTHON, 1, i == 3 ? 20.0 : 2.0,
		    i == 3 ? 0.20 : 0.02);
	}
	r = diag(s, 5, NULL);
	assert_int_equal(nfindings(r, NULL), 1);
	f = finding(r, 0);
	assert_string_equal(fworker(f), "w3.json");
	assert_string_equal(pt_rv_get(f, "function")->str, PARENT);
	ev = pt_rv_get(f, "evidence");
	assert_non_null(ev);
	assert_int_equal(ev->n, 1);
	assert_string_equal(pt_rv_get(ev->child, "kind")->str, "inside it");
	assert_string_equal(pt_rv_get(ev->child, "function")->str, CHILD);
	assert_string_equal(pt_rv_get(ev->child, "category")->str, "Python functions");
	lone = num(pt_rv_get(ev->child, "impact (ms)"));
	assert_true(lone > 0);
	/* the parent's impact holds the child's: 27 ms own + 18 ms inside */
	assert_true(fabs(num(pt_rv_get(f, "impact (ms)")) - (27.0 + lone)) < 1e-9);
	assert_true(fabs(lone - 18.0) < 1e-9);
	/* its sentence says the time it now stands for */
	assert_non_null(strstr(pt_rv_get(f, "explanation")->str,
			       "; with the 1 frame inside it, about 45.0 ms per step"));
	pt_report_free(r);
	free_all(s, 5);
}

/* The job's noise: a worker's extra 2.3 ms per step in a function, while
 * every worker's steps differ by 10 ms from one to the next, is weak and
 * says so; 13 ms per step is not. */
static void test_noise_rule(void **state)
{
	pt_summary *s[5];
	char name[32];
	pt_report *r;
	const pt_rv *f, *cf;
	int i, big;

	(void)state;
	for (big = 0; big < 2; big++) {
		for (i = 0; i < 5; i++) {
			snprintf(name, sizeof(name), "w%d.json", i);
			s[i] = mk(name, i, 110.0, 0.5);
			two_steps(s[i], 50.0 + i, 60.0 + i, 0);
			pat(s[i], STACK, PT_C_PYTHON, PT_K_CPU_OP, 2, i != 3 ? 0.2 : big ? 13.0 : 2.5,
			    i != 3 ? 0.004 : big ? 0.24 : 0.046);
		}
		r = diag(s, 5, NULL);
		assert_int_equal(nfindings(r, NULL), 1);
		f = finding(r, 0);
		cf = pt_rv_get(f, "confidence");
		assert_string_equal(fworker(f), "w3.json");
		/* each worker's steps: 5 ms either side of their middle */
		assert_true(num(pt_rv_get(cf, "noise (ms per step)")) == 5.0);
		assert_string_equal(pt_rv_get(cf, "noise")->str, "the job's step-to-step spread");
		if (!big) {
			assert_string_equal(pt_rv_get(cf, "level")->str, "weak");
			assert_non_null(strstr(pt_rv_get(cf, "evidence")->str,
					       "2.31 ms per step, within the job's noise (5.00 ms per "
					       "step: the job's step-to-step spread)"));
		} else {
			assert_string_not_equal(pt_rv_get(cf, "level")->str, "weak");
		}
		pt_report_free(r);
		free_all(s, 5);
	}
}

/* The "display" key: per-worker steps and classes in the order of
 * "workers"; heatmap columns = the findings' functions plus the largest
 * median ms per step (at most 50, most expensive first); cells = total /
 * steps (the window when there are none), 4 decimals, null when absent. */
static void test_display_key(void **state)
{
	static const char *const names[] = { "a.json", "b.json", "c.json" };
	static const int64_t ranks[] = { 1, 0, -1 };
	pt_summary *s[4];
	pt_report *r;
	const pt_rv *d, *c, *w, *fn, *hw, *val, *row;
	char key[32];
	size_t i, j;
	int k;

	for (i = 0; i < 3; i++) {
		s[i] = mk(names[i], ranks[i], 100.0, 0.5);
		two_steps(s[i], 49.5, 50.5, i == 2);
		for (k = 0; k < PT_C_COUNT; k++)
			s[i]->class_ms[k] = 10.0 * k + (double)i;
		/* 60 kernels, the same on every worker: k59 costs most. */
		for (k = 0; k < 60; k++) {
			snprintf(key, sizeof(key), "k%02d", k);
			pat(s[i], key, PT_C_COMPUTE, PT_K_KERNEL, 10,
			    i == 1 && k == 59 ? 0.0612345 : 0.001 * (k + 1), 0.0001);
		}
	}
	/* Only a.json copies: its one finding names DTOD, whose median over
	 * the workers is 0, so only the finding brings it in. */
	pat(s[0], DTOD, PT_C_MEMORY, PT_K_MEMCPY, 10, 0.4, 0.05);
	s[3] = pt_summary_failed("/x/d.json", "boom");
	r = diag(s, 4, NULL);
	assert_int_equal(nfindings(r, "GPU memory operations"), 1);
	d = get(r, "display", NULL);
	assert_non_null(d);
	assert_int_equal(pt_rv_get(d, "version")->i, 1);
	c = pt_rv_get(d, "classes");
	assert_int_equal(c->n, 6);
	assert_string_equal(c->child->str, "compute");
	assert_string_equal(c->child->next->str, "communication");
	assert_string_equal(c->last->str, "idle");

	/* Workers in report order (rank 0, 1, unknown); the failed one left out. */
	w = pt_rv_get(d, "workers");
	assert_int_equal(w->n, 3);
	assert_string_equal(w->child->key, "b.json");
	assert_string_equal(w->child->next->key, "a.json");
	assert_string_equal(w->last->key, "c.json");
	c = pt_rv_get(w->child, "step_ms");
	assert_int_equal(c->n, 2);
	assert_true(num(c->child) == 49.5 && num(c->last) == 50.5);
	c = pt_rv_get(w->child, "step_numbers");
	assert_true(c->n == 2 && c->child->i == 10 && c->last->i == 11);
	assert_int_equal(pt_rv_get(w->last, "step_ms")->n, 0);
	assert_int_equal(pt_rv_get(w->last, "step_numbers")->n, 0);
	c = pt_rv_get(w->child, "class_ms");  /* b.json: class k holds 10 k + 1 */
	assert_int_equal(c->n, 6);
	assert_string_equal(c->child->key, "compute");
	assert_true(num(c->child) == 10.0 * PT_C_COMPUTE + 1);
	assert_string_equal(c->child->next->key, "communication");
	assert_true(num(c->child->next) == 10.0 * PT_C_COMM + 1);
	assert_string_equal(c->last->key, "idle");
	assert_true(num(c->last) == 1.0);

	/* Heatmap: 50 columns, k59..k11 by median, then DTOD (median 0). */
	assert_string_equal(get(r, "display", "heatmap", "metric", NULL)->str, "ms per step");
	fn = get(r, "display", "heatmap", "functions", NULL);
	assert_int_equal(fn->n, 50);
	for (j = 0, c = fn->child; j < 49; j++, c = c->next) {
		snprintf(key, sizeof(key), "k%02d", 59 - (int)j);
		assert_string_equal(pt_rv_get(c, "key")->str, key);
		assert_string_equal(pt_rv_get(c, "class")->str, "compute");
	}
	assert_string_equal(pt_rv_get(fn->last, "key")->str, DTOD);
	assert_string_equal(pt_rv_get(fn->last, "class")->str, "memory");
	hw = get(r, "display", "heatmap", "workers", NULL);
	assert_int_equal(hw->n, 3);
	assert_string_equal(hw->child->str, "b.json");
	assert_string_equal(hw->child->next->str, "a.json");
	assert_string_equal(hw->last->str, "c.json");
	val = get(r, "display", "heatmap", "value", NULL);
	assert_int_equal(val->n, 3);
	for (i = 0, row = val->child; i < 3; i++, row = row->next) {
		assert_int_equal(row->n, 50);
		for (j = 0, c = row->child; j < 49; j++, c = c->next) {
			/* 10 calls of 0.001 (k + 1) ms over 2 steps; c.json has
			 * no steps, so its window counts as one. */
			double want = (i == 2 ? 0.01 : 0.005) * (double)(60 - j);

			if (i == 0 && j == 0)
				want = 0.3062;  /* 0.612345 / 2 = 0.3061725, 4 decimals */
			assert_true(fabs(num(c) - want) < 1e-12);
			assert_true(num(c) == round(num(c) * 1e4) / 1e4);  /* 4 decimals */
		}
		if (i == 1)
			assert_true(num(row->last) == 2.0);  /* 10 x 0.4 ms / 2 steps */
		else
			assert_int_equal(row->last->type, PT_RV_NULL);
	}
	pt_report_free(r);
	free_all(s, 4);
}

/* Output is reproducible: same input, same bytes, whatever the input order
 * of equal-valued workers. */
static void test_deterministic(void **state)
{
	pt_summary *s[9];
	pt_report *r;
	pt_sb a = {0}, b = {0};
	char name[32];
	int i;

	for (i = 0; i < 9; i++) {
		snprintf(name, sizeof(name), "w%d.json", i);
		s[i] = mk(name, -1, 10.0, 0.5);
		pat(s[i], DTOD, PT_C_MEMORY, PT_K_MEMCPY, 1, 0.1, i % 3 ? 0.001 : 0.3);
		pat(s[i], STACK, PT_C_PYTHON, PT_K_CPU_OP, 1, 0.1, 0.02);
	}
	r = diag(s, 9, NULL);
	pt_report_json(pt_report_root_c(r), 0, &a);
	pt_report_free(r);
	for (i = 0; i < 4; i++) {
		pt_summary *t = s[i];

		s[i] = s[8 - i];
		s[8 - i] = t;
	}
	r = diag(s, 9, NULL);
	pt_report_json(pt_report_root_c(r), 0, &b);
	pt_report_free(r);
	assert_string_equal(a.buf, b.buf);
	pt_sb_free(&a);
	pt_sb_free(&b);
	free_all(s, 9);
}

/* The victim link, on the summaries of a real `make demo` run
 * (tests/data/demo_runs/a: rank 2 stalls in slow_augment, rank 3 waits for
 * it): the stalled rank's finding holds rank 3's waiting as symptoms, each
 * caused by rank 2, and no finding of its own names rank 3; read from the
 * report's finding model. */
/* The real 4-rank demo run's summaries (tests/data/demo_runs/a: rank 2
 * slowed in one Python function). */
static void load_demo_a(pt_summary *s[4])
{
	const char *d = getenv("PT_DATA");
	char path[1024];

	for (size_t i = 0; i < 4; i++) {
		pt_error err;
		pt_error_clear(&err);
		snprintf(path, sizeof(path), "%s/demo_runs/a/vm_%zu_%zu.summary.json",
			 d && *d ? d : "tests/data", i, 26732 + i);
		s[i] = pt_summary_read_file(path, &err);
		if (!s[i])
			fail_msg("%s: %s", path, err.msg);
	}
}

static void test_victim_link(void **state)
{
	pt_summary *s[4];
	pt_report *r;
	const pt_finding *f;
	size_t i, n, nsym = 0;

	(void)state;
	load_demo_a(s);
	r = diag(s, 4, NULL);
	f = pt_report_findings(r, &n);
	assert_true(n >= 1);
	assert_string_equal(f[0].category, "Lockstep");
	assert_int_equal(f[0].nworkers, 1);
	assert_string_equal(f[0].workers[0], "vm_2_26734.json");
	for (i = 0; i < f[0].nev; i++) {
		const pt_finding_ev *e = &f[0].ev[i];
		if (e->kind != PT_EV_SYMPTOM)
			continue;
		nsym++;
		assert_string_equal(e->worker, "vm_3_26735.json");
	}
	/* gloo:all_reduce, c10d::allreduce_ and the Python wait */
	assert_int_equal(nsym, 3);
	for (i = 1; i < n; i++) {
		assert_null(f[i].caused_by);
		assert_string_not_equal(f[i].workers[0], "vm_3_26735.json");
	}
	pt_report_free(r);
	free_all(s, 4);
}

/* The watch's straggler (issue 32): the first finding about its worker
 * cites it, once, as typed evidence and in the text report; a straggler
 * the profile found nothing on is cited nowhere. */
static void test_watch_cites_straggler(void **state)
{
	pt_summary *s[4];
	pt_diag_options o;
	pt_diag_watch w[2];
	pt_report *r;
	const pt_finding *f;
	pt_sb sb = { 0 };
	size_t i, j, n, nwatch = 0;

	(void)state;
	load_demo_a(s);
	memset(w, 0, sizeof(w));
	w[0].rank = 2;
	w[0].since = 1796484456.0;  /* 2026-12-05 15:27:36 UTC */
	w[0].since_step = 1234;
	w[0].late_s = 0.0301;
	w[0].late_max_s = 0.0352;
	w[0].at_name = "gloo:all_reduce";
	w[0].at_pg = "0";
	w[0].at_seq = 5321;
	w[0].score = 0.93;
	w[0].lost_gpu_s_per_min = 4.5;
	w[1] = w[0];
	w[1].rank = 7;  /* no such worker */
	pt_diag_options_default(&o);
	o.watch = w;
	o.nwatch = 2;
	r = diag(s, 4, &o);
	f = pt_report_findings(r, &n);
	assert_true(n >= 1);
	assert_string_equal(f[0].workers[0], "vm_2_26734.json");
	for (i = 0; i < n; i++)
		for (j = 0; j < f[i].nev; j++) {
			const pt_finding_ev *e = &f[i].ev[j];
			if (e->kind != PT_EV_WATCH)
				continue;
			nwatch++;
			assert_int_equal(i, 0);
			assert_string_equal(e->worker, "vm_2_26734.json");
			assert_string_equal(e->function, "gloo:all_reduce");
			assert_true(e->value == 0.0301 * 1e3);
			assert_true(e->others == 0.93);
			assert_string_equal(e->explanation,
				"the always-on watch saw rank 2 arrive last at the collectives since "
				"15:27:36 UTC (step 1234): 30.1 ms after the median rank per step "
				"(median), at most 35.2 ms at gloo:all_reduce (process group 0, "
				"sequence 5321); straggler score 0.93, the others waited 4.5 "
				"GPU-seconds a minute for it");
		}
	assert_int_equal(nwatch, 1);
	pt_report_text(r, 0, &sb);
	assert_non_null(strstr(sb.buf, "before the profile, the always-on watch saw rank 2"));
	pt_sb_free(&sb);
	pt_report_free(r);
	free_all(s, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_select),
		cmocka_unit_test(test_stats_zeros_random),
		cmocka_unit_test(test_stats_exact),
		cmocka_unit_test(test_sorted_median_loo),
		cmocka_unit_test(test_z_rel),
		cmocka_unit_test(test_limit),
		cmocka_unit_test(test_typical),
		cmocka_unit_test(test_display_slow_steps),
		cmocka_unit_test(test_two_workers),
		cmocka_unit_test(test_three_workers_memcpy),
		cmocka_unit_test(test_sixteen_slow_kernel),
		cmocka_unit_test(test_time_lost_at_most_window),
		cmocka_unit_test(test_impact_floor),
		cmocka_unit_test(test_slow_runtime),
		cmocka_unit_test(test_cpu_stall),
		cmocka_unit_test(test_merge_fold),
		cmocka_unit_test(test_victim_link),
		cmocka_unit_test(test_watch_cites_straggler),
		cmocka_unit_test(test_noise_rule),
		cmocka_unit_test(test_ties),
		cmocka_unit_test(test_missing_keys),
		cmocka_unit_test(test_failed_worker),
		cmocka_unit_test(test_step_mismatch),
		cmocka_unit_test(test_all_failed_and_empty),
		cmocka_unit_test(test_gpu_util_both),
		cmocka_unit_test(test_comm),
		cmocka_unit_test(test_comm_groups),
		cmocka_unit_test(test_duplicate_ids),
		cmocka_unit_test(test_hostile_name),
		cmocka_unit_test(test_report_keys),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_display_key),
		cmocka_unit_test(test_job_slow_steps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
