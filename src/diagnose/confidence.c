/*
 * confidence.c - how strong each finding is: the "confidence" member that
 * pt_diagnose adds to every finding about a worker once diag_findings has
 * ranked them (docs/diagnose.md "Confidence").  Three cues, each good /
 * fair / poor:
 *   lost   - the time lost as a share of the worker's window;
 *   apart  - for a share of time, the worker's share of the function
 *            against the highest share any other worker has; for another
 *            metric, the value against the others' median; poor when other
 *            workers are flagged for the same function (a spread, not one
 *            outlier);
 *   steady - whether every call is slower (p10 above the others' median
 *            duration), most calls (median above it) or only some (a tail,
 *            as CPU contention or a preempted thread gives).
 * strong: no poor cue and two good ones; weak: two poor cues, or one
 * and no good one; else moderate; then weak whatever the cues when the
 * finding's time per step is within the job's noise (noise.c), when its
 * what-if saves nothing that shows, or it is a symptom left without its
 * straggler's finding.  With a what-if (a straggler, a cause grouped
 * across workers) the time lost is what the what-if saves: one answer to
 * "what does it cost".  A cause grouped across workers (merge.c) is
 * graded against the workers outside its group.  Works from the finding's
 * worker, category and function key only, so findings of any section get
 * it.  Flow: diag_merge -> diag_noise -> diag_grade (here, into each
 * finding's conf) -> diag_findings, which ranks and writes them.
 */
#include "internal.h"
#include "sections.h"
#include "../util/xalloc.h"
#include "../report/keys.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { POOR, FAIR, GOOD };


static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Findings by (category, function), to count each one's namesakes. */
static int cmp_same(const void *a, const void *b)
{
	const dfinding *x = *(const dfinding *const *)a, *y = *(const dfinding *const *)b;
	int r = (int)x->cat - (int)y->cat;

	return r ? r : strcmp(x->function, y->function);
}

/* What grading one finding learns about its worker and function. */
typedef struct grading {
	const dfinding *f;
	const dworker *w;
	uint32_t wi;                 /* w's index in c->w */
	const pt_pattern *mine;      /* the function on w, NULL: none */
	double lost;                 /* impact as a share of w's window */
	double next;                 /* highest share of any other worker */
	double omed;                 /* the other workers' median duration */
	size_t nmed;                 /* how many other workers run it */
	double apart;                /* how far apart (x), NAN: unknown */
	const char *steady;          /* which calls are slower */
	size_t same;                 /* other workers flagged for it */
	int within;                  /* measured against the worker itself */
} grading;

/* The function on the other workers: g->mine, g->next (the highest
 * share), g->omed (their median duration) and g->nmed. */
static void others_on_key(dctx *c, grading *g)
{
	uint32_t ki = df_key(c, g->f);
	double *med;
	size_t i;

	if (ki == UINT32_MAX)
		return;
	med = c->m[0].tmp; /* scratch of nw doubles, unused after the sections */
	for (i = 0; i < c->keys[ki].n; i++) {
		const dent *e = &c->ent[c->keys[ki].off + i];
		const pt_pattern *p = dw_pat(&c->w[e->w], e->p);

		if (e->w == g->wi) {
			g->mine = p;
			continue;
		}
		if (c->gmark && c->gmark[e->w])
			continue; /* the rest of its group */
		if (p->bottleneck > g->next)
			g->next = p->bottleneck;
		if (med)
			med[g->nmed++] = p->median_ms;
	}
	if (g->nmed) {
		size_t n = g->nmed;

		qsort(med, n, sizeof(*med), cmp_dbl);
		g->omed = n % 2 ? med[n / 2] : (med[n / 2 - 1] + med[n / 2]) / 2;
	}
}

/* A finding's metric by name; NAN none. */
static double metric_of(const dfinding *f, const char *name)
{
	size_t i;

	for (i = 0; i < f->nm; i++)
		if (f->m[i].name && !strcmp(f->m[i].name, name))
			return f->m[i].value;
	return NAN;
}

/* A slow-step finding's distance from its worker's typical steps, in
 * their robust deviations (steps.c's "robust deviations"); NAN none. */
static double step_devs(const dfinding *f)
{
	return metric_of(f, "robust deviations");
}

