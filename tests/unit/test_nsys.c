/*
 * test_nsys.c - the Nsight Systems SQLite reader (src/trace/nsys.c) and the
 * format dispatch (src/trace/any.c): the two real exports in
 * tests/data/pipit (counts from sqlite3 CLI queries, see each test), an
 * export written here with the documented schema including GPU_METRICS and
 * NCCL kernels (exact events and samples), bad files (one error, no
 * crash), the metric-name map, and the 10 kHz capture: command lines,
 * rates, a run with a stand-in nsys, a failing and a cancelled one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <unistd.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "testutil.h"
#include <sqlite3.h>

#include "trace/any.h"
#include "trace/nsys.h"
#include "agent/nsys_capture.h"
#include "analysis/summary.h"
#include "util/xalloc.h"

static const char *data_dir(void)
{
	const char *d = getenv("PT_DATA");
	return d && *d ? d : "tests/data";
}

static char *tmp_path(char *buf, size_t n, const char *name)
{
	const char *t = getenv("TMPDIR");

	snprintf(buf, n, "%s/pt_nsys_%ld_%s", t && *t ? t : "/tmp", (long)getpid(), name);
	return buf;
}

/* Count events of a kind and, with name != NULL, of that exact name. */
static size_t count(const pt_store *st, int kind, const char *name)
{
	size_t i, n = 0;

	for (i = 0; i < st->n; i++)
		if (st->ev[i].kind == kind &&
		    (!name || !strcmp(pt_strtab_get(st->strs, st->ev[i].name, NULL), name)))
			n++;
	return n;
}

static const pt_event *first_of(const pt_store *st, int kind)
{
	const pt_event *b = NULL;
	size_t i;

	for (i = 0; i < st->n; i++)
		if (st->ev[i].kind == kind && (!b || st->ev[i].ts < b->ts))
			b = &st->ev[i];
	return b;
}

static int read_path(const char *path, pt_store *st, pt_samples *hw, pt_error *err)
{
	assert_int_equal(pt_store_init(st), PT_OK);
	if (hw)
		assert_int_equal(pt_samples_init(hw), PT_OK);
	pt_error_clear(err);
	return pt_trace_read_any(path, st, hw, err);
}

/* pipit's saxpy export: nsys 2022.2.1, schema 2.9.1, one A100.
 *   select count(*) from CUPTI_ACTIVITY_KIND_KERNEL                       -> 5
 *   select copyKind,srcKind,dstKind,count(*) ... MEMCPY group by 1,2,3   -> 1|0|2|10, 2|2|0|5
 *   select count(*) from CUPTI_ACTIVITY_KIND_RUNTIME                      -> 95, of which 38
 *     lie inside a call on the same thread with the same correlationId (cudaMalloc around
 *     cudaMalloc_v3020): 57 calls, one cuModuleGetLoadingMode (driver API)
 *   select count(*) from NVTX_EVENTS where eventType=59 and end not null  -> 22
 *   select utcEpochNs from TARGET_INFO_SESSION_START_TIME                 -> 1687813257637297504
 *   first kernel: start 924922186, end 942626994, deviceId 0, streamId 7 */
static void test_real_old_schema(void **state)
{
	char path[1024];
	pt_store st;
	pt_samples hw;
	pt_error err;
	const pt_event *k;

	snprintf(path, sizeof(path), "%s/pipit/saxpy-mpi-cuda_nsys_perlmutter0.sqlite", data_dir());
	assert_int_equal(pt_trace_format_of(path), PT_TRACE_NSYS);
	if (read_path(path, &st, &hw, &err))
		fail_msg("%s: %s", err.subject, err.msg);
	assert_int_equal(st.n, 99);
	assert_int_equal(count(&st, PT_K_KERNEL, NULL), 5);
	assert_int_equal(count(&st, PT_K_KERNEL, "saxpy(double *, double *, double *, double, int)"
			       "2_1_1|512_1_1"), 5);
	assert_int_equal(count(&st, PT_K_MEMCPY, "Memcpy HtoD (Pageable -> Device)"), 10);
	assert_int_equal(count(&st, PT_K_MEMCPY, "Memcpy DtoH (Device -> Pageable)"), 5);
	assert_int_equal(count(&st, PT_K_RUNTIME, NULL), 56);
	assert_int_equal(count(&st, PT_K_RUNTIME, "cudaLaunchKernel"), 5);
	assert_int_equal(count(&st, PT_K_RUNTIME, "cudaMalloc"), 15);
	assert_int_equal(count(&st, PT_K_RUNTIME, "cudaMalloc_v3020"), 0);
	assert_int_equal(count(&st, PT_K_RUNTIME, "cudaHostRegister"), 9);
	assert_int_equal(count(&st, PT_K_DRIVER, "cuModuleGetLoadingMode"), 1);
	assert_int_equal(count(&st, PT_K_ANNOTATION, NULL), 22);
	assert_int_equal(count(&st, PT_K_ANNOTATION, "MPI_Send"), 10);
	assert_int_equal(count(&st, PT_K_ANNOTATION, "saxpy"), 5);
	assert_int_equal(count(&st, PT_K_COMM_KERNEL, NULL), 0);
	k = first_of(&st, PT_K_KERNEL);
	assert_int_equal(k->ts, 1687813257637297504LL + 924922186LL);
	assert_int_equal(k->dur, 942626994LL - 924922186LL);
	assert_true(k->flags & PT_EV_GPU);
	assert_int_equal(st.lanes[k->lane].pid, 0);
	assert_int_equal(st.lanes[k->lane].tid, 7);
	assert_int_equal(st.base_ns, 1687813257637297504LL);
	assert_int_equal(st.ndevices, 1);
	assert_string_equal(pt_strtab_get(st.strs, st.device_name, NULL), "NVIDIA A100-SXM4-40GB");
	assert_int_equal(st.nwarnings, 0);
	assert_int_equal(hw.n, 0); /* no GPU_METRICS table */
	assert_string_equal(hw.source, "nsys");
	/* The CPU thread (globalTid 302119224788637 = pid 1230493, tid 1230493) is named. */
	k = first_of(&st, PT_K_RUNTIME);
	assert_int_equal(st.lanes[k->lane].pid, (302119224788637LL >> 24) & 0xffffff);
	assert_int_equal(st.lanes[k->lane].tid, 302119224788637LL & 0xffffff);
	pt_samples_free(&hw);
	pt_store_free(&st);
}

