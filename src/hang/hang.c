/*
 * hang.c - hang diagnosis (see hang.h and docs/hang.md): from the stack
 * dumps the collectors' watchdogs write (parsed by stacks.c), group the
 * workers by where their training thread is, name the odd ones out, and
 * build the "Hang" section.
 * Called by the trigger when the workers stop stepping and by
 * `perftracker hang-check`; the result goes to report.json like any report.
 */
#include "hang.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../control/control.h"
#include "../analysis/stats.h"
#include "../util/xalloc.h"
#include "../report/keys.h"

/* ---- normalisation -------------------------------------------------------- */

/* Length of "lib/pythonX[.Y]/" at p, 0 when p does not start with it. */
static size_t stdlib_dir(const char *p)
{
	const char *q;

	if (strncmp(p, "lib/python", 10) && strncmp(p, "lib64/python", 12))
		return 0;
	q = p + (p[3] == '6' ? 12 : 10);
	if (!isdigit((unsigned char)*q))
		return 0;
	while (isdigit((unsigned char)*q) || *q == '.')
		q++;
	return *q == '/' ? (size_t)(q + 1 - p) : 0;
}

/* Offset where the library-relative part of file starts, 0 when none. */
static size_t library_prefix(const char *file)
{
	const char *best = NULL, *p;
	size_t len = 0;

	for (p = file; (p = strstr(p, "site-packages/")); p += 14) {
		best = p;
		len = 14;
	}
	for (p = file; (p = strstr(p, "dist-packages/")); p += 14)
		if (!best || p > best) {
			best = p;
			len = 14;
		}
	if (best)
		return (size_t)(best - file) + len;
	for (p = file; *p; p++) {
		size_t k;

		if ((p == file || p[-1] == '/') && (k = stdlib_dir(p)))
			return (size_t)(p - file) + k;
	}
	return 0;
}

const char *pt_hang_short_file(const char *file)
{
	return file + library_prefix(file);
}

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);

	return a >= b && !strcmp(s + a - b, suf);
}

int pt_hang_file_kind(const char *file)
{
	const char *sh = pt_hang_short_file(file);
	const char *slash = strrchr(file, '/');
	size_t dl;

	/* The collector's package, wherever it is installed. */
	if (slash && ends_with(file, ".py")) {
		const char *pd = slash;

		while (pd > file && pd[-1] != '/')
			pd--;
		dl = (size_t)(slash - pd);
		if ((dl == 11 && !strncmp(pd, "perftracker", 11)) ||
		    (dl == 25 && !strncmp(pd, "c4d_perftracker_collector", 25)))
			return PT_HANG_COLLECTOR;
	}
	if (sh != file || !strncmp(file, "<frozen ", 8))
		return PT_HANG_LIBRARY;
	return PT_HANG_USER;
}

void pt_hang_frame_name(const pt_hang_frame *f, pt_sb *out)
{
	pt_sb_adds(out, pt_hang_short_file(f->file));
	pt_sb_adds(out, ": ");
	pt_sb_adds(out, f->func);
}

char *pt_hang_stack_key(const pt_hang_thread *t)
{
	pt_sb sb = { 0 };
	int any = 0;
	char *s;

	if (t)
		for (size_t i = 0; i < t->nframes; i++) {
			if (pt_hang_file_kind(t->frames[i].file) == PT_HANG_COLLECTOR)
				continue;
			if (any)
				pt_sb_addc(&sb, '|');
			pt_hang_frame_name(&t->frames[i], &sb);
			any = 1;
		}
	if (sb.oom) {
		pt_sb_free(&sb);
		return NULL;
	}
	s = x_strndup(sb.buf ? sb.buf : "", sb.len);
	pt_sb_free(&sb);
	return s;
}

const pt_hang_frame *pt_hang_inner_frame(const pt_hang_thread *t)
{
	if (!t)
		return NULL;
	for (size_t i = t->nframes; i-- > 0;)
		if (pt_hang_file_kind(t->frames[i].file) != PT_HANG_COLLECTOR)
			return &t->frames[i];
	return NULL;
}

