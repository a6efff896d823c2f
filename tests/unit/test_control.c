/*
 * test_control.c - unit tests for the control-directory protocol
 * (src/control) and the node agent's trace handling (src/agent): atomic
 * writes, records round-trip, listing, locks and their staleness, worker
 * liveness, and one raw trace summarised under each raw-trace policy;
 * directories of other users refused, links never written through.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"

#include "agent/agent.h"
#include "analysis/summary.h"
#include "control/control.h"
#include "util/file.h"
#include "util/json.h"
#include "util/xalloc.h"

static char root[256];

static int setup(void **state)
{
	(void)state;
	tu_tmpdir(root, sizeof(root), "pt_test_control");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tu_rm_rf(root);
	return 0;
}

static void path(char *out, size_t cap, const char *rel)
{
	snprintf(out, cap, "%s/%s", root, rel);
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void test_write_atomic(void **state)
{
	char p[512], d[512], *buf = NULL;
	size_t len = 0;
	pt_error e;

	(void)state;
	path(p, sizeof(p), "a/b/c/rec.json");
	pt_error_clear(&e);
	/* Parent directories are created; no temporary file is left. */
	assert_int_equal(pt_control_write_atomic(p, "{\"x\":1}", 7, &e), PT_OK);
	assert_int_equal(pt_control_read_file(p, 100, &buf, &len, &e), PT_OK);
	assert_int_equal(len, 7);
	assert_string_equal(buf, "{\"x\":1}");
	x_free(buf);
	path(d, sizeof(d), "a/b/c");
	assert_int_equal(count_entries(d), 1);
	/* Overwrite replaces the whole content. */
	assert_int_equal(pt_control_write_atomic(p, "[]", 2, &e), PT_OK);
	assert_int_equal(pt_control_read_file(p, 100, &buf, &len, &e), PT_OK);
	assert_string_equal(buf, "[]");
	x_free(buf);
	/* The durable variant (fsync before the rename) writes the same way. */
	assert_int_equal(pt_control_write_durable(p, "[1]", 3, &e), PT_OK);
	assert_int_equal(pt_control_read_file(p, 100, &buf, &len, &e), PT_OK);
	assert_string_equal(buf, "[1]");
	x_free(buf);
	assert_int_equal(count_entries(d), 1);
	/* Too big for the limit. */
	assert_int_equal(pt_control_read_file(p, 1, &buf, &len, &e), PT_ENOMEM);
	assert_null(buf);
	/* Missing file: PT_EIO "no such file" with the path as subject. */
	path(p, sizeof(p), "nope.json");
	pt_error_clear(&e);
	assert_int_equal(pt_control_read_file(p, 100, &buf, &len, &e), PT_EIO);
	assert_string_equal(e.msg, "no such file");
	assert_string_equal(e.subject, p);
}

static void test_write_unwritable(void **state)
{
	char file[512], p[600];
	pt_error e;

	(void)state;
	/* A directory below a regular file can never be created. */
	path(file, sizeof(file), "plainfile");
	tu_write_text(file, "x");
	snprintf(p, sizeof(p), "%s/sub/rec.json", file);
	pt_error_clear(&e);
	assert_int_equal(pt_control_write_atomic(p, "{}", 2, &e), PT_EIO);
	assert_string_equal(e.subject, p);
	assert_non_null(strstr(e.msg, "cannot write: Not a directory"));
	snprintf(p, sizeof(p), "%s/sub", file);
	pt_error_clear(&e);
	assert_int_equal(pt_control_mkdirs(p, &e), PT_EIO);
	assert_non_null(strstr(e.msg, "cannot create directory"));
	/* Nothing was left next to the file. */
	assert_int_equal(count_entries(root), 1);
}

/* Directories another user could write through are refused with one
 * message naming them (docs/collector.md, "Directories and other users").
 * Needs root to give a directory away; skipped otherwise. */