/* pipit's CloverLeaf export: nsys 2024.5.1, schema 3.13.2, 4 A100s.
 *   kernels 1312 (sum(end-start) 294404540 ns), memcpy 254 HtoD 0->2 + 25 DtoH 2->0,
 *   runtime 3048 (no nested duplicates), one of them cuModuleGetLoadingMode, no NVTX table;
 *   select count(distinct demangledName||'/'||gridX||...||blockZ) -> 102 kernel keys. */
static void test_real_new_schema(void **state)
{
	char path[1024];
	pt_store st;
	pt_error err;
	size_t i;
	int64_t total = 0;
	uint32_t maxid = 0;

	snprintf(path, sizeof(path), "%s/pipit/perlmutter-cloverleaf-cuda.sqlite", data_dir());
	if (read_path(path, &st, NULL, &err))
		fail_msg("%s: %s", err.subject, err.msg);
	assert_int_equal(st.n, 1312 + 279 + 3048);
	assert_int_equal(count(&st, PT_K_KERNEL, NULL), 1312);
	assert_int_equal(count(&st, PT_K_MEMCPY, "Memcpy HtoD (Pageable -> Device)"), 254);
	assert_int_equal(count(&st, PT_K_MEMCPY, "Memcpy DtoH (Device -> Pageable)"), 25);
	assert_int_equal(count(&st, PT_K_RUNTIME, NULL), 3047);
	assert_int_equal(count(&st, PT_K_RUNTIME, "cudaLaunchKernel"), 1312);
	assert_int_equal(count(&st, PT_K_RUNTIME, "cudaDeviceSynchronize"), 1312);
	assert_int_equal(count(&st, PT_K_DRIVER, NULL), 1);
	for (i = 0; i < st.n; i++)
		if (st.ev[i].kind == PT_K_KERNEL) {
			total += st.ev[i].dur;
			if (st.ev[i].name > maxid)
				maxid = st.ev[i].name;
		}
	assert_int_equal(total, 294404540);
	{
		/* Distinct kernel keys. */
		char *seen = x_calloc(maxid + 1, 1);
		size_t keys = 0;

		for (i = 0; i < st.n; i++)
			if (st.ev[i].kind == PT_K_KERNEL && !seen[st.ev[i].name]) {
				seen[st.ev[i].name] = 1;
				keys++;
			}
		x_free(seen);
		assert_int_equal(keys, 102);
	}
	assert_int_equal(st.base_ns, 1696392839587175550LL);
	assert_int_equal(st.ndevices, 4);
	assert_string_equal(pt_strtab_get(st.strs, st.device_name, NULL), "NVIDIA A100-SXM4-80GB");
	pt_store_free(&st);
}

/* ---- an export written here ------------------------------------------------ */

/* The documented 3.x schema (the columns we read, with their declared types). */
static const char *const SCHEMA =
	"CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
	"CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT,"
	" localTime TEXT);"
	"CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT,"
	" busLocation TEXT, cuDevice INTEGER);"
	"CREATE TABLE META_DATA_CAPTURE (name TEXT NOT NULL, value TEXT);"
	"CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,"
	" deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,"
	" streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,"
	" demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER,"
	" gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,"
	" blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,"
	" deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,"
	" correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL,"
	" copyKind INTEGER NOT NULL, srcKind INTEGER, dstKind INTEGER);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL,"
	" deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,"
	" correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL,"
	" bytes INTEGER NOT NULL, memKind INTEGER);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,"
	" eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER,"
	" nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);"
	"CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,"
	" rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,"
	" endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);"
	"CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);"
	"CREATE TABLE TARGET_INFO_GPU_METRICS (typeId INTEGER NOT NULL, sourceId INTEGER NOT NULL,"
	" typeName TEXT NOT NULL, metricId INTEGER NOT NULL, metricName TEXT NOT NULL);"
	"CREATE TABLE GPU_METRICS (timestamp INTEGER, typeId INTEGER NOT NULL,"
	" metricId INTEGER NOT NULL, value INTEGER NOT NULL);";

