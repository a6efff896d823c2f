/*
 * nodesim.c - the control plane of a large job on one machine: N simulated
 * nodes x W simulated workers against one control directory, counting the
 * operations that reach the shared part (docs/bench.md, "Control plane at
 * scale").
 *
 * Agents are the real thing (pt_agent from build/libptcli.a, driven by
 * pt_agent_tick, hardware sampling off).  Workers follow the collector's
 * loop (python/perftracker/collector_bg.c) with the same library calls: in
 * agent mode a local record every heartbeat, a stat of the node channel's
 * trigger and stack-request mirrors every poll and an flock probe twice a
 * second; in direct mode (the protocol before the node channel, the
 * baseline) registration, a heartbeat in heartbeats/ and stats of
 * trigger.json and stacks/request.json in the shared directory; fallback
 * mode is direct at the documented lower rates (no agents).  Every
 * operation that names a path under the shared directory (open, stat,
 * rename, unlink, mkdir, opendir, access, fopen) is counted by link-time
 * wrappers (mk/nodesim.mk), for agents and workers apart.  After warm-up a
 * trigger is written; the time until each worker arms (sees it) is the
 * trigger-to-armed latency.
 *
 *   nodesim [--nodes N] [--workers W] [--seconds S] [--mode agent|direct|fallback]
 *           [--procs P] [--dilate F] [--dir DIR] [--rate STEPS/S] [--json]
 *
 * --dilate F runs every interval (polls, heartbeats, the agent's timers) F
 * times slower and reports rates and latencies in the job's time, so that
 * a loaded machine keeps up with many nodes (the longest pass over the
 * nodes, reported, must stay well below the 250 ms poll).
 * --procs splits the nodes over P processes (a 2-core machine runs 1,250
 * nodes x 8 workers with 2); the shared directory is a local one
 * (mktemp under /tmp) unless --dir names another.
 */
#include <dirent.h>
#include <ftw.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent.h"
#include "control/control.h"
#include "control/nodechan.h"
#include "util/xalloc.h"

/* ---- counting ---------------------------------------------------------------- */

enum { R_NONE, R_AGENT, R_WORKER, R_SIM, R_N };
static int role;
static unsigned long long ops[R_N];
static char shared[PT_CONTROL_PATH_MAX];
static size_t shared_len;

static void count(const char *path)
{
	if (shared_len && path && !strncmp(path, shared, shared_len) &&
	    (path[shared_len] == '/' || !path[shared_len]))
		ops[role]++;
}

#define WRAP(ret, name, proto, args, path)                                       \
	ret __real_##name proto;                                                 \
	ret __wrap_##name proto                                                  \
	{                                                                        \
		count(path);                                                     \
		return __real_##name args;                                       \
	}

WRAP(int, stat, (const char *p, struct stat *st), (p, st), p)
WRAP(int, lstat, (const char *p, struct stat *st), (p, st), p)
WRAP(int, rename, (const char *a, const char *b), (a, b), a)
WRAP(int, unlink, (const char *p), (p), p)
WRAP(int, mkdir, (const char *p, mode_t m), (p, m), p)
WRAP(int, rmdir, (const char *p), (p), p)
WRAP(DIR *, opendir, (const char *p), (p), p)
WRAP(int, access, (const char *p, int m), (p, m), p)
WRAP(FILE *, fopen, (const char *p, const char *m), (p, m), p)

int __real_open(const char *p, int flags, ...);
int __wrap_open(const char *p, int flags, ...)
{
	mode_t m = 0;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;

		va_start(ap, flags);
		m = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	count(p);
	return __real_open(p, flags, m);
}

/* ---- the simulation ----------------------------------------------------------- */

enum { MODE_AGENT, MODE_DIRECT, MODE_FALLBACK };

typedef struct sworker {
	pt_node_worker rec;
	int node;
	double next_hb, next_poll, next_probe, next_reg;
	struct timespec tmtime, rmtime;
	double armed_at;          /* when it saw the trigger (0 not yet) */
	int registered;
} sworker;

typedef struct snode {
	pt_agent a;
	char ndir[PT_CONTROL_PATH_MAX];
	char host[64];
	int dead;
	double next_tick;
} snode;

static double now_s(void)
{
	return pt_control_now();
}

