/*
 * sampler.c - the hardware sampler (sampler.h): its two groups and their
 * threads, the series they fill, snapshots, and the compact copy for
 * charts.  The readers are in sampler_nvml.c and sampler_linux.c.
 *
 * A group's thread reads every source of the group, stages the values,
 * then appends them under the group's lock, so a snapshot (taken by the
 * agent when a raw trace arrives) waits for at most one append, never for
 * a driver call.  Ticks are absolute on CLOCK_MONOTONIC (no drift); a tick
 * missed because a sample took longer than the interval is skipped, not
 * caught up.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../util/clock.h"
#include "../util/xalloc.h"
#include "sampler_internal.h"

void pt_sampler_options_default(pt_sampler_options *o)
{
	memset(o, 0, sizeof(*o));
	o->interval_ns = 1000000;
	o->slow_interval_ns = 100000000;
	o->root = "/";
	o->nvml = NULL;
	o->linux_stats = 1;
	o->host = "";
	o->max_points = 65536;
	o->cpu_budget = 0.2;
}

/* ---- shared with the readers -------------------------------------------------- */

long hw_series(hw_group *g, const char *name, int device, const char *label, const char *unit,
	       double max)
{
	pt_series *se = pt_samples_series(&g->h, name, device, label, unit, max);

	if (!se) {
		g->oom = 1;
		return -1;
	}
	return (long)(se - g->h.s);
}

void hw_put(hw_group *g, long idx, double v)
{
	if (idx < 0)
		return;
	if (X_GROW(g->stage, g->capstage, g->nstage + 1)) {
		g->oom = 1;
		return;
	}
	g->stage[g->nstage].idx = (size_t)idx;
	g->stage[g->nstage].v = v;
	g->nstage++;
}

int hw_rate(hw_counter *c, uint64_t value, int64_t t, double scale, double *rate)
{
	int have = 0;

	if (c->valid && value >= c->prev && t > c->prev_t) {
		*rate = (double)(value - c->prev) * scale * 1e9 / (double)(t - c->prev_t);
		have = 1;
	}
	c->prev = value;
	c->prev_t = t;
	c->valid = 1;
	return have;
}

void hw_note(pt_sampler *s, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&s->note_mu);
	if (s->note.len)
		pt_sb_adds(&s->note, "; ");
	pt_sb_adds(&s->note, buf);
	pthread_mutex_unlock(&s->note_mu);
}

/* ---- groups ------------------------------------------------------------------- */

static int group_init(hw_group *g, int64_t interval)
{
	memset(g, 0, sizeof(*g));
	g->interval_ns = interval;
	if (pthread_mutex_init(&g->mu, NULL))
		return PT_ENOMEM;
	return pt_samples_init(&g->h);
}

static void group_free(hw_group *g)
{
	pt_samples_free(&g->h);
	x_free(g->stage);
	pthread_mutex_destroy(&g->mu);
}

/* Halve the resolution of every series of g: samples merged in pairs (mean
 * value, or the union of the bits for the throttle mask; the later time,
 * the end of the pair's span).  Called under g->mu. */
static void thin(hw_group *g)
{
	for (size_t k = 0; k < g->h.n; k++) {
		pt_series *se = &g->h.s[k];
		int mask = !strcmp(se->name, "throttle");
		size_t i, j = 0;

		for (i = 0; i + 1 < se->n; i += 2, j++) {
			se->t_ns[j] = se->t_ns[i + 1];
			if (mask)
				se->v[j] = (double)((uint64_t)se->v[i] | (uint64_t)se->v[i + 1]);
			else
				se->v[j] = (se->v[i] + se->v[i + 1]) / 2;
		}
		if (i < se->n) {
			se->t_ns[j] = se->t_ns[i];
			se->v[j++] = se->v[i];
		}
		se->n = j;
	}
	g->interval_ns *= 2;
}

