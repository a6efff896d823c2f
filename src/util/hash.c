/*
 * hash.c - the growing part of the one hash map (hash.h): reserve, clear,
 * free.  Lookups and puts are inline in the header, the FNV-1a functions
 * too.  The slots keep the bits of each hash that place them, so growing
 * moves slots without asking the caller to hash its keys again.
 */
#include "hash.h"

#include "error.h"
#include "xalloc.h"

#include <string.h>

#define MIN_CAP 16

/* Move every value into a fresh table of cap slots (a power of two). */
static int rehash(pt_hmap *m, size_t cap)
{
	pt_hmap_slot *ns = x_calloc(cap, sizeof(*ns));
	size_t i, j;

	if (!ns)
		return PT_ENOMEM;
	for (i = 0; i < m->cap; i++) {
		if (!m->slot[i].val1)
			continue;
		for (j = m->slot[i].hash & (cap - 1); ns[j].val1; j = (j + 1) & (cap - 1))
			;
		ns[j] = m->slot[i];
	}
	x_free(m->slot);
	m->slot = ns;
	m->cap = cap;
	return PT_OK;
}

int pt_hmap_reserve(pt_hmap *m, size_t n)
{
	size_t cap = m->cap ? m->cap : MIN_CAP;

	while (cap / 2 < n) {
		if (cap > SIZE_MAX / 2 / sizeof(pt_hmap_slot))
			return PT_ENOMEM;
		cap *= 2;
	}
	return cap == m->cap ? PT_OK : rehash(m, cap);
}

void pt_hmap_clear(pt_hmap *m)
{
	if (m->n)
		memset(m->slot, 0, m->cap * sizeof(*m->slot));
	m->n = 0;
}

void pt_hmap_free(pt_hmap *m)
{
	if (!m)
		return;
	x_free(m->slot);
	m->slot = NULL;
	m->cap = m->n = 0;
}
