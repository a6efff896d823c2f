/*
 * frpickle.c - torch's Flight Recorder pickle read in C (see frpickle.h).
 * A small pickle machine over the opcodes torch's pickler emits builds a
 * tree of nodes (indices into one growing array; strings point into the
 * input), then the "entries" list is read off it.  Called by the
 * collector's watch thread without the GIL, and by the fuzzer.
 */
#include "frpickle.h"

#include <stdio.h>
#include <string.h>

#include "../util/xalloc.h"

enum { K_NONE, K_BOOL, K_INT, K_FLOAT, K_STR, K_LIST, K_TUPLE, K_DICT, K_MARK };
#define NIL UINT32_MAX
/* Memo ids above this are refused: torch numbers its memo from 0 up, one
 * id per memoized value, far fewer than bytes in the dump. */
#define MEMO_MAX (1u << 24)

typedef struct node {
	uint8_t kind;
	int64_t i;               /* K_INT, K_BOOL */
	uint32_t off, len;       /* K_STR: bytes in the input */
	uint32_t child, last;    /* containers: first and last child */
	uint32_t next;           /* the next sibling */
} node;

typedef struct pk {
	const unsigned char *p;
	size_t len, pos;
	node *v;
	size_t nv, vcap;
	uint32_t *st;            /* the stack: node indices (K_MARK for marks) */
	size_t nst, stcap;
	uint32_t *memo;
	size_t nmemo, memocap;
	pt_error *err;
	int rc;
} pk;

static int fail(pk *k, int code, const char *what)
{
	if (!k->rc)
		k->rc = pt_error_set(k->err, code, (int64_t)k->pos, "flight recorder pickle: %s", what);
	return -1;
}

static uint32_t mk(pk *k, int kind)
{
	node *n;

	if (k->nv >= NIL - 1 || (k->nv + 1 > k->vcap && X_GROW(k->v, k->vcap, k->nv + 1)))
		return fail(k, PT_ENOMEM, "out of memory"), NIL;
	n = &k->v[k->nv];
	memset(n, 0, sizeof(*n));
	n->kind = (uint8_t)kind;
	n->child = n->last = n->next = NIL;
	return (uint32_t)k->nv++;
}

static int push(pk *k, uint32_t i)
{
	if (i == NIL)
		return -1;
	if (k->nst + 1 > k->stcap && X_GROW(k->st, k->stcap, k->nst + 1))
		return fail(k, PT_ENOMEM, "out of memory");
	k->st[k->nst++] = i;
	return 0;
}

static int need(pk *k, size_t n)
{
	return k->len - k->pos >= n ? 0 : fail(k, PT_EPARSE, "truncated");
}

