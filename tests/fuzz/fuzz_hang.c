/*
 * fuzz_hang.c - libFuzzer target for the stack-dump parser and the hang
 * analysis (src/hang/hang.c): parses arbitrary bytes as a watchdog dump,
 * then normalises, groups and reports three copies of it (one a step behind)
 * so every path of the analysis runs on whatever parsed; ASan/UBSan catch
 * any out-of-bounds read or leak.
 */
#include <stddef.h>
#include <stdint.h>

#include "hang/hang.h"
#include "util/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pt_hang_dump d;
	pt_hang_worker w[3] = {
		{ "h_0_1", "h", 0, 1, PT_HANG_HUNG, 10, 61, NULL, "on request" },
		{ "h_1_2", "h", 1, 2, PT_HANG_HUNG, 9, 62, NULL, "on request" },
		{ "h_2_3", "h", 2, 3, PT_HANG_DEAD, 10, -1, NULL, "none" },
	};
	pt_hang_options o = { 60, "fuzz", 0 };
	pt_hang_result r;
	pt_report *rep;

	if (pt_hang_parse_dump((const char *)data, size, &d, NULL) != PT_OK)
		return 0;
	for (size_t i = 0; i < d.nthreads; i++) {
		char *k = pt_hang_stack_key(&d.threads[i]);

		x_free(k);
		pt_hang_user_frame(&d.threads[i]);
	}
	w[0].dump = w[1].dump = &d;
	if (pt_hang_analyze(w, 3, &o, &r, NULL) == PT_OK) {
		rep = pt_hang_report(w, 3, &o, &r, NULL);
		pt_report_free(rep);
		pt_hang_result_free(&r);
	}
	pt_hang_dump_free(&d);
	return 0;
}
