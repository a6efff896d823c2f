/*
 * usage.c - the only code in the project that prints errors: error(),
 * warning(), die() and error_pt() for a library error record, and the
 * option-value checks that die naming the option (opt_long, opt_double).
 * Every subcommand (src/cli/<name>.c) reports through these, so each
 * message is one line, "perftracker: <msg>" on stderr (already escaped for
 * the terminal by main.c).
 */
#include <stddef.h> /* util/error.h (via cli.h) uses size_t without it */

#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static void vreport(const char *prefix, const char *fmt, va_list ap)
{
	char buf[4096];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	fprintf(stderr, "perftracker: %s%s\n", prefix, buf);
}

int error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
	return -1;
}

void warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("warning: ", fmt, ap);
	va_end(ap);
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
	exit(1);
}

int error_pt(const pt_error *e)
{
	char buf[1024];

	return error("%s", pt_error_format(e, buf, sizeof(buf)));
}

long opt_long(const char *opt, const char *val)
{
	char *end;
	long v;

	if (!val)
		die("option '%s' needs a value", opt);
	errno = 0;
	v = strtol(val, &end, 10);
	if (errno || end == val || *end || v < 0)
		die("option '%s': '%s' is not a non-negative integer", opt, val);
	return v;
}

double opt_double(const char *opt, const char *val)
{
	char *end;
	double v;

	if (!val)
		die("option '%s' needs a value", opt);
	errno = 0;
	v = strtod(val, &end);
	if (errno || end == val || *end || !(v >= 0))
		die("option '%s': '%s' is not a non-negative number", opt, val);
	return v;
}
