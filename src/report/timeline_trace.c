/*
 * timeline_trace.c - PerfDisplay/timeline.json.gz: the timeline model
 * (timeline.h) in the Trace Event Format that ui.perfetto.dev and
 * chrome://tracing open, gzip-compressed.  One process per worker, sorted
 * by rank, its tracks as threads: the steps, the main thread's spans, GPU
 * compute, one track per collective channel, the lockstep's late spans and
 * waits, the slow steps; the critical path across workers as flow events;
 * one process for the findings, a track per finding; and, when raw traces
 * are given, their events compacted to a bound.  Every slice of a track is
 * nested or disjoint (Perfetto's rule), enforced before writing.  The
 * steps and collectives carry Kineto's categories, so `summarize --pid`
 * reads a rank back.  docs/display.md "The file".
 */
#include "timeline.h"
#include "../analysis/stats.h"
#include "../util/file.h"
#include "../util/strbuf.h"
#include "../util/xalloc.h"
#include "keys.h"
#include "../model/commkind.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Track ids inside a worker's process (threads). */
enum { T_STEPS = 1, T_SPANS, T_GPU, T_LATE, T_WAIT, T_SLOW, T_CHAN = 1000, T_RAW = 10000 };
#define FINDINGS_PID 1000000000LL
#define DEFAULT_RAW 2000000

typedef struct slice {
	int64_t pid, tid;
	double ts, dur;        /* µs, job clock */
	const char *name, *cat;
	size_t oname;          /* the name in w->names at this offset, SIZE_MAX: name */
	size_t args, nargs;    /* JSON object text in the args buffer, 0 length: none */
	uint32_t flow;         /* flow id + 1 to start here ("s"), 0 none */
	uint32_t flow_in;      /* flow id + 1 to end here ("f") */
} slice;

typedef struct tw {
	const pt_report *r;
	const pt_timeline *t;
	slice *v;
	size_t n, cap;
	pt_sb args;            /* every slice's args, back to back */
	pt_sb names;           /* owned names ("ProfilerStep#12", "N events"), NUL-separated */
	pt_sb out;
	int64_t *pid;          /* per worker */
	double base;           /* added to every ts so that none is negative */
	uint32_t nflow;
	int oom;
	z_stream *z;           /* while writing: out is deflated into gz by the MiB */
	pt_sb *gz;
} tw;

static int drain(tw *w, z_stream *z, pt_sb *gz, int finish);

static slice *add(tw *w, int64_t pid, int64_t tid, double ts, double dur, const char *name,
		  const char *cat)
{
	slice *s;

	if (!isfinite(ts) || !isfinite(dur) || dur < 0)
		return NULL;
	if (X_GROW(w->v, w->cap, w->n + 1)) {
		w->oom = 1;
		return NULL;
	}
	s = &w->v[w->n++];
	memset(s, 0, sizeof(*s));
	s->pid = pid;
	s->tid = tid;
	s->ts = ts;
	s->dur = dur;
	s->name = name;
	s->oname = SIZE_MAX;
	s->cat = cat;
	return s;
}

/* Start s's args: the caller appends members ("k":v, comma-separated). */
static void args_begin(tw *w, slice *s)
{
	if (s)
		s->args = w->args.len;
}

static void args_end(tw *w, slice *s)
{
	if (s)
		s->nargs = w->args.len - s->args;
}

/* s's name, made from fmt and v, kept in w->names (which may move while
 * the slices are made: the offset is resolved when writing). */
static void name_slice(tw *w, slice *s, const char *fmt, long long v)
{
	if (!s)
		return;
	s->oname = w->names.len;
	pt_sb_addf(&w->names, fmt, v);
	pt_sb_addc(&w->names, 0);
}

static const char *name_of(const tw *w, const slice *s)
{
	if (s->oname != SIZE_MAX)
		return w->names.buf ? w->names.buf + s->oname : "";
	return s->name ? s->name : "";
}

static int slice_cmp(const void *a, const void *b)
{
	const slice *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->dur != y->dur)
		return x->dur > y->dur ? -1 : 1;
	return 0;
}

/* Perfetto's rule: on one track a slice is inside the one open before it
 * or after it.  One that starts inside and ends outside is cut at the
 * enclosing slice's end (it keeps its start: an arrival, a launch). */
