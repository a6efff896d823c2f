/*
 * clock.c - monotonic and wall clock reads (clock.h): every duration,
 * deadline and timestamp in the tool and the collector comes from here, so
 * that which clock a measurement uses is decided in one file.  Only
 * clock_gettime(2), which is async-signal-safe: the collector compiles this
 * file in (python/ext_sources.txt) and its watchdog reads the clock.
 */
#include "clock.h"


static int64_t read_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* From the timespec rather than the ns integer: the callers' former
 * expression, so their values are unchanged to the last bit. */
static double read_s(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double pt_clock_mono(void)
{
	return read_s(CLOCK_MONOTONIC);
}

int64_t pt_clock_mono_ns(void)
{
	return read_ns(CLOCK_MONOTONIC);
}

double pt_clock_wall(void)
{
	return read_s(CLOCK_REALTIME);
}

int64_t pt_clock_wall_ns(void)
{
	return read_ns(CLOCK_REALTIME);
}

double pt_clock_thread_cpu(void)
{
	return read_s(CLOCK_THREAD_CPUTIME_ID);
}

int64_t pt_clock_thread_cpu_ns(void)
{
	return read_ns(CLOCK_THREAD_CPUTIME_ID);
}

double pt_clock_process_cpu(void)
{
	return read_s(CLOCK_PROCESS_CPUTIME_ID);
}

void pt_clock_mono_deadline(struct timespec *ts, double after_s)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += (time_t)after_s;
	ts->tv_nsec += (long)((after_s - (double)(time_t)after_s) * 1e9);
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

char *pt_clock_utc_hms(double t, char *out, size_t cap)
{
	time_t s = (time_t)t;
	struct tm tm;

	if (cap)
		out[0] = 0;
	if (t > 0 && cap && gmtime_r(&s, &tm))
		strftime(out, cap, "%H:%M:%S UTC", &tm);
	return out;
}
