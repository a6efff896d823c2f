/*
 * test_hwjoin.c - hardware samples joined to what ran (src/analysis/hwjoin.c)
 * and the diagnosis built on it (src/diagnose/comm.c, compute.c), with exact
 * numbers: 8 workers on one node run 4 ring AllReduce kernels each; six are
 * normal (1 ms, NVLink 70/80% alternating), rank 6 waits for a late peer
 * (2 ms: 1 ms idle, then 70/80%), rank 7 has a slow link (2 ms, steady
 * 35/40%).  Both long workers have the same mean throughput (37.5%); only
 * std and peak tell them apart, and the findings must say which is which.
 * Rank 5's GPU runs its compute kernels at a throttled clock (1200 MHz,
 * SW thermal slowdown).  Also: the summary JSON round trip of the new
 * fields, host filtering, and the message-size fallback without samples.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "analysis/hwjoin.h"
#include "analysis/summary.h"
#include "diagnose/diagnose.h"
#include "model/samples.h"
#include "report/report.h"
#include "util/json.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define T0 1700000000000000000LL
#define US 1000LL
#define MS 1000000LL
#define NW 8
#define NK 4
#define PERIOD (4 * MS)
/* Link capacity 100 GiB/s: 1% is exactly 2^30 B/s, so percentages are exact. */
#define GIB 1073741824.0
#define CAP (100 * GIB)

static const char *const AR =
	"ncclDevKernel_AllReduce_Sum_f16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";

static int64_t comm_start(int k) { return T0 + k * PERIOD + 1 * MS; }
static int64_t comm_dur(int rank) { return rank >= 6 ? 2 * MS : 1 * MS; }
static int64_t gemm_dur(int rank) { return rank == 5 ? 600 * US : 400 * US; }

static void add(pt_store *st, int kind, uint32_t lane, int64_t ts, int64_t dur, const char *name,
		uint64_t bytes, uint16_t group)
{
	pt_event e;

	memset(&e, 0, sizeof(e));
	e.kind = (uint8_t)kind;
	e.ts = ts;
	e.dur = dur;
	e.lane = lane;
	e.bytes = bytes;
	e.group = group;
	e.flags = st->lanes[lane].gpu ? PT_EV_GPU : 0;
	e.name = pt_strtab_intern(st->strs, name, strlen(name));
	assert_int_equal(pt_store_add(st, &e), PT_OK);
}

/* One worker: a 16 ms step, 4 x (gemm on stream 7, AllReduce on stream 20)
 * on GPU `rank`. */
static void make_store(pt_store *st, int rank, int with_bytes)
{
	uint32_t cpu, g7, g20;
	int k;

	assert_int_equal(pt_store_init(st), PT_OK);
	cpu = pt_store_lane(st, 4000 + rank, 4000 + rank, 0);
	g7 = pt_store_lane(st, rank, 7, 1);
	g20 = pt_store_lane(st, rank, 20, 1);
	add(st, PT_K_STEP, cpu, T0, NK * PERIOD, "ProfilerStep#3", 0, 0);
	assert_int_equal(pt_store_add_step(st, 3, T0, NK * PERIOD), PT_OK);
	for (k = 0; k < NK; k++) {
		add(st, PT_K_KERNEL, g7, T0 + k * PERIOD, gemm_dur(rank), "gemm", 0, 0);
		/* 64 MiB per call, group of 8 (for the message-size fallback). */
		add(st, PT_K_COMM_KERNEL, g20, comm_start(k), comm_dur(rank), AR,
		    with_bytes ? 64ull << 20 : 0, with_bytes ? 8 : 0);
	}
}

/* NVLink TX (% of capacity) of GPU r at the j-th sample inside comm kernel. */
static double link_pct(int r, int j, int rx)
{
	if (r == 7)
		return j % 2 ? 40 : 35;              /* slow link: steady, low */
	if (r == 6 && j < 10)
		return 0;                            /* waiting for the late peer */
	if (rx)
		return (j % 2) ? 78 : 72;
	return (j % 2) ? 80 : 70;
}

