/*
 * test_inputs.c - unit tests for finding a diagnosis's input files
 * (src/trace/inputs.c): what a folder search keeps for traces and for
 * summaries (hidden entries, PerfDisplay, the skipped folder, hardware
 * samples and *.summary.json left out), sorted; the messages when nothing
 * is found; the one walker's visitor, its error and its depth limit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"

#include "trace/inputs.h"

static char root[256];

static int setup(void **state)
{
	(void)state;
	tu_tmpdir(root, sizeof(root), "pt_test_inputs");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tu_rm_rf(root);
	return 0;
}

static void file(const char *rel)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	tu_write_text(p, "{}");
}

static void dir(const char *rel)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	assert_int_equal(mkdir(p, 0700), 0);
}

static void assert_rel(const pt_inputs *f, size_t i, const char *rel)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	assert_true(i < f->n);
	assert_string_equal(f->v[i], p);
}

static void tree(void)
{
	dir("run");
	dir("run/sub");
	dir("run/PerfDisplay");
	dir("run/keep");
	dir("run/.hidden");
	file("run/b.json.gz");
	file("run/a.json");
	file("run/c.sqlite");
	file("run/x.summary.json");
	file("run/hw_node1.json");
	file("run/node1.hw.json");
	file("run/notes.txt");
	file("run/.dot.json");
	file("run/sub/d.json");
	file("run/PerfDisplay/report.json");
	file("run/keep/e.summary.json");
	file("run/.hidden/f.json");
}

static void test_traces_leave_out_summaries_samples_output_and_skip(void **state)
{
	pt_inputs f = { 0 };
	char p[512], skip[512];

	(void)state;
	tree();
	snprintf(p, sizeof(p), "%s/run", root);
	snprintf(skip, sizeof(skip), "%s/run/sub/../keep", root);
	assert_int_equal(pt_inputs_add(&f, p, PT_INPUTS_TRACES, skip, NULL), PT_OK);
	assert_int_equal(f.n, 4);
	assert_rel(&f, 0, "run/a.json");
	assert_rel(&f, 1, "run/b.json.gz");
	assert_rel(&f, 2, "run/c.sqlite");
	assert_rel(&f, 3, "run/sub/d.json");
	assert_int_equal(f.nempty, 0);
	assert_int_equal(pt_inputs_check(&f, "analyze", PT_INPUTS_TRACES, NULL), PT_OK);
	pt_inputs_free(&f);
}

static void test_summaries_are_every_json(void **state)
{
	pt_inputs f = { 0 };
	char p[512];

	(void)state;
	tree();
	snprintf(p, sizeof(p), "%s/run", root);
	assert_int_equal(pt_inputs_add(&f, p, PT_INPUTS_SUMMARIES, NULL, NULL), PT_OK);
	assert_int_equal(f.n, 6);
	assert_rel(&f, 0, "run/a.json");
	assert_rel(&f, 1, "run/hw_node1.json");
	assert_rel(&f, 2, "run/keep/e.summary.json");
	assert_rel(&f, 3, "run/node1.hw.json");
	assert_rel(&f, 4, "run/sub/d.json");
	assert_rel(&f, 5, "run/x.summary.json");
	/* A file is taken as given, whatever its name. */
	snprintf(p, sizeof(p), "%s/run/notes.txt", root);
	assert_int_equal(pt_inputs_add(&f, p, PT_INPUTS_SUMMARIES, NULL, NULL), PT_OK);
	assert_int_equal(f.n, 7);
	assert_rel(&f, 6, "run/notes.txt");
	pt_inputs_free(&f);
	assert_int_equal(f.n, 0);
}

