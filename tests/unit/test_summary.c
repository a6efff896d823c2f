/*
 * test_summary.c - the summary on real traces and its JSON: GPU
 * utilisation and kernel counts of the 8 DLRM ranks against an independent
 * stdlib Python computation (tests/tools/dlrm_reference.txt, made by
 * tests/tools/dlrm_reference.py), write -> read round trips (hand-built and
 * real), failed workers, the reader's validation messages, atomic writes,
 * and that the public umbrella header compiles on its own.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "perftracker.h" /* the installed umbrella: must be enough */
#include "util/xalloc.h"

static const char *root_dir(void)
{
	const char *r = getenv("PT_ROOT");
	return r && *r ? r : ".";
}

static const char *data_dir(void)
{
	const char *d = getenv("PT_DATA");
	return d && *d ? d : "tests/data";
}

/* Doubles must survive the JSON exactly (shortest round-trip repr). */
static void same_double(double a, double b, const char *what)
{
	if (!(a == b || (isnan(a) && isnan(b))))
		fail_msg("%s: %.17g != %.17g", what, a, b);
}

static void same_str(const char *a, const char *b, const char *what)
{
	if (!a || !b) {
		if (a != b)
			fail_msg("%s: '%s' vs '%s'", what, a ? a : "(null)", b ? b : "(null)");
		return;
	}
	if (strcmp(a, b))
		fail_msg("%s: '%s' != '%s'", what, a, b);
}

static void same_summary(const pt_summary *a, const pt_summary *b)
{
	size_t i;
	int c;

	assert_int_equal(a->version, b->version);
	same_str(a->worker, b->worker, "worker");
	same_str(a->file, b->file, "file");
	same_str(a->host, b->host, "host");
	assert_int_equal(a->rank, b->rank);
	assert_int_equal(a->pid, b->pid);
	same_str(a->error, b->error, "error");
	if (a->error)
		return;
	assert_int_equal(a->world_size, b->world_size);
	same_str(a->backend, b->backend, "backend");
	same_str(a->device, b->device, "device");
	same_str(a->warning, b->warning, "warning");
	assert_int_equal(a->nwarnings, b->nwarnings);
	assert_int_equal(a->truncated, b->truncated);
	same_double(a->window_start_us, b->window_start_us, "window_start_us");
	same_double(a->window_ms, b->window_ms, "window_ms");
	assert_int_equal(a->window_from_steps, b->window_from_steps);
	assert_int_equal(a->nsteps, b->nsteps);
	for (i = 0; i < a->nsteps; i++) {
		assert_int_equal(a->step_numbers[i], b->step_numbers[i]);
		same_double(a->step_ms[i], b->step_ms[i], "step_ms");
	}
	same_double(a->gpu_util, b->gpu_util, "gpu_util");
	for (c = 0; c < PT_C_COUNT; c++)
		same_double(a->class_ms[c], b->class_ms[c], pt_class_name(c));
	assert_int_equal(a->nevents, b->nevents);
	assert_int_equal(a->npatterns, b->npatterns);
	for (i = 0; i < a->npatterns; i++) {
		const pt_pattern *p = &a->patterns[i], *q = &b->patterns[i];
		same_str(p->key, q->key, "key");
		assert_int_equal(p->cls, q->cls);
		assert_int_equal(p->kind, q->kind);
		assert_int_equal(p->count, q->count);
		same_double(p->total_ms, q->total_ms, "total_ms");
		same_double(p->median_ms, q->median_ms, "median_ms");
		same_double(p->p10_ms, q->p10_ms, "p10_ms");
		same_double(p->p90_ms, q->p90_ms, "p90_ms");
		same_double(p->mad_ms, q->mad_ms, "mad_ms");
		same_double(p->bottleneck, q->bottleneck, "bottleneck");
		same_double(p->exec_ratio, q->exec_ratio, "exec_ratio");
		same_double(p->bytes, q->bytes, "bytes");
		same_double(p->algbw_gbps, q->algbw_gbps, "algbw");
		same_double(p->busbw_gbps, q->busbw_gbps, "busbw");
		assert_int_equal(p->group, q->group);
	}
}

