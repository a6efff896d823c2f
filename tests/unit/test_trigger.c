/*
 * test_trigger.c - unit tests for the master's side of the trigger protocol
 * (src/control/trigger.c): the step estimate, who is expected and the start
 * step, the lock, each worker followed through armed / profiling / traced /
 * summarized / failed / missing from fake status records, heartbeats and
 * node files (agents/<host>.json as the node agent writes them), the
 * deadline, the agent warning, and the summaries collected with the reason
 * every other worker delivered none.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"

#include "analysis/summary.h"
#include "control/control.h"
#include "control/nodechan.h"
#include "control/trigger.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

static char root[256], ctl[300], out[300], node[PT_CONTROL_HOST_MAX];
static char notes[8][700];
static int nnotes, nerrors;

static const char *data_dir(void)
{
	const char *d = getenv("PT_DATA");

	return d && *d ? d : "tests/data";
}

static void on_note(void *ctx, int is_error, const char *msg)
{
	(void)ctx;
	if (nnotes < 8)
		snprintf(notes[nnotes], sizeof(notes[0]), "%s", msg);
	nnotes++;
	nerrors += is_error;
}

static int setup(void **state)
{
	char nd[300];

	(void)state;
	tu_tmpdir(root, sizeof(root), "pt_test_trigger");
	snprintf(ctl, sizeof(ctl), "%s/control", root);
	snprintf(out, sizeof(out), "%s/out", root);
	snprintf(nd, sizeof(nd), "%s/node", root);
	mkdir(nd, 0700);
	setenv("PERFTRACKER_NODE_DIR", nd, 1);
	pt_control_nodename(node, sizeof(node));
	nnotes = nerrors = 0;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tu_rm_rf(root);
	unsetenv("PERFTRACKER_NODE_DIR");
	return 0;
}

static pt_node_worker worker(const char *host, const char *wnode, int64_t rank, int64_t pid,
			     int64_t step, double rate, double hbtime)
{
	pt_node_worker w;

	memset(&w, 0, sizeof(w));
	snprintf(w.e.info.host, sizeof(w.e.info.host), "%s", host);
	snprintf(w.e.info.node, sizeof(w.e.info.node), "%s", wnode);
	w.e.info.rank = rank;
	w.e.info.world_size = 4;
	w.e.info.pid = pid;
	w.e.info.started = hbtime - 100;
	pt_control_worker_id(w.e.info.id, sizeof(w.e.info.id), host, rank, pid);
	w.e.has_hb = 1;
	w.e.hb.step = step;
	w.e.hb.step_time = hbtime;
	w.e.hb.time = hbtime;
	w.e.hb.rate = rate;
	snprintf(w.e.hb.state, sizeof(w.e.hb.state), PT_STATE_IDLE);
	return w;
}

/* A worker that talks to the shared directory itself (no agent). */
static void direct(const pt_node_worker *w)
{
	assert_int_equal(pt_control_register(ctl, &w->e.info, NULL), PT_OK);
	assert_int_equal(pt_control_heartbeat_write(ctl, w->e.info.id, &w->e.hb, NULL), PT_OK);
}

/* agents/<host>.json as the node agent writes it. */
static void node_file(const char *host, const pt_node_worker *w, size_t n, double time)
{
	pt_node_agent na;
	pt_sb sb = { 0 };
	char p[PT_CONTROL_PATH_MAX];

	memset(&na, 0, sizeof(na));
	snprintf(na.host, sizeof(na.host), "%s", host);
	snprintf(na.node, sizeof(na.node), "othermachine");
	na.pid = 77;
	na.time = time;
	pt_nodechan_node_json(&sb, &na, w, n);
	assert_false(sb.oom);
	assert_int_equal(pt_control_agent_hb_path(p, sizeof(p), ctl, host), 0);
	assert_int_equal(pt_control_write_atomic(p, sb.buf, sb.len, NULL), PT_OK);
	pt_sb_free(&sb);
}

