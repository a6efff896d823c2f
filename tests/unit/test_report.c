/*
 * test_report.c - unit tests for src/report: the report tree, JSON output
 * byte-identical to Python's json.dumps(indent=4) (expected strings
 * produced with CPython 3.11), the text report layout, and writing
 * DIR/PerfDisplay (report.json, the PerfDisplay page with the report
 * embedded safely, app.py) with temp files and rename.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/page.h"
#include "report/report.h"

/* {"a": [1.0, 2.5, 0.015779752711771233, 1e-05, 403.7, -3], "b": {}, "c": [],
 *  "d": {"x": "y\"z\\ €😀\b\f\x01\x7f"}, "e": null, "f": 3} */
static pt_report *sample(void)
{
	pt_report *r = pt_report_new();
	pt_rv *root = pt_report_root(r), *a, *d;

	a = pt_rv_arr(r, root, "a");
	pt_rv_num(r, a, NULL, 1.0);
	pt_rv_num(r, a, NULL, 2.5);
	pt_rv_num(r, a, NULL, 0.015779752711771233);
	pt_rv_num(r, a, NULL, 1e-05);
	pt_rv_num(r, a, NULL, 403.7);
	pt_rv_int(r, a, NULL, -3);
	pt_rv_obj(r, root, "b");
	pt_rv_arr(r, root, "c");
	d = pt_rv_obj(r, root, "d");
	pt_rv_str(r, d, "x", "y\"z\\ \xe2\x82\xac\xf0\x9f\x98\x80\b\f\x01\x7f");
	pt_rv_null(r, root, "e");
	pt_rv_int(r, root, "f", 3);
	assert_false(pt_report_oom(r));
	return r;
}

static void test_json_python_layout(void **state)
{
	/* json.dumps(d, indent=4) from CPython 3.11. */
	static const char expect[] =
		"{\n    \"a\": [\n        1.0,\n        2.5,\n        0.015779752711771233,\n"
		"        1e-05,\n        403.7,\n        -3\n    ],\n    \"b\": {},\n    \"c\": [],\n"
		"    \"d\": {\n        \"x\": \"y\\\"z\\\\ \\u20ac\\ud83d\\ude00\\b\\f\\u0001\\u007f\"\n"
		"    },\n    \"e\": null,\n    \"f\": 3\n}";
	pt_report *r = sample();
	pt_sb sb = {0};

	pt_report_json(pt_report_root_c(r), 0, &sb);
	assert_string_equal(sb.buf, expect);
	pt_sb_free(&sb);
	pt_report_free(r);
}

/* Numbers of at most 4 decimals take a short path; it must write what
 * Python's repr writes (expected string from CPython 3.11's json.dumps). */
static void test_json_numbers(void **state)
{
	static const double v[] = {
		0.0005, -0.3062, 14.455, 1234567.8901, 0.30000000000000004, 99999999999.9999,
		-0.0001, 0.1, 2.5e-05, 12345678901.5,
	};
	static const char expect[] =
		"[\n    0.0005,\n    -0.3062,\n    14.455,\n    1234567.8901,\n"
		"    0.30000000000000004,\n    99999999999.9999,\n    -0.0001,\n    0.1,\n"
		"    2.5e-05,\n    12345678901.5\n]";
	pt_report *r = pt_report_new();
	pt_rv *a = pt_rv_arr(r, pt_report_root(r), "a");
	pt_sb sb = {0};
	size_t i;
	unsigned seed = 12345;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		pt_rv_num(r, a, NULL, v[i]);
	pt_report_json(a, 0, &sb);
	assert_string_equal(sb.buf, expect);
	/* Random k / 10^4 below 1e11: the text reads back as the value, and
	 * no shorter %g form does (so it is the shortest, as repr's). */
	for (i = 0; i < 200000; i++) {
		long long k;
		double x;
		char buf[400], *e;
		int digits = 0;
		const char *c;

		seed = seed * 1103515245u + 12345u;
		k = ((long long)seed << 20 ^ (long long)(seed >> 7) * 7919) % 1000000000000000LL;
		if (i % 3 == 0)
			k %= 100000;
		x = (double)(i % 2 ? -k : k) / 1e4;
		a->child = a->last = NULL;
		a->n = 0;
		pt_rv_num(r, a, NULL, x);
		pt_sb_reset(&sb);
		pt_report_json(a->child, 0, &sb);
		assert_true(strtod(sb.buf, &e) == x);
		assert_true(*e == 0);
		for (c = sb.buf; *c; c++)
			digits += *c >= '0' && *c <= '9';
		for (c = sb.buf; *c == '-' || *c == '0' || *c == '.'; c++)
			digits -= *c == '0';
		if (x != floor(x) && digits > 1) {
			snprintf(buf, sizeof(buf), "%.*g", digits - 1, x);
			assert_true(strtod(buf, NULL) != x);
		}
	}
	pt_sb_free(&sb);
	pt_report_free(r);
}

