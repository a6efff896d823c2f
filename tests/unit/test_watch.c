/*
 * test_watch.c - the watch's reader and detection (src/watch, docs/watch.md)
 * on lines written the way the collector writes them: exact lateness,
 * waiting, blame and score for a planted late rank; persistence (a
 * one-step blip and a jittery balanced job flag nobody); NCCL-style
 * start/done times; files read incrementally across partial lines and a
 * rotation; the node file's round trip.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>

#include "watch/watch.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "testutil.h"

#define BASE 1796486000000000LL  /* µs */
#define STEP 100000LL            /* 100 ms steps */

static void feed(pt_watch *w, const char *wid, const char *line)
{
	assert_int_equal(pt_watch_feed_line(w, wid, line, strlen(line), NULL), PT_OK);
}

static void header(pt_watch *w, int rank)
{
	char wid[32], line[256];

	snprintf(wid, sizeof(wid), "h_%d_%d", rank, 100 + rank);
	snprintf(line, sizeof(line),
		 "{\"format\":\"perftracker-watch\",\"version\":1,\"id\":\"%s\",\"rank\":%d,"
		 "\"world\":4,\"local_rank\":%d,\"host\":\"h\",\"pid\":%d}", wid, rank, rank, 100 + rank);
	feed(w, wid, line);
	feed(w, wid, "{\"fr\":\"on\",\"why\":\"\"}");
}

/* Step s (from 1) of rank r: one all-reduce, seq s, arriving off µs after
 * the step's start. */
static void step(pt_watch *w, int r, int64_t s, int64_t off)
{
	char wid[32], line[512];
	int64_t t0 = BASE + (s - 1) * STEP;

	snprintf(wid, sizeof(wid), "h_%d_%d", r, 100 + r);
	snprintf(line, sizeof(line),
		 "{\"s\":%lld,\"t0\":%lld,\"t1\":%lld,\"c\":[[\"0\",%lld,\"gloo:all_reduce\",%lld,-1,-1]]}",
		 (long long)s, (long long)t0, (long long)(t0 + STEP), (long long)s,
		 (long long)(t0 + off));
	feed(w, wid, line);
}

static const pt_watch_rank *rank_of(pt_watch *w, int r)
{
	size_t n;
	const pt_watch_rank *v = pt_watch_ranks(w, &n);

	assert_int_equal(n, 4);
	assert_int_equal(v[r].rank, r);
	return &v[r];
}

/* Rank 2 reaches every all-reduce 30 ms after the other three (at 50 ms
 * into each 100 ms step).  Per instance: the median arrival is 50 ms, so
 * rank 2 is 30 ms late; the three others wait 30 ms each; in the last
 * interval [50, 80] ms the 3 arrived wait and rank 2 alone is blamed:
 * 3 x 30 = 90 ms per step, all of the waiting: score 1.  Over 20 steps
 * (a 2 s span): 1.8 s blamed, 54 GPU-seconds a minute. */
