/*
 * breakdown.c - where one worker's GPU time goes (breakdown.h): unions of
 * its GPU intervals by class, the idle gaps between them, what the
 * launching CPU thread was doing during those gaps, and the launch
 * statistics.  Also the "gpu_breakdown" JSON member's writer and reader.
 *
 * Flow: patterns.c sorts the window's GPU events and nests the frames;
 * here: pt_bd_new (unions, idle gaps with prefix sums), pt_bd_frame per
 * frame (idle time inside each call stack), pt_bd_finish (runtime calls,
 * a sweep that makes the idle causes disjoint, the functions named).
 *
 * Cost on the 202 MB DLRM bench trace (550 k events): a pass over the GPU
 * events per union, a binary search per frame of the launching thread and
 * one sort of that thread's cause intervals; see docs/bench.md.
 */
#include "breakdown.h"
#include "analysis.h"
#include "stats.h"
#include "../model/keys.h"
#include "../util/json.h"
#include "../util/bsearch.h"
#include "../util/xalloc.h"
#include "../report/keys.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

struct pt_bd_builder {
	const pt_store *st;
	int64_t w0, w1;
	uint32_t main_lane;
	const uint32_t *gev;
	size_t ngev;
	/* GPU idle gaps, sorted and disjoint, with cum[i] = idle before gap i. */
	int64_t *is, *ie, *cum;
	size_t nidle;
	size_t hint;      /* gap of the last idle_before (a search hint only) */
	uint64_t u_comp, u_kern, u_all, u_comm;
	/* Inclusive idle time per stack node (main lane). */
	double *node_idle;
	size_t nodecap;
	/* Cause intervals of the main lane: data-loader frames, outermost
	 * frames (busy); runtime calls are added in finish. */
	int64_t (*civ)[2];
	uint8_t *ccause;
	size_t nciv, civcap, ccausecap;
};

/* ---- interval unions over the sorted GPU events -------------------------- */

/* The four unions (compute kernels, all kernels, communication kernels, all
 * GPU operations) in one pass over the events in start order, and the gaps
 * of the last one inside the window: the events are random accesses into
 * the store, so one pass instead of four (docs/bench.md, "Code shaped
 * for speed"). */
typedef struct run {
	int64_t s, e;
	int open;
	uint64_t m;
} run;

static inline void run_add(run *r, int64_t s, int64_t e, pt_bd_builder *b, int gaps,
			   int64_t *prev_end)
{
	if (r->open && s <= r->e) {
		if (e > r->e)
			r->e = e;
		return;
	}
	if (r->open) {
		r->m += (uint64_t)(r->e - r->s);
		if (gaps) {
			if (r->s > *prev_end) {
				b->is[b->nidle] = *prev_end;
				b->ie[b->nidle++] = r->s;
			}
			*prev_end = r->e;
		}
	}
	r->s = s;
	r->e = e;
	r->open = 1;
}

static void unions(pt_bd_builder *b)
{
	const pt_event *E = b->st->ev;
	run comp = { 0 }, kern = { 0 }, comm = { 0 }, all = { 0 };
	int64_t prev_end = b->w0, dummy = 0;
	size_t i;

	for (i = 0; i < b->ngev; i++) {
		const pt_event *e = &E[b->gev[i]];
		int64_t s = e->ts, t = pt_end(e->ts, e->dur);
		int k = e->kind;

		if (s < b->w0)
			s = b->w0;
		if (t > b->w1)
			t = b->w1;
		if (t <= s || (k != PT_K_KERNEL && k != PT_K_COMM_KERNEL && k != PT_K_MEMCPY &&
			       k != PT_K_MEMSET))
			continue;
		run_add(&all, s, t, b, 1, &prev_end);
		if (k == PT_K_MEMCPY || k == PT_K_MEMSET)
			continue;
		run_add(&kern, s, t, b, 0, &dummy);
		run_add(k == PT_K_KERNEL ? &comp : &comm, s, t, b, 0, &dummy);
	}
	/* close the last runs (a start past every end flushes them) */
	run_add(&all, INT64_MAX, INT64_MAX, b, 1, &prev_end);
	run_add(&kern, INT64_MAX, INT64_MAX, b, 0, &dummy);
	run_add(&comp, INT64_MAX, INT64_MAX, b, 0, &dummy);
	run_add(&comm, INT64_MAX, INT64_MAX, b, 0, &dummy);
	if (b->w1 > prev_end) {
		b->is[b->nidle] = prev_end;
		b->ie[b->nidle++] = b->w1;
	}
	b->u_comp = comp.m;
	b->u_kern = kern.m;
	b->u_comm = comm.m;
	b->u_all = all.m;
}

