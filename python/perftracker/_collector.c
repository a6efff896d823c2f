/*
 * _collector.c - the C extension perftracker._collector, first stage of the
 * online flow (docs/design.md): the collector inside every training process.
 * This file is the glue: the Collector type (__init__ configures and starts
 * the background and watchdog threads; step() is in collector_step.c), the
 * module functions shutdown() and info(), the tracer's test entry points,
 * and the process-wide state G.  collector_internal.h maps the other files.
 */
#include "collector_internal.h"
#include "util/clock.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct collector G = { .next_action = NO_ACTION, .mu = PTHREAD_MUTEX_INITIALIZER };

/* ---- the Python type -------------------------------------------------------- */

typedef struct {
	PyObject_HEAD
} CollectorObject;

static void atfork_child(void)
{
	/* A forked child (DataLoader worker) has no background thread and is
	 * not a worker: keep its step() inert. */
	G.quiet = 1;
	G.started = 0;
	G.next_action = NO_ACTION;
	pthread_mutex_init(&G.mu, NULL);
	/* No watchdog thread in the child; it must not dump as the parent. */
	wd_atfork_child();
	watch_atfork_child();
}

/* Collector(...) (arguments: collector_env.c).  Never raises: problems are
 * logged and the collector stays inert. */
static int Collector_init(PyObject *self, PyObject *args, PyObject *kw)
{
	config_args a;
	pthread_condattr_t ca;

	config_log();
	if (G.started)
		return 0;  /* one collector per process; later instances share it */
	if (config_parse(args, kw, &a) || config_load(&a))
		return 0;
	if (a.hook != Py_None) {
		Py_INCREF(a.hook);
		G.hook = a.hook;
	}
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&G.cond, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&G.thread, NULL, bg_main, NULL) != 0) {
		plog("cannot start the background thread: %s", strerror(errno));
		return 0;
	}
	pthread_detach(G.thread);
	pthread_atfork(NULL, NULL, atfork_child);
	G.started = 1;
	wd_start(a.hang_s);
	watch_start();
	dlog("worker %s, control %s, spool %s", G.info.id, G.dir, G.spool);
	return 0;
}

static PyMethodDef Collector_methods[] = {
	{ "step", Collector_step, METH_NOARGS, "Mark the end of one training iteration." },
	{ NULL, NULL, 0, NULL }
};

static PyTypeObject CollectorType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "perftracker._collector.Collector",
	.tp_basicsize = sizeof(CollectorObject),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.tp_doc = "The PerfTracker collector of one training process.",
	.tp_methods = Collector_methods,
	.tp_init = Collector_init,
	.tp_new = PyType_GenericNew,
};

/* ---- module functions --------------------------------------------------------- */

/* shutdown(timeout_s=0.5): stop the background thread and unregister. */
static PyObject *mod_shutdown(PyObject *m, PyObject *args)
{
	double timeout = 0.5;
	struct timespec dl;

	if (!PyArg_ParseTuple(args, "|d", &timeout))
		return NULL;
	if (!G.started || G.pid != getpid())
		Py_RETURN_NONE;
	Py_BEGIN_ALLOW_THREADS
	wd_stop();
	/* The GIL released: the watch thread may be waiting for it. */
	watch_stop();
	Py_END_ALLOW_THREADS
	if (tracer_active())
		tracer_stop();
	Py_BEGIN_ALLOW_THREADS
	pt_clock_mono_deadline(&dl, timeout);
	pthread_mutex_lock(&G.mu);
	G.stop = 1;
	pthread_cond_broadcast(&G.cond);
	while (!G.stopped)
		if (pthread_cond_timedwait(&G.cond, &G.mu, &dl) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&G.mu);
	Py_END_ALLOW_THREADS
	G.started = 0;
	__atomic_store_n(&G.next_action, NO_ACTION, __ATOMIC_RELEASE);
	Py_RETURN_NONE;
}

static const char *phase_name(int p)
{
	switch (p) {
	case W_ARMED: return PT_STATE_ARMED;
	case W_PROFILING: return PT_STATE_PROFILING;
	case W_EXPORT: return PT_STATE_EXPORTING;
	case W_FAILED: return PT_STATE_FAILED;
	default: return PT_STATE_IDLE;
	}
}

