/*
 * test_summary.c - the summary on real traces and its JSON: GPU
 * utilisation and kernel counts of the 8 DLRM ranks against an independent
 * stdlib Python computation (tests/tools/dlrm_reference.txt, made by
 * tests/tools/dlrm_reference.py), write -> read round trips (hand-built and
 * real), failed workers, the reader's validation messages, atomic writes,
 * and that the public umbrella header compiles on its own; the single-pass
 * reader (summary_parse.c): write -> read -> write byte identity on every
 * trace in tests/data, numbers bit-exact against strtod, errors with
 * offsets for wrong types, bad syntax, every truncation, deep nesting,
 * members in any order, and the shared key set.
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
#include "analysis/summary_parse.h"
#include "util/jsonnum.h"
#include "analysis/summary_format.h"
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
	/* collective instances (version 2) */
	assert_int_equal(a->ncoll_chans, b->ncoll_chans);
	for (i = 0; i < a->ncoll_chans; i++)
		same_str(a->coll_chans[i], b->coll_chans[i], "coll_chans");
	assert_int_equal(a->ncoll_names, b->ncoll_names);
	for (i = 0; i < a->ncoll_names; i++)
		same_str(a->coll_names[i], b->coll_names[i], "coll_names");
	assert_int_equal(a->ncoll, b->ncoll);
	for (i = 0; i < a->ncoll; i++) {
		assert_int_equal(a->coll[i].chan, b->coll[i].chan);
		assert_int_equal(a->coll[i].name, b->coll[i].name);
		same_double(a->coll[i].arrive_us, b->coll[i].arrive_us, "arrive_us");
		same_double(a->coll[i].end_us, b->coll[i].end_us, "end_us");
	}
	assert_int_equal(a->ncoll_cause, b->ncoll_cause);
	for (i = 0; i < a->ncoll_cause; i++) {
		assert_int_equal(a->coll_cause[i].inst, b->coll_cause[i].inst);
		assert_int_equal(a->coll_cause[i].pat, b->coll_cause[i].pat);
		same_double(a->coll_cause[i].ms, b->coll_cause[i].ms, "cause ms");
	}
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
	assert_true(!strncmp(sb.buf, "{\"format\":\"perftracker-summary\",\"version\":5,", 44));
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
	expect_bad("{\"format\":\"perftracker-summary\",\"version\":6}", PT_EFORMAT,
		   "unsupported summary version 6 (this build reads versions 1 to 5)");
	expect_bad("{\"format\":\"perftracker-summary\",\"version\":1.5}", PT_EFORMAT,
		   "unsupported summary version 1.5");
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
	assert_string_equal(err.msg, "cannot write: No such file or directory");
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


/* The number reader (util/jsonnum.c) as the tests below use it: bytes
 * consumed, 0 for a grammar error (*err_at: the offending byte), -1 for
 * out of range. */
static long num_read(const char *s, size_t len, double *out, size_t *err_at)
{
	size_t end = 0;
	pt_jsonnum_status st = pt_jsonnum_parse(s, len, out, &end);

	if (st == PT_JSONNUM_OK)
		return (long)end;
	if (err_at)
		*err_at = end;
	return st == PT_JSONNUM_RANGE ? -1 : 0;
}

/* ---- the single-pass reader (summary_parse.c) -------------------------------- */

/* Every number token of a summary's JSON (after ':' '[' or ','), read by
 * the parser and by strtod: bit for bit the same. */
static size_t check_numbers(const char *json, size_t len)
{
	size_t i, n = 0;

	for (i = 1; i < len; i++) {
		char c = json[i], prev = json[i - 1], tok[400];
		size_t j = i, used = 0;
		double a, b;
		long r;

		if (!((c == '-' || (c >= '0' && c <= '9')) && (prev == ':' || prev == ',' || prev == '[')))
			continue;
		while (j < len && strchr("-+.eE0123456789", json[j]))
			j++;
		assert_true(j - i < sizeof(tok));
		memcpy(tok, json + i, j - i);
		tok[j - i] = 0;
		r = num_read(json + i, j - i, &a, &used);
		b = strtod(tok, NULL);
		if (r != (long)(j - i) || memcmp(&a, &b, sizeof(a)))
			fail_msg("number '%s': parsed %.17g (%ld), strtod %.17g", tok, a, r, b);
		n++;
		i = j;
	}
	return n;
}

