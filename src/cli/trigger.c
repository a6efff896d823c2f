/*
 * trigger.c - `perftracker --trigger-on [--auto-analyze]` (also installed as
 * `c4d_perftracker`): the master side of online collection.
 *
 * The protocol is src/control/trigger.c (start: the live workers, one
 * absolute start step, trigger.json under an O_EXCL lock; poll; collect);
 * this file parses the options, shows progress while the workers profile
 * and the node agents summarise, names the workers that never delivered,
 * then diagnoses the summaries into <output-dir>/<timestamp>/PerfDisplay/
 * and prints the text report.  When the workers stop stepping before the window
 * (--hang-timeout) it switches to hang diagnosis (hangcheck.c): every
 * worker's stacks, grouped, the stuck one named, the "Hang" report.
 * Protocol: docs/collector.md, docs/hang.md.
 */
#include <stddef.h>

#include "cli.h"
#include "diagnose.h"
#include "hangcheck.h"
#include "control/control.h"
#include "control/nodechan.h"
#include "control/trigger.h"
#include "trace/nsys.h"
#include "util/xalloc.h"
#include "watch/watch.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const cli_usage usage = {
	"trigger",
	"perftracker --trigger-on [--auto-analyze] [options]\n"
	"c4d_perftracker --trigger-on --auto-analyze [options]",
	"Profile every live worker of the training job for a few steps and, with\n"
	"--auto-analyze, write <output-dir>/<timestamp>/PerfDisplay/ and print the\n"
	"text report (docs/collector.md).\n",
	NULL,
};

/* --save-raw-trace stores the index of the word: PT_RAW_*. */
static const char *const raw_policies[] = { "none", "master", "all", NULL };
_Static_assert(PT_RAW_NONE == 0 && PT_RAW_MASTER == 1 && PT_RAW_ALL == 2,
	       "raw_policies[] follows PT_RAW_*");

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void on_note(void *ctx, int is_error, const char *msg)
{
	(void)ctx;
	if (is_error)
		error("%s", msg);
	else
		warning("%s", msg);
}

/* cli_report's hook: the report's "trigger" key, who asked for this
 * profile and why (the agent's auto-profiling says why). */
static void add_trigger_key(pt_report *r, const void *t)
{
	cli_trigger_key(r, t);
}

/* The watch's persistent stragglers when the profile begins (docs/watch.md):
 * the report's first finding about each one cites them.  ranks (x_free)
 * owns the strings *out points into; nothing on any error (the watch is
 * evidence, never a reason to fail). */
static void watch_snapshot(const char *dir, pt_watch_rank **ranks, pt_diag_watch **out,
			   size_t *n)
{
	pt_watch_rank *r = NULL;
	pt_diag_watch *w = NULL;
	size_t nr = 0, k = 0;

	*ranks = NULL;
	*out = NULL;
	*n = 0;
	if (pt_watch_all(dir, &r, &nr, NULL) || !nr)
		goto out;
	w = x_calloc(nr, sizeof(*w));
	if (!w)
		goto out;
	for (size_t i = 0; i < nr; i++) {
		if (!r[i].flagged)
			continue;
		w[k].rank = r[i].rank;
		w[k].since = r[i].since;
		w[k].since_step = r[i].since_step;
		w[k].late_s = r[i].late_s;
		w[k].late_max_s = r[i].late_max_s;
		w[k].at_name = r[i].at_name;
		w[k].at_pg = r[i].at_pg;
		w[k].at_seq = r[i].at_seq;
		w[k].score = r[i].score;
		w[k].lost_gpu_s_per_min = r[i].lost_gpu_s_per_min;
		k++;
	}
out:
	if (!k) {
		x_free(w);
		x_free(r);
		return;
	}
	*ranks = r;
	*out = w;
	*n = k;
}

