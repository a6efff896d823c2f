/*
 * test_commkind.c - the communication-kernel table (src/model/commkind.c):
 * real kernel names from public sources (DeepEP's csrc/kernels, NVSHMEM,
 * MSCCL, vLLM/SGLang custom all-reduce, TensorRT-LLM, NCCL as Kineto
 * writes them) get the role they play, compute kernels stay compute, user
 * rules come first, the rules file is all or nothing, and the Kineto
 * reader and the summary use the same table.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "model/commkind.h"
#include "analysis/summary.h"
#include "trace/kineto.h"
#include "trace/nsys.h"
#include "diagnose/diagnose.h"
#include "testutil.h"

#include <sqlite3.h>

#include <math.h>
#include <string.h>
#include <unistd.h>

static int role(const char *name)
{
	return pt_commkind_classify(name, strlen(name));
}

static void test_deepep_kernels(void **st)
{
	(void)st;
	/* intranode (NVLink) */
	assert_int_equal(role("void deep_ep::intranode::notify_dispatch<8>(int const*, int*, int, "
			      "int const*, int*, int, bool const*, int, int, int, int*, int*, "
			      "int, void**, int**, int)"), PT_ROLE_DISPATCH);
	assert_int_equal(role("void deep_ep::intranode::dispatch<8, 768, 6144>(int4*, float*, "
			      "int*, long*, float*, int*, int*, int4 const*, float const*, long "
			      "const*, float const*, bool const*, int const*, int, int, int, int, "
			      "int, int, int, void**, int, int, int)"), PT_ROLE_DISPATCH);
	assert_int_equal(role("void deep_ep::intranode::cached_notify_combine<8>(void**, int*, "
			      "int, int, int, int**, int)"), PT_ROLE_COMBINE);
	assert_int_equal(role("void deep_ep::intranode::combine<__nv_bfloat16, 8, 768, 4096>("
			      "__nv_bfloat16*, float*, __nv_bfloat16 const*, float const*, int "
			      "const*, int const*, int const*, int*, int, int, int, void**, int, "
			      "int, int)"), PT_ROLE_COMBINE);
	/* internode (RDMA + NVLink) and low latency */
	assert_int_equal(role("void deep_ep::internode::notify_dispatch<false, 2>(int const*, "
			      "int*, int)"), PT_ROLE_DISPATCH);
	assert_int_equal(role("void deep_ep::internode::cached_notify(int, int, int, int, int, "
			      "int*, int*, int const*, int*, void*, int, void**, int, int**, int, "
			      "bool, nvshmem_team_t)"), PT_ROLE_NOTIFY);
	assert_int_equal(role("void deep_ep::internode_ll::dispatch<true, 3, 7168>(void*, "
			      "float*, int*, long*)"), PT_ROLE_DISPATCH);
	assert_int_equal(role("void deep_ep::internode_ll::combine<false, 3, 7168, 9>(void*, "
			      "void*, int*, void const*)"), PT_ROLE_COMBINE);
	assert_int_equal(role("void deep_ep::internode_ll::clean_low_latency_buffer<32>(int*, "
			      "int, int*, int)"), PT_ROLE_BARRIER);
	/* a combine kernel whose parameters mention dispatch is still combine */
	assert_int_equal(role("void deep_ep::intranode::combine<float, 8, 768>(dispatch_handle "
			      "const*)"), PT_ROLE_COMBINE);
	/* forks that kept the names under another namespace */
	assert_int_equal(role("void primus_turbo::deep_ep::intranode::cached_notify_combine<8>("
			      "void**, int*)"), PT_ROLE_COMBINE);
	assert_int_equal(role("void uccl::intranode::dispatch<8, 768, 6144>(int4*)"),
			 PT_ROLE_DISPATCH);
	/* by structure: DeepEP's layout under namespaces the table does not
	 * name (public forks and ports: xen_moe, mori's deepep, DeepEP's
	 * two-stage low-latency mode, a SYCL port's kernel classes), and
	 * names made up to test the rule (acme::, moe_kernels::: the
	 * intranode_ll_slave segment of a vendor port, an ep:: namespace) */
	assert_int_equal(role("void xen_moe::internode_ll::dispatch<true, 3, 10, 7168>(void*, "
			      "float*, int*, long*, int*, int*, int*, void*, int*, int, int, bool)"),
			 PT_ROLE_DISPATCH);
	assert_int_equal(role("void xen_moe::internode_ll::clean_low_latency_buffer<32>(int*, "
			      "int, int*, int)"), PT_ROLE_BARRIER);
	assert_int_equal(role("void mori::moe::deepep::internode_ll::combine<__nv_bfloat16>("
			      "void*, void const*)"), PT_ROLE_COMBINE);
	assert_int_equal(role("void deep_ep::internode_ll_two_stage::combine<false, 8, 9, 7168>("
			      "void*, int*)"), PT_ROLE_COMBINE);
	assert_int_equal(role("deep_ep::internode_ll::(anonymous namespace)::"
			      "LowLatencyDispatchMergedKernel"), PT_ROLE_DISPATCH);
	assert_int_equal(role("void acme::intranode_ll_slave::notify_dispatch<8>(int const*)"),
			 PT_ROLE_DISPATCH);
	assert_int_equal(role("void moe_kernels::intranode::cached_notify_combine<8>(void**)"),
			 PT_ROLE_COMBINE);
	assert_int_equal(role("void acme::ep::combine_kernel<float>(float*)"), PT_ROLE_COMBINE);
	/* ... and not what merely mentions such words */
	assert_int_equal(role("void xen_moe::layout::get_dispatch_layout<256, 32, 8>(long "
			      "const*, int*)"), PT_ROLE_NONE);
	assert_int_equal(role("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_"
			      "internode_dispatch_policy>(Params)"), PT_ROLE_NONE);
	assert_int_equal(role("void at::native::vectorized_elementwise_kernel<4, "
			      "at::native::CUDAFunctor_add<float>>(int, float)"), PT_ROLE_NONE);
	assert_int_equal(role("void acme::internode::pack_tokens<8>(int*)"), PT_ROLE_NONE);
	/* the layout kernel is local work */
	assert_int_equal(role("void deep_ep::layout::get_dispatch_layout<256, 32, 8>(long "
			      "const*, int*, int*, int*, bool*, int, int, int, int)"),
			 PT_ROLE_NONE);
	assert_string_equal(pt_commkind_role_name(PT_ROLE_DISPATCH), "alltoall dispatch");
	assert_string_equal(pt_commkind_role_name(PT_ROLE_COMBINE), "alltoall combine");
}

