/*
 * watch.c - the node agent's watch thread and its /metrics endpoint (see
 * watch.h).  The thread does all the reading and deciding, then renders
 * the exposition text once into a snapshot under a mutex; the HTTP server
 * (libmicrohttpd, its own thread, a connection limit and a short timeout)
 * only copies that text, so slow or hostile clients never hold up the
 * agent's other work, and the agent's work never holds up a scrape.
 */
#include "watch.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../control/control.h"
#include "../display/server.h"
#include "../util/clock.h"
#include "../util/strbuf.h"
#include "../util/xalloc.h"
#include "../watch/watch.h"

#define CONN_LIMIT 64
#define CONN_TIMEOUT_S 5
#define NODE_FILE_EVERY_S 5.0

struct pt_agent_watch {
	pt_agent_watch_options o;
	char dir[PT_CONTROL_PATH_MAX], ndir[PT_CONTROL_PATH_MAX];
	char host[PT_CONTROL_HOST_MAX], job[256];
	pt_watch *w;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop, running;
	struct MHD_Daemon *mhd;
	char *text;               /* the exposition (mu) */
	size_t ntext;
	char last_flags[4096];    /* flagged ranks at the last node file */
	double last_node;
};

static void logf_(pt_agent_watch *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(pt_agent_watch *a, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!a->o.log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	a->o.log(a->o.log_ctx, msg);
}

/* ---- the exposition ------------------------------------------------------------ */

/* A label value as the text format wants it: \\, \" and \n escaped. */
static void label(pt_sb *sb, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			pt_sb_addc(sb, '\\');
		if (*v == '\n') {
			pt_sb_adds(sb, "\\n");
			continue;
		}
		pt_sb_addc(sb, *v);
	}
}

typedef struct family {
	const char *name, *help;
} family;

static const family families[] = {
	{ "perftracker_step_seconds", "Mean step time over the watch window, seconds." },
	{ "perftracker_collective_wait_seconds",
	  "Time waited in collectives per step, mean over the watch window, seconds." },
	{ "perftracker_lateness_seconds",
	  "How much later than the median rank this rank reaches its collectives, median per "
	  "step over the watch window, seconds." },
	{ "perftracker_straggler_score",
	  "Share of all ranks' waiting at collectives spent waiting for this rank over the "
	  "watch window, in [0, 1]." },
	{ "perftracker_lost_gpu_seconds_per_minute",
	  "The other ranks' waiting spent on this rank, GPU-seconds per minute." },
	{ "perftracker_straggler", "1 while this rank is a persistent straggler, else 0." },
	{ "perftracker_flight_recorder",
	  "1 when the watch reads torch's Flight Recorder for this rank, 0 step times only." },
	{ "perftracker_step", "The last step this rank finished." },
};

static double value(const pt_watch_rank *r, size_t f)
{
	switch (f) {
	case 0: return r->step_s;
	case 1: return r->wait_s;
	case 2: return r->late_s;
	case 3: return r->score;
	case 4: return r->lost_gpu_s_per_min;
	case 5: return r->flagged;
	case 6: return !strcmp(r->fr, "on");
	default: return (double)r->step;
	}
}

static void render(pt_agent_watch *a, const pt_watch_rank *r, size_t n, pt_sb *sb)
{
	for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++) {
		pt_sb_addf(sb, "# HELP %s %s\n# TYPE %s gauge\n", families[f].name, families[f].help,
			   families[f].name);
		for (size_t i = 0; i < n; i++) {
			double v = value(&r[i], f);
			pt_sb_addf(sb, "%s{job=\"", families[f].name);
			label(sb, a->job);
			pt_sb_adds(sb, "\",host=\"");
			label(sb, r[i].host[0] ? r[i].host : a->host);
			pt_sb_addf(sb, "\",rank=\"%lld\"} ", (long long)r[i].rank);
			if (isfinite(v))
				pt_sb_addf(sb, "%.9g\n", v);
			else
				pt_sb_adds(sb, "NaN\n");
		}
	}
}

/* ---- the HTTP side ---------------------------------------------------------------- */

