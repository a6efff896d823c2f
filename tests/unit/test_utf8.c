/*
 * test_utf8.c - unit tests for the shared JSON text helpers that every
 * reader and writer uses: UTF-8 validation and encoding, escape and string
 * decoding (src/util/utf8.c) and whole-file reads (src/util/file.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/file.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#define U(s) ((const unsigned char *)(s))

static void test_decode(void **state)
{
	uint32_t cp = 7;

	assert_int_equal(pt_utf8_decode(U("A"), 1, &cp), 1);
	assert_int_equal(cp, 'A');
	assert_int_equal(pt_utf8_decode(U("\xc3\xa9"), 2, &cp), 2);
	assert_int_equal(cp, 0xe9);
	assert_int_equal(pt_utf8_decode(U("\xe2\x82\xac"), 3, &cp), 3);
	assert_int_equal(cp, 0x20ac);
	assert_int_equal(pt_utf8_decode(U("\xf0\x9f\x98\x80"), 4, &cp), 4);
	assert_int_equal(cp, 0x1f600);
	assert_int_equal(pt_utf8_decode(U("\xf4\x8f\xbf\xbf"), 4, NULL), 4); /* U+10FFFF */
	/* Invalid: *cp is left alone. */
	cp = 7;
	assert_int_equal(pt_utf8_decode(U("\x80"), 1, &cp), 0);         /* continuation */
	assert_int_equal(pt_utf8_decode(U("\xc0\xaf"), 2, &cp), 0);     /* overlong */
	assert_int_equal(pt_utf8_decode(U("\xe0\x80\xaf"), 3, &cp), 0); /* overlong */
	assert_int_equal(pt_utf8_decode(U("\xed\xa0\x80"), 3, &cp), 0); /* surrogate */
	assert_int_equal(pt_utf8_decode(U("\xf4\x90\x80\x80"), 4, &cp), 0); /* > U+10FFFF */
	assert_int_equal(pt_utf8_decode(U("\xf5\x80\x80\x80"), 4, &cp), 0);
	assert_int_equal(pt_utf8_decode(U("\xe2\x82"), 2, &cp), 0);     /* cut short by n */
	assert_int_equal(pt_utf8_decode(U("\xe2\x28\xac"), 3, &cp), 0); /* bad continuation */
	assert_int_equal(cp, 7);
	assert_int_equal(pt_utf8_len(U("\xc3\xa9x"), 3), 2);
	assert_int_equal(pt_utf8_len(U("\xc3"), 1), 0);
}

static void test_put(void **state)
{
	char b[4];
	uint32_t cps[] = { 0, 0x7f, 0x80, 0x7ff, 0x800, 0xfffd, 0xffff, 0x10000, 0x10ffff };
	size_t want[] = { 1, 1, 2, 2, 3, 3, 3, 4, 4 };

	for (size_t i = 0; i < sizeof(cps) / sizeof(cps[0]); i++) {
		uint32_t back = 0xdead;
		size_t n = pt_utf8_put(b, cps[i]);

		assert_int_equal(n, want[i]);
		assert_int_equal(pt_utf8_decode(U(b), n, &back), n);
		assert_int_equal(back, cps[i]);
	}
}

/* Decode the escape in s; check what it took and wrote. */
static void expect_escape(const char *s, size_t used, const char *out, size_t len)
{
	char b[8];
	size_t u = 99, l = 99;

	memset(b, 'Z', sizeof(b));
	assert_null(pt_utf8_unescape(U(s), strlen(s), b, &u, &l));
	assert_int_equal(u, used);
	assert_int_equal(l, len);
	assert_memory_equal(b, out, len);
	assert_int_equal(b[len], 'Z'); /* nothing written past *len */
}

static void test_unescape(void **state)
{
	char b[8];
	size_t u, l;

	expect_escape("\\\"x", 2, "\"", 1);
	expect_escape("\\\\", 2, "\\", 1);
	expect_escape("\\/", 2, "/", 1);
	expect_escape("\\b", 2, "\b", 1);
	expect_escape("\\f", 2, "\f", 1);
	expect_escape("\\n", 2, "\n", 1);
	expect_escape("\\r", 2, "\r", 1);
	expect_escape("\\t", 2, "\t", 1);
	expect_escape("\\u0041", 6, "A", 1);
	expect_escape("\\u00e9", 6, "\xc3\xa9", 2);
	expect_escape("\\u20AC", 6, "\xe2\x82\xac", 3);
	expect_escape("\\ud83d\\ude00", 12, "\xf0\x9f\x98\x80", 4);
	/* Lone surrogates, and a high one followed by no low one, are U+FFFD. */
	expect_escape("\\ud83dz", 6, "\xef\xbf\xbd", 3);
	expect_escape("\\ude00", 6, "\xef\xbf\xbd", 3);
	expect_escape("\\ud83d\\u0041", 6, "\xef\xbf\xbd", 3);
	expect_escape("\\ud83d\\ude0", 6, "\xef\xbf\xbd", 3); /* pair cut short */
	assert_string_equal(pt_utf8_unescape(U("\\x"), 2, b, &u, &l), "invalid escape in string");
	assert_string_equal(pt_utf8_unescape(U("\\"), 1, b, &u, &l), "invalid escape in string");
	assert_string_equal(pt_utf8_unescape(U("\\u12"), 4, b, &u, &l), "invalid \\u escape");
	assert_string_equal(pt_utf8_unescape(U("\\u12g4"), 6, b, &u, &l), "invalid \\u escape");
}

