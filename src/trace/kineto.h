/*
 * kineto.h - reader for PyTorch profiler (Kineto) Chrome-trace JSON.
 *
 * First stage of the flow: raw trace -> pt_store.  Streams the input in
 * fixed-size chunks (plain or gzip, detected by magic bytes), so memory is
 * bounded by the events kept, not the file size.  Accepts the object form
 * ({"traceEvents": [...], ...header...}) and the bare-array form ([...]),
 * 2021 category names (Kernel, Runtime, Operator, Memcpy, Memset) and the
 * current ones, baseTimeNanoseconds or absolute µs, fractional µs.
 *
 * A file cut off mid-write is read up to the last complete event and the
 * store is marked truncated (a warning, PT_OK).  Malformed input that leaves
 * nothing usable returns PT_EPARSE/PT_EFORMAT with the byte offset.
 * Thread-safe for distinct stores.
 */
#ifndef PT_KINETO_H
#define PT_KINETO_H

#include <stddef.h>

#include "../model/store.h"
#include "../util/error.h"
#include "../util/api.h"

PT_API_BEGIN

/* Read the trace at path into st (initialised by the caller with
 * pt_store_init).  Returns PT_OK (possibly with warnings in st) or an error
 * code with err filled (subject = path). */
int pt_kineto_read_file(const char *path, pt_store *st, pt_error *err);

/* Same, from memory (plain JSON or gzip bytes).  Used by the fuzzer and tests. */
int pt_kineto_read_mem(const void *buf, size_t len, pt_store *st, pt_error *err);

/* Same, with the first read buffer of chunk bytes instead of 1 MiB (it
 * still grows for larger objects).  Tests and the fuzzer use tiny chunks
 * to drive every refill path; the result must not depend on chunk. */
int pt_kineto_read_mem_chunked(const void *buf, size_t len, size_t chunk, pt_store *st,
			       pt_error *err);

PT_API_END

#endif