static void test_mkdirs_refuses_other_users(void **state)
{
	char p[512], q[600];
	pt_error e;
	const uid_t other = 65534; /* nobody */

	(void)state;
	if (geteuid() != 0) {
		fprintf(stderr, "skip: needs root to chown a directory to another user\n");
		skip();
	}
	/* The directory itself, owned by another user (even 0755). */
	path(p, sizeof(p), "theirs");
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(chown(p, other, (gid_t)-1), 0);
	pt_error_clear(&e);
	assert_int_equal(pt_control_mkdirs(p, &e), PT_EPERM);
	assert_string_equal(e.subject, p);
	assert_string_equal(e.msg, "directory owned by another user (uid 65534): refusing to use it");
	/* ... and below ours, a subdirectory of another user. */
	snprintf(q, sizeof(q), "%s/sub", p);
	pt_error_clear(&e);
	assert_int_equal(pt_control_mkdirs(q, &e), PT_EPERM);
	assert_string_equal(e.subject, p);
	/* A record through it is refused when its directory must be made. */
	snprintf(q, sizeof(q), "%s/new/rec.json", p);
	pt_error_clear(&e);
	assert_int_equal(pt_control_write_atomic(q, "{}", 2, &e), PT_EPERM);
	/* Group-writable and ours: fine (a job's group on a shared FS). */
	path(p, sizeof(p), "ours");
	assert_int_equal(mkdir(p, 0770), 0);
	assert_int_equal(chmod(p, 02770), 0);
	snprintf(q, sizeof(q), "%s/control/stacks", p);
	pt_error_clear(&e);
	assert_int_equal(pt_control_mkdirs(q, &e), PT_OK);
	/* A link of another user on the path. */
	path(p, sizeof(p), "link");
	snprintf(q, sizeof(q), "%s/ours", root);
	assert_int_equal(symlink(q, p), 0);
	assert_int_equal(lchown(p, other, (gid_t)-1), 0);
	pt_error_clear(&e);
	assert_int_equal(pt_control_mkdirs(p, &e), PT_EPERM);
	assert_non_null(strstr(e.msg, "symbolic link owned by another user"));
	/* A link of ours to a directory of ours is fine. */
	assert_int_equal(lchown(p, 0, (gid_t)-1), 0);
	pt_error_clear(&e);
	assert_int_equal(pt_control_mkdirs(p, &e), PT_OK);
}

/* The temporary file of an atomic write is new and unguessable: a link
 * planted at any name in the directory is never written through. */
static void test_write_atomic_no_follow(void **state)
{
	char p[512], victim[512], link[600];
	char *buf = NULL;
	size_t len;
	pt_error e;
	int fd;
	char tmp[700], tmp2[700];

	(void)state;
	path(victim, sizeof(victim), "victim");
	tu_write_text(victim, "precious");
	path(p, sizeof(p), "rec.json");
	/* The name the old writer would have used, and the record itself. */
	snprintf(link, sizeof(link), "%s/.rec.json.tmp", root);
	assert_int_equal(symlink(victim, link), 0);
	pt_error_clear(&e);
	assert_int_equal(pt_control_write_atomic(p, "{}", 2, &e), PT_OK);
	assert_int_equal(pt_control_read_file(victim, 100, &buf, &len, &e), PT_OK);
	assert_string_equal(buf, "precious");
	x_free(buf);
	/* Two temporaries of one path never share a name. */
	fd = pt_file_create_tmp(p, 0600, tmp, sizeof(tmp), &e);
	assert_true(fd >= 0);
	close(fd);
	fd = pt_file_create_tmp(p, 0600, tmp2, sizeof(tmp2), &e);
	assert_true(fd >= 0);
	close(fd);
	assert_string_not_equal(tmp, tmp2);
	assert_int_equal(strncmp(tmp, root, strlen(root)), 0);
	unlink(tmp);
	unlink(tmp2);
}

/* Removing a trigger's records never follows a link planted in place of
 * its folder: the folder it points to keeps its files. */
static void test_remove_dir_no_follow(void **state)
{
	char victim[512], f[600], link[600];

	(void)state;
	path(victim, sizeof(victim), "victim");
	assert_int_equal(mkdir(victim, 0700), 0);
	snprintf(f, sizeof(f), "%s/keep.json", victim);
	tu_write_text(f, "{}");
	snprintf(link, sizeof(link), "%s/status", root);
	assert_int_equal(mkdir(link, 0700), 0);
	snprintf(link, sizeof(link), "%s/status/T1", root);
	assert_int_equal(symlink(victim, link), 0);
	assert_int_equal(pt_control_remove_dir(root, "status", "T1", NULL), PT_OK);
	assert_int_equal(access(f, F_OK), 0);
	assert_int_not_equal(access(link, F_OK), 0);
}

