/*
 * test_json.c - unit tests for the JSON DOM (src/util/json.c): values,
 * escapes and surrogate pairs, number grammar, error messages and offsets,
 * depth limit, files, and the accessors the summary/report readers use.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/json.h"
#include "util/jsontok.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

static pt_json *parse(const char *s)
{
	pt_error e;

	pt_error_clear(&e);
	return pt_json_parse(s, strlen(s), &e);
}

/* Parse s, expect failure; check the offset and that msg contains want. */
static void expect_error(const char *s, size_t len, int64_t off, const char *want)
{
	pt_error e;
	pt_json *j;

	pt_error_clear(&e);
	j = pt_json_parse(s, len, &e);
	if (j)
		fail_msg("parsed but should fail: %s", s);
	assert_int_equal(e.code, PT_EPARSE);
	if (e.offset != off)
		fail_msg("'%s': offset %lld, want %lld (%s)", s, (long long)e.offset,
			 (long long)off, e.msg);
	if (!strstr(e.msg, want))
		fail_msg("'%s': message '%s' lacks '%s'", s, e.msg, want);
}

static void test_scalars(void **state)
{
	pt_json *j;

	j = parse(" true ");
	assert_non_null(j);
	assert_int_equal(j->type, PT_JSON_TRUE);
	pt_json_free(j);
	j = parse("false");
	assert_int_equal(j->type, PT_JSON_FALSE);
	pt_json_free(j);
	j = parse("null");
	assert_int_equal(j->type, PT_JSON_NULL);
	pt_json_free(j);
	j = parse("-12.5e2");
	assert_int_equal(j->type, PT_JSON_NUM);
	assert_true(j->num == -1250.0);
	pt_json_free(j);
	j = parse("\"hi\"");
	assert_int_equal(j->type, PT_JSON_STR);
	assert_string_equal(j->str, "hi");
	assert_int_equal(j->len, 2);
	pt_json_free(j);
	pt_json_free(NULL);
}

static void test_numbers(void **state)
{
	static const struct { const char *s; double v; } ok[] = {
		{ "0", 0 }, { "-0", 0 }, { "1", 1 }, { "123456789", 123456789 },
		{ "0.5", 0.5 }, { "1e3", 1000 }, { "1E+3", 1000 }, { "25e-1", 2.5 },
		{ "1694128201545123", 1694128201545123.0 }, { "1e-400", 0 },
		{ "0.1", 0.1 },
	};
	static const struct { const char *s; int64_t off; const char *msg; } bad[] = {
		{ "01", 1, "trailing" }, { "+1", 0, "unexpected character '+'" },
		{ "1.", 2, "digit expected after '.'" }, { ".5", 0, "unexpected character '.'" },
		{ "1e", 2, "exponent" }, { "1e+", 3, "exponent" }, { "-", 1, "invalid number" },
		{ "1e999", 0, "number out of range" }, { "-1e400", 0, "number out of range" },
		{ "NaN", 0, "unexpected character 'N'" }, { "Infinity", 0, "unexpected" },
		{ "0x10", 1, "trailing" },
	};
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		pt_json *j = parse(ok[i].s);
		if (!j || j->type != PT_JSON_NUM || j->num != ok[i].v)
			fail_msg("number '%s'", ok[i].s);
		pt_json_free(j);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_error(bad[i].s, strlen(bad[i].s), bad[i].off, bad[i].msg);
}

