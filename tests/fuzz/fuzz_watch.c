/*
 * fuzz_watch.c - libFuzzer target for the watch's readers (src/watch): the
 * input's lines go to pt_watch_feed_line (as the agent reads the
 * collectors' watch files) for two workers, then pt_watch_eval; the whole
 * input also to pt_watch_node_parse (the per-node file status reads).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "watch/watch.h"
#include "util/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pt_watch *w = pt_watch_new(NULL);
	const char *p = (const char *)data, *end = p + size;
	pt_watch_rank *r = NULL;
	size_t n = 0, k = 0;
	double t;

	if (!w)
		return 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		pt_watch_feed_line(w, k++ % 2 ? "h_1_2" : "h_0_1", p, len, NULL);
		p += len + 1;
	}
	pt_watch_eval(w, 0);
	pt_watch_ranks(w, &n);
	pt_watch_free(w);
	pt_watch_node_parse((const char *)data, size, &r, &n, &t, NULL);
	x_free(r);
	return 0;
}
