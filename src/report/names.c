/*
 * names.c - short, distinct, printable function names for the text report
 * (rules in names.h) and the page, which shows what this file made: the
 * report's display.short (src/report/short.c).  Works on the report's keys: kernel keys with a launch shape,
 * C++ names, CUDA calls, Python/CPU stacks joined with '|'.
 */
#include "names.h"
#include "../model/keys.h"
#include "../model/store.h"
#include "../util/term.h"
#include "../util/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ELL "\xe2\x80\xa6"     /* … */
#define LARROW " \xe2\x86\x90 " /* ← */

size_t pt_name_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

/* Append s[0..n) to out (cap, used *o) with control characters escaped by
 * the CLI's one rule (util/term.c), so that the width measured here is the
 * width printed; stops before overflowing, on a code point boundary. */
static void put(char *out, size_t cap, size_t *o, const char *s, size_t n)
{
	pt_sb esc = {0};
	size_t i, len;

	pt_term_escape(&esc, s, n, 0, 0);
	len = esc.len;
	for (i = 0; i < len; i++) {
		if (*o + 2 > cap) {
			/* do not leave half a code point */
			while (*o > 0 && ((unsigned char)out[*o - 1] & 0xc0) == 0x80)
				(*o)--;
			if (*o > 0 && ((unsigned char)out[*o - 1] & 0xc0) == 0xc0)
				(*o)--;
			break;
		}
		out[(*o)++] = esc.buf[i];
	}
	pt_sb_free(&esc);
}

char *pt_name_escape(const char *s, char *out, size_t cap)
{
	size_t o = 0;

	if (!cap)
		return out;
	put(out, cap, &o, s, strlen(s));
	out[o] = 0;
	return out;
}

static int ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* Index just past the bracket closing the one at s[i] ('<' or '('), or n. */
static size_t skip_group(const char *s, size_t n, size_t i)
{
	int depth = 0;

	for (; i < n; i++) {
		char c = s[i];

		if (c == '<' || c == '(' || c == '{' || c == '[')
			depth++;
		else if (c == '>' || c == ')' || c == '}' || c == ']') {
			/* "->" inside a name is an arrow, not a bracket */
			if (c == '>' && i > 0 && s[i - 1] == '-')
				continue;
			if (--depth == 0)
				return i + 1;
		}
	}
	return n;
}

/* One C++ name s[0..n) (no "void", no shape): the last component with
 * "<…>" for its template arguments and no parameter list. */
static void short_cxx(const char *s, size_t n, char *out, size_t cap, size_t *o)
{
	size_t i = 0, start = *o;

	while (i < n) {
		char c = s[i];

		if (c == ':' && i + 1 < n && s[i + 1] == ':' && i + 2 < n) {
			*o = start; /* drop the namespace or class so far */
			i += 2;
			continue;
		}
		if (c == '(' && !strncmp(s + i, "(anonymous namespace)", 21)) {
			i += 21;
			continue;
		}
		if (c == '(' && i + 1 < n && s[i + 1] == ')') {
			put(out, cap, o, "()", 2);
			i += 2;
			continue;
		}
		if ((c == '<' || c == '(') && i > 0 && (ident(s[i - 1]) || s[i - 1] == '>')) {
			if (c == '<') {
				put(out, cap, o, "<" ELL ">", 5);
				i = skip_group(s, n, i);
				continue;
			}
			/* the parameter list ends the name ("... const" too) */
			return;
		}
		put(out, cap, o, &c, 1);
		i++;
	}
}

/* One stack frame; "/long/path/file.py: f" as "file.py: f". */
static void put_frame(char *out, size_t cap, size_t *o, const char *f, size_t n)
{
	const char *colon = NULL, *slash = NULL, *p;

	for (p = f; p + 1 < f + n; p++)
		if (p[0] == ':' && p[1] == ' ') {
			colon = p;
			break;
		}
	for (p = f; colon && p < colon; p++)
		if (*p == '/')
			slash = p;
	if (slash) {
		n -= (size_t)(slash + 1 - f);
		f = slash + 1;
	}
	put(out, cap, o, f, n);
}

