/*
 * main.c - the perftracker command: dispatches to one file per subcommand
 * through a command table, and holds the CLI's printing helpers.
 * Sits at the end of the flow on the master (trigger, diagnose, analyze,
 * status) and on each node (agent, summarize).  A first argument starting
 * with "--" is the trigger (`c4d_perftracker --trigger-on ...`).
 */
#include <stddef.h> /* util/error.h (via cli.h) uses size_t without it */

#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct pt_cmd commands[] = {
	{ "summarize", cmd_summarize, "summarize TRACE -o SUMMARY.json: one worker's behaviour patterns" },
	{ "diagnose", cmd_diagnose, "diagnose SUMMARY... -o DIR: compare workers, write the report" },
	{ "analyze", cmd_analyze, "analyze PATH... -o DIR: summarize every trace, then diagnose" },
	{ "compare", cmd_compare, "compare BASELINE NEW -o DIR: why one run is slower than another" },
	{ "display", cmd_display, "display DIR [--port N]: serve the report's PerfDisplay page on 127.0.0.1" },
	{ "trigger", cmd_trigger, "--trigger-on [--auto-analyze] [--wait N] [--steps N] ...: profile the running job" },
	{ "agent", cmd_agent, "agent [--control-dir DIR]: the node agent (summarises raw traces)" },
	{ "status", cmd_status, "status [--control-dir DIR]: workers, steps, step rates, agents" },
	{ "hang-check", cmd_hang_check, "hang-check [--control-dir DIR]: is the job hung, which worker is stuck, where" },
};

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

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: perftracker <command> [options]\n\ncommands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\nrun 'perftracker <command> --help' for a command's options\n");
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	/* The reference's command line starts with a flag:
	 * `c4d_perftracker --trigger-on --auto-analyze ...`. */
	if (argv[1][0] == '-' && argv[1][1] == '-')
		return cmd_trigger(argc, argv) ? 1 : 0;
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1) ? 1 : 0;
	error("unknown command '%s'", argv[1]);
	usage(stderr);
	return 2;
}
