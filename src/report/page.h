/*
 * page.h - the PerfDisplay page: DIR/PerfDisplay/index.html, one
 * self-contained file (charting library, styles, app and report inlined),
 * plus the app.py that serves the folder on a laptop.
 *
 * Flow: report.json (src/report) --pt_page_write--> index.html,
 * read by a browser from file:// or through src/display/server.c.  The page
 * template is compiled in from web/ at build time (web/inline.c ->
 * build/gen/page_template.h), so the binary needs no files at run time.
 * All functions are thread-safe (no shared state); none prints.
 */
#ifndef PT_REPORT_PAGE_H
#define PT_REPORT_PAGE_H

#include <stddef.h>

#include "../util/error.h"
#include "../util/strbuf.h"

/* Append the page for report_json[0..len) to out.  The JSON must be one
 * object (it is parsed to check); it is embedded without the whitespace
 * between tokens and with every '<', '>' and '&' written as \u003c, \u003e,
 * \u0026, so no name in it can end the <script> block.  PT_OK, PT_EPARSE
 * (offset set), PT_EFORMAT or PT_ENOMEM; err's subject is left to the caller
 * (pt_page_write sets out_path only for write errors). */
int pt_page_render(const char *report_json, size_t len, pt_sb *out, pt_error *err);

/* Render the page and write it to out_path (pt_file_write_atomic, durable:
 * temporary file in the same folder, fsync, rename); on a write error
 * err's subject is out_path. */
int pt_page_write(const char *report_json, size_t len, const char *out_path, pt_error *err);

/* Write dir/app.py, the standard-library server for the folder (mode 0755,
 * atomically and durably as the page). */
int pt_page_write_app(const char *dir, pt_error *err);

/* Read dir/report.json and write dir/index.html and dir/app.py. */
int pt_page_build_dir(const char *dir, pt_error *err);

/* The embedded template's size in bytes (head + tail), for tests and docs. */
size_t pt_page_template_size(void);

#endif