/* Thread 1000/1001 of process 1000, vm 1: globalTid = (1<<48)|(1000<<24)|tid. */
#define GTID(t) ((1LL << 48) | (1000LL << 24) | (t))

static const char *const ROWS =
	"INSERT INTO StringIds VALUES (1,'ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm *,"
	" unsigned long, ncclWork *)'),(2,'void gemm<float>(int)'),(3,'cudaLaunchKernel_v7000'),"
	"(4,'ProfilerStep#7'),(5,'train_step'),(6,'pt_main_thread'),(7,'cuLaunchKernel'),"
	"(8,'gemm');"
	"INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1700000000000000000,'',''),"
	"(5,'','');"
	"INSERT INTO TARGET_INFO_GPU VALUES (0,1,'NVIDIA H100 80GB HBM3','0000:1b:00.0',1),"
	"(0,0,'NVIDIA H100 80GB HBM3','0000:18:00.0',0);"
	"INSERT INTO META_DATA_CAPTURE VALUES ('PROCESS_0:ENVIRONMENT_VARIABLE','RANK=\"3\"'),"
	"('PROCESS_0:ENVIRONMENT_VARIABLE','WORLD_SIZE=8'),('PROCESS_0:COMMAND','python');"
	"INSERT INTO ENUM_CUDA_MEM_KIND VALUES (0,'P','Pageable'),(1,'PI','Pinned'),"
	"(2,'D','Device'),(7,'U','Unknown');"
	/* Two NCCL kernels on device 1 stream 20, one gemm on stream 7. */
	"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start,end,deviceId,contextId,streamId,"
	" correlationId,demangledName,shortName,gridX,gridY,gridZ,blockX,blockY,blockZ) VALUES"
	" (1000000,1500000,1,1,20,11,1,1,8,1,1,512,1,1),"
	" (2000000,2300000,1,1,20,12,1,1,8,1,1,512,1,1),"
	" (1100000,1200000,1,1,7,13,2,8,128,2,1,256,1,1);"
	"INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start,end,deviceId,contextId,streamId,bytes,"
	" copyKind,srcKind,dstKind) VALUES (500000,600000,1,1,7,4096,1,1,2),"
	" (700000,710000,1,1,7,64,8,2,2),(720000,730000,1,1,7,64,10,2,2);"
	"INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start,end,deviceId,contextId,streamId,value,"
	" bytes,memKind) VALUES (800000,810000,1,1,7,0,1024,2);";

static char *rows_cpu(void)
{
	static char buf[2048];

	snprintf(buf, sizeof(buf),
		 /* cudaLaunchKernel with its nested duplicate (same correlation id),
		  * and a driver call. */
		 "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES"
		 " (900000,990000,0,%lld,13,3,0,NULL),(900010,980000,0,%lld,13,3,0,NULL),"
		 " (991000,995000,0,%lld,14,7,0,NULL);"
		 "INSERT INTO NVTX_EVENTS (start,end,eventType,text,globalTid,textId) VALUES"
		 " (400000,2400000,59,NULL,%lld,4),(450000,2350000,59,'train_step',%lld,NULL),"
		 " (460000,NULL,34,'a mark',%lld,NULL),(470000,480000,59,NULL,%lld,NULL);"
		 "INSERT INTO ThreadNames VALUES (6,0,%lld);",
		 GTID(1000), GTID(1000), GTID(1001), GTID(1000), GTID(1000), GTID(1000),
		 GTID(1000), GTID(1000));
	return buf;
}

/* GPU metrics of GPU 1 (typeId 0x10001) every 100 us from 1.0 ms to 2.3 ms,
 * and GPU 0 (typeId 0x10000), a few samples.  NVLink: requests + responses
 * of user data add up; protocol data is not payload. */
static const char *const METRICS =
	"INSERT INTO TARGET_INFO_GPU_METRICS VALUES"
	" (65537,1,'GPU 1 gh100',1,'SMs Active [Throughput %]'),"
	" (65537,1,'GPU 1 gh100',2,'DRAM Read Bandwidth [Throughput %]'),"
	" (65537,1,'GPU 1 gh100',3,'DRAM Write Bandwidth [Throughput %]'),"
	" (65537,1,'GPU 1 gh100',4,'NVLink TX Requests User Data [Throughput %]'),"
	" (65537,1,'GPU 1 gh100',5,'NVLink TX Responses User Data [Throughput %]'),"
	" (65537,1,'GPU 1 gh100',6,'NVLink TX Requests Protocol Data [Throughput %]'),"
	" (65537,1,'GPU 1 gh100',7,'PCIe RX Throughput [Throughput %]'),"
	" (65537,1,'GPU 1 gh100',8,'GPC Clock Frequency [MHz]'),"
	" (65537,1,'GPU 1 gh100',9,'PCIe Read Requests to BAR1 [Requests]'),"
	" (65536,1,'GPU 0 gh100',1,'SMs Active [Throughput %]');";

