/*
 * trigger.c - the master's side of the trigger protocol (see trigger.h,
 * docs/collector.md): start (who is expected, the start step, the lock,
 * trigger.json), poll (each worker's state from the node files and the
 * status records), collect (the summaries into the run directory, a
 * failed summary naming why for every worker that delivered none).
 */
#include "trigger.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../analysis/digest.h"
#include "../analysis/summary.h"
#include "../util/file.h"
#include "../util/strbuf.h"
#include "../util/xalloc.h"

double pt_trigger_est_step_at(const pt_worker_entry *w, double now, double rate)
{
	double ref, dt;

	if (!w->has_hb || rate <= 0)
		return (double)w->hb.step;
	ref = w->hb.step_time > 0 ? w->hb.step_time : w->hb.time;
	dt = now - ref;
	if (dt > 10 && dt > 3 / rate)
		return (double)w->hb.step;
	return (double)w->hb.step + rate * (dt < 0 ? 0 : dt > 30 ? 30 : dt);
}

double pt_trigger_est_step(const pt_worker_entry *w, double now)
{
	return pt_trigger_est_step_at(w, now, w->hb.rate);
}

const char *pt_trigger_state_name(int s)
{
	static const char *const names[] = { "waiting", "armed", "profiling", "traced",
					     "summarized", "failed", "missing", "late" };

	return s >= 0 && s < PT_TW_NSTATES ? names[s] : "?";
}

static void note(const pt_trigger_run *r, int is_error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void note(const pt_trigger_run *r, int is_error, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;

	if (!r->o.note)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	r->o.note(r->o.note_ctx, is_error, buf);
}

static int finished(int state)
{
	return state == PT_TW_SUMMARIZED || state == PT_TW_FAILED || state == PT_TW_MISSING;
}

/* <output>/<YYYYmmdd-HHMMSS>, made unique with -2, -3, ...  Only named
 * here: it is created by the first thing written into it (a summary, a
 * raw trace moved by an agent, the report), so a trigger that is killed or
 * gets nothing leaves no empty folder behind.  Two triggers of two jobs
 * that start in the same second must not get the same name: the name is
 * claimed with an O_EXCL file <output>/.<name>.claim holding our pid,
 * removed by pt_trigger_end (a claim whose process is gone on this
 * machine is free again, and swept by the next trigger). */

/* Is the claim file's owner gone on this machine? */
static int claim_gone(const char *claim, const char *node)
{
	char *text = NULL;
	long pid = -1;
	const char *p;
	int gone = 0;

	if (pt_control_read_file(claim, 4096, &text, NULL, NULL) == PT_OK) {
		if ((p = strstr(text, "\"pid\":")))
			pid = strtol(p + 6, NULL, 10);
		gone = pid > 0 && strstr(text, node) && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
	}
	x_free(text);
	return gone;
}

/* Claims left by triggers killed outright (SIGKILL) go with the next one. */
static void sweep_claims(const char *out, const char *node)
{
	DIR *d = opendir(out);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		char p[PT_CONTROL_PATH_MAX];

		if (de->d_name[0] != '.' || n < 7 || strcmp(de->d_name + n - 6, ".claim") ||
		    (size_t)snprintf(p, sizeof(p), "%s/%s", out, de->d_name) >= sizeof(p))
			continue;
		if (claim_gone(p, node))
			unlink(p);
	}
	closedir(d);
}

static int claim_name(const char *claim, const char *node)
{
	char buf[512];
	int fd, n;

	for (int tries = 0; tries < 2; tries++) {
		fd = open(claim, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0) {
			n = snprintf(buf, sizeof(buf), "{\"pid\":%ld,\"node\":\"%s\"}\n", (long)getpid(),
				     node);
			if (n > 0 && pt_file_write_all(fd, buf, (size_t)n) != 0)
				n = -1;
			close(fd);
			return 0;
		}
		if (errno != EEXIST || tries)
			return -1;
		/* Taken: by a live trigger, or left by a killed one. */
		if (!claim_gone(claim, node))
			return -1;
		unlink(claim);
	}
	return -1;
}

