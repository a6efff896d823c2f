/*
 * collector_agent.c - local rank 0 starts its node's agent
 * (`perftracker agent --detach`, the command PerfTracker() was given) when
 * none holds the node's lock: the background thread (collector_bg.c) calls
 * ensure_agent at most every 10 s while no agent answers.  The agent's
 * stderr goes to agents/<host>.log in the control directory, a plain file
 * of ours or nowhere.
 */
#include "collector_internal.h"
#include "util/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Start the node agent unless one runs (local rank 0 only), through
 * util/spawn.c: posix_spawn is safe in a multi-threaded process where fork()
 * is not. */
void ensure_agent(double now)
{
	pt_spawn_opts o = PT_SPAWN_OPTS_INIT;
	pt_spawn_status st;
	pt_error e;
	char logp[PT_CONTROL_PATH_MAX + PT_CONTROL_HOST_MAX + 8], ad[PT_CONTROL_PATH_MAX];
	int logfd = -1;
	struct stat lst, ast;

	if (!G.agent_argv || pt_control_agent_running(G.dir, G.host, now, 30))
		return;
	if (pt_control_record_path(ad, sizeof(ad), G.dir, "agents", NULL, NULL) ||
	    (size_t)snprintf(logp, sizeof(logp), "%s/%s.log", ad, G.host) >= sizeof(logp))
		return;
	if (pt_control_mkdirs(ad, NULL) == PT_OK && stat(ad, &ast) == 0) {
		/* Never through a link, only a plain file of ours: another user
		 * must not get the agent to append to a file of their choosing. */
		static int warned;
		int why = 0;

		logfd = open(logp, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (logfd < 0) {
			why = errno;
		} else if (fstat(logfd, &lst) != 0 || !S_ISREG(lst.st_mode) ||
			   lst.st_uid != ast.st_uid) {
			close(logfd);
			logfd = -1;
			why = EPERM;
		}
		if (logfd < 0 && !warned) {
			warned = 1;
			plog("not logging the agent to '%s': %s", logp,
			     why == ELOOP ? "it is a symbolic link" :
			     why == EPERM ? "not a plain file of ours" : strerror(why));
		}
	}
	/* The agent detaches itself (--detach): the child reaped here exits at
	 * once.  A new session, no signal blocked and SIGPIPE/SIGINT/SIGTERM at
	 * their defaults, whatever the training process set up. */
	o.in_path = "/dev/null";
	o.out_path = "/dev/null";
	if (logfd >= 0)
		o.err_fd = logfd;
	else
		o.err_path = "/dev/null";
	o.new_session = 1;
	o.clean_signals = 1;
	pt_error_clear(&e);
	if (pt_spawn_run(G.agent_argv, &o, &st, &e) == PT_OK) {
		dlog("started agent %s", G.agent_argv[0]);
	} else {
		char buf[512];

		plog("cannot start the agent: %s", pt_error_format(&e, buf, sizeof(buf)));
	}
	if (logfd >= 0)
		close(logfd);
}
