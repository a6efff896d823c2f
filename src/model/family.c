/*
 * family.c - kernel families (family.h): a kernel name's stem without its
 * tile, shape, layout and stage suffixes, and what the name says about its
 * library, precision, tensor cores and GPU generation.  Read by
 * `perftracker compare` (src/compare/compare_keys.c) to group a change
 * spread over many kernel names.
 *
 * The naming conventions this reads: cuBLAS's "<arch>_<prec>_<op>gemm_
 * <prec>_<tile>_<opts>_<layout>" (volta_sgemm_128x64_nn,
 * ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_tn), cuBLASLt's
 * "sm<NN>_xmma_gemm_...", CUTLASS's "cutlass_<NN>_<tensorop|simt>_<op>gemm_
 * <tile>_<stages>_<layout>_align<N>" inside cutlass::Kernel<...>, cuDNN's
 * "<arch>_scudnn_...", Inductor's "triton_<poi|red|per|tem>_fused_...",
 * and C++ templates (at::native::...<...>(...)).
 */
#include "family.h"
#include "keys.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

const char *pt_precision_name(pt_precision p)
{
	static const char *const n[PT_PREC_COUNT] = { "", "fp64", "fp32", "tf32", "fp16",
						      "bf16", "fp8", "int8" };
	return p >= 0 && p < PT_PREC_COUNT ? n[p] : "";
}

/* Does low (lowercase, NUL-terminated) contain any of the words? */
static int has_any(const char *low, const char *const *w)
{
	for (; *w; w++)
		if (strstr(low, *w))
			return 1;
	return 0;
}

/* A '_' token that is a size, a tile, a layout, a stage or a variant
 * number rather than part of what the kernel does. */
static int is_suffix_token(const char *t, size_t n, int first)
{
	size_t i, digits = 0;

	if (!n)
		return 1;
	for (i = 0; i < n; i++)
		digits += isdigit((unsigned char)t[i]) != 0;
	if (digits == n)
		return 1;
	/* 128x64, 64x3, 16x8x16 */
	if (isdigit((unsigned char)t[0])) {
		for (i = 0; i < n && (isdigit((unsigned char)t[i]) || t[i] == 'x'); i++)
			;
		if (i == n)
			return 1;
	}
	if (!first && n <= 2 && strspn(t, "nt") == n)
		return 1;  /* layouts: nn, nt, tn, tt, n, t */
#define PFX(p) (n > sizeof(p) - 1 && !strncmp(t, p, sizeof(p) - 1) && \
		isdigit((unsigned char)t[sizeof(p) - 1]))
	if (PFX("ldg") || PFX("align") || PFX("stage") || PFX("v") || PFX("warpsize") ||
	    PFX("tilesize") || PFX("tensor"))
		return 1;
#undef PFX
	if ((n == 6 && !strncmp(t, "stages", 6)) || (n == 3 && !strncmp(t, "f2f", 3)))
		return 1;
	return 0;
}

/* A GPU generation as kernel names spell it (cuBLAS's "volta_",
 * cuBLASLt's "sm80_"; CUTLASS's "cutlass_80_" is looked up as "sm80"):
 * the table's spelling, "sm" for another sm number, "" for none. */
static const char *arch_name(const char *t, size_t n)
{
	static const char *const a[] = { "maxwell", "pascal", "volta", "turing", "ampere",
					 "ada", "hopper", "blackwell", "sm50", "sm60", "sm61",
					 "sm70", "sm75", "sm80", "sm86", "sm89", "sm90", "sm100",
					 NULL };
	size_t i;

	for (i = 0; a[i]; i++)
		if (strlen(a[i]) == n && !strncmp(t, a[i], n))
			return a[i];
	return n >= 3 && t[0] == 's' && t[1] == 'm' && strspn(t + 2, "0123456789") == n - 2 ?
		       "sm" : "";
}

/* The precision, tensor cores and library of a GEMM-like name (low:
 * lowercase). */
