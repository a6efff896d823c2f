/*
 * agent.c - `perftracker agent`: run the node agent (src/agent) for one
 * control directory.  Started by local rank 0's collector when no agent
 * runs (with --detach), or by hand.  Sits between the workers of a node
 * (raw traces in the spool) and the master (summaries in the control dir).
 */
#include <stddef.h>

#include "cli.h"
#include "agent/agent.h"
#include "agent/autoprof.h"
#include "agent/watch.h"
#include "control/nodechan.h"
#include "util/spawn.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const cli_usage usage = {
	"agent",
	"perftracker agent [options]",
	"Summarise the raw traces the workers of this node drop in the spool, keep or\n"
	"delete them as the trigger says, and publish the summaries in the control\n"
	"directory (docs/collector.md).  One agent per node and control directory.\n",
	"The library loaded for GPU metrics is $PERFTRACKER_NVML, else libnvidia-ml.so.1\n"
	"(docs/hardware.md).\n",
};

static volatile int stop_flag;

static void log_line(void *ctx, const char *msg);

/* ---- automatic profiling on slowdown (src/agent/autoprof.h) ---------------- */

typedef struct autoctx {
	pt_autoprof *ap;
	const char *dir, *host, *outdir;
	char exe[PATH_MAX];
	volatile int stop;
	pthread_t th;
	int running;
} autoctx;

/* Start `perftracker --trigger-on --auto-analyze --reason R` (its text
 * report to /dev/null, its messages to our log). */
static pid_t start_trigger(autoctx *c, const char *reason)
{
	char *argv[] = { c->exe, "--trigger-on", "--auto-analyze", "--control-dir", (char *)c->dir,
			 "--output-dir", (char *)c->outdir, "--reason", (char *)reason,
			 "--no-progress", NULL };
	pt_spawn_opts o = PT_SPAWN_OPTS_INIT;
	pid_t pid = -1;

	o.out_path = "/dev/null";
	if (pt_spawn_start(argv, &o, &pid, NULL))
		pid = -1;
	return pid;
}

/* Once a second: read this host's heartbeats, decide, start the trigger. */
static void *auto_main(void *arg)
{
	autoctx *c = arg;
	pid_t child = -1;
	char reason[1024], msg[1200];
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	while (!c->stop && !stop_flag) {
		double now = pt_control_now();
		struct timespec ts = { 0, 100000000L };

		if (child > 0) {
			pt_spawn_status st;

			if (pt_spawn_poll(child, &st) == 1) {
				snprintf(msg, sizeof(msg), "auto-profile: trigger (pid %ld) %s %d",
					 (long)child, st.exited ? "exited with" : "killed by signal",
					 st.exited ? st.code : st.signal);
				log_line((void *)c->host, msg);
				child = -1;
			}
		}
		if (child < 0 && pt_autoprof_check(c->ap, c->dir, c->host, now, reason, sizeof(reason))) {
			log_line((void *)c->host, reason);
			child = start_trigger(c, reason);
			if (child < 0)
				log_line((void *)c->host, "auto-profile: cannot start the trigger");
			/* The cool-down runs from now, even if the trigger fails
			 * before writing trigger.json. */
			pt_autoprof_trigger_seen(c->ap, now);
		}
		for (int k = 0; k < 10 && !c->stop && !stop_flag; k++)
			nanosleep(&ts, NULL);
	}
	return NULL;
}

static int auto_start(autoctx *c, const char *argv0)
{
	ssize_t r = readlink("/proc/self/exe", c->exe, sizeof(c->exe) - 1);

	if (r > 0)
		c->exe[r] = 0;
	else
		snprintf(c->exe, sizeof(c->exe), "%s", argv0);
	if (pthread_create(&c->th, NULL, auto_main, c) != 0)
		return -1;
	c->running = 1;
	return 0;
}

