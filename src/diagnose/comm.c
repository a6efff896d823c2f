/*
 * comm.c - the "Communication" section: collectives (NCCL/RCCL kernels and
 * CPU collectives such as gloo) with an example of a normal worker and the
 * abnormal workers per function.  Groups: the seed's "<link> <algorithm>
 * <send|recv>" ("nvlink ring send") when the summaries carry link
 * throughput from hardware samples (docs/hardware.md), else "<algorithm>
 * <collective>" from the kernel name.  Features compared: bottleneck ratio
 * and median duration (higher costs time), bus bandwidth from message
 * sizes and the link's avg throughput (lower costs time).  The throughput
 * shape inside the kernels tells a slow link (steady but slow: low mean,
 * low peak) from a worker waiting for a late peer (nothing, then full
 * speed: low mean, high std, normal peak).
 */
#include "internal.h"
#include "sections.h"
#include "../analysis/hwjoin.h"
#include "../model/commkind.h"
#include "../util/xalloc.h"
#include "../report/keys.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define SEC PT_KEY_COMMUNICATION

char *pt_diag_comm_group(const char *key, int kind, char *out, size_t cap)
{
	const char *paren = strchr(key, '(');
	size_t n = paren ? (size_t)(paren - key) : strlen(key);
	const char *coll, *alg;

	if (!cap)
		return out;
	/* Kernels other than NCCL's and RCCL's by their role in the one table
	 * the readers use (src/model/commkind.c): "alltoall dispatch",
	 * "alltoall combine", "allreduce" for a custom all-reduce ... */
	if (kind == PT_K_COMM_KERNEL) {
		if (!pt_commkind_is_nccl_kernel(key)) {
			int role = pt_commkind_classify(key, strlen(key));
			if (role == PT_ROLE_NONE)
				role = pt_commkind_role_from_name(key, strlen(key));
			snprintf(out, cap, "%s", pt_commkind_role_name(role));
			return out;
		}
	}
	coll = pt_commkind_coll_word(key, n, NULL);
	if (kind == PT_K_CPU_COMM || !pt_commkind_names_nccl(key, n)) {
		snprintf(out, cap, "%s %s", pt_commkind_backend(key, n), coll ? coll : "collective");
		return out;
	}
	if (!coll) {
		snprintf(out, cap, "nccl");
		return out;
	}
	if (!strcmp(coll, "sendrecv") || !strcmp(coll, "send") || !strcmp(coll, "recv")) {
		snprintf(out, cap, "%s", coll);
		return out;
	}
	/* The algorithm is one '_'-separated token of the name (RING, TREE, ...). */
	alg = pt_hwjoin_algo_token(key, n);
	if (alg)
		snprintf(out, cap, "%s %s", alg, coll);
	else
		snprintf(out, cap, "%s", coll);
	return out;
}

typedef struct cabn {
	uint32_t w;           /* ctx worker */
	const pt_pattern *p;
	int diff;
	double imp;
} cabn;

typedef struct centry {
	uint32_t k;
	char group[64];
	double med_b, score;
	uint32_t ex_w;
	const pt_pattern *ex_p;
	int ex_diff;
	size_t off, n;
	int hw;               /* group is a hardware link group (features include throughput) */
} centry;

static int cmp_group(const void *a, const void *b, void *arg)
{
	const centry *x = a, *y = b;
	const dctx *c = arg;
	int r = strcmp(x->group, y->group);

	if (r)
		return r;
	if (x->med_b != y->med_b)
		return x->med_b > y->med_b ? -1 : 1;
	return strcmp(c->keys[x->k].key, c->keys[y->k].key);
}

static int cmp_centry(const void *a, const void *b, void *arg)
{
	const centry *x = a, *y = b;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return cmp_group(a, b, arg);
}

static int cmp_cabn(const void *a, const void *b, void *arg)
{
	const cabn *x = a, *y = b;
	const dctx *c = arg;

	if (x->imp != y->imp)
		return x->imp > y->imp ? -1 : 1;
	return strcmp(c->w[x->w].id, c->w[y->w].id);
}