/* write -> read -> write gives the same bytes, and the numbers are exact. */
static size_t check_bytes_roundtrip(const pt_summary *s, const char *what)
{
	pt_sb a = { 0 }, b = { 0 };
	pt_summary *r, *r2;
	pt_summary_keys *ks;
	pt_error err;
	size_t n;

	pt_summary_write(s, &a);
	assert_false(a.oom);
	pt_error_clear(&err);
	r = pt_summary_read_mem(a.buf, a.len, &err);
	if (!r)
		fail_msg("%s: read back failed: %s (at byte %lld)", what, err.msg,
			 (long long)err.offset);
	same_summary(s, r);
	pt_summary_write(r, &b);
	if (a.len != b.len || memcmp(a.buf, b.buf, a.len))
		fail_msg("%s: write -> read -> write changed the bytes", what);
	/* the same through a shared key set */
	ks = pt_summary_keys_new();
	assert_non_null(ks);
	r2 = pt_summary_parse(a.buf, a.len, ks, &err);
	assert_non_null(r2);
	same_summary(r, r2);
	assert_int_equal(pt_summary_keys_count(ks) <= r2->npatterns, 1);
	n = check_numbers(a.buf, a.len);
	pt_summary_free_shared(r2);
	pt_summary_keys_free(ks);
	pt_summary_free(r);
	pt_sb_free(&b);
	pt_sb_free(&a);
	return n;
}

static int is_trace_name(const char *n)
{
	size_t l = strlen(n);

	/* *.summary.json are worker summaries (tests/data/demo_cpu4), not traces */
	if (l > 13 && !strcmp(n + l - 13, ".summary.json"))
		return 0;
	return (l > 5 && !strcmp(n + l - 5, ".json")) || (l > 8 && !strcmp(n + l - 8, ".json.gz")) ||
	       (l > 7 && !strcmp(n + l - 7, ".sqlite"));
}

static void walk_traces(const char *dir, void (*fn)(const char *path, void *ctx), void *ctx)
{
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		fail_msg("cannot open %s", dir);
	while ((de = readdir(d))) {
		char path[2048];
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (stat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode))
			walk_traces(path, fn, ctx);
		else if (is_trace_name(de->d_name))
			fn(path, ctx);
	}
	closedir(d);
}

typedef struct rt_count {
	size_t traces, failed, numbers, patterns;
} rt_count;

static void roundtrip_trace(const char *path, void *ctx)
{
	rt_count *c = ctx;
	pt_summary_options opt[2];
	int k;

	pt_summary_options_default(&opt[0]);
	pt_summary_options_default(&opt[1]);
	opt[1].min_python_ratio = 0; /* every stack: more keys and numbers */
	opt[1].max_python = (size_t)-1;
	for (k = 0; k < 2; k++) {
		pt_error err;
		pt_summary *s;
		char msg[1024];

		pt_error_clear(&err);
		s = pt_summary_from_trace(path, &opt[k], &err);
		if (!s) {
			/* not a trace we read: its failed-worker summary round-trips */
			pt_error_format(&err, msg, sizeof(msg));
			s = pt_summary_failed(path, msg);
			c->failed += k == 0;
		}
		assert_non_null(s);
		c->numbers += check_bytes_roundtrip(s, path);
		c->patterns += s->npatterns;
		pt_summary_free(s);
	}
	c->traces++;
}

static void test_roundtrip_all_traces(void **state)
{
	rt_count c = { 0 };

	walk_traces(data_dir(), roundtrip_trace, &c);
	/* the 8 DLRM ranks, legacy, HTA, TraceLens, Kineto, nsys exports */
	assert_true(c.traces >= 19);
	assert_true(c.failed <= 2);
	assert_true(c.numbers > 50000);
	assert_true(c.patterns > 5000);
	print_message("%zu traces (%zu not summarisable), %zu patterns, %zu numbers exact\n",
		      c.traces, c.failed, c.patterns, c.numbers);
}

/* A legacy trace's pid (5468608689857868806) is beyond 2^53: integers are
 * read exactly, not through a double. */
static void test_big_integers(void **state)
{
	char path[1024];
	pt_summary *s, *r;

	snprintf(path, sizeof(path), "%s/legacy/legacy_gloo.json", data_dir());
	s = pt_summary_from_trace(path, NULL, NULL);
	assert_non_null(s);
	assert_true(s->pid > ((int64_t)1 << 53));
	r = roundtrip(s);
	assert_int_equal(r->pid, s->pid);
	pt_summary_free(r);
	pt_summary_free(s);
}

static void num_ok(const char *txt, double want)
{
	double v = -12345;
	size_t at = 0;
	long r = num_read(txt, strlen(txt), &v, &at);

	if (r != (long)strlen(txt) || memcmp(&v, &want, sizeof(v)))
		fail_msg("'%s': %ld, %.17g (want %.17g)", txt, r, v, want);
}