static void test_workers_roundtrip(void **state)
{
	pt_worker_info w;
	pt_heartbeat h;
	pt_worker_entry *list = NULL;
	size_t n = 0;
	pt_error e;
	const int64_t ranks[3] = { 2, 0, 1 };

	(void)state;
	pt_error_clear(&e);
	for (int i = 0; i < 3; i++) {
		memset(&w, 0, sizeof(w));
		snprintf(w.host, sizeof(w.host), "node-a");
		snprintf(w.node, sizeof(w.node), "machine");
		w.rank = ranks[i];
		w.local_rank = ranks[i];
		w.world_size = 3;
		w.local_world_size = 3;
		w.pid = 1000 + ranks[i];
		w.started = 1700000000.5;
		pt_control_worker_id(w.id, sizeof(w.id), w.host, w.rank, w.pid);
		assert_int_equal(pt_control_register(root, &w, &e), PT_OK);
	}
	memset(&h, 0, sizeof(h));
	h.step = 42;
	h.step_time = 1700000010.25;
	h.time = 1700000011.0;
	h.rate = 3.5;
	snprintf(h.state, sizeof(h.state), "%s", PT_STATE_ARMED);
	snprintf(h.trigger, sizeof(h.trigger), "T1");
	assert_int_equal(pt_control_heartbeat_write(root, "node-a_1_1001", &h, &e), PT_OK);
	/* A stray temporary file and a non-record are ignored. */
	{
		char p[512];

		path(p, sizeof(p), "workers/.node-a_9_9.json.x.1.1.tmp");
		tu_write_text(p, "{");
		path(p, sizeof(p), "workers/README");
		tu_write_text(p, "hi");
	}
	assert_int_equal(pt_control_workers(root, &list, &n, &e), PT_OK);
	assert_int_equal(n, 3);
	/* Sorted by rank. */
	assert_string_equal(list[0].info.id, "node-a_0_1000");
	assert_string_equal(list[1].info.id, "node-a_1_1001");
	assert_string_equal(list[2].info.id, "node-a_2_1002");
	assert_int_equal(list[2].info.world_size, 3);
	assert_string_equal(list[0].info.node, "machine");
	assert_int_equal(list[0].has_hb, 0);
	assert_int_equal(list[1].has_hb, 1);
	assert_int_equal(list[1].hb.step, 42);
	assert_true(list[1].hb.rate == 3.5);
	assert_true(list[1].hb.step_time == 1700000010.25);
	assert_string_equal(list[1].hb.state, "armed");
	assert_string_equal(list[1].hb.trigger, "T1");
	/* Liveness: heartbeat age against stale_s (other machine: no pid check). */
	assert_true(pt_control_worker_alive(&list[1], 1700000020.0, 30, "elsewhere"));
	assert_false(pt_control_worker_alive(&list[1], 1700000050.0, 30, "elsewhere"));
	/* Without a heartbeat the registration time counts. */
	assert_true(pt_control_worker_alive(&list[0], 1700000010.0, 30, "elsewhere"));
	/* Same machine: pid 1001 is not ours and almost surely gone. */
	x_free(list);

	assert_int_equal(pt_control_unregister(root, "node-a_1_1001", &e), PT_OK);
	assert_int_equal(pt_control_unregister(root, "node-a_1_1001", &e), PT_OK);
	assert_int_equal(pt_control_workers(root, &list, &n, &e), PT_OK);
	assert_int_equal(n, 2);
	x_free(list);
}

static void test_alive_pid(void **state)
{
	pt_worker_entry w;
	char node[256];
	pid_t child;
	int st;

	(void)state;
	pt_control_nodename(node, sizeof(node));
	memset(&w, 0, sizeof(w));
	snprintf(w.info.node, sizeof(w.info.node), "%s", node);
	w.info.pid = getpid();
	w.has_hb = 1;
	w.hb.time = 100;
	assert_true(pt_control_worker_alive(&w, 110, 30, node));
	/* An exited child not yet reaped (a zombie) counts as gone... */
	child = fork();
	if (child == 0)
		_exit(0);
	assert_true(child > 0);
	w.info.pid = child;
	for (int i = 0; i < 200 && pt_control_worker_alive(&w, 110, 30, node); i++)
		usleep(10000);
	assert_false(pt_control_worker_alive(&w, 110, 30, node));
	/* ...and so does a reaped one. */
	waitpid(child, &st, 0);
	assert_false(pt_control_worker_alive(&w, 110, 30, node));
	/* On another machine the pid is not checked. */
	snprintf(w.info.node, sizeof(w.info.node), "other-machine");
	assert_true(pt_control_worker_alive(&w, 110, 30, node));
}

