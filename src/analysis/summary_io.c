/*
 * summary_io.c - the versioned summary JSON (docs/summary.md): the writer
 * used by `summarize` on every node, which walks the member tables of
 * summary_format.c (the reader, summary_parse.c, matches against the same
 * rows), and the file side of the validating reader the master uses on
 * thousands of these.
 *
 * Flow: pt_summary --pt_summary_write_file--> SUMMARY.json (shared file
 * system) --pt_summary_read_file--> pt_summary --> src/diagnose.
 * Files are compact (no indentation) and written to a temporary name in
 * the same directory, then renamed, so a reader never sees half a file.
 */
#include "summary.h"
#include "collectives.h"
#include "p2p.h"
#include "critpath.h"
#include "spans.h"
#include "summary_parse.h"
#include "summary_format.h"
#include "breakdown.h"
#include "../model/commkind.h"
#include "../model/samples.h"
#include "../util/file.h"
#include "../util/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- writer -------------------------------------------------------------- */

/* Members through strbuf's JSON emitters (the one number rule,
 * pt_sb_add_double); key() writes the ',' before every member but the
 * first of its object. */
static void key(pt_sb *sb, const char *k, int *first)
{
	pt_sb_add_json_key(sb, k, *first);
	*first = 0;
}

static void str_or_null(pt_sb *sb, const char *v)
{
	if (v)
		pt_sb_add_json_str(sb, v, strlen(v));
	else
		pt_sb_add(sb, "null", 4);
}

/* A per-step value: ms made of whole ns (patterns.c sums integer ns), so
 * "<ms>.<up to 6 digits>" reads back as the same double, written without
 * the shortest-repr search (the per-step arrays hold up to 20,000 numbers;
 * pt_sb_add_double made writing many times slower: docs/bench.md, "Code
 * shaped for speed").  Other values go the general way. */
static void add_ms_ns(pt_sb *sb, double ms)
{
	double nsd = ms * 1e6;
	int64_t ns = (int64_t)llround(nsd);
	char buf[32], *q;
	uint64_t frac, ip;

	if (!(ms >= 0) || ms > 9e12 || (double)ns / 1e6 != ms) {
		pt_sb_add_double(sb, ms);
		return;
	}
	/* "%lld.%06lld", trailing zeros and a bare '.' dropped, by hand
	 * (snprintf was 0.7% of summarize on the bench DLRM trace) */
	frac = (uint64_t)(ns % 1000000);
	if (frac) {
		int nd = 6;
		while (frac % 10 == 0) {
			frac /= 10;
			nd--;
		}
		q = buf + sizeof(buf);
		while (nd-- > 0) {
			*--q = (char)('0' + frac % 10);
			frac /= 10;
		}
		*--q = '.';
	} else {
		q = buf + sizeof(buf);
	}
	ip = (uint64_t)(ns / 1000000);
	do {
		*--q = (char)('0' + ip % 10);
		ip /= 10;
	} while (ip);
	pt_sb_add(sb, q, (size_t)(buf + sizeof(buf) - q));
}

/* ---- the member tables (summary_format.c) --------------------------------- */

static double num_at(const char *f, int type)
{
	switch (type) {
	case PT_SF_I64: return (double)*(const int64_t *)f;
	case PT_SF_U64: return (double)*(const uint64_t *)f;
	case PT_SF_U32: return (double)*(const uint32_t *)f;
	default: return *(const double *)f;
	}
}

/* Does the writer write row m of the struct at base?  prev: the row above
 * was written. */
static int row_written(const pt_summary *s, const void *base, const pt_sf_member *m, int prev)
{
	const char *f = (const char *)base + m->off;

	if ((m->flags & PT_SF_FULL_ONLY) && s->digest_of)
		return 0;
	switch (m->when) {
	case PT_SF_IF_PREV:
		return prev;
	case PT_SF_IF_SET:
		if (m->type == PT_SF_HW)
			return ((const pt_pattern *)base)->nhw != 0;
		if (m->type == PT_SF_COLLECTIVES)
			return s->ncoll_chans != 0;
		if (m->type == PT_SF_STEP_MS)
			return ((const pt_pattern *)base)->step_ms && ((const pt_pattern *)base)->nstep_ms;
		return *(const void *const *)f != NULL;
	case PT_SF_IF_POSITIVE:
		return num_at(f, m->type) > 0;
	case PT_SF_IF_NONNEG:
		return num_at(f, m->type) >= 0;
	default:
		return 1;
	}
}

