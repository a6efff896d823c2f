/*
 * jsontok.c - the JSON tokenizer (see jsontok.h) under the DOM and the
 * summary reader.
 *
 * Shaped for the master reading 10,000 summaries (docs/summary.md
 * "Measured"): strings go 8 bytes per step and are decoded only when they
 * hold an escape, expected member names are matched with one memcmp of the
 * quoted name, and unknown values are validated and skipped without
 * building anything.
 */
#include "jsontok.h"
#include "jsonnum.h"
#include "utf8.h"
#include "xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void pt_jtok_init(pt_jtok *t, const char *buf, size_t len, pt_error *err)
{
	memset(t, 0, sizeof(*t));
	t->s = (const unsigned char *)(buf ? buf : "");
	t->len = buf ? len : 0;
	t->err = err;
}

void pt_jtok_init_fixed(pt_jtok *t, const char *buf, size_t len, char *scratch, size_t cap)
{
	pt_jtok_init(t, buf, len, NULL);
	t->tmp = scratch;
	t->tmpcap = cap;
	t->fixed = 1;
}

void pt_jtok_release(pt_jtok *t)
{
	x_free(t->tmp);
	t->tmp = NULL;
	t->tmpcap = 0;
}

int pt_jtok_fail(pt_jtok *t, int code, size_t off, const char *fmt, ...)
{
	char m[PT_ERROR_MSG_MAX];
	va_list ap;

	if (!t->failed) {
		t->failed = 1;
		va_start(ap, fmt);
		vsnprintf(m, sizeof(m), fmt, ap);
		va_end(ap);
		pt_error_set(t->err, code, off == (size_t)-1 ? -1 : (int64_t)off, "%s", m);
	}
	return -1;
}

int pt_jtok_fail_char(pt_jtok *t, size_t off, const char *what)
{
	unsigned c;

	if (off >= t->len)
		return pt_jtok_fail(t, PT_EPARSE, off, "unexpected end of input");
	c = t->s[off];
	if (c >= 0x20 && c < 0x7f)
		return pt_jtok_fail(t, PT_EPARSE, off, "unexpected character '%c', expected %s", c, what);
	return pt_jtok_fail(t, PT_EPARSE, off, "unexpected byte 0x%02x, expected %s", c, what);
}

static inline int is_digit(unsigned char c)
{
	return (unsigned)(c - '0') <= 9;
}

/* Nonzero when one of the 8 bytes (little-endian word) is '"', '\\', a
 * control byte or >= 0x80; its lowest set bit marks the first such byte
 * (the borrow tricks can only add false marks above a true one). */
static inline uint64_t special8(uint64_t x)
{
	const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
	uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');

	return (((q - ones) & ~q) | ((b - ones) & ~b) | ((x - ones * 0x20) & ~x) | x) & high;
}

/* Decode the rest of a string with escapes, from s[i] (the first
 * backslash) on, after the plain bytes s[start+1 .. i).  Out of line so
 * that the scanning loop keeps its registers: inlined, it cost 3 more
 * instructions per string (callgrind, `diagnose` of 200 DLRM summaries). */
static __attribute__((noinline)) int string_slow(pt_jtok *t, size_t start, size_t i,
						 const char **out, size_t *outlen)
{
	const char *msg;
	int rc;

	/* The decoded text is never longer than the input from the quote on,
	 * and pt_utf8_unquote wants 16 bytes to spare: then it never grows. */
	if (t->fixed && t->tmpcap < t->len - start + 16)
		return pt_jtok_fail(t, PT_ENOMEM, start, "string too long for the buffer");
	rc = pt_utf8_unquote(t->s, t->len, start, &i, &t->tmp, &t->tmpcap, outlen, &msg);

	if (rc == PT_ENOMEM)
		return pt_jtok_fail(t, PT_ENOMEM, t->pos, "out of memory");
	if (rc != PT_OK)
		return pt_jtok_fail(t, rc, i, "%s", msg);
	t->pos = i;
	*out = t->tmp;
	return 0;
}

