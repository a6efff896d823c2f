/*
 * hwjoin.c - hardware samples joined to the kernels a worker ran (see
 * hwjoin.h and docs/hardware.md "The join").
 *
 * Flow: pt_summary_build (summary.c) -> pt_hwjoin_apply -> pt_pattern.hw
 * (per communication kernel key and link group) and pt_summary.hw_gpu.
 * Why the features look the way they do: a collective on a slow link moves
 * data steadily but slowly (low mean, low std, low peak); one waiting for a
 * straggler moves nothing and then runs at full speed (low mean, high std,
 * normal peak).  The per-kernel std and peak keep that shape, which pooling
 * all kernels' samples into one std would blur with kernel-to-kernel
 * variation.
 */
#include "hwjoin.h"
#include "../model/commkind.h"
#include "../util/xalloc.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const link_names[2] = { "nvlink", "pcie" };
static const char *const series_names[2][2] = {
	{ "nvlink_tx", "nvlink_rx" }, { "pcie_tx", "pcie_rx" },
};
static const char *const dir_names[2] = { "send", "recv" };

size_t pt_hwjoin_window(const pt_series *s, int64_t t0, int64_t t1, double cap, double *mean,
			double *std, double *max)
{
	double scale = cap > 0 ? 100.0 / cap : 1, sum = 0, sq = 0, mx = -INFINITY, m;
	size_t i, first, n = 0;

	*mean = *std = *max = 0;
	if (!s || t1 <= t0 || !s->n)
		return 0;
	first = pt_samples_lower_bound(s, t0);
	for (i = first; i < s->n && s->t_ns[i] < t1; i++) {
		if (isnan(s->v[i]))
			continue;
		sum += s->v[i] * scale;
		if (s->v[i] * scale > mx)
			mx = s->v[i] * scale;
		n++;
	}
	if (!n)
		return 0;
	m = sum / (double)n;
	/* Second pass for the deviations: no cancellation on B/s-sized values. */
	for (i = first; i < s->n && s->t_ns[i] < t1; i++) {
		double d;

		if (isnan(s->v[i]))
			continue;
		d = s->v[i] * scale - m;
		sq += d * d;
	}
	*mean = m;
	*std = sq > 0 ? sqrt(sq / (double)n) : 0;
	*max = mx;
	return n;
}

/* ---- algorithm from the kernel name --------------------------------------- */

const char *pt_hwjoin_algo_token(const char *key, size_t n)
{
	static const char *const algos[] = {
		"ring", "tree", "collnetdirect", "collnetchain", "collnet", "nvlstree", "nvls", "pat",
	};
	const char *p, *e, *alg = NULL;
	char tok[64];
	size_t i;

	for (p = key; p < key + n && !alg; p = e + 1) {
		for (e = p; e < key + n && *e != '_'; e++)
			;
		pt_commkind_squash(p, (size_t)(e - p), tok, sizeof(tok));
		for (i = 0; i < sizeof(algos) / sizeof(algos[0]) && !alg; i++)
			if (!strcmp(tok, algos[i]))
				alg = algos[i];
		if (e >= key + n)
			break;
	}
	return alg;
}

const char *pt_hwjoin_algo(const char *key, char *buf, size_t cap)
{
	const char *paren, *alg;
	size_t n;
	int role;

	if (!cap)
		return buf;
	paren = strchr(key, '(');
	n = paren ? (size_t)(paren - key) : strlen(key);
	/* The algorithm is a '_'-separated token (ncclDevKernel_AllReduce_Sum_f16_RING_LL). */
	if ((alg = pt_hwjoin_algo_token(key, n))) {
		snprintf(buf, cap, "%s", alg);
		return buf;
	}
	/* else the collective, in commkind.c's one vocabulary */
	pt_commkind_coll_word(key, n, &role);
	switch (role) {
	case PT_ROLE_ALLREDUCE: case PT_ROLE_ALLGATHER: case PT_ROLE_REDUCESCATTER:
	case PT_ROLE_ALLTOALL: case PT_ROLE_BROADCAST: case PT_ROLE_REDUCE:
	case PT_ROLE_SENDRECV:
		snprintf(buf, cap, "%s", pt_commkind_role_name(role));
		break;
	default:
		snprintf(buf, cap, "nccl");
	}
	return buf;
}

