/*
 * compare_path.c - two run-wide views for `perftracker compare` beside the
 * function findings (compare.c): each side's critical path split (what the
 * steps' longest chains of dependent work were made of, from the
 * summaries' "critical_path"), and what the kernel families say changed
 * (the GEMMs' precision, tensor cores or CUDA cores, library and GPU, from
 * src/model/family.c).  compare_report.c writes both.
 */
#include "compare_internal.h"
#include "../analysis/stats.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void cmp_critical_path(cctx *c)
{
	int side, k;
	size_t wi, n;

	for (side = 0; side < 2; side++) {
		for (k = 0; k < PT_CP_NKINDS; k++) {
			for (wi = 0, n = 0; wi < c->nw; wi++) {
				const pt_cpath *cp = c->w[wi].s->cpath;
				double sum = 0;
				size_t j;
				if (c->w[wi].side != side || !cp || !cp->nsteps)
					continue;
				for (j = 0; j < cp->nsteps; j++)
					sum += cp->steps[j].split[k];
				c->tmp[n++] = sum / (double)cp->nsteps;
			}
			c->ncp[side] = n;
			c->cp[side][k] = n ? pt_robust_median(c->tmp, n, 0) : 0;
		}
	}
}

#define NLIB 8
static const char *const libs[NLIB] = { "", "cublas", "cublasLt", "cutlass", "cudnn",
					"triton", "rocblas", "miopen" };

static int lib_index(const char *l)
{
	int i;

	for (i = 1; i < NLIB; i++)
		if (!strcmp(l, libs[i]))
			return i;
	return 0;
}

/* Index of the largest of v[0..n), -1 when all are 0. */
static int argmax(const double *v, int n)
{
	int i, b = -1;

	for (i = 0; i < n; i++)
		if (v[i] > 0 && (b < 0 || v[i] > v[b]))
			b = i;
	return b;
}

/* "tf32 on tensor cores", "fp32 on CUDA cores", "fp16". */
static void math_words(char *out, size_t cap, int prec, int tc)
{
	snprintf(out, cap, "%s%s", pt_precision_name((pt_precision)prec),
		 tc == 1 ? " on tensor cores" : tc == 0 ? " on CUDA cores" : "");
}

void cmp_family_hint(cctx *c)
{
	/* per side: GEMM ms per step by precision x (CUDA cores, tensor cores,
	 * unknown), by library, by GPU generation */
	double gp[2][PT_PREC_COUNT * 3], gl[2][NLIB], all[2] = { 0, 0 };
	const char *arch[2] = { "", "" }, *dev[2] = { "", "" };
	double archms[2] = { 0, 0 };
	size_t f, wi, len = 0;
	int side;
	char a[64], b[64];

	memset(gp, 0, sizeof(gp));
	memset(gl, 0, sizeof(gl));
	c->hint[0] = 0;
	for (f = 0; f < c->nf; f++) {
		const cfunc *u = &c->f[f];
		double ms[2] = { 0, 0 };
		int t;

		if (u->grp || u->cls != PT_C_COMPUTE || !u->kf.gemm)
			continue;
		for (wi = 0; wi < c->nw; wi++)
			ms[c->w[wi].side] += c->exe[f * c->nw + wi] / (double)c->nside[c->w[wi].side];
		t = u->kf.tensor_cores < 0 ? 2 : u->kf.tensor_cores;
		for (side = 0; side < 2; side++) {
			gp[side][u->kf.prec * 3 + t] += ms[side];
			gl[side][lib_index(u->kf.lib)] += ms[side];
			all[side] += ms[side];
			if (u->kf.arch[0] && ms[side] > archms[side]) {
				archms[side] = ms[side];
				arch[side] = u->kf.arch;
			}
		}
	}
	for (wi = 0; wi < c->nw; wi++) {
		const char *d = c->w[wi].s->device;
		side = c->w[wi].side;
		if (d && d[0] && !dev[side][0])
			dev[side] = d;
	}
	if (all[0] > 0 && all[1] > 0) {
		int pa = argmax(gp[0], PT_PREC_COUNT * 3), pb = argmax(gp[1], PT_PREC_COUNT * 3);
		int la = argmax(gl[0], NLIB), lb = argmax(gl[1], NLIB);

		if (pa != pb && pa / 3 != PT_PREC_UNKNOWN && pb / 3 != PT_PREC_UNKNOWN) {
			math_words(a, sizeof(a), pa / 3, pa % 3 == 2 ? -1 : pa % 3);
			math_words(b, sizeof(b), pb / 3, pb % 3 == 2 ? -1 : pb % 3);
			len += (size_t)snprintf(c->hint + len, sizeof(c->hint) - len,
						"the GEMMs run mostly in %s in NEW (%.0f%% of their time), "
						"in %s in BASELINE (%.0f%%)",
						b, 100 * gp[1][pb] / all[1], a, 100 * gp[0][pa] / all[0]);
			if ((pa % 3 == 1) && pb % 3 == 0 && pb / 3 == PT_PREC_FP32)
				len += (size_t)snprintf(c->hint + len, sizeof(c->hint) - len,
							": check autocast/AMP and "
							"torch.backends.cuda.matmul.allow_tf32 (TF32 needs "
							"an Ampere or newer GPU)");
		} else if (la != lb && la > 0 && lb > 0) {
			len += (size_t)snprintf(c->hint + len, sizeof(c->hint) - len,
						"the GEMMs run mostly in %s in NEW, in %s in BASELINE",
						libs[lb], libs[la]);
		}
	}
	if (len >= sizeof(c->hint))
		len = sizeof(c->hint) - 1;
	if (dev[0][0] && dev[1][0] && strcmp(dev[0], dev[1]))
		snprintf(c->hint + len, sizeof(c->hint) - len, "%sthe GPUs differ: %s in BASELINE, %s in NEW",
			 len ? "; " : "", dev[0], dev[1]);
	else if (arch[0][0] && arch[1][0] && strcmp(arch[0], arch[1]))
		snprintf(c->hint + len, sizeof(c->hint) - len,
			 "%sthe GEMM kernels are built for %s in BASELINE and %s in NEW: another GPU",
			 len ? "; " : "", arch[0], arch[1]);
}
