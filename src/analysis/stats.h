/*
 * stats.h - the sorting and order statistics used by the analysis stage:
 * an LSD radix sort for 64-bit keys (with or without a 32-bit payload) and
 * numpy-compatible percentiles, median and MAD.
 *
 * Flow: pt_store -> [attribute.c, patterns.c use these] -> pt_summary.
 * Internal to libperftracker (not installed).  Thread-safe (no state).
 */
#ifndef PT_STATS_H
#define PT_STATS_H

#include <stddef.h>
#include <stdint.h>

/* A key with a payload (typically an index into another array). */
typedef struct pt_kv {
	uint64_t k;
	uint32_t v;
} pt_kv;

/* Sort a[0..n) by k ascending, stable; n < 2^32.  tmp must hold n elements (it is
 * scratch; the result is in a).  Returns nothing: cannot fail. */
void pt_sort_kv(pt_kv *a, pt_kv *tmp, size_t n);

/* Sort a[0..n) ascending, n < 2^32; tmp holds n elements of scratch. */
void pt_sort_u64(uint64_t *a, uint64_t *tmp, size_t n);

/* Bits needed to write x (0 for 0). */
static inline unsigned pt_bits(uint64_t x)
{
	return x ? 64u - (unsigned)__builtin_clzll(x) : 0u;
}

/* Sort v[0..n) by v >> ib, stable; v[i] is typically key << ib | i, an
 * index packed under its key, so a pass moves 8 bytes instead of 16. */
void pt_sort_packed(uint64_t *v, uint64_t *tmp, size_t n, unsigned ib);

/* An ordering of the indices 0..n-1 by 64-bit keys.  Keys and indices are
 * packed into one uint64 when bits(maxkey) + bits(n-1) <= 64 (always, for
 * time offsets inside a window), else kept as pt_kv pairs.
 *   pt_order o;
 *   if (pt_order_init(&o, n, maxkey)) -> PT_ENOMEM
 *   for i: pt_order_set(&o, i, key_i);   (key_i <= maxkey)
 *   pt_order_sort(&o);
 *   for k: i = pt_order_at(&o, k);       (stable: equal keys by index)
 *   pt_order_free(&o);                                                    */
typedef struct pt_order {
	uint64_t *packed, *ptmp;
	pt_kv *kv, *kvtmp;
	unsigned ib;
	uint64_t mask;
	size_t n;
} pt_order;

int pt_order_init(pt_order *o, size_t n, uint64_t maxkey);
void pt_order_sort(pt_order *o);
void pt_order_free(pt_order *o);

static inline void pt_order_set(pt_order *o, size_t i, uint64_t key)
{
	if (o->packed) {
		o->packed[i] = key << o->ib | i;
	} else {
		o->kv[i].k = key;
		o->kv[i].v = (uint32_t)i;
	}
}

static inline uint32_t pt_order_at(const pt_order *o, size_t k)
{
	return o->packed ? (uint32_t)(o->packed[k] & o->mask) : o->kv[k].v;
}

/* Non-negative doubles compare like their IEEE bit patterns as unsigned
 * integers, so they can be radix sorted through these. */
static inline uint64_t pt_dbits(double d)
{
	union { double d; uint64_t u; } x;
	x.d = d;
	return x.u;
}
static inline double pt_bitsd(uint64_t u)
{
	union { double d; uint64_t u; } x;
	x.u = u;
	return x.d;
}

/* Percentile p (0..100) of sorted x[0..n) with numpy's default method
 * ("linear": virtual index (n-1)*p/100, linear interpolation between the
 * neighbouring order statistics, computed as numpy's _lerp does).
 * Returns 0 for n == 0. */
double pt_stats_percentile(const double *x, size_t n, double p);

/* k-th smallest (0-based) of v[0..n), n > 0, k < n; reorders v so that
 * none before k is larger and none after it smaller.  O(n) expected, a
 * sort of what is left on input shaped against its pivot. */
double pt_stats_select(double *v, size_t n, size_t k);

/* Median absolute deviation of x[0..n) (any order) around med: the median
 * (same method) of |x[i] - med|, found by selection.  scratch holds n
 * doubles.  Returns 0 for n == 0. */
double pt_stats_mad(const double *x, size_t n, double med, double *scratch);

#endif