static pt_summary *roundtrip(const pt_summary *s)
{
	pt_sb sb = { 0 };
	pt_error err;
	pt_summary *r;

	pt_summary_write(s, &sb);
	assert_false(sb.oom);
	/* compact: one line, no indentation */
	assert_null(memchr(sb.buf, '\n', sb.len));
	assert_true(!strncmp(sb.buf, "{\"format\":\"perftracker-summary\",\"version\":1,", 44));
	pt_error_clear(&err);
	r = pt_summary_read_mem(sb.buf, sb.len, &err);
	if (!r)
		fail_msg("read back failed: %s", err.msg);
	pt_sb_free(&sb);
	return r;
}

/* A hand-built summary exercising every field, odd strings included. */
static pt_summary *sample(void)
{
	pt_store st;
	pt_event e;
	pt_error err;
	pt_summary *s;
	uint32_t cpu, gpu;
	static const char *names[] = { "gemm\"quoted\"\\|128_1_1", "ncclDevKernel_AllReduce_Sum_f32",
				       "caf\xc3\xa9.py(3): f", "aten::mm" };

	assert_int_equal(pt_store_init(&st), PT_OK);
	cpu = pt_store_lane(&st, 7, 7, 0);
	gpu = pt_store_lane(&st, 0, 7, 1);
	memset(&e, 0, sizeof(e));
	e.lane = gpu;
	e.kind = PT_K_KERNEL;
	e.name = pt_strtab_intern(st.strs, names[0], strlen(names[0]));
	e.ts = 1000001;
	e.dur = 333;
	assert_int_equal(pt_store_add(&st, &e), PT_OK);
	e.kind = PT_K_COMM_KERNEL;
	e.name = pt_strtab_intern(st.strs, names[1], strlen(names[1]));
	e.ts = 1000200;
	e.dur = 777;
	e.bytes = 12345;
	e.group = 4;
	assert_int_equal(pt_store_add(&st, &e), PT_OK);
	memset(&e, 0, sizeof(e));
	e.lane = cpu;
	e.kind = PT_K_PYTHON;
	e.name = pt_strtab_intern(st.strs, names[2], strlen(names[2]));
	e.ts = 999000;
	e.dur = 5000;
	assert_int_equal(pt_store_add(&st, &e), PT_OK);
	e.kind = PT_K_CPU_OP;
	e.name = pt_strtab_intern(st.strs, names[3], strlen(names[3]));
	e.ts = 999100;
	e.dur = 1000;
	assert_int_equal(pt_store_add(&st, &e), PT_OK);
	assert_int_equal(pt_store_add_step(&st, 41, 999000, 2500), PT_OK);
	assert_int_equal(pt_store_add_step(&st, 40, 998000, 1000), PT_OK);
	st.rank = 3;
	st.world_size = 4;
	st.backend = pt_strtab_intern(st.strs, "nccl", 4);
	st.device_name = pt_strtab_intern(st.strs, "NVIDIA \"X\"", 10);
	pt_store_warn(&st, "a warning with \ttab");
	st.truncated = 1;
	pt_error_clear(&err);
	s = pt_summary_build(&st, "dir/n-1.x_3_77.json.gz", NULL, &err);
	assert_non_null(s);
	pt_store_free(&st);
	return s;
}

static void test_roundtrip_sample(void **state)
{
	pt_summary *s = sample(), *r;
	const pt_pattern *p = NULL;
	size_t i;

	assert_int_equal(s->nsteps, 2);
	assert_int_equal(s->step_numbers[0], 40);
	assert_true(s->npatterns >= 4);
	for (i = 0; i < s->npatterns; i++)
		if (s->patterns[i].cls == PT_C_COMM)
			p = &s->patterns[i];
	assert_non_null(p);
	assert_true(p->bytes == 12345 && p->group == 4 && p->busbw_gbps > 0);
	r = roundtrip(s);
	same_summary(s, r);
	pt_summary_free(r);

	/* NaN and infinities are written as null and read back as NaN */
	s->patterns[0].mad_ms = NAN;
	s->gpu_util = INFINITY;
	r = roundtrip(s);
	assert_true(isnan(r->patterns[0].mad_ms));
	assert_true(isnan(r->gpu_util));
	pt_summary_free(r);
	pt_summary_free(s);
}