/* info(): the collector's state, for tests and `perftracker status`-like use. */
static PyObject *mod_info(PyObject *m, PyObject *unused)
{
	PyObject *d;

	pthread_mutex_lock(&G.mu);
	int mode = __atomic_load_n(&G.mode, __ATOMIC_RELAXED);

	d = Py_BuildValue("{s:L,s:s,s:s,s:s,s:s,s:i,s:i,s:s,s:L,s:i,s:L,s:d,s:s,s:s}", "step",
			  (long long)G.count, "id", G.info.id, "host", G.host, "control_dir", G.dir,
			  "spool_dir", G.spool, "started", G.started, "quiet", G.quiet, "state",
			  G.quiet ? PT_STATE_QUIET : phase_name(G.w.phase), "next_action",
			  (long long)G.next_action, "watchdog", wd_enabled(),
			  "stack_dumps", (long long)wd_dumps(),
			  "hang_threshold", wd_hang_threshold(), "mode",
			  mode == M_AGENT ? "agent" : mode == M_WAIT ? "wait" :
			  mode == M_FALLBACK ? "fallback" : "direct", "node_dir", G.ndir);
	pthread_mutex_unlock(&G.mu);
	return d;
}

/* Tracer entry points for the tests: _trace_start(capacity),
 * _trace_stop(path) writes the events as a JSON array (ts relative to the
 * start, pid 1, tid 1) and returns (written, dropped). */
static PyObject *mod_trace_start(PyObject *m, PyObject *args)
{
	long long cap = 1 << 16;

	if (!PyArg_ParseTuple(args, "|L", &cap))
		return NULL;
	if (tracer_active()) {
		PyErr_SetString(PyExc_RuntimeError, "tracer already active");
		return NULL;
	}
	if (tracer_alloc((size_t)(cap > 0 ? cap : 1)) || tracer_start()) {
		tracer_free();
		PyErr_SetString(PyExc_RuntimeError, "cannot start the tracer");
		return NULL;
	}
	Py_RETURN_NONE;
}

static PyObject *mod_trace_stop(PyObject *m, PyObject *args)
{
	const char *path;
	FILE *f;
	size_t n;
	unsigned long long dropped;

	if (!PyArg_ParseTuple(args, "s", &path))
		return NULL;
	if (!tracer_active()) {
		PyErr_SetString(PyExc_RuntimeError, "tracer not active");
		return NULL;
	}
	tracer_stop();
	f = fopen(path, "we");
	if (!f) {
		tracer_free();
		return PyErr_SetFromErrnoWithFilename(PyExc_OSError, path);
	}
	fputc('[', f);
	n = tracer_write(f, tracer_start_ns(), "1", "1", 1);
	fputs("]\n", f);
	fclose(f);
	dropped = tracer_dropped();
	tracer_free();
	return Py_BuildValue("(nK)", (Py_ssize_t)n, dropped);
}

/* _test_spin_gil(seconds): busy-wait in C for `seconds` WITHOUT releasing
 * the GIL.  Test-only: stands in for a C extension or a collective that
 * blocks while holding the GIL; the watchdog must still dump the stacks. */
static PyObject *mod_test_spin_gil(PyObject *m, PyObject *args)
{
	double secs = 0, end;
	volatile uint64_t spins = 0;

	if (!PyArg_ParseTuple(args, "d", &secs))
		return NULL;
	end = pt_control_now() + secs;
	while (pt_control_now() < end)
		spins++;
	return PyLong_FromUnsignedLongLong(spins);
}

/* The control directory a PerfTracker() without one uses: the job's own
 * (control/job.h), so that two jobs on one host never share one. */
static PyObject *mod_default_control_dir(PyObject *self, PyObject *unused)
{
	return PyUnicode_DecodeFSDefault(pt_control_default_dir());
}

static PyMethodDef module_methods[] = {
	{ "default_control_dir", mod_default_control_dir, METH_NOARGS,
	  "The default control directory of this process's job." },
	{ "_test_spin_gil", mod_test_spin_gil, METH_VARARGS,
	  "Busy-wait in C holding the GIL (tests only)." },
	{ "shutdown", mod_shutdown, METH_VARARGS, "Stop the collector and unregister." },
	{ "info", mod_info, METH_NOARGS, "The collector's state as a dict." },
	{ "_trace_start", mod_trace_start, METH_VARARGS, "Start the Python tracer (tests)." },
	{ "_trace_stop", mod_trace_stop, METH_VARARGS, "Stop the tracer, write its events (tests)." },
	{ NULL, NULL, 0, NULL }
};

static struct PyModuleDef module = {
	PyModuleDef_HEAD_INIT, "_collector",
	"PerfTracker collector: step counter, control-directory thread, Python tracer.", -1,
	module_methods, NULL, NULL, NULL, NULL
};

PyMODINIT_FUNC PyInit__collector(void)
{
	PyObject *m;

	if (PyType_Ready(&CollectorType) < 0)
		return NULL;
	m = PyModule_Create(&module);
	if (!m)
		return NULL;
	Py_INCREF(&CollectorType);
	if (PyModule_AddObject(m, "Collector", (PyObject *)&CollectorType) < 0) {
		Py_DECREF(&CollectorType);
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
