/*
 * samples.c - hardware sample series (see samples.h): building them, window
 * statistics for the joins in src/analysis/hwjoin.c, and the
 * "perftracker-hw" JSON file the node agent's sampler writes beside the raw
 * traces and `summarize --hw` reads back.
 *
 * File layout (docs/hardware.md): times are absolute ns, which do not fit a
 * JSON number exactly (doubles hold 2^53), so each series stores its first
 * time as a decimal string "t0" and the rest as integer deltas "dt".
 */
#include "samples.h"
#include "../util/file.h"
#include "../util/json.h"
#include "../util/bsearch.h"
#include "../util/strbuf.h"
#include "../util/xalloc.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest delta we accept between samples: exact in a double. */
#define DT_MAX 9007199254740992.0 /* 2^53 */

static char *dupstr(const char *s)
{
	return x_strndup(s ? s : "", strlen(s ? s : ""));
}

int pt_samples_init(pt_samples *h)
{
	memset(h, 0, sizeof(*h));
	h->host = dupstr("");
	h->source = dupstr("");
	h->note = dupstr("");
	if (!h->host || !h->source || !h->note) {
		pt_samples_free(h);
		return PT_ENOMEM;
	}
	return PT_OK;
}

static void series_free(pt_series *s)
{
	x_free(s->name);
	x_free(s->label);
	x_free(s->unit);
	x_free(s->t_ns);
	x_free(s->v);
}

void pt_samples_free(pt_samples *h)
{
	size_t i;

	if (!h)
		return;
	for (i = 0; i < h->n; i++)
		series_free(&h->s[i]);
	x_free(h->s);
	x_free(h->host);
	x_free(h->source);
	x_free(h->note);
	memset(h, 0, sizeof(*h));
}

int pt_samples_set_str(char **field, const char *value)
{
	char *d = dupstr(value);

	if (!d)
		return PT_ENOMEM;
	x_free(*field);
	*field = d;
	return PT_OK;
}

const pt_series *pt_samples_find(const pt_samples *h, const char *name, int device,
				 const char *label)
{
	size_t i;

	if (!h || !name)
		return NULL;
	for (i = 0; i < h->n; i++) {
		const pt_series *s = &h->s[i];

		if (s->device == device && !strcmp(s->name, name) &&
		    (!label || !strcmp(s->label, label)))
			return s;
	}
	return NULL;
}

pt_series *pt_samples_series(pt_samples *h, const char *name, int device, const char *label,
			     const char *unit, double max)
{
	pt_series *s;

	if (!h || !name)
		return NULL;
	s = (pt_series *)pt_samples_find(h, name, device, label ? label : "");
	if (s)
		return s;
	if (X_GROW(h->s, h->cap, h->n + 1))
		return NULL;
	s = &h->s[h->n];
	memset(s, 0, sizeof(*s));
	s->name = dupstr(name);
	s->label = dupstr(label);
	s->unit = dupstr(unit);
	s->device = device;
	s->max = max;
	if (!s->name || !s->label || !s->unit) {
		series_free(s);
		return NULL;
	}
	h->n++;
	return s;
}

int pt_samples_add(pt_series *s, int64_t t_ns, double v)
{
	if (!s)
		return PT_EINVAL;
	if (s->n && t_ns < s->t_ns[s->n - 1])
		return PT_EINVAL;
	if (s->n == s->cap) {
		size_t ct = s->cap, cv = s->cap;

		/* Grow both arrays to the same capacity; cap only moves when both did. */
		if (x_grow((void **)&s->t_ns, &ct, s->n + 1, sizeof(*s->t_ns)) ||
		    x_grow((void **)&s->v, &cv, s->n + 1, sizeof(*s->v)))
			return PT_ENOMEM;
		s->cap = ct < cv ? ct : cv;
	}
	s->t_ns[s->n] = t_ns;
	s->v[s->n] = v;
	s->n++;
	return PT_OK;
}

size_t pt_samples_lower_bound(const pt_series *s, int64_t t)
{
	return s ? pt_lower_i64(s->t_ns, s->n, t) : 0;
}

