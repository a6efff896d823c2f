/*
 * control.c - the control-directory protocol (see control.h and
 * docs/collector.md): records as small JSON files written with
 * write-then-rename, one O_EXCL lock file per lock, no fcntl/flock locking
 * (NFS client implementations of it vary; rename and O_EXCL do not).
 * Linked into the CLI, the agent and the collector's Python extension.
 */
#include "control.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "../util/file.h"
#include "job.h"
#include "../util/json.h"
#include "../util/jsontok.h"
#include "../util/strbuf.h"
#include "../util/clock.h"
#include "../util/xalloc.h"

int pt_control_raw_policy(const char *s)
{
	if (!s)
		return -1;
	if (!strcmp(s, "none"))
		return PT_RAW_NONE;
	if (!strcmp(s, "master"))
		return PT_RAW_MASTER;
	if (!strcmp(s, "all"))
		return PT_RAW_ALL;
	return -1;
}

const char *pt_control_default_output(void)
{
	static char buf[PT_CONTROL_PATH_MAX];

	if (!buf[0] && (size_t)snprintf(buf, sizeof(buf), "%s/output", pt_job_root()) >= sizeof(buf))
		snprintf(buf, sizeof(buf), "%s", PT_CONTROL_DEFAULT_OUTPUT);
	return buf;
}

const char *pt_control_raw_name(int policy)
{
	switch (policy) {
	case PT_RAW_MASTER: return "master";
	case PT_RAW_ALL: return "all";
	default: return "none";
	}
}

const char *pt_control_default_dir(void)
{
	/* Per job when the environment names one (job.h): two jobs on one
	 * host with the default folders never share a control directory. */
	return pt_job_default_dir();
}

const char *pt_control_default_spool(void)
{
	const char *d = getenv("PERFTRACKER_SPOOL_DIR");

	static char buf[PT_CONTROL_PATH_MAX];

	if (d && *d)
		return d;
	/* <root>/spool ($PERFTRACKER_ROOT, job.h); the same on every call. */
	if (!buf[0] && (size_t)snprintf(buf, sizeof(buf), "%s/spool", pt_job_root()) >= sizeof(buf))
		snprintf(buf, sizeof(buf), "%s", PT_CONTROL_DEFAULT_SPOOL);
	return buf;
}

void pt_control_nodename(char *node, size_t cap)
{
	if (!cap)
		return;
	if (gethostname(node, cap) != 0 || !node[0])
		snprintf(node, cap, "localhost");
	node[cap - 1] = 0;
}

void pt_control_hostname(char *host, size_t cap)
{
	const char *h = getenv("PERFTRACKER_HOST");

	if (!cap)
		return;
	if (h && *h)
		snprintf(host, cap, "%s", h);
	else
		pt_control_nodename(host, cap);
	/* Host names end up in file names: keep them to a safe alphabet. */
	for (char *p = host; *p; p++)
		if (*p == '/' || *p == ' ' || (unsigned char)*p < 0x20)
			*p = '-';
}

double pt_control_now(void)
{
	return pt_clock_wall();
}

/* ---- files ------------------------------------------------------------------ */

/* Root on an NFS or Lustre mount with root squashing creates files as
 * the overflow user (nobody): there a directory of the overflow user is
 * root's own.  (Not tested here: no such mount on the test machines.) */
static int squashed_root(const char *path, const struct stat *st)
{
	struct statfs fs;
	long overflow = 65534;
	FILE *f;

	if (geteuid() != 0 || statfs(path, &fs) != 0 ||
	    (fs.f_type != 0x6969 /* NFS */ && fs.f_type != 0x0bd00bd0 /* Lustre */))
		return 0;
	f = fopen("/proc/sys/fs/overflowuid", "re");
	if (f) {
		if (fscanf(f, "%ld", &overflow) != 1)
			overflow = 65534;
		fclose(f);
	}
	return (long)st->st_uid == overflow;
}

/* May we use this directory (a component of a path we write under)?
 * The rule (docs/collector.md, "Directories and other users"): the
 * directory we write in, and every directory below the first one we own,
 * must be ours (root's too, for the ones in between); a directory above
 * ours may belong to anyone but must not be writable by everyone unless it
 * is root's and sticky (/tmp).  A symbolic link counts as its owner's.
 * Group-writable directories are fine: the job's group is trusted (shared
 * file systems). */
