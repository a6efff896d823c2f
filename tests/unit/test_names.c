/*
 * test_names.c - unit tests for src/report/names.c and the text report for
 * people (text_people.c): short names of real DLRM kernel keys, stacks and
 * CUDA calls; different keys stay different after shortening and fitting;
 * control characters escaped; a small report rendered with ranks, units,
 * tables and every line within the width.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/keys.h"
#include "model/store.h"
#include "report/names.h"
#include "report/report.h"

/* Kernel keys from tests/data/dlrm (name + grid + "|" + block). */
static const char *const sqrt_k =
	"void at::native::vectorized_elementwise_kernel<4, at::native::sqrt_kernel_cuda(at::"
	"TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const"
	"::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::native::sqrt_kernel_cuda(at"
	"::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() "
	"const::{lambda(float)#1}, at::detail::Array<char*, 2>)1_1_1|128_1_1";
static const char *const fill_k =
	"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>, at::"
	"detail::Array<char*, 1> >(int, at::native::FillFunctor<int>, at::detail::Array<char*, 1>)"
	"1_1_1|128_1_1";
static const char *const nccl_k =
	"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)";

static void test_short_single(void **state)
{
	char b[512];

	assert_string_equal(pt_name_short(sqrt_k, b, sizeof(b)),
			    "vectorized_elementwise_kernel<\xe2\x80\xa6>");
	assert_string_equal(pt_name_short(nccl_k, b, sizeof(b)),
			    "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t");
	assert_string_equal(pt_name_short("cudaLaunchKernel", b, sizeof(b)), "cudaLaunchKernel");
	assert_string_equal(pt_name_short("aten::mm", b, sizeof(b)), "aten::mm");
	assert_string_equal(pt_name_short("Memcpy DtoD (Device -> Device)", b, sizeof(b)),
			    "Memcpy DtoD (Device -> Device)");
	assert_string_equal(pt_name_short("## forward ##|aten::linear|aten::addmm", b, sizeof(b)),
			    "aten::addmm \xe2\x86\x90 aten::linear \xe2\x86\x90 ## forward ##");
	assert_string_equal(pt_name_short("/w/train.py: <module>|/w/train.py: step|<built-in function "
					  "sleep>", b, sizeof(b)),
			    "<built-in function sleep> \xe2\x86\x90 train.py: step \xe2\x86\x90 "
			    "train.py: <module>");
	assert_string_equal(pt_name_short("<built-in function sleep>", b, sizeof(b)),
			    "<built-in function sleep>");
	assert_string_equal(pt_name_short("void (anonymous namespace)::softmax_warp<float>(float*)"
					  "4_1_1|128_1_1", b, sizeof(b)), "softmax_warp<\xe2\x80\xa6>");
	/* control characters are shown, not sent to the terminal */
	assert_string_equal(pt_name_escape("a\x1b[2Jb\n", b, sizeof(b)), "a\\x1b[2Jb\\x0a");
}

static void test_short_set_distinct(void **state)
{
	const char *keys[] = { sqrt_k, fill_k, nccl_k,
			       "void at::native::reduce_kernel<128, 4>(int)1_1_1|32_4_1",
			       "void at::native::reduce_kernel<512, 1>(int)1_1_1|32_4_1",
			       "void k<1>(int)1_1_1|128_1_1", "void k<1>(int)2_1_1|128_1_1" };
	size_t n = sizeof(keys) / sizeof(keys[0]), i, j;
	char *out[sizeof(keys) / sizeof(keys[0])];

	assert_int_equal(pt_name_short_set(keys, n, 4096, out), 0);
	assert_string_equal(out[0], "vectorized_elementwise_kernel<\xe2\x80\xa6sqrt_kernel_cuda"
				    "\xe2\x80\xa6>");
	assert_string_equal(out[1], "vectorized_elementwise_kernel<\xe2\x80\xa6"
				    "FillFunctor\xe2\x80\xa6>");
	assert_string_equal(out[2], "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t");
	assert_string_equal(out[3], "reduce_kernel<\xe2\x80\xa6" "128\xe2\x80\xa6>");
	assert_string_equal(out[4], "reduce_kernel<\xe2\x80\xa6" "512\xe2\x80\xa6>");
	/* same name, different launch shape: the shape tells them apart */
	assert_string_equal(out[5], "k<\xe2\x80\xa6> [1_1_1|128_1_1]");
	assert_string_equal(out[6], "k<\xe2\x80\xa6> [2_1_1|128_1_1]");
	for (i = 0; i < n; i++)
		free(out[i]);
	/* fitted to 30 columns: still all different, none wider */
	assert_int_equal(pt_name_short_set(keys, n, 30, out), 0);
	for (i = 0; i < n; i++) {
		assert_true(pt_name_width(out[i]) <= 30);
		for (j = 0; j < i; j++)
			assert_string_not_equal(out[i], out[j]);
	}
	for (i = 0; i < n; i++)
		free(out[i]);
}

