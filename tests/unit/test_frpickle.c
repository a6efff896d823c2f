/*
 * test_frpickle.c - the Flight Recorder pickle reader (src/model/frpickle.c)
 * on a real gloo dump of torch 2.15 (tests/data/fr_pickle/gloo2_rank0.pkl:
 * 5 all-reduces on the default group, 5 broadcasts on a second group, one
 * all-gather) and an NCCL-shaped dump pickled by Python at protocol 4
 * (tests/tools/make_fr_pickle.py); then every truncation of the real one
 * and opcodes torch never emits give clean errors.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "model/frpickle.h"
#include "util/xalloc.h"
#include "testutil.h"

static char *load(const char *name, size_t *len)
{
	const char *d = getenv("PT_DATA");
	char path[1024];
	FILE *f;
	char *buf = malloc(1 << 20);

	snprintf(path, sizeof(path), "%s/fr_pickle/%s", d && *d ? d : "tests/data", name);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_non_null(buf);
	*len = fread(buf, 1, 1 << 20, f);
	fclose(f);
	return buf;
}

static void test_gloo_dump(void **state)
{
	size_t len, n;
	char *buf = load("gloo2_rank0.pkl", &len);
	pt_fr_entry *e;
	pt_error err;

	(void)state;
	pt_error_clear(&err);
	assert_int_equal(pt_frpickle_entries(buf, len, &e, &n, &err), PT_OK);
	assert_int_equal(n, 11);
	assert_int_equal(e[0].record_id, 0);
	assert_string_equal(e[0].pg, "0");
	assert_string_equal(e[0].desc, "default_pg");
	assert_string_equal(e[0].name, "gloo:all_reduce");
	assert_int_equal(e[0].seq, 1);
	assert_true(e[0].created_ns == 1796485796148120631LL);
	assert_true(e[0].started_ns == -1 && e[0].done_ns == -1);
	assert_string_equal(e[0].state, "scheduled");
	assert_int_equal(e[0].p2p, 0);
	assert_string_equal(e[9].pg, "1");
	assert_string_equal(e[9].desc, "undefined");
	assert_string_equal(e[9].name, "gloo:broadcast");
	assert_int_equal(e[9].seq, 5);
	assert_true(e[9].created_ns == 1796485796169112249LL);
	assert_string_equal(e[10].name, "gloo:all_gather");
	assert_int_equal(e[10].seq, 6);
	assert_int_equal(e[10].record_id, 10);
	x_free(e);
	free(buf);
}

static void test_nccl_shaped_protocol4(void **state)
{
	size_t len, n;
	char *buf = load("nccl_like_p4.pkl", &len);
	pt_fr_entry *e;

	(void)state;
	assert_int_equal(pt_frpickle_entries(buf, len, &e, &n, NULL), PT_OK);
	assert_int_equal(n, 4);
	assert_string_equal(e[1].name, "nccl:send 0->1");
	assert_int_equal(e[1].p2p, 1);
	assert_int_equal(e[1].seq, 1);
	assert_true(e[2].created_ns == 1796485796002000000LL);
	assert_true(e[2].started_ns == 1796485796002500000LL);
	assert_true(e[2].done_ns == 1796485796002750000LL);
	assert_string_equal(e[2].state, "completed");
	assert_string_equal(e[3].name, "nccl:reduce_scatter");
	assert_true(e[3].started_ns == 1796485796003500000LL);
	assert_true(e[3].done_ns == -1);
	assert_string_equal(e[3].state, "started");
	x_free(e);
	free(buf);
}

static void test_bad_pickles(void **state)
{
	size_t len, n, cut;
	char *buf = load("gloo2_rank0.pkl", &len);
	pt_fr_entry *e;
	pt_error err;
	/* a list at the top; an opcode torch does not emit (GLOBAL) */
	static const char list_top[] = "\x80\x02]q\x00.";
	static const char global[] = "\x80\x02" "cos\nsystem\n.";
	/* a mark alone at STOP (fuzz_frpickle found it): no value, not a node */
	static const char mark_only[] = "\x80\x02(.";

	(void)state;
	for (cut = 0; cut < len; cut++) {
		pt_error_clear(&err);
		assert_int_not_equal(pt_frpickle_entries(buf, cut, &e, &n, &err), PT_OK);
		assert_null(e);
		assert_int_equal(n, 0);
		assert_true(err.msg[0]);
	}
	pt_error_clear(&err);
	assert_int_equal(pt_frpickle_entries(list_top, sizeof(list_top) - 1, &e, &n, &err),
			 PT_EFORMAT);
	assert_int_equal(pt_frpickle_entries(global, sizeof(global) - 1, &e, &n, &err), PT_EPARSE);
	assert_int_equal(err.offset, 2);
	assert_non_null(strstr(err.msg, "unsupported opcode"));
	assert_int_equal(pt_frpickle_entries(mark_only, sizeof(mark_only) - 1, &e, &n, &err),
			 PT_EFORMAT);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gloo_dump),
		cmocka_unit_test(test_nccl_shaped_protocol4),
		cmocka_unit_test(test_bad_pickles),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
