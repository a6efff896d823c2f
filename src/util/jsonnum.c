/*
 * jsonnum.c - the JSON number reader (see jsonnum.h): grammar, then an
 * exact conversion that seldom needs strtod.
 *
 * Why not strtod alone: most numbers of a summary have 16-17 significant
 * digits, which glibc converts slowly, and the exact fast path here leaves
 * strtod almost nothing (docs/bench.md, "Code shaped for speed";
 * docs/summary.md "Measured"); 1e-320 (a subnormal) and 20-digit values
 * still go there.
 */
#include "jsonnum.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* 5^q for q in [P5_MIN, P5_MAX] as t * 2^e with t in [2^127, 2^128); the
 * table holds T = floor(t) (hi:lo) and e.  The range covers every decimal
 * exponent whose value with up to 19 digits can be a finite normal double;
 * the rest goes to strtod.  Built once (pthread_once). */
#define P5_MIN (-342)
#define P5_MAX 308

typedef struct pow5 {
	uint64_t hi, lo;
	int32_t e;
} pow5;

static pow5 p5_tab[P5_MAX - P5_MIN + 1];
static pthread_once_t p5_once = PTHREAD_ONCE_INIT;

/* Little big numbers for building the table once (exact integer
 * arithmetic, 40 x 32 bits: 5^308 has 716 bits, 2^1024 / 5^k 1025). */
#define BIG_LIMBS 40
#define BIG_N 1024 /* negative powers: floor(2^BIG_N / 5^k), 2^BIG_N >= 2^127 * 5^342 */

typedef struct big {
	uint32_t d[BIG_LIMBS];
	int n;
} big;

static int big_bits(const big *b)
{
	return b->n ? (b->n - 1) * 32 + (32 - __builtin_clz(b->d[b->n - 1])) : 0;
}

static void big_mul5(big *b)
{
	uint64_t carry = 0;
	int i;

	for (i = 0; i < b->n; i++) {
		uint64_t v = (uint64_t)b->d[i] * 5 + carry;
		b->d[i] = (uint32_t)v;
		carry = v >> 32;
	}
	if (carry)
		b->d[b->n++] = (uint32_t)carry;
}

static void big_div5(big *b)
{
	uint64_t rem = 0;
	int i;

	for (i = b->n - 1; i >= 0; i--) {
		uint64_t v = (rem << 32) | b->d[i];
		b->d[i] = (uint32_t)(v / 5);
		rem = v % 5;
	}
	while (b->n && !b->d[b->n - 1])
		b->n--;
}

/* The top 128 bits of b (shifted left when b is shorter): floor(b / 2^(L-128)). */
static void big_top128(const big *b, pow5 *out, int32_t eoff)
{
	int L = big_bits(b), j;

	out->hi = out->lo = 0;
	for (j = 0; j < 128; j++) {
		int src = L - 128 + j;
		uint64_t bit = src >= 0 ? (b->d[src / 32] >> (src % 32)) & 1 : 0;

		if (j < 64)
			out->lo |= bit << j;
		else
			out->hi |= bit << (j - 64);
	}
	out->e = L - 128 + eoff;
}

static void p5_init(void)
{
	big b;
	int q;

	/* q >= 0: 5^q exactly, truncated to 128 bits beyond q = 55. */
	memset(&b, 0, sizeof(b));
	b.d[0] = 1;
	b.n = 1;
	for (q = 0; q <= P5_MAX; q++) {
		big_top128(&b, &p5_tab[q - P5_MIN], 0);
		big_mul5(&b);
	}
	/* q < 0: A = floor(2^N / 5^k) by repeated exact division (floor of a
	 * floor is the floor of the quotient), whose top 128 bits are
	 * floor(2^(N-s) / 5^k), i.e. 5^-k = T * 2^(s-N) with T <= t < T+1. */
	memset(&b, 0, sizeof(b));
	b.d[BIG_N / 32] = 1;
	b.n = BIG_N / 32 + 1;
	for (q = -1; q >= P5_MIN; q--) {
		big_div5(&b);
		big_top128(&b, &p5_tab[q - P5_MIN], -BIG_N);
	}
}

/* Exact powers of ten representable in a double (10^22 < 2^53 * 2^22). */
static const double p10_exact[23] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/* w * 10^q (w != 0, q in the table's range) correctly rounded, as in
 * Eisel and Lemire, "Number parsing at a gigabyte per second" (2021):
 * with w normalised to 64 bits and T <= t < T+1, the true value of
 * w*t/2^64 lies in [P, P+2) where P = floor(w*T / 2^64) is computed
 * exactly from two 64x64 products.  The 54 bits under P's top bit give the
 * mantissa and the rounding bit; the bits below them decide the rounding
 * unless they are within 2 of a boundary (then the +2 uncertainty or an
 * exact tie could change the result), where we return -1 and the caller
 * uses strtod.  For an inexact value that happens with probability about
 * 2^-72; exact values with a negative exponent (1.5 as 15e-1) land there
 * too, which is why num_parse drops a fraction's trailing zeros first.
 * None of the 22.7 M numbers of the benchmark summaries goes to strtod.
 * Results that would be subnormal or overflow also return -1. */
