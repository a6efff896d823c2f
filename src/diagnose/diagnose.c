/*
 * diagnose.c - the driver of the master-side diagnosis: options, the
 * function-key index over all worker summaries, the per-key metric vectors
 * the sections share, and the "workers" part of the report.
 *
 * Flow: pt_summary[] --index--> keys x workers --sections (compute.c,
 * memory.c, comm.c, runtime.c, python.c)--> findings.c --> display.c -->
 * pt_report.
 */
#include "internal.h"
#include "../util/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void pt_diag_options_default(pt_diag_options *o)
{
	o->z = 3.5;
	o->rel = 0.2;
	o->min_impact = 0.005;
	o->mad_floor = 0.01;
	o->memop_threshold = 0.01;
	o->runtime_threshold = 0.01;
	o->python_threshold = 0.01;
	o->python_min_impact = 0.02;
	o->top_kernels = 5;
	o->loo_below = 8;
	o->fixed_only = 0;
}

/* ---- key index ------------------------------------------------------------ */

/* 8 bytes per step multiply-xorshift hash: Python stack keys run to a few
 * KB and there are millions of patterns at 10,000 workers, so a byte-wise
 * hash would dominate indexing. */
static uint64_t hash_key(const char *s, int cls)
{
	const uint64_t m = 0x9e3779b97f4a7c15ull;
	uint64_t h = 0x243f6a8885a308d3ull ^ (uint64_t)cls, x;
	size_t n = strlen(s), i;

	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&x, s + i, 8);
		h = (h ^ x) * m;
		h ^= h >> 29;
	}
	x = 0;
	memcpy(&x, s + i, n - i);
	h = (h ^ x ^ ((uint64_t)n << 56)) * m;
	h ^= h >> 32;
	h *= m;
	return h ^ (h >> 29);
}

/* The index lives in the context (c->kslot, c->kcap) after build_index so
 * that "display" can find the keys the findings name. */
static int kindex_grow(dctx *c)
{
	size_t ncap = c->kcap ? c->kcap * 2 : 1024, i;
	uint32_t *ns = x_calloc(ncap, sizeof(*ns));

	if (!ns)
		return -1;
	for (i = 0; i < c->nkeys; i++) {
		size_t j = c->keys[i].hash & (ncap - 1);

		while (ns[j])
			j = (j + 1) & (ncap - 1);
		ns[j] = (uint32_t)i + 1;
	}
	x_free(c->kslot);
	c->kslot = ns;
	c->kcap = ncap;
	return 0;
}

/* Slot of (cls, key) in the index: the one holding it, or the empty one
 * where it would go. */
static size_t kindex_slot(const dctx *c, uint64_t h, int cls, const char *key)
{
	size_t j = h & (c->kcap - 1);

	while (c->kslot[j]) {
		const dkey *k = &c->keys[c->kslot[j] - 1];

		if (k->hash == h && k->cls == cls && !strcmp(k->key, key))
			break;
		j = (j + 1) & (c->kcap - 1);
	}
	return j;
}

/* Key index of (cls, key), inserting it; UINT32_MAX on allocation failure. */
static uint32_t kindex_get(dctx *c, size_t *kcap, const pt_pattern *p)
{
	uint64_t h = hash_key(p->key, p->cls);
	size_t j;
	dkey *k;

	if ((c->nkeys + 1) * 2 > c->kcap && kindex_grow(c))
		return UINT32_MAX;
	j = kindex_slot(c, h, p->cls, p->key);
	if (c->kslot[j])
		return c->kslot[j] - 1;
	if (c->nkeys >= UINT32_MAX - 1 || X_GROW(c->keys, *kcap, c->nkeys + 1))
		return UINT32_MAX;
	k = &c->keys[c->nkeys];
	memset(k, 0, sizeof(*k));
	k->key = p->key;
	k->hash = h;
	k->cls = p->cls;
	k->kind = p->kind;
	k->last_w = UINT32_MAX;
	c->kslot[j] = (uint32_t)c->nkeys + 1;
	return (uint32_t)c->nkeys++;
}

uint32_t diag_key_find(const dctx *c, int cls, const char *key)
{
	size_t j;

	if (!c->kcap || !key)
		return UINT32_MAX;
	j = kindex_slot(c, hash_key(key, cls), cls, key);
	return c->kslot[j] ? c->kslot[j] - 1 : UINT32_MAX;
}

