/*
 * test_strtab.c - unit tests for the string table (src/model/strtab.c) and
 * the growable buffer with its JSON appenders (src/util/strbuf.c): interning
 * identity, slices and embedded NULs, growth past many rehashes, JSON string
 * escaping and the Python-repr double format the summary files rely on.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <pthread.h>

#include <cmocka.h>

#include "model/strtab.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

static void test_intern_basic(void **state)
{
	pt_strtab *t = pt_strtab_new();
	uint32_t a, b, c;
	size_t len = 99;

	assert_non_null(t);
	assert_int_equal(pt_strtab_count(t), 1);
	assert_string_equal(pt_strtab_get(t, 0, &len), "");
	assert_int_equal(len, 0);
	assert_int_equal(pt_strtab_intern(t, "", 0), 0);
	a = pt_strtab_intern(t, "aten::add", 9);
	b = pt_strtab_intern(t, "aten::mm", 8);
	c = pt_strtab_intern(t, "aten::add", 9);
	assert_int_equal(a, 1);
	assert_int_equal(b, 2);
	assert_int_equal(a, c);
	assert_int_equal(pt_strtab_count(t), 3);
	assert_string_equal(pt_strtab_get(t, a, &len), "aten::add");
	assert_int_equal(len, 9);
	/* A slice of a longer buffer, not NUL-terminated. */
	assert_int_equal(pt_strtab_intern(t, "aten::mmXYZ", 8), b);
	/* Prefixes are different strings. */
	assert_int_not_equal(pt_strtab_intern(t, "aten::ad", 8), a);
	/* Unknown ids read as "". */
	assert_string_equal(pt_strtab_get(t, 12345, &len), "");
	assert_int_equal(len, 0);
	assert_string_equal(pt_strtab_get(NULL, 1, NULL), "");
	assert_int_equal(pt_strtab_count(NULL), 0);
	assert_true(pt_strtab_bytes(t) > 0);
	assert_int_equal(pt_strtab_bytes(NULL), 0);
	pt_strtab_free(t);
	pt_strtab_free(NULL);
}

static void test_intern_binary(void **state)
{
	pt_strtab *t = pt_strtab_new();
	uint32_t a, b;
	size_t len;
	const char *s;

	/* Embedded NULs are part of the string; the length says so. */
	a = pt_strtab_intern(t, "a\0b", 3);
	b = pt_strtab_intern(t, "a\0c", 3);
	assert_int_not_equal(a, b);
	assert_int_equal(pt_strtab_intern(t, "a", 1) == a, 0);
	s = pt_strtab_get(t, a, &len);
	assert_int_equal(len, 3);
	assert_memory_equal(s, "a\0b", 3);
	assert_int_equal(s[3], 0);
	pt_strtab_free(t);
}

static void test_intern_many(void **state)
{
	/* 200000 strings: many rehashes and arena reallocs; every id still
	 * maps to its string and back. */
	pt_strtab *t = pt_strtab_new();
	char buf[64];
	uint32_t i, n = 200000;

	for (i = 0; i < n; i++) {
		int l = snprintf(buf, sizeof(buf), "kernel_%u_%x", i, i * 2654435761u);
		assert_int_equal(pt_strtab_intern(t, buf, (size_t)l), i + 1);
	}
	assert_int_equal(pt_strtab_count(t), n + 1);
	for (i = 0; i < n; i += 7) {
		int l = snprintf(buf, sizeof(buf), "kernel_%u_%x", i, i * 2654435761u);
		size_t len;
		assert_int_equal(pt_strtab_intern(t, buf, (size_t)l), i + 1);
		assert_string_equal(pt_strtab_get(t, i + 1, &len), buf);
		assert_int_equal(len, (size_t)l);
	}
	/* Long strings (kernel names run to kilobytes). */
	{
		char *big = x_malloc(70000);
		uint32_t id, id2;
		memset(big, 'k', 70000);
		id = pt_strtab_intern(t, big, 70000);
		big[69999] = 'j';
		id2 = pt_strtab_intern(t, big, 70000);
		assert_int_not_equal(id, id2);
		big[69999] = 'k';
		assert_int_equal(pt_strtab_intern(t, big, 70000), id);
		x_free(big);
	}
	pt_strtab_free(t);
}

