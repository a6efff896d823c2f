/*
 * diagnose.c - `perftracker diagnose SUMMARY... -o DIR`: read worker
 * summaries in parallel, compare the workers (src/diagnose), write
 * DIR/PerfDisplay/ (report.json, the PerfDisplay page index.html, app.py),
 * print the text report.
 * Runs on the master; also holds what `analyze` (analyze.c) shares.
 * An unreadable summary is one warning line and a failed worker in the
 * report; no readable worker at all is an error.
 */

#include "trace/any.h"
#include "cli.h"
#include "diagnose.h"
#include "analysis/summary_parse.h"
#include "report/report.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char cli_diag_help[] =
	"  -o, --output DIR          write DIR/PerfDisplay/ (report.json, index.html, app.py)\n"
	"  -j, --jobs N              threads reading/summarising files (default: online CPUs)\n"
	"  --z Z                     robust z-score above which a worker is an outlier (3.5)\n"
	"  --rel R                   and relative deviation above R (0.2 = 20%)\n"
	"  --min-impact F            and time lost above F of the worker's window (0.005)\n"
	"  --mad-floor F             MAD is at least F x |median| (0.01)\n"
	"  --memop-threshold R       memory ops above this bottleneck ratio are candidates (0.01)\n"
	"  --runtime-threshold R     CUDA runtime calls: same (0.01)\n"
	"  --python-threshold R      Python stacks above this ratio are listed (0.01)\n"
	"  --python-min-impact F     Python findings need time lost above F of the window (0.02)\n"
	"  --top-kernels N           entries in \"major_kernel_executions\" (5)\n"
	"  --loo-below N             leave-one-out statistics below N workers (8)\n"
	"  --fixed-only              abnormal_workers by the fixed threshold alone (seed rule)\n"
	"  --max-findings N          findings printed in the text report (10, json: 50; 0 = all)\n"
	"  --format text|json        text: summary, findings, tables (default); json: the seed's\n"
	"                            section-by-section JSON text\n"
	"  --json                    print the whole report.json document instead of the text\n"
	"  --width N                 text report line width (120)\n"
	"  -q, --quiet               do not print the text report\n"
	"  --time                    print the time of each phase on stderr\n"
	"  -h, --help                show this help\n";

static const char usage_text[] =
	"usage: perftracker diagnose SUMMARY... [-o DIR] [options]\n"
	"\n"
	"Compare worker summaries (written by 'perftracker summarize'; a folder means every\n"
	"*.json under it) and report the slow workers and the functions to blame\n"
	"(docs/diagnose.md).\n"
	"\n"
	"options:\n";

void cli_diag_init(cli_diag *d)
{
	memset(d, 0, sizeof(*d));
	pt_diag_options_default(&d->opt);
	d->max_findings = SIZE_MAX;
}