static void num_bad(const char *txt, long want_r, size_t want_at)
{
	double v;
	size_t at = 12345;
	long r = num_read(txt, strlen(txt), &v, &at);

	if (r != want_r || (want_r == 0 && at != want_at))
		fail_msg("'%s': %ld at %zu (want %ld at %zu)", txt, r, at, want_r, want_at);
}

static uint64_t rng = 0x243f6a8885a308d3ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void test_numbers(void **state)
{
	static const char *hard[] = {
		/* ties and near-ties, the normal/subnormal boundary, the top */
		"9007199254740993", "9007199254740995", "9007199254740993.0000000001",
		"2.2250738585072011e-308", "2.2250738585072014e-308", "4.9406564584124654e-324",
		"2.4703282292062327e-324", "2.4703282292062328e-324", "1.7976931348623157e308",
		"1.7976931348623158e308", "0.1", "0.3", "1e23", "8.98846567431158e307",
		"0.1000000000000000055511151231257827021181583404541015625",
		"7.2057594037927933e16", "1448997445238699", "1694128201426674.0",
		"0.45458318920788654", "0.003077291085189328", "123456789012345678901234567890",
		"-0.0", "0", "-0", "1e-400", "0e999999999999", "5e-324", "1.0E+2", "12345678e-3",
		"0.000000000000000000000000000000000001", "100000000000000000000000",
		"15.0e-1", "123456789012345678.0", "12345678901234567890.0", "9007199254740993.000",
		"4503599627370497.5", "0.10000000000000000",
	};
	char buf[64];
	size_t i;
	long k, n = 0;

	for (i = 0; i < sizeof(hard) / sizeof(hard[0]); i++)
		num_ok(hard[i], strtod(hard[i], NULL));
	num_ok("-0", -0.0);
	/* grammar errors: offset of the offending byte; overflow: -1 */
	num_bad("-", 0, 1);
	num_bad("-a", 0, 1);
	num_bad("1.", 0, 2);
	num_bad("1.e5", 0, 2);
	num_bad("1e", 0, 2);
	num_bad("1e+", 0, 3);
	num_bad(".5", 0, 0);
	num_bad("+1", 0, 0);
	num_bad("1e400", -1, 0);
	num_bad("-1.8e308", -1, 0);
	/* a number ends where the grammar ends ("01": "0", then the caller
	 * sees the '1') */
	{
		double v;

		assert_int_equal(num_read("01", 2, &v, NULL), 1);
		assert_int_equal(num_read("1.5,", 4, &v, NULL), 3);
	}
	/* random doubles, shortest and 17-digit forms, random digit strings */
	for (k = 0; k < 300000; k++) {
		uint64_t bits = next_rand();
		double d, a = 0, b;
		size_t at;
		long r;

		memcpy(&d, &bits, sizeof(d));
		if (!isfinite(d))
			continue;
		switch (k % 3) {
		case 0:
			snprintf(buf, sizeof(buf), "%.17g", d);
			break;
		case 1:
			snprintf(buf, sizeof(buf), "%.*g", (int)(1 + next_rand() % 16),
				 ldexp((double)(next_rand() >> 11), -(int)(next_rand() % 80)));
			break;
		default: {
			int nd = 1 + (int)(next_rand() % 19), j;
			char *o = buf;

			for (j = 0; j < nd; j++) {
				*o++ = (char)('1' + next_rand() % 9);
				if (j == 0 && nd > 1 && next_rand() % 2)
					*o++ = '.';
			}
			snprintf(o, sizeof(buf) - (size_t)(o - buf), "e%d",
				 (int)(next_rand() % 660) - 340);
		}
		}
		r = num_read(buf, strlen(buf), &a, &at);
		b = strtod(buf, NULL);
		if (r < 0 && isinf(b))
			continue;
		if (r != (long)strlen(buf) || memcmp(&a, &b, sizeof(a)))
			fail_msg("'%s': %.17g, strtod %.17g", buf, a, b);
		n++;
	}
	assert_true(n > 250000);
}

/* The error for json: code, offset and a part of the message. */
static void expect_at(const char *json, size_t len, int code, int64_t off, const char *want)
{
	pt_error err;
	pt_summary *s;

	pt_error_clear(&err);
	s = pt_summary_read_mem(json, len, &err);
	if (s)
		fail_msg("accepted: %.*s", (int)len, json);
	if (err.code != code || err.offset != off || !strstr(err.msg, want))
		fail_msg("%.*s\n  gave code %d at %lld '%s', want %d at %lld '%s'", (int)len, json,
			 err.code, (long long)err.offset, err.msg, code, (long long)off, want);
}

