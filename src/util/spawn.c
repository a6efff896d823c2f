/*
 * spawn.c - posix_spawn and waitpid behind pt_spawn_* (see spawn.h).
 * posix_spawn rather than fork: the callers are threads of a process that
 * may be large (the agent holds summaries), and glibc's posix_spawn
 * reports a failed exec or file action as its return value.
 */
#include "spawn.h"
#include "clock.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static int add_redirect(posix_spawn_file_actions_t *fa, int to, const char *path, int fd,
			int flags)
{
	if (path)
		return posix_spawn_file_actions_addopen(fa, to, path, flags, 0644);
	if (fd == PT_SPAWN_TO_OUT)
		return posix_spawn_file_actions_adddup2(fa, 1, to);
	if (fd >= 0)
		return posix_spawn_file_actions_adddup2(fa, fd, to);
	return 0;
}

int pt_spawn_start(char *const argv[], const pt_spawn_opts *o, pid_t *pid, pt_error *err)
{
	static const pt_spawn_opts none = PT_SPAWN_OPTS_INIT;
	const int wflags = O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	int rc;

	if (!argv || !argv[0] || !argv[0][0])
		return pt_error_set(err, PT_EINVAL, -1, "nothing to run");
	if (!o)
		o = &none;
	if ((rc = posix_spawn_file_actions_init(&fa)))
		goto fail;
	if ((rc = posix_spawnattr_init(&at))) {
		posix_spawn_file_actions_destroy(&fa);
		goto fail;
	}
	/* Order matters: stderr may be a copy of the new stdout. */
	rc = o->in_path ? posix_spawn_file_actions_addopen(&fa, 0, o->in_path, O_RDONLY, 0) : 0;
	if (!rc)
		rc = add_redirect(&fa, 1, o->out_path, o->out_fd, wflags);
	if (!rc)
		rc = add_redirect(&fa, 2, o->err_path, o->err_fd, wflags);
	if (!rc && (o->own_group || o->new_session || o->clean_signals)) {
		short flags = 0;

		if (o->own_group) {
			flags |= POSIX_SPAWN_SETPGROUP;
			rc = posix_spawnattr_setpgroup(&at, 0);
		}
		if (o->new_session)
			flags |= POSIX_SPAWN_SETSID;
		if (!rc && o->clean_signals) {
			sigset_t empty, def;

			sigemptyset(&empty);
			sigemptyset(&def);
			sigaddset(&def, SIGPIPE);
			sigaddset(&def, SIGINT);
			sigaddset(&def, SIGTERM);
			flags |= POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
			rc = posix_spawnattr_setsigmask(&at, &empty);
			if (!rc)
				rc = posix_spawnattr_setsigdefault(&at, &def);
		}
		if (!rc)
			rc = posix_spawnattr_setflags(&at, flags);
	}
	/* posix_spawn returns the error instead of setting errno. */
	if (!rc)
		rc = posix_spawn(pid, argv[0], &fa, &at, argv, environ);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	if (!rc)
		return PT_OK;
fail:
	pt_error_subject(err, argv[0]);
	pt_error_set(err, PT_EIO, -1, "cannot start: %s", strerror(rc));
	errno = rc;
	return PT_EIO;
}

static void fill(int wst, pt_spawn_status *st)
{
	memset(st, 0, sizeof(*st));
	st->exited = WIFEXITED(wst);
	st->code = st->exited ? WEXITSTATUS(wst) : 0;
	st->signal = WIFSIGNALED(wst) ? WTERMSIG(wst) : 0;
}

int pt_spawn_poll(pid_t pid, pt_spawn_status *st)
{
	int wst = 0;
	pid_t r;

	do
		r = waitpid(pid, &wst, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -1;
	if (r == 0)
		return 0;
	fill(wst, st);
	return 1;
}

int pt_spawn_wait(pid_t pid, const pt_spawn_opts *o, pt_spawn_status *st, pt_error *err)
{
	double t0, term_at = -1, grace;
	int wst = 0, timed_out = 0, cancelled = 0, r;

	if (!o || (o->timeout_s <= 0 && !o->cancel)) {
		while (waitpid(pid, &wst, 0) < 0)
			if (errno != EINTR)
				goto fail;
		fill(wst, st);
		return PT_OK;
	}
	grace = o->grace_s > 0 ? o->grace_s : 2;
	t0 = pt_clock_mono();
	for (;;) {
		struct timespec ts = { 0, 20 * 1000000L };
		double now;

		r = pt_spawn_poll(pid, st);
		if (r > 0)
			break;
		if (r < 0)
			goto fail;
		now = pt_clock_mono();
		if (term_at < 0) {
			if (o->cancel && __atomic_load_n(o->cancel, __ATOMIC_ACQUIRE))
				cancelled = 1;
			else if (o->timeout_s > 0 && now - t0 >= o->timeout_s)
				timed_out = 1;
			if (cancelled || timed_out) {
				kill(o->own_group ? -pid : pid, SIGTERM);
				term_at = now;
			}
		} else if (now - term_at >= grace) {
			kill(o->own_group ? -pid : pid, SIGKILL);
			term_at = 1e300; /* once */
		}
		nanosleep(&ts, NULL);
	}
	st->timed_out = timed_out;
	st->cancelled = cancelled;
	return PT_OK;
fail:
	r = errno;
	pt_error_set(err, PT_EIO, -1, "cannot wait: %s", strerror(r));
	errno = r;
	return PT_EIO;
}

int pt_spawn_run(char *const argv[], const pt_spawn_opts *o, pt_spawn_status *st,
		 pt_error *err)
{
	pid_t pid;
	int rc = pt_spawn_start(argv, o, &pid, err);

	return rc ? rc : pt_spawn_wait(pid, o, st, err);
}

int pt_spawn_code(const pt_spawn_status *st)
{
	return st->exited ? st->code : 128 + st->signal;
}
