/*
 * strtab.h - string interning: the string table (names as 32-bit ids, one
 * per worker) and the shared set (stable strings for many threads).
 *
 * Part of the per-worker model (src/model).  Kernel names are often
 * hundreds of bytes and repeat thousands of times per trace; interning keeps
 * the event store small and makes grouping by function an integer compare.
 * Id 0 is always the empty string.  A pt_strtab is not thread-safe (one
 * table per worker); a pt_strset is.
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

/* ---- the shared set ------------------------------------------------------- */

/* A thread-safe set of strings, each held once, at an address that never
 * moves: the summaries of one job repeat the same few hundred pattern keys
 * (the 8-rank DLRM set: 377 distinct keys among 2.8 M patterns of 10,000
 * workers, 68 KB of key text per summary), so 10,000 summaries in memory
 * take 430 MB with a shared set, 1,040 MB without.  Any thread may intern;
 * free the set only when nothing points into it any more. */
typedef struct pt_strset pt_strset;

pt_strset *pt_strset_new(void);      /* NULL when out of memory */
void pt_strset_free(pt_strset *set); /* NULL is a no-op; frees the strings */
/* The set's NUL-terminated copy of s[0..n), added if new; NULL when out of
 * memory. */
const char *pt_strset_intern(pt_strset *set, const char *s, size_t n);
size_t pt_strset_count(const pt_strset *set);  /* distinct strings held */

PT_API_END

#endif
