/*
 * pipeline.c - worker summaries to a written report (see pipeline.h): the
 * master's last stage, shared by `diagnose`, `analyze` and the trigger.
 * An unreadable summary is a failed worker in the report, never the end
 * of the run; no readable worker at all is an error.
 */
#include "pipeline.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../analysis/digest.h"
#include "../report/timeline.h"
#include "../trace/any.h"
#include "../util/file.h"
#include "../util/hash.h"
#include "../util/pool.h"
#include "../util/clock.h"
#include "../util/xalloc.h"

void pt_pipeline_options_default(pt_pipeline_options *o)
{
	memset(o, 0, sizeof(*o));
	pt_diag_options_default(&o->diag);
	o->text = PT_PIPELINE_TEXT;
	o->max_findings = SIZE_MAX;
	o->timeline = 1;
	o->digest_min = PT_PIPELINE_DIGEST_MIN;
}

/* fn(ctx, i) for i in [0, n): on o->parallel's threads when it has one
 * and there is more than one, else here. */
static void run_all(const pt_pipeline_options *o, size_t n, void (*fn)(void *ctx, size_t i),
		    void *ctx)
{
	if (o->parallel && n > 1)
		o->parallel(n, o->jobs, fn, ctx);
	else
		for (size_t i = 0; i < n; i++)
			fn(ctx, i);
}

typedef struct readjob {
	char *const *paths;
	pt_pipeline_summaries *set;
	int digests;      /* look for a digest beside each summary */
	int oom;
} readjob;

/* s[i]'s digest when one lies beside paths[i] and reads as one; NULL
 * otherwise (no digest, or one that cannot be used: the full summary is
 * read instead, whatever is wrong with the digest). */
static pt_summary *read_digest(readjob *j, size_t i)
{
	char dpath[4096];
	pt_summary *d;
	pt_error err;

	if (pt_digest_path(j->paths[i], dpath, sizeof(dpath)) || access(dpath, R_OK))
		return NULL;
	pt_error_clear(&err);
	/* slim: a digest's patterns in PT_PATTERN_HOT bytes (issue 33) */
	d = pt_summary_read_file_slim(dpath, j->set->keys, &err);
	if (d && (!d->digest_of || d->error)) {
		pt_summary_free_shared(d);
		d = NULL;
	}
	if (d && !(j->set->full[i] = x_strndup(j->paths[i], strlen(j->paths[i])))) {
		pt_summary_free_shared(d);
		d = NULL;
		j->oom = 1;
	}
	return d;
}

static void read_one(void *ctx, size_t i)
{
	readjob *j = ctx;
	pt_pipeline_summaries *set = j->set;
	pt_error err;
	char buf[1024];

	pt_error_clear(&err);
	if (j->digests && (set->s[i] = read_digest(j, i)))
		return;
	set->s[i] = pt_summary_read_file_shared(j->paths[i], set->keys, &err);
	if (set->s[i])
		return;
	/* The report's "error" names the problem; the path is in "file". */
	err.subject[0] = 0;
	pt_error_format(&err, buf, sizeof(buf));
	set->s[i] = pt_summary_failed(j->paths[i], buf[0] ? buf : "unreadable summary");
	set->msg[i] = x_strndup(buf, strlen(buf));
	if (!set->s[i] || !set->msg[i])
		j->oom = 1;
}

