/*
 * test_collectives.c - the worker side of the lockstep analysis
 * (src/analysis/collectives.c): collective instances found in real traces
 * (the DLRM ranks' NCCL kernels, exact values from the trace), gloo ops as
 * one channel, the time of each function in the span before an arrival,
 * the "collectives" member written and read back, and its reader's errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "perftracker.h"
#include "analysis/collectives.h"
#include "util/xalloc.h"

#ifndef PT_DATA_DIR
#define PT_DATA_DIR "tests/data"
#endif

static pt_summary *dlrm(int rank)
{
	static const char *const f[8] = {
		"worker0_step_12.1694128201545.pt.trace.json",
		"worker1_step_12.1694128201556.pt.trace.json",
		"worker2_step_12.1694128201554.pt.trace.json",
		"worker3_step_12.1694128201557.pt.trace.json",
		"worker4_step_12.1694128201547.pt.trace.json",
		"worker5_step_12.1694128201549.pt.trace.json",
		"worker6_step_12.1694128201553.pt.trace.json",
		"worker7_step_12.1694128201553.pt.trace.json",
	};
	char path[512];
	pt_error err;
	pt_summary *s;

	snprintf(path, sizeof(path), "%s/dlrm/%s", getenv("PT_DATA") ? getenv("PT_DATA") : PT_DATA_DIR,
		 f[rank]);
	pt_error_clear(&err);
	s = pt_summary_from_trace(path, NULL, &err);
	if (!s)
		fail_msg("%s: %s", path, err.msg);
	return s;
}

/* DLRM rank 7: eight NCCL kernels on stream 84, ProfilerStep#10 starting at
 * 1694128201428718 us; the first SendRecv starts at ...431930 and lasts
 * 10 us, the last AllReduce starts at ...439531 and lasts 803 us. */
static void test_dlrm_instances(void **state)
{
	pt_summary *s = dlrm(7);
	size_t i, nsend = 0;

	(void)state;
	assert_int_equal(s->version, PT_SUMMARY_VERSION);
	assert_int_equal(s->ncoll_chans, 1);
	assert_string_equal(s->coll_chans[0], "nccl:0");
	assert_int_equal(s->ncoll, 8);
	assert_int_equal(s->ncoll_names, 2);
	assert_true(s->coll[0].arrive_us == 3212.0);
	assert_true(s->coll[0].end_us == 3222.0);
	assert_true(s->coll[7].arrive_us == 10813.0);
	assert_true(s->coll[7].end_us == 11616.0);
	for (i = 0; i < s->ncoll; i++) {
		assert_int_equal(s->coll[i].chan, 0);
		if (strstr(s->coll_names[s->coll[i].name], "SendRecv"))
			nsend++;
		if (i)
			assert_true(s->coll[i].arrive_us >= s->coll[i - 1].arrive_us);
	}
	assert_int_equal(nsend, 5);
	/* span functions: sorted by instance then ms, kept patterns only, no
	 * communication, each at least 20 us */
	assert_true(s->ncoll_cause > 0);
	for (i = 0; i < s->ncoll_cause; i++) {
		const pt_coll_cause *c = &s->coll_cause[i];
		assert_true(c->inst < s->ncoll);
		assert_true(c->pat < s->npatterns);
		assert_true(c->ms >= 0.02);
		assert_int_not_equal(s->patterns[c->pat].cls, PT_C_COMM);
		if (i && c->inst == s->coll_cause[i - 1].inst)
			assert_true(c->ms <= s->coll_cause[i - 1].ms);
		if (i)
			assert_true(c->inst >= s->coll_cause[i - 1].inst);
	}
	pt_summary_free(s);
}

