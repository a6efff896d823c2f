/*
 * unit.h - the units a report number is in: one list for the finding model
 * (a metric's unit), the report keys table (src/report/keys.def, a key's
 * unit) and every renderer (the text report's and the page's number
 * formats).  report.json spells each unit as PT_UNIT_NAMES says.  Public:
 * report.h's pt_metric carries one.
 */
#ifndef PT_UNIT_H
#define PT_UNIT_H

#include "../util/api.h"

PT_API_BEGIN

typedef enum {
	PT_UNIT_NONE,     /* "" : a plain number */
	PT_UNIT_MS,       /* "ms" */
	PT_UNIT_MS_STEP,  /* "ms per step" */
	PT_UNIT_US,       /* "us" */
	PT_UNIT_SHARE,    /* "share": 0..1, rendered as a percentage */
	PT_UNIT_X,        /* "x": a ratio */
	PT_UNIT_COUNT,    /* "count" */
	PT_UNIT_GBPS,     /* "GB/s" */
	PT_UNIT_BYTES,    /* "bytes" */
	PT_UNIT_S,        /* "s": seconds */
	PT_UNIT_PCT,      /* "%": a percentage, 0..100 (a share is 0..1) */
	PT_UNIT_N
} pt_unit;

/* report.json's spelling of each unit, indexed by pt_unit. */
#define PT_UNIT_NAMES { "", "ms", "ms per step", "us", "share", "x", "count", "GB/s", "bytes", "s", "%" }

PT_API_END

#endif
