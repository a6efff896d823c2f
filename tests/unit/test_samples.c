/*
 * test_samples.c - hardware sample series (src/model/samples.c): series
 * identity, ordered appends, window statistics with exact numbers, the
 * "perftracker-hw" JSON round trip (absolute ns times beyond 2^53 must
 * survive exactly), atomic writes, and the reader's validation messages.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <dirent.h>
#include <unistd.h>

#include <cmocka.h>

#include "model/samples.h"
#include "util/json.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define T0 1700000000123456789LL /* > 2^53: not exact as a double */

static void test_series_identity(void **state)
{
	pt_samples h;
	pt_series *a, *b, *c;

	assert_int_equal(pt_samples_init(&h), PT_OK);
	assert_string_equal(h.host, "");
	a = pt_samples_series(&h, "nvlink_tx", 0, NULL, "B/s", 1e11);
	b = pt_samples_series(&h, "nvlink_tx", 1, NULL, "B/s", 1e11);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(h.n, 2);
	c = pt_samples_series(&h, "nvlink_tx", 0, "", "B/s", 1e11);
	assert_ptr_equal(c, &h.s[0]);
	c = pt_samples_series(&h, "nic_tx", -1, "eth0", "B/s", 0);
	assert_non_null(c);
	assert_int_equal(h.n, 3);
	assert_string_equal(h.s[2].label, "eth0");
	assert_ptr_equal(pt_samples_find(&h, "nic_tx", -1, NULL), &h.s[2]);
	assert_ptr_equal(pt_samples_find(&h, "nic_tx", -1, "eth0"), &h.s[2]);
	assert_null(pt_samples_find(&h, "nic_tx", -1, "eth1"));
	assert_null(pt_samples_find(&h, "nvlink_tx", 2, NULL));
	assert_null(pt_samples_find(NULL, "x", 0, NULL));
	assert_null(pt_samples_series(&h, NULL, 0, NULL, "", 0));
	pt_samples_free(&h);
	pt_samples_free(&h); /* zeroed: no-op */
	pt_samples_free(NULL);
}

static void test_add_order(void **state)
{
	pt_samples h;
	pt_series *s;
	int i;

	assert_int_equal(pt_samples_init(&h), PT_OK);
	s = pt_samples_series(&h, "sm_active", 0, NULL, "%", 100);
	for (i = 0; i < 1000; i++)
		assert_int_equal(pt_samples_add(s, T0 + i * 100000LL, i % 100), PT_OK);
	assert_int_equal(s->n, 1000);
	assert_int_equal(pt_samples_add(s, T0 + 999 * 100000LL, 1), PT_OK); /* equal: fine */
	assert_int_equal(pt_samples_add(s, T0, 1), PT_EINVAL);
	assert_int_equal(s->n, 1001);
	assert_int_equal(pt_samples_add(NULL, 0, 0), PT_EINVAL);
	assert_int_equal(pt_samples_lower_bound(s, T0 - 1), 0);
	assert_int_equal(pt_samples_lower_bound(s, T0 + 1), 1);
	assert_int_equal(pt_samples_lower_bound(s, T0 + 100000), 1);
	assert_int_equal(pt_samples_lower_bound(s, T0 + 999 * 100000LL), 999);
	assert_int_equal(pt_samples_lower_bound(s, T0 + 1000 * 100000LL), 1001);
	pt_samples_free(&h);
}

