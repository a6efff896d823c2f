/*
 * hash.h - the one FNV-1a and the one hash map of PerfTracker.
 *
 * pt_hash_fnv1a* hash bytes and strings (64-bit FNV-1a from the project's
 * seed, or from any seed with the _from forms); pt_hash_mix folds a word
 * in the same way, pt_hash_u64 scrambles an integer or pointer key.
 * pt_hmap maps a hash to the caller's 32-bit value (an index into the
 * caller's own array of entries): the map stores hashes and values, not
 * keys, so the caller walks the candidates for a hash and compares its
 * keys itself.  Users: model/strtab.c, trace/kineto.c, analysis/,
 * diagnose/, compare/, report/timeline.c, control/nodechan.c.
 * Pure functions; a map is not thread-safe (concurrent lookups without a
 * writer are fine).
 */
#ifndef PT_HASH_H
#define PT_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "error.h"

/* FNV-1a 64: the published offset basis and prime. */
#define PT_FNV_OFFSET 14695981039346656037ULL
#define PT_FNV_PRIME 1099511628211ULL
/* The offset PerfTracker has always hashed from (the basis short of its
 * last digit), kept: the ids of processes named by strings in reports and
 * the node-channel file names, which a running collector and a newer agent
 * must agree on, derive from it. */
#define PT_HASH_SEED 1469598103934665603ULL

/* One FNV-1a step: v (a byte, or a whole word where the caller mixes
 * words) folded into h. */
static inline uint64_t pt_hash_mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * PT_FNV_PRIME;
}

/* FNV-1a of n bytes at p continued from h (a seed to start). */
static inline uint64_t pt_hash_fnv1a_from(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = (const unsigned char *)p;

	for (size_t i = 0; i < n; i++)
		h = pt_hash_mix(h, s[i]);
	return h;
}

/* FNV-1a of n bytes at p from PT_HASH_SEED (p may be NULL when n is 0). */
static inline uint64_t pt_hash_fnv1a(const void *p, size_t n)
{
	return pt_hash_fnv1a_from(PT_HASH_SEED, p, n);
}

/* FNV-1a of the NUL-terminated s continued from h (a seed to start). */
static inline uint64_t pt_hash_fnv1a_str_from(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = pt_hash_mix(h, (unsigned char)*s);
	return h;
}

/* FNV-1a of the NUL-terminated s (not NULL) from PT_HASH_SEED. */
static inline uint64_t pt_hash_fnv1a_str(const char *s)
{
	return pt_hash_fnv1a_str_from(PT_HASH_SEED, s);
}