static void test_trigger_roundtrip(void **state)
{
	pt_trigger t, r;
	pt_error e;
	char p[512];

	(void)state;
	pt_error_clear(&e);
	/* No trigger yet: PT_OK with an empty id. */
	assert_int_equal(pt_control_trigger_read(root, &r, &e), PT_OK);
	assert_string_equal(r.id, "");
	memset(&t, 0, sizeof(t));
	pt_control_trigger_id(t.id, sizeof(t.id), 1700000000.0);
	assert_int_equal(strlen(t.id), strlen("20231114-221320-abcd"));
	snprintf(t.state, sizeof(t.state), "%s", PT_TRIGGER_ACTIVE);
	t.start_step = 107;
	t.steps = 3;
	t.wait = 5;
	t.save_raw = PT_RAW_MASTER;
	snprintf(t.run_dir, sizeof(t.run_dir), "/out/x");
	snprintf(t.raw_dir, sizeof(t.raw_dir), "/out/x/raw_trace");
	t.created = 1.5;
	t.deadline = 99.25;
	snprintf(t.host, sizeof(t.host), "master");
	/* Our own pid: an owner that is alive on this machine, whatever else
	 * runs here (an active trigger of a dead owner reads as done). */
	t.pid = getpid();
	t.round = 1;
	t.rounds = 3;
	snprintf(t.first_id, sizeof(t.first_id), "first-round");
	assert_int_equal(pt_control_trigger_add_worker(&t, "h_0_1"), PT_OK);
	assert_int_equal(pt_control_trigger_add_worker(&t, "h_1_\"2"), PT_OK);
	assert_int_equal(pt_control_trigger_write(root, &t, &e), PT_OK);
	assert_int_equal(pt_control_trigger_read(root, &r, &e), PT_OK);
	assert_string_equal(r.id, t.id);
	assert_string_equal(r.state, "active");
	assert_int_equal(r.start_step, 107);
	assert_int_equal(r.steps, 3);
	assert_int_equal(r.wait, 5);
	assert_int_equal(r.save_raw, PT_RAW_MASTER);
	assert_string_equal(r.raw_dir, "/out/x/raw_trace");
	assert_true(r.deadline == 99.25);
	assert_int_equal(r.pid, getpid());
	assert_int_equal(r.round, 1);
	assert_int_equal(r.rounds, 3);
	assert_string_equal(r.first_id, "first-round");
	assert_int_equal(r.nworkers, 2);
	assert_string_equal(r.workers[1], "h_1_\"2");
	pt_control_trigger_clear(&r);
	/* The owner gone (a child that exited and was reaped: its pid is
	 * free): the active trigger reads as done. */
	{
		t.pid = tu_dead_pid();
		assert_int_equal(pt_control_trigger_write(root, &t, &e), PT_OK);
		assert_int_equal(pt_control_trigger_read(root, &r, &e), PT_OK);
		assert_string_equal(r.state, "done");
		pt_control_trigger_clear(&r);
	}
	pt_control_trigger_clear(&t);
	/* Not a trigger: PT_EFORMAT naming the file. */
	path(p, sizeof(p), "trigger.json");
	tu_write_text(p, "{\"format\":\"something-else\"}");
	assert_int_equal(pt_control_trigger_read(root, &r, &e), PT_EFORMAT);
	assert_string_equal(r.id, "");
	tu_write_text(p, "{\"format\":\"perftracker-trigger\",\"id\":\"x\"");
	assert_int_equal(pt_control_trigger_read(root, &r, &e), PT_EPARSE);
}

static void test_raw_policy(void **state)
{
	(void)state;
	assert_int_equal(pt_control_raw_policy("none"), PT_RAW_NONE);
	assert_int_equal(pt_control_raw_policy("master"), PT_RAW_MASTER);
	assert_int_equal(pt_control_raw_policy("all"), PT_RAW_ALL);
	assert_int_equal(pt_control_raw_policy("All"), -1);
	assert_int_equal(pt_control_raw_policy(NULL), -1);
	assert_string_equal(pt_control_raw_name(PT_RAW_MASTER), "master");
}

