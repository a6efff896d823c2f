/*
 * digest.c - `perftracker digest SUMMARY|DIR...`: write the digest beside
 * each worker summary that has none or an older one (docs/summary.md
 * "Digests"), so that summaries written before digests existed, or copied
 * without them, are read in two phases by `diagnose` too.  Summaries are
 * read and digests written on -j threads; one bad file is one line and
 * exit 1, never the end of the others.
 */
#include "cli.h"
#include "diagnose.h"
#include "analysis/digest.h"
#include "analysis/summary.h"
#include "util/file.h"
#include "util/pool.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static const cli_usage usage = {
	"digest",
	"perftracker digest SUMMARY|DIR... [-j N]",
	"Write the digest of each worker summary beside it (X.json -> X.digest): the few KB\n"
	"'diagnose' reads from every worker before it reads the full summaries of the\n"
	"workers it suspects.  'summarize -o', 'analyze --keep-summaries' and the node\n"
	"agent write digests themselves; this is for summaries written without them.\n",
	NULL,
};

typedef struct job {
	char *const *paths;
	char (*msg)[PT_ERROR_MSG_MAX + 600];
	size_t done;
} job;

static void one(void *ctx, size_t i)
{
	job *j = ctx;
	const char *path = j->paths[i];
	pt_summary *s = NULL;
	pt_sb dg = { 0 };
	pt_error e;
	char dpath[4096];
	struct stat st;

	pt_error_clear(&e);
	j->msg[i][0] = 0;
	if (stat(path, &st) || !(s = pt_summary_read_file(path, &e))) {
		if (!e.msg[0])
			pt_error_set(&e, PT_EIO, -1, "cannot read '%s'", path);
		pt_error_format(&e, j->msg[i], sizeof(j->msg[i]));
		goto out;
	}
	if (s->digest_of) {
		snprintf(j->msg[i], sizeof(j->msg[i]), "'%s': is a digest, not a summary", path);
		goto out;
	}
	if (pt_digest_path(path, dpath, sizeof(dpath))) {
		snprintf(j->msg[i], sizeof(j->msg[i]), "'%s': path too long", path);
		goto out;
	}
	if (pt_digest_write(s, (uint64_t)st.st_size, &dg) == PT_OK)
		pt_sb_addc(&dg, '\n');
	pt_error_clear(&e);
	pt_error_subject(&e, dpath);
	if (dg.oom)
		pt_error_set(&e, PT_ENOMEM, -1, "out of memory");
	else if (pt_file_write_atomic(dpath, dg.buf, dg.len, 0644, PT_FILE_DURABLE, &e) == PT_OK)
		__atomic_add_fetch(&j->done, 1, __ATOMIC_RELAXED);
	if (e.code)
		pt_error_format(&e, j->msg[i], sizeof(j->msg[i]));
out:
	pt_sb_free(&dg);
	pt_summary_free(s);
}

int cmd_digest(int argc, char **argv)
{
	cli_files l = { 0 };
	long jobs = 0;
	job j = { 0 };
	size_t i, bad = 0;
	int rc = -1, npos;
	const pt_opt opts[] = {
		PT_OPT_INT('j', "jobs", PT_TO(&jobs), "N",
			   "threads (default: online CPUs)"),
		PT_OPT_END(),
	};

	npos = cli_parse_options(&usage, opts, argc, argv);
	if (npos < 0)
		return npos == CLI_HELP ? 0 : -1;
	if (cli_files_args(&l, argv, npos, "digest", CLI_SUMMARIES))
		goto out;
	j.paths = l.v;
	j.msg = x_calloc(l.n, sizeof(*j.msg));
	if (!j.msg) {
		error("out of memory");
		goto out;
	}
	pt_pool_for(l.n, jobs, one, &j);
	for (i = 0; i < l.n; i++)
		if (j.msg[i][0]) {
			error("%s", j.msg[i]);
			bad++;
		}
	printf("perftracker: wrote %zu digest%s (%zu of %zu summaries could not be read)\n",
	       j.done, j.done == 1 ? "" : "s", bad, l.n);
	rc = bad ? -1 : 0;
out:
	x_free(j.msg);
	cli_files_free(&l);
	return rc;
}
