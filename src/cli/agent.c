/*
 * agent.c - `perftracker agent`: run the node agent (src/agent) for one
 * control directory.  Started by local rank 0's collector when no agent
 * runs (with --detach), or by hand.  Sits between the workers of a node
 * (raw traces in the spool) and the master (summaries in the control dir).
 */
#include <stddef.h>

#include "cli.h"
#include "agent/agent.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char usage_text[] =
	"usage: perftracker agent [options]\n"
	"\n"
	"Summarise the raw traces the workers of this node drop in the spool, keep or\n"
	"delete them as the trigger says, and publish the summaries in the control\n"
	"directory (docs/collector.md).  One agent per node and control directory.\n"
	"\n"
	"options:\n"
	"  --control-dir DIR       control directory ($PERFTRACKER_CONTROL_DIR, /tmp/perftracker/control)\n"
	"  --spool-dir DIR         node-local spool ($PERFTRACKER_SPOOL_DIR, /tmp/perftracker/spool)\n"
	"  --host NAME             host name of this node ($PERFTRACKER_HOST, gethostname())\n"
	"  --detach                run in the background (exits 0 at once)\n"
	"  --exit-when-idle SEC    exit after SEC seconds without a live worker here (0: never)\n"
	"  --once                  handle what is there now and exit\n"
	"  -j, --jobs N            traces summarised in parallel (min(4, CPUs))\n"
	"  --poll SEC              poll interval (0.2)\n"
	"  -h, --help              show this help\n";

static volatile int stop_flag;

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

static const char *value(int argc, char **argv, int *i)
{
	const char *a = argv[*i], *eq = strchr(a, '=');

	if (eq && a[0] == '-' && a[1] == '-')
		return eq + 1;
	if (*i + 1 >= argc)
		die("option '%s' needs a value", a);
	return argv[++*i];
}

static int is(const char *a, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(a, name, n) && (a[n] == 0 || a[n] == '=');
}

int cmd_agent(int argc, char **argv)
{
	const char *dir = NULL, *spool = NULL, *host = NULL;
	int detach = 0, once = 0, rc = 0;
	double idle = 0, poll = 0.2;
	long jobs = 0;
	pt_agent a;
	pt_error e;
	struct sigaction sa;

	for (int i = 1; i < argc; i++) {
		const char *o = argv[i];

		if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
			fputs(usage_text, stdout);
			return 0;
		} else if (is(o, "--control-dir")) {
			dir = value(argc, argv, &i);
		} else if (is(o, "--spool-dir")) {
			spool = value(argc, argv, &i);
		} else if (is(o, "--host")) {
			host = value(argc, argv, &i);
		} else if (!strcmp(o, "--detach")) {
			detach = 1;
		} else if (!strcmp(o, "--once")) {
			once = 1;
		} else if (is(o, "--exit-when-idle")) {
			idle = opt_double("--exit-when-idle", value(argc, argv, &i));
		} else if (is(o, "--poll")) {
			poll = opt_double("--poll", value(argc, argv, &i));
		} else if (is(o, "--jobs") || !strcmp(o, "-j")) {
			jobs = opt_long("--jobs", value(argc, argv, &i));
		} else {
			error("agent: unknown option '%s'", o);
			fputs(usage_text, stderr);
			return -1;
		}
	}
	pt_agent_init(&a, dir, spool, host);
	if (poll > 0)
		a.poll_s = poll;
	a.idle_exit_s = idle;
	if (jobs > 0)
		a.jobs = jobs;
	a.log = log_line;
	a.log_ctx = a.host;
	if (pt_control_mkdirs(a.dir, NULL) != PT_OK) {
		error("agent: cannot create the control directory '%s'", a.dir);
		return -1;
	}
	if (detach) {
		pid_t pid = fork();

		if (pid < 0)
			return error("agent: cannot fork: %m");
		if (pid > 0)
			return 0;
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
	}
	pt_error_clear(&e);
	rc = pt_agent_lock(&a, &e);
	if (rc == 1) {
		if (!detach)
			error("agent: an agent for host '%s' already runs on '%s' (see '%s/agents/%s.lock')",
			      a.host, a.dir, a.dir, a.host);
		pt_agent_free(&a);
		return detach ? 0 : -1;
	}
	if (rc) {
		error_pt(&e);
		pt_agent_free(&a);
		return -1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (!once)
		log_line(a.host, "started");
	if (once) {
		rc = pt_agent_poll(&a, &e);
		if (rc < 0)
			error_pt(&e);
		rc = rc < 0 ? -1 : 0;
	} else {
		rc = pt_agent_run(&a, &stop_flag, &e) ? -1 : 0;
		log_line(a.host, "stopped");
	}
	pt_agent_free(&a);
	return rc;
}