static int name_run_dir(const char *out, double now, const char *node, char *run, size_t cap,
			char *claim, size_t ccap, pt_error *err)
{
	time_t s = (time_t)now;
	struct tm tm;
	char ts[32];
	int rc;

	localtime_r(&s, &tm);
	strftime(ts, sizeof(ts), "%Y%m%d-%H%M%S", &tm);
	if ((rc = pt_control_mkdirs(out, err)))
		return rc;
	sweep_claims(out, node);
	for (int k = 1; k < 1000; k++) {
		int n = k == 1 ? snprintf(run, cap, "%s/%s", out, ts)
			       : snprintf(run, cap, "%s/%s-%d", out, ts, k);
		int m = k == 1 ? snprintf(claim, ccap, "%s/.%s.claim", out, ts)
			       : snprintf(claim, ccap, "%s/.%s-%d.claim", out, ts, k);
		struct stat st;

		if (n < 0 || (size_t)n >= cap || m < 0 || (size_t)m >= ccap)
			return pt_error_set(err, PT_EINVAL, -1, "output directory name too long: '%s'",
					    out);
		if (lstat(run, &st) == 0)
			continue;
		if (errno != ENOENT)
			return pt_error_set(err, PT_EIO, -1, "cannot use '%s': %s", run, strerror(errno));
		if (claim_name(claim, node) == 0)
			return PT_OK;
	}
	claim[0] = 0;
	return pt_error_set(err, PT_EIO, -1, "cannot create a run directory in '%s'", out);
}

/* Leftovers of earlier triggers (an interrupted one, a late summary):
 * under the lock nobody else uses status/ or summaries/. */
static void remove_old(const char *dir, const char *sub)
{
	char path[PT_CONTROL_PATH_MAX];
	DIR *d;
	struct dirent *de;

	if (pt_control_record_path(path, sizeof(path), dir, sub, NULL, NULL) || !(d = opendir(path)))
		return;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			pt_control_remove_dir(dir, sub, de->d_name, NULL);
	closedir(d);
}

static void lock_content(pt_sb *sb, const pt_trigger *t, const char *node)
{
	pt_sb_adds(sb, "{\"id\":");
	pt_sb_add_json_str(sb, t->id, strlen(t->id));
	pt_sb_adds(sb, ",\"host\":");
	pt_sb_add_json_str(sb, t->host, strlen(t->host));
	pt_sb_adds(sb, ",\"node\":");
	pt_sb_add_json_str(sb, node, strlen(node));
	pt_sb_addf(sb, ",\"pid\":%lld,\"created\":", (long long)t->pid);
	pt_sb_add_double(sb, t->created);
	pt_sb_adds(sb, ",\"deadline\":");
	pt_sb_add_double(sb, t->deadline);
	pt_sb_adds(sb, "}\n");
}

/* The error for a lock someone else holds. */
static int describe_holder(const char *holder, const char *path, double now, pt_error *err)
{
	char id[128] = "?", host[256] = "?";
	double created = 0, deadline = 0;
	long pid = -1;
	const char *p;

	/* A short, forgiving scan: the holder is our own one-line JSON. */
	if ((p = strstr(holder, "\"id\":\"")))
		sscanf(p + 6, "%127[^\"]", id);
	if ((p = strstr(holder, "\"host\":\"")))
		sscanf(p + 8, "%255[^\"]", host);
	if ((p = strstr(holder, "\"pid\":")))
		pid = strtol(p + 6, NULL, 10);
	if ((p = strstr(holder, "\"created\":")))
		created = strtod(p + 10, NULL);
	if ((p = strstr(holder, "\"deadline\":")))
		deadline = strtod(p + 11, NULL);
	return pt_error_set(err, PT_EINVAL, -1, "a trigger is already running: '%s' (pid %ld on "
			    "'%s', started %.0f s ago, gives up in %.0f s); wait for it to finish, "
			    "or remove '%s' if that process is gone", id, pid, host,
			    created > 0 ? now - created : 0, deadline > 0 ? deadline - now : 0, path);
}

int pt_trigger_census(const char *dir, double now, double stale, size_t *live, int64_t *world,
		      size_t *stepping, pt_error *err)
{
	pt_worker_entry *all = NULL;
	size_t n = 0;
	char node[PT_CONTROL_HOST_MAX];
	int rc;

	*live = 0;
	*world = 0;
	*stepping = 0;
	pt_control_nodename(node, sizeof(node));
	if ((rc = pt_nodechan_workers(dir, &all, &n, err)))
		return rc;
	for (size_t i = 0; i < n; i++) {
		if (!pt_control_worker_alive(&all[i], now, stale, node))
			continue;
		(*live)++;
		*stepping += all[i].has_hb && all[i].hb.rate > 0;
		if (all[i].info.world_size > *world)
			*world = all[i].info.world_size;
	}
	x_free(all);
	return PT_OK;
}