static void make_nested(tw *w)
{
	double *stk = NULL;
	size_t cap = 0, top = 0, i;

	if (w->n)
		qsort(w->v, w->n, sizeof(*w->v), slice_cmp);
	for (i = 0; i < w->n; i++) {
		slice *s = &w->v[i];
		if (i && (s->pid != s[-1].pid || s->tid != s[-1].tid))
			top = 0;
		while (top && stk[top - 1] <= s->ts)
			top--;
		if (top && s->ts + s->dur > stk[top - 1])
			s->dur = stk[top - 1] - s->ts;
		if (X_GROW(stk, cap, top + 1)) {
			w->oom = 1;
			break;
		}
		stk[top++] = s->ts + s->dur;
	}
	x_free(stk);
}

static void put_meta_to(pt_sb *o, const char *what, int64_t pid, int64_t tid, const char *key,
			const char *str, long long num)
{
	pt_sb_addf(o, ",\n{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%lld,\"tid\":%lld,\"args\":{\"%s\":",
		   what, (long long)pid, (long long)tid, key);
	if (str)
		pt_sb_add_json_str(o, str, strlen(str));
	else
		pt_sb_add_i64(o, num);
	pt_sb_adds(o, "}}");
}

static void put_meta(tw *w, const char *what, int64_t pid, int64_t tid, const char *key,
		     const char *str, long long num)
{
	put_meta_to(&w->out, what, pid, tid, key, str, num);
}

/* v µs with three decimals (ns), by integer formatting: "%.3f" through
 * printf was 2% of diagnosing 1,000 summaries (perf). */
static void put_ts(pt_sb *o, double v)
{
	long long ns = llround(v * 1e3);
	char frac[4];

	if (ns < 0) {
		pt_sb_addc(o, '-');
		ns = -ns;
	}
	pt_sb_add_i64(o, ns / 1000);
	frac[0] = '.';
	frac[1] = (char)('0' + ns / 100 % 10);
	frac[2] = (char)('0' + ns / 10 % 10);
	frac[3] = (char)('0' + ns % 10);
	pt_sb_add(o, frac, 4);
}

static void put_slices(tw *w)
{
	pt_sb *o = &w->out;
	size_t i;

	for (i = 0; i < w->n; i++) {
		const slice *s = &w->v[i];
		const char *nm = name_of(w, s);
		pt_sb_adds(o, ",\n{\"ph\":\"X\",\"pid\":");
		pt_sb_add_i64(o, s->pid);
		pt_sb_adds(o, ",\"tid\":");
		pt_sb_add_i64(o, s->tid);
		pt_sb_adds(o, ",\"ts\":");
		put_ts(o, s->ts + w->base);
		pt_sb_adds(o, ",\"dur\":");
		put_ts(o, s->dur);
		pt_sb_adds(o, ",\"name\":");
		pt_sb_add_json_str(o, nm, strlen(nm));
		pt_sb_adds(o, ",\"cat\":\"");
		pt_sb_adds(o, s->cat);
		pt_sb_addc(o, '"');
		if (s->nargs) {
			pt_sb_adds(o, ",\"args\":{");
			pt_sb_add(o, w->args.buf + s->args, s->nargs);
			pt_sb_addc(o, '}');
		}
		pt_sb_addc(o, '}');
		/* Flow events bind to the slice that encloses their ts: a hair
		 * inside this one's start. */
		if (s->flow || s->flow_in) {
			double at = s->ts + w->base + (s->dur > 0.002 ? 0.001 : s->dur / 2);
			if (s->flow_in) {
				pt_sb_addf(o, ",\n{\"ph\":\"f\",\"bp\":\"e\",\"id\":%u,\"pid\":%lld,"
					   "\"tid\":%lld,\"ts\":", s->flow_in, (long long)s->pid,
					   (long long)s->tid);
				put_ts(o, at);
				pt_sb_adds(o, ",\"name\":\"critical path\",\"cat\":\"critical_path\"}");
			}
			if (s->flow) {
				pt_sb_addf(o, ",\n{\"ph\":\"s\",\"id\":%u,\"pid\":%lld,\"tid\":%lld,\"ts\":",
					   s->flow, (long long)s->pid, (long long)s->tid);
				put_ts(o, at);
				pt_sb_adds(o, ",\"name\":\"critical path\",\"cat\":\"critical_path\"}");
			}
		}
		if (w->z && o->len >= (1u << 20) && !o->oom && drain(w, w->z, w->gz, 0))
			w->oom = 1;
	}
}

