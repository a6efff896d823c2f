/*
 * autoprof.c - automatic profiling on slowdown (see autoprof.h): per worker
 * a short history of (step, time) observations from the heartbeats, the
 * mean step time over the last N iterations, the best such window, and the
 * decision to profile.  Run by the node agent's auto-profile thread
 * (src/cli/agent.c), which starts the trigger.
 */
#include "autoprof.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../control/control.h"
#include "../control/nodechan.h"
#include "../watch/watch.h"
#include "../util/clock.h"
#include "../util/xalloc.h"

/* Observations kept per worker: heartbeats come at most once a second
 * while stepping, so 4096 cover an hour, far more than any window needs
 * (a window needs the observations of its N iterations only). */
#define HIST 4096

typedef struct obs {
	int64_t step;
	double t;
} obs;

typedef struct wrec {
	char id[PT_CONTROL_ID_MAX];
	obs *h;              /* ring of HIST */
	size_t n, head;      /* count, index of the oldest */
	double cur;          /* current window mean (s/step), 0 none */
	int64_t cur_from, cur_to;
	double best;         /* lowest window mean since the last trigger, 0 none */
	int64_t best_from, best_to;
	int seen;            /* seen in the last check */
} wrec;

struct pt_autoprof {
	pt_autoprof_options o;
	wrec *w;
	size_t n, cap;
	double last_trigger;  /* created time of the last trigger seen */
	double slow_since;    /* a step-time slowdown waiting for the watch, 0 none */
};

void pt_autoprof_options_default(pt_autoprof_options *o)
{
	o->window = 50;
	o->slowdown = 0.3;
	o->cooldown = 600;
	o->min_span = 2.5;
	o->watch_defer = 30;
}

pt_autoprof *pt_autoprof_new(const pt_autoprof_options *o)
{
	pt_autoprof *ap = x_calloc(1, sizeof(*ap));

	if (!ap)
		return NULL;
	if (o)
		ap->o = *o;
	else
		pt_autoprof_options_default(&ap->o);
	if (ap->o.window < 1)
		ap->o.window = 1;
	return ap;
}

void pt_autoprof_free(pt_autoprof *ap)
{
	if (!ap)
		return;
	for (size_t i = 0; i < ap->n; i++)
		x_free(ap->w[i].h);
	x_free(ap->w);
	x_free(ap);
}

static wrec *find(pt_autoprof *ap, const char *wid, int create)
{
	wrec *r;

	for (size_t i = 0; i < ap->n; i++)
		if (!strcmp(ap->w[i].id, wid))
			return &ap->w[i];
	if (!create || X_GROW(ap->w, ap->cap, ap->n + 1))
		return NULL;
	r = &ap->w[ap->n];
	memset(r, 0, sizeof(*r));
	r->h = x_calloc(HIST, sizeof(obs));
	if (!r->h)
		return NULL;
	snprintf(r->id, sizeof(r->id), "%s", wid);
	ap->n++;
	return r;
}

static const obs *at(const wrec *r, size_t i)
{
	return &r->h[(r->head + i) % HIST];
}

double pt_autoprof_feed(pt_autoprof *ap, const char *wid, int64_t step, double step_time)
{
	wrec *r = find(ap, wid, 1);
	const obs *last, *from = NULL;
	obs *slot;

	if (!r || step <= 0 || !(step_time > 0))
		return 0;
	if (r->n) {
		last = at(r, r->n - 1);
		/* Same step again, or a restarted process: keep / start over. */
		if (step == last->step)
			return r->cur;
		if (step < last->step || step_time < last->t) {
			r->n = r->head = 0;
			r->cur = r->best = 0;
		}
	}
	if (r->n == HIST) {
		r->head = (r->head + 1) % HIST;
		r->n--;
	}
	slot = &r->h[(r->head + r->n) % HIST];
	slot->step = step;
	slot->t = step_time;
	r->n++;
	/* The newest observation at least N iterations and min_span seconds
	 * back: short steps make the window longer than N iterations. */
	for (size_t i = r->n - 1; i-- > 0;) {
		const obs *o = at(r, i);

		if (step - o->step >= ap->o.window && step_time - o->t >= ap->o.min_span) {
			from = o;
			break;
		}
	}
	r->cur = 0;
	if (!from)
		return 0;
	r->cur = (step_time - from->t) / (double)(step - from->step);
	r->cur_from = from->step;
	r->cur_to = step;
	if (!r->best || r->cur < r->best) {
		r->best = r->cur;
		r->best_from = from->step;
		r->best_to = step;
	}
	return r->cur;
}

