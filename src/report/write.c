/*
 * write.c - putting the report on disk: DIR/PerfDisplay/report.json, then
 * the PerfDisplay page made from that same text (index.html, src/display)
 * and its app.py; each file is written to an unguessable temporary file in
 * the same folder and renamed, so a reader (the page, a script polling the
 * folder) never sees half a file (docs/design.md "Transport is a directory"),
 * and report.json and index.html are both written before either is renamed.
 */
#include "report.h"
#include "../display/page.h"
#include "../util/file.h"
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
	return pt_file_write_atomic(path, buf, len, 0644, err);
}

/* One file of the pair: its temporary written and closed, not yet renamed. */
static int write_tmp(const char *path, const char *buf, size_t len, char *tmp, size_t cap,
		     pt_error *err)
{
	int fd = pt_file_create_tmp(path, 0644, tmp, cap, err), e;

	if (fd < 0) {
		pt_error_subject(err, path);
		return err ? err->code : PT_EIO;
	}
	if (pt_file_write_all(fd, buf, len) != 0) {
		e = errno;
		close(fd);
		goto fail;
	}
	if (close(fd) != 0) {
		e = errno;
		goto fail;
	}
	return PT_OK;
fail:
	unlink(tmp);
	tmp[0] = 0;
	pt_error_subject(err, path);
	return pt_error_set(err, PT_EIO, -1, "cannot write: %s", strerror(e));
}

int pt_report_write_dir(const pt_report *r, const char *dir, pt_error *err)
{
	char json_path[4096], page_path[4096], json_tmp[4096 + 64], page_tmp[4096 + 64];
	pt_sb sb = {0}, page = {0};
	int rc;

	json_tmp[0] = page_tmp[0] = 0;
	if (!r || pt_report_oom(r))
		return pt_error_set(err, PT_ENOMEM, -1, "out of memory building the report");
	if ((size_t)snprintf(json_path, sizeof(json_path), "%s/PerfDisplay", dir) >=
	    sizeof(json_path) - 16) {
		pt_error_subject(err, dir);
		rc = pt_error_set(err, PT_EINVAL, -1, "path too long");
		goto out;
	}
	rc = mkdirs(json_path, err);
	if (rc)
		goto out;
	snprintf(json_path, sizeof(json_path), "%s/PerfDisplay/report.json", dir);
	snprintf(page_path, sizeof(page_path), "%s/PerfDisplay/index.html", dir);
	pt_report_json(pt_report_root_c(r), 0, &sb);
	pt_sb_addc(&sb, '\n');
	if (sb.oom) {
		rc = pt_error_set(err, PT_ENOMEM, -1, "out of memory writing the report");
		goto out;
	}
	/* The page embeds the very bytes of report.json (minus indentation),
	 * so the two always agree: both are written in full before either is
	 * renamed, so a failed write (disk full, quota) leaves the old pair,
	 * never a new report.json beside an old page. */
	rc = pt_display_render_page(sb.buf, sb.len, &page, err);
	if (rc)
		goto out;
	rc = write_tmp(json_path, sb.buf, sb.len, json_tmp, sizeof(json_tmp), err);
	if (rc)
		goto out;
	rc = write_tmp(page_path, page.buf, page.len, page_tmp, sizeof(page_tmp), err);
	if (rc)
		goto out;
	if (rename(page_tmp, page_path) != 0 || (page_tmp[0] = 0, rename(json_tmp, json_path) != 0)) {
		pt_error_subject(err, page_tmp[0] ? page_path : json_path);
		rc = pt_error_set(err, PT_EIO, -1, "cannot rename into place: %s", strerror(errno));
		goto out;
	}
	json_tmp[0] = 0;
	snprintf(json_path, sizeof(json_path), "%s/PerfDisplay", dir);
	rc = pt_display_write_app(json_path, err);
out:
	if (json_tmp[0])
		unlink(json_tmp);
	if (page_tmp[0])
		unlink(page_tmp);
	pt_sb_free(&page);
	pt_sb_free(&sb);
	return rc;
}
