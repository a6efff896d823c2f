/*
 * inputs.h - finding the files a diagnosis reads: the raw traces `analyze`
 * summarises, the worker summaries `diagnose` compares, both sides of
 * `compare`.  A path is taken as given; a folder is searched recursively by
 * one walker (pt_inputs_walk) that every command shares.  Sits at the start
 * of every flow, before the readers (src/trace/any.h) open a trace or
 * src/diagnose/pipeline.c reads the summaries it found; it lives with the
 * readers because it tells a trace from the files beside it by their rules
 * (pt_trace_is_samples_name) and every later stage may include src/trace/.
 *
 * Never prints; thread-safe (no shared state).
 */
#ifndef PT_INPUTS_H
#define PT_INPUTS_H

#include <stddef.h>
#include <sys/stat.h>

#include "../util/error.h"

/* What a folder search keeps: traces (*.json, *.json.gz, *.sqlite; not
 * *.summary.json, not hardware samples, docs/hardware.md) or summaries
 * (*.json). */
enum { PT_INPUTS_TRACES, PT_INPUTS_SUMMARIES };

/* A list of input files (owned strings) and the folders that held none. */
typedef struct pt_inputs {
	char **v;
	size_t n, cap;
	const char *empty[4];  /* folders that held none (borrowed: the caller's
	                          path), the first 4 */
	size_t nempty;
} pt_inputs;

/* Called for every regular file found (path: dir/.../name; name: its last
 * component).  Non-zero stops the walk and is returned by it. */
typedef int pt_inputs_visit_fn(void *ctx, const char *path, const char *name);

/* Walk dir recursively: hidden entries, folders named PerfDisplay (our own
 * output) and the folder skip (matched by device and inode, however it is
 * spelled; NULL: none) are left out; links are followed, 64 levels at most
 * (a link loop ends there); entries whose path would pass 4095 bytes are
 * skipped.  Files in readdir order.  0, the visitor's non-zero value, or
 * PT_EIO "'DIR': cannot open directory: ..." for a folder that cannot be
 * read. */
int pt_inputs_walk(const char *dir, const struct stat *skip, pt_inputs_visit_fn *visit, void *ctx,
		   pt_error *err);

/* Add path: a file as given; a folder searched for `what` (files sorted by
 * path within it; a folder that holds none is counted in f->empty), the
 * folder skip left out (NULL: none).  PT_EIO "'PATH': <strerror>" for a
 * path that does not exist, PT_ENOMEM. */
int pt_inputs_add(pt_inputs *f, const char *path, int what, const char *skip, pt_error *err);
/* Append one path (copied).  PT_ENOMEM. */
int pt_inputs_push(pt_inputs *f, const char *path, pt_error *err);
/* After the last pt_inputs_add: PT_EINVAL when nothing was found ("CMD: no
 * summary files given (see --help)", "'DIR': no *.json summaries found",
 * ...), else 0 (the caller may warn about each of f->empty). */
int pt_inputs_check(const pt_inputs *f, const char *cmd, int what, pt_error *err);
/* "*.json summaries" or "*.json, *.json.gz or *.sqlite traces". */
const char *pt_inputs_what(int what);
void pt_inputs_free(pt_inputs *f);  /* a zeroed list is fine */

#endif
