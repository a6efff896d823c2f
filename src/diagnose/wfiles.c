/*
 * wfiles.c - several files of one worker read as one worker (wfiles.h,
 * docs/input.md "A folder torch wrote"): name keys, the grouping and its
 * checks (another world_size, a clock hours away, a rank twice, files of
 * one worker that overlap in time), and the merge that takes the time
 * between profiling cycles out of the window: cycle s of every worker is
 * moved back by the same amount (the smallest gap any worker had before
 * it), so the workers' clocks stay as far apart as they were.
 */
#include "wfiles.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../analysis/summary.h"
#include "../trace/any.h"
#include "../util/bsearch.h"
#include "../util/xalloc.h"

#define HOUR_NS 3600000000000LL

static int ends_with(const char *s, size_t n, const char *suf)
{
	size_t m = strlen(suf);

	return n >= m && !memcmp(s + n - m, suf, m);
}

static int put_key(char *key, size_t cap, const char *s, size_t n)
{
	if (!n || n >= cap)
		return 0;
	memcpy(key, s, n);
	key[n] = 0;
	return 1;
}

int pt_wfiles_key(const char *base, char *key, size_t cap)
{
	static const char *const tb[] = { ".pt.trace.json", ".pt.trace.json.gz" };
	size_t n = strlen(base), i;
	int64_t rank;

	if (cap)
		key[0] = 0;
	for (i = 0; i < 2; i++) {
		size_t m, d;
		if (!ends_with(base, n, tb[i]))
			continue;
		/* W.<digits>.pt.trace.json: the key is W */
		m = n - strlen(tb[i]);
		for (d = m; d > 0 && base[d - 1] >= '0' && base[d - 1] <= '9'; d--)
			;
		if (d < m && d > 1 && base[d - 1] == '.')
			return put_key(key, cap, base, d - 1);
	}
	pt_summary_parse_worker_name(base, NULL, 0, &rank, NULL);
	if (rank < 0)
		return 0;
	if (ends_with(base, n, ".json"))
		return put_key(key, cap, base, n - 5);
	if (ends_with(base, n, ".json.gz"))
		return put_key(key, cap, base, n - 8);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int pt_wfiles_needed(char *const *paths, size_t n)
{
	char **k = x_calloc(n ? n : 1, sizeof(*k));
	size_t i, m = 0;
	int dup = 0;

	if (!k)
		return 0;
	for (i = 0; i < n; i++) {
		char key[256];
		if (pt_wfiles_key(pt_summary_worker_name(paths[i]), key, sizeof(key)) &&
		    !(k[m++] = x_strndup(key, strlen(key))))
			goto out;
	}
	qsort(k, m, sizeof(*k), cmp_str);
	for (i = 1; i < m && !dup; i++)
		dup = !strcmp(k[i], k[i - 1]);
out:
	for (i = 0; i < m; i++)
		x_free(k[i]);
	x_free(k);
	return dup;
}

int pt_wfiles_init(pt_wfiles *g, char *const *paths, size_t n, pt_error *err)
{
	memset(g, 0, sizeof(*g));
	g->f = x_calloc(n ? n : 1, sizeof(*g->f));
	g->left = x_calloc(n ? n : 1, sizeof(*g->left));
	g->w = x_calloc(n ? n : 1, sizeof(*g->w));
	g->ix = x_calloc(n ? n : 1, sizeof(*g->ix));
	if (!g->f || !g->left || !g->w || !g->ix) {
		pt_wfiles_free(g);
		return pt_error_set(err, PT_ENOMEM, -1, "out of memory");
	}
	g->nf = n;
	for (size_t i = 0; i < n; i++) {
		g->f[i].path = paths[i];
		g->f[i].worker = SIZE_MAX;
		g->f[i].first_step = INT64_MAX;
		pt_wfiles_key(pt_summary_worker_name(paths[i]), g->f[i].key, sizeof(g->f[i].key));
	}
	return PT_OK;
}

/* f's step span (else its events' span) and its first step number. */
static void span_of(pt_wfile *f)
{
	const pt_store *st = &f->st;
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	size_t i;

	for (i = 0; i < st->nsteps; i++) {
		int64_t e = st->steps[i].ts + st->steps[i].dur;
		lo = st->steps[i].ts < lo ? st->steps[i].ts : lo;
		hi = e > hi ? e : hi;
		if (st->steps[i].number < f->first_step)
			f->first_step = st->steps[i].number;
	}
	for (i = 0; !st->nsteps && i < st->n; i++) {
		int64_t e = st->ev[i].dur > INT64_MAX - st->ev[i].ts ? INT64_MAX
								 : st->ev[i].ts + st->ev[i].dur;
		lo = st->ev[i].ts < lo ? st->ev[i].ts : lo;
		hi = e > hi ? e : hi;
	}
	f->t0 = lo <= hi ? lo : 0;
	f->t1 = lo <= hi ? hi : 0;
}

void pt_wfiles_read(pt_wfiles *g, size_t i)
{
	pt_wfile *f = &g->f[i];
	pt_error e;

	pt_error_clear(&e);
	if (pt_store_init(&f->st)) {
		snprintf(f->msg, sizeof(f->msg), "out of memory");
		return;
	}
	if (pt_trace_read_any(f->path, &f->st, NULL, &e)) {
		snprintf(f->msg, sizeof(f->msg), "%s", e.msg);
		pt_store_free(&f->st);
		return;
	}
	span_of(f);
	f->ok = 1;
}

static void leave_out(pt_wfiles *g, size_t i, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void leave_out(pt_wfiles *g, size_t i, const char *fmt, ...)
{
	va_list ap;

	g->f[i].worker = SIZE_MAX;
	g->left[g->nleft].file = i;
	va_start(ap, fmt);
	vsnprintf(g->left[g->nleft].why, sizeof(g->left[g->nleft].why), fmt, ap);
	va_end(ap);
	g->nleft++;
}

/* Order of the files before grouping: key, rank, start. */
static int by_key_rank_time(const void *a, const void *b, void *ctx)
{
	const pt_wfiles *g = ctx;
	const pt_wfile *x = &g->f[*(const size_t *)a], *y = &g->f[*(const size_t *)b];
	int r = strcmp(x->key, y->key);

	if (r)
		return r;
	if (x->st.rank != y->st.rank)
		return x->st.rank < y->st.rank ? -1 : 1;
	if (x->t0 != y->t0)
		return x->t0 < y->t0 ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* A worker's id: a file's own name when it is alone; for a group of
 * torch's <host>_<pid> files with a rank, <host>_<rank>_<pid> (the name
 * our collector gives a worker), else the key. */
static void name_worker(pt_wfiles *g, pt_wworker *w)
{
	const pt_wfile *f = &g->f[w->files[0]];
	const char *base = pt_summary_worker_name(f->path), *u = strrchr(f->key, '_');
	int64_t rank = f->st.rank;
	int tb = strstr(base, ".pt.trace.json") != NULL;
	int hostpid = tb && u && u > f->key && u[1] && strspn(u + 1, "0123456789") == strlen(u + 1);

	w->grouped_by = rank >= 0 ? "rank+host+pid" : hostpid || !tb ? "host+pid" : "name";
	if (w->nfiles == 1 || !tb)
		snprintf(w->name, sizeof(w->name), "%s", base);
	else if (hostpid && rank >= 0)
		snprintf(w->name, sizeof(w->name), "%.*s_%lld_%s", (int)(u - f->key), f->key,
			 (long long)rank, u + 1);
	else
		snprintf(w->name, sizeof(w->name), "%s", f->key);
}

/* Sort by key, rank, time; one worker per (key, rank) run, its files in
 * time order, a file that overlaps the one before it left out.  Files
 * without a key are a worker each. */
static void cluster(pt_wfiles *g, size_t *ix, size_t n)
{
	size_t i = 0;

	qsort_r(ix, n, sizeof(*ix), by_key_rank_time, g);
	while (i < n) {
		pt_wworker *w = &g->w[g->nw];
		size_t j = i + 1, last;
		const pt_wfile *a = &g->f[ix[i]];

		while (a->key[0] && j < n && !strcmp(g->f[ix[j]].key, a->key) &&
		       g->f[ix[j]].st.rank == a->st.rank)
			j++;
		w->files = &ix[i];  /* compacted below */
		w->nfiles = 0;
		last = SIZE_MAX;
		for (size_t k = i; k < j; k++) {
			pt_wfile *f = &g->f[ix[k]];
			if (last != SIZE_MAX && f->t0 < g->f[last].t1) {
				leave_out(g, ix[k], "overlaps %s, a file of the same worker, in time "
					  "(a copy?)", pt_summary_worker_name(g->f[last].path));
				continue;
			}
			ix[i + w->nfiles++] = ix[k];
			f->worker = g->nw;
			last = ix[k];
		}
		g->nw++;
		i = j;
	}
}

static int by_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Leave out worker k's files, each with the same reason. */
static void drop_worker(pt_wfiles *g, size_t k, const char *why)
{
	for (size_t j = 0; j < g->w[k].nfiles; j++)
		leave_out(g, g->w[k].files[j], "%s", why);
	g->w[k].nfiles = 0;
}

/* The job's world_size (the most workers'), and the median start. */
static int64_t job_world(const pt_wfiles *g)
{
	int64_t best = -1;
	size_t bestn = 0;

	for (size_t k = 0; k < g->nw; k++) {
		int64_t ws = g->f[g->w[k].files[0]].st.world_size;
		size_t c = 0;
		if (ws < 0 || !g->w[k].nfiles)
			continue;
		for (size_t q = 0; q < g->nw; q++)
			c += g->w[q].nfiles && g->f[g->w[q].files[0]].st.world_size == ws;
		if (c > bestn || (c == bestn && ws > best)) {
			best = ws;
			bestn = c;
		}
	}
	return best;
}

static int64_t median_start(const pt_wfiles *g, int64_t *tmp)
{
	size_t m = 0;

	for (size_t k = 0; k < g->nw; k++)
		if (g->w[k].nfiles)
			tmp[m++] = g->f[g->w[k].files[0]].t0;
	if (!m)
		return 0;
	qsort(tmp, m, sizeof(*tmp), by_i64);
	return tmp[m / 2];
}

/* Another job or run: another world_size, a clock an hour or more from
 * the median worker's, a rank that another worker (with more files, or
 * nearer the median) already has. */
static void check_job(pt_wfiles *g, int64_t *tmp)
{
	int64_t ws = job_world(g), med;
	size_t k, q;
	char why[400];

	for (k = 0; k < g->nw; k++) {
		int64_t w = g->w[k].nfiles ? g->f[g->w[k].files[0]].st.world_size : -1;
		if (w >= 0 && ws >= 0 && w != ws) {
			snprintf(why, sizeof(why), "world_size %lld, the other workers' %lld "
				 "(another job?)", (long long)w, (long long)ws);
			drop_worker(g, k, why);
		}
	}
	med = median_start(g, tmp);
	for (k = 0; k < g->nw; k++) {
		int64_t d = g->w[k].nfiles ? g->f[g->w[k].files[0]].t0 - med : 0;
		if (d >= HOUR_NS || d <= -HOUR_NS) {
			snprintf(why, sizeof(why), "its clock is %.1f h %s the other workers' "
				 "(another run?)", (double)(d < 0 ? -d : d) / 3.6e12,
				 d < 0 ? "before" : "after");
			drop_worker(g, k, why);
		}
	}
	for (k = 0; k < g->nw; k++) {
		const pt_wworker *a = &g->w[k];
		int64_t r = a->nfiles ? g->f[a->files[0]].st.rank : -1;
		for (q = 0; r >= 0 && q < g->nw; q++) {
			const pt_wworker *b = &g->w[q];
			int64_t da, db;
			if (q == k || !b->nfiles || g->f[b->files[0]].st.rank != r)
				continue;
			da = llabs(g->f[a->files[0]].t0 - med);
			db = llabs(g->f[b->files[0]].t0 - med);
			if (b->nfiles > a->nfiles || (b->nfiles == a->nfiles && (db < da ||
						       (db == da && q < k)))) {
				snprintf(why, sizeof(why), "rank %lld again, in another process than "
					 "worker %.200s's %zu file%s (another run?)", (long long)r,
					 b->name, b->nfiles, b->nfiles == 1 ? "" : "s");
				drop_worker(g, k, why);
				break;
			}
		}
	}
}

static size_t find_cycle(const int64_t *c, size_t n, int64_t s)
{
	return pt_lower_i64(c, n, s);
}

/* Each file's shift: cycle s (its first step number) of every worker
 * moves back by the sum, over the cycles up to s, of the smallest gap any
 * worker had before that cycle.  PT_ENOMEM. */
static int shifts(pt_wfiles *g)
{
	int64_t *cyc = x_malloc((g->nf ? g->nf : 1) * sizeof(*cyc));
	int64_t *gap = x_malloc((g->nf ? g->nf : 1) * sizeof(*gap));
	size_t nc = 0, k, j, m = 0;
	int rc = PT_ENOMEM;

	if (!cyc || !gap)
		goto out;
	for (k = 0; k < g->nw; k++)
		for (j = 0; g->w[k].nfiles > 1 && j < g->w[k].nfiles; j++)
			if (g->f[g->w[k].files[j]].first_step != INT64_MAX)
				cyc[nc++] = g->f[g->w[k].files[j]].first_step;
	qsort(cyc, nc, sizeof(*cyc), by_i64);
	for (j = 0; j < nc; j++)
		if (!m || cyc[j] != cyc[m - 1])
			cyc[m++] = cyc[j];
	for (j = 0; j < m; j++)
		gap[j] = INT64_MAX;
	for (k = 0; k < g->nw; k++)
		for (j = 1; j < g->w[k].nfiles; j++) {
			const pt_wfile *f = &g->f[g->w[k].files[j]], *p = &g->f[g->w[k].files[j - 1]];
			size_t c;
			int64_t d = f->t0 - p->t1;
			if (f->first_step == INT64_MAX)
				continue;
			c = find_cycle(cyc, m, f->first_step);
			if (d < 0)
				d = 0;
			if (d < gap[c])
				gap[c] = d;
		}
	for (j = 0; j < m; j++)
		gap[j] = (j ? gap[j - 1] : 0) + (gap[j] == INT64_MAX ? 0 : gap[j]);
	for (k = 0; k < g->nw; k++) {
		int64_t sh = 0;
		for (j = 0; g->w[k].nfiles > 1 && j < g->w[k].nfiles; j++) {
			pt_wfile *f = &g->f[g->w[k].files[j]];
			if (f->first_step != INT64_MAX)
				sh = gap[find_cycle(cyc, m, f->first_step)];
			f->shift = sh;
		}
	}
	rc = PT_OK;
out:
	x_free(gap);
	x_free(cyc);
	return rc;
}

int pt_wfiles_group(pt_wfiles *g, pt_error *err)
{
	int64_t *tmp = x_malloc((g->nf ? g->nf : 1) * sizeof(*tmp));
	size_t i, k, n = 0;
	int rc;

	if (!tmp)
		return pt_error_set(err, PT_ENOMEM, -1, "out of memory");
	for (i = 0; i < g->nf; i++)
		if (g->f[i].ok)
			g->ix[n++] = i;
	cluster(g, g->ix, n);
	for (k = 0; k < g->nw; k++)
		name_worker(g, &g->w[k]);
	check_job(g, tmp);
	/* A file that cannot be read, of a worker that has others: left out
	 * (its worker stands); alone, it is a failed worker, as ever. */
	for (i = 0; i < g->nf; i++) {
		if (g->f[i].ok || !g->f[i].key[0])
			continue;
		for (k = 0; k < g->nw; k++)
			if (g->w[k].nfiles && !strcmp(g->f[g->w[k].files[0]].key, g->f[i].key)) {
				leave_out(g, i, "cannot be read: %s", g->f[i].msg);
				break;
			}
	}
	rc = shifts(g) ? pt_error_set(err, PT_ENOMEM, -1, "out of memory") : PT_OK;
	x_free(tmp);
	return rc;
}

int pt_wfiles_merge(const pt_wfiles *g, size_t k, pt_store *out, pt_error *err)
{
	const pt_wworker *w = &g->w[k];

	if (pt_store_init(out))
		return pt_error_set(err, PT_ENOMEM, -1, "out of memory");
	for (size_t j = 0; j < w->nfiles; j++) {
		const pt_wfile *f = &g->f[w->files[j]];
		/* only the steps' own span of each cycle: the window is their union */
		if (pt_store_append(out, &f->st, f->shift, f->t0, f->t1))
			return pt_error_set(err, PT_ENOMEM, -1, "out of memory merging %zu files",
					    w->nfiles);
	}
	return PT_OK;
}

void pt_wfiles_release(pt_wfiles *g, size_t k)
{
	for (size_t j = 0; j < g->w[k].nfiles; j++)
		pt_store_free(&g->f[g->w[k].files[j]].st);
}

void pt_wfiles_free(pt_wfiles *g)
{
	for (size_t i = 0; g->f && i < g->nf; i++)
		pt_store_free(&g->f[i].st);
	x_free(g->f);
	x_free(g->w);
	x_free(g->left);
	x_free(g->ix);
	memset(g, 0, sizeof(*g));
}
