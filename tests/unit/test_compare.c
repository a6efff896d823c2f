/*
 * test_compare.c - unit tests for src/compare/compare.c over synthetic
 * summaries built in memory, with exact expectations: a kernel slower and a
 * new kernel (the numbers, the share, the summary sentence, the waterfall),
 * kernels matched by name across launch shapes, a symptom (Python time
 * covered by a longer kernel) that is not a finding, a change below the
 * noise, one rank of four slower (pairing), one rank of twenty standing out
 * from the others' run-to-run jitter, two unrelated runs, a side
 * with no readable worker, the text report's first line, Python stacks
 * merged across module instances, a waiting thread that is no finding,
 * one frame a little slower at several call sites, and a collective that
 * grew on the critical path (the what-if) or beside it (weak).
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
#include "compare/compare.h"
#include "report/report.h"

static pt_summary *mk(const char *name, int64_t rank, const double *steps, size_t n)
{
	pt_summary *s = calloc(1, sizeof(*s));
	size_t i;

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
	s->nsteps = n;
	s->step_numbers = malloc(n * sizeof(int64_t));
	s->step_ms = malloc(n * sizeof(double));
	for (i = 0; i < n; i++) {
		s->step_numbers[i] = 10 + (int64_t)i;
		s->step_ms[i] = steps[i];
		s->window_ms += steps[i];
	}
	s->class_ms[PT_C_IDLE] = s->window_ms;
	return s;
}

/* A pattern: count calls of median_ms each; owned_ms of the window owned. */
static void pat(pt_summary *s, const char *key, int cls, int kind, uint64_t count,
		double median_ms, double owned_ms)
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
	p->bottleneck = owned_ms / s->window_ms;
	p->exec_ratio = p->total_ms / s->window_ms;
	s->class_ms[cls] += owned_ms;
	s->class_ms[PT_C_IDLE] -= owned_ms;
}

static pt_report *cmp(pt_summary **a, size_t na, pt_summary **b, size_t nb)
{
	pt_compare_side sa = { a, na, "base", "summaries" }, sb = { b, nb, "new", "summaries" };
	pt_error err;
	pt_report *r;

	pt_error_clear(&err);
	r = pt_compare(&sa, &sb, NULL, &err);
	if (!r)
		fail_msg("pt_compare: %s", err.msg);
	return r;
}

static const pt_rv *C(const pt_report *r, const char *key)
{
	return pt_rv_get(pt_rv_get(pt_report_root_c(r), "Compare"), key);
}

static const pt_rv *nth(const pt_rv *arr, size_t i)
{
	const pt_rv *c = arr ? arr->child : NULL;

	while (c && i--)
		c = c->next;
	return c;
}

static const char *str(const pt_rv *o, const char *key)
{
	const pt_rv *v = pt_rv_get(o, key);

	return v && v->type == PT_RV_STR ? v->str : "";
}

static double num(const pt_rv *o, const char *key)
{
	const pt_rv *v = pt_rv_get(o, key);

	assert_non_null(v);
	return v->type == PT_RV_INT ? (double)v->i : v->num;
}

static const double A_STEPS[5] = { 10.0, 10.1, 9.9, 10.0, 10.05 };
static const double B_STEPS[5] = { 12.0, 12.1, 11.9, 12.0, 12.05 };

/* BASELINE: gemm 2 ms per step, relu 1, a Python frame 3; 5 steps. */
static pt_summary *base_run(void)
{
	pt_summary *s = mk("base.json", 0, A_STEPS, 5);

	pat(s, "gemm_kernel4_1_1|128_1_1", PT_C_COMPUTE, PT_K_KERNEL, 5, 2.0, 10.0);
	pat(s, "relu_kernel(float*)2_1_1|64_1_1", PT_C_COMPUTE, PT_K_KERNEL, 5, 1.0, 5.0);
	pat(s, "train.py: step|model.py: forward", PT_C_PYTHON, PT_K_PYTHON, 5, 3.0, 15.0);
	return s;
}

