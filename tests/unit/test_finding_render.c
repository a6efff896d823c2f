/*
 * test_finding_render.c - unit tests for the finding model and its one
 * renderer (src/report/phrase.c, finding.c): for each cause kind a finding
 * filled by hand with the numbers of a real report (the traces in
 * tests/data and shared/traces that report_diff runs) renders the sentence
 * that report.json's "explanation" holds, byte for byte; the text style
 * names workers by their labels; pt_report_add_finding resolves the labels
 * once from the report's "workers" and writes the typed keys after the
 * seed's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/phrase.h"
#include "report/report.h"

#define NM(a) (sizeof(a) / sizeof((a)[0]))

static char out[4096];

/* The text report's labels: rank N for "wN.json", none for the rest. */
static const char *label(const void *ctx, const char *id)
{
	static char b[32];
	int n;

	(void)ctx;
	if (sscanf(id, "w%d.json", &n) != 1)
		return NULL;
	snprintf(b, sizeof(b), "rank %d", n);
	return b;
}

static const char *render(const pt_finding *f, int text)
{
	pt_sb sb = { 0 };

	pt_finding_render(f, text ? label : NULL, NULL, &sb);
	snprintf(out, sizeof(out), "%s", sb.buf ? sb.buf : "");
	pt_sb_free(&sb);
	return out;
}

static pt_finding one(pt_cause cause, const char *const *ws, const pt_metric *m, size_t nm,
		      const char *const *args, size_t nargs)
{
	pt_finding f;

	memset(&f, 0, sizeof(f));
	f.cause = cause;
	f.workers = ws;
	f.nworkers = ws ? 1 : 0;
	f.metrics = m;
	f.nmetrics = nm;
	f.args = args;
	f.nargs = nargs;
	return f;
}

static void test_share_of_time(void **state)
{
	const char *ws[] = { "facebook_timesformer-base-finetuned-k400__1016002.json.gz" };
	const pt_metric m[] = { { "bottleneck ratio", 0.137134100093252, PT_UNIT_SHARE },
				{ "others", 0.0, PT_UNIT_SHARE },
				{ "ms per step", 52.4586695, PT_UNIT_MS_STEP } };
	const char *a[] = { "transformers/image_transforms.py: normalize (called from "
			    "transformers/image_processing_utils.py: normalize)", "",
			    "a CPU-side stall or extra CPU work in this function on this worker" };
	pt_finding f = one(PT_CAUSE_SHARE, ws, m, NM(m), a, NM(a));

	(void)state;
	assert_string_equal(render(&f, 0),
		"worker facebook_timesformer-base-finetuned-k400__1016002.json.gz spends 13.7% of "
		"its time in transformers/image_transforms.py: normalize (called from "
		"transformers/image_processing_utils.py: normalize), other workers 0.0%: a CPU-side "
		"stall or extra CPU work in this function on this worker (about 52.5 ms per step)");
	/* no label known: the text style keeps "worker ID" */
	assert_string_equal(render(&f, 1), out);
	assert_string_equal(pt_cause_name(f.cause), "share of time");
}

static void test_slow_calls_by_rank(void **state)
{
	const char *ws[] = { "w3.json" };
	const pt_metric m[] = { { "median duration (ms)", 36.622, PT_UNIT_MS },
				{ "others", 15.379999999999999, PT_UNIT_MS },
				{ "ms per step", 42.484, PT_UNIT_MS_STEP } };
	const char *a[] = { "gloo:all_reduce", "gloo allreduce", "the collective takes longer" };
	pt_finding f = one(PT_CAUSE_SLOW_CALLS, ws, m, NM(m), a, NM(a));

	(void)state;
	assert_string_equal(render(&f, 0),
		"each gloo:all_reduce (gloo allreduce) takes 36.6 ms on worker w3.json, other "
		"workers 15.4 ms: the collective takes longer (about 42.5 ms per step)");
	assert_string_equal(render(&f, 1),
		"each gloo:all_reduce (gloo allreduce) takes 36.6 ms on rank 3, other "
		"workers 15.4 ms: the collective takes longer (about 42.5 ms per step)");
}

