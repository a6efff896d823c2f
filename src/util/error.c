/*
 * error.c - filling and formatting pt_error records (see error.h).
 * Used by every stage; never prints.
 */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void pt_error_clear(pt_error *e)
{
	if (!e)
		return;
	e->code = PT_OK;
	e->offset = -1;
	e->subject[0] = 0;
	e->msg[0] = 0;
}

int pt_error_set(pt_error *e, int code, int64_t offset, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return code;
	e->code = code;
	e->offset = offset;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return code;
}

void pt_error_subject(pt_error *e, const char *subject)
{
	if (!e || !subject || e->subject[0])
		return;
	snprintf(e->subject, sizeof(e->subject), "%s", subject);
}

const char *pt_error_format(const pt_error *e, char *buf, size_t len)
{
	if (!e || !len)
		return "";
	if (e->offset >= 0)
		snprintf(buf, len, "%s%s%s (at byte %lld)", e->subject,
			 e->subject[0] ? ": " : "", e->msg, (long long)e->offset);
	else
		snprintf(buf, len, "%s%s%s", e->subject, e->subject[0] ? ": " : "", e->msg);
	return buf;
}
