/*
 * nsys_capture.c - running Nsight Systems for the node agent (see
 * nsys_capture.h): the argv of `nsys profile` and `nsys export`, finding
 * nsys on PATH, and running both with their output in one log file.
 */
#include "nsys_capture.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/spawn.h"

/* Append a printf-formatted argument to argv/buf. */
static int arg(char **argv, size_t cap, size_t *n, char *buf, size_t bufcap, size_t *used,
	       const char *fmt, ...) __attribute__((format(printf, 7, 8)));

static int arg(char **argv, size_t cap, size_t *n, char *buf, size_t bufcap, size_t *used,
	       const char *fmt, ...)
{
	va_list ap;
	int w;

	if (*n + 1 >= cap || *used >= bufcap)
		return -1;
	va_start(ap, fmt);
	w = vsnprintf(buf + *used, bufcap - *used, fmt, ap);
	va_end(ap);
	if (w < 0 || (size_t)w >= bufcap - *used)
		return -1;
	argv[(*n)++] = buf + *used;
	argv[*n] = NULL;
	*used += (size_t)w + 1;
	return 0;
}

int pt_nsys_parse_hz(const char *s, int *hz)
{
	char *end;
	long v;

	if (!s || !(*s >= '0' && *s <= '9'))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < PT_NSYS_HZ_MIN || v > PT_NSYS_HZ_MAX)
		return -1;
	*hz = (int)v;
	return 0;
}

int pt_nsys_capture_argv(const char *nsys, const char *out_base, double seconds, int hz,
			 char **argv, size_t cap, char *buf, size_t bufcap)
{
	size_t n = 0, used = 0;

	if (!nsys || !*nsys || !out_base || !*out_base || !(seconds > 0) || seconds > 86400 ||
	    hz < PT_NSYS_HZ_MIN || hz > PT_NSYS_HZ_MAX || !argv || cap < 2 || !buf)
		return -1;
	/* GPU metrics alone, system-wide, while `sleep` runs: no process is
	 * traced, so this can run beside a training job that was not started
	 * under nsys.  --gpu-metrics-frequency is in Hz (10 kHz = 100 us). */
	if (arg(argv, cap, &n, buf, bufcap, &used, "%s", nsys) ||
	    arg(argv, cap, &n, buf, bufcap, &used, "profile") ||
	    arg(argv, cap, &n, buf, bufcap, &used, "--trace=none") ||
	    arg(argv, cap, &n, buf, bufcap, &used, "--sample=none") ||
	    arg(argv, cap, &n, buf, bufcap, &used, "--cpuctxsw=none") ||
	    arg(argv, cap, &n, buf, bufcap, &used, "--gpu-metrics-devices=all") ||
	    arg(argv, cap, &n, buf, bufcap, &used, "--gpu-metrics-frequency=%d", hz) ||
	    arg(argv, cap, &n, buf, bufcap, &used, "--force-overwrite=true") ||
	    arg(argv, cap, &n, buf, bufcap, &used, "--output=%s", out_base) ||
	    arg(argv, cap, &n, buf, bufcap, &used, "sleep") ||
	    arg(argv, cap, &n, buf, bufcap, &used, "%.3f", seconds))
		return -1;
	return (int)n;
}

int pt_nsys_export_argv(const char *nsys, const char *out_base, char **argv, size_t cap,
			char *buf, size_t bufcap)
{
	size_t n = 0, used = 0;

	if (!nsys || !*nsys || !out_base || !*out_base || !argv || cap < 2 || !buf)
		return -1;
	if (arg(argv, cap, &n, buf, bufcap, &used, "%s", nsys) ||
	    arg(argv, cap, &n, buf, bufcap, &used, "export") ||
	    arg(argv, cap, &n, buf, bufcap, &used, "--type=sqlite") ||
	    arg(argv, cap, &n, buf, bufcap, &used, "--force-overwrite=true") ||
	    arg(argv, cap, &n, buf, bufcap, &used, "--output=%s.sqlite", out_base) ||
	    arg(argv, cap, &n, buf, bufcap, &used, "%s.nsys-rep", out_base))
		return -1;
	return (int)n;
}

