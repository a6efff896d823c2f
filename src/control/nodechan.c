/*
 * nodechan.c - the node-local channel and the node files (see nodechan.h).
 *
 * Why a directory on tmpfs and not a Unix socket: both sides restart
 * independently (the agent is killed, a worker starts before its agent),
 * and a directory keeps the last record of each side with no connection
 * to re-establish; readers and writers reuse the control directory's
 * write-then-rename records; and on tmpfs a stat is so cheap that the
 * workers' 250 ms polls cost nothing measurable (docs/bench.md, "The node
 * channel's primitives").  The agent's liveness is an flock on a local
 * file: the kernel drops it the instant the agent dies.
 */
#include "nodechan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/hash.h"
#include "../util/json.h"
#include "../util/utf8.h"
#include "../util/xalloc.h"

/* ---- where ------------------------------------------------------------------ */

static int usable_dir(const char *p)
{
	struct stat st;

	return p && *p == '/' && stat(p, &st) == 0 && S_ISDIR(st.st_mode) &&
	       access(p, W_OK | X_OK) == 0;
}

static const char *base_dir(void)
{
	const char *e = getenv("PERFTRACKER_NODE_DIR");

	if (e && *e)
		return e;
	if (usable_dir("/dev/shm"))
		return "/dev/shm";
	e = getenv("XDG_RUNTIME_DIR");
	if (usable_dir(e))
		return e;
	return "/tmp";
}

/* The control directory's absolute path, lexically normalised (no
 * symlink resolution: the directory may not exist yet when a worker
 * starts, and both sides must derive the same name). */
static void normalise(char *out, size_t cap, const char *dir)
{
	char buf[PT_CONTROL_PATH_MAX * 2];
	size_t o = 0;

	if (dir[0] != '/' && getcwd(buf, sizeof(buf) / 2))
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "/%s", dir);
	else
		snprintf(buf, sizeof(buf), "%s", dir);
	for (const char *p = buf; *p && o + 1 < cap;) {
		const char *q;
		size_t len;

		while (*p == '/')
			p++;
		q = strchr(p, '/');
		len = q ? (size_t)(q - p) : strlen(p);
		if (len == 0)
			break;
		if (len == 1 && p[0] == '.') {
			/* skip */
		} else if (len == 2 && p[0] == '.' && p[1] == '.') {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
		} else if (o + 1 + len < cap) {
			out[o++] = '/';
			memcpy(out + o, p, len);
			o += len;
		}
		p += len;
	}
	if (o == 0 && cap > 1)
		out[o++] = '/';
	out[o] = 0;
}

int pt_nodechan_key(char *out, size_t cap, const char *dir, const char *host)
{
	char norm[PT_CONTROL_PATH_MAX];
	uint64_t h;
	int n;

	normalise(norm, sizeof(norm), dir);
	h = pt_hash_fnv1a_str(norm);
	n = snprintf(out, cap, "%s-%016llx", host, (unsigned long long)h);
	return n >= 0 && (size_t)n < cap ? 0 : -1;
}

int pt_nodechan_base(char *out, size_t cap)
{
	int n = snprintf(out, cap, "%s/perftracker-%lu", base_dir(), (unsigned long)getuid());

	return n >= 0 && (size_t)n < cap ? 0 : -1;
}

int pt_nodechan_path(char *out, size_t cap, const char *dir, const char *host)
{
	char key[PT_CONTROL_HOST_MAX + 24], base[PT_CONTROL_PATH_MAX];
	int n;

	if (pt_nodechan_key(key, sizeof(key), dir, host) || pt_nodechan_base(base, sizeof(base)))
		return -1;
	n = snprintf(out, cap, "%s/%s", base, key);
	return n >= 0 && (size_t)n < cap ? 0 : -1;
}

int pt_nodechan_file(char *out, size_t cap, const char *ndir, const char *name)
{
	int n = snprintf(out, cap, "%s/%s", ndir, name);

	return n >= 0 && (size_t)n < cap ? 0 : -1;
}

/* mkdir 0700; an existing one must be a directory of ours, not a link. */
static int private_dir(const char *p, pt_error *err)
{
	struct stat st;

	if (mkdir(p, 0700) != 0 && errno != EEXIST)
		goto fail;
	if (lstat(p, &st) != 0)
		goto fail;
	if (!S_ISDIR(st.st_mode) || st.st_uid != getuid()) {
		pt_error_subject(err, p);
		return pt_error_set(err, PT_EINVAL, -1, "not a directory owned by this user");
	}
	return PT_OK;
fail:
	pt_error_subject(err, p);
	return pt_error_set(err, PT_EIO, -1, "%s", strerror(errno));
}

