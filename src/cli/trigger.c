/*
 * trigger.c - `perftracker --trigger-on [--auto-analyze]` (also installed as
 * `c4d_perftracker`): the master side of online collection.
 *
 * Picks the live workers from the control directory, names one absolute
 * start step for all of them (from their heartbeats), writes trigger.json
 * under an O_EXCL lock, shows progress while the workers profile and the
 * node agents summarise, names the workers that never delivered, then
 * diagnoses the summaries into <output-dir>/<timestamp>/PerfDisplay/ and
 * prints the text report.  When the workers stop stepping before the window
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
#include "trace/nsys.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char usage_text[] =
	"usage: perftracker --trigger-on [--auto-analyze] [options]\n"
	"       c4d_perftracker --trigger-on --auto-analyze [options]\n"
	"\n"
	"Profile every live worker of the training job for a few steps and, with\n"
	"--auto-analyze, write <output-dir>/<timestamp>/PerfDisplay/ and print the\n"
	"text report (docs/collector.md).\n"
	"\n"
	"options:\n"
	"  --wait N                  steps to wait before profiling (5)\n"
	"  --steps N                 steps to profile (2)\n"
	"  --output-dir DIR          report and raw traces go to DIR/<timestamp>/ (/tmp/perftracker/output)\n"
	"  --save-raw-trace WHICH    keep raw traces: none, master (rank 0) or all (none)\n"
	"  --control-dir DIR         control directory ($PERFTRACKER_CONTROL_DIR, /tmp/perftracker/control)\n"
	"  --timeout SEC             stop waiting for workers after SEC (default: from the step rate)\n"
	"  --stale SEC               workers without a heartbeat for SEC are not expected (30)\n"
	"  --no-progress             no progress lines on stderr\n"
	"  --hang-timeout SEC        no step from a worker for SEC before its window: diagnose a\n"
	"                            hang instead (max(60, 10 x median step time); 0: never)\n"
	"  --stack-wait SEC          hang diagnosis: wait this long for the stacks (5)\n"
	"  --reason TEXT             why this trigger runs (kept in trigger.json and the report)\n"
	"  --nsys-gpu-metrics [HZ]   the node agents also sample GPU metrics with nsys at HZ\n"
	"                            (10000) during the window, where nsys is on the PATH\n"
	"\n"
	"diagnosis options (--auto-analyze):\n";

enum { WS_NONE, WS_ARMED, WS_PROFILING, WS_TRACED, WS_SUMMARIZED, WS_FAILED, WS_MISSING };

typedef struct wstate {
	pt_worker_entry e;
	pt_node_worker nw; /* as its node file (or direct records) last said */
	int has_nw;
	int state;
	int exited;        /* unregistered: ended normally */
	int agent_warned;
	char why[600];
} wstate;

static volatile sig_atomic_t interrupted;

/* The diagnosis options, less -o (the run directory is the output) and -h. */
static void print_diag_help(void)
{
	const char *p = cli_diag_help;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p + 1) : strlen(p);

		if (!strstr(p, "--output DIR") || (nl && strstr(p, "--output DIR") > nl))
			if (!(strncmp(p, "  -h, --help", 12) == 0))
				fwrite(p, 1, n, stdout);
		p += n;
	}
}

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* <output>/<YYYYmmdd-HHMMSS>, made unique with -2, -3, ...  Only named
 * here: it is created by the first thing written into it (a summary, a
 * raw trace moved by an agent, the report), so a trigger that is killed or
 * gets nothing leaves no empty folder behind. */
