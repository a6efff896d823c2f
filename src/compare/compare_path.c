/*
 * compare_path.c - the critical path and the kernel families for
 * `perftracker compare` beside the owned-time findings (compare.c): each
 * side's critical path split (what the steps' longest chains of dependent
 * work were made of, from the summaries' "critical_path"), each GPU
 * function's ms per step on that path (a collective that overlaps compute
 * owns little of the step but can lengthen the path: compare.c's growth
 * findings), and what the kernel families say changed (the GEMMs'
 * precision, tensor cores or CUDA cores, library and GPU, from
 * src/model/family.c).  compare_report.c writes them.
 */
#include "compare_internal.h"
#include "../analysis/stats.h"
#include "../diagnose/diagnose.h"
#include "../util/xalloc.h"

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

/* The compare function of a function kept on a path: kernels by name (the
 * path keys them without the launch shape, as compare does), collectives
 * (NCCL kernels and CPU collectives such as gloo's) by group (commkind.c's
 * classification through the Communication section's groups), memory
 * operations by name; (size_t)-1 for other CPU functions and functions
 * compare does not know. */
static size_t path_func(cctx *c, const pt_cp_func *q, char *buf, size_t cap)
{
	if (!q->key)
		return (size_t)-1;
	switch (q->kind) {
	case PT_K_KERNEL:
		return cmp_func_lookup(c, q->key, PT_C_COMPUTE);
	case PT_K_COMM_KERNEL:
	case PT_K_CPU_COMM:
		pt_diag_comm_group(q->key, q->kind, buf, cap);
		return cmp_func_lookup(c, buf, PT_C_COMM);
	case PT_K_MEMCPY:
	case PT_K_MEMSET:
		return cmp_func_lookup(c, q->key, PT_C_MEMORY);
	default:
		return (size_t)-1;
	}
}

static int gpu_class(int cls)
{
	return cls == PT_C_COMPUTE || cls == PT_C_COMM || cls == PT_C_MEMORY;
}

#define PATH_NOISE_MIN_STEPS 4 /* as a function's own noise (compare.c) */

void cmp_func_path(cctx *c, size_t wi)
{
	const pt_cpath *cp = c->w[wi].s->cpath;
	size_t ns, j, k, f, *fi = NULL;
	double *v = NULL, sum;
	char buf[256];

	if (!cp || !cp->nsteps)
		return;
	ns = cp->nsteps;
	/* a worker with a path: a GPU function not kept on it was not on it
	 * (or too little to keep: the path keeps its 12 largest per step) */
	for (f = 0; f < c->nf; f++)
		if (!c->f[f].grp && gpu_class(c->f[f].cls))
			c->path[f * c->nw + wi] = 0;
	fi = x_malloc((cp->nfuncs + 1) * sizeof(*fi));
	v = x_malloc(2 * ns * sizeof(*v));
	if (!fi || !v) {
		c->oom = 1;
		goto out;
	}
	for (j = 0; j < cp->nfuncs; j++)
		fi[j] = path_func(c, &cp->funcs[j], buf, sizeof(buf));
	/* the kernels of one collective group add up, step by step */
	for (j = 0; j < cp->nfuncs; j++) {
		if (fi[j] == (size_t)-1 || !cp->funcs[j].ms)
			continue;
		f = fi[j];
		memset(v, 0, ns * sizeof(*v));
		for (k = j; k < cp->nfuncs; k++) {
			size_t i;
			if (fi[k] != f || !cp->funcs[k].ms)
				continue;
			for (i = 0; i < ns; i++)
				v[i] += cp->funcs[k].ms[i];
			fi[k] = (size_t)-1;
		}
		for (k = 0, sum = 0; k < ns; k++)
			sum += v[k];
		c->path[f * c->nw + wi] = sum / (double)ns;
		if (ns >= PATH_NOISE_MIN_STEPS)
			c->pnz[f * c->nw + wi] = cmp_spread(v, ns, v + ns);
	}
out:
	x_free(v);
	x_free(fi);
}

/* Median over side's workers of the finite values v[f * nw + w], NAN none. */
static double finite_median(cctx *c, const double *v, size_t f, int side)
{
	size_t wi, n = 0;

	for (wi = 0; wi < c->nw; wi++)
		if (c->w[wi].side == side && isfinite(v[f * c->nw + wi]))
			c->tmp[n++] = v[f * c->nw + wi];
	return n ? pt_robust_median(c->tmp, n, 0) : NAN;
}

void cmp_func_path_sides(cctx *c, size_t f)
{
	cfunc *u = &c->f[f];
	double na, nb;

	u->qa = u->qb = u->qthr = NAN;
	if (u->grp || !gpu_class(u->cls) || !c->ncp[0] || !c->ncp[1])
		return;
	u->qa = finite_median(c, c->path, f, 0);
	u->qb = finite_median(c, c->path, f, 1);
	na = finite_median(c, c->pnz, f, 0);
	nb = finite_median(c, c->pnz, f, 1);
	/* its own spread from step to step, as for its running time; without
	 * one (fewer than 4 steps) the step time's noise stands in */
	if (!isfinite(na) && !isfinite(nb))
		u->qthr = c->thr;
	else
		u->qthr = fmax(c->floor, c->o->noise_k * fmax(isfinite(na) ? na : 0,
							      isfinite(nb) ? nb : 0));
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