static void status(const char *tid, const char *wid, const char *state, const char *error)
{
	pt_wstatus s;

	memset(&s, 0, sizeof(s));
	snprintf(s.state, sizeof(s.state), "%s", state);
	snprintf(s.error, sizeof(s.error), "%s", error ? error : "");
	s.time = pt_control_now();
	assert_int_equal(pt_control_status_write(ctl, tid, wid, &s, NULL), PT_OK);
}

/* summaries/<tid>/<wid>.json: a real worker summary, or text. */
static void summary(const char *tid, const char *wid, const char *text)
{
	char p[PT_CONTROL_PATH_MAX], src[512], *buf = NULL;
	size_t len = 0;

	assert_int_equal(pt_control_record_path(p, sizeof(p), ctl, "summaries", tid, wid), 0);
	if (text) {
		assert_int_equal(pt_control_write_atomic(p, text, strlen(text), NULL), PT_OK);
		return;
	}
	snprintf(src, sizeof(src), "%s/demo_cpu4/vm_0_30069.summary.json", data_dir());
	assert_int_equal(pt_control_read_file(src, (size_t)1 << 26, &buf, &len, NULL), PT_OK);
	assert_int_equal(pt_control_write_atomic(p, buf, len, NULL), PT_OK);
	x_free(buf);
}

static pt_trigger_options options(void)
{
	pt_trigger_options o;

	memset(&o, 0, sizeof(o));
	o.dir = ctl;
	o.outdir = out;
	o.wait = 5;
	o.steps = 2;
	o.stale = 30;
	o.reason = "unit test";
	o.note = on_note;
	return o;
}

static int state_of(const pt_trigger_run *r, const char *id)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->w[i].e.info.id, id))
			return r->w[i].state;
	fail_msg("worker '%s' not expected", id);
	return -1;
}

static const pt_trigger_worker *worker_of(const pt_trigger_run *r, const char *id)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->w[i].e.info.id, id))
			return &r->w[i];
	fail_msg("worker '%s' not expected", id);
	return NULL;
}

static void assert_counts(const int *c, int waiting, int armed, int profiling, int traced,
			  int summarized, int failed, int missing)
{
	assert_int_equal(c[PT_TW_WAITING], waiting);
	assert_int_equal(c[PT_TW_ARMED], armed);
	assert_int_equal(c[PT_TW_PROFILING], profiling);
	assert_int_equal(c[PT_TW_TRACED], traced);
	assert_int_equal(c[PT_TW_SUMMARIZED], summarized);
	assert_int_equal(c[PT_TW_FAILED], failed);
	assert_int_equal(c[PT_TW_MISSING], missing);
}

/* Its step plus rate x the time since its last step, at most 30 s worth,
 * none once it stopped stepping. */
static void test_est_step_adds_at_most_30_s_of_steps(void **state)
{
	pt_node_worker w = worker("h", "othermachine", 0, 1, 100, 4, 1000);

	(void)state;
	assert_true(pt_trigger_est_step(&w.e, 1000) == 100);
	assert_true(pt_trigger_est_step(&w.e, 1002.5) == 110);
	assert_true(pt_trigger_est_step(&w.e, 1009) == 136);
	assert_true(pt_trigger_est_step(&w.e, 1100) == 100);   /* no step for 100 s: stopped */
	w.e.hb.rate = 0.05;                                    /* 20 s steps: 59 s is not long */
	assert_true(pt_trigger_est_step(&w.e, 1020) == 101);
	assert_true(pt_trigger_est_step(&w.e, 1059) == 101.5); /* at most 30 s worth */
	assert_true(pt_trigger_est_step(&w.e, 1061) == 100);   /* 3 step times: stopped */
	w.e.hb.rate = 4;
	assert_true(pt_trigger_est_step(&w.e, 990) == 100);    /* clock behind */
	w.e.hb.rate = 0;
	assert_true(pt_trigger_est_step(&w.e, 1010) == 100);
	w.e.hb.rate = 4;
	w.e.has_hb = 0;
	assert_true(pt_trigger_est_step(&w.e, 1010) == 100);
}

