/*
 * clock.h - the one place PerfTracker reads the clocks: monotonic time for
 * durations, deadlines and rates (util/spawn.c, trace/nsys.c, agent/,
 * display/server.c, cli/, diagnose/pipeline.c) and wall time for
 * timestamps that go into files (control/, agent/sampler.c, the Python
 * collector's tracer), and CPU time for what a step costs.  Thin wrappers over clock_gettime(2): thread-safe and
 * async-signal-safe (POSIX lists clock_gettime as such), so the collector's
 * watchdog and signal paths may call them.  They cannot fail on Linux with
 * these clock ids; nothing is allocated.
 */
#ifndef PT_CLOCK_H
#define PT_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Seconds on CLOCK_MONOTONIC (since an unspecified start: only differences
 * mean anything).  Doubles hold ns exactly for 104 days of uptime; past
 * that the s forms round to a few ns. */
double pt_clock_mono(void);

/* The same clock in integer nanoseconds. */
int64_t pt_clock_mono_ns(void);

/* Seconds since the epoch on CLOCK_REALTIME (may step back under NTP: not
 * for durations). */
double pt_clock_wall(void);

/* The same clock in integer nanoseconds since the epoch. */
int64_t pt_clock_wall_ns(void);

/* CPU seconds of the calling thread (CLOCK_THREAD_CPUTIME_ID), and the
 * same in nanoseconds: what a measurement costs on a shared machine. */
double pt_clock_thread_cpu(void);
int64_t pt_clock_thread_cpu_ns(void);

/* CPU seconds of the whole process (CLOCK_PROCESS_CPUTIME_ID). */
double pt_clock_process_cpu(void);

/* *ts = CLOCK_MONOTONIC now + after_s (>= 0), normalised: the deadline of
 * a pthread_cond_timedwait on a condition variable whose clock attribute
 * is CLOCK_MONOTONIC. */
void pt_clock_mono_deadline(struct timespec *ts, double after_s);

/* "HH:MM:SS UTC" of t (seconds since the epoch) into out (cap bytes), the
 * time of day the watch's "since" is given in (report, status, the
 * auto-profile's reason); "" when t <= 0.  Returns out. */
char *pt_clock_utc_hms(double t, char *out, size_t cap);

#endif
