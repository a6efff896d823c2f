/*
 * readloop.c - benchmark baseline: the cheapest possible pass over a file.
 *
 * Reads FILE with read() in 1 MiB chunks and counts the '{' bytes with
 * memchr, so every byte is brought into cache once and looked at once.
 * bench/run.sh puts its MB/s beside `cat` and `perftracker summarize`:
 * no parser that looks at every byte can be faster than this.
 * stdlib + libc only.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNK (1u << 20)

int main(int argc, char **argv)
{
	static char buf[CHUNK];
	unsigned long long bytes = 0, braces = 0;
	int fd, rc = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: readloop FILE\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "readloop: '%s': %s\n", argv[1], strerror(errno));
		return 1;
	}
	for (;;) {
		ssize_t n = read(fd, buf, CHUNK);
		const char *p, *end;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "readloop: '%s': %s\n", argv[1], strerror(errno));
			rc = 1;
			break;
		}
		if (n == 0)
			break;
		bytes += (unsigned long long)n;
		p = buf;
		end = buf + n;
		while ((p = memchr(p, '{', (size_t)(end - p))) != NULL) {
			braces++;
			p++;
		}
	}
	close(fd);
	printf("%llu bytes, %llu '{'\n", bytes, braces);
	return rc;
}