static int check_component(const char *path, int final, int *below_ours, pt_error *err)
{
	struct stat st;
	uid_t me = geteuid();

	if (lstat(path, &st) != 0)
		goto io;
	if (S_ISLNK(st.st_mode)) {
		if (st.st_uid != me && st.st_uid != 0) {
			pt_error_subject(err, path);
			return pt_error_set(err, PT_EPERM, -1,
					    "is a symbolic link owned by another user (uid %ld): "
					    "refusing to use it", (long)st.st_uid);
		}
		if (stat(path, &st) != 0)
			goto io;
	}
	if (!S_ISDIR(st.st_mode)) {
		pt_error_subject(err, path);
		return final ? pt_error_set(err, PT_EIO, -1, "not a directory")
			     : pt_error_set(err, PT_EIO, -1, "cannot create directory: %s",
					    strerror(ENOTDIR));
	}
	if (st.st_uid == me || squashed_root(path, &st)) {
		*below_ours = 1;
		return PT_OK;
	}
	if (final || (*below_ours && st.st_uid != 0)) {
		pt_error_subject(err, path);
		return pt_error_set(err, PT_EPERM, -1,
				    "directory owned by another user (uid %ld): refusing to use it",
				    (long)st.st_uid);
	}
	if ((st.st_mode & S_IWOTH) && !((st.st_mode & S_ISVTX) && st.st_uid == 0)) {
		pt_error_subject(err, path);
		return pt_error_set(err, PT_EPERM, -1,
				    "directory writable by every user (mode %04o) and not ours: "
				    "refusing to use it", (unsigned)(st.st_mode & 07777));
	}
	return PT_OK;
io:
	pt_error_subject(err, path);
	return pt_error_set(err, PT_EIO, -1, "%s", strerror(errno));
}

/* pt_file_mkdirs's judge: below_ours carries from one component to the
 * next. */
static int judge_component(const char *dir, int last, void *below_ours, pt_error *err)
{
	return check_component(dir, last, below_ours, err);
}

int pt_control_mkdirs(const char *path, pt_error *err)
{
	int below_ours = 0;

	/* No world-writable bit: only this user's jobs (and its group's,
	 * umask permitting) may use what we create. */
	return pt_file_mkdirs(path, 0775, judge_component, &below_ours, err);
}

static int write_record(const char *path, const void *buf, size_t len, unsigned flags,
			pt_error *err)
{
	char dirbuf[PT_CONTROL_PATH_MAX];
	const char *slash = strrchr(path, '/');
	int rc;
	pt_error e2;

	/* Records are world-readable (other users' status commands may read
	 * them); only the temporary's name must be unguessable. */
	pt_error_clear(&e2);
	rc = pt_file_write_atomic(path, buf, len, 0644, flags, &e2);
	if (rc && errno == ENOENT && slash && slash != path) {
		size_t dl = (size_t)(slash - path);

		if (dl >= sizeof(dirbuf))
			return pt_error_set(err, PT_EINVAL, -1, "path too long");
		memcpy(dirbuf, path, dl);
		dirbuf[dl] = 0;
		rc = pt_control_mkdirs(dirbuf, err);
		if (rc)
			return rc;
		pt_error_clear(&e2);
		rc = pt_file_write_atomic(path, buf, len, 0644, flags, &e2);
	}
	if (rc && err)
		*err = e2;
	return rc;
}

int pt_control_write_atomic(const char *path, const void *buf, size_t len, pt_error *err)
{
	return write_record(path, buf, len, 0, err);
}

int pt_control_write_durable(const char *path, const void *buf, size_t len, pt_error *err)
{
	return write_record(path, buf, len, PT_FILE_DURABLE, err);
}

int pt_control_read_file(const char *path, size_t max, char **out, size_t *len, pt_error *err)
{
	int fd, rc, e;
	struct stat st;
	size_t n = 0;

	*out = NULL;
	if (len)
		*len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		pt_error_subject(err, path);
		return pt_error_set(err, PT_EIO, -1, "%s",
				    e == ENOENT ? "no such file" : strerror(e));
	}
	/* Only regular files: not a directory or a device put where a record
	 * belongs. */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		pt_error_subject(err, path);
		rc = pt_error_set(err, PT_EIO, -1, "not a regular file");
		goto out;
	}
	/* The size may change under us on a shared file system: read to EOF. */
	rc = pt_file_read_fd(fd, max, out, &n, err);
	if (rc) {
		*out = NULL;
		pt_error_subject(err, path);
		goto out;
	}
	if (len)
		*len = n;
out:
	close(fd);
	return rc;
}

int pt_control_is_record(const char *name)
{
	size_t n = strlen(name);

	return name[0] != '.' && n > 5 && !strcmp(name + n - 5, ".json");
}

int pt_control_path(char *out, size_t cap, const char *dir, const char *name)
{
	return (size_t)snprintf(out, cap, "%s/%s", dir, name) < cap ? 0 : -1;
}

int pt_control_record_path(char *out, size_t cap, const char *dir, const char *sub,
			   const char *tid, const char *wid)
{
	int n;

	if (tid && wid)
		n = snprintf(out, cap, "%s/%s/%s/%s.json", dir, sub, tid, wid);
	else if (tid)
		n = snprintf(out, cap, "%s/%s/%s", dir, sub, tid);
	else if (wid)
		n = snprintf(out, cap, "%s/%s/%s.json", dir, sub, wid);
	else
		n = snprintf(out, cap, "%s/%s", dir, sub);
	return n >= 0 && (size_t)n < cap ? 0 : -1;
}

static int path_err(pt_error *err)
{
	return pt_error_set(err, PT_EINVAL, -1, "path too long");
}