static void test_long_number(void **state)
{
	/* Longer than the parser's stack copy: takes the heap path. */
	char s[200];
	pt_json *j;

	memset(s, '1', 150);
	strcpy(s + 150, ".25");
	j = parse(s);
	assert_non_null(j);
	assert_true(j->num > 1.1e149 && j->num < 1.2e149);
	pt_json_free(j);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Bits of a double (so -0.0 and 0.0 differ, and NaN never passes). */
static uint64_t bits(double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return u;
}

/* The DOM's numbers are exact (util/jsonnum.c, no strtod on the text):
 * the hard cases give the double strtod gives, bit for bit, and what
 * pt_sb_add_double writes reads back as the same double. */
static void test_numbers_exact(void **state)
{
	static const struct { const char *s; uint64_t want; } cases[] = {
		{ "0.1", 0x3fb999999999999aull },
		{ "-0", 0x8000000000000000ull },
		{ "-0.0e5", 0x8000000000000000ull },
		{ "1e-320", 0x00000000000007e8ull },                 /* subnormal */
		{ "4.9406564584124654e-324", 0x0000000000000001ull }, /* smallest subnormal */
		{ "2.4703282292062327e-324", 0x0000000000000000ull }, /* just under half of it */
		{ "2.4703282292062328e-324", 0x0000000000000001ull }, /* just over */
		{ "2.2250738585072011e-308", 0x000fffffffffffffull }, /* largest subnormal */
		{ "2.2250738585072014e-308", 0x0010000000000000ull }, /* smallest normal */
		{ "1.7976931348623157e308", 0x7fefffffffffffffull },  /* largest */
		{ "0.30000000000000004", 0x3fd3333333333334ull },      /* 17 digits */
		{ "0.45458318920788654", 0x3fdd17e416bd6466ull },
		{ "9007199254740993", 0x4340000000000000ull },         /* tie, to even */
		{ "9007199254740995", 0x4340000000000002ull },
		{ "1694128201426674.0", 0x43181333d6999bc8ull },       /* a window start */
		{ "1e23", 0x44b52d02c7e14af6ull },
		{ "1e-999999999999999999999", 0x0000000000000000ull }, /* huge exponents */
		{ "0e999999999999999999999", 0x0000000000000000ull },
		{ "123456789012345678901234567890", 0x45f8ee90ff6c373eull },
	};
	static const char *roundtrip[] = {
		"0.1", "1e-320", "5e-324", "0.30000000000000004", "1.7976931348623157e308",
		"123.456", "-2.5e-7", "6.02214076e23", "1694128201426674.5", "0.001",
	};
	char buf[1200], doc[64];
	pt_sb sb = { 0 };
	pt_json *j, *k;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		j = parse(cases[i].s);
		if (!j || j->type != PT_JSON_NUM || bits(j->num) != cases[i].want ||
		    bits(j->num) != bits(strtod(cases[i].s, NULL)))
			fail_msg("'%s': %016llx, want %016llx", cases[i].s,
				 j ? (unsigned long long)bits(j->num) : 0ull,
				 (unsigned long long)cases[i].want);
		pt_json_free(j);
	}
	/* 1,000 significant digits (the slow path keeps 800 and a sticky
	 * digit): 0.1 followed by digits that decide the rounding only far
	 * beyond the 17th. */
	memcpy(buf, "0.", 2);
	for (i = 2; i < 1002; i++)
		buf[i] = "1000000000000000055511151231257827021181583404541015625"[(i - 2) % 55];
	buf[1002] = 0;
	j = parse(buf);
	assert_non_null(j);
	assert_true(bits(j->num) == bits(strtod(buf, NULL)));
	pt_json_free(j);
	/* A midpoint exactly, then one 1 far past the 800th digit: the
	 * sticky digit must turn the tie to even into rounding up. */
	memset(buf, '0', sizeof(buf));
	memcpy(buf, "9007199254740993.", 17);
	buf[1100] = '1';
	buf[1101] = 0;
	j = parse(buf);
	assert_non_null(j);
	assert_true(j->num == 9007199254740994.0);
	assert_true(bits(j->num) == bits(strtod(buf, NULL)));
	pt_json_free(j);
	/* Random long digit strings near the double grid (the slow path's
	 * rewrite): strtod's double, bit for bit. */
	for (i = 0; i < 3000; i++) {
		size_t nd = 20 + (size_t)(next_rand() % 1000), d, o = 0;
		double want;

		if (next_rand() % 2)
			buf[o++] = '-';
		for (d = 0; d < nd; d++) {
			buf[o++] = (char)('0' + (d ? next_rand() % 10 : 1 + next_rand() % 9));
			if (d == (size_t)(next_rand() % nd) && !memchr(buf, '.', o))
				buf[o++] = '.';
		}
		if (buf[o - 1] == '.')
			buf[o++] = '5';
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "e%d", (int)(next_rand() % 700) - 350 - (int)nd / 2);
		j = parse(buf);
		want = strtod(buf, NULL);
		if (isinf(want) ? j != NULL : !j || bits(j->num) != bits(want))
			fail_msg("%zu digits: %.17g, strtod %.17g", nd, j ? j->num : 0.0, want);
		pt_json_free(j);
	}
	/* Written back (pt_sb_add_double) and read again: the same double. */
	for (i = 0; i < sizeof(roundtrip) / sizeof(roundtrip[0]); i++) {
		j = parse(roundtrip[i]);
		assert_non_null(j);
		pt_sb_reset(&sb);
		pt_sb_add_double(&sb, j->num);
		k = parse(sb.buf);
		if (!k || bits(k->num) != bits(j->num))
			fail_msg("'%s' written as '%s' reads back differently", roundtrip[i], sb.buf);
		pt_json_free(k);
		pt_json_free(j);
	}
	pt_sb_free(&sb);
	/* Errors inside a document name the byte. */
	expect_error("{\"a\":[1,2,1.e5]}", 16, 12, "digit expected after '.'");
	expect_error("{\"a\":[1,-x]}", 12, 9, "invalid number");
	expect_error("[0,1e+]", 7, 6, "digit expected in exponent");
	expect_error("[0,\n 1.5e400]", 13, 5, "number out of range");
	snprintf(doc, sizeof(doc), "[%s]", "-1e309");
	expect_error(doc, strlen(doc), 1, "number out of range");
}

