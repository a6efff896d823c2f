/*
 * breakdown.h - where one worker's time goes on its GPU: the window split
 * into compute, communication not overlapped with compute, memory
 * operations and idle; the idle time split by what the CPU was doing
 * (blocking syncs, the data loader, kernel launches, other host work,
 * nothing recorded) with the CPU functions it was in; kernel launch
 * overhead (share of kernels under 10 us, launches per ms).
 *
 * Flow: patterns.c (items sorted, frames nested) -> breakdown.c ->
 * pt_summary.breakdown -> "gpu_breakdown" in the summary JSON ->
 * src/diagnose/breakdown.c (findings, "workers", display).
 * Definitions: docs/summary.md "GPU breakdown".  Thread-safe for distinct
 * objects.
 */
#ifndef PT_BREAKDOWN_H
#define PT_BREAKDOWN_H

#include <stddef.h>
#include <stdint.h>

#include "../model/store.h"
#include "../util/error.h"
#include "../util/strbuf.h"

#define PT_BD_MAX_FUNCS 5
#define PT_BD_SMALL_KERNEL_NS 10000  /* "short kernel": under 10 us */

/* Causes of GPU idle time, in the priority order that makes them
 * disjoint: a blocking sync beats the data loader beats a kernel launch
 * beats other host work; "none" is idle time with no CPU activity
 * recorded on the launching thread. */
enum { PT_IDLE_SYNC, PT_IDLE_DATALOADER, PT_IDLE_LAUNCH, PT_IDLE_HOST, PT_IDLE_NONE,
       PT_IDLE_COUNT };

/* A CPU function (call stack key) and the GPU idle time spent inside it
 * (inclusive: its callees count). */
typedef struct pt_bd_func {
	char *key;       /* stack "a|b|c" (owned) */
	double idle_ms;
} pt_bd_func;

typedef struct pt_breakdown {
	double window_ms;
	/* The GPU's time, split with priority compute > communication >
	 * memory > idle (unions over all streams of the worker); sums to
	 * window_ms. */
	double compute_ms, comm_ms, memory_ms, idle_ms;
	double comm_total_ms;   /* union of communication kernels, overlap included */
	double idle_ms_by[PT_IDLE_COUNT];  /* sums to idle_ms */
	/* Blocking sync calls by name (cudaStreamSynchronize ...) inside the
	 * idle time: the largest one. */
	char *sync_top;         /* owned, NULL none */
	double sync_top_ms;
	/* CPU functions of the launching thread during GPU idle time, the
	 * most specific first (docs/summary.md); nfuncs <= PT_BD_MAX_FUNCS. */
	pt_bd_func funcs[PT_BD_MAX_FUNCS];
	size_t nfuncs;
	/* Launch overhead. */
	uint64_t nkernels;      /* kernels (compute and communication) in the window */
	uint64_t nsmall;        /* of them shorter than 10 us */
	uint64_t nlaunches;     /* kernel launch calls (cudaLaunchKernel, ...) in the window */
	double small_kernel_ms; /* total time of the short kernels */
} pt_breakdown;

void pt_breakdown_free(pt_breakdown *b);  /* the members; NULL is a no-op */

/* The JSON object written as "gpu_breakdown" (no trailing comma). */
void pt_breakdown_write(const pt_breakdown *b, pt_sb *out);
/* Parse such an object from buf[0..len) into *b (zeroed first).  PT_OK, or
 * PT_EFORMAT/PT_EPARSE/PT_ENOMEM with err filled (offset relative to buf). */
int pt_breakdown_parse(const char *buf, size_t len, pt_breakdown *b, pt_error *err);

/* ---- building (patterns.c) --------------------------------------------- */

typedef struct pt_bd_builder pt_bd_builder;

/* A builder for the window [w0, w1] of st.  gpu_ev: the GPU events taking
 * part in the window (kernels, communication kernels, memcpy/memset), by
 * start.  main_lane: the CPU thread that launches kernels (UINT32_MAX
 * none).  NULL when out of memory. */
pt_bd_builder *pt_bd_new(const pt_store *st, int64_t w0, int64_t w1, const uint32_t *gpu_ev,
			 size_t ngpu, uint32_t main_lane);
/* GPU idle time inside [s, e) (O(log n), O(1) for calls in time order:
 * it keeps a search hint, so b is written). */
int64_t pt_bd_idle_in(pt_bd_builder *b, int64_t s, int64_t e);
/* A CPU frame of lane on the nesting stack: node its stack node, depth 0
 * for a thread's outermost frame, dl_outer 1 for a data-loader frame with
 * no data-loader ancestor.  Adds its idle overlap to node_idle[node] (main
 * lane only; node_idle grows with pt_bd_node_grow). */
void pt_bd_frame(pt_bd_builder *b, uint32_t lane, uint32_t node, int depth, int dl_outer,
		 int64_t s, int64_t e);
/* Room for nodes [0, n) in node_idle; -1 out of memory. */
int pt_bd_node_grow(pt_bd_builder *b, size_t n);
/* Is a frame named name[0..n) the data loader's? */
int pt_bd_is_dataloader(const char *name, size_t n);
/* Finish: runtime calls (sync / launch), kernel counts, and the CPU
 * functions (parent[] and key() give the stack nodes' tree and key
 * strings).  Fills *out; PT_OK or PT_ENOMEM. */
int pt_bd_finish(pt_bd_builder *b, const uint32_t *parent, size_t nnodes,
		 char *(*key)(const void *ctx, uint32_t node), const void *ctx, pt_breakdown *out);
void pt_bd_free(pt_bd_builder *b);  /* NULL is a no-op */

/* Lane that launched the most kernels (runtime launch calls), else the CPU
 * lane with the most events; UINT32_MAX when there is no CPU lane. */
uint32_t pt_bd_main_lane(const pt_store *st);

#endif
