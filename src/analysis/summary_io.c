/*
 * summary_io.c - the versioned summary JSON (docs/summary.md): the writer
 * used by `summarize` on every node, and the file side of the validating
 * reader the master uses on thousands of these (the parser itself is
 * summary_parse.c).
 *
 * Flow: pt_summary --pt_summary_write_file--> SUMMARY.json (shared file
 * system) --pt_summary_read_file--> pt_summary --> src/diagnose.
 * Files are compact (no indentation) and written to a temporary name in
 * the same directory, then renamed, so a reader never sees half a file.
 */
#include "summary.h"
#include "collectives.h"
#include "summary_parse.h"
#include "breakdown.h"
#include "../model/commkind.h"
#include "../model/samples.h"
#include "../util/file.h"
#include "../util/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

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

/* A per-step value: ms made of whole ns (patterns.c sums integer ns), so
 * "<ms>.<up to 6 digits>" reads back as the same double, written without
 * the shortest-repr search (the per-step arrays hold up to 20,000 numbers;
 * pt_sb_add_double made writing many times slower: docs/bench.md, "Code
 * shaped for speed").  Other values go the general way. */
static void add_ms_ns(pt_sb *sb, double ms)
{
	double nsd = ms * 1e6;
	int64_t ns = (int64_t)llround(nsd);
	char buf[32];
	int n;

	if (!(ms >= 0) || ms > 9e12 || (double)ns / 1e6 != ms) {
		pt_sb_add_double(sb, ms);
		return;
	}
	n = snprintf(buf, sizeof(buf), "%lld.%06lld", (long long)(ns / 1000000),
		     (long long)(ns % 1000000));
	while (n > 0 && buf[n - 1] == '0')
		n--;
	if (n > 0 && buf[n - 1] == '.')
		n--;
	pt_sb_add(sb, buf, (size_t)n);
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
	if (p->cls == PT_C_COMM && p->role)
		add_str(sb, "role", pt_commkind_role_name(p->role));
	if (p->eff_n) {
		add_u64(sb, "eff_n", p->eff_n);
		add_dbl(sb, "occupancy_pct", p->occupancy_pct);
		add_dbl(sb, "blocks_per_sm", p->blocks_per_sm);
		add_dbl(sb, "registers", p->registers);
		add_dbl(sb, "shared_mem", p->shared_mem);
	}
	if (p->step_ms && p->nstep_ms) {
		size_t j;

		add_key(sb, "step_ms");
		pt_sb_addc(sb, '[');
		for (j = 0; j < p->nstep_ms; j++) {
			if (j)
				pt_sb_addc(sb, ',');
			add_ms_ns(sb, p->step_ms[j]);
		}
		pt_sb_adds(sb, "],");
	}
	if (p->nhw) {
		/* Link throughput from hardware samples (docs/hardware.md). */
		uint32_t j;

		add_key(sb, "hw");
		pt_sb_addc(sb, '[');
		for (j = 0; j < p->nhw; j++) {
			const pt_hw_link *h = &p->hw[j];

			pt_sb_addc(sb, '{');
			add_str(sb, "group", h->group);
			add_dbl(sb, "avg_tput_pct", h->avg_pct);
			add_dbl(sb, "std_tput_pct", h->std_pct);
			add_dbl(sb, "peak_tput_pct", h->peak_pct);
			add_u64(sb, "samples", h->samples);
			add_u64(sb, "kernels", h->kernels);
			close_with(sb, '}');
			pt_sb_addc(sb, ',');
		}
		close_with(sb, ']');
		pt_sb_addc(sb, ',');
	}
	close_with(sb, '}');
}

/* GPU state during compute kernels; unknown (-1) members are left out. */
static void write_hw_gpu(pt_sb *sb, const pt_summary *s)
{
	const pt_hw_gpu *g = &s->hw_gpu;

	add_str(sb, "hw_source", s->hw_source);
	add_key(sb, "hw_gpu");
	pt_sb_addc(sb, '{');
	add_u64(sb, "samples", g->samples);
	if (g->sm_active_pct >= 0)
		add_dbl(sb, "sm_active_pct", g->sm_active_pct);
	if (g->gpu_util_pct >= 0)
		add_dbl(sb, "gpu_util_pct", g->gpu_util_pct);
	if (g->sm_clock_mhz >= 0)
		add_dbl(sb, "sm_clock_mhz", g->sm_clock_mhz);
	if (g->sm_clock_max_mhz >= 0)
		add_dbl(sb, "sm_clock_max_mhz", g->sm_clock_max_mhz);
	if (g->throttle_frac >= 0) {
		add_dbl(sb, "throttle_frac", g->throttle_frac);
		add_u64(sb, "throttle_reasons", g->throttle_reasons);
	}
	if (g->temperature_c >= 0)
		add_dbl(sb, "temperature_c", g->temperature_c);
	if (g->power_w >= 0)
		add_dbl(sb, "power_w", g->power_w);
	close_with(sb, '}');
	pt_sb_addc(sb, ',');
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
	if (s->gpu_compute_util >= 0)
		add_dbl(out, "gpu_compute_util", s->gpu_compute_util);
	add_key(out, "class_ms");
	pt_sb_addc(out, '{');
	for (c = PT_C_COUNT - 1; c >= 0; c--)
		add_dbl(out, pt_class_name(c), s->class_ms[c]);
	close_with(out, '}');
	pt_sb_addc(out, ',');
	add_u64(out, "nevents", s->nevents);
	if (s->breakdown) {
		add_key(out, "gpu_breakdown");
		pt_breakdown_write(s->breakdown, out);
		pt_sb_addc(out, ',');
	}
	if (s->hw_source)
		write_hw_gpu(out, s);
	if (s->hw_series) {
		add_key(out, "hw_series");
		pt_samples_to_json(s->hw_series, out);
		pt_sb_addc(out, ',');
	}
	pt_coll_write(s, out);
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
static pt_summary *read_file(const char *path, pt_summary_keys *ks, pt_error *err)
{
	pt_summary *s = NULL;
	char *buf = NULL;
	size_t len = 0;

	if (pt_file_read(path, SUMMARY_FILE_MAX, &buf, &len, err) == PT_OK)
		s = pt_summary_parse(buf, len, ks, err);
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
	return read_file(path, NULL, err);
}

pt_summary *pt_summary_read_file_shared(const char *path, pt_summary_keys *ks, pt_error *err)
{
	return read_file(path, ks, err);
}
