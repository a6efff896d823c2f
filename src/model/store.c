/*
 * store.c - the per-worker event store (see store.h): growth, lanes, steps,
 * warnings.  Filled by src/trace readers, read by src/analysis.
 */
#include "store.h"
#include "../util/error.h"
#include "../util/bsearch.h"
#include "../util/xalloc.h"

#include <stdarg.h>
#include <stdio.h>

int pt_kind_class(int kind)
{
	switch (kind) {
	case PT_K_KERNEL: return PT_C_COMPUTE;
	case PT_K_COMM_KERNEL:
	case PT_K_CPU_COMM: return PT_C_COMM;
	case PT_K_MEMCPY:
	case PT_K_MEMSET: return PT_C_MEMORY;
	case PT_K_RUNTIME:
	case PT_K_DRIVER: return PT_C_RUNTIME;
	case PT_K_CPU_OP:
	case PT_K_PYTHON:
	case PT_K_ANNOTATION: return PT_C_PYTHON;
	default: return PT_C_NONE;
	}
}

int pt_kind_nest_rank(int kind)
{
	switch (kind) {
	case PT_K_STEP: return 0;
	case PT_K_ANNOTATION: return 1;
	case PT_K_PYTHON: return 2;
	case PT_K_CPU_OP: return 3;
	case PT_K_CPU_COMM: return 4;
	default: return 5;
	}
}

const char *pt_kind_name(int kind)
{
	static const char *names[PT_K_COUNT] = {
		"kernel", "comm_kernel", "memcpy", "memset", "runtime", "driver",
		"cpu_comm", "cpu_op", "python", "annotation", "step", "gpu_annotation",
	};
	return kind >= 0 && kind < PT_K_COUNT ? names[kind] : "unknown";
}

const char *pt_class_name(int cls)
{
	static const char *names[PT_C_COUNT] = {
		"idle", "python", "runtime", "memory", "communication", "compute",
	};
	return cls >= 0 && cls < PT_C_COUNT ? names[cls] : "none";
}

int pt_store_init(pt_store *s)
{
	memset(s, 0, sizeof(*s));
	s->rank = -1;
	s->world_size = -1;
	s->strs = pt_strtab_new();
	return s->strs ? PT_OK : PT_ENOMEM;
}

void pt_store_free(pt_store *s)
{
	if (!s)
		return;
	x_free(s->syncs);
	x_free(s->collids);
	x_free(s->peers);
	x_free(s->fr);
	x_free(s->kinfo);
	x_free(s->steps);
	x_free(s->lanes);
	x_free(s->ev);
	pt_strtab_free(s->strs);
	memset(s, 0, sizeof(*s));
}

int pt_store_add_sync(pt_store *s, const pt_sync *y)
{
	if (s->nsyncs == s->synccap && X_GROW(s->syncs, s->synccap, s->nsyncs + 1))
		return PT_ENOMEM;
	s->syncs[s->nsyncs++] = *y;
	return PT_OK;
}

int pt_store_add_peer(pt_store *s, const pt_peer *p)
{
	if (s->npeers == s->peercap && X_GROW(s->peers, s->peercap, s->npeers + 1))
		return PT_ENOMEM;
	s->peers[s->npeers++] = *p;
	return PT_OK;
}

int pt_store_add_collid(pt_store *s, const pt_collid *c)
{
	if (s->ncollids == s->collidcap && X_GROW(s->collids, s->collidcap, s->ncollids + 1))
		return PT_ENOMEM;
	s->collids[s->ncollids++] = *c;
	return PT_OK;
}

int pt_store_add_fr(pt_store *s, const pt_frent *f)
{
	if (s->nfr == s->frcap && X_GROW(s->fr, s->frcap, s->nfr + 1))
		return PT_ENOMEM;
	s->fr[s->nfr++] = *f;
	return PT_OK;
}

const pt_collid *pt_store_collid(const pt_store *s, uint32_t ev)
{
	size_t lo = 0, hi = s->ncollids;

	PT_BSEARCH(lo, hi, mid, s->collids[mid].ev < ev);
	return lo < s->ncollids && s->collids[lo].ev == ev ? &s->collids[lo] : NULL;
}