#define OKDOC                                                                                   \
	HEAD "\"rank\":0,\"pid\":1," GOOD_TAIL                                                   \
	"\"patterns\":[{\"key\":\"k\",\"class\":\"compute\",\"kind\":\"kernel\",\"count\":2,"  \
	"\"total_ms\":1,\"median_ms\":0.5,\"p10_ms\":0.5,\"p90_ms\":0.5,\"mad_ms\":0,"        \
	"\"bottleneck\":0.5,\"exec_ratio\":0.5}]}"

/* Replace the value of "member" (its first occurrence) by repl. */
static char *with_value(const char *doc, const char *member, const char *repl, int64_t *voff)
{
	char pat[64];
	const char *m, *v, *e;
	char *out;
	int depth = 0;

	snprintf(pat, sizeof(pat), "\"%s\":", member);
	m = strstr(doc, pat);
	assert_non_null(m);
	v = m + strlen(pat);
	/* the value ends at the ',' '}' or ']' that closes it */
	for (e = v; *e; e++) {
		if (*e == '"') {
			for (e++; *e != '"'; e++)
				if (*e == '\\')
					e++;
			continue;
		}
		if (*e == '{' || *e == '[')
			depth++;
		else if ((*e == '}' || *e == ']') && depth)
			depth--;
		else if ((*e == ',' || *e == '}' || *e == ']') && !depth)
			break;
	}
	out = malloc(strlen(doc) + strlen(repl) + 1);
	assert_non_null(out);
	sprintf(out, "%.*s%s%s", (int)(v - doc), doc, repl, e);
	*voff = v - doc;
	return out;
}