int pt_jtok_string(pt_jtok *t, const char **out, size_t *outlen)
{
	const unsigned char *s = t->s;
	size_t start = t->pos, i = start + 1, len = t->len;

	for (;;) {
		unsigned c;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		/* 8 bytes per step to the next byte that needs a look: most
		 * of a summary's bytes are in long strings (pattern keys), and
		 * a byte loop alone slowed the whole parse (docs/bench.md,
		 * "Code shaped for speed"). */
		while (i + 8 <= len) {
			uint64_t x, m;

			memcpy(&x, s + i, 8);
			if ((m = special8(x))) {
				i += (size_t)__builtin_ctzll(m) >> 3;
				break;
			}
			i += 8;
		}
#endif
		while (i < len && s[i] >= 0x20 && s[i] < 0x80 && s[i] != '"' && s[i] != '\\')
			i++;
		if (i >= len)
			return pt_jtok_fail(t, PT_EPARSE, start, "unterminated string");
		c = s[i];
		if (c == '"') {
			*out = (const char *)s + start + 1;
			*outlen = i - start - 1;
			t->pos = i + 1;
			return 0;
		}
		if (c == '\\')
			return string_slow(t, start, i, out, outlen);
		if (c < 0x20)
			return pt_jtok_fail(t, PT_EPARSE, i, "control character in string");
		c = (unsigned)pt_utf8_len(s + i, len - i);
		if (!c)
			return pt_jtok_fail(t, PT_EPARSE, i, "invalid utf-8 in string");
		i += c;
	}
}

int pt_jtok_literal(pt_jtok *t, const char *lit, size_t n)
{
	if (t->len - t->pos < n || memcmp(t->s + t->pos, lit, n) != 0)
		return pt_jtok_fail_char(t, t->pos, "a json value");
	t->pos += n;
	return 0;
}

int pt_jtok_number(pt_jtok *t, double *out)
{
	size_t end = 0, start = t->pos;
	pt_jsonnum_status st = pt_jsonnum_parse((const char *)t->s + start, t->len - start, out, &end);

	if (st == PT_JSONNUM_OK) {
		t->pos = start + end;
		return 0;
	}
	return pt_jtok_fail(t, PT_EPARSE, start + end, "%s", pt_jsonnum_message(st));
}

/* After '{' or ',' in an object: the key and its ':'. */
static int member_key(pt_jtok *t)
{
	const char *str;
	size_t slen;

	pt_jtok_skip_ws(t);
	if (t->pos >= t->len || t->s[t->pos] != '"')
		return pt_jtok_fail_char(t, t->pos, "'\"' starting an object key");
	if (pt_jtok_string(t, &str, &slen))
		return -1;
	pt_jtok_skip_ws(t);
	if (t->pos >= t->len || t->s[t->pos] != ':')
		return pt_jtok_fail_char(t, t->pos, "':'");
	t->pos++;
	return 0;
}

