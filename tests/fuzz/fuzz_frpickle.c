/*
 * fuzz_frpickle.c - libFuzzer target for the Flight Recorder pickle reader
 * (src/model/frpickle.c), which the collector's watch thread runs on the
 * bytes torch hands out: any input gives entries or a clean error.
 */
#include <stddef.h>
#include <stdint.h>

#include "model/frpickle.h"
#include "util/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pt_fr_entry *e = NULL;
	size_t n = 0;
	pt_error err;

	pt_error_clear(&err);
	if (pt_frpickle_entries(data, size, &e, &n, &err) == PT_OK)
		for (size_t i = 0; i < n; i++)
			if (!e[i].pg[0] && e[i].created_ns < 0)
				__builtin_trap();
	x_free(e);
	return 0;
}