pt_bd_builder *pt_bd_new(const pt_store *st, int64_t w0, int64_t w1, const uint32_t *gpu_ev,
			 size_t ngpu, uint32_t main_lane)
{
	pt_bd_builder *b = x_calloc(1, sizeof(*b));
	size_t i;

	if (!b)
		return NULL;
	b->st = st;
	b->w0 = w0;
	b->w1 = w1;
	b->gev = gpu_ev;
	b->ngev = ngpu;
	b->main_lane = main_lane;
	b->is = x_malloc((ngpu + 1) * sizeof(*b->is));
	b->ie = x_malloc((ngpu + 1) * sizeof(*b->ie));
	b->cum = x_malloc((ngpu + 2) * sizeof(*b->cum));
	if (!b->is || !b->ie || !b->cum) {
		pt_bd_free(b);
		return NULL;
	}
	unions(b);
	b->cum[0] = 0;
	for (i = 0; i < b->nidle; i++)
		b->cum[i + 1] = b->cum[i] + (b->ie[i] - b->is[i]);
	return b;
}

/* Idle time before t: cum of the gaps ending at or before t plus the part
 * of the gap holding t. */
static int64_t idle_before(pt_bd_builder *b, int64_t t)
{
	size_t lo = 0, hi = b->nidle, h = b->hint;

	/* Frames and runtime calls come mostly in time order: try the gap
	 * found last and the next one before a binary search (idle_before
	 * showed in summarize's profile: docs/bench.md). */
	if (h < b->nidle && b->is[h] <= t) {
		if (h + 1 == b->nidle || b->is[h + 1] > t)
			lo = hi = h + 1;
		else if (h + 2 == b->nidle || b->is[h + 2] > t)
			lo = hi = h + 2;
		else
			lo = h + 2;
	} else if (h < b->nidle) {
		hi = h;
	}

	/* first gap with is > t */
	PT_BSEARCH(lo, hi, mid, b->is[mid] <= t);
	b->hint = lo ? lo - 1 : 0;
	if (!lo)
		return 0;
	return b->cum[lo - 1] + ((t < b->ie[lo - 1] ? t : b->ie[lo - 1]) - b->is[lo - 1]);
}

int64_t pt_bd_idle_in(pt_bd_builder *b, int64_t s, int64_t e)
{
	if (s < b->w0)
		s = b->w0;
	if (e > b->w1)
		e = b->w1;
	if (e <= s || !b->nidle)
		return 0;
	return idle_before(b, e) - idle_before(b, s);
}

int pt_bd_node_grow(pt_bd_builder *b, size_t n)
{
	size_t old = b->nodecap;

	if (n <= b->nodecap)
		return 0;
	if (X_GROW(b->node_idle, b->nodecap, n))
		return -1;
	memset(b->node_idle + old, 0, (b->nodecap - old) * sizeof(*b->node_idle));
	return 0;
}

int pt_bd_is_dataloader(const char *s, size_t n)
{
	static const char *const pats[] = { "dataloader", "data_loader", "_next_data" };
	char low[256];
	size_t i, m = n < sizeof(low) - 1 ? n : sizeof(low) - 1;

	for (i = 0; i < m; i++)
		low[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] + 32 : s[i]);
	low[m] = 0;
	for (i = 0; i < sizeof(pats) / sizeof(pats[0]); i++)
		if (strstr(low, pats[i]))
			return 1;
	return 0;
}

static int add_cause(pt_bd_builder *b, int cause, int64_t s, int64_t e)
{
	if (s < b->w0)
		s = b->w0;
	if (e > b->w1)
		e = b->w1;
	if (e <= s)
		return 0;
	if (X_GROW(b->civ, b->civcap, b->nciv + 1) || X_GROW(b->ccause, b->ccausecap, b->nciv + 1))
		return -1;
	b->civ[b->nciv][0] = s;
	b->civ[b->nciv][1] = e;
	b->ccause[b->nciv++] = (uint8_t)cause;
	return 0;
}

