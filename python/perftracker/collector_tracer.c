/*
 * collector_tracer.c - the C Python-function tracer: where torch cannot
 * record Python functions (no Kineto), step() starts it with the window
 * (collector_step.c) and stops it at the window's end; the background
 * thread then pairs its calls and returns into "python_function" events
 * (tracer_write) inside the raw trace (collector_export.c).  The callback
 * costs one clock read and a 16-byte store per event; names are built once
 * per code object, with the GIL, on first sight.
 */
#include "collector_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/clock.h"
#include "util/hash.h"
#include "util/strbuf.h"

/* One call or return, 16 bytes.  Returns carry no key: setprofile delivers
 * calls and returns strictly nested per thread, so the conversion pairs them
 * with a stack and only needs to know whether a return is Python or C. */
typedef struct tev {
	int64_t ts;
	uint32_t key;
	uint32_t what;
} tev;

enum { EV_CALL = 0, EV_RET_PY = 1, EV_RET_C = 2 };

typedef struct tkey {
	const void *a, *b;  /* code object, or (PyMethodDef, self type) */
	char *name;
	int is_c;
} tkey;

static struct tracer {
	tev *ev;
	size_t n, cap;
	uint64_t dropped;
	int64_t drop_depth;  /* nesting of calls dropped because the buffer was full */
	int full;
	int active, paused;
	tkey *keys;          /* keys[0] unused */
	uint32_t nkeys, keycap;
	pt_hmap map;         /* hash_ptrs(a, b) -> key */
	PyObject **refs;     /* code objects held for the window */
	size_t nrefs, refcap;
	int64_t start_ns, stop_ns;
	uint32_t *stack0;    /* frames active at start, outermost first */
	size_t nstack0;
	int oom;
} T;

static uint32_t hash_ptrs(const void *a, const void *b)
{
	uint64_t x = (uint64_t)(uintptr_t)a * 0x9E3779B97F4A7C15ull ^
		     (uint64_t)(uintptr_t)b * 0xC2B2AE3D27D4EB4Full;

	return (uint32_t)(x >> 32) ^ (uint32_t)x;
}

/* Intern (a, b); name is only built (with the GIL held) on first sight.
 * Returns 0 when out of memory (the event is dropped). */
static uint32_t intern(const void *a, const void *b, PyObject *obj, int is_c)
{
	uint32_t h = hash_ptrs(a, b), k;
	size_t it = 0;
	char *name = NULL;

	while ((k = pt_hmap_next(&T.map, h, &it)) != PT_HMAP_NONE)
		if (T.keys[k].a == a && T.keys[k].b == b)
			return k;
	if (T.nkeys >= T.keycap) {
		uint32_t nc = T.keycap ? T.keycap * 2 : 1024;
		tkey *nk = realloc(T.keys, nc * sizeof(tkey));

		if (!nk)
			return 0;
		T.keys = nk;
		T.keycap = nc;
		if (T.nkeys == 0)
			T.nkeys = 1;
	}
	if (!is_c) {
		PyCodeObject *co = (PyCodeObject *)obj;
		const char *file = PyUnicode_AsUTF8(co->co_filename);
		const char *fn = PyUnicode_AsUTF8(co->co_name);
		size_t len;

		if (!file || !fn) {
			PyErr_Clear();
			file = file ? file : "?";
			fn = fn ? fn : "?";
		}
		/* torch's Python tracer writes "file.py(123): func" */
		len = strlen(file) + strlen(fn) + 32;
		name = malloc(len);
		if (name)
			snprintf(name, len, "%s(%d): %s", file, co->co_firstlineno, fn);
		if (T.nrefs >= T.refcap) {
			size_t nc = T.refcap ? T.refcap * 2 : 1024;
			PyObject **nr = realloc(T.refs, nc * sizeof(PyObject *));

			if (!nr) {
				free(name);
				return 0;
			}
			T.refs = nr;
			T.refcap = nc;
		}
		Py_INCREF(obj);
		T.refs[T.nrefs++] = obj;
	} else {
		PyCFunctionObject *f = (PyCFunctionObject *)obj;
		const char *mn = f->m_ml && f->m_ml->ml_name ? f->m_ml->ml_name : "?";
		size_t len;

		/* What repr() of the builtin says, with the address normalised
		 * the way the trace reader normalises it ("at 0x>"). */
		if (!b) {
			len = strlen(mn) + 32;
			name = malloc(len);
			if (name)
				snprintf(name, len, "<built-in function %s>", mn);
		} else {
			const char *tn = ((PyTypeObject *)b)->tp_name;
			const char *dot = strrchr(tn, '.');

			tn = dot ? dot + 1 : tn;
			len = strlen(mn) + strlen(tn) + 64;
			name = malloc(len);
			if (name)
				snprintf(name, len, "<built-in method %s of %s object at 0x>", mn, tn);
		}
	}
	if (!name || pt_hmap_put(&T.map, h, T.nkeys)) {
		free(name);
		return 0;
	}
	k = T.nkeys++;
	T.keys[k].a = a;
	T.keys[k].b = b;
	T.keys[k].name = name;
	T.keys[k].is_c = is_c;
	return k;
}

