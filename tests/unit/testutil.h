/*
 * testutil.h - helpers the unit tests share for their fixtures on disk: a
 * fresh temporary folder, removing it again, writing a small text file,
 * reading one back whole, counting a string in it; whether a process has
 * ended.
 * Each fails the running cmocka test when it cannot do its job.  Include
 * after <cmocka.h> (and its prerequisites).
 */
#ifndef PT_TESTUTIL_H
#define PT_TESTUTIL_H

#include <sys/types.h>
#include <signal.h>
#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

/* Create /tmp/<name>.XXXXXX; its path goes to dir (cap bytes). */
static inline void tu_tmpdir(char *dir, size_t cap, const char *name)
{
	snprintf(dir, cap, "/tmp/%s.XXXXXX", name);
	assert_non_null(mkdtemp(dir));
}

/* rm -rf dir. */
static inline void tu_rm_rf(const char *dir)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* Write text to path, replacing the file (in place: a reader that has it
 * open sees the new content, as with /proc and /sys). */
static inline void tu_write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* The whole file at path, NUL-terminated (the caller frees it); its
 * length to *len when len is not NULL. */
static inline char *tu_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *b;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n >= 0);
	assert_int_equal(fseek(f, 0, SEEK_SET), 0);
	b = malloc((size_t)n + 1);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
	b[n] = 0;
	fclose(f);
	if (len)
		*len = (size_t)n;
	return b;
}

/* How often needle occurs in hay, overlaps counted. */
static inline size_t tu_count(const char *hay, const char *needle)
{
	size_t n = 0;

	while ((hay = strstr(hay, needle))) {
		n++;
		hay++;
	}
	return n;
}

/* CLOCK_REALTIME in ns: the traces' and the samples' clock. */
static inline int64_t tu_realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A pid that is free now: a child that exited and was reaped (tests of
 * "its owner is gone" must not depend on which pids this machine has). */
static inline pid_t tu_dead_pid(void)
{
	pid_t kid = fork();

	if (kid == 0)
		_exit(0);
	assert_true(kid > 0);
	assert_int_equal(waitpid(kid, NULL, 0), kid);
	return kid;
}

static inline void tu_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Has process pid ended: no such pid, or a zombie not yet reaped? */
static inline int tu_proc_gone(long pid)
{
	char path[64], line[512], *p;
	FILE *f;

	if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
		return 1;
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 1;
	p = fgets(line, sizeof(line), f);
	fclose(f);
	p = p ? strrchr(line, ')') : NULL;
	return p && p[1] == ' ' && p[2] == 'Z';
}

#endif
