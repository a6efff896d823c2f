/*
 * write.c - putting the report on disk: DIR/PerfDisplay/report.json, then
 * the PerfDisplay page made from that same text (index.html, src/display)
 * and its app.py; each file is written to an unguessable temporary file in
 * the same folder, fsync'ed (results: the rule in src/util/file.h) and
 * renamed, so a reader (the page, a script polling the folder) never sees
 * half a file (docs/design.md "Transport is a directory"), and report.json
 * and index.html are both written before either is renamed.
 */
#include "report.h"
#include "page.h"
#include "../util/file.h"
#include "../util/xalloc.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

int pt_report_write_file(const char *path, const char *buf, size_t len, pt_error *err)
{
	return pt_file_write_atomic(path, buf, len, 0644, PT_FILE_DURABLE, err);
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
	rc = pt_file_mkdirs(json_path, 0777, NULL, NULL, err);
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
	rc = pt_page_render(sb.buf, sb.len, &page, err);
	if (rc)
		goto out;
	rc = pt_file_write_tmp(json_path, sb.buf, sb.len, 0644, PT_FILE_DURABLE, json_tmp,
			       sizeof(json_tmp), err);
	if (rc)
		goto out;
	rc = pt_file_write_tmp(page_path, page.buf, page.len, 0644, PT_FILE_DURABLE, page_tmp,
			       sizeof(page_tmp), err);
	if (rc)
		goto out;
	rc = pt_file_commit_tmp(page_tmp, page_path, err);
	if (rc)
		goto out;
	rc = pt_file_commit_tmp(json_tmp, json_path, err);
	if (rc)
		goto out;
	snprintf(json_path, sizeof(json_path), "%s/PerfDisplay", dir);
	rc = pt_page_write_app(json_path, err);
out:
	if (json_tmp[0])
		unlink(json_tmp);
	if (page_tmp[0])
		unlink(page_tmp);
	pt_sb_free(&page);
	pt_sb_free(&sb);
	return rc;
}