static void test_late_rank_exact(void **state)
{
	pt_watch *w = pt_watch_new(NULL);
	const pt_watch_rank *r;

	(void)state;
	for (int k = 0; k < 4; k++)
		header(w, k);
	for (int64_t s = 1; s <= 20; s++)
		for (int k = 0; k < 4; k++)
			step(w, k, s, k == 2 ? 80000 : 50000);
	assert_int_equal(pt_watch_eval(w, 0), PT_OK);
	r = rank_of(w, 2);
	assert_string_equal(r->id, "h_2_102");
	assert_int_equal(r->steps, 20);
	assert_true(r->score == 1.0);
	assert_true(fabs(r->late_s - 0.030) < 1e-12);
	assert_true(fabs(r->late_max_s - 0.030) < 1e-12);
	assert_string_equal(r->at_name, "gloo:all_reduce");
	assert_string_equal(r->at_pg, "0");
	assert_int_equal(r->at_seq, 1);
	assert_true(fabs(r->step_s - 0.1) < 1e-12);
	assert_true(r->wait_s == 0);
	assert_true(fabs(r->lost_gpu_s_per_min - 54.0) < 1e-9);
	assert_int_equal(r->flagged, 0);  /* 2 s of data: not persistent yet */
	for (int k = 0; k < 4; k++) {
		if (k == 2)
			continue;
		r = rank_of(w, k);
		assert_true(r->score == 0);
		assert_true(fabs(r->wait_s - 0.030) < 1e-12);
		assert_true(r->late_s == 0);
		assert_string_equal(r->fr, "on");
	}
	/* Persistence: the condition held at the first evaluation (after step
	 * 20, data time 2.0 s); 10 s and 10 steps later (step 120) it is a
	 * straggler, since the first of its late steps. */
	for (int64_t s = 21; s <= 150; s++) {
		for (int k = 0; k < 4; k++)
			step(w, k, s, k == 2 ? 80000 : 50000);
		assert_int_equal(pt_watch_eval(w, 0), PT_OK);
		r = rank_of(w, 2);
		assert_int_equal(r->flagged, s >= 120);
		assert_int_equal(rank_of(w, 0)->flagged, 0);
	}
	r = rank_of(w, 2);
	assert_int_equal(r->since_step, 1);
	assert_true(r->since == BASE / 1e6);
	pt_watch_free(w);
}

/* A condition that held for 20 s then stopped: the rank stays flagged
 * persist_s more, then is cleared; one late step among 150 balanced ones
 * is a blip: nobody. */
static void test_blip_and_hysteresis(void **state)
{
	pt_watch *w = pt_watch_new(NULL);
	int64_t s;

	(void)state;
	for (int k = 0; k < 4; k++)
		header(w, k);
	for (s = 1; s <= 150; s++) {
		for (int k = 0; k < 4; k++)
			step(w, k, s, k == 1 && s == 75 ? 90000 : 50000 + k * 100);
		assert_int_equal(pt_watch_eval(w, 0), PT_OK);
		for (int k = 0; k < 4; k++)
			assert_int_equal(rank_of(w, k)->flagged, 0);
	}
	for (; s <= 400; s++) {
		int late = s <= 350;
		for (int k = 0; k < 4; k++)
			step(w, k, s, k == 3 && late ? 90000 : 50000);
		assert_int_equal(pt_watch_eval(w, 0), PT_OK);
		if (s == 349)
			assert_int_equal(rank_of(w, 3)->flagged, 1);
	}
	/* 5 s after the lateness stopped, the 30 s window still holds
	 * enough of it to keep the condition; the flag stays. */
	assert_int_equal(rank_of(w, 3)->flagged, 1);
	for (; s <= 900; s++) {
		for (int k = 0; k < 4; k++)
			step(w, k, s, 50000);
		assert_int_equal(pt_watch_eval(w, 0), PT_OK);
	}
	assert_int_equal(rank_of(w, 3)->flagged, 0);
	assert_int_equal(rank_of(w, 3)->since_step, -1);
	pt_watch_free(w);
}

/* One long stall: rank 1 reaches the all-reduce of step 75 nine seconds
 * late (a checkpoint written by one rank).  The others' waiting fills the
 * window with blame on rank 1 (score near 1 for 30 s), but it is late in
 * one step, not step after step: never a straggler. */
static void test_one_long_stall_is_a_blip(void **state)
{
	pt_watch *w = pt_watch_new(NULL);
	double maxscore = 0;

	(void)state;
	for (int k = 0; k < 4; k++)
		header(w, k);
	for (int64_t s = 1; s <= 500; s++) {
		for (int k = 0; k < 4; k++)
			step(w, k, s, k == 1 && s == 75 ? 9000000 : 50000 + k * 100);
		assert_int_equal(pt_watch_eval(w, 0), PT_OK);
		for (int k = 0; k < 4; k++)
			assert_int_equal(rank_of(w, k)->flagged, 0);
		if (rank_of(w, 1)->score > maxscore)
			maxscore = rank_of(w, 1)->score;
	}
	assert_true(maxscore > 0.99);  /* the blame was there */
	pt_watch_free(w);
}

