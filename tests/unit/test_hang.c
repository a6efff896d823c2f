/*
 * test_hang.c - unit tests for hang diagnosis (src/hang/hang.c): the
 * stack dumps the collector's watchdog writes (faulthandler text under our
 * header), file and frame normalisation, grouping, suspects, the
 * explanation and the "Hang" report, with exact expectations.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/autoprof.h"
#include "control/control.h"
#include "hang/hang.h"
#include "report/report.h"
#include "util/xalloc.h"

#include <sys/stat.h>
#include <unistd.h>

/* Rank 1: stuck in user code.  Two threads; the training thread is the
 * older one, listed last by faulthandler. */
static const char dump_stuck[] =
	"format: perftracker-stacks 1\n"
	"worker: node0_1_101\n"
	"host: node0\n"
	"rank: 1\n"
	"pid: 101\n"
	"training_thread: 0x00007f0000000001\n"
	"reason: request\n"
	"request: 20250304-061000-ab12-123\n"
	"time: 1741068600.250\n"
	"step: 10\n"
	"step_time: 1741068590.000\n"
	"\n"
	"Thread 0x00007f00000000aa (most recent call first):\n"
	"  File \"/usr/lib/python3.11/threading.py\", line 320 in wait\n"
	"  File \"/usr/lib/python3.11/threading.py\", line 1002 in _bootstrap\n"
	"\n"
	"Thread 0x00007f0000000001 (most recent call first):\n"
	"  File \"/job/train.py\", line 57 in stuck_here\n"
	"  File \"/job/train.py\", line 80 in main\n"
	"  File \"/job/train.py\", line 99 in <module>\n";

/* Ranks 0 and 2 wait in all_reduce: torch installed in different places,
 * different line numbers; rank 2 is inside the collector's window code
 * (its frames are dropped from the key). */
static const char dump_wait0[] =
	"format: perftracker-stacks 1\n"
	"worker: node0_0_100\n"
	"host: node0\n"
	"rank: 0\n"
	"pid: 100\n"
	"training_thread: 0x0000000000000abc\n"
	"reason: request\n"
	"request: 20250304-061000-ab12-123\n"
	"time: 1741068600.200\n"
	"step: 10\n"
	"step_time: 1741068590.100\n"
	"\n"
	"Current thread 0x0000000000000abc (most recent call first):\n"
	"  File \"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py\", line 1536 in all_reduce\n"
	"  File \"/job/train.py\", line 83 in main\n"
	"  File \"/job/train.py\", line 99 in <module>\n";

static const char dump_wait2[] =
	"format: perftracker-stacks 1\n"
	"worker: node0_2_102\n"
	"host: node0\n"
	"rank: 2\n"
	"pid: 102\n"
	"training_thread: 0x0000000000000def\n"
	"reason: stalled\n"
	"request: \n"
	"time: 1741068600.300\n"
	"step: 10\n"
	"step_time: 1741068590.050\n"
	"\n"
	"Thread 0x0000000000000def (most recent call first):\n"
	"  File \"/opt/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py\", line 1540 in all_reduce\n"
	"  File \"/job/train.py\", line 84 in main\n"
	"  File \"/job/train.py\", line 99 in <module>\n";

static void parse_ok(const char *text, pt_hang_dump *d)
{
	pt_error e;

	pt_error_clear(&e);
	assert_int_equal(pt_hang_parse_dump(text, strlen(text), d, &e), PT_OK);
}

static void test_parse(void **state)
{
	pt_hang_dump d;
	const pt_hang_thread *t;

	(void)state;
	parse_ok(dump_stuck, &d);
	assert_string_equal(d.worker, "node0_1_101");
	assert_string_equal(d.host, "node0");
	assert_int_equal(d.rank, 1);
	assert_int_equal(d.pid, 101);
	assert_string_equal(d.reason, "request");
	assert_string_equal(d.request, "20250304-061000-ab12-123");
	assert_int_equal(d.step, 10);
	assert_true(d.time == 1741068600.25);
	assert_true(d.step_time == 1741068590.0);
	assert_true(d.training_thread == 0x00007f0000000001ull);
	assert_int_equal(d.nthreads, 2);
	assert_true(d.threads[0].id == 0x00007f00000000aaull);
	assert_int_equal(d.threads[0].nframes, 2);
	/* outermost first */
	assert_string_equal(d.threads[0].frames[0].func, "_bootstrap");
	assert_int_equal(d.threads[0].frames[0].line, 1002);
	t = pt_hang_training_thread(&d);
	assert_ptr_equal(t, &d.threads[1]);
	assert_int_equal(t->nframes, 3);
	assert_string_equal(t->frames[0].file, "/job/train.py");
	assert_string_equal(t->frames[0].func, "<module>");
	assert_string_equal(t->frames[2].func, "stuck_here");
	assert_int_equal(t->frames[2].line, 57);
	assert_int_equal(t->current, 0);
	pt_hang_dump_free(&d);

	parse_ok(dump_wait0, &d);
	assert_int_equal(d.nthreads, 1);
	assert_int_equal(d.threads[0].current, 1);
	pt_hang_dump_free(&d);
}

