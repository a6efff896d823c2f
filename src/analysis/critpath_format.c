/*
 * critpath_format.c - the summary's "critical_path" member (critpath.h):
 * written compact by the summary writer, read back with the JSON DOM (a few
 * numbers per step, once per summary), every value checked.
 *
 * Flow: pt_cpath (critpath.c) --pt_cpath_write--> summary JSON
 *       --pt_cpath_parse--> pt_summary.cpath --> src/diagnose/critpath.c.
 * The member's layout: docs/summary.md "Critical path" (format).
 */
#include "critpath.h"
#include "../util/json.h"
#include "../util/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void put_str_or(pt_sb *sb, const char *key, const char *v)
{
	pt_sb_add_json_key(sb, key, 0);
	pt_sb_add_json_str(sb, v, strlen(v));
}

void pt_cpath_write(const pt_summary *s, pt_sb *sb)
{
	const pt_cpath *cp_ = s->cpath;
	size_t i, k;

	pt_sb_adds(sb, "{\"steps\":[");
	for (i = 0; cp_ && i < cp_->nsteps; i++) {
		const pt_cp_step *st = &cp_->steps[i];
		if (i)
			pt_sb_addc(sb, ',');
		pt_sb_addc(sb, '{');
		pt_sb_add_json_key(sb, "number", 1);
		pt_sb_add_i64(sb, st->number);
		pt_sb_add_json_dbl(sb, "start_ms", st->start_ms);
		pt_sb_add_json_dbl(sb, "ms", st->ms);
		pt_sb_adds(sb, ",\"split\":{");
		for (k = 0; k < PT_CP_WAIT; k++) {
			pt_sb_add_json_key(sb, pt_cp_kind_name((int)k), k == 0);
			pt_sb_add_double(sb, st->split[k]);
		}
		pt_sb_adds(sb, "},\"waits\":[");
		for (k = 0; k < st->nwaits; k++) {
			const pt_cp_wait *w = &st->waits[k];
			if (k)
				pt_sb_addc(sb, ',');
			pt_sb_addc(sb, '{');
			pt_sb_add_json_key(sb, "span", 1);
			pt_sb_add_json_str(sb, w->span, strlen(w->span));
			put_str_or(sb, "call", w->call);
			pt_sb_add_json_dbl(sb, "ms", w->ms);
			put_str_or(sb, "target", w->target);
			if (w->target_stream >= 0)
				pt_sb_add_json_i64(sb, "target_stream", w->target_stream);
			if (w->behind) {
				put_str_or(sb, "behind", w->behind);
				if (w->behind_stream >= 0)
					pt_sb_add_json_i64(sb, "behind_stream", w->behind_stream);
			}
			pt_sb_addc(sb, '}');
		}
		pt_sb_adds(sb, "],\"instances\":[");
		for (k = 0; k < st->ninst; k++) {
			if (k)
				pt_sb_addc(sb, ',');
			pt_sb_add_u64(sb, st->inst[k]);
			pt_sb_addc(sb, ',');
			pt_sb_add_double(sb, st->inst_ms[k]);
		}
		pt_sb_adds(sb, "]}");
	}
	pt_sb_adds(sb, "],\"functions\":[");
	for (i = 0; cp_ && i < cp_->nfuncs; i++) {
		const pt_cp_func *f = &cp_->funcs[i];
		if (i)
			pt_sb_addc(sb, ',');
		pt_sb_addc(sb, '{');
		pt_sb_add_json_key(sb, "key", 1);
		pt_sb_add_json_str(sb, f->key, strlen(f->key));
		put_str_or(sb, "kind", pt_kind_name(f->kind));
		pt_sb_adds(sb, ",\"ms\":[");
		for (k = 0; k < cp_->nsteps; k++) {
			if (k)
				pt_sb_addc(sb, ',');
			pt_sb_add_double(sb, f->ms[k]);
		}
		if (f->self_ms) {
			pt_sb_adds(sb, "],\"self\":[");
			for (k = 0; k < cp_->nsteps; k++) {
				if (k)
					pt_sb_addc(sb, ',');
				pt_sb_add_double(sb, f->self_ms[k]);
			}
		}
		if (f->longest_ms) {
			pt_sb_adds(sb, "],\"longest\":[");
			for (k = 0; k < cp_->nsteps; k++) {
				if (k)
					pt_sb_addc(sb, ',');
				pt_sb_add_double(sb, f->longest_ms[k]);
			}
		}
		pt_sb_adds(sb, "]}");
	}
	pt_sb_adds(sb, "]}");
}

