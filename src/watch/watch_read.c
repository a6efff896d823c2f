/*
 * watch_read.c - the collectors' watch files read incrementally (see
 * watch.h; the format in docs/watch.md): per worker its offset and inode,
 * a partial last line kept until its end arrives, a rotated or replaced
 * file read from its start; each line parsed into the worker's identity,
 * its Flight Recorder state or one step with its collective instances.
 * Bad lines are skipped and counted, never fatal.
 */
#include "internal.h"

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/json.h"
#include "../util/xalloc.h"

#define MAX_EXACT 9007199254740992.0  /* 2^53 */

void pt_watch_options_default(pt_watch_options *o)
{
	o->window_s = 30;
	o->score_min = 0.5;
	o->lost_min = 0.05;
	o->late_share = 0.75;
	o->persist_s = 10;
	o->persist_steps = 10;
}

pt_watch *pt_watch_new(const pt_watch_options *o)
{
	pt_watch *w = x_calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	if (o)
		w->o = *o;
	else
		pt_watch_options_default(&w->o);
	return w;
}

void pt_watch_worker_free(wworker *k)
{
	for (size_t i = 0; i < k->n; i++)
		x_free(k->st[i].c);
	x_free(k->st);
	x_free(k->part);
	memset(k, 0, sizeof(*k));
}

void pt_watch_free(pt_watch *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->n; i++)
		pt_watch_worker_free(&w->w[i]);
	x_free(w->w);
	x_free(w->out);
	pt_hmap_free(&w->byid);
	x_free(w);
}

/* A hash map by worker id: a line names its worker, and an agent of a big
 * node (or the bench, 10,000 ranks) must not search them all per line
 * (watchbench: 139 s to read 10,000 ranks x 300 steps with a linear
 * search). */
wworker *pt_watch_worker(pt_watch *w, const char *wid, int create)
{
	uint64_t h = pt_hash_fnv1a_str_from(PT_HASH_SEED, wid);
	size_t it = 0;
	uint32_t v;
	wworker *k;

	while ((v = pt_hmap_next(&w->byid, h, &it)) != PT_HMAP_NONE)
		if (!strcmp(w->w[v].r.id, wid))
			return &w->w[v];
	if (!create || w->n >= PT_HMAP_NONE - 1 ||
	    (w->n + 1 > w->cap && X_GROW(w->w, w->cap, w->n + 1)) ||
	    pt_hmap_put(&w->byid, h, (uint32_t)w->n))
		return NULL;
	k = &w->w[w->n++];
	memset(k, 0, sizeof(*k));
	snprintf(k->r.id, sizeof(k->r.id), "%s", wid);
	k->r.rank = k->r.local_rank = k->r.pid = -1;
	k->r.at_seq = k->r.at_step = k->r.since_step = -1;
	return k;
}

void pt_watch_drop(pt_watch *w, const char *wid)
{
	wworker *k = pt_watch_worker(w, wid, 0);

	if (!k)
		return;
	pt_watch_worker_free(k);
	*k = w->w[--w->n];
	/* indices moved: the map again (a worker ends rarely) */
	pt_hmap_clear(&w->byid);
	for (size_t i = 0; i < w->n; i++)
		pt_hmap_put(&w->byid, pt_hash_fnv1a_str_from(PT_HASH_SEED, w->w[i].r.id),
			    (uint32_t)i);
}

/* Drop the steps that no evaluation will look at again. */
static void prune(pt_watch *w, wworker *k)
{
	double keep = w->o.window_s + w->o.persist_s + KEEP_MARGIN_S;
	int64_t newest = k->n ? k->st[k->n - 1].t1 : 0;
	size_t drop = 0;

	while (drop < k->n && (k->n - drop > STEPS_MAX ||
			       (double)(newest - k->st[drop].t1) > keep * 1e6))
		drop++;
	if (!drop)
		return;
	for (size_t i = 0; i < drop; i++)
		x_free(k->st[i].c);
	memmove(k->st, k->st + drop, (k->n - drop) * sizeof(*k->st));
	k->n -= drop;
}

