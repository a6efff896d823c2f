/*
 * compare_text.c - the text report of `perftracker compare`: the summary
 * sentence first, both sides' step times, the class table, then the
 * findings as numbered sentences.  Reads the "Compare" section that
 * compare.c built for the numbers, and the report's finding model for the
 * findings, rendered by the one renderer (report/phrase.h).
 */
#include "compare.h"
#include "../report/keys.h"
#include "../report/phrase.h"

#include <math.h>
#include <string.h>

static double rv_num(const pt_rv *o, const char *key)
{
	const pt_rv *v = pt_rv_get(o, key);

	if (!v)
		return NAN;
	return v->type == PT_RV_NUM ? v->num : v->type == PT_RV_INT ? (double)v->i : NAN;
}

static void text_side(const pt_rv *cmp, const char *key, const char *label, pt_sb *out)
{
	const pt_rv *s = pt_rv_get(cmp, key), *st = pt_rv_get(s, PT_KEY_STEP_MS), *p = pt_rv_get(s, PT_KEY_PATH);

	pt_sb_addf(out, "%-8s %9.3f ms per step (mean %.3f, p10 %.3f, p90 %.3f; noise %.3f ms; "
		   "%lld step%s on %lld worker%s", label, rv_num(st, "median"), rv_num(st, "mean"),
		   rv_num(st, "p10"),
		   rv_num(st, "p90"), rv_num(s, PT_KEY_NOISE_MS), (long long)rv_num(s, "steps"),
		   rv_num(s, "steps") == 1 ? "" : "s", (long long)rv_num(s, "workers"),
		   rv_num(s, "workers") == 1 ? "" : "s");
	if (rv_num(s, "failed") > 0)
		pt_sb_addf(out, ", %lld unreadable", (long long)rv_num(s, "failed"));
	pt_sb_addf(out, ")  %s\n", p && p->type == PT_RV_STR ? p->str : "");
}

void pt_compare_text(const pt_report *r, size_t max_findings, pt_sb *out)
{
	const pt_rv *cmp = pt_rv_get(pt_report_root_c(r), PT_KEY_COMPARE), *v, *e;
	const pt_finding *f;
	size_t shown = 0, nf, i;

	if (!cmp)
		return;
	v = pt_rv_get(cmp, PT_KEY_SUMMARY);
	pt_sb_addf(out, "%s\n\n", v && v->type == PT_RV_STR ? v->str : "");
	text_side(cmp, "baseline", "BASELINE", out);
	text_side(cmp, "new", "NEW", out);
	v = pt_rv_get(cmp, PT_KEY_PAIRING);
	if (v && v->type == PT_RV_STR && !strcmp(v->str, "rank"))
		pt_sb_addf(out, "Workers paired by rank (%lld pairs).\n", (long long)rv_num(cmp, "pairs"));
	else
		pt_sb_adds(out, "Workers compared as two populations (medians over each side's workers).\n");
	pt_sb_addf(out, "A function's change counts beyond its own step-to-step spread and "
		   "%.3f ms per step; the step time's threshold is %.3f ms.\n\n",
		   rv_num(cmp, PT_KEY_FLOOR_MS), rv_num(cmp, PT_KEY_THRESHOLD_MS));
	pt_sb_addf(out, "%-24s %12s %12s %12s\n", "ms per step", "BASELINE", "NEW", "change");
	for (e = pt_rv_get(cmp, PT_KEY_CLASSES) ? pt_rv_get(cmp, PT_KEY_CLASSES)->child : NULL; e; e = e->next) {
		const pt_rv *nm = pt_rv_get(e, PT_KEY_CLASS);

		pt_sb_addf(out, "%-24s %12.3f %12.3f %+12.3f\n",
			   nm && nm->type == PT_RV_STR ? nm->str : "", rv_num(e, PT_KEY_BASELINE_MS),
			   rv_num(e, PT_KEY_NEW_MS), rv_num(e, PT_KEY_DELTA_MS));
	}
	v = pt_rv_get(cmp, PT_KEY_CRITICAL_PATH_LC);
	if (v && v->type == PT_RV_ARR && v->n) {
		pt_sb_addf(out, "\n%-24s %12s %12s %12s\n", "critical path, ms/step", "BASELINE",
			   "NEW", "change");
		for (e = v->child; e; e = e->next) {
			const pt_rv *nm = pt_rv_get(e, PT_KEY_KIND);

			pt_sb_addf(out, "%-24s %12.3f %12.3f %+12.3f\n",
				   nm && nm->type == PT_RV_STR ? nm->str : "", rv_num(e, PT_KEY_BASELINE_MS),
				   rv_num(e, PT_KEY_NEW_MS), rv_num(e, PT_KEY_DELTA_MS));
		}
	}
	pt_sb_adds(out, "\nFindings (ranked by ms per step):\n");
	f = pt_report_findings(r, &nf);
	if (!nf) {
		pt_sb_adds(out, "No function changed beyond the noise.\n");
		return;
	}
	for (i = 0; i < nf; i++) {
		if (max_findings && shown == max_findings)
			break;
		shown++;
		pt_sb_addf(out, "%zu. ", shown);
		pt_finding_render(&f[i], NULL, NULL, out);
		pt_sb_addc(out, '\n');
	}
	if (shown < nf || rv_num(cmp, PT_KEY_MORE_FINDINGS) > 0)
		pt_sb_addf(out, "... and %lld more in report.json.\n",
			   (long long)(nf - shown) + (long long)rv_num(cmp, PT_KEY_MORE_FINDINGS));
}
