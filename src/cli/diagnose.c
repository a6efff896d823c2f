/*
 * diagnose.c - `perftracker diagnose SUMMARY... -o DIR`: read worker
 * summaries in parallel, compare the workers, write DIR/PerfDisplay/
 * (report.json, the PerfDisplay page index.html, app.py), print the text
 * report; the work is src/diagnose/pipeline.c's.  Runs on the master; also
 * holds the diagnosis options and the thread pool the other diagnosing
 * commands share (diagnose.h).
 * An unreadable summary is one warning line and a failed worker in the
 * report; no readable worker at all is an error.
 */

#include "cli.h"
#include "diagnose.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char cli_diag_help[] =
	"  -o, --output DIR          write DIR/PerfDisplay/ (report.json, index.html, app.py)\n"
	"  -j, --jobs N              threads reading/summarising files (default: online CPUs)\n"
	"  --z Z                     robust z-score above which a worker is an outlier (3.5)\n"
	"  --rel R                   and relative deviation above R (0.2 = 20%)\n"
	"  --min-impact F            and time lost above F of the worker's window (0.005)\n"
	"  --mad-floor F             MAD is at least F x |median| (0.01)\n"
	"  --memop-threshold R       memory ops above this bottleneck ratio are candidates (0.01)\n"
	"  --runtime-threshold R     CUDA runtime calls: same (0.01)\n"
	"  --python-threshold R      Python stacks above this ratio are listed (0.01)\n"
	"  --python-min-impact F     Python findings need time lost above F of the window (0.02)\n"
	"  --top-kernels N           entries in \"major_kernel_executions\" (5)\n"
	"  --loo-below N             leave-one-out statistics below N workers (8)\n"
	"  --fixed-only              abnormal_workers by the fixed threshold alone (seed rule)\n"
	"  --max-findings N          findings printed in the text report (10, json: 50; 0 = all)\n"
	"  --format text|json        text: summary, findings, tables (default); json: the seed's\n"
	"                            section-by-section JSON text\n"
	"  --json                    print the whole report.json document instead of the text\n"
	"  --width N                 text report line width (120)\n"
	"  -q, --quiet               do not print the text report\n"
	"  --time                    print the time of each phase on stderr\n"
	"  -h, --help                show this help\n";

static const char usage_text[] =
	"usage: perftracker diagnose SUMMARY... [-o DIR] [options]\n"
	"\n"
	"Compare worker summaries (written by 'perftracker summarize'; a folder means every\n"
	"*.json under it) and report the slow workers and the functions to blame\n"
	"(docs/diagnose.md).\n"
	"\n"
	"options:\n";

void cli_diag_init(cli_diag *d)
{
	memset(d, 0, sizeof(*d));
	pt_diag_options_default(&d->opt);
	d->max_findings = SIZE_MAX;
}