/* Write the JSON in sb atomically to path, then free sb. */
static int write_sb(const char *path, pt_sb *sb, pt_error *err)
{
	int rc;

	if (sb->oom) {
		pt_sb_free(sb);
		return pt_error_set(err, PT_ENOMEM, -1, "out of memory");
	}
	rc = pt_control_write_atomic(path, sb->buf, sb->len, err);
	pt_sb_free(sb);
	return rc;
}

static pt_json *read_json(const char *path, pt_error *err)
{
	char *buf = NULL;
	size_t len;
	pt_json *j;

	if (pt_control_read_file(path, PT_CONTROL_RECORD_MAX, &buf, &len, err))
		return NULL;
	j = pt_json_parse(buf, len, err);
	if (!j)
		pt_error_subject(err, path);
	else if (j->type != PT_JSON_OBJ) {
		pt_json_free(j);
		j = NULL;
		pt_error_subject(err, path);
		pt_error_set(err, PT_EFORMAT, -1, "not a json object");
	}
	x_free(buf);
	return j;
}

static void add_kstr(pt_sb *sb, const char *key, const char *val)
{
	pt_sb_add_json_key(sb, key, 0);
	pt_sb_add_json_str(sb, val, strlen(val));
}

/* ---- workers ---------------------------------------------------------------- */

void pt_control_worker_id(char *out, size_t cap, const char *host, int64_t rank, int64_t pid)
{
	snprintf(out, cap, "%s_%lld_%lld", host, (long long)rank, (long long)pid);
}

int pt_control_register(const char *dir, const pt_worker_info *w, pt_error *err)
{
	char path[PT_CONTROL_PATH_MAX];
	pt_sb sb = { 0 };

	if (pt_control_record_path(path, sizeof(path), dir, "workers", NULL, w->id))
		return path_err(err);
	pt_sb_adds(&sb, "{\"format\":\"perftracker-worker\"");
	pt_sb_add_json_i64(&sb, "version", PT_CONTROL_VERSION);
	add_kstr(&sb, "id", w->id);
	add_kstr(&sb, "host", w->host);
	add_kstr(&sb, "node", w->node);
	pt_sb_add_json_i64(&sb, "rank", w->rank);
	pt_sb_add_json_i64(&sb, "local_rank", w->local_rank);
	pt_sb_add_json_i64(&sb, "world_size", w->world_size);
	pt_sb_add_json_i64(&sb, "local_world_size", w->local_world_size);
	pt_sb_add_json_i64(&sb, "pid", w->pid);
	pt_sb_add_json_dbl(&sb, "started", w->started);
	pt_sb_adds(&sb, "}\n");
	return write_sb(path, &sb, err);
}

int pt_control_unregister(const char *dir, const char *id, pt_error *err)
{
	char path[PT_CONTROL_PATH_MAX];
	int rc = PT_OK;

	if (pt_control_record_path(path, sizeof(path), dir, "workers", NULL, id))
		return path_err(err);
	if (unlink(path) != 0 && errno != ENOENT) {
		pt_error_subject(err, path);
		rc = pt_error_set(err, PT_EIO, -1, "cannot remove: %s", strerror(errno));
	}
	if (pt_control_record_path(path, sizeof(path), dir, "heartbeats", NULL, id))
		return path_err(err);
	if (unlink(path) != 0 && errno != ENOENT && rc == PT_OK) {
		pt_error_subject(err, path);
		rc = pt_error_set(err, PT_EIO, -1, "cannot remove: %s", strerror(errno));
	}
	/* The last stack dump goes with the registration. */
	if (pt_control_stacks_path(path, sizeof(path), dir, id) == 0)
		unlink(path);
	return rc;
}

int pt_control_worker_info_read(const pt_json *j, pt_worker_info *w)
{
	memset(w, 0, sizeof(*w));
	pt_json_copy_str(w->id, sizeof(w->id), j, "id");
	pt_json_copy_str(w->host, sizeof(w->host), j, "host");
	pt_json_copy_str(w->node, sizeof(w->node), j, "node");
	w->rank = pt_json_i64(j, "rank", -1);
	w->local_rank = pt_json_i64(j, "local_rank", -1);
	w->world_size = pt_json_i64(j, "world_size", -1);
	w->local_world_size = pt_json_i64(j, "local_world_size", -1);
	w->pid = pt_json_i64(j, "pid", -1);
	w->started = pt_json_num(j, "started", 0);
	return w->id[0] ? 0 : -1;
}

static int parse_worker(const pt_json *j, pt_worker_info *w)
{
	if (strcmp(pt_json_strv(j, "format", ""), "perftracker-worker")) {
		memset(w, 0, sizeof(*w));
		return -1;
	}
	return pt_control_worker_info_read(j, w);
}

