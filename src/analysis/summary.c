/*
 * summary.c - building and freeing a worker summary (summary.h): the
 * worker's identity (file name, host/rank/pid, distributedInfo), its
 * window and steps, plus the patterns from patterns.c.
 *
 * Flow: raw trace --pt_kineto_read_file--> pt_store --pt_summary_build-->
 * pt_summary --summary_io.c--> summary JSON.
 */
#include "summary.h"
#include "analysis.h"
#include "collectives.h"
#include "p2p.h"
#include "critpath.h"
#include "spans.h"
#include "patterns.h"
#include "hwjoin.h"
#include "breakdown.h"
#include "../trace/any.h"
#include "../util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pt_summary_options_default(pt_summary_options *o)
{
	o->min_python_ratio = 0.0005;
	o->max_python = 500;
	o->hw = NULL;
	o->nhw = 0;
}

static char *dup0(const char *s)
{
	return x_strndup(s ? s : "", s ? strlen(s) : 0);
}

const char *pt_summary_worker_name(const char *path)
{
	const char *b;

	if (!path)
		return "";
	b = strrchr(path, '/');
	return b ? b + 1 : path;
}

void pt_summary_parse_worker_name(const char *base, char *host, size_t hostcap,
				  int64_t *rank, int64_t *pid)
{
	const char *u2, *p, *r;
	int64_t rv = 0, pv = 0;
	size_t nd = 0, hl;

	if (host && hostcap)
		host[0] = 0;
	if (rank)
		*rank = -1;
	if (pid)
		*pid = -1;
	if (!base)
		return;
	/* <host>_<rank>_<pid>[.ext...]: pid = digits after the last '_' up to
	 * a '.' or the end; rank = the digits between the two last '_'; the
	 * host (which may hold '_' and '.') is everything before. */
	u2 = strrchr(base, '_');
	if (!u2)
		return;
	for (p = u2 + 1; *p >= '0' && *p <= '9'; p++, nd++)
		if (nd < 18)
			pv = pv * 10 + (*p - '0');
	if (nd == 0 || nd > 18 || (*p && *p != '.'))
		return;
	nd = 0;
	for (r = u2; r > base && r[-1] >= '0' && r[-1] <= '9'; r--)
		nd++;
	if (nd == 0 || nd > 18 || r - 1 <= base || r[-1] != '_')
		return;
	for (p = r; p < u2; p++)
		rv = rv * 10 + (*p - '0');
	hl = (size_t)(r - 1 - base);
	if (host && hostcap) {
		if (hl >= hostcap)
			hl = hostcap - 1;
		memcpy(host, base, hl);
		host[hl] = 0;
	}
	if (rank)
		*rank = rv;
	if (pid)
		*pid = pv;
}

/* A new summary with the identity fields every summary has. */
static pt_summary *summary_new(const char *path)
{
	pt_summary *s = x_calloc(1, sizeof(*s));
	char host[256];

	if (!s)
		return NULL;
	s->version = PT_SUMMARY_VERSION;
	s->rank = s->pid = s->world_size = -1;
	s->gpu_compute_util = -1;
	pt_hw_gpu_init(&s->hw_gpu);
	pt_summary_parse_worker_name(pt_summary_worker_name(path), host, sizeof(host), &s->rank, &s->pid);
	s->worker = dup0(pt_summary_worker_name(path));
	s->file = dup0(path);
	s->host = dup0(host);
	s->backend = dup0("");
	s->device = dup0("");
	if (!s->worker || !s->file || !s->host || !s->backend || !s->device) {
		pt_summary_free(s);
		return NULL;
	}
	return s;
}

pt_summary *pt_summary_failed(const char *path, const char *error)
{
	pt_summary *s = summary_new(path);

	if (s && !(s->error = dup0(error && *error ? error : "unreadable trace"))) {
		pt_summary_free(s);
		s = NULL;
	}
	return s;
}

/* The pid of the CPU lane with the most events: the training process. */
static int64_t main_pid(const pt_store *st)
{
	size_t *cnt, i, best = SIZE_MAX;
	int64_t pid = -1;

	if (!st->nlanes || !(cnt = x_calloc(st->nlanes, sizeof(*cnt))))
		return -1;
	for (i = 0; i < st->n; i++)
		if (st->ev[i].lane < st->nlanes && !st->lanes[st->ev[i].lane].gpu)
			cnt[st->ev[i].lane]++;
	for (i = 0; i < st->nlanes; i++)
		if (!st->lanes[i].gpu && cnt[i] && (best == SIZE_MAX || cnt[i] > cnt[best]))
			best = i;
	if (best != SIZE_MAX)
		pid = st->lanes[best].pid;
	x_free(cnt);
	return pid;
}

static int step_cmp(const void *pa, const void *pb)
{
	const pt_step *a = pa, *b = pb;

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->number < b->number ? -1 : a->number > b->number;
}

static char *strtab_dup(const pt_store *st, uint32_t id)
{
	size_t n;
	const char *s = pt_strtab_get(st->strs, id, &n);

	return x_strndup(s, n);
}