/* The live workers are expected (a stale one is not); the start step is
 * the furthest estimate + 3 s of the fastest rate + wait; the timeout
 * follows the slowest rate; trigger.json and the lock are written; a
 * second trigger meets the lock. */
static void test_start_expects_live_workers_from_one_start_step(void **state)
{
	double now = pt_control_now();
	pt_node_worker a = worker("hostA", node, 0, getpid(), 100, 10, now - 1);
	pt_node_worker b = worker("hostA", "othermachine", 1, 4242, 98, 5, now);
	pt_node_worker c = worker("hostB", "othermachine", 2, 4343, 90, 20, now);
	pt_node_worker d = worker("hostA", "othermachine", 3, 4444, 99, 10, now - 100);
	pt_trigger_options o = options();
	pt_trigger_run r, r2;
	pt_trigger t;
	pt_error e;
	char lock[PT_CONTROL_PATH_MAX];
	struct stat st;

	(void)state;
	direct(&a);
	direct(&b);
	direct(&d);
	c.e.info.world_size = 8;
	node_file("hostB", &c, 1, now);
	pt_error_clear(&e);
	assert_int_equal(pt_trigger_start(&r, &o, now, &e), PT_OK);
	assert_int_equal(r.n, 3);
	assert_int_equal(r.nregistered, 4);
	assert_string_equal(r.w[0].e.info.id, a.e.info.id);
	assert_string_equal(r.w[1].e.info.id, b.e.info.id);
	assert_string_equal(r.w[2].e.info.id, c.e.info.id);
	assert_int_equal(r.cur, 110);                  /* 100 + 10/s x 1 s */
	assert_int_equal(r.t.start_step, 110 + 60 + 5);
	/* (175 - 110 + 2 steps) at the slowest 5/s, twice, + 60 s */
	assert_true(r.timeout > 86.8 - 1e-9 && r.timeout < 86.8 + 1e-9);
	assert_true(r.t.deadline == now + r.timeout);
	assert_int_equal(nnotes, 1);
	snprintf(lock, sizeof(lock), "3 live workers but world size 8: the others are not "
		 "registered in '%s'", ctl);
	assert_string_equal(notes[0], lock);
	/* trigger.json names the window and the expected workers. */
	memset(&t, 0, sizeof(t));
	assert_int_equal(pt_control_trigger_read(ctl, &t, NULL), PT_OK);
	assert_string_equal(t.id, r.t.id);
	assert_string_equal(t.state, PT_TRIGGER_ACTIVE);
	assert_int_equal(t.start_step, 175);
	assert_int_equal(t.steps, 2);
	assert_string_equal(t.reason, "unit test");
	assert_int_equal(t.nworkers, 3);
	assert_string_equal(t.workers[2], c.e.info.id);
	assert_int_equal(strncmp(t.run_dir, out, strlen(out)), 0);
	pt_control_trigger_clear(&t);
	assert_int_equal(stat(r.t.run_dir, &st), -1);  /* named, made by the first file */
	/* One trigger at a time. */
	assert_int_equal(pt_control_path(lock, sizeof(lock), ctl, "trigger.lock"), 0);
	assert_int_equal(stat(lock, &st), 0);
	pt_error_clear(&e);
	assert_int_equal(pt_trigger_start(&r2, &o, now, &e), PT_EINVAL);
	assert_non_null(strstr(e.msg, "a trigger is already running: '"));
	assert_non_null(strstr(e.msg, r.t.id));
	pt_trigger_end(&r2);
	assert_int_equal(stat(lock, &st), 0);          /* not the loser's to remove */
	/* The end: trigger done, lock gone. */
	pt_trigger_end(&r);
	assert_int_equal(stat(lock, &st), -1);
	memset(&t, 0, sizeof(t));
	assert_int_equal(pt_control_trigger_read(ctl, &t, NULL), PT_OK);
	assert_string_equal(t.state, PT_TRIGGER_DONE);
	pt_control_trigger_clear(&t);
}

