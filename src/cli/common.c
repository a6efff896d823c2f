/*
 * common.c - command-line helpers every subcommand shares (see cli.h):
 * options several commands take (--nsys-gpu-metrics, --comm-kernels), the
 * clock and sleeping of the commands that wait (trigger, hang-check,
 * analyze), the control directory's worker list for the commands that look
 * at a running job (status, hang-check), and the input files and final
 * report of the diagnosing commands (diagnose.h, around
 * src/diagnose/pipeline.h).
 */
#include "cli.h"
#include "perftracker.h"
#include "util/clock.h"
#include "util/pool.h"
#include "diagnose.h"
#include "control/control.h"
#include "control/job.h"
#include "control/nodechan.h"
#include "agent/nsys_capture.h"
#include "model/commkind.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* arg is "--name" or "--name=...". */
static int is_opt(const char *arg, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(arg, name, n) && (arg[n] == 0 || arg[n] == '=');
}

double cli_now(void)
{
	return pt_clock_mono();
}

void cli_sleep(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	nanosleep(&ts, NULL);
}

int cli_resolve_dir(const char **dir, const char *job)
{
	static char buf[PT_CONTROL_PATH_MAX];
	pt_error e;

	if (*dir)
		return 0;
	pt_error_clear(&e);
	if (pt_job_resolve_dir(job, buf, sizeof(buf), pt_control_now(), &e)) {
		error_pt(&e);
		return -1;
	}
	*dir = buf;
	return 0;
}

int cli_control_workers(const char **dir, struct pt_worker_entry **w, size_t *n)
{
	pt_error e;
	int rc = -1;

	if (!*dir)
		*dir = pt_control_default_dir();
	pt_error_clear(&e);
	if (access(*dir, F_OK) != 0)
		error("'%s': no control directory (no collector has run here)", *dir);
	else if (pt_nodechan_workers(*dir, w, n, &e))
		error_pt(&e);
	else
		rc = 0;
	return rc;
}

int cli_opt_nsys_hz(const pt_opt *o, const char *arg, void *target, pt_error *e)
{
	int hz = PT_NSYS_HZ_DEFAULT;

	if (arg && pt_nsys_parse_hz(arg, &hz))
		return pt_error_set(e, PT_EINVAL, -1,
				    "option '--%s': '%s' is not a rate in Hz from %d to %d",
				    o->long_name, arg, PT_NSYS_HZ_MIN, PT_NSYS_HZ_MAX);
	*(int *)target = hz;
	return 0;
}

/* ---- communication-kernel rules (src/model/commkind.h) ------------------ */

int cli_comm_kernels(int *argc, char **argv)
{
	const char *env = getenv("PERFTRACKER_COMM_KERNELS");
	char buf[1024];
	pt_error e;
	int i, j;

	pt_error_clear(&e);
	if (env && *env && pt_commkind_load_file(env, &e))
		return error("PERFTRACKER_COMM_KERNELS: %s", pt_error_format(&e, buf, sizeof(buf)));
	/* --comm-kernels FILE (or =FILE), anywhere after the command, for
	 * every command; taken out of argv before the command parses it. */
	for (i = 1, j = 1; i < *argc; i++) {
		const char *a = argv[i], *v;

		if (!is_opt(a, "--comm-kernels")) {
			argv[j++] = argv[i];
			continue;
		}
		v = strchr(a, '=') ? strchr(a, '=') + 1 : (i + 1 < *argc ? argv[++i] : NULL);
		if (!v || !*v)
			return error("option '--comm-kernels' needs a file");
		pt_error_clear(&e);
		if (pt_commkind_load_file(v, &e))
			return error_pt(&e);
	}
	argv[j] = NULL;
	*argc = j;
	return 0;
}


/* ---- the diagnosing commands (diagnose.h) -------------------------------- */

int cli_files_add(cli_files *f, const char *path, int what, const char *skip)
{
	pt_error e;

	pt_error_clear(&e);
	return pt_inputs_add(f, path, what, skip, &e) ? error_pt(&e) : 0;
}

int cli_files_args(cli_files *f, char **argv, int npos, const char *cmd, int what)
{
	for (int k = 1; k <= npos; k++)
		if (cli_files_add(f, argv[k], what, NULL))
			return -1;
	return cli_files_done(f, cmd, what);
}

