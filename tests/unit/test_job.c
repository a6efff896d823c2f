/*
 * test_job.c - unit tests for the job namespace (src/control/job.c) and
 * the node agent's clean-up of ended jobs (src/agent/reap.c): the job id
 * from the launcher's environment in its order, folder names that cannot
 * escape, the master's choice of job (one live, several live, none), the
 * spool folder per control directory and host, the tree remover, and the
 * reaping of a channel whose workers are gone while a live one stays.
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
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"

#include "agent/agent.h"
#include "control/control.h"
#include "control/job.h"
#include "control/nodechan.h"
#include "util/file.h"

static char root[256];

static const char *const job_env[] = { "PERFTRACKER_JOB", "TORCHELASTIC_RUN_ID", "MASTER_ADDR",
				       "MASTER_PORT", "SLURM_JOB_ID", "PERFTRACKER_CONTROL_DIR",
				       NULL };

static int setup(void **state)
{
	char nd[300];

	(void)state;
	tu_tmpdir(root, sizeof(root), "pt_test_job");
	for (int i = 0; job_env[i]; i++)
		unsetenv(job_env[i]);
	setenv("PERFTRACKER_ROOT", root, 1);
	snprintf(nd, sizeof(nd), "%s/shm", root);
	mkdir(nd, 0700);
	setenv("PERFTRACKER_NODE_DIR", nd, 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tu_rm_rf(root);
	unsetenv("PERFTRACKER_ROOT");
	unsetenv("PERFTRACKER_NODE_DIR");
	return 0;
}

static void test_job_id_in_order(void **state)
{
	char id[PT_JOB_ID_MAX];

	(void)state;
	assert_int_equal(pt_job_id(id, sizeof(id)), 0);
	assert_string_equal(id, "");
	setenv("SLURM_JOB_ID", "4711", 1);
	assert_int_equal(pt_job_id(id, sizeof(id)), 1);
	assert_string_equal(id, "slurm-4711");
	setenv("MASTER_ADDR", "10.0.0.1", 1);
	assert_int_equal(pt_job_id(id, sizeof(id)), 1);
	assert_string_equal(id, "slurm-4711");  /* an address without a port is no job */
	setenv("MASTER_PORT", "29500", 1);
	assert_int_equal(pt_job_id(id, sizeof(id)), 1);
	assert_string_equal(id, "10.0.0.1:29500");
	setenv("TORCHELASTIC_RUN_ID", "none", 1);  /* torchrun's "no id" */
	assert_int_equal(pt_job_id(id, sizeof(id)), 1);
	assert_string_equal(id, "10.0.0.1:29500");
	setenv("TORCHELASTIC_RUN_ID", "run-7", 1);
	assert_int_equal(pt_job_id(id, sizeof(id)), 1);
	assert_string_equal(id, "run-7");
	setenv("PERFTRACKER_JOB", "mine", 1);
	assert_int_equal(pt_job_id(id, sizeof(id)), 1);
	assert_string_equal(id, "mine");
	for (int i = 0; job_env[i]; i++)
		unsetenv(job_env[i]);
}

static void test_dirname_cannot_escape(void **state)
{
	char d[200], p[600], want[600];

	(void)state;
	pt_job_dirname(d, sizeof(d), "10.0.0.1:29500");
	assert_string_equal(d, "10.0.0.1-29500");
	pt_job_dirname(d, sizeof(d), "../../etc");
	assert_string_equal(d, "-.-..-etc");
	pt_job_dirname(d, sizeof(d), ".hidden");
	assert_string_equal(d, "-hidden");
	pt_job_dirname(d, sizeof(d), "");
	assert_string_equal(d, "-");
	assert_int_equal(pt_job_dir(p, sizeof(p), "a/b"), 0);
	snprintf(want, sizeof(want), "%s/jobs/a-b", root);
	assert_string_equal(p, want);
}

/* A live worker: registered directly with a fresh heartbeat and our pid. */
static void live_worker(const char *dir, int rank)
{
	pt_worker_info w;
	pt_heartbeat hb;

	memset(&w, 0, sizeof(w));
	snprintf(w.host, sizeof(w.host), "h");
	pt_control_nodename(w.node, sizeof(w.node));
	w.rank = rank;
	w.pid = getpid();
	w.started = pt_control_now();
	pt_control_worker_id(w.id, sizeof(w.id), "h", rank, w.pid);
	memset(&hb, 0, sizeof(hb));
	hb.time = pt_control_now();
	hb.step = 3;
	assert_int_equal(pt_control_register(dir, &w, NULL), PT_OK);
	assert_int_equal(pt_control_heartbeat_write(dir, w.id, &hb, NULL), PT_OK);
}