/* The tokenizer under the DOM and the summary reader (util/jsontok.h):
 * table-named members in any order, a repeated name and unknown ones as
 * PT_JTOK_UNKNOWN, skipping of nested values, and the fixed-buffer mode
 * that never allocates. */
static void test_tokenizer(void **state)
{
	static const pt_jtok_name names[] = { PT_JTOK_NAME("a"), PT_JTOK_NAME("bb"),
					      PT_JTOK_NAME("c") };
	const char *doc = "{ \"bb\" : \"x\\ty\", \"zz\": [1, {\"a\": null}], \"a\":-2.5e1,"
			  "\"bb\":3 ,\"c\":true }";
	int want[] = { 1, PT_JTOK_UNKNOWN, 0, PT_JTOK_UNKNOWN, 2, PT_JTOK_END }, k, i = 0;
	char small[32];
	const char *v;
	size_t n;
	double d;
	pt_error e;
	pt_jtok t;
	pt_jtok_obj o;

	pt_error_clear(&e);
	pt_jtok_init(&t, doc, strlen(doc), &e);
	pt_jtok_obj_begin(&t, &o);
	while ((k = pt_jtok_obj_next(&t, &o, names, 3)) != PT_JTOK_END) {
		assert_true(k != -1);
		assert_int_equal(k, want[i]);
		i++;
		if (k == 1) {
			assert_int_equal(pt_jtok_string(&t, &v, &n), 0);
			assert_int_equal(n, 3);
			assert_memory_equal(v, "x\ty", 3);
		} else if (k == 0) {
			assert_int_equal(pt_jtok_number(&t, &d), 0);
			assert_true(d == -25);
		} else {
			assert_int_equal(pt_jtok_skip_value(&t, 1), 0);
		}
	}
	assert_int_equal(want[i], PT_JTOK_END);
	assert_int_equal(t.pos, strlen(doc));
	assert_int_equal(o.seen, 7);
	pt_jtok_release(&t);

	/* fixed buffer: an escaped string that fits decodes into it... */
	pt_jtok_init_fixed(&t, "\"a\\nb\"", 7, small, sizeof(small));
	assert_int_equal(pt_jtok_string(&t, &v, &n), 0);
	assert_ptr_equal(v, small);
	assert_int_equal(n, 3);
	/* ...one that might not fit is refused, and the buffer is not grown */
	pt_jtok_init_fixed(&t, "\"\\n0123456789\"", 14, small, 16);
	assert_int_equal(pt_jtok_string(&t, &v, &n), -1);
	assert_ptr_equal(t.tmp, small);
	assert_int_equal(t.tmpcap, 16);
	/* errors carry the offset, and only the first one counts */
	pt_error_clear(&e);
	pt_jtok_init(&t, "[1,,2]", 6, &e);
	t.pos = 1;
	assert_int_equal(pt_jtok_number(&t, &d), 0);
	t.pos++;
	assert_int_equal(pt_jtok_skip_value(&t, 1), -1);
	assert_int_equal(e.offset, 3);
	assert_non_null(strstr(e.msg, "unexpected character ','"));
	pt_jtok_fail(&t, PT_EPARSE, 5, "later");
	assert_int_equal(e.offset, 3);
	pt_jtok_release(&t);
}