/* Impact of a lower bandwidth or throughput: the share of the window the
 * calls would have saved at the others' rate (negative = time lost, as
 * dm_test flips the sign for PT_DIR_LOW). */
static double impact_busbw(const dctx *c, const dmetric *m, size_t i, double others)
{
	double win = c->w[m->wk[i]].window_ms;

	if (!(win > 0) || !(others > 0) || !m->pat[i])
		return 0;
	return -(m->pat[i]->total_ms / win) * (1 - m->val[i] / others);
}

/* Either-direction difference on one metric (for "different from other
 * workers"): z and relative deviation both above their thresholds. */
static int differs(dctx *c, dmetric *m, size_t i)
{
	pt_robust st;

	dm_stats(c, m, i, &st);
	return st.n && pt_robust_outlier(m->val[i], &st, PT_DIR_BOTH, c->o->z, c->o->rel, c->o->mad_floor);
}

static const pt_hw_link *hw_of(const pt_pattern *p, const char *group)
{
	uint32_t i;

	for (i = 0; p && i < p->nhw; i++)
		if (!strcmp(p->hw[i].group, group))
			return &p->hw[i];
	return NULL;
}

static void features(dctx *c, pt_rv *o, const pt_pattern *p, const char *hwgroup)
{
	pt_rv *f = pt_rv_obj(c->rep, o, "features");
	const pt_hw_link *h = hwgroup ? hw_of(p, hwgroup) : NULL;

	pt_rv_num(c->rep, f, PT_KEY_BOTTLENECK_RATIO, p->bottleneck);
	pt_rv_num(c->rep, f, "execution ratio (in [0,1])", p->exec_ratio);
	pt_rv_num(c->rep, f, "median duration (ms)", p->median_ms);
	if (h) {
		pt_rv_num(c->rep, f, "avg throughput (%)", h->avg_pct);
		pt_rv_num(c->rep, f, "throughput std (%)", h->std_pct);
	}
	if (p->busbw_gbps > 0) {
		pt_rv_num(c->rep, f, "bus bandwidth (GB/s)", p->busbw_gbps);
		/* Without link samples it comes from the trace's message sizes
		 * and the nccl-tests factors: say so beside the number. */
		if (!h)
			pt_rv_str(c->rep, f, "bus bandwidth note",
				  "computed from message sizes (no hardware samples)");
	}
}

/* ---- hardware link groups of one function ---------------------------------- */

#define MAX_HW_GROUPS 8

/* One worker's throughput in one link group, against the other workers. */
typedef struct hwres {
	int has;
	double avg, std, peak;        /* this worker */
	double o_avg, o_std, o_peak;  /* exact medians of the other workers */
	int abn;                      /* abnormal by the rule on a lower avg */
	double imp;                   /* its impact (share of the window) */
	int differs;
} hwres;

typedef struct hwkey {
	size_t ng;
	char group[MAX_HW_GROUPS][48];
	hwres *r[MAX_HW_GROUPS];      /* r[g][j]: j indexes the key's bottleneck entries */
} hwkey;

static void hwkey_free(hwkey *h)
{
	size_t g;

	for (g = 0; g < MAX_HW_GROUPS; g++)
		x_free(h->r[g]);
	memset(h, 0, sizeof(*h));
}

/* Load one feature of one group into m (only workers that have the group). */
static void load_hw(dctx *c, dmetric *m, const dkey *k, const char *group, int what)
{
	uint32_t i;

	m->n = 0;
	m->nzero = 0;
	m->sorted_ok = 0;
	for (i = 0; i < k->n; i++) {
		const dent *e = &c->ent[k->off + i];
		const pt_pattern *p = dw_pat(&c->w[e->w], e->p);
		/* hardware links: whole patterns only (a digest has none) */
		const pt_hw_link *h = c->w[e->w].whole ? hw_of(p, group) : NULL;
		double v;

		if (!h || !h->samples)
			continue;
		v = what == 0 ? h->avg_pct : what == 1 ? h->std_pct : h->peak_pct;
		if (!isfinite(v) || v < 0)
			v = 0;
		m->val[m->n] = v;
		m->wk[m->n] = e->w;
		m->pat[m->n] = p;
		m->n++;
	}
}

