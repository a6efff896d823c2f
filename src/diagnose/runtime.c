/*
 * runtime.c - the "CUDA Runtime" section: runtime and driver calls
 * (cudaLaunchKernel, cudaStreamSynchronize, ...) under the fixed-threshold
 * + differential rule of memory.c, with the average execution ratio
 * (overlap included) the seed report also shows.
 */
#include "internal.h"
#include "sections.h"

#include <string.h>

static void explain_runtime(dctx *c, dfinding *f, const char *key, int kind, double value,
			    double others)
{
	const char *why;

	if (strstr(key, "Launch"))
		why = "kernel launches are slower on this worker (CPU contention, a throttled "
		      "CPU or a busy driver)";
	else if (strstr(key, "Synchronize") || strstr(key, "EventQuery") ||
		 strstr(key, "WaitEvent"))
		why = "this worker's CPU waits longer for its GPU (its GPU work takes longer "
		      "or is queued behind other work)";
	else if (strstr(key, "Malloc") || strstr(key, "Free") || strstr(key, "HostAlloc"))
		why = "more memory allocation calls on this worker (caching allocator misses "
		      "or fragmentation)";
	else if (strstr(key, "Memcpy") || strstr(key, "Memset"))
		why = "copies issued from this worker's CPU take longer (synchronous copies or "
		      "pageable memory)";
	else
		why = "this CUDA runtime call takes longer on this worker";
	df_explain_share(c, f, key, NULL, why);
}

void diag_runtime(dctx *c)
{
	diag_fixed_section(c, DC_RUNTIME, PT_C_RUNTIME, c->o->runtime_threshold, 1,
			   explain_runtime);
}
