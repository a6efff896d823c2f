/*
 * bsearch.h - the one binary search of PerfTracker: the partition point of
 * a sorted range, as a statement macro for arrays of structs, index
 * arrays and keys read through the caller's own accessors (model/,
 * analysis/critpath.c, analysis/patterns.c, diagnose/, report/timeline.c),
 * and typed lower bounds over plain int64_t and double arrays (an upper
 * bound is the macro with a[I] <= k).
 * Header-only and inline: the critical path and the trace readers search
 * in their inner loops.  Pure: thread-safe.
 */
#ifndef PT_BSEARCH_H
#define PT_BSEARCH_H

#include <stddef.h>
#include <stdint.h>

/* Narrows [lo, hi) to its partition point for BEFORE, an expression of
 * the size_t index I (declared by the macro) that is true for a prefix of
 * the range and false for the rest: on exit lo == hi == the first index
 * where BEFORE is false (hi as given when none).  lo and hi are size_t
 * lvalues the macro updates; BEFORE is evaluated about log2(hi - lo) times,
 * only at indexes in [lo, hi).  Lower bound of key k: BEFORE is a[I] < k;
 * upper bound: a[I] <= k.  The midpoint is (lo + hi) / 2, one add cheaper
 * than lo + (hi - lo) / 2 and the same index: lo + hi cannot wrap for
 * indexes into memory. */
#define PT_BSEARCH(lo, hi, I, BEFORE)                       \
	do {                                                \
		while ((lo) < (hi)) {                       \
			size_t I = ((lo) + (hi)) / 2;        \
			if (BEFORE)                         \
				(lo) = I + 1;               \
			else                                \
				(hi) = I;                   \
		}                                           \
	} while (0)

/* First i in a[0..n) with a[i] >= x (n when none); a ascending. */
static inline size_t pt_lower_i64(const int64_t *a, size_t n, int64_t x)
{
	size_t lo = 0, hi = n;

	PT_BSEARCH(lo, hi, i, a[i] < x);
	return lo;
}

/* First i in a[0..n) with a[i] >= x (n when none; NaN x: 0); a ascending,
 * no NaN. */
static inline size_t pt_lower_dbl(const double *a, size_t n, double x)
{
	size_t lo = 0, hi = n;

	PT_BSEARCH(lo, hi, i, a[i] < x);
	return lo;
}

#endif