void pt_autoprof_trigger_seen(pt_autoprof *ap, double created)
{
	if (!(created > ap->last_trigger))
		return;
	ap->last_trigger = created;
	for (size_t i = 0; i < ap->n; i++) {
		ap->w[i].n = ap->w[i].head = 0;
		ap->w[i].cur = ap->w[i].best = 0;
	}
}

int pt_autoprof_due(pt_autoprof *ap, double now, char *reason, size_t cap)
{
	const wrec *worst = NULL;
	double worst_ratio = 0;

	if (ap->last_trigger > 0 && now - ap->last_trigger < ap->o.cooldown)
		return 0;
	for (size_t i = 0; i < ap->n; i++) {
		const wrec *r = &ap->w[i];
		double ratio;

		if (!r->cur || !r->best || !r->seen)
			continue;
		ratio = r->cur / r->best;
		if (ratio > 1 + ap->o.slowdown && ratio > worst_ratio) {
			worst = r;
			worst_ratio = ratio;
		}
	}
	if (!worst)
		return 0;
	snprintf(reason, cap,
		 "auto-profile: worker %s slowed down: mean step time %.4g s over steps %lld-%lld, "
		 "%.2fx its best %lld-iteration window (%.4g s over steps %lld-%lld); threshold "
		 "+%.0f%%", worst->id, worst->cur, (long long)worst->cur_from,
		 (long long)worst->cur_to, worst_ratio, (long long)ap->o.window, worst->best,
		 (long long)worst->best_from, (long long)worst->best_to, ap->o.slowdown * 100);
	return 1;
}

int pt_autoprof_watch_due(pt_autoprof *ap, const pt_watch_rank *r, size_t n, double now,
			  int *collectives, char *reason, size_t cap)
{
	const pt_watch_rank *worst = NULL;
	char since[64] = "", hms[32];

	*collectives = 0;
	for (size_t i = 0; i < n; i++) {
		*collectives |= !strcmp(r[i].fr, "on");
		if (r[i].flagged && (!worst || r[i].score > worst->score))
			worst = &r[i];
	}
	if (!worst || (ap->last_trigger > 0 && now - ap->last_trigger < ap->o.cooldown))
		return 0;
	if (pt_clock_utc_hms(worst->since, hms, sizeof(hms))[0])
		snprintf(since, sizeof(since), " since %s", hms);
	snprintf(reason, cap,
		 "auto-profile: the always-on watch names rank %lld (worker %s) a persistent "
		 "straggler%s (step %lld): %.1f ms late per step (median), at most %.1f ms at %s "
		 "(process group %s, sequence %lld); straggler score %.2f", (long long)worst->rank,
		 worst->id, since, (long long)worst->since_step, worst->late_s * 1e3,
		 worst->late_max_s * 1e3, worst->at_name[0] ? worst->at_name : "?",
		 worst->at_pg[0] ? worst->at_pg : "?", (long long)worst->at_seq, worst->score);
	return 1;
}

/* This node's watch file (<dir>/watch/<host>.json): 1 with reason when it
 * names a straggler; *collectives as pt_autoprof_watch_due's.  A file
 * older than 30 s is no verdict (the agent that wrote it is gone). */
