/*
 * fuzz_kineto.c - libFuzzer target for the streaming Kineto reader
 * (src/trace/kineto.c, src/trace/input.c).
 *
 * Reads the input into a fresh store and frees it; then reads it again
 * with a tiny chunk size (from the first byte) and traps unless the result
 * is the same: the refill/restart logic must never change what is read.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "trace/kineto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pt_store a, b;
	pt_error ea, eb;
	int ra, rb;
	size_t chunk = 16 + (size ? data[0] % 48 : 0);

	if (pt_store_init(&a) || pt_store_init(&b))
		__builtin_trap();
	pt_error_clear(&ea);
	pt_error_clear(&eb);
	ra = pt_kineto_read_mem(data, size, &a, &ea);
	rb = pt_kineto_read_mem_chunked(data, size, chunk, &b, &eb);
	if (ra != rb || a.n != b.n || a.nlanes != b.nlanes || a.nsteps != b.nsteps ||
	    a.truncated != b.truncated || a.nwarnings != b.nwarnings ||
	    strcmp(a.warning, b.warning) || (ra && (ea.offset != eb.offset || strcmp(ea.msg, eb.msg))))
		__builtin_trap();
	if (ra == PT_OK && a.n && (a.ev[0].ts != b.ev[0].ts || a.ev[a.n - 1].dur != b.ev[b.n - 1].dur))
		__builtin_trap();
	pt_store_free(&a);
	pt_store_free(&b);
	return 0;
}
