/*
 * keyindex.c - the function-key index of a diagnosis (internal.h): every
 * (class, key) of every worker summary hashed once, each key owning a
 * contiguous run of (worker, pattern) entries in worker order.  Built by
 * pt_diagnose (diagnose.c) before the sections run; the sections and
 * "display" find keys in it.
 */
#include "internal.h"
#include "../util/xalloc.h"

#include <string.h>

/* The index lives in the context (c->kmap) after build_index so that
 * "display" can find the keys the findings name.  Key index of (cls, key)
 * hashed h, UINT32_MAX when absent. */
static uint32_t kindex_find(const dctx *c, uint64_t h, int cls, const char *key)
{
	size_t it = 0;
	uint32_t v;

	while ((v = pt_hmap_next(&c->kmap, h, &it)) != PT_HMAP_NONE)
		if (c->keys[v].cls == cls && !strcmp(c->keys[v].key, key))
			return v;
	return UINT32_MAX;
}

/* Key index of (cls, key), inserting it; UINT32_MAX on allocation failure. */
static uint32_t kindex_get(dctx *c, size_t *kcap, const pt_pattern *p)
{
	uint64_t h = pt_hash_words(p->key, strlen(p->key), (uint64_t)p->cls);
	uint32_t v = kindex_find(c, h, p->cls, p->key);
	dkey *k;

	if (v != UINT32_MAX)
		return v;
	if (c->nkeys >= UINT32_MAX - 1 || X_GROW(c->keys, *kcap, c->nkeys + 1) ||
	    pt_hmap_put(&c->kmap, h, (uint32_t)c->nkeys))
		return UINT32_MAX;
	k = &c->keys[c->nkeys];
	memset(k, 0, sizeof(*k));
	k->key = p->key;
	k->cls = p->cls;
	k->kind = p->kind;
	k->last_w = UINT32_MAX;
	return (uint32_t)c->nkeys++;
}

uint32_t diag_key_find(const dctx *c, int cls, const char *key)
{
	return key ? kindex_find(c, pt_hash_words(key, strlen(key), (uint64_t)cls), cls, key) : UINT32_MAX;
}

/* Two passes over all patterns: count entries per key, then place them, so
 * each key's entries are contiguous and in worker order. */
/* Summaries read with a shared key set (pt_summary_read_file_shared, as
 * `diagnose` does) repeat the same key pointers, and while pt_diagnose runs
 * equal pointers mean equal keys: a direct-mapped cache from pointer to key
 * index spares most patterns hashing and comparing their key
 * (hashing and strcmp showed in a 10,000-worker `diagnose` run's
 * profile, all in this serial phase: docs/bench.md).  A miss just takes
 * the hash path. */
#define KCACHE 4096

typedef struct kcache_ent {
	const char *key;
	uint32_t k;
	uint8_t cls;
} kcache_ent;

int diag_index_build(dctx *c)
{
	size_t kcap = 0, total = 0, w, p, pos = 0;
	uint32_t *kid = NULL, *fill = NULL;
	kcache_ent *kc = NULL;
	int rc = -1;

	for (w = 0; w < c->nw; w++)
		total += c->w[w].s->npatterns;
	kid = x_malloc((total ? total : 1) * sizeof(*kid));
	kc = x_calloc(KCACHE, sizeof(*kc));
	if (!kid || !kc || total >= UINT32_MAX)
		goto out;
	for (w = 0; w < c->nw; w++) {
		const pt_summary *s = c->w[w].s;

		for (p = 0; p < s->npatterns; p++, pos++) {
			uint32_t k;

			if (!pt_summary_pat(s, p)->key) {
				kid[pos] = UINT32_MAX;
				continue;
			}
			{
				const pt_pattern *pp = pt_summary_pat(s, p);
				kcache_ent *e = &kc[((uintptr_t)pp->key >> 4) & (KCACHE - 1)];

				if (e->key == pp->key && e->cls == pp->cls) {
					k = e->k;
				} else {
					k = kindex_get(c, &kcap, pp);
					if (k == UINT32_MAX)
						goto out;
					e->key = pp->key;
					e->cls = pp->cls;
					e->k = k;
				}
			}
			/* A key twice in one summary: keep the first. */
			if (c->keys[k].last_w == w) {
				kid[pos] = UINT32_MAX;
				continue;
			}
			c->keys[k].last_w = (uint32_t)w;
			c->keys[k].n++;
			kid[pos] = k;
		}
	}
	fill = x_calloc(c->nkeys ? c->nkeys : 1, sizeof(*fill));
	c->ent = x_malloc((total ? total : 1) * sizeof(*c->ent));
	if (!fill || !c->ent)
		goto out;
	pos = 0;
	for (w = 0; w < c->nkeys; w++) {
		c->keys[w].off = (uint32_t)pos;
		pos += c->keys[w].n;
	}
	pos = 0;
	for (w = 0; w < c->nw; w++) {
		const pt_summary *s = c->w[w].s;

		for (p = 0; p < s->npatterns; p++, pos++) {
			dkey *k;

			if (kid[pos] == UINT32_MAX)
				continue;
			k = &c->keys[kid[pos]];
			c->ent[k->off + fill[kid[pos]]].w = (uint32_t)w;
			c->ent[k->off + fill[kid[pos]]].p = (uint32_t)p;
			fill[kid[pos]]++;
		}
	}
	rc = 0;
out:
	x_free(kc);
	x_free(fill);
	x_free(kid);
	return rc;
}