char *pt_name_short(const char *key, char *out, size_t cap)
{
	size_t n = strlen(key), o = 0, m;
	const char *s = key;

	if (!cap)
		return out;
	m = pt_key_strip_shape(s, n);
	if (m == n && memchr(s, '|', n)) {
		/* a stack, root first: leaf first */
		const char *end = s + n, *p;

		while (end > s) {
			p = end;
			while (p > s && p[-1] != '|')
				p--;
			if (end != s + n)
				put(out, cap, &o, LARROW, strlen(LARROW));
			put_frame(out, cap, &o, p, (size_t)(end - p));
			end = p > s ? p - 1 : s;
		}
		out[o] = 0;
		return out;
	}
	if (m >= 5 && !strncmp(s, "void ", 5)) {
		s += 5;
		m -= 5;
	}
	if (memchr(s, '<', m) || memchr(s, '(', m))
		short_cxx(s, m, out, cap, &o);
	else
		put(out, cap, &o, s, m);
	if (!o) /* nothing left (an odd name): show it as it is */
		put(out, cap, &o, key, n);
	out[o] = 0;
	return out;
}

/* Byte offset after the first k code points of s. */
static size_t cp_off(const char *s, size_t k)
{
	size_t i = 0;

	while (s[i] && k) {
		i++;
		while (((unsigned char)s[i] & 0xc0) == 0x80)
			i++;
		k--;
	}
	return i;
}

char *pt_name_fit(const char *s, size_t width, char *out, size_t cap)
{
	size_t w = pt_name_width(s), head, tail, hb, tb;

	if (!cap)
		return out;
	if (w <= width) {
		snprintf(out, cap, "%s", s);
		return out;
	}
	if (width < 3) {
		hb = cp_off(s, width);
		snprintf(out, cap, "%.*s", (int)hb, s);
		return out;
	}
	/* the head says what it is, the tail where names differ */
	head = (width - 1) * 3 / 5;
	tail = width - 1 - head;
	hb = cp_off(s, head);
	tb = cp_off(s, w - tail);
	snprintf(out, cap, "%.*s" ELL "%s", (int)hb, s, s + tb);
	return out;
}

typedef struct ent {
	const char *key;
	char *s;
	size_t i;
} ent;

static int cmp_short(const void *a, const void *b)
{
	const ent *x = a, *y = b;
	int r = strcmp(x->s, y->s);

	return r ? r : strcmp(x->key, y->key);
}

/* The word (identifier characters) of k[0..m) around offset d, escaped. */
static void word_at(const char *k, size_t m, size_t d, char *word, size_t cap)
{
	size_t a = d, b;
	char tmp[128];

	while (a < m && !ident(k[a]))
		a++;
	if (a == m)
		a = d < m ? d : m;
	while (a > 0 && ident(k[a - 1]))
		a--;
	b = a;
	while (b < m && ident(k[b]))
		b++;
	if (b == a && a < m)
		b = a + 1;
	snprintf(tmp, sizeof(tmp), "%.*s", (int)(b - a), k + a);
	pt_name_escape(tmp, word, cap);
}

/* e->s with word: inside its first "<…>" (in_template) or as " [word]". */
static int add_word(ent *e, const char *word, int in_template)
{
	size_t cap = strlen(e->s) + strlen(word) + 16;
	char *ns, *t;

	if (!word[0])
		return 0;
	ns = x_malloc(cap);
	if (!ns)
		return -1;
	t = in_template ? strstr(e->s, "<" ELL ">") : NULL;
	if (t)
		snprintf(ns, cap, "%.*s<" ELL "%s" ELL ">%s", (int)(t - e->s), e->s, word,
			 t + strlen("<" ELL ">"));
	else
		snprintf(ns, cap, "%s [%s]", e->s, word);
	x_free(e->s);
	e->s = ns;
	return 0;
}

