/*
 * store.c - the per-worker event store (see store.h): growth, lanes, steps,
 * warnings.  Filled by src/trace readers, read by src/analysis.
 */
#include "store.h"
#include "../util/error.h"
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

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->collids[mid].ev < ev)
			lo = mid + 1;
		else
			hi = mid;
	}
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