void pt_bd_frame(pt_bd_builder *b, uint32_t lane, uint32_t node, int depth, int dl_outer,
		 int64_t s, int64_t e)
{
	if (lane != b->main_lane)
		return;
	if (node < b->nodecap)
		b->node_idle[node] += (double)pt_bd_idle_in(b, s, e);
	/* Allocation failures here only lose a cause interval (the idle
	 * time then counts as "none"); the summary is still right. */
	if (dl_outer)
		(void)add_cause(b, PT_IDLE_DATALOADER, s, e);
	if (depth == 0)
		(void)add_cause(b, PT_IDLE_HOST, s, e);
}

uint32_t pt_bd_main_lane(const pt_store *st)
{
	uint64_t *cnt = x_calloc(st->nlanes + 1, sizeof(*cnt)), *fr;
	uint32_t best = UINT32_MAX;
	size_t i;

	if (!cnt)
		return UINT32_MAX;
	fr = x_calloc(st->nlanes + 1, sizeof(*fr));
	if (!fr) {
		x_free(cnt);
		return UINT32_MAX;
	}
	for (i = 0; i < st->n; i++) {
		const pt_event *e = &st->ev[i];
		if (e->lane >= st->nlanes || (e->flags & PT_EV_GPU))
			continue;
		if (e->kind == PT_K_RUNTIME || e->kind == PT_K_DRIVER)
			cnt[e->lane]++;
		else if (e->kind == PT_K_CPU_OP || e->kind == PT_K_PYTHON ||
			 e->kind == PT_K_ANNOTATION || e->kind == PT_K_CPU_COMM)
			fr[e->lane]++;
	}
	for (i = 0; i < st->nlanes; i++)
		if (cnt[i] && (best == UINT32_MAX || cnt[i] > cnt[best]))
			best = (uint32_t)i;
	if (best == UINT32_MAX)
		for (i = 0; i < st->nlanes; i++)
			if (fr[i] && (best == UINT32_MAX || fr[i] > fr[best]))
				best = (uint32_t)i;
	x_free(fr);
	x_free(cnt);
	return best;
}

/* Make the causes disjoint inside the idle gaps: a sweep over the cause
 * intervals' boundaries and the gaps, each idle instant to the active cause
 * of highest priority (lowest number), "none" when no cause is active. */
static int cause_sweep(pt_bd_builder *b, double out_ns[PT_IDLE_COUNT])
{
	size_t nb = 2 * (b->nciv + b->nidle), i, k = 0;
	pt_order o;
	int64_t *t = NULL;
	int8_t *code = NULL;
	int cnt[PT_IDLE_COUNT + 1] = { 0 };
	int64_t prev = b->w0;
	int rc = -1;

	memset(out_ns, 0, PT_IDLE_COUNT * sizeof(double));
	if (!nb)
		return 0;
	t = x_malloc(nb * sizeof(*t));
	code = x_malloc(nb);
	if (!t || !code || pt_order_init(&o, nb, (uint64_t)b->w1 - (uint64_t)b->w0))
		goto out;
	/* code: +(c+1) start of cause c, -(c+1) its end; idle gaps use
	 * c = PT_IDLE_COUNT. */
	for (i = 0; i < b->nciv; i++) {
		t[k] = b->civ[i][0];
		code[k++] = (int8_t)(b->ccause[i] + 1);
		t[k] = b->civ[i][1];
		code[k++] = (int8_t)-(b->ccause[i] + 1);
	}
	for (i = 0; i < b->nidle; i++) {
		t[k] = b->is[i];
		code[k++] = PT_IDLE_COUNT + 1;
		t[k] = b->ie[i];
		code[k++] = -(PT_IDLE_COUNT + 1);
	}
	for (i = 0; i < nb; i++)
		pt_order_set(&o, i, (uint64_t)t[i] - (uint64_t)b->w0);
	pt_order_sort(&o);
	for (i = 0; i < nb; i++) {
		uint32_t j = pt_order_at(&o, i);
		int c, top = PT_IDLE_NONE;

		if (t[j] > prev) {
			if (cnt[PT_IDLE_COUNT] > 0) {
				for (c = 0; c < PT_IDLE_NONE; c++)
					if (cnt[c] > 0) {
						top = c;
						break;
					}
				out_ns[top] += (double)(t[j] - prev);
			}
			prev = t[j];
		}
		c = code[j] > 0 ? code[j] - 1 : -code[j] - 1;
		cnt[c] += code[j] > 0 ? 1 : -1;
	}
	rc = 0;
	pt_order_free(&o);
out:
	x_free(code);
	x_free(t);
	return rc;
}

