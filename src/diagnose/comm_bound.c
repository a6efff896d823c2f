/*
 * comm_bound.c - "communication-bound": a worker whose GPU spends most of
 * its busy time in communication that no compute overlaps.  Its step waits
 * for collectives, so the compute advice ("the heaviest kernels are where
 * time can be won") would be wrong; the finding says how much is exposed
 * per step, which collectives, their bandwidth where sizes are recorded,
 * and what would overlap them.
 *
 * Flow: pt_summary.breakdown + communication patterns -> diag_comm_bound
 * (after diag_breakdown's findings, before lockstep, which links a
 * victim's finding to its straggler) -> findings (category Communication).
 * Rule and numbers: docs/diagnose.md "Communication-bound".
 */
#include "internal.h"
#include "sections.h"
#include "../analysis/breakdown.h"
#include "../model/commkind.h"
#include "../util/strbuf.h"

#include <math.h>
#include <string.h>

/* The collectives named in the sentence, the most exposed first. */
#define TOP_COLL 2

/* The time worker wi waited in collectives for a later member (lockstep's
 * waits, ms in the window); 0 without lockstep. */
static double waited_ms(const dctx *c, size_t wi)
{
	double t = 0;
	size_t j;

	for (j = 0; c->lkw && wi < c->nw && j < c->lkw[wi].n; j++)
		if (c->lkw[wi].wait_ms[j] > 0)
			t += c->lkw[wi].wait_ms[j];
	return t;
}

/* The least exposed communication of any worker with a breakdown, as a
 * share of its window: in lockstep every member spends at least that
 * much, whoever waits; 1 with one worker. */
static double least_exposed(const dctx *c)
{
	double least = 1;
	size_t i;

	for (i = 0; c->nw > 1 && i < c->nw; i++) {
		const pt_breakdown *b = c->w[i].s ? c->w[i].s->breakdown : NULL;
		if (b && b->window_ms > 0)
			least = fmin(least, b->comm_ms / b->window_ms);
	}
	return least;
}

/* Is worker wi communication-bound, least being least_exposed(c)?  The
 * caller computes least once: per worker it made the rule quadratic in
 * the workers (50,000 generated ones: 248 s, against 64 s without it). */
static int is_bound(const dctx *c, size_t wi, double least)
{
	const pt_breakdown *b = c->w[wi].s ? c->w[wi].s->breakdown : NULL;
	double busy, own;

	if (!b || b->window_ms <= 0 || b->comm_ms <= 0)
		return 0;
	/* A victim's exposed collectives are its wait for a straggler: the
	 * straggler's finding, not this one.  Lockstep measures the wait;
	 * where it cannot (summaries without collectives), a worker's own
	 * exposure is at most the least any worker shows. */
	own = b->comm_ms - fmin(waited_ms(c, wi), b->comm_ms);
	own = fmin(own, least * b->window_ms);
	busy = b->compute_ms + b->comm_ms + b->memory_ms;
	/* most of the GPU's busy time, and more than compute or idle time:
	 * a GPU idle longer than it communicates waits for its host first
	 * (the real DLRM ranks: 38% exposed, 54% idle), the idle finding's */
	return busy > 0 && own >= c->o->comm_bound * busy && own > b->compute_ms &&
	       own > b->idle_ms;
}

int diag_comm_bound_is(const dctx *c, size_t wi)
{
	return wi < c->nw && is_bound(c, wi, least_exposed(c));
}

/* The exposed collectives of s, the largest owned time first: ix[0..n). */
static size_t top_collectives(const pt_summary *s, size_t *ix, size_t cap)
{
	size_t i, n = 0;

	for (i = 0; i < s->npatterns; i++) {
		size_t j;
		if (pt_summary_pat(s, i)->cls != PT_C_COMM || pt_summary_pat(s, i)->bottleneck <= 0)
			continue;
		for (j = n < cap ? n++ : cap; j > 0 && pt_summary_pat(s, ix[j - 1])->bottleneck <
							      pt_summary_pat(s, i)->bottleneck; j--)
			if (j < cap)
				ix[j] = ix[j - 1];
		if (j < cap)
			ix[j] = i;
	}
	return n;
}

/* "`name` (ring allreduce, 3 calls per step of 37.8 ms, 12.3 ms of them
 * exposed per step, 4.19 MB a call at 2.1 GB/s bus bandwidth)" */
