/*
 * utf8.h - UTF-8 and JSON string text: the one implementation of sequence
 * validation, code point encoding and backslash-escape decoding that every
 * JSON reader and writer in PerfTracker uses.
 *
 * Readers: util/jsontok.c (the tokenizer of the DOM and of the summary
 * reader), trace/kineto.c (escaped names in traces).  Writer:
 * util/strbuf.c (every JSON writer's strings).  The readers keep their own
 * fast paths for plain ASCII runs; what is here handles the other bytes.
 * Pure functions of their arguments (pt_utf8_unquote also grows the buffer
 * it is given): thread-safe.
 */
#ifndef PT_UTF8_H
#define PT_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Length of the well-formed UTF-8 sequence at s (n >= 1 bytes available):
 * 1 for an ASCII byte, 2-4 for a multi-byte sequence, 0 when invalid
 * (stray continuation byte, overlong form, surrogate, above U+10FFFF, cut
 * short by n).  When it is valid and cp is not NULL, *cp gets the code
 * point; on 0 *cp is left as it was.  Inline: the summary reader calls it
 * for every non-ASCII byte it scans. */
static inline size_t pt_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned c = s[0];
	size_t need, i;
	uint32_t v;

	if (c < 0x80) {
		if (cp)
			*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		need = 2;
		v = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 3;
		v = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 4;
		v = c & 0x07;
	} else {
		return 0;
	}
	if (n < need)
		return 0;
	for (i = 1; i < need; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (s[i] & 0x3f);
	}
	if ((need == 3 && (v < 0x800 || (v >= 0xd800 && v <= 0xdfff))) ||
	    (need == 4 && (v < 0x10000 || v > 0x10ffff)))
		return 0;
	if (cp)
		*cp = v;
	return need;
}

/* pt_utf8_decode without the code point. */
static inline size_t pt_utf8_len(const unsigned char *s, size_t n)
{
	return pt_utf8_decode(s, n, NULL);
}

/* Write code point cp (at most U+10FFFF) as UTF-8 to out (room for 4
 * bytes); returns the number of bytes written (1-4). */
size_t pt_utf8_put(char *out, uint32_t cp);

/* Decode the JSON escape at s[0] (a backslash; n >= 1 bytes available)
 * into out.  On success returns NULL, *used is the input it took (2, 6,
 * or 12 for a surrogate pair) and *len the bytes written to out: at most
 * 4 and never more than *used.  Otherwise returns the lowercase message
 * ("invalid escape in string" or "invalid \\u escape"; the escape starts
 * at s[0]).  A lone surrogate (\ud800 without its pair) decodes to U+FFFD
 * rather than failing: Python's json writes those for undecodable file
 * names, and one odd name should not make a whole record unreadable. */
const char *pt_utf8_unescape(const unsigned char *s, size_t n, char *out, size_t *used,
			     size_t *len);

/* Decode a JSON string that has escapes or non-ASCII bytes (the readers
 * hand over at the first such byte).  s[0..len) is the input, s[start] the
 * opening quote, and decoding resumes at *pos (start < *pos); the bytes in
 * between are taken as they are (the caller has checked them).  The text
 * goes to *buf, grown with X_GROW (*cap its size, reused from string to
 * string, always at least 16 bytes to spare after the text), *outlen its
 * length; it is not NUL-terminated.  Rejects control bytes and invalid
 * UTF-8.  Returns PT_OK with *pos just after the closing quote, or
 * PT_EPARSE / PT_ENOMEM with *msg the lowercase message and *pos the
 * offset to report (the opening quote for "unterminated string"). */
int pt_utf8_unquote(const unsigned char *s, size_t len, size_t start, size_t *pos, char **buf,
		    size_t *cap, size_t *outlen, const char **msg);

#endif
