/*
 * term.c - visible escapes for terminal control characters (see term.h):
 * the last step before anything the CLI prints reaches a terminal.
 */
#include "term.h"

#include "utf8.h"

#include <stdint.h>

static const char hex[] = "0123456789abcdef";

static void add_hex(pt_sb *out, const char *pre, unsigned char c)
{
	char b[8];
	size_t k = 0;

	while (*pre)
		b[k++] = *pre++;
	b[k++] = hex[c >> 4];
	b[k++] = hex[c & 15];
	pt_sb_add(out, b, k);
}

/* Is s[0..n) the start of a multi-byte sequence that needs more bytes? */
static int cut_short(const unsigned char *s, size_t n)
{
	size_t need = s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3
		    : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;

	if (!need || n >= need)
		return 0;
	for (size_t k = 1; k < n; k++)
		if ((s[k] & 0xc0) != 0x80)
			return 0;
	return 1;
}

size_t pt_term_escape(pt_sb *out, const char *s, size_t n, int keep_nl, int partial)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, run = 0;

	while (i < n) {
		unsigned char c = u[i];
		size_t len = 1;
		uint32_t cp;

		if (c >= 0x20 && c < 0x7f) {
			i++;
			continue;
		}
		if (c >= 0x80) {
			len = pt_utf8_decode(u + i, n - i, &cp);
			if (len && !(cp >= 0x80 && cp < 0xa0)) {
				i += len;
				continue;
			}
			/* Cut short by the end of this chunk: leave it for the next. */
			if (!len && partial && cut_short(u + i, n - i))
				break;
		}
		if (keep_nl && (c == '\n' || c == '\t')) {
			i++;
			continue;
		}
		pt_sb_add(out, s + run, i - run);
		if (c >= 0x80 && len)
			add_hex(out, "\\u00", (unsigned char)cp);
		else
			add_hex(out, "\\x", c);
		i += len ? len : 1;
		run = i;
	}
	pt_sb_add(out, s + run, i - run);
	return i;
}

int pt_term_is_safe(const char *s, size_t n, int keep_nl)
{
	const unsigned char *u = (const unsigned char *)s;

	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t len;

		if (u[i] >= 0x20 && u[i] < 0x7f) {
			i++;
			continue;
		}
		if (keep_nl && (u[i] == '\n' || u[i] == '\t')) {
			i++;
			continue;
		}
		if (u[i] < 0x80)
			return 0;
		len = pt_utf8_decode(u + i, n - i, &cp);
		if (!len || (cp >= 0x80 && cp < 0xa0))
			return 0;
		i += len;
	}
	return 1;
}