/* How far apart the worker is (x), NAN when nothing says. */
static double apart_of(const grading *g)
{
	const dfinding *f = g->f;

	if (f->cat == DC_STEPS && !strcmp(f->metric, "slow steps (job)") &&
	    metric_of(f, "slow step, median (ms)") > 0 && f->others > 0)
		/* the job's: the numbers its sentence states */
		return metric_of(f, "slow step, median (ms)") / f->others;
	if (f->cat == DC_STEPS)
		/* its slow steps against its median step: "slow steps" and
		 * "slow steps (job)" count them (impact: their extra ms),
		 * "slowest step" is one in ms */
		return !(f->others > 0) ? NAN : !strncmp(f->metric, PT_KEY_SLOW_STEPS, 10) && f->value > 0 ?
			(f->others + f->impact_ms / f->value) / f->others : f->value / f->others;
	if (g->mine && strstr(f->metric, "bottleneck"))
		/* a share of time: against the nearest other worker */
		return g->next > 0 ? g->mine->bottleneck / g->next : INFINITY;
	if (f->value > 0 && f->others > 0)
		/* a duration, bandwidth or utilization: against the others' median,
		 * whichever way costs time */
		return f->value > f->others ? f->value / f->others : f->others / f->value;
	return NAN;
}

/* Which calls are slower (g->steady) and the steady cue. */
static int steady_cue(const dctx *c, grading *g)
{
	const pt_pattern *mine = g->mine;

	g->steady = "unknown";
	if (!mine)
		return FAIR;
	if (!g->nmed && mine->cls == PT_C_PYTHON) {
		/* summaries drop stacks below 0.05%: absent is not zero */
		g->steady = "the other workers spend little or no time in it";
		return FAIR;
	}
	if (!g->nmed) {
		g->steady = g->f->ngroup > 1 ? "only these workers run it" : "only this worker runs it";
		return mine->count >= (g->w->s->nsteps ? g->w->s->nsteps : 1) ? GOOD : FAIR;
	}
	if (pt_summary_whole(g->w->s) && mine->p10_ms > g->omed * (1 + c->o->rel)) {
		g->steady = "every call is slower";
		return GOOD;
	}
	if (mine->median_ms > g->omed * (1 + c->o->rel)) {
		g->steady = "most calls are slower";
		return FAIR;
	}
	g->steady = "only some calls are slower";
	return POOR;
}

/* The level from the three cues (lost, apart, steady): strong, moderate
 * or weak (see the top of the file). */
static const char *level_of(const dctx *c, grading *g)
{
	const dfinding *f = g->f;
	int cue_lost, cue_apart = FAIR, cue_steady, good, poor;

	cue_lost = g->lost >= 0.10 ? GOOD : g->lost >= 0.03 ? FAIR : POOR;
	if (!isnan(g->apart))
		cue_apart = g->apart >= 3 ? GOOD : g->apart >= 1.5 ? FAIR : POOR;
	cue_steady = steady_cue(c, g);
	/* On a host whose tasks wait for a core, every call of a CPU-side
	 * function is slower on whichever process waits most: steady calls
	 * say nothing of a cause there (the demo's rank 1, its load_batch
	 * sleep 3.1 ms per step over the others' with 1.13x apart, was
	 * "moderate" in 1 run of 3 on this ground alone). */
	if (cue_steady == GOOD && isfinite(f->psi) && f->psi >= CONTENDED_PSI)
		cue_steady = FAIR;
	if (g->same || df_group_spread(c, f))
		cue_apart = POOR;
	if (f->cat == DC_LOCKSTEP) {
		/* the others' wait for it, against what they wait for anyone */
		cue_steady = FAIR;
		cue_apart = !(f->others > 0) || f->value >= 3 * f->others ? GOOD :
			    f->value >= 1.5 * f->others ? FAIR : POOR;
	} else if (g->within) {
		/* measured against the worker itself (its other steps, its own
		 * window): no other worker to be apart from or steady against */
		cue_steady = FAIR;
		if (f->cat == DC_STEPS && isfinite(g->apart))
			cue_apart = g->apart >= 1.5 ? GOOD : g->apart >= 1.1 ? FAIR : POOR;
		else
			cue_apart = FAIR;
		/* slow steps: how far above the typical steps' own spread
		 * (a step far slower than them is named however they spread;
		 * their spread says how sure that is) */
		if (f->cat == DC_STEPS && isfinite(step_devs(f)))
			cue_steady = step_devs(f) >= c->o->z ? GOOD :
				     step_devs(f) >= c->o->z / 2 ? FAIR : POOR;
	}
	/* a slowest step under the slow-step threshold is within the
	 * worker's own step-to-step spread, whatever it costs */
	if (f->cat == DC_STEPS && !strcmp(f->metric, "slowest step"))
		return "weak";
	good = (cue_lost == GOOD) + (cue_apart == GOOD) + (cue_steady == GOOD);
	poor = (cue_lost == POOR) + (cue_apart == POOR) + (cue_steady == POOR);
	/* One poor cue with nothing good (some calls slower and another worker
	 * close: CPU contention, noise) is weak too. */
	return poor >= 2 || (poor && !good) ? "weak" : !poor && good >= 2 ? "strong" : "moderate";
}