const pt_hang_frame *pt_hang_user_frame(const pt_hang_thread *t)
{
	if (!t)
		return NULL;
	for (size_t i = t->nframes; i-- > 0;)
		if (pt_hang_file_kind(t->frames[i].file) == PT_HANG_USER)
			return &t->frames[i];
	return pt_hang_inner_frame(t);
}

/* ---- analysis ------------------------------------------------------------- */

const char *pt_hang_state_name(int state)
{
	static const char *const names[] = { "running", "hung", "dead", "lost", "exited" };

	return state >= 0 && state <= PT_HANG_EXITED ? names[state] : "unknown";
}

static char *frame_name_dup(const pt_hang_frame *f)
{
	pt_sb sb = { 0 };
	char *s;

	if (!f)
		return x_strndup("", 0);
	pt_hang_frame_name(f, &sb);
	if (sb.oom) {
		pt_sb_free(&sb);
		return NULL;
	}
	s = x_strndup(sb.buf, sb.len);
	pt_sb_free(&sb);
	return s;
}

void pt_hang_result_free(pt_hang_result *res)
{
	if (!res)
		return;
	for (size_t i = 0; i < res->ngroups; i++) {
		x_free(res->groups[i].key);
		x_free(res->groups[i].function);
		x_free(res->groups[i].where);
		x_free(res->groups[i].members);
	}
	x_free(res->groups);
	x_free(res->suspects);
	x_free(res->missing);
	x_free(res->explanation);
	for (size_t i = 0; res->function && i < res->nworkers; i++)
		x_free(res->function[i]);
	x_free(res->function);
	memset(res, 0, sizeof(*res));
}

static int alive(const pt_hang_worker *w)
{
	return w->state == PT_HANG_RUNNING || w->state == PT_HANG_HUNG;
}

/* Suspect groups first (smallest first), then larger groups, then by key. */
static int cmp_group(const void *a, const void *b)
{
	const pt_hang_group *x = a, *y = b;

	if (x->suspect != y->suspect)
		return y->suspect - x->suspect;
	if (x->n != y->n)
		return x->suspect ? (x->n < y->n ? -1 : 1) : (x->n > y->n ? -1 : 1);
	return strcmp(x->key, y->key);
}

static int has(const size_t *v, size_t n, size_t x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return 1;
	return 0;
}

/* Hung, yet no stacks, while nanswered live workers gave theirs. */
static int silent(const pt_hang_worker *w, size_t nanswered)
{
	return w->state == PT_HANG_HUNG && !w->dump && nanswered > 0;
}

static int64_t hung_max_step(const pt_hang_worker *w, size_t n)
{
	int64_t m = INT64_MIN;

	for (size_t i = 0; i < n; i++)
		if (w[i].state == PT_HANG_HUNG && w[i].step > m)
			m = w[i].step;
	return m;
}

