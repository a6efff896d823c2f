/*
 * compare.c - `perftracker compare BASELINE NEW -o DIR`: why is NEW's job
 * slower (or faster) than BASELINE's.  Each side is a report folder (the
 * summaries kept beside it, else the traces its report.json names), a
 * folder or list of summaries, or traces, summarised on the fly; all files
 * of both sides are read in parallel threads (pt_pool_for), compared by
 * src/compare/compare.c, written to DIR/PerfDisplay/ like any report, and
 * the text report (summary sentence first) goes to stdout.
 * A side with no readable worker is a one-line error naming the file.
 */

#include "cli.h"
#include "diagnose.h"
#include "compare/compare.h"
#include "report/report.h"
#include "analysis/summary_parse.h"
#include "trace/any.h"
#include "util/json.h"
#include "util/pool.h"
#include "util/xalloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const cli_usage usage = {
	"compare",
	"perftracker compare BASELINE NEW [-o DIR] [options]",
	"Compare two runs of a job: each side's step time, then the functions that account\n"
	"for the difference in ms per step (slower, faster, appeared, disappeared), by class\n"
	"(docs/compare.md).  Each side is a report folder written by analyze/diagnose/the\n"
	"trigger (its kept summaries, else the traces its report.json names), a folder or\n"
	"file of summaries, or traces (*.json, *.json.gz, *.sqlite; summarised on the fly).\n"
	"Workers are paired by rank when both sides have ranks.\n",
	NULL,
};

typedef struct side {
	const char *label;   /* "BASELINE" or "NEW" */
	const char *arg;
	const char *input;   /* "traces", "summaries", "report" */
	cli_files files;
} side;

typedef struct loadjob {
	char **paths;
	int *summary;        /* per file: 1 summary, 0 trace */
	pt_summary **s;
	char **msg;
	pt_summary_options sopt;
	pt_summary_keys *keys;  /* pattern keys shared by the summaries read: less
	                           memory, and compare.c finds a repeated key by
	                           its pointer */
	int oom;
} loadjob;

static int ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);

	return n >= m && !strcmp(s + n - m, suf);
}

/* A summary starts with {"format":"perftracker-summary" (summary_io.c
 * writes that member first); a trace never has it in its first bytes. */
static int is_summary_file(const char *path)
{
	char buf[256];
	size_t n;
	FILE *f;

	if (!ends_with(path, ".json"))
		return 0;
	f = fopen(path, "rb");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	return strstr(buf, "\"perftracker-summary\"") != NULL;
}

static int push(cli_files *f, const char *path)
{
	pt_error e;

	pt_error_clear(&e);
	return pt_inputs_push(f, path, &e) ? error_pt(&e) : 0;
}

/* The walk's sorting: summaries by content, traces by name. */
typedef struct sort_ctx {
	cli_files *sums, *traces;
	pt_error *err;
} sort_ctx;

static int sort_file(void *ctx, const char *path, const char *name)
{
	sort_ctx *c = ctx;

	if (pt_trace_is_samples_name(name))
		return 0;
	if (is_summary_file(path))
		return pt_inputs_push(c->sums, path, c->err);
	if ((ends_with(name, ".json") || ends_with(name, ".json.gz") || ends_with(name, ".sqlite")) &&
	    !ends_with(name, ".summary.json"))
		return pt_inputs_push(c->traces, path, c->err);
	return 0;
}

/* Summaries and traces under dir (hidden entries and PerfDisplay folders
 * left out: pt_inputs_walk). */
