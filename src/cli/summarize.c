/*
 * summarize.c - `perftracker summarize TRACE -o SUMMARY.json`: one worker's
 * raw trace -> its behaviour-pattern summary (docs/summary.md).
 * Runs on each node (by hand or from the agent); the master later reads
 * only the summaries.  Read errors are one line naming the file and byte
 * offset, exit 1; a truncated trace is summarised with a warning.
 * Hardware samples (--hw, --hw-dir, or hw_*.json beside the trace) are
 * joined to the kernels (docs/hardware.md).
 */
#include "cli.h"
#include "analysis/summary.h"
#include "analysis/digest.h"
#include "trace/any.h"
#include "util/clock.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

static const cli_usage usage = {
	"summarize",
	"perftracker summarize TRACE [-o SUMMARY.json] [options]",
	"Summarise one worker's PyTorch profiler trace (.json or .json.gz) or Nsight\n"
	"Systems SQLite export (.sqlite) into its behaviour patterns: window, steps, GPU\n"
	"utilisation, time by class, and per function count, median/p10/p90/MAD,\n"
	"bottleneck and execution ratio; with hardware samples, link throughput inside\n"
	"each communication kernel and the GPU's clocks during compute kernels.\n",
	NULL,
};

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

/* The samples to join: --hw files, else --hw-dir, else the trace's folder.
 * Explicit files must be readable; in folders, unreadable ones are warned
 * about and skipped. */
typedef struct hwlist {
	pt_samples *v;
	size_t n, cap;
} hwlist;

/* --hw FILE (a callback: each one is read as it comes). */
static int hw_add_file(const pt_opt *o, const char *path, void *target, pt_error *e)
{
	hwlist *h = target;

	if (X_GROW(h->v, h->cap, h->n + 1))
		return pt_error_set(e, PT_ENOMEM, -1, "out of memory");
	if (pt_trace_read_samples(path, &h->v[h->n], e))
		return -1;
	h->n++;
	return 0;
}

static int hw_add_dir(hwlist *h, const char *dir, int quiet_missing)
{
	pt_samples *v = NULL;
	size_t n = 0, nbad = 0, i;
	pt_error err, bad;

	pt_error_clear(&err);
	pt_error_clear(&bad);
	if (pt_trace_samples_dir(dir, &v, &n, &nbad, &bad, &err)) {
		if (quiet_missing && err.code == PT_EIO)
			return 0;
		return error_pt(&err);
	}
	if (nbad) {
		char m[1024];

		warning("%s%s; samples file skipped", pt_error_format(&bad, m, sizeof(m)),
			nbad > 1 ? " (and more)" : "");
	}
	for (i = 0; i < n; i++) {
		if (X_GROW(h->v, h->cap, h->n + 1)) {
			for (; i < n; i++)
				pt_samples_free(&v[i]);
			x_free(v);
			return error("out of memory");
		}
		h->v[h->n++] = v[i];
	}
	x_free(v);
	return 0;
}

static void trace_dir(const char *trace, char *dir, size_t cap)
{
	const char *sl = strrchr(trace, '/');

	if (!sl)
		snprintf(dir, cap, ".");
	else if (sl == trace)
		snprintf(dir, cap, "/");
	else
		snprintf(dir, cap, "%.*s", (int)(sl - trace), trace);
}

/* After --hw (nhwfiles read): the samples of --hw-dir, else those beside
 * the trace, unless --no-hw.  -1 after an error message. */
static int hw_gather(hwlist *hw, const char *trace, const char *hwdir, int nohw, int nhwfiles)
{
	if (nohw && (nhwfiles || hwdir))
		return error("summarize: --no-hw with --hw or --hw-dir");
	if (hwdir && hw_add_dir(hw, hwdir, 0))
		return -1;
	if (!nohw && !nhwfiles && !hwdir) {
		char dir[4096];

		trace_dir(trace, dir, sizeof(dir));
		if (hw_add_dir(hw, dir, 1))
			return -1;
	}
	return 0;
}

