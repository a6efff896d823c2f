/*
 * stats.c - the one statistics module (stats.h): radix sorts and
 * numpy-compatible order statistics, used by attribute.c (item starts) and
 * patterns.c (frame order, durations); and the robust statistics (median
 * and MAD with implicit zeros, leave-one-out, the outlier rule) used by
 * src/diagnose, src/compare and src/hang.
 *
 * Why radix: a summary sorts every event's start time and every pattern's
 * durations; on 10^6 events an LSD radix sort with 11-bit digits does 3-4
 * linear passes (keys are ns offsets inside a window of seconds, < 2^36),
 * several times faster than qsort (docs/bench.md, "Code shaped for
 * speed").
 */
#include "stats.h"
#include "../util/bsearch.h"
#include "../util/error.h"
#include "../util/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RBITS 11
#define RSIZE (1u << RBITS)
#define RMASK (RSIZE - 1)
#define SMALL 48 /* below this, insertion sort wins */

static int passes_for(uint64_t maxk)
{
	int p = 0;

	while (maxk) {
		p++;
		maxk >>= RBITS;
	}
	return p;
}

/* One LSD pass per RBITS-digit of (key - base) that is not constant.  All
 * digit histograms are counted in one read of the input (32-bit counts:
 * callers sort fewer than 2^32 elements), 48 KB on the stack -- no TLS, as
 * the library may be dlopen'ed by the Python collector, where big TLS
 * blocks fail. */
#define RPASSES ((64 + RBITS - 1) / RBITS)
#define RADIX_BODY(T, KEY)                                                      \
	do {                                                                    \
		uint32_t h[RPASSES][RSIZE];                                     \
		T *src = a, *dst = tmp, *sw;                                    \
		uint64_t mink = UINT64_MAX, maxk = 0, k;                        \
		size_t i, j;                                                    \
		uint32_t sum, c;                                                \
		int p, np;                                                      \
		if (n < SMALL) {                                                \
			for (i = 1; i < n; i++) {                               \
				T x = a[i];                                     \
				for (j = i; j > 0 && KEY(a[j - 1]) > KEY(x); j--) \
					a[j] = a[j - 1];                        \
				a[j] = x;                                       \
			}                                                       \
			return;                                                 \
		}                                                               \
		for (i = 0; i < n; i++) {                                       \
			k = KEY(a[i]);                                          \
			if (k > maxk)                                           \
				maxk = k;                                       \
			if (k < mink)                                           \
				mink = k;                                       \
		}                                                               \
		np = passes_for(maxk - mink);                                   \
		memset(h, 0, sizeof(h[0]) * (size_t)np);                        \
		for (i = 0; i < n; i++) {                                       \
			k = KEY(a[i]) - mink;                                   \
			for (p = 0; p < np; p++, k >>= RBITS)                   \
				h[p][k & RMASK]++;                              \
		}                                                               \
		for (p = 0; p < np; p++) {                                      \
			unsigned sh = (unsigned)(p * RBITS);                    \
			uint32_t *hp = h[p];                                    \
			if (hp[((KEY(src[0]) - mink) >> sh) & RMASK] == n)      \
				continue; /* constant digit: nothing moves */   \
			for (sum = 0, j = 0; j < RSIZE; j++) {                  \
				c = hp[j];                                      \
				hp[j] = sum;                                    \
				sum += c;                                       \
			}                                                       \
			for (i = 0; i < n; i++)                                 \
				dst[hp[((KEY(src[i]) - mink) >> sh) & RMASK]++] = src[i]; \
			sw = src;                                               \
			src = dst;                                              \
			dst = sw;                                               \
		}                                                               \
		if (src != a)                                                   \
			memcpy(a, src, n * sizeof(*a));                         \
	} while (0)

#define KV_KEY(x) ((x).k)
#define U64_KEY(x) (x)

void pt_sort_kv(pt_kv *a, pt_kv *tmp, size_t n)
{
	RADIX_BODY(pt_kv, KV_KEY);
}

void pt_sort_u64(uint64_t *a, uint64_t *tmp, size_t n)
{
	RADIX_BODY(uint64_t, U64_KEY);
}

#define PACKED_KEY(x) ((x) >> ib)

void pt_sort_packed(uint64_t *a, uint64_t *tmp, size_t n, unsigned ib)
{
	RADIX_BODY(uint64_t, PACKED_KEY);
}

int pt_order_init(pt_order *o, size_t n, uint64_t maxkey)
{
	memset(o, 0, sizeof(*o));
	o->n = n;
	if (n > UINT32_MAX)
		return PT_ENOMEM;
	o->ib = n > 1 ? pt_bits(n - 1) : 0;
	o->mask = o->ib ? (~0ULL >> (64 - o->ib)) : 0;
	if (pt_bits(maxkey) + o->ib <= 64) {
		o->packed = x_malloc(n * sizeof(*o->packed));
		o->ptmp = x_malloc(n * sizeof(*o->ptmp));
		if (!o->packed || !o->ptmp)
			goto oom;
	} else {
		o->kv = x_malloc(n * sizeof(*o->kv));
		o->kvtmp = x_malloc(n * sizeof(*o->kvtmp));
		if (!o->kv || !o->kvtmp)
			goto oom;
	}
	return PT_OK;
oom:
	pt_order_free(o);
	return PT_ENOMEM;
}

