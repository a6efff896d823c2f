/*
 * comm.c - the "Communication" section: collectives (NCCL/RCCL kernels and
 * CPU collectives such as gloo) grouped by "<algorithm> <collective>" from
 * the kernel name, with an example of a normal worker and the abnormal
 * workers per function.  Features compared: bottleneck ratio (higher costs
 * time), median duration per call (higher costs time) and, when the trace
 * records message sizes, bus bandwidth (lower costs time).  Link types
 * ("nvlink ring send") need hardware samples and come later.
 */
#include "internal.h"
#include "../util/xalloc.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define SEC "Communication"

static const char *const algos[] = {
	"ring", "tree", "collnetdirect", "collnetchain", "collnet", "nvlstree", "nvls", "pat",
};

/* Collective words, longest first where one contains another. */
static const char *const colls[] = {
	"sendrecv", "allreduce", "allgather", "reducescatter", "alltoall", "broadcast",
	"barrier", "reduce", "gather", "scatter", "send", "recv",
};

/* Lowercase s[0..n) without '_' and spaces into buf. */
static void squash(const char *s, size_t n, char *buf, size_t cap)
{
	size_t i, j = 0;

	for (i = 0; i < n && j + 1 < cap; i++)
		if (s[i] != '_' && s[i] != ' ')
			buf[j++] = (char)tolower((unsigned char)s[i]);
	buf[j] = 0;
}

static const char *find_coll(const char *squashed)
{
	size_t i;

	for (i = 0; i < sizeof(colls) / sizeof(colls[0]); i++)
		if (strstr(squashed, colls[i]))
			return colls[i];
	return NULL;
}

