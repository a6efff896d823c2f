/*
 * keys.h - the function key's rules that more than one stage reads.
 *
 * A kernel's key is its name followed by its launch shape, "G_G_G|B_B_B"
 * (grid, "|", block; docs/design.md "Function key"), written by the trace
 * readers and taken apart by the diagnosis and the report to print short
 * names.  Pure functions on strings; thread-safe.
 */
#ifndef PT_KEYS_H
#define PT_KEYS_H

#include <stddef.h>

/* Length of key[0..n) without a trailing launch shape "G_G_G|B_B_B"; n
 * when it has none.  key may be NULL only when n is 0. */
size_t pt_key_strip_shape(const char *key, size_t n);

#endif