static int in_comm(int r, int64_t t, int *j)
{
	int k;

	for (k = 0; k < NK; k++)
		if (t >= comm_start(k) && t < comm_start(k) + comm_dur(r)) {
			*j = (int)((t - comm_start(k)) / (100 * US));
			return 1;
		}
	return 0;
}

static int in_gemm(int r, int64_t t)
{
	int k;

	for (k = 0; k < NK; k++)
		if (t >= T0 + k * PERIOD && t < T0 + k * PERIOD + gemm_dur(r))
			return 1;
	return 0;
}

/* The node's samples: every 100 us from T0 + 50 us over the step, GPUs 0-7. */
static void make_samples(pt_samples *h, const char *host)
{
	int r;

	assert_int_equal(pt_samples_init(h), PT_OK);
	assert_int_equal(pt_samples_set_str(&h->host, host), PT_OK);
	assert_int_equal(pt_samples_set_str(&h->source, "nvml+proc"), PT_OK);
	h->interval_ns = 100 * US;
	for (r = 0; r < NW; r++) {
		pt_series *tx = pt_samples_series(h, "nvlink_tx", r, NULL, "B/s", CAP);
		pt_series *rx = pt_samples_series(h, "nvlink_rx", r, NULL, "B/s", CAP);
		pt_series *pc = pt_samples_series(h, "pcie_tx", r, NULL, "B/s", 0);
		pt_series *sa = pt_samples_series(h, "sm_active", r, NULL, "%", 100);
		pt_series *ck = pt_samples_series(h, "sm_clock", r, NULL, "MHz", 0);
		pt_series *th = pt_samples_series(h, "throttle", r, NULL, "", 0);
		int64_t t;

		assert_non_null(tx);
		for (t = T0 + 50 * US; t < T0 + NK * PERIOD; t += 100 * US) {
			int j, c = in_comm(r, t, &j), g = in_gemm(r, t);

			tx = (pt_series *)pt_samples_find(h, "nvlink_tx", r, NULL);
			rx = (pt_series *)pt_samples_find(h, "nvlink_rx", r, NULL);
			pc = (pt_series *)pt_samples_find(h, "pcie_tx", r, NULL);
			sa = (pt_series *)pt_samples_find(h, "sm_active", r, NULL);
			ck = (pt_series *)pt_samples_find(h, "sm_clock", r, NULL);
			th = (pt_series *)pt_samples_find(h, "throttle", r, NULL);
			assert_int_equal(pt_samples_add(tx, t, c ? link_pct(r, j, 0) * GIB : 0), PT_OK);
			assert_int_equal(pt_samples_add(rx, t, c ? link_pct(r, j, 1) * GIB : 0), PT_OK);
			/* PCIe: 100 MiB/s of a 200 MiB/s peak while the ring runs, 0 else
			 * (capacity unknown: % of the observed peak). */
			assert_int_equal(pt_samples_add(pc, t, c ? 100.0 * 1048576 : 0), PT_OK);
			if (t == T0 + 50 * US)
				pt_samples_add(pc, t, 200.0 * 1048576); /* the peak, outside kernels */
			assert_int_equal(pt_samples_add(sa, t, g ? 80 : 0), PT_OK);
			assert_int_equal(pt_samples_add(ck, t, r == 5 && g ? 1200 : 1980), PT_OK);
			/* NVML reasons: 0x1 idle, 0x20 SW thermal slowdown. */
			assert_int_equal(pt_samples_add(th, t, g ? (r == 5 ? 0x20 : 0) : 0x1), PT_OK);
		}
	}
}

static pt_summary *summarise(int rank, const pt_samples *h, int with_bytes)
{
	pt_summary_options o;
	const pt_samples *list[1] = { h };
	pt_store st;
	pt_error err;
	pt_summary *s;
	char path[64];

	make_store(&st, rank, with_bytes);
	pt_summary_options_default(&o);
	if (h) {
		o.hw = list;
		o.nhw = 1;
	}
	snprintf(path, sizeof(path), "/run/node1_%d_%d.json", rank, 4000 + rank);
	pt_error_clear(&err);
	s = pt_summary_build(&st, path, &o, &err);
	if (!s)
		fail_msg("%s", err.msg);
	pt_store_free(&st);
	return s;
}