static size_t lcpn(const char *a, size_t an, const char *b, size_t bn)
{
	size_t i = 0;

	while (i < an && i < bn && a[i] == b[i])
		i++;
	return i;
}

/* Entries [a, b) read the same.  Round 0: the word where each name (launch
 * shape left out) leaves its closest other name; round 1: another such
 * word, or the launch shape when only that differs; round 2: numbered.
 */
static int split_run(ent *v, size_t a, size_t b, int round)
{
	size_t i, j, distinct = 0;
	int rc = 0;

	for (i = a; i < b; i++) {
		const char *ki = v[i].key;
		size_t mi = pt_key_strip_shape(ki, strlen(ki));

		for (j = a; j < i; j++)
			if (pt_key_strip_shape(v[j].key, strlen(v[j].key)) == mi && !strncmp(v[j].key, ki, mi))
				break;
		distinct += j == i;
	}
	for (i = a; i < b && !rc; i++) {
		const char *ki = v[i].key;
		size_t n = strlen(ki), mi = pt_key_strip_shape(ki, n), d = 0, x;
		char word[128];

		if (round == 2) {
			snprintf(word, sizeof(word), "#%zu", i - a + 1);
			rc = add_word(&v[i], word, 0);
			continue;
		}
		for (j = a; j < b; j++) {
			const char *kj = v[j].key;
			size_t mj = pt_key_strip_shape(kj, strlen(kj));

			if (j == i || (mj == mi && !strncmp(kj, ki, mi)))
				continue;
			if ((x = lcpn(ki, mi, kj, mj)) > d)
				d = x;
		}
		if (round == 0 && distinct < 2)
			continue; /* the names are the same: the shape decides, in round 1 */
		if (round == 1 && distinct < b - a && mi < n)
			snprintf(word, sizeof(word), "%s", ki + mi);
		else
			word_at(ki, mi, d, word, sizeof(word));
		rc = add_word(&v[i], word, round == 0);
	}
	return rc;
}

/* One round over runs of equal short forms; 1 when a run was found. */
static int pass(ent *v, size_t n, int round, int *err)
{
	size_t a = 0, b;
	int found = 0;

	qsort(v, n, sizeof(*v), cmp_short);
	while (a < n) {
		b = a + 1;
		while (b < n && !strcmp(v[a].s, v[b].s))
			b++;
		if (b - a > 1) {
			found = 1;
			if (split_run(v, a, b, round))
				*err = 1;
		}
		a = b;
	}
	return found;
}

int pt_name_short_set(const char *const *keys, size_t n, size_t width, char **out)
{
	ent *v;
	size_t i;
	int err = 0, round;

	for (i = 0; i < n; i++)
		out[i] = NULL;
	v = x_calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -1;
	for (i = 0; i < n && !err; i++) {
		size_t cap = strlen(keys[i]) * 6 + 8;

		v[i].key = keys[i];
		v[i].i = i;
		v[i].s = x_malloc(cap);
		if (!v[i].s)
			err = 1;
		else
			pt_name_short(keys[i], v[i].s, cap);
	}
	for (round = 0; round < 3 && !err && pass(v, n, round, &err); round++)
		;
	/* Fit to width; names that then read the same keep more of the tail. */
	for (i = 0; i < n && !err; i++) {
		size_t cap = strlen(v[i].s) + 8;
		char *f = x_malloc(cap);

		if (!f) {
			err = 1;
			break;
		}
		pt_name_fit(v[i].s, width, f, cap);
		x_free(v[i].s);
		v[i].s = f;
	}
	for (i = 0; i < n; i++) {
		if (err)
			x_free(v[i].s);
		else
			out[v[i].i] = v[i].s;
	}
	x_free(v);
	return err ? -1 : 0;
}