static void test_waits_for_peer_names_the_late_one(void **state)
{
	const char *ws[] = { "w0.json" };
	const pt_metric m[] = { { "throughput std (%)", 31.2, PT_UNIT_NONE },
				{ "others", 12.5, PT_UNIT_NONE },
				{ "link peak (%)", 96.1, PT_UNIT_NONE },
				{ "link average (%)", 20.25, PT_UNIT_NONE },
				{ "others' link peak (%)", 95.0, PT_UNIT_NONE },
				{ "ms per step", 3.14159, PT_UNIT_MS_STEP } };
	pt_sb who = { 0 };
	const char *a[3] = { "nccl:all_reduce", "NVLink" };
	pt_finding f;

	(void)state;
	pt_who_token(&who, 'W', "w5.json", -1);
	pt_sb_adds(&who, ", whose nccl:all_reduce is the shortest: it arrives last");
	a[2] = who.buf;
	f = one(PT_CAUSE_WAITS_FOR_PEER, ws, m, NM(m), a, NM(a));
	assert_string_equal(render(&f, 0),
		"worker w0.json waits for a late peer in nccl:all_reduce (NVLink): the link idles "
		"and then runs at full speed (std 31.2%, peak 96.1%, average 20.2%; other workers "
		"std 12.5%, peak 95%) (worker w5.json, whose nccl:all_reduce is the shortest: it "
		"arrives last) (about 3.14 ms per step)");
	assert_string_equal(render(&f, 1),
		"rank 0 waits for a late peer in nccl:all_reduce (NVLink): the link idles "
		"and then runs at full speed (std 31.2%, peak 96.1%, average 20.2%; other workers "
		"std 12.5%, peak 95%) (rank 5, whose nccl:all_reduce is the shortest: it "
		"arrives last) (about 3.14 ms per step)");
	pt_sb_free(&who);
}

static void test_gpu_waits_and_busier(void **state)
{
	const char *ws[] = { "saxpy-mpi-cuda_nsys_perlmutter0.sqlite" };
	const pt_metric m[] = { { "gpu utilization", 0.043765343938319407, PT_UNIT_SHARE },
				{ "others", 0.47611213652882, PT_UNIT_SHARE } };
	pt_finding f = one(PT_CAUSE_GPU_WAITS, ws, m, NM(m), NULL, 0);

	(void)state;
	assert_string_equal(render(&f, 0),
		"worker saxpy-mpi-cuda_nsys_perlmutter0.sqlite keeps its GPU busy 4.4% of the time, "
		"other workers 47.6%: its GPU waits more (for the CPU, input data or other workers); "
		"see this worker's other findings");
	f.cause = PT_CAUSE_GPU_BUSIER;
	assert_string_equal(render(&f, 0),
		"worker saxpy-mpi-cuda_nsys_perlmutter0.sqlite keeps its GPU busy 4.4% of the time, "
		"other workers 47.6%: its GPU has more work or runs slower (see \"workers with "
		"potential GPU issues\")");
}

static void test_slow_kernels(void **state)
{
	const char *ws[] = { "sampled_rank-1.json.gz" };
	const pt_metric m[] = { { "median cost per execution (ms)", 28.619999999999997, PT_UNIT_MS },
				{ "others", 11.7345, PT_UNIT_MS },
				{ "slow kernels", 31, PT_UNIT_COUNT },
				{ "ms per step", 28.785250000000005, PT_UNIT_MS_STEP },
				{ "time lost (share of window)", 0.04648056302594961, PT_UNIT_SHARE },
				{ "slower by", 1.4389620350249261, PT_UNIT_SHARE } };
	const char *a[] = { "split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_"
			    "cta_per_row_1", "" };
	pt_finding f = one(PT_CAUSE_SLOW_KERNELS, ws, m, NM(m), a, NM(a));

	(void)state;
	assert_string_equal(render(&f, 0),
		"worker sampled_rank-1.json.gz runs 31 compute kernels slower than the other "
		"workers, losing about 28.8 ms per step (4.6%); the costliest, split_embedding_"
		"backward_codegen_rowwise_adagrad_unweighted_kernel_cta_per_row_1, takes 28.6 ms per "
		"execution, other workers 11.7 ms (143.9% slower): a slower GPU on this worker "
		"(clocks, temperature, power or a hardware fault)");
}

