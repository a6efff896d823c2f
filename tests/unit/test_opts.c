/*
 * test_opts.c - unit tests for the option-table parser every perftracker
 * subcommand uses (src/util/opts.c): each argument form, every type, the
 * error messages (the CLI prints them as they are), included tables with
 * offset targets, and the table check.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/opts.h"

/* A shared sub-table, as cli/diagnose.c has for the diagnosis options. */
typedef struct shared {
	double z;
	size_t top;
	int quiet;
} shared;

static const pt_opt shared_opts[] = {
	PT_OPT_DOUBLE(0, "z", PT_AT(shared, z), "Z", "z-score"),
	PT_OPT_INT(0, "top", PT_AT(shared, top), "N", "top entries"),
	PT_OPT_FLAG('q', "quiet", PT_AT(shared, quiet), "quiet"),
	PT_OPT_END(),
};

static const char *const formats[] = { "text", "json", NULL };

typedef struct vals {
	const char *out, *host;
	long jobs;
	int port, json, progress, format, nhz, hz;
	int64_t window;
	double stale;
	shared sh;
	char seen[8][32];
} vals;

static int hz_cb(const pt_opt *o, const char *arg, void *target, pt_error *e)
{
	vals *v = target;

	v->nhz++;
	if (!arg) {
		v->hz = 10000;
		return 0;
	}
	if (!strcmp(arg, "5"))
		return pt_error_set(e, PT_EINVAL, -1, "option '--%s': '%s' is too slow", o->long_name,
				    arg);
	if (!strcmp(arg, "6"))
		return -1; /* no message: the parser writes one */
	v->hz = atoi(arg);
	return 0;
}

/* Parse the NULL-terminated words (argv[0] = "cmd") into *v. */
static int parse(vals *v, pt_error *e, char **argv)
{
	const pt_opt opts[] = {
		PT_OPT_STRING('o', "output", PT_TO(&v->out), "DIR", "output"),
		PT_OPT_INT('j', "jobs", PT_TO(&v->jobs), "N", "jobs"),
		PT_OPT_INT_RANGE(0, "port", PT_TO(&v->port), "N", 0, 65535, "port"),
		PT_OPT_INT_RANGE(0, "window", PT_TO(&v->window), "N", 1, 0, "window"),
		PT_OPT_FLAG(0, "json", PT_TO(&v->json), "json"),
		PT_OPT_SET(0, "no-progress", PT_TO(&v->progress), 0, "no progress"),
		PT_OPT_CHOICE(0, "format", PT_TO(&v->format), "text|json", formats, "format"),
		PT_OPT_DOUBLE(0, "stale", PT_TO(&v->stale), "SEC", "stale"),
		{ .type = PT_OPT_TSTRING, .long_name = "host", PT_TO(&v->host), .argname = "ADDR",
		  .flags = PT_OPT_NONEMPTY, .help = "host" },
		PT_OPT_CALLBACK(0, "hz", PT_TO(v), "HZ", hz_cb, PT_OPT_OPTARG, "rate"),
		PT_OPT_INCLUDE(shared_opts, &v->sh, "shared:"),
		PT_OPT_END(),
	};
	int argc = 0;

	while (argv[argc])
		argc++;
	assert_int_equal(pt_opts_check(opts, e), 0);
	return pt_opts_parse(opts, argc, argv, e);
}

static void init(vals *v)
{
	memset(v, 0, sizeof(*v));
	v->progress = 1;
	v->port = 5000;
	v->window = 50;
}

#define ARGV(...) ((char *[]){ "cmd", __VA_ARGS__, NULL })