pt_summary *pt_summary_build(const pt_store *st, const char *path,
			     const pt_summary_options *opt, pt_error *err)
{
	pt_summary_options defopt;
	pt_coll_build coll;
	pt_frame_order fr;
	pt_summary *s = NULL;
	pt_step *steps = NULL;
	pt_window w;
	size_t i;

	memset(&coll, 0, sizeof(coll));
	memset(&fr, 0, sizeof(fr));
	if (!opt) {
		pt_summary_options_default(&defopt);
		opt = &defopt;
	}
	s = summary_new(path);
	if (!s)
		goto oom;
	if (st->rank >= 0)
		s->rank = st->rank; /* distributedInfo wins over the file name */
	if (s->pid < 0)
		s->pid = main_pid(st);
	s->world_size = st->world_size;
	x_free(s->backend);
	x_free(s->device);
	s->backend = strtab_dup(st, st->backend);
	s->device = strtab_dup(st, st->device_name);
	if (!s->backend || !s->device)
		goto oom;
	if (st->torch && !(s->torch = strtab_dup(st, st->torch)))
		goto oom;
	if (st->nwarnings && !(s->warning = dup0(st->warning)))
		goto oom;
	s->nwarnings = st->nwarnings;
	s->truncated = st->truncated;
	s->nevents = st->n;

	pt_window_find(st, &w);
	s->window_start_us = (double)w.start / 1e3;
	s->window_ms = (double)((uint64_t)w.end - (uint64_t)w.start) / 1e6;
	s->window_from_steps = w.from_steps;

	if (st->nsteps) {
		steps = x_malloc(st->nsteps * sizeof(*steps));
		s->step_numbers = x_malloc(st->nsteps * sizeof(*s->step_numbers));
		s->step_ms = x_malloc(st->nsteps * sizeof(*s->step_ms));
		if (!steps || !s->step_numbers || !s->step_ms)
			goto oom;
		memcpy(steps, st->steps, st->nsteps * sizeof(*steps));
		qsort(steps, st->nsteps, sizeof(*steps), step_cmp);
		for (i = 0; i < st->nsteps; i++) {
			s->step_numbers[i] = steps[i].number;
			s->step_ms[i] = (double)steps[i].dur / 1e6;
		}
		s->nsteps = st->nsteps;
	}
	if (pt_coll_find(st, &w, &coll) || pt_p2p_build(st, &w, s))
		goto oom;
	/* Before the patterns: the walk's index is freed before they build
	 * theirs, so the peak is the larger of the two (docs/bench.md); only
	 * the frames in nest order (4 bytes each) pass from one to the other. */
	if (pt_cpath_build(st, &w, &coll, &fr, s, err))
		goto fail;
	if (pt_spans_build(st, &w, steps, st->nsteps, s, err))
		goto fail;
	if (pt_patterns_build_coll(st, &w, opt, &coll, &fr, s, err))
		goto fail;
	pt_frame_order_free(&fr);
	pt_coll_build_free(&coll);
	if (opt->nhw && pt_hwjoin_apply(st, &w, s, opt->hw, opt->nhw, err))
		goto fail;
	x_free(steps);
	return s;
oom:
	pt_error_set(err, PT_ENOMEM, -1, "out of memory while summarising");
fail:
	pt_error_subject(err, path);
	pt_frame_order_free(&fr);
	pt_coll_build_free(&coll);
	x_free(steps);
	pt_summary_free(s);
	return NULL;
}

pt_summary *pt_summary_from_trace(const char *path, const pt_summary_options *opt,
				  pt_error *err)
{
	pt_summary_options o;
	const pt_samples **hw = NULL;
	pt_samples own;
	pt_store st;
	pt_summary *s = NULL;

	memset(&own, 0, sizeof(own));
	if (pt_store_init(&st) || pt_samples_init(&own)) {
		pt_error_set(err, PT_ENOMEM, -1, "out of memory");
		pt_error_subject(err, path);
		goto out;
	}
	if (pt_trace_read_any(path, &st, &own, err)) {
		pt_error_subject(err, path);
		goto out;
	}
	if (opt)
		o = *opt;
	else
		pt_summary_options_default(&o);
	/* An nsys export carries its own GPU metrics: join them too. */
	if (own.n) {
		hw = x_malloc((o.nhw + 1) * sizeof(*hw));
		if (!hw) {
			pt_error_set(err, PT_ENOMEM, -1, "out of memory");
			pt_error_subject(err, path);
			goto out;
		}
		if (o.nhw)
			memcpy(hw, o.hw, o.nhw * sizeof(*hw));
		hw[o.nhw++] = &own;
		o.hw = hw;
	}
	s = pt_summary_build(&st, path, &o, err);
out:
	x_free(hw);
	pt_samples_free(&own);
	pt_store_free(&st);
	return s;
}

void pt_summary_free(pt_summary *s)
{
	size_t i;

	if (!s)
		return;
	pt_coll_free(s);
	pt_cpath_free(s->cpath);
	pt_spans_free(s->tl);
	pt_p2p_free(s);
	for (i = 0; i < s->npatterns; i++) {
		pt_pattern *pt = pt_summary_pat(s, i);

		x_free(pt->key);
		if (pt_summary_whole(s)) {
			x_free(pt->hw);
			x_free(pt->step_ms);
		}
	}
	if (s->breakdown) {
		pt_breakdown_free(s->breakdown);
		x_free(s->breakdown);
	}
	x_free(s->hw_source);
	if (s->hw_series) {
		pt_samples_free(s->hw_series);
		x_free(s->hw_series);
	}
	for (i = 0; i < s->nfiles; i++)
		x_free(s->files[i]);
	x_free(s->files);
	x_free(s->grouped_by);
	x_free(s->patterns);
	x_free(s->step_ms);
	x_free(s->step_numbers);
	x_free(s->warning);
	x_free(s->error);
	x_free(s->device);
	x_free(s->torch);
	x_free(s->backend);
	x_free(s->host);
	x_free(s->file);
	x_free(s->worker);
	x_free(s);
}