/* Append the staged values at time t. */
static void commit(pt_sampler *s, hw_group *g, int64_t t)
{
	size_t i;

	pthread_mutex_lock(&g->mu);
	for (i = 0; i < g->nstage; i++)
		if (g->h.s[g->stage[i].idx].n >= s->opt.max_points) {
			thin(g);
			break;
		}
	for (i = 0; i < g->nstage; i++)
		if (pt_samples_add(&g->h.s[g->stage[i].idx], t, g->stage[i].v) == PT_ENOMEM)
			g->oom = 1;
	g->nstage = 0;
	g->last_t = t;
	pthread_mutex_unlock(&g->mu);
}

static void take(pt_sampler *s, unsigned which, int64_t t)
{
	hw_group *g = which == PT_SAMPLER_FAST ? &s->fast : &s->slow;
	int64_t c0 = pt_clock_mono_ns();

	if (which == PT_SAMPLER_FAST) {
		if (s->nvml)
			hw_nvml_fast(s, s->nvml, t);
		if (s->lnx)
			hw_linux_fast(s, s->lnx, t);
	} else {
		if (s->nvml)
			hw_nvml_slow(s, s->nvml, t);
		if (s->lnx)
			hw_linux_slow(s, s->lnx, t);
	}
	commit(s, g, t);
	g->cost_ns += pt_clock_mono_ns() - c0;
	g->nsamples++;
}

/* ---- lifecycle ---------------------------------------------------------------- */

pt_sampler *pt_sampler_new(const pt_sampler_options *o, pt_error *err)
{
	pt_sampler_options def;
	pt_sampler *s = NULL;
	const char *root, *nvml;
	size_t rl;
	pthread_condattr_t ca;

	pt_error_clear(err);
	if (!o) {
		pt_sampler_options_default(&def);
		o = &def;
	}
	if (o->interval_ns <= 0 || o->slow_interval_ns < 0 || o->max_points < 2) {
		pt_error_set(err, PT_EINVAL, -1, "bad sampler options (interval %lld ns, %zu points)",
			     (long long)o->interval_ns, o->max_points);
		return NULL;
	}
	s = x_calloc(1, sizeof(*s));
	if (!s)
		goto oom;
	s->opt = *o;
	if (s->opt.slow_interval_ns < s->opt.interval_ns)
		s->opt.slow_interval_ns = s->opt.interval_ns;
	root = o->root && *o->root ? o->root : "/";
	rl = strlen(root);
	while (rl > 0 && root[rl - 1] == '/')
		rl--;
	s->root = x_strndup(root, rl);  /* "/" becomes "": paths are root + "/proc/..." */
	s->host = x_strndup(o->host ? o->host : "", o->host ? strlen(o->host) : 0);
	s->opt.root = s->root;
	s->opt.host = s->host;
	s->opt.nvml = NULL;
	pthread_mutex_init(&s->note_mu, NULL);
	pthread_mutex_init(&s->run_mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->run_cv, &ca);
	pthread_condattr_destroy(&ca);
	if (!s->root || !s->host || group_init(&s->fast, s->opt.interval_ns) ||
	    group_init(&s->slow, s->opt.slow_interval_ns))
		goto oom;
	nvml = o->nvml ? o->nvml : getenv(PT_SAMPLER_NVML_ENV);
	if (!nvml)
		nvml = PT_SAMPLER_NVML_DEFAULT;
	if (*nvml)
		s->nvml = hw_nvml_open(s, nvml);
	else
		hw_note(s, "nvml: disabled");
	if (o->linux_stats) {
		s->lnx = hw_linux_open(s);
		if (!s->lnx)
			goto oom;
	}
	if (s->fast.oom || s->slow.oom || s->note.oom)
		goto oom;
	return s;
oom:
	pt_sampler_free(s);
	pt_error_set(err, PT_ENOMEM, -1, "out of memory");
	return NULL;
}

