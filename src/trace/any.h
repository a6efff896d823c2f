/*
 * any.h - format dispatch for raw traces: the first stage reads a Kineto
 * Chrome-trace JSON (plain or gzip) or an Nsight Systems SQLite export,
 * told apart by content (the 16-byte "SQLite format 3" header), never by
 * the file name.  Used by pt_summary_from_trace and `summarize --hw`.
 */
#ifndef PT_TRACE_ANY_H
#define PT_TRACE_ANY_H

#include "../model/samples.h"
#include "../model/store.h"
#include "../util/error.h"
#include "../util/api.h"

PT_API_BEGIN

typedef enum { PT_TRACE_KINETO = 0, PT_TRACE_NSYS = 1 } pt_trace_format;

/* Which reader path needs (PT_TRACE_NSYS when it starts with the SQLite
 * header; PT_TRACE_KINETO otherwise, including unreadable files, whose
 * error the reader then reports). */
int pt_trace_format_of(const char *path);

/* Read path into st (initialised by the caller).  hw (initialised by the
 * caller, or NULL) receives the hardware samples the trace itself carries:
 * an nsys export's GPU_METRICS; Kineto traces carry none.  Errors as the
 * readers' (pt_kineto_read_file, pt_nsys_read_file). */
int pt_trace_read_any(const char *path, pt_store *st, pt_samples *hw, pt_error *err);

/* Hardware-sample files (docs/hardware.md "Where the files go"): a file
 * name hw_*.json or *.hw.json (perftracker-hw JSON) or hw_*.sqlite (an nsys
 * export of GPU metrics).  These are never traces. */
int pt_trace_is_samples_name(const char *base);

/* Read one samples file into h (initialised here; freed on error): an nsys
 * export (by content) gives its GPU_METRICS, anything else is read as
 * perftracker-hw JSON. */
int pt_trace_read_samples(const char *path, pt_samples *h, pt_error *err);

/* Every samples file directly in dir (not recursive), in name order, into
 * a new array *out of *n (free each with pt_samples_free, then the array).
 * Unreadable files are skipped: *nbad counts them and bad (if not NULL)
 * gets the first one's error.  PT_OK, or PT_EIO when dir cannot be read /
 * PT_ENOMEM, with err filled. */
int pt_trace_samples_dir(const char *dir, pt_samples **out, size_t *n, size_t *nbad,
			 pt_error *bad, pt_error *err);

PT_API_END

#endif
