/*
 * hangcheck.c - `perftracker hang-check`: is the job hung, which worker is
 * stuck and where, right now.  Also the hang path of the trigger: both ask
 * every worker's watchdog (python/perftracker/collector_watchdog.c) for its
 * Python stacks through <control>/stacks/, classify the workers from their
 * heartbeats and pids, and analyse the stacks with src/hang/hang.c into
 * the report's "Hang" section (docs/hang.md).  What is read from the
 * control directory stays here; what is decided from it (each worker's
 * state, its suspects, the findings) is the hang library's
 * (pt_hang_classify, pt_hang_analyze, pt_hang_report).
 */
#include <stddef.h>

#include "cli.h"
#include "hangcheck.h"
#include "control/nodechan.h"
#include "analysis/stats.h"
#include "report/phrase.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "../report/keys.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Largest stack file read (100 threads x 100 frames of 500-byte names is
 * about 5 MB: faulthandler's own limits). */
#define STACKS_MAX ((size_t)16 << 20)

double cli_hang_auto_timeout(const pt_worker_entry *w, size_t n)
{
	double *v = x_calloc(n, sizeof(double)), med, t;
	size_t k = 0;

	if (!v)
		return 60;
	for (size_t i = 0; i < n; i++)
		if (w[i].has_hb && w[i].hb.rate > 0)
			v[k++] = 1.0 / w[i].hb.rate;
	med = pt_robust_median(v, k, 0);
	x_free(v);
	t = 10 * med;
	return t > 60 ? t : 60;
}

void cli_hang_free(cli_hang_run *run)
{
	if (!run)
		return;
	for (size_t i = 0; i < run->n; i++) {
		if (run->dumps)
			pt_hang_dump_free(&run->dumps[i]);
		if (run->texts)
			x_free(run->texts[i]);
	}
	pt_hang_result_free(&run->res);
	x_free(run->texts);
	x_free(run->dumps);
	x_free(run->notes);
	x_free(run->w);
	x_free(run->e);
	memset(run, 0, sizeof(*run));
}

/* Read and parse wid's stack file.  1 with *d and *text filled, 0 when
 * there is none or it cannot be parsed (a warning for the latter when
 * warn is set). */
static int read_stacks(const char *dir, const char *wid, pt_hang_dump *d, char **text, int warn)
{
	char path[PT_CONTROL_PATH_MAX];
	char *buf = NULL;
	size_t len = 0;
	pt_error e;

	if (pt_control_stacks_path(path, sizeof(path), dir, wid))
		return 0;
	pt_error_clear(&e);
	if (pt_control_read_file(path, STACKS_MAX, &buf, &len, &e))
		return 0;
	if (pt_hang_parse_dump(buf, len, d, &e) != PT_OK) {
		if (warn && e.offset >= 0)
			warning("'%s': %s (at byte %lld)", path, e.msg, (long long)e.offset);
		else if (warn)
			warning("'%s': %s", path, e.msg);
		x_free(buf);
		return 0;
	}
	*text = buf;
	return 1;
}

/* Whether worker i can answer: not dead, lost or exited. */
static int can_answer(const cli_hang *h, const cli_hang_run *run, const int *exited, size_t i,
		      const char *node, double now)
{
	return !(exited && exited[i]) && !pt_control_worker_dead(&run->e[i], node) &&
	       pt_control_worker_alive(&run->e[i], now, h->stale, node);
}

/* Waits for the answers to run->request: each watchdog polls every
 * 250 ms (by default) and writes in a few milliseconds.  Dead, lost and
 * exited workers cannot answer: not waited for.  got[i] is set for each
 * answer (its dump and text in run); returns at the first moment none is
 * pending, or after h->stack_wait seconds (a progress line every 2 s
 * when h->progress). */
static void wait_answers(const cli_hang *h, cli_hang_run *run, int *got, const int *exited,
			 const char *node)
{
	double t0 = cli_now(), last_line = 0;
	size_t n = run->n;

	for (;;) {
		size_t pending = 0;
		double now = pt_control_now();

		for (size_t i = 0; i < n; i++) {
			pt_hang_dump d;
			char *text = NULL;

			if (got[i] || !can_answer(h, run, exited, i, node, now))
				continue;
			if (read_stacks(h->dir, run->e[i].info.id, &d, &text, 0)) {
				if (!strcmp(d.request, run->request)) {
					got[i] = 1;
					run->dumps[i] = d;
					run->texts[i] = text;
					run->answered++;
					continue;
				}
				pt_hang_dump_free(&d);
				x_free(text);
			}
			pending++;
		}
		run->seconds = cli_now() - t0;
		if (!pending || run->seconds >= h->stack_wait)
			break;
		if (h->progress && run->seconds - last_line >= 2) {
			fprintf(stderr, "perftracker: [%5.1fs] stacks from %zu of %zu workers\n",
				run->seconds, run->answered, n);
			last_line = run->seconds;
		}
		cli_sleep(0.05);
	}
}