static void test_invalid_utf8(void **state)
{
	pt_report *r = pt_report_new();
	pt_sb sb = {0};

	pt_rv_str(r, pt_report_root(r), "k", "a\xff\xc3(\xed\xa0\x80z");
	pt_report_json(pt_rv_get(pt_report_root_c(r), "k"), 0, &sb);
	/* Each invalid byte (lone 0xff, truncated 0xc3, surrogate encoding)
	 * becomes U+FFFD, so report.json is always valid JSON. */
	assert_string_equal(sb.buf, "\"a\\ufffd\\ufffd(\\ufffd\\ufffd\\ufffdz\"");
	pt_sb_free(&sb);
	pt_report_free(r);
}

static void test_tree(void **state)
{
	pt_report *r = pt_report_new();
	pt_rv *root = pt_report_root(r), *o;

	o = pt_rv_obj(r, root, "x");
	assert_non_null(o);
	pt_rv_int(r, o, "one", 1);
	pt_rv_int(r, o, "two", 2);
	pt_rv_int(r, o, "one", 3); /* duplicate: first match wins in lookups */
	assert_int_equal(o->n, 3);
	assert_int_equal(pt_rv_get(o, "one")->i, 1);
	assert_null(pt_rv_get(o, "three"));
	assert_null(pt_rv_get(NULL, "x"));
	assert_null(pt_rv_get(pt_rv_get(o, "one"), "x")); /* not an object */
	assert_null(pt_rv_int(r, NULL, "x", 1));           /* NULL parent ignored */
	assert_false(pt_report_oom(r));
	/* Many nodes: the arena grows across chunks. */
	{
		int i;
		char k[32];

		for (i = 0; i < 20000; i++) {
			snprintf(k, sizeof(k), "key%d", i);
			pt_rv_str(r, o, k, "some value that takes room");
		}
		assert_int_equal(o->n, 20003);
		assert_string_equal(pt_rv_get(o, "key19999")->str, "some value that takes room");
	}
	pt_report_free(r);
	pt_report_free(NULL);
}

static pt_report *with_sections(size_t nfind)
{
	pt_report *r = pt_report_new();
	pt_rv *root = pt_report_root(r);
	size_t i;

	pt_rv_num(r, pt_rv_obj(r, root, "GPU Compute"), "k", 0.25);
	pt_rv_obj(r, root, "GPU memory operations");
	pt_rv_obj(r, root, "Communication");
	pt_rv_obj(r, root, "CUDA Runtime");
	pt_rv_obj(r, root, "Python functions");
	pt_rv_obj(r, root, "workers");
	pt_report_findings_open(r);
	for (i = 0; i < nfind; i++) {
		char e[64];
		pt_finding f = { .category = "Steps", .explanation = e };

		snprintf(e, sizeof(e), "finding number %zu", i + 1);
		assert_int_equal(pt_report_add_finding(r, &f), 0);
	}
	return r;
}

static void test_text_json(void **state)
{
	static const char expect[] =
		"GPU Compute:\n{\n    \"k\": 0.25\n}\n\n"
		"GPU memory operations:\n{}\n\n"
		"Communication:\n{}\n\n"
		"CUDA Runtime:\n{}\n\n"
		"Python functions:\n{}\n\n"
		"Findings:\n1. finding number 1\n2. finding number 2\n"
		"... and 1 more findings in report.json.\n";
	pt_report *r = with_sections(3);
	pt_sb sb = {0};

	/* "display" (per-worker data for the page) is not part of the text. */
	pt_rv_int(r, pt_rv_obj(r, pt_report_root(r), "display"), "version", 1);
	pt_report_text_json(r, 2, &sb);
	assert_string_equal(sb.buf, expect);
	pt_sb_reset(&sb);
	pt_report_text_json(r, 0, &sb);
	assert_non_null(strstr(sb.buf, "3. finding number 3\n"));
	assert_null(strstr(sb.buf, "more findings"));
	pt_report_free(r);
	r = with_sections(0);
	pt_sb_reset(&sb);
	pt_report_text_json(r, 0, &sb);
	assert_non_null(strstr(sb.buf, "Findings:\nNo worker differs from the others beyond the "
				       "thresholds.\n"));
	pt_sb_free(&sb);
	pt_report_free(r);
}

