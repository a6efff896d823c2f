/*
 * names.h - function names for people: the text report (text_people.c)
 * and the page (from the report's display.short, made here) show kernel
 * names, CUDA calls and Python stacks in a fixed width.
 *
 * Rules: C++ names lose "void", namespaces, template arguments ("<…>") and
 * the parameter list; a Python/CPU stack ("a|b|c", root first) reads leaf
 * first ("c ← b ← a", "/x/y.py: f" as "y.py: f"); a kernel key's launch
 * shape ("…1_1_1|128_1_1") is dropped.  Names of one table that would
 * then read the same get back the first word where they differ
 * ("reduce_kernel<…512…>") and, if still equal, their launch shape.  What
 * is still too wide is cut in the middle ("head…tail").  Control
 * characters print as \xNN.
 *
 * All functions are pure and thread-safe; outputs are NUL-terminated.
 */
#ifndef PT_REPORT_NAMES_H
#define PT_REPORT_NAMES_H

#include <stddef.h>

/* Columns a UTF-8 string takes (code points; continuation bytes count 0). */
size_t pt_name_width(const char *s);

/* s with control bytes (< 0x20, 0x7f) as \xNN, into out (cap bytes,
 * truncated on a code point boundary when short); returns out. */
char *pt_name_escape(const char *s, char *out, size_t cap);

/* The short form of one key (rules above, escaping included), into out;
 * returns out. */
char *pt_name_short(const char *key, char *out, size_t cap);

/* s cut in the middle to at most width columns ("head…tail"), into out;
 * returns out.  width < 3 gives a prefix. */
char *pt_name_fit(const char *s, size_t width, char *out, size_t cap);

/* Short forms of keys[0..n) that stay different where the keys differ,
 * each fitted to width columns: out[i] is malloc'ed (free each, then the
 * array's owner frees the array).  0, or -1 when out of memory (out[]
 * then holds NULLs). */
int pt_name_short_set(const char *const *keys, size_t n, size_t width, char **out);

/* The name a finding's sentence uses for a function key of class cls
 * (PT_C_*, src/model/store.h): a Python/CPU stack's last frame; a kernel
 * without "void ", its launch shape, template arguments and parameter list;
 * cut to 120 bytes with "...".  No escaping (the writers escape).  Into
 * buf; returns buf. */
const char *pt_name_sentence(const char *key, int cls, char *buf, size_t cap);

/* A function key in a few words, as the text report's findings name it: a
 * stack's last frame shortened (with its caller's file and function when
 * the frame is a builtin such as "<built-in function sleep>": "sleep in
 * train.py: load_batch"), a kernel as pt_name_short.  Into buf; returns
 * buf. */
const char *pt_name_leaf(const char *key, char *buf, size_t cap);

/* A stack "a|b|caller|leaf" as the Python section's sentences name it:
 * "leaf (called from caller)", each at most 200 bytes; a key with no '|'
 * as it is.  No escaping.  Into buf; returns buf. */
const char *pt_name_called_from(const char *key, char *buf, size_t cap);

/* A duration in ms as people read it: three significant digits in s, ms,
 * µs or ns ("4.50 µs", "12.3 ms", "0 ms").  Into buf; returns buf. */
const char *pt_fmt_ms(double ms, char *buf, size_t cap);

#endif
