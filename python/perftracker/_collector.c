/*
 * _collector.c - the collector inside every training process (C extension
 * of the `perftracker` Python package).
 *
 * First stage of the online flow (docs/design.md): step() counts iterations; a
 * background thread registers the worker in the control directory, writes
 * heartbeats, polls for a trigger and arms the profiling window; when the
 * step count reaches the armed step, step() calls the thin Python layer
 * (_window.py) that drives torch.profiler, and, where torch cannot record
 * Python functions (no Kineto), runs the Python function tracer below.  The
 * background thread then merges the tracer's events into the exported trace
 * and drops it in the node-local spool for the agent (src/agent).
 *
 * A watchdog thread, which never takes the GIL, writes the Python stacks of
 * every thread to the control directory on request and when no step came
 * for a while (hang diagnosis, docs/hang.md).
 *
 * Rules: step() never does I/O, never takes a lock and never raises; every
 * error is logged once to stderr and the collector goes quiet.
 */
#include "collector_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "control/control.h"
#include "util/file.h"
#include "control/nodechan.h"
#include "util/strbuf.h"

extern char **environ;

struct collector G = { .next_action = NO_ACTION, .mu = PTHREAD_MUTEX_INITIALIZER };

/* ---- background thread ---------------------------------------------------- */

static void io_error(const char *what, const pt_error *e)
{
	char buf[1024];

	if (!G.io_failing)
		plog("%s: %s", what, pt_error_format(e, buf, sizeof(buf)));
	else
		dlog("%s: %s", what, pt_error_format(e, buf, sizeof(buf)));
	G.io_failing = 1;
}

static void write_status(const window *w, const char *state)
{
	pt_wstatus s;
	pt_error e;

	memset(&s, 0, sizeof(s));
	snprintf(s.state, sizeof(s.state), "%s", state);
	snprintf(s.host, sizeof(s.host), "%s", G.host);
	s.rank = G.info.rank;
	s.start_step = w->actual_start ? w->actual_start : w->start;
	s.end_step = w->end ? w->end : s.start_step + w->steps;
	s.time = pt_control_now();
	if (!strcmp(state, PT_STATE_TRACED))
		snprintf(s.trace, sizeof(s.trace), "%s", w->final_path);
	if (!strcmp(state, PT_STATE_FAILED))
		snprintf(s.error, sizeof(s.error), "%s", w->error);
	/* The node channel always gets it (the agent publishes it in the node
	 * file); the shared directory only when no agent carries it. */
	G.rec.has_status = 1;
	snprintf(G.rec.tid, sizeof(G.rec.tid), "%s", w->tid);
	G.rec.st = s;
	G.rec_dirty = G.ndir[0] != 0;
	G.direct_status = __atomic_load_n(&G.mode, __ATOMIC_RELAXED) != M_AGENT;
	if (!G.direct_status) {
		dlog("status %s %s (node channel)", w->tid, state);
		return;
	}
	pt_error_clear(&e);
	if (pt_control_status_write(G.dir, w->tid, G.info.id, &s, &e))
		io_error("cannot write status", &e);
	else
		dlog("status %s %s", w->tid, state);
}

static int in_list(const pt_trigger *t, const char *id)
{
	if (!t->nworkers)
		return 1;
	for (size_t i = 0; i < t->nworkers; i++)
		if (!strcmp(t->workers[i], id))
			return 1;
	return 0;
}