/* One kernel in two launch shapes next to another: the name word first,
 * then the shape where only that differs. */
static void test_short_set_rounds(void **state)
{
	char sqrt2[2048];
	const char *keys[3];
	char *out[3];
	size_t i;

	snprintf(sqrt2, sizeof(sqrt2), "%.*s367_1_1|128_1_1", (int)(strlen(sqrt_k) - 13), sqrt_k);
	keys[0] = sqrt_k;
	keys[1] = sqrt2;
	keys[2] = fill_k;
	assert_int_equal(pt_name_short_set(keys, 3, 4096, out), 0);
	assert_string_equal(out[0], "vectorized_elementwise_kernel<\xe2\x80\xa6sqrt_kernel_cuda"
				    "\xe2\x80\xa6> [1_1_1|128_1_1]");
	assert_string_equal(out[1], "vectorized_elementwise_kernel<\xe2\x80\xa6sqrt_kernel_cuda"
				    "\xe2\x80\xa6> [367_1_1|128_1_1]");
	assert_string_equal(out[2], "vectorized_elementwise_kernel<\xe2\x80\xa6"
				    "FillFunctor\xe2\x80\xa6>");
	for (i = 0; i < 3; i++)
		free(out[i]);
}

/* The sentence forms of a key (the text report's findings, the Python
 * section's sentences), exact on real keys of tests/data/gloo. */
static void test_leaf_forms(void **state)
{
	char b[512];

	(void)state;
	assert_string_equal(pt_name_leaf("/work/main/examples/train_gloo.py: <module>|/work/main/"
					 "examples/train_gloo.py: main|/work/main/examples/train_gloo.py: "
					 "load_batch|<built-in function sleep>", b, sizeof(b)),
			    "<built-in function sleep> in train_gloo.py: load_batch");
	assert_string_equal(pt_name_leaf("aten::linear|aten::addmm", b, sizeof(b)), "aten::addmm");
	assert_string_equal(pt_name_leaf(nccl_k, b, sizeof(b)), "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t");
	assert_string_equal(pt_name_called_from("train_gloo.py: <module>|train_gloo.py: main|"
						"train_gloo.py: slow_augment", b, sizeof(b)),
			    "train_gloo.py: slow_augment (called from train_gloo.py: main)");
	assert_string_equal(pt_name_called_from("aten::mm", b, sizeof(b)), "aten::mm");
}

/* report.json's "display"."short" (short.c): the keys the page shows, from
 * the sections, the heatmap, the findings and the critical path, each once,
 * shortened by names.c; a section's own members are not functions. */
