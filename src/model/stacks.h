/*
 * stacks.h - the stacks file: its format and its parser, in one place.
 *
 * Each collector's watchdog thread (python/perftracker/collector_watchdog.c)
 * writes the Python stacks of every thread of its process to
 * <control>/stacks/<worker>.txt, on request (a new id in
 * stacks/request.json, src/control/control.h) and by itself when no step
 * came for a while; the hang diagnosis (hang.c) reads them with
 * pt_hang_parse_dump.  docs/hang.md "The dump file" shows one.
 *
 * The file is text, lines ending in "\n" (a "\r" before it is ignored):
 *   - PT_STACKS_MAGIC alone on the first line;
 *   - header lines "key: value": worker ("<host>_<rank>_<pid>"), host,
 *     rank, pid, training_thread (0x..., the thread that created the
 *     collector), reason ("request" or "stalled"), request (the id
 *     answered), time (epoch seconds when written), step (step count
 *     then), step_time (epoch seconds when that count was seen); any may
 *     be missing, unknown keys are skipped;
 *   - a blank line;
 *   - CPython faulthandler's text: "Thread 0x... (most recent call
 *     first):" (or "Current thread 0x...", "Stack (...)") then its frames
 *     innermost first, '  File "f", line N in func'; "  ..." when frames
 *     were left out; "error: ..." when the dump failed.
 * Thread-safe: the parser keeps no state between calls.
 */
#ifndef PT_STACKS_H
#define PT_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "../util/error.h"

/* The first line of a stacks file (bump the number on an incompatible change). */
#define PT_STACKS_MAGIC "format: perftracker-stacks 1"

typedef struct pt_hang_frame {
	char *file;    /* as written ("???" when unknown) */
	char *func;
	int64_t line;  /* -1 when unknown */
} pt_hang_frame;

typedef struct pt_hang_thread {
	uint64_t id;            /* thread ident (pthread_t), 0 when not given */
	int current;            /* faulthandler's "Current thread" */
	int truncated;          /* more frames than faulthandler writes (100) */
	pt_hang_frame *frames;  /* outermost first */
	size_t nframes;
} pt_hang_thread;

/* The last collective instance the process entered in one process group,
 * from the watch's latest Flight Recorder read (issue 32): header lines
 * "collective: pg=P seq=N state=S created_us=T desc=D name=NAME" (name
 * last: it may hold spaces), after one "watch: fr=STATE read_us=T". */
#define PT_HANG_COLLS 16
typedef struct pt_hang_coll {
	char pg[48], desc[48], name[48], state[16];
	int64_t seq, created_us;
} pt_hang_coll;

typedef struct pt_hang_dump {
	char worker[320];       /* "<host>_<rank>_<pid>" */
	char host[256];
	int64_t rank, pid;
	char reason[32];        /* "request" or "stalled" */
	char request[96];       /* request id answered, "" for automatic dumps */
	double time;            /* epoch seconds when written */
	int64_t step;           /* step count at that time */
	double step_time;       /* epoch seconds of the last step seen, 0 none */
	uint64_t training_thread;
	char error[256];        /* faulthandler's error line, "" none */
	char fr[16];            /* the watch's Flight Recorder state, "" none */
	int64_t fr_read_us;     /* when the watch last read it (µs), 0 never */
	pt_hang_coll colls[PT_HANG_COLLS];
	size_t ncolls;
	pt_hang_thread *threads;  /* in the order written (newest thread first) */
	size_t nthreads;
} pt_hang_dump;

/* Parse a dump (text[0..len), need not be NUL-terminated) into *d, which is
 * zeroed first.  PT_OK; PT_EFORMAT when the first line is not the stacks
 * magic; PT_EPARSE (offset set) for a malformed header or thread line;
 * PT_ENOMEM.  On failure *d holds nothing to free.  Unknown lines in the
 * body are skipped (later Python versions may add some). */
int pt_hang_parse_dump(const char *text, size_t len, pt_hang_dump *d, pt_error *err);
void pt_hang_dump_free(pt_hang_dump *d);  /* NULL is a no-op */

/* The thread that trains: the one that created the collector (the header
 * says which), else the oldest thread (faulthandler lists it last).  NULL
 * when the dump has no thread. */
const pt_hang_thread *pt_hang_training_thread(const pt_hang_dump *d);

#endif