static int inst_of(const pt_json *a, winst *c)
{
	const pt_json *v[6];
	const pt_json *x = a->child;

	for (int i = 0; i < 6; i++, x = x ? x->next : NULL)
		v[i] = x;
	if (a->type != PT_JSON_ARR || a->len < 6 || v[0]->type != PT_JSON_STR ||
	    v[1]->type != PT_JSON_NUM || v[2]->type != PT_JSON_STR || v[3]->type != PT_JSON_NUM ||
	    v[4]->type != PT_JSON_NUM || v[5]->type != PT_JSON_NUM)
		return -1;
	/* integers a double holds exactly, so that no conversion overflows */
	for (int i = 1; i < 6; i++)
		if (i != 2 && !(fabs(v[i]->num) <= MAX_EXACT))
			return -1;
	snprintf(c->pg, sizeof(c->pg), "%s", v[0]->str);
	snprintf(c->name, sizeof(c->name), "%s", v[2]->str);
	c->seq = (int64_t)v[1]->num;
	c->arr = (int64_t)v[3]->num;
	c->start = (int64_t)v[4]->num;
	c->done = (int64_t)v[5]->num;
	return c->arr > 0 ? 0 : -1;
}

/* A step line: appended in order (a step at or before the last one kept
 * is a repeat, skipped). */
static int step_of(pt_watch *w, wworker *k, const pt_json *o)
{
	const pt_json *c = pt_json_get(o, "c");
	wstep s;

	memset(&s, 0, sizeof(s));
	s.s = pt_json_i64(o, "s", -1);
	s.t0 = pt_json_i64(o, "t0", -1);
	s.t1 = pt_json_i64(o, "t1", -1);
	if (s.s < 0 || s.t0 <= 0 || s.t1 < s.t0 || (double)s.t1 > MAX_EXACT)
		return -1;
	if (k->n && s.s <= k->st[k->n - 1].s)
		return 0;
	if (c && c->type == PT_JSON_ARR && c->len) {
		s.c = x_calloc(c->len, sizeof(*s.c));
		if (!s.c)
			return -1;
		for (const pt_json *x = c->child; x; x = x->next)
			if (inst_of(x, &s.c[s.nc]) == 0)
				s.nc++;
	}
	if (k->n + 1 > k->cap && X_GROW(k->st, k->cap, k->n + 1)) {
		x_free(s.c);
		return -1;
	}
	k->st[k->n++] = s;
	k->r.step = s.s;
	k->r.last_t = s.t1 / 1e6;
	if (k->n > STEPS_MAX || (k->n & 63) == 0)
		prune(w, k);
	return 0;
}

int pt_watch_feed_line(pt_watch *w, const char *wid, const char *line, size_t len,
		       pt_error *err)
{
	wworker *k = pt_watch_worker(w, wid, 1);
	pt_json *o;
	const pt_json *f;
	int rc = 0;

	if (!k)
		return pt_error_set(err, PT_ENOMEM, -1, "out of memory");
	o = pt_json_parse(line, len, NULL);
	if (!o || o->type != PT_JSON_OBJ) {
		k->bad++;
		goto out;
	}
	if ((f = pt_json_get(o, "format"))) {
		if (f->type != PT_JSON_STR || strcmp(f->str, PT_WATCH_FORMAT)) {
			rc = pt_error_set(err, PT_EFORMAT, -1, "not a watch file");
			goto out;
		}
		pt_json_copy_str(k->r.host, sizeof(k->r.host), o, "host");
		k->r.rank = pt_json_i64(o, "rank", -1);
		k->r.world = pt_json_i64(o, "world", 0);
		k->r.local_rank = pt_json_i64(o, "local_rank", -1);
		k->r.pid = pt_json_i64(o, "pid", -1);
	} else if (pt_json_get(o, "fr")) {
		pt_json_copy_str(k->r.fr, sizeof(k->r.fr), o, "fr");
		pt_json_copy_str(k->r.why, sizeof(k->r.why), o, "why");
	} else if (step_of(w, k, o)) {
		k->bad++;
	}
out:
	pt_json_free(o);
	return rc;
}