static void test_low_occupancy(void **state)
{
	const char *ws[] = { "event_sync_trace.json.gz" };
	const pt_metric m[] = { { "est. achieved occupancy %", -1, PT_UNIT_NONE },
				{ "bottleneck ratio", 0.011414077362079899, PT_UNIT_SHARE },
				{ "blocks per SM", 0.0093, PT_UNIT_NONE },
				{ "registers per thread", 16, PT_UNIT_COUNT },
				{ "shared memory per block", 0, PT_UNIT_BYTES } };
	const char *a[] = { "at::cuda::(anonymous namespace)::spin_kernel",
			    "(occupancy not estimated)",
			    ": its grid does not fill the GPU (fewer blocks than SMs); larger batches "
			    "or a split-K/stream-K variant fill it" };
	pt_finding f = one(PT_CAUSE_LOW_OCCUPANCY, ws, m, NM(m), a, NM(a));

	(void)state;
	assert_string_equal(render(&f, 0),
		"event_sync_trace.json.gz: `at::cuda::(anonymous namespace)::spin_kernel` takes 1.1% "
		"of the window (occupancy not estimated), 0.01 blocks per SM, 16 registers per "
		"thread, 0 bytes of shared memory per block: its grid does not fill the GPU (fewer "
		"blocks than SMs); larger batches or a split-K/stream-K variant fill it.");
}

static void test_gpu_idle_kinds(void **state)
{
	const char *ws[] = { "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz" };
	const pt_metric m[] = { { "gpu idle", 0.025583006188799922, PT_UNIT_SHARE },
				{ "idle (ms)", 10.086851, PT_UNIT_MS },
				{ "window (ms)", 394.279348, PT_UNIT_MS },
				{ "compute", 0.9651641556432724, PT_UNIT_SHARE },
				{ "communication not overlapped", 0.0, PT_UNIT_SHARE },
				{ "memory operations", 0.009252838167927577, PT_UNIT_SHARE } };
	const char *a[] = { "profiled steps", "By cause: none recorded. Largest cause: ..." };
	pt_finding f = one(PT_CAUSE_GPU_BOUND, ws, m, NM(m), a, NM(a));

	(void)state;
	assert_string_equal(render(&f, 0),
		"rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz: the GPU is idle only 2.6% of the "
		"profiled steps (10.1 of 394.3 ms): compute 96.5%, communication not overlapped "
		"with compute 0.0%, memory operations 0.9%. The GPU is the bottleneck: the heaviest "
		"kernels (GPU Compute) are where time can be won.");
	f.cause = PT_CAUSE_GPU_IDLE;
	assert_string_equal(render(&f, 0),
		"rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz: the GPU is idle 2.6% of the "
		"profiled steps (10.1 of 394.3 ms; compute 96.5%, communication not overlapped "
		"with compute 0.0%, memory operations 0.9%). By cause: none recorded. Largest "
		"cause: ...");
	f.cause = PT_CAUSE_CPU_ONLY;
	assert_string_equal(render(&f, 0),
		"rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz: the trace records no GPU kernel or "
		"memory operation in its profiled steps (394.3 ms): a CPU-only run; where its time "
		"goes is in \"Python functions\" and the class breakdown.");
}

static void test_steps_kinds(void **state)
{
	const char *ws[] = { "w0.json" };
	const pt_metric m[] = { { "slow steps", 2, PT_UNIT_COUNT },
				{ "typical step (ms)", 115.02, PT_UNIT_MS },
				{ "steps", 6, PT_UNIT_COUNT },
				{ "slow step, mean (ms)", 166.3, PT_UNIT_MS },
				{ "slower (x)", 166.3 / 115.02, PT_UNIT_X } };
	const pt_metric mj[] = { { "slow steps (job)", 1, PT_UNIT_COUNT },
				 { "median step (ms)", 70.25, PT_UNIT_MS },
				 { "workers slow there", 3, PT_UNIT_COUNT },
				 { "workers with several steps", 4, PT_UNIT_COUNT },
				 { "slow step, median (ms)", 99.96, PT_UNIT_MS } };
	const char *a[] = { "1011 and 1014", "take", "; both wait in `## wait_sparse_data_dist ##`." };
	const char *aj[] = { "step 7 is" };
	pt_finding f = one(PT_CAUSE_SLOW_STEPS, ws, m, NM(m), a, NM(a));

	(void)state;
	assert_string_equal(render(&f, 0),
		"w0.json: steps 1011 and 1014 (2 of 6) take 1.45x the others (166.3 vs 115.0 ms); "
		"both wait in `## wait_sparse_data_dist ##`.");
	assert_string_equal(render(&f, 1),
		"rank 0: steps 1011 and 1014 (2 of 6) take 1.45x the others (166.3 vs 115.0 ms); "
		"both wait in `## wait_sparse_data_dist ##`.");
	f = one(PT_CAUSE_JOB_SLOW_STEPS, ws, mj, NM(mj), aj, NM(aj));
	assert_string_equal(render(&f, 0),
		"step 7 is slow on 3 of the 4 workers with several steps: 100.0 ms (median over "
		"workers and steps) against a median step of 70.2 ms; a step slow everywhere is the "
		"job's, not one worker's (in lockstep every worker waits for the slowest). Its extra "
		"time is largest on w0.json: see that worker's step finding.");
}

