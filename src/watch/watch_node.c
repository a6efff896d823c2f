/*
 * watch_node.c - the per-node watch file <control>/watch/<host>.json (see
 * watch.h): what a node agent's watch last decided about its ranks,
 * written when it changes, read by `perftracker status`, the auto-profile
 * and the trigger (whose report cites a straggler).  One set of keys,
 * written and read here only.
 */
#include "internal.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/json.h"
#include "../util/xalloc.h"

static void key_str(pt_sb *sb, const char *k, const char *v)
{
	pt_sb_add_json_key(sb, k, 0);
	pt_sb_add_json_str(sb, v, strlen(v));
}

static void key_num(pt_sb *sb, const char *k, double v)
{
	pt_sb_add_json_dbl(sb, k, isfinite(v) ? round(v * 1e6) / 1e6 : 0);
}

void pt_watch_node_json_rank(pt_sb *sb, const pt_watch_rank *r)
{
	pt_sb_adds(sb, "{");
	pt_sb_add_json_key(sb, "id", 1);
	pt_sb_add_json_str(sb, r->id, strlen(r->id));
	key_str(sb, "host", r->host);
	pt_sb_add_json_i64(sb, "rank", r->rank);
	pt_sb_add_json_i64(sb, "world", r->world);
	pt_sb_add_json_i64(sb, "local_rank", r->local_rank);
	pt_sb_add_json_i64(sb, "pid", r->pid);
	key_str(sb, "fr", r->fr);
	key_str(sb, "why", r->why);
	pt_sb_add_json_i64(sb, "step", r->step);
	key_num(sb, "last_t", r->last_t);
	pt_sb_add_json_i64(sb, "steps", r->steps);
	key_num(sb, "step_s", r->step_s);
	key_num(sb, "wait_s", r->wait_s);
	key_num(sb, "late_s", r->late_s);
	key_num(sb, "late_max_s", r->late_max_s);
	key_str(sb, "at_name", r->at_name);
	key_str(sb, "at_pg", r->at_pg);
	pt_sb_add_json_i64(sb, "at_seq", r->at_seq);
	pt_sb_add_json_i64(sb, "at_step", r->at_step);
	key_num(sb, "score", r->score);
	key_num(sb, "lost_gpu_s_per_min", r->lost_gpu_s_per_min);
	pt_sb_add_json_i64(sb, "flagged", r->flagged);
	key_num(sb, "since", r->since);
	pt_sb_add_json_i64(sb, "since_step", r->since_step);
	pt_sb_adds(sb, "}");
}

void pt_watch_node_json(pt_sb *sb, const char *host, double now, const pt_watch_rank *r,
			size_t n)
{
	pt_sb_adds(sb, "{");
	pt_sb_add_json_key(sb, "format", 1);
	pt_sb_add_json_str(sb, PT_WATCH_NODE_FORMAT, strlen(PT_WATCH_NODE_FORMAT));
	pt_sb_add_json_i64(sb, "version", 1);
	key_str(sb, "host", host);
	key_num(sb, "time", now);
	pt_sb_add_json_key(sb, "ranks", 0);
	pt_sb_adds(sb, "[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			pt_sb_adds(sb, ",");
		pt_watch_node_json_rank(sb, &r[i]);
	}
	pt_sb_adds(sb, "]}\n");
}

static void rank_of(const pt_json *o, pt_watch_rank *r)
{
	memset(r, 0, sizeof(*r));
	pt_json_copy_str(r->id, sizeof(r->id), o, "id");
	pt_json_copy_str(r->host, sizeof(r->host), o, "host");
	r->rank = pt_json_i64(o, "rank", -1);
	r->world = pt_json_i64(o, "world", 0);
	r->local_rank = pt_json_i64(o, "local_rank", -1);
	r->pid = pt_json_i64(o, "pid", -1);
	pt_json_copy_str(r->fr, sizeof(r->fr), o, "fr");
	pt_json_copy_str(r->why, sizeof(r->why), o, "why");
	r->step = pt_json_i64(o, "step", 0);
	r->last_t = pt_json_num(o, "last_t", 0);
	r->steps = pt_json_i64(o, "steps", 0);
	r->step_s = pt_json_num(o, "step_s", 0);
	r->wait_s = pt_json_num(o, "wait_s", 0);
	r->late_s = pt_json_num(o, "late_s", 0);
	r->late_max_s = pt_json_num(o, "late_max_s", 0);
	pt_json_copy_str(r->at_name, sizeof(r->at_name), o, "at_name");
	pt_json_copy_str(r->at_pg, sizeof(r->at_pg), o, "at_pg");
	r->at_seq = pt_json_i64(o, "at_seq", -1);
	r->at_step = pt_json_i64(o, "at_step", -1);
	r->score = pt_json_num(o, "score", 0);
	r->lost_gpu_s_per_min = pt_json_num(o, "lost_gpu_s_per_min", 0);
	r->flagged = pt_json_i64(o, "flagged", 0) != 0;
	r->since = pt_json_num(o, "since", 0);
	r->since_step = pt_json_i64(o, "since_step", -1);
}