static void test_lock(void **state)
{
	char p[512], holder[600], node[256], content[600];
	pt_error e;
	pid_t child;
	int st;

	(void)state;
	pt_control_nodename(node, sizeof(node));
	path(p, sizeof(p), "locks/trigger.lock");
	snprintf(content, sizeof(content),
		 "{\"id\":\"A\",\"node\":\"%s\",\"pid\":%ld,\"deadline\":200}", node, (long)getpid());
	pt_error_clear(&e);
	assert_int_equal(pt_control_lock(p, content, holder, sizeof(holder), &e), PT_OK);
	/* Second taker gets 1 and the holder's content. */
	assert_int_equal(pt_control_lock(p, "{\"id\":\"B\"}", holder, sizeof(holder), &e), 1);
	assert_string_equal(holder, content);
	/* Ours, alive, before its deadline: not stale; after it: stale. */
	assert_false(pt_control_lock_stale(p, holder, 100, node));
	assert_true(pt_control_lock_stale(p, holder, 201, node));
	/* Holder pid gone on this machine: stale; on another machine we cannot tell. */
	child = fork();
	if (child == 0)
		_exit(0);
	waitpid(child, &st, 0);
	snprintf(content, sizeof(content), "{\"node\":\"%s\",\"pid\":%ld,\"deadline\":200}", node,
		 (long)child);
	assert_true(pt_control_lock_stale(p, content, 100, node));
	assert_false(pt_control_lock_stale(p, content, 100, "other"));
	/* Unparsable and fresh: not stale (may be mid-write). */
	assert_false(pt_control_lock_stale(p, "{\"id\":", (double)time(NULL), node));
	assert_true(pt_control_lock_stale(p, "{\"id\":", (double)time(NULL) + 120, node));
	assert_int_equal(pt_control_unlock(p, &e), PT_OK);
	assert_int_equal(pt_control_unlock(p, &e), PT_OK);
	assert_int_equal(pt_control_lock(p, "{}", holder, sizeof(holder), &e), PT_OK);
}

static void test_status_and_list(void **state)
{
	pt_wstatus s, r;
	pt_error e;
	char **names = NULL;
	size_t n = 0;
	char d[512];

	(void)state;
	pt_error_clear(&e);
	memset(&s, 0, sizeof(s));
	snprintf(s.state, sizeof(s.state), "%s", PT_STATE_FAILED);
	snprintf(s.host, sizeof(s.host), "h");
	s.rank = 3;
	s.start_step = 10;
	s.end_step = 12;
	s.time = 5;
	snprintf(s.error, sizeof(s.error), "No space left on device");
	assert_int_equal(pt_control_status_write(root, "T9", "h_3_5", &s, &e), PT_OK);
	assert_int_equal(pt_control_status_write(root, "T9", "h_1_5", &s, &e), PT_OK);
	assert_int_equal(pt_control_status_read(root, "T9", "h_3_5", &r, &e), PT_OK);
	assert_string_equal(r.state, "failed");
	assert_int_equal(r.rank, 3);
	assert_int_equal(r.start_step, 10);
	assert_int_equal(r.end_step, 12);
	assert_string_equal(r.error, "No space left on device");
	assert_int_equal(pt_control_list(root, "status", "T9", &names, &n, &e), PT_OK);
	assert_int_equal(n, 2);
	assert_string_equal(names[0], "h_1_5");
	assert_string_equal(names[1], "h_3_5");
	pt_control_names_free(names, n);
	/* A missing directory lists as empty. */
	assert_int_equal(pt_control_list(root, "status", "T0", &names, &n, &e), PT_OK);
	assert_int_equal(n, 0);
	assert_int_equal(pt_control_remove_dir(root, "status", "T9", &e), PT_OK);
	snprintf(d, sizeof(d), "%s/status/T9", root);
	assert_int_equal(access(d, F_OK), -1);
	assert_int_equal(pt_control_remove_dir(root, "status", "T9", &e), PT_OK);
}