static void test_write_dir(void **state)
{
	char dir[] = "/tmp/pt_test_report_XXXXXX", sub[256], path[300];
	pt_report *r = with_sections(1);
	pt_error err;
	pt_sb sb = {0}, page = {0};
	char *txt;
	DIR *d;
	struct dirent *e;
	struct stat st;
	int n = 0;

	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/out/nested", dir);
	pt_error_clear(&err);
	assert_int_equal(pt_report_write_dir(r, sub, &err), PT_OK);
	snprintf(path, sizeof(path), "%s/PerfDisplay/report.json", sub);
	txt = tu_read_file(path, NULL);
	pt_report_json(pt_report_root_c(r), 0, &sb);
	pt_sb_addc(&sb, '\n');
	assert_string_equal(txt, sb.buf);
	free(txt);
	/* index.html is the PerfDisplay page made from that very report.json. */
	assert_int_equal(pt_page_render(sb.buf, sb.len, &page, &err), PT_OK);
	snprintf(path, sizeof(path), "%s/PerfDisplay/index.html", sub);
	txt = tu_read_file(path, NULL);
	assert_string_equal(txt, page.buf);
	assert_non_null(strstr(txt, "<script type=\"application/json\" id=\"pt-report\">{\"GPU Compute\":{\"k\":0.25},"));
	assert_non_null(strstr(txt, "\"findings\":[{\"rank\":1,\"category\":\"Steps\","
				    "\"workers\":[],\"function\":\"\",\"metric\":\"\",\"value\":0.0,"
				    "\"others\":0.0,\"impact (ms)\":0.0,\"explanation\":\"finding "
				    "number 1\",\"view\":\"workers\",\"labels\":[],\"cause\":\"\","
				    "\"metrics\":[{\"name\":\"\",\"value\":0.0,\"unit\":\"\"}]}]}"
				    "</script>"));
	free(txt);
	/* app.py, executable, serves the folder. */
	snprintf(path, sizeof(path), "%s/PerfDisplay/app.py", sub);
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_mode & S_IXUSR);
	txt = tu_read_file(path, NULL);
	assert_non_null(strstr(txt, "http.server"));
	free(txt);
	/* Written again over the old files; nothing but the three files left. */
	assert_int_equal(pt_report_write_dir(r, sub, &err), PT_OK);
	snprintf(path, sizeof(path), "%s/PerfDisplay", sub);
	d = opendir(path);
	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	assert_int_equal(n, 3);
	/* A file where the directory should be: a one-line error naming it. */
	snprintf(path, sizeof(path), "%s/file", dir);
	fclose(fopen(path, "w"));
	pt_error_clear(&err);
	assert_int_equal(pt_report_write_dir(r, path, &err), PT_EIO);
	assert_non_null(strstr(err.subject, "/file"));
	assert_non_null(strstr(err.msg, "cannot create directory"));
	/* The page cannot be put in place (a folder in its way): the error
	 * names index.html, and no temporary file is left. */
	snprintf(path, sizeof(path), "%s/blocked/PerfDisplay/index.html", dir);
	{
		char cmd[400];

		snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
		assert_int_equal(system(cmd), 0);
	}
	snprintf(path, sizeof(path), "%s/blocked", dir);
	pt_error_clear(&err);
	assert_int_equal(pt_report_write_dir(r, path, &err), PT_EIO);
	assert_non_null(strstr(err.subject, "blocked/PerfDisplay/index.html"));
	snprintf(path, sizeof(path), "%s/blocked/PerfDisplay", dir);
	n = 0;
	d = opendir(path);
	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	assert_int_equal(n, 0);
	/* ...and no report.json beside the page that could not be written. */
	snprintf(path, sizeof(path), "%s/blocked/PerfDisplay/report.json", dir);
	assert_int_not_equal(access(path, F_OK), 0);
	tu_rm_rf(dir);
	pt_sb_free(&page);
	pt_sb_free(&sb);
	pt_report_free(r);
}

/* A write that fails part way (here the file size limit: report.json fits,
 * the page does not) leaves the old report.json and index.html as they
 * were, never a new report beside an old page (issue 11). */