static int make_db(const char *path, const char *extra)
{
	sqlite3 *db = NULL;
	char *msg = NULL;
	int rc;

	unlink(path);
	rc = sqlite3_open(path, &db);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, extra, NULL, NULL, &msg);
	if (rc != SQLITE_OK)
		fprintf(stderr, "make_db: %s\n", msg ? msg : sqlite3_errmsg(db));
	sqlite3_free(msg);
	sqlite3_close(db);
	return rc;
}

static void make_fixture(const char *path)
{
	char *sql;
	size_t cap = 64 << 10, n;
	int t;

	sql = x_malloc(cap);
	n = (size_t)snprintf(sql, cap, "BEGIN;%s%s%s%s", SCHEMA, ROWS, rows_cpu(), METRICS);
	for (t = 10; t <= 23; t++) {
		long long ts = t * 100000LL;
		/* NVLink TX user data: 30 + 10 (requests + responses) while the
		 * first NCCL kernel runs, 60 + 20 during the second; protocol 5. */
		int req = t < 16 ? 30 : t >= 20 ? 60 : 0, rsp = t < 16 ? 10 : t >= 20 ? 20 : 0;

		n += (size_t)snprintf(sql + n, cap - n,
				      "INSERT INTO GPU_METRICS VALUES (%lld,65537,1,%d),"
				      "(%lld,65537,2,%d),(%lld,65537,3,%d),(%lld,65537,4,%d),"
				      "(%lld,65537,5,%d),(%lld,65537,6,5),(%lld,65537,7,2),"
				      "(%lld,65537,8,%d),(%lld,65537,9,77);",
				      ts, 50 + t, ts, 20, ts, 10, ts, req, ts, rsp, ts, ts,
				      ts, 1980 - t, ts);
	}
	n += (size_t)snprintf(sql + n, cap - n,
			      "INSERT INTO GPU_METRICS VALUES (1000000,65536,1,11),"
			      "(1200000,65536,1,12),(NULL,65536,1,13);COMMIT;");
	assert_true(n < cap);
	assert_int_equal(make_db(path, sql), SQLITE_OK);
	x_free(sql);
}