static void add_coll(pt_sb *sb, const pt_summary *s, const pt_pattern *p, double steps)
{
	char group[64], fb[160], ms1[32], ms2[32];

	pt_diag_comm_group(p->key, p->kind, group, sizeof(group));
	pt_sb_addf(sb, "`%s` (%s, %.3g call%s per step of %s each, %s of them exposed per step",
		   pt_name_sentence(p->key, PT_C_COMM, fb, sizeof(fb)), group,
		   (double)p->count / steps, (double)p->count / steps == 1 ? "" : "s",
		   pt_num_format(p->median_ms, PT_UNIT_MS, "ms", ms1, sizeof(ms1)),
		   pt_num_format(p->bottleneck * s->window_ms / steps, PT_UNIT_MS, "ms", ms2,
				 sizeof(ms2)));
	if (pt_summary_whole(s) && p->bytes > 0 && p->busbw_gbps > 0)
		pt_sb_addf(sb, ", %.3g MB a call at %.3g GB/s bus bandwidth", p->bytes / 1e6,
			   p->busbw_gbps);
	pt_sb_adds(sb, ")");
}

/* What would overlap the collective that holds most of the exposed time. */
static const char *advice(int role)
{
	switch (role) {
	case PT_ROLE_ALLREDUCE:
		return "larger DDP buckets (bucket_cap_mb) so that the all-reduce starts earlier in "
		       "the backward, gradient_as_bucket_view=True, communication on its own stream "
		       "overlapped with the backward, or gradient compression";
	case PT_ROLE_ALLGATHER:
	case PT_ROLE_REDUCESCATTER:
		return "FSDP's prefetching (forward_prefetch=True, backward_prefetch=BACKWARD_PRE) so "
		       "that the next unit's all-gather runs under this unit's compute, larger units, "
		       "or keeping parameters gathered after the forward where memory allows";
	case PT_ROLE_ALLTOALL:
	case PT_ROLE_DISPATCH:
	case PT_ROLE_COMBINE:
	case PT_ROLE_SENDRECV:
		return "pipelining the exchange with compute (TorchRec's TrainPipelineSparseDist, or "
		       "splitting the batch so that one part's exchange runs under another's compute) "
		       "or fewer bytes per exchange (quantised communication)";
	default:
		return "issuing the collectives earlier, on their own stream, so that compute runs "
		       "while they do";
	}
}

static void finding(dctx *c, const dworker *w, int single)
{
	const pt_summary *s = w->s;
	const pt_breakdown *b = s->breakdown;
	double steps = dw_steps(w), busy = b->compute_ms + b->comm_ms + b->memory_ms;
	/* Overlapped perfectly, the step would lose its exposed communication,
	 * down to the communication's own length (it still has to run). */
	double win = fmin(b->comm_ms, b->window_ms - fmax(b->comm_total_ms, b->comm_ms));
	size_t ix[TOP_COLL], n, i;
	pt_sb sb = { 0 };
	dfinding *f;

	n = top_collectives(s, ix, TOP_COLL);
	for (i = 0; i < n; i++) {
		/* a second one only when it holds a tenth of the exposed time */
		if (i && pt_summary_pat(s, ix[i])->bottleneck * s->window_ms < 0.1 * b->comm_ms)
			break;
		pt_sb_adds(&sb, i ? " and " : ", mostly in ");
		add_coll(&sb, s, pt_summary_pat(s, ix[i]), steps);
	}
	f = df_add(c, DC_COMM, w->id, "", "exposed communication", b->comm_ms / b->window_ms,
		   NAN, win > 0 ? win : 0);
	if (!f || sb.oom) {
		c->oom = 1;
		goto out;
	}
	df_cause(f, PT_CAUSE_COMM_BOUND, PT_UNIT_SHARE);
	df_metric(f, "exposed communication (ms per step)", b->comm_ms / steps, PT_UNIT_MS_STEP);
	df_metric(f, "step (ms)", b->window_ms / steps, PT_UNIT_MS);
	df_metric(f, "share of GPU busy time", b->comm_ms / busy, PT_UNIT_SHARE);
	df_metric(f, "compute", b->compute_ms / b->window_ms, PT_UNIT_SHARE);
	df_metric(f, "overlapped communication (ms per step)",
		  fmax(b->comm_total_ms - b->comm_ms, 0) / steps, PT_UNIT_MS_STEP);
	df_metric(f, "at most won by overlapping it (ms per step)", f->impact_ms / steps,
		  PT_UNIT_MS_STEP);
	df_arg(c, f, "%s", s->nsteps > 1 ? "profiled steps" : s->nsteps == 1 ? "step" : "window");
	df_arg(c, f, "%s", sb.buf ? sb.buf : "");
	df_arg(c, f, "%s", advice(n ? pt_summary_pat(s, ix[0])->role : PT_ROLE_COLLECTIVE));
	df_arg(c, f, "%s",
	       single ? "; with one rank's trace, waiting for a peer cannot be told from a slow "
			"link: profile all ranks (perftracker --trigger-on profiles every worker)"
		      : "");
out:
	pt_sb_free(&sb);
}

void diag_comm_bound(dctx *c)
{
	double least = least_exposed(c);
	size_t i;

	for (i = 0; i < c->nw; i++)
		if (is_bound(c, i, least))
			finding(c, &c->w[i], c->nw == 1);
}
