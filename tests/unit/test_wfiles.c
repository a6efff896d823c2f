/*
 * test_wfiles.c - unit tests for reading several files of one worker as
 * one (src/diagnose/wfiles.c, src/model/store.c pt_store_append): the name
 * keys of torch's tensorboard_trace_handler files and of our collector's,
 * when a set of files needs grouping at all, and the merge of two stores:
 * strings re-interned, lanes mapped, times shifted, events outside the
 * kept span dropped and those across it clipped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "diagnose/wfiles.h"

static void test_name_keys(void **state)
{
	char k[256];

	(void)state;
	assert_int_equal(pt_wfiles_key("vm_10048.1796428567126782696.pt.trace.json.gz", k,
				       sizeof(k)), 1);
	assert_string_equal(k, "vm_10048");
	assert_int_equal(pt_wfiles_key("worker0_step_12.1694128201545.pt.trace.json", k,
				       sizeof(k)), 1);
	assert_string_equal(k, "worker0_step_12");
	assert_int_equal(pt_wfiles_key("node1_3_4242.json", k, sizeof(k)), 1);
	assert_string_equal(k, "node1_3_4242");
	assert_int_equal(pt_wfiles_key("node1_3_4242.json.gz", k, sizeof(k)), 1);
	assert_string_equal(k, "node1_3_4242");
	/* no key: a worker of its own */
	assert_int_equal(pt_wfiles_key("trace.json", k, sizeof(k)), 0);
	assert_string_equal(k, "");
	assert_int_equal(pt_wfiles_key(".123.pt.trace.json", k, sizeof(k)), 0);
	assert_int_equal(pt_wfiles_key("w.pt.trace.json", k, sizeof(k)), 0);
}

static void test_needed_only_when_a_key_repeats(void **state)
{
	char *dlrm[] = { "d/worker0_step_12.1.pt.trace.json", "d/worker1_step_12.1.pt.trace.json" };
	char *tb[] = { "d/vm_1.5.pt.trace.json.gz", "d/x.json", "d/vm_1.9.pt.trace.json.gz" };
	char *rounds[] = { "a/h_0_7.json", "b/h_0_7.json" };

	(void)state;
	assert_int_equal(pt_wfiles_needed(dlrm, 2), 0);
	assert_int_equal(pt_wfiles_needed(tb, 1), 0);
	assert_int_equal(pt_wfiles_needed(tb, 3), 1);
	assert_int_equal(pt_wfiles_needed(rounds, 2), 1);
}

static void add(pt_store *s, int kind, uint32_t lane, int64_t ts, int64_t dur, const char *name)
{
	pt_event e;

	memset(&e, 0, sizeof(e));
	e.kind = (uint8_t)kind;
	e.lane = lane;
	e.ts = ts;
	e.dur = dur;
	e.name = pt_strtab_intern(s->strs, name, strlen(name));
	assert_int_equal(pt_store_add(s, &e), PT_OK);
}

/* src: a step [1000, 2000) and four events: one before, one across the
 * start, one inside, one after.  Appended with shift 900 and span
 * [1000, 2000) onto a store that already has "b": the step moves to 100,
 * the event across starts at the span (clipped), the outside ones are
 * gone, names keep their text under dst's ids. */
static void test_append_shifts_clips_and_reinterns(void **state)
{
	pt_store a, b;
	size_t n;
	uint32_t l;

	(void)state;
	assert_int_equal(pt_store_init(&a), PT_OK);
	assert_int_equal(pt_store_init(&b), PT_OK);
	add(&a, PT_K_CPU_OP, pt_store_lane(&a, 5, 5, 0), 10, 5, "b");
	a.rank = 3;
	l = pt_store_lane(&b, 7, 8, 0);
	b.rank = 3;
	b.world_size = 4;
	assert_int_equal(pt_store_add_step(&b, 6, 1000, 1000), PT_OK);
	add(&b, PT_K_CPU_OP, l, 100, 50, "before");
	add(&b, PT_K_CPU_OP, l, 900, 200, "across");
	add(&b, PT_K_CPU_OP, l, 1500, 100, "b");
	add(&b, PT_K_CPU_OP, l, 2500, 100, "after");
	assert_int_equal(pt_store_append(&a, &b, 900, 1000, 2000), PT_OK);
	assert_int_equal(a.n, 3);
	assert_int_equal(a.nsteps, 1);
	assert_int_equal(a.steps[0].number, 6);
	assert_int_equal(a.steps[0].ts, 100);
	assert_string_equal(pt_strtab_get(a.strs, a.ev[1].name, &n), "across");
	assert_int_equal(a.ev[1].ts, 100);
	assert_int_equal(a.ev[1].dur, 100);
	assert_true(a.ev[1].flags & PT_EV_CLIPPED);
	assert_int_equal(a.ev[2].name, a.ev[0].name); /* "b" is one string in a */
	assert_int_equal(a.ev[2].ts, 600);
	assert_int_equal(a.ev[2].dur, 100);
	assert_int_equal(a.nlanes, 2);
	assert_int_equal(a.lanes[a.ev[2].lane].pid, 7);
	assert_int_equal(a.lanes[a.ev[2].lane].tid, 8);
	assert_int_equal(a.rank, 3); /* a had a header: kept */
	assert_int_equal(a.world_size, -1);
	pt_store_free(&b);
	pt_store_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_keys),
		cmocka_unit_test(test_needed_only_when_a_key_repeats),
		cmocka_unit_test(test_append_shifts_clips_and_reinterns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