/* ---- what the summaries know --------------------------------------------- */

/* The summary's spans and GPU stretches (version 4). */
static void span_slices(tw *w, size_t k)
{
	const pt_tl_worker *x = &w->t->w[k];
	const pt_sum_tl *tl = x->s->tl;
	size_t q;

	for (q = 0; tl && q < tl->nspans; q++) {
		const int64_t *v = &tl->spans[4 * q];
		add(w, w->pid[k], T_SPANS, x->shift_us + (double)v[1], (double)v[2],
		    tl->names[v[3]], "span");
	}
	for (q = 0; tl && q < tl->ngpu; q++) {
		const int64_t *v = &tl->gpu[2 * q];
		add(w, w->pid[k], T_GPU, x->shift_us + (double)v[0], (double)(v[1] - v[0]),
		    "compute", "gpu_busy");
	}
}

static void worker_slices(tw *w, size_t k, double *win_lo, double *win_hi)
{
	const pt_timeline *t = w->t;
	const pt_tl_worker *x = &t->w[k];
	const pt_summary *s = x->s;
	int64_t pid = w->pid[k];
	size_t q;

	for (q = 0; q < pt_tl_nsteps(s); q++) {
		double a, b;
		int64_t num = pt_tl_step_number(s, q);
		slice *sl;
		pt_tl_step_span(s, q, &a, &b);
		a += x->shift_us;
		b += x->shift_us;
		*win_lo = fmin(*win_lo, a);
		*win_hi = fmax(*win_hi, b);
		sl = add(w, pid, T_STEPS, a, b - a, "window", "user_annotation");
		if (num >= 0)
			name_slice(w, sl, "ProfilerStep#%lld", num);
		if (x->slow && x->slow[q]) {
			sl = add(w, pid, T_SLOW, a, b - a, NULL, "perftracker");
			name_slice(w, sl, "slow step %lld", num);
			args_begin(w, sl);
			pt_sb_addf(&w->args, "\"step\":%lld,\"ms\":%.3f", (long long)num, (b - a) / 1e3);
			args_end(w, sl);
		}
	}
}

/* A flow that starts and never ends is dropped (id 0: none). */
static void drop_dangling(tw *w, uint32_t id)
{
	size_t i;

	for (i = w->n; id && i-- > 0;)
		if (w->v[i].flow == id) {
			w->v[i].flow = 0;
			return;
		}
}

/* Collectives, late spans, waits, and the critical path's flows: the
 * instance's last arriver to the next instance's on the same channel. */