static int bad(pt_error *err, const char *fmt, size_t i)
{
	char msg[160];

	snprintf(msg, sizeof(msg), fmt, i);
	return pt_error_set(err, PT_EFORMAT, -1, "'critical_path': %s", msg);
}

static int ms_ok(const pt_json *v)
{
	return v && v->type == PT_JSON_NUM && isfinite(v->num) && v->num >= 0 && v->num <= 1e9;
}

static char *dup_str(const pt_json *o, const char *key, int *bad_)
{
	const pt_json *v = pt_json_get(o, key);

	if (!v) {
		*bad_ = 1;
		return NULL;
	}
	if (v->type != PT_JSON_STR) {
		*bad_ = 1;
		return NULL;
	}
	return x_strndup(v->str, v->len);
}

static int kind_of(const char *name)
{
	int k;

	for (k = 0; k < PT_K_COUNT; k++)
		if (!strcmp(pt_kind_name(k), name))
			return k;
	return PT_K_CPU_OP;
}

static int parse_wait(const pt_json *o, pt_cp_wait *w)
{
	int b = 0;
	const pt_json *v;

	if (!o || o->type != PT_JSON_OBJ)
		return -1;
	w->span = dup_str(o, "span", &b);
	w->call = dup_str(o, "call", &b);
	w->target = dup_str(o, "target", &b);
	v = pt_json_get(o, "ms");
	if (b || !ms_ok(v))
		return -1;
	w->ms = v->num;
	w->target_stream = pt_json_i64(o, "target_stream", -1);
	w->behind_stream = pt_json_i64(o, "behind_stream", -1);
	if (pt_json_get(o, "behind")) {
		w->behind = dup_str(o, "behind", &b);
		if (b)
			return -1;
	}
	return 0;
}

/* One time per step (n) from array m into *out (owned).  PT_OK, or
 * PT_EFORMAT / PT_ENOMEM naming function i's member. */
static int times_of(const pt_json *m, size_t n, double **out, const char *name, size_t i,
		    pt_error *err)
{
	const pt_json *v;
	size_t k;
	char msg[96];

	if (m->type != PT_JSON_ARR || m->len != n) {
		snprintf(msg, sizeof(msg), "function %%zu: '%s' is not one time per step", name);
		return bad(err, msg, i);
	}
	if (!(*out = x_calloc(n + 1, sizeof(**out))))
		return pt_error_set(err, PT_ENOMEM, -1, "out of memory");
	for (v = m->child, k = 0; v; v = v->next, k++) {
		if (!ms_ok(v)) {
			snprintf(msg, sizeof(msg), "function %%zu: '%s' holds a bad value", name);
			return bad(err, msg, i);
		}
		(*out)[k] = v->num;
	}
	return PT_OK;
}

static int parse_step(const pt_json *o, pt_cp_step *st, size_t ncoll, pt_error *err, size_t i)
{
	const pt_json *v, *sp, *a;
	size_t k;

	if (!o || o->type != PT_JSON_OBJ)
		return bad(err, "step %zu is not an object", i);
	v = pt_json_get(o, "number");
	if (!v || v->type != PT_JSON_NUM || v->num != floor(v->num) || fabs(v->num) > 9e15)
		return bad(err, "step %zu: 'number' is not an integer", i);
	st->number = (int64_t)v->num;
	v = pt_json_get(o, "ms");
	if (!ms_ok(v))
		return bad(err, "step %zu: 'ms' is not a duration", i);
	st->ms = v->num;
	v = pt_json_get(o, "start_ms");
	if (v && (v->type != PT_JSON_NUM || !isfinite(v->num) || fabs(v->num) > 1e9))
		return bad(err, "step %zu: 'start_ms' is not a time", i);
	st->start_ms = v ? v->num : -1;
	sp = pt_json_get(o, "split");
	if (!sp || sp->type != PT_JSON_OBJ)
		return bad(err, "step %zu: 'split' is not an object", i);
	for (k = 0; k < PT_CP_WAIT; k++) {
		v = pt_json_get(sp, pt_cp_kind_name((int)k));
		if (v && !ms_ok(v))
			return bad(err, "step %zu: a 'split' value is not a duration", i);
		st->split[k] = v ? v->num : 0;
	}
	a = pt_json_get(o, "waits");
	if (a) {
		const pt_json *x;
		if (a->type != PT_JSON_ARR)
			return bad(err, "step %zu: 'waits' is not an array", i);
		for (x = a->child; x && st->nwaits < PT_CP_WAITS; x = x->next) {
			if (parse_wait(x, &st->waits[st->nwaits++]))
				return bad(err, "step %zu: a wait is not {span, call, ms, target}", i);
		}
	}
	a = pt_json_get(o, "instances");
	if (a) {
		const pt_json *x;
		if (a->type != PT_JSON_ARR || a->len % 2)
			return bad(err, "step %zu: 'instances' is not pairs of numbers", i);
		st->inst = x_malloc((a->len / 2 + 1) * sizeof(*st->inst));
		st->inst_ms = x_malloc((a->len / 2 + 1) * sizeof(*st->inst_ms));
		if (!st->inst || !st->inst_ms)
			return pt_error_set(err, PT_ENOMEM, -1, "out of memory");
		for (x = a->child; x && x->next; x = x->next->next) {
			if (x->type != PT_JSON_NUM || x->num < 0 || x->num != floor(x->num) ||
			    (ncoll != (size_t)-1 && x->num >= (double)ncoll) || !ms_ok(x->next))
				return bad(err, "step %zu: 'instances' holds a bad instance", i);
			st->inst[st->ninst] = (uint32_t)x->num;
			st->inst_ms[st->ninst++] = x->next->num;
		}
	}
	return 0;
}