int pt_watch_node_parse(const char *buf, size_t len, pt_watch_rank **out, size_t *n,
			double *time, pt_error *err)
{
	pt_json *root;
	const pt_json *a, *x;
	pt_watch_rank *v = NULL;
	int rc = PT_OK;

	*out = NULL;
	*n = 0;
	*time = 0;
	root = pt_json_parse(buf, len, err);
	if (!root)
		return err ? err->code : PT_EPARSE;
	if (root->type != PT_JSON_OBJ || strcmp(pt_json_strv(root, "format", ""),
						PT_WATCH_NODE_FORMAT)) {
		rc = pt_error_set(err, PT_EFORMAT, 0, "not a %s file", PT_WATCH_NODE_FORMAT);
		goto out;
	}
	*time = pt_json_num(root, "time", 0);
	a = pt_json_get(root, "ranks");
	if (!a || a->type != PT_JSON_ARR || !a->len)
		goto out;
	v = x_calloc(a->len, sizeof(*v));
	if (!v) {
		rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
		goto out;
	}
	for (x = a->child; x; x = x->next)
		if (x->type == PT_JSON_OBJ)
			rank_of(x, &v[(*n)++]);
	*out = v;
	v = NULL;
out:
	x_free(v);
	pt_json_free(root);
	return rc;
}

int pt_watch_node_write(const char *dir, const char *host, double now, const pt_watch_rank *r,
			size_t n, pt_error *err)
{
	char d[PT_CONTROL_PATH_MAX], path[PT_CONTROL_PATH_MAX + PT_CONTROL_HOST_MAX + 8];
	pt_sb sb = { 0 };
	int rc;

	if ((size_t)snprintf(d, sizeof(d), "%s/watch", dir) >= sizeof(d) ||
	    (size_t)snprintf(path, sizeof(path), "%s/%s.json", d, host) >= sizeof(path))
		return pt_error_set(err, PT_EINVAL, -1, "%s: path too long", dir);
	rc = pt_control_mkdirs(d, err);
	if (rc)
		return rc;
	pt_watch_node_json(&sb, host, now, r, n);
	rc = sb.oom ? pt_error_set(err, PT_ENOMEM, -1, "out of memory")
		    : pt_control_write_atomic(path, sb.buf, sb.len, err);
	pt_sb_free(&sb);
	return rc;
}

int pt_watch_by_rank(const void *a, const void *b)
{
	const pt_watch_rank *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return strcmp(x->id, y->id);
}

int pt_watch_all(const char *dir, pt_watch_rank **out, size_t *n, pt_error *err)
{
	char d[PT_CONTROL_PATH_MAX], path[PT_CONTROL_PATH_MAX + 512];
	DIR *dh;
	struct dirent *de;
	pt_watch_rank *all = NULL;
	size_t nall = 0;

	*out = NULL;
	*n = 0;
	if ((size_t)snprintf(d, sizeof(d), "%s/watch", dir) >= sizeof(d))
		return pt_error_set(err, PT_EINVAL, -1, "%s: path too long", dir);
	dh = opendir(d);
	if (!dh)
		return PT_OK;
	while ((de = readdir(dh))) {
		size_t l = strlen(de->d_name), m = 0;
		char *buf = NULL;
		size_t len = 0;
		double t;
		pt_watch_rank *v = NULL, *nb;

		if (l < 6 || strcmp(de->d_name + l - 5, ".json") || de->d_name[0] == '.' ||
		    (size_t)snprintf(path, sizeof(path), "%s/%s", d, de->d_name) >= sizeof(path) ||
		    pt_control_read_file(path, 1 << 26, &buf, &len, NULL))
			continue;
		if (pt_watch_node_parse(buf, len, &v, &m, &t, NULL) == PT_OK && m) {
			nb = x_reallocarray(all, nall + m, sizeof(*all));
			if (nb) {
				all = nb;
				memcpy(all + nall, v, m * sizeof(*v));
				nall += m;
			}
		}
		x_free(v);
		x_free(buf);
	}
	closedir(dh);
	if (nall > 1)
		qsort(all, nall, sizeof(*all), pt_watch_by_rank);
	*out = all;
	*n = nall;
	return PT_OK;
}
