/*
 * breakdown.c - "Time breakdown": where each worker's GPU time goes, from
 * the summaries' "gpu_breakdown" (src/analysis/breakdown.c), and the
 * plain-sentence findings about one worker ("the GPU is idle 41% of the
 * window; 70% of that idle time the CPU is in DataLoader.__next__").
 * These need no other worker, so a single trace gets them too.
 *
 * Flow: pt_summary.breakdown -> diag_breakdown -> report "Time breakdown"
 * + findings (category "GPU idle") -> report.json, text, PerfDisplay.
 * Definitions: docs/diagnose.md "Time breakdown".
 */
#include "internal.h"
#include "sections.h"
#include "../analysis/breakdown.h"
#include "../util/strbuf.h"
#include "../util/xalloc.h"
#include "../report/keys.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define SEC PT_KEY_TIME_BREAKDOWN

/* Below this share of idle time the finding says the GPU is the
 * bottleneck instead of breaking the idle time down. */
#define IDLE_MIN 0.05

const char *const pt_idle_cause_names[PT_IDLE_COUNT] = {
	"blocking sync", "data loader", "kernel launch", "other host work", "no CPU activity",
};

static double share(double part, double whole)
{
	return whole > 0 && isfinite(part) ? part / whole : 0;
}

static void write_worker(dctx *c, pt_rv *o, const pt_summary *s)
{
	const pt_breakdown *b = s->breakdown;
	pt_rv *x, *a;
	size_t i;
	int k;

	pt_rv_num(c->rep, o, PT_KEY_WINDOW_IN_MS, b->window_ms);
	pt_rv_num(c->rep, o, "GPU busy", s->gpu_util);
	if (s->gpu_compute_util >= 0)
		pt_rv_num(c->rep, o, "GPU compute utilization", s->gpu_compute_util);
	pt_rv_num(c->rep, o, "compute (ms)", b->compute_ms);
	pt_rv_num(c->rep, o, "communication not overlapped (ms)", b->comm_ms);
	pt_rv_num(c->rep, o, "communication overlapped (ms)",
		  b->comm_total_ms > b->comm_ms ? b->comm_total_ms - b->comm_ms : 0);
	pt_rv_num(c->rep, o, "memory (ms)", b->memory_ms);
	pt_rv_num(c->rep, o, "idle (ms)", b->idle_ms);
	x = pt_rv_obj(c->rep, o, "idle by cause (ms)");
	for (k = 0; k < PT_IDLE_COUNT; k++)
		pt_rv_num(c->rep, x, pt_idle_cause_names[k], b->idle_ms_by[k]);
	if (b->sync_top) {
		pt_rv_str(c->rep, o, "blocking sync call", b->sync_top);
		pt_rv_num(c->rep, o, "blocking sync call idle (ms)", b->sync_top_ms);
	}
	a = pt_rv_arr(c->rep, o, "CPU functions during idle");
	for (i = 0; i < b->nfuncs; i++) {
		pt_rv *f = pt_rv_obj(c->rep, a, NULL);
		pt_rv_str(c->rep, f, PT_KEY_FUNCTION, b->funcs[i].key);
		pt_rv_num(c->rep, f, "idle (ms)", b->funcs[i].idle_ms);
		pt_rv_num(c->rep, f, "share of idle", share(b->funcs[i].idle_ms, b->idle_ms));
	}
	pt_rv_int(c->rep, o, PT_KEY_KERNELS, (int64_t)b->nkernels);
	pt_rv_num(c->rep, o, "kernels under 10 us", share((double)b->nsmall, (double)b->nkernels));
	pt_rv_num(c->rep, o, "launches per ms", share((double)b->nlaunches, b->window_ms));
}

/* What to do about the largest cause. */
static const char *advice(int cause)
{
	switch (cause) {
	case PT_IDLE_SYNC:
		return "take host syncs (.item(), .cpu(), printing or comparing tensors on the host, "
		       "cudaStreamSynchronize) out of the step";
	case PT_IDLE_DATALOADER:
		return "the input pipeline is the bottleneck: more DataLoader workers, pin_memory, "
		       "prefetching, or lighter preprocessing";
	case PT_IDLE_LAUNCH:
		return "the GPU waits for kernel launches: fewer, larger kernels (torch.compile, "
		       "fused ops) or CUDA graphs";
	case PT_IDLE_HOST:
		return "the CPU cannot keep the GPU fed: move that work off the step or overlap it";
	default:
		return "nothing was recorded on the launching thread then: the process waits "
		       "outside the profiler's view (I/O, a lock, another process)";
	}
}

