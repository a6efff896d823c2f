/*
 * watchbench.c - what the watch's detection costs a node agent (docs/bench.md
 * "Always-on watch"): N ranks x S steps of 100 ms (30 s by default), two
 * all-reduces a step, rank N/2 arriving 30 ms late, fed line by line as
 * the agent reads the collectors' files (pt_watch_feed_line), then one
 * pt_watch_eval over the window.  Wall time of each part, and the process's
 * peak RSS; the straggler found is printed as a check.
 *
 *   watchbench [N] [S]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "util/clock.h"
#include "watch/watch.h"

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000, steps = argc > 2 ? atoi(argv[2]) : 300;
	pt_watch *w = pt_watch_new(NULL);
	const pt_watch_rank *r;
	struct rusage ru;
	char line[512], wid[64];
	long long base = 1796486000000000LL;
	double t0, t1, t2;
	size_t nr, best = 0;

	if (!w || n < 2 || steps < 1)
		return 1;
	t0 = pt_clock_mono();
	for (int k = 0; k < n; k++) {
		snprintf(wid, sizeof(wid), "h%d_%d_%d", k / 8, k, 1000 + k);
		snprintf(line, sizeof(line), "{\"format\":\"perftracker-watch\",\"version\":1,"
			 "\"id\":\"%s\",\"rank\":%d,\"world\":%d,\"local_rank\":%d,\"host\":\"h%d\","
			 "\"pid\":%d}", wid, k, n, k % 8, k / 8, 1000 + k);
		pt_watch_feed_line(w, wid, line, strlen(line), NULL);
		for (int s = 1; s <= steps; s++) {
			long long a = base + (long long)(s - 1) * 100000 + 20000 + (k == n / 2) * 30000 +
				      (k * 7919 + s * 104729) % 2000;
			int len = snprintf(line, sizeof(line),
				"{\"s\":%d,\"t0\":%lld,\"t1\":%lld,\"c\":[[\"0\",%d,\"gloo:all_reduce\",%lld,"
				"-1,-1],[\"0\",%d,\"gloo:all_reduce\",%lld,-1,-1]]}", s,
				base + (long long)(s - 1) * 100000, base + (long long)s * 100000,
				2 * s - 1, a, 2 * s, a + 40000);
			pt_watch_feed_line(w, wid, line, (size_t)len, NULL);
		}
	}
	t1 = pt_clock_mono();
	pt_watch_eval(w, 0);
	t2 = pt_clock_mono();
	r = pt_watch_ranks(w, &nr);
	for (size_t i = 0; i < nr; i++)
		if (r[i].score > r[best].score)
			best = i;
	getrusage(RUSAGE_SELF, &ru);
	printf("%d ranks x %d steps (%d instances): read %.2f s, eval %.3f s, peak RSS %.0f MB; "
	       "top score: rank %lld %.3f\n", n, steps, 2 * steps, t1 - t0, t2 - t1,
	       ru.ru_maxrss / 1024.0, (long long)r[best].rank, r[best].score);
	pt_watch_free(w);
	return 0;
}
