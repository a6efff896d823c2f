/*
 * noise.c - the job's own noise, the bar a finding must clear to be
 * strong or moderate (docs/diagnose.md "Noise"), per step of its worker:
 *
 *   peer  - workers doing the same work differ by themselves: half the
 *           spread (p10 to p90, the range below 10 workers) of the other
 *           workers' ms per step in the finding's function (outside its
 *           group, for a cause grouped across workers);
 *   cpu   - CPU contention, for CPU-side findings (Python and CPU ops,
 *           runtime calls, CPU collectives): on a host whose tasks waited
 *           for a core P% of the time (psi_cpu, the kernel's 10 s average,
 *           from the node's samples), P x the worker's step / the job's
 *           workers on that host (the wait one of them can expect per
 *           step), or P x its own ms per step in the function (what
 *           waiting for a core can add to it), the larger (confidence.c
 *           also calls a function slower on several workers of such a
 *           host contention);
 *   self  - the worker's own step-to-step spread in the function: half the
 *           spread of its ms in it step by step (a cause repeats every
 *           step; a preempted thread or a page fault hits one);
 *   steps - the job's step-to-step spread (PT_STATS_SIGMA_PER_MAD x MAD of a worker's step
 *           times, half their range for two; the median worker's): a
 *           difference smaller than how much steps wobble by themselves
 *           changes nothing anyone sees.
 * A slow step is measured against its worker's own spread by its own rule
 * (steps.c), and against the cpu term alone (a median step standing for
 * the function's ms) when its cause is CPU-side;
 * one worker alone has no noise to measure here.
 *
 * A finding's noise is the largest that applies.  Flow: diag_merge ->
 * diag_noise -> diag_findings, which grades (confidence.c) and ranks.
 */
#include "internal.h"
#include "../model/samples.h"
#include "../util/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}


/* Half the spread of v[0..n) (sorted here): p10 to p90 from 10 values,
 * the whole range below. */
static double half_spread(double *v, size_t n)
{
	if (n < 2)
		return 0;
	qsort(v, n, sizeof(*v), cmp_dbl);
	if (n < 10)
		return (v[n - 1] - v[0]) / 2;
	return (v[(size_t)floor(0.9 * (double)(n - 1))] - v[(size_t)ceil(0.1 * (double)(n - 1))]) / 2;
}

/* psi_cpu (%) around the worker's window: the first sample at or after
 * its end (the kernel's avg10 covers the 10 s before it), else the last
 * before; NAN without one. */
static double psi_cpu(const pt_summary *s)
{
	const pt_series *ps;
	int64_t end;
	size_t i;

	if (!s->hw_series || !(ps = pt_samples_find(s->hw_series, "psi_cpu", -1, "")) || !ps->n)
		return NAN;
	end = (int64_t)((s->window_start_us + s->window_ms * 1e3) * 1e3);
	i = pt_samples_lower_bound(ps, end);
	if (i >= ps->n)
		i = ps->n - 1;
	return isfinite(ps->v[i]) && ps->v[i] >= 0 ? ps->v[i] : NAN;
}

/* The worker's step-to-step noise: PT_STATS_SIGMA_PER_MAD x MAD of its step times; half
 * their range for 2; 0 for fewer. */
static double step_noise(const pt_summary *s, double *tmp)
{
	size_t i, n = s->nsteps;
	double med;

	if (n == 2 && s->step_ms)
		return fabs(s->step_ms[0] - s->step_ms[1]) / 2;
	if (n < 3 || !s->step_ms)
		return 0;
	for (i = 0; i < n; i++)
		tmp[i] = s->step_ms[i];
	med = pt_robust_median(tmp, n, 0);
	for (i = 0; i < n; i++)
		tmp[i] = fabs(s->step_ms[i] - med);
	return PT_STATS_SIGMA_PER_MAD * pt_robust_median(tmp, n, 0);
}

static const char *host_of(const dctx *c, size_t i)
{
	return c->w[i].s->host ? c->w[i].s->host : "";
}

static int host_cmp(const void *a, const void *b, void *arg)
{
	return strcmp(host_of(arg, *(const size_t *)a), host_of(arg, *(const size_t *)b));
}

/* Is key k (df_key) CPU-side work: a Python or CPU op, a runtime call, a
 * CPU collective? */