static void test_agent_running(void **state)
{
	char p[512], node[256], content[600];
	pid_t child;
	int st;
	double now = (double)time(NULL);

	(void)state;
	pt_control_nodename(node, sizeof(node));
	assert_false(pt_control_agent_running(root, "h1", now, 30));
	assert_int_equal(pt_control_agent_lock_path(p, sizeof(p), root, "h1"), 0);
	snprintf(content, sizeof(content), "{\"host\":\"h1\",\"node\":\"%s\",\"pid\":%ld}", node,
		 (long)getpid());
	assert_int_equal(pt_control_lock(p, content, NULL, 0, NULL), PT_OK);
	assert_true(pt_control_agent_running(root, "h1", now, 30));
	unlink(p);
	child = fork();
	if (child == 0)
		_exit(0);
	waitpid(child, &st, 0);
	snprintf(content, sizeof(content), "{\"host\":\"h1\",\"node\":\"%s\",\"pid\":%ld}", node,
		 (long)child);
	assert_int_equal(pt_control_lock(p, content, NULL, 0, NULL), PT_OK);
	assert_false(pt_control_agent_running(root, "h1", now, 30));
	unlink(p);
	/* Another machine: judged by the heartbeat (or the lock's start time). */
	snprintf(content, sizeof(content),
		 "{\"host\":\"h1\",\"node\":\"far\",\"pid\":1,\"started\":%.1f}", now - 100);
	assert_int_equal(pt_control_lock(p, content, NULL, 0, NULL), PT_OK);
	assert_false(pt_control_agent_running(root, "h1", now, 30));
	assert_int_equal(pt_control_agent_hb_path(p, sizeof(p), root, "h1"), 0);
	snprintf(content, sizeof(content), "{\"time\":%.1f}", now - 5);
	tu_write_text(p, content);
	assert_true(pt_control_agent_running(root, "h1", now, 30));
}

/* A small legacy-profiler trace: two steps, a Python frame, an op. */
static const char tiny_trace[] =
	"[{\"name\": \"ProfilerStep#5\", \"ph\": \"X\", \"ts\": 100, \"dur\": 1000, \"tid\": 1, "
	"\"pid\": \"CPU functions\", \"args\": {}}, "
	"{\"name\": \"ProfilerStep#6\", \"ph\": \"X\", \"ts\": 1100, \"dur\": 1000, \"tid\": 1, "
	"\"pid\": \"CPU functions\", \"args\": {}}, "
	"{\"name\": \"aten::mm\", \"ph\": \"X\", \"ts\": 200, \"dur\": 300, \"tid\": 1, "
	"\"pid\": \"CPU functions\", \"args\": {}}, "
	"{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"t.py(3): f\",\"pid\":\"CPU functions\","
	"\"tid\":1,\"ts\":150.5,\"dur\":500.0,\"args\":{}}]";

static void process_one(const char *policy, const char *wid, int expect_kept)
{
	pt_agent a;
	pt_trigger t;
	pt_error e;
	char spool[512], trace[600], sum[600], kept[PT_CONTROL_PATH_MAX + 64];
	pt_summary *s;

	path(spool, sizeof(spool), "spool/T1");
	assert_int_equal(pt_control_mkdirs(spool, NULL), PT_OK);
	snprintf(trace, sizeof(trace), "%s/%s.json", spool, wid);
	tu_write_text(trace, tiny_trace);
	pt_agent_init(&a, root, NULL, "h");
	path(a.spool, sizeof(a.spool), "spool");
	memset(&t, 0, sizeof(t));
	snprintf(t.id, sizeof(t.id), "T1");
	t.save_raw = pt_control_raw_policy(policy);
	path(t.raw_dir, sizeof(t.raw_dir), "out/raw_trace");
	pt_error_clear(&e);
	assert_int_equal(pt_agent_process(&a, &t, wid, trace, &e), PT_OK);
	/* The spool copy is gone either way. */
	assert_int_equal(access(trace, F_OK), -1);
	snprintf(kept, sizeof(kept), "%s/%s.json", t.raw_dir, wid);
	assert_int_equal(access(kept, F_OK) == 0, expect_kept);
	snprintf(sum, sizeof(sum), "%s/summaries/T1/%s.json", root, wid);
	s = pt_summary_read_file(sum, &e);
	assert_non_null(s);
	assert_null(s->error);
	assert_string_equal(s->host, "h");
	assert_int_equal(s->nsteps, 2);
	assert_true(s->window_ms > 1.99 && s->window_ms < 2.01);
	pt_summary_free(s);
	assert_int_equal(a.processed, 1);
	pt_agent_free(&a);
}

