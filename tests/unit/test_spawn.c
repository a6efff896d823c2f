/*
 * test_spawn.c - unit tests for running a program (src/util/spawn.c): exit
 * codes and signals as the status struct says, output redirected to a path
 * or a descriptor, a timeout and a cancel flag that end the child (and its
 * process group), polling, a new session and clean signal dispositions
 * (the collector starting the node agent), and the one-line error for a
 * missing program.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"
#include "util/file.h"
#include "util/spawn.h"
#include "util/xalloc.h"

static char root[256];

static int setup(void **state)
{
	(void)state;
	tu_tmpdir(root, sizeof(root), "pt_test_spawn");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tu_rm_rf(root);
	return 0;
}

static pt_spawn_status run_sh(const char *script, const pt_spawn_opts *o)
{
	char *argv[] = { "/bin/sh", "-c", (char *)script, NULL };
	pt_spawn_status st;
	pt_error e;

	memset(&st, 0x55, sizeof(st));
	pt_error_clear(&e);
	if (pt_spawn_run(argv, o, &st, &e))
		fail_msg("%s: %s", e.subject, e.msg);
	return st;
}

static void slurp(const char *path, const char *want)
{
	char *buf = NULL;
	size_t len;
	pt_error e;

	pt_error_clear(&e);
	assert_int_equal(pt_file_read(path, 1 << 16, &buf, &len, &e), PT_OK);
	assert_string_equal(buf, want);
	x_free(buf);
}

static void test_exit_codes(void **state)
{
	pt_spawn_status st;

	(void)state;
	st = run_sh("exit 0", NULL);
	assert_int_equal(st.exited, 1);
	assert_int_equal(st.code, 0);
	assert_int_equal(st.signal, 0);
	assert_int_equal(st.timed_out, 0);
	assert_int_equal(st.cancelled, 0);
	assert_int_equal(pt_spawn_code(&st), 0);
	st = run_sh("exit 3", NULL);
	assert_int_equal(st.exited, 1);
	assert_int_equal(st.code, 3);
	assert_int_equal(pt_spawn_code(&st), 3);
	/* Killed by a signal: not exited, the signal, the shell's 128 + N. */
	st = run_sh("kill -TERM $$", NULL);
	assert_int_equal(st.exited, 0);
	assert_int_equal(st.signal, SIGTERM);
	assert_int_equal(pt_spawn_code(&st), 128 + SIGTERM);
}