static int func_cmp(const void *a, const void *b)
{
	const pt_bd_func *x = a, *y = b;

	if (x->idle_ms != y->idle_ms)
		return x->idle_ms > y->idle_ms ? -1 : 1;
	return strcmp(x->key, y->key);
}

int pt_bd_finish(pt_bd_builder *b, const uint32_t *parent, size_t nnodes,
		 char *(*key)(const void *ctx, uint32_t node), const void *ctx, pt_breakdown *out)
{
	const pt_store *st = b->st;
	uint8_t *rk = NULL;   /* runtime kind by name id + 1 */
	double *sync_by = NULL;
	double *maxchild = NULL, idle_ns[PT_IDLE_COUNT];
	uint32_t nn = (uint32_t)pt_strtab_count(st->strs), best_sync = UINT32_MAX;
	size_t i;
	int rc = PT_ENOMEM, c;

	memset(out, 0, sizeof(*out));
	out->window_ms = (double)(b->w1 - b->w0) / 1e6;
	out->compute_ms = (double)b->u_comp / 1e6;
	out->comm_ms = (double)(b->u_kern - b->u_comp) / 1e6;
	out->memory_ms = (double)(b->u_all - b->u_kern) / 1e6;
	out->idle_ms = (double)((uint64_t)(b->w1 - b->w0) - b->u_all) / 1e6;
	out->comm_total_ms = (double)b->u_comm / 1e6;
	for (i = 0; i < b->ngev; i++) {
		const pt_event *e = &st->ev[b->gev[i]];
		if (e->kind != PT_K_KERNEL && e->kind != PT_K_COMM_KERNEL)
			continue;
		out->nkernels++;
		if (e->dur < PT_BD_SMALL_KERNEL_NS) {
			out->nsmall++;
			out->small_kernel_ms += (double)e->dur / 1e6;
		}
	}

	rk = x_calloc(nn ? nn : 1, 1);
	sync_by = x_calloc(nn ? nn : 1, sizeof(*sync_by));
	if (!rk || !sync_by)
		goto out;
	for (i = 0; i < st->n; i++) {
		const pt_event *e = &st->ev[i];
		int k;

		if ((e->kind != PT_K_RUNTIME && e->kind != PT_K_DRIVER) || e->name >= nn ||
		    !pt_window_hits(&(pt_window){ b->w0, b->w1, 0 }, e->ts, e->dur))
			continue;
		if (!rk[e->name]) {
			size_t n;
			const char *s = pt_strtab_get(st->strs, e->name, &n);
			rk[e->name] = (uint8_t)pt_key_runtime_kind(s, n);
		}
		k = rk[e->name];
		if (k == PT_RT_LAUNCH)
			out->nlaunches++;
		if (e->lane != b->main_lane)
			continue;
		if (k == PT_RT_SYNC || k == PT_RT_SYNC_COPY) {
			int64_t d = pt_bd_idle_in(b, e->ts, pt_end(e->ts, e->dur));
			sync_by[e->name] += (double)d;
			if (add_cause(b, PT_IDLE_SYNC, e->ts, pt_end(e->ts, e->dur)))
				goto out;
		} else if (k == PT_RT_LAUNCH || k == PT_RT_ENQUEUE) {
			if (add_cause(b, PT_IDLE_LAUNCH, e->ts, pt_end(e->ts, e->dur)))
				goto out;
		} else if (add_cause(b, PT_IDLE_HOST, e->ts, pt_end(e->ts, e->dur))) {
			goto out;
		}
	}
	for (i = 0; i < nn; i++)
		if (sync_by[i] > 0 && (best_sync == UINT32_MAX || sync_by[i] > sync_by[best_sync]))
			best_sync = (uint32_t)i;
	if (best_sync != UINT32_MAX) {
		size_t n;
		const char *s = pt_strtab_get(st->strs, best_sync, &n);
		if (!(out->sync_top = x_strndup(s, n)))
			goto out;
		out->sync_top_ms = sync_by[best_sync] / 1e6;
	}
	if (cause_sweep(b, idle_ns))
		goto out;
	for (c = 0; c < PT_IDLE_COUNT; c++)
		out->idle_ms_by[c] = idle_ns[c] / 1e6;

	/* The functions: stack nodes of the main lane holding at least 5% of
	 * the idle time, the most specific ones (no child holding 80% of
	 * theirs), largest first. */
	if (nnodes > b->nodecap)
		nnodes = b->nodecap;
	if (nnodes && out->idle_ms > 0) {
		double floor_ns = 0.05 * out->idle_ms * 1e6;
		struct { uint32_t node; double ns; } top[PT_BD_MAX_FUNCS];
		size_t nt = 0, j;

		maxchild = x_calloc(nnodes, sizeof(*maxchild));
		if (!maxchild)
			goto out;
		for (i = 1; i < nnodes; i++)
			if (parent[i] < nnodes && b->node_idle[i] > maxchild[parent[i]])
				maxchild[parent[i]] = b->node_idle[i];
		/* the PT_BD_MAX_FUNCS largest, by insertion (ties: lower node) */
		for (i = 1; i < nnodes; i++) {
			double v = b->node_idle[i];
			if (v < floor_ns || v <= 0 || maxchild[i] >= 0.8 * v)
				continue;
			if (nt == PT_BD_MAX_FUNCS && v <= top[nt - 1].ns)
				continue;
			if (nt < PT_BD_MAX_FUNCS)
				nt++;
			for (j = nt - 1; j > 0 && top[j - 1].ns < v; j--)
				top[j] = top[j - 1];
			top[j].node = (uint32_t)i;
			top[j].ns = v;
		}
		for (j = 0; j < nt; j++) {
			char *k = key(ctx, top[j].node);
			if (!k)
				goto out;
			out->funcs[out->nfuncs].key = k;
			out->funcs[out->nfuncs++].idle_ms = top[j].ns / 1e6;
		}
		qsort(out->funcs, out->nfuncs, sizeof(out->funcs[0]), func_cmp);
	}
	rc = PT_OK;
out:
	x_free(maxchild);
	x_free(sync_by);
	x_free(rk);
	if (rc)
		pt_breakdown_free(out);
	return rc;
}

