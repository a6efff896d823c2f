/*
 * analyze.c - `perftracker analyze PATH... -o DIR`: find the raw traces
 * (files, or folders searched recursively for *.json / *.json.gz and nsys
 * *.sqlite exports), summarise every one in parallel threads
 * (pt_summary_from_trace) with the hardware samples found beside it
 * (hw_*.json, *.hw.json, hw_*.sqlite; docs/hardware.md), then diagnose them
 * like `perftracker diagnose` (diagnose.c).  The single-host path from
 * traces to report; a trace that cannot be read is one warning line and a
 * failed worker in the report.  A folder torch's tensorboard_trace_handler
 * wrote (several files per worker, one per profiling cycle) is read the
 * grouping way (src/diagnose/wfiles.h): the files on the threads, then
 * each worker's files merged and summarised on the threads.
 */

#include "cli.h"
#include "diagnose.h"
#include "diagnose/wfiles.h"
#include "report/report.h"
#include "analysis/digest.h"
#include "trace/any.h"
#include "util/file.h"
#include "util/pool.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "../report/keys.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cli_usage usage = {
	"analyze",
	"perftracker analyze PATH... [-o DIR] [options]",
	"Summarise every PyTorch profiler trace under PATH (files, or folders searched\n"
	"recursively for *.json and *.json.gz, skipping hidden entries, PerfDisplay folders\n"
	"and *.summary.json), then compare the workers like 'perftracker diagnose'.\n"
	"\n"
	"Nsight Systems exports (*.sqlite) are read as traces too.  Hardware samples\n"
	"(hw_*.json, *.hw.json, hw_*.sqlite) in a trace's folder are joined to it.\n",
	NULL,
};

/* The hardware samples of one folder, loaded once for all its traces. */
typedef struct hwdir {
	char *dir;
	pt_samples *v;
	const pt_samples **p;
	size_t n;
} hwdir;

typedef struct sumjob {
	char **paths;
	pt_summary **s;
	char **msg;
	pt_summary_options sopt;
	hwdir *hw;
	size_t nhw;
	size_t *hw_of;   /* per trace: index into hw, or (size_t)-1 */
	int oom;
} sumjob;

static void summarize_one(void *ctx, size_t i)
{
	sumjob *j = ctx;
	pt_summary_options o = j->sopt;
	pt_error err;
	char buf[1024];

	if (j->hw_of && j->hw_of[i] != (size_t)-1) {
		o.hw = j->hw[j->hw_of[i]].p;
		o.nhw = j->hw[j->hw_of[i]].n;
	}
	pt_error_clear(&err);
	j->s[i] = pt_summary_from_trace(j->paths[i], &o, &err);
	if (j->s[i])
		return;
	err.subject[0] = 0;
	pt_error_format(&err, buf, sizeof(buf));
	j->s[i] = pt_summary_failed(j->paths[i], buf[0] ? buf : "unreadable trace");
	j->msg[i] = x_strndup(buf, strlen(buf));
	if (!j->s[i] || !j->msg[i])
		j->oom = 1;
}

/* ---- several files per worker (src/diagnose/wfiles.h) -------------------- */

/* s's files and what grouped them, from worker w (summary.h). */
static int add_files(pt_summary *s, const pt_wfiles *g, const pt_wworker *w)
{
	if (!(s->files = x_calloc(w->nfiles, sizeof(*s->files))) ||
	    !(s->grouped_by = x_strndup(w->grouped_by, strlen(w->grouped_by))))
		return -1;
	for (s->nfiles = 0; s->nfiles < w->nfiles; s->nfiles++) {
		const char *p = g->f[w->files[s->nfiles]].path;
		if (!(s->files[s->nfiles] = x_strndup(p, strlen(p))))
			return -1;
	}
	x_free(s->file);
	s->file = x_strndup(s->files[0], strlen(s->files[0]));
	return s->file ? 0 : -1;
}

static int left_of(const pt_wfiles *g, size_t i)
{
	for (size_t k = 0; k < g->nleft; k++)
		if (g->left[k].file == i)
			return 1;
	return 0;
}


typedef struct grpjob {
	sumjob *j;
	pt_wfiles *g;
	size_t *of;      /* per summary: a worker (< g->nw) or g->nw + a failed file */
} grpjob;

static void read_file(void *ctx, size_t i)
{
	pt_wfiles_read(ctx, i);
}