static void test_other_libraries(void **st)
{
	(void)st;
	/* NCCL as Kineto writes it, with and without "void " */
	assert_int_equal(role("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned "
			      "long, ncclWork*)"), PT_ROLE_ALLREDUCE);
	assert_int_equal(role("ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, "
			      "ncclWork*)"), PT_ROLE_ALLGATHER);
	assert_int_equal(role("void ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevComm*, "
			      "unsigned long, ncclWork*)"), PT_ROLE_REDUCESCATTER);
	assert_int_equal(role("ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)"),
			 PT_ROLE_SENDRECV);
	assert_int_equal(role("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned "
			      "long, ncclWork*)"), PT_ROLE_SENDRECV);
	/* MSCCL does not say which collective */
	assert_int_equal(role("mscclKernel_Sum_half_Simple_false(ncclDevComm*, mscclAlgo*, "
			      "mscclWork*)"), PT_ROLE_COLLECTIVE);
	/* NVSHMEM */
	assert_int_equal(role("void nvshmemi_proxy_rma_entrypoint<(nvshmemi_op_t)0, 1>(void*, "
			      "void*, rma_bytesdesc_t, int)"), PT_ROLE_SENDRECV);
	assert_int_equal(role("void nvshmemi_reduce_kernel<float, (rdxn_ops)0>(int, int, int, "
			      "float*, float const*, unsigned long, float*, long*)"),
			 PT_ROLE_REDUCE);
	assert_int_equal(role("nvshmemi_proxy_quiet_entrypoint()"), PT_ROLE_BARRIER);
	/* custom all-reduce: vLLM, SGLang, TensorRT-LLM */
	assert_int_equal(role("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>("
			      "vllm::RankData*, vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, "
			      "int, int)"), PT_ROLE_ALLREDUCE);
	assert_int_equal(role("void sglang::cross_device_reduce_1stage<__half, 8>("
			      "sglang::RankData*, sglang::RankSignals, sglang::Signal*, __half*, "
			      "int, int)"), PT_ROLE_ALLREDUCE);
	assert_int_equal(role("void vllm::cross_device_reduce_2stage<float, 4>(vllm::RankData*)"),
			 PT_ROLE_ALLREDUCE);
	assert_int_equal(role("void tensorrt_llm::kernels::oneShotAllReduceKernel<__nv_bfloat16, "
			      "8, true, false>(tensorrt_llm::kernels::AllReduceParams)"),
			 PT_ROLE_ALLREDUCE);
	/* compute stays compute */
	assert_int_equal(role("void at::native::vectorized_elementwise_kernel<4, "
			      "at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, "
			      "at::native::FillFunctor<float>, at::detail::Array<char*, 1>)"),
			 PT_ROLE_NONE);
	assert_int_equal(role("volta_sgemm_128x32_nt"), PT_ROLE_NONE);
	assert_int_equal(role("void at::native::reduce_kernel<512, 1>(int)"), PT_ROLE_NONE);
	/* CPU collectives' names */
	assert_int_equal(pt_commkind_role_from_name("record_param_comms:all_to_allv", 30),
			 PT_ROLE_ALLTOALL);
	assert_int_equal(pt_commkind_role_from_name("nccl:_reduce_scatter_base", 25),
			 PT_ROLE_REDUCESCATTER);
}