/* --hang-timeout by default: from the expected workers' step rates. */
static double auto_hang_timeout(const pt_trigger_run *r)
{
	pt_worker_entry *exp = x_calloc(r->n ? r->n : 1, sizeof(*exp));
	double t;

	if (!exp)
		die("out of memory");
	for (size_t i = 0; i < r->n; i++)
		exp[i] = r->w[i].e;
	t = cli_hang_auto_timeout(exp, r->n);
	x_free(exp);
	return t;
}

/* The hang path: stacks from every expected worker, the "Hang" report in
 * the run directory, the text report on stdout.  0 when it was written;
 * 1 when the check found no hang after all (keep waiting); -1 on error. */
static int hang_path(const pt_trigger_run *r, double hang_timeout, double stack_wait, int progress,
		     int quiet)
{
	pt_worker_entry *all = NULL, *e;
	size_t nall = 0, n = r->n, m = n;
	const pt_trigger *t = &r->t;
	int *exited;
	char by[PT_CONTROL_TID_MAX + 16];
	cli_hang h;
	cli_hang_run run;
	int rc = -1;

	memset(&run, 0, sizeof(run));
	/* The expected workers, plus the registered ones that were already
	 * dead or silent when the trigger started: the likeliest cause. */
	if (pt_nodechan_workers(r->dir, &all, &nall, NULL))
		nall = 0;
	e = x_calloc(n + nall, sizeof(*e));
	exited = x_calloc(n + nall, sizeof(int));
	if (!e || !exited)
		die("out of memory");
	for (size_t i = 0; i < n; i++) {
		e[i] = r->w[i].e;
		exited[i] = r->w[i].exited;
	}
	for (size_t k = 0; k < nall; k++) {
		size_t i;

		for (i = 0; i < n; i++)
			if (!strcmp(r->w[i].e.info.id, all[k].info.id))
				break;
		if (i == n)
			e[m++] = all[k];
	}
	x_free(all);
	snprintf(by, sizeof(by), "trigger %s", t->id);
	memset(&h, 0, sizeof(h));
	h.dir = r->dir;
	h.stale = r->o.stale;
	h.hang_timeout = hang_timeout;
	h.stack_wait = stack_wait;
	h.detected_by = by;
	h.progress = progress;
	if (cli_hang_check(&h, e, exited, m, &run))
		goto out;
	if (progress)
		fprintf(stderr, "perftracker: stacks from %zu of %zu workers in %.2f s\n", run.answered,
			m, run.seconds);
	if (!run.res.hung) {
		rc = 1;
		goto out;
	}
	if (cli_hang_write(&run, t->run_dir, t))
		goto out;
	if (!quiet)
		cli_hang_print(&run);
	fprintf(stderr, "perftracker: hang: %s\n", run.res.explanation);
	fprintf(stderr, "perftracker: report: %s/PerfDisplay/index.html\n", t->run_dir);
	rc = 0;
out:
	cli_hang_free(&run);
	x_free(exited);
	x_free(e);
	return rc;
}

/* A job that just started: wait (at most start_wait s) until some worker
 * is live, every rank its world size names has registered and some rank
 * steps (has a rate), so that the trigger neither fails with "no live
 * worker", nor leaves the late ranks out, nor plans the start step without
 * knowing how fast the steps come; ranks still missing 5 s after the last
 * one registered are not waited for.  Quiet when the job is ready at once. */