static void instance_slices(tw *w)
{
	const pt_timeline *t = w->t;
	size_t i, k;
	double *tmp = x_malloc((t->nw + 1) * sizeof(*tmp));
	const char *prev_chan = NULL;
	uint32_t prev_id = 0;

	if (!tmp) {
		w->oom = 1;
		return;
	}
	for (i = 0; i < t->ninst; i++) {
		const pt_tl_inst *in = &t->inst[i];
		long chn;
		int gpu = pt_commkind_chan_parse(in->chan, &chn) == PT_CHAN_GPU;
		int64_t tid = (gpu ? T_CHAN : 2 * T_CHAN) + chn;
		double lt = NAN, med;
		size_t last_ix = SIZE_MAX;

		if (in->last != PT_TL_NONE) {
			const pt_tl_worker *L = &t->w[in->last];
			lt = L->shift_us + L->s->coll[t->own[i * t->nw + in->last]].arrive_us;
		}
		med = pt_tl_median_arrival(t, i, tmp, NULL);
		for (k = 0; k < t->nw; k++) {
			uint32_t j = t->own[i * t->nw + k];
			const pt_tl_worker *x = &t->w[k];
			double a, e;
			slice *sl;
			if (j == PT_TL_NONE)
				continue;
			a = x->shift_us + x->s->coll[j].arrive_us;
			e = x->shift_us + x->s->coll[j].end_us;
			sl = add(w, w->pid[k], tid, a, e - a, in->name, gpu ? "kernel" : "cpu_op");
			args_begin(w, sl);
			if (gpu)
				pt_sb_addf(&w->args, "\"device\":0,\"stream\":%lld,", (long long)tid);
			pt_sb_addf(&w->args, "\"instance\":%zu", i);
			if (in->last != PT_TL_NONE && in->last != k)
				pt_sb_addf(&w->args, ",\"waited for\":\"%s\",\"wait (us)\":%.3f",
					   "last arriver", lt - a);
			args_end(w, sl);
			if (in->last == k) {
				last_ix = sl ? (size_t)(sl - w->v) : SIZE_MAX;
				if (a - med >= PT_TL_MIN_WAIT_US) {
					slice *ls = add(w, w->pid[k], T_LATE, med, a - med, "late", "perftracker");
					args_begin(w, ls);
					pt_sb_addf(&w->args, "\"instance\":%zu,\"collective\":", i);
					pt_sb_add_json_str(&w->args, in->name, strlen(in->name));
					pt_sb_addf(&w->args, ",\"later than the median member (us)\":%.3f,"
						   "\"what-if saving (us)\":%.3f", a - med, in->saved_us);
					args_end(w, ls);
				}
			} else if (in->last != PT_TL_NONE && lt - a >= PT_TL_MIN_WAIT_US) {
				slice *ws = add(w, w->pid[k], T_WAIT, a, lt - a, "wait", "perftracker");
				args_begin(w, ws);
				pt_sb_addf(&w->args, "\"instance\":%zu,\"for\":", i);
				pt_sb_add_json_str(&w->args, t->w[in->last].id, strlen(t->w[in->last].id));
				args_end(w, ws);
			}
		}
		/* The job's path runs through each instance's last arriver: a flow
		 * from it to the next instance's on the same channel (instances
		 * come per channel, in order). */
		if (in->chan != prev_chan) {
			drop_dangling(w, prev_id);
			prev_id = 0;
			prev_chan = in->chan;
		}
		if (last_ix != SIZE_MAX) {
			w->v[last_ix].flow_in = prev_id;
			w->v[last_ix].flow = prev_id = ++w->nflow;
		}
	}
	drop_dangling(w, prev_id);
	x_free(tmp);
}

static void finding_slices(tw *w, double lo, double hi)
{
	const pt_timeline *t = w->t;
	size_t nf = 0, i, q, k;
	const pt_finding *f = pt_report_findings(w->r, &nf);

	for (i = 0; i < t->nf; i++) {
		const pt_tl_finding *tf = &t->f[i];
		const pt_finding *x;
		double a = INFINITY, b = -INFINITY;
		slice *sl;
		if (tf->index >= nf)
			continue;
		x = &f[tf->index];
		for (q = 0; q < tf->nsteps; q++)
			for (k = 0; k < tf->nw; k++) {
				const pt_tl_worker *tw_ = &t->w[tf->w[k]];
				size_t j;
				for (j = 0; j < pt_tl_nsteps(tw_->s); j++) {
					double s0, s1;
					if (pt_tl_step_number(tw_->s, j) != tf->steps[q])
						continue;
					pt_tl_step_span(tw_->s, j, &s0, &s1);
					a = fmin(a, tw_->shift_us + s0);
					b = fmax(b, tw_->shift_us + s1);
				}
			}
		if (!(a < b)) {
			a = lo;
			b = hi;
		}
		sl = add(w, FINDINGS_PID, (int64_t)tf->index + 1, a, b - a, NULL, "finding");
		name_slice(w, sl, "finding %lld", (long long)tf->index + 1);
		args_begin(w, sl);
		pt_sb_adds(&w->args, "\"sentence\":");
		pt_sb_add_json_str(&w->args, x->explanation ? x->explanation : "",
				   x->explanation ? strlen(x->explanation) : 0);
		pt_sb_adds(&w->args, ",\"category\":");
		pt_sb_add_json_str(&w->args, x->category ? x->category : "",
				   x->category ? strlen(x->category) : 0);
		pt_sb_adds(&w->args, ",\"confidence\":");
		if (x->conf.level)
			pt_sb_add_json_str(&w->args, x->conf.level, strlen(x->conf.level));
		else
			pt_sb_adds(&w->args, "null");
		pt_sb_adds(&w->args, ",\"function\":");
		pt_sb_add_json_str(&w->args, x->function ? x->function : "",
				   x->function ? strlen(x->function) : 0);
		pt_sb_adds(&w->args, ",\"workers\":[");
		for (k = 0; k < tf->nw; k++) {
			if (k)
				pt_sb_addc(&w->args, ',');
			pt_sb_add_json_str(&w->args, t->w[tf->w[k]].id, strlen(t->w[tf->w[k]].id));
		}
		pt_sb_adds(&w->args, "]");
		args_end(w, sl);
	}
}