int pt_pipeline_read(char *const *paths, size_t n, const pt_pipeline_options *o,
		     pt_pipeline_summaries *out, pt_error *err)
{
	readjob j = { paths, out, 0, 0 };
	double t0;

	memset(out, 0, sizeof(*out));
	out->s = x_calloc(n ? n : 1, sizeof(*out->s));
	out->msg = x_calloc(n ? n : 1, sizeof(*out->msg));
	out->full = x_calloc(n ? n : 1, sizeof(*out->full));
	out->keys = pt_summary_keys_new();
	if (!out->s || !out->msg || !out->full || !out->keys)
		return pt_error_set(err, PT_ENOMEM, -1, "out of memory");
	out->n = n;
	j.digests = o->digest_min != SIZE_MAX && n >= o->digest_min;
	t0 = pt_clock_mono();
	run_all(o, n, read_one, &j);
	out->seconds = pt_clock_mono() - t0;
	if (j.oom)
		return pt_error_set(err, PT_ENOMEM, -1, "out of memory reading summaries");
	for (size_t i = 0; i < n; i++)
		out->ndigest += out->full[i] != NULL;
	return pt_pipeline_focus(o, out, err);
}

void pt_pipeline_summaries_free(pt_pipeline_summaries *set)
{
	for (size_t i = 0; i < set->n; i++) {
		if (set->s)
			pt_summary_free_shared(set->s[i]);
		if (set->msg)
			x_free(set->msg[i]);
		if (set->full)
			x_free(set->full[i]);
	}
	pt_summary_keys_free(set->keys);
	x_free(set->full);
	x_free(set->msg);
	x_free(set->s);
	memset(set, 0, sizeof(*set));
}

/* ---- the second phase ------------------------------------------------------ */

typedef struct fulljob {
	pt_pipeline_summaries *set;
	const size_t *sel;
	pt_summary **got;
	char **why;
} fulljob;

static void read_full(void *ctx, size_t k)
{
	fulljob *j = ctx;
	size_t i = j->sel[k];
	pt_error err;
	char buf[1024];

	pt_error_clear(&err);
	j->got[k] = pt_summary_read_file_shared(j->set->full[i], j->set->keys, &err);
	if (!j->got[k]) {
		err.subject[0] = 0;
		pt_error_format(&err, buf, sizeof(buf));
		j->why[k] = x_strndup(buf, strlen(buf));
	}
}

/* Read the full summaries of set->full[sel[0..nsel)] in place of their
 * digests, in parallel.  One that cannot be read leaves its digest, and
 * msg[] says why.  PT_ENOMEM. */
static int read_selected(const pt_pipeline_options *o, pt_pipeline_summaries *set,
			 const size_t *sel, size_t nsel, pt_error *err)
{
	fulljob j = { set, sel, NULL, NULL };
	size_t i, k;
	int rc = PT_OK;

	j.got = x_calloc(nsel ? nsel : 1, sizeof(*j.got));
	j.why = x_calloc(nsel ? nsel : 1, sizeof(*j.why));
	if (!j.got || !j.why) {
		rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
		goto out;
	}
	run_all(o, nsel, read_full, &j);
	for (k = 0; k < nsel; k++) {
		i = sel[k];
		if (!j.got[k]) {
			/* The digest stands in; the warning says why. */
			x_free(set->msg[i]);
			set->msg[i] = j.why[k];
			j.why[k] = NULL;
			continue;
		}
		pt_summary_free_shared(set->s[i]);
		set->s[i] = j.got[k];
		j.got[k] = NULL;
		x_free(set->full[i]);
		set->full[i] = NULL;
		set->ndigest--;
		set->nfull_read++;
	}
out:
	for (k = 0; j.got && k < nsel; k++) {
		pt_summary_free_shared(j.got[k]);
		x_free(j.why[k]);
	}
	x_free(j.why);
	x_free(j.got);
	return rc;
}

/* Keys already resolved, by address: the digests' keys are interned in the
 * set's key table, so a job's few hundred keys recur 100,000 times
 * (formatting and comparing each one was 7% of a 100,000-worker run). */
typedef struct kmemo {
	pt_hmap map;
	struct { const char *k, *t; } *v;
} kmemo;

#define MEMO_OOM ((const char *)1)

