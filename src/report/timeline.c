/*
 * timeline.c - the timeline model's life (timeline.h) and report.json's
 * "timeline" key, what the page's Timeline view draws: the job's steps,
 * the matched collective instances, and per worker its steps, spans, GPU
 * busy time, its own instances, the late spans of a last arriver and the
 * waits, all in integer µs on the job clock, as flat arrays of tuples
 * (docs/display.md "The `timeline` key").  Bounded to TL_MAX_ENTRIES
 * tuples: the slow steps first, then the steps in order.
 */
#include "timeline.h"
#include "internal.h"
#include "keys.h"
#include "../analysis/stats.h"
#include "../util/hash.h"
#include "../util/strbuf.h"
#include "../util/bsearch.h"
#include "../util/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 100,000 tuples are about 2 MB of report.json; the page parses them in
 * tens of ms (docs/display.md). */
#define TL_MAX_ENTRIES 100000

pt_timeline *pt_timeline_new(size_t nw)
{
	pt_timeline *t = x_calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->w = x_calloc(nw ? nw : 1, sizeof(*t->w));
	if (!t->w) {
		x_free(t);
		return NULL;
	}
	return t;
}

void pt_timeline_free(pt_timeline *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->nf; i++) {
		x_free(t->f[i].w);
		x_free(t->f[i].steps);
	}
	x_free(t->f);
	x_free(t->own);
	x_free(t->inst);
	for (i = 0; i < t->nw; i++)
		x_free(t->w[i].slow);
	x_free(t->w);
	x_free(t->by_worker);
	x_free(t);
}

/* qsort has no context: the workers travel with their indices. */
typedef struct wname {
	const char *name;
	uint32_t k;
} wname;

static int wname_cmp(const void *a, const void *b)
{
	const wname *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : x->k < y->k ? -1 : x->k > y->k;
}

static const char *worker_name(const pt_timeline *t, uint32_t k)
{
	return t->w[k].s->worker ? t->w[k].s->worker : "";
}

int pt_timeline_index(pt_timeline *t)
{
	wname *v = x_malloc((t->nw ? t->nw : 1) * sizeof(*v));
	size_t k;

	x_free(t->by_worker);
	t->by_worker = x_malloc((t->nw ? t->nw : 1) * sizeof(*t->by_worker));
	if (!v || !t->by_worker) {
		x_free(v);
		return -1;
	}
	for (k = 0; k < t->nw; k++) {
		v[k].k = (uint32_t)k;
		v[k].name = worker_name(t, (uint32_t)k);
	}
	qsort(v, t->nw, sizeof(*v), wname_cmp);
	for (k = 0; k < t->nw; k++)
		t->by_worker[k] = v[k].k;
	x_free(v);
	return 0;
}

size_t pt_tl_find_worker(const pt_timeline *t, const char *name, size_t *n)
{
	size_t lo = 0, hi = t->by_worker ? t->nw : 0, first;

	PT_BSEARCH(lo, hi, mid, strcmp(worker_name(t, t->by_worker[mid]), name) < 0);
	first = lo;
	while (t->by_worker && lo < t->nw && !strcmp(worker_name(t, t->by_worker[lo]), name))
		lo++;
	*n = lo - first;
	return first;
}

void pt_report_set_timeline(pt_report *r, pt_timeline *t)
{
	if (!r) {
		pt_timeline_free(t);
		return;
	}
	pt_timeline_free(r->tl);
	r->tl = t;
}

const pt_timeline *pt_report_timeline(const pt_report *r)
{
	return r ? r->tl : NULL;
}

/* ---- the steps on the job clock ---------------------------------------- */

void pt_tl_step_span(const pt_summary *s, size_t k, double *start_us, double *end_us)
{
	double st = 0, ms;
	size_t i;

	if (!s->nsteps) {
		*start_us = 0;
		*end_us = s->window_ms * 1e3;
		return;
	}
	if (s->cpath && s->cpath->nsteps == s->nsteps) {
		st = s->cpath->steps[k].start_ms;
		ms = s->cpath->steps[k].ms;
	} else {
		for (i = 0; i < k; i++)
			st += s->step_ms[i];
		ms = s->step_ms[k];
	}
	*start_us = st * 1e3;
	*end_us = (st + ms) * 1e3;
}