int pt_nodechan_prepare(const char *ndir, pt_error *err)
{
	char p[PT_CONTROL_PATH_MAX];
	char *slash;
	int rc;

	if (pt_nodechan_file(p, sizeof(p), ndir, "w"))
		return pt_error_set(err, PT_EINVAL, -1, "path too long");
	/* <base>/perftracker-<uid>, then <host>-<hash>, then w. */
	slash = strrchr(p, '/');
	*slash = 0;
	slash = strrchr(p, '/');
	if (slash) {
		*slash = 0;
		rc = private_dir(p, err);
		*slash = '/';
		if (rc)
			return rc;
	}
	rc = private_dir(p, err);
	if (rc)
		return rc;
	p[strlen(p)] = '/';
	return private_dir(p, err);
}

/* ---- agent liveness ------------------------------------------------------------ */

int pt_nodechan_agent_hold(const char *ndir, pt_error *err)
{
	char p[PT_CONTROL_PATH_MAX];
	int fd;

	if (pt_nodechan_file(p, sizeof(p), ndir, "agent.lock")) {
		pt_error_set(err, PT_EINVAL, -1, "path too long");
		return -2;
	}
	fd = open(p, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		pt_error_subject(err, p);
		pt_error_set(err, PT_EIO, -1, "%s", strerror(errno));
		return -2;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		int busy = errno == EWOULDBLOCK;

		if (!busy) {
			pt_error_subject(err, p);
			pt_error_set(err, PT_EIO, -1, "flock: %s", strerror(errno));
		}
		close(fd);
		return busy ? -1 : -2;
	}
	return fd;
}

int pt_nodechan_agent_alive(const char *ndir)
{
	char p[PT_CONTROL_PATH_MAX];
	int fd, alive = 0;

	if (pt_nodechan_file(p, sizeof(p), ndir, "agent.lock"))
		return 0;
	fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_SH | LOCK_NB) != 0)
		alive = errno == EWOULDBLOCK;
	close(fd);  /* drops our probe's lock, if we got it */
	return alive;
}

/* ---- records ---------------------------------------------------------------------- */

static void add_kstr(pt_sb *sb, const char *key, const char *val, int first)
{
	pt_sb_add_json_key(sb, key, first);
	pt_sb_add_json_str(sb, val, strlen(val));
}

/* A worker id the node file can carry exactly: not empty, fits the
 * record's buffer uncut, valid UTF-8 (the writer replaces invalid bytes,
 * so such an id would come back as another one). */
static int id_ok(const char *s, size_t cap)
{
	size_t n = strlen(s), i, k;

	if (!n || n >= cap)
		return 0;
	for (i = 0; i < n; i += k)
		if (!(k = pt_utf8_len((const unsigned char *)s + i, n - i)))
			return 0;
	return 1;
}

/* The worker's three parts; progress = 0 leaves out what changes with
 * every step (pt_nodechan_worker_key). */
static void worker_json(pt_sb *sb, const pt_node_worker *w, int progress)
{
	const pt_worker_info *i = &w->e.info;

	pt_sb_adds(sb, "{\"worker\":{");
	add_kstr(sb, "format", "perftracker-worker", 1);
	pt_sb_add_json_i64(sb, "version", PT_CONTROL_VERSION);
	add_kstr(sb, "id", i->id, 0);
	add_kstr(sb, "host", i->host, 0);
	add_kstr(sb, "node", i->node, 0);
	pt_sb_add_json_i64(sb, "rank", i->rank);
	pt_sb_add_json_i64(sb, "local_rank", i->local_rank);
	pt_sb_add_json_i64(sb, "world_size", i->world_size);
	pt_sb_add_json_i64(sb, "local_world_size", i->local_world_size);
	pt_sb_add_json_i64(sb, "pid", i->pid);
	pt_sb_add_json_dbl(sb, "started", i->started);
	pt_sb_addc(sb, '}');
	if (w->e.has_hb) {
		pt_sb_adds(sb, ",\"hb\":{");
		add_kstr(sb, "format", "perftracker-heartbeat", 1);
		if (progress) {
			pt_sb_add_json_i64(sb, "step", w->e.hb.step);
			pt_sb_add_json_dbl(sb, "step_time", w->e.hb.step_time);
			pt_sb_add_json_dbl(sb, "time", w->e.hb.time);
			pt_sb_add_json_dbl(sb, "rate", w->e.hb.rate);
		}
		add_kstr(sb, "state", w->e.hb.state, 0);
		add_kstr(sb, "trigger", w->e.hb.trigger, 0);
		pt_sb_addc(sb, '}');
	}
	if (w->has_status) {
		pt_sb_adds(sb, ",\"status\":{");
		add_kstr(sb, "format", "perftracker-status", 1);
		add_kstr(sb, "trigger", w->tid, 0);
		add_kstr(sb, "state", w->st.state, 0);
		add_kstr(sb, "host", w->st.host, 0);
		pt_sb_add_json_i64(sb, "rank", w->st.rank);
		pt_sb_add_json_i64(sb, "start_step", w->st.start_step);
		pt_sb_add_json_i64(sb, "end_step", w->st.end_step);
		pt_sb_add_json_dbl(sb, "time", w->st.time);
		add_kstr(sb, "trace", w->st.trace, 0);
		add_kstr(sb, "error", w->st.error, 0);
		pt_sb_adds(sb, w->summarized ? ",\"summarized\":true" : ",\"summarized\":false");
		pt_sb_addc(sb, '}');
	}
	pt_sb_addc(sb, '}');
}