static void explain(pt_sb *sb, const pt_hang_worker *w, size_t n, const pt_hang_options *o,
		    const pt_hang_result *res)
{
	size_t nalive = 0, nhung = 0, ndead = 0, nrest = 0;
	int64_t maxstep = INT64_MIN;
	const pt_hang_group *major = NULL;

	for (size_t i = 0; i < n; i++) {
		nalive += alive(&w[i]);
		nhung += w[i].state == PT_HANG_HUNG;
		ndead += w[i].state == PT_HANG_DEAD || w[i].state == PT_HANG_LOST;
	}
	maxstep = hung_max_step(w, n);
	for (size_t g = 0; g < res->ngroups; g++)
		if (!res->groups[g].suspect && (!major || res->groups[g].n > major->n))
			major = &res->groups[g];
	if (major)
		for (size_t k = 0; k < major->n; k++)
			nrest += !has(res->suspects, res->nsuspects, major->members[k]);
	if (!nalive) {
		pt_sb_addf(sb, "No worker is alive (%zu dead or lost, %zu exited): the job has ended "
			   "or crashed, it is not hung.", ndead, n - ndead);
		return;
	}
	if (!res->hung) {
		pt_sb_addf(sb, "Every live worker made a step within the last %.0f s: the job is "
			   "making progress.", o->hang_timeout);
		if (ndead)
			pt_sb_addf(sb, " %zu worker%s dead or lost.", ndead, ndead == 1 ? " is" : "s are");
		return;
	}
	pt_sb_addf(sb, "The job is hung: %zu of %zu live worker%s made no step for %.0f s or more.",
		   nhung, nalive, nalive == 1 ? "" : "s", o->hang_timeout);
	for (size_t k = 0; k < res->nsuspects; k++) {
		const pt_hang_worker *s = &w[res->suspects[k]];
		const char *fn = res->function[res->suspects[k]];

		if (k == 5) {
			pt_sb_addf(sb, " And %zu more suspects.", res->nsuspects - 5);
			break;
		}
		if (s->state == PT_HANG_DEAD) {
			pt_sb_addf(sb, " Worker %s.json is dead (process %lld on %s is gone, last step "
				   "%lld).", s->id, (long long)s->pid, s->host ? s->host : "?",
				   (long long)s->step);
			continue;
		}
		if (s->state == PT_HANG_LOST) {
			pt_sb_addf(sb, " Worker %s.json is lost (no heartbeat, last step %lld).", s->id,
				   (long long)s->step);
			continue;
		}
		if (s->step < maxstep)
			pt_sb_addf(sb, " Worker %s.json is behind (last step %lld, others reached %lld)",
				   s->id, (long long)s->step, (long long)maxstep);
		else
			pt_sb_addf(sb, " Worker %s.json (last step %lld)", s->id, (long long)s->step);
		if (fn && fn[0])
			pt_sb_addf(sb, "%s %s.", s->step < maxstep ? " and is in" : " is in", fn);
		else if (s->dump)
			pt_sb_adds(sb, " has no Python frame.");
		else
			pt_sb_addf(sb, "%s gave no stacks: the process may be stopped (SIGSTOP, a "
				   "debugger) or blocked outside Python.",
				   s->step < maxstep ? " and" : "");
	}
	for (size_t k = 0; k < res->nmissing && k < 5; k++) {
		const pt_hang_missing *m = &res->missing[k];
		pt_sb_addf(sb, " Worker %s.json never entered %s (process group %s%s%s%s, sequence "
			   "%lld) that %zu other%s entered", w[m->worker].id, m->name, m->pg,
			   m->desc[0] && strcmp(m->desc, "-") ? " '" : "",
			   m->desc[0] && strcmp(m->desc, "-") ? m->desc : "",
			   m->desc[0] && strcmp(m->desc, "-") ? "'" : "", (long long)m->seq,
			   m->nwaiting, m->nwaiting == 1 ? "" : "s");
		if (m->site[0])
			pt_sb_addf(sb, " at %s", m->site);
		pt_sb_addf(sb, "; its last was sequence %lld (Flight Recorder).", (long long)m->last);
	}
	if (major && res->nsuspects && nrest) {
		pt_sb_addf(sb, " The other %zu wait%s in %s", nrest, nrest == 1 ? "s" : "",
			   major->where[0] ? major->where : "(no Python frame)");
		if (major->function[0] && strcmp(major->function, major->where))
			pt_sb_addf(sb, " (called from %s)", major->function);
		pt_sb_adds(sb, res->nsuspects == 1 ? ": the suspect is the likely cause, the others "
						     "wait for it."
						   : ": the suspects are the likely cause, the others "
						     "wait for them.");
	} else if (major && !res->nsuspects && major->n == 1) {
		pt_sb_addf(sb, " It is in %s", major->where[0] ? major->where : "(no Python frame)");
		if (major->function[0] && strcmp(major->function, major->where))
			pt_sb_addf(sb, " (called from %s)", major->function);
		pt_sb_adds(sb, ".");
	} else if (major && !res->nsuspects) {
		pt_sb_addf(sb, " All %zu workers with stacks are in the same place, %s", major->n,
			   major->where[0] ? major->where : "(no Python frame)");
		if (major->function[0] && strcmp(major->function, major->where))
			pt_sb_addf(sb, " (called from %s)", major->function);
		if (major->min_step == major->max_step)
			pt_sb_adds(sb, ", at the same step");
		else
			pt_sb_addf(sb, ", at steps %lld-%lld", (long long)major->min_step,
				   (long long)major->max_step);
		pt_sb_adds(sb, ": no worker stands out; look for a process outside these workers, or a "
			       "deadlock they share.");
	} else if (!res->ngroups && !res->nsuspects) {
		pt_sb_adds(sb, " No stacks could be read.");
	}
}