int pt_control_heartbeat_write(const char *dir, const char *id, const pt_heartbeat *h,
			       pt_error *err)
{
	char path[PT_CONTROL_PATH_MAX];
	pt_sb sb = { 0 };

	if (pt_control_record_path(path, sizeof(path), dir, "heartbeats", NULL, id))
		return path_err(err);
	pt_sb_adds(&sb, "{\"format\":\"perftracker-heartbeat\"");
	pt_sb_add_json_i64(&sb, "step", h->step);
	pt_sb_add_json_dbl(&sb, "step_time", h->step_time);
	pt_sb_add_json_dbl(&sb, "time", h->time);
	pt_sb_add_json_dbl(&sb, "rate", h->rate);
	add_kstr(&sb, "state", h->state);
	add_kstr(&sb, "trigger", h->trigger);
	pt_sb_adds(&sb, "}\n");
	return write_sb(path, &sb, err);
}

static void parse_hb(const pt_json *j, pt_heartbeat *h)
{
	memset(h, 0, sizeof(*h));
	h->step = pt_json_i64(j, "step", 0);
	h->step_time = pt_json_num(j, "step_time", 0);
	h->time = pt_json_num(j, "time", 0);
	h->rate = pt_json_num(j, "rate", 0);
	pt_json_copy_str(h->state, sizeof(h->state), j, "state");
	pt_json_copy_str(h->trigger, sizeof(h->trigger), j, "trigger");
}

int pt_control_heartbeat_read(const char *dir, const char *id, pt_heartbeat *h, pt_error *err)
{
	char path[PT_CONTROL_PATH_MAX];
	pt_json *j;

	if (pt_control_record_path(path, sizeof(path), dir, "heartbeats", NULL, id))
		return path_err(err);
	j = read_json(path, err);
	if (!j)
		return err ? err->code : PT_EIO;
	parse_hb(j, h);
	pt_json_free(j);
	return PT_OK;
}

static int cmp_entry(const void *a, const void *b)
{
	const pt_worker_entry *x = a, *y = b;
	int c = strcmp(x->info.host, y->info.host);

	if (c)
		return c;
	if (x->info.rank != y->info.rank)
		return x->info.rank < y->info.rank ? -1 : 1;
	if (x->info.pid != y->info.pid)
		return x->info.pid < y->info.pid ? -1 : 1;
	return 0;
}

int pt_control_workers(const char *dir, pt_worker_entry **out, size_t *n, pt_error *err)
{
	char **names = NULL;
	size_t nn = 0, cap = 0, cnt = 0;
	pt_worker_entry *arr = NULL;
	int rc;

	*out = NULL;
	*n = 0;
	rc = pt_control_list(dir, "workers", NULL, &names, &nn, err);
	if (rc)
		return rc;
	for (size_t i = 0; i < nn; i++) {
		char path[PT_CONTROL_PATH_MAX];
		pt_json *j;
		pt_worker_entry e;

		if (pt_control_record_path(path, sizeof(path), dir, "workers", NULL, names[i]))
			continue;
		j = read_json(path, NULL);
		if (!j)
			continue;
		memset(&e, 0, sizeof(e));
		if (parse_worker(j, &e.info) == 0) {
			e.has_hb = pt_control_heartbeat_read(dir, e.info.id, &e.hb, NULL) == PT_OK;
			if (X_GROW(arr, cap, cnt + 1)) {
				pt_json_free(j);
				rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
				goto out;
			}
			arr[cnt++] = e;
		}
		pt_json_free(j);
	}
	if (cnt)
		qsort(arr, cnt, sizeof(*arr), cmp_entry);
	*out = arr;
	*n = cnt;
	arr = NULL;
out:
	x_free(arr);
	pt_control_names_free(names, nn);
	return rc;
}

static int pid_exists(int64_t pid)
{
	char path[64], buf[256];
	const char *p;
	FILE *f;
	int alive;

	if (pid <= 0 || pid > INT_MAX)
		return 0;
	alive = kill((pid_t)pid, 0) == 0 || errno == EPERM;
	if (!alive)
		return 0;
	/* A killed worker whose parent has not reaped it yet is a zombie:
	 * kill() still succeeds, but it will never write again. */
	snprintf(path, sizeof(path), "/proc/%lld/stat", (long long)pid);
	f = fopen(path, "re");
	if (!f)
		return 1;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) && p[1] == ' ' && p[2] == 'Z')
		alive = 0;
	fclose(f);
	return alive;
}

int pt_control_worker_alive(const pt_worker_entry *w, double now, double stale_s,
			    const char *local_node)
{
	if (local_node && w->info.node[0] && !strcmp(w->info.node, local_node) &&
	    !pid_exists(w->info.pid))
		return 0;
	if (!w->has_hb)
		return now - w->info.started < stale_s;
	return now - w->hb.time < stale_s;
}

int pt_control_worker_dead(const pt_worker_entry *w, const char *local_node)
{
	return local_node && w->info.node[0] && !strcmp(w->info.node, local_node) &&
	       !pid_exists(w->info.pid);
}

/* ---- trigger ---------------------------------------------------------------- */

