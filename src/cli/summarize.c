/*
 * summarize.c - `perftracker summarize TRACE -o SUMMARY.json`: one worker's
 * raw trace -> its behaviour-pattern summary (docs/summary.md).
 * Runs on each node (by hand or from the agent); the master later reads
 * only the summaries.  Read errors are one line naming the file and byte
 * offset, exit 1; a truncated trace is summarised with a warning.
 */
#include "cli.h"
#include "analysis/summary.h"
#include "trace/kineto.h"
#include "util/strbuf.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static const char usage_text[] =
	"usage: perftracker summarize TRACE [-o SUMMARY.json] [options]\n"
	"\n"
	"Summarise one worker's PyTorch profiler trace (.json or .json.gz) into its\n"
	"behaviour patterns: window, steps, GPU utilisation, time by class, and per\n"
	"function count, median/p10/p90/MAD, bottleneck and execution ratio.\n"
	"\n"
	"options:\n"
	"  -o, --output FILE         write the summary JSON to FILE ('-' = stdout, the default);\n"
	"                            written to a temporary name, then renamed\n"
	"  --min-python-ratio R      keep Python/CPU stacks owning >= R of the window\n"
	"                            (default 0.0005)\n"
	"  --max-python N            keep at most N Python/CPU stacks, largest first (default 500)\n"
	"  --time                    print read / analysis / write CPU times on stderr\n"
	"  -h, --help                show this help\n";

/* CPU time of this (single-threaded) process: on a shared machine wall
 * time measured other jobs as much as this one. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Value of option argv[*i] ("--opt VAL" or "--opt=VAL"), advancing *i. */
static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);

	if (!strncmp(argv[*i], name, n) && argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (*i + 1 >= argc)
		die("option '%s' needs a value", name);
	return argv[++*i];
}

static int is_opt(const char *arg, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(arg, name, n) && (arg[n] == 0 || arg[n] == '=');
}

static int write_stdout(const pt_summary *s)
{
	pt_sb sb = { 0 };
	int rc = 0;

	pt_summary_write(s, &sb);
	pt_sb_addc(&sb, '\n');
	if (sb.oom)
		rc = error("out of memory while writing the summary");
	else if (fwrite(sb.buf, 1, sb.len, stdout) != sb.len || fflush(stdout))
		rc = error("cannot write the summary to stdout");
	pt_sb_free(&sb);
	return rc;
}

int cmd_summarize(int argc, char **argv)
{
	pt_summary_options opt;
	const char *trace = NULL, *out = "-";
	pt_summary *s = NULL;
	pt_store st;
	pt_error err;
	int i, timing = 0, rc = -1;
	double t0, t1, t2, t3;

	pt_summary_options_default(&opt);
	pt_error_clear(&err);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage_text, stdout);
			return 0;
		} else if (!strcmp(a, "-o") || is_opt(a, "--output")) {
			out = opt_value(argc, argv, &i, !strcmp(a, "-o") ? "-o" : "--output");
		} else if (is_opt(a, "--min-python-ratio")) {
			opt.min_python_ratio = opt_double("--min-python-ratio",
							  opt_value(argc, argv, &i, "--min-python-ratio"));
		} else if (is_opt(a, "--max-python")) {
			opt.max_python = (size_t)opt_long("--max-python",
							  opt_value(argc, argv, &i, "--max-python"));
		} else if (!strcmp(a, "--time")) {
			timing = 1;
		} else if (a[0] == '-' && a[1]) {
			error("summarize: unknown option '%s'", a);
			fputs(usage_text, stderr);
			return -1;
		} else if (!trace) {
			trace = a;
		} else {
			error("summarize: one trace at a time ('%s' and '%s')", trace, a);
			return -1;
		}
	}
	if (!trace) {
		fputs(usage_text, stderr);
		return -1;
	}

	if (pt_store_init(&st))
		return error("out of memory");
	t0 = now_s();
	if (pt_kineto_read_file(trace, &st, &err)) {
		pt_error_subject(&err, trace);
		error_pt(&err);
		goto out;
	}
	t1 = now_s();
	/* The reader puts the truncation message first when there is one. */
	if (st.truncated)
		warning("'%s': %s; summary marked \"truncated\"", trace,
			st.warning[0] ? st.warning : "trace is truncated");
	else if (st.nwarnings)
		warning("'%s': %s%s", trace, st.warning,
			st.nwarnings > 1 ? " (more: see \"nwarnings\" in the summary)" : "");
	s = pt_summary_build(&st, trace, &opt, &err);
	t2 = now_s();
	if (!s) {
		error_pt(&err);
		goto out;
	}
	if (!strcmp(out, "-")) {
		if (write_stdout(s))
			goto out;
	} else if (pt_summary_write_file(s, out, &err)) {
		error_pt(&err);
		goto out;
	}
	t3 = now_s();
	if (timing)
		fprintf(stderr,
			"perftracker: summarize: '%s': %zu events, %.1f MB json; cpu time: read "
			"%.3f s (%.0f MB/s), analysis %.3f s, write %.3f s; %zu patterns\n",
			trace, st.n, (double)st.bytes_read / 1e6, t1 - t0,
			t1 > t0 ? (double)st.bytes_read / 1e6 / (t1 - t0) : 0.0, t2 - t1, t3 - t2,
			s->npatterns);
	rc = 0;
out:
	pt_summary_free(s);
	pt_store_free(&st);
	return rc;
}
