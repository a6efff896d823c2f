/*
 * test_p2p_matrix.c - point-to-point transfers per peer (src/analysis/p2p.c) and
 * their pair matrix across workers (src/diagnose/p2p.c), on the real
 * 4-rank gloo run tests/data/p2p_gloo4: the rows a worker's summary keeps
 * (peer, direction, transfers, bytes), their round trip through the summary
 * file, and the aggregation's rules: one row per (source, destination), its
 * time the smaller of the two ends' (an end that waited for the other does
 * not make the link slow), a destination slow only when both ends say so;
 * and NCCL's p2p as torch 2 records it (no such trace here: the events
 * below are spelt as ProcessGroupNCCL and saveNcclMeta write them).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "analysis/summary.h"
#include "model/store.h"
#include "diagnose/diagnose.h"
#include "model/commkind.h"
#include "report/report.h"
#include "trace/kineto.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *data_dir(void)
{
	const char *d = getenv("PT_DATA");
	return d && *d ? d : "tests/data";
}

static pt_summary *load(int rank)
{
	char path[512];
	pt_error err;
	pt_summary *s;

	snprintf(path, sizeof(path), "%s/p2p_gloo4/rank%d.json.gz", data_dir(), rank);
	s = pt_summary_from_trace(path, NULL, &err);
	assert_non_null(s);
	return s;
}

static pt_p2p_row *row(pt_summary *s, int64_t peer, int dir)
{
	size_t i;

	for (i = 0; i < s->np2p; i++)
		if (s->p2p[i].peer == peer && s->p2p[i].dir == dir)
			return &s->p2p[i];
	return NULL;
}

/* Rank 1's rows: to 2 and from 0 twice a step (ring + all pairs), to and
 * from the others once; every transfer 4 MiB; and the same after a round
 * trip through the summary file. */
static void test_rows_of_a_worker(void **st)
{
	pt_summary *s = load(1), *t;
	pt_sb sb = { 0 };
	pt_error err;
	size_t i;

	(void)st;
	assert_int_equal(s->np2p, 6);
	assert_int_equal(row(s, 2, PT_P2P_SEND)->count, 6);
	assert_int_equal(row(s, 2, PT_P2P_SEND)->bytes, 6 * 4194304);
	assert_int_equal(row(s, 0, PT_P2P_RECV)->count, 6);
	assert_int_equal(row(s, 3, PT_P2P_RECV)->count, 3);
	assert_int_equal(row(s, 3, PT_P2P_RECV)->bytes, 3 * 4194304);
	assert_null(row(s, 1, PT_P2P_SEND));
	for (i = 0; i < s->np2p; i++) {
		assert_int_equal(s->p2p[i].nbytes, s->p2p[i].count);
		assert_true(s->p2p[i].ms_bytes > 0 && s->p2p[i].wall_ms > 0);
		assert_true(s->p2p[i].wall_ms <= s->p2p[i].ms_bytes + 1e-9);
	}
	pt_summary_write(s, &sb);
	t = pt_summary_read_mem(sb.buf, sb.len, &err);
	assert_non_null(t);
	assert_int_equal(t->np2p, s->np2p);
	for (i = 0; i < s->np2p; i++) {
		assert_int_equal(t->p2p[i].peer, s->p2p[i].peer);
		assert_int_equal(t->p2p[i].dir, s->p2p[i].dir);
		assert_int_equal(t->p2p[i].count, s->p2p[i].count);
		assert_int_equal(t->p2p[i].bytes, s->p2p[i].bytes);
		assert_true(fabs(t->p2p[i].ms_bytes - s->p2p[i].ms_bytes) < 1e-6);
		assert_true(fabs(t->p2p[i].wall_ms - s->p2p[i].wall_ms) < 1e-6);
	}
	pt_summary_free(t);
	pt_sb_free(&sb);
	pt_summary_free(s);
}

/* report.json's "p2p" row of (src, dst). */
static const pt_rv *pair(const pt_report *r, int64_t src, int64_t dst)
{
	const pt_rv *a = pt_rv_get(pt_report_root_c(r), "p2p"), *o;

	for (o = a ? a->child : NULL; o; o = o->next)
		if (pt_rv_get(o, "source")->i == src && pt_rv_get(o, "destination")->i == dst)
			return o;
	return NULL;
}

static size_t p2p_findings(const pt_report *r, const char **worker)
{
	size_t n, i, k = 0;
	const pt_finding *f = pt_report_findings(r, &n);

	for (i = 0; i < n; i++)
		if (f[i].cause == PT_CAUSE_SLOW_P2P) {
			*worker = f[i].workers[0];
			k++;
		}
	return k;
}

/* The pair's time is the smaller end's: a receiver that waited 1 s for
 * rank 1 (its receive from 1 lasts 1000 ms) does not make 1->2 slow; when
 * the sender's end is as slow, destination 2 is named. */