/* The shared set: four threads intern the same 5,000 keys (long and
 * short, binary bytes included) in different orders; every key is held
 * once, each thread got the same address for it, and the text is intact. */
#define SET_KEYS 5000
#define SET_THREADS 4

static const char *set_got[SET_THREADS][SET_KEYS];
static pt_strset *the_set;

static size_t set_key(int i, char *buf)
{
	/* lengths 0..299 (pattern keys average 240 bytes), a NUL inside some */
	size_t n = (size_t)(i * 7919) % 300, j;

	for (j = 0; j < n; j++)
		buf[j] = (char)((i * 31 + (int)j * 17) % 256);
	if (n > 4) { /* the number first, then a NUL: keys differ, bytes are binary */
		buf[0] = (char)('0' + i / 1000 % 10);
		buf[1] = (char)('0' + i / 100 % 10);
		buf[2] = (char)('0' + i / 10 % 10);
		buf[3] = (char)('0' + i % 10);
		buf[4] = 0;
	}
	return n;
}

static void *set_worker(void *arg)
{
	int t = (int)(intptr_t)arg, k;
	char buf[300];

	for (k = 0; k < SET_KEYS; k++) {
		int i = t % 2 ? SET_KEYS - 1 - k : k;
		size_t n = set_key(i, buf);

		set_got[t][i] = pt_strset_intern(the_set, buf, n);
	}
	return NULL;
}

static void test_strset_threads(void **state)
{
	pthread_t th[SET_THREADS];
	char buf[300];
	int t, i, distinct = 0;

	(void)state;
	the_set = pt_strset_new();
	assert_non_null(the_set);
	for (t = 0; t < SET_THREADS; t++)
		assert_int_equal(pthread_create(&th[t], NULL, set_worker, (void *)(intptr_t)t), 0);
	for (t = 0; t < SET_THREADS; t++)
		pthread_join(th[t], NULL);
	for (i = 0; i < SET_KEYS; i++) {
		size_t n = set_key(i, buf);
		int j, dup = 0;

		assert_non_null(set_got[0][i]);
		for (t = 1; t < SET_THREADS; t++)
			assert_ptr_equal(set_got[t][i], set_got[0][i]);
		assert_memory_equal(set_got[0][i], buf, n);
		assert_int_equal(set_got[0][i][n], 0);
		/* keys can repeat (same length and bytes): count distinct ones */
		for (j = 0; j < i && !dup; j++)
			dup = set_got[0][j] == set_got[0][i];
		distinct += !dup;
	}
	assert_int_equal(pt_strset_count(the_set), distinct);
	assert_true(distinct > SET_KEYS / 2);
	/* once more from this thread: the same address, no new entry */
	assert_ptr_equal(pt_strset_intern(the_set, buf, set_key(SET_KEYS - 1, buf)),
			 set_got[0][SET_KEYS - 1]);
	assert_int_equal(pt_strset_count(the_set), distinct);
	pt_strset_free(the_set);
	pt_strset_free(NULL);
	assert_int_equal(pt_strset_count(NULL), 0);
}

static void test_sb_basic(void **state)
{
	pt_sb sb = { 0 };
	char *d;
	size_t len;
	int i;

	pt_sb_adds(&sb, "ab");
	pt_sb_addc(&sb, 'c');
	pt_sb_add(&sb, "defXX", 3);
	pt_sb_addf(&sb, "-%d-%s", 42, "x");
	assert_string_equal(sb.buf, "abcdef-42-x");
	assert_int_equal(sb.len, 11);
	pt_sb_add(&sb, NULL, 0);  /* nothing to add: no-op */
	assert_int_equal(sb.len, 11);
	pt_sb_reset(&sb);
	assert_int_equal(sb.len, 0);
	assert_string_equal(sb.buf, "");
	for (i = 0; i < 10000; i++)
		pt_sb_addf(&sb, "%04d", i % 10000);
	assert_int_equal(sb.len, 40000);
	assert_memory_equal(sb.buf + 39996, "9999", 4);
	d = pt_sb_detach(&sb, &len);
	assert_int_equal(len, 40000);
	assert_null(sb.buf);
	assert_int_equal(sb.len, 0);
	x_free(d);
	/* Detaching an empty buffer gives "", not NULL. */
	d = pt_sb_detach(&sb, &len);
	assert_non_null(d);
	assert_string_equal(d, "");
	assert_int_equal(len, 0);
	x_free(d);
	pt_sb_free(&sb);
	pt_sb_free(NULL);
}