static const pt_pattern *find_pat(const pt_summary *s, const char *key)
{
	size_t i;

	for (i = 0; i < s->npatterns; i++)
		if (!strcmp(s->patterns[i].key, key))
			return &s->patterns[i];
	return NULL;
}

static const pt_hw_link *find_link(const pt_pattern *p, const char *group)
{
	uint32_t i;

	for (i = 0; p && i < p->nhw; i++)
		if (!strcmp(p->hw[i].group, group))
			return &p->hw[i];
	return NULL;
}

static void test_window_helper(void **state)
{
	pt_samples h;
	pt_series *s;
	double m, sd, mx;

	assert_int_equal(pt_samples_init(&h), PT_OK);
	s = pt_samples_series(&h, "nvlink_tx", 0, NULL, "B/s", CAP);
	pt_samples_add(s, 10, 70 * GIB);
	pt_samples_add(s, 20, 80 * GIB);
	pt_samples_add(s, 30, NAN);
	pt_samples_add(s, 40, 0);
	assert_int_equal(pt_hwjoin_window(s, 10, 41, CAP, &m, &sd, &mx), 3);
	assert_true(m == 50);
	assert_true(mx == 80);
	assert_true(sd == sqrt((400.0 + 900 + 2500) / 3));
	assert_int_equal(pt_hwjoin_window(s, 10, 21, 0, &m, &sd, &mx), 2);
	assert_true(m == 75 * GIB && sd == 5 * GIB && mx == 80 * GIB);
	assert_int_equal(pt_hwjoin_window(s, 11, 19, CAP, &m, &sd, &mx), 0);
	assert_true(m == 0 && sd == 0 && mx == 0);
	assert_int_equal(pt_hwjoin_window(NULL, 0, 100, CAP, &m, &sd, &mx), 0);
	pt_samples_free(&h);
}

static void test_algo(void **state)
{
	static const struct { const char *key, *algo; } t[] = {
		{ "ncclDevKernel_AllReduce_Sum_f16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
		  "ring" },
		{ "ncclKernel_AllReduce_TREE_LL_Sum_float(ncclDevComm*)", "tree" },
		{ "ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", "ring" },
		{ "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)", "sendrecv" },
		{ "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*)", "ring" },
		{ "ncclDevKernel_AllReduce_Sum_bf16_NVLS_SIMPLE(ncclDevComm*)", "nvls" },
		{ "ncclDevKernel_AllReduce_Sum_f32_COLLNET_DIRECT_LL(x)", "collnet" },
		{ "ncclDevKernel_ReduceScatter_Sum_f32_PAT_SIMPLE(x)", "pat" },
		{ "ncclDevKernel_Broadcast(x)", "broadcast" },
		{ "ncclKernel_Send(x)", "sendrecv" },
		{ "ncclDevKernel_Generic(x)", "nccl" },
	};
	char buf[32];
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strcmp(pt_hwjoin_algo(t[i].key, buf, sizeof(buf)), t[i].algo))
			fail_msg("'%s' -> '%s', want '%s'", t[i].key, buf, t[i].algo);
}

