/*
 * summary_parse.c - the master's summary reader: one pass over the bytes of
 * a summary JSON (docs/summary.md) straight into a pt_summary, no DOM in
 * between, and the shared key set of summary_parse.h.
 *
 * Flow: SUMMARY.json (from `summarize` on every node) --summary_io.c reads
 * the file--> pt_summary_parse --> pt_summary --> src/diagnose.
 *
 * The tokens come from util/jsontok.c (the DOM's tokenizer too, so both
 * accept and reject the same bytes with the same messages): strings scanned
 * 8 bytes at a time and copied once, exact numbers (util/jsonnum.c),
 * expected member names matched by one memcmp, unknown members validated
 * and skipped without building anything: several times the speed of a DOM
 * with strtod (docs/bench.md, "Code shaped for speed"; docs/summary.md
 * "Measured").
 */
#include "summary_parse.h"
#include "summary_format.h"
#include "../model/strtab.h"
#include "breakdown.h"
#include "../model/commkind.h"
#include "collectives.h"
#include "p2p.h"
#include "critpath.h"
#include "spans.h"
#include "../model/samples.h"
#include "../util/json.h"
#include "../util/jsontok.h"
#include "../util/utf8.h"
#include "../util/xalloc.h"
#include "../report/keys.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* A member or value name and its length. */
typedef pt_jtok_name member;

#define M(s) PT_JTOK_NAME(s)

/* Class and kind names (src/model/store.c), with lengths, set up once. */
static member class_names[PT_C_COUNT], kind_names[PT_K_COUNT];

/* ---- set-up ---------------------------------------------------------------- */

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void masks_init(void);

static void parser_init(void)
{
	int i;

	masks_init();
	for (i = 0; i < PT_C_COUNT; i++) {
		class_names[i].name = pt_class_name(i);
		class_names[i].len = strlen(class_names[i].name);
	}
	for (i = 0; i < PT_K_COUNT; i++) {
		kind_names[i].name = pt_kind_name(i);
		kind_names[i].len = strlen(kind_names[i].name);
	}
}

static inline int is_digit(unsigned char c)
{
	return (unsigned)(c - '0') <= 9;
}

/* ---- the shared key set (model/strtab.c) --------------------------------------- */

pt_summary_keys *pt_summary_keys_new(void)
{
	return pt_strset_new();
}

void pt_summary_keys_free(pt_summary_keys *ks)
{
	pt_strset_free(ks);
}

size_t pt_summary_keys_count(const pt_summary_keys *ks)
{
	return pt_strset_count(ks);
}

void pt_summary_free_shared(pt_summary *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->npatterns; i++)
		pt_summary_pat(s, i)->key = NULL; /* the set's */
	pt_summary_free(s);
}

/* ---- the parser ------------------------------------------------------------ */

typedef enum { CTX_TOP, CTX_WINDOW, CTX_CLASS_MS, CTX_STEP, CTX_PATTERN } ctx_kind;
typedef enum { VER_NONE, VER_OK, VER_NOTNUM, VER_UNSUP } ver_state;

typedef struct sp {
	pt_jtok t;          /* the cursor over the input (util/jsontok.h) */
	pt_summary *sm;
	pt_summary_keys *ks;
	int slim;           /* a digest's patterns end at PT_PATTERN_HOT */
	size_t patcap, stepcap, stepmscap;
	/* Where we are, for messages ("pattern 3: "). */
	ctx_kind ctx;
	size_t idx;
	/* "format" and "version" may come anywhere in the object: until both
	 * are known good, a member of the wrong type is remembered (the first
	 * one) rather than reported, so that another file given by mistake is
	 * "not a perftracker summary" and a newer one "unsupported version". */
	int fmt_ok, confirmed;
	ver_state ver;
	double version;
	size_t ver_off;
	int has_pending;
	int64_t pend_off;
	char pend_msg[PT_ERROR_MSG_MAX];
} sp;

/* The tokenizer's error reporting (the first error counts). */
#define fail(p, ...) pt_jtok_fail(&(p)->t, __VA_ARGS__)
#define fail_char(p, off, what) pt_jtok_fail_char(&(p)->t, off, what)

static int oom(sp *p)
{
	return fail(p, PT_ENOMEM, p->t.pos, "out of memory");
}

static void where(const sp *p, char *buf, size_t cap)
{
	switch (p->ctx) {
	case CTX_WINDOW: snprintf(buf, cap, "window: "); break;
	case CTX_CLASS_MS: snprintf(buf, cap, "class_ms: "); break;
	case CTX_STEP: snprintf(buf, cap, "step %zu: ", p->idx); break;
	case CTX_PATTERN: snprintf(buf, cap, "pattern %zu: ", p->idx); break;
	default: buf[0] = 0; break;
	}
}

static int fail_pending(sp *p)
{
	return fail(p, PT_EFORMAT, (size_t)p->pend_off, "%s", p->pend_msg);
}

/* A summary-level problem at off ("invalid summary: <where><msg>"): fatal
 * once format and version are known good, else remembered.  Returns -1
 * when parsing must stop. */
