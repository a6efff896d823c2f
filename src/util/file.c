/*
 * file.c - whole-file reads with a size limit (see file.h), for the
 * readers that parse a document in one piece: the JSON DOM and the
 * summary reader.
 */
#include "file.h"
#include "xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
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
