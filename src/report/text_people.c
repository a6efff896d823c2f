/*
 * text_people.c - the text report for people, printed by the CLI after
 * analyze/diagnose/trigger: a job summary (workers, steps, step time,
 * where the time goes, GPU utilization), the findings as wrapped sentences
 * with workers named by rank, then every other top-level member of the
 * report as aligned tables of its top rows.  The findings come from the
 * report's finding model (report.h), the rest from the report tree:
 * sections are rendered by their shape, not by name, so new ones print
 * without code here.  Every line fits the width (names cut in
 * the middle by names.c, the rest cut at the end).
 */
#include "report.h"
#include "names.h"
#include "phrase.h"
#include "../util/xalloc.h"
#include "keys.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ELL "\xe2\x80\xa6"

void pt_text_opts_default(pt_text_opts *o)
{
	o->max_findings = 10;
	o->top = 8;
	o->width = 120;
	o->page_line = 0;
	o->outdir = NULL;
}

typedef struct wk {
	const char *id;
	char label[64];
} wk;

typedef struct tctx {
	const pt_text_opts *o;
	pt_sb *out;
	wk *w;           /* sorted by id */
	size_t nw;
	int oom;
} tctx;

enum { U_NONE, U_MS, U_US, U_PCT, U_GBPS, U_BYTES };

/* ---- workers ---------------------------------------------------------- */

static int cmp_wk(const void *a, const void *b)
{
	return strcmp(((const wk *)a)->id, ((const wk *)b)->id);
}

static int cmp_label(const void *a, const void *b)
{
	return strcmp(((const wk *)a)->label, ((const wk *)b)->label);
}

static const char *label_of(const tctx *t, const char *id)
{
	wk key, *f;

	if (!t->nw || !id)
		return NULL;
	key.id = id;
	f = bsearch(&key, t->w, t->nw, sizeof(*t->w), cmp_wk);
	return f ? f->label : NULL;
}

/* Workers by rank when every rank is known and unique, else by id. */
static void load_workers(tctx *t, const pt_rv *ws)
{
	const pt_rv *c;
	size_t i;
	int by_rank = 1;

	if (!ws || ws->type != PT_RV_OBJ || !ws->n)
		return;
	t->w = x_calloc(ws->n, sizeof(*t->w));
	if (!t->w) {
		t->oom = 1;
		return;
	}
	for (c = ws->child; c; c = c->next) {
		const pt_rv *r = pt_rv_get(c, PT_KEY_RANK);

		t->w[t->nw].id = c->key;
		if (r && r->type == PT_RV_INT && r->i >= 0)
			snprintf(t->w[t->nw].label, sizeof(t->w[t->nw].label), "rank %lld",
				 (long long)r->i);
		else
			by_rank = 0;
		t->nw++;
	}
	if (by_rank) {
		/* duplicate ranks (two jobs in one folder): ids instead; sorted by
		 * label, duplicates are neighbours (10,000 workers: no n^2) */
		qsort(t->w, t->nw, sizeof(*t->w), cmp_label);
		for (i = 1; i < t->nw && by_rank; i++)
			if (!strcmp(t->w[i - 1].label, t->w[i].label))
				by_rank = 0;
	}
	qsort(t->w, t->nw, sizeof(*t->w), cmp_wk);
	if (!by_rank)
		for (i = 0; i < t->nw; i++)
			pt_name_escape(t->w[i].id, t->w[i].label, sizeof(t->w[i].label));
}

/* ---- numbers ---------------------------------------------------------- */

/* Three significant digits, no exponent for the ranges we print. */
static void sig3(double v, char *b, size_t cap)
{
	double a = fabs(v);

	if (a >= 99.95)
		snprintf(b, cap, "%.0f", v);
	else if (a >= 9.995)
		snprintf(b, cap, "%.1f", v);
	else
		snprintf(b, cap, "%.2f", v);
}

/* pt_fmt_ms, with a zero as a bare "0" (tables). */
static void fmt_ms(double ms, char *b, size_t cap)
{
	if (ms == 0)
		snprintf(b, cap, "0");
	else
		pt_fmt_ms(ms, b, cap);
}

static void fmt_pct(double r, char *b, size_t cap)
{
	double p = r * 100, a = fabs(p);

	if (p == 0)
		snprintf(b, cap, "0%%");
	else if (a < 0.01)
		snprintf(b, cap, "<0.01%%");
	else if (a >= 9.995)
		snprintf(b, cap, "%.1f%%", p);
	else
		snprintf(b, cap, "%.2f%%", p);
}

static void fmt_num(int unit, double v, char *b, size_t cap)
{
	char n[32];

	if (!isfinite(v)) {
		snprintf(b, cap, "-");
		return;
	}
	switch (unit) {
	case U_MS:
		fmt_ms(v, b, cap);
		return;
	case U_US:
		fmt_ms(v / 1000, b, cap);
		return;
	case U_PCT:
		fmt_pct(v, b, cap);
		return;
	case U_GBPS:
		sig3(v, n, sizeof(n));
		snprintf(b, cap, "%s GB/s", n);
		return;
	case U_BYTES:
		if (fabs(v) >= 1e9)
			sig3(v / 1e9, n, sizeof(n)), snprintf(b, cap, "%s GB", n);
		else if (fabs(v) >= 1e6)
			sig3(v / 1e6, n, sizeof(n)), snprintf(b, cap, "%s MB", n);
		else if (fabs(v) >= 1e3)
			sig3(v / 1e3, n, sizeof(n)), snprintf(b, cap, "%s KB", n);
		else
			snprintf(b, cap, "%.0f B", v);
		return;
	}
	if (v == floor(v) && fabs(v) < 1e15)
		snprintf(b, cap, "%.0f", v);
	else if (fabs(v) >= 1000)
		snprintf(b, cap, "%.0f", v);
	else
		sig3(v, b, cap);
}

/* The unit of a member, from the report keys table (src/report/keys.def's
 * unit column), as this report formats it: a share as a percentage; ms per
 * step as ms; ratios and counts as plain numbers.  Keys not in the table
 * (worker ids, function keys) have none. */
static int unit_of(const char *k)
{
	switch (pt_key_unit(k)) {
	case PT_UNIT_MS:
	case PT_UNIT_MS_STEP:
		return U_MS;
	case PT_UNIT_US:
		return U_US;
	case PT_UNIT_SHARE:
		return U_PCT;
	case PT_UNIT_GBPS:
		return U_GBPS;
	case PT_UNIT_BYTES:
		return U_BYTES;
	default:
		return U_NONE;
	}
}

/* ---- lines -------------------------------------------------------------- */