/* The summary to out ('-': stdout).  -1 after an error message. */
static int write_out(const pt_summary *s, const char *out)
{
	pt_error err;
	struct stat st;

	pt_error_clear(&err);
	if (!strcmp(out, "-"))
		return write_stdout(s) ? -1 : 0;
	/* The digest beside it is what the master reads first at scale
	 * (docs/summary.md "Digests"); not beside a pipe or a device
	 * (-o /dev/null must not make /dev/null.digest). */
	if (stat(out, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (pt_summary_write_file(s, out, &err))
			return error_pt(&err);
	} else if (pt_digest_write_pair(s, out, &err)) {
		return error_pt(&err);
	}
	return 0;
}

int cmd_summarize(int argc, char **argv)
{
	pt_summary_options opt;
	const char *trace = NULL, *out = "-", *hwdir = NULL;
	pt_summary *s = NULL;
	pt_store st;
	pt_samples own;
	pt_error err;
	hwlist hw = {0};
	const pt_samples **hwp = NULL;
	int timing = 0, rc = -1, nohw = 0, nhwfiles = 0, npos;
	long long pid = -1;
	double t0, t1, t2, t3;
	size_t k;
	const pt_opt opts[] = {
		PT_OPT_STRING('o', "output", PT_TO(&out), "FILE",
			      "write the summary JSON to FILE ('-' = stdout, the default);\n"
			      "written to a temporary name, then renamed"),
		PT_OPT_DOUBLE(0, "min-python-ratio", PT_TO(&opt.min_python_ratio), "R",
			      "keep Python/CPU stacks owning >= R of the window\n"
			      "(default 0.0005)"),
		PT_OPT_INT(0, "max-python", PT_TO(&opt.max_python), "N",
			   "keep at most N Python/CPU stacks, largest first (default 500)"),
		PT_OPT_CALLBACK(0, "hw", PT_TO(&hw), "FILE", hw_add_file, 0,
				"join the hardware samples in FILE (perftracker-hw JSON or\n"
				"an nsys .sqlite with GPU_METRICS); may be repeated"),
		PT_OPT_STRING(0, "hw-dir", PT_TO(&hwdir), "DIR",
			      "join every hw_*.json, *.hw.json, hw_*.sqlite in DIR\n"
			      "(default: those beside TRACE)"),
		PT_OPT_FLAG(0, "no-hw", PT_TO(&nohw),
			    "join no hardware samples (an nsys export's own GPU\n"
			    "metrics included)"),
		PT_OPT_INT_RANGE(0, "pid", PT_TO(&pid), "N", 0, 0,
			   "read only process N's events (a trace of several workers, one\n"
			   "process each: PerfDisplay/timeline.json.gz, pid = rank + 1)"),
		PT_OPT_FLAG(0, "time", PT_TO(&timing),
			    "print read / analysis / write CPU times on stderr"),
		PT_OPT_END(),
	};

	pt_summary_options_default(&opt);
	pt_error_clear(&err);
	memset(&own, 0, sizeof(own));
	memset(&st, 0, sizeof(st));
	npos = cli_parse_options(&usage, opts, argc, argv);
	if (npos < 0) {
		rc = npos == CLI_HELP ? 0 : -1;
		goto out;
	}
	nhwfiles = (int)hw.n; /* (only --hw has added samples so far) */
	if (npos > 1) {
		error("summarize: one trace at a time ('%s' and '%s')", argv[1], argv[2]);
		goto out;
	}
	if (!npos) {
		cli_usage_error(&usage, "summarize: no trace given");
		goto out;
	}
	trace = argv[1];
	if (hw_gather(&hw, trace, hwdir, nohw, nhwfiles))
		goto out;

	if (pt_store_init(&st) || pt_samples_init(&own)) {
		error("out of memory");
		goto out;
	}
	if (pid >= 0) {
		if (pt_trace_format_of(trace) != PT_TRACE_KINETO) {
			error("'%s': --pid reads Chrome-trace JSON, not an Nsight Systems export", trace);
			goto out;
		}
		st.keep_pid_set = 1;
		st.keep_pid = pid;
	}
	/* CPU time of this (single-threaded) process: on a shared machine
	 * wall time measures other jobs as much as this one. */
	t0 = pt_clock_process_cpu();
	if (pt_trace_read_any(trace, &st, &own, &err)) {
		pt_error_subject(&err, trace);
		error_pt(&err);
		goto out;
	}
	t1 = pt_clock_process_cpu();
	/* The reader puts the truncation message first when there is one. */
	if (st.truncated)
		warning("'%s': %s; summary marked \"truncated\"", trace,
			st.warning[0] ? st.warning : "trace is truncated");
	else if (st.nwarnings)
		warning("'%s': %s%s", trace, st.warning,
			st.nwarnings > 1 ? " (more: see \"nwarnings\" in the summary)" : "");
	/* An nsys export's own GPU metrics join like a samples file. */
	if (!nohw && own.n) {
		if (X_GROW(hw.v, hw.cap, hw.n + 1)) {
			error("out of memory");
			goto out;
		}
		hw.v[hw.n++] = own;
		memset(&own, 0, sizeof(own));
	}
	if (hw.n) {
		hwp = x_malloc(hw.n * sizeof(*hwp));
		if (!hwp) {
			error("out of memory");
			goto out;
		}
		for (k = 0; k < hw.n; k++)
			hwp[k] = &hw.v[k];
		opt.hw = hwp;
		opt.nhw = hw.n;
	}
	s = pt_summary_build(&st, trace, &opt, &err);
	t2 = pt_clock_process_cpu();
	if (!s) {
		error_pt(&err);
		goto out;
	}
	if (write_out(s, out))
		goto out;
	t3 = pt_clock_process_cpu();
	if (timing)
		fprintf(stderr,
			"perftracker: summarize: '%s': %zu events, %.1f MB json; cpu time: read "
			"%.3f s (%.0f MB/s), analysis %.3f s, write %.3f s; %zu patterns; %zu "
			"hardware sample file%s%s\n",
			trace, st.n, (double)st.bytes_read / 1e6, t1 - t0,
			t1 > t0 ? (double)st.bytes_read / 1e6 / (t1 - t0) : 0.0, t2 - t1, t3 - t2,
			s->npatterns, hw.n, hw.n == 1 ? "" : "s",
			s->hw_source ? " joined" : hw.n ? " (none covered this worker)" : "");
	rc = 0;
out:
	pt_summary_free(s);
	pt_store_free(&st);
	pt_samples_free(&own);
	for (k = 0; k < hw.n; k++)
		pt_samples_free(&hw.v[k]);
	x_free(hw.v);
	x_free(hwp);
	return rc;
}