/* Who is expected: the live workers; the furthest estimated step and the
 * fastest and slowest rates among them. */
static int pick_workers(pt_trigger_run *r, double now, double *max_rate, double *min_rate,
			pt_error *err)
{
	pt_worker_entry *all = NULL;
	size_t nall = 0;
	int64_t max_world = 0;
	int rc;

	if ((rc = pt_nodechan_workers(r->dir, &all, &nall, err)))
		return rc;
	r->nregistered = nall;
	r->w = x_calloc(nall ? nall : 1, sizeof(*r->w));
	if (!r->w) {
		rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nall; i++) {
		double est;

		if (!pt_control_worker_alive(&all[i], now, r->o.stale, r->node))
			continue;
		r->w[r->n].e = all[i];
		r->w[r->n].state = PT_TW_WAITING;
		r->n++;
		est = pt_trigger_est_step(&all[i], now);
		if (all[i].has_hb && all[i].hb.rate > 0) {
			if (all[i].hb.rate > *max_rate)
				*max_rate = all[i].hb.rate;
			if (*min_rate == 0 || all[i].hb.rate < *min_rate)
				*min_rate = all[i].hb.rate;
		}
		if ((int64_t)ceil(est) > r->cur)
			r->cur = (int64_t)ceil(est);
		if (all[i].info.world_size > max_world)
			max_world = all[i].info.world_size;
	}
	if (!r->n) {
		rc = pt_error_set(err, PT_EINVAL, -1, "no live worker in '%s' (%zu registered): is "
				  "the training running with PerfTracker()? see 'perftracker status "
				  "--control-dir %s'", r->dir, nall, r->dir);
		goto out;
	}
	if (max_world > (int64_t)r->n)
		note(r, 0, "%zu live worker%s but world size %lld: the others are not registered "
		     "in '%s'", r->n, r->n == 1 ? "" : "s", (long long)max_world, r->dir);
out:
	x_free(all);
	return rc;
}

/* The lock: one trigger at a time per control directory, which must be
 * one no other user can write through (docs/collector.md). */
static int take_lock(pt_trigger_run *r, double now, pt_error *err)
{
	char holder[4096];
	pt_sb sb = { 0 };
	int rc;

	if (pt_control_path(r->lockpath, sizeof(r->lockpath), r->dir, "trigger.lock"))
		return pt_error_set(err, PT_EINVAL, -1, "control directory name too long");
	if ((rc = pt_control_mkdirs(r->dir, err)))
		return rc;
	lock_content(&sb, &r->t, r->node);
	if (sb.oom) {
		rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
		goto out;
	}
	for (int tries = 0; tries < 2 && !r->locked; tries++) {
		int lr = pt_control_lock(r->lockpath, sb.buf, holder, sizeof(holder), err);

		if (lr == PT_OK) {
			r->locked = 1;
		} else if (lr == 1) {
			if (tries == 0 && pt_control_lock_stale(r->lockpath, holder, now, r->node)) {
				note(r, 0, "removing stale trigger lock '%s'", r->lockpath);
				unlink(r->lockpath);
				continue;
			}
			rc = describe_holder(holder, r->lockpath, now, err);
			goto out;
		} else {
			rc = lr;
			goto out;
		}
	}
	if (!r->locked)
		rc = describe_holder("", r->lockpath, now, err);
out:
	pt_sb_free(&sb);
	return rc;
}