static int walk(const char *dir, cli_files *sums, cli_files *traces)
{
	pt_error e;
	sort_ctx c = { sums, traces, &e };

	pt_error_clear(&e);
	return pt_inputs_walk(dir, NULL, sort_file, &c, &e) ? error_pt(&e) : 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The traces a report.json names under "workers" (their "file"), those
 * that still exist. */
static int report_traces(const char *report, side *sd)
{
	pt_error err;
	pt_json *root;
	const pt_json *w, *e;
	size_t named = 0;
	const char *missing = NULL;
	int rc = -1;

	pt_error_clear(&err);
	root = pt_json_parse_file(report, &err);
	if (!root)
		return error_pt(&err);
	w = pt_json_get(root, "workers");
	for (e = w && w->type == PT_JSON_OBJ ? w->child : NULL; e; e = e->next) {
		const char *file = pt_json_strv(e, "file", NULL);

		if (!file || !*file)
			continue;
		named++;
		if (access(file, R_OK)) {
			missing = missing ? missing : file;
			continue;
		}
		if (push(&sd->files, file))
			goto out;
	}
	if (!sd->files.n) {
		if (missing)
			error("'%s': the traces it names are gone (e.g. '%s') and no summaries are "
			      "kept beside it; give the traces or summaries (analyze --keep-summaries)",
			      report, missing);
		else
			error("'%s': names no worker files (%zu workers); give the traces or summaries",
			      report, named);
		goto out;
	}
	rc = 0;
out:
	pt_json_free(root);
	return rc;
}

/* What a side is: see usage.about.  0, or -1 after a one-line error. */
static int resolve(side *sd)
{
	struct stat st;
	cli_files sums = {0}, traces = {0};
	char rep[4096];
	int rc = -1, is_report = 0;

	if (stat(sd->arg, &st))
		return error("%s '%s': %s", sd->label, sd->arg, strerror(errno));
	if (!S_ISDIR(st.st_mode)) {
		const char *base = strrchr(sd->arg, '/') ? strrchr(sd->arg, '/') + 1 : sd->arg;

		if (is_summary_file(sd->arg)) {
			sd->input = "summaries";
		} else if (!strcmp(base, "report.json")) {
			sd->input = "report";
			return report_traces(sd->arg, sd);
		} else {
			sd->input = "traces";
		}
		return push(&sd->files, sd->arg);
	}
	snprintf(rep, sizeof(rep), "%s/PerfDisplay/report.json", sd->arg);
	if (access(rep, R_OK)) {
		snprintf(rep, sizeof(rep), "%s/report.json", sd->arg);
		is_report = !access(rep, R_OK) && !is_summary_file(rep);
	} else {
		is_report = 1;
	}
	if (walk(sd->arg, &sums, &traces))
		goto out;
	/* Summaries came from the traces beside them (the trigger keeps both;
	 * analyze --keep-summaries too): the summaries win, they are cheaper. */
	if (sums.n) {
		sd->input = is_report ? "report" : "summaries";
		sd->files = sums;
		memset(&sums, 0, sizeof(sums));
	} else if (traces.n) {
		sd->input = is_report ? "report" : "traces";
		sd->files = traces;
		memset(&traces, 0, sizeof(traces));
	} else if (is_report) {
		sd->input = "report";
		if (report_traces(rep, sd))
			goto out;
	} else {
		error("%s '%s': no summaries, traces (*.json, *.json.gz, *.sqlite) or report found",
		      sd->label, sd->arg);
		goto out;
	}
	if (sd->files.n > 1)
		qsort(sd->files.v, sd->files.n, sizeof(*sd->files.v), cmp_str);
	rc = 0;
out:
	cli_files_free(&sums);
	cli_files_free(&traces);
	return rc;
}

static void load_one(void *ctx, size_t i)
{
	loadjob *j = ctx;
	pt_error err;
	char buf[1024];

	pt_error_clear(&err);
	if (j->summary[i])
		j->s[i] = pt_summary_read_file_shared(j->paths[i], j->keys, &err);
	else
		j->s[i] = pt_summary_from_trace(j->paths[i], &j->sopt, &err);
	if (j->s[i] && !j->s[i]->error)
		return;
	if (j->s[i]) { /* a summary of a worker whose trace could not be read */
		snprintf(buf, sizeof(buf), "worker '%s' was not analysed: %s", j->s[i]->worker,
			 j->s[i]->error);
	} else {
		err.subject[0] = 0;
		pt_error_format(&err, buf, sizeof(buf));
		j->s[i] = pt_summary_failed(j->paths[i], buf[0] ? buf : "unreadable");
	}
	j->msg[i] = x_strndup(buf, strlen(buf));
	if (!j->s[i] || !j->msg[i])
		j->oom = 1;
}

int cmd_compare(int argc, char **argv)
{
	pt_compare_options o;
	pt_compare_side cs[2];
	side sd[2];
	loadjob j;
	cli_diag d;
	size_t max_findings = 30, nfiles = 0, i, at;
	int npos, rc = -1, s;
	pt_report *rep = NULL;
	pt_error err;
	pt_sb sb = {0};
	double t0 = 0, t1 = 0, t2 = 0;
	const pt_opt opts[] = {
		PT_OPT_INCLUDE(cli_diag_output_opts, &d, NULL),
		PT_OPT_DOUBLE(0, "min-share", PT_TO(&o.min_share), "F",
			      "differences below F x BASELINE's step time are not\n"
			      "findings (0.005)"),
		PT_OPT_DOUBLE(0, "noise-k", PT_TO(&o.noise_k), "K",
			      "nor a function's below K x its own step-to-step spread (1)"),
		PT_OPT_DOUBLE(0, "min-rel", PT_TO(&o.min_rel), "F",
			      "nor, for a function both ran, below F x its time (0.05)"),
		PT_OPT_DOUBLE(0, "unrelated", PT_TO(&o.unrelated), "F",
			      "below this share of time in common functions on both\n"
			      "sides, say the runs have nothing in common (0.25)"),
		PT_OPT_INT(0, "max-findings", PT_TO(&max_findings), "N",
			   "findings printed in the text report (30, 0 = all)"),
		PT_OPT_INCLUDE(cli_diag_run_opts, &d, NULL),
		PT_OPT_END(),
	};

	pt_compare_options_default(&o);
	cli_diag_init(&d);
	memset(sd, 0, sizeof(sd));
	memset(&j, 0, sizeof(j));
	pt_summary_options_default(&j.sopt);
	npos = cli_parse_options(&usage, opts, argc, argv);
	if (npos < 0)
		return npos == CLI_HELP ? 0 : -1;
	if (npos > 2)
		return error("compare: more than two runs given ('%s'); see --help", argv[3]);
	if (npos != 2)
		return error("compare: give two runs, BASELINE and NEW (see --help)");
	sd[0].arg = argv[1];
	sd[1].arg = argv[2];
	t0 = cli_now();
	sd[0].label = "BASELINE";
	sd[1].label = "NEW";
	for (s = 0; s < 2; s++)
		if (resolve(&sd[s]))
			goto out;
	nfiles = sd[0].files.n + sd[1].files.n;
	j.paths = x_malloc(nfiles * sizeof(*j.paths));
	j.summary = x_malloc(nfiles * sizeof(*j.summary));
	j.s = x_calloc(nfiles, sizeof(*j.s));
	j.msg = x_calloc(nfiles, sizeof(*j.msg));
	j.keys = pt_summary_keys_new();
	if (!j.paths || !j.summary || !j.s || !j.msg || !j.keys) {
		error("out of memory");
		goto out;
	}
	for (s = 0, at = 0; s < 2; s++)
		for (i = 0; i < sd[s].files.n; i++, at++) {
			j.paths[at] = sd[s].files.v[i];
			j.summary[at] = is_summary_file(sd[s].files.v[i]);
		}
	pt_pool_for(nfiles, d.jobs, load_one, &j);
	t1 = cli_now();
	if (j.oom) {
		error("out of memory reading the runs");
		goto out;
	}
	for (s = 0, at = 0; s < 2; s++) {
		size_t ok = 0, first = (size_t)-1, base = at;

		for (i = 0; i < sd[s].files.n; i++, at++) {
			if (!j.msg[at]) {
				ok++;
				continue;
			}
			if (first == (size_t)-1)
				first = at;
		}
		if (!ok) {
			if (sd[s].files.n == 1)
				error("%s '%s': %s", s ? "NEW" : "BASELINE", j.paths[first], j.msg[first]);
			else
				error("%s '%s': no readable worker among %zu files (first: '%s': %s)",
				      s ? "NEW" : "BASELINE", sd[s].arg, sd[s].files.n, j.paths[first],
				      j.msg[first]);
			goto out;
		}
		for (i = base; i < at; i++)
			if (j.msg[i])
				warning("'%s': %s", j.paths[i], j.msg[i]);
	}
	for (s = 0, at = 0; s < 2; s++) {
		cs[s].s = j.s + at;
		cs[s].n = sd[s].files.n;
		cs[s].path = sd[s].arg;
		cs[s].input = sd[s].input;
		at += sd[s].files.n;
	}
	pt_error_clear(&err);
	rep = pt_compare(&cs[0], &cs[1], &o, &err);
	if (!rep) {
		error_pt(&err);
		goto out;
	}
	t2 = cli_now();
	if (d.outdir && pt_report_write_dir(rep, d.outdir, &err)) {
		error_pt(&err);
		goto out;
	}
	if (!d.quiet) {
		pt_compare_text(rep, max_findings, &sb);
		if (sb.oom) {
			error("out of memory writing the text report");
			goto out;
		}
		if (fwrite(sb.buf, 1, sb.len, stdout) != sb.len || fflush(stdout)) {
			error("cannot write the text report to stdout");
			goto out;
		}
	}
	if (d.time)
		fprintf(stderr, "perftracker: time: read/summarize %.3f s (%zu files), compare "
			"%.3f s, write %.3f s\n", t1 - t0, nfiles, t2 - t1, cli_now() - t2);
	rc = 0;
out:
	pt_sb_free(&sb);
	pt_report_free(rep);
	for (i = 0; i < nfiles && j.s; i++) {
		if (j.summary && j.summary[i])
			pt_summary_free_shared(j.s[i]);
		else
			pt_summary_free(j.s[i]);
		if (j.msg)
			x_free(j.msg[i]);
	}
	pt_summary_keys_free(j.keys);
	x_free(j.s);
	x_free(j.msg);
	x_free(j.paths);
	x_free(j.summary);
	cli_files_free(&sd[0].files);
	cli_files_free(&sd[1].files);
	return rc;
}