int64_t pt_tl_step_number(const pt_summary *s, size_t k)
{
	return s->nsteps && s->step_numbers ? s->step_numbers[k] : -1;
}

size_t pt_tl_nsteps(const pt_summary *s)
{
	return s->nsteps ? s->nsteps : 1;
}

const char *pt_tl_label(const pt_tl_worker *w, char *buf, size_t cap)
{
	const pt_summary *s = w->s;

	if (s->rank >= 0 && s->host[0])
		snprintf(buf, cap, "rank %lld (%s)", (long long)s->rank, s->host);
	else if (s->rank >= 0)
		snprintf(buf, cap, "rank %lld", (long long)s->rank);
	else
		snprintf(buf, cap, "%s", w->id);
	return buf;
}

/* ---- names ---------------------------------------------------------------- */

typedef struct names {
	const char **v;
	size_t n, cap;
	pt_hmap map;       /* FNV-1a of a name -> its index in v */
} names;

/* The index of s in the table, added when new; UINT32_MAX out of memory. */
static uint32_t name_id(names *t, const char *s)
{
	uint64_t h = pt_hash_fnv1a_str(s);
	size_t it = 0;
	uint32_t k;

	while ((k = pt_hmap_next(&t->map, h, &it)) != PT_HMAP_NONE)
		if (!strcmp(t->v[k], s))
			return k;
	if (t->n >= UINT32_MAX - 1 || X_GROW(t->v, t->cap, t->n + 1) ||
	    pt_hmap_put(&t->map, h, (uint32_t)t->n))
		return UINT32_MAX;
	t->v[t->n] = s;
	return (uint32_t)t->n++;
}

/* ---- the key ----------------------------------------------------------- */

typedef struct jstep {
	int64_t number;
	double start, end;   /* µs, job clock: earliest start, latest end */
	size_t entries;      /* tuples it costs */
	int slow, kept;
} jstep;

static int i64_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static size_t jstep_find(const jstep *js, size_t n, int64_t number)
{
	size_t lo = 0, hi = n;

	PT_BSEARCH(lo, hi, mid, js[mid].number < number);
	return lo < n && js[lo].number == number ? lo : SIZE_MAX;
}

/* The job step whose span holds t (µs), SIZE_MAX none. */
static size_t jstep_at(const jstep *js, size_t n, double t)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (t >= js[i].start && t < js[i].end)
			return i;
	return SIZE_MAX;
}

static void add_i(pt_sb *sb, double v, int *first)
{
	if (!*first)
		pt_sb_addc(sb, ',');
	*first = 0;
	pt_sb_add_i64(sb, (int64_t)llround(isfinite(v) ? v : 0));
}

static pt_rv *raw_done(pt_report *r, pt_rv *o, const char *key, pt_sb *sb)
{
	pt_rv *v;

	pt_sb_addc(sb, ']');
	if (sb->oom) {
		r->oom = 1;
		return NULL;
	}
	v = pt_rv_raw(r, o, key, sb->buf, sb->len);
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = 0;
	pt_sb_addc(sb, '[');
	return v;
}

double pt_tl_median_arrival(const pt_timeline *t, size_t i, double *tmp, size_t *n)
{
	size_t k, m = 0;
	double lo, hi;

	for (k = 0; k < t->nw; k++) {
		uint32_t j = t->own[i * t->nw + k];
		if (j != PT_TL_NONE)
			tmp[m++] = t->w[k].shift_us + t->w[k].s->coll[j].arrive_us;
	}
	if (n)
		*n = m;
	if (!m)
		return NAN;
	hi = pt_stats_select(tmp, m, m / 2);
	if (m % 2)
		return hi;
	/* the lower middle: the largest of those select left before it */
	lo = tmp[0];
	for (k = 1; k < m / 2; k++)
		lo = tmp[k] > lo ? tmp[k] : lo;
	return (lo + hi) / 2;
}

/* What pt_timeline_add_key's parts share: the job's steps, where each
 * instance falls, the name and channel tables and one scratch buffer. */