int cli_diag_option(cli_diag *d, int argc, char **argv, int *i)
{
	static const struct {
		const char *name;
		size_t off;
	} dbl[] = {
		{ "--z", offsetof(pt_diag_options, z) },
		{ "--rel", offsetof(pt_diag_options, rel) },
		{ "--min-impact", offsetof(pt_diag_options, min_impact) },
		{ "--mad-floor", offsetof(pt_diag_options, mad_floor) },
		{ "--memop-threshold", offsetof(pt_diag_options, memop_threshold) },
		{ "--runtime-threshold", offsetof(pt_diag_options, runtime_threshold) },
		{ "--python-threshold", offsetof(pt_diag_options, python_threshold) },
		{ "--python-min-impact", offsetof(pt_diag_options, python_min_impact) },
	};
	const char *a = argv[*i];
	size_t k;

	for (k = 0; k < sizeof(dbl) / sizeof(dbl[0]); k++) {
		if (cli_is_opt(a, dbl[k].name)) {
			*(double *)((char *)&d->opt + dbl[k].off) =
				opt_double(dbl[k].name, cli_opt_value(argc, argv, i));
			return 1;
		}
	}
	if (cli_is_opt(a, "--top-kernels"))
		d->opt.top_kernels = (size_t)opt_long("--top-kernels",
						      cli_opt_value(argc, argv, i));
	else if (cli_is_opt(a, "--loo-below"))
		d->opt.loo_below = (size_t)opt_long("--loo-below", cli_opt_value(argc, argv, i));
	else if (cli_is_opt(a, "--max-findings"))
		d->max_findings = (size_t)opt_long("--max-findings", cli_opt_value(argc, argv, i));
	else if (cli_is_opt(a, "--jobs"))
		d->jobs = opt_long("--jobs", cli_opt_value(argc, argv, i));
	else if (!strcmp(a, "-j"))
		d->jobs = opt_long("-j", cli_opt_value(argc, argv, i));
	else if (!strncmp(a, "-j", 2))
		d->jobs = opt_long("-j", a + 2);
	else if (cli_is_opt(a, "--output") || !strcmp(a, "-o"))
		d->outdir = cli_opt_value(argc, argv, i);
	else if (cli_is_opt(a, "--format")) {
		const char *v = cli_opt_value(argc, argv, i);

		if (!strcmp(v, "text"))
			d->format = CLI_FMT_TEXT;
		else if (!strcmp(v, "json"))
			d->format = CLI_FMT_JSON;
		else
			die("option '--format': '%s' is not 'text' or 'json'", v);
	} else if (!strcmp(a, "--json"))
		d->json = 1;
	else if (cli_is_opt(a, "--width")) {
		d->width = (size_t)opt_long("--width", cli_opt_value(argc, argv, i));
		if (d->width < 40)
			die("option '--width': %zu is below 40", d->width);
	} else if (!strcmp(a, "--fixed-only"))
		d->opt.fixed_only = 1;
	else if (!strcmp(a, "-q") || !strcmp(a, "--quiet"))
		d->quiet = 1;
	else if (!strcmp(a, "--time"))
		d->time = 1;
	else
		return 0;
	return 1;
}

/* ---- perftracker diagnose ------------------------------------------------ */

int cmd_diagnose(int argc, char **argv)
{
	cli_diag d;
	cli_files l = {0};
	pt_pipeline_options o;
	pt_pipeline_summaries set = {0};
	pt_error e;
	size_t i;
	int rc = -1, k;

	cli_diag_init(&d);
	for (k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "-h") || !strcmp(argv[k], "--help")) {
			printf("%s%s", usage_text, cli_diag_help);
			return 0;
		}
		if (cli_diag_option(&d, argc, argv, &k))
			continue;
		if (argv[k][0] == '-' && argv[k][1]) {
			error("diagnose: unknown option '%s' (see --help)", argv[k]);
			goto out;
		}
		if (cli_files_add(&l, argv[k], CLI_SUMMARIES, NULL))
			goto out;
	}
	if (cli_files_done(&l, "diagnose", CLI_SUMMARIES))
		goto out;
	cli_pipeline_options(&d, &o);
	pt_error_clear(&e);
	k = pt_pipeline_read(l.v, l.n, &o, &set, &e);
	if (d.time && set.n)
		fprintf(stderr, "perftracker: time: read %.3f s (%zu summaries)\n", set.seconds,
			set.n);
	if (k) {
		error_pt(&e);
		goto out;
	}
	for (i = 0; i < set.n; i++) {
		if (set.msg[i])
			warning("'%s': %s", l.v[i], set.msg[i]);
		else if (set.s[i]->error)
			warning("'%s': worker '%s' was not analysed: %s", l.v[i],
				set.s[i]->worker ? set.s[i]->worker : "", set.s[i]->error);
	}
	rc = cli_report(&d, set.s, set.n, NULL, NULL);
out:
	pt_pipeline_summaries_free(&set);
	cli_files_free(&l);
	return rc;
}