static uint32_t key_code(PyCodeObject *co)
{
	return intern(co, NULL, (PyObject *)co, 0);
}

static uint32_t key_cfunc(PyObject *arg)
{
	PyCFunctionObject *f;
	PyObject *self;
	const void *tp;

	if (!PyCFunction_Check(arg))
		return 0;
	f = (PyCFunctionObject *)arg;
	self = f->m_self;
	tp = (!self || PyModule_Check(self)) ? NULL : (const void *)Py_TYPE(self);
	return intern(f->m_ml, tp, arg, 1);
}

static inline void put(int64_t ts, uint32_t key, uint32_t what)
{
	tev *e = &T.ev[T.n++];

	e->ts = ts;
	e->key = key;
	e->what = what;
}

/* Room kept for returns of frames opened before the buffer filled. */
#define TRACE_RESERVE 4096

static int trace_cb(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
	int64_t ts;
	uint32_t key = 0;

	if (T.paused)
		return 0;
	ts = pt_clock_wall_ns();
	switch (what) {
	case PyTrace_CALL:
	case PyTrace_C_CALL:
		if (T.full || T.n + TRACE_RESERVE >= T.cap) {
			T.full = 1;
			T.drop_depth++;
			T.dropped++;
			return 0;
		}
		if (what == PyTrace_CALL) {
			PyCodeObject *co = PyFrame_GetCode(frame);

			key = key_code(co);
			Py_DECREF(co);
		} else {
			key = key_cfunc(arg);
		}
		if (!key) {
			/* Not a PyCFunction, or out of memory: keep nesting right. */
			T.full = T.full || T.oom;
			T.drop_depth++;
			T.dropped++;
			return 0;
		}
		put(ts, key, EV_CALL);
		return 0;
	case PyTrace_RETURN:
	case PyTrace_C_RETURN:
	case PyTrace_C_EXCEPTION:
		if (T.drop_depth > 0) {
			T.drop_depth--;
			return 0;
		}
		if (T.n < T.cap)
			put(ts, 0, what == PyTrace_RETURN ? EV_RET_PY : EV_RET_C);
		else
			T.dropped++;
		return 0;
	default:
		return 0;
	}
}

void tracer_free(void)
{
	for (uint32_t k = 1; k < T.nkeys; k++)
		free(T.keys[k].name);
	free(T.keys);
	pt_hmap_free(&T.map);
	free(T.ev);
	free(T.stack0);
	free(T.refs);  /* references were dropped in tracer_stop */
	memset(&T, 0, sizeof(T));
}

/* Allocate the event buffer (no GIL needed). */
int tracer_alloc(size_t cap)
{
	tracer_free();
	if (cap < TRACE_RESERVE * 2)
		cap = TRACE_RESERVE * 2;
	T.ev = malloc(cap * sizeof(tev));
	if (!T.ev)
		return -1;
	T.cap = cap;
	return 0;
}

/* With the GIL held, in the thread to trace.  Records the frames already
 * active as the bottom of the stack, so stacks start at <module>. */
int tracer_start(void)
{
	PyThreadState *ts = PyThreadState_Get();
	PyFrameObject *f;
	size_t depth = 0, cap = 0;
	uint32_t *rev = NULL;

	if (!T.ev)
		return -1;
	if (ts->c_profilefunc) {
		plog("python tracer not started: another profiler (sys.setprofile) is active");
		return -1;
	}
	f = PyEval_GetFrame();  /* borrowed */
	Py_XINCREF(f);
	while (f) {
		PyCodeObject *co = PyFrame_GetCode(f);
		uint32_t k = key_code(co);
		PyFrameObject *back = PyFrame_GetBack(f);

		Py_DECREF(co);
		Py_DECREF(f);
		f = back;
		if (!k)
			continue;
		if (depth >= cap) {
			size_t nc = cap ? cap * 2 : 64;
			uint32_t *nr = realloc(rev, nc * sizeof(uint32_t));

			if (!nr)
				break;
			rev = nr;
			cap = nc;
		}
		rev[depth++] = k;
	}
	Py_XDECREF(f);
	T.stack0 = malloc((depth ? depth : 1) * sizeof(uint32_t));
	if (T.stack0) {
		for (size_t i = 0; i < depth; i++)
			T.stack0[i] = rev[depth - 1 - i];
		T.nstack0 = depth;
	}
	free(rev);
	T.start_ns = pt_clock_wall_ns();
	T.active = 1;
	T.paused = 0;
	PyEval_SetProfile(trace_cb, NULL);
	return 0;
}

