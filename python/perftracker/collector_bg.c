/*
 * collector_bg.c - the collector's background thread ("pt-collector"): it
 * decides how the worker talks to the control directory (through its
 * node's agent, directly, or in fallback while the agent is down), keeps
 * the worker's record and heartbeats current, polls for triggers
 * (collector_window.c), starts the agent on local rank 0
 * (collector_agent.c), does the window work step() hands over, and at
 * shutdown reports a window cut short and removes the worker's records.
 * It never takes the GIL; step() never waits for it.
 */
#include "collector_internal.h"
#include "util/clock.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define RATE_SAMPLES 16

/* The loop's own state (background thread only). */
typedef struct bg {
	double last_hb, last_reg_check, last_spawn, last_seen_t, last_fb;
	double last_probe, last_local, t0, last_pub;
	int64_t last_seen, hb_step, local_step;
	int registered, alive, seen_agent, mode, prev_mode;
	tpoll shared, local;
	double rs_t[RATE_SAMPLES];   /* (time, step) samples for the step rate */
	int64_t rs_c[RATE_SAMPLES];
	int rs_n, rs_i;
	pt_error e;                  /* cleared once per round */
} bg;

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

/* Is the node's agent up (a local flock probe, twice a second)?  Sets the
 * mode; on a change to direct or fallback, a status the agent carried goes
 * to the shared directory itself.  Local rank 0 (re)starts the agent when
 * none holds the node's lock, at most every 10 s. */
static void bg_mode(bg *b, double now)
{
	int mode;

	if (G.ndir[0] && now - b->last_probe >= 0.5) {
		b->last_probe = now;
		b->alive = pt_nodechan_agent_alive(G.ndir);
		b->seen_agent |= b->alive;
	}
	mode = b->alive ? M_AGENT
	       : !G.ndir[0] || (!G.agent_expected && !b->seen_agent) ? M_DIRECT
	       : !b->seen_agent && now - b->t0 < AGENT_GRACE_S ? M_WAIT : M_FALLBACK;
	b->mode = mode;
	__atomic_store_n(&G.mode, mode, __ATOMIC_RELAXED);
	if (mode != b->prev_mode) {
		dlog("mode %s", mode == M_AGENT ? "agent" : mode == M_DIRECT ? "direct" :
		     mode == M_WAIT ? "waiting for the agent" : "fallback (no agent)");
		/* A status the agent carried must now reach the shared
		 * directory itself; the first fallback poll comes at once. */
		if (mode == M_FALLBACK || mode == M_DIRECT) {
			b->last_fb = -1e9;
			if (G.rec.has_status && !G.direct_status) {
				pt_error_clear(&b->e);
				if (pt_control_status_write(G.dir, G.rec.tid, G.info.id, &G.rec.st,
							    &b->e) == PT_OK)
					G.direct_status = 1;
			}
		}
		if (mode == M_AGENT)
			b->local_step = -2;  /* write our record now */
		b->prev_mode = mode;
	}
	if (G.agent_argv && !b->alive && now - b->last_spawn >= 10) {
		b->last_spawn = now;
		ensure_agent(now);
		b->last_probe = -1e9;
	}
}

/* The step rate the master plans with (docs/collector.md, "The trigger"):
 * over the recent steps, not since start-up, whose imports and rendezvous
 * would make a fresh job look slow.  From the newest sample at least
 * RATE_SPAN_S old with two steps since, taken after the first step;
 * failing that the oldest such sample (a young job, slow steps). */
#define RATE_SPAN_S 3.0
static double recent_rate(const bg *b, double now, int64_t cur)
{
	int best = -1;

	for (int k = 1; k < b->rs_n; k++) {
		int i = (b->rs_i - 1 - k + RATE_SAMPLES * 2) % RATE_SAMPLES;

		if (b->rs_c[i] < 1 || b->rs_c[i] >= cur || now - b->rs_t[i] <= 0.2)
			continue;
		best = i;
		if (now - b->rs_t[i] >= RATE_SPAN_S && cur - b->rs_c[i] >= 2)
			break;
	}
	return best < 0 ? 0 : (double)(cur - b->rs_c[best]) / (now - b->rs_t[best]);
}

/* The heartbeat (step, time of the last step, rate over the last samples,
 * state) into our record, and the record into the node channel (a tmpfs
 * write, whatever the mode) when due.  Returns whether a heartbeat to the
 * shared directory is due. */
static int bg_heartbeat(bg *b, double now, int64_t cur)
{
	int hb_ms, hb_due;

	hb_ms = b->mode == M_FALLBACK ? G.heartbeat_ms * FB_HB_FACTOR : G.heartbeat_ms;
	hb_due = (cur != b->hb_step && (now - b->last_hb) * 1000 >= hb_ms) || now - b->last_hb >= 10;
	if (hb_due || (cur != b->local_step && (now - b->last_local) * 1000 >= G.heartbeat_ms) ||
	    now - b->last_local >= 10 || G.rec_dirty || b->local_step == -2) {
		pt_heartbeat *h = &G.rec.e.hb;
		double rate = 0;

		b->rs_t[b->rs_i] = now;
		b->rs_c[b->rs_i] = cur;
		b->rs_i = (b->rs_i + 1) % RATE_SAMPLES;
		if (b->rs_n < RATE_SAMPLES)
			b->rs_n++;
		rate = recent_rate(b, now, cur);
		memset(h, 0, sizeof(*h));
		h->step = cur;
		h->step_time = cur > 0 ? b->last_seen_t : 0;
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
		if (G.ndir[0]) {
			if (pt_nodechan_worker_write(G.ndir, &G.rec, &b->e) &&
			    pt_nodechan_prepare(G.ndir, NULL) == PT_OK)
				pt_nodechan_worker_write(G.ndir, &G.rec, NULL);
			G.rec_dirty = 0;
			b->local_step = cur;
			b->last_local = now;
		}
	}
	return hb_due;
}