/* A worker that saw the round after its start step (status "late"): the
 * round is re-armed for every worker under a new id and a later start step
 * (twice the margin: 6 s of the fastest rate past the fresh estimate), the
 * old round's records go, and after the last allowed round a late worker
 * is not re-armed again. */
static void test_rearm_moves_every_worker_to_a_later_round(void **state)
{
	double now = pt_control_now();
	pt_node_worker a = worker("hostA", "othermachine", 0, 4242, 100, 10, now);
	pt_node_worker b = worker("hostA", "othermachine", 1, 4343, 100, 10, now);
	pt_trigger_options o = options();
	pt_trigger_run r;
	pt_trigger t;
	pt_error e;
	char first[PT_CONTROL_TID_MAX], old[PT_CONTROL_TID_MAX], p[PT_CONTROL_PATH_MAX];
	int cnt[PT_TW_NSTATES];
	struct stat st;
	pt_sb sb = { 0 };

	(void)state;
	o.rounds = 2;
	direct(&a);
	direct(&b);
	pt_error_clear(&e);
	assert_int_equal(pt_trigger_start(&r, &o, now, &e), PT_OK);
	assert_int_equal(r.t.start_step, 100 + 30 + 5);
	assert_int_equal(r.t.round, 0);
	assert_int_equal(r.t.rounds, 2);
	snprintf(first, sizeof(first), "%s", r.t.id);
	assert_string_equal(r.t.first_id, first);
	/* Nobody late: nothing to do. */
	assert_int_equal(pt_trigger_rearm(&r, now, &e), 0);
	status(first, a.e.info.id, PT_STATE_ARMED, NULL);
	status(first, b.e.info.id, PT_STATE_LATE, "saw the trigger at step 140, after its start "
	       "step 135");
	pt_trigger_poll(&r, now, cnt, NULL, NULL);
	assert_int_equal(cnt[PT_TW_LATE], 1);
	assert_int_equal(cnt[PT_TW_ARMED], 1);
	pt_trigger_awaited(&r, &sb, 4);
	assert_string_equal(sb.buf, "rank 0 (armed, step 100 of 135), rank 1 (late, step 100)");
	pt_sb_free(&sb);
	/* The workers moved on meanwhile: the new start is past their fresh
	 * estimate by 6 s of steps. */
	a.e.hb.step = b.e.hb.step = 150;
	a.e.hb.time = b.e.hb.time = now + 1;
	a.e.hb.step_time = b.e.hb.step_time = now + 1;
	direct(&a);
	direct(&b);
	assert_int_equal(pt_trigger_rearm(&r, now + 1, &e), 1);
	assert_string_not_equal(r.t.id, first);
	assert_string_equal(r.t.first_id, first);
	assert_int_equal(r.t.round, 1);
	assert_int_equal(r.t.start_step, 150 + 60);
	assert_true(r.t.deadline > now + 1);
	assert_int_equal(state_of(&r, a.e.info.id), PT_TW_WAITING);
	assert_int_equal(state_of(&r, b.e.info.id), PT_TW_WAITING);
	assert_int_equal(pt_control_record_path(p, sizeof(p), ctl, "status", first, NULL), 0);
	assert_int_equal(stat(p, &st), -1);
	memset(&t, 0, sizeof(t));
	assert_int_equal(pt_control_trigger_read(ctl, &t, NULL), PT_OK);
	assert_string_equal(t.id, r.t.id);
	assert_int_equal(t.start_step, 210);
	assert_int_equal(t.round, 1);
	assert_string_equal(t.first_id, first);
	pt_control_trigger_clear(&t);
	/* Late again in round 1 of 2: round 2, the last. */
	status(r.t.id, b.e.info.id, PT_STATE_LATE, "again");
	pt_trigger_poll(&r, now + 2, cnt, NULL, NULL);
	snprintf(old, sizeof(old), "%s", r.t.id);
	assert_int_equal(pt_trigger_rearm(&r, now + 2, &e), 1);
	assert_int_equal(r.t.round, 2);
	assert_string_not_equal(r.t.id, old);
	/* Late in the last round: no more re-arms (workers profile late). */
	status(r.t.id, b.e.info.id, PT_STATE_LATE, "once more");
	pt_trigger_poll(&r, now + 3, cnt, NULL, NULL);
	assert_int_equal(pt_trigger_rearm(&r, now + 3, &e), 0);
	pt_trigger_end(&r);
}