int pt_cpath_parse(const char *buf, size_t len, pt_summary *s, pt_error *err)
{
	pt_json *root = pt_json_parse(buf, len, err);
	const pt_json *a, *x;
	pt_cpath *out = NULL;
	size_t i;
	int rc = PT_EFORMAT;

	if (!root)
		return err ? err->code : PT_EPARSE;
	if (root->type != PT_JSON_OBJ) {
		pt_error_set(err, PT_EFORMAT, -1, "'critical_path' is not an object");
		goto out;
	}
	out = x_calloc(1, sizeof(*out));
	if (!out) {
		rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
		goto out;
	}
	a = pt_json_get(root, "steps");
	if (!a || a->type != PT_JSON_ARR) {
		rc = pt_error_set(err, PT_EFORMAT, -1, "'critical_path': 'steps' is not an array");
		goto out;
	}
	out->steps = x_calloc(a->len + 1, sizeof(*out->steps));
	if (!out->steps) {
		rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
		goto out;
	}
	for (x = a->child, i = 0; x; x = x->next, i++) {
		rc = parse_step(x, &out->steps[i], (size_t)-1, err, i);
		out->nsteps = i + 1;
		if (rc)
			goto out;
	}
	a = pt_json_get(root, "functions");
	if (a && a->type != PT_JSON_ARR) {
		rc = pt_error_set(err, PT_EFORMAT, -1, "'critical_path': 'functions' is not an array");
		goto out;
	}
	if (a) {
		out->funcs = x_calloc(a->len + 1, sizeof(*out->funcs));
		if (!out->funcs) {
			rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
			goto out;
		}
		for (x = a->child, i = 0; x; x = x->next, i++) {
			pt_cp_func *f = &out->funcs[i];
			const pt_json *m = pt_json_get(x, "ms"), *v;
			int b = 0;
			out->nfuncs = i + 1;
			if (x->type != PT_JSON_OBJ || !(f->key = dup_str(x, "key", &b)) || b ||
			    !m || m->type != PT_JSON_ARR || m->len != out->nsteps) {
				rc = bad(err, "function %zu is not {key, kind, ms: one per step}", i);
				goto out;
			}
			v = pt_json_get(x, "kind");
			f->kind = (uint8_t)kind_of(v && v->type == PT_JSON_STR ? v->str : "");
			if ((rc = times_of(m, out->nsteps, &f->ms, "ms", i, err)))
				goto out;
			if ((m = pt_json_get(x, "self")) &&
			    (rc = times_of(m, out->nsteps, &f->self_ms, "self", i, err)))
				goto out;
			if ((m = pt_json_get(x, "longest")) &&
			    (rc = times_of(m, out->nsteps, &f->longest_ms, "longest", i, err)))
				goto out;
		}
	}
	s->cpath = out;
	out = NULL;
	rc = PT_OK;
out:
	pt_cpath_free(out);
	pt_json_free(root);
	return rc;
}