/* The evidence sentence into ev: lost, apart, steady. */
static void evidence(const dctx *c, const grading *g, char *ev, size_t cap)
{
	const dfinding *f = g->f;
	const pt_pattern *mine = g->mine;
	char p1[32], p2[32];
	int n = snprintf(ev, cap, "loses %s of its time", df_pct(g->lost, p1, sizeof(p1)));

	if (f->cat == DC_LOCKSTEP) {
		if (!strcmp(f->metric, "others_waited_ms"))
			snprintf(ev + n, cap - (size_t)n, "; the others waited %.3g ms each "
				 "for it, %.3g ms for a median worker", f->value,
				 f->others > 0 ? f->others : 0.0);
		return;
	}
	if (g->within) {
		if (f->cat == DC_STEPS && isfinite(g->apart) && !isnan(step_devs(f)))
			snprintf(ev + n, cap - (size_t)n, "; %.2fx its typical step, %.3g robust "
				 "deviations of the typical steps above it", g->apart, step_devs(f));
		else if (f->cat == DC_STEPS && isfinite(g->apart) && !strcmp(f->metric, "slowest step"))
			snprintf(ev + n, cap - (size_t)n, "; %.2fx its typical step, under the "
				 "slow-step threshold", g->apart);
		else if (f->cat == DC_STEPS && isfinite(g->apart))
			snprintf(ev + n, cap - (size_t)n, "; %.2fx its typical step", g->apart);
		return;
	}
	if (f->ngroup > 1)
		n += snprintf(ev + n, cap - (size_t)n, " (the worst of the %zu workers with it%s)",
			      f->ngroup, df_group_spread(c, f) ? ", more than a tenth of the job's: a "
			      "spread, not one outlier" : "");
	if (g->same)
		n += snprintf(ev + n, cap - (size_t)n, "; %zu other worker%s flagged "
			      "for the same function", g->same, g->same == 1 ? " is" : "s are");
	else if (mine && g->next > 0 && strstr(f->metric, "bottleneck"))
		n += snprintf(ev + n, cap - (size_t)n, "; %s of its time in it, at most "
			      "%s on any %s", df_pct(mine->bottleneck, p1, sizeof(p1)),
			      df_pct(g->next, p2, sizeof(p2)),
			      f->ngroup > 1 && !df_group_spread(c, f) ? "worker outside them" :
			      "other worker");
	else if (isfinite(g->apart) && f->cause == PT_CAUSE_SLOW_P2P && f->nargs > 1)
		/* p2p.c: against the other destinations, sources or pairs */
		n += snprintf(ev + n, cap - (size_t)n, "; %.2gx slower than the other %s (median)",
			      g->apart, f->args[1]);
	else if (isfinite(g->apart)) {
		/* the metric without its unit: "median cost per execution" */
		size_t ml = strcspn(f->metric, "(");

		while (ml > 0 && f->metric[ml - 1] == ' ')
			ml--;
		n += snprintf(ev + n, cap - (size_t)n, "; %.2gx the other workers' "
			      "%.*s", g->apart, (int)ml, f->metric);
	}
	else if (mine && !g->nmed)
		n += snprintf(ev + n, cap - (size_t)n, "; %s", g->steady);
	else if (mine)
		n += snprintf(ev + n, cap - (size_t)n, "; no other worker spends time "
			      "in it");
	if (mine && g->nmed && n > 0 && (size_t)n < cap)
		snprintf(ev + n, cap - (size_t)n, "; %s", g->steady);
}

/* Above the job's noise?  A finding whose time lost per step is within
 * it (noise.c) may be noise, whatever its cues: weak. */
static int within_noise(const dctx *c, const dfinding *f)
{
	return isfinite(f->noise_ms) && f->noise_ms > 0 &&
	       df_cost_per_step(c, f) <= f->noise_ms;
}

/* A what-if that saves nothing the sentences can show: its step and the
 * step it replaces are the same at 0.01 ms. */
static int what_if_nil(const dfinding *f)
{
	return f->has_what_if && isfinite(f->what_if_ms) && isfinite(f->instead_ms) &&
	       llround(f->what_if_ms * 100) >= llround(f->instead_ms * 100);
}

