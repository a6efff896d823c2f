/*
 * findings.c - the ranked "findings" of the report: every section adds a
 * diagnosis (worker, function, metric, value, the other workers' median,
 * estimated time lost per window, a plain sentence); merge.c makes one
 * per cause, noise.c and confidence.c grade them; here they are ranked
 * (the "summary" findings about the traces first, then causes beyond the
 * job's noise before the weak ones, then by time lost) and written with
 * their confidence and evidence.  Also the helpers that make the
 * sentences readable.
 */
#include "internal.h"
#include "sections.h"
#include "../model/keys.h"
#include "../util/xalloc.h"
#include "../report/keys.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *const dcat_names[DC_COUNT] = {
	"summary", PT_KEY_GPU_COMPUTE, PT_KEY_GPU_MEMORY_OPERATIONS, PT_KEY_COMMUNICATION, PT_KEY_CUDA_RUNTIME,
	PT_KEY_PYTHON_FUNCTIONS, "GPU idle", PT_KEY_STEPS, PT_KEY_LOCKSTEP,
};

dfinding *df_add(dctx *c, dcat cat, const char *worker, const char *function,
		 const char *metric, double value, double others, double impact_ms)
{
	dfinding *f;

	if (X_GROW(c->f, c->fcap, c->nf + 1)) {
		c->oom = 1;
		return NULL;
	}
	f = &c->f[c->nf++];
	f->cat = cat;
	f->category = dcat_names[cat];
	f->worker = worker;
	f->function = function ? function : "";
	f->metric = metric;
	f->value = value;
	f->others = others;
	f->impact_ms = isfinite(impact_ms) ? impact_ms : 0;
	f->explanation = NULL;
	f->cause = PT_CAUSE_NONE;
	f->m[0] = (pt_metric){ metric, value, PT_UNIT_NONE };
	f->nm = 1;
	f->nargs = 0;
	f->steps = NULL;
	f->nsteps = 0;
	f->has_what_if = 0;
	f->what_if_ms = f->instead_ms = NAN;
	f->ninside = 0;
	f->inside_ms = 0;
	f->caused_by = NULL;
	f->fkind = -1;
	f->waits = NULL;
	f->nwaits = 0;
	f->also = NULL;
	f->nalso = 0;
	f->ev = NULL;
	f->nev = f->evcap = 0;
	f->noise_ms = NAN;
	f->noise_src = NULL;
	f->psi = NAN;
	f->group = NULL;
	f->ngroup = 0;
	f->group_ms = 0;
	memset(&f->conf, 0, sizeof(f->conf));
	f->conf.apart = NAN;
	return f;
}

/* The class of the keys a section's findings name, -1 for the sections
 * that name keys of any class. */
static int category_class(dcat cat)
{
	switch (cat) {
	case DC_COMPUTE: return PT_C_COMPUTE;
	case DC_MEMORY: return PT_C_MEMORY;
	case DC_COMM: return PT_C_COMM;
	case DC_RUNTIME: return PT_C_RUNTIME;
	case DC_PYTHON: return PT_C_PYTHON;
	default: return -1;
	}
}

uint32_t df_key(const dctx *c, const dfinding *f)
{
	int cls = category_class(f->cat), k;
	uint32_t i;

	if (!f->function || !f->function[0])
		return UINT32_MAX;
	if (cls >= 0 && (i = diag_key_find(c, cls, f->function)) != UINT32_MAX)
		return i;
	for (k = PT_C_COUNT - 1; k >= 0; k--)
		if (k != cls && (i = diag_key_find(c, k, f->function)) != UINT32_MAX)
			return i;
	return UINT32_MAX;
}

void df_free(dfinding *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->nev; i++)
		x_free((char *)f->ev[i].explanation);
	x_free(f->ev);
	x_free(f->waits);
	x_free(f->also);
	x_free(f->group);
	f->group = NULL;
	f->ngroup = 0;
	f->waits = f->also = NULL;
	f->nwaits = f->nalso = 0;
	x_free(f->conf.evidence);
	x_free(f->explanation);
	for (i = 0; i < f->nargs; i++)
		x_free(f->args[i]);
	f->nargs = 0;
	x_free(f->steps);
	f->steps = NULL;
	f->nsteps = 0;
	f->ev = NULL;
	f->nev = f->evcap = 0;
	f->conf.evidence = NULL;
	f->explanation = NULL;
}