int cli_diag_option(cli_diag *d, int argc, char **argv, int *i)
{
	static const struct {
		const char *name;
		size_t off;
	} dbl[] = {
		{ "--z", offsetof(pt_diag_options, z) },
		{ "--rel", offsetof(pt_diag_options, rel) },
		{ "--min-impact", offsetof(pt_diag_options, min_impact) },
		{ "--mad-floor", offsetof(pt_diag_options, mad_floor) },
		{ "--memop-threshold", offsetof(pt_diag_options, memop_threshold) },
		{ "--runtime-threshold", offsetof(pt_diag_options, runtime_threshold) },
		{ "--python-threshold", offsetof(pt_diag_options, python_threshold) },
		{ "--python-min-impact", offsetof(pt_diag_options, python_min_impact) },
	};
	const char *a = argv[*i];
	size_t k;

	for (k = 0; k < sizeof(dbl) / sizeof(dbl[0]); k++) {
		if (cli_is_opt(a, dbl[k].name)) {
			*(double *)((char *)&d->opt + dbl[k].off) =
				opt_double(dbl[k].name, cli_opt_value(argc, argv, i));
			return 1;
		}
	}
	if (cli_is_opt(a, "--top-kernels"))
		d->opt.top_kernels = (size_t)opt_long("--top-kernels",
						      cli_opt_value(argc, argv, i));
	else if (cli_is_opt(a, "--loo-below"))
		d->opt.loo_below = (size_t)opt_long("--loo-below", cli_opt_value(argc, argv, i));
	else if (cli_is_opt(a, "--max-findings"))
		d->max_findings = (size_t)opt_long("--max-findings", cli_opt_value(argc, argv, i));
	else if (cli_is_opt(a, "--jobs"))
		d->jobs = opt_long("--jobs", cli_opt_value(argc, argv, i));
	else if (!strcmp(a, "-j"))
		d->jobs = opt_long("-j", cli_opt_value(argc, argv, i));
	else if (!strncmp(a, "-j", 2))
		d->jobs = opt_long("-j", a + 2);
	else if (cli_is_opt(a, "--output") || !strcmp(a, "-o"))
		d->outdir = cli_opt_value(argc, argv, i);
	else if (cli_is_opt(a, "--format")) {
		const char *v = cli_opt_value(argc, argv, i);

		if (!strcmp(v, "text"))
			d->format = CLI_FMT_TEXT;
		else if (!strcmp(v, "json"))
			d->format = CLI_FMT_JSON;
		else
			die("option '--format': '%s' is not 'text' or 'json'", v);
	} else if (!strcmp(a, "--json"))
		d->json = 1;
	else if (cli_is_opt(a, "--width")) {
		d->width = (size_t)opt_long("--width", cli_opt_value(argc, argv, i));
		if (d->width < 40)
			die("option '--width': %zu is below 40", d->width);
	} else if (!strcmp(a, "--fixed-only"))
		d->opt.fixed_only = 1;
	else if (!strcmp(a, "-q") || !strcmp(a, "--quiet"))
		d->quiet = 1;
	else if (!strcmp(a, "--time"))
		d->time = 1;
	else
		return 0;
	return 1;
}

static int ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);

	return n >= m && !strcmp(s + n - m, suf);
}

static int files_push(cli_files *f, const char *path)
{
	if (X_GROW(f->v, f->cap, f->n + 1) || !(f->v[f->n] = x_strndup(path, strlen(path))))
		return error("out of memory");
	f->n++;
	return 0;
}

static int wanted(const char *name, int what)
{
	if (what == CLI_SUMMARIES)
		return ends_with(name, ".json");
	/* Traces: Kineto JSON (plain or gzip) and Nsight Systems exports; the
	 * hardware samples beside them (docs/hardware.md) are not workers. */
	return (ends_with(name, ".json") || ends_with(name, ".json.gz") ||
		ends_with(name, ".sqlite")) &&
	       !ends_with(name, ".summary.json") && !pt_trace_is_samples_name(name);
}

/* Recursive walk; depth-limited so a symlink loop cannot recurse forever.
 * The skipped folder is matched by device and inode, however it is spelled. */
