/*
 * test_critpath.c - unit tests for the critical path (src/analysis/critpath.c)
 * on hand-built pt_stores: CPU-bound steps, a blocking copy queued behind a
 * kernel (the wait record names the span, the copy and what it was queued
 * behind), a synchronisation, launch latency, a cross-stream wait, a thread
 * joined to the thread that waits for it, a trace without steps, the
 * functions' per-step times, the summary member's round trip and the
 * frame order the patterns take from the walk's index.  Every
 * split is checked to sum to its step.  Times in the tests are µs.
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
#include "analysis/critpath.h"
#include "analysis/patterns.h"
#include "analysis/summary.h"
#include "util/xalloc.h"

#include "storefx.h"

#define assert_ms(a, b)                                                         \
	do {                                                                    \
		double a_ = (a), b_ = (b);                                      \
		if (!(fabs(a_ - b_) <= 1e-9))                                   \
			fail_msg("%s = %.12g, want %.12g", #a, a_, b_);         \
	} while (0)

static void ev(fx *f, int kind, uint32_t lane, int64_t ts_us, int64_t dur_us, const char *name,
	       uint32_t corr)
{
	fx_event(f, kind, lane, ts_us, dur_us, name, NULL, 0, 0, corr);
}

static void step(fx *f, int64_t no, int64_t ts_us, int64_t dur_us)
{
	char n[32];

	snprintf(n, sizeof(n), "ProfilerStep#%lld", (long long)no);
	ev(f, PT_K_STEP, f->cpu, ts_us, dur_us, n, 0);
	assert_int_equal(pt_store_add_step(&f->st, no, ts_us * US, dur_us * US), PT_OK);
}

static pt_summary *build(fx *f)
{
	pt_error err;
	pt_summary *s;

	pt_error_clear(&err);
	s = pt_summary_build(&f->st, "w_0_1.json", NULL, &err);
	if (!s)
		fail_msg("build: %s", err.msg);
	return s;
}

static void sums(const pt_summary *s)
{
	size_t i, k;

	assert_non_null(s->cpath);
	for (i = 0; i < s->cpath->nsteps; i++) {
		double t = 0;
		for (k = 0; k < PT_CP_NKINDS; k++)
			t += s->cpath->steps[i].split[k];
		assert_ms(t, s->cpath->steps[i].ms);
	}
}

static double fms(const pt_summary *s, const char *key, size_t step)
{
	size_t i;

	for (i = 0; i < s->cpath->nfuncs; i++)
		if (!strcmp(s->cpath->funcs[i].key, key))
			return s->cpath->funcs[i].ms[step];
	return -1;
}

/* A step of CPU work only: all of it is cpu, each frame inclusive. */
static void test_cpu_bound(void **state)
{
	fx *f = *state;
	pt_summary *s;

	step(f, 1, 0, 1000);
	ev(f, PT_K_ANNOTATION, f->cpu, 100, 600, "## forward ##", 0);
	ev(f, PT_K_CPU_OP, f->cpu, 200, 300, "aten::mm", 0);
	s = build(f);
	sums(s);
	assert_int_equal(s->cpath->nsteps, 1);
	assert_int_equal(s->cpath->steps[0].number, 1);
	assert_ms(s->cpath->steps[0].split[PT_CP_CPU], 1.0);
	assert_ms(fms(s, "## forward ##", 0), 0.6);
	assert_ms(fms(s, "aten::mm", 0), 0.3);
	/* step frames are not credited */
	assert_true(fms(s, "ProfilerStep#1", 0) < 0);
	assert_int_equal(s->cpath->steps[0].nwaits, 0);
	pt_summary_free(s);
}

/* The main thread launches a kernel, then blocks in a copy that the GPU
 * queues behind it: the path runs through the kernel; the annotation that
 * blocks gets the time it waited; the wait names what it was queued behind. */