static void math_of(const char *low, pt_kfamily *k)
{
	static const char *const fp8[] = { "e4m3", "e5m2", "fp8", NULL };
	static const char *const fp16[] = { "fp16", "f16", "h884", "h1688", "h16816", "hgemm",
					    "half", "hmma", NULL };
	static const char *const i8[] = { "int8", "imma", "i8i8", "_i8", "s8s8", NULL };
	static const char *const f64[] = { "dgemm", "d884", "fp64", "double", NULL };
	static const char *const tc_s[] = { "s1688gemm", "s16816gemm", "s884gemm", "s1688",
					    "s16816", NULL };
	static const char *const tc[] = { "tensorop", "884", "1688", "16816", "hmma", "imma",
					  "xmma", "wmma", "mma", NULL };
	static const char *const simt[] = { "sgemm", "dgemm", "hgemm", "scudnn", "simt", NULL };

	if (has_any(low, fp8))
		k->prec = PT_PREC_FP8;
	else if (strstr(low, "bf16"))
		k->prec = PT_PREC_BF16;
	else if (strstr(low, "tf32"))
		k->prec = PT_PREC_TF32;
	else if (has_any(low, fp16))
		k->prec = PT_PREC_FP16;
	else if (has_any(low, i8))
		k->prec = PT_PREC_INT8;
	else if (has_any(low, f64))
		k->prec = PT_PREC_FP64;
	else if (has_any(low, tc_s))
		k->prec = PT_PREC_TF32;  /* fp32 data on tensor cores: TF32 math */
	else if (strstr(low, "sgemm") || strstr(low, "scudnn"))
		k->prec = PT_PREC_FP32;
	if (has_any(low, simt))
		k->tensor_cores = 0;
	else if (has_any(low, tc))
		k->tensor_cores = 1;
}

