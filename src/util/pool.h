/*
 * pool.h - a parallel for over an index range: the one thread pool of the
 * tree, used where independent inputs are read or processed at once (the
 * CLI reading traces and summaries, the node agent summarising the traces
 * a trigger collected).  Results stay deterministic because each index
 * writes only its own slot of the caller's arrays; the order in which
 * indices run is not defined.
 */
#ifndef PT_POOL_H
#define PT_POOL_H

#include <stddef.h>

/* The work for one index; ctx is the caller's. */
typedef void pt_pool_fn(void *ctx, size_t i);

/* Call fn(ctx, i) once for every i in [0, n), on up to jobs threads (jobs
 * <= 0: the number of online CPUs; never more threads than n).  The calling
 * thread is one of the workers; a thread that cannot be started leaves its
 * share to the others, so every index runs even when none can be started.
 * Returns when all calls have returned.  fn must be safe to run
 * concurrently with itself for distinct i.  n 0 calls nothing.  Reentrant
 * (no shared state). */
void pt_pool_for(size_t n, long jobs, pt_pool_fn *fn, void *ctx);

/* The number of online CPUs (at least 1): what jobs <= 0 means. */
long pt_pool_cpus(void);

#endif