static void test_forms(void **state)
{
	vals v;
	pt_error e;
	char **a = ARGV("in1", "--output", "o1", "-j", "3", "in2", "--stale=2.5", "-j7", "--json",
			"--no-progress", "--format=json", "-", "--z", "4", "--top=9", "-q", "--",
			"--json", "-j");

	init(&v);
	assert_int_equal(parse(&v, &e, a), 5);
	assert_string_equal(v.out, "o1");
	assert_int_equal(v.jobs, 7); /* the later one wins */
	assert_true(v.stale == 2.5);
	assert_int_equal(v.json, 1);
	assert_int_equal(v.progress, 0);
	assert_int_equal(v.format, 1);
	assert_true(v.sh.z == 4);
	assert_int_equal(v.sh.top, 9);
	assert_int_equal(v.sh.quiet, 1);
	/* positionals in order at argv[1..], "-" and everything after "--" */
	assert_string_equal(a[0], "cmd");
	assert_string_equal(a[1], "in1");
	assert_string_equal(a[2], "in2");
	assert_string_equal(a[3], "-");
	assert_string_equal(a[4], "--json");
	assert_string_equal(a[5], "-j");
	assert_null(a[6]);
	/* a value that looks like an option is still the value */
	init(&v);
	assert_int_equal(parse(&v, &e, ARGV("-o", "-", "--output", "--json")), 0);
	assert_string_equal(v.out, "--json");
	assert_int_equal(v.json, 0);
	init(&v);
	assert_int_equal(parse(&v, &e, ARGV("--output=")), 0);
	assert_string_equal(v.out, "");
}

static void test_help(void **state)
{
	vals v;
	pt_error e;

	init(&v);
	assert_int_equal(parse(&v, &e, ARGV("x", "--help")), PT_OPTS_HELP);
	assert_int_equal(parse(&v, &e, ARGV("-h", "--frob")), PT_OPTS_HELP);
	/* "--help=x" is not the help */
	assert_int_equal(parse(&v, &e, ARGV("--help=x")), PT_OPTS_UNKNOWN);
}

static void expect(char **argv, int rc, const char *msg)
{
	vals v;
	pt_error e;

	init(&v);
	assert_int_equal(parse(&v, &e, argv), rc);
	assert_string_equal(e.msg, msg);
}

static void test_errors(void **state)
{
	expect(ARGV("--frobnicate"), PT_OPTS_UNKNOWN, "unknown option '--frobnicate'");
	expect(ARGV("--frobnicate=3"), PT_OPTS_UNKNOWN, "unknown option '--frobnicate'");
	expect(ARGV("-x"), PT_OPTS_UNKNOWN, "unknown option '-x'");
	expect(ARGV("-qj4"), PT_OPTS_UNKNOWN, "unknown option '-qj4'"); /* no bundling */
	expect(ARGV("--jso"), PT_OPTS_UNKNOWN, "unknown option '--jso'"); /* no abbreviation */
	expect(ARGV("--output"), PT_OPTS_ERROR, "option '--output' needs a value");
	expect(ARGV("a", "-o"), PT_OPTS_ERROR, "option '-o' needs a value");
	expect(ARGV("--json=1"), PT_OPTS_ERROR, "option '--json' takes no value");
	expect(ARGV("--jobs", "x"), PT_OPTS_ERROR, "option '--jobs': 'x' is not a non-negative integer");
	expect(ARGV("-j-2"), PT_OPTS_ERROR, "option '-j': '-2' is not a non-negative integer");
	expect(ARGV("--jobs", "3x"), PT_OPTS_ERROR, "option '--jobs': '3x' is not a non-negative integer");
	expect(ARGV("--jobs", "99999999999999999999"), PT_OPTS_ERROR,
	       "option '--jobs': '99999999999999999999' is not a non-negative integer");
	expect(ARGV("--port", "70000"), PT_OPTS_ERROR, "option '--port': '70000' is out of range (0-65535)");
	expect(ARGV("--window", "0"), PT_OPTS_ERROR, "option '--window': '0' is below 1");
	expect(ARGV("--stale", "abc"), PT_OPTS_ERROR, "option '--stale': 'abc' is not a non-negative number");
	expect(ARGV("--stale=-1"), PT_OPTS_ERROR, "option '--stale': '-1' is not a non-negative number");
	expect(ARGV("--stale", "nan"), PT_OPTS_ERROR, "option '--stale': 'nan' is not a non-negative number");
	expect(ARGV("--z", ""), PT_OPTS_ERROR, "option '--z': '' is not a non-negative number");
	expect(ARGV("--format", "xml"), PT_OPTS_ERROR, "option '--format': 'xml' is not 'text' or 'json'");
	expect(ARGV("--host="), PT_OPTS_ERROR, "option '--host' needs a value");
	expect(ARGV("--hz=5"), PT_OPTS_ERROR, "option '--hz': '5' is too slow");
	expect(ARGV("--hz=6"), PT_OPTS_ERROR, "option '--hz': bad value '6'");
}