/* A stack's last frame; when another listed stack (other) ends in the
 * same frame, also the nearest caller where the two differ ("f in g"). */
static void add_func(pt_sb *sb, const char *key, const char *other)
{
	const char *ka = key + strlen(key), *kb;
	char fb[160];

	pt_sb_adds(sb, pt_name_sentence(key, PT_C_PYTHON, fb, sizeof(fb)));
	if (!other)
		return;
	kb = other + strlen(other);
	/* walk both stacks up, frame by frame, to the first frame that differs */
	for (;;) {
		const char *sa = ka, *sb2 = kb;
		while (sa > key && sa[-1] != '|')
			sa--;
		while (sb2 > other && sb2[-1] != '|')
			sb2--;
		if ((size_t)(ka - sa) != (size_t)(kb - sb2) || memcmp(sa, sb2, (size_t)(ka - sa))) {
			if (ka != key + strlen(key)) {
				pt_sb_adds(sb, " in ");
				pt_sb_add(sb, sa, (size_t)(ka - sa));
			}
			return;
		}
		if (sa == key || sb2 == other)
			return;
		ka = sa - 1;
		kb = sb2 - 1;
	}
}

/* The numbers of a GPU idle finding (phrase.c: idle share, idle and window
 * ms, compute, communication and memory shares) and the word for its span. */
static void idle_fields(dctx *c, dfinding *f, const pt_summary *s, pt_cause cause)
{
	const pt_breakdown *b = s->breakdown;

	if (!f)
		return;
	df_cause(f, cause, PT_UNIT_SHARE);
	df_metric(f, "idle (ms)", b->idle_ms, PT_UNIT_MS);
	df_metric(f, "window (ms)", b->window_ms, PT_UNIT_MS);
	df_metric(f, "compute", share(b->compute_ms, b->window_ms), PT_UNIT_SHARE);
	df_metric(f, "communication not overlapped", share(b->comm_ms, b->window_ms),
		  PT_UNIT_SHARE);
	df_metric(f, "memory operations", share(b->memory_ms, b->window_ms), PT_UNIT_SHARE);
	df_arg(c, f, "%s", s->nsteps > 1 ? "profiled steps" : s->nsteps == 1 ? "step" : "window");
}

