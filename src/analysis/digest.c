/*
 * digest.c - a summary's digest (see digest.h and docs/summary.md
 * "Digests"): a view of the summary with the parts only a suspect's
 * diagnosis reads taken out, written by the summary writer itself, so a
 * digest is a summary every reader loads.
 */
#include "digest.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/error.h"
#include "../util/file.h"
#include "../util/hash.h"
#include "../util/xalloc.h"

/* The seed of the key hash: fixed, so every worker hashes a key alike. */
#define KEY_SEED 0x70657266747261ULL

void pt_digest_key(const char *key, char *out)
{
	uint64_t h = pt_hash_words(key, strlen(key), KEY_SEED);

	snprintf(out, PT_DIGEST_KEY_LEN + 1, "~%016llx", (unsigned long long)h);
}

int pt_digest_is_key(const char *k)
{
	if (!k || k[0] != '~' || strlen(k) != PT_DIGEST_KEY_LEN)
		return 0;
	for (int i = 1; i < PT_DIGEST_KEY_LEN; i++)
		if (!((k[i] >= '0' && k[i] <= '9') || (k[i] >= 'a' && k[i] <= 'f')))
			return 0;
	return 1;
}

int pt_digest_path(const char *summary, char *out, size_t cap)
{
	size_t n = strlen(summary);
	int w;

	if (n > 5 && !strcmp(summary + n - 5, ".json"))
		n -= 5;
	w = snprintf(out, cap, "%.*s.digest", (int)n, summary);
	return w < 0 || (size_t)w >= cap ? -1 : 0;
}

/* v to PT_DIGEST_DIGITS significant digits: the writer prints the
 * shortest form that reads back, so a rounded value takes 7 digits, not
 * 17 (the numbers are most of a pattern's bytes). */
static double round_digits(double v)
{
	char b[40];

	if (!isfinite(v) || v == 0)
		return v;
	snprintf(b, sizeof(b), "%.*g", PT_DIGEST_DIGITS, v);
	return strtod(b, NULL);
}

/* Kernels and collectives are compared per call too (their median
 * duration, bandwidth), over the workers that have them: a digest that
 * left a small one out would drop out of that comparison, and the ones it
 * kept would be its slower calls (with the floor on kernels, the planted
 * slow GPU of bench/gen_summaries.py ran 98 kernels slower instead of 107,
 * and another kernel was the costliest).  Memory operations and runtime
 * calls are few (their others' median, 0.02% for DtoD copies, read 0.0%
 * with the floor).  So only Python stacks, compared by share, have one. */
static int kept(const pt_pattern *p)
{
	return p->cls != PT_C_PYTHON || p->bottleneck >= PT_DIGEST_FLOOR ||
	       p->exec_ratio >= PT_DIGEST_FLOOR;
}

int pt_digest_write(const pt_summary *s, uint64_t full_bytes, pt_sb *out)
{
	pt_summary v = *s;
	pt_pattern *pat = NULL;
	char (*keys)[PT_DIGEST_KEY_LEN + 1] = NULL;
	size_t i, k = 0;
	int rc = PT_OK;

	if (s->error) {
		pt_summary_write(s, out);
		return out->oom ? PT_ENOMEM : PT_OK;
	}
	pat = x_malloc((s->npatterns ? s->npatterns : 1) * sizeof(*pat));
	keys = x_malloc((s->npatterns ? s->npatterns : 1) * sizeof(*keys));
	if (!pat || !keys) {
		out->oom = 1;
		rc = PT_ENOMEM;
		goto out;
	}
	for (i = 0; i < s->npatterns; i++) {
		const pt_pattern *p = &s->patterns[i];
		pt_pattern *q = &pat[k];

		if (!kept(p))
			continue;
		*q = *p;
		pt_digest_key(p->key, keys[k]);
		q->key = keys[k];
		/* the numbers a digest writes (the rest are PT_SF_FULL_ONLY) */
		q->total_ms = round_digits(p->total_ms);
		q->median_ms = round_digits(p->median_ms);
		q->bottleneck = round_digits(p->bottleneck);
		q->exec_ratio = round_digits(p->exec_ratio);
		q->busbw_gbps = round_digits(p->busbw_gbps);
		k++;
	}
	v.patterns = pat;
	v.npatterns = k;
	v.digest_of = full_bytes ? full_bytes : 1;
	v.cpath = NULL;
	v.tl = NULL;
	v.coll_cause = NULL;
	v.ncoll_cause = 0;
	v.hw_series = NULL;
	pt_summary_write(&v, out);
	if (out->oom)
		rc = PT_ENOMEM;
out:
	x_free(keys);
	x_free(pat);
	return rc;
}

int pt_digest_write_pair(const pt_summary *s, const char *path, pt_error *err)
{
	pt_sb sb = { 0 }, dg = { 0 };
	char dpath[4096];
	int rc;

	pt_error_clear(err);
	pt_error_subject(err, path);
	pt_summary_write(s, &sb);
	pt_sb_addc(&sb, '\n');
	if (sb.oom) {
		rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory while writing the summary");
		goto out;
	}
	if (pt_digest_path(path, dpath, sizeof(dpath))) {
		rc = pt_error_set(err, PT_EINVAL, -1, "path too long for its digest");
		goto out;
	}
	if ((rc = pt_digest_write(s, sb.len, &dg)) == PT_OK)
		pt_sb_addc(&dg, '\n');
	if (rc || dg.oom) {
		rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory while writing the digest");
		goto out;
	}
	/* The digest first: whoever sees the summary (the trigger, a master
	 * listing the folder) finds its digest already there; a digest whose
	 * summary never came is never looked for. */
	pt_error_subject(err, dpath);
	if ((rc = pt_file_write_atomic(dpath, dg.buf, dg.len, 0644, PT_FILE_DURABLE, err)))
		goto out;
	pt_error_clear(err);
	pt_error_subject(err, path);
	rc = pt_file_write_atomic(path, sb.buf, sb.len, 0644, PT_FILE_DURABLE, err);
out:
	pt_sb_free(&dg);
	pt_sb_free(&sb);
	return rc;
}
