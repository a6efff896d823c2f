/*
 * samples.h - hardware samples: time series of GPU, link, CPU, memory and
 * NIC metrics on the same clock as the traces (absolute ns, CLOCK_REALTIME).
 *
 * Flow: the node agent's sampler (src/agent) or an Nsight Systems export's
 * GPU_METRICS table (src/trace) fills a pt_samples; it is written beside the
 * raw traces as "perftracker-hw" JSON (pt_samples_write_file) and read back
 * by `summarize --hw`, which joins the samples to what ran (e.g. the link
 * throughput inside each communication kernel).  A pt_samples owns all its
 * memory.  Not thread-safe; distinct objects may be used from distinct threads.
 *
 * Metric names (unit): gpu_util (%), mem_util (%), sm_clock (MHz),
 * power (W), temperature (C), throttle (NVML reason bitmask), sm_active (%),
 * dram_bw (%), nvlink_tx / nvlink_rx / pcie_tx / pcie_rx (B/s, with `max` =
 * link capacity in B/s when known), cpu_util (%, device = core, -1 = all),
 * mem_available (B), psi_cpu / psi_memory / psi_io (some avg10 %),
 * nic_tx / nic_rx (B/s, label = interface), ib_tx / ib_rx (B/s, label =
 * "<device>:<port>").  device is the GPU index for GPU metrics, else -1
 * unless noted.
 */
#ifndef PT_SAMPLES_H
#define PT_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#include "../util/error.h"
#include "../util/api.h"

PT_API_BEGIN

#define PT_SAMPLES_FORMAT "perftracker-hw"
#define PT_SAMPLES_VERSION 1

typedef struct pt_series {
	char *name;      /* metric name, see above */
	char *label;     /* extra identity (interface, ib port), "" if none */
	char *unit;      /* "%", "B/s", "MHz", ... */
	int device;      /* GPU index / CPU core, -1 if not per device */
	double max;      /* capacity for throughput metrics (same unit), 0 unknown */
	size_t n, cap;
	int64_t *t_ns;   /* sample times, absolute ns, increasing */
	double *v;       /* values */
} pt_series;

typedef struct pt_samples {
	char *host;      /* node name, "" unknown */
	char *source;    /* "nvml+proc", "nsys", ... */
	char *note;      /* why something was skipped (e.g. "nvml: libnvidia-ml.so.1 not found"), "" none */
	int64_t interval_ns;  /* nominal sampling interval, 0 unknown */
	pt_series *s;
	size_t n, cap;
} pt_samples;

/* Initialise empty (strings ""); PT_OK or PT_ENOMEM. */
int pt_samples_init(pt_samples *h);
/* Free everything (NULL / zeroed is a no-op). */
void pt_samples_free(pt_samples *h);

/* Series for (name, device, label), created if absent (label NULL = "").
 * Returns NULL on allocation failure.  The pointer is valid until the next
 * call that creates a series. */
pt_series *pt_samples_series(pt_samples *h, const char *name, int device, const char *label,
			     const char *unit, double max);
/* Append one sample; PT_OK, PT_ENOMEM, or PT_EINVAL if t_ns goes backwards. */
int pt_samples_add(pt_series *s, int64_t t_ns, double v);
/* First series matching name/device/label (label NULL = any), or NULL. */
const pt_series *pt_samples_find(const pt_samples *h, const char *name, int device,
				 const char *label);

/* Statistics of a series over [t0, t1): mean and population std of the
 * samples whose time falls inside (as % of max when as_percent and max > 0).
 * Returns the number of samples used (0: mean/std set to 0). */
size_t pt_samples_window_stats(const pt_series *s, int64_t t0, int64_t t1, int as_percent,
			       double *mean, double *std);

/* Write / read the "perftracker-hw" JSON (writing: pt_file_write_atomic,
 * not fsync'ed, the sampler rewrites it every flush: src/util/file.h). */
int pt_samples_write_file(const pt_samples *h, const char *path, pt_error *err);
int pt_samples_read_file(const char *path, pt_samples *h, pt_error *err);

/* Additions (docs/hardware.md describes the file).
 * pt_samples_read_file initialises h itself (no pt_samples_init needed) and
 * frees it on error; errors: PT_EIO, PT_EPARSE (offset set), PT_EFORMAT
 * (offset -1, message names the member), PT_ENOMEM. */
struct pt_sb;
struct pt_json;
/* Replace one of h's strings (host/source/note) with a copy of value (NULL = "");
 * PT_OK or PT_ENOMEM (the old string is kept). */
int pt_samples_set_str(char **field, const char *value);
/* Index of the first sample with time >= t (s->n if none). */
size_t pt_samples_lower_bound(const pt_series *s, int64_t t);
/* Append the compact JSON (one line, no newline; the file adds one);
 * PT_OK or PT_ENOMEM (sb->oom).  Also embedded in summaries ("hw_series"). */
int pt_samples_to_json(const pt_samples *h, struct pt_sb *sb);
/* Fill an initialised h from a parsed document; on error h may hold part of
 * the series (free it).  Validation errors have offset -1 and name the series. */
int pt_samples_from_json(const struct pt_json *root, pt_samples *h, pt_error *err);
/* Initialise h and parse buf[0..len) into it; on error h is freed. (Fuzz target.) */
int pt_samples_parse(const char *buf, size_t len, pt_samples *h, pt_error *err);

PT_API_END

#endif
