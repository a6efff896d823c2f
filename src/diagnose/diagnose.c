/*
 * diagnose.c - the driver of the master-side diagnosis: options, the
 * workers' ids, the "workers" part of the report, and the order the
 * sections run in.  The only file that calls the sections (sections.h);
 * they share the key index (keyindex.c), the metric vectors (metric.c) and
 * the findings list (findings.c), never this file.
 *
 * Flow: pt_summary[] --index--> keys x workers --sections (compute.c,
 * memory.c, comm.c, runtime.c, python.c, lockstep_*.c, ...)--> merge.c
 * (one finding per cause) --> noise.c --> confidence.c --> findings.c
 * (ranked, written) --> display.c --> pt_report.
 */
#include "internal.h"
#include "sections.h"
#include "lockstep.h"
#include "../util/xalloc.h"
#include "../report/keys.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void pt_diag_options_default(pt_diag_options *o)
{
	o->z = 3.5;
	o->rel = 0.2;
	o->min_impact = 0.005;
	o->mad_floor = 0.01;
	o->memop_threshold = 0.01;
	o->runtime_threshold = 0.01;
	o->python_threshold = 0.01;
	o->python_min_impact = 0.02;
	o->top_kernels = 5;
	o->loo_below = 8;
	o->fixed_only = 0;
	o->p2p_slow = 2.0;
	o->comm_bound = 0.5;
	o->watch = NULL;
	o->nwatch = 0;
	o->suspect = NULL;
}

/* ---- workers ------------------------------------------------------------ */

typedef struct wref {
	const pt_summary *s;
	const char *id;
} wref;

static int wref_cmp(const void *a, const void *b)
{
	const wref *x = a, *y = b;
	int64_t rx = x->s->rank < 0 ? INT64_MAX : x->s->rank;
	int64_t ry = y->s->rank < 0 ? INT64_MAX : y->s->rank;

	if (rx != ry)
		return rx < ry ? -1 : 1;
	return strcmp(x->id, y->id);
}

/* Unique ids: a worker is named by its trace's file name; two traces with
 * the same name (different folders) get "#2", "#3" appended.  A hash set
 * keeps this linear at 10,000 workers. */
static const char **make_ids(dctx *c, pt_summary *const *s, size_t n)
{
	const char **ids = x_calloc(n, sizeof(*ids));
	pt_hmap set = {0};
	size_t i;

	if (!ids || pt_hmap_reserve(&set, n))
		goto fail;
	for (i = 0; i < n; i++) {
		const char *base = s[i]->worker && s[i]->worker[0] ? s[i]->worker
				 : s[i]->file && s[i]->file[0] ? s[i]->file : "worker";
		char buf[1024];
		int dup = 1;
		uint64_t h;

		snprintf(buf, sizeof(buf), "%s", base);
		for (;;) {
			size_t it = 0;
			uint32_t v;

			h = pt_hash_words(buf, strlen(buf), 0);
			while ((v = pt_hmap_next(&set, h, &it)) != PT_HMAP_NONE && strcmp(ids[v], buf))
				;
			if (v == PT_HMAP_NONE)
				break;
			snprintf(buf, sizeof(buf), "%s#%d", base, ++dup);
		}
		ids[i] = pt_report_strdup(c->rep, buf);
		if (!ids[i] || pt_hmap_put(&set, h, (uint32_t)i))
			goto fail;
	}
	pt_hmap_free(&set);
	return ids;
fail:
	pt_hmap_free(&set);
	x_free(ids);
	return NULL;
}

static void write_workers(dctx *c, pt_summary *const *s, const char **ids, size_t n)
{
	pt_rv *root = pt_report_root(c->rep);
	pt_rv *ws = pt_rv_obj(c->rep, root, PT_KEY_WORKERS);
	wref *r = x_malloc(n * sizeof(*r));
	size_t i, j;

	if (!r) {
		c->oom = 1;
		return;
	}
	for (i = 0; i < n; i++) {
		r[i].s = s[i];
		r[i].id = ids[i];
	}
	if (n > 1)
		qsort(r, n, sizeof(*r), wref_cmp);
	for (i = 0; i < n; i++) {
		const pt_summary *x = r[i].s;
		pt_rv *o = pt_rv_obj(c->rep, ws, r[i].id);
		pt_rv *st;

		pt_rv_int(c->rep, o, PT_KEY_RANK, x->rank);
		pt_rv_str(c->rep, o, PT_KEY_HOST, x->host ? x->host : "");
		pt_rv_int(c->rep, o, PT_KEY_PID, x->pid);
		pt_rv_str(c->rep, o, PT_KEY_FILE, x->file ? x->file : "");
		if (x->nfiles) { /* a worker read from several files (wfiles.h) */
			pt_rv *fl = pt_rv_arr(c->rep, o, "files");
			for (j = 0; j < x->nfiles; j++)
				pt_rv_str(c->rep, fl, NULL, x->files[j]);
			pt_rv_str(c->rep, o, "grouped_by", x->grouped_by ? x->grouped_by : "");
		}
		if (x->error) {
			pt_rv_str(c->rep, o, PT_KEY_ERROR, x->error);
			continue;
		}
		st = pt_rv_arr(c->rep, o, PT_KEY_STEPS_LC);
		for (j = 0; j < x->nsteps && x->step_numbers; j++)
			pt_rv_int(c->rep, st, NULL, x->step_numbers[j]);
		pt_rv_num(c->rep, o, PT_KEY_WINDOW_IN_MS, x->window_ms);
		pt_rv_num(c->rep, o, PT_KEY_GPU_UTILIZATION, x->gpu_util);
		if (x->gpu_compute_util >= 0)
			pt_rv_num(c->rep, o, "gpu compute utilization", x->gpu_compute_util);
		if (x->torch)
			pt_rv_str(c->rep, o, PT_KEY_TORCH, x->torch);
	}
	x_free(r);
}

