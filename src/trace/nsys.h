/*
 * nsys.h - reader for Nsight Systems SQLite exports (`nsys export --type
 * sqlite`), the second trace format of the first stage: .sqlite -> pt_store
 * (+ pt_samples from GPU_METRICS) -> src/analysis, exactly as a Kineto trace.
 *
 * Kernels, memcpy/memset, CUDA runtime calls and NVTX ranges become events
 * with the Kineto reader's names and kinds (docs/hardware.md, "Nsight
 * Systems input"); times are converted from the session clock to absolute
 * ns with TARGET_INFO_SESSION_START_TIME.  GPU_METRICS rows, named through
 * TARGET_INFO_GPU_METRICS, become our metric series (% of peak).
 * Old (2.x, 2022) and new (3.x, 2024) export schemas are both read.
 * Thread-safe for distinct stores (each call opens its own connection).
 */
#ifndef PT_NSYS_H
#define PT_NSYS_H

#include <stddef.h>

#include "../model/samples.h"
#include "../model/store.h"
#include "../util/error.h"

/* The 16-byte header every SQLite 3 database starts with. */
#define PT_SQLITE_MAGIC "SQLite format 3"  /* plus its NUL: 16 bytes */
#define PT_SQLITE_MAGIC_LEN 16

/* 1 when buf[0..len) starts with the SQLite 3 header. */
int pt_nsys_is_sqlite(const void *buf, size_t len);

/* Read the export at path into st (initialised by the caller with
 * pt_store_init) and, when hw is not NULL (initialised by the caller with
 * pt_samples_init), its GPU metric samples (source "nsys"; no table, no
 * series).  Returns PT_OK (possibly with warnings in st), or PT_EIO (cannot
 * open), PT_EFORMAT (not SQLite, not an nsys export, a required column
 * missing or of the wrong type; the message names the table, the column
 * and the rowid), PT_EPARSE (a corrupt database), PT_ENOMEM, with err
 * filled (subject = path, offset -1). */
int pt_nsys_read_file(const char *path, pt_store *st, pt_samples *hw, pt_error *err);

/* Only the GPU metrics (for `--hw FILE.sqlite` and the capture path). */
int pt_nsys_read_samples(const char *path, pt_samples *hw, pt_error *err);

/* Our metric for an nsys GPU metric name ("SMs Active [Throughput %]" ->
 * "sm_active"), or NULL when we do not use it; *unit (if not NULL) gets "%"
 * or "MHz".  Several nsys metrics may map to one of ours (DRAM read and
 * write, NVLink requests and responses): their values at one timestamp are
 * added up. */
const char *pt_nsys_metric_name(const char *nsys_name, const char **unit);

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