static void test_slower_and_new(void **state)
{
	pt_summary *a = base_run(), *b = mk("new.json", 0, B_STEPS, 5);
	const pt_rv *f, *x, *w;
	pt_report *r;
	double sum = 0;

	(void)state;
	/* gemm: 3.6 ms per call under another grid (matched by name), owning
	 * 3.6 ms per step; a new kernel of 0.4 ms per step; the Python frame
	 * runs as long as before but a longer kernel covers part of it (owned
	 * 3 -> 2.4 ms per step): a symptom, not a finding. */
	pat(b, "gemm_kernel8_1_1|128_1_1", PT_C_COMPUTE, PT_K_KERNEL, 5, 3.6, 18.0);
	pat(b, "relu_kernel(float*)2_1_1|64_1_1", PT_C_COMPUTE, PT_K_KERNEL, 5, 1.0, 5.0);
	pat(b, "train.py: step|model.py: forward", PT_C_PYTHON, PT_K_PYTHON, 5, 3.0, 12.0);
	pat(b, "new_kernel1_1_1|32_1_1", PT_C_COMPUTE, PT_K_KERNEL, 5, 0.4, 2.0);
	r = cmp(&a, 1, &b, 1);
	assert_string_equal(str(pt_rv_get(pt_report_root_c(r), "Compare"), "summary"),
			    "NEW is 1.20x slower per step: 2.00 ms more, 100% of it in `gemm_kernel` "
			    "(+1.60 ms) and the new `new_kernel` (+0.400 ms).");
	assert_float_equal(num(pt_rv_get(pt_report_root_c(r), "Compare"), "delta_ms"), 2.0, 1e-9);
	/* noise: 1.4826 x MAD of BASELINE's steps (0.05) */
	assert_float_equal(num(pt_rv_get(pt_report_root_c(r), "Compare"), "threshold_ms"),
			   1.4826 * 0.05, 1e-9);
	f = C(r, "findings");
	assert_int_equal(f->n, 2);
	x = nth(f, 0);
	assert_string_equal(str(x, "function"), "gemm_kernel");
	assert_string_equal(str(x, "change"), "slower");
	assert_float_equal(num(x, "baseline_ms"), 2.0, 1e-9);
	assert_float_equal(num(x, "new_ms"), 3.6, 1e-9);
	assert_float_equal(num(x, "delta_ms"), 1.6, 1e-9);
	assert_float_equal(num(x, "share"), 0.8, 1e-9);
	assert_float_equal(num(x, "new_per_call_ms") / num(x, "baseline_per_call_ms"), 1.8, 1e-9);
	assert_string_equal(nth(pt_rv_get(x, "workers"), 0)->str, "all");
	x = nth(f, 1);
	assert_string_equal(str(x, "function"), "new_kernel");
	assert_string_equal(str(x, "change"), "appeared");
	assert_float_equal(num(x, "delta_ms"), 0.4, 1e-9);
	assert_true(pt_rv_get(x, "baseline_per_call_ms")->type == PT_RV_NULL);
	/* waterfall: the two changes, then the rest; the bars add up */
	for (w = C(r, "waterfall")->child; w; w = w->next)
		sum += num(w, "delta_ms");
	assert_float_equal(sum, 2.0, 1e-9);
	assert_string_equal(str(nth(C(r, "waterfall"), 1), "label"), "new: new_kernel");
	assert_string_equal(str(pt_rv_get(pt_report_root_c(r), "Compare"), "pairing"), "rank");
	pt_report_free(r);
	pt_summary_free(a);
	pt_summary_free(b);
}

static void test_identical_and_below_noise(void **state)
{
	pt_summary *a = base_run(), *b = base_run(), *c = mk("c.json", 0, A_STEPS, 5);
	pt_report *r;

	(void)state;
	r = cmp(&a, 1, &b, 1);
	assert_int_equal(C(r, "findings")->n, 0);
	assert_float_equal(num(pt_rv_get(pt_report_root_c(r), "Compare"), "delta_ms"), 0, 0);
	assert_non_null(strstr(str(pt_rv_get(pt_report_root_c(r), "Compare"), "summary"),
			       "no function changed beyond it"));
	pt_report_free(r);
	/* gemm +0.04 ms per step: below the noise (0.074 ms) */
	pat(c, "gemm_kernel4_1_1|128_1_1", PT_C_COMPUTE, PT_K_KERNEL, 5, 2.04, 10.2);
	pat(c, "relu_kernel(float*)2_1_1|64_1_1", PT_C_COMPUTE, PT_K_KERNEL, 5, 1.0, 5.0);
	pat(c, "train.py: step|model.py: forward", PT_C_PYTHON, PT_K_PYTHON, 5, 3.0, 15.0);
	r = cmp(&a, 1, &c, 1);
	assert_int_equal(C(r, "findings")->n, 0);
	pt_report_free(r);
	pt_summary_free(a);
	pt_summary_free(b);
	pt_summary_free(c);
}

/* Four ranks a side, one step of 10 ms each; rank 2's kernel k takes
 * 1.5 ms instead of 1.0 in NEW.  The job's medians do not move; the pair
 * of rank 2 does. */
