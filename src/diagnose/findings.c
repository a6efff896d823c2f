/*
 * findings.c - the ranked "findings" of the report: every section adds a
 * diagnosis (worker, function, metric, value, the other workers' median,
 * estimated time lost per window, a plain sentence); here they are ranked
 * (a "summary" finding about unreadable traces first, then by time lost)
 * and written.  Also the helpers that make the sentences readable.
 */
#include "internal.h"
#include "sections.h"
#include "../model/keys.h"
#include "../util/xalloc.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

dfinding *df_add(dctx *c, const char *category, const char *worker, const char *function,
		 const char *metric, double value, double others, double impact_ms)
{
	dfinding *f;

	if (X_GROW(c->f, c->fcap, c->nf + 1)) {
		c->oom = 1;
		return NULL;
	}
	f = &c->f[c->nf++];
	f->category = category;
	f->worker = worker;
	f->function = function ? function : "";
	f->metric = metric;
	f->value = value;
	f->others = others;
	f->impact_ms = isfinite(impact_ms) ? impact_ms : 0;
	f->explanation = NULL;
	return f;
}

void df_explain(dctx *c, dfinding *f, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!f)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	x_free(f->explanation);
	f->explanation = x_malloc((size_t)n + 1);
	if (!f->explanation) {
		c->oom = 1;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(f->explanation, (size_t)n + 1, fmt, ap);
	va_end(ap);
}

double df_impact_per_step(const dctx *c, const dfinding *f)
{
	size_t i;

	for (i = 0; f->worker && i < c->nw; i++)
		if (c->w[i].id == f->worker)
			return f->impact_ms / dw_steps(&c->w[i]);
	return f->impact_ms;
}

const char *df_ms(double ms, char *buf, size_t cap)
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

const char *df_pct(double ratio, char *buf, size_t cap)
{
	double p = ratio * 100;

	if (p != 0 && fabs(p) < 0.1)
		snprintf(buf, cap, "%.2f%%", p);
	else
		snprintf(buf, cap, "%.1f%%", p);
	return buf;
}

const char *df_short(const char *key, int cls, char *buf, size_t cap)
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
		 * "(anonymous namespace)" is part of a name, not a parameter list. */
		for (e = s; (size_t)(e - s) < n; e++) {
			if (*e == '<' && e > s)
				break;
			if (*e == '(' && e > s && strncmp(e, "(anonymous namespace)", 21))
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

static int cmp_finding(const void *a, const void *b)
{
	const dfinding *x = a, *y = b;
	int sx = !strcmp(x->category, "summary"), sy = !strcmp(y->category, "summary");
	int r;

	if (sx != sy)
		return sx ? -1 : 1;
	if (x->impact_ms != y->impact_ms)
		return x->impact_ms > y->impact_ms ? -1 : 1;
	r = strcmp(x->worker ? x->worker : "", y->worker ? y->worker : "");
	if (r)
		return r;
	r = strcmp(x->category, y->category);
	if (r)
		return r;
	r = strcmp(x->function, y->function);
	return r ? r : strcmp(x->metric, y->metric);
}

pt_rv *diag_findings(dctx *c)
{
	pt_rv *arr = pt_rv_arr(c->rep, pt_report_root(c->rep), "findings");
	size_t i, j;

	if (c->nf > 1)
		qsort(c->f, c->nf, sizeof(*c->f), cmp_finding);
	for (i = 0; i < c->nf; i++) {
		const dfinding *f = &c->f[i];
		pt_rv *o = pt_rv_obj(c->rep, arr, NULL);
		pt_rv *ws;

		pt_rv_int(c->rep, o, "rank", (int64_t)i + 1);
		pt_rv_str(c->rep, o, "category", f->category);
		ws = pt_rv_arr(c->rep, o, "workers");
		if (f->worker)
			pt_rv_str(c->rep, ws, NULL, f->worker);
		else
			for (j = 0; j < c->nfailed; j++)
				pt_rv_str(c->rep, ws, NULL, c->failed_ids[j]);
		pt_rv_str(c->rep, o, "function", f->function);
		pt_rv_str(c->rep, o, "metric", f->metric);
		pt_rv_num(c->rep, o, "value", f->value);
		if (isfinite(f->others))
			pt_rv_num(c->rep, o, "others", f->others);
		else
			pt_rv_null(c->rep, o, "others");
		pt_rv_num(c->rep, o, "impact (ms)", f->impact_ms);
		pt_rv_str(c->rep, o, "explanation", f->explanation ? f->explanation : "");
	}
	return arr;
}