static void test_window_stats(void **state)
{
	pt_samples h;
	pt_series *s;
	double m, sd;
	/* 100 us apart: 10, 20, 30, 40, NaN, 60 (of max 200). */
	static const double v[] = { 10, 20, 30, 40, NAN, 60 };
	int i;

	assert_int_equal(pt_samples_init(&h), PT_OK);
	s = pt_samples_series(&h, "nvlink_tx", 0, NULL, "B/s", 200);
	for (i = 0; i < 6; i++)
		pt_samples_add(s, T0 + i * 100000LL, v[i]);
	/* [t0, t0+400us): 10 20 30 40 -> mean 25, std sqrt(125). */
	assert_int_equal(pt_samples_window_stats(s, T0, T0 + 400000, 0, &m, &sd), 4);
	assert_true(m == 25.0);
	assert_true(fabs(sd - sqrt(125.0)) < 1e-12);
	/* Same in % of max 200: 5 10 15 20 -> mean 12.5, std sqrt(31.25). */
	assert_int_equal(pt_samples_window_stats(s, T0, T0 + 400000, 1, &m, &sd), 4);
	assert_true(m == 12.5);
	assert_true(fabs(sd - sqrt(31.25)) < 1e-12);
	/* End is exclusive, start inclusive; the NaN is skipped: 40, 60. */
	assert_int_equal(pt_samples_window_stats(s, T0 + 300000, T0 + 600000, 0, &m, &sd), 2);
	assert_true(m == 50.0);
	assert_true(sd == 10.0);
	/* Between samples: nothing. */
	assert_int_equal(pt_samples_window_stats(s, T0 + 1, T0 + 99999, 0, &m, &sd), 0);
	assert_true(m == 0 && sd == 0);
	/* Empty or reversed window, NULL series, NULL outputs. */
	assert_int_equal(pt_samples_window_stats(s, T0 + 5, T0 + 5, 0, &m, &sd), 0);
	assert_int_equal(pt_samples_window_stats(s, T0 + 5, T0, 0, &m, &sd), 0);
	assert_int_equal(pt_samples_window_stats(NULL, T0, T0 + 5, 0, &m, &sd), 0);
	assert_int_equal(pt_samples_window_stats(s, T0, T0 + 600000, 0, NULL, NULL), 5);
	/* Constant huge values: std exactly 0 (two-pass, no cancellation). */
	s = pt_samples_series(&h, "pcie_rx", 0, NULL, "B/s", 0);
	for (i = 0; i < 50; i++)
		pt_samples_add(s, T0 + i, 1.23456789e11);
	assert_int_equal(pt_samples_window_stats(s, T0, T0 + 50, 1, &m, &sd), 50);
	assert_true(m == 1.23456789e11); /* max 0: not scaled */
	assert_true(sd == 0);
	pt_samples_free(&h);
}

static void fill(pt_samples *h)
{
	pt_series *s;
	int i;

	assert_int_equal(pt_samples_init(h), PT_OK);
	assert_int_equal(pt_samples_set_str(&h->host, "node-\"7\""), PT_OK);
	assert_int_equal(pt_samples_set_str(&h->source, "nvml+proc"), PT_OK);
	assert_int_equal(pt_samples_set_str(&h->note, "ib: /sys/class/infiniband absent"), PT_OK);
	h->interval_ns = 100000;
	s = pt_samples_series(h, "nvlink_tx", 3, NULL, "B/s", 1.5e11);
	for (i = 0; i < 7; i++)
		pt_samples_add(s, T0 + i * 100003LL, 0.1 * i + 1e10 / 3);
	s = pt_samples_series(h, "throttle", 3, NULL, "", 0);
	pt_samples_add(s, T0 + 5, 4);
	pt_samples_add(s, T0 + 5, NAN);
	pt_samples_series(h, "ib_rx", -1, "mlx5_0:1", "B/s", 2.5e10); /* empty series */
}

static char *tmpdir_path(char *buf, size_t n, const char *name)
{
	const char *t = getenv("TMPDIR");

	snprintf(buf, n, "%s/pt_samples_%ld_%s", t && *t ? t : "/tmp", (long)getpid(), name);
	return buf;
}

static void test_round_trip(void **state)
{
	pt_samples a, b;
	pt_error err;
	char path[512];
	size_t i, j;

	fill(&a);
	tmpdir_path(path, sizeof(path), "rt.json");
	pt_error_clear(&err);
	assert_int_equal(pt_samples_write_file(&a, path, &err), PT_OK);
	assert_int_equal(pt_samples_read_file(path, &b, &err), PT_OK);
	assert_string_equal(b.host, "node-\"7\"");
	assert_string_equal(b.source, "nvml+proc");
	assert_string_equal(b.note, "ib: /sys/class/infiniband absent");
	assert_int_equal(b.interval_ns, 100000);
	assert_int_equal(b.n, a.n);
	for (i = 0; i < a.n; i++) {
		assert_string_equal(b.s[i].name, a.s[i].name);
		assert_string_equal(b.s[i].label, a.s[i].label);
		assert_string_equal(b.s[i].unit, a.s[i].unit);
		assert_int_equal(b.s[i].device, a.s[i].device);
		assert_true(b.s[i].max == a.s[i].max);
		assert_int_equal(b.s[i].n, a.s[i].n);
		for (j = 0; j < a.s[i].n; j++) {
			assert_int_equal(b.s[i].t_ns[j], a.s[i].t_ns[j]); /* exact past 2^53 */
			if (isnan(a.s[i].v[j]))
				assert_true(isnan(b.s[i].v[j]));
			else
				assert_true(b.s[i].v[j] == a.s[i].v[j]);
		}
	}
	assert_int_equal(b.s[0].t_ns[6], T0 + 6 * 100003LL);
	/* No temporary left behind. */
	{
		char dir[512], *slash;
		DIR *d;
		struct dirent *e;
		char pre[128];

		snprintf(dir, sizeof(dir), "%s", path);
		slash = strrchr(dir, '/');
		*slash = 0;
		snprintf(pre, sizeof(pre), "%s.tmp", slash + 1);
		d = opendir(dir);
		assert_non_null(d);
		while ((e = readdir(d)))
			assert_null(strstr(e->d_name, pre));
		closedir(d);
	}
	unlink(path);
	pt_samples_free(&a);
	pt_samples_free(&b);
}

