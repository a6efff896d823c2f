/*
 * test_agent_nsys.c - the node agent's nsys capture of GPU metrics
 * (src/agent/agent.c, docs/hardware.md "10 kHz capture"): a trigger asking
 * for --nsys-gpu-metrics (or the agent's node default) makes the agent run
 * a stand-in `nsys` found on PATH (a shell script: `profile` sleeps
 * briefly, `export` copies an export written here with GPU_METRICS rows),
 * hold the trace until the capture is read, and join its series (label
 * "nsys", source "nvml+proc+nsys") beside the fake NVML's; a missing nsys,
 * a failing one and an agent exiting during a capture; the trigger
 * record's nsys_gpu_metrics member.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libgen.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "testutil.h"
#include <sqlite3.h>

#include "agent/agent.h"
#include "analysis/summary.h"
#include "control/control.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define MS 1000000LL
#define NSAMPLES 20000  /* 2 s at 10 kHz */

static char root[256];       /* control dir, spool, fixture root, fake nsys */
static char fake_nvml[PATH_MAX];
static char old_path[8192];
static int64_t S;            /* the export's session start, absolute ns */

/* The fake NVML is built next to the test binaries' folder (mk/sampler.mk). */
static void find_fake_nvml(void)
{
	char exe[PATH_MAX], *dir;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	assert_true(n > 0);
	exe[n] = 0;
	dir = dirname(dirname(exe));  /* build-test/tests/test_agent_nsys -> build-test */
	snprintf(fake_nvml, sizeof(fake_nvml), "%s/libnvidia-ml.so.1", dir);
	if (access(fake_nvml, R_OK))
		fail_msg("'%s' missing: make build-test/libnvidia-ml.so.1", fake_nvml);
}