/* The text of digest key k (NULL: none, or k is no digest key). */
static const char *resolve(const pt_hmap *map, const char **text, kmemo *m, size_t *n,
			   size_t *cap, const char *k)
{
	uint64_t h = pt_hash_mix(0, (uint64_t)(uintptr_t)k);
	size_t it = 0;
	uint32_t v;
	const char *t = NULL;
	char dk[PT_DIGEST_KEY_LEN + 1];

	while ((v = pt_hmap_next(&m->map, h, &it)) != PT_HMAP_NONE)
		if (m->v[v].k == k)
			return m->v[v].t;
	if (pt_digest_is_key(k)) {
		/* The same hash of two full keys would be a collision of the
		 * 64-bit hash: the first one wins. */
		it = 0;
		while ((v = pt_hmap_next(map, pt_hash_words(k, PT_DIGEST_KEY_LEN, 0), &it)) !=
		       PT_HMAP_NONE) {
			pt_digest_key(text[v], dk);
			if (!strcmp(dk, k)) {
				t = text[v];
				break;
			}
		}
	}
	if (X_GROW(m->v, *cap, *n + 1) || pt_hmap_put(&m->map, h, (uint32_t)*n))
		return MEMO_OOM;
	m->v[*n].k = k;
	m->v[(*n)++].t = t;
	return t;
}

/* Give the digests' hashed keys the text of the full summaries' keys:
 * every key of a full summary is hashed once.  Returns the keys left
 * hashed (a function on no full summary read), or -1 out of memory. */
static long name_keys(pt_pipeline_summaries *set)
{
	pt_hmap map = { 0 };
	kmemo memo = { { 0 }, NULL };
	const char **text = NULL;
	size_t ntext = 0, cap = 0, i, p, nmemo = 0, mcap = 0;
	long open = 0;
	char dk[PT_DIGEST_KEY_LEN + 1];

	for (i = 0; i < set->n; i++) {
		const pt_summary *s = set->s[i];

		if (set->full[i] || s->error)
			continue;
		for (p = 0; p < s->npatterns; p++) {
			uint64_t h;
			size_t it = 0;
			uint32_t v;

			pt_digest_key(pt_summary_pat(s, p)->key, dk);
			h = pt_hash_words(dk, PT_DIGEST_KEY_LEN, 0);
			while ((v = pt_hmap_next(&map, h, &it)) != PT_HMAP_NONE &&
			       strcmp(text[v], pt_summary_pat(s, p)->key))
				;
			if (v != PT_HMAP_NONE)
				continue;
			if (X_GROW(text, cap, ntext + 1) || pt_hmap_put(&map, h, (uint32_t)ntext)) {
				open = -1;
				goto out;
			}
			text[ntext++] = pt_summary_pat(s, p)->key;
		}
	}
	for (i = 0; i < set->n; i++) {
		pt_summary *s = set->s[i];

		if (!set->full[i])
			continue;
		for (p = 0; p < s->npatterns; p++) {
			const char *k = pt_summary_pat(s, p)->key;
			const char *t = resolve(&map, text, &memo, &nmemo, &mcap, k);

			if (t == MEMO_OOM) {
				open = -1;
				goto out;
			}
			if (t)
				pt_summary_pat(s, p)->key = (char *)t;
			else if (pt_digest_is_key(k))
				open++;
		}
	}
out:
	pt_hmap_free(&memo.map);
	x_free(memo.v);
	pt_hmap_free(&map);
	x_free(text);
	return open;
}