/* Called by the background thread with G.mu held. */
static void maybe_arm(const pt_trigger *t, double now)
{
	window *w = &G.w;
	int64_t cur = __atomic_load_n(&G.count, __ATOMIC_RELAXED);
	pt_error e;
	char sp[PT_CONTROL_PATH_MAX];

	if (!t->id[0] || strcmp(t->state, PT_TRIGGER_ACTIVE) || !strcmp(t->id, G.handled))
		return;
	if (w->phase != W_IDLE || G.quiet)
		return;
	snprintf(G.handled, sizeof(G.handled), "%s", t->id);
	if (now > t->deadline || !in_list(t, G.info.id)) {
		dlog("ignoring trigger %s (expired or not listed)", t->id);
		return;
	}
	memset(w, 0, sizeof(*w));
	snprintf(w->tid, sizeof(w->tid), "%s", t->id);
	w->start = t->start_step;
	w->steps = t->steps;
	w->deadline = t->deadline;
	w->save_raw = t->save_raw;
	/* Late (the trigger reached us after its start step): start at the
	 * next step; the status records the steps actually profiled. */
	if (w->start <= cur)
		w->start = cur + 1;
	if ((size_t)snprintf(sp, sizeof(sp), "%s/%s", G.spool, t->id) >= sizeof(sp) ||
	    /* torch opens its export with a plain open(): an unguessable name,
	     * so no link can be waiting there for it (docs/collector.md). */
	    (size_t)snprintf(w->torch_path, sizeof(w->torch_path), "%s/.%s.%016llx.torch.json", sp,
			     G.info.id, (unsigned long long)wd_random()) >= sizeof(w->torch_path) ||
	    (size_t)snprintf(w->final_path, sizeof(w->final_path), "%s/%s.json", sp,
			     G.info.id) >= sizeof(w->final_path)) {
		snprintf(w->error, sizeof(w->error), "spool path too long");
		write_status(w, PT_STATE_FAILED);
		w->phase = W_IDLE;
		return;
	}
	pt_error_clear(&e);
	if (pt_control_mkdirs(sp, &e)) {
		char buf[600];

		snprintf(w->error, sizeof(w->error), "%s", pt_error_format(&e, buf, sizeof(buf)));
		io_error("cannot create spool", &e);
		write_status(w, PT_STATE_FAILED);
		w->phase = W_IDLE;
		return;
	}
	/* The buffer is allocated now, off the step path. */
	w->use_tracer = G.trace_events > 0 && tracer_alloc(G.trace_events) == 0;
	w->phase = W_ARMED;
	write_status(w, PT_STATE_ARMED);
	dlog("armed %s: steps [%lld, %lld) at step %lld", w->tid, (long long)w->start,
	     (long long)(w->start + w->steps), (long long)cur);
	__atomic_store_n(&G.next_action, w->start, __ATOMIC_RELEASE);
}

/* Start the node agent unless one runs (local rank 0 only).  posix_spawn is
 * safe in a multi-threaded process where fork() is not; the agent detaches
 * itself (--detach) so the child we reap here exits at once. */
static void ensure_agent(double now)
{
	pid_t pid;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, def;
	char logp[PT_CONTROL_PATH_MAX + PT_CONTROL_HOST_MAX + 8], ad[PT_CONTROL_PATH_MAX];
	int st, logfd = -1;
	struct stat lst, ast;

	if (!G.agent_argv || pt_control_agent_running(G.dir, G.host, now, 30))
		return;
	if (pt_control_record_path(ad, sizeof(ad), G.dir, "agents", NULL, NULL) ||
	    (size_t)snprintf(logp, sizeof(logp), "%s/%s.log", ad, G.host) >= sizeof(logp))
		return;
	if (pt_control_mkdirs(ad, NULL) == PT_OK && stat(ad, &ast) == 0) {
		/* Never through a link, only a plain file of ours: another user
		 * must not get the agent to append to a file of their choosing. */
		static int warned;
		int why = 0;

		logfd = open(logp, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (logfd < 0) {
			why = errno;
		} else if (fstat(logfd, &lst) != 0 || !S_ISREG(lst.st_mode) ||
			   lst.st_uid != ast.st_uid) {
			close(logfd);
			logfd = -1;
			why = EPERM;
		}
		if (logfd < 0 && !warned) {
			warned = 1;
			plog("not logging the agent to '%s': %s", logp,
			     why == ELOOP ? "it is a symbolic link" :
			     why == EPERM ? "not a plain file of ours" : strerror(why));
		}
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	if (logfd >= 0)
		posix_spawn_file_actions_adddup2(&fa, logfd, 2);
	else
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	sigaddset(&def, SIGINT);
	sigaddset(&def, SIGTERM);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &def);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
				      POSIX_SPAWN_SETSID);
	if (posix_spawn(&pid, G.agent_argv[0], &fa, &at, G.agent_argv, environ) == 0) {
		dlog("started agent %s (pid %ld)", G.agent_argv[0], (long)pid);
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	} else {
		plog("cannot start the agent '%s': %s", G.agent_argv[0], strerror(errno));
	}
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (logfd >= 0)
		close(logfd);
}