int pt_jtok_skip_value(pt_jtok *t, int depth)
{
	unsigned char obj[PT_JSON_MAX_DEPTH];
	size_t open[PT_JSON_MAX_DEPTH];
	const char *str;
	size_t slen;
	double num;
	int n = 0;

	for (;;) {
		unsigned char c;

		/* A value. */
		if (pt_jtok_at_value(t))
			return -1;
		c = t->s[t->pos];
		if (c == '{' || c == '[') {
			if (depth + n >= PT_JSON_MAX_DEPTH)
				return pt_jtok_fail(t, PT_EPARSE, t->pos, "nesting deeper than 256 levels");
			obj[n] = c == '{';
			open[n++] = t->pos++;
			pt_jtok_skip_ws(t);
			if (t->pos < t->len && t->s[t->pos] == (c == '{' ? '}' : ']')) {
				t->pos++;
				n--;
			} else {
				if (c == '{' && member_key(t))
					return -1;
				continue;
			}
		} else if (c == '"') {
			if (pt_jtok_string(t, &str, &slen))
				return -1;
		} else if (c == 't') {
			if (pt_jtok_literal(t, "true", 4))
				return -1;
		} else if (c == 'f') {
			if (pt_jtok_literal(t, "false", 5))
				return -1;
		} else if (c == 'n') {
			if (pt_jtok_literal(t, "null", 4))
				return -1;
		} else if (c == '-' || is_digit(c)) {
			if (pt_jtok_number(t, &num))
				return -1;
		} else {
			return pt_jtok_fail_char(t, t->pos, "a json value");
		}
		/* After a value: close containers, or go on to the next element. */
		for (;;) {
			if (!n)
				return 0;
			pt_jtok_skip_ws(t);
			if (t->pos >= t->len)
				return pt_jtok_fail(t, PT_EPARSE, open[n - 1],
						    obj[n - 1] ? "unterminated object" : "unterminated array");
			c = t->s[t->pos];
			if (c == ',') {
				t->pos++;
				if (obj[n - 1] && member_key(t))
					return -1;
				break;
			}
			if (c == (obj[n - 1] ? '}' : ']')) {
				t->pos++;
				n--;
				continue;
			}
			return pt_jtok_fail_char(t, t->pos, obj[n - 1] ? "',' or '}'" : "',' or ']'");
		}
	}
}

void pt_jtok_obj_begin(pt_jtok *t, pt_jtok_obj *o)
{
	o->open = t->pos++;
	o->first = 1;
	o->hint = 0;
	o->seen = 0;
}

/* The i-th name of a table with rows of stride bytes. */
#define NAME(i) ((const pt_jtok_name *)((const char *)names + (size_t)(i) * stride))

int pt_jtok_obj_next(pt_jtok *t, pt_jtok_obj *o, const pt_jtok_name *names, int n)
{
	return pt_jtok_obj_next_row(t, o, names, n, sizeof(*names));
}

int pt_jtok_obj_next_row(pt_jtok *t, pt_jtok_obj *o, const pt_jtok_name *names, int n,
			 size_t stride)
{
	const unsigned char *s = t->s;
	const char *k;
	size_t kn;
	int id = PT_JTOK_UNKNOWN, h, i;

	pt_jtok_skip_ws(t);
	if (o->first) {
		o->first = 0;
		if (t->pos < t->len && s[t->pos] == '}') {
			t->pos++;
			return PT_JTOK_END;
		}
	} else {
		int rc = pt_jtok_next(t, o->open, '}');

		if (rc <= 0)
			return rc < 0 ? -1 : PT_JTOK_END;
		pt_jtok_skip_ws(t);
	}
	if (t->pos >= t->len || s[t->pos] != '"')
		return pt_jtok_fail_char(t, t->pos, "'\"' starting an object key");
	h = o->hint;
	if (h < n && t->len - t->pos >= NAME(h)->len + 2 && s[t->pos + 1 + NAME(h)->len] == '"' &&
	    !memcmp(s + t->pos + 1, NAME(h)->name, NAME(h)->len)) {
		id = h;
		t->pos += NAME(h)->len + 2;
	} else {
		if (pt_jtok_string(t, &k, &kn))
			return -1;
		for (i = 0; i < n; i++) {
			if (NAME(i)->len == kn && !memcmp(NAME(i)->name, k, kn)) {
				id = i;
				break;
			}
		}
	}
	if (id >= 0) {
		o->hint = id + 1;
		if (o->seen & ((uint64_t)1 << id))
			id = PT_JTOK_UNKNOWN;
		else
			o->seen |= (uint64_t)1 << id;
	}
	if (t->pos >= t->len || s[t->pos] != ':') {
		pt_jtok_skip_ws(t);
		if (t->pos >= t->len || s[t->pos] != ':')
			return pt_jtok_fail_char(t, t->pos, "':'");
	}
	t->pos++;
	if (pt_jtok_at_value(t))
		return -1;
	return id;
}