/* A balanced job on a loaded host: every rank's arrival jitters by up to
 * 20 ms each step (a fixed pseudo-random sequence): scores near 1/4,
 * nobody flagged in 3000 steps (5 minutes). */
static void test_balanced_jitter_never_flags(void **state)
{
	pt_watch *w = pt_watch_new(NULL);
	uint64_t x = 12345;
	double maxscore = 0;

	(void)state;
	for (int k = 0; k < 4; k++)
		header(w, k);
	for (int64_t s = 1; s <= 3000; s++) {
		for (int k = 0; k < 4; k++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			step(w, k, s, 40000 + (int64_t)((x >> 33) % 20000));
		}
		if (s % 10)
			continue;
		assert_int_equal(pt_watch_eval(w, 0), PT_OK);
		for (int k = 0; k < 4; k++) {
			assert_int_equal(rank_of(w, k)->flagged, 0);
			if (s > 300 && rank_of(w, k)->score > maxscore)
				maxscore = rank_of(w, k)->score;
		}
	}
	assert_true(maxscore < 0.5);
	pt_watch_free(w);
}

/* NCCL: arrival is when the kernel started; the time waited is its run
 * from start to completion. */
static void test_nccl_start_done(void **state)
{
	pt_watch *w = pt_watch_new(NULL);
	char line[512];

	(void)state;
	for (int k = 0; k < 4; k++)
		header(w, k);
	for (int k = 0; k < 4; k++) {
		char wid[32];
		int64_t start = BASE + (k == 0 ? 70000 : 20000);
		snprintf(wid, sizeof(wid), "h_%d_%d", k, 100 + k);
		/* created early on every rank (the CPU ran ahead); rank 0's
		 * kernel started 50 ms after the others' */
		snprintf(line, sizeof(line),
			 "{\"s\":2,\"t0\":%lld,\"t1\":%lld,\"c\":[[\"0\",7,\"nccl:all_reduce\",%lld,"
			 "%lld,%lld]]}", (long long)BASE, (long long)(BASE + STEP),
			 (long long)(BASE + 1000), (long long)start, (long long)(BASE + 75000));
		feed(w, wid, line);
	}
	assert_int_equal(pt_watch_eval(w, 0), PT_OK);
	assert_true(fabs(rank_of(w, 0)->late_s - 0.050) < 1e-12);
	assert_true(rank_of(w, 0)->score == 1.0);
	assert_true(fabs(rank_of(w, 0)->wait_s - 0.005) < 1e-12);
	assert_true(fabs(rank_of(w, 1)->wait_s - 0.055) < 1e-12);
	assert_int_equal(rank_of(w, 1)->at_seq, 7);
	pt_watch_free(w);
}

