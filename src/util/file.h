/*
 * file.h - the file primitives every stage shares, each written once:
 * reading a whole file with a size limit (the JSON DOM, the summary
 * reader, the control records), writing a file so that it appears whole
 * (write a temporary beside it, then rename: summaries, reports, the page,
 * control records, samples, kept traces) and `mkdir -p`.  Raw traces are
 * streamed instead (src/trace/input.h).  The collector's watchdog writes its
 * stack dumps with openat/renameat on a descriptor opened in advance
 * (python/perftracker/collector_watchdog.c), using only pt_file_write_all
 * and pt_file_random64 from here: neither allocates.
 */
#ifndef PT_FILE_H
#define PT_FILE_H

#include <stddef.h>

#include "error.h"

/* ---- reading -------------------------------------------------------------- */

/* Read path to EOF into *buf (malloc'd, NUL-terminated, the caller frees
 * it with x_free) and *len (without the NUL).  The size from fstat is only
 * a hint (pipes, growing files); a file larger than max bytes, or one that
 * grows past it, fails with PT_ENOMEM ("file larger than MAX bytes").
 * Other failures: PT_EIO ("cannot open: ...", "is a directory", "read
 * failed: ...") or PT_ENOMEM ("out of memory"), with *buf and *len
 * untouched.  err gets no subject: callers name the file.  Thread-safe. */
int pt_file_read(const char *path, size_t max, char **buf, size_t *len, pt_error *err);

/* The read loop of pt_file_read on an open descriptor (not closed here),
 * for callers with their own rules on what they open
 * (pt_control_read_file: regular files only).  Same results and messages
 * as pt_file_read after the open. */
int pt_file_read_fd(int fd, size_t max, char **buf, size_t *len, pt_error *err);

/* ---- writing a file whole --------------------------------------------------
 *
 * One temporary-name scheme: "<dir>/.<base>.<16 random hex>.tmp", beside
 * the file (rename is atomic only within one file system), hidden (a
 * reader listing the folder skips dot files), created O_EXCL|O_NOFOLLOW.
 *
 * One fsync rule (PT_FILE_DURABLE): a file that is a result, written once
 * and read later, possibly after the node crashed or on another host
 * (summaries, report.json, index.html, app.py, the trace copy the agent
 * keeps while deleting its source), is fsync'ed before the rename:
 * without it ext4 and XFS may commit the rename before the data, and a
 * power loss leaves the name pointing at an empty file.  A record rewritten
 * on a period (control records, heartbeats, samples flushed every few
 * seconds) is not: a newer copy follows within seconds, so a crash loses
 * only what the next write would replace, and an fsync per write costs a
 * server round trip on NFS or Lustre.  fsync failing with EINVAL or EROFS
 * (a file system that cannot sync) is not an error. */
#define PT_FILE_DURABLE 1u

/* Create a new temporary file for path (the scheme above), opened
 * O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC with mode (before umask).
 * The name is not guessable and never an existing file or symbolic link,
 * so another user who can write in the directory cannot make us write
 * through a link.  Returns the descriptor and fills tmp (cap bytes), or -1
 * with err filled (PT_EIO "cannot create a temporary file: ...", errno
 * kept; PT_EINVAL "path too long", errno ENAMETOOLONG) and tmp "".
 * Thread-safe. */
int pt_file_create_tmp(const char *path, int mode, char *tmp, size_t cap, pt_error *err);

/* Write all of buf to fd (retrying short writes and EINTR); 0 or -1 with
 * errno set.  Allocates nothing and calls only write(2): the collector's
 * watchdog writes stack dumps with it while the interpreter is stuck. */
int pt_file_write_all(int fd, const void *buf, size_t len);

/* 64 unpredictable bits (the random part of temporary names): getrandom(2),
 * else a mix of the clock, the pid and a counter.  Allocates nothing; safe
 * from any thread. */
uint64_t pt_file_random64(void);

/* Finish a temporary from pt_file_create_tmp that the caller wrote: fsync
 * it when flags has PT_FILE_DURABLE, close fd (close reports deferred NFS
 * and quota errors).  On failure the temporary is removed, tmp set to "",
 * and err gets path as subject, "cannot write: <strerror>" and errno the
 * cause.  fd is closed in every case. */
int pt_file_close_tmp(int fd, char *tmp, const char *path, unsigned flags, pt_error *err);

/* Create, write and close a temporary for path holding buf (the three
 * calls above); not yet renamed, so that several files can be put in place
 * together (report.json and index.html).  PT_OK with its name in tmp, or
 * PT_EIO ("cannot write: ...") / PT_EINVAL ("path too long") with err
 * naming path, errno kept and nothing left on disk. */
int pt_file_write_tmp(const char *path, const void *buf, size_t len, int mode, unsigned flags,
		      char *tmp, size_t cap, pt_error *err);

/* Rename tmp over path.  On failure tmp is removed and set to "", and err
 * gets path as subject and "cannot rename into place: <strerror>" (PT_EIO,
 * errno kept). */
int pt_file_commit_tmp(char *tmp, const char *path, pt_error *err);

/* Write buf to path atomically: pt_file_write_tmp then pt_file_commit_tmp.
 * On failure path is unchanged and no temporary is left; err gets path as
 * subject and errno the cause.  Thread-safe (for distinct paths; two
 * writers of one path leave one of the two contents whole).  A path that
 * is a device, FIFO or socket (/dev/null, /dev/stdout, a named pipe) is
 * written into instead, never replaced. */
int pt_file_write_atomic(const char *path, const void *buf, size_t len, int mode,
			 unsigned flags, pt_error *err);

/* ---- directories ------------------------------------------------------------ */

/* A judge of each directory pt_file_mkdirs walks through: called with the
 * directory so far ("/" first for an absolute path, then "/a", "/a/b", ...)
 * after it was created or found, last set for path itself; PT_OK to go
 * on, else an error code with err filled, which pt_file_mkdirs returns. */
typedef int pt_file_dir_check(const char *dir, int last, void *ctx, pt_error *err);

/* mkdir -p path with mode (before umask) for the directories it creates.
 * Trailing slashes are ignored.  Without check, an existing component that
 * is not a directory (or a link to one) fails with PT_EIO "cannot create
 * directory: Not a directory" naming it; with check, check decides on
 * every component (the control directory's ownership rules).  Errors:
 * PT_EINVAL "path too long or empty" (PATH_MAX), PT_EIO "cannot create
 * directory: <strerror>" with the component as subject, errno kept.
 * Thread-safe (two processes creating the same tree both succeed). */
int pt_file_mkdirs(const char *path, int mode, pt_file_dir_check *check, void *ctx,
		   pt_error *err);

/* rm -r of name in the directory open as dfd, at most depth levels deep
 * (1: a folder of plain files), relative to descriptors and never through
 * a link (a link is removed, its target left alone), and only folders
 * owned by uid.  0 when name is gone (or was never there), -1 when
 * something stayed (errno of the first failure).  Thread-safe. */
int pt_file_remove_tree_at(int dfd, const char *name, int depth, unsigned uid);

#endif