typedef struct tlkey {
	pt_report *r;
	const pt_timeline *t;
	jstep *js;              /* the job's steps by number */
	size_t ns;
	size_t *istep;          /* instance -> its job step, SIZE_MAX none */
	size_t *inew;           /* instance -> its index in "instances", SIZE_MAX dropped */
	double *med;            /* instance -> its median arrival */
	names nm, ch;           /* span and instance names; channels */
	pt_sb sb;               /* the tuples of the array being written */
} tlkey;

/* The job's steps: every step number any worker profiled, each spanning
 * all workers' spans of it on the job clock, with its tuple count and
 * whether some worker's step is slow.  -1 when out of memory. */
static int job_steps(tlkey *c)
{
	const pt_timeline *t = c->t;
	int64_t *nums = NULL;
	size_t nnums = 0, i, k, q;
	int rc = -1;

	for (k = 0; k < t->nw; k++)
		nnums += pt_tl_nsteps(t->w[k].s);
	nums = x_malloc(nnums * sizeof(*nums));
	if (!nums)
		goto out;
	nnums = 0;
	for (k = 0; k < t->nw; k++)
		for (q = 0; q < pt_tl_nsteps(t->w[k].s); q++)
			nums[nnums++] = pt_tl_step_number(t->w[k].s, q);
	qsort(nums, nnums, sizeof(*nums), i64_cmp);
	c->js = x_calloc(nnums ? nnums : 1, sizeof(*c->js));
	if (!c->js)
		goto out;
	for (i = 0; i < nnums; i++)
		if (!c->ns || c->js[c->ns - 1].number != nums[i]) {
			c->js[c->ns].number = nums[i];
			c->js[c->ns].start = INFINITY;
			c->js[c->ns].end = -INFINITY;
			c->ns++;
		}
	for (k = 0; k < t->nw; k++) {
		const pt_tl_worker *w = &t->w[k];
		for (q = 0; q < pt_tl_nsteps(w->s); q++) {
			jstep *j = &c->js[jstep_find(c->js, c->ns, pt_tl_step_number(w->s, q))];
			double a, b;
			pt_tl_step_span(w->s, q, &a, &b);
			j->start = fmin(j->start, w->shift_us + a);
			j->end = fmax(j->end, w->shift_us + b);
			j->entries++;
			if (w->slow && w->slow[q])
				j->slow = 1;
		}
	}
	rc = 0;
out:
	x_free(nums);
	return rc;
}

/* Each instance's step, by its median arrival; its tuples: a coll per
 * member, a wait or late span per member at most.  -1 when out of memory. */
static int place_instances(tlkey *c)
{
	const pt_timeline *t = c->t;
	double *tmp;
	size_t i;

	tmp = x_malloc((t->nw + 1) * sizeof(*tmp));
	if (!tmp)
		return -1;
	if (t->ninst) {
		c->istep = x_malloc(t->ninst * sizeof(*c->istep));
		c->med = x_malloc(t->ninst * sizeof(*c->med));
		if (!c->istep || !c->med) {
			x_free(tmp);
			return -1;
		}
	}
	for (i = 0; i < t->ninst; i++) {
		size_t m;
		c->med[i] = pt_tl_median_arrival(t, i, tmp, &m);
		c->istep[i] = jstep_at(c->js, c->ns, c->med[i]);
		if (c->istep[i] != SIZE_MAX)
			c->js[c->istep[i]].entries += 2 * m;
	}
	x_free(tmp);
	return 0;
}

/* The bound: slow steps first, then in order, whole steps; one at least.
 * kept says which were kept ("all 12 steps", "steps 3-5, 9 of 40 ..."). */
