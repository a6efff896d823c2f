/*
 * test_kineto.c - unit tests for the streaming Kineto reader
 * (src/trace/kineto.c, src/trace/input.c): exact per-kind counts on the
 * real traces in tests/data (numbers from tests/tools/count_events.py),
 * gzip vs plain and chunk-size invariance, truncation at every offset,
 * time bases, fractional µs, the bare-array form, names and bytes, and
 * every bad-input case with its error code, message and byte offset.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "trace/input.h"
#include "trace/kineto.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* ---- helpers ------------------------------------------------------------ */

static const char *data_dir(void)
{
	const char *d = getenv("PT_DATA");
	return d && *d ? d : "tests/data";
}

static char *slurp(const char *rel, size_t *len)
{
	char path[1024];
	FILE *f;
	char *buf;
	long n;

	snprintf(path, sizeof(path), "%s/%s", data_dir(), rel);
	f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = x_malloc((size_t)n + 1);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = 0;
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* gzip-compress buf (level 6). */
static unsigned char *gzip_mem(const void *buf, size_t len, size_t *outlen)
{
	z_stream z;
	unsigned char *out;
	size_t cap = len + len / 100 + 1024;

	memset(&z, 0, sizeof(z));
	assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
	out = x_malloc(cap);
	z.next_in = (Bytef *)buf;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	*outlen = cap - z.avail_out;
	deflateEnd(&z);
	return out;
}

static void store_eq(const pt_store *a, const pt_store *b)
{
	size_t i;

	assert_int_equal(a->n, b->n);
	assert_int_equal(a->nlanes, b->nlanes);
	assert_int_equal(a->nsteps, b->nsteps);
	assert_int_equal(a->rank, b->rank);
	assert_int_equal(a->world_size, b->world_size);
	assert_int_equal(a->ndevices, b->ndevices);
	assert_int_equal(a->base_ns, b->base_ns);
	assert_int_equal(a->truncated, b->truncated);
	assert_int_equal(a->nwarnings, b->nwarnings);
	assert_string_equal(a->warning, b->warning);
	assert_string_equal(pt_strtab_get(a->strs, a->backend, NULL),
			    pt_strtab_get(b->strs, b->backend, NULL));
	assert_string_equal(pt_strtab_get(a->strs, a->device_name, NULL),
			    pt_strtab_get(b->strs, b->device_name, NULL));
	for (i = 0; i < a->n; i++) {
		const pt_event *x = &a->ev[i], *y = &b->ev[i];
		if (x->ts != y->ts || x->dur != y->dur || x->bytes != y->bytes ||
		    x->kind != y->kind || x->flags != y->flags || x->group != y->group ||
		    x->lane != y->lane ||
		    strcmp(pt_strtab_get(a->strs, x->name, NULL), pt_strtab_get(b->strs, y->name, NULL)) ||
		    strcmp(pt_strtab_get(a->strs, x->stack, NULL), pt_strtab_get(b->strs, y->stack, NULL)))
			fail_msg("event %zu differs", i);
	}
	for (i = 0; i < a->nlanes; i++) {
		assert_int_equal(a->lanes[i].pid, b->lanes[i].pid);
		assert_int_equal(a->lanes[i].tid, b->lanes[i].tid);
		assert_int_equal(a->lanes[i].gpu, b->lanes[i].gpu);
		assert_string_equal(pt_strtab_get(a->strs, a->lanes[i].name, NULL),
				    pt_strtab_get(b->strs, b->lanes[i].name, NULL));
	}
	for (i = 0; i < a->nsteps; i++) {
		assert_int_equal(a->steps[i].number, b->steps[i].number);
		assert_int_equal(a->steps[i].ts, b->steps[i].ts);
		assert_int_equal(a->steps[i].dur, b->steps[i].dur);
	}
}

/* Read s (plain JSON) into st; also read it with several chunk sizes and
 * as gzip and check every result is the same.  Returns the status. */
static int read_str(const char *s, pt_store *st, pt_error *e)
{
	static const size_t chunks[] = { 16, 17, 64, 1000 };
	size_t len = strlen(s), i, glen;
	unsigned char *gz;
	int rc, rc2;

	assert_int_equal(pt_store_init(st), PT_OK);
	pt_error_clear(e);
	rc = pt_kineto_read_mem(s, len, st, e);
	for (i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		pt_store o;
		pt_error e2;

		assert_int_equal(pt_store_init(&o), PT_OK);
		pt_error_clear(&e2);
		rc2 = pt_kineto_read_mem_chunked(s, len, chunks[i], &o, &e2);
		if (rc2 != rc)
			fail_msg("chunk %zu: rc %d vs %d (%s)", chunks[i], rc2, rc, e2.msg);
		if (rc == PT_OK)
			store_eq(st, &o);
		else
			assert_string_equal(e->msg, e2.msg);
		pt_store_free(&o);
	}
	gz = gzip_mem(s, len, &glen);
	{
		pt_store o;
		pt_error e2;

		assert_int_equal(pt_store_init(&o), PT_OK);
		pt_error_clear(&e2);
		rc2 = pt_kineto_read_mem_chunked(gz, glen, 64, &o, &e2);
		assert_int_equal(rc2, rc);
		if (rc == PT_OK)
			store_eq(st, &o);
		else
			assert_int_equal(e->offset, e2.offset);
		pt_store_free(&o);
	}
	x_free(gz);
	return rc;
}

static const char *sname(const pt_store *st, uint32_t id)
{
	return pt_strtab_get(st->strs, id, NULL);
}

/* Wrap events in an object-form trace. */
static char *trace_of(const char *events)
{
	pt_sb sb = { 0 };

	pt_sb_addf(&sb, "{\"schemaVersion\": 1, \"traceEvents\": [%s]}", events);
	return pt_sb_detach(&sb, NULL);
}

static void expect_fail(const char *s, size_t len, int code, const char *msg, int64_t off)
{
	pt_store st;
	pt_error e;
	int rc;

	assert_int_equal(pt_store_init(&st), PT_OK);
	pt_error_clear(&e);
	rc = pt_kineto_read_mem(s, len, &st, &e);
	if (rc != code)
		fail_msg("'%.60s': rc %d, want %d (%s)", s, rc, code, e.msg);
	if (!strstr(e.msg, msg))
		fail_msg("'%.60s': message '%s' lacks '%s'", s, e.msg, msg);
	if (off != -2 && e.offset != off)
		fail_msg("'%.60s': offset %lld, want %lld (%s)", s, (long long)e.offset,
			 (long long)off, e.msg);
	pt_store_free(&st);
}

/* expect_fail on a string literal (its length without the NUL). */
#define EF(lit, code, msg, off) expect_fail((lit), sizeof(lit) - 1, (code), (msg), (off))

/* ---- real traces: exact counts ----------------------------------------- */

typedef struct expect {
	const char *path;
	size_t n;
	size_t kinds[PT_K_COUNT];
	size_t steps, lanes;
	uint64_t warnings;
	int64_t rank, world;
	const char *backend;
	int ndev;
	const char *device;
	int64_t base;
	int64_t dur_sum, ts_min, end_max;
	uint64_t mem_bytes, comm_bytes;
	size_t nnames;
} expect;

/* Generated by: /usr/bin/python3 tests/tools/count_events.py $(find tests/data -name '*.json*' | sort)
 * (independent stdlib-json implementation of the rules in docs/input.md). */
static const expect expected[] = {
{ "HolisticTraceAnalysis/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz", 112, { 14, 0, 2, 0, 21, 0, 0, 70, 0, 1, 2, 2 }, 2, 3, 0, -1, -1, "", 4, "AMD Radeon Graphics", 1735632360000000000LL,
  42514388LL, 1739836029603187439LL, 1739836029612770525LL, 0ULL, 0ULL, 63 },
{ "HolisticTraceAnalysis/tests/data/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", 15, { 0, 0, 0, 0, 0, 0, 10, 4, 0, 0, 1, 0 }, 1, 3, 0, 34, 300, "gloo", 0, "", 1719853884000000000LL,
  2345569044LL, 1721065959529876817LL, 1721065960812903897LL, 0ULL, 0ULL, 3 },
{ "HolisticTraceAnalysis/tests/data/rank_non_gpu/rank_non_gpu.json.gz", 2467, { 0, 0, 0, 0, 0, 0, 18, 2412, 0, 36, 1, 0 }, 1, 1, 0, 0, -1, "", 0, "", 0LL,
  250549000LL, 1661203462598738000LL, 1661203462674280000LL, 0ULL, 0ULL, 134 },
{ "TraceLens/tests/traces/b200/eager_trace.json.gz", 22346, { 767, 1, 161, 0, 1151, 221, 3, 4807, 15230, 2, 0, 3 }, 0, 2, 0, 0, 8, "nccl", 8, "NVIDIA B200", 1767189312000000000LL,
  2116045507LL, 1768554939862757064LL, 1768554939950169927LL, 771357013ULL, 804352ULL, 1002 },
{ "TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz", 2059, { 60, 0, 1, 0, 110, 22, 0, 479, 1385, 0, 1, 1 }, 1, 3, 0, -1, -1, "", 1, "NVIDIA H100 80GB HBM3", 1751410836000000000LL,
  169140974LL, 1752830083332596028LL, 1752830083337467316LL, 1ULL, 0ULL, 322 },
{ "TraceLens/tests/traces/mi300/gaunernst_bert-small-uncased__1016001.json.gz", 2132, { 60, 0, 1, 0, 161, 0, 0, 519, 1389, 0, 1, 1 }, 1, 3, 0, -1, -1, "", 1, "AMD Instinct MI300X VF", 1751410836000000000LL,
  152700155LL, 1753615174329503303LL, 1753615174333924600LL, 1ULL, 0ULL, 318 },
{ "dlrm/worker0_step_12.1694128201545.pt.trace.json", 2459, { 237, 8, 16, 0, 525, 0, 29, 1612, 0, 31, 1, 0 }, 1, 6, 0, 0, 8, "nccl", 8, "Tesla V100-SXM2-32GB", 0LL,
  78935000LL, 1694128201426674000LL, 1694128201441178000LL, 77984ULL, 0ULL, 315 },
{ "dlrm/worker1_step_12.1694128201556.pt.trace.json", 2526, { 302, 8, 16, 0, 527, 0, 29, 1612, 0, 31, 1, 0 }, 1, 6, 0, 1, 8, "nccl", 8, "Tesla V100-SXM2-32GB", 0LL,
  128634000LL, 1694128201421205000LL, 1694128201441156000LL, 77984ULL, 0ULL, 316 },
{ "dlrm/worker2_step_12.1694128201554.pt.trace.json", 2448, { 238, 8, 16, 0, 513, 0, 29, 1612, 0, 31, 1, 0 }, 1, 6, 0, 2, 8, "nccl", 8, "Tesla V100-SXM2-32GB", 0LL,
  64020000LL, 1694128201428092000LL, 1694128201441158000LL, 77984ULL, 0ULL, 317 },
{ "dlrm/worker3_step_12.1694128201557.pt.trace.json", 2551, { 307, 8, 16, 6, 541, 0, 29, 1612, 0, 31, 1, 0 }, 1, 6, 0, 3, 8, "nccl", 8, "Tesla V100-SXM2-32GB", 0LL,
  118125000LL, 1694128201421900000LL, 1694128201441262000LL, 102576ULL, 0ULL, 322 },
{ "dlrm/worker4_step_12.1694128201547.pt.trace.json", 2469, { 243, 8, 16, 6, 523, 0, 29, 1612, 0, 31, 1, 0 }, 1, 6, 0, 4, 8, "nccl", 8, "Tesla V100-SXM2-32GB", 0LL,
  106461000LL, 1694128201424049000LL, 1694128201442071000LL, 90288ULL, 0ULL, 322 },
{ "dlrm/worker5_step_12.1694128201549.pt.trace.json", 2439, { 237, 8, 16, 0, 505, 0, 29, 1612, 0, 31, 1, 0 }, 1, 6, 0, 5, 8, "nccl", 8, "Tesla V100-SXM2-32GB", 0LL,
  104258000LL, 1694128201424195000LL, 1694128201442036000LL, 77984ULL, 0ULL, 315 },
{ "dlrm/worker6_step_12.1694128201553.pt.trace.json", 2450, { 238, 8, 16, 0, 515, 0, 29, 1612, 0, 31, 1, 0 }, 1, 6, 0, 6, 8, "nccl", 8, "Tesla V100-SXM2-32GB", 0LL,
  64111000LL, 1694128201428080000LL, 1694128201441218000LL, 77984ULL, 0ULL, 316 },
{ "dlrm/worker7_step_12.1694128201553.pt.trace.json", 2439, { 238, 8, 16, 0, 504, 0, 29, 1612, 0, 31, 1, 0 }, 1, 6, 0, 7, 8, "nccl", 8, "Tesla V100-SXM2-32GB", 0LL,
  58324000LL, 1694128201428718000LL, 1694128201441276000LL, 77984ULL, 0ULL, 316 },
{ "kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz", 44665, { 8772, 0, 12, 312, 11923, 0, 0, 23640, 0, 0, 6, 0 }, 6, 3, 0, -1, -1, "", 4, "Tesla V100-DGXS-32GB", 0LL,
  3858522000LL, 1623142623460072000LL, 1623142624525730000LL, 482082960ULL, 0ULL, 303 },
{ "kineto/tb_plugin/test/gpu_metrics_input.json", 253, { 30, 0, 2, 0, 42, 0, 0, 178, 0, 0, 1, 0 }, 1, 3, 0, -1, -1, "", 0, "", 0LL,
  35729000LL, 1621401187223182000LL, 1621401187236863000LL, 768ULL, 0ULL, 71 },
{ "legacy/legacy_gloo.json", 399, { 0, 0, 0, 0, 0, 0, 24, 372, 0, 0, 3, 0 }, 3, 3, 0, -1, -1, "", 0, "", 0LL,
  9548000LL, 117000LL, 5244000LL, 0ULL, 0ULL, 42 },
};

static void test_real_traces(void **state)
{
	size_t i, j;

	for (i = 0; i < sizeof(expected) / sizeof(expected[0]); i++) {
		const expect *x = &expected[i];
		char path[1024];
		size_t kinds[PT_K_COUNT] = { 0 };
		int64_t dur_sum = 0, ts_min = INT64_MAX, end_max = INT64_MIN;
		uint64_t mem = 0, comm = 0;
		size_t nnames = 0;
		unsigned char *seen;
		pt_store st;
		pt_error e;
		int rc;

		snprintf(path, sizeof(path), "%s/%s", data_dir(), x->path);
		assert_int_equal(pt_store_init(&st), PT_OK);
		pt_error_clear(&e);
		rc = pt_kineto_read_file(path, &st, &e);
		if (rc != PT_OK)
			fail_msg("%s: %s", x->path, e.msg);
		seen = x_calloc(pt_strtab_count(st.strs), 1);
		for (j = 0; j < st.n; j++) {
			const pt_event *v = &st.ev[j];
			kinds[v->kind]++;
			dur_sum += v->dur;
			if (v->ts < ts_min)
				ts_min = v->ts;
			if (v->ts + v->dur > end_max)
				end_max = v->ts + v->dur;
			if (v->kind == PT_K_MEMCPY || v->kind == PT_K_MEMSET)
				mem += v->bytes;
			if (v->kind == PT_K_COMM_KERNEL || v->kind == PT_K_CPU_COMM)
				comm += v->bytes;
			if (!seen[v->name]) {
				seen[v->name] = 1;
				nnames++;
			}
			/* GPU kinds live on GPU lanes and nowhere else. */
			assert_int_equal(st.lanes[v->lane].gpu, !!(v->flags & PT_EV_GPU));
		}
		x_free(seen);
		if (st.n != x->n)
			fail_msg("%s: %zu events, want %zu", x->path, st.n, x->n);
		for (j = 0; j < PT_K_COUNT; j++)
			if (kinds[j] != x->kinds[j])
				fail_msg("%s: %zu %s events, want %zu", x->path, kinds[j],
					 pt_kind_name((int)j), x->kinds[j]);
		assert_int_equal(st.nsteps, x->steps);
		assert_int_equal(st.nlanes, x->lanes);
		assert_int_equal(st.nwarnings, x->warnings);
		assert_int_equal(st.truncated, 0);
		assert_int_equal(st.rank, x->rank);
		assert_int_equal(st.world_size, x->world);
		assert_string_equal(sname(&st, st.backend), x->backend);
		assert_int_equal(st.ndevices, x->ndev);
		assert_string_equal(sname(&st, st.device_name), x->device);
		assert_int_equal(st.base_ns, x->base);
		if (dur_sum != x->dur_sum || ts_min != x->ts_min || end_max != x->end_max)
			fail_msg("%s: dur_sum %lld ts_min %lld end_max %lld, want %lld %lld %lld",
				 x->path, (long long)dur_sum, (long long)ts_min, (long long)end_max,
				 (long long)x->dur_sum, (long long)x->ts_min, (long long)x->end_max);
		assert_int_equal(mem, x->mem_bytes);
		assert_int_equal(comm, x->comm_bytes);
		if (nnames != x->nnames)
			fail_msg("%s: %zu distinct names, want %zu", x->path, nnames, x->nnames);
		assert_true(st.bytes_read > 0);
		pt_store_free(&st);
	}
}

/* Details of real files the table does not pin down. */
static void test_real_details(void **state)
{
	char path[1024];
	pt_store st;
	pt_error e;
	size_t i, nstack = 0;
	int found = 0;

	/* DLRM rank 0: the first ncclKernel keeps its bare name on stream 84,
	 * compute kernels get name+grid|block, lanes get thread names. */
	snprintf(path, sizeof(path), "%s/dlrm/worker0_step_12.1694128201545.pt.trace.json", data_dir());
	assert_int_equal(pt_store_init(&st), PT_OK);
	pt_error_clear(&e);
	assert_int_equal(pt_kineto_read_file(path, &st, &e), PT_OK);
	for (i = 0; i < st.n; i++) {
		const pt_event *v = &st.ev[i];
		const char *n = sname(&st, v->name);
		if (v->kind == PT_K_COMM_KERNEL && !found) {
			assert_string_equal(n, "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)");
			assert_int_equal(st.lanes[v->lane].tid, 84);
			assert_int_equal(st.lanes[v->lane].pid, 0);
			assert_int_equal(v->ts, 1694128201429795000LL);
			assert_int_equal(v->dur, 2146000);
			found = 1;
		}
	}
	assert_true(found);
	found = 0;
	for (i = 0; i < st.n; i++)
		if (!strcmp(sname(&st, st.ev[i].name),
			    "void gemmSN_TN_kernel<float, 128, 16, 2, 4, 8, 9, false, cublasGemvTensorStridedBatched<float const>, "
			    "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float> >(cublasGemmSmallNParams"
			    "<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, "
			    "cublasGemvTensorStridedBatched<float>, float>)32_2_1|128_1_1"))
			found++;
	assert_true(found > 0);
	assert_int_equal(st.steps[0].number, 10);
	for (i = 0; i < st.nlanes; i++)
		if (st.lanes[i].pid == 59811 && st.lanes[i].tid == 59976)
			assert_string_equal(sname(&st, st.lanes[i].name), "thread 59976 (python3)");
	pt_store_free(&st);

	/* 2021 tb_plugin sample: old-style "Call stack" args become event
	 * stacks, unmodified (14994 of its Operator events have one, 91
	 * distinct; counted with Python's json). */
	snprintf(path, sizeof(path), "%s/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
		 data_dir());
	assert_int_equal(pt_store_init(&st), PT_OK);
	assert_int_equal(pt_kineto_read_file(path, &st, &e), PT_OK);
	{
		unsigned char *seen = x_calloc(pt_strtab_count(st.strs), 1);
		size_t ndistinct = 0;
		for (i = 0; i < st.n; i++) {
			int k = st.ev[i].kind;
			/* runtime calls and GPU events hold a correlation id there */
			if (!st.ev[i].stack || !(k == PT_K_CPU_OP || k == PT_K_CPU_COMM ||
						 k == PT_K_ANNOTATION || k == PT_K_STEP))
				continue;
			nstack++;
			if (!seen[st.ev[i].stack]) {
				seen[st.ev[i].stack] = 1;
				ndistinct++;
			}
			if (i == 0)
				assert_string_equal(sname(&st, st.ev[i].stack),
						    "/home/yangu/anaconda3/envs/kineto/lib/python3.7/site-packages/torch/autograd/profiler.py(611): __init__;"
						    "/home/yangu/anaconda3/envs/kineto/lib/python3.7/site-packages/torch/profiler/profiler.py(312): step;"
						    "resnet50_profiler_api.py(54): <module>");
		}
		x_free(seen);
		assert_int_equal(nstack, 14994);
		assert_int_equal(ndistinct, 91);
	}
	/* String tids ("25738") are numbers; "stream 7" is stream 7. */
	assert_int_equal(st.lanes[st.ev[0].lane].tid, 25738);
	pt_store_free(&st);

	/* TraceLens b200: the NCCL kernel's bytes are Out msg nelems * 2
	 * (BFloat16), group 8; python_function names are normalised. */
	snprintf(path, sizeof(path), "%s/TraceLens/tests/traces/b200/eager_trace.json.gz", data_dir());
	assert_int_equal(pt_store_init(&st), PT_OK);
	assert_int_equal(pt_kineto_read_file(path, &st, &e), PT_OK);
	found = 0;
	for (i = 0; i < st.n; i++) {
		const pt_event *v = &st.ev[i];
		if (v->kind == PT_K_COMM_KERNEL) {
			assert_int_equal(v->bytes, 201088 * 2);
			assert_int_equal(v->group, 8);
			found++;
		}
		if (v->kind == PT_K_PYTHON && !strcmp(sname(&st, v->name), "torch/utils/_contextlib.py: decorate_context"))
			found += 10;
		if (v->kind == PT_K_CPU_COMM && !strcmp(sname(&st, v->name), "record_param_comms:_allgather_base")) {
			assert_int_equal(v->bytes, 201088 * 2);
			found += 100;
		}
	}
	assert_int_equal(found, 111);
	pt_store_free(&st);
}

/* ---- gzip, chunks --------------------------------------------------------- */

static void test_gzip_plain_equal(void **state)
{
	size_t len, glen;
	char *plain = slurp("dlrm/worker3_step_12.1694128201557.pt.trace.json", &len);
	unsigned char *gz = gzip_mem(plain, len, &glen);
	static const size_t chunks[] = { 16, 333, 4096, 65536, (size_t)1 << 20 };
	pt_store a, b;
	pt_error e;
	size_t i;

	assert_int_equal(pt_store_init(&a), PT_OK);
	pt_error_clear(&e);
	assert_int_equal(pt_kineto_read_mem(plain, len, &a, &e), PT_OK);
	assert_int_equal(a.bytes_read, len);
	for (i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		assert_int_equal(pt_store_init(&b), PT_OK);
		assert_int_equal(pt_kineto_read_mem_chunked(gz, glen, chunks[i], &b, &e), PT_OK);
		store_eq(&a, &b);
		assert_int_equal(b.bytes_read, len);
		pt_store_free(&b);
		assert_int_equal(pt_store_init(&b), PT_OK);
		assert_int_equal(pt_kineto_read_mem_chunked(plain, len, chunks[i], &b, &e), PT_OK);
		store_eq(&a, &b);
		pt_store_free(&b);
	}
	/* Two concatenated gzip members read as one stream (gzip -c a b):
	 * the second copy's bytes after the first '}' are trailing data. */
	{
		unsigned char *two = x_malloc(2 * glen);
		memcpy(two, gz, glen);
		memcpy(two + glen, gz, glen);
		assert_int_equal(pt_store_init(&b), PT_OK);
		assert_int_equal(pt_kineto_read_mem(two, 2 * glen, &b, &e), PT_OK);
		assert_int_equal(b.n, a.n);
		assert_int_equal(b.truncated, 1);  /* trailing data after the document */
		assert_non_null(strstr(b.warning, "trailing data"));
		pt_store_free(&b);
		/* Zero padding after a gzip member is ignored, as gzip(1) does. */
		memset(two + glen, 0, glen);
		assert_int_equal(pt_store_init(&b), PT_OK);
		assert_int_equal(pt_kineto_read_mem(two, 2 * glen, &b, &e), PT_OK);
		store_eq(&a, &b);
		pt_store_free(&b);
		x_free(two);
	}
	pt_store_free(&a);
	x_free(gz);
	x_free(plain);

	/* A very compressible tail, then the gzip trailer cut off: zlib has
	 * consumed all input but still holds output, which must be drained
	 * before calling the stream cut (found by the fuzzer: the bytes read
	 * depended on the chunk size). */
	{
		pt_sb sb = { 0 };
		size_t k, slen;
		char *s;

		pt_sb_adds(&sb, "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"ts\": 1, \"dur\": 1}], \"traceName\": \"");
		for (k = 0; k < 300000; k++)
			pt_sb_addc(&sb, 'x');
		pt_sb_adds(&sb, "\"}");
		s = pt_sb_detach(&sb, &slen);
		gz = gzip_mem(s, slen, &glen);
		for (k = 0; k < sizeof(chunks) / sizeof(chunks[0]); k++) {
			assert_int_equal(pt_store_init(&b), PT_OK);
			pt_error_clear(&e);
			assert_int_equal(pt_kineto_read_mem_chunked(gz, glen, chunks[k], &b, &e), PT_OK);
			assert_int_equal(b.n, 1);
			assert_int_equal(b.truncated, 0);
			assert_int_equal(b.bytes_read, slen);
			pt_store_free(&b);
			assert_int_equal(pt_store_init(&b), PT_OK);
			assert_int_equal(pt_kineto_read_mem_chunked(gz, glen - 8, chunks[k], &b, &e), PT_OK);
			assert_int_equal(b.n, 1);
			/* Every byte came out of the cut stream: the json is whole. */
			assert_int_equal(b.truncated, 0);
			if (b.bytes_read != slen)
				fail_msg("chunk %zu: %llu bytes read, want %zu", chunks[k],
					 (unsigned long long)b.bytes_read, slen);
			pt_store_free(&b);
		}
		x_free(gz);
		x_free(s);
	}
}

/* Total bytes pt_input delivers from buf when read cap bytes at a time. */
static uint64_t drain(const void *buf, size_t len, size_t cap, int *cut)
{
	pt_input *in = pt_input_open_mem(buf, len, NULL);
	char *dst = x_malloc(cap);
	uint64_t total = 0;
	ssize_t r;

	assert_non_null(in);
	while ((r = pt_input_read(in, dst, cap, NULL)) > 0)
		total += (uint64_t)r;
	*cut = pt_input_cut(in);
	assert_int_equal(pt_input_offset(in), total);
	pt_input_close(in);
	x_free(dst);
	return total;
}

/* A gzip stream cut inside its deflate data: zlib may have consumed all
 * input while still holding output; that output must come out whatever
 * the read size (the fuzzer found reads of 16 bytes losing it). */
static void test_input_gzip_cut_drain(void **state)
{
	size_t len = 300000, glen, k;
	char *s = x_malloc(len);
	unsigned char *gz;
	int cut1, cut2;

	for (k = 0; k < len; k++)
		s[k] = (char)(k % 7 == 0 ? 'y' : 'x');
	gz = gzip_mem(s, len, &glen);
	assert_int_equal(drain(gz, glen, 16, &cut1), len);
	assert_int_equal(cut1, 0);
	for (k = 9; k < 24 && k < glen; k++) {
		uint64_t a = drain(gz, glen - k, 16, &cut1), b = drain(gz, glen - k, (size_t)1 << 20, &cut2);
		if (a != b)
			fail_msg("cut %zu: %llu bytes with 16-byte reads, %llu with 1 MiB", k,
				 (unsigned long long)a, (unsigned long long)b);
		assert_true(cut1 && cut2);
		assert_true(a > 0 && a < len);
	}
	/* Plain input: the same bytes back. */
	assert_int_equal(drain(s, len, 7, &cut1), len);
	assert_int_equal(cut1, 0);
	x_free(gz);
	x_free(s);
}

/* ---- truncation ---------------------------------------------------------- */

/* Every cut of a small trace: the events whose closing brace is inside the
 * cut are kept, exactly, and the store says truncated. */
static void test_truncation_every_offset(void **state)
{
	static const char *ev[3] = {
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add\", \"pid\": 1, \"tid\": 2, \"ts\": 10.5, \"dur\": 5, \"args\": {\"Input Dims\": [[1, 2], []]}}",
		"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 12, \"dur\": 1.25, \"args\": {\"grid\": [1, 2, 3], \"block\": [4, 5, 6]}}",
		"{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 2, \"ts\": 11, \"dur\": 0.75}",
	};
	pt_sb sb = { 0 };
	size_t ends[3], c, i, len;
	char *s;

	pt_sb_adds(&sb, "{\"schemaVersion\": 1, \"baseTimeNanoseconds\": 1000000, \"traceEvents\": [\n  ");
	for (i = 0; i < 3; i++) {
		pt_sb_adds(&sb, ev[i]);
		ends[i] = sb.len;
		pt_sb_adds(&sb, i < 2 ? ",\n  " : "\n");
	}
	pt_sb_adds(&sb, "], \"traceName\": \"x\"}");
	s = pt_sb_detach(&sb, &len);
	for (c = 0; c <= len; c++) {
		size_t want = 0, k;
		for (i = 0; i < 3; i++)
			if (ends[i] <= c)
				want++;
		for (k = 0; k < 2; k++) {
			pt_store st;
			pt_error e;
			int rc;

			assert_int_equal(pt_store_init(&st), PT_OK);
			pt_error_clear(&e);
			rc = k ? pt_kineto_read_mem_chunked(s, c, 16, &st, &e) : pt_kineto_read_mem(s, c, &st, &e);
			if (!want) {
				if (rc != PT_EPARSE)
					fail_msg("cut %zu: rc %d (%s)", c, rc, e.msg);
				assert_int_equal(e.offset, (int64_t)c);
				assert_non_null(strstr(e.msg, c ? "unexpected end of file" : "empty file"));
			} else {
				if (rc != PT_OK || st.n != want)
					fail_msg("cut %zu: rc %d n %zu want %zu (%s)", c, rc, st.n, want, e.msg);
				assert_int_equal(st.truncated, c < len);
				if (c < len)
					assert_non_null(strstr(st.warning, "trace ends early at byte"));
				/* The base came before the events: applied. */
				assert_int_equal(st.ev[0].ts, 1000000 + 10500);
			}
			pt_store_free(&st);
		}
	}
	x_free(s);
}

static void test_truncation_real(void **state)
{
	size_t len, glen, i, prev = 0;
	char *plain = slurp("dlrm/worker1_step_12.1694128201556.pt.trace.json", &len);
	unsigned char *gz;
	pt_store full, st;
	pt_error e;

	assert_int_equal(pt_store_init(&full), PT_OK);
	pt_error_clear(&e);
	assert_int_equal(pt_kineto_read_mem(plain, len, &full, &e), PT_OK);
	for (i = 1; i <= 9; i++) {
		size_t cut = i < 9 ? len * i / 9 : len - 1, j;

		assert_int_equal(pt_store_init(&st), PT_OK);
		pt_error_clear(&e);
		assert_int_equal(pt_kineto_read_mem(plain, cut, &st, &e), PT_OK);
		assert_int_equal(st.truncated, 1);
		assert_true(st.n >= prev && st.n <= full.n && st.n > 0);
		prev = st.n;
		for (j = 0; j < st.n; j++) {
			assert_int_equal(st.ev[j].ts, full.ev[j].ts);
			assert_int_equal(st.ev[j].dur, full.ev[j].dur);
			assert_string_equal(sname(&st, st.ev[j].name), sname(&full, full.ev[j].name));
		}
		if (i == 9) {
			/* Only the final '}' is missing: every event is there. */
			assert_int_equal(st.n, full.n);
			assert_non_null(strstr(st.warning, "after all events"));
		}
		pt_store_free(&st);
	}
	/* Cut inside the header, before traceEvents: nothing usable. */
	assert_int_equal(pt_store_init(&st), PT_OK);
	assert_int_equal(pt_kineto_read_mem(plain, 1000, &st, &e), PT_EPARSE);
	assert_int_equal(e.offset, 1000);
	pt_store_free(&st);

	/* gzip cut mid-stream: the same prefix, flagged as cut. */
	gz = gzip_mem(plain, len, &glen);
	for (i = 1; i <= 4; i++) {
		size_t cut = glen * i / 5, j;

		assert_int_equal(pt_store_init(&st), PT_OK);
		pt_error_clear(&e);
		assert_int_equal(pt_kineto_read_mem_chunked(gz, cut, 4096, &st, &e), PT_OK);
		assert_int_equal(st.truncated, 1);
		assert_non_null(strstr(st.warning, "gzip stream incomplete"));
		assert_true(st.n > 0 && st.n < full.n);
		for (j = 0; j < st.n; j++)
			assert_int_equal(st.ev[j].ts, full.ev[j].ts);
		pt_store_free(&st);
	}
	/* A gzip cut inside its header: nothing usable. */
	expect_fail((const char *)gz, 15, PT_EPARSE, "unexpected end of gzip stream", 0);
	/* Corrupt deflate data in the middle. */
	{
		unsigned char *bad = x_malloc(glen);
		memcpy(bad, gz, glen);
		memset(bad + 40, 0xff, 64);
		assert_int_equal(pt_store_init(&st), PT_OK);
		pt_error_clear(&e);
		assert_int_equal(pt_kineto_read_mem(bad, glen, &st, &e), PT_EPARSE);
		assert_non_null(strstr(e.msg, "corrupt gzip data"));
		assert_true(e.offset >= 0);
		pt_store_free(&st);
		x_free(bad);
	}
	x_free(gz);
	pt_store_free(&full);
	x_free(plain);
}

/* ---- timestamps ----------------------------------------------------------- */

static void test_base_time(void **state)
{
	const char *evs = "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1212075525586.016, \"dur\": 3.5},"
			  "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#7\", \"pid\": 1, \"tid\": 1, \"ts\": 1212075525580, \"dur\": 100}";
	const int64_t base = 1719853884000000000LL;
	pt_sb sb = { 0 };
	char *before, *after, *none;
	pt_store a, b, c;
	pt_error e;

	pt_sb_addf(&sb, "{\"baseTimeNanoseconds\": %lld, \"traceEvents\": [%s]}", (long long)base, evs);
	before = pt_sb_detach(&sb, NULL);
	pt_sb_addf(&sb, "{\"traceEvents\": [%s], \"displayTimeUnit\": \"ms\", \"baseTimeNanoseconds\": %lld}", evs, (long long)base);
	after = pt_sb_detach(&sb, NULL);
	pt_sb_addf(&sb, "{\"traceEvents\": [%s]}", evs);
	none = pt_sb_detach(&sb, NULL);

	assert_int_equal(read_str(before, &a, &e), PT_OK);
	assert_int_equal(read_str(after, &b, &e), PT_OK);
	assert_int_equal(read_str(none, &c, &e), PT_OK);
	store_eq(&a, &b);
	assert_int_equal(a.base_ns, base);
	assert_int_equal(c.base_ns, 0);
	assert_int_equal(a.ev[0].ts, base + 1212075525586016LL);
	assert_int_equal(a.ev[0].dur, 3500);
	assert_int_equal(c.ev[0].ts, 1212075525586016LL);
	assert_int_equal(a.steps[0].number, 7);
	assert_int_equal(a.steps[0].ts, base + 1212075525580000LL);
	assert_int_equal(a.steps[0].dur, 100000);
	assert_int_equal(c.steps[0].ts, 1212075525580000LL);
	pt_store_free(&a);
	pt_store_free(&b);
	pt_store_free(&c);
	x_free(before);
	x_free(after);
	x_free(none);
}

static void test_fractional_exact(void **state)
{
	static const struct { const char *ts, *dur; int64_t ts_ns, dur_ns; } cases[] = {
		/* Absolute epoch µs with a fraction: exact to the ns (a double
		 * would be off by up to 128 ns here). */
		{ "1694128201426674.123", "0.5", 1694128201426674123LL, 500 },
		{ "1712195495505543.2", "41.768", 1712195495505543200LL, 41768 },
		{ "1712195495519689.0", "63.813", 1712195495519689000LL, 63813 },
		/* Digits below the ns round half up. */
		{ "1.0005", "1.0004", 1001, 1000 },
		{ "0.0004", "0.0015", 0, 2 },
		/* Exponents shift the decimal point exactly. */
		{ "1.5e3", "2E-3", 1500000, 2 },
		{ "17121954955e5", "1e0", 1712195495500000000LL, 1000 },
		{ "-5", "0", -5000, 0 },
		{ "123456789012345678.9e-3", "0.000", 123456789012345679LL, 0 },
		/* Digits read 8 at a time: every length around 8 and 16, runs
		 * cut by '.', 'e' and the end, digits past the 19th ignored. */
		{ "12345678", "1234567", 12345678000LL, 1234567000LL },
		{ "123456789", "87654321.5", 123456789000LL, 87654321500LL },
		{ "1694128201426674", "99999999.999", 1694128201426674000LL, 99999999999LL },
		{ "169412820142667", "12345678.12345678", 169412820142667000LL, 12345678123LL },
		{ "1234567890123456789e-6", "1.1234567891234567891234", 1234567890123457LL, 1123 },
		{ "1694128201426674.12345678", "7.00000001", 1694128201426674123LL, 7000 },
		{ "20.99999999e2", "0.00000009e9", 2100000LL, 90000 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char ev[256], *s;
		pt_store st;
		pt_error e;

		snprintf(ev, sizeof(ev), "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"ts\": %s, \"dur\": %s}",
			 cases[i].ts, cases[i].dur);
		s = trace_of(ev);
		assert_int_equal(read_str(s, &st, &e), PT_OK);
		assert_int_equal(st.n, 1);
		if (st.ev[0].ts != cases[i].ts_ns || st.ev[0].dur != cases[i].dur_ns)
			fail_msg("ts %s dur %s: got %lld %lld", cases[i].ts, cases[i].dur,
				 (long long)st.ev[0].ts, (long long)st.ev[0].dur);
		pt_store_free(&st);
		x_free(s);
	}
}

/* ---- kinds, names, bytes ------------------------------------------------- */

static void test_kinds_and_names(void **state)
{
	const char *evs =
		"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"foo(int)\", \"pid\": 0, \"tid\": 7, \"ts\": 1, \"dur\": 1, \"args\": {\"grid\": [32, 2, 1], \"block\": [128, 1, 1]}},\n"
		"{\"ph\": \"X\", \"cat\": \"Kernel\", \"name\": \"bar\", \"pid\": 0, \"tid\": \"stream 7\", \"ts\": 2, \"dur\": 1},\n"
		"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllGather_RING_LL(x)\", \"pid\": 0, \"tid\": 9, \"ts\": 3, \"dur\": 1, "
		"\"args\": {\"grid\": [11, 1, 1], \"block\": [512, 1, 1], \"In msg nelems\": 25136, \"Out msg nelems\": 201088, \"Group size\": 8, \"dtype\": \"BFloat16\"}},\n"
		"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void rcclKernel(y)\", \"pid\": 0, \"tid\": 9, \"ts\": 4, \"dur\": 1, \"args\": {\"Out msg nelems\": 10, \"dtype\": \"Mystery\"}},\n"
		"{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD\", \"pid\": 0, \"tid\": 7, \"ts\": 5, \"dur\": 1, \"args\": {\"bytes\": 2048}},\n"
		"{\"ph\": \"X\", \"cat\": \"Memset\", \"name\": \"Memset (Device)\", \"pid\": 0, \"tid\": 7, \"ts\": 6, \"dur\": 1, \"args\": {\"bytes\": 8}},\n"
		"{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"hipLaunchKernel\", \"pid\": 10, \"tid\": 11, \"ts\": 7, \"dur\": 1, \"args\": {\"grid\": [1, 1, 1], \"block\": [1, 1, 1]}},\n"
		"{\"ph\": \"X\", \"cat\": \"cuda_driver\", \"name\": \"cuLaunchKernel\", \"pid\": 10, \"tid\": 11, \"ts\": 8, \"dur\": 1},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", \"pid\": 10, \"tid\": 11, \"ts\": 9, \"dur\": 1, "
		"\"args\": {\"Collective name\": \"allreduce\", \"dtype\": \"c10::Float\", \"In msg nelems\": 100, \"Out msg nelems\": 100, \"Group size\": 70000}},\n"
		"{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"nccl:all_reduce\", \"pid\": 10, \"tid\": 11, \"ts\": 10, \"dur\": 1},\n"
		"{\"ph\": \"X\", \"name\": \"gloo:all_reduce\", \"pid\": \"CPU functions\", \"tid\": 1, \"ts\": 11, \"dur\": 1},\n"
		"{\"ph\": \"X\", \"cat\": \"Operator\", \"name\": \"c10d::allreduce_\", \"pid\": 10, \"tid\": 11, \"ts\": 12, \"dur\": 1, \"args\": {\"Call stack\": \"a.py(3): f;b.py(9): g\"}},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 10, \"tid\": 11, \"ts\": 13, \"dur\": 1, \"args\": {\"Call stack\": \"x.py(1): \\\"q\\\"\"}},\n"
		"{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"threading.py(1032): _bootstrap\", \"pid\": 10, \"tid\": 11, \"ts\": 14, \"dur\": 1},\n"
		"{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"<built-in method add of Tensor object at 0x7f12ab>\", \"pid\": 10, \"tid\": 11, \"ts\": 15, \"dur\": 1},\n"
		"{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"## forward ##\", \"pid\": 10, \"tid\": 11, \"ts\": 16, \"dur\": 1},\n"
		"{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#3\", \"pid\": 10, \"tid\": 11, \"ts\": 17, \"dur\": 10},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"ProfilerStep#3\", \"pid\": 10, \"tid\": 11, \"ts\": 17, \"dur\": 10},\n"
		"{\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"ProfilerStep#3\", \"pid\": 0, \"tid\": 7, \"ts\": 18, \"dur\": 8},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"ProfilerStep#x\", \"pid\": 10, \"tid\": 11, \"ts\": 19, \"dur\": 1},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"na\\u00efve \\ud83d\\ude00 \\\"q\\\"\", \"pid\": 10, \"tid\": 11, \"ts\": 20, \"dur\": 1},\n"
		/* Skipped categories and phases. */
		"{\"ph\": \"X\", \"cat\": \"Trace\", \"name\": \"PyTorch Profiler (0)\", \"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\", \"ts\": 0, \"dur\": 100},\n"
		"{\"ph\": \"X\", \"cat\": \"overhead\", \"name\": \"Activity Buffer Request\", \"pid\": -1, \"tid\": 0, \"ts\": 0, \"dur\": 1},\n"
		"{\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"Stream Sync\", \"pid\": 0, \"tid\": 7, \"ts\": 0, \"dur\": 1},\n"
		"{\"ph\": \"s\", \"cat\": \"ac2g\", \"id\": 1, \"pid\": 10, \"tid\": 11, \"ts\": 1, \"bp\": \"e\", \"name\": \"ac2g\"},\n"
		"{\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 10, \"tid\": 11, \"ts\": 1, \"args\": {\"Bytes\": 5}},\n"
		"{\"ph\": \"C\", \"name\": \"ctr\", \"pid\": 10, \"ts\": 1, \"args\": {\"v\": 1}},\n"
		"{\"name\": \"thread_name\", \"ph\": \"M\", \"ts\": 1, \"pid\": 10, \"tid\": 11, \"args\": {\"name\": \"main thread\"}},\n"
		"{\"name\": \"thread_name\", \"ph\": \"M\", \"ts\": 1, \"pid\": 0, \"tid\": 7, \"args\": {\"name\": \"stream 7\"}},\n"
		"{\"name\": \"process_name\", \"ph\": \"M\", \"ts\": 1, \"pid\": 10, \"tid\": 0, \"args\": {\"name\": \"python3\"}}\n";
	static const struct { int kind; const char *name; uint64_t bytes; unsigned group; const char *stack; int gpu; } want[] = {
		{ PT_K_KERNEL, "foo(int)32_2_1|128_1_1", 0, 0, "", 1 },
		{ PT_K_KERNEL, "bar", 0, 0, "", 1 },
		{ PT_K_COMM_KERNEL, "ncclDevKernel_AllGather_RING_LL(x)", 201088 * 2, 8, "", 1 },
		{ PT_K_COMM_KERNEL, "void rcclKernel(y)", 0, 0, "", 1 },
		{ PT_K_MEMCPY, "Memcpy HtoD", 2048, 0, "", 1 },
		{ PT_K_MEMSET, "Memset (Device)", 8, 0, "", 1 },
		{ PT_K_RUNTIME, "hipLaunchKernel", 0, 0, "", 0 },
		{ PT_K_DRIVER, "cuLaunchKernel", 0, 0, "", 0 },
		{ PT_K_CPU_COMM, "record_param_comms:allreduce", 400, 65535, "", 0 },
		{ PT_K_CPU_COMM, "nccl:all_reduce", 0, 0, "", 0 },
		{ PT_K_CPU_COMM, "gloo:all_reduce", 0, 0, "", 0 },
		{ PT_K_CPU_COMM, "c10d::allreduce_", 0, 0, "a.py(3): f;b.py(9): g", 0 },
		{ PT_K_CPU_OP, "aten::mm", 0, 0, "x.py(1): \"q\"", 0 },
		{ PT_K_PYTHON, "threading.py: _bootstrap", 0, 0, "", 0 },
		{ PT_K_PYTHON, "<built-in method add of Tensor object at 0x>", 0, 0, "", 0 },
		{ PT_K_ANNOTATION, "## forward ##", 0, 0, "", 0 },
		{ PT_K_STEP, "ProfilerStep#3", 0, 0, "", 0 },
		/* the cpu_op copy of step 3 is dropped */
		{ PT_K_GPU_ANNOTATION, "ProfilerStep#3", 0, 0, "", 1 },
		{ PT_K_CPU_OP, "ProfilerStep#x", 0, 0, "", 0 },
		{ PT_K_CPU_OP, "na\xc3\xafve \xf0\x9f\x98\x80 \"q\"", 0, 0, "", 0 },
	};
	char *s = trace_of(evs);
	pt_store st;
	pt_error e;
	size_t i;

	assert_int_equal(read_str(s, &st, &e), PT_OK);
	assert_int_equal(st.n, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < st.n; i++) {
		const pt_event *v = &st.ev[i];
		if (v->kind != want[i].kind || strcmp(sname(&st, v->name), want[i].name) ||
		    v->bytes != want[i].bytes || v->group != want[i].group ||
		    strcmp(sname(&st, v->stack), want[i].stack) || st.lanes[v->lane].gpu != want[i].gpu ||
		    !!(v->flags & PT_EV_GPU) != want[i].gpu)
			fail_msg("event %zu: kind %s name '%s' bytes %llu group %u stack '%s'", i,
				 pt_kind_name(v->kind), sname(&st, v->name), (unsigned long long)v->bytes,
				 v->group, sname(&st, v->stack));
	}
	assert_int_equal(st.nsteps, 1);
	assert_int_equal(st.steps[0].number, 3);
	assert_int_equal(st.steps[0].dur, 10000);
	assert_int_equal(st.nwarnings, 0);
	/* "stream 7" is stream 7: same lane as tid 7, named by its metadata. */
	assert_int_equal(st.ev[0].lane, st.ev[1].lane);
	assert_string_equal(sname(&st, st.lanes[st.ev[0].lane].name), "stream 7");
	assert_string_equal(sname(&st, st.lanes[st.ev[6].lane].name), "main thread");
	/* A string pid that is not a number gets a hash with bit 62 set. */
	assert_true(st.lanes[st.ev[10].lane].pid >= (1LL << 62));
	assert_int_equal(st.lanes[st.ev[10].lane].tid, 1);
	/* Lanes: (0,7,gpu) (0,9,gpu) (10,11,cpu) (hash,1,cpu). */
	assert_int_equal(st.nlanes, 4);
	pt_store_free(&st);
	x_free(s);
}

/* ---- process groups, sequence numbers, the Flight Recorder ---------------- */

/* What the collector's "perftracker" member gives a gloo trace: rank 0 of
 * tests/data/torch2_gloo_fr, 15 gloo:all_reduce ops on two worker threads
 * whose Flight Recorder entries (process group "0", seq 16..30, created
 * 15-175 us before each op starts) give them a (pg, seq) and bytes. */
static void test_flight_recorder(void **state)
{
	static const uint64_t nelems[5] = { 4096, 64, 512, 8, 1 };
	char path[512];
	pt_store st;
	pt_error e;
	size_t i;
	int64_t prev = INT64_MIN;

	(void)state;
	snprintf(path, sizeof(path), "%s/torch2_gloo_fr/vm_0_18241.json.gz", data_dir());
	pt_store_init(&st);
	pt_error_clear(&e);
	assert_int_equal(pt_kineto_read_file(path, &st, &e), PT_OK);
	assert_string_equal(sname(&st, st.torch), "2.15.0+cu132");
	assert_int_equal(st.world_size, 3);
	assert_int_equal(st.nfr, 15);
	/* "ts": 5571984577988.937 us after baseTimeNanoseconds 1790857026000000000 */
	assert_int_equal(st.fr[0].ts, 1790857026000000000LL + 5571984577988937LL);
	assert_int_equal(st.fr[0].seq, 16);
	assert_string_equal(sname(&st, st.fr[0].pg), "0");
	assert_string_equal(sname(&st, st.fr[0].name), "gloo:all_reduce");
	assert_int_equal(st.fr[0].bytes, 4096 * 4);
	assert_int_equal(st.fr[0].dflt, 1);
	assert_int_equal(st.fr[0].p2p, 0);
	assert_int_equal(st.fr[14].seq, 30);
	assert_int_equal(st.nwarnings, 0);
	/* every gloo op got its entry, in start order */
	assert_int_equal(st.ncollids, 15);
	for (i = 0; i < st.ncollids; i++) {
		const pt_collid *c = &st.collids[i];
		const pt_event *ev = &st.ev[c->ev];
		assert_true(i == 0 || c->ev > st.collids[i - 1].ev);
		assert_int_equal(ev->kind, PT_K_CPU_COMM);
		assert_string_equal(sname(&st, ev->name), "gloo:all_reduce");
		assert_string_equal(sname(&st, c->pg), "0");
		assert_ptr_equal(pt_store_collid(&st, c->ev), c);
		assert_int_equal(ev->group, 3);
		assert_int_equal(ev->bytes, nelems[(c->seq - 16) % 5] * 4);
		assert_true(ev->ts >= st.fr[c->seq - 16].ts);
	}
	/* seq follows the ops' start order */
	for (i = 16; i <= 30; i++) {
		size_t k;
		for (k = 0; k < st.ncollids && st.collids[k].seq != (int64_t)i; k++)
			;
		assert_true(k < st.ncollids);
		assert_true(st.ev[st.collids[k].ev].ts > prev);
		prev = st.ev[st.collids[k].ev].ts;
	}
	/* the first op: ts 5571984578163.752 us, seq 16 */
	{
		size_t k;
		for (k = 0; st.collids[k].seq != 16; k++)
			;
		assert_int_equal(st.ev[st.collids[k].ev].ts, 1790857026000000000LL + 5571984578163752LL);
	}
	pt_store_free(&st);
}

/* Two process groups, each on gloo threads of its own (rank 0 of
 * tests/data/torch2_gloo_fr_2pg): the threads' assignment to the groups
 * that maps every op; group "1" (the loss scalar) gets seq 4, 5, 6 on its
 * two threads, group "0" 13..24 on the other two. */
static void test_flight_recorder_groups(void **state)
{
	char path[512];
	pt_store st;
	pt_error e;
	size_t i, n1 = 0;
	int64_t next0 = 13, next1 = 4;

	(void)state;
	snprintf(path, sizeof(path), "%s/torch2_gloo_fr_2pg/vm_0_24681.json.gz", data_dir());
	pt_store_init(&st);
	pt_error_clear(&e);
	assert_int_equal(pt_kineto_read_file(path, &st, &e), PT_OK);
	assert_int_equal(st.nfr, 15);
	assert_int_equal(st.ncollids, 15);
	/* in start order, each group's seqs follow each other */
	{
		uint32_t ord[15];
		size_t k, j;
		for (k = 0; k < 15; k++)
			ord[k] = (uint32_t)k;
		for (k = 1; k < 15; k++)
			for (j = k; j > 0 && st.ev[st.collids[ord[j]].ev].ts <
					      st.ev[st.collids[ord[j - 1]].ev].ts; j--) {
				uint32_t t = ord[j];
				ord[j] = ord[j - 1];
				ord[j - 1] = t;
			}
		for (k = 0; k < 15; k++) {
			const pt_collid *c = &st.collids[ord[k]];
			const pt_lane *l = &st.lanes[st.ev[c->ev].lane];
			if (!strcmp(sname(&st, c->pg), "1")) {
				assert_int_equal(c->seq, next1++);
				assert_true(l->tid == 24730 || l->tid == 24731);
				assert_int_equal(st.ev[c->ev].bytes, 4);
				n1++;
			} else {
				assert_string_equal(sname(&st, c->pg), "0");
				assert_int_equal(c->seq, next0++);
				assert_true(l->tid == 24719 || l->tid == 24720);
			}
		}
	}
	assert_int_equal(n1, 3);
	for (i = 0; i < st.nfr; i++)
		assert_int_equal(st.fr[i].dflt, !strcmp(sname(&st, st.fr[i].pg), "0"));
	pt_store_free(&st);
}

/* The offset of the window's gloo ops in their group's entries: 3 ops
 * starting at 100, 200 and 300 us and entries created at *ts (seq
 * first_seq, first_seq + 1, ...); the seq each op gets into got[] (-1
 * none). */
static void fr_case(const double *ts, size_t nts, int64_t first_seq, int64_t got[3])
{
	char buf[4096];
	size_t i, k, len = 0;
	pt_store st;
	pt_error e;

	len += (size_t)snprintf(buf + len, sizeof(buf) - len,
				"{\"perftracker\": {\"torch\": \"2.15.0\", \"collectives\": [");
	for (i = 0; i < nts; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len,
					"%s{\"pg\": \"0\", \"seq\": %lld, \"name\": \"gloo:all_reduce\", \"ts\": %g}",
					i ? ", " : "", (long long)(first_seq + (int64_t)i), ts[i]);
	len += (size_t)snprintf(buf + len, sizeof(buf) - len, "]}, \"traceEvents\": [");
	for (i = 0; i < 3; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len,
					"%s{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"gloo:all_reduce\", "
					"\"ts\": %zu, \"dur\": 50, \"pid\": 1, \"tid\": %zu}",
					i ? ", " : "", 100 * (i + 1), 2 + i % 2);
	snprintf(buf + len, sizeof(buf) - len, "]}");
	assert_int_equal(read_str(buf, &st, &e), PT_OK);
	assert_int_equal(st.n, 3);
	for (i = 0; i < 3; i++) {
		const pt_collid *c = pt_store_collid(&st, (uint32_t)i);
		got[i] = c ? c->seq : -1;
		for (k = 0; c && k < i; k++)
			assert_true(got[k] < got[i]);
	}
	pt_store_free(&st);
}

static void test_fr_offsets(void **state)
{
	/* the window's entries only */
	static const double exact[] = { 90, 190, 290 };
	/* older entries in the buffer: the latest fitting offset */
	static const double older[] = { 5, 10, 90, 190, 290 };
	/* the first op was created before the window: it gets none */
	static const double cut[] = { 190, 290 };
	/* all three queued before the first started: not seq 7 for op 0 */
	static const double queued[] = { 90, 95, 99 };
	int64_t g[3];

	(void)state;
	fr_case(exact, 3, 5, g);
	assert_true(g[0] == 5 && g[1] == 6 && g[2] == 7);
	fr_case(older, 5, 3, g);
	assert_true(g[0] == 5 && g[1] == 6 && g[2] == 7);
	fr_case(cut, 2, 6, g);
	assert_true(g[0] == -1 && g[1] == 6 && g[2] == 7);
	fr_case(queued, 3, 5, g);
	assert_true(g[0] == 5 && g[1] == 6 && g[2] == 7);
}

/* NCCL with process group names and no "Seq" (torch 2.x before it): the
 * B200 trace's record_param_comms and its AllGather kernel, group "3". */
static void test_pg_without_seq(void **state)
{
	char path[512];
	pt_store st;
	pt_error e;

	(void)state;
	snprintf(path, sizeof(path), "%s/TraceLens/tests/traces/b200/eager_trace.json.gz", data_dir());
	pt_store_init(&st);
	pt_error_clear(&e);
	assert_int_equal(pt_kineto_read_file(path, &st, &e), PT_OK);
	assert_int_equal(st.ncollids, 2);
	assert_int_equal(st.ev[st.collids[0].ev].kind, PT_K_CPU_COMM);
	assert_int_equal(st.ev[st.collids[1].ev].kind, PT_K_COMM_KERNEL);
	assert_string_equal(sname(&st, st.collids[0].pg), "3");
	assert_string_equal(sname(&st, st.collids[1].pg), "3");
	assert_int_equal(st.collids[0].seq, -1);
	assert_int_equal(st.collids[1].seq, -1);
	assert_int_equal(st.ev[st.collids[1].ev].group, 8);
	assert_int_equal(st.torch, 0);
	assert_int_equal(st.nfr, 0);
	pt_store_free(&st);
}

/* "Seq" (newer torch) on a kernel and its record_param_comms; a string
 * "Seq" is no number; an entry without a seq is skipped with a warning; a
 * second "perftracker" member is ignored. */
static void test_seq_args(void **state)
{
	const char *s =
		"{\"perftracker\": {\"torch\": \"2.16.0\", \"collectives\": [{\"pg\": \"1\", \"name\": \"nccl:all_reduce\", \"ts\": 5}, 7]}, "
		"\"traceEvents\": ["
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", \"ts\": 1, \"dur\": 2, \"pid\": 1, \"tid\": 1, "
		"\"args\": {\"Collective name\": \"allreduce\", \"Process Group Name\": \"1\", \"Seq\": \"4\", \"In msg nelems\": 10, \"dtype\": \"Float\"}}, "
		"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)\", "
		"\"ts\": 3, \"dur\": 2, \"pid\": 0, \"tid\": 7, \"args\": {\"Process Group Name\": \"1\", \"Seq\": 4, \"Group size\": 2, "
		"\"In msg nelems\": 10, \"Out msg nelems\": 10, \"dtype\": \"Float\"}}], "
		"\"perftracker\": {\"torch\": \"0\"}}";
	pt_store st;
	pt_error e;

	(void)state;
	assert_int_equal(read_str(s, &st, &e), PT_OK);
	assert_string_equal(sname(&st, st.torch), "2.16.0");
	assert_int_equal(st.nfr, 0);
	assert_int_equal(st.nwarnings, 1);
	assert_string_equal(st.warning, "perftracker.collectives: 2 entries without pg, seq, name or ts skipped");
	assert_int_equal(st.ncollids, 2);
	assert_string_equal(sname(&st, st.collids[0].pg), "1");
	assert_int_equal(st.collids[0].seq, -1);
	assert_int_equal(st.collids[1].seq, 4);
	assert_int_equal(st.ev[st.collids[1].ev].kind, PT_K_COMM_KERNEL);
	assert_int_equal(st.ev[st.collids[1].ev].bytes, 40);
	assert_int_equal(st.ev[st.collids[1].ev].group, 2);
	pt_store_free(&st);
}

static void test_bare_array(void **state)
{
	const char *s =
		"[{\"name\": \"ProfilerStep#1\", \"ph\": \"X\", \"ts\": 175, \"dur\": 3377, \"tid\": 1, \"pid\": \"CPU functions\", \"args\": {}}, "
		"{\"name\": \"gloo:all_reduce\", \"ph\": \"X\", \"ts\": 200, \"dur\": 10, \"tid\": 1, \"pid\": \"CPU functions\", \"args\": {}}, "
		"{\"name\": \"aten::mm\", \"ph\": \"s\", \"ts\": 200, \"tid\": 1, \"pid\": \"CPU functions\", \"id\": 1, \"cat\": \"cpu_to_cuda\", \"args\": {}}, "
		"{\"name\": \"aten::mm\", \"ph\": \"X\", \"ts\": 300, \"dur\": 5, \"tid\": 1, \"pid\": \"CPU functions\", \"args\": {}}]";
	pt_store st;
	pt_error e;

	assert_int_equal(read_str(s, &st, &e), PT_OK);
	assert_int_equal(st.n, 3);
	assert_int_equal(st.ev[0].kind, PT_K_STEP);
	assert_int_equal(st.ev[1].kind, PT_K_CPU_COMM);
	assert_int_equal(st.ev[2].kind, PT_K_CPU_OP);
	assert_int_equal(st.nsteps, 1);
	assert_int_equal(st.steps[0].ts, 175000);
	assert_int_equal(st.rank, -1);
	assert_int_equal(st.nlanes, 1);
	pt_store_free(&st);
	/* An empty array is a trace with nothing in it. */
	expect_fail("[]", 2, PT_EFORMAT, "no complete events", -1);
	expect_fail(" [ \n ] ", 7, PT_EFORMAT, "no complete events", -1);
}

static void test_header(void **state)
{
	const char *s =
		"{\"schemaVersion\": 1, \"INFO\": [\"a\", {\"b\": [1, 2, {\"c\": \"]}\\\"\"}]}], "
		"\"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H100\"}, {\"id\": 1, \"name\": \"NVIDIA H100\"}], "
		"\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"ts\": 1, \"dur\": 1}], "
		"\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 5, \"world_size\": 16, \"pg_config\": [{\"ranks\": [0, 1]}]}, "
		"\"with_stack\": true, \"trace_id\": null, \"f\": -1.5e3}";
	pt_store st;
	pt_error e;

	assert_int_equal(read_str(s, &st, &e), PT_OK);
	assert_int_equal(st.rank, 5);
	assert_int_equal(st.world_size, 16);
	assert_string_equal(sname(&st, st.backend), "nccl");
	assert_string_equal(sname(&st, st.device_name), "NVIDIA H100");
	assert_int_equal(st.ndevices, 2);
	assert_int_equal(st.n, 1);
	assert_int_equal(st.nwarnings, 0);
	pt_store_free(&st);

	/* A header value the strict DOM refuses (invalid UTF-8, a number out
	 * of double range) is ignored with a warning; the events stay. */
	{
		const char *h = "{\"deviceProperties\": [{\"name\": \"GPU \xff\"}], \"distributedInfo\": {\"rank\": 1e999}, "
				"\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"ts\": 1, \"dur\": 1}]}";
		assert_int_equal(read_str(h, &st, &e), PT_OK);
		assert_int_equal(st.n, 1);
		assert_int_equal(st.nwarnings, 2);
		assert_string_equal(st.warning, "deviceProperties at byte 36 not read: invalid utf-8 in string");
		assert_int_equal(st.rank, -1);
		assert_int_equal(st.device_name, 0);
		pt_store_free(&st);
	}
}

/* ---- bad input ------------------------------------------------------------ */

static void test_bad_inputs(void **state)
{
	char *s;
	size_t n;

	EF("", PT_EPARSE, "empty file", 0);
	EF(" \n\t ", PT_EPARSE, "only whitespace", 4);
	EF("not json at all", PT_EPARSE, "unexpected character 'n'", 0);
	EF("\x7f" "ELF\x02\x01\x01", PT_EPARSE, "unexpected byte 0x7f", 0);
	EF("  42", PT_EFORMAT, "not a trace: the json value is a number", 2);
	EF("\"x\"", PT_EFORMAT, "is a string", 0);
	EF("null", PT_EFORMAT, "is a null", 0);
	EF("{\"a\": 1}", PT_EFORMAT, "not a trace: no traceEvents array", -1);
	EF("{}", PT_EFORMAT, "no traceEvents", -1);
	EF("{\"traceEvents\": {}}", PT_EFORMAT, "traceEvents is not an array", 16);
	EF("{\"traceEvents\": []}", PT_EFORMAT, "no complete events", -1);
	EF("{\"traceEvents\": [1, 2]}", PT_EPARSE, "'{' starting an event", 17);
	EF("{\"traceEvents\": [{\"ph\": \"X\",}]}", PT_EPARSE, "object key", 28);
	EF("{\"traceEvents\": [{\"ph\" \"X\"}]}", PT_EPARSE, "expected ':'", 23);
	EF("{\"a\": [1,}", PT_EPARSE, "", 9);
	EF("{\"traceEvents\": [", PT_EPARSE, "unexpected end of file", 17);
	EF("{\"a\": tru, \"traceEvents\": []}", PT_EPARSE, "", -2);
	EF("[{\"ph\": \"X\", \"name\": \"a\\q\", \"cat\": \"cpu_op\", \"ts\": 1, \"dur\": 1}]",
		    PT_EPARSE, "invalid escape", 23);
	EF("[{\"ph\": \"X\", \"ts\": 1.}]", PT_EPARSE, "digit after '.'", 21);
	EF("[{\"ph\": \"X\", \"ts\": -}]", PT_EPARSE, "a digit", 20);
	EF("[{\"ph\": \"X\", \"x\": [1 2]}]", PT_EPARSE, "',' or ']'", 21);
	EF("[{\"ph\": \"X\", \"x\": nope}]", PT_EPARSE, "a json value", 18);
	EF("{\"baseTimeNanoseconds\": [1, \"traceEvents\": []}", PT_EPARSE, "", -2);

	/* Deep nesting inside an event. */
	{
		pt_sb sb = { 0 };
		size_t i;
		pt_sb_adds(&sb, "[{\"ph\": \"X\", \"args\": {\"x\": ");
		for (i = 0; i < 300; i++)
			pt_sb_addc(&sb, '[');
		for (i = 0; i < 300; i++)
			pt_sb_addc(&sb, ']');
		pt_sb_adds(&sb, "}}]");
		s = pt_sb_detach(&sb, &n);
		expect_fail(s, n, PT_EPARSE, "nesting deeper than 256 levels", 27 + 256);
		x_free(s);
		/* ... and in a header value skipped in streaming mode. */
		pt_sb_adds(&sb, "{\"INFO\": ");
		for (i = 0; i < 300; i++)
			pt_sb_addc(&sb, '{');
		s = pt_sb_detach(&sb, &n);
		expect_fail(s, n, PT_EPARSE, "nesting deeper than 256 levels", 9 + 256);
		x_free(s);
	}
}

/* Problems in single events that leave the rest usable: warnings. */
static void test_event_warnings(void **state)
{
	static const struct { const char *ev; const char *warn; } cases[] = {
		{ "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"nodur\", \"ts\": 1}", "complete event 'nodur' at byte" },
		{ "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"neg\", \"ts\": 1, \"dur\": -3}", "negative duration" },
		{ "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"day\", \"ts\": 1, \"dur\": 86400000001}", "absurd (over a day)" },
		{ "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"big\", \"ts\": 1, \"dur\": 1e300}", "absurd" },
		{ "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"far\", \"ts\": 1e30, \"dur\": 1}", "out-of-range timestamp" },
		{ "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"nots\", \"dur\": 1}", "has no timestamp" },
		{ "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"ts\": 1, \"dur\": 1}", "event without a name" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[512], *s;
		pt_store st;
		pt_error e;

		snprintf(buf, sizeof(buf), "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"ok\", \"ts\": 5, \"dur\": 1, \"pid\": 1e30}, %s",
			 cases[i].ev);
		s = trace_of(buf);
		assert_int_equal(read_str(s, &st, &e), PT_OK);
		assert_int_equal(st.n, 1);
		assert_int_equal(st.nwarnings, 1);
		assert_int_equal(st.truncated, 0);
		if (!strstr(st.warning, cases[i].warn))
			fail_msg("warning '%s' lacks '%s'", st.warning, cases[i].warn);
		/* An out-of-range pid saturates rather than failing. */
		assert_int_equal(st.lanes[0].pid, INT64_MAX);
		pt_store_free(&st);
		x_free(s);
	}
}

static void test_huge_name(void **state)
{
	size_t len = (size_t)100 << 10, i;
	pt_sb sb = { 0 };
	pt_store st;
	pt_error e;
	char *s;

	pt_sb_adds(&sb, "[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"ts\": 1, \"dur\": 1, \"name\": \"");
	for (i = 0; i < len; i++)
		pt_sb_addc(&sb, (char)('a' + i % 26));
	pt_sb_adds(&sb, "\"}]");
	s = pt_sb_detach(&sb, NULL);
	assert_int_equal(read_str(s, &st, &e), PT_OK);
	assert_int_equal(st.n, 1);
	assert_int_equal(st.nwarnings, 1);
	assert_non_null(strstr(st.warning, "truncated to 65536"));
	{
		size_t nl;
		pt_strtab_get(st.strs, st.ev[0].name, &nl);
		assert_int_equal(nl, 65536);
	}
	pt_store_free(&st);
	x_free(s);
}

static void test_value_too_large(void **state)
{
	/* One event larger than the 64 MiB cap: a clear error, not a crash. */
	size_t len = ((size_t)64 << 20) + 100, i;
	char *s = x_malloc(len + 64);
	size_t n = 0;
	pt_store st;
	pt_error e;

	n += (size_t)sprintf(s, "[{\"ph\": \"X\", \"name\": \"");
	for (i = 0; i < len; i++)
		s[n++] = 'x';
	n += (size_t)sprintf(s + n, "\"}]");
	assert_int_equal(pt_store_init(&st), PT_OK);
	pt_error_clear(&e);
	assert_int_equal(pt_kineto_read_mem(s, n, &st, &e), PT_ENOMEM);
	assert_non_null(strstr(e.msg, "larger than 64 MiB"));
	assert_int_equal(e.offset, 1);
	pt_store_free(&st);
	x_free(s);
}

/* Garbage after good events keeps them, with a warning naming the byte. */
static void test_garbage_after_events(void **state)
{
	const char *s = "[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"ts\": 1, \"dur\": 1},\n"
			"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"b\", \"ts\": 2, \"dur\": 1}, \x01\x02\x03]";
	const char pad[] = "[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"ts\": 1, \"dur\": 1}]\0\0\0\0";
	pt_store st;
	pt_error e;

	assert_int_equal(read_str(s, &st, &e), PT_OK);
	assert_int_equal(st.n, 2);
	assert_int_equal(st.truncated, 1);
	assert_non_null(strstr(st.warning, "unexpected byte 0x01"));
	assert_non_null(strstr(st.warning, "at byte 125; kept the 2 events before it"));
	assert_int_equal(e.code, PT_OK);
	pt_store_free(&st);
	/* NUL padding after the document (a crash mid-write). */
	assert_int_equal(pt_store_init(&st), PT_OK);
	pt_error_clear(&e);
	assert_int_equal(pt_kineto_read_mem(pad, sizeof(pad) - 1, &st, &e), PT_OK);
	assert_int_equal(st.n, 1);
	assert_int_equal(st.truncated, 1);
	pt_store_free(&st);
}

/* Inputs the fuzzer found (tests/fuzz/fuzz_kineto.c). */
static void test_fuzz_regressions(void **state)
{
	/* A metadata event whose name is not a string, after an event with
	 * an 11-byte name: the stale length must not be used. */
	const char *s1 = "[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"thread_nam1\", \"ts\": 1, \"dur\": 1},"
			 "{\"ph\": \"M\", \"name\": 5, \"args\": {\"name\": \"x\"}}]";
	/* A gzip whose CRC is wrong: zlib says so only at the very end, after
	 * all the data.  The events before count, whatever the chunk size. */
	const char *s2 = "[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"ts\": 1, \"dur\": 1}]";
	unsigned char *gz;
	size_t glen;
	pt_store st;
	pt_error e;
	size_t chunk;

	assert_int_equal(read_str(s1, &st, &e), PT_OK);
	assert_int_equal(st.n, 1);
	pt_store_free(&st);

	gz = gzip_mem(s2, strlen(s2), &glen);
	gz[glen - 8] ^= 0xff;  /* CRC32 */
	for (chunk = 16; chunk <= 4096; chunk *= 4) {
		assert_int_equal(pt_store_init(&st), PT_OK);
		pt_error_clear(&e);
		assert_int_equal(pt_kineto_read_mem_chunked(gz, glen, chunk, &st, &e), PT_OK);
		assert_int_equal(st.n, 1);
		assert_int_equal(st.truncated, 1);
		assert_non_null(strstr(st.warning, "corrupt gzip data (incorrect data check)"));
		pt_store_free(&st);
	}
	x_free(gz);
}

static void test_read_file_errors(void **state)
{
	pt_store st;
	pt_error e;

	assert_int_equal(pt_store_init(&st), PT_OK);
	pt_error_clear(&e);
	assert_int_equal(pt_kineto_read_file("/nonexistent/t.json", &st, &e), PT_EIO);
	assert_string_equal(e.subject, "/nonexistent/t.json");
	assert_non_null(strstr(e.msg, "cannot open"));
	pt_error_clear(&e);
	assert_int_equal(pt_kineto_read_file("/tmp", &st, &e), PT_EIO);
	assert_non_null(strstr(e.msg, "is a directory"));
	pt_store_free(&st);
	/* A parse error in a file names the file and the byte. */
	{
		char path[] = "/tmp/pt_test_kineto_XXXXXX";
		int fd = mkstemp(path);
		char buf[600];
		assert_true(fd >= 0);
		assert_int_equal(write(fd, "{\"traceEvents\": [{]}", 20), 20);
		close(fd);
		assert_int_equal(pt_store_init(&st), PT_OK);
		pt_error_clear(&e);
		assert_int_equal(pt_kineto_read_file(path, &st, &e), PT_EPARSE);
		assert_string_equal(e.subject, path);
		assert_int_equal(e.offset, 18);
		pt_error_format(&e, buf, sizeof(buf));
		assert_non_null(strstr(buf, "(at byte 18)"));
		pt_store_free(&st);
		unlink(path);
	}
}

/* Correlation ids on launches and GPU events, and newer Kineto's
 * cuda_sync records (the shapes of kineto's docs traces): a stream wait
 * names the waiting and the waited stream, an event sync the waited one,
 * a context sync none; they are records, not events. */
static void test_corr_and_sync(void **state)
{
	pt_store st;
	pt_error e;
	size_t i, k = 0;
	const char *s =
		"{\"baseTimeNanoseconds\": 1000, \"traceEvents\": ["
		"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":9,\"tid\":9,\"ts\":1,\"dur\":1,\"args\":{\"correlation\":77}},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":3,\"dur\":1,\"args\":{\"stream\":7,\"correlation\":77}},"
		"{\"ph\":\"X\",\"cat\":\"cuda_sync\",\"name\":\"Stream Wait Event\",\"pid\":0,\"tid\":1,\"ts\":5,\"dur\":1,"
		"\"args\":{\"wait_on_stream\":7,\"wait_on_cuda_event_record_corr_id\":76,\"stream\":1,\"correlation\":200}},"
		"{\"ph\":\"X\",\"cat\":\"cuda_sync\",\"name\":\"Event Sync\",\"pid\":0,\"tid\":-1,\"ts\":6,\"dur\":1,"
		"\"args\":{\"wait_on_stream\":7,\"stream\":-1,\"correlation\":300}},"
		"{\"ph\":\"X\",\"cat\":\"cuda_sync\",\"name\":\"Context Sync\",\"pid\":0,\"tid\":-1,\"ts\":7,\"dur\":1,"
		"\"args\":{\"stream\":-1,\"correlation\":400}}]}";

	(void)state;
	assert_int_equal(read_str(s, &st, &e), PT_OK);
	assert_int_equal(st.n, 2);
	for (i = 0; i < st.n; i++)
		assert_int_equal(st.ev[i].corr, 77);
	assert_int_equal(st.nsyncs, 3);
	assert_int_equal(st.syncs[0].kind, PT_SYNC_STREAM_WAIT);
	assert_int_equal(st.syncs[0].corr, 200);
	assert_int_equal(st.syncs[0].ts, 1000 + 5000);
	assert_true(st.syncs[0].lane < st.nlanes && st.syncs[0].wlane < st.nlanes);
	assert_int_equal(st.lanes[st.syncs[0].lane].tid, 7);
	assert_true(st.lanes[st.syncs[0].lane].gpu);
	assert_int_equal(st.lanes[st.syncs[0].wlane].tid, 1);
	assert_int_equal(st.syncs[1].kind, PT_SYNC_EVENT);
	assert_int_equal(st.lanes[st.syncs[1].lane].tid, 7);
	assert_int_equal(st.syncs[1].wlane, UINT32_MAX);
	assert_int_equal(st.syncs[2].kind, PT_SYNC_CONTEXT);
	assert_int_equal(st.syncs[2].lane, UINT32_MAX);
	for (i = 0; i < st.nlanes; i++)
		k += st.lanes[i].gpu && st.lanes[i].tid == 7;
	assert_int_equal(k, 1); /* the kernel's stream and the waited one are one lane */
	pt_store_free(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corr_and_sync),
		cmocka_unit_test(test_real_traces),
		cmocka_unit_test(test_real_details),
		cmocka_unit_test(test_gzip_plain_equal),
		cmocka_unit_test(test_input_gzip_cut_drain),
		cmocka_unit_test(test_truncation_every_offset),
		cmocka_unit_test(test_truncation_real),
		cmocka_unit_test(test_base_time),
		cmocka_unit_test(test_fractional_exact),
		cmocka_unit_test(test_kinds_and_names),
		cmocka_unit_test(test_bare_array),
		cmocka_unit_test(test_flight_recorder),
		cmocka_unit_test(test_pg_without_seq),
		cmocka_unit_test(test_fr_offsets),
		cmocka_unit_test(test_flight_recorder_groups),
		cmocka_unit_test(test_seq_args),
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_bad_inputs),
		cmocka_unit_test(test_event_warnings),
		cmocka_unit_test(test_huge_name),
		cmocka_unit_test(test_value_too_large),
		cmocka_unit_test(test_garbage_after_events),
		cmocka_unit_test(test_fuzz_regressions),
		cmocka_unit_test(test_read_file_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
