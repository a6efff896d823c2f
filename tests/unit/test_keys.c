/*
 * test_keys.c - the function key's rules (src/model/keys.c): the same
 * kernels, steps and annotations recorded by the PyTorch profiler (a
 * Kineto trace) and by Nsight Systems (an SQLite export written here with
 * the documented schema) read back with the same keys, names cut at the
 * same length; and each rule's exact values: the kernel key and its launch
 * shape (the Nsight reader's old sprintf as the oracle), what is
 * communication, step numbers, name normalisation, shape stripping.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"
#include <sqlite3.h>

#include "model/commkind.h"
#include "model/keys.h"
#include "trace/kineto.h"
#include "trace/nsys.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* ---- the same kernels under both profilers ------------------------------- */

#define NCCL "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm *, unsigned long, ncclWork *)"
#define GEMM "void gemm<float>(int)"
#define BIG "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int)"

/* One kernel launch as both profilers record it. */
static const struct launch {
	const char *name;
	int64_t grid[3], block[3];
} launches[] = {
	{ GEMM, { 128, 2, 1 }, { 256, 1, 1 } },
	{ GEMM, { 64, 2, 1 }, { 256, 1, 1 } },
	{ NCCL, { 8, 1, 1 }, { 512, 1, 1 } },
	{ NCCL, { 16, 1, 1 }, { 640, 1, 1 } },  /* another shape: one key still */
	{ BIG, { 2147483647, 65535, 65535 }, { 1024, 1, 1 } },
	{ "k", { 0, 0, 0 }, { 0, 0, 0 } },
};

/* Ranges: NVTX in the export, user annotations in the Kineto trace. */
static const char *const ranges[] = {
	"ProfilerStep#7", "train.py(12): step", "<built-in method add of Tensor object at 0x7f12ab>",
	"ProfilerStep#x",
};

/* A long kernel name: both readers keep PT_KEY_NAME_MAX bytes of it. */
static char *long_name(void)
{
	size_t n = PT_KEY_NAME_MAX + 1000, i;
	char *s = x_malloc(n + 1);

	for (i = 0; i < n; i++)
		s[i] = (char)('a' + i % 26);
	s[n] = 0;
	return s;
}