int pt_control_trigger_write(const char *dir, const pt_trigger *t, pt_error *err)
{
	char path[PT_CONTROL_PATH_MAX], node[PT_CONTROL_HOST_MAX];
	pt_sb sb = { 0 };

	if (pt_control_path(path, sizeof(path), dir, "trigger.json"))
		return path_err(err);
	pt_sb_adds(&sb, "{\"format\":\"perftracker-trigger\"");
	pt_sb_add_json_i64(&sb, "version", PT_CONTROL_VERSION);
	add_kstr(&sb, "id", t->id);
	add_kstr(&sb, "state", t->state);
	pt_sb_add_json_i64(&sb, "start_step", t->start_step);
	pt_sb_add_json_i64(&sb, "steps", t->steps);
	pt_sb_add_json_i64(&sb, "wait", t->wait);
	add_kstr(&sb, "save_raw_trace", pt_control_raw_name(t->save_raw));
	add_kstr(&sb, "run_dir", t->run_dir);
	add_kstr(&sb, "raw_dir", t->raw_dir);
	pt_sb_add_json_dbl(&sb, "created", t->created);
	pt_sb_add_json_dbl(&sb, "deadline", t->deadline);
	add_kstr(&sb, "host", t->host);
	pt_control_nodename(node, sizeof(node));
	add_kstr(&sb, "node", node);
	pt_sb_add_json_i64(&sb, "pid", t->pid);
	add_kstr(&sb, "reason", t->reason);
	pt_sb_add_json_i64(&sb, "nsys_gpu_metrics", t->nsys_gpu_metrics);
	pt_sb_add_json_i64(&sb, "round", t->round);
	pt_sb_add_json_i64(&sb, "rounds", t->rounds);
	add_kstr(&sb, "first_id", t->first_id[0] ? t->first_id : t->id);
	pt_sb_add_json_key(&sb, "workers", 0);
	pt_sb_addc(&sb, '[');
	for (size_t i = 0; i < t->nworkers; i++) {
		if (i)
			pt_sb_addc(&sb, ',');
		pt_sb_add_json_str(&sb, t->workers[i], strlen(t->workers[i]));
	}
	pt_sb_adds(&sb, "]}\n");
	return write_sb(path, &sb, err);
}

void pt_control_trigger_clear(pt_trigger *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nworkers; i++)
		x_free(t->workers[i]);
	x_free(t->workers);
	t->workers = NULL;
	t->nworkers = 0;
}

int pt_control_trigger_add_worker(pt_trigger *t, const char *id)
{
	char **nw = x_reallocarray(t->workers, t->nworkers + 1, sizeof(char *));
	char *s;

	if (!nw)
		return PT_ENOMEM;
	t->workers = nw;
	s = x_strndup(id, strlen(id));
	if (!s)
		return PT_ENOMEM;
	t->workers[t->nworkers++] = s;
	return PT_OK;
}

int pt_control_trigger_read(const char *dir, pt_trigger *t, pt_error *err)
{
	char path[PT_CONTROL_PATH_MAX];
	pt_error e2;
	pt_json *j;
	const pt_json *ws;
	int rc = PT_OK;

	memset(t, 0, sizeof(*t));
	if (pt_control_path(path, sizeof(path), dir, "trigger.json"))
		return path_err(err);
	pt_error_clear(&e2);
	j = read_json(path, &e2);
	if (!j) {
		if (e2.code == PT_EIO && !strcmp(e2.msg, "no such file"))
			return PT_OK;
		if (err)
			*err = e2;
		return e2.code;
	}
	if (strcmp(pt_json_strv(j, "format", ""), "perftracker-trigger")) {
		pt_error_subject(err, path);
		rc = pt_error_set(err, PT_EFORMAT, -1, "not a perftracker trigger");
		goto out;
	}
	pt_json_copy_str(t->id, sizeof(t->id), j, "id");
	pt_json_copy_str(t->state, sizeof(t->state), j, "state");
	t->start_step = pt_json_i64(j, "start_step", 0);
	t->steps = pt_json_i64(j, "steps", 0);
	t->wait = pt_json_i64(j, "wait", 0);
	t->save_raw = pt_control_raw_policy(pt_json_strv(j, "save_raw_trace", "none"));
	if (t->save_raw < 0)
		t->save_raw = PT_RAW_NONE;
	pt_json_copy_str(t->run_dir, sizeof(t->run_dir), j, "run_dir");
	pt_json_copy_str(t->raw_dir, sizeof(t->raw_dir), j, "raw_dir");
	t->created = pt_json_num(j, "created", 0);
	t->deadline = pt_json_num(j, "deadline", 0);
	pt_json_copy_str(t->host, sizeof(t->host), j, "host");
	pt_json_copy_str(t->node, sizeof(t->node), j, "node");
	t->pid = pt_json_i64(j, "pid", -1);
	pt_json_copy_str(t->reason, sizeof(t->reason), j, "reason");
	/* Its owner was killed: inactive now, not at its deadline. */
	if (!strcmp(t->state, PT_TRIGGER_ACTIVE) && t->node[0] && t->pid > 0) {
		char node[PT_CONTROL_HOST_MAX];

		pt_control_nodename(node, sizeof(node));
		if (!strcmp(node, t->node) && !pid_exists(t->pid))
			snprintf(t->state, sizeof(t->state), "%s", PT_TRIGGER_DONE);
	}
	t->nsys_gpu_metrics = pt_json_i64(j, "nsys_gpu_metrics", 0);
	if (t->nsys_gpu_metrics < 0)
		t->nsys_gpu_metrics = 0;
	t->round = pt_json_i64(j, "round", 0);
	t->rounds = pt_json_i64(j, "rounds", 0);
	pt_json_copy_str(t->first_id, sizeof(t->first_id), j, "first_id");
	ws = pt_json_get(j, "workers");
	if (ws && ws->type == PT_JSON_ARR) {
		for (const pt_json *c = ws->child; c; c = c->next) {
			if (c->type != PT_JSON_STR)
				continue;
			if (pt_control_trigger_add_worker(t, c->str)) {
				rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
				goto out;
			}
		}
	}
	if (!t->id[0] || t->steps <= 0) {
		pt_error_subject(err, path);
		rc = pt_error_set(err, PT_EFORMAT, -1, "trigger without id or steps");
	}
out:
	if (rc) {
		pt_control_trigger_clear(t);
		t->id[0] = 0;
	}
	pt_json_free(j);
	return rc;
}

