/*
 * test_hash.c - unit tests for the one FNV-1a and the one hash map
 * (src/util/hash.h, hash.c): the published FNV-1a 64 vectors, the
 * continued and string forms, and the map's growth, collisions (values
 * under one hash come back oldest first), clearing and missing keys.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "util/error.h"
#include "util/hash.h"

static void test_fnv_vectors(void **state)
{
	(void)state;
	/* FNV-1a 64 test vectors (Fowler, Noll, Vo), from the published basis */
	assert_true(pt_hash_fnv1a_from(PT_FNV_OFFSET, "", 0) == 0xcbf29ce484222325ULL);
	assert_true(pt_hash_fnv1a_from(PT_FNV_OFFSET, NULL, 0) == 0xcbf29ce484222325ULL);
	assert_true(pt_hash_fnv1a_from(PT_FNV_OFFSET, "a", 1) == 0xaf63dc4c8601ec8cULL);
	assert_true(pt_hash_fnv1a_from(PT_FNV_OFFSET, "foobar", 6) == 0x85944171f73967e8ULL);
	assert_true(pt_hash_fnv1a_str_from(PT_FNV_OFFSET, "foobar") == 0x85944171f73967e8ULL);
	/* from the project's seed: the values reports and channel names hold
	 * ("CPU functions" is a pid in tests/data/legacy/legacy_gloo.json) */
	assert_true(pt_hash_fnv1a_str("") == PT_HASH_SEED);
	assert_true(pt_hash_fnv1a("a", 1) == 0x44bd8ad473cd9906ULL);
	assert_true(pt_hash_fnv1a_str("foobar") == 0x88fad7c0a8ff07f2ULL);
	assert_true(pt_hash_fnv1a_str("CPU functions") == 0x0be466a12697b406ULL);
	/* continued: "a" then "b" is "ab" */
	assert_true(pt_hash_fnv1a_from(0xaf63dc4c8601ec8cULL, "b", 1) == 0x089c4407b545986aULL);
	assert_true(pt_hash_fnv1a_str_from(pt_hash_fnv1a_str("a"), "b") == pt_hash_fnv1a("ab", 2));
	/* bytes are unsigned: 0xff is not sign-extended */
	assert_true(pt_hash_fnv1a("\xff", 1) == pt_hash_mix(PT_HASH_SEED, 0xff));
	/* the length counts, not a NUL */
	assert_true(pt_hash_fnv1a("a\0b", 3) != pt_hash_fnv1a_str("a"));
}

/* pt_hash_words: every byte counts, in any position, and the seed too. */
static void test_hash_words(void **state)
{
	const char *s = "aten::linear|aten::addmm|void cutlass::Kernel<cutlass_80_tensorop>(Params)";
	size_t n = strlen(s);

	(void)state;
	assert_true(pt_hash_words(s, n, 0) == pt_hash_words(s, n, 0));
	assert_true(pt_hash_words(s, n, 0) != pt_hash_words(s, n, 1));
	assert_true(pt_hash_words(s, n, 0) != pt_hash_words(s, n - 1, 0));
	for (size_t i = 0; i < n; i++) {
		char b[128];

		memcpy(b, s, n);
		b[i] ^= 1;
		assert_true(pt_hash_words(b, n, 0) != pt_hash_words(s, n, 0));
	}
	/* a short key is not its zero-padded longer form */
	assert_true(pt_hash_words("ab\0", 3, 0) != pt_hash_words("ab", 2, 0));
}

static void test_map_empty(void **state)
{
	pt_hmap m = {0};
	size_t it = 0;

	(void)state;
	assert_int_equal(pt_hmap_next(&m, 42, &it), PT_HMAP_NONE);
	pt_hmap_free(&m);
	pt_hmap_free(NULL);
	assert_int_equal(pt_hmap_put(&m, 1, PT_HMAP_NONE), PT_EINVAL);
	assert_int_equal(m.n, 0);
}

static void test_map_grow(void **state)
{
	pt_hmap m = {0};
	uint32_t i, v;
	size_t it;

	(void)state;
	for (i = 0; i < 1000; i++)
		assert_int_equal(pt_hmap_put(&m, pt_hash_fnv1a(&i, sizeof(i)), i), PT_OK);
	assert_int_equal(m.n, 1000);
	assert_int_equal(m.cap, 2048); /* at most half full */
	for (i = 0; i < 1000; i++) {
		it = 0;
		assert_int_equal(pt_hmap_next(&m, pt_hash_fnv1a(&i, sizeof(i)), &it), i);
		assert_int_equal(pt_hmap_next(&m, pt_hash_fnv1a(&i, sizeof(i)), &it), PT_HMAP_NONE);
	}
	it = 0;
	assert_int_equal(pt_hmap_next(&m, pt_hash_fnv1a(&(uint32_t){ 1000 }, sizeof(uint32_t)), &it), PT_HMAP_NONE);
	pt_hmap_free(&m);
	assert_null(m.slot);
	assert_int_equal(m.cap, 0);
	it = 0;
	v = pt_hmap_next(&m, pt_hash_fnv1a("1", 1), &it);
	assert_int_equal(v, PT_HMAP_NONE);
}

