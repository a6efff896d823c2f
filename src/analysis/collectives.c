/*
 * collectives.c - a worker's collective instances (docs/design.md "Lockstep"):
 * found in the event store, the time each function took in the span
 * before each arrival (fed by the attribution sweep), and their compact
 * form in the summary ("collectives", docs/summary.md).
 *
 * Flow: pt_store --pt_coll_find--> pt_coll_build --pt_coll_tap (patterns.c
 * sweep)--> pt_coll_finish --> pt_summary --pt_coll_write--> JSON
 * --pt_coll_parse--> pt_summary on the master --> src/diagnose/lockstep_match.c.
 *
 * Instances are matched across workers by (process group, sequence number)
 * when the trace gives them (kept per instance here), else by channel and
 * position, so the channel names must not depend on a worker's pids or
 * stream ids: GPU
 * streams with NCCL/RCCL kernels are numbered in (stream, device) order,
 * CPU threads with collectives in order of their first collective.
 */
#include "collectives.h"
#include "../model/commkind.h"
#include "../util/json.h"
#include "../util/bsearch.h"
#include "../util/hash.h"
#include "../util/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pt_coll_gtab {
	struct gt_ent {
		uint32_t pat;
		uint64_t ns;
	} *e;
	size_t cap, n;
	pt_hmap map;   /* pattern -> index in e */
};

typedef struct cand {
	int64_t ts, end;
	uint32_t lane, name;
	uint32_t chan;
	uint32_t ev;
} cand;

static int cand_cmp(const void *pa, const void *pb)
{
	const cand *a = pa, *b = pb;

	if (a->chan != b->chan)
		return a->chan < b->chan ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->end < b->end ? -1 : a->end > b->end;
}

typedef struct lane_ord {
	uint32_t lane;
	int64_t k1, k2;
} lane_ord;

static int lane_cmp(const void *pa, const void *pb)
{
	const lane_ord *a = pa, *b = pb;

	if (a->k1 != b->k1)
		return a->k1 < b->k1 ? -1 : 1;
	if (a->k2 != b->k2)
		return a->k2 < b->k2 ? -1 : 1;
	return a->lane < b->lane ? -1 : a->lane > b->lane;
}

void pt_coll_build_free(pt_coll_build *b)
{
	size_t g;

	if (b->gt)
		for (g = 0; g < b->ngap; g++) {
			x_free(b->gt[g].e);
			pt_hmap_free(&b->gt[g].map);
		}
	x_free(b->gt);
	x_free(b->cur);
	x_free(b->ginst);
	x_free(b->ge);
	x_free(b->gs);
	x_free(b->chans);
	x_free(b->name);
	x_free(b->pg);
	x_free(b->seq);
	x_free(b->ev);
	x_free(b->chan);
	x_free(b->end);
	x_free(b->arr);
	memset(b, 0, sizeof(*b));
}

/* The collective instances that start in the window, in *cp (*ncp of
 * them): NCCL kernels when there are any (the CPU ops around them,
 * record_param_comms and nccl:*, only enqueue and do not block); else
 * gloo's ops, which run on ProcessGroupGloo's worker threads (taking
 * turns: one channel for all of them), from the start of the collective
 * to its end; else the other CPU collectives per thread; CPU sends and
 * receives are left out (point to point: no instance).  Sets *gpu or
 * *gloo for the kind found.  -1: out of memory. */
static int find_candidates(const pt_store *st, const pt_window *w, cand **cp, size_t *ncp,
			   int *gpu, int *gloo)
{
	size_t nc = 0, ccap = 0, i;
	int pass;

	for (pass = 2; pass >= 0 && !nc; pass--) {
		int kind = pass == 2 ? PT_K_COMM_KERNEL : PT_K_CPU_COMM;
		*gpu = pass == 2;
		*gloo = pass == 1;
		for (i = 0; i < st->n; i++) {
			const pt_event *e = &st->ev[i];
			if (e->kind != kind || e->ts < w->start || e->ts > w->end)
				continue;
			if (!*gpu) {
				size_t len;
				const char *nm = pt_strtab_get(st->strs, e->name, &len);
				if (*gloo && !pt_commkind_is_gloo_op(nm, len))
					continue;
				/* a send or receive ends when its one peer is done,
				 * not with every member: no lockstep instance
				 * (src/analysis/p2p.c has them) */
				if (pt_commkind_p2p_dir(nm, len))
					continue;
			}
			if (X_GROW(*cp, ccap, nc + 1))
				return -1;
			(*cp)[nc].ts = e->ts;
			(*cp)[nc].end = pt_end(e->ts, e->dur);
			(*cp)[nc].lane = e->lane;
			(*cp)[nc].name = e->name;
			(*cp)[nc].chan = e->lane;
			(*cp)[nc].ev = (uint32_t)i;
			if (*gloo)
				(*cp)[nc].lane = 0; /* one channel: the process group */
			nc++;
		}
	}
	*ncp = nc;
	return 0;
}

