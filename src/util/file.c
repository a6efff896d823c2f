/*
 * file.c - whole-file reads with a size limit (see file.h), for the
 * readers that parse a document in one piece: the JSON DOM and the
 * summary reader; and the one way every writer of a file makes it appear
 * whole: an unguessable O_EXCL temporary beside it, then rename
 * (docs/collector.md, "Directories and other users").
 */
#include "file.h"
#include "xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int pt_file_read(const char *path, size_t max, char **buf, size_t *len, pt_error *err)
{
	struct stat st;
	size_t cap, n = 0;
	char *b = NULL;
	int fd, rc = PT_EIO;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return pt_error_set(err, PT_EIO, -1, "cannot open: %s", strerror(errno));
	if (fstat(fd, &st))
		memset(&st, 0, sizeof(st));
	if (S_ISDIR(st.st_mode)) {
		pt_error_set(err, PT_EIO, -1, "is a directory");
		goto out;
	}
	/* +1: room for the read that sees the end, so a file of the size
	 * fstat gave never grows the buffer (and for the NUL) */
	cap = (S_ISREG(st.st_mode) && st.st_size > 0 && (uint64_t)st.st_size < max)
		? (size_t)st.st_size + 1 : 4096;
	if (!(b = x_malloc(cap))) {
		rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
		goto out;
	}
	for (;;) {
		ssize_t r;

		if (n == cap) {
			if (cap >= max) {
				rc = pt_error_set(err, PT_ENOMEM, -1, "file larger than %zu bytes",
						  max);
				goto out;
			}
			if (X_GROW(b, cap, n + 1)) {
				rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
				goto out;
			}
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
	}
	/* The loop only reads while n < cap, so the NUL fits. */
	b[n] = 0;
	*buf = b;
	*len = n;
	b = NULL;
	rc = PT_OK;
out:
	x_free(b);
	close(fd);
	return rc;
}

/* 64 unpredictable bits: getrandom(2), else the clock, pid and a counter
 * mixed (splitmix64) when the kernel has none to give. */
static uint64_t random64(void)
{
	static uint64_t counter;
	uint64_t v;
	struct timespec ts;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) == (ssize_t)sizeof(v))
		return v;
	clock_gettime(CLOCK_REALTIME, &ts);
	v = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ ((uint64_t)getpid() << 48) ^
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
				     (unsigned long long)random64()) >= cap) {
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

int pt_file_write_atomic(const char *path, const void *buf, size_t len, int mode,
			 pt_error *err)
{
	char tmp[4096 + 64];
	int fd, e, rc;

	fd = pt_file_create_tmp(path, mode, tmp, sizeof(tmp), NULL);
	if (fd < 0) {
		e = errno;
		pt_error_subject(err, path);
		rc = pt_error_set(err, PT_EIO, -1, "cannot write: %s", strerror(e));
		errno = e;
		return rc;
	}
	if (pt_file_write_all(fd, buf, len) != 0) {
		e = errno;
		close(fd);
		goto fail;
	}
	/* close() reports deferred write errors (NFS, quota): check it. */
	if (close(fd) != 0) {
		e = errno;
		goto fail;
	}
	if (rename(tmp, path) != 0) {
		e = errno;
		unlink(tmp);
		pt_error_subject(err, path);
		rc = pt_error_set(err, PT_EIO, -1, "cannot rename into place: %s", strerror(e));
		errno = e;
		return rc;
	}
	return PT_OK;
fail:
	unlink(tmp);
	pt_error_subject(err, path);
	rc = pt_error_set(err, PT_EIO, -1, "cannot write: %s", strerror(e));
	errno = e;
	return rc;
}