static void test_resolve_picks_the_live_job(void **state)
{
	char dir[PT_CONTROL_PATH_MAX], a[PT_CONTROL_PATH_MAX], b[PT_CONTROL_PATH_MAX];
	char want[PT_CONTROL_PATH_MAX];
	pt_error e;

	(void)state;
	/* Nothing anywhere: the job-less default. */
	pt_error_clear(&e);
	assert_int_equal(pt_job_resolve_dir(NULL, dir, sizeof(dir), pt_control_now(), &e), PT_OK);
	snprintf(want, sizeof(want), "%s/control", root);
	assert_string_equal(dir, want);
	/* One job with live workers (another without): that one. */
	assert_int_equal(pt_job_dir(a, sizeof(a), "127.0.0.1:29500"), 0);
	assert_int_equal(pt_job_dir(b, sizeof(b), "127.0.0.1:29501"), 0);
	live_worker(a, 0);
	assert_int_equal(pt_control_mkdirs(b, NULL), PT_OK);
	assert_int_equal(pt_job_resolve_dir(NULL, dir, sizeof(dir), pt_control_now(), &e), PT_OK);
	assert_string_equal(dir, a);
	/* Two live: an error naming both and how to choose. */
	live_worker(b, 0);
	live_worker(b, 1);
	assert_int_equal(pt_job_resolve_dir(NULL, dir, sizeof(dir), pt_control_now(), &e),
			 PT_EINVAL);
	assert_non_null(strstr(e.msg, "2 jobs run under"));
	assert_non_null(strstr(e.msg, "'127.0.0.1-29500' (1 worker)"));
	assert_non_null(strstr(e.msg, "'127.0.0.1-29501' (2 workers)"));
	assert_non_null(strstr(e.msg, "--job NAME"));
	/* --job, by id or by folder name. */
	assert_int_equal(pt_job_resolve_dir("127.0.0.1:29501", dir, sizeof(dir), 0, &e), PT_OK);
	assert_string_equal(dir, b);
	assert_int_equal(pt_job_resolve_dir("127.0.0.1-29501", dir, sizeof(dir), 0, &e), PT_OK);
	assert_string_equal(dir, b);
	assert_int_equal(pt_job_resolve_dir("", dir, sizeof(dir), 0, &e), PT_EINVAL);
}

static void test_spool_dir_is_per_control_dir(void **state)
{
	char s1[PT_CONTROL_PATH_MAX], s2[PT_CONTROL_PATH_MAX], s3[PT_CONTROL_PATH_MAX];
	char key[300];

	(void)state;
	assert_int_equal(pt_job_spool_dir(s1, sizeof(s1), "/sp", "/jobs/a", "h"), 0);
	assert_int_equal(pt_job_spool_dir(s2, sizeof(s2), "/sp", "/jobs/b", "h"), 0);
	assert_int_equal(pt_job_spool_dir(s3, sizeof(s3), "/sp", "/jobs//a/", "h"), 0);
	assert_string_not_equal(s1, s2);
	assert_string_equal(s1, s3);  /* the same directory, spelt differently */
	assert_int_equal(pt_nodechan_key(key, sizeof(key), "/jobs/a", "h"), 0);
	assert_int_equal(strncmp(s1, "/sp/h-", 6), 0);
	assert_string_equal(s1 + 4, key);
	assert_int_equal(strlen(key), strlen("h-") + 16);
}