static void test_fixture(void **state)
{
	char path[512];
	pt_store st;
	pt_samples hw;
	pt_error err;
	const pt_series *s;
	const pt_event *e;
	double m, sd;
	size_t i;

	make_fixture(tmp_path(path, sizeof(path), "fixture.sqlite"));
	if (read_path(path, &st, &hw, &err))
		fail_msg("%s", err.msg);
	/* 3 kernels + 3 memcpy + 1 memset + 2 runtime + 1 driver... no: the
	 * nested cudaLaunchKernel_v7000 is dropped: 1 runtime + 1 driver;
	 * NVTX: one step, one annotation; the mark and the unnamed range are not events. */
	assert_int_equal(st.n, 3 + 3 + 1 + 1 + 1 + 2);
	assert_int_equal(count(&st, PT_K_COMM_KERNEL, "ncclDevKernel_AllReduce_Sum_f32_RING_LL("
			       "ncclDevComm *, unsigned long, ncclWork *)"), 2);
	assert_int_equal(count(&st, PT_K_KERNEL, "void gemm<float>(int)128_2_1|256_1_1"), 1);
	assert_int_equal(count(&st, PT_K_MEMCPY, "Memcpy HtoD (Pinned -> Device)"), 1);
	assert_int_equal(count(&st, PT_K_MEMCPY, "Memcpy DtoD (Device -> Device)"), 1);
	assert_int_equal(count(&st, PT_K_MEMCPY, "Memcpy PtoP (Device -> Device)"), 1);
	assert_int_equal(count(&st, PT_K_MEMSET, "Memset (Device)"), 1);
	assert_int_equal(count(&st, PT_K_RUNTIME, "cudaLaunchKernel"), 1);
	assert_int_equal(count(&st, PT_K_DRIVER, "cuLaunchKernel"), 1);
	assert_int_equal(count(&st, PT_K_STEP, "ProfilerStep#7"), 1);
	assert_int_equal(count(&st, PT_K_ANNOTATION, "train_step"), 1);
	assert_int_equal(st.nsteps, 1);
	assert_int_equal(st.steps[0].number, 7);
	assert_int_equal(st.steps[0].ts, 1700000000000400000LL);
	assert_int_equal(st.steps[0].dur, 2000000);
	e = first_of(&st, PT_K_COMM_KERNEL);
	assert_int_equal(e->ts, 1700000000001000000LL);
	assert_int_equal(e->dur, 500000);
	assert_int_equal(st.lanes[e->lane].pid, 1);
	assert_int_equal(st.lanes[e->lane].tid, 20);
	e = first_of(&st, PT_K_MEMCPY);
	assert_int_equal(e->bytes, 4096);
	e = first_of(&st, PT_K_RUNTIME);
	assert_int_equal(e->dur, 90000);
	assert_int_equal(st.lanes[e->lane].pid, 1000);
	assert_int_equal(st.lanes[e->lane].tid, 1000);
	assert_string_equal(pt_strtab_get(st.strs, st.lanes[e->lane].name, NULL), "pt_main_thread");
	assert_int_equal(st.rank, 3);
	assert_int_equal(st.world_size, 8);
	assert_string_equal(pt_strtab_get(st.strs, st.backend, NULL), "nccl");
	assert_int_equal(st.ndevices, 2);

	/* Samples: GPU 1 has sm_active, dram_bw, nvlink_tx, pcie_rx, sm_clock;
	 * GPU 0 sm_active (the NULL timestamp row is skipped). */
	assert_string_equal(hw.source, "nsys");
	assert_int_equal(hw.interval_ns, 100000);
	assert_int_equal(hw.n, 6);
	s = pt_samples_find(&hw, "nvlink_tx", 1, NULL);
	assert_non_null(s);
	assert_string_equal(s->unit, "%");
	assert_true(s->max == 100);
	assert_int_equal(s->n, 14);
	assert_int_equal(s->t_ns[0], 1700000000001000000LL);
	assert_true(s->v[0] == 40);  /* 30 + 10, protocol 5 not added */
	assert_true(s->v[13] == 80);
	/* Inside the first NCCL kernel [1.0, 1.5) ms: 5 samples of 40. */
	assert_int_equal(pt_samples_window_stats(s, 1700000000001000000LL,
						 1700000000001500000LL, 1, &m, &sd), 5);
	assert_true(m == 40 && sd == 0);
	s = pt_samples_find(&hw, "dram_bw", 1, NULL);
	assert_non_null(s);
	for (i = 0; i < s->n; i++)
		assert_true(s->v[i] == 30); /* read 20 + write 10 */
	s = pt_samples_find(&hw, "sm_clock", 1, NULL);
	assert_string_equal(s->unit, "MHz");
	assert_true(s->max == 0);
	assert_true(s->v[0] == 1970);
	s = pt_samples_find(&hw, "pcie_rx", 1, NULL);
	assert_int_equal(s->n, 14);
	s = pt_samples_find(&hw, "sm_active", 0, NULL);
	assert_int_equal(s->n, 2);
	assert_true(s->v[1] == 12);
	assert_null(pt_samples_find(&hw, "pcie_tx", 1, NULL));

	/* The samples alone. */
	pt_samples_free(&hw);
	pt_samples_init(&hw);
	pt_error_clear(&err);
	assert_int_equal(pt_nsys_read_samples(path, &hw, &err), PT_OK);
	assert_int_equal(hw.n, 6);
	pt_samples_free(&hw);
	pt_store_free(&st);
	unlink(path);
}

/* The summary of an nsys export, through pt_summary_from_trace. */
static void test_summary_from_sqlite(void **state)
{
	char path[512];
	pt_error err;
	pt_summary *s;
	size_t i;
	int found = 0;

	make_fixture(tmp_path(path, sizeof(path), "sum.sqlite"));
	pt_error_clear(&err);
	s = pt_summary_from_trace(path, NULL, &err);
	if (!s)
		fail_msg("%s", err.msg);
	assert_int_equal(s->rank, 3);
	assert_int_equal(s->world_size, 8);
	assert_true(s->window_from_steps);
	assert_true(s->window_ms == 2.0);
	assert_true(fabs(s->window_start_us - 1700000000000400.0) < 0.5);
	for (i = 0; i < s->npatterns; i++)
		if (!strcmp(s->patterns[i].key, "ncclDevKernel_AllReduce_Sum_f32_RING_LL("
			    "ncclDevComm *, unsigned long, ncclWork *)")) {
			found = 1;
			assert_int_equal(s->patterns[i].count, 2);
			assert_true(fabs(s->patterns[i].total_ms - 0.8) < 1e-12);
		}
	assert_true(found);
	pt_summary_free(s);
	unlink(path);
}

static void expect_fail(const char *path, int code, const char *want)
{
	pt_store st;
	pt_samples hw;
	pt_error err;
	int rc = read_path(path, &st, &hw, &err);

	if (rc != code || !strstr(err.msg, want))
		fail_msg("%s: rc %d '%s', want %d '%s'", path, rc, err.msg, code, want);
	assert_string_equal(err.subject, path);
	pt_samples_free(&hw);
	pt_store_free(&st);
}