static void test_write_dir_failure_keeps_pair(void **state)
{
	char dir[] = "/tmp/pt_test_report_XXXXXX", path[300];
	pt_report *r1 = with_sections(1), *r2 = with_sections(2);
	pt_error err;
	char *old_json, *old_page, *txt;
	struct rlimit saved, lim;
	void (*old_handler)(int);
	DIR *d;
	struct dirent *e;
	int rc, n = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	pt_error_clear(&err);
	assert_int_equal(pt_report_write_dir(r1, dir, &err), PT_OK);
	snprintf(path, sizeof(path), "%s/PerfDisplay/report.json", dir);
	old_json = tu_read_file(path, NULL);
	snprintf(path, sizeof(path), "%s/PerfDisplay/index.html", dir);
	old_page = tu_read_file(path, NULL);
	assert_true(strlen(old_json) < 16384);
	assert_true(pt_page_template_size() > 32768);
	/* Files may grow to 16 KiB: the report fits, the page does not. */
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &saved), 0);
	lim = saved;
	lim.rlim_cur = 16384;
	old_handler = signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	pt_error_clear(&err);
	rc = pt_report_write_dir(r2, dir, &err);
	setrlimit(RLIMIT_FSIZE, &saved);
	signal(SIGXFSZ, old_handler);
	assert_int_equal(rc, PT_EIO);
	assert_non_null(strstr(err.subject, "index.html"));
	snprintf(path, sizeof(path), "%s/PerfDisplay/report.json", dir);
	txt = tu_read_file(path, NULL);
	assert_string_equal(txt, old_json);
	free(txt);
	snprintf(path, sizeof(path), "%s/PerfDisplay/index.html", dir);
	txt = tu_read_file(path, NULL);
	assert_string_equal(txt, old_page);
	free(txt);
	/* No temporary file left behind. */
	snprintf(path, sizeof(path), "%s/PerfDisplay", dir);
	d = opendir(path);
	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	assert_int_equal(n, 0);
	free(old_json);
	free(old_page);
	tu_rm_rf(dir);
	pt_report_free(r1);
	pt_report_free(r2);
}

/* Names that are markup (kernel and Python names hold '<' and '>') cannot
 * end the page's data block or inject markup: inside the page every '<',
 * '>' and '&' of the report is a \u escape, so the page has exactly the
 * template's own "</script" tags; report.json keeps the names as they are. */
static void test_page_escapes_names(void **state)
{
	char dir[] = "/tmp/pt_test_report_XXXXXX", path[300];
	pt_report *r = pt_report_new();
	pt_rv *root = pt_report_root(r);
	pt_sb empty = {0};
	pt_error err;
	char *txt;

	assert_non_null(mkdtemp(dir));
	pt_rv_str(r, root, "</script>", "a<b>&c</SCRIPT><!--");
	pt_rv_num(r, pt_rv_arr(r, root, "n"), NULL, 0.5);
	pt_error_clear(&err);
	assert_int_equal(pt_report_write_dir(r, dir, &err), PT_OK);
	snprintf(path, sizeof(path), "%s/PerfDisplay/index.html", dir);
	txt = tu_read_file(path, NULL);
	assert_non_null(strstr(txt, "id=\"pt-report\">{\"\\u003c/script\\u003e\":\"a\\u003cb\\u003e"
				    "\\u0026c\\u003c/SCRIPT\\u003e\\u003c!--\",\"n\":[0.5]}</script>"));
	assert_null(strstr(txt, "a<b>"));
	assert_null(strstr(txt, "<!--\""));
	assert_int_equal(pt_page_render("{}", 2, &empty, &err), PT_OK);
	assert_int_equal(tu_count(txt, "</script"), tu_count(empty.buf, "</script"));
	assert_int_equal(tu_count(txt, "</SCRIPT"), tu_count(empty.buf, "</SCRIPT"));
	free(txt);
	snprintf(path, sizeof(path), "%s/PerfDisplay/report.json", dir);
	txt = tu_read_file(path, NULL);
	assert_string_equal(txt, "{\n    \"</script>\": \"a<b>&c</SCRIPT><!--\",\n    \"n\": [\n"
				 "        0.5\n    ]\n}\n");
	free(txt);
	tu_rm_rf(dir);
	pt_sb_free(&empty);
	pt_report_free(r);
}

/* The finding model: report.json's "findings" are written from it, and the
 * text report renders it (merged evidence, the "possibly noise" line),
 * whatever the tree holds. */
