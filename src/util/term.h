/*
 * term.h - making text safe for a terminal: every control character a name
 * could carry (ESC, BEL, CR, backspace, DEL, the C1 controls such as CSI
 * U+009B) is written as a visible escape, so a kernel, function, file or
 * host name cannot move the cursor, retitle the window or hide a line.
 * Used by everything the CLI prints (src/cli/main.c wraps stdout and
 * stderr with it); other printers (text report, tables) may call it on
 * single fields.  No state; thread-safe.
 */
#ifndef PT_TERM_H
#define PT_TERM_H

#include <stddef.h>

#include "strbuf.h"

/* Append s[0..n) to out with control characters escaped: C0 bytes and DEL
 * as "\xHH" (ESC is "\x1b"), C1 controls (UTF-8 C2 80..C2 9F) as "\u00HH",
 * and bytes that are not valid UTF-8 as "\xHH" (a terminal in an 8-bit mode
 * would take a lone 0x9b for CSI).  Newline and tab are kept when keep_nl
 * is non-zero (whole reports), escaped otherwise (one-line fields).
 * Everything else, including valid UTF-8, is copied as is.  Returns the
 * number of bytes of s consumed: n, less a trailing incomplete UTF-8
 * sequence when partial is non-zero (the caller passes it again with the
 * next chunk of a stream), else always n. */
size_t pt_term_escape(pt_sb *out, const char *s, size_t n, int keep_nl, int partial);

/* 1 when s[0..n) holds nothing pt_term_escape would change. */
int pt_term_is_safe(const char *s, size_t n, int keep_nl);

#endif