static void test_bad_files(void **state)
{
	char path[512], sql[4096];
	FILE *f;
	char *buf;
	size_t n;

	/* Not SQLite, but named .sqlite: the dispatch sends it to the Kineto reader. */
	tmp_path(path, sizeof(path), "text.sqlite");
	f = fopen(path, "w");
	fputs("hello", f);
	fclose(f);
	assert_int_equal(pt_trace_format_of(path), PT_TRACE_KINETO);
	{
		pt_store st;
		pt_error err;

		pt_store_init(&st);
		pt_error_clear(&err);
		assert_int_equal(pt_nsys_read_file(path, &st, NULL, &err), PT_EFORMAT);
		assert_non_null(strstr(err.msg, "not an sqlite database"));
		pt_store_free(&st);
	}
	/* SQLite but not an export. */
	tmp_path(path, sizeof(path), "other.sqlite");
	assert_int_equal(make_db(path, "CREATE TABLE t (a INTEGER);"), SQLITE_OK);
	expect_fail(path, PT_EFORMAT, "not an nsys export");
	/* An export without StringIds. */
	assert_int_equal(make_db(path, "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER);"),
			 SQLITE_OK);
	expect_fail(path, PT_EFORMAT, "no StringIds table");
	/* A kernel table without grid columns. */
	assert_int_equal(make_db(path, "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
				 "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER,"
				 " deviceId INTEGER, streamId INTEGER, demangledName INTEGER);"),
			 SQLITE_OK);
	expect_fail(path, PT_EFORMAT, "table CUPTI_ACTIVITY_KIND_KERNEL has no column 'gridX'");
	/* A text start time, in row 2. */
	snprintf(sql, sizeof(sql), "%s%s%s", SCHEMA, ROWS,
		 "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start='soon' WHERE rowid=2;");
	assert_int_equal(make_db(path, sql), SQLITE_OK);
	expect_fail(path, PT_EFORMAT, "CUPTI_ACTIVITY_KIND_KERNEL row 2: 'start' is text, not an "
		    "integer");
	/* A real where the metric id should be. */
	snprintf(sql, sizeof(sql), "%s%s%s", SCHEMA, METRICS,
		 "INSERT INTO GPU_METRICS VALUES (5, 65537, 1.5, 3);");
	assert_int_equal(make_db(path, sql), SQLITE_OK);
	expect_fail(path, PT_EFORMAT, "GPU_METRICS row 1: 'metricId' is a real, not an integer");
	/* Empty export: tables but no rows. */
	assert_int_equal(make_db(path, SCHEMA), SQLITE_OK);
	expect_fail(path, PT_EFORMAT, "no kernels, memory operations");
	/* A truncated database: the real export cut to 64 KiB. */
	snprintf(sql, sizeof(sql), "%s/pipit/saxpy-mpi-cuda_nsys_perlmutter0.sqlite", data_dir());
	f = fopen(sql, "rb");
	assert_non_null(f);
	buf = x_malloc(65536);
	n = fread(buf, 1, 65536, f);
	fclose(f);
	assert_int_equal(n, 65536);
	tmp_path(path, sizeof(path), "cut.sqlite");
	f = fopen(path, "wb");
	fwrite(buf, 1, n, f);
	fclose(f);
	x_free(buf);
	{
		pt_store st;
		pt_samples hw;
		pt_error err;
		int rc = read_path(path, &st, &hw, &err);

		assert_true(rc == PT_EPARSE || rc == PT_EFORMAT);
		assert_true(err.msg[0] != 0);
		pt_samples_free(&hw);
		pt_store_free(&st);
	}
	unlink(path);
	tmp_path(path, sizeof(path), "other.sqlite");
	unlink(path);
	tmp_path(path, sizeof(path), "text.sqlite");
	unlink(path);
	/* Missing file and a directory. */
	expect_fail("/nonexistent/x.sqlite", PT_EIO, "cannot open");
	{
		pt_store st;
		pt_error err;

		pt_store_init(&st);
		pt_error_clear(&err);
		assert_int_equal(pt_nsys_read_file("/", &st, NULL, &err), PT_EIO);
		assert_non_null(strstr(err.msg, "is a directory"));
		pt_store_free(&st);
	}
}

/* A crafted export whose kernel "table" is a recursive view (issue 11):
 * refused at once, naming the view, instead of reading without end. */
static void test_recursive_view_refused(void **state)
{
	char path[512];

	(void)state;
	tmp_path(path, sizeof(path), "view.sqlite");
	assert_int_equal(make_db(path,
		"CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
		"INSERT INTO StringIds VALUES (1, 'k');"
		"CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS WITH RECURSIVE c(x) AS "
		"(SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x AS rowid, x AS start, "
		"x + 1 AS end, 0 AS deviceId, 7 AS streamId, 1 AS gridX, 1 AS gridY, 1 AS gridZ, "
		"1 AS blockX, 1 AS blockY, 1 AS blockZ, 1 AS demangledName FROM c;"), SQLITE_OK);
	expect_fail(path, PT_EFORMAT,
		    "not an nsys export: 'CUPTI_ACTIVITY_KIND_KERNEL' is a view, not a table");
	/* StringIds as a view: refused the same way. */
	assert_int_equal(make_db(path,
		"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER);"
		"CREATE VIEW StringIds AS SELECT 1 AS id, 'x' AS value;"), SQLITE_OK);
	expect_fail(path, PT_EFORMAT, "'StringIds' is a view");
	unlink(path);
}

