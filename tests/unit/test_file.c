/*
 * test_file.c - unit tests for the shared file primitives (src/util/file.c):
 * the atomic writer (temporary name scheme, nothing left behind on failure,
 * the durable flag), the two-step write-then-commit used for the report
 * pair, mkdir -p with and without a judge, and whole-file reads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"
#include "util/file.h"
#include "util/xalloc.h"

static char root[256];

static int setup(void **state)
{
	(void)state;
	tu_tmpdir(root, sizeof(root), "pt_test_file");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tu_rm_rf(root);
	return 0;
}

static void at(char *out, size_t cap, const char *rel)
{
	snprintf(out, cap, "%s/%s", root, rel);
}

/* Entries of dir other than . and .. (temporaries included). */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void read_back(const char *p, const char *want)
{
	char *buf = NULL;
	size_t len = 0;
	pt_error e;

	pt_error_clear(&e);
	assert_int_equal(pt_file_read(p, 1 << 20, &buf, &len, &e), PT_OK);
	assert_int_equal(len, strlen(want));
	assert_string_equal(buf, want);
	x_free(buf);
}

static void test_write_atomic_replaces(void **state)
{
	char p[512];
	struct stat st;
	pt_error e;

	(void)state;
	at(p, sizeof(p), "out.json");
	pt_error_clear(&e);
	assert_int_equal(pt_file_write_atomic(p, "{\"a\":1}", 7, 0644, 0, &e), PT_OK);
	read_back(p, "{\"a\":1}");
	assert_int_equal(pt_file_write_atomic(p, "[]", 2, 0600, PT_FILE_DURABLE, &e), PT_OK);
	read_back(p, "[]");
	/* The mode is the new file's (before umask: 0600 survives any umask). */
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	/* Nothing but the file itself is left in the folder. */
	assert_int_equal(entries(root), 1);
}

/* A named pipe (as /dev/null or /dev/stdout) is written into, not replaced
 * by a file: a reader on the other end gets the bytes, the pipe stays. */