static void test_short_map(void **state)
{
	pt_report *r = pt_report_new();
	pt_rv *root, *d, *o, *a, *e;
	const pt_rv *sh;

	(void)state;
	assert_non_null(r);
	root = pt_report_root(r);
	o = pt_rv_obj(r, root, "GPU Compute");
	a = pt_rv_obj(r, o, "major_kernel_executions");
	pt_rv_num(r, a, sqrt_k, 1);
	o = pt_rv_obj(r, root, "Python functions");
	pt_rv_num(r, o, "Optimizer.step#SGD.step|aten::_foreach_add_", 1);
	pt_rv_obj(r, o, "abnormal_workers");
	o = pt_rv_obj(r, root, "CUDA Runtime");
	pt_rv_num(r, o, "cudaLaunchKernel", 1);
	o = pt_rv_obj(r, pt_rv_obj(r, root, "Communication"), "nccl");
	pt_rv_num(r, o, nccl_k, 1);
	e = pt_rv_obj(r, pt_rv_arr(r, root, "findings"), NULL);
	pt_rv_str(r, e, "function", "aten::linear|aten::addmm");
	e = pt_rv_obj(r, pt_rv_arr(r, pt_rv_obj(r, pt_rv_obj(r, pt_rv_obj(r, root, "Critical path"),
							    "workers"), "w0"), "steps"), NULL);
	pt_rv_str(r, pt_rv_obj(r, pt_rv_arr(r, e, "functions"), NULL), "name", "Memcpy HtoD (Host -> Device)");
	d = pt_rv_obj(r, root, "display");
	e = pt_rv_obj(r, pt_rv_arr(r, pt_rv_obj(r, d, "heatmap"), "functions"), NULL);
	pt_rv_str(r, e, "key", "aten::linear|aten::addmm");
	assert_int_equal(pt_report_short_names(r, d), 0);
	sh = pt_rv_get(d, "short");
	assert_non_null(sh);
	assert_int_equal(sh->n, 6);
	assert_string_equal(pt_rv_get(sh, sqrt_k)->str, "vectorized_elementwise_kernel<\xe2\x80\xa6>");
	assert_string_equal(pt_rv_get(sh, "Optimizer.step#SGD.step|aten::_foreach_add_")->str,
			    "aten::_foreach_add_ \xe2\x86\x90 Optimizer.step#SGD.step");
	assert_string_equal(pt_rv_get(sh, "cudaLaunchKernel")->str, "cudaLaunchKernel");
	assert_string_equal(pt_rv_get(sh, nccl_k)->str, "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t");
	assert_string_equal(pt_rv_get(sh, "aten::linear|aten::addmm")->str,
			    "aten::addmm \xe2\x86\x90 aten::linear");
	assert_string_equal(pt_rv_get(sh, "Memcpy HtoD (Host -> Device)")->str,
			    "Memcpy HtoD (Host -> Device)");
	assert_null(pt_rv_get(sh, "abnormal_workers"));
	pt_report_free(r);
}

static void test_fit(void **state)
{
	char b[64];

	assert_string_equal(pt_name_fit("abcdefghij", 10, b, sizeof(b)), "abcdefghij");
	assert_string_equal(pt_name_fit("abcdefghijk", 10, b, sizeof(b)), "abcde\xe2\x80\xa6hijk");
	assert_int_equal(pt_name_width("\xc2\xb5s \xe2\x86\x90"), 4);
}