/* One multiply-xorshift step of pt_hash_words. */
static inline uint64_t pt_hash_mix8(uint64_t h, uint64_t x)
{
	h = (h ^ x) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

/* A fast hash of n bytes at s, seeded: multiply-xorshift over 8-byte words
 * in four independent chains.  Kernel names and Python stack keys run to
 * hundreds of bytes: byte-wise FNV-1a cost several cycles per byte, and
 * with one chain the multiply latency was the limit (docs/bench.md, "Code
 * shaped for speed").  For in-memory maps only: its values are not stable
 * across versions (FNV-1a is, where a value is written down). */
static inline uint64_t pt_hash_words(const char *s, size_t n, uint64_t seed)
{
	uint64_t a = 0x6a09e667f3bcc909ull ^ n ^ seed, b = 0xbb67ae8584caa73bull;
	uint64_t c = 0x3c6ef372fe94f82bull, d = 0xa54ff53a5f1d36f1ull, x[4];
	size_t i = 0;

	for (; i + 32 <= n; i += 32) {
		memcpy(x, s + i, 32);
		a = pt_hash_mix8(a, x[0]);
		b = pt_hash_mix8(b, x[1]);
		c = pt_hash_mix8(c, x[2]);
		d = pt_hash_mix8(d, x[3]);
	}
	a ^= (b << 16 | b >> 48) ^ (c << 32 | c >> 32) ^ (d << 48 | d >> 16);
	for (; i + 8 <= n; i += 8) {
		memcpy(x, s + i, 8);
		a = pt_hash_mix8(a, x[0]);
	}
	x[0] = 0;
	if (n > i)
		memcpy(x, s + i, n - i);
	a = pt_hash_mix8(a, x[0]);
	a *= 0x9e3779b97f4a7c15ull;
	return a ^ (a >> 32);
}

/* ---- the map ------------------------------------------------------------- */

/* What a lookup returns when no (more) value has the hash. */
#define PT_HMAP_NONE UINT32_MAX

/* Open addressing with linear probing on the low bits of the hash; at most
 * half full (it doubles before a put would pass that), so a probe ends at
 * an empty slot.  A slot keeps the low 32 bits of its hash (8 bytes a
 * slot, as the tables it replaced): hashes equal there are all candidates,
 * and the caller's key compare decides.  Zero-initialise a map ({0}): an
 * empty map owns nothing and every lookup in it returns PT_HMAP_NONE.  The
 * map owns its slots (freed by pt_hmap_free); the values are the
 * caller's, never dereferenced. */
typedef struct pt_hmap_slot {
	uint32_t hash;  /* the hash's low 32 bits */
	uint32_t val1;  /* value + 1; 0: empty */
} pt_hmap_slot;

typedef struct pt_hmap {
	pt_hmap_slot *slot;
	size_t cap;  /* slots: 0 or a power of two */
	size_t n;    /* values put */
} pt_hmap;

/* Room for n values in all without growing.  PT_OK, or PT_ENOMEM with the
 * map unchanged. */
int pt_hmap_reserve(pt_hmap *m, size_t n);

/* Adds value v (< PT_HMAP_NONE) under hash h.  It does not look for h
 * first: a caller that wants one value per key looks it up before.
 * PT_OK, PT_EINVAL (v is PT_HMAP_NONE), or PT_ENOMEM (growth failed; the
 * map is unchanged).  Inline: the trace readers intern every new name. */
static inline int pt_hmap_put(pt_hmap *m, uint64_t h, uint32_t v)
{
	size_t j, mask;
	int rc;

	if (v == PT_HMAP_NONE)
		return PT_EINVAL;
	if (2 * (m->n + 1) > m->cap && (rc = pt_hmap_reserve(m, m->n + 1)))
		return rc;
	mask = m->cap - 1;
	for (j = (uint32_t)h & mask; m->slot[j].val1; j = (j + 1) & mask)
		;
	m->slot[j].hash = (uint32_t)h;
	m->slot[j].val1 = v + 1;
	m->n++;
	return PT_OK;
}

/* Empties the map and keeps its slots for the next puts (no allocation):
 * for a map refilled in rounds.  m empty is a no-op. */
void pt_hmap_clear(pt_hmap *m);

/* Frees the slots and leaves an empty map; m NULL or empty is a no-op. */
void pt_hmap_free(pt_hmap *m);

/* The values put under hash h (its low 32 bits), one per call, oldest
 * first among those that collided, then PT_HMAP_NONE (again on every
 * later call).  *it is the cursor: 0 before the first call for h, left
 * alone by the caller in between.  Typical use:
 *
 *   size_t it = 0;
 *   while ((v = pt_hmap_next(&m, h, &it)) != PT_HMAP_NONE)
 *           if (!strcmp(names[v], key))
 *                   return v;
 *
 * Inline: the trace readers look up every event's name. */
static inline uint32_t pt_hmap_next(const pt_hmap *m, uint64_t h, size_t *it)
{
	size_t mask = m->cap - 1;

	if (!m->cap)
		return PT_HMAP_NONE;
	/* never full: the probe ends at an empty slot, where *it then stays */
	for (;;) {
		const pt_hmap_slot *s = &m->slot[((uint32_t)h + *it) & mask];

		if (!s->val1)
			return PT_HMAP_NONE;
		++*it;
		if (s->hash == (uint32_t)h)
			return s->val1 - 1;
	}
}

#endif