/* The run directory's name is claimed (two jobs' triggers in the same
 * second get two names), the claim goes at the end, and a claim left by a
 * trigger killed outright is swept by the next one. */
static void test_run_dir_name_is_claimed(void **state)
{
	double now = pt_control_now();
	pt_node_worker a = worker("hostA", "othermachine", 0, 4242, 100, 10, now);
	pt_trigger_options o = options();
	pt_trigger_run r;
	pt_error e;
	char stale[600], text[400], claim[PT_CONTROL_PATH_MAX + 16];
	struct stat st;
	pid_t kid;

	(void)state;
	direct(&a);
	assert_int_equal(mkdir(out, 0700), 0);
	kid = tu_dead_pid();
	snprintf(stale, sizeof(stale), "%s/.20200101-000000.claim", out);
	snprintf(text, sizeof(text), "{\"pid\":%ld,\"node\":\"%s\"}\n", (long)kid, node);
	tu_write_text(stale, text);
	pt_error_clear(&e);
	assert_int_equal(pt_trigger_start(&r, &o, now, &e), PT_OK);
	assert_int_equal(stat(stale, &st), -1);
	snprintf(claim, sizeof(claim), "%s", r.claim);
	assert_int_equal(stat(claim, &st), 0);
	assert_int_equal(stat(r.t.run_dir, &st), -1);
	pt_trigger_end(&r);
	assert_int_equal(stat(claim, &st), -1);
}

/* Nobody alive: an error naming the directory, nothing written. */
static void test_start_without_live_worker_fails(void **state)
{
	double now = pt_control_now();
	pt_node_worker d = worker("hostA", "othermachine", 3, 4444, 99, 10, now - 100);
	pt_trigger_options o = options();
	pt_trigger_run r;
	pt_error e;
	char want[1024], lock[PT_CONTROL_PATH_MAX];
	struct stat st;

	(void)state;
	direct(&d);
	pt_error_clear(&e);
	assert_int_equal(pt_trigger_start(&r, &o, now, &e), PT_EINVAL);
	snprintf(want, sizeof(want), "no live worker in '%s' (1 registered): is the training "
		 "running with PerfTracker()? see 'perftracker status --control-dir %s'", ctl, ctl);
	assert_string_equal(e.msg, want);
	pt_trigger_end(&r);
	assert_int_equal(pt_control_path(lock, sizeof(lock), ctl, "trigger.lock"), 0);
	assert_int_equal(stat(lock, &st), -1);
}

/* Each worker through its states as its status records and node file say:
 * direct workers by status/<tid>/<wid>.json and summaries/<tid>/, the
 * node's worker by its agent's node file; an unregistered worker goes
 * missing at the next liveness look (once a second), a silent one after
 * stale seconds; a traced worker without an agent is said once. */