static enum MHD_Result respond(struct MHD_Connection *c, unsigned status, const char *type,
			       const char *body, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body,
								  MHD_RESPMEM_MUST_COPY);
	enum MHD_Result rc;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **ctx)
{
	pt_agent_watch *a = cls;
	static const char nf[] = "not found: this agent serves /metrics only\n";
	static const char na[] = "method not allowed\n";
	enum MHD_Result rc;

	(void)version;
	(void)upload;
	if (!*ctx) {
		/* the headers: answer once the (ignored) body is in */
		*ctx = (void *)1;
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0;
		return MHD_YES;
	}
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return respond(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", na, sizeof(na) - 1);
	if (strcmp(url, "/metrics"))
		return respond(c, MHD_HTTP_NOT_FOUND, "text/plain", nf, sizeof(nf) - 1);
	pthread_mutex_lock(&a->mu);
	rc = respond(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8",
		     a->text ? a->text : "", a->text ? a->ntext : 0);
	pthread_mutex_unlock(&a->mu);
	return rc;
}

/* Listen on the port asked for, or from the default up; 0 when none. */
static int serve(pt_agent_watch *a)
{
	const char *addr = a->o.addr && *a->o.addr ? a->o.addr : PT_METRICS_DEFAULT_ADDR;
	int tries = a->o.port < 0 ? PT_METRICS_PORT_TRIES : 1;
	int base = a->o.port < 0 ? PT_METRICS_DEFAULT_PORT : a->o.port;
	pt_display_listener l;
	pt_error e;
	int fd = -1;

	if (!a->o.port)
		return 0;
	for (int i = 0; i < tries && fd < 0; i++) {
		pt_error_clear(&e);
		fd = pt_display_listen(addr, base + i, &l, &e);
	}
	if (fd < 0) {
		logf_(a, "metrics: not served: %s", e.msg);
		return 0;
	}
	a->mhd = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD, 0, NULL, NULL, on_request, a,
				  MHD_OPTION_LISTEN_SOCKET, fd,
				  MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONN_LIMIT,
				  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONN_TIMEOUT_S,
				  MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024),
				  MHD_OPTION_END);
	if (!a->mhd) {
		close(fd);
		logf_(a, "metrics: not served: cannot start the http server (libmicrohttpd)");
		return 0;
	}
	logf_(a, "metrics: %smetrics", l.url);
	return l.port;
}

/* ---- the thread -------------------------------------------------------------------- */

/* Read every watch file of the node; forget the workers whose file went. */
static void read_all(pt_agent_watch *a)
{
	char d[PT_CONTROL_PATH_MAX + 8], path[PT_CONTROL_PATH_MAX + 512];
	DIR *dh;
	struct dirent *de;
	size_t n;
	const pt_watch_rank *r;

	if ((size_t)snprintf(d, sizeof(d), "%s/watch", a->ndir) >= sizeof(d))
		return;
	dh = opendir(d);
	if (dh) {
		while ((de = readdir(dh))) {
			size_t l = strlen(de->d_name);
			pt_error e;
			if (l < 7 || strcmp(de->d_name + l - 6, ".jsonl") ||
			    (size_t)snprintf(path, sizeof(path), "%s/%s", d, de->d_name) >= sizeof(path))
				continue;
			pt_error_clear(&e);
			pt_watch_read_file(a->w, path, &e);
		}
		closedir(dh);
	}
	/* a worker whose file is gone has ended */
	r = pt_watch_ranks(a->w, &n);
	for (size_t i = n; i-- > 0;) {
		if ((size_t)snprintf(path, sizeof(path), "%s/%s.jsonl", d, r[i].id) < sizeof(path) &&
		    access(path, F_OK) != 0 && errno == ENOENT)
			pt_watch_drop(a->w, r[i].id);
	}
}

/* The flagged ranks as a string: a change writes the node file at once. */
static void flags_of(const pt_watch_rank *r, size_t n, char *out, size_t cap)
{
	size_t o = 1;

	snprintf(out, cap, ",");
	for (size_t i = 0; i < n && o + 32 < cap; i++)
		if (r[i].flagged)
			o += (size_t)snprintf(out + o, cap - o, "%lld,", (long long)r[i].rank);
}