static void test_compact_text(void **state)
{
	pt_samples h;
	pt_series *s;
	pt_sb sb = {0};

	assert_int_equal(pt_samples_init(&h), PT_OK);
	pt_samples_set_str(&h.host, "n1");
	pt_samples_set_str(&h.source, "nsys");
	h.interval_ns = 100000;
	s = pt_samples_series(&h, "sm_active", 0, NULL, "%", 100);
	pt_samples_add(s, T0, 12.5);
	pt_samples_add(s, T0 + 100000, 0);
	assert_int_equal(pt_samples_to_json(&h, &sb), PT_OK);
	assert_string_equal(sb.buf,
			    "{\"format\":\"perftracker-hw\",\"version\":1,\"host\":\"n1\","
			    "\"source\":\"nsys\",\"note\":\"\",\"interval_ns\":100000,\"series\":["
			    "{\"name\":\"sm_active\",\"device\":0,\"label\":\"\",\"unit\":\"%\","
			    "\"max\":100.0,\"t0\":\"1700000000123456789\",\"dt\":[0,100000],"
			    "\"v\":[12.5,0.0]}]}");
	pt_sb_free(&sb);
	pt_samples_free(&h);
}

/* Parse text, expect failure with code and a message containing want. */
static void bad(const char *text, int code, const char *want)
{
	pt_samples h;
	pt_error err;
	int rc;

	pt_error_clear(&err);
	rc = pt_samples_parse(text, strlen(text), &h, &err);
	if (rc != code || !strstr(err.msg, want))
		fail_msg("'%s': rc %d msg '%s', want %d '%s'", text, rc, err.msg, code, want);
	assert_null(h.s); /* freed on error */
}

#define HDR "{\"format\":\"perftracker-hw\",\"version\":1,"

