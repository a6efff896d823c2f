/*
 * json.h - a small, strict JSON DOM for the records PerfTracker writes and
 * reads back whole: control-directory and node-channel records, report.json
 * (compare, the page), hardware-sample files, and the members of a summary
 * that have their own readers ("gpu_breakdown", "collectives",
 * "hw_series"); also the tests.
 *
 * Not for whole summaries (analysis/summary_parse.c reads those in one pass
 * into a pt_summary, on the same tokenizer) nor for raw traces (gigabytes:
 * src/trace has a streaming reader).  Built on util/jsontok.h: numbers are
 * exact (util/jsonnum.h), sizes and depth are checked, nothing is read past
 * len, and errors carry the byte offset.  Objects keep their keys in input
 * order.  One allocation arena per document; pt_json_free frees it all.
 * Thread-safe for distinct documents.
 */
#ifndef PT_JSON_H
#define PT_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "jsontok.h" /* PT_JSON_MAX_DEPTH */

typedef enum { PT_JSON_NULL, PT_JSON_FALSE, PT_JSON_TRUE, PT_JSON_NUM,
	       PT_JSON_STR, PT_JSON_ARR, PT_JSON_OBJ } pt_json_type;

typedef struct pt_json pt_json;
struct pt_json {
	pt_json_type type;
	double num;        /* PT_JSON_NUM */
	const char *str;   /* PT_JSON_STR: decoded, NUL-terminated; also set for keys */
	size_t len;        /* string length, or number of children */
	const char *key;   /* key when this value is an object member, else NULL */
	size_t keylen;
	pt_json *child;    /* first child (ARR/OBJ) */
	pt_json *next;     /* next sibling */
};

/* Parse buf[0..len).  Returns the root (owned by the caller, free with
 * pt_json_free) or NULL with err filled (code PT_EPARSE and the offset). */
pt_json *pt_json_parse(const char *buf, size_t len, pt_error *err);
/* Read and parse a whole file; err gets the path as subject. */
pt_json *pt_json_parse_file(const char *path, pt_error *err);
void pt_json_free(pt_json *root);  /* NULL is a no-op */

/* Member of an object by key (first match), NULL if absent or o is not an object. */
const pt_json *pt_json_get(const pt_json *o, const char *key);
/* i-th element of an array or object, NULL if out of range. */
const pt_json *pt_json_at(const pt_json *a, size_t i);
/* Conveniences: the value if present and of the right type, else def. */
double pt_json_num(const pt_json *o, const char *key, double def);
const char *pt_json_strv(const pt_json *o, const char *key, const char *def);
/* A number that fits int64_t (|v| <= 9e18, truncated toward zero), else def. */
int64_t pt_json_i64(const pt_json *o, const char *key, int64_t def);
/* The string member key (or "") into dst[cap], cut to fit, NUL-terminated. */
void pt_json_copy_str(char *dst, size_t cap, const pt_json *o, const char *key);

#endif
