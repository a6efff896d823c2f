/*
 * test_bsearch.c - unit tests for the one binary search
 * (src/util/bsearch.h): lower and upper bounds over int64_t and double
 * arrays at the edges (empty, before all, after all, runs of equal keys)
 * and the PT_BSEARCH macro over an array of structs and a sub-range.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "util/bsearch.h"

static const int64_t A[] = { 1, 3, 3, 3, 7, 9 };
#define NA (sizeof(A) / sizeof(A[0]))

/* Upper bounds, as callers write them: the macro with a[I] <= x. */
static size_t upper_i64(const int64_t *a, size_t n, int64_t x)
{
	size_t lo = 0, hi = n;

	PT_BSEARCH(lo, hi, I, a[I] <= x);
	return lo;
}

static size_t upper_dbl(const double *a, size_t n, double x)
{
	size_t lo = 0, hi = n;

	PT_BSEARCH(lo, hi, I, a[I] <= x);
	return lo;
}

static void test_i64(void **state)
{
	(void)state;
	assert_int_equal(pt_lower_i64(A, 0, 5), 0);
	assert_int_equal(upper_i64(A, 0, 5), 0);
	assert_int_equal(pt_lower_i64(A, NA, 0), 0);
	assert_int_equal(upper_i64(A, NA, 0), 0);
	assert_int_equal(pt_lower_i64(A, NA, 1), 0);
	assert_int_equal(upper_i64(A, NA, 1), 1);
	assert_int_equal(pt_lower_i64(A, NA, 3), 1);
	assert_int_equal(upper_i64(A, NA, 3), 4);
	assert_int_equal(pt_lower_i64(A, NA, 4), 4);
	assert_int_equal(upper_i64(A, NA, 4), 4);
	assert_int_equal(pt_lower_i64(A, NA, 9), 5);
	assert_int_equal(upper_i64(A, NA, 9), 6);
	assert_int_equal(pt_lower_i64(A, NA, 10), 6);
	assert_int_equal(pt_lower_i64(A, NA, INT64_MIN), 0);
	assert_int_equal(upper_i64(A, NA, INT64_MAX), 6);
	assert_int_equal(pt_lower_i64(A, 1, 3), 1);
}

static void test_dbl(void **state)
{
	static const double D[] = { -1.5, 0.0, 0.0, 2.25 };

	(void)state;
	assert_int_equal(pt_lower_dbl(D, 4, -2), 0);
	assert_int_equal(pt_lower_dbl(D, 4, -1.5), 0);
	assert_int_equal(upper_dbl(D, 4, -1.5), 1);
	assert_int_equal(pt_lower_dbl(D, 4, -0.0), 1); /* -0 == 0 */
	assert_int_equal(upper_dbl(D, 4, 0.0), 3);
	assert_int_equal(pt_lower_dbl(D, 4, 2.25), 3);
	assert_int_equal(upper_dbl(D, 4, 2.25), 4);
	assert_int_equal(pt_lower_dbl(D, 4, INFINITY), 4);
	assert_int_equal(pt_lower_dbl(D, 4, NAN), 0);
	assert_int_equal(upper_dbl(D, 4, NAN), 0);
	assert_int_equal(pt_lower_dbl(D, 0, 1), 0);
}

struct rec {
	uint32_t key;
	const char *name;
};

static void test_macro(void **state)
{
	static const struct rec R[] = { { 2, "a" }, { 4, "b" }, { 4, "c" }, { 8, "d" } };
	static const uint32_t ix[] = { 3, 0, 2 }; /* keys 8, 2, 4: not sorted by index */
	size_t lo = 0, hi = 4, evals = 0;

	(void)state;
	PT_BSEARCH(lo, hi, i, R[i].key < 4);
	assert_int_equal(lo, 1);
	assert_int_equal(hi, 1);
	lo = 0, hi = 4;
	PT_BSEARCH(lo, hi, i, R[i].key <= 4);
	assert_int_equal(lo, 3);
	/* a sub-range: the search stays in [lo, hi) */
	lo = 2, hi = 4;
	PT_BSEARCH(lo, hi, i, (evals++, R[i].key < 3));
	assert_int_equal(lo, 2);
	assert_true(evals <= 2);
	/* none before: hi as given; an empty range is left alone */
	lo = 0, hi = 4;
	PT_BSEARCH(lo, hi, i, R[i].key < 100);
	assert_int_equal(lo, 4);
	lo = hi = 2;
	PT_BSEARCH(lo, hi, i, (evals = 99, 1));
	assert_int_equal(lo, 2);
	assert_int_not_equal(evals, 99);
	/* through an index array sorted by the key it leads to */
	{
		static const uint32_t srt[] = { 1, 2, 0 }; /* ix[srt[]] -> 2, 4, 8 */
		lo = 0, hi = 3;
		PT_BSEARCH(lo, hi, i, R[ix[srt[i]]].key < 8);
		assert_int_equal(lo, 2);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_i64),
		cmocka_unit_test(test_dbl),
		cmocka_unit_test(test_macro),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