/* Emit one line, cut at the end to fit width - 1 columns. */
static void emit(tctx *t, const char *s)
{
	size_t max = t->o->width > 1 ? t->o->width - 1 : 1;

	if (pt_name_width(s) <= max) {
		pt_sb_adds(t->out, s);
	} else {
		size_t i = 0, k = 0;

		while (s[i] && k < max - 1) {
			i++;
			while (((unsigned char)s[i] & 0xc0) == 0x80)
				i++;
			k++;
		}
		pt_sb_add(t->out, s, i);
		pt_sb_adds(t->out, ELL);
	}
	pt_sb_addc(t->out, '\n');
}

/* Emit text wrapped at spaces: first line after `first`, the others after
 * `indent` spaces.  A word goes on a line with a space before it unless it
 * is the first thing after the line's prefix. */
static void wrap(tctx *t, const char *first, size_t indent, const char *text)
{
	size_t max = t->o->width > 1 ? t->o->width - 1 : 1;
	size_t flen = strlen(first);
	pt_sb line = {0};
	const char *p = text;
	size_t col;
	int fresh = !flen || first[flen - 1] == ' ';

	pt_sb_adds(&line, first);
	col = pt_name_width(first);
	while (*p) {
		const char *e;
		size_t wlen, ww;
		char word[4096];

		while (*p == ' ')
			p++;
		if (!*p)
			break;
		e = p;
		while (*e && *e != ' ')
			e++;
		wlen = (size_t)(e - p);
		snprintf(word, sizeof(word), "%.*s", (int)wlen, p);
		ww = pt_name_width(word);
		if (col > indent && col + 1 + ww > max) {
			emit(t, line.buf ? line.buf : "");
			pt_sb_reset(&line);
			pt_sb_addf(&line, "%*s", (int)indent, "");
			col = indent;
		} else if (!fresh) {
			pt_sb_addc(&line, ' ');
			col++;
		}
		pt_sb_adds(&line, word);
		col += ww;
		fresh = 0;
		p = e;
	}
	emit(t, line.buf ? line.buf : "");
	if (line.oom)
		t->oom = 1;
	pt_sb_free(&line);
}

/* The renderer's text style (phrase.h): a worker by its label. */
static const char *label_cb(const void *ctx, const char *id)
{
	return label_of(ctx, id);
}

/* text with its worker tokens as labels and control bytes escaped.
 * Caller frees. */
static char *relabel(const tctx *t, const char *text)
{
	pt_sb sb = {0};

	pt_who_resolve(text, label_cb, t, &sb);
	if (sb.oom) {
		pt_sb_free(&sb);
		return NULL;
	}
	return sb.buf ? sb.buf : x_strndup("", 0);
}

/* ---- values ------------------------------------------------------------- */

static int is_scalar(const pt_rv *v)
{
	return v->type != PT_RV_OBJ && v->type != PT_RV_ARR;
}

static int is_worker_map(const tctx *t, const pt_rv *v)
{
	const pt_rv *c;

	if (v->type != PT_RV_OBJ || !v->n || !t->nw)
		return 0;
	for (c = v->child; c; c = c->next)
		if (!label_of(t, c->key))
			return 0;
	return 1;
}

static int all_unit(const pt_rv *v)
{
	const pt_rv *c;

	for (c = v->child; c; c = c->next)
		if ((c->type != PT_RV_NUM && c->type != PT_RV_INT) ||
		    !((c->type == PT_RV_NUM ? c->num : (double)c->i) >= 0 &&
		      (c->type == PT_RV_NUM ? c->num : (double)c->i) <= 1))
			return 0;
	return 1;
}

static int all_scalar(const pt_rv *v)
{
	const pt_rv *c;

	for (c = v->child; c; c = c->next)
		if (!is_scalar(c))
			return 0;
	return 1;
}

static void fmt_value(const tctx *t, int unit, const pt_rv *v, pt_sb *sb);

/* "rank 3 21.1%, rank 5 30.2% +2" */
static void fmt_worker_map(const tctx *t, int unit, const pt_rv *v, pt_sb *sb, size_t max)
{
	const pt_rv *c;
	size_t k = 0;

	if (unit == U_NONE && all_unit(v))
		unit = U_PCT;
	for (c = v->child; c && k < max; c = c->next, k++) {
		if (k)
			pt_sb_adds(sb, ", ");
		pt_sb_adds(sb, label_of(t, c->key));
		if (is_scalar(c) && c->type != PT_RV_NULL) {
			pt_sb_addc(sb, ' ');
			fmt_value(t, unit, c, sb);
		}
	}
	if (v->n > k)
		pt_sb_addf(sb, " +%zu", v->n - k);
}

/* A member that holds a Unix time ("created") as a UTC date. */
static int fmt_epoch(const pt_rv *v, pt_sb *sb)
{
	double x = v->type == PT_RV_INT ? (double)v->i : v->type == PT_RV_NUM ? v->num : 0;
	time_t tt = (time_t)x;
	struct tm tm;
	char b[64];

	if (!(x >= 1e9 && x < 1e10) || !v->key || !strstr(v->key, "created") ||
	    !gmtime_r(&tt, &tm))
		return 0;
	strftime(b, sizeof(b), "%Y-%m-%d %H:%M:%S UTC", &tm);
	pt_sb_adds(sb, b);
	return 1;
}

/* A step of a "steps" list ({"number": 12, "ms": 166.0, ...}) as
 * "12: 166 ms"; 0 when v is not one. */
static int step_entry(const pt_rv *v, pt_sb *sb)
{
	const pt_rv *n = pt_rv_get(v, PT_KEY_NUMBER), *m = pt_rv_get(v, PT_KEY_MS);
	char b[64];

	if (v->type != PT_RV_OBJ || !n || n->type != PT_RV_INT || !m ||
	    (m->type != PT_RV_NUM && m->type != PT_RV_INT))
		return 0;
	fmt_num(U_MS, m->type == PT_RV_NUM ? m->num : (double)m->i, b, sizeof(b));
	pt_sb_addf(sb, "%lld: %s", (long long)n->i, b);
	return 1;
}