size_t pt_kernel_family(const char *name, size_t n, char *out, size_t cap, pt_kfamily *info)
{
	pt_kfamily k = { "", 0, PT_PREC_UNKNOWN, -1, "" };
	char low[512], fam[256];
	const char *v = name, *in, *e;
	size_t vn = n, i, m = 0, fn = 0, ntok = 0;
	int cutlass = 0, gemm_at = -1;
	struct { const char *p; size_t n; } tok[48];

	if (cap)
		out[0] = 0;
	if (!name || !n)
		goto out;
	if (vn >= 5 && !strncmp(v, "void ", 5)) {
		v += 5;
		vn -= 5;
	}
	vn = pt_key_strip_shape(v, vn);
	/* CUTLASS's kernel is named by its template argument */
	in = memmem(v, vn, "cutlass_", 8);
	if (in && (in == v || !isalnum((unsigned char)in[-1]))) {
		for (e = in; e < v + vn && (isalnum((unsigned char)*e) || *e == '_'); e++)
			;
		v = in;
		vn = (size_t)(e - in);
		cutlass = 1;
	}
	/* the stem: up to the template arguments, the parameters or a space */
	for (e = v; e < v + vn && *e != '<' && *e != '(' && *e != ' '; e++)
		;
	vn = (size_t)(e - v);
	for (i = 0; i < vn && m + 1 < sizeof(low); i++)
		low[m++] = (char)tolower((unsigned char)v[i]);
	low[m] = 0;
	if (memmem(v, vn, "::", 2)) {
		/* a C++ name: its stem is its family */
		fn = vn < sizeof(fam) - 1 ? vn : sizeof(fam) - 1;
		memcpy(fam, v, fn);
		if (strstr(low, "cublaslt"))
			k.lib = "cublasLt";
		else if (strstr(low, "cudnn"))
			k.lib = "cudnn";
		if (strstr(low, "gemm") || strstr(low, "conv")) {
			k.gemm = 1;
			math_of(low, &k);
		}
		goto done;
	}
	for (i = 0; i < vn && ntok < sizeof(tok) / sizeof(tok[0]);) {
		size_t j = i;
		while (j < vn && v[j] != '_')
			j++;
		if (j > i) {
			tok[ntok].p = low + i;
			tok[ntok++].n = j - i;
		}
		i = j + 1;
	}
	if (!ntok)
		goto out;
	if (tok[0].n == 6 && !strncmp(tok[0].p, "triton", 6)) {
		static const char *const kinds[] = { "poi", "red", "per", "tem", "for", NULL };
		k.lib = "triton";
		fn = (size_t)snprintf(fam, sizeof(fam), "triton");
		for (i = 0; ntok > 1 && kinds[i]; i++)
			if (tok[1].n == 3 && !strncmp(tok[1].p, kinds[i], 3))
				fn = (size_t)snprintf(fam, sizeof(fam), "triton_%s", kinds[i]);
		goto done;
	}
	for (i = 0; i < ntok && gemm_at < 0; i++) {
		char t[64];
		size_t tn = tok[i].n < sizeof(t) - 1 ? tok[i].n : sizeof(t) - 1;
		memcpy(t, tok[i].p, tn);
		t[tn] = 0;
		if (strstr(t, "gemm") || strstr(t, "cudnn") || strstr(t, "conv"))
			gemm_at = (int)i;
	}
	if (cutlass)
		k.lib = "cutlass";
	if (arch_name(tok[0].p, tok[0].n)[0]) {
		k.arch = arch_name(tok[0].p, tok[0].n);
		if (gemm_at >= 0)
			k.lib = strstr(low, "cudnn") || strstr(low, "fprop") || strstr(low, "dgrad") ||
					strstr(low, "wgrad") ? "cudnn" :
				(tok[0].p[0] == 's' && strstr(low, "xmma")) ? "cublasLt" : "cublas";
	} else if (cutlass && ntok > 1 && tok[1].n < 6 &&
		   strspn(tok[1].p, "0123456789") == tok[1].n) {
		char sm[8];
		snprintf(sm, sizeof(sm), "sm%.*s", (int)tok[1].n, tok[1].p);
		k.arch = arch_name(sm, strlen(sm));
		if (!strcmp(k.arch, "sm"))
			k.arch = "";
	}

	if (!strncmp(low, "cijk_", 5)) {
		/* Tensile: Cijk_<A layout>_<B layout>_<types>_..._MT<tile>_... */
		k.lib = "rocblas";
		for (gemm_at = 0; gemm_at + 1 < (int)ntok && strncmp(tok[gemm_at + 1].p, "mt", 2);
		     gemm_at++)
			;
	}
	if (strstr(low, "miopen"))
		k.lib = "miopen";
	if (gemm_at >= 0) {
		k.gemm = 1;
		math_of(low, &k);
		if (!strcmp(k.lib, "rocblas") && ntok > 3 && k.prec == PT_PREC_UNKNOWN) {
			/* the types token: HHS half in, BBS bf16, SS fp32, DD fp64 */
			char c = tok[3].p[0];
			k.prec = c == 'h' ? PT_PREC_FP16 : c == 'b' ? PT_PREC_BF16 :
				 c == 's' ? PT_PREC_FP32 : c == 'd' ? PT_PREC_FP64 : PT_PREC_UNKNOWN;
		}
	}
	/* the tokens up to the GEMM's, else all but the suffixes, in the
	 * name's own spelling (v, not low) */
	for (i = 0; i < ntok; i++) {
		const char *t = v + (tok[i].p - low);
		if (gemm_at >= 0 && (int)i > gemm_at)
			break;
		if (gemm_at < 0 && is_suffix_token(tok[i].p, tok[i].n, i == 0))
			continue;
		if (fn + tok[i].n + 2 >= sizeof(fam))
			break;
		if (fn)
			fam[fn++] = '_';
		memcpy(fam + fn, t, tok[i].n);
		fn += tok[i].n;
	}
done:
	fam[fn] = 0;
	if (cap) {
		fn = fn < cap - 1 ? fn : cap - 1;
		memcpy(out, fam, fn);
		out[fn] = 0;
	}
out:
	if (info)
		*info = k;
	return cap ? strlen(out) : 0;
}