static void test_remove_tree_never_follows_links(void **state)
{
	char p[600], keep[600], link[600];
	int dfd;
	struct stat st;

	(void)state;
	snprintf(keep, sizeof(keep), "%s/keep", root);
	mkdir(keep, 0700);
	snprintf(p, sizeof(p), "%s/keep/precious", root);
	tu_write_text(p, "x");
	snprintf(p, sizeof(p), "%s/t/a/b", root);
	assert_int_equal(pt_file_mkdirs(p, 0700, NULL, NULL, NULL), PT_OK);
	snprintf(p, sizeof(p), "%s/t/a/b/f", root);
	tu_write_text(p, "x");
	snprintf(link, sizeof(link), "%s/t/a/l", root);
	assert_int_equal(symlink(keep, link), 0);
	dfd = open(root, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	/* Too deep for depth 2: what is below stays, and so does t. */
	assert_int_equal(pt_file_remove_tree_at(dfd, "t", 2, (unsigned)getuid()), -1);
	assert_int_equal(pt_file_remove_tree_at(dfd, "t", 3, (unsigned)getuid()), 0);
	snprintf(p, sizeof(p), "%s/t", root);
	assert_int_equal(stat(p, &st), -1);
	snprintf(p, sizeof(p), "%s/keep/precious", root);
	assert_int_equal(stat(p, &st), 0);
	/* Not there: fine. */
	assert_int_equal(pt_file_remove_tree_at(dfd, "t", 3, (unsigned)getuid()), 0);
	close(dfd);
}

static void channel_with_worker(const char *ctl, const char *host, pid_t pid, char *ndir,
				size_t cap)
{
	pt_node_worker w;

	assert_int_equal(pt_nodechan_path(ndir, cap, ctl, host), 0);
	assert_int_equal(pt_nodechan_prepare(ndir, NULL), PT_OK);
	memset(&w, 0, sizeof(w));
	snprintf(w.e.info.host, sizeof(w.e.info.host), "%s", host);
	pt_control_nodename(w.e.info.node, sizeof(w.e.info.node));
	w.e.info.pid = pid;
	pt_control_worker_id(w.e.info.id, sizeof(w.e.info.id), host, 0, pid);
	w.e.has_hb = 1;
	w.e.hb.time = pt_control_now();
	assert_int_equal(pt_nodechan_worker_write(ndir, &w, NULL), PT_OK);
}

/* An ended job's channel and spool folder go; a live job's, a young
 * empty one's and our own stay. */
static void test_reap_removes_ended_jobs_only(void **state)
{
	char ctl_dead[400], ctl_live[400], ctl_me[400], spool[400];
	char nd_dead[PT_CONTROL_PATH_MAX], nd_live[PT_CONTROL_PATH_MAX], nd_me[PT_CONTROL_PATH_MAX];
	char sp_dead[PT_CONTROL_PATH_MAX], sp_live[PT_CONTROL_PATH_MAX], p[PT_CONTROL_PATH_MAX + 32];
	pt_agent a;
	struct stat st;
	double now = pt_control_now();

	(void)state;
	snprintf(ctl_dead, sizeof(ctl_dead), "%s/jobs/dead", root);
	snprintf(ctl_live, sizeof(ctl_live), "%s/jobs/live", root);
	snprintf(ctl_me, sizeof(ctl_me), "%s/jobs/me", root);
	snprintf(spool, sizeof(spool), "%s/spool", root);
	channel_with_worker(ctl_dead, "h", tu_dead_pid(), nd_dead, sizeof(nd_dead));
	channel_with_worker(ctl_live, "h", getpid(), nd_live, sizeof(nd_live));
	assert_int_equal(pt_job_spool_dir(sp_dead, sizeof(sp_dead), spool, ctl_dead, "h"), 0);
	assert_int_equal(pt_job_spool_dir(sp_live, sizeof(sp_live), spool, ctl_live, "h"), 0);
	snprintf(p, sizeof(p), "%s/T1", sp_dead);
	assert_int_equal(pt_file_mkdirs(p, 0700, NULL, NULL, NULL), PT_OK);
	snprintf(p, sizeof(p), "%s/T1/h_0_1.json", sp_dead);
	tu_write_text(p, "{}");
	snprintf(p, sizeof(p), "%s/T2", sp_live);
	assert_int_equal(pt_file_mkdirs(p, 0700, NULL, NULL, NULL), PT_OK);
	pt_agent_init(&a, ctl_me, spool, "h");
	snprintf(nd_me, sizeof(nd_me), "%s", a.ndir);
	assert_int_equal(pt_nodechan_prepare(nd_me, NULL), PT_OK);
	/* Young (just made): left alone. */
	assert_int_equal(pt_agent_reap(&a, now), 0);
	assert_int_equal(stat(nd_dead, &st), 0);
	/* 60 s later: the dead job's channel and spool go, the rest stays. */
	assert_int_equal(pt_agent_reap(&a, now + 60), 1);
	assert_int_equal(stat(nd_dead, &st), -1);
	assert_int_equal(stat(sp_dead, &st), -1);
	assert_int_equal(stat(nd_live, &st), 0);
	assert_int_equal(stat(sp_live, &st), 0);
	assert_int_equal(stat(nd_me, &st), 0);
	/* Leaving with no live worker of ours: our channel and spool go. */
	assert_int_equal(pt_control_mkdirs(a.spool, NULL), PT_OK);
	pt_agent_leave(&a, now);
	assert_int_equal(stat(nd_me, &st), -1);
	assert_int_equal(stat(a.spool, &st), -1);
	pt_agent_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_job_id_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dirname_cannot_escape, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resolve_picks_the_live_job, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spool_dir_is_per_control_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remove_tree_never_follows_links, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reap_removes_ended_jobs_only, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