static void test_map_collide(void **state)
{
	pt_hmap m = {0};
	size_t it = 0;
	uint32_t i;

	(void)state;
	/* equal hashes: every value comes back, oldest first */
	assert_int_equal(pt_hmap_put(&m, 7, 3), PT_OK);
	assert_int_equal(pt_hmap_put(&m, 7, 1), PT_OK);
	assert_int_equal(pt_hmap_put(&m, 7, 2), PT_OK);
	/* equal low bits, different hashes: probed past, never returned */
	assert_int_equal(pt_hmap_put(&m, 7 + 16, 9), PT_OK);
	assert_int_equal(pt_hmap_put(&m, 7 + 32, 0), PT_OK);
	assert_int_equal(pt_hmap_next(&m, 7, &it), 3);
	assert_int_equal(pt_hmap_next(&m, 7, &it), 1);
	assert_int_equal(pt_hmap_next(&m, 7, &it), 2);
	assert_int_equal(pt_hmap_next(&m, 7, &it), PT_HMAP_NONE);
	it = 0;
	assert_int_equal(pt_hmap_next(&m, 7 + 32, &it), 0);
	it = 0;
	assert_int_equal(pt_hmap_next(&m, 7 + 48, &it), PT_HMAP_NONE);
	assert_int_equal(pt_hmap_next(&m, 7 + 48, &it), PT_HMAP_NONE); /* and stays so */
	/* only the low 32 bits count: a hash equal there is a candidate too */
	it = 0;
	assert_int_equal(pt_hmap_next(&m, 7 + (1ULL << 32), &it), 3);
	/* the collisions survive growth, still oldest first */
	for (i = 100; i < 200; i++)
		assert_int_equal(pt_hmap_put(&m, i * 1000003ULL, i), PT_OK);
	assert_int_equal(m.cap, 256);
	it = 0;
	assert_int_equal(pt_hmap_next(&m, 7, &it), 3);
	assert_int_equal(pt_hmap_next(&m, 7, &it), 1);
	assert_int_equal(pt_hmap_next(&m, 7, &it), 2);
	assert_int_equal(pt_hmap_next(&m, 7, &it), PT_HMAP_NONE);
	pt_hmap_free(&m);
}

static void test_map_clear(void **state)
{
	pt_hmap m = {0};
	size_t it = 0, cap;
	uint32_t i;

	(void)state;
	pt_hmap_clear(&m); /* empty: a no-op */
	assert_int_equal(m.cap, 0);
	for (i = 0; i < 100; i++)
		assert_int_equal(pt_hmap_put(&m, i, i), PT_OK);
	cap = m.cap;
	pt_hmap_clear(&m);
	assert_int_equal(m.n, 0);
	assert_int_equal(m.cap, cap); /* the slots are kept */
	assert_int_equal(pt_hmap_next(&m, 5, &it), PT_HMAP_NONE);
	/* refilled: the new values, none of the old */
	assert_int_equal(pt_hmap_put(&m, 5, 50), PT_OK);
	it = 0;
	assert_int_equal(pt_hmap_next(&m, 5, &it), 50);
	assert_int_equal(pt_hmap_next(&m, 5, &it), PT_HMAP_NONE);
	pt_hmap_free(&m);
}

static void test_map_reserve(void **state)
{
	pt_hmap m = {0};

	(void)state;
	assert_int_equal(pt_hmap_reserve(&m, 0), PT_OK);
	assert_int_equal(m.cap, 16);
	assert_int_equal(pt_hmap_reserve(&m, 100), PT_OK);
	assert_int_equal(m.cap, 256);
	assert_int_equal(pt_hmap_reserve(&m, 10), PT_OK); /* never shrinks */
	assert_int_equal(m.cap, 256);
	assert_int_equal(pt_hmap_reserve(&m, SIZE_MAX), PT_ENOMEM);
	assert_int_equal(m.cap, 256);
	pt_hmap_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fnv_vectors), cmocka_unit_test(test_hash_words),
		cmocka_unit_test(test_map_empty),   cmocka_unit_test(test_map_grow),
		cmocka_unit_test(test_map_collide), cmocka_unit_test(test_map_clear),
		cmocka_unit_test(test_map_reserve),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
