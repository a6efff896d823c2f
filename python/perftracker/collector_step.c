/*
 * collector_step.c - the training thread's side: step() counts iterations
 * with one increment and one compare against the armed step (next_action,
 * set by the background thread when it arms a window).  At that step it
 * starts torch.profiler through the Python layer (_window.py) and the C
 * tracer, advances the profiler each step, and at the window's end stops
 * it and hands the export to the background thread (W_EXPORT).  Any
 * Python error makes the collector quiet, never the training fail.
 */
#include "collector_internal.h"

#include <string.h>

static void go_quiet(const char *what)
{
	PyObject *type, *value, *tb, *s = NULL;
	const char *msg = "unknown error";

	PyErr_Fetch(&type, &value, &tb);
	if (value)
		s = PyObject_Str(value);
	if (s && PyUnicode_Check(s))
		msg = PyUnicode_AsUTF8(s);
	if (!msg) {
		PyErr_Clear();
		msg = "unknown error";
	}
	plog("%s failed, collector disabled: %s: %s", what,
	     type ? ((PyTypeObject *)type)->tp_name : "error", msg);
	pthread_mutex_lock(&G.mu);
	G.quiet = 1;
	snprintf(G.w.error, sizeof(G.w.error), "%s failed: %s", what, msg);
	if (G.w.phase != W_IDLE) {
		G.w.phase = W_FAILED;
		G.w.status_dirty = 1;
	}
	pthread_cond_signal(&G.cond);
	pthread_mutex_unlock(&G.mu);
	Py_XDECREF(s);
	Py_XDECREF(type);
	Py_XDECREF(value);
	Py_XDECREF(tb);
	__atomic_store_n(&G.next_action, NO_ACTION, __ATOMIC_RELEASE);
	if (G.hook) {
		PyObject *r = PyObject_CallMethod(G.hook, "abort", NULL);

		Py_XDECREF(r);
		PyErr_Clear();
	}
}

static int64_t as_i64(PyObject *t, Py_ssize_t i, int64_t def)
{
	PyObject *v = PyTuple_Check(t) && PyTuple_GET_SIZE(t) > i ? PyTuple_GET_ITEM(t, i) : NULL;
	long long x;

	if (!v || v == Py_None)
		return def;
	x = PyLong_AsLongLong(v);
	if (x == -1 && PyErr_Occurred()) {
		PyErr_Clear();
		return def;
	}
	return x;
}

static void as_str(PyObject *t, Py_ssize_t i, char *out, size_t cap)
{
	PyObject *v = PyTuple_Check(t) && PyTuple_GET_SIZE(t) > i ? PyTuple_GET_ITEM(t, i) : NULL;
	const char *s;

	out[0] = 0;
	if (!v || !PyUnicode_Check(v))
		return;
	s = PyUnicode_AsUTF8(v);
	if (!s) {
		PyErr_Clear();
		return;
	}
	snprintf(out, cap, "%s", s);
}

/* Item i of t as a malloc'd copy (NULL when absent, empty or not a str;
 * the caller frees it). */
static char *dup_str(PyObject *t, Py_ssize_t i)
{
	PyObject *v = PyTuple_Check(t) && PyTuple_GET_SIZE(t) > i ? PyTuple_GET_ITEM(t, i) : NULL;
	const char *s;

	if (!v || !PyUnicode_Check(v))
		return NULL;
	s = PyUnicode_AsUTF8(v);
	if (!s) {
		PyErr_Clear();
		return NULL;
	}
	return s[0] ? strdup(s) : NULL;
}

/* _window.step(c) with the C tracer paused: close the open step span,
 * open ProfilerStep#c.  0 on a Python error (left set). */
static int advance_span(int64_t c)
{
	PyObject *r;

	tracer_pause(1);
	r = PyObject_CallMethod(G.hook, "step", "L", (long long)c);
	tracer_pause(0);
	Py_XDECREF(r);
	return r != NULL;
}

/* The step count reached next_action: start, advance or end the window.
 * GIL held; no lock held while Python runs. */