static int eisel_lemire(uint64_t w, int q, int neg, double *out)
{
	const pow5 *t = &p5_tab[q - P5_MIN];
	int lz = __builtin_clzll(w), sh;
	unsigned __int128 P, mask, rem;
	uint64_t m54, m53, bits;
	int64_t E, be;

	w <<= lz;
	P = (unsigned __int128)w * t->hi + (((unsigned __int128)w * t->lo) >> 64);
	sh = (P >> 127) ? 74 : 73; /* leave 54 bits */
	mask = ((unsigned __int128)1 << sh) - 1;
	rem = P & mask;
	if (rem >= mask - 1)
		return -1;
	m54 = (uint64_t)(P >> sh);
	if ((m54 & 1) && rem == 0)
		return -1;
	m53 = (m54 >> 1) + (m54 & 1);
	/* value = w*t * 2^(e+q-lz) ~ m54 * 2^(sh+64+e+q-lz) */
	E = (int64_t)sh + 1 + 64 + t->e + q - lz;
	if (m53 == (uint64_t)1 << 53) {
		m53 >>= 1;
		E++;
	}
	be = E + 52 + 1023;
	if (be < 1 || be > 2046)
		return -1;
	bits = ((uint64_t)be << 52) | (m53 & (((uint64_t)1 << 52) - 1));
	if (neg)
		bits |= (uint64_t)1 << 63;
	memcpy(out, &bits, sizeof(bits));
	return 0;
}

#define NUM_OK PT_JSONNUM_OK
#define NUM_BAD PT_JSONNUM_BAD
#define NUM_BAD_FRAC PT_JSONNUM_BAD_FRAC
#define NUM_BAD_EXP PT_JSONNUM_BAD_EXP
#define NUM_RANGE PT_JSONNUM_RANGE

static inline int is_digit(unsigned char c)
{
	return (unsigned)(c - '0') <= 9;
}

/* x (8 bytes, little-endian) all ASCII digits?  Then *v = their value. */
static inline int digits8(uint64_t x, uint64_t *v)
{
	const uint64_t hi = 0xf0f0f0f0f0f0f0f0ull;

	/* every byte 0x30..0x39: high nibble 3, and adding 6 keeps it 3 */
	if ((x & hi) != 0x3030303030303030ull ||
	    ((x + 0x0606060606060606ull) & hi) != 0x3030303030303030ull)
		return 0;
	x -= 0x3030303030303030ull;
	/* pairs, then quads, then the 8 digits (first digit most significant) */
	x = (x * 10 + (x >> 8)) & 0x00ff00ff00ff00ffull;
	x = (x * 100 + (x >> 16)) & 0x0000ffff0000ffffull;
	x = (x * 10000 + (x >> 32)) & 0x00000000ffffffffull;
	*v = x;
	return 1;
}

/* Significant digits the slow path keeps.  Every midpoint between two
 * adjacent doubles (and the overflow threshold) has at most 767
 * significant digits, so a value with more lies strictly between two
 * 800-digit truncations with no midpoint between them: the truncation
 * with a '1' appended (when a dropped digit was not 0) rounds the same. */
#define SLOW_DIGITS 800

/* The grammar-checked number s[0..n) rewritten as "[-]<digits>e<exp>"
 * (at most SLOW_DIGITS + 1 digits, no decimal point, so no locale) in a
 * buffer on the stack, then strtod: correctly rounded, no allocation. */
static pt_jsonnum_status slow_path(const unsigned char *s, size_t n, double *out)
{
	char buf[SLOW_DIGITS + 32], *o = buf, *ep, rev[24];
	size_t i = 0;
	int nd = 0, sticky = 0, eneg = 0, k = 0;
	int64_t e10 = 0, ex = 0;
	double v;

	if (i < n && s[i] == '-')
		*o++ = (char)s[i++];
	for (; i < n && is_digit(s[i]); i++) {
		if (!nd && s[i] == '0')
			continue;
		if (nd < SLOW_DIGITS) {
			*o++ = (char)s[i];
			nd++;
		} else {
			e10++;
			sticky |= s[i] != '0';
		}
	}
	if (i < n && s[i] == '.') {
		for (i++; i < n && is_digit(s[i]); i++) {
			if (nd >= SLOW_DIGITS) {
				sticky |= s[i] != '0';
				continue;
			}
			e10--;
			if (!nd && s[i] == '0')
				continue;
			*o++ = (char)s[i];
			nd++;
		}
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			eneg = s[i++] == '-';
		for (; i < n && is_digit(s[i]); i++)
			if (ex < (int64_t)1 << 56)
				ex = ex * 10 + (s[i] - '0');
	}
	if (!nd) {
		*out = buf[0] == '-' ? -0.0 : 0.0;
		return NUM_OK;
	}
	if (sticky) {
		*o++ = '1';
		e10--;
	}
	e10 += eneg ? -ex : ex;
	/* 10^(+-10^6) is far beyond the range either way, 801 digits or not. */
	if (e10 > 1000000)
		e10 = 1000000;
	if (e10 < -1000000)
		e10 = -1000000;
	*o++ = 'e';
	if (e10 < 0) {
		*o++ = '-';
		e10 = -e10;
	}
	do
		rev[k++] = (char)('0' + e10 % 10);
	while ((e10 /= 10) && k < (int)sizeof(rev));
	while (k)
		*o++ = rev[--k];
	*o = 0;
	errno = 0;
	v = strtod(buf, &ep);
	if (ep != o)
		return NUM_BAD;
	if (errno == ERANGE && isinf(v))
		return NUM_RANGE;
	*out = v;
	return NUM_OK;
}

