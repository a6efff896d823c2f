/*
 * spans.c - the summary's "timeline" member (see spans.h): the main
 * thread's top-level spans per step and the stretches when a compute
 * kernel ran, in integer µs after the window start.  Built in one pass
 * over the store: only the few events that could matter are kept (frames
 * on the main thread lasting 1% of a step, and per GPU lane a running
 * stretch extended in file order), so the cost is a load and a compare
 * per event (docs/bench.md "The timeline").
 */
#include "spans.h"
#include "../util/json.h"
#include "../util/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SPANS_PER_STEP 8
#define GPU_PER_STEP 16

typedef struct cand {
	int64_t ts, dur;
	uint32_t name;
} cand;

typedef struct ival {
	int64_t a, b;
} ival;

static int cand_cmp(const void *x, const void *y)
{
	const cand *a = x, *b = y;

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->dur > b->dur ? -1 : a->dur < b->dur;
}

static int cand_dur_cmp(const void *x, const void *y)
{
	const cand *a = x, *b = y;

	if (a->dur != b->dur)
		return a->dur > b->dur ? -1 : 1;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

static int ival_cmp(const void *x, const void *y)
{
	const ival *a = x, *b = y;

	return a->a < b->a ? -1 : a->a > b->a;
}

static int i64_cmp(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;

	return a < b ? -1 : a > b;
}

static int is_frame(int kind)
{
	return kind == PT_K_CPU_OP || kind == PT_K_PYTHON || kind == PT_K_ANNOTATION ||
	       kind == PT_K_CPU_COMM;
}

void pt_spans_free(pt_sum_tl *tl)
{
	size_t i;

	if (!tl)
		return;
	for (i = 0; i < tl->nnames; i++)
		x_free(tl->names[i]);
	x_free(tl->names);
	x_free(tl->spans);
	x_free(tl->gpu);
	x_free(tl);
}

/* The step (index) a time falls in, from *hint on (times come sorted). */
static size_t step_of(const int64_t *a, const int64_t *b, size_t n, int64_t t, size_t *hint)
{
	size_t k = *hint;

	while (k < n && t >= b[k])
		k++;
	*hint = k;
	return k < n && t >= a[k] ? k : SIZE_MAX;
}

/* Spans: inside one step, not inside another kept frame; per step
 * the longest SPANS_PER_STEP, written by start (c is reordered).  The
 * steps' bounds are sa/sb (ns of them).  PT_ENOMEM or 0. */
static int keep_spans(pt_sum_tl *tl, cand *c, size_t nc, const int64_t *sa, const int64_t *sb,
		      size_t ns, const pt_window *w)
{
	size_t m = 0, a, q, i, hint = 0;
	int64_t top_end = INT64_MIN;

	if (nc)
		qsort(c, nc, sizeof(*c), cand_cmp);
	for (i = 0; i < nc; i++) {
		size_t st_ = step_of(sa, sb, ns, c[i].ts, &hint);
		if (st_ == SIZE_MAX || c[i].ts + c[i].dur > sb[st_] || c[i].ts < top_end)
			continue;
		top_end = c[i].ts + c[i].dur;
		c[m++] = c[i];
	}
	nc = m;
	tl->spans = x_malloc((nc ? nc : 1) * 4 * sizeof(*tl->spans));
	if (!tl->spans)
		return PT_ENOMEM;
	/* Per step: the longest first, cut, then by start. */
	hint = 0;
	for (a = 0; a < nc;) {
		size_t st_ = step_of(sa, sb, ns, c[a].ts, &hint), b = a, keep;
		size_t h2 = hint;
		while (b < nc && step_of(sa, sb, ns, c[b].ts, &h2) == st_)
			b++;
		keep = b - a < SPANS_PER_STEP ? b - a : SPANS_PER_STEP;
		qsort(c + a, b - a, sizeof(*c), cand_dur_cmp);
		qsort(c + a, keep, sizeof(*c), cand_cmp);
		for (q = a; q < a + keep; q++) {
			int64_t *o = &tl->spans[4 * tl->nspans++];
			o[0] = (int64_t)st_;
			o[1] = (c[q].ts - w->start) / 1000;
			o[2] = c[q].dur / 1000;
			o[3] = c[q].name;   /* the store's id: made a name index below */
		}
		a = b;
	}
	return 0;
}

/* The names the spans use, in order of first use: each span's store id
 * becomes an index into tl->names.  PT_ENOMEM or 0. */
static int name_spans(pt_sum_tl *tl, const pt_store *st)
{
	uint32_t *nameid = NULL;
	size_t cap = 0, ncap = 0, i;
	int rc = PT_ENOMEM;

	for (i = 0; i < tl->nspans; i++) {
		uint32_t id = (uint32_t)tl->spans[4 * i + 3];
		size_t q;
		for (q = 0; q < tl->nnames; q++)
			if (nameid[q] == id)
				break;
		if (q == tl->nnames) {
			const char *nm = pt_strtab_get(st->strs, id, NULL);
			if (X_GROW(nameid, cap, q + 1) ||
			    X_GROW(tl->names, ncap, q + 1))
				goto out;
			nameid[q] = id;
			tl->names[q] = x_strndup(nm ? nm : "", nm ? strlen(nm) : 0);
			if (!tl->names[q])
				goto out;
			tl->nnames++;
		}
		tl->spans[4 * i + 3] = (int64_t)q;
	}
	rc = 0;
out:
	x_free(nameid);
	return rc;
}

/* GPU: the lanes' stretches iv merged, gaps under `gap` closed, at most
 * GPU_PER_STEP per step (the shortest gaps closed first); with steps (n),
 * those outside every step left out.  PT_ENOMEM or 0. */
static int gpu_stretches(pt_sum_tl *tl, ival *iv, size_t niv, int64_t gap, const int64_t *sa,
			 const int64_t *sb, size_t ns, size_t n, const pt_window *w)
{
	size_t m = 0, i, hint;

	if (niv)
		qsort(iv, niv, sizeof(*iv), ival_cmp);
	for (i = 0; i < niv; i++) {
		if (m && iv[i].a <= iv[m - 1].b + gap) {
			if (iv[i].b > iv[m - 1].b)
				iv[m - 1].b = iv[i].b;
			continue;
		}
		iv[m++] = iv[i];
	}
	niv = m;
	tl->gpu = x_malloc((niv ? niv : 1) * 2 * sizeof(*tl->gpu));
	if (!tl->gpu)
		return PT_ENOMEM;
	hint = 0;
	for (i = 0; i < niv;) {
		size_t st_ = step_of(sa, sb, ns, iv[i].a, &hint), j = i, q, h2 = hint;
		while (j < niv && step_of(sa, sb, ns, iv[j].a, &h2) == st_)
			j++;
		/* close the shortest gaps until GPU_PER_STEP are left */
		while (j - i > GPU_PER_STEP) {
			size_t best = i;
			int64_t bg = INT64_MAX;
			for (q = i; q + 1 < j; q++)
				if (iv[q + 1].a - iv[q].b < bg) {
					bg = iv[q + 1].a - iv[q].b;
					best = q;
				}
			if (iv[best + 1].b > iv[best].b)
				iv[best].b = iv[best + 1].b;
			memmove(&iv[best + 1], &iv[best + 2], (niv - best - 2) * sizeof(*iv));
			niv--;
			j--;
		}
		for (q = i; q < j; q++) {
			if (st_ == SIZE_MAX && n)
				continue;  /* outside every step */
			tl->gpu[2 * tl->ngpu] = (iv[q].a - w->start) / 1000;
			tl->gpu[2 * tl->ngpu + 1] = (iv[q].b - w->start) / 1000;
			tl->ngpu++;
		}
		i = j;
	}
	return 0;
}

int pt_spans_build(const pt_store *st, const pt_window *w, const pt_step *steps, size_t n,
		   pt_summary *s, pt_error *err)
{
	pt_sum_tl *tl = NULL;
	int64_t *sa = NULL, *sb = NULL, *tmp = NULL, thr, gap, med;
	uint32_t main_lane = UINT32_MAX;
	ival *run = NULL, *iv = NULL;
	cand *c = NULL;
	size_t ns = n ? n : 1, nc = 0, ccap = 0, niv = 0, ivcap = 0, i, k;
	int rc = PT_ENOMEM;

	sa = x_malloc(ns * sizeof(*sa));
	sb = x_malloc(ns * sizeof(*sb));
	tmp = x_malloc(ns * sizeof(*tmp));
	run = x_malloc((st->nlanes ? st->nlanes : 1) * sizeof(*run));
	tl = x_calloc(1, sizeof(*tl));
	if (!sa || !sb || !tmp || !run || !tl)
		goto out;
	if (n) {
		for (k = 0; k < n; k++) {
			sa[k] = steps[k].ts;
			sb[k] = steps[k].ts + steps[k].dur;
			tmp[k] = steps[k].dur;
		}
		qsort(tmp, n, sizeof(*tmp), i64_cmp);
		med = tmp[n / 2];
	} else {
		sa[0] = w->start;
		sb[0] = w->end;
		med = w->end - w->start;
	}
	thr = med / 100 > 1 ? med / 100 : 1;
	gap = med / 200;
	/* The main thread: the one that holds the steps, else (a window
	 * without steps) the one with the first frame. */
	for (i = 0; i < st->n && main_lane == UINT32_MAX; i++)
		if (st->ev[i].kind == PT_K_STEP)
			main_lane = st->ev[i].lane;
	for (i = 0; i < st->n && main_lane == UINT32_MAX; i++)
		if (is_frame(st->ev[i].kind))
			main_lane = st->ev[i].lane;
	for (i = 0; i < st->nlanes; i++)
		run[i].a = run[i].b = INT64_MIN;
	for (i = 0; i < st->n; i++) {
		const pt_event *e = &st->ev[i];
		if (e->kind == PT_K_KERNEL) {
			ival *r = &run[e->lane];
			int64_t end = e->ts + e->dur;
			if (r->a != INT64_MIN && e->ts >= r->a && e->ts <= r->b + gap) {
				if (end > r->b)
					r->b = end;
				continue;
			}
			if (r->a != INT64_MIN) {
				if (X_GROW(iv, ivcap, niv + 1))
					goto out;
				iv[niv++] = *r;
			}
			r->a = e->ts;
			r->b = end;
		} else if (e->lane == main_lane && e->dur >= thr && is_frame(e->kind)) {
			if (X_GROW(c, ccap, nc + 1))
				goto out;
			c[nc].ts = e->ts;
			c[nc].dur = e->dur;
			c[nc].name = e->name;
			nc++;
		}
	}
	for (i = 0; i < st->nlanes; i++)
		if (run[i].a != INT64_MIN) {
			if (X_GROW(iv, ivcap, niv + 1))
				goto out;
			iv[niv++] = run[i];
		}

	if (keep_spans(tl, c, nc, sa, sb, ns, w) || (tl->nspans && name_spans(tl, st)) ||
	    gpu_stretches(tl, iv, niv, gap, sa, sb, ns, n, w))
		goto out;
	s->tl = tl;
	tl = NULL;
	rc = PT_OK;
out:
	if (rc)
		pt_error_set(err, PT_ENOMEM, -1, "out of memory while summarising");
	pt_spans_free(tl);
	x_free(c);
	x_free(iv);
	x_free(run);
	x_free(tmp);
	x_free(sb);
	x_free(sa);
	return rc;
}

void pt_spans_write(const pt_summary *s, pt_sb *out)
{
	const pt_sum_tl *tl = s->tl;
	size_t i;

	pt_sb_adds(out, "{\"names\":[");
	for (i = 0; i < tl->nnames; i++) {
		if (i)
			pt_sb_addc(out, ',');
		pt_sb_add_json_str(out, tl->names[i], strlen(tl->names[i]));
	}
	pt_sb_adds(out, "],\"spans\":[");
	for (i = 0; i < 4 * tl->nspans; i++) {
		if (i)
			pt_sb_addc(out, ',');
		pt_sb_add_i64(out, tl->spans[i]);
	}
	pt_sb_adds(out, "],\"gpu\":[");
	for (i = 0; i < 2 * tl->ngpu; i++) {
		if (i)
			pt_sb_addc(out, ',');
		pt_sb_add_i64(out, tl->gpu[i]);
	}
	pt_sb_adds(out, "]}");
}

static int bad(pt_error *err, const char *what)
{
	pt_error_set(err, PT_EFORMAT, -1, "'timeline': %s", what);
	return PT_EFORMAT;
}

/* Integers of array key into *out (n values, a multiple of per). */
static int read_ints(const pt_json *o, const char *key, size_t per, int64_t **out, size_t *n,
		     pt_error *err)
{
	const pt_json *a = pt_json_get(o, key), *v;
	size_t i = 0;

	if (!a || a->type != PT_JSON_ARR || a->len % per)
		return bad(err, per == 4 ? "'spans' is not an array of 4 integers per span"
				       : "'gpu' is not an array of 2 integers per stretch");
	*out = x_malloc((a->len ? a->len : 1) * sizeof(**out));
	if (!*out)
		return pt_error_set(err, PT_ENOMEM, -1, "out of memory");
	for (v = a->child; v; v = v->next, i++) {
		if (v->type != PT_JSON_NUM || !isfinite(v->num) || fabs(v->num) > 9e15 ||
		    v->num != floor(v->num))
			return bad(err, "a time or index is not an integer");
		(*out)[i] = (int64_t)v->num;
	}
	*n = a->len / per;
	return 0;
}

int pt_spans_parse(const char *buf, size_t len, pt_summary *s, pt_error *err)
{
	pt_json *root = pt_json_parse(buf, len, err);
	pt_sum_tl *tl = NULL;
	const pt_json *a, *v;
	size_t i;
	int rc;

	if (!root)
		return err ? err->code : PT_EPARSE;
	tl = x_calloc(1, sizeof(*tl));
	if (!tl) {
		rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
		goto out;
	}
	a = pt_json_get(root, "names");
	if (root->type != PT_JSON_OBJ || !a || a->type != PT_JSON_ARR) {
		rc = bad(err, "'names' is missing or not an array");
		goto out;
	}
	tl->names = x_calloc(a->len ? a->len : 1, sizeof(*tl->names));
	if (!tl->names) {
		rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
		goto out;
	}
	for (v = a->child; v; v = v->next) {
		if (v->type != PT_JSON_STR) {
			rc = bad(err, "'names' holds a non-string");
			goto out;
		}
		tl->names[tl->nnames] = x_strndup(v->str, v->len);
		if (!tl->names[tl->nnames++]) {
			rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
			goto out;
		}
	}
	if ((rc = read_ints(root, "spans", 4, &tl->spans, &tl->nspans, err)) ||
	    (rc = read_ints(root, "gpu", 2, &tl->gpu, &tl->ngpu, err)))
		goto out;
	for (i = 0; i < tl->nspans; i++)
		if (tl->spans[4 * i] < 0 || tl->spans[4 * i + 3] < 0 ||
		    (size_t)tl->spans[4 * i + 3] >= tl->nnames || tl->spans[4 * i + 2] < 0) {
			rc = bad(err, "a span's step, name or duration is out of range");
			goto out;
		}
	pt_spans_free(s->tl);
	s->tl = tl;
	tl = NULL;
	rc = PT_OK;
out:
	pt_spans_free(tl);
	pt_json_free(root);
	return rc;
}
