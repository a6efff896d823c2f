/*
 * storefx.h - the hand-built pt_store fixture the analysis unit tests share
 * (test_analysis.c, test_critpath.c): one process with two CPU threads and
 * two GPU streams, and a writer of one event in µs.  No reader is involved:
 * each test adds exactly the events it reasons about.  Include after
 * <cmocka.h> and "analysis/analysis.h".
 */
#ifndef PT_STOREFX_H
#define PT_STOREFX_H

#include <stdlib.h>
#include <string.h>

/* The tests speak µs; the store holds ns. */
#define US 1000LL

typedef struct fx {
	pt_store st;
	uint32_t cpu, cpu2, gpu, gpu2; /* threads 1 and 2 of pid 100; streams 7 and 13 */
} fx;

static int setup(void **state)
{
	fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(pt_store_init(&f->st), PT_OK);
	f->cpu = pt_store_lane(&f->st, 100, 1, 0);
	f->cpu2 = pt_store_lane(&f->st, 100, 2, 0);
	f->gpu = pt_store_lane(&f->st, 0, 7, 1);
	f->gpu2 = pt_store_lane(&f->st, 0, 13, 1);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fx *f = *state;

	pt_store_free(&f->st);
	free(f);
	return 0;
}

/* Add one event.  stack (a CPU frame's "Call stack", NULL for none) and
 * corr (a launch's or GPU event's correlation id) share the event's storage:
 * give one of them. */
static inline void fx_event(fx *f, int kind, uint32_t lane, int64_t ts_us, int64_t dur_us,
			    const char *name, const char *stack, uint64_t bytes, uint16_t group,
			    uint32_t corr)
{
	pt_event e;

	memset(&e, 0, sizeof(e));
	e.kind = (uint8_t)kind;
	e.lane = lane;
	e.ts = ts_us * US;
	e.dur = dur_us * US;
	e.name = pt_strtab_intern(f->st.strs, name, strlen(name));
	if (stack)
		e.stack = pt_strtab_intern(f->st.strs, stack, strlen(stack));
	else
		e.corr = corr;
	e.bytes = bytes;
	e.group = group;
	e.flags = f->st.lanes[lane].gpu ? PT_EV_GPU : 0;
	assert_int_equal(pt_store_add(&f->st, &e), PT_OK);
}

#endif