/* Direct and fallback modes: our own registration (re-done if the record
 * disappeared), heartbeats and trigger polls on the shared directory. */
static void bg_direct(bg *b, double now, int64_t cur, int hb_due)
{
	int mode = b->mode;

	if ((!b->registered && now - b->last_reg_check > 10) ||
	    (b->registered && now - b->last_reg_check > (mode == M_DIRECT ? 30 : 60))) {
		char rp[PT_CONTROL_PATH_MAX];
		struct stat rst;

		b->last_reg_check = now;
		pt_control_record_path(rp, sizeof(rp), G.dir, "workers", NULL, G.info.id);
		if (!b->registered || stat(rp, &rst) != 0) {
			if (pt_control_register(G.dir, &G.info, &b->e) == PT_OK) {
				b->registered = 1;
				G.io_failing = 0;
				dlog("registered %s in %s", G.info.id, G.dir);
			} else {
				b->registered = 0;
				io_error("cannot register", &b->e);
			}
		}
	}
	if (b->registered && hb_due) {
		if (pt_control_heartbeat_write(G.dir, G.info.id, &G.rec.e.hb, &b->e) == PT_OK) {
			b->hb_step = cur;
			G.io_failing = 0;
		} else {
			io_error("cannot write heartbeat", &b->e);
		}
		b->last_hb = now;
	}
	/* Trigger poll: every poll_ms directly, every FB_POLL_FACTOR x
	 * poll_ms in fallback. */
	if (b->registered && !G.quiet &&
	    (mode == M_DIRECT || (now - b->last_fb) * 1000 >= G.poll_ms * FB_POLL_FACTOR)) {
		b->last_fb = now;
		trigger_poll(&b->shared, now, mode == M_DIRECT ? 5 : 0);
	}
}

/* Agent and wait modes: the agent carries heartbeats and mirrors
 * trigger.json into the node channel. */
static void bg_via_agent(bg *b, double now, int64_t cur, int hb_due)
{
	if (hb_due) {
		b->hb_step = cur;
		b->last_hb = now;
	}
	/* Local stats only (no attribute cache to distrust). */
	if (!G.quiet)
		trigger_poll(&b->local, now, 60);
	/* Records written to the shared directory before the agent came go
	 * once the agent has published ours. */
	if (b->mode == M_AGENT && b->registered && now - b->last_pub >= 1) {
		b->last_pub = now;
		if (published()) {
			pt_control_unregister(G.dir, G.info.id, NULL);
			b->registered = 0;
			dlog("the agent publishes %s: direct records removed", G.info.id);
		}
	}
}

/* Sleep (G.mu held) until the next poll or heartbeat, or a signal from
 * step() or shutdown(). */
static void bg_wait(void)
{
	struct timespec next;
	int ms = G.poll_ms < G.heartbeat_ms ? G.poll_ms : G.heartbeat_ms;

	pt_clock_mono_deadline(&next, ms / 1000.0);
	pthread_cond_timedwait(&G.cond, &G.mu, &next);
}

void *bg_main(void *arg)
{
	bg b;
	sigset_t all;

	memset(&b, 0, sizeof(b));
	b.last_spawn = b.last_fb = b.last_probe = -1e9;
	b.t0 = pt_control_now();
	b.last_seen = b.hb_step = b.local_step = -1;
	b.mode = M_DIRECT;
	b.prev_mode = -1;
	/* Signals belong to the training thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_setname_np(pthread_self(), "pt-collector");
	tpoll_init(&b.shared, G.dir);
	tpoll_init(&b.local, G.ndir[0] ? G.ndir : G.dir);
	G.rec.e.info = G.info;
	pthread_mutex_lock(&G.mu);
	while (!G.stop) {
		double now = pt_control_now();
		int64_t cur = __atomic_load_n(&G.count, __ATOMIC_RELAXED);
		int hb_due;

		pthread_mutex_unlock(&G.mu);
		pt_error_clear(&b.e);
		if (cur != b.last_seen) {
			b.last_seen = cur;
			b.last_seen_t = now;
		}
		bg_mode(&b, now);
		hb_due = bg_heartbeat(&b, now, cur);
		if (b.mode == M_DIRECT || b.mode == M_FALLBACK)
			bg_direct(&b, now, cur, hb_due);
		else
			bg_via_agent(&b, now, cur, hb_due);
		pthread_mutex_lock(&G.mu);
		if (window_work())
			continue;
		if (G.rec_dirty)
			continue;  /* a status to hand to the agent now */
		if (G.stop)
			break;
		bg_wait();
	}
	/* Shutdown: report a window cut short, then leave the directory. */
	window_exit();
	pthread_mutex_unlock(&G.mu);
	if (G.ndir[0])
		pt_nodechan_worker_remove(G.ndir, G.info.id);
	/* The shared records: ours, and the last stack dump, when written. */
	if (b.registered || wd_dumps() > 0)
		pt_control_unregister(G.dir, G.info.id, NULL);
	pthread_mutex_lock(&G.mu);
	G.stopped = 1;
	pthread_cond_broadcast(&G.cond);
	pthread_mutex_unlock(&G.mu);
	return NULL;
}
