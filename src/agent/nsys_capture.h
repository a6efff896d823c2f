/*
 * nsys_capture.h - recording GPU metrics with Nsight Systems: the node
 * agent runs `nsys profile` (GPU metrics only, system-wide) for a trigger's
 * window, then `nsys export --type sqlite`, and reads the export with the
 * trace reader (src/trace/nsys.h, pt_nsys_read_samples).  Capture lives
 * with the agent, the reader with the other trace readers.  The commands
 * are run with src/util/spawn.h.  All functions are thread-safe.
 */
#ifndef PT_AGENT_NSYS_CAPTURE_H
#define PT_AGENT_NSYS_CAPTURE_H

#include <stddef.h>

#include "../util/error.h"

/* GPU metrics sampling rates `nsys profile --gpu-metrics-frequency` takes
 * (and the default of --nsys-gpu-metrics: 10 kHz, 100 us). */
#define PT_NSYS_HZ_DEFAULT 10000
#define PT_NSYS_HZ_MIN 10
#define PT_NSYS_HZ_MAX 200000
/* A rate in Hz from text (a whole decimal number in [PT_NSYS_HZ_MIN,
 * PT_NSYS_HZ_MAX]) into *hz; 0, or -1 when it is not one. */
int pt_nsys_parse_hz(const char *s, int *hz);

/* Capture (docs/hardware.md "10 kHz capture"): the argv of the nsys
 * command that samples GPU metrics of every GPU for seconds at hz into
 * out_base.nsys-rep while nothing else is traced, and the argv that
 * exports it to out_base.sqlite.  argv arrays get at most cap-1 entries and
 * a NULL; strings point into buf (bufcap bytes).  Return the number of
 * arguments, or -1 when they do not fit or an argument is invalid. */
int pt_nsys_capture_argv(const char *nsys, const char *out_base, double seconds, int hz,
			 char **argv, size_t cap, char *buf, size_t bufcap);
int pt_nsys_export_argv(const char *nsys, const char *out_base, char **argv, size_t cap,
			char *buf, size_t bufcap);
/* Find an executable named name on PATH (as execvp would); copies its path
 * into out and returns 1, else 0. */
int pt_nsys_find(const char *name, char *out, size_t cap);

/* Run the capture, then the export (the two argv above), each with its
 * stdout and stderr appended to out_base.log, waiting for both; on success
 * out_base.sqlite holds the GPU metrics (read them with
 * pt_nsys_read_samples).  PT_OK, or PT_EIO with err naming the step and
 * the exit status (e.g. "nsys profile exited with status 1; see
 * out_base.log").  Blocks for about `seconds`; call it off any hot path. */
int pt_nsys_capture_run(const char *nsys, const char *out_base, double seconds, int hz,
			pt_error *err);
/* The same, cancellable from another thread: each nsys runs in its own
 * process group, polled every 20 ms; once *cancel (read atomically) is
 * non-zero the group gets SIGTERM (SIGKILL 2 s later), the export is not
 * run, and the result is PT_EIO "nsys profile cancelled" (or "export").
 * cancel NULL is pt_nsys_capture_run.  Used by the node agent
 * (src/agent/agent.c), which must be able to exit during a capture. */
int pt_nsys_capture_run_cancel(const char *nsys, const char *out_base, double seconds, int hz,
			       const int *cancel, pt_error *err);

#endif