/* Trigger poll state of one source (the node channel's mirror or the
 * shared trigger.json). */
typedef struct tpoll {
	char dir[PT_CONTROL_PATH_MAX];   /* the directory holding trigger.json */
	char path[PT_CONTROL_PATH_MAX];
	struct timespec mtime;
	off_t size;
	ino_t ino;
	double last_read;
} tpoll;

static void tpoll_init(tpoll *p, const char *dir)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->dir, sizeof(p->dir), "%s", dir);
	pt_control_path(p->path, sizeof(p->path), dir, "trigger.json");
	p->size = -1;
}

/* Stat trigger.json, read it on change (and every reread_s, since NFS
 * attribute caches can hide a change), disarm or arm. */
static void trigger_poll(tpoll *p, double now, double reread_s)
{
	struct stat tst;
	int changed = 0;
	pt_trigger t;

	if (stat(p->path, &tst) == 0) {
		changed = tst.st_mtim.tv_sec != p->mtime.tv_sec ||
			  tst.st_mtim.tv_nsec != p->mtime.tv_nsec || tst.st_size != p->size ||
			  tst.st_ino != p->ino || now - p->last_read > reread_s;
		p->mtime = tst.st_mtim;
		p->size = tst.st_size;
		p->ino = tst.st_ino;
	}
	if (!changed)
		return;
	p->last_read = now;
	if (pt_control_trigger_read(p->dir, &t, NULL) == PT_OK && t.id[0]) {
		pthread_mutex_lock(&G.mu);
		/* Cancelled, finished or replaced before our window came: disarm.
		 * (A window already running ends normally; the agent drops its
		 * trace.) */
		if (G.w.phase == W_ARMED && (strcmp(t.id, G.w.tid) || strcmp(t.state, PT_TRIGGER_ACTIVE))) {
			__atomic_store_n(&G.next_action, NO_ACTION, __ATOMIC_RELEASE);
			G.w.phase = W_IDLE;
			tracer_free();
			dlog("disarmed %s (trigger %s)", G.w.tid, t.state);
		}
		maybe_arm(&t, now);
		pthread_mutex_unlock(&G.mu);
	}
	pt_control_trigger_clear(&t);
}

/* Has the agent published our record?  (Then the records we wrote to the
 * shared directory before it came can go.)  Reads the node channel's copy
 * of the last node file. */
static int published(void)
{
	char p[PT_CONTROL_PATH_MAX], want[PT_CONTROL_ID_MAX + 16];
	char *buf = NULL;
	int yes;

	if (pt_nodechan_file(p, sizeof(p), G.ndir, PT_NODECHAN_NODE) ||
	    pt_control_read_file(p, PT_CONTROL_RECORD_MAX, &buf, NULL, NULL))
		return 0;
	snprintf(want, sizeof(want), "\"id\":\"%s\"", G.info.id);
	yes = strstr(buf, want) != NULL;
	free(buf);
	return yes;
}

#define RATE_SAMPLES 16

