/*
 * json.c - strict, bounded-depth JSON DOM parser (see json.h) on the
 * tokenizer of jsontok.c.
 *
 * One arena per document: nodes and decoded strings are carved from it,
 * pt_json_free releases it.  Strings are copied once, from the input (or
 * the tokenizer's scratch when they hold escapes) into the arena.  The
 * children of every array/object are stored contiguously, so pt_json_at is
 * O(1) while the ->next links still work.
 */
#include "json.h"
#include "file.h"
#include "jsontok.h"
#include "xalloc.h"

#include <stdio.h>
#include <string.h>

/* Largest file pt_json_parse_file accepts; summaries are KB to a few MB. */
#define JSON_FILE_MAX ((size_t)1 << 30)
#define ARENA_BLOCK ((size_t)64 << 10)

typedef struct block {
	struct block *prev;
	size_t used, cap;
	/* data follows, aligned to max_align_t */
} block;

/* The document: the root node lives inside it, so pt_json_free can find
 * the arena from the root pointer alone. */
typedef struct doc {
	pt_json root;
	block *blocks;
} doc;

typedef struct parser {
	pt_jtok t;   /* the cursor (jsontok.h): strings, numbers, errors */
	doc *d;
	/* Pending children of all open containers, innermost on top. */
	pt_json *stack;
	size_t nstack, capstack;
} parser;

#define BLOCK_HDR ((sizeof(block) + 15) & ~(size_t)15)

static void *arena_alloc(parser *p, size_t n)
{
	block *b = p->d->blocks;
	void *r;

	n = (n + 15) & ~(size_t)15;
	if (!b || b->cap - b->used < n) {
		size_t cap = n > ARENA_BLOCK ? n : ARENA_BLOCK;

		if (cap > SIZE_MAX - BLOCK_HDR)
			return NULL;
		b = x_malloc(BLOCK_HDR + cap);
		if (!b)
			return NULL;
		b->prev = p->d->blocks;
		b->used = 0;
		b->cap = cap;
		p->d->blocks = b;
	}
	r = (char *)b + BLOCK_HDR + b->used;
	b->used += n;
	return r;
}

#define fail(p, code, off, msg) pt_jtok_fail(&(p)->t, code, off, "%s", msg)
#define fail_char(p, off, what) pt_jtok_fail_char(&(p)->t, off, what)
#define skip_ws(p) pt_jtok_skip_ws(&(p)->t)

/* The string at the cursor (the tokenizer decodes it only when it has
 * escapes), copied once into the arena with a NUL. */
static int parse_string(parser *p, const char **out, size_t *outlen)
{
	size_t start = p->t.pos, n;
	const char *v;
	char *dst;

	if (pt_jtok_string(&p->t, &v, &n))
		return -1;
	dst = arena_alloc(p, n + 1);
	if (!dst)
		return fail(p, PT_ENOMEM, start, "out of memory");
	if (n)
		memcpy(dst, v, n);
	dst[n] = 0;
	*out = dst;
	*outlen = n;
	return 0;
}

static int push(parser *p, const pt_json *v)
{
	if (X_GROW(p->stack, p->capstack, p->nstack + 1))
		return fail(p, PT_ENOMEM, p->t.pos, "out of memory");
	p->stack[p->nstack++] = *v;
	return 0;
}

/* Move the top n pending children into one contiguous arena block. */
static int close_container(parser *p, pt_json *v, size_t n)
{
	pt_json *kids;
	size_t i;

	v->len = n;
	v->child = NULL;
	if (!n)
		return 0;
	if (n > SIZE_MAX / sizeof(pt_json))
		return fail(p, PT_ENOMEM, p->t.pos, "out of memory");
	kids = arena_alloc(p, n * sizeof(pt_json));
	if (!kids)
		return fail(p, PT_ENOMEM, p->t.pos, "out of memory");
	memcpy(kids, p->stack + p->nstack - n, n * sizeof(pt_json));
	for (i = 0; i + 1 < n; i++)
		kids[i].next = &kids[i + 1];
	kids[n - 1].next = NULL;
	p->nstack -= n;
	v->child = kids;
	return 0;
}