/* A two-worker report shaped like diagnose's. */
static pt_report *small_report(void)
{
	pt_report *r = pt_report_new();
	pt_rv *root = pt_report_root(r), *s, *k, *ws, *w, *d, *dw, *a;

	s = pt_rv_obj(r, root, "GPU Compute");
	a = pt_rv_arr(r, s, "min/median/max GPU utilization (in [0,1])");
	pt_rv_num(r, a, NULL, 0.25);
	pt_rv_num(r, a, NULL, 0.375);
	pt_rv_num(r, a, NULL, 0.5);
	k = pt_rv_obj(r, pt_rv_obj(r, s, "major_kernel_executions"), sqrt_k);
	pt_rv_num(r, k, "median cost per execution (ms)", 0.0031);
	pt_rv_num(r, k, "bottleneck ratio (in [0,1])", 0.002185);
	k = pt_rv_obj(r, pt_rv_obj(r, root, "CUDA Runtime"), "cudaLaunchKernel");
	pt_rv_num(r, k, "avg bottleneck ratio (in [0,1])", 0.0765);
	pt_rv_num(r, pt_rv_obj(r, k, "abnormal_workers"), "w1.json", 0.2117);
	pt_rv_obj(r, root, "Python functions");
	ws = pt_rv_obj(r, root, "workers");
	w = pt_rv_obj(r, ws, "w0.json");
	pt_rv_int(r, w, "rank", 0);
	pt_rv_int(r, pt_rv_arr(r, w, "steps"), NULL, 10);
	pt_rv_num(r, w, "window (ms)", 12.5);
	pt_rv_num(r, w, "gpu utilization", 0.5);
	w = pt_rv_obj(r, ws, "w1.json");
	pt_rv_int(r, w, "rank", 1);
	pt_rv_int(r, pt_rv_arr(r, w, "steps"), NULL, 10);
	pt_rv_num(r, w, "window (ms)", 20.0);
	pt_rv_num(r, w, "gpu utilization", 0.25);
	{
		static const char *const w1[] = { "w1.json" };
		static const char *const args[] = {
			"cudaLaunchKernel", "", "kernel launches are slower on this worker (CPU "
			"contention, a throttled CPU or a busy driver)" };
		static const pt_metric m[] = { { "bottleneck ratio", 0.2117, PT_UNIT_SHARE },
					       { "others", 0.057, PT_UNIT_SHARE },
					       { "ms per step", 2.76, PT_UNIT_MS_STEP } };
		/* typed: the text report names the worker by its rank */
		pt_finding f = {
			.category = "CUDA Runtime", .workers = w1, .nworkers = 1,
			.function = "cudaLaunchKernel", .value = 0.2117, .others = 0.057,
			.impact_ms = 27.6, .cause = PT_CAUSE_SHARE, .metrics = m, .nmetrics = 3,
			.args = args, .nargs = 3,
		};
		pt_report_add_finding(r, &f);
	}
	d = pt_rv_obj(r, root, "display");
	dw = pt_rv_obj(r, d, "workers");
	w = pt_rv_obj(r, dw, "w0.json");
	pt_rv_num(r, pt_rv_arr(r, w, "step_ms"), NULL, 12.5);
	pt_rv_num(r, pt_rv_obj(r, w, "class_ms"), "compute", 12.5);
	w = pt_rv_obj(r, dw, "w1.json");
	pt_rv_num(r, pt_rv_arr(r, w, "step_ms"), NULL, 20.0);
	pt_rv_num(r, pt_rv_obj(r, w, "class_ms"), "idle", 20.0);
	assert_false(pt_report_oom(r));
	return r;
}