static void test_parse_odd_lines(void **state)
{
	/* Unknown training thread: the last (oldest) one; "???" frames, a
	 * thread without Python frames, a truncated one, an error line, a
	 * quote inside a file name, CRLF. */
	static const char text[] =
		"format: perftracker-stacks 1\r\n"
		"worker: w\r\n"
		"training_thread: 0x99\r\n"
		"\r\n"
		"Thread 0x0000000000000001 (most recent call first):\r\n"
		"  <no Python frame>\r\n"
		"\r\n"
		"Thread 0x0000000000000002 (most recent call first):\r\n"
		"  File ???, line ??? in ???\r\n"
		"  File \"/a/we\", line 1 in \"d.py\", line 7 in f\r\n"
		"  ...\r\n"
		"error: unable to get the thread head state\r\n";
	pt_hang_dump d;
	const pt_hang_thread *t;
	char *key;

	(void)state;
	parse_ok(text, &d);
	assert_int_equal(d.nthreads, 2);
	assert_int_equal(d.threads[0].nframes, 0);
	t = pt_hang_training_thread(&d);
	assert_ptr_equal(t, &d.threads[1]);
	assert_int_equal(t->truncated, 1);
	assert_int_equal(t->nframes, 2);
	assert_string_equal(t->frames[0].file, "/a/we\", line 1 in \"d.py");
	assert_string_equal(t->frames[0].func, "f");
	assert_int_equal(t->frames[0].line, 7);
	assert_string_equal(t->frames[1].file, "???");
	assert_string_equal(t->frames[1].func, "???");
	assert_int_equal(t->frames[1].line, -1);
	assert_string_equal(d.error, "unable to get the thread head state");
	key = pt_hang_stack_key(&d.threads[0]);
	assert_string_equal(key, "");
	x_free(key);
	assert_null(pt_hang_user_frame(&d.threads[0]));
	pt_hang_dump_free(&d);
}

static void test_parse_errors(void **state)
{
	pt_hang_dump d;
	pt_error e;
	static const char notdump[] = "{\"format\":\"perftracker-heartbeat\"}\n";
	static const char nocolon[] = "format: perftracker-stacks 1\nworker w\n\n";
	static const char early[] = "format: perftracker-stacks 1\n\n  File \"a.py\", line 1 in f\n";
	static const char badframe[] = "format: perftracker-stacks 1\n\nThread 0x1 (most recent call "
				       "first):\n  File \"a.py\" line 1 in f\n";

	(void)state;
	pt_error_clear(&e);
	assert_int_equal(pt_hang_parse_dump(notdump, strlen(notdump), &d, &e), PT_EFORMAT);
	assert_string_equal(e.msg, "not a perftracker stack dump");
	assert_int_equal(pt_hang_parse_dump("", 0, &d, &e), PT_EFORMAT);
	pt_error_clear(&e);
	assert_int_equal(pt_hang_parse_dump(nocolon, strlen(nocolon), &d, &e), PT_EPARSE);
	assert_int_equal(e.offset, 29);
	pt_error_clear(&e);
	assert_int_equal(pt_hang_parse_dump(early, strlen(early), &d, &e), PT_EPARSE);
	assert_int_equal(e.offset, 30);
	assert_string_equal(e.msg, "frame line before any thread line");
	pt_error_clear(&e);
	assert_int_equal(pt_hang_parse_dump(badframe, strlen(badframe), &d, &e), PT_EPARSE);
	assert_int_equal(e.offset, 67);
	assert_string_equal(e.msg, "malformed frame line");
	/* Every prefix of a valid dump parses or fails cleanly (no crash, no
	 * leak under ASan). */
	for (size_t n = 0; n <= strlen(dump_stuck); n++) {
		if (pt_hang_parse_dump(dump_stuck, n, &d, NULL) == PT_OK)
			pt_hang_dump_free(&d);
	}
}

static void test_files(void **state)
{
	(void)state;
	assert_string_equal(pt_hang_short_file(
		"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py"),
		"torch/distributed/distributed_c10d.py");
	assert_string_equal(pt_hang_short_file(
		"/opt/venv/lib/python3.11/site-packages/torch/nn/modules/module.py"),
		"torch/nn/modules/module.py");
	assert_string_equal(pt_hang_short_file("/usr/lib/python3.11/threading.py"), "threading.py");
	assert_string_equal(pt_hang_short_file("/usr/local/lib64/python3.12/queue.py"), "queue.py");
	assert_string_equal(pt_hang_short_file("/job/train.py"), "/job/train.py");
	assert_string_equal(pt_hang_short_file("/home/u/mylib/python3/x.py"), "/home/u/mylib/python3/x.py");
	assert_int_equal(pt_hang_file_kind("/usr/lib/python3.11/threading.py"), PT_HANG_LIBRARY);
	assert_int_equal(pt_hang_file_kind("/usr/lib/python3/dist-packages/torch/a.py"), PT_HANG_LIBRARY);
	assert_int_equal(pt_hang_file_kind("<frozen importlib._bootstrap>"), PT_HANG_LIBRARY);
	assert_int_equal(pt_hang_file_kind("/job/train.py"), PT_HANG_USER);
	assert_int_equal(pt_hang_file_kind("<string>"), PT_HANG_USER);
	assert_int_equal(pt_hang_file_kind("/work/main/python/perftracker/_window.py"), PT_HANG_COLLECTOR);
	assert_int_equal(pt_hang_file_kind(
		"/usr/lib/python3/dist-packages/c4d_perftracker_collector/PerfTracker.py"), PT_HANG_COLLECTOR);
	assert_int_equal(pt_hang_file_kind("/job/myperftracker/x.py"), PT_HANG_USER);
}

