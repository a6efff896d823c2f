/*
 * file.c - the shared file primitives (see file.h): whole-file reads with a
 * size limit, for the readers that parse a document in one piece; the one
 * way every writer of a file makes it appear whole (an unguessable O_EXCL
 * temporary beside it, fsync'ed when it is a result, then rename:
 * docs/collector.md, "Directories and other users"); and mkdir -p.
 */
#include "file.h"
#include "clock.h"
#include "xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int pt_file_read(const char *path, size_t max, char **buf, size_t *len, pt_error *err)
{
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return pt_error_set(err, PT_EIO, -1, "cannot open: %s", strerror(errno));
	rc = pt_file_read_fd(fd, max, buf, len, err);
	close(fd);
	return rc;
}

int pt_file_read_fd(int fd, size_t max, char **buf, size_t *len, pt_error *err)
{
	struct stat st;
	size_t cap, n = 0;
	char *b = NULL;
	int rc = PT_EIO;

	if (fstat(fd, &st))
		memset(&st, 0, sizeof(st));
	if (S_ISDIR(st.st_mode))
		return pt_error_set(err, PT_EIO, -1, "is a directory");
	/* Known too big: fail before reading max bytes of it. */
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > max)
		return pt_error_set(err, PT_ENOMEM, -1, "file larger than %zu bytes", max);
	/* +1: room for the read that sees the end, so a file of the size
	 * fstat gave never grows the buffer (and for the NUL) */
	cap = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 1 : 4096;
	if (!(b = x_malloc(cap))) {
		rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
		goto out;
	}
	for (;;) {
		ssize_t r;

		if (n == cap && X_GROW(b, cap, n + 1)) {
			rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
			goto out;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			pt_error_set(err, PT_EIO, -1, "read failed: %s", strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		/* Exactly max bytes is fine; one more is not. */
		if (n > max) {
			rc = pt_error_set(err, PT_ENOMEM, -1, "file larger than %zu bytes", max);
			goto out;
		}
	}
	/* The loop only reads while n < cap, so the NUL fits. */
	b[n] = 0;
	*buf = b;
	*len = n;
	b = NULL;
	rc = PT_OK;
out:
	x_free(b);
	return rc;
}

/* getrandom(2), else the clock, pid and a counter mixed (splitmix64) when
 * the kernel has none to give. */
uint64_t pt_file_random64(void)
{
	static uint64_t counter;
	uint64_t v, ns;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) == (ssize_t)sizeof(v))
		return v;
	ns = (uint64_t)pt_clock_wall_ns();
	v = ns % 1000000000 ^ (ns / 1000000000 << 30) ^ ((uint64_t)getpid() << 48) ^
	    __atomic_add_fetch(&counter, 0x9e3779b97f4a7c15ULL, __ATOMIC_RELAXED);
	v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ULL;
	v = (v ^ (v >> 27)) * 0x94d049bb133111ebULL;
	return v ^ (v >> 31);
}

int pt_file_create_tmp(const char *path, int mode, char *tmp, size_t cap, pt_error *err)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	int dl = slash ? (int)(slash - path) + 1 : 0, e = EEXIST;

	for (int tries = 0; tries < 100; tries++) {
		int fd;

		if ((size_t)snprintf(tmp, cap, "%.*s.%s.%016llx.tmp", dl, path, base,
				     (unsigned long long)pt_file_random64()) >= cap) {
			if (cap)
				tmp[0] = 0;
			pt_error_set(err, PT_EINVAL, -1, "path too long");
			errno = ENAMETOOLONG;
			return -1;
		}
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, (mode_t)mode);
		if (fd >= 0)
			return fd;
		e = errno;
		if (e != EEXIST)
			break;
	}
	tmp[0] = 0;
	pt_error_set(err, PT_EIO, -1, "cannot create a temporary file: %s", strerror(e));
	errno = e;
	return -1;
}

int pt_file_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

static int write_failed(char *tmp, const char *path, int e, pt_error *err)
{
	int rc;

	if (tmp[0])
		unlink(tmp);
	tmp[0] = 0;
	pt_error_subject(err, path);
	rc = pt_error_set(err, PT_EIO, -1, "cannot write: %s", strerror(e));
	errno = e;
	return rc;
}

int pt_file_close_tmp(int fd, char *tmp, const char *path, unsigned flags, pt_error *err)
{
	int e;

	if ((flags & PT_FILE_DURABLE) && fsync(fd) != 0 && errno != EINVAL && errno != EROFS) {
		e = errno;
		close(fd);
		return write_failed(tmp, path, e, err);
	}
	/* close() reports deferred write errors (NFS, quota): check it. */
	if (close(fd) != 0)
		return write_failed(tmp, path, errno, err);
	return PT_OK;
}