static int cpu_side(const dctx *c, uint32_t k)
{
	if (k == UINT32_MAX)
		return 0;
	return c->keys[k].cls == PT_C_PYTHON || c->keys[k].cls == PT_C_RUNTIME ||
	       (c->keys[k].cls == PT_C_COMM && c->keys[k].kind == PT_K_CPU_COMM);
}

/* The worker's own ms in key k step by step, their half spread: a cause
 * repeats every step, a preempted thread or a page fault hits one.  0
 * without per-step values. */
static double self_noise(const dctx *c, uint32_t k, uint32_t wi, double *tmp)
{
	size_t i, j;

	if (k == UINT32_MAX)
		return 0;
	for (i = 0; i < c->keys[k].n; i++) {
		const dent *e = &c->ent[c->keys[k].off + i];
		const pt_pattern *p;
		if (e->w != wi)
			continue;
		p = dw_pat(&c->w[wi], e->p);
		if (!c->w[wi].whole || !p->step_ms || p->nstep_ms < 2 || p->nstep_ms != c->w[wi].s->nsteps)
			return 0;
		for (j = 0; j < p->nstep_ms; j++)
			tmp[j] = p->step_ms[j];
		return half_spread(tmp, p->nstep_ms);
	}
	return 0;
}

/* The worker's own ms per step in key k, 0 without it. */
static double own_ms(const dctx *c, uint32_t k, uint32_t wi)
{
	size_t i;

	for (i = 0; k != UINT32_MAX && i < c->keys[k].n; i++) {
		const dent *e = &c->ent[c->keys[k].off + i];
		if (e->w == wi)
			return dw_pat(&c->w[wi], e->p)->total_ms / dw_steps(&c->w[wi]);
	}
	return 0;
}

/* The other workers' ms per step in key k, their half spread. */
static double peer_noise(const dctx *c, uint32_t k, uint32_t wi, double *tmp)
{
	size_t i, n = 0;

	if (k == UINT32_MAX)
		return 0;
	for (i = 0; i < c->keys[k].n; i++) {
		const dent *e = &c->ent[c->keys[k].off + i];
		const dworker *w = &c->w[e->w];
		if (e->w == wi || (c->gmark && c->gmark[e->w]))
			continue;
		tmp[n++] = dw_pat(w, e->p)->total_ms / dw_steps(w);
	}
	return half_spread(tmp, n);
}

