/*
 * test_nodechan.c - unit tests for the node channel and the node files
 * (src/control/nodechan.c) and the agent's side of them (src/agent): the
 * channel's path (one per control directory and host, whatever the
 * spelling), its private directories, the agent's flock, worker records,
 * node files merged with direct records, and an agent that publishes its
 * node only when something changed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"

#include "agent/agent.h"
#include "control/control.h"
#include "control/nodechan.h"
#include "util/json.h"
#include "util/xalloc.h"

static char root[256], ctl[300];

static int setup(void **state)
{
	char nd[300];

	(void)state;
	tu_tmpdir(root, sizeof(root), "pt_test_nodechan");
	snprintf(ctl, sizeof(ctl), "%s/control", root);
	snprintf(nd, sizeof(nd), "%s/node", root);
	mkdir(nd, 0700);
	setenv("PERFTRACKER_NODE_DIR", nd, 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tu_rm_rf(root);
	unsetenv("PERFTRACKER_NODE_DIR");
	return 0;
}

static pt_node_worker worker(const char *host, int64_t rank, int64_t pid, int64_t step,
			     double hbtime)
{
	pt_node_worker w;

	memset(&w, 0, sizeof(w));
	snprintf(w.e.info.host, sizeof(w.e.info.host), "%s", host);
	snprintf(w.e.info.node, sizeof(w.e.info.node), "othermachine");
	w.e.info.rank = rank;
	w.e.info.local_rank = rank % 8;
	w.e.info.world_size = 16;
	w.e.info.local_world_size = 8;
	w.e.info.pid = pid;
	w.e.info.started = 1000;
	pt_control_worker_id(w.e.info.id, sizeof(w.e.info.id), host, rank, pid);
	w.e.has_hb = 1;
	w.e.hb.step = step;
	w.e.hb.step_time = hbtime - 0.5;
	w.e.hb.time = hbtime;
	w.e.hb.rate = 12.5;
	snprintf(w.e.hb.state, sizeof(w.e.hb.state), PT_STATE_IDLE);
	return w;
}

static void test_path_is_one_per_directory_and_host(void **state)
{
	char a[PT_CONTROL_PATH_MAX], b[PT_CONTROL_PATH_MAX], c[PT_CONTROL_PATH_MAX];
	char d[PT_CONTROL_PATH_MAX], want[PT_CONTROL_PATH_MAX];

	(void)state;
	assert_int_equal(pt_nodechan_path(a, sizeof(a), "/mnt/shared/ctl", "node7"), 0);
	assert_int_equal(pt_nodechan_path(b, sizeof(b), "/mnt//shared/./x/../ctl/", "node7"), 0);
	assert_int_equal(pt_nodechan_path(c, sizeof(c), "/mnt/shared/ctl", "node8"), 0);
	assert_int_equal(pt_nodechan_path(d, sizeof(d), "/mnt/shared/ctl2", "node7"), 0);
	assert_string_equal(a, b);
	assert_string_not_equal(a, c);
	assert_string_not_equal(a, d);
	snprintf(want, sizeof(want), "%s/node/perftracker-%lu/node7-", root, (unsigned long)getuid());
	assert_memory_equal(a, want, strlen(want));
	assert_int_equal(strlen(a), strlen(want) + 16);
	assert_int_equal(pt_nodechan_path(a, 20, "/mnt/shared/ctl", "node7"), -1);
}

static void test_prepare_makes_private_dirs_and_refuses_links(void **state)
{
	char nd[PT_CONTROL_PATH_MAX], p[PT_CONTROL_PATH_MAX + 8], base[400];
	struct stat st;
	pt_error e;

	(void)state;
	assert_int_equal(pt_nodechan_path(nd, sizeof(nd), ctl, "h"), 0);
	assert_int_equal(pt_nodechan_prepare(nd, NULL), PT_OK);
	assert_int_equal(pt_nodechan_prepare(nd, NULL), PT_OK);  /* again: fine */
	snprintf(p, sizeof(p), "%s/w", nd);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(stat(nd, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	/* A link planted where the node directory goes is refused. */
	snprintf(base, sizeof(base), "%s/elsewhere", root);
	mkdir(base, 0700);
	assert_int_equal(pt_nodechan_path(nd, sizeof(nd), ctl, "linked"), 0);
	assert_int_equal(symlink(base, nd), 0);
	pt_error_clear(&e);
	assert_int_equal(pt_nodechan_prepare(nd, &e), PT_EINVAL);
	assert_string_equal(e.subject, nd);
	assert_string_equal(e.msg, "not a directory owned by this user");
}

static void test_agent_lock_is_seen_by_workers(void **state)
{
	char nd[PT_CONTROL_PATH_MAX];
	int fd;

	(void)state;
	assert_int_equal(pt_nodechan_path(nd, sizeof(nd), ctl, "h"), 0);
	assert_int_equal(pt_nodechan_prepare(nd, NULL), PT_OK);
	assert_int_equal(pt_nodechan_agent_alive(nd), 0);
	fd = pt_nodechan_agent_hold(nd, NULL);
	assert_true(fd >= 0);
	assert_int_equal(pt_nodechan_agent_alive(nd), 1);
	/* A second agent of the same node does not get it... */
	assert_int_equal(pt_nodechan_agent_hold(nd, NULL), -1);
	/* ...and the probe did not take it either. */
	assert_int_equal(pt_nodechan_agent_alive(nd), 1);
	close(fd);  /* the agent died */
	assert_int_equal(pt_nodechan_agent_alive(nd), 0);
}

static void test_worker_records_round_trip(void **state)
{
	char nd[PT_CONTROL_PATH_MAX];
	pt_node_worker a = worker("h", 1, 4001, 10, 2000), b = worker("h", 0, 4000, 12, 2001), *got;
	size_t n;

	(void)state;
	assert_int_equal(pt_nodechan_path(nd, sizeof(nd), ctl, "h"), 0);
	assert_int_equal(pt_nodechan_prepare(nd, NULL), PT_OK);
	a.has_status = 1;
	snprintf(a.tid, sizeof(a.tid), "T1");
	snprintf(a.st.state, sizeof(a.st.state), PT_STATE_TRACED);
	snprintf(a.st.trace, sizeof(a.st.trace), "/spool/T1/h_1_4001.json");
	a.st.start_step = 20;
	a.st.end_step = 22;
	a.st.time = 2000.25;
	assert_int_equal(pt_nodechan_worker_write(nd, &a, NULL), PT_OK);
	assert_int_equal(pt_nodechan_worker_write(nd, &b, NULL), PT_OK);
	assert_int_equal(pt_nodechan_workers_read(nd, &got, &n, NULL), PT_OK);
	assert_int_equal(n, 2);
	/* Sorted by rank. */
	assert_string_equal(got[0].e.info.id, "h_0_4000");
	assert_int_equal(got[0].e.hb.step, 12);
	assert_int_equal(got[0].has_status, 0);
	assert_string_equal(got[1].e.info.id, "h_1_4001");
	assert_int_equal(got[1].e.info.local_rank, 1);
	assert_int_equal(got[1].e.info.world_size, 16);
	assert_true(got[1].e.hb.rate == 12.5);
	assert_int_equal(got[1].has_status, 1);
	assert_string_equal(got[1].tid, "T1");
	assert_string_equal(got[1].st.state, "traced");
	assert_string_equal(got[1].st.trace, "/spool/T1/h_1_4001.json");
	assert_int_equal(got[1].st.end_step, 22);
	x_free(got);
	pt_nodechan_worker_remove(nd, "h_0_4000");
	assert_int_equal(pt_nodechan_workers_read(nd, &got, &n, NULL), PT_OK);
	assert_int_equal(n, 1);
	x_free(got);
}

static void test_node_files_merge_with_direct_records(void **state)
{
	pt_node_worker w[2] = { worker("nodeA", 0, 10, 50, 3000), worker("nodeA", 1, 11, 49, 3000) };
	pt_node_worker direct = worker("nodeA", 1, 11, 60, 3005), other = worker("nodeB", 2, 12, 7,
										     2990);
	pt_node_agent na;
	pt_node_worker *all;
	pt_worker_entry *e;
	pt_sb sb = { 0 };
	char p[PT_CONTROL_PATH_MAX];
	size_t n;

	(void)state;
	memset(&na, 0, sizeof(na));
	snprintf(na.host, sizeof(na.host), "nodeA");
	snprintf(na.node, sizeof(na.node), "othermachine");
	na.pid = 99;
	na.time = 3001;
	w[0].has_status = 1;
	w[0].summarized = 1;
	snprintf(w[0].tid, sizeof(w[0].tid), "T9");
	snprintf(w[0].st.state, sizeof(w[0].st.state), PT_STATE_TRACED);
	pt_nodechan_node_json(&sb, &na, w, 2);
	assert_false(sb.oom);
	assert_int_equal(pt_control_agent_hb_path(p, sizeof(p), ctl, "nodeA"), 0);
	assert_int_equal(pt_control_write_atomic(p, sb.buf, sb.len, NULL), PT_OK);
	pt_sb_free(&sb);
	/* Rank 1 fell back to the shared directory later (fresher heartbeat);
	 * nodeB has no agent at all. */
	assert_int_equal(pt_control_register(ctl, &direct.e.info, NULL), PT_OK);
	assert_int_equal(pt_control_heartbeat_write(ctl, direct.e.info.id, &direct.e.hb, NULL), PT_OK);
	assert_int_equal(pt_control_register(ctl, &other.e.info, NULL), PT_OK);
	assert_int_equal(pt_nodechan_all(ctl, &all, &n, NULL), PT_OK);
	assert_int_equal(n, 3);
	assert_string_equal(all[0].e.info.id, "nodeA_0_10");
	assert_int_equal(all[0].via_node, 1);
	assert_true(all[0].node_time == 3001);
	assert_int_equal(all[0].summarized, 1);
	assert_string_equal(all[0].tid, "T9");
	assert_string_equal(all[1].e.info.id, "nodeA_1_11");
	assert_int_equal(all[1].e.hb.step, 60);  /* the fresher one */
	assert_int_equal(all[1].via_node, 0);
	assert_string_equal(all[2].e.info.id, "nodeB_2_12");
	assert_int_equal(all[2].e.has_hb, 0);
	x_free(all);
	assert_int_equal(pt_nodechan_workers(ctl, &e, &n, NULL), PT_OK);
	assert_int_equal(n, 3);
	assert_int_equal(e[0].hb.step, 50);
	assert_int_equal(e[1].info.rank, 1);
	x_free(e);
}

static double mtime_of(const char *p)
{
	struct stat st;

	if (stat(p, &st) != 0)
		return -1;
	return (double)st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9;
}

/* The agent publishes its node: the first time, when a worker's state
 * changes (not sooner than node_min_s), when only steps moved (not sooner
 * than node_progress_s), and not at all while nothing changed before
 * node_max_s; it mirrors trigger.json into the node channel. */
static void test_agent_publishes_only_changes(void **state)
{
	pt_agent a;
	pt_node_worker w = worker("hq", 0, 1, 5, pt_control_now());
	char nf[PT_CONTROL_PATH_MAX], mirror[PT_CONTROL_PATH_MAX];
	double t = pt_control_now(), m0, m1;
	pt_trigger tr;
	pt_json *j;

	(void)state;
	snprintf(nf, sizeof(nf), "%s/spool", root);
	pt_agent_init(&a, ctl, nf, "hq");
	a.hw_off = 1;
	assert_int_equal(pt_agent_lock(&a, NULL), PT_OK);
	assert_true(pt_nodechan_agent_alive(a.ndir));
	assert_int_equal(pt_nodechan_worker_write(a.ndir, &w, NULL), PT_OK);
	assert_int_equal(pt_control_agent_hb_path(nf, sizeof(nf), ctl, "hq"), 0);
	assert_int_equal(pt_agent_tick(&a, t), 0);
	j = pt_json_parse_file(nf, NULL);
	assert_non_null(j);
	assert_int_equal(pt_json_get(j, "workers")->len, 1);
	pt_json_free(j);
	m0 = mtime_of(nf);
	/* Nothing changed: no write for node_max_s (10 s). */
	assert_int_equal(pt_agent_tick(&a, t + 1.5), 0);
	assert_int_equal(pt_agent_tick(&a, t + 9), 0);
	assert_true(mtime_of(nf) == m0);
	/* Steps only: after node_progress_s (2 s) since the last write. */
	w.e.hb.step = 6;
	assert_int_equal(pt_nodechan_worker_write(a.ndir, &w, NULL), PT_OK);
	tu_sleep_ms(20);
	assert_int_equal(pt_agent_tick(&a, t + 9.6), 0);
	m1 = mtime_of(nf);
	assert_true(m1 > m0);
	w.e.hb.step = 7;
	assert_int_equal(pt_nodechan_worker_write(a.ndir, &w, NULL), PT_OK);
	tu_sleep_ms(20);
	assert_int_equal(pt_agent_tick(&a, t + 10.8), 0);
	assert_true(mtime_of(nf) == m1);  /* 1.2 s after the last: not yet */
	/* A state change: after node_min_s (1 s). */
	snprintf(w.e.hb.state, sizeof(w.e.hb.state), PT_STATE_ARMED);
	assert_int_equal(pt_nodechan_worker_write(a.ndir, &w, NULL), PT_OK);
	tu_sleep_ms(20);
	assert_int_equal(pt_agent_tick(&a, t + 11.4), 0);
	assert_true(mtime_of(nf) > m1);
	j = pt_json_parse_file(nf, NULL);
	assert_non_null(j);
	assert_string_equal(pt_json_strv(pt_json_get(pt_json_at(pt_json_get(j, "workers"), 0), "hb"),
					 "state", ""), "armed");
	pt_json_free(j);
	/* The trigger reaches the node channel at the next trigger poll. */
	memset(&tr, 0, sizeof(tr));
	snprintf(tr.id, sizeof(tr.id), "T42");
	snprintf(tr.state, sizeof(tr.state), PT_TRIGGER_ACTIVE);
	tr.start_step = 100;
	tr.steps = 2;
	tr.deadline = t + 600;
	assert_int_equal(pt_control_trigger_write(ctl, &tr, NULL), PT_OK);
	assert_int_equal(pt_nodechan_file(mirror, sizeof(mirror), a.ndir, PT_NODECHAN_TRIGGER), 0);
	assert_int_equal(pt_agent_tick(&a, t + 12.5), 0);
	memset(&tr, 0, sizeof(tr));
	assert_int_equal(pt_control_trigger_read(a.ndir, &tr, NULL), PT_OK);
	assert_string_equal(tr.id, "T42");
	assert_int_equal(tr.start_step, 100);
	pt_control_trigger_clear(&tr);
	pt_agent_free(&a);
	assert_false(pt_nodechan_agent_alive(a.ndir));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_path_is_one_per_directory_and_host, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_prepare_makes_private_dirs_and_refuses_links,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_agent_lock_is_seen_by_workers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_worker_records_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_node_files_merge_with_direct_records, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_agent_publishes_only_changes, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
