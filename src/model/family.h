/*
 * family.h - kernel families: the stem of a compute kernel's name without
 * its tile, shape, layout and stage suffixes, and what the name says about
 * the math it does (library, precision, tensor cores, GPU generation).
 *
 * Flow: a kernel name (as the readers keep it, launch shape or not) -->
 * pt_kernel_family --> `perftracker compare` (src/compare) groups the
 * kernels of one family, so that a change spread over many kernel names
 * (200 fp32 SGEMM launches of 12 tile variants) is one change, and tells
 * a precision or library change from the families that came and went.
 * Pure functions on strings; thread-safe.  Rules and examples:
 * docs/compare.md "Kernel families".
 */
#ifndef PT_FAMILY_H
#define PT_FAMILY_H

#include <stddef.h>

typedef enum {
	PT_PREC_UNKNOWN = 0,
	PT_PREC_FP64,
	PT_PREC_FP32,   /* on CUDA cores (sgemm, scudnn) */
	PT_PREC_TF32,   /* fp32 data on tensor cores (s1688 on Ampere, tf32) */
	PT_PREC_FP16,
	PT_PREC_BF16,
	PT_PREC_FP8,
	PT_PREC_INT8,
	PT_PREC_COUNT
} pt_precision;

typedef struct pt_kfamily {
	const char *lib;     /* "cublas", "cutlass", "cublasLt", "cudnn", "triton",
	                        "miopen", "rocblas", "" other (static strings) */
	int gemm;            /* 1: a matrix multiply or convolution (GEMM-like) */
	pt_precision prec;   /* PT_PREC_UNKNOWN when the name does not say */
	int tensor_cores;    /* 1 tensor cores, 0 CUDA cores, -1 unknown */
	const char *arch;    /* "volta", "ampere", "sm80", ... or "" (static) */
} pt_kfamily;

/* The family of the kernel named name[0..n) into out (cap bytes, NUL-
 * terminated, cut to fit), and what the name says into *info (NULL: not
 * wanted).  Returns the family's length; 0 when the name has no family
 * other than itself (a plain C++ name keeps its stem without template
 * arguments and parameters as family, so most kernels have one).
 * Examples: "volta_sgemm_128x64_nn" -> "volta_sgemm" (cublas, fp32, CUDA
 * cores); "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_
 * tn_align4>(...)" -> "cutlass_80_tensorop_s1688gemm" (cutlass, tf32,
 * tensor cores); "triton_poi_fused_add_0" -> "triton_poi"; "void
 * at::native::vectorized_elementwise_kernel<4, ...>(...)" ->
 * "at::native::vectorized_elementwise_kernel". */
size_t pt_kernel_family(const char *name, size_t n, char *out, size_t cap, pt_kfamily *info);

/* "fp32", "tf32", "fp16", ...; "" for PT_PREC_UNKNOWN. */
const char *pt_precision_name(pt_precision p);

#endif
