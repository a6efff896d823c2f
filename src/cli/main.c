/*
 * main.c - the perftracker command: dispatches to one file per subcommand
 * through a command table (the printing helpers are in usage.c).
 * Sits at the end of the flow on the master (trigger, diagnose, analyze,
 * status) and on each node (agent, summarize).  A first argument starting
 * with "--" is the trigger (`c4d_perftracker --trigger-on ...`).
 *
 * Everything the CLI prints passes through util/term.c: stdout and stderr
 * are replaced at start by streams that write control characters (ESC,
 * BEL, CR, C1) as visible escapes, so a kernel, function, file or host name
 * from a trace or a control directory cannot drive the user's terminal.
 */
#include "cli.h"
#include "util/file.h"
#include "perftracker.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/term.h"

static const struct pt_cmd commands[] = {
	{ "summarize", cmd_summarize, "summarize TRACE -o SUMMARY.json: one worker's behaviour patterns" },
	{ "digest", cmd_digest, "digest SUMMARY|DIR...: write the digests diagnose reads first at scale" },
	{ "diagnose", cmd_diagnose, "diagnose SUMMARY... -o DIR: compare workers, write the report" },
	{ "analyze", cmd_analyze, "analyze PATH... -o DIR: summarize every trace, then diagnose" },
	{ "compare", cmd_compare, "compare BASELINE NEW -o DIR: why one run is slower than another" },
	{ "timeline", cmd_timeline, "timeline RUN_DIR [TRACE...]: write the run's timeline.json.gz for Perfetto" },
	{ "display", cmd_display, "display DIR [--port N]: serve the report's PerfDisplay page on 127.0.0.1" },
	{ "trigger", cmd_trigger, "--trigger-on [--auto-analyze] [--wait N] [--steps N] ...: profile the running job" },
	{ "agent", cmd_agent, "agent [--control-dir DIR]: the node agent (summarises raw traces)" },
	{ "status", cmd_status, "status [--control-dir DIR]: workers, steps, step rates, agents" },
	{ "hang-check", cmd_hang_check, "hang-check [--control-dir DIR]: is the job hung, which worker is stuck, where" },
};

/* ---- escaping stdout and stderr ------------------------------------------ */

struct esc_stream {
	int fd;
	char pend[4];   /* the start of a UTF-8 sequence cut by a buffer flush */
	size_t npend;
};

static struct esc_stream esc_out = { 1, { 0 }, 0 }, esc_err = { 2, { 0 }, 0 };

static ssize_t esc_write(void *cookie, const char *buf, size_t size)
{
	struct esc_stream *e = cookie;
	pt_sb sb = { 0 }, in = { 0 };
	const char *p = buf;
	size_t n = size, used;
	int rc;

	if (e->npend) {
		pt_sb_add(&in, e->pend, e->npend);
		pt_sb_add(&in, buf, size);
		if (in.oom) {
			pt_sb_free(&in);
			return -1;
		}
		p = in.buf;
		n = in.len;
	}
	used = pt_term_escape(&sb, p, n, 1, 1);
	e->npend = n - used;
	memcpy(e->pend, p + used, e->npend);
	rc = sb.oom ? -1 : pt_file_write_all(e->fd, sb.buf, sb.len);
	pt_sb_free(&sb);
	pt_sb_free(&in);
	return rc ? -1 : (ssize_t)size;
}

static int esc_close(void *cookie)
{
	struct esc_stream *e = cookie;
	pt_sb sb = { 0 };
	int rc = 0;

	if (e->npend) {
		pt_term_escape(&sb, e->pend, e->npend, 1, 0);
		rc = sb.oom ? -1 : pt_file_write_all(e->fd, sb.buf, sb.len);
		e->npend = 0;
	}
	pt_sb_free(&sb);
	return rc;
}

static FILE *esc_open(struct esc_stream *e, int mode)
{
	cookie_io_functions_t io = { NULL, esc_write, NULL, esc_close };
	FILE *f = fopencookie(e, "w", io);

	if (f)
		setvbuf(f, NULL, mode, BUFSIZ);
	return f;
}

/* Replace stdout (fully buffered; line buffered on a terminal) and stderr
 * (line buffered, so that a message is one write) by escaping streams. */
static void escape_output(void)
{
	FILE *o = esc_open(&esc_out, isatty(1) ? _IOLBF : _IOFBF);
	FILE *e = esc_open(&esc_err, _IOLBF);

	if (o)
		stdout = o;
	if (e)
		stderr = e;
}

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: perftracker <command> [options]\n\ncommands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\nrun 'perftracker <command> --help' for a command's options;\n"
		"'perftracker --version' prints the version\n");
	fprintf(f, "every command takes --comm-kernels FILE (also PERFTRACKER_COMM_KERNELS=FILE):\n"
		   "lines 'GLOB ROLE' naming more communication kernels (docs/input.md)\n");
}

int main(int argc, char **argv)
{
	size_t i;

	escape_output();
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V") ||
	    !strcmp(argv[1], "version")) {
		printf("perftracker %s\n", PT_VERSION);
		return 0;
	}
	if (cli_comm_kernels(&argc, argv))
		return 1;
	if (argc < 2) {
		usage(stderr);
		return 2;
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