static int cmp_dbl(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/* The worker sees a trigger in `path` (stat; read on change). */
static int sees_trigger(const char *tdir, struct timespec *last, const char *want)
{
	char p[PT_CONTROL_PATH_MAX];
	struct stat st;
	pt_trigger t;
	int yes = 0;

	if (pt_control_path(p, sizeof(p), tdir, "trigger.json") || stat(p, &st) != 0)
		return 0;
	if (st.st_mtim.tv_sec == last->tv_sec && st.st_mtim.tv_nsec == last->tv_nsec)
		return 0;
	*last = st.st_mtim;
	if (pt_control_trigger_read(tdir, &t, NULL) == PT_OK)
		yes = !strcmp(t.id, want) && !strcmp(t.state, PT_TRIGGER_ACTIVE);
	pt_control_trigger_clear(&t);
	return yes;
}

static void stat_quiet(const char *p, struct timespec *last)
{
	struct stat st;

	if (stat(p, &st) == 0)
		*last = st.st_mtim;
}

typedef struct cfg {
	int nodes, per, mode, procs;
	double seconds, rate, poll, hb, t0;
	double dilate;            /* every interval x this (--dilate) */
	const char *dir;
	char nbase[PT_CONTROL_PATH_MAX / 2];
	char tid[PT_CONTROL_TID_MAX];
} cfg;

/* What one process of the simulation reports to the parent. */
typedef struct result {
	unsigned long long before[R_N], after[R_N];
	double before_t, after_t, trig_at, cpu;
	double pass_max;          /* longest pass over this process's nodes (s) */
	size_t nlat;
} result;

static int write_all(int fd, const void *p, size_t n)
{
	const char *b = p;

	while (n) {
		ssize_t w = write(fd, b, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

static int read_all(int fd, void *p, size_t n)
{
	char *b = p;

	while (n) {
		ssize_t r = read(fd, b, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

/* Nodes [first, first + count) with their workers; the process with
 * writer set writes the trigger.  Results (result, then nlat latencies)
 * go to fd. */
static int simulate(const cfg *c, int first, int count, int writer, int fd)
{
	const char *dir = c->dir;
	int per = c->per, mode = c->mode;
	double rate = c->rate, poll = c->poll, hb = c->hb, t0 = c->t0;
	double trig_at = t0 + c->seconds / 2, end = t0 + c->seconds;
	char sreq[PT_CONTROL_PATH_MAX];
	int seen = 0;
	snode *N;
	sworker *W;
	size_t nw;
	double *lat;
	struct rusage ru;
	pt_trigger t;
	result res;

	memset(&res, 0, sizeof(res));
	pt_control_stacks_request_path(sreq, sizeof(sreq), dir);
	N = x_calloc((size_t)count, sizeof(*N));
	nw = (size_t)count * (size_t)per;
	W = x_calloc(nw, sizeof(*W));
	lat = x_calloc(nw, sizeof(*lat));
	if (!N || !W || !lat) {
		fprintf(stderr, "nodesim: out of memory\n");
		return 1;
	}
	role = R_AGENT;
	for (int k = 0; k < count; k++) {
		snode *n = &N[k];
		char spool[PT_CONTROL_PATH_MAX];

		snprintf(n->host, sizeof(n->host), "sim%05d", first + k);
		snprintf(spool, sizeof(spool), "%s/spool-%s", c->nbase, n->host);
		pt_agent_init(&n->a, dir, spool, n->host);
		n->a.hw_off = 1;
		n->a.poll_s *= c->dilate;
		n->a.trigger_poll_s *= c->dilate;
		n->a.stacks_poll_s *= c->dilate;
		n->a.node_min_s *= c->dilate;
		n->a.node_progress_s *= c->dilate;
		n->a.node_max_s *= c->dilate;
		n->a.lock_check_s *= c->dilate;
		snprintf(n->ndir, sizeof(n->ndir), "%s", n->a.ndir);
		pt_nodechan_prepare(n->ndir, NULL);
		if (mode == MODE_AGENT && pt_agent_lock(&n->a, NULL) != PT_OK) {
			fprintf(stderr, "nodesim: cannot lock agent %s\n", n->host);
			return 1;
		}
		n->dead = mode != MODE_AGENT;
		/* Agents start at different moments: spread their timers' phases
		 * (golden-ratio sequence) so that a trigger meets every phase. */
		{
			double ph = (double)(first + k) * 0.6180339887;

			ph -= (double)(long long)ph;
			n->next_tick = t0 + n->a.poll_s * ph;
			n->a.trig_stat = t0 - n->a.trigger_poll_s * ph;
			n->a.req_stat = t0 - n->a.stacks_poll_s * ph;
			n->a.node_last = t0 - n->a.node_min_s * ph;
		}
	}
	role = R_WORKER;
	for (size_t i = 0; i < nw; i++) {
		sworker *w = &W[i];
		pt_worker_info *in = &w->rec.e.info;
		int k = (int)(i / (size_t)per);
		size_t g = (size_t)first * (size_t)per + i;  /* global rank */

		w->node = k;
		snprintf(in->host, sizeof(in->host), "%s", N[k].host);
		snprintf(in->node, sizeof(in->node), "simnode");
		in->rank = (int64_t)g;
		in->local_rank = (int64_t)(i % (size_t)per);
		in->world_size = (int64_t)c->nodes * per;
		in->local_world_size = per;
		in->pid = 1000000 + (int64_t)g;  /* another node's pid: never checked */
		in->started = t0;
		pt_control_worker_id(in->id, sizeof(in->id), in->host, in->rank, in->pid);
		/* Spread the workers' timers over one period, as real processes are. */
		w->next_hb = t0 + hb * (double)(g % 97) / 97.0;
		w->next_poll = t0 + poll * (double)(g % 89) / 89.0;
		w->next_probe = w->next_poll;
		snprintf(w->rec.e.hb.state, sizeof(w->rec.e.hb.state), PT_STATE_IDLE);
		w->rec.e.has_hb = 1;
	}
	role = R_NONE;
	memset(&t, 0, sizeof(t));
	for (;;) {
		double now = now_s();
		struct timespec ts = { 0, 5000000L };

		if (now >= end && (res.nlat == nw || now >= end + 30))
			break;
		/* The measured idle part: the quarter before the trigger. */
		if (!res.before_t && now >= trig_at - c->seconds / 4) {
			memcpy(res.before, ops, sizeof(ops));
			res.before_t = now;
		}
		if (!seen && now >= trig_at) {
			memcpy(res.after, ops, sizeof(ops));
			res.after_t = now;
			seen = 1;
			if (writer) {
				role = R_SIM;
				snprintf(t.id, sizeof(t.id), "%s", c->tid);
				snprintf(t.state, sizeof(t.state), PT_TRIGGER_ACTIVE);
				t.start_step = (int64_t)((now - t0 + 3600) * rate);
				t.steps = 2;
				t.wait = 5;
				t.created = now;
				t.deadline = now + 3600;
				snprintf(t.run_dir, sizeof(t.run_dir), "%s/out", dir);
				snprintf(t.raw_dir, sizeof(t.raw_dir), "%s/out/raw_trace", dir);
				pt_control_trigger_write(dir, &t, NULL);
				role = R_NONE;
			}
			res.trig_at = trig_at;
		}
		/* Agents: pt_agent_tick every poll_s, as pt_agent_run. */
		role = R_AGENT;
		for (int k = 0; k < count; k++)
			if (!N[k].dead && now >= N[k].next_tick) {
				N[k].next_tick = now + N[k].a.poll_s;
				pt_agent_tick(&N[k].a, now);
			}
		/* Workers: the collector's timers. */
		role = R_WORKER;
		for (size_t i = 0; i < nw; i++) {
			sworker *w = &W[i];
			snode *n = &N[w->node];
			int direct = mode != MODE_AGENT;
			double hbp = mode == MODE_FALLBACK ? hb * 5 : hb;
			double pp = mode == MODE_FALLBACK ? poll * 20 : poll;

			if (now >= w->next_hb) {
				w->next_hb += hbp;
				w->rec.e.hb.step = (int64_t)((now - t0) * rate);
				w->rec.e.hb.step_time = now;
				w->rec.e.hb.time = now;
				w->rec.e.hb.rate = rate;
				if (!direct) {
					pt_nodechan_worker_write(n->ndir, &w->rec, NULL);
				} else {
					if (!w->registered && pt_control_register(dir, &w->rec.e.info,
										  NULL) == PT_OK)
						w->registered = 1;
					pt_control_heartbeat_write(dir, w->rec.e.info.id, &w->rec.e.hb,
								   NULL);
				}
			}
			if (now >= w->next_poll) {
				const char *tdir = direct ? dir : n->ndir;
				char p[PT_CONTROL_PATH_MAX];

				w->next_poll += pp;
				if (!direct && now >= w->next_probe) {
					w->next_probe += 0.5 * c->dilate;
					pt_nodechan_agent_alive(n->ndir);
				}
				if (!w->armed_at && sees_trigger(tdir, &w->tmtime, c->tid) && seen) {
					w->armed_at = now;
					lat[res.nlat++] = now - trig_at;
				}
				if (direct)
					stat_quiet(sreq, &w->rmtime);
				else if (pt_nodechan_file(p, sizeof(p), n->ndir,
							  PT_NODECHAN_STACKS_REQUEST) == 0)
					stat_quiet(p, &w->rmtime);
			}
		}
		role = R_NONE;
		if (now_s() - now > res.pass_max && now > t0 + 2)
			res.pass_max = now_s() - now;
		nanosleep(&ts, NULL);
	}
	getrusage(RUSAGE_SELF, &ru);
	res.cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
		  (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	for (int k = 0; k < count; k++)
		pt_agent_free(&N[k].a);
	write_all(fd, &res, sizeof(res));
	write_all(fd, lat, res.nlat * sizeof(*lat));
	x_free(N);
	x_free(W);
	x_free(lat);
	return 0;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	return remove(p);
}

/* rm -rf of a directory this program made. */
static void rm_tree(const char *p)
{
	nftw(p, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int main(int argc, char **argv)
{
	cfg c = { .nodes = 10, .per = 8, .mode = MODE_AGENT, .procs = 1, .seconds = 20,
		  .rate = 10, .poll = 0.25, .hb = 1.0, .dilate = 1 };
	int json = 0, fds[64][2];
	pid_t kids[64];
	char tmpl[] = "/tmp/pt_nodesim_XXXXXX", ntmpl[] = "/dev/shm/pt_nodesim_XXXXXX";
	unsigned long long a_ops = 0, w_ops = 0;
	double idle_s = 0, cpu = 0, p50 = 0, p99 = 0, mx = 0, pass = 0, *lat;
	size_t nw, nlat = 0;
	int rc = 0;

	for (int i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(o, "--nodes") && v)
			c.nodes = atoi(argv[++i]);
		else if (!strcmp(o, "--workers") && v)
			c.per = atoi(argv[++i]);
		else if (!strcmp(o, "--seconds") && v)
			c.seconds = atof(argv[++i]);
		else if (!strcmp(o, "--rate") && v)
			c.rate = atof(argv[++i]);
		else if (!strcmp(o, "--dilate") && v)
			c.dilate = atof(argv[++i]);
		else if (!strcmp(o, "--procs") && v)
			c.procs = atoi(argv[++i]);
		else if (!strcmp(o, "--dir") && v)
			c.dir = argv[++i];
		else if (!strcmp(o, "--json"))
			json = 1;
		else if (!strcmp(o, "--mode") && v) {
			v = argv[++i];
			c.mode = !strcmp(v, "direct") ? MODE_DIRECT : !strcmp(v, "fallback")
				? MODE_FALLBACK : MODE_AGENT;
		} else {
			fprintf(stderr, "usage: nodesim [--nodes N] [--workers W] [--seconds S] "
				"[--mode agent|direct|fallback] [--procs P] [--dilate F] [--dir DIR] "
				"[--rate R] "
				"[--json]\n");
			return 2;
		}
	}
	if (c.dilate < 1 || c.dilate > 100) {
		fprintf(stderr, "nodesim: --dilate must be 1-100\n");
		return 2;
	}
	/* Dilated time: every interval (and the run) F times longer, the
	 * step rate F times lower; rates and latencies are given back in the
	 * job's own time (ops x F, latency / F). */
	c.poll *= c.dilate;
	c.hb *= c.dilate;
	c.rate /= c.dilate;
	c.seconds *= c.dilate;
	if (c.nodes < 1 || c.per < 1 || c.seconds < 4 || c.procs < 1 || c.procs > 64 ||
	    c.procs > c.nodes) {
		fprintf(stderr, "nodesim: need --nodes >= 1, --workers >= 1, --seconds >= 4, "
			"1 <= --procs <= min(64, nodes)\n");
		return 2;
	}
	if (!c.dir && !(c.dir = mkdtemp(tmpl))) {
		perror("nodesim: mkdtemp");
		return 1;
	}
	if (!mkdtemp(ntmpl)) {
		perror("nodesim: mkdtemp /dev/shm");
		return 1;
	}
	snprintf(c.nbase, sizeof(c.nbase), "%s", ntmpl);
	setenv("PERFTRACKER_NODE_DIR", c.nbase, 1);
	snprintf(shared, sizeof(shared), "%s", c.dir);
	shared_len = strlen(shared);
	pt_control_mkdirs(c.dir, NULL);
	snprintf(c.tid, sizeof(c.tid), "nodesim-%ld", (long)getpid());
	c.t0 = now_s() + 0.5;
	nw = (size_t)c.nodes * (size_t)c.per;
	lat = x_calloc(nw, sizeof(*lat));
	if (!lat)
		return 1;
	for (int k = 0; k < c.procs; k++) {
		int first = (int)((long long)c.nodes * k / c.procs);
		int next = (int)((long long)c.nodes * (k + 1) / c.procs);

		if (pipe(fds[k]) != 0 || (kids[k] = fork()) < 0) {
			perror("nodesim: fork");
			return 1;
		}
		if (kids[k] == 0) {
			close(fds[k][0]);
			_exit(simulate(&c, first, next - first, k == 0, fds[k][1]));
		}
		close(fds[k][1]);
	}
	for (int k = 0; k < c.procs; k++) {
		result r;

		if (read_all(fds[k][0], &r, sizeof(r)) ||
		    (r.nlat && read_all(fds[k][0], lat + nlat, r.nlat * sizeof(*lat)))) {
			fprintf(stderr, "nodesim: process %d failed\n", k);
			rc = 1;
			continue;
		}
		nlat += r.nlat;
		a_ops += r.after[R_AGENT] - r.before[R_AGENT];
		w_ops += r.after[R_WORKER] - r.before[R_WORKER];
		/* Every process measures the same quarter; its own clock. */
		idle_s += (r.after_t - r.before_t) / c.procs;
		cpu += r.cpu;
		if (r.pass_max > pass)
			pass = r.pass_max;
		close(fds[k][0]);
		waitpid(kids[k], NULL, 0);
	}
	idle_s /= c.dilate;
	pass /= c.dilate;
	for (size_t i = 0; i < nlat; i++)
		lat[i] /= c.dilate;
	if (nlat) {
		qsort(lat, nlat, sizeof(*lat), cmp_dbl);
		p50 = lat[nlat / 2];
		p99 = lat[(size_t)((double)(nlat - 1) * 0.99)];
		mx = lat[nlat - 1];
	}
	{
		const char *m = c.mode == MODE_AGENT ? "agent" : c.mode == MODE_DIRECT ? "direct"
										   : "fallback";
		double tot = (double)(a_ops + w_ops) / idle_s;

		if (json)
			printf("{\"mode\":\"%s\",\"nodes\":%d,\"workers_per_node\":%d,\"workers\":%zu,"
			       "\"procs\":%d,\"dilate\":%g,\"idle_seconds\":%.2f,\"agent_ops_per_s\":%.2f,"
			       "\"worker_ops_per_s\":%.2f,\"shared_ops_per_s\":%.2f,"
			       "\"per_node_ops_per_s\":%.3f,\"per_worker_ops_per_s\":%.4f,\"armed\":%zu,"
			       "\"latency_p50_s\":%.3f,\"latency_p99_s\":%.3f,\"latency_max_s\":%.3f,"
			       "\"cpu_s\":%.1f,\"pass_max_s\":%.3f}\n", m, c.nodes, c.per, nw, c.procs,
			       c.dilate, idle_s, (double)a_ops / idle_s, (double)w_ops / idle_s, tot, tot / c.nodes,
			       tot / (double)nw, nlat, p50, p99, mx, cpu, pass);
		else
			printf("%s: %d nodes x %d workers: idle %.1f s: shared ops/s %.1f (agents %.1f, "
			       "workers %.1f) = %.3f per node, %.4f per worker; trigger to armed: "
			       "%zu/%zu workers, p50 %.3f s, p99 %.3f s, max %.3f s; cpu %.1f s; longest pass "
			       "%.3f s\n", m,
			       c.nodes, c.per, idle_s, tot, (double)a_ops / idle_s,
			       (double)w_ops / idle_s, tot / c.nodes, tot / (double)nw, nlat, nw, p50,
			       p99, mx, cpu, pass);
	}
	x_free(lat);
	if (c.dir == tmpl)
		rm_tree(tmpl);
	rm_tree(ntmpl);
	return rc || nlat != nw ? 1 : 0;
}
