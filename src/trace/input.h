/*
 * input.h - the byte source under the trace readers: a file or a memory
 * buffer, plain or gzip (detected by the magic bytes 1f 8b), delivered as
 * the uncompressed stream in caller-sized pieces.
 *
 * Flow: raw trace file --pt_input--> chunks --> src/trace/kineto.c parser.
 * gzip is inflated with zlib's streaming API, so memory stays at one
 * compressed read buffer (256 KiB) plus what the caller asks for.
 * Concatenated gzip members are read as one stream, as gzip(1) does.
 * Not thread-safe; one pt_input per reader.
 */
#ifndef PT_INPUT_H
#define PT_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../util/error.h"

typedef struct pt_input pt_input;

/* Open path for reading.  Returns NULL with err filled (PT_EIO, subject =
 * path) when it cannot be opened or is a directory. */
pt_input *pt_input_open_file(const char *path, pt_error *err);
/* Read from buf[0..len) (not copied: it must outlive the pt_input). */
pt_input *pt_input_open_mem(const void *buf, size_t len, pt_error *err);
void pt_input_close(pt_input *in); /* NULL is a no-op */

/* Read up to cap bytes of the uncompressed stream into dst.  Returns the
 * number of bytes (0 at the end of the stream) or -1 with err filled:
 * PT_EIO for read errors, PT_EPARSE for corrupt gzip data (offset = bytes
 * of uncompressed stream delivered so far).  A gzip stream that stops
 * before its end marker returns 0 and sets pt_input_cut(). */
ssize_t pt_input_read(pt_input *in, void *dst, size_t cap, pt_error *err);

/* Read the rest of the stream, discarding it, to check it: PT_OK when it
 * ends (or is cut off: see pt_input_cut), else the read error (PT_EPARSE
 * "corrupt gzip data (...)" for a damaged gzip stream).  Readers call it
 * when their parser fails on gzip input: a bit flip in compressed data
 * first shows as garbage text, and only the inflater can say why. */
int pt_input_drain(pt_input *in, pt_error *err);

/* 1 when the input is gzip-compressed (known after the first read). */
int pt_input_is_gzip(const pt_input *in);
/* 1 when a gzip stream ended before its end marker (a cut-off file). */
int pt_input_cut(const pt_input *in);
/* Uncompressed bytes delivered so far. */
uint64_t pt_input_offset(const pt_input *in);

#endif
