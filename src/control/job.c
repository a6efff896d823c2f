/*
 * job.c - the job a process belongs to and the default folders that keep
 * jobs apart on one host (see job.h, docs/collector.md "Jobs on one
 * host"): the job id from the launcher's environment, its control
 * directory under <root>/jobs/, the spool folder per (control directory,
 * host), and the master's choice of job when it was not told.
 */
#include "job.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/xalloc.h"
#include "control.h"
#include "nodechan.h"

static const char *env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

int pt_job_id(char *out, size_t cap)
{
	const char *v, *a, *p;
	int n = -1;

	if (!cap)
		return 0;
	out[0] = 0;
	if ((v = env("PERFTRACKER_JOB")))
		n = snprintf(out, cap, "%s", v);
	/* torchrun's run id ("none" when it was not given one). */
	else if ((v = env("TORCHELASTIC_RUN_ID")) && strcmp(v, "none"))
		n = snprintf(out, cap, "%s", v);
	/* Every rank of a torch.distributed job has its rendezvous address,
	 * and two jobs on one host cannot share it. */
	else if ((a = env("MASTER_ADDR")) && (p = env("MASTER_PORT")))
		n = snprintf(out, cap, "%s:%s", a, p);
	else if ((v = env("SLURM_JOB_ID")))
		n = snprintf(out, cap, "slurm-%s", v);
	if (n < 0)
		out[0] = 0;
	return out[0] != 0;
}

void pt_job_dirname(char *out, size_t cap, const char *id)
{
	size_t o = 0, lim = cap > 129 ? 129 : cap;

	if (!cap)
		return;
	for (const char *p = id; *p && o + 1 < lim; p++) {
		char c = *p;
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			 c == '.' || c == '_' || c == '-';

		out[o++] = ok ? c : '-';
	}
	out[o] = 0;
	if (o == 0 && cap > 2)
		snprintf(out, cap, "-");
	if (out[0] == '.')
		out[0] = '-';
}

const char *pt_job_root(void)
{
	const char *r = env("PERFTRACKER_ROOT");

	return r ? r : "/tmp/perftracker";
}

int pt_job_dir(char *out, size_t cap, const char *id)
{
	char name[160];
	int n;

	pt_job_dirname(name, sizeof(name), id);
	n = snprintf(out, cap, "%s/jobs/%s", pt_job_root(), name);
	return n >= 0 && (size_t)n < cap ? 0 : -1;
}

static char default_dir[PT_CONTROL_PATH_MAX];
static pthread_once_t default_once = PTHREAD_ONCE_INIT;

static void default_init(void)
{
	const char *d = env("PERFTRACKER_CONTROL_DIR");
	char id[PT_JOB_ID_MAX];
	int n;

	if (d && strlen(d) < sizeof(default_dir)) {
		snprintf(default_dir, sizeof(default_dir), "%s", d);
		return;
	}
	if (pt_job_id(id, sizeof(id)) && pt_job_dir(default_dir, sizeof(default_dir), id) == 0)
		return;
	n = snprintf(default_dir, sizeof(default_dir), "%s/control", pt_job_root());
	if (n < 0 || (size_t)n >= sizeof(default_dir))
		snprintf(default_dir, sizeof(default_dir), "%s", PT_CONTROL_DEFAULT_DIR);
}

const char *pt_job_default_dir(void)
{
	pthread_once(&default_once, default_init);
	return default_dir;
}

int pt_job_spool_dir(char *out, size_t cap, const char *spool, const char *dir,
		     const char *host)
{
	char key[PT_CONTROL_HOST_MAX + 24];
	int n;

	if (pt_nodechan_key(key, sizeof(key), dir, host))
		return -1;
	n = snprintf(out, cap, "%s/%s", spool, key);
	return n >= 0 && (size_t)n < cap ? 0 : -1;
}

/* Count the live workers of control directory e->dir. */
static void count_live(pt_job_entry *e, double now, double stale_s, const char *node)
{
	pt_worker_entry *w = NULL;
	size_t n = 0;

	if (pt_nodechan_workers(e->dir, &w, &n, NULL))
		return;
	e->registered = n;
	for (size_t i = 0; i < n; i++)
		e->live += pt_control_worker_alive(&w[i], now, stale_s, node) != 0;
	x_free(w);
}

