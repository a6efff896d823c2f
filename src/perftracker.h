/*
 * perftracker.h - the public header of libperftracker: everything a program
 * needs to read a PyTorch profiler trace, reduce it to one worker's
 * behaviour patterns and read/write the summary JSON, and (below the mark)
 * to diagnose many workers.
 *
 * Flow: pt_kineto_read_file (trace/kineto.h) -> pt_store (model/store.h)
 *       -> pt_summary_build (analysis/summary.h) -> pt_summary_write_file
 *       ... master: pt_summary_read_file -> diagnosis.
 * Shortest use:
 *     pt_error err;
 *     pt_summary *s = pt_summary_from_trace("rank0.json.gz", NULL, &err);
 *     if (!s) { char m[1024]; puts(pt_error_format(&err, m, sizeof m)); }
 *     else { pt_summary_write_file(s, "rank0.summary.json", &err); pt_summary_free(s); }
 * Link with `pkg-config --libs perftracker` (-lperftracker -lz ...).
 * Every header keeps its own contract (ownership, NULL, threads).
 */
#ifndef PERFTRACKER_H
#define PERFTRACKER_H

#include <stddef.h>
#include <stdint.h>

/* The one version of the project: the CLI (--version), the library, the
 * Python package (python/perftracker/__init__.py, checked equal by
 * tests/cli/test_version.sh), perftracker.pc and the page take it from here. */
#define PT_VERSION "1.0.0"

#ifdef __cplusplus
extern "C" {
#endif

#include "util/error.h"
#include "util/strbuf.h"
#include "model/strtab.h"
#include "model/store.h"
#include "trace/kineto.h"
#include "trace/any.h"
#include "model/samples.h"
#include "analysis/summary.h"

/* ---- diagnosis (src/diagnose) and the report (src/report) ---- */
#include "diagnose/diagnose.h"
#include "report/report.h"

#ifdef __cplusplus
}
#endif

#endif
