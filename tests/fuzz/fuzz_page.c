/*
 * fuzz_page.c - libFuzzer target for the PerfDisplay page writer
 * (src/report/page.c): arbitrary bytes as a report.  When the writer
 * accepts them, the JSON it embedded must contain no '<' (so nothing in a
 * report can end the <script> block) and must parse to the same shape.
 * Also runs the server's path resolution on the bytes as a request path.
 */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/page.h"
#include "display/server.h"
#include "util/json.h"
#include "util/strbuf.h"

static size_t count(const pt_json *v)
{
	size_t n = 1, i;

	if (v->type == PT_JSON_ARR || v->type == PT_JSON_OBJ)
		for (i = 0; i < v->len; i++)
			n += count(pt_json_at(v, i));
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char open_tag[] = "id=\"pt-report\">";
	pt_sb sb = { 0 };
	pt_error e;
	char path[PATH_MAX], *req;

	pt_error_clear(&e);
	if (pt_page_render((const char *)data, size, &sb, &e) == PT_OK) {
		const char *a = strstr(sb.buf, open_tag);
		const char *b;
		pt_json *in, *out;

		if (!a)
			abort();
		a += sizeof(open_tag) - 1;
		b = strstr(a, "</script>");
		if (!b || memchr(a, '<', (size_t)(b - a)))
			abort();
		in = pt_json_parse((const char *)data, size, &e);
		out = pt_json_parse(a, (size_t)(b - a), &e);
		if (!in || !out || count(in) != count(out))
			abort();
		pt_json_free(in);
		pt_json_free(out);
	}
	pt_sb_free(&sb);

	req = malloc(size + 2);
	if (req) {
		req[0] = '/';
		memcpy(req + 1, data, size);
		req[size + 1] = 0;
		pt_display_resolve("/nonexistent-fuzz-root", req, path, sizeof(path));
		free(req);
	}
	return 0;
}
