/*
 * collector_agent.c - local rank 0 starts its node's agent
 * (`perftracker agent --detach`, the command PerfTracker() was given) when
 * none holds the node's lock: the background thread (collector_bg.c) calls
 * ensure_agent at most every 10 s while no agent answers.  The agent's
 * stderr goes to agents/<host>.log in the control directory, a plain file
 * of ours or nowhere.
 */
#include "collector_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Start the node agent unless one runs (local rank 0 only).  posix_spawn is
 * safe in a multi-threaded process where fork() is not; the agent detaches
 * itself (--detach) so the child we reap here exits at once. */
void ensure_agent(double now)
{
	pid_t pid;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, def;
	char logp[PT_CONTROL_PATH_MAX + PT_CONTROL_HOST_MAX + 8], ad[PT_CONTROL_PATH_MAX];
	int st, logfd = -1;
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
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	if (logfd >= 0)
		posix_spawn_file_actions_adddup2(&fa, logfd, 2);
	else
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	sigaddset(&def, SIGINT);
	sigaddset(&def, SIGTERM);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &def);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
				      POSIX_SPAWN_SETSID);
	if (posix_spawn(&pid, G.agent_argv[0], &fa, &at, G.agent_argv, environ) == 0) {
		dlog("started agent %s (pid %ld)", G.agent_argv[0], (long)pid);
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	} else {
		plog("cannot start the agent '%s': %s", G.agent_argv[0], strerror(errno));
	}
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (logfd >= 0)
		close(logfd);
}