static void test_pairs(void **state)
{
	pt_summary *a[4], *b[4];
	const double one[1] = { 10.0 };
	const pt_rv *x;
	pt_report *r;
	char name[32];
	int i;

	(void)state;
	for (i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "host_%d_100.json", i);
		a[i] = mk(name, i, one, 1);
		b[i] = mk(name, i, one, 1);
		pat(a[i], "k", PT_C_COMPUTE, PT_K_KERNEL, 10, 0.1, 1.0);
		pat(b[i], "k", PT_C_COMPUTE, PT_K_KERNEL, 10, i == 2 ? 0.15 : 0.1, i == 2 ? 1.5 : 1.0);
		pat(a[i], "step.py: f", PT_C_PYTHON, PT_K_PYTHON, 1, 6.0, 6.0);
		pat(b[i], "step.py: f", PT_C_PYTHON, PT_K_PYTHON, 1, 6.0, 6.0);
	}
	r = cmp(a, 4, b, 4);
	assert_float_equal(num(pt_rv_get(pt_report_root_c(r), "Compare"), "pairs"), 4, 0);
	assert_int_equal(C(r, "findings")->n, 1);
	x = nth(C(r, "findings"), 0);
	assert_string_equal(str(x, "function"), "k");
	assert_int_equal(pt_rv_get(x, "ranks")->n, 1);
	assert_int_equal(nth(pt_rv_get(x, "ranks"), 0)->i, 2);
	assert_float_equal(num(x, "delta_ms"), 0.5, 1e-9);
	assert_true(pt_rv_get(x, "share")->type == PT_RV_NULL);
	assert_non_null(strstr(str(pt_rv_get(pt_report_root_c(r), "Compare"), "summary"),
			       "but rank 2: `k` (kernel) got slower: 1.00 -> 1.50 ms per step (+0.500 ms), 10 calls per step, 1.50x as long per call."));
	pt_report_free(r);
	for (i = 0; i < 4; i++) {
		pt_summary_free(a[i]);
		pt_summary_free(b[i]);
	}
}

/* Twenty ranks whose kernel time moves by up to 3% from run to run (above
 * the 0.5% floor: one step each, no step-to-step noise) and rank 7 whose
 * kernel takes 30% longer: only rank 7 stands out. */
static void test_pairs_jitter(void **state)
{
	pt_summary *a[20], *b[20];
	const double one[1] = { 10.0 };
	const pt_rv *f;
	pt_report *r;
	char name[32];
	int i;

	(void)state;
	for (i = 0; i < 20; i++) {
		double j = i == 7 ? 1.3 : 1.0 + 0.03 * ((i % 5) - 2) / 2.0;

		snprintf(name, sizeof(name), "host_%d_100.json", i);
		a[i] = mk(name, i, one, 1);
		b[i] = mk(name, i, one, 1);
		pat(a[i], "k", PT_C_COMPUTE, PT_K_KERNEL, 10, 0.4, 4.0);
		pat(b[i], "k", PT_C_COMPUTE, PT_K_KERNEL, 10, 0.4 * j, 4.0 * j);
	}
	r = cmp(a, 20, b, 20);
	f = C(r, "findings");
	assert_int_equal(f->n, 1);
	assert_int_equal(pt_rv_get(nth(f, 0), "ranks")->n, 1);
	assert_int_equal(nth(pt_rv_get(nth(f, 0), "ranks"), 0)->i, 7);
	assert_float_equal(num(nth(f, 0), "delta_ms"), 1.2, 1e-9);
	pt_report_free(r);
	for (i = 0; i < 20; i++) {
		pt_summary_free(a[i]);
		pt_summary_free(b[i]);
	}
}

static void test_unrelated(void **state)
{
	pt_summary *a = base_run(), *b = mk("other.json", 0, B_STEPS, 5);
	pt_report *r;
	pt_sb sb = {0};

	(void)state;
	pat(b, "conv2d_kernel", PT_C_COMPUTE, PT_K_KERNEL, 5, 4.0, 20.0);
	pat(b, "vision.py: forward", PT_C_PYTHON, PT_K_PYTHON, 5, 3.0, 15.0);
	r = cmp(&a, 1, &b, 1);
	assert_true(pt_rv_get(pt_rv_get(pt_report_root_c(r), "Compare"), "unrelated")->i == 1);
	assert_int_equal(C(r, "findings")->n, 0);
	pt_compare_text(r, 0, &sb);
	assert_false(sb.oom);
	pt_sb_addc(&sb, 0);
	assert_non_null(strstr(sb.buf, "BASELINE and NEW have little in common: only 0% of BASELINE's"));
	assert_true(sb.buf == strstr(sb.buf, "BASELINE and NEW"));
	pt_sb_free(&sb);
	pt_report_free(r);
	pt_summary_free(a);
	pt_summary_free(b);
}