static void wait_for_job(const char *dir, double stale, double start_wait, int progress)
{
	double t0 = cli_now();
	size_t live = 0, stepping = 0, said = (size_t)-1, last_live = 0;
	double changed = t0;
	int64_t world = 0;
	pt_error e;

	for (;;) {
		pt_error_clear(&e);
		if (access(dir, F_OK) == 0 &&
		    pt_trigger_census(dir, pt_control_now(), stale, &live, &world, &stepping, &e) !=
			    PT_OK)
			return;
		/* Complete, and training: some rank has a step rate (the start
		 * step is planned with it). */
		if (live != last_live) {
			last_live = live;
			changed = cli_now();
		}
		if (live && (int64_t)live >= world && stepping)
			return;
		/* Ranks of one job register within seconds of each other: the
		 * ones still missing 5 s after the last came register elsewhere
		 * (another control directory) or not at all; the trigger warns. */
		if (live && stepping && cli_now() - changed >= 5)
			return;
		/* Nobody, and no sign of a job starting (its collector creates
		 * the directory and the agent its files): fail at once. */
		if (!live) {
			struct stat st;

			if (stat(dir, &st) != 0 || pt_control_now() - (double)st.st_mtime > 60)
				return;
		}
		if (cli_now() - t0 >= start_wait || interrupted)
			return;
		if (progress && live + (stepping ? 1000000 : 0) != said) {
			if (!live)
				fprintf(stderr, "perftracker: no live worker in '%s' yet: waiting up to "
					"%.0f s for the job to register\n", dir, start_wait);
			else if ((int64_t)live < world)
				fprintf(stderr, "perftracker: %zu of %lld workers registered in '%s': "
					"waiting up to %.0f s for the others\n", live, (long long)world, dir,
					start_wait);
			else
				fprintf(stderr, "perftracker: the %zu workers have not started stepping: "
					"waiting up to %.0f s\n", live, start_wait);
			said = live + (stepping ? 1000000 : 0);
		}
		cli_sleep(0.25);
	}
}

/* Wait for every worker: summarised, failed or gone; or interrupted, or
 * the deadline; or a hang, diagnosed by hang_path (1, its result in *rc). */
static int wait_workers(pt_trigger_run *r, double hang_timeout, double stack_wait, int progress,
			int quiet, int *rc)
{
	double t0 = cli_now(), last_print = 0, next_hang_check = 0;
	char last_line[1024] = "";
	int counts[PT_TW_NSTATES];

	for (;;) {
		int64_t step_now = 0;
		char line[1024];
		double el = cli_now() - t0, now = pt_control_now(), silent;
		int live_checked, done;
		size_t who = 0;

		done = pt_trigger_poll(r, now, counts, &step_now, &live_checked);
		/* Stuck before (or in) the window: find out where. */
		if (live_checked && hang_timeout > 0 && now >= next_hang_check &&
		    pt_trigger_looks_hung(r, now, hang_timeout, &who, &silent)) {
			int hr;

			if (progress)
				fprintf(stderr, "perftracker: [%5.1fs] no step from %s for %.0f s "
					"(hang timeout %.0f s, last step %lld): diagnosing a hang\n",
					el, r->w[who].e.info.id, silent, hang_timeout,
					(long long)r->w[who].e.hb.step);
			hr = hang_path(r, hang_timeout, stack_wait, progress, quiet);
			if (hr <= 0) {
				*rc = hr;
				return 1;
			}
			warning("the workers are stepping again: still waiting");
			next_hang_check = now + hang_timeout;
		}
		/* Someone saw the start step pass before it armed: move the
		 * round for everyone rather than profile different steps. */
		if (counts[PT_TW_LATE] && !done) {
			pt_error e;
			char late[600] = "";
			int rr;

			for (size_t i = 0; i < r->n && !late[0]; i++)
				if (r->w[i].state == PT_TW_LATE)
					snprintf(late, sizeof(late), "rank %lld %s",
						 (long long)r->w[i].e.info.rank, r->w[i].late);
			pt_error_clear(&e);
			rr = pt_trigger_rearm(r, now, &e);
			if (rr < 0) {
				error_pt(&e);
			} else if (rr == 1) {
				if (progress)
					fprintf(stderr, "perftracker: [%5.1fs] %s: re-armed as %s "
						"(round %lld of %lld): profiling steps %lld-%lld\n", el, late,
						r->t.id, (long long)r->t.round + 1,
						(long long)r->t.rounds + 1, (long long)r->t.start_step,
						(long long)(r->t.start_step + r->t.steps - 1));
				continue;
			}
		}
		if (progress) {
			pt_sb aw = { 0 };

			pt_trigger_awaited(r, &aw, 4);
			snprintf(line, sizeof(line),
				 "waiting %d, armed %d, profiling %d, traced %d, summarized %d, "
				 "failed %d, missing %d (step %lld)%s%s",
				 counts[PT_TW_WAITING] + counts[PT_TW_LATE], counts[PT_TW_ARMED],
				 counts[PT_TW_PROFILING], counts[PT_TW_TRACED], counts[PT_TW_SUMMARIZED],
				 counts[PT_TW_FAILED], counts[PT_TW_MISSING], (long long)step_now,
				 aw.len && !done ? "; waiting for " : "", aw.len && !done ? aw.buf : "");
			pt_sb_free(&aw);
			if (strcmp(line, last_line) || el - last_print >= 10) {
				fprintf(stderr, "perftracker: [%5.1fs] %s\n", el, line);
				snprintf(last_line, sizeof(last_line), "%s", line);
				last_print = el;
			}
		}
		/* Traces waiting for an agent that is not there: say so once. */
		pt_trigger_check_agents(r, now);
		if (done)
			return 0;
		if (interrupted) {
			warning("interrupted: reporting what was delivered");
			return 0;
		}
		if (now > r->t.deadline) {
			warning("timed out after %.0f s waiting for workers", el);
			return 0;
		}
		/* Big jobs: fewer status reads per second. */
		cli_sleep(r->n > 500 ? (double)r->n / 2000.0 : 0.25);
	}
}