static void keep_steps(jstep *js, size_t ns, pt_sb *kept)
{
	size_t total = 0, nkept = 0, i;

	for (int pass = 0; pass < 2; pass++)
		for (i = 0; i < ns; i++) {
			if (js[i].kept || (pass == 0 && !js[i].slow))
				continue;
			if (nkept && total + js[i].entries > TL_MAX_ENTRIES)
				continue;
			js[i].kept = 1;
			total += js[i].entries;
			nkept++;
		}
	if (nkept == ns) {
		pt_sb_addf(kept, "all %zu step%s", ns, ns == 1 ? "" : "s");
	} else {
		size_t a = SIZE_MAX, b = 0, runs = 0;
		for (i = 0; i <= ns; i++) {
			if (i < ns && js[i].kept) {
				if (a == SIZE_MAX)
					a = i;
				b = i;
				continue;
			}
			if (a == SIZE_MAX)
				continue;
			if (runs++ < 8) {
				pt_sb_addf(kept, "%s%lld", runs > 1 ? ", " : "steps ", (long long)js[a].number);
				if (b > a)
					pt_sb_addf(kept, "-%lld", (long long)js[b].number);
			}
			a = SIZE_MAX;
		}
		if (runs > 8)
			pt_sb_adds(kept, ", ...");
		pt_sb_addf(kept, " of %zu (the bound: %d entries)", ns, TL_MAX_ENTRIES);
	}
}

/* The instances in kept steps, numbered anew (c->inew), their tuples
 * (name, channel, last arriver, saved µs) into c->sb: written after the
 * steps.  -1 when out of memory. */
static int instance_tuples(tlkey *c)
{
	const pt_timeline *t = c->t;
	size_t i, ni = 0;
	int first;

	c->inew = x_malloc((t->ninst ? t->ninst : 1) * sizeof(*c->inew));
	if (!c->inew)
		return -1;
	pt_sb_addc(&c->sb, '[');
	for (i = 0; i < t->ninst; i++) {
		uint32_t a, b;
		c->inew[i] = SIZE_MAX;
		if (c->istep[i] == SIZE_MAX || !c->js[c->istep[i]].kept)
			continue;
		c->inew[i] = ni++;
		a = name_id(&c->nm, t->inst[i].name);
		b = name_id(&c->ch, t->inst[i].chan);
		if (a == UINT32_MAX || b == UINT32_MAX)
			return -1;
		first = ni == 1;
		add_i(&c->sb, a, &first);
		add_i(&c->sb, b, &first);
		add_i(&c->sb, t->inst[i].last == PT_TL_NONE ? -1 : (double)t->inst[i].last, &first);
		add_i(&c->sb, t->inst[i].saved_us, &first);
	}
	return 0;
}

/* "steps": each kept job step's span and the workers slow in it.  sl is
 * scratch.  -1 when out of memory. */
static int write_steps(tlkey *c, pt_rv *sarr, pt_sb *sl)
{
	const pt_timeline *t = c->t;
	pt_report *r = c->r;
	size_t i, k, q;
	int first;

	for (i = 0; i < c->ns; i++) {
		const jstep *js = &c->js[i];
		pt_rv *so;
		if (!js->kept)
			continue;
		so = pt_rv_obj(r, sarr, NULL);
		pt_rv_int(r, so, "step", js->number);
		pt_rv_int(r, so, PT_KEY_START_US, llround(js->start));
		pt_rv_int(r, so, "end_us", llround(js->end));
		sl->len = 0;
		pt_sb_addc(sl, '[');
		first = 1;
		for (k = 0; js->slow && k < t->nw; k++) {
			const pt_tl_worker *w = &t->w[k];
			for (q = 0; w->slow && q < w->s->nsteps; q++)
				if (w->slow[q] && pt_tl_step_number(w->s, q) == js->number)
					add_i(sl, (double)k, &first);
		}
		pt_sb_addc(sl, ']');
		if (sl->oom)
			return -1;
		pt_rv_raw(r, so, PT_KEY_SLOW, sl->buf, sl->len);
	}
	return 0;
}

static int step_kept(const tlkey *c, int64_t number)
{
	return c->js[jstep_find(c->js, c->ns, number)].kept;
}

/* A worker's own tuples in kept steps: "steps" (number, start, end),
 * "spans" (start, duration, name) and "gpu" (busy start, end).  -1 when
 * out of memory. */
