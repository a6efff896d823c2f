/*
 * utf8.c - code point encoding and JSON escape / string decoding (see
 * utf8.h), shared by the three JSON readers: the DOM (util/json.c), the
 * summary reader (analysis/summary_parse.c) and the trace reader
 * (trace/kineto.c).  Only strings with escapes or non-ASCII bytes come
 * here; the readers scan plain strings themselves.
 */
#include "utf8.h"
#include "error.h"
#include "xalloc.h"

#include <string.h>

/* hex4, put and unescape are inline so that pt_utf8_unquote's loop has
 * them in place; through the exported calls a `diagnose` of summaries
 * full of \u escapes ran more instructions (docs/bench.md, "Code shaped
 * for speed"). */

static inline int hex4(const unsigned char *s, uint32_t *out)
{
	uint32_t v = 0;
	int i;

	for (i = 0; i < 4; i++) {
		unsigned c = s[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	*out = v;
	return 0;
}

static inline size_t put(char *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

size_t pt_utf8_put(char *out, uint32_t cp)
{
	return put(out, cp);
}

static inline const char *unescape(const unsigned char *s, size_t n, char *out, size_t *used,
				   size_t *len)
{
	const char *msg = NULL;
	uint32_t cp, lo;

	*used = 2;
	*len = 1;
	switch (n < 2 ? 0 : s[1]) {
	case '"': case '\\': case '/':
		out[0] = (char)s[1]; break;
	case 'b': out[0] = '\b'; break;
	case 'f': out[0] = '\f'; break;
	case 'n': out[0] = '\n'; break;
	case 'r': out[0] = '\r'; break;
	case 't': out[0] = '\t'; break;
	case 'u':
		if (n < 6 || hex4(s + 2, &cp)) {
			msg = "invalid \\u escape";
			break;
		}
		*used = 6;
		if (cp >= 0xd800 && cp <= 0xdbff && n >= 12 && s[6] == '\\' && s[7] == 'u' &&
		    !hex4(s + 8, &lo) && lo >= 0xdc00 && lo <= 0xdfff) {
			cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			*used = 12;
		} else if (cp >= 0xd800 && cp <= 0xdfff) {
			cp = 0xfffd;
		}
		/* 6 bytes in, at most 3 out; a pair is 12 in, 4 out. */
		*len = put(out, cp);
		break;
	default:
		msg = "invalid escape in string";
		break;
	}
	return msg;
}

const char *pt_utf8_unescape(const unsigned char *s, size_t n, char *out, size_t *used,
			     size_t *len)
{
	return unescape(s, n, out, used, len);
}

int pt_utf8_unquote(const unsigned char *s, size_t len, size_t start, size_t *pos, char **buf,
		    size_t *cap, size_t *outlen, const char **msg)
{
	static const char oom[] = "out of memory";
	size_t from = start + 1, i = *pos, o = 0, bad;

	*msg = NULL;
	for (;;) {
		size_t used, l;
		unsigned c;

		/* Plain bytes go over in one copy from `from` (the caller's
		 * prefix joins the first run), with 16 bytes to spare: one
		 * escape or UTF-8 sequence writes at most 4. */
		while (i < len && s[i] >= 0x20 && s[i] < 0x80 && s[i] != '"' && s[i] != '\\')
			i++;
		if (X_GROW(*buf, *cap, o + (i - from) + 16)) {
			*msg = oom;
			bad = from;
			goto out;
		}
		if (i > from)
			memcpy(*buf + o, s + from, i - from);
		o += i - from;
		bad = i;
		if (i >= len || (s[i] == '\\' && i + 1 >= len)) {
			*msg = "unterminated string";
			bad = start;
			goto out;
		}
		c = s[i];
		if (c == '"')
			break;
		if (c < 0x20) {
			*msg = "control character in string";
			goto out;
		}
		if (c >= 0x80) {
			used = l = pt_utf8_len(s + i, len - i);
			if (!l) {
				*msg = "invalid utf-8 in string";
				goto out;
			}
			memcpy(*buf + o, s + i, l);
		} else if ((*msg = unescape(s + i, len - i, *buf + o, &used, &l))) {
			goto out;
		}
		o += l;
		i += used;
		from = i;
	}
	*outlen = o;
	bad = i + 1;
out:
	*pos = bad;
	return !*msg ? PT_OK : *msg == oom ? PT_ENOMEM : PT_EPARSE;
}
