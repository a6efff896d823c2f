/*
 * summary_parse.h - the master's single-pass summary reader (no JSON DOM)
 * and the shared key set that lets 10,000 summaries of one job hold each
 * distinct pattern key once.  Internal to the library and the CLI; the
 * public entry points stay pt_summary_read_file / pt_summary_read_mem
 * (summary.h), which use this parser.
 *
 * Flow: SUMMARY.json bytes --pt_summary_parse--> pt_summary --> src/diagnose.
 */
#ifndef PT_SUMMARY_PARSE_H
#define PT_SUMMARY_PARSE_H

#include <stddef.h>

#include "summary.h"

/* A thread-safe set of pattern keys shared by the summaries read with it:
 * a pt_strset (model/strtab.h, where the numbers are).  Free the set only
 * after every summary read with it. */
typedef struct pt_strset pt_summary_keys; /* model/strtab.h */

pt_summary_keys *pt_summary_keys_new(void);     /* NULL when out of memory */
void pt_summary_keys_free(pt_summary_keys *ks); /* NULL is a no-op */
size_t pt_summary_keys_count(const pt_summary_keys *ks);  /* distinct keys held */

/* Parse the summary JSON buf[0..len) in one pass (docs/summary.md): the
 * same checks and the same result as pt_summary_read_mem, which calls it
 * with ks NULL.  With ks non-NULL the pattern keys point into ks: such a
 * summary must be freed with pt_summary_free_shared.  NULL with err filled
 * on failure: PT_EPARSE (syntax, with the byte offset), PT_EFORMAT (not a
 * summary, or a member of the wrong type or missing; offset of the value or
 * of the object missing it), PT_ENOMEM.  Thread-safe for distinct buffers;
 * ks may be shared by threads. */
pt_summary *pt_summary_parse(const char *buf, size_t len, pt_summary_keys *ks, pt_error *err);

/* pt_summary_read_file with pattern keys shared through ks (not NULL). */
pt_summary *pt_summary_read_file_shared(const char *path, pt_summary_keys *ks, pt_error *err);

/* pt_summary_parse, and with slim a digest's patterns held in
 * PT_PATTERN_HOT bytes each (pt_summary.pat_stride; what a member past it
 * says is skipped): index them with pt_summary_pat, and read nothing past
 * PT_PATTERN_HOT where pt_summary_whole is 0.  For the master's first
 * phase (src/diagnose/pipeline.c); code that reads whole patterns reads
 * with slim 0. */
pt_summary *pt_summary_parse_opt(const char *buf, size_t len, pt_summary_keys *ks, int slim,
				 pt_error *err);
/* pt_summary_read_file_shared with pt_summary_parse_opt's slim. */
pt_summary *pt_summary_read_file_slim(const char *path, pt_summary_keys *ks, pt_error *err);

/* Free a summary whose pattern keys belong to a pt_summary_keys set (the
 * keys are left to the set).  NULL is a no-op. */
void pt_summary_free_shared(pt_summary *s);

#endif