/* Channels: the lanes that have instances, in a worker-independent order
 * (GPU streams by thread and process id, CPU lanes by their first
 * instance), named into b->chans; each instance gets its channel and
 * they are sorted by channel, then time.  -1: out of memory. */
static int name_channels(const pt_store *st, pt_coll_build *b, cand *c, size_t nc, int gpu,
			 int gloo)
{
	uint32_t *lchan = x_malloc((st->nlanes ? st->nlanes : 1) * sizeof(*lchan));
	lane_ord *lo = x_malloc((st->nlanes ? st->nlanes : 1) * sizeof(*lo));
	size_t i, nlo = 0;
	int rc = -1;

	if (!lchan || !lo)
		goto out;
	for (i = 0; i < st->nlanes; i++)
		lchan[i] = UINT32_MAX;
	for (i = 0; i < nc; i++) {
		uint32_t l = c[i].lane;
		if (lchan[l] == UINT32_MAX) {
			lchan[l] = (uint32_t)nlo;
			lo[nlo].lane = l;
			lo[nlo].k1 = gpu ? st->lanes[l].tid : c[i].ts;
			lo[nlo].k2 = gpu ? st->lanes[l].pid : 0;
			nlo++;
		} else if (!gpu && c[i].ts < lo[lchan[l]].k1) {
			lo[lchan[l]].k1 = c[i].ts;
		}
	}
	qsort(lo, nlo, sizeof(*lo), lane_cmp);
	for (i = 0; i < nlo; i++)
		lchan[lo[i].lane] = (uint32_t)i;
	b->chans = x_calloc(nlo, sizeof(*b->chans));
	if (!b->chans)
		goto out;
	b->nchan = nlo;
	for (i = 0; i < nlo; i++)
		pt_commkind_chan_name(gpu ? PT_CHAN_GPU : gloo ? PT_CHAN_GLOO : PT_CHAN_CPU, i,
				      b->chans[i], sizeof(b->chans[i]));
	for (i = 0; i < nc; i++)
		c[i].chan = lchan[c[i].lane];
	qsort(c, nc, sizeof(*c), cand_cmp);
	rc = 0;
out:
	x_free(lo);
	x_free(lchan);
	return rc;
}

/* CPU collectives: keeps the outermost per thread (c10d::allreduce_
 * holds gloo:all_reduce, record_param_comms the op it records) of the
 * sorted c[0..nc); returns how many are left. */
static size_t outermost(cand *c, size_t nc)
{
	size_t i, j = 0;
	int64_t open_end = INT64_MIN;
	uint32_t cur = UINT32_MAX;

	for (i = 0; i < nc; i++) {
		if (c[i].chan != cur) {
			cur = c[i].chan;
			open_end = INT64_MIN;
		}
		if (c[i].ts < open_end)
			continue;
		open_end = c[i].end;
		c[j++] = c[i];
	}
	return j;
}

/* The instances into b's arrays (at most PT_COLL_MAX).  -1: out of
 * memory. */