static void fmt_value(const tctx *t, int unit, const pt_rv *v, pt_sb *sb)
{
	char b[64], esc[1024];

	if (fmt_epoch(v, sb))
		return;
	const pt_rv *c;
	size_t k = 0;

	switch (v->type) {
	case PT_RV_NULL:
		pt_sb_adds(sb, "-");
		return;
	case PT_RV_BOOL:
		pt_sb_adds(sb, v->i ? "yes" : "no");
		return;
	case PT_RV_INT:
		fmt_num(unit, (double)v->i, b, sizeof(b));
		pt_sb_adds(sb, b);
		return;
	case PT_RV_NUM:
		fmt_num(unit, v->num, b, sizeof(b));
		pt_sb_adds(sb, b);
		return;
	case PT_RV_RAW:
		pt_sb_adds(sb, "{" ELL "}");
		return;
	case PT_RV_STR: {
		const char *l = label_of(t, v->str);

		if (l) {
			pt_sb_adds(sb, l);
		} else {
			char s[1024];

			pt_name_short(v->str, s, sizeof(s));
			pt_sb_adds(sb, pt_name_fit(s, 60, esc, sizeof(esc)));
		}
		return;
	}
	case PT_RV_ARR:
		if (!v->n) {
			pt_sb_adds(sb, "none");
			return;
		}
		for (c = v->child; c && k < 6; c = c->next, k++) {
			if (k)
				pt_sb_adds(sb, v->child->type == PT_RV_STR ? ", " : " / ");
			if (is_scalar(c))
				fmt_value(t, unit, c, sb);
			else if (!step_entry(c, sb))
				pt_sb_adds(sb, "{" ELL "}");
		}
		if (v->n > k)
			pt_sb_addf(sb, " +%zu", v->n - k);
		return;
	case PT_RV_OBJ:
		if (!v->n)
			pt_sb_adds(sb, "none");
		else if (is_worker_map(t, v))
			fmt_worker_map(t, unit, v, sb, 2);
		else
			pt_sb_addf(sb, "%zu entries", v->n);
		return;
	}
}

/* A member name as a label or column header: no "(in [0,1])" or unit (the
 * cells say it), underscores as spaces, a few long seed names shortened. */
static void header_of(const char *k, char *b, size_t cap)
{
	static const char *const alias[][2] = {
		{ "avg execution time / monitoring duration", "avg exec share" },
		{ "median cost per execution", "median per exec" },
		{ PT_KEY_DIFFERENT_FROM_OTHER_WORKERS, "differs" },
		{ PT_KEY_EXAMPLE_OF_NORMAL_WORKER, "normal example" },
		{ PT_KEY_ABNORMAL_WORKERS, "abnormal" },
		{ "bottleneck ratio", "bottleneck" },
		{ "execution ratio", "exec ratio" },
		{ "median duration", "median" },
		{ PT_KEY_MAJOR_KERNEL_EXECUTIONS, "major kernel executions" },
	};
	static const char *const drop[] = { " (in [0,1])", " (ms)", " (us)", " (GB/s)" };
	char s[512], *p;
	size_t i;

	snprintf(s, sizeof(s), "%s", k ? k : "");
	for (i = 0; i < sizeof(drop) / sizeof(drop[0]); i++)
		while ((p = strstr(s, drop[i])))
			memmove(p, p + strlen(drop[i]), strlen(p + strlen(drop[i])) + 1);
	for (i = 0; i < sizeof(alias) / sizeof(alias[0]); i++)
		if (!strcmp(s, alias[i][0])) {
			snprintf(s, sizeof(s), "%s", alias[i][1]);
			break;
		}
	for (p = s; *p; p++)
		if (*p == '_')
			*p = ' ';
	pt_name_escape(s, b, cap);
}

/* ---- tables ----------------------------------------------------------- */

typedef struct cell {
	size_t col;
	char *s;
	int num;
} cell;

typedef struct row {
	const char *group;   /* outer key of a two-level map, or NULL */
	const char *key;
	const pt_rv *v;
	cell *c;
	size_t nc, cap;
} row;

typedef struct table {
	char **col;          /* headers */
	int *colnum;         /* every cell numeric: right-aligned */
	size_t *colw;
	size_t ncol, colcap;
	row *r;
	size_t nr;
	int oom;
} table;

static size_t col_index(table *tb, const char *h)
{
	size_t i;

	for (i = 0; i < tb->ncol; i++)
		if (!strcmp(tb->col[i], h))
			return i;
	if (X_GROW(tb->col, tb->colcap, tb->ncol + 1)) {
		tb->oom = 1;
		return (size_t)-1;
	}
	tb->col[tb->ncol] = x_strndup(h, strlen(h));
	if (!tb->col[tb->ncol]) {
		tb->oom = 1;
		return (size_t)-1;
	}
	return tb->ncol++;
}

static void add_cell(table *tb, row *r, const char *h, const char *s, int num)
{
	size_t col = col_index(tb, h), i;

	if (col == (size_t)-1)
		return;
	for (i = 0; i < r->nc; i++)
		if (r->c[i].col == col)
			return; /* the first of two same-named members wins */
	if (X_GROW(r->c, r->cap, r->nc + 1)) {
		tb->oom = 1;
		return;
	}
	r->c[r->nc].col = col;
	r->c[r->nc].num = num;
	r->c[r->nc].s = x_strndup(s, strlen(s));
	if (!r->c[r->nc].s)
		tb->oom = 1;
	else
		r->nc++;
}

/* The cells of one row: scalar members (nested objects flattened, their
 * members named by their own key; a "worker" member by its object's key). */
static void flatten(const tctx *t, table *tb, row *r, const pt_rv *v, const char *parent,
		    int unit)
{
	const pt_rv *c;
	char h[512];
	pt_sb sb = {0};

	for (c = v->child; c; c = c->next) {
		int u = unit_of(c->key);

		if (u == U_NONE)
			u = unit;
		if (c->type == PT_RV_OBJ && c->n && !is_worker_map(t, c)) {
			flatten(t, tb, r, c, c->key, u);
			continue;
		}
		header_of(parent && !strcmp(c->key, "worker") ? parent : c->key, h, sizeof(h));
		pt_sb_reset(&sb);
		fmt_value(t, u, c, &sb);
		add_cell(tb, r, h, sb.buf ? sb.buf : "", c->type == PT_RV_NUM ||
			 c->type == PT_RV_INT);
	}
	if (sb.oom)
		tb->oom = 1;
	pt_sb_free(&sb);
}

static void table_free(table *tb)
{
	size_t i, j;

	for (i = 0; i < tb->nr; i++) {
		for (j = 0; j < tb->r[i].nc; j++)
			x_free(tb->r[i].c[j].s);
		x_free(tb->r[i].c);
	}
	for (i = 0; i < tb->ncol; i++)
		x_free(tb->col[i]);
	x_free(tb->col);
	x_free(tb->colnum);
	x_free(tb->colw);
	x_free(tb->r);
}

/* Every child an object whose children are all objects: {group: {key: row}}. */
static int two_level(const tctx *t, const pt_rv *v)
{
	const pt_rv *c, *g;
	int any = 0;

	for (c = v->child; c; c = c->next) {
		if (c->type != PT_RV_OBJ)
			return 0;
		for (g = c->child; g; g = g->next) {
			if (g->type != PT_RV_OBJ || is_worker_map(t, g))
				return 0;
			any = 1;
		}
	}
	return any;
}