static int make_run_dir(const char *out, double now, char *run, size_t cap)
{
	time_t s = (time_t)now;
	struct tm tm;
	char ts[32];
	pt_error e;

	localtime_r(&s, &tm);
	strftime(ts, sizeof(ts), "%Y%m%d-%H%M%S", &tm);
	pt_error_clear(&e);
	if (pt_control_mkdirs(out, &e))
		return error_pt(&e);
	for (int k = 1; k < 1000; k++) {
		int n = k == 1 ? snprintf(run, cap, "%s/%s", out, ts)
			       : snprintf(run, cap, "%s/%s-%d", out, ts, k);

		if (n < 0 || (size_t)n >= cap)
			return error("output directory name too long: '%s'", out);
		struct stat st;

		if (lstat(run, &st) == 0)
			continue;
		if (errno == ENOENT)
			return 0;
		return error("cannot use '%s': %s", run, strerror(errno));
	}
	return error("cannot create a run directory in '%s'", out);
}

static const char *state_name(int s)
{
	static const char *const names[] = { "waiting", "armed", "profiling", "traced",
					     "summarized", "failed", "missing" };

	return names[s];
}

static void refresh_status(const char *dir, const char *tid, wstate *w)
{
	char path[PT_CONTROL_PATH_MAX];
	struct stat st;
	pt_wstatus s;

	if (w->state == WS_SUMMARIZED || w->state == WS_FAILED || w->state == WS_MISSING)
		return;
	/* A worker its agent publishes: the node file says all (read once a
	 * second for every worker by refresh_liveness); no per-worker
	 * operation on the shared directory. */
	if (w->has_nw && w->nw.via_node) {
		if (!w->nw.has_status || strcmp(w->nw.tid, tid))
			return;
		s = w->nw.st;
		/* (An agent restarted after writing the summary never flags it:
		 * for workers traced 5 s ago and not flagged, look at the file.) */
		if (w->nw.summarized ||
		    (!strcmp(s.state, PT_STATE_TRACED) && pt_control_now() - s.time > 5 &&
		     pt_control_record_path(path, sizeof(path), dir, "summaries", tid,
					    w->e.info.id) == 0 && stat(path, &st) == 0)) {
			w->state = WS_SUMMARIZED;
			return;
		}
		goto map;
	}
	if (pt_control_record_path(path, sizeof(path), dir, "summaries", tid, w->e.info.id) == 0 &&
	    stat(path, &st) == 0) {
		w->state = WS_SUMMARIZED;
		return;
	}
	if (pt_control_status_read(dir, tid, w->e.info.id, &s, NULL) != PT_OK)
		return;
map:
	if (!strcmp(s.state, PT_STATE_ARMED))
		w->state = WS_ARMED;
	else if (!strcmp(s.state, PT_STATE_PROFILING))
		w->state = WS_PROFILING;
	else if (!strcmp(s.state, PT_STATE_TRACED))
		w->state = WS_TRACED;
	else if (!strcmp(s.state, PT_STATE_FAILED)) {
		w->state = WS_FAILED;
		snprintf(w->why, sizeof(w->why), "failed: %s", s.error);
	}
}

/* Mark workers that died (pid gone on this machine, or no heartbeat for
 * stale_s) before handing over a trace as missing. */
static void refresh_liveness(const char *dir, wstate *ws, size_t n, double stale_s,
			     const char *node)
{
	pt_node_worker *all = NULL;
	size_t na = 0;
	double now = pt_control_now();

	if (pt_nodechan_all(dir, &all, &na, NULL))
		return;
	for (size_t i = 0; i < n; i++) {
		wstate *w = &ws[i];
		int found = 0;

		if (w->state == WS_SUMMARIZED || w->state == WS_FAILED || w->state == WS_MISSING)
			continue;
		for (size_t k = 0; k < na; k++) {
			if (strcmp(all[k].e.info.id, w->e.info.id))
				continue;
			found = 1;
			w->e = all[k].e;
			w->nw = all[k];
			w->has_nw = 1;
			break;
		}
		if (w->state == WS_TRACED)
			continue;  /* (the process may end: the trace is delivered) */
		if (!found) {
			/* Unregistered: the process exited normally. */
			w->state = WS_MISSING;
			w->exited = 1;
			snprintf(w->why, sizeof(w->why), "process exited (unregistered) at step %lld",
				 (long long)w->e.hb.step);
		} else if (!pt_control_worker_alive(&w->e, now, stale_s, node)) {
			w->state = WS_MISSING;
			if (!strcmp(w->e.info.node, node))
				snprintf(w->why, sizeof(w->why), "process %lld is gone (last step %lld)",
					 (long long)w->e.info.pid, (long long)w->e.hb.step);
			else
				snprintf(w->why, sizeof(w->why),
					 "no heartbeat for %.0f s (last step %lld)",
					 now - w->e.hb.time, (long long)w->e.hb.step);
		}
	}
	x_free(all);
}