void pt_control_trigger_id(char *out, size_t cap, double now)
{
	time_t s = (time_t)now;
	struct tm tm;
	char ts[32];
	unsigned r;

	localtime_r(&s, &tm);
	strftime(ts, sizeof(ts), "%Y%m%d-%H%M%S", &tm);
	r = (unsigned)(pt_clock_mono_ns() % 1000000000 ^ (getpid() * 2654435761u) ^ (unsigned)(now * 1e6));
	snprintf(out, cap, "%s-%04x", ts, (r ^ (r >> 16)) & 0xffff);
}

/* ---- locks ------------------------------------------------------------------ */

int pt_control_lock(const char *path, const char *content, char *holder, size_t cap,
		    pt_error *err)
{
	int fd, e;
	size_t n = strlen(content);

	if (holder && cap)
		holder[0] = 0;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 && errno == ENOENT) {
		char dirbuf[PT_CONTROL_PATH_MAX];
		const char *slash = strrchr(path, '/');

		if (slash && (size_t)(slash - path) < sizeof(dirbuf)) {
			memcpy(dirbuf, path, (size_t)(slash - path));
			dirbuf[slash - path] = 0;
			if (pt_control_mkdirs(dirbuf, err))
				return err ? err->code : PT_EIO;
		}
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	}
	if (fd < 0) {
		e = errno;
		if (e == EEXIST) {
			char *buf = NULL;

			if (holder && cap &&
			    pt_control_read_file(path, 1 << 16, &buf, NULL, NULL) == PT_OK) {
				snprintf(holder, cap, "%s", buf);
				x_free(buf);
			}
			return 1;
		}
		pt_error_subject(err, path);
		return pt_error_set(err, PT_EIO, -1, "cannot create lock: %s", strerror(e));
	}
	if (pt_file_write_all(fd, content, n) != 0 || close(fd) != 0) {
		e = errno;
		unlink(path);
		pt_error_subject(err, path);
		return pt_error_set(err, PT_EIO, -1, "cannot write lock: %s", strerror(e));
	}
	return PT_OK;
}

int pt_control_unlock(const char *path, pt_error *err)
{
	if (unlink(path) != 0 && errno != ENOENT) {
		pt_error_subject(err, path);
		return pt_error_set(err, PT_EIO, -1, "cannot remove lock: %s", strerror(errno));
	}
	return PT_OK;
}

int pt_control_lock_stale(const char *path, const char *holder_json, double now,
			  const char *local_node)
{
	pt_json *j = holder_json ? pt_json_parse(holder_json, strlen(holder_json), NULL) : NULL;
	int stale = 0;

	if (!j || j->type != PT_JSON_OBJ) {
		struct stat st;

		/* Unparsable: a writer died between O_EXCL and write, or is
		 * writing right now.  Give it a minute. */
		if (path && stat(path, &st) == 0 && now - (double)st.st_mtime > 60)
			stale = 1;
		goto out;
	}
	if (pt_json_num(j, "deadline", 0) > 0 && now > pt_json_num(j, "deadline", 0)) {
		stale = 1;
		goto out;
	}
	if (local_node && !strcmp(pt_json_strv(j, "node", ""), local_node) &&
	    !pid_exists(pt_json_i64(j, "pid", -1)))
		stale = 1;
out:
	pt_json_free(j);
	return stale;
}

/* ---- per-trigger records ---------------------------------------------------- */

int pt_control_status_write(const char *dir, const char *tid, const char *wid,
			    const pt_wstatus *s, pt_error *err)
{
	char path[PT_CONTROL_PATH_MAX];
	pt_sb sb = { 0 };

	if (pt_control_record_path(path, sizeof(path), dir, "status", tid, wid))
		return path_err(err);
	pt_sb_adds(&sb, "{\"format\":\"perftracker-status\"");
	add_kstr(&sb, "state", s->state);
	add_kstr(&sb, "host", s->host);
	pt_sb_add_json_i64(&sb, "rank", s->rank);
	pt_sb_add_json_i64(&sb, "start_step", s->start_step);
	pt_sb_add_json_i64(&sb, "end_step", s->end_step);
	pt_sb_add_json_dbl(&sb, "time", s->time);
	add_kstr(&sb, "trace", s->trace);
	add_kstr(&sb, "error", s->error);
	pt_sb_adds(&sb, "}\n");
	return write_sb(path, &sb, err);
}