/* Two passes over all patterns: count entries per key, then place them, so
 * each key's entries are contiguous and in worker order. */
/* Summaries read with a shared key set (pt_summary_read_file_shared, as
 * `diagnose` does) repeat the same key pointers, and while pt_diagnose runs
 * equal pointers mean equal keys: a direct-mapped cache from pointer to key
 * index spares most patterns hashing and comparing their key (hash_key and
 * strcmp showed in a 10,000-worker `diagnose` run's profile, all in this
 * serial phase: docs/bench.md).  A miss just takes the hash path. */
#define KCACHE 4096

typedef struct kcache_ent {
	const char *key;
	uint32_t k;
	uint8_t cls;
} kcache_ent;

static int build_index(dctx *c)
{
	size_t kcap = 0, total = 0, w, p, pos = 0;
	uint32_t *kid = NULL, *fill = NULL;
	kcache_ent *kc = NULL;
	int rc = -1;

	for (w = 0; w < c->nw; w++)
		total += c->w[w].s->npatterns;
	kid = x_malloc((total ? total : 1) * sizeof(*kid));
	kc = x_calloc(KCACHE, sizeof(*kc));
	if (!kid || !kc || total >= UINT32_MAX)
		goto out;
	for (w = 0; w < c->nw; w++) {
		const pt_summary *s = c->w[w].s;

		for (p = 0; p < s->npatterns; p++, pos++) {
			uint32_t k;

			if (!s->patterns[p].key) {
				kid[pos] = UINT32_MAX;
				continue;
			}
			{
				const pt_pattern *pp = &s->patterns[p];
				kcache_ent *e = &kc[((uintptr_t)pp->key >> 4) & (KCACHE - 1)];

				if (e->key == pp->key && e->cls == pp->cls) {
					k = e->k;
				} else {
					k = kindex_get(c, &kcap, pp);
					if (k == UINT32_MAX)
						goto out;
					e->key = pp->key;
					e->cls = pp->cls;
					e->k = k;
				}
			}
			/* A key twice in one summary: keep the first. */
			if (c->keys[k].last_w == w) {
				kid[pos] = UINT32_MAX;
				continue;
			}
			c->keys[k].last_w = (uint32_t)w;
			c->keys[k].n++;
			kid[pos] = k;
		}
	}
	fill = x_calloc(c->nkeys ? c->nkeys : 1, sizeof(*fill));
	c->ent = x_malloc((total ? total : 1) * sizeof(*c->ent));
	if (!fill || !c->ent)
		goto out;
	pos = 0;
	for (w = 0; w < c->nkeys; w++) {
		c->keys[w].off = (uint32_t)pos;
		pos += c->keys[w].n;
	}
	pos = 0;
	for (w = 0; w < c->nw; w++) {
		const pt_summary *s = c->w[w].s;

		for (p = 0; p < s->npatterns; p++, pos++) {
			dkey *k;

			if (kid[pos] == UINT32_MAX)
				continue;
			k = &c->keys[kid[pos]];
			c->ent[k->off + fill[kid[pos]]].w = (uint32_t)w;
			c->ent[k->off + fill[kid[pos]]].p = (uint32_t)p;
			fill[kid[pos]]++;
		}
	}
	rc = 0;
out:
	x_free(kc);
	x_free(fill);
	x_free(kid);
	return rc;
}

/* ---- metric vectors ----------------------------------------------------- */

#define PREFETCH 8

int dm_alloc(dmetric *m, size_t n)
{
	memset(m, 0, sizeof(*m));
	n = n ? n : 1;
	m->val = x_malloc(n * sizeof(double));
	m->work = x_malloc(n * sizeof(double));
	m->tmp = x_malloc(n * sizeof(double));
	m->sorted = x_malloc(n * sizeof(double));
	m->wk = x_malloc(n * sizeof(uint32_t));
	m->pat = x_malloc(n * sizeof(*m->pat));
	return m->val && m->work && m->tmp && m->sorted && m->wk && m->pat ? 0 : -1;
}

void dm_free(dmetric *m)
{
	x_free(m->pat);
	x_free(m->wk);
	x_free(m->sorted);
	x_free(m->tmp);
	x_free(m->work);
	x_free(m->val);
}