static void summarize_worker(void *ctx, size_t i)
{
	grpjob *a = ctx;
	sumjob *j = a->j;
	pt_wfiles *g = a->g;
	pt_summary_options o = j->sopt;
	const pt_wworker *w;
	const pt_wfile *f;
	pt_store merged;
	pt_error err;
	char buf[1024];

	pt_error_clear(&err);
	if (a->of[i] >= g->nw) { /* a file that cannot be read, alone */
		f = &g->f[a->of[i] - g->nw];
		j->s[i] = pt_summary_failed(f->path, f->msg);
		j->msg[i] = x_strndup(f->msg, strlen(f->msg));
		goto done;
	}
	w = &g->w[a->of[i]];
	f = &g->f[w->files[0]];
	if (j->hw_of && j->hw_of[w->files[0]] != (size_t)-1) {
		o.hw = j->hw[j->hw_of[w->files[0]]].p;
		o.nhw = j->hw[j->hw_of[w->files[0]]].n;
	}
	if (w->nfiles == 1) { /* as a file alone is summarised */
		j->s[i] = pt_summary_build(&f->st, f->path, &o, &err);
	} else if (!pt_wfiles_merge(g, a->of[i], &merged, &err)) {
		j->s[i] = pt_summary_build(&merged, w->name, &o, &err);
		if (j->s[i] && add_files(j->s[i], g, w))
			j->oom = 1;
	}
	if (w->nfiles > 1)
		pt_store_free(&merged);
	pt_wfiles_release(g, a->of[i]);
	if (!j->s[i]) {
		err.subject[0] = 0;
		pt_error_format(&err, buf, sizeof(buf));
		j->s[i] = pt_summary_failed(w->nfiles == 1 ? f->path : w->name,
					    buf[0] ? buf : "unreadable trace");
		j->msg[i] = x_strndup(buf, strlen(buf));
	}
done:
	if (!j->s[i] || (a->of[i] >= g->nw && !j->msg[i]))
		j->oom = 1;
}

/* The files left out, typed, at the report's top level: "files left out":
 * [{"file", "reason"}] (docs/diagnose.md "Workers"). */
static void left_out_hook(pt_report *r, const void *ctx)
{
	const pt_wfiles *g = ctx;
	pt_rv *a;

	if (!g->nleft)
		return;
	a = pt_rv_arr(r, pt_report_root(r), "files left out");
	for (size_t i = 0; i < g->nleft; i++) {
		pt_rv *o = pt_rv_obj(r, a, NULL);
		pt_rv_str(r, o, PT_KEY_FILE, g->f[g->left[i].file].path);
		pt_rv_str(r, o, PT_KEY_REASON, g->left[i].why);
	}
}

/* Read paths[0..n) the grouping way into j->s[0..*ns); prints the
 * grouping's one line and a warning per file left out. */
static int summarize_grouped(sumjob *j, char **paths, size_t n, long jobs, pt_wfiles *g,
			     size_t *ns)
{
	pt_error err;
	grpjob a = { j, g, NULL };
	size_t i, m = 0, nmulti = 0;
	int rc = -1;

	pt_error_clear(&err);
	*ns = 0;
	if (pt_wfiles_init(g, paths, n, &err))
		return error_pt(&err), -1;
	pt_pool_for(n, jobs, read_file, g);
	if (pt_wfiles_group(g, &err) || !(a.of = x_malloc(n * sizeof(*a.of)))) {
		error("out of memory grouping the traces");
		goto out;
	}
	for (i = 0; i < g->nw; i++)
		if (g->w[i].nfiles) {
			a.of[m++] = i;
			nmulti += g->w[i].nfiles > 1;
		}
	for (i = 0; i < n; i++)
		if (!g->f[i].ok && g->f[i].worker == SIZE_MAX && !left_of(g, i))
			a.of[m++] = g->nw + i;
	pt_pool_for(m, jobs, summarize_worker, &a);
	*ns = m;
	if (j->oom) {
		error("out of memory summarising traces");
		goto out;
	}
	fprintf(stderr, "perftracker: %zu trace files read as %zu workers: %zu of them from "
		"several files each (one file per profiling cycle; grouped by rank, host and "
		"pid), %zu file%s left out\n", n, m, nmulti, g->nleft, g->nleft == 1 ? "" : "s");
	for (i = 0; i < g->nleft; i++)
		warning("'%s' left out: %s", g->f[g->left[i].file].path, g->left[i].why);
	rc = 0;
out:
	x_free(a.of);
	return rc;
}

typedef struct wname {
	const char *name;
	size_t idx;
} wname;

static int cmp_wname(const void *a, const void *b)
{
	const wname *x = a, *y = b;
	int r = strcmp(x->name, y->name);

	return r ? r : (x->idx < y->idx ? -1 : x->idx > y->idx);
}