int pt_trigger_start(pt_trigger_run *r, const pt_trigger_options *o, double now, pt_error *err)
{
	pt_trigger *t = &r->t;
	double max_rate = 0, min_rate = 0;
	int rc;

	memset(r, 0, sizeof(*r));
	r->o = *o;
	snprintf(r->dir, sizeof(r->dir), "%s", o->dir ? o->dir : pt_control_default_dir());
	r->o.dir = r->dir;
	if (!r->o.outdir)
		r->o.outdir = pt_control_default_output();
	pt_control_nodename(r->node, sizeof(r->node));
	if ((rc = pick_workers(r, now, &max_rate, &min_rate, err)))
		return rc;

	/* One absolute start step for everyone: the furthest worker's
	 * estimated step, plus the steps that pass while the workers notice
	 * the trigger (their agent's 1 s stat of trigger.json, their 0.25 s
	 * poll of its copy, file-system propagation: about 2 s; docs/bench.md
	 * measures p99 1.18 s without propagation, and a loaded 2-core node
	 * ran past 2 s: 3 s of steps), plus --wait. */
	pt_control_trigger_id(t->id, sizeof(t->id), now);
	snprintf(t->state, sizeof(t->state), "%s", PT_TRIGGER_ACTIVE);
	r->margin_s = 3.0;
	t->start_step = r->cur + (int64_t)ceil(max_rate * r->margin_s) + o->wait;
	/* Steps count from 1 (the first step() call): a start at or before
	 * the current step would make every worker late. */
	if (t->start_step <= r->cur)
		t->start_step = r->cur + 1;
	t->round = 0;
	t->rounds = o->rounds > 0 ? (o->rounds > 6 ? 6 : o->rounds) : 3;
	snprintf(t->first_id, sizeof(t->first_id), "%s", t->id);
	t->steps = o->steps;
	t->wait = o->wait;
	t->save_raw = o->save_raw;
	t->created = now;
	r->timeout = o->timeout;
	if (r->timeout <= 0) {
		double per_step = min_rate > 0 ? 1.0 / min_rate : 10.0;

		r->timeout = (double)(t->start_step - r->cur + o->steps) * per_step * 2 + 60;
	}
	t->deadline = now + r->timeout;
	snprintf(t->reason, sizeof(t->reason), "%s", o->reason ? o->reason : "");
	t->nsys_gpu_metrics = o->nsys_hz;
	pt_control_hostname(t->host, sizeof(t->host));
	t->pid = getpid();
	for (size_t i = 0; i < r->n; i++)
		if (pt_control_trigger_add_worker(t, r->w[i].e.info.id))
			return pt_error_set(err, PT_ENOMEM, -1, "out of memory");

	if ((rc = take_lock(r, now, err)))
		return rc;
	remove_old(r->dir, "status");
	remove_old(r->dir, "summaries");
	if ((rc = name_run_dir(r->o.outdir, now, r->node, t->run_dir, sizeof(t->run_dir), r->claim,
			       sizeof(r->claim), err)))
		return rc;
	if ((size_t)snprintf(t->raw_dir, sizeof(t->raw_dir), "%s/raw_trace", t->run_dir) >=
	    sizeof(t->raw_dir))
		return pt_error_set(err, PT_EINVAL, -1, "output directory name too long");
	if ((rc = pt_control_trigger_write(r->dir, t, err)))
		return rc;
	r->wrote = 1;
	r->started = r->last_agent_check = now;
	return PT_OK;
}

/* Summarised, or the state its status (or node file) says. */
static void refresh_status(pt_trigger_run *r, pt_trigger_worker *w, double now)
{
	const char *tid = r->t.id;
	char path[PT_CONTROL_PATH_MAX];
	struct stat st;
	pt_wstatus s;

	if (finished(w->state))
		return;
	/* A worker its agent publishes: the node file says all (read once a
	 * second for every worker by refresh_liveness); no per-worker
	 * operation on the shared directory. */
	if (w->has_nw && w->nw.via_node) {
		if (!w->nw.has_status || strcmp(w->nw.tid, tid))
			return;
		s = w->nw.st;
		/* (An agent restarted after writing the summary never flags it:
		 * for workers traced 5 s ago and not flagged, look at the file.) */
		if (w->nw.summarized ||
		    (!strcmp(s.state, PT_STATE_TRACED) && now - s.time > 5 &&
		     pt_control_record_path(path, sizeof(path), r->dir, "summaries", tid,
					    w->e.info.id) == 0 && stat(path, &st) == 0)) {
			w->state = PT_TW_SUMMARIZED;
			return;
		}
		goto map;
	}
	if (pt_control_record_path(path, sizeof(path), r->dir, "summaries", tid, w->e.info.id) == 0 &&
	    stat(path, &st) == 0) {
		w->state = PT_TW_SUMMARIZED;
		return;
	}
	if (pt_control_status_read(r->dir, tid, w->e.info.id, &s, NULL) != PT_OK)
		return;
map:
	if (!strcmp(s.state, PT_STATE_ARMED))
		w->state = PT_TW_ARMED;
	else if (!strcmp(s.state, PT_STATE_PROFILING))
		w->state = PT_TW_PROFILING;
	else if (!strcmp(s.state, PT_STATE_TRACED))
		w->state = PT_TW_TRACED;
	else if (!strcmp(s.state, PT_STATE_FAILED)) {
		w->state = PT_TW_FAILED;
		snprintf(w->why, sizeof(w->why), "failed: %s", s.error);
	} else if (!strcmp(s.state, PT_STATE_LATE)) {
		w->state = PT_TW_LATE;
		snprintf(w->late, sizeof(w->late), "%s", s.error);
	}
}

