/*
 * digest.h - a worker summary's digest: the few KB of it that the master
 * reads from every worker before it decides which workers' full summaries
 * it needs (docs/summary.md "Digests", docs/diagnose.md "Two phases").
 *
 * Flow: pt_summary (summary.c) --pt_digest_write--> X.digest beside the
 * summary X.json (written by `summarize -o`, `analyze --keep-summaries`,
 * the node agent and `perftracker digest`) --summary_parse.c (the same
 * reader, "digest_of" > 0)--> the master's first phase
 * (src/diagnose/pipeline.c).  Thread-safe: no shared state.
 */
#ifndef PT_DIGEST_H
#define PT_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#include "summary.h"
#include "../util/error.h"
#include "../util/strbuf.h"

/* Python stacks below this share of the window, both as owned time
 * (bottleneck) and as time run (exec_ratio), are left out: a fifth of the
 * smallest time lost any finding reports (pt_diag_options.min_impact,
 * 0.005), and the master compares stacks by share, counting a stack a
 * worker lacks as 0.  Every other pattern is kept (digest.c says why). */
#define PT_DIGEST_FLOOR 0.001
/* Significant digits of a digest's pattern numbers (relative error 5e-8). */
#define PT_DIGEST_DIGITS 7
/* A digest key: '~' and 16 lowercase hex digits of the key's hash. */
#define PT_DIGEST_KEY_LEN 17

/* Append the digest of s (a full summary, s->error NULL) to out: the
 * summary format with "digest_of" = full_bytes (the size of the full
 * summary file, > 0), hashed keys, the patterns at or above
 * PT_DIGEST_FLOOR with their numbers to PT_DIGEST_DIGITS digits, and none
 * of the critical path, timeline, collective causes, per-step function
 * times and hardware series.  A failed summary is written as it is.
 * PT_OK, or PT_ENOMEM (out->oom also set). */
int pt_digest_write(const pt_summary *s, uint64_t full_bytes, pt_sb *out);

/* Write s to path as pt_summary_write_file does and its digest beside it
 * (pt_digest_path), the digest first: whoever sees the summary finds its
 * digest there.  PT_OK or the writer's error (err
 * names the file). */
int pt_digest_write_pair(const pt_summary *s, const char *path, pt_error *err);

/* The digest path of a summary path: "X.json" -> "X.digest", else path
 * + ".digest".  0, or -1 when it does not fit in cap. */
int pt_digest_path(const char *summary, char *out, size_t cap);

/* The digest key of a full pattern key into out (PT_DIGEST_KEY_LEN + 1
 * bytes); whether k is one. */
void pt_digest_key(const char *key, char *out);
int pt_digest_is_key(const char *k);

#endif
