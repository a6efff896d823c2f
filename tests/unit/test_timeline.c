/*
 * test_timeline.c - the timeline model (src/diagnose/timeline.c,
 * src/report/timeline.h) and its file (timeline_trace.c) on the real
 * 8-rank DLRM traces: workers by rank, rank 7 the straggler and the last
 * arriver at 5 of the 8 instances, every instance's members ending
 * together on the job clock, and the file read back through the Kineto
 * reader one process at a time (pt_store.keep_pid); the file written in
 * steps (pt_tlw_*), each raw store freed once added, byte for byte the
 * file written with every store held.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>

#include "testutil.h"
#include "analysis/summary.h"
#include "diagnose/diagnose.h"
#include "report/timeline.h"
#include "trace/any.h"
#include "trace/kineto.h"

#define DLRM "tests/data/dlrm/"

static const char *const traces[] = {
	DLRM "worker0_step_12.1694128201545.pt.trace.json",
	DLRM "worker1_step_12.1694128201556.pt.trace.json",
	DLRM "worker2_step_12.1694128201554.pt.trace.json",
	DLRM "worker3_step_12.1694128201557.pt.trace.json",
	DLRM "worker4_step_12.1694128201547.pt.trace.json",
	DLRM "worker5_step_12.1694128201549.pt.trace.json",
	DLRM "worker6_step_12.1694128201553.pt.trace.json",
	DLRM "worker7_step_12.1694128201553.pt.trace.json",
};

static void test_dlrm(void **st)
{
	pt_summary *s[8];
	pt_error err;
	pt_report *r;
	const pt_timeline *t;
	char dir[256], path[300];
	size_t i, k, last7 = 0;

	(void)st;
	/* in reverse: the model orders them by rank whatever the input order */
	for (i = 0; i < 8; i++) {
		s[7 - i] = pt_summary_from_trace(traces[i], NULL, &err);
		assert_non_null(s[7 - i]);
	}
	r = pt_diagnose(s, 8, NULL, &err);
	assert_non_null(r);
	t = pt_report_timeline(r);
	assert_non_null(t);
	assert_int_equal(t->nw, 8);
	for (k = 0; k < 8; k++) {
		assert_int_equal(t->w[k].s->rank, (int64_t)k);
		assert_true(t->w[k].aligned);
		assert_int_equal(t->w[k].straggler, k == 7);
	}
	assert_int_equal(t->ref, 0);
	/* raw traces find their worker by file name */
	{
		size_t m, at = pt_tl_find_worker(t, strrchr(traces[7], '/') + 1, &m);
		assert_int_equal(m, 1);
		assert_int_equal(t->by_worker[at], 7);
		pt_tl_find_worker(t, "worker9.json", &m);
		assert_int_equal(m, 0);
	}
	assert_float_equal(t->w[0].shift_us, 0, 1e-9);
	assert_int_equal(t->ninst, 8);
	for (i = 0; i < t->ninst; i++) {
		double lo = 1e300, hi = -1e300;
		last7 += t->inst[i].last == 7;
		for (k = 0; k < 8; k++) {
			uint32_t j = t->own[i * 8 + k];
			double e;
			assert_int_not_equal(j, PT_TL_NONE);
			e = t->w[k].shift_us + t->w[k].s->coll[j].end_us;
			lo = e < lo ? e : lo;
			hi = e > hi ? e : hi;
		}
		/* one instance ends together on every rank once on one clock
		 * (Lockstep's clock residuals are under 1.4 µs here) */
		assert_true(hi - lo < 20);
	}
	assert_int_equal(last7, 5);
	assert_true(t->nf >= 1);
	assert_int_equal(t->f[0].nw, 1);
	assert_int_equal(t->f[0].w[0], 7);

	/* The file, and rank 7's process read back. */
	tu_tmpdir(dir, sizeof(dir), "pt_timeline");
	snprintf(path, sizeof(path), "%s/timeline.json.gz", dir);
	assert_int_equal(pt_timeline_write(r, NULL, 0, NULL, path, &err), PT_OK);
	{
		pt_store sto;
		size_t ncomm = 0;
		assert_int_equal(pt_store_init(&sto), PT_OK);
		sto.keep_pid_set = 1;
		sto.keep_pid = 8;  /* rank 7 */
		assert_int_equal(pt_kineto_read_file(path, &sto, &err), PT_OK);
		assert_int_equal(sto.nsteps, 1);
		assert_int_equal(sto.steps[0].number, 10);
		for (i = 0; i < sto.n; i++)
			ncomm += sto.ev[i].kind == PT_K_COMM_KERNEL;
		assert_int_equal(ncomm, 8);
		pt_store_free(&sto);
	}
	tu_rm_rf(dir);
	pt_report_free(r);
	for (i = 0; i < 8; i++)
		pt_summary_free(s[i]);
}

static char *slurp_gz(const char *path, size_t *len)
{
	gzFile f = gzopen(path, "rb");
	size_t cap = 1 << 20, n = 0;
	char *b = malloc(cap + 1);
	int got;

	assert_non_null(f);
	while ((got = gzread(f, b + n, (unsigned)(cap - n))) > 0) {
		n += (size_t)got;
		if (n == cap)
			b = realloc(b, (cap *= 2) + 1);
	}
	gzclose(f);
	b[n] = 0;
	*len = n;
	return b;
}