static void test_straggler_what_if(void **state)
{
	const char *ws[] = { "vm_2_18243.json.gz" };
	const pt_metric m[] = { { "others_waited_ms", 138.274, PT_UNIT_MS },
				{ "late arrivals", 4, PT_UNIT_COUNT },
				{ "collectives", 15, PT_UNIT_COUNT },
				{ "workers that waited", 2, PT_UNIT_COUNT },
				{ "others waited in all (ms)", 276.548618, PT_UNIT_MS },
				{ "others waited each (ms)", 138.274309, PT_UNIT_MS },
				{ "others' median wait (ms)", 15.80529825, PT_UNIT_MS },
				{ "step saved (ms)", 18.30921566666665, PT_UNIT_MS_STEP },
				{ "step saved (%)", 13.15718817286985, PT_UNIT_NONE } };
	pt_sb who = { 0 };
	const char *a[4] = { NULL, "", "", " 2 symptom findings are folded under this one." };
	pt_finding f;
	static const char json[] =
		"rank 2 (vm_2_18243.json.gz) is the worker the others waited for: it arrived last at "
		"4 of 15 collectives, and the other 2 workers waited 276.55 ms for it in all (138.27 "
		"ms each on average, against a median of 15.81 ms for the other workers). If it "
		"arrived like the median worker, a step would take 120.85 ms instead of 139.16 ms "
		"(-18.31 ms, -13.2%). 2 symptom findings are folded under this one.";

	(void)state;
	pt_who_token(&who, 'R', ws[0], 2);
	a[0] = who.buf;
	f = one(PT_CAUSE_STRAGGLER, ws, m, NM(m), a, NM(a));
	f.has_what_if = 1;
	f.what_if_ms = 120.84829600000002;
	f.instead_ms = 139.15751166666666;
	assert_string_equal(render(&f, 0), json);
	/* the text style: the rank alone when the label is that rank, else
	 * the rank and the label */
	assert_int_equal(strncmp(render(&f, 1), "rank 2 (vm_2_18243.json.gz) is", 30), 0);
	/* a what-if that saves nothing that shows at 0.01 ms says so, never
	 * "16.13 ms instead of 16.13 ms" (the straggler of 5,000 generated
	 * workers, whose next latest peer arrives within us of it) */
	f.what_if_ms = 16.126 - 0.000004;
	f.instead_ms = 16.126;
	assert_non_null(strstr(render(&f, 0), "15.81 ms for the other workers). If it arrived like "
				"the median worker, a step would take no less (16.13 ms): the next "
				"latest worker arrives about as late. 2 symptom"));
	assert_null(strstr(out, "instead of"));
	assert_int_equal(pt_what_if_shows(&f), 0);
	f.what_if_ms = 16.116;
	assert_int_equal(pt_what_if_shows(&f), 1);
	pt_sb_free(&who);
}

/* The same cause on several workers, one finding (docs/diagnose.md "One
 * finding per cause"): the worst one's sentence, then the group, worst
 * first, with the what-if of fixing all of them (the 50 DtoD workers of
 * 50,000 generated ones, bench/gen_summaries.py). */
