/*
 * test_seqmatch.c - collective instances matched by (process group,
 * sequence number) (docs/diagnose.md "Lockstep"): the 3 gloo ranks of
 * tests/data/torch2_gloo_fr, whose gloo ops get their Flight Recorder
 * entries' numbers; a worker whose window starts one collective later
 * matched by seq exactly as if every window had started there (also when
 * its first op has no numbers); the same
 * windows with the numbers taken away matched by position instead (one
 * collective off); a job where one worker has no numbers falls back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "perftracker.h"
#include "analysis/collectives.h"
#include "util/xalloc.h"

#ifndef PT_DATA_DIR
#define PT_DATA_DIR "tests/data"
#endif

static const char *const files[3] = {
	"vm_0_18241.json.gz", "vm_1_18242.json.gz", "vm_2_18243.json.gz",
};

static void load(pt_summary **s)
{
	size_t i;

	for (i = 0; i < 3; i++) {
		char path[512];
		pt_error err;
		snprintf(path, sizeof(path), "%s/torch2_gloo_fr/%s",
			 getenv("PT_DATA") ? getenv("PT_DATA") : PT_DATA_DIR, files[i]);
		pt_error_clear(&err);
		s[i] = pt_summary_from_trace(path, NULL, &err);
		if (!s[i])
			fail_msg("%s: %s", path, err.msg);
	}
}

static void free3(pt_summary **s)
{
	size_t i;

	for (i = 0; i < 3; i++)
		pt_summary_free(s[i]);
}

/* Take instance k out of s, as if its window had not held it: the
 * instance, its causes and its place on the critical path. */
static void drop(pt_summary *s, uint32_t k)
{
	size_t i, j, st;

	assert_true(k < s->ncoll);
	memmove(&s->coll[k], &s->coll[k + 1], (s->ncoll - k - 1) * sizeof(*s->coll));
	s->ncoll--;
	for (i = j = 0; i < s->ncoll_cause; i++) {
		pt_coll_cause c = s->coll_cause[i];
		if (c.inst == k)
			continue;
		if (c.inst > k)
			c.inst--;
		s->coll_cause[j++] = c;
	}
	s->ncoll_cause = j;
	for (st = 0; s->cpath && st < s->cpath->nsteps; st++) {
		pt_cp_step *p = &s->cpath->steps[st];
		for (i = j = 0; i < p->ninst; i++) {
			if (p->inst[i] == k)
				continue;
			p->inst_ms[j] = p->inst_ms[i];
			p->inst[j++] = p->inst[i] > k ? p->inst[i] - 1 : p->inst[i];
		}
		p->ninst = j;
	}
}

/* Forget the numbers: a summary written before them. */
static void strip(pt_summary *s)
{
	size_t i;

	for (i = 0; i < s->ncoll_pgs; i++)
		x_free(s->coll_pgs[i]);
	x_free(s->coll_pgs);
	s->coll_pgs = NULL;
	s->ncoll_pgs = 0;
	for (i = 0; i < s->ncoll; i++) {
		s->coll[i].pg = UINT32_MAX;
		s->coll[i].seq = -1;
	}
}

static pt_report *diag(pt_summary **s)
{
	pt_error err;
	pt_report *r;

	pt_error_clear(&err);
	r = pt_diagnose(s, 3, NULL, &err);
	if (!r)
		fail_msg("pt_diagnose: %s", err.msg);
	return r;
}

static const pt_rv *lget(const pt_report *r, const char *a, const char *b, const char *c)
{
	const pt_rv *v = pt_rv_get(pt_report_root_c(r), "Lockstep");

	if (v && a)
		v = pt_rv_get(v, a);
	if (v && b)
		v = pt_rv_get(v, b);
	if (v && c)
		v = pt_rv_get(v, c);
	assert_non_null(v);
	return v;
}

static double wnum(const pt_report *r, int w, const char *k)
{
	const pt_rv *v = lget(r, "workers", files[w], k);

	return v->type == PT_RV_INT ? (double)v->i : v->num;
}

/* Every worker's waits, blame, last arrivals and straggler flag equal. */
static void same_waits(const pt_report *a, const pt_report *b)
{
	static const char *const k[] = {
		"waited for others (ms)", "others waited for it (ms)", "last arrivals",
		"clock offset (us)",
	};
	int w;
	size_t i;

	for (w = 0; w < 3; w++) {
		for (i = 0; i < sizeof(k) / sizeof(k[0]); i++)
			assert_true(wnum(a, w, k[i]) == wnum(b, w, k[i]));
		assert_int_equal(lget(a, "workers", files[w], "straggler")->type,
				 lget(b, "workers", files[w], "straggler")->type);
	}
	assert_int_equal(lget(a, "instances", NULL, NULL)->i, lget(b, "instances", NULL, NULL)->i);
}

static const char *matched_by(const pt_report *r)
{
	return lget(r, "matched by", NULL, NULL)->str;
}

