/*
 * robust.c - median/MAD with implicit zeros (by pt_stats_select), leave-one-out
 * medians and the outlier test (see robust.h).  Used by every section of
 * src/diagnose; this is the inner loop when comparing 10,000 workers, so it
 * selects instead of sorting (O(n) per function and metric).
 */
#include "robust.h"
#include "../analysis/stats.h"
#include "../util/bsearch.h"

#include <math.h>

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

int pt_robust_outlier(double x, const pt_robust *st, int dir, const pt_diag_options *o)
{
	double dev = pt_robust_dev(x, st->med, dir);

	if (!st->n || !(dev > 0))
		return 0;
	return pt_robust_z(dev, st->med, st->mad, o->mad_floor) > o->z &&
	       pt_robust_rel(dev, st->med) > o->rel;
}