int pt_control_status_read(const char *dir, const char *tid, const char *wid, pt_wstatus *s,
			   pt_error *err)
{
	char path[PT_CONTROL_PATH_MAX];
	pt_json *j;

	memset(s, 0, sizeof(*s));
	if (pt_control_record_path(path, sizeof(path), dir, "status", tid, wid))
		return path_err(err);
	j = read_json(path, err);
	if (!j)
		return err ? err->code : PT_EIO;
	pt_json_copy_str(s->state, sizeof(s->state), j, "state");
	pt_json_copy_str(s->host, sizeof(s->host), j, "host");
	s->rank = pt_json_i64(j, "rank", -1);
	s->start_step = pt_json_i64(j, "start_step", -1);
	s->end_step = pt_json_i64(j, "end_step", -1);
	s->time = pt_json_num(j, "time", 0);
	pt_json_copy_str(s->trace, sizeof(s->trace), j, "trace");
	pt_json_copy_str(s->error, sizeof(s->error), j, "error");
	pt_json_free(j);
	return PT_OK;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void pt_control_names_free(char **names, size_t n)
{
	if (!names)
		return;
	for (size_t i = 0; i < n; i++)
		x_free(names[i]);
	x_free(names);
}

int pt_control_list(const char *dir, const char *sub, const char *tid, char ***names,
		    size_t *n, pt_error *err)
{
	char path[PT_CONTROL_PATH_MAX];
	DIR *d;
	struct dirent *de;
	char **arr = NULL;
	size_t cnt = 0, cap = 0;
	int rc = PT_OK;

	*names = NULL;
	*n = 0;
	if (pt_control_record_path(path, sizeof(path), dir, sub, tid, NULL))
		return path_err(err);
	d = opendir(path);
	if (!d) {
		if (errno == ENOENT)
			return PT_OK;
		pt_error_subject(err, path);
		return pt_error_set(err, PT_EIO, -1, "cannot list: %s", strerror(errno));
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char *s;

		if (!pt_control_is_record(de->d_name))
			continue;
		if (X_GROW(arr, cap, cnt + 1) || !(s = x_strndup(de->d_name, len - 5))) {
			rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
			goto out;
		}
		arr[cnt++] = s;
	}
	if (cnt)
		qsort(arr, cnt, sizeof(*arr), cmp_str);
	*names = arr;
	*n = cnt;
	arr = NULL;
	cnt = 0;
out:
	pt_control_names_free(arr, cnt);
	closedir(d);
	return rc;
}

int pt_control_remove_dir(const char *dir, const char *sub, const char *tid, pt_error *err)
{
	char path[PT_CONTROL_PATH_MAX];
	DIR *d;
	struct dirent *de;
	int rc = PT_OK, fd;

	if (pt_control_record_path(path, sizeof(path), dir, sub, tid, NULL))
		return path_err(err);
	/* Never through a link: one planted in place of the folder would make
	 * us empty the folder it points to.  The link itself goes. */
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return PT_OK;
		if ((errno == ELOOP || errno == ENOTDIR) && unlink(path) == 0)
			return PT_OK;
		pt_error_subject(err, path);
		return pt_error_set(err, PT_EIO, -1, "cannot list: %s", strerror(errno));
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		pt_error_subject(err, path);
		return pt_error_set(err, PT_EIO, -1, "cannot list: %s", strerror(errno));
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (unlinkat(fd, de->d_name, 0) != 0 && errno != ENOENT && rc == PT_OK) {
			pt_error_subject(err, path);
			rc = pt_error_set(err, PT_EIO, -1, "cannot remove '%s': %s", de->d_name,
					  strerror(errno));
		}
	}
	closedir(d);
	if (rmdir(path) != 0 && errno != ENOENT && rc == PT_OK) {
		pt_error_subject(err, path);
		rc = pt_error_set(err, PT_EIO, -1, "cannot remove: %s", strerror(errno));
	}
	return rc;
}

/* ---- agents ----------------------------------------------------------------- */

int pt_control_agent_lock_path(char *out, size_t cap, const char *dir, const char *host)
{
	return (size_t)snprintf(out, cap, "%s/agents/%s.lock", dir, host) < cap ? 0 : -1;
}

int pt_control_agent_hb_path(char *out, size_t cap, const char *dir, const char *host)
{
	return (size_t)snprintf(out, cap, "%s/agents/%s.json", dir, host) < cap ? 0 : -1;
}