static void test_no_readable_side(void **state)
{
	pt_summary *a = pt_summary_failed("/x/bad_0_1.json", "unexpected end of file");
	pt_summary *b = base_run();
	pt_compare_side sa = { &a, 1, "/x", "traces" }, sb = { &b, 1, "new", "traces" };
	pt_error err;

	(void)state;
	pt_error_clear(&err);
	assert_null(pt_compare(&sa, &sb, NULL, &err));
	assert_int_equal(err.code, PT_EINVAL);
	assert_string_equal(err.msg, "BASELINE: no readable worker");
	assert_string_equal(err.subject, "/x");
	pt_summary_free(a);
	pt_summary_free(b);
}

static void test_text_first_line(void **state)
{
	pt_summary *a = base_run(), *b = mk("new.json", 0, B_STEPS, 5);
	pt_report *r;
	pt_sb sb = {0};

	(void)state;
	pat(b, "gemm_kernel4_1_1|128_1_1", PT_C_COMPUTE, PT_K_KERNEL, 5, 4.0, 20.0);
	r = cmp(&a, 1, &b, 1);
	pt_compare_text(r, 0, &sb);
	pt_sb_addc(&sb, 0);
	assert_true(strncmp(sb.buf, "NEW is 1.20x slower per step: 2.00 ms more, ", 44) == 0);
	/* what moved the way the step did first, then what gave some back */
	assert_non_null(strstr(sb.buf, "\n1. `gemm_kernel` (kernel) got slower: 2.00 -> 4.00 ms per step (+2.00 ms, 100% of the difference), 1 call per step, 2.00x as long per call.\n"));
	/* relu and the Python frame are gone (-1 and -3 ms per step) */
	assert_non_null(strstr(sb.buf, "\n2. `model.py: forward` (Python/CPU function) is gone: it took 3.00 ms per step in BASELINE (-3.00 ms, -150% of the difference).\n"));
	assert_non_null(strstr(sb.buf, "\n3. `relu_kernel` (kernel) is gone: it took 1.00 ms per step in BASELINE (-1.00 ms, -50% of the difference).\n"));
	pt_sb_free(&sb);
	pt_report_free(r);
	pt_summary_free(a);
	pt_summary_free(b);
}

/* Two layers' stacks differ only in module instance numbers: compared as one
 * function.  A monitor thread blocked in threading.py: wait runs as long as
 * the step: idle, never a finding. */
static void test_python_keys_and_waits(void **state)
{
	pt_summary *a = mk("a.json", -1, A_STEPS, 5), *b = mk("b.json", -1, B_STEPS, 5);
	const pt_rv *f;
	pt_report *r;

	(void)state;
	pat(a, "run.py: main|nn.Module: Layer_0|layer.py: forward", PT_C_PYTHON, PT_K_PYTHON, 5, 1.0, 5.0);
	pat(a, "run.py: main|nn.Module: Layer_1|layer.py: forward", PT_C_PYTHON, PT_K_PYTHON, 5, 1.0, 5.0);
	pat(a, "threading.py: _bootstrap|tqdm/_monitor.py: run|threading.py: wait", PT_C_PYTHON,
	    PT_K_PYTHON, 1, 50.0, 10.0);
	pat(b, "run.py: main|nn.Module: Layer_0|layer.py: forward", PT_C_PYTHON, PT_K_PYTHON, 5, 1.5, 7.5);
	pat(b, "run.py: main|nn.Module: Layer_1|layer.py: forward", PT_C_PYTHON, PT_K_PYTHON, 5, 1.5, 7.5);
	pat(b, "threading.py: _bootstrap|tqdm/_monitor.py: run|threading.py: wait", PT_C_PYTHON,
	    PT_K_PYTHON, 1, 60.0, 15.0);
	r = cmp(&a, 1, &b, 1);
	assert_string_equal(str(pt_rv_get(pt_report_root_c(r), "Compare"), "pairing"), "population");
	f = C(r, "findings");
	assert_int_equal(f->n, 1);
	assert_string_equal(str(nth(f, 0), "function"), "run.py: main|nn.Module: Layer|layer.py: forward");
	assert_float_equal(num(nth(f, 0), "delta_ms"), 1.0, 1e-9);
	assert_float_equal(num(nth(f, 0), "new_calls"), 2.0, 1e-9);
	/* the waiting thread's time is idle in the class table */
	assert_float_equal(num(nth(C(r, "classes"), 4), "baseline_ms"), 2.0, 1e-9);
	assert_string_equal(str(nth(C(r, "classes"), 4), "class"), "python");
	pt_report_free(r);
	pt_summary_free(a);
	pt_summary_free(b);
}

/* aten::mm a little slower from each of three call sites, each below the
 * noise: one finding for the frame, "in 3 stacks". */
