/*
 * watch.h - the always-on watch (issue 32, docs/watch.md): per rank per
 * step signals from the collectors' watch files (step times, arrivals at
 * collective instances from torch's Flight Recorder), matched across ranks
 * by (process group, sequence number), and the detection: lateness, time
 * waited, straggler score, persistent stragglers.  Run by the node agent's
 * watch thread (src/agent); its result feeds /metrics, the per-node watch
 * file <control>/watch/<host>.json (status, auto-profile, the report).
 * Library code: never prints; one pt_watch per thread.
 */
#ifndef PT_WATCH_H
#define PT_WATCH_H

#include <stddef.h>
#include <stdint.h>

#include "../control/control.h"
#include "../util/error.h"
#include "../util/strbuf.h"

#define PT_WATCH_FORMAT "perftracker-watch"      /* the collector's line files */
#define PT_WATCH_NODE_FORMAT "perftracker-watch-node" /* <control>/watch/<host>.json */

typedef struct pt_watch_options {
	double window_s;      /* steps of the last window_s seconds are scored (30) */
	double score_min;     /* a straggler's score at least this (0.5) */
	double lost_min;      /* ... and waiting blamed on it >= this share of the
				 other ranks' step time (0.05) */
	double late_share;    /* ... and it reached its collectives later than
				 the median rank in at least this share of its
				 steps of the last persist_s seconds (0.75): a
				 rank's one long stall fills the window with
				 blame, but it is not late step after step */
	double persist_s;     /* ... for this long (10) */
	int64_t persist_steps;/* ... and this many steps in a row (10) */
} pt_watch_options;

void pt_watch_options_default(pt_watch_options *o);

/* One rank as the watch sees it after pt_watch_eval.  Times in seconds;
 * absolute times are CLOCK_REALTIME seconds since the epoch. */
typedef struct pt_watch_rank {
	char id[PT_CONTROL_ID_MAX];     /* worker id "<host>_<rank>_<pid>" */
	char host[PT_CONTROL_HOST_MAX];
	int64_t rank, world, local_rank, pid;
	char fr[16];                    /* "on", "none", "off", "error", "" unknown */
	char why[160];                  /* the FR state's sentence, "" when on */
	int64_t step;                   /* last step seen */
	double last_t;                  /* when that step ended */
	int64_t steps;                  /* steps in the window */
	double step_s;                  /* mean step time over the window, 0 none */
	double wait_s;                  /* mean time waited in collectives per step */
	double late_s;                  /* median over the window's steps of the
					   step's lateness (its largest), 0 none */
	double late_max_s;              /* the largest lateness in the window */
	char at_name[64];               /* the instance of late_max_s: name, */
	char at_pg[64];                 /* process group name, */
	int64_t at_seq;                 /* sequence number (-1 none) */
	int64_t at_step;                /* and the step it was in */
	double score;                   /* straggler score in [0,1] */
	double lost_gpu_s_per_min;      /* the others' waiting blamed on it, per minute */
	int flagged;                    /* a persistent straggler now */
	double since;                   /* flagged: since when (time), else 0 */
	int64_t since_step;             /* flagged: the first step of the run, else -1 */
} pt_watch_rank;

typedef struct pt_watch pt_watch;

/* NULL on allocation failure; o NULL: defaults. */
pt_watch *pt_watch_new(const pt_watch_options *o);
void pt_watch_free(pt_watch *w);  /* NULL is a no-op */

/* Read what a worker's watch file gained since the last call (by path:
 * offset and inode kept; a rotated or replaced file is read from its
 * start; a last line without "\n" waits for its end).  A bad line is
 * skipped and counted; a file that is not a watch file is PT_EFORMAT with
 * err naming it.  A missing file is PT_OK with nothing read. */
int pt_watch_read_file(pt_watch *w, const char *path, pt_error *err);
/* One line of a worker's file (the tests, the fuzzer); wid names the file
 * the line came from (lines after a header belong to its worker). */
int pt_watch_feed_line(pt_watch *w, const char *wid, const char *line, size_t len,
		       pt_error *err);
/* Forget a worker (its file is gone: the process ended). */
void pt_watch_drop(pt_watch *w, const char *wid);

/* Match, score and detect at time now (seconds since the epoch).  The
 * result stays valid until the next call that changes w. */
int pt_watch_eval(pt_watch *w, double now);
/* The ranks, sorted by rank; *n their count.  Owned by w. */
const pt_watch_rank *pt_watch_ranks(const pt_watch *w, size_t *n);

/* ---- the per-node watch file <control>/watch/<host>.json ------------------ */

/* Append {"format":"perftracker-watch-node","version":1,"host":...,
 * "time":now,"ranks":[{...}]} for n ranks. */
void pt_watch_node_json(pt_sb *sb, const char *host, double now, const pt_watch_rank *r,
			size_t n);
/* One rank's object of it ({"id":...,"since_step":N}), appended (also
 * `perftracker status --json`'s "watch" entries). */
void pt_watch_node_json_rank(pt_sb *sb, const pt_watch_rank *r);
/* Parse one: *out a new array (x_free; NULL and 0 when none), *time its
 * "time".  PT_EPARSE / PT_EFORMAT with err filled; never reads past len. */
int pt_watch_node_parse(const char *buf, size_t len, pt_watch_rank **out, size_t *n,
			double *time, pt_error *err);
/* Write it atomically (temporary name + rename) under <dir>/watch/. */
int pt_watch_node_write(const char *dir, const char *host, double now, const pt_watch_rank *r,
			size_t n, pt_error *err);
/* Every node's ranks (the .json files in <dir>/watch/), sorted by rank; unreadable
 * files skipped.  *out a new array (x_free). */
int pt_watch_all(const char *dir, pt_watch_rank **out, size_t *n, pt_error *err);

#endif