static void on_action(int64_t c)
{
	int phase, use_tracer, want_c, abort_now;
	int64_t start, end;
	char path[PT_CONTROL_PATH_MAX];
	PyObject *r;

	if (!G.hook || G.quiet) {
		__atomic_store_n(&G.next_action, NO_ACTION, __ATOMIC_RELEASE);
		return;
	}
	pthread_mutex_lock(&G.mu);
	phase = G.w.phase;
	start = G.w.start;
	end = G.w.actual_start + G.w.steps;
	use_tracer = G.w.use_tracer;
	abort_now = G.w.abort;
	snprintf(path, sizeof(path), "%s", G.w.torch_path);
	pthread_mutex_unlock(&G.mu);

	if (phase == W_ARMED) {
		if (c < start) {
			__atomic_store_n(&G.next_action, start, __ATOMIC_RELEASE);
			return;
		}
		r = PyObject_CallMethod(G.hook, "start", "Ls", (long long)c, path);
		if (!r) {
			go_quiet("starting torch.profiler");
			return;
		}
		want_c = PyObject_IsTrue(r) == 1;
		use_tracer = use_tracer && want_c;
		Py_DECREF(r);
		PyErr_Clear();
		pthread_mutex_lock(&G.mu);
		if (G.w.phase != W_ARMED) {
			/* Disarmed meanwhile (deadline passed): undo. */
			pthread_mutex_unlock(&G.mu);
			r = PyObject_CallMethod(G.hook, "abort", NULL);
			Py_XDECREF(r);
			PyErr_Clear();
			return;
		}
		G.w.actual_start = c;
		G.w.use_tracer = use_tracer;
		G.w.phase = W_PROFILING;
		G.w.status_dirty = 1;
		pthread_cond_signal(&G.cond);
		pthread_mutex_unlock(&G.mu);
		/* Outside the lock: walking the frames may run the GC.  The
		 * background thread leaves T alone while the phase is PROFILING. */
		if (use_tracer && tracer_start() != 0) {
			pthread_mutex_lock(&G.mu);
			G.w.use_tracer = 0;
			pthread_mutex_unlock(&G.mu);
		}
		/* With the C tracer, start() left the first step span to us:
		 * opened once the tracer runs, so the frames it found active
		 * enclose every step span (paused: not a traced call). */
		if (want_c && !advance_span(c)) {
			tracer_stop();
			go_quiet("advancing torch.profiler");
			return;
		}
		__atomic_store_n(&G.next_action, c + 1, __ATOMIC_RELEASE);
		return;
	}
	if (phase != W_PROFILING) {
		__atomic_store_n(&G.next_action, NO_ACTION, __ATOMIC_RELEASE);
		return;
	}
	if (abort_now) {
		/* Re-armed for other steps: this window is not the round's. */
		tracer_stop();
		__atomic_store_n(&G.next_action, NO_ACTION, __ATOMIC_RELEASE);
		r = PyObject_CallMethod(G.hook, "abort", NULL);
		Py_XDECREF(r);
		PyErr_Clear();
		pthread_mutex_lock(&G.mu);
		G.w.phase = W_IDLE;
		G.w.abort = 0;
		if (path[0])
			unlink(path);
		__atomic_store_n(&G.repoll, 1, __ATOMIC_RELEASE);
		pthread_cond_signal(&G.cond);
		pthread_mutex_unlock(&G.mu);
		return;
	}
	if (c < end) {
		if (!advance_span(c)) {
			tracer_stop();
			go_quiet("advancing torch.profiler");
			return;
		}
		__atomic_store_n(&G.next_action, c + 1, __ATOMIC_RELEASE);
		return;
	}
	/* End of the window.  The last step span closes before the C tracer
	 * stops, so that the frames still open enclose it. */
	if (tracer_active()) {
		tracer_pause(1);
		r = PyObject_CallMethod(G.hook, "close", NULL);
		tracer_pause(0);
		if (!r) {
			tracer_stop();
			go_quiet("exporting the torch.profiler trace");
			return;
		}
		Py_DECREF(r);
	}
	tracer_stop();
	__atomic_store_n(&G.next_action, NO_ACTION, __ATOMIC_RELEASE);
	r = PyObject_CallMethod(G.hook, "stop", "Ls", (long long)c, path);
	if (!r) {
		go_quiet("exporting the torch.profiler trace");
		return;
	}
	pthread_mutex_lock(&G.mu);
	G.w.end = c;
	/* (legacy, trace_start_ns, pid_token, tid_token, backend, rank, world, torch,
	 *  collectives) */
	G.w.legacy = (int)as_i64(r, 0, 0);
	G.w.trace_start_ns = as_i64(r, 1, 0);
	as_str(r, 2, G.w.pid_tok, sizeof(G.w.pid_tok));
	as_str(r, 3, G.w.tid_tok, sizeof(G.w.tid_tok));
	as_str(r, 4, G.w.backend, sizeof(G.w.backend));
	G.w.rank = as_i64(r, 5, G.info.rank);
	G.w.world = as_i64(r, 6, G.info.world_size);
	as_str(r, 7, G.w.torch_version, sizeof(G.w.torch_version));
	G.w.colls = dup_str(r, 8);
	if (!G.w.pid_tok[0])
		snprintf(G.w.pid_tok, sizeof(G.w.pid_tok), "%ld", (long)G.pid);
	if (!G.w.tid_tok[0])
		snprintf(G.w.tid_tok, sizeof(G.w.tid_tok), "1");
	G.w.phase = W_EXPORT;
	pthread_cond_signal(&G.cond);
	pthread_mutex_unlock(&G.mu);
	Py_DECREF(r);
	PyErr_Clear();
}

/* The whole step path (bench/bench_step.py measures it): one increment and
 * one compare against the armed step.  G has hidden visibility, so both are
 * PC-relative loads with no GOT indirection, the same instructions as when
 * the collector was one file; on_action, the rare path, stays static here. */
PyObject *Collector_step(PyObject *self, PyObject *unused)
{
	int64_t c = G.count + 1;

	/* The watch's stamp (collector_watch.c), before the count that
	 * publishes it: one vDSO clock read (bench/bench_step.py). */
	if (G.watch_on) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		__atomic_store_n(&G.step_us[c & (WATCH_STEPS - 1)],
				 (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&G.count, c, __ATOMIC_RELEASE);
	if (__builtin_expect(c >= __atomic_load_n(&G.next_action, __ATOMIC_ACQUIRE), 0))
		on_action(c);
	Py_RETURN_NONE;
}