int pt_sampler_sample(pt_sampler *s, int64_t t_ns, unsigned groups)
{
	if (s->running)
		return PT_EINVAL;
	if (((groups & PT_SAMPLER_FAST) && t_ns < s->fast.last_t) ||
	    ((groups & PT_SAMPLER_SLOW) && t_ns < s->slow.last_t))
		return PT_EINVAL;
	if (groups & PT_SAMPLER_FAST)
		take(s, PT_SAMPLER_FAST, t_ns);
	if (groups & PT_SAMPLER_SLOW)
		take(s, PT_SAMPLER_SLOW, t_ns);
	return s->fast.oom || s->slow.oom ? PT_ENOMEM : PT_OK;
}

static void *group_main(void *p)
{
	pt_sampler *s = ((void **)p)[0];
	unsigned which = (unsigned)(uintptr_t)((void **)p)[1];
	hw_group *g = which == PT_SAMPLER_FAST ? &s->fast : &s->slow;
	int64_t next = pt_clock_mono_ns(), cost = 0;
	int ncost = 0;

	x_free(p);
	pthread_mutex_lock(&s->run_mu);
	while (!s->stop) {
		int64_t t, mono, c0;
		struct timespec ts;

		pthread_mutex_unlock(&s->run_mu);
		t = pt_clock_wall_ns();
		/* CLOCK_REALTIME may be stepped back (NTP): never go backwards. */
		if (t <= g->last_t)
			t = g->last_t + 1;
		c0 = pt_clock_thread_cpu_ns();
		take(s, which, t);
		mono = pt_clock_mono_ns();
		/* The agent must not take a core from training: a group whose
		 * samples cost more CPU time than its budget samples less often
		 * (CPU time: waiting for a busy core or a driver is not cost). */
		cost += pt_clock_thread_cpu_ns() - c0;
		if (++ncost == 50) {
			if (s->opt.cpu_budget > 0 &&
			    (double)cost / ncost > s->opt.cpu_budget * (double)g->interval_ns) {
				pthread_mutex_lock(&g->mu);
				g->interval_ns *= 2;
				pthread_mutex_unlock(&g->mu);
				hw_note(s, "sampler: %s interval raised to %.3g ms (a sample costs %.0f us, "
					"over %.0f%% of one core)", which == PT_SAMPLER_FAST ? "fast" : "slow",
					(double)g->interval_ns / 1e6, (double)cost / ncost / 1e3,
					s->opt.cpu_budget * 100);
			}
			cost = 0;
			ncost = 0;
		}
		next += g->interval_ns;
		if (next <= mono)
			next = mono + g->interval_ns - (mono - next) % g->interval_ns;
		ts.tv_sec = (time_t)(next / 1000000000);
		ts.tv_nsec = (long)(next % 1000000000);
		pthread_mutex_lock(&s->run_mu);
		while (!s->stop && pthread_cond_timedwait(&s->run_cv, &s->run_mu, &ts) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&s->run_mu);
	return NULL;
}

static int spawn(pt_sampler *s, unsigned which)
{
	hw_group *g = which == PT_SAMPLER_FAST ? &s->fast : &s->slow;
	void **p = x_malloc(2 * sizeof(void *));

	if (!p)
		return -1;
	p[0] = s;
	p[1] = (void *)(uintptr_t)which;
	if (pthread_create(&g->th, NULL, group_main, p)) {
		x_free(p);
		return -1;
	}
	g->started = 1;
	return 0;
}

int pt_sampler_start(pt_sampler *s, pt_error *err)
{
	int have_fast, have_slow;

	if (s->running)
		return pt_error_set(err, PT_EINVAL, -1, "sampler already running");
	s->stop = 0;
	have_fast = s->fast.h.n > 0;
	have_slow = s->slow.h.n > 0;
	if (have_fast && spawn(s, PT_SAMPLER_FAST))
		return pt_error_set(err, PT_EIO, -1, "cannot start the sampling thread: %s",
				    strerror(errno));
	if (have_slow && spawn(s, PT_SAMPLER_SLOW)) {
		pt_sampler_stop(s);
		return pt_error_set(err, PT_EIO, -1, "cannot start the sampling thread: %s",
				    strerror(errno));
	}
	s->running = 1;
	return PT_OK;
}

void pt_sampler_stop(pt_sampler *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->run_mu);
	s->stop = 1;
	pthread_cond_broadcast(&s->run_cv);
	pthread_mutex_unlock(&s->run_mu);
	if (s->fast.started)
		pthread_join(s->fast.th, NULL);
	if (s->slow.started)
		pthread_join(s->slow.th, NULL);
	s->fast.started = s->slow.started = 0;
	s->running = 0;
}

