/*
 * kineto.c - streaming reader for PyTorch profiler (Kineto) Chrome-trace
 * JSON, plain or gzip (see kineto.h).
 *
 * First stage of the flow: raw trace --pt_input chunks--> this scanner -->
 * pt_store (events, lanes, steps, header metadata) --> src/analysis.
 * The scanner is specialised for trace events rather than a general JSON
 * parser: it reads one event object at a time straight out of the chunk
 * buffer, looks only at the keys the analysis needs and skips every other
 * value structurally (strings found with memchr, brackets counted).  When
 * an object crosses the end of the buffer it is re-read from its first byte
 * after a refill, so nothing is committed for a half-read event.
 * Throughput and peak memory: docs/bench.md ("Code shaped for speed") and
 * docs/input.md.
 */
#include "kineto.h"
#include "flightrec.h"
#include "input.h"
#include "../model/commkind.h"
#include "../model/keys.h"
#include "../util/hash.h"
#include "../util/json.h"
#include "../util/utf8.h"
#include "../util/xalloc.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* 1 MiB chunks: big enough that the per-refill memmove of a partial event
 * is noise, small enough to stay in L2/L3 while it is scanned. */
#define CHUNK_DEFAULT ((size_t)1 << 20)
/* One JSON value (an event, or a header value we parse) must fit here. */
#define VALUE_MAX ((size_t)64 << 20)
#define DEPTH_MAX 256
/* Readable zero bytes after the data in the chunk buffer (find_quote). */
#define BUF_PAD 16
/* Durations above one day are corrupt (a profiler window is seconds). */
#define DUR_MAX_NS ((int64_t)86400 * 1000000000)
/* |timestamps| beyond this (ns) are absurd: ~126 years after 1970. */
#define TS_MAX_NS ((int64_t)4000000000000000000LL)

enum { OK = 0, NEED = 1, ERR = -1 };

/* Categories the reader distinguishes (see classify()). */
enum {
	CAT_NONE = 0,  /* no "cat" key (legacy profiler) */
	CAT_SKIP,      /* a category we do not store */
	CAT_KERNEL, CAT_MEMCPY, CAT_MEMSET, CAT_RUNTIME, CAT_DRIVER,
	CAT_CPU_OP, CAT_USER_ANNOT, CAT_PYTHON, CAT_GPU_ANNOT,
	CAT_SYNC,      /* cuda_sync: kept as a pt_sync, not an event */
};

typedef struct span {
	const char *s;
	size_t n;
	int esc;  /* contains a backslash: decode before use */
} span;

/* The fields of one event object, pointing into the chunk buffer. */
typedef struct evf {
	span name, stack, aname, dtype, coll, pgname, spid, stid, itype;
	int64_t pid, tid, ts, dur;
	int64_t grid[3], block[3];
	int64_t bytes, in_n, out_n, group, corr, stream, wstream, seq;
	int64_t dst, src, ci2, dims;  /* p2p: Dst/Src Rank, "Concrete Inputs"[2],
	                                 elements of the first "Input Dims" */
	char ph;
	uint8_t cat;
	uint8_t has_ts, has_dur, has_grid, has_block, has_bytes, has_in, has_out, has_group, has_seq;
	uint8_t has_corr, has_stream, has_wstream;
	uint8_t has_dst, has_src, has_ci2, has_dims;
	uint8_t pid_str, tid_str, ts_bad, dur_bad;
	/* kernel launch efficiency (pt_kinfo); has_eff: bit per member */
	uint8_t has_eff;
	float occ, bps;
	int32_t regs, smem;
} evf;

typedef struct tname {
	int64_t pid, tid;
	uint32_t name;
} tname;

typedef struct lane_slot {
	int64_t pid, tid;
	uint32_t lane;
	uint8_t gpu, used;
} lane_slot;

enum { S_START, S_TOP_FIRST, S_TOP_KEY, S_TOP_AFTER, S_SKIP, S_EV_FIRST, S_EV_NEXT,
       S_EV_AFTER, S_TRAIL, S_DONE };

typedef struct reader {
	pt_input *in;
	pt_store *st;
	pt_error *err;
	char *buf;           /* cap + 1 + BUF_PAD bytes; buf[len..len+BUF_PAD] == 0 */
	size_t cap, len, pos;
	uint64_t base_off;   /* stream offset of buf[0] */
	int eof;
	int state, array_form, events_seen, events_done;
	/* streaming skip of a header value */
	int sk_depth, sk_instr, sk_esc, sk_started;
	unsigned char sk_stack[DEPTH_MAX];
	/* header */
	int have_base;
	int64_t base;
	/* scratch */
	char *tmp;           /* decoded names, kernel keys */
	size_t tmpcap;
	char *tmp2;
	size_t tmp2cap;
	uint32_t *norm;      /* raw-name id -> normalised id + 1 (0 = not yet) */
	size_t normcap;
	pt_commkind_cache ck; /* kernel key id -> communication role (commkind.h) */
	tname *tnames;
	size_t ntnames, tnamecap;
	lane_slot lanes[64];
	uint64_t nobjects;   /* event objects read (any ph) */
	uint64_t nskipcat;   /* X events of categories we do not store */
	uint64_t ndupsteps;
} reader;

/* ---- errors ---------------------------------------------------------- */

static uint64_t off_of(const reader *r, const char *p)
{
	return r->base_off + (uint64_t)(p - r->buf);
}

static int fail(reader *r, int code, const char *p, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(reader *r, int code, const char *p, const char *fmt, ...)
{
	va_list ap;

	if (r->err) {
		r->err->code = code;
		r->err->offset = p ? (int64_t)off_of(r, p) : -1;
		va_start(ap, fmt);
		vsnprintf(r->err->msg, sizeof(r->err->msg), fmt, ap);
		va_end(ap);
	}
	return ERR;
}

static int fail_byte(reader *r, const char *p, const char *what)
{
	unsigned char c = (unsigned char)*p;

	if (c >= 0x20 && c < 0x7f)
		return fail(r, PT_EPARSE, p, "unexpected character '%c', expected %s", c, what);
	return fail(r, PT_EPARSE, p, "unexpected byte 0x%02x, expected %s", c, what);
}

/* At p the scanner found something it did not expect: either the buffer
 * ran out (NEED) or the input is malformed. */
#define UNEXPECTED(r, p, end, what) ((p) >= (end) ? NEED : fail_byte((r), (p), (what)))

/* ---- scanning primitives ------------------------------------------- */

/* Past the whitespace at p (the sentinel stops it).  Most calls meet a
 * byte above ' ', or one space before one, and return at the first or
 * second test; a pretty-printed trace
 * indents every line, and those runs are skipped 8 bytes at a time, from
 * a whitespace byte, which lies before the sentinel: reads up to 7 bytes
 * past the run, inside BUF_PAD.  (The byte loop was 15% of the reader's
 * instructions on indented traces: docs/bench.md, "Code shaped for
 * speed".) */
static inline const char *ws(const char *p)
{
	uint64_t w, t;

	if ((unsigned char)*p > ' ')
		return p;
	if (*p == ' ' && (unsigned char)p[1] > ' ')
		return p + 1;  /* "key": value */
	/* a line break, then its indent: the break is passed here rather
	 * than found by a word of the loop, and the loop's stop is nearly
	 * always a byte above ' ' (one test before the three): summarize's
	 * instructions 554.9 M -> 533.0 M on the bench tf trace, 723.8 M ->
	 * 711.6 M on the DLRM one, both a line per key or a few */
	if (*p == '\n')
		p++;
	for (;;) {
		memcpy(&w, p, 8);
		t = w ^ 0x2020202020202020ULL;
		if (!t) {
			p += 8;
			continue;
		}
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		p += __builtin_clzll(t) >> 3;
#else
		p += __builtin_ctzll(t) >> 3;
#endif
		if ((unsigned char)*p > ' ' || (*p != '\n' && *p != '\r' && *p != '\t'))
			return p;
		p++;
	}
}

/* First '"' in [p, end), or NULL.  Keys and short values dominate: a
 * SWAR scan of 8 bytes per step over the first 32 bytes, then memchr for
 * long names (a byte loop, or memchr alone, was a large share of the
 * reader: docs/bench.md, "Code shaped for speed").  Reads up to 7 bytes
 * past end: the chunk buffer keeps BUF_PAD readable bytes there. */
static inline const char *find_quote(const char *p, const char *end)
{
	const char *stop = p + 32;

	while (p < end && p < stop) {
		uint64_t w, x, t;

		memcpy(&w, p, 8);
		x = w ^ 0x2222222222222222ULL;
		t = (x - 0x0101010101010101ULL) & ~x & 0x8080808080808080ULL;
		if (t) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
			const char *q = p + (__builtin_clzll(t) >> 3);
#else
			const char *q = p + (__builtin_ctzll(t) >> 3);
#endif
			return q < end ? q : NULL;
		}
		p += 8;
	}
	if (p >= end)
		return NULL;
	return memchr(p, '"', (size_t)(end - p));
}

/* p just after an opening quote: the closing quote, or NULL if the buffer
 * ends first.  *esc is set when the string holds a backslash. */
static inline const char *str_end(const char *p, const char *end, int *esc)
{
	const char *s = p, *q;

	for (;;) {
		q = find_quote(p, end);
		if (!q)
			return NULL;
		if (q == s || q[-1] != '\\') {
			if (esc)
				*esc = memchr(s, '\\', (size_t)(q - s)) != NULL;
			return q;
		} else {
			/* An odd run of backslashes escapes this quote. */
			const char *b = q;
			while (b > s && b[-1] == '\\')
				b--;
			if (((q - b) & 1) == 0) {
				if (esc)
					*esc = 1;
				return q;
			}
		}
		p = q + 1;
	}
}

static inline int is_digit(char c) { return (unsigned char)(c - '0') < 10; }

/* A JSON number as decimal mantissa (at most 19 significant digits) and
 * power of ten: exact for every value a trace writes, no double involved. */
typedef struct num {
	uint64_t mant;
	int exp;
	int neg;
} num;