/* The summaries that came (two phases at scale: their digests, then the
 * full summaries of the workers they single out, src/diagnose/pipeline.h)
 * into sums[] in place of the NULLs pt_trigger_gather left; set owns
 * them.  ndelivered drops by those that cannot be read.  -1 after an
 * error message. */
static int read_delivered(const cli_diag *d, char **paths, pt_summary **sums, size_t n,
			  pt_pipeline_summaries *set, size_t *ndelivered)
{
	pt_pipeline_options o;
	char **v = x_malloc((n ? n : 1) * sizeof(*v));
	size_t i, k = 0;
	pt_error e;
	int rc = -1;

	if (!v)
		return error("out of memory");
	for (i = 0; i < n; i++)
		if (paths[i])
			v[k++] = paths[i];
	cli_pipeline_options(d, &o);
	pt_error_clear(&e);
	if (pt_pipeline_read(v, k, &o, set, &e)) {
		error_pt(&e);
		goto out;
	}
	for (i = k = 0; i < n; i++) {
		if (!paths[i])
			continue;
		sums[i] = set->s[k];
		if (sums[i]->error)
			--*ndelivered;
		k++;
	}
	if (d->time)
		cli_read_times(set);
	rc = 0;
out:
	x_free(v);
	return rc;
}

/* The summaries that came, the workers that sent none named, then the
 * diagnosis (--auto-analyze) or where the summaries are. */