static void auto_stop(autoctx *c)
{
	if (!c->running)
		return;
	c->stop = 1;
	pthread_join(c->th, NULL);
	c->running = 0;
}

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void log_line(void *ctx, const char *msg)
{
	const char *host = ctx;
	char ts[32];
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S", &tm);
	fprintf(stderr, "perftracker: agent %s [%s pid %ld]: %s\n", host, ts, (long)getpid(), msg);
	fflush(stderr);
}

/* --hw-interval-ms, --hw-slow-interval-ms: milliseconds into an int64_t of
 * nanoseconds. */
static int opt_ms(const pt_opt *o, const char *arg, void *target, pt_error *e)
{
	char *end;
	double ms = strtod(arg, &end);

	if (end == arg || *end || !(ms > 0) || ms > 3600e3)
		return pt_error_set(e, PT_EINVAL, -1,
				    "option '--%s' needs a number of milliseconds above 0, not '%s'",
				    o->long_name, arg);
	*(int64_t *)target = (int64_t)(ms * 1e6 + 0.5);
	return 0;
}

/* --hw-check [SEC]: seconds above 0, 1 when none is given. */
static int opt_check(const pt_opt *o, const char *arg, void *target, pt_error *e)
{
	char *end = NULL;
	double sec = arg ? strtod(arg, &end) : 1;

	if ((arg && (end == arg || *end)) || !(sec > 0))
		return pt_error_set(e, PT_EINVAL, -1,
				    "option '--%s' needs a number of seconds above 0, not '%s'",
				    o->long_name, arg);
	*(double *)target = sec;
	return 0;
}

/* --hw-check: sample this node like the agent does during a window. */
static int hw_check(pt_sampler_options *o, double seconds)
{
	pt_sampler *s;
	pt_samples h;
	pt_error e;
	struct timespec ts;
	int gpus = 0, nics = 0, ib = 0, cpus = 0;
	double fast = 0, slow = 0;
	size_t n = 0;

	s = pt_sampler_new(o, &e);
	if (!s)
		return error_pt(&e);
	pt_sampler_inventory(s, &gpus, &nics, &ib, &cpus);
	if (pt_sampler_start(s, &e) != PT_OK) {
		pt_sampler_free(s);
		return error_pt(&e);
	}
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
	pt_sampler_stop(s);
	pt_sampler_cost(s, &fast, &slow);
	if (pt_sampler_snapshot(s, &h) != PT_OK) {
		pt_sampler_free(s);
		return error("agent: out of memory");
	}
	printf("gpus (nvml): %s%d\n", gpus < 0 ? "none, " : "", gpus < 0 ? 0 : gpus);
	printf("network interfaces: %d, infiniband ports: %d, cpu lines: %d\n", nics, ib, cpus);
	printf("note: %s\n", h.note[0] ? h.note : "(nothing skipped)");
	for (size_t i = 0; i < h.n; i++) {
		const pt_series *se = &h.s[i];

		n += se->n;
		if (!strcmp(se->name, "cpu_util") && se->device >= 0)
			continue;
		printf("  %-14s %-12s %5d %7zu samples, last %g %s\n", se->name, se->label,
		       se->device, se->n, se->n ? se->v[se->n - 1] : 0.0, se->unit);
	}
	printf("%zu series, %zu samples in %.3g s; cost per sample: fast %.1f us (every %.3g ms), "
	       "slow %.1f us (every %.3g ms)\n", h.n, n, seconds, fast / 1e3,
	       (double)o->interval_ns / 1e6, slow / 1e3,
	       (double)(o->slow_interval_ns > o->interval_ns ? o->slow_interval_ns
							      : o->interval_ns) / 1e6);
	pt_samples_free(&h);
	pt_sampler_free(s);
	return 0;
}

/* --auto-profile: the thread that watches this host's workers (its
 * reports go to auto_out, $PERFTRACKER_OUTPUT_DIR or the default). */