/* ---- the join ---------------------------------------------------------------- */

typedef struct lacc {
	double n, mean_n, std_n, max_n;  /* sums of n, n*mean, n*std, n*max */
	uint64_t kernels;
} lacc;

/* The series (name, device) of the first applicable file that has it. */
static const pt_series *find_series_slow(const pt_samples *const *hw, size_t nhw,
					 const char *use, const char *name, int device)
{
	size_t i;

	for (i = 0; i < nhw; i++) {
		const pt_series *s;

		if (!use[i])
			continue;
		s = pt_samples_find(hw[i], name, device, NULL);
		if (s && s->n)
			return s;
	}
	return NULL;
}

/* The metrics the join reads, and a per-GPU cache of their series: a
 * sampler file holds a few hundred series (per-core CPU lines, NICs), and
 * the lookup runs for every kernel. */
static const char *const metric_names[] = {
	"nvlink_tx", "nvlink_rx", "pcie_tx", "pcie_rx", "sm_active", "gpu_util",
	"temperature", "power", "sm_clock", "throttle",
};
#define NMETRIC (sizeof(metric_names) / sizeof(metric_names[0]))
#define CACHE_DEV 64

typedef struct scache {
	const pt_samples *const *hw;
	size_t nhw;
	const char *use;
	unsigned char done[CACHE_DEV];
	const pt_series *s[CACHE_DEV][NMETRIC];
	double cap[CACHE_DEV][4];   /* link capacities (the first four metrics) */
} scache;

static double link_cap(const pt_series *s);

static const pt_series *find_series_c(scache *c, const char *name, int device)
{
	size_t m;

	for (m = 0; m < NMETRIC && strcmp(metric_names[m], name); m++)
		;
	if (device < 0 || device >= CACHE_DEV || m == NMETRIC)
		return find_series_slow(c->hw, c->nhw, c->use, name, device);
	if (!c->done[device]) {
		size_t k;

		for (k = 0; k < NMETRIC; k++) {
			c->s[device][k] = find_series_slow(c->hw, c->nhw, c->use, metric_names[k],
							   device);
			if (k < 4)
				c->cap[device][k] = c->s[device][k] ? link_cap(c->s[device][k]) : 0;
		}
		c->done[device] = 1;
	}
	return c->s[device][m];
}

/* Capacity to express a link series in %: its max, 100 for a % series,
 * else the highest value it reached (documented as "% of observed peak"). */
static double link_cap(const pt_series *s)
{
	double mx = 0;
	size_t i;

	if (s->max > 0)
		return s->max;
	if (!strcmp(s->unit, "%"))
		return 100;
	for (i = 0; i < s->n; i++)
		if (s->v[i] > mx)
			mx = s->v[i];
	return mx;
}

typedef struct ivl {
	int64_t s, e;
	int dev;
} ivl;

static int ivl_cmp(const void *a, const void *b)
{
	const ivl *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	return (x->e > y->e) - (x->e < y->e);
}

typedef struct gacc {
	double n, sum;
} gacc;

static void acc_mean(const pt_series *s, int64_t t0, int64_t t1, gacc *a)
{
	size_t i;

	if (!s)
		return;
	for (i = pt_samples_lower_bound(s, t0); i < s->n && s->t_ns[i] < t1; i++)
		if (!isnan(s->v[i])) {
			a->sum += s->v[i];
			a->n++;
		}
}

static double mean_or(const gacc *a)
{
	return a->n > 0 ? a->sum / a->n : -1;
}