static void test_frame_group(void **state)
{
	static const double ten[5] = { 10, 10, 10, 10, 10 }, ten2[5] = { 10.12, 10.12, 10.12, 10.12, 10.12 };
	static const char *const sites[3] = { "a.py: f|aten::mm", "b.py: g|aten::mm", "c.py: h|aten::mm" };
	pt_summary *a = mk("a.json", -1, ten, 5), *b = mk("b.json", -1, ten2, 5);
	const pt_rv *f;
	pt_report *r;
	int i;

	(void)state;
	for (i = 0; i < 3; i++) {
		pat(a, sites[i], PT_C_PYTHON, PT_K_CPU_OP, 5, 0.2, 1.0);
		pat(b, sites[i], PT_C_PYTHON, PT_K_CPU_OP, 5, 0.24, 1.2);
	}
	r = cmp(&a, 1, &b, 1);
	assert_float_equal(num(pt_rv_get(pt_report_root_c(r), "Compare"), "threshold_ms"), 0.05, 1e-12);
	f = C(r, "findings");
	assert_int_equal(f->n, 1);
	assert_string_equal(str(nth(f, 0), "function"), "aten::mm");
	assert_int_equal(pt_rv_get(nth(f, 0), "stacks")->i, 3);
	assert_float_equal(num(nth(f, 0), "delta_ms"), 0.12, 1e-9);
	assert_non_null(strstr(str(nth(f, 0), "explanation"),
			       "`aten::mm` (Python/CPU function, in 3 stacks) got slower: 0.600 -> 0.720 ms per step"));
	pt_report_free(r);
	pt_summary_free(a);
	pt_summary_free(b);
}

/* A pattern's per-step ms (the summary's step_ms). */
static void per_step(pt_summary *s, const double *v)
{
	pt_pattern *p = &s->patterns[s->npatterns - 1];

	p->step_ms = malloc(s->nsteps * sizeof(double));
	assert_non_null(p->step_ms);
	memcpy(p->step_ms, v, s->nsteps * sizeof(double));
	p->nstep_ms = s->nsteps;
}

static size_t count_scope(const pt_rv *f, const char *scope)
{
	size_t n = 0;

	for (const pt_rv *x = f ? f->child : NULL; x; x = x->next)
		n += !strcmp(str(x, "scope"), scope);
	return n;
}

/* Two slow steps of five: the whole step's spread grows (its noise would
 * hide anything below 10 ms), the function's own spread does not; the one
 * function that made them slow is the finding, the steady one is not. */
static void test_function_noise(void **state)
{
	static const double sa[5] = { 12.0, 12.1, 11.9, 12.0, 12.05 };
	static const double sb[5] = { 12.0, 12.1, 11.9, 22.0, 22.05 };
	static const double ga[5] = { 1.0, 1.01, 0.99, 1.0, 1.0 };
	static const double gb[5] = { 1.0, 1.01, 0.99, 11.0, 11.0 };
	static const double ka[5] = { 6.0, 6.02, 5.98, 6.0, 6.01 };
	static const double kb[5] = { 6.1, 6.12, 6.08, 6.1, 6.11 };
	pt_summary *a = mk("base.json", 0, sa, 5), *b = mk("new.json", 0, sb, 5);
	pt_report *r;
	const pt_rv *f, *x;

	(void)state;
	pat(a, "train.py: step|data.py: load", PT_C_PYTHON, PT_K_PYTHON, 5, 1.0, 5.0);
	per_step(a, ga);
	pat(a, "k_kernel1_1_1|32_1_1", PT_C_COMPUTE, PT_K_KERNEL, 5, 6.0, 30.0);
	per_step(a, ka);
	pat(b, "train.py: step|data.py: load", PT_C_PYTHON, PT_K_PYTHON, 5, 1.0, 25.0);
	b->patterns[0].total_ms = 25.0;
	per_step(b, gb);
	/* 6.0 -> 6.1 ms: beyond its own tiny spread, but 1.7% of it: drift */
	pat(b, "k_kernel1_1_1|32_1_1", PT_C_COMPUTE, PT_K_KERNEL, 5, 6.1, 30.5);
	per_step(b, kb);
	r = cmp(&a, 1, &b, 1);
	f = C(r, "findings");
	assert_int_equal(f->n, 1);
	x = nth(f, 0);
	assert_string_equal(str(x, "name"), "data.py: load");
	assert_float_equal(num(x, "delta_ms"), 4.0, 1e-9);
	/* its noise: its own spread, 1.4826 x MAD of NEW's 1, 1.01, 0.99, 11,
	 * 11 (the two slow steps do not count); below the floor, 0.5% of
	 * the 12 ms step, which is its threshold */
	assert_float_equal(num(x, "noise_ms"), 1.4826 * 0.02, 1e-9);
	assert_float_equal(num(x, "threshold_ms"), 0.06, 1e-9);
	/* NEW's p90 step holds the slow steps */
	assert_true(num(pt_rv_get(C(r, "new"), "step_ms"), "p90") > 20.0);
	assert_non_null(strstr(str(pt_rv_get(pt_report_root_c(r), "Compare"), "summary"),
			       "4.00 ms more on average (its median step did not change: the time "
			       "is in a few slow steps), 100% of it in `data.py: load` (+4.00 ms)."));
	pt_report_free(r);
	pt_summary_free(a);
	pt_summary_free(b);
}