void df_cause(dfinding *f, pt_cause cause, pt_unit unit)
{
	if (!f)
		return;
	f->cause = cause;
	f->m[0].unit = unit;
}

void df_metric(dfinding *f, const char *name, double value, pt_unit unit)
{
	if (f && f->nm < DF_MAX_METRICS)
		f->m[f->nm++] = (pt_metric){ name, value, unit };
}

void df_arg(dctx *c, dfinding *f, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (!f || f->nargs == DF_MAX_ARGS)
		return;
	va_list aq;
	int n;

	va_start(ap, fmt);
	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	s = n >= 0 ? x_malloc((size_t)n + 1) : NULL;
	if (s)
		vsnprintf(s, (size_t)n + 1, fmt, aq);
	va_end(aq);
	if (!s)
		c->oom = 1;
	else
		f->args[f->nargs++] = s;
}

void df_steps(dctx *c, dfinding *f, const int64_t *steps, size_t n)
{
	if (!f || !n)
		return;
	x_free(f->steps);
	f->steps = x_malloc(n * sizeof(*steps));
	if (!f->steps) {
		c->oom = 1;
		f->nsteps = 0;
		return;
	}
	memcpy(f->steps, steps, n * sizeof(*steps));
	f->nsteps = n;
}

void df_who(pt_sb *sb, const dctx *c, uint32_t w, char style)
{
	const pt_summary *s = c->w[w].s;

	pt_who_token(sb, style, c->w[w].id, style == 'R' && s ? (long long)s->rank : -1);
}

void df_explain_share(dctx *c, dfinding *f, const char *name, const char *group,
		      const char *why)
{
	if (!f)
		return;
	df_cause(f, PT_CAUSE_SHARE, PT_UNIT_SHARE);
	df_metric(f, "others", f->others, PT_UNIT_SHARE);
	df_metric(f, "ms per step", df_impact_per_step(c, f), PT_UNIT_MS_STEP);
	df_arg(c, f, "%s", name);
	df_arg(c, f, "%s", group ? group : "");
	df_arg(c, f, "%s", why);
}

uint32_t df_worker(const dctx *c, const dfinding *f)
{
	size_t i;

	/* the sections name workers by c->w[i].id itself; a copy by value
	 * is found too */
	for (i = 0; f->worker && i < c->nw; i++)
		if (c->w[i].id == f->worker)
			return (uint32_t)i;
	for (i = 0; f->worker && i < c->nw; i++)
		if (!strcmp(c->w[i].id, f->worker))
			return (uint32_t)i;
	return UINT32_MAX;
}

int df_comm_own_cause(const dfinding *f)
{
	return f->cause == PT_CAUSE_SLOW_P2P || f->cause == PT_CAUSE_COMM_BOUND;
}

double df_impact_per_step(const dctx *c, const dfinding *f)
{
	uint32_t wi = df_worker(c, f);

	return wi != UINT32_MAX ? f->impact_ms / dw_steps(&c->w[wi]) : f->impact_ms;
}