/* Mark workers that died (pid gone on this machine, or no heartbeat for
 * stale s) before handing over a trace as missing. */
static void refresh_liveness(pt_trigger_run *r, double now)
{
	pt_node_worker *all = NULL;
	size_t na = 0;

	if (pt_nodechan_all(r->dir, &all, &na, NULL))
		return;
	for (size_t i = 0; i < r->n; i++) {
		pt_trigger_worker *w = &r->w[i];
		int found = 0;

		if (finished(w->state))
			continue;
		for (size_t k = 0; k < na; k++) {
			if (strcmp(all[k].e.info.id, w->e.info.id))
				continue;
			found = 1;
			w->e = all[k].e;
			w->nw = all[k];
			w->has_nw = 1;
			break;
		}
		if (w->state == PT_TW_TRACED)
			continue;  /* (the process may end: the trace is delivered) */
		if (!found) {
			/* Unregistered: the process exited normally. */
			w->state = PT_TW_MISSING;
			w->exited = 1;
			snprintf(w->why, sizeof(w->why), "process exited (unregistered) at step %lld",
				 (long long)w->e.hb.step);
		} else if (!pt_control_worker_alive(&w->e, now, r->o.stale, r->node)) {
			w->state = PT_TW_MISSING;
			if (!strcmp(w->e.info.node, r->node))
				snprintf(w->why, sizeof(w->why), "process %lld is gone (last step %lld)",
					 (long long)w->e.info.pid, (long long)w->e.hb.step);
			else
				snprintf(w->why, sizeof(w->why),
					 "no heartbeat for %.0f s (last step %lld)",
					 now - w->e.hb.time, (long long)w->e.hb.step);
		}
	}
	x_free(all);
}

int pt_trigger_poll(pt_trigger_run *r, double now, int counts[PT_TW_NSTATES], int64_t *step_now,
		    int *live_checked)
{
	size_t done = 0;
	int64_t top = 0;

	if (live_checked)
		*live_checked = 0;
	if (now - r->last_live >= 1.0) {
		r->last_live = now;
		refresh_liveness(r, now);
		if (live_checked)
			*live_checked = 1;
	}
	if (counts)
		memset(counts, 0, PT_TW_NSTATES * sizeof(int));
	for (size_t i = 0; i < r->n; i++) {
		refresh_status(r, &r->w[i], now);
		if (counts)
			counts[r->w[i].state]++;
		done += finished(r->w[i].state);
		if (r->w[i].e.hb.step > top)
			top = r->w[i].e.hb.step;
	}
	if (step_now)
		*step_now = top;
	return done == r->n;
}

/* The fastest and slowest rate and the furthest estimated step of the
 * workers still expected, from their latest records. */
static int64_t furthest(const pt_trigger_run *r, double now, double *max_rate, double *min_rate)
{
	int64_t cur = 0;

	*max_rate = *min_rate = 0;
	for (size_t i = 0; i < r->n; i++) {
		const pt_worker_entry *e = &r->w[i].e;
		double est = pt_trigger_est_step(e, now);

		if (r->w[i].state == PT_TW_MISSING || r->w[i].state == PT_TW_FAILED)
			continue;
		if ((int64_t)ceil(est) > cur)
			cur = (int64_t)ceil(est);
		if (e->has_hb && e->hb.rate > 0) {
			if (e->hb.rate > *max_rate)
				*max_rate = e->hb.rate;
			if (*min_rate == 0 || e->hb.rate < *min_rate)
				*min_rate = e->hb.rate;
		}
	}
	return cur;
}