/* The table's rows: v's members, or with two levels (two_level) the
 * members of each member, their group beside them; at most top rows.
 * *total is how many there are in all, *group_workers whether every
 * group is a worker.  -1: out of memory. */
static int collect_rows(tctx *t, const pt_rv *v, int twol, table *tb, size_t *total,
			int *group_workers)
{
	const pt_rv *c, *g;

	for (c = v->child; c; c = c->next)
		*total += twol ? c->n : 1;
	tb->r = x_calloc(*total < t->o->top ? *total : t->o->top, sizeof(*tb->r));
	if (!tb->r)
		return -1;
	for (c = v->child; c && tb->nr < t->o->top; c = c->next) {
		if (!twol) {
			tb->r[tb->nr].key = c->key;
			tb->r[tb->nr++].v = c;
			continue;
		}
		if (!label_of(t, c->key))
			*group_workers = 0;
		for (g = c->child; g && tb->nr < t->o->top; g = g->next) {
			tb->r[tb->nr].group = c->key;
			tb->r[tb->nr].key = g->key;
			tb->r[tb->nr++].v = g;
		}
	}
	if (twol)
		col_index(tb, *group_workers ? "worker" : "group");
	return 0;
}

/* Each row's cells: its group, then a worker map, an object's members
 * (flatten) or a single value.  -1: out of memory. */
static int fill_cells(tctx *t, table *tb, int twol, int group_workers, int unit)
{
	size_t i;

	for (i = 0; i < tb->nr; i++) {
		row *r = &tb->r[i];
		pt_sb sb = {0};

		if (twol) {
			const char *l = label_of(t, r->group);
			char esc[256];

			add_cell(tb, r, group_workers ? "worker" : "group",
				 l ? l : pt_name_fit(r->group, 24, esc, sizeof(esc)), 0);
		}
		if (r->v->type == PT_RV_OBJ && is_worker_map(t, r->v)) {
			fmt_worker_map(t, unit, r->v, &sb, 2);
			add_cell(tb, r, "workers", sb.buf ? sb.buf : "", 0);
		} else if (r->v->type == PT_RV_OBJ) {
			flatten(t, tb, r, r->v, NULL, unit);
		} else {
			fmt_value(t, unit, r->v, &sb);
			add_cell(tb, r, "value", sb.buf ? sb.buf : "",
				 r->v->type == PT_RV_NUM || r->v->type == PT_RV_INT);
		}
		pt_sb_free(&sb);
	}
	return tb->oom ? -1 : 0;
}

/* Column widths (the widest cell or header; a text column wider than 40
 * is cut: names of workers, long lists) and alignment (every cell
 * numeric: right).  Sets *other to the columns' width with their gaps.
 * -1: out of memory. */
static int size_columns(table *tb, size_t *other)
{
	size_t i, j, k;

	tb->colw = x_calloc(tb->ncol + 1, sizeof(*tb->colw));
	tb->colnum = x_calloc(tb->ncol + 1, sizeof(*tb->colnum));
	if (!tb->colw || !tb->colnum)
		return -1;
	for (k = 0; k < tb->ncol; k++) {
		tb->colw[k] = pt_name_width(tb->col[k]);
		tb->colnum[k] = 1;
	}
	for (i = 0; i < tb->nr; i++)
		for (j = 0; j < tb->r[i].nc; j++) {
			cell *ce = &tb->r[i].c[j];
			size_t w = pt_name_width(ce->s);

			if (w > tb->colw[ce->col])
				tb->colw[ce->col] = w;
			if (!ce->num)
				tb->colnum[ce->col] = 0;
		}
	for (k = 0; k < tb->ncol; k++) {
		if (tb->colw[k] > 40)
			tb->colw[k] = 40;
		*other += tb->colw[k] + 2;
	}
	return 0;
}

/* The rows' names (their labels, else keys), shortened together
 * (pt_name_short_set) and fitted to the name column: what the line
 * leaves beside the other columns, at least 30, at most the longest
 * name.  Fills names[0..nr) (the caller frees them) and *namew.
 * -1: out of memory. */
static int row_names(tctx *t, const table *tb, size_t indent, size_t other, char **names,
		     size_t *namew)
{
	const char **keys = x_calloc(tb->nr + 1, sizeof(*keys));
	size_t i, maxname = 0;
	int rc = -1;

	if (!keys)
		return -1;
	for (i = 0; i < tb->nr; i++) {
		const char *l = label_of(t, tb->r[i].key);

		keys[i] = l ? l : tb->r[i].key;
	}
	if (pt_name_short_set(keys, tb->nr, 4096, names))
		goto out;
	for (i = 0; i < tb->nr; i++)
		if (pt_name_width(names[i]) > maxname)
			maxname = pt_name_width(names[i]);
	*namew = t->o->width - 1 > indent + other ? t->o->width - 1 - indent - other : 0;
	if (*namew < 30)
		*namew = 30;
	if (maxname < *namew)
		*namew = maxname < 4 ? 4 : maxname;
	for (i = 0; i < tb->nr; i++) {
		char *f = x_malloc(strlen(names[i]) + 8);

		if (!f)
			goto out;
		pt_name_fit(names[i], *namew, f, strlen(names[i]) + 8);
		x_free(names[i]);
		names[i] = f;
	}
	rc = 0;
out:
	x_free(keys);
	return rc;
}

/* Ends line at its last non-blank and prints it. */
static void emit_trimmed(tctx *t, pt_sb *line)
{
	while (line->len && line->buf[line->len - 1] == ' ')
		line->buf[--line->len] = 0;
	emit(t, line->buf ? line->buf : "");
}

/* The header line: "name", then each column's header aligned as its
 * cells are. */
static void print_header(tctx *t, const table *tb, size_t namew, size_t indent, pt_sb *line)
{
	char h[64];
	size_t k;

	pt_sb_addf(line, "%*s%-*s", (int)indent, "", (int)namew, "name");
	for (k = 0; k < tb->ncol; k++) {
		pt_name_fit(tb->col[k], tb->colw[k], h, sizeof(h));
		pt_sb_addf(line, "  %*s%s", (int)(tb->colw[k] - pt_name_width(h)), "", "");
		if (!tb->colnum[k]) { /* left-aligned: header left too */
			line->len -= tb->colw[k] - pt_name_width(h);
			line->buf[line->len] = 0;
			pt_sb_adds(line, h);
			pt_sb_addf(line, "%*s", (int)(tb->colw[k] - pt_name_width(h)), "");
		} else {
			pt_sb_adds(line, h);
		}
	}
	emit_trimmed(t, line);
}