/* The worker with id (a findings' worker, NULL none): its index in c->w,
 * UINT32_MAX none. */
static uint32_t worker_of(const dctx *c, const pt_hmap *ids, const char *id)
{
	size_t it = 0;
	uint32_t v;

	if (!id)
		return UINT32_MAX;
	while ((v = pt_hmap_next(ids, pt_hash_words(id, strlen(id), 0), &it)) != PT_HMAP_NONE)
		if (!strcmp(c->w[v].id, id))
			return v;
	return UINT32_MAX;
}

/* Set mark[] for the workers the findings name or group, the straggler a
 * symptom waited for, the lockstep stragglers and the reference, the
 * workers with slow steps.  mark is indexed like s[] (by_input) or like
 * c->w. */
static void mark_named(dctx *c, unsigned char *mark, int by_input)
{
	pt_hmap ids = { 0 };
	size_t i, k;
	uint32_t v;

#define MARK(wi) (mark[by_input ? c->w[wi].in : (wi)] = 1)
	if (pt_hmap_reserve(&ids, c->nw)) {
		c->oom = 1;
		return;
	}
	for (i = 0; i < c->nw; i++)
		if (pt_hmap_put(&ids, pt_hash_words(c->w[i].id, strlen(c->w[i].id), 0), (uint32_t)i))
			c->oom = 1;
	for (i = 0; i < c->nf; i++) {
		const dfinding *f = &c->f[i];

		if ((v = worker_of(c, &ids, f->worker)) != UINT32_MAX)
			MARK(v);
		if ((v = worker_of(c, &ids, f->caused_by)) != UINT32_MAX)
			MARK(v);
		for (k = 0; k < f->ngroup; k++)
			if (f->group[k] < c->nw)
				MARK(f->group[k]);
	}
	if (c->lk && c->lk->L.nm) {
		const lk *L = &c->lk->L;

		MARK(L->w[L->m[0]].w);  /* the reference */
		for (k = 0; k < L->nm; k++)
			if (L->w[L->m[k]].straggler)
				MARK(L->w[L->m[k]].w);
	}
	for (i = 0; c->slow && i < c->nw; i++)
		if (c->slow[i])
			MARK(i);
#undef MARK
	pt_hmap_free(&ids);
}

/* c->detail at scale: the named workers, those read in full, then workers
 * spread over the job up to DIAG_ROWS_MAX. */
static void mark_detail(dctx *c)
{
	size_t i, n = 0, step, digests = 0;

	if (c->nw <= DIAG_ROWS_MAX)
		return;
	if (!(c->detail = x_calloc(c->nw, 1))) {
		c->oom = 1;
		return;
	}
	mark_named(c, c->detail, 0);
	for (i = 0; i < c->nw; i++) {
		n += c->detail[i];
		digests += c->w[i].s->digest_of != 0;
	}
	/* Of two phases, the workers read in full (the sample, the suspects). */
	for (i = 0; digests && i < c->nw && n < DIAG_ROWS_MAX; i++)
		if (!c->detail[i] && !c->w[i].s->digest_of) {
			c->detail[i] = 1;
			n++;
		}
	step = c->nw / DIAG_ROWS_MAX;
	for (i = 0; i < c->nw && n < DIAG_ROWS_MAX; i += step)
		if (!c->detail[i]) {
			c->detail[i] = 1;
			n++;
		}
}