static int keep_instances(pt_coll_build *b, const pt_store *st, const cand *c, size_t nc)
{
	size_t i;

	if (nc > PT_COLL_MAX)
		nc = PT_COLL_MAX;
	b->arr = x_malloc(nc * sizeof(*b->arr));
	b->end = x_malloc(nc * sizeof(*b->end));
	b->chan = x_malloc(nc * sizeof(*b->chan));
	b->name = x_malloc(nc * sizeof(*b->name));
	b->ev = x_malloc(nc * sizeof(*b->ev));
	b->pg = x_malloc(nc * sizeof(*b->pg));
	b->seq = x_malloc(nc * sizeof(*b->seq));
	if (!b->arr || !b->end || !b->chan || !b->name || !b->ev || !b->pg || !b->seq)
		return -1;
	b->n = nc;
	for (i = 0; i < nc; i++) {
		const pt_collid *id = pt_store_collid(st, c[i].ev);
		b->arr[i] = c[i].ts;
		b->end[i] = c[i].end;
		b->chan[i] = c[i].chan;
		b->name[i] = c[i].name;
		b->ev[i] = c[i].ev;
		/* (pg, seq) only together: a seq names an instance in its group */
		b->pg[i] = id && id->seq >= 0 && id->pg ? id->pg : 0;
		b->seq[i] = id && id->seq >= 0 && id->pg ? id->seq : -1;
	}
	return 0;
}

/* The main channel (the one with most instances, the first of equals):
 * its spans, from the previous instance's end (the window's start) to
 * each arrival.  -1: out of memory. */
static int main_spans(pt_coll_build *b, const pt_window *w)
{
	size_t i, k, nc = b->n, main_n = 0;
	uint32_t main_chan = 0;
	int64_t prev = w->start;

	for (i = 0; i < nc;) {
		size_t j = i;
		while (j < nc && b->chan[j] == b->chan[i])
			j++;
		if (j - i > main_n) {
			main_n = j - i;
			main_chan = b->chan[i];
		}
		i = j;
	}
	b->gs = x_malloc(main_n * sizeof(*b->gs));
	b->ge = x_malloc(main_n * sizeof(*b->ge));
	b->ginst = x_malloc(main_n * sizeof(*b->ginst));
	b->gt = x_calloc(main_n ? main_n : 1, sizeof(*b->gt));
	if (!b->gs || !b->ge || !b->ginst || !b->gt)
		return -1;
	for (k = 0; k < nc; k++) {
		int64_t s, e;
		if (b->chan[k] != main_chan)
			continue;
		s = prev;
		e = b->arr[k];
		if (b->ngap && s < b->ge[b->ngap - 1])
			s = b->ge[b->ngap - 1];
		if (e < s)
			e = s;
		b->gs[b->ngap] = s;
		b->ge[b->ngap] = e;
		b->ginst[b->ngap] = (uint32_t)k;
		b->ngap++;
		if (b->end[k] > prev)
			prev = b->end[k];
	}
	return 0;
}

int pt_coll_find(const pt_store *st, const pt_window *w, pt_coll_build *b)
{
	cand *c = NULL;
	size_t nc = 0;
	int gpu = 0, gloo = 0, rc = PT_ENOMEM;

	memset(b, 0, sizeof(*b));
	if (find_candidates(st, w, &c, &nc, &gpu, &gloo))
		goto out;
	if (!nc) {
		rc = PT_OK;
		goto out;
	}
	if (name_channels(st, b, c, nc, gpu, gloo))
		goto out;
	if (!gpu && !gloo)
		nc = outermost(c, nc);
	if (keep_instances(b, st, c, nc) || main_spans(b, w))
		goto out;
	rc = PT_OK;
out:
	x_free(c);
	if (rc)
		pt_coll_build_free(b);
	return rc;
}

static void gt_add(pt_coll_build *b, struct pt_coll_gtab *t, uint32_t pat, uint64_t ns)
{
	uint32_t h = (pat + 1) * 2654435761u, i;
	size_t it = 0;

	while ((i = pt_hmap_next(&t->map, h, &it)) != PT_HMAP_NONE)
		if (t->e[i].pat == pat) {
			t->e[i].ns += ns;
			return;
		}
	if (t->n >= PT_HMAP_NONE - 1 || X_GROW(t->e, t->cap, t->n + 1) ||
	    pt_hmap_put(&t->map, h, (uint32_t)t->n)) {
		b->oom = 1;
		return;
	}
	t->e[t->n].pat = pat;
	t->e[t->n].ns = ns;
	t->n++;
	b->hn++;
}

/* Per-span tables and a cursor per run: one global hash of (span,
 * pattern) and a binary search per item made this a large share of
 * summarize's CPU time (docs/bench.md, "Code shaped for speed"). */
