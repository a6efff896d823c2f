/*
 * attribute.c - the priority sweep (docs/design.md "Classes and priority"):
 * every instant of the window goes to the highest active class, shared
 * equally by that class's active items.
 *
 * Flow: patterns.c builds the items (events clipped to the window, CPU
 * frame segments) -> pt_attr_sweep -> owned time per pattern, class totals,
 * GPU busy time -> summary.c.
 *
 * Method: keep per class the number of active items n_c and the integral
 * S_c(t) of dt/n_c over the time where c is the top class.  An item of class
 * c then owns exactly S_c(end) - S_c(start), so no per-instant work per
 * item is needed: O(n log n) for the sort, O(log k) per item for a heap of
 * the k items active at once.  Items come from an array (sorted here) and
 * from presorted runs that the caller may make a chunk at a time, so that
 * they are never all in memory (pt_item_runs).
 */
#include "analysis.h"
#include "stats.h"
#include "../util/error.h"
#include "../util/xalloc.h"

/* An active item.  It carries what its end needs (class, pattern, S at its
 * start) so that the sweep touches items[] once, at the start, in sorted
 * order. */
typedef struct hent {
	int64_t e;
	double s0;
	uint32_t pat;
	uint8_t cls, kernel;
} hent;

static void heap_push(hent *h, size_t *n, hent x)
{
	size_t i = (*n)++, p;

	while (i > 0) {
		p = (i - 1) / 2;
		if (h[p].e <= x.e)
			break;
		h[i] = h[p];
		i = p;
	}
	h[i] = x;
}

static hent heap_pop(hent *h, size_t *n)
{
	hent top = h[0], x = h[--(*n)];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < *n) {
		if (c + 1 < *n && h[c + 1].e < h[c].e)
			c++;
		if (x.e <= h[c].e)
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
	return top;
}

/* A source of items in start order: the sorted unsorted part (p NULL:
 * positions in ord) or one presorted run, served a chunk at a time (p).
 * Sources sit in a min-heap by their head's start. */
typedef struct src {
	int64_t s;        /* start of the head item */
	const pt_item *p; /* current chunk of the run; NULL for the sorted part */
	size_t pos, end;  /* head and end in ord (sorted part) or in p */
	size_t run;
} src;