static void test_finding_model(void **state)
{
	static const char *const w1[] = { "w1.json" };
	static const char *const w3[] = { "w3.json" };
	char fn[32] = "slow_augment";
	pt_finding_ev ev[3] = {
		{ PT_EV_SAME, "Python functions", "w1.json", "slow_augment", "bottleneck ratio",
		  0.4, 0.1, 90, "w1.json spends 40% in slow_augment" },
		{ PT_EV_SYMPTOM, "Communication", "w0.json", "gloo:all_reduce", "median",
		  30, 17, 40, "w0.json waits" },
		{ PT_EV_SYMPTOM, "Communication", "w0.json", "gloo:broadcast", "median",
		  3, 1, 4, "w0.json waits again" },
	};
	pt_finding f = {
		.category = "Lockstep", .workers = w1, .nworkers = 1, .function = fn,
		.metric = "ms late per step", .value = 12.5, .others = NAN, .impact_ms = 100,
		.explanation = "the others waited for w1.json: slow_augment",
		.conf = { "strong", 0.25, NAN, 0, NULL, 1.5, "the job's step-to-step spread",
			  "far beyond the noise" },
		.ev = ev, .nev = 3,
	};
	pt_finding g = {
		.category = "Python functions", .workers = w3, .nworkers = 1,
		.function = "a.py(1): f|aten::mm", .value = 0.02, .others = 0.018, .impact_ms = 1,
		.explanation = "w3.json spends a bit more in aten::mm",
		.conf = { "weak", 0.004, 1.1, 2, "same", NAN, NULL, "within the noise" },
	};
	pt_report *r = pt_report_new();
	const pt_finding *m;
	pt_sb sb = { 0 }, js = { 0 };
	size_t n;

	(void)state;
	assert_null(pt_report_findings(r, &n));
	assert_int_equal(n, 0);
	pt_rv_obj(r, pt_report_root(r), "workers");
	assert_int_equal(pt_report_add_finding(r, &f), 0);
	assert_int_equal(pt_report_add_finding(r, &g), 0);
	/* a deep copy: the caller's strings may go */
	strcpy(fn, "changed");
	m = pt_report_findings(r, &n);
	assert_int_equal(n, 2);
	assert_string_equal(m[0].function, "slow_augment");
	assert_string_equal(m[0].ev[1].worker, "w0.json");
	assert_string_equal(m[1].conf.calls, "same");
	assert_string_equal(m[0].conf.calls, "unknown");

	pt_report_json(pt_rv_get(pt_report_root_c(r), "findings"), 0, &js);
	assert_false(js.oom);
	assert_non_null(strstr(js.buf, "\"rank\": 2,\n        \"category\": \"Python functions\""));
	assert_non_null(strstr(js.buf, "\"others\": null,\n        \"impact (ms)\": 100.0,"));
	assert_non_null(strstr(js.buf, "\"noise (ms per step)\": 1.5,\n            \"noise\": "
				   "\"the job's step-to-step spread\","));
	assert_non_null(strstr(js.buf, "\"kind\": \"symptom on a worker that waited for it\""));
	/* no noise member when it was not measured, no evidence array when none */
	assert_null(strstr(strstr(js.buf, "\"rank\": 2"), "noise (ms"));
	assert_null(strstr(strstr(js.buf, "\"rank\": 2"), "\"evidence\": ["));

	pt_report_text_people(r, NULL, &sb);
	assert_false(sb.oom);
	assert_non_null(strstr(sb.buf, "Findings (1, most time lost first)\n"));
	assert_non_null(strstr(sb.buf, "  1. the others waited for w1.json: slow_augment\n"));
	assert_non_null(strstr(sb.buf, "     strong: far beyond the noise\n"));
	assert_non_null(strstr(sb.buf, "     also: seen as Python functions; 2 symptoms on the "
				   "workers that waited for it (w0.json)\n"));
	assert_non_null(strstr(sb.buf, "  Possibly noise (1: weak evidence or within the job's "
				   "own noise; report.json has them): w3.json aten::mm (0.40% of its\n"
				   "    time)\n"));
	pt_sb_free(&sb);
	pt_sb_free(&js);
	pt_report_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_python_layout),
		cmocka_unit_test(test_json_numbers),
		cmocka_unit_test(test_invalid_utf8),
		cmocka_unit_test(test_tree),
		cmocka_unit_test(test_text_json),
		cmocka_unit_test(test_finding_model),
		cmocka_unit_test(test_write_dir),
		cmocka_unit_test(test_write_dir_failure_keeps_pair),
		cmocka_unit_test(test_page_escapes_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