static void test_escapes(void **state)
{
	pt_json *j;

	j = parse("\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"");
	assert_non_null(j);
	assert_string_equal(j->str, "a\"b\\c/d\b\f\n\r\t");
	pt_json_free(j);
	/* BMP: é (2 bytes), € (3 bytes). */
	j = parse("\"\\u00e9\\u20AC\"");
	assert_string_equal(j->str, "\xc3\xa9\xe2\x82\xac");
	assert_int_equal(j->len, 5);
	pt_json_free(j);
	/* Surrogate pair: U+1F600. */
	j = parse("\"x\\ud83d\\ude00y\"");
	assert_string_equal(j->str, "x\xf0\x9f\x98\x80y");
	pt_json_free(j);
	/* Lone surrogates become U+FFFD. */
	j = parse("\"\\ud83dz\\ude00\"");
	assert_string_equal(j->str, "\xef\xbf\xbdz\xef\xbf\xbd");
	pt_json_free(j);
	/* \u0000 keeps its NUL: the length says so. */
	j = parse("\"a\\u0000b\"");
	assert_int_equal(j->len, 3);
	assert_memory_equal(j->str, "a\0b", 3);
	pt_json_free(j);
	/* Raw UTF-8 passes through. */
	j = parse("\"caf\xc3\xa9\"");
	assert_string_equal(j->str, "caf\xc3\xa9");
	pt_json_free(j);
}

static void test_string_errors(void **state)
{
	expect_error("\"abc", 4, 0, "unterminated string");
	expect_error("\"ab\\", 4, 0, "unterminated string");
	expect_error("\"a\\x\"", 5, 2, "invalid escape");
	expect_error("\"\\u12g4\"", 8, 1, "invalid \\u escape");
	expect_error("\"\\u12\"", 6, 1, "invalid \\u escape");
	expect_error("\"a\nb\"", 5, 2, "control character");
	expect_error("\"a\xff\"", 4, 2, "invalid utf-8");
	expect_error("\"\xc3\"", 3, 1, "invalid utf-8");
	expect_error("\"\xed\xa0\x80\"", 5, 1, "invalid utf-8"); /* encoded surrogate */
	expect_error("\"\xc0\xaf\"", 4, 1, "invalid utf-8");     /* overlong */
}

static void test_containers(void **state)
{
	const char *s = "{\"a\": [1, 2, {\"b\": null}], \"c\": \"d\", \"a\": 5, \"e\": {}, \"f\": []}";
	pt_json *j = parse(s);
	const pt_json *a, *x;
	size_t n = 0;

	assert_non_null(j);
	assert_int_equal(j->type, PT_JSON_OBJ);
	assert_int_equal(j->len, 5);
	a = pt_json_get(j, "a");
	assert_non_null(a);
	assert_int_equal(a->type, PT_JSON_ARR);
	assert_int_equal(a->len, 3);
	assert_string_equal(a->key, "a");
	assert_int_equal(a->keylen, 1);
	assert_true(pt_json_at(a, 1)->num == 2);
	assert_null(pt_json_at(a, 3));
	x = pt_json_at(a, 2);
	assert_int_equal(x->type, PT_JSON_OBJ);
	assert_int_equal(pt_json_get(x, "b")->type, PT_JSON_NULL);
	/* Keys in input order; first match wins on duplicates. */
	for (x = j->child; x; x = x->next)
		n++;
	assert_int_equal(n, 5);
	assert_string_equal(pt_json_at(j, 1)->key, "c");
	assert_string_equal(pt_json_at(j, 2)->key, "a");
	assert_string_equal(pt_json_strv(j, "c", "zz"), "d");
	assert_string_equal(pt_json_strv(j, "a", "zz"), "zz");
	assert_string_equal(pt_json_strv(j, "nope", "zz"), "zz");
	assert_true(pt_json_num(j, "c", -1) == -1);
	assert_true(pt_json_num(x = pt_json_at(a, 2), "b", 7) == 7);
	assert_int_equal(pt_json_get(j, "e")->len, 0);
	assert_null(pt_json_get(j, "e")->child);
	assert_int_equal(pt_json_get(j, "f")->type, PT_JSON_ARR);
	assert_null(pt_json_get(a, "a"));  /* not an object */
	assert_null(pt_json_get(NULL, "a"));
	assert_null(pt_json_at(NULL, 0));
	assert_null(pt_json_at(pt_json_get(j, "c"), 0));
	pt_json_free(j);
}

static void test_syntax_errors(void **state)
{
	expect_error("", 0, 0, "empty input");
	expect_error("  \n", 3, 3, "only whitespace");
	expect_error("[1,]", 4, 3, "unexpected character ']'");
	expect_error("[1 2]", 5, 3, "expected ',' or ']'");
	expect_error("{\"a\" 1}", 7, 5, "expected ':'");
	expect_error("{\"a\":1,}", 8, 7, "object key");
	expect_error("{a:1}", 5, 1, "object key");
	expect_error("[1", 2, 0, "unterminated array");
	expect_error("{\"a\":1", 6, 0, "unterminated object");
	expect_error("[1] x", 5, 4, "trailing characters");
	expect_error("tru", 3, 0, "unexpected character 't'");
	expect_error("nul", 3, 0, "unexpected");
	expect_error("[\x01]", 3, 1, "unexpected byte 0x01");
	expect_error("{\"a\":", 5, 5, "unexpected end of input");
	expect_error("\xef\xbb\xbf{}", 5, 0, "unexpected byte 0xef");
	/* An embedded NUL is a syntax error, not an end of input. */
	expect_error("[1,\0 2]", 7, 3, "unexpected byte 0x00");
}

static void test_depth(void **state)
{
	char *s = x_malloc(2 * 300 + 1);
	pt_json *j;
	pt_error e;
	size_t i;

	/* Exactly the limit parses. */
	for (i = 0; i < PT_JSON_MAX_DEPTH; i++)
		s[i] = '[';
	for (i = 0; i < PT_JSON_MAX_DEPTH; i++)
		s[PT_JSON_MAX_DEPTH + i] = ']';
	pt_error_clear(&e);
	j = pt_json_parse(s, 2 * PT_JSON_MAX_DEPTH, &e);
	assert_non_null(j);
	pt_json_free(j);
	/* One more fails at the opening bracket past the limit. */
	for (i = 0; i < 300; i++) {
		s[i] = '[';
		s[300 + i] = ']';
	}
	expect_error(s, 600, PT_JSON_MAX_DEPTH, "nesting deeper than 256");
	x_free(s);
}

static void test_not_nul_terminated(void **state)
{
	/* len bounds the read: "[12" followed by digits outside the slice. */
	const char *s = "[12]345";
	pt_error e;
	pt_json *j;

	pt_error_clear(&e);
	j = pt_json_parse(s, 4, &e);
	assert_non_null(j);
	assert_true(pt_json_at(j, 0)->num == 12);
	pt_json_free(j);
	/* A number that ends exactly at len. */
	j = pt_json_parse(s + 1, 2, &e);
	assert_non_null(j);
	assert_true(j->num == 12);
	pt_json_free(j);
	/* NULL buffer behaves as empty input. */
	assert_null(pt_json_parse(NULL, 10, &e));
	assert_int_equal(e.code, PT_EPARSE);
	/* err may be NULL. */
	assert_null(pt_json_parse("[", 1, NULL));
}

static void test_big_array(void **state)
{
	/* 100000 elements: pt_json_at is O(1) and the values are right. */
	size_t n = 100000, i;
	char *s = x_malloc(n * 8 + 2), *p = s;
	pt_json *j;
	pt_error e;

	*p++ = '[';
	for (i = 0; i < n; i++)
		p += sprintf(p, "%s%zu", i ? "," : "", i);
	*p++ = ']';
	pt_error_clear(&e);
	j = pt_json_parse(s, (size_t)(p - s), &e);
	assert_non_null(j);
	assert_int_equal(j->len, n);
	for (i = 0; i < n; i += 997)
		assert_true(pt_json_at(j, i)->num == (double)i);
	assert_null(pt_json_at(j, n));
	assert_null(pt_json_at(j, n - 1)->next);
	assert_true(pt_json_at(j, n - 1)->num == (double)(n - 1));
	pt_json_free(j);
	x_free(s);
}

static void test_file(void **state)
{
	char path[] = "/tmp/pt_test_json_XXXXXX";
	const char *doc = "{\"format\": \"perftracker-summary\", \"version\": 1}\n";
	pt_error e;
	pt_json *j;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, doc, strlen(doc)), (ssize_t)strlen(doc));
	close(fd);
	pt_error_clear(&e);
	j = pt_json_parse_file(path, &e);
	assert_non_null(j);
	assert_string_equal(pt_json_strv(j, "format", ""), "perftracker-summary");
	assert_true(pt_json_num(j, "version", 0) == 1);
	pt_json_free(j);

	/* Parse errors carry the path as subject and the offset. */
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_int_equal(write(fd, "{\"a\": tru}", 10), 10);
	close(fd);
	pt_error_clear(&e);
	assert_null(pt_json_parse_file(path, &e));
	assert_int_equal(e.code, PT_EPARSE);
	assert_int_equal(e.offset, 6);
	assert_string_equal(e.subject, path);
	unlink(path);

	pt_error_clear(&e);
	assert_null(pt_json_parse_file("/nonexistent/x.json", &e));
	assert_int_equal(e.code, PT_EIO);
	assert_string_equal(e.subject, "/nonexistent/x.json");
	assert_non_null(strstr(e.msg, "cannot open"));

	pt_error_clear(&e);
	assert_null(pt_json_parse_file("/tmp", &e));
	assert_int_equal(e.code, PT_EIO);
	assert_non_null(strstr(e.msg, "directory"));
}

static void test_real_trace(void **state)
{
	/* A real trace parses with the DOM too (small enough), and the
	 * header values come out as the file has them. */
	pt_error e;
	pt_json *j;
	const pt_json *ev, *di;

	pt_error_clear(&e);
	j = pt_json_parse_file("tests/data/dlrm/worker3_step_12.1694128201557.pt.trace.json", &e);
	if (!j)
		fail_msg("%s", e.msg);
	di = pt_json_get(j, "distributedInfo");
	assert_true(pt_json_num(di, "rank", -1) == 3);
	assert_true(pt_json_num(di, "world_size", -1) == 8);
	assert_string_equal(pt_json_strv(di, "backend", ""), "nccl");
	ev = pt_json_get(j, "traceEvents");
	assert_int_equal(ev->type, PT_JSON_ARR);
	assert_int_equal(ev->len, 3474);
	pt_json_free(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scalars),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_numbers_exact),
		cmocka_unit_test(test_long_number),
		cmocka_unit_test(test_tokenizer),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_string_errors),
		cmocka_unit_test(test_containers),
		cmocka_unit_test(test_syntax_errors),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_not_nul_terminated),
		cmocka_unit_test(test_big_array),
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_real_trace),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