size_t pt_samples_window_stats(const pt_series *s, int64_t t0, int64_t t1, int as_percent,
			       double *mean, double *std)
{
	double sum = 0, sq = 0, m = 0, var;
	double scale = 1;
	size_t i, n = 0;

	if (mean)
		*mean = 0;
	if (std)
		*std = 0;
	if (!s || t1 <= t0 || !s->n)
		return 0;
	if (as_percent && s->max > 0)
		scale = 100.0 / s->max;
	/* Two passes (mean, then squared deviations) so the std of values near
	 * 1e11 B/s does not cancel to noise the way sum-of-squares would. */
	for (i = pt_samples_lower_bound(s, t0); i < s->n && s->t_ns[i] < t1; i++) {
		if (isnan(s->v[i]))
			continue;
		sum += s->v[i] * scale;
		n++;
	}
	if (!n)
		return 0;
	m = sum / (double)n;
	for (i = pt_samples_lower_bound(s, t0); i < s->n && s->t_ns[i] < t1; i++) {
		double d;

		if (isnan(s->v[i]))
			continue;
		d = s->v[i] * scale - m;
		sq += d * d;
	}
	var = sq / (double)n;
	if (mean)
		*mean = m;
	if (std)
		*std = var > 0 ? sqrt(var) : 0;
	return n;
}

/* ---- writer ---------------------------------------------------------------- */

static void add_key_str(pt_sb *sb, const char *key, const char *v)
{
	pt_sb_add_json_key(sb, key, 1);
	pt_sb_add_json_str(sb, v ? v : "", strlen(v ? v : ""));
}

int pt_samples_to_json(const pt_samples *h, pt_sb *sb)
{
	size_t i, j;

	pt_sb_addf(sb, "{\"format\":\"%s\",\"version\":%d,", PT_SAMPLES_FORMAT, PT_SAMPLES_VERSION);
	add_key_str(sb, "host", h->host);
	pt_sb_addc(sb, ',');
	add_key_str(sb, "source", h->source);
	pt_sb_addc(sb, ',');
	add_key_str(sb, "note", h->note);
	pt_sb_addf(sb, ",\"interval_ns\":%" PRId64 ",\"series\":[", h->interval_ns);
	for (i = 0; i < h->n; i++) {
		const pt_series *s = &h->s[i];

		pt_sb_adds(sb, i ? ",{" : "{");
		add_key_str(sb, "name", s->name);
		pt_sb_addf(sb, ",\"device\":%d,", s->device);
		add_key_str(sb, "label", s->label);
		pt_sb_addc(sb, ',');
		add_key_str(sb, "unit", s->unit);
		pt_sb_adds(sb, ",\"max\":");
		pt_sb_add_double(sb, s->max);
		pt_sb_addf(sb, ",\"t0\":\"%" PRId64 "\",\"dt\":[", s->n ? s->t_ns[0] : (int64_t)0);
		for (j = 0; j < s->n; j++)
			pt_sb_addf(sb, j ? ",%" PRId64 : "%" PRId64,
				   j ? s->t_ns[j] - s->t_ns[j - 1] : (int64_t)0);
		pt_sb_adds(sb, "],\"v\":[");
		for (j = 0; j < s->n; j++) {
			if (j)
				pt_sb_addc(sb, ',');
			pt_sb_add_double(sb, s->v[j]);
		}
		pt_sb_adds(sb, "]}");
	}
	pt_sb_adds(sb, "]}");
	return sb->oom ? PT_ENOMEM : PT_OK;
}

int pt_samples_write_file(const pt_samples *h, const char *path, pt_error *err)
{
	pt_sb sb = {0};
	int rc;

	if (!h || !path)
		return pt_error_set(err, PT_EINVAL, -1, "no samples or path");
	pt_samples_to_json(h, &sb);
	pt_sb_addc(&sb, '\n');
	if (sb.oom) {
		pt_error_subject(err, path);
		rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory writing samples");
		goto out;
	}
	/* Not durable (the fsync rule in util/file.h): the sampler rewrites
	 * the file every flush, so a crash loses at most the samples since
	 * the previous one. */
	rc = pt_file_write_atomic(path, sb.buf, sb.len, 0644, 0, err);
out:
	pt_sb_free(&sb);
	return rc;
}

/* ---- reader ---------------------------------------------------------------- */

