/*
 * p2p.c - one worker's point-to-point transfers per peer (p2p.h,
 * docs/summary.md "p2p"): the transfers found in the store and linked to
 * the op that names their peer, summed per (peer, direction), and their
 * form in the summary.
 *
 * Flow: pt_store (pt_peer records from src/trace/kineto.c) --pt_p2p_build-->
 * pt_summary.p2p --pt_p2p_write--> JSON --pt_p2p_parse--> the master's
 * pair matrix (src/diagnose/p2p.c).
 *
 * A transfer is what moves the data and lasts as long as it does: a NCCL
 * send/recv kernel on the GPU, or gloo's "gloo:send"/"gloo:recv" op (it
 * lasts from the op's start until its work completes).  The ops that name
 * the peer (record_param_comms, "nccl:send 0->1", c10d::send) only enqueue.
 */
#include "p2p.h"
#include "../model/commkind.h"
#include "../util/json.h"
#include "../util/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pref {
	int64_t ts, end;
	uint32_t lane, ev;
	int32_t peer;
	uint8_t dir;
} pref;

typedef struct cref {
	uint32_t corr, ev;
} cref;

/* A transfer with bytes: its row and its span, for the rows' wall time. */
typedef struct span {
	size_t row;
	int64_t ts, end;
} span;

typedef struct spans {
	span *v;
	size_t n, cap;
} spans;

