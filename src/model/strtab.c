/*
 * strtab.c - open-addressing hash table over an append-only byte arena.
 *
 * Strings live in one arena (offsets, not pointers, so the arena can grow by
 * realloc); the hash slots store id+1 and the full hash, so lookups touch
 * the arena only on a hash match.  A simple multiply-xor hash is enough here:
 * keys are names, not adversarial input that could degrade the table beyond
 * linear probing cost.
 */
#include "strtab.h"
#include "../util/xalloc.h"

struct pt_strtab {
	char *arena;
	size_t alen, acap;
	uint64_t *offs;  /* id -> offset into arena (string is NUL-terminated) */
	uint32_t *lens;
	uint32_t n, cap;  /* strings, capacity of offs/lens */
	uint32_t *slots;  /* 0 empty, else id+1 */
	uint32_t *hashes;
	uint32_t nslots;  /* power of two */
};

/* Word-at-a-time multiply-xor hash.  Replaced byte-wise FNV-1a, which cost
 * several cycles per byte on the ~300-byte kernel names the Kineto reader
 * interns (docs/bench.md, "Code shaped for speed"). */
static uint32_t hash(const char *s, size_t n)
{
	const uint64_t k = 0xff51afd7ed558ccdULL;
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n, w;

	while (n >= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * k;
		h ^= h >> 32;
		s += 8;
		n -= 8;
	}
	if (n) {
		w = 0;
		memcpy(&w, s, n);
		h = (h ^ w) * k;
		h ^= h >> 32;
	}
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return (uint32_t)h;
}

pt_strtab *pt_strtab_new(void)
{
	pt_strtab *t = x_calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->nslots = 1024;
	t->slots = x_calloc(t->nslots, sizeof(*t->slots));
	t->hashes = x_calloc(t->nslots, sizeof(*t->hashes));
	if (!t->slots || !t->hashes || pt_strtab_intern(t, "", 0) != 0) {
		pt_strtab_free(t);
		return NULL;
	}
	return t;
}

void pt_strtab_free(pt_strtab *t)
{
	if (!t)
		return;
	x_free(t->hashes);
	x_free(t->slots);
	x_free(t->lens);
	x_free(t->offs);
	x_free(t->arena);
	x_free(t);
}

static int rehash(pt_strtab *t)
{
	uint32_t ns = t->nslots * 2, i, *slots, *hashes;

	if (ns < t->nslots)
		return -1;
	slots = x_calloc(ns, sizeof(*slots));
	hashes = x_calloc(ns, sizeof(*hashes));
	if (!slots || !hashes) {
		x_free(slots);
		x_free(hashes);
		return -1;
	}
	for (i = 0; i < t->nslots; i++) {
		uint32_t j;

		if (!t->slots[i])
			continue;
		j = t->hashes[i] & (ns - 1);
		while (slots[j])
			j = (j + 1) & (ns - 1);
		slots[j] = t->slots[i];
		hashes[j] = t->hashes[i];
	}
	x_free(t->slots);
	x_free(t->hashes);
	t->slots = slots;
	t->hashes = hashes;
	t->nslots = ns;
	return 0;
}

uint32_t pt_strtab_intern(pt_strtab *t, const char *s, size_t n)
{
	uint32_t h, j, id;
	size_t cap;

	if (n > UINT32_MAX - 1)
		return UINT32_MAX;
	h = hash(s, n);
	j = h & (t->nslots - 1);
	while (t->slots[j]) {
		id = t->slots[j] - 1;
		if (t->hashes[j] == h && t->lens[id] == n &&
		    memcmp(t->arena + t->offs[id], s, n) == 0)
			return id;
		j = (j + 1) & (t->nslots - 1);
	}
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
	memcpy(t->arena + t->alen, s, n);
	t->arena[t->alen + n] = 0;
	id = t->n++;
	t->offs[id] = t->alen;
	t->lens[id] = (uint32_t)n;
	t->alen += n + 1;
	t->slots[j] = id + 1;
	t->hashes[j] = h;
	/* Keep the load factor under 1/2 so probes stay short. */
	if ((uint64_t)t->n * 2 > t->nslots && rehash(t))
		return UINT32_MAX;
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
	       (size_t)t->nslots * 2 * sizeof(uint32_t);
}
