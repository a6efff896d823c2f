/*
 * strbuf.h - a growable byte buffer used to build JSON, text reports and
 * keys, and the JSON emitting (strings, numbers, members) every writer uses:
 * summaries, report.json, control and node records, hardware samples.
 *
 * A pt_sb starts zeroed ({0}) and always stays NUL-terminated once anything
 * was added.  On allocation failure the buffer sets ->oom and ignores
 * further appends, so builders can append freely and check once at the end.
 * Not thread-safe; one buffer per thread.
 */
#ifndef PT_STRBUF_H
#define PT_STRBUF_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"

PT_API_BEGIN

typedef struct pt_sb {
	char *buf;
	size_t len, cap;
	int oom;
} pt_sb;

void pt_sb_add(pt_sb *sb, const char *s, size_t n);
void pt_sb_adds(pt_sb *sb, const char *s);
void pt_sb_addc(pt_sb *sb, char c);
void pt_sb_addf(pt_sb *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append an integer in decimal ("%lld" / "%llu" without the format). */
void pt_sb_add_i64(pt_sb *sb, int64_t v);
void pt_sb_add_u64(pt_sb *sb, uint64_t v);
/* Append s[0..n) as a JSON string literal, quotes included.  Control bytes
 * are escaped; invalid UTF-8 bytes are written as U+FFFD so output is valid JSON. */
void pt_sb_add_json_str(pt_sb *sb, const char *s, size_t n);
/* The same, ASCII only, as Python's json.dumps writes it (ensure_ascii):
 * every byte from 0x7f up as \uXXXX (surrogate pairs above U+FFFF). */
void pt_sb_add_json_str_ascii(pt_sb *sb, const char *s, size_t n);
/* Append an object member's name: `,"key":` (no comma when first), and
 * members whose values are an integer or a double (pt_sb_add_double). */
void pt_sb_add_json_key(pt_sb *sb, const char *key, int first);
void pt_sb_add_json_i64(pt_sb *sb, const char *key, int64_t v);
void pt_sb_add_json_dbl(pt_sb *sb, const char *key, double v);
/* Append a double the way Python's json module would (repr, shortest
 * round-trip, "3.0" for integral values below 1e16; NaN/inf written as
 * null since JSON has no such values): the number rule of every JSON
 * writer in PerfTracker, so every double reads back bit for bit. */
void pt_sb_add_double(pt_sb *sb, double v);
void pt_sb_reset(pt_sb *sb);
/* Take ownership of the buffer (never NULL unless oom); sb is reset. */
char *pt_sb_detach(pt_sb *sb, size_t *len);
void pt_sb_free(pt_sb *sb);

PT_API_END

#endif