int pt_pipeline_focus(const pt_pipeline_options *o, pt_pipeline_summaries *set, pt_error *err)
{
	pt_diag_options d = o->diag;
	unsigned char *sus = NULL;
	size_t *sel = NULL, nsel = 0, i, k, step;
	pt_report *rep = NULL;
	double t0 = pt_clock_mono();
	long open;
	int rc = PT_OK;

	if (!set->ndigest)
		return PT_OK;
	sus = x_calloc(set->n, 1);
	sel = x_malloc(set->n * sizeof(*sel));
	if (!sus || !sel) {
		rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
		goto out;
	}
	/* A sample of the job in full first: the per-call times of the
	 * kernels the digests leave out are compared over it, and a
	 * straggler's late span with it (docs/diagnose.md "Two phases"). */
	step = set->ndigest / PT_PIPELINE_SAMPLE ? set->ndigest / PT_PIPELINE_SAMPLE : 1;
	for (i = k = 0; i < set->n; i++)
		if (set->full[i] && k++ % step == 0)
			sel[nsel++] = i;
	if ((rc = read_selected(o, set, sel, nsel, err)))
		goto out;
	set->nsample = set->nfull_read;
	d.suspect = sus;
	if (!(rep = pt_diagnose(set->s, set->n, &d, err))) {
		rc = err ? err->code : PT_ENOMEM;
		goto out;
	}
	pt_report_free(rep);
	for (i = nsel = 0; i < set->n; i++) {
		set->nsuspect += sus[i];
		if (sus[i] && set->full[i])
			sel[nsel++] = i;
	}
	if ((rc = read_selected(o, set, sel, nsel, err)))
		goto out;
	if ((open = name_keys(set)) < 0) {
		rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
		goto out;
	}
	set->nkeys_open = (size_t)open;
out:
	x_free(sel);
	x_free(sus);
	set->focus_seconds = pt_clock_mono() - t0;
	return rc;
}

static void render(const pt_pipeline_options *o, const pt_report *rep, pt_sb *sb)
{
	if (o->text == PT_PIPELINE_REPORT) {
		pt_report_json(pt_report_root_c(rep), 0, sb);
		pt_sb_addc(sb, '\n');
	} else if (o->text == PT_PIPELINE_SEED_JSON) {
		pt_report_text_json(rep, o->max_findings == SIZE_MAX ? 50 : o->max_findings, sb);
	} else if (o->text == PT_PIPELINE_TEXT) {
		pt_text_opts to;

		pt_text_opts_default(&to);
		if (o->max_findings != SIZE_MAX)
			to.max_findings = o->max_findings;
		if (o->width)
			to.width = o->width;
		to.page_line = 1;
		to.outdir = o->outdir;
		pt_report_text_people(rep, &to, sb);
	}
}

/* The raw traces read in parallel, a batch at a time: st[i] for
 * paths[sel[base + i]], ok[i] whether it could be read, msg[i] why not. */
typedef struct rawjob {
	char *const *paths;
	const size_t *sel;
	size_t base;
	pt_store *st;
	unsigned char *ok;
	char (*msg)[PT_ERROR_MSG_MAX];
} rawjob;

static void read_raw(void *ctx, size_t i)
{
	rawjob *j = ctx;
	pt_error e;

	pt_error_clear(&e);
	j->ok[i] = 0;
	j->msg[i][0] = 0;
	if (pt_store_init(&j->st[i]) != PT_OK) {
		snprintf(j->msg[i], sizeof(j->msg[i]), "out of memory");
		return;
	}
	if (pt_trace_read_any(j->paths[j->sel[j->base + i]], &j->st[i], NULL, &e) != PT_OK) {
		snprintf(j->msg[i], sizeof(j->msg[i]), "%s", e.msg);
		pt_store_free(&j->st[i]);
		return;
	}
	j->ok[i] = 1;
}

/* The raw traces to read, by the rule of pt_pipeline_options.max_raw_bytes. */
typedef struct rawpick {
	size_t i, k;      /* the trace, its worker */
	int prio;         /* 0 a finding names it, 1 straggler, 2 reference, 3 other */
	uint64_t bytes;
} rawpick;

