/*
 * common.c - command-line helpers every subcommand shares (see cli.h):
 * options several commands take (--nsys-gpu-metrics, --comm-kernels), the
 * clock and sleeping of the commands that wait (trigger, hang-check,
 * analyze), and the control directory's worker list for the commands that
 * look at a running job (status, hang-check).
 */
#include "cli.h"
#include "control/control.h"
#include "control/nodechan.h"
#include "trace/nsys.h"
#include "model/commkind.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* arg is "--name" or "--name=...". */
static int is_opt(const char *arg, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(arg, name, n) && (arg[n] == 0 || arg[n] == '=');
}

double cli_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void cli_sleep(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	nanosleep(&ts, NULL);
}

int cli_control_workers(const char **dir, struct pt_worker_entry **w, size_t *n)
{
	pt_error e;
	int rc = -1;

	if (!*dir)
		*dir = pt_control_default_dir();
	pt_error_clear(&e);
	if (access(*dir, F_OK) != 0)
		error("'%s': no control directory (no collector has run here)", *dir);
	else if (pt_nodechan_workers(*dir, w, n, &e))
		error_pt(&e);
	else
		rc = 0;
	return rc;
}

int cli_opt_nsys_hz(const pt_opt *o, const char *arg, void *target, pt_error *e)
{
	int hz = PT_NSYS_HZ_DEFAULT;

	if (arg && pt_nsys_parse_hz(arg, &hz))
		return pt_error_set(e, PT_EINVAL, -1,
				    "option '--%s': '%s' is not a rate in Hz from %d to %d",
				    o->long_name, arg, PT_NSYS_HZ_MIN, PT_NSYS_HZ_MAX);
	*(int *)target = hz;
	return 0;
}

/* ---- communication-kernel rules (src/model/commkind.h) ------------------ */

int cli_comm_kernels(int *argc, char **argv)
{
	const char *env = getenv("PERFTRACKER_COMM_KERNELS");
	char buf[1024];
	pt_error e;
	int i, j;

	pt_error_clear(&e);
	if (env && *env && pt_commkind_load_file(env, &e))
		return error("PERFTRACKER_COMM_KERNELS: %s", pt_error_format(&e, buf, sizeof(buf)));
	/* --comm-kernels FILE (or =FILE), anywhere after the command, for
	 * every command; taken out of argv before the command parses it. */
	for (i = 1, j = 1; i < *argc; i++) {
		const char *a = argv[i], *v;

		if (!is_opt(a, "--comm-kernels")) {
			argv[j++] = argv[i];
			continue;
		}
		v = strchr(a, '=') ? strchr(a, '=') + 1 : (i + 1 < *argc ? argv[++i] : NULL);
		if (!v || !*v)
			return error("option '--comm-kernels' needs a file");
		pt_error_clear(&e);
		if (pt_commkind_load_file(v, &e))
			return error_pt(&e);
	}
	argv[j] = NULL;
	*argc = j;
	return 0;
}