static void put(const char *rel, const char *text)
{
	char p[PATH_MAX], d[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	snprintf(d, sizeof(d), "%s", p);
	assert_int_equal(pt_control_mkdirs(dirname(d), NULL), PT_OK);
	tu_write_text(p, text);
}

/* An export of GPU metrics only, as `nsys profile --trace=none
 * --gpu-metrics-devices=all` gives: session start S, a sample every
 * 100 us for 2 s.  GPU 0: SMs active 60%, NVLink TX 30 + 10 = 40% of
 * user data (protocol data 5% is not payload), RX 20 + 5 = 25%, GPC clock
 * 1500 MHz; GPU 1: SMs active 10%. */
static void make_export(const char *path)
{
	static const struct { int64_t type; int metric, value; } row[] = {
		{ 0x10000, 1, 60 }, { 0x10000, 2, 30 }, { 0x10000, 3, 10 }, { 0x10000, 4, 20 },
		{ 0x10000, 5, 5 },  { 0x10000, 6, 5 },  { 0x10000, 7, 1500 }, { 0x10001, 1, 10 },
	};
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	char sql[2048];

	unlink(path);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	snprintf(sql, sizeof(sql),
		 "BEGIN;"
		 "CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT,"
		 " localTime TEXT);"
		 "CREATE TABLE TARGET_INFO_GPU_METRICS (typeId INTEGER NOT NULL, sourceId INTEGER"
		 " NOT NULL, typeName TEXT NOT NULL, metricId INTEGER NOT NULL, metricName TEXT"
		 " NOT NULL);"
		 "CREATE TABLE GPU_METRICS (timestamp INTEGER, typeId INTEGER NOT NULL,"
		 " metricId INTEGER NOT NULL, value INTEGER NOT NULL);"
		 "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (%lld,'','');"
		 "INSERT INTO TARGET_INFO_GPU_METRICS VALUES"
		 " (65536,1,'GPU 0 gh100',1,'SMs Active [Throughput %%]'),"
		 " (65536,1,'GPU 0 gh100',2,'NVLink TX Requests User Data [Throughput %%]'),"
		 " (65536,1,'GPU 0 gh100',3,'NVLink TX Responses User Data [Throughput %%]'),"
		 " (65536,1,'GPU 0 gh100',4,'NVLink RX Requests User Data [Throughput %%]'),"
		 " (65536,1,'GPU 0 gh100',5,'NVLink RX Responses User Data [Throughput %%]'),"
		 " (65536,1,'GPU 0 gh100',6,'NVLink TX Requests Protocol Data [Throughput %%]'),"
		 " (65536,1,'GPU 0 gh100',7,'GPC Clock Frequency [MHz]'),"
		 " (65537,1,'GPU 1 gh100',1,'SMs Active [Throughput %%]');",
		 (long long)S);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO GPU_METRICS VALUES (?,?,?,?)", -1,
					    &st, NULL), SQLITE_OK);
	for (int k = 0; k < NSAMPLES; k++)
		for (size_t r = 0; r < sizeof(row) / sizeof(row[0]); r++) {
			sqlite3_bind_int64(st, 1, (int64_t)k * 100000);
			sqlite3_bind_int64(st, 2, row[r].type);
			sqlite3_bind_int(st, 3, row[r].metric);
			sqlite3_bind_int(st, 4, row[r].value);
			assert_int_equal(sqlite3_step(st), SQLITE_DONE);
			sqlite3_reset(st);
		}
	sqlite3_finalize(st);
	assert_int_equal(sqlite3_exec(db, "COMMIT;", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

static int setup(void **state)
{
	char p[PATH_MAX + 32];
	const char *path = getenv("PATH");

	(void)state;
	find_fake_nvml();
	/* No "nsys" in the paths: the notes and the log are searched for it. */
	tu_tmpdir(root, sizeof(root), "pt_test_agentcap");
	snprintf(old_path, sizeof(old_path), "%s", path ? path : "/usr/bin:/bin");
	/* A fixture /proc with the available memory only (the rest is noted). */
	put("fix/proc/meminfo", "MemTotal: 16000000 kB\nMemAvailable: 1000 kB\n");
	/* The stand-in nsys: records its arguments; `profile` writes its pid,
	 * sleeps briefly (or $PT_FAKE_SLEEP s), writes the report and says it
	 * slept its whole time (file `slept`); `export` copies the export
	 * written here; $PT_FAKE_FAIL makes it fail with status 3. */
	put("bin/nsys", "#!/bin/sh\n"
			"cmd=$1; shift\n"
			"for a; do case $a in --output=*) out=${a#--output=};; esac; done\n"
			"echo \"$cmd $*\" >> \"$PT_FAKE_DIR/args\"\n"
			"[ -n \"$PT_FAKE_FAIL\" ] && { echo boom >&2; exit 3; }\n"
			"case $cmd in\n"
			"profile) echo $$ > \"$PT_FAKE_DIR/pid.tmp\";"
			" mv \"$PT_FAKE_DIR/pid.tmp\" \"$PT_FAKE_DIR/profile.pid\"; sleep \"${PT_FAKE_SLEEP:-0.3}\";"
			" : > \"$out.nsys-rep\"; : > \"$PT_FAKE_DIR/slept\";;\n"
			"export) cp \"$PT_FAKE_SRC\" \"$out\";;\n"
			"esac\n");
	snprintf(p, sizeof(p), "%s/bin/nsys", root);
	assert_int_equal(chmod(p, 0755), 0);
	mkdir(strcat(strcpy(p, root), "/empty"), 0755);
	setenv("PT_FAKE_DIR", root, 1);
	snprintf(p, sizeof(p), "%s/export.sqlite", root);
	setenv("PT_FAKE_SRC", p, 1);
	unsetenv("PT_FAKE_FAIL");
	unsetenv("PT_FAKE_SLEEP");
	unsetenv("FAKE_NVML_GPUS");
	unsetenv("FAKE_NVML_INIT_FAIL");
	S = tu_realtime_ns() / 1000000000 * 1000000000 - 1000000000LL;
	make_export(p);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	setenv("PATH", old_path, 1);
	tu_rm_rf(root);
	return 0;
}

/* PATH: the stand-in's folder first (its script needs sleep and cp), or an
 * empty folder alone (no nsys, even where a real one is installed). */
static void use_path(int with_fake)
{
	char p[PATH_MAX + sizeof(old_path)];

	if (with_fake)
		snprintf(p, sizeof(p), "%s/bin:%s", root, old_path);
	else
		snprintf(p, sizeof(p), "%s/empty", root);
	setenv("PATH", p, 1);
}

static void log_collect(void *ctx, const char *msg)
{
	pt_sb *sb = ctx;

	pt_sb_adds(sb, msg);
	pt_sb_addc(sb, '\n');
}

static void agent_init(pt_agent *a, pt_sb *log)
{
	char fix[PATH_MAX];

	snprintf(fix, sizeof(fix), "%s/fix", root);
	pt_agent_init(a, root, NULL, "node7");
	snprintf(a->spool, sizeof(a->spool), "%s/spool", root);
	a->hw_opt.nvml = fake_nvml;
	a->hw_opt.root = x_strndup(fix, strlen(fix));
	a->hw_opt.slow_interval_ns = 10 * MS;
	a->log = log_collect;
	a->log_ctx = log;
	a->poll_s = 0.05;
}

static void agent_free(pt_agent *a)
{
	char *r = (char *)a->hw_opt.root;

	pt_agent_free(a);
	x_free(r);
}

/* This process as worker node7_0_<pid>, `rate` steps/s (0: unknown), at
 * step `step`; the heartbeat is stamped 5 s ahead so the plan does not
 * extrapolate (exact numbers). */
static void register_worker_rate(char *wid, size_t cap, int64_t step, double rate)
{
	pt_worker_info w;
	pt_heartbeat hb;

	memset(&w, 0, sizeof(w));
	pt_control_worker_id(wid, cap, "node7", 0, getpid());
	snprintf(w.id, sizeof(w.id), "%s", wid);
	snprintf(w.host, sizeof(w.host), "node7");
	pt_control_nodename(w.node, sizeof(w.node));
	w.rank = 0;
	w.local_rank = 0;
	w.world_size = 1;
	w.local_world_size = 1;
	w.pid = getpid();
	w.started = pt_control_now();
	assert_int_equal(pt_control_register(root, &w, NULL), PT_OK);
	memset(&hb, 0, sizeof(hb));
	hb.step = step;
	/* Stamped 5 s ahead: the estimate stays at `step` (it extrapolates
	 * from the last step's time), so the plan's numbers are exact. */
	hb.step_time = pt_control_now() + 5;
	hb.time = pt_control_now() + 5;
	hb.rate = rate;
	snprintf(hb.state, sizeof(hb.state), "%s", PT_STATE_ARMED);
	assert_int_equal(pt_control_heartbeat_write(root, wid, &hb, NULL), PT_OK);
}

static void register_worker(char *wid, size_t cap, int64_t step)
{
	register_worker_rate(wid, cap, step, 16);
}

static void write_trigger(pt_trigger *t, const char *id, const char *wid, int64_t hz)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->id, sizeof(t->id), "%s", id);
	snprintf(t->state, sizeof(t->state), "%s", PT_TRIGGER_ACTIVE);
	t->start_step = 20;
	t->steps = 2;
	t->save_raw = PT_RAW_ALL;
	t->nsys_gpu_metrics = hz;
	snprintf(t->raw_dir, sizeof(t->raw_dir), "%s/out_%s/raw_trace", root, id);
	t->created = pt_control_now();
	t->deadline = pt_control_now() + 600;
	assert_int_equal(pt_control_trigger_add_worker(t, wid), PT_OK);
	assert_int_equal(pt_control_trigger_write(root, t, NULL), PT_OK);
}

