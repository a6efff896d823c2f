/*
 * strtab.h - the string table: interns names so events carry 32-bit ids.
 *
 * Part of the per-worker model (src/model).  Kernel names are often
 * hundreds of bytes and repeat thousands of times per trace; interning keeps
 * the event store small and makes grouping by function an integer compare.
 * Id 0 is always the empty string.  Not thread-safe: one table per worker.
 */
#ifndef PT_STRTAB_H
#define PT_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "../util/api.h"

PT_API_BEGIN

typedef struct pt_strtab pt_strtab;

#define PT_STR_NONE 0u

/* New empty table, or NULL on allocation failure.  Free with pt_strtab_free. */
pt_strtab *pt_strtab_new(void);
void pt_strtab_free(pt_strtab *t); /* NULL is a no-op */

/* Intern s[0..n); returns its id, or UINT32_MAX on allocation failure.
 * Equal strings always get the same id.  s need not be NUL-terminated. */
uint32_t pt_strtab_intern(pt_strtab *t, const char *s, size_t n);

/* The string for id (NUL-terminated, owned by the table, valid until the
 * table is freed); *len receives its length when len is not NULL.
 * An unknown id returns "". */
const char *pt_strtab_get(const pt_strtab *t, uint32_t id, size_t *len);

/* Number of distinct strings, the empty string included. */
uint32_t pt_strtab_count(const pt_strtab *t);

/* Bytes held by the table (for memory accounting in benchmarks). */
size_t pt_strtab_bytes(const pt_strtab *t);

PT_API_END

#endif