static void write_obj(pt_sb *sb, const pt_summary *s, const void *base, const pt_sf_table *tb);

/* Row m of the struct at base (s: the summary being written) as a member
 * of the object being written. */
static void write_value(pt_sb *sb, const pt_summary *s, const void *base, const pt_sf_member *m);

static void write_row(pt_sb *sb, const pt_summary *s, const void *base, const pt_sf_member *m,
		      int *first)
{
	const pt_pattern *pt = base;

	if (m->type == PT_SF_ROLE && !(pt->cls == PT_C_COMM && pt->role))
		return;
	key(sb, m->name.name, first);
	write_value(sb, s, base, m);
}

/* A digest's pattern (summary_format.h): the array form when nothing it
 * has is left out of it. */
static void write_pattern(pt_sb *sb, const pt_summary *s, const pt_pattern *pt)
{
	int j;

	if (!s->digest_of || pt->cls == PT_C_COMM || pt->nhw) {
		write_obj(sb, s, pt, &pt_sf_pattern);
		return;
	}
	pt_sb_addc(sb, '[');
	for (j = 0; j < PT_SF_DIGEST_ROW_N; j++) {
		if (j)
			pt_sb_addc(sb, ',');
		write_value(sb, s, pt, &pt_sf_pattern.m[pt_sf_digest_row[j]]);
	}
	pt_sb_addc(sb, ']');
}

/* The value of row m of the struct at base. */
static void write_value(pt_sb *sb, const pt_summary *s, const void *base, const pt_sf_member *m)
{
	const char *f = (const char *)base + m->off;
	const pt_pattern *pt = base;
	size_t i;
	int c, f2;

	switch (m->type) {
	case PT_SF_STR:
	case PT_SF_KEY:
		str_or_null(sb, *(char *const *)f ? *(char *const *)f : "");
		break;
	case PT_SF_STR_NULL: str_or_null(sb, *(char *const *)f); break;
	case PT_SF_CHARS: str_or_null(sb, f); break;
	case PT_SF_I64: pt_sb_add_i64(sb, *(const int64_t *)f); break;
	case PT_SF_U64: pt_sb_add_u64(sb, *(const uint64_t *)f); break;
	case PT_SF_U32: pt_sb_add_u64(sb, *(const uint32_t *)f); break;
	case PT_SF_DBL:
	case PT_SF_DBL_IN:
	case PT_SF_DBL_POS:
		pt_sb_add_double(sb, *(const double *)f);
		break;
	case PT_SF_BOOL: pt_sb_adds(sb, *(const int *)f ? "true" : "false"); break;
	case PT_SF_CLASS: str_or_null(sb, pt_class_name(*(const uint8_t *)f)); break;
	case PT_SF_KIND: str_or_null(sb, pt_kind_name(*(const uint8_t *)f)); break;
	case PT_SF_ROLE: str_or_null(sb, pt_commkind_role_name(pt->role)); break;
	case PT_SF_FORMAT: str_or_null(sb, PT_SUMMARY_FORMAT); break;
	case PT_SF_VERSION: pt_sb_addf(sb, "%d", PT_SUMMARY_VERSION); break;
	case PT_SF_WINDOW: write_obj(sb, s, s, &pt_sf_window); break;
	case PT_SF_HW_GPU: write_obj(sb, s, &s->hw_gpu, &pt_sf_hw_gpu); break;
	case PT_SF_STEPS:
		pt_sb_addc(sb, '[');
		for (i = 0; i < s->nsteps; i++) {
			pt_sf_step row = { s->step_numbers[i], s->step_ms[i] };

			if (i)
				pt_sb_addc(sb, ',');
			write_obj(sb, s, &row, &pt_sf_step_tab);
		}
		pt_sb_addc(sb, ']');
		break;
	case PT_SF_CLASS_MS:
		pt_sb_addc(sb, '{');
		for (c = PT_C_COUNT - 1, f2 = 1; c >= 0; c--) {
			key(sb, pt_class_name(c), &f2);
			pt_sb_add_double(sb, s->class_ms[c]);
		}
		pt_sb_addc(sb, '}');
		break;
	case PT_SF_BREAKDOWN: pt_breakdown_write(s->breakdown, sb); break;
	case PT_SF_HW_SERIES: pt_samples_to_json(s->hw_series, sb); break;
	case PT_SF_COLLECTIVES: pt_coll_write(s, sb); break;
	case PT_SF_CRITPATH: pt_cpath_write(s, sb); break;
	case PT_SF_TIMELINE: pt_spans_write(s, sb); break;
	case PT_SF_P2P: pt_p2p_write(s, sb); break;
	case PT_SF_PATTERNS:
		pt_sb_addc(sb, '[');
		for (i = 0; i < s->npatterns; i++) {
			if (i)
				pt_sb_addc(sb, ',');
			write_pattern(sb, s, &s->patterns[i]);
		}
		pt_sb_addc(sb, ']');
		break;
	case PT_SF_STEP_MS:
		pt_sb_addc(sb, '[');
		for (i = 0; i < pt->nstep_ms; i++) {
			if (i)
				pt_sb_addc(sb, ',');
			add_ms_ns(sb, pt->step_ms[i]);
		}
		pt_sb_addc(sb, ']');
		break;
	case PT_SF_HW:
		/* Link throughput from hardware samples (docs/hardware.md). */
		pt_sb_addc(sb, '[');
		for (i = 0; i < pt->nhw; i++) {
			if (i)
				pt_sb_addc(sb, ',');
			write_obj(sb, s, &pt->hw[i], &pt_sf_hw_link);
		}
		pt_sb_addc(sb, ']');
		break;
	}
}