/* One line per row: its name, then its cell of each column ("-" when
 * none), numbers right-aligned, text left-aligned. */
static void print_rows(tctx *t, const table *tb, char **names, size_t namew, size_t indent,
		       pt_sb *line)
{
	size_t i, j, k;

	for (i = 0; i < tb->nr; i++) {
		const row *r = &tb->r[i];

		pt_sb_reset(line);
		pt_sb_addf(line, "%*s%s%*s", (int)indent, "", names[i],
			   (int)(namew - pt_name_width(names[i])), "");
		for (k = 0; k < tb->ncol; k++) {
			const char *s = "";
			char fit[512];
			size_t w;

			for (j = 0; j < r->nc; j++)
				if (r->c[j].col == k)
					s = r->c[j].s;
			if (!*s)
				s = "-";
			pt_name_fit(s, tb->colw[k], fit, sizeof(fit));
			w = pt_name_width(fit);
			if (tb->colnum[k])
				pt_sb_addf(line, "  %*s%s", (int)(tb->colw[k] - w), "", fit);
			else
				pt_sb_addf(line, "  %s%*s", fit, (int)(tb->colw[k] - w), "");
		}
		emit_trimmed(t, line);
	}
}

static void print_table(tctx *t, const pt_rv *v, int unit, size_t indent)
{
	table tb = {0};
	size_t total = 0, i, other = 0, namew = 0;
	int twol = two_level(t, v), group_workers = 1;
	char **names = NULL;
	pt_sb line = {0};

	if (collect_rows(t, v, twol, &tb, &total, &group_workers) ||
	    fill_cells(t, &tb, twol, group_workers, unit) || size_columns(&tb, &other))
		goto oom;
	names = x_calloc(tb.nr + 1, sizeof(*names));
	if (!names || row_names(t, &tb, indent, other, names, &namew))
		goto oom;
	print_header(t, &tb, namew, indent, &line);
	print_rows(t, &tb, names, namew, indent, &line);
	if (total > tb.nr) {
		pt_sb_reset(&line);
		pt_sb_addf(&line, "%*s" ELL " %zu more in report.json", (int)indent, "",
			   total - tb.nr);
		emit(t, line.buf);
	}
	if (line.oom)
		t->oom = 1;
	goto out;
oom:
	t->oom = 1;
out:
	for (i = 0; names && i < tb.nr; i++)
		x_free(names[i]);
	x_free(names);
	pt_sb_free(&line);
	table_free(&tb);
}

/* One member: a line for scalars, lists and worker maps, a table for a map
 * of objects, else a heading and its members one level deeper. */
static void render(tctx *t, const char *key, const pt_rv *v, int unit, size_t indent)
{
	char h[512];
	pt_sb sb = {0};
	const pt_rv *c;
	int all_obj = 1;

	if (unit_of(key) != U_NONE)
		unit = unit_of(key);
	header_of(key, h, sizeof(h));
	if (v->type == PT_RV_OBJ && v->n && !(is_worker_map(t, v) && all_scalar(v))) {
		for (c = v->child; c; c = c->next)
			if (c->type != PT_RV_OBJ)
				all_obj = 0;
		pt_sb_addf(&sb, "%*s%s", (int)indent, "", h);
		if (all_obj)
			pt_sb_addf(&sb, " (%zu)", v->n);
		emit(t, sb.buf);
		if (all_obj) {
			print_table(t, v, unit, indent + 2);
		} else {
			for (c = v->child; c; c = c->next)
				render(t, c->key, c, unit, indent + 2);
		}
		goto out;
	}
	pt_sb_addf(&sb, "%*s%s: ", (int)indent, "", h);
	{
		pt_sb val = {0};
		size_t max = v->type == PT_RV_OBJ ? 6 : 0;

		if (v->type == PT_RV_OBJ && !v->n)
			pt_sb_adds(&val, "none");
		else if (max)
			fmt_worker_map(t, unit, v, &val, max);
		else
			fmt_value(t, unit, v, &val);
		pt_sb_adds(&sb, val.buf ? val.buf : "");
		pt_sb_free(&val);
	}
	wrap(t, sb.buf, indent + 4, "");
out:
	if (sb.oom)
		t->oom = 1;
	pt_sb_free(&sb);
}

/* ---- summary and findings --------------------------------------------- */

static double num_of(const pt_rv *v)
{
	if (!v)
		return NAN;
	return v->type == PT_RV_NUM ? v->num : v->type == PT_RV_INT ? (double)v->i : NAN;
}

typedef struct wv {
	double v;
	const char *id;
} wv;

static int cmp_wv(const void *a, const void *b)
{
	const wv *x = a, *y = b;

	return x->v < y->v ? -1 : x->v > y->v ? 1 : strcmp(x->id, y->id);
}

/* "min 13.0 ms (rank 2), median 17.3 ms, max 19.9 ms (rank 1)" */
static void min_med_max(const tctx *t, wv *v, size_t n, int unit, pt_sb *sb)
{
	char a[64], m[64], b[64];
	double med;

	qsort(v, n, sizeof(*v), cmp_wv);
	med = n % 2 ? v[n / 2].v : (v[n / 2 - 1].v + v[n / 2].v) / 2;
	fmt_num(unit, v[0].v, a, sizeof(a));
	fmt_num(unit, med, m, sizeof(m));
	fmt_num(unit, v[n - 1].v, b, sizeof(b));
	if (n == 1)
		pt_sb_addf(sb, "%s (%s)", a, label_of(t, v[0].id));
	else
		pt_sb_addf(sb, "min %s (%s), median %s, max %s (%s)", a, label_of(t, v[0].id), m,
			   b, label_of(t, v[n - 1].id));
}

static const char *class_name(const char *c)
{
	static const char *const names[][2] = {
		{ "compute", "GPU compute" }, { "communication", "communication" },
		{ "memory", "GPU memory copies" }, { "runtime", "CUDA runtime" },
		{ "python", "Python/CPU" }, { "idle", "idle" },
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(c, names[i][0]))
			return names[i][1];
	return c;
}

/* The torch version's public part ("2.15.0" of "2.15.0+cu130"), letters,
 * digits, '.', '-' and '_' only, into b. */
static void torch_public(const char *v, char *b, size_t cap)
{
	size_t i, n = 0;

	for (i = 0; v[i] && v[i] != '+' && n + 1 < cap && n < 40; i++)
		if ((v[i] >= '0' && v[i] <= '9') || (v[i] >= 'a' && v[i] <= 'z') ||
		    (v[i] >= 'A' && v[i] <= 'Z') || v[i] == '.' || v[i] == '-' || v[i] == '_')
			b[n++] = v[i];
	b[n] = 0;
}

