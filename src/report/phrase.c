/*
 * phrase.c - the one renderer of findings (phrase.h): the table of phrases,
 * one per cause kind, and the fill-in of a phrase from a finding's fields.
 * The diagnosis (src/diagnose), and through it report.json's
 * "explanation", and the text report (text_people.c) all render here, so
 * a sentence is worded once.
 *
 * A phrase is text with fields in braces: {W} "worker ID", {I} "ID" (the
 * first worker); {mN<style>} metric N as pt_num_format writes it in that
 * style; {pN} "s" unless metric N is 1; {aN} arg N; {(aN)} " (arg N)" when
 * arg N is not empty; {w<style>} / {i<style>} the what-if's step and the
 * step it replaces; {?TEXT} TEXT (fields inside) only when the what-if
 * saves something that shows at 0.01 ms, {!TEXT} only when it does not
 * (no "16.13 ms instead of 16.13 ms").  A finding grouped across workers
 * (report.h "grouped") ends with the group: how many, the first few
 * (worst first), their ms per step in all and the what-if of fixing all of
 * them.
 */
#include "phrase.h"
#include "keys.h"
#include "names.h"
#include "../util/term.h"
#include "../util/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOK_BEGIN '\x01'
#define TOK_END '\x02'
#define TOK_SEP '\x03'

static const char *const cause_names[PT_CAUSE_N] = {
#define PT_CAUSE_NAME(id, name) name,
	PT_CAUSES(PT_CAUSE_NAME)
#undef PT_CAUSE_NAME
};