int pt_hang_analyze(const pt_hang_worker *w, size_t n, const pt_hang_options *o,
		    pt_hang_result *res, pt_error *err)
{
	char **keys = NULL;
	size_t cap = 0, largest = 0, nbehind = 0, nahead = 0, nanswered = 0;
	int64_t maxstep = INT64_MIN;
	pt_sb sb = { 0 };
	int rc = PT_OK;

	memset(res, 0, sizeof(*res));
	keys = x_calloc(n, sizeof(char *));
	res->function = x_calloc(n, sizeof(char *));
	res->nworkers = n;
	res->suspects = x_calloc(n, sizeof(size_t));
	if (!keys || !res->function || !res->suspects)
		goto oom;
	for (size_t i = 0; i < n; i++) {
		const pt_hang_thread *t;
		size_t g;

		res->hung |= w[i].state == PT_HANG_HUNG;
		if (!alive(&w[i]) || !w[i].dump)
			continue;
		t = pt_hang_training_thread(w[i].dump);
		keys[i] = pt_hang_stack_key(t);
		res->function[i] = frame_name_dup(pt_hang_user_frame(t));
		if (!keys[i] || !res->function[i])
			goto oom;
		for (g = 0; g < res->ngroups; g++)
			if (!strcmp(res->groups[g].key, keys[i]))
				break;
		if (g == res->ngroups) {
			pt_hang_group *ng;

			if (X_GROW(res->groups, cap, res->ngroups + 1))
				goto oom;
			ng = &res->groups[res->ngroups++];
			memset(ng, 0, sizeof(*ng));
			ng->key = x_strndup(keys[i], strlen(keys[i]));
			ng->function = x_strndup(res->function[i], strlen(res->function[i]));
			ng->where = frame_name_dup(pt_hang_inner_frame(t));
			ng->members = x_calloc(n, sizeof(size_t));
			ng->min_step = INT64_MAX;
			ng->max_step = INT64_MIN;
			if (!ng->key || !ng->function || !ng->where || !ng->members)
				goto oom;
		}
		res->groups[g].members[res->groups[g].n++] = i;
		if (w[i].step < res->groups[g].min_step)
			res->groups[g].min_step = w[i].step;
		if (w[i].step > res->groups[g].max_step)
			res->groups[g].max_step = w[i].step;
	}
	for (size_t g = 0; g < res->ngroups; g++)
		if (res->groups[g].n > largest)
			largest = res->groups[g].n;
	maxstep = hung_max_step(w, n);
	for (size_t i = 0; i < n; i++) {
		if (w[i].state == PT_HANG_HUNG) {
			nbehind += w[i].step < maxstep;
			nahead += w[i].step == maxstep;
		}
		nanswered += alive(&w[i]) && w[i].dump;
	}
	/* The odd ones out: dead and lost workers first... */
	for (size_t i = 0; i < n; i++)
		if (w[i].state == PT_HANG_DEAD || w[i].state == PT_HANG_LOST)
			res->suspects[res->nsuspects++] = i;
	/* ...then, where the Flight Recorder says so, the workers that never
	 * entered the collective the others wait in (hang_coll.c)... */
	if (res->hung && pt_hang_collectives(w, n, res))
		goto oom;
	for (size_t k = 0; k < res->nmissing; k++)
		if (!has(res->suspects, res->nsuspects, res->missing[k].worker))
			res->suspects[res->nsuspects++] = res->missing[k].worker;
	/* ...then, when the job is hung, the silent workers behind: alive,
	 * hung, no stacks while others gave theirs, and a step behind the
	 * others' (a process stopped with SIGSTOP, or blocked where even the
	 * watchdog cannot run): the others wait for it, in a job of any size.
	 * (The C watchdog answers whatever Python does, so silence is the
	 * strongest sign there is short of death.) */
	for (size_t i = 0; i < n; i++)
		if (res->hung && silent(&w[i], nanswered) && w[i].step < maxstep &&
		    !has(res->suspects, res->nsuspects, i))
			res->suspects[res->nsuspects++] = i;
	/* ...then the members of groups smaller than the largest... */
	for (size_t g = 0; g < res->ngroups; g++)
		res->groups[g].suspect = res->hung && res->groups[g].n < largest;
	if (res->ngroups)
		qsort(res->groups, res->ngroups, sizeof(*res->groups), cmp_group);
	for (size_t g = 0; g < res->ngroups; g++)
		if (res->groups[g].suspect)
			for (size_t k = 0; k < res->groups[g].n; k++)
				if (!has(res->suspects, res->nsuspects, res->groups[g].members[k]))
					res->suspects[res->nsuspects++] = res->groups[g].members[k];
	/* ...then the other silent workers... */
	for (size_t i = 0; i < n; i++)
		if (res->hung && silent(&w[i], nanswered) && !has(res->suspects, res->nsuspects, i))
			res->suspects[res->nsuspects++] = i;
	/* ...then the hung workers behind the other hung ones, when they are
	 * not more than those ahead (a worker still stepping is not stuck,
	 * whatever its step).  In lockstep training the workers ahead have
	 * passed a collective the ones behind also entered, so those behind
	 * are stuck in their own code: with one behind and one ahead (a job
	 * of 2), the one behind is the suspect. */
	if (nbehind && nbehind <= nahead)
		for (size_t i = 0; i < n; i++)
			if (w[i].state == PT_HANG_HUNG && w[i].step < maxstep &&
			    !has(res->suspects, res->nsuspects, i))
				res->suspects[res->nsuspects++] = i;
	explain(&sb, w, n, o, res);
	if (sb.oom)
		goto oom;
	res->explanation = x_strndup(sb.buf ? sb.buf : "", sb.len);
	if (!res->explanation)
		goto oom;
	goto out;
oom:
	pt_hang_result_free(res);
	rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
out:
	for (size_t i = 0; keys && i < n; i++)
		x_free(keys[i]);
	x_free(keys);
	pt_sb_free(&sb);
	return rc;
}