/* GPU state during the compute kernels: union of their intervals per GPU. */
static int join_compute(const pt_store *st, const pt_window *w, pt_summary *s, scache *sc)
{
	ivl *v = NULL;
	size_t nv = 0, cap = 0, i, j;
	gacc act = { 0, 0 }, util = { 0, 0 }, clk = { 0, 0 }, temp = { 0, 0 }, pow = { 0, 0 };
	double thr_n = 0, thr_hit = 0, clk_max = -1;
	uint64_t mask = 0;
	int last_dev = -2;

	for (i = 0; i < st->n; i++) {
		const pt_event *e = &st->ev[i];
		int64_t d;

		if (e->kind != PT_K_KERNEL || e->dur <= 0 || !pt_window_hits(w, e->ts, e->dur) ||
		    e->lane >= st->nlanes)
			continue;
		d = st->lanes[e->lane].pid;
		if (d < 0 || d > 4096)
			continue;
		if (X_GROW(v, cap, nv + 1)) {
			x_free(v);
			return PT_ENOMEM;
		}
		v[nv].s = e->ts;
		v[nv].e = pt_end(e->ts, e->dur);
		v[nv].dev = (int)d;
		nv++;
	}
	if (nv > 1)
		qsort(v, nv, sizeof(*v), ivl_cmp);
	for (i = 0; i < nv; i = j) {
		int64_t a = v[i].s, b = v[i].e;
		const pt_series *ser;
		size_t k;

		for (j = i + 1; j < nv && v[j].dev == v[i].dev && v[j].s <= b; j++)
			if (v[j].e > b)
				b = v[j].e;
		acc_mean(find_series_c(sc, "sm_active", v[i].dev), a, b, &act);
		acc_mean(find_series_c(sc, "gpu_util", v[i].dev), a, b, &util);
		acc_mean(find_series_c(sc, "temperature", v[i].dev), a, b, &temp);
		acc_mean(find_series_c(sc, "power", v[i].dev), a, b, &pow);
		ser = find_series_c(sc, "sm_clock", v[i].dev);
		acc_mean(ser, a, b, &clk);
		if (ser && v[i].dev != last_dev)
			for (k = 0; k < ser->n; k++)
				if (!isnan(ser->v[k]) && ser->v[k] > clk_max)
					clk_max = ser->v[k];
		ser = find_series_c(sc, "throttle", v[i].dev);
		if (ser)
			for (k = pt_samples_lower_bound(ser, a); k < ser->n && ser->t_ns[k] < b; k++) {
				uint64_t m;

				if (isnan(ser->v[k]) || ser->v[k] < 0 || ser->v[k] > 1.8e19)
					continue;
				/* Bit 0 is "GPU idle": not a slowdown. */
				m = (uint64_t)ser->v[k] & ~(uint64_t)1;
				thr_n++;
				if (m) {
					thr_hit++;
					mask |= m;
				}
			}
		last_dev = v[i].dev;
	}
	x_free(v);
	s->hw_gpu.samples = (uint64_t)(act.n > clk.n ? (act.n > util.n ? act.n : util.n)
				       : (clk.n > util.n ? clk.n : util.n));
	if (thr_n > (double)s->hw_gpu.samples)
		s->hw_gpu.samples = (uint64_t)thr_n;
	s->hw_gpu.sm_active_pct = mean_or(&act);
	s->hw_gpu.gpu_util_pct = mean_or(&util);
	s->hw_gpu.sm_clock_mhz = mean_or(&clk);
	s->hw_gpu.sm_clock_max_mhz = clk.n > 0 ? clk_max : -1;
	s->hw_gpu.temperature_c = mean_or(&temp);
	s->hw_gpu.power_w = mean_or(&pow);
	s->hw_gpu.throttle_frac = thr_n > 0 ? thr_hit / thr_n : -1;
	s->hw_gpu.throttle_reasons = mask;
	return PT_OK;
}

