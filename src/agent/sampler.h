/*
 * sampler.h - the node agent's hardware sampler: GPU (NVML, loaded with
 * dlopen), CPU, memory, pressure, NIC and InfiniBand/RoCE counters, sampled
 * on CLOCK_REALTIME ns (the traces' clock) while a trigger's window runs.
 *
 * Flow: the agent starts a sampler when it sees an active trigger, hands a
 * snapshot of the samples to the summary of every raw trace that arrives
 * (the join of link throughput to communication kernels), and writes the
 * whole record as "perftracker-hw" JSON (src/model/samples.h) beside the raw
 * traces, `hw_<host>.json`, when the window is over.  Nothing is needed at
 * build time: no NVML (libnvidia-ml.so.1 absent, a symbol missing or a call
 * failing) means that part is skipped and the reason is in the note.
 *
 * Two groups, each on its own thread (docs/hardware.md, "Sampler"):
 *   fast (interval_ns, default 1 ms): counters that resolve short intervals:
 *     NVLink TX/RX (NVML field values), NIC bytes, InfiniBand port data;
 *   slow (slow_interval_ns, default 100 ms): values the kernel or the driver
 *     only update that often: GPU/memory utilisation, SM clock, power,
 *     temperature, throttle reasons, PCIe TX/RX (NVML's own 20 ms window),
 *     CPU per core (USER_HZ ticks), MemAvailable, pressure avg10.
 * Rates from counters are stamped at the end of the interval they cover.
 *
 * Thread safety: pt_sampler_sample, _start, _stop, _take and _free from one
 * thread (the owner); pt_sampler_snapshot from any thread while it runs.
 */
#ifndef PT_SAMPLER_H
#define PT_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

#include "../model/samples.h"
#include "../util/error.h"

/* Environment variable naming the NVML library to load (tests point it at
 * a fake one); unset: PT_SAMPLER_NVML_DEFAULT. */
#define PT_SAMPLER_NVML_ENV "PERFTRACKER_NVML"
#define PT_SAMPLER_NVML_DEFAULT "libnvidia-ml.so.1"

enum { PT_SAMPLER_FAST = 1, PT_SAMPLER_SLOW = 2, PT_SAMPLER_ALL = 3 };

typedef struct pt_sampler_options {
	int64_t interval_ns;       /* fast group (1,000,000 = 1 ms); > 0 */
	int64_t slow_interval_ns;  /* slow group (100 ms); raised to interval_ns if below */
	const char *root;          /* where /proc and /sys are read ("/"); fixtures in tests */
	const char *nvml;          /* library to dlopen: NULL = $PERFTRACKER_NVML or
	                              "libnvidia-ml.so.1"; "" = do not use NVML */
	int linux_stats;           /* read /proc and /sys (1) */
	const char *host;          /* pt_samples.host ("" unknown) */
	size_t max_points;         /* per series; when a group reaches it, its
	                              samples are merged in pairs and its interval
	                              doubles (65536) */
	double cpu_budget;         /* share of one core a group's thread may use:
	                              when its samples (mean CPU time of 50) cost
	                              more, its interval doubles and the note says
	                              so (0.2; 0 = no limit) */
} pt_sampler_options;

typedef struct pt_sampler pt_sampler;

void pt_sampler_options_default(pt_sampler_options *o);

/* Discover what can be sampled (loads NVML, lists GPUs, network interfaces
 * and InfiniBand ports under root) and set up the series.  Never fails for
 * missing hardware: the note says what was skipped.  NULL with err filled
 * on allocation failure or bad options (PT_EINVAL). */
pt_sampler *pt_sampler_new(const pt_sampler_options *o, pt_error *err);

/* Take one sample of the groups in `groups` (PT_SAMPLER_FAST/SLOW) stamped
 * t_ns (CLOCK_REALTIME ns, increasing).  For tests and for callers with
 * their own loop; not while the threads run.  PT_OK, PT_EINVAL (running,
 * time going backwards) or PT_ENOMEM. */
int pt_sampler_sample(pt_sampler *s, int64_t t_ns, unsigned groups);

/* Start the two sampling threads (the first samples are taken at once).
 * PT_OK, PT_EINVAL when already running, PT_EIO when no thread starts. */
int pt_sampler_start(pt_sampler *s, pt_error *err);
/* Stop and join the threads (no-op when not running). */
void pt_sampler_stop(pt_sampler *s);
int pt_sampler_running(const pt_sampler *s);

/* Copy of everything sampled so far into out (initialised here; free with
 * pt_samples_free).  Series with no sample are left out.  Safe while the
 * threads run.  PT_OK or PT_ENOMEM. */
int pt_sampler_snapshot(pt_sampler *s, pt_samples *out);

/* The note so far ("" when nothing was skipped): "; "-separated reasons,
 * e.g. "nvml: cannot load 'libnvidia-ml.so.1': ...".  Valid until the next
 * call on s. */
const char *pt_sampler_note(pt_sampler *s);

/* What was found: GPUs through NVML (-1: NVML not loaded), interfaces,
 * InfiniBand ports, CPU lines of /proc/stat (cores + the "cpu" total). */
void pt_sampler_inventory(const pt_sampler *s, int *gpus, int *nics, int *ib_ports, int *cpus);

/* Measured cost of the samples taken so far, per group: mean wall-clock
 * ns per sample (0 none); the achievable interval is at least this. */
void pt_sampler_cost(const pt_sampler *s, double *fast_ns, double *slow_ns);

void pt_sampler_free(pt_sampler *s);  /* stops first; NULL is a no-op */

/* A compact copy of h for charts: only samples inside [t0, t1) (t1 <= t0:
 * everything), each series reduced to at most max_points points by bucket
 * means over equal time buckets (a bucket's time is the mean time of its
 * samples); per-core CPU series (cpu_util with device >= 0) are left out
 * unless keep_cores.  out is initialised here.  PT_OK or PT_ENOMEM. */
int pt_sampler_compact(const pt_samples *h, int64_t t0, int64_t t1, size_t max_points,
		       int keep_cores, pt_samples *out);

/* The timelines a worker's summary carries for PerfDisplay (docs/hardware.md,
 * "Timelines"): pt_sampler_compact of [start - m, end + m), m = 10% of the
 * window but at least 250 ms, at most max_points per series; GPU series
 * (device >= 0, except cpu_util) only for GPU gpu (-1: every GPU); no
 * per-core CPU.  out is initialised here.  PT_OK or PT_ENOMEM. */
int pt_sampler_worker_series(const pt_samples *h, int64_t start_ns, int64_t end_ns, int gpu,
			     size_t max_points, pt_samples *out);

#endif