/* ---- the workers' states ---------------------------------------------------- */

void pt_hang_classify(const pt_hang_seen *s, double now, double hang_timeout, pt_hang_worker *w,
		      char *note, size_t cap)
{
	double step_time = s->has_hb ? s->hb_step_time : 0;

	w->id = s->id;
	w->host = s->host;
	w->rank = s->rank;
	w->pid = s->pid;
	w->step = s->hb_step;
	w->stacks = note;
	if (s->exited) {
		w->state = PT_HANG_EXITED;
		snprintf(note, cap, "none: the process exited");
	} else if (s->dead) {
		w->state = PT_HANG_DEAD;
		snprintf(note, cap, "none: the process is gone");
	} else if (!s->alive) {
		w->state = PT_HANG_LOST;
		snprintf(note, cap, "none: no heartbeat for %.0f s",
			 now - (s->has_hb ? s->hb_time : s->started));
	} else {
		w->state = PT_HANG_RUNNING;
		if (s->answered)
			snprintf(note, cap, "on request");
	}
	/* The watchdog saw the last step more precisely than the
	 * heartbeat (written at most every second). */
	if (s->dump && s->dump->step >= w->step && s->dump->step_time > 0) {
		w->step = s->dump->step;
		step_time = s->dump->step_time;
	}
	/* Never stepped: as long as it has run (stuck before its first
	 * step, e.g. in init_process_group). */
	if (step_time <= 0 && w->step <= 0)
		step_time = s->started;
	w->since_step = step_time > 0 ? now - step_time : -1;
	if (w->since_step < 0 && step_time > 0)
		w->since_step = 0;
	if (w->state == PT_HANG_RUNNING && w->since_step >= hang_timeout)
		w->state = PT_HANG_HUNG;
	w->dump = s->dump;
}

