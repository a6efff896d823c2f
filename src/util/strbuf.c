/*
 * strbuf.c - growable buffer and JSON-safe appenders (see strbuf.h).
 * Used by the summary writer, the report writers and key builders.
 */
#include "strbuf.h"
#include "bsearch.h"
#include "utf8.h"
#include "xalloc.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int reserve(pt_sb *sb, size_t extra)
{
	if (sb->oom)
		return -1;
	if (sb->len + extra + 1 < sb->len || X_GROW(sb->buf, sb->cap, sb->len + extra + 1)) {
		sb->oom = 1;
		return -1;
	}
	return 0;
}

void pt_sb_add(pt_sb *sb, const char *s, size_t n)
{
	if (reserve(sb, n))
		return;
	if (n)  /* s may be NULL when n is 0 (memcpy forbids that) */
		memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = 0;
}

void pt_sb_adds(pt_sb *sb, const char *s) { pt_sb_add(sb, s, strlen(s)); }

void pt_sb_addc(pt_sb *sb, char c) { pt_sb_add(sb, &c, 1); }

/* One vsnprintf when the text fits in what the buffer has spare (it
 * nearly always does once the buffer has grown): measuring first, then
 * writing, formatted everything twice (vsnprintf was 3.7% of summarize's
 * instructions on the bench DLRM trace, most of it through here). */
