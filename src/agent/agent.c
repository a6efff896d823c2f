/*
 * agent.c - the node agent (see agent.h): spool -> summaries, raw-trace
 * policy, its lock and heartbeat, the hardware samples of a window (the
 * sampler, and an nsys capture of GPU metrics when asked for).  It polls
 * the local spool rather than the shared status records, so a thousand
 * agents add no listing load to the shared file system.  It is its node's
 * only voice there (docs/collector.md, "Node channel"): its workers talk
 * to it through the node channel (src/control/nodechan.h); it stats
 * trigger.json and the stack request for the whole node, mirrors them into
 * the channel, and publishes the node's workers as agents/<host>.json at
 * most once a second, only when something changed.
 */
#include "agent.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../analysis/digest.h"
#include "../control/job.h"
#include "../control/nodechan.h"
#include "../control/trigger.h"
#include "../trace/nsys.h"
#include "../util/file.h"
#include "../util/json.h"
#include "../util/pool.h"
#include "../util/strbuf.h"
#include "../util/clock.h"
#include "../util/xalloc.h"
#include "nsys_capture.h"
#include "sampler.h"

static void alog(pt_agent *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void alog(pt_agent *a, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;

	if (!a->log)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	a->log(a->log_ctx, buf);
}

void pt_agent_init(pt_agent *a, const char *dir, const char *spool, const char *host)
{
	long cpus = pt_pool_cpus();

	memset(a, 0, sizeof(*a));
	snprintf(a->dir, sizeof(a->dir), "%s", dir ? dir : pt_control_default_dir());
	snprintf(a->spool_root, sizeof(a->spool_root), "%s",
		 spool ? spool : pt_control_default_spool());
	if (host)
		snprintf(a->host, sizeof(a->host), "%s", host);
	else
		pt_control_hostname(a->host, sizeof(a->host));
	/* The job's own folder of the spool: agents of other jobs that share
	 * the spool never list, take or clean its traces. */
	if (pt_job_spool_dir(a->spool, sizeof(a->spool), a->spool_root, a->dir, a->host))
		snprintf(a->spool, sizeof(a->spool), "%s", a->spool_root);
	pt_control_nodename(a->node, sizeof(a->node));
	a->poll_s = 0.2;
	a->hb_s = 5;
	a->trigger_poll_s = 1;
	a->stacks_poll_s = 2;
	a->node_min_s = 1;
	a->node_progress_s = 2;
	a->node_max_s = 10;
	a->lock_check_s = 30;
	a->nfd = -1;
	if (pt_nodechan_path(a->ndir, sizeof(a->ndir), a->dir, a->host))
		a->ndir[0] = 0;
	a->jobs = cpus > 4 ? 4 : cpus;
	pt_summary_options_default(&a->sopt);
	pt_sampler_options_default(&a->hw_opt);
	a->hw_opt.root = NULL;
	a->hw_opt.host = NULL;
	a->nsys_max_s = 60;
}

static void clear_done(pt_agent *a)
{
	for (size_t i = 0; i < a->ndone; i++)
		x_free(a->done[i]);
	x_free(a->done);
	a->done = NULL;
	a->ndone = 0;
}

static void hw_end(pt_agent *a);
static void hw_drop(pt_agent *a);

void pt_agent_free(pt_agent *a)
{
	if (!a)
		return;
	hw_end(a);
	hw_drop(a);
	pt_agent_unlock(a);
	clear_done(a);
	x_free(a->local);
	a->local = NULL;
	a->nlocal = 0;
	pt_control_trigger_clear(&a->trig);
	x_free(a->node_key);
	x_free(a->node_pkey);
	a->node_key = a->node_pkey = NULL;
}

/* ---- lock ------------------------------------------------------------------- */

int pt_agent_lock(pt_agent *a, pt_error *err)
{
	char path[PT_CONTROL_PATH_MAX], holder[4096];
	pt_sb sb = { 0 };
	int rc, tries;

	if (pt_control_agent_lock_path(path, sizeof(path), a->dir, a->host))
		return pt_error_set(err, PT_EINVAL, -1, "path too long");
	/* Directories another user could write through are refused before
	 * anything is written there (docs/collector.md). */
	if ((rc = pt_control_mkdirs(a->dir, err)) || (rc = pt_control_mkdirs(a->spool_root, err)) ||
	    (rc = pt_control_mkdirs(a->spool, err)))
		return rc;
	pt_sb_adds(&sb, "{\"host\":");
	pt_sb_add_json_str(&sb, a->host, strlen(a->host));
	pt_sb_adds(&sb, ",\"node\":");
	pt_sb_add_json_str(&sb, a->node, strlen(a->node));
	pt_sb_addf(&sb, ",\"pid\":%ld,\"started\":", (long)getpid());
	pt_sb_add_double(&sb, pt_control_now());
	pt_sb_adds(&sb, "}\n");
	if (sb.oom) {
		pt_sb_free(&sb);
		return pt_error_set(err, PT_ENOMEM, -1, "out of memory");
	}
	/* A live agent of this node and directory holds the channel's flock:
	 * its lock file must not be judged stale and removed (it would then
	 * exit at its next lock check, leaving the node without an agent). */
	if (a->ndir[0] && pt_nodechan_agent_alive(a->ndir)) {
		pt_sb_free(&sb);
		return 1;
	}
	for (tries = 0; tries < 2; tries++) {
		rc = pt_control_lock(path, sb.buf, holder, sizeof(holder), err);
		if (rc != 1)
			break;
		/* Held: by a live agent, or left behind by a dead one. */
		if (pt_control_agent_running(a->dir, a->host, pt_control_now(), 30))
			break;
		alog(a, "removing stale agent lock '%s' (%s)", path, holder);
		unlink(path);
	}
	pt_sb_free(&sb);
	if (rc == PT_OK) {
		a->locked = 1;
		a->started = pt_control_now();
		a->last_alive = a->started;
		/* The node channel's lock tells this node's workers that an
		 * agent carries their records (an flock: gone when we die). */
		if (a->ndir[0]) {
			pt_error ne;
			char buf[1024];

			pt_error_clear(&ne);
			if (pt_nodechan_prepare(a->ndir, &ne) == PT_OK)
				a->nfd = pt_nodechan_agent_hold(a->ndir, &ne);
			if (a->nfd == -1) {
				/* Another agent of this node and directory holds it. */
				pt_agent_unlock(a);
				return 1;
			}
			if (a->nfd < 0) {
				alog(a, "no node channel, workers talk to '%s' directly: %s", a->dir,
				     pt_error_format(&ne, buf, sizeof(buf)));
				a->nfd = -1;
				a->ndir[0] = 0;
			}
		}
		pt_agent_reap(a, pt_control_now());
	}
	return rc;
}

void pt_agent_unlock(pt_agent *a)
{
	char path[PT_CONTROL_PATH_MAX];

	if (!a->locked)
		return;
	a->locked = 0;
	if (!pt_agent_owns_lock(a))
		return;
	if (pt_control_agent_lock_path(path, sizeof(path), a->dir, a->host) == 0)
		unlink(path);
	if (pt_control_agent_hb_path(path, sizeof(path), a->dir, a->host) == 0)
		unlink(path);
	if (a->nfd >= 0) {
		close(a->nfd);
		a->nfd = -1;
	}
}

int pt_agent_owns_lock(const pt_agent *a)
{
	char path[PT_CONTROL_PATH_MAX];
	char *buf = NULL;
	pt_json *j = NULL;
	int own = 0;

	if (pt_control_agent_lock_path(path, sizeof(path), a->dir, a->host))
		return 0;
	if (pt_control_read_file(path, 1 << 16, &buf, NULL, NULL))
		return 0;
	j = pt_json_parse(buf, strlen(buf), NULL);
	own = j && (long)pt_json_num(j, "pid", -1) == (long)getpid() &&
	      !strcmp(pt_json_strv(j, "node", ""), a->node);
	pt_json_free(j);
	x_free(buf);
	return own;
}

static int is_done(const pt_agent *a, const char *wid);

/* Write the node file agents/<host>.json: the agent's own record (its
 * heartbeat) with this node's workers, and its copy in the node channel
 * (workers learn there that they are published). */
static void write_heartbeat(pt_agent *a, double now)
{
	char path[PT_CONTROL_PATH_MAX];
	pt_sb sb = { 0 };
	pt_node_agent na;
	pt_error e;

	if (pt_control_agent_hb_path(path, sizeof(path), a->dir, a->host))
		return;
	memset(&na, 0, sizeof(na));
	snprintf(na.host, sizeof(na.host), "%s", a->host);
	snprintf(na.node, sizeof(na.node), "%s", a->node);
	na.pid = (int64_t)getpid();
	na.started = a->started;
	na.time = now;
	na.processed = a->processed;
	na.failed = a->failed;
	pt_nodechan_node_json(&sb, &na, a->local, a->nlocal);
	pt_error_clear(&e);
	if (!sb.oom && pt_control_write_atomic(path, sb.buf, sb.len, &e)) {
		char buf[1024];

		alog(a, "cannot write heartbeat: %s", pt_error_format(&e, buf, sizeof(buf)));
	} else if (!sb.oom && a->ndir[0] &&
		   pt_nodechan_file(path, sizeof(path), a->ndir, PT_NODECHAN_NODE) == 0) {
		pt_control_write_atomic(path, sb.buf, sb.len, NULL);
	}
	pt_sb_free(&sb);
	a->last_hb = now;
	a->node_last = now;
}

static int pid_gone(int64_t pid)
{
	return pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Read this node's workers from the node channel and publish them when
 * something changed: at most every node_min_s; when only step counts
 * moved, every node_progress_s (node_min_s while a trigger is active); and
 * every node_max_s regardless (the agent's and the workers' liveness). */
static void node_publish(pt_agent *a, double now)
{
	pt_node_worker *w = NULL;
	size_t n = 0;
	pt_sb key = { 0 }, pkey = { 0 };
	double prog;
	int changed, moved;

	/* Twice per node_min_s is enough: the node file goes out at most
	 * once per node_min_s. */
	if (now - a->local_read < a->node_min_s / 2)
		return;
	a->local_read = now;
	if (a->ndir[0] && pt_nodechan_workers_read(a->ndir, &w, &n, NULL) == PT_OK) {
		for (size_t i = 0; i < n; i++) {
			/* Records of processes long gone (killed: no goodbye). */
			if (!strcmp(w[i].e.info.node, a->node) && pid_gone(w[i].e.info.pid) &&
			    now - w[i].e.hb.time > 300) {
				pt_nodechan_worker_remove(a->ndir, w[i].e.info.id);
				memmove(&w[i], &w[i + 1], (n - i - 1) * sizeof(*w));
				n--;
				i--;
				continue;
			}
			w[i].summarized = w[i].has_status && !strcmp(w[i].tid, a->tid) &&
					  is_done(a, w[i].e.info.id);
		}
		x_free(a->local);
		a->local = w;
		a->nlocal = n;
	}
	for (size_t i = 0; i < a->nlocal; i++) {
		pt_nodechan_worker_key(&key, &a->local[i]);
		pt_sb_addf(&pkey, "%lld,", (long long)a->local[i].e.hb.step);
	}
	pt_sb_addf(&key, "%llu/%llu", (unsigned long long)a->processed,
		   (unsigned long long)a->failed);
	pt_sb_addc(&pkey, '.');
	if (key.oom || pkey.oom) {
		pt_sb_free(&key);
		pt_sb_free(&pkey);
		return;
	}
	changed = !a->node_key || strcmp(a->node_key, key.buf);
	moved = !a->node_pkey || strcmp(a->node_pkey, pkey.buf);
	/* While a trigger runs, its progress lines and hang check want the
	 * step counts as fresh as the states: once a second. */
	prog = a->trig.id[0] && !strcmp(a->trig.state, PT_TRIGGER_ACTIVE) ? a->node_min_s
									   : a->node_progress_s;
	if ((changed && now - a->node_last >= a->node_min_s) ||
	    (moved && now - a->node_last >= prog) ||
	    now - a->node_last >= a->node_max_s) {
		write_heartbeat(a, now);
		x_free(a->node_key);
		x_free(a->node_pkey);
		a->node_key = pt_sb_detach(&key, NULL);
		a->node_pkey = pt_sb_detach(&pkey, NULL);
	}
	pt_sb_free(&key);
	pt_sb_free(&pkey);
}

/* Copy a shared file into the node channel when it changed (or every
 * reread_s); a missing source removes the copy.  One open per call: on NFS
 * an open revalidates the file's attributes (close-to-open), where a stat
 * may answer from the attribute cache for up to a minute; the data is read
 * only when the fstat after the open differs.  Returns 1 when the copy
 * changed. */
static int mirror(pt_agent *a, const char *from, const char *name, void *stp, double now,
		  double *last_read, double reread_s)
{
	struct { long long sec, nsec, size, ino; } *last = stp, cur;
	char to[PT_CONTROL_PATH_MAX];
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	int fd, rc = 0;

	if (!a->ndir[0] || pt_nodechan_file(to, sizeof(to), a->ndir, name))
		return 0;
	fd = open(from, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT && last->ino) {
			memset(last, 0, sizeof(*last));
			unlink(to);
			return 1;
		}
		return 0;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (size_t)st.st_size > PT_CONTROL_RECORD_MAX)
		goto out;
	cur.sec = (long long)st.st_mtim.tv_sec;
	cur.nsec = (long long)st.st_mtim.tv_nsec;
	cur.size = (long long)st.st_size;
	cur.ino = (long long)st.st_ino;
	if (!memcmp(&cur, last, sizeof(cur)) && now - *last_read < reread_s)
		goto out;
	*last_read = now;
	/* It may grow after the fstat (a rename replaces, so rarely). */
	if (pt_file_read_fd(fd, PT_CONTROL_RECORD_MAX, &buf, &len, NULL))
		goto out;
	*last = cur;
	pt_control_write_atomic(to, buf, len, NULL);
	rc = 1;
out:
	x_free(buf);
	close(fd);
	return rc;
}

/* The trigger as the agent sees it: read from the shared directory at
 * most every trigger_poll_s inside pt_agent_run (an open and fstat; the
 * data when it changed, and every 10 s), on every call otherwise (--once,
 * tests). */
static int refresh_trigger(pt_agent *a, double now, pt_error *err)
{
	char from[PT_CONTROL_PATH_MAX];

	if (!a->in_run || !a->ndir[0]) {
		pt_control_trigger_clear(&a->trig);
		return pt_control_trigger_read(a->dir, &a->trig, err);
	}
	if (now - a->trig_stat < a->trigger_poll_s)
		return PT_OK;
	a->trig_stat = now;
	if (pt_control_path(from, sizeof(from), a->dir, "trigger.json"))
		return PT_OK;
	if (!mirror(a, from, PT_NODECHAN_TRIGGER, &a->trig_st, now, &a->trig_read, 10))
		return PT_OK;
	pt_control_trigger_clear(&a->trig);
	return pt_control_trigger_read(a->ndir, &a->trig, err);
}

/* The stack request (hang diagnosis): mirrored for the watchdogs. */
static void refresh_stacks(pt_agent *a, double now)
{
	char from[PT_CONTROL_PATH_MAX];
	double every = a->trig.id[0] && !strcmp(a->trig.state, PT_TRIGGER_ACTIVE)
			       ? (a->trigger_poll_s < a->stacks_poll_s ? a->trigger_poll_s
									: a->stacks_poll_s)
			       : a->stacks_poll_s;
	double unused = now;

	if (!a->ndir[0] || now - a->req_stat < every)
		return;
	a->req_stat = now;
	if (pt_control_stacks_request_path(from, sizeof(from), a->dir) == 0)
		mirror(a, from, PT_NODECHAN_STACKS_REQUEST, &a->req_st, now, &unused, 1e18);
}

/* ---- hardware sampler (docs/hardware.md) --------------------------------------------- */

/* An nsys capture of GPU metrics for one trigger (docs/hardware.md, "10 kHz
 * capture"): a thread waits until shortly before the window, runs
 * `nsys profile` + `nsys export` (pt_nsys_capture_run_cancel) into the
 * node-local spool, reads the export's GPU metrics and removes the files.
 * The agent's thread only looks at `done`; everything else belongs to the
 * capture thread until then. */
typedef struct nsys_cap {
	pthread_t th;
	int started;                        /* the thread exists (join it) */
	int cancel;                         /* atomic: stop (agent exit, trigger over) */
	int done;                           /* atomic: the thread has finished */
	char nsys[PT_CONTROL_PATH_MAX];
	char base[PT_CONTROL_PATH_MAX];     /* <spool>/.nsys-<host>/hw_<host> */
	int hz;
	double delay_s, seconds;            /* wait, then capture this long */
	double wait_until;                  /* epoch s: traces wait for it until then */
	double began;                       /* epoch s when it was planned */
	int rc;                             /* the thread's result */
	char msg[1100];
	pt_samples got;                     /* the export's GPU metrics (rc == PT_OK) */
} nsys_cap;

/* A capture starts this long (plus a quarter of the time to the window)
 * before the window's estimated start: nsys takes a moment to start
 * collecting; it ends NSYS_POST_S after the window's estimated end plus a
 * quarter of the window (step times vary). */
#define NSYS_PRE_S 2.0
#define NSYS_POST_S 1.0
/* At most this many samples per series (60 s at 10 kHz, 9.6 MB a series,
 * some 0.6 GB for 8 GPUs x 8 metrics): a faster rate captures less time. */
#define NSYS_MAX_SAMPLES 600000.0
/* After the capture's end, traces wait this long (plus the capture's own
 * length) for the export before they are summarised without it. */
#define NSYS_EXPORT_S 10.0

/* Sampling for one trigger.  Kept (without a sampler) after the sampling
 * ended, so that later polls of the same trigger do not start it again. */
struct pt_agent_hw {
	pt_sampler *s;
	char tid[PT_CONTROL_TID_MAX];
	char raw_dir[PT_CONTROL_PATH_MAX];  /* where kept raw traces go */
	char name[PT_CONTROL_HOST_MAX + 16]; /* hw_<host>.json */
	int save_raw;
	int rank0;                          /* a rank-0 trace of this host arrived */
	int ended;                          /* hw_end ran */
	pt_samples snap;                    /* the samples as of this poll's traces */
	int have_snap;
	size_t snap_borrowed;               /* snap's first series are nsys's (not owned) */
	/* nsys (NULL cap: none asked for, or it could not start) */
	nsys_cap *cap;
	int cap_used;                       /* its result was taken (or given up) */
	int cap_wait_logged;
	pt_samples nsys;                    /* its series, label "nsys" (have_nsys) */
	int have_nsys;
	char nsys_note[1400];               /* why there are none ("" none) */
};

static int mine(const pt_agent *a, const char *name);
static int is_done(const pt_agent *a, const char *wid);

/* hw_<host>.json, the host's characters outside [A-Za-z0-9._-] as '_'. */
static void hw_file_name(const char *host, char *out, size_t cap)
{
	size_t n = strlen(host);

	snprintf(out, cap, "hw_%s.json", host);
	for (size_t i = 3; i < 3 + n && i < cap && out[i]; i++) {
		char c = out[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			out[i] = '_';
	}
}

static void hw_write(pt_agent *a, const pt_samples *h, const char *dir)
{
	char path[PT_CONTROL_PATH_MAX + PT_CONTROL_HOST_MAX + 32];
	pt_error e;

	pt_error_clear(&e);
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, a->hw->name) >= sizeof(path))
		return;
	if (pt_control_mkdirs(dir, &e) != PT_OK || pt_samples_write_file(h, path, &e) != PT_OK) {
		char buf[1024];

		alog(a, "cannot write hardware samples: %s", pt_error_format(&e, buf, sizeof(buf)));
	}
}

