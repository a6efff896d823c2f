/*
 * summary_format.c - the member tables of the summary JSON (see
 * summary_format.h and docs/summary.md): one row per member, in the order
 * the writer writes them.
 *
 * Adding a scalar member: a field in pt_summary / pt_pattern (summary.h),
 * one row here (with the version that adds it; anything newer than
 * PT_SUMMARY_VERSION_MIN must not be required, or older files stop
 * loading), and a line in docs/summary.md.
 */
#include "summary_format.h"
#include "summary.h"
#include "../report/keys.h"

#include <stddef.h>

#define N(s) PT_JTOK_NAME(s)
#define ROWS(a) (int)(sizeof(a) / sizeof(a[0]))

/* name, type, when, flags, required, version, offset, lo, hi */
#define S(f) offsetof(pt_summary, f)
#define ID PT_SF_IDENTITY

static const pt_sf_member top[] = {
	{ N("format"), PT_SF_FORMAT, PT_SF_ALWAYS, ID, 0, 1, 0, 0, 0 },
	{ N("version"), PT_SF_VERSION, PT_SF_ALWAYS, ID, 0, 1, 0, 0, 0 },
	{ N("worker"), PT_SF_STR, PT_SF_ALWAYS, ID, 1, 1, S(worker), 0, 0 },
	{ N("file"), PT_SF_STR, PT_SF_ALWAYS, ID, 2, 1, S(file), 0, 0 },
	{ N("host"), PT_SF_STR, PT_SF_ALWAYS, ID, 0, 1, S(host), 0, 0 },
	{ N("rank"), PT_SF_I64, PT_SF_ALWAYS, ID, 3, 1, S(rank), -1, 0 },
	{ N("pid"), PT_SF_I64, PT_SF_ALWAYS, ID, 4, 1, S(pid), -1, 0 },
	{ N("error"), PT_SF_STR, PT_SF_IF_SET, ID, 0, 1, S(error), 0, 0 },
	{ N("world_size"), PT_SF_I64, PT_SF_ALWAYS, 0, 5, 1, S(world_size), -1, 0 },
	{ N("backend"), PT_SF_STR, PT_SF_ALWAYS, 0, 0, 1, S(backend), 0, 0 },
	{ N("device"), PT_SF_STR, PT_SF_ALWAYS, 0, 0, 1, S(device), 0, 0 },
	{ N("torch"), PT_SF_STR, PT_SF_IF_SET, 0, 0, 4, S(torch), 0, 0 },
	{ N("warning"), PT_SF_STR_NULL, PT_SF_ALWAYS, 0, 0, 1, S(warning), 0, 0 },
	{ N("nwarnings"), PT_SF_U64, PT_SF_ALWAYS, 0, 0, 1, S(nwarnings), 0, 0 },
	{ N("truncated"), PT_SF_BOOL, PT_SF_ALWAYS, 0, 0, 1, S(truncated), 0, 0 },
	{ N("digest_of"), PT_SF_U64, PT_SF_IF_POSITIVE, 0, 0, 5, S(digest_of), 0, 0 },
	{ N("window"), PT_SF_WINDOW, PT_SF_ALWAYS, 0, 8, 1, 0, 0, 0 },
	{ N("steps"), PT_SF_STEPS, PT_SF_ALWAYS, 0, 10, 1, 0, 0, 0 },
	{ N("gpu_util"), PT_SF_DBL_IN, PT_SF_ALWAYS, 0, 6, 1, S(gpu_util), 0, 1 + 1e-6 },
	{ N("gpu_compute_util"), PT_SF_DBL, PT_SF_IF_NONNEG, 0, 0, 1, S(gpu_compute_util), 0, 0 },
	{ N(PT_KEY_CLASS_MS), PT_SF_CLASS_MS, PT_SF_ALWAYS, 0, 9, 1, 0, 0, 0 },
	{ N("nevents"), PT_SF_U64, PT_SF_ALWAYS, 0, 7, 1, S(nevents), 0, 0 },
	{ N("gpu_breakdown"), PT_SF_BREAKDOWN, PT_SF_IF_SET, 0, 0, 1, S(breakdown), 0, 0 },
	{ N("hw_source"), PT_SF_STR_NULL, PT_SF_IF_SET, 0, 0, 1, S(hw_source), 0, 0 },
	{ N("hw_gpu"), PT_SF_HW_GPU, PT_SF_IF_PREV, 0, 0, 1, S(hw_gpu), 0, 0 },
	{ N("hw_series"), PT_SF_HW_SERIES, PT_SF_IF_SET, 0, 0, 1, S(hw_series), 0, 0 },
	{ N("collectives"), PT_SF_COLLECTIVES, PT_SF_IF_SET, 0, 0, 2, S(coll_chans), 0, 0 },
	{ N(PT_KEY_CRITICAL_PATH_LC), PT_SF_CRITPATH, PT_SF_IF_SET, 0, 0, 3, S(cpath), 0, 0 },
	{ N("timeline"), PT_SF_TIMELINE, PT_SF_IF_SET, 0, 0, 4, S(tl), 0, 0 },
	{ N("p2p"), PT_SF_P2P, PT_SF_IF_SET, 0, 0, 5, S(p2p), 0, 0 },
	{ N("patterns"), PT_SF_PATTERNS, PT_SF_ALWAYS, 0, 11, 1, 0, 0, 0 },
};