int pt_file_write_tmp(const char *path, const void *buf, size_t len, int mode, unsigned flags,
		      char *tmp, size_t cap, pt_error *err)
{
	int fd, e;

	fd = pt_file_create_tmp(path, mode, tmp, cap, NULL);
	if (fd < 0) {
		e = errno;
		pt_error_subject(err, path);
		if (e == ENAMETOOLONG)
			pt_error_set(err, PT_EINVAL, -1, "path too long");
		else
			pt_error_set(err, PT_EIO, -1, "cannot write: %s", strerror(e));
		errno = e;
		return e == ENAMETOOLONG ? PT_EINVAL : PT_EIO;
	}
	if (pt_file_write_all(fd, buf, len) != 0) {
		e = errno;
		close(fd);
		return write_failed(tmp, path, e, err);
	}
	return pt_file_close_tmp(fd, tmp, path, flags, err);
}

int pt_file_commit_tmp(char *tmp, const char *path, pt_error *err)
{
	int e;

	if (rename(tmp, path) == 0) {
		tmp[0] = 0;
		return PT_OK;
	}
	e = errno;
	unlink(tmp);
	tmp[0] = 0;
	pt_error_subject(err, path);
	pt_error_set(err, PT_EIO, -1, "cannot rename into place: %s", strerror(e));
	errno = e;
	return PT_EIO;
}

/* path names a device, a FIFO or a socket (-o /dev/null, -o /dev/stdout,
 * a named pipe): write into it; a rename would replace it with a file
 * (as root, /dev/null with a regular file every process then writes). */
static int write_special(const char *path, const void *buf, size_t len, pt_error *err)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY), e;

	if (fd < 0 || pt_file_write_all(fd, buf, len) != 0 || close(fd) != 0) {
		e = errno;
		if (fd >= 0)
			close(fd);
		pt_error_subject(err, path);
		pt_error_set(err, PT_EIO, -1, "cannot write: %s", strerror(e));
		errno = e;
		return PT_EIO;
	}
	return PT_OK;
}

int pt_file_write_atomic(const char *path, const void *buf, size_t len, int mode,
			 unsigned flags, pt_error *err)
{
	char tmp[PATH_MAX + 64];
	struct stat st;
	int rc;

	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return write_special(path, buf, len, err);
	rc = pt_file_write_tmp(path, buf, len, mode, flags, tmp, sizeof(tmp), err);
	if (rc == PT_OK)
		rc = pt_file_commit_tmp(tmp, path, err);
	return rc;
}

/* ---- mkdir -p ------------------------------------------------------------- */

/* Without a judge: an existing component must be a directory. */
static int existing_dir(const char *dir, pt_error *err)
{
	struct stat st;

	if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		return PT_OK;
	pt_error_subject(err, dir);
	pt_error_set(err, PT_EIO, -1, "cannot create directory: %s", strerror(ENOTDIR));
	errno = ENOTDIR;
	return PT_EIO;
}

int pt_file_mkdirs(const char *path, int mode, pt_file_dir_check *check, void *ctx,
		   pt_error *err)
{
	char buf[PATH_MAX];
	size_t n = path ? strlen(path) : 0;
	int rc;

	if (n == 0 || n >= sizeof(buf)) {
		if (n)
			pt_error_subject(err, path);
		return pt_error_set(err, PT_EINVAL, -1, "path too long or empty");
	}
	memcpy(buf, path, n + 1);
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = 0;
	if (check && buf[0] == '/' && buf[1] && (rc = check("/", 0, ctx, err)))
		return rc;
	for (char *p = buf + 1;; p++) {
		char c = *p;

		if (c != '/' && c != 0)
			continue;
		*p = 0;
		if (mkdir(buf, (mode_t)mode) != 0) {
			int e = errno;

			if (e != EEXIST) {
				pt_error_subject(err, buf);
				pt_error_set(err, PT_EIO, -1, "cannot create directory: %s",
					     strerror(e));
				errno = e;
				return PT_EIO;
			}
			if (!check && (rc = existing_dir(buf, err)))
				return rc;
		}
		if (check && (rc = check(buf, !c, ctx, err)))
			return rc;
		*p = c;
		if (!c)
			break;
	}
	return PT_OK;
}

int pt_file_remove_tree_at(int dfd, const char *name, int depth, unsigned uid)
{
	struct stat st;
	struct dirent *de;
	DIR *d;
	int fd, rc = 0;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dfd, name, 0) == 0 || errno == ENOENT ? 0 : -1;
	if (depth < 1 || st.st_uid != uid) {
		errno = EPERM;
		return -1;
	}
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    pt_file_remove_tree_at(fd, de->d_name, depth - 1, uid))
			rc = -1;
	closedir(d);
	if (unlinkat(dfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
		rc = -1;
	return rc;
}