static void test_validation(void **state)
{
	pt_samples h;
	pt_error err;
	const char *ok = HDR "\"series\":[{\"name\":\"x\",\"t0\":\"-5\",\"dt\":[0,2],\"v\":[1,null]}]}";

	pt_error_clear(&err);
	assert_int_equal(pt_samples_parse(ok, strlen(ok), &h, &err), PT_OK);
	assert_int_equal(h.n, 1);
	assert_int_equal(h.s[0].device, -1); /* default */
	assert_int_equal(h.s[0].t_ns[1], -3);
	assert_true(isnan(h.s[0].v[1]));
	pt_samples_free(&h);

	bad("{\"format\":\"perftracker-hw\",", PT_EPARSE, "");
	bad("[]", PT_EFORMAT, "not an object");
	bad("{\"format\":\"perftracker-summary\",\"version\":1}", PT_EFORMAT,
	    "not a perftracker-hw file");
	bad("{\"format\":\"perftracker-hw\"}", PT_EFORMAT, "missing 'version'");
	bad(HDR "\"series\":[]}" "x", PT_EPARSE, "");
	bad("{\"format\":\"perftracker-hw\",\"version\":2,\"series\":[]}", PT_EFORMAT,
	    "version 2 is newer");
	bad("{\"format\":\"perftracker-hw\",\"version\":0.5,\"series\":[]}", PT_EFORMAT,
	    "bad version");
	bad(HDR "\"host\":3,\"series\":[]}", PT_EFORMAT, "'host' is not a string");
	bad(HDR "\"interval_ns\":-1,\"series\":[]}", PT_EFORMAT, "bad 'interval_ns'");
	bad(HDR "\"series\":{}}", PT_EFORMAT, "missing 'series' array");
	bad(HDR "\"series\":[1]}", PT_EFORMAT, "series 0: not an object");
	bad(HDR "\"series\":[{\"t0\":\"1\",\"dt\":[],\"v\":[]}]}", PT_EFORMAT,
	    "series 0: missing 'name'");
	bad(HDR "\"series\":[{\"name\":\"\",\"t0\":\"1\",\"dt\":[],\"v\":[]}]}", PT_EFORMAT,
	    "empty 'name'");
	bad(HDR "\"series\":[{\"name\":\"x\",\"t0\":1,\"dt\":[],\"v\":[]}]}", PT_EFORMAT,
	    "'t0' is not a string");
	bad(HDR "\"series\":[{\"name\":\"x\",\"t0\":\"1x\",\"dt\":[],\"v\":[]}]}", PT_EFORMAT,
	    "'t0' is not an integer");
	bad(HDR "\"series\":[{\"name\":\"x\",\"t0\":\"99999999999999999999\",\"dt\":[],\"v\":[]}]}",
	    PT_EFORMAT, "'t0' is not an integer");
	bad(HDR "\"series\":[{\"name\":\"x\",\"device\":1.5,\"t0\":\"1\",\"dt\":[],\"v\":[]}]}",
	    PT_EFORMAT, "bad 'device'");
	bad(HDR "\"series\":[{\"name\":\"x\",\"max\":-1,\"t0\":\"1\",\"dt\":[],\"v\":[]}]}",
	    PT_EFORMAT, "negative 'max'");
	bad(HDR "\"series\":[{\"name\":\"x\",\"t0\":\"1\",\"v\":[]}]}", PT_EFORMAT,
	    "'dt' is not an array");
	bad(HDR "\"series\":[{\"name\":\"x\",\"t0\":\"1\",\"dt\":[]}]}", PT_EFORMAT,
	    "'v' is not an array");
	bad(HDR "\"series\":[{\"name\":\"x\",\"t0\":\"1\",\"dt\":[0],\"v\":[]}]}", PT_EFORMAT,
	    "'dt' has 1 values, 'v' has 0");
	bad(HDR "\"series\":[{\"name\":\"x\",\"t0\":\"1\",\"dt\":[0,-1],\"v\":[1,2]}]}",
	    PT_EFORMAT, "series 0: 'dt' value 1 is not a non-negative integer");
	bad(HDR "\"series\":[{\"name\":\"x\",\"t0\":\"1\",\"dt\":[0,0.5],\"v\":[1,2]}]}",
	    PT_EFORMAT, "'dt' value 1");
	bad(HDR "\"series\":[{\"name\":\"x\",\"t0\":\"1\",\"dt\":[0],\"v\":[\"1\"]}]}",
	    PT_EFORMAT, "'v' value 0 is not a number");
	bad(HDR "\"series\":[{\"name\":\"x\",\"t0\":\"9223372036854775807\",\"dt\":[0,1],"
	    "\"v\":[1,2]}]}", PT_EFORMAT, "time overflows at sample 1");
	bad(HDR "\"series\":[{\"name\":\"x\",\"t0\":\"1\",\"dt\":[],\"v\":[]},"
	    "{\"name\":\"x\",\"t0\":\"1\",\"dt\":[],\"v\":[]}]}", PT_EFORMAT,
	    "series 1: duplicate series 'x' device -1");
}

static void test_file_errors(void **state)
{
	pt_samples h;
	pt_error err;
	char path[512], msg[1024];
	FILE *f;

	pt_error_clear(&err);
	assert_int_equal(pt_samples_read_file("/nonexistent/hw.json", &h, &err), PT_EIO);
	assert_string_equal(err.subject, "/nonexistent/hw.json");
	assert_non_null(strstr(err.msg, "cannot open"));

	tmpdir_path(path, sizeof(path), "bad.json");
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"format\":\"perftracker-hw\",\"version\":1,\"series\":[}", f);
	fclose(f);
	pt_error_clear(&err);
	assert_int_equal(pt_samples_read_file(path, &h, &err), PT_EPARSE);
	assert_int_equal(err.offset, 49);
	pt_error_format(&err, msg, sizeof(msg));
	assert_non_null(strstr(msg, path));
	assert_non_null(strstr(msg, "(at byte 49)"));

	f = fopen(path, "w");
	fputs(HDR "\"series\":[{\"name\":\"x\",\"t0\":\"1\",\"dt\":[0],\"v\":[]}]}", f);
	fclose(f);
	pt_error_clear(&err);
	assert_int_equal(pt_samples_read_file(path, &h, &err), PT_EFORMAT);
	assert_string_equal(err.subject, path);
	assert_int_equal(err.offset, -1);
	unlink(path);

	/* Writing into a missing folder: PT_EIO naming the file. */
	pt_samples_init(&h);
	pt_error_clear(&err);
	assert_int_equal(pt_samples_write_file(&h, "/nonexistent/dir/hw.json", &err), PT_EIO);
	assert_string_equal(err.subject, "/nonexistent/dir/hw.json");
	assert_non_null(strstr(err.msg, "cannot write"));
	pt_samples_free(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_series_identity),
		cmocka_unit_test(test_add_order),
		cmocka_unit_test(test_window_stats),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_compact_text),
		cmocka_unit_test(test_validation),
		cmocka_unit_test(test_file_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