static const pt_sf_member window[] = {
	{ N(PT_KEY_START_US), PT_SF_DBL, PT_SF_ALWAYS, 0, 1, 1, S(window_start_us), 0, 0 },
	{ N("ms"), PT_SF_DBL_POS, PT_SF_ALWAYS, 0, 2, 1, S(window_ms), 0, PT_SF_MAX_MS },
	{ N("from_steps"), PT_SF_BOOL, PT_SF_ALWAYS, 0, 3, 1, S(window_from_steps), 0, 0 },
};

#define T(f) offsetof(pt_sf_step, f)
static const pt_sf_member step[] = {
	{ N("number"), PT_SF_I64, PT_SF_ALWAYS, 0, 1, 1, T(number), -1e18, 0 },
	{ N("ms"), PT_SF_DBL_IN, PT_SF_ALWAYS, 0, 2, 1, T(ms), 0, PT_SF_MAX_MS },
};

#define P(f) offsetof(pt_pattern, f)
#define MS(f, r) { N(#f), PT_SF_DBL_IN, PT_SF_ALWAYS, 0, r, 1, P(f), 0, PT_SF_MAX_MS }
/* The spread of one worker's calls: read from the suspects' full summaries
 * only (docs/summary.md "Digests"). */
#define MSF(f, r) { N(#f), PT_SF_DBL_IN, PT_SF_ALWAYS, PT_SF_FULL_ONLY, r, 1, P(f), 0, PT_SF_MAX_MS }
#define FO PT_SF_FULL_ONLY
static const pt_sf_member pattern[] = {
	{ N("key"), PT_SF_KEY, PT_SF_ALWAYS, 0, 1, 1, P(key), 0, 0 },
	{ N("class"), PT_SF_CLASS, PT_SF_ALWAYS, 0, 2, 1, P(cls), 0, 0 },
	{ N("kind"), PT_SF_KIND, PT_SF_ALWAYS, 0, 3, 1, P(kind), 0, 0 },
	{ N("count"), PT_SF_U64, PT_SF_ALWAYS, 0, 4, 1, P(count), 0, 0 },
	MS(total_ms, 5), MS(median_ms, 6), MSF(p10_ms, 7), MSF(p90_ms, 8), MSF(mad_ms, 9),
	{ N("bottleneck"), PT_SF_DBL_IN, PT_SF_ALWAYS, 0, 10, 1, P(bottleneck), 0, 1 + 1e-6 },
	{ N("exec_ratio"), PT_SF_DBL, PT_SF_ALWAYS, 0, 11, 1, P(exec_ratio), 0, 0 },
	/* communication extras only when known, to keep files small */
	{ N("bytes"), PT_SF_DBL, PT_SF_IF_POSITIVE, 0, 0, 1, P(bytes), 0, 0 },
	{ N("algbw_gbps"), PT_SF_DBL, PT_SF_IF_POSITIVE, 0, 0, 1, P(algbw_gbps), 0, 0 },
	{ N("busbw_gbps"), PT_SF_DBL, PT_SF_IF_POSITIVE, 0, 0, 1, P(busbw_gbps), 0, 0 },
	{ N("group"), PT_SF_U32, PT_SF_IF_POSITIVE, 0, 0, 1, P(group), 0, 0 },
	{ N("role"), PT_SF_ROLE, PT_SF_ALWAYS, 0, 0, 1, P(role), 0, 0 },
	/* launch efficiency: the medians go with eff_n */
	{ N("eff_n"), PT_SF_U64, PT_SF_IF_POSITIVE, FO, 0, 1, P(eff_n), 0, 0 },
	{ N("occupancy_pct"), PT_SF_DBL, PT_SF_IF_PREV, FO, 0, 1, P(occupancy_pct), 0, 0 },
	{ N("blocks_per_sm"), PT_SF_DBL, PT_SF_IF_PREV, FO, 0, 1, P(blocks_per_sm), 0, 0 },
	{ N("registers"), PT_SF_DBL, PT_SF_IF_PREV, FO, 0, 1, P(registers), 0, 0 },
	{ N("shared_mem"), PT_SF_DBL, PT_SF_IF_PREV, FO, 0, 1, P(shared_mem), 0, 0 },
	{ N(PT_KEY_STEP_MS), PT_SF_STEP_MS, PT_SF_IF_SET, FO, 0, 1, P(step_ms), 0, 0 },
	{ N("hw"), PT_SF_HW, PT_SF_IF_SET, FO, 0, 1, P(hw), 0, 0 },
};