/* ---- in sentences ------------------------------------------------------ */

/* A function key in a few words (names.h): a stack's last frame (with its caller
 * when the frame is a builtin such as "<built-in function sleep>"), a
 * kernel without its template arguments. */
const char *pt_name_leaf(const char *key, char *buf, size_t cap)
{
	const char *e = strrchr(key, '|'), *b;
	char tmp[200];

	/* a kernel's "name grid|block" is not a stack */
	if (!e || strspn(e + 1, "0123456789_") == strlen(e + 1))
		return pt_name_short(key, buf, cap);
	pt_name_short(e + 1, tmp, sizeof(tmp));
	if (e[1] != '<') {
		snprintf(buf, cap, "%s", tmp);
		return buf;
	}
	for (b = e; b > key && b[-1] != '|'; b--)
		;
	/* the caller's file without its folders: "train_gloo.py: load_batch" */
	{
		const char *c = b, *colon = memchr(b, ':', (size_t)(e - b));
		for (const char *q = b; q < (colon ? colon : e); q++)
			if (*q == '/')
				c = q + 1;
		snprintf(buf, cap, "%.100s in %.*s", tmp, (int)(e - c > 80 ? 80 : e - c), c);
	}
	return buf;
}

/* "leaf (called from caller)" of a stack "a|b|caller|leaf" (names.h). */
const char *pt_name_called_from(const char *key, char *buf, size_t cap)
{
	const char *l = strrchr(key, '|'), *p;

	if (!l) {
		snprintf(buf, cap, "%s", key);
		return buf;
	}
	for (p = l; p > key && p[-1] != '|'; p--)
		;
	snprintf(buf, cap, "%.*s (called from %.*s)", (int)strlen(l + 1) > 200 ? 200
		 : (int)strlen(l + 1), l + 1, (int)(l - p) > 200 ? 200 : (int)(l - p), p);
	return buf;
}


const char *pt_name_sentence(const char *key, int cls, char *buf, size_t cap)
{
	const char *s = key, *e;
	size_t n;

	if (cls == PT_C_PYTHON) {
		e = strrchr(key, '|');
		s = e ? e + 1 : key;
		n = strlen(s);
	} else {
		if (!strncmp(s, "void ", 5))
			s += 5;
		n = pt_key_strip_shape(s, strlen(s));
		/* Drop template arguments and the parameter list of C++ names;
		 * "(anonymous namespace)" is part of a name, not a parameter list,
		 * nor is a parenthesis after a space ("Memcpy HtoD (Pinned ->
		 * Device)"). */
		for (e = s; (size_t)(e - s) < n; e++) {
			if (*e == '<' && e > s)
				break;
			if (*e == '(' && e > s && e[-1] != ' ' && strncmp(e, "(anonymous namespace)", 21))
				break;
		}
		n = (size_t)(e - s);
	}
	if (n > 120) {
		snprintf(buf, cap, "%.*s...", 117, s);
		return buf;
	}
	snprintf(buf, cap, "%.*s", (int)n, s);
	return buf;
}

const char *pt_fmt_ms(double ms, char *buf, size_t cap)
{
	static const struct { double scale; const char *unit; } u[] = {
		{ 1e-3, "s" }, { 1, "ms" }, { 1e3, "\xc2\xb5s" }, { 1e6, "ns" },
	};
	double a = fabs(ms), v;
	size_t i = 0;

	while (i + 1 < sizeof(u) / sizeof(u[0]) && a * u[i].scale < 0.9995)
		i++;
	if (ms == 0 || !isfinite(ms)) {
		snprintf(buf, cap, "%g ms", ms);
		return buf;
	}
	v = ms * u[i].scale;
	snprintf(buf, cap, fabs(v) >= 99.95 ? "%.0f %s" : fabs(v) >= 9.995 ? "%.1f %s" : "%.2f %s",
		 v, u[i].unit);
	return buf;
}
