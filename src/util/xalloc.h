/*
 * xalloc.h - allocation helpers shared by every stage of the library.
 *
 * Library code never aborts on allocation failure: these return NULL and the
 * caller turns that into PT_ENOMEM.  x_free(NULL) is a no-op, like free().
 * Overflow-checked array helpers exist because parsers size buffers from
 * untrusted input (docs/design.md, "Conventions that shape the code").
 */
#ifndef PT_XALLOC_H
#define PT_XALLOC_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline void *x_malloc(size_t n) { return malloc(n ? n : 1); }
static inline void *x_calloc(size_t n, size_t sz) { return calloc(n ? n : 1, sz ? sz : 1); }
static inline void x_free(void *p) { free(p); }

/* realloc for n elements of sz bytes; NULL on overflow or failure (p is kept). */
static inline void *x_reallocarray(void *p, size_t n, size_t sz)
{
	if (sz && n > SIZE_MAX / sz)
		return NULL;
	return realloc(p, (n && sz) ? n * sz : 1);
}

/* Grow *pp so that it holds at least need elements of sz bytes, doubling.
 * Returns 0 on success, -1 on overflow or allocation failure (*pp unchanged). */
static inline int x_grow(void **pp, size_t *cap, size_t need, size_t sz)
{
	size_t nc;
	void *np;

	if (need <= *cap)
		return 0;
	nc = *cap ? *cap : 16;
	while (nc < need) {
		if (nc > SIZE_MAX / 2)
			return -1;
		nc *= 2;
	}
	np = x_reallocarray(*pp, nc, sz);
	if (!np)
		return -1;
	*pp = np;
	*cap = nc;
	return 0;
}

#define X_GROW(arr, cap, need) x_grow((void **)&(arr), &(cap), (need), sizeof(*(arr)))

static inline char *x_strndup(const char *s, size_t n)
{
	char *d = (char *)x_malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = 0;
	}
	return d;
}

#endif