static int add_entry(pt_job_entry **out, size_t *n, size_t *cap, const char *dir,
		     const char *id)
{
	pt_job_entry *e;

	if (X_GROW(*out, *cap, *n + 1))
		return -1;
	e = &(*out)[(*n)++];
	memset(e, 0, sizeof(*e));
	snprintf(e->dir, sizeof(e->dir), "%s", dir);
	snprintf(e->id, sizeof(e->id), "%s", id);
	return 0;
}

int pt_job_list(pt_job_entry **out, size_t *n, double now, double stale_s, pt_error *err)
{
	char path[PT_CONTROL_PATH_MAX], node[PT_CONTROL_HOST_MAX];
	size_t cap = 0;
	DIR *d;
	struct dirent *de;
	int rc = PT_OK;

	*out = NULL;
	*n = 0;
	pt_control_nodename(node, sizeof(node));
	snprintf(path, sizeof(path), "%s/control", pt_job_root());
	if (add_entry(out, n, &cap, path, ""))
		goto oom;
	snprintf(path, sizeof(path), "%s/jobs", pt_job_root());
	if ((d = opendir(path))) {
		while ((de = readdir(d))) {
			char jd[PT_CONTROL_PATH_MAX];

			if (de->d_name[0] == '.' ||
			    (size_t)snprintf(jd, sizeof(jd), "%s/%s", path, de->d_name) >= sizeof(jd))
				continue;
			if (add_entry(out, n, &cap, jd, de->d_name)) {
				closedir(d);
				goto oom;
			}
		}
		closedir(d);
	}
	for (size_t i = 0; i < *n; i++)
		count_live(&(*out)[i], now, stale_s, node);
	return rc;
oom:
	x_free(*out);
	*out = NULL;
	*n = 0;
	return pt_error_set(err, PT_ENOMEM, -1, "out of memory");
}

int pt_job_resolve_dir(const char *job, char *out, size_t cap, double now, pt_error *err)
{
	char id[PT_JOB_ID_MAX];
	pt_job_entry *jobs = NULL;
	size_t n = 0, live = 0, pick = 0;
	int rc = PT_OK;

	if (job) {
		if (!*job || pt_job_dir(out, cap, job))
			return pt_error_set(err, PT_EINVAL, -1, "'%s' is not a job name", job);
		return PT_OK;
	}
	if (env("PERFTRACKER_CONTROL_DIR") || pt_job_id(id, sizeof(id))) {
		snprintf(out, cap, "%s", pt_job_default_dir());
		return PT_OK;
	}
	if ((rc = pt_job_list(&jobs, &n, now, 30, err)))
		return rc;
	for (size_t i = 0; i < n; i++)
		if (jobs[i].live) {
			live++;
			pick = i;
		}
	if (live > 1) {
		char list[2048];
		size_t o = 0;

		list[0] = 0;
		for (size_t i = 0; i < n && o + 1 < sizeof(list); i++) {
			int k;

			if (!jobs[i].live)
				continue;
			k = snprintf(list + o, sizeof(list) - o, "%s'%s' (%zu worker%s)", o ? ", " : "",
				     jobs[i].id[0] ? jobs[i].id : "(no job name)", jobs[i].live,
				     jobs[i].live == 1 ? "" : "s");
			if (k < 0)
				break;
			o += (size_t)k < sizeof(list) - o ? (size_t)k : sizeof(list) - o - 1;
		}
		rc = pt_error_set(err, PT_EINVAL, -1, "%zu jobs run under '%s': %s; name one with "
				  "--job NAME (or run with the job's MASTER_ADDR and MASTER_PORT, or "
				  "--control-dir)", live, pt_job_root(), list);
		goto out;
	}
	snprintf(out, cap, "%s", live ? jobs[pick].dir : jobs[0].dir);
out:
	x_free(jobs);
	return rc;
}