static int copy_summary(const char *from, const char *to)
{
	char *buf = NULL;
	size_t len = 0;
	int rc;

	if (pt_control_read_file(from, (size_t)1 << 30, &buf, &len, NULL))
		return -1;
	rc = pt_control_write_atomic(to, buf, len, NULL);
	x_free(buf);
	return rc ? -1 : 0;
}

/* Leftovers of earlier triggers (an interrupted one, a late summary):
 * under the lock nobody else uses status/ or summaries/. */
static void remove_old(const char *dir, const char *sub)
{
	char path[PT_CONTROL_PATH_MAX];
	DIR *d;
	struct dirent *de;

	if (pt_control_record_path(path, sizeof(path), dir, sub, NULL, NULL) || !(d = opendir(path)))
		return;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			pt_control_remove_dir(dir, sub, de->d_name, NULL);
	closedir(d);
}

static void lock_content(pt_sb *sb, const pt_trigger *t, const char *node)
{
	pt_sb_adds(sb, "{\"id\":");
	pt_sb_add_json_str(sb, t->id, strlen(t->id));
	pt_sb_adds(sb, ",\"host\":");
	pt_sb_add_json_str(sb, t->host, strlen(t->host));
	pt_sb_adds(sb, ",\"node\":");
	pt_sb_add_json_str(sb, node, strlen(node));
	pt_sb_addf(sb, ",\"pid\":%lld,\"created\":", (long long)t->pid);
	pt_sb_add_double(sb, t->created);
	pt_sb_adds(sb, ",\"deadline\":");
	pt_sb_add_double(sb, t->deadline);
	pt_sb_adds(sb, "}\n");
}

static void describe_holder(const char *holder, const char *path)
{
	char id[128] = "?", host[256] = "?";
	double created = 0, deadline = 0;
	long pid = -1;
	const char *p;

	/* A short, forgiving scan: the holder is our own one-line JSON. */
	if ((p = strstr(holder, "\"id\":\"")))
		sscanf(p + 6, "%127[^\"]", id);
	if ((p = strstr(holder, "\"host\":\"")))
		sscanf(p + 8, "%255[^\"]", host);
	if ((p = strstr(holder, "\"pid\":")))
		pid = strtol(p + 6, NULL, 10);
	if ((p = strstr(holder, "\"created\":")))
		created = strtod(p + 10, NULL);
	if ((p = strstr(holder, "\"deadline\":")))
		deadline = strtod(p + 11, NULL);
	error("a trigger is already running: '%s' (pid %ld on '%s', started %.0f s ago, gives up "
	      "in %.0f s); wait for it to finish, or remove '%s' if that process is gone",
	      id, pid, host, created > 0 ? pt_control_now() - created : 0,
	      deadline > 0 ? deadline - pt_control_now() : 0, path);
}

/* cli_diag_run's hook: the report's "trigger" key, who asked for this
 * profile and why (the agent's auto-profiling says why). */
static void add_trigger_key(pt_report *r, const void *t)
{
	cli_trigger_key(r, t);
}

/* Has a worker that has not finished its window made no step for
 * hang_timeout seconds?  Names the longest-silent one in *who. */
