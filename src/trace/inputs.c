/*
 * inputs.c - the input files of a diagnosis (see inputs.h): a path as
 * given, or a folder searched recursively by the one walker `analyze`,
 * `diagnose` and `compare` share.
 */
#include "inputs.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../trace/any.h"
#include "../util/xalloc.h"

static int ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);

	return n >= m && !strcmp(s + n - m, suf);
}

int pt_inputs_push(pt_inputs *f, const char *path, pt_error *err)
{
	if (X_GROW(f->v, f->cap, f->n + 1) || !(f->v[f->n] = x_strndup(path, strlen(path))))
		return pt_error_set(err, PT_ENOMEM, -1, "out of memory");
	f->n++;
	return PT_OK;
}

static int wanted(const char *name, int what)
{
	if (what == PT_INPUTS_SUMMARIES)
		return ends_with(name, ".json");
	/* Traces: Kineto JSON (plain or gzip) and Nsight Systems exports; the
	 * hardware samples beside them (docs/hardware.md) are not workers. */
	return (ends_with(name, ".json") || ends_with(name, ".json.gz") ||
		ends_with(name, ".sqlite")) &&
	       !ends_with(name, ".summary.json") && !pt_trace_is_samples_name(name);
}

/* Depth-limited so a symlink loop cannot recurse forever. */
static int walk(const char *dir, const struct stat *skip, pt_inputs_visit_fn *visit, void *ctx,
		int depth, pt_error *err)
{
	DIR *d;
	struct dirent *e;
	int rc = 0;

	if (depth > 64)
		return 0;
	d = opendir(dir);
	if (!d)
		return pt_error_set(err, PT_EIO, -1, "'%s': cannot open directory: %s", dir,
				    strerror(errno));
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
			rc = walk(path, skip, visit, ctx, depth + 1, err);
		} else if (S_ISREG(st.st_mode)) {
			rc = visit(ctx, path, e->d_name);
		}
	}
	closedir(d);
	return rc;
}

int pt_inputs_walk(const char *dir, const struct stat *skip, pt_inputs_visit_fn *visit, void *ctx,
		   pt_error *err)
{
	return walk(dir, skip, visit, ctx, 0, err);
}

typedef struct add_ctx {
	pt_inputs *f;
	int what;
	pt_error *err;
} add_ctx;

static int add_wanted(void *ctx, const char *path, const char *name)
{
	add_ctx *a = ctx;

	return wanted(name, a->what) ? pt_inputs_push(a->f, path, a->err) : 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int pt_inputs_add(pt_inputs *f, const char *path, int what, const char *skip, pt_error *err)
{
	struct stat st, sk;
	size_t first = f->n;
	add_ctx a = { f, what, err };
	int rc;

	if (stat(path, &st))
		return pt_error_set(err, PT_EIO, -1, "'%s': %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return pt_inputs_push(f, path, err);
	if ((rc = walk(path, skip && !stat(skip, &sk) ? &sk : NULL, add_wanted, &a, 0, err)))
		return rc;
	if (f->n == first) {
		if (f->nempty < sizeof(f->empty) / sizeof(f->empty[0]))
			f->empty[f->nempty] = path;
		f->nempty++;
	}
	if (f->n - first > 1)
		qsort(f->v + first, f->n - first, sizeof(*f->v), cmp_str);
	return PT_OK;
}

const char *pt_inputs_what(int what)
{
	return what == PT_INPUTS_TRACES ? "*.json, *.json.gz or *.sqlite traces" : "*.json summaries";
}

int pt_inputs_check(const pt_inputs *f, const char *cmd, int what, pt_error *err)
{
	if (!f->n && !f->nempty)
		return pt_error_set(err, PT_EINVAL, -1, "%s: no %s given (see --help)", cmd,
				    what == PT_INPUTS_TRACES ? "traces" : "summary files");
	if (!f->n && f->nempty == 1)
		return pt_error_set(err, PT_EINVAL, -1, "'%s': no %s found", f->empty[0],
				    pt_inputs_what(what));
	if (!f->n)
		return pt_error_set(err, PT_EINVAL, -1, "%s: no %s found in '%s' or the %zu other "
				    "folder%s given", cmd, pt_inputs_what(what), f->empty[0],
				    f->nempty - 1, f->nempty == 2 ? "" : "s");
	return PT_OK;
}

void pt_inputs_free(pt_inputs *f)
{
	for (size_t i = 0; i < f->n; i++)
		x_free(f->v[i]);
	x_free(f->v);
	f->v = NULL;
	f->n = f->cap = 0;
}