void pt_nodechan_worker_key(pt_sb *sb, const pt_node_worker *w)
{
	worker_json(sb, w, 0);
}

static int parse_worker_json(const pt_json *j, pt_node_worker *w)
{
	const pt_json *wi = pt_json_get(j, "worker"), *hb = pt_json_get(j, "hb"),
		      *st = pt_json_get(j, "status"), *v;
	pt_worker_info *i = &w->e.info;

	memset(w, 0, sizeof(*w));
	if (!wi || wi->type != PT_JSON_OBJ || !id_ok(pt_json_strv(wi, "id", ""), sizeof(i->id)))
		return -1;
	if (pt_control_worker_info_read(wi, i))
		return -1;
	if (hb && hb->type == PT_JSON_OBJ) {
		w->e.has_hb = 1;
		w->e.hb.step = pt_json_i64(hb, "step", 0);
		w->e.hb.step_time = pt_json_num(hb, "step_time", 0);
		w->e.hb.time = pt_json_num(hb, "time", 0);
		w->e.hb.rate = pt_json_num(hb, "rate", 0);
		pt_json_copy_str(w->e.hb.state, sizeof(w->e.hb.state), hb, "state");
		pt_json_copy_str(w->e.hb.trigger, sizeof(w->e.hb.trigger), hb, "trigger");
	}
	if (st && st->type == PT_JSON_OBJ) {
		w->has_status = 1;
		pt_json_copy_str(w->tid, sizeof(w->tid), st, "trigger");
		pt_json_copy_str(w->st.state, sizeof(w->st.state), st, "state");
		pt_json_copy_str(w->st.host, sizeof(w->st.host), st, "host");
		w->st.rank = pt_json_i64(st, "rank", -1);
		w->st.start_step = pt_json_i64(st, "start_step", 0);
		w->st.end_step = pt_json_i64(st, "end_step", 0);
		w->st.time = pt_json_num(st, "time", 0);
		pt_json_copy_str(w->st.trace, sizeof(w->st.trace), st, "trace");
		pt_json_copy_str(w->st.error, sizeof(w->st.error), st, "error");
		v = pt_json_get(st, "summarized");
		w->summarized = v && v->type == PT_JSON_TRUE;
	}
	return 0;
}

static pt_json *read_obj(const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	pt_json *j;

	if (pt_control_read_file(path, PT_CONTROL_RECORD_MAX, &buf, &len, NULL))
		return NULL;
	j = pt_json_parse(buf, len, NULL);
	x_free(buf);
	if (j && j->type != PT_JSON_OBJ) {
		pt_json_free(j);
		j = NULL;
	}
	return j;
}

int pt_nodechan_worker_write(const char *ndir, const pt_node_worker *w, pt_error *err)
{
	char p[PT_CONTROL_PATH_MAX];
	pt_sb sb = { 0 };
	int rc, n;

	n = snprintf(p, sizeof(p), "%s/w/%s.json", ndir, w->e.info.id);
	if (n < 0 || (size_t)n >= sizeof(p))
		return pt_error_set(err, PT_EINVAL, -1, "path too long");
	worker_json(&sb, w, 1);
	pt_sb_addc(&sb, '\n');
	if (sb.oom) {
		pt_sb_free(&sb);
		return pt_error_set(err, PT_ENOMEM, -1, "out of memory");
	}
	rc = pt_control_write_atomic(p, sb.buf, sb.len, err);
	pt_sb_free(&sb);
	return rc;
}

