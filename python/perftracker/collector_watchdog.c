/*
 * collector_watchdog.c - hang diagnosis inside the worker: a thread that
 * never takes the GIL writes the Python stacks of every thread to
 * stacks/<worker>.txt in the control directory, on request (stacks request
 * file, mirrored by the agent) and once per stall when no step came for
 * the hang threshold (docs/hang.md; read by `perftracker hang-check`).
 * The dump itself allocates nothing and calls no Python: everything it
 * needs (paths, header, the control directory's descriptor) is prepared
 * in wd_start, and it writes with write(2) only.
 */
#include "collector_internal.h"
#include "model/stacks.h"
#include "util/file.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* CPython's faulthandler walks the thread states and their frame chains
 * without the GIL and writes with write(2) only; it is exported by
 * libpython (an internal header declares it, so we declare it here).  It is
 * what faulthandler.dump_traceback_later() runs in its own watchdog thread:
 * it works while the training thread holds the GIL in C code or waits in a
 * collective.  A frame that changes while being read can give a garbled
 * line, never a hang; that is the price faulthandler pays too. */
extern const char *_Py_DumpTracebackThreads(int fd, PyInterpreterState *interp,
					    PyThreadState *current_tstate);

#define WD_SAMPLES 32

static struct watchdog {
	pthread_t thread;
	int started;
	int stop;                   /* under mu */
	int running;                /* under mu: the thread has not exited */
	pthread_mutex_t mu;         /* held for a whole dump; shutdown takes it */
	PyInterpreterState *interp;
	unsigned long train_thread; /* PyThread_get_thread_ident() of the thread
				       that created the collector */
	double hang_s;              /* dump when no step for this long; 0: automatic */
	double hang_min_s;          /* floor of the automatic threshold */
	int poll_ms;
	/* Prepared at start: paths and the fixed part of the header. */
	char dir[PT_CONTROL_PATH_MAX];
	char req[PT_CONTROL_PATH_MAX];
	char ctl[PT_CONTROL_PATH_MAX];   /* the control directory */
	int ctlfd;                       /* it, opened at start (-1: retry at dump) */
	uid_t uid;                       /* owner stacks/ must have (ours; nobody's
	                                    for root on a root-squashed NFS) */
	char out_name[PT_CONTROL_ID_MAX + 8]; /* "<wid>.txt" in stacks/ */
	char lreq[PT_CONTROL_PATH_MAX];  /* the node channel's mirror of req */
	int fb_polls;                    /* polls since the last fallback stat */
	char head[PT_CONTROL_ID_MAX + PT_CONTROL_HOST_MAX + 128];
	char reqbuf[PT_STACKS_REQUEST_MAX + 1];
	char last_req[PT_CONTROL_TID_MAX + 16];
	double samples[WD_SAMPLES]; /* seconds per step, one per poll that saw steps */
	int nsamples, isample;
	int64_t dumps;              /* written so far (info()) */
	double last_dump;
} WD = { .mu = PTHREAD_MUTEX_INITIALIZER, .ctlfd = -1 };

int64_t wd_dumps(void)
{
	return __atomic_load_n(&WD.dumps, __ATOMIC_RELAXED);
}

/* The watch's last collective instance per process group (WT, a seqlock
 * the watch thread writes: copied, retried while it changes, at most 100
 * times) as header lines (src/model/stacks.h): what hang-check needs to
 * name the rank that never entered the collective the others wait in.
 * No allocation: a copy on this thread's stack and snprintf into a line. */