static int worker_own(tlkey *c, pt_rv *x, const pt_tl_worker *w)
{
	const pt_summary *s = w->s;
	pt_sb *sb = &c->sb;
	size_t q;
	int first = 1;

	for (q = 0; q < pt_tl_nsteps(s); q++) {
		int64_t num = pt_tl_step_number(s, q);
		double a, b;
		if (!step_kept(c, num))
			continue;
		pt_tl_step_span(s, q, &a, &b);
		add_i(sb, (double)num, &first);
		add_i(sb, w->shift_us + a, &first);
		add_i(sb, w->shift_us + b, &first);
	}
	raw_done(c->r, x, "steps", sb);
	first = 1;
	for (q = 0; s->tl && q < s->tl->nspans; q++) {
		const int64_t *v = &s->tl->spans[4 * q];
		uint32_t id;
		if ((size_t)v[0] >= pt_tl_nsteps(s) || !step_kept(c, pt_tl_step_number(s, (size_t)v[0])))
			continue;
		id = name_id(&c->nm, s->tl->names[v[3]]);
		if (id == UINT32_MAX)
			return -1;
		add_i(sb, w->shift_us + (double)v[1], &first);
		add_i(sb, (double)v[2], &first);
		add_i(sb, id, &first);
	}
	raw_done(c->r, x, "spans", sb);
	first = 1;
	for (q = 0; s->tl && q < s->tl->ngpu; q++) {
		const int64_t *v = &s->tl->gpu[2 * q];
		size_t j = jstep_at(c->js, c->ns, w->shift_us + (double)v[0]);
		if (j == SIZE_MAX || !c->js[j].kept)
			continue;
		add_i(sb, w->shift_us + (double)v[0], &first);
		add_i(sb, w->shift_us + (double)v[1], &first);
	}
	raw_done(c->r, x, "gpu", sb);
	return 0;
}

/* Worker k's part in the kept instances: "coll" (instance, arrival, end),
 * "late" (instance, median arrival, its own) where it arrived last and
 * late, "wait" (instance, its arrival, the last arriver's) where it waited. */
static void worker_lockstep(tlkey *c, pt_rv *x, size_t k)
{
	const pt_timeline *t = c->t;
	const pt_tl_worker *w = &t->w[k];
	const pt_summary *s = w->s;
	pt_sb *sb = &c->sb;
	size_t i;
	int first = 1;

	for (i = 0; i < t->ninst; i++) {
		uint32_t j = t->own[i * t->nw + k];
		if (c->inew[i] == SIZE_MAX || j == PT_TL_NONE)
			continue;
		add_i(sb, (double)c->inew[i], &first);
		add_i(sb, w->shift_us + s->coll[j].arrive_us, &first);
		add_i(sb, w->shift_us + s->coll[j].end_us, &first);
	}
	raw_done(c->r, x, "coll", sb);
	first = 1;
	for (i = 0; i < t->ninst; i++) {
		uint32_t j = t->own[i * t->nw + k];
		double own;
		if (c->inew[i] == SIZE_MAX || j == PT_TL_NONE || t->inst[i].last != k)
			continue;
		own = w->shift_us + s->coll[j].arrive_us;
		if (own - c->med[i] < PT_TL_MIN_WAIT_US)
			continue;
		add_i(sb, (double)c->inew[i], &first);
		add_i(sb, c->med[i], &first);
		add_i(sb, own, &first);
	}
	raw_done(c->r, x, "late", sb);
	first = 1;
	for (i = 0; i < t->ninst; i++) {
		uint32_t j = t->own[i * t->nw + k], lj;
		const pt_tl_worker *L;
		double own, lt;
		if (c->inew[i] == SIZE_MAX || j == PT_TL_NONE || t->inst[i].last == PT_TL_NONE ||
		    t->inst[i].last == k)
			continue;
		L = &t->w[t->inst[i].last];
		lj = t->own[i * t->nw + t->inst[i].last];
		own = w->shift_us + s->coll[j].arrive_us;
		lt = L->shift_us + L->s->coll[lj].arrive_us;
		if (lt - own < PT_TL_MIN_WAIT_US)
			continue;
		add_i(sb, (double)c->inew[i], &first);
		add_i(sb, own, &first);
		add_i(sb, lt, &first);
	}
	raw_done(c->r, x, "wait", sb);
}

/* "workers": each worker's identity and its tuples.  -1 when out of
 * memory. */