/* With the GIL held.  Drops the code-object references (names were copied). */
void tracer_stop(void)
{
	if (T.active) {
		PyEval_SetProfile(NULL, NULL);
		T.stop_ns = pt_clock_wall_ns();
		T.active = 0;
	}
	for (size_t i = 0; i < T.nrefs; i++)
		Py_DECREF(T.refs[i]);
	T.nrefs = 0;
}

typedef struct open_frame {
	uint32_t key;
	int64_t ts;
} open_frame;

static void emit_x(FILE *f, uint32_t key, int64_t ts, int64_t end, int64_t base_ns,
		   const char *pid_tok, const char *tid_tok, pt_sb *sb, int *first)
{
	int64_t rel = ts - base_ns, dur = end - ts;
	const char *name = T.keys[key].name;

	if (dur < 0)
		dur = 0;
	pt_sb_reset(sb);
	if (!*first)
		pt_sb_addc(sb, ',');
	*first = 0;
	pt_sb_adds(sb, "\n{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":");
	pt_sb_add_json_str(sb, name, strlen(name));
	pt_sb_addf(sb, ",\"pid\":%s,\"tid\":%s,\"ts\":%s%lld.%03lld,\"dur\":%lld.%03lld,\"args\":{}}",
		   pid_tok, tid_tok, rel < 0 ? "-" : "", (long long)(llabs(rel) / 1000),
		   (long long)(llabs(rel) % 1000), (long long)(dur / 1000), (long long)(dur % 1000));
	if (!sb->oom)
		fwrite(sb->buf, 1, sb->len, f);
}

/* Pair calls and returns into complete events and write them (no GIL). */
size_t tracer_write(FILE *f, int64_t base_ns, const char *pid_tok, const char *tid_tok,
		    int first)
{
	open_frame *st;
	size_t n = 0, cap = T.nstack0 + 256, written = 0;
	pt_sb sb = { 0 };

	st = malloc(cap * sizeof(open_frame));
	if (!st)
		return 0;
	/* Frames active at the start all "began" at start_ns; one nanosecond
	 * apart (outermost first) so that nesting by time containment is
	 * unambiguous for the reader. */
	for (size_t i = 0; i < T.nstack0; i++) {
		st[n].key = T.stack0[i];
		st[n].ts = T.start_ns - (int64_t)(T.nstack0 - i);
		n++;
	}
	for (size_t i = 0; i < T.n; i++) {
		const tev *e = &T.ev[i];

		if (e->what == EV_CALL) {
			if (n >= cap) {
				size_t nc = cap * 2;
				open_frame *ns = realloc(st, nc * sizeof(open_frame));

				if (!ns)
					break;
				st = ns;
				cap = nc;
			}
			st[n].key = e->key;
			st[n].ts = e->ts;
			n++;
			continue;
		}
		/* A return whose call was not seen (the step() that started the
		 * window) does not match the top: skip it. */
		if (!n || T.keys[st[n - 1].key].is_c != (e->what == EV_RET_C))
			continue;
		n--;
		emit_x(f, st[n].key, st[n].ts, e->ts, base_ns, pid_tok, tid_tok, &sb, &first);
		written++;
	}
	/* Frames still open end at stop_ns, inner ones first (same reason). */
	for (size_t top = n; n;) {
		n--;
		emit_x(f, st[n].key, st[n].ts, T.stop_ns + (int64_t)(top - 1 - n), base_ns, pid_tok,
		       tid_tok, &sb, &first);
		written++;
	}
	pt_sb_free(&sb);
	free(st);
	return written;
}

int tracer_active(void)
{
	return T.active;
}

void tracer_pause(int on)
{
	T.paused = on;
}

int tracer_has_events(void)
{
	return T.ev != NULL;
}

uint64_t tracer_dropped(void)
{
	return T.dropped;
}

int64_t tracer_start_ns(void)
{
	return T.start_ns;
}
