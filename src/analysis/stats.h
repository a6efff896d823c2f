/*
 * stats.h - the one statistics module: the sorting and order statistics of
 * the analysis stage (an LSD radix sort for 64-bit keys, with or without a
 * 32-bit payload; numpy-compatible percentiles, median and MAD) and the
 * robust statistics behind differential detection (median and MAD with
 * implicit zeros, leave-one-out medians, robust z, the outlier rule).
 *
 * Flow: pt_store -> [attribute.c, patterns.c] -> pt_summary; summaries ->
 * [src/diagnose, src/compare, src/hang: the robust part] -> findings.
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

/* ---- robust statistics (differential detection, docs/diagnose.md) ------
 * k-th smallest by quickselect (O(n)), median and MAD of a set of values
 * plus implicit zeros (workers lacking a function count 0 for ratio
 * metrics without materialising the zeros), leave-one-out statistics for
 * few workers, and the outlier test. */

/* Standard deviations per MAD for normal data (1 / 0.6745): sigma =
 * PT_STATS_SIGMA_PER_MAD x MAD, the noise the diagnosis and compare state. */
#define PT_STATS_SIGMA_PER_MAD 1.4826

/* Consistency constant of the modified z-score (Iglewicz & Hoaglin):
 * z = 0.6745 (x - median) / MAD, which makes MAD comparable to a standard
 * deviation for normal data; 3.5 is their recommended cut-off. */
#define PT_ROBUST_K 0.6745

typedef struct pt_robust {
	double med, mad;
	size_t n;          /* number of values, implicit zeros included */
} pt_robust;

/* Median of v[0..n) plus nzero implicit zeros (all values >= 0 when
 * nzero > 0); reorders v; 0 for an empty set. */
double pt_robust_median(double *v, size_t n, size_t nzero);

/* Median and MAD of v[0..n) plus nzero implicit zeros.  With nzero > 0 all
 * values must be >= 0.  v is reordered; tmp must hold n doubles.  An empty
 * set gives med = mad = 0, n = 0. */
void pt_robust_stats(double *v, size_t n, size_t nzero, double *tmp, pt_robust *out);

/* Median of a sorted array s[0..n) plus nzero implicit zeros (placed before
 * s, so s must be >= 0 when nzero > 0) with the element s[skip] removed
 * (skip == (size_t)-1: nothing removed).  0 when nothing is left. */
double pt_robust_sorted_median(const double *s, size_t n, size_t nzero, size_t skip);

/* Index of some element equal to x in sorted s[0..n) ((size_t)-1 if none). */
size_t pt_robust_find(const double *s, size_t n, double x);

/* Which deviation costs time. */
enum { PT_DIR_BOTH = 0, PT_DIR_HIGH = 1, PT_DIR_LOW = -1 };

/* Signed deviation of x from med in the costly direction (|x - med| for
 * PT_DIR_BOTH). */
double pt_robust_dev(double x, double med, int dir);

/* Robust z of deviation dev against (med, mad): 0.6745 dev / max(mad,
 * mad_floor |med|); +inf when that denominator is 0 and dev > 0. */
double pt_robust_z(double dev, double med, double mad, double mad_floor);

/* Relative deviation dev / |med| (+inf when med is 0 and dev > 0). */
double pt_robust_rel(double dev, double med);

/* The value above which x is a high outlier of a set with median med > 0
 * and MAD mad: med + max(rel med, z sigma), sigma = max(mad, mad_floor med)
 * / PT_ROBUST_K; the same test as z > z and rel > rel.  The slow-step rules
 * (a worker's own steps, steps.c; the workers' steps, display.c) use it. */
double pt_robust_limit(double med, double mad, double z, double rel, double mad_floor);

/* The typical values of a small sample (a worker's step times) and the
 * limit above which a value is not typical.  The limit is med + the larger
 * of rel med and z sigma (sigma = max(MAD, mad_floor med) / PT_ROBUST_K),
 * at most clear med: a value that far above the typical ones is high
 * however they spread.  Iterative, so that high values cannot hide each
 * other: the median is that of the values not yet high, the MAD their
 * median deviation below it (of the values at or under the median: high
 * values cannot widen it); the largest value above the limit becomes high and the
 * rest are judged again, until none is above it or (n - 1) / 2 are high
 * (high values stay a minority).  high[i] is set for the high values;
 * tmp holds 2 n doubles.  The slow-step rule (src/diagnose/steps.c). */
typedef struct pt_typical_rule {
	double z, rel, clear, mad_floor;
} pt_typical_rule;
typedef struct pt_typical {
	double med, mad;   /* of the typical values */
	double sigma;      /* their robust deviation: max(mad, mad_floor med) / PT_ROBUST_K */
	double limit;      /* above it a value is high */
	size_t nhigh;
} pt_typical;
void pt_robust_typical(const double *v, size_t n, const pt_typical_rule *r, unsigned char *high,
		       double *tmp, pt_typical *out);

/* The statistical part of the rule (z, rel, mad_floor: the diagnosis's
 * options): robust z > z and relative deviation > rel.  The caller
 * then checks the impact floor with the exact median of the others. */
int pt_robust_outlier(double x, const pt_robust *st, int dir, double z, double rel, double mad_floor);

#endif
