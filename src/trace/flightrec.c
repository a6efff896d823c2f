/*
 * flightrec.c - the trace's "perftracker" member (flightrec.h): the torch
 * version and the Flight Recorder entries the collector writes, and the
 * process group and sequence number they give the gloo ops of the trace.
 *
 * torch's gloo records neither in the Kineto trace: a c10d::<op> on the
 * calling thread and a gloo:<op> annotation on one of the group's worker
 * threads, which run the group's collectives first in, first out.  So the
 * k-th gloo op of the window is the (k+d)-th entry of its group in seq
 * order, for the one offset d the window cut; see pt_fr_map.
 */
#include "flightrec.h"
#include "../model/commkind.h"
#include "../util/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A gloo op starts after its entry was created; the times are written in
 * µs with a fraction, so allow this much rounding (ns). */
#define FR_SLACK_NS 1000
/* Offsets tried, latest first (each try stops at its first misfit). */
#define FR_TRIES 256

static uint32_t intern_str(pt_store *st, const char *s)
{
	return s && *s ? pt_strtab_intern(st->strs, s, strnlen(s, 256)) : 0;
}

/* One entry of "collectives"; 1 when it lacks a field, -1 out of memory. */
static int read_entry(pt_store *st, const pt_json *e)
{
	const pt_json *seq = pt_json_get(e, "seq"), *ts = pt_json_get(e, "ts");
	const char *pg = pt_json_strv(e, "pg", NULL), *name = pt_json_strv(e, "name", NULL);
	const char *dtype = pt_json_strv(e, "dtype", NULL);
	const pt_json *p2p = pt_json_get(e, "p2p");
	double in = pt_json_num(e, "in_nelems", -1), out = pt_json_num(e, "out_nelems", -1);
	double gs = pt_json_num(e, "group_size", -1), ne = in > out ? in : out;
	pt_frent f;

	if (e->type != PT_JSON_OBJ || !seq || seq->type != PT_JSON_NUM || !ts ||
	    ts->type != PT_JSON_NUM || !pg || !*pg || !name || !*name || !(seq->num >= 0) ||
	    seq->num > 9e15 || seq->num != floor(seq->num) || !(fabs(ts->num) < 4e15))
		return 1;
	memset(&f, 0, sizeof(f));
	f.ts = llround(ts->num * 1e3);
	f.seq = (int64_t)seq->num;
	f.pg = intern_str(st, pg);
	f.name = intern_str(st, name);
	if (f.pg == UINT32_MAX || f.name == UINT32_MAX)
		return -1;
	if (ne > 0 && ne < 1e15 && dtype) {
		unsigned sz = pt_kineto_dtype_size(dtype, strnlen(dtype, 64));
		f.bytes = (uint64_t)ne * sz;
	}
	if (gs >= 1 && gs <= 65535)
		f.group = (uint16_t)gs;
	f.p2p = p2p && p2p->type == PT_JSON_TRUE;
	f.dflt = !strcmp(pt_json_strv(e, "pg_desc", ""), "default_pg");
	return pt_store_add_fr(st, &f) ? -1 : 0;
}

int pt_fr_read(pt_store *st, const pt_json *j)
{
	const pt_json *a = pt_json_get(j, "collectives"), *e;
	const char *torch = pt_json_strv(j, "torch", NULL);
	size_t bad = 0, n = 0;

	if (st->torch || st->nfr)
		return PT_OK; /* a member given twice: the first counts */
	if (torch && *torch && (st->torch = intern_str(st, torch)) == UINT32_MAX) {
		st->torch = 0;
		return PT_ENOMEM;
	}
	if (!a || a->type != PT_JSON_ARR)
		return PT_OK;
	for (e = a->child; e; e = e->next, n++) {
		int rc;
		if (n >= PT_FR_MAX) {
			pt_store_warn(st, "perftracker.collectives: only the first %d entries read",
				      PT_FR_MAX);
			break;
		}
		rc = read_entry(st, e);
		if (rc < 0)
			return PT_ENOMEM;
		bad += (size_t)rc;
	}
	if (bad)
		pt_store_warn(st, "perftracker.collectives: %zu entries without pg, seq, name or ts "
			      "skipped", bad);
	return PT_OK;
}

static int op_cmp(const void *pa, const void *pb, void *arg)
{
	const pt_store *st = arg;
	const pt_event *a = &st->ev[*(const uint32_t *)pa];
	const pt_event *b = &st->ev[*(const uint32_t *)pb];

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return *(const uint32_t *)pa < *(const uint32_t *)pb ? -1 : 1;
}