/* One line naming the failed traces, first in the findings. */
static void failed_finding(dctx *c, size_t ntotal)
{
	pt_sb sb = {0};
	dfinding *f;
	size_t i;

	f = df_add(c, DC_SUMMARY, NULL, "", "error", (double)c->nfailed, NAN, 0);
	if (!f)
		return;
	df_cause(f, PT_CAUSE_UNREADABLE, PT_UNIT_COUNT);
	df_metric(f, "traces", (double)ntotal, PT_UNIT_COUNT);
	for (i = 0; i < c->nfailed && i < 10; i++) {
		pt_sb_adds(&sb, i ? ", " : "");
		pt_who_token(&sb, 'I', c->failed_ids[i], -1);
		pt_sb_addf(&sb, " (%s)", c->failed[i]->error ? c->failed[i]->error : "unknown error");
	}
	if (c->nfailed > 10)
		pt_sb_addf(&sb, " and %zu more (see \"workers\")", c->nfailed - 10);
	if (sb.oom)
		c->oom = 1;
	df_arg(c, f, "%s", sb.oom || !sb.buf ? "" : sb.buf);
	pt_sb_free(&sb);
}

pt_report *pt_diagnose(pt_summary *const *s, size_t n, const pt_diag_options *opt,
		       pt_error *err)
{
	pt_diag_options defo;
	dctx c;
	const char **ids = NULL;
	pt_report *rep = NULL;
	size_t i;

	memset(&c, 0, sizeof(c));
	if (!opt) {
		pt_diag_options_default(&defo);
		opt = &defo;
	}
	c.o = opt;
	if (!n || !s) {
		pt_error_set(err, PT_EINVAL, -1, "no worker summaries to diagnose");
		return NULL;
	}
	for (i = 0; i < n; i++) {
		if (!s[i]) {
			pt_error_set(err, PT_EINVAL, -1, "summary %zu is null", i);
			return NULL;
		}
	}
	c.rep = rep = pt_report_new();
	c.w = x_calloc(n, sizeof(*c.w));
	c.failed = x_calloc(n, sizeof(*c.failed));
	c.failed_ids = x_calloc(n, sizeof(*c.failed_ids));
	if (!rep || !c.w || !c.failed || !c.failed_ids)
		goto oom;
	ids = make_ids(&c, s, n);
	if (!ids)
		goto oom;
	for (i = 0; i < n; i++) {
		if (s[i]->error) {
			c.failed[c.nfailed] = s[i];
			c.failed_ids[c.nfailed++] = ids[i];
			continue;
		}
		c.w[c.nw].s = s[i];
		c.w[c.nw].id = ids[i];
		c.w[c.nw].window_ms = s[i]->window_ms;
		c.w[c.nw].pat = s[i]->patterns;
		c.w[c.nw].stride = s[i]->pat_stride ? s[i]->pat_stride : sizeof(pt_pattern);
		c.w[c.nw].whole = pt_summary_whole(s[i]);
		c.w[c.nw].in = (uint32_t)i;
		c.nw++;
	}
	if (diag_index_build(&c))
		goto oom;
	for (i = 0; i < 3; i++)
		if (dm_alloc(&c.m[i], c.nw))
			goto oom;
	if (c.nfailed)
		failed_finding(&c, n);
	diag_lockstep_match(&c);
	diag_step_mismatch(&c);
	diag_compute(&c);
	diag_memory(&c);
	diag_comm(&c);
	diag_p2p(&c);
	diag_runtime(&c);
	diag_python(&c);
	diag_breakdown(&c, 0);
	diag_comm_bound(&c);
	diag_steps(&c, 0);
	diag_lockstep(&c);
	diag_cpath(&c);
	/* The first of two phases (pt_diag_options.suspect) needs the findings,
	 * not the rows the report draws them with. */
	if (!opt->suspect)
		write_workers(&c, s, ids, n);
	diag_merge(&c);
	diag_group(&c);
	diag_noise(&c);
	diag_grade(&c);
	diag_findings(&c);
	if (opt->suspect) {
		mark_named(&c, opt->suspect, 1);
	} else {
		mark_detail(&c);
		diag_display(&c);
		diag_breakdown(&c, 1);
		diag_steps(&c, 1);
		diag_timeline(&c);
	}
	if (c.oom || pt_report_oom(rep))
		goto oom;
	goto out;
oom:
	pt_error_set(err, PT_ENOMEM, -1, "out of memory diagnosing %zu workers", n);
	pt_report_free(rep);
	rep = NULL;
out:
	for (i = 0; i < c.nf; i++)
		df_free(&c.f[i]);
	for (i = 0; c.lkw && i < c.nw; i++) {
		x_free(c.lkw[i].wait_ms);
		x_free(c.lkw[i].saved_ms);
		x_free(c.lkw[i].last);
	}
	x_free(c.lkw);
	lk_run_free(c.lk);
	x_free(c.waiting);
	for (i = 0; c.slow && i < c.nw; i++)
		x_free(c.slow[i]);
	x_free(c.slow);
	x_free(c.detail);
	x_free(c.gmark);
	x_free(c.f);
	for (i = 0; i < 3; i++)
		dm_free(&c.m[i]);
	x_free(c.ent);
	pt_hmap_free(&c.kmap);
	x_free(c.keys);
	x_free(ids);
	x_free(c.failed_ids);
	x_free(c.failed);
	x_free(c.w);
	return rep;
}