int pt_trigger_rearm(pt_trigger_run *r, double now, pt_error *err)
{
	pt_trigger *t = &r->t;
	double max_rate, min_rate, relay = 0;
	int64_t cur;
	size_t late = 0;
	int rc;

	for (size_t i = 0; i < r->n; i++)
		late += r->w[i].state == PT_TW_LATE;
	if (!late || t->round >= t->rounds)
		return 0;
	/* Fresh records: the estimate must start from where everyone is now. */
	r->last_live = 0;
	pt_trigger_poll(r, now, NULL, NULL, NULL);
	cur = furthest(r, now, &max_rate, &min_rate);
	/* The slowest relay seen this round: how long after the round was
	 * written the late workers' statuses came (an upper bound). */
	for (size_t i = 0; i < r->n; i++)
		if (r->w[i].state == PT_TW_LATE && r->w[i].nw.st.time > t->created &&
		    r->w[i].nw.st.time - t->created > relay)
			relay = r->w[i].nw.st.time - t->created;
	r->margin_s *= 2;
	if (r->margin_s < 2 * relay)
		r->margin_s = 2 * relay;
	if (r->nold < (int)(sizeof(r->old_ids) / sizeof(r->old_ids[0])))
		memcpy(r->old_ids[r->nold++], t->id, sizeof(r->old_ids[0]));
	pt_control_remove_dir(r->dir, "status", t->id, NULL);
	pt_control_remove_dir(r->dir, "summaries", t->id, NULL);
	/* A new id: every record keyed by it (statuses, summaries, the spool,
	 * the agents' bookkeeping) starts afresh, and no late trace of the old
	 * round can be taken for the new one. */
	do
		pt_control_trigger_id(t->id, sizeof(t->id), now);
	while (!strcmp(t->id, r->old_ids[r->nold - 1]));
	t->round++;
	t->start_step = cur + (int64_t)ceil(max_rate * r->margin_s);
	if (t->start_step <= cur)
		t->start_step = cur + 1;
	t->created = now;
	{
		double per_step = min_rate > 0 ? 1.0 / min_rate : 10.0;
		double left = (double)(t->start_step - cur + t->steps) * per_step * 2 + 60;

		if (r->o.timeout > 0)
			left = r->o.timeout - (now - r->started);
		if (left < 10)
			left = 10;
		t->deadline = now + left;
	}
	r->timeout = t->deadline - r->started;
	for (size_t i = 0; i < r->n; i++) {
		pt_trigger_worker *w = &r->w[i];

		if (w->state == PT_TW_MISSING || w->state == PT_TW_FAILED)
			continue;
		w->state = PT_TW_WAITING;
		w->why[0] = 0;
	}
	if ((rc = pt_control_trigger_write(r->dir, t, err)))
		return rc;
	return 1;
}

void pt_trigger_awaited(const pt_trigger_run *r, pt_sb *sb, size_t max_named)
{
	size_t named = 0, left = 0;

	for (size_t i = 0; i < r->n; i++) {
		const pt_trigger_worker *w = &r->w[i];
		long long step = (long long)w->e.hb.step;

		if (finished(w->state))
			continue;
		if (named >= max_named) {
			left++;
			continue;
		}
		pt_sb_addf(sb, "%srank %lld (", named ? ", " : "", (long long)w->e.info.rank);
		switch (w->state) {
		case PT_TW_WAITING:
			pt_sb_addf(sb, "has not seen it, step %lld", step);
			break;
		case PT_TW_ARMED:
			pt_sb_addf(sb, "armed, step %lld of %lld", step, (long long)r->t.start_step);
			break;
		case PT_TW_PROFILING:
			pt_sb_addf(sb, "profiling, step %lld of %lld", step,
				   (long long)(r->t.start_step + r->t.steps));
			break;
		case PT_TW_TRACED:
			pt_sb_addf(sb, "traced, its agent on '%s' summarises", w->e.info.host);
			break;
		default:
			pt_sb_addf(sb, "%s, step %lld", pt_trigger_state_name(w->state), step);
		}
		pt_sb_addc(sb, ')');
		named++;
	}
	if (left)
		pt_sb_addf(sb, " and %zu more", left);
}

void pt_trigger_check_agents(pt_trigger_run *r, double now)
{
	if (now - r->last_agent_check < 5)
		return;
	r->last_agent_check = now;
	for (size_t i = 0; i < r->n; i++) {
		const char *h = r->w[i].e.info.host;

		if (r->w[i].state != PT_TW_TRACED || r->w[i].agent_warned ||
		    pt_control_agent_running(r->dir, h, now, 30))
			continue;
		note(r, 0, "no agent runs for host '%s': start 'perftracker agent --control-dir %s' "
		     "there", h, r->dir);
		for (size_t k = 0; k < r->n; k++)
			if (!strcmp(r->w[k].e.info.host, h))
				r->w[k].agent_warned = 1;
	}
}

int pt_trigger_looks_hung(const pt_trigger_run *r, double now, double hang_timeout, size_t *who,
			  double *silent)
{
	int any = 0;

	*silent = 0;
	for (size_t i = 0; i < r->n; i++) {
		const pt_worker_entry *e = &r->w[i].e;
		double st = e->has_hb && e->hb.step_time > 0 ? e->hb.step_time : e->info.started;
		int s = r->w[i].state;

		if (s != PT_TW_WAITING && s != PT_TW_ARMED && s != PT_TW_PROFILING)
			continue;
		if (st > 0 && now - st >= hang_timeout && now - st > *silent) {
			*silent = now - st;
			*who = i;
			any = 1;
		}
	}
	return any;
}