/* Position of worker w in metric m at or after *pos (entries are in worker
 * order), or (size_t)-1. */
static size_t find_w(const dmetric *m, size_t *pos, uint32_t w)
{
	while (*pos < m->n && m->wk[*pos] < w)
		(*pos)++;
	return *pos < m->n && m->wk[*pos] == w ? *pos : (size_t)-1;
}

/* The link groups of key k that carried its traffic (median worker's mean
 * throughput >= PT_HW_LINK_MIN_PCT), with every worker's numbers against the
 * others'.  mb holds the key's bottleneck entries (one per worker). */
static int hw_groups(dctx *c, const dkey *k, dmetric *mb, dmetric *ma, hwkey *hk)
{
	char all[MAX_HW_GROUPS][48];
	size_t na = 0, g, i, j;
	uint32_t e;

	memset(hk, 0, sizeof(*hk));
	for (e = 0; e < k->n; e++) {
		const dent *en = &c->ent[k->off + e];
		const pt_pattern *p = dw_pat(&c->w[en->w], en->p);
		uint32_t h;

		for (h = 0; c->w[en->w].whole && h < p->nhw; h++) {
			for (g = 0; g < na && strcmp(all[g], p->hw[h].group); g++)
				;
			if (g == na && na < MAX_HW_GROUPS)
				snprintf(all[na++], sizeof(all[0]), "%s", p->hw[h].group);
		}
	}
	/* Sorted, so that the output does not depend on the input order. */
	for (i = 1; i < na; i++)
		for (j = i; j > 0 && strcmp(all[j - 1], all[j]) > 0; j--) {
			char t[48];

			memcpy(t, all[j], sizeof(t));
			memcpy(all[j], all[j - 1], sizeof(t));
			memcpy(all[j - 1], t, sizeof(t));
		}
	for (g = 0; g < na; g++) {
		hwres *r;
		size_t pos, w;

		load_hw(c, ma, k, all[g], 0);
		if (!ma->n || dm_median(c, ma) < PT_HW_LINK_MIN_PCT)
			continue;
		r = x_calloc(mb->n ? mb->n : 1, sizeof(*r));
		if (!r)
			return -1;
		hk->r[hk->ng] = r;
		/* at most 47 bytes of the name (the precision says so to GCC) */
		snprintf(hk->group[hk->ng], sizeof(hk->group[0]), "%.*s",
			 (int)sizeof(hk->group[0]) - 1, all[g]);
		hk->ng++;
		/* avg: the rule (lower costs time), then std and peak for the shape. */
		dm_prepare(c, ma);
		for (i = 0, pos = 0; i < ma->n; i++) {
			double oth, imp;

			w = find_w(mb, &pos, ma->wk[i]);
			if (w == (size_t)-1)
				continue;
			r[w].has = 1;
			r[w].avg = ma->val[i];
			r[w].abn = dm_test(c, ma, i, PT_DIR_LOW, impact_busbw, &oth, &imp);
			r[w].imp = imp;
			r[w].differs = differs(c, ma, i);
			r[w].o_avg = ma->n > 1 ? dm_others_median(c, ma, i) : NAN;
		}
		load_hw(c, ma, k, all[g], 1);
		for (i = 0, pos = 0; i < ma->n; i++)
			if ((w = find_w(mb, &pos, ma->wk[i])) != (size_t)-1) {
				r[w].std = ma->val[i];
				r[w].o_std = ma->n > 1 ? dm_others_median(c, ma, i) : NAN;
			}
		load_hw(c, ma, k, all[g], 2);
		for (i = 0, pos = 0; i < ma->n; i++)
			if ((w = find_w(mb, &pos, ma->wk[i])) != (size_t)-1) {
				r[w].peak = ma->val[i];
				r[w].o_peak = ma->n > 1 ? dm_others_median(c, ma, i) : NAN;
			}
	}
	return 0;
}