double df_cost_per_step(const dctx *c, const dfinding *f)
{
	if (f->has_what_if && isfinite(f->what_if_ms) && isfinite(f->instead_ms))
		return f->instead_ms - f->what_if_ms;
	return df_impact_per_step(c, f);
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

static int is_weak(const dfinding *f)
{
	return f->conf.level && !strcmp(f->conf.level, "weak");
}

static int cmp_finding(const void *a, const void *b)
{
	const dfinding *x = a, *y = b;
	int sx = x->cat == DC_SUMMARY, sy = y->cat == DC_SUMMARY;
	int r;

	if (sx != sy)
		return sx ? -1 : 1;
	/* a cause beyond the job's noise before what may be noise */
	if (is_weak(x) != is_weak(y))
		return is_weak(x) ? 1 : -1;
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

/* How many worker ids to_model may put in ws for f. */
static size_t ws_need(const dctx *c, const dfinding *f)
{
	return (f->ngroup > c->nfailed ? f->ngroup : c->nfailed) + 1;
}

/* f as the report's finding model (report.h), which writes report.json's
 * entry; ws holds f's workers (ws_need of them). */
static void to_model(dctx *c, const dfinding *f, pt_finding *m, const char **ws)
{
	size_t i;

	memset(m, 0, sizeof(*m));
	m->category = f->category;
	if (f->ngroup > 1) {
		/* the group, worst first (its own worker the first) */
		for (i = 0; i < f->ngroup; i++)
			ws[i] = c->w[f->group[i]].id;
		m->nworkers = f->ngroup;
		m->grouped = 1;
		m->group_ms = f->group_ms;
	} else if (f->worker) {
		ws[0] = f->worker;
		m->nworkers = 1;
	} else {
		for (i = 0; i < c->nfailed; i++)
			ws[i] = c->failed_ids[i];
		m->nworkers = c->nfailed;
	}
	m->workers = ws;
	m->function = f->function;
	m->metric = f->metric;
	m->value = f->value;
	m->others = f->others;
	m->impact_ms = f->impact_ms;
	m->explanation = f->cause != PT_CAUSE_NONE ? NULL : f->explanation;
	m->caused_by = f->caused_by;
	m->cause = f->cause;
	m->metrics = f->m;
	m->nmetrics = f->nm;
	m->args = (const char *const *)f->args;
	m->nargs = f->nargs;
	m->steps = f->steps;
	m->nsteps = f->nsteps;
	m->has_what_if = f->has_what_if;
	m->what_if_ms = f->what_if_ms;
	m->instead_ms = f->instead_ms;
	m->ninside = f->ninside;
	m->inside_ms = f->inside_ms;
	if (f->conf.level) {
		m->conf.level = f->conf.level;
		m->conf.lost = f->conf.lost;
		m->conf.apart = f->conf.apart;
		m->conf.same = f->conf.same;
		m->conf.calls = f->conf.calls;
		m->conf.noise_ms = f->noise_ms;
		m->conf.noise = f->noise_src;
		m->conf.evidence = f->conf.evidence;
	}
	/* the evidence is the model's own type (devidence) */
	m->ev = f->ev;
	m->nev = f->nev;
}

const char *df_sentence(dctx *c, dfinding *f)
{
	const char **ws;
	pt_finding m;
	pt_sb sb = { 0 };

	if (f->explanation || f->cause == PT_CAUSE_NONE)
		return f->explanation ? f->explanation : "";
	ws = x_malloc(ws_need(c, f) * sizeof(*ws));
	if (!ws) {
		c->oom = 1;
		return NULL;
	}
	f->m[0].name = f->metric;
	f->m[0].value = f->value;
	to_model(c, f, &m, ws);
	pt_finding_render(&m, NULL, NULL, &sb);
	x_free(ws);
	if (sb.oom) {
		pt_sb_free(&sb);
		c->oom = 1;
		return NULL;
	}
	f->explanation = sb.buf ? sb.buf : x_strndup("", 0);
	if (!f->explanation)
		c->oom = 1;
	return f->explanation;
}

void diag_findings(dctx *c)
{
	const char **ws = NULL;
	size_t i, need = c->nfailed + 1;

	pt_report_findings_open(c->rep);
	if (c->nf > 1)
		qsort(c->f, c->nf, sizeof(*c->f), cmp_finding);
	diag_watch(c);
	for (i = 0; i < c->nf; i++)
		if (ws_need(c, &c->f[i]) > need)
			need = ws_need(c, &c->f[i]);
	ws = x_malloc(need * sizeof(*ws));
	if (!ws) {
		c->oom = 1;
		goto out;
	}
	for (i = 0; i < c->nf; i++) {
		pt_finding m;
		/* the headline as the finding holds it now */
		c->f[i].m[0].name = c->f[i].metric;
		c->f[i].m[0].value = c->f[i].value;
		to_model(c, &c->f[i], &m, ws);
		if (pt_report_add_finding(c->rep, &m)) {
			c->oom = 1;
			break;
		}
	}
out:
	x_free(ws);
}