static void round_once(pt_agent_watch *a)
{
	double now = pt_clock_wall();
	const pt_watch_rank *r;
	size_t n;
	char flags[sizeof(a->last_flags)];
	pt_sb sb = { 0 };

	read_all(a);
	if (pt_watch_eval(a->w, now))
		return;
	r = pt_watch_ranks(a->w, &n);
	render(a, r, n, &sb);
	if (!sb.oom) {
		char *old;
		pthread_mutex_lock(&a->mu);
		old = a->text;
		a->text = pt_sb_detach(&sb, &a->ntext);
		pthread_mutex_unlock(&a->mu);
		x_free(old);
	}
	pt_sb_free(&sb);
	flags_of(r, n, flags, sizeof(flags));
	if (strcmp(flags, a->last_flags)) {
		for (size_t i = 0; i < n; i++) {
			char tok[32];
			snprintf(tok, sizeof(tok), ",%lld,", (long long)r[i].rank);
			if (r[i].flagged && !strstr(a->last_flags, tok))
				logf_(a, "watch: rank %lld: straggler score %.2f, %.1f ms late per step "
				      "at %s (process group %s, sequence %lld)", (long long)r[i].rank,
				      r[i].score, r[i].late_s * 1e3, r[i].at_name, r[i].at_pg,
				      (long long)r[i].at_seq);
		}
	}
	if (n && (strcmp(flags, a->last_flags) || now - a->last_node >= NODE_FILE_EVERY_S)) {
		pt_error e;
		pt_error_clear(&e);
		if (pt_watch_node_write(a->dir, a->host, now, r, n, &e) == PT_OK) {
			a->last_node = now;
			snprintf(a->last_flags, sizeof(a->last_flags), "%s", flags);
		}
	}
}

static void *main_loop(void *arg)
{
	pt_agent_watch *a = arg;
	sigset_t all;
	struct timespec next;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_setname_np(pthread_self(), "pt-agent-watch");
	pthread_mutex_lock(&a->mu);
	while (!a->stop) {
		pthread_mutex_unlock(&a->mu);
		round_once(a);
		pthread_mutex_lock(&a->mu);
		pt_clock_mono_deadline(&next, a->o.interval_s > 0 ? a->o.interval_s : 1.0);
		while (!a->stop && pthread_cond_timedwait(&a->cv, &a->mu, &next) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

pt_agent_watch *pt_agent_watch_start(const pt_agent_watch_options *o, pt_error *err)
{
	pt_agent_watch *a = x_calloc(1, sizeof(*a));
	pthread_condattr_t ca;

	if (!a) {
		pt_error_set(err, PT_ENOMEM, -1, "out of memory");
		return NULL;
	}
	a->o = *o;
	snprintf(a->dir, sizeof(a->dir), "%s", o->dir);
	snprintf(a->ndir, sizeof(a->ndir), "%s", o->ndir ? o->ndir : "");
	snprintf(a->host, sizeof(a->host), "%s", o->host);
	snprintf(a->job, sizeof(a->job), "%s", o->job ? o->job : "");
	a->w = pt_watch_new(NULL);
	pthread_mutex_init(&a->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&a->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (!a->w || pthread_create(&a->th, NULL, main_loop, a)) {
		pt_error_set(err, PT_EIO, -1, "cannot start the watch thread");
		pt_watch_free(a->w);
		x_free(a);
		return NULL;
	}
	a->running = 1;
	serve(a);
	return a;
}

void pt_agent_watch_stop(pt_agent_watch *a)
{
	if (!a)
		return;
	if (a->mhd)
		MHD_stop_daemon(a->mhd);
	pthread_mutex_lock(&a->mu);
	a->stop = 1;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	if (a->running)
		pthread_join(a->th, NULL);
	pt_watch_free(a->w);
	x_free(a->text);
	pthread_cond_destroy(&a->cv);
	pthread_mutex_destroy(&a->mu);
	x_free(a);
}