static void test_grouped_across_workers(void **state)
{
	const char *ws[] = { "w0.json", "w1000.json", "w2000.json", "w3000.json", "w4000.json" };
	const pt_metric m[] = { { "bottleneck ratio", 0.04, PT_UNIT_SHARE },
				{ "others", 0.00017898, PT_UNIT_SHARE },
				{ "ms per step", 0.5756128, PT_UNIT_MS_STEP },
				{ "workers with it", 5, PT_UNIT_COUNT },
				{ "ms per step on them all", 2.878, PT_UNIT_MS_STEP } };
	const char *a[] = { "Memcpy DtoD (Device -> Device)", "",
			    "extra device-to-device copies on this worker" };
	pt_finding f = one(PT_CAUSE_SHARE, ws, m, NM(m), a, NM(a));

	(void)state;
	f.nworkers = NM(ws);
	f.grouped = 1;
	f.group_ms = 2.878;
	f.has_what_if = 1;
	f.instead_ms = 14.455;
	f.what_if_ms = 14.455 - 0.5756128;
	assert_string_equal(render(&f, 0),
		"worker w0.json spends 4.0% of its time in Memcpy DtoD (Device -> Device), other "
		"workers 0.02%: extra device-to-device copies on this worker (about 0.576 ms per "
		"step); the same on 5 workers, worst first: w0.json, w1000.json, w2000.json and 2 "
		"more (2.88 ms per step on them all). Fixed on all of them, a step of the worst one "
		"would take 13.88 ms instead of 14.46 ms (-0.58 ms, -4.0%), and so would the job's "
		"in lockstep (it waits for the slowest of them)");
	/* the text style names them by label */
	assert_non_null(strstr(render(&f, 1), "worst first: rank 0, rank 1000, rank 2000 and 2 more"));
	/* two workers: "A and B"; a what-if that saves nothing shown: no clause */
	f.nworkers = 2;
	f.what_if_ms = f.instead_ms;
	assert_non_null(strstr(render(&f, 0), "; the same on 2 workers, worst first: w0.json and "
				"w1000.json (2.88 ms per step on them all)"));
	assert_null(strstr(out, "Fixed on all"));
}

static void test_mismatch_and_unreadable(void **state)
{
	const char *ws[] = { "w4.json" };
	const pt_metric m[] = { { "collectives_mismatch", 1, PT_UNIT_COUNT } };
	const pt_metric mu[] = { { "error", 1, PT_UNIT_COUNT }, { "traces", 2, PT_UNIT_COUNT } };
	pt_sb who = { 0 }, list = { 0 };
	const char *a[2] = { NULL, "12 collectives, the others 14" }, *au[1];
	const char *wu[] = { "benchmark_simple_add_et.json.gz" };
	pt_finding f;

	(void)state;
	pt_who_token(&who, 'R', ws[0], 4);
	a[0] = who.buf;
	f = one(PT_CAUSE_MISMATCH, ws, m, NM(m), a, NM(a));
	assert_string_equal(render(&f, 0),
		"rank 4 (w4.json): its collectives do not match the other workers' (12 collectives, "
		"the others 14); it is left out of the lockstep analysis (who waited for whom), the "
		"rest goes on.");
	assert_string_equal(render(&f, 1),
		"rank 4: its collectives do not match the other workers' (12 collectives, "
		"the others 14); it is left out of the lockstep analysis (who waited for whom), the "
		"rest goes on.");
	pt_who_token(&list, 'I', wu[0], -1);
	pt_sb_adds(&list, " (not a trace: no traceEvents array)");
	au[0] = list.buf;
	f = one(PT_CAUSE_UNREADABLE, wu, mu, NM(mu), au, 1);
	assert_string_equal(render(&f, 0),
		"1 of 2 traces could not be analysed and are left out: benchmark_simple_add_et."
		"json.gz (not a trace: no traceEvents array)");
	pt_sb_free(&who);
	pt_sb_free(&list);
}

static void test_other_steps(void **state)
{
	const char *ws[] = { "vm_2_30071.json" };
	const pt_metric m[] = { { "steps", 2, PT_UNIT_COUNT }, { "others", 2, PT_UNIT_COUNT },
				{ "workers with the same steps", 2, PT_UNIT_COUNT },
				{ "workers with steps", 4, PT_UNIT_COUNT } };
	const char *a[] = { "31-32", "30-31" };
	pt_finding f = one(PT_CAUSE_OTHER_STEPS, ws, m, NM(m), a, NM(a));

	(void)state;
	assert_string_equal(render(&f, 0),
		"Worker vm_2_30071.json profiled steps 31-32, while 2 of 4 workers profiled steps "
		"30-31: it is compared with them across different iterations (it armed late, or "
		"counts steps differently); read its numbers with care.");
}