static void *bg_main(void *arg)
{
	struct timespec next;
	double last_hb = 0, last_reg_check = 0, last_spawn = -1e9, last_seen_t = 0, last_fb = -1e9;
	double last_probe = -1e9, last_local = 0, t0 = pt_control_now(), last_pub = 0;
	int64_t last_seen = -1, hb_step = -1, local_step = -1;
	int registered = 0, alive = 0, seen_agent = 0, mode = M_DIRECT, prev_mode = -1;
	tpoll shared, local;
	double rs_t[RATE_SAMPLES];
	int64_t rs_c[RATE_SAMPLES];
	int rs_n = 0, rs_i = 0;
	sigset_t all;

	/* Signals belong to the training thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_setname_np(pthread_self(), "pt-collector");
	tpoll_init(&shared, G.dir);
	tpoll_init(&local, G.ndir[0] ? G.ndir : G.dir);
	G.rec.e.info = G.info;
	pthread_mutex_lock(&G.mu);
	while (!G.stop) {
		double now = pt_control_now();
		int64_t cur = __atomic_load_n(&G.count, __ATOMIC_RELAXED);
		pt_error e;
		int hb_ms, hb_due;

		pthread_mutex_unlock(&G.mu);
		pt_error_clear(&e);
		if (cur != last_seen) {
			last_seen = cur;
			last_seen_t = now;
		}
		/* Is the node's agent up?  A local flock probe, twice a second. */
		if (G.ndir[0] && now - last_probe >= 0.5) {
			last_probe = now;
			alive = pt_nodechan_agent_alive(G.ndir);
			seen_agent |= alive;
		}
		mode = alive ? M_AGENT
		       : !G.ndir[0] || (!G.agent_expected && !seen_agent) ? M_DIRECT
		       : !seen_agent && now - t0 < AGENT_GRACE_S ? M_WAIT : M_FALLBACK;
		__atomic_store_n(&G.mode, mode, __ATOMIC_RELAXED);
		if (mode != prev_mode) {
			dlog("mode %s", mode == M_AGENT ? "agent" : mode == M_DIRECT ? "direct" :
			     mode == M_WAIT ? "waiting for the agent" : "fallback (no agent)");
			/* A status the agent carried must now reach the shared
			 * directory itself; the first fallback poll comes at once. */
			if (mode == M_FALLBACK || mode == M_DIRECT) {
				last_fb = -1e9;
				if (G.rec.has_status && !G.direct_status) {
					pt_error_clear(&e);
					if (pt_control_status_write(G.dir, G.rec.tid, G.info.id, &G.rec.st,
								    &e) == PT_OK)
						G.direct_status = 1;
				}
			}
			if (mode == M_AGENT)
				local_step = -2;  /* write our record now */
			prev_mode = mode;
		}
		/* Local rank 0 (re)starts the agent when none holds the node's
		 * lock, at most every 10 s. */
		if (G.agent_argv && !alive && now - last_spawn >= 10) {
			last_spawn = now;
			ensure_agent(now);
			last_probe = -1e9;
		}

		/* Heartbeat data: the step rate over the last samples. */
		hb_ms = mode == M_FALLBACK ? G.heartbeat_ms * FB_HB_FACTOR : G.heartbeat_ms;
		hb_due = (cur != hb_step && (now - last_hb) * 1000 >= hb_ms) || now - last_hb >= 10;
		if (hb_due || (cur != local_step && (now - last_local) * 1000 >= G.heartbeat_ms) ||
		    now - last_local >= 10 || G.rec_dirty || local_step == -2) {
			pt_heartbeat *h = &G.rec.e.hb;
			double rate = 0;

			rs_t[rs_i] = now;
			rs_c[rs_i] = cur;
			rs_i = (rs_i + 1) % RATE_SAMPLES;
			if (rs_n < RATE_SAMPLES)
				rs_n++;
			if (rs_n > 1) {
				int old = (rs_i - rs_n + RATE_SAMPLES * 2) % RATE_SAMPLES;

				if (now - rs_t[old] > 0)
					rate = (double)(cur - rs_c[old]) / (now - rs_t[old]);
			}
			memset(h, 0, sizeof(*h));
			h->step = cur;
			h->step_time = cur > 0 ? last_seen_t : 0;
			h->time = now;
			h->rate = rate;
			pthread_mutex_lock(&G.mu);
			snprintf(h->state, sizeof(h->state), "%s",
				 G.quiet ? PT_STATE_QUIET :
				 G.w.phase == W_ARMED ? PT_STATE_ARMED :
				 G.w.phase == W_PROFILING ? PT_STATE_PROFILING :
				 G.w.phase == W_EXPORT ? PT_STATE_EXPORTING : PT_STATE_IDLE);
			if (G.w.phase != W_IDLE)
				snprintf(h->trigger, sizeof(h->trigger), "%s", G.w.tid);
			pthread_mutex_unlock(&G.mu);
			G.rec.e.has_hb = 1;
			/* The node channel: a tmpfs write, whatever the mode. */
			if (G.ndir[0]) {
				if (pt_nodechan_worker_write(G.ndir, &G.rec, &e) &&
				    pt_nodechan_prepare(G.ndir, NULL) == PT_OK)
					pt_nodechan_worker_write(G.ndir, &G.rec, NULL);
				G.rec_dirty = 0;
				local_step = cur;
				last_local = now;
			}
		}
		if (mode == M_DIRECT || mode == M_FALLBACK) {
			/* Registration, re-done if the record disappeared. */
			if ((!registered && now - last_reg_check > 10) ||
			    (registered && now - last_reg_check > (mode == M_DIRECT ? 30 : 60))) {
				char rp[PT_CONTROL_PATH_MAX];
				struct stat rst;

				last_reg_check = now;
				pt_control_record_path(rp, sizeof(rp), G.dir, "workers", NULL, G.info.id);
				if (!registered || stat(rp, &rst) != 0) {
					if (pt_control_register(G.dir, &G.info, &e) == PT_OK) {
						registered = 1;
						G.io_failing = 0;
						dlog("registered %s in %s", G.info.id, G.dir);
					} else {
						registered = 0;
						io_error("cannot register", &e);
					}
				}
			}
			if (registered && hb_due) {
				if (pt_control_heartbeat_write(G.dir, G.info.id, &G.rec.e.hb, &e) == PT_OK) {
					hb_step = cur;
					G.io_failing = 0;
				} else {
					io_error("cannot write heartbeat", &e);
				}
				last_hb = now;
			}
			/* Trigger poll: every poll_ms directly, every FB_POLL_FACTOR
			 * x poll_ms in fallback. */
			if (registered && !G.quiet &&
			    (mode == M_DIRECT || (now - last_fb) * 1000 >= G.poll_ms * FB_POLL_FACTOR)) {
				last_fb = now;
				trigger_poll(&shared, now, mode == M_DIRECT ? 5 : 0);
			}
		} else {
			if (hb_due) {
				hb_step = cur;
				last_hb = now;
			}
			/* The agent mirrors trigger.json into the node channel:
			 * local stats only (no attribute cache to distrust). */
			if (!G.quiet)
				trigger_poll(&local, now, 60);
			/* Records written to the shared directory before the agent
			 * came go once the agent has published ours. */
			if (mode == M_AGENT && registered && now - last_pub >= 1) {
				last_pub = now;
				if (published()) {
					pt_control_unregister(G.dir, G.info.id, NULL);
					registered = 0;
					dlog("the agent publishes %s: direct records removed", G.info.id);
				}
			}
		}
		pthread_mutex_lock(&G.mu);
		/* Work handed over by the training thread. */
		if (G.w.status_dirty) {
			window wc = G.w;

			G.w.status_dirty = 0;
			pthread_mutex_unlock(&G.mu);
			/* (Past profiling already: the export writes the next status.) */
			if (wc.phase == W_PROFILING || wc.phase == W_FAILED)
				write_status(&wc, wc.phase == W_PROFILING ? PT_STATE_PROFILING
									  : PT_STATE_FAILED);
			pthread_mutex_lock(&G.mu);
		}
		if (G.w.phase == W_FAILED) {
			G.w.phase = W_IDLE;
			tracer_free();
			/* A half-written export (disk full) must not fill the spool. */
			if (G.w.torch_path[0])
				unlink(G.w.torch_path);
		}
		if (G.w.phase == W_ARMED && pt_control_now() > G.w.deadline) {
			/* The window never came (training stalled): give up. */
			__atomic_store_n(&G.next_action, NO_ACTION, __ATOMIC_RELEASE);
			snprintf(G.w.error, sizeof(G.w.error),
				 "deadline passed at step %lld before the window (step %lld)",
				 (long long)__atomic_load_n(&G.count, __ATOMIC_RELAXED),
				 (long long)G.w.start);
			{
				window wc = G.w;

				G.w.phase = W_IDLE;
				pthread_mutex_unlock(&G.mu);
				write_status(&wc, PT_STATE_FAILED);
				tracer_free();
				pthread_mutex_lock(&G.mu);
			}
		}
		if (G.w.phase == W_EXPORT) {
			window wc = G.w;
			int ok;

			pthread_mutex_unlock(&G.mu);
			ok = export_trace(&wc) == 0;
			tracer_free();
			if (!ok)
				plog("%s", wc.error);
			write_status(&wc, ok ? PT_STATE_TRACED : PT_STATE_FAILED);
			pthread_mutex_lock(&G.mu);
			G.w.phase = W_IDLE;
			continue;
		}
		if (G.rec_dirty)
			continue;  /* a status to hand to the agent now */
		if (G.stop)
			break;
		clock_gettime(CLOCK_MONOTONIC, &next);
		{
			int ms = G.poll_ms < G.heartbeat_ms ? G.poll_ms : G.heartbeat_ms;

			next.tv_nsec += (long)(ms % 1000) * 1000000L;
			next.tv_sec += ms / 1000;
			if (next.tv_nsec >= 1000000000L) {
				next.tv_sec++;
				next.tv_nsec -= 1000000000L;
			}
		}
		pthread_cond_timedwait(&G.cond, &G.mu, &next);
	}
	/* Shutdown: report a window cut short, then leave the directory. */
	if (G.w.phase == W_ARMED || G.w.phase == W_PROFILING) {
		window wc = G.w;

		snprintf(wc.error, sizeof(wc.error), "process exited during the profiling window");
		pthread_mutex_unlock(&G.mu);
		write_status(&wc, PT_STATE_FAILED);
		/* Our record leaves the node channel now: the failure goes to
		 * the shared directory itself (rare: a process exiting inside
		 * its window). */
		if (!G.direct_status)
			pt_control_status_write(G.dir, G.rec.tid, G.info.id, &G.rec.st, NULL);
		pthread_mutex_lock(&G.mu);
	}
	pthread_mutex_unlock(&G.mu);
	if (G.ndir[0])
		pt_nodechan_worker_remove(G.ndir, G.info.id);
	/* The shared records: ours, and the last stack dump, when written. */
	if (registered || wd_dumps() > 0)
		pt_control_unregister(G.dir, G.info.id, NULL);
	pthread_mutex_lock(&G.mu);
	G.stopped = 1;
	pthread_cond_broadcast(&G.cond);
	pthread_mutex_unlock(&G.mu);
	return NULL;
}


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
	Py_END_ALLOW_THREADS
	if (tracer_active())
		tracer_stop();
	Py_BEGIN_ALLOW_THREADS
	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += (time_t)timeout;
	dl.tv_nsec += (long)((timeout - (double)(time_t)timeout) * 1e9);
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
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

static PyMethodDef module_methods[] = {
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
