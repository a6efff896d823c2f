/*
 * collector_watch.c - the always-on watch inside the training process
 * (issue 32; docs/watch.md, docs/collector.md "The watch").  step() stamps
 * each step's end into a ring (G.step_us); this file's thread ("pt-watch",
 * its own, so that a training thread that keeps the GIL stalls only the
 * watch, never heartbeats or triggers) reads, every interval, that ring
 * and torch's Flight Recorder (one dump with the GIL held, the bytes
 * copied, parsed without it by src/model/frpickle.c), and appends one
 * JSON line per finished step to <node-dir>/watch/<id>.jsonl for the node
 * agent: its collective instances and when this rank entered them.  It
 * also keeps WT, the last instance per process group, for the watchdog.
 */
#include "collector_internal.h"
#include "model/frpickle.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct watch_table WT;
_Static_assert(sizeof(G.step_us) / sizeof(G.step_us[0]) == WATCH_STEPS, "WATCH_STEPS");

#define ROTATE_BYTES (1 << 20)
#define MAX_COLLS 64          /* instances per step line (the rest counted) */
/* The share of wall time the watch may hold the GIL: the interval grows so
 * that (GIL time of the last read) / interval stays below it.  A dump of
 * 2000 entries held it 13.5 ms here (torch 2.15, 2-core VM, idle; 40 ms
 * at load 3), so with the default ring the watch reads every 8 s (the
 * interval doubles from 1 s: next_wait), and every second when the ring is
 * small or empty (docs/bench.md "Always-on watch"). */
#define GIL_SHARE 0.002
/* ... but at least every 10 s, or the watch could not name a straggler
 * within its persistence window (docs/watch.md). */
#define MAX_WAIT_S 10.0

static struct {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cond;
	int started, stop, stopped;
	int ms;                  /* PERFTRACKER_WATCH_MS */
	int fr_off;              /* PERFTRACKER_FLIGHT_RECORDER=0 */
	char path[PT_CONTROL_PATH_MAX + PT_CONTROL_ID_MAX + 16];
	int fd;
	off_t size;
	int64_t emitted;         /* last step written */
	int64_t last_rid;        /* highest record id read */
	char fr[16], why[200];   /* the state last written */
	double gil_s;            /* GIL held by the last read */
} W = { .mu = PTHREAD_MUTEX_INITIALIZER, .fd = -1 };

/* ---- the file ----------------------------------------------------------------- */

static void put(const pt_sb *sb)
{
	if (W.fd < 0 || !sb->buf || sb->oom)
		return;
	if (pt_file_write_all(W.fd, sb->buf, sb->len) == 0)
		W.size += (off_t)sb->len;
}

static void header(void)
{
	pt_sb sb = { 0 };

	pt_sb_addf(&sb, "{\"format\":\"perftracker-watch\",\"version\":1,\"id\":");
	pt_sb_add_json_str(&sb, G.info.id, strlen(G.info.id));
	pt_sb_addf(&sb, ",\"rank\":%lld,\"world\":%lld,\"local_rank\":%lld,\"host\":",
		   (long long)G.info.rank, (long long)G.info.world_size,
		   (long long)G.info.local_rank);
	pt_sb_add_json_str(&sb, G.info.host, strlen(G.info.host));
	pt_sb_addf(&sb, ",\"pid\":%ld}\n", (long)G.pid);
	put(&sb);
	pt_sb_free(&sb);
}

static void fr_line(void)
{
	pt_sb sb = { 0 };

	pt_sb_adds(&sb, "{\"fr\":");
	pt_sb_add_json_str(&sb, W.fr, strlen(W.fr));
	pt_sb_adds(&sb, ",\"why\":");
	pt_sb_add_json_str(&sb, W.why, strlen(W.why));
	pt_sb_adds(&sb, "}\n");
	put(&sb);
	pt_sb_free(&sb);
}

/* Open (or rotate) the file: a new one starts with the header and the
 * current state.  Without a node directory there is no file. */