static void test_blocking_copy(void **state)
{
	fx *f = *state;
	pt_summary *s;
	const pt_cp_wait *w;

	step(f, 5, 0, 1000);
	ev(f, PT_K_CPU_OP, f->cpu, 0, 60, "aten::mm", 0);
	ev(f, PT_K_RUNTIME, f->cpu, 10, 20, "cudaLaunchKernel", 11);
	ev(f, PT_K_KERNEL, f->gpu, 40, 700, "gemm", 11);
	ev(f, PT_K_ANNOTATION, f->cpu, 100, 700, "## wait ##", 0);
	ev(f, PT_K_CPU_OP, f->cpu, 110, 680, "aten::to", 0);
	ev(f, PT_K_RUNTIME, f->cpu, 120, 660, "cudaMemcpyAsync", 12);
	ev(f, PT_K_MEMCPY, f->gpu, 740, 20, "Memcpy DtoH (Device -> Pageable)", 12);
	s = build(f);
	sums(s);
	/* [0,10) cpu (aten::mm), [10,30) launch call... the kernel was ready
	 * at its launch's end (30) and started at 40: [30,40) launch latency;
	 * [40,740) compute; [740,760) memory; [760,780) the copy's return;
	 * [780,800) cpu (aten::to, ## wait ##), [800,1000) cpu (the step). */
	assert_ms(s->cpath->steps[0].split[PT_CP_COMPUTE], 0.7);
	assert_ms(s->cpath->steps[0].split[PT_CP_MEMORY], 0.02);
	assert_ms(s->cpath->steps[0].split[PT_CP_LAUNCH], 0.02 + 0.01 + 0.02);
	assert_ms(s->cpath->steps[0].split[PT_CP_CPU], 0.01 + 0.02 + 0.2);
	assert_ms(s->cpath->steps[0].split[PT_CP_GAP], 0);
	/* the annotation: its own 20 µs, the copy's 20 µs return and the path
	 * inside the copy while it waited, [120,760) */
	assert_ms(fms(s, "## wait ##", 0), 0.68);
	assert_ms(fms(s, "gemm", 0), 0.7);
	assert_int_equal(s->cpath->steps[0].nwaits, 1);
	w = &s->cpath->steps[0].waits[0];
	assert_string_equal(w->span, "## wait ##");
	assert_string_equal(w->call, "cudaMemcpyAsync");
	assert_string_equal(w->target, "Memcpy DtoH (Device -> Pageable)");
	assert_int_equal(w->target_stream, 7);
	assert_non_null(w->behind);
	assert_string_equal(w->behind, "gemm");
	assert_int_equal(w->behind_stream, 7);
	assert_ms(w->ms, 0.66);
	pt_summary_free(s);
}

/* A synchronize waits for the kernel ending last on any stream; that
 * kernel waited for another stream (an unexplained start > 20 µs after its
 * launch): the path crosses streams. */
static void test_sync_cross_stream(void **state)
{
	fx *f = *state;
	pt_summary *s;

	step(f, 1, 0, 1000);
	ev(f, PT_K_RUNTIME, f->cpu, 0, 10, "cudaLaunchKernel", 1);
	ev(f, PT_K_COMM_KERNEL, f->gpu2, 20, 500, "ncclKernel_AllReduce", 1);
	ev(f, PT_K_RUNTIME, f->cpu, 30, 10, "cudaLaunchKernel", 2);
	ev(f, PT_K_KERNEL, f->gpu, 530, 100, "add", 2);
	ev(f, PT_K_RUNTIME, f->cpu, 50, 600, "cudaStreamSynchronize", 3);
	s = build(f);
	sums(s);
	/* [650,1000) cpu; [630,650) sync return (launch); [530,630) compute;
	 * [520,530) gap (the wait for stream 13); [20,520) communication;
	 * [10,20) launch latency; [0,10) the launch call. */
	assert_ms(s->cpath->steps[0].split[PT_CP_CPU], 0.35);
	assert_ms(s->cpath->steps[0].split[PT_CP_COMPUTE], 0.1);
	assert_ms(s->cpath->steps[0].split[PT_CP_GAP], 0.01);
	assert_ms(s->cpath->steps[0].split[PT_CP_COMM], 0.5);
	assert_ms(s->cpath->steps[0].split[PT_CP_LAUNCH], 0.02 + 0.01 + 0.01);
	assert_ms(fms(s, "cudaStreamSynchronize", 0), 0.6);
	assert_string_equal(s->cpath->steps[0].waits[0].behind, "ncclKernel_AllReduce");
	assert_int_equal(s->cpath->steps[0].waits[0].behind_stream, 13);
	pt_summary_free(s);
}