static int watch_check(pt_autoprof *ap, const char *dir, const char *host, double now,
		       int *collectives, char *reason, size_t cap)
{
	char path[PT_CONTROL_PATH_MAX + PT_CONTROL_HOST_MAX + 16];
	char *buf = NULL;
	size_t len = 0;
	pt_watch_rank *r = NULL;
	size_t n = 0;
	double t = 0;
	int due = 0;

	*collectives = 0;
	if ((size_t)snprintf(path, sizeof(path), "%s/watch/%s.json", dir, host) >= sizeof(path) ||
	    pt_control_read_file(path, 1 << 24, &buf, &len, NULL) ||
	    pt_watch_node_parse(buf, len, &r, &n, &t, NULL) || now - t > 30)
		goto out;
	due = pt_autoprof_watch_due(ap, r, n, now, collectives, reason, cap);
out:
	x_free(r);
	x_free(buf);
	return due;
}

/* The watch first; a step-time slowdown defers to it where it reads
 * collectives (autoprof.h). */
static int due_now(pt_autoprof *ap, const char *dir, const char *host, double now,
		   char *reason, size_t cap)
{
	int collectives = 0;

	if (watch_check(ap, dir, host, now, &collectives, reason, cap)) {
		ap->slow_since = 0;
		return 1;
	}
	if (!pt_autoprof_due(ap, now, reason, cap)) {
		ap->slow_since = 0;
		return 0;
	}
	if (!collectives || ap->o.watch_defer <= 0)
		return 1;
	if (!ap->slow_since)
		ap->slow_since = now;
	if (now - ap->slow_since < ap->o.watch_defer)
		return 0;
	ap->slow_since = 0;
	return 1;
}

int pt_autoprof_check(pt_autoprof *ap, const char *dir, const char *host, double now,
		      char *reason, size_t cap)
{
	pt_worker_entry *w = NULL;
	pt_node_worker *nw = NULL;
	size_t n = 0;
	pt_trigger t;
	char node[PT_CONTROL_HOST_MAX], ndir[PT_CONTROL_PATH_MAX];
	int active = 0, local;

	pt_control_nodename(node, sizeof(node));
	/* This node's records and the trigger from the node channel, where
	 * the agent keeps them (no shared-directory operation); else the
	 * control directory. */
	local = pt_nodechan_path(ndir, sizeof(ndir), dir, host) == 0 &&
		pt_nodechan_agent_alive(ndir);
	if (pt_control_trigger_read(local ? ndir : dir, &t, NULL) == PT_OK && t.id[0]) {
		pt_autoprof_trigger_seen(ap, t.created);
		active = !strcmp(t.state, PT_TRIGGER_ACTIVE) && now < t.deadline;
	}
	pt_control_trigger_clear(&t);
	if (local) {
		if (pt_nodechan_workers_read(ndir, &nw, &n, NULL))
			return 0;
		w = n ? x_reallocarray(NULL, n, sizeof(*w)) : NULL;
		if (n && !w) {
			x_free(nw);
			return 0;
		}
		for (size_t i = 0; i < n; i++)
			w[i] = nw[i].e;
		x_free(nw);
	} else if (pt_nodechan_workers(dir, &w, &n, NULL)) {
		return 0;
	}
	for (size_t i = 0; i < ap->n; i++)
		ap->w[i].seen = 0;
	for (size_t i = 0; i < n; i++) {
		wrec *r;

		if (strcmp(w[i].info.host, host) || !w[i].has_hb ||
		    !pt_control_worker_alive(&w[i], now, 30, node))
			continue;
		pt_autoprof_feed(ap, w[i].info.id, w[i].hb.step, w[i].hb.step_time);
		r = find(ap, w[i].info.id, 0);
		if (r)
			r->seen = 1;
	}
	x_free(w);
	if (active)
		return 0;
	return due_now(ap, dir, host, now, reason, cap);
}