static void test_join_exact(void **state)
{
	pt_samples h;
	pt_summary *s[NW];
	const pt_pattern *p;
	const pt_hw_link *l;
	int r;

	make_samples(&h, "node1");
	for (r = 0; r < NW; r++)
		s[r] = summarise(r, &h, 0);
	for (r = 0; r < NW; r++) {
		p = find_pat(s[r], AR);
		assert_non_null(p);
		assert_string_equal(s[r]->hw_source, "nvml+proc");
		/* nvlink send + recv, pcie send (no pcie_rx series). */
		assert_int_equal(p->nhw, 3);
		l = find_link(p, "nvlink ring send");
		assert_non_null(l);
		assert_int_equal(l->kernels, 4);
		if (r < 6) {
			assert_int_equal(l->samples, 40);
			assert_true(l->avg_pct == 75);
			assert_true(l->std_pct == 5);
			assert_true(l->peak_pct == 80);
			l = find_link(p, "nvlink ring recv");
			assert_true(l->avg_pct == 75 && l->std_pct == 3 && l->peak_pct == 78);
		} else if (r == 6) {
			/* Waiting: 10 samples of 0, then 70/80: the same mean as the slow
			 * link, a 15x larger std, the normal peak. */
			assert_int_equal(l->samples, 80);
			assert_true(l->avg_pct == 37.5);
			assert_true(l->std_pct == sqrt(1418.75));
			assert_true(l->peak_pct == 80);
		} else {
			assert_int_equal(l->samples, 80);
			assert_true(l->avg_pct == 37.5);
			assert_true(l->std_pct == 2.5);
			assert_true(l->peak_pct == 40);
		}
		/* PCIe: 100 of an observed 200 MiB/s peak = 50%, steady. */
		l = find_link(p, "pcie ring send");
		assert_non_null(l);
		assert_true(l->avg_pct == 50 && l->std_pct == 0 && l->peak_pct == 50);
		assert_null(find_link(p, "pcie ring recv"));
		/* Compute kernels: 4 per kernel (6 on rank 5's slower GPU). */
		assert_int_equal(s[r]->hw_gpu.samples, r == 5 ? 24 : 16);
		assert_true(s[r]->hw_gpu.sm_active_pct == 80);
		assert_true(s[r]->hw_gpu.sm_clock_mhz == (r == 5 ? 1200 : 1980));
		assert_true(s[r]->hw_gpu.sm_clock_max_mhz == 1980);
		assert_true(s[r]->hw_gpu.throttle_frac == (r == 5 ? 1.0 : 0.0));
		assert_int_equal(s[r]->hw_gpu.throttle_reasons, r == 5 ? 0x20 : 0);
		assert_true(s[r]->hw_gpu.gpu_util_pct == -1);
		assert_true(s[r]->hw_gpu.temperature_c == -1);
	}
	/* The gemm pattern gets no link groups. */
	assert_int_equal(find_pat(s[0], "gemm")->nhw, 0);
	for (r = 0; r < NW; r++)
		pt_summary_free(s[r]);
	pt_samples_free(&h);
}

static void test_host_filter(void **state)
{
	pt_samples h;
	pt_summary *s;

	/* node2's file does not apply to node1's worker. */
	make_samples(&h, "node2");
	s = summarise(0, &h, 0);
	assert_null(s->hw_source);
	assert_int_equal(find_pat(s, AR)->nhw, 0);
	assert_int_equal(s->hw_gpu.samples, 0);
	pt_summary_free(s);
	pt_samples_free(&h);
	/* A file without a host applies to every worker. */
	make_samples(&h, "");
	s = summarise(0, &h, 0);
	assert_string_equal(s->hw_source, "nvml+proc");
	assert_int_equal(find_pat(s, AR)->nhw, 3);
	pt_summary_free(s);
	pt_samples_free(&h);
}