/* Newer Kineto's cuda_sync records say which stream a call waited for: an
 * event synchronisation waits for stream 7's kernel, not for the kernel of
 * stream 13 that ends later inside the call; a kernel whose stream was told
 * to wait for stream 7 waits for it, not for stream 13's later end. */
static void test_cuda_sync(void **state)
{
	fx *f = *state;
	pt_summary *s;
	pt_sync y;

	step(f, 1, 0, 1000);
	ev(f, PT_K_RUNTIME, f->cpu, 0, 10, "cudaLaunchKernel", 1);
	ev(f, PT_K_KERNEL, f->gpu, 20, 300, "a", 1);
	ev(f, PT_K_RUNTIME, f->cpu, 10, 10, "cudaLaunchKernel", 2);
	ev(f, PT_K_KERNEL, f->gpu2, 20, 400, "b", 2);
	ev(f, PT_K_RUNTIME, f->cpu, 30, 500, "cudaEventSynchronize", 3);
	memset(&y, 0, sizeof(y));
	y.kind = PT_SYNC_EVENT;
	y.corr = 3;
	y.ts = 31 * US;
	y.lane = f->gpu;
	y.wlane = UINT32_MAX;
	assert_int_equal(pt_store_add_sync(&f->st, &y), PT_OK);
	s = build(f);
	sums(s);
	assert_string_equal(s->cpath->steps[0].waits[0].target, "a");
	assert_int_equal(s->cpath->steps[0].waits[0].target_stream, 7);
	pt_summary_free(s);
}

static void test_stream_wait(void **state)
{
	fx *f = *state;
	pt_summary *s;
	pt_sync y;
	uint32_t g3 = pt_store_lane(&f->st, 0, 21, 1);

	step(f, 1, 0, 1000);
	ev(f, PT_K_RUNTIME, f->cpu, 0, 10, "cudaLaunchKernel", 1);
	ev(f, PT_K_KERNEL, f->gpu, 20, 300, "a", 1);
	ev(f, PT_K_RUNTIME, f->cpu, 10, 10, "cudaLaunchKernel", 2);
	ev(f, PT_K_KERNEL, f->gpu2, 20, 400, "b", 2);
	/* stream 21 waits for stream 7 (recorded at 25 us), then runs c */
	ev(f, PT_K_RUNTIME, f->cpu, 30, 10, "cudaLaunchKernel", 4);
	ev(f, PT_K_KERNEL, g3, 430, 100, "c", 4);
	ev(f, PT_K_RUNTIME, f->cpu, 50, 500, "cudaStreamSynchronize", 5);
	memset(&y, 0, sizeof(y));
	y.kind = PT_SYNC_STREAM_WAIT;
	y.corr = 9;
	y.ts = 25 * US;
	y.lane = f->gpu;
	y.wlane = g3;
	assert_int_equal(pt_store_add_sync(&f->st, &y), PT_OK);
	s = build(f);
	sums(s);
	/* c waited for stream 7 (a ended at 320): [320,430) gap, then a */
	assert_string_equal(s->cpath->steps[0].waits[0].target, "c");
	assert_string_equal(s->cpath->steps[0].waits[0].behind, "a");
	assert_int_equal(s->cpath->steps[0].waits[0].behind_stream, 7);
	assert_ms(s->cpath->steps[0].split[PT_CP_GAP], 0.11);
	pt_summary_free(s);
}

/* A GPU-bound step: the launch queue is full and each launch blocks until a
 * kernel ends (a call over 100 us waited for the GPU), so the path runs
 * through the kernels, not through "launch"; a short launch during which a
 * kernel happens to end did not wait. */