/* DIR/<worker>.summary.json; the second trace with the same file name (from
 * another folder) gets <worker>-2.summary.json, and so on. */
static int keep_summaries(const char *dir, pt_summary *const *s, size_t n)
{
	wname *w = x_malloc((n ? n : 1) * sizeof(*w));
	size_t i, dup = 0;
	pt_error err;
	int rc = -1;

	if (!w)
		return error("out of memory");
	pt_error_clear(&err);
	if (pt_file_mkdirs(dir, 0777, NULL, NULL, &err)) {
		error("'%s': %s", err.subject[0] ? err.subject : dir, err.msg);
		goto out;
	}
	for (i = 0; i < n; i++) {
		w[i].name = s[i]->worker ? s[i]->worker : "worker";
		w[i].idx = i;
	}
	if (n > 1)
		qsort(w, n, sizeof(*w), cmp_wname);
	for (i = 0; i < n; i++) {
		char path[4096];

		dup = i && !strcmp(w[i].name, w[i - 1].name) ? dup + 1 : 1;
		if (dup == 1)
			snprintf(path, sizeof(path), "%s/%s.summary.json", dir, w[i].name);
		else
			snprintf(path, sizeof(path), "%s/%s-%zu.summary.json", dir, w[i].name, dup);
		pt_error_clear(&err);
		if (pt_digest_write_pair(s[w[i].idx], path, &err)) {
			error_pt(&err);
			goto out;
		}
	}
	rc = 0;
out:
	x_free(w);
	return rc;
}

static void dir_of(const char *path, char *dir, size_t cap)
{
	const char *sl = strrchr(path, '/');

	if (!sl)
		snprintf(dir, cap, ".");
	else if (sl == path)
		snprintf(dir, cap, "/");
	else
		snprintf(dir, cap, "%.*s", (int)(sl - path), path);
}

/* Load the samples of dir into a new hw entry; its index, or (size_t)-1
 * when it holds none.  Unreadable samples files are one warning. */
static size_t load_hw(sumjob *j, size_t *cap, const char *dir, int must)
{
	pt_samples *v = NULL;
	size_t n = 0, nbad = 0, k;
	pt_error err, bad;
	hwdir *h;

	for (k = 0; k < j->nhw; k++)
		if (!strcmp(j->hw[k].dir, dir))
			return j->hw[k].n ? k : (size_t)-1;
	pt_error_clear(&err);
	pt_error_clear(&bad);
	if (pt_trace_samples_dir(dir, &v, &n, &nbad, &bad, &err)) {
		if (must)
			error_pt(&err);
		return (size_t)-1;
	}
	if (nbad) {
		char m[1024];

		warning("%s%s; samples file skipped", pt_error_format(&bad, m, sizeof(m)),
			nbad > 1 ? " (and more)" : "");
	}
	if (X_GROW(j->hw, *cap, j->nhw + 1))
		goto oom;
	h = &j->hw[j->nhw];
	memset(h, 0, sizeof(*h));
	h->dir = x_strndup(dir, strlen(dir));
	h->p = x_malloc((n ? n : 1) * sizeof(*h->p));
	if (!h->dir || !h->p) {
		x_free(h->dir);
		x_free(h->p);
		goto oom;
	}
	h->v = v;
	h->n = n;
	for (k = 0; k < n; k++)
		h->p[k] = &v[k];
	j->nhw++;
	return n ? j->nhw - 1 : (size_t)-1;
oom:
	for (k = 0; k < n; k++)
		pt_samples_free(&v[k]);
	x_free(v);
	j->oom = 1;
	return (size_t)-1;
}