static void test_summary_round_trip(void **state)
{
	pt_samples h;
	pt_summary *a, *b;
	pt_sb sb = {0};
	pt_error err;
	const pt_pattern *pa, *pb;
	uint32_t i;

	make_samples(&h, "node1");
	a = summarise(6, &h, 0);
	pt_summary_write(a, &sb);
	assert_false(sb.oom);
	assert_non_null(strstr(sb.buf, "\"hw\":[{\"group\":\"nvlink ring send\",\"avg_tput_pct\":37.5,"));
	assert_non_null(strstr(sb.buf, "\"hw_source\":\"nvml+proc\",\"hw_gpu\":{\"samples\":16,"
			       "\"sm_active_pct\":80.0,\"sm_clock_mhz\":1980.0,"
			       "\"sm_clock_max_mhz\":1980.0,\"throttle_frac\":0.0,"
			       "\"throttle_reasons\":0}"));
	pt_error_clear(&err);
	b = pt_summary_read_mem(sb.buf, sb.len, &err);
	if (!b)
		fail_msg("%s", err.msg);
	assert_string_equal(b->hw_source, "nvml+proc");
	assert_int_equal(b->hw_gpu.samples, 16);
	assert_true(b->hw_gpu.sm_clock_mhz == 1980);
	assert_true(b->hw_gpu.gpu_util_pct == -1);
	assert_true(b->hw_gpu.power_w == -1);
	pa = find_pat(a, AR);
	pb = find_pat(b, AR);
	assert_int_equal(pb->nhw, pa->nhw);
	for (i = 0; i < pa->nhw; i++) {
		assert_string_equal(pb->hw[i].group, pa->hw[i].group);
		assert_true(pb->hw[i].avg_pct == pa->hw[i].avg_pct);
		assert_true(pb->hw[i].std_pct == pa->hw[i].std_pct);
		assert_true(pb->hw[i].peak_pct == pa->hw[i].peak_pct);
		assert_int_equal(pb->hw[i].samples, pa->hw[i].samples);
		assert_int_equal(pb->hw[i].kernels, pa->hw[i].kernels);
	}
	pt_summary_free(b);
	/* The agent's timelines ride along as a whole "perftracker-hw" object. */
	a->hw_series = x_calloc(1, sizeof(*a->hw_series));
	assert_int_equal(pt_samples_init(a->hw_series), PT_OK);
	pt_samples_set_str(&a->hw_series->host, "node1");
	pt_samples_add(pt_samples_series(a->hw_series, "sm_clock", 6, NULL, "MHz", 0), T0 + 5,
		       1980);
	pt_sb_reset(&sb);
	pt_summary_write(a, &sb);
	assert_null(strchr(sb.buf, '\n'));
	assert_non_null(strstr(sb.buf, "\"hw_series\":{\"format\":\"perftracker-hw\""));
	pt_error_clear(&err);
	b = pt_summary_read_mem(sb.buf, sb.len, &err);
	if (!b)
		fail_msg("%s", err.msg);
	assert_non_null(b->hw_series);
	assert_string_equal(b->hw_series->host, "node1");
	assert_int_equal(b->hw_series->n, 1);
	assert_int_equal(b->hw_series->s[0].t_ns[0], T0 + 5);
	assert_true(b->hw_series->s[0].v[0] == 1980);
	pt_summary_free(b);
	/* Without samples nothing new is written: version-1 readers see the old file. */
	pt_sb_reset(&sb);
	b = summarise(0, NULL, 0);
	pt_summary_write(b, &sb);
	assert_null(strstr(sb.buf, "\"hw"));
	pt_summary_free(b);
	/* Bad types are errors naming the member. */
	{
		static const char *const bad[] = {
			"\"hw\":{}", "\"hw\":[{\"group\":1}]", "\"hw\":[{\"group\":\"x\","
			"\"avg_tput_pct\":\"a\"}]", "\"hw\":[1]",
			/* top level (k >= 4) */
			"\"hw_series\":[]", "\"hw_series\":{\"format\":\"x\"}",
			"\"hw_gpu\":[]", "\"hw_gpu\":{\"sm_clock_mhz\":\"fast\"}",
		};
		size_t k;

		for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
			char buf[1024];
			pt_summary *c;

			snprintf(buf, sizeof(buf),
				 "{\"format\":\"perftracker-summary\",\"version\":1,\"worker\":\"w\","
				 "\"file\":\"w\",\"host\":\"\",\"rank\":0,\"pid\":1,\"world_size\":1,"
				 "\"backend\":\"\",\"device\":\"\",\"warning\":null,\"nwarnings\":0,"
				 "\"truncated\":false,\"window\":{\"start_us\":0,\"ms\":1,"
				 "\"from_steps\":false},\"steps\":[],\"gpu_util\":0,\"class_ms\":"
				 "{\"compute\":0,\"communication\":0,\"memory\":0,\"runtime\":0,"
				 "\"python\":0,\"idle\":1},\"nevents\":1,%s%s\"patterns\":[{\"key\":\"k\","
				 "\"class\":\"communication\",\"kind\":\"comm_kernel\",\"count\":1,"
				 "\"total_ms\":1,\"median_ms\":1,\"p10_ms\":1,\"p90_ms\":1,\"mad_ms\":0,"
				 "\"bottleneck\":1,\"exec_ratio\":1%s%s}]}", k >= 4 ? bad[k] : "",
				 k >= 4 ? "," : "", k >= 4 ? "" : ",", k >= 4 ? "" : bad[k]);
			pt_error_clear(&err);
			c = pt_summary_read_mem(buf, strlen(buf), &err);
			if (c)
				fail_msg("accepted %s", bad[k]);
			assert_int_equal(err.code, PT_EFORMAT);
			assert_non_null(strstr(err.msg, "hw"));
		}
	}
	pt_sb_free(&sb);
	pt_summary_free(a);
	pt_samples_free(&h);
}