static void test_blocked_launch(void **state)
{
	fx *f = *state;
	pt_summary *s;

	step(f, 1, 0, 1000);
	ev(f, PT_K_RUNTIME, f->cpu, 0, 10, "cudaLaunchKernel", 1);
	ev(f, PT_K_KERNEL, f->gpu, 20, 480, "gemm", 1);
	ev(f, PT_K_RUNTIME, f->cpu, 15, 5, "cudaLaunchKernel", 2);
	ev(f, PT_K_KERNEL, f->gpu, 500, 480, "gemm", 2);
	/* blocked from 30 us until gemm 1 ended at 500 */
	ev(f, PT_K_RUNTIME, f->cpu, 30, 475, "cudaLaunchKernel", 3);
	ev(f, PT_K_KERNEL, f->gpu, 980, 10, "add", 3);
	ev(f, PT_K_RUNTIME, f->cpu, 506, 2, "cudaLaunchKernel", 4);
	s = build(f);
	sums(s);
	/* [508,1000) cpu; back at 505, the blocked launch: [500,505) its
	 * return, then gemm 1 [20,500), its launch latency [10,20) and call
	 * [0,10) */
	assert_ms(s->cpath->steps[0].split[PT_CP_COMPUTE], 0.48);
	assert_ms(s->cpath->steps[0].split[PT_CP_LAUNCH], 0.005 + 0.002 + 0.01 + 0.01);
	assert_string_equal(s->cpath->steps[0].waits[0].call, "cudaLaunchKernel");
	assert_string_equal(s->cpath->steps[0].waits[0].target, "gemm");
	pt_summary_free(s);
}

/* The main thread waits in `## backward ##` while another thread works:
 * the path joins that thread. */
static void test_join(void **state)
{
	fx *f = *state;
	pt_summary *s;

	step(f, 1, 0, 1000);
	ev(f, PT_K_ANNOTATION, f->cpu, 100, 800, "## backward ##", 0);
	ev(f, PT_K_CPU_OP, f->cpu2, 150, 300, "MmBackward0", 0);
	ev(f, PT_K_CPU_OP, f->cpu2, 500, 390, "AddBackward0", 0);
	s = build(f);
	sums(s);
	assert_ms(s->cpath->steps[0].split[PT_CP_CPU], 1.0);
	assert_ms(fms(s, "AddBackward0", 0), 0.39);
	assert_ms(fms(s, "MmBackward0", 0), 0.0 + 0.3);
	assert_ms(fms(s, "## backward ##", 0), 0.8);
	assert_string_equal(s->cpath->steps[0].waits[0].target, "thread 2");
	assert_string_equal(s->cpath->steps[0].waits[0].span, "## backward ##");
	pt_summary_free(s);
}

/* Two steps: the functions carry one value per step. */
static void test_two_steps(void **state)
{
	fx *f = *state;
	pt_summary *s;

	step(f, 3, 0, 1000);
	step(f, 4, 1000, 1500);
	ev(f, PT_K_CPU_OP, f->cpu, 100, 200, "aten::mm", 0);
	ev(f, PT_K_CPU_OP, f->cpu, 1100, 700, "aten::mm", 0);
	s = build(f);
	sums(s);
	assert_int_equal(s->cpath->nsteps, 2);
	assert_int_equal(s->cpath->steps[1].number, 4);
	assert_ms(fms(s, "aten::mm", 0), 0.2);
	assert_ms(fms(s, "aten::mm", 1), 0.7);
	pt_summary_free(s);
}

/* No steps: one pass over the window, number -1, from the event that ends
 * last (a kernel), back through its launch. */