/* The table of phrases, by cause kind. */
static const char *const phrases[PT_CAUSE_N] = {
	[PT_CAUSE_UNREADABLE] = "{m0d} of {m1d} traces could not be analysed and are left out: {a0}",
	[PT_CAUSE_OTHER_STEPS] = "Worker {I} profiled steps {a0}, while {m2d} of {m3d} workers "
		"profiled steps {a1}: it is compared with them across different iterations (it armed "
		"late, or counts steps differently); read its numbers with care.",
	[PT_CAUSE_SHARE] = "{W} spends {m0%} of its time in {a0}{(a1)}, other workers {m1%}: {a2} "
		"(about {m2.3g} ms per step)",
	[PT_CAUSE_SLOW_CALLS] = "each {a0} ({a1}) takes {m0ms} on {W}, other workers {m1ms}: {a2} "
		"(about {m2.3g} ms per step)",
	[PT_CAUSE_LOW_BANDWIDTH] = "{W} reaches {m0.3g} GB/s bus bandwidth in {a0} ({a1}), other "
		"workers {m1.3g} GB/s: a slow link, NIC or switch port on this worker's path (about "
		"{m2.3g} ms per step)",
	[PT_CAUSE_SLOW_LINK] = "{W} moves data steadily but slowly in {a0} ({a1}): {m0.3g}% of the "
		"link on average (std {m2.3g}%, peak {m3.3g}%), other workers {m1.3g}% (peak "
		"{m4.3g}%): a slow link: the {a2} path of this worker's GPU (degraded or downgraded "
		"link, errors and retries) (about {m5.3g} ms per step)",
	[PT_CAUSE_SLOW_P2P] = "transfers {a0}{W} run at {m0.3g} GB/s against {m1.3g} GB/s for the "
		"other {a1} (median): {m2.2f}x slower; {m3d} transfer{p3}, {a2} (about {m5.3g} ms "
		"per step): {a3}",
	[PT_CAUSE_WAITS_FOR_PEER] = "{W} waits for a late peer in {a0} ({a1}): the link idles and "
		"then runs at full speed (std {m0.3g}%, peak {m2.3g}%, average {m3.3g}%; other "
		"workers std {m1.3g}%, peak {m4.3g}%) ({a2}) (about {m5.3g} ms per step)",
	[PT_CAUSE_GPU_WAITS] = "{W} keeps its GPU busy {m0%} of the time, other workers {m1%}: its "
		"GPU waits more (for the CPU, input data or other workers); see this worker's other "
		"findings",
	[PT_CAUSE_GPU_BUSIER] = "{W} keeps its GPU busy {m0%} of the time, other workers {m1%}: its "
		"GPU has more work or runs slower (see \"workers with potential GPU issues\")",
	[PT_CAUSE_SLOW_KERNELS] = "{W} runs {m2d} compute kernel{p2} slower than the other workers, "
		"losing about {m3.3g} ms per step ({m4%}); the costliest, {a0}, takes {m0ms} per "
		"execution, other workers {m1ms} ({m5%} slower): a slower GPU on this worker (clocks, "
		"temperature, power or a hardware fault){a1}",
	[PT_CAUSE_LOW_OCCUPANCY] = "{I}: `{a0}` takes {m1%} of the window {a1}, {m2.2f} blocks per "
		"SM, {m3.0f} registers per thread, {m4.0f} bytes of shared memory per block{a2}.",
	[PT_CAUSE_CPU_ONLY] = "{I}: the trace records no GPU kernel or memory operation in its {a0} "
		"({m2.1f} ms): a CPU-only run; where its time goes is in \"Python functions\" and the "
		"class breakdown.",
	[PT_CAUSE_GPU_BOUND] = "{I}: the GPU is idle only {m0%} of the {a0} ({m1.1f} of {m2.1f} ms): "
		"compute {m3%}, communication not overlapped with compute {m4%}, memory operations "
		"{m5%}. The GPU is the bottleneck: the heaviest kernels (GPU Compute) are where time "
		"can be won.",
	[PT_CAUSE_COMM_BOUND] = "{I}: communication not overlapped with compute takes {m0%} of the "
		"{a0} ({m1.1f} of {m2.1f} ms per step; {m3%} of the GPU's busy time, compute {m4%}){a1}: "
		"the step waits for communication, not for compute; overlapping it would save at most "
		"{m6.1f} ms per step ({a2}){a3}",
	[PT_CAUSE_GPU_IDLE] = "{I}: the GPU is idle {m0%} of the {a0} ({m1.1f} of {m2.1f} ms; "
		"compute {m3%}, communication not overlapped with compute {m4%}, memory operations "
		"{m5%}). {a1}",
	[PT_CAUSE_SLOW_STEPS] = "{I}: step{p0} {a0} ({m0d} of {m2d}) {a1} {m4.2f}x the others "
		"({m3.1f} vs {m1.1f} ms){a2}",
	[PT_CAUSE_SLOWEST_STEP] = "{I}: {a2}",
	[PT_CAUSE_JOB_SLOW_STEPS] = "{a0} slow on {m2d} of the {m3d} workers with several steps: "
		"{m4.1f} ms (median over workers and steps) against a median step of {m1.1f} ms; a "
		"step slow everywhere is the job's, not one worker's (in lockstep every worker waits "
		"for the slowest). Its extra time is largest on {I}: see that worker's step finding.",
	[PT_CAUSE_STRAGGLER] = "{a0} is the worker the others waited for: it arrived last at {m1d} "
		"of {m2d} collectives, and the other {m3d} workers waited {m4.2f} ms for it in all "
		"({m5.2f} ms each on average, against a median of {m6.2f} ms for the other "
		"workers).{a1}{a2}{? If it arrived like the median worker, a step would take {w.2f} "
		"ms instead of {i.2f} ms (-{m7.2f} ms, -{m8.1f}%).}{! If it arrived like the median "
		"worker, a step would take no less ({i.2f} ms): the next latest worker arrives about "
		"as late.}{a3}",
	/* compare's sentences are built by its section (compare_report.c) */
	[PT_CAUSE_GOT_SLOWER] = "{a0}",
	[PT_CAUSE_GOT_FASTER] = "{a0}",
	[PT_CAUSE_APPEARED] = "{a0}",
	[PT_CAUSE_GONE] = "{a0}",
	[PT_CAUSE_DEAD] = "{W} is dead: its process {m4d} on {a0} is gone (last step {m2d}); the "
		"other workers cannot pass their next collective without it",
	[PT_CAUSE_LOST] = "{W} is lost: no heartbeat from {a0} (last step {m2d})",
	[PT_CAUSE_HUNG] = "{W} is stuck in {a1} (last step {m2d}, no step for {m3.1f} s) while the "
		"others are elsewhere: the likely cause of the hang",
	[PT_CAUSE_MISMATCH] = "{a0}: its collectives do not match the other workers' ({a1}); it is "
		"left out of the lockstep analysis (who waited for whom), the rest goes on.",
};

/* The clause a finding with frames folded into it ends with. */
#define INSIDE_CLAUSE "; with the %zu frame%s inside it, about %s per step"

static const struct {
	const char *category, *view;
} views[] = {
	{ PT_KEY_GPU_COMPUTE, "compute" },      { PT_KEY_GPU_MEMORY_OPERATIONS, "memory" },
	{ PT_KEY_COMMUNICATION, "communication" }, { PT_KEY_CUDA_RUNTIME, "runtime" },
	{ PT_KEY_PYTHON_FUNCTIONS, "python" },  { "GPU idle", "workers" },
	{ PT_KEY_STEPS, "workers" },            { PT_KEY_LOCKSTEP, "workers" },
	{ PT_KEY_HANG, "hang" },                { PT_KEY_COMPARE, "compare" },
};

const char *pt_cause_name(pt_cause c)
{
	return (unsigned)c < PT_CAUSE_N ? cause_names[c] : "";
}

