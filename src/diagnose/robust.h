/*
 * robust.h - the robust statistics behind differential detection: k-th
 * smallest by quickselect (O(n)), median and MAD of a set of values plus
 * implicit zeros (workers lacking a function count 0 for ratio metrics
 * without materialising the zeros), leave-one-out statistics for few
 * workers, and the outlier test of docs/diagnose.md.
 * Pure functions over caller-owned arrays; thread-safe.
 */
#ifndef PT_ROBUST_H
#define PT_ROBUST_H

#include <stddef.h>

#include "diagnose.h"

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

/* The statistical part of the rule: z > o->z and rel > o->rel.  The caller
 * then checks the impact floor with the exact median of the others. */
int pt_robust_outlier(double x, const pt_robust *st, int dir, const pt_diag_options *o);

#endif
