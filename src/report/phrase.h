/*
 * phrase.h - the one renderer of findings: a finding's sentence made from
 * its typed fields (report.h pt_finding: cause, workers, metrics, args,
 * steps, what-if) by one table of phrases keyed by cause kind.  Used for
 * report.json's "explanation" (workers by id, as the seed wrote them) and
 * the text report (workers by the label the caller resolves: "rank 7").
 *
 * Worker tokens: a name of a worker inside a finding's args is written as
 * a token (pt_who_token), so that each style resolves it: report.json
 * writes "worker w7.json" / "w7.json" / "rank 7 (w7.json)", the text report
 * "rank 7" (or the escaped id where ranks are not known and unique).
 */
#ifndef PT_PHRASE_H
#define PT_PHRASE_H

#include <stddef.h>

#include "report.h"

/* The report.json name of a cause kind ("" for PT_CAUSE_NONE and for a
 * kind out of range). */
const char *pt_cause_name(pt_cause c);

/* The page view a category belongs to ("compute", "workers", ...), NULL
 * for none (the "summary" findings, an unknown category). */
const char *pt_category_view(const char *category);

/* Worker token styles: 'W' "worker ID", 'I' "ID", 'R' "rank N (ID)" (with
 * rank >= 0; below 0 it is 'I').  Appends the token to sb. */
void pt_who_token(pt_sb *sb, char style, const char *id, long long rank);

/* The text style's resolver: the label of a worker id, NULL when unknown
 * (the id is then printed, escaped). */
typedef const char *(*pt_label_fn)(const void *ctx, const char *id);

/* Append f's sentence to out: the phrase of f->cause filled from its
 * fields.  label NULL: report.json's style (ids, bytes as they are);
 * otherwise the text report's (labels, control bytes escaped).  A finding
 * with PT_CAUSE_NONE renders as its explanation (tokens resolved). */
void pt_finding_render(const pt_finding *f, pt_label_fn label, const void *ctx, pt_sb *out);
/* Does f's what-if save something that shows at 0.01 ms (its step and the
 * step it replaces differ as the sentences print them)? */
int pt_what_if_shows(const pt_finding *f);

/* Resolve the worker tokens of text (report.json's style with label NULL,
 * else the text style as above), appending to out. */
void pt_who_resolve(const char *text, pt_label_fn label, const void *ctx, pt_sb *out);

/* One number as the sentences print it.  style: NULL or "" the unit's own
 * (ms: pt_fmt_ms, share: a percentage, count: an integer, otherwise %.3g);
 * "%" a share as "12.3%" (two decimals below 0.1%; "n/a" when not finite);
 * "ms" pt_fmt_ms; "d" an integer; a printf precision such as ".2f" or
 * ".3g" the number itself.  Returns buf. */
const char *pt_num_format(double v, pt_unit unit, const char *style, char *buf, size_t cap);

#endif
