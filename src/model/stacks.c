/*
 * stacks.c - parser of the stacks file the collectors' watchdogs write
 * (format in stacks.h): header, then CPython faulthandler's threads and
 * frames, frames turned outermost first.  First step of the hang
 * diagnosis (hang.c groups the parsed dumps).  Also built into the
 * collector extension (python/ext_sources.txt), which writes the format.
 */
#include "stacks.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util/xalloc.h"

static void free_thread(pt_hang_thread *t)
{
	for (size_t i = 0; i < t->nframes; i++) {
		x_free(t->frames[i].file);
		x_free(t->frames[i].func);
	}
	x_free(t->frames);
}

void pt_hang_dump_free(pt_hang_dump *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nthreads; i++)
		free_thread(&d->threads[i]);
	x_free(d->threads);
	d->threads = NULL;
	d->nthreads = 0;
}

static void copy_field(char *dst, size_t cap, const char *v, size_t n)
{
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, v, n);
	dst[n] = 0;
}

static int64_t to_i64(const char *v, size_t n, int64_t def)
{
	char buf[32], *end;
	long long x;

	if (n == 0 || n >= sizeof(buf))
		return def;
	memcpy(buf, v, n);
	buf[n] = 0;
	x = strtoll(buf, &end, 0);
	return *end ? def : (int64_t)x;
}

static double to_dbl(const char *v, size_t n, double def)
{
	char buf[64], *end;
	double x;

	if (n == 0 || n >= sizeof(buf))
		return def;
	memcpy(buf, v, n);
	buf[n] = 0;
	x = strtod(buf, &end);
	return *end || !isfinite(x) ? def : x;
}

static int starts(const char *p, size_t n, const char *lit)
{
	size_t l = strlen(lit);

	return n >= l && !memcmp(p, lit, l);
}

/* Find the last occurrence of lit in p[0..n). */
static const char *rfind(const char *p, size_t n, const char *lit)
{
	size_t l = strlen(lit);

	if (n < l)
		return NULL;
	for (size_t i = n - l + 1; i-- > 0;)
		if (!memcmp(p + i, lit, l))
			return p + i;
	return NULL;
}

/* "Thread 0x... (most recent call first):", "Current thread 0x... (...):"
 * or "Stack (most recent call first):".  1 when it is one. */
static int thread_line(const char *p, size_t n, uint64_t *id, int *current)
{
	const char *q;
	char buf[32];
	size_t k = 0;

	*current = 0;
	*id = 0;
	if (starts(p, n, "Stack (most recent call first):"))
		return 1;
	if (starts(p, n, "Current thread 0x")) {
		*current = 1;
		q = p + 15;
	} else if (starts(p, n, "Thread 0x")) {
		q = p + 7;
	} else {
		return 0;
	}
	q += 2;
	while (q < p + n && isxdigit((unsigned char)*q) && k < sizeof(buf) - 1)
		buf[k++] = *q++;
	buf[k] = 0;
	*id = strtoull(buf, NULL, 16);
	return 1;
}

/* '  File "f", line N in func' or '  File ???, line ??? in ???'. */
static int frame_line(const char *p, size_t n, pt_hang_frame *f)
{
	const char *file, *fe, *ln, *in;
	size_t fl;

	if (!starts(p, n, "  File "))
		return 0;
	file = p + 7;
	if (file < p + n && *file == '"') {
		fe = rfind(file, (size_t)(p + n - file), "\", line ");
		if (!fe || fe == file)
			return -1;
		ln = fe + 8;
		file++;
		fl = (size_t)(fe - file);
	} else {
		fe = rfind(file, (size_t)(p + n - file), ", line ");
		if (!fe)
			return -1;
		ln = fe + 7;
		fl = (size_t)(fe - file);
	}
	in = NULL;
	for (const char *q = ln; q + 4 <= p + n; q++)
		if (!memcmp(q, " in ", 4)) {
			in = q;
			break;
		}
	if (!in)
		return -1;
	f->line = to_i64(ln, (size_t)(in - ln), -1);
	f->file = x_strndup(file, fl);
	f->func = x_strndup(in + 4, (size_t)(p + n - in - 4));
	if (!f->file || !f->func) {
		x_free(f->file);
		x_free(f->func);
		f->file = f->func = NULL;
		return -2;
	}
	return 1;
}

/* Frames arrive innermost first: reverse them once the thread ends. */
static void finish_thread(pt_hang_thread *t)
{
	for (size_t i = 0, j = t->nframes; i + 1 < j; i++, j--) {
		pt_hang_frame x = t->frames[i];

		t->frames[i] = t->frames[j - 1];
		t->frames[j - 1] = x;
	}
}

/* The value of "key=" in v[0..vl) up to the next space (the last key,
 * "name", to the end); 0 when absent. */
static size_t kv(const char *v, size_t vl, const char *key, const char **out, int last)
{
	size_t kl = strlen(key);

	for (size_t i = 0; i + kl < vl; i++) {
		if ((i && v[i - 1] != ' ') || memcmp(v + i, key, kl) || v[i + kl] != '=')
			continue;
		*out = v + i + kl + 1;
		if (last)
			return vl - (i + kl + 1);
		for (size_t j = i + kl + 1; j <= vl; j++)
			if (j == vl || v[j] == ' ')
				return j - (i + kl + 1);
	}
	return 0;
}

static void watch_line(pt_hang_dump *d, const char *v, size_t vl)
{
	const char *x;
	size_t n;

	if ((n = kv(v, vl, "fr", &x, 0)))
		copy_field(d->fr, sizeof(d->fr), x, n);
	if ((n = kv(v, vl, "read_us", &x, 0)))
		d->fr_read_us = to_i64(x, n, 0);
}

