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

/* Create a new temporary file beside path, for write-then-rename:
 * "<dir>/.<base>.<16 random hex>.tmp", opened O_WRONLY|O_CREAT|O_EXCL|
 * O_NOFOLLOW|O_CLOEXEC with mode (before umask).  The name is not
 * guessable and never an existing file or symbolic link, so another user
 * who can write in the directory cannot make us write through a link.
 * Returns the descriptor and fills tmp (cap bytes), or -1 with err filled
 * (PT_EIO, errno kept; PT_EINVAL when the name does not fit).  Thread-safe. */
int pt_file_create_tmp(const char *path, int mode, char *tmp, size_t cap, pt_error *err);

/* Write all of buf to fd (retrying short writes and EINTR); 0 or -1 with
 * errno set. */
int pt_file_write_all(int fd, const void *buf, size_t len);

/* Write buf to path atomically: pt_file_create_tmp, write, close (which
 * reports deferred NFS/quota errors), rename over path.  On failure the
 * temporary file is removed and path is unchanged; err gets path as
 * subject and errno the cause.  Thread-safe. */
int pt_file_write_atomic(const char *path, const void *buf, size_t len, int mode,
			 pt_error *err);

#endif
