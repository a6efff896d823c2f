/*
 * wfiles.h - the files of one worker are one worker (docs/input.md "A
 * folder torch wrote"): torch's tensorboard_trace_handler writes one
 * <worker>.<timestamp>.pt.trace.json[.gz] per profiling cycle, and our own
 * collector one <host>_<rank>_<pid>.json per trigger round.  Files that
 * share that name key and distributedInfo.rank are grouped into one worker
 * whose window is the union of their step spans; files of another job or
 * run (another world_size, a clock hours away, a rank twice) are left out,
 * each with its reason, for the report to name.
 *
 * Flow (analyze.c): pt_wfiles_needed -> pt_wfiles_init -> pt_wfiles_read
 * per file on the pool's threads -> pt_wfiles_group -> pt_wfiles_merge per
 * worker on the threads -> pt_summary_build.  Never prints.
 */
#ifndef PT_WFILES_H
#define PT_WFILES_H

#include <stddef.h>
#include <stdint.h>

#include "../model/store.h"
#include "../util/error.h"

typedef struct pt_wfile {
	const char *path;          /* borrowed from the caller's list */
	char key[256];             /* the name key ("" none: a worker of its own) */
	pt_store st;               /* read by pt_wfiles_read, freed by pt_wfiles_release */
	int ok;                    /* st was read */
	char msg[PT_ERROR_MSG_MAX]; /* !ok: why (without the path) */
	int64_t t0, t1;            /* its step span (else its events'), ns */
	int64_t first_step;        /* lowest ProfilerStep number, INT64_MAX none */
	int64_t shift;             /* ns taken off its times in the merge */
	size_t worker;             /* index into workers, SIZE_MAX: none (left out or failed) */
} pt_wfile;

typedef struct pt_wworker {
	size_t *files;             /* indices into f, time order */
	size_t nfiles;             /* 0: all of them left out */
	char name[300];            /* worker id: the file's name, or <host>_<rank>_<pid> */
	const char *grouped_by;    /* "rank+host+pid", "host+pid", "name" (static) */
} pt_wworker;

typedef struct pt_wleft {
	size_t file;               /* index into f */
	char why[400];             /* one clause, no path: "world_size 2, the others' 4" */
} pt_wleft;

typedef struct pt_wfiles {
	pt_wfile *f;
	size_t nf;
	pt_wworker *w;
	size_t nw;
	pt_wleft *left;
	size_t nleft;
	size_t *ix;                /* the workers' file lists (w[k].files point in) */
} pt_wfiles;

/* The name key of a file name: "W" for torch's W.<digits>.pt.trace.json
 * (.gz), "<host>_<rank>_<pid>" for ours (<host>_<rank>_<pid>.json[.gz]),
 * else "" (returns 0). */
int pt_wfiles_key(const char *base, char *key, size_t cap);
/* Do two or more of paths share a name key?  Only then is a folder read
 * the grouping way; a file alone is read exactly as before. */
int pt_wfiles_needed(char *const *paths, size_t n);
/* Set up g for paths[0..n) (borrowed).  PT_ENOMEM. */
int pt_wfiles_init(pt_wfiles *g, char *const *paths, size_t n, pt_error *err);
/* Read file i into its store (thread-safe for distinct i). */
void pt_wfiles_read(pt_wfiles *g, size_t i);
/* After every read: the workers, the files left out and why, the shifts
 * that take the time between cycles out of a window.  PT_ENOMEM. */
int pt_wfiles_group(pt_wfiles *g, pt_error *err);
/* Worker k's files as one store in *out (initialised here; the caller
 * frees it).  Thread-safe for distinct k.  PT_ENOMEM. */
int pt_wfiles_merge(const pt_wfiles *g, size_t k, pt_store *out, pt_error *err);
/* Free the stores of worker k's files (once merged or summarised). */
void pt_wfiles_release(pt_wfiles *g, size_t k);
void pt_wfiles_free(pt_wfiles *g);  /* a zeroed g is fine */

#endif
