/*
 * file.h - reading a whole file into memory with a size limit: the file
 * side of the readers that take a whole document at once (the JSON DOM in
 * util/json.c, the summary reader in analysis/summary_io.c).  Raw traces
 * are streamed instead (src/trace/input.h).
 */
#ifndef PT_FILE_H
#define PT_FILE_H

#include <stddef.h>

#include "error.h"

/* Read path to EOF into *buf (malloc'd, NUL-terminated, the caller frees
 * it with x_free) and *len (without the NUL).  The size from fstat is only
 * a hint (pipes, growing files); a file that grows past max bytes fails
 * with PT_ENOMEM ("file larger than MAX bytes").  Other failures: PT_EIO
 * ("cannot open: ...", "is a directory", "read failed: ...") or PT_ENOMEM
 * ("out of memory"), with *buf and *len untouched.  err gets no subject:
 * callers name the file.  Thread-safe. */
int pt_file_read(const char *path, size_t max, char **buf, size_t *len, pt_error *err);

#endif