static int semerr(sp *p, size_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int semerr(sp *p, size_t off, const char *fmt, ...)
{
	char w[48], m[PT_ERROR_MSG_MAX - 64];
	va_list ap;

	if (!p->has_pending) {
		va_start(ap, fmt);
		vsnprintf(m, sizeof(m), fmt, ap);
		va_end(ap);
		where(p, w, sizeof(w));
		snprintf(p->pend_msg, sizeof(p->pend_msg), "invalid summary: %s%s", w, m);
		p->pend_off = (int64_t)off;
		p->has_pending = 1;
	}
	return p->confirmed ? fail_pending(p) : 0;
}

/* The tokenizer at the cursor (util/jsontok.h). */
#define skip_ws(p) pt_jtok_skip_ws(&(p)->t)
#define at_value(p) pt_jtok_at_value(&(p)->t)
#define scan_string(p, out, n) pt_jtok_string(&(p)->t, out, n)
#define match_lit(p, lit, n) pt_jtok_literal(&(p)->t, lit, n)
#define parse_number(p, out) pt_jtok_number(&(p)->t, out)
#define skip_value(p, depth) pt_jtok_skip_value(&(p)->t, depth)

/* Objects whose members come from a table. */
typedef pt_jtok_obj objit;
#define MEMBER_END PT_JTOK_END
#define obj_begin(p, it) pt_jtok_obj_begin(&(p)->t, it)
#define obj_next(p, it, tab, n) pt_jtok_obj_next(&(p)->t, it, tab, n)
#define obj_next_row(p, it, tb) \
	pt_jtok_obj_next_row(&(p)->t, it, &(tb)->m[0].name, (tb)->n, sizeof((tb)->m[0]))

/* ---- typed values ------------------------------------------------------------ */

/* Each reader takes the value at p->t.pos (whitespace skipped).  A value of
 * another type is validated, skipped and reported through semerr. */

static int rd_num(sp *p, int depth, const char *key, double *out)
{
	unsigned char c = p->t.s[p->t.pos];
	size_t off = p->t.pos;

	if (c == '-' || is_digit(c))
		return parse_number(p, out);
	if (c == 'n') { /* the writer's spelling of NaN/inf */
		if (match_lit(p, "null", 4))
			return -1;
		*out = NAN;
		return 0;
	}
	if (skip_value(p, depth))
		return -1;
	return semerr(p, off, "'%s' is not a number", key);
}


/* A number in [lo, hi] (null, the writer's NaN, passes: "unknown").  Out
 * of range is an error naming the member and the value. */
static int rd_num_in(sp *p, int depth, const char *key, double lo, double hi, double *out)
{
	size_t off = p->t.pos;

	if (rd_num(p, depth, key, out))
		return -1;
	/* A number the input ends in may be cut short ("1.5e-05" -> "1.5"):
	 * the end of input is the error then, reported next. */
	if (isnan(*out) || (*out >= lo && *out <= hi) || p->t.pos >= p->t.len)
		return 0;
	return semerr(p, off, "'%s' is %g, out of range [%g, %g]", key, *out, lo, hi);
}

/* An integer >= lo.  A plain integer token is taken exactly (int64: a
 * legacy trace's pid, 5468608689857868806, is beyond a double's 2^53, and
 * the writer prints int64s); other number forms (3.0, 1e3) count when the
 * double is an integer up to 2^53 (what pt_json_num gives, exactly). */
static int rd_int(sp *p, int depth, const char *key, double lo, int64_t *out)
{
	const unsigned char *s = p->t.s;
	size_t off = p->t.pos, i = off;
	int neg = s[i] == '-';
	double v;

	i += neg;
	if (i < p->t.len && is_digit(s[i])) {
		uint64_t u = 0;
		int over = 0;

		if (s[i] == '0') {
			i++;
		} else {
			for (; i < p->t.len && is_digit(s[i]); i++) {
				unsigned d = s[i] - '0';

				if (u > (UINT64_MAX - d) / 10)
					over = 1;
				else
					u = u * 10 + d;
			}
		}
		if (i >= p->t.len || (s[i] != '.' && s[i] != 'e' && s[i] != 'E' && !is_digit(s[i]))) {
			p->t.pos = i;
			if (!over && u <= (uint64_t)INT64_MAX + neg) {
				int64_t x = !neg ? (int64_t)u
					  : u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u;

				if (x >= (int64_t)lo) {
					*out = x;
					return 0;
				}
			}
			goto bad;
		}
		/* a fraction or an exponent: the general path below */
	}
	if (s[off] == '-' || is_digit(s[off])) {
		p->t.pos = off;
		if (parse_number(p, &v))
			return -1;
		if (v == floor(v) && v >= lo && v <= 9007199254740992.0) {
			*out = (int64_t)v;
			return 0;
		}
	} else if (skip_value(p, depth)) {
		return -1;
	}
bad:
	return semerr(p, off, "'%s' %s", key,
		      lo < 0 ? "is not an integer >= -1" : "is not a non-negative integer");
}

static int rd_bool(sp *p, int depth, const char *key, int *out)
{
	unsigned char c = p->t.s[p->t.pos];
	size_t off = p->t.pos;

	if (c == 't' || c == 'f') {
		if (match_lit(p, c == 't' ? "true" : "false", c == 't' ? 4 : 5))
			return -1;
		*out = c == 't';
		return 0;
	}
	if (skip_value(p, depth))
		return -1;
	return semerr(p, off, "'%s' is not true or false", key);
}

/* A string (decoded, not copied) or, when nullable, null (*out = NULL).
 * Returns 1 when the value had another type (already reported). */
static int rd_span(sp *p, int depth, const char *key, int nullable, const char **out,
		   size_t *n)
{
	unsigned char c = p->t.s[p->t.pos];
	size_t off = p->t.pos;

	if (c == '"')
		return scan_string(p, out, n);
	if (c == 'n' && nullable) {
		if (match_lit(p, "null", 4))
			return -1;
		*out = NULL;
		*n = 0;
		return 0;
	}
	if (skip_value(p, depth))
		return -1;
	return semerr(p, off, "'%s' is not a string", key) ? -1 : 1;
}

/* A string member, copied into *out (NULL for a nullable null). */
static int rd_str(sp *p, int depth, const char *key, int nullable, char **out)
{
	const char *v;
	size_t n;
	int rc = rd_span(p, depth, key, nullable, &v, &n);

	if (rc)
		return rc < 0 ? -1 : 0;
	if (v && !(*out = x_strndup(v, n)))
		return oom(p);
	return 0;
}

/* Index of s[0..n) among the names, -1 if none. */
static int name_index(const char *s, size_t n, const member *names, int count)
{
	int i;

	for (i = 0; i < count; i++)
		if (names[i].len == n && !memcmp(names[i].name, s, n))
			return i;
	return -1;
}

/* ---- the members (summary_format.c's tables) ---------------------------------- */

/* Bit i set: row i of the table is required (built once). */
static const pt_sf_table *const mask_tabs[] = {
	&pt_sf_top, &pt_sf_window, &pt_sf_step_tab, &pt_sf_pattern, &pt_sf_hw_link, &pt_sf_hw_gpu,
};
#define NMASK (sizeof(mask_tabs) / sizeof(mask_tabs[0]))
static uint64_t masks[NMASK];

static void masks_init(void)
{
	size_t t;
	int i;

	for (t = 0; t < NMASK; t++)
		for (i = 0; i < mask_tabs[t]->n; i++)
			if (mask_tabs[t]->m[i].required)
				masks[t] |= (uint64_t)1 << i;
}

static inline uint64_t required_mask(const pt_sf_table *tb)
{
	size_t t;

	for (t = 0; t < NMASK; t++)
		if (mask_tabs[t] == tb)
			return masks[t];
	return ~(uint64_t)0;
}

static int rd_table(sp *p, void *base, const pt_sf_table *tb);
static int rd_special(sp *p, void *base, const pt_sf_member *m);
static int rd_step_ms(sp *p, pt_pattern *pt, size_t *n);
static int rd_pattern_hw(sp *p, pt_pattern *pt);

/* The value of row m of table tb into the struct at base.  Inlined into
 * its two callers: as a call the table-driven reader cost more
 * instructions than the hand-written one it replaced, inlined fewer
 * (docs/bench.md, "One JSON core"). */
static inline __attribute__((always_inline)) int rd_row(sp *p, void *base, const pt_sf_table *tb,
						   const pt_sf_member *m)
{
	char *f = (char *)base + m->off, lb[64];
	const char *key = m->name.name, *v;
	pt_pattern *pt = base;
	int depth = tb->depth, rc, x;
	size_t n, off = p->t.pos;
	int64_t i64 = 0;

	if (tb->prefix[0]) { /* "hw group": messages name the object too */
		snprintf(lb, sizeof(lb), "%s%s", tb->prefix, key);
		key = lb;
	}
	switch (m->type) {
	case PT_SF_STR: return rd_str(p, depth, key, 0, (char **)f);
	case PT_SF_STR_NULL: return rd_str(p, depth, key, 1, (char **)f);
	case PT_SF_CHARS:
		if ((rc = rd_span(p, depth, key, 0, &v, &n)))
			return rc < 0 ? -1 : 0;
		if (n >= PT_SF_CHARS_MAX)
			return semerr(p, off, "'%s' is too long", key);
		memcpy(f, v, n);
		f[n] = 0;
		return 0;
	case PT_SF_KEY:
		if ((rc = rd_span(p, depth, key, 0, &v, &n)))
			return rc < 0 ? -1 : 0;
		if (!(*(char **)f = p->ks ? (char *)pt_strset_intern(p->ks, v, n) : x_strndup(v, n)))
			return oom(p);
		return 0;
	case PT_SF_I64: return rd_int(p, depth, key, m->lo, (int64_t *)f);
	case PT_SF_U64:
		rc = rd_int(p, depth, key, 0, &i64);
		*(uint64_t *)f = (uint64_t)i64;
		return rc;
	case PT_SF_U32:
		if ((rc = rd_int(p, depth, key, 0, &i64)))
			return rc;
		if (i64 > (int64_t)UINT32_MAX)
			return semerr(p, off, "'%s' is too large", key);
		*(uint32_t *)f = (uint32_t)i64;
		return 0;
	case PT_SF_DBL: return rd_num(p, depth, key, (double *)f);
	case PT_SF_DBL_IN: return rd_num_in(p, depth, key, m->lo, m->hi, (double *)f);
	case PT_SF_DBL_POS:
		/* Every ratio divides by it: it must be a real, positive length. */
		rc = rd_num(p, depth, key, (double *)f);
		if (!rc && !(*(double *)f > 0 && *(double *)f <= m->hi) && p->t.pos < p->t.len)
			rc = semerr(p, off, "'%s' is %g, out of range (0, %g]", key, *(double *)f, m->hi);
		return rc;
	case PT_SF_BOOL: return rd_bool(p, depth, key, (int *)f);
	case PT_SF_CLASS:
	case PT_SF_KIND:
		if ((rc = rd_span(p, depth, key, 0, &v, &n)))
			return rc < 0 ? -1 : 0;
		x = m->type == PT_SF_CLASS ? name_index(v, n, class_names, PT_C_COUNT)
					   : name_index(v, n, kind_names, PT_K_COUNT);
		if (x < 0 || (m->type == PT_SF_CLASS && x < PT_C_PYTHON)) /* idle is no pattern class */
			return semerr(p, off, "unknown %s '%.*s'", key, (int)(n < 200 ? n : 200), v);
		*(uint8_t *)f = (uint8_t)x;
		return 0;
	case PT_SF_ROLE:
		if ((rc = rd_span(p, depth, key, 0, &v, &n)))
			return rc < 0 ? -1 : 0;
		x = pt_commkind_role_parse(v, n);
		/* a role this build does not know reads as "collective" */
		*(uint8_t *)f = (uint8_t)(x < 0 ? PT_ROLE_COLLECTIVE : x);
		return 0;
	case PT_SF_STEP_MS:
		n = 0;
		rc = rd_step_ms(p, pt, &n);
		pt->nstep_ms = n;
		return rc;
	case PT_SF_HW:
		return rd_pattern_hw(p, pt);
	default:
		return rd_special(p, base, m);
	}
}

/* The object at the cursor into the struct at base, member by member as
 * the table says; then the members it requires, in their order. */
static int rd_table(sp *p, void *base, const pt_sf_table *tb)
{
	objit it;
	int id, rc = 0, r, i;

	obj_begin(p, &it);
	while (!rc && (id = obj_next_row(p, &it, tb)) != MEMBER_END) {
		if (id == -1)
			return -1;
		/* a slim digest's pattern has no room past PT_PATTERN_HOT */
		if (id >= 0 && tb == &pt_sf_pattern && tb->m[id].off >= PT_PATTERN_HOT &&
		    !pt_summary_whole(p->sm))
			id = -2;
		rc = id >= 0 ? rd_row(p, base, tb, &tb->m[id]) : skip_value(p, tb->depth);
	}
	/* (the loop below is a quarter of the reader's time when run for
	 * every pattern: only when one is missing) */
	for (r = 1; !rc && (it.seen & required_mask(tb)) != required_mask(tb); r++) {
		for (i = 0; i < tb->n && tb->m[i].required != r; i++)
			;
		if (i == tb->n)
			break;
		if (!(it.seen & ((uint64_t)1 << i)) &&
		    !((tb->m[i].flags & PT_SF_FULL_ONLY) && p->sm->digest_of))
			rc = semerr(p, it.open, "'%s%s' is missing", tb->prefix, tb->m[i].name.name);
	}
	return rc;
}

/* class_ms members in the writer's order (compute first). */
static const member class_members[PT_C_COUNT] = {
	M("compute"), M("communication"), M("memory"), M("runtime"), M("python"), M("idle"),
};

static int rd_class_ms(sp *p)
{
	pt_summary *s = p->sm;
	objit it;
	int id, c, rc = 0;

	obj_begin(p, &it);
	while (!rc && (id = obj_next(p, &it, class_members, PT_C_COUNT)) != MEMBER_END) {
		if (id == -1)
			return -1;
		if (id >= 0)
			rc = rd_num_in(p, 2, class_members[id].name, 0, PT_SF_MAX_MS,
				       &s->class_ms[PT_C_COUNT - 1 - id]);
		else
			rc = skip_value(p, 2);
	}
	/* missing ones are reported from idle (class 0) up */
	for (c = 0; !rc && c < PT_C_COUNT; c++)
		if (!(it.seen & (1u << (PT_C_COUNT - 1 - c))))
			rc = semerr(p, it.open, "'%s' is missing", pt_class_name(c));
	return rc;
}


/* step_ms (PT_KEY_STEP_MS): an array of numbers, one per step (the summary's "steps" may
 * come later, so the count is checked by the caller after the parse). */
static int rd_step_ms(sp *p, pt_pattern *pt, size_t *n)
{
	size_t open = p->t.pos, cap = 0;
	double v;
	int rc;

	if (p->t.s[p->t.pos] != '[') {
		if (skip_value(p, 3))
			return -1;
		return semerr(p, open, "'step_ms' is not an array");
	}
	if (pt->step_ms) { /* a duplicate: the first counts */
		return skip_value(p, 3);
	}
	*n = 0;
	if (!pt_jtok_open(&p->t, ']'))
		return 0;
	for (;;) {
		if (at_value(p))
			return -1;
		if (*n >= 1000000) {
			size_t off = p->t.pos;
			if (skip_value(p, 4))
				return -1;
			return semerr(p, off, "'step_ms' has over 1000000 values");
		}
		if (rd_num(p, 4, PT_KEY_STEP_MS, &v))
			return -1;
		if (X_GROW(pt->step_ms, cap, *n + 1))
			return oom(p);
		pt->step_ms[(*n)++] = v;
		if ((rc = pt_jtok_next(&p->t, open, ']')) <= 0)
			return rc;
	}
}

/* "hw": [{...}, ...] of one pattern. */
static int rd_pattern_hw(sp *p, pt_pattern *pt)
{
	size_t open = p->t.pos, cap = pt->nhw;
	int rc;

	if (p->t.s[p->t.pos] != '[') {
		if (skip_value(p, 3))
			return -1;
		return semerr(p, open, "'hw' is not an array");
	}
	if (!pt_jtok_open(&p->t, ']'))
		return 0;
	for (;;) {
		if (at_value(p))
			return -1;
		if (p->t.s[p->t.pos] != '{') {
			size_t off = p->t.pos;

			if (skip_value(p, 4) || semerr(p, off, "'hw' entry is not an object"))
				return -1;
		} else {
			if (pt->nhw >= 64) {
				/* Four link groups per kernel are written; anything
				 * near this is not our file. */
				size_t off = p->t.pos;

				if (skip_value(p, 4) || semerr(p, off, "'hw' has over 64 entries"))
					return -1;
				goto next;
			}
			if (X_GROW(pt->hw, cap, (size_t)pt->nhw + 1))
				return oom(p);
			memset(&pt->hw[pt->nhw], 0, sizeof(pt->hw[0]));
			pt->nhw++;
			if ((rc = rd_table(p, &pt->hw[pt->nhw - 1], &pt_sf_hw_link)))
				return -1;
		}
next:
		if ((rc = pt_jtok_next(&p->t, open, ']')) <= 0)
			return rc;
	}
}

static int el_pattern_row(sp *p, size_t i);

/* An array of objects ("steps", "patterns"; a digest's patterns may be
 * arrays, el_pattern_row); el reads one element into slot i after making
 * room. */
static int rd_array(sp *p, const char *name, ctx_kind ctx, int (*el)(sp *p, size_t i))
{
	size_t open = p->t.pos, i = 0;
	int rc = 0;

	if (p->t.s[p->t.pos] != '[') {
		if (skip_value(p, 1))
			return -1;
		return semerr(p, open, "'%s' is missing or not an array", name);
	}
	if (!pt_jtok_open(&p->t, ']'))
		return 0;
	for (;;) {
		if (at_value(p))
			return -1;
		p->ctx = ctx;
		p->idx = i;
		if (p->t.s[p->t.pos] == '[' && ctx == CTX_PATTERN && p->sm->digest_of) {
			if (el_pattern_row(p, i))
				return -1;
		} else if (p->t.s[p->t.pos] != '{') {
			size_t off = p->t.pos;

			if (skip_value(p, 2) || semerr(p, off, "is not an object"))
				return -1;
		} else if ((rc = el(p, i))) {
			return -1;
		}
		p->ctx = CTX_TOP;
		i++;
		if ((rc = pt_jtok_next(&p->t, open, ']')) <= 0)
			return rc;
	}
}

static int el_step(sp *p, size_t i)
{
	pt_summary *s = p->sm;
	pt_sf_step row = { 0, 0 };
	int rc;

	if (X_GROW(s->step_numbers, p->stepcap, i + 1) || X_GROW(s->step_ms, p->stepmscap, i + 1))
		return oom(p);
	/* zero the slots of skipped non-objects too (see el_pattern) */
	memset(&s->step_numbers[s->nsteps], 0, (i + 1 - s->nsteps) * sizeof(s->step_numbers[0]));
	memset(&s->step_ms[s->nsteps], 0, (i + 1 - s->nsteps) * sizeof(s->step_ms[0]));
	s->nsteps = i + 1;
	rc = rd_table(p, &row, &pt_sf_step_tab);
	s->step_numbers[i] = row.number;
	s->step_ms[i] = row.ms;
	return rc;
}

/* Pattern slot i, made room for: a digest read slim takes PT_PATTERN_HOT
 * bytes a pattern (a whole one 184: 100,000 digests of ~250 patterns held
 * 4.6 GB, issue 33), fixed when the first pattern comes ("digest_of" is
 * written before "patterns").  Elements that were not objects (skipped
 * with an error pending) left slots between npatterns and i: they are
 * zeroed too, or freeing the summary frees garbage (fuzz_summary:
 * {"patterns":[null,true,{}).  NULL out of memory. */
static pt_pattern *pattern_slot(sp *p, size_t i)
{
	pt_summary *s = p->sm;
	size_t st;

	if (!s->patterns)
		s->pat_stride = p->slim && s->digest_of ? PT_PATTERN_HOT : sizeof(pt_pattern);
	st = s->pat_stride;
	if (i >= p->patcap) {
		size_t cap = p->patcap ? p->patcap : 8;
		void *q;

		while (cap <= i)
			cap *= 2;
		if (!(q = x_reallocarray(s->patterns, cap, st)))
			return NULL;
		s->patterns = q;
		p->patcap = cap;
	}
	memset((char *)s->patterns + s->npatterns * st, 0, (i + 1 - s->npatterns) * st);
	s->npatterns = i + 1;
	return pt_summary_pat(s, i);
}

static int el_pattern(sp *p, size_t i)
{
	pt_pattern *pt = pattern_slot(p, i);

	return pt ? rd_table(p, pt, &pt_sf_pattern) : oom(p);
}

/* A digest's pattern as an array of the values of pt_sf_digest_row's
 * members, in that order (summary_format.h). */
static int el_pattern_row(sp *p, size_t i)
{
	pt_pattern *pt = pattern_slot(p, i);
	size_t open = p->t.pos, j = 0;
	int rc;

	if (!pt)
		return oom(p);
	if (pt_jtok_open(&p->t, ']')) {
		for (;;) {
			if (at_value(p))
				return -1;
			if (j < PT_SF_DIGEST_ROW_N) {
				if (rd_row(p, pt, &pt_sf_pattern_row,
					   &pt_sf_pattern.m[pt_sf_digest_row[j]]))
					return -1;
			} else if (skip_value(p, 4)) {
				return -1;
			}
			j++;
			if ((rc = pt_jtok_next(&p->t, open, ']')) < 0)
				return -1;
			if (!rc)
				break;
		}
	}
	if (j != PT_SF_DIGEST_ROW_N)
		return semerr(p, open, "%zu values, %d expected", j, PT_SF_DIGEST_ROW_N);
	return 0;
}

/* "gpu_breakdown": parsed by breakdown.c (a few hundred bytes). */
static int rd_breakdown(sp *p)
{
	size_t off = p->t.pos;
	pt_breakdown *b;
	pt_error e;

	if (skip_value(p, 1))
		return -1;
	if (p->t.s[off] != '{')
		return semerr(p, off, "'gpu_breakdown' is not an object");
	if (p->sm->breakdown)
		return 0;
	b = x_calloc(1, sizeof(*b));
	if (!b)
		return oom(p);
	pt_error_clear(&e);
	if (pt_breakdown_parse((const char *)p->t.s + off, p->t.pos - off, b, &e)) {
		x_free(b);
		if (e.code == PT_ENOMEM)
			return oom(p);
		return semerr(p, e.offset >= 0 ? off + (size_t)e.offset : off, "%s", e.msg);
	}
	p->sm->breakdown = b;
	return 0;
}

/* "collectives" (version 2): the member's bytes go to collectives.c's
 * reader (a few numbers per instance, read once per summary). */
static int rd_collectives(sp *p)
{
	size_t off = p->t.pos;
	pt_error e;

	if (skip_value(p, 1))
		return -1;
	if (p->t.s[off] != '{')
		return semerr(p, off, "'collectives' is not an object");
	if (p->sm->coll_chans || p->sm->coll) /* a duplicate key: the first counts */
		return 0;
	pt_error_clear(&e);
	if (pt_coll_parse((const char *)p->t.s + off, p->t.pos - off, p->sm, &e)) {
		pt_coll_free(p->sm);
		if (e.code == PT_ENOMEM)
			return oom(p);
		return semerr(p, e.offset >= 0 ? off + (size_t)e.offset : off, "%s", e.msg);
	}
	return 0;
}

/* "critical_path" (version 3): the member's bytes go to critpath.c's
 * reader (a few numbers per step). */
static int rd_critpath(sp *p)
{
	size_t off = p->t.pos;
	pt_error e;

	if (skip_value(p, 1))
		return -1;
	if (p->t.s[off] != '{')
		return semerr(p, off, "'critical_path' is not an object");
	if (p->sm->cpath) /* a duplicate key: the first counts */
		return 0;
	pt_error_clear(&e);
	if (pt_cpath_parse((const char *)p->t.s + off, p->t.pos - off, p->sm, &e)) {
		if (e.code == PT_ENOMEM)
			return oom(p);
		return semerr(p, e.offset >= 0 ? off + (size_t)e.offset : off, "%s", e.msg);
	}
	return 0;
}

/* "timeline" (version 4): spans.c reads the member's bytes. */
static int rd_timeline(sp *p)
{
	size_t off = p->t.pos;
	pt_error e;

	if (skip_value(p, 1))
		return -1;
	if (p->t.s[off] != '{')
		return semerr(p, off, "'timeline' is not an object");
	if (p->sm->tl) /* a duplicate key: the first counts */
		return 0;
	pt_error_clear(&e);
	if (pt_spans_parse((const char *)p->t.s + off, p->t.pos - off, p->sm, &e)) {
		if (e.code == PT_ENOMEM)
			return oom(p);
		return semerr(p, e.offset >= 0 ? off + (size_t)e.offset : off, "%s", e.msg);
	}
	return 0;
}

/* "p2p" (version 5): p2p.c reads the member's bytes. */
static int rd_p2p(sp *p)
{
	size_t off = p->t.pos;
	pt_error e;

	if (skip_value(p, 1))
		return -1;
	if (p->t.s[off] != '[')
		return semerr(p, off, "'p2p' is not an array");
	if (p->sm->p2p) /* a duplicate key: the first counts */
		return 0;
	pt_error_clear(&e);
	if (pt_p2p_parse((const char *)p->t.s + off, p->t.pos - off, p->sm, &e)) {
		pt_p2p_free(p->sm);
		if (e.code == PT_ENOMEM)
			return oom(p);
		return semerr(p, e.offset >= 0 ? off + (size_t)e.offset : off, "%s", e.msg);
	}
	return 0;
}

/* "hw_series": a whole "perftracker-hw" object (src/model/samples.c reads
 * it; a few tens of KB, once per summary). */
static int rd_hw_series(sp *p)
{
	size_t off = p->t.pos;
	pt_samples *h;
	pt_error e;

	if (skip_value(p, 1))
		return -1;
	if (p->t.s[off] != '{')
		return semerr(p, off, "'hw_series' is not an object");
	if (p->sm->hw_series) /* a duplicate key: the first counts */
		return 0;
	h = x_calloc(1, sizeof(*h));
	if (!h)
		return oom(p);
	pt_error_clear(&e);
	if (pt_samples_parse((const char *)p->t.s + off, p->t.pos - off, h, &e)) {
		x_free(h);
		if (e.code == PT_ENOMEM)
			return oom(p);
		return semerr(p, e.offset >= 0 ? off + (size_t)e.offset : off, "'hw_series': %s",
			      e.msg);
	}
	p->sm->hw_series = h;
	return 0;
}

/* Format and version known good: report what was held back, if anything. */
static int check_confirmed(sp *p)
{
	if (!p->fmt_ok || p->ver == VER_NONE)
		return 0;
	if (p->ver == VER_NOTNUM)
		return fail(p, PT_EFORMAT, p->ver_off, "invalid summary: 'version' is not a number");
	if (p->ver == VER_UNSUP)
		return fail(p, PT_EFORMAT, p->ver_off,
			    "unsupported summary version %g (this build reads versions %d to %d)",
			    p->version, PT_SUMMARY_VERSION_MIN, PT_SUMMARY_VERSION);
	p->confirmed = 1;
	return p->has_pending ? fail_pending(p) : 0;
}

/* The top-level members with code of their own. */
static int rd_special(sp *p, void *base, const pt_sf_member *m)
{
	pt_summary *s = p->sm;
	size_t off = p->t.pos;
	const char *v;
	size_t n;
	int rc;

	(void)base;
	switch (m->type) {
	case PT_SF_FORMAT:
		rc = rd_span(p, 1, "format", 0, &v, &n);
		if (rc < 0)
			return -1;
		if (rc || n != sizeof(PT_SUMMARY_FORMAT) - 1 || memcmp(v, PT_SUMMARY_FORMAT, n))
			return fail(p, PT_EFORMAT, off, "not a perftracker summary (no \"format\": \""
				    PT_SUMMARY_FORMAT "\")");
		p->fmt_ok = 1;
		return check_confirmed(p);
	case PT_SF_VERSION:
		p->ver_off = off;
		if (p->t.s[off] == '-' || is_digit(p->t.s[off])) {
			if (parse_number(p, &p->version))
				return -1;
			p->ver = p->version >= PT_SUMMARY_VERSION_MIN &&
					 p->version <= PT_SUMMARY_VERSION &&
					 p->version == (double)(int)p->version ? VER_OK : VER_UNSUP;
			if (p->ver == VER_OK)
				p->sm->version = (int)p->version;
		} else {
			if (skip_value(p, 1))
				return -1;
			p->ver = VER_NOTNUM;
		}
		return check_confirmed(p);
	case PT_SF_WINDOW:
	case PT_SF_CLASS_MS:
		if (p->t.s[off] == '{') {
			p->ctx = m->type == PT_SF_WINDOW ? CTX_WINDOW : CTX_CLASS_MS;
			rc = m->type == PT_SF_WINDOW ? rd_table(p, s, &pt_sf_window) : rd_class_ms(p);
			p->ctx = CTX_TOP;
			return rc;
		}
		if (skip_value(p, 1))
			return -1;
		return semerr(p, off, "'%s' is missing or not an object", m->name.name);
	case PT_SF_HW_GPU:
		if (p->t.s[off] == '{')
			return rd_table(p, &s->hw_gpu, &pt_sf_hw_gpu);
		if (skip_value(p, 1))
			return -1;
		return semerr(p, off, "'hw_gpu' is not an object");
	case PT_SF_STEPS: return rd_array(p, "steps", CTX_STEP, el_step);
	case PT_SF_PATTERNS: return rd_array(p, "patterns", CTX_PATTERN, el_pattern);
	case PT_SF_HW_SERIES: return rd_hw_series(p);
	case PT_SF_BREAKDOWN: return rd_breakdown(p);
	case PT_SF_COLLECTIVES: return rd_collectives(p);
	case PT_SF_CRITPATH: return rd_critpath(p);
	case PT_SF_TIMELINE: return rd_timeline(p);
	case PT_SF_P2P: return rd_p2p(p);
	default: return skip_value(p, 1);
	}
}


static void free_parsed(sp *p)
{
	if (p->ks)
		pt_summary_free_shared(p->sm);
	else
		pt_summary_free(p->sm);
	p->sm = NULL;
}

/* A failed worker's summary holds its identity and error only, as the
 * writer writes it: drop anything else a hand-made file carried. */
static void keep_identity(sp *p)
{
	pt_summary *s = p->sm;
	size_t i;

	for (i = 0; i < s->npatterns; i++) {
		pt_pattern *pt = pt_summary_pat(s, i);

		if (!p->ks)
			x_free(pt->key);
		if (pt_summary_whole(s)) {
			x_free(pt->hw);
			x_free(pt->step_ms);
		}
	}
	if (s->breakdown) {
		pt_breakdown_free(s->breakdown);
		x_free(s->breakdown);
		s->breakdown = NULL;
	}
	s->gpu_compute_util = -1;
	pt_coll_free(s);
	pt_cpath_free(s->cpath);
	s->cpath = NULL;
	pt_spans_free(s->tl);
	s->tl = NULL;
	pt_p2p_free(s);
	x_free(s->hw_source);
	s->hw_source = NULL;
	pt_hw_gpu_init(&s->hw_gpu);
	if (s->hw_series) {
		pt_samples_free(s->hw_series);
		x_free(s->hw_series);
		s->hw_series = NULL;
	}
	x_free(s->patterns);
	x_free(s->step_numbers);
	x_free(s->step_ms);
	x_free(s->warning);
	s->patterns = NULL;
	s->npatterns = 0;
	s->step_numbers = NULL;
	s->step_ms = NULL;
	s->nsteps = 0;
	s->warning = NULL;
	s->world_size = -1;
	s->nwarnings = 0;
	s->truncated = 0;
	s->window_start_us = s->window_ms = 0;
	s->window_from_steps = 0;
	s->gpu_util = 0;
	memset(s->class_ms, 0, sizeof(s->class_ms));
	s->nevents = 0;
}

/* Give back the slack of the doubling arrays: the master keeps 10,000 of
 * these (shrinking in place, so no copy). */
static void shrink(pt_summary *s)
{
	void *q;

	if (s->npatterns && (q = x_reallocarray(s->patterns, s->npatterns,
					       s->pat_stride ? s->pat_stride : sizeof(pt_pattern))))
		s->patterns = q;
	if (s->nsteps && (q = x_reallocarray(s->step_numbers, s->nsteps, sizeof(int64_t))))
		s->step_numbers = q;
	if (s->nsteps && (q = x_reallocarray(s->step_ms, s->nsteps, sizeof(double))))
		s->step_ms = q;
}

static int parse_root(sp *p)
{
	pt_summary *s = p->sm;
	const pt_sf_table *tb = &pt_sf_top;
	objit it;
	int id, r, i;

	skip_ws(p);
	if (p->t.pos >= p->t.len)
		return fail(p, PT_EPARSE, p->t.pos,
			    p->t.len ? "no json value (only whitespace)" : "empty input");
	if (p->t.s[p->t.pos] != '{') {
		size_t off = p->t.pos;

		if (skip_value(p, 0))
			return -1;
		skip_ws(p);
		if (p->t.pos < p->t.len)
			return fail(p, PT_EPARSE, p->t.pos, "trailing characters after the json value");
		return fail(p, PT_EFORMAT, off, "not a perftracker summary (not a json object)");
	}
	obj_begin(p, &it);
	while ((id = obj_next_row(p, &it, tb)) != MEMBER_END) {
		if (id == -1)
			return -1;
		if (id >= 0 ? rd_row(p, s, tb, &tb->m[id]) : skip_value(p, 1))
			return -1;
	}
	skip_ws(p);
	if (p->t.pos < p->t.len)
		return fail(p, PT_EPARSE, p->t.pos, "trailing characters after the json value");
	if (!p->fmt_ok)
		return fail(p, PT_EFORMAT, it.open, "not a perftracker summary (no \"format\": \""
			    PT_SUMMARY_FORMAT "\")");
	if (p->ver == VER_NONE)
		return fail(p, PT_EFORMAT, it.open, "invalid summary: 'version' is missing");
	if (check_confirmed(p))
		return -1;
	/* Required members in their order; a failed worker's summary has
	 * only the identity and "error". */
	for (r = 1;; r++) {
		const pt_sf_member *m;

		for (i = 0; i < tb->n && tb->m[i].required != r; i++)
			;
		if (i == tb->n)
			break;
		m = &tb->m[i];
		if ((s->error && !(m->flags & PT_SF_IDENTITY)) || (it.seen & ((uint64_t)1 << i)))
			continue;
		return fail(p, PT_EFORMAT, it.open, "invalid summary: '%s' %s", m->name.name,
			    m->type == PT_SF_WINDOW || m->type == PT_SF_CLASS_MS
				    ? "is missing or not an object"
			    : m->type == PT_SF_STEPS || m->type == PT_SF_PATTERNS
				    ? "is missing or not an array"
				    : "is missing");
	}
	if (s->error) {
		keep_identity(p);
	} else if (pt_coll_check(s, NULL)) {
		pt_coll_check(s, p->t.err);
		p->t.failed = 1;
		return -1;
	}
	return 0;
}

pt_summary *pt_summary_parse(const char *buf, size_t len, pt_summary_keys *ks, pt_error *err)
{
	return pt_summary_parse_opt(buf, len, ks, 0, err);
}

pt_summary *pt_summary_parse_opt(const char *buf, size_t len, pt_summary_keys *ks, int slim,
				 pt_error *err)
{
	sp p;
	pt_summary *s = NULL;

	pthread_once(&init_once, parser_init);
	memset(&p, 0, sizeof(p));
	pt_jtok_init(&p.t, buf, len, err);
	p.ks = ks;
	p.slim = slim;
	p.sm = x_calloc(1, sizeof(*p.sm));
	if (!p.sm) {
		pt_error_set(err, PT_ENOMEM, -1, "out of memory");
		return NULL;
	}
	p.sm->version = PT_SUMMARY_VERSION;
	p.sm->rank = p.sm->pid = p.sm->world_size = -1;
	p.sm->gpu_compute_util = -1;
	pt_hw_gpu_init(&p.sm->hw_gpu);
	if (parse_root(&p)) {
		free_parsed(&p);
		goto out;
	}
	s = p.sm;
	if ((!s->host && !(s->host = x_strndup("", 0))) ||
	    (!s->backend && !(s->backend = x_strndup("", 0))) ||
	    (!s->device && !(s->device = x_strndup("", 0)))) {
		pt_error_set(err, PT_ENOMEM, -1, "out of memory");
		free_parsed(&p);
		s = NULL;
		goto out;
	}
	shrink(s);
out:
	pt_jtok_release(&p.t);
	return s;
}