static void test_roundtrip(void **state)
{
	pt_summary *s = dlrm(1), *r;
	pt_sb sb = { 0 };
	pt_error err;
	size_t i;

	(void)state;
	pt_summary_write(s, &sb);
	assert_false(sb.oom);
	assert_non_null(strstr(sb.buf, "\"collectives\":{\"channels\":[\"nccl:0\"]"));
	/* no process group or seq in these traces: no "pgs", no "seq", no "torch" */
	assert_null(strstr(sb.buf, "\"pgs\""));
	assert_null(strstr(sb.buf, "\"torch\""));
	pt_error_clear(&err);
	r = pt_summary_read_mem(sb.buf, sb.len, &err);
	if (!r)
		fail_msg("%s", err.msg);
	assert_int_equal(r->ncoll, s->ncoll);
	assert_int_equal(r->ncoll_cause, s->ncoll_cause);
	for (i = 0; i < s->ncoll; i++) {
		assert_true(r->coll[i].arrive_us == s->coll[i].arrive_us);
		assert_true(r->coll[i].end_us == s->coll[i].end_us);
		assert_string_equal(r->coll_names[r->coll[i].name], s->coll_names[s->coll[i].name]);
		assert_int_equal(r->coll[i].seq, -1);
		assert_int_equal(r->coll[i].pg, UINT32_MAX);
	}
	for (i = 0; i < s->ncoll_cause; i++) {
		assert_int_equal(r->coll_cause[i].pat, s->coll_cause[i].pat);
		assert_true(r->coll_cause[i].ms == s->coll_cause[i].ms);
	}
	pt_summary_free(r);
	pt_summary_free(s);
	pt_sb_free(&sb);
}

/* A gloo rank with the collector's Flight Recorder entries
 * (tests/data/torch2_gloo_fr): its 15 instances carry process group "0"
 * and seq 16..30, written as "pgs" and "seq" and read back, with "torch". */
static void test_roundtrip_seq(void **state)
{
	char path[512];
	pt_summary *s, *r;
	pt_sb sb = { 0 };
	pt_error err;
	size_t i;

	(void)state;
	snprintf(path, sizeof(path), "%s/torch2_gloo_fr/vm_2_18243.json.gz",
		 getenv("PT_DATA") ? getenv("PT_DATA") : PT_DATA_DIR);
	pt_error_clear(&err);
	s = pt_summary_from_trace(path, NULL, &err);
	if (!s)
		fail_msg("%s: %s", path, err.msg);
	assert_int_equal(s->ncoll, 15);
	assert_string_equal(s->coll_chans[0], "gloo:0");
	pt_summary_write(s, &sb);
	assert_false(sb.oom);
	assert_non_null(strstr(sb.buf, "\"device\":\"\",\"torch\":\"2.15.0+cu132\","));
	assert_non_null(strstr(sb.buf, "],\"pgs\":[\"0\"],\"seq\":[0,16,0,17,0,18,0,19,0,20,0,21,"
				       "0,22,0,23,0,24,0,25,0,26,0,27,0,28,0,29,0,30]}"));
	r = pt_summary_read_mem(sb.buf, sb.len, &err);
	if (!r)
		fail_msg("%s", err.msg);
	assert_string_equal(r->torch, "2.15.0+cu132");
	assert_int_equal(r->ncoll_pgs, 1);
	assert_string_equal(r->coll_pgs[0], "0");
	for (i = 0; i < 15; i++) {
		assert_int_equal(r->coll[i].pg, 0);
		assert_int_equal(r->coll[i].seq, 16 + (int64_t)i);
	}
	pt_summary_free(r);
	pt_summary_free(s);
	pt_sb_free(&sb);
}

#define HEAD "{\"format\":\"perftracker-summary\",\"version\":2,\"worker\":\"w\",\"file\":\"f\"," \
	"\"rank\":0,\"pid\":1,\"world_size\":2,\"gpu_util\":0,\"nevents\":0," \
	"\"window\":{\"start_us\":0,\"ms\":1,\"from_steps\":true},\"steps\":[]," \
	"\"class_ms\":{\"compute\":0,\"communication\":0,\"memory\":0,\"runtime\":0,\"python\":0,\"idle\":1}," \
	"\"patterns\":[],"

static void expect_bad(const char *json, const char *msg)
{
	pt_error err;
	pt_summary *s;

	pt_error_clear(&err);
	s = pt_summary_read_mem(json, strlen(json), &err);
	if (s) {
		pt_summary_free(s);
		fail_msg("accepted: %s", json);
	}
	assert_int_equal(err.code, PT_EFORMAT);
	if (!strstr(err.msg, msg))
		fail_msg("'%s' does not hold '%s'", err.msg, msg);
}