int pt_sampler_running(const pt_sampler *s)
{
	return s && s->running;
}

void pt_sampler_free(pt_sampler *s)
{
	if (!s)
		return;
	pt_sampler_stop(s);
	hw_nvml_close(s->nvml);
	hw_linux_close(s->lnx);
	group_free(&s->fast);
	group_free(&s->slow);
	pt_sb_free(&s->note);
	x_free(s->note_copy);
	x_free(s->root);
	x_free(s->host);
	pthread_mutex_destroy(&s->note_mu);
	pthread_mutex_destroy(&s->run_mu);
	pthread_cond_destroy(&s->run_cv);
	x_free(s);
}

/* ---- output ------------------------------------------------------------------- */

const char *pt_sampler_note(pt_sampler *s)
{
	pthread_mutex_lock(&s->note_mu);
	x_free(s->note_copy);
	s->note_copy = x_strndup(s->note.buf ? s->note.buf : "", s->note.len);
	pthread_mutex_unlock(&s->note_mu);
	return s->note_copy ? s->note_copy : "";
}

static int set_str(char **dst, const char *src)
{
	char *d = x_strndup(src, strlen(src));

	if (!d)
		return PT_ENOMEM;
	x_free(*dst);
	*dst = d;
	return PT_OK;
}

static int copy_series(pt_samples *out, const pt_series *se, int64_t t0, int64_t t1)
{
	pt_series *d = NULL;

	for (size_t i = 0; i < se->n; i++) {
		if (t1 > t0 && (se->t_ns[i] < t0 || se->t_ns[i] >= t1))
			continue;
		if (!d && !(d = pt_samples_series(out, se->name, se->device, se->label, se->unit,
						  se->max)))
			return PT_ENOMEM;
		if (pt_samples_add(d, se->t_ns[i], se->v[i]) == PT_ENOMEM)
			return PT_ENOMEM;
	}
	return PT_OK;
}

static int copy_group(hw_group *g, pt_samples *out)
{
	int rc = PT_OK;

	pthread_mutex_lock(&g->mu);
	for (size_t k = 0; k < g->h.n && rc == PT_OK; k++)
		rc = copy_series(out, &g->h.s[k], 0, 0);
	pthread_mutex_unlock(&g->mu);
	return rc;
}

int pt_sampler_snapshot(pt_sampler *s, pt_samples *out)
{
	int rc = pt_samples_init(out);

	if (rc)
		return rc;
	pthread_mutex_lock(&s->fast.mu);
	out->interval_ns = s->fast.interval_ns;
	pthread_mutex_unlock(&s->fast.mu);
	if (set_str(&out->host, s->host) || set_str(&out->source, s->nvml ? "nvml+proc" : "proc") ||
	    set_str(&out->note, pt_sampler_note(s)) || copy_group(&s->fast, out) ||
	    copy_group(&s->slow, out)) {
		pt_samples_free(out);
		return PT_ENOMEM;
	}
	return PT_OK;
}

void pt_sampler_inventory(const pt_sampler *s, int *gpus, int *nics, int *ib_ports, int *cpus)
{
	if (gpus)
		*gpus = hw_nvml_gpus(s->nvml);
	hw_linux_inventory(s->lnx, nics, ib_ports, cpus);
}

void pt_sampler_cost(const pt_sampler *s, double *fast_ns, double *slow_ns)
{
	if (fast_ns)
		*fast_ns = s->fast.nsamples ? (double)s->fast.cost_ns / (double)s->fast.nsamples : 0;
	if (slow_ns)
		*slow_ns = s->slow.nsamples ? (double)s->slow.cost_ns / (double)s->slow.nsamples : 0;
}

/* ---- compact copy for charts ---------------------------------------------------- */