/* The worker's trace: step 20 over [S+1.0 s, S+1.3 s), a gemm on GPU 0 at
 * S+1.05 s (50 ms), a ring AllReduce at S+1.15 s (100 ms). */
static void drop_trace(const char *tid, const char *wid)
{
	char rel[PATH_MAX], trace[4096];
	long long s_us = (long long)(S / 1000);

	snprintf(trace, sizeof(trace),
		 "{\"schemaVersion\":1,\"traceEvents\":["
		 "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#20\",\"pid\":100,"
		 "\"tid\":100,\"ts\":%lld,\"dur\":300000},"
		 "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"void gemm<float>(int)\",\"pid\":0,"
		 "\"tid\":7,\"ts\":%lld,\"dur\":50000,\"args\":{\"device\":0,\"stream\":7,"
		 "\"grid\":[128,2,1],\"block\":[256,1,1]}},"
		 "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_AllReduce_Sum_f32_RING_LL"
		 "(ncclDevComm*, unsigned long, ncclWork*)\",\"pid\":0,\"tid\":20,\"ts\":%lld,"
		 "\"dur\":100000,\"args\":{\"device\":0,\"stream\":20,\"grid\":[2,1,1],"
		 "\"block\":[512,1,1]}}]}",
		 s_us + 1000000, s_us + 1050000, s_us + 1150000);
	snprintf(rel, sizeof(rel), "spool/%s/%s.json", tid, wid);
	put(rel, trace);
}