static void auto_begin(autoctx *c, const pt_autoprof_options *apo, const pt_agent *a,
		       const char *auto_out, const char *argv0)
{
	char m[PT_CONTROL_PATH_MAX + 200];

	c->ap = pt_autoprof_new(apo);
	c->dir = a->dir;
	c->host = a->host;
	c->outdir = auto_out ? auto_out : getenv("PERFTRACKER_OUTPUT_DIR");
	if (!c->outdir || !*c->outdir)
		c->outdir = pt_control_default_output();
	if (!c->ap || auto_start(c, argv0)) {
		log_line((void *)a->host, "auto-profile: cannot start its thread");
		return;
	}
	snprintf(m, sizeof(m), "auto-profile: on (window %lld iterations, slowdown +%.0f%%, "
		 "cool-down %.0f s, output %s)", (long long)apo->window, apo->slowdown * 100,
		 apo->cooldown, c->outdir);
	log_line((void *)a->host, m);
}

/* SIGINT, SIGTERM, SIGHUP stop the agent's loop (stop_flag); a reader that
 * goes away is not a reason to die. */
static void catch_stop_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* --detach: the agent goes on in a grandchild, in a session of its own.
 * 1 in the caller (which exits 0), 0 in the agent, -1 when fork fails. */
static int daemonize(void)
{
	pid_t pid = fork();

	if (pid < 0)
		return error("agent: cannot fork: %m");
	if (pid > 0)
		return 1;
	setsid();
	/* The grandchild is the agent: it is nobody's child to reap. */
	pid = fork();
	if (pid < 0)
		_exit(1);
	if (pid > 0)
		_exit(0);
	if (chdir("/") != 0) {
		/* stay where we are */
	}
	return 0;
}

/* The agent proper, once its folders exist: take the host's lock, then
 * handle what is there (--once) or run until a stop signal, profiling by
 * itself when apo is not NULL.  Frees a.  The command's exit value. */
/* The watch and /metrics (src/agent/watch.h): the port from
 * --metrics-port, else $PERFTRACKER_METRICS_PORT, else the default. */
static pt_agent_watch *watch_begin(const pt_agent *a, int port, const char *addr)
{
	pt_agent_watch_options o;
	const char *env = getenv("PERFTRACKER_METRICS_PORT");
	const char *slash = strrchr(a->dir, '/');
	pt_error e;
	pt_agent_watch *w;

	memset(&o, 0, sizeof(o));
	o.dir = a->dir;
	o.ndir = a->ndir;
	o.host = a->host;
	/* the job's name: its control directory's (jobs/<job id>) */
	o.job = slash && slash[1] ? slash + 1 : a->dir;
	o.addr = addr ? addr : getenv("PERFTRACKER_METRICS_ADDR");
	o.port = port >= 0 ? port : env && *env ? atoi(env) : -1;
	o.interval_s = 1;
	o.log = log_line;
	o.log_ctx = (void *)a->host;
	pt_error_clear(&e);
	w = pt_agent_watch_start(&o, &e);
	if (!w)
		log_line((void *)a->host, e.msg);
	return w;
}

static int serve(pt_agent *a, int detach, int once, const pt_autoprof_options *apo,
		 const char *auto_out, const char *argv0, int mport, const char *maddr)
{
	pt_agent_watch *watch = NULL;
	autoctx ac;
	pt_error e;
	int rc;

	memset(&ac, 0, sizeof(ac));
	pt_error_clear(&e);
	rc = pt_agent_lock(a, &e);
	if (rc == 1) {
		if (!detach)
			error("agent: an agent for host '%s' already runs on '%s' (see '%s/agents/%s.lock')",
			      a->host, a->dir, a->dir, a->host);
		pt_agent_free(a);
		return detach ? 0 : -1;
	}
	if (rc) {
		error_pt(&e);
		pt_agent_free(a);
		return -1;
	}
	catch_stop_signals();
	if (!once)
		log_line(a->host, "started");
	if (once) {
		rc = pt_agent_poll(a, &e);
		if (rc < 0)
			error_pt(&e);
		rc = rc < 0 ? -1 : 0;
	} else {
		if (a->ndir[0])
			watch = watch_begin(a, mport, maddr);
		if (apo)
			auto_begin(&ac, apo, a, auto_out, argv0);
		rc = pt_agent_run(a, &stop_flag, &e) ? -1 : 0;
		auto_stop(&ac);
		pt_agent_watch_stop(watch);
		pt_autoprof_free(ac.ap);
		log_line(a->host, "stopped");
	}
	pt_agent_free(a);
	return rc;
}