static const uint64_t pow10u[20] = {
	1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
	100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL,
	10000000000000ULL, 100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
	100000000000000000ULL, 1000000000000000000ULL, 10000000000000000000ULL,
};

/* How many of the 8 bytes at p are digits before the first that is not
 * (0..8), and in *v their value.  Reads 8 bytes: the caller checks that
 * they lie before end.  The per-digit loop was most of parse_num, itself
 * 10% of the reader on the bench DLRM trace (docs/bench.md, "Code shaped
 * for speed"). */
static inline int digits8(const char *p, uint64_t *v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t w, bad, d;
	int k;

	memcpy(&w, p, 8);
	/* a byte is a digit when its high nibble is 3 before and after
	 * adding 6; a carry out of a non-digit only reaches later bytes */
	bad = ((w & 0xF0F0F0F0F0F0F0F0ULL) ^ 0x3030303030303030ULL) |
	      (((w + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) ^ 0x3030303030303030ULL);
	k = bad ? __builtin_ctzll(bad) >> 3 : 8;
	if (!k)
		return 0;
	/* first byte most significant: shift the k digits to the top, the
	 * zero bytes below read as leading zeros */
	d = w - 0x3030303030303030ULL;
	if (k < 8)
		d <<= 8 * (8 - k);
	d = d * 10 + (d >> 8);
	d = (((d & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32))) +
	     (((d >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >> 32;
	*v = d;
	return k;
#else
	int k = 0;

	*v = 0;
	while (k < 8 && is_digit(p[k]))
		*v = *v * 10 + (uint64_t)(p[k++] - '0');
	return k;
#endif
}

static int parse_num(reader *r, const char **pp, const char *end, num *n)
{
	const char *p = *pp;
	uint64_t m = 0;
	int nd = 0, e = 0;

	n->neg = 0;
	if (*p == '-') {
		n->neg = 1;
		p++;
	}
	if (!is_digit(*p))
		return UNEXPECTED(r, p, end, "a digit");
	if (*p == '0') {
		p++;
	} else {
		uint64_t v;
		int k;
		/* timestamps have 13 to 16 digits: 8 at a time while they fit */
		while (p + 8 <= end && nd <= 11 && (k = digits8(p, &v)) > 0) {
			m = m * pow10u[k] + v;
			nd += k;
			p += k;
			if (k < 8)
				break;
		}
		while (is_digit(*p)) {
			if (nd < 19) {
				m = m * 10 + (uint64_t)(*p - '0');
				nd++;
			} else {
				e++;
			}
			p++;
		}
	}
	if (*p == '.') {
		p++;
		if (!is_digit(*p))
			return UNEXPECTED(r, p, end, "a digit after '.'");
		if (m) {
			uint64_t v;
			int k;
			while (p + 8 <= end && nd <= 11 && (k = digits8(p, &v)) > 0) {
				m = m * pow10u[k] + v;
				nd += k;
				e -= k;
				p += k;
				if (k < 8)
					break;
			}
		}
		while (is_digit(*p)) {
			if (nd < 19) {
				m = m * 10 + (uint64_t)(*p - '0');
				if (m)
					nd++;
				e--;
			}
			p++;
		}
	}
	if (*p == 'e' || *p == 'E') {
		int es = 1, x = 0;

		p++;
		if (*p == '+' || *p == '-')
			es = *p++ == '-' ? -1 : 1;
		if (!is_digit(*p))
			return UNEXPECTED(r, p, end, "a digit in the exponent");
		while (is_digit(*p)) {
			if (x < 100000)
				x = x * 10 + (*p - '0');
			p++;
		}
		e += es * x;
	}
	/* The number may continue in the next chunk. */
	if (p >= end && !r->eof)
		return NEED;
	n->mant = m;
	n->exp = e;
	*pp = p;
	return OK;
}

/* The number grammar without computing the value (skipped numbers). */
static int skip_num(reader *r, const char **pp, const char *end)
{
	const char *p = *pp;

	if (*p == '-')
		p++;
	if (!is_digit(*p))
		return UNEXPECTED(r, p, end, "a digit");
	if (*p == '0')
		p++;
	else
		while (is_digit(*p))
			p++;
	if (*p == '.') {
		p++;
		if (!is_digit(*p))
			return UNEXPECTED(r, p, end, "a digit after '.'");
		while (is_digit(*p))
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!is_digit(*p))
			return UNEXPECTED(r, p, end, "a digit in the exponent");
		while (is_digit(*p))
			p++;
	}
	if (p >= end && !r->eof)
		return NEED;
	*pp = p;
	return OK;
}


/* n * 10^shift as int64, rounding half up when digits are dropped.
 * Returns 0, or -1 when out of [-limit, limit]. */
static int num_scaled(const num *n, int shift, int64_t limit, int64_t *out)
{
	int k = n->exp + shift;
	uint64_t v = n->mant;

	if (k < 0) {
		if (k < -19) {
			v = 0;
		} else {
			uint64_t d = pow10u[-k], q = v / d, rem = v % d;
			v = q + (rem >= d - rem);
		}
	} else if (k > 0) {
		if (v) {
			if (k > 19 || v > (uint64_t)limit / pow10u[k])
				return -1;
			v *= pow10u[k];
		}
	}
	if (v > (uint64_t)limit)
		return -1;
	*out = n->neg ? -(int64_t)v : (int64_t)v;
	return 0;
}

/* At an object key: skip it and the ':' after it. */
static int skip_key(reader *r, const char **pp, const char *end)
{
	const char *p = *pp, *q;

	if (*p != '"')
		return UNEXPECTED(r, p, end, "'\"' starting an object key");
	q = str_end(p + 1, end, NULL);
	if (!q)
		return NEED;
	p = ws(q + 1);
	if (*p != ':')
		return UNEXPECTED(r, p, end, "':'");
	*pp = ws(p + 1);
	return OK;
}

/* Skip any JSON value at p: brackets must balance and strings close;
 * scalars are checked by the number grammar and the literal spelling. */
static int skip_value(reader *r, const char **pp, const char *end)
{
	const char *p = *pp;
	unsigned char stack[DEPTH_MAX];
	int depth = 0, rc;

	for (;;) {
		/* p is at a value. */
		switch (*p) {
		case '"': {
			const char *q = str_end(p + 1, end, NULL);
			if (!q)
				return NEED;
			p = q + 1;
			break;
		}
		case '{':
		case '[': {
			unsigned char closer = (unsigned char)(*p == '{' ? '}' : ']');
			if (depth >= DEPTH_MAX)
				return fail(r, PT_EPARSE, p, "nesting deeper than %d levels", DEPTH_MAX);
			stack[depth++] = closer;
			p = ws(p + 1);
			if ((unsigned char)*p == closer) {
				depth--;
				p++;
				break;
			}
			if (closer == '}' && (rc = skip_key(r, &p, end)) != OK)
				return rc;
			continue;  /* at the first element */
		}
		case 't':
		case 'f':
		case 'n': {
			const char *lit = *p == 't' ? "true" : *p == 'f' ? "false" : "null";
			size_t ln = strlen(lit), have = (size_t)(end - p);
			if (have < ln && memcmp(p, lit, have) == 0)
				return NEED;
			if (have < ln || memcmp(p, lit, ln) != 0)
				return fail_byte(r, p, "a json value");
			p += ln;
			break;
		}
		default:
			if (*p == '-' || is_digit(*p)) {
				if ((rc = skip_num(r, &p, end)) != OK)
					return rc;
				break;
			}
			return UNEXPECTED(r, p, end, "a json value");
		}
		/* After a value: done at depth 0, else ',' or the closer. */
		for (;;) {
			if (!depth) {
				*pp = p;
				return OK;
			}
			p = ws(p);
			if (*p == ',') {
				p = ws(p + 1);
				if (stack[depth - 1] == '}' && (rc = skip_key(r, &p, end)) != OK)
					return rc;
				break;
			}
			if ((unsigned char)*p == stack[depth - 1]) {
				depth--;
				p++;
				continue;
			}
			return UNEXPECTED(r, p, end, stack[depth - 1] == '}' ? "',' or '}'" : "',' or ']'");
		}
	}
}

/* An unread member's value: most are a plain number ("External id",
 * "Ev Idx", ...), skipped here without skip_value's frame and bracket
 * stack (summarize 711.6 M -> 706.9 M instructions on the bench DLRM
 * trace, 533.0 M -> 527.0 M on the tf one). */
static inline int skip_member(reader *r, const char **pp, const char *end)
{
	if (**pp == '-' || is_digit(**pp))
		return skip_num(r, pp, end);
	return skip_value(r, pp, end);
}

/* ---- decoding kept strings ------------------------------------------ */

static int grow_tmp(char **b, size_t *cap, size_t need)
{
	return X_GROW(*b, *cap, need);
}

/* Decode the escapes of s (it has a backslash) into *out (r->tmp2). */
static __attribute__((noinline)) int unescape_slow(reader *r, const span *s, const char **out,
						   size_t *outlen)
{
	const unsigned char *u = (const unsigned char *)s->s;
	size_t i = 0, o = 0;

	/* An escape never decodes to more bytes than it takes. */
	if (grow_tmp(&r->tmp2, &r->tmp2cap, s->n + 1))
		return fail(r, PT_ENOMEM, NULL, "out of memory");
	while (i < s->n) {
		const char *msg;
		size_t used, l;

		if (u[i] != '\\') {
			r->tmp2[o++] = (char)u[i++];
			continue;
		}
		if ((msg = pt_utf8_unescape(u + i, s->n - i, r->tmp2 + o, &used, &l)))
			return fail(r, PT_EPARSE, s->s + i, "%s", msg);
		o += l;
		i += used;
	}
	r->tmp2[o] = 0;
	*out = r->tmp2;
	*outlen = o;
	return 0;
}

/* The text of s: in place when it has no backslash (str_end flags those),
 * else decoded into r->tmp2.  Inline, with the decoding out of line: the
 * reader asks about 3 times per KB of trace, and as one function that
 * saved six registers even for plain strings the read took longer
 * (docs/bench.md, "Code shaped for speed"). */
static inline int unescape(reader *r, const span *s, const char **out, size_t *outlen)
{
	if (s->esc)
		return unescape_slow(r, s, out, outlen);
	*out = s->s;
	*outlen = s->n;
	return 0;
}

/* ---- event objects --------------------------------------------------- */

static inline int key_is(const char *k, size_t n, const char *lit, size_t ln)
{
	return k && n == ln && memcmp(k, lit, ln) == 0;
}

static uint8_t cat_code(const char *s, size_t n)
{
	switch (n) {
	case 6:
		if (!memcmp(s, "kernel", 6) || !memcmp(s, "Kernel", 6))
			return CAT_KERNEL;
		if (!memcmp(s, "cpu_op", 6))
			return CAT_CPU_OP;
		if (!memcmp(s, "Memcpy", 6))
			return CAT_MEMCPY;
		if (!memcmp(s, "Memset", 6))
			return CAT_MEMSET;
		break;
	case 7:
		if (!memcmp(s, "Runtime", 7))
			return CAT_RUNTIME;
		break;
	case 8:
		if (!memcmp(s, "Operator", 8))
			return CAT_CPU_OP;
		break;
	case 9:
		if (!memcmp(s, "cuda_sync", 9))
			return CAT_SYNC;
		break;
	case 10:
		if (!memcmp(s, "gpu_memcpy", 10))
			return CAT_MEMCPY;
		if (!memcmp(s, "gpu_memset", 10))
			return CAT_MEMSET;
		break;
	case 11:
		if (!memcmp(s, "cuda_driver", 11))
			return CAT_DRIVER;
		break;
	case 12:
		if (!memcmp(s, "cuda_runtime", 12))
			return CAT_RUNTIME;
		break;
	case 15:
		if (!memcmp(s, "user_annotation", 15))
			return CAT_USER_ANNOT;
		if (!memcmp(s, "python_function", 15))
			return CAT_PYTHON;
		break;
	case 19:
		if (!memcmp(s, "gpu_user_annotation", 19))
			return CAT_GPU_ANNOT;
		break;
	}
	return CAT_SKIP;
}

/* A string pid/tid: digits -> the number, "stream N" -> N, else a hash
 * with bit 62 set so it cannot collide with a real (small) pid. */
static int64_t id_of_string(const char *s, size_t n)
{
	uint64_t h, v = 0;
	size_t i, start = 0;

	if (n > 7 && !memcmp(s, "stream ", 7))
		start = 7;
	for (i = start; i < n && i - start < 18 && is_digit(s[i]); i++)
		v = v * 10 + (uint64_t)(s[i] - '0');
	if (i == n && n > start)
		return (int64_t)v;
	h = pt_hash_fnv1a(s, n);
	return (int64_t)((h & ((1ULL << 62) - 1)) | (1ULL << 62));
}

/* Value of "pid"/"tid": a number or a string. */
static int parse_id(reader *r, const char **pp, const char *end, int64_t *out, span *sp,
		    uint8_t *is_str)
{
	const char *p = *pp;

	if (*p == '"') {
		int esc;
		const char *q = str_end(p + 1, end, &esc);
		if (!q)
			return NEED;
		sp->s = p + 1;
		sp->n = (size_t)(q - p - 1);
		sp->esc = esc;
		*out = id_of_string(sp->s, sp->n);
		*is_str = 1;
		*pp = q + 1;
		return OK;
	}
	if (*p == '-' || is_digit(*p)) {
		num n;
		int rc = parse_num(r, &p, end, &n);
		if (rc)
			return rc;
		if (num_scaled(&n, 0, INT64_MAX, out))
			*out = n.neg ? INT64_MIN : INT64_MAX;
		*is_str = 0;
		*pp = p;
		return OK;
	}
	return skip_value(r, pp, end);
}

/* A string value into sp; other types are skipped (sp left empty). */
static int parse_str(reader *r, const char **pp, const char *end, span *sp)
{
	const char *p = *pp, *q;
	int esc;

	if (*p != '"')
		return skip_value(r, pp, end);
	q = str_end(p + 1, end, &esc);
	if (!q)
		return NEED;
	sp->s = p + 1;
	sp->n = (size_t)(q - p - 1);
	sp->esc = esc;
	*pp = q + 1;
	return OK;
}

/* A numeric value as an integer (fraction dropped); non-numbers skipped. */
static int parse_int(reader *r, const char **pp, const char *end, int64_t *out, uint8_t *has)
{
	num n;
	int rc;

	if (**pp != '-' && !is_digit(**pp))
		return skip_value(r, pp, end);
	rc = parse_num(r, pp, end, &n);
	if (rc)
		return rc;
	if (num_scaled(&n, 0, INT64_MAX, out) == 0)
		*has = 1;
	return OK;
}

/* "grid": [x, y, z] -> dims; anything else is skipped (has stays 0). */
static int parse_dim3(reader *r, const char **pp, const char *end, int64_t d[3], uint8_t *has)
{
	const char *p = *pp;
	int i;

	if (*p != '[')
		return skip_value(r, pp, end);
	p = ws(p + 1);
	for (i = 0; i < 3; i++) {
		num n;
		int rc;

		if (*p != '-' && !is_digit(*p))
			return skip_value(r, pp, end);
		rc = parse_num(r, &p, end, &n);
		if (rc)
			return rc;
		if (num_scaled(&n, 0, INT64_MAX, &d[i]))
			d[i] = INT64_MAX;
		p = ws(p);
		if (*p == (i < 2 ? ',' : ']')) {
			p = ws(p + 1);
			continue;
		}
		/* Not a 3-vector: skip it as an ordinary value. */
		return skip_value(r, pp, end);
	}
	*has = 1;
	*pp = p;
	return OK;
}

/* A number as a float (launch-efficiency args: precision is not an issue);
 * anything else is skipped.  Sets bit of *has. */
static int parse_float(reader *r, const char **pp, const char *end, float *out, uint8_t *has,
		       uint8_t bit)
{
	num n;
	double v;
	int rc, e;

	if (**pp != '-' && !is_digit(**pp))
		return skip_value(r, pp, end);
	rc = parse_num(r, pp, end, &n);
	if (rc)
		return rc;
	v = (double)n.mant;
	for (e = n.exp; e > 0 && v < 1e30; e--)
		v *= 10;
	for (; e < 0; e++)
		v /= 10;
	*out = (float)(n.neg ? -v : v);
	*has |= bit;
	return OK;
}

/* A timestamp or duration in µs -> ns, exactly. */
static int parse_us(reader *r, const char **pp, const char *end, int64_t *out, uint8_t *has,
		    uint8_t *bad)
{
	num n;
	int rc;

	if (**pp != '-' && !is_digit(**pp))
		return skip_value(r, pp, end);
	rc = parse_num(r, pp, end, &n);
	if (rc)
		return rc;
	*has = 1;
	if (num_scaled(&n, 3, TS_MAX_NS, out))
		*bad = 1;
	return OK;
}

/* Element idx of an array of strings ("Concrete Inputs", "Input type")
 * into sp (left empty when it is not a string or the array is shorter);
 * the whole value is checked and skipped as skip_value does. */
static int parse_list_str(reader *r, const char **pp, const char *end, int idx, span *sp)
{
	const char *p = *pp, *q;
	int i = 0, esc = 0, rc;

	rc = skip_value(r, pp, end);
	if (rc || *p != '[')
		return rc;
	/* the value is whole and valid: walk it */
	p = ws(p + 1);
	while (*p != ']') {
		if (*p == '"') {
			q = str_end(p + 1, end, &esc);
			if (i == idx) {
				sp->s = p + 1;
				sp->n = (size_t)(q - p - 1);
				sp->esc = esc;
				return OK;
			}
			p = q + 1;
		} else if (i == idx || skip_value(r, &p, end)) {
			return OK;
		}
		p = ws(p);
		if (*p != ',')
			return OK;
		p = ws(p + 1);
		i++;
	}
	return OK;
}

/* "Input Dims": the element count of the first tensor (the product of the
 * first innermost list of numbers: [[4, 8]] or, for a TensorList,
 * [[[1048576]], [], ...]); has set only when there is one. */
static int parse_dims(reader *r, const char **pp, const char *end, int64_t *out, uint8_t *has)
{
	const char *p = *pp;
	int rc, any = 0;
	uint64_t prod = 1;

	rc = skip_value(r, pp, end);
	if (rc || *p != '[')
		return rc;
	while (*p == '[')
		p = ws(p + 1);
	while (is_digit(*p)) {
		uint64_t v = 0;
		while (is_digit(*p) && v < (UINT64_C(1) << 40))
			v = v * 10 + (uint64_t)(*p++ - '0');
		if (is_digit(*p) || (v && prod > (UINT64_C(1) << 62) / v))
			return OK;
		prod *= v;
		any = 1;
		p = ws(p);
		if (*p != ',')
			break;
		p = ws(p + 1);
	}
	if (any && *p == ']') {
		*out = (int64_t)prod;
		*has = 1;
	}
	return OK;
}

/* torch 2.x p2p (record_param_comms, NCCL kernels): "Dst Rank" or "Src
 * Rank", the peer (k: an 8-byte key). */
static int parse_peer_rank(reader *r, const char *k, const char **pp, const char *end, evf *f)
{
	if (!memcmp(k, "Dst Rank", 8))
		return parse_int(r, pp, end, &f->dst, &f->has_dst);
	if (!memcmp(k, "Src Rank", 8))
		return parse_int(r, pp, end, &f->src, &f->has_src);
	return skip_member(r, pp, end);
}

/* "Concrete Inputs": its third element when it is a small whole number
 * (c10d::send/recv_'s peer, recorded with record_shapes). */
static int parse_ci_peer(reader *r, const char **pp, const char *end, evf *f)
{
	span c = { 0 };
	size_t i;
	int rc = parse_list_str(r, pp, end, 2, &c);

	if (rc || !c.s || !c.n || c.n >= 10 || c.esc)
		return rc;
	for (i = 0; i < c.n && is_digit(c.s[i]); i++)
		;
	if (i < c.n)
		return OK;
	f->ci2 = 0;
	for (i = 0; i < c.n; i++)
		f->ci2 = f->ci2 * 10 + (c.s[i] - '0');
	f->has_ci2 = 1;
	return OK;
}

/* The event's "args" members this reader keeps, by Kineto's own spelling
 * (the trace format's names, not report keys: the report may word the same
 * numbers its own way). */
static int parse_args(reader *r, const char **pp, const char *end, evf *f)
{
	const char *p = *pp;

	if (*p != '{')
		return skip_value(r, pp, end);
	p = ws(p + 1);
	if (*p == '}') {
		*pp = p + 1;
		return OK;
	}
	for (;;) {
		const char *k, *q;
		size_t kn;
		int rc = OK;

		if (*p != '"')
			return UNEXPECTED(r, p, end, "'\"' starting an object key");
		k = p + 1;
		q = str_end(k, end, NULL);
		if (!q)
			return NEED;
		kn = (size_t)(q - k);
		p = ws(q + 1);
		if (*p != ':')
			return UNEXPECTED(r, p, end, "':'");
		p = ws(p + 1);
		switch (kn) {
		case 8:
			rc = parse_peer_rank(r, k, &p, end, f);
			break;
		case 3:
			/* torch 2.x: the collective's sequence number in its group */
			if (!memcmp(k, "Seq", 3))
				rc = parse_int(r, &p, end, &f->seq, &f->has_seq);
			else
				rc = skip_member(r, &p, end);
			break;
		case 18:
			if (!memcmp(k, "Process Group Name", 18))
				rc = parse_str(r, &p, end, &f->pgname);
			else
				rc = skip_member(r, &p, end);
			break;
		case 4:
			if (!memcmp(k, "grid", 4))
				rc = parse_dim3(r, &p, end, f->grid, &f->has_grid);
			else if (!memcmp(k, "name", 4))
				rc = parse_str(r, &p, end, &f->aname);
			else
				rc = skip_member(r, &p, end);
			break;
		case 5:
			if (!memcmp(k, "block", 5))
				rc = parse_dim3(r, &p, end, f->block, &f->has_block);
			else if (!memcmp(k, "bytes", 5))
				rc = parse_int(r, &p, end, &f->bytes, &f->has_bytes);
			else if (!memcmp(k, "dtype", 5))
				rc = parse_str(r, &p, end, &f->dtype);
			else
				rc = skip_member(r, &p, end);
			break;
		case 10:
			if (!memcmp(k, "Call stack", 10))
				rc = parse_str(r, &p, end, &f->stack);
			else if (!memcmp(k, "Group size", 10))
				rc = parse_int(r, &p, end, &f->group, &f->has_group);
			else if (!memcmp(k, "Input Dims", 10))
				rc = parse_dims(r, &p, end, &f->dims, &f->has_dims);
			else if (!memcmp(k, "Input type", 10))
				rc = parse_list_str(r, &p, end, 0, &f->itype);
			else
				rc = skip_member(r, &p, end);
			break;
		case 11:
			if (!memcmp(k, "correlation", 11))
				rc = parse_int(r, &p, end, &f->corr, &f->has_corr);
			else
				rc = skip_member(r, &p, end);
			break;
		case 6:
			/* read for cuda_sync records only (every kernel has one);
			 * "cat" comes before "args" in Kineto's files, and when it
			 * has not been seen yet the value is read anyway */
			if (!memcmp(k, "stream", 6) && (f->cat == CAT_SYNC || f->cat == CAT_NONE))
				rc = parse_int(r, &p, end, &f->stream, &f->has_stream);
			else
				rc = skip_member(r, &p, end);
			break;
		case 13:
			if (!memcmp(k, "In msg nelems", 13))
				rc = parse_int(r, &p, end, &f->in_n, &f->has_in);
			else if (!memcmp(k, "blocks per SM", 13))
				rc = parse_float(r, &p, end, &f->bps, &f->has_eff, 2);
			else if (!memcmp(k, "shared memory", 13)) {
				float v = 0;
				rc = parse_float(r, &p, end, &v, &f->has_eff, 8);
				f->smem = v > 2e9f ? INT32_MAX : (int32_t)v;
			} else
				rc = skip_member(r, &p, end);
			break;
		case 20:
			if (!memcmp(k, "registers per thread", 20)) {
				float v = 0;
				rc = parse_float(r, &p, end, &v, &f->has_eff, 4);
				f->regs = v > 2e9f ? INT32_MAX : (int32_t)v;
			} else
				rc = skip_member(r, &p, end);
			break;
		case 25:
			if (!memcmp(k, "est. achieved occupancy %", 25))
				rc = parse_float(r, &p, end, &f->occ, &f->has_eff, 1);
			else
				rc = skip_member(r, &p, end);
			break;
		case 14:
			if (!memcmp(k, "Out msg nelems", 14))
				rc = parse_int(r, &p, end, &f->out_n, &f->has_out);
			else if (!memcmp(k, "wait_on_stream", 14))
				rc = parse_int(r, &p, end, &f->wstream, &f->has_wstream);
			else
				rc = skip_member(r, &p, end);
			break;
		case 15:
			if (!memcmp(k, "Collective name", 15))
				rc = parse_str(r, &p, end, &f->coll);
			else if (!memcmp(k, "Concrete Inputs", 15))
				rc = parse_ci_peer(r, &p, end, f);
			else
				rc = skip_member(r, &p, end);
			break;
		default:
			rc = skip_member(r, &p, end);
		}
		if (rc)
			return rc;
		p = ws(p);
		if (*p == ',') {
			p = ws(p + 1);
			continue;
		}
		if (*p == '}') {
			*pp = p + 1;
			return OK;
		}
		return UNEXPECTED(r, p, end, "',' or '}'");
	}
}

/* Parse one event object starting at '{'.  Fills f; commits nothing. */
static int parse_event(reader *r, const char **pp, const char *end, evf *f)
{
	const char *p = ws(*pp + 1);

	/* Reset only what commit() reads unconditionally (a full memset of
	 * the struct showed in the reader's profile: docs/bench.md). */
	f->name.s = f->stack.s = f->aname.s = f->dtype.s = f->coll.s = f->pgname.s = NULL;
	f->itype.s = NULL;
	f->pid = f->tid = 0;
	memset(&f->ph, 0, sizeof(*f) - offsetof(evf, ph));
	if (*p == '}') {
		*pp = p + 1;
		return OK;
	}
	for (;;) {
		const char *k, *q;
		size_t kn;
		int rc = OK;

		if (*p != '"')
			return UNEXPECTED(r, p, end, "'\"' starting an object key");
		k = p + 1;
		q = str_end(k, end, NULL);
		if (!q)
			return NEED;
		kn = (size_t)(q - k);
		p = ws(q + 1);
		if (*p != ':')
			return UNEXPECTED(r, p, end, "':'");
		p = ws(p + 1);
		/* Dispatch on length first: one compare for most keys. */
		switch (kn) {
		case 2:
			if (k[0] == 'p' && k[1] == 'h') {
				span s = { 0 };
				rc = parse_str(r, &p, end, &s);
				f->ph = s.n == 1 ? s.s[0] : '?';
			} else if (k[0] == 't' && k[1] == 's') {
				rc = parse_us(r, &p, end, &f->ts, &f->has_ts, &f->ts_bad);
			} else {
				rc = skip_member(r, &p, end);
			}
			break;
		case 3:
			if (!memcmp(k, "cat", 3)) {
				span s = { 0 };
				rc = parse_str(r, &p, end, &s);
				f->cat = s.s ? cat_code(s.s, s.n) : CAT_SKIP;
			} else if (!memcmp(k, "dur", 3)) {
				rc = parse_us(r, &p, end, &f->dur, &f->has_dur, &f->dur_bad);
			} else if (!memcmp(k, "pid", 3)) {
				rc = parse_id(r, &p, end, &f->pid, &f->spid, &f->pid_str);
			} else if (!memcmp(k, "tid", 3)) {
				rc = parse_id(r, &p, end, &f->tid, &f->stid, &f->tid_str);
			} else {
				rc = skip_member(r, &p, end);
			}
			break;
		case 4:
			if (!memcmp(k, "name", 4))
				rc = parse_str(r, &p, end, &f->name);
			else if (!memcmp(k, "args", 4))
				rc = parse_args(r, &p, end, f);
			else
				rc = skip_member(r, &p, end);
			break;
		default:
			rc = skip_member(r, &p, end);
		}
		if (rc)
			return rc;
		p = ws(p);
		if (*p == ',') {
			p = ws(p + 1);
			continue;
		}
		if (*p == '}') {
			*pp = p + 1;
			return OK;
		}
		return UNEXPECTED(r, p, end, "',' or '}'");
	}
}

/* ---- committing events ----------------------------------------------- */

static int starts(const char *s, size_t n, const char *pre)
{
	size_t l = strlen(pre);
	return n >= l && memcmp(s, pre, l) == 0;
}

/* Bytes of one element of a dtype as written in "dtype" args. */
unsigned pt_kineto_dtype_size(const char *s, size_t n)
{
	static const struct { const char *name; unsigned size; } t[] = {
		{ "float", 4 }, { "float32", 4 }, { "double", 8 }, { "float64", 8 },
		{ "half", 2 }, { "float16", 2 }, { "bfloat16", 2 }, { "int", 4 },
		{ "int32", 4 }, { "long", 8 }, { "int64", 8 }, { "long int", 8 },
		{ "short", 2 }, { "int16", 2 }, { "char", 1 }, { "int8", 1 },
		{ "signed char", 1 }, { "byte", 1 }, { "uint8", 1 }, { "unsigned char", 1 },
		{ "bool", 1 }, { "complexfloat", 8 }, { "complexdouble", 16 },
		{ "complexhalf", 4 }, { "float8_e4m3fn", 1 }, { "float8_e5m2", 1 },
		{ "float8_e4m3fnuz", 1 }, { "float8_e5m2fnuz", 1 }, { "uint16", 2 },
		{ "uint32", 4 }, { "uint64", 8 },
	};
	char low[24];
	size_t i;

	if (starts(s, n, "c10::")) {
		s += 5;
		n -= 5;
	}
	if (n >= sizeof(low))
		return 0;
	for (i = 0; i < n; i++)
		low[i] = (char)((s[i] >= 'A' && s[i] <= 'Z') ? s[i] + 32 : s[i]);
	low[n] = 0;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(low, t[i].name))
			return t[i].size;
	return 0;
}

static uint32_t lane_of(reader *r, int64_t pid, int64_t tid, int gpu)
{
	/* Events come in runs per lane but interleave CPU and GPU; a small
	 * direct-mapped cache avoids pt_store_lane's linear scan. */
	unsigned h = (unsigned)((uint64_t)pid * 31 + (uint64_t)tid * 7 + (unsigned)gpu) & 63;
	lane_slot *s = &r->lanes[h];
	uint32_t l;

	if (s->used && s->pid == pid && s->tid == tid && s->gpu == gpu)
		return s->lane;
	l = pt_store_lane(r->st, pid, tid, gpu);
	if (l != UINT32_MAX) {
		s->pid = pid;
		s->tid = tid;
		s->gpu = (uint8_t)gpu;
		s->lane = l;
		s->used = 1;
	}
	return l;
}

static int intern(reader *r, const char *s, size_t n, uint32_t *id)
{
	*id = pt_strtab_intern(r->st->strs, s, n);
	if (*id == UINT32_MAX)
		return fail(r, PT_ENOMEM, NULL, "out of memory");
	return OK;
}

/* Normalised id for a raw Python/op name id (cached: names repeat). */
static int normalized(reader *r, uint32_t raw, const char *s, size_t n, uint32_t *out)
{
	size_t l;

	if (raw >= r->normcap) {
		size_t old = r->normcap;
		if (X_GROW(r->norm, r->normcap, (size_t)raw + 1))
			return fail(r, PT_ENOMEM, NULL, "out of memory");
		memset(r->norm + old, 0, (r->normcap - old) * sizeof(*r->norm));
	}
	if (r->norm[raw]) {
		*out = r->norm[raw] - 1;
		return OK;
	}
	if (grow_tmp(&r->tmp, &r->tmpcap, n + 1))
		return fail(r, PT_ENOMEM, NULL, "out of memory");
	/* s may live in tmp2 (decoded) but never in tmp. */
	l = pt_key_normalize_name(s, n, r->tmp, n + 1);
	if (intern(r, r->tmp, l, out))
		return ERR;
	r->norm[raw] = *out + 1;
	return OK;
}

static int add_thread_name(reader *r, const evf *f)
{
	const char *s;
	size_t n;
	tname *t;

	if (!f->aname.s)
		return OK;
	if (unescape(r, &f->aname, &s, &n))
		return ERR;
	if (n > PT_KEY_NAME_MAX)
		n = PT_KEY_NAME_MAX;
	if (X_GROW(r->tnames, r->tnamecap, r->ntnames + 1))
		return fail(r, PT_ENOMEM, NULL, "out of memory");
	t = &r->tnames[r->ntnames];
	t->pid = f->pid;
	t->tid = f->tid;
	if (intern(r, s, n, &t->name))
		return ERR;
	r->ntnames++;
	return OK;
}

/* A cuda_sync event: which call (correlation) waited for which stream
 * ("Stream Wait Event": the stream in "stream" waits for "wait_on_stream";
 * "Event Sync": the call waits for "wait_on_stream"; "Stream Sync": for
 * "stream"; "Context Sync": for all).  Kept as a pt_sync, never an event;
 * one without a correlation id or a known kind is skipped. */
static int add_sync(reader *r, const evf *f)
{
	pt_sync y;
	const char *nm = f->name.s;
	size_t n = f->name.n;
	int64_t waited = -1;

	if (!f->has_corr || f->corr <= 0 || !nm || !f->has_ts)
		return OK;
	memset(&y, 0, sizeof(y));
	y.ts = f->ts;
	y.corr = (uint32_t)f->corr;
	y.lane = y.wlane = UINT32_MAX;
	if (key_is(nm, n, "Stream Wait Event", 17)) {
		y.kind = PT_SYNC_STREAM_WAIT;
		waited = f->has_wstream ? f->wstream : -1;
		if (f->has_stream && f->stream >= 0 &&
		    (y.wlane = lane_of(r, f->pid, f->stream, 1)) == UINT32_MAX)
			return fail(r, PT_ENOMEM, NULL, "out of memory");
	} else if (key_is(nm, n, "Event Sync", 10)) {
		y.kind = PT_SYNC_EVENT;
		waited = f->has_wstream ? f->wstream : -1;
	} else if (key_is(nm, n, "Stream Sync", 11)) {
		y.kind = PT_SYNC_STREAM;
		waited = f->has_stream ? f->stream : -1;
	} else if (key_is(nm, n, "Context Sync", 12)) {
		y.kind = PT_SYNC_CONTEXT;
	} else {
		return OK;
	}
	if (waited >= 0 && (y.lane = lane_of(r, f->pid, waited, 1)) == UINT32_MAX)
		return fail(r, PT_ENOMEM, NULL, "out of memory");
	if (pt_store_add_sync(r->st, &y))
		return fail(r, PT_ENOMEM, NULL, "out of memory");
	return OK;
}

static int classify(const evf *f, const char *name, size_t n)
{
	switch (f->cat) {
	case CAT_KERNEL:
		return PT_K_KERNEL; /* or communication: commit() asks commkind.c */
	case CAT_MEMCPY: return PT_K_MEMCPY;
	case CAT_MEMSET: return PT_K_MEMSET;
	case CAT_RUNTIME: return PT_K_RUNTIME;
	case CAT_DRIVER: return PT_K_DRIVER;
	case CAT_PYTHON: return PT_K_PYTHON;
	case CAT_GPU_ANNOT: return PT_K_GPU_ANNOTATION;
	case CAT_NONE:
	case CAT_CPU_OP:
	case CAT_USER_ANNOT:
		if (pt_key_step_number(name, n) >= 0)
			return PT_K_STEP;
		if (pt_commkind_is_cpu_op(name, n))
			return PT_K_CPU_COMM;
		return f->cat == CAT_USER_ANNOT ? PT_K_ANNOTATION : PT_K_CPU_OP;
	default:
		return -1;
	}
}

/* Names in warnings: at most 80 bytes (they are not NUL-terminated). */
#define SHOWN(n) ((int)((n) > 80 ? 80 : (n)))

/* Whether a complete event's times are usable: a warning and 0 when its
 * timestamp or duration is missing or out of range.  Cuts a name longer
 * than PT_KEY_NAME_MAX (*n), with a warning. */
static int usable(reader *r, const evf *f, const char *at, const char *name, size_t *n)
{
	pt_store *st = r->st;

	if (!f->has_ts || f->ts_bad) {
		pt_store_warn(st, "event '%.*s' at byte %llu has %s timestamp; skipped", SHOWN(*n),
			      name, (unsigned long long)off_of(r, at),
			      f->has_ts ? "an out-of-range" : "no");
		return 0;
	}
	if (!f->has_dur) {
		pt_store_warn(st, "complete event '%.*s' at byte %llu has no dur; skipped", SHOWN(*n),
			      name, (unsigned long long)off_of(r, at));
		return 0;
	}
	if (f->dur_bad || f->dur < 0 || f->dur > DUR_MAX_NS) {
		pt_store_warn(st, "event '%.*s' at byte %llu has an %s duration; skipped", SHOWN(*n),
			      name, (unsigned long long)off_of(r, at),
			      f->dur < 0 && !f->dur_bad ? "negative" : "absurd (over a day)");
		return 0;
	}
	if (*n > PT_KEY_NAME_MAX) {
		pt_store_warn(st, "name of %zu bytes at byte %llu truncated to %zu", *n,
			      (unsigned long long)off_of(r, at), PT_KEY_NAME_MAX);
		*n = PT_KEY_NAME_MAX;
	}
	return 1;
}

/* The kernel's key into e->name (keys.c): the compute key first, since
 * the memo of what is communication goes by its string id, one lookup
 * per launch; a communication kernel gets its own key and kind. */
static int kernel_name(reader *r, const evf *f, const char *name, size_t n, pt_event *e)
{
	const int64_t *grid = f->has_grid && f->has_block ? f->grid : NULL;
	int role;

	if (grow_tmp(&r->tmp, &r->tmpcap, n + PT_KEY_SHAPE_MAX))
		return fail(r, PT_ENOMEM, NULL, "out of memory");
	if (intern(r, r->tmp, pt_key_kernel(r->tmp, name, n, PT_ROLE_NONE, grid, f->block),
		   &e->name))
		return ERR;
	role = pt_key_kernel_role(&r->ck, e->name, name, n);
	if (role < 0)
		return fail(r, PT_ENOMEM, NULL, "out of memory");
	if (role > 0) {
		e->kind = PT_K_COMM_KERNEL;
		if (intern(r, r->tmp, pt_key_kernel(r->tmp, name, n, role, grid, f->block),
			   &e->name))
			return ERR;
	}
	return OK;
}

/* A CPU collective's name into e->name: record_param_comms wraps every
 * collective; its "Collective name" arg says which one, so keep them
 * apart ("record_param_comms:<collective>"). */
static int cpu_comm_name(reader *r, const evf *f, const char *name, size_t n, pt_event *e)
{
	if (f->coll.s && f->coll.n && f->coll.n <= 256 && n == 18) {
		const char *c;
		size_t cn;
		/* name is "record_param_comms" (n == 18): copy it before
		 * unescape() reuses tmp2. */
		if (grow_tmp(&r->tmp, &r->tmpcap, n + f->coll.n + 2))
			return fail(r, PT_ENOMEM, NULL, "out of memory");
		memcpy(r->tmp, "record_param_comms:", 19);
		if (unescape(r, &f->coll, &c, &cn))
			return ERR;
		memcpy(r->tmp + 19, c, cn);
		return intern(r, r->tmp, 19 + cn, &e->name) ? ERR : OK;
	}
	return intern(r, name, n, &e->name) ? ERR : OK;
}

/* A collective's bytes (elements of its larger side times the dtype's
 * size) and process group into e. */
static void comm_size(reader *r, const evf *f, pt_event *e)
{
	int64_t ne = -1;

	if (f->has_in)
		ne = f->in_n;
	if (f->has_out && f->out_n > ne)
		ne = f->out_n;
	if (ne > 0 && f->dtype.s) {
		const char *d;
		size_t dn;
		unsigned sz;
		if (!unescape(r, &f->dtype, &d, &dn) && (sz = pt_kineto_dtype_size(d, dn)) != 0 &&
		    (uint64_t)ne <= UINT64_MAX / sz)
			e->bytes = (uint64_t)ne * sz;
	}
	if (f->has_group && f->group > 0)
		e->group = (uint16_t)(f->group > UINT16_MAX ? UINT16_MAX : f->group);
}

/* A step annotation: a new step into the store, or *dup set when the
 * same step came already (under a second category: keep the first). */
static int add_step(reader *r, const pt_event *e, const char *name, size_t n, int *dup)
{
	pt_store *st = r->st;
	int64_t stepno = pt_key_step_number(name, n);
	size_t k;

	for (k = 0; k < st->nsteps; k++)
		if (st->steps[k].number == stepno)
			break;
	if (k < st->nsteps) {
		r->ndupsteps++;
		*dup = 1;
		return OK;
	}
	if (pt_store_add_step(st, stepno, e->ts, e->dur))
		return fail(r, PT_ENOMEM, NULL, "out of memory");
	return OK;
}

/* The launch's efficiency numbers for the kernel just stored. */
static int add_kinfo(reader *r, const evf *f)
{
	pt_kinfo k;

	k.ev = (uint32_t)(r->st->n - 1);
	/* Kineto writes 0 when it could not estimate the occupancy */
	k.occupancy = f->has_eff & 1 && f->occ > 0 ? f->occ : -1;
	k.blocks_per_sm = f->has_eff & 2 ? f->bps : -1;
	k.registers = f->has_eff & 4 ? f->regs : -1;
	k.shared_mem = f->has_eff & 8 ? f->smem : -1;
	if (pt_store_add_kinfo(r->st, &k))
		return fail(r, PT_ENOMEM, NULL, "out of memory");
	return OK;
}

/* The process group and sequence number of the collective just stored. */
static int add_collid(reader *r, const evf *f)
{
	pt_collid c;

	c.ev = (uint32_t)(r->st->n - 1);
	c.pg = 0;
	c.seq = f->has_seq && f->seq >= 0 ? f->seq : -1;
	if (f->pgname.s && f->pgname.n && f->pgname.n <= 256) {
		const char *g;
		size_t gn;
		if (unescape(r, &f->pgname, &g, &gn) || intern(r, g, gn, &c.pg))
			return ERR;
	}
	if (pt_store_add_collid(r->st, &c))
		return fail(r, PT_ENOMEM, NULL, "out of memory");
	return OK;
}

/* A p2p op without message sizes (gloo's "gloo:send", recorded with
 * record_shapes): its bytes from the first tensor's "Input Dims" and
 * "Input type". */
static void p2p_size(reader *r, const evf *f, const char *name, size_t n, pt_event *e)
{
	int dir = pt_commkind_p2p_dir(name, n);
	const char *d;
	size_t dn;
	unsigned sz;

	if ((dir != PT_P2P_SEND && dir != PT_P2P_RECV) || !f->has_dims || f->dims <= 0 ||
	    !f->itype.s || unescape(r, &f->itype, &d, &dn) || !(sz = pt_kineto_dtype_size(d, dn)) ||
	    (uint64_t)f->dims > UINT64_MAX / sz)
		return;
	e->bytes = (uint64_t)f->dims * sz;
}

/* The peer of the p2p op just stored (pt_peer): "Dst Rank"/"Src Rank"
 * (record_param_comms, NCCL kernels of torch 2), the "nccl:send 0->1"
 * title, or c10d::send/recv_'s peer argument ("Concrete Inputs"[2], with
 * record_shapes). */
static int add_peer(reader *r, const evf *f, const char *name, size_t n, int kind)
{
	pt_peer pr;
	int64_t peer = -1;
	int dir = 0;

	if (f->has_dst) {
		dir = PT_P2P_SEND;
		peer = f->dst;
	} else if (f->has_src) {
		dir = PT_P2P_RECV;
		peer = f->src;
	} else if (kind == PT_K_CPU_COMM) {
		dir = pt_commkind_p2p_title(name, n, &peer);
		if (!dir && f->has_ci2 && n > 6 && !memcmp(name, "c10d::", 6)) {
			dir = pt_commkind_p2p_dir(name, n);
			peer = f->ci2;
		}
	}
	if ((dir != PT_P2P_SEND && dir != PT_P2P_RECV) || peer < 0 || peer > INT32_MAX)
		return OK;
	pr.ev = (uint32_t)(r->st->n - 1);
	pr.peer = (int32_t)peer;
	pr.dir = (uint8_t)dir;
	if (pt_store_add_peer(r->st, &pr))
		return fail(r, PT_ENOMEM, NULL, "out of memory");
	return OK;
}

/* One parsed trace event into the store: thread names from metadata
 * events; complete events classified, checked, named (interned keys),
 * with their bytes, group, stack, step and kernel efficiency.  Runs once
 * per event: its helpers above are static with one caller each, so the
 * compiler inlines them and the split costs no measurable time
 * (docs/bench.md, "Code shaped for speed", `commit`). */
static int commit(reader *r, const evf *f, const char *at)
{
	pt_store *st = r->st;
	pt_event e;
	const char *name;
	size_t n;
	int kind, gpu, dup = 0;

	r->nobjects++;
	if (f->ph != 'X') {
		if (f->ph == 'M' && key_is(f->name.s, f->name.n, "thread_name", 11))
			return add_thread_name(r, f);
		return OK;
	}
	if (f->cat == CAT_SKIP) {
		r->nskipcat++;
		return OK;
	}
	if (st->keep_pid_set && f->pid != st->keep_pid)
		return OK;
	if (f->cat == CAT_SYNC)
		return add_sync(r, f);
	if (!f->name.s) {
		pt_store_warn(st, "event without a name at byte %llu skipped",
			      (unsigned long long)off_of(r, at));
		return OK;
	}
	if (unescape(r, &f->name, &name, &n))
		return ERR;
	kind = classify(f, name, n);
	if (kind < 0 || !usable(r, f, at, name, &n))
		return OK;
	memset(&e, 0, sizeof(e));
	e.ts = f->ts;
	e.dur = f->dur;
	e.kind = (uint8_t)kind;
	gpu = kind == PT_K_KERNEL || kind == PT_K_COMM_KERNEL || kind == PT_K_MEMCPY ||
	      kind == PT_K_MEMSET || kind == PT_K_GPU_ANNOTATION;
	e.flags = gpu ? PT_EV_GPU : 0;

	switch (kind) {
	case PT_K_KERNEL:
		if (kernel_name(r, f, name, n, &e))
			return ERR;
		kind = e.kind;
		break;
	case PT_K_CPU_OP:
	case PT_K_PYTHON:
	case PT_K_ANNOTATION: {
		uint32_t raw;
		if (intern(r, name, n, &raw) || normalized(r, raw, name, n, &e.name))
			return ERR;
		break;
	}
	case PT_K_CPU_COMM:
		if (cpu_comm_name(r, f, name, n, &e))
			return ERR;
		break;
	default:
		if (intern(r, name, n, &e.name))
			return ERR;
	}

	if (kind == PT_K_MEMCPY || kind == PT_K_MEMSET) {
		if (f->has_bytes && f->bytes > 0)
			e.bytes = (uint64_t)f->bytes;
	} else if (kind == PT_K_COMM_KERNEL || kind == PT_K_CPU_COMM) {
		comm_size(r, f, &e);
		if (!e.bytes && kind == PT_K_CPU_COMM)
			p2p_size(r, f, name, n, &e);
	}
	if (f->stack.s && f->stack.n && (kind == PT_K_CPU_OP || kind == PT_K_CPU_COMM ||
					 kind == PT_K_ANNOTATION || kind == PT_K_STEP)) {
		const char *s;
		size_t sn;
		if (unescape(r, &f->stack, &s, &sn))
			return ERR;
		if (sn > PT_KEY_NAME_MAX)
			sn = PT_KEY_NAME_MAX;
		if (intern(r, s, sn, &e.stack))
			return ERR;
	}
	/* The correlation id links a launch to its GPU event (the critical
	 * path, src/analysis/critpath.c); it shares the field CPU frames use
	 * for their stack. */
	if (f->has_corr && f->corr > 0 &&
	    (gpu || kind == PT_K_RUNTIME || kind == PT_K_DRIVER) && kind != PT_K_GPU_ANNOTATION)
		e.corr = (uint32_t)f->corr;
	if (kind == PT_K_STEP && (add_step(r, &e, name, n, &dup) || dup))
		return dup ? OK : ERR;
	e.lane = lane_of(r, f->pid, f->tid, gpu);
	if (e.lane == UINT32_MAX || pt_store_add(st, &e))
		return fail(r, PT_ENOMEM, NULL, "out of memory");
	if ((kind == PT_K_COMM_KERNEL || kind == PT_K_CPU_COMM) && add_peer(r, f, name, n, kind))
		return ERR;
	if ((kind == PT_K_COMM_KERNEL || kind == PT_K_CPU_COMM) && (f->pgname.s || f->has_seq))
		return add_collid(r, f);
	if (f->has_eff && kind == PT_K_KERNEL)
		return add_kinfo(r, f);
	return OK;
}

/* ---- header ------------------------------------------------------------ */

static int header_value(reader *r, const char *k, size_t kn, const char *v, size_t vn)
{
	pt_store *st = r->st;
	pt_error je;
	pt_json *j;

	if (key_is(k, kn, "baseTimeNanoseconds", 19)) {
		const char *p = v;
		num n;
		int64_t b;
		int eof = r->eof;

		/* Exact integer parse: the value exceeds double precision. */
		r->eof = 1;
		if (parse_num(r, &p, v + vn, &n) == OK && p == v + vn && !n.neg &&
		    num_scaled(&n, 0, TS_MAX_NS, &b) == 0) {
			r->base = b;
			r->have_base = 1;
		} else {
			pt_store_warn(st, "baseTimeNanoseconds is not a valid time; ignored");
		}
		r->eof = eof;
		return OK;
	}
	pt_error_clear(&je);
	j = pt_json_parse(v, vn, &je);
	if (!j) {
		/* The structure was checked by skip_value; what the strict DOM
		 * adds (UTF-8, number range) is not worth losing the trace. */
		if (je.code == PT_ENOMEM)
			return fail(r, PT_ENOMEM, NULL, "out of memory");
		pt_store_warn(st, "%.*s at byte %llu not read: %s", (int)kn, k,
			      (unsigned long long)(off_of(r, v) + (uint64_t)(je.offset > 0 ? je.offset : 0)),
			      je.msg);
		return OK;
	}
	if (key_is(k, kn, "deviceProperties", 16)) {
		if (j->type == PT_JSON_ARR) {
			const char *name = pt_json_strv(pt_json_at(j, 0), "name", NULL);
			st->ndevices = j->len > 1000000 ? 1000000 : (int)j->len;
			if (name) {
				uint32_t id = pt_strtab_intern(st->strs, name, strnlen(name, PT_KEY_NAME_MAX));
				if (id != UINT32_MAX)
					st->device_name = id;
			}
		}
	} else if (key_is(k, kn, "perftracker", 11)) {
		if (j->type == PT_JSON_OBJ && pt_fr_read(st, j)) {
			pt_json_free(j);
			return fail(r, PT_ENOMEM, NULL, "out of memory");
		}
	} else if (key_is(k, kn, "distributedInfo", 15)) {
		double d;
		const char *b;

		d = pt_json_num(j, "rank", -1);
		if (d >= 0 && d < 1e15 && d == (double)(int64_t)d)
			st->rank = (int64_t)d;
		d = pt_json_num(j, "world_size", -1);
		if (d >= 1 && d < 1e15 && d == (double)(int64_t)d)
			st->world_size = (int64_t)d;
		b = pt_json_strv(j, "backend", NULL);
		if (b && *b) {
			uint32_t id = pt_strtab_intern(st->strs, b, strnlen(b, 256));
			if (id != UINT32_MAX)
				st->backend = id;
		}
	}
	pt_json_free(j);
	return OK;
}

static int is_header_key(const char *k, size_t kn)
{
	return key_is(k, kn, "baseTimeNanoseconds", 19) || key_is(k, kn, "deviceProperties", 16) ||
	       key_is(k, kn, "distributedInfo", 15) || key_is(k, kn, "perftracker", 11);
}

/* Streaming skip of a top-level value we do not need (may be huge). */
static int skip_stream(reader *r, const char **pp, const char *end)
{
	const char *p = *pp;

	if (!r->sk_started) {
		p = ws(p);
		if (p >= end)
			return NEED;
		if (*p != '{' && *p != '[') {
			/* A scalar: small, skip it the ordinary way. */
			int rc = skip_value(r, &p, end);
			if (rc == OK)
				*pp = p;
			return rc;
		}
		r->sk_started = 1;
		r->sk_depth = 0;
		r->sk_instr = r->sk_esc = 0;
	}
	while (p < end) {
		char c = *p;

		if (r->sk_instr) {
			if (r->sk_esc) {
				r->sk_esc = 0;
				p++;
				continue;
			}
			if (c == '\\') {
				r->sk_esc = 1;
				p++;
				continue;
			}
			if (c == '"') {
				r->sk_instr = 0;
				p++;
				continue;
			}
			/* Jump to the next quote or backslash. */
			{
				const char *q = memchr(p, '"', (size_t)(end - p));
				const char *b = memchr(p, '\\', (size_t)((q ? q : end) - p));
				p = b ? b : q ? q : end;
			}
			continue;
		}
		switch (c) {
		case '"':
			r->sk_instr = 1;
			break;
		case '{':
		case '[':
			if (r->sk_depth >= DEPTH_MAX)
				return fail(r, PT_EPARSE, p, "nesting deeper than %d levels", DEPTH_MAX);
			r->sk_stack[r->sk_depth++] = (unsigned char)(c == '{' ? '}' : ']');
			break;
		case '}':
		case ']':
			if (r->sk_depth <= 0 || (unsigned char)c != r->sk_stack[r->sk_depth - 1])
				return fail(r, PT_EPARSE, p, "mismatched '%c'", c);
			if (--r->sk_depth == 0) {
				r->sk_started = 0;
				*pp = p + 1;
				return OK;
			}
			break;
		case 0:
			return fail_byte(r, p, "a json value");
		default:
			break;
		}
		p++;
	}
	*pp = p;
	return NEED;
}

/* ---- driver ------------------------------------------------------------- */

/* Make room and read more.  keep = offset of the first byte still needed. */
static int refill(reader *r, size_t keep)
{
	ssize_t got;

	if (keep) {
		memmove(r->buf, r->buf + keep, r->len - keep);
		r->len -= keep;
		r->pos -= keep;
		r->base_off += keep;
	}
	if (r->len == r->cap) {
		/* One value fills the whole buffer: grow, up to the cap. */
		size_t nc = r->cap * 2;
		char *nb;

		if (r->cap >= VALUE_MAX)
			return fail(r, PT_ENOMEM, r->buf, "a single json value is larger than %zu MiB",
				    VALUE_MAX >> 20);
		if (nc > VALUE_MAX)
			nc = VALUE_MAX;
		nb = realloc(r->buf, nc + 1 + BUF_PAD);
		if (!nb)
			return fail(r, PT_ENOMEM, NULL, "out of memory");
		r->buf = nb;
		r->cap = nc;
	}
	got = pt_input_read(r->in, r->buf + r->len, r->cap - r->len, r->err);
	if (got < 0)
		return ERR;  /* err filled by pt_input (corrupt gzip: offset set) */
	if (got == 0)
		r->eof = 1;
	r->len += (size_t)got;
	memset(r->buf + r->len, 0, 1 + BUF_PAD);  /* sentinel + pad */
	return OK;
}

/* S_START: the first value decides the form, an object that holds
 * "traceEvents" or a bare array of events.  OK with *pp past the opening
 * bracket and the state set, NEED with *pp where to resume, or ERR.  Runs
 * once per file, so out of scan's loop. */
static int scan_start(reader *r, const char **pp, const char *end)
{
	const char *p = ws(*pp);

	*pp = p;
	if (p >= end) {
		if (r->eof && pt_input_cut(r->in))
			return fail(r, PT_EPARSE, p, "unexpected end of gzip stream (file cut off?)");
		if (r->eof)
			return fail(r, PT_EPARSE, p, off_of(r, p) ? "no json value (only whitespace)"
								 : "empty file");
		return NEED;
	}
	if (*p == '[') {
		r->array_form = 1;
		r->events_seen = 1;
		r->state = S_EV_FIRST;
		*pp = p + 1;
	} else if (*p == '{') {
		r->state = S_TOP_FIRST;
		*pp = p + 1;
	} else if (*p == '"' || *p == '-' || is_digit(*p) ||
		   starts(p, (size_t)(end - p), "true") ||
		   starts(p, (size_t)(end - p), "false") ||
		   starts(p, (size_t)(end - p), "null")) {
		return fail(r, PT_EFORMAT, p,
			    "not a trace: the json value is a %s, not an object or array",
			    *p == '"' ? "string" : (*p == 't' || *p == 'f') ? "boolean" :
			    *p == 'n' ? "null" : "number");
	} else if (!r->eof && (size_t)(end - p) < 5) {
		return NEED;  /* maybe a literal split by the chunk end */
	} else {
		return fail_byte(r, p, "'{' or '[' (not json)");
	}
	return OK;
}

/* S_TOP_KEY: one member of the top-level object: "traceEvents" opens the
 * events, a header key (is_header_key) is read whole, any other value is
 * skipped as a stream (S_SKIP).  OK with *pp past what it read and the
 * state set, NEED with *pp back at the key (read again with more input),
 * or ERR.  Runs once per top-level key, so out of scan's loop. */
static int scan_top_key(reader *r, const char **pp, const char *end)
{
	const char *k, *q, *v, *mark, *p;
	size_t kn;
	int rc;

	mark = p = ws(*pp);
	*pp = mark;
	if (*p != '"') {
		if (p >= end)
			return NEED;
		return fail_byte(r, p, "'\"' starting an object key");
	}
	k = p + 1;
	q = str_end(k, end, NULL);
	if (!q)
		return NEED;
	kn = (size_t)(q - k);
	p = ws(q + 1);
	if (*p != ':') {
		if (p >= end)
			return NEED;
		return fail_byte(r, p, "':'");
	}
	p = ws(p + 1);
	if (p >= end)
		return NEED;
	if (key_is(k, kn, "traceEvents", 11)) {
		if (*p != '[')
			return fail(r, PT_EFORMAT, p, "not a trace: traceEvents is not an array");
		p++;
		r->events_seen = 1;
		r->state = S_EV_FIRST;
	} else if (is_header_key(k, kn)) {
		v = p;
		rc = skip_value(r, &p, end);
		if (rc == NEED)
			return NEED;
		if (rc || header_value(r, k, kn, v, (size_t)(p - v)))
			return ERR;
		r->state = S_TOP_AFTER;
	} else {
		r->sk_started = 0;
		r->state = S_SKIP;
	}
	*pp = p;
	return OK;
}

/* Run the state machine over the buffer until it needs more input (NEED,
 * r->pos = first byte still needed), finishes (OK) or fails (ERR).
 *
 * This is the reader's hot loop, run for every byte of the trace: the
 * event states stay in this function so that the compiler keeps the
 * cursor p, end and the state in registers across events instead of
 * storing them to the reader and reloading them at each call
 * (docs/bench.md, "Code shaped for speed", `scan`).  The states seen once
 * per file or per top-level key are scan_start and scan_top_key; the work
 * of each state lives in the parse_* helpers; only the transitions are
 * here. */
static int scan(reader *r)
{
	const char *p = r->buf + r->pos, *end = r->buf + r->len;
	int rc;

	for (;;) {
		const char *mark;

		switch (r->state) {
		case S_START:
			rc = scan_start(r, &p, end);
			if (rc == NEED)
				goto need;
			if (rc)
				return ERR;
			break;
		case S_TOP_FIRST:
			p = ws(p);
			if (*p == '}') {
				p++;
				r->state = S_TRAIL;
			} else if (*p == '"') {
				r->state = S_TOP_KEY;
			} else if (p >= end) {
				goto need;
			} else {
				return fail_byte(r, p, "'\"' starting an object key");
			}
			break;
		case S_TOP_KEY:
			rc = scan_top_key(r, &p, end);
			if (rc == NEED)
				goto need;
			if (rc)
				return ERR;
			break;
		case S_SKIP:
			rc = skip_stream(r, &p, end);
			if (rc == NEED)
				goto need;
			if (rc)
				return ERR;
			r->state = S_TOP_AFTER;
			break;
		case S_TOP_AFTER:
			p = ws(p);
			if (*p == ',') {
				p++;
				r->state = S_TOP_KEY;
			} else if (*p == '}') {
				p++;
				r->state = S_TRAIL;
			} else if (p >= end) {
				goto need;
			} else {
				return fail_byte(r, p, "',' or '}'");
			}
			break;
		case S_EV_FIRST:
		case S_EV_NEXT:
		case S_EV_AFTER:
			/* The hot loop: one event object per iteration. */
			for (;;) {
				evf f;

				p = ws(p);
				if (r->state == S_EV_AFTER) {
					if (*p == ',') {
						p = ws(p + 1);
						r->state = S_EV_NEXT;
					} else if (*p != ']') {
						if (p >= end)
							goto need;
						return fail_byte(r, p, "',' or ']' after an event");
					}
				}
				if (*p == ']' && r->state != S_EV_NEXT) {
					p++;
					r->events_done = 1;
					r->state = r->array_form ? S_TRAIL : S_TOP_AFTER;
					break;
				}
				if (*p != '{') {
					if (p >= end)
						goto need;
					return fail_byte(r, p, "'{' starting an event");
				}
				mark = p;
				rc = parse_event(r, &p, end, &f);
				if (rc == NEED) {
					p = mark;
					goto need;
				}
				if (rc || commit(r, &f, mark))
					return ERR;
				r->state = S_EV_AFTER;
			}
			break;
		case S_TRAIL:
			p = ws(p);
			if (p < end)
				return fail_byte(r, p, "the end of the file (trailing data)");
			if (!r->eof)
				goto need;
			r->state = S_DONE;
			/* fall through */
		case S_DONE:
			r->pos = (size_t)(p - r->buf);
			return OK;
		}
	}
need:
	r->pos = (size_t)(p - r->buf);
	return NEED;
}

/* Record a warning that should be the one shown (a cut-off file matters
 * more than an earlier skipped event). */
static void warn_main(pt_store *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn_main(pt_store *st, const char *fmt, ...)
{
	va_list ap;

	st->nwarnings++;
	va_start(ap, fmt);
	vsnprintf(st->warning, sizeof(st->warning), fmt, ap);
	va_end(ap);
}

static int finish(reader *r)
{
	pt_store *st = r->st;
	size_t i, j;

	if (r->have_base) {
		/* Events kept ts relative to the base: add it now that the
		 * header is known, wherever it sat in the file. */
		st->base_ns = r->base;
		for (i = 0; i < st->n; i++)
			st->ev[i].ts += r->base;
		for (i = 0; i < st->nsteps; i++)
			st->steps[i].ts += r->base;
		for (i = 0; i < st->nsyncs; i++)
			st->syncs[i].ts += r->base;
		for (i = 0; i < st->nfr; i++)
			st->fr[i].ts += r->base;
	}
	for (i = 0; i < r->ntnames; i++)
		for (j = 0; j < st->nlanes; j++)
			if (st->lanes[j].pid == r->tnames[i].pid && st->lanes[j].tid == r->tnames[i].tid &&
			    !st->lanes[j].name)
				st->lanes[j].name = r->tnames[i].name;
	return pt_fr_map(st);
}

static int read_input(pt_input *in, size_t chunk, pt_store *st, pt_error *err)
{
	reader r;
	int rc = PT_OK, s;

	memset(&r, 0, sizeof(r));
	r.in = in;
	r.st = st;
	r.err = err;
	r.cap = chunk < 16 ? 16 : chunk > VALUE_MAX ? VALUE_MAX : chunk;
	r.buf = x_calloc(1, r.cap + 1 + BUF_PAD);
	if (!r.buf) {
		rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
		goto out;
	}
	r.state = S_START;
	for (;;) {
		s = scan(&r);
		if (s == OK)
			break;
		if (s == ERR) {
			rc = err ? err->code : PT_EPARSE;
			if (rc == PT_OK)
				rc = PT_EPARSE;
			break;
		}
		if (r.eof) {
			/* Input ended inside a value: a cut-off file. */
			uint64_t at = r.base_off + r.len;
			if (r.events_done && st->n > 0) {
				st->truncated = 1;
				warn_main(st, "trace ends early at byte %llu, after all events%s",
					  (unsigned long long)at,
					  pt_input_cut(in) ? " (gzip stream incomplete)" : "");
				rc = PT_OK;
			} else if (r.events_seen && st->n > 0) {
				st->truncated = 1;
				warn_main(st, "trace ends early at byte %llu (cut off mid-write?); "
					  "read the %zu events before the cut%s",
					  (unsigned long long)at, st->n,
					  pt_input_cut(in) ? " (gzip stream incomplete)" : "");
				rc = PT_OK;
			} else {
				rc = pt_error_set(err, PT_EPARSE, (int64_t)at, "unexpected end of %s",
						  pt_input_cut(in) ? "gzip stream (file cut off?)"
								   : "file (cut off?)");
			}
			goto done;
		}
		if (refill(&r, r.pos)) {
			rc = err ? err->code : PT_EIO;
			break;
		}
	}
	/* A JSON error in gzip input may be a damaged gzip stream: the
	 * inflater only finds out later (a bad block, or the CRC at the end),
	 * after handing over garbage.  Say what is really wrong. */
	if (rc == PT_EPARSE && err && pt_input_is_gzip(in) && strncmp(err->msg, "corrupt gzip", 12)) {
		pt_error g;

		pt_error_clear(&g);
		if (pt_input_drain(in, &g) == PT_EPARSE) {
			char m[PT_ERROR_MSG_MAX];

			/* err->offset stays where the JSON broke: the events
			 * before it are kept, as for any damage. */
			snprintf(m, sizeof(m), "%.400s, found at byte %lld of the uncompressed stream; "
				 "the JSON broke first", g.msg, (long long)g.offset);
			snprintf(err->msg, sizeof(err->msg), "%s", m);
		}
	}
	if (rc != PT_OK && rc != PT_ENOMEM && rc != PT_EIO && r.events_seen && st->n > 0) {
		/* Malformed data after good events: keep what came before. */
		char m[PT_ERROR_MSG_MAX + 64];
		snprintf(m, sizeof(m), "%s at byte %lld; kept the %zu events before it",
			 err ? err->msg : "malformed data", err ? (long long)err->offset : -1LL, st->n);
		st->truncated = 1;
		warn_main(st, "%s", m);
		if (err) {
			/* Not an error any more; the subject (path) stays. */
			err->code = PT_OK;
			err->offset = -1;
			err->msg[0] = 0;
		}
		rc = PT_OK;
	}
	if (rc == PT_OK && !r.events_seen)
		rc = pt_error_set(err, PT_EFORMAT, -1, "not a trace: no traceEvents array");
	else if (rc == PT_OK && st->n == 0)
		rc = pt_error_set(err, PT_EFORMAT, -1,
				  "no complete events (ph X) of a known category in the trace");
done:
	st->bytes_read = r.base_off + r.pos;
	if (rc == PT_OK && finish(&r))
		rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
out:
	x_free(r.buf);
	x_free(r.tmp);
	x_free(r.tmp2);
	x_free(r.norm);
	pt_commkind_cache_free(&r.ck);
	x_free(r.tnames);
	return rc;
}

int pt_kineto_read_file(const char *path, pt_store *st, pt_error *err)
{
	pt_input *in;
	int rc;

	pt_error_subject(err, path);
	in = pt_input_open_file(path, err);
	if (!in)
		return err ? err->code : PT_EIO;
	rc = read_input(in, CHUNK_DEFAULT, st, err);
	pt_input_close(in);
	return rc;
}

int pt_kineto_read_mem_chunked(const void *buf, size_t len, size_t chunk, pt_store *st,
			       pt_error *err)
{
	pt_input *in = pt_input_open_mem(buf, len, err);
	int rc;

	if (!in)
		return PT_ENOMEM;
	/* No need for a buffer much larger than the input (the fuzzer reads
	 * millions of small inputs); gzip input just refills more often. */
	if (chunk > len + 64)
		chunk = len + 64;
	rc = read_input(in, chunk, st, err);
	pt_input_close(in);
	return rc;
}

int pt_kineto_read_mem(const void *buf, size_t len, pt_store *st, pt_error *err)
{
	return pt_kineto_read_mem_chunked(buf, len, CHUNK_DEFAULT, st, err);
}