static void test_user_rules(void **st)
{
	char dir[256], path[300], bad[300];
	pt_error e;

	(void)st;
	tu_tmpdir(dir, sizeof(dir), "pt_commkind");
	snprintf(path, sizeof(path), "%s/rules.txt", dir);
	snprintf(bad, sizeof(bad), "%s/bad.txt", dir);
	tu_write_text(path, "# our MoE all-to-all\n"
			    "*my_moe::send_tokens*   alltoall dispatch\n"
			    "\n"
			    "*my_moe::recv_tokens*  alltoall combine   # trailing comment\n"
			    "ncclDevKernel_Generic*  compute\n"
			    "*fancy_ring_*  auto\n");
	tu_write_text(bad, "*a_kernel*  allreduce\n*b_kernel*  alltoall dipsatch\n");
	pt_commkind_reset();
	assert_int_equal(role("void my_moe::send_tokens<8>(int*)"), PT_ROLE_NONE);
	pt_error_clear(&e);
	assert_int_equal(pt_commkind_load_file(path, &e), PT_OK);
	assert_int_equal(pt_commkind_user_rules(), 4);
	assert_int_equal(role("void my_moe::send_tokens<8>(int*)"), PT_ROLE_DISPATCH);
	assert_int_equal(role("void my_moe::recv_tokens<8>(int*)"), PT_ROLE_COMBINE);
	/* user rules come before the built-in ones */
	assert_int_equal(role("ncclDevKernel_Generic_1(ncclDevComm*, unsigned long, ncclWork*)"),
			 PT_ROLE_NONE);
	assert_int_equal(role("void fancy_ring_allgather_kernel(float*)"), PT_ROLE_ALLGATHER);
	/* a bad line: the file's rules are all dropped, the line is named */
	pt_error_clear(&e);
	assert_int_equal(pt_commkind_load_file(bad, &e), PT_EFORMAT);
	assert_non_null(strstr(e.msg, "line 2"));
	assert_non_null(strstr(e.msg, "alltoall dipsatch"));
	assert_string_equal(e.subject, bad);
	assert_int_equal(pt_commkind_user_rules(), 4);
	pt_error_clear(&e);
	assert_int_equal(pt_commkind_load_file("/nonexistent/rules", &e), PT_EIO);
	pt_commkind_reset();
	assert_int_equal(pt_commkind_user_rules(), 0);
	tu_rm_rf(dir);
}

