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

#endif