static void test_roundtrip_failed(void **state)
{
	pt_summary *s = pt_summary_failed("/x/h_2_9.json", "'h_2_9.json': bad (at byte 7)");
	pt_summary *r;
	pt_sb sb = { 0 };

	pt_summary_write(s, &sb);
	assert_non_null(strstr(sb.buf, "\"error\":\"'h_2_9.json': bad (at byte 7)\""));
	assert_null(strstr(sb.buf, "patterns"));
	pt_sb_free(&sb);
	r = roundtrip(s);
	same_summary(s, r);
	assert_int_equal(r->rank, 2);
	assert_int_equal(r->npatterns, 0);
	pt_summary_free(r);
	pt_summary_free(s);
}

/* ---- the reader's validation --------------------------------------------- */

static void expect_bad(const char *json, int code, const char *want)
{
	pt_error err;
	pt_summary *s;

	pt_error_clear(&err);
	s = pt_summary_read_mem(json, strlen(json), &err);
	if (s)
		fail_msg("accepted: %s", json);
	assert_int_equal(err.code, code);
	if (!strstr(err.msg, want))
		fail_msg("message '%s' lacks '%s'", err.msg, want);
}

#define HEAD "{\"format\":\"perftracker-summary\",\"version\":1,\"worker\":\"w\",\"file\":\"f\","
#define GOOD_TAIL                                                                           \
	"\"world_size\":2,\"gpu_util\":0.5,\"nevents\":3,"                                  \
	"\"window\":{\"start_us\":1,\"ms\":2,\"from_steps\":false},\"steps\":[],"            \
	"\"class_ms\":{\"compute\":1,\"communication\":0,\"memory\":0,\"runtime\":0,"       \
	"\"python\":0,\"idle\":1},"

static void test_reader_errors(void **state)
{
	pt_error err;
	pt_summary *s;
	const char *ok = HEAD "\"rank\":0,\"pid\":1," GOOD_TAIL
		"\"patterns\":[{\"key\":\"k\",\"class\":\"compute\",\"kind\":\"kernel\",\"count\":2,"
		"\"total_ms\":1,\"median_ms\":0.5,\"p10_ms\":0.5,\"p90_ms\":0.5,\"mad_ms\":0,"
		"\"bottleneck\":0.5,\"exec_ratio\":0.5,\"future_field\":[1,2]}],\"future\":{}}";

	/* the minimal good document (unknown members are ignored) */
	pt_error_clear(&err);
	s = pt_summary_read_mem(ok, strlen(ok), &err);
	if (!s)
		fail_msg("%s", err.msg);
	assert_string_equal(s->host, "");
	assert_string_equal(s->backend, "");
	assert_null(s->warning);
	assert_int_equal(s->truncated, 0);
	assert_int_equal(s->npatterns, 1);
	assert_int_equal(s->patterns[0].count, 2);
	pt_summary_free(s);

	expect_bad("{\"format\":", PT_EPARSE, "");
	expect_bad("[1]", PT_EFORMAT, "not a perftracker summary");
	expect_bad("{\"format\":\"other\",\"version\":1}", PT_EFORMAT, "not a perftracker summary");
	expect_bad("{\"format\":\"perftracker-summary\",\"version\":2}", PT_EFORMAT,
		   "unsupported summary version 2 (this build reads version 1)");
	expect_bad("{\"format\":\"perftracker-summary\"}", PT_EFORMAT, "'version' is missing");
	expect_bad("{\"format\":\"perftracker-summary\",\"version\":1,\"file\":\"f\"}", PT_EFORMAT,
		   "'worker' is missing");
	expect_bad(HEAD "\"rank\":\"0\",\"pid\":1}", PT_EFORMAT, "'rank' is not an integer");
	expect_bad(HEAD "\"rank\":0.5,\"pid\":1}", PT_EFORMAT, "'rank' is not an integer");
	expect_bad(HEAD "\"rank\":0,\"pid\":1," GOOD_TAIL "\"patterns\":{}}", PT_EFORMAT,
		   "'patterns' is missing or not an array");
	expect_bad(HEAD "\"rank\":0,\"pid\":1,\"world_size\":2,\"gpu_util\":\"x\"}", PT_EFORMAT,
		   "'gpu_util' is not a number");
	expect_bad(HEAD "\"rank\":0,\"pid\":1," GOOD_TAIL "\"patterns\":[{\"key\":\"k\","
		   "\"class\":\"gpu\",\"kind\":\"kernel\"}]}",
		   PT_EFORMAT, "pattern 0: unknown class 'gpu'");
	expect_bad(HEAD "\"rank\":0,\"pid\":1," GOOD_TAIL "\"patterns\":[{\"key\":\"k\","
		   "\"class\":\"compute\",\"kind\":\"kernel\",\"count\":-1}]}",
		   PT_EFORMAT, "pattern 0: 'count' is not a non-negative integer");
	expect_bad(HEAD "\"rank\":0,\"pid\":1," GOOD_TAIL "\"patterns\":[7]}", PT_EFORMAT,
		   "pattern 0: is not an object");
	expect_bad(HEAD "\"rank\":0,\"pid\":1,\"world_size\":2,\"gpu_util\":0.5,\"nevents\":3,"
		   "\"window\":{\"start_us\":1,\"ms\":2}}",
		   PT_EFORMAT, "window: 'from_steps' is missing");
	expect_bad(HEAD "\"rank\":0,\"pid\":1,\"world_size\":2,\"truncated\":1}", PT_EFORMAT,
		   "'truncated' is not true or false");
}

