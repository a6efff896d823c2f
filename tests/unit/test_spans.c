/*
 * test_spans.c - the summary's "timeline" member (src/analysis/spans.c) on
 * the real DLRM rank 7 trace: its main thread's five top-level
 * annotations in the one step, exact to the µs as the trace fixes them,
 * at most 16 stretches of GPU compute, a write/read round trip and the
 * reader's refusals.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/spans.h"
#include "analysis/summary.h"

#define W7 "tests/data/dlrm/worker7_step_12.1694128201553.pt.trace.json"

static void test_dlrm_rank7(void **st)
{
	pt_error err;
	pt_summary *s = pt_summary_from_trace(W7, NULL, &err);
	static const char *const names[] = { "## copy_batch_to_gpu ##", "## forward ##",
					     "## sparse_data_dist ##", "## backward ##",
					     "## optimizer ##" };
	/* step, start, duration (µs after the window start), name */
	static const int64_t spans[] = { 0, 146, 1459, 0, 0, 1709, 3401, 1, 0, 5120, 1509, 2,
					 0, 6637, 4371, 3, 0, 11022, 1401, 4 };
	size_t i;

	(void)st;
	assert_non_null(s);
	assert_non_null(s->tl);
	assert_int_equal(s->tl->nnames, 5);
	for (i = 0; i < 5; i++)
		assert_string_equal(s->tl->names[i], names[i]);
	assert_int_equal(s->tl->nspans, 5);
	assert_memory_equal(s->tl->spans, spans, sizeof(spans));
	/* 16 at most per step; the first stretch starts with the forward's
	 * first kernels and stays inside the window */
	assert_int_equal(s->tl->ngpu, 16);
	assert_int_equal(s->tl->gpu[0], 1894);
	assert_int_equal(s->tl->gpu[1], 2084);
	for (i = 0; i < s->tl->ngpu; i++) {
		assert_true(s->tl->gpu[2 * i] < s->tl->gpu[2 * i + 1]);
		assert_true(s->tl->gpu[2 * i + 1] <= (int64_t)(s->window_ms * 1e3) + 1);
		if (i)
			assert_true(s->tl->gpu[2 * i] > s->tl->gpu[2 * i - 1]);
	}
	pt_summary_free(s);
}

static void test_roundtrip(void **st)
{
	pt_error err;
	pt_summary *s = pt_summary_from_trace(W7, NULL, &err), *r;
	pt_sb a = {0}, b = {0};

	(void)st;
	assert_non_null(s);
	pt_summary_write(s, &a);
	assert_false(a.oom);
	assert_non_null(strstr(a.buf, "\"version\":5"));
	r = pt_summary_read_mem(a.buf, a.len, &err);
	if (!r)
		fail_msg("%s", err.msg);
	pt_summary_write(r, &b);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.buf, b.buf, a.len);
	pt_sb_free(&a);
	pt_sb_free(&b);
	pt_summary_free(r);
	pt_summary_free(s);
}

static void expect_bad(const char *tl, const char *msg)
{
	pt_summary s;
	pt_error err;

	memset(&s, 0, sizeof(s));
	pt_error_clear(&err);
	assert_int_equal(pt_spans_parse(tl, strlen(tl), &s, &err), PT_EFORMAT);
	if (!strstr(err.msg, msg))
		fail_msg("'%s': got '%s', want '%s'", tl, err.msg, msg);
	assert_null(s.tl);
}

static void test_reader_errors(void **st)
{
	(void)st;
	expect_bad("{\"spans\":[],\"gpu\":[]}", "'names' is missing");
	expect_bad("{\"names\":[1],\"spans\":[],\"gpu\":[]}", "'names' holds a non-string");
	expect_bad("{\"names\":[],\"spans\":[0,1,2],\"gpu\":[]}", "4 integers per span");
	expect_bad("{\"names\":[],\"spans\":[],\"gpu\":[1]}", "2 integers per stretch");
	expect_bad("{\"names\":[\"a\"],\"spans\":[0,1,2,1],\"gpu\":[]}", "out of range");
	expect_bad("{\"names\":[\"a\"],\"spans\":[0,1,-2,0],\"gpu\":[]}", "out of range");
	expect_bad("{\"names\":[\"a\"],\"spans\":[0,1.5,2,0],\"gpu\":[]}", "not an integer");
	expect_bad("{\"names\":[],\"spans\":[],\"gpu\":[\"x\",1]}", "not an integer");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dlrm_rank7),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_reader_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