int cmd_analyze(int argc, char **argv)
{
	cli_diag d;
	cli_files l = {0};
	sumjob j;
	const char *keep = NULL, *hwdir_opt = NULL;
	pt_wfiles g = {0};
	size_t i, hwcap = 0, ns = 0;
	int rc = -1, k, nohw = 0, npos, tl_raw = 0, grouped = 0;
	double t0;
	const pt_opt opts[] = {
		PT_OPT_INCLUDE(cli_diag_output_opts, &d, NULL),
		PT_OPT_INCLUDE(cli_diag_timeline_opts, &d, NULL),
		PT_OPT_INCLUDE(cli_diag_raw_opts, &d, NULL),
		PT_OPT_FLAG(0, "timeline-raw", PT_TO(&tl_raw),
			    "put the traces' own events into timeline.json.gz (read a\n"
			    "second time; compacted to docs/display.md's bound)"),
		PT_OPT_STRING(0, "keep-summaries", PT_TO(&keep), "DIR",
			      "also write each worker's summary to DIR/<worker>.summary.json"),
		PT_OPT_STRING(0, "hw-dir", PT_TO(&hwdir_opt), "DIR",
			      "join the hardware samples in DIR to every trace (instead of\n"
			      "those beside each trace)"),
		PT_OPT_FLAG(0, "no-hw", PT_TO(&nohw), "join no hardware samples"),
		PT_OPT_INCLUDE(cli_diag_run_opts, &d, NULL),
		PT_OPT_INCLUDE(cli_diag_opts, &d, NULL),
		PT_OPT_INCLUDE(cli_diag_text_opts, &d, NULL),
		PT_OPT_END(),
	};

	cli_diag_init(&d);
	memset(&j, 0, sizeof(j));
	pt_summary_options_default(&j.sopt);
	npos = cli_parse_options(&usage, opts, argc, argv);
	if (npos < 0)
		return npos == CLI_HELP ? 0 : -1;
	/* (After all options: --keep-summaries names a folder the search skips.) */
	for (k = 1; k <= npos; k++)
		if (cli_files_add(&l, argv[k], CLI_TRACES, keep))
			goto out;
	if (nohw && hwdir_opt) {
		error("analyze: --no-hw with --hw-dir");
		goto out;
	}
	if (cli_files_done(&l, "analyze", CLI_TRACES))
		goto out;
	grouped = pt_wfiles_needed(l.v, l.n);
	j.paths = l.v;
	j.s = x_calloc(l.n, sizeof(*j.s));
	j.msg = x_calloc(l.n, sizeof(*j.msg));
	j.hw_of = x_malloc(l.n * sizeof(*j.hw_of));
	if (!j.s || !j.msg || !j.hw_of) {
		error("out of memory");
		goto out;
	}
	for (i = 0; i < l.n; i++)
		j.hw_of[i] = (size_t)-1;
	if (hwdir_opt) {
		size_t h = load_hw(&j, &hwcap, hwdir_opt, 1);

		if (j.oom) {
			error("out of memory");
			goto out;
		}
		if (!j.nhw) /* the folder could not be read: load_hw said why */
			goto out;
		if (h == (size_t)-1)
			warning("'%s': no hardware samples (hw_*.json, *.hw.json, hw_*.sqlite)",
				hwdir_opt);
		for (i = 0; i < l.n; i++)
			j.hw_of[i] = h;
	} else if (!nohw) {
		for (i = 0; i < l.n; i++) {
			char dir[4096];

			dir_of(l.v[i], dir, sizeof(dir));
			j.hw_of[i] = load_hw(&j, &hwcap, dir, 0);
		}
		if (j.oom) {
			error("out of memory");
			goto out;
		}
	}
	t0 = cli_now();
	ns = l.n;
	if (grouped && summarize_grouped(&j, l.v, l.n, d.jobs, &g, &ns))
		goto out;
	if (!grouped)
		pt_pool_for(l.n, d.jobs, summarize_one, &j);
	if (d.time)
		fprintf(stderr, "perftracker: time: summarize %.3f s (%zu traces)\n", cli_now() - t0,
			l.n);
	if (j.oom) {
		error("out of memory summarising traces");
		goto out;
	}
	for (i = 0; i < ns; i++)
		if (j.msg[i])
			warning("'%s': %s", j.s[i] && j.s[i]->file ? j.s[i]->file : l.v[i], j.msg[i]);
	if (keep && keep_summaries(keep, j.s, ns))
		goto out;
	if (tl_raw) {
		d.raw = l.v;
		d.nraw = l.n;
	}
	rc = grouped ? cli_report(&d, j.s, ns, left_out_hook, &g) : cli_report(&d, j.s, ns, NULL, NULL);
out:
	for (i = 0; i < l.n; i++) {
		if (j.s)
			pt_summary_free(j.s[i]);
		if (j.msg)
			x_free(j.msg[i]);
	}
	x_free(j.msg);
	x_free(j.s);
	for (i = 0; i < j.nhw; i++) {
		size_t q;

		for (q = 0; q < j.hw[i].n; q++)
			pt_samples_free(&j.hw[i].v[q]);
		x_free(j.hw[i].v);
		x_free(j.hw[i].p);
		x_free(j.hw[i].dir);
	}
	x_free(j.hw);
	x_free(j.hw_of);
	pt_wfiles_free(&g);
	cli_files_free(&l);
	return rc;
}