static int parse_value(parser *p, pt_json *v, int depth)
{
	unsigned char c;

	memset(v, 0, sizeof(*v));
	skip_ws(p);
	if (p->t.pos >= p->t.len)
		return fail(p, PT_EPARSE, p->t.pos, "unexpected end of input");
	c = p->t.s[p->t.pos];
	switch (c) {
	case '{':
	case '[': {
		size_t n = 0, open = p->t.pos;
		int obj = c == '{', rc;

		if (depth >= PT_JSON_MAX_DEPTH)
			return fail(p, PT_EPARSE, p->t.pos, "nesting deeper than 256 levels");
		v->type = obj ? PT_JSON_OBJ : PT_JSON_ARR;
		if (!pt_jtok_open(&p->t, obj ? '}' : ']'))
			return close_container(p, v, 0);
		for (;;) {
			pt_json kid;
			const char *key = NULL;
			size_t keylen = 0;

			skip_ws(p);
			if (obj) {
				if (p->t.pos >= p->t.len || p->t.s[p->t.pos] != '"')
					return fail_char(p, p->t.pos, "'\"' starting an object key");
				if (parse_string(p, &key, &keylen))
					return -1;
				skip_ws(p);
				if (p->t.pos >= p->t.len || p->t.s[p->t.pos] != ':')
					return fail_char(p, p->t.pos, "':'");
				p->t.pos++;
			}
			if (parse_value(p, &kid, depth + 1))
				return -1;
			kid.key = key;
			kid.keylen = keylen;
			if (push(p, &kid))
				return -1;
			n++;
			rc = pt_jtok_next(&p->t, open, obj ? '}' : ']');
			if (rc < 0)
				return -1;
			if (!rc)
				break;
		}
		return close_container(p, v, n);
	}
	case '"':
		v->type = PT_JSON_STR;
		return parse_string(p, &v->str, &v->len);
	case 't':
		v->type = PT_JSON_TRUE;
		return pt_jtok_literal(&p->t, "true", 4);
	case 'f':
		v->type = PT_JSON_FALSE;
		return pt_jtok_literal(&p->t, "false", 5);
	case 'n':
		v->type = PT_JSON_NULL;
		return pt_jtok_literal(&p->t, "null", 4);
	default:
		if (c == '-' || (c >= '0' && c <= '9')) {
			v->type = PT_JSON_NUM;
			return pt_jtok_number(&p->t, &v->num);
		}
		return fail_char(p, p->t.pos, "a json value");
	}
}

static void free_blocks(block *b)
{
	while (b) {
		block *prev = b->prev;
		x_free(b);
		b = prev;
	}
}

pt_json *pt_json_parse(const char *buf, size_t len, pt_error *err)
{
	parser p;
	pt_json *root = NULL;
	doc *d;

	memset(&p, 0, sizeof(p));
	pt_jtok_init(&p.t, buf, len, err);
	d = x_calloc(1, sizeof(*d));
	if (!d) {
		pt_error_set(err, PT_ENOMEM, -1, "out of memory");
		goto out;
	}
	p.d = d;
	skip_ws(&p);
	if (p.t.pos >= p.t.len) {
		fail(&p, PT_EPARSE, p.t.pos, p.t.len ? "no json value (only whitespace)" : "empty input");
		goto out;
	}
	if (parse_value(&p, &d->root, 0))
		goto out;
	skip_ws(&p);
	if (p.t.pos < p.t.len) {
		fail(&p, PT_EPARSE, p.t.pos, "trailing characters after the json value");
		goto out;
	}
	root = &d->root;
out:
	pt_jtok_release(&p.t);
	x_free(p.stack);
	if (!root && d) {
		free_blocks(d->blocks);
		x_free(d);
	}
	return root;
}

pt_json *pt_json_parse_file(const char *path, pt_error *err)
{
	pt_json *root = NULL;
	char *buf = NULL;
	size_t len = 0;

	pt_error_subject(err, path);
	if (pt_file_read(path, JSON_FILE_MAX, &buf, &len, err) == PT_OK)
		root = pt_json_parse(buf, len, err);
	x_free(buf);
	return root;
}

void pt_json_free(pt_json *root)
{
	doc *d;

	if (!root)
		return;
	/* The root is the first member of its doc (see pt_json_parse). */
	d = (doc *)root;
	free_blocks(d->blocks);
	x_free(d);
}

const pt_json *pt_json_get(const pt_json *o, const char *key)
{
	const pt_json *c;
	size_t kl;

	if (!o || o->type != PT_JSON_OBJ || !key)
		return NULL;
	kl = strlen(key);
	for (c = o->child; c; c = c->next)
		if (c->keylen == kl && memcmp(c->key, key, kl) == 0)
			return c;
	return NULL;
}

const pt_json *pt_json_at(const pt_json *a, size_t i)
{
	if (!a || (a->type != PT_JSON_ARR && a->type != PT_JSON_OBJ) || i >= a->len)
		return NULL;
	return &a->child[i];  /* children are contiguous (close_container) */
}

double pt_json_num(const pt_json *o, const char *key, double def)
{
	const pt_json *v = pt_json_get(o, key);

	return v && v->type == PT_JSON_NUM ? v->num : def;
}

const char *pt_json_strv(const pt_json *o, const char *key, const char *def)
{
	const pt_json *v = pt_json_get(o, key);

	return v && v->type == PT_JSON_STR ? v->str : def;
}

int64_t pt_json_i64(const pt_json *o, const char *key, int64_t def)
{
	const pt_json *v = pt_json_get(o, key);

	if (!v || v->type != PT_JSON_NUM || !(v->num >= -9e18 && v->num <= 9e18))
		return def;
	return (int64_t)v->num;
}

void pt_json_copy_str(char *dst, size_t cap, const pt_json *o, const char *key)
{
	snprintf(dst, cap, "%s", pt_json_strv(o, key, ""));
}