/* ---- files ------------------------------------------------------------- */

static void test_files(void **state)
{
	char dir[] = "/tmp/pt_test_summaryXXXXXX", path[256], bad[300];
	pt_summary *s = sample(), *r;
	pt_error err;
	struct dirent *de;
	DIR *d;
	int n = 0;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.json", dir);
	pt_error_clear(&err);
	assert_int_equal(pt_summary_write_file(s, path, &err), PT_OK);
	/* overwrite in place */
	assert_int_equal(pt_summary_write_file(s, path, &err), PT_OK);
	d = opendir(dir);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	assert_int_equal(n, 1); /* no temporary left behind */
	r = pt_summary_read_file(path, &err);
	assert_non_null(r);
	same_summary(s, r);
	pt_summary_free(r);

	/* a garbled file: error names the file and the offset */
	f = fopen(path, "w");
	fputs("{\"format\":\"perftracker-summary\",\n  x", f);
	fclose(f);
	pt_error_clear(&err);
	assert_null(pt_summary_read_file(path, &err));
	assert_string_equal(err.subject, path);
	assert_int_equal(err.offset, 35); /* the x */
	/* well-formed but not a summary: subject is the file */
	f = fopen(path, "w");
	fputs("{\"traceEvents\":[]}", f);
	fclose(f);
	pt_error_clear(&err);
	assert_null(pt_summary_read_file(path, &err));
	assert_string_equal(err.subject, path);
	assert_int_equal(err.code, PT_EFORMAT);
	unlink(path);
	/* missing file */
	pt_error_clear(&err);
	assert_null(pt_summary_read_file(path, &err));
	assert_int_equal(err.code, PT_EIO);
	assert_string_equal(err.subject, path);
	/* unwritable place */
	snprintf(bad, sizeof(bad), "%s/no/such/dir/out.json", dir);
	pt_error_clear(&err);
	assert_int_equal(pt_summary_write_file(s, bad, &err), PT_EIO);
	assert_string_equal(err.subject, bad);
	assert_non_null(strstr(err.msg, "cannot create"));
	rmdir(dir);
	pt_summary_free(s);
}

/* ---- real traces ----------------------------------------------------------- */

/* Each DLRM rank: window, GPU utilisation and kernel counts equal the
 * independent Python computation; classes sum to the window; the JSON
 * round trip is exact. */
