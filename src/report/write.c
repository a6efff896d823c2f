/*
 * write.c - putting the report on disk: DIR/PerfDisplay/report.json, then
 * the PerfDisplay page made from that same text (index.html, src/display)
 * and its app.py; each file is written to a temporary file in the same
 * folder and renamed, so a reader (the page, a script polling the folder)
 * never sees half a file (DESIGN.md "Transport is a directory").
 */
#include "report.h"
#include "../display/page.h"
#include "../util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* mkdir -p path. */
static int mkdirs(const char *path, pt_error *err)
{
	char buf[4096];
	size_t n = strlen(path), i;

	if (n >= sizeof(buf))
		return pt_error_set(err, PT_EINVAL, -1, "path too long");
	memcpy(buf, path, n + 1);
	for (i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != 0)
			continue;
		buf[i] = 0;
		if (mkdir(buf, 0777) && errno != EEXIST) {
			int e = errno;

			pt_error_subject(err, buf);
			return pt_error_set(err, PT_EIO, -1, "cannot create directory: %s", strerror(e));
		}
		buf[i] = i < n ? '/' : 0;
	}
	return PT_OK;
}

int pt_report_write_file(const char *path, const char *buf, size_t len, pt_error *err)
{
	char tmp[4096];
	int fd = -1, rc = PT_OK;
	size_t off = 0;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >= sizeof(tmp)) {
		pt_error_subject(err, path);
		return pt_error_set(err, PT_EINVAL, -1, "path too long");
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		goto fail;
	while (off < len) {
		ssize_t w = write(fd, buf + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			goto fail;
		off += (size_t)w;
	}
	if (close(fd)) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path))
		goto fail;
	return PT_OK;
fail:
	rc = errno;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	pt_error_subject(err, path);
	return pt_error_set(err, PT_EIO, -1, "cannot write: %s", strerror(rc));
}

int pt_report_write_dir(const pt_report *r, const char *dir, pt_error *err)
{
	char path[4096];
	pt_sb sb = {0};
	int rc;

	if (!r || pt_report_oom(r))
		return pt_error_set(err, PT_ENOMEM, -1, "out of memory building the report");
	if ((size_t)snprintf(path, sizeof(path), "%s/PerfDisplay", dir) >= sizeof(path) - 16) {
		pt_error_subject(err, dir);
		rc = pt_error_set(err, PT_EINVAL, -1, "path too long");
		goto out;
	}
	rc = mkdirs(path, err);
	if (rc)
		goto out;
	snprintf(path, sizeof(path), "%s/PerfDisplay/report.json", dir);
	pt_report_json(pt_report_root_c(r), 0, &sb);
	pt_sb_addc(&sb, '\n');
	if (sb.oom) {
		rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory writing the report");
		goto out;
	}
	rc = pt_report_write_file(path, sb.buf, sb.len, err);
	if (rc)
		goto out;
	/* The page embeds the very bytes of report.json (minus indentation),
	 * so the two always agree. */
	snprintf(path, sizeof(path), "%s/PerfDisplay/index.html", dir);
	rc = pt_display_write_page(sb.buf, sb.len, path, err);
	if (rc)
		goto out;
	snprintf(path, sizeof(path), "%s/PerfDisplay", dir);
	rc = pt_display_write_app(path, err);
out:
	pt_sb_free(&sb);
	return rc;
}