/* ---- the diagnosis ------------------------------------------------------------ */

static pt_json *diagnose_json(pt_summary **s, size_t n, pt_report **rep)
{
	pt_diag_options o;
	pt_error err;
	pt_sb sb = {0};
	pt_json *j;

	pt_diag_options_default(&o);
	pt_error_clear(&err);
	*rep = pt_diagnose(s, n, &o, &err);
	if (!*rep)
		fail_msg("%s", err.msg);
	pt_report_json(pt_report_root_c(*rep), 0, &sb);
	j = pt_json_parse(sb.buf, sb.len, &err);
	if (!j)
		fail_msg("report json: %s", err.msg);
	pt_sb_free(&sb);
	return j;
}

static const pt_json *path(const pt_json *j, ...)
{
	va_list ap;
	const char *k;

	va_start(ap, j);
	while (j && (k = va_arg(ap, const char *)))
		j = pt_json_get(j, k);
	va_end(ap);
	return j;
}

/* The finding about worker w in category cat, or NULL. */
/* The finding of category cat that names worker w: its only worker, or
 * one of a cause grouped across workers (docs/diagnose.md "One finding per
 * cause"). */
static const pt_json *finding(const pt_json *root, const char *cat, const char *w)
{
	const pt_json *f = pt_json_get(root, "findings"), *x, *y;

	for (x = f ? f->child : NULL; x; x = x->next) {
		const pt_json *ws = pt_json_get(x, "workers");

		if (strcmp(pt_json_strv(x, "category", ""), cat) || !ws)
			continue;
		for (y = ws->child; y; y = y->next)
			if (!strcmp(y->str, w))
				return x;
	}
	return NULL;
}