static void test_poll_follows_every_worker_to_the_end(void **state)
{
	double now = pt_control_now();
	pt_node_worker a = worker("hostA", node, 0, getpid(), 100, 10, now);
	pt_node_worker b = worker("hostA", "othermachine", 1, 4242, 100, 10, now);
	pt_node_worker c = worker("hostB", "othermachine", 2, 4343, 100, 10, now);
	pt_node_worker x = worker("hostA", "othermachine", 3, 4444, 100, 10, now);
	pt_node_worker y = worker("hostA", "othermachine", 4, 4545, 100, 10, now);
	pt_trigger_options o = options();
	pt_trigger_run r;
	const char *tid;
	char want[700];
	int cnt[PT_TW_NSTATES], live;
	int64_t top;

	(void)state;
	direct(&a);
	direct(&b);
	direct(&x);
	direct(&y);
	node_file("hostB", &c, 1, now);
	assert_int_equal(pt_trigger_start(&r, &o, now, NULL), PT_OK);
	assert_int_equal(r.n, 5);
	tid = r.t.id;
	assert_int_equal(pt_trigger_poll(&r, now, cnt, &top, &live), 0);
	assert_int_equal(live, 1);
	assert_counts(cnt, 5, 0, 0, 0, 0, 0, 0);
	assert_int_equal(top, 100);

	/* Armed, failed, profiling (node file), exited. */
	status(tid, a.e.info.id, PT_STATE_ARMED, NULL);
	status(tid, b.e.info.id, PT_STATE_FAILED, "cuda error: out of memory");
	c.has_status = 1;
	snprintf(c.tid, sizeof(c.tid), "%s", tid);
	snprintf(c.st.state, sizeof(c.st.state), PT_STATE_PROFILING);
	c.e.hb.step = 180;
	node_file("hostB", &c, 1, now + 0.5);
	assert_int_equal(pt_control_unregister(ctl, x.e.info.id, NULL), PT_OK);
	/* Within the second: statuses only, no liveness look (c's node file
	 * is read with the liveness, so it still looks waiting). */
	assert_int_equal(pt_trigger_poll(&r, now + 0.5, cnt, &top, &live), 0);
	assert_int_equal(live, 0);
	assert_counts(cnt, 3, 1, 0, 0, 0, 1, 0);
	assert_string_equal(worker_of(&r, b.e.info.id)->why, "failed: cuda error: out of memory");
	assert_int_equal(pt_trigger_poll(&r, now + 1.0, cnt, &top, &live), 0);
	assert_int_equal(live, 1);
	assert_counts(cnt, 1, 1, 1, 0, 0, 1, 1);
	assert_int_equal(top, 180);
	assert_int_equal(state_of(&r, c.e.info.id), PT_TW_PROFILING);
	assert_int_equal(state_of(&r, x.e.info.id), PT_TW_MISSING);
	assert_int_equal(worker_of(&r, x.e.info.id)->exited, 1);
	assert_string_equal(worker_of(&r, x.e.info.id)->why,
			    "process exited (unregistered) at step 100");

	/* a traced, no agent on hostA: said once, at 5 s. */
	status(tid, a.e.info.id, PT_STATE_TRACED, NULL);
	assert_int_equal(pt_trigger_poll(&r, now + 1.5, cnt, NULL, NULL), 0);
	assert_counts(cnt, 1, 0, 1, 1, 0, 1, 1);
	pt_trigger_check_agents(&r, now + 4.9);
	assert_int_equal(nnotes, 0);
	pt_trigger_check_agents(&r, now + 5.0);
	assert_int_equal(nnotes, 1);
	snprintf(want, sizeof(want), "no agent runs for host 'hostA': start 'perftracker agent "
		 "--control-dir %s' there", ctl);
	assert_string_equal(notes[0], want);
	pt_trigger_check_agents(&r, now + 10.0);
	assert_int_equal(nnotes, 1);

	/* y goes silent: missing once its heartbeat is older than stale. */
	assert_int_equal(pt_trigger_poll(&r, now + 29.0, cnt, NULL, NULL), 0);
	assert_int_equal(state_of(&r, y.e.info.id), PT_TW_WAITING);
	/* (c's node file keeps it alive; a's pid is ours) */
	c.e.hb.time = now + 30;
	node_file("hostB", &c, 1, now + 30);
	assert_int_equal(pt_trigger_poll(&r, now + 31.0, cnt, NULL, NULL), 0);
	assert_int_equal(state_of(&r, y.e.info.id), PT_TW_MISSING);
	assert_string_equal(worker_of(&r, y.e.info.id)->why, "no heartbeat for 31 s (last step 100)");
	assert_counts(cnt, 0, 0, 1, 1, 0, 1, 2);

	/* Summaries: a's by file, c's flagged in its node file. */
	summary(tid, a.e.info.id, NULL);
	c.summarized = 1;
	snprintf(c.st.state, sizeof(c.st.state), PT_STATE_TRACED);
	node_file("hostB", &c, 1, now + 32);
	assert_int_equal(pt_trigger_poll(&r, now + 32.0, cnt, NULL, NULL), 1);
	assert_counts(cnt, 0, 0, 0, 0, 2, 1, 2);
	pt_trigger_end(&r);
}

