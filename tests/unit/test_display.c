/*
 * test_display.c - unit tests for src/display: the page writer (the report
 * is embedded so that no name in it can end the <script> block; bad JSON is
 * refused with its byte offset; files are written whole) and the HTTP server
 * (path resolution refuses traversal, links out of the root and hidden
 * files; content types; a live server on a free loopback port answers 200,
 * 404 and 403 and refuses a port already in use).
 */
#pragma GCC diagnostic ignored "-Wformat-truncation" /* test paths are short */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

#include "report/page.h"
#include "display/server.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

static char tmpdir[PATH_MAX];
static char rootreal[PATH_MAX];

static void put_file(const char *dir, const char *name, const char *text)
{
	char p[PATH_MAX];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	char p[PATH_MAX];

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/pt_display_test.XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(p, sizeof(p), "%s/root", tmpdir);
	mkdir(p, 0755);
	put_file(p, "index.html", "<!DOCTYPE html><p>hi</p>\n");
	put_file(p, "report.json", "{\"a\": 1}\n");
	put_file(p, ".hidden", "secret\n");
	put_file(tmpdir, "outside.txt", "outside\n");
	snprintf(p, sizeof(p), "%s/root/sub", tmpdir);
	mkdir(p, 0755);
	put_file(p, "index.html", "sub\n");
	snprintf(p, sizeof(p), "%s/root/sub2", tmpdir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/root/link.txt", tmpdir);
	{
		char target[PATH_MAX];
		snprintf(target, sizeof(target), "%s/outside.txt", tmpdir);
		if (symlink(target, p))
			return -1;
	}
	snprintf(p, sizeof(p), "%s/root/inlink.json", tmpdir);
	if (symlink("report.json", p))
		return -1;
	snprintf(p, sizeof(p), "%s/root", tmpdir);
	if (!realpath(p, rootreal))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* ---- page -------------------------------------------------------------- */

static void test_page_embeds_report_safely(void **state)
{
	const char *json = "{\"k\": \"</script><img src=x onerror=alert(1)>&amp;\", \"n\": [1, 2]}";
	pt_sb sb = { 0 }, empty = { 0 };
	pt_error err;
	const char *at;
	size_t scripts = 0, scripts_tpl = 0;

	pt_error_clear(&err);
	assert_int_equal(pt_page_render(json, strlen(json), &sb, &err), PT_OK);
	assert_int_equal(pt_page_render("{}", 2, &empty, &err), PT_OK);
	/* the report is in, with every '<', '>' and '&' as a \u escape */
	assert_non_null(strstr(sb.buf, "{\"k\":\"\\u003c/script\\u003e\\u003cimg src=x onerror=alert(1)\\u003e\\u0026amp;\",\"n\":[1,2]}"));
	assert_null(strstr(sb.buf, "<img src=x"));
	/* so the page has exactly as many "</script" as the template itself */
	for (at = sb.buf; (at = strstr(at, "</script")); at++)
		scripts++;
	for (at = empty.buf; (at = strstr(at, "</script")); at++)
		scripts_tpl++;
	assert_int_equal(scripts, scripts_tpl);
	/* 2 <, 2 >, 1 & grow by 5 bytes each; the 4 spaces between tokens go */
	assert_int_equal(sb.len, empty.len - 2 + strlen(json) + 5 * 5 - 4);
	assert_int_equal(empty.len, pt_page_template_size() + 2);
	/* self-contained: no script or stylesheet is loaded from anywhere */
	assert_null(strstr(sb.buf, "<script src"));
	assert_null(strstr(sb.buf, "<link rel=\"stylesheet\""));
	assert_non_null(strstr(sb.buf, "id=\"pt-report\""));
	pt_sb_free(&sb);
	pt_sb_free(&empty);
}

static void test_page_refuses_bad_json(void **state)
{
	pt_sb sb = { 0 };
	pt_error err;

	pt_error_clear(&err);
	assert_int_equal(pt_page_render("{\"a\": 1,}", 9, &sb, &err), PT_EPARSE);
	assert_int_equal(err.offset, 8);
	assert_int_equal(sb.len, 0);
	pt_error_clear(&err);
	assert_int_equal(pt_page_render("[1, 2]", 6, &sb, &err), PT_EFORMAT);
	assert_non_null(strstr(err.msg, "not a report"));
	pt_error_clear(&err);
	assert_int_equal(pt_page_render(NULL, 0, &sb, &err), PT_EINVAL);
	pt_sb_free(&sb);
}

static void test_page_build_dir(void **state)
{
	char dir[PATH_MAX], p[PATH_MAX];
	struct stat st;
	pt_error err;

	snprintf(dir, sizeof(dir), "%s/build", tmpdir);
	mkdir(dir, 0755);
	pt_error_clear(&err);
	/* no report.json yet: an error naming the file */
	assert_int_equal(pt_page_build_dir(dir, &err), PT_EIO);
	assert_non_null(strstr(err.subject, "report.json"));
	put_file(dir, "report.json", "{\"workers\": {}, \"x\": \"a<b\"}");
	pt_error_clear(&err);
	assert_int_equal(pt_page_build_dir(dir, &err), PT_OK);
	snprintf(p, sizeof(p), "%s/index.html", dir);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal((size_t)st.st_size, pt_page_template_size() + strlen("{\"workers\":{},\"x\":\"a\\u003cb\"}"));
	snprintf(p, sizeof(p), "%s/app.py", dir);
	assert_int_equal(stat(p, &st), 0);
	assert_true(st.st_mode & S_IXUSR);
	/* no temporary file is left behind */
	snprintf(p, sizeof(p), "%s/index.html.tmp.%ld", dir, (long)getpid());
	assert_int_not_equal(stat(p, &st), 0);
	/* a broken report: the error names report.json and the offset */
	put_file(dir, "report.json", "{\"workers\": ");
	pt_error_clear(&err);
	assert_int_equal(pt_page_build_dir(dir, &err), PT_EPARSE);
	assert_non_null(strstr(err.subject, "report.json"));
	assert_true(err.offset >= 0);
}

/* ---- server: resolution ------------------------------------------------ */

static void test_resolve(void **state)
{
	char out[PATH_MAX], want[PATH_MAX];

	assert_int_equal(pt_display_resolve(rootreal, "/", out, sizeof(out)), 200);
	snprintf(want, sizeof(want), "%s/index.html", rootreal);
	assert_string_equal(out, want);
	assert_int_equal(pt_display_resolve(rootreal, "/report.json", out, sizeof(out)), 200);
	assert_int_equal(pt_display_resolve(rootreal, "//report.json", out, sizeof(out)), 200);
	assert_int_equal(pt_display_resolve(rootreal, "/inlink.json", out, sizeof(out)), 200);
	assert_int_equal(pt_display_resolve(rootreal, "/sub/", out, sizeof(out)), 200);
	assert_int_equal(pt_display_resolve(rootreal, "/sub", out, sizeof(out)), 301);
	assert_int_equal(pt_display_resolve(rootreal, "/sub2/", out, sizeof(out)), 404);
	assert_int_equal(pt_display_resolve(rootreal, "/missing.js", out, sizeof(out)), 404);
	/* traversal, in every spelling that reaches us decoded */
	assert_int_equal(pt_display_resolve(rootreal, "/../outside.txt", out, sizeof(out)), 403);
	assert_int_equal(pt_display_resolve(rootreal, "/sub/../../outside.txt", out, sizeof(out)), 403);
	assert_int_equal(pt_display_resolve(rootreal, "/sub/..", out, sizeof(out)), 403);
	assert_int_equal(pt_display_resolve(rootreal, "/./index.html", out, sizeof(out)), 403);
	assert_int_equal(pt_display_resolve(rootreal, "/../../../../etc/passwd", out, sizeof(out)), 403);
	assert_int_equal(pt_display_resolve(rootreal, "../etc/passwd", out, sizeof(out)), 403);
	assert_int_equal(pt_display_resolve(rootreal, "", out, sizeof(out)), 403);
	assert_int_equal(pt_display_resolve(rootreal, "/index.html\n", out, sizeof(out)), 403);
	/* a link that leaves the root, and hidden files */
	assert_int_equal(pt_display_resolve(rootreal, "/link.txt", out, sizeof(out)), 403);
	assert_int_equal(pt_display_resolve(rootreal, "/.hidden", out, sizeof(out)), 403);
	/* "%2e%2e" arrives here only if it was encoded twice: then it is a name */
	assert_int_equal(pt_display_resolve(rootreal, "/%2e%2e/outside.txt", out, sizeof(out)), 404);
	assert_int_equal(pt_display_resolve(NULL, "/", out, sizeof(out)), 403);
}

static void test_content_types(void **state)
{
	assert_string_equal(pt_display_content_type("/a/index.html"), "text/html; charset=utf-8");
	assert_string_equal(pt_display_content_type("report.JSON"), "application/json");
	assert_string_equal(pt_display_content_type("app.js"), "text/javascript; charset=utf-8");
	assert_string_equal(pt_display_content_type("s.css"), "text/css; charset=utf-8");
	assert_string_equal(pt_display_content_type("app.py"), "text/plain; charset=utf-8");
	assert_string_equal(pt_display_content_type("shot.png"), "image/png");
	assert_string_equal(pt_display_content_type("t.json.gz"), "application/gzip");
	assert_string_equal(pt_display_content_type("dir.v1/README"), "application/octet-stream");
	assert_string_equal(pt_display_content_type("noext"), "application/octet-stream");
	assert_string_equal(pt_display_content_type(NULL), "application/octet-stream");
}

/* ---- server: live ------------------------------------------------------ */

/* Send a raw request (path exactly as given) and return the status code;
 * the response head and body go to buf. */
static int http_raw(int port, const char *method, const char *path, char *buf, size_t cap)
{
	struct sockaddr_in a;
	char req[1024];
	size_t got = 0;
	ssize_t n;
	int fd, status = -1;

	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	snprintf(req, sizeof(req), "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", method, path);
	assert_int_equal(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	while (got + 1 < cap && (n = read(fd, buf + got, cap - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = 0;
	close(fd);
	sscanf(buf, "HTTP/1.%*d %d", &status);
	return status;
}

struct logrec {
	int n, last;
};

static void on_log(void *ctx, const char *method, const char *path, int status)
{
	struct logrec *l = ctx;

	l->n++;
	l->last = status;
}

static void test_server_live(void **state)
{
	char root[PATH_MAX], buf[8192];
	struct logrec lg = { 0, 0 };
	pt_display_options opt = { NULL, 0, on_log, &lg, 0 };
	pt_display_options opt2 = { "127.0.0.1", 0, NULL, NULL, 0 };
	pt_display_server *s, *s2;
	pt_error err;
	int port;

	snprintf(root, sizeof(root), "%s/root", tmpdir);
	pt_error_clear(&err);
	s = pt_display_start(root, &opt, &err);
	assert_non_null(s);
	port = pt_display_port(s);
	assert_true(port > 0);
	assert_true(pt_display_is_loopback(s));
	snprintf(buf, sizeof(buf), "http://127.0.0.1:%d/", port);
	assert_string_equal(pt_display_url(s), buf);

	assert_int_equal(http_raw(port, "GET", "/", buf, sizeof(buf)), 200);
	assert_non_null(strstr(buf, "Content-Type: text/html; charset=utf-8"));
	assert_non_null(strstr(buf, "<p>hi</p>"));
	assert_int_equal(http_raw(port, "GET", "/report.json?x=1", buf, sizeof(buf)), 200);
	assert_non_null(strstr(buf, "Content-Type: application/json"));
	assert_int_equal(http_raw(port, "HEAD", "/report.json", buf, sizeof(buf)), 200);
	assert_null(strstr(buf, "{\"a\": 1}"));
	assert_int_equal(http_raw(port, "GET", "/nope.html", buf, sizeof(buf)), 404);
	assert_int_equal(http_raw(port, "GET", "/../outside.txt", buf, sizeof(buf)), 403);
	assert_int_equal(http_raw(port, "GET", "/%2e%2e/outside.txt", buf, sizeof(buf)), 403);
	assert_int_equal(http_raw(port, "GET", "/sub/%2E%2E%2F..%2Foutside.txt", buf, sizeof(buf)), 403);
	assert_null(strstr(buf, "outside\n"));
	assert_int_equal(http_raw(port, "GET", "/link.txt", buf, sizeof(buf)), 403);
	assert_int_equal(http_raw(port, "GET", "/sub", buf, sizeof(buf)), 301);
	assert_non_null(strstr(buf, "Location: /sub/"));
	assert_int_equal(http_raw(port, "POST", "/index.html", buf, sizeof(buf)), 405);
	assert_non_null(strstr(buf, "Allow: GET, HEAD"));
	assert_int_equal(lg.last, 405);
	assert_true(lg.n >= 10);

	/* a second server on the same port: a clear error, not a crash */
	opt2.port = port;
	pt_error_clear(&err);
	s2 = pt_display_start(root, &opt2, &err);
	assert_null(s2);
	assert_int_equal(err.code, PT_EIO);
	assert_non_null(strstr(err.msg, "already in use"));
	pt_display_stop(s);

	/* bad arguments */
	opt2.port = 70000;
	pt_error_clear(&err);
	assert_null(pt_display_start(root, &opt2, &err));
	assert_int_equal(err.code, PT_EINVAL);
	opt2.port = 0;
	pt_error_clear(&err);
	assert_null(pt_display_start("/nonexistent/dir", &opt2, &err));
	assert_int_equal(err.code, PT_EIO);
	snprintf(root, sizeof(root), "%s/outside.txt", tmpdir);
	pt_error_clear(&err);
	assert_null(pt_display_start(root, &opt2, &err));
	assert_non_null(strstr(err.msg, "not a folder"));
	pt_display_stop(NULL);
}

/* A connection from source address src (network order) that sends a
 * request line and one header, never the blank line that ends it: a slow
 * client trickling its header.  -1 when the server refused it at once. */
static int trickler(int port, uint32_t src)
{
	struct sockaddr_in a, b;
	const char *head = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n";
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	memset(&b, 0, sizeof(b));
	b.sin_family = AF_INET;
	b.sin_addr.s_addr = src;
	assert_int_equal(bind(fd, (struct sockaddr *)&b, sizeof(b)), 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    send(fd, head, strlen(head), MSG_NOSIGNAL) != (ssize_t)strlen(head)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The slow clients in fds[0..n) still held by the server: each sends one
 * more header byte and reads nothing yet (no response, no end, no reset).
 * One the server let go is closed and set to -1. */
static int held(int *fds, int n)
{
	int alive = 0;

	for (int i = 0; i < n; i++) {
		char c;
		ssize_t r;

		if (fds[i] < 0)
			continue;
		r = send(fds[i], "Y", 1, MSG_NOSIGNAL) == 1 ? recv(fds[i], &c, 1, MSG_DONTWAIT) : 0;
		if (r >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
			close(fds[i]);
			fds[i] = -1;
			continue;
		}
		alive++;
	}
	return alive;
}

/* 64 slow clients from address src and 64 from the normal client's own
 * (on loopback every local user is 127.0.0.1), each trickling its header. */
static int tricklers(int port, int *fds)
{
	int n = 0;

	for (int i = 0; i < 64; i++)
		fds[n++] = trickler(port, inet_addr("127.0.0.2"));
	for (int i = 0; i < 64; i++)
		fds[n++] = trickler(port, htonl(INADDR_LOOPBACK));
	return n;
}

static void close_all(int *fds, int n)
{
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* Slow clients (issue 11): while 128 connections trickle header bytes, a
 * normal request is answered, and they are all still held then (a server
 * that served them in turn would answer it only after letting them go).
 * An encoded NUL is a 400.  With a request deadline of 1 s, a trickler
 * whose request is not whole by then is cut off though it keeps sending. */
static void test_server_slow_clients(void **state)
{
	char root[PATH_MAX], buf[8192];
	/* A deadline no trickler reaches in this part; the server's idle
	 * timeout (10 s) is reset by every byte they send. */
	pt_display_options opt = { "127.0.0.1", 0, NULL, NULL, 600.0 };
	pt_display_server *s;
	pt_error err;
	int port, fds[128], nfd, before, cut = 0;

	(void)state;
	snprintf(root, sizeof(root), "%s/root", tmpdir);
	pt_error_clear(&err);
	s = pt_display_start(root, &opt, &err);
	assert_non_null(s);
	port = pt_display_port(s);
	nfd = tricklers(port, fds);
	tu_sleep_ms(200);
	/* One more header byte each: still incomplete, still connected. */
	before = held(fds, nfd);
	assert_true(before > 0);
	assert_int_equal(http_raw(port, "GET", "/", buf, sizeof(buf)), 200);
	assert_non_null(strstr(buf, "<p>hi</p>"));
	assert_int_equal(held(fds, nfd), before);
	/* NUL in the URL: refused, not the file named before it. */
	assert_int_equal(http_raw(port, "GET", "/index.html%00.txt", buf, sizeof(buf)), 400);
	assert_null(strstr(buf, "<p>hi</p>"));
	assert_int_equal(http_raw(port, "GET", "/index.html?x=%2500", buf, sizeof(buf)), 200);
	close_all(fds, nfd);
	pt_display_stop(s);

	/* Past the deadline, still trickling: every slow client is cut off
	 * (the server closes; reads see the end or a reset).  Polled until
	 * then; the 60 s only stops a server that never cuts them. */
	opt.request_deadline_s = 1.0;
	pt_error_clear(&err);
	s = pt_display_start(root, &opt, &err);
	assert_non_null(s);
	nfd = tricklers(pt_display_port(s), fds);
	for (int round = 0; round < 240 && cut < nfd; round++) {
		tu_sleep_ms(250);
		cut = nfd - held(fds, nfd);
	}
	assert_int_equal(cut, nfd);
	pt_display_stop(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_page_embeds_report_safely),
		cmocka_unit_test(test_page_refuses_bad_json),
		cmocka_unit_test(test_page_build_dir),
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_content_types),
		cmocka_unit_test(test_server_live),
		cmocka_unit_test(test_server_slow_clients),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