void pt_bd_free(pt_bd_builder *b)
{
	if (!b)
		return;
	x_free(b->ccause);
	x_free(b->civ);
	x_free(b->node_idle);
	x_free(b->cum);
	x_free(b->ie);
	x_free(b->is);
	x_free(b);
}

void pt_breakdown_free(pt_breakdown *b)
{
	size_t i;

	if (!b)
		return;
	for (i = 0; i < b->nfuncs; i++)
		x_free(b->funcs[i].key);
	x_free(b->sync_top);
	b->sync_top = NULL;
	b->nfuncs = 0;
}

/* ---- JSON ---------------------------------------------------------------- */

static const char *const cause_names[PT_IDLE_COUNT] = {
	"sync", "dataloader", "launch", "host", "none",
};

/* A number member (strbuf's key and number emitters); first: no ',' before
 * it.  Non-finite values (never expected) are written as 0. */
static void put_num(pt_sb *sb, const char *k, double v, int first)
{
	pt_sb_add_json_key(sb, k, first);
	pt_sb_add_double(sb, isfinite(v) ? v : 0.0);
}

void pt_breakdown_write(const pt_breakdown *b, pt_sb *out)
{
	size_t i;
	int c;

	pt_sb_addc(out, '{');
	put_num(out, PT_KEY_WINDOW_MS, b->window_ms, 1);
	put_num(out, "compute_ms", b->compute_ms, 0);
	put_num(out, "communication_ms", b->comm_ms, 0);
	put_num(out, "memory_ms", b->memory_ms, 0);
	put_num(out, "idle_ms", b->idle_ms, 0);
	put_num(out, "communication_total_ms", b->comm_total_ms, 0);
	pt_sb_add_json_key(out, "idle", 0);
	pt_sb_addc(out, '{');
	for (c = 0; c < PT_IDLE_COUNT; c++)
		put_num(out, cause_names[c], b->idle_ms_by[c], c == 0);
	pt_sb_addc(out, '}');
	if (b->sync_top) {
		pt_sb_add_json_key(out, "sync_top", 0);
		pt_sb_add_json_str(out, b->sync_top, strlen(b->sync_top));
		put_num(out, "sync_top_ms", b->sync_top_ms, 0);
	}
	pt_sb_add_json_key(out, "idle_functions", 0);
	pt_sb_addc(out, '[');
	for (i = 0; i < b->nfuncs; i++) {
		pt_sb_adds(out, i ? ",{" : "{");
		pt_sb_add_json_key(out, "key", 1);
		pt_sb_add_json_str(out, b->funcs[i].key, strlen(b->funcs[i].key));
		pt_sb_add_json_key(out, "idle_ms", 0);
		pt_sb_add_double(out, b->funcs[i].idle_ms);
		pt_sb_addc(out, '}');
	}
	pt_sb_addc(out, ']');
	pt_sb_addf(out, ",\"kernels\":%llu,\"short_kernels\":%llu,\"launches\":%llu",
		   (unsigned long long)b->nkernels, (unsigned long long)b->nsmall,
		   (unsigned long long)b->nlaunches);
	put_num(out, "short_kernel_ms", b->small_kernel_ms, 0);
	pt_sb_addc(out, '}');
}