void diag_noise(dctx *c)
{
	double *tmp = NULL, *psi = NULL, *psteps = NULL, jobsteps, jobsteps3;
	size_t i, j, n3, maxsteps = 1, *nhost = NULL, *order = NULL;

	for (i = 0; i < c->nw; i++)
		if (c->w[i].s->nsteps > maxsteps)
			maxsteps = c->w[i].s->nsteps;
	tmp = x_malloc(((c->nw > maxsteps ? c->nw : maxsteps) + 1) * sizeof(*tmp));
	psi = x_malloc((c->nw + 1) * sizeof(*psi));
	nhost = x_calloc(c->nw + 1, sizeof(*nhost));
	order = x_malloc((c->nw + 1) * sizeof(*order));
	psteps = x_malloc((c->nw + 1) * sizeof(*psteps));
	if (!tmp || !psi || !nhost || !order || !psteps) {
		c->oom = 1;
		goto out;
	}
	/* the job's workers per host: a sort of their indexes by host */
	for (i = 0; i < c->nw; i++) {
		psi[i] = psi_cpu(c->w[i].s);
		order[i] = i;
	}
	qsort_r(order, c->nw, sizeof(*order), host_cmp, c);
	for (i = 0; i < c->nw; i = j) {
		const char *h = host_of(c, order[i]);
		for (j = i + 1; j < c->nw && !strcmp(host_of(c, order[j]), h); j++)
			;
		for (size_t k = i; k < j; k++)
			nhost[order[k]] = h[0] ? j - i : 1;
	}
	/* the job's step-to-step spread: the median worker's */
	for (i = 0; i < c->nw; i++)
		psteps[i] = step_noise(c->w[i].s, tmp);
	jobsteps = pt_robust_median(psteps, c->nw, 0);
	/* ... and the same over the workers with 3 steps or more only (a MAD,
	 * which one late step does not move: an intermittent straggler's own
	 * lateness would widen the half range of two) */
	for (i = n3 = 0; i < c->nw; i++)
		if (c->w[i].s->nsteps >= 3)
			psteps[n3++] = step_noise(c->w[i].s, tmp);
	jobsteps3 = n3 ? pt_robust_median(psteps, n3, 0) : 0;
	for (i = 0; i < c->nf; i++) {
		dfinding *f = &c->f[i];
		uint32_t wi = df_worker(c, f), key;
		const dworker *w;
		double peer, self, cpu = 0;
		int cpuside;

		f->noise_ms = NAN;
		f->noise_src = NULL;
		f->psi = NAN;
		if (wi == UINT32_MAX || f->cat == DC_SUMMARY)
			continue;
		if (f->cat == DC_LOCKSTEP) {
			/* the others' waits already single the straggler out;
			 * what each of them waits per step must still exceed how
			 * much steps wobble by themselves (a rank a few ms late
			 * in a CPU-contended job, beside the real straggler) */
			if (c->nw >= 2 && jobsteps3 > 0) {
				f->noise_ms = jobsteps3;
				f->noise_src = "the job's step-to-step spread";
			}
			continue;
		}
		w = &c->w[wi];
		/* a slow step is slow beyond its worker's step-to-step spread
		 * by its own rule (steps.c: 3.5 robust deviations); one
		 * worker's where-the-time-goes and occupancy findings describe
		 * it, with no other worker to differ from */
		if (c->nw < 2 || f->cat == DC_GPU_IDLE)
			continue;
		key = df_key(c, f);
		cpuside = cpu_side(c, key);
		if (f->cat == DC_STEPS) {
			/* ... except that on a host whose tasks wait for a core
			 * a CPU-side step can be slow by that waiting alone: the
			 * wait one of its workers can expect per step (the
			 * exports of the workers that ended their window first
			 * take the cores from those still in their last step:
			 * 4 gloo workers on 2 cores, torch 2, every window) */
			w = &c->w[wi];
			if (f->fkind >= 0)
				cpuside = pt_kind_class(f->fkind) == PT_C_PYTHON ||
					  pt_kind_class(f->fkind) == PT_C_RUNTIME ||
					  f->fkind == PT_K_CPU_COMM;
			/* a slow step that no function explains, on a host
			 * contended enough that confidence.c calls a function
			 * slower on several of its workers contention */
			if (!f->function[0] && psi[wi] >= CONTENDED_PSI)
				cpuside = 1;
			if (cpuside && isfinite(psi[wi]) && nhost[wi] && psi[wi] > 0) {
				f->psi = psi[wi];
				/* as for a function: the larger of the wait one of
				 * the host's workers can expect per step and what
				 * waiting for a core can add to the CPU-side work,
				 * here a whole median step (f->others), which the
				 * cause on its critical path spans at most */
				f->noise_ms = psi[wi] / 100 * (w->window_ms / dw_steps(w)) /
					      (double)nhost[wi];
				if (isfinite(f->others) && psi[wi] / 100 * f->others > f->noise_ms)
					f->noise_ms = psi[wi] / 100 * f->others;
				f->noise_src = "CPU contention on its host";
			}
			continue;
		}
		/* a group is compared with the workers outside it */
		df_group_mark(c, f, 1);
		peer = peer_noise(c, key, wi, tmp);
		df_group_mark(c, f, 0);
		self = self_noise(c, key, wi, tmp);
		if (cpuside && isfinite(psi[wi]) && nhost[wi]) {
			double own = own_ms(c, key, wi);
			cpu = psi[wi] / 100 * (w->window_ms / dw_steps(w)) / (double)nhost[wi];
			if (psi[wi] / 100 * own > cpu)
				cpu = psi[wi] / 100 * own;
			f->psi = psi[wi];
		}
		f->noise_ms = peer;
		f->noise_src = "the other workers' spread in it";
		if (self > f->noise_ms) {
			f->noise_ms = self;
			f->noise_src = "its own step-to-step spread in it";
		}
		if (jobsteps > f->noise_ms) {
			f->noise_ms = jobsteps;
			f->noise_src = "the job's step-to-step spread";
		}
		if (cpu > f->noise_ms) {
			f->noise_ms = cpu;
			f->noise_src = "CPU contention on its host";
		}
	}
out:
	x_free(psteps);
	x_free(order);
	x_free(nhost);
	x_free(psi);
	x_free(tmp);
}
