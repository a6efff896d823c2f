/*
 * spawn.h - running another program and waiting for it: the one
 * spawn-and-wait of the tree (the node agent's nsys capture, the agent
 * starting `perftracker --trigger-on` on a slowdown, the collector starting
 * its node's agent: python/perftracker/collector_agent.c).  posix_spawn with an
 * argv vector (no shell, no PATH search), optional stdin/stdout/stderr
 * redirection, a timeout or a cancel flag that ends the child (SIGTERM,
 * then SIGKILL), and the way it ended in a struct.
 */
#ifndef PT_SPAWN_H
#define PT_SPAWN_H

#include <sys/types.h>

#include "error.h"

/* err_fd value: stderr goes where stdout goes. */
#define PT_SPAWN_TO_OUT (-2)

typedef struct pt_spawn_opts {
	const char *in_path;  /* stdin read from this file; NULL: inherited */
	const char *out_path; /* stdout appended to this file (created 0644, not
			       * through a symbolic link); NULL: out_fd */
	int out_fd;           /* with out_path NULL: stdout is a copy of this
			       * descriptor when >= 0, else inherited */
	const char *err_path; /* stderr, as stdout */
	int err_fd;           /* as out_fd, or PT_SPAWN_TO_OUT */
	int own_group;        /* 1: the child leads a new process group and the
			       * signals that end it reach the whole group (a
			       * program that starts helpers of its own) */
	int new_session;      /* 1: the child starts a new session (setsid), as
			       * a daemon it starts does (no controlling
			       * terminal, not in our process group) */
	int clean_signals;    /* 1: the child starts with no signal blocked and
			       * SIGPIPE, SIGINT, SIGTERM at their defaults,
			       * whatever this process blocks or ignores */
	double timeout_s;     /* > 0: ended once it ran this long */
	const int *cancel;    /* not NULL: ended once *cancel (read atomically)
			       * is non-zero, e.g. set by another thread */
	double grace_s;       /* SIGTERM to SIGKILL when ending it; <= 0: 2 s */
} pt_spawn_opts;

/* Inheriting everything, no timeout: start from this. */
#define PT_SPAWN_OPTS_INIT { .out_fd = -1, .err_fd = -1 }

typedef struct pt_spawn_status {
	int exited;    /* 1: it exited, with code */
	int code;      /* exit code (0-255) when exited */
	int signal;    /* the signal that ended it when !exited */
	int timed_out; /* 1: we ended it because timeout_s passed */
	int cancelled; /* 1: we ended it because *cancel was set */
} pt_spawn_status;

/* Start argv[0] (a path: no PATH search) with argv (NULL-terminated) and
 * the environment, redirected as o says (o NULL: PT_SPAWN_OPTS_INIT).
 * PT_OK with *pid set; or PT_EIO "cannot start: <strerror>" (argv[0]
 * missing or not executable, a redirection file that cannot be opened:
 * posix_spawn reports both) with err naming argv[0] and errno kept, or
 * PT_EINVAL for an empty argv.  The caller must reap the child
 * (pt_spawn_wait or pt_spawn_poll).  Thread-safe. */
int pt_spawn_start(char *const argv[], const pt_spawn_opts *o, pid_t *pid, pt_error *err);

/* Has pid ended?  1 with *st filled (timed_out and cancelled 0), 0 while it
 * runs, -1 with errno on a waitpid error (ECHILD: not our child). */
int pt_spawn_poll(pid_t pid, pt_spawn_status *st);

/* Wait for pid to end.  With o->timeout_s or o->cancel it is checked every
 * 20 ms and ended with SIGTERM, then SIGKILL o->grace_s later (to its
 * group with o->own_group), *st saying why; otherwise a blocking wait.
 * PT_OK with *st filled, or PT_EIO "cannot wait: <strerror>". */
int pt_spawn_wait(pid_t pid, const pt_spawn_opts *o, pt_spawn_status *st, pt_error *err);

/* pt_spawn_start then pt_spawn_wait. */
int pt_spawn_run(char *const argv[], const pt_spawn_opts *o, pt_spawn_status *st,
		 pt_error *err);

/* The shell's number for how it ended: the exit code, or 128 + signal. */
int pt_spawn_code(const pt_spawn_status *st);

#endif