int pt_store_add(pt_store *s, const pt_event *e)
{
	if (s->n == s->cap && X_GROW(s->ev, s->cap, s->n + 1))
		return PT_ENOMEM;
	s->ev[s->n++] = *e;
	return PT_OK;
}

uint32_t pt_store_lane(pt_store *s, int64_t pid, int64_t tid, int gpu)
{
	static __thread size_t last; /* events come in runs on one lane */
	size_t i;

	if (last < s->nlanes && s->lanes[last].pid == pid && s->lanes[last].tid == tid &&
	    s->lanes[last].gpu == !!gpu)
		return (uint32_t)last;
	for (i = 0; i < s->nlanes; i++) {
		if (s->lanes[i].pid == pid && s->lanes[i].tid == tid && s->lanes[i].gpu == !!gpu) {
			last = i;
			return (uint32_t)i;
		}
	}
	if (s->nlanes >= UINT32_MAX - 1 || X_GROW(s->lanes, s->lanecap, s->nlanes + 1))
		return UINT32_MAX;
	s->lanes[s->nlanes].pid = pid;
	s->lanes[s->nlanes].tid = tid;
	s->lanes[s->nlanes].name = 0;
	s->lanes[s->nlanes].gpu = (uint8_t)!!gpu;
	last = s->nlanes;
	return (uint32_t)s->nlanes++;
}

int pt_store_add_step(pt_store *s, int64_t number, int64_t ts, int64_t dur)
{
	if (X_GROW(s->steps, s->stepcap, s->nsteps + 1))
		return PT_ENOMEM;
	s->steps[s->nsteps].number = number;
	s->steps[s->nsteps].ts = ts;
	s->steps[s->nsteps].dur = dur;
	s->nsteps++;
	return PT_OK;
}

int pt_store_add_kinfo(pt_store *s, const pt_kinfo *k)
{
	if (X_GROW(s->kinfo, s->kinfocap, s->nkinfo + 1))
		return PT_ENOMEM;
	s->kinfo[s->nkinfo++] = *k;
	return PT_OK;
}

void pt_store_warn(pt_store *s, const char *fmt, ...)
{
	va_list ap;

	if (s->nwarnings++ == 0) {
		va_start(ap, fmt);
		vsnprintf(s->warning, sizeof(s->warning), fmt, ap);
		va_end(ap);
	}
}

static uint32_t restr(pt_store *dst, const pt_store *src, uint32_t id)
{
	size_t n;
	const char *s;

	if (id == PT_STR_NONE)
		return PT_STR_NONE;
	s = pt_strtab_get(src->strs, id, &n);
	return pt_strtab_intern(dst->strs, s, n);
}

/* The CPU frames whose union field holds a "Call stack" string id (the
 * others hold a correlation id or nothing). */
static int has_stack(int kind)
{
	return kind == PT_K_CPU_OP || kind == PT_K_CPU_COMM || kind == PT_K_ANNOTATION ||
	       kind == PT_K_STEP;
}

/* src's lanes as dst's: map[l] for src lane l; UINT32_MAX on ENOMEM. */
static int map_lanes(pt_store *dst, const pt_store *src, uint32_t *map)
{
	for (size_t l = 0; l < src->nlanes; l++) {
		const pt_lane *a = &src->lanes[l];
		uint32_t k = pt_store_lane(dst, a->pid, a->tid, a->gpu);
		if (k == UINT32_MAX)
			return PT_ENOMEM;
		if (a->name && !dst->lanes[k].name &&
		    (dst->lanes[k].name = restr(dst, src, a->name)) == UINT32_MAX)
			return PT_ENOMEM;
		map[l] = k;
	}
	return PT_OK;
}

