/*
 * stepcheck.c - do the workers' windows cover the same steps?  A worker
 * that profiled other step numbers than the others (it armed late, its
 * count started elsewhere, it skipped a step) is compared with them
 * across different iterations; the report says so with one "summary"
 * finding per such worker, before the diagnoses, so that its numbers are
 * read with care.  Runs on the summaries only (steps[].number).
 */
#include "internal.h"
#include "sections.h"
#include "../util/strbuf.h"
#include "../util/xalloc.h"

#include <stdio.h>
#include <string.h>

static int same_steps(const pt_summary *a, const pt_summary *b)
{
	return a->nsteps == b->nsteps &&
	       (!a->nsteps || !memcmp(a->step_numbers, b->step_numbers,
				      a->nsteps * sizeof(*a->step_numbers)));
}

/* "12-13", "12, 14, 15" (at most 6 numbers, then "..."), "none". */
static void steps_text(pt_sb *sb, const pt_summary *s)
{
	int contiguous = 1;

	if (!s->nsteps) {
		pt_sb_adds(sb, "none");
		return;
	}
	for (size_t i = 1; i < s->nsteps; i++)
		contiguous &= s->step_numbers[i] == s->step_numbers[i - 1] + 1;
	if (contiguous && s->nsteps > 1) {
		pt_sb_addf(sb, "%lld-%lld", (long long)s->step_numbers[0],
			   (long long)s->step_numbers[s->nsteps - 1]);
		return;
	}
	for (size_t i = 0; i < s->nsteps && i < 6; i++)
		pt_sb_addf(sb, "%s%lld", i ? ", " : "", (long long)s->step_numbers[i]);
	if (s->nsteps > 6)
		pt_sb_adds(sb, ", ...");
}

void diag_step_mismatch(dctx *c)
{
	size_t best = 0, nbest = 0, nwith = 0;

	/* Workers without step numbers (no ProfilerStep in the trace) have
	 * nothing to compare. */
	for (size_t i = 0; i < c->nw; i++)
		nwith += c->w[i].s->nsteps > 0 && c->w[i].s->step_numbers;
	if (nwith < 2)
		return;
	/* The reference: the steps most workers profiled (O(n x distinct);
	 * one or two distinct sets in practice). */
	for (size_t i = 0; i < c->nw; i++) {
		size_t k = 0;

		if (!c->w[i].s->nsteps || !c->w[i].s->step_numbers)
			continue;
		if (nbest && same_steps(c->w[i].s, c->w[best].s))
			continue;
		for (size_t j = 0; j < c->nw; j++)
			k += c->w[j].s->nsteps && c->w[j].s->step_numbers &&
			     same_steps(c->w[i].s, c->w[j].s);
		if (k > nbest) {
			nbest = k;
			best = i;
		}
	}
	if (nbest == nwith)
		return;
	for (size_t i = 0; i < c->nw; i++) {
		const pt_summary *s = c->w[i].s;
		pt_sb mine = { 0 }, ref = { 0 };
		dfinding *f;

		if (!s->nsteps || !s->step_numbers || same_steps(s, c->w[best].s))
			continue;
		f = df_add(c, DC_SUMMARY, c->w[i].id, "", "steps", (double)s->nsteps,
			   (double)c->w[best].s->nsteps, 0);
		steps_text(&mine, s);
		steps_text(&ref, c->w[best].s);
		if (mine.oom || ref.oom) {
			c->oom = 1;
		} else if (f) {
			df_cause(f, PT_CAUSE_OTHER_STEPS, PT_UNIT_COUNT);
			df_metric(f, "others", f->others, PT_UNIT_COUNT);
			df_metric(f, "workers with the same steps", (double)nbest, PT_UNIT_COUNT);
			df_metric(f, "workers with steps", (double)nwith, PT_UNIT_COUNT);
			df_arg(c, f, "%s", mine.buf ? mine.buf : "");
			df_arg(c, f, "%s", ref.buf ? ref.buf : "");
			df_steps(c, f, s->step_numbers, s->nsteps);
		}
		pt_sb_free(&mine);
		pt_sb_free(&ref);
	}
}
