/*
 * analyze.c - `perftracker analyze PATH... -o DIR`: find the raw traces
 * (files, or folders searched recursively for *.json / *.json.gz),
 * summarise every one in parallel threads (pt_summary_from_trace), then
 * diagnose them like `perftracker diagnose` (diagnose.c).  The single-host
 * path from traces to report; a trace that cannot be read is one warning
 * line and a failed worker in the report.
 */

#include "cli.h"
#include "diagnose.h"
#include "report/report.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static const char usage_text[] =
	"usage: perftracker analyze PATH... [-o DIR] [options]\n"
	"\n"
	"Summarise every PyTorch profiler trace under PATH (files, or folders searched\n"
	"recursively for *.json and *.json.gz, skipping hidden entries, PerfDisplay folders\n"
	"and *.summary.json), then compare the workers like 'perftracker diagnose'.\n"
	"\n"
	"options:\n"
	"  --keep-summaries DIR      also write each worker's summary to DIR/<worker>.summary.json\n";

typedef struct sumjob {
	char **paths;
	pt_summary **s;
	char **msg;
	pt_summary_options sopt;
	int oom;
} sumjob;

static void summarize_one(void *ctx, size_t i)
{
	sumjob *j = ctx;
	pt_error err;
	char buf[1024];

	pt_error_clear(&err);
	j->s[i] = pt_summary_from_trace(j->paths[i], &j->sopt, &err);
	if (j->s[i])
		return;
	err.subject[0] = 0;
	pt_error_format(&err, buf, sizeof(buf));
	j->s[i] = pt_summary_failed(j->paths[i], buf[0] ? buf : "unreadable trace");
	j->msg[i] = x_strndup(buf, strlen(buf));
	if (!j->s[i] || !j->msg[i])
		j->oom = 1;
}

static int mkdir_p(const char *dir)
{
	char buf[4096];
	size_t n = strlen(dir), i;

	if (n >= sizeof(buf))
		return error("'%s': path too long", dir);
	memcpy(buf, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i])
			continue;
		buf[i] = 0;
		if (mkdir(buf, 0777) && errno != EEXIST)
			return error("'%s': cannot create directory: %s", buf, strerror(errno));
		buf[i] = i < n ? '/' : 0;
	}
	return 0;
}

typedef struct wname {
	const char *name;
	size_t idx;
} wname;

static int cmp_wname(const void *a, const void *b)
{
	const wname *x = a, *y = b;
	int r = strcmp(x->name, y->name);

	return r ? r : (x->idx < y->idx ? -1 : x->idx > y->idx);
}

/* DIR/<worker>.summary.json; the second trace with the same file name (from
 * another folder) gets <worker>-2.summary.json, and so on. */
static int keep_summaries(const char *dir, pt_summary *const *s, size_t n)
{
	wname *w = x_malloc((n ? n : 1) * sizeof(*w));
	size_t i, dup = 0;
	pt_error err;
	int rc = -1;

	if (!w)
		return error("out of memory");
	if (mkdir_p(dir))
		goto out;
	for (i = 0; i < n; i++) {
		w[i].name = s[i]->worker ? s[i]->worker : "worker";
		w[i].idx = i;
	}
	if (n > 1)
		qsort(w, n, sizeof(*w), cmp_wname);
	for (i = 0; i < n; i++) {
		char path[4096];

		dup = i && !strcmp(w[i].name, w[i - 1].name) ? dup + 1 : 1;
		if (dup == 1)
			snprintf(path, sizeof(path), "%s/%s.summary.json", dir, w[i].name);
		else
			snprintf(path, sizeof(path), "%s/%s-%zu.summary.json", dir, w[i].name, dup);
		pt_error_clear(&err);
		if (pt_summary_write_file(s[w[i].idx], path, &err)) {
			error_pt(&err);
			goto out;
		}
	}
	rc = 0;
out:
	x_free(w);
	return rc;
}

int cmd_analyze(int argc, char **argv)
{
	cli_diag d;
	cli_files l = {0};
	sumjob j;
	const char *keep = NULL;
	size_t i;
	int rc = -1, k;
	double t0;

	cli_diag_init(&d);
	memset(&j, 0, sizeof(j));
	pt_summary_options_default(&j.sopt);
	for (k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "-h") || !strcmp(argv[k], "--help")) {
			printf("%s%s", usage_text, cli_diag_help);
			return 0;
		}
		if (cli_is_opt(argv[k], "--keep-summaries"))
			keep = cli_opt_value(argc, argv, &k, "--keep-summaries");
	}
	for (k = 1; k < argc; k++) {
		if (cli_is_opt(argv[k], "--keep-summaries")) {
			cli_opt_value(argc, argv, &k, "--keep-summaries");
			continue;
		}
		if (cli_diag_option(&d, argc, argv, &k))
			continue;
		if (argv[k][0] == '-' && argv[k][1]) {
			error("analyze: unknown option '%s' (see --help)", argv[k]);
			goto out;
		}
		if (cli_files_add(&l, argv[k], CLI_TRACES, keep))
			goto out;
	}
	if (!l.n) {
		error("analyze: no traces given (see --help)");
		goto out;
	}
	j.paths = l.v;
	j.s = x_calloc(l.n, sizeof(*j.s));
	j.msg = x_calloc(l.n, sizeof(*j.msg));
	if (!j.s || !j.msg) {
		error("out of memory");
		goto out;
	}
	t0 = cli_now();
	cli_parallel(l.n, d.jobs, summarize_one, &j);
	if (d.time)
		fprintf(stderr, "perftracker: time: summarize %.3f s (%zu traces)\n", cli_now() - t0,
			l.n);
	if (j.oom) {
		error("out of memory summarising traces");
		goto out;
	}
	for (i = 0; i < l.n; i++)
		if (j.msg[i])
			warning("'%s': %s", l.v[i], j.msg[i]);
	if (keep && keep_summaries(keep, j.s, l.n))
		goto out;
	rc = cli_diag_run(&d, j.s, l.n);
out:
	for (i = 0; i < l.n; i++) {
		if (j.s)
			pt_summary_free(j.s[i]);
		if (j.msg)
			x_free(j.msg[i]);
	}
	x_free(j.msg);
	x_free(j.s);
	cli_files_free(&l);
	return rc;
}