/* ---- nsys capture ----------------------------------------------------------------- */

static void remove_capture_files(const char *base, int keep_log)
{
	static const char *const ext[] = { ".nsys-rep", ".sqlite", ".log", ".qdstrm" };
	char p[PT_CONTROL_PATH_MAX + 16];

	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		if (keep_log && !strcmp(ext[i], ".log"))
			continue;
		if ((size_t)snprintf(p, sizeof(p), "%s%s", base, ext[i]) < sizeof(p))
			unlink(p);
	}
}

static void *nsys_main(void *arg)
{
	nsys_cap *c = arg;
	char path[PT_CONTROL_PATH_MAX + 16];
	double until = pt_clock_mono() + c->delay_s;
	sigset_t all;
	pt_error e;
	int rc;

	/* Signals are the agent's main thread's business. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pt_error_clear(&e);
	while (!__atomic_load_n(&c->cancel, __ATOMIC_ACQUIRE) && pt_clock_mono() < until) {
		struct timespec ts = { 0, 20 * 1000000L };

		nanosleep(&ts, NULL);
	}
	remove_capture_files(c->base, 0);
	if (__atomic_load_n(&c->cancel, __ATOMIC_ACQUIRE)) {
		rc = pt_error_set(&e, PT_EIO, -1, "cancelled before the window");
		goto out;
	}
	rc = pt_nsys_capture_run_cancel(c->nsys, c->base, c->seconds, c->hz, &c->cancel, &e);
	if (rc) {
		/* The message names nsys, the step and its log: no subject. */
		e.subject[0] = 0;
		goto out;
	}
	snprintf(path, sizeof(path), "%s.sqlite", c->base);
	pt_error_clear(&e);
	if ((rc = pt_samples_init(&c->got))) {
		pt_error_set(&e, rc, -1, "out of memory");
		goto out;
	}
	rc = pt_nsys_read_samples(path, &c->got, &e);
	if (rc) {
		pt_samples_free(&c->got);
		goto out;
	}
	/* Ours beside the sampler's series of the same names (nvlink_tx in %
	 * here, in B/s from NVML): the label keeps them apart. */
	for (size_t i = 0; i < c->got.n && rc == PT_OK; i++)
		if (pt_samples_set_str(&c->got.s[i].label, "nsys"))
			rc = pt_error_set(&e, PT_ENOMEM, -1, "out of memory");
	if (rc)
		pt_samples_free(&c->got);