const char *pt_category_view(const char *category)
{
	size_t i;

	for (i = 0; category && i < sizeof(views) / sizeof(views[0]); i++)
		if (!strcmp(views[i].category, category))
			return views[i].view;
	return NULL;
}

void pt_who_token(pt_sb *sb, char style, const char *id, long long rank)
{
	if (style == 'R' && rank < 0)
		style = 'I';
	pt_sb_addc(sb, TOK_BEGIN);
	pt_sb_addc(sb, style);
	if (style == 'R')
		pt_sb_addf(sb, "%lld%c", rank, TOK_SEP);
	pt_sb_adds(sb, id ? id : "");
	pt_sb_addc(sb, TOK_END);
}

const char *pt_num_format(double v, pt_unit unit, const char *style, char *buf, size_t cap)
{
	char fmt[16];

	if (!style || !style[0])
		style = unit == PT_UNIT_MS ? "ms" : unit == PT_UNIT_SHARE ? "%" :
			unit == PT_UNIT_COUNT ? "d" : ".3g";
	if (!strcmp(style, "%")) {
		double p = v * 100;
		if (!isfinite(v))
			snprintf(buf, cap, "n/a");
		else if (p != 0 && fabs(p) < 0.1)
			snprintf(buf, cap, "%.2f%%", p);
		else
			snprintf(buf, cap, "%.1f%%", p);
	} else if (!strcmp(style, "ms")) {
		pt_fmt_ms(v, buf, cap);
	} else if (!strcmp(style, "d")) {
		snprintf(buf, cap, "%lld", isfinite(v) ? (long long)llround(v) : 0LL);
	} else {
		snprintf(fmt, sizeof(fmt), "%%%.8s", style);
		snprintf(buf, cap, fmt, v);
	}
	return buf;
}

/* The text style: the id's label where the caller knows one. */
static void who_text(pt_sb *out, char style, const char *rank, const char *id,
		     pt_label_fn label, const void *ctx)
{
	const char *lab = label(ctx, id);
	int ranked = lab && !strncmp(lab, "rank ", 5);
	pt_sb esc = { 0 };

	if (!lab) {
		pt_term_escape(&esc, id, strlen(id), 0, 0);
		lab = esc.buf ? esc.buf : "";
	}
	if (style == 'W')
		pt_sb_addf(out, "%s%s", ranked ? "" : "worker ", lab);
	else if (style == 'R' && !(ranked && !strcmp(lab + 5, rank)))
		pt_sb_addf(out, "rank %s (%s)", rank, lab);
	else if (style == 'R')
		pt_sb_adds(out, lab);
	else
		pt_sb_adds(out, lab);
	pt_sb_free(&esc);
}

void pt_who_resolve(const char *text, pt_label_fn label, const void *ctx, pt_sb *out)
{
	const char *p = text ? text : "";

	while (*p) {
		const char *b = strchr(p, TOK_BEGIN), *e, *sep;
		char rank[24] = "", style;
		size_t n = b ? (size_t)(b - p) : strlen(p);
		char *id;

		if (label)
			pt_term_escape(out, p, n, 0, 0);
		else
			pt_sb_add(out, p, n);
		if (!b || !b[1] || !(e = strchr(b + 2, TOK_END)))
			break;
		style = b[1];
		p = b + 2;
		sep = style == 'R' ? memchr(p, TOK_SEP, (size_t)(e - p)) : NULL;
		if (sep) {
			snprintf(rank, sizeof(rank), "%.*s", (int)(sep - p), p);
			p = sep + 1;
		}
		id = x_strndup(p, (size_t)(e - p));
		if (!id) {
			out->oom = 1;
			return;
		}
		if (label)
			who_text(out, style, rank, id, label, ctx);
		else if (style == 'W')
			pt_sb_addf(out, "worker %s", id);
		else if (style == 'R' && sep)
			pt_sb_addf(out, "rank %s (%s)", rank, id);
		else
			pt_sb_adds(out, id);
		x_free(id);
		p = e + 1;
	}
}

static const pt_metric *metric_at(const pt_finding *f, size_t i)
{
	return i < f->nmetrics ? &f->metrics[i] : NULL;
}

