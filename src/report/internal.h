/*
 * internal.h - the report's insides, shared by report.c (the tree, its
 * arena and its JSON writer) and finding.c (the finding model kept beside
 * the tree).  Private to src/report.
 */
#ifndef PT_REPORT_INTERNAL_H
#define PT_REPORT_INTERNAL_H

#include "report.h"

typedef struct chunk {
	struct chunk *prev;
	size_t used, cap;
	char data[];
} chunk;

struct pt_report {
	chunk *cur;
	int oom;
	pt_rv root;
	pt_finding *f;    /* the finding model: x_malloc'd, contents in the arena */
	size_t nf, fcap;
	pt_rv *farr;      /* root "findings", once opened */
	struct pt_timeline *tl;  /* the timeline model (timeline.h), owned; NULL none */
};

/* n bytes from the arena, 16-aligned; NULL (oom set) on failure. */
void *pt_report_alloc(pt_report *r, size_t n);

#endif
