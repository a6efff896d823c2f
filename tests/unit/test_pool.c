/*
 * test_pool.c - unit tests for the parallel for (src/util/pool.c): every
 * index runs exactly once whatever the thread count, work is really spread
 * over threads, and results written per index match a serial run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include <cmocka.h>

#include "util/pool.h"

typedef struct counts {
	atomic_int *hits;
	uint64_t *out;
} counts;

static uint64_t work(size_t i)
{
	uint64_t v = i * 0x9e3779b97f4a7c15ULL;

	for (int k = 0; k < 200; k++)
		v = (v ^ (v >> 29)) * 0xbf58476d1ce4e5b9ULL;
	return v;
}

static void count_one(void *ctx, size_t i)
{
	counts *c = ctx;

	atomic_fetch_add(&c->hits[i], 1);
	c->out[i] = work(i);
}

static void test_every_index_once(void **state)
{
	static const long jobs[] = { -1, 0, 1, 2, 3, 8, 64 };
	static const size_t ns[] = { 0, 1, 2, 7, 1000 };

	(void)state;
	for (size_t a = 0; a < sizeof(jobs) / sizeof(jobs[0]); a++) {
		for (size_t b = 0; b < sizeof(ns) / sizeof(ns[0]); b++) {
			size_t n = ns[b];
			counts c = { calloc(n + 1, sizeof(atomic_int)), calloc(n + 1, 8) };

			assert_non_null(c.hits);
			assert_non_null(c.out);
			pt_pool_for(n, jobs[a], count_one, &c);
			for (size_t i = 0; i < n; i++) {
				assert_int_equal(atomic_load(&c.hits[i]), 1);
				/* The same result as computing it serially. */
				assert_true(c.out[i] == work(i));
			}
			/* Nothing ran past the range. */
			assert_int_equal(atomic_load(&c.hits[n]), 0);
			free(c.hits);
			free(c.out);
		}
	}
}

/* With 4 jobs and 4 items that each wait until all 4 have started, the
 * items must run on 4 threads at once (a serial pool would never get past
 * the first: it gives up after 10 s and the test fails). */
typedef struct barrier_ctx {
	atomic_int started;
	atomic_int ok;
	pthread_t who[4];
} barrier_ctx;

static void wait_all(void *ctx, size_t i)
{
	barrier_ctx *b = ctx;
	struct timespec ts = { 0, 1000000L };

	b->who[i] = pthread_self();
	atomic_fetch_add(&b->started, 1);
	for (int k = 0; k < 10000 && atomic_load(&b->started) < 4; k++)
		nanosleep(&ts, NULL);
	if (atomic_load(&b->started) == 4)
		atomic_fetch_add(&b->ok, 1);
}

static void test_runs_in_parallel(void **state)
{
	barrier_ctx b;

	(void)state;
	memset(&b, 0, sizeof(b));
	pt_pool_for(4, 4, wait_all, &b);
	assert_int_equal(atomic_load(&b.ok), 4);
	/* The caller is one of the four threads. */
	{
		int mine = 0;

		for (int i = 0; i < 4; i++)
			mine += pthread_equal(b.who[i], pthread_self()) != 0;
		assert_int_equal(mine, 1);
	}
}

/* One job: everything on the calling thread, in index order. */
static void record_order(void *ctx, size_t i)
{
	size_t *order = ctx;

	order[order[0] + 1] = i;
	order[0]++;
}

static void test_one_job_serial(void **state)
{
	size_t order[11] = { 0 };

	(void)state;
	pt_pool_for(10, 1, record_order, order);
	assert_int_equal(order[0], 10);
	for (size_t i = 0; i < 10; i++)
		assert_int_equal(order[i + 1], i);
	assert_true(pt_pool_cpus() >= 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_index_once),
		cmocka_unit_test(test_runs_in_parallel),
		cmocka_unit_test(test_one_job_serial),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
