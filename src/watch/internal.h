/*
 * internal.h - what the files of src/watch share: a worker's steps and
 * collective instances as read from its watch file (watch_read.c), kept
 * for the evaluation (watch_eval.c).  Not installed.
 */
#ifndef PT_WATCH_INTERNAL_H
#define PT_WATCH_INTERNAL_H

#include <sys/types.h>

#include "watch.h"
#include "../util/hash.h"

/* Steps kept per worker: the window, the persistence and a margin; at
 * most STEPS_MAX of them (a worker stepping 100 times a second keeps 80 s). */
#define STEPS_MAX 8192
#define KEEP_MARGIN_S 20.0
#define LINE_MAX_BYTES (64 * 1024)

typedef struct winst {
	char pg[48];
	char name[48];
	int64_t seq;
	int64_t arr, start, done;   /* µs; -1 none */
} winst;

typedef struct wstep {
	int64_t s, t0, t1;          /* step number, its start and end (µs) */
	winst *c;                   /* its instances (owned), nc of them */
	uint32_t nc;
	/* evaluation scratch */
	double late, wait;
	int has_late;
	uint32_t at;                /* index in c of its largest lateness */
} wstep;

typedef struct wworker {
	pt_watch_rank r;            /* identity, fr state; numbers after eval */
	char path[1024];            /* the file it is read from ("" fed by hand) */
	dev_t dev;
	ino_t ino;
	off_t off;
	char *part;                 /* a last line without its "\n" */
	size_t npart;
	int skipping;               /* inside a line over LINE_MAX_BYTES */
	uint64_t bad;               /* lines skipped */
	wstep *st;                  /* steps, oldest first */
	size_t n, cap;
	/* persistence (watch_eval.c) */
	double cond_since;          /* data time the condition began, 0 none */
	int64_t cond_step;
	double off_since;           /* flagged: data time it stopped holding, 0 */
	double blamed, step_sum;    /* evaluation: blame on it, its step time (µs) */
	double late_frac;           /* share of its recent steps it was late in */
} wworker;

struct pt_watch {
	pt_watch_options o;
	wworker *w;
	size_t n, cap;
	pt_hmap byid;               /* hash of a worker id -> its index in w */
	pt_watch_rank *out;         /* pt_watch_ranks' array */
	size_t nout;
};

/* qsort order of ranks: by rank, then worker id (the evaluation's and the
 * merged node files' order). */
int pt_watch_by_rank(const void *a, const void *b);

/* The worker of wid, created when create (NULL when absent or out of memory). */
wworker *pt_watch_worker(pt_watch *w, const char *wid, int create);
void pt_watch_worker_free(wworker *k);

#endif