static void test_keys(void **state)
{
	static const char text[] =
		"format: perftracker-stacks 1\n\n"
		"Thread 0x1 (most recent call first):\n"
		"  File \"/work/main/python/perftracker/_window.py\", line 38 in start\n"
		"  File \"/usr/lib/python3/dist-packages/torch/profiler/profiler.py\", line 500 in start\n"
		"  File \"/work/main/python/perftracker/_window.py\", line 30 in start\n"
		"  File \"/job/train.py\", line 90 in main\n"
		"  File \"/job/train.py\", line 99 in <module>\n";
	pt_hang_dump d;
	const pt_hang_thread *t;
	char *key;

	(void)state;
	parse_ok(text, &d);
	t = pt_hang_training_thread(&d);
	key = pt_hang_stack_key(t);
	assert_string_equal(key, "/job/train.py: <module>|/job/train.py: main|"
				 "torch/profiler/profiler.py: start");
	x_free(key);
	/* innermost user frame; innermost non-collector frame */
	assert_string_equal(pt_hang_user_frame(t)->func, "main");
	assert_string_equal(pt_hang_inner_frame(t)->file,
			    "/usr/lib/python3/dist-packages/torch/profiler/profiler.py");
	pt_hang_dump_free(&d);

	/* The two waiting ranks group together despite paths and lines. */
	{
		pt_hang_dump a, b;
		char *ka, *kb;

		parse_ok(dump_wait0, &a);
		parse_ok(dump_wait2, &b);
		ka = pt_hang_stack_key(pt_hang_training_thread(&a));
		kb = pt_hang_stack_key(pt_hang_training_thread(&b));
		assert_string_equal(ka, "/job/train.py: <module>|/job/train.py: main|"
					"torch/distributed/distributed_c10d.py: all_reduce");
		assert_string_equal(ka, kb);
		x_free(ka);
		x_free(kb);
		pt_hang_dump_free(&a);
		pt_hang_dump_free(&b);
	}
}

static pt_hang_dump D[3];

static void workers3(pt_hang_worker *w)
{
	parse_ok(dump_wait0, &D[0]);
	parse_ok(dump_stuck, &D[1]);
	parse_ok(dump_wait2, &D[2]);
	memset(w, 0, 3 * sizeof(*w));
	w[0] = (pt_hang_worker){ "node0_0_100", "node0", 0, 100, PT_HANG_HUNG, 10, 10.2, &D[0], "on request" };
	w[1] = (pt_hang_worker){ "node0_1_101", "node0", 1, 101, PT_HANG_HUNG, 10, 10.25, &D[1], "on request" };
	w[2] = (pt_hang_worker){ "node0_2_102", "node0", 2, 102, PT_HANG_HUNG, 10, 10.3, &D[2], "automatic" };
}

static void free3(void)
{
	for (int i = 0; i < 3; i++)
		pt_hang_dump_free(&D[i]);
}

static void test_minority(void **state)
{
	pt_hang_worker w[3];
	pt_hang_options o = { 5, "trigger x", 1741068600.5 };
	pt_hang_result r;

	(void)state;
	workers3(w);
	assert_int_equal(pt_hang_analyze(w, 3, &o, &r, NULL), PT_OK);
	assert_int_equal(r.hung, 1);
	assert_int_equal(r.ngroups, 2);
	assert_int_equal(r.groups[0].suspect, 1);
	assert_int_equal(r.groups[0].n, 1);
	assert_int_equal(r.groups[0].members[0], 1);
	assert_string_equal(r.groups[0].function, "/job/train.py: stuck_here");
	assert_string_equal(r.groups[0].where, "/job/train.py: stuck_here");
	assert_string_equal(r.groups[0].key, "/job/train.py: <module>|/job/train.py: main|"
					     "/job/train.py: stuck_here");
	assert_int_equal(r.groups[1].suspect, 0);
	assert_int_equal(r.groups[1].n, 2);
	assert_int_equal(r.groups[1].members[0], 0);
	assert_int_equal(r.groups[1].members[1], 2);
	assert_string_equal(r.groups[1].function, "/job/train.py: main");
	assert_string_equal(r.groups[1].where, "torch/distributed/distributed_c10d.py: all_reduce");
	assert_int_equal(r.nsuspects, 1);
	assert_int_equal(r.suspects[0], 1);
	assert_string_equal(r.explanation,
		"The job is hung: 3 of 3 live workers made no step for 5 s or more. "
		"Worker node0_1_101.json (last step 10) is in /job/train.py: stuck_here. "
		"The other 2 wait in torch/distributed/distributed_c10d.py: all_reduce "
		"(called from /job/train.py: main): the suspect is the likely cause, the others "
		"wait for it.");
	pt_hang_result_free(&r);
	free3();
}

/* Four workers, all in all_reduce (one stack: the stacks alone single
 * nobody out); the Flight Recorder lines of their dumps say rank 3's last
 * all-reduce on the default group was sequence 41, the others' 42: rank
 * 3 never entered the one they wait in, and is the (strong) suspect. */