static void test_dlrm_reference(void **state)
{
	char ref[512], path[1024], name[256];
	long long wns, busy, nk, nn;
	pt_summary_options opt;
	pt_error err;
	FILE *f;
	int rank = 0;

	snprintf(ref, sizeof(ref), "%s/tests/tools/dlrm_reference.txt", root_dir());
	f = fopen(ref, "r");
	if (!f)
		fail_msg("cannot open %s", ref);
	pt_summary_options_default(&opt);
	while (fscanf(f, "%255s %lld %lld %lld %lld", name, &wns, &busy, &nk, &nn) == 5) {
		pt_summary *s, *r;
		uint64_t kern = 0, nccl = 0;
		double sum = 0, own = 0;
		size_t i;
		int c;

		snprintf(path, sizeof(path), "%s/dlrm/%s", data_dir(), name);
		pt_error_clear(&err);
		s = pt_summary_from_trace(path, &opt, &err);
		if (!s)
			fail_msg("%s: %s", path, err.msg);
		assert_int_equal(s->window_from_steps, 1);
		same_double(s->window_ms, (double)wns / 1e6, "window_ms");
		if (fabs(s->gpu_util - (double)busy / (double)wns) > 1e-9)
			fail_msg("%s: gpu_util %.17g, reference %.17g", name, s->gpu_util,
				 (double)busy / (double)wns);
		for (i = 0; i < s->npatterns; i++) {
			if (s->patterns[i].kind == PT_K_KERNEL)
				kern += s->patterns[i].count;
			if (s->patterns[i].kind == PT_K_COMM_KERNEL)
				nccl += s->patterns[i].count;
			own += s->patterns[i].bottleneck;
		}
		if (kern != (uint64_t)nk || nccl != (uint64_t)nn)
			fail_msg("%s: %llu kernels + %llu nccl, reference %lld + %lld", name,
				 (unsigned long long)kern, (unsigned long long)nccl, nk, nn);
		for (c = 0; c < PT_C_COUNT; c++)
			sum += s->class_ms[c];
		assert_true(fabs(sum - s->window_ms) < 1e-9);
		/* Python stacks below the threshold are dropped: owned <= busy */
		assert_true(own * s->window_ms <= s->window_ms - s->class_ms[PT_C_IDLE] + 1e-9);
		assert_int_equal(s->rank, rank);
		assert_int_equal(s->world_size, 8);
		assert_string_equal(s->backend, "nccl");
		assert_string_equal(s->device, "Tesla V100-SXM2-32GB");
		assert_int_equal(s->nsteps, 1);
		assert_int_equal(s->truncated, 0);
		assert_string_equal(s->worker, name);
		r = roundtrip(s);
		same_summary(s, r);
		pt_summary_free(r);
		pt_summary_free(s);
		rank++;
	}
	fclose(f);
	assert_int_equal(rank, 8);
}

/* Without the Python threshold every stack is kept, and then the
 * patterns' owned time is exactly the non-idle time. */
static void test_dlrm_all_stacks(void **state)
{
	char path[1024];
	pt_summary_options opt;
	pt_summary *s;
	pt_error err;
	double own = 0;
	size_t i, npy = 0;

	snprintf(path, sizeof(path), "%s/dlrm/worker3_step_12.1694128201557.pt.trace.json",
		 data_dir());
	pt_summary_options_default(&opt);
	opt.min_python_ratio = 0;
	opt.max_python = (size_t)-1;
	pt_error_clear(&err);
	s = pt_summary_from_trace(path, &opt, &err);
	assert_non_null(s);
	for (i = 0; i < s->npatterns; i++) {
		own += s->patterns[i].bottleneck;
		npy += s->patterns[i].cls == PT_C_PYTHON;
	}
	assert_true(fabs(own * s->window_ms - (s->window_ms - s->class_ms[PT_C_IDLE])) < 1e-9);
	pt_summary_free(s);

	opt.max_python = 3;
	s = pt_summary_from_trace(path, &opt, &err);
	assert_non_null(s);
	for (i = 0; i < s->npatterns; i++)
		npy -= s->patterns[i].cls == PT_C_PYTHON;
	assert_true(npy > 3);
	pt_summary_free(s);
}

static void test_from_trace_errors(void **state)
{
	char dir[] = "/tmp/pt_test_traceXXXXXX", path[256];
	pt_error err;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/bad_0_1.json", dir);
	f = fopen(path, "w");
	fputs("{\"traceEvents\": [ {\"ph\": \"X\", \"cat\": \"kernel\", ]}", f);
	fclose(f);
	pt_error_clear(&err);
	assert_null(pt_summary_from_trace(path, NULL, &err));
	assert_string_equal(err.subject, path);
	assert_true(err.offset >= 0);
	unlink(path);
	pt_error_clear(&err);
	assert_null(pt_summary_from_trace(path, NULL, &err));
	assert_string_equal(err.subject, path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_sample),
		cmocka_unit_test(test_roundtrip_failed),
		cmocka_unit_test(test_reader_errors),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_dlrm_reference),
		cmocka_unit_test(test_dlrm_all_stacks),
		cmocka_unit_test(test_from_trace_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
