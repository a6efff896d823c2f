/*
 * test_pipeline.c - unit tests for the summaries-to-report pipeline
 * (src/diagnose/pipeline.c) on the demo job's four real worker summaries:
 * unreadable files become failed workers with their reason, the caller's
 * parallel-for, hook and writer are used as documented, the text is the
 * report's own rendering, and the errors (nothing readable, a writer that
 * fails) come back without anything written or rendered.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"

#include "diagnose/pipeline.h"
#include "util/xalloc.h"

static char root[256], bad[300], paths_buf[5][512];
static char *paths[5];
static int nwrites, nhooks, nparallel, fail_write;
static char wrote_to[512];
static long jobs_seen;

static const char *data_dir(void)
{
	const char *d = getenv("PT_DATA");

	return d && *d ? d : "tests/data";
}

static int setup(void **state)
{
	static const char *const w[4] = { "vm_0_30069", "vm_1_30070", "vm_2_30071", "vm_3_30072" };

	(void)state;
	tu_tmpdir(root, sizeof(root), "pt_test_pipeline");
	for (int i = 0; i < 4; i++) {
		snprintf(paths_buf[i], sizeof(paths_buf[i]), "%s/demo_cpu4/%s.summary.json",
			 data_dir(), w[i]);
		paths[i] = paths_buf[i];
	}
	snprintf(bad, sizeof(bad), "%s/bad.json", root);
	tu_write_text(bad, "{\"format\":\"perftracker-summary\",");
	snprintf(paths_buf[4], sizeof(paths_buf[4]), "%s", bad);
	paths[4] = paths_buf[4];
	nwrites = nhooks = nparallel = fail_write = 0;
	wrote_to[0] = 0;
	jobs_seen = -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tu_rm_rf(root);
	return 0;
}

static void serial(size_t n, long jobs, void (*fn)(void *ctx, size_t i), void *ctx)
{
	nparallel++;
	jobs_seen = jobs;
	for (size_t i = n; i-- > 0;)  /* backwards: order must not matter */
		fn(ctx, i);
}

static int writer(const pt_report *r, const char *dir, pt_error *err)
{
	(void)r;
	nwrites++;
	snprintf(wrote_to, sizeof(wrote_to), "%s", dir);
	if (fail_write) {
		pt_error_subject(err, dir);
		return pt_error_set(err, PT_EIO, -1, "disk full");
	}
	return PT_OK;
}

static void hook(pt_report *r, const void *ctx)
{
	nhooks++;
	pt_rv_str(r, pt_report_root(r), "hooked", ctx);
}

static void test_read_keeps_every_input(void **state)
{
	pt_pipeline_options o;
	pt_pipeline_summaries set;

	(void)state;
	pt_pipeline_options_default(&o);
	o.parallel = serial;
	o.jobs = 3;
	assert_int_equal(pt_pipeline_read(paths, 5, &o, &set, NULL), PT_OK);
	assert_int_equal(nparallel, 1);
	assert_int_equal(jobs_seen, 3);
	assert_int_equal(set.n, 5);
	for (int i = 0; i < 4; i++) {
		assert_null(set.msg[i]);
		assert_null(set.s[i]->error);
	}
	assert_string_equal(set.s[0]->worker, "vm_0_30069.json");
	assert_string_equal(set.s[3]->worker, "vm_3_30072.json");
	/* The bad file: a failed worker, the reason without the path. */
	assert_non_null(set.msg[4]);
	assert_null(strstr(set.msg[4], bad));
	assert_string_equal(set.s[4]->error, set.msg[4]);
	assert_true(set.seconds >= 0);
	pt_pipeline_summaries_free(&set);
	assert_null(set.s);
}

/* The text is the report's own rendering of the same diagnosis; the hook
 * runs before the writer, which gets the output folder. */
