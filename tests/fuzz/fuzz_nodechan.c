/*
 * fuzz_nodechan.c - libFuzzer target for the node file parser
 * (src/control/nodechan.c, pt_nodechan_node_parse): arbitrary bytes as an
 * agents/<host>.json node file; whatever parses is written back as a node
 * file and parsed again, which must give the same workers.  ASan/UBSan
 * catch any out-of-bounds read or leak.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "control/nodechan.h"
#include "util/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pt_node_worker *w = NULL, *w2 = NULL;
	size_t n = 0, n2 = 0;
	pt_node_agent a;
	pt_sb sb = { 0 };

	if (pt_nodechan_node_parse((const char *)data, size, &w, &n, NULL) != PT_OK)
		return 0;
	memset(&a, 0, sizeof(a));
	strcpy(a.host, "h");
	pt_nodechan_node_json(&sb, &a, w, n);
	if (!sb.oom && pt_nodechan_node_parse(sb.buf, sb.len, &w2, &n2, NULL) == PT_OK) {
		if (n2 != n)
			abort();
		for (size_t i = 0; i < n; i++)
			if (strcmp(w[i].e.info.id, w2[i].e.info.id) || w[i].e.hb.step != w2[i].e.hb.step ||
			    w[i].has_status != w2[i].has_status)
				abort();
	}
	pt_sb_free(&sb);
	x_free(w);
	x_free(w2);
	return 0;
}