static void test_never_entered(void **state)
{
	static const char tmpl[] =
		"format: perftracker-stacks 1\n"
		"worker: node0_%d_10%d\nhost: node0\nrank: %d\npid: 10%d\n"
		"training_thread: 0x0000000000000abc\nreason: request\nrequest: r1\n"
		"time: 1741068600.200\nstep: 10\nstep_time: 1741068590.100\n"
		"watch: fr=on read_us=1741068599000000\n"
		"collective: pg=1 seq=7 state=scheduled created_us=1741068500000000 desc=undefined "
		"name=gloo:broadcast\n"
		"collective: pg=0 seq=%d state=scheduled created_us=1741068590000000 desc=default_pg "
		"name=gloo:all_reduce\n"
		"\n"
		"Current thread 0x0000000000000abc (most recent call first):\n"
		"  File \"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py\", "
		"line 1536 in all_reduce\n"
		"  File \"/job/train.py\", line 83 in main\n"
		"  File \"/job/train.py\", line 99 in <module>\n";
	char text[4][2048], ids[4][32];
	pt_hang_dump d[4];
	pt_hang_worker w[4];
	pt_hang_options o = { 5, "hang-check", 1741068600.5 };
	pt_hang_result r;

	(void)state;
	for (int i = 0; i < 4; i++) {
		snprintf(text[i], sizeof(text[i]), tmpl, i, i, i, i, i == 3 ? 41 : 42);
		snprintf(ids[i], sizeof(ids[i]), "node0_%d_10%d", i, i);
		parse_ok(text[i], &d[i]);
		w[i] = (pt_hang_worker){ ids[i], "node0", i, 100 + i, PT_HANG_HUNG, 10, 10.2, &d[i],
					 "on request" };
	}
	assert_string_equal(d[3].fr, "on");
	assert_true(d[3].fr_read_us == 1741068599000000LL);
	assert_int_equal(d[3].ncolls, 2);
	assert_string_equal(d[3].colls[1].pg, "0");
	assert_string_equal(d[3].colls[1].desc, "default_pg");
	assert_string_equal(d[3].colls[1].name, "gloo:all_reduce");
	assert_string_equal(d[3].colls[1].state, "scheduled");
	assert_int_equal(d[3].colls[1].seq, 41);
	assert_true(d[3].colls[1].created_us == 1741068590000000LL);
	assert_int_equal(pt_hang_analyze(w, 4, &o, &r, NULL), PT_OK);
	assert_int_equal(r.ngroups, 1);
	assert_int_equal(r.nmissing, 1);
	assert_int_equal(r.missing[0].worker, 3);
	assert_string_equal(r.missing[0].pg, "0");
	assert_string_equal(r.missing[0].name, "gloo:all_reduce");
	assert_int_equal(r.missing[0].seq, 42);
	assert_int_equal(r.missing[0].last, 41);
	assert_int_equal(r.missing[0].nwaiting, 3);
	assert_string_equal(r.missing[0].site, "/job/train.py:83 in main");
	assert_int_equal(r.nsuspects, 1);
	assert_int_equal(r.suspects[0], 3);
	assert_non_null(strstr(r.explanation,
		"Worker node0_3_103.json never entered gloo:all_reduce (process group 0 "
		"'default_pg', sequence 42) that 3 others entered at /job/train.py:83 in main; "
		"its last was sequence 41 (Flight Recorder)."));
	pt_hang_result_free(&r);
	/* Without the Flight Recorder lines: nobody stands out. */
	for (int i = 0; i < 4; i++)
		d[i].fr[0] = 0;
	assert_int_equal(pt_hang_analyze(w, 4, &o, &r, NULL), PT_OK);
	assert_int_equal(r.nmissing, 0);
	assert_int_equal(r.nsuspects, 0);
	pt_hang_result_free(&r);
	for (int i = 0; i < 4; i++)
		pt_hang_dump_free(&d[i]);
}

static void test_dead_and_behind(void **state)
{
	pt_hang_worker w[3];
	pt_hang_options o = { 60, "hang-check", 1741068600.5 };
	pt_hang_result r;

	(void)state;
	/* Rank 1 killed: dead, no stacks; the other two wait together. */
	workers3(w);
	w[1].state = PT_HANG_DEAD;
	w[1].dump = NULL;
	w[1].since_step = -1;
	assert_int_equal(pt_hang_analyze(w, 3, &o, &r, NULL), PT_OK);
	assert_int_equal(r.hung, 1);
	assert_int_equal(r.ngroups, 1);
	assert_int_equal(r.groups[0].suspect, 0);
	assert_int_equal(r.nsuspects, 1);
	assert_int_equal(r.suspects[0], 1);
	assert_string_equal(r.explanation,
		"The job is hung: 2 of 2 live workers made no step for 60 s or more. "
		"Worker node0_1_101.json is dead (process 101 on node0 is gone, last step 10). "
		"The other 2 wait in torch/distributed/distributed_c10d.py: all_reduce "
		"(called from /job/train.py: main): the suspect is the likely cause, the others "
		"wait for it.");
	pt_hang_result_free(&r);
	free3();

	/* Same place, one worker a step behind. */
	workers3(w);
	w[1].dump = &D[0];
	w[2].step = 9;
	assert_int_equal(pt_hang_analyze(w, 3, &o, &r, NULL), PT_OK);
	assert_int_equal(r.ngroups, 1);
	assert_int_equal(r.groups[0].n, 3);
	assert_int_equal(r.groups[0].min_step, 9);
	assert_int_equal(r.groups[0].max_step, 10);
	assert_int_equal(r.nsuspects, 1);
	assert_int_equal(r.suspects[0], 2);
	assert_string_equal(r.explanation,
		"The job is hung: 3 of 3 live workers made no step for 60 s or more. "
		"Worker node0_2_102.json is behind (last step 9, others reached 10) and is in "
		"/job/train.py: main. The other 2 wait in torch/distributed/distributed_c10d.py: "
		"all_reduce (called from /job/train.py: main): the suspect is the likely cause, the "
		"others wait for it.");
	pt_hang_result_free(&r);

	/* Everybody in one place at one step: no suspect. */
	w[2].step = 10;
	assert_int_equal(pt_hang_analyze(w, 3, &o, &r, NULL), PT_OK);
	assert_int_equal(r.nsuspects, 0);
	assert_string_equal(r.explanation,
		"The job is hung: 3 of 3 live workers made no step for 60 s or more. "
		"All 3 workers with stacks are in the same place, "
		"torch/distributed/distributed_c10d.py: all_reduce (called from /job/train.py: "
		"main), at the same step: no worker stands out; look for a process outside these "
		"workers, or a deadlock they share.");
	pt_hang_result_free(&r);

	/* Two against two: no minority, nobody behind. */
	free3();
}

