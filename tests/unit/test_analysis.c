/*
 * test_analysis.c - unit tests for the analysis stage (src/analysis) on
 * hand-built pt_stores, no reader involved: the window, the priority rule
 * and equal sharing (overlapping kernels, comm under compute, memory under
 * compute, runtime inside ops), deepest-frame ownership of nested Python
 * frames, call-stack keys, clipping to the step window, idle time,
 * percentiles/MAD (numpy "linear"), bandwidths, worker names, radix sorts.
 * Times in the tests are µs; the store holds ns.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "analysis/analysis.h"
#include "model/commkind.h"
#include "analysis/stats.h"
#include "analysis/summary.h"
#include "util/xalloc.h"

#include "storefx.h"

/* Equal to 1e-12 relative (or absolute near 0): sums of binary fractions. */
#define assert_near(a, b)                                                               \
	do {                                                                            \
		double a_ = (a), b_ = (b);                                              \
		if (!(fabs(a_ - b_) <= 1e-12 * fmax(1.0, fmax(fabs(a_), fabs(b_)))))   \
			fail_msg("%s = %.17g, want %.17g", #a, a_, b_);                 \
	} while (0)

static void ev_full(fx *f, int kind, uint32_t lane, int64_t ts_us, int64_t dur_us, const char *name,
		    const char *stack, uint64_t bytes, uint16_t group)
{
	fx_event(f, kind, lane, ts_us, dur_us, name, stack, bytes, group, 0);
}

static void ev(fx *f, int kind, uint32_t lane, int64_t ts_us, int64_t dur_us, const char *name)
{
	ev_full(f, kind, lane, ts_us, dur_us, name, NULL, 0, 0);
}

static void step(fx *f, int64_t n, int64_t ts_us, int64_t dur_us)
{
	assert_int_equal(pt_store_add_step(&f->st, n, ts_us * US, dur_us * US), PT_OK);
}

static pt_summary *build_opt(fx *f, const pt_summary_options *o)
{
	pt_error err;
	pt_summary *s;

	pt_error_clear(&err);
	s = pt_summary_build(&f->st, "/x/host-a_3_4242.json", o, &err);
	if (!s)
		fail_msg("build failed: %s", err.msg);
	return s;
}

static pt_summary *build(fx *f)
{
	pt_summary_options o;

	pt_summary_options_default(&o);
	o.min_python_ratio = 0; /* keep every stack in these small cases */
	return build_opt(f, &o);
}

static const pt_pattern *find(const pt_summary *s, int cls, const char *key)
{
	size_t i;

	for (i = 0; i < s->npatterns; i++)
		if (s->patterns[i].cls == cls && !strcmp(s->patterns[i].key, key))
			return &s->patterns[i];
	return NULL;
}

static const pt_pattern *get(const pt_summary *s, int cls, const char *key)
{
	const pt_pattern *p = find(s, cls, key);

	if (!p)
		fail_msg("no %s pattern '%s'", pt_class_name(cls), key);
	return p;
}

/* Every class total sums to the window; the patterns' owned time sums to
 * the non-idle time (when nothing was filtered). */
static void check_sums(const pt_summary *s)
{
	double sum = 0, own = 0;
	size_t i;
	int c;

	for (c = 0; c < PT_C_COUNT; c++)
		sum += s->class_ms[c];
	assert_near(sum, s->window_ms);
	for (i = 0; i < s->npatterns; i++)
		own += s->patterns[i].bottleneck;
	assert_near(own * s->window_ms, s->window_ms - s->class_ms[PT_C_IDLE]);
}

/* ---- the window -------------------------------------------------------- */

static void test_window_events(void **state)
{
	fx *f = *state;
	pt_window w;

	pt_window_find(&f->st, &w);
	assert_int_equal(w.start, 0);
	assert_int_equal(w.end, 0);
	ev(f, PT_K_KERNEL, f->gpu, 30, 10, "k");
	ev(f, PT_K_CPU_OP, f->cpu, 10, 5, "op");
	ev(f, PT_K_RUNTIME, f->cpu, 12, 50, "rt");
	pt_window_find(&f->st, &w);
	assert_int_equal(w.from_steps, 0);
	assert_int_equal(w.start, 10 * US);
	assert_int_equal(w.end, 62 * US);
}

static void test_window_steps(void **state)
{
	fx *f = *state;
	pt_window w;

	ev(f, PT_K_KERNEL, f->gpu, 0, 1000, "k");
	step(f, 8, 300, 100);
	step(f, 7, 200, 100);
	pt_window_find(&f->st, &w);
	assert_int_equal(w.from_steps, 1);
	assert_int_equal(w.start, 200 * US);
	assert_int_equal(w.end, 400 * US);
}

static void test_empty_store(void **state)
{
	fx *f = *state;
	pt_summary *s = build(f);

	assert_near(s->window_ms, 0);
	assert_near(s->gpu_util, 0);
	assert_int_equal(s->npatterns, 0);
	assert_int_equal(s->nevents, 0);
	pt_summary_free(s);
}

/* ---- the priority rule ------------------------------------------------- */

/* Two kernels on two streams overlapping by 20 µs share it: 30 µs each;
 * 40 µs of the 100 µs step are idle. */
static void test_overlapping_kernels_share(void **state)
{
	fx *f = *state;
	const pt_pattern *a, *b;
	pt_summary *s;

	step(f, 1, 0, 100);
	ev(f, PT_K_KERNEL, f->gpu, 0, 40, "A");
	ev(f, PT_K_KERNEL, f->gpu2, 20, 40, "B");
	s = build(f);
	assert_int_equal(s->window_from_steps, 1);
	assert_near(s->window_ms, 0.1);
	a = get(s, PT_C_COMPUTE, "A");
	b = get(s, PT_C_COMPUTE, "B");
	assert_near(a->bottleneck, 0.3);
	assert_near(b->bottleneck, 0.3);
	assert_near(a->exec_ratio, 0.4);
	assert_near(a->total_ms, 0.04);
	assert_int_equal(a->count, 1);
	assert_int_equal(a->kind, PT_K_KERNEL);
	assert_near(s->gpu_util, 0.6);
	assert_near(s->class_ms[PT_C_COMPUTE], 0.06);
	assert_near(s->class_ms[PT_C_IDLE], 0.04);
	check_sums(s);
	pt_summary_free(s);
}

/* Three kernels over the same 30 µs own a third each. */
static void test_three_way_share(void **state)
{
	fx *f = *state;
	pt_summary *s;

	ev(f, PT_K_KERNEL, f->gpu, 0, 30, "A");
	ev(f, PT_K_KERNEL, f->gpu2, 0, 30, "B");
	ev(f, PT_K_KERNEL, f->gpu2, 0, 30, "C");
	s = build(f);
	assert_near(get(s, PT_C_COMPUTE, "A")->bottleneck, 1.0 / 3);
	assert_near(get(s, PT_C_COMPUTE, "C")->bottleneck, 1.0 / 3);
	assert_near(s->gpu_util, 1);
	check_sums(s);
	pt_summary_free(s);
}

/* An NCCL kernel under a compute kernel only owns what is not covered;
 * both count for GPU utilisation; a CPU collective is communication but
 * not GPU time, and the CPU ops inside it own nothing. */
static void test_comm_under_compute(void **state)
{
	fx *f = *state;
	const pt_pattern *p;
	pt_summary *s;

	step(f, 1, 0, 100);
	ev(f, PT_K_COMM_KERNEL, f->gpu2, 0, 50, "ncclKernel_AllReduce");
	ev(f, PT_K_KERNEL, f->gpu, 10, 20, "gemm");
	ev(f, PT_K_CPU_COMM, f->cpu, 60, 10, "nccl:all_reduce");
	ev(f, PT_K_CPU_OP, f->cpu, 62, 2, "aten::empty");
	s = build(f);
	assert_near(get(s, PT_C_COMM, "ncclKernel_AllReduce")->bottleneck, 0.3);
	assert_near(get(s, PT_C_COMPUTE, "gemm")->bottleneck, 0.2);
	p = get(s, PT_C_COMM, "nccl:all_reduce");
	assert_near(p->bottleneck, 0.1);
	assert_int_equal(p->kind, PT_K_CPU_COMM);
	/* the collective is a frame: its child's key extends it */
	p = get(s, PT_C_PYTHON, "nccl:all_reduce|aten::empty");
	assert_near(p->bottleneck, 0);
	assert_near(p->exec_ratio, 0.02);
	/* no Python pattern for the collective itself */
	assert_null(find(s, PT_C_PYTHON, "nccl:all_reduce"));
	assert_near(s->gpu_util, 0.5);
	assert_near(s->class_ms[PT_C_COMM], 0.04);
	assert_near(s->class_ms[PT_C_COMPUTE], 0.02);
	assert_near(s->class_ms[PT_C_IDLE], 0.04);
	check_sums(s);
	pt_summary_free(s);
}

/* memcpy is above runtime and below compute; it is not GPU utilisation. */
static void test_memory_between(void **state)
{
	fx *f = *state;
	pt_summary *s;

	ev(f, PT_K_MEMCPY, f->gpu, 0, 20, "Memcpy HtoD (Pageable -> Device)");
	ev(f, PT_K_KERNEL, f->gpu2, 10, 20, "k");
	ev(f, PT_K_RUNTIME, f->cpu, 0, 40, "cudaMemcpyAsync");
	s = build(f);
	assert_near(s->window_ms, 0.04);
	assert_near(get(s, PT_C_MEMORY, "Memcpy HtoD (Pageable -> Device)")->bottleneck, 0.25);
	assert_near(get(s, PT_C_COMPUTE, "k")->bottleneck, 0.5);
	assert_near(get(s, PT_C_RUNTIME, "cudaMemcpyAsync")->bottleneck, 0.25);
	assert_near(get(s, PT_C_RUNTIME, "cudaMemcpyAsync")->exec_ratio, 1);
	assert_near(s->gpu_util, 0.5);
	check_sums(s);
	pt_summary_free(s);
}

/* Nested frames: the deepest active frame on a thread owns the time; a
 * runtime call inside an op takes its span; two threads' frames share. */
static void test_nested_python_frames(void **state)
{
	fx *f = *state;
	const pt_pattern *p;
	pt_summary *s;

	ev(f, PT_K_PYTHON, f->cpu, 0, 100, "a.py(12): f");
	ev(f, PT_K_CPU_OP, f->cpu, 10, 20, "aten::mm");
	ev(f, PT_K_RUNTIME, f->cpu, 15, 5, "cudaLaunchKernel");
	ev(f, PT_K_PYTHON, f->cpu2, 50, 20, "b.py(3): g");
	s = build(f);
	assert_near(s->window_ms, 0.1);
	p = get(s, PT_C_PYTHON, "a.py: f");
	assert_near(p->bottleneck, 0.7); /* 10 + 20 + 20/2 + 30 */
	assert_near(p->median_ms, 0.1);  /* inclusive duration */
	assert_near(p->exec_ratio, 1);
	assert_int_equal(p->kind, PT_K_PYTHON);
	p = get(s, PT_C_PYTHON, "a.py: f|aten::mm");
	assert_near(p->bottleneck, 0.15);
	assert_int_equal(p->kind, PT_K_CPU_OP);
	assert_near(get(s, PT_C_RUNTIME, "cudaLaunchKernel")->bottleneck, 0.05);
	assert_near(get(s, PT_C_PYTHON, "b.py: g")->bottleneck, 0.1);
	assert_near(s->class_ms[PT_C_IDLE], 0);
	assert_near(s->class_ms[PT_C_PYTHON], 0.095);
	assert_near(s->gpu_util, 0);
	check_sums(s);
	pt_summary_free(s);
}

/* Same-start frames nest by duration (longest outside), and for equal
 * spans an annotation wraps Python which wraps an op. */
static void test_equal_start_order(void **state)
{
	fx *f = *state;
	pt_summary *s;

	ev(f, PT_K_CPU_OP, f->cpu, 0, 10, "aten::add");
	ev(f, PT_K_PYTHON, f->cpu, 0, 10, "m.py(1): fwd");
	ev(f, PT_K_ANNOTATION, f->cpu, 0, 10, "## forward ##");
	ev(f, PT_K_CPU_OP, f->cpu, 0, 4, "aten::empty");
	ev(f, PT_K_CPU_OP, f->cpu, 4, 0, "aten::view"); /* zero length */
	s = build(f);
	assert_near(get(s, PT_C_PYTHON, "## forward ##|m.py: fwd|aten::add")->bottleneck, 0.6);
	assert_near(get(s, PT_C_PYTHON, "## forward ##|m.py: fwd|aten::add|aten::empty")->bottleneck,
		    0.4);
	assert_near(get(s, PT_C_PYTHON, "## forward ##|m.py: fwd")->bottleneck, 0);
	assert_int_equal(get(s, PT_C_PYTHON, "## forward ##|m.py: fwd|aten::add|aten::view")->count,
			 1);
	check_sums(s);
	pt_summary_free(s);
}

/* Frames need not come in time order: Kineto writes a thread's ops and
 * its Python functions as separate sorted runs (merged), and anything
 * with many runs is radix sorted; both nest like sorted input. */
static void test_frame_order(void **state)
{
	fx *f = *state;
	pt_summary *s;
	char name[32];
	int i;

	/* ops first, then the Python frames that call them: two runs */
	ev(f, PT_K_CPU_OP, f->cpu, 10, 10, "aten::mm");
	ev(f, PT_K_CPU_OP, f->cpu, 40, 10, "aten::add");
	ev(f, PT_K_PYTHON, f->cpu, 0, 30, "m.py(1): a");
	ev(f, PT_K_PYTHON, f->cpu, 30, 30, "m.py(2): b");
	/* 100 siblings in reverse order, then their parent: 101 runs */
	for (i = 99; i >= 0; i--) {
		snprintf(name, sizeof(name), "op%d", i % 3);
		ev(f, PT_K_CPU_OP, f->cpu2, 100 + 2 * i, 1, name);
	}
	ev(f, PT_K_ANNOTATION, f->cpu2, 100, 200, "outer");
	s = build(f);
	assert_near(s->window_ms, 0.3);
	assert_near(s->class_ms[PT_C_IDLE], 0.04);
	assert_near(get(s, PT_C_PYTHON, "m.py: a")->bottleneck, 20.0 / 300);
	assert_near(get(s, PT_C_PYTHON, "m.py: a|aten::mm")->bottleneck, 10.0 / 300);
	assert_near(get(s, PT_C_PYTHON, "m.py: b")->bottleneck, 20.0 / 300);
	assert_near(get(s, PT_C_PYTHON, "m.py: b|aten::add")->bottleneck, 10.0 / 300);
	assert_near(get(s, PT_C_PYTHON, "outer")->bottleneck, 100.0 / 300);
	assert_int_equal(get(s, PT_C_PYTHON, "outer|op0")->count, 34);
	assert_near(get(s, PT_C_PYTHON, "outer|op0")->bottleneck, 34.0 / 300);
	assert_near(get(s, PT_C_PYTHON, "outer|op1")->bottleneck, 33.0 / 300);
	assert_null(find(s, PT_C_PYTHON, "op0"));
	check_sums(s);
	pt_summary_free(s);
}

/* A child running past its parent's end is clipped to it (then idle). */
static void test_sloppy_child(void **state)
{
	fx *f = *state;
	const pt_pattern *p;
	pt_summary *s;

	ev(f, PT_K_CPU_OP, f->cpu, 0, 50, "P");
	ev(f, PT_K_CPU_OP, f->cpu, 40, 20, "C");
	ev(f, PT_K_CPU_OP, f->cpu, 55, 5, "D"); /* after P: a new root */
	s = build(f);
	assert_near(get(s, PT_C_PYTHON, "P")->bottleneck, 0.8 * 50 / 60);
	p = get(s, PT_C_PYTHON, "P|C");
	assert_near(p->bottleneck, 10.0 / 60);
	assert_near(p->median_ms, 0.02);
	assert_near(get(s, PT_C_PYTHON, "D")->bottleneck, 5.0 / 60);
	assert_near(s->class_ms[PT_C_IDLE], 0.005);
	check_sums(s);
	pt_summary_free(s);
}

/* Old-style "Call stack" args (innermost first): the key is the stack
 * outermost-first then the op; a child with the same stack extends its
 * parent; a different stack restarts the key. */
static void test_call_stack_keys(void **state)
{
	fx *f = *state;
	const char *stk = "/lib/x.py(3): inner;main.py(10): <module>";
	pt_summary *s;

	ev_full(f, PT_K_CPU_OP, f->cpu, 0, 10, "aten::to", stk, 0, 0);
	ev_full(f, PT_K_CPU_OP, f->cpu, 2, 4, "aten::empty", stk, 0, 0);
	ev_full(f, PT_K_CPU_OP, f->cpu, 20, 10, "aten::mm", "main.py(11): <module>", 0, 0);
	ev_full(f, PT_K_CPU_OP, f->cpu, 22, 2, "aten::t", NULL, 0, 0);
	s = build(f);
	assert_near(get(s, PT_C_PYTHON, "main.py: <module>|/lib/x.py: inner|aten::to")->bottleneck,
		    6.0 / 30);
	assert_near(get(s, PT_C_PYTHON,
			"main.py: <module>|/lib/x.py: inner|aten::to|aten::empty")->bottleneck,
		    4.0 / 30);
	assert_near(get(s, PT_C_PYTHON, "main.py: <module>|aten::mm")->bottleneck, 8.0 / 30);
	assert_near(get(s, PT_C_PYTHON, "main.py: <module>|aten::mm|aten::t")->bottleneck, 2.0 / 30);
	check_sums(s);
	pt_summary_free(s);
}

/* One kernel on two streams for the whole step: it owns the step once
 * and runs through all of it; its execution ratio is 1, not the 2 its
 * summed durations over the window would make (issue 29: a share of time
 * is never above 100%). */
static void test_exec_ratio_at_most_one(void **state)
{
	fx *f = *state;
	const pt_pattern *p;
	pt_summary *s;

	step(f, 1, 0, 100);
	ev(f, PT_K_COMM_KERNEL, f->gpu, 0, 100, "ncclDevKernel_SendRecv");
	ev(f, PT_K_COMM_KERNEL, f->gpu2, 0, 100, "ncclDevKernel_SendRecv");
	s = build(f);
	p = get(s, PT_C_COMM, "ncclDevKernel_SendRecv");
	assert_int_equal(p->count, 2);
	assert_near(p->total_ms, 0.2);
	assert_near(p->bottleneck, 1);
	assert_near(p->exec_ratio, 1);
	pt_summary_free(s);
}

/* Everything is clipped to the step window: owned time and exec_ratio use
 * the clipped spans, durations stay whole, events outside are dropped. */
static void test_clip_to_steps(void **state)
{
	fx *f = *state;
	const pt_pattern *p;
	pt_summary *s;

	step(f, 5, 100, 100);
	ev(f, PT_K_KERNEL, f->gpu, 50, 100, "K");
	ev(f, PT_K_KERNEL, f->gpu, 210, 10, "outside");
	ev(f, PT_K_STEP, f->cpu, 100, 100, "ProfilerStep#5");
	ev(f, PT_K_GPU_ANNOTATION, f->gpu, 100, 100, "ProfilerStep#5");
	ev(f, PT_K_PYTHON, f->cpu, 90, 160, "t.py(1): train");
	ev(f, PT_K_CPU_OP, f->cpu, 95, 10, "aten::zero_");
	s = build(f);
	assert_int_equal(s->nsteps, 1);
	assert_int_equal(s->step_numbers[0], 5);
	assert_near(s->step_ms[0], 0.1);
	assert_near(s->window_start_us, 100);
	p = get(s, PT_C_COMPUTE, "K");
	assert_near(p->bottleneck, 0.5);
	assert_near(p->exec_ratio, 0.5);
	assert_near(p->median_ms, 0.1);
	assert_near(p->total_ms, 0.1);
	assert_null(find(s, PT_C_COMPUTE, "outside"));
	assert_null(find(s, PT_C_PYTHON, "ProfilerStep#5"));
	p = get(s, PT_C_PYTHON, "t.py: train");
	assert_near(p->bottleneck, 0.5);
	assert_near(p->exec_ratio, 1);
	assert_near(p->median_ms, 0.16);
	p = get(s, PT_C_PYTHON, "t.py: train|aten::zero_");
	assert_near(p->bottleneck, 0);
	assert_near(p->exec_ratio, 0.05);
	assert_near(s->gpu_util, 0.5);
	assert_near(s->class_ms[PT_C_IDLE], 0);
	assert_int_equal(s->npatterns, 3);
	check_sums(s);
	pt_summary_free(s);
}

/* Idle: gaps with nothing active; a window with nothing attributed. */
static void test_idle(void **state)
{
	fx *f = *state;
	pt_summary *s;

	step(f, 1, 0, 50);
	ev(f, PT_K_KERNEL, f->gpu, 10, 10, "k");
	ev(f, PT_K_KERNEL, f->gpu, 30, 10, "k");
	s = build(f);
	assert_near(s->class_ms[PT_C_IDLE], 0.03);
	assert_near(s->class_ms[PT_C_COMPUTE], 0.02);
	assert_near(s->gpu_util, 0.4);
	assert_int_equal(get(s, PT_C_COMPUTE, "k")->count, 2);
	check_sums(s);
	pt_summary_free(s);
}

/* ---- statistics -------------------------------------------------------- */

/* Durations 1,2,3,4,10 µs: numpy.percentile(x, [10, 50, 90]) =
 * [1.4, 3, 7.6]; MAD = median(|x - 3|) = median(2,1,0,1,7) = 1. */
static void test_percentiles_odd(void **state)
{
	fx *f = *state;
	const pt_pattern *p;
	pt_summary *s;

	ev(f, PT_K_KERNEL, f->gpu, 0, 4, "k");
	ev(f, PT_K_KERNEL, f->gpu, 10, 10, "k");
	ev(f, PT_K_KERNEL, f->gpu, 30, 1, "k");
	ev(f, PT_K_KERNEL, f->gpu, 40, 3, "k");
	ev(f, PT_K_KERNEL, f->gpu, 50, 2, "k");
	s = build(f);
	p = get(s, PT_C_COMPUTE, "k");
	assert_int_equal(p->count, 5);
	assert_near(p->total_ms, 0.02);
	assert_near(p->median_ms, 0.003);
	assert_near(p->p10_ms, 0.0014);
	assert_near(p->p90_ms, 0.0076);
	assert_near(p->mad_ms, 0.001);
	pt_summary_free(s);
}

/* Durations 1,2,3,4 µs: median 2.5, p10 1.3, p90 3.7, MAD 1. */
static void test_percentiles_even(void **state)
{
	fx *f = *state;
	const pt_pattern *p;
	pt_summary *s;

	ev(f, PT_K_RUNTIME, f->cpu, 0, 1, "r");
	ev(f, PT_K_RUNTIME, f->cpu, 10, 2, "r");
	ev(f, PT_K_RUNTIME, f->cpu, 20, 3, "r");
	ev(f, PT_K_RUNTIME, f->cpu, 30, 4, "r");
	s = build(f);
	p = get(s, PT_C_RUNTIME, "r");
	assert_near(p->median_ms, 0.0025);
	assert_near(p->p10_ms, 0.0013);
	assert_near(p->p90_ms, 0.0037);
	assert_near(p->mad_ms, 0.001);
	pt_summary_free(s);
}

static void test_percentile_function(void **state)
{
	/* Values from numpy 1.24: np.percentile(x, q) for these x, q. */
	static const double x[] = { 0.5, 1.25, 2, 7, 7, 9.75, 11 };
	double one = 4.25, scratch[7];

	assert_near(pt_stats_percentile(x, 7, 0), 0.5);
	assert_near(pt_stats_percentile(x, 7, 100), 11);
	assert_near(pt_stats_percentile(x, 7, 50), 7);
	assert_near(pt_stats_percentile(x, 7, 10), 0.95);
	assert_near(pt_stats_percentile(x, 7, 90), 10.25);
	assert_near(pt_stats_percentile(x, 7, 25), 1.625);
	assert_near(pt_stats_percentile(&one, 1, 90), 4.25);
	assert_near(pt_stats_percentile(x, 0, 50), 0);
	/* |x - 7| = 6.5 5.75 5 0 0 2.75 4 -> sorted 0 0 2.75 4 5 5.75 6.5 */
	assert_near(pt_stats_mad(x, 7, 7, scratch), 4);
	/* even count: 6.5 5.75 5 0 0 2.75 -> (2.75 + 5) / 2 */
	assert_near(pt_stats_mad(x, 6, 7, scratch), 3.875);
	assert_near(pt_stats_mad(&one, 1, 1, scratch), 3.25);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The MAD by selection equals the median of the sorted deviations exactly,
 * for odd and even counts, many ties, sorted, reversed and organ-pipe
 * inputs (the shapes that defeat a naive pivot). */
static void test_mad_selection(void **state)
{
	enum { N = 3000 };
	double *x = x_malloc(N * sizeof(*x)), *dev = x_malloc(N * sizeof(*dev));
	double *scratch = x_malloc(N * sizeof(*scratch));
	uint64_t r = 88172645463325252ULL;
	size_t n, i;
	int shape;

	assert_non_null(x);
	assert_non_null(dev);
	assert_non_null(scratch);
	for (shape = 0; shape < 5; shape++) {
		for (n = 1; n <= N; n = n < 40 ? n + 1 : n * 3 + 1) {
			double med, want, got;
			for (i = 0; i < n; i++) {
				r ^= r << 13;
				r ^= r >> 7;
				r ^= r << 17;
				switch (shape) {
				case 0: x[i] = (double)(r % 1000000) / 7.0; break;
				case 1: x[i] = (double)(r % 4); break;           /* ties */
				case 2: x[i] = (double)i; break;                  /* sorted */
				case 3: x[i] = (double)(n - i); break;            /* reversed */
				default: x[i] = (double)(i < n / 2 ? i : n - i); /* organ pipe */
				}
			}
			memcpy(dev, x, n * sizeof(*x));
			qsort(dev, n, sizeof(*dev), cmp_dbl);
			med = pt_stats_percentile(dev, n, 50);
			for (i = 0; i < n; i++)
				dev[i] = fabs(x[i] - med);
			qsort(dev, n, sizeof(*dev), cmp_dbl);
			want = pt_stats_percentile(dev, n, 50);
			got = pt_stats_mad(x, n, med, scratch);
			if (got != want)
				fail_msg("shape %d n %zu: mad %.17g, sorted %.17g", shape, n, got, want);
		}
	}
	x_free(scratch);
	x_free(dev);
	x_free(x);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void test_radix_sorts(void **state)
{
	size_t sizes[] = { 0, 1, 5, 47, 48, 1000, 100000 };
	size_t si, i, n;
	uint64_t seed = 88172645463325252ULL;

	for (si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		n = sizes[si];
		uint64_t *a = x_malloc(n * sizeof(*a)), *b = x_malloc(n * sizeof(*b)),
			 *t = x_malloc(n * sizeof(*t));
		pt_kv *kv = x_malloc(n * sizeof(*kv)), *kt = x_malloc(n * sizeof(*kt));
		for (i = 0; i < n; i++) {
			seed ^= seed << 13;
			seed ^= seed >> 7;
			seed ^= seed << 17;
			/* mix wide and narrow keys, many duplicates */
			a[i] = (si & 1) ? seed : (seed % 1000) + (1ULL << 40);
			b[i] = a[i];
			kv[i].k = a[i] % 97;
			kv[i].v = (uint32_t)i;
		}
		pt_sort_u64(a, t, n);
		qsort(b, n, sizeof(*b), cmp_u64);
		assert_memory_equal(a, b, n * sizeof(*a));
		pt_sort_kv(kv, kt, n);
		for (i = 1; i < n; i++) {
			assert_true(kv[i - 1].k <= kv[i].k);
			if (kv[i - 1].k == kv[i].k) /* stable */
				assert_true(kv[i - 1].v < kv[i].v);
		}
		free(a);
		free(b);
		free(t);
		free(kv);
		free(kt);
	}
}

/* pt_order: packed when key and index bits fit in 64, pairs otherwise;
 * both stable. */
static void test_order(void **state)
{
	uint64_t maxkeys[] = { 1000, UINT64_MAX };
	size_t n = 5000, i, m;
	pt_order o;

	for (m = 0; m < 2; m++) {
		assert_int_equal(pt_order_init(&o, n, maxkeys[m]), PT_OK);
		assert_true(m == 0 ? o.packed != NULL : o.kv != NULL);
		for (i = 0; i < n; i++)
			pt_order_set(&o, i, m == 0 ? (i * 7919) % 1001 : UINT64_MAX - (i * 7919) % 1001);
		pt_order_sort(&o);
		for (i = 1; i < n; i++) {
			uint32_t x = pt_order_at(&o, i - 1), y = pt_order_at(&o, i);
			uint64_t kx = (x * 7919ULL) % 1001, ky = (y * 7919ULL) % 1001;
			if (m == 1) {
				kx = 1000 - kx;
				ky = 1000 - ky;
			}
			assert_true(kx < ky || (kx == ky && x < y));
		}
		pt_order_free(&o);
	}
}

static int cmp_item_start(const void *a, const void *b)
{
	const pt_item *x = a, *y = b;
	return x->s < y->s ? -1 : x->s > y->s;
}

/* The sweep gives the same owned times and totals whether items come
 * unsorted or as an unsorted part plus presorted runs; and a brute-force
 * per-nanosecond attribution agrees with it. */
static void test_sweep_runs(void **state)
{
	enum { N = 3000, W = 20000, NPAT = 40 };
	pt_item *a = x_malloc(N * sizeof(*a)), *b = x_malloc(N * sizeof(*b));
	double o1[NPAT] = { 0 }, o2[NPAT] = { 0 }, o3[NPAT] = { 0 };
	pt_attr_totals t1, t2;
	uint64_t seed = 42;
	size_t i, split = 1000, r;
	int64_t t;
	int c;

	for (i = 0; i < N; i++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		a[i].s = (int64_t)((seed >> 20) % W);
		a[i].e = a[i].s + 1 + (int64_t)((seed >> 45) % 200);
		if (a[i].e > W)
			a[i].e = W;
		a[i].pat = (uint32_t)((seed >> 8) % NPAT);
		a[i].cls = (uint8_t)(PT_C_PYTHON + (seed >> 3) % 5);
		a[i].kernel = a[i].cls == PT_C_COMPUTE;
	}
	assert_int_equal(pt_attr_sweep(a, N, N, 0, W, o1, &t1), PT_OK);
	memcpy(b, a, N * sizeof(*a));
	/* b: first `split` as they are, then 4 runs each sorted by start */
	for (r = 0; r < 4; r++) {
		size_t lo = split + r * (N - split) / 4, hi = split + (r + 1) * (N - split) / 4;
		qsort(b + lo, hi - lo, sizeof(*b), cmp_item_start);
	}
	assert_int_equal(pt_attr_sweep(b, N, split, 0, W, o2, &t2), PT_OK);
	for (i = 0; i < NPAT; i++)
		assert_near(o1[i], o2[i]);
	assert_memory_equal(&t1, &t2, sizeof(t1));
	/* all of it as runs */
	memset(o2, 0, sizeof(o2));
	assert_int_equal(pt_attr_sweep(b, N, 0, 0, W, o2, &t2), PT_OK);
	for (i = 0; i < NPAT; i++)
		assert_near(o1[i], o2[i]);
	assert_memory_equal(&t1, &t2, sizeof(t1));

	/* brute force, one ns at a time */
	for (t = 0; t < W; t++) {
		int top = -1, n = 0;
		for (i = 0; i < N; i++)
			if (a[i].s <= t && t < a[i].e && a[i].cls > top)
				top = a[i].cls;
		for (i = 0; i < N; i++)
			n += a[i].s <= t && t < a[i].e && a[i].cls == top;
		for (i = 0; i < N; i++)
			if (a[i].s <= t && t < a[i].e && a[i].cls == top)
				o3[a[i].pat] += 1.0 / n;
	}
	for (i = 0; i < NPAT; i++)
		if (fabs(o1[i] - o3[i]) > 1e-6)
			fail_msg("pattern %zu: sweep %.9f, brute force %.9f", i, o1[i], o3[i]);
	for (c = 0, t = 0; c < PT_C_COUNT; c++)
		t += (int64_t)t1.class_ns[c];
	assert_int_equal(t, W);
	free(a);
	free(b);
}

/* ---- communication ------------------------------------------------------- */

/* The bus bandwidth factor of commkind.c's one vocabulary. */
static double busbw(const char *name, uint32_t g)
{
	return pt_commkind_busbw_factor(name, strlen(name), g);
}

static void test_busbw_factor(void **state)
{
	assert_near(busbw("ncclDevKernel_AllReduce_Sum_f16_RING_LL(ncclDevComm*)", 8),
		    1.75);
	assert_near(busbw("nccl:all_reduce", 2), 1);
	assert_near(busbw("ncclKernel_AllGather_RING_LL_Sum_int8_t", 4), 0.75);
	assert_near(busbw("c10d::_reduce_scatter_base_", 8), 0.875);
	assert_near(busbw("nccl:all_to_all", 8), 0.875);
	assert_near(busbw("ncclDevKernel_SendRecv(ncclDevComm*)", 8), 1);
	assert_near(busbw("ncclKernel_Broadcast_RING_LL_Sum_int8_t", 8), 1);
	assert_near(busbw("ncclKernel_Reduce_RING_LL_Sum_half", 8), 1);
	assert_near(busbw("record_param_comms", 8), 0);
	assert_near(busbw("nccl:all_reduce", 0), 0);
}

/* bytes and algbw are medians over the calls that record bytes; busbw
 * uses the group size (most common) and the AllReduce factor. */
static void test_comm_bandwidth(void **state)
{
	fx *f = *state;
	const pt_pattern *p;
	pt_summary *s;

	ev_full(f, PT_K_COMM_KERNEL, f->gpu, 0, 100, "ncclDevKernel_AllReduce_Sum_f32", NULL,
		1000000, 8);
	ev_full(f, PT_K_COMM_KERNEL, f->gpu, 200, 100, "ncclDevKernel_AllReduce_Sum_f32", NULL,
		4000000, 8);
	ev_full(f, PT_K_COMM_KERNEL, f->gpu, 400, 100, "ncclDevKernel_AllReduce_Sum_f32", NULL,
		2000000, 4);
	ev_full(f, PT_K_COMM_KERNEL, f->gpu, 600, 50, "ncclDevKernel_AllReduce_Sum_f32", NULL, 0, 0);
	ev_full(f, PT_K_COMM_KERNEL, f->gpu, 700, 100, "ncclDevKernel_SendRecv", NULL, 0, 0);
	s = build(f);
	p = get(s, PT_C_COMM, "ncclDevKernel_AllReduce_Sum_f32");
	assert_int_equal(p->count, 4);
	assert_near(p->bytes, 2000000);
	assert_near(p->algbw_gbps, 20); /* 1e6/1e5 ns, 4e6/1e5, 2e6/1e5 -> 10, 40, 20 */
	assert_int_equal(p->group, 8);
	assert_near(p->busbw_gbps, 35);
	assert_near(p->median_ms, 0.1);
	p = get(s, PT_C_COMM, "ncclDevKernel_SendRecv");
	assert_near(p->bytes, 0);
	assert_near(p->algbw_gbps, 0);
	assert_near(p->busbw_gbps, 0);
	assert_int_equal(p->group, 0);
	assert_near(s->gpu_util, 450.0 / 800);
	pt_summary_free(s);
}

/* ---- options, identity --------------------------------------------------- */

static void test_python_filter(void **state)
{
	fx *f = *state;
	pt_summary_options o;
	pt_summary *s;
	char name[32];
	int i;

	/* stacks s0..s9 own 1..10 µs of a 55 µs window; one kernel */
	for (i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "s%d", i);
		ev(f, PT_K_CPU_OP, f->cpu, i * (i + 1) / 2, i + 1, name);
	}
	ev(f, PT_K_KERNEL, f->gpu, 0, 1, "k");
	pt_summary_options_default(&o);
	assert_near(o.min_python_ratio, 0.0005);
	assert_int_equal(o.max_python, 500);
	o.min_python_ratio = 5.0 / 55;   /* s4..s9 own >= 5 µs (s0 loses 1 µs to k) */
	o.max_python = 4;                /* keep s9, s8, s7, s6 */
	s = build_opt(f, &o);
	assert_int_equal(s->npatterns, 5);
	assert_non_null(find(s, PT_C_COMPUTE, "k"));
	assert_non_null(find(s, PT_C_PYTHON, "s9"));
	assert_non_null(find(s, PT_C_PYTHON, "s6"));
	assert_null(find(s, PT_C_PYTHON, "s5"));
	/* sorted: class desc, then bottleneck desc */
	assert_string_equal(s->patterns[0].key, "k");
	assert_string_equal(s->patterns[1].key, "s9");
	assert_string_equal(s->patterns[4].key, "s6");
	pt_summary_free(s);
}

static void test_identity(void **state)
{
	fx *f = *state;
	pt_summary *s;
	pt_error err;

	f->st.world_size = 16;
	f->st.backend = pt_strtab_intern(f->st.strs, "nccl", 4);
	f->st.device_name = pt_strtab_intern(f->st.strs, "NVIDIA H100", 11);
	f->st.truncated = 1;
	pt_store_warn(&f->st, "input ends inside an event");
	pt_store_warn(&f->st, "second");
	ev(f, PT_K_CPU_OP, f->cpu2, 0, 1, "x");
	ev(f, PT_K_CPU_OP, f->cpu2, 1, 1, "x");
	ev(f, PT_K_KERNEL, f->gpu, 0, 1, "k");
	s = build(f);
	assert_string_equal(s->worker, "host-a_3_4242.json");
	assert_string_equal(s->file, "/x/host-a_3_4242.json");
	assert_string_equal(s->host, "host-a");
	assert_int_equal(s->rank, 3);
	assert_int_equal(s->pid, 4242);
	assert_int_equal(s->world_size, 16);
	assert_string_equal(s->backend, "nccl");
	assert_string_equal(s->device, "NVIDIA H100");
	assert_string_equal(s->warning, "input ends inside an event");
	assert_int_equal(s->nwarnings, 2);
	assert_int_equal(s->truncated, 1);
	assert_int_equal(s->nevents, 3);
	assert_null(s->error);
	pt_summary_free(s);

	/* distributedInfo's rank wins; the pid falls back to the busiest CPU
	 * lane's; no name match leaves host "" */
	f->st.rank = 5;
	pt_error_clear(&err);
	s = pt_summary_build(&f->st, "trace.json", NULL, &err);
	assert_non_null(s);
	assert_int_equal(s->rank, 5);
	assert_int_equal(s->pid, 100);
	assert_string_equal(s->host, "");
	assert_string_equal(s->worker, "trace.json");
	pt_summary_free(s);
}

static void test_worker_names(void **state)
{
	static const struct {
		const char *name, *host;
		int64_t rank, pid;
	} cases[] = {
		{ "job_x08j11173.cloud.sqa.na131_2_122482.json", "job_x08j11173.cloud.sqa.na131", 2,
		  122482 },
		{ "a_b_3_44.json.gz", "a_b", 3, 44 },
		{ "h_1_2", "h", 1, 2 },
		{ "node.1_0_7.pt.trace.json", "node.1", 0, 7 },
		{ "worker0_step_12.1694128201545.pt.trace.json", "", -1, -1 },
		{ "_1_2.json", "", -1, -1 },
		{ "h_1_.json", "", -1, -1 },
		{ "h__2.json", "", -1, -1 },
		{ "h_1_2x.json", "", -1, -1 },
		{ "plain.json", "", -1, -1 },
		{ "", "", -1, -1 },
		{ "h_1_12345678901234567890.json", "", -1, -1 },
	};
	char host[64];
	int64_t r, p;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pt_summary_parse_worker_name(cases[i].name, host, sizeof(host), &r, &p);
		if (strcmp(host, cases[i].host) || r != cases[i].rank || p != cases[i].pid)
			fail_msg("'%s': got '%s' %lld %lld", cases[i].name, host, (long long)r,
				 (long long)p);
	}
	/* host truncated to the buffer */
	pt_summary_parse_worker_name("abcdef_1_2.json", host, 4, &r, &p);
	assert_string_equal(host, "abc");
	assert_int_equal(r, 1);
	pt_summary_parse_worker_name(NULL, host, sizeof(host), &r, &p);
	assert_int_equal(r, -1);
}

static void test_failed(void **state)
{
	pt_summary *s = pt_summary_failed("/d/n1_4_99.json", "not a trace (at byte 3)");

	assert_non_null(s);
	assert_string_equal(s->worker, "n1_4_99.json");
	assert_string_equal(s->error, "not a trace (at byte 3)");
	assert_int_equal(s->rank, 4);
	assert_int_equal(s->npatterns, 0);
	pt_summary_free(s);
	pt_summary_free(NULL);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_window_events),
		T(test_window_steps),
		T(test_empty_store),
		T(test_overlapping_kernels_share),
		T(test_three_way_share),
		T(test_comm_under_compute),
		T(test_memory_between),
		T(test_nested_python_frames),
		T(test_equal_start_order),
		T(test_frame_order),
		T(test_sloppy_child),
		T(test_call_stack_keys),
		T(test_clip_to_steps),
		T(test_idle),
		T(test_percentiles_odd),
		T(test_percentiles_even),
		cmocka_unit_test(test_percentile_function),
		cmocka_unit_test(test_mad_selection),
		cmocka_unit_test(test_radix_sorts),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_sweep_runs),
		cmocka_unit_test(test_busbw_factor),
		T(test_comm_bandwidth),
		T(test_python_filter),
		T(test_identity),
		cmocka_unit_test(test_worker_names),
		T(test_exec_ratio_at_most_one),
		cmocka_unit_test(test_failed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