static void test_reader_wrong_types(void **state)
{
	static const struct {
		const char *member, *repl, *msg;
	} cases[] = {
		{ "worker", "7", "'worker' is not a string" },
		{ "file", "null", "'file' is not a string" },
		{ "rank", "true", "'rank' is not an integer >= -1" },
		{ "rank", "-2", "'rank' is not an integer >= -1" },
		{ "pid", "9223372036854775808", "'pid' is not an integer >= -1" },
		{ "pid", "1e300", "'pid' is not an integer >= -1" },
		{ "world_size", "[]", "'world_size' is not an integer" },
		{ "gpu_util", "{}", "'gpu_util' is not a number" },
		{ "gpu_util", "\"0.5\"", "'gpu_util' is not a number" },
		{ "nevents", "-1", "'nevents' is not a non-negative integer" },
		{ "nevents", "0.5", "'nevents' is not a non-negative integer" },
		{ "window", "[1]", "'window' is missing or not an object" },
		{ "start_us", "\"x\"", "window: 'start_us' is not a number" },
		{ "from_steps", "1", "window: 'from_steps' is not true or false" },
		{ "steps", "{}", "'steps' is missing or not an array" },
		{ "class_ms", "null", "'class_ms' is missing or not an object" },
		{ "runtime", "false", "class_ms: 'runtime' is not a number" },
		{ "patterns", "\"p\"", "'patterns' is missing or not an array" },
		{ "key", "1", "pattern 0: 'key' is not a string" },
		{ "class", "\"idle\"", "pattern 0: unknown class 'idle'" },
		{ "kind", "\"kernel\\u0000\"", "pattern 0: unknown kind" },
		{ "kind", "[\"kernel\"]", "pattern 0: 'kind' is not a string" },
		{ "count", "2.5", "pattern 0: 'count' is not a non-negative integer" },
		{ "count", "99999999999999999999", "pattern 0: 'count' is not a non-negative integer" },
		{ "bottleneck", "true", "pattern 0: 'bottleneck' is not a number" },
		{ "exec_ratio", "{\"a\":[1,2]}", "pattern 0: 'exec_ratio' is not a number" },
		/* out of range (issue 11): named, never turned into inf% */
		{ "gpu_util", "-3", "'gpu_util' is -3, out of range [0, 1]" },
		{ "gpu_util", "1.5", "'gpu_util' is 1.5, out of range [0, 1]" },
		{ "ms", "0", "window: 'ms' is 0, out of range (0, 1e+09]" },
		{ "ms", "-2", "window: 'ms' is -2, out of range (0, 1e+09]" },
		{ "ms", "1e308", "window: 'ms' is 1e+308, out of range (0, 1e+09]" },
		{ "compute", "-1", "class_ms: 'compute' is -1, out of range [0, 1e+09]" },
		{ "median_ms", "1e308", "pattern 0: 'median_ms' is 1e+308, out of range [0, 1e+09]" },
		{ "total_ms", "-0.5", "pattern 0: 'total_ms' is -0.5, out of range [0, 1e+09]" },
		{ "bottleneck", "7", "pattern 0: 'bottleneck' is 7, out of range [0, 1]" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t off;
		char *doc = with_value(OKDOC, cases[i].member, cases[i].repl, &off);

		expect_at(doc, strlen(doc), PT_EFORMAT, off, cases[i].msg);
		free(doc);
	}
	/* the group size must fit in 32 bits; "bytes" may be null (NaN) */
	{
		int64_t off;
		char *doc = with_value(OKDOC, "exec_ratio", "0.5,\"group\":4294967296", &off);

		expect_at(doc, strlen(doc), PT_EFORMAT, off + 12, "pattern 0: 'group' is too large");
		free(doc);
	}
	/* a missing member: the offset of the object that lacks it */
	{
		int64_t off;
		char *doc = with_value(OKDOC, "window", "{\"start_us\":1,\"ms\":2}", &off);

		expect_at(doc, strlen(doc), PT_EFORMAT, off, "window: 'from_steps' is missing");
		free(doc);
		doc = with_value(OKDOC, "patterns", "[{},{\"key\":\"k\"}]", &off);
		expect_at(doc, strlen(doc), PT_EFORMAT, off + 1, "pattern 0: 'key' is missing");
		free(doc);
	}
	expect_at(HEAD "\"rank\":0,\"pid\":1}", strlen(HEAD "\"rank\":0,\"pid\":1}"), PT_EFORMAT, 0,
		  "invalid summary: 'world_size' is missing");
}

/* Syntax errors: the byte offset of the fault, json.c's messages. */
static void test_reader_syntax(void **state)
{
	static const struct {
		const char *json;
		int64_t off;
		const char *msg;
	} cases[] = {
		{ "", 0, "empty input" },
		{ "  \n", 3, "no json value (only whitespace)" },
		{ "{\"format\":\"perftracker-summary\"} x", 33, "trailing characters" },
		{ "{\"format\":\"perftracker-summary\",}", 32, "expected '\"' starting an object key" },
		{ "{\"format\" \"x\"}", 10, "expected ':'" },
		{ "{\"format\":\"perftracker-summary\" \"version\":1}", 32, "expected ',' or '}'" },
		{ "{\"a\":[1,]}", 8, "expected a json value" },
		{ "{\"a\":[1 2]}", 8, "expected ',' or ']'" },
		{ "{\"a\":tru}", 5, "expected a json value" },
		{ "{\"a\":\"x\\qy\"}", 7, "invalid escape in string" },
		{ "{\"a\":\"x\\u12\"}", 7, "invalid \\u escape" },
		{ "{\"a\":\"x\\u12g4\"}", 7, "invalid \\u escape" },
		{ "{\"a\":\"x\ty\"}", 7, "control character in string" },
		{ "{\"a\":\"x\xc3(\"}", 7, "invalid utf-8 in string" },
		{ "{\"a\":\"x\xed\xa0\x80\"}", 7, "invalid utf-8 in string" },
		{ "{\"a\":\"abc", 5, "unterminated string" },
		{ "{\"a\":\"abcdefghijklmnopqrstuvwxyz\\", 5, "unterminated string" },
		{ "{\"a\":[1,2", 5, "unterminated array" },
		{ "{\"a\":1", 0, "unterminated object" },
		{ "{\"a\":-}", 6, "invalid number" },
		{ "{\"a\":1.}", 7, "digit expected after '.'" },
		{ "{\"a\":1e}", 7, "digit expected in exponent" },
		{ "{\"a\":01}", 6, "expected ',' or '}'" },
		{ "{\"a\":1e999}", 5, "number out of range" },
		{ "{\"a\":\x01}", 5, "unexpected byte 0x01" },
		/* in known members too */
		{ "{\"format\":\"perftracker-summary\",\"version\":1,\"rank\":1e999}", 51,
		  "number out of range" },
		{ "{\"format\":\"perftracker-summary\",\"version\":1,\"worker\":\"a\\x\"}", 55,
		  "invalid escape" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_at(cases[i].json, strlen(cases[i].json), PT_EPARSE, cases[i].off, cases[i].msg);
	/* a NUL byte is data, not the end */
	expect_at("{\"a\":1}\0", 8, PT_EPARSE, 7, "trailing characters");
}

/* Every prefix of a real summary is an error with an offset inside it,
 * and reading never touches a byte past the end (ASan). */
static void test_reader_truncated(void **state)
{
	pt_summary *s = sample();
	pt_sb sb = { 0 };
	size_t n;

	pt_summary_write(s, &sb);
	assert_false(sb.oom);
	for (n = 0; n < sb.len; n++) {
		/* an exact-size copy, so ASan sees any read past the end */
		char *cut = malloc(n ? n : 1);
		pt_error err;

		memcpy(cut, sb.buf, n);
		pt_error_clear(&err);
		if (pt_summary_read_mem(cut, n, &err))
			fail_msg("a prefix of %zu bytes was accepted", n);
		if (err.code != PT_EPARSE || err.offset < 0 || (size_t)err.offset > n || !err.msg[0])
			fail_msg("prefix %zu: code %d at %lld: %s", n, err.code, (long long)err.offset,
				 err.msg);
		free(cut);
	}
	pt_sb_free(&sb);
	pt_summary_free(s);
}

static char *nested(const char *pre, int depth, const char *post)
{
	size_t pl = strlen(pre), ql = strlen(post);
	char *d = malloc(pl + 2 * (size_t)depth + ql + 1);
	int i;

	memcpy(d, pre, pl);
	for (i = 0; i < depth; i++) {
		d[pl + i] = '[';
		d[pl + depth + i] = ']';
	}
	memcpy(d + pl + 2 * depth, post, ql + 1);
	return d;
}

static void test_reader_nesting(void **state)
{
	/* an unknown member at depth 1 holding arrays nested 255 deep is
	 * fine (json.c's limit: 256 levels in all), 256 deep is not */
	const char *pre = "{\"future\":";
	pt_error err;
	pt_summary *s;
	char *d, *ok, post[1024];
	size_t len;

	snprintf(post, sizeof(post), ",%s", OKDOC + 1);
	d = nested(pre, 255, post);
	pt_error_clear(&err);
	s = pt_summary_read_mem(d, strlen(d), &err);
	if (!s)
		fail_msg("%s", err.msg);
	pt_summary_free(s);
	free(d);
	d = nested(pre, 256, post);
	expect_at(d, strlen(d), PT_EPARSE, (int64_t)strlen(pre) + 255, "nesting deeper than 256");
	free(d);
	/* a million levels: an error, no stack overflow */
	d = nested(pre, 1000000, "}");
	len = strlen(d);
	expect_at(d, len, PT_EPARSE, (int64_t)strlen(pre) + 255, "nesting deeper than 256");
	free(d);
	/* the same inside a pattern */
	ok = with_value(OKDOC, "exec_ratio", "0.5,\"deep\":[[[[{\"x\":[{}]}]]]]", (int64_t[]){ 0 });
	s = pt_summary_read_mem(ok, strlen(ok), &err);
	assert_non_null(s);
	pt_summary_free(s);
	free(ok);
}

/* Members in any order, unknown ones anywhere, the first of duplicates. */
static void test_reader_forward_compat(void **state)
{
	const char *reordered =
		"{\"patterns\":[{\"exec_ratio\":0.5,\"x\":{\"y\":[null,true,\"\\u00e9\"]},"
		"\"bottleneck\":0.5,\"mad_ms\":0,\"p90_ms\":0.5,\"p10_ms\":0.5,\"median_ms\":0.5,"
		"\"total_ms\":1,\"count\":2,\"kind\":\"kernel\",\"class\":\"compute\",\"key\":\"k\","
		"\"key\":\"second\"}],"
		"\"class_ms\":{\"idle\":1,\"python\":0,\"runtime\":0,\"memory\":0,\"communication\":0,"
		"\"compute\":1,\"gpu\":9},\"steps\":[{\"ms\":2.5,\"number\":7,\"when\":1}],"
		"\"window\":{\"from_steps\":false,\"ms\":2,\"start_us\":1,\"unit\":\"us\"},"
		"\"nevents\":3,\"gpu_util\":0.5,\"world_size\":2,\"pid\":1,\"rank\":0,\"file\":\"f\","
		"\"worker\":\"w\",\"rank\":\"ignored duplicate\",\"version\":1,"
		"\"format\":\"perftracker-summary\"}";
	pt_summary *a, *b;
	pt_error err;

	pt_error_clear(&err);
	a = pt_summary_read_mem(OKDOC, strlen(OKDOC), &err);
	b = pt_summary_read_mem(reordered, strlen(reordered), &err);
	if (!a || !b)
		fail_msg("%s", err.msg);
	assert_string_equal(b->patterns[0].key, "k");
	assert_int_equal(b->nsteps, 1);
	assert_int_equal(b->step_numbers[0], 7);
	b->nsteps = 0; /* the only difference */
	same_summary(a, b);
	b->nsteps = 1;
	pt_summary_free(b);
	pt_summary_free(a);

	/* "format" and "version" last: a wrong type before them is only
	 * reported once the file is known to be a summary */
	expect_at("{\"rank\":\"x\",\"format\":\"other\"}", 30, PT_EFORMAT, 21,
		  "not a perftracker summary");
	expect_at("{\"rank\":\"x\",\"version\":6,\"format\":\"perftracker-summary\"}", 55, PT_EFORMAT,
		  22, "unsupported summary version 6");
	expect_at("{\"rank\":\"x\",\"version\":1,\"format\":\"perftracker-summary\"}", 55, PT_EFORMAT,
		  8, "'rank' is not an integer >= -1");
	expect_at("{\"traceEvents\":[{\"ph\":\"X\"}]}", 28, PT_EFORMAT, 0,
		  "not a perftracker summary");
	/* elements that are not objects, held back before "format": the
	 * slots they skip must not be freed as patterns (a fuzz find) */
	{
		const char *gap = "{\"patterns\":[null,7,{\"key\":\"k\"}],\"steps\":[1,{}],"
				  "\"format\":\"perftracker-summary\",\"version\":1}";

		expect_at(gap, strlen(gap), PT_EFORMAT, 13, "pattern 0: is not an object");
	}
	expect_at("{\"format\":\"perftracker-summary\",\"version\":\"1\"}", 46, PT_EFORMAT, 42,
		  "'version' is not a number");
	/* a failed worker's summary keeps only its identity; members it
	 * should not have are still checked (json.c's reader ignored them) */
	{
		const char *failed = "{\"format\":\"perftracker-summary\",\"version\":1,\"worker\":\"w\","
				     "\"file\":\"f\",\"rank\":3,\"pid\":4,\"error\":\"bad\","
				     "\"steps\":[{\"number\":1,\"ms\":2}],\"gpu_util\":0.5}";
		const char *bad = "{\"format\":\"perftracker-summary\",\"version\":1,\"worker\":\"w\","
				  "\"file\":\"f\",\"rank\":3,\"pid\":4,\"error\":\"bad\","
				  "\"patterns\":[{\"key\":\"k\"}]}";

		expect_at(bad, strlen(bad), PT_EFORMAT, 111, "pattern 0: 'class' is missing");

		pt_error_clear(&err);
		a = pt_summary_read_mem(failed, strlen(failed), &err);
		if (!a)
			fail_msg("%s", err.msg);
		assert_string_equal(a->error, "bad");
		assert_int_equal(a->nsteps, 0);
		assert_null(a->step_numbers);
		assert_true(a->gpu_util == 0);
		assert_string_equal(a->host, "");
		pt_summary_free(a);
	}
}

/* Summaries read with one key set share their key strings. */
static void test_shared_keys(void **state)
{
	char dir[] = "/tmp/pt_test_keysXXXXXX", path[2][256];
	pt_summary *s = sample(), *r[2], *plain;
	pt_summary_keys *ks = pt_summary_keys_new();
	pt_error err;
	size_t i;
	int k;

	assert_non_null(ks);
	assert_non_null(mkdtemp(dir));
	for (k = 0; k < 2; k++) {
		snprintf(path[k], sizeof(path[k]), "%s/w%d.json", dir, k);
		assert_int_equal(pt_summary_write_file(s, path[k], &err), PT_OK);
		pt_error_clear(&err);
		r[k] = pt_summary_read_file_shared(path[k], ks, &err);
		assert_non_null(r[k]);
	}
	plain = pt_summary_read_file(path[0], &err);
	assert_non_null(plain);
	same_summary(plain, r[0]);
	same_summary(plain, r[1]);
	assert_int_equal(pt_summary_keys_count(ks), s->npatterns);
	for (i = 0; i < s->npatterns; i++) {
		assert_ptr_equal(r[0]->patterns[i].key, r[1]->patterns[i].key);
		assert_ptr_not_equal(plain->patterns[i].key, r[0]->patterns[i].key);
	}
	/* errors name the file */
	pt_error_clear(&err);
	assert_null(pt_summary_read_file_shared(dir, ks, &err));
	assert_string_equal(err.subject, dir);
	for (k = 0; k < 2; k++) {
		pt_summary_free_shared(r[k]);
		unlink(path[k]);
	}
	pt_summary_free_shared(NULL);
	pt_summary_keys_free(ks);
	pt_summary_keys_free(NULL);
	rmdir(dir);
	pt_summary_free(plain);
	pt_summary_free(s);
}

/* Escapes decode as json.c decoded them; a lone surrogate is U+FFFD. */
static void test_reader_strings(void **state)
{
	int64_t off;
	char *doc = with_value(OKDOC, "key",
			       "\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\\ud800x\xc3\xa9\"",
			       &off);
	pt_summary *s;
	pt_error err;

	pt_error_clear(&err);
	s = pt_summary_read_mem(doc, strlen(doc), &err);
	if (!s)
		fail_msg("%s", err.msg);
	assert_string_equal(s->patterns[0].key,
			    "a\"b\\c/d\b\f\n\r\t\xc3\xa9\xf0\x9f\x98\x80\xef\xbf\xbdx\xc3\xa9");
	pt_summary_free(s);
	free(doc);
}

/* The member tables (summary_format.c) that the writer and the reader
 * share: names unique per object, required members numbered 1..n without
 * gaps, none newer than the oldest version this build reads (a version-1
 * summary must still load), none newer than the version it writes, and
 * every row a member the writer does write for a full summary. */
static void test_format_tables(void **state)
{
	const pt_sf_table *tabs[] = { &pt_sf_top, &pt_sf_window, &pt_sf_step_tab, &pt_sf_pattern,
				      &pt_sf_hw_link, &pt_sf_hw_gpu };
	size_t t;
	int i, j, nreq;

	(void)state;
	for (t = 0; t < sizeof(tabs) / sizeof(tabs[0]); t++) {
		const pt_sf_table *tb = tabs[t];

		assert_true(tb->n > 0 && tb->n <= 64);
		nreq = 0;
		for (i = 0; i < tb->n; i++) {
			const pt_sf_member *m = &tb->m[i];

			assert_int_equal(strlen(m->name.name), m->name.len);
			for (j = 0; j < i; j++)
				if (!strcmp(tb->m[j].name.name, m->name.name))
					fail_msg("'%s' twice in one table", m->name.name);
			assert_true(m->version >= 1 && m->version <= PT_SUMMARY_VERSION);
			if (m->required) {
				nreq++;
				if (m->version > PT_SUMMARY_VERSION_MIN)
					fail_msg("'%s' (version %d) is required: version-%d summaries "
						 "would not load", m->name.name, m->version,
						 PT_SUMMARY_VERSION_MIN);
				/* a conditionally written member cannot be required */
				assert_int_equal(m->when, PT_SF_ALWAYS);
			}
		}
		for (i = 1; i <= nreq; i++) {
			int found = 0;

			for (j = 0; j < tb->n; j++)
				found += tb->m[j].required == i;
			if (found != 1)
				fail_msg("required number %d used %d times", i, found);
		}
	}
	/* A version-1 summary (no "collectives") loads, version 2 fields
	 * empty. */
	{
		const char *v1 = "{\"format\":\"perftracker-summary\",\"version\":1,"
				 "\"worker\":\"w\",\"file\":\"f\",\"rank\":0,\"pid\":1,"
				 "\"world_size\":1,\"gpu_util\":0.5,\"nevents\":3,"
				 "\"window\":{\"start_us\":0,\"ms\":2,\"from_steps\":false},"
				 "\"class_ms\":{\"compute\":1,\"communication\":0,\"memory\":0,"
				 "\"runtime\":0,\"python\":0,\"idle\":1},\"steps\":[],"
				 "\"patterns\":[]}";
		pt_error err;
		pt_summary *s;

		pt_error_clear(&err);
		s = pt_summary_read_mem(v1, strlen(v1), &err);
		if (!s)
			fail_msg("%s", err.msg);
		assert_int_equal(s->version, 1);
		assert_int_equal(s->ncoll, 0);
		assert_null(s->coll_chans);
		assert_true(s->window_ms == 2);
		pt_summary_free(s);
	}
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
		cmocka_unit_test(test_roundtrip_all_traces),
		cmocka_unit_test(test_big_integers),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_reader_wrong_types),
		cmocka_unit_test(test_reader_syntax),
		cmocka_unit_test(test_reader_truncated),
		cmocka_unit_test(test_reader_nesting),
		cmocka_unit_test(test_reader_forward_compat),
		cmocka_unit_test(test_shared_keys),
		cmocka_unit_test(test_reader_strings),
		cmocka_unit_test(test_format_tables),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