void pt_order_sort(pt_order *o)
{
	if (o->packed)
		pt_sort_packed(o->packed, o->ptmp, o->n, o->ib);
	else if (o->kv)
		pt_sort_kv(o->kv, o->kvtmp, o->n);
}

void pt_order_free(pt_order *o)
{
	x_free(o->packed);
	x_free(o->ptmp);
	x_free(o->kv);
	x_free(o->kvtmp);
	memset(o, 0, sizeof(*o));
}

/* numpy.lib.function_base._lerp: a + (b-a)*t, but b - (b-a)*(1-t) for
 * t >= 0.5 so that the result is exact at both ends. */
static double lerp(double a, double b, double t)
{
	double d = b - a;

	return t >= 0.5 ? b - d * (1 - t) : a + d * t;
}

double pt_stats_percentile(const double *x, size_t n, double p)
{
	double q, vi, g;
	size_t lo;

	if (n == 0)
		return 0;
	q = p / 100.0;
	vi = (double)(n - 1) * q;
	if (!(vi > 0))
		return x[0];
	if (vi >= (double)(n - 1))
		return x[n - 1];
	lo = (size_t)floor(vi);
	g = vi - (double)lo;
	return lerp(x[lo], x[lo + 1], g);
}

static inline void swapd(double *a, double *b)
{
	double t = *a;

	*a = *b;
	*b = t;
}

static int cmp_dbl(const void *pa, const void *pb)
{
	double x = *(const double *)pa, y = *(const double *)pb;

	return x < y ? -1 : x > y;
}

/* Hoare-style quickselect with a median-of-three pivot; the three-way
 * partition keeps runs of equal values (common: many workers at exactly the
 * same integer-µs duration, or 0) linear instead of quadratic.  Past
 * 2 log2 n + 8 rounds (input shaped against the pivot: durations come from
 * traces) the rest is sorted. */
double pt_stats_select(double *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1, rounds = 0, limit = 8 + 2 * (size_t)pt_bits(n);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2, lt, gt, i;
		double p;

		if (++rounds > limit) {
			qsort(v + lo, hi - lo + 1, sizeof(*v), cmp_dbl);
			break;
		}
		if (v[mid] < v[lo])
			swapd(&v[mid], &v[lo]);
		if (v[hi] < v[lo])
			swapd(&v[hi], &v[lo]);
		if (v[hi] < v[mid])
			swapd(&v[hi], &v[mid]);
		p = v[mid];
		/* Dutch flag: [lo,lt) < p, [lt,i) == p, (gt,hi] > p. */
		lt = lo;
		gt = hi;
		i = lo;
		while (i <= gt) {
			if (v[i] < p) {
				swapd(&v[i++], &v[lt++]);
			} else if (v[i] > p) {
				swapd(&v[i], &v[gt]);
				if (gt == 0)
					break;
				gt--;
			} else {
				i++;
			}
		}
		if (k < lt)
			hi = lt - 1;
		else if (k > gt)
			lo = gt + 1;
		else
			return p;
	}
	return v[k];
}

/* The median as pt_stats_percentile(sorted, n, 50) gives it, from a
 * selection instead of a sort: the MAD of every pattern's calls sorted
 * them all, 3% of summarize on the bench DLRM trace (docs/bench.md, "Code
 * shaped for speed"). */
double pt_stats_mad(const double *x, size_t n, double med, double *scratch)
{
	size_t i, lo;
	double a, b;

	if (n == 0)
		return 0;
	for (i = 0; i < n; i++)
		scratch[i] = fabs(x[i] - med);
	if (n == 1)
		return scratch[0];
	lo = (n - 1) / 2;
	a = pt_stats_select(scratch, n, lo);
	if (n % 2)
		return a;
	/* even: the next larger is the least of those after lo, which the
	 * selection left at or above it */
	b = scratch[lo + 1];
	for (i = lo + 2; i < n; i++)
		if (scratch[i] < b)
			b = scratch[i];
	return lerp(a, b, 0.5);
}

/* ---- robust statistics --------------------------------------------------
 * Every section of src/diagnose calls these: the inner loop when comparing
 * 10,000 workers, so they select instead of sorting (O(n) per function and
 * metric). */

/* k-th smallest of v plus nzero zeros in front. */
static double kth_zeros(double *v, size_t n, size_t nzero, size_t k)
{
	return k < nzero ? 0.0 : pt_stats_select(v, n, k - nzero);
}

double pt_robust_median(double *v, size_t n, size_t nzero)
{
	size_t N = n + nzero;
	double a, b;

	if (!N)
		return 0;
	b = kth_zeros(v, n, nzero, N / 2);
	if (N % 2)
		return b;
	a = kth_zeros(v, n, nzero, N / 2 - 1);
	return (a + b) / 2;
}