/* A GEMM family replaced by another: each new tile variant alone is a
 * small change; together they are one new family, and the precision
 * hint says what moved. */
static void test_families(void **state)
{
	pt_summary *a = mk("base.json", 0, A_STEPS, 5), *b = mk("new.json", 0, B_STEPS, 5);
	static const char *const tc[3] = {
		"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4>(P)",
		"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align1>(P)",
		"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x128_32x3_tn_align4>(P)",
	};
	static const char *const sg[4] = { "volta_sgemm_128x64_nn", "volta_sgemm_128x128_tn",
					   "volta_sgemm_64x64_nt", "volta_sgemm_32x128_tn" };
	pt_report *r;
	const pt_rv *f, *x, *cmpv;
	size_t i;

	(void)state;
	/* what both runs share, so that they are one model */
	pat(a, "embedding_kernel1_1_1|32_1_1", PT_C_COMPUTE, PT_K_KERNEL, 5, 2.0, 10.0);
	pat(b, "embedding_kernel1_1_1|32_1_1", PT_C_COMPUTE, PT_K_KERNEL, 5, 2.0, 10.0);
	for (i = 0; i < 3; i++)
		pat(a, tc[i], PT_C_COMPUTE, PT_K_KERNEL, 5, 0.2, 1.0);
	for (i = 0; i < 4; i++)
		pat(b, sg[i], PT_C_COMPUTE, PT_K_KERNEL, 5, 0.65, 3.25);
	r = cmp(&a, 1, &b, 1);
	cmpv = pt_rv_get(pt_report_root_c(r), "Compare");
	f = C(r, "findings");
	/* the new family (+2.6 ms), then the one it replaced (-0.6 ms) */
	assert_int_equal(f->n, 2);
	x = nth(f, 0);
	assert_string_equal(str(x, "name"), "volta_sgemm_*");
	assert_string_equal(str(x, "change"), "appeared");
	assert_float_equal(num(x, "kernels"), 4, 0);
	assert_string_equal(str(x, "precision"), "fp32");
	assert_string_equal(str(x, "library"), "cublas");
	assert_float_equal(num(x, "delta_ms"), 2.6, 1e-9);
	x = nth(f, 1);
	assert_string_equal(str(x, "name"), "cutlass_80_tensorop_s1688gemm_*");
	assert_string_equal(str(x, "change"), "disappeared");
	assert_string_equal(str(x, "precision"), "tf32");
	assert_string_equal(str(cmpv, "hint"),
			    "the GEMMs run mostly in fp32 on CUDA cores in NEW (100% of their time), "
			    "in tf32 on tensor cores in BASELINE (100%): check autocast/AMP and "
			    "torch.backends.cuda.matmul.allow_tf32 (TF32 needs an Ampere or newer "
			    "GPU); the GEMM kernels are built for sm80 in BASELINE and volta in NEW: "
			    "another GPU");
	pt_report_free(r);
	pt_summary_free(a);
	pt_summary_free(b);
}

/* An annotation that lasts longer while owning no more (its thread waits
 * inside it while the GPU works): a span finding, said apart from the
 * owned-time accounting; and a collective that overlaps compute, found by
 * its running time, with what of it reached the step. */