static void test_int_widths(void **state)
{
	vals v;
	pt_error e;

	init(&v);
	assert_int_equal(parse(&v, &e, ARGV("--port", "0", "--window", "9000000000", "--top",
					    "18446744073709551")), 0);
	assert_int_equal(v.port, 0);
	assert_true(v.window == 9000000000LL);
	assert_true(v.sh.top == 18446744073709551ULL);
}

static void test_optional_arg(void **state)
{
	vals v;
	pt_error e;
	char **a = ARGV("--hz", "in", "--hz", "20000", "--hz=300");

	init(&v);
	assert_int_equal(parse(&v, &e, a), 1);
	assert_string_equal(a[1], "in"); /* not a digit: not the argument */
	assert_int_equal(v.nhz, 3);
	assert_int_equal(v.hz, 300);
	init(&v);
	assert_int_equal(parse(&v, &e, ARGV("--hz")), 0);
	assert_int_equal(v.hz, 10000);
	init(&v);
	assert_int_equal(parse(&v, &e, ARGV("--hz", "42")), 0);
	assert_int_equal(v.hz, 42);
}

static void test_check(void **state)
{
	int x = 0;
	double d = 0;
	pt_error e;
	const pt_opt dup_long[] = {
		PT_OPT_FLAG(0, "quiet", PT_TO(&x), "a"),
		PT_OPT_INCLUDE(shared_opts, NULL, NULL),
		PT_OPT_END(),
	};
	const pt_opt dup_short[] = {
		PT_OPT_FLAG('q', "silent", PT_TO(&x), "a"),
		PT_OPT_INCLUDE(shared_opts, NULL, NULL),
		PT_OPT_END(),
	};
	const pt_opt bad_size[] = {
		{ .type = PT_OPT_TINT, .long_name = "n", .target = &d, .size = 3, .argname = "N" },
		PT_OPT_END(),
	};
	const pt_opt no_name[] = {
		PT_OPT_FLAG(0, NULL, PT_TO(&x), "a"),
		PT_OPT_END(),
	};
	const pt_opt no_cb[] = {
		{ .type = PT_OPT_TCALLBACK, .long_name = "cb", .argname = "X" },
		PT_OPT_END(),
	};

	assert_int_equal(pt_opts_check(shared_opts, &e), 0);
	assert_int_equal(pt_opts_check(dup_long, &e), -1);
	assert_string_equal(e.msg, "option '--quiet' defined twice");
	assert_int_equal(pt_opts_check(dup_short, &e), -1);
	assert_string_equal(e.msg, "option '--quiet' defined twice");
	assert_int_equal(pt_opts_check(bad_size, &e), -1);
	assert_string_equal(e.msg, "option 'n': integer of 3 bytes");
	assert_int_equal(pt_opts_check(no_name, &e), -1);
	assert_int_equal(pt_opts_check(no_cb, &e), -1);
	assert_string_equal(e.msg, "option 'cb': no callback");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_int_widths),
		cmocka_unit_test(test_optional_arg),
		cmocka_unit_test(test_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