static int coll_line(pt_hang_coll *c, const char *v, size_t vl)
{
	const char *x;
	size_t n;

	memset(c, 0, sizeof(*c));
	if (!(n = kv(v, vl, "pg", &x, 0)))
		return -1;
	copy_field(c->pg, sizeof(c->pg), x, n);
	c->seq = (n = kv(v, vl, "seq", &x, 0)) ? to_i64(x, n, -1) : -1;
	c->created_us = (n = kv(v, vl, "created_us", &x, 0)) ? to_i64(x, n, -1) : -1;
	if ((n = kv(v, vl, "state", &x, 0)))
		copy_field(c->state, sizeof(c->state), x, n);
	if ((n = kv(v, vl, "desc", &x, 0)))
		copy_field(c->desc, sizeof(c->desc), x, n);
	if ((n = kv(v, vl, "name", &x, 1)))
		copy_field(c->name, sizeof(c->name), x, n);
	return c->seq >= 0 ? 0 : -1;
}

int pt_hang_parse_dump(const char *text, size_t len, pt_hang_dump *d, pt_error *err)
{
	const char *p = text, *end = text + len;
	int in_header = 1, rc = PT_OK, first = 1;
	size_t cap = 0, fcap = 0;
	pt_hang_thread *cur = NULL;

	memset(d, 0, sizeof(*d));
	d->rank = d->pid = d->step = -1;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		int64_t off = (int64_t)(p - text);
		const char *next = nl ? nl + 1 : end;

		if (n && p[n - 1] == '\r')
			n--;
		if (first) {
			first = 0;
			if (n != strlen(PT_STACKS_MAGIC) || memcmp(p, PT_STACKS_MAGIC, n)) {
				rc = pt_error_set(err, PT_EFORMAT, 0, "not a perftracker stack dump");
				goto fail;
			}
			p = next;
			continue;
		}
		if (in_header) {
			const char *colon;
			size_t kl, vl;
			const char *v;

			if (n == 0) {
				in_header = 0;
				p = next;
				continue;
			}
			colon = memchr(p, ':', n);
			if (!colon || colon + 1 >= p + n + 1) {
				rc = pt_error_set(err, PT_EPARSE, off, "header line without 'key: value'");
				goto fail;
			}
			kl = (size_t)(colon - p);
			v = colon + 1;
			while (v < p + n && *v == ' ')
				v++;
			vl = (size_t)(p + n - v);
#define KEY(k) (kl == strlen(k) && !memcmp(p, k, kl))
			if (KEY("worker"))
				copy_field(d->worker, sizeof(d->worker), v, vl);
			else if (KEY("host"))
				copy_field(d->host, sizeof(d->host), v, vl);
			else if (KEY("rank"))
				d->rank = to_i64(v, vl, -1);
			else if (KEY("pid"))
				d->pid = to_i64(v, vl, -1);
			else if (KEY("reason"))
				copy_field(d->reason, sizeof(d->reason), v, vl);
			else if (KEY("request"))
				copy_field(d->request, sizeof(d->request), v, vl);
			else if (KEY("time"))
				d->time = to_dbl(v, vl, 0);
			else if (KEY("step"))
				d->step = to_i64(v, vl, -1);
			else if (KEY("step_time"))
				d->step_time = to_dbl(v, vl, 0);
			else if (KEY("training_thread"))
				d->training_thread = (uint64_t)to_i64(v, vl, 0);
			else if (KEY("watch"))
				watch_line(d, v, vl);
			else if (KEY("collective") && d->ncolls < PT_HANG_COLLS &&
				 coll_line(&d->colls[d->ncolls], v, vl) == 0)
				d->ncolls++;
#undef KEY
			p = next;
			continue;
		}
		{
			uint64_t id;
			int current, fr;
			pt_hang_frame f;

			if (thread_line(p, n, &id, &current)) {
				if (cur)
					finish_thread(cur);
				if (X_GROW(d->threads, cap, d->nthreads + 1)) {
					rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
					goto fail;
				}
				cur = &d->threads[d->nthreads++];
				memset(cur, 0, sizeof(*cur));
				cur->id = id;
				cur->current = current;
				fcap = 0;
			} else if ((fr = frame_line(p, n, &f)) != 0) {
				if (fr == -2) {
					rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
					goto fail;
				}
				if (fr < 0 || !cur) {
					if (fr > 0) {
						x_free(f.file);
						x_free(f.func);
					}
					rc = pt_error_set(err, PT_EPARSE, off, cur ? "malformed frame line"
										     : "frame line before any thread line");
					goto fail;
				}
				if (X_GROW(cur->frames, fcap, cur->nframes + 1)) {
					x_free(f.file);
					x_free(f.func);
					rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
					goto fail;
				}
				cur->frames[cur->nframes++] = f;
			} else if (cur && n == 5 && !memcmp(p, "  ...", 5)) {
				cur->truncated = 1;
			} else if (starts(p, n, "error: ")) {
				copy_field(d->error, sizeof(d->error), p + 7, n - 7);
			}
			/* "  <no Python frame>", "  Garbage-collecting", "...",
			 * blank lines: nothing to keep. */
		}
		p = next;
	}
	if (first) {
		rc = pt_error_set(err, PT_EFORMAT, 0, "empty stack dump");
		goto fail;
	}
	if (cur)
		finish_thread(cur);
	return PT_OK;
fail:
	pt_hang_dump_free(d);
	return rc;
}

const pt_hang_thread *pt_hang_training_thread(const pt_hang_dump *d)
{
	if (!d || !d->nthreads)
		return NULL;
	for (size_t i = 0; i < d->nthreads; i++)
		if (d->training_thread && d->threads[i].id == d->training_thread)
			return &d->threads[i];
	return &d->threads[d->nthreads - 1];
}
