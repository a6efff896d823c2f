/*
 * summary_io.c - the versioned summary JSON (docs/summary.md): the writer
 * used by `summarize` on every node and the validating reader used by the
 * master, which reads thousands of these.
 *
 * Flow: pt_summary --pt_summary_write_file--> SUMMARY.json (shared file
 * system) --pt_summary_read_file--> pt_summary --> src/diagnose.
 * Files are compact (no indentation) and written to a temporary name in
 * the same directory, then renamed, so a reader never sees half a file.
 */
#include "summary.h"
#include "../util/json.h"
#include "../util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ---- writer -------------------------------------------------------------- */

static void add_key(pt_sb *sb, const char *k)
{
	pt_sb_addc(sb, '"');
	pt_sb_adds(sb, k);
	pt_sb_adds(sb, "\":");
}

static void add_str(pt_sb *sb, const char *k, const char *v)
{
	add_key(sb, k);
	if (v)
		pt_sb_add_json_str(sb, v, strlen(v));
	else
		pt_sb_adds(sb, "null");
	pt_sb_addc(sb, ',');
}

static void add_i64(pt_sb *sb, const char *k, int64_t v)
{
	add_key(sb, k);
	pt_sb_addf(sb, "%lld,", (long long)v);
}

static void add_u64(pt_sb *sb, const char *k, uint64_t v)
{
	add_key(sb, k);
	pt_sb_addf(sb, "%llu,", (unsigned long long)v);
}

static void add_dbl(pt_sb *sb, const char *k, double v)
{
	add_key(sb, k);
	pt_sb_add_double(sb, v);
	pt_sb_addc(sb, ',');
}

/* Replace the trailing ',' of the last member by c. */
static void close_with(pt_sb *sb, char c)
{
	if (!sb->oom && sb->len && sb->buf[sb->len - 1] == ',')
		sb->buf[sb->len - 1] = c;
	else
		pt_sb_addc(sb, c);
}

static void write_pattern(pt_sb *sb, const pt_pattern *p)
{
	pt_sb_addc(sb, '{');
	add_str(sb, "key", p->key ? p->key : "");
	add_str(sb, "class", pt_class_name(p->cls));
	add_str(sb, "kind", pt_kind_name(p->kind));
	add_u64(sb, "count", p->count);
	add_dbl(sb, "total_ms", p->total_ms);
	add_dbl(sb, "median_ms", p->median_ms);
	add_dbl(sb, "p10_ms", p->p10_ms);
	add_dbl(sb, "p90_ms", p->p90_ms);
	add_dbl(sb, "mad_ms", p->mad_ms);
	add_dbl(sb, "bottleneck", p->bottleneck);
	add_dbl(sb, "exec_ratio", p->exec_ratio);
	/* Communication extras only when known, to keep files small. */
	if (p->bytes > 0)
		add_dbl(sb, "bytes", p->bytes);
	if (p->algbw_gbps > 0)
		add_dbl(sb, "algbw_gbps", p->algbw_gbps);
	if (p->busbw_gbps > 0)
		add_dbl(sb, "busbw_gbps", p->busbw_gbps);
	if (p->group)
		add_u64(sb, "group", p->group);
	close_with(sb, '}');
}