static void test_no_steps(void **state)
{
	fx *f = *state;
	pt_summary *s;

	ev(f, PT_K_CPU_OP, f->cpu, 0, 100, "aten::mm", 0);
	ev(f, PT_K_RUNTIME, f->cpu, 50, 10, "cudaLaunchKernel", 9);
	ev(f, PT_K_KERNEL, f->gpu, 70, 230, "gemm", 9);
	s = build(f);
	sums(s);
	assert_int_equal(s->cpath->nsteps, 1);
	assert_int_equal(s->cpath->steps[0].number, -1);
	assert_ms(s->cpath->steps[0].ms, 0.3);
	assert_ms(s->cpath->steps[0].split[PT_CP_COMPUTE], 0.23);
	assert_ms(s->cpath->steps[0].split[PT_CP_LAUNCH], 0.02);
	assert_ms(s->cpath->steps[0].split[PT_CP_CPU], 0.05);
	pt_summary_free(s);
}

/* The member survives a write and a read, and an older version reads
 * without it. */
static void test_roundtrip(void **state)
{
	fx *f = *state;
	pt_summary *s, *r;
	pt_sb sb = {0};
	pt_error err;
	size_t k;

	step(f, 5, 0, 1000);
	ev(f, PT_K_RUNTIME, f->cpu, 10, 20, "cudaLaunchKernel", 11);
	ev(f, PT_K_KERNEL, f->gpu, 40, 700, "gemm", 11);
	ev(f, PT_K_ANNOTATION, f->cpu, 100, 700, "## wait ##", 0);
	ev(f, PT_K_RUNTIME, f->cpu, 120, 660, "cudaMemcpyAsync", 12);
	ev(f, PT_K_MEMCPY, f->gpu, 740, 20, "Memcpy DtoH", 12);
	s = build(f);
	pt_summary_write(s, &sb);
	assert_false(sb.oom);
	pt_error_clear(&err);
	r = pt_summary_read_mem(sb.buf, sb.len, &err);
	if (!r)
		fail_msg("read back: %s", err.msg);
	assert_non_null(r->cpath);
	assert_int_equal(r->cpath->nsteps, 1);
	for (k = 0; k < PT_CP_NKINDS; k++)
		assert_true(r->cpath->steps[0].split[k] == s->cpath->steps[0].split[k]);
	assert_int_equal(r->cpath->nfuncs, s->cpath->nfuncs);
	assert_string_equal(r->cpath->steps[0].waits[0].behind, "gemm");
	assert_int_equal(r->cpath->steps[0].waits[0].behind_stream, 7);
	pt_summary_free(r);
	/* a bad member names itself */
	{
		const char *bad = "{\"format\":\"perftracker-summary\",\"version\":3,\"worker\":\"w\","
				  "\"file\":\"f\",\"host\":\"\",\"rank\":0,\"pid\":1,\"world_size\":1,"
				  "\"backend\":\"\",\"device\":\"\",\"warning\":null,\"nwarnings\":0,"
				  "\"truncated\":false,\"window\":{\"start_us\":0,\"ms\":1,\"from_steps\":true},"
				  "\"steps\":[],\"gpu_util\":0,\"class_ms\":{\"compute\":0,\"communication\":0,"
				  "\"memory\":0,\"runtime\":0,\"python\":0,\"idle\":1},\"nevents\":0,"
				  "\"critical_path\":{\"steps\":[{\"number\":1,\"ms\":-1,\"split\":{}}]},"
				  "\"patterns\":[]}";
		pt_error_clear(&err);
		assert_null(pt_summary_read_mem(bad, strlen(bad), &err));
		assert_non_null(strstr(err.msg, "'critical_path': step 0: 'ms' is not a duration"));
	}
	pt_sb_free(&sb);
	pt_summary_free(s);
}

/* The patterns of f's store built from the critical path's frame order
 * (pt_summary_build) are those patterns.c finds sorting the frames
 * itself (pt_patterns_build alone): same keys (every stack kept, those of
 * zero-length frames too: their nesting shows), counts and times. */