/* The raw events of all 8 workers: pt_timeline_write with every store
 * held, and the writer in steps with each store freed right after it is
 * added (ASan sees a name read from a freed store).  Both files the same
 * bytes; the JSON is several MiB, so it is deflated in pieces. */
static void check_steps(pt_report *r, size_t max_raw, const char *dir)
{
	pt_tl_write_options wo = { max_raw, "perftracker test" };
	pt_store sto[8];
	pt_tl_raw raw[8];
	const char *ids[9];
	char a[300], b[300], *ta, *tb, *json;
	size_t la, lb, lj, i, nlanes = 0;
	pt_error err;
	pt_tlw *w;

	snprintf(a, sizeof(a), "%s/held.json.gz", dir);
	snprintf(b, sizeof(b), "%s/steps.json.gz", dir);
	for (i = 0; i < 8; i++) {
		assert_int_equal(pt_store_init(&sto[i]), PT_OK);
		assert_int_equal(pt_trace_read_any(traces[i], &sto[i], NULL, &err), PT_OK);
		raw[i].id = strrchr(traces[i], '/') + 1;
		raw[i].st = &sto[i];
		ids[i] = raw[i].id;
		nlanes += sto[i].nlanes;
	}
	ids[8] = "not_a_worker.json";
	assert_int_equal(pt_timeline_write(r, raw, 8, &wo, a, &err), PT_OK);
	for (i = 0; i < 8; i++)
		pt_store_free(&sto[i]);
	w = pt_tlw_new(r, ids, 9, &wo, &err);
	assert_non_null(w);
	/* a trace of no worker, and none at all: nothing */
	assert_int_equal(pt_tlw_add_raw(w, "not_a_worker.json", NULL), PT_OK);
	for (i = 0; i < 8; i++) {
		pt_store one;
		assert_int_equal(pt_store_init(&one), PT_OK);
		assert_int_equal(pt_trace_read_any(traces[i], &one, NULL, &err), PT_OK);
		assert_int_equal(pt_tlw_add_raw(w, ids[i], &one), PT_OK);
		pt_store_free(&one);
	}
	assert_int_equal(pt_tlw_finish(w, b, &err), PT_OK);
	ta = tu_read_file(a, &la);
	tb = tu_read_file(b, &lb);
	/* the share is over the 8 traces that name a worker, not the 9th:
	 * the same in both */
	assert_int_equal(la, lb);
	assert_memory_equal(ta, tb, la);
	json = slurp_gz(b, &lj);
	/* all 8 traces' events: 2.9 MB of JSON, deflated in 3 pieces */
	if (!max_raw)
		assert_true(lj > (2u << 20));
	assert_non_null(strstr(json, "\"generator\":\"perftracker test\""));
	assert_true(tu_count(json, "\"ph\":\"X\"") > (max_raw ? 4000 / 2 : 19000));
	/* every worker's raw lanes named, once */
	assert_int_equal(tu_count(json, "\"name\":\"raw: "), nlanes);
	if (max_raw)
		assert_true(tu_count(json, "short events\"") > 0);
	else
		assert_int_equal(tu_count(json, "short events\""), 0);
	assert_true(tu_count(json, "\"cat\":\"raw kernel\"") > 0);
	assert_int_equal(json[lj - 1], '\n');
	free(json);
	free(tb);
	free(ta);
}

static void test_raw_in_steps(void **st)
{
	pt_summary *s[8];
	pt_error err;
	pt_report *r;
	char dir[256];
	size_t i;

	(void)st;
	for (i = 0; i < 8; i++) {
		s[i] = pt_summary_from_trace(traces[i], NULL, &err);
		assert_non_null(s[i]);
	}
	r = pt_diagnose(s, 8, NULL, &err);
	assert_non_null(r);
	tu_tmpdir(dir, sizeof(dir), "pt_timeline_steps");
	check_steps(r, 0, dir);      /* every event, as it is */
	check_steps(r, 4000, dir);   /* 500 a worker: the short ones merged */
	pt_tlw_free(NULL);
	/* freed unwritten */
	pt_tlw_free(pt_tlw_new(r, NULL, 0, NULL, &err));
	tu_rm_rf(dir);
	pt_report_free(r);
	for (i = 0; i < 8; i++)
		pt_summary_free(s[i]);
}

static void test_no_model(void **st)
{
	pt_report *r = pt_report_new();
	pt_error err;

	(void)st;
	assert_null(pt_report_timeline(r));
	assert_int_equal(pt_timeline_write(r, NULL, 0, NULL, "/nonexistent/x.json.gz", &err),
			 PT_EINVAL);
	assert_non_null(strstr(err.msg, "no timeline"));
	assert_null(pt_tlw_new(r, NULL, 0, NULL, &err));
	assert_int_equal(err.code, PT_EINVAL);
	pt_timeline_add_key(r);  /* nothing to add */
	assert_null(pt_rv_get(pt_report_root_c(r), "timeline"));
	pt_report_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dlrm),
		cmocka_unit_test(test_raw_in_steps),
		cmocka_unit_test(test_no_model),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