/* One {field} of a phrase (spec without the braces) appended to raw. */
static void fill(const pt_finding *f, const char *spec, size_t n, pt_sb *raw)
{
	char style[16], num[64];
	const char *first = f->nworkers ? f->workers[0] : "";
	char *end;
	size_t i;

	if (n == 1 && (spec[0] == 'W' || spec[0] == 'I')) {
		pt_who_token(raw, spec[0], first, -1);
		return;
	}
	if (spec[0] == '(' && spec[1] == 'a') {
		i = strtoul(spec + 2, NULL, 10);
		if (i < f->nargs && f->args[i] && f->args[i][0])
			pt_sb_addf(raw, " (%s)", f->args[i]);
		return;
	}
	if (spec[0] == 'a') {
		i = strtoul(spec + 1, NULL, 10);
		if (i < f->nargs && f->args[i])
			pt_sb_adds(raw, f->args[i]);
		return;
	}
	if (spec[0] == 'w' || spec[0] == 'i') {
		snprintf(style, sizeof(style), "%.*s", (int)(n - 1), spec + 1);
		pt_sb_adds(raw, pt_num_format(spec[0] == 'w' ? f->what_if_ms : f->instead_ms,
					      PT_UNIT_MS, style, num, sizeof(num)));
		return;
	}
	if (spec[0] == 'm' || spec[0] == 'p') {
		const pt_metric *m;
		i = strtoul(spec + 1, &end, 10);
		m = metric_at(f, i);
		if (!m)
			return;
		if (spec[0] == 'p') {
			if (m->value != 1)
				pt_sb_addc(raw, 's');
			return;
		}
		snprintf(style, sizeof(style), "%.*s", (int)(n - (size_t)(end - spec)), end);
		pt_sb_adds(raw, pt_num_format(m->value, m->unit, style, num, sizeof(num)));
	}
}

int pt_what_if_shows(const pt_finding *f)
{
	return f->has_what_if && isfinite(f->what_if_ms) && isfinite(f->instead_ms) &&
	       llround(f->what_if_ms * 100) < llround(f->instead_ms * 100);
}

/* The '}' that closes the field opened at b ('{'), NULL when none. */
static const char *field_end(const char *b, const char *end)
{
	int depth = 0;

	for (; b < end; b++) {
		if (*b == '{')
			depth++;
		else if (*b == '}' && --depth == 0)
			return b;
	}
	return NULL;
}

/* Phrase text p[0..end) with its fields filled, appended to raw. */
static void fill_text(const pt_finding *f, const char *p, const char *end, pt_sb *raw)
{
	while (p < end) {
		const char *b = memchr(p, '{', (size_t)(end - p)), *e;

		if (!b || !(e = field_end(b, end))) {
			pt_sb_add(raw, p, (size_t)(end - p));
			break;
		}
		pt_sb_add(raw, p, (size_t)(b - p));
		if (b[1] == '?' || b[1] == '!') {
			if ((b[1] == '?') == pt_what_if_shows(f))
				fill_text(f, b + 2, e, raw);
		} else {
			fill(f, b + 1, (size_t)(e - b - 1), raw);
		}
		p = e + 1;
	}
}

/* A grouped finding's last clause: "; the same on 50 workers, worst
 * first: A, B, C and 47 more (28.8 ms per step on them all). Fixed on all
 * of them, a step of the worst one would take ..." */
static void group_clause(const pt_finding *f, pt_sb *raw)
{
	size_t i, n = f->nworkers, shown = n > 3 ? 3 : n;
	char ms[32];

	pt_sb_addf(raw, "; the same on %zu workers, worst first: ", n);
	for (i = 0; i < shown; i++) {
		pt_sb_adds(raw, i == 0 ? "" : i + 1 == shown && n == shown ? " and " : ", ");
		pt_who_token(raw, 'I', f->workers[i], -1);
	}
	if (n > shown)
		pt_sb_addf(raw, " and %zu more", n - shown);
	pt_sb_addf(raw, " (%s per step on them all)", pt_fmt_ms(f->group_ms, ms, sizeof(ms)));
	if (pt_what_if_shows(f))
		pt_sb_addf(raw, ". Fixed on all of them, a step of the worst one would take %.2f ms "
			   "instead of %.2f ms (-%.2f ms, -%.1f%%), and so would the job's in lockstep "
			   "(it waits for the slowest of them)", f->what_if_ms, f->instead_ms,
			   f->instead_ms - f->what_if_ms,
			   100 * (f->instead_ms - f->what_if_ms) / f->instead_ms);
}

void pt_finding_render(const pt_finding *f, pt_label_fn label, const void *ctx, pt_sb *out)
{
	const char *p = (unsigned)f->cause < PT_CAUSE_N ? phrases[f->cause] : NULL;
	pt_sb raw = { 0 };

	if (!p) {
		pt_who_resolve(f->explanation, label, ctx, out);
		return;
	}
	fill_text(f, p, p + strlen(p), &raw);
	if (f->ninside) {
		char ms[32];
		pt_sb_addf(&raw, INSIDE_CLAUSE, f->ninside, f->ninside == 1 ? "" : "s",
			   pt_fmt_ms(f->inside_ms, ms, sizeof(ms)));
	}
	if (f->grouped && f->nworkers > 1)
		group_clause(f, &raw);
	if (raw.oom)
		out->oom = 1;
	else
		pt_who_resolve(raw.buf ? raw.buf : "", label, ctx, out);
	pt_sb_free(&raw);
}