/* ---- report --------------------------------------------------------------- */

static pt_rv *wname(pt_report *r, pt_rv *parent, const char *key, const char *id)
{
	char buf[PT_CONTROL_ID_MAX + 8];

	snprintf(buf, sizeof(buf), "%s.json", id);
	return pt_rv_str(r, parent, key, buf);
}

static double round3(double x)
{
	return round(x * 1000) / 1000;
}

void pt_hang_add_section(pt_report *r, pt_rv *parent, const pt_hang_worker *w, size_t n,
			 const pt_hang_options *o, const pt_hang_result *res)
{
	pt_rv *h = pt_rv_obj(r, parent, PT_KEY_HANG), *a, *gs, *ws;

	/* The report tree has no boolean type (src/report/report.h): flags are
	 * written as 1/0, which JavaScript and Python test as true/false. */
	pt_rv_bool(r, h, "hung", res->hung);
	pt_rv_str(r, h, PT_KEY_EXPLANATION, res->explanation ? res->explanation : "");
	a = pt_rv_arr(r, h, "suspect_workers");
	for (size_t k = 0; k < res->nsuspects; k++)
		wname(r, a, NULL, w[res->suspects[k]].id);
	gs = pt_rv_arr(r, h, "groups");
	for (size_t g = 0; g < res->ngroups; g++) {
		const pt_hang_group *gr = &res->groups[g];
		pt_rv *o2 = pt_rv_obj(r, gs, NULL), *m, *st;

		pt_rv_bool(r, o2, "suspect", gr->suspect);
		pt_rv_int(r, o2, PT_KEY_COUNT, (int64_t)gr->n);
		m = pt_rv_arr(r, o2, PT_KEY_WORKERS);
		for (size_t k = 0; k < gr->n; k++)
			wname(r, m, NULL, w[gr->members[k]].id);
		pt_rv_str(r, o2, PT_KEY_FUNCTION, gr->function);
		pt_rv_str(r, o2, "where", gr->where);
		pt_rv_str(r, o2, "stack", gr->key);
		st = pt_rv_arr(r, o2, PT_KEY_STEPS_LC);
		pt_rv_int(r, st, NULL, gr->min_step);
		pt_rv_int(r, st, NULL, gr->max_step);
	}
	ws = pt_rv_obj(r, h, PT_KEY_WORKERS);
	for (size_t i = 0; i < n; i++) {
		char key[PT_CONTROL_ID_MAX + 8];
		pt_rv *x;
		const pt_hang_thread *t = w[i].dump ? pt_hang_training_thread(w[i].dump) : NULL;
		const pt_hang_frame *f = pt_hang_inner_frame(t);

		snprintf(key, sizeof(key), "%s.json", w[i].id);
		x = pt_rv_obj(r, ws, key);
		pt_rv_int(r, x, PT_KEY_RANK, w[i].rank);
		pt_rv_str(r, x, PT_KEY_HOST, w[i].host ? w[i].host : "");
		pt_rv_int(r, x, PT_KEY_PID, w[i].pid);
		pt_rv_str(r, x, PT_KEY_STATE, pt_hang_state_name(w[i].state));
		pt_rv_int(r, x, "last step", w[i].step);
		if (w[i].since_step >= 0)
			pt_rv_num(r, x, "seconds since last step", round3(w[i].since_step));
		else
			pt_rv_null(r, x, "seconds since last step");
		pt_rv_bool(r, x, "suspect", has(res->suspects, res->nsuspects, i));
		if (t) {
			char *key2 = pt_hang_stack_key(t);
			char where[1024];

			pt_rv_str(r, x, PT_KEY_FUNCTION, res->function && res->function[i] ? res->function[i]
										  : "");
			if (f)
				snprintf(where, sizeof(where), "%s:%lld in %s", f->file,
					 (long long)f->line, f->func);
			else
				snprintf(where, sizeof(where), "(no Python frame)");
			pt_rv_str(r, x, "where", where);
			pt_rv_str(r, x, "stack", key2 ? key2 : "");
			pt_rv_int(r, x, "threads", (int64_t)w[i].dump->nthreads);
			x_free(key2);
		}
		pt_rv_str(r, x, PT_KEY_STACKS, w[i].stacks ? w[i].stacks : (w[i].dump ? "yes" : "none"));
	}
	/* the Flight Recorder's word (hang_coll.c) */
	gs = pt_rv_arr(r, h, "never entered");
	for (size_t k = 0; k < res->nmissing; k++) {
		const pt_hang_missing *m = &res->missing[k];
		pt_rv *o2 = pt_rv_obj(r, gs, NULL);

		wname(r, o2, "worker", w[m->worker].id);
		pt_rv_str(r, o2, "process group", m->pg);
		pt_rv_str(r, o2, "description", strcmp(m->desc, "-") ? m->desc : "");
		pt_rv_str(r, o2, "collective", m->name);
		pt_rv_int(r, o2, "sequence", m->seq);
		pt_rv_int(r, o2, "its last sequence", m->last);
		pt_rv_int(r, o2, "workers in it", (int64_t)m->nwaiting);
		pt_rv_str(r, o2, "call site", m->site);
	}
	pt_rv_num(r, h, "hang timeout (s)", o->hang_timeout);
	pt_rv_str(r, h, "detected by", o->detected_by ? o->detected_by : "");
	pt_rv_num(r, h, PT_KEY_TIME, round3(o->now));
}

