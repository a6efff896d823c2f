/*
 * watch.h - the node agent's side of the always-on watch (issue 32,
 * docs/watch.md): a thread that reads the watch files of this node's
 * workers (<node-dir>/watch/<id>.jsonl) once a second, runs the detection
 * (src/watch), writes <control>/watch/<host>.json, and an OpenMetrics
 * endpoint, GET /metrics on $PERFTRACKER_METRICS_ADDR:$PERFTRACKER_METRICS_PORT
 * (127.0.0.1:9464 unless set), that serves the last result from memory.
 * Library code: never prints (messages go to the log callback).
 */
#ifndef PT_AGENT_WATCH_H
#define PT_AGENT_WATCH_H

#include "../util/error.h"

#define PT_METRICS_DEFAULT_ADDR "127.0.0.1"
#define PT_METRICS_DEFAULT_PORT 9464
/* The default port taken (another job's agent on this node): the next
 * ones are tried, this many in all. */
#define PT_METRICS_PORT_TRIES 16

typedef struct pt_agent_watch_options {
	const char *dir;        /* the control directory */
	const char *ndir;       /* the node channel directory ("" or NULL: no watch) */
	const char *host;       /* this node's name (the "host" label) */
	const char *job;        /* the "job" label */
	const char *addr;       /* bind address; NULL: PT_METRICS_DEFAULT_ADDR */
	int port;               /* 0: no /metrics; -1: the default (and the next
	                           ones when it is taken) */
	double interval_s;      /* between reads (1) */
	void (*log)(void *ctx, const char *msg);
	void *log_ctx;
} pt_agent_watch_options;

typedef struct pt_agent_watch pt_agent_watch;

/* Start the thread and the server (a port that cannot be had is logged:
 * the watch goes on without /metrics).  NULL with err filled only when
 * the thread cannot start. */
pt_agent_watch *pt_agent_watch_start(const pt_agent_watch_options *o, pt_error *err);
/* Stop and free; NULL is a no-op. */
void pt_agent_watch_stop(pt_agent_watch *w);

#endif