/* Fresh heartbeats: the steps and liveness as of now. */
static void refresh_entries(const cli_hang *h, cli_hang_run *run)
{
	pt_worker_entry *fresh = NULL;
	size_t nfresh = 0;

	if (pt_nodechan_workers(h->dir, &fresh, &nfresh, NULL) == PT_OK)
		for (size_t i = 0; i < run->n; i++)
			for (size_t k = 0; k < nfresh; k++)
				if (!strcmp(fresh[k].info.id, run->e[i].info.id)) {
					run->e[i] = fresh[k];
					break;
				}
	x_free(fresh);
}

/* A running worker that did not answer: the watchdog's own dump of this
 * stall, if it is still where it was (got[i] set), else a note that
 * none came. */
static void unanswered(const cli_hang *h, cli_hang_run *run, size_t i, int *got, double now)
{
	const pt_worker_entry *x = &run->e[i];
	pt_hang_dump d;
	char *text = NULL;

	if (read_stacks(h->dir, x->info.id, &d, &text, 1) && d.step >= x->hb.step) {
		snprintf(run->notes[i], sizeof(run->notes[i]),
			 "%s dump from %.1f s ago (no answer within %.1f s)",
			 !strcmp(d.reason, "stalled") ? "automatic" : "earlier",
			 now - d.time, h->stack_wait);
		run->dumps[i] = d;
		run->texts[i] = text;
		got[i] = 1;
	} else {
		if (text) {
			pt_hang_dump_free(&d);
			x_free(text);
		}
		snprintf(run->notes[i], sizeof(run->notes[i]),
			 "none: no answer within %.1f s (no watchdog?)", h->stack_wait);
	}
}

/* Worker i for the analysis (run->w[i]): what the control directory says
 * of it, its stacks (the watchdog's own dump of this stall when it did not
 * answer), classified by the hang library (pt_hang_classify). */
static void classify(const cli_hang *h, cli_hang_run *run, size_t i, int *got,
		     const int *exited, const char *node, double now)
{
	const pt_worker_entry *x = &run->e[i];
	pt_hang_seen s = {
		.id = x->info.id, .host = x->info.host, .rank = x->info.rank,
		.pid = x->info.pid, .exited = exited && exited[i],
		.has_hb = x->has_hb, .hb_step = x->hb.step, .hb_step_time = x->hb.step_time,
		.hb_time = x->hb.time, .started = x->info.started, .answered = got[i],
	};

	s.dead = !s.exited && pt_control_worker_dead(x, node);
	s.alive = !s.exited && !s.dead && pt_control_worker_alive(x, now, h->stale, node);
	if (s.alive && !got[i])
		unanswered(h, run, i, got, now);
	s.dump = got[i] ? &run->dumps[i] : NULL;
	pt_hang_classify(&s, now, h->hang_timeout, &run->w[i], run->notes[i],
			 sizeof(run->notes[i]));
}

int cli_hang_check(const cli_hang *h, const pt_worker_entry *e, const int *exited, size_t n,
		   cli_hang_run *run)
{
	char node[PT_CONTROL_HOST_MAX];
	int *got = NULL, rc = -1;
	double now;
	pt_error err;

	memset(run, 0, sizeof(*run));
	pt_control_nodename(node, sizeof(node));
	run->n = n;
	run->e = x_calloc(n, sizeof(*run->e));
	run->w = x_calloc(n, sizeof(*run->w));
	run->dumps = x_calloc(n, sizeof(*run->dumps));
	run->notes = x_calloc(n, sizeof(*run->notes));
	run->texts = x_calloc(n, sizeof(char *));
	got = x_calloc(n, sizeof(int));
	if (!run->e || !run->w || !run->dumps || !run->notes || !run->texts || !got)
		die("out of memory");
	memcpy(run->e, e, n * sizeof(*e));
	pt_error_clear(&err);
	if (pt_control_stacks_request(h->dir, run->request, sizeof(run->request), &err)) {
		error_pt(&err);
		goto out;
	}
	wait_answers(h, run, got, exited, node);
	refresh_entries(h, run);
	now = pt_control_now();
	for (size_t i = 0; i < n; i++)
		classify(h, run, i, got, exited, node, now);
	run->opt.hang_timeout = h->hang_timeout;
	run->opt.detected_by = h->detected_by;
	run->opt.now = now;
	if (pt_hang_analyze(run->w, n, &run->opt, &run->res, &err)) {
		error_pt(&err);
		goto out;
	}
	rc = 0;
out:
	x_free(got);
	return rc;
}