static int wd_collectives(int fd)
{
	struct watch_table t;
	char line[320];
	int n, ok = 0;

	for (int tries = 0; tries < 100 && !ok; tries++) {
		uint32_t g = __atomic_load_n(&WT.gen, __ATOMIC_ACQUIRE);
		if (g & 1)
			continue;
		memcpy(&t, &WT, sizeof(t));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		ok = __atomic_load_n(&WT.gen, __ATOMIC_RELAXED) == g;
	}
	if (!ok || (!t.fr[0] && !t.n))
		return 0;
	n = snprintf(line, sizeof(line), "watch: fr=%s read_us=%lld\n", t.fr[0] ? t.fr : "none",
		     (long long)t.read_us);
	if (pt_file_write_all(fd, line, (size_t)(n < (int)sizeof(line) ? n : (int)sizeof(line) - 1)))
		return -1;
	for (int i = 0; i < t.n && i < WATCH_PGS; i++) {
		const watch_last *c = &t.pg[i];
		n = snprintf(line, sizeof(line), "collective: pg=%.47s seq=%lld state=%.15s "
			     "created_us=%lld desc=%.47s name=%.47s\n", c->pg, (long long)c->seq,
			     c->state[0] ? c->state : "-", (long long)c->created_us,
			     c->desc[0] ? c->desc : "-", c->name);
		if (pt_file_write_all(fd, line, (size_t)(n < (int)sizeof(line) ? n
						  : (int)sizeof(line) - 1)))
			return -1;
	}
	return 0;
}

/* Write stacks/<wid>.txt: header, faulthandler's dump, then rename into
 * place.  No GIL, no Python call, no allocation: openat/write/close/renameat
 * relative to the control directory's descriptor opened at start.  stacks/
 * must be a directory of ours (not a link), and the temporary file is new
 * (O_EXCL|O_NOFOLLOW) under an unguessable name, so another user who can
 * write there cannot make us write through a link (docs/collector.md). */