static int fr_cmp(const void *pa, const void *pb)
{
	const pt_frent *a = pa, *b = pb;

	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

static int collid_cmp(const void *pa, const void *pb)
{
	const pt_collid *a = pa, *b = pb;

	return a->ev < b->ev ? -1 : a->ev > b->ev;
}

/* Does op i of ops fit entry i + d of f wherever both exist? */
static int fits(const pt_store *st, const uint32_t *ops, size_t n, const pt_frent *f, size_t m,
		int64_t d)
{
	int64_t i = d < 0 ? -d : 0;

	for (; i < (int64_t)n && i + d < (int64_t)m; i++) {
		const pt_event *e = &st->ev[ops[i]];
		const pt_frent *x = &f[i + d];
		if (e->name != x->name || e->ts + FR_SLACK_NS < x->ts)
			return 0;
	}
	return 1;
}

static int is_gloo_op(const pt_store *st, size_t i)
{
	size_t len;
	const char *nm;

	if (st->ev[i].kind != PT_K_CPU_COMM)
		return 0;
	nm = pt_strtab_get(st->strs, st->ev[i].name, &len);
	return pt_commkind_is_gloo_op(nm, len);
}

/* The gloo ops in start order (their event indices), into *out.  -1: out
 * of memory. */
static int gloo_ops(pt_store *st, uint32_t **out, size_t *nout)
{
	size_t i, n = 0;
	uint32_t *ops = NULL;

	for (i = 0; i < st->n; i++)
		n += is_gloo_op(st, i);
	ops = x_malloc((n ? n : 1) * sizeof(*ops));
	if (!ops)
		return -1;
	*nout = 0;
	for (i = 0; i < st->n && *nout < n; i++)
		if (is_gloo_op(st, i))
			ops[(*nout)++] = (uint32_t)i;
	qsort_r(ops, *nout, sizeof(*ops), op_cmp, st);
	*out = ops;
	return 0;
}

/* The offset d of op 0's entry: of those under which every op fits its
 * entry (the same op, started at or after its creation), the one that
 * maps most ops, the latest of equals.  An earlier offset fits whenever a
 * later one does (entries created before the window, in the buffer); a
 * later one maps fewer ops, and fits only when the first ops waited
 * behind later collectives (queued at the window's start).  INT64_MIN:
 * none fits (or FR_TRIES offsets did not settle it). */
static int64_t best_offset(const pt_store *st, const uint32_t *ops, size_t n, const pt_frent *f,
			   size_t m)
{
	int64_t d, dmax, best = INT64_MIN, bestn = 0;
	size_t tries = 0;

	for (dmax = 0; dmax < (int64_t)m && f[dmax].ts <= st->ev[ops[0]].ts + FR_SLACK_NS; dmax++)
		;
	for (d = dmax - 1; d > -(int64_t)n && tries < FR_TRIES; d--, tries++) {
		int64_t hi = (int64_t)n < (int64_t)m - d ? (int64_t)n : (int64_t)m - d;
		int64_t nov = hi - (d < 0 ? -d : 0);
		if (bestn == (int64_t)n || (d < 0 && bestn >= nov))
			break; /* no earlier offset maps more */
		if (nov > bestn && fits(st, ops, n, f, m, d)) {
			best = d;
			bestn = nov;
		}
	}
	return tries < FR_TRIES || bestn == (int64_t)n ? best : INT64_MIN;
}

/* How many of ops[0..n) the entries f[0..m) of one group map (0: none
 * fits); with apply, give them their (pg, seq), bytes and group size.
 * -1: out of memory. */
static int64_t map_group(pt_store *st, const uint32_t *ops, size_t n, const pt_frent *f, size_t m,
			 int apply)
{
	int64_t d, k, got = 0;

	if (!n || !m || (d = best_offset(st, ops, n, f, m)) == INT64_MIN)
		return 0;
	for (k = d < 0 ? -d : 0; k < (int64_t)n && k + d < (int64_t)m; k++, got++) {
		pt_event *e = &st->ev[ops[k]];
		const pt_frent *x = &f[k + d];
		pt_collid c = { ops[k], x->pg, x->seq };
		if (!apply)
			continue;
		if (!e->bytes)
			e->bytes = x->bytes;
		if (!e->group)
			e->group = x->group ? x->group :
				   x->dflt && st->world_size > 0 && st->world_size <= 65535 ?
				   (uint16_t)st->world_size : 0;
		if (pt_store_add_collid(st, &c))
			return -1;
	}
	return got;
}

/* Groups and lanes: each group runs on worker threads of its own, which
 * the trace does not name; the assignment of the ops' threads to groups
 * under which the groups map the most ops is taken, when no other maps as
 * many (at most FR_ASSIGN assignments are tried; else nothing is mapped). */
#define FR_GROUPS 8
#define FR_ASSIGN 256

typedef struct frmap {
	pt_store *st;
	const uint32_t *ops;   /* gloo ops in start order */
	size_t n;
	const pt_frent *f;     /* entries by group, then seq */
	size_t gs[FR_GROUPS + 1]; /* group g: f[gs[g] .. gs[g + 1]) */
	size_t ng;
	uint32_t *lanes;       /* distinct lanes of the ops */
	size_t nl;
	uint32_t *sub;         /* scratch: one group's ops */
} frmap;

/* The ops mapped under assignment a (lane i to group a / ng^i % ng);
 * apply as map_group.  -1: out of memory. */
static int64_t map_assignment(frmap *M, size_t a, int apply)
{
	int64_t total = 0;
	size_t g, i, l;

	for (g = 0; g < M->ng; g++) {
		size_t ns = 0;
		int64_t got;
		for (i = 0; i < M->n; i++) {
			size_t q = a;
			uint32_t lane = M->st->ev[M->ops[i]].lane;
			for (l = 0; l < M->nl && M->lanes[l] != lane; l++)
				q /= M->ng;
			if (q % M->ng == g)
				M->sub[ns++] = M->ops[i];
		}
		got = map_group(M->st, M->sub, ns, M->f + M->gs[g], M->gs[g + 1] - M->gs[g], apply);
		if (got < 0)
			return -1;
		total += got;
	}
	return total;
}

static int pg_cmp(const void *pa, const void *pb)
{
	const pt_frent *a = pa, *b = pb;

	if (a->pg != b->pg)
		return a->pg < b->pg ? -1 : 1;
	return fr_cmp(pa, pb);
}

/* The groups' entries (p2p ones have their own counter and are left out)
 * by group then seq into M->f, their bounds into M->gs, the ops' lanes.
 * 1: too many groups or lanes to try, -1: out of memory. */
static int fr_groups(frmap *M, pt_frent *f, size_t *nassign)
{
	const pt_store *st = M->st;
	size_t i, m = 0, a = 1;

	for (i = 0; i < st->nfr; i++)
		if (!st->fr[i].p2p)
			f[m++] = st->fr[i];
	qsort(f, m, sizeof(*f), pg_cmp);
	M->f = f;
	M->ng = 0;
	for (i = 0; i < m; i++)
		if (!i || f[i].pg != f[i - 1].pg) {
			if (M->ng == FR_GROUPS)
				return 1;
			M->gs[M->ng++] = i;
		}
	M->gs[M->ng] = m;
	M->lanes = x_malloc((M->n ? M->n : 1) * sizeof(*M->lanes));
	M->sub = x_malloc((M->n ? M->n : 1) * sizeof(*M->sub));
	if (!M->lanes || !M->sub)
		return -1;
	for (M->nl = 0, i = 0; i < M->n; i++) {
		size_t l;
		uint32_t lane = st->ev[M->ops[i]].lane;
		for (l = 0; l < M->nl && M->lanes[l] != lane; l++)
			;
		if (l == M->nl)
			M->lanes[M->nl++] = lane;
	}
	for (i = 0; i < M->nl && M->ng > 1; i++)
		if ((a *= M->ng) > FR_ASSIGN)
			return 1;
	*nassign = a;
	return 0;
}

/* The Flight Recorder entries mapped to the window's gloo ops (flightrec.h):
 * per group, FIFO from best_offset on. */
int pt_fr_map(pt_store *st)
{
	frmap M;
	pt_frent *f = NULL;
	uint32_t *ops = NULL;
	size_t a, na = 1, best = 0, nbest = 0;
	int64_t top = 0;
	int rc = PT_ENOMEM, r;

	memset(&M, 0, sizeof(M));
	if (!st->nfr)
		return PT_OK;
	if (!(f = x_malloc(st->nfr * sizeof(*f))) || gloo_ops(st, &ops, &M.n))
		goto out;
	M.st = st;
	M.ops = ops;
	rc = PT_OK;
	if (!M.n || (r = fr_groups(&M, f, &na)) > 0)
		goto out;
	rc = PT_ENOMEM;
	if (r < 0)
		goto out;
	for (a = 0; a < na; a++) {
		int64_t got = map_assignment(&M, a, 0);
		if (got < 0)
			goto out;
		if (got > top) {
			top = got;
			best = a;
			nbest = 1;
		} else if (got == top && got) {
			nbest++;
		}
	}
	rc = PT_OK;
	if (nbest != 1)
		goto out; /* nothing fits, or two assignments fit as well */
	if (map_assignment(&M, best, 1) < 0) {
		rc = PT_ENOMEM;
		goto out;
	}
	qsort(st->collids, st->ncollids, sizeof(*st->collids), collid_cmp);
out:
	x_free(M.sub);
	x_free(M.lanes);
	x_free(ops);
	x_free(f);
	return rc;
}