static void test_text_people(void **state)
{
	static const char expect[] =
		"PerfTracker report: 2 workers, step 10 profiled\n"
		"  Step time        min 12.5 ms (rank 0), median 16.2 ms, max 20.0 ms (rank 1)\n"
		"  Time goes to     idle 61.5%, GPU compute 38.5%\n"
		"  GPU utilization  min 25.0% (rank 1), median 37.5%, max 50.0% (rank 0)\n"
		"\n"
		"Findings (1, most time lost first)\n"
		"  1. rank 1 spends 21.2% of its time in cudaLaunchKernel, other workers 5.7%: "
		"kernel launches are slower on this worker\n"
		"     (CPU contention, a throttled CPU or a busy driver) (about 2.76 ms per step)\n"
		"\n"
		"GPU Compute\n"
		"  min/median/max GPU utilization: 25.0% / 37.5% / 50.0%\n"
		"  major kernel executions (1)\n"
		"    name                              median per exec  bottleneck\n"
		"    vectorized_elementwise_kernel<\xe2\x80\xa6>          3.10 \xc2\xb5s       0.22%\n"
		"\n"
		"CUDA Runtime (1)\n"
		"  name              avg bottleneck ratio  abnormal\n"
		"  cudaLaunchKernel                 7.65%  rank 1 21.2%\n"
		"\n"
		"Python functions: nothing to report\n";
	pt_report *r = small_report();
	pt_text_opts o;
	pt_sb sb = {0};
	char *line, *save = NULL;

	pt_text_opts_default(&o);
	pt_report_text_people(r, &o, &sb);
	assert_false(sb.oom);
	assert_string_equal(sb.buf, expect);
	/* a narrow terminal: every line still fits */
	pt_sb_reset(&sb);
	o.width = 50;
	pt_report_text_people(r, &o, &sb);
	for (line = strtok_r(sb.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		assert_true(pt_name_width(line) < 50);
	pt_sb_free(&sb);
	pt_report_free(r);
}

/* Two jobs in one folder (both have a rank 0): workers by id; a Unix time
 * member ("created") as a UTC date; control characters escaped. */
static void test_text_duplicate_ranks(void **state)
{
	pt_report *r = pt_report_new();
	pt_rv *root = pt_report_root(r), *ws, *w, *tr;
	pt_sb sb = {0};

	tr = pt_rv_obj(r, root, "trigger");
	pt_rv_str(r, tr, "reason", "slow\x1b[2J job");
	pt_rv_int(r, tr, "created", 1796137249);
	ws = pt_rv_obj(r, root, "workers");
	w = pt_rv_obj(r, ws, "a_0_1.json");
	pt_rv_int(r, w, "rank", 0);
	w = pt_rv_obj(r, ws, "b_0_2.json");
	pt_rv_int(r, w, "rank", 0);
	{
		pt_finding f = { .category = "Steps", .explanation = "worker b_0_2.json is slow" };
		pt_report_add_finding(r, &f);
	}
	pt_report_text_people(r, NULL, &sb);
	assert_false(sb.oom);
	assert_non_null(strstr(sb.buf, "  1. worker b_0_2.json is slow\n"));
	assert_non_null(strstr(sb.buf, "  created: 2026-12-01 "));
	assert_non_null(strstr(sb.buf, "  reason: slow\\x1b[2J job\n"));
	assert_null(strstr(sb.buf, "\x1b"));
	pt_sb_free(&sb);
	pt_report_free(r);
}

/* The launch shape comes off a kernel key, and only a whole one. */
static void test_key_strip_shape(void **state)
{
	const char *k = "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t7_16_1|128_1_1";

	(void)state;
	assert_int_equal(pt_key_strip_shape(k, strlen(k)), strlen("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t"));
	assert_int_equal(pt_key_strip_shape("f7_16|128_1_1", 13), 13);
	assert_int_equal(pt_key_strip_shape("cudaLaunchKernel", 16), 16);
	assert_int_equal(pt_key_strip_shape("", 0), 0);
}

/* The helpers every sentence shares (diagnose, the text report). */
static void test_sentence_helpers(void **state)
{
	char b[160];

	(void)state;
	assert_string_equal(pt_fmt_ms(0, b, sizeof(b)), "0 ms");
	assert_string_equal(pt_fmt_ms(12.34, b, sizeof(b)), "12.3 ms");
	assert_string_equal(pt_fmt_ms(-123.4, b, sizeof(b)), "-123 ms");
	assert_string_equal(pt_fmt_ms(999.4, b, sizeof(b)), "999 ms");
	assert_string_equal(pt_fmt_ms(999.5, b, sizeof(b)), "1.00 s");
	assert_string_equal(pt_fmt_ms(0.0045, b, sizeof(b)), "4.50 \xc2\xb5s");
	assert_string_equal(pt_fmt_ms(0.0000005, b, sizeof(b)), "0.50 ns");
	assert_string_equal(pt_name_sentence("a.py(1): f|g.py(2): h", PT_C_PYTHON, b, sizeof(b)),
			    "g.py(2): h");
	assert_string_equal(pt_name_sentence("void at::native::elementwise_kernel<128, 4>(int) "
					     "80_1_1|128_1_1", PT_C_COMPUTE, b, sizeof(b)),
			    "at::native::elementwise_kernel");
	assert_string_equal(pt_name_sentence("(anonymous namespace)::k(float*)", PT_C_COMPUTE, b,
					     sizeof(b)),
			    "(anonymous namespace)::k");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_strip_shape),
		cmocka_unit_test(test_sentence_helpers),
		cmocka_unit_test(test_short_single),
		cmocka_unit_test(test_short_set_distinct),
		cmocka_unit_test(test_short_set_rounds),
		cmocka_unit_test(test_fit),
		cmocka_unit_test(test_short_map),
		cmocka_unit_test(test_leaf_forms),
		cmocka_unit_test(test_text_people),
		cmocka_unit_test(test_text_duplicate_ranks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