/* Stuck before the window: the longest-silent unfinished worker. */
static void test_looks_hung_names_the_longest_silent(void **state)
{
	double now = pt_control_now();
	pt_node_worker a = worker("hostA", node, 0, getpid(), 100, 10, now);
	pt_node_worker b = worker("hostA", "othermachine", 1, 4242, 100, 10, now);
	pt_trigger_options o = options();
	pt_trigger_run r;
	size_t who = 99;
	double silent;

	(void)state;
	a.e.hb.step_time = now - 20;
	b.e.hb.step_time = now - 50;
	direct(&a);
	direct(&b);
	assert_int_equal(pt_trigger_start(&r, &o, now, NULL), PT_OK);
	assert_int_equal(pt_trigger_looks_hung(&r, now, 60, &who, &silent), 0);
	assert_int_equal(pt_trigger_looks_hung(&r, now, 30, &who, &silent), 1);
	assert_int_equal(who, 1);
	assert_true(silent == 50);
	assert_int_equal(pt_trigger_looks_hung(&r, now, 10, &who, &silent), 1);
	assert_int_equal(who, 1);
	/* A traced worker is done stepping for this trigger. */
	status(r.t.id, b.e.info.id, PT_STATE_TRACED, NULL);
	assert_int_equal(pt_trigger_poll(&r, now, NULL, NULL, NULL), 0);
	assert_int_equal(pt_trigger_looks_hung(&r, now, 10, &who, &silent), 1);
	assert_int_equal(who, 0);
	assert_true(silent == 20);
	pt_trigger_end(&r);
}

/* At the deadline: the summaries that came (copied into the run), and for
 * every other worker a failed summary saying where it stopped. */