static int write_workers(tlkey *c, pt_rv *o)
{
	const pt_timeline *t = c->t;
	pt_report *r = c->r;
	pt_rv *wo = pt_rv_arr(r, o, "workers");
	size_t k;

	for (k = 0; k < t->nw; k++) {
		const pt_tl_worker *w = &t->w[k];
		pt_rv *x = pt_rv_obj(r, wo, NULL);
		char label[600];
		pt_tl_label(w, label, sizeof(label));
		pt_rv_str(r, x, "worker", w->id);
		pt_rv_str(r, x, "label", label);
		pt_rv_int(r, x, "rank", w->s->rank);
		pt_rv_bool(r, x, "aligned", w->aligned);
		pt_rv_bool(r, x, "straggler", w->straggler);
		if (worker_own(c, x, w))
			return -1;
		worker_lockstep(c, x, k);
	}
	return 0;
}

/* "findings": [finding index, [workers], [steps]] each.  sl is scratch.
 * -1 when out of memory. */
static int write_findings(pt_report *r, pt_rv *o, const pt_timeline *t, pt_sb *sl)
{
	pt_rv *arr = pt_rv_arr(r, o, "findings");
	size_t i, q;
	int first;

	for (i = 0; i < t->nf; i++) {
		const pt_tl_finding *f = &t->f[i];
		sl->len = 0;
		pt_sb_addf(sl, "[%zu,[", f->index);
		first = 1;
		for (q = 0; q < f->nw; q++)
			add_i(sl, (double)f->w[q], &first);
		pt_sb_adds(sl, "],[");
		first = 1;
		for (q = 0; q < f->nsteps; q++)
			add_i(sl, (double)f->steps[q], &first);
		pt_sb_adds(sl, "]]");
		if (sl->oom)
			return -1;
		pt_rv_raw(r, arr, NULL, sl->buf, sl->len);
	}
	return 0;
}

void pt_timeline_add_key(pt_report *r)
{
	const pt_timeline *t = r ? r->tl : NULL;
	tlkey c = {0};
	pt_rv *o, *arr, *chans, *sarr;
	pt_sb kept = {0}, sl = {0};
	size_t i;

	if (!t || !t->nw || r->oom)
		return;
	c.r = r;
	c.t = t;
	if (job_steps(&c) || place_instances(&c))
		goto oom;
	keep_steps(c.js, c.ns, &kept);

	o = pt_rv_obj(r, pt_report_root(r), "timeline");
	pt_rv_int(r, o, "version", 1);
	{
		char buf[600];
		snprintf(buf, sizeof(buf), "us on %s's clock from its window start; lockstep "
			 "offsets applied", t->w[t->ref].id);
		pt_rv_str(r, o, "clock", buf);
	}
	pt_rv_str(r, o, "reference", t->w[t->ref].id);
	/* Names and channels first, filled below: the tables are written last
	 * into their nodes' places. */
	if (instance_tuples(&c))
		goto oom;
	/* Spans' names before the tables are written. */
	pt_rv_arr(r, o, "names");
	chans = pt_rv_arr(r, o, "channels");
	sarr = pt_rv_arr(r, o, PT_KEY_STEPS_LC);
	if (write_steps(&c, sarr, &sl))
		goto oom;
	pt_rv_int(r, o, "steps_total", (int64_t)c.ns);
	pt_rv_str(r, o, "kept", kept.oom ? "" : kept.buf);
	raw_done(r, o, "instances", &c.sb);
	if (write_workers(&c, o) || write_findings(r, o, t, &sl))
		goto oom;
	/* The tables, now complete, into the nodes made for them. */
	arr = (pt_rv *)pt_rv_get(o, "names");
	for (i = 0; arr && i < c.nm.n; i++)
		pt_rv_str(r, arr, NULL, c.nm.v[i]);
	arr = chans;
	for (i = 0; arr && i < c.ch.n; i++)
		pt_rv_str(r, arr, NULL, c.ch.v[i]);
	goto out;
oom:
	r->oom = 1;
out:
	pt_sb_free(&sl);
	x_free(c.nm.v);
	pt_hmap_free(&c.nm.map);
	x_free(c.ch.v);
	pt_hmap_free(&c.ch.map);
	x_free(c.inew);
	x_free(c.med);
	x_free(c.istep);
	x_free(c.js);
	pt_sb_free(&kept);
	pt_sb_free(&c.sb);
}