/* The Kineto reader and the summary: DeepEP kernels are communication
 * events, keyed by name, grouped by role. */
static void test_reader_and_summary(void **st)
{
	static const char trace[] =
		"{\"traceEvents\":["
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"void deep_ep::intranode::dispatch<8, 768, "
		"6144>(int4*, float*)\",\"pid\":0,\"tid\":7,\"ts\":100,\"dur\":50,\"args\":{\"grid\":"
		"[24,1,1],\"block\":[768,1,1]}},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"void deep_ep::intranode::combine<"
		"__nv_bfloat16, 8, 768, 4096>(__nv_bfloat16*)\",\"pid\":0,\"tid\":7,\"ts\":200,"
		"\"dur\":40,\"args\":{\"grid\":[24,1,1],\"block\":[768,1,1]}},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"void deep_ep::layout::get_dispatch_layout"
		"<256, 32, 8>(long const*)\",\"pid\":0,\"tid\":7,\"ts\":50,\"dur\":10,\"args\":{\"grid\":"
		"[4,1,1],\"block\":[256,1,1],\"est. achieved occupancy %\":12,\"blocks per SM\":0.03,"
		"\"registers per thread\":40,\"shared memory\":1024}},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"void deep_ep::intranode::dispatch<8, 768, "
		"6144>(int4*, float*)\",\"pid\":0,\"tid\":7,\"ts\":300,\"dur\":60,\"args\":{\"grid\":"
		"[24,1,1],\"block\":[768,1,1]}}"
		"]}";
	pt_store s;
	pt_summary *sum;
	pt_error e;
	size_t i, ncomm = 0, nkern = 0;
	int seen_d = 0, seen_c = 0, seen_l = 0;

	(void)st;
	pt_commkind_reset();
	assert_int_equal(pt_store_init(&s), PT_OK);
	pt_error_clear(&e);
	assert_int_equal(pt_kineto_read_mem(trace, sizeof(trace) - 1, &s, &e), PT_OK);
	for (i = 0; i < s.n; i++) {
		ncomm += s.ev[i].kind == PT_K_COMM_KERNEL;
		nkern += s.ev[i].kind == PT_K_KERNEL;
	}
	assert_int_equal(ncomm, 3);
	assert_int_equal(nkern, 1);
	assert_int_equal(s.nkinfo, 1);
	assert_true(s.kinfo[0].occupancy == 12.0f && s.kinfo[0].registers == 40 &&
		    s.kinfo[0].shared_mem == 1024);
	sum = pt_summary_build(&s, "deepep.json", NULL, &e);
	assert_non_null(sum);
	for (i = 0; i < sum->npatterns; i++) {
		const pt_pattern *p = &sum->patterns[i];
		if (strstr(p->key, "intranode::dispatch")) {
			seen_d = 1;
			assert_int_equal(p->cls, PT_C_COMM);
			assert_int_equal(p->role, PT_ROLE_DISPATCH);
			assert_int_equal(p->count, 2);
			assert_null(strstr(p->key, "|768_1_1")); /* keyed by name */
		} else if (strstr(p->key, "intranode::combine")) {
			seen_c = 1;
			assert_int_equal(p->role, PT_ROLE_COMBINE);
		} else if (strstr(p->key, "get_dispatch_layout")) {
			seen_l = 1;
			assert_int_equal(p->cls, PT_C_COMPUTE);
			assert_int_equal(p->eff_n, 1);
			assert_true(p->occupancy_pct == 12.0 && p->blocks_per_sm == 0.03 &&
				    p->registers == 40 && p->shared_mem == 1024);
		}
	}
	assert_true(seen_d && seen_c && seen_l);
	/* GPU busy counts the communication kernels, compute utilisation not:
	 * window 50..360 us = 310 us, kernels 10+50+40+60 us, compute 10. */
	assert_true(sum->gpu_util > 0.51 && sum->gpu_util < 0.52);
	assert_true(sum->gpu_compute_util > 0.032 && sum->gpu_compute_util < 0.033);
	pt_summary_free(sum);
	pt_store_free(&s);
}