static void test_agent_policies(void **state)
{
	(void)state;
	process_one("none", "h_0_11", 0);
	process_one("master", "h_1_12", 0);
	process_one("master", "h_0_13", 1);
	process_one("all", "h_1_14", 1);
}

static void test_agent_bad_trace(void **state)
{
	pt_agent a;
	pt_trigger t;
	pt_error e;
	char spool[512], trace[600], sum[600];
	pt_summary *s;

	(void)state;
	path(spool, sizeof(spool), "spool/T2");
	assert_int_equal(pt_control_mkdirs(spool, NULL), PT_OK);
	snprintf(trace, sizeof(trace), "%s/h_2_9.json", spool);
	tu_write_text(trace, "this is not json");
	pt_agent_init(&a, root, NULL, "h");
	memset(&t, 0, sizeof(t));
	snprintf(t.id, sizeof(t.id), "T2");
	pt_error_clear(&e);
	/* An unreadable trace still yields a (failed) summary: the master
	 * lists the worker instead of waiting for it. */
	assert_int_equal(pt_agent_process(&a, &t, "h_2_9", trace, &e), PT_OK);
	snprintf(sum, sizeof(sum), "%s/summaries/T2/h_2_9.json", root);
	s = pt_summary_read_file(sum, &e);
	assert_non_null(s);
	assert_non_null(s->error);
	pt_summary_free(s);
	assert_int_equal(a.failed, 1);
	pt_agent_free(&a);
}

static void test_agent_poll(void **state)
{
	pt_agent a;
	pt_trigger t;
	pt_error e;
	char spool[512], p[PT_CONTROL_PATH_MAX + 64];

	(void)state;
	pt_agent_init(&a, root, NULL, "hx");
	path(a.spool, sizeof(a.spool), "spool");
	pt_error_clear(&e);
	assert_int_equal(pt_agent_lock(&a, &e), PT_OK);
	assert_true(pt_agent_owns_lock(&a));
	/* No trigger: nothing to do. */
	assert_int_equal(pt_agent_poll(&a, &e), 0);
	memset(&t, 0, sizeof(t));
	snprintf(t.id, sizeof(t.id), "T3");
	snprintf(t.state, sizeof(t.state), "%s", PT_TRIGGER_ACTIVE);
	t.steps = 2;
	assert_int_equal(pt_control_trigger_write(root, &t, &e), PT_OK);
	path(spool, sizeof(spool), "spool/T3");
	assert_int_equal(pt_control_mkdirs(spool, NULL), PT_OK);
	/* Ours, another host's, and an export in progress (hidden). */
	snprintf(p, sizeof(p), "%s/hx_0_1.json", spool);
	tu_write_text(p, tiny_trace);
	snprintf(p, sizeof(p), "%s/hy_1_2.json", spool);
	tu_write_text(p, tiny_trace);
	snprintf(p, sizeof(p), "%s/.hx_2_3.torch.json", spool);
	tu_write_text(p, "[");
	assert_int_equal(pt_agent_poll(&a, &e), 1);
	assert_int_equal(pt_agent_poll(&a, &e), 0);
	snprintf(p, sizeof(p), "%s/summaries/T3/hx_0_1.json", root);
	assert_int_equal(access(p, F_OK), 0);
	snprintf(p, sizeof(p), "%s/summaries/T3/hy_1_2.json", root);
	assert_int_equal(access(p, F_OK), -1);
	pt_control_trigger_clear(&t);
	pt_agent_free(&a);
	/* Unlocked: the lock file is gone. */
	assert_int_equal(pt_control_agent_lock_path(p, sizeof(p), root, "hx"), 0);
	assert_int_equal(access(p, F_OK), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_write_atomic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_unwritable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mkdirs_refuses_other_users, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_atomic_no_follow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remove_dir_no_follow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_workers_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_alive_pid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trigger_roundtrip, setup, teardown),
		cmocka_unit_test(test_raw_policy),
		cmocka_unit_test_setup_teardown(test_lock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_status_and_list, setup, teardown),
		cmocka_unit_test_setup_teardown(test_agent_running, setup, teardown),
		cmocka_unit_test_setup_teardown(test_agent_policies, setup, teardown),
		cmocka_unit_test_setup_teardown(test_agent_bad_trace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_agent_poll, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
