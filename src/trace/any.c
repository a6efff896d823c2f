/*
 * any.c - picks the trace reader by content (see any.h): nsys SQLite
 * exports by their header, everything else goes to the Kineto reader,
 * which recognises gzip by its own magic bytes.
 */
#include "any.h"
#include "kineto.h"
#include "nsys.h"

#include "../util/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int pt_trace_format_of(const char *path)
{
	unsigned char head[PT_SQLITE_MAGIC_LEN];
	ssize_t got;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return PT_TRACE_KINETO;
	got = read(fd, head, sizeof(head));
	close(fd);
	return got == (ssize_t)sizeof(head) && pt_nsys_is_sqlite(head, sizeof(head))
		       ? PT_TRACE_NSYS : PT_TRACE_KINETO;
}

int pt_trace_read_any(const char *path, pt_store *st, pt_samples *hw, pt_error *err)
{
	if (pt_trace_format_of(path) == PT_TRACE_NSYS)
		return pt_nsys_read_file(path, st, hw, err);
	return pt_kineto_read_file(path, st, err);
}

static int ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);

	return n >= m && !strcmp(s + n - m, suf);
}

int pt_trace_is_samples_name(const char *base)
{
	const char *b = strrchr(base, '/');

	b = b ? b + 1 : base;
	return (!strncmp(b, "hw_", 3) && (ends_with(b, ".json") || ends_with(b, ".sqlite"))) ||
	       (ends_with(b, ".hw.json") && strlen(b) > 8);
}

int pt_trace_read_samples(const char *path, pt_samples *h, pt_error *err)
{
	int rc;

	if (pt_trace_format_of(path) != PT_TRACE_NSYS)
		return pt_samples_read_file(path, h, err);
	if (pt_samples_init(h)) {
		pt_error_subject(err, path);
		return pt_error_set(err, PT_ENOMEM, -1, "out of memory");
	}
	rc = pt_nsys_read_samples(path, h, err);
	if (rc)
		pt_samples_free(h);
	return rc;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int pt_trace_samples_dir(const char *dir, pt_samples **out, size_t *n, size_t *nbad,
			 pt_error *bad, pt_error *err)
{
	char **names = NULL;
	size_t nn = 0, cap = 0, i, scap = 0;
	struct dirent *e;
	DIR *d;
	int rc = PT_OK;

	*out = NULL;
	*n = 0;
	*nbad = 0;
	d = opendir(dir);
	if (!d) {
		pt_error_subject(err, dir);
		return pt_error_set(err, PT_EIO, -1, "cannot open directory: %s", strerror(errno));
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || !pt_trace_is_samples_name(e->d_name))
			continue;
		if (X_GROW(names, cap, nn + 1) ||
		    !(names[nn] = x_strndup(e->d_name, strlen(e->d_name)))) {
			rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
			goto out;
		}
		nn++;
	}
	if (nn > 1)
		qsort(names, nn, sizeof(*names), cmp_name);
	for (i = 0; i < nn; i++) {
		char path[4096];
		struct stat stt;
		pt_error e1;

		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, names[i]) >= sizeof(path) ||
		    stat(path, &stt) || !S_ISREG(stt.st_mode))
			continue;
		if (X_GROW(*out, scap, *n + 1)) {
			rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory");
			goto out;
		}
		pt_error_clear(&e1);
		if (pt_trace_read_samples(path, &(*out)[*n], &e1)) {
			if (!*nbad && bad)
				*bad = e1;
			(*nbad)++;
			continue;
		}
		(*n)++;
	}
out:
	closedir(d);
	for (i = 0; i < nn; i++)
		x_free(names[i]);
	x_free(names);
	if (rc) {
		for (i = 0; i < *n; i++)
			pt_samples_free(&(*out)[i]);
		x_free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}