void cli_trigger_key(pt_report *r, const pt_trigger *t)
{
	pt_rv *o = pt_rv_obj(r, pt_report_root(r), PT_KEY_TRIGGER);

	pt_rv_str(r, o, PT_KEY_ID, t->id);
	pt_rv_str(r, o, PT_KEY_REASON, t->reason[0] ? t->reason : "requested on the command line");
	pt_rv_str(r, o, PT_KEY_HOST, t->host);
	pt_rv_int(r, o, PT_KEY_PID, t->pid);
	pt_rv_int(r, o, "start step", t->start_step);
	pt_rv_int(r, o, PT_KEY_STEPS_LC, t->steps);
	/* Rounds: the start step was moved when a worker saw it too late
	 * (docs/collector.md, "The trigger"); round 0 is the first. */
	pt_rv_int(r, o, PT_KEY_ROUND, t->round);
	pt_rv_str(r, o, "first id", t->first_id[0] ? t->first_id : t->id);
	pt_rv_num(r, o, PT_KEY_CREATED, round(t->created * 1000) / 1000);
}

int cli_hang_write(const cli_hang_run *run, const char *run_dir, const pt_trigger *t)
{
	pt_report *r;
	pt_error e;
	char path[PT_CONTROL_PATH_MAX + PT_CONTROL_ID_MAX + 32];
	int rc = -1;

	pt_error_clear(&e);
	r = pt_hang_report(run->w, run->n, &run->opt, &run->res, &e);
	if (!r)
		return error_pt(&e);
	if (t)
		cli_trigger_key(r, t);
	if (pt_report_write_dir(r, run_dir, &e)) {
		error_pt(&e);
		goto out;
	}
	/* The raw stacks, every thread included, for a closer look. */
	for (size_t i = 0; i < run->n; i++) {
		if (!run->texts[i])
			continue;
		snprintf(path, sizeof(path), "%s/stacks/%s.txt", run_dir, run->w[i].id);
		if (pt_control_write_atomic(path, run->texts[i], strlen(run->texts[i]), &e))
			warning("cannot keep the stacks of '%s' in '%s'", run->w[i].id, path);
	}
	rc = 0;
out:
	pt_report_free(r);
	return rc;
}

void cli_hang_print(const cli_hang_run *run)
{
	pt_report *r = pt_hang_report(run->w, run->n, &run->opt, &run->res, NULL);
	const pt_rv *h;
	const pt_finding *fs;
	pt_sb sb = { 0 };
	size_t k = 0, nf;

	if (!r) {
		error("out of memory writing the text report");
		return;
	}
	h = pt_rv_get(pt_report_root_c(r), PT_KEY_HANG);
	pt_sb_adds(&sb, "Hang:\n");
	pt_report_json(h, 0, &sb);
	pt_sb_adds(&sb, "\n\nFindings:\n");
	fs = pt_report_findings(r, &nf);
	for (k = 0; k < nf; k++) {
		pt_sb_addf(&sb, "%zu. ", k + 1);
		pt_finding_render(&fs[k], NULL, NULL, &sb);
		pt_sb_addc(&sb, '\n');
	}
	if (!k)
		pt_sb_addf(&sb, "%s\n", run->res.explanation ? run->res.explanation : "");
	if (!sb.oom)
		fwrite(sb.buf, 1, sb.len, stdout);
	fflush(stdout);
	pt_sb_free(&sb);
	pt_report_free(r);
}

/* ---- perftracker hang-check ------------------------------------------------ */

static const cli_usage usage = {
	"hang-check",
	"perftracker hang-check [options]",
	"Ask every registered worker for its Python stacks now and say whether the job\n"
	"is hung, which worker is stuck and where (docs/hang.md).\n",
	NULL,
};