static void test_spans_and_overlapped_collective(void **state)
{
	pt_summary *a = mk("base.json", 0, A_STEPS, 5), *b = mk("new.json", 0, B_STEPS, 5);
	pt_report *r;
	const pt_rv *f, *x;

	(void)state;
	pat(a, "## sdd ##", PT_C_PYTHON, PT_K_ANNOTATION, 5, 2.0, 0.5);
	pat(a, "gemm_kernel4_1_1|128_1_1", PT_C_COMPUTE, PT_K_KERNEL, 5, 2.0, 10.0);
	pat(a, "ncclKernel_AllReduce_RING_LL_Sum_float", PT_C_COMM, PT_K_COMM_KERNEL, 5, 1.0, 1.0);
	pat(b, "## sdd ##", PT_C_PYTHON, PT_K_ANNOTATION, 5, 8.0, 0.5);
	pat(b, "gemm_kernel4_1_1|128_1_1", PT_C_COMPUTE, PT_K_KERNEL, 5, 4.0, 20.0);
	/* 2x as long, owning no more: compute covers it */
	pat(b, "ncclKernel_AllReduce_RING_LL_Sum_float", PT_C_COMM, PT_K_COMM_KERNEL, 5, 2.0, 1.0);
	r = cmp(&a, 1, &b, 1);
	f = C(r, "findings");
	assert_int_equal(count_scope(f, "span"), 1);
	x = nth(f, 0);
	assert_string_equal(str(x, "scope"), "span");
	assert_float_equal(num(x, "delta_ms"), 6.0, 1e-9);
	assert_string_equal(str(nth(pt_rv_get(x, "spans"), 0), "function"), "## sdd ##");
	assert_true(strstr(str(x, "explanation"), "On the CPU side, an annotation lasts longer: "
				   "`## sdd ##` 2.00 -> 8.00 ms per step (+6.00 ms)") != NULL);
	x = nth(f, 1);
	assert_string_equal(str(x, "name"), "gemm_kernel");
	x = nth(f, 2);
	assert_string_equal(str(x, "name"), "ring allreduce");
	assert_float_equal(num(x, "baseline_running_ms"), 1.0, 1e-9);
	assert_float_equal(num(x, "new_running_ms"), 2.0, 1e-9);
	assert_float_equal(num(x, "delta_ms"), 0.0, 1e-9);
	assert_true(strstr(str(x, "explanation"), "got slower: 1.00 -> 2.00 ms per step running "
				   "(+1.00 ms; +0.000 ms of it in the step time, the rest overlaps "
				   "other work, 0% of the difference)") != NULL);
	/* the accounting names the owned changes; the span is said apart */
	assert_string_equal(str(pt_rv_get(pt_report_root_c(r), "Compare"), "summary"),
			    "NEW is 1.20x slower per step: 2.00 ms more, 100% of it in `gemm_kernel` "
			    "(+2.00 ms); on the CPU side `## sdd ##` lasts 6.00 ms longer per step.");
	pt_report_free(r);
	pt_summary_free(a);
	pt_summary_free(b);
}

/* A critical path on s of one function kept there: key of kind, ms on
 * the path in each step (the summary's "critical_path" "functions"). */
static void path(pt_summary *s, const char *key, int kind, const double *ms)
{
	pt_cpath *cp = calloc(1, sizeof(*cp));

	assert_non_null(cp);
	cp->nsteps = s->nsteps;
	cp->steps = calloc(s->nsteps, sizeof(*cp->steps));
	cp->funcs = calloc(1, sizeof(*cp->funcs));
	assert_true(cp->steps && cp->funcs);
	cp->nfuncs = 1;
	cp->funcs[0].key = strdup(key);
	cp->funcs[0].kind = (uint8_t)kind;
	cp->funcs[0].ms = malloc(s->nsteps * sizeof(double));
	assert_non_null(cp->funcs[0].ms);
	memcpy(cp->funcs[0].ms, ms, s->nsteps * sizeof(double));
	s->cpath = cp;
}

/* A collective 2.8x as long per call that owns no more of the step (compute
 * covers it): found by its running time; with its time on the critical
 * path 0.2 -> 2.2 ms per step and the step 2 ms longer, what it cost the
 * step is the what-if; with the step unchanged, it is weak and says it
 * overlaps other work. */