/* The complete lines of buf[0..n) (and the kept partial one before them). */
static int lines(pt_watch *w, wworker *k, const char *buf, size_t n, pt_error *err)
{
	size_t i = 0;

	while (i < n) {
		const char *nl = memchr(buf + i, '\n', n - i);
		size_t len = nl ? (size_t)(nl - (buf + i)) : n - i;

		if (k->skipping) {
			/* a line too long: skipped up to its end */
			if (nl) {
				k->skipping = 0;
				k->bad++;
			}
		} else if (k->npart + len > LINE_MAX_BYTES) {
			k->npart = 0;
			if (nl)
				k->bad++;
			else
				k->skipping = 1;
		} else if (!nl) {
			char *p = x_reallocarray(k->part, k->npart + len + 1, 1);
			if (!p)
				return pt_error_set(err, PT_ENOMEM, -1, "out of memory");
			memcpy(p + k->npart, buf + i, len);
			k->part = p;
			k->npart += len;
		} else if (k->npart) {
			char *p = x_reallocarray(k->part, k->npart + len + 1, 1);
			int rc;
			if (!p)
				return pt_error_set(err, PT_ENOMEM, -1, "out of memory");
			memcpy(p + k->npart, buf + i, len);
			k->part = p;
			rc = pt_watch_feed_line(w, k->r.id, p, k->npart + len, err);
			k->npart = 0;
			if (rc)
				return rc;
		} else if (len) {
			int rc = pt_watch_feed_line(w, k->r.id, buf + i, len, err);
			if (rc)
				return rc;
		}
		i += len + (nl != NULL);
	}
	return PT_OK;
}

/* The worker id of a file: its name less ".jsonl". */
static int wid_of(const char *path, char *out, size_t cap)
{
	const char *b = strrchr(path, '/');
	size_t n;

	b = b ? b + 1 : path;
	n = strlen(b);
	if (n <= 6 || strcmp(b + n - 6, ".jsonl") || n - 6 >= cap)
		return -1;
	memcpy(out, b, n - 6);
	out[n - 6] = 0;
	return 0;
}

int pt_watch_read_file(pt_watch *w, const char *path, pt_error *err)
{
	char wid[PT_CONTROL_ID_MAX], buf[65536];
	struct stat st;
	wworker *k;
	int fd, rc = PT_OK;
	ssize_t got;

	if (wid_of(path, wid, sizeof(wid)))
		return pt_error_set(err, PT_EFORMAT, -1, "%s: not a watch file name", path);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT ? PT_OK
		       : pt_error_set(err, PT_EIO, -1, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		rc = pt_error_set(err, PT_EFORMAT, -1, "%s: not a regular file", path);
		goto out;
	}
	k = pt_watch_worker(w, wid, 1);
	if (!k) {
		rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
		goto out;
	}
	snprintf(k->path, sizeof(k->path), "%s", path);
	if (k->ino != st.st_ino || k->dev != st.st_dev || st.st_size < k->off) {
		/* a new file (rotated or restarted): from its start */
		k->ino = st.st_ino;
		k->dev = st.st_dev;
		k->off = 0;
		k->npart = 0;
		k->skipping = 0;
	}
	while (rc == PT_OK && (got = pread(fd, buf, sizeof(buf), k->off)) > 0) {
		k->off += got;
		rc = lines(w, k, buf, (size_t)got, err);
	}
	if (rc && err)
		snprintf(err->subject, sizeof(err->subject), "%s", path);
out:
	close(fd);
	return rc;
}