static void test_pair_time_is_the_smaller_end(void **st)
{
	pt_summary *s[4];
	pt_report *r;
	pt_error err;
	const pt_rv *p;
	const char *who = NULL;
	double send_ms;
	int i;

	(void)st;
	for (i = 0; i < 4; i++)
		s[i] = load(i);
	send_ms = row(s[1], 2, PT_P2P_SEND)->ms_bytes;
	row(s[2], 1, PT_P2P_RECV)->ms_bytes = row(s[2], 1, PT_P2P_RECV)->wall_ms = 1000;
	r = pt_diagnose(s, 4, NULL, &err);
	assert_non_null(r);
	p = pair(r, 1, 2);
	assert_non_null(p);
	assert_string_equal(pt_rv_get(p, "time from")->str, "send");
	assert_true(fabs(pt_rv_get(p, "time (ms)")->num - send_ms) < 1e-9);
	assert_int_equal(pt_rv_get(p, "count")->i, 6);
	assert_int_equal(pt_rv_get(p, "bytes")->i, 6 * 4194304);
	assert_int_equal(pt_rv_get(p, "slow")->i, 0);
	assert_int_equal(p2p_findings(r, &who), 0);
	pt_report_free(r);

	/* both ends of every transfer into rank 2 ten times slower */
	for (i = 0; i < 4; i++) {
		pt_p2p_row *x = i == 2 ? NULL : row(s[i], 2, PT_P2P_SEND);
		if (x)
			x->ms_bytes *= 10;
	}
	for (i = 0; i < 4; i++) {
		pt_p2p_row *x = i == 2 ? NULL : row(s[2], i, PT_P2P_RECV);
		if (x)
			x->ms_bytes = row(s[i], 2, PT_P2P_SEND)->ms_bytes;
	}
	r = pt_diagnose(s, 4, NULL, &err);
	assert_non_null(r);
	assert_int_equal(p2p_findings(r, &who), 1);
	assert_string_equal(who, "rank2.json.gz");
	assert_int_equal(pt_rv_get(pair(r, 1, 2), "slow")->i, 1);
	assert_int_equal(pt_rv_get(pair(r, 2, 1), "slow")->i, 0);
	pt_report_free(r);
	for (i = 0; i < 4; i++)
		pt_summary_free(s[i]);
}

/* NCCL p2p as torch 2 writes it: the "nccl:send 0->1" annotation around
 * record_param_comms ("Collective name" "send", "Dst Rank", sizes) around
 * the launch of a ncclDevKernel_SendRecv kernel (correlation 11); a
 * receive with the title only (correlation 12: no bytes); a SendRecv kernel
 * launched outside any op with a peer (a grouped all-to-all: correlation
 * 13), which no row takes. */
static void test_nccl_kernels_by_correlation(void **st)
{
	static const char trace[] = "{\"traceEvents\": ["
		"{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,\"ts\":1000,\"dur\":5000},"
		"{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"nccl:send 0->1\",\"pid\":1,\"tid\":1,\"ts\":1100,\"dur\":60},"
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"record_param_comms\",\"pid\":1,\"tid\":1,\"ts\":1105,\"dur\":50,"
		"\"args\":{\"Collective name\":\"send\",\"dtype\":\"Float\",\"In msg nelems\":1048576,"
		"\"Out msg nelems\":1048576,\"Group size\":2,\"Rank\":1,\"Dst Rank\":1}},"
		"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":1110,\"dur\":10,"
		"\"args\":{\"correlation\":11}},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)\","
		"\"pid\":0,\"tid\":7,\"ts\":1200,\"dur\":500,\"args\":{\"correlation\":11,\"stream\":7}},"
		"{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"nccl:recv 0<-1\",\"pid\":1,\"tid\":1,\"ts\":2000,\"dur\":40},"
		"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":2010,\"dur\":10,"
		"\"args\":{\"correlation\":12}},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)\","
		"\"pid\":0,\"tid\":7,\"ts\":2100,\"dur\":250,\"args\":{\"correlation\":12,\"stream\":7}},"
		"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":3010,\"dur\":10,"
		"\"args\":{\"correlation\":13}},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)\","
		"\"pid\":0,\"tid\":7,\"ts\":3100,\"dur\":900,\"args\":{\"correlation\":13,\"stream\":7}}"
		"]}";
	pt_store store;
	pt_error err;
	pt_summary *s;
	pt_p2p_row *r;

	(void)st;
	assert_int_equal(pt_store_init(&store), PT_OK);
	assert_int_equal(pt_kineto_read_mem(trace, sizeof(trace) - 1, &store, &err), PT_OK);
	s = pt_summary_build(&store, "nccl_p2p.json", NULL, &err);
	assert_non_null(s);
	assert_int_equal(s->np2p, 2);
	r = row(s, 1, PT_P2P_SEND);
	assert_non_null(r);
	assert_int_equal(r->count, 1);
	assert_int_equal(r->bytes, 4194304);
	assert_int_equal(r->nbytes, 1);
	assert_true(fabs(r->ms_bytes - 0.5) < 1e-12 && fabs(r->wall_ms - 0.5) < 1e-12);
	r = row(s, 1, PT_P2P_RECV);
	assert_non_null(r);
	assert_int_equal(r->count, 1);
	assert_int_equal(r->bytes, 0);
	assert_int_equal(r->nbytes, 0);
	assert_true(fabs(r->ms - 0.25) < 1e-12 && r->ms_bytes == 0);
	pt_summary_free(s);
	pt_store_free(&store);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_of_a_worker),
		cmocka_unit_test(test_pair_time_is_the_smaller_end),
		cmocka_unit_test(test_nccl_kernels_by_correlation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
