/*
 * error.h - error codes and the error record every library call can fill.
 *
 * Library code returns a pt_status and, on failure (or on a warning the
 * caller may want to show), fills a pt_error: a lowercase one-line message,
 * the subject (usually the file), and the byte offset where it went wrong
 * (-1 when no offset applies).  Only the CLI prints these.
 */
#ifndef PT_ERROR_H
#define PT_ERROR_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"

PT_API_BEGIN

typedef enum {
	PT_OK = 0,
	PT_EIO = -1,      /* open/read/write failed (errno in message) */
	PT_EPARSE = -2,   /* malformed input (offset set) */
	PT_EFORMAT = -3,  /* well-formed but not what we expect (not a trace) */
	PT_ENOMEM = -4,   /* allocation failed or size limit exceeded */
	PT_EINVAL = -5,   /* bad argument */
	PT_EPERM = -6,    /* refused: a directory or file we must not trust */
} pt_status;

#define PT_ERROR_MSG_MAX 512

typedef struct pt_error {
	int code;                    /* pt_status */
	int64_t offset;              /* byte offset into the input, -1 if none */
	char subject[256];           /* file name or other subject, may be "" */
	char msg[PT_ERROR_MSG_MAX];  /* lowercase, no trailing newline */
} pt_error;

/* Reset e (NULL is allowed: all pt_error_* calls accept NULL and do nothing). */
void pt_error_clear(pt_error *e);

/* Fill e with code, offset and a printf-style message; returns code so that
 * callers can write `return pt_error_set(e, PT_EPARSE, off, "...")`. */
int pt_error_set(pt_error *e, int code, int64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Set the subject (typically the path) if not already set. */
void pt_error_subject(pt_error *e, const char *subject);

/* Format "subject: msg (at byte N)" into buf; returns buf. */
const char *pt_error_format(const pt_error *e, char *buf, size_t len);

PT_API_END

#endif