/* ---- findings --------------------------------------------------------------- */

static const char *const metric_names[5] = {
	"bottleneck ratio", "median duration (ms)", "bus bandwidth (GB/s)", "avg throughput (%)",
	"throughput std (%)",
};

/* The worker whose kernel of this function is markedly the shortest: in a
 * collective the last to arrive waits least, so it is the likely straggler. */
static uint32_t straggler(dctx *c, dmetric *md)
{
	double med, lo = INFINITY;
	uint32_t best = UINT32_MAX;
	size_t i;

	if (md->n < 3)
		return UINT32_MAX;
	med = dm_median(c, md);
	for (i = 0; i < md->n; i++)
		if (md->val[i] < lo) {
			lo = md->val[i];
			best = md->wk[i];
		}
	return med > 0 && lo < (1 - c->o->rel) * med ? best : UINT32_MAX;
}

static void comm_finding(dctx *c, const dkey *k, const char *group, const dworker *w,
			 int metric, double val, double oth, double imp)
{
	char sn[160];
	dfinding *f = df_add(c, DC_COMM, w->id, k->key, metric_names[metric], val, oth,
			     imp * w->window_ms);
	const char *why = "the collective takes longer on this worker: usually it waits for "
			  "a worker that arrives late (see the other findings), otherwise a "
			  "slow link or NIC on this worker's path";

	pt_name_sentence(k->key, k->cls, sn, sizeof(sn));
	if (metric == 0)
		df_explain_share(c, f, sn, group, why);
	else if (f) {
		pt_unit u = metric == 1 ? PT_UNIT_MS : PT_UNIT_GBPS;
		df_cause(f, metric == 1 ? PT_CAUSE_SLOW_CALLS : PT_CAUSE_LOW_BANDWIDTH, u);
		df_metric(f, "others", oth, u);
		df_metric(f, "ms per step", imp * w->window_ms / dw_steps(w), PT_UNIT_MS_STEP);
		df_arg(c, f, "%s", sn);
		df_arg(c, f, "%s", group);
		if (metric == 1)
			df_arg(c, f, "%s", why);
	}
}

/* With link throughput: name the shape.  Returns 1 when a finding was made. */
static int hw_finding(dctx *c, const dkey *k, const hwkey *hk, size_t j, const dworker *w,
		      uint32_t late, double imp)
{
	double rel = c->o->rel, best = INFINITY;
	size_t g, gb = (size_t)-1;
	const hwres *r;
	char sn[160], link[16];
	dfinding *f;

	for (g = 0; g < hk->ng; g++) {
		r = &hk->r[g][j];
		if (r->has && r->o_avg > 0 && r->avg / r->o_avg < best) {
			best = r->avg / r->o_avg;
			gb = g;
		}
	}
	if (gb == (size_t)-1 || best > 1 - rel)
		return 0;
	r = &hk->r[gb][j];
	pt_name_sentence(k->key, k->cls, sn, sizeof(sn));
	snprintf(link, sizeof(link), "%.*s", (int)strcspn(hk->group[gb], " "), hk->group[gb]);
	if (r->peak < (1 - rel) * r->o_peak) {
		/* Steady but slow: the link itself cannot go faster. */
		f = df_add(c, DC_COMM, w->id, k->key, metric_names[3], r->avg, r->o_avg,
			   imp * w->window_ms);
		df_cause(f, PT_CAUSE_SLOW_LINK, PT_UNIT_PCT);
		df_metric(f, "others", r->o_avg, PT_UNIT_PCT);
		df_metric(f, "link std (%)", r->std, PT_UNIT_PCT);
		df_metric(f, "link peak (%)", r->peak, PT_UNIT_PCT);
		df_metric(f, "others' link peak (%)", r->o_peak, PT_UNIT_PCT);
		df_metric(f, "ms per step", imp * w->window_ms / dw_steps(w), PT_UNIT_MS_STEP);
		df_arg(c, f, "%s", sn);
		df_arg(c, f, "%s", hk->group[gb]);
		df_arg(c, f, "%s", link);
		return 1;
	}
	if (r->std > (1 + rel) * r->o_std) {
		pt_sb who = { 0 };

		if (late != UINT32_MAX) {
			df_who(&who, c, late, 'W');
			pt_sb_addf(&who, ", whose %s is the shortest: it arrives last", sn);
		} else {
			pt_sb_addf(&who, "no worker's %s is markedly shorter: look for the slow "
				   "worker in the other sections", sn);
		}
		/* Nothing, then full speed: the link is fine, the peer is late. */
		f = df_add(c, DC_COMM, w->id, k->key, metric_names[4], r->std, r->o_std,
			   imp * w->window_ms);
		df_cause(f, PT_CAUSE_WAITS_FOR_PEER, PT_UNIT_PCT);
		df_metric(f, "others", r->o_std, PT_UNIT_PCT);
		df_metric(f, "link peak (%)", r->peak, PT_UNIT_PCT);
		df_metric(f, "link average (%)", r->avg, PT_UNIT_PCT);
		df_metric(f, "others' link peak (%)", r->o_peak, PT_UNIT_PCT);
		df_metric(f, "ms per step", imp * w->window_ms / dw_steps(w), PT_UNIT_MS_STEP);
		df_arg(c, f, "%s", sn);
		df_arg(c, f, "%s", hk->group[gb]);
		df_arg(c, f, "%s", who.oom ? "" : who.buf);
		if (who.oom)
			c->oom = 1;
		pt_sb_free(&who);
		return 1;
	}
	return 0;
}