static void test_hang_kinds(void **state)
{
	const char *ws[] = { "h_1.json" };
	const pt_metric m[] = { { "seconds since last step", 102.576, PT_UNIT_NONE },
				{ "others", 102.576, PT_UNIT_NONE },
				{ "last step", 500, PT_UNIT_COUNT },
				{ "no step for (s)", 102.57614016532898, PT_UNIT_NONE },
				{ "pid", 26549, PT_UNIT_NONE } };
	const char *a[] = { "node7", "/job/train.py: stuck_here" };
	pt_finding f = one(PT_CAUSE_HUNG, ws, m, NM(m), a, NM(a));

	(void)state;
	assert_string_equal(render(&f, 0),
		"worker h_1.json is stuck in /job/train.py: stuck_here (last step 500, no step for "
		"102.6 s) while the others are elsewhere: the likely cause of the hang");
	f.cause = PT_CAUSE_DEAD;
	assert_string_equal(render(&f, 0),
		"worker h_1.json is dead: its process 26549 on node7 is gone (last step 500); the "
		"other workers cannot pass their next collective without it");
	f.cause = PT_CAUSE_LOST;
	assert_string_equal(render(&f, 0),
		"worker h_1.json is lost: no heartbeat from node7 (last step 500)");
}

static void test_frames_inside_clause(void **state)
{
	const char *ws[] = { "w1.json" };
	const pt_metric m[] = { { "bottleneck ratio", 0.05, PT_UNIT_SHARE },
				{ "others", 0.001, PT_UNIT_SHARE },
				{ "ms per step", 0.964, PT_UNIT_MS_STEP } };
	const char *a[] = { "forward", "", "a CPU-side stall" };
	pt_finding f = one(PT_CAUSE_SHARE, ws, m, NM(m), a, NM(a));

	(void)state;
	f.ninside = 2;
	f.inside_ms = 4.6;
	assert_string_equal(render(&f, 1),
		"rank 1 spends 5.0% of its time in forward, other workers 0.1%: a CPU-side stall "
		"(about 0.964 ms per step); with the 2 frames inside it, about 4.60 ms per step");
}

static void test_text_style_escapes_control_bytes(void **state)
{
	pt_finding f;

	(void)state;
	memset(&f, 0, sizeof(f));
	f.explanation = "odd \x1b[31m name";
	assert_string_equal(render(&f, 0), "odd \x1b[31m name");
	assert_null(strchr(render(&f, 1), '\x1b'));
}

static void test_num_format_styles(void **state)
{
	char b[64];

	(void)state;
	assert_string_equal(pt_num_format(0.000512, PT_UNIT_SHARE, NULL, b, sizeof(b)), "0.05%");
	assert_string_equal(pt_num_format(0.1234, PT_UNIT_SHARE, "%", b, sizeof(b)), "12.3%");
	assert_string_equal(pt_num_format(NAN, PT_UNIT_SHARE, "%", b, sizeof(b)), "n/a");
	assert_string_equal(pt_num_format(36.622, PT_UNIT_MS, NULL, b, sizeof(b)), "36.6 ms");
	assert_string_equal(pt_num_format(0.25, PT_UNIT_MS, "ms", b, sizeof(b)), "250 \xc2\xb5s");
	assert_string_equal(pt_num_format(31, PT_UNIT_COUNT, NULL, b, sizeof(b)), "31");
	assert_string_equal(pt_num_format(120.84829600000002, PT_UNIT_MS, ".2f", b, sizeof(b)),
			    "120.85");
	assert_string_equal(pt_num_format(52.4586695, PT_UNIT_MS_STEP, ".3g", b, sizeof(b)), "52.5");
}