void pt_coll_tap(pt_coll_build *b, size_t run, const pt_item *it, size_t n)
{
	size_t i, g, lastg = 0;
	uint32_t lastp = UINT32_MAX;
	uint64_t acc = 0;

	if (!b || !b->ngap || b->oom)
		return;
	if (run >= b->ncur) {
		size_t k = b->ncur;
		if (X_GROW(b->cur, b->ncur, run + 1)) {
			b->oom = 1;
			return;
		}
		for (; k < b->ncur; k++)
			b->cur[k] = 0;
	}
	g = b->cur[run];
	for (i = 0; i < n; i++) {
		int64_t s = it[i].s, e = it[i].e;
		size_t k;

		if (e <= b->gs[0] || s >= b->ge[b->ngap - 1])
			continue;
		/* first span ending after s: from the cursor (starts do not
		 * decrease within a thread), else a binary search */
		if (g >= b->ngap || (g && b->ge[g - 1] > s)) {
			size_t lo = 0, hi = b->ngap;
			PT_BSEARCH(lo, hi, mid, b->ge[mid] <= s);
			g = lo;
		}
		while (g < b->ngap && b->ge[g] <= s)
			g++;
		for (k = g; k < b->ngap && b->gs[k] < e; k++) {
			int64_t a = s > b->gs[k] ? s : b->gs[k];
			int64_t z = e < b->ge[k] ? e : b->ge[k];
			if (z <= a)
				continue;
			/* runs of one function's items in one span add up first */
			if (k == lastg && it[i].pat == lastp) {
				acc += (uint64_t)(z - a);
				continue;
			}
			if (acc)
				gt_add(b, &b->gt[lastg], lastp, acc);
			lastg = k;
			lastp = it[i].pat;
			acc = (uint64_t)(z - a);
		}
	}
	if (acc)
		gt_add(b, &b->gt[lastg], lastp, acc);
	b->cur[run] = g;
}

/* The instances' process groups (names into s->coll_pgs, in order of
 * first use) and sequence numbers.  -1: out of memory. */
static int finish_groups(const pt_coll_build *b, const pt_store *st, pt_summary *s)
{
	size_t i, k;

	for (i = 0; i < b->n; i++) {
		size_t len;
		const char *str;
		if (b->seq[i] < 0)
			continue;
		str = pt_strtab_get(st->strs, b->pg[i], &len);
		if (!str)
			continue;
		for (k = 0; k < s->ncoll_pgs; k++)
			if (strlen(s->coll_pgs[k]) == len && !memcmp(s->coll_pgs[k], str, len))
				break;
		if (k == s->ncoll_pgs) {
			char **np = x_reallocarray(s->coll_pgs, k + 1, sizeof(*np));
			if (!np)
				return -1;
			s->coll_pgs = np;
			if (!(np[k] = x_strndup(str, len)))
				return -1;
			s->ncoll_pgs++;
		}
		s->coll[i].pg = (uint32_t)k;
		s->coll[i].seq = b->seq[i];
	}
	return 0;
}

static int cause_cmp(const void *pa, const void *pb)
{
	const pt_coll_cause *a = pa, *b = pb;

	if (a->inst != b->inst)
		return a->inst < b->inst ? -1 : 1;
	if (a->ms != b->ms)
		return a->ms > b->ms ? -1 : 1;
	return a->pat < b->pat ? -1 : a->pat > b->pat;
}