int pt_nsys_find(const char *name, char *out, size_t cap)
{
	const char *path = getenv("PATH"), *p, *e;

	if (!name || !*name || !out || !cap)
		return 0;
	if (strchr(name, '/')) {
		if (access(name, X_OK) || (size_t)snprintf(out, cap, "%s", name) >= cap)
			return 0;
		return 1;
	}
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path;; p = e + 1) {
		struct stat stt;
		size_t dl;

		e = strchr(p, ':');
		if (!e)
			e = p + strlen(p);
		dl = (size_t)(e - p);
		if ((size_t)snprintf(out, cap, "%.*s%s%s", (int)dl, p, dl ? "/" : "./", name) < cap &&
		    !stat(out, &stt) && S_ISREG(stt.st_mode) && !access(out, X_OK))
			return 1;
		if (!*e)
			break;
	}
	out[0] = 0;
	return 0;
}

/* Run argv with stdout and stderr appended to log and stdin from
 * /dev/null; its exit status (128 + signal when killed), or -1 with errno
 * when it cannot start.  With cancel the child leads its own process group
 * (nsys starts the `sleep` and helpers of its own) and is polled every
 * 20 ms: once *cancel is set the group gets SIGTERM, and SIGKILL 2 s later;
 * *cancelled says so. */
static int run_logged(char **argv, const char *log, const int *cancel, int *cancelled)
{
	pt_spawn_opts o = PT_SPAWN_OPTS_INIT;
	pt_spawn_status st;

	o.in_path = "/dev/null";
	o.out_path = log;
	o.err_fd = PT_SPAWN_TO_OUT;
	o.own_group = cancel != NULL;
	o.cancel = cancel;
	*cancelled = 0;
	if (pt_spawn_run(argv, &o, &st, NULL))
		return -1;
	*cancelled = st.cancelled;
	return pt_spawn_code(&st);
}

int pt_nsys_capture_run(const char *nsys, const char *out_base, double seconds, int hz,
			pt_error *err)
{
	return pt_nsys_capture_run_cancel(nsys, out_base, seconds, hz, NULL, err);
}

int pt_nsys_capture_run_cancel(const char *nsys, const char *out_base, double seconds, int hz,
			       const int *cancel, pt_error *err)
{
	char *argv[24], buf[8192], log[4096];
	int st, cancelled = 0;

	pt_error_subject(err, out_base);
	if ((size_t)snprintf(log, sizeof(log), "%s.log", out_base ? out_base : "") >= sizeof(log))
		return pt_error_set(err, PT_EINVAL, -1, "path too long");
	if (pt_nsys_capture_argv(nsys, out_base, seconds, hz, argv, 24, buf, sizeof(buf)) < 0)
		return pt_error_set(err, PT_EINVAL, -1, "bad capture arguments (%.3f s at %d Hz)",
				    seconds, hz);
	st = run_logged(argv, log, cancel, &cancelled);
	if (cancelled)
		return pt_error_set(err, PT_EIO, -1, "%s profile cancelled", nsys);
	if (st)
		return st < 0 ? pt_error_set(err, PT_EIO, -1, "%s profile could not start: %s", nsys,
					      strerror(errno))
			      : pt_error_set(err, PT_EIO, -1, "%s profile exited with status %d; see %s",
					      nsys, st, log);
	if (cancel && __atomic_load_n(cancel, __ATOMIC_ACQUIRE))
		return pt_error_set(err, PT_EIO, -1, "%s profile cancelled", nsys);
	if (pt_nsys_export_argv(nsys, out_base, argv, 24, buf, sizeof(buf)) < 0)
		return pt_error_set(err, PT_EINVAL, -1, "path too long");
	st = run_logged(argv, log, cancel, &cancelled);
	if (cancelled)
		return pt_error_set(err, PT_EIO, -1, "%s export cancelled", nsys);
	if (st)
		return st < 0 ? pt_error_set(err, PT_EIO, -1, "%s export could not start: %s", nsys,
					      strerror(errno))
			      : pt_error_set(err, PT_EIO, -1, "%s export exited with status %d; see %s",
					      nsys, st, log);
	return PT_OK;
}