void pt_summary_write(const pt_summary *s, pt_sb *out)
{
	size_t i;
	int c;

	pt_sb_addc(out, '{');
	add_str(out, "format", PT_SUMMARY_FORMAT);
	add_i64(out, "version", PT_SUMMARY_VERSION);
	add_str(out, "worker", s->worker ? s->worker : "");
	add_str(out, "file", s->file ? s->file : "");
	add_str(out, "host", s->host ? s->host : "");
	add_i64(out, "rank", s->rank);
	add_i64(out, "pid", s->pid);
	if (s->error) {
		add_str(out, "error", s->error);
		close_with(out, '}');
		return;
	}
	add_i64(out, "world_size", s->world_size);
	add_str(out, "backend", s->backend ? s->backend : "");
	add_str(out, "device", s->device ? s->device : "");
	add_str(out, "warning", s->warning);
	add_u64(out, "nwarnings", s->nwarnings);
	add_key(out, "truncated");
	pt_sb_adds(out, s->truncated ? "true," : "false,");
	add_key(out, "window");
	pt_sb_addc(out, '{');
	add_dbl(out, "start_us", s->window_start_us);
	add_dbl(out, "ms", s->window_ms);
	add_key(out, "from_steps");
	pt_sb_adds(out, s->window_from_steps ? "true}," : "false},");
	add_key(out, "steps");
	pt_sb_addc(out, '[');
	for (i = 0; i < s->nsteps; i++) {
		pt_sb_addc(out, '{');
		add_i64(out, "number", s->step_numbers[i]);
		add_dbl(out, "ms", s->step_ms[i]);
		close_with(out, '}');
		pt_sb_addc(out, ',');
	}
	close_with(out, ']');
	pt_sb_addc(out, ',');
	add_dbl(out, "gpu_util", s->gpu_util);
	add_key(out, "class_ms");
	pt_sb_addc(out, '{');
	for (c = PT_C_COUNT - 1; c >= 0; c--)
		add_dbl(out, pt_class_name(c), s->class_ms[c]);
	close_with(out, '}');
	pt_sb_addc(out, ',');
	add_u64(out, "nevents", s->nevents);
	add_key(out, "patterns");
	pt_sb_addc(out, '[');
	for (i = 0; i < s->npatterns; i++) {
		write_pattern(out, &s->patterns[i]);
		pt_sb_addc(out, ',');
	}
	close_with(out, ']');
	pt_sb_addc(out, '}');
}

int pt_summary_write_file(const pt_summary *s, const char *path, pt_error *err)
{
	pt_sb sb = { 0 };
	char *tmp = NULL;
	size_t off = 0, tl;
	int fd = -1, rc = PT_EIO;

	pt_error_clear(err); /* the subject must be this file, not the trace */
	pt_summary_write(s, &sb);
	pt_sb_addc(&sb, '\n');
	if (sb.oom) {
		rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory while writing the summary");
		goto out;
	}
	/* Same directory, so rename() is atomic on the shared file system. */
	tl = strlen(path) + 32;
	tmp = x_malloc(tl);
	if (!tmp) {
		rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
		goto out;
	}
	snprintf(tmp, tl, "%s.tmp.%ld", path, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		pt_error_set(err, PT_EIO, -1, "cannot create '%s': %s", tmp, strerror(errno));
		goto out;
	}
	while (off < sb.len) {
		ssize_t w = write(fd, sb.buf + off, sb.len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			pt_error_set(err, PT_EIO, -1, "cannot write: %s",
				     w < 0 ? strerror(errno) : "short write");
			goto out;
		}
		off += (size_t)w;
	}
	if (fsync(fd) && errno != EINVAL && errno != EROFS) {
		pt_error_set(err, PT_EIO, -1, "cannot write: %s", strerror(errno));
		goto out;
	}
	if (close(fd)) {
		fd = -1;
		pt_error_set(err, PT_EIO, -1, "cannot write: %s", strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp, path)) {
		pt_error_set(err, PT_EIO, -1, "cannot rename '%s' into place: %s", tmp,
			     strerror(errno));
		goto out;
	}
	rc = PT_OK;
out:
	if (fd >= 0)
		close(fd);
	if (rc != PT_OK) {
		if (tmp)
			unlink(tmp);
		pt_error_subject(err, path);
	}
	x_free(tmp);
	pt_sb_free(&sb);
	return rc;
}

/* ---- reader -------------------------------------------------------------- */

/* Context for messages: "pattern 3: ..." or "" at the top level. */
typedef struct rd {
	pt_error *err;
	char where[48];
} rd;

static int bad(rd *r, const char *key, const char *expect)
{
	return pt_error_set(r->err, PT_EFORMAT, -1, "invalid summary: %s'%s' %s", r->where, key,
			    expect);
}