/* Unquote s (opening quote at 0) resuming at pos; on success compare. */
static int unquote(const char *s, size_t pos, const char *want, size_t *at, const char **msg)
{
	char *buf = NULL;
	size_t cap = 0, n = 0;
	int rc;

	rc = pt_utf8_unquote(U(s), strlen(s), 0, &pos, &buf, &cap, &n, msg);
	*at = pos;
	if (rc == PT_OK) {
		assert_null(*msg);
		assert_int_equal(n, strlen(want));
		assert_memory_equal(buf, want, n);
		assert_true(cap >= n + 16);
	}
	x_free(buf);
	return rc;
}

static void test_unquote(void **state)
{
	const char *msg;
	size_t at;
	char longs[300], want[160];

	assert_int_equal(unquote("\"ab\\ncd\"rest", 1, "ab\ncd", &at, &msg), PT_OK);
	assert_int_equal(at, 8);
	/* Resuming after plain bytes the caller scanned: they are copied. */
	assert_int_equal(unquote("\"ab\\ncd\"", 3, "ab\ncd", &at, &msg), PT_OK);
	assert_int_equal(unquote("\"caf\xc3\xa9 \\u00e9\"", 1, "caf\xc3\xa9 \xc3\xa9", &at, &msg),
			 PT_OK);
	/* Many escapes in a row (no plain byte between) grow the buffer. */
	longs[0] = '"';
	for (size_t i = 0; i < 49; i++) {
		memcpy(longs + 1 + 6 * i, "\\u20ac", 6);
		memcpy(want + 3 * i, "\xe2\x82\xac", 3);
	}
	memcpy(longs + 295, "\"", 2);
	want[147] = 0;
	assert_int_equal(unquote(longs, 1, want, &at, &msg), PT_OK);
	assert_int_equal(at, 296);

	assert_int_equal(unquote("\"abc", 1, "", &at, &msg), PT_EPARSE);
	assert_string_equal(msg, "unterminated string");
	assert_int_equal(at, 0);
	assert_int_equal(unquote("\"ab\\", 1, "", &at, &msg), PT_EPARSE);
	assert_string_equal(msg, "unterminated string");
	assert_int_equal(at, 0);
	assert_int_equal(unquote("\"a\\x\"", 1, "", &at, &msg), PT_EPARSE);
	assert_string_equal(msg, "invalid escape in string");
	assert_int_equal(at, 2);
	assert_int_equal(unquote("\"a\nb\"", 1, "", &at, &msg), PT_EPARSE);
	assert_string_equal(msg, "control character in string");
	assert_int_equal(at, 2);
	assert_int_equal(unquote("\"ab\xff\"", 1, "", &at, &msg), PT_EPARSE);
	assert_string_equal(msg, "invalid utf-8 in string");
	assert_int_equal(at, 3);
}

static void test_file_read(void **state)
{
	char path[] = "/tmp/pt_test_utf8_XXXXXX";
	char *buf = NULL;
	size_t len = 99;
	pt_error e;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "0123456789", 10), 10);
	close(fd);
	pt_error_clear(&e);
	assert_int_equal(pt_file_read(path, 1 << 20, &buf, &len, &e), PT_OK);
	assert_int_equal(len, 10);
	assert_string_equal(buf, "0123456789"); /* NUL-terminated */
	x_free(buf);
	/* An empty file is an empty, terminated buffer. */
	assert_int_equal(truncate(path, 0), 0);
	buf = NULL;
	assert_int_equal(pt_file_read(path, 1 << 20, &buf, &len, &e), PT_OK);
	assert_int_equal(len, 0);
	assert_string_equal(buf, "");
	x_free(buf);
	/* Past the limit: PT_ENOMEM, nothing handed out, no subject. */
	fd = open(path, O_WRONLY | O_TRUNC);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(write(fd, "0123456789", 10), 10);
	close(fd);
	buf = NULL;
	len = 99;
	pt_error_clear(&e);
	assert_int_equal(pt_file_read(path, 4096, &buf, &len, &e), PT_ENOMEM);
	assert_null(buf);
	assert_int_equal(len, 99);
	assert_string_equal(e.msg, "file larger than 4096 bytes");
	assert_string_equal(e.subject, "");
	unlink(path);

	pt_error_clear(&e);
	assert_int_equal(pt_file_read(path, 4096, &buf, &len, &e), PT_EIO);
	assert_non_null(strstr(e.msg, "cannot open"));
	pt_error_clear(&e);
	assert_int_equal(pt_file_read("/tmp", 4096, &buf, &len, &e), PT_EIO);
	assert_string_equal(e.msg, "is a directory");
	assert_null(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_put),
		cmocka_unit_test(test_unescape),
		cmocka_unit_test(test_unquote),
		cmocka_unit_test(test_file_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
