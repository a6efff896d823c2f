/*
 * status.c - `perftracker status`: what the control directory says about
 * the job right now: every registered worker with its step, step rate and
 * time since its last step, the node agents, and the last trigger.
 * Reads the records the collector (python/perftracker) and the agent write.
 */
#include <stddef.h>

#include "cli.h"
#include "control/control.h"
#include "util/json.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
	"usage: perftracker status [options]\n"
	"\n"
	"List the workers registered in the control directory (step, step rate, time\n"
	"since the last step, state), the node agents and the last trigger.\n"
	"\n"
	"options:\n"
	"  --control-dir DIR    control directory ($PERFTRACKER_CONTROL_DIR, /tmp/perftracker/control)\n"
	"  --json               one JSON object instead of the table\n"
	"  --stale SEC          a worker without a heartbeat for SEC is 'stale' (30)\n"
	"  --prune              remove the records of workers gone for good (dead or stale)\n"
	"  -h, --help           show this help\n";

static const char *value(int argc, char **argv, int *i)
{
	const char *a = argv[*i], *eq = strchr(a, '=');

	if (eq && a[0] == '-' && a[1] == '-')
		return eq + 1;
	if (*i + 1 >= argc)
		die("option '%s' needs a value", a);
	return argv[++*i];
}

static int is(const char *a, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(a, name, n) && (a[n] == 0 || a[n] == '=');
}

/* "alive", "stale" (no heartbeat lately) or "dead" (pid gone, this machine). */
static const char *liveness(const pt_worker_entry *w, double now, double stale,
			    const char *node)
{
	if (pt_control_worker_alive(w, now, stale, node))
		return "alive";
	if (!strcmp(w->info.node, node) && pt_control_worker_alive(w, now, 1e18, node) == 0)
		return "dead";
	return "stale";
}

static void fmt_age(char *out, size_t cap, double s)
{
	if (s < 0)
		snprintf(out, cap, "-");
	else if (s < 100)
		snprintf(out, cap, "%.1fs", s);
	else if (s < 6000)
		snprintf(out, cap, "%.0fm", s / 60);
	else
		snprintf(out, cap, "%.0fh", s / 3600);
}

static void list_agents(const char *dir, double now, pt_sb *js, int json)
{
	char path[PT_CONTROL_PATH_MAX];
	char **names = NULL;
	size_t n = 0, shown = 0;

	if (pt_control_record_path(path, sizeof(path), dir, "agents", NULL, NULL))
		return;
	if (pt_control_list(dir, "agents", NULL, &names, &n, NULL))
		return;
	if (json)
		pt_sb_adds(js, ",\"agents\":[");
	for (size_t i = 0; i < n; i++) {
		char p[PT_CONTROL_PATH_MAX + 300];
		pt_json *j;
		int running;

		snprintf(p, sizeof(p), "%s/%s.json", path, names[i]);
		j = pt_json_parse_file(p, NULL);
		if (!j)
			continue;
		running = pt_control_agent_running(dir, pt_json_strv(j, "host", names[i]), now, 30);
		if (json) {
			if (shown)
				pt_sb_addc(js, ',');
			pt_sb_adds(js, "{\"host\":");
			pt_sb_add_json_str(js, pt_json_strv(j, "host", ""),
					   strlen(pt_json_strv(j, "host", "")));
			pt_sb_addf(js, ",\"pid\":%.0f,\"running\":%s,\"processed\":%.0f,\"failed\":%.0f,"
				   "\"age\":", pt_json_num(j, "pid", -1), running ? "true" : "false",
				   pt_json_num(j, "processed", 0), pt_json_num(j, "failed", 0));
			pt_sb_add_double(js, now - pt_json_num(j, "time", 0));
			pt_sb_addc(js, '}');
		} else {
			char age[32];

			if (!shown)
				printf("\nagents:\n");
			fmt_age(age, sizeof(age), now - pt_json_num(j, "time", 0));
			printf("  %-24s pid %-8.0f %-8s traces %.0f (%.0f failed), heartbeat %s ago\n",
			       pt_json_strv(j, "host", names[i]), pt_json_num(j, "pid", -1),
			       running ? "running" : "gone", pt_json_num(j, "processed", 0),
			       pt_json_num(j, "failed", 0), age);
		}
		shown++;
		pt_json_free(j);
	}
	if (json)
		pt_sb_addc(js, ']');
	else if (!shown)
		printf("\nagents: none running\n");
	pt_control_names_free(names, n);
}