void pt_nodechan_worker_remove(const char *ndir, const char *id)
{
	char p[PT_CONTROL_PATH_MAX];
	int n = snprintf(p, sizeof(p), "%s/w/%s.json", ndir, id);

	if (n > 0 && (size_t)n < sizeof(p))
		unlink(p);
}

static int cmp_nw(const void *a, const void *b)
{
	const pt_worker_info *x = &((const pt_node_worker *)a)->e.info,
			     *y = &((const pt_node_worker *)b)->e.info;
	int c = strcmp(x->host, y->host);

	if (c)
		return c;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Add w to (*arr, *n), or merge it into the entry of the same id (the
 * fresher heartbeat wins; a status is kept from whichever has the newer). */
static int add_merge(pt_node_worker **arr, size_t *n, size_t *cap, const pt_node_worker *w)
{
	for (size_t i = 0; i < *n; i++) {
		pt_node_worker *o = &(*arr)[i];

		if (strcmp(o->e.info.id, w->e.info.id))
			continue;
		if (w->e.has_hb && (!o->e.has_hb || w->e.hb.time > o->e.hb.time)) {
			o->e.hb = w->e.hb;
			o->e.has_hb = 1;
			o->via_node = w->via_node;
			o->node_time = w->node_time;
		}
		if (w->has_status && (!o->has_status || w->st.time > o->st.time ||
				      (w->summarized && !strcmp(w->tid, o->tid)))) {
			int sum = o->summarized && !strcmp(w->tid, o->tid);

			memcpy(o->tid, w->tid, sizeof(o->tid));
			o->st = w->st;
			o->has_status = 1;
			o->summarized = w->summarized || sum;
		}
		return 0;
	}
	if (X_GROW(*arr, *cap, *n + 1))
		return -1;
	(*arr)[(*n)++] = *w;
	return 0;
}

int pt_nodechan_workers_read(const char *ndir, pt_node_worker **out, size_t *n, pt_error *err)
{
	char p[PT_CONTROL_PATH_MAX];
	DIR *d;
	struct dirent *de;
	pt_node_worker *arr = NULL;
	size_t cnt = 0, cap = 0;
	int rc = PT_OK;

	*out = NULL;
	*n = 0;
	if (pt_nodechan_file(p, sizeof(p), ndir, "w"))
		return pt_error_set(err, PT_EINVAL, -1, "path too long");
	d = opendir(p);
	if (!d)
		return errno == ENOENT ? PT_OK : (pt_error_subject(err, p),
						  pt_error_set(err, PT_EIO, -1, "%s", strerror(errno)));
	while ((de = readdir(d))) {
		char f[PT_CONTROL_PATH_MAX + 256];
		pt_node_worker w;
		pt_json *j;

		if (!pt_control_is_record(de->d_name))
			continue;
		snprintf(f, sizeof(f), "%s/%s", p, de->d_name);
		j = read_obj(f);
		if (!j)
			continue;
		if (parse_worker_json(j, &w) == 0 && add_merge(&arr, &cnt, &cap, &w)) {
			pt_json_free(j);
			rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
			break;
		}
		pt_json_free(j);
	}
	closedir(d);
	if (rc) {
		x_free(arr);
		return rc;
	}
	if (cnt)
		qsort(arr, cnt, sizeof(*arr), cmp_nw);
	*out = arr;
	*n = cnt;
	return PT_OK;
}

/* ---- node files ----------------------------------------------------------------- */

void pt_nodechan_node_json(pt_sb *sb, const pt_node_agent *a, const pt_node_worker *w,
			   size_t n)
{
	pt_sb_adds(sb, "{");
	add_kstr(sb, "format", "perftracker-agent", 1);
	pt_sb_add_json_i64(sb, "version", PT_CONTROL_VERSION);
	add_kstr(sb, "host", a->host, 0);
	add_kstr(sb, "node", a->node, 0);
	pt_sb_add_json_i64(sb, "pid", a->pid);
	pt_sb_add_json_dbl(sb, "started", a->started);
	pt_sb_add_json_dbl(sb, "time", a->time);
	pt_sb_add_json_i64(sb, "processed", (int64_t)a->processed);
	pt_sb_add_json_i64(sb, "failed", (int64_t)a->failed);
	pt_sb_adds(sb, ",\"workers\":[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			pt_sb_addc(sb, ',');
		worker_json(sb, &w[i], 1);
	}
	pt_sb_adds(sb, "]}\n");
}

int pt_nodechan_node_parse(const char *buf, size_t len, pt_node_worker **out, size_t *n,
			   pt_error *err)
{
	pt_json *j = pt_json_parse(buf, len, err);
	const pt_json *ws;
	pt_node_worker *arr = NULL;
	size_t cnt = 0, cap = 0;
	double t;
	int rc = PT_OK;

	*out = NULL;
	*n = 0;
	if (!j)
		return err ? err->code : PT_EPARSE;
	if (j->type != PT_JSON_OBJ || strcmp(pt_json_strv(j, "format", ""), "perftracker-agent")) {
		pt_json_free(j);
		return pt_error_set(err, PT_EFORMAT, -1, "not a perftracker node file");
	}
	ws = pt_json_get(j, "workers");
	t = pt_json_num(j, "time", 0);
	for (size_t i = 0; ws && ws->type == PT_JSON_ARR && i < ws->len; i++) {
		const pt_json *e = pt_json_at(ws, i);
		pt_node_worker w;

		if (!e || e->type != PT_JSON_OBJ || parse_worker_json(e, &w))
			continue;
		w.via_node = 1;
		w.node_time = t;
		if (X_GROW(arr, cap, cnt + 1)) {
			rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
			x_free(arr);
			arr = NULL;
			cnt = 0;
			break;
		}
		arr[cnt++] = w;
	}
	pt_json_free(j);
	*out = arr;
	*n = cnt;
	return rc;
}

int pt_nodechan_all(const char *dir, pt_node_worker **out, size_t *n, pt_error *err)
{
	char **names = NULL;
	size_t nn = 0, cnt = 0, cap = 0, nd = 0;
	pt_node_worker *arr = NULL;
	pt_worker_entry *direct = NULL;
	int rc;

	*out = NULL;
	*n = 0;
	rc = pt_control_list(dir, "agents", NULL, &names, &nn, NULL);
	if (rc)
		nn = 0;  /* no agents/ yet: only direct workers */
	for (size_t k = 0; k < nn; k++) {
		char p[PT_CONTROL_PATH_MAX];
		char *buf = NULL;
		size_t len = 0, nw = 0;
		pt_node_worker *w = NULL;

		if (pt_control_agent_hb_path(p, sizeof(p), dir, names[k]) ||
		    pt_control_read_file(p, PT_CONTROL_RECORD_MAX, &buf, &len, NULL))
			continue;
		/* Unreadable (mid-rename on NFS, damaged): skipped. */
		rc = pt_nodechan_node_parse(buf, len, &w, &nw, NULL);
		x_free(buf);
		for (size_t i = 0; rc == PT_OK && i < nw; i++)
			if (add_merge(&arr, &cnt, &cap, &w[i]))
				rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
		x_free(w);
		if (rc == PT_ENOMEM)
			goto out;
	}
	rc = pt_control_workers(dir, &direct, &nd, err);
	if (rc && !cnt)
		goto out;
	rc = PT_OK;
	for (size_t i = 0; i < nd; i++) {
		pt_node_worker w;

		memset(&w, 0, sizeof(w));
		w.e = direct[i];
		if (add_merge(&arr, &cnt, &cap, &w)) {
			rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
			goto out;
		}
	}
	if (cnt)
		qsort(arr, cnt, sizeof(*arr), cmp_nw);
	*out = arr;
	*n = cnt;
	arr = NULL;
out:
	x_free(arr);
	x_free(direct);
	pt_control_names_free(names, nn);
	return rc;
}

int pt_nodechan_workers(const char *dir, pt_worker_entry **out, size_t *n, pt_error *err)
{
	pt_node_worker *w = NULL;
	pt_worker_entry *e = NULL;
	size_t nw = 0;
	int rc;

	*out = NULL;
	*n = 0;
	rc = pt_nodechan_all(dir, &w, &nw, err);
	if (rc)
		return rc;
	if (nw && !(e = x_reallocarray(NULL, nw, sizeof(*e)))) {
		x_free(w);
		return pt_error_set(err, PT_ENOMEM, -1, "out of memory");
	}
	for (size_t i = 0; i < nw; i++)
		e[i] = w[i].e;
	x_free(w);
	*out = e;
	*n = nw;
	return PT_OK;
}