static void idle_finding(dctx *c, const dworker *w, int single)
{
	const pt_summary *s = w->s;
	const pt_breakdown *b = s->breakdown;
	char p1[32], p2[32], p5[32], fb[160];
	pt_sb sb = { 0 };
	double idle = share(b->idle_ms, b->window_ms);
	int k, top = 0, n = 0, order[PT_IDLE_COUNT];
	dfinding *f;

	if (!b->nkernels && b->memory_ms <= 0) {
		/* a CPU-only run: say so rather than "idle 100%" */
		f = df_add(c, DC_GPU_IDLE, w->id, "", "gpu idle", idle, NAN, 0);
		idle_fields(c, f, s, PT_CAUSE_CPU_ONLY);
		return;
	}
	if (idle < IDLE_MIN) {
		/* busy with exposed communication: comm_bound.c's finding says
		 * so, and the compute advice would be wrong */
		if (diag_comm_bound_is(c, (size_t)(w - c->w)))
			return;
		/* the GPU is the bottleneck: still say where its time goes */
		f = df_add(c, DC_GPU_IDLE, w->id, "", "gpu idle", idle, NAN, 0);
		idle_fields(c, f, s, PT_CAUSE_GPU_BOUND);
		return;
	}
	for (k = 1; k < PT_IDLE_COUNT; k++)
		if (b->idle_ms_by[k] > b->idle_ms_by[top])
			top = k;
	if (b->nfuncs) {
		char fb2[160];
		int same = b->nfuncs > 1 &&
			   !strcmp(pt_name_sentence(b->funcs[0].key, PT_C_PYTHON, fb, sizeof(fb)),
				   pt_name_sentence(b->funcs[1].key, PT_C_PYTHON, fb2, sizeof(fb2)));

		pt_sb_addf(&sb, "%s of that idle time the CPU is in ",
			   df_pct(share(b->funcs[0].idle_ms, b->idle_ms), p1, sizeof(p1)));
		add_func(&sb, b->funcs[0].key, same ? b->funcs[1].key : NULL);
		if (b->nfuncs > 1) {
			pt_sb_addf(&sb, ", %s in ",
				   df_pct(share(b->funcs[1].idle_ms, b->idle_ms), p2, sizeof(p2)));
			add_func(&sb, b->funcs[1].key, same ? b->funcs[0].key : NULL);
		}
		pt_sb_adds(&sb, ". ");
	}
	pt_sb_adds(&sb, "By cause: ");
	/* causes from the largest down, those of at least 1% of the idle time */
	for (k = 0; k < PT_IDLE_COUNT; k++)
		order[k] = k;
	for (k = 1; k < PT_IDLE_COUNT; k++) {
		int j;
		for (j = k; j > 0 && b->idle_ms_by[order[j]] > b->idle_ms_by[order[j - 1]]; j--) {
			int t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	}
	for (k = 0; k < PT_IDLE_COUNT; k++) {
		int q = order[k];
		if (share(b->idle_ms_by[q], b->idle_ms) < 0.01)
			continue;
		pt_sb_addf(&sb, "%s%s %s", n++ ? ", " : "", pt_idle_cause_names[q],
			   df_pct(share(b->idle_ms_by[q], b->idle_ms), p5, sizeof(p5)));
		if (q == PT_IDLE_SYNC && b->sync_top)
			pt_sb_addf(&sb, " (mostly %s)", b->sync_top);
	}
	pt_sb_addf(&sb, "%s. ", n ? "" : "none recorded");
	if (b->nkernels)
		pt_sb_addf(&sb, "%s of its %llu kernels run under 10 us, %.1f launches per ms. ",
			   df_pct(share((double)b->nsmall, (double)b->nkernels), p1, sizeof(p1)),
			   (unsigned long long)b->nkernels, share((double)b->nlaunches, b->window_ms));
	if (share(b->comm_ms, b->window_ms) >= 0.1)
		pt_sb_addf(&sb, "Communication not overlapped with compute takes %s of the window. ",
			   df_pct(share(b->comm_ms, b->window_ms), p1, sizeof(p1)));
	pt_sb_addf(&sb, "Largest cause: %s; %s.", pt_idle_cause_names[top], advice(top));
	/* Ranked after the differential findings of a multi-worker job: this
	 * one says where a worker's own time goes, not who slows the job. */
	f = df_add(c, DC_GPU_IDLE, w->id, b->nfuncs ? b->funcs[0].key : "", "gpu idle", idle, NAN,
		   single ? b->idle_ms_by[top] : 0);
	if (f && !sb.oom) {
		idle_fields(c, f, s, PT_CAUSE_GPU_IDLE);
		df_arg(c, f, "%s", sb.buf ? sb.buf : "");
	}
	if (sb.oom)
		c->oom = 1;
	pt_sb_free(&sb);
}

void diag_breakdown(dctx *c, int write)
{
	pt_rv *sec = NULL;
	size_t i, worst = (size_t)-1;

	for (i = 0; i < c->nw; i++) {
		const pt_summary *s = c->w[i].s;
		if (!s->breakdown || !write || !diag_row(c, i))
			continue;
		/* the section only when a summary has the data (older ones do not) */
		if (!sec)
			sec = pt_rv_obj(c->rep, pt_report_root(c->rep), SEC);
		write_worker(c, pt_rv_obj(c->rep, sec, c->w[i].id), s);
		if (worst == (size_t)-1 ||
		    share(s->breakdown->idle_ms, s->breakdown->window_ms) >
			    share(c->w[worst].s->breakdown->idle_ms, c->w[worst].s->breakdown->window_ms))
			worst = i;
	}
	/* A finding for a job of one worker; with more, the differential
	 * findings name who slows the job and "Time breakdown" says where each
	 * worker's time goes. */
	if (!write && c->nw == 1 && c->w[0].s->breakdown)
		idle_finding(c, &c->w[0], 1);
	(void)worst;
}
