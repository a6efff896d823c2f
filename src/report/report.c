/*
 * report.c - the report model (an ordered JSON tree in one arena) and its
 * JSON writer (see report.h), with strbuf's emitters (Python's json.dumps
 * layout: ASCII strings, repr numbers).  Filled by src/diagnose, written by the CLI
 * as report.json (which the PerfDisplay page embeds) and printed in the
 * text report.
 */
#include "internal.h"
#include "timeline.h"
#include "../util/xalloc.h"
#include "keys.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_CHUNK (64 * 1024)

const char *const pt_report_sections[5] = {
	PT_KEY_GPU_COMPUTE, PT_KEY_GPU_MEMORY_OPERATIONS, PT_KEY_COMMUNICATION, PT_KEY_CUDA_RUNTIME,
	PT_KEY_PYTHON_FUNCTIONS,
};

void *pt_report_alloc(pt_report *r, size_t n)
{
	chunk *c = r->cur;
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (!c || c->cap - c->used < n) {
		size_t cap = n > ARENA_CHUNK ? n : ARENA_CHUNK;

		c = x_malloc(sizeof(chunk) + cap);
		if (!c) {
			r->oom = 1;
			return NULL;
		}
		c->prev = r->cur;
		c->used = 0;
		c->cap = cap;
		r->cur = c;
	}
	p = c->data + c->used;
	c->used += n;
	return p;
}

pt_report *pt_report_new(void)
{
	pt_report *r = x_calloc(1, sizeof(*r));

	if (r)
		r->root.type = PT_RV_OBJ;
	return r;
}

void pt_report_free(pt_report *r)
{
	chunk *c, *p;

	if (!r)
		return;
	for (c = r->cur; c; c = p) {
		p = c->prev;
		x_free(c);
	}
	pt_timeline_free(r->tl);
	x_free(r->f);
	x_free(r);
}

pt_rv *pt_report_root(pt_report *r) { return r ? &r->root : NULL; }
const pt_rv *pt_report_root_c(const pt_report *r) { return r ? &r->root : NULL; }
int pt_report_oom(const pt_report *r) { return !r || r->oom; }

const char *pt_report_strdup(pt_report *r, const char *s)
{
	size_t n = strlen(s);
	char *d = pt_report_alloc(r, n + 1);

	if (d)
		memcpy(d, s, n + 1);
	return d;
}

static pt_rv *add(pt_report *r, pt_rv *parent, const char *key, pt_rv_type t)
{
	pt_rv *v;

	if (!r || !parent || r->oom)
		return NULL;
	v = pt_report_alloc(r, sizeof(*v));
	if (!v)
		return NULL;
	memset(v, 0, sizeof(*v));
	v->type = t;
	if (parent->type == PT_RV_OBJ) {
		v->key = pt_report_strdup(r, key ? key : "");
		if (!v->key)
			return NULL;
	}
	if (parent->last)
		parent->last->next = v;
	else
		parent->child = v;
	parent->last = v;
	parent->n++;
	return v;
}

pt_rv *pt_rv_obj(pt_report *r, pt_rv *p, const char *key) { return add(r, p, key, PT_RV_OBJ); }
pt_rv *pt_rv_arr(pt_report *r, pt_rv *p, const char *key) { return add(r, p, key, PT_RV_ARR); }
pt_rv *pt_rv_null(pt_report *r, pt_rv *p, const char *key) { return add(r, p, key, PT_RV_NULL); }

pt_rv *pt_rv_num(pt_report *r, pt_rv *p, const char *key, double x)
{
	pt_rv *v = add(r, p, key, PT_RV_NUM);

	if (v)
		v->num = x;
	return v;
}

pt_rv *pt_rv_num_or_null(pt_report *r, pt_rv *p, const char *key, double x)
{
	return isfinite(x) ? pt_rv_num(r, p, key, x) : pt_rv_null(r, p, key);
}

pt_rv *pt_rv_bool(pt_report *r, pt_rv *p, const char *key, int x)
{
	pt_rv *v = add(r, p, key, PT_RV_BOOL);

	if (v)
		v->i = !!x;
	return v;
}

pt_rv *pt_rv_int(pt_report *r, pt_rv *p, const char *key, int64_t x)
{
	pt_rv *v = add(r, p, key, PT_RV_INT);

	if (v)
		v->i = x;
	return v;
}

pt_rv *pt_rv_str(pt_report *r, pt_rv *p, const char *key, const char *s)
{
	pt_rv *v = add(r, p, key, PT_RV_STR);

	if (v) {
		v->str = pt_report_strdup(r, s ? s : "");
		if (!v->str)
			return NULL;
	}
	return v;
}

pt_rv *pt_rv_raw(pt_report *r, pt_rv *p, const char *key, const char *json, size_t len)
{
	pt_rv *v = add(r, p, key, PT_RV_RAW);
	char *t;

	if (!v)
		return NULL;
	t = pt_report_alloc(r, len + 1);
	if (!t)
		return NULL;
	memcpy(t, json, len);
	t[len] = 0;
	v->str = t;
	return v;
}

const pt_rv *pt_rv_get(const pt_rv *o, const char *key)
{
	const pt_rv *c;

	if (!o || o->type != PT_RV_OBJ)
		return NULL;
	for (c = o->child; c; c = c->next)
		if (!strcmp(c->key, key))
			return c;
	return NULL;
}

static void put_str(pt_sb *sb, const char *str)
{
	pt_sb_add_json_str_ascii(sb, str, strlen(str));
}

static void indent(pt_sb *sb, int level)
{
	int i;

	pt_sb_addc(sb, '\n');
	for (i = 0; i < level; i++)
		pt_sb_add(sb, "    ", 4);
}

static void put_val(const pt_rv *v, int level, pt_sb *sb)
{
	const pt_rv *c;

	switch (v->type) {
	case PT_RV_NULL: pt_sb_add(sb, "null", 4); break;
	case PT_RV_NUM: pt_sb_add_double(sb, v->num); break;
	case PT_RV_INT: pt_sb_addf(sb, "%lld", (long long)v->i); break;
	case PT_RV_BOOL: pt_sb_adds(sb, v->i ? "true" : "false"); break;
	case PT_RV_STR: put_str(sb, v->str); break;
	case PT_RV_RAW: pt_sb_adds(sb, v->str); break;
	case PT_RV_ARR:
	case PT_RV_OBJ:
		if (!v->child) {
			pt_sb_add(sb, v->type == PT_RV_OBJ ? "{}" : "[]", 2);
			break;
		}
		pt_sb_addc(sb, v->type == PT_RV_OBJ ? '{' : '[');
		for (c = v->child; c; c = c->next) {
			indent(sb, level + 1);
			if (v->type == PT_RV_OBJ) {
				put_str(sb, c->key);
				pt_sb_add(sb, ": ", 2);
			}
			put_val(c, level + 1, sb);
			if (c->next)
				pt_sb_addc(sb, ',');
		}
		indent(sb, level);
		pt_sb_addc(sb, v->type == PT_RV_OBJ ? '}' : ']');
		break;
	}
}

void pt_report_json(const pt_rv *v, int level, pt_sb *out)
{
	if (v)
		put_val(v, level, out);
	else
		pt_sb_add(out, "null", 4);
}