static int looks_hung(const wstate *ws, size_t n, double now, double hang_timeout, size_t *who,
		      double *silent)
{
	int any = 0;

	*silent = 0;
	for (size_t i = 0; i < n; i++) {
		const pt_worker_entry *e = &ws[i].e;
		double st = e->has_hb && e->hb.step_time > 0 ? e->hb.step_time : e->info.started;

		if (ws[i].state != WS_NONE && ws[i].state != WS_ARMED && ws[i].state != WS_PROFILING)
			continue;
		if (st > 0 && now - st >= hang_timeout && now - st > *silent) {
			*silent = now - st;
			*who = i;
			any = 1;
		}
	}
	return any;
}

/* The hang path: stacks from every expected worker, the "Hang" report in
 * the run directory, the text report on stdout.  0 when it was written;
 * 1 when the check found no hang after all (keep waiting); -1 on error. */
static int hang_path(const char *dir, wstate *ws, size_t n, const pt_trigger *t, double stale,
		     double hang_timeout, double stack_wait, int progress, int quiet)
{
	pt_worker_entry *all = NULL, *e;
	size_t nall = 0, m = n;
	int *exited;
	char by[PT_CONTROL_TID_MAX + 16];
	cli_hang h;
	cli_hang_run run;
	int rc = -1;

	memset(&run, 0, sizeof(run));
	/* The expected workers, plus the registered ones that were already
	 * dead or silent when the trigger started: the likeliest cause. */
	if (pt_nodechan_workers(dir, &all, &nall, NULL))
		nall = 0;
	e = x_calloc(n + nall, sizeof(*e));
	exited = x_calloc(n + nall, sizeof(int));
	if (!e || !exited)
		die("out of memory");
	for (size_t i = 0; i < n; i++) {
		e[i] = ws[i].e;
		exited[i] = ws[i].exited;
	}
	for (size_t k = 0; k < nall; k++) {
		size_t i;

		for (i = 0; i < n; i++)
			if (!strcmp(ws[i].e.info.id, all[k].info.id))
				break;
		if (i == n)
			e[m++] = all[k];
	}
	x_free(all);
	snprintf(by, sizeof(by), "trigger %s", t->id);
	memset(&h, 0, sizeof(h));
	h.dir = dir;
	h.stale = stale;
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

int cmd_trigger(int argc, char **argv)
{
	const char *dir = NULL, *outdir = NULL;
	long wait = 5, steps = 2;
	int save_raw = PT_RAW_NONE, auto_analyze = 0, progress = 1, trigger_on = 0;
	double timeout = 0, stale = 30, hang_timeout = -1, stack_wait = 5, next_hang_check = 0;
	const char *reason = "";
	int hung = 0, nsys_hz = 0;
	cli_diag d;
	pt_worker_entry *all = NULL;
	size_t nall = 0, n = 0;
	wstate *ws = NULL;
	pt_trigger t;
	pt_error e;
	char node[PT_CONTROL_HOST_MAX], lockpath[PT_CONTROL_PATH_MAX], holder[4096];
	pt_sb sb = { 0 };
	double now, t0, last_live = 0, last_print = 0, last_agent_check = 0;
	int64_t cur = 0, max_world = 0;
	double max_rate = 0, min_rate = 0;
	int locked = 0, rc = -1, wrote_trigger = 0;
	pt_summary **sums = NULL;
	size_t nsums = 0, ndelivered = 0, nmissing = 0;
	char last_line[512] = "";
	struct sigaction sa;
	int counts[7];

	memset(&t, 0, sizeof(t));
	cli_diag_init(&d);
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i];

		if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
			fputs(usage_text, stdout);
			print_diag_help();
			return 0;
		} else if (!strcmp(o, "--trigger-on")) {
			trigger_on = 1;
		} else if (!strcmp(o, "--auto-analyze")) {
			auto_analyze = 1;
		} else if (cli_is_opt(o, "--wait")) {
			wait = opt_long("--wait", cli_opt_value(argc, argv, &i));
		} else if (cli_is_opt(o, "--steps")) {
			steps = opt_long("--steps", cli_opt_value(argc, argv, &i));
		} else if (cli_is_opt(o, "--output-dir")) {
			outdir = cli_opt_value(argc, argv, &i);
		} else if (cli_is_opt(o, "--save-raw-trace")) {
			const char *v = cli_opt_value(argc, argv, &i);

			save_raw = pt_control_raw_policy(v);
			if (save_raw < 0)
				die("option '--save-raw-trace': '%s' is not none, master or all", v);
		} else if (cli_is_opt(o, "--control-dir")) {
			dir = cli_opt_value(argc, argv, &i);
		} else if (cli_is_opt(o, "--timeout")) {
			timeout = opt_double("--timeout", cli_opt_value(argc, argv, &i));
		} else if (cli_is_opt(o, "--stale")) {
			stale = opt_double("--stale", cli_opt_value(argc, argv, &i));
		} else if (!strcmp(o, "--no-progress")) {
			progress = 0;
		} else if (cli_is_opt(o, "--hang-timeout")) {
			hang_timeout = opt_double("--hang-timeout", cli_opt_value(argc, argv, &i));
		} else if (cli_is_opt(o, "--stack-wait")) {
			stack_wait = opt_double("--stack-wait", cli_opt_value(argc, argv, &i));
		} else if (cli_is_opt(o, "--reason")) {
			reason = cli_opt_value(argc, argv, &i);
		} else if (cli_is_opt(o, "--nsys-gpu-metrics")) {
			nsys_hz = cli_nsys_hz_opt(argc, argv, &i);
		} else if (strcmp(o, "-o") && !cli_is_opt(o, "--output") &&
			   cli_diag_option(&d, argc, argv, &i)) {
			/* a diagnosis option */
		} else {
			error("unknown option '%s'", o);
			fputs(usage_text, stderr);
			return -1;
		}
	}
	(void)trigger_on; /* `perftracker trigger` needs no flag; --trigger-on is the reference's */
	if (steps < 1)
		die("option '--steps': must be at least 1");
	if (!dir)
		dir = pt_control_default_dir();
	if (!outdir)
		outdir = PT_CONTROL_DEFAULT_OUTPUT;
	pt_control_nodename(node, sizeof(node));
	pt_error_clear(&e);

	/* Who is expected: the live workers. */
	now = pt_control_now();
	if (pt_nodechan_workers(dir, &all, &nall, &e)) {
		error_pt(&e);
		goto out;
	}
	ws = x_calloc(nall ? nall : 1, sizeof(*ws));
	if (!ws)
		die("out of memory");
	for (size_t i = 0; i < nall; i++) {
		double est;

		if (!pt_control_worker_alive(&all[i], now, stale, node))
			continue;
		ws[n].e = all[i];
		ws[n].state = WS_NONE;
		n++;
		est = (double)all[i].hb.step;
		if (all[i].has_hb && all[i].hb.rate > 0) {
			double dt = now - all[i].hb.time;

			est += all[i].hb.rate * (dt < 0 ? 0 : dt > 30 ? 30 : dt);
			if (all[i].hb.rate > max_rate)
				max_rate = all[i].hb.rate;
			if (min_rate == 0 || all[i].hb.rate < min_rate)
				min_rate = all[i].hb.rate;
		}
		if ((int64_t)ceil(est) > cur)
			cur = (int64_t)ceil(est);
		if (all[i].info.world_size > max_world)
			max_world = all[i].info.world_size;
	}
	if (!n) {
		error("no live worker in '%s' (%zu registered): is the training running with "
		      "PerfTracker()? see 'perftracker status --control-dir %s'", dir, nall, dir);
		goto out;
	}
	if (max_world > (int64_t)n)
		warning("%zu live worker%s but world size %lld: the others are not registered in '%s'",
			n, n == 1 ? "" : "s", (long long)max_world, dir);

	/* One absolute start step for everyone: the furthest worker's
	 * estimated step, plus the steps that pass while the workers notice
	 * the trigger (their agent's 1 s stat of trigger.json, their 0.25 s
	 * poll of its copy, file-system propagation: about 2 s, more on a
	 * loaded node, so 3 s of steps; docs/bench.md, "Code shaped for
	 * speed"), plus --wait. */
	memset(&t, 0, sizeof(t));
	pt_control_trigger_id(t.id, sizeof(t.id), now);
	snprintf(t.state, sizeof(t.state), "%s", PT_TRIGGER_ACTIVE);
	t.start_step = cur + (int64_t)ceil(max_rate * 3.0) + wait;
	t.steps = steps;
	t.wait = wait;
	t.save_raw = save_raw;
	t.created = now;
	if (timeout <= 0) {
		double per_step = min_rate > 0 ? 1.0 / min_rate : 10.0;

		timeout = (double)(t.start_step - cur + steps) * per_step * 2 + 60;
	}
	t.deadline = now + timeout;
	snprintf(t.reason, sizeof(t.reason), "%s", reason);
	t.nsys_gpu_metrics = nsys_hz;
	if (hang_timeout < 0) {
		pt_worker_entry *exp = x_calloc(n, sizeof(*exp));

		if (!exp)
			die("out of memory");
		for (size_t i = 0; i < n; i++)
			exp[i] = ws[i].e;
		hang_timeout = cli_hang_auto_timeout(exp, n);
		x_free(exp);
	}
	pt_control_hostname(t.host, sizeof(t.host));
	t.pid = getpid();
	for (size_t i = 0; i < n; i++)
		if (pt_control_trigger_add_worker(&t, ws[i].e.info.id))
			die("out of memory");

	/* From here on Ctrl-C and SIGTERM end the wait and clean up (trigger
	 * done, lock released) instead of killing us half way. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	/* The lock: one trigger at a time per control directory, which must
	 * be one no other user can write through (docs/collector.md). */
	if (pt_control_path(lockpath, sizeof(lockpath), dir, "trigger.lock"))
		die("control directory name too long");
	if (pt_control_mkdirs(dir, &e)) {
		error_pt(&e);
		goto out;
	}
	lock_content(&sb, &t, node);
	for (int tries = 0; tries < 2 && !locked; tries++) {
		int lr = pt_control_lock(lockpath, sb.buf, holder, sizeof(holder), &e);

		if (lr == PT_OK) {
			locked = 1;
		} else if (lr == 1) {
			if (tries == 0 && pt_control_lock_stale(lockpath, holder, now, node)) {
				warning("removing stale trigger lock '%s'", lockpath);
				unlink(lockpath);
				continue;
			}
			describe_holder(holder, lockpath);
			goto out;
		} else {
			error_pt(&e);
			goto out;
		}
	}
	if (!locked)
		goto out;
	remove_old(dir, "status");
	remove_old(dir, "summaries");
	if (make_run_dir(outdir, now, t.run_dir, sizeof(t.run_dir)))
		goto out;
	if ((size_t)snprintf(t.raw_dir, sizeof(t.raw_dir), "%s/raw_trace", t.run_dir) >=
	    sizeof(t.raw_dir))
		die("output directory name too long");


	if (pt_control_trigger_write(dir, &t, &e)) {
		error_pt(&e);
		goto out;
	}
	wrote_trigger = 1;
	if (progress)
		fprintf(stderr, "perftracker: trigger %s: %zu worker%s at step %lld; profiling steps "
			"%lld-%lld; output %s (timeout %.0f s)\n", t.id, n, n == 1 ? "" : "s",
			(long long)cur, (long long)t.start_step,
			(long long)(t.start_step + steps - 1), t.run_dir, timeout);
	if (progress && nsys_hz)
		fprintf(stderr, "perftracker: trigger %s: the node agents sample GPU metrics with nsys "
			"at %d Hz where it is on the PATH (the report's hardware note says where not)\n",
			t.id, nsys_hz);

	/* Wait for every worker: summarised, failed or gone. */
	t0 = cli_now();
	for (;;) {
		size_t done = 0;
		int64_t step_now = 0;
		char line[512];
		double el = cli_now() - t0;

		now = pt_control_now();
		if (now - last_live >= 1.0) {
			size_t who = 0;
			double silent;

			last_live = now;
			refresh_liveness(dir, ws, n, stale, node);
			/* Stuck before (or in) the window: find out where. */
			if (hang_timeout > 0 && now >= next_hang_check &&
			    looks_hung(ws, n, now, hang_timeout, &who, &silent)) {
				int hr;

				if (progress)
					fprintf(stderr, "perftracker: [%5.1fs] no step from %s for %.0f s "
						"(hang timeout %.0f s, last step %lld): diagnosing a hang\n",
						el, ws[who].e.info.id, silent, hang_timeout,
						(long long)ws[who].e.hb.step);
				hr = hang_path(dir, ws, n, &t, stale, hang_timeout, stack_wait, progress,
					       d.quiet);
				if (hr <= 0) {
					hung = 1;
					rc = hr;
					break;
				}
				warning("the workers are stepping again: still waiting");
				next_hang_check = now + hang_timeout;
			}
		}
		memset(counts, 0, sizeof(counts));
		for (size_t i = 0; i < n; i++) {
			refresh_status(dir, t.id, &ws[i]);
			counts[ws[i].state]++;
			done += ws[i].state >= WS_SUMMARIZED;
			if (ws[i].e.hb.step > step_now)
				step_now = ws[i].e.hb.step;
		}
		if (progress) {
			snprintf(line, sizeof(line),
				 "waiting %d, armed %d, profiling %d, traced %d, summarized %d, "
				 "failed %d, missing %d (step %lld)",
				 counts[WS_NONE], counts[WS_ARMED], counts[WS_PROFILING],
				 counts[WS_TRACED], counts[WS_SUMMARIZED], counts[WS_FAILED],
				 counts[WS_MISSING], (long long)step_now);
			if (strcmp(line, last_line) || el - last_print >= 10) {
				fprintf(stderr, "perftracker: [%5.1fs] %s\n", el, line);
				snprintf(last_line, sizeof(last_line), "%s", line);
				last_print = el;
			}
		}
		/* Traces waiting for an agent that is not there: say so once. */
		if (el - last_agent_check >= 5) {
			last_agent_check = el;
			for (size_t i = 0; i < n; i++) {
				const char *h = ws[i].e.info.host;

				if (ws[i].state != WS_TRACED || ws[i].agent_warned ||
				    pt_control_agent_running(dir, h, now, 30))
					continue;
				warning("no agent runs for host '%s': start 'perftracker agent "
					"--control-dir %s' there", h, dir);
				for (size_t k = 0; k < n; k++)
					if (!strcmp(ws[k].e.info.host, h))
						ws[k].agent_warned = 1;
			}
		}
		if (done == n)
			break;
		if (interrupted) {
			warning("interrupted: reporting what was delivered");
			break;
		}
		if (now > t.deadline) {
			warning("timed out after %.0f s waiting for workers", el);
			break;
		}
		/* Big jobs: fewer status reads per second. */
		cli_sleep(n > 500 ? (double)n / 2000.0 : 0.25);
	}

	/* Done: workers stop looking at this trigger. */
	snprintf(t.state, sizeof(t.state), "%s", PT_TRIGGER_DONE);
	if (pt_control_trigger_write(dir, &t, &e))
		error_pt(&e);
	if (hung)
		goto out;

	/* Collect: summaries into <run>/summaries/, the rest named. */
	sums = x_calloc(n, sizeof(*sums));
	if (!sums)
		die("out of memory");
	for (size_t i = 0; i < n; i++) {
		wstate *w = &ws[i];
		char from[PT_CONTROL_PATH_MAX], to[PT_CONTROL_PATH_MAX + 400], name[PT_CONTROL_ID_MAX + 8];
		pt_summary *s = NULL;

		snprintf(name, sizeof(name), "%s.json", w->e.info.id);
		if (w->state == WS_SUMMARIZED &&
		    pt_control_record_path(from, sizeof(from), dir, "summaries", t.id, w->e.info.id) == 0) {
			snprintf(to, sizeof(to), "%s/summaries/%s", t.run_dir, name);
			if (copy_summary(from, to))
				warning("cannot copy '%s' to '%s'", from, to);
			s = pt_summary_read_file(from, &e);
			if (!s) {
				error_pt(&e);
				snprintf(w->why, sizeof(w->why), "unreadable summary");
			} else {
				ndelivered++;
			}
		}
		if (!s) {
			if (!w->why[0]) {
				switch (w->state) {
				case WS_NONE:
					snprintf(w->why, sizeof(w->why), "never saw the trigger "
						 "(last step %lld)", (long long)w->e.hb.step);
					break;
				case WS_ARMED:
					snprintf(w->why, sizeof(w->why), "never reached step %lld "
						 "(last step %lld): stuck or slow?",
						 (long long)t.start_step, (long long)w->e.hb.step);
					break;
				case WS_PROFILING:
					snprintf(w->why, sizeof(w->why), "profiling did not finish "
						 "(last step %lld)", (long long)w->e.hb.step);
					break;
				case WS_TRACED:
					snprintf(w->why, sizeof(w->why), "trace not summarised: is "
						 "'perftracker agent' running on '%s'?", w->e.info.host);
					break;
				default:
					snprintf(w->why, sizeof(w->why), "%s", state_name(w->state));
				}
			}
			nmissing++;
			s = pt_summary_failed(name, w->why);
			if (!s)
				die("out of memory");
		}
		sums[nsums++] = s;
	}
	if (nmissing) {
		warning("%zu of %zu worker%s never delivered:", nmissing, n, n == 1 ? "" : "s");
		for (size_t i = 0; i < n; i++)
			if (sums[i]->error)
				fprintf(stderr, "  %s (rank %lld on %s): %s\n", ws[i].e.info.id,
					(long long)ws[i].e.info.rank, ws[i].e.info.host, sums[i]->error);
	}
	if (!ndelivered) {
		error("no worker delivered a trace for trigger %s", t.id);
		goto out;
	}
	if (auto_analyze) {
		d.outdir = t.run_dir;
		if (cli_diag_run(&d, sums, nsums, add_trigger_key, &t))
			goto out;
		fprintf(stderr, "perftracker: report: %s/PerfDisplay/index.html\n", t.run_dir);
	} else {
		fprintf(stderr, "perftracker: %zu summaries in %s/summaries; analyse with "
			"'perftracker diagnose %s/summaries/*.json -o %s'\n", ndelivered, t.run_dir,
			t.run_dir, t.run_dir);
	}
	if (save_raw != PT_RAW_NONE)
		fprintf(stderr, "perftracker: raw traces: %s\n", t.raw_dir);
	rc = 0;
out:
	if (wrote_trigger) {
		if (strcmp(t.state, PT_TRIGGER_DONE)) {
			snprintf(t.state, sizeof(t.state), "%s", PT_TRIGGER_DONE);
			pt_control_trigger_write(dir, &t, NULL);
		}
		pt_control_remove_dir(dir, "status", t.id, NULL);
		pt_control_remove_dir(dir, "summaries", t.id, NULL);
	}
	if (locked)
		pt_control_unlock(lockpath, NULL);
	for (size_t i = 0; i < nsums; i++)
		pt_summary_free(sums[i]);
	x_free(sums);
	pt_sb_free(&sb);
	pt_control_trigger_clear(&t);
	x_free(ws);
	x_free(all);
	return rc;
}