int cmd_status(int argc, char **argv)
{
	const char *dir = NULL;
	int json = 0, prune = 0;
	double stale = 30, now;
	pt_worker_entry *w = NULL;
	size_t n = 0, pruned = 0, shown = 0;
	pt_error e;
	char node[PT_CONTROL_HOST_MAX];
	pt_trigger t;
	pt_sb js = { 0 };

	for (int i = 1; i < argc; i++) {
		const char *o = argv[i];

		if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
			fputs(usage_text, stdout);
			return 0;
		} else if (is(o, "--control-dir")) {
			dir = value(argc, argv, &i);
		} else if (!strcmp(o, "--json")) {
			json = 1;
		} else if (!strcmp(o, "--prune")) {
			prune = 1;
		} else if (is(o, "--stale")) {
			stale = opt_double("--stale", value(argc, argv, &i));
		} else {
			error("status: unknown option '%s'", o);
			fputs(usage_text, stderr);
			return -1;
		}
	}
	if (!dir)
		dir = pt_control_default_dir();
	if (access(dir, F_OK) != 0)
		return error("'%s': no control directory (no collector has run here)", dir);
	pt_control_nodename(node, sizeof(node));
	pt_error_clear(&e);
	if (pt_control_workers(dir, &w, &n, &e))
		return error_pt(&e);
	now = pt_control_now();
	if (json) {
		pt_sb_adds(&js, "{\"control_dir\":");
		pt_sb_add_json_str(&js, dir, strlen(dir));
		pt_sb_adds(&js, ",\"workers\":[");
	} else {
		printf("%-32s %-16s %5s %5s %8s %9s %8s %10s  %s\n", "WORKER", "HOST", "RANK", "LOCAL",
		       "PID", "STEP", "STEPS/S", "LAST STEP", "STATE");
	}
	for (size_t i = 0; i < n; i++) {
		const pt_worker_entry *x = &w[i];
		const char *live = liveness(x, now, stale, node);
		double since = x->has_hb && x->hb.step_time > 0 ? now - x->hb.step_time : -1;

		if (prune && strcmp(live, "alive")) {
			if (pt_control_unregister(dir, x->info.id, NULL) == PT_OK)
				pruned++;
			continue;
		}
		if (json) {
			if (shown++)
				pt_sb_addc(&js, ',');
			pt_sb_adds(&js, "{\"id\":");
			pt_sb_add_json_str(&js, x->info.id, strlen(x->info.id));
			pt_sb_adds(&js, ",\"host\":");
			pt_sb_add_json_str(&js, x->info.host, strlen(x->info.host));
			pt_sb_addf(&js, ",\"rank\":%lld,\"local_rank\":%lld,\"world_size\":%lld,"
				   "\"pid\":%lld,\"step\":%lld,\"rate\":",
				   (long long)x->info.rank, (long long)x->info.local_rank,
				   (long long)x->info.world_size, (long long)x->info.pid,
				   (long long)x->hb.step);
			pt_sb_add_double(&js, x->hb.rate);
			pt_sb_adds(&js, ",\"since_last_step\":");
			if (since >= 0)
				pt_sb_add_double(&js, since);
			else
				pt_sb_adds(&js, "null");
			pt_sb_adds(&js, ",\"state\":");
			pt_sb_add_json_str(&js, x->hb.state[0] ? x->hb.state : "unknown",
					   strlen(x->hb.state[0] ? x->hb.state : "unknown"));
			pt_sb_adds(&js, ",\"liveness\":");
			pt_sb_add_json_str(&js, live, strlen(live));
			pt_sb_addc(&js, '}');
		} else {
			char age[32], rate[32], st[64];

			fmt_age(age, sizeof(age), since);
			snprintf(rate, sizeof(rate), "%.2f", x->hb.rate);
			snprintf(st, sizeof(st), "%s%s%s", live, x->hb.state[0] ? "/" : "", x->hb.state);
			printf("%-32s %-16s %5lld %5lld %8lld %9lld %8s %10s  %s\n", x->info.id,
			       x->info.host, (long long)x->info.rank, (long long)x->info.local_rank,
			       (long long)x->info.pid, (long long)x->hb.step, rate, age, st);
		}
	}
	if (json)
		pt_sb_addc(&js, ']');
	else if (!n)
		printf("(no worker registered in '%s')\n", dir);
	list_agents(dir, now, &js, json);
	if (pt_control_trigger_read(dir, &t, NULL) == PT_OK && t.id[0]) {
		if (json) {
			pt_sb_adds(&js, ",\"trigger\":{\"id\":");
			pt_sb_add_json_str(&js, t.id, strlen(t.id));
			pt_sb_adds(&js, ",\"state\":");
			pt_sb_add_json_str(&js, t.state, strlen(t.state));
			pt_sb_addf(&js, ",\"start_step\":%lld,\"steps\":%lld,\"run_dir\":",
				   (long long)t.start_step, (long long)t.steps);
			pt_sb_add_json_str(&js, t.run_dir, strlen(t.run_dir));
			pt_sb_addc(&js, '}');
		} else {
			printf("\nlast trigger: %s (%s), steps %lld-%lld, %zu workers, output %s\n", t.id,
			       t.state, (long long)t.start_step, (long long)(t.start_step + t.steps - 1),
			       t.nworkers, t.run_dir);
		}
	}
	pt_control_trigger_clear(&t);
	if (json) {
		pt_sb_adds(&js, "}\n");
		if (!js.oom)
			fputs(js.buf, stdout);
	} else if (prune) {
		printf("\npruned %zu worker record%s\n", pruned, pruned == 1 ? "" : "s");
	}
	pt_sb_free(&js);
	x_free(w);
	return 0;
}