static void append(const char *path, const char *text)
{
	FILE *f = fopen(path, "a");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A file read as it grows: a partial line waits for its end; a bad line
 * is skipped; a rotated file is read from its start; not a watch file:
 * PT_EFORMAT naming it. */
static void test_read_file_incremental(void **state)
{
	char dir[64], path[128], old[140];
	pt_watch *w = pt_watch_new(NULL);
	const pt_watch_rank *v;
	size_t n;
	pt_error err;

	(void)state;
	tu_tmpdir(dir, sizeof(dir), "pt_test_watch");
	snprintf(path, sizeof(path), "%s/h_0_7.jsonl", dir);
	append(path, "{\"format\":\"perftracker-watch\",\"version\":1,\"id\":\"h_0_7\",\"rank\":0,"
		     "\"world\":1,\"local_rank\":0,\"host\":\"h\",\"pid\":7}\n"
		     "{\"fr\":\"none\",\"why\":\"no process group yet\"}\n"
		     "{\"s\":2,\"t0\":1000,\"t1\":2000}\n{\"s\":3,\"t0\":2000,");
	assert_int_equal(pt_watch_read_file(w, path, NULL), PT_OK);
	assert_int_equal(pt_watch_eval(w, 0), PT_OK);
	v = pt_watch_ranks(w, &n);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].step, 2);
	assert_string_equal(v[0].fr, "none");
	assert_string_equal(v[0].why, "no process group yet");
	append(path, "\"t1\":4000}\nnot json\n");
	assert_int_equal(pt_watch_read_file(w, path, NULL), PT_OK);
	assert_int_equal(pt_watch_eval(w, 0), PT_OK);
	v = pt_watch_ranks(w, &n);
	assert_int_equal(v[0].step, 3);
	assert_int_equal(v[0].steps, 2);
	assert_true(fabs(v[0].step_s - 0.0015) < 1e-12);
	snprintf(old, sizeof(old), "%s.1", path);
	assert_int_equal(rename(path, old), 0);
	append(path, "{\"format\":\"perftracker-watch\",\"version\":1,\"id\":\"h_0_7\",\"rank\":0,"
		     "\"world\":1,\"local_rank\":0,\"host\":\"h\",\"pid\":7}\n"
		     "{\"s\":4,\"t0\":4000,\"t1\":9000}\n");
	assert_int_equal(pt_watch_read_file(w, path, NULL), PT_OK);
	assert_int_equal(pt_watch_eval(w, 0), PT_OK);
	v = pt_watch_ranks(w, &n);
	assert_int_equal(v[0].step, 4);
	assert_int_equal(v[0].steps, 3);
	snprintf(old, sizeof(old), "%s/x_1_2.jsonl", dir);
	append(old, "{\"format\":\"something else\"}\n");
	pt_error_clear(&err);
	assert_int_equal(pt_watch_read_file(w, old, &err), PT_EFORMAT);
	assert_string_equal(err.subject, old);
	pt_watch_drop(w, "h_0_7");
	assert_int_equal(pt_watch_eval(w, 0), PT_OK);
	pt_watch_ranks(w, &n);
	assert_int_equal(n, 1);  /* x_1_2 is known, h_0_7 dropped */
	pt_watch_free(w);
	tu_rm_rf(dir);
}

static void test_node_file_round_trip(void **state)
{
	char dir[64];
	pt_watch *w = pt_watch_new(NULL);
	const pt_watch_rank *v;
	pt_watch_rank *back;
	size_t n, m;

	(void)state;
	for (int k = 0; k < 4; k++)
		header(w, k);
	for (int64_t s = 1; s <= 20; s++)
		for (int k = 0; k < 4; k++)
			step(w, k, s, k == 2 ? 80000 : 50000);
	assert_int_equal(pt_watch_eval(w, 0), PT_OK);
	v = pt_watch_ranks(w, &n);
	tu_tmpdir(dir, sizeof(dir), "pt_test_watch_node");
	assert_int_equal(pt_watch_node_write(dir, "h", 1796486000.5, v, n, NULL), PT_OK);
	assert_int_equal(pt_watch_all(dir, &back, &m, NULL), PT_OK);
	assert_int_equal(m, 4);
	assert_string_equal(back[2].id, "h_2_102");
	assert_true(back[2].score == 1.0);
	assert_true(fabs(back[2].late_s - 0.03) < 1e-12);
	assert_true(fabs(back[0].wait_s - 0.03) < 1e-12);
	assert_int_equal(back[2].at_seq, 1);
	assert_string_equal(back[2].at_name, "gloo:all_reduce");
	assert_int_equal(back[2].since_step, -1);
	x_free(back);
	tu_rm_rf(dir);
	pt_watch_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_late_rank_exact),
		cmocka_unit_test(test_blip_and_hysteresis),
		cmocka_unit_test(test_one_long_stall_is_a_blip),
		cmocka_unit_test(test_balanced_jitter_never_flags),
		cmocka_unit_test(test_nccl_start_done),
		cmocka_unit_test(test_read_file_incremental),
		cmocka_unit_test(test_node_file_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