static int walk(cli_files *f, const char *dir, int what, const struct stat *skip, int depth)
{
	DIR *d;
	struct dirent *e;
	int rc = 0;

	if (depth > 64)
		return 0;
	d = opendir(dir);
	if (!d)
		return error("'%s': cannot open directory: %s", dir, strerror(errno));
	while (!rc && (e = readdir(d))) {
		char path[4096];
		struct stat st;

		if (e->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= sizeof(path))
			continue;
		if (stat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode)) {
			/* Our own output and kept summaries are not inputs. */
			if (!strcmp(e->d_name, "PerfDisplay") ||
			    (skip && st.st_dev == skip->st_dev && st.st_ino == skip->st_ino))
				continue;
			rc = walk(f, path, what, skip, depth + 1);
		} else if (S_ISREG(st.st_mode) && wanted(e->d_name, what)) {
			rc = files_push(f, path);
		}
	}
	closedir(d);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int cli_files_add(cli_files *f, const char *path, int what, const char *skip)
{
	struct stat st, sk;
	size_t first = f->n;

	if (stat(path, &st))
		return error("'%s': %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return files_push(f, path);
	if (walk(f, path, what, skip && !stat(skip, &sk) ? &sk : NULL, 0))
		return -1;
	if (f->n == first) {
		if (f->nempty < sizeof(f->empty) / sizeof(f->empty[0]))
			f->empty[f->nempty] = path;
		f->nempty++;
	}
	if (f->n - first > 1)
		qsort(f->v + first, f->n - first, sizeof(*f->v), cmp_str);
	return 0;
}

static const char *what_name(int what)
{
	return what == CLI_TRACES ? "*.json, *.json.gz or *.sqlite traces" : "*.json summaries";
}

int cli_files_done(const cli_files *f, const char *cmd, int what)
{
	size_t i, shown = f->nempty < 4 ? f->nempty : 4;

	if (!f->n && !f->nempty)
		return error("%s: no %s given (see --help)", cmd,
			     what == CLI_TRACES ? "traces" : "summary files");
	if (!f->n && f->nempty == 1)
		return error("'%s': no %s found", f->empty[0], what_name(what));
	if (!f->n)
		return error("%s: no %s found in '%s' or the %zu other folder%s given", cmd,
			     what_name(what), f->empty[0], f->nempty - 1,
			     f->nempty == 2 ? "" : "s");
	for (i = 0; i < shown; i++)
		warning("'%s': no %s found", f->empty[i], what_name(what));
	return 0;
}

void cli_files_free(cli_files *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		x_free(f->v[i]);
	x_free(f->v);
	f->v = NULL;
	f->n = f->cap = 0;
}

typedef struct pool {
	size_t n;
	atomic_size_t next;
	void (*fn)(void *ctx, size_t i);
	void *ctx;
} pool;

static void *pool_run(void *arg)
{
	pool *p = arg;
	size_t i;

	while ((i = atomic_fetch_add(&p->next, 1)) < p->n)
		p->fn(p->ctx, i);
	return NULL;
}

void cli_parallel(size_t n, long jobs, void (*fn)(void *ctx, size_t i), void *ctx)
{
	pool p;
	pthread_t *th = NULL;
	size_t nth, started = 0, k;

	if (jobs <= 0) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);

		jobs = c > 0 ? c : 1;
	}
	nth = (size_t)jobs < n ? (size_t)jobs : n;
	p.n = n;
	atomic_init(&p.next, 0);
	p.fn = fn;
	p.ctx = ctx;
	if (nth > 1)
		th = x_malloc((nth - 1) * sizeof(*th));
	/* The calling thread is one of the workers; a thread that cannot be
	 * started just leaves more items to the others. */
	for (k = 0; th && k + 1 < nth; k++)
		if (!pthread_create(&th[started], NULL, pool_run, &p))
			started++;
	pool_run(&p);
	for (k = 0; k < started; k++)
		pthread_join(th[k], NULL);
	x_free(th);
}

/* CPU time of the calling thread: the diagnosis is single-threaded, and on a
 * shared machine its wall time says little. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int cli_diag_run(const cli_diag *d, pt_summary *const *s, size_t n, cli_report_hook *hook,
		 const void *ctx)
{
	double t0 = cli_now(), c0 = cpu_now(), t1, t2, c1;
	pt_error err;
	pt_report *rep = NULL;
	pt_sb sb = {0};
	size_t i, ok = 0;
	int rc = -1;

	pt_error_clear(&err);
	for (i = 0; i < n; i++)
		ok += s[i] && !s[i]->error;
	if (!ok) {
		error("no worker could be analysed (%zu input%s, all unreadable)", n,
		      n == 1 ? "" : "s");
		goto out;
	}
	rep = pt_diagnose(s, n, &d->opt, &err);
	if (!rep) {
		error_pt(&err);
		goto out;
	}
	if (hook)
		hook(rep, ctx);
	t1 = cli_now();
	c1 = cpu_now();
	if (d->outdir && pt_report_write_dir(rep, d->outdir, &err)) {
		error_pt(&err);
		goto out;
	}
	if (!d->quiet && d->json) {
		pt_report_json(pt_report_root_c(rep), 0, &sb);
		pt_sb_addc(&sb, '\n');
	} else if (!d->quiet && d->format == CLI_FMT_JSON) {
		pt_report_text_json(rep, d->max_findings == SIZE_MAX ? 50 : d->max_findings, &sb);
	} else if (!d->quiet) {
		pt_text_opts to;

		pt_text_opts_default(&to);
		if (d->max_findings != SIZE_MAX)
			to.max_findings = d->max_findings;
		if (d->width)
			to.width = d->width;
		to.page_line = 1;
		to.outdir = d->outdir;
		pt_report_text_people(rep, &to, &sb);
	}
	if (!d->quiet) {
		if (sb.oom) {
			error("out of memory writing the text report");
			goto out;
		}
		if (fwrite(sb.buf, 1, sb.len, stdout) != sb.len || fflush(stdout)) {
			error("cannot write the text report to stdout");
			goto out;
		}
	}
	t2 = cli_now();
	if (d->time)
		fprintf(stderr, "perftracker: time: diagnose %.3f s wall, %.3f s cpu (%zu workers), "
			"write %.3f s\n", t1 - t0, c1 - c0, n, t2 - t1);
	rc = 0;
out:
	pt_sb_free(&sb);
	pt_report_free(rep);
	return rc;
}

/* ---- perftracker diagnose ------------------------------------------------ */