static void same_patterns(fx *f)
{
	pt_summary *s, *r = calloc(1, sizeof(*r));
	pt_summary_options opt;
	pt_window w;
	pt_error err;
	size_t i;

	assert_non_null(r);
	pt_summary_options_default(&opt);
	opt.min_python_ratio = 0;
	pt_error_clear(&err);
	s = pt_summary_build(&f->st, "w_0_1.json", &opt, &err);
	if (!s)
		fail_msg("build: %s", err.msg);
	pt_window_find(&f->st, &w);
	assert_int_equal(pt_patterns_build(&f->st, &w, &opt, r, &err), PT_OK);
	assert_int_equal(s->npatterns, r->npatterns);
	assert_true(s->npatterns > 0);
	for (i = 0; i < s->npatterns; i++) {
		assert_string_equal(s->patterns[i].key, r->patterns[i].key);
		assert_int_equal(s->patterns[i].count, r->patterns[i].count);
		assert_true(s->patterns[i].total_ms == r->patterns[i].total_ms);
		assert_true(s->patterns[i].bottleneck == r->patterns[i].bottleneck);
	}
	pt_summary_free(r);
	pt_summary_free(s);
}

/* Frames in file order out of start order, frames that start together
 * (longest first, then annotation before Python function before op), a
 * launch between them and a second thread: the index's order as it is. */
static void test_frame_order(void **state)
{
	fx *f = *state;

	step(f, 1, 0, 1000);
	step(f, 2, 1000, 1000);
	ev(f, PT_K_PYTHON, f->cpu, 100, 500, "a.py(1): a", 0);
	ev(f, PT_K_CPU_OP, f->cpu, 100, 200, "aten::mm", 0);
	ev(f, PT_K_ANNOTATION, f->cpu, 100, 500, "## fwd ##", 0);
	ev(f, PT_K_RUNTIME, f->cpu, 150, 10, "cudaLaunchKernel", 1);
	ev(f, PT_K_KERNEL, f->gpu, 200, 200, "gemm", 1);
	ev(f, PT_K_CPU_OP, f->cpu, 50, 30, "aten::zeros", 0);
	ev(f, PT_K_PYTHON, f->cpu, 1100, 800, "a.py(1): a", 0);
	ev(f, PT_K_CPU_OP, f->cpu, 1200, 100, "aten::mm", 0);
	ev(f, PT_K_CPU_OP, f->cpu2, 0, 1500, "aten::copy_", 0);
	ev(f, PT_K_CPU_OP, f->cpu, 2500, 100, "aten::late", 0);
	same_patterns(f);
}

/* The same with frames the index does not hold, merged in: zero-length
 * ops where longer frames start (they nest inside them) and alone, and an
 * op on a GPU stream's lane. */
static void test_frame_order_rest(void **state)
{
	fx *f = *state;

	step(f, 1, 0, 1000);
	step(f, 2, 1000, 1000);
	ev(f, PT_K_CPU_OP, f->cpu, 100, 0, "aten::empty", 0);
	ev(f, PT_K_PYTHON, f->cpu, 100, 500, "a.py(1): a", 0);
	ev(f, PT_K_CPU_OP, f->cpu, 100, 200, "aten::mm", 0);
	ev(f, PT_K_CPU_OP, f->cpu, 300, 0, "aten::view", 0);
	ev(f, PT_K_CPU_OP, f->cpu, 700, 0, "aten::view", 0);
	ev(f, PT_K_CPU_OP, f->cpu, 1100, 0, "aten::empty", 0);
	ev(f, PT_K_PYTHON, f->cpu, 1100, 800, "a.py(1): a", 0);
	ev(f, PT_K_CPU_OP, f->gpu, 500, 50, "aten::odd", 0);
	ev(f, PT_K_CPU_OP, f->cpu2, 0, 1500, "aten::copy_", 0);
	ev(f, PT_K_CPU_OP, f->cpu2, 1500, 0, "aten::view", 0);
	same_patterns(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_cpu_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_blocking_copy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_cross_stream, setup, teardown),
		cmocka_unit_test_setup_teardown(test_join, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cuda_sync, setup, teardown),
		cmocka_unit_test_setup_teardown(test_blocked_launch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_wait, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_steps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_steps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_frame_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_frame_order_rest, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