/* ---- raw events ----------------------------------------------------------- */

static int dur_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

static const char *raw_cat(int kind)
{
	switch (kind) {
	case PT_K_KERNEL: return "raw kernel";
	case PT_K_COMM_KERNEL: return "raw communication";
	case PT_K_MEMCPY: return "raw memcpy";
	case PT_K_MEMSET: return "raw memset";
	case PT_K_RUNTIME: return "raw runtime";
	case PT_K_DRIVER: return "raw driver";
	case PT_K_CPU_COMM: return "raw collective";
	case PT_K_PYTHON: return "raw python";
	case PT_K_ANNOTATION: return "raw annotation";
	case PT_K_STEP: return "raw step";
	case PT_K_GPU_ANNOTATION: return "raw gpu annotation";
	default: return "raw op";
	}
}

/* A run of short events merged into one slice. */
typedef struct mrun {
	uint32_t lane;
	double a, b;   /* µs, job clock */
	size_t n;
} mrun;

static int mrun_cmp(const void *x, const void *y)
{
	const mrun *p = x, *q = y;

	if (p->lane != q->lane)
		return p->lane < q->lane ? -1 : 1;
	return p->a < q->a ? -1 : p->a > q->a;
}

/* The rule (docs/display.md "The file"): a worker gets budget slices of
 * its raw events.  When it has more events, the longest budget/2 are kept
 * as they are; the shorter ones of a lane merge into slices "N short
 * events", a run ending at a gap longer than the shortest kept event, and
 * when that leaves more than budget/2 runs, the runs' shortest gaps are
 * closed too until budget/2 are left. */
static void raw_slices(tw *w, size_t k, const pt_store *st, size_t budget, pt_sb *meta)
{
	const pt_tl_worker *x = &w->t->w[k];
	double off = x->shift_us - x->s->window_start_us, *gaps = NULL;
	int64_t thr = 0, *d = NULL;
	size_t i, l, nr = 0, rcap = 0, keep = budget / 2 ? budget / 2 : 1, *noff = NULL;
	mrun *run = NULL;
	uint32_t *cur = NULL;  /* per lane: its open run + 1, 0 none */
	uint32_t nstr = pt_strtab_count(st->strs);

	if (st->n > budget && budget) {
		d = x_malloc(st->n * sizeof(*d));
		if (!d)
			goto oom;
		for (i = 0; i < st->n; i++)
			d[i] = st->ev[i].dur;
		qsort(d, st->n, sizeof(*d), dur_cmp);
		thr = d[keep - 1] + 1;
		x_free(d);
		d = NULL;
	}
	cur = x_calloc(st->nlanes ? st->nlanes : 1, sizeof(*cur));
	/* The kept events' names are copied into w->names, once per name of
	 * the store (noff: its offset + 1 there, 0 not yet), so that the
	 * store can be freed before the file is written. */
	noff = x_calloc(nstr ? nstr : 1, sizeof(*noff));
	if (!cur || !noff)
		goto oom;
	for (i = 0; i < st->n; i++) {
		const pt_event *e = &st->ev[i];
		double a = (double)e->ts / 1e3 + off, du = (double)e->dur / 1e3;
		mrun *r;
		if (e->dur >= thr) {
			slice *sl = add(w, w->pid[k], T_RAW + e->lane, a, du, "", raw_cat(e->kind));
			if (sl && e->name < nstr) {
				if (!noff[e->name]) {
					size_t len = 0;
					const char *nm = pt_strtab_get(st->strs, e->name, &len);
					noff[e->name] = w->names.len + 1;
					pt_sb_add(&w->names, nm ? nm : "", nm ? len : 0);
					pt_sb_addc(&w->names, 0);
				}
				sl->oname = noff[e->name] - 1;
			}
			continue;
		}
		r = cur[e->lane] ? &run[cur[e->lane] - 1] : NULL;
		if (r && a - r->b <= (double)thr / 1e3) {
			r->b = fmax(r->b, a + du);
			r->n++;
			continue;
		}
		if (X_GROW(run, rcap, nr + 1))
			goto oom;
		run[nr].lane = e->lane;
		run[nr].a = a;
		run[nr].b = a + du;
		run[nr].n = 1;
		cur[e->lane] = (uint32_t)++nr;
	}
	if (nr > keep) {
		/* Close the runs' shortest gaps: the (nr - keep)-th shortest is
		 * the new threshold. */
		double g2;
		size_t m = 0, ng = 0;
		qsort(run, nr, sizeof(*run), mrun_cmp);
		gaps = x_malloc(nr * sizeof(*gaps));
		if (!gaps)
			goto oom;
		for (i = 1; i < nr; i++)
			if (run[i].lane == run[i - 1].lane)
				gaps[ng++] = run[i].a - run[i - 1].b;
		g2 = ng >= nr - keep ? pt_stats_select(gaps, ng, nr - keep - 1) : INFINITY;
		for (i = 0; i < nr; i++) {
			if (m && run[i].lane == run[m - 1].lane && run[i].a - run[m - 1].b <= g2 &&
			    nr - (i - m) > keep) {
				run[m - 1].b = fmax(run[m - 1].b, run[i].b);
				run[m - 1].n += run[i].n;
				continue;
			}
			run[m++] = run[i];
		}
		nr = m;
	}
	for (i = 0; i < nr; i++)
		name_slice(w, add(w, w->pid[k], T_RAW + (int64_t)run[i].lane, run[i].a,
				  run[i].b - run[i].a, NULL, "raw merged"),
			   "%lld short events", (long long)run[i].n);
	for (l = 0; l < st->nlanes; l++) {
		const pt_lane *ln = &st->lanes[l];
		const char *tn = ln->name ? pt_strtab_get(st->strs, ln->name, NULL) : NULL;
		char buf[300];
		if (ln->gpu)
			snprintf(buf, sizeof(buf), "raw: GPU %lld stream %lld", (long long)ln->pid,
				 (long long)ln->tid);
		else
			snprintf(buf, sizeof(buf), "raw: thread %lld%s%s", (long long)ln->tid,
				 tn ? " " : "", tn ? tn : "");
		put_meta_to(meta, "thread_name", w->pid[k], T_RAW + (int64_t)l, "name", buf, 0);
		put_meta_to(meta, "thread_sort_index", w->pid[k], T_RAW + (int64_t)l, "sort_index",
			    NULL, (long long)(T_RAW + l));
	}
	goto out;
oom:
	w->oom = 1;
out:
	x_free(noff);
	x_free(gaps);
	x_free(cur);
	x_free(run);
	x_free(d);
}