static void test_path_growth(void **state)
{
	static const double run_a[5] = { 1, 1, 1, 1, 1 }, run_b[5] = { 2.8, 2.8, 2.8, 2.8, 2.8 };
	static const double path_a[5] = { 0.2, 0.2, 0.2, 0.2, 0.2 };
	static const double path_b[5] = { 2.2, 2.2, 2.2, 2.2, 2.2 };
	const char *ar = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)";
	pt_summary *a, *b;
	pt_report *r;
	const pt_rv *f, *x;
	int waited;

	(void)state;
	for (waited = 1; waited >= 0; waited--) {
		a = mk("base.json", 0, A_STEPS, 5);
		b = mk("new.json", 0, waited ? B_STEPS : A_STEPS, 5);
		pat(a, ar, PT_C_COMM, PT_K_COMM_KERNEL, 5, 1.0, 0.5);
		per_step(a, run_a);
		pat(b, ar, PT_C_COMM, PT_K_COMM_KERNEL, 5, 2.8, 0.5);
		per_step(b, run_b);
		path(a, ar, PT_K_COMM_KERNEL, path_a);
		path(b, ar, PT_K_COMM_KERNEL, waited ? path_b : path_a);
		r = cmp(&a, 1, &b, 1);
		f = C(r, "findings");
		assert_int_equal(f->n, 1);
		x = nth(f, 0);
		assert_string_equal(str(x, "name"), "ring allreduce");
		assert_string_equal(str(x, "baseline_kernel"), ar);
		assert_float_equal(num(x, "delta_ms"), 0.0, 1e-9);
		assert_float_equal(num(x, "baseline_running_ms"), 1.0, 1e-9);
		assert_float_equal(num(x, "new_running_ms"), 2.8, 1e-9);
		assert_float_equal(num(x, "baseline_path_ms"), 0.2, 1e-9);
		assert_float_equal(num(x, "new_path_ms"), waited ? 2.2 : 0.2, 1e-9);
		assert_true(strstr(str(x, "explanation"), "`ring allreduce` (collective: "
				   "`ncclKernel_AllReduce_RING_LL_Sum_float`) got slower: 1.00 -> 2.80 ms "
				   "per step running (+1.80 ms), 1 call per step, 2.80x as long per call; on "
				   "the critical path ") != NULL);
		if (waited) {
			/* the path grew 2.0 ms, the step 2.0 (12.01 against 10.01) */
			assert_float_equal(num(x, "path_cost_ms"), 2.0, 1e-9);
			assert_float_equal(num(pt_rv_get(x, "what if"), "step (ms)"), 10.01, 1e-9);
			assert_float_equal(num(pt_rv_get(x, "what if"), "instead of (ms)"), 12.01, 1e-9);
			assert_string_equal(str(pt_rv_get(x, "confidence"), "level"), "strong");
			assert_true(strstr(str(x, "explanation"), "0.200 -> 2.20 ms per step (+2.00 ms): "
					   "if it took as long as in BASELINE, a step would take 10.0 ms "
					   "instead of 12.0 ms (100% of the difference).") != NULL);
			assert_true(strstr(str(pt_rv_get(pt_report_root_c(r), "Compare"), "summary"),
					   "`ring allreduce` lengthens the critical path by 2.00 ms per "
					   "step (2.80x as long per call)") != NULL);
		} else {
			assert_float_equal(num(x, "path_cost_ms"), 0.0, 1e-9);
			assert_null(pt_rv_get(x, "what if"));
			assert_string_equal(str(pt_rv_get(x, "confidence"), "level"), "weak");
			assert_true(strstr(str(x, "explanation"), "0.200 -> 0.200 ms per step (+0.000 ms): "
					   "it overlaps other work, the step does not wait for it.") != NULL);
		}
		pt_report_free(r);
		pt_summary_free(a);
		pt_summary_free(b);
	}
}

/* One finding per cause: a frame's finding folds into its ancestor's when
 * both changed the same way (the ancestor's change takes in the frame's);
 * with 2 steps per worker the whole step's noise is the threshold. */
static void test_fold_frames(void **state)
{
	pt_summary *a = base_run(), *b = mk("new.json", 0, A_STEPS, 5);
	pt_report *r;
	const pt_rv *f, *x;

	(void)state;
	pat(a, "train.py: step|load.py: next", PT_C_PYTHON, PT_K_PYTHON, 5, 1.0, 5.0);
	pat(a, "train.py: step|load.py: next|aten::copy_", PT_C_PYTHON, PT_K_PYTHON, 5, 0.5, 2.5);
	pat(b, "gemm_kernel4_1_1|128_1_1", PT_C_COMPUTE, PT_K_KERNEL, 5, 2.0, 10.0);
	pat(b, "relu_kernel(float*)2_1_1|64_1_1", PT_C_COMPUTE, PT_K_KERNEL, 5, 1.0, 5.0);
	pat(b, "train.py: step|model.py: forward", PT_C_PYTHON, PT_K_PYTHON, 5, 3.0, 15.0);
	r = cmp(&a, 1, &b, 1);
	f = C(r, "findings");
	assert_int_equal(f->n, 1);
	x = nth(f, 0);
	assert_string_equal(str(x, "name"), "load.py: next");
	assert_string_equal(str(x, "change"), "disappeared");
	assert_float_equal(num(x, "delta_ms"), -1.5, 1e-9);
	assert_float_equal(num(x, "frames_inside"), 1, 0);
	assert_float_equal(num(x, "frames_inside_ms"), -0.5, 1e-9);
	assert_non_null(strstr(str(x, "explanation"), "(-1.50 ms with the 1 frame inside it"));
	pt_report_free(r);
	pt_summary_free(a);
	pt_summary_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slower_and_new),
		cmocka_unit_test(test_identical_and_below_noise),
		cmocka_unit_test(test_pairs),
		cmocka_unit_test(test_pairs_jitter),
		cmocka_unit_test(test_unrelated),
		cmocka_unit_test(test_no_readable_side),
		cmocka_unit_test(test_text_first_line),
		cmocka_unit_test(test_python_keys_and_waits),
		cmocka_unit_test(test_frame_group),
		cmocka_unit_test(test_function_noise),
		cmocka_unit_test(test_families),
		cmocka_unit_test(test_spans_and_overlapped_collective),
		cmocka_unit_test(test_fold_frames),
		cmocka_unit_test(test_path_growth),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
