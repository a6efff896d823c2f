/*
 * watch.c - the always-on watch's evidence in the diagnosis (issue 32,
 * docs/watch.md).  The watch (src/watch, run by the node agents) names a
 * persistent straggler from its arrivals at collectives before anyone
 * profiles; the trigger passes what it saw when the profile began
 * (pt_diag_options.watch), and here, after ranking, the first finding
 * about that worker cites it beside the profile's own cause: since when,
 * how late, at which collective, its score.  Nothing is found here.
 */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../util/clock.h"
#include "../util/xalloc.h"

/* The index of the worker of rank r, -1 when no summary has it. */
static long worker_of_rank(const dctx *c, int64_t r)
{
	for (size_t i = 0; i < c->nw; i++)
		if (c->w[i].s->rank == r)
			return (long)i;
	return -1;
}

/* Is the finding about worker wi (its own, or one of its group's)? */
static int about(const dctx *c, const dfinding *f, size_t wi)
{
	if (f->worker && !strcmp(f->worker, c->w[wi].id))
		return 1;
	for (size_t i = 0; i < f->ngroup; i++)
		if (f->group[i] == wi)
			return 1;
	return 0;
}

/* The evidence's sentence (malloc'd; NULL out of memory). */
static char *sentence(const pt_diag_watch *w)
{
	char since[96] = "", hms[32], at[256] = "", buf[640];

	if (pt_clock_utc_hms(w->since, hms, sizeof(hms))[0])
		snprintf(since, sizeof(since), w->since_step >= 0 ? "since %s (step %lld)" : "since %s",
			 hms, (long long)w->since_step);
	if (w->at_name && w->at_name[0])
		snprintf(at, sizeof(at), ", at most %.1f ms at %s (process group %s, sequence %lld)",
			 w->late_max_s * 1e3, w->at_name, w->at_pg && w->at_pg[0] ? w->at_pg : "?",
			 (long long)w->at_seq);
	snprintf(buf, sizeof(buf),
		 "the always-on watch saw rank %lld arrive last at the collectives%s%s: "
		 "%.1f ms after the median rank per step (median)%s; straggler score %.2f, "
		 "the others waited %.1f GPU-seconds a minute for it",
		 (long long)w->rank, since[0] ? " " : "", since, w->late_s * 1e3, at, w->score,
		 w->lost_gpu_s_per_min);
	return x_strndup(buf, strlen(buf));
}

/* Append the watch's evidence about w to f. */
static int cite(dctx *c, dfinding *f, const pt_diag_watch *w, const char *id)
{
	devidence *e;

	if (f->nev + 1 > f->evcap && X_GROW(f->ev, f->evcap, f->nev + 1))
		return -1;
	e = &f->ev[f->nev];
	memset(e, 0, sizeof(*e));
	e->explanation = sentence(w);
	if (!e->explanation)
		return -1;
	e->kind = PT_EV_WATCH;
	e->category = "Watch";
	e->worker = id;
	e->function = w->at_name ? w->at_name : "";
	e->metric = "lateness (ms)";
	e->value = w->late_s * 1e3;
	e->others = w->score;
	e->impact_ms = NAN;
	f->nev++;
	return 0;
}

void diag_watch(dctx *c)
{
	for (size_t k = 0; k < c->o->nwatch; k++) {
		const pt_diag_watch *w = &c->o->watch[k];
		long wi = worker_of_rank(c, w->rank);

		if (wi < 0)
			continue;
		/* c->f is ranked: the first finding about it */
		for (size_t i = 0; i < c->nf; i++) {
			if (!about(c, &c->f[i], (size_t)wi))
				continue;
			if (cite(c, &c->f[i], w, c->w[wi].id))
				c->oom = 1;
			break;
		}
	}
}