/* A worker stopped with SIGSTOP (issue 11): alive, hung, no stacks, and
 * behind; the other waits in all_reduce.  It is the first suspect in a job
 * of 2, and in a job of 3 even where the silent one is not behind. */
static void test_stopped_worker(void **state)
{
	pt_hang_worker w[3];
	pt_hang_options o = { 5, "trigger x", 1741068600.5 };
	pt_hang_result r;

	(void)state;
	workers3(w);
	/* Two workers: rank 0 answered from all_reduce at step 10, rank 1
	 * stopped at step 9 gives nothing. */
	w[1].dump = NULL;
	w[1].step = 9;
	w[1].stacks = "none: no answer within 5.0 s (no watchdog?)";
	assert_int_equal(pt_hang_analyze(w, 2, &o, &r, NULL), PT_OK);
	assert_int_equal(r.hung, 1);
	assert_int_equal(r.nsuspects, 1);
	assert_int_equal(r.suspects[0], 1);
	assert_string_equal(r.explanation,
		"The job is hung: 2 of 2 live workers made no step for 5 s or more. "
		"Worker node0_1_101.json is behind (last step 9, others reached 10) and gave no "
		"stacks: the process may be stopped (SIGSTOP, a debugger) or blocked outside "
		"Python. The other 1 waits in torch/distributed/distributed_c10d.py: all_reduce "
		"(called from /job/train.py: main): the suspect is the likely cause, the others "
		"wait for it.");
	pt_hang_result_free(&r);

	/* Stopped at the same step as the others (between step() and the next
	 * all_reduce): silent is enough. */
	w[1].step = 10;
	assert_int_equal(pt_hang_analyze(w, 2, &o, &r, NULL), PT_OK);
	assert_int_equal(r.nsuspects, 1);
	assert_int_equal(r.suspects[0], 1);
	pt_hang_result_free(&r);

	/* Three workers, the silent one behind, before a minority group: rank 2
	 * stuck elsewhere is a suspect too, after it. */
	w[1].step = 9;
	w[2].dump = &D[1];
	assert_int_equal(pt_hang_analyze(w, 3, &o, &r, NULL), PT_OK);
	assert_true(r.nsuspects >= 1);
	assert_int_equal(r.suspects[0], 1);
	pt_hang_result_free(&r);

	/* Nobody answered (no watchdog anywhere): silence tells nothing. */
	w[0].dump = w[2].dump = NULL;
	w[1].step = 10;
	assert_int_equal(pt_hang_analyze(w, 3, &o, &r, NULL), PT_OK);
	assert_int_equal(r.nsuspects, 0);
	pt_hang_result_free(&r);
	free3();
}

/* Two workers with stacks, one a step behind in its own code, the other
 * in all_reduce: one behind, one ahead, the one behind is the suspect. */
static void test_behind_in_two(void **state)
{
	pt_hang_worker w[3];
	pt_hang_options o = { 5, "trigger x", 1741068600.5 };
	pt_hang_result r;

	(void)state;
	workers3(w);
	w[1].step = 9;
	assert_int_equal(pt_hang_analyze(w, 2, &o, &r, NULL), PT_OK);
	assert_int_equal(r.nsuspects, 1);
	assert_int_equal(r.suspects[0], 1);
	pt_hang_result_free(&r);
	free3();
}

static void test_not_hung(void **state)
{
	pt_hang_worker w[3];
	pt_hang_options o = { 60, "hang-check", 0 };
	pt_hang_result r;

	(void)state;
	workers3(w);
	for (int i = 0; i < 3; i++) {
		w[i].state = PT_HANG_RUNNING;
		w[i].since_step = 0.1;
	}
	assert_int_equal(pt_hang_analyze(w, 3, &o, &r, NULL), PT_OK);
	assert_int_equal(r.hung, 0);
	assert_string_equal(r.explanation, "Every live worker made a step within the last 60 s: "
					   "the job is making progress.");
	pt_hang_result_free(&r);
	for (int i = 0; i < 3; i++)
		w[i].state = i ? PT_HANG_EXITED : PT_HANG_DEAD;
	assert_int_equal(pt_hang_analyze(w, 3, &o, &r, NULL), PT_OK);
	assert_int_equal(r.hung, 0);
	assert_int_equal(r.ngroups, 0);
	assert_string_equal(r.explanation, "No worker is alive (1 dead or lost, 2 exited): the job "
					   "has ended or crashed, it is not hung.");
	pt_hang_result_free(&r);
	free3();
}