static void wd_dump(const char *reason, const char *req, double now, int64_t step,
		    double step_time)
{
	char hdr[sizeof(WD.head) + 512], tmp[PT_CONTROL_ID_MAX + 32];
	const char *msg;
	int fd = -1, sfd = -1, n;
	struct stat st;

	pthread_mutex_lock(&WD.mu);
	if (WD.stop || !WD.interp)
		goto out;
	if (WD.ctlfd < 0)
		WD.ctlfd = open(WD.ctl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (WD.ctlfd < 0) {
		dlog("cannot open '%s': %s", WD.ctl, strerror(errno));
		goto out;
	}
	sfd = openat(WD.ctlfd, "stacks", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0 && errno == ENOENT) {
		/* stacks/ removed (or never made): once more after mkdir. */
		mkdirat(WD.ctlfd, "stacks", 0775);
		sfd = openat(WD.ctlfd, "stacks", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (sfd < 0 || fstat(sfd, &st) != 0 || st.st_uid != WD.uid) {
		dlog("not writing stacks to '%s': %s", WD.dir,
		     sfd < 0 ? strerror(errno) : "not a directory of ours");
		goto out;
	}
	snprintf(tmp, sizeof(tmp), ".%s.%016llx.tmp", G.info.id,
		 (unsigned long long)pt_file_random64());
	fd = openat(sfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		dlog("cannot write stacks to '%s': %s", WD.dir, strerror(errno));
		goto out;
	}
	n = snprintf(hdr, sizeof(hdr), "%sreason: %s\nrequest: %s\ntime: %.3f\nstep: %lld\n"
		     "step_time: %.3f\n", WD.head, reason, req, now, (long long)step, step_time);
	if (n > (int)sizeof(hdr) - 1)
		n = (int)sizeof(hdr) - 1;
	if (pt_file_write_all(fd, hdr, (size_t)n) == 0 && wd_collectives(fd) == 0 &&
	    pt_file_write_all(fd, "\n", 1) == 0) {
		msg = _Py_DumpTracebackThreads(fd, WD.interp, NULL);
		if (msg) {
			pt_file_write_all(fd, "error: ", 7);
			pt_file_write_all(fd, msg, strlen(msg));
			pt_file_write_all(fd, "\n", 1);
		}
	}
	if (close(fd) == 0 && renameat(sfd, tmp, sfd, WD.out_name) == 0) {
		WD.dumps++;
		WD.last_dump = now;
		dlog("stacks written (%s%s%s) at step %lld", reason, req[0] ? " " : "", req,
		     (long long)step);
	} else {
		unlinkat(sfd, tmp, 0);
	}
out:
	if (sfd >= 0)
		close(sfd);
	pthread_mutex_unlock(&WD.mu);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* No step for this long means stuck: the set value, or max(floor, 10 x the
 * median step time seen lately). */
static double wd_threshold(void)
{
	double v[WD_SAMPLES], med;
	int n = WD.nsamples;

	if (WD.hang_s > 0)
		return WD.hang_s;
	if (!n)
		return WD.hang_min_s;
	memcpy(v, WD.samples, (size_t)n * sizeof(double));
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	return med * 10 > WD.hang_min_s ? med * 10 : WD.hang_min_s;
}

/* Has the request file changed, and does it carry a new, recent id? */
static int wd_request(double now, char *id, size_t cap, struct stat *last)
{
	struct stat st;
	double t = 0;
	ssize_t r;
	int fd;

	const char *path;
	int mode = __atomic_load_n(&G.mode, __ATOMIC_RELAXED);

	/* Through the agent's mirror (a local stat); the shared request
	 * directly when no agent carries it, every FB_POLL_FACTOR polls in
	 * fallback. */
	if ((mode == M_AGENT || mode == M_WAIT) && WD.lreq[0]) {
		path = WD.lreq;
	} else {
		if (mode == M_FALLBACK && ++WD.fb_polls < FB_POLL_FACTOR)
			return 0;
		WD.fb_polls = 0;
		path = WD.req;
	}
	if (stat(path, &st) != 0)
		return 0;
	if (st.st_ino == last->st_ino && st.st_size == last->st_size &&
	    st.st_mtim.tv_sec == last->st_mtim.tv_sec && st.st_mtim.tv_nsec == last->st_mtim.tv_nsec)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	r = read(fd, WD.reqbuf, PT_STACKS_REQUEST_MAX);
	close(fd);
	if (r <= 0)
		return 0;
	*last = st;
	WD.reqbuf[r] = 0;
	if (pt_control_stacks_request_parse(WD.reqbuf, id, cap, &t) != 0)
		return 0;
	if (!strcmp(id, WD.last_req))
		return 0;
	snprintf(WD.last_req, sizeof(WD.last_req), "%s", id);
	/* A request from before this process (or long ago) is not for us. */
	return now - t < 60;
}

static void *wd_main(void *arg)
{
	int64_t last = -1;
	double last_change = pt_control_now();
	int stalled = 0;
	struct stat rst;
	sigset_t all;
	char id[sizeof(WD.last_req)];

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_setname_np(pthread_self(), "pt-watchdog");
	memset(&rst, 0, sizeof(rst));
	for (;;) {
		double now = pt_control_now();
		int64_t cur = __atomic_load_n(&G.count, __ATOMIC_RELAXED);
		struct timespec ts;
		int stop;

		pthread_mutex_lock(&WD.mu);
		stop = WD.stop;
		if (stop)
			WD.running = 0;
		pthread_mutex_unlock(&WD.mu);
		if (stop)
			break;
		if (cur != last) {
			if (last >= 0 && cur > last) {
				WD.samples[WD.isample] = (now - last_change) / (double)(cur - last);
				WD.isample = (WD.isample + 1) % WD_SAMPLES;
				if (WD.nsamples < WD_SAMPLES)
					WD.nsamples++;
			}
			last = cur;
			last_change = now;
			stalled = 0;
		}
		if (wd_request(now, id, sizeof(id), &rst))
			wd_dump("request", id, now, cur, cur > 0 ? last_change : 0);
		/* Stuck: dump once per stall (training has started: step >= 1). */
		if (cur > 0 && !stalled && now - last_change >= wd_threshold()) {
			stalled = 1;
			wd_dump("stalled", "", now, cur, last_change);
		}
		ts.tv_sec = WD.poll_ms / 1000;
		ts.tv_nsec = (long)(WD.poll_ms % 1000) * 1000000L;
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* With the GIL held (Collector_init).  Everything the dump needs is
 * prepared here. */
void wd_start(double hang_s)
{
	const char *e = getenv("PERFTRACKER_WATCHDOG");
	const char *m = getenv("PERFTRACKER_HANG_MIN_S");

	if (e && !strcmp(e, "0"))
		return;
	if (pt_control_stacks_dir(WD.dir, sizeof(WD.dir), G.dir) ||
	    (size_t)snprintf(WD.out_name, sizeof(WD.out_name), "%s.txt", G.info.id) >=
		    sizeof(WD.out_name) ||
	    (size_t)snprintf(WD.ctl, sizeof(WD.ctl), "%s", G.dir) >= sizeof(WD.ctl) ||
	    pt_control_stacks_request_path(WD.req, sizeof(WD.req), G.dir)) {
		plog("control directory path too long: no watchdog");
		return;
	}
	if (!G.ndir[0] || pt_nodechan_file(WD.lreq, sizeof(WD.lreq), G.ndir,
					   PT_NODECHAN_STACKS_REQUEST))
		WD.lreq[0] = 0;
	WD.interp = PyInterpreterState_Get();
	WD.train_thread = PyThread_get_thread_ident();
	WD.hang_s = hang_s > 0 ? hang_s : 0;
	WD.hang_min_s = m && atof(m) > 0 ? atof(m) : 60;
	WD.poll_ms = G.poll_ms;
	snprintf(WD.head, sizeof(WD.head),
		 PT_STACKS_MAGIC "\nworker: %s\nhost: %s\nrank: %lld\npid: %ld\n"
		 "training_thread: 0x%016lx\n", G.info.id, G.host, (long long)G.info.rank,
		 (long)G.pid, WD.train_thread);
	{
		struct stat st;

		/* mkdirs checked stacks/ (docs/collector.md): its owner is us. */
		WD.uid = pt_control_mkdirs(WD.dir, NULL) == PT_OK && stat(WD.dir, &st) == 0
				 ? st.st_uid : geteuid();
	}
	pthread_mutex_lock(&WD.mu);
	if (WD.ctlfd < 0)
		WD.ctlfd = open(WD.ctl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	WD.stop = 0;
	/* A collector started again after shutdown(): the old thread, if it
	 * has not noticed the stop yet, simply carries on. */
	if (!WD.running) {
		if (pthread_create(&WD.thread, NULL, wd_main, NULL) != 0) {
			pthread_mutex_unlock(&WD.mu);
			plog("cannot start the watchdog thread: %s", strerror(errno));
			return;
		}
		pthread_detach(WD.thread);
		WD.running = 1;
	}
	WD.started = 1;
	pthread_mutex_unlock(&WD.mu);
}

/* Before the interpreter goes away (atexit): no dump may start after this,
 * and one in progress is waited for (thread states are freed at exit). */
void wd_stop(void)
{
	pthread_mutex_lock(&WD.mu);
	WD.stop = 1;
	WD.interp = NULL;
	pthread_mutex_unlock(&WD.mu);
}

/* info(): is the watchdog on, and its threshold now (0 when off). */
int wd_enabled(void)
{
	return WD.started && !WD.stop;
}

double wd_hang_threshold(void)
{
	return WD.started ? wd_threshold() : 0.0;
}

/* In a forked child (pthread_atfork): no watchdog thread there, and it must
 * not dump as the parent. */
void wd_atfork_child(void)
{
	pthread_mutex_init(&WD.mu, NULL);
	WD.stop = 1;
	WD.started = 0;
	WD.running = 0;
	WD.interp = NULL;
}