out:
	c->rc = rc;
	if (rc)
		pt_error_format(&e, c->msg, sizeof(c->msg));
	/* The export is in our samples now; a failure keeps nsys's log. */
	remove_capture_files(c->base, rc != PT_OK);
	__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void nsys_note(struct pt_agent_hw *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void nsys_note(struct pt_agent_hw *h, const char *fmt, ...)
{
	size_t len = strlen(h->nsys_note);
	va_list ap;

	if (len + 3 >= sizeof(h->nsys_note))
		return;
	if (len) {
		memcpy(h->nsys_note + len, "; ", 3);
		len += 2;
	}
	va_start(ap, fmt);
	vsnprintf(h->nsys_note + len, sizeof(h->nsys_note) - len, fmt, ap);
	va_end(ap);
}

/* When and how long to capture: from the heartbeats of this host's
 * expected workers (the furthest step, the slowest rate), the window
 * [start_step, start_step + steps) is about lead seconds away and lasts
 * win seconds.  Unknown rate: from now, as long as allowed (nsys_max_s,
 * and NSYS_MAX_SAMPLES at hz).  Too long a capture loses its margin before
 * the window first, then the window's end; *need is the length it would
 * have had. */
static void nsys_plan(pt_agent *a, const pt_trigger *t, int hz, double now, double *delay,
		      double *secs, double *need)
{
	pt_worker_entry *w = NULL;
	size_t n = 0;
	double rate = 0, cur = 0, max = a->nsys_max_s;
	int any = 0;

	if (max > NSYS_MAX_SAMPLES / hz)
		max = NSYS_MAX_SAMPLES / hz;
	if (a->ndir[0] && a->nlocal) {
		/* This node's workers, from the node channel. */
		w = x_reallocarray(NULL, a->nlocal, sizeof(*w));
		n = w ? a->nlocal : 0;
		for (size_t i = 0; i < n; i++)
			w[i] = a->local[i].e;
	} else if (pt_control_workers(a->dir, &w, &n, NULL) != PT_OK) {
		n = 0;
	}
	for (size_t i = 0; i < n; i++) {
		const pt_worker_entry *e = &w[i];
		double est;
		int listed = t->nworkers == 0;

		for (size_t k = 0; k < t->nworkers && !listed; k++)
			listed = !strcmp(t->workers[k], e->info.id);
		if (strcmp(e->info.host, a->host) || !listed || !e->has_hb || !(e->hb.rate > 0) ||
		    !pt_control_worker_alive(e, now, 60, a->node))
			continue;
		est = pt_trigger_est_step(e, now);
		if (!any || est > cur)
			cur = est;
		if (!any || e->hb.rate < rate)
			rate = e->hb.rate;
		any = 1;
	}
	x_free(w);
	if (any) {
		double lead = ((double)t->start_step - cur) / rate, win = (double)t->steps / rate;
		double end;

		if (lead < 0)
			lead = 0;
		end = lead + win * 1.25 + NSYS_POST_S;
		*delay = lead - (NSYS_PRE_S + 0.25 * lead);
		if (*delay < 0)
			*delay = 0;
		if (end - *delay > max && lead - NSYS_PRE_S > *delay)
			*delay = lead - NSYS_PRE_S;
		*need = end - *delay;
	} else {
		*delay = 0;
		*need = max;
	}
	*secs = *need < max ? *need : max;
	if (t->deadline > 0 && now + *delay + *secs > t->deadline)
		*secs = t->deadline - now - *delay;
}

/* An active trigger asking for nsys (or the node's default): start the
 * capture thread.  Anything in the way becomes the note. */
static void nsys_begin(pt_agent *a, const pt_trigger *t)
{
	struct pt_agent_hw *h = a->hw;
	int64_t want = t->nsys_gpu_metrics > 0 ? t->nsys_gpu_metrics : a->nsys_hz;
	int hz = want <= 0 ? 0 : want < PT_NSYS_HZ_MIN ? PT_NSYS_HZ_MIN
		 : want > PT_NSYS_HZ_MAX ? PT_NSYS_HZ_MAX : (int)want;
	char dir[PT_CONTROL_PATH_MAX], name[PT_CONTROL_HOST_MAX + 16];
	double now = pt_control_now(), need = 0;
	int local = t->nworkers == 0;
	nsys_cap *c;
	pt_error e;

	if (hz <= 0)
		return;
	for (size_t i = 0; i < t->nworkers && !local; i++)
		local = mine(a, t->workers[i]);
	if (!local)
		return;  /* no worker of this node in the window: nothing to join */
	c = x_calloc(1, sizeof(*c));
	if (!c) {
		nsys_note(h, "nsys: out of memory");
		return;
	}
	c->hz = hz;
	if (!pt_nsys_find("nsys", c->nsys, sizeof(c->nsys))) {
		nsys_note(h, "nsys: not found on PATH: no GPU metrics at %d Hz", hz);
		alog(a, "%s: nsys gpu metrics at %d Hz asked for, but 'nsys' is not on PATH: skipped",
		     t->id, hz);
		x_free(c);
		return;
	}
	nsys_plan(a, t, hz, now, &c->delay_s, &c->seconds, &need);
	if (c->seconds < 0.1) {
		nsys_note(h, "nsys: no time left before the trigger's deadline: no GPU metrics");
		alog(a, "%s: nsys: no time left before the trigger's deadline: skipped", t->id);
		x_free(c);
		return;
	}
	if (need > c->seconds + 0.001)
		nsys_note(h, "nsys: capture limited to %.3g s (the window needs about %.3g s)",
			  c->seconds, need);
	hw_file_name(a->host, name, sizeof(name));
	name[strlen(name) - 5] = 0;  /* without ".json" */
	pt_error_clear(&e);
	if ((size_t)snprintf(dir, sizeof(dir), "%s/.nsys-%s", a->spool, name + 3) >= sizeof(dir) ||
	    (size_t)snprintf(c->base, sizeof(c->base), "%s/%s", dir, name) >= sizeof(c->base) ||
	    pt_control_mkdirs(dir, &e) != PT_OK) {
		char buf[1024];

		nsys_note(h, "nsys: cannot create '%s': %s", dir, e.msg[0] ? e.msg : "path too long");
		alog(a, "%s: nsys: %s: skipped", t->id, pt_error_format(&e, buf, sizeof(buf)));
		x_free(c);
		return;
	}
	c->began = now;
	c->wait_until = now + c->delay_s + c->seconds + NSYS_EXPORT_S + c->seconds;
	if (t->deadline > 0 && c->wait_until > t->deadline - 5)
		c->wait_until = t->deadline - 5;
	if (pthread_create(&c->th, NULL, nsys_main, c)) {
		nsys_note(h, "nsys: cannot start the capture thread: %s", strerror(errno));
		alog(a, "%s: nsys: cannot start the capture thread: skipped", t->id);
		x_free(c);
		return;
	}
	c->started = 1;
	h->cap = c;
	alog(a, "%s: nsys gpu metrics at %d Hz for %.2f s, starting in %.2f s (%s)", t->id, hz,
	     c->seconds, c->delay_s, c->nsys);
}

/* Take the capture's result when it is there (once): its series, or the
 * reason in the note.  A capture still running after wait_until is given
 * up (cancelled): the traces are summarised without it. */
static void nsys_collect(pt_agent *a, double now)
{
	struct pt_agent_hw *h = a->hw;
	nsys_cap *c = h ? h->cap : NULL;

	if (!c || h->cap_used)
		return;
	if (!__atomic_load_n(&c->done, __ATOMIC_ACQUIRE)) {
		if (now < c->wait_until)
			return;
		__atomic_store_n(&c->cancel, 1, __ATOMIC_RELEASE);
		h->cap_used = 1;
		nsys_note(h, "nsys: the capture had not finished %.0f s after it began: not used",
			  now - c->began);
		alog(a, "%s: nsys capture not finished after %.0f s: traces summarised without it",
		     h->tid, now - c->began);
		return;
	}
	pthread_join(c->th, NULL);
	c->started = 0;
	h->cap_used = 1;
	if (c->rc != PT_OK) {
		/* Logged once: the capture is not tried again for this trigger. */
		nsys_note(h, "nsys: %s", c->msg);
		alog(a, "%s: nsys capture failed: %s", h->tid, c->msg);
		return;
	}
	if (!c->got.n) {
		pt_samples_free(&c->got);
		nsys_note(h, "nsys: the export holds no GPU metric we use");
		alog(a, "%s: nsys capture done: no GPU metric we use in the export", h->tid);
		return;
	}
	h->nsys = c->got;
	memset(&c->got, 0, sizeof(c->got));
	h->have_nsys = 1;
	{
		size_t n = 0;

		for (size_t i = 0; i < h->nsys.n; i++)
			n += h->nsys.s[i].n;
		alog(a, "%s: nsys capture done: %zu series, %zu samples", h->tid, h->nsys.n, n);
	}
}

/* Traces should wait: a capture runs and may still be used. */
static int nsys_pending(pt_agent *a, double now)
{
	struct pt_agent_hw *h = a->hw;

	nsys_collect(a, now);
	return h && h->cap && !h->cap_used;
}

/* Stop and forget the capture (agent exit, next trigger). */
static void nsys_drop(struct pt_agent_hw *h)
{
	nsys_cap *c = h->cap;

	if (c) {
		__atomic_store_n(&c->cancel, 1, __ATOMIC_RELEASE);
		if (c->started)
			pthread_join(c->th, NULL);
		pt_samples_free(&c->got);
		x_free(c);
		h->cap = NULL;
	}
	if (h->have_nsys)
		pt_samples_free(&h->nsys);
	h->have_nsys = 0;
}

/* ---- the node's samples -------------------------------------------------------------- */

/* The samples so far into out: the sampler's (when it runs) and, first,
 * the nsys series, borrowed from h->nsys (*borrowed = how many; free with
 * samples_release), so that the join prefers the 10 kHz series to NVML's
 * of the same name; the note says what nsys could not do, the source
 * gains "+nsys". */
static int hw_collect_samples(pt_agent *a, pt_samples *out, size_t *borrowed)
{
	struct pt_agent_hw *h = a->hw;
	int rc;

	*borrowed = 0;
	rc = h->s ? pt_sampler_snapshot(h->s, out) : pt_samples_init(out);
	if (rc)
		return rc;
	if (!h->s && pt_samples_set_str(&out->host, a->host))
		goto oom;
	if (h->nsys_note[0]) {
		pt_sb sb = { 0 };

		pt_sb_adds(&sb, out->note);
		if (out->note[0])
			pt_sb_adds(&sb, "; ");
		pt_sb_adds(&sb, h->nsys_note);
		rc = sb.oom ? PT_ENOMEM : pt_samples_set_str(&out->note, sb.buf);
		pt_sb_free(&sb);
		if (rc)
			goto oom;
	}
	if (h->have_nsys && h->nsys.n) {
		size_t n = h->nsys.n + out->n;
		pt_series *arr = x_reallocarray(NULL, n ? n : 1, sizeof(*arr));
		char src[96];

		if (!arr)
			goto oom;
		memcpy(arr, h->nsys.s, h->nsys.n * sizeof(*arr));
		if (out->n)
			memcpy(arr + h->nsys.n, out->s, out->n * sizeof(*arr));
		x_free(out->s);
		out->s = arr;
		out->n = out->cap = n;
		*borrowed = h->nsys.n;
		snprintf(src, sizeof(src), "%s%snsys", out->source, out->source[0] ? "+" : "");
		if (pt_samples_set_str(&out->source, src))
			goto oom;
		if (h->nsys.interval_ns > 0 &&
		    (out->interval_ns <= 0 || h->nsys.interval_ns < out->interval_ns))
			out->interval_ns = h->nsys.interval_ns;
	}
	return PT_OK;
oom:
	for (size_t i = 0; i < *borrowed; i++)
		memset(&out->s[i], 0, sizeof(out->s[i]));
	*borrowed = 0;
	pt_samples_free(out);
	return PT_ENOMEM;
}

static void samples_release(pt_samples *h, size_t borrowed)
{
	for (size_t i = 0; i < borrowed && i < h->n; i++)
		memset(&h->s[i], 0, sizeof(h->s[i]));
	pt_samples_free(h);
}

static void hw_snap_free(struct pt_agent_hw *h)
{
	if (h->have_snap)
		samples_release(&h->snap, h->snap_borrowed);
	h->have_snap = 0;
	h->snap_borrowed = 0;
}

/* An active trigger: start sampling for it (once), and the nsys capture
 * when asked for. */
static void hw_begin(pt_agent *a, const pt_trigger *t)
{
	struct pt_agent_hw *h;
	pt_sampler_options o;
	pt_error e;
	int gpus = 0, nics = 0, ib = 0, cpus = 0;
	const char *note;

	if (a->hw_off || (a->hw && !strcmp(a->hw->tid, t->id)))
		return;
	hw_drop(a);
	h = x_calloc(1, sizeof(*h));
	if (!h)
		return;
	a->hw = h;
	snprintf(h->tid, sizeof(h->tid), "%s", t->id);
	snprintf(h->raw_dir, sizeof(h->raw_dir), "%s", t->raw_dir);
	hw_file_name(a->host, h->name, sizeof(h->name));
	h->save_raw = t->save_raw;
	o = a->hw_opt;
	if (!o.host)
		o.host = a->host;
	pt_error_clear(&e);
	h->s = pt_sampler_new(&o, &e);
	if (!h->s || pt_sampler_start(h->s, &e) != PT_OK) {
		char buf[1024];

		alog(a, "%s: no hardware sampling: %s", t->id, pt_error_format(&e, buf, sizeof(buf)));
		pt_sampler_free(h->s);
		h->s = NULL;
	} else {
		pt_sampler_inventory(h->s, &gpus, &nics, &ib, &cpus);
		note = pt_sampler_note(h->s);
		alog(a, "%s: hardware sampling every %.3g ms (%.3g ms for utilisation, clocks, cpu): "
		     "%d gpu%s, %d nic%s, %d infiniband port%s, %d cpu line%s%s%s", t->id,
		     (double)o.interval_ns / 1e6,
		     (double)(o.slow_interval_ns > o.interval_ns ? o.slow_interval_ns
								 : o.interval_ns) / 1e6,
		     gpus < 0 ? 0 : gpus, gpus == 1 ? "" : "s", nics, nics == 1 ? "" : "s", ib,
		     ib == 1 ? "" : "s", cpus, cpus == 1 ? "" : "s", *note ? "; skipped: " : "", note);
	}
	nsys_begin(a, t);
}

/* Traces arrived: the samples so far go to their summaries (in memory:
 * a file would be parsed again for every trace). */
static void hw_snapshot(pt_agent *a, char **wids, size_t n)
{
	struct pt_agent_hw *h = a->hw;

	if (!h || h->ended)
		return;
	nsys_collect(a, pt_control_now());
	for (size_t i = 0; i < n; i++) {
		int64_t rank = -1;
		char base[PT_CONTROL_ID_MAX + 8];

		snprintf(base, sizeof(base), "%s.json", wids[i]);
		pt_summary_parse_worker_name(base, NULL, 0, &rank, NULL);
		if (rank == 0)
			h->rank0 = 1;
	}
	hw_snap_free(h);
	if (!h->s && !h->have_nsys && !h->nsys_note[0])
		return;
	h->have_snap = hw_collect_samples(a, &h->snap, &h->snap_borrowed) == PT_OK;
}

/* Sampling over: the whole record beside the raw traces, in the run's
 * raw_trace/, when this node's raw traces are kept (all, or master with
 * rank 0 here).  Otherwise the samples live on only in the summaries (the
 * join, the timelines): the spool is emptied as before.  A capture still
 * running is cancelled (not waited for: hw_drop joins it). */
static void hw_end(pt_agent *a)
{
	struct pt_agent_hw *h = a->hw;
	pt_samples all;
	size_t borrowed = 0;
	double fast = 0, slow = 0;

	if (!h || h->ended)
		return;
	h->ended = 1;
	nsys_collect(a, pt_control_now());
	if (h->cap && !h->cap_used) {
		__atomic_store_n(&h->cap->cancel, 1, __ATOMIC_RELEASE);
		h->cap_used = 1;
		alog(a, "%s: nsys capture cancelled: the sampling ended before it finished", h->tid);
	}
	if (h->s) {
		pt_sampler_stop(h->s);
		pt_sampler_cost(h->s, &fast, &slow);
	}
	if ((h->s || h->have_nsys || h->nsys_note[0]) &&
	    hw_collect_samples(a, &all, &borrowed) == PT_OK) {
		size_t n = 0;

		for (size_t i = 0; i < all.n; i++)
			n += all.s[i].n;
		if (h->raw_dir[0] &&
		    (h->save_raw == PT_RAW_ALL || (h->save_raw == PT_RAW_MASTER && h->rank0)))
			hw_write(a, &all, h->raw_dir);
		if (h->s)
			alog(a, "%s: hardware sampling done: %zu series, %zu samples (%.1f us per fast "
			     "sample, %.1f us per slow one)", h->tid, all.n, n, fast / 1e3, slow / 1e3);
		samples_release(&all, borrowed);
	}
	pt_sampler_free(h->s);
	h->s = NULL;
	hw_snap_free(h);
}

static void hw_drop(pt_agent *a)
{
	if (!a->hw)
		return;
	hw_end(a);
	nsys_drop(a->hw);
	x_free(a->hw);
	a->hw = NULL;
}

/* The worker's GPU for its timelines: its local rank, from its
 * registration (CUDA numbers the devices a node's ranks use that way in
 * the usual one-GPU-per-rank launch); -1 (every GPU) when unknown. */
static int hw_worker_gpu(pt_agent *a, const char *wid)
{
	char path[PT_CONTROL_PATH_MAX];
	char *buf = NULL;
	pt_json *j;
	int gpu = -1;

	for (size_t i = 0; i < a->nlocal; i++)
		if (!strcmp(a->local[i].e.info.id, wid)) {
			int64_t lr = a->local[i].e.info.local_rank;

			return lr >= 0 && lr < 4096 ? (int)lr : -1;
		}
	if (pt_control_record_path(path, sizeof(path), a->dir, "workers", NULL, wid) ||
	    pt_control_read_file(path, 1 << 16, &buf, NULL, NULL))
		return -1;
	j = pt_json_parse(buf, strlen(buf), NULL);
	if (j) {
		double lr = pt_json_num(j, "local_rank", -1);

		gpu = lr >= 0 && lr < 4096 ? (int)lr : -1;
	}
	pt_json_free(j);
	x_free(buf);
	return gpu;
}

/* Give summary s the compact timelines of its window for PerfDisplay
 * (docs/hardware.md, "Timelines"): at most 120 points per series. */
static void hw_timelines(pt_agent *a, pt_summary *s, const char *wid)
{
#ifdef PT_SUMMARY_HW_SERIES
	pt_samples *t;
	int64_t start = (int64_t)(s->window_start_us * 1000.0);
	int64_t end = start + (int64_t)(s->window_ms * 1e6);

	if (!a->hw || !a->hw->have_snap || s->error || s->window_ms <= 0)
		return;
	t = x_calloc(1, sizeof(*t));
	if (!t)
		return;
	if (pt_sampler_worker_series(&a->hw->snap, start, end, hw_worker_gpu(a, wid), 120, t)) {
		x_free(t);
		return;
	}
	s->hw_series = t;
#else
	/* The summary has no field for timelines yet (PT_SUMMARY_HW_SERIES). */
	(void)a;
	(void)s;
	(void)wid;
	(void)hw_worker_gpu;
#endif
}

/* Stop when every expected worker of this host delivered (a trigger naming
 * no workers gives no such list) or the trigger's deadline passed. */
static void hw_check(pt_agent *a, const pt_trigger *t, double now)
{
	size_t i, mine_n = 0, done = 0;

	if (!a->hw || a->hw->ended)
		return;
	for (i = 0; i < t->nworkers; i++) {
		if (!mine(a, t->workers[i]))
			continue;
		mine_n++;
		done += is_done(a, t->workers[i]);
	}
	if ((mine_n && done == mine_n) || (t->deadline > 0 && now > t->deadline))
		hw_end(a);
}

/* ---- one trace ---------------------------------------------------------------- */

/* A durable copy (the fsync rule in util/file.h): the source is deleted
 * once this returns. */
static int copy_file(const char *from, const char *to)
{
	char buf[1 << 16], tmp[PT_CONTROL_PATH_MAX + 64];
	int in, out, rc = -1;
	ssize_t r;

	in = open(from, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0)
		return -1;
	out = pt_file_create_tmp(to, 0644, tmp, sizeof(tmp), NULL);
	if (out < 0) {
		close(in);
		return -1;
	}
	while ((r = read(in, buf, sizeof(buf))) > 0 || (r < 0 && errno == EINTR))
		if (r > 0 && pt_file_write_all(out, buf, (size_t)r) != 0)
			break;
	close(in);
	if (pt_file_close_tmp(out, tmp, to, PT_FILE_DURABLE, NULL) == PT_OK && r == 0 &&
	    pt_file_commit_tmp(tmp, to, NULL) == PT_OK)
		rc = 0;
	if (tmp[0])
		unlink(tmp);
	return rc;
}

/* Move a file, across file systems if needed (spool -> output dir). */
static int move_file(const char *from, const char *to)
{
	if (rename(from, to) == 0)
		return 0;
	if (errno != EXDEV)
		return -1;
	if (copy_file(from, to) != 0)
		return -1;
	unlink(from);
	return 0;
}

int pt_agent_process(pt_agent *a, const pt_trigger *t, const char *wid, const char *trace,
		     pt_error *err)
{
	char host[PT_CONTROL_HOST_MAX], spath[PT_CONTROL_PATH_MAX], kept[PT_CONTROL_PATH_MAX];
	int64_t rank = -1, pid = -1;
	pt_summary *s;
	pt_error e;
	pt_sb sb = { 0 };
	int keep, rc = PT_OK, failed = 0;
	char base[PT_CONTROL_ID_MAX + 8];
	double t0 = pt_clock_mono();
	pt_summary_options so;
	const pt_samples *hw[1];

	snprintf(base, sizeof(base), "%s.json", wid);
	pt_summary_parse_worker_name(base, host, sizeof(host), &rank, &pid);
	pt_error_clear(&e);
	so = a->sopt;
	if (a->hw && a->hw->have_snap) {
		/* This node's samples so far: they cover the window, which ended
		 * before the trace was exported (docs/hardware.md, "The join"). */
		hw[0] = &a->hw->snap;
		so.hw = hw;
		so.nhw = 1;
	}
	s = pt_summary_from_trace(trace, &so, &e);
	if (!s) {
		char buf[1024];

		pt_error_format(&e, buf, sizeof(buf));
		alog(a, "cannot summarise '%s': %s", trace, buf);
		s = pt_summary_failed(trace, e.msg[0] ? e.msg : "unreadable trace");
		failed = 1;
		if (!s)
			return pt_error_set(err, PT_ENOMEM, -1, "out of memory");
	} else {
		hw_timelines(a, s, wid);
	}
	/* Raw-trace policy: keep rank 0's (master) or everyone's (all) in
	 * <run>/raw_trace/, delete the rest. */
	keep = t->save_raw == PT_RAW_ALL || (t->save_raw == PT_RAW_MASTER && rank == 0);
	if (keep && t->raw_dir[0] &&
	    (size_t)snprintf(kept, sizeof(kept), "%s/%s.json", t->raw_dir, wid) < sizeof(kept)) {
		if (pt_control_mkdirs(t->raw_dir, &e) == PT_OK && move_file(trace, kept) == 0) {
			char *f = x_strndup(kept, strlen(kept));

			if (f) {
				x_free(s->file);
				s->file = f;
			}
		} else {
			alog(a, "cannot keep raw trace '%s' in '%s': %s", trace, t->raw_dir,
			     strerror(errno));
			unlink(trace);
		}
	} else {
		/* Deleted: the report names the trace by its file name only. */
		char *f = x_strndup(base, strlen(base));

		if (f) {
			x_free(s->file);
			s->file = f;
		}
		unlink(trace);
	}
	pt_summary_write(s, &sb);
	if (pt_control_record_path(spath, sizeof(spath), a->dir, "summaries", t->id, wid)) {
		rc = pt_error_set(err, PT_EINVAL, -1, "path too long");
	} else if (sb.oom) {
		rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
	} else {
		/* A result, maybe the only trace of it left: durable.  Its digest
		 * first (docs/summary.md "Digests"): the trigger that sees the
		 * summary finds the digest beside it. */
		char dpath[PT_CONTROL_PATH_MAX + 16];
		pt_sb dg = { 0 };

		if (!pt_digest_path(spath, dpath, sizeof(dpath)) &&
		    pt_digest_write(s, sb.len, &dg) == PT_OK &&
		    pt_control_write_durable(dpath, dg.buf, dg.len, NULL))
			alog(a, "%s: cannot write the digest of %s", t->id, wid);
		pt_sb_free(&dg);
		rc = pt_control_write_durable(spath, sb.buf, sb.len, err);
	}
	if (rc == PT_OK)
		alog(a, "%s: %s in %.2f s%s", t->id, wid, pt_clock_mono() - t0,
		     failed ? " (unreadable trace)" : keep ? " (raw trace kept)" : "");
	if (rc == PT_OK && !failed)
		__atomic_add_fetch(&a->processed, 1, __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&a->failed, 1, __ATOMIC_RELAXED);
	pt_sb_free(&sb);
	pt_summary_free(s);
	return rc;
}

/* ---- poll --------------------------------------------------------------------- */

typedef struct job {
	pt_agent *a;
	const pt_trigger *t;
	char **wids;
} job;

/* One worker's trace (pt_pool_for: each index only logs). */
static void job_one(void *arg, size_t i)
{
	job *j = arg;
	char trace[PT_CONTROL_PATH_MAX];
	pt_error e;

	if ((size_t)snprintf(trace, sizeof(trace), "%s/%s/%s.json", j->a->spool, j->t->id,
			     j->wids[i]) >= sizeof(trace))
		return;
	pt_error_clear(&e);
	if (pt_agent_process(j->a, j->t, j->wids[i], trace, &e)) {
		char buf[1024];

		alog(j->a, "%s", pt_error_format(&e, buf, sizeof(buf)));
	}
}

static int is_done(const pt_agent *a, const char *wid)
{
	for (size_t i = 0; i < a->ndone; i++)
		if (!strcmp(a->done[i], wid))
			return 1;
	return 0;
}

static int mine(const pt_agent *a, const char *name)
{
	size_t hl = strlen(a->host);

	return !strncmp(name, a->host, hl) && name[hl] == '_';
}

/* Remove this host's leftovers in the spool of triggers other than keep
 * (finished, expired or cancelled ones).  Everything relative to the
 * spool's descriptor and without following links: a link planted in the
 * spool (by another user, or pointing anywhere) is never entered. */
static void clean_spool(pt_agent *a, const char *keep)
{
	int dfd = open(a->spool, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *de;
	struct stat spst;

	/* The spool passed pt_control_mkdirs at start: its owner is us (the
	 * overflow user for root on a root-squashed NFS), as must be every
	 * folder in it we empty. */
	if (!d || fstat(dfd, &spst) != 0) {
		if (d) {
			closedir(d);
			return;
		}
		if (dfd >= 0)
			close(dfd);
		return;
	}
	while ((de = readdir(d))) {
		DIR *s;
		struct dirent *fe;
		int sfd, removed = 0;
		struct stat sst;

		if (de->d_name[0] == '.' || (keep && !strcmp(de->d_name, keep)))
			continue;
		sfd = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sfd < 0)
			continue;
		if (fstat(sfd, &sst) != 0 || sst.st_uid != spst.st_uid || !(s = fdopendir(sfd))) {
			close(sfd);
			continue;
		}
		while ((fe = readdir(s))) {
			const char *n = fe->d_name[0] == '.' ? fe->d_name + 1 : fe->d_name;
			struct stat st;

			if (!strcmp(fe->d_name, ".") || !strcmp(fe->d_name, "..") || !mine(a, n))
				continue;
			/* A hidden file may be an export in progress: only old ones. */
			if (fe->d_name[0] == '.' &&
			    (fstatat(sfd, fe->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
			     pt_control_now() - (double)st.st_mtime < 600))
				continue;
			if (unlinkat(sfd, fe->d_name, 0) == 0)
				removed++;
		}
		closedir(s);
		if (unlinkat(dfd, de->d_name, AT_REMOVEDIR) == 0 && removed)
			alog(a, "removed %d leftover file%s of trigger %s from the spool", removed,
			     removed == 1 ? "" : "s", de->d_name);
	}
	closedir(d);
}

int pt_agent_poll(pt_agent *a, pt_error *err)
{
	pt_trigger t;
	char sdir[PT_CONTROL_PATH_MAX];
	DIR *d;
	struct dirent *de;
	char **todo = NULL;
	size_t ntodo = 0, cap = 0;
	int rc = PT_OK, handled = 0;
	/* Inside pt_agent_tick: its clock (bench/nodesim.c, the tests). */
	double now = a->in_run && a->tick_now > 0 ? a->tick_now : pt_control_now();

	rc = refresh_trigger(a, now, err);
	if (rc)
		return rc;
	/* A shallow copy: a->trig keeps owning the worker list. */
	t = a->trig;
	if (!t.id[0] || strcmp(t.state, PT_TRIGGER_ACTIVE)) {
		hw_end(a);
		if (now - a->last_clean > 5) {
			a->last_clean = now;
			clean_spool(a, NULL);
		}
		goto out;
	}
	if (strcmp(t.id, a->tid)) {
		clear_done(a);
		snprintf(a->tid, sizeof(a->tid), "%s", t.id);
		alog(a, "trigger %s: steps %lld-%lld, raw traces: %s", t.id, (long long)t.start_step,
		     (long long)(t.start_step + t.steps - 1), pt_control_raw_name(t.save_raw));
		clean_spool(a, t.id);
	}
	hw_begin(a, &t);
	a->last_alive = now;
	if ((size_t)snprintf(sdir, sizeof(sdir), "%s/%s", a->spool, t.id) >= sizeof(sdir))
		goto out;
	d = opendir(sdir);
	if (!d)
		goto out;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char *w;

		if (!pt_control_is_record(de->d_name) || !mine(a, de->d_name))
			continue;
		w = x_strndup(de->d_name, len - 5);
		if (!w || is_done(a, w) || X_GROW(todo, cap, ntodo + 1)) {
			x_free(w);
			continue;
		}
		todo[ntodo++] = w;
	}
	closedir(d);
	/* The nsys capture's series should be in these traces' summaries:
	 * they wait for it (bounded by its wait_until, before the deadline). */
	if (ntodo && nsys_pending(a, now)) {
		if (!a->hw->cap_wait_logged)
			alog(a, "%s: %zu trace%s wait%s for the nsys capture (at most %.0f s)", t.id,
			     ntodo, ntodo == 1 ? "" : "s", ntodo == 1 ? "s" : "",
			     a->hw->cap->wait_until - now);
		a->hw->cap_wait_logged = 1;
		goto out;
	}
	if (ntodo) {
		job j = { .a = a, .t = &t, .wids = todo };

		hw_snapshot(a, todo, ntodo);
		/* At most 16 threads, whatever --jobs says. */
		pt_pool_for(ntodo, a->jobs > 16 ? 16 : a->jobs < 1 ? 1 : a->jobs, job_one, &j);
		for (size_t k = 0; k < ntodo; k++) {
			char **nd = x_reallocarray(a->done, a->ndone + 1, sizeof(char *));

			if (!nd)
				break;
			a->done = nd;
			a->done[a->ndone++] = todo[k];
			todo[k] = NULL;
			handled++;
		}
	}
out:
	if (t.id[0] && !strcmp(t.state, PT_TRIGGER_ACTIVE))
		hw_check(a, &t, now);
	for (size_t k = 0; k < ntodo; k++)
		x_free(todo[k]);
	x_free(todo);
	return rc ? rc : handled;
}

/* Any live worker of this host?  From the node channel (no shared
 * listing); without one, from the control directory every 5 s. */
static int host_has_workers(pt_agent *a, double now)
{
	pt_worker_entry *w = NULL;
	size_t n = 0;
	int any = 0;

	if (a->ndir[0]) {
		for (size_t i = 0; i < a->nlocal && !any; i++)
			any = !strcmp(a->local[i].e.info.host, a->host) &&
			      pt_control_worker_alive(&a->local[i].e, now, 60, a->node);
		return any;
	}
	if (pt_control_workers(a->dir, &w, &n, NULL))
		return 1;
	for (size_t i = 0; i < n && !any; i++)
		any = !strcmp(w[i].info.host, a->host) &&
		      pt_control_worker_alive(&w[i], now, 60, a->node);
	x_free(w);
	return any;
}

int pt_agent_tick(pt_agent *a, double now)
{
	pt_error e;

	a->in_run = 1;
	a->tick_now = now;
	if (now - a->lock_last >= a->lock_check_s) {
		a->lock_last = now;
		if (!pt_agent_owns_lock(a)) {
			alog(a, "lock taken over by another agent: exiting");
			a->locked = 0;
			return 1;
		}
	}
	refresh_stacks(a, now);
	pt_error_clear(&e);
	if (pt_agent_poll(a, &e) < 0) {
		char buf[1024];

		alog(a, "%s", pt_error_format(&e, buf, sizeof(buf)));
	}
	if (a->ndir[0]) {
		/* (The poll may have summarised traces for a while.) */
		double later = pt_control_now();

		node_publish(a, later > now ? later : now);
	} else if (now - a->last_hb >= a->hb_s) {
		write_heartbeat(a, now);
	}
	if (a->idle_exit_s > 0 && (a->ndir[0] || now - a->last_workers >= 5)) {
		a->last_workers = now;
		if (host_has_workers(a, now))
			a->last_alive = now;
		else if (now - a->last_alive > a->idle_exit_s) {
			alog(a, "no live worker on %s for %.0f s: exiting", a->host,
			     now - a->last_alive);
			return 1;
		}
	}
	return 0;
}

int pt_agent_run(pt_agent *a, volatile int *stop, pt_error *err)
{
	while (!*stop) {
		struct timespec ts;

		if (pt_agent_tick(a, pt_control_now()))
			break;
		ts.tv_sec = (time_t)a->poll_s;
		ts.tv_nsec = (long)((a->poll_s - (double)ts.tv_sec) * 1e9);
		nanosleep(&ts, NULL);
	}
	a->in_run = 0;
	pt_agent_leave(a, pt_control_now());
	(void)err;
	return PT_OK;
}