static void test_report(void **state)
{
	pt_hang_worker w[3];
	pt_hang_options o = { 5, "trigger x", 1741068600.5 };
	pt_hang_result r;
	pt_report *rep;
	pt_sb sb = { 0 };
	const pt_rv *h, *f;

	(void)state;
	workers3(w);
	assert_int_equal(pt_hang_analyze(w, 3, &o, &r, NULL), PT_OK);
	rep = pt_hang_report(w, 3, &o, &r, NULL);
	assert_non_null(rep);
	h = pt_rv_get(pt_report_root_c(rep), "Hang");
	assert_non_null(h);
	assert_non_null(pt_rv_get(pt_report_root_c(rep), "GPU Compute"));
	pt_report_json(pt_rv_get(h, "suspect_workers"), 0, &sb);
	assert_string_equal(sb.buf, "[\n    \"node0_1_101.json\"\n]");
	pt_sb_reset(&sb);
	pt_report_json(pt_rv_get(pt_rv_get(h, "workers"), "node0_1_101.json"), 0, &sb);
	assert_string_equal(sb.buf,
		"{\n"
		"    \"rank\": 1,\n"
		"    \"host\": \"node0\",\n"
		"    \"pid\": 101,\n"
		"    \"state\": \"hung\",\n"
		"    \"last step\": 10,\n"
		"    \"seconds since last step\": 10.25,\n"
		"    \"suspect\": true,\n"
		"    \"function\": \"/job/train.py: stuck_here\",\n"
		"    \"where\": \"/job/train.py:57 in stuck_here\",\n"
		"    \"stack\": \"/job/train.py: <module>|/job/train.py: main|/job/train.py: stuck_here\",\n"
		"    \"threads\": 2,\n"
		"    \"stacks\": \"on request\"\n"
		"}");
	assert_int_equal(pt_rv_get(h, "hung")->type, PT_RV_BOOL);
	assert_int_equal(pt_rv_get(h, "hung")->i, 1);
	assert_int_equal(pt_rv_get(h, "groups")->n, 2);
	f = pt_rv_get(pt_report_root_c(rep), "findings");
	assert_int_equal(f->n, 1);
	assert_string_equal(pt_rv_get(f->child, "category")->str, "Hang");
	assert_string_equal(pt_rv_get(f->child, "function")->str, "/job/train.py: stuck_here");
	assert_true(pt_rv_get(f->child, "others")->num == 10.25);
	assert_string_equal(pt_rv_get(f->child, "explanation")->str,
		"worker node0_1_101.json is stuck in /job/train.py: stuck_here (last step 10, no step "
		"for 10.2 s) while the others are elsewhere: the likely cause of the hang");
	/* alone in its stack, the two others share one: strong (docs/hang.md) */
	assert_string_equal(pt_rv_get(pt_rv_get(f->child, "confidence"), "level")->str, "strong");
	assert_string_equal(pt_rv_get(pt_rv_get(f->child, "confidence"), "evidence")->str,
		"1 worker in its stack; the other 2 live workers with stacks share one stack");
	assert_true(pt_rv_get(pt_rv_get(f->child, "confidence"),
			      "time lost (share of window)")->num == 1);
	assert_string_equal(pt_rv_get(pt_rv_get(pt_rv_get(pt_report_root_c(rep), "workers"),
						 "node0_2_102.json"), "error")->str,
			    "hung at step 10 (no step for 10.3 s)");
	pt_sb_free(&sb);
	pt_report_free(rep);
	pt_hang_result_free(&r);
	free3();
}

/* The request the master writes and the way the watchdog reads it (no
 * allocation, a fixed buffer). */
static void test_request(void **state)
{
	char dir[] = "/tmp/pt_test_hang.XXXXXX", path[512], id[96], id2[96], got[96];
	char *text = NULL;
	size_t len = 0;
	double t = 0, now = pt_control_now();

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(pt_control_stacks_request(dir, id, sizeof(id), NULL), PT_OK);
	assert_int_equal(pt_control_stacks_request_path(path, sizeof(path), dir), 0);
	assert_int_equal(pt_control_read_file(path, PT_STACKS_REQUEST_MAX, &text, &len, NULL), PT_OK);
	assert_true(len < PT_STACKS_REQUEST_MAX);
	assert_int_equal(pt_control_stacks_request_parse(text, got, sizeof(got), &t), 0);
	assert_string_equal(got, id);
	assert_true(t > now - 5 && t < now + 5);
	x_free(text);
	/* A second request right away has another id. */
	assert_int_equal(pt_control_stacks_request(dir, id2, sizeof(id2), NULL), PT_OK);
	assert_string_not_equal(id, id2);
	assert_int_equal(pt_control_stacks_request_parse("{\"time\":1}", got, sizeof(got), &t), -1);
	assert_int_equal(pt_control_stacks_request_parse("{\"id\":\"x\"}", got, sizeof(got), &t), -1);
	assert_int_equal(pt_control_stacks_path(path, sizeof(path), dir, "h_0_1"), 0);
	assert_true(strstr(path, "/stacks/h_0_1.txt") != NULL);
	unlink(path);
	pt_control_stacks_request_path(path, sizeof(path), dir);
	unlink(path);
	pt_control_stacks_dir(path, sizeof(path), dir);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* The watchdog's reading of a request record (control.c, on the JSON
 * tokenizer, no allocation): members in any order and spacing, escapes
 * decoded, an "id" inside another member not taken, the id cut to cap,
 * and anything that is not an object with a string id and a numeric time
 * refused. */