/* What the section collects over the communication functions: the
 * abnormal workers of each function (rec), and one entry per (function,
 * group) pointing at its run of rec. */
typedef struct cstate {
	centry *ent;
	cabn *rec;
	size_t nent, entcap, nrec, reccap;
} cstate;

/* The example of a normal worker so far: not abnormal, fewest differing
 * features, closest to the median bottleneck ratio, then name. */
typedef struct cnormal {
	size_t best;          /* index in the bottleneck metric, (size_t)-1: none yet */
	double dist;
	int diff, abn;
} cnormal;

/* Tests worker j of the bottleneck metric (c->m[0]; jd and jw: its place
 * in the median-duration and bus bandwidth metrics, (size_t)-1 when
 * absent) on the three timing metrics and the hardware groups of hk.  An
 * abnormal worker gets a record in cs and a finding (the link's shape
 * when samples name the cause, else the timing).  Sets *diffp to its
 * number of differing features and *abnormal.  -1: out of memory. */
static int judge_worker(dctx *c, const dkey *k, const char *group, const hwkey *hk,
			uint32_t late, size_t j, size_t jd, size_t jw, cstate *cs, int *diffp,
			int *abnormal)
{
	dmetric *mb = &c->m[0], *md = &c->m[1], *mw = &c->m[2];
	uint32_t w = mb->wk[j];
	double oth[3], imp[3], val[3] = { mb->val[j], 0, 0 }, himp = 0;
	int abn[3] = { 0, 0, 0 }, diff = 0, top = -1, t, hdiff = 0;
	size_t gi;

	diff += differs(c, mb, j);
	abn[0] = dm_test(c, mb, j, PT_DIR_HIGH, dm_impact_ratio, &oth[0], &imp[0]);
	if (jd != (size_t)-1) {
		diff += differs(c, md, jd);
		val[1] = md->val[jd];
		abn[1] = dm_test(c, md, jd, PT_DIR_HIGH, dm_impact_duration, &oth[1], &imp[1]);
	}
	if (jw != (size_t)-1) {
		diff += differs(c, mw, jw);
		val[2] = mw->val[jw];
		abn[2] = dm_test(c, mw, jw, PT_DIR_LOW, impact_busbw, &oth[2], &imp[2]);
	}
	for (t = 0; t < 3; t++)
		if (abn[t] && (top < 0 || imp[t] > imp[top]))
			top = t;
	for (gi = 0; gi < hk->ng; gi++) {
		const hwres *r = &hk->r[gi][j];

		hdiff |= r->has && r->differs;
		if (r->has && r->abn && r->imp > himp)
			himp = r->imp;
	}
	diff += hdiff;
	*diffp = diff;
	*abnormal = top >= 0 || himp > 0;
	if (*abnormal) {
		double ti = top >= 0 && imp[top] > himp ? imp[top] : himp;

		if (X_GROW(cs->rec, cs->reccap, cs->nrec + 1))
			return -1;
		cs->rec[cs->nrec].w = w;
		cs->rec[cs->nrec].p = mb->pat[j];
		cs->rec[cs->nrec].diff = diff;
		cs->rec[cs->nrec++].imp = ti;
		/* The shape of the link throughput names the cause when
		 * samples exist; else the timing finding. */
		if (!hk->ng || !hw_finding(c, k, hk, j, &c->w[w], late, ti)) {
			if (top >= 0)
				comm_finding(c, k, group, &c->w[w], top, val[top], oth[top],
					     imp[top]);
		}
	}
	return 0;
}

