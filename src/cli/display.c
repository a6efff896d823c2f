/*
 * display.c - `perftracker display DIR`: serve a report's PerfDisplay folder
 * (index.html, report.json) over HTTP on this machine, and (re)build its
 * page from report.json when asked or when the page is missing.
 * The last step of the flow: DIR/PerfDisplay/ -> browser.  Runs until
 * Ctrl-C (SIGINT) or SIGTERM, then stops the server and exits 0.
 */
#include "cli.h"
#include "report/page.h"
#include "display/server.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static const cli_usage usage = {
	"display",
	"perftracker display DIR [--host ADDR] [--port N] [--rebuild] [--no-serve] [-q]",
	"Serve the report in DIR (the folder given to 'analyze -o' or 'diagnose -o', or\n"
	"its PerfDisplay/ folder) at http://127.0.0.1:5000/ until Ctrl-C.  Only files\n"
	"under that folder are served, read-only.\n",
	NULL,
};

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

/* Called from the server thread, one line per request on stderr. */
static void log_request(void *ctx, const char *method, const char *path, int status)
{
	char ts[32];
	time_t t = time(NULL);
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(ts, sizeof(ts), "%H:%M:%S", &tm);
	pthread_mutex_lock(&log_lock);
	fprintf(stderr, "%s %s %s %d\n", ts, method, path, status);
	pthread_mutex_unlock(&log_lock);
}

static int is_dir(const char *p)
{
	struct stat st;

	return !stat(p, &st) && S_ISDIR(st.st_mode);
}

static int is_file(const char *p)
{
	struct stat st;

	return !stat(p, &st) && S_ISREG(st.st_mode);
}

int cmd_display(int argc, char **argv)
{
	pt_display_options opt = { PT_DISPLAY_DEFAULT_HOST, PT_DISPLAY_DEFAULT_PORT, log_request, NULL, 0 };
	pt_display_server *srv = NULL;
	const char *dir = NULL;
	char root[4096], page[4200], json[4200];
	int rebuild = 0, serve = 1, quiet = 0, rc = 0, npos, sig;
	pt_error err;
	sigset_t set;
	const pt_opt opts[] = {
		{ .type = PT_OPT_TSTRING, .long_name = "host", PT_TO(&opt.host), .argname = "ADDR",
		  .flags = PT_OPT_NONEMPTY,
		  .help = "address to listen on (default 127.0.0.1: this machine only;\n"
			  "0.0.0.0 makes the report readable by anyone who can reach it)" },
		PT_OPT_INT_RANGE(0, "port", PT_TO(&opt.port), "N", 0, 65535,
				 "port (default 5000; 0 picks a free one)"),
		PT_OPT_FLAG(0, "rebuild", PT_TO(&rebuild),
			    "write index.html and app.py again from report.json first\n"
			    "(done anyway when index.html is missing)"),
		PT_OPT_SET(0, "no-serve", PT_TO(&serve), 0, "stop after --rebuild instead of serving"),
		PT_OPT_FLAG('q', "quiet", PT_TO(&quiet), "do not log requests"),
		PT_OPT_END(),
	};

	npos = cli_parse_options(&usage, opts, argc, argv);
	if (npos < 0)
		return npos == CLI_HELP ? 0 : -1;
	if (npos > 1)
		return error("only one folder can be served (got '%s' and '%s')", argv[1], argv[2]);
	if (!npos)
		return cli_usage_error(&usage, "display: no folder given");
	dir = argv[1];
	if (quiet)
		opt.log = NULL;
	if (!is_dir(dir))
		return error("'%s': not a folder", dir);
	/* DIR is the analysis output (holding PerfDisplay/) or PerfDisplay itself. */
	if ((size_t)snprintf(root, sizeof(root), "%s/PerfDisplay", dir) >= sizeof(root))
		return error("'%s': path too long", dir);
	if (!is_dir(root))
		snprintf(root, sizeof(root), "%s", dir);
	snprintf(page, sizeof(page), "%s/index.html", root);
	snprintf(json, sizeof(json), "%s/report.json", root);
	if (!is_file(page) && !rebuild) {
		if (!is_file(json))
			return error("'%s': no PerfDisplay/index.html or report.json here "
				     "(write one with 'perftracker analyze TRACES... -o %s')", dir, dir);
		rebuild = 1;
	}
	if (rebuild) {
		pt_error_clear(&err);
		if (pt_page_build_dir(root, &err))
			return error_pt(&err);
		printf("perftracker: wrote %s\n", page);
		fflush(stdout);
	}
	if (!serve)
		return 0;

	/* Block the stop signals before the server thread starts so that only
	 * sigwait below sees them (threads inherit the mask). */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	pt_error_clear(&err);
	srv = pt_display_start(root, &opt, &err);
	if (!srv) {
		rc = error_pt(&err);
		goto out;
	}
	if (!pt_display_is_loopback(srv))
		warning("listening on %s: anyone who can reach this machine can read the report", opt.host);
	printf("perftracker: serving %s\nperftracker: open %s in a web browser (Ctrl-C to stop)\n", root,
	       pt_display_url(srv));
	fflush(stdout);
	if (sigwait(&set, &sig) == 0) {
		printf("\nperftracker: stopping (%s)\n", sig == SIGINT ? "interrupt" : sig == SIGTERM ? "terminate" : "hangup");
		fflush(stdout);
	}
	pt_display_stop(srv);
out:
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	return rc;
}