static int want_str(const pt_json *o, const char *key, int required, const char **out,
		    const char *where, pt_error *err)
{
	const pt_json *v = pt_json_get(o, key);

	*out = "";
	if (!v) {
		if (required)
			return pt_error_set(err, PT_EFORMAT, -1, "%s: missing '%s'", where, key);
		return PT_OK;
	}
	if (v->type != PT_JSON_STR)
		return pt_error_set(err, PT_EFORMAT, -1, "%s: '%s' is not a string", where, key);
	*out = v->str;
	return PT_OK;
}

static int want_num(const pt_json *o, const char *key, int required, double def, double *out,
		    const char *where, pt_error *err)
{
	const pt_json *v = pt_json_get(o, key);

	*out = def;
	if (!v) {
		if (required)
			return pt_error_set(err, PT_EFORMAT, -1, "%s: missing '%s'", where, key);
		return PT_OK;
	}
	if (v->type != PT_JSON_NUM || !isfinite(v->num))
		return pt_error_set(err, PT_EFORMAT, -1, "%s: '%s' is not a number", where, key);
	*out = v->num;
	return PT_OK;
}

/* Parse a decimal int64 (optional '-'); 0 on success. */
static int parse_i64(const char *s, int64_t *out)
{
	char *end;
	long long v;

	if (!*s)
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = (int64_t)v;
	return 0;
}

static int read_series(const pt_json *o, size_t idx, pt_samples *h, pt_error *err)
{
	char where[64];
	const char *name, *label, *unit, *t0s;
	const pt_json *dt, *v, *a, *b;
	double device, max;
	pt_series *s;
	int64_t t;
	int rc;

	snprintf(where, sizeof(where), "series %zu", idx);
	if (o->type != PT_JSON_OBJ)
		return pt_error_set(err, PT_EFORMAT, -1, "%s: not an object", where);
	if ((rc = want_str(o, "name", 1, &name, where, err)) ||
	    (rc = want_str(o, "label", 0, &label, where, err)) ||
	    (rc = want_str(o, "unit", 0, &unit, where, err)) ||
	    (rc = want_str(o, "t0", 1, &t0s, where, err)) ||
	    (rc = want_num(o, "device", 0, -1, &device, where, err)) ||
	    (rc = want_num(o, "max", 0, 0, &max, where, err)))
		return rc;
	if (!*name)
		return pt_error_set(err, PT_EFORMAT, -1, "%s: empty 'name'", where);
	if (device != floor(device) || device < -1 || device > 1e6)
		return pt_error_set(err, PT_EFORMAT, -1, "%s: bad 'device'", where);
	if (max < 0)
		return pt_error_set(err, PT_EFORMAT, -1, "%s: negative 'max'", where);
	if (parse_i64(t0s, &t))
		return pt_error_set(err, PT_EFORMAT, -1, "%s: 't0' is not an integer", where);
	dt = pt_json_get(o, "dt");
	v = pt_json_get(o, "v");
	if (!dt || dt->type != PT_JSON_ARR)
		return pt_error_set(err, PT_EFORMAT, -1, "%s: 'dt' is not an array", where);
	if (!v || v->type != PT_JSON_ARR)
		return pt_error_set(err, PT_EFORMAT, -1, "%s: 'v' is not an array", where);
	if (dt->len != v->len)
		return pt_error_set(err, PT_EFORMAT, -1,
				    "%s: 'dt' has %zu values, 'v' has %zu", where, dt->len, v->len);
	if (pt_samples_find(h, name, (int)device, label))
		return pt_error_set(err, PT_EFORMAT, -1, "%s: duplicate series '%s' device %d",
				    where, name, (int)device);
	s = pt_samples_series(h, name, (int)device, label, unit, max);
	if (!s)
		return pt_error_set(err, PT_ENOMEM, -1, "out of memory reading samples");
	/* Size both arrays once: the counts come from the parsed document. */
	if (dt->len) {
		size_t ct = 0, cv = 0;

		if (x_grow((void **)&s->t_ns, &ct, dt->len, sizeof(*s->t_ns)) ||
		    x_grow((void **)&s->v, &cv, dt->len, sizeof(*s->v)))
			return pt_error_set(err, PT_ENOMEM, -1, "out of memory reading samples");
		s->cap = ct < cv ? ct : cv;
	}
	for (a = dt->child, b = v->child; a && b; a = a->next, b = b->next) {
		double val;

		if (a->type != PT_JSON_NUM || a->num < 0 || a->num > DT_MAX ||
		    a->num != floor(a->num))
			return pt_error_set(err, PT_EFORMAT, -1,
					    "%s: 'dt' value %zu is not a non-negative integer",
					    where, s->n);
		if (s->n) {
			if (t > 0 && (double)(INT64_MAX - t) < a->num)
				return pt_error_set(err, PT_EFORMAT, -1,
						    "%s: time overflows at sample %zu", where, s->n);
			t += (int64_t)a->num;
		}
		if (b->type == PT_JSON_NULL)
			val = NAN; /* the writer's spelling of a NaN / inf sample */
		else if (b->type == PT_JSON_NUM)
			val = b->num;
		else
			return pt_error_set(err, PT_EFORMAT, -1, "%s: 'v' value %zu is not a number",
					    where, s->n);
		if (pt_samples_add(s, t, val))
			return pt_error_set(err, PT_ENOMEM, -1, "out of memory reading samples");
	}
	return PT_OK;
}