/* The struct at base as the object of table tb.  A failed worker's
 * summary (s->error) has the identity rows only. */
static void write_obj(pt_sb *sb, const pt_summary *s, const void *base, const pt_sf_table *tb)
{
	int i, prev = 1, first = 1;

	pt_sb_addc(sb, '{');
	for (i = 0; i < tb->n; i++) {
		const pt_sf_member *m = &tb->m[i];

		prev = (!s->error || (m->flags & PT_SF_IDENTITY) || tb != &pt_sf_top) &&
		       row_written(s, base, m, prev);
		if (prev)
			write_row(sb, s, base, m, &first);
	}
	pt_sb_addc(sb, '}');
}

void pt_summary_write(const pt_summary *s, pt_sb *out)
{
	write_obj(out, s, s, &pt_sf_top);
}

int pt_summary_write_file(const pt_summary *s, const char *path, pt_error *err)
{
	pt_sb sb = { 0 };
	int rc;

	pt_error_clear(err); /* the subject must be this file, not the trace */
	pt_summary_write(s, &sb);
	pt_sb_addc(&sb, '\n');
	if (sb.oom) {
		pt_error_subject(err, path);
		rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory while writing the summary");
		goto out;
	}
	/* Beside path, so rename() is atomic on the shared file system, and
	 * durable: a summary is a result the analyzer reads later, maybe
	 * after this node crashed (the fsync rule in util/file.h). */
	rc = pt_file_write_atomic(path, sb.buf, sb.len, 0644, PT_FILE_DURABLE, err);
out:
	pt_sb_free(&sb);
	return rc;
}

/* ---- reader -------------------------------------------------------------- */

/* Largest summary we read (summaries are KB to a few MB). */
#define SUMMARY_FILE_MAX ((size_t)1 << 30)

/* The parser (summary_parse.c) does the checks; this is the file side. */
static pt_summary *read_file(const char *path, pt_summary_keys *ks, int slim, pt_error *err)
{
	pt_summary *s = NULL;
	char *buf = NULL;
	size_t len = 0;

	if (pt_file_read(path, SUMMARY_FILE_MAX, &buf, &len, err) == PT_OK)
		s = pt_summary_parse_opt(buf, len, ks, slim, err);
	x_free(buf);
	if (!s)
		pt_error_subject(err, path);
	return s;
}

pt_summary *pt_summary_read_mem(const char *buf, size_t len, pt_error *err)
{
	return pt_summary_parse(buf, len, NULL, err);
}

pt_summary *pt_summary_read_file(const char *path, pt_error *err)
{
	return read_file(path, NULL, 0, err);
}

pt_summary *pt_summary_read_file_shared(const char *path, pt_summary_keys *ks, pt_error *err)
{
	return read_file(path, ks, 0, err);
}

pt_summary *pt_summary_read_file_slim(const char *path, pt_summary_keys *ks, pt_error *err)
{
	return read_file(path, ks, 1, err);
}