/* The JSON number grammar, then the conversion.  *end: bytes
 * consumed, or the offset of the error.  p5_tab must be initialised. */
static pt_jsonnum_status num_parse(const unsigned char *s, size_t len, double *out, size_t *end)
{
	size_t i = 0;
	int neg = 0, nd = 0, inexact = 0;
	uint64_t w = 0;
	int64_t e10 = 0;
	pt_jsonnum_status rc;

	if (i < len && s[i] == '-') {
		neg = 1;
		i++;
	}
	if (i >= len || !is_digit(s[i])) {
		*end = i;
		return NUM_BAD;
	}
	if (s[i] == '0') {
		i++;
	} else {
		for (; i < len && is_digit(s[i]); i++) {
			if (nd < 19) {
				w = w * 10 + (s[i] - '0');
				nd++;
			} else {
				e10++;
				inexact |= s[i] != '0';
			}
		}
	}
	if (i < len && s[i] == '.') {
		i++;
		if (i >= len || !is_digit(s[i])) {
			*end = i;
			return NUM_BAD_FRAC;
		}
		if (!w) /* 0.000123: leading zeros only move the point */
			for (; i < len && s[i] == '0'; i++)
				e10--;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		/* Eight digits per step: the writer's ratios have 16-17
		 * significant digits, and the byte loop alone slowed the whole
		 * parse (docs/bench.md, "Code shaped for speed"). */
		while (nd + 8 <= 19 && len - i >= 8) {
			uint64_t x, v;

			memcpy(&x, s + i, 8);
			if (!digits8(x, &v))
				break;
			w = w * 100000000 + v;
			nd += w ? 8 : 0;
			e10 -= 8;
			i += 8;
		}
#endif
		for (; i < len && is_digit(s[i]); i++) {
			if (nd < 19) {
				w = w * 10 + (s[i] - '0');
				e10--;
				nd += w != 0; /* leading zeros are not significant */
			} else {
				inexact |= s[i] != '0';
			}
		}
	}
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		int eneg = 0;
		int64_t ex = 0;

		i++;
		if (i < len && (s[i] == '+' || s[i] == '-'))
			eneg = s[i++] == '-';
		if (i >= len || !is_digit(s[i])) {
			*end = i;
			return NUM_BAD_EXP;
		}
		for (; i < len && is_digit(s[i]); i++)
			if (ex < 100000000)
				ex = ex * 10 + (s[i] - '0');
		e10 += eneg ? -ex : ex;
	}
	*end = i;
	if (!w) {
		*out = neg ? -0.0 : 0.0;
		return NUM_OK;
	}
	if (!inexact) {
		/* 1694128201426674.0 (the window start, in absolute µs): an
		 * exact value that Eisel-Lemire below cannot tell from a tie;
		 * without the fraction's zeros it is a Clinger case. */
		if (e10 < 0 && w > (uint64_t)1 << 53)
			while (e10 < 0 && w % 10 == 0) {
				w /= 10;
				e10++;
			}
#if FLT_EVAL_METHOD == 0
		/* Clinger: w and 10^|q| are exact doubles, so one IEEE operation
		 * rounds the exact value once.  Integers and short decimals. */
		if (w <= (uint64_t)1 << 53 && e10 >= -22 && e10 <= 22) {
			double d = (double)w;

			d = e10 >= 0 ? d * p10_exact[e10] : d / p10_exact[-e10];
			*out = neg ? -d : d;
			return NUM_OK;
		}
#endif
		if (e10 >= P5_MIN && e10 <= P5_MAX && !eisel_lemire(w, (int)e10, neg, out))
			return NUM_OK;
	}
	/* More than 19 digits, extreme exponents, subnormals, overflow. */
	rc = slow_path(s, i, out);
	if (rc != NUM_OK)
		*end = 0;
	return rc;
}

pt_jsonnum_status pt_jsonnum_parse(const char *s, size_t len, double *out, size_t *end)
{
	size_t e = 0;
	pt_jsonnum_status rc;

	pthread_once(&p5_once, p5_init);
	rc = num_parse((const unsigned char *)s, len, out, &e);
	if (end)
		*end = e;
	return rc;
}

const char *pt_jsonnum_message(pt_jsonnum_status st)
{
	switch (st) {
	case PT_JSONNUM_OK: return "";
	case PT_JSONNUM_BAD_FRAC: return "invalid number: digit expected after '.'";
	case PT_JSONNUM_BAD_EXP: return "invalid number: digit expected in exponent";
	case PT_JSONNUM_RANGE: return "number out of range";
	default: return "invalid number";
	}
}