typedef struct readjob {
	char **paths;
	pt_summary **s;
	char **msg;      /* per input: warning to print, or NULL */
	pt_summary_keys *keys; /* pattern keys shared by all summaries (free them with
	                          pt_summary_free_shared): summaries share most keys,
	                          so this holds less than half the memory
	                          (docs/bench.md, "Code shaped for speed") */
	int oom;
} readjob;

static void read_one(void *ctx, size_t i)
{
	readjob *j = ctx;
	pt_error err;
	char buf[1024];

	pt_error_clear(&err);
	j->s[i] = pt_summary_read_file_shared(j->paths[i], j->keys, &err);
	if (j->s[i])
		return;
	/* The report's "error" names the problem; the path is in "file". */
	err.subject[0] = 0;
	pt_error_format(&err, buf, sizeof(buf));
	j->s[i] = pt_summary_failed(j->paths[i], buf[0] ? buf : "unreadable summary");
	j->msg[i] = x_strndup(buf, strlen(buf));
	if (!j->s[i] || !j->msg[i])
		j->oom = 1;
}

int cmd_diagnose(int argc, char **argv)
{
	cli_diag d;
	cli_files l = {0};
	readjob j = {0};
	size_t n = 0, i;
	int rc = -1, k;
	double t0;

	cli_diag_init(&d);
	for (k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "-h") || !strcmp(argv[k], "--help")) {
			printf("%s%s", usage_text, cli_diag_help);
			return 0;
		}
		if (cli_diag_option(&d, argc, argv, &k))
			continue;
		if (argv[k][0] == '-' && argv[k][1]) {
			error("diagnose: unknown option '%s' (see --help)", argv[k]);
			goto out;
		}
		if (cli_files_add(&l, argv[k], CLI_SUMMARIES, NULL))
			goto out;
	}
	if (cli_files_done(&l, "diagnose", CLI_SUMMARIES))
		goto out;
	n = l.n;
	j.paths = l.v;
	j.s = x_calloc(n, sizeof(*j.s));
	j.msg = x_calloc(n, sizeof(*j.msg));
	j.keys = pt_summary_keys_new();
	if (!j.s || !j.msg || !j.keys) {
		error("out of memory");
		goto out;
	}
	t0 = cli_now();
	cli_parallel(n, d.jobs, read_one, &j);
	if (d.time)
		fprintf(stderr, "perftracker: time: read %.3f s (%zu summaries)\n", cli_now() - t0, n);
	if (j.oom) {
		error("out of memory reading summaries");
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (j.msg[i])
			warning("'%s': %s", j.paths[i], j.msg[i]);
		else if (j.s[i]->error)
			warning("'%s': worker '%s' was not analysed: %s", j.paths[i],
				j.s[i]->worker ? j.s[i]->worker : "", j.s[i]->error);
	}
	rc = cli_diag_run(&d, j.s, n, NULL, NULL);
out:
	for (i = 0; i < n && j.s; i++)
		pt_summary_free_shared(j.s[i]);
	pt_summary_keys_free(j.keys);
	for (i = 0; i < n && j.msg; i++)
		x_free(j.msg[i]);
	x_free(j.msg);
	x_free(j.s);
	cli_files_free(&l);
	return rc;
}