static void test_metric_names(void **state)
{
	static const struct { const char *in, *out, *unit; } t[] = {
		{ "SMs Active [Throughput %]", "sm_active", "%" },
		{ "GR Active [Throughput %]", "gpu_util", "%" },
		{ "GPC Clock Frequency [MHz]", "sm_clock", "MHz" },
		{ "DRAM Read Bandwidth [Throughput %]", "dram_bw", "%" },
		{ "DRAM Write Bandwidth [Throughput %]", "dram_bw", "%" },
		{ "PCIe RX Throughput [Throughput %]", "pcie_rx", "%" },
		{ "PCIe TX Throughput [Throughput %]", "pcie_tx", "%" },
		{ "NVLink RX Requests User Data [Throughput %]", "nvlink_rx", "%" },
		{ "NVLink TX Responses User Data [Throughput %]", "nvlink_tx", "%" },
		{ "NVLink RX Bandwidth [Throughput %]", "nvlink_rx", "%" },
		{ "NVLink TX Requests Protocol Data [Throughput %]", NULL, NULL },
		{ "PCIe Read Requests to BAR1 [Requests]", NULL, NULL },
		{ "SM Issue [Throughput %]", NULL, NULL },
		{ "SYS Clock Frequency [MHz]", NULL, NULL },
		{ "Compute Warps in Flight [Avg]", NULL, NULL },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const char *unit = NULL, *o = pt_nsys_metric_name(t[i].in, &unit);

		if (!t[i].out) {
			if (o)
				fail_msg("'%s' -> '%s', want none", t[i].in, o);
			continue;
		}
		if (!o || strcmp(o, t[i].out) || strcmp(unit, t[i].unit))
			fail_msg("'%s' -> '%s' '%s'", t[i].in, o ? o : "(null)", unit);
	}
	assert_null(pt_nsys_metric_name(NULL, NULL));
	assert_true(pt_nsys_is_sqlite("SQLite format 3", 16));
	assert_false(pt_nsys_is_sqlite("SQLite format 3", 15));
	assert_false(pt_nsys_is_sqlite("SQLite format 4", 16));
}

static void test_capture_argv(void **state)
{
	char *argv[16], buf[1024], path[512];
	int n;

	n = pt_nsys_capture_argv("/opt/nsys/bin/nsys", "/tmp/run/hw_node7", 2.5, 10000, argv, 16,
				 buf, sizeof(buf));
	assert_int_equal(n, 11);
	assert_string_equal(argv[0], "/opt/nsys/bin/nsys");
	assert_string_equal(argv[1], "profile");
	assert_string_equal(argv[2], "--trace=none");
	assert_string_equal(argv[3], "--sample=none");
	assert_string_equal(argv[4], "--cpuctxsw=none");
	assert_string_equal(argv[5], "--gpu-metrics-devices=all");
	assert_string_equal(argv[6], "--gpu-metrics-frequency=10000");
	assert_string_equal(argv[7], "--force-overwrite=true");
	assert_string_equal(argv[8], "--output=/tmp/run/hw_node7");
	assert_string_equal(argv[9], "sleep");
	assert_string_equal(argv[10], "2.500");
	assert_null(argv[11]);
	n = pt_nsys_export_argv("nsys", "/tmp/run/hw_node7", argv, 16, buf, sizeof(buf));
	assert_int_equal(n, 6);
	assert_string_equal(argv[2], "--type=sqlite");
	assert_string_equal(argv[4], "--output=/tmp/run/hw_node7.sqlite");
	assert_string_equal(argv[5], "/tmp/run/hw_node7.nsys-rep");
	assert_null(argv[6]);
	/* Refusals: bad rate, no time, too small buffers. */
	assert_int_equal(pt_nsys_capture_argv("nsys", "o", 1, 5, argv, 16, buf, sizeof(buf)), -1);
	assert_int_equal(pt_nsys_capture_argv("nsys", "o", 1, 300000, argv, 16, buf, 1024), -1);
	assert_int_equal(pt_nsys_capture_argv("nsys", "o", 0, 10000, argv, 16, buf, 1024), -1);
	assert_int_equal(pt_nsys_capture_argv("nsys", "o", 1, 10000, argv, 5, buf, 1024), -1);
	assert_int_equal(pt_nsys_capture_argv("nsys", "o", 1, 10000, argv, 16, buf, 40), -1);
	assert_int_equal(pt_nsys_export_argv("", "o", argv, 16, buf, 1024), -1);
	/* Rates for --nsys-gpu-metrics. */
	{
		int hz = 0;

		assert_int_equal(pt_nsys_parse_hz("10000", &hz), 0);
		assert_int_equal(hz, 10000);
		assert_int_equal(pt_nsys_parse_hz("10", &hz), 0);
		assert_int_equal(pt_nsys_parse_hz("200000", &hz), 0);
		assert_int_equal(hz, 200000);
		assert_int_equal(pt_nsys_parse_hz("9", &hz), -1);
		assert_int_equal(pt_nsys_parse_hz("200001", &hz), -1);
		assert_int_equal(pt_nsys_parse_hz("10k", &hz), -1);
		assert_int_equal(pt_nsys_parse_hz("-100", &hz), -1);
		assert_int_equal(pt_nsys_parse_hz("", &hz), -1);
		assert_int_equal(hz, 200000);
	}
	/* PATH lookup: sh is everywhere, a random name nowhere. */
	assert_int_equal(pt_nsys_find("sh", path, sizeof(path)), 1);
	assert_non_null(strstr(path, "/sh"));
	assert_int_equal(pt_nsys_find("pt-no-such-tool-7f3a", path, sizeof(path)), 0);
	assert_int_equal(pt_nsys_find("/bin/sh", path, sizeof(path)), 1);
}