int cli_files_done(const cli_files *f, const char *cmd, int what)
{
	size_t i, shown = f->nempty < 4 ? f->nempty : 4;
	pt_error e;

	pt_error_clear(&e);
	if (pt_inputs_check(f, cmd, what, &e))
		return error_pt(&e);
	for (i = 0; i < shown; i++)
		warning("'%s': no %s found", f->empty[i], pt_inputs_what(what));
	return 0;
}

void cli_files_free(cli_files *f)
{
	pt_inputs_free(f);
}

void cli_pipeline_options(const cli_diag *d, pt_pipeline_options *o)
{
	pt_pipeline_options_default(o);
	o->diag = d->opt;
	o->outdir = d->outdir;
	o->write_dir = pt_report_write_dir;
	o->parallel = pt_pool_for;
	o->jobs = d->jobs;
	o->text = d->quiet ? PT_PIPELINE_NONE
		  : d->json ? PT_PIPELINE_REPORT
		  : d->format == CLI_FMT_JSON ? PT_PIPELINE_SEED_JSON : PT_PIPELINE_TEXT;
	o->max_findings = d->max_findings;
	o->width = d->width;
	o->timeline = !d->no_timeline;
	o->raw = d->raw;
	o->nraw = d->nraw;
	o->max_raw_bytes = d->max_raw_mb < 0 ? 0 : d->max_raw_mb == 0 ? UINT64_MAX
			   : (uint64_t)d->max_raw_mb * 1000000;
	o->generator = "perftracker " PT_VERSION;
	o->digest_min = d->digests == CLI_DIGESTS_ALWAYS ? 0 : d->digests == CLI_DIGESTS_NEVER
			? SIZE_MAX : PT_PIPELINE_DIGEST_MIN;
}

void cli_read_times(const pt_pipeline_summaries *set)
{
	if (set->n)
		fprintf(stderr, "perftracker: time: read %.3f s (%zu summaries, %zu of them "
			"digests)\n", set->seconds, set->n, set->ndigest + set->nfull_read);
	if (set->nfull_read + set->ndigest)
		fprintf(stderr, "perftracker: time: first phase and full summaries %.3f s "
			"(%zu full summaries: a sample of %zu, then %zu of the %zu suspects; %zu "
			"patterns' keys unnamed)\n", set->focus_seconds, set->nfull_read, set->nsample,
			set->nfull_read - set->nsample, set->nsuspect, set->nkeys_open);
}

void cli_raw_note(const pt_pipeline_result *res, const char *run_dir)
{
	if (res->raw_used >= res->raw_named)
		return;
	fprintf(stderr, "perftracker: the timeline has the raw events of %zu of %zu traces "
		"(%.0f of %.0f MB, the workers the findings name first); 'perftracker timeline "
		"%s --max-raw-mb 0' adds the others\n", res->raw_used, res->raw_named,
		(double)res->raw_used_bytes / 1e6, (double)res->raw_named_bytes / 1e6,
		run_dir ? run_dir : "RUN_DIR");
}

int cli_report(const cli_diag *d, pt_summary *const *s, size_t n, pt_pipeline_hook_fn *hook,
	       const void *ctx)
{
	pt_pipeline_options o;
	pt_pipeline_result res;
	pt_error e;
	double t;
	int rc = -1;

	cli_pipeline_options(d, &o);
	o.hook = hook;
	o.hook_ctx = ctx;
	pt_error_clear(&e);
	if (pt_pipeline_report(&o, s, n, &res, &e)) {
		error_pt(&e);
		goto out;
	}
	if (res.warning)
		warning("%s", res.warning);
	cli_raw_note(&res, d->outdir);
	t = cli_now();
	if (!d->quiet && (fwrite(res.text.buf, 1, res.text.len, stdout) != res.text.len ||
			  fflush(stdout))) {
		error("cannot write the text report to stdout");
		goto out;
	}
	if (d->time)
		fprintf(stderr, "perftracker: time: diagnose %.3f s wall, %.3f s cpu (%zu workers), "
			"write %.3f s (timeline %.3f s)\n", res.diagnose_wall, res.diagnose_cpu, n,
			res.write_seconds + (cli_now() - t), res.timeline_seconds);
	rc = 0;
out:
	free(res.warning);
	pt_sb_free(&res.text);
	return rc;
}