/* Poll until a trace was handled (at most 10 s); the polls before it. */
static int poll_until_handled(pt_agent *a)
{
	pt_error e;
	int waited = 0;

	for (int i = 0; i < 200; i++) {
		int rc;

		pt_error_clear(&e);
		rc = pt_agent_poll(a, &e);
		assert_true(rc >= 0);
		if (rc == 1)
			return waited;
		waited++;
		tu_sleep_ms(50);
	}
	fail_msg("the trace was never handled");
	return -1;
}

static char *slurp(const char *rel)
{
	char p[PATH_MAX];
	char *buf = NULL;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	if (pt_control_read_file(p, 64 << 20, &buf, NULL, NULL))
		return NULL;
	return buf;
}

static size_t count_str(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void read_hw(const char *tid, pt_samples *h)
{
	char p[PATH_MAX];
	pt_error e;

	snprintf(p, sizeof(p), "%s/out_%s/raw_trace/hw_node7.json", root, tid);
	pt_error_clear(&e);
	if (pt_samples_read_file(p, h, &e))
		fail_msg("%s: %s", p, e.msg);
}

/* The whole path: the trigger asks for 10 kHz; the capture is planned from
 * the heartbeat (4 steps to go at 16 steps/s: 0.25 s, 2 steps: 0.125 s;
 * 0.25 + 1.25 x 0.125 + 1 = 1.406 s from now), the trace waits for it,
 * and the summary joins the nsys series (the exact fixture values, not
 * NVML's) while hw_node7.json keeps both. */
static void test_capture(void **state)
{
	pt_agent a;
	pt_trigger t;
	pt_error e;
	pt_sb log = { 0 };
	char wid[PT_CONTROL_ID_MAX], rel[PATH_MAX], *buf;
	pt_samples h;
	const pt_series *se;
	int waited;

	(void)state;
	use_path(1);
	agent_init(&a, &log);
	register_worker(wid, sizeof(wid), 16);
	write_trigger(&t, "T1", wid, 10000);
	pt_error_clear(&e);
	assert_int_equal(pt_agent_poll(&a, &e), 0);
	assert_non_null(strstr(log.buf, "T1: nsys gpu metrics at 10000 Hz for 1.41 s, starting in "
					"0.00 s ("));
	drop_trace("T1", wid);
	waited = poll_until_handled(&a);
	assert_true(waited >= 1);  /* the fake profile alone takes 0.3 s */
	assert_int_equal(count_str(log.buf, "1 trace waits for the nsys capture"), 1);
	assert_non_null(strstr(log.buf, "T1: nsys capture done: 5 series, 100000 samples"));
	assert_non_null(strstr(log.buf, "T1: hardware sampling done: "));
	/* What nsys was asked for. */
	buf = slurp("args");
	assert_non_null(buf);
	assert_non_null(strstr(buf, "profile --trace=none --sample=none --cpuctxsw=none "
			       "--gpu-metrics-devices=all --gpu-metrics-frequency=10000 "
			       "--force-overwrite=true --output="));
	assert_non_null(strstr(buf, "/spool/.nsys-node7/hw_node7 sleep 1.406\nexport "
			       "--type=sqlite --force-overwrite=true"));
	x_free(buf);
	/* The capture's files are gone from the spool. */
	snprintf(rel, sizeof(rel), "%s/spool/.nsys-node7/hw_node7.sqlite", root);
	assert_int_equal(access(rel, F_OK), -1);
	snprintf(rel, sizeof(rel), "%s/spool/.nsys-node7/hw_node7.log", root);
	assert_int_equal(access(rel, F_OK), -1);
	/* The summary: the join took the nsys series (NVML's B/s counters of
	 * the fake give other values), and the timelines carry them. */
	snprintf(rel, sizeof(rel), "summaries/T1/%s.json", wid);
	buf = slurp(rel);
	assert_non_null(buf);
	assert_non_null(strstr(buf, "\"hw_source\":\"nvml+proc+nsys\""));
	assert_non_null(strstr(buf, "{\"group\":\"nvlink ring send\",\"avg_tput_pct\":40.0,"
			       "\"std_tput_pct\":0.0,\"peak_tput_pct\":40.0,\"samples\":1000,"
			       "\"kernels\":1}"));
	assert_non_null(strstr(buf, "{\"group\":\"nvlink ring recv\",\"avg_tput_pct\":25.0,"));
	assert_non_null(strstr(buf, "\"sm_active_pct\":60.0"));
	assert_non_null(strstr(buf, "\"sm_clock_mhz\":1500.0"));
	assert_non_null(strstr(buf, "\"name\":\"nvlink_tx\",\"device\":0,\"label\":\"nsys\""));
	x_free(buf);
	/* hw_node7.json: the nsys series first, NVML's and /proc's kept. */
	read_hw("T1", &h);
	assert_string_equal(h.source, "nvml+proc+nsys");
	assert_int_equal(h.interval_ns, 100000);
	assert_string_equal(h.s[0].label, "nsys");
	se = pt_samples_find(&h, "nvlink_tx", 0, "nsys");
	assert_non_null(se);
	assert_int_equal(se->n, NSAMPLES);
	assert_string_equal(se->unit, "%");
	assert_true(se->v[0] == 40.0 && se->t_ns[0] == S && se->t_ns[NSAMPLES - 1] ==
		    S + (int64_t)(NSAMPLES - 1) * 100000);
	assert_true(pt_samples_find(&h, "sm_active", 1, "nsys")->v[5] == 10.0);
	assert_true(pt_samples_find(&h, "sm_clock", 0, "nsys")->v[0] == 1500.0);
	se = pt_samples_find(&h, "nvlink_tx", 0, "");
	assert_non_null(se);  /* NVML's, in B/s */
	assert_string_equal(se->unit, "B/s");
	assert_non_null(pt_samples_find(&h, "power", 1, ""));
	assert_non_null(pt_samples_find(&h, "mem_available", -1, ""));
	assert_null(strstr(h.note, "nsys"));
	pt_samples_free(&h);
	agent_free(&a);
	pt_control_trigger_clear(&t);
	pt_sb_free(&log);
}

/* No nsys on PATH: the node default (2000 Hz, the trigger not asking) is
 * skipped, said once in the log and in the samples' note (the file and the
 * summary's timelines, which the report shows), and the trace does not
 * wait.  Before that, a trigger without nsys and no default: no capture. */
static void test_missing(void **state)
{
	pt_agent a;
	pt_trigger t;
	pt_error e;
	pt_sb log = { 0 };
	char wid[PT_CONTROL_ID_MAX], rel[PATH_MAX], *buf;
	pt_samples h;

	(void)state;
	use_path(1);
	agent_init(&a, &log);
	register_worker(wid, sizeof(wid), 16);
	write_trigger(&t, "T0", wid, 0);
	pt_error_clear(&e);
	assert_int_equal(pt_agent_poll(&a, &e), 0);
	tu_sleep_ms(50);  /* some samples */
	drop_trace("T0", wid);
	assert_int_equal(pt_agent_poll(&a, &e), 1);
	assert_null(strstr(log.buf, "nsys"));
	snprintf(rel, sizeof(rel), "%s/args", root);
	assert_int_equal(access(rel, F_OK), -1);  /* the stand-in never ran */
	read_hw("T0", &h);
	assert_string_equal(h.source, "nvml+proc");
	pt_samples_free(&h);
	pt_control_trigger_clear(&t);

	use_path(0);
	a.nsys_hz = 2000;
	write_trigger(&t, "T2", wid, 0);
	assert_int_equal(pt_agent_poll(&a, &e), 0);
	tu_sleep_ms(50);
	drop_trace("T2", wid);
	assert_int_equal(pt_agent_poll(&a, &e), 1);  /* no waiting */
	assert_int_equal(count_str(log.buf, "T2: nsys gpu metrics at 2000 Hz asked for, but 'nsys' "
				   "is not on PATH: skipped"), 1);
	read_hw("T2", &h);
	assert_string_equal(h.source, "nvml+proc");
	assert_non_null(strstr(h.note, "nsys: not found on PATH: no GPU metrics at 2000 Hz"));
	assert_null(pt_samples_find(&h, "nvlink_tx", 0, "nsys"));
	assert_non_null(pt_samples_find(&h, "power", 0, ""));  /* NVML's */
	pt_samples_free(&h);
	snprintf(rel, sizeof(rel), "summaries/T2/%s.json", wid);
	buf = slurp(rel);
	assert_non_null(buf);
	assert_non_null(strstr(buf, "nsys: not found on PATH: no GPU metrics at 2000 Hz"));
	x_free(buf);
	agent_free(&a);
	pt_control_trigger_clear(&t);
	pt_sb_free(&log);
}

/* A failing nsys: the failure is logged once and noted (with nsys's log
 * kept), the trace is summarised without nsys series once it failed; a
 * capture longer than nsys_max_s is cut and noted. */
static void test_failure(void **state)
{
	pt_agent a;
	pt_trigger t;
	pt_sb log = { 0 };
	char wid[PT_CONTROL_ID_MAX], *buf;
	pt_samples h;

	(void)state;
	use_path(1);
	setenv("PT_FAKE_FAIL", "1", 1);
	agent_init(&a, &log);
	a.nsys_max_s = 1;
	register_worker(wid, sizeof(wid), 16);
	write_trigger(&t, "T3", wid, 10000);
	drop_trace("T3", wid);
	poll_until_handled(&a);
	assert_int_equal(count_str(log.buf, "T3: nsys capture failed: "), 1);
	assert_non_null(strstr(log.buf, "profile exited with status 3; see "));
	read_hw("T3", &h);
	assert_string_equal(h.source, "nvml+proc");
	assert_non_null(strstr(h.note, "nsys: capture limited to 1 s (the window needs about "
				       "1.41 s); nsys: "));
	assert_non_null(strstr(h.note, "profile exited with status 3; see "));
	assert_non_null(strstr(h.note, "/spool/.nsys-node7/hw_node7.log"));
	assert_null(pt_samples_find(&h, "sm_active", 0, "nsys"));
	pt_samples_free(&h);
	buf = slurp("spool/.nsys-node7/hw_node7.log");
	assert_non_null(buf);
	assert_string_equal(buf, "boom\n");
	x_free(buf);
	buf = slurp("args");
	assert_non_null(strstr(buf, "sleep 1.000\n"));
	assert_null(strstr(buf, "export"));
	x_free(buf);
	unsetenv("PT_FAKE_FAIL");
	agent_free(&a);
	pt_control_trigger_clear(&t);
	pt_sb_free(&log);
}

/* The agent exits while nsys runs (30 s): the capture is cancelled and its
 * process group stopped: the stand-in dies before it slept its time
 * (not: pt_agent_free waited for it to end). */
static void test_cancel(void **state)
{
	pt_agent a;
	pt_trigger t;
	pt_error e;
	pt_sb log = { 0 };
	char wid[PT_CONTROL_ID_MAX], p[PATH_MAX], *buf = NULL;
	long pid;
	int gone = 0;

	(void)state;
	use_path(1);
	setenv("PT_FAKE_SLEEP", "30", 1);
	agent_init(&a, &log);
	register_worker(wid, sizeof(wid), 16);
	write_trigger(&t, "T4", wid, 10000);
	pt_error_clear(&e);
	assert_int_equal(pt_agent_poll(&a, &e), 0);
	/* The stand-in started (polled; the 60 s only stop a test whose
	 * stand-in never starts). */
	snprintf(p, sizeof(p), "%s/profile.pid", root);
	for (int i = 0; i < 3000 && access(p, F_OK); i++)
		tu_sleep_ms(20);
	buf = slurp("args");
	assert_non_null(buf);
	assert_non_null(strstr(buf, "profile "));
	x_free(buf);
	buf = slurp("profile.pid");
	assert_non_null(buf);
	pid = atol(buf);
	x_free(buf);
	assert_true(pid > 1);
	agent_free(&a);
	for (int i = 0; i < 3000 && !gone; i++) {
		gone = tu_proc_gone(pid);
		if (!gone)
			tu_sleep_ms(20);
	}
	assert_true(gone);
	snprintf(p, sizeof(p), "%s/slept", root);
	assert_int_equal(access(p, F_OK), -1);
	unsetenv("PT_FAKE_SLEEP");
	pt_control_trigger_clear(&t);
	pt_sb_free(&log);
}

/* The plan: 64 steps to go at 16 steps/s (4 s), 2 steps (0.125 s): from
 * 3 s before the window (2 s + a quarter of the lead) to 1.156 s after its
 * start, 4.16 s; at most 1 s allowed: the margin before the window goes
 * first (2 s), then the end.  Without a step rate: from now, as long as
 * allowed (60 s, but 600,000 samples a series: 30 s at 20 kHz).  Both
 * cancelled while they wait or run. */
static void test_plan(void **state)
{
	pt_agent a;
	pt_trigger t;
	pt_error e;
	pt_sb log = { 0 };
	char wid[PT_CONTROL_ID_MAX];

	(void)state;
	use_path(1);
	agent_init(&a, &log);
	a.nsys_max_s = 1;
	register_worker(wid, sizeof(wid), 20 - 64);
	write_trigger(&t, "T7", wid, 10000);
	pt_error_clear(&e);
	assert_int_equal(pt_agent_poll(&a, &e), 0);
	assert_non_null(strstr(log.buf, "T7: nsys gpu metrics at 10000 Hz for 1.00 s, starting in "
					"2.00 s ("));
	pt_control_trigger_clear(&t);
	a.nsys_max_s = 60;
	register_worker_rate(wid, sizeof(wid), 16, 0);
	write_trigger(&t, "T8", wid, 20000);
	assert_int_equal(pt_agent_poll(&a, &e), 0);
	assert_non_null(strstr(log.buf, "T8: nsys gpu metrics at 20000 Hz for 30.00 s, starting in "
					"0.00 s ("));
	agent_free(&a);
	pt_control_trigger_clear(&t);
	pt_sb_free(&log);
}

/* trigger.json: the member is written and read; a record without it (an
 * older trigger) reads as 0. */
static void test_trigger_record(void **state)
{
	pt_trigger t, r;
	char *buf;

	(void)state;
	write_trigger(&t, "T5", "node7_0_1", 20000);
	buf = slurp("trigger.json");
	assert_non_null(strstr(buf, ",\"nsys_gpu_metrics\":20000,"));
	x_free(buf);
	assert_int_equal(pt_control_trigger_read(root, &r, NULL), PT_OK);
	assert_int_equal(r.nsys_gpu_metrics, 20000);
	pt_control_trigger_clear(&r);
	put("trigger.json", "{\"format\":\"perftracker-trigger\",\"version\":1,\"id\":\"T6\","
			    "\"state\":\"active\",\"start_step\":5,\"steps\":2,\"workers\":[]}\n");
	assert_int_equal(pt_control_trigger_read(root, &r, NULL), PT_OK);
	assert_string_equal(r.id, "T6");
	assert_int_equal(r.nsys_gpu_metrics, 0);
	pt_control_trigger_clear(&r);
	pt_control_trigger_clear(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_capture, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_plan, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trigger_record, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