/* k-th smallest of the deviations d[0..n) plus nzero copies of dz, where
 * c of the d are < dz: sorted, the copies sit right after those c. */
static double kth_dev(double *d, size_t n, size_t nzero, double dz, size_t c, size_t k)
{
	if (k < c)
		return pt_stats_select(d, n, k);
	if (k < c + nzero)
		return dz;
	return pt_stats_select(d, n, k - nzero);
}

void pt_robust_stats(double *v, size_t n, size_t nzero, double *tmp, pt_robust *out)
{
	size_t N = n + nzero, i, c = 0;
	double med, a, b;

	out->n = N;
	out->med = out->mad = 0;
	if (!N)
		return;
	med = pt_robust_median(v, n, nzero);
	for (i = 0; i < n; i++) {
		tmp[i] = fabs(v[i] - med);
		c += tmp[i] < med;
	}
	/* Zeros deviate by |0 - med| = med (med >= 0 when zeros are implied). */
	b = kth_dev(tmp, n, nzero, med, c, N / 2);
	if (N % 2) {
		out->mad = b;
	} else {
		a = kth_dev(tmp, n, nzero, med, c, N / 2 - 1);
		out->mad = (a + b) / 2;
	}
	out->med = med;
}

double pt_robust_sorted_median(const double *s, size_t n, size_t nzero, size_t skip)
{
	size_t N = n + nzero - (skip != (size_t)-1), j;
	double v[2];
	int i;

	if (!N)
		return 0;
	for (i = 0; i < 2; i++) {
		j = i == 0 ? (N - 1) / 2 : N / 2;
		/* Index j of the reduced array -> index in zeros + s. */
		if (skip != (size_t)-1 && j >= nzero + skip)
			j++;
		v[i] = j < nzero ? 0.0 : s[j - nzero];
	}
	return (v[0] + v[1]) / 2;
}

size_t pt_robust_find(const double *s, size_t n, double x)
{
	size_t lo = pt_lower_dbl(s, n, x);

	return lo < n && s[lo] == x ? lo : (size_t)-1;
}

double pt_robust_dev(double x, double med, int dir)
{
	if (dir == PT_DIR_HIGH)
		return x - med;
	if (dir == PT_DIR_LOW)
		return med - x;
	return fabs(x - med);
}

double pt_robust_z(double dev, double med, double mad, double mad_floor)
{
	double d = mad, fl = mad_floor * fabs(med);

	if (d < fl)
		d = fl;
	if (d > 0)
		return PT_ROBUST_K * dev / d;
	return dev > 0 ? INFINITY : 0;
}

double pt_robust_rel(double dev, double med)
{
	if (med != 0)
		return dev / fabs(med);
	return dev > 0 ? INFINITY : 0;
}

int pt_robust_outlier(double x, const pt_robust *st, int dir, double z, double rel, double mad_floor)
{
	double dev = pt_robust_dev(x, st->med, dir);

	if (!st->n || !(dev > 0))
		return 0;
	return pt_robust_z(dev, st->med, st->mad, mad_floor) > z &&
	       pt_robust_rel(dev, st->med) > rel;
}

double pt_robust_limit(double med, double mad, double z, double rel, double mad_floor)
{
	double sig = (mad > mad_floor * med ? mad : mad_floor * med) / PT_ROBUST_K;

	return med + (rel * med > z * sig ? rel * med : z * sig);
}

void pt_robust_typical(const double *v, size_t n, const pt_typical_rule *r, unsigned char *high,
		       double *tmp, pt_typical *out)
{
	size_t i, k, nt, max_out = n ? (n - 1) / 2 : 0;
	pt_robust st;
	double lim, sig;

	memset(out, 0, sizeof(*out));
	memset(high, 0, n);
	if (!n)
		return;
	for (;;) {
		/* the median of the values still typical, and their spread
		 * below it: the median deviation of those at or under the
		 * median, which values far above it cannot widen */
		for (i = 0, nt = 0; i < n; i++)
			if (!high[i])
				tmp[nt++] = v[i];
		st.med = pt_robust_median(tmp, nt, 0);
		for (i = 0, k = 0; i < n; i++)
			if (!high[i] && v[i] <= st.med)
				tmp[k++] = st.med - v[i];
		st.mad = pt_robust_median(tmp, k, 0);
		out->med = st.med;
		out->mad = st.mad;
		sig = (st.mad > r->mad_floor * st.med ? st.mad : r->mad_floor * st.med) / PT_ROBUST_K;
		out->sigma = sig;
		lim = r->z * sig > r->rel * st.med ? r->z * sig : r->rel * st.med;
		if (lim > r->clear * st.med)
			lim = r->clear * st.med;
		out->limit = st.med + lim;
		if (out->nhigh >= max_out)
			break;
		/* the largest typical value above the limit goes out; the
		 * rest are judged again against the values left */
		for (i = 0, k = n; i < n; i++)
			if (!high[i] && v[i] > out->limit && (k == n || v[i] > v[k]))
				k = i;
		if (k == n)
			break;
		high[k] = 1;
		out->nhigh++;
	}
}