static void test_redirects(void **state)
{
	pt_spawn_opts o = PT_SPAWN_OPTS_INIT;
	char out[512], in[512], fdfile[512];
	int fd;

	(void)state;
	snprintf(out, sizeof(out), "%s/log", root);
	snprintf(in, sizeof(in), "%s/in", root);
	tu_write_text(in, "from stdin\n");
	tu_write_text(out, "before\n");
	/* stdout appended to a path, stderr with it, stdin from a file. */
	o.in_path = in;
	o.out_path = out;
	o.err_fd = PT_SPAWN_TO_OUT;
	run_sh("cat; echo to-out; echo to-err >&2", &o);
	slurp(out, "before\nfrom stdin\nto-out\nto-err\n");
	/* stdout to a descriptor, stderr to its own path. */
	snprintf(fdfile, sizeof(fdfile), "%s/fd", root);
	fd = open(fdfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	o = (pt_spawn_opts)PT_SPAWN_OPTS_INIT;
	o.out_fd = fd;
	o.err_path = out;
	run_sh("echo via-fd; echo err-path >&2", &o);
	close(fd);
	slurp(fdfile, "via-fd\n");
	slurp(out, "before\nfrom stdin\nto-out\nto-err\nerr-path\n");
}

/* The process whose pid the file pidf holds is dead: a zombie until init
 * reaps it, then no such pid.  Polled while its SIGKILL is on its way (the
 * 60 s only stop a test whose process never dies).  A shell ended before
 * it wrote the pid leaves nothing to check. */
static void gone(const char *pidf)
{
	char *buf = NULL;
	size_t len;
	pt_error e;

	pt_error_clear(&e);
	if (pt_file_read(pidf, 64, &buf, &len, &e) == PT_OK && len) {
		long pid = atol(buf);
		int dead = 0;

		assert_true(pid > 1);
		for (int k = 0; k < 6000 && !(dead = tu_proc_gone(pid)); k++)
			tu_sleep_ms(10);
		assert_true(dead);
	}
	x_free(buf);
}

/* A timeout ends the child (the status says so, not how long it took). */
static void test_timeout_kills(void **state)
{
	pt_spawn_opts o = PT_SPAWN_OPTS_INIT;
	pt_spawn_status st;
	char pidf[512], script[1024];

	(void)state;
	o.timeout_s = 0.2;
	st = run_sh("exec sleep 30", &o);
	assert_int_equal(st.timed_out, 1);
	assert_int_equal(st.cancelled, 0);
	assert_int_equal(st.exited, 0);
	assert_int_equal(st.signal, SIGTERM);
	/* A child that ignores SIGTERM gets SIGKILL after the grace time (to
	 * its group: the background sleep goes too). */
	o.grace_s = 0.2;
	o.own_group = 1;
	snprintf(pidf, sizeof(pidf), "%s/background", root);
	snprintf(script, sizeof(script), "trap '' TERM; sleep 30 & echo $! > '%s'; wait; sleep 30",
		 pidf);
	st = run_sh(script, &o);
	assert_int_equal(st.timed_out, 1);
	assert_int_equal(st.signal, SIGKILL);
	gone(pidf);
	/* Ending before the timeout: a normal exit. */
	o.timeout_s = 30;
	st = run_sh("exit 4", &o);
	assert_int_equal(st.timed_out, 0);
	assert_int_equal(st.code, 4);
}

/* Cancelled with its own process group: the grandchild (as nsys's
 * `sleep`) dies too, so nothing holds the output file open. */
static void test_cancel_group(void **state)
{
	pt_spawn_opts o = PT_SPAWN_OPTS_INIT;
	pt_spawn_status st;
	char pidf[512], script[1024];
	int cancel = 1;

	(void)state;
	snprintf(pidf, sizeof(pidf), "%s/grandchild", root);
	snprintf(script, sizeof(script), "sleep 30 & echo $! > '%s'; wait", pidf);
	o.own_group = 1;
	o.cancel = &cancel;
	st = run_sh(script, &o);
	assert_int_equal(st.cancelled, 1);
	assert_int_equal(st.timed_out, 0);
	assert_int_equal(st.exited, 0);
	gone(pidf);
}

static void test_poll(void **state)
{
	char *argv[] = { "/bin/sh", "-c", "sleep 0.2; exit 7", NULL };
	pt_spawn_status st;
	pid_t pid;
	pt_error e;
	int r = 0;

	(void)state;
	pt_error_clear(&e);
	assert_int_equal(pt_spawn_start(argv, NULL, &pid, &e), PT_OK);
	assert_int_equal(pt_spawn_poll(pid, &st), 0);
	for (int k = 0; k < 1000 && (r = pt_spawn_poll(pid, &st)) == 0; k++)
		tu_sleep_ms(10);
	assert_int_equal(r, 1);
	assert_int_equal(st.exited, 1);
	assert_int_equal(st.code, 7);
	/* Reaped: no longer our child. */
	assert_int_equal(pt_spawn_poll(pid, &st), -1);
	assert_int_equal(errno, ECHILD);
}

static void test_cannot_start(void **state)
{
	char *missing[] = { "/nonexistent/pt-no-such-tool", NULL };
	char *ok[] = { "/bin/true", NULL };
	char *empty[] = { NULL };
	pt_spawn_opts o = PT_SPAWN_OPTS_INIT;
	pt_spawn_status st;
	char out[512];
	pid_t pid;
	pt_error e;

	(void)state;
	pt_error_clear(&e);
	assert_int_equal(pt_spawn_run(missing, NULL, &st, &e), PT_EIO);
	assert_string_equal(e.subject, "/nonexistent/pt-no-such-tool");
	assert_string_equal(e.msg, "cannot start: No such file or directory");
	assert_int_equal(errno, ENOENT);
	/* Not executable. */
	snprintf(out, sizeof(out), "%s/plain", root);
	tu_write_text(out, "#!/bin/sh\n");
	missing[0] = out;
	pt_error_clear(&e);
	assert_int_equal(pt_spawn_start(missing, NULL, &pid, &e), PT_EIO);
	assert_string_equal(e.msg, "cannot start: Permission denied");
	/* Output into a folder that does not exist. */
	snprintf(out, sizeof(out), "%s/no/such/log", root);
	o.out_path = out;
	pt_error_clear(&e);
	assert_int_equal(pt_spawn_run(ok, &o, &st, &e), PT_EIO);
	assert_string_equal(e.subject, "/bin/true");
	assert_string_equal(e.msg, "cannot start: No such file or directory");
	pt_error_clear(&e);
	assert_int_equal(pt_spawn_run(empty, NULL, &st, &e), PT_EINVAL);
	assert_string_equal(e.msg, "nothing to run");
}

/* new_session: the child leads its own session (field 6 of /proc/PID/stat
 * is the session id); clean_signals: with SIGTERM blocked and SIGPIPE and
 * SIGINT ignored here, the child starts with those three at their defaults. */
static void test_session_and_signals(void **state)
{
	static const char *const own_sid =
		"test \"$(cut -d' ' -f6 /proc/$$/stat)\" = \"$$\"";
	/* SIGINT is bit 0x2, SIGPIPE 0x1000, SIGTERM 0x4000 of these masks
	 * (others may be ignored by whoever started the test). */
	static const char *const clean =
		"b=$(awk '/^SigBlk/{print $2}' /proc/$$/status); "
		"i=$(awk '/^SigIgn/{print $2}' /proc/$$/status); "
		"test $(( 0x$b & 0x4000 )) -eq 0 && test $(( 0x$i & 0x1002 )) -eq 0";
	pt_spawn_opts o = PT_SPAWN_OPTS_INIT;
	pt_spawn_status st;
	struct sigaction ign, old_pipe, old_int;
	sigset_t term, old_mask;

	(void)state;
	st = run_sh(own_sid, &o);
	assert_true(st.exited && st.code == 1);  /* inherited: our session */
	o.new_session = 1;
	st = run_sh(own_sid, &o);
	assert_true(st.exited && st.code == 0);

	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &ign, &old_pipe);
	sigaction(SIGINT, &ign, &old_int);
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &term, &old_mask);
	o.new_session = 0;
	st = run_sh(clean, &o);
	assert_true(st.exited && st.code == 1);  /* inherited: blocked, ignored */
	o.clean_signals = 1;
	st = run_sh(clean, &o);
	assert_true(st.exited && st.code == 0);
	pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGPIPE, &old_pipe, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_exit_codes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_redirects, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout_kills, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_group, setup, teardown),
		cmocka_unit_test_setup_teardown(test_poll, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cannot_start, setup, teardown),
		cmocka_unit_test_setup_teardown(test_session_and_signals, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