static void test_request_parse(void **state)
{
	static const char *bad[] = {
		"", "[]", "\"id\"", "{\"id\":\"x\",\"time\":\"1\"}", "{\"id\":7,\"time\":1}",
		"{\"id\":\"\",\"time\":1}", "{\"id\":\"x\",\"time\":1", "{\"id\":\"x\" \"time\":1}",
		"{\"id\":\"x\",\"time\":1e999}", "{\"id\":\"x\",\"time\":0x10}",
		"{\"other\":{\"id\":\"x\",\"time\":1}}",
	};
	char got[16], big[PT_STACKS_REQUEST_MAX + 64];
	double t = 0;
	size_t i;

	(void)state;
	assert_int_equal(pt_control_stacks_request_parse(
				 "{\"format\":\"perftracker-stack-request\",\"id\":\"20261201-1\","
				 "\"time\":1764612345.25,\"host\":\"h\",\"pid\":7}\n",
				 got, sizeof(got), &t), 0);
	assert_string_equal(got, "20261201-1");
	assert_true(t == 1764612345.25);
	assert_int_equal(pt_control_stacks_request_parse(
				 " { \"time\" : 2.5e1 ,\n \"x\": [1, {\"id\": \"no\"}], \"id\" : \"a\\u0062\\\"c\" }",
				 got, sizeof(got), &t), 0);
	assert_string_equal(got, "ab\"c");
	assert_true(t == 25);
	assert_int_equal(pt_control_stacks_request_parse("{\"id\":\"0123456789abcdefXYZ\",\"time\":1}",
							  got, sizeof(got), &t), 0);
	assert_string_equal(got, "0123456789abcde");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (pt_control_stacks_request_parse(bad[i], got, sizeof(got), &t) != -1)
			fail_msg("accepted '%s'", bad[i]);
	/* longer than a request can be: refused, not read */
	memset(big, ' ', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	memcpy(big, "{\"id\":\"x\",\"time\":1}", 19);
	assert_int_equal(pt_control_stacks_request_parse(big, got, sizeof(got), &t), -1);
}

/* Automatic profiling: steady 0.125 s steps, then 0.25 s from step 100
 * (binary fractions, so the means are exact).  Window 20 iterations and at
 * least 2.5 s: at step 100+j the window starts at step 80+j and its mean is
 * 0.125 + 0.00625 j, i.e. 1 + 0.05 j times the best; with +32% the first
 * slow window is at j = 7 (1.35x). */
static void test_autoprof(void **state)
{
	pt_autoprof_options o = { 20, 0.32, 60, 2.5, 0 };
	pt_autoprof *ap = pt_autoprof_new(&o);
	char why[512];
	double t = 1000, due_at = 0;
	int64_t step, first = 0;

	(void)state;
	assert_non_null(ap);
	/* No window before 20 iterations and 2.5 s. */
	for (step = 1; step <= 20; step++)
		assert_true(pt_autoprof_feed(ap, "w0", step, t += 0.125) == 0);
	assert_true(pt_autoprof_feed(ap, "w0", step, t += 0.125) == 0.125);
	assert_true(pt_autoprof_feed(ap, "w0", step, t) == 0.125);  /* same step: ignored */
	for (step = 22; step <= 100; step++)
		pt_autoprof_feed(ap, "w0", step, t += 0.125);
	for (step = 101; step <= 140 && !first; step++)
		if (pt_autoprof_feed(ap, "w0", step, t += 0.25) > 0.125 * 1.32)
			first = step;
	assert_int_equal(first, 107);
	/* The decision, through the check on a control directory holding one
	 * worker's heartbeats (the same numbers). */
	{
		char dir[] = "/tmp/pt_test_autoprof.XXXXXX";
		pt_worker_info wi;
		pt_heartbeat hb;
		char node[256];
		pt_autoprof *ap2 = pt_autoprof_new(&o);
		double now = pt_control_now(), t0 = now - 200;

		assert_non_null(mkdtemp(dir));
		memset(&wi, 0, sizeof(wi));
		pt_control_nodename(node, sizeof(node));
		snprintf(wi.id, sizeof(wi.id), "h_0_%d", (int)getpid());
		snprintf(wi.host, sizeof(wi.host), "h");
		snprintf(wi.node, sizeof(wi.node), "%s", node);
		wi.pid = getpid();
		wi.started = t0;
		assert_int_equal(pt_control_register(dir, &wi, NULL), PT_OK);
		memset(&hb, 0, sizeof(hb));
		for (step = 1; step <= 107; step++) {
			t0 += step <= 100 ? 0.125 : 0.25;
			hb.step = step;
			hb.step_time = t0;
			hb.time = now;
			assert_int_equal(pt_control_heartbeat_write(dir, wi.id, &hb, NULL), PT_OK);
			if (pt_autoprof_check(ap2, dir, "h", now, why, sizeof(why))) {
				due_at = (double)step;
				break;
			}
		}
		assert_true(due_at == 107);
		assert_non_null(strstr(why, "auto-profile: worker h_0_"));
		assert_non_null(strstr(why, " over steps 87-107, 1.35x its best 20-iteration window "
					    "(0.125 s over steps 1-21); threshold +32%"));
		/* Another host's workers are not ours. */
		assert_int_equal(pt_autoprof_check(ap2, dir, "other", now, why, sizeof(why)), 0);
		/* Started: baselines reset and cool-down; the same slowdown,
		 * continued past the cool-down, does not trigger again. */
		pt_autoprof_trigger_seen(ap2, now);
		assert_int_equal(pt_autoprof_check(ap2, dir, "h", now + 1, why, sizeof(why)), 0);
		hb.time = now + 100;  /* heartbeats as fresh as the checks below */
		for (step = 108; step <= 300; step++) {
			t0 += 0.25;
			hb.step = step;
			hb.step_time = t0;
			pt_control_heartbeat_write(dir, wi.id, &hb, NULL);
			assert_int_equal(pt_autoprof_check(ap2, dir, "h", now + 100, why, sizeof(why)), 0);
		}
		/* A further slowdown does, once the cool-down has passed. */
		for (step = 301; step <= 340; step++) {
			t0 += 0.5;
			hb.step = step;
			hb.step_time = t0;
			pt_control_heartbeat_write(dir, wi.id, &hb, NULL);
			if (pt_autoprof_check(ap2, dir, "h", now + 100, why, sizeof(why)))
				break;
		}
		assert_int_equal(step, 307);
		assert_int_equal(pt_control_unregister(dir, wi.id, NULL), PT_OK);
		pt_autoprof_free(ap2);
		{
			char p2[600];

			snprintf(p2, sizeof(p2), "%s/workers", dir);
			rmdir(p2);
			snprintf(p2, sizeof(p2), "%s/heartbeats", dir);
			rmdir(p2);
			rmdir(dir);
		}
	}
	pt_autoprof_free(ap);
}

/* The states the master decides from what it saw of each worker
 * (pt_hang_classify), at the hang-check fixture's times. */
static void test_classify(void **state)
{
	pt_hang_seen s = { .id = "h_1", .host = "node7", .rank = 1, .pid = 26549, .alive = 1,
			   .answered = 1, .has_hb = 1, .hb_step = 499, .hb_step_time = 1000.0,
			   .hb_time = 1001.0, .started = 900.0 };
	pt_hang_dump d;
	pt_hang_worker w;
	char note[160] = "";

	(void)state;
	memset(&d, 0, sizeof(d));
	d.step = 500;
	d.step_time = 1000.5;
	s.dump = &d;
	/* the dump's step is the more precise: 500 at 1000.5 */
	pt_hang_classify(&s, 1101.0, 60, &w, note, sizeof(note));
	assert_int_equal(w.state, PT_HANG_HUNG);
	assert_int_equal(w.step, 500);
	assert_true(w.since_step == 100.5);
	assert_string_equal(w.stacks, "on request");
	assert_ptr_equal(w.dump, &d);
	/* still stepping within the timeout: running */
	pt_hang_classify(&s, 1010.5, 60, &w, note, sizeof(note));
	assert_int_equal(w.state, PT_HANG_RUNNING);
	/* no heartbeat within the stale time: lost, since its last heartbeat */
	s.alive = 0;
	s.dump = NULL;
	pt_hang_classify(&s, 1101.0, 60, &w, note, sizeof(note));
	assert_int_equal(w.state, PT_HANG_LOST);
	assert_string_equal(note, "none: no heartbeat for 100 s");
	assert_int_equal(w.step, 499);
	/* never stepped: as long as it has run */
	s.alive = 1;
	s.answered = 0;
	s.has_hb = 0;
	s.hb_step = 0;
	snprintf(note, sizeof(note), "none: no answer within 5.0 s (no watchdog?)");
	pt_hang_classify(&s, 1000.0, 60, &w, note, sizeof(note));
	assert_int_equal(w.state, PT_HANG_HUNG);
	assert_true(w.since_step == 100.0);
	assert_string_equal(note, "none: no answer within 5.0 s (no watchdog?)");
	s.dead = 1;
	pt_hang_classify(&s, 1000.0, 60, &w, note, sizeof(note));
	assert_int_equal(w.state, PT_HANG_DEAD);
	s.exited = 1;
	pt_hang_classify(&s, 1000.0, 60, &w, note, sizeof(note));
	assert_int_equal(w.state, PT_HANG_EXITED);
	assert_string_equal(note, "none: the process exited");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_odd_lines),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_minority),
		cmocka_unit_test(test_never_entered),
		cmocka_unit_test(test_dead_and_behind),
		cmocka_unit_test(test_stopped_worker),
		cmocka_unit_test(test_behind_in_two),
		cmocka_unit_test(test_not_hung),
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_request),
		cmocka_unit_test(test_request_parse),
		cmocka_unit_test(test_autoprof),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