static int get_num(rd *r, const pt_json *o, const char *key, int required, double *out)
{
	const pt_json *v = pt_json_get(o, key);

	if (!v) {
		if (!required)
			return PT_OK;
		return bad(r, key, "is missing");
	}
	if (v->type == PT_JSON_NULL) { /* the writer's spelling of NaN/inf */
		*out = NAN;
		return PT_OK;
	}
	if (v->type != PT_JSON_NUM)
		return bad(r, key, "is not a number");
	*out = v->num;
	return PT_OK;
}

/* An integer in [lo, 2^53]. */
static int get_int(rd *r, const pt_json *o, const char *key, int required, double lo,
		   int64_t *out)
{
	const pt_json *v = pt_json_get(o, key);

	if (!v) {
		if (!required)
			return PT_OK;
		return bad(r, key, "is missing");
	}
	if (v->type != PT_JSON_NUM || v->num != floor(v->num) || v->num < lo ||
	    v->num > 9007199254740992.0)
		return bad(r, key, lo < 0 ? "is not an integer >= -1" : "is not a non-negative integer");
	*out = (int64_t)v->num;
	return PT_OK;
}

static int get_bool(rd *r, const pt_json *o, const char *key, int required, int *out)
{
	const pt_json *v = pt_json_get(o, key);

	if (!v) {
		if (!required)
			return PT_OK;
		return bad(r, key, "is missing");
	}
	if (v->type != PT_JSON_TRUE && v->type != PT_JSON_FALSE)
		return bad(r, key, "is not true or false");
	*out = v->type == PT_JSON_TRUE;
	return PT_OK;
}

/* A string member, copied; nullable ones may be null (-> NULL); optional
 * ones absent give def (copied, NULL stays NULL). */
static int get_str(rd *r, const pt_json *o, const char *key, int required, int nullable,
		   const char *def, char **out)
{
	const pt_json *v = pt_json_get(o, key);
	const char *s = def;
	size_t n = def ? strlen(def) : 0;

	if (!v) {
		if (required)
			return bad(r, key, "is missing");
	} else if (v->type == PT_JSON_NULL && nullable) {
		s = NULL;
	} else if (v->type != PT_JSON_STR) {
		return bad(r, key, "is not a string");
	} else {
		s = v->str;
		n = v->len;
	}
	x_free(*out);
	*out = NULL;
	if (s && !(*out = x_strndup(s, n)))
		return pt_error_set(r->err, PT_ENOMEM, -1, "out of memory");
	return PT_OK;
}

static int name_index(const char *s, const char *(*namer)(int), int lo, int hi)
{
	int i;

	for (i = lo; i < hi; i++)
		if (!strcmp(s, namer(i)))
			return i;
	return -1;
}