static void test_collect_at_deadline_names_why(void **state)
{
	double now = pt_control_now();
	pt_node_worker w[6];
	pt_trigger_options o = options();
	pt_trigger_run r;
	pt_summary **s = NULL;
	size_t nd = 99;
	pt_error e;
	const char *tid;
	char p[PT_CONTROL_PATH_MAX + 400], want[600], st[PT_CONTROL_PATH_MAX];
	struct stat sb;

	(void)state;
	for (int i = 0; i < 6; i++) {
		w[i] = worker("hostA", "othermachine", i, 5000 + i, 40, 1, now);
		direct(&w[i]);
	}
	o.timeout = 12;
	assert_int_equal(pt_trigger_start(&r, &o, now, NULL), PT_OK);
	assert_true(r.t.deadline == now + 12);
	assert_int_equal(r.t.start_step, 40 + 3 + 5);
	tid = r.t.id;
	summary(tid, w[0].e.info.id, NULL);
	status(tid, w[1].e.info.id, PT_STATE_ARMED, NULL);
	status(tid, w[2].e.info.id, PT_STATE_PROFILING, NULL);
	status(tid, w[3].e.info.id, PT_STATE_TRACED, NULL);
	summary(tid, w[4].e.info.id, "{\"format\":\"perftracker-summary\",");
	/* w[5] never answers */
	assert_int_equal(pt_trigger_poll(&r, now + 12.5, NULL, NULL, NULL), 0);
	assert_true(now + 12.5 > r.t.deadline);
	assert_int_equal(pt_trigger_finish(&r, NULL), PT_OK);
	pt_error_clear(&e);
	assert_int_equal(pt_trigger_collect(&r, &s, &nd, &e), PT_OK);
	assert_int_equal(nd, 1);
	assert_null(s[0]->error);
	assert_string_equal(s[0]->worker, "vm_0_30069.json");
	snprintf(p, sizeof(p), "%s/summaries/%s.json", r.t.run_dir, w[0].e.info.id);
	assert_int_equal(stat(p, &sb), 0);
	assert_string_equal(s[1]->error, "never reached step 48 (last step 40): stuck or slow?");
	assert_string_equal(s[2]->error, "profiling did not finish (last step 40)");
	assert_string_equal(s[3]->error, "trace not summarised: is 'perftracker agent' running on "
			    "'hostA'?");
	assert_string_equal(s[4]->error, "unreadable summary");
	assert_string_equal(s[5]->error, "never saw the trigger (last step 40)");
	snprintf(want, sizeof(want), "%s.json", w[5].e.info.id);
	assert_string_equal(s[5]->worker, want);
	assert_int_equal(nerrors, 1);                 /* w[4]'s summary, named */
	assert_non_null(strstr(notes[0], w[4].e.info.id));
	for (size_t i = 0; i < r.n; i++)
		pt_summary_free(s[i]);
	x_free(s);
	/* The end removes this trigger's records. */
	assert_int_equal(pt_control_record_path(st, sizeof(st), ctl, "status", tid, NULL), 0);
	assert_int_equal(stat(st, &sb), 0);
	pt_trigger_end(&r);
	assert_int_equal(stat(st, &sb), -1);
}

/* No summary at all: the failed summaries, and an error naming the trigger. */
static void test_collect_without_summaries_fails(void **state)
{
	double now = pt_control_now();
	pt_node_worker a = worker("hostA", "othermachine", 0, 4242, 7, 0, now);
	pt_trigger_options o = options();
	pt_trigger_run r;
	pt_summary **s = NULL;
	size_t nd = 99;
	pt_error e;
	char want[200];

	(void)state;
	direct(&a);
	assert_int_equal(pt_trigger_start(&r, &o, now, NULL), PT_OK);
	/* Unknown rate: 10 s a step for the timeout. */
	assert_int_equal(r.t.start_step, 7 + 5);
	assert_true(r.timeout == (5 + 2) * 10.0 * 2 + 60);
	pt_error_clear(&e);
	assert_int_equal(pt_trigger_collect(&r, &s, &nd, &e), PT_EINVAL);
	snprintf(want, sizeof(want), "no worker delivered a trace for trigger %s", r.t.id);
	assert_string_equal(e.msg, want);
	assert_int_equal(nd, 0);
	assert_non_null(s);
	assert_string_equal(s[0]->error, "never saw the trigger (last step 7)");
	pt_summary_free(s[0]);
	x_free(s);
	pt_trigger_end(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_est_step_adds_at_most_30_s_of_steps, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_start_expects_live_workers_from_one_start_step,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_rearm_moves_every_worker_to_a_later_round, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_run_dir_name_is_claimed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_start_without_live_worker_fails, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_poll_follows_every_worker_to_the_end, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_looks_hung_names_the_longest_silent, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_collect_at_deadline_names_why, setup, teardown),
		cmocka_unit_test_setup_teardown(test_collect_without_summaries_fails, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
