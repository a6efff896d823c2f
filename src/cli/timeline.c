/*
 * timeline.c - `perftracker timeline RUN_DIR [TRACE...]`: write
 * RUN_DIR/PerfDisplay/timeline.json.gz again (docs/display.md "The
 * timeline"), e.g. for a report written before timelines or with
 * --no-timeline, or with raw events the trigger did not keep.  The workers
 * come from RUN_DIR/summaries/ (a trigger's run folder) or, without it,
 * from the traces given (summarised here); the raw events from
 * RUN_DIR/raw_trace/ and the traces given.  The diagnosis runs again, as
 * `diagnose` would, so the timeline marks what the report says.
 */
#include "cli.h"
#include "diagnose.h"
#include "perftracker.h"
#include "report/timeline.h"
#include "util/pool.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const cli_usage usage = {
	"timeline",
	"perftracker timeline RUN_DIR [TRACE...] [-o DIR] [options]",
	"Write RUN_DIR/PerfDisplay/timeline.json.gz: every worker on one clock, the\n"
	"findings marked, for ui.perfetto.dev or chrome://tracing (docs/display.md).\n"
	"The workers are RUN_DIR/summaries/*.json (a trigger's run folder) or else the\n"
	"TRACEs, summarised; the raw events those of RUN_DIR/raw_trace/ and the TRACEs.\n",
	NULL,
};

/* The traces summarised on the -j threads when the run folder has no
 * summaries/: s[i] for paths[i], a failed summary when it cannot be read
 * (msg[i] why), NULL only out of memory. */
typedef struct tljob {
	char *const *paths;
	pt_summary **s;
	char (*msg)[PT_ERROR_MSG_MAX];
} tljob;

static void summarize_one(void *ctx, size_t i)
{
	tljob *j = ctx;
	pt_error e;

	pt_error_clear(&e);
	j->s[i] = pt_summary_from_trace(j->paths[i], NULL, &e);
	if (j->s[i])
		return;
	snprintf(j->msg[i], sizeof(j->msg[i]), "%s", e.msg[0] ? e.msg : "unreadable trace");
	j->s[i] = pt_summary_failed(j->paths[i], j->msg[i]);
}

static int is_dir(const char *p)
{
	struct stat st;

	return !stat(p, &st) && S_ISDIR(st.st_mode);
}

int cmd_timeline(int argc, char **argv)
{
	cli_diag d;
	cli_files sums = {0}, raw = {0};
	pt_pipeline_options o;
	pt_pipeline_summaries set = {0};
	pt_summary **made = NULL;
	pt_pipeline_result res = {0};
	pt_report *rep = NULL;
	pt_error e;
	const char *out = NULL;
	char path[4096];
	size_t i, maxraw = 0;
	int rc = -1, k, npos, noraw = 0, have_sums;
	const pt_opt opts[] = {
		PT_OPT_STRING('o', "output", PT_TO(&out), "DIR",
			      "write DIR/PerfDisplay/timeline.json.gz (default: RUN_DIR)"),
		PT_OPT_FLAG(0, "no-raw", PT_TO(&noraw), "leave the raw traces' events out"),
		PT_OPT_INT(0, "max-raw-events", PT_TO(&maxraw), "N",
			   "raw events kept over all workers (2000000)"),
		PT_OPT_INCLUDE(cli_diag_raw_opts, &d, NULL),
		PT_OPT_INCLUDE(cli_diag_run_opts, &d, NULL),
		PT_OPT_INCLUDE(cli_diag_opts, &d, NULL),
		PT_OPT_END(),
	};

	cli_diag_init(&d);
	pt_error_clear(&e);
	npos = cli_parse_options(&usage, opts, argc, argv);
	if (npos < 0)
		return npos == CLI_HELP ? 0 : -1;
	if (!npos) {
		cli_usage_error(&usage, "timeline: no run folder given");
		return -1;
	}
	if (!is_dir(argv[1])) {
		error("'%s': not a folder (give the run folder: the trigger's output, or -o of "
		      "analyze)", argv[1]);
		return -1;
	}
	if (!out)
		out = argv[1];
	snprintf(path, sizeof(path), "%s/summaries", argv[1]);
	have_sums = is_dir(path);
	if (have_sums && cli_files_add(&sums, path, CLI_SUMMARIES, NULL))
		goto out;
	snprintf(path, sizeof(path), "%s/raw_trace", argv[1]);
	if (!noraw && is_dir(path) && cli_files_add(&raw, path, CLI_TRACES, NULL))
		goto out;
	for (k = 2; k <= npos; k++)
		if (cli_files_add(&raw, argv[k], CLI_TRACES, NULL))
			goto out;
	cli_pipeline_options(&d, &o);
	if (have_sums) {
		if (cli_files_done(&sums, "timeline", CLI_SUMMARIES))
			goto out;
		if (pt_pipeline_read(sums.v, sums.n, &o, &set, &e)) {
			error_pt(&e);
			goto out;
		}
		for (i = 0; i < set.n; i++)
			if (set.msg[i])
				warning("'%s': %s", sums.v[i], set.msg[i]);
	} else {
		if (!raw.n) {
			error("'%s': no summaries/ folder and no trace given", argv[1]);
			goto out;
		}
		tljob j = { raw.v, NULL, NULL };
		made = x_calloc(raw.n, sizeof(*made));
		j.msg = x_calloc(raw.n, sizeof(*j.msg));
		if (!made || !j.msg) {
			x_free(j.msg);
			error("out of memory");
			goto out;
		}
		j.s = made;
		pt_pool_for(raw.n, d.jobs, summarize_one, &j);
		for (i = 0; i < raw.n; i++)
			if (j.msg[i][0])
				warning("'%s': %s", raw.v[i], j.msg[i]);
		x_free(j.msg);
		for (i = 0; i < raw.n; i++)
			if (!made[i]) {
				error("out of memory");
				goto out;
			}
		set.s = made;
		set.n = raw.n;
	}
	rep = pt_diagnose(set.s, set.n, &o.diag, &e);
	if (!rep) {
		error_pt(&e);
		goto out;
	}
	o.outdir = out;
	o.raw = noraw ? NULL : raw.v;
	o.nraw = noraw ? 0 : raw.n;
	o.max_raw_events = maxraw;
	if (pt_pipeline_timeline(&o, rep, &res, &e)) {
		error_pt(&e);
		goto out;
	}
	if (res.warning)
		warning("%s", res.warning);
	cli_raw_note(&res, argv[1]);
	if (d.time)
		fprintf(stderr, "perftracker: time: timeline %.3f s (raw traces read included)\n",
			res.timeline_seconds);
	if (!d.quiet)
		printf("perftracker: wrote %s/PerfDisplay/timeline.json.gz (%zu workers%s); open it in "
		       "https://ui.perfetto.dev (Open trace file) or chrome://tracing\n", out,
		       pt_report_timeline(rep)->nw, res.raw_used ? ", with their raw events" : "");
	rc = 0;
out:
	free(res.warning);
	pt_report_free(rep);
	if (made) {
		for (i = 0; i < raw.n; i++)
			pt_summary_free(made[i]);
		x_free(made);
	} else {
		pt_pipeline_summaries_free(&set);
	}
	cli_files_free(&raw);
	cli_files_free(&sums);
	return rc;
}