/* The Communication section's groups: NCCL as before, other kernels by role. */
static void test_comm_groups(void **st)
{
	char g[64];

	(void)st;
	pt_commkind_reset();
	assert_string_equal(pt_diag_comm_group("void deep_ep::intranode::dispatch<8, 768, 6144>("
					       "int4*, float*)", PT_K_COMM_KERNEL, g, sizeof(g)),
			    "alltoall dispatch");
	assert_string_equal(pt_diag_comm_group("void deep_ep::internode_ll::combine<false, 3, 7168,"
					       " 9>(void*)", PT_K_COMM_KERNEL, g, sizeof(g)),
			    "alltoall combine");
	assert_string_equal(pt_diag_comm_group("void vllm::cross_device_reduce_1stage<__nv_bfloat16,"
					       " 8>(vllm::RankData*)", PT_K_COMM_KERNEL, g, sizeof(g)),
			    "allreduce");
	assert_string_equal(pt_diag_comm_group("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*,"
					       " unsigned long, ncclWork*)", PT_K_COMM_KERNEL, g,
					       sizeof(g)), "ring allreduce");
	assert_string_equal(pt_diag_comm_group("mscclKernel_Sum_half_Simple_false(ncclDevComm*, "
					       "mscclAlgo*, mscclWork*)", PT_K_COMM_KERNEL, g, sizeof(g)),
			    "collective");
}

/* The Nsight reader asks the same table: a DeepEP combine kernel in an
 * export (the documented 3.x kernel columns) is a communication event. */
static void test_nsys_reader(void **st)
{
	static const char sql[] =
		"CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
		"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT "
		"NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT "
		"NULL, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL,"
		" gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX "
		"INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL);"
		"INSERT INTO StringIds VALUES (1, 'void deep_ep::intranode::combine<__nv_bfloat16, 8,"
		" 768, 4096>(__nv_bfloat16*, float*)'), (2, 'combine'), (3, 'void "
		"at::native::vectorized_elementwise_kernel<4>(int)'), (4, 'vectorized');"
		"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 2000, 0, 1, 7, 0, 1, 2, 24, 1, "
		"1, 768, 1, 1), (3000, 3500, 0, 1, 7, 0, 3, 4, 80, 1, 1, 128, 1, 1), (4000, 5000, 0, "
		"1, 7, 0, 1, 2, 24, 1, 1, 768, 1, 1);";
	char dir[256], path[300];
	sqlite3 *db;
	pt_store s;
	pt_error e;
	size_t i, ncomm = 0, nk = 0;

	(void)st;
	pt_commkind_reset();
	tu_tmpdir(dir, sizeof(dir), "pt_commkind_nsys");
	snprintf(path, sizeof(path), "%s/deepep.sqlite", dir);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(pt_store_init(&s), PT_OK);
	pt_error_clear(&e);
	assert_int_equal(pt_nsys_read_file(path, &s, NULL, &e), PT_OK);
	for (i = 0; i < s.n; i++) {
		size_t n;
		const char *name = pt_strtab_get(s.strs, s.ev[i].name, &n);
		if (s.ev[i].kind == PT_K_COMM_KERNEL) {
			ncomm++;
			assert_non_null(strstr(name, "deep_ep::intranode::combine"));
		} else if (s.ev[i].kind == PT_K_KERNEL) {
			nk++;
			assert_non_null(strstr(name, "vectorized_elementwise_kernel"));
		}
	}
	assert_int_equal(ncomm, 2);
	assert_int_equal(nk, 1);
	pt_store_free(&s);
	tu_rm_rf(dir);
}

