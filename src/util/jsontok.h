/*
 * jsontok.h - the JSON tokenizer the DOM (util/json.c) and the summary
 * reader (analysis/summary_parse.c) are built on: a cursor over a buffer,
 * whitespace, strings (8 bytes per step to the next quote, escape or
 * non-ASCII byte), numbers (util/jsonnum.h), literals, validating skips of
 * whole values, and objects whose member names come from a table.
 *
 * Raw traces do not come here: src/trace/kineto.c has its own streaming
 * scanner, shaped for gigabyte inputs.
 *
 * Strict RFC 8259 (no comments, no trailing commas, UTF-8 checked); every
 * error fills the pt_error once (the first one counts) with PT_EPARSE or
 * PT_ENOMEM, the byte offset and the message the DOM has always given.
 * Reads only buf[0..len) (no NUL needed).  One pt_jtok per thread; the only
 * allocation is the scratch buffer for strings with escapes (freed by
 * pt_jtok_release).
 */
#ifndef PT_JSONTOK_H
#define PT_JSONTOK_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* Containers nested deeper than this are an error (also the DOM's limit). */
#define PT_JSON_MAX_DEPTH 256

typedef struct pt_jtok {
	const unsigned char *s;
	size_t len, pos;   /* the input, and the cursor in it */
	pt_error *err;     /* may be NULL */
	int failed;        /* an error was reported: callers stop */
	char *tmp;         /* decoded text of the last string with escapes */
	size_t tmpcap;
	int fixed;         /* tmp is the caller's: never grown (pt_jtok_init_fixed) */
} pt_jtok;

/* Start at buf[0] (buf NULL reads as empty); err may be NULL. */
void pt_jtok_init(pt_jtok *t, const char *buf, size_t len, pt_error *err);
/* The same for a tokenizer that never allocates (the collector's watchdog
 * reads its request while the process may hold the malloc lock): strings
 * with escapes are decoded into scratch[0..cap), and one that might not fit
 * (cap < 16 + the bytes left from its quote) is an error.  Do not call
 * pt_jtok_release on it. */
void pt_jtok_init_fixed(pt_jtok *t, const char *buf, size_t len, char *scratch, size_t cap);
/* Free the scratch buffer (strings returned earlier may point into it). */
void pt_jtok_release(pt_jtok *t);

/* Report an error at off (the first one only; later calls do nothing);
 * off (size_t)-1 means no offset.  Always returns -1. */
int pt_jtok_fail(pt_jtok *t, int code, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* "unexpected character 'x', expected <what>" (or byte 0xNN, or "unexpected
 * end of input") for the byte at off.  Returns -1. */
int pt_jtok_fail_char(pt_jtok *t, size_t off, const char *what);

static inline void pt_jtok_skip_ws(pt_jtok *t)
{
	while (t->pos < t->len) {
		unsigned char c = t->s[t->pos];

		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			break;
		t->pos++;
	}
}

/* Skip whitespace and require a value to follow: 0, or -1 ("unexpected end
 * of input"). */
static inline int pt_jtok_at_value(pt_jtok *t)
{
	if (t->pos < t->len && t->s[t->pos] > ' ')
		return 0;
	pt_jtok_skip_ws(t);
	if (t->pos >= t->len)
		return pt_jtok_fail(t, PT_EPARSE, t->pos, "unexpected end of input");
	return 0;
}

/* Containers: with the cursor on '[' (or '{'), pt_jtok_open steps in and
 * returns 0 when the container is empty (its close is consumed too), 1
 * when an element follows.  After each element, pt_jtok_next: 1 with the
 * cursor past ',' (another element), 0 past close, -1 with "unterminated
 * array/object" (at open) or "expected ',' or ']'" set.  close is ']' or
 * '}'. */
static inline int pt_jtok_open(pt_jtok *t, int close)
{
	t->pos++;
	pt_jtok_skip_ws(t);
	if (t->pos < t->len && t->s[t->pos] == close) {
		t->pos++;
		return 0;
	}
	return 1;
}

static inline int pt_jtok_next(pt_jtok *t, size_t open, int close)
{
	pt_jtok_skip_ws(t);
	if (t->pos >= t->len)
		return pt_jtok_fail(t, PT_EPARSE, open,
				    close == ']' ? "unterminated array" : "unterminated object");
	if (t->s[t->pos] == ',') {
		t->pos++;
		return 1;
	}
	if (t->s[t->pos] == close) {
		t->pos++;
		return 0;
	}
	return pt_jtok_fail_char(t, t->pos, close == ']' ? "',' or ']'" : "',' or '}'");
}

/* The string whose opening quote is at the cursor: *out / *outlen is its
 * decoded text, in the input when it has no escapes, else in t->tmp (valid
 * until the next string); not NUL-terminated.  0, or -1 after an error. */
int pt_jtok_string(pt_jtok *t, const char **out, size_t *outlen);
/* The number at the cursor (jsonnum.h: exact).  0, or -1. */
int pt_jtok_number(pt_jtok *t, double *out);
/* The literal lit[0..n) ("true", "false", "null") at the cursor.  0 or -1. */
int pt_jtok_literal(pt_jtok *t, const char *lit, size_t n);
/* Validate and skip the value at the cursor (whitespace already skipped),
 * which sits at nesting depth `depth` (the root is 0).  Iterative: hostile
 * nesting costs no stack.  0 or -1. */
int pt_jtok_skip_value(pt_jtok *t, int depth);

/* ---- objects whose members come from a table --------------------------- */

/* A member name and its length (PT_JTOK_NAME("x") builds one). */
typedef struct pt_jtok_name {
	const char *name;
	size_t len;
} pt_jtok_name;

#define PT_JTOK_NAME(s) { s, sizeof(s) - 1 }

/* Iteration state of one object (at most 64 table entries). */
typedef struct pt_jtok_obj {
	size_t open;    /* offset of '{' */
	int first;
	int hint;       /* the entry tried first: the one after the last match */
	uint64_t seen;  /* bit i: entry i was seen */
} pt_jtok_obj;

#define PT_JTOK_END (-2)      /* the object ended */
#define PT_JTOK_UNKNOWN (-3)  /* a member not in the table, or a repeated one */

/* At '{': begin iterating. */
void pt_jtok_obj_begin(pt_jtok *t, pt_jtok_obj *o);
/* The next member: its index among the n names with the cursor at its value
 * (whitespace skipped), PT_JTOK_UNKNOWN (the caller skips the value),
 * PT_JTOK_END after the closing brace, or -1 after an error.  The entry
 * after the last match is tried first with one memcmp (members usually come
 * in table order); a name seen before comes back as PT_JTOK_UNKNOWN, so the
 * first of duplicate keys counts, as with pt_json_get.  At most 64 names. */
int pt_jtok_obj_next(pt_jtok *t, pt_jtok_obj *o, const pt_jtok_name *names, int n);
/* The same over the rows of a table whose rows begin with a pt_jtok_name:
 * names is the first row's, stride the size of a row. */
int pt_jtok_obj_next_row(pt_jtok *t, pt_jtok_obj *o, const pt_jtok_name *names, int n,
			 size_t stride);

#endif