static void test_sb_json_str(void **state)
{
	static const struct { const char *in; size_t n; const char *out; } cases[] = {
		{ "plain", 5, "\"plain\"" },
		{ "q\"b\\", 4, "\"q\\\"b\\\\\"" },
		{ "a\nb\tc\rd", 7, "\"a\\nb\\tc\\rd\"" },
		{ "\x01\x1f", 2, "\"\\u0001\\u001f\"" },
		{ "a\0b", 3, "\"a\\u0000b\"" },
		{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14, "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"" },
		/* Invalid UTF-8 becomes U+FFFD so the output stays valid JSON. */
		{ "a\xff" "b", 3, "\"a\xef\xbf\xbd" "b\"" },
		{ "\xc3", 1, "\"\xef\xbf\xbd\"" },
		{ "\xed\xa0\x80", 3, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"" },
		{ "\xc0\xaf", 2, "\"\xef\xbf\xbd\xef\xbf\xbd\"" },
		{ "", 0, "\"\"" },
		{ "</script>", 9, "\"</script>\"" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pt_sb sb = { 0 };
		pt_sb_add_json_str(&sb, cases[i].in, cases[i].n);
		assert_non_null(sb.buf);
		assert_string_equal(sb.buf, cases[i].out);
		pt_sb_free(&sb);
	}
}

static void test_sb_double(void **state)
{
	/* The expected strings are Python's repr() of the same doubles. */
	static const struct { double v; const char *out; } cases[] = {
		{ 3.0, "3.0" }, { 0.0, "0.0" }, { -0.0, "-0.0" }, { 0.1, "0.1" },
		{ 1.5, "1.5" }, { -2.25, "-2.25" }, { 1e-7, "1e-07" }, { 1.5e-5, "1.5e-05" },
		{ 0.0001, "0.0001" }, { 123456789.123, "123456789.123" },
		{ 1e15, "1000000000000000.0" }, { 2.5e15, "2500000000000000.0" },
		{ 1e16, "1e+16" }, { 1.2345e20, "1.2345e+20" }, { 1.5e300, "1.5e+300" },
		{ 0.30000000000000004, "0.30000000000000004" }, { 1.0 / 3.0, "0.3333333333333333" },
		{ 1234567890123456.8, "1234567890123456.8" }, { 5e-324, "5e-324" },
		/* the 10^-6 grid (whole ns in ms), and around its bounds */
		{ 0.123456, "0.123456" }, { 12.000001, "12.000001" }, { 0.000123, "0.000123" },
		{ -0.000101, "-0.000101" }, { 1234567.891234, "1234567.891234" }, { 5e-06, "5e-06" },
		{ 2147483647.000001, "2147483647.000001" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pt_sb sb = { 0 };
		pt_sb_add_double(&sb, cases[i].v);
		if (strcmp(sb.buf, cases[i].out))
			fail_msg("%.17g: got '%s', want '%s'", cases[i].v, sb.buf, cases[i].out);
		pt_sb_free(&sb);
	}
	{
		pt_sb sb = { 0 };
		pt_sb_add_double(&sb, NAN);
		pt_sb_addc(&sb, ',');
		pt_sb_add_double(&sb, INFINITY);
		pt_sb_addc(&sb, ',');
		pt_sb_add_double(&sb, -INFINITY);
		assert_string_equal(sb.buf, "null,null,null");
		pt_sb_free(&sb);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intern_basic),
		cmocka_unit_test(test_intern_binary),
		cmocka_unit_test(test_intern_many),
		cmocka_unit_test(test_strset_threads),
		cmocka_unit_test(test_sb_basic),
		cmocka_unit_test(test_sb_json_str),
		cmocka_unit_test(test_sb_double),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
