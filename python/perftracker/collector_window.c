/*
 * collector_window.c - one profiling window as the background thread sees
 * it: poll trigger.json (the node channel's mirror, or the shared one),
 * arm the window (next_action tells step() when), disarm a cancelled one,
 * write the status records the trigger waits for (armed, profiling,
 * traced, failed), and do the work step() hands over: a failure, a
 * deadline passed before the window, and the export (collector_export.c).
 * Runs in the background thread (collector_bg.c) only, never with the GIL.
 */
#include "collector_internal.h"
#include "util/file.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void write_status(const window *w, const char *state)
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
	if (!strcmp(state, PT_STATE_FAILED) || !strcmp(state, PT_STATE_LATE))
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
	/* Late (the trigger reached us after its start step): profiling the
	 * next steps would compare us with the others across different
	 * iterations.  While the trigger may re-arm, say so and wait for the
	 * next round; in its last round, start at the next step (the status
	 * records the steps actually profiled). */
	if (w->start <= cur && t->round < t->rounds) {
		snprintf(w->error, sizeof(w->error), "saw the trigger at step %lld, after its start "
			 "step %lld", (long long)cur, (long long)t->start_step);
		write_status(w, PT_STATE_LATE);
		dlog("late for %s: %s", w->tid, w->error);
		w->phase = W_IDLE;
		return;
	}
	if (w->start <= cur)
		w->start = cur + 1;
	if ((size_t)snprintf(sp, sizeof(sp), "%s/%s", G.spool, t->id) >= sizeof(sp) ||
	    /* torch opens its export with a plain open(): an unguessable name,
	     * so no link can be waiting there for it (docs/collector.md). */
	    (size_t)snprintf(w->torch_path, sizeof(w->torch_path), "%s/.%s.%016llx.torch.json", sp,
			     G.info.id, (unsigned long long)pt_file_random64()) >= sizeof(w->torch_path) ||
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

void tpoll_init(tpoll *p, const char *dir)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->dir, sizeof(p->dir), "%s", dir);
	pt_control_path(p->path, sizeof(p->path), dir, "trigger.json");
	p->size = -1;
}

/* Stat trigger.json, read it on change (and every reread_s, since NFS
 * attribute caches can hide a change), disarm or arm. */
void trigger_poll(tpoll *p, double now, double reread_s)
{
	struct stat tst;
	int changed = 0;
	pt_trigger t;

	if (__atomic_exchange_n(&G.repoll, 0, __ATOMIC_ACQ_REL))
		p->last_read = -1e9;
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
		/* Re-armed under a new id while our window runs: that window's
		 * steps are not the round's, drop it (step() does, at the next
		 * step) and arm for the new round once it is gone. */
		if (G.w.phase == W_PROFILING && strcmp(t.id, G.w.tid) &&
		    !strcmp(t.state, PT_TRIGGER_ACTIVE) && !G.w.abort) {
			G.w.abort = 1;
			dlog("dropping window %s: re-armed as %s", G.w.tid, t.id);
		}
		maybe_arm(&t, now);
		pthread_mutex_unlock(&G.mu);
	}
	pt_control_trigger_clear(&t);
}

/* Work handed over by the training thread (G.mu held on entry and on
 * return; dropped while writing).  Returns 1 when an export was done: the
 * loop goes round again at once (the status is for the agent now). */
int window_work(void)
{
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
		free(wc.colls);
		tracer_free();
		if (!ok)
			plog("%s", wc.error);
		write_status(&wc, ok ? PT_STATE_TRACED : PT_STATE_FAILED);
		pthread_mutex_lock(&G.mu);
		G.w.colls = NULL;  /* (freed above, through the copy) */
		G.w.phase = W_IDLE;
		__atomic_store_n(&G.repoll, 1, __ATOMIC_RELEASE);
		return 1;
	}
	return 0;
}

/* The process exits (G.mu held, as in window_work): a window armed or
 * running is reported failed. */
void window_exit(void)
{
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
}