/* The reader's numbers reach the summary: each rank's 15 gloo ops carry
 * process group "0" and seq 16..30 in order; the full set is matched by
 * them and names rank 2 (80 ms of sleep a step) as the straggler. */
static void test_full_set(void **state)
{
	pt_summary *s[3];
	pt_report *r;
	size_t i, k;

	(void)state;
	load(s);
	for (i = 0; i < 3; i++) {
		assert_int_equal(s[i]->ncoll, 15);
		assert_int_equal(s[i]->ncoll_pgs, 1);
		assert_string_equal(s[i]->coll_pgs[0], "0");
		assert_string_equal(s[i]->torch, "2.15.0+cu132");
		for (k = 0; k < 15; k++) {
			assert_int_equal(s[i]->coll[k].pg, 0);
			assert_int_equal(s[i]->coll[k].seq, 16 + (int64_t)k);
		}
	}
	r = diag(s);
	assert_string_equal(matched_by(r), "process group and sequence number");
	assert_int_equal(lget(r, "instances", NULL, NULL)->i, 15);
	assert_int_equal(lget(r, "workers matched", NULL, NULL)->i, 3);
	assert_int_equal(lget(r, "stragglers", NULL, NULL)->n, 1);
	assert_int_equal(pt_rv_get(lget(r, "stragglers", NULL, NULL)->child, "rank")->i, 2);
	assert_true(wnum(r, 2, "others waited for it (ms)") == 276.549);
	assert_true(wnum(r, 0, "waited for others (ms)") == 205.185);
	assert_true(wnum(r, 1, "waited for others (ms)") == 124.648);
	assert_true(wnum(r, 2, "waited for others (ms)") == 9.937);
	pt_report_free(r);
	free3(s);
}

/* Rank 0's window starts one collective later: matched by seq, the
 * result is that of every window starting there. */
static void test_shifted_window(void **state)
{
	pt_summary *a[3], *b[3];
	pt_report *ra, *rb;
	size_t i;

	(void)state;
	load(a);
	load(b);
	for (i = 0; i < 3; i++)
		drop(a[i], 0);
	drop(b[0], 0);
	ra = diag(a);
	rb = diag(b);
	assert_string_equal(matched_by(rb), "process group and sequence number");
	assert_int_equal(lget(rb, "instances", NULL, NULL)->i, 14);
	same_waits(ra, rb);
	assert_int_equal(pt_rv_get(lget(rb, "stragglers", NULL, NULL)->child, "rank")->i, 2);
	/* rank 0's first op without numbers (its entry created before the
	 * Flight Recorder window): the same */
	free3(b);
	pt_report_free(rb);
	load(b);
	b[0]->coll[0].seq = -1;
	b[0]->coll[0].pg = UINT32_MAX;
	rb = diag(b);
	assert_string_equal(matched_by(rb), "process group and sequence number");
	same_waits(ra, rb);
	pt_report_free(ra);
	pt_report_free(rb);
	free3(a);
	free3(b);
}

/* Rank 0's window one collective later at both ends: every worker has 14
 * allreduces, so by position they pair one collective apart; by seq the
 * 13 shared calls are matched, as if every window held just those. */
static void test_shifted_both_ends(void **state)
{
	pt_summary *a[3], *b[3];
	pt_report *ra, *rb, *rp;
	size_t i;

	(void)state;
	load(a);
	load(b);
	for (i = 0; i < 3; i++) {
		drop(a[i], 14);
		drop(a[i], 0);
	}
	drop(b[0], 0);
	drop(b[1], 14);
	drop(b[2], 14);
	ra = diag(a);
	rb = diag(b);
	assert_string_equal(matched_by(rb), "process group and sequence number");
	assert_int_equal(lget(rb, "instances", NULL, NULL)->i, 13);
	same_waits(ra, rb);
	for (i = 0; i < 3; i++)
		strip(b[i]);
	rp = diag(b);
	assert_string_equal(matched_by(rp), "position");
	assert_int_equal(lget(rp, "instances", NULL, NULL)->i, 14);
	assert_true(wnum(rp, 0, "waited for others (ms)") != wnum(rb, 0, "waited for others (ms)"));
	pt_report_free(ra);
	pt_report_free(rb);
	pt_report_free(rp);
	free3(a);
	free3(b);
}

/* One worker without numbers (an older summary): position for all, the
 * same result as with none. */
static void test_mixed_falls_back(void **state)
{
	pt_summary *a[3], *b[3];
	pt_report *ra, *rb;
	size_t i;

	(void)state;
	load(a);
	load(b);
	for (i = 0; i < 3; i++)
		strip(a[i]);
	strip(b[1]);
	ra = diag(a);
	rb = diag(b);
	assert_string_equal(matched_by(ra), "position");
	assert_string_equal(matched_by(rb), "position");
	same_waits(ra, rb);
	pt_report_free(ra);
	pt_report_free(rb);
	free3(a);
	free3(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_set),
		cmocka_unit_test(test_shifted_window),
		cmocka_unit_test(test_shifted_both_ends),
		cmocka_unit_test(test_mixed_falls_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