void dm_load(dctx *c, dmetric *m, const dkey *k, dfield f)
{
	uint32_t i;

	m->n = 0;
	m->sorted_ok = 0;
	for (i = 0; i < k->n; i++) {
		const dent *e = &c->ent[k->off + i];
		const pt_pattern *p = &c->w[e->w].pat[e->p];
		double v;

		/* Each entry lives in another worker's summary: a cache miss per
		 * value.  Prefetching a few entries ahead (with the patterns
		 * pointer cached in dworker) more than halved this loop's share
		 * of a 10,000-worker `diagnose` run (docs/bench.md). */
		if (i + PREFETCH < k->n) {
			const dent *nx = &c->ent[k->off + i + PREFETCH];

			__builtin_prefetch(&c->w[nx->w].pat[nx->p]);
		}

		switch (f) {
		case M_BOTTLENECK: v = p->bottleneck; break;
		case M_EXEC: v = p->exec_ratio; break;
		case M_MEDIAN: v = p->median_ms; break;
		case M_PER_STEP: {
			size_t ns = c->w[e->w].s->nsteps;

			v = p->total_ms / (double)(ns ? ns : 1);
			break;
		}
		default: v = p->busbw_gbps; break;
		}
		if (!isfinite(v) || v < 0)
			v = 0;
		/* Per-execution metrics exist only where the function ran. */
		if ((f == M_MEDIAN && !p->count) || (f == M_BUSBW && !(v > 0)))
			continue;
		m->val[m->n] = v;
		m->wk[m->n] = e->w;
		m->pat[m->n] = p;
		m->n++;
	}
	/* Ratio metrics: a worker without the key spent 0 there. */
	m->nzero = (f == M_BOTTLENECK || f == M_EXEC || f == M_PER_STEP) ? c->nw - m->n : 0;
}

void dm_load_gpu_util(dctx *c, dmetric *m)
{
	size_t i;

	m->n = 0;
	m->nzero = 0;
	m->sorted_ok = 0;
	for (i = 0; i < c->nw; i++) {
		double v = c->w[i].s->gpu_util;

		m->val[m->n] = isfinite(v) && v > 0 ? v : 0;
		m->wk[m->n] = (uint32_t)i;
		m->pat[m->n] = NULL;
		m->n++;
	}
}

void dm_prepare(dctx *c, dmetric *m)
{
	m->loo = m->n + m->nzero < c->o->loo_below;
	if (!m->loo) {
		memcpy(m->work, m->val, m->n * sizeof(double));
		pt_robust_stats(m->work, m->n, m->nzero, m->tmp, &m->all);
	}
}

void dm_stats(dctx *c, dmetric *m, size_t i, pt_robust *st)
{
	size_t j, k = 0;

	if (!m->loo) {
		*st = m->all;
		return;
	}
	for (j = 0; j < m->n; j++)
		if (j != i)
			m->work[k++] = m->val[j];
	pt_robust_stats(m->work, k, m->nzero, m->tmp, st);
}