static void test_add_finding_labels_and_keys(void **state)
{
	pt_report *r = pt_report_new();
	pt_rv *ws = pt_rv_obj(r, pt_report_root(r), "workers");
	const char *w[] = { "w3.json" }, *w2[] = { "x.json" };
	const pt_metric m[] = { { "median duration (ms)", 36.622, PT_UNIT_MS },
				{ "others", 15.38, PT_UNIT_MS },
				{ "ms per step", 42.484, PT_UNIT_MS_STEP } };
	const char *a[] = { "gloo:all_reduce", "gloo allreduce", "why" };
	const int64_t steps[] = { 5, 9 };
	pt_finding f = one(PT_CAUSE_SLOW_CALLS, w, m, NM(m), a, NM(a)), g;
	const pt_finding *got;
	pt_sb sb = { 0 };
	size_t n;

	(void)state;
	pt_rv_int(r, pt_rv_obj(r, ws, "w3.json"), "rank", 3);
	pt_rv_int(r, pt_rv_obj(r, ws, "x.json"), "rank", -1);
	f.category = "Communication";
	f.metric = "median duration (ms)";
	f.value = 36.622;
	f.others = 15.38;
	f.steps = steps;
	f.nsteps = 2;
	f.has_what_if = 1;
	f.what_if_ms = 10;
	f.instead_ms = 12.5;
	assert_int_equal(pt_report_add_finding(r, &f), 0);
	g = one(PT_CAUSE_NONE, w2, NULL, 0, NULL, 0);
	g.category = "summary";
	g.metric = "error";
	g.value = 1;
	g.explanation = "as given";
	assert_int_equal(pt_report_add_finding(r, &g), 0);
	got = pt_report_findings(r, &n);
	assert_int_equal(n, 2);
	assert_string_equal(got[0].labels[0], "rank 3");
	assert_string_equal(got[1].labels[0], "x.json");
	assert_string_equal(got[0].explanation,
		"each gloo:all_reduce (gloo allreduce) takes 36.6 ms on worker w3.json, other "
		"workers 15.4 ms: why (about 42.5 ms per step)");
	pt_report_json(pt_rv_get(pt_report_root(r), "findings"), 0, &sb);
	assert_non_null(strstr(sb.buf,
		"\"explanation\": \"each gloo:all_reduce (gloo allreduce) takes 36.6 ms on worker "
		"w3.json, other workers 15.4 ms: why (about 42.5 ms per step)\",\n"
		"        \"view\": \"communication\",\n"
		"        \"labels\": [\n            \"rank 3\"\n        ],\n"
		"        \"cause\": \"slow calls\",\n"
		"        \"metrics\": [\n            {\n                \"name\": \"median duration "
		"(ms)\",\n                \"value\": 36.622,\n                \"unit\": \"ms\"\n"));
	assert_non_null(strstr(sb.buf, "\"unit\": \"ms per step\""));
	assert_non_null(strstr(sb.buf, "\"steps\": [\n            5,\n            9\n        ],\n"
				       "        \"what if\": {\n            \"step (ms)\": 10.0,\n"
				       "            \"instead of (ms)\": 12.5\n        }"));
	/* a finding without typed numbers: its headline alone, no view */
	assert_non_null(strstr(sb.buf, "\"explanation\": \"as given\",\n        \"labels\": [\n"
				       "            \"x.json\"\n        ],\n        \"cause\": \"\",\n"
				       "        \"metrics\": [\n            {\n                \"name\": "
				       "\"error\",\n                \"value\": 1.0,\n                "
				       "\"unit\": \"\"\n"));
	pt_sb_free(&sb);
	pt_report_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_share_of_time),
		cmocka_unit_test(test_slow_calls_by_rank),
		cmocka_unit_test(test_waits_for_peer_names_the_late_one),
		cmocka_unit_test(test_gpu_waits_and_busier),
		cmocka_unit_test(test_slow_kernels),
		cmocka_unit_test(test_low_occupancy),
		cmocka_unit_test(test_gpu_idle_kinds),
		cmocka_unit_test(test_steps_kinds),
		cmocka_unit_test(test_straggler_what_if),
		cmocka_unit_test(test_grouped_across_workers),
		cmocka_unit_test(test_mismatch_and_unreadable),
		cmocka_unit_test(test_other_steps),
		cmocka_unit_test(test_hang_kinds),
		cmocka_unit_test(test_frames_inside_clause),
		cmocka_unit_test(test_text_style_escapes_control_bytes),
		cmocka_unit_test(test_num_format_styles),
		cmocka_unit_test(test_add_finding_labels_and_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
