/*
 * chanbench.c - what the node channel's primitives cost (docs/bench.md,
 * "Control plane at scale"; the choice is argued in docs/collector.md,
 * "Node channel"): on a tmpfs directory, a worker's poll (stat of the
 * trigger copy), its heartbeat (write-then-rename of its record) and its
 * liveness probe of the agent (open + flock + close); over a Unix socket,
 * the same poll as a request/answer round trip to an agent thread, and a
 * heartbeat as one datagram.  CPU time of the process (worker and agent
 * sides) per operation, median of 7 runs of N operations each.
 *
 *   chanbench [DIR] [N]      (DIR: a tmpfs directory, default /dev/shm)
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "control/control.h"
#include "control/nodechan.h"
#include "util/clock.h"

#define RUNS 7

static double now_ns(void)
{
	/* CPU time of the whole process (both sides of the socket): what the
	 * node pays, and steadier than wall time on a shared machine. */
	return pt_clock_process_cpu() * 1e9;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static char record[320];
static int sock_agent;

/* The agent's side of the socket: answer every request (a poll) with a
 * trigger-sized message; swallow heartbeats (first byte 'h'). */
static void *agent_main(void *arg)
{
	char buf[512];

	(void)arg;
	for (;;) {
		ssize_t r = recv(sock_agent, buf, sizeof(buf), 0);

		if (r <= 0)
			break;
		if (buf[0] == 'q' && send(sock_agent, record, sizeof(record), 0) < 0)
			break;
	}
	return NULL;
}

typedef double (*op_fn)(const char *dir, long n);

static double op_stat(const char *dir, long n)
{
	char p[PT_CONTROL_PATH_MAX];
	struct stat st;
	double t0;

	snprintf(p, sizeof(p), "%s/trigger.json", dir);
	t0 = now_ns();
	for (long i = 0; i < n; i++)
		stat(p, &st);
	return (now_ns() - t0) / (double)n;
}

static double op_write(const char *dir, long n)
{
	char p[PT_CONTROL_PATH_MAX];
	double t0;

	snprintf(p, sizeof(p), "%s/w/worker.json", dir);
	t0 = now_ns();
	for (long i = 0; i < n; i++)
		pt_control_write_atomic(p, record, sizeof(record), NULL);
	return (now_ns() - t0) / (double)n;
}

static double op_probe(const char *dir, long n)
{
	double t0 = now_ns();

	for (long i = 0; i < n; i++)
		pt_nodechan_agent_alive(dir);
	return (now_ns() - t0) / (double)n;
}

static int sock_worker;

static double op_sock_poll(const char *dir, long n)
{
	char buf[512];
	double t0 = now_ns();

	(void)dir;
	for (long i = 0; i < n; i++) {
		if (send(sock_worker, "q", 1, 0) != 1 || recv(sock_worker, buf, sizeof(buf), 0) <= 0)
			return -1;
	}
	return (now_ns() - t0) / (double)n;
}

static double op_sock_hb(const char *dir, long n)
{
	double t0 = now_ns();

	(void)dir;
	record[0] = 'h';
	for (long i = 0; i < n; i++)
		if (send(sock_worker, record, sizeof(record), 0) < 0)
			return -1;
	record[0] = '{';
	return (now_ns() - t0) / (double)n;
}

static double median(op_fn f, const char *dir, long n)
{
	double v[RUNS];

	for (int r = 0; r < RUNS; r++)
		v[r] = f(dir, n);
	qsort(v, RUNS, sizeof(double), cmp_dbl);
	return v[RUNS / 2];
}

int main(int argc, char **argv)
{
	const char *base = argc > 1 ? argv[1] : "/dev/shm";
	long n = argc > 2 ? atol(argv[2]) : 20000;
	char dir[PT_CONTROL_PATH_MAX], p[PT_CONTROL_PATH_MAX + 16];
	int sv[2], fd;
	pthread_t th;

	if (n < 1) {
		fprintf(stderr, "usage: chanbench [DIR] [N]\n");
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s/pt_chanbench_XXXXXX", base);
	if (!mkdtemp(dir)) {
		fprintf(stderr, "chanbench: '%s': %s\n", dir, strerror(errno));
		return 1;
	}
	memset(record, 'x', sizeof(record));
	record[0] = '{';
	snprintf(p, sizeof(p), "%s/w", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/trigger.json", dir);
	pt_control_write_atomic(p, record, sizeof(record), NULL);
	fd = pt_nodechan_agent_hold(dir, NULL);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0) {
		perror("chanbench: socketpair");
		return 1;
	}
	sock_worker = sv[0];
	sock_agent = sv[1];
	pthread_create(&th, NULL, agent_main, NULL);

	printf("| primitive (node channel) | CPU ns per operation |\n|---|---|\n");
	printf("| directory: poll = `stat` of the trigger copy | %.0f |\n", median(op_stat, dir, n));
	printf("| directory: heartbeat = write-then-rename of a 320-byte record | %.0f |\n",
	       median(op_write, dir, n / 4));
	printf("| directory: agent alive? = open + `flock(LOCK_SH|LOCK_NB)` + close | %.0f |\n",
	       median(op_probe, dir, n));
	printf("| Unix socket: poll = request + 320-byte answer from the agent thread | %.0f |\n",
	       median(op_sock_poll, dir, n));
	printf("| Unix socket: heartbeat = one 320-byte datagram | %.0f |\n",
	       median(op_sock_hb, dir, n));

	shutdown(sock_worker, SHUT_RDWR);
	close(sock_worker);
	pthread_join(th, NULL);
	close(sock_agent);
	close(fd);
	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	return system(p) ? 1 : 0;
}