int cmd_agent(int argc, char **argv)
{
	const char *dir = NULL, *spool = NULL, *host = NULL;
	int detach = 0, once = 0, rc = 0, no_hw = 0, print_spool = 0;
	double idle = 0, poll = 0, check = 0;
	int64_t hw_ms = 0, hw_slow_ms = 0;
	double hw_budget = -1;
	long jobs = 0;
	int auto_on = 0, nsys_hz = 0;
	long mport = -1;
	const char *auto_out = NULL, *maddr = NULL;
	pt_autoprof_options apo;
	pt_agent a;
	pt_error e;
	int npos;
	const pt_opt opts[] = {
		CLI_OPT_CONTROL_DIR(&dir),
		PT_OPT_STRING(0, "spool-dir", PT_TO(&spool), "DIR",
			      "node-local spool ($PERFTRACKER_SPOOL_DIR, /tmp/perftracker/spool)"),
		PT_OPT_STRING(0, "host", PT_TO(&host), "NAME",
			      "host name of this node ($PERFTRACKER_HOST, gethostname())"),
		PT_OPT_FLAG(0, "detach", PT_TO(&detach), "run in the background (exits 0 at once)"),
		PT_OPT_DOUBLE(0, "exit-when-idle", PT_TO(&idle), "SEC",
			      "exit after SEC seconds without a live worker here (0: never)"),
		PT_OPT_FLAG(0, "once", PT_TO(&once), "handle what is there now and exit"),
		PT_OPT_FLAG(0, "print-spool-dir", PT_TO(&print_spool),
			    "print this job's folder of the spool (where its raw traces\n"
			    "go: <spool>/<host>-<16 hex>) and exit"),
		PT_OPT_INT('j', "jobs", PT_TO(&jobs), "N", "traces summarised in parallel (min(4, CPUs))"),
		PT_OPT_DOUBLE(0, "poll", PT_TO(&poll), "SEC",
			      "stat trigger.json every SEC (1; the spool and the\n"
			      "node channel every min(SEC, 0.2))"),
		PT_OPT_CALLBACK(0, "hw-interval-ms", PT_TO(&hw_ms), "MS", opt_ms, 0,
				"hardware sampling interval: NVLink, NIC, InfiniBand (1)"),
		PT_OPT_CALLBACK(0, "hw-slow-interval-ms", PT_TO(&hw_slow_ms), "MS", opt_ms, 0,
				"GPU utilisation, clocks, power, PCIe, CPU, memory (100)"),
		PT_OPT_FLAG(0, "no-hw", PT_TO(&no_hw),
			    "no hardware sampling (nor nsys capture) during the window"),
		PT_OPT_DOUBLE(0, "hw-cpu-budget", PT_TO(&hw_budget), "F",
			      "share of one core a sampling thread may use (0.2; 0: no limit)"),
		CLI_OPT_NSYS_HZ(&nsys_hz, "capture GPU metrics with nsys at HZ (10000) during every\n"
				"window, not only when the trigger asks (needs nsys on PATH)"),
		PT_OPT_FLAG(0, "auto-profile", PT_TO(&auto_on),
			    "profile by itself when a worker here slows down (docs/hang.md)"),
		PT_OPT_INT(0, "auto-window", PT_TO(&apo.window), "N",
			   "iterations per window compared (50)"),
		PT_OPT_DOUBLE(0, "auto-slowdown", PT_TO(&apo.slowdown), "F",
			      "profile when the last window is slower than the best by F (0.3)"),
		PT_OPT_DOUBLE(0, "auto-cooldown", PT_TO(&apo.cooldown), "SEC",
			      "at most one trigger per SEC, any trigger counts (600)"),
		PT_OPT_DOUBLE(0, "auto-watch-defer", PT_TO(&apo.watch_defer), "SEC",
			      "where the watch reads collectives, a slowdown with no\n"
			      "straggler named waits SEC for one before profiling (30)"),
		PT_OPT_STRING(0, "auto-output-dir", PT_TO(&auto_out), "DIR",
			      "where its reports go ($PERFTRACKER_OUTPUT_DIR, /tmp/perftracker/output)"),
		PT_OPT_INT(0, "metrics-port", PT_TO(&mport), "PORT",
			   "serve the watch's OpenMetrics on PORT, 0: not at all\n"
			   "($PERFTRACKER_METRICS_PORT, 9464 or the next free one)"),
		PT_OPT_STRING(0, "metrics-addr", PT_TO(&maddr), "ADDR",
			      "address /metrics listens on ($PERFTRACKER_METRICS_ADDR,\n"
			      "127.0.0.1; a cluster's Prometheus needs the node's)"),
		PT_OPT_CALLBACK(0, "hw-check", PT_TO(&check), "SEC", opt_check, PT_OPT_OPTARG,
				"sample this node for SEC seconds (1), print what was\n"
				"found, the note and the cost per sample, and exit"),
		PT_OPT_END(),
	};

	pt_autoprof_options_default(&apo);
	npos = cli_parse_options(&usage, opts, argc, argv);
	if (npos < 0)
		return npos == CLI_HELP ? 0 : -1;
	if (npos > 0)
		return cli_usage_unexpected(&usage, argv[1]);
	pt_agent_init(&a, dir, spool, host);
	if (print_spool) {
		printf("%s\n", a.spool);
		pt_agent_free(&a);
		return 0;
	}
	/* --once handles traces whose windows are over: nothing to sample. */
	a.hw_off = no_hw || once;
	if (hw_ms)
		a.hw_opt.interval_ns = hw_ms;
	if (hw_slow_ms)
		a.hw_opt.slow_interval_ns = hw_slow_ms;
	if (hw_budget >= 0)
		a.hw_opt.cpu_budget = hw_budget;
	a.nsys_hz = nsys_hz;
	if (check > 0) {
		a.hw_opt.host = a.host;
		rc = hw_check(&a.hw_opt, check);
		pt_agent_free(&a);
		return rc;
	}
	/* --poll is how often the agent looks at trigger.json on the shared
	 * directory (what each poll did before the node channel); the local
	 * work (spool, node channel) runs at least every 0.2 s. */
	if (poll > 0) {
		a.trigger_poll_s = poll;
		a.poll_s = poll < a.poll_s ? poll : a.poll_s;
	}
	a.idle_exit_s = idle;
	if (jobs > 0)
		a.jobs = jobs;
	a.log = log_line;
	a.log_ctx = a.host;
	pt_error_clear(&e);
	/* The spool as given first, so that a refusal names it; then the
	 * job's folder in it. */
	if (pt_control_mkdirs(a.dir, &e) != PT_OK || pt_control_mkdirs(a.spool_root, &e) != PT_OK ||
	    pt_control_mkdirs(a.spool, &e) != PT_OK) {
		error_pt(&e);
		return -1;
	}
	if (detach && (rc = daemonize()) != 0)
		return rc < 0 ? rc : 0;
	return serve(&a, detach, once, auto_on ? &apo : NULL, auto_out, argv[0], mport, maddr);
}