static void print_text(const cli_hang_run *run)
{
	const pt_hang_result *res = &run->res;

	printf("%s\n", res->explanation ? res->explanation : "");
	for (size_t g = 0; g < res->ngroups; g++) {
		const pt_hang_group *gr = &res->groups[g];
		const char *p = gr->key;

		printf("\ngroup %zu%s: %zu worker%s, steps %lld-%lld:", g + 1,
		       gr->suspect ? " (suspect)" : "", gr->n, gr->n == 1 ? "" : "s",
		       (long long)gr->min_step, (long long)gr->max_step);
		for (size_t k = 0; k < gr->n && k < 8; k++)
			printf(" %s.json", run->w[gr->members[k]].id);
		if (gr->n > 8)
			printf(" and %zu more", gr->n - 8);
		printf("\n");
		/* the stack, outermost first, one frame a line */
		while (*p) {
			const char *bar = strchr(p, '|');
			size_t len = bar ? (size_t)(bar - p) : strlen(p);

			printf("    %.*s\n", (int)len, p);
			p += len + (bar ? 1 : 0);
		}
		if (!gr->key[0])
			printf("    (no Python frame)\n");
	}
	printf("\n%-36s %5s %9s %10s  %-8s %s\n", "WORKER", "RANK", "STEP", "NO STEP", "STATE",
	       "STACKS");
	for (size_t i = 0; i < run->n; i++) {
		const pt_hang_worker *w = &run->w[i];
		char since[32], name[PT_CONTROL_ID_MAX + 8];

		if (w->since_step >= 0)
			snprintf(since, sizeof(since), "%.1fs", w->since_step);
		else
			snprintf(since, sizeof(since), "-");
		snprintf(name, sizeof(name), "%s.json", w->id);
		printf("%-36s %5lld %9lld %10s  %-8s %s\n", name, (long long)w->rank,
		       (long long)w->step, since, pt_hang_state_name(w->state),
		       w->stacks ? w->stacks : "");
	}
	fflush(stdout);
}

int cmd_hang_check(int argc, char **argv)
{
	cli_hang h = { .stale = 30, .hang_timeout = -1, .stack_wait = 5,
		       .detected_by = "hang-check", .progress = 1 };
	const char *outdir = NULL;
	int json = 0, rc = -1;
	const char *job = NULL;
	pt_worker_entry *all = NULL;
	size_t n = 0;
	pt_error e;
	cli_hang_run run;

	const pt_opt opts[] = {
		CLI_OPT_CONTROL_DIR(&h.dir),
		CLI_OPT_JOB(&job),
		PT_OPT_DOUBLE(0, "hang-timeout", PT_TO(&h.hang_timeout), "SEC",
			      "no step for SEC makes a worker hung (max(60, 10 x median step time))"),
		PT_OPT_DOUBLE(0, "stale", PT_TO(&h.stale), "SEC",
			      "no heartbeat for SEC makes a worker lost (30)"),
		PT_OPT_DOUBLE(0, "stack-wait", PT_TO(&h.stack_wait), "SEC",
			      "wait this long for the stacks (5)"),
		PT_OPT_STRING('o', "output", PT_TO(&outdir), "DIR",
			      "also write DIR/PerfDisplay/ (report.json with \"Hang\") and DIR/stacks/"),
		PT_OPT_FLAG(0, "json", PT_TO(&json),
			    "print the \"Hang\" section as JSON instead of the text"),
		PT_OPT_END(),
	};
	int npos;

	memset(&run, 0, sizeof(run));
	npos = cli_parse_options(&usage, opts, argc, argv);
	if (npos < 0)
		return npos == CLI_HELP ? 0 : -1;
	if (npos > 0)
		return cli_usage_unexpected(&usage, argv[1]);
	if (cli_resolve_dir(&h.dir, job) || cli_control_workers(&h.dir, &all, &n))
		return -1;
	pt_error_clear(&e);
	if (!n) {
		error("no worker registered in '%s'", h.dir);
		goto out;
	}
	if (h.hang_timeout < 0)
		h.hang_timeout = cli_hang_auto_timeout(all, n);
	h.progress = !json;
	if (cli_hang_check(&h, all, NULL, n, &run))
		goto out;
	if (!json)
		fprintf(stderr, "perftracker: stacks from %zu of %zu workers in %.2f s\n",
			run.answered, n, run.seconds);
	if (outdir) {
		if (cli_hang_write(&run, outdir, NULL))
			goto out;
		if (!json)
			fprintf(stderr, "perftracker: report: %s/PerfDisplay/index.html\n", outdir);
	}
	if (json) {
		pt_report *r = pt_hang_report(run.w, run.n, &run.opt, &run.res, &e);
		pt_sb sb = { 0 };

		if (!r) {
			error_pt(&e);
			goto out;
		}
		pt_report_json(pt_rv_get(pt_report_root_c(r), PT_KEY_HANG), 0, &sb);
		pt_sb_addc(&sb, '\n');
		if (!sb.oom)
			fwrite(sb.buf, 1, sb.len, stdout);
		pt_sb_free(&sb);
		pt_report_free(r);
	} else {
		print_text(&run);
	}
	rc = 0;
out:
	cli_hang_free(&run);
	x_free(all);
	return rc;
}
