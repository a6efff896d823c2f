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

/* 8 bytes per step multiply-xorshift hash: Python stack keys run to a few
 * KB and there are millions of patterns at 10,000 workers, so a byte-wise
 * hash would dominate indexing. */
uint64_t diag_hash_key(const char *s, int cls)
{
	const uint64_t m = 0x9e3779b97f4a7c15ull;
	uint64_t h = 0x243f6a8885a308d3ull ^ (uint64_t)cls, x;
	size_t n = strlen(s), i;

	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&x, s + i, 8);
		h = (h ^ x) * m;
		h ^= h >> 29;
	}
	x = 0;
	memcpy(&x, s + i, n - i);
	h = (h ^ x ^ ((uint64_t)n << 56)) * m;
	h ^= h >> 32;
	h *= m;
	return h ^ (h >> 29);
}

/* The index lives in the context (c->kslot, c->kcap) after build_index so
 * that "display" can find the keys the findings name. */
static int kindex_grow(dctx *c)
{
	size_t ncap = c->kcap ? c->kcap * 2 : 1024, i;
	uint32_t *ns = x_calloc(ncap, sizeof(*ns));

	if (!ns)
		return -1;
	for (i = 0; i < c->nkeys; i++) {
		size_t j = c->keys[i].hash & (ncap - 1);

		while (ns[j])
			j = (j + 1) & (ncap - 1);
		ns[j] = (uint32_t)i + 1;
	}
	x_free(c->kslot);
	c->kslot = ns;
	c->kcap = ncap;
	return 0;
}

/* Slot of (cls, key) in the index: the one holding it, or the empty one
 * where it would go. */
static size_t kindex_slot(const dctx *c, uint64_t h, int cls, const char *key)
{
	size_t j = h & (c->kcap - 1);

	while (c->kslot[j]) {
		const dkey *k = &c->keys[c->kslot[j] - 1];

		if (k->hash == h && k->cls == cls && !strcmp(k->key, key))
			break;
		j = (j + 1) & (c->kcap - 1);
	}
	return j;
}

/* Key index of (cls, key), inserting it; UINT32_MAX on allocation failure. */
static uint32_t kindex_get(dctx *c, size_t *kcap, const pt_pattern *p)
{
	uint64_t h = diag_hash_key(p->key, p->cls);
	size_t j;
	dkey *k;

	if ((c->nkeys + 1) * 2 > c->kcap && kindex_grow(c))
		return UINT32_MAX;
	j = kindex_slot(c, h, p->cls, p->key);
	if (c->kslot[j])
		return c->kslot[j] - 1;
	if (c->nkeys >= UINT32_MAX - 1 || X_GROW(c->keys, *kcap, c->nkeys + 1))
		return UINT32_MAX;
	k = &c->keys[c->nkeys];
	memset(k, 0, sizeof(*k));
	k->key = p->key;
	k->hash = h;
	k->cls = p->cls;
	k->kind = p->kind;
	k->last_w = UINT32_MAX;
	c->kslot[j] = (uint32_t)c->nkeys + 1;
	return (uint32_t)c->nkeys++;
}

uint32_t diag_key_find(const dctx *c, int cls, const char *key)
{
	size_t j;

	if (!c->kcap || !key)
		return UINT32_MAX;
	j = kindex_slot(c, diag_hash_key(key, cls), cls, key);
	return c->kslot[j] ? c->kslot[j] - 1 : UINT32_MAX;
}

/* Two passes over all patterns: count entries per key, then place them, so
 * each key's entries are contiguous and in worker order. */
/* Summaries read with a shared key set (pt_summary_read_file_shared, as
 * `diagnose` does) repeat the same key pointers, and while pt_diagnose runs
 * equal pointers mean equal keys: a direct-mapped cache from pointer to key
 * index spares most patterns hashing and comparing their key
 * (diag_hash_key and strcmp showed in a 10,000-worker `diagnose` run's
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

			if (!s->patterns[p].key) {
				kid[pos] = UINT32_MAX;
				continue;
			}
			{
				const pt_pattern *pp = &s->patterns[p];
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
