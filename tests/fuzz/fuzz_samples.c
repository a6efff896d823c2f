/*
 * fuzz_samples.c - libFuzzer target for the "perftracker-hw" samples reader
 * (src/model/samples.c): parse arbitrary bytes; on success write the
 * samples back, re-read them (the round trip must succeed) and take window
 * statistics of every series.  ASan/UBSan catch bad reads, overflow, leaks.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "model/samples.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pt_samples h, h2;
	pt_error e;
	pt_sb sb = {0};
	size_t i;

	pt_error_clear(&e);
	if (pt_samples_parse((const char *)data, size, &h, &e))
		return 0;
	for (i = 0; i < h.n; i++) {
		const pt_series *s = &h.s[i];
		double m, sd;

		if (s->n)
			pt_samples_window_stats(s, s->t_ns[0], s->t_ns[s->n - 1], 1, &m, &sd);
	}
	if (pt_samples_to_json(&h, &sb) == PT_OK) {
		pt_error_clear(&e);
		/* What we wrote must read back. */
		if (pt_samples_parse(sb.buf, sb.len, &h2, &e))
			abort();
		if (h2.n != h.n)
			abort();
		pt_samples_free(&h2);
	}
	pt_sb_free(&sb);
	pt_samples_free(&h);
	return 0;
}