/* Makes worker j (of mb) the example of a normal worker when it beats
 * the one in *nb (see cnormal). */
static void note_normal(const dctx *c, const dmetric *mb, size_t j, int abnormal, int diff,
			double dist, cnormal *nb)
{
	int better;

	if (nb->best == (size_t)-1)
		better = 1;
	else if (abnormal != nb->abn)
		better = !abnormal;
	else if (diff != nb->diff)
		better = diff < nb->diff;
	else if (dist != nb->dist)
		better = dist < nb->dist;
	else
		better = strcmp(c->w[mb->wk[j]].id, c->w[mb->wk[nb->best]].id) < 0;
	if (better) {
		nb->best = j;
		nb->dist = dist;
		nb->diff = diff;
		nb->abn = abnormal;
	}
}

/* One communication function (key i): loads and prepares its metrics
 * (c->m[0..2], its hardware groups in hk), judges every worker, sorts
 * its abnormal workers and adds one entry per group the function appears
 * in: its link groups when samples give them, else its name's group.
 * -1: out of memory. */
static int scan_key(dctx *c, size_t i, dmetric *ma, hwkey *hk, cstate *cs)
{
	const dkey *k = &c->keys[i];
	dmetric *mb = &c->m[0], *md = &c->m[1], *mw = &c->m[2];
	size_t pd = 0, pw = 0, off, gi, j;
	cnormal nb = { (size_t)-1, 0, 0, 1 };
	double med_b;
	uint32_t late;
	char group[64];

	pt_diag_comm_group(k->key, k->kind, group, sizeof(group));
	dm_load(c, mb, k, M_BOTTLENECK);
	dm_load(c, md, k, M_MEDIAN);
	dm_load(c, mw, k, M_BUSBW);
	med_b = dm_median(c, mb);
	dm_prepare(c, mb);
	dm_prepare(c, md);
	dm_prepare(c, mw);
	hwkey_free(hk);
	if (hw_groups(c, k, mb, ma, hk))
		return -1;
	late = straggler(c, md);
	off = cs->nrec;
	for (j = 0; j < mb->n; j++) {
		uint32_t w = mb->wk[j];
		size_t jd = find_w(md, &pd, w), jw = find_w(mw, &pw, w);
		int diff, abnormal;

		if (judge_worker(c, k, group, hk, late, j, jd, jw, cs, &diff, &abnormal))
			return -1;
		note_normal(c, mb, j, abnormal, diff, fabs(mb->val[j] - med_b), &nb);
	}
	if (cs->nrec - off > 1)
		qsort_r(cs->rec + off, cs->nrec - off, sizeof(*cs->rec), cmp_cabn, c);
	for (gi = 0; gi < (hk->ng ? hk->ng : 1); gi++) {
		centry *e;

		if (X_GROW(cs->ent, cs->entcap, cs->nent + 1))
			return -1;
		e = &cs->ent[cs->nent++];
		memset(e, 0, sizeof(*e));
		e->k = (uint32_t)i;
		e->hw = hk->ng > 0;
		snprintf(e->group, sizeof(e->group), "%s", hk->ng ? hk->group[gi] : group);
		e->med_b = med_b;
		e->off = off;
		e->n = cs->nrec - off;
		if (nb.best != (size_t)-1) {
			e->ex_w = mb->wk[nb.best];
			e->ex_p = mb->pat[nb.best];
			e->ex_diff = nb.diff;
		}
	}
	return 0;
}