/* The capture run with a stand-in nsys (a shell script): it records its
 * arguments, and its export copies an export written here. */
static void test_capture_run(void **state)
{
	char dir[512], fake[600], base[600], src[600], args[700], sql[2048];
	pt_samples hw;
	pt_error err;
	FILE *f;
	size_t n;

	tmp_path(dir, sizeof(dir), "cap");
	mkdir(dir, 0755);
	snprintf(fake, sizeof(fake), "%s/nsys", dir);
	snprintf(base, sizeof(base), "%s/hw_node7", dir);
	snprintf(src, sizeof(src), "%s/src.sqlite", dir);
	make_fixture(src);
	f = fopen(fake, "w");
	assert_non_null(f);
	fputs("#!/bin/sh\n"
	      "cmd=$1; shift\n"
	      "for a; do case $a in --output=*) out=${a#--output=};; esac; done\n"
	      "echo \"$cmd $*\" >> \"$PT_FAKE_DIR/args\"\n"
	      "[ -n \"$PT_FAKE_FAIL\" ] && { echo boom >&2; exit 3; }\n"
	      "case $cmd in profile) : > \"$out.nsys-rep\";; export) cp \"$PT_FAKE_SRC\" \"$out\";; esac\n",
	      f);
	fclose(f);
	chmod(fake, 0755);
	setenv("PT_FAKE_DIR", dir, 1);
	setenv("PT_FAKE_SRC", src, 1);
	unsetenv("PT_FAKE_FAIL");
	pt_error_clear(&err);
	if (pt_nsys_capture_run(fake, base, 0.25, 10000, &err))
		fail_msg("%s", err.msg);
	snprintf(args, sizeof(args), "%s/args", dir);
	f = fopen(args, "r");
	assert_non_null(f);
	n = fread(sql, 1, sizeof(sql) - 1, f);
	sql[n] = 0;
	fclose(f);
	assert_non_null(strstr(sql, "profile --trace=none --sample=none --cpuctxsw=none "
			       "--gpu-metrics-devices=all --gpu-metrics-frequency=10000 "
			       "--force-overwrite=true --output="));
	assert_non_null(strstr(sql, "sleep 0.250\nexport --type=sqlite"));
	snprintf(args, sizeof(args), "%s.sqlite", base);
	pt_error_clear(&err);
	assert_int_equal(pt_trace_read_samples(args, &hw, &err), PT_OK);
	assert_int_equal(hw.n, 6);
	pt_samples_free(&hw);
	/* A failing nsys: one error naming the step, the status and the log. */
	setenv("PT_FAKE_FAIL", "1", 1);
	pt_error_clear(&err);
	assert_int_equal(pt_nsys_capture_run(fake, base, 0.25, 10000, &err), PT_EIO);
	assert_non_null(strstr(err.msg, "profile exited with status 3; see "));
	assert_non_null(strstr(err.msg, "hw_node7.log"));
	unsetenv("PT_FAKE_FAIL");
	/* Cancelled (as the agent does when it exits): no export. */
	{
		int cancel = 1;

		snprintf(args, sizeof(args), "%s/args", dir);
		unlink(args);
		pt_error_clear(&err);
		assert_int_equal(pt_nsys_capture_run_cancel(fake, base, 0.25, 10000, &cancel, &err),
				 PT_EIO);
		assert_non_null(strstr(err.msg, "profile cancelled"));
		f = fopen(args, "r");
		if (f) {
			n = fread(sql, 1, sizeof(sql) - 1, f);
			sql[n] = 0;
			fclose(f);
			assert_null(strstr(sql, "export"));
		}
	}
	/* Not startable. */
	pt_error_clear(&err);
	assert_int_equal(pt_nsys_capture_run("/nonexistent/nsys", base, 1, 10000, &err), PT_EIO);
	assert_non_null(strstr(err.msg, "could not start"));
	assert_int_equal(pt_nsys_capture_run(fake, base, 1, 1, &err), PT_EINVAL);
	tu_rm_rf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_old_schema),
		cmocka_unit_test(test_real_new_schema),
		cmocka_unit_test(test_fixture),
		cmocka_unit_test(test_summary_from_sqlite),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_recursive_view_refused),
		cmocka_unit_test(test_metric_names),
		cmocka_unit_test(test_capture_argv),
		cmocka_unit_test(test_capture_run),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