static int compact_series(pt_samples *out, const pt_series *se, int64_t t0, int64_t t1,
			  size_t max_points)
{
	size_t a = 0, b = se->n, n, i;
	int mask = !strcmp(se->name, "throttle");
	pt_series *d;
	int64_t first, span;

	if (t1 > t0) {
		while (a < se->n && se->t_ns[a] < t0)
			a++;
		b = a;
		while (b < se->n && se->t_ns[b] < t1)
			b++;
	}
	n = b - a;
	if (!n)
		return PT_OK;
	d = pt_samples_series(out, se->name, se->device, se->label, se->unit, se->max);
	if (!d)
		return PT_ENOMEM;
	if (n <= max_points) {
		for (i = a; i < b; i++)
			if (pt_samples_add(d, se->t_ns[i], se->v[i]) == PT_ENOMEM)
				return PT_ENOMEM;
		return PT_OK;
	}
	first = se->t_ns[a];
	span = se->t_ns[b - 1] - first + 1;
	for (i = a; i < b;) {
		size_t k = (size_t)((__int128)(se->t_ns[i] - first) * (__int128)max_points / span);
		double sum = 0, tsum = 0;
		uint64_t bits = 0;
		size_t c = 0;

		/* Bucket k covers [first + k*span/max, first + (k+1)*span/max). */
		while (i < b && (size_t)((__int128)(se->t_ns[i] - first) * (__int128)max_points /
					 span) == k) {
			sum += se->v[i];
			bits |= (uint64_t)se->v[i];
			tsum += (double)(se->t_ns[i] - first);
			c++;
			i++;
		}
		if (pt_samples_add(d, first + (int64_t)(tsum / (double)c),
				   mask ? (double)bits : sum / (double)c) == PT_ENOMEM)
			return PT_ENOMEM;
	}
	return PT_OK;
}

int pt_sampler_compact(const pt_samples *h, int64_t t0, int64_t t1, size_t max_points,
		       int keep_cores, pt_samples *out)
{
	int rc = pt_samples_init(out);

	if (rc)
		return rc;
	if (max_points < 1)
		max_points = 1;
	if (set_str(&out->host, h->host ? h->host : "") ||
	    set_str(&out->source, h->source ? h->source : "") ||
	    set_str(&out->note, h->note ? h->note : ""))
		goto oom;
	out->interval_ns = h->interval_ns;
	for (size_t k = 0; k < h->n; k++) {
		const pt_series *se = &h->s[k];

		if (!keep_cores && !strcmp(se->name, "cpu_util") && se->device >= 0)
			continue;
		if (compact_series(out, se, t0, t1, max_points))
			goto oom;
	}
	return PT_OK;
oom:
	pt_samples_free(out);
	return PT_ENOMEM;
}

int pt_sampler_worker_series(const pt_samples *h, int64_t start_ns, int64_t end_ns, int gpu,
			     size_t max_points, pt_samples *out)
{
	int64_t m = (end_ns - start_ns) / 10;
	pt_samples all;
	int rc;

	if (m < 250 * 1000000LL)
		m = 250 * 1000000LL;
	rc = pt_sampler_compact(h, start_ns - m, end_ns + m, max_points, 0, &all);
	if (rc)
		return rc;
	if (gpu < 0) {
		*out = all;
		return PT_OK;
	}
	/* Keep the worker's GPU and the host-wide series. */
	rc = pt_samples_init(out);
	if (!rc && (set_str(&out->host, all.host) || set_str(&out->source, all.source) ||
		    set_str(&out->note, all.note)))
		rc = PT_ENOMEM;
	out->interval_ns = all.interval_ns;
	for (size_t k = 0; k < all.n && !rc; k++) {
		const pt_series *se = &all.s[k];

		if (se->device >= 0 && strcmp(se->name, "cpu_util") && se->device != gpu)
			continue;
		rc = copy_series(out, se, 0, 0);
	}
	pt_samples_free(&all);
	if (rc)
		pt_samples_free(out);
	return rc;
}