int pt_trigger_finish(pt_trigger_run *r, pt_error *err)
{
	snprintf(r->t.state, sizeof(r->t.state), "%s", PT_TRIGGER_DONE);
	return pt_control_trigger_write(r->dir, &r->t, err);
}

/* Move a record of this trigger into the run: a rename where both are on
 * one file system (one metadata operation: 100,000 summaries are 16 GB to
 * copy), else a copy.  The trigger's records go at its end anyway. */
static int copy_summary(const char *from, const char *to)
{
	char *buf = NULL;
	size_t len = 0;
	int rc;

	if (!rename(from, to))
		return 0;
	if (pt_control_read_file(from, (size_t)1 << 30, &buf, &len, NULL))
		return -1;
	rc = pt_control_write_atomic(to, buf, len, NULL);
	x_free(buf);
	return rc ? -1 : 0;
}

/* The agent's digest of a summary goes with it (docs/summary.md
 * "Digests"), so that `diagnose RUN/summaries` reads in two phases; none
 * (an older agent) is fine. */
static void copy_digest(const char *from, const char *to)
{
	char df[PT_CONTROL_PATH_MAX + 16], dt[PT_CONTROL_PATH_MAX + 416];

	if (!pt_digest_path(from, df, sizeof(df)) && !pt_digest_path(to, dt, sizeof(dt)) &&
	    !access(df, R_OK))
		copy_summary(df, dt);
}

/* Why a worker delivered nothing, from the state it was last seen in. */
static void say_why(const pt_trigger_run *r, pt_trigger_worker *w)
{
	long long last = (long long)w->e.hb.step;

	if (w->why[0])
		return;
	switch (w->state) {
	case PT_TW_WAITING:
		snprintf(w->why, sizeof(w->why), "never saw the trigger (last step %lld)", last);
		break;
	case PT_TW_ARMED:
		snprintf(w->why, sizeof(w->why), "never reached step %lld (last step %lld): stuck "
			 "or slow?", (long long)r->t.start_step, last);
		break;
	case PT_TW_PROFILING:
		snprintf(w->why, sizeof(w->why), "profiling did not finish (last step %lld)", last);
		break;
	case PT_TW_LATE:
		snprintf(w->why, sizeof(w->why), "late in every round: %s", w->late);
		break;
	case PT_TW_TRACED:
		snprintf(w->why, sizeof(w->why), "trace not summarised: is 'perftracker agent' "
			 "running on '%s'?", w->e.info.host);
		break;
	default:
		snprintf(w->why, sizeof(w->why), "%s", pt_trigger_state_name(w->state));
	}
}

/* The trigger's summaries folder moved into the run as <run>/summaries
 * with one rename: its files are named as the run's are.  At 100,000
 * workers a rename per file was 200,000 metadata operations (2.9 s on a
 * local disk, minutes at a shared file system's latency).  0 when it
 * cannot be (another file system, a folder already there, nothing
 * summarized): the caller moves file by file. */
static int move_folder(pt_trigger_run *r)
{
	char from[PT_CONTROL_PATH_MAX], to[PT_CONTROL_PATH_MAX + 400];
	struct stat st;
	size_t i;

	for (i = 0; i < r->n && r->w[i].state != PT_TW_SUMMARIZED; i++)
		;
	if (i == r->n ||
	    pt_control_record_path(from, sizeof(from), r->dir, "summaries", r->t.id, NULL))
		return 0;
	/* never through a link planted in place of the folder */
	if (lstat(from, &st) || !S_ISDIR(st.st_mode))
		return 0;
	snprintf(to, sizeof(to), "%s/summaries", r->t.run_dir);
	return pt_control_mkdirs(r->t.run_dir, NULL) == PT_OK && rename(from, to) == 0;
}