static int read_pattern(rd *r, const pt_json *o, pt_pattern *p)
{
	const pt_json *v;
	char *cls = NULL, *kind = NULL;
	int64_t count = 0, group = 0;
	int rc, c, k;

	if (o->type != PT_JSON_OBJ)
		return pt_error_set(r->err, PT_EFORMAT, -1, "invalid summary: %sis not an object",
				    r->where);
	if ((rc = get_str(r, o, "key", 1, 0, NULL, &p->key)) ||
	    (rc = get_str(r, o, "class", 1, 0, NULL, &cls)) ||
	    (rc = get_str(r, o, "kind", 1, 0, NULL, &kind)))
		goto out;
	c = name_index(cls, pt_class_name, PT_C_PYTHON, PT_C_COUNT);
	k = name_index(kind, pt_kind_name, 0, PT_K_COUNT);
	if (c < 0 || k < 0) {
		v = pt_json_get(o, c < 0 ? "class" : "kind");
		rc = pt_error_set(r->err, PT_EFORMAT, -1, "invalid summary: %sunknown %s '%s'",
				  r->where, c < 0 ? "class" : "kind", v->str);
		goto out;
	}
	p->cls = (uint8_t)c;
	p->kind = (uint8_t)k;
	if ((rc = get_int(r, o, "count", 1, 0, &count)) ||
	    (rc = get_num(r, o, "total_ms", 1, &p->total_ms)) ||
	    (rc = get_num(r, o, "median_ms", 1, &p->median_ms)) ||
	    (rc = get_num(r, o, "p10_ms", 1, &p->p10_ms)) ||
	    (rc = get_num(r, o, "p90_ms", 1, &p->p90_ms)) ||
	    (rc = get_num(r, o, "mad_ms", 1, &p->mad_ms)) ||
	    (rc = get_num(r, o, "bottleneck", 1, &p->bottleneck)) ||
	    (rc = get_num(r, o, "exec_ratio", 1, &p->exec_ratio)) ||
	    (rc = get_num(r, o, "bytes", 0, &p->bytes)) ||
	    (rc = get_num(r, o, "algbw_gbps", 0, &p->algbw_gbps)) ||
	    (rc = get_num(r, o, "busbw_gbps", 0, &p->busbw_gbps)) ||
	    (rc = get_int(r, o, "group", 0, 0, &group)))
		goto out;
	if (group > UINT32_MAX) {
		rc = bad(r, "group", "is too large");
		goto out;
	}
	p->count = (uint64_t)count;
	p->group = (uint32_t)group;
out:
	x_free(kind);
	x_free(cls);
	return rc;
}