static int report(pt_trigger_run *r, cli_diag *d, int auto_analyze, int save_raw)
{
	pt_summary **sums = NULL;
	char **paths = NULL;
	pt_pipeline_summaries set = {0};
	size_t ndelivered = 0, i;
	pt_inputs rawl = {0};
	pt_error e;
	int rc = -1;

	pt_error_clear(&e);
	/* Collect: summaries into <run>/summaries/, the rest named. */
	if (pt_trigger_gather(r, &paths, &sums, &ndelivered, &e) && !sums) {
		error_pt(&e);
		goto out;
	}
	/* Only a report reads them: without --auto-analyze they are counted. */
	if (auto_analyze && ndelivered &&
	    read_delivered(d, paths, sums, r->n, &set, &ndelivered))
		goto out;
	if (ndelivered < r->n) {
		warning("%zu of %zu worker%s never delivered:", r->n - ndelivered, r->n,
			r->n == 1 ? "" : "s");
		for (i = 0; i < r->n; i++)
			if (sums[i] && sums[i]->error)
				fprintf(stderr, "  %s (rank %lld on %s): %s\n", r->w[i].e.info.id,
					(long long)r->w[i].e.info.rank, r->w[i].e.info.host,
					sums[i]->error);
	}
	if (!ndelivered) {
		if (!e.msg[0])
			pt_error_set(&e, PT_EINVAL, -1, "no worker delivered a readable summary for "
				     "trigger %s", r->t.id);
		error_pt(&e);
		goto out;
	}
	if (auto_analyze) {
		d->outdir = r->t.run_dir;
		/* The raw traces kept go into the timeline (a folder without any
		 * is no error: --save-raw-trace master keeps one). */
		if (save_raw != PT_RAW_NONE && !pt_inputs_add(&rawl, r->t.raw_dir, PT_INPUTS_TRACES,
							      NULL, &e)) {
			d->raw = rawl.v;
			d->nraw = rawl.n;
		}
		if (cli_report(d, sums, r->n, add_trigger_key, &r->t))
			goto out;
		fprintf(stderr, "perftracker: report: %s/PerfDisplay/index.html\n", r->t.run_dir);
	} else {
		fprintf(stderr, "perftracker: %zu summaries in %s/summaries; analyse with "
			"'perftracker diagnose %s/summaries/*.json -o %s'\n", ndelivered, r->t.run_dir,
			r->t.run_dir, r->t.run_dir);
	}
	if (save_raw != PT_RAW_NONE)
		fprintf(stderr, "perftracker: raw traces: %s\n", r->t.raw_dir);
	rc = 0;
out:
	d->raw = NULL;
	d->nraw = 0;
	pt_inputs_free(&rawl);
	for (i = 0; sums && i < r->n; i++)
		if (!paths || !paths[i])  /* the others are set's */
			pt_summary_free(sums[i]);
	for (i = 0; paths && i < r->n; i++)
		x_free(paths[i]);
	pt_pipeline_summaries_free(&set);
	x_free(paths);
	x_free(sums);
	return rc;
}