/* The waits: host frames that block, runtime calls that wait, idle
 * threads (real frame names from the DLRM, demo and TraceLens traces). */
static void test_waits(void **st)
{
	(void)st;
	assert_true(pt_wait_blocking_frame("aten::item"));
	assert_true(pt_wait_blocking_frame("aten::_local_scalar_dense"));
	assert_true(pt_wait_blocking_frame("c10d::allreduce_"));
	assert_true(pt_wait_blocking_frame("gloo:all_reduce"));
	assert_true(pt_wait_blocking_frame("<built-in method wait of PyCapsule object at 0x>"));
	assert_true(pt_wait_blocking_frame("cudaStreamSynchronize"));
	assert_false(pt_wait_blocking_frame("aten::addmm"));
	assert_false(pt_wait_blocking_frame("<built-in function linear>"));
	assert_true(pt_wait_blocking_runtime("cudaDeviceSynchronize"));
	assert_true(pt_wait_blocking_runtime("cudaMemcpyAsync"));
	assert_true(pt_wait_blocking_runtime("cudaEventQuery"));
	assert_true(pt_wait_blocking_runtime("cudaStreamWaitEvent"));
	assert_false(pt_wait_blocking_runtime("cudaLaunchKernel"));
	assert_true(pt_wait_idle_frame("threading.py: wait"));
	assert_true(pt_wait_idle_frame("<built-in function sleep>"));
	assert_true(pt_wait_idle_frame("/usr/lib/python3.11/queue.py: get"));
	assert_false(pt_wait_idle_frame("train_gloo.py: slow_augment"));
	assert_false(pt_wait_idle_frame("threading.py: wait_for"));
}

/* The one vocabulary of collective words: the group spelling, the role,
 * compounds before their parts, and the names that spell none. */
static void test_coll_words(void **st)
{
	static const struct {
		const char *name, *word;
		int role;
	} t[] = {
		{ "ncclDevKernel_AllReduce_Sum_f16_RING_LL", "allreduce", PT_ROLE_ALLREDUCE },
		{ "c10d::_reduce_scatter_base_", "reducescatter", PT_ROLE_REDUCESCATTER },
		{ "ncclKernel_AllGather_RING_LL_Sum_int8_t", "allgather", PT_ROLE_ALLGATHER },
		{ "nccl:all_to_all", "alltoall", PT_ROLE_ALLTOALL },
		{ "ncclDevKernel_SendRecv", "sendrecv", PT_ROLE_SENDRECV },
		{ "nccl:send", "send", PT_ROLE_SENDRECV },
		{ "nccl:recv", "recv", PT_ROLE_SENDRECV },
		{ "gloo:broadcast", "broadcast", PT_ROLE_BROADCAST },
		{ "ncclBcast", "broadcast", PT_ROLE_BROADCAST },
		{ "ncclKernel_Reduce_RING_LL_Sum_half", "reduce", PT_ROLE_REDUCE },
		{ "c10d::gather_", "gather", PT_ROLE_COLLECTIVE },
		{ "c10d::scatter_", "scatter", PT_ROLE_COLLECTIVE },
		{ "c10d::monitored_barrier_", "barrier", PT_ROLE_BARRIER },
		{ "nvshmemi_fence", "barrier", PT_ROLE_BARRIER },
		{ "nvshmem_putmem_nbi", "sendrecv", PT_ROLE_SENDRECV },
		{ "all-reduce", "allreduce", PT_ROLE_ALLREDUCE },
		{ "record_param_comms", NULL, PT_ROLE_COLLECTIVE },
	};
	size_t i;

	(void)st;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int role = -5;
		const char *w = pt_commkind_coll_word(t[i].name, strlen(t[i].name), &role);
		if (t[i].word)
			assert_string_equal(w, t[i].word);
		else
			assert_null(w);
		assert_int_equal(role, t[i].role);
		assert_int_equal(pt_commkind_role_from_name(t[i].name, strlen(t[i].name)), t[i].role);
	}
	/* a length bound: the name is not read past n */
	assert_null(pt_commkind_coll_word("allreduce", 3, NULL));
	/* bus bandwidth from the same words */
	assert_true(fabs(pt_commkind_busbw_factor("ncclBcast", 9, 8) - 1) < 1e-12);
	assert_true(pt_commkind_busbw_factor("c10d::gather_", 13, 8) == 0);
}

