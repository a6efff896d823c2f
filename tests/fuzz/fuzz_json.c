/*
 * fuzz_json.c - libFuzzer target for the JSON DOM (src/util/json.c).
 * Parses arbitrary bytes, walks the result through the accessors and frees
 * it; ASan/UBSan catch any out-of-bounds read or leak.
 */
#include <stddef.h>
#include <stdint.h>

#include "util/json.h"

static size_t walk(const pt_json *v, int depth)
{
	size_t n = 1, i;

	if (v->type == PT_JSON_ARR || v->type == PT_JSON_OBJ) {
		for (i = 0; i < v->len; i++)
			n += walk(pt_json_at(v, i), depth + 1);
	} else if (v->type == PT_JSON_STR && v->len) {
		n += (unsigned char)v->str[v->len - 1];
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pt_error e;
	pt_json *j;

	pt_error_clear(&e);
	j = pt_json_parse((const char *)data, size, &e);
	if (j) {
		walk(j, 0);
		pt_json_num(j, "a", 0);
		pt_json_strv(j, "b", "");
	}
	pt_json_free(j);
	return 0;
}
