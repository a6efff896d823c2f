/*
 * text.c - the seed's text report (`--format json` of diagnose/analyze):
 * each seed section as "<name>:" and its JSON (indent 4) as the original
 * tool logged them, then the findings as numbered plain sentences.  The
 * default report for people is text_people.c.  Reads the seed sections
 * from the report tree and the findings from the finding model.
 */
#include "report.h"
#include "phrase.h"

#include <string.h>

void pt_report_text_json(const pt_report *r, size_t max_findings, pt_sb *out)
{
	const pt_rv *root = pt_report_root_c(r);
	const pt_finding *f;
	size_t i, nf, shown = 0;

	for (i = 0; i < 5; i++) {
		pt_sb_addf(out, "%s:\n", pt_report_sections[i]);
		pt_report_json(pt_rv_get(root, pt_report_sections[i]), 0, out);
		pt_sb_add(out, "\n\n", 2);
	}
	pt_sb_adds(out, "Findings:\n");
	f = pt_report_findings(r, &nf);
	if (!nf) {
		pt_sb_adds(out, "No worker differs from the others beyond the thresholds.\n");
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
	if (shown < nf)
		pt_sb_addf(out, "... and %zu more findings in report.json.\n", nf - shown);
}