void pt_hw_gpu_init(pt_hw_gpu *g)
{
	memset(g, 0, sizeof(*g));
	g->sm_active_pct = g->gpu_util_pct = g->sm_clock_mhz = g->sm_clock_max_mhz = -1;
	g->throttle_frac = g->temperature_c = g->power_w = -1;
}

/* The communication pattern of name id `name` (pat_of caches the answer
 * per name: UINT32_MAX not looked up, UINT32_MAX - 1 none); >=
 * s->npatterns when there is none. */
static uint32_t comm_pattern(const pt_store *st, const pt_summary *s, uint32_t *pat_of,
			     uint32_t name)
{
	if (pat_of[name] == UINT32_MAX) {
		const char *nm = pt_strtab_get(st->strs, name, NULL);
		size_t k;

		pat_of[name] = UINT32_MAX - 1; /* looked up, not found */
		for (k = 0; k < s->npatterns; k++)
			if (s->patterns[k].cls == PT_C_COMM && !strcmp(s->patterns[k].key, nm)) {
				pat_of[name] = (uint32_t)k;
				break;
			}
	}
	return pat_of[name];
}

/* Adds the link throughput samples of device d under kernel e (both
 * links, both directions) to its pattern's accumulators a[0..4). */
static void add_kernel(scache *sc, const pt_event *e, int64_t d, lacc *a4)
{
	int l, dir;

	for (l = 0; l < 2; l++)
		for (dir = 0; dir < 2; dir++) {
			const pt_series *ser = find_series_c(sc, series_names[l][dir], (int)d);
			double m, sd, mx, cap;
			size_t n;
			lacc *a;

			/* The capacity was worked out once per series (it may
			 * scan the whole series for its peak). */
			if (!ser || !((cap = d < CACHE_DEV ? sc->cap[d][l * 2 + dir]
						     : link_cap(ser)) > 0))
				continue;
			n = pt_hwjoin_window(ser, e->ts, pt_end(e->ts, e->dur), cap, &m, &sd, &mx);
			if (!n)
				continue;
			a = &a4[(size_t)l * 2 + (size_t)dir];
			a->n += (double)n;
			a->mean_n += m * (double)n;
			a->std_n += sd * (double)n;
			a->max_n += mx * (double)n;
			a->kernels++;
		}
}

/* Every communication kernel of the window with a pattern and a device:
 * its samples into acc[pattern * 4 + link * 2 + dir].  -1: out of
 * memory. */
static int join_kernels(const pt_store *st, const pt_window *w, const pt_summary *s,
			scache *sc, lacc *acc)
{
	uint32_t nstr = pt_strtab_count(st->strs);
	uint32_t *pat_of = x_malloc((size_t)nstr * sizeof(*pat_of));
	size_t i;

	if (!pat_of)
		return -1;
	memset(pat_of, 0xff, (size_t)nstr * sizeof(*pat_of));
	for (i = 0; i < st->n; i++) {
		const pt_event *e = &st->ev[i];
		uint32_t p;
		int64_t d;

		if (e->kind != PT_K_COMM_KERNEL || e->dur <= 0 || e->name >= nstr ||
		    e->lane >= st->nlanes || !pt_window_hits(w, e->ts, e->dur))
			continue;
		p = comm_pattern(st, s, pat_of, e->name);
		if (p >= s->npatterns)
			continue;
		d = st->lanes[e->lane].pid;
		if (d < 0 || d > 4096)
			continue;
		add_kernel(sc, e, d, &acc[(size_t)p * 4]);
	}
	x_free(pat_of);
	return 0;
}

/* Each pattern's link groups ("<link> <algorithm> <dir>") with samples:
 * average, std and peak share of the link.  -1: out of memory. */
