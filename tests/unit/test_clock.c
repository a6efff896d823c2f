/*
 * test_clock.c - unit tests for the clock reads (src/util/clock.c): the
 * monotonic clock never goes back and its seconds and nanoseconds agree;
 * timed-wait deadlines are normalised and on the same clock; the wall
 * clock is CLOCK_REALTIME (compared with time(2)).  No bound on
 * elapsed time: only order and agreement.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "util/clock.h"

static void test_mono(void **state)
{
	double a, b;
	int64_t na, nb;
	int i;

	(void)state;
	a = pt_clock_mono();
	na = pt_clock_mono_ns();
	for (i = 0; i < 1000; i++) {
		b = pt_clock_mono();
		nb = pt_clock_mono_ns();
		assert_true(b >= a);
		assert_true(nb >= na);
		a = b;
		na = nb;
	}
	/* the same clock: ns read after s is not before it */
	b = pt_clock_mono();
	nb = pt_clock_mono_ns();
	assert_true((double)nb * 1e-9 >= b - 1e-6);
}

static void test_deadline(void **state)
{
	static const double after[] = { 0, 0.25, 1, 1.999999999, 7.5 };
	struct timespec ts;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(after) / sizeof(after[0]); i++) {
		double before = pt_clock_mono();

		pt_clock_mono_deadline(&ts, after[i]);
		/* normalised, and not before now + after (same clock) */
		assert_true(ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000L);
		assert_true((double)ts.tv_sec + (double)ts.tv_nsec * 1e-9 >= before + after[i] - 1e-6);
	}
}

static void test_wall(void **state)
{
	time_t t0 = time(NULL);
	double w = pt_clock_wall();
	int64_t wn = pt_clock_wall_ns();
	time_t t1 = time(NULL);

	(void)state;
	/* time(2) truncates the same clock to seconds */
	assert_true(w >= (double)t0);
	assert_true(w < (double)t1 + 2); /* time(2) may read a coarser clock */
	assert_true(wn / 1000000000 >= (int64_t)t0);
	assert_true(wn / 1000000000 <= (int64_t)t1 + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mono),
		cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_wall),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