/* ", torch 2.15.0" when the workers' traces name it (the "perftracker"
 * member), ", torch 2.14.1 and 2.15.0" when they differ (the first two). */
static void torch_versions(const pt_rv *ws, pt_sb *sb)
{
	char a[48] = "", b[48] = "", x[48];
	const pt_rv *c, *v;
	int more = 0;

	for (c = ws->child; c; c = c->next) {
		v = pt_rv_get(c, PT_KEY_TORCH);
		if (!v || v->type != PT_RV_STR)
			continue;
		torch_public(v->str, x, sizeof(x));
		if (!x[0] || !strcmp(x, a) || !strcmp(x, b))
			continue;
		if (!a[0])
			snprintf(a, sizeof(a), "%s", x);
		else if (!b[0])
			snprintf(b, sizeof(b), "%s", x);
		else
			more = 1;
	}
	if (a[0])
		pt_sb_addf(sb, ", torch %s%s%s%s", a, b[0] ? " and " : "", b, more ? " (and more)" : "");
}

static void summary(tctx *t, const pt_rv *root)
{
	const pt_rv *ws = pt_rv_get(root, PT_KEY_WORKERS), *disp = pt_rv_get(root, PT_KEY_DISPLAY);
	const pt_rv *dw = pt_rv_get(disp, PT_KEY_WORKERS), *c, *s;
	wv *step = NULL, *util = NULL;
	size_t nok = 0, nfail = 0, nstep = 0, nutil = 0, k;
	long long smin = -1, smax = -1;
	size_t nsteps_max = 0;
	double cls[16] = {0}, total = 0;
	const char *clsname[16];
	size_t ncls = 0;
	pt_sb sb = {0};
	char a[64];

	if (!ws || ws->type != PT_RV_OBJ)
		return;
	step = x_calloc(ws->n + 1, sizeof(*step));
	util = x_calloc(ws->n + 1, sizeof(*util));
	if (!step || !util) {
		t->oom = 1;
		goto out;
	}
	for (c = ws->child; c; c = c->next) {
		const pt_rv *st = pt_rv_get(c, PT_KEY_STEPS_LC), *d = pt_rv_get(dw, c->key), *ms;
		double win = num_of(pt_rv_get(c, PT_KEY_WINDOW_IN_MS));
		double g = num_of(pt_rv_get(c, PT_KEY_GPU_UTILIZATION));
		size_t ns = 0;

		if (pt_rv_get(c, PT_KEY_ERROR)) {
			nfail++;
			continue;
		}
		nok++;
		if (st && st->type == PT_RV_ARR)
			for (s = st->child; s; s = s->next, ns++) {
				long long x = (long long)num_of(s);

				if (smin < 0 || x < smin)
					smin = x;
				if (x > smax)
					smax = x;
			}
		if (ns > nsteps_max)
			nsteps_max = ns;
		ms = pt_rv_get(d, PT_KEY_STEP_MS);
		if (ms && ms->type == PT_RV_ARR && ms->n) {
			double sum = 0;

			for (s = ms->child; s; s = s->next)
				sum += num_of(s);
			step[nstep].v = sum / (double)ms->n;
			step[nstep++].id = c->key;
		} else if (isfinite(win)) {
			step[nstep].v = win / (double)(ns ? ns : 1);
			step[nstep++].id = c->key;
		}
		if (isfinite(g)) {
			util[nutil].v = g;
			util[nutil++].id = c->key;
		}
		for (s = pt_rv_get(d, PT_KEY_CLASS_MS) ? pt_rv_get(d, PT_KEY_CLASS_MS)->child : NULL; s;
		     s = s->next) {
			for (k = 0; k < ncls; k++)
				if (!strcmp(clsname[k], s->key))
					break;
			if (k == ncls && ncls < 16)
				clsname[ncls++] = s->key;
			if (k < ncls && isfinite(num_of(s))) {
				cls[k] += num_of(s);
				total += num_of(s);
			}
		}
	}
	pt_sb_addf(&sb, "PerfTracker report: %zu worker%s", nok, nok == 1 ? "" : "s");
	if (nfail)
		pt_sb_addf(&sb, " (+%zu unreadable)", nfail);
	if (smin >= 0 && smin == smax)
		pt_sb_addf(&sb, ", step %lld profiled", smin);
	else if (smin >= 0)
		pt_sb_addf(&sb, ", steps %lld-%lld profiled", smin, smax);
	if (nsteps_max > 1)
		pt_sb_addf(&sb, " (%zu per worker)", nsteps_max);
	torch_versions(ws, &sb);
	emit(t, sb.buf);
	if (nstep) {
		pt_sb_reset(&sb);
		pt_sb_adds(&sb, "  Step time        ");
		min_med_max(t, step, nstep, U_MS, &sb);
		emit(t, sb.buf);
	}
	if (total > 0) {
		/* largest share first */
		size_t order[16], x, y;

		for (x = 0; x < ncls; x++)
			order[x] = x;
		for (x = 1; x < ncls; x++)
			for (y = x; y > 0 && cls[order[y]] > cls[order[y - 1]]; y--) {
				size_t tmp = order[y];

				order[y] = order[y - 1];
				order[y - 1] = tmp;
			}
		pt_sb_reset(&sb);
		for (x = 0, y = 0; x < ncls; x++) {
			if (cls[order[x]] <= 0)
				continue; /* a class the job does not have (no GPU) */
			fmt_pct(cls[order[x]] / total, a, sizeof(a));
			pt_sb_addf(&sb, "%s%s %s", y++ ? ", " : "", class_name(clsname[order[x]]), a);
		}
		wrap(t, "  Time goes to     ", 19, sb.buf ? sb.buf : "");
	}
	if (nutil) {
		double umax = 0;

		for (k = 0; k < nutil; k++)
			if (util[k].v > umax)
				umax = util[k].v;
		pt_sb_reset(&sb);
		pt_sb_adds(&sb, "  GPU utilization  ");
		if (umax > 0)
			min_med_max(t, util, nutil, U_PCT, &sb);
		else
			pt_sb_adds(&sb, "none: no GPU kernel in the traces");
		emit(t, sb.buf);
	}
	if (t->o->page_line) {
		pt_sb_reset(&sb);
		if (t->o->outdir)
			pt_sb_addf(&sb, "  Page             %s/PerfDisplay/index.html "
				   "(perftracker display %s)", t->o->outdir, t->o->outdir);
		else
			pt_sb_adds(&sb, "  Page             none written (add -o DIR for "
				   "DIR/PerfDisplay/index.html and report.json)");
		emit(t, sb.buf);
	}
out:
	if (sb.oom)
		t->oom = 1;
	pt_sb_free(&sb);
	x_free(step);
	x_free(util);
}

