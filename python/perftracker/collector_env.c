/*
 * collector_env.c - what the collector is told at start, and how it reports
 * its own problems.  Collector() (in _collector.c) hands its arguments here:
 * directories, ranks, rates, the agent command, and PERFTRACKER_DEBUG /
 * PERFTRACKER_AUTO_AGENT from the environment become the configuration in
 * G before the background thread starts.  The log is here too: one line to
 * stderr, more only with PERFTRACKER_DEBUG=1.
 */
#include "collector_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int log_verbose;
static int log_count;

/* First message goes to stderr, later ones only with PERFTRACKER_DEBUG=1:
 * a broken control directory must not flood the training log. */
void plog(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n, first = __atomic_fetch_add(&log_count, 1, __ATOMIC_RELAXED) == 0;

	if (!first && !log_verbose)
		return;
	n = snprintf(buf, sizeof(buf), "perftracker: collector: ");
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 40)
		n = (int)sizeof(buf) - 40;
	if (first && !log_verbose)
		n += snprintf(buf + n, sizeof(buf) - (size_t)n, " (further errors not shown)");
	buf[n++] = '\n';
	if (write(2, buf, (size_t)n) < 0) {
		/* nothing left to report to */
	}
}

void dlog(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	if (!log_verbose)
		return;
	n = snprintf(buf, sizeof(buf), "perftracker: collector[%ld]: ", (long)getpid());
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(2, buf, (size_t)n) < 0) {
	}
}

/* A control-directory failure: logged once until an operation succeeds
 * again (the caller clears G.io_failing then), later ones with dlog. */
void io_error(const char *what, const pt_error *e)
{
	char buf[1024];

	if (!G.io_failing)
		plog("%s: %s", what, pt_error_format(e, buf, sizeof(buf)));
	else
		dlog("%s: %s", what, pt_error_format(e, buf, sizeof(buf)));
	G.io_failing = 1;
}

/* PERFTRACKER_DEBUG=1: every message, and the debug ones. */
void config_log(void)
{
	const char *dbg = getenv("PERFTRACKER_DEBUG");

	log_verbose = dbg && *dbg && strcmp(dbg, "0");
}

/* Collector(control_dir, spool_dir, rank, local_rank, world_size,
 *           local_world_size, hook, agent_argv, heartbeat_ms, poll_ms,
 *           trace_events, hang_s).  Never raises: bad arguments are logged. */
int config_parse(PyObject *args, PyObject *kw, config_args *a)
{
	static char *kwlist[] = { "control_dir", "spool_dir", "rank", "local_rank", "world_size",
				  "local_world_size", "hook", "agent_argv", "heartbeat_ms",
				  "poll_ms", "trace_events", "hang_s", NULL };

	memset(a, 0, sizeof(*a));
	a->world = 1;
	a->lworld = 1;
	a->events = 1 << 21;
	a->hb_ms = 1000;
	a->poll_ms = 250;
	a->hook = Py_None;
	a->agent = Py_None;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "|zzLLLLOOiiLd", kwlist, &a->dir, &a->spool,
					 &a->rank, &a->lrank, &a->world, &a->lworld, &a->hook,
					 &a->agent, &a->hb_ms, &a->poll_ms, &a->events, &a->hang_s)) {
		PyObject *t, *v, *tb;

		PyErr_Fetch(&t, &v, &tb);
		Py_XDECREF(t);
		Py_XDECREF(v);
		Py_XDECREF(tb);
		plog("bad arguments to Collector(), collector disabled");
		return -1;
	}
	return 0;
}

static char **argv_from_list(PyObject *lst)
{
	Py_ssize_t n;
	char **argv;

	if (!lst || lst == Py_None || !PyList_Check(lst))
		return NULL;
	n = PyList_GET_SIZE(lst);
	if (n == 0)
		return NULL;
	argv = calloc((size_t)n + 1, sizeof(char *));
	if (!argv)
		return NULL;
	for (Py_ssize_t i = 0; i < n; i++) {
		const char *s = PyUnicode_Check(PyList_GET_ITEM(lst, i))
					? PyUnicode_AsUTF8(PyList_GET_ITEM(lst, i)) : NULL;

		if (!s) {
			PyErr_Clear();
			for (Py_ssize_t j = 0; j < i; j++)
				free(argv[j]);
			free(argv);
			return NULL;
		}
		argv[i] = strdup(s);
	}
	return argv;
}

/* The configuration in G, from the arguments and PERFTRACKER_AUTO_AGENT
 * (GIL held, before the background thread starts).  -1: the collector
 * stays inert (logged). */
int config_load(const config_args *a)
{
	snprintf(G.dir, sizeof(G.dir), "%s", a->dir && *a->dir ? a->dir
							       : pt_control_default_dir());
	snprintf(G.spool, sizeof(G.spool), "%s", a->spool && *a->spool ? a->spool
								       : pt_control_default_spool());
	/* A control or spool directory another user could write through
	 * (docs/collector.md): one line, and the collector stays inert.  Other
	 * failures (not there yet, read-only for now) are retried and logged
	 * by the background thread. */
	{
		pt_error e;
		char buf[1024];

		pt_error_clear(&e);
		if (pt_control_mkdirs(G.dir, &e) == PT_EPERM ||
		    pt_control_mkdirs(G.spool, &e) == PT_EPERM) {
			plog("%s; collector disabled", pt_error_format(&e, buf, sizeof(buf)));
			G.quiet = 1;
			return -1;
		}
	}
	pt_control_hostname(G.host, sizeof(G.host));
	pt_control_nodename(G.node, sizeof(G.node));
	/* Our traces go to the job's own folder of the spool (the agent of
	 * another job sharing the spool never sees them: control/job.h). */
	{
		char root[PT_CONTROL_PATH_MAX];

		snprintf(root, sizeof(root), "%s", G.spool);
		if (pt_job_spool_dir(G.spool, sizeof(G.spool), root, G.dir, G.host))
			snprintf(G.spool, sizeof(G.spool), "%s", root);
	}
	G.pid = getpid();
	memset(&G.info, 0, sizeof(G.info));
	pt_control_worker_id(G.info.id, sizeof(G.info.id), G.host, a->rank, G.pid);
	snprintf(G.info.host, sizeof(G.info.host), "%s", G.host);
	snprintf(G.info.node, sizeof(G.info.node), "%s", G.node);
	G.info.rank = a->rank;
	G.info.local_rank = a->lrank;
	G.info.world_size = a->world;
	G.info.local_world_size = a->lworld;
	G.info.pid = G.pid;
	G.info.started = pt_control_now();
	G.heartbeat_ms = a->hb_ms > 10 ? a->hb_ms : 10;
	G.poll_ms = a->poll_ms > 10 ? a->poll_ms : 10;
	G.trace_events = a->events > 0 ? (size_t)a->events : 0;
	G.agent_argv = argv_from_list(a->agent);
	{
		const char *aa = getenv("PERFTRACKER_AUTO_AGENT");
		pt_error ne;

		G.agent_expected = !(aa && !strcmp(aa, "0"));
		pt_error_clear(&ne);
		if (pt_nodechan_path(G.ndir, sizeof(G.ndir), G.dir, G.host) ||
		    pt_nodechan_prepare(G.ndir, &ne)) {
			char buf[1024];

			dlog("no node channel (%s): talking to the control directory directly",
			     pt_error_format(&ne, buf, sizeof(buf)));
			G.ndir[0] = 0;
		}
	}
	return 0;
}

