/*
 * test_breakdown.c - the summary members of issue 10 survive the JSON:
 * "gpu_breakdown" (src/analysis/breakdown.c), "gpu_compute_util", the
 * patterns' "role", launch efficiency and "step_ms" are read back exactly
 * as written from a real trace (the resnet50 sample of tests/data/kineto);
 * a summary without them (version 1 as written before) still reads, with
 * compute utilization unknown; a malformed breakdown is reported with the
 * member and the offset.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "analysis/breakdown.h"
#include "analysis/summary.h"
#include "util/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *data_dir(void)
{
	const char *d = getenv("PT_DATA");
	return d && *d ? d : "tests/data";
}

static void test_roundtrip_real_trace(void **st)
{
	char path[1024];
	pt_summary *a, *b;
	pt_sb sb = { 0 };
	pt_error e;
	size_t i, j, nstep = 0, neff = 0;
	int k;

	(void)st;
	snprintf(path, sizeof(path),
		 "%s/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
		 data_dir());
	pt_error_clear(&e);
	a = pt_summary_from_trace(path, NULL, &e);
	assert_non_null(a);
	assert_non_null(a->breakdown);
	assert_int_equal(a->nsteps, 6);
	pt_summary_write(a, &sb);
	assert_false(sb.oom);
	b = pt_summary_read_mem(sb.buf, sb.len, &e);
	assert_non_null(b);
	assert_true(a->gpu_compute_util == b->gpu_compute_util);
	assert_true(b->gpu_compute_util > 0 && b->gpu_compute_util <= b->gpu_util);
	assert_non_null(b->breakdown);
	assert_true(a->breakdown->compute_ms == b->breakdown->compute_ms);
	assert_true(a->breakdown->idle_ms == b->breakdown->idle_ms);
	for (k = 0; k < PT_IDLE_COUNT; k++)
		assert_true(a->breakdown->idle_ms_by[k] == b->breakdown->idle_ms_by[k]);
	assert_int_equal(a->breakdown->nkernels, b->breakdown->nkernels);
	assert_int_equal(a->breakdown->nfuncs, b->breakdown->nfuncs);
	for (i = 0; i < a->breakdown->nfuncs; i++)
		assert_string_equal(a->breakdown->funcs[i].key, b->breakdown->funcs[i].key);
	assert_int_equal(a->npatterns, b->npatterns);
	for (i = 0; i < a->npatterns; i++) {
		const pt_pattern *p = &a->patterns[i], *q = &b->patterns[i];
		assert_int_equal(p->role, q->role);
		assert_int_equal(p->eff_n, q->eff_n);
		assert_true(p->occupancy_pct == q->occupancy_pct && p->registers == q->registers);
		assert_int_equal(p->nstep_ms, q->nstep_ms);
		if (p->step_ms) {
			nstep++;
			assert_int_equal(q->nstep_ms, 6);
			for (j = 0; j < p->nstep_ms; j++)
				assert_true(p->step_ms[j] == q->step_ms[j]);
		}
		neff += p->eff_n > 0;
	}
	assert_true(nstep > 10);
	assert_true(neff > 10);
	pt_sb_free(&sb);
	pt_summary_free(a);
	pt_summary_free(b);
}

static void test_older_summary_and_errors(void **st)
{
	static const char old[] =
		"{\"format\":\"perftracker-summary\",\"version\":1,\"worker\":\"w.json\",\"file\":\"w.json\","
		"\"rank\":0,\"pid\":1,\"world_size\":1,\"window\":{\"start_us\":0,\"ms\":10,"
		"\"from_steps\":false},\"steps\":[],\"gpu_util\":0.5,\"class_ms\":{\"compute\":5,"
		"\"communication\":0,\"memory\":0,\"runtime\":0,\"python\":0,\"idle\":5},\"nevents\":1,"
		"\"patterns\":[]}";
	static const char bad[] =
		"{\"format\":\"perftracker-summary\",\"version\":1,\"worker\":\"w.json\",\"file\":\"w.json\","
		"\"rank\":0,\"pid\":1,\"world_size\":1,\"window\":{\"start_us\":0,\"ms\":10,"
		"\"from_steps\":false},\"steps\":[],\"gpu_util\":0.5,\"class_ms\":{\"compute\":5,"
		"\"communication\":0,\"memory\":0,\"runtime\":0,\"python\":0,\"idle\":5},\"nevents\":1,"
		"\"gpu_breakdown\":{\"window_ms\":\"ten\"},\"patterns\":[]}";
	pt_summary *s;
	pt_error e;

	(void)st;
	pt_error_clear(&e);
	s = pt_summary_read_mem(old, sizeof(old) - 1, &e);
	assert_non_null(s);
	assert_null(s->breakdown);
	assert_true(s->gpu_compute_util == -1);
	pt_summary_free(s);
	pt_error_clear(&e);
	s = pt_summary_read_mem(bad, sizeof(bad) - 1, &e);
	assert_null(s);
	assert_non_null(strstr(e.msg, "'gpu_breakdown window_ms' is not a number"));
	assert_true(e.offset > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_real_trace),
		cmocka_unit_test(test_older_summary_and_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