static int is_weak(const pt_finding *f)
{
	return f->conf.level && !strcmp(f->conf.level, "weak");
}

/* sb's text, workers relabelled, wrapped under the first-line prefix. */
static void wrap_relabeled(tctx *t, const pt_sb *sb, const char *first, int indent)
{
	char *text = relabel(t, sb->buf ? sb->buf : "");

	if (text)
		wrap(t, first, indent, text);
	else
		t->oom = 1;
	x_free(text);
}

/* "also: ..." under a finding that holds other sections' findings of its
 * cause: how many of each kind, and the workers its victims are. */
static void evidence_line(tctx *t, const pt_finding *c, pt_sb *sb)
{
	static const char *const lead[PT_EV_COUNT] = {
		"seen as ", "the frames inside it ", "its own longer collectives ",
		"its own waiting for it ", "", "", "",
	};
	size_t k, i, j, n, parts = 0;

	if (!c->nev)
		return;
	pt_sb_reset(sb);
	for (k = 0; k < PT_EV_COUNT; k++) {
		size_t shown = 0;
		for (n = 0, i = 0; i < c->nev; i++)
			n += c->ev[i].kind == (pt_ev_kind)k;
		/* a group's other workers: its sentence names them */
		if (!n || k == PT_EV_WORKER)
			continue;
		if (k == PT_EV_WATCH) {
			/* its sentence says it all, after the others */
			continue;
		}
		pt_sb_adds(sb, parts++ ? "; " : "also: ");
		if (k == PT_EV_SYMPTOM)
			pt_sb_addf(sb, "%zu symptom%s on the workers that waited for it (", n,
				   n == 1 ? "" : "s");
		else
			pt_sb_adds(sb, lead[k]);
		for (i = 0; i < c->nev; i++) {
			const pt_finding_ev *e = &c->ev[i];
			char nb[200];
			const char *lab;
			if (e->kind != (pt_ev_kind)k)
				continue;
			if (k == PT_EV_SYMPTOM) {
				/* each worker once, however many symptoms it has */
				for (j = 0; j < i; j++)
					if (c->ev[j].kind == PT_EV_SYMPTOM &&
					    !strcmp(c->ev[j].worker, e->worker))
						break;
				if (j < i)
					continue;
			}
			if (shown++ == 4) {
				pt_sb_addf(sb, ", " ELL);
				break;
			}
			if (shown > 1)
				pt_sb_adds(sb, ", ");
			if (k == PT_EV_SYMPTOM) {
				lab = label_of(t, e->worker);
				pt_sb_addf(sb, "%s", lab ? lab : e->worker);
			} else if (!e->function[0] ||
				   (k == PT_EV_SAME && !strcmp(e->function, c->function))) {
				/* the cause itself as another section saw it */
				pt_sb_addf(sb, "%s", e->category);
			} else {
				pt_sb_addf(sb, "%s", pt_name_leaf(e->function, nb, sizeof(nb)));
			}
		}
		if (k == PT_EV_SYMPTOM)
			pt_sb_adds(sb, ")");
	}
	if (parts)
		wrap_relabeled(t, sb, "     ", 7);
	for (i = 0; i < c->nev; i++) {
		if (c->ev[i].kind != PT_EV_WATCH || !c->ev[i].explanation)
			continue;
		pt_sb_reset(sb);
		pt_sb_addf(sb, "before the profile, %s", c->ev[i].explanation);
		wrap_relabeled(t, sb, "     ", 7);
	}
}

/* The findings that may be noise, in one line: who, what, how much. */
static void noise_line(tctx *t, const pt_finding *f, size_t nf, size_t nweak, pt_sb *sb)
{
	size_t i, shown = 0;

	pt_sb_reset(sb);
	pt_sb_addf(sb, "Possibly noise (%zu: weak evidence or within the job's own noise; "
		   "report.json has them): ", nweak);
	for (i = 0; i < nf; i++) {
		const pt_finding *c = &f[i];
		const char *w = c->nworkers ? c->workers[0] : "", *lab = label_of(t, w);
		char nb[200], pb[32];
		if (!is_weak(c))
			continue;
		if (shown++ == 6) {
			pt_sb_addf(sb, "; " ELL " %zu more", nweak - 6);
			break;
		}
		fmt_pct(c->conf.lost, pb, sizeof(pb));
		pt_sb_addf(sb, "%s%s", shown > 1 ? "; " : "", lab ? lab : w);
		if (c->grouped && c->nworkers > 1)
			pt_sb_addf(sb, " and %zu other worker%s", c->nworkers - 1,
				   c->nworkers == 2 ? "" : "s");
		pt_sb_addf(sb, " %s (%s of %s time)",
			   c->function[0] ? pt_name_leaf(c->function, nb, sizeof(nb)) : c->category,
			   pb, c->grouped && c->nworkers > 1 ? "the worst one's" : "its");
	}
	wrap_relabeled(t, sb, "  ", 4);
}

static void findings(tctx *t, const pt_report *r)
{
	size_t nf, i, shown = 0, nweak = 0, ncause;
	const pt_finding *f = pt_report_findings(r, &nf);
	pt_sb sb = {0};
	char num[32];

	pt_sb_reset(&sb);
	if (!nf) {
		emit(t, "Findings: none. No worker differs from the others beyond the thresholds.");
		return;
	}
	for (i = 0; i < nf; i++)
		nweak += is_weak(&f[i]);
	ncause = nf - nweak;
	if (!ncause)
		pt_sb_addf(&sb, "Findings: none beyond the job's own noise (%zu possibly noise)",
			   nweak);
	else
		pt_sb_addf(&sb, "Findings (%zu, most time lost first)", ncause);
	emit(t, sb.buf);
	for (i = 0; i < nf; i++) {
		const pt_finding *c = &f[i];
		char *text;

		if (is_weak(c))
			continue;
		if (t->o->max_findings && shown == t->o->max_findings)
			break;
		shown++;
		pt_sb_reset(&sb);
		if (c->cause != PT_CAUSE_NONE)
			pt_finding_render(c, label_cb, t, &sb);
		else if (c->explanation[0])
			pt_who_resolve(c->explanation, label_cb, t, &sb);
		else
			pt_sb_addf(&sb, "%s: %s", c->category, c->function);
		text = sb.oom ? NULL : x_strndup(sb.buf ? sb.buf : "", sb.len);
		if (!text) {
			t->oom = 1;
			break;
		}
		snprintf(num, sizeof(num), "%3zu. ", shown);
		wrap(t, num, 5, text);
		x_free(text);
		if (c->conf.level) {
			pt_sb_reset(&sb);
			pt_sb_addf(&sb, "%s: %s", c->conf.level, c->conf.evidence);
			text = relabel(t, sb.buf);
			if (text)
				wrap(t, "     ", 7, text);
			x_free(text);
		}
		evidence_line(t, c, &sb);
	}
	if (shown < ncause) {
		pt_sb_reset(&sb);
		pt_sb_addf(&sb, "  " ELL " and %zu more (--max-findings 0 prints all; all are in "
			   "report.json)", ncause - shown);
		emit(t, sb.buf);
	}
	if (nweak)
		noise_line(t, f, nf, nweak, &sb);
	if (sb.oom)
		t->oom = 1;
	pt_sb_free(&sb);
}

