/*
 * summary_format.h - the summary JSON format (docs/summary.md) as data:
 * one table row per member of each object, read by the writer
 * (summary_io.c) and the reader (summary_parse.c), so that a member is
 * added, renamed or made optional in one line.
 *
 * Flow: pt_summary --summary_io.c walks these tables--> SUMMARY.json
 *       --summary_parse.c matches names against them--> pt_summary.
 * Rows are in the writer's order (the reader tries the row after the last
 * match first, so files the writer made take one memcmp per member).
 * Internal to src/analysis; the tables are constant: thread-safe.
 */
#ifndef PT_SUMMARY_FORMAT_H
#define PT_SUMMARY_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "../util/jsontok.h"

/* How a member's value is stored, written and read. */
typedef enum {
	/* scalars at `off` in the row's struct */
	PT_SF_STR,      /* char *: written "" when NULL; read: a string */
	PT_SF_STR_NULL, /* char *: written null when NULL; read: a string or null */
	PT_SF_CHARS,    /* char[PT_SF_CHARS_MAX]: a string that must fit */
	PT_SF_KEY,      /* char *: a pattern key (shared through the key set) */
	PT_SF_I64,      /* int64_t: an integer >= lo */
	PT_SF_U64,      /* uint64_t: a non-negative integer */
	PT_SF_U32,      /* uint32_t: a non-negative integer up to UINT32_MAX */
	PT_SF_DBL,      /* double: a number (null reads as NaN) */
	PT_SF_DBL_IN,   /* double in [lo, hi] (NaN passes) */
	PT_SF_DBL_POS,  /* double in (0, hi] */
	PT_SF_BOOL,     /* int */
	PT_SF_CLASS,    /* uint8_t pt_class, by name (not idle) */
	PT_SF_KIND,     /* uint8_t pt_kind, by name */
	PT_SF_ROLE,     /* uint8_t pt_comm_role, by name; written for communication
	                   patterns with a role only; an unknown one reads as
	                   "collective" */
	/* members with code of their own on both sides */
	PT_SF_FORMAT, PT_SF_VERSION, PT_SF_WINDOW, PT_SF_STEPS, PT_SF_CLASS_MS,
	PT_SF_BREAKDOWN, PT_SF_HW_GPU, PT_SF_HW_SERIES, PT_SF_COLLECTIVES, PT_SF_CRITPATH, PT_SF_TIMELINE, PT_SF_P2P, PT_SF_PATTERNS,
	PT_SF_STEP_MS, PT_SF_HW,
} pt_sf_type;

#define PT_SF_CHARS_MAX 48  /* pt_hw_link.group */

/* When the writer writes a member (the reader takes it whenever present). */
typedef enum {
	PT_SF_ALWAYS,
	PT_SF_IF_POSITIVE, /* value > 0 (0, negative and NaN mean "unknown") */
	PT_SF_IF_NONNEG,   /* value >= 0 (-1 means "not measured") */
	PT_SF_IF_SET,      /* pointer not NULL (a list: not empty) */
	PT_SF_IF_PREV,     /* the row above was written (members that go together) */
} pt_sf_when;

/* Flags. */
#define PT_SF_IDENTITY 1  /* also in a failed worker's summary (which has "error") */
#define PT_SF_FULL_ONLY 2 /* left out of a digest (digest.h), and not required there */

typedef struct pt_sf_member {
	pt_jtok_name name;  /* first: the reader's name table (jsontok.h) */
	uint8_t type;       /* pt_sf_type */
	uint8_t when;       /* pt_sf_when */
	uint8_t flags;
	uint8_t required;   /* 0 optional; else the order in which a missing one is reported */
	uint8_t version;    /* the summary version that added it */
	size_t off;         /* offset of the field (scalar types) */
	double lo, hi;      /* bounds (I64: lo; DBL_IN: [lo, hi]; DBL_POS: hi) */
} pt_sf_member;

typedef struct pt_sf_table {
	const pt_sf_member *m;
	int n;
	int depth;          /* nesting depth of the members' values (the root object is 0) */
	const char *prefix; /* before member names in messages ("hw ", "hw_gpu ") */
} pt_sf_table;

/* One step's row (steps are two arrays in pt_summary). */
typedef struct pt_sf_step {
	int64_t number;
	double ms;
} pt_sf_step;

/* The summary object, "window", a "steps" element, a pattern, one of its
 * "hw" links, and "hw_gpu" ("class_ms" has a number per class name, compute first). */
extern const pt_sf_table pt_sf_top, pt_sf_window, pt_sf_step_tab, pt_sf_pattern, pt_sf_hw_link,
	pt_sf_hw_gpu;
/* A digest writes a pattern that is no collective and has no hardware
 * links as an array of values, not an object: those of the pattern rows
 * pt_sf_digest_row[] names (key, class, kind, count, total_ms, median_ms,
 * bottleneck, exec_ratio), read with pt_sf_pattern_row (depth 4).  Half
 * the bytes of the object (docs/summary.md "Digests"). */
#define PT_SF_DIGEST_ROW_N 8
extern const pt_sf_table pt_sf_pattern_row;
extern const uint8_t pt_sf_digest_row[PT_SF_DIGEST_ROW_N];

/* Durations above this (about 11.6 days) are not from a profiled window of
 * a few steps: a value like 1e308 would overflow every sum into inf. */
#define PT_SF_MAX_MS 1e9

#endif