static int by_prio(const void *a, const void *b)
{
	const rawpick *x = a, *y = b;

	if (x->prio != y->prio)
		return x->prio - y->prio;
	if (x->k != y->k)
		return x->k < y->k ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static int by_index(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/* sel[0..*nsel): the indices into o->raw to read, ascending; res->raw_*
 * set.  PT_ENOMEM. */
static int pick_raw(const pt_pipeline_options *o, const pt_timeline *t, size_t *sel,
		    size_t *nsel, pt_pipeline_result *res)
{
	uint64_t bound = o->max_raw_bytes ? o->max_raw_bytes : PT_PIPELINE_RAW_BYTES;
	int *prio = x_malloc((t->nw ? t->nw : 1) * sizeof(*prio));
	rawpick *c = x_malloc((o->nraw ? o->nraw : 1) * sizeof(*c));
	size_t i, k, n = 0;
	int rc = PT_ENOMEM;

	*nsel = 0;
	if (!prio || !c)
		goto out;
	for (k = 0; k < t->nw; k++)
		prio[k] = t->w[k].straggler ? 1 : k == t->ref ? 2 : 3;
	for (i = 0; i < t->nf; i++)
		for (k = 0; k < t->f[i].nw; k++)
			prio[t->f[i].w[k]] = 0;
	for (i = 0; i < o->nraw; i++) {
		size_t m, at = pt_tl_find_worker(t, pt_summary_worker_name(o->raw[i]), &m);
		struct stat sb;
		if (!m)
			continue;  /* no worker's: nothing to draw it in */
		c[n].i = i;
		c[n].k = t->by_worker[at];
		c[n].prio = prio[c[n].k];
		/* One that cannot be stat'ed still goes in, to be read and
		 * named in the warning. */
		c[n].bytes = stat(o->raw[i], &sb) ? 0 : (uint64_t)sb.st_size;
		res->raw_named_bytes += c[n].bytes;
		n++;
	}
	res->raw_named = n;
	qsort(c, n, sizeof(*c), by_prio);
	for (i = 0; i < n; i++)
		if (!*nsel || (res->raw_used_bytes <= bound &&
			       c[i].bytes <= bound - res->raw_used_bytes)) {
			sel[(*nsel)++] = c[i].i;
			res->raw_used_bytes += c[i].bytes;
		}
	res->raw_used = *nsel;
	qsort(sel, *nsel, sizeof(*sel), by_index);
	rc = PT_OK;
out:
	x_free(c);
	x_free(prio);
	return rc;
}

int pt_pipeline_timeline(const pt_pipeline_options *o, const pt_report *rep,
			 pt_pipeline_result *res, pt_error *err)
{
	double t0 = pt_clock_mono();
	const pt_timeline *t = pt_report_timeline(rep);
	rawjob j = { o->raw, NULL, 0, NULL, NULL, NULL };
	pt_tl_write_options wo = { o->max_raw_events, o->generator };
	const char **ids = NULL;
	size_t *sel = NULL, nsel = 0;
	pt_tlw *tw = NULL;
	char path[4096];
	size_t i, batch = !o->parallel ? 1 : o->jobs > 0 ? (size_t)o->jobs : (size_t)pt_pool_cpus();
	int rc;

	if ((size_t)snprintf(path, sizeof(path), "%s/PerfDisplay", o->outdir) >= sizeof(path) - 32) {
		pt_error_subject(err, o->outdir);
		return pt_error_set(err, PT_EINVAL, -1, "path too long");
	}
	if ((rc = pt_file_mkdirs(path, 0777, NULL, NULL, err)))
		return rc;
	strcat(path, "/timeline.json.gz");
	pt_error_subject(err, path);
	if (!t)
		return pt_error_set(err, PT_EINVAL, -1, "the report has no timeline");
	ids = x_calloc(o->nraw ? o->nraw : 1, sizeof(*ids));
	sel = x_calloc(o->nraw ? o->nraw : 1, sizeof(*sel));
	if (!ids || !sel || pick_raw(o, t, sel, &nsel, res)) {
		rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory reading raw traces");
		goto out;
	}
	if (batch > nsel)
		batch = nsel ? nsel : 1;
	j.sel = sel;
	j.st = x_calloc(batch, sizeof(*j.st));
	j.ok = x_calloc(batch, 1);
	j.msg = x_calloc(batch, sizeof(*j.msg));
	if (!j.st || !j.ok || !j.msg) {
		rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory reading raw traces");
		goto out;
	}
	for (i = 0; i < nsel; i++)
		ids[i] = pt_summary_worker_name(o->raw[sel[i]]);
	if (!(tw = pt_tlw_new(rep, ids, nsel, &wo, err))) {
		rc = err ? err->code : PT_ENOMEM;
		goto out;
	}
	/* A batch of as many traces as there are threads, each store freed
	 * once its events are in: 8 traces of 200 MB held 559 MiB when every
	 * store lived until the file was written (docs/bench.md). */
	for (j.base = 0; j.base < nsel; j.base += batch) {
		size_t nb = nsel - j.base < batch ? nsel - j.base : batch;
		run_all(o, nb, read_raw, &j);
		for (i = 0; i < nb; i++) {
			const char *p = o->raw[sel[j.base + i]];
			if (!j.ok[i]) {
				if (!res->warning && asprintf(&res->warning, "'%s' left out of the "
							      "timeline: %s", p, j.msg[i]) < 0)
					res->warning = NULL;
				continue;
			}
			rc = pt_tlw_add_raw(tw, pt_summary_worker_name(p), &j.st[i]);
			pt_store_free(&j.st[i]);
			j.ok[i] = 0;
			if (rc) {
				rc = pt_error_set(err, rc, -1, "out of memory adding '%s'", p);
				goto out;
			}
		}
	}
	rc = pt_tlw_finish(tw, path, err);
	tw = NULL;
out:
	for (i = 0; j.ok && i < batch; i++)
		if (j.ok[i])
			pt_store_free(&j.st[i]);
	pt_tlw_free(tw);
	x_free(j.msg);
	x_free(j.ok);
	x_free(j.st);
	x_free(sel);
	x_free(ids);
	res->timeline_seconds = pt_clock_mono() - t0;
	return rc;
}

int pt_pipeline_report(const pt_pipeline_options *o, pt_summary *const *s, size_t n,
		       pt_pipeline_result *res, pt_error *err)
{
	double t0 = pt_clock_mono(), c0 = pt_clock_thread_cpu() /* the diagnosis is single-threaded */, t1;
	pt_report *rep = NULL;
	size_t ok = 0;
	int rc;

	memset(res, 0, sizeof(*res));
	for (size_t i = 0; i < n; i++)
		ok += s[i] && !s[i]->error;
	if (!ok)
		return pt_error_set(err, PT_EINVAL, -1, "no worker could be analysed (%zu input%s, "
				    "all unreadable)", n, n == 1 ? "" : "s");
	rep = pt_diagnose(s, n, &o->diag, err);
	if (!rep)
		return err ? err->code : PT_ENOMEM;
	if (o->hook)
		o->hook(rep, o->hook_ctx);
	t1 = pt_clock_mono();
	res->diagnose_wall = t1 - t0;
	res->diagnose_cpu = pt_clock_thread_cpu() - c0;
	if (o->outdir && (rc = o->write_dir(rep, o->outdir, err)))
		goto out;
	/* The report stands without its timeline: a file that cannot be
	 * written is a warning. */
	if (o->outdir && o->timeline) {
		pt_error te;
		pt_error_clear(&te);
		if (pt_pipeline_timeline(o, rep, res, &te)) {
			char b[PT_ERROR_MSG_MAX + 600];
			free(res->warning);
			res->warning = NULL;
			if (asprintf(&res->warning, "the timeline was not written: %s",
				     pt_error_format(&te, b, sizeof(b))) < 0)
				res->warning = NULL;
		}
	}
	render(o, rep, &res->text);
	rc = res->text.oom ? pt_error_set(err, PT_ENOMEM, -1, "out of memory writing the text "
					  "report") : PT_OK;
	res->write_seconds = pt_clock_mono() - t1;
out:
	pt_report_free(rep);
	return rc;
}