/* "Critical path": one row per step (every step of up to 2 workers, else
 * the slow ones) with the path's split and the function most on it, then
 * the job's path per step.  The generic renderer would print the nested
 * per-step arrays as one cell. */
static void cpath_row(tctx *t, const char *wid, const pt_rv *st, int head)
{
	static const char *const kinds[] = { "cpu", "compute", "communication", "memory", "launch",
					     "gap", "wait" };
	static const char *const heads[] = { "cpu", "compute", "comm", "memory", "launch", "gap",
					     "wait" };
	const pt_rv *sp = pt_rv_get(st, PT_KEY_SPLIT_MS), *fa = pt_rv_get(st, PT_KEY_FUNCTIONS), *no;
	const char *lab = label_of(t, wid);
	pt_sb sb = {0};
	size_t k;

	if (head) {
		pt_sb_addf(&sb, "  %-16s %6s %7s", "worker", "step", "ms");
		for (k = 0; k < 7; k++)
			pt_sb_addf(&sb, " %7s", heads[k]);
		pt_sb_adds(&sb, "  most on the path");
		emit(t, sb.buf ? sb.buf : "");
		pt_sb_reset(&sb);
	}
	no = pt_rv_get(st, PT_KEY_NUMBER);
	pt_sb_addf(&sb, "  %-16.16s %6lld %7.1f", lab ? lab : wid,
		   no && no->type == PT_RV_INT ? (long long)no->i : -1LL,
		   num_of(pt_rv_get(st, PT_KEY_MS)));
	for (k = 0; k < 7; k++) {
		double v = num_of(sp ? pt_rv_get(sp, kinds[k]) : NULL);
		pt_sb_addf(&sb, " %7.1f", isnan(v) ? 0 : v);
	}
	if (fa && fa->child) {
		const pt_rv *nm = pt_rv_get(fa->child, PT_KEY_NAME);
		char nb[200];
		pt_sb_addf(&sb, "  %s %.1f", nm && nm->type == PT_RV_STR ?
			   pt_name_short(nm->str, nb, sizeof(nb)) : "",
			   num_of(pt_rv_get(fa->child, PT_KEY_MS)));
	}
	{
		const pt_rv *sl = pt_rv_get(st, PT_KEY_SLOW);
		if (sl && sl->type == PT_RV_BOOL && sl->i)
			pt_sb_adds(&sb, " (slow step)");
	}
	emit(t, sb.buf ? sb.buf : "");
	if (sb.oom)
		t->oom = 1;
	pt_sb_free(&sb);
}

static void render_cpath(tctx *t, const pt_rv *v)
{
	const pt_rv *ws = pt_rv_get(v, PT_KEY_WORKERS), *job = pt_rv_get(v, PT_KEY_JOB), *w, *st;
	int head = 1, all = ws && ws->n <= 2;
	size_t shown = 0, hidden = 0;
	char l[256];

	emit(t, "Critical path (each step's longest chain of dependent work, ms by kind)");
	for (w = ws ? ws->child : NULL; w; w = w->next) {
		const pt_rv *arr = pt_rv_get(w, PT_KEY_STEPS_LC);
		for (st = arr ? arr->child : NULL; st; st = st->next) {
			const pt_rv *sl = pt_rv_get(st, PT_KEY_SLOW);
			int slow = sl && sl->type == PT_RV_BOOL && sl->i;
			if ((!all && !slow) || shown >= 40) {
				hidden++;
				continue;
			}
			cpath_row(t, w->key, st, head);
			head = 0;
			shown++;
		}
	}
	if (hidden) {
		snprintf(l, sizeof(l), "  (%zu more steps in report.json \"Critical path\")", hidden);
		emit(t, l);
	}
	for (st = job ? job->child : NULL; st; st = st->next) {
		const pt_rv *th = pt_rv_get(st, PT_KEY_THROUGH), *no = pt_rv_get(st, PT_KEY_NUMBER);
		char a[32], b[32];
		const char *lab;
		if (!th || th->type != PT_RV_STR)
			continue;
		lab = label_of(t, th->str);
		fmt_ms(num_of(pt_rv_get(st, PT_KEY_MS)), a, sizeof(a));
		fmt_ms(num_of(pt_rv_get(st, PT_KEY_WHAT_IF_MS)), b, sizeof(b));
		snprintf(l, sizeof(l), "  job, step %lld: %s, its path runs through %s (what-if %s)",
			 no && no->type == PT_RV_INT ? (long long)no->i : -1LL, a, lab ? lab : th->str, b);
		emit(t, l);
	}
}

void pt_report_text_people(const pt_report *r, const pt_text_opts *o, pt_sb *out)
{
	const pt_rv *root = pt_report_root_c(r), *c;
	pt_text_opts def;
	tctx t = {0};

	if (!o) {
		pt_text_opts_default(&def);
		o = &def;
	}
	t.o = o;
	t.out = out;
	load_workers(&t, pt_rv_get(root, PT_KEY_WORKERS));
	summary(&t, root);
	pt_sb_addc(out, '\n');
	findings(&t, r);
	for (c = root->child; c; c = c->next) {
		if (!strcmp(c->key, "workers") || !strcmp(c->key, "findings") ||
		    !strcmp(c->key, "display") || !strcmp(c->key, "timeline"))
			continue;
		pt_sb_addc(out, '\n');
		if (!strcmp(c->key, PT_KEY_CRITICAL_PATH) && c->type == PT_RV_OBJ) {
			render_cpath(&t, c);
			continue;
		}
		if (c->type == PT_RV_OBJ && !c->n) {
			char h[512], l[600];

			header_of(c->key, h, sizeof(h));
			snprintf(l, sizeof(l), "%s: nothing to report", h);
			emit(&t, l);
			continue;
		}
		render(&t, c->key, c, U_NONE, 0);
	}
	if (t.oom)
		out->oom = 1;
	x_free(t.w);
}

void pt_report_text(const pt_report *r, size_t max_findings, pt_sb *out)
{
	pt_text_opts o;

	pt_text_opts_default(&o);
	o.max_findings = max_findings;
	pt_report_text_people(r, &o, out);
}