void pt_sb_addf(pt_sb *sb, const char *fmt, ...)
{
	va_list ap;
	size_t room;
	int n;

	if (sb->oom)
		return;
	room = sb->buf ? sb->cap - sb->len : 0;
	va_start(ap, fmt);
	n = vsnprintf(room ? sb->buf + sb->len : NULL, room, fmt, ap);
	va_end(ap);
	if (n < 0) {
		if (sb->buf)
			sb->buf[sb->len] = 0;
		return;
	}
	if ((size_t)n < room) {
		sb->len += (size_t)n;
		return;
	}
	if (reserve(sb, (size_t)n)) {
		if (sb->buf)
			sb->buf[sb->len] = 0;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
}

/* The decimal digits of v, written backwards ending before end: their
 * start. */
static char *u64_digits(char *end, uint64_t v)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

void pt_sb_add_u64(pt_sb *sb, uint64_t v)
{
	char buf[24], *s = u64_digits(buf + sizeof(buf), v);

	pt_sb_add(sb, s, (size_t)(buf + sizeof(buf) - s));
}

void pt_sb_add_i64(pt_sb *sb, int64_t v)
{
	char buf[24], *s = u64_digits(buf + sizeof(buf), v < 0 ? 0 - (uint64_t)v : (uint64_t)v);

	if (v < 0)
		*--s = '-';
	pt_sb_add(sb, s, (size_t)(buf + sizeof(buf) - s));
}

/* One JSON string writer for both styles: ascii (Python's json.dumps
 * default, for report.json: everything from 0x7f up as \uXXXX, \b and \f
 * short) or UTF-8 passed through (summaries and records: smaller).  Runs of
 * plain bytes go over in one copy. */
static void json_str(pt_sb *sb, const char *str, size_t n, int ascii)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned top = ascii ? 0x7f : 0x80;
	size_t i = 0, run = 0;

	pt_sb_addc(sb, '"');
	while (i < n) {
		unsigned c = s[i];
		uint32_t cp = 0xfffd;
		size_t l;

		if (c >= 0x20 && c < top && c != '"' && c != '\\') {
			i++;
			run++;
			continue;
		}
		pt_sb_add(sb, (const char *)s + i - run, run);
		run = 0;
		if (c < 0x80) {
			i++;
			switch (c) {
			case '"': pt_sb_add(sb, "\\\"", 2); break;
			case '\\': pt_sb_add(sb, "\\\\", 2); break;
			case '\n': pt_sb_add(sb, "\\n", 2); break;
			case '\r': pt_sb_add(sb, "\\r", 2); break;
			case '\t': pt_sb_add(sb, "\\t", 2); break;
			case '\b':
			case '\f':
				if (ascii) {
					pt_sb_add(sb, c == '\b' ? "\\b" : "\\f", 2);
					break;
				}
				/* fall through */
			default: pt_sb_addf(sb, "\\u%04x", c); break;
			}
			continue;
		}
		l = pt_utf8_decode(s + i, n - i, &cp);  /* 0: invalid, written as U+FFFD */
		if (!ascii) {
			if (l)
				pt_sb_add(sb, (const char *)s + i, l);
			else
				pt_sb_add(sb, "\xef\xbf\xbd", 3);
			i += l ? l : 1;
			continue;
		}
		i += l ? l : 1;
		if (cp >= 0x10000) {
			cp -= 0x10000;
			pt_sb_addf(sb, "\\u%04x\\u%04x", 0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
		} else {
			pt_sb_addf(sb, "\\u%04x", cp);
		}
	}
	pt_sb_add(sb, (const char *)s + i - run, run);
	pt_sb_addc(sb, '"');
}

void pt_sb_add_json_str(pt_sb *sb, const char *s, size_t n)
{
	json_str(sb, s, n, 0);
}

void pt_sb_add_json_str_ascii(pt_sb *sb, const char *s, size_t n)
{
	json_str(sb, s, n, 1);
}

static int roundtrips(double v, int prec, char *buf, size_t cap)
{
	snprintf(buf, cap, "%.*g", prec, v);
	return strtod(buf, NULL) == v;
}

/* v written with nd decimals when it is k / scale (pscale = scale as an
 * integer) for an integer k, trailing zeros dropped, into buf; 0 when v is
 * not on that grid or is a whole number. */
static int on_grid(double v, double scale, long long pscale, int nd, char *buf, size_t cap)
{
	double k = round(v * scale);
	long long ak, frac;
	char tail[48], *q;
	size_t n;

	if (k / scale != v)
		return 0;
	ak = llabs((long long)k);
	frac = ak % pscale;
	if (!frac)
		return 0;
	while (frac % 10 == 0) {
		frac /= 10;
		nd--;
	}
	/* "%s%lld.%0*lld" by hand (snprintf was most of this function) */
	q = u64_digits(tail + sizeof(tail), (uint64_t)frac);
	while (q > tail + sizeof(tail) - nd)
		*--q = '0';
	*--q = '.';
	q = u64_digits(q, (uint64_t)(ak / pscale));
	if (v < 0)
		*--q = '-';
	n = (size_t)(tail + sizeof(tail) - q);
	if (n >= cap)
		return 0;
	memcpy(buf, q, n);
	buf[n] = 0;
	return 1;
}

/* The number rule of every JSON writer: Python's repr().  Most doubles
 * need 16-17 digits, so try 15 first and binary-search below it (fewer
 * digits round-trip only if more do) instead of trying 1, 2, ... 17: a
 * 10,000-worker report is written several times faster.  Values on a
 * 10^-4 grid (trace times in whole us written in ms, heatmap cells rounded
 * to 4 decimals) or on a 10^-6 grid (whole ns written in ms: the critical
 * path's times) are printed directly: two decimal forms of at most 15
 * significant digits never read back as the same double while an ulp of
 * v is under half the grid (|v| < 1e11 for 10^-4, < 2^31 for 10^-6), so
 * k / 10^d is the shortest form, in fixed notation like repr (which uses
 * it from 1e-4 up); that report's heatmap cells go several times faster
 * this way (docs/bench.md, "Code shaped for speed"). */
void pt_sb_add_double(pt_sb *sb, double v)
{
	char buf[40], best[40];
	size_t lo, hi;

	if (!isfinite(v)) {
		pt_sb_add(sb, "null", 4);
		return;
	}
	if (v == floor(v) && fabs(v) < 1e16) {
		/* Python writes 3.0 for floats; keep the ".0" so readers see a float.
		 * repr() switches to exponent form at 1e16, not 1e15. */
		char wb[24], *w;
		/* "%.1f" by hand: whole and below 1e16, v is exact as an
		 * integer (signbit keeps "-0.0"); vsnprintf here was 1.9% of
		 * summarize's instructions on the bench DLRM trace */
		wb[22] = '.';
		wb[23] = '0';
		w = u64_digits(wb + 22, (uint64_t)fabs(v));
		if (signbit(v))
			*--w = '-';
		pt_sb_add(sb, w, (size_t)(wb + sizeof(wb) - w));
		return;
	}
	if (fabs(v) < 1e11 && on_grid(v, 1e4, 10000, 4, buf, sizeof(buf))) {
		pt_sb_adds(sb, buf);
		return;
	}
	if (fabs(v) >= 1e-4 && fabs(v) < 2147483648.0 &&
	    on_grid(v, 1e6, 1000000, 6, buf, sizeof(buf))) {
		pt_sb_adds(sb, buf);
		return;
	}
	if (!roundtrips(v, 15, best, sizeof(best))) {
		if (!roundtrips(v, 16, best, sizeof(best)))
			roundtrips(v, 17, best, sizeof(best));
		pt_sb_adds(sb, best);
		return;
	}
	lo = 1;
	hi = 15;  /* best holds the 15-digit form */
	/* the fewest digits that round-trip; each form that does is kept in
	 * best (memcpy returns best, not NULL), so the last kept is that one */
	PT_BSEARCH(lo, hi, d, !roundtrips(v, (int)d, buf, sizeof(buf)) || !memcpy(best, buf, sizeof(buf)));
	pt_sb_adds(sb, best);
}

void pt_sb_reset(pt_sb *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = 0;
}

char *pt_sb_detach(pt_sb *sb, size_t *len)
{
	char *b = sb->buf;

	if (sb->oom) {
		x_free(sb->buf);
		b = NULL;
	} else if (!b) {
		b = x_strndup("", 0);
	}
	if (len)
		*len = b ? sb->len : 0;
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	sb->oom = 0;
	return b;
}

void pt_sb_free(pt_sb *sb)
{
	if (!sb)
		return;
	x_free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	sb->oom = 0;
}

void pt_sb_add_json_key(pt_sb *sb, const char *key, int first)
{
	if (!first)
		pt_sb_addc(sb, ',');
	pt_sb_add_json_str(sb, key, strlen(key));
	pt_sb_addc(sb, ':');
}

void pt_sb_add_json_i64(pt_sb *sb, const char *key, int64_t v)
{
	pt_sb_add_json_key(sb, key, 0);
	pt_sb_add_i64(sb, v);
}

void pt_sb_add_json_dbl(pt_sb *sb, const char *key, double v)
{
	pt_sb_add_json_key(sb, key, 0);
	pt_sb_add_double(sb, v);
}