static void test_report_writes_and_renders(void **state)
{
	pt_pipeline_options o;
	pt_pipeline_summaries set;
	pt_pipeline_result res;
	pt_report *ref;
	pt_text_opts to;
	pt_sb want = { 0 };
	char out[300];

	(void)state;
	pt_pipeline_options_default(&o);
	assert_int_equal(pt_pipeline_read(paths, 5, &o, &set, NULL), PT_OK);
	assert_int_equal(nparallel, 0);
	snprintf(out, sizeof(out), "%s/out", root);
	o.outdir = out;
	o.write_dir = writer;
	o.hook = hook;
	o.hook_ctx = "yes";
	assert_int_equal(pt_pipeline_report(&o, set.s, set.n, &res, NULL), PT_OK);
	assert_int_equal(nhooks, 1);
	assert_int_equal(nwrites, 1);
	assert_string_equal(wrote_to, out);
	ref = pt_diagnose(set.s, set.n, &o.diag, NULL);
	assert_non_null(ref);
	hook(ref, "yes");
	pt_text_opts_default(&to);
	to.page_line = 1;
	to.outdir = out;
	pt_report_text_people(ref, &to, &want);
	assert_true(want.len > 100);
	assert_int_equal(res.text.len, want.len);
	assert_memory_equal(res.text.buf, want.buf, want.len);
	assert_true(res.diagnose_wall >= 0 && res.diagnose_cpu >= 0 && res.write_seconds >= 0);
	pt_sb_free(&res.text);
	pt_sb_free(&want);
	/* The whole report.json, with the hook's key; no text at all. */
	o.text = PT_PIPELINE_REPORT;
	o.outdir = NULL;
	assert_int_equal(pt_pipeline_report(&o, set.s, set.n, &res, NULL), PT_OK);
	assert_int_equal(nwrites, 1);
	assert_true(res.text.len > 2 && res.text.buf[0] == '{');
	assert_int_equal(res.text.buf[res.text.len - 1], '\n');
	assert_non_null(strstr(res.text.buf, "\"hooked\": \"yes\""));
	pt_sb_free(&res.text);
	o.text = PT_PIPELINE_NONE;
	assert_int_equal(pt_pipeline_report(&o, set.s, set.n, &res, NULL), PT_OK);
	assert_int_equal(res.text.len, 0);
	pt_sb_free(&res.text);
	pt_report_free(ref);
	pt_pipeline_summaries_free(&set);
}

static void test_report_errors(void **state)
{
	pt_pipeline_options o;
	pt_pipeline_summaries set;
	pt_pipeline_result res;
	pt_error e;
	char out[300], want[700];

	(void)state;
	pt_pipeline_options_default(&o);
	o.write_dir = writer;
	o.hook = hook;
	o.hook_ctx = "yes";
	/* Only the bad file: nothing to analyse, nothing written. */
	assert_int_equal(pt_pipeline_read(paths + 4, 1, &o, &set, NULL), PT_OK);
	snprintf(out, sizeof(out), "%s/out", root);
	o.outdir = out;
	pt_error_clear(&e);
	assert_int_equal(pt_pipeline_report(&o, set.s, set.n, &res, &e), PT_EINVAL);
	assert_string_equal(e.msg, "no worker could be analysed (1 input, all unreadable)");
	assert_int_equal(nwrites + nhooks, 0);
	pt_sb_free(&res.text);
	pt_pipeline_summaries_free(&set);
	/* The writer's error comes back as it was; no text. */
	assert_int_equal(pt_pipeline_read(paths, 2, &o, &set, NULL), PT_OK);
	fail_write = 1;
	pt_error_clear(&e);
	assert_int_equal(pt_pipeline_report(&o, set.s, set.n, &res, &e), PT_EIO);
	snprintf(want, sizeof(want), "%s: disk full", out);
	assert_string_equal(pt_error_format(&e, out, sizeof(out)), want);
	assert_int_equal(res.text.len, 0);
	pt_sb_free(&res.text);
	pt_pipeline_summaries_free(&set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_read_keeps_every_input, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_writes_and_renders, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_errors, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
