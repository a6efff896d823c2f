/*
 * jsonnum.h - the one JSON number reader: RFC 8259 grammar and a correctly
 * rounded conversion to double (round to nearest even, what strtod gives
 * in the C locale), for every JSON reader that builds doubles: the DOM
 * (util/json.c), the tokenizer (util/jsontok.h) and through it the summary
 * reader (analysis/summary_parse.c).  The Kineto trace scanner keeps its own
 * streaming mantissa-and-exponent scanner (src/trace/kineto.c): trace times
 * are read as exact integers there, never as doubles.
 *
 * Pure function of its arguments, no allocation, no locale: thread-safe and
 * usable from the collector's watchdog thread.
 */
#ifndef PT_JSONNUM_H
#define PT_JSONNUM_H

#include <stddef.h>

/* What pt_jsonnum_parse found. */
typedef enum {
	PT_JSONNUM_OK = 0,
	PT_JSONNUM_BAD,      /* no number here: *end = offset of the offending byte */
	PT_JSONNUM_BAD_FRAC, /* "1." / "1.e5": *end = offset after the '.' */
	PT_JSONNUM_BAD_EXP,  /* "1e" / "1e+": *end = offset where a digit was expected */
	PT_JSONNUM_RANGE,    /* well-formed, but overflows to infinity: *end = 0 */
} pt_jsonnum_status;

/* The JSON number at s[0..len) (no leading '+' or '.', no surrounding
 * space; a number ends where the grammar ends: "01" is "0", then '1'),
 * converted exactly: Clinger's fast path for short values, Eisel-Lemire's
 * 128-bit product for up to 19 significant digits, strtod on a bounded
 * decimal rewrite (at most 800 significant digits and a sticky digit,
 * which rounds the same) for the rest (longer values, subnormals,
 * overflow).  Underflow gives 0 or a subnormal, not an error; "-0" gives
 * -0.0.  On PT_JSONNUM_OK, *out is the value and *end the bytes consumed;
 * otherwise *out is untouched and *end as described above. */
pt_jsonnum_status pt_jsonnum_parse(const char *s, size_t len, double *out, size_t *end);

/* The message for a status ("invalid number: digit expected after '.'",
 * "number out of range", ...); "" for PT_JSONNUM_OK.  Static storage. */
const char *pt_jsonnum_message(pt_jsonnum_status st);

#endif