static int span_cmp(const void *pa, const void *pb)
{
	const span *a = pa, *b = pb;

	if (a->row != b->row)
		return a->row < b->row ? -1 : 1;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

/* Each row's wall_ms: the union of its transfers' spans. */
static void wall_time(pt_summary *s, spans *sp)
{
	size_t i;
	int64_t cs = 0, ce = 0;

	if (sp->n)
		qsort(sp->v, sp->n, sizeof(*sp->v), span_cmp);
	for (i = 0; i < sp->n; i++) {
		const span *x = &sp->v[i];
		if (i && x->row == sp->v[i - 1].row && x->ts <= ce) {
			if (x->end > ce)
				ce = x->end;
		} else {
			if (i)
				s->p2p[sp->v[i - 1].row].wall_ms += (double)(ce - cs) / 1e6;
			cs = x->ts;
			ce = x->end;
		}
	}
	if (sp->n)
		s->p2p[sp->v[sp->n - 1].row].wall_ms += (double)(ce - cs) / 1e6;
}

static int pref_cmp(const void *pa, const void *pb)
{
	const pref *a = pa, *b = pb;

	if (a->lane != b->lane)
		return a->lane < b->lane ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->ev < b->ev ? -1 : a->ev > b->ev;
}

static int cref_cmp(const void *pa, const void *pb)
{
	const cref *a = pa, *b = pb;

	return a->corr < b->corr ? -1 : a->corr > b->corr;
}

/* How far back around() looks: past the closed siblings of the op that
 * holds the instant (a title, record_param_comms and a c10d op nest at
 * most three deep), not through a thread's whole history. */
#define AROUND_BACK 16

/* The innermost peer op on lane around instant t (the latest to start at
 * or before t that is still open, among the AROUND_BACK latest), NULL when
 * none. */
static const pref *around(const pref *p, size_t n, uint32_t lane, int64_t t)
{
	size_t lo = 0, hi = n, i, back = 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p[mid].lane < lane || (p[mid].lane == lane && p[mid].ts <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i-- > 0 && p[i].lane == lane && back++ < AROUND_BACK;)
		if (p[i].end >= t)
			return &p[i];
	return NULL;
}

/* The launch of GPU event e by its correlation id, NULL when none. */
static const pt_event *launch_of(const pt_store *st, const cref *c, size_t n, const pt_event *e)
{
	size_t lo = 0, hi = n;

	if (!e->corr)
		return NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c[mid].corr < e->corr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && c[lo].corr == e->corr ? &st->ev[c[lo].ev] : NULL;
}

/* The peer record of event ev itself, NULL when none. */
static const pt_peer *own_peer(const pt_store *st, uint32_t ev)
{
	size_t lo = 0, hi = st->npeers;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (st->peers[mid].ev < ev)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < st->npeers && st->peers[lo].ev == ev ? &st->peers[lo] : NULL;
}

/* Add one transfer, event e, to s's rows (and its span to sp). */
static int add_row(pt_summary *s, size_t *cap, spans *sp, int64_t peer, int dir, uint64_t bytes,
		   const pt_event *e)
{
	int64_t dur = e->dur;
	size_t i;
	pt_p2p_row *r;

	for (i = 0; i < s->np2p; i++)
		if (s->p2p[i].peer == peer && s->p2p[i].dir == dir)
			break;
	if (i == s->np2p) {
		if (s->np2p >= PT_P2P_MAX)
			return PT_OK;
		if (X_GROW(s->p2p, *cap, s->np2p + 1))
			return PT_ENOMEM;
		memset(&s->p2p[i], 0, sizeof(s->p2p[i]));
		s->p2p[i].peer = peer;
		s->p2p[i].dir = (uint8_t)dir;
		s->np2p++;
	}
	r = &s->p2p[i];
	r->count++;
	r->ms += (double)dur / 1e6;
	if (bytes) {
		r->bytes += bytes;
		r->nbytes++;
		r->ms_bytes += (double)dur / 1e6;
		if (X_GROW(sp->v, sp->cap, sp->n + 1))
			return PT_ENOMEM;
		sp->v[sp->n].row = i;
		sp->v[sp->n].ts = e->ts;
		sp->v[sp->n++].end = pt_end(e->ts, e->dur);
	}
	return PT_OK;
}

/* The peer ops, by lane and start; and the launches by correlation id when
 * the store has p2p kernels. */
static int index_peers(const pt_store *st, pref **pp, cref **cp, size_t *nc)
{
	size_t i, n = 0, ncap = 0;
	int kernels = 0;

	*pp = x_calloc(st->npeers, sizeof(**pp));
	if (!*pp)
		return PT_ENOMEM;
	for (i = 0; i < st->npeers; i++) {
		const pt_event *e = &st->ev[st->peers[i].ev];
		pref *p = &(*pp)[i];
		p->ts = e->ts;
		p->end = pt_end(e->ts, e->dur);
		p->lane = e->lane;
		p->ev = st->peers[i].ev;
		p->peer = st->peers[i].peer;
		p->dir = st->peers[i].dir;
	}
	qsort(*pp, st->npeers, sizeof(**pp), pref_cmp);
	for (i = 0; i < st->n && !kernels; i++)
		kernels = st->ev[i].kind == PT_K_COMM_KERNEL;
	for (i = 0; kernels && i < st->n; i++) {
		const pt_event *e = &st->ev[i];
		if ((e->kind != PT_K_RUNTIME && e->kind != PT_K_DRIVER) || !e->corr)
			continue;
		if (X_GROW(*cp, ncap, n + 1))
			return PT_ENOMEM;
		(*cp)[n].corr = e->corr;
		(*cp)[n++].ev = (uint32_t)i;
	}
	if (n)
		qsort(*cp, n, sizeof(**cp), cref_cmp);
	*nc = n;
	return PT_OK;
}

int pt_p2p_build(const pt_store *st, const pt_window *w, pt_summary *s)
{
	pref *p = NULL;
	cref *c = NULL;
	spans sp = { 0 };
	size_t i, nc = 0, cap = 0;
	int rc = PT_OK;

	if (!st->npeers)
		return PT_OK;
	if ((rc = index_peers(st, &p, &c, &nc)))
		goto out;
	for (i = 0; i < st->n; i++) {
		const pt_event *e = &st->ev[i], *l;
		const pt_peer *own;
		const pref *r = NULL;
		const char *nm;
		size_t len;
		int dir;
		uint64_t bytes;

		if ((e->kind != PT_K_COMM_KERNEL && e->kind != PT_K_CPU_COMM) || e->ts < w->start ||
		    e->ts > w->end)
			continue;
		nm = pt_strtab_get(st->strs, e->name, &len);
		dir = pt_commkind_p2p_dir(nm, len);
		if (!dir || (e->kind == PT_K_CPU_COMM && !pt_commkind_is_gloo_op(nm, len)))
			continue;
		own = own_peer(st, (uint32_t)i);
		if (own) {
			if ((rc = add_row(s, &cap, &sp, own->peer, own->dir, e->bytes, e)))
				goto out;
			continue;
		}
		if (e->kind == PT_K_COMM_KERNEL)
			r = (l = launch_of(st, c, nc, e)) ? around(p, st->npeers, l->lane, l->ts) : NULL;
		else
			r = around(p, st->npeers, e->lane, e->ts);
		if (!r || (dir != PT_P2P_BOTH && dir != r->dir))
			continue;
		bytes = e->bytes ? e->bytes : st->ev[r->ev].bytes;
		if ((rc = add_row(s, &cap, &sp, r->peer, r->dir, bytes, e)))
			goto out;
	}
	wall_time(s, &sp);
out:
	x_free(sp.v);
	x_free(c);
	x_free(p);
	return rc;
}

void pt_p2p_write(const pt_summary *s, pt_sb *out)
{
	size_t i;

	pt_sb_adds(out, "[");
	for (i = 0; i < s->np2p; i++) {
		const pt_p2p_row *r = &s->p2p[i];
		pt_sb_addf(out, "%s{\"peer\": %lld, \"dir\": \"%s\", \"count\": %llu, \"bytes\": %llu, "
			   "\"nbytes\": %llu, \"ms\": %.6f, \"ms_bytes\": %.6f, \"wall_ms\": %.6f}",
			   i ? ", " : "", (long long)r->peer, pt_commkind_p2p_name(r->dir),
			   (unsigned long long)r->count, (unsigned long long)r->bytes,
			   (unsigned long long)r->nbytes, r->ms, r->ms_bytes, r->wall_ms);
	}
	pt_sb_adds(out, "]");
}

static int bad_row(pt_error *err, size_t i, const char *what)
{
	return pt_error_set(err, PT_EFORMAT, -1, "'p2p': row %zu: %s", i, what);
}

/* A whole number in [0, 2^53] at o[key], or -1. */
static double whole(const pt_json *o, const char *key)
{
	double v = pt_json_num(o, key, -1);

	return v >= 0 && v <= 9007199254740992.0 && v == floor(v) ? v : -1;
}

int pt_p2p_parse(const char *buf, size_t len, pt_summary *s, pt_error *err)
{
	pt_json *root = pt_json_parse(buf, len, err);
	const pt_json *v;
	size_t i = 0;
	int rc = PT_OK;

	if (!root)
		return err ? err->code : PT_EPARSE;
	if (root->type != PT_JSON_ARR || root->len > PT_P2P_MAX) {
		rc = pt_error_set(err, PT_EFORMAT, -1, "'p2p' is not an array of at most %d rows",
				  PT_P2P_MAX);
		goto out;
	}
	s->p2p = x_calloc(root->len ? root->len : 1, sizeof(*s->p2p));
	if (!s->p2p) {
		rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
		goto out;
	}
	for (v = root->child; v; v = v->next, i++) {
		pt_p2p_row *r = &s->p2p[i];
		const char *d = pt_json_strv(v, "dir", "");
		double ms = pt_json_num(v, "ms", -1), msb = pt_json_num(v, "ms_bytes", 0);

		r->dir = (uint8_t)pt_commkind_p2p_parse(d, strlen(d));
		if (v->type != PT_JSON_OBJ || !r->dir || whole(v, "peer") < 0 ||
		    whole(v, "count") < 0 || whole(v, "bytes") < 0 || !(ms >= 0) || !(msb >= 0) ||
		    !isfinite(ms) || !isfinite(msb)) {
			rc = bad_row(err, i, "not {peer, dir (send/recv), count, bytes, ms}");
			goto out;
		}
		r->peer = (int64_t)whole(v, "peer");
		r->count = (uint64_t)whole(v, "count");
		r->bytes = (uint64_t)whole(v, "bytes");
		r->nbytes = whole(v, "nbytes") >= 0 ? (uint64_t)whole(v, "nbytes") : 0;
		r->ms = ms;
		r->ms_bytes = msb;
		r->wall_ms = pt_json_num(v, "wall_ms", msb);
		if (!(r->wall_ms >= 0) || r->wall_ms > msb * (1 + 1e-9) + 1e-6)
			r->wall_ms = msb;
		s->np2p = i + 1;
	}
out:
	pt_json_free(root);
	return rc;
}

void pt_p2p_free(pt_summary *s)
{
	if (!s)
		return;
	x_free(s->p2p);
	s->p2p = NULL;
	s->np2p = 0;
}