/* The name tests every reader and section asks commkind (not their own):
 * CPU collectives as torch's profiler names them (tests/data/gloo, DDP
 * NCCL traces), NCCL/RCCL kernels, backends and lockstep's channels. */
static void test_name_tests(void **state)
{
	long ix = -1;
	char b[32];

	(void)state;
	assert_true(pt_commkind_is_cpu_op("gloo:all_reduce", 15));
	assert_true(pt_commkind_is_cpu_op("c10d::allreduce_", 16));
	assert_true(pt_commkind_is_cpu_op("nccl:all_reduce", 15));
	assert_true(pt_commkind_is_cpu_op("record_param_comms", 18));
	assert_false(pt_commkind_is_cpu_op("record_param_comms:_allgather_base", 34));
	assert_false(pt_commkind_is_cpu_op("aten::mm", 8));
	assert_false(pt_commkind_is_cpu_op("gloo", 4));
	assert_true(pt_commkind_is_nccl_kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"));
	assert_true(pt_commkind_is_nccl_kernel("void ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"));
	assert_true(pt_commkind_is_nccl_kernel("rcclKernel"));
	assert_false(pt_commkind_is_nccl_kernel("void deep_ep::intranode::dispatch<8>(int)"));
	assert_true(pt_commkind_names_nccl("nccl:all_reduce", 15));
	assert_true(pt_commkind_names_nccl("record_param_comms:NCCL", 23));
	assert_false(pt_commkind_names_nccl("gloo:all_reduce", 15));
	assert_string_equal(pt_commkind_backend("gloo:all_reduce", 15), "gloo");
	assert_string_equal(pt_commkind_backend("c10d::allreduce_", 16), "cpu");
	assert_string_equal(pt_commkind_backend("nccl:_all_gather_base", 21), "nccl");
	assert_string_equal(pt_commkind_backend("MPI_Send", 8), "mpi");
	pt_commkind_squash("Nccl_All Reduce", 15, b, sizeof(b));
	assert_string_equal(b, "ncclallreduce");
	pt_commkind_squash("Nccl_All Reduce", 15, b, 5);
	assert_string_equal(b, "nccl");
	assert_string_equal(pt_commkind_chan_name(PT_CHAN_GPU, 3, b, sizeof(b)), "nccl:3");
	assert_string_equal(pt_commkind_chan_name(PT_CHAN_GLOO, 0, b, sizeof(b)), "gloo:0");
	assert_string_equal(pt_commkind_chan_name(PT_CHAN_CPU, 12, b, sizeof(b)), "cpu:12");
	assert_int_equal(pt_commkind_chan_parse("nccl:3", &ix), PT_CHAN_GPU);
	assert_int_equal(ix, 3);
	assert_int_equal(pt_commkind_chan_parse("gloo:1", &ix), PT_CHAN_GLOO);
	assert_int_equal(ix, 1);
	assert_int_equal(pt_commkind_chan_parse("cpu:7", &ix), PT_CHAN_CPU);
	assert_int_equal(ix, 7);
	assert_int_equal(pt_commkind_chan_parse("ncclx", &ix), PT_CHAN_CPU);
	assert_int_equal(ix, 0);
}

/* Point to point: which way each op or kernel moves data, as torch and
 * NCCL name them (ProcessGroupNCCL's "nccl:send R->P" / "nccl:recv R<-P"
 * titles, c10d's and gloo's ops, record_param_comms' collective names,
 * NCCL's SendRecv kernels), and that the collectives whose names spell a
 * send are not point to point. */
static void test_p2p(void **st)
{
	static const struct {
		const char *name;
		int dir;
	} t[] = {
		{ "c10d::send", PT_P2P_SEND },
		{ "c10d::recv_", PT_P2P_RECV },
		{ "c10d::recv_any_source_", PT_P2P_RECV },
		{ "gloo:send", PT_P2P_SEND },
		{ "gloo:recv", PT_P2P_RECV },
		{ "record_param_comms:send", PT_P2P_SEND },
		{ "record_param_comms:recv", PT_P2P_RECV },
		{ "nccl:send 0->1", PT_P2P_SEND },
		{ "nccl:recv 1<-0", PT_P2P_RECV },
		{ "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)", PT_P2P_BOTH },
		{ "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", PT_P2P_BOTH },
		{ "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 0 },
		{ "nccl:all_to_all", 0 },
		{ "c10d::alltoall_base_", 0 },
		{ "gloo:all_to_all", 0 },
		{ "c10d::broadcast_", 0 },
		{ "aten::add_", 0 },
	};
	size_t i;
	int64_t peer = -1;

	(void)st;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		assert_int_equal(pt_commkind_p2p_dir(t[i].name, strlen(t[i].name)), t[i].dir);
	assert_int_equal(pt_commkind_p2p_title("nccl:send 0->1", 14, &peer), PT_P2P_SEND);
	assert_int_equal(peer, 1);
	assert_int_equal(pt_commkind_p2p_title("nccl:recv 12<-3", 15, &peer), PT_P2P_RECV);
	assert_int_equal(peer, 3);
	/* not a title: the arrow the other way, no peer, text after it, a collective */
	assert_int_equal(pt_commkind_p2p_title("nccl:send 0<-1", 14, &peer), 0);
	assert_int_equal(pt_commkind_p2p_title("nccl:send 0->", 13, &peer), 0);
	assert_int_equal(pt_commkind_p2p_title("nccl:send 0->1x", 15, &peer), 0);
	assert_int_equal(pt_commkind_p2p_title("nccl:all_reduce", 15, &peer), 0);
	/* the length bound: "nccl:send 0->12" read as its first 14 bytes */
	assert_int_equal(pt_commkind_p2p_title("nccl:send 0->12", 14, &peer), PT_P2P_SEND);
	assert_int_equal(peer, 1);
	assert_string_equal(pt_commkind_p2p_name(PT_P2P_SEND), "send");
	assert_string_equal(pt_commkind_p2p_name(PT_P2P_RECV), "recv");
	assert_null(pt_commkind_p2p_name(PT_P2P_BOTH));
	assert_int_equal(pt_commkind_p2p_parse("recv", 4), PT_P2P_RECV);
	assert_int_equal(pt_commkind_p2p_parse("sendrecv", 8), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deepep_kernels),
		cmocka_unit_test(test_coll_words),
		cmocka_unit_test(test_p2p),
		cmocka_unit_test(test_other_libraries),
		cmocka_unit_test(test_waits),
		cmocka_unit_test(test_name_tests),
		cmocka_unit_test(test_user_rules),
		cmocka_unit_test(test_reader_and_summary),
		cmocka_unit_test(test_nsys_reader),
		cmocka_unit_test(test_comm_groups),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