char *pt_diag_comm_group(const char *key, int kind, char *out, size_t cap)
{
	const char *paren = strchr(key, '(');
	size_t n = paren ? (size_t)(paren - key) : strlen(key);
	char sq[512], tok[64];
	const char *coll, *alg = NULL, *p, *e;
	size_t i;

	if (!cap)
		return out;
	squash(key, n, sq, sizeof(sq));
	coll = find_coll(sq);
	if (kind == PT_K_CPU_COMM || !(strstr(sq, "nccl") || strstr(sq, "rccl"))) {
		const char *be = strstr(sq, "gloo") ? "gloo" : strstr(sq, "nccl") ? "nccl"
			       : strstr(sq, "mpi") ? "mpi" : strstr(sq, "ucc") ? "ucc" : "cpu";

		snprintf(out, cap, "%s %s", be, coll ? coll : "collective");
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
	for (p = key; p < key + n && !alg; p = e + 1) {
		for (e = p; e < key + n && *e != '_'; e++)
			;
		squash(p, (size_t)(e - p), tok, sizeof(tok));
		for (i = 0; i < sizeof(algos) / sizeof(algos[0]) && !alg; i++)
			if (!strcmp(tok, algos[i]))
				alg = algos[i];
		if (e >= key + n)
			break;
	}
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

/* Impact of a lower bus bandwidth: the share of the window the calls would
 * have saved at the others' bandwidth (negative = time lost, as dm_test
 * flips the sign for PT_DIR_LOW). */
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
	return st.n && pt_robust_outlier(m->val[i], &st, PT_DIR_BOTH, c->o);
}

static void features(dctx *c, pt_rv *o, const pt_pattern *p)
{
	pt_rv *f = pt_rv_obj(c->rep, o, "features");

	pt_rv_num(c->rep, f, "bottleneck ratio (in [0,1])", p->bottleneck);
	pt_rv_num(c->rep, f, "execution ratio (in [0,1])", p->exec_ratio);
	pt_rv_num(c->rep, f, "median duration (ms)", p->median_ms);
	if (p->busbw_gbps > 0)
		pt_rv_num(c->rep, f, "bus bandwidth (GB/s)", p->busbw_gbps);
}

static void comm_finding(dctx *c, const dkey *k, const char *group, const dworker *w,
			 int metric, double val, double oth, double imp)
{
	static const char *const names[3] = {
		"bottleneck ratio", "median duration (ms)", "bus bandwidth (GB/s)",
	};
	char sn[160], p1[32], p2[32];
	dfinding *f = df_add(c, SEC, w->id, k->key, names[metric], val, oth, imp * w->window_ms);
	const char *why = "the collective takes longer on this worker: usually it waits for "
			  "a worker that arrives late (see the other findings), otherwise a "
			  "slow link or NIC on this worker's path";

	df_short(k->key, k->cls, sn, sizeof(sn));
	if (metric == 0)
		df_explain(c, f, "worker %s spends %s of its time in %s (%s), other workers %s: "
			   "%s (about %.3g ms per window)", w->id, df_pct(val, p1, sizeof(p1)), sn,
			   group, df_pct(oth, p2, sizeof(p2)), why, imp * w->window_ms);
	else if (metric == 1)
		df_explain(c, f, "each %s (%s) takes %.3g ms on worker %s, other workers %.3g "
			   "ms: %s (about %.3g ms per window)", sn, group, val, w->id, oth, why,
			   imp * w->window_ms);
	else
		df_explain(c, f, "worker %s reaches %.3g GB/s bus bandwidth in %s (%s), other "
			   "workers %.3g GB/s: a slow link, NIC or switch port on this worker's "
			   "path (about %.3g ms per window)", w->id, val, sn, group, oth,
			   imp * w->window_ms);
}

/* Position of worker w in metric m at or after *pos (entries are in worker
 * order), or (size_t)-1. */
static size_t find_w(const dmetric *m, size_t *pos, uint32_t w)
{
	while (*pos < m->n && m->wk[*pos] < w)
		(*pos)++;
	return *pos < m->n && m->wk[*pos] == w ? *pos : (size_t)-1;
}

void diag_comm(dctx *c)
{
	pt_rv *sec = pt_rv_obj(c->rep, pt_report_root(c->rep), SEC);
	dmetric *mb = &c->m[0], *md = &c->m[1], *mw = &c->m[2];
	centry *ent = NULL;
	cabn *rec = NULL;
	size_t nent = 0, entcap = 0, nrec = 0, reccap = 0, i, j;
	pt_rv *g = NULL;

	for (i = 0; i < c->nkeys; i++) {
		const dkey *k = &c->keys[i];
		size_t pd = 0, pw = 0, best = (size_t)-1;
		double bestdist = 0;
		int bestdiff = 0, bestabn = 1;
		centry *e;

		if (k->cls != PT_C_COMM)
			continue;
		if (X_GROW(ent, entcap, nent + 1))
			goto oom;
		e = &ent[nent++];
		memset(e, 0, sizeof(*e));
		e->k = (uint32_t)i;
		pt_diag_comm_group(k->key, k->kind, e->group, sizeof(e->group));
		dm_load(c, mb, k, M_BOTTLENECK);
		dm_load(c, md, k, M_MEDIAN);
		dm_load(c, mw, k, M_BUSBW);
		e->med_b = dm_median(c, mb);
		dm_prepare(c, mb);
		dm_prepare(c, md);
		dm_prepare(c, mw);
		e->off = nrec;
		for (j = 0; j < mb->n; j++) {
			uint32_t w = mb->wk[j];
			size_t jd = find_w(md, &pd, w), jw = find_w(mw, &pw, w);
			double oth[3], imp[3], val[3] = { mb->val[j], 0, 0 }, dist;
			int abn[3] = { 0, 0, 0 }, diff = 0, top = -1, t, better;

			diff += differs(c, mb, j);
			abn[0] = dm_test(c, mb, j, PT_DIR_HIGH, dm_impact_ratio, &oth[0], &imp[0]);
			if (jd != (size_t)-1) {
				diff += differs(c, md, jd);
				val[1] = md->val[jd];
				abn[1] = dm_test(c, md, jd, PT_DIR_HIGH, dm_impact_duration, &oth[1],
						 &imp[1]);
			}
			if (jw != (size_t)-1) {
				diff += differs(c, mw, jw);
				val[2] = mw->val[jw];
				abn[2] = dm_test(c, mw, jw, PT_DIR_LOW, impact_busbw, &oth[2],
						 &imp[2]);
			}
			for (t = 0; t < 3; t++)
				if (abn[t] && (top < 0 || imp[t] > imp[top]))
					top = t;
			if (top >= 0) {
				if (X_GROW(rec, reccap, nrec + 1))
					goto oom;
				rec[nrec].w = w;
				rec[nrec].p = mb->pat[j];
				rec[nrec].diff = diff;
				rec[nrec++].imp = imp[top];
				comm_finding(c, k, e->group, &c->w[w], top, val[top], oth[top],
					     imp[top]);
			}
			/* Example of a normal worker: not abnormal, fewest differing
			 * features, closest to the median bottleneck ratio, then name. */
			dist = fabs(mb->val[j] - e->med_b);
			if (best == (size_t)-1)
				better = 1;
			else if ((top >= 0) != bestabn)
				better = top < 0;
			else if (diff != bestdiff)
				better = diff < bestdiff;
			else if (dist != bestdist)
				better = dist < bestdist;
			else
				better = strcmp(c->w[w].id, c->w[mb->wk[best]].id) < 0;
			if (better) {
				best = j;
				bestdist = dist;
				bestdiff = diff;
				bestabn = top >= 0;
			}
		}
		e->n = nrec - e->off;
		if (e->n > 1)
			qsort_r(rec + e->off, e->n, sizeof(*rec), cmp_cabn, c);
		if (best != (size_t)-1) {
			e->ex_w = mb->wk[best];
			e->ex_p = mb->pat[best];
			e->ex_diff = bestdiff;
		}
	}
	/* Groups ordered by their largest median bottleneck ratio. */
	if (nent > 1)
		qsort_r(ent, nent, sizeof(*ent), cmp_group, c);
	for (i = 0; i < nent; i = j) {
		double mx = 0;
		size_t a;

		for (j = i; j < nent && !strcmp(ent[j].group, ent[i].group); j++)
			if (ent[j].med_b > mx)
				mx = ent[j].med_b;
		for (a = i; a < j; a++)
			ent[a].score = mx;
	}
	if (nent > 1)
		qsort_r(ent, nent, sizeof(*ent), cmp_centry, c);
	for (i = 0; i < nent; i++) {
		const centry *e = &ent[i];
		pt_rv *kk, *ex, *ab;

		if (i == 0 || strcmp(e->group, ent[i - 1].group))
			g = pt_rv_obj(c->rep, sec, e->group);
		kk = pt_rv_obj(c->rep, g, c->keys[e->k].key);
		ex = pt_rv_obj(c->rep, kk, "example_of_normal_worker");
		if (e->ex_p) {
			pt_rv_str(c->rep, ex, "worker", c->w[e->ex_w].id);
			pt_rv_int(c->rep, ex, "different from other workers", e->ex_diff);
			features(c, ex, e->ex_p);
		}
		ab = pt_rv_arr(c->rep, kk, "abnormal_workers");
		for (j = 0; j < e->n; j++) {
			const cabn *r = &rec[e->off + j];
			pt_rv *o = pt_rv_obj(c->rep, ab, NULL);

			pt_rv_str(c->rep, o, "worker", c->w[r->w].id);
			pt_rv_int(c->rep, o, "different from other workers", r->diff);
			features(c, o, r->p);
		}
	}
	goto out;
oom:
	c->oom = 1;
out:
	x_free(rec);
	x_free(ent);
}