static uint64_t le(const unsigned char *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = n; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

/* The index in the stack of the topmost mark. */
static long top_mark(pk *k)
{
	for (size_t i = k->nst; i-- > 0;)
		if (k->st[i] == NIL - 1)
			return (long)i;
	fail(k, PT_EPARSE, "no mark");
	return -1;
}

static void append(pk *k, uint32_t c, uint32_t x)
{
	k->v[x].next = NIL;
	if (k->v[c].last == NIL)
		k->v[c].child = x;
	else
		k->v[k->v[c].last].next = x;
	k->v[c].last = x;
}

/* Move the stack's items above index from into container c (dict: key,
 * value pairs). */
static int fill(pk *k, uint32_t c, size_t from)
{
	if (c >= k->nv || (k->v[c].kind != K_LIST && k->v[c].kind != K_DICT &&
			   k->v[c].kind != K_TUPLE))
		return fail(k, PT_EPARSE, "append to a non-container");
	if (k->v[c].kind == K_DICT && (k->nst - from) % 2)
		return fail(k, PT_EPARSE, "odd number of dict items");
	for (size_t i = from; i < k->nst; i++) {
		if (k->st[i] == NIL - 1)
			return fail(k, PT_EPARSE, "mark inside items");
		append(k, c, k->st[i]);
	}
	k->nst = from;
	return 0;
}

/* SETITEMS, APPENDS, TUPLE: the items above the topmost mark. */
static int items(pk *k, int op)
{
	long m = top_mark(k);
	uint32_t c;

	if (m < 0)
		return -1;
	if (op == 't') {
		c = mk(k, K_TUPLE);
		if (c == NIL || fill(k, c, (size_t)m + 1))
			return -1;
		k->nst = (size_t)m;
		return push(k, c);
	}
	if (m == 0)
		return fail(k, PT_EPARSE, "no container under the mark");
	c = k->st[m - 1];
	if (fill(k, c, (size_t)m + 1))
		return -1;
	k->nst = (size_t)m;
	return 0;
}

/* SETITEM, APPEND, TUPLE1-3: the top n items. */
static int top_items(pk *k, int op, size_t n)
{
	uint32_t c;

	if (k->nst < n + (op != 't'))
		return fail(k, PT_EPARSE, "stack underflow");
	if (op == 't') {
		c = mk(k, K_TUPLE);
		if (c == NIL || fill(k, c, k->nst - n))
			return -1;
		return push(k, c);
	}
	return fill(k, k->st[k->nst - n - 1], k->nst - n);
}

static int memo_put(pk *k, uint64_t id)
{
	if (!k->nst || k->st[k->nst - 1] == NIL - 1)
		return fail(k, PT_EPARSE, "memo of nothing");
	if (id >= MEMO_MAX)
		return fail(k, PT_EPARSE, "memo id too large");
	if (id >= k->memocap) {
		size_t old = k->memocap;
		if (X_GROW(k->memo, k->memocap, (size_t)id + 1))
			return fail(k, PT_ENOMEM, "out of memory");
		for (size_t i = old; i < k->memocap; i++)
			k->memo[i] = NIL;
	}
	k->memo[id] = k->st[k->nst - 1];
	if (id + 1 > k->nmemo)
		k->nmemo = (size_t)id + 1;
	return 0;
}

/* A memoized value again: a copy of its node (the same string, number or
 * children; torch memoizes strings). */
static int memo_get(pk *k, uint64_t id)
{
	uint32_t c;

	if (id >= k->nmemo || k->memo[id] == NIL)
		return fail(k, PT_EPARSE, "unknown memo id");
	c = mk(k, K_NONE);
	if (c == NIL)
		return -1;
	k->v[c] = k->v[k->memo[id]];
	k->v[c].next = NIL;
	return push(k, c);
}

static int str(pk *k, size_t lenbytes)
{
	uint64_t n;
	uint32_t c;

	if (need(k, lenbytes))
		return -1;
	n = le(k->p + k->pos, lenbytes);
	k->pos += lenbytes;
	if (n > k->len - k->pos)
		return fail(k, PT_EPARSE, "string past the end");
	c = mk(k, K_STR);
	if (c == NIL)
		return -1;
	k->v[c].off = (uint32_t)k->pos;
	k->v[c].len = (uint32_t)n;
	k->pos += (size_t)n;
	return push(k, c);
}

static int integer(pk *k, size_t n, int sign)
{
	uint32_t c;
	uint64_t u;

	if (need(k, n))
		return -1;
	u = le(k->p + k->pos, n);
	k->pos += n;
	if (sign && n < 8 && n > 0 && (u >> (8 * n - 1)) & 1)
		u |= ~0ULL << (8 * n);
	c = mk(k, K_INT);
	if (c == NIL)
		return -1;
	k->v[c].i = (int64_t)u;
	return push(k, c);
}

/* One opcode at k->pos; 1 at STOP, 0 to go on, -1 on error. */
static int step(pk *k)
{
	int op = k->p[k->pos++];
	size_t n;

	switch (op) {
	case 0x80: return need(k, 1) ? -1 : (k->pos++, 0);        /* PROTO */
	case 0x95: return need(k, 8) ? -1 : (k->pos += 8, 0);     /* FRAME */
	case '(': return push(k, NIL - 1);                         /* MARK */
	case '}': return push(k, mk(k, K_DICT));
	case ']': return push(k, mk(k, K_LIST));
	case ')': return push(k, mk(k, K_TUPLE));
	case 'u': case 'e': case 't': return items(k, op);
	case 's': return top_items(k, op, 2);
	case 'a': return top_items(k, op, 1);
	case 0x85: case 0x86: case 0x87: return top_items(k, 't', (size_t)(op - 0x84));
	case 'X': case 'B': return str(k, 4);                      /* BINUNICODE, BINBYTES */
	case 0x8c: case 'C': return str(k, 1);                     /* SHORT_BINUNICODE/BYTES */
	case 0x8d: case 0x8e: return str(k, 8);                    /* BINUNICODE8, BINBYTES8 */
	case 'J': return integer(k, 4, 1);
	case 'K': return integer(k, 1, 0);
	case 'M': return integer(k, 2, 0);
	case 0x8a:                                                 /* LONG1 */
		if (need(k, 1))
			return -1;
		n = k->p[k->pos++];
		if (n > 8)
			return fail(k, PT_EPARSE, "integer wider than 64 bits");
		return integer(k, n, 1);
	case 'G': {                                                /* BINFLOAT: an int here */
		uint64_t u;
		double d;
		uint32_t c;
		if (need(k, 8))
			return -1;
		u = 0;
		for (int i = 0; i < 8; i++)
			u = u << 8 | k->p[k->pos + (size_t)i];
		k->pos += 8;
		memcpy(&d, &u, sizeof(d));
		c = mk(k, K_FLOAT);
		if (c == NIL)
			return -1;
		k->v[c].i = d == d && d > -9.2e18 && d < 9.2e18 ? (int64_t)d : 0;
		return push(k, c);
	}
	case 'N': return push(k, mk(k, K_NONE));
	case 0x88: case 0x89: {
		uint32_t c = mk(k, K_BOOL);
		if (c == NIL)
			return -1;
		k->v[c].i = op == 0x88;
		return push(k, c);
	}
	case 0x94: return memo_put(k, k->nmemo);                   /* MEMOIZE */
	case 'q': return need(k, 1) ? -1 : memo_put(k, le(k->p + k->pos++, 1));
	case 'r': if (need(k, 4)) return -1; k->pos += 4; return memo_put(k, le(k->p + k->pos - 4, 4));
	case 'h': return need(k, 1) ? -1 : memo_get(k, le(k->p + k->pos++, 1));
	case 'j': if (need(k, 4)) return -1; k->pos += 4; return memo_get(k, le(k->p + k->pos - 4, 4));
	case '.': return 1;
	default:
		k->pos--;
		return fail(k, PT_EPARSE, "unsupported opcode");
	}
}

/* The value of key in dict d, NIL when absent. */
static uint32_t get(const pk *k, uint32_t d, const char *key)
{
	size_t kl = strlen(key);

	/* d may be a mark left on the stack (a malformed dump): not a node */
	if (d >= k->nv || k->v[d].kind != K_DICT)
		return NIL;
	for (uint32_t c = k->v[d].child; c != NIL && k->v[c].next != NIL; c = k->v[k->v[c].next].next) {
		const node *kn = &k->v[c];
		if (kn->kind == K_STR && kn->len == kl && !memcmp(k->p + kn->off, key, kl))
			return kn->next;
	}
	return NIL;
}

static void copy_str(const pk *k, uint32_t i, char *out, size_t cap)
{
	size_t n;

	out[0] = 0;
	if (i >= k->nv || k->v[i].kind != K_STR)
		return;
	n = k->v[i].len < cap - 1 ? k->v[i].len : cap - 1;
	memcpy(out, k->p + k->v[i].off, n);
	out[n] = 0;
}

static int64_t int_of(const pk *k, uint32_t i, int64_t def)
{
	return i < k->nv && (k->v[i].kind == K_INT || k->v[i].kind == K_BOOL ||
			    k->v[i].kind == K_FLOAT) ? k->v[i].i : def;
}

/* One entry's fields; 0 when it lacks a group or a creation time. */
static int entry(const pk *k, uint32_t d, pt_fr_entry *e)
{
	uint32_t pg = get(k, d, "process_group");

	memset(e, 0, sizeof(*e));
	if (pg == NIL || k->v[pg].kind != K_TUPLE || k->v[pg].child == NIL)
		return 0;
	copy_str(k, k->v[pg].child, e->pg, sizeof(e->pg));
	copy_str(k, k->v[k->v[pg].child].next, e->desc, sizeof(e->desc));
	e->created_ns = int_of(k, get(k, d, "time_created_ns"), -1);
	if (e->created_ns < 0)
		return 0;
	e->record_id = int_of(k, get(k, d, "record_id"), -1);
	e->p2p = int_of(k, get(k, d, "is_p2p"), 0) != 0;
	e->seq = int_of(k, get(k, d, e->p2p ? "p2p_seq_id" : "collective_seq_id"), -1);
	e->started_ns = int_of(k, get(k, d, "time_discovered_started_ns"), -1);
	e->done_ns = int_of(k, get(k, d, "time_discovered_completed_ns"), -1);
	copy_str(k, get(k, d, "profiling_name"), e->name, sizeof(e->name));
	copy_str(k, get(k, d, "state"), e->state, sizeof(e->state));
	return 1;
}

static int collect(pk *k, uint32_t root, pt_fr_entry **out, size_t *n)
{
	uint32_t list = get(k, root, "entries"), c;
	size_t cnt = 0;
	pt_fr_entry *v;

	if (root >= k->nv || k->v[root].kind != K_DICT || list >= k->nv || k->v[list].kind != K_LIST)
		return fail(k, PT_EFORMAT, "no dict with \"entries\" at the top");
	for (c = k->v[list].child; c != NIL; c = k->v[c].next)
		cnt++;
	if (!cnt)
		return 0;
	v = x_calloc(cnt, sizeof(*v));
	if (!v)
		return fail(k, PT_ENOMEM, "out of memory");
	for (c = k->v[list].child; c != NIL; c = k->v[c].next)
		*n += (size_t)entry(k, c, &v[*n]);
	if (!*n) {
		x_free(v);
		v = NULL;
	}
	*out = v;
	return 0;
}

int pt_frpickle_entries(const void *buf, size_t len, pt_fr_entry **out, size_t *n,
			pt_error *err)
{
	pk k;
	int r = 0;

	*out = NULL;
	*n = 0;
	memset(&k, 0, sizeof(k));
	k.p = buf;
	k.len = len;
	k.err = err;
	if (len >= NIL / 2) {
		fail(&k, PT_ENOMEM, "dump too large");
		goto out;
	}
	while (k.pos < k.len && (r = step(&k)) == 0)
		;
	if (r < 0)
		goto out;
	if (r != 1) {
		fail(&k, PT_EPARSE, "no STOP");
		goto out;
	}
	if (k.nst != 1) {
		fail(&k, PT_EPARSE, "not one value at STOP");
		goto out;
	}
	collect(&k, k.st[0], out, n);
out:
	x_free(k.memo);
	x_free(k.st);
	x_free(k.v);
	return k.rc;
}