/* ---- the file ------------------------------------------------------------ */

struct pt_tlw {
	tw w;
	char *generator;       /* owned */
	double lo, hi;         /* the windows' extent on the job clock */
	size_t budget;         /* raw slices per worker */
	pt_sb *rawmeta;        /* per worker: its raw lanes' names, added with them */
};

/* Deflate what w->out holds into gz and empty w->out; finish: end the
 * stream.  Level 1: 1,000 workers' 5.9 MB of JSON deflate in 0.05 s to
 * 0.55 MB, level 6 in 0.10 s to 0.42 MB (gzip -1 / -6, same bytes); the
 * file is written on the master's critical path.  In pieces of about
 * 1 MiB, so that the JSON of 2 M raw slices (~200 MB) is never whole. */
static int drain(tw *w, z_stream *z, pt_sb *gz, int finish)
{
	int rc = Z_OK;

	z->next_in = (Bytef *)w->out.buf;
	z->avail_in = (uInt)w->out.len;
	for (;;) {
		if (gz->cap - gz->len < 65536 && X_GROW(gz->buf, gz->cap, gz->len + 65536))
			return -1;
		z->next_out = (Bytef *)gz->buf + gz->len;
		z->avail_out = (uInt)(gz->cap - gz->len);
		rc = deflate(z, finish ? Z_FINISH : Z_NO_FLUSH);
		gz->len = gz->cap - z->avail_out;
		if (rc == Z_STREAM_ERROR)
			return -1;
		if (finish ? rc == Z_STREAM_END : z->avail_in == 0 && z->avail_out > 0)
			break;
	}
	w->out.len = 0;
	return 0;
}