int pt_samples_from_json(const pt_json *root, pt_samples *h, pt_error *err)
{
	const char *fmt, *host, *source, *note;
	const pt_json *ser, *it;
	double version, interval;
	size_t i;
	int rc;

	if (!root || root->type != PT_JSON_OBJ)
		return pt_error_set(err, PT_EFORMAT, -1, "not a perftracker-hw file (not an object)");
	fmt = pt_json_strv(root, "format", "");
	if (strcmp(fmt, PT_SAMPLES_FORMAT))
		return pt_error_set(err, PT_EFORMAT, -1,
				    "not a perftracker-hw file (format is not \"%s\")",
				    PT_SAMPLES_FORMAT);
	if ((rc = want_num(root, "version", 1, 0, &version, "file", err)))
		return rc;
	if (version != floor(version) || version < 1)
		return pt_error_set(err, PT_EFORMAT, -1, "bad version");
	if (version > PT_SAMPLES_VERSION)
		return pt_error_set(err, PT_EFORMAT, -1,
				    "version %.0f is newer than this perftracker reads (%d)",
				    version, PT_SAMPLES_VERSION);
	if ((rc = want_str(root, "host", 0, &host, "file", err)) ||
	    (rc = want_str(root, "source", 0, &source, "file", err)) ||
	    (rc = want_str(root, "note", 0, &note, "file", err)) ||
	    (rc = want_num(root, "interval_ns", 0, 0, &interval, "file", err)))
		return rc;
	if (interval < 0 || interval > DT_MAX || interval != floor(interval))
		return pt_error_set(err, PT_EFORMAT, -1, "bad 'interval_ns'");
	ser = pt_json_get(root, "series");
	if (!ser || ser->type != PT_JSON_ARR)
		return pt_error_set(err, PT_EFORMAT, -1, "missing 'series' array");
	if (pt_samples_set_str(&h->host, host) || pt_samples_set_str(&h->source, source) ||
	    pt_samples_set_str(&h->note, note))
		return pt_error_set(err, PT_ENOMEM, -1, "out of memory reading samples");
	h->interval_ns = (int64_t)interval;
	for (it = ser->child, i = 0; it; it = it->next, i++)
		if ((rc = read_series(it, i, h, err)))
			return rc;
	return PT_OK;
}

int pt_samples_parse(const char *buf, size_t len, pt_samples *h, pt_error *err)
{
	pt_json *root;
	int rc;

	rc = pt_samples_init(h);
	if (rc)
		return pt_error_set(err, rc, -1, "out of memory");
	root = pt_json_parse(buf, len, err);
	if (!root) {
		pt_samples_free(h);
		return err && err->code ? err->code : PT_EPARSE;
	}
	rc = pt_samples_from_json(root, h, err);
	pt_json_free(root);
	if (rc)
		pt_samples_free(h);
	return rc;
}

int pt_samples_read_file(const char *path, pt_samples *h, pt_error *err)
{
	pt_json *root;
	int rc;

	rc = pt_samples_init(h);
	if (rc) {
		pt_error_subject(err, path);
		return pt_error_set(err, rc, -1, "out of memory");
	}
	root = pt_json_parse_file(path, err);
	if (!root) {
		pt_samples_free(h);
		return err && err->code ? err->code : PT_EPARSE;
	}
	rc = pt_samples_from_json(root, h, err);
	pt_error_subject(err, path);
	pt_json_free(root);
	if (rc)
		pt_samples_free(h);
	return rc;
}
