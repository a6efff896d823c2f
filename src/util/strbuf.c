/*
 * strbuf.c - growable buffer and JSON-safe appenders (see strbuf.h).
 * Used by the summary writer, the report writers and key builders.
 */
#include "strbuf.h"
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

void pt_sb_addf(pt_sb *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || reserve(sb, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
}

void pt_sb_add_json_str(pt_sb *sb, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n, *run = p;

	pt_sb_addc(sb, '"');
	while (p < end) {
		unsigned c = *p;
		size_t l;

		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			p++;
			continue;
		}
		pt_sb_add(sb, (const char *)run, (size_t)(p - run));
		if (c == '"' || c == '\\') {
			pt_sb_addc(sb, '\\');
			pt_sb_addc(sb, (char)c);
			p++;
		} else if (c < 0x20) {
			switch (c) {
			case '\n': pt_sb_add(sb, "\\n", 2); break;
			case '\t': pt_sb_add(sb, "\\t", 2); break;
			case '\r': pt_sb_add(sb, "\\r", 2); break;
			default: pt_sb_addf(sb, "\\u%04x", c); break;
			}
			p++;
		} else if ((l = pt_utf8_len(p, (size_t)(end - p))) != 0) {
			pt_sb_add(sb, (const char *)p, l);
			p += l;
		} else {
			pt_sb_add(sb, "\xef\xbf\xbd", 3);
			p++;
		}
		run = p;
	}
	pt_sb_add(sb, (const char *)run, (size_t)(p - run));
	pt_sb_addc(sb, '"');
}

void pt_sb_add_double(pt_sb *sb, double v)
{
	char tmp[40];
	int prec;

	if (!isfinite(v)) {
		pt_sb_add(sb, "null", 4);
		return;
	}
	if (v == floor(v) && fabs(v) < 1e16) {
		/* Python writes 3.0 for floats; keep the ".0" so readers see a float.
		 * repr() switches to exponent form at 1e16, not 1e15. */
		pt_sb_addf(sb, "%.1f", v);
		return;
	}
	/* Shortest representation that round-trips, like Python's repr(). */
	for (prec = 1; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*g", prec, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	pt_sb_adds(sb, tmp);
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
	pt_sb_addf(sb, "%lld", (long long)v);
}

void pt_sb_add_json_dbl(pt_sb *sb, const char *key, double v)
{
	pt_sb_add_json_key(sb, key, 0);
	pt_sb_add_double(sb, v);
}
