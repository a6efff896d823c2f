/*
 * hwjoin.h - joining hardware samples to what ran (docs/hardware.md "The
 * join"): for each communication kernel, the link samples of its GPU inside
 * its execution give the seed report's Communication features (avg
 * throughput and throughput std, grouped "<link> <algorithm> <send|recv>");
 * for the compute kernels, SM activity, clocks and throttle reasons.
 *
 * Flow: pt_store + pt_samples --pt_hwjoin_apply--> the optional hw fields
 * of a pt_summary (called by pt_summary_build when options carry samples).
 * Internal to the library.  Thread-safe for distinct summaries.
 */
#ifndef PT_HWJOIN_H
#define PT_HWJOIN_H

#include <stddef.h>

#include "analysis.h"
#include "summary.h"
#include "../model/samples.h"

/* A link carried a kernel's traffic when its mean throughput in one
 * direction reached this share of capacity (%); diagnose shows a link group
 * only when the median worker's link did. */
#define PT_HW_LINK_MIN_PCT 1.0

/* Fill s->patterns[].hw, s->hw_gpu and s->hw_source from the samples in
 * hw[0..nhw) (files whose host differs from s->host are skipped when both
 * are known).  st and w are what s was built from.  PT_OK or PT_ENOMEM
 * (err filled); s is left without hw fields on error. */
int pt_hwjoin_apply(const pt_store *st, const pt_window *w, pt_summary *s,
		    const pt_samples *const *hw, size_t nhw, pt_error *err);

/* The algorithm word of a communication kernel key, as the seed's groups
 * use it: "ring", "tree", "collnet", "collnetdirect", "collnetchain",
 * "nvls", "nvlstree", "pat"; "sendrecv" for point-to-point kernels
 * (SendRecv, Send, Recv); else the collective in lower case ("allreduce");
 * else "nccl".  Writes into buf (cap >= 16) and returns it. */
const char *pt_hwjoin_algo(const char *key, char *buf, size_t cap);
/* The algorithm word named by one '_'-separated token of key[0..n) (the
 * words above, compared squashed), or NULL; shared with the
 * Communication section's groups (src/diagnose/comm.c). */
const char *pt_hwjoin_algo_token(const char *key, size_t n);

/* Statistics of the samples of s inside [t0, t1) with values scaled to %
 * of cap (cap <= 0: raw values): count, mean, population std, maximum.
 * NaN samples are skipped.  Returns the count. */
size_t pt_hwjoin_window(const pt_series *s, int64_t t0, int64_t t1, double cap, double *mean,
			double *std, double *max);

#endif