/* Orders the entries: groups by their largest median bottleneck ratio
 * (cmp_group, then the group's score), then cmp_centry within. */
static void order_entries(dctx *c, centry *ent, size_t nent)
{
	size_t i, j, a;

	if (nent > 1)
		qsort_r(ent, nent, sizeof(*ent), cmp_group, c);
	for (i = 0; i < nent; i = j) {
		double mx = 0;

		for (j = i; j < nent && !strcmp(ent[j].group, ent[i].group); j++)
			if (ent[j].med_b > mx)
				mx = ent[j].med_b;
		for (a = i; a < j; a++)
			ent[a].score = mx;
	}
	if (nent > 1)
		qsort_r(ent, nent, sizeof(*ent), cmp_centry, c);
}

/* The section: per group, per function, its example of a normal worker
 * and its abnormal workers with their features. */
static void report_entries(dctx *c, pt_rv *sec, const cstate *cs)
{
	pt_rv *g = NULL;
	size_t i, j;

	for (i = 0; i < cs->nent; i++) {
		const centry *e = &cs->ent[i];
		const char *hg = e->hw ? e->group : NULL;
		pt_rv *kk, *ex, *ab;

		if (i == 0 || strcmp(e->group, cs->ent[i - 1].group))
			g = pt_rv_obj(c->rep, sec, e->group);
		kk = pt_rv_obj(c->rep, g, c->keys[e->k].key);
		ex = pt_rv_obj(c->rep, kk, PT_KEY_EXAMPLE_OF_NORMAL_WORKER);
		if (e->ex_p) {
			pt_rv_str(c->rep, ex, PT_KEY_WORKER, c->w[e->ex_w].id);
			pt_rv_int(c->rep, ex, PT_KEY_DIFFERENT_FROM_OTHER_WORKERS, e->ex_diff);
			features(c, ex, e->ex_p, c->w[e->ex_w].whole ? hg : NULL);
		}
		ab = pt_rv_arr(c->rep, kk, PT_KEY_ABNORMAL_WORKERS);
		for (j = 0; j < e->n; j++) {
			const cabn *r = &cs->rec[e->off + j];
			pt_rv *o;

			/* a worker that waited for its peers has long collectives
			 * because it waited: the Lockstep section explains it */
			if (c->waiting && c->waiting[r->w]) {
				c->comm_waiting++;
				continue;
			}
			o = pt_rv_obj(c->rep, ab, NULL);
			pt_rv_str(c->rep, o, PT_KEY_WORKER, c->w[r->w].id);
			pt_rv_int(c->rep, o, PT_KEY_DIFFERENT_FROM_OTHER_WORKERS, r->diff);
			features(c, o, r->p, c->w[r->w].whole ? hg : NULL);
		}
	}
}

void diag_comm(dctx *c)
{
	pt_rv *sec = pt_rv_obj(c->rep, pt_report_root(c->rep), SEC);
	dmetric ma;
	cstate cs;
	hwkey hk;
	size_t i;

	memset(&cs, 0, sizeof(cs));
	memset(&hk, 0, sizeof(hk));
	if (dm_alloc(&ma, c->nw))
		goto oom;
	for (i = 0; i < c->nkeys; i++)
		if (c->keys[i].cls == PT_C_COMM && scan_key(c, i, &ma, &hk, &cs))
			goto oom;
	order_entries(c, cs.ent, cs.nent);
	report_entries(c, sec, &cs);
	goto out;
oom:
	c->oom = 1;
out:
	hwkey_free(&hk);
	dm_free(&ma);
	x_free(cs.rec);
	x_free(cs.ent);
}