int pt_control_agent_running(const char *dir, const char *host, double now, double stale_s)
{
	char path[PT_CONTROL_PATH_MAX], node[PT_CONTROL_HOST_MAX];
	char *buf = NULL;
	pt_json *j = NULL;
	int running = 0;

	if (pt_control_agent_lock_path(path, sizeof(path), dir, host))
		return 0;
	if (pt_control_read_file(path, 1 << 16, &buf, NULL, NULL))
		return 0;
	pt_control_nodename(node, sizeof(node));
	j = pt_json_parse(buf, strlen(buf), NULL);
	if (!j || j->type != PT_JSON_OBJ) {
		/* Being written right now, or left by a crash: see lock_stale. */
		running = !pt_control_lock_stale(path, buf, now, node);
		goto out;
	}
	if (!strcmp(pt_json_strv(j, "node", ""), node)) {
		running = pid_exists(pt_json_i64(j, "pid", -1));
	} else {
		pt_json *hb;
		char hbp[PT_CONTROL_PATH_MAX];

		if (pt_control_agent_hb_path(hbp, sizeof(hbp), dir, host))
			goto out;
		/* No heartbeat yet: the agent has just started. */
		hb = read_json(hbp, NULL);
		running = now - (hb ? pt_json_num(hb, "time", 0) : pt_json_num(j, "started", 0)) <
			  stale_s;
		pt_json_free(hb);
	}
out:
	pt_json_free(j);
	x_free(buf);
	return running;
}

/* ---- stacks ----------------------------------------------------------------- */

int pt_control_stacks_dir(char *out, size_t cap, const char *dir)
{
	return (size_t)snprintf(out, cap, "%s/stacks", dir) < cap ? 0 : -1;
}

int pt_control_stacks_path(char *out, size_t cap, const char *dir, const char *wid)
{
	return (size_t)snprintf(out, cap, "%s/stacks/%s.txt", dir, wid) < cap ? 0 : -1;
}

int pt_control_stacks_request_path(char *out, size_t cap, const char *dir)
{
	return (size_t)snprintf(out, cap, "%s/stacks/request.json", dir) < cap ? 0 : -1;
}

int pt_control_stacks_request(const char *dir, char *id, size_t cap, pt_error *err)
{
	char path[PT_CONTROL_PATH_MAX], host[PT_CONTROL_HOST_MAX], rid[PT_CONTROL_TID_MAX];
	char sdir[PT_CONTROL_PATH_MAX];
	double now = pt_control_now();
	int rc;
	pt_sb sb = { 0 };

	if (pt_control_stacks_request_path(path, sizeof(path), dir) ||
	    pt_control_stacks_dir(sdir, sizeof(sdir), dir))
		return path_err(err);
	/* A stacks/ another user could write through is refused. */
	if ((rc = pt_control_mkdirs(sdir, err)))
		return rc;
	/* Two requests within one second must differ: add milliseconds. */
	pt_control_trigger_id(rid, sizeof(rid), now);
	snprintf(id, cap, "%s-%03ld", rid, (long)(pt_clock_wall_ns() / 1000000 % 1000));
	pt_control_hostname(host, sizeof(host));
	pt_sb_adds(&sb, "{\"format\":\"perftracker-stack-request\"");
	add_kstr(&sb, "id", id);
	pt_sb_add_json_dbl(&sb, "time", now);
	add_kstr(&sb, "host", host);
	pt_sb_add_json_i64(&sb, "pid", (int64_t)getpid());
	pt_sb_adds(&sb, "}\n");
	return write_sb(path, &sb, err);
}

/* The tokenizer of util/jsontok.h over the record, without allocating:
 * the watchdog calls this while the hung process may hold any lock. */
int pt_control_stacks_request_parse(const char *text, char *id, size_t cap, double *time)
{
	static const pt_jtok_name names[] = { PT_JTOK_NAME("id"), PT_JTOK_NAME("time") };
	char scratch[PT_STACKS_REQUEST_MAX + 32];
	const char *v;
	size_t n, len = strlen(text);
	int got = 0, k;
	pt_jtok t;
	pt_jtok_obj o;

	if (cap == 0 || len > PT_STACKS_REQUEST_MAX)
		return -1;
	pt_jtok_init_fixed(&t, text, len, scratch, sizeof(scratch));
	pt_jtok_skip_ws(&t);
	if (t.pos >= t.len || t.s[t.pos] != '{')
		return -1;
	pt_jtok_obj_begin(&t, &o);
	while ((k = pt_jtok_obj_next(&t, &o, names, 2)) != PT_JTOK_END) {
		if (k == -1)
			return -1;
		if (k == 0 && t.s[t.pos] == '"') {
			if (pt_jtok_string(&t, &v, &n))
				return -1;
			if (n >= cap)
				n = cap - 1;
			memcpy(id, v, n);
			id[n] = 0;
			got |= n ? 1 : 0;
		} else if (k == 1 && (t.s[t.pos] == '-' || (t.s[t.pos] >= '0' && t.s[t.pos] <= '9'))) {
			if (pt_jtok_number(&t, time))
				return -1;
			got |= 2;
		} else if (pt_jtok_skip_value(&t, 1)) {
			return -1;
		}
	}
	return got == 3 ? 0 : -1;
}