int pt_coll_finish(pt_coll_build *b, const pt_store *st, const pt_window *w,
		   const uint32_t *patmap, size_t npat, pt_summary *s)
{
	uint32_t *nmap = NULL;
	size_t i, nn = pt_strtab_count(st->strs);
	int rc = PT_ENOMEM;

	if (b->oom)
		return PT_ENOMEM;
	if (!b->n)
		return PT_OK;
	nmap = x_malloc((nn ? nn : 1) * sizeof(*nmap));
	s->coll = x_calloc(b->n, sizeof(*s->coll));
	s->coll_chans = x_calloc(b->nchan, sizeof(*s->coll_chans));
	s->coll_names = x_calloc(b->n, sizeof(*s->coll_names));
	if (!nmap || !s->coll || !s->coll_chans || !s->coll_names)
		goto out;
	for (i = 0; i < nn; i++)
		nmap[i] = UINT32_MAX;
	for (i = 0; i < b->nchan; i++) {
		if (!(s->coll_chans[i] = x_strndup(b->chans[i], strlen(b->chans[i]))))
			goto out;
		s->ncoll_chans++;
	}
	for (i = 0; i < b->n; i++) {
		pt_coll *c = &s->coll[i];
		uint32_t id = b->name[i];
		if (id < nn && nmap[id] == UINT32_MAX) {
			size_t len;
			const char *str = pt_strtab_get(st->strs, id, &len);
			if (!(s->coll_names[s->ncoll_names] = x_strndup(str ? str : "", str ? len : 0)))
				goto out;
			nmap[id] = (uint32_t)s->ncoll_names++;
		}
		c->chan = b->chan[i];
		c->name = id < nn ? nmap[id] : 0;
		c->arrive_us = (double)(b->arr[i] - w->start) / 1e3;
		c->end_us = (double)(b->end[i] - w->start) / 1e3;
		c->pg = UINT32_MAX;
		c->seq = -1;
	}
	s->ncoll = b->n;
	if (finish_groups(b, st, s))
		goto out;

	/* The functions of each span: the largest PT_COLL_CAUSES of those
	 * kept in the summary taking at least 20 µs and 2% of the span. */
	if (b->hn) {
		/* The top few per span by insertion, not a sort of all (span,
		 * function) pairs (docs/bench.md, "Code shaped for speed"). */
		pt_coll_cause *cc = x_malloc(b->ngap * PT_COLL_CAUSES * sizeof(*cc) + 1);
		size_t j = 0, g;
		if (!cc)
			goto out;
		for (g = 0; g < b->ngap; g++) {
			const struct pt_coll_gtab *t = &b->gt[g];
			double span_ms = (double)(b->ge[g] - b->gs[g]) / 1e6;
			double min_ms = span_ms * 0.02 > 0.02 ? span_ms * 0.02 : 0.02;
			pt_coll_cause top[PT_COLL_CAUSES];
			size_t nt = 0, q;
			for (i = 0; i < t->n; i++) {
				pt_coll_cause x;
				uint32_t p = t->e[i].pat;
				if (p >= npat || patmap[p] == UINT32_MAX ||
				    s->patterns[patmap[p]].cls == PT_C_COMM)
					continue;
				x.inst = b->ginst[g];
				x.pat = patmap[p];
				x.ms = (double)t->e[i].ns / 1e6;
				if (x.ms < min_ms)
					continue;
				if (nt == PT_COLL_CAUSES && cause_cmp(&x, &top[nt - 1]) >= 0)
					continue;
				if (nt < PT_COLL_CAUSES)
					nt++;
				for (q = nt - 1; q > 0 && cause_cmp(&x, &top[q - 1]) < 0; q--)
					top[q] = top[q - 1];
				top[q] = x;
			}
			for (q = 0; q < nt; q++) {
				cc[j] = top[q];
				cc[j].ms = (double)llround(cc[j].ms * 1e3) / 1e3;
				j++;
			}
		}
		s->coll_cause = cc;
		s->ncoll_cause = j;
	}
	rc = PT_OK;
out:
	x_free(nmap);
	return rc;
}

void pt_coll_free(pt_summary *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->ncoll_chans; i++)
		x_free(s->coll_chans[i]);
	for (i = 0; i < s->ncoll_names; i++)
		x_free(s->coll_names[i]);
	for (i = 0; i < s->ncoll_pgs; i++)
		x_free(s->coll_pgs[i]);
	x_free(s->coll_pgs);
	s->coll_pgs = NULL;
	s->ncoll_pgs = 0;
	x_free(s->coll_chans);
	x_free(s->coll_names);
	x_free(s->coll);
	x_free(s->coll_cause);
	s->coll_chans = s->coll_names = NULL;
	s->coll = NULL;
	s->coll_cause = NULL;
	s->ncoll_chans = s->ncoll_names = s->ncoll = s->ncoll_cause = 0;
}

/* ---- the summary member ---------------------------------------------------- */

static void strs(pt_sb *out, const char *key, char *const *v, size_t n)
{
	size_t i;

	pt_sb_add_json_key(out, key, 1);
	pt_sb_addc(out, '[');
	for (i = 0; i < n; i++) {
		if (i)
			pt_sb_addc(out, ',');
		pt_sb_add_json_str(out, v[i], strlen(v[i]));
	}
	pt_sb_addc(out, ']');
}