int pt_store_append(pt_store *dst, const pt_store *src, int64_t shift_ns, int64_t keep_from,
		    int64_t keep_to)
{
	uint32_t *lmap = x_calloc(src->nlanes ? src->nlanes : 1, sizeof(*lmap));
	uint32_t *emap = x_calloc(src->n ? src->n : 1, sizeof(*emap));
	size_t i;
	int rc = PT_ENOMEM;

	if (!lmap || !emap || map_lanes(dst, src, lmap))
		goto out;
	for (i = 0; i < src->n; i++) {
		pt_event e = src->ev[i];
		int64_t end = e.dur > INT64_MAX - e.ts ? INT64_MAX : e.ts + e.dur;

		emap[i] = UINT32_MAX;
		if (end < keep_from || e.ts > keep_to)
			continue;
		if (e.ts < keep_from || end > keep_to) {
			e.ts = e.ts < keep_from ? keep_from : e.ts;
			e.dur = (end > keep_to ? keep_to : end) - e.ts;
			e.flags |= PT_EV_CLIPPED;
		}
		e.ts -= shift_ns;
		e.lane = e.lane < src->nlanes ? lmap[e.lane] : e.lane;
		if ((e.name = restr(dst, src, e.name)) == UINT32_MAX)
			goto out;
		if (has_stack(e.kind) && e.stack && (e.stack = restr(dst, src, e.stack)) == UINT32_MAX)
			goto out;
		emap[i] = (uint32_t)dst->n;
		if (pt_store_add(dst, &e))
			goto out;
	}
	for (i = 0; i < src->nsteps; i++)
		if (pt_store_add_step(dst, src->steps[i].number, src->steps[i].ts - shift_ns,
				      src->steps[i].dur))
			goto out;
	for (i = 0; i < src->nkinfo; i++) {
		pt_kinfo k = src->kinfo[i];
		if (k.ev >= src->n || emap[k.ev] == UINT32_MAX)
			continue;
		k.ev = emap[k.ev];
		if (pt_store_add_kinfo(dst, &k))
			goto out;
	}
	/* (pg, seq) of the kept events: src's by ev ascending, after dst's
	 * (every earlier file's events come first), so dst stays sorted */
	for (i = 0; i < src->ncollids; i++) {
		pt_collid k = src->collids[i];
		if (k.ev >= src->n || emap[k.ev] == UINT32_MAX)
			continue;
		k.ev = emap[k.ev];
		if ((k.pg = restr(dst, src, k.pg)) == UINT32_MAX || pt_store_add_collid(dst, &k))
			goto out;
	}
	for (i = 0; i < src->npeers; i++) {
		pt_peer k = src->peers[i];
		if (k.ev >= src->n || emap[k.ev] == UINT32_MAX)
			continue;
		k.ev = emap[k.ev];
		if (pt_store_add_peer(dst, &k))
			goto out;
	}
	for (i = 0; i < src->nsyncs; i++) {
		pt_sync y = src->syncs[i];
		y.ts -= shift_ns;
		if (y.lane != UINT32_MAX && y.lane < src->nlanes)
			y.lane = lmap[y.lane];
		if (y.wlane != UINT32_MAX && y.wlane < src->nlanes)
			y.wlane = lmap[y.wlane];
		if (pt_store_add_sync(dst, &y))
			goto out;
	}
	if (dst->rank < 0 && dst->world_size < 0 && !dst->backend) {
		dst->rank = src->rank;
		dst->world_size = src->world_size;
		if ((dst->backend = restr(dst, src, src->backend)) == UINT32_MAX ||
		    (dst->device_name = restr(dst, src, src->device_name)) == UINT32_MAX)
			goto out;
		dst->ndevices = src->ndevices;
		dst->base_ns = src->base_ns;
	}
	if (!dst->torch && (dst->torch = restr(dst, src, src->torch)) == UINT32_MAX)
		goto out;
	if (src->nwarnings && !dst->nwarnings)
		snprintf(dst->warning, sizeof(dst->warning), "%s", src->warning);
	dst->nwarnings += src->nwarnings;
	dst->truncated |= src->truncated;
	dst->bytes_read += src->bytes_read;
	rc = PT_OK;
out:
	x_free(emap);
	x_free(lmap);
	return rc;
}