int pt_trigger_gather(pt_trigger_run *r, char ***paths_out, pt_summary ***sums_out,
		      size_t *ndelivered, pt_error *err)
{
	pt_summary **sums = x_calloc(r->n ? r->n : 1, sizeof(*sums));
	char **paths = x_calloc(r->n ? r->n : 1, sizeof(*paths));
	size_t nd = 0, i;
	int moved;

	*sums_out = NULL;
	*paths_out = NULL;
	*ndelivered = 0;
	if (!sums || !paths)
		goto oom;
	moved = move_folder(r);
	for (i = 0; i < r->n; i++) {
		pt_trigger_worker *w = &r->w[i];
		char from[PT_CONTROL_PATH_MAX], to[PT_CONTROL_PATH_MAX + 400];
		char name[PT_CONTROL_ID_MAX + 8];

		snprintf(name, sizeof(name), "%s.json", w->e.info.id);
		if (w->state == PT_TW_SUMMARIZED &&
		    pt_control_record_path(from, sizeof(from), r->dir, "summaries", r->t.id,
					   w->e.info.id) == 0) {
			snprintf(to, sizeof(to), "%s/summaries/%s", r->t.run_dir, name);
			if (!moved && copy_summary(from, to)) {
				note(r, 0, "cannot copy '%s' to '%s'", from, to);
				snprintf(w->why, sizeof(w->why), "summary not copied to the run");
			} else {
				if (!moved)
					copy_digest(from, to);
				if (!(paths[i] = x_strndup(to, strlen(to))))
					goto oom;
				nd++;
				continue;
			}
		}
		say_why(r, w);
		if (!(sums[i] = pt_summary_failed(name, w->why)))
			goto oom;
	}
	*sums_out = sums;
	*paths_out = paths;
	*ndelivered = nd;
	if (!nd)
		return pt_error_set(err, PT_EINVAL, -1, "no worker delivered a trace for trigger %s",
				    r->t.id);
	return PT_OK;
oom:
	for (i = 0; i < r->n; i++) {
		if (sums)
			pt_summary_free(sums[i]);
		if (paths)
			x_free(paths[i]);
	}
	x_free(paths);
	x_free(sums);
	return pt_error_set(err, PT_ENOMEM, -1, "out of memory");
}

int pt_trigger_collect(pt_trigger_run *r, pt_summary ***sums_out, size_t *ndelivered,
		       pt_error *err)
{
	pt_summary **sums = NULL;
	char **paths = NULL;
	size_t nd = 0, i;
	pt_error e;
	int rc = pt_trigger_gather(r, &paths, &sums, &nd, err);

	*sums_out = NULL;
	*ndelivered = 0;
	if (!sums)
		return rc;
	for (i = 0; i < r->n; i++) {
		char m[1024], name[PT_CONTROL_ID_MAX + 8];

		if (!paths[i])
			continue;
		pt_error_clear(&e);
		if ((sums[i] = pt_summary_read_file(paths[i], &e)))
			continue;
		note(r, 1, "%s", pt_error_format(&e, m, sizeof(m)));
		snprintf(name, sizeof(name), "%s.json", r->w[i].e.info.id);
		sums[i] = pt_summary_failed(name, "unreadable summary");
		nd--;
		if (!sums[i] && rc != PT_ENOMEM)
			rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
	}
	for (i = 0; i < r->n; i++)
		x_free(paths[i]);
	x_free(paths);
	if (rc == PT_ENOMEM) {
		for (i = 0; i < r->n; i++)
			pt_summary_free(sums[i]);
		x_free(sums);
		return rc;
	}
	*sums_out = sums;
	*ndelivered = nd;
	if (!nd)
		return pt_error_set(err, PT_EINVAL, -1, "no worker delivered a trace for trigger %s",
				    r->t.id);
	return PT_OK;
}

void pt_trigger_end(pt_trigger_run *r)
{
	if (!r)
		return;
	if (r->wrote) {
		if (strcmp(r->t.state, PT_TRIGGER_DONE)) {
			snprintf(r->t.state, sizeof(r->t.state), "%s", PT_TRIGGER_DONE);
			pt_control_trigger_write(r->dir, &r->t, NULL);
		}
		pt_control_remove_dir(r->dir, "status", r->t.id, NULL);
		pt_control_remove_dir(r->dir, "summaries", r->t.id, NULL);
		for (int k = 0; k < r->nold; k++) {
			pt_control_remove_dir(r->dir, "status", r->old_ids[k], NULL);
			pt_control_remove_dir(r->dir, "summaries", r->old_ids[k], NULL);
		}
	}
	if (r->claim[0])
		unlink(r->claim);
	if (r->locked)
		pt_control_unlock(r->lockpath, NULL);
	pt_control_trigger_clear(&r->t);
	x_free(r->w);
	memset(r, 0, sizeof(*r));
}