static int fill_links(pt_summary *s, const lacc *acc)
{
	size_t i;

	for (i = 0; i < s->npatterns; i++) {
		pt_pattern *p = &s->patterns[i];
		char algo[32];
		int k, nk = 0;

		for (k = 0; k < 4; k++)
			nk += acc[i * 4 + (size_t)k].n > 0;
		if (!nk)
			continue;
		p->hw = x_calloc((size_t)nk, sizeof(*p->hw));
		if (!p->hw)
			return -1;
		pt_hwjoin_algo(p->key, algo, sizeof(algo));
		for (k = 0; k < 4; k++) {
			const lacc *a = &acc[i * 4 + (size_t)k];
			pt_hw_link *h;

			if (!(a->n > 0))
				continue;
			h = &p->hw[p->nhw++];
			snprintf(h->group, sizeof(h->group), "%s %s %s", link_names[k / 2], algo,
				 dir_names[k % 2]);
			h->avg_pct = a->mean_n / a->n;
			h->std_pct = a->std_n / a->n;
			h->peak_pct = a->max_n / a->n;
			h->samples = (uint64_t)a->n;
			h->kernels = a->kernels;
		}
	}
	return 0;
}

/* Names the sources of the files used ("nvml+proc", "nsys+nvml+proc")
 * in s->hw_source.  -1: out of memory. */
static int name_sources(pt_summary *s, const pt_samples *const *hw, size_t nhw, const char *use)
{
	char src[128] = "";
	size_t len = 0, i;

	for (i = 0; i < nhw; i++) {
		const char *x = use[i] && hw[i]->source[0] ? hw[i]->source : NULL;

		if (!x || strstr(src, x))
			continue;
		len += (size_t)snprintf(src + len, len < sizeof(src) ? sizeof(src) - len : 0,
					"%s%s", len ? "+" : "", x);
		if (len >= sizeof(src))
			len = sizeof(src) - 1;
	}
	s->hw_source = x_strndup(src[0] ? src : "samples", strlen(src[0] ? src : "samples"));
	return s->hw_source ? 0 : -1;
}

int pt_hwjoin_apply(const pt_store *st, const pt_window *w, pt_summary *s,
		    const pt_samples *const *hw, size_t nhw, pt_error *err)
{
	lacc *acc = NULL;   /* [pattern][link][dir] */
	scache *sc = NULL;
	char *use = NULL;
	size_t i, nuse = 0;
	int rc = PT_OK;

	pt_hw_gpu_init(&s->hw_gpu);
	if (!nhw || !hw)
		return PT_OK;
	use = x_calloc(nhw, 1);
	if (!use)
		goto oom;
	for (i = 0; i < nhw; i++) {
		/* A node's file applies to the workers on that node. */
		use[i] = hw[i] && hw[i]->n &&
			 (!hw[i]->host[0] || !s->host[0] || !strcmp(hw[i]->host, s->host));
		nuse += use[i];
	}
	if (!nuse)
		goto out;
	sc = x_calloc(1, sizeof(*sc));
	if (!sc)
		goto oom;
	sc->hw = hw;
	sc->nhw = nhw;
	sc->use = use;

	acc = x_calloc(s->npatterns ? s->npatterns * 4 : 1, sizeof(*acc));
	if (!acc || join_kernels(st, w, s, sc, acc) || fill_links(s, acc))
		goto oom;
	if ((rc = join_compute(st, w, s, sc)))
		goto oom;
	if (name_sources(s, hw, nhw, use))
		goto oom;
	goto out;
oom:
	for (i = 0; i < s->npatterns; i++) {
		x_free(s->patterns[i].hw);
		s->patterns[i].hw = NULL;
		s->patterns[i].nhw = 0;
	}
	x_free(s->hw_source);
	s->hw_source = NULL;
	pt_hw_gpu_init(&s->hw_gpu);
	rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory joining hardware samples");
out:
	x_free(sc);
	x_free(acc);
	x_free(use);
	return rc;
}