static void test_reader_errors(void **state)
{
	pt_error err;
	pt_summary *s;
	const char *ok = HEAD "\"collectives\":{\"channels\":[\"gloo:0\"],\"names\":[\"gloo:all_reduce\"],"
			      "\"instances\":[0,0,1.5,2.5,0,0,3,4],\"causes\":[]}}";
	const char *v1 = "{\"format\":\"perftracker-summary\",\"version\":1,\"worker\":\"w\",\"file\":\"f\","
			 "\"rank\":0,\"pid\":1,\"world_size\":2,\"gpu_util\":0,\"nevents\":0,"
			 "\"window\":{\"start_us\":0,\"ms\":1,\"from_steps\":true},\"steps\":[],"
			 "\"class_ms\":{\"compute\":0,\"communication\":0,\"memory\":0,\"runtime\":0,"
			 "\"python\":0,\"idle\":1},\"patterns\":[]}";

	(void)state;
	pt_error_clear(&err);
	s = pt_summary_read_mem(ok, strlen(ok), &err);
	if (!s)
		fail_msg("%s", err.msg);
	assert_int_equal(s->ncoll, 2);
	assert_true(s->coll[1].arrive_us == 3.0);
	assert_string_equal(s->coll_names[0], "gloo:all_reduce");
	pt_summary_free(s);
	/* version 1 still reads, without collectives */
	s = pt_summary_read_mem(v1, strlen(v1), &err);
	if (!s)
		fail_msg("%s", err.msg);
	assert_int_equal(s->version, 1);
	assert_int_equal(s->ncoll, 0);
	pt_summary_free(s);

	/* "pgs" and "seq": [-1, -1] is an instance without */
	{
		const char *sq = HEAD "\"collectives\":{\"channels\":[\"gloo:0\"],\"names\":[\"gloo:all_reduce\"],"
				      "\"instances\":[0,0,1.5,2.5,0,0,3,4],\"causes\":[],\"pgs\":[\"7\"],\"seq\":[-1,-1,0,9]}}";
		s = pt_summary_read_mem(sq, strlen(sq), &err);
		if (!s)
			fail_msg("%s", err.msg);
		assert_int_equal(s->coll[0].seq, -1);
		assert_int_equal(s->coll[0].pg, UINT32_MAX);
		assert_int_equal(s->coll[1].seq, 9);
		assert_string_equal(s->coll_pgs[s->coll[1].pg], "7");
		pt_summary_free(s);
	}
	expect_bad(HEAD "\"collectives\":{\"channels\":[\"a\"],\"names\":[\"b\"],\"instances\":[0,0,1,2],"
		   "\"pgs\":[\"0\"],\"seq\":[0]}}", "'seq' is not an array of 2 numbers per instance");
	expect_bad(HEAD "\"collectives\":{\"channels\":[\"a\"],\"names\":[\"b\"],\"instances\":[0,0,1,2],"
		   "\"pgs\":[\"0\"],\"seq\":[1,3]}}", "seq 0 is not [process group, sequence number]");
	expect_bad(HEAD "\"collectives\":{\"channels\":[\"a\"],\"names\":[\"b\"],\"instances\":[0,0,1,2],"
		   "\"seq\":[0,3]}}", "'pgs' is missing");
	expect_bad(HEAD "\"collectives\":[]}", "'collectives' is not an object");
	expect_bad(HEAD "\"collectives\":{\"names\":[],\"instances\":[]}}", "'channels' is missing");
	expect_bad(HEAD "\"collectives\":{\"channels\":[\"a\"],\"names\":[\"b\"],\"instances\":[0,0,1]}}",
		   "4 numbers per instance");
	expect_bad(HEAD "\"collectives\":{\"channels\":[\"a\"],\"names\":[\"b\"],\"instances\":[1,0,1,2]}}",
		   "instance 0 is not [channel, name, arrive, end]");
	expect_bad(HEAD "\"collectives\":{\"channels\":[\"a\"],\"names\":[\"b\"],\"instances\":[0,0,1,2],"
		   "\"causes\":[0,3,1.0]}}", "cause 0 names pattern 3 of 0");
	expect_bad(HEAD "\"collectives\":{\"channels\":[\"a\"],\"names\":[\"b\"],\"instances\":[0,0,1,2],"
		   "\"causes\":[5,0,1.0]}}", "cause 0 is not [instance, pattern, us]");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dlrm_instances),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_roundtrip_seq),
		cmocka_unit_test(test_reader_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
