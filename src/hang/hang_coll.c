/*
 * hang_coll.c - which rank never entered the collective the others wait in
 * (issue 32, docs/hang.md "Collectives"): each collector's watch keeps the
 * last instance it entered per process group from torch's Flight Recorder,
 * and its watchdog writes them into the stacks dump (src/model/stacks.h).
 * Here, across the live workers: per group the highest sequence number
 * entered, and the workers whose last one is lower.  Called by
 * pt_hang_analyze; the explanation and the report render the result.
 */
#include "hang.h"

#include <stdio.h>
#include <string.h>

#include "../util/xalloc.h"

static int live(const pt_hang_worker *w)
{
	return (w->state == PT_HANG_RUNNING || w->state == PT_HANG_HUNG) && w->dump &&
	       w->dump->fr_read_us > 0 && !strcmp(w->dump->fr, "on");
}

static const pt_hang_coll *coll_of(const pt_hang_dump *d, const char *pg)
{
	for (size_t i = 0; i < d->ncolls; i++)
		if (!strcmp(d->colls[i].pg, pg))
			return &d->colls[i];
	return NULL;
}

static int listed(const pt_hang_result *res, size_t wi)
{
	for (size_t i = 0; i < res->nmissing; i++)
		if (res->missing[i].worker == wi)
			return 1;
	return 0;
}

/* The call site of the instance in worker h: its training thread's
 * innermost user frame. */
static void site_of(const pt_hang_worker *h, char *out, size_t cap)
{
	const pt_hang_frame *f = pt_hang_user_frame(pt_hang_training_thread(h->dump));

	out[0] = 0;
	if (f)
		snprintf(out, cap, "%s:%lld in %s", f->file, (long long)f->line, f->func);
}

/* The workers of one process group (pg) that stayed behind its highest
 * instance. */
static int group(const pt_hang_worker *w, size_t n, const char *pg, pt_hang_result *res,
		 size_t *cap)
{
	int64_t max = -1;
	size_t holder = SIZE_MAX, nhold = 0;

	for (size_t i = 0; i < n; i++) {
		const pt_hang_coll *c = live(&w[i]) ? coll_of(w[i].dump, pg) : NULL;
		if (c && c->seq > max) {
			max = c->seq;
			holder = i;
		}
	}
	for (size_t i = 0; i < n; i++) {
		const pt_hang_coll *c = live(&w[i]) ? coll_of(w[i].dump, pg) : NULL;
		nhold += c && c->seq == max;
	}
	for (size_t i = 0; holder != SIZE_MAX && i < n; i++) {
		const pt_hang_coll *c = live(&w[i]) ? coll_of(w[i].dump, pg) : NULL, *hc;
		pt_hang_missing *m;

		if (!c || c->seq >= max || listed(res, i))
			continue;
		if (res->nmissing + 1 > *cap && X_GROW(res->missing, *cap, res->nmissing + 1))
			return -1;
		hc = coll_of(w[holder].dump, pg);
		m = &res->missing[res->nmissing++];
		memset(m, 0, sizeof(*m));
		m->worker = i;
		snprintf(m->pg, sizeof(m->pg), "%s", pg);
		snprintf(m->desc, sizeof(m->desc), "%s", hc->desc);
		snprintf(m->name, sizeof(m->name), "%s", hc->name);
		m->seq = max;
		m->last = c->seq;
		m->nwaiting = nhold;
		site_of(&w[holder], m->site, sizeof(m->site));
	}
	return 0;
}

int pt_hang_collectives(const pt_hang_worker *w, size_t n, pt_hang_result *res)
{
	size_t cap = 0;

	for (size_t i = 0; i < n; i++) {
		if (!live(&w[i]))
			continue;
		for (size_t k = 0; k < w[i].dump->ncolls; k++) {
			const char *pg = w[i].dump->colls[k].pg;
			size_t j;
			/* each group once: at the first worker that has it */
			for (j = 0; j < i; j++)
				if (live(&w[j]) && coll_of(w[j].dump, pg))
					break;
			if (j == i && group(w, n, pg, res, &cap))
				return -1;
		}
	}
	return 0;
}