static void grade(dctx *c, dfinding *f, size_t same)
{
	grading g;
	const char *level;
	char ev[640], nb[32], ib[32];
	/* other workers with it: flagged for the function, or in its group */
	size_t n, nsame = same + (f->ngroup > 1 ? f->ngroup - 1 : 0);

	/* a fact about the traces (unreadable, other steps, collectives that
	 * do not match) or the job (a CPU-only run), with no time lost, is not
	 * graded: it is said, never filed as possibly noise */
	if (!f->worker || f->cat == DC_SUMMARY || !(f->impact_ms > 0 || f->has_what_if))
		return;
	memset(&g, 0, sizeof(g));
	g.f = f;
	g.same = same;
	g.omed = NAN;
	g.wi = df_worker(c, f);
	g.w = g.wi != UINT32_MAX ? &c->w[g.wi] : NULL;
	if (!g.w || !(g.w->window_ms > 0))
		return;
	/* A share of its own time, never above 1.  A slow call's impact is
	 * at most the worker's time in the function inside the window
	 * (metric.c: calls that reach outside the window made it pass 40
	 * times the window, "4214.6% of its time", issue 29); a finding with
	 * a what-if takes its share of the step below; the bound stays for
	 * time measured elsewhere. */
	g.lost = fmin(f->impact_ms / g.w->window_ms, 1.0);
	/* One answer to "what does it cost": with a what-if, the share of the
	 * step it saves (the sentence's "-8.1%"). */
	if (f->has_what_if && f->instead_ms > 0)
		g.lost = fmax(0, fmin(df_cost_per_step(c, f) / f->instead_ms, 1.0));
	/* Findings that compare a worker with itself: its steps, or the only
	 * worker there is. */
	g.within = c->nw < 2 || f->cat == DC_STEPS || f->cat == DC_GPU_IDLE;
	others_on_key(c, &g);
	g.apart = apart_of(&g);
	level = level_of(c, &g);
	evidence(c, &g, ev, sizeof(ev));
	n = strlen(ev);
	if (what_if_nil(f)) {
		/* "a step would take 16.13 ms instead of 16.13 ms" is no cost */
		level = "weak";
		snprintf(ev + n, sizeof(ev) - n, "; without it a step would take no less "
			 "(%.2f ms)", f->instead_ms);
	} else if (f->caused_by) {
		/* a symptom whose straggler has no finding to hold it */
		level = "weak";
		snprintf(ev + n, sizeof(ev) - n, "; its waiting for %s", f->caused_by);
	} else if (within_noise(c, f)) {
		level = "weak";
		snprintf(ev + n, sizeof(ev) - n, "; %s per step, within the job's noise (%s per "
			 "step: %s)", pt_fmt_ms(df_cost_per_step(c, f), ib, sizeof(ib)),
			 pt_fmt_ms(f->noise_ms, nb, sizeof(nb)), f->noise_src ? f->noise_src : "");
	} else if (nsame && f->psi >= CONTENDED_PSI) {
		/* the same CPU-side function slower on several workers of a
		 * host whose tasks wait for a core: which processes share a
		 * core, not a cause on one of them */
		level = "weak";
		snprintf(ev + n, sizeof(ev) - n, "; slower on %zu other worker%s too, on a host "
			 "whose tasks waited for a core %.0f%% of the time: CPU contention", nsame,
			 nsame == 1 ? "" : "s", f->psi);
	}
	f->conf.level = level;
	f->conf.lost = g.lost;
	f->conf.apart = g.apart;
	f->conf.same = same;
	f->conf.calls = g.steady;
	x_free(f->conf.evidence);
	f->conf.evidence = x_strndup(ev, strlen(ev));
	if (!f->conf.evidence)
		c->oom = 1;
}

void diag_grade(dctx *c)
{
	const dfinding **by;
	size_t *same, i, a, b;

	if (!c->nf)
		return;
	by = x_malloc(c->nf * sizeof(*by));
	same = x_calloc(c->nf, sizeof(*same));
	if (!by || !same) {
		c->oom = 1;
		goto out;
	}
	/* other workers flagged for the same function: a sort, not n^2 */
	for (i = 0; i < c->nf; i++)
		by[i] = &c->f[i];
	qsort(by, c->nf, sizeof(*by), cmp_same);
	for (a = 0; a < c->nf; a = b) {
		size_t nw = 0;

		for (b = a; b < c->nf && !cmp_same(&by[a], &by[b]); b++)
			nw += by[b]->worker != NULL;
		for (i = a; i < b; i++)
			same[by[i] - c->f] = by[i]->worker && nw ? nw - 1 : 0;
	}
	for (i = 0; i < c->nf; i++) {
		dfinding *f = &c->f[i];
		uint32_t wi = df_worker(c, f);
		/* with a what-if, the time lost is what it saves: the impact
		 * that ranks it too */
		if (f->has_what_if && wi != UINT32_MAX && isfinite(f->what_if_ms) &&
		    isfinite(f->instead_ms))
			f->impact_ms = fmax(0, df_cost_per_step(c, f)) * dw_steps(&c->w[wi]);
		/* a group against the workers outside it */
		df_group_mark(c, f, 1);
		grade(c, f, same[i]);
		df_group_mark(c, f, 0);
	}
out:
	x_free(same);
	x_free(by);
}