static void src_down(src *h, size_t n, size_t i)
{
	src x = h[i];
	size_t c;

	while ((c = 2 * i + 1) < n) {
		if (c + 1 < n && h[c + 1].s < h[c].s)
			c++;
		if (x.s <= h[c].s)
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
}

int pt_attr_sweep_runs(const pt_item *items, size_t n, const pt_item_runs *runs, int64_t w0,
		       int64_t w1, double *owned, pt_attr_totals *tot)
{
	pt_order ord;
	hent *heap = NULL;
	src *srcs = NULL;
	double S[PT_C_COUNT] = { 0 };
	uint32_t cnt[PT_C_COUNT] = { 0 };
	unsigned mask = 0; /* bit c set while cnt[c] > 0 */
	uint32_t nkern = 0;
	size_t i, k, nh = 0, hcap = 0, nsrc = 0, nruns = runs ? runs->nruns : 0;
	int64_t tprev = w0;
	int rc = PT_ENOMEM;

	memset(tot, 0, sizeof(*tot));
	if (pt_order_init(&ord, n, (uint64_t)w1 - (uint64_t)w0))
		return PT_ENOMEM;
	for (i = 0; i < n; i++)
		pt_order_set(&ord, i, (uint64_t)items[i].s - (uint64_t)w0);
	pt_order_sort(&ord);
	/* Merging the presorted runs (one per thread) instead of sorting them
	 * makes the sweep much cheaper (docs/bench.md, "Code shaped for
	 * speed"). */
	srcs = x_malloc((nruns + 1) * sizeof(*srcs));
	if (!srcs)
		goto out;
	if (n) {
		srcs[nsrc].s = items[pt_order_at(&ord, 0)].s;
		srcs[nsrc].p = NULL;
		srcs[nsrc].pos = 0;
		srcs[nsrc].end = n;
		srcs[nsrc].run = 0;
		nsrc++;
	}
	for (i = 0; i < nruns; i++) {
		k = runs->next(runs->ctx, i, &srcs[nsrc].p);
		if (k == (size_t)-1)
			goto out;
		if (!k)
			continue;
		srcs[nsrc].s = srcs[nsrc].p[0].s;
		srcs[nsrc].pos = 0;
		srcs[nsrc].end = k;
		srcs[nsrc].run = i;
		nsrc++;
	}
	for (i = nsrc; i-- > 0;)
		src_down(srcs, nsrc, i);

	for (;;) {
		int64_t ns = nsrc ? srcs[0].s : INT64_MAX;
		int64_t ne = nh ? heap[0].e : INT64_MAX;
		int64_t t = ns < ne ? ns : ne;

		if (!nsrc && nh == 0)
			break;
		if (t > tprev) {
			/* [tprev, t) belongs to the top class (or is idle). */
			uint64_t dt = (uint64_t)t - (uint64_t)tprev;
			if (mask) {
				int c = 31 - __builtin_clz(mask);
				S[c] += (double)dt / cnt[c];
				tot->class_ns[c] += dt;
			} else {
				tot->class_ns[PT_C_IDLE] += dt;
			}
			if (nkern)
				tot->gpu_busy_ns += dt;
			tprev = t;
		}
		if (ne <= ns) {
			hent h = heap_pop(heap, &nh);
			owned[h.pat] += S[h.cls] - h.s0;
			if (--cnt[h.cls] == 0)
				mask &= ~(1u << h.cls);
			nkern -= h.kernel;
		} else {
			src *sr = &srcs[0];
			pt_item it; /* a copy: refilling a run reuses its chunk */
			hent h;

			if (!sr->p) {
				it = items[pt_order_at(&ord, sr->pos)];
				if (++sr->pos < sr->end)
					sr->s = items[pt_order_at(&ord, sr->pos)].s;
				else
					srcs[0] = srcs[--nsrc];
			} else {
				it = sr->p[sr->pos];
				if (++sr->pos < sr->end) {
					sr->s = sr->p[sr->pos].s;
				} else if ((k = runs->next(runs->ctx, sr->run, &sr->p)) == (size_t)-1) {
					goto out;
				} else if (k) {
					sr->pos = 0;
					sr->end = k;
					sr->s = sr->p[0].s;
				} else {
					srcs[0] = srcs[--nsrc];
				}
			}
			if (nsrc)
				src_down(srcs, nsrc, 0);
			h.e = it.e;
			h.s0 = S[it.cls];
			h.pat = it.pat;
			h.cls = it.cls;
			h.kernel = it.kernel;
			cnt[it.cls]++;
			mask |= 1u << it.cls;
			nkern += it.kernel;
			if (nh == hcap && X_GROW(heap, hcap, nh + 1))
				goto out;
			heap_push(heap, &nh, h);
		}
	}
	if (w1 > tprev)
		tot->class_ns[PT_C_IDLE] += (uint64_t)w1 - (uint64_t)tprev;
	rc = PT_OK;
out:
	x_free(srcs);
	x_free(heap);
	pt_order_free(&ord);
	return rc;
}

/* pt_attr_sweep's runs: the maximal stretches of items[sorted_from..n)
 * whose starts do not decrease, each served as one chunk. */
typedef struct array_runs {
	const pt_item *items;
	size_t *bound; /* run r is items[bound[r] .. bound[r + 1]) */
	unsigned char *done;
} array_runs;

static size_t array_next(void *ctx, size_t run, const pt_item **out)
{
	array_runs *a = ctx;

	if (a->done[run])
		return 0;
	a->done[run] = 1;
	*out = a->items + a->bound[run];
	return a->bound[run + 1] - a->bound[run];
}

int pt_attr_sweep(const pt_item *items, size_t n, size_t sorted_from, int64_t w0, int64_t w1,
		  double *owned, pt_attr_totals *tot)
{
	array_runs a = { items, NULL, NULL };
	pt_item_runs runs = { 0, array_next, &a };
	size_t i;
	int rc = PT_ENOMEM;

	if (sorted_from > n)
		sorted_from = n;
	for (i = sorted_from; i < n; i++)
		if (i == sorted_from || items[i].s < items[i - 1].s)
			runs.nruns++;
	a.bound = x_malloc((runs.nruns + 1) * sizeof(*a.bound));
	a.done = x_calloc(runs.nruns + 1, 1);
	if (!a.bound || !a.done) {
		memset(tot, 0, sizeof(*tot));
		goto out;
	}
	runs.nruns = 0;
	for (i = sorted_from; i < n; i++)
		if (i == sorted_from || items[i].s < items[i - 1].s)
			a.bound[runs.nruns++] = i;
	a.bound[runs.nruns] = n;
	rc = pt_attr_sweep_runs(items, sorted_from, &runs, w0, w1, owned, tot);
out:
	x_free(a.done);
	x_free(a.bound);
	return rc;
}
