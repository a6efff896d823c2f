/*
 * usage.c - the only code in the project that prints errors, and the
 * subcommands' command lines: error(), warning(), die() and error_pt() for
 * a library error record; cli_parse_options, which runs a command's option
 * table (util/opts.h) over argv and reports what is wrong in one line; and
 * the --help printed from the same table.  Every subcommand
 * (src/cli/<name>.c) reports through these, so each message is one line,
 * "perftracker: <msg>" on stderr (already escaped for the terminal by
 * main.c).
 */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- command lines: option tables and their --help ----------------------- */

/* The option column is as wide as its widest entry up to this; a longer
 * entry puts its help on the next line. */
#define LEFT_MAX 24

/* "-o, --output DIR", "--z Z", "-q", "--nsys-gpu-metrics [HZ]". */
static void left_col(const pt_opt *o, char *buf, size_t cap)
{
	char arg[128] = "";
	size_t n = 0;
	int w;

	if (o->type == PT_OPT_TCHOICE && !o->argname) {
		for (size_t k = 0; o->choices[k] && n < sizeof(arg); k++) {
			w = snprintf(arg + n, sizeof(arg) - n, "%s%s", k ? "|" : "", o->choices[k]);
			n += w > 0 ? (size_t)w : 0;
		}
	} else if (o->type != PT_OPT_TFLAG && o->argname) {
		snprintf(arg, sizeof(arg), (o->flags & PT_OPT_OPTARG) ? "[%s]" : "%s", o->argname);
	}
	if (o->short_name && o->long_name)
		snprintf(buf, cap, "-%c, --%s%s%s", o->short_name, o->long_name, *arg ? " " : "", arg);
	else if (o->long_name)
		snprintf(buf, cap, "--%s%s%s", o->long_name, *arg ? " " : "", arg);
	else
		snprintf(buf, cap, "-%c%s%s", o->short_name, *arg ? " " : "", arg);
}

static size_t left_width(const pt_opt *t, size_t w)
{
	char buf[256];

	for (; t->type != PT_OPT_TEND; t++) {
		size_t n;

		if (t->type == PT_OPT_TINCLUDE) {
			w = left_width(t->sub, w);
			continue;
		}
		if (t->type == PT_OPT_TGROUP)
			continue;
		left_col(t, buf, sizeof(buf));
		n = strlen(buf);
		if (n <= LEFT_MAX && n > w)
			w = n;
	}
	return w;
}

/* One row: "  LEFT   help", continuation lines of help under its start. */
static void row(FILE *f, const char *left, const char *help, size_t w)
{
	const char *p = help ? help : "";
	size_t n = strlen(left);

	fprintf(f, "  %s", left);
	if (n > w)
		fprintf(f, "\n  %*s", (int)w, "");
	else
		fprintf(f, "%*s", (int)(w - n), "");
	for (;;) {
		const char *nl = strchr(p, '\n');
		int len = nl ? (int)(nl - p) : (int)strlen(p);

		fprintf(f, "  %.*s\n", len, p);
		if (!nl || !nl[1])
			break;
		p = nl + 1;
		fprintf(f, "  %*s", (int)w, "");
	}
}

/* The rows of table t; *headed is set once a heading was printed. */
static void rows(FILE *f, const pt_opt *t, size_t w, int *headed)
{
	char buf[256];

	for (; t->type != PT_OPT_TEND; t++) {
		if (t->type == PT_OPT_TGROUP || (t->type == PT_OPT_TINCLUDE && t->help)) {
			fprintf(f, "\n%s\n", t->help);
			*headed = 1;
		}
		if (t->type == PT_OPT_TINCLUDE)
			rows(f, t->sub, w, headed);
		if (t->type == PT_OPT_TINCLUDE || t->type == PT_OPT_TGROUP)
			continue;
		left_col(t, buf, sizeof(buf));
		row(f, buf, t->help, w);
	}
}

static void usage_lines(FILE *f, const cli_usage *u)
{
	const char *p = u->usage;

	for (int first = 1; *p; first = 0) {
		const char *nl = strchr(p, '\n');
		int len = nl ? (int)(nl - p) : (int)strlen(p);

		fprintf(f, "%s%.*s\n", first ? "usage: " : "       ", len, p);
		p += len + (nl ? 1 : 0);
	}
}

void cli_usage_print(FILE *f, const cli_usage *u, const pt_opt *opts)
{
	size_t w = left_width(opts, strlen("-h, --help"));
	int headed = 0;

	usage_lines(f, u);
	if (u->about)
		fprintf(f, "\n%s", u->about);
	fprintf(f, "\noptions:\n");
	rows(f, opts, w, &headed);
	/* (After a group's heading: a blank line, so -h is not one of them.) */
	if (headed)
		fputc('\n', f);
	row(f, "-h, --help", "show this help", w);
	if (u->footer)
		fprintf(f, "\n%s", u->footer);
}

int cli_usage_error(const cli_usage *u, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
	usage_lines(stderr, u);
	fprintf(stderr, "run 'perftracker %s --help' for the options\n", u->name);
	return -1;
}

int cli_usage_unexpected(const cli_usage *u, const char *arg)
{
	return error("%s: unexpected argument '%s' (see 'perftracker %s --help')", u->name, arg,
		     u->name);
}

int cli_parse_options(const cli_usage *u, const pt_opt *opts, int argc, char **argv)
{
	pt_error e;
	int n;

	/* A table that names an option twice is a bug in this program: say
	 * so rather than let one entry shadow the other. */
	if (pt_opts_check(opts, &e))
		return error("%s: internal error in the option table: %s", u->name, e.msg);
	n = pt_opts_parse(opts, argc, argv, &e);
	if (n == PT_OPTS_HELP) {
		cli_usage_print(stdout, u, opts);
		return CLI_HELP;
	}
	if (n == PT_OPTS_UNKNOWN)
		return error("%s: %s (see 'perftracker %s --help')", u->name, e.msg, u->name);
	if (n < 0)
		return error_pt(&e);
	return n;
}
