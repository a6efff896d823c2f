/*
 * pool.c - the parallel for of pool.h: workers take the next index from a
 * shared atomic counter until the range is used up, so a slow input does
 * not hold up the indices behind it (traces vary from KB to GB).
 */
#include "pool.h"
#include "xalloc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

typedef struct pool {
	size_t n;
	atomic_size_t next;
	pt_pool_fn *fn;
	void *ctx;
} pool;

static void *worker(void *arg)
{
	pool *p = arg;
	size_t i;

	while ((i = atomic_fetch_add(&p->next, 1)) < p->n)
		p->fn(p->ctx, i);
	return NULL;
}

long pt_pool_cpus(void)
{
	long c = sysconf(_SC_NPROCESSORS_ONLN);

	return c > 0 ? c : 1;
}

void pt_pool_for(size_t n, long jobs, pt_pool_fn *fn, void *ctx)
{
	pool p;
	pthread_t *th = NULL;
	size_t nth, started = 0, k;

	if (jobs <= 0)
		jobs = pt_pool_cpus();
	nth = (size_t)jobs < n ? (size_t)jobs : n;
	p.n = n;
	atomic_init(&p.next, 0);
	p.fn = fn;
	p.ctx = ctx;
	if (nth > 1)
		th = x_malloc((nth - 1) * sizeof(*th));
	/* The calling thread is one of the workers; a thread that cannot be
	 * started (or no array for them) just leaves more items to it. */
	for (k = 0; th && k + 1 < nth; k++)
		if (!pthread_create(&th[started], NULL, worker, &p))
			started++;
	worker(&p);
	for (k = 0; k < started; k++)
		pthread_join(th[k], NULL);
	x_free(th);
}