static char *kineto_doc(const char *lname)
{
	pt_sb sb = { 0 };
	size_t i;

	pt_sb_addf(&sb, "{\"traceEvents\": [\n");
	for (i = 0; i < sizeof(launches) / sizeof(launches[0]); i++) {
		const struct launch *l = &launches[i];
		pt_sb_addf(&sb, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 1, "
			   "\"tid\": 7, \"ts\": %zu, \"dur\": 1, \"args\": {\"grid\": [%" PRId64 ", %"
			   PRId64 ", %" PRId64 "], \"block\": [%" PRId64 ", %" PRId64 ", %" PRId64
			   "]}},\n", l->name, 10 + i, l->grid[0], l->grid[1], l->grid[2],
			   l->block[0], l->block[1], l->block[2]);
	}
	pt_sb_addf(&sb, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 1, "
		   "\"tid\": 7, \"ts\": 30, \"dur\": 1, \"args\": {\"grid\": [1, 2, 3], "
		   "\"block\": [4, 5, 6]}},\n", lname);
	for (i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
		pt_sb_addf(&sb, "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"%s\", "
			   "\"pid\": 1000, \"tid\": 1000, \"ts\": %zu, \"dur\": 50}%s\n", ranges[i],
			   40 + i, i + 1 < sizeof(ranges) / sizeof(ranges[0]) ? "," : "");
	pt_sb_addf(&sb, "]}\n");
	return pt_sb_detach(&sb, NULL);
}

static void make_export(const char *path, const char *lname)
{
	pt_sb sb = { 0 };
	sqlite3 *db = NULL;
	char *msg = NULL;
	size_t i, nl = sizeof(launches) / sizeof(launches[0]);
	int rc;

	pt_sb_addf(&sb, "BEGIN;"
		   "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
		   "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER "
		   "NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId "
		   "INTEGER NOT NULL, correlationId INTEGER, demangledName INTEGER NOT NULL, "
		   "shortName INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, "
		   "gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, "
		   "blockZ INTEGER NOT NULL);"
		   "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType "
		   "INTEGER NOT NULL, rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, "
		   "globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);");
	/* String ids: launch i's name is i + 1 (repeated names repeat ids as
	 * nsys does: the second GEMM and NCCL launch reuse the first's). */
	for (i = 0; i < nl; i++) {
		size_t j;
		for (j = 0; j < i && strcmp(launches[j].name, launches[i].name); j++)
			;
		if (j == i)
			pt_sb_addf(&sb, "INSERT INTO StringIds VALUES (%zu, '%s');", i + 1,
				   launches[i].name);
	}
	pt_sb_addf(&sb, "INSERT INTO StringIds VALUES (100, '%s');", lname);
	for (i = 0; i < nl; i++) {
		const struct launch *l = &launches[i];
		size_t j;
		for (j = 0; j < i && strcmp(launches[j].name, l->name); j++)
			;
		pt_sb_addf(&sb, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (%zu, %zu, 0, 1, 7, "
			   "%zu, %zu, %zu, %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %"
			   PRId64 ", %" PRId64 ");", 10 + i, 11 + i, i, j + 1, j + 1, l->grid[0],
			   l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2]);
	}
	pt_sb_addf(&sb, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (30, 31, 0, 1, 7, 99, 100, "
		   "100, 1, 2, 3, 4, 5, 6);");
	for (i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
		pt_sb_addf(&sb, "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) "
			   "VALUES (%zu, %zu, 59, '%s', %lld);", 40 + i, 90 + i, ranges[i],
			   (1LL << 48) | (1000LL << 24) | 1000);
	pt_sb_addf(&sb, "COMMIT;");
	unlink(path);
	rc = sqlite3_open(path, &db);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, sb.buf, NULL, NULL, &msg);
	if (rc != SQLITE_OK)
		fail_msg("make_export: %s", msg ? msg : sqlite3_errmsg(db));
	sqlite3_free(msg);
	sqlite3_close(db);
	pt_sb_free(&sb);
}

/* "kind name" of every event, sorted, one string per event (the store's
 * order differs between the readers; the keys must not). */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char **event_keys(const pt_store *st)
{
	char **v = x_calloc(st->n + 1, sizeof(*v));
	size_t i;

	for (i = 0; i < st->n; i++) {
		pt_sb sb = { 0 };
		size_t n;
		const char *s = pt_strtab_get(st->strs, st->ev[i].name, &n);

		pt_sb_addf(&sb, "%d ", st->ev[i].kind);
		pt_sb_add(&sb, s, n);
		v[i] = pt_sb_detach(&sb, NULL);
	}
	qsort(v, st->n, sizeof(*v), cmp_str);
	return v;
}

static void free_keys(char **v)
{
	size_t i;

	for (i = 0; v[i]; i++)
		x_free(v[i]);
	x_free(v);
}

static size_t count(char **v, int kind, const char *name)
{
	char want[512];
	size_t i, n = 0;

	snprintf(want, sizeof(want), "%d %s", kind, name);
	for (i = 0; v[i]; i++)
		n += !strcmp(v[i], want);
	return n;
}

static void test_same_keys_kineto_and_nsys(void **state)
{
	char dir[256], path[512];
	char *lname = long_name(), *doc = kineto_doc(lname);
	pt_store ks, ns;
	pt_error err;
	char **kv, **nv;
	size_t i;

	assert_int_equal(pt_store_init(&ks), PT_OK);
	assert_int_equal(pt_store_init(&ns), PT_OK);
	pt_error_clear(&err);
	if (pt_kineto_read_mem(doc, strlen(doc), &ks, &err))
		fail_msg("kineto: %s", err.msg);
	tu_tmpdir(dir, sizeof(dir), "pt_keys");
	snprintf(path, sizeof(path), "%s/same.sqlite", dir);
	make_export(path, lname);
	pt_error_clear(&err);
	if (pt_nsys_read_file(path, &ns, NULL, &err))
		fail_msg("nsys: %s", err.msg);

	/* 7 kernels, 3 ranges (a step, two annotations) and "ProfilerStep#x",
	 * an annotation too: the same events, kinds and keys. */
	assert_int_equal(ks.n, 11);
	assert_int_equal(ns.n, ks.n);
	kv = event_keys(&ks);
	nv = event_keys(&ns);
	for (i = 0; i < ks.n; i++)
		if (strcmp(kv[i], nv[i]))
			fail_msg("event %zu: kineto '%.120s', nsys '%.120s'", i, kv[i], nv[i]);
	assert_int_equal(ks.nsteps, 1);
	assert_int_equal(ns.nsteps, 1);
	assert_int_equal(ks.steps[0].number, 7);
	assert_int_equal(ns.steps[0].number, 7);

	/* The keys themselves (docs/design.md "Function key"). */
	assert_int_equal(count(kv, PT_K_KERNEL, GEMM "128_2_1|256_1_1"), 1);
	assert_int_equal(count(kv, PT_K_KERNEL, GEMM "64_2_1|256_1_1"), 1);
	assert_int_equal(count(kv, PT_K_COMM_KERNEL, NCCL), 2);
	assert_int_equal(count(kv, PT_K_KERNEL, BIG "2147483647_65535_65535|1024_1_1"), 1);
	assert_int_equal(count(kv, PT_K_KERNEL, "k0_0_0|0_0_0"), 1);
	assert_int_equal(count(kv, PT_K_STEP, "ProfilerStep#7"), 1);
	assert_int_equal(count(kv, PT_K_ANNOTATION, "train.py: step"), 1);
	assert_int_equal(count(kv, PT_K_ANNOTATION, "<built-in method add of Tensor object at 0x>"), 1);
	assert_int_equal(count(kv, PT_K_ANNOTATION, "ProfilerStep#x"), 1);
	/* The long name: cut to PT_KEY_NAME_MAX bytes, then the shape. */
	for (i = 0; kv[i]; i++) {
		const char *k = strchr(kv[i], ' ') + 1;
		if (strlen(k) > 1000) {
			assert_int_equal(strlen(k), PT_KEY_NAME_MAX + strlen("1_2_3|4_5_6"));
			assert_memory_equal(k, lname, PT_KEY_NAME_MAX);
			assert_string_equal(k + PT_KEY_NAME_MAX, "1_2_3|4_5_6");
			break;
		}
	}
	assert_non_null(kv[i]);

	free_keys(kv);
	free_keys(nv);
	pt_store_free(&ks);
	pt_store_free(&ns);
	tu_rm_rf(dir);
	x_free(doc);
	x_free(lname);
}

/* ---- each rule ------------------------------------------------------------ */

static void test_kernel_key(void **state)
{
	static const int64_t g[3] = { 32, 2, 1 }, b[3] = { 128, 1, 1 };
	static const int64_t vals[] = {
		0, 1, 9, 10, 99, 100, 65535, 2147483647, 4294967296LL, -1, -10, -2147483648LL,
		INT64_MAX, INT64_MIN, 1234567890123456789LL,
	};
	char out[256], want[256];
	size_t n, i, j;

	n = pt_key_kernel(out, "foo(int)", 8, PT_ROLE_NONE, g, b);
	assert_int_equal(n, strlen("foo(int)32_2_1|128_1_1"));
	assert_memory_equal(out, "foo(int)32_2_1|128_1_1", n);
	/* communication: the name alone, whatever the shape */
	n = pt_key_kernel(out, "nccl", 4, PT_ROLE_ALLREDUCE, g, b);
	assert_int_equal(n, 4);
	assert_memory_equal(out, "nccl", 4);
	/* no shape recorded: the name alone */
	assert_int_equal(pt_key_kernel(out, "bar", 3, PT_ROLE_NONE, NULL, b), 3);
	assert_int_equal(pt_key_kernel(out, "bar", 3, PT_ROLE_NONE, g, NULL), 3);
	assert_memory_equal(out, "bar", 3);
	/* an empty name still gets its shape */
	n = pt_key_kernel(out, "", 0, PT_ROLE_NONE, g, b);
	assert_memory_equal(out, "32_2_1|128_1_1", n);
	assert_int_equal(n, 14);
	/* Every value as printf writes it (the Nsight reader's old rule),
	 * within PT_KEY_SHAPE_MAX, and stripped back to the name. */
	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		for (j = 0; j < sizeof(vals) / sizeof(vals[0]); j++) {
			int64_t gg[3] = { vals[i], vals[j], vals[(i + j) % 15] };
			int64_t bb[3] = { vals[j], vals[i], vals[(i * j) % 15] };
			int w = snprintf(want, sizeof(want), "f%" PRId64 "_%" PRId64 "_%" PRId64 "|%"
					 PRId64 "_%" PRId64 "_%" PRId64, gg[0], gg[1], gg[2],
					 bb[0], bb[1], bb[2]);
			n = pt_key_kernel(out, "f", 1, PT_ROLE_NONE, gg, bb);
			assert_int_equal(n, (size_t)w);
			assert_memory_equal(out, want, n);
			assert_true(n - 1 <= PT_KEY_SHAPE_MAX);
			if (gg[0] >= 0 && gg[1] >= 0 && gg[2] >= 0 && bb[0] >= 0 && bb[1] >= 0 &&
			    bb[2] >= 0)
				assert_int_equal(pt_key_strip_shape(out, n), 1);
		}
	/* the longest shape there is */
	{
		int64_t m[3] = { INT64_MIN, INT64_MIN, INT64_MIN };
		n = pt_key_kernel(out, "", 0, PT_ROLE_NONE, m, m);
		assert_int_equal(n, 6 * 20 + 5);
		assert_true(n <= PT_KEY_SHAPE_MAX);
	}
}

static void test_kernel_role(void **state)
{
	pt_commkind_cache ck;
	static const char *const names[] = { NCCL, GEMM, "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t",
					     "void rcclKernel(y)", "aten::mm", "" };
	size_t i;
	int pass;

	memset(&ck, 0, sizeof(ck));
	assert_int_equal(pt_key_kernel_role(&ck, -1, NCCL, strlen(NCCL)), PT_ROLE_ALLREDUCE);
	assert_int_equal(pt_key_kernel_role(&ck, -1, GEMM, strlen(GEMM)), PT_ROLE_NONE);
	/* memoised by id or asked directly (ids out of range): the same
	 * answer as the table, twice (the second from the memo) */
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			int want = pt_commkind_classify(names[i], strlen(names[i]));
			assert_int_equal(pt_key_kernel_role(&ck, (int64_t)i, names[i], strlen(names[i])),
					 want);
			assert_int_equal(pt_key_kernel_role(&ck, (int64_t)UINT32_MAX, names[i],
							    strlen(names[i])), want);
			assert_int_equal(pt_key_kernel_role(&ck, -5, names[i], strlen(names[i])), want);
		}
	/* the memo answers by id: id 1 was GEMM, compute */
	assert_int_equal(pt_key_kernel_role(&ck, 1, NCCL, strlen(NCCL)), PT_ROLE_NONE);
	assert_true(pt_key_kernel_role(&ck, 0, NCCL, strlen(NCCL)) > 0);
	pt_commkind_cache_free(&ck);
}

static void test_step_number(void **state)
{
	static const struct { const char *s; int64_t n; } cases[] = {
		{ "ProfilerStep#0", 0 },
		{ "ProfilerStep#7", 7 },
		{ "ProfilerStep#0012", 12 },
		{ "ProfilerStep#123456789012345678", 123456789012345678LL },  /* 18 digits */
		{ "ProfilerStep#1234567890123456789", -1 },                  /* 19 */
		{ "ProfilerStep#", -1 },
		{ "ProfilerStep#x", -1 },
		{ "ProfilerStep#1 ", -1 },
		{ "ProfilerStep#-1", -1 },
		{ "ProfilerStep#1x", -1 },
		{ "profilerStep#1", -1 },
		{ "ProfilerStep 1", -1 },
		{ "ProfilerStep", -1 },
		{ "", -1 },
		{ "xProfilerStep#1", -1 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (pt_key_step_number(cases[i].s, strlen(cases[i].s)) != cases[i].n)
			fail_msg("'%s': got %lld, want %lld", cases[i].s,
				 (long long)pt_key_step_number(cases[i].s, strlen(cases[i].s)),
				 (long long)cases[i].n);
	/* only n bytes are read */
	assert_int_equal(pt_key_step_number("ProfilerStep#12", 14), 1);
	assert_int_equal(pt_key_step_number("ProfilerStep#12", 13), -1);
	assert_int_equal(pt_key_step_number(NULL, 0), -1);
}

static void test_normalize(void **state)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "threading.py(1032): _bootstrap", "threading.py: _bootstrap" },
		{ "torch/nn/modules/module.py(1501): _call_impl", "torch/nn/modules/module.py: _call_impl" },
		{ "<built-in method add of Tensor object at 0x7f12ab>", "<built-in method add of Tensor object at 0x>" },
		{ "<built-in method __exit__ of torch._C.DisableTorchFunction object at 0x7FAB12CD0>",
		  "<built-in method __exit__ of torch._C.DisableTorchFunction object at 0x>" },
		{ "aten::add", "aten::add" },
		{ "foo(12)", "foo(12)" },         /* no ':' after: kept */
		{ "f(12x): g", "f(12x): g" },     /* not all digits: kept */
		{ "f(): g", "f(): g" },
		{ "at 0x12", "at 0x12" },         /* no " at " before */
		{ "a.py(1): b.py(2): c", "a.py: b.py: c" },
		{ "", "" },
	};
	char out[128];
	size_t i, n;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		n = pt_key_normalize_name(cases[i].in, strlen(cases[i].in), out, sizeof(out));
		assert_string_equal(out, cases[i].out);
		assert_int_equal(n, strlen(cases[i].out));
	}
	/* cap bounds the output and it stays NUL-terminated. */
	n = pt_key_normalize_name("abcdef", 6, out, 4);
	assert_int_equal(n, 3);
	assert_string_equal(out, "abc");
	assert_int_equal(pt_key_normalize_name("abc", 3, out, 0), 0);
	n = pt_key_normalize_name("x at 0x1234", 11, out, 8);
	assert_true(n < 8);
	assert_int_equal(strlen(out), n);
}

