/*
 * short.c - report.json's "display"."short": every function key the page
 * shows (the GPU Compute, memory, runtime, Python and Communication
 * sections' keys, the heatmap's functions, the findings' functions, the
 * critical path's functions) mapped to its short name, made by the one
 * shortener (names.c, pt_name_short_set), so the page never shortens a
 * name itself.  Runs after the diagnosis has written those parts (called
 * from the display writer, src/diagnose/display.c); it reads the report
 * tree because the page's list is exactly what the report holds.
 */
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "keys.h"
#include "names.h"
#include "../util/xalloc.h"

typedef struct keys {
	const char **k;
	size_t n, cap;
	int oom;
} keys;

static void add(keys *ks, const char *k)
{
	/* a section's own members ("abnormal_workers") are not functions */
	if (!k || !*k || ks->oom || pt_key_known(k))
		return;
	if (X_GROW(ks->k, ks->cap, ks->n + 1)) {
		ks->oom = 1;
		return;
	}
	ks->k[ks->n++] = k;
}

/* The member keys of object o (nothing when o is not an object). */
static void add_members(keys *ks, const pt_rv *o)
{
	const pt_rv *c;

	if (!o || o->type != PT_RV_OBJ)
		return;
	for (c = o->child; c; c = c->next)
		add(ks, c->key);
}

/* The string under key in each object element of array a. */
static void add_each(keys *ks, const pt_rv *a, const char *key)
{
	const pt_rv *e, *v;

	if (!a || a->type != PT_RV_ARR)
		return;
	for (e = a->child; e; e = e->next) {
		v = e->type == PT_RV_OBJ ? pt_rv_get(e, key) : NULL;
		if (v && v->type == PT_RV_STR)
			add(ks, v->str);
	}
}

static void add_critpath(keys *ks, const pt_rv *root)
{
	const pt_rv *ws = pt_rv_get(pt_rv_get(root, PT_KEY_CRITICAL_PATH), PT_KEY_WORKERS), *w, *st;

	for (w = ws && ws->type == PT_RV_OBJ ? ws->child : NULL; w; w = w->next) {
		const pt_rv *steps = pt_rv_get(w, PT_KEY_STEPS_LC);

		for (st = steps && steps->type == PT_RV_ARR ? steps->child : NULL; st; st = st->next)
			if (st->type == PT_RV_OBJ)
				add_each(ks, pt_rv_get(st, PT_KEY_FUNCTIONS), PT_KEY_NAME);
	}
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int pt_report_short_names(pt_report *r, pt_rv *display)
{
	const pt_rv *root = pt_report_root_c(r), *gc, *c, *comm;
	keys ks = { 0 };
	char **out = NULL;
	pt_rv *o;
	size_t i, n = 0;
	int rc = -1;

	gc = pt_rv_get(root, PT_KEY_GPU_COMPUTE);
	add_members(&ks, pt_rv_get(gc, PT_KEY_MAJOR_KERNEL_EXECUTIONS));
	c = pt_rv_get(gc, PT_KEY_DETAILED_REPORT);
	for (c = c && c->type == PT_RV_OBJ ? c->child : NULL; c; c = c->next)
		add_members(&ks, c);
	add_members(&ks, pt_rv_get(root, PT_KEY_GPU_MEMORY_OPERATIONS));
	add_members(&ks, pt_rv_get(root, PT_KEY_CUDA_RUNTIME));
	add_members(&ks, pt_rv_get(root, PT_KEY_PYTHON_FUNCTIONS));
	comm = pt_rv_get(root, PT_KEY_COMMUNICATION);
	for (c = comm && comm->type == PT_RV_OBJ ? comm->child : NULL; c; c = c->next)
		add_members(&ks, c);
	add_each(&ks, pt_rv_get(pt_rv_get(display, PT_KEY_HEATMAP), PT_KEY_FUNCTIONS), PT_KEY_KEY);
	add_each(&ks, pt_rv_get(root, PT_KEY_FINDINGS), PT_KEY_FUNCTION);
	add_critpath(&ks, root);
	if (ks.oom)
		goto out;
	/* One entry per distinct key, in byte order (the map's order). */
	if (ks.n > 1)
		qsort(ks.k, ks.n, sizeof(*ks.k), cmp);
	for (i = 0; i < ks.n; i++)
		if (!n || strcmp(ks.k[n - 1], ks.k[i]))
			ks.k[n++] = ks.k[i];
	out = x_calloc(n ? n : 1, sizeof(*out));
	if (!out || pt_name_short_set(ks.k, n, (size_t)1 << 20, out))
		goto out;
	o = pt_rv_obj(r, display, PT_KEY_SHORT);
	for (i = 0; i < n; i++)
		pt_rv_str(r, o, ks.k[i], out[i]);
	rc = pt_report_oom(r) ? -1 : 0;
out:
	for (i = 0; out && i < n; i++)
		x_free(out[i]);
	x_free(out);
	x_free(ks.k);
	return rc;
}