double dm_median(dctx *c, dmetric *m)
{
	pt_robust st;

	memcpy(m->work, m->val, m->n * sizeof(double));
	pt_robust_stats(m->work, m->n, m->nzero, m->tmp, &st);
	return st.med;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double dm_others_median(dctx *c, dmetric *m, size_t i)
{
	size_t idx;

	/* Sorting is O(n log n) but only happens for keys where some worker
	 * already passed the statistical test, which is rare. */
	if (!m->sorted_ok) {
		memcpy(m->sorted, m->val, m->n * sizeof(double));
		if (m->n > 1)
			qsort(m->sorted, m->n, sizeof(double), cmp_double);
		m->sorted_ok = 1;
	}
	idx = pt_robust_find(m->sorted, m->n, m->val[i]);
	return pt_robust_sorted_median(m->sorted, m->n, m->nzero, idx);
}

double dm_impact_ratio(const dctx *c, const dmetric *m, size_t i, double others)
{
	return m->val[i] - others;
}

double dm_impact_duration(const dctx *c, const dmetric *m, size_t i, double others)
{
	double win = c->w[m->wk[i]].window_ms;

	if (!(win > 0) || !m->pat[i])
		return 0;
	return (m->val[i] - others) * (double)m->pat[i]->count / win;
}

int dm_test(dctx *c, dmetric *m, size_t i, int dir, dimpact_fn fn, double *others,
	    double *impact)
{
	pt_robust st;
	double imp;

	*others = NAN;
	*impact = 0;
	dm_stats(c, m, i, &st);
	if (!pt_robust_outlier(m->val[i], &st, dir, c->o))
		return 0;
	*others = m->loo ? st.med : dm_others_median(c, m, i);
	imp = fn(c, m, i, *others);
	if (dir == PT_DIR_BOTH)
		imp = fabs(imp);
	else if (dir == PT_DIR_LOW)
		imp = -imp;
	*impact = imp;
	/* The direction must also hold against the exact others' median. */
	return pt_robust_dev(m->val[i], *others, dir) > 0 && imp > c->o->min_impact;
}

int dpair_cmp(const void *a, const void *b)
{
	const dpair *x = a, *y = b;

	if (x->v != y->v)
		return x->v > y->v ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* ---- workers ------------------------------------------------------------ */

typedef struct wref {
	const pt_summary *s;
	const char *id;
} wref;

static int wref_cmp(const void *a, const void *b)
{
	const wref *x = a, *y = b;
	int64_t rx = x->s->rank < 0 ? INT64_MAX : x->s->rank;
	int64_t ry = y->s->rank < 0 ? INT64_MAX : y->s->rank;

	if (rx != ry)
		return rx < ry ? -1 : 1;
	return strcmp(x->id, y->id);
}

/* Unique ids: a worker is named by its trace's file name; two traces with
 * the same name (different folders) get "#2", "#3" appended.  A hash set
 * keeps this linear at 10,000 workers. */
static const char **make_ids(dctx *c, pt_summary *const *s, size_t n)
{
	const char **ids = x_calloc(n, sizeof(*ids));
	size_t cap = 16, i, j;
	uint32_t *set;

	while (cap < 2 * n)
		cap *= 2;
	set = x_calloc(cap, sizeof(*set));
	if (!ids || !set)
		goto fail;
	for (i = 0; i < n; i++) {
		const char *base = s[i]->worker && s[i]->worker[0] ? s[i]->worker
				 : s[i]->file && s[i]->file[0] ? s[i]->file : "worker";
		char buf[1024];
		int dup = 1;

		snprintf(buf, sizeof(buf), "%s", base);
		for (;;) {
			int clash = 0;

			j = hash_key(buf, 0) & (cap - 1);
			while (set[j] && !clash) {
				clash = !strcmp(ids[set[j] - 1], buf);
				if (!clash)
					j = (j + 1) & (cap - 1);
			}
			if (!clash)
				break;
			snprintf(buf, sizeof(buf), "%s#%d", base, ++dup);
		}
		ids[i] = pt_report_strdup(c->rep, buf);
		if (!ids[i])
			goto fail;
		set[j] = (uint32_t)i + 1;
	}
	x_free(set);
	return ids;
fail:
	x_free(set);
	x_free(ids);
	return NULL;
}

static void write_workers(dctx *c, pt_summary *const *s, const char **ids, size_t n)
{
	pt_rv *root = pt_report_root(c->rep);
	pt_rv *ws = pt_rv_obj(c->rep, root, "workers");
	wref *r = x_malloc(n * sizeof(*r));
	size_t i, j;

	if (!r) {
		c->oom = 1;
		return;
	}
	for (i = 0; i < n; i++) {
		r[i].s = s[i];
		r[i].id = ids[i];
	}
	if (n > 1)
		qsort(r, n, sizeof(*r), wref_cmp);
	for (i = 0; i < n; i++) {
		const pt_summary *x = r[i].s;
		pt_rv *o = pt_rv_obj(c->rep, ws, r[i].id);
		pt_rv *st;

		pt_rv_int(c->rep, o, "rank", x->rank);
		pt_rv_str(c->rep, o, "host", x->host ? x->host : "");
		pt_rv_int(c->rep, o, "pid", x->pid);
		pt_rv_str(c->rep, o, "file", x->file ? x->file : "");
		if (x->error) {
			pt_rv_str(c->rep, o, "error", x->error);
			continue;
		}
		st = pt_rv_arr(c->rep, o, "steps");
		for (j = 0; j < x->nsteps && x->step_numbers; j++)
			pt_rv_int(c->rep, st, NULL, x->step_numbers[j]);
		pt_rv_num(c->rep, o, "window (ms)", x->window_ms);
		pt_rv_num(c->rep, o, "gpu utilization", x->gpu_util);
		if (x->gpu_compute_util >= 0)
			pt_rv_num(c->rep, o, "gpu compute utilization", x->gpu_compute_util);
	}
	x_free(r);
}

/* One line naming the failed traces, first in the findings. */
static void failed_finding(dctx *c, size_t ntotal)
{
	pt_sb sb = {0};
	dfinding *f;
	size_t i;

	f = df_add(c, "summary", NULL, "", "error", (double)c->nfailed, NAN, 0);
	if (!f)
		return;
	pt_sb_addf(&sb, "%zu of %zu traces could not be analysed and are left out: ",
		   c->nfailed, ntotal);
	for (i = 0; i < c->nfailed && i < 10; i++)
		pt_sb_addf(&sb, "%s%s (%s)", i ? ", " : "", c->failed_ids[i],
			   c->failed[i]->error ? c->failed[i]->error : "unknown error");
	if (c->nfailed > 10)
		pt_sb_addf(&sb, " and %zu more (see \"workers\")", c->nfailed - 10);
	df_explain(c, f, "%s", sb.oom ? "" : sb.buf);
	pt_sb_free(&sb);
}

pt_report *pt_diagnose(pt_summary *const *s, size_t n, const pt_diag_options *opt,
		       pt_error *err)
{
	pt_diag_options defo;
	dctx c;
	const char **ids = NULL;
	pt_report *rep = NULL;
	size_t i;

	memset(&c, 0, sizeof(c));
	if (!opt) {
		pt_diag_options_default(&defo);
		opt = &defo;
	}
	c.o = opt;
	if (!n || !s) {
		pt_error_set(err, PT_EINVAL, -1, "no worker summaries to diagnose");
		return NULL;
	}
	for (i = 0; i < n; i++) {
		if (!s[i]) {
			pt_error_set(err, PT_EINVAL, -1, "summary %zu is null", i);
			return NULL;
		}
	}
	c.rep = rep = pt_report_new();
	c.w = x_calloc(n, sizeof(*c.w));
	c.failed = x_calloc(n, sizeof(*c.failed));
	c.failed_ids = x_calloc(n, sizeof(*c.failed_ids));
	if (!rep || !c.w || !c.failed || !c.failed_ids)
		goto oom;
	ids = make_ids(&c, s, n);
	if (!ids)
		goto oom;
	for (i = 0; i < n; i++) {
		if (s[i]->error) {
			c.failed[c.nfailed] = s[i];
			c.failed_ids[c.nfailed++] = ids[i];
			continue;
		}
		c.w[c.nw].s = s[i];
		c.w[c.nw].id = ids[i];
		c.w[c.nw].window_ms = s[i]->window_ms;
		c.w[c.nw].pat = s[i]->patterns;
		c.nw++;
	}
	if (build_index(&c))
		goto oom;
	for (i = 0; i < 3; i++)
		if (dm_alloc(&c.m[i], c.nw))
			goto oom;
	if (c.nfailed)
		failed_finding(&c, n);
	diag_step_mismatch(&c);
	diag_compute(&c);
	diag_memory(&c);
	diag_comm(&c);
	diag_runtime(&c);
	diag_python(&c);
	diag_breakdown(&c, 0);
	diag_steps(&c, 0);
	diag_lockstep(&c);
	write_workers(&c, s, ids, n);
	diag_findings(&c);
	diag_display(&c);
	diag_breakdown(&c, 1);
	diag_steps(&c, 1);
	if (c.oom || pt_report_oom(rep))
		goto oom;
	goto out;
oom:
	pt_error_set(err, PT_ENOMEM, -1, "out of memory diagnosing %zu workers", n);
	pt_report_free(rep);
	rep = NULL;
out:
	for (i = 0; i < c.nf; i++)
		x_free(c.f[i].explanation);
	x_free(c.f);
	for (i = 0; i < 3; i++)
		dm_free(&c.m[i]);
	x_free(c.ent);
	x_free(c.kslot);
	x_free(c.keys);
	x_free(ids);
	x_free(c.failed_ids);
	x_free(c.failed);
	x_free(c.w);
	return rep;
}