int cmd_trigger(int argc, char **argv)
{
	const char *dir = NULL, *outdir = NULL, *job = NULL;
	long wait = 5, steps = 2;
	int save_raw = PT_RAW_NONE, auto_analyze = 0, progress = 1, trigger_on = 0;
	double timeout = 0, stale = 30, hang_timeout = -1, stack_wait = 5, start_wait = 20;
	const char *reason = "";
	int nsys_hz = 0;
	cli_diag d;
	pt_trigger_options opt;
	pt_trigger_run r;
	pt_error e;
	int rc = -1, hung;
	struct sigaction sa;
	pt_watch_rank *wranks = NULL;
	pt_diag_watch *wsnap = NULL;

	const pt_opt opts[] = {
		PT_OPT_FLAG(0, "trigger-on", PT_TO(&trigger_on),
			    "profile now (the reference's flag; 'perftracker trigger' needs none)"),
		PT_OPT_FLAG(0, "auto-analyze", PT_TO(&auto_analyze),
			    "diagnose the summaries and write the report when they are in"),
		PT_OPT_INT(0, "wait", PT_TO(&wait), "N", "steps to wait before profiling (5)"),
		PT_OPT_INT_RANGE(0, "steps", PT_TO(&steps), "N", 1, 0, "steps to profile (2)"),
		PT_OPT_STRING(0, "output-dir", PT_TO(&outdir), "DIR",
			      "report and raw traces go to DIR/<timestamp>/ (/tmp/perftracker/output)"),
		PT_OPT_CHOICE(0, "save-raw-trace", PT_TO(&save_raw), "WHICH", raw_policies,
			      "keep raw traces: none, master (rank 0) or all (none)"),
		CLI_OPT_CONTROL_DIR(&dir),
		CLI_OPT_JOB(&job),
		PT_OPT_DOUBLE(0, "timeout", PT_TO(&timeout), "SEC",
			      "stop waiting for workers after SEC (default: from the step rate)"),
		PT_OPT_DOUBLE(0, "stale", PT_TO(&stale), "SEC",
			      "workers without a heartbeat for SEC are not expected (30)"),
		PT_OPT_SET(0, "no-progress", PT_TO(&progress), 0, "no progress lines on stderr"),
		PT_OPT_DOUBLE(0, "start-wait", PT_TO(&start_wait), "SEC",
			      "a job just started: wait up to SEC for its workers to\n"
			      "register, all of its world size (20; 0: no wait)"),
		PT_OPT_DOUBLE(0, "hang-timeout", PT_TO(&hang_timeout), "SEC",
			      "no step from a worker for SEC before its window: diagnose a\n"
			      "hang instead (max(60, 10 x median step time); 0: never)"),
		PT_OPT_DOUBLE(0, "stack-wait", PT_TO(&stack_wait), "SEC",
			      "hang diagnosis: wait this long for the stacks (5)"),
		PT_OPT_STRING(0, "reason", PT_TO(&reason), "TEXT",
			      "why this trigger runs (kept in trigger.json and the report)"),
		CLI_OPT_NSYS_HZ(&nsys_hz, "the node agents also sample GPU metrics with nsys at HZ\n"
				"(10000) during the window, where nsys is on the PATH"),
		/* The diagnosis options, less -o: the run directory is the output. */
		PT_OPT_INCLUDE(cli_diag_run_opts, &d, "diagnosis options (--auto-analyze):"),
		PT_OPT_INCLUDE(cli_diag_digest_opts, &d, NULL),
		PT_OPT_INCLUDE(cli_diag_timeline_opts, &d, NULL),
		PT_OPT_INCLUDE(cli_diag_raw_opts, &d, NULL),
		PT_OPT_INCLUDE(cli_diag_opts, &d, NULL),
		PT_OPT_INCLUDE(cli_diag_text_opts, &d, NULL),
		PT_OPT_END(),
	};
	int npos;

	memset(&r, 0, sizeof(r));
	cli_diag_init(&d);
	npos = cli_parse_options(&usage, opts, argc, argv);
	if (npos < 0)
		return npos == CLI_HELP ? 0 : -1;
	if (npos > 0)
		return cli_usage_unexpected(&usage, argv[1]);
	(void)trigger_on; /* `perftracker trigger` needs no flag; --trigger-on is the reference's */
	if (cli_resolve_dir(&dir, job))
		return -1;
	memset(&opt, 0, sizeof(opt));
	opt.dir = dir;
	opt.outdir = outdir;
	opt.wait = wait;
	opt.steps = steps;
	opt.save_raw = save_raw;
	opt.timeout = timeout;
	opt.stale = stale;
	opt.reason = reason;
	opt.nsys_hz = nsys_hz;
	opt.note = on_note;
	pt_error_clear(&e);

	/* From here on Ctrl-C and SIGTERM end the wait and clean up (trigger
	 * done, lock released) instead of killing us half way. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (start_wait > 0)
		wait_for_job(dir, stale, start_wait, progress);
	if (pt_trigger_start(&r, &opt, pt_control_now(), &e)) {
		error_pt(&e);
		goto out;
	}
	if (hang_timeout < 0)
		hang_timeout = auto_hang_timeout(&r);
	watch_snapshot(dir, &wranks, &wsnap, &d.opt.nwatch);
	d.opt.watch = wsnap;
	if (progress)
		fprintf(stderr, "perftracker: trigger %s: %zu worker%s at step %lld; profiling steps "
			"%lld-%lld; output %s (timeout %.0f s)\n", r.t.id, r.n, r.n == 1 ? "" : "s",
			(long long)r.cur, (long long)r.t.start_step,
			(long long)(r.t.start_step + steps - 1), r.t.run_dir, r.timeout);
	if (progress && nsys_hz)
		fprintf(stderr, "perftracker: trigger %s: the node agents sample GPU metrics with nsys "
			"at %d Hz where it is on the PATH (the report's hardware note says where not)\n",
			r.t.id, nsys_hz);

	hung = wait_workers(&r, hang_timeout, stack_wait, progress, d.quiet, &rc);

	/* Done: workers stop looking at this trigger. */
	if (pt_trigger_finish(&r, &e))
		error_pt(&e);
	if (hung)
		goto out;
	rc = report(&r, &d, auto_analyze, save_raw);
out:
	x_free(wsnap);
	x_free(wranks);
	pt_trigger_end(&r);
	return rc;
}