pt_tlw *pt_tlw_new(const pt_report *r, const char *const *ids, size_t nids,
		   const pt_tl_write_options *opt, pt_error *err)
{
	const pt_timeline *t = pt_report_timeline(r);
	pt_tlw *x = NULL;
	tw *w;
	size_t k, i, nmatch = 0;
	int unique = 1;

	if (!t) {
		pt_error_set(err, PT_EINVAL, -1, "the report has no timeline");
		return NULL;
	}
	x = x_calloc(1, sizeof(*x));
	if (!x)
		goto oom;
	x->lo = INFINITY;
	x->hi = -INFINITY;
	w = &x->w;
	w->r = r;
	w->t = t;
	w->pid = x_malloc((t->nw ? t->nw : 1) * sizeof(*w->pid));
	x->rawmeta = x_calloc(t->nw ? t->nw : 1, sizeof(*x->rawmeta));
	if (!w->pid || !x->rawmeta)
		goto oom;
	/* pid = rank + 1 when the ranks are known and distinct (rank 0 would be
	 * pid 0, the kernel's idle task to some viewers), else position + 1. */
	for (k = 0; k < t->nw; k++)
		if (t->w[k].s->rank < 0 || (k && t->w[k].s->rank == t->w[k - 1].s->rank))
			unique = 0;
	for (k = 0; k < t->nw; k++)
		w->pid[k] = unique ? t->w[k].s->rank + 1 : (int64_t)k + 1;
	for (k = 0; k < t->nw; k++) {
		worker_slices(w, k, &x->lo, &x->hi);
		span_slices(w, k);
	}
	instance_slices(w);
	if (t->nw)
		finding_slices(w, x->lo, x->hi);
	if (w->oom)
		goto oom;
	/* Raw events: each worker's trace gets an equal share of the bound. */
	for (i = 0; i < nids; i++) {
		size_t m = 0;
		if (ids[i])
			pt_tl_find_worker(t, ids[i], &m);
		nmatch += m;
	}
	x->budget = opt && opt->max_raw_events ? opt->max_raw_events : DEFAULT_RAW;
	x->budget = nmatch ? x->budget / nmatch : x->budget;
	if (opt && opt->generator && !(x->generator = x_strndup(opt->generator, strlen(opt->generator))))
		goto oom;
	return x;
oom:
	pt_tlw_free(x);
	pt_error_set(err, PT_ENOMEM, -1, "out of memory making the timeline");
	return NULL;
}

int pt_tlw_add_raw(pt_tlw *x, const char *id, const pt_store *st)
{
	const pt_timeline *t = x->w.t;
	size_t m = 0, at = st && id ? pt_tl_find_worker(t, id, &m) : 0;
	int oom = 0;

	for (size_t j = at; j < at + m; j++) {
		uint32_t k = t->by_worker[j];
		raw_slices(&x->w, k, st, x->budget, &x->rawmeta[k]);
		oom |= x->rawmeta[k].oom;
	}
	return oom || x->w.oom || x->w.names.oom ? PT_ENOMEM : PT_OK;
}