static void test_strip_shape(void **state)
{
	static const struct { const char *key; size_t n; } cases[] = {
		{ "void gemm<float>(int)128_2_1|256_1_1", 21 },
		{ "f7_16|128_1_1", 13 },          /* two grid dims: no shape */
		{ "f1_2_3|4_5", 10 },
		{ "f1_2_3/4_5_6", 12 },
		{ "1_2_3|4_5_6", 0 },
		{ "cudaLaunchKernel", 16 },
		{ "a.py: f|b.py: g", 15 },        /* a stack key */
		{ "", 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (pt_key_strip_shape(cases[i].key, strlen(cases[i].key)) != cases[i].n)
			fail_msg("'%s': got %zu, want %zu", cases[i].key,
				 pt_key_strip_shape(cases[i].key, strlen(cases[i].key)), cases[i].n);
	assert_int_equal(pt_key_strip_shape(NULL, 0), 0);
}

/* What a runtime call is by its name: Kineto's and nsys' (version suffix
 * already stripped by the reader) names of one call agree. */
static void test_runtime_kind(void **state)
{
#define RK(s) pt_key_runtime_kind(s, strlen(s))
	(void)state;
	assert_int_equal(RK("cudaStreamSynchronize"), PT_RT_SYNC);
	assert_int_equal(RK("cudaDeviceSynchronize"), PT_RT_SYNC);
	assert_int_equal(RK("hipEventSynchronize"), PT_RT_SYNC);
	assert_int_equal(RK("cudaMemcpy"), PT_RT_SYNC_COPY);
	assert_int_equal(RK("cuMemcpyDtoH_v2"), PT_RT_SYNC_COPY);
	assert_int_equal(RK("cudaLaunchKernel"), PT_RT_LAUNCH);
	assert_int_equal(RK("cuLaunchKernel"), PT_RT_LAUNCH);
	assert_int_equal(RK("cudaGraphLaunch"), PT_RT_LAUNCH);
	assert_int_equal(RK("hipModuleLaunchKernel"), PT_RT_LAUNCH);
	assert_int_equal(RK("cudaMemcpyAsync"), PT_RT_ENQUEUE);
	assert_int_equal(RK("cudaMemsetAsync"), PT_RT_ENQUEUE);
	assert_int_equal(RK("cudaMalloc"), PT_RT_OTHER);
	assert_int_equal(RK("cudaEventQuery"), PT_RT_OTHER);
	assert_int_equal(RK(""), PT_RT_OTHER);
#undef RK
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_keys_kineto_and_nsys),
		cmocka_unit_test(test_kernel_key),
		cmocka_unit_test(test_kernel_role),
		cmocka_unit_test(test_step_number),
		cmocka_unit_test(test_normalize),
		cmocka_unit_test(test_strip_shape),
		cmocka_unit_test(test_runtime_kind),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