static void test_nothing_found_says_where(void **state)
{
	pt_inputs f = { 0 };
	pt_error e;
	char p[512], q[512], want[1400];

	(void)state;
	dir("e1");
	dir("e2");
	pt_error_clear(&e);
	assert_int_equal(pt_inputs_check(&f, "diagnose", PT_INPUTS_SUMMARIES, &e), PT_EINVAL);
	assert_string_equal(e.msg, "diagnose: no summary files given (see --help)");
	snprintf(p, sizeof(p), "%s/e1", root);
	snprintf(q, sizeof(q), "%s/e2", root);
	assert_int_equal(pt_inputs_add(&f, p, PT_INPUTS_TRACES, NULL, NULL), PT_OK);
	assert_int_equal(f.nempty, 1);
	assert_ptr_equal(f.empty[0], p);
	pt_error_clear(&e);
	assert_int_equal(pt_inputs_check(&f, "analyze", PT_INPUTS_TRACES, &e), PT_EINVAL);
	snprintf(want, sizeof(want), "'%s': no *.json, *.json.gz or *.sqlite traces found", p);
	assert_string_equal(e.msg, want);
	assert_int_equal(pt_inputs_add(&f, q, PT_INPUTS_TRACES, NULL, NULL), PT_OK);
	pt_error_clear(&e);
	assert_int_equal(pt_inputs_check(&f, "analyze", PT_INPUTS_TRACES, &e), PT_EINVAL);
	snprintf(want, sizeof(want), "analyze: no *.json, *.json.gz or *.sqlite traces found in "
		 "'%s' or the 1 other folder given", p);
	assert_string_equal(e.msg, want);
	/* Found elsewhere: the empty folders are only counted. */
	file("one.json");
	snprintf(q, sizeof(q), "%s/one.json", root);
	assert_int_equal(pt_inputs_add(&f, q, PT_INPUTS_TRACES, NULL, NULL), PT_OK);
	assert_int_equal(pt_inputs_check(&f, "analyze", PT_INPUTS_TRACES, NULL), PT_OK);
	assert_int_equal(f.nempty, 2);
	/* No such path. */
	snprintf(q, sizeof(q), "%s/none", root);
	pt_error_clear(&e);
	assert_int_equal(pt_inputs_add(&f, q, PT_INPUTS_TRACES, NULL, &e), PT_EIO);
	snprintf(want, sizeof(want), "'%s': No such file or directory", q);
	assert_string_equal(e.msg, want);
	pt_inputs_free(&f);
}

static int count(void *ctx, const char *path, const char *name)
{
	(void)path;
	if (!strcmp(name, "stop.json"))
		return 7;
	(*(int *)ctx)++;
	return 0;
}

/* The visitor's non-zero stops the walk; a link loop ends at 64 levels;
 * a folder that cannot be opened is an error naming it. */
static void test_walk_stops_ends_loops_and_names_bad_folders(void **state)
{
	char p[512], l[512], want[1024];
	pt_error e;
	int n = 0;

	(void)state;
	dir("loop");
	file("loop/f.json");
	snprintf(p, sizeof(p), "%s/loop", root);
	snprintf(l, sizeof(l), "%s/loop/again", root);
	assert_int_equal(symlink(p, l), 0);
	assert_int_equal(pt_inputs_walk(p, NULL, count, &n, NULL), 0);
	/* (Linux stops resolving at 40 links, ELOOP, before our 64 levels) */
	assert_true(n >= 40 && n <= 65);
	/* 70 nested folders with a file in each: 64 levels below the top. */
	snprintf(p, sizeof(p), "%s/deep", root);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(l, sizeof(l), "%s", p);
	for (int i = 0; i < 70; i++) {
		char f[600];

		snprintf(f, sizeof(f), "%s/f.json", l);
		tu_write_text(f, "{}");
		strcat(l, "/d");
		assert_int_equal(mkdir(l, 0700), 0);
	}
	n = 0;
	assert_int_equal(pt_inputs_walk(p, NULL, count, &n, NULL), 0);
	assert_int_equal(n, 65);   /* depth 0 to 64 */
	dir("stop");
	file("stop/stop.json");
	snprintf(p, sizeof(p), "%s/stop", root);
	n = 0;
	assert_int_equal(pt_inputs_walk(p, NULL, count, &n, NULL), 7);
	assert_int_equal(n, 0);
	snprintf(p, sizeof(p), "%s/none", root);
	pt_error_clear(&e);
	assert_int_equal(pt_inputs_walk(p, NULL, count, &n, &e), PT_EIO);
	snprintf(want, sizeof(want), "'%s': cannot open directory: No such file or directory", p);
	assert_string_equal(e.msg, want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_traces_leave_out_summaries_samples_output_and_skip,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_summaries_are_every_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nothing_found_says_where, setup, teardown),
		cmocka_unit_test_setup_teardown(test_walk_stops_ends_loops_and_names_bad_folders,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