static void test_diagnose_link_vs_wait(void **state)
{
	pt_samples h;
	pt_summary *s[NW];
	pt_report *rep;
	pt_json *j;
	const pt_json *g, *f, *ab;
	const char *ex;
	int r;

	make_samples(&h, "node1");
	for (r = 0; r < NW; r++)
		s[r] = summarise(r, &h, 0);
	j = diagnose_json(s, NW, &rep);
	/* The seed's groups: "<link> <algorithm> <send|recv>". */
	g = path(j, "Communication", "nvlink ring send", AR, NULL);
	assert_non_null(g);
	assert_non_null(path(j, "Communication", "nvlink ring recv", AR, NULL));
	assert_non_null(path(j, "Communication", "pcie ring send", AR, NULL));
	assert_null(path(j, "Communication", "ring allreduce", NULL));
	f = path(g, "example_of_normal_worker", "features", NULL);
	assert_non_null(f);
	assert_true(pt_json_num(f, "avg throughput (%)", -1) == 75);
	assert_true(pt_json_num(f, "throughput std (%)", -1) == 5);
	ex = pt_json_strv(path(g, "example_of_normal_worker", NULL), "worker", "");
	assert_non_null(strstr(ex, "node1_"));
	ab = pt_json_get(g, "abnormal_workers");
	assert_non_null(ab);
	assert_int_equal(ab->len, 2);
	/* Ordered by impact: equal durations, so by name: rank 6 then 7. */
	assert_string_equal(pt_json_strv(pt_json_at(ab, 0), "worker", ""), "node1_6_4006.json");
	assert_true(pt_json_num(path(pt_json_at(ab, 0), "features", NULL), "avg throughput (%)",
				-1) == 37.5);
	assert_true(pt_json_num(path(pt_json_at(ab, 0), "features", NULL), "throughput std (%)",
				-1) == sqrt(1418.75));
	assert_string_equal(pt_json_strv(pt_json_at(ab, 1), "worker", ""), "node1_7_4007.json");
	assert_true(pt_json_num(path(pt_json_at(ab, 1), "features", NULL), "throughput std (%)",
				-1) == 2.5);

	/* The findings tell the two apart. */
	f = finding(j, "Communication", "node1_7_4007.json");
	assert_non_null(f);
	assert_string_equal(pt_json_strv(f, "metric", ""), "avg throughput (%)");
	assert_true(pt_json_num(f, "value", -1) == 37.5);
	assert_true(pt_json_num(f, "others", -1) == 75);
	assert_non_null(strstr(pt_json_strv(f, "explanation", ""), "slow link"));
	assert_non_null(strstr(pt_json_strv(f, "explanation", ""), "nvlink"));
	assert_null(strstr(pt_json_strv(f, "explanation", ""), "waits"));
	f = finding(j, "Communication", "node1_6_4006.json");
	assert_non_null(f);
	/* Send and recv fall equally (37.5 of 75): the first group in name
	 * order, "nvlink ring recv", is the one named (recv 72/78 -> std 3). */
	assert_string_equal(pt_json_strv(f, "metric", ""), "throughput std (%)");
	assert_true(pt_json_num(f, "value", -1) == sqrt(1410.75));
	assert_true(pt_json_num(f, "others", -1) == 3);
	assert_non_null(strstr(pt_json_strv(f, "explanation", ""), "(nvlink ring recv)"));
	assert_non_null(strstr(pt_json_strv(f, "explanation", ""), "waits for a late peer"));
	assert_null(strstr(pt_json_strv(f, "explanation", ""), "slow link"));
	/* No normal worker is named. */
	for (r = 0; r < 6; r++) {
		char id[64];

		snprintf(id, sizeof(id), "node1_%d_%d.json", r, 4000 + r);
		assert_null(finding(j, "Communication", id));
	}
	/* GPU Compute: rank 5's slower kernels come with their cause. */
	f = finding(j, "GPU Compute", "node1_5_4005.json");
	assert_non_null(f);
	assert_non_null(strstr(pt_json_strv(f, "explanation", ""), "SM clock 1200 MHz"));
	assert_non_null(strstr(pt_json_strv(f, "explanation", ""), "1980 MHz"));
	assert_non_null(strstr(pt_json_strv(f, "explanation", ""), "SW thermal slowdown"));
	pt_json_free(j);
	pt_report_free(rep);
	for (r = 0; r < NW; r++)
		pt_summary_free(s[r]);
	pt_samples_free(&h);
}

/* Without hardware samples but with message sizes: the old groups, bus
 * bandwidth from the nccl-tests formula, and a note saying so. */
static void test_diagnose_busbw_fallback(void **state)
{
	pt_summary *s[NW];
	pt_report *rep;
	pt_json *j;
	const pt_json *g, *f;
	int r;

	for (r = 0; r < NW; r++)
		s[r] = summarise(r, NULL, 1);
	j = diagnose_json(s, NW, &rep);
	assert_null(path(j, "Communication", "nvlink ring send", NULL));
	g = path(j, "Communication", "ring allreduce", AR, NULL);
	assert_non_null(g);
	f = path(g, "example_of_normal_worker", "features", NULL);
	/* 64 MiB in 1 ms = 67.108864 GB/s algbw; x 2(8-1)/8 = 117.440512 GB/s. */
	assert_true(fabs(pt_json_num(f, "bus bandwidth (GB/s)", -1) - 117.440512) < 1e-9);
	assert_null(pt_json_get(f, "avg throughput (%)"));
	assert_string_equal(pt_json_strv(f, "bus bandwidth note", ""),
			    "computed from message sizes (no hardware samples)");
	f = finding(j, "Communication", "node1_7_4007.json");
	assert_non_null(f);
	pt_json_free(j);
	pt_report_free(rep);
	for (r = 0; r < NW; r++)
		pt_summary_free(s[r]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_helper),
		cmocka_unit_test(test_algo),
		cmocka_unit_test(test_join_exact),
		cmocka_unit_test(test_host_filter),
		cmocka_unit_test(test_summary_round_trip),
		cmocka_unit_test(test_diagnose_link_vs_wait),
		cmocka_unit_test(test_diagnose_busbw_fallback),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