void pt_coll_write(const pt_summary *s, pt_sb *out)
{
	size_t i;

	pt_sb_addc(out, '{');
	strs(out, "channels", s->coll_chans, s->ncoll_chans);
	pt_sb_addc(out, ',');
	strs(out, "names", s->coll_names, s->ncoll_names);
	pt_sb_adds(out, ",\"instances\":[");
	for (i = 0; i < s->ncoll; i++) {
		const pt_coll *c = &s->coll[i];
		pt_sb_addf(out, "%s%u,%u,", i ? "," : "", c->chan, c->name);
		pt_sb_add_double(out, c->arrive_us);
		pt_sb_addc(out, ',');
		pt_sb_add_double(out, c->end_us);
	}
	pt_sb_adds(out, "],\"causes\":[");
	for (i = 0; i < s->ncoll_cause; i++) {
		const pt_coll_cause *c = &s->coll_cause[i];
		/* whole µs (causes take 20 µs or more): a third of the bytes
		 * of shortest-repr ms and an integer conversion instead of a
		 * double one */
		pt_sb_addf(out, "%s%u,%u,%lld", i ? "," : "", c->inst, c->pat,
			   (long long)llround(c->ms * 1e3));
	}
	pt_sb_addc(out, ']');
	if (s->ncoll_pgs) {
		/* process group and sequence number per instance, -1 -1 unknown */
		pt_sb_addc(out, ',');
		strs(out, "pgs", s->coll_pgs, s->ncoll_pgs);
		pt_sb_adds(out, ",\"seq\":[");
		for (i = 0; i < s->ncoll; i++) {
			const pt_coll *c = &s->coll[i];
			if (c->seq < 0)
				pt_sb_adds(out, i ? ",-1,-1" : "-1,-1");
			else
				pt_sb_addf(out, "%s%u,%lld", i ? "," : "", c->pg, (long long)c->seq);
		}
		pt_sb_addc(out, ']');
	}
	pt_sb_addc(out, '}');
}

static int bad(pt_error *err, const char *fmt, const char *what)
{
	pt_error_set(err, PT_EFORMAT, -1, fmt, what);
	return PT_EFORMAT;
}

static int read_strs(const pt_json *o, const char *key, char ***out, size_t *n, pt_error *err)
{
	const pt_json *a = pt_json_get(o, key), *v;
	size_t i = 0;

	if (!a || a->type != PT_JSON_ARR)
		return bad(err, "'collectives': '%s' is missing or not an array", key);
	*out = x_calloc(a->len ? a->len : 1, sizeof(**out));
	if (!*out)
		return pt_error_set(err, PT_ENOMEM, -1, "out of memory");
	for (v = a->child; v; v = v->next, i++) {
		if (v->type != PT_JSON_STR)
			return bad(err, "'collectives': '%s' holds a non-string", key);
		if (!((*out)[i] = x_strndup(v->str, v->len)))
			return pt_error_set(err, PT_ENOMEM, -1, "out of memory");
		*n = i + 1;
	}
	return PT_OK;
}

static int is_index(const pt_json *v, size_t lim)
{
	return v && v->type == PT_JSON_NUM && v->num >= 0 && v->num < (double)lim &&
	       v->num == floor(v->num);
}

/* "pgs" and "seq" (absent in summaries without them, and in those
 * written before them): each instance's process group and sequence
 * number, [-1, -1] unknown. */
static int parse_groups(const pt_json *root, pt_summary *s, pt_error *err)
{
	const pt_json *a = pt_json_get(root, "seq"), *v;
	size_t i;
	int rc;

	for (i = 0; i < s->ncoll; i++) {
		s->coll[i].pg = UINT32_MAX;
		s->coll[i].seq = -1;
	}
	if (!a && !pt_json_get(root, "pgs"))
		return PT_OK;
	if ((rc = read_strs(root, "pgs", &s->coll_pgs, &s->ncoll_pgs, err)))
		return rc;
	if (!a || a->type != PT_JSON_ARR || a->len != 2 * s->ncoll)
		return bad(err, "%s", "'collectives': 'seq' is not an array of 2 numbers per instance");
	for (v = a->child, i = 0; v; i++, v = v->next->next) {
		const pt_json *g = v, *q = v->next;
		if (g->type == PT_JSON_NUM && q->type == PT_JSON_NUM && g->num == -1 && q->num == -1)
			continue;
		if (!is_index(g, s->ncoll_pgs) || q->type != PT_JSON_NUM || !(q->num >= 0) ||
		    q->num > 9e15 || q->num != floor(q->num)) {
			pt_error_set(err, PT_EFORMAT, -1,
				     "'collectives': seq %zu is not [process group, sequence number]", i);
			return PT_EFORMAT;
		}
		s->coll[i].pg = (uint32_t)g->num;
		s->coll[i].seq = (int64_t)q->num;
	}
	return PT_OK;
}

