/*
 * test_term.c - unit tests for util/term.c: control characters made
 * visible (C0, DEL, C1 as UTF-8, invalid bytes), newlines kept or not,
 * UTF-8 copied as is, a sequence cut by a stream's chunk left for the next.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "util/term.h"

static void check(const char *in, size_t n, int keep_nl, const char *want)
{
	pt_sb sb = { 0 };

	assert_int_equal(pt_term_escape(&sb, in, n, keep_nl, 0), n);
	pt_sb_addc(&sb, 0);
	assert_string_equal(sb.buf, want);
	assert_int_equal(pt_term_is_safe(in, n, keep_nl), !strcmp(in, want) && strlen(in) == n);
	pt_sb_free(&sb);
}

static void test_controls_escaped(void **state)
{
	(void)state;
	check("plain name", 10, 0, "plain name");
	check("a\x1b[2Jb", 6, 0, "a\\x1b[2Jb");
	check("t\x1b]0;x\x07", 7, 0, "t\\x1b]0;x\\x07");
	check("line\rover", 9, 1, "line\\x0dover");
	check("a\nb\tc", 5, 1, "a\nb\tc");
	check("a\nb\tc", 5, 0, "a\\x0ab\\x09c");
	check("del\x7f", 4, 0, "del\\x7f");
	check("nul\0x", 5, 0, "nul\\x00x");
	/* C1 CSI as UTF-8, and alone (invalid UTF-8) */
	check("c\xc2\x9b" "31m", 6, 0, "c\\u009b31m");
	check("c\x9b" "31m", 5, 0, "c\\x9b31m");
	/* valid UTF-8 untouched, U+00A0 and up */
	check("\xc3\xbc-\xe5\x90\x8d-\xc2\xa0", 9, 0, "\xc3\xbc-\xe5\x90\x8d-\xc2\xa0");
}

static void test_stream_chunks(void **state)
{
	pt_sb sb = { 0 };
	const char *s = "x\xe5\x90\x8d";

	(void)state;
	/* The last two bytes of a 3-byte sequence are in the next chunk. */
	assert_int_equal(pt_term_escape(&sb, s, 2, 1, 1), 1);
	assert_int_equal(sb.len, 1);
	assert_int_equal(pt_term_escape(&sb, s + 1, 3, 1, 1), 3);
	pt_sb_addc(&sb, 0);
	assert_string_equal(sb.buf, s);
	pt_sb_reset(&sb);
	/* Not partial: an incomplete sequence at the end is escaped. */
	assert_int_equal(pt_term_escape(&sb, s, 2, 1, 0), 2);
	pt_sb_addc(&sb, 0);
	assert_string_equal(sb.buf, "x\\xe5");
	pt_sb_free(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_controls_escaped),
		cmocka_unit_test(test_stream_chunks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