static pt_summary *from_json(const pt_json *root, pt_error *err)
{
	rd r = { err, "" };
	pt_summary *s = NULL;
	const pt_json *v, *w, *e;
	double version = 0;
	int64_t n64 = 0;
	size_t i;
	int c, rc;

	if (!root || root->type != PT_JSON_OBJ) {
		pt_error_set(err, PT_EFORMAT, -1, "not a perftracker summary (not a json object)");
		return NULL;
	}
	v = pt_json_get(root, "format");
	if (!v || v->type != PT_JSON_STR || strcmp(v->str, PT_SUMMARY_FORMAT)) {
		pt_error_set(err, PT_EFORMAT, -1,
			     "not a perftracker summary (no \"format\": \"" PT_SUMMARY_FORMAT "\")");
		return NULL;
	}
	v = pt_json_get(root, "version");
	if (!v || v->type != PT_JSON_NUM) {
		pt_error_set(err, PT_EFORMAT, -1, "invalid summary: 'version' is missing");
		return NULL;
	}
	version = v->num;
	if (version != PT_SUMMARY_VERSION) {
		pt_error_set(err, PT_EFORMAT, -1,
			     "unsupported summary version %g (this build reads version %d)", version,
			     PT_SUMMARY_VERSION);
		return NULL;
	}
	s = x_calloc(1, sizeof(*s));
	if (!s)
		goto oom;
	s->version = PT_SUMMARY_VERSION;
	s->rank = s->pid = s->world_size = -1;
	if ((rc = get_str(&r, root, "worker", 1, 0, NULL, &s->worker)) ||
	    (rc = get_str(&r, root, "file", 1, 0, NULL, &s->file)) ||
	    (rc = get_str(&r, root, "host", 0, 0, "", &s->host)) ||
	    (rc = get_int(&r, root, "rank", 1, -1, &s->rank)) ||
	    (rc = get_int(&r, root, "pid", 1, -1, &s->pid)) ||
	    (rc = get_str(&r, root, "error", 0, 0, NULL, &s->error)) ||
	    (rc = get_str(&r, root, "backend", 0, 0, "", &s->backend)) ||
	    (rc = get_str(&r, root, "device", 0, 0, "", &s->device)))
		goto fail;
	if (s->error)
		return s; /* a failed worker: nothing else is there */
	if ((rc = get_int(&r, root, "world_size", 1, -1, &s->world_size)) ||
	    (rc = get_str(&r, root, "warning", 0, 1, NULL, &s->warning)) ||
	    (rc = get_int(&r, root, "nwarnings", 0, 0, &n64)) ||
	    (rc = get_bool(&r, root, "truncated", 0, &s->truncated)) ||
	    (rc = get_num(&r, root, "gpu_util", 1, &s->gpu_util)))
		goto fail;
	s->nwarnings = (uint64_t)n64;
	n64 = 0;
	if ((rc = get_int(&r, root, "nevents", 1, 0, &n64)))
		goto fail;
	s->nevents = (uint64_t)n64;

	w = pt_json_get(root, "window");
	if (!w || w->type != PT_JSON_OBJ) {
		bad(&r, "window", "is missing or not an object");
		goto fail;
	}
	snprintf(r.where, sizeof(r.where), "window: ");
	if ((rc = get_num(&r, w, "start_us", 1, &s->window_start_us)) ||
	    (rc = get_num(&r, w, "ms", 1, &s->window_ms)) ||
	    (rc = get_bool(&r, w, "from_steps", 1, &s->window_from_steps)))
		goto fail;

	r.where[0] = 0;
	w = pt_json_get(root, "class_ms");
	if (!w || w->type != PT_JSON_OBJ) {
		bad(&r, "class_ms", "is missing or not an object");
		goto fail;
	}
	snprintf(r.where, sizeof(r.where), "class_ms: ");
	for (c = 0; c < PT_C_COUNT; c++)
		if ((rc = get_num(&r, w, pt_class_name(c), 1, &s->class_ms[c])))
			goto fail;

	r.where[0] = 0;
	w = pt_json_get(root, "steps");
	if (!w || w->type != PT_JSON_ARR) {
		bad(&r, "steps", "is missing or not an array");
		goto fail;
	}
	s->step_numbers = x_calloc(w->len, sizeof(*s->step_numbers));
	s->step_ms = x_calloc(w->len, sizeof(*s->step_ms));
	if (!s->step_numbers || !s->step_ms)
		goto oom;
	for (e = w->child, i = 0; e && i < w->len; e = e->next, i++) {
		snprintf(r.where, sizeof(r.where), "step %zu: ", i);
		if (e->type != PT_JSON_OBJ) {
			pt_error_set(err, PT_EFORMAT, -1, "invalid summary: %sis not an object", r.where);
			goto fail;
		}
		if ((rc = get_int(&r, e, "number", 1, -1e18, &s->step_numbers[i])) ||
		    (rc = get_num(&r, e, "ms", 1, &s->step_ms[i])))
			goto fail;
		s->nsteps++;
	}

	r.where[0] = 0;
	w = pt_json_get(root, "patterns");
	if (!w || w->type != PT_JSON_ARR) {
		bad(&r, "patterns", "is missing or not an array");
		goto fail;
	}
	s->patterns = x_calloc(w->len, sizeof(*s->patterns));
	if (!s->patterns)
		goto oom;
	/* Walk the sibling list: pt_json_at is linear per call. */
	for (e = w->child, i = 0; e && i < w->len; e = e->next, i++) {
		snprintf(r.where, sizeof(r.where), "pattern %zu: ", i);
		s->npatterns++;
		if ((rc = read_pattern(&r, e, &s->patterns[i])))
			goto fail;
	}
	return s;
oom:
	pt_error_set(err, PT_ENOMEM, -1, "out of memory");
fail:
	pt_summary_free(s);
	return NULL;
}

pt_summary *pt_summary_read_mem(const char *buf, size_t len, pt_error *err)
{
	pt_json *root = pt_json_parse(buf, len, err);
	pt_summary *s;

	if (!root)
		return NULL;
	s = from_json(root, err);
	pt_json_free(root);
	return s;
}

pt_summary *pt_summary_read_file(const char *path, pt_error *err)
{
	pt_json *root = pt_json_parse_file(path, err);
	pt_summary *s = NULL;

	if (root)
		s = from_json(root, err);
	pt_json_free(root);
	if (!s)
		pt_error_subject(err, path);
	return s;
}