#define L(f) offsetof(pt_hw_link, f)
static const pt_sf_member hw_link[] = {
	{ N("group"), PT_SF_CHARS, PT_SF_ALWAYS, 0, 1, 1, L(group), 0, 0 },
	{ N("avg_tput_pct"), PT_SF_DBL, PT_SF_ALWAYS, 0, 2, 1, L(avg_pct), 0, 0 },
	{ N("std_tput_pct"), PT_SF_DBL, PT_SF_ALWAYS, 0, 3, 1, L(std_pct), 0, 0 },
	{ N("peak_tput_pct"), PT_SF_DBL, PT_SF_ALWAYS, 0, 0, 1, L(peak_pct), 0, 0 },
	{ N("samples"), PT_SF_U64, PT_SF_ALWAYS, 0, 0, 1, L(samples), 0, 0 },
	{ N("kernels"), PT_SF_U64, PT_SF_ALWAYS, 0, 0, 1, L(kernels), 0, 0 },
};

/* Unknown (-1) values are left out. */
#define G(f) offsetof(pt_hw_gpu, f)
#define GD(f) { N(#f), PT_SF_DBL, PT_SF_IF_NONNEG, 0, 0, 1, G(f), 0, 0 }
static const pt_sf_member hw_gpu[] = {
	{ N("samples"), PT_SF_U64, PT_SF_ALWAYS, 0, 0, 1, G(samples), 0, 0 },
	GD(sm_active_pct), GD(gpu_util_pct), GD(sm_clock_mhz), GD(sm_clock_max_mhz),
	GD(throttle_frac),
	{ N("throttle_reasons"), PT_SF_U64, PT_SF_IF_PREV, 0, 0, 1, G(throttle_reasons), 0, 0 },
	GD(temperature_c), GD(power_w),
};

const pt_sf_table pt_sf_top = { top, ROWS(top), 1, "" };
const pt_sf_table pt_sf_window = { window, ROWS(window), 2, "" };
const pt_sf_table pt_sf_step_tab = { step, ROWS(step), 3, "" };
const pt_sf_table pt_sf_pattern = { pattern, ROWS(pattern), 3, "" };
/* A digest's pattern as an array (docs/summary.md "Digests"): these rows'
 * values in this order; the members are the pattern's, one level deeper. */
const pt_sf_table pt_sf_pattern_row = { pattern, ROWS(pattern), 4, "" };
const uint8_t pt_sf_digest_row[PT_SF_DIGEST_ROW_N] = { 0, 1, 2, 3, 4, 5, 9, 10 };
const pt_sf_table pt_sf_hw_link = { hw_link, ROWS(hw_link), 5, "hw " };
const pt_sf_table pt_sf_hw_gpu = { hw_gpu, ROWS(hw_gpu), 2, "hw_gpu " };