/* A suspect's confidence (docs/hang.md "Confidence"): strong when its
 * process is gone, or when it stands alone in its stack while every other
 * live worker with stacks shares one stack (they agree on where they wait);
 * moderate when its stack singles it out among several; weak when it gave
 * no stacks (only its step or silence names it).  A hung job loses all its
 * time: the share lost is 1.  ev (cap bytes) gets the reason. */
static const char *hang_grade(const pt_hang_result *res, const pt_hang_worker *w, size_t si,
			      char *ev, size_t cap)
{
	size_t g, mine = SIZE_MAX, nother = 0, nothers_w = 0;

	if (w[si].state == PT_HANG_DEAD || w[si].state == PT_HANG_LOST) {
		snprintf(ev, cap, "its process is %s while the others wait",
			 w[si].state == PT_HANG_DEAD ? "gone" : "lost (no heartbeat)");
		return "strong";
	}
	for (g = 0; g < res->nmissing; g++)
		if (res->missing[g].worker == si) {
			snprintf(ev, cap, "it never entered %s (process group %s, sequence %lld) "
				 "that %zu other%s entered (Flight Recorder)", res->missing[g].name,
				 res->missing[g].pg, (long long)res->missing[g].seq,
				 res->missing[g].nwaiting, res->missing[g].nwaiting == 1 ? "" : "s");
			return "strong";
		}
	for (g = 0; g < res->ngroups; g++) {
		int has = 0;

		for (size_t j = 0; j < res->groups[g].n; j++)
			has |= res->groups[g].members[j] == si;
		if (has)
			mine = g;
		else {
			nother++;
			nothers_w += res->groups[g].n;
		}
	}
	if (mine == SIZE_MAX || !w[si].dump) {
		snprintf(ev, cap, "no stacks from it: only its step and silence single it out");
		return "weak";
	}
	if (nother == 1 && res->groups[mine].n < nothers_w) {
		snprintf(ev, cap, "%zu worker%s in its stack; the other %zu live workers with stacks "
			 "share one stack", res->groups[mine].n, res->groups[mine].n == 1 ? "" : "s",
			 nothers_w);
		return "strong";
	}
	snprintf(ev, cap, "its stack is one of %zu different stacks among the live workers",
		 nother + 1);
	return "moderate";
}

