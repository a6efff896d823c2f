/*
 * status.c - `perftracker status`: what the control directory says about
 * the job right now: every registered worker with its step, step rate and
 * time since its last step, laggards and silent workers flagged, the node
 * agents, and the last trigger.  Reads the records the collector
 * (python/perftracker) and the agent write.
 */
#include <stddef.h>

#include "cli.h"
#include "hangcheck.h"
#include "control/control.h"
#include "control/trigger.h"
#include "analysis/stats.h"
#include "util/json.h"
#include "util/strbuf.h"
#include "util/clock.h"
#include "util/xalloc.h"
#include "watch/watch.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const cli_usage usage = {
	"status",
	"perftracker status [options]",
	"List the workers registered in the control directory (step, step rate, time\n"
	"since the last step, state), the node agents and the last trigger.\n",
	NULL,
};

/* "laggard" when more than max(2 steps, lag s x median rate) behind the
 * leader; "silent" when alive but without a step for `silent` seconds.
 * Writes the flags (space-separated) to out; returns how many. */
static int flags_of(const pt_worker_entry *x, int live, double now, double lead, double med_rate,
		    double lag, double silent, char *out, size_t cap, double *behind)
{
	double since = x->has_hb && x->hb.step_time > 0 ? now - x->hb.step_time
							 : now - x->info.started;
	int n = 0;

	out[0] = 0;
	*behind = live ? lead - pt_trigger_est_step_at(x, now, med_rate) : 0;
	if (!live)
		return 0;
	if (*behind > 2 && *behind > lag * med_rate) {
		snprintf(out, cap, "laggard");
		n++;
	}
	if (since >= silent) {
		snprintf(out + strlen(out), cap - strlen(out), "%ssilent", n ? " " : "");
		n++;
	}
	return n;
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

/* What the node agents' watch says about each rank (docs/watch.md): its
 * lateness at collectives, time waited, straggler score, and why it is
 * step times only where the Flight Recorder cannot be read. */
static void list_watch(const char *dir, pt_sb *js, int json)
{
	pt_watch_rank *r = NULL;
	size_t n = 0;

	pt_watch_all(dir, &r, &n, NULL);
	if (json)
		pt_sb_adds(js, ",\"watch\":[");
	else if (n)
		printf("\nwatch (arrivals at collectives over the last 30 s; docs/watch.md):\n"
		       "  %5s %-16s %9s %8s %8s %8s %6s  %s\n", "RANK", "HOST", "STEP", "STEP MS",
		       "WAIT MS", "LATE MS", "SCORE", "STATE");
	for (size_t i = 0; i < n; i++) {
		char state[512] = "", since[64] = "", hms[32];

		if (json) {
			if (i)
				pt_sb_addc(js, ',');
			pt_watch_node_json_rank(js, &r[i]);
			continue;
		}
		if (r[i].flagged && pt_clock_utc_hms(r[i].since, hms, sizeof(hms))[0])
			snprintf(since, sizeof(since), " since %s", hms);
		if (r[i].flagged)
			snprintf(state, sizeof(state), "straggler%s (step %lld), most late at %s "
				 "(process group %s, sequence %lld)", since, (long long)r[i].since_step,
				 r[i].at_name, r[i].at_pg, (long long)r[i].at_seq);
		else if (strcmp(r[i].fr, "on"))
			snprintf(state, sizeof(state), "%s", r[i].why[0] ? r[i].why
				 : "step times only");
		printf("  %5lld %-16s %9lld %8.1f %8.1f %8.1f %6.2f  %s\n", (long long)r[i].rank,
		       r[i].host, (long long)r[i].step, r[i].step_s * 1e3, r[i].wait_s * 1e3,
		       r[i].late_s * 1e3, r[i].score, state);
	}
	if (json)
		pt_sb_addc(js, ']');
	else if (!n)
		printf("\nwatch: nothing yet (no node agent has written %s/watch/)\n", dir);
	x_free(r);
}

/* One worker of `status --json`. */
static void json_row(pt_sb *js, const pt_worker_entry *x, const char *live, double since,
		     double behind, const char *fl)
{
	pt_sb_adds(js, "{\"id\":");
	pt_sb_add_json_str(js, x->info.id, strlen(x->info.id));
	pt_sb_adds(js, ",\"host\":");
	pt_sb_add_json_str(js, x->info.host, strlen(x->info.host));
	pt_sb_addf(js, ",\"rank\":%lld,\"local_rank\":%lld,\"world_size\":%lld,"
		   "\"pid\":%lld,\"step\":%lld,\"rate\":",
		   (long long)x->info.rank, (long long)x->info.local_rank,
		   (long long)x->info.world_size, (long long)x->info.pid, (long long)x->hb.step);
	pt_sb_add_double(js, x->hb.rate);
	pt_sb_adds(js, ",\"since_last_step\":");
	if (since >= 0)
		pt_sb_add_double(js, since);
	else
		pt_sb_adds(js, "null");
	pt_sb_adds(js, ",\"state\":");
	pt_sb_add_json_str(js, x->hb.state[0] ? x->hb.state : "unknown",
			   strlen(x->hb.state[0] ? x->hb.state : "unknown"));
	pt_sb_adds(js, ",\"liveness\":");
	pt_sb_add_json_str(js, live, strlen(live));
	pt_sb_adds(js, ",\"behind\":");
	pt_sb_add_double(js, round(behind * 10) / 10);
	pt_sb_adds(js, ",\"flags\":[");
	if (strstr(fl, "laggard"))
		pt_sb_adds(js, "\"laggard\"");
	if (strstr(fl, "silent"))
		pt_sb_adds(js, strstr(fl, "laggard") ? ",\"silent\"" : "\"silent\"");
	pt_sb_adds(js, "]}");
}

int cmd_status(int argc, char **argv)
{
	const char *dir = NULL, *job = NULL;
	int json = 0, prune = 0;
	double stale = 30, now, silent = -1, lag = 5, lead = 0, med_rate = 0, *rates = NULL;
	size_t nrates = 0, nsilent = 0, nlag = 0;
	pt_sb flagged = { 0 };
	pt_worker_entry *w = NULL;
	size_t n = 0, pruned = 0, shown = 0;
	char node[PT_CONTROL_HOST_MAX];
	pt_trigger t;
	pt_sb js = { 0 };
	const pt_opt opts[] = {
		CLI_OPT_CONTROL_DIR(&dir),
		CLI_OPT_JOB(&job),
		PT_OPT_FLAG(0, "json", PT_TO(&json), "one JSON object instead of the table"),
		PT_OPT_DOUBLE(0, "stale", PT_TO(&stale), "SEC",
			      "a worker without a heartbeat for SEC is 'stale' (30)"),
		PT_OPT_FLAG(0, "prune", PT_TO(&prune),
			    "remove the records of workers gone for good (dead or stale)"),
		PT_OPT_DOUBLE(0, "silent", PT_TO(&silent), "SEC",
			      "flag live workers without a step for SEC as 'silent'\n"
			      "(max(60, 10 x median step time))"),
		PT_OPT_DOUBLE(0, "lag", PT_TO(&lag), "SEC",
			      "flag workers more than SEC worth of steps (and 2 steps) behind\n"
			      "the leader as 'laggard' (5)"),
		PT_OPT_END(),
	};
	int npos = cli_parse_options(&usage, opts, argc, argv);

	if (npos < 0)
		return npos == CLI_HELP ? 0 : -1;
	if (npos > 0)
		return cli_usage_unexpected(&usage, argv[1]);
	if (cli_resolve_dir(&dir, job) || cli_control_workers(&dir, &w, &n))
		return -1;
	pt_control_nodename(node, sizeof(node));
	now = pt_control_now();
	/* The median rate of the live workers, then the leader carried forward
	 * at that rate (pt_trigger_est_step_at says why one rate). */
	rates = x_calloc(n ? n : 1, sizeof(double));
	if (!rates)
		die("out of memory");
	for (size_t i = 0; i < n; i++)
		if (pt_control_worker_alive(&w[i], now, stale, node) && w[i].has_hb &&
		    w[i].hb.rate > 0)
			rates[nrates++] = w[i].hb.rate;
	med_rate = pt_robust_median(rates, nrates, 0);
	for (size_t i = 0; i < n; i++)
		if (pt_control_worker_alive(&w[i], now, stale, node) &&
		    pt_trigger_est_step_at(&w[i], now, med_rate) > lead)
			lead = pt_trigger_est_step_at(&w[i], now, med_rate);
	if (silent < 0)
		silent = cli_hang_auto_timeout(w, n);
	if (json) {
		pt_sb_adds(&js, "{\"control_dir\":");
		pt_sb_add_json_str(&js, dir, strlen(dir));
		pt_sb_adds(&js, ",\"silent_after\":");
		pt_sb_add_double(&js, silent);
		pt_sb_adds(&js, ",\"workers\":[");
	} else {
		printf("%-32s %-16s %5s %5s %8s %9s %8s %10s  %-16s %s\n", "WORKER", "HOST", "RANK",
		       "LOCAL", "PID", "STEP", "STEPS/S", "LAST STEP", "STATE", "FLAGS");
	}
	for (size_t i = 0; i < n; i++) {
		const pt_worker_entry *x = &w[i];
		const char *live = liveness(x, now, stale, node);
		double since = x->has_hb && x->hb.step_time > 0 ? now - x->hb.step_time : -1;
		char fl[64];
		double behind;
		int nf = flags_of(x, !strcmp(live, "alive"), now, lead, med_rate, lag, silent, fl,
				  sizeof(fl), &behind);

		if (prune && strcmp(live, "alive")) {
			if (pt_control_unregister(dir, x->info.id, NULL) == PT_OK)
				pruned++;
			continue;
		}
		if (json) {
			if (shown++)
				pt_sb_addc(&js, ',');
			json_row(&js, x, live, since, behind, fl);
		} else {
			char age[32], rate[32], st[64];

			fmt_age(age, sizeof(age), since);
			snprintf(rate, sizeof(rate), "%.2f", x->hb.rate);
			snprintf(st, sizeof(st), "%s%s%s", live, x->hb.state[0] ? "/" : "", x->hb.state);
			printf("%-32s %-16s %5lld %5lld %8lld %9lld %8s %10s  %-*s %s\n", x->info.id,
			       x->info.host, (long long)x->info.rank, (long long)x->info.local_rank,
			       (long long)x->info.pid, (long long)x->hb.step, rate, age, fl[0] ? 16 : 0,
			       st, fl);
		}
		if (nf) {
			nsilent += strstr(fl, "silent") != NULL;
			nlag += strstr(fl, "laggard") != NULL;
			pt_sb_addf(&flagged, "  %s: %s", x->info.id, fl);
			if (strstr(fl, "laggard"))
				pt_sb_addf(&flagged, " (%.0f steps behind the leader)", behind);
			if (strstr(fl, "silent"))
				pt_sb_addf(&flagged, " (no step for %.0f s, at step %lld)",
					   since >= 0 ? since : now - x->info.started,
					   (long long)x->hb.step);
			pt_sb_addc(&flagged, '\n');
		}
	}
	if (json)
		pt_sb_addc(&js, ']');
	else if (!n)
		printf("(no worker registered in '%s')\n", dir);
	else if (nsilent || nlag)
		printf("\n%zu silent (no step for %.0f s), %zu laggard%s; "
		       "'perftracker hang-check' shows where they are:\n%s", nsilent, silent, nlag,
		       nlag == 1 ? "" : "s", flagged.oom ? "" : flagged.buf);
	list_agents(dir, now, &js, json);
	list_watch(dir, &js, json);
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
	pt_sb_free(&flagged);
	x_free(rates);
	x_free(w);
	return 0;
}