static void test_write_atomic_into_fifo(void **state)
{
	char p[512], got[16] = { 0 };
	struct stat st;
	pt_error e;
	int fd;

	(void)state;
	at(p, sizeof(p), "out.fifo");
	assert_int_equal(mkfifo(p, 0600), 0);
	/* a reader that does not block the open for writing */
	fd = open(p, O_RDONLY | O_NONBLOCK);
	assert_true(fd >= 0);
	pt_error_clear(&e);
	assert_int_equal(pt_file_write_atomic(p, "{\"a\":1}", 7, 0644, PT_FILE_DURABLE, &e), PT_OK);
	assert_int_equal(read(fd, got, sizeof(got) - 1), 7);
	assert_string_equal(got, "{\"a\":1}");
	close(fd);
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(entries(root), 1);
	/* /dev/null stays the device */
	assert_int_equal(pt_file_write_atomic("/dev/null", "x", 1, 0644, 0, &e), PT_OK);
	assert_int_equal(stat("/dev/null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
}

static void test_write_atomic_failure_leaves_nothing(void **state)
{
	char p[512], dir[512];
	pt_error e;

	(void)state;
	/* The rename fails (a folder is in the way): the temporary goes. */
	at(dir, sizeof(dir), "blocked");
	assert_int_equal(mkdir(dir, 0755), 0);
	at(p, sizeof(p), "blocked/inner");
	assert_int_equal(mkdir(p, 0755), 0);
	pt_error_clear(&e);
	assert_int_equal(pt_file_write_atomic(dir, "x", 1, 0644, 0, &e), PT_EIO);
	assert_string_equal(e.subject, dir);
	assert_string_equal(e.msg, "cannot rename into place: Is a directory");
	assert_int_equal(errno, EISDIR);
	assert_int_equal(entries(root), 1);
	/* The temporary cannot be created (no such folder). */
	at(p, sizeof(p), "missing/out.json");
	pt_error_clear(&e);
	assert_int_equal(pt_file_write_atomic(p, "x", 1, 0644, PT_FILE_DURABLE, &e), PT_EIO);
	assert_string_equal(e.subject, p);
	assert_string_equal(e.msg, "cannot write: No such file or directory");
	assert_int_equal(errno, ENOENT);
	assert_int_equal(entries(root), 1);
	/* A name too long for the temporary: PT_EINVAL, nothing created. */
	{
		char longp[5000];

		memset(longp, 'a', sizeof(longp) - 1);
		longp[sizeof(longp) - 1] = 0;
		memcpy(longp, root, strlen(root));
		longp[strlen(root)] = '/';
		pt_error_clear(&e);
		assert_int_equal(pt_file_write_atomic(longp, "x", 1, 0644, 0, &e), PT_EINVAL);
		assert_string_equal(e.msg, "path too long");
	}
	assert_int_equal(entries(root), 1);
}

/* The temporary's name follows the one scheme, and a temporary that cannot
 * be finished (here: its descriptor is gone, so fsync fails) is removed. */
static void test_close_tmp_failure_removes(void **state)
{
	char p[512], tmp[600];
	int fd;
	pt_error e;

	(void)state;
	at(p, sizeof(p), "c.json");
	pt_error_clear(&e);
	fd = pt_file_create_tmp(p, 0644, tmp, sizeof(tmp), &e);
	assert_true(fd >= 0);
	assert_int_equal(access(tmp, F_OK), 0);
	/* The scheme: "<dir>/.<base>.<16 hex>.tmp". */
	assert_int_equal(strncmp(tmp, root, strlen(root)), 0);
	assert_int_equal(strncmp(tmp + strlen(root), "/.c.json.", 9), 0);
	assert_int_equal(strlen(tmp), strlen(root) + 9 + 16 + 4);
	assert_string_equal(tmp + strlen(tmp) - 4, ".tmp");
	close(fd);
	pt_error_clear(&e);
	/* fd is already closed: fsync fails with EBADF. */
	assert_int_equal(pt_file_close_tmp(fd, tmp, p, PT_FILE_DURABLE, &e), PT_EIO);
	assert_string_equal(e.msg, "cannot write: Bad file descriptor");
	assert_string_equal(e.subject, p);
	assert_string_equal(tmp, "");
	assert_int_equal(entries(root), 0);
}

/* Two files written, then put in place one after the other. */
static void test_write_tmp_then_commit(void **state)
{
	char a[512], b[512], ta[600], tb[600];
	pt_error e;

	(void)state;
	at(a, sizeof(a), "a.json");
	at(b, sizeof(b), "b.html");
	pt_error_clear(&e);
	assert_int_equal(pt_file_write_tmp(a, "A", 1, 0644, PT_FILE_DURABLE, ta, sizeof(ta), &e),
			 PT_OK);
	assert_int_equal(pt_file_write_tmp(b, "B", 1, 0644, PT_FILE_DURABLE, tb, sizeof(tb), &e),
			 PT_OK);
	/* Not yet visible under their names. */
	assert_int_equal(access(a, F_OK), -1);
	assert_int_equal(entries(root), 2);
	assert_int_equal(pt_file_commit_tmp(tb, b, &e), PT_OK);
	assert_string_equal(tb, "");
	assert_int_equal(pt_file_commit_tmp(ta, a, &e), PT_OK);
	read_back(a, "A");
	read_back(b, "B");
	assert_int_equal(entries(root), 2);
}

static void test_mkdirs(void **state)
{
	char p[600], f[512];
	struct stat st;
	pt_error e;

	(void)state;
	/* Nested, with a trailing slash; then again (existing). */
	at(p, sizeof(p), "x/y/z/");
	pt_error_clear(&e);
	assert_int_equal(pt_file_mkdirs(p, 0755, NULL, NULL, &e), PT_OK);
	at(p, sizeof(p), "x/y/z");
	assert_int_equal(stat(p, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(pt_file_mkdirs(p, 0755, NULL, NULL, &e), PT_OK);
	/* A file in the way, as the last component and in the middle. */
	at(f, sizeof(f), "x/file");
	tu_write_text(f, "x");
	pt_error_clear(&e);
	assert_int_equal(pt_file_mkdirs(f, 0755, NULL, NULL, &e), PT_EIO);
	assert_string_equal(e.subject, f);
	assert_string_equal(e.msg, "cannot create directory: Not a directory");
	assert_int_equal(errno, ENOTDIR);
	snprintf(p, sizeof(p), "%s/below/deeper", f);
	pt_error_clear(&e);
	assert_int_equal(pt_file_mkdirs(p, 0755, NULL, NULL, &e), PT_EIO);
	assert_string_equal(e.subject, f);
	assert_string_equal(e.msg, "cannot create directory: Not a directory");
	/* Empty and too long. */
	pt_error_clear(&e);
	assert_int_equal(pt_file_mkdirs("", 0755, NULL, NULL, &e), PT_EINVAL);
	assert_string_equal(e.msg, "path too long or empty");
	{
		char longp[5000];

		memset(longp, 'd', sizeof(longp) - 1);
		longp[sizeof(longp) - 1] = 0;
		pt_error_clear(&e);
		assert_int_equal(pt_file_mkdirs(longp, 0755, NULL, NULL, &e), PT_EINVAL);
		assert_string_equal(e.msg, "path too long or empty");
	}
}

/* A component that cannot be created names itself.  Root may create it
 * anyway: skipped (and counted as skipped by tests/run) as root. */
static void test_mkdirs_names_what_it_cannot_create(void **state)
{
	char p[600], want[600];
	pt_error e;

	(void)state;
	if (geteuid() == 0) {
		fprintf(stderr, "skip: root may create a directory in a folder of mode 0500\n");
		skip();
	}
	assert_int_equal(chmod(root, 0500), 0);
	at(p, sizeof(p), "ro/sub");
	pt_error_clear(&e);
	assert_int_equal(pt_file_mkdirs(p, 0755, NULL, NULL, &e), PT_EIO);
	assert_int_equal(chmod(root, 0700), 0);
	at(want, sizeof(want), "ro");
	assert_string_equal(e.subject, want);
	assert_string_equal(e.msg, "cannot create directory: Permission denied");
}

/* The judge sees every component in order, the last one flagged, and its
 * refusal stops the walk before the next directory is created. */
typedef struct seen {
	char dirs[8][512];
	int last[8];
	int n, refuse_at;
} seen;

static int judge(const char *dir, int last, void *ctx, pt_error *err)
{
	seen *s = ctx;

	assert_true(s->n < 8);
	snprintf(s->dirs[s->n], sizeof(s->dirs[0]), "%s", dir);
	s->last[s->n] = last;
	if (s->n++ == s->refuse_at) {
		pt_error_subject(err, dir);
		return pt_error_set(err, PT_EPERM, -1, "refused");
	}
	return PT_OK;
}

static void test_mkdirs_judge(void **state)
{
	char p[512], q[512];
	seen s = { .refuse_at = -1 };
	pt_error e;
	int k, base;

	(void)state;
	at(p, sizeof(p), "j1/j2");
	pt_error_clear(&e);
	assert_int_equal(pt_file_mkdirs(p, 0755, judge, &s, &e), PT_OK);
	/* "/" first, then each prefix of the path. */
	assert_string_equal(s.dirs[0], "/");
	assert_int_equal(s.last[0], 0);
	assert_string_equal(s.dirs[s.n - 1], p);
	assert_int_equal(s.last[s.n - 1], 1);
	for (k = 0; k < s.n - 1; k++)
		assert_int_equal(s.last[k], 0);
	base = s.n;
	/* Refused at "j1" (the component before the last): j3 never made. */
	memset(&s, 0, sizeof(s));
	s.refuse_at = base - 2;
	at(p, sizeof(p), "j1/j3");
	pt_error_clear(&e);
	assert_int_equal(pt_file_mkdirs(p, 0755, judge, &s, &e), PT_EPERM);
	at(q, sizeof(q), "j1");
	assert_string_equal(e.subject, q);
	assert_string_equal(e.msg, "refused");
	assert_int_equal(access(p, F_OK), -1);
}

static void test_read(void **state)
{
	char p[512], *buf = NULL;
	size_t len = 99;
	pt_error e;
	int fd;

	(void)state;
	/* Empty: an empty NUL-terminated buffer. */
	at(p, sizeof(p), "empty");
	tu_write_text(p, "");
	pt_error_clear(&e);
	assert_int_equal(pt_file_read(p, 100, &buf, &len, &e), PT_OK);
	assert_int_equal(len, 0);
	assert_string_equal(buf, "");
	x_free(buf);
	/* Large (3 MiB, not a multiple of the growth steps), byte exact. */
	{
		size_t big = (3u << 20) + 17, k;
		char *data = malloc(big);

		assert_non_null(data);
		for (k = 0; k < big; k++)
			data[k] = (char)('a' + k % 23);
		at(p, sizeof(p), "big");
		assert_int_equal(pt_file_write_atomic(p, data, big, 0644, 0, &e), PT_OK);
		assert_int_equal(pt_file_read(p, 4u << 20, &buf, &len, &e), PT_OK);
		assert_int_equal(len, big);
		assert_memory_equal(buf, data, big);
		assert_int_equal(buf[big], 0);
		x_free(buf);
		/* One byte over the limit: refused before reading. */
		buf = NULL;
		len = 99;
		pt_error_clear(&e);
		assert_int_equal(pt_file_read(p, big - 1, &buf, &len, &e), PT_ENOMEM);
		assert_null(buf);
		assert_int_equal(len, 99);
		assert_int_equal(strncmp(e.msg, "file larger than ", 17), 0);
		free(data);
	}
	/* Exactly at the limit is fine, through the fstat size and through
	 * the growth path (4096 is the first buffer without a size). */
	{
		static const size_t sizes[] = { 4096, 8192, 100 };
		char *data = calloc(1, 8193);

		assert_non_null(data);
		at(p, sizeof(p), "exact");
		for (size_t k = 0; k < 3; k++) {
			assert_int_equal(pt_file_write_atomic(p, data, sizes[k], 0644, 0, &e), PT_OK);
			pt_error_clear(&e);
			assert_int_equal(pt_file_read(p, sizes[k], &buf, &len, &e), PT_OK);
			assert_int_equal(len, sizes[k]);
			x_free(buf);
		}
		for (size_t k = 0; k < 2; k++) {
			int pfd[2];

			assert_int_equal(pipe(pfd), 0);
			assert_int_equal(write(pfd[1], data, sizes[k] + 1), (ssize_t)sizes[k] + 1);
			close(pfd[1]);
			/* One byte more than the limit, from a pipe: refused... */
			pt_error_clear(&e);
			buf = NULL;
			assert_int_equal(pt_file_read_fd(pfd[0], sizes[k], &buf, &len, &e), PT_ENOMEM);
			assert_null(buf);
			close(pfd[0]);
			/* ...and exactly the limit accepted. */
			assert_int_equal(pipe(pfd), 0);
			assert_int_equal(write(pfd[1], data, sizes[k]), (ssize_t)sizes[k]);
			close(pfd[1]);
			assert_int_equal(pt_file_read_fd(pfd[0], sizes[k], &buf, &len, &e), PT_OK);
			assert_int_equal(len, sizes[k]);
			x_free(buf);
			close(pfd[0]);
		}
		free(data);
	}
	/* From a pipe (no size known): read to EOF through the growth path. */
	{
		int pfd[2];

		assert_int_equal(pipe(pfd), 0);
		assert_int_equal(write(pfd[1], "piped text", 10), 10);
		close(pfd[1]);
		assert_int_equal(pt_file_read_fd(pfd[0], 100, &buf, &len, &e), PT_OK);
		assert_int_equal(len, 10);
		assert_string_equal(buf, "piped text");
		x_free(buf);
		close(pfd[0]);
	}
	/* Missing: PT_EIO with the reason, no subject (callers name it). */
	at(p, sizeof(p), "nope");
	buf = NULL;
	pt_error_clear(&e);
	assert_int_equal(pt_file_read(p, 100, &buf, &len, &e), PT_EIO);
	assert_string_equal(e.msg, "cannot open: No such file or directory");
	assert_string_equal(e.subject, "");
	assert_null(buf);
	/* A directory. */
	fd = open(root, O_RDONLY);
	assert_true(fd >= 0);
	pt_error_clear(&e);
	assert_int_equal(pt_file_read_fd(fd, 100, &buf, &len, &e), PT_EIO);
	assert_string_equal(e.msg, "is a directory");
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_write_atomic_replaces, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_atomic_into_fifo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_atomic_failure_leaves_nothing, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_close_tmp_failure_removes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_tmp_then_commit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mkdirs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mkdirs_names_what_it_cannot_create, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_mkdirs_judge, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