static void open_file(void)
{
	char dir[sizeof(W.path)];

	if (W.fd >= 0 && W.size < ROTATE_BYTES)
		return;
	if (W.fd >= 0) {
		char old[sizeof(W.path) + 4];
		close(W.fd);
		W.fd = -1;
		snprintf(old, sizeof(old), "%s.1", W.path);
		rename(W.path, old);
	}
	if (!G.ndir[0] || (size_t)snprintf(dir, sizeof(dir), "%s/watch", G.ndir) >= sizeof(dir) ||
	    (size_t)snprintf(W.path, sizeof(W.path), "%s/%s.jsonl", dir, G.info.id) >= sizeof(W.path))
		return;
	/* the node directory itself may not be there yet (agent mode makes it) */
	if (mkdir(dir, 0700) && errno == ENOENT && pt_nodechan_prepare(G.ndir, NULL) == PT_OK)
		mkdir(dir, 0700);
	W.fd = open(W.path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	W.size = 0;
	if (W.fd < 0)
		return;
	header();
	if (W.fr[0])
		fr_line();
}

static void set_state(const char *fr, const char *why)
{
	if (!strcmp(fr, W.fr) && !strcmp(why, W.why))
		return;
	snprintf(W.fr, sizeof(W.fr), "%s", fr);
	snprintf(W.why, sizeof(W.why), "%s", why);
	__atomic_add_fetch(&WT.gen, 1, __ATOMIC_ACQ_REL);
	snprintf(WT.fr, sizeof(WT.fr), "%s", fr);
	__atomic_add_fetch(&WT.gen, 1, __ATOMIC_ACQ_REL);
	dlog("watch: flight recorder %s%s%s", fr, why[0] ? ": " : "", why);
	fr_line();
}

/* ---- one read of the Flight Recorder (the GIL held only here) ------------------ */

/* A dump function of torch._C._distributed_c10d called with the watch's
 * keyword arguments; its bytes appended to *buf.  0 or -1 (Python error
 * text in why). */
static int dump_one(PyObject *c10d, const char *fn, char **buf, size_t *len, char *why,
		    size_t cap)
{
	PyObject *f = PyObject_GetAttrString(c10d, fn), *kw = NULL, *args = NULL, *r = NULL;
	char *p;
	Py_ssize_t n;
	int rc = -1;

	if (!f) {
		PyErr_Clear();
		return 1;  /* not in this torch */
	}
	kw = Py_BuildValue("{s:O,s:O,s:O}", "includeCollectives", Py_True, "includeStackTraces",
			   Py_False, "onlyActive", Py_False);
	args = PyTuple_New(0);
	if (kw && args)
		r = PyObject_Call(f, args, kw);
	if (r && PyBytes_AsStringAndSize(r, &p, &n) == 0) {
		char *nb = realloc(*buf, *len + (size_t)n + 1);
		if (nb) {
			memcpy(nb + *len, p, (size_t)n);
			*buf = nb;
			*len += (size_t)n;
			nb[*len] = 0;
			rc = 0;
		}
	}
	if (rc && PyErr_Occurred()) {
		PyObject *t, *v, *tb, *s;
		PyErr_Fetch(&t, &v, &tb);
		s = v ? PyObject_Str(v) : NULL;
		snprintf(why, cap, "%s() failed: %s", fn, s && PyUnicode_Check(s) ?
			 PyUnicode_AsUTF8(s) : "error");
		Py_XDECREF(s);
		Py_XDECREF(t);
		Py_XDECREF(v);
		Py_XDECREF(tb);
		PyErr_Clear();
	}
	Py_XDECREF(r);
	Py_XDECREF(args);
	Py_XDECREF(kw);
	Py_DECREF(f);
	return rc;
}

/* A module if it is imported already (new reference), else NULL. */
static PyObject *imported(const char *name)
{
	PyObject *n = PyUnicode_FromString(name), *m = NULL;

	if (n) {
		m = PyImport_GetModule(n);
		Py_DECREF(n);
	}
	if (!m)
		PyErr_Clear();
	return m;
}

/* Is a process group there (torch.distributed imported and initialised)?
 * Never imports anything.  *nccl: its backend names NCCL. */
static int dist_ready(int *nccl, char *why, size_t cap)
{
	PyObject *d = imported("torch.distributed"), *r = NULL, *b = NULL, *bs = NULL;
	const char *t;
	int ok = 0;

	*nccl = 0;
	if (!d) {
		snprintf(why, cap, "torch.distributed is not imported: step times only");
		return 0;
	}
	r = PyObject_CallMethod(d, "is_initialized", NULL);
	ok = r && PyObject_IsTrue(r) == 1;
	if (ok) {
		b = PyObject_CallMethod(d, "get_backend", NULL);
		bs = b ? PyObject_Str(b) : NULL;
		t = bs && PyUnicode_Check(bs) ? PyUnicode_AsUTF8(bs) : NULL;
		*nccl = t && strstr(t, "nccl") != NULL;
	} else {
		snprintf(why, cap, "no process group yet (init_process_group not called): "
			 "step times only");
	}
	PyErr_Clear();
	Py_XDECREF(bs);
	Py_XDECREF(b);
	Py_XDECREF(r);
	Py_DECREF(d);
	return ok;
}

static int finalizing(void)
{
#if PY_VERSION_HEX >= 0x030D0000
	return Py_IsFinalizing();
#else
	return _Py_IsFinalizing();
#endif
}

/* The dumps (gloo's ring, and NCCL's when the backend uses it) into
 * buf[0..1] with the GIL held as briefly as possible.  Returns how many
 * dumps were taken; 0 with fr/why set when none could be. */
static int dumps(char *buf[2], size_t len[2], char *fr, size_t frcap, char *why, size_t cap)
{
	PyGILState_STATE g;
	PyObject *c10d, *st;
	int nccl = 0, got = 0;
	double t0;

	if (!Py_IsInitialized() || finalizing())
		return 0;
	g = PyGILState_Ensure();
	/* what it costs the training thread: the time we hold it, not the
	 * time we waited for it */
	t0 = pt_clock_mono();
	if (W.stop || finalizing())
		goto out;
	snprintf(fr, frcap, "none");
	if (!dist_ready(&nccl, why, cap))
		goto out;
	c10d = imported("torch._C._distributed_c10d");
	if (!c10d) {
		snprintf(why, cap, "this torch has no torch._C._distributed_c10d: step times only");
		goto out;
	}
	if (dump_one(c10d, "_dump_fr_trace", &buf[0], &len[0], why, cap) == 0)
		got = 1;
	if (nccl && dump_one(c10d, "_dump_nccl_trace", &buf[got], &len[got], why, cap) == 0)
		got++;
	Py_DECREF(c10d);
	if (!got && !why[0])
		snprintf(why, cap, "this torch has no Flight Recorder (no _dump_fr_trace): "
			 "step times only");
	else if (!got)
		snprintf(fr, frcap, "error");
	/* PerfTracker() after init_process_group with no size set: torch
	 * never turned it on (the dump is empty). */
	st = G.hook ? PyObject_GetAttrString(G.hook, "fr_state") : NULL;
	if (st && PyUnicode_Check(st) && !strcmp(PyUnicode_AsUTF8(st), "late"))
		snprintf(why, cap, "the process group was made before PerfTracker() and "
			 "TORCH_FR_BUFFER_SIZE was not set: import perftracker before "
			 "init_process_group");
	Py_XDECREF(st);
	PyErr_Clear();
out:
	PyGILState_Release(g);
	W.gil_s = pt_clock_mono() - t0;
	dlog("watch: %d dump%s, GIL held %.2f ms", got, got == 1 ? "" : "s", W.gil_s * 1e3);
	return got;
}

/* ---- entries into steps -------------------------------------------------------- */

static int by_created(const void *a, const void *b)
{
	const pt_fr_entry *x = a, *y = b;

	if (x->created_ns != y->created_ns)
		return x->created_ns < y->created_ns ? -1 : 1;
	return x->record_id < y->record_id ? -1 : x->record_id > y->record_id;
}

/* The dumps' entries, sorted by creation, the same instance once. */
static pt_fr_entry *entries(char *buf[2], size_t len[2], int got, size_t *n)
{
	pt_fr_entry *all = NULL, *e;
	size_t k, m, j;

	*n = 0;
	for (int i = 0; i < got; i++) {
		pt_fr_entry *nb;
		if (pt_frpickle_entries(buf[i], len[i], &e, &m, NULL) || !m)
			continue;
		nb = x_reallocarray(all, *n + m, sizeof(*all));
		if (!nb) {
			x_free(e);
			continue;
		}
		all = nb;
		memcpy(all + *n, e, m * sizeof(*e));
		*n += m;
		x_free(e);
	}
	if (*n > 1)
		qsort(all, *n, sizeof(*all), by_created);
	for (k = j = 0; k < *n; k++)
		if (!j || all[k].created_ns != all[j - 1].created_ns ||
		    all[k].seq != all[j - 1].seq || strcmp(all[k].pg, all[j - 1].pg))
			all[j++] = all[k];
	*n = j;
	return all;
}

/* WT: the last instance of each process group (seqlock writer). */
static void table(const pt_fr_entry *e, size_t n, int64_t now_us)
{
	__atomic_add_fetch(&WT.gen, 1, __ATOMIC_ACQ_REL);
	for (size_t i = 0; i < n; i++) {
		int k;
		if (e[i].p2p)
			continue;
		for (k = 0; k < WT.n && strcmp(WT.pg[k].pg, e[i].pg); k++)
			;
		if (k == WT.n) {
			if (WT.n == WATCH_PGS)
				continue;
			WT.n++;
			memset(&WT.pg[k], 0, sizeof(WT.pg[k]));
			snprintf(WT.pg[k].pg, sizeof(WT.pg[k].pg), "%s", e[i].pg);
			WT.pg[k].seq = -1;
		}
		if (e[i].seq < WT.pg[k].seq)
			continue;
		snprintf(WT.pg[k].desc, sizeof(WT.pg[k].desc), "%s", e[i].desc);
		snprintf(WT.pg[k].name, sizeof(WT.pg[k].name), "%s", e[i].name);
		snprintf(WT.pg[k].state, sizeof(WT.pg[k].state), "%s", e[i].state);
		WT.pg[k].seq = e[i].seq;
		WT.pg[k].created_us = e[i].created_ns / 1000;
		WT.pg[k].started_us = e[i].started_ns < 0 ? -1 : e[i].started_ns / 1000;
		WT.pg[k].done_us = e[i].done_ns < 0 ? -1 : e[i].done_ns / 1000;
	}
	WT.read_us = now_us;
	__atomic_add_fetch(&WT.gen, 1, __ATOMIC_ACQ_REL);
}

static int64_t us(int64_t ns)
{
	return ns < 0 ? -1 : ns / 1000;
}

/* One step's line; *j moves over e (sorted) past the step's instances. */
static void step_line(pt_sb *sb, int64_t s, int64_t t0, int64_t t1, const pt_fr_entry *e,
		      size_t n, size_t *j, int with_c)
{
	size_t k = 0, more = 0;

	pt_sb_addf(sb, "{\"s\":%lld,\"t0\":%lld,\"t1\":%lld", (long long)s, (long long)t0,
		   (long long)t1);
	while (*j < n && e[*j].created_ns / 1000 < t0)
		(*j)++;
	if (with_c) {
		pt_sb_adds(sb, ",\"c\":[");
		for (; *j < n && e[*j].created_ns / 1000 < t1; (*j)++) {
			const pt_fr_entry *x = &e[*j];
			if (x->p2p)
				continue;
			if (k == MAX_COLLS) {
				more++;
				continue;
			}
			pt_sb_adds(sb, k++ ? ",[" : "[");
			pt_sb_add_json_str(sb, x->pg, strlen(x->pg));
			pt_sb_addf(sb, ",%lld,", (long long)x->seq);
			pt_sb_add_json_str(sb, x->name, strlen(x->name));
			pt_sb_addf(sb, ",%lld,%lld,%lld]", (long long)us(x->created_ns),
				   (long long)us(x->started_ns), (long long)us(x->done_ns));
		}
		pt_sb_addc(sb, ']');
		if (more)
			pt_sb_addf(sb, ",\"more\":%zu", more);
	}
	pt_sb_adds(sb, "}\n");
}

/* The steps finished since the last round.  with_fr: e holds what the
 * Flight Recorder had; a step that began before its oldest entry while
 * entries were lost since the last read gets no "c" (it would look as if
 * it had waited in none). */
static void emit(const pt_fr_entry *e, size_t n, int with_fr)
{
	int64_t cnt = __atomic_load_n(&G.count, __ATOMIC_ACQUIRE), s;
	int64_t oldest = n ? e[0].created_ns / 1000 : INT64_MAX, min_rid = INT64_MAX;
	int lost;
	size_t j = 0;
	pt_sb sb = { 0 };

	for (size_t i = 0; i < n; i++)
		if (e[i].record_id < min_rid)
			min_rid = e[i].record_id;
	lost = n && min_rid > W.last_rid + 1;
	s = W.emitted + 1;
	if (cnt - s > WATCH_STEPS - 4)
		s = cnt - (WATCH_STEPS - 4);  /* the ring holds no older ones */
	for (; s <= cnt; s++) {
		int64_t t0, t1;
		if (s < 2)
			continue;  /* step 1 has no start stamp */
		t0 = __atomic_load_n(&G.step_us[(s - 1) & (WATCH_STEPS - 1)], __ATOMIC_RELAXED);
		t1 = __atomic_load_n(&G.step_us[s & (WATCH_STEPS - 1)], __ATOMIC_RELAXED);
		if (t0 <= 0 || t1 < t0)
			continue;
		step_line(&sb, s, t0, t1, e, n, &j, with_fr && !(lost && t0 < oldest));
		if (sb.len > 60000) {
			put(&sb);
			pt_sb_reset(&sb);
		}
	}
	put(&sb);
	pt_sb_free(&sb);
	if (cnt > W.emitted)
		W.emitted = cnt;
	for (size_t i = 0; i < n; i++)
		if (e[i].record_id > W.last_rid)
			W.last_rid = e[i].record_id;
}

/* ---- the thread ------------------------------------------------------------------ */

static void round_once(void)
{
	char *buf[2] = { NULL, NULL }, fr[16] = "none", why[200] = "";
	size_t len[2] = { 0, 0 }, n = 0;
	pt_fr_entry *e = NULL;
	int got = 0;

	open_file();
	if (W.fr_off) {
		set_state("off", "PERFTRACKER_FLIGHT_RECORDER=0: step times only");
	} else {
		got = dumps(buf, len, fr, sizeof(fr), why, sizeof(why));
		if (got) {
			e = entries(buf, len, got, &n);
			table(e, n, pt_clock_wall_ns() / 1000);
			/* "on" unless torch never turned it on (why says so) */
			set_state(!n && why[0] ? "none" : "on", !n && why[0] ? why : "");
		} else if (!W.stop) {
			set_state(fr, why);
		}
	}
	emit(e, n, got > 0);
	x_free(e);
	free(buf[0]);
	free(buf[1]);
}

/* Seconds to the next read.  The interval: the shortest (W.ms) doubled
 * until the last read's GIL time is at most GIL_SHARE of it, at most
 * MAX_WAIT_S (1, 2, 4 or 8 s by default).  The read: at the next multiple
 * of it on the wall clock.  In a lockstep job every rank's stall holds up
 * all of them; ranks that read at the same instants (their clocks agree
 * to NTP's milliseconds, their intervals are powers of two of one base)
 * stall together, so the job pays one stall per interval, not one per
 * rank (bench/watch_cost.py measured 1.059x with unaligned reads on 4
 * ranks). */
static double next_wait(double now)
{
	double iv = W.ms / 1000.0, next;

	while (W.gil_s / GIL_SHARE > iv && iv * 2 <= MAX_WAIT_S)
		iv *= 2;
	next = (floor(now / iv) + 1) * iv;
	return next - now;
}

static void *watch_main(void *arg)
{
	sigset_t all;
	struct timespec next;

	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_setname_np(pthread_self(), "pt-watch");
	pthread_mutex_lock(&W.mu);
	while (!W.stop) {
		pt_clock_mono_deadline(&next, next_wait(pt_clock_wall()));
		while (!W.stop && pthread_cond_timedwait(&W.cond, &W.mu, &next) != ETIMEDOUT)
			;
		if (W.stop)
			break;
		pthread_mutex_unlock(&W.mu);
		round_once();
		pthread_mutex_lock(&W.mu);
	}
	W.stopped = 1;
	pthread_cond_broadcast(&W.cond);
	pthread_mutex_unlock(&W.mu);
	return NULL;
}

void watch_start(void)
{
	const char *on = getenv("PERFTRACKER_WATCH"), *ms = getenv("PERFTRACKER_WATCH_MS");
	const char *fr = getenv("PERFTRACKER_FLIGHT_RECORDER");
	pthread_condattr_t ca;

	if (on && !strcmp(on, "0"))
		return;
	W.ms = ms && atoi(ms) > 0 ? atoi(ms) : 1000;
	W.fr_off = fr && !strcmp(fr, "0");
	W.emitted = 0;
	W.last_rid = -1;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&W.cond, &ca);
	pthread_condattr_destroy(&ca);
	G.watch_on = 1;
	if (pthread_create(&W.th, NULL, watch_main, NULL) != 0) {
		G.watch_on = 0;
		plog("cannot start the watch thread: %s", strerror(errno));
		return;
	}
	pthread_detach(W.th);
	W.started = 1;
}

void watch_stop(void)
{
	struct timespec dl;

	if (!W.started)
		return;
	pt_clock_mono_deadline(&dl, 2.0);
	pthread_mutex_lock(&W.mu);
	W.stop = 1;
	pthread_cond_broadcast(&W.cond);
	while (!W.stopped)
		if (pthread_cond_timedwait(&W.cond, &W.mu, &dl) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&W.mu);
	W.started = 0;
	G.watch_on = 0;
	if (W.fd >= 0) {
		close(W.fd);
		W.fd = -1;
		unlink(W.path);
	}
}

void watch_atfork_child(void)
{
	pthread_mutex_init(&W.mu, NULL);
	W.started = 0;
	W.stop = 1;
	W.fd = -1;
	G.watch_on = 0;
}