static int get_num(const pt_json *o, const char *k, double *v, pt_error *err, int required)
{
	const pt_json *x = pt_json_get(o, k);

	if (!x) {
		if (!required)
			return 0;
		return pt_error_set(err, PT_EFORMAT, -1, "'gpu_breakdown %s' is missing", k);
	}
	if (x->type != PT_JSON_NUM || !(x->num >= 0))
		return pt_error_set(err, PT_EFORMAT, -1, "'gpu_breakdown %s' is not a number >= 0", k);
	*v = x->num;
	return 0;
}

int pt_breakdown_parse(const char *buf, size_t len, pt_breakdown *b, pt_error *err)
{
	static const char *const req[] = { PT_KEY_WINDOW_MS, "compute_ms", "communication_ms",
					   "memory_ms", "idle_ms" };
	double *dst[5];
	pt_json *root = pt_json_parse(buf, len, err);
	const pt_json *x;
	double v;
	size_t i;
	int rc = PT_EFORMAT, c;

	memset(b, 0, sizeof(*b));
	if (!root)
		return err ? err->code : PT_EPARSE;
	if (root->type != PT_JSON_OBJ) {
		rc = pt_error_set(err, PT_EFORMAT, 0, "'gpu_breakdown' is not an object");
		goto out;
	}
	dst[0] = &b->window_ms;
	dst[1] = &b->compute_ms;
	dst[2] = &b->comm_ms;
	dst[3] = &b->memory_ms;
	dst[4] = &b->idle_ms;
	for (i = 0; i < 5; i++)
		if (get_num(root, req[i], dst[i], err, 1))
			goto out;
	if (get_num(root, "communication_total_ms", &b->comm_total_ms, err, 0) ||
	    get_num(root, "sync_top_ms", &b->sync_top_ms, err, 0) ||
	    get_num(root, "short_kernel_ms", &b->small_kernel_ms, err, 0))
		goto out;
	if ((x = pt_json_get(root, "idle")) && x->type == PT_JSON_OBJ)
		for (c = 0; c < PT_IDLE_COUNT; c++)
			if (get_num(x, cause_names[c], &b->idle_ms_by[c], err, 0))
				goto out;
	v = 0;
	if (get_num(root, "kernels", &v, err, 0))
		goto out;
	b->nkernels = (uint64_t)v;
	v = 0;
	if (get_num(root, "short_kernels", &v, err, 0))
		goto out;
	b->nsmall = (uint64_t)v;
	v = 0;
	if (get_num(root, "launches", &v, err, 0))
		goto out;
	b->nlaunches = (uint64_t)v;
	if ((x = pt_json_get(root, "sync_top")) && x->type == PT_JSON_STR &&
	    !(b->sync_top = x_strndup(x->str, x->len))) {
		rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
		goto out;
	}
	if ((x = pt_json_get(root, "idle_functions")) && x->type == PT_JSON_ARR) {
		for (i = 0; i < x->len && b->nfuncs < PT_BD_MAX_FUNCS; i++) {
			const pt_json *f = pt_json_at(x, i);
			const char *k = pt_json_strv(f, "key", NULL);
			if (!k)
				continue;
			if (!(b->funcs[b->nfuncs].key = x_strndup(k, strlen(k)))) {
				rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
				goto out;
			}
			b->funcs[b->nfuncs++].idle_ms = pt_json_num(f, "idle_ms", 0);
		}
	}
	rc = PT_OK;
out:
	if (rc)
		pt_breakdown_free(b);
	pt_json_free(root);
	return rc;
}
