/*
 * fuzz_diagnose.c - libFuzzer target for the master's diagnosis: the input
 * is up to 16 worker summaries separated by form feeds; each one the
 * summary reader accepts becomes a worker (the others failed workers), and
 * the whole set goes through pt_diagnose and both text renderings.  The
 * sections index per-worker buffers by counts the summaries carry (steps,
 * collectives, patterns), so any set of summaries must give a report.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/summary.h"
#include "diagnose/diagnose.h"
#include "report/report.h"

#define MAX_WORKERS 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pt_summary *s[MAX_WORKERS];
	const char *p = (const char *)data, *end = p + size;
	size_t n = 0, i;
	pt_error err;
	pt_report *r;
	pt_sb sb = { 0 };

	while (p <= end && n < MAX_WORKERS) {
		const char *ff = memchr(p, '\f', (size_t)(end - p));
		size_t len = ff ? (size_t)(ff - p) : (size_t)(end - p);
		char name[32];

		pt_error_clear(&err);
		snprintf(name, sizeof(name), "w%zu.json", n);
		s[n] = pt_summary_read_mem(p, len, &err);
		if (!s[n])
			s[n] = pt_summary_failed(name, err.msg);
		if (!s[n])
			break;
		n++;
		if (!ff)
			break;
		p = ff + 1;
	}
	pt_error_clear(&err);
	r = pt_diagnose(s, n, NULL, &err);
	if (r) {
		pt_report_text(r, 20, &sb);
		pt_sb_free(&sb);
		pt_report_text_json(r, 20, &sb);
		pt_sb_free(&sb);
		pt_report_free(r);
	}
	for (i = 0; i < n; i++)
		pt_summary_free(s[i]);
	return 0;
}