int pt_coll_parse(const char *buf, size_t len, pt_summary *s, pt_error *err)
{
	pt_json *root = pt_json_parse(buf, len, err);
	const pt_json *a, *v;
	size_t i;
	int rc;

	if (!root)
		return err ? err->code : PT_EPARSE;
	if (root->type != PT_JSON_OBJ) {
		rc = bad(err, "%s", "'collectives' is not an object");
		goto out;
	}
	if ((rc = read_strs(root, "channels", &s->coll_chans, &s->ncoll_chans, err)) ||
	    (rc = read_strs(root, "names", &s->coll_names, &s->ncoll_names, err)))
		goto out;
	a = pt_json_get(root, "instances");
	if (!a || a->type != PT_JSON_ARR || a->len % 4) {
		rc = bad(err, "%s",
			 "'collectives': 'instances' is not an array of 4 numbers per instance");
		goto out;
	}
	s->coll = x_calloc(a->len / 4 ? a->len / 4 : 1, sizeof(*s->coll));
	if (!s->coll) {
		rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
		goto out;
	}
	for (v = a->child, i = 0; v; i++) {
		const pt_json *c = v, *n = c->next, *ar = n ? n->next : NULL, *en = ar ? ar->next : NULL;
		if (!is_index(c, s->ncoll_chans) || !is_index(n, s->ncoll_names) || !ar ||
		    ar->type != PT_JSON_NUM || !en || en->type != PT_JSON_NUM ||
		    !isfinite(ar->num) || !isfinite(en->num)) {
			pt_error_set(err, PT_EFORMAT, -1,
				     "'collectives': instance %zu is not [channel, name, arrive, end]", i);
			rc = PT_EFORMAT;
			goto out;
		}
		s->coll[i].chan = (uint32_t)c->num;
		s->coll[i].name = (uint32_t)n->num;
		s->coll[i].arrive_us = ar->num;
		s->coll[i].end_us = en->num;
		s->ncoll = i + 1;
		v = en->next;
	}
	a = pt_json_get(root, "causes");
	if (a) {
		if (a->type != PT_JSON_ARR || a->len % 3) {
			rc = bad(err, "%s",
				 "'collectives': 'causes' is not an array of 3 numbers per entry");
			goto out;
		}
		s->coll_cause = x_calloc(a->len / 3 ? a->len / 3 : 1, sizeof(*s->coll_cause));
		if (!s->coll_cause) {
			rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
			goto out;
		}
		for (v = a->child, i = 0; v; i++) {
			const pt_json *in = v, *p = in->next, *ms = p->next;
			if (!is_index(in, s->ncoll) || !is_index(p, UINT32_MAX) ||
			    ms->type != PT_JSON_NUM || !isfinite(ms->num) || ms->num < 0) {
				pt_error_set(err, PT_EFORMAT, -1,
					     "'collectives': cause %zu is not [instance, pattern, us]", i);
				rc = PT_EFORMAT;
				goto out;
			}
			s->coll_cause[i].inst = (uint32_t)in->num;
			s->coll_cause[i].pat = (uint32_t)p->num;
			s->coll_cause[i].ms = ms->num / 1e3;
			s->ncoll_cause = i + 1;
			v = ms->next;
		}
	}
	if ((rc = parse_groups(root, s, err)))
		goto out;
	rc = PT_OK;
out:
	pt_json_free(root);
	return rc;
}

int pt_coll_check(const pt_summary *s, pt_error *err)
{
	size_t i;

	for (i = 0; i < s->ncoll_cause; i++)
		if (s->coll_cause[i].pat >= s->npatterns) {
			pt_error_set(err, PT_EFORMAT, -1,
				     "invalid summary: 'collectives': cause %zu names pattern %u of %zu",
				     i, s->coll_cause[i].pat, s->npatterns);
			return PT_EFORMAT;
		}
	return PT_OK;
}