int pt_tlw_finish(pt_tlw *x, const char *path, pt_error *err)
{
	tw *w = &x->w;
	const pt_timeline *t = w->t;
	const char *gen;
	z_stream z;
	int zinit = 0, rc;
	pt_sb gz = {0};
	size_t k, i;
	double mn = 0;

	pt_error_subject(err, path);
	memset(&z, 0, sizeof(z));
	gen = x->generator ? x->generator : "perftracker";
	pt_sb_adds(&w->out, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":");
	pt_sb_add_json_str(&w->out, gen, strlen(gen));
	pt_sb_adds(&w->out, ",\"clock\":");
	{
		char buf[600];
		snprintf(buf, sizeof(buf), "us on %s's clock from its window start, lockstep offsets "
			 "applied, plus base_us", t->nw ? t->w[t->ref].id : "");
		pt_sb_add_json_str(&w->out, buf, strlen(buf));
	}
	pt_sb_adds(&w->out, "},\"traceEvents\":[\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":");
	pt_sb_add_i64(&w->out, FINDINGS_PID);
	pt_sb_adds(&w->out, ",\"tid\":0,\"args\":{\"name\":\"PerfTracker findings\"}}");
	put_meta(w, "process_sort_index", FINDINGS_PID, 0, "sort_index", NULL, -1);
	for (i = 0; i < t->nf; i++) {
		char buf[64];
		snprintf(buf, sizeof(buf), "finding %zu", t->f[i].index + 1);
		put_meta(w, "thread_name", FINDINGS_PID, (int64_t)t->f[i].index + 1, "name", buf, 0);
	}
	for (k = 0; k < t->nw; k++) {
		const pt_tl_worker *y = &t->w[k];
		const pt_summary *s = y->s;
		char buf[600];
		size_t ch;
		pt_tl_label(y, buf, sizeof(buf) - 16);
		if (!y->aligned)
			strcat(buf, ", not aligned");
		put_meta(w, "process_name", w->pid[k], 0, "name", buf, 0);
		put_meta(w, "process_sort_index", w->pid[k], 0, "sort_index", NULL, (long long)k);
		put_meta(w, "thread_name", w->pid[k], T_STEPS, "name", "steps", 0);
		put_meta(w, "thread_name", w->pid[k], T_SPANS, "name", "main thread", 0);
		put_meta(w, "thread_name", w->pid[k], T_GPU, "name", "GPU compute", 0);
		put_meta(w, "thread_name", w->pid[k], T_LATE, "name", "lockstep: late (it came last)", 0);
		put_meta(w, "thread_name", w->pid[k], T_WAIT, "name", "lockstep: waits for the last", 0);
		put_meta(w, "thread_name", w->pid[k], T_SLOW, "name", PT_KEY_SLOW_STEPS, 0);
		for (ch = 0; ch < s->ncoll_chans; ch++) {
			long chn;
			int gpu = pt_commkind_chan_parse(s->coll_chans[ch], &chn) == PT_CHAN_GPU;
			int64_t tid = (gpu ? T_CHAN : 2 * T_CHAN) + chn;
			snprintf(buf, sizeof(buf), "collectives %s", s->coll_chans[ch]);
			put_meta(w, "thread_name", w->pid[k], tid, "name", buf, 0);
		}
		pt_sb_add(&w->out, x->rawmeta[k].buf, x->rawmeta[k].len);
		pt_sb_free(&x->rawmeta[k]);
	}
	if (w->oom)
		goto oom;
	make_nested(w);
	for (i = 0; i < w->n; i++)
		mn = fmin(mn, w->v[i].ts);
	w->base = mn < 0 ? -mn : 0;
	if (deflateInit2(&z, 1, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		goto oom;
	zinit = 1;
	w->z = &z;
	w->gz = &gz;
	put_slices(w);
	pt_sb_adds(&w->out, "\n]}\n");
	if (w->oom || w->out.oom || w->args.oom || w->names.oom || drain(w, &z, &gz, 1))
		goto oom;
	rc = pt_file_write_atomic(path, gz.buf, gz.len, 0644, PT_FILE_DURABLE, err);
	goto out;
oom:
	rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory writing the timeline");
out:
	if (zinit)
		deflateEnd(&z);
	pt_sb_free(&gz);
	pt_tlw_free(x);
	return rc;
}

void pt_tlw_free(pt_tlw *x)
{
	if (!x)
		return;
	for (size_t k = 0; x->rawmeta && k < x->w.t->nw; k++)
		pt_sb_free(&x->rawmeta[k]);
	x_free(x->rawmeta);
	x_free(x->generator);
	pt_sb_free(&x->w.out);
	pt_sb_free(&x->w.args);
	pt_sb_free(&x->w.names);
	x_free(x->w.pid);
	x_free(x->w.v);
	x_free(x);
}

int pt_timeline_write(const pt_report *r, const pt_tl_raw *raw, size_t nraw,
		      const pt_tl_write_options *opt, const char *path, pt_error *err)
{
	const char **ids = NULL;
	pt_tlw *x = NULL;
	size_t i;
	int rc;

	pt_error_subject(err, path);
	ids = x_calloc(nraw ? nraw : 1, sizeof(*ids));
	if (!ids)
		return pt_error_set(err, PT_ENOMEM, -1, "out of memory writing the timeline");
	for (i = 0; i < nraw; i++)
		ids[i] = raw[i].st ? raw[i].id : NULL;
	x = pt_tlw_new(r, ids, nraw, opt, err);
	if (!x) {
		rc = err ? err->code : PT_ENOMEM;
		goto out;
	}
	for (i = 0; i < nraw; i++)
		if (pt_tlw_add_raw(x, raw[i].id, raw[i].st)) {
			pt_tlw_free(x);
			rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory writing the timeline");
			goto out;
		}
	rc = pt_tlw_finish(x, path, err);
out:
	x_free(ids);
	return rc;
}
