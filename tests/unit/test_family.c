/*
 * test_family.c - kernel families (src/model/family.c) on real kernel
 * names: those of HTA's trace_diff control trace (tests/data, A100:
 * cuBLAS, CUTLASS, ATen, FBGEMM), of public cuBLAS/cuBLASLt/cuDNN/CUTLASS
 * builds (V100, A100, H100), PyTorch Inductor's Triton kernels and AMD's
 * Tensile: each family's exact stem and what its name says (library,
 * precision, tensor cores, GPU generation).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "model/family.h"

static void test_families(void **st)
{
	static const struct {
		const char *name, *family, *lib;
		int gemm;
		pt_precision prec;
		int tc;
		const char *arch;
	} t[] = {
		/* trace_diff/control (A100) */
		{ "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4>"
		  "(cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4::Params)",
		  "cutlass_80_tensorop_s1688gemm", "cutlass", 1, PT_PREC_TF32, 1, "sm80" },
		{ "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x128_32x3_nn_align1>"
		  "(cutlass_80_tensorop_s1688gemm_256x128_32x3_nn_align1::Params)",
		  "cutlass_80_tensorop_s1688gemm", "cutlass", 1, PT_PREC_TF32, 1, "sm80" },
		{ "ampere_sgemm_128x128_tn", "ampere_sgemm", "cublas", 1, PT_PREC_FP32, 0, "ampere" },
		{ "ampere_sgemm_128x64_nn", "ampere_sgemm", "cublas", 1, PT_PREC_FP32, 0, "ampere" },
		{ "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add"
		  "<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
		  "at::detail::Array<char*, 3>)",
		  "at::native::vectorized_elementwise_kernel", "", 0, PT_PREC_UNKNOWN, -1, "" },
		{ "void splitKreduce_kernel<float, float, float, float, true, false, false>"
		  "(cublasSplitKParams<float>, float const*, float const*, float*)",
		  "splitKreduce_kernel", "", 0, PT_PREC_UNKNOWN, -1, "" },
		{ "void split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_cta_per_"
		  "row_1<float, float, float, 2ul>(at::GenericPackedTensorAccessor<float, 1ul>)",
		  "split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_cta_per_row",
		  "", 0, PT_PREC_UNKNOWN, -1, "" },
		/* V100 */
		{ "volta_sgemm_128x64_nn", "volta_sgemm", "cublas", 1, PT_PREC_FP32, 0, "volta" },
		{ "volta_sgemm_32x128_tn", "volta_sgemm", "cublas", 1, PT_PREC_FP32, 0, "volta" },
		{ "volta_h884gemm_64x64_ldg8_nn", "volta_h884gemm", "cublas", 1, PT_PREC_FP16, 1,
		  "volta" },
		{ "volta_fp16_s884gemm_fp16_128x128_ldg8_f2f_nn", "volta_fp16_s884gemm", "cublas", 1,
		  PT_PREC_FP16, 1, "volta" },
		/* A100 / H100 */
		{ "ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_tn",
		  "ampere_bf16_s16816gemm", "cublas", 1, PT_PREC_BF16, 1, "ampere" },
		{ "ampere_scudnn_128x64_relu_interior_nn_v1", "ampere_scudnn", "cudnn", 1,
		  PT_PREC_FP32, 0, "ampere" },
		{ "sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x128x32_stage4_warpsize2x2x1_"
		  "tensor16x8x16_kernel", "sm80_xmma_gemm", "cublasLt", 1, PT_PREC_FP16, 1, "sm80" },
		{ "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_"
		  "execute_segment_k_off_kernel__5x_cublas", "sm90_xmma_gemm", "cublasLt", 1,
		  PT_PREC_BF16, 1, "sm90" },
		{ "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_"
		  "tilesize64x32x64_stage5_warpsize2x2x1_g1_tensor16x8x8_kernel",
		  "sm80_xmma_fprop_implicit_gemm", "cudnn", 1, PT_PREC_TF32, 1, "sm80" },
		{ "void cutlass::Kernel2<cutlass_75_wmma_tensorop_f16_s161616gemm_f16_32x32_128x1_"
		  "tn_align8>(cutlass_75_wmma_tensorop_f16_s161616gemm_f16_32x32_128x1_tn_align8::"
		  "Params)", "cutlass_75_wmma_tensorop_f16_s161616gemm", "cutlass", 1, PT_PREC_FP16,
		  1, "sm75" },
		/* Inductor */
		{ "triton_poi_fused_add_0", "triton_poi", "triton", 0, PT_PREC_UNKNOWN, -1, "" },
		{ "triton_red_fused__softmax_1", "triton_red", "triton", 0, PT_PREC_UNKNOWN, -1, "" },
		{ "triton_per_fused_native_layer_norm_2", "triton_per", "triton", 0, PT_PREC_UNKNOWN,
		  -1, "" },
		/* AMD Tensile */
		{ "Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0", "Cijk_Ailk_Bljk_HHS_BH",
		  "rocblas", 1, PT_PREC_FP16, -1, "" },
		/* a launch shape is not part of the family */
		{ "volta_sgemm_128x64_nn 80_4_1|256_1_1", "volta_sgemm", "cublas", 1, PT_PREC_FP32, 0,
		  "volta" },
	};
	char b[256];
	size_t i;

	(void)st;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		pt_kfamily k;
		size_t n = pt_kernel_family(t[i].name, strlen(t[i].name), b, sizeof(b), &k);
		assert_string_equal(b, t[i].family);
		assert_int_equal(n, strlen(t[i].family));
		assert_string_equal(k.lib, t[i].lib);
		assert_int_equal(k.gemm, t[i].gemm);
		assert_int_equal(k.prec, t[i].prec);
		assert_int_equal(k.tensor_cores, t[i].tc);
		assert_string_equal(k.arch, t[i].arch);
	}
}

static void test_edges(void **st)
{
	char b[8];
	pt_kfamily k;

	(void)st;
	/* cut to fit, NUL-terminated */
	assert_int_equal(pt_kernel_family("volta_sgemm_128x64_nn", 21, b, sizeof(b), &k), 7);
	assert_string_equal(b, "volta_s");
	assert_int_equal(pt_kernel_family("", 0, b, sizeof(b), NULL), 0);
	assert_string_equal(b, "");
	assert_int_equal(pt_kernel_family(NULL, 5, b, sizeof(b), &k), 0);
	assert_int_equal(pt_kernel_family("____", 4, b, sizeof(b), NULL), 0);
	assert_int_equal(pt_kernel_family("volta_sgemm", 11, b, 0, NULL), 0);
	/* not read past n */
	assert_int_equal(pt_kernel_family("triton_poi_fused", 6, b, sizeof(b), NULL), 6);
	assert_string_equal(b, "triton");
	assert_string_equal(pt_precision_name(PT_PREC_TF32), "tf32");
	assert_string_equal(pt_precision_name(PT_PREC_UNKNOWN), "");
	assert_string_equal(pt_precision_name((pt_precision)99), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_families),
		cmocka_unit_test(test_edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
