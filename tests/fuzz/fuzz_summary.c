/*
 * fuzz_summary.c - libFuzzer target for the summary reader (the master's
 * input): any bytes must give a summary or an error, and a summary that was
 * read must survive a write -> read round trip with the same patterns; read
 * slim (a digest's patterns in PT_PATTERN_HOT bytes) it must give the same
 * patterns' keys and counts.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/summary.h"
#include "analysis/summary_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pt_error err;
	pt_summary *s, *r;
	pt_sb sb = { 0 };

	pt_error_clear(&err);
	s = pt_summary_read_mem((const char *)data, size, &err);
	if (!s)
		return 0;
	pt_summary_write(s, &sb);
	r = pt_summary_read_mem(sb.buf, sb.len, &err);
	if (!r || r->npatterns != s->npatterns)
		abort();
	pt_summary_free(r);
	r = pt_summary_parse_opt((const char *)data, size, NULL, 1, &err);
	if (!r || r->npatterns != s->npatterns)
		abort();
	for (size_t i = 0; i < r->npatterns; i++)
		if (pt_summary_pat(r, i)->count != pt_summary_pat(s, i)->count ||
		    strcmp(pt_summary_pat(r, i)->key, pt_summary_pat(s, i)->key))
			abort();
	pt_summary_free(r);
	pt_sb_free(&sb);
	pt_summary_free(s);
	return 0;
}
