/*
 * strtab.c - the interning of PerfTracker: pt_strtab, a hash map
 * (util/hash.h) over an append-only byte arena (ids, one worker's store), and
 * pt_strset, a sharded thread-safe set of stable strings (pattern keys
 * shared by the summaries the master reads); one hash for both.
 *
 * Strings live in one arena (offsets, not pointers, so the arena can grow by
 * realloc); the map (util/hash.h) keeps each id's full hash, so lookups
 * touch the arena only on a hash match.  A simple multiply-xor hash is enough here:
 * keys are names, not adversarial input that could degrade the table beyond
 * linear probing cost.
 */
#include "strtab.h"
#include "../util/hash.h"
#include "../util/xalloc.h"

#include <pthread.h>
#include <string.h>

struct pt_strtab {
	char *arena;
	size_t alen, acap;
	uint64_t *offs;  /* id -> offset into arena (string is NUL-terminated) */
	uint32_t *lens;
	uint32_t n, cap;  /* strings, capacity of offs/lens */
	pt_hmap map;      /* pt_hash_words -> id */
};

pt_strtab *pt_strtab_new(void)
{
	pt_strtab *t = x_calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	if (pt_hmap_reserve(&t->map, 512) || pt_strtab_intern(t, "", 0) != 0) {
		pt_strtab_free(t);
		return NULL;
	}
	return t;
}

void pt_strtab_free(pt_strtab *t)
{
	if (!t)
		return;
	pt_hmap_free(&t->map);
	x_free(t->lens);
	x_free(t->offs);
	x_free(t->arena);
	x_free(t);
}

uint32_t pt_strtab_intern(pt_strtab *t, const char *s, size_t n)
{
	uint64_t h;
	uint32_t id;
	size_t cap, it = 0;

	if (n > UINT32_MAX - 1)
		return UINT32_MAX;
	h = pt_hash_words(s, n, 0);
	while ((id = pt_hmap_next(&t->map, h, &it)) != PT_HMAP_NONE)
		if (t->lens[id] == n && memcmp(t->arena + t->offs[id], s, n) == 0)
			return id;
	if (t->n == UINT32_MAX - 2)
		return UINT32_MAX;
	if (X_GROW(t->arena, t->acap, t->alen + n + 1))
		return UINT32_MAX;
	cap = t->cap;
	if (X_GROW(t->offs, cap, (size_t)t->n + 1))
		return UINT32_MAX;
	cap = t->cap;
	if (X_GROW(t->lens, cap, (size_t)t->n + 1))
		return UINT32_MAX;
	t->cap = (uint32_t)(cap > UINT32_MAX ? UINT32_MAX : cap);
	if (pt_hmap_put(&t->map, h, t->n))
		return UINT32_MAX;
	memcpy(t->arena + t->alen, s, n);
	t->arena[t->alen + n] = 0;
	id = t->n++;
	t->offs[id] = t->alen;
	t->lens[id] = (uint32_t)n;
	t->alen += n + 1;
	return id;
}

const char *pt_strtab_get(const pt_strtab *t, uint32_t id, size_t *len)
{
	if (!t || id >= t->n) {
		if (len)
			*len = 0;
		return "";
	}
	if (len)
		*len = t->lens[id];
	return t->arena + t->offs[id];
}

uint32_t pt_strtab_count(const pt_strtab *t) { return t ? t->n : 0; }

size_t pt_strtab_bytes(const pt_strtab *t)
{
	if (!t)
		return 0;
	return t->acap + (size_t)t->cap * (sizeof(uint64_t) + sizeof(uint32_t)) +
	       t->map.cap * sizeof(pt_hmap_slot);
}

/* ---- the shared set ----------------------------------------------------------- */

/* 64 shards, each a mutex and a hash map, so reading threads
 * seldom wait on each other; strings are separate allocations, so their
 * addresses never move. */
#define SET_SHARDS 64

typedef struct set_entry {
	size_t len;
	char *str;
} set_entry;

typedef struct set_shard {
	pthread_mutex_t mu;
	set_entry *ent;
	size_t cap, n;
	pt_hmap map;   /* pt_hash_words -> index in ent */
	char pad[64];
} set_shard;

struct pt_strset {
	set_shard sh[SET_SHARDS];
};

pt_strset *pt_strset_new(void)
{
	pt_strset *ks = x_calloc(1, sizeof(*ks));
	int i;

	if (!ks)
		return NULL;
	for (i = 0; i < SET_SHARDS; i++)
		pthread_mutex_init(&ks->sh[i].mu, NULL);
	return ks;
}

void pt_strset_free(pt_strset *ks)
{
	size_t j;
	int i;

	if (!ks)
		return;
	for (i = 0; i < SET_SHARDS; i++) {
		for (j = 0; j < ks->sh[i].n; j++)
			x_free(ks->sh[i].ent[j].str);
		x_free(ks->sh[i].ent);
		pt_hmap_free(&ks->sh[i].map);
		pthread_mutex_destroy(&ks->sh[i].mu);
	}
	x_free(ks);
}

size_t pt_strset_count(const pt_strset *ks)
{
	size_t n = 0;
	int i;

	for (i = 0; ks && i < SET_SHARDS; i++)
		n += ks->sh[i].n;
	return n;
}

const char *pt_strset_intern(pt_strset *ks, const char *s, size_t n)
{
	uint64_t h = pt_hash_words(s, n, 0);
	set_shard *sh = &ks->sh[h >> 58];
	char *r = NULL;
	size_t it = 0;
	uint32_t v;

	pthread_mutex_lock(&sh->mu);
	while ((v = pt_hmap_next(&sh->map, h, &it)) != PT_HMAP_NONE) {
		set_entry *e = &sh->ent[v];

		if (e->len == n && !memcmp(e->str, s, n)) {
			r = e->str;
			goto out;
		}
	}
	if (sh->n >= PT_HMAP_NONE - 1 || X_GROW(sh->ent, sh->cap, sh->n + 1) ||
	    !(r = x_strndup(s, n)))
		goto out;
	if (pt_hmap_put(&sh->map, h, (uint32_t)sh->n)) {
		x_free(r);
		r = NULL;
		goto out;
	}
	sh->ent[sh->n].len = n;
	sh->ent[sh->n].str = r;
	sh->n++;
out:
	pthread_mutex_unlock(&sh->mu);
	return r;
}