pt_report *pt_hang_report(const pt_hang_worker *w, size_t n, const pt_hang_options *o,
			  const pt_hang_result *res, pt_error *err)
{
	pt_report *r = pt_report_new();
	pt_rv *root, *ws;
	double *others = NULL;

	if (!r)
		goto oom;
	root = pt_report_root(r);
	for (size_t s = 0; s < 5; s++)
		pt_rv_obj(r, root, pt_report_sections[s]);
	ws = pt_rv_obj(r, root, PT_KEY_WORKERS);
	for (size_t i = 0; i < n; i++) {
		char key[PT_CONTROL_ID_MAX + 8], why[512];
		pt_rv *x;

		snprintf(key, sizeof(key), "%s.json", w[i].id);
		x = pt_rv_obj(r, ws, key);
		pt_rv_int(r, x, PT_KEY_RANK, w[i].rank);
		pt_rv_str(r, x, PT_KEY_HOST, w[i].host ? w[i].host : "");
		pt_rv_int(r, x, PT_KEY_PID, w[i].pid);
		pt_rv_str(r, x, PT_KEY_FILE, key);
		if (w[i].since_step >= 0)
			snprintf(why, sizeof(why), "%s at step %lld (no step for %.1f s)",
				 pt_hang_state_name(w[i].state), (long long)w[i].step, w[i].since_step);
		else
			snprintf(why, sizeof(why), "%s at step %lld", pt_hang_state_name(w[i].state),
				 (long long)w[i].step);
		pt_rv_str(r, x, PT_KEY_ERROR, why);
	}
	pt_report_findings_open(r);
	others = x_calloc(n, sizeof(double));
	if (!others)
		goto oom;
	for (size_t k = 0; k < res->nsuspects; k++) {
		const pt_hang_worker *s = &w[res->suspects[k]];
		const char *fn = res->function ? res->function[res->suspects[k]] : NULL;
		size_t no = 0;
		char id[PT_CONTROL_ID_MAX + 8];
		const char *ids[1] = { id };
		pt_finding f = { 0 };
		pt_metric m[5];
		const char *args[2];
		char ev[320];

		for (size_t i = 0; i < n; i++)
			if (i != res->suspects[k] && alive(&w[i]) && w[i].since_step >= 0)
				others[no++] = w[i].since_step;
		snprintf(id, sizeof(id), "%s.json", s->id);
		f.category = PT_KEY_HANG;
		f.workers = ids;
		f.nworkers = 1;
		f.function = fn ? fn : "";
		f.metric = "seconds since last step";
		f.value = s->since_step >= 0 ? round3(s->since_step) : NAN;
		f.others = no ? round3(pt_robust_median(others, no, 0)) : NAN;
		f.impact_ms = s->since_step >= 0 ? round3(s->since_step * 1000) : NAN;
		/* the phrase's numbers (report/phrase.c): the headline, the
		 * others' median, the last step, its seconds unrounded, the pid */
		m[0] = (pt_metric){ f.metric, f.value, PT_UNIT_S };
		m[1] = (pt_metric){ "others", f.others, PT_UNIT_S };
		m[2] = (pt_metric){ "last step", (double)s->step, PT_UNIT_COUNT };
		m[3] = (pt_metric){ "no step for (s)", s->since_step, PT_UNIT_S };
		m[4] = (pt_metric){ "pid", (double)s->pid, PT_UNIT_NONE };
		args[0] = s->host ? s->host : "";
		args[1] = fn && fn[0] ? fn : "(no Python frame)";
		f.metrics = m;
		f.nmetrics = 5;
		f.args = args;
		f.nargs = 2;
		f.cause = s->state == PT_HANG_DEAD ? PT_CAUSE_DEAD :
			  s->state == PT_HANG_LOST ? PT_CAUSE_LOST : PT_CAUSE_HUNG;
		f.view = "hang";
		f.conf.level = hang_grade(res, w, res->suspects[k], ev, sizeof(ev));
		f.conf.lost = 1;
		f.conf.apart = NAN;
		f.conf.same = res->nsuspects - 1;
		f.conf.noise_ms = NAN;
		f.conf.evidence = ev;
		pt_report_add_finding(r, &f);
	}
	pt_hang_add_section(r, root, w, n, o, res);
	x_free(others);
	if (pt_report_oom(r))
		goto oom;
	return r;
oom:
	x_free(others);
	pt_report_free(r);
	pt_error_set(err, PT_ENOMEM, -1, "out of memory");
	return NULL;
}
