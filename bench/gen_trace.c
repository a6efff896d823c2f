/*
 * gen_trace.c - benchmark input generator: makes a large Kineto trace by
 * repeating a real trace's events N times with shifted timestamps.
 *
 * Sits before `perftracker summarize` in bench/run.sh.  The source trace's
 * header and trailer are kept byte for byte; every event is copied verbatim
 * except for the numbers that must move: "ts" (+ k * shift), ProfilerStep#N
 * (+ k * nsteps), and the linking ids ("id", "External id", "correlation",
 * "Python id", "Python parent id"; + k * (max id + 1)) so that flows,
 * launches and Python parents still pair up within one repetition only.
 * Once-per-trace events (ph "M" metadata, the cat "Trace" span, global
 * instants) are written once, in the last repetition; the "Trace" span is
 * stretched to cover every repetition.  stdlib + libc only.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OUTBUF (8u << 20)

enum slot_kind { S_TS, S_STEP, S_ID, S_DUR_TRACE };

struct slot {
	size_t off, len;  /* text replaced in the event (the integer part) */
	int kind;
	int64_t val;
};

struct event {
	size_t start, end;  /* [start, end) in the source */
	struct slot *slots;
	size_t nslots;
	int once;           /* written once, in the last repetition */
	int late;           /* once-event after the middle of the span: shifted by the last rep */
};

static const char *src;
static size_t srclen;
static const char *prog = "gen_trace";

static void fail(const char *fmt, const char *a, size_t off)
{
	fprintf(stderr, "%s: ", prog);
	fprintf(stderr, fmt, a);
	if (off != (size_t)-1)
		fprintf(stderr, " (at byte %zu)", off);
	fputc('\n', stderr);
	exit(1);
}

static size_t ws(size_t p)
{
	while (p < srclen && (src[p] == ' ' || src[p] == '\n' || src[p] == '\r' || src[p] == '\t'))
		p++;
	return p;
}

/* End of the string starting at the quote p. */
static size_t skip_str(size_t p)
{
	for (p++; p < srclen; p++) {
		if (src[p] == '\\')
			p++;
		else if (src[p] == '"')
			return p + 1;
	}
	fail("unterminated string%s", "", p);
	return 0;
}

/* End of the value starting at p (any JSON value, no validation beyond nesting). */
static size_t skip_value(size_t p)
{
	int depth = 0;

	p = ws(p);
	if (p >= srclen)
		fail("unexpected end of input%s", "", p);
	if (src[p] == '"')
		return skip_str(p);
	if (src[p] != '{' && src[p] != '[') {
		while (p < srclen && !strchr(",]} \n\r\t", src[p]))
			p++;
		return p;
	}
	for (; p < srclen; p++) {
		char c = src[p];
		if (c == '"')
			p = skip_str(p) - 1;
		else if (c == '{' || c == '[')
			depth++;
		else if (c == '}' || c == ']') {
			if (--depth == 0)
				return p + 1;
		}
	}
	fail("unbalanced brackets%s", "", p);
	return 0;
}

static int key_is(size_t k0, size_t k1, const char *s)
{
	size_t n = strlen(s);
	return k1 - k0 == n + 2 && !memcmp(src + k0 + 1, s, n);
}

static int is_id_key(size_t k0, size_t k1, int depth)
{
	if (depth == 1 && key_is(k0, k1, "id"))
		return 1;
	return key_is(k0, k1, "External id") || key_is(k0, k1, "correlation") ||
	       key_is(k0, k1, "Python id") || key_is(k0, k1, "Python parent id");
}

/* Parse an integer at p (optional '-'); sets *end past the digits. */
static int parse_int(size_t p, int64_t *v, size_t *end)
{
	int neg = 0;
	int64_t x = 0;
	size_t q = p;

	if (q < srclen && src[q] == '-') {
		neg = 1;
		q++;
	}
	if (q >= srclen || src[q] < '0' || src[q] > '9')
		return -1;
	while (q < srclen && src[q] >= '0' && src[q] <= '9')
		x = x * 10 + (src[q++] - '0');
	*v = neg ? -x : x;
	*end = q;
	return 0;
}

struct lane { size_t pid0, pid1, tid0, tid1; double first, last; };
static struct lane *lanes;
static size_t nlanes, lanecap;

static void lane_note(size_t p0, size_t p1, size_t t0, size_t t1, double b, double e)
{
	size_t i;

	for (i = 0; i < nlanes; i++) {
		struct lane *l = &lanes[i];
		if (l->pid1 - l->pid0 == p1 - p0 && l->tid1 - l->tid0 == t1 - t0 &&
		    !memcmp(src + l->pid0, src + p0, p1 - p0) &&
		    !memcmp(src + l->tid0, src + t0, t1 - t0)) {
			if (b < l->first)
				l->first = b;
			if (e > l->last)
				l->last = e;
			return;
		}
	}
	if (nlanes == lanecap) {
		lanecap = lanecap ? lanecap * 2 : 64;
		lanes = realloc(lanes, lanecap * sizeof(*lanes));
		if (!lanes)
			fail("out of memory%s", "", (size_t)-1);
	}
	lanes[nlanes++] = (struct lane){ p0, p1, t0, t1, b, e };
}

static void add_slot(struct event *ev, size_t *cap, size_t off, size_t len, int kind, int64_t v)
{
	if (ev->nslots == *cap) {
		*cap = *cap ? *cap * 2 : 8;
		ev->slots = realloc(ev->slots, *cap * sizeof(*ev->slots));
		if (!ev->slots)
			fail("out of memory%s", "", (size_t)-1);
	}
	ev->slots[ev->nslots++] = (struct slot){ off, len, kind, v };
}

/* Scan one event object: find its slots, its lane, ts/dur and whether it
 * is a once-per-trace event.  A small container stack tells object keys
 * from array elements. */
static void scan_event(struct event *ev, double *ts_out, double *dur_out, int *is_step,
		       size_t *pid, size_t *tid)
{
	char stack[64];
	size_t p = ev->start, cap = 0, dur_off = 0, dur_len = 0;
	int depth = 0, expect_key = 0, ph = 0, trace_cat = 0, global = 0;
	int64_t dur_int = 0;

	*ts_out = -1;
	*dur_out = 0;
	*is_step = 0;
	pid[0] = pid[1] = tid[0] = tid[1] = 0;
	ev->slots = NULL;
	ev->nslots = 0;
	while (p < ev->end) {
		char c = src[p];
		size_t k0, k1, v1;

		if (c == '{' || c == '[') {
			if (depth == (int)sizeof(stack))
				fail("nesting too deep%s", "", p);
			stack[depth++] = c;
			expect_key = c == '{';
			p++;
			continue;
		}
		if (c == '}' || c == ']') {
			depth--;
			p++;
			continue;
		}
		if (c == ',') {
			expect_key = depth > 0 && stack[depth - 1] == '{';
			p++;
			continue;
		}
		if (c != '"') {
			p++;
			continue;
		}
		if (!expect_key) {  /* a string element of an array */
			p = skip_str(p);
			continue;
		}
		/* key : value */
		k0 = p;
		k1 = skip_str(p);
		p = ws(k1);
		if (p >= ev->end || src[p] != ':')
			fail("expected ':'%s", "", p);
		p = ws(p + 1);
		expect_key = 0;
		if (src[p] == '{' || src[p] == '[')
			continue;  /* nested: the bracket cases descend */
		v1 = skip_value(p);
		if (depth != 1) {
			int64_t n;
			size_t e;
			if (is_id_key(k0, k1, depth) && !parse_int(p, &n, &e))
				add_slot(ev, &cap, p, e - p, S_ID, n);
			p = v1;
			continue;
		}
		if (src[p] == '"') {
			if (key_is(k0, k1, "ph")) {
				ph = src[p + 1];
			} else if (key_is(k0, k1, "cat")) {
				trace_cat = v1 - p == 7 && !memcmp(src + p, "\"Trace\"", 7);
			} else if (key_is(k0, k1, "s")) {
				global = v1 - p == 3 && src[p + 1] == 'g';
			} else if (key_is(k0, k1, "pid")) {
				pid[0] = p;
				pid[1] = v1;
			} else if (key_is(k0, k1, "tid")) {
				tid[0] = p;
				tid[1] = v1;
			} else if (key_is(k0, k1, "name") && v1 - p > 15 &&
				   !memcmp(src + p, "\"ProfilerStep#", 14)) {
				int64_t n;
				size_t e;
				if (!parse_int(p + 14, &n, &e) && e == v1 - 1 && n >= 0) {
					add_slot(ev, &cap, p + 14, e - p - 14, S_STEP, n);
					*is_step = 1;
				}
			}
		} else if (src[p] == '-' || (src[p] >= '0' && src[p] <= '9')) {
			int64_t n;
			size_t e;
			if (key_is(k0, k1, "ts")) {
				if (memchr(src + p, 'e', v1 - p) || memchr(src + p, 'E', v1 - p))
					fail("timestamp in exponent form is not supported%s", "", p);
				if (parse_int(p, &n, &e))
					fail("bad number%s", "", p);
				*ts_out = strtod(src + p, NULL);
				add_slot(ev, &cap, p, e - p, S_TS, n);
			} else if (key_is(k0, k1, "dur")) {
				*dur_out = strtod(src + p, NULL);
				if (!parse_int(p, &dur_int, &e)) {
					dur_off = p;
					dur_len = e - p;
				}
			} else if (key_is(k0, k1, "pid")) {
				pid[0] = p;
				pid[1] = v1;
			} else if (key_is(k0, k1, "tid")) {
				tid[0] = p;
				tid[1] = v1;
			} else if (is_id_key(k0, k1, depth) && !parse_int(p, &n, &e)) {
				add_slot(ev, &cap, p, e - p, S_ID, n);
			}
		}
		p = v1;
	}
	ev->once = ph == 'M' || trace_cat || global || ph == 0;
	if (trace_cat && dur_len)
		add_slot(ev, &cap, dur_off, dur_len, S_DUR_TRACE, dur_int);
}

static int cmp_slot(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* ---- output ---- */
static char *obuf;
static size_t olen;
static int ofd;
static uint64_t written;

static void oflush(void)
{
	size_t p = 0;
	while (p < olen) {
		ssize_t w = write(ofd, obuf + p, olen - p);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			fail("write failed: %s", strerror(errno), (size_t)-1);
		}
		p += (size_t)w;
	}
	written += olen;
	olen = 0;
}

static void oput(const char *s, size_t n)
{
	if (olen + n > OUTBUF) {
		oflush();
		if (n > OUTBUF) {
			size_t p = 0;
			while (p < n) {
				ssize_t w = write(ofd, s + p, n - p);
				if (w < 0 && errno != EINTR)
					fail("write failed: %s", strerror(errno), (size_t)-1);
				if (w > 0)
					p += (size_t)w;
			}
			written += n;
			return;
		}
	}
	memcpy(obuf + olen, s, n);
	olen += n;
}

static void oint(int64_t v)
{
	char tmp[24];
	int i = 24;
	uint64_t u = v < 0 ? (uint64_t)-v : (uint64_t)v;

	do {
		tmp[--i] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		tmp[--i] = '-';
	oput(tmp + i, (size_t)(24 - i));
}

static uint64_t parse_size(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || v <= 0)
		fail("bad size '%s'", s, (size_t)-1);
	switch (*end) {
	case 'k': case 'K': v *= 1e3; break;
	case 'm': case 'M': v *= 1e6; break;
	case 'g': case 'G': v *= 1e9; break;
	case 0: break;
	default: fail("bad size '%s' (use a number with K, M or G)", s, (size_t)-1);
	}
	return (uint64_t)v;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: gen_trace [-s SIZE | -n REPS] [-o OUT] SOURCE.json\n"
		   "  repeat SOURCE's events with shifted timestamps until the output is about\n"
		   "  SIZE bytes (K/M/G = 10^3/10^6/10^9; default 200M), or exactly REPS times.\n"
		   "  OUT defaults to stdout.  Plain JSON only (gzip the output separately).\n");
}

int main(int argc, char **argv)
{
	uint64_t target = 200000000ull, reps = 0;
	const char *out = NULL, *in = NULL;
	struct stat st;
	int fd, i;
	size_t p, arr0 = 0, arr1 = 0, nev = 0, evcap = 0, sep0 = 0, sep1 = 0;
	struct event *evs = NULL;
	double tmin = 1e300, tmax = -1e300, smin = 1e300, smax = -1e300, span, mid;
	int64_t shift, idmax = -1, idstep, stepmin = INT64_MAX, stepmax = INT64_MIN, nsteps;
	uint64_t rep_bytes = 0, fixed_bytes;
	size_t nonce = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-s") && i + 1 < argc)
			target = parse_size(argv[++i]);
		else if (!strcmp(argv[i], "-n") && i + 1 < argc)
			reps = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out = argv[++i];
		else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			usage(stderr);
			return 2;
		} else
			in = argv[i];
	}
	if (!in) {
		usage(stderr);
		return 2;
	}

	/* The source is small (a real trace of a few MB): read it whole. */
	fd = open(in, O_RDONLY);
	if (fd < 0 || fstat(fd, &st))
		fail("'%s': cannot open", in, (size_t)-1);
	srclen = (size_t)st.st_size;
	src = malloc(srclen + 1);
	if (!src)
		fail("out of memory%s", "", (size_t)-1);
	for (p = 0; p < srclen;) {
		ssize_t r = read(fd, (char *)src + p, srclen - p);
		if (r <= 0)
			fail("'%s': read failed", in, (size_t)-1);
		p += (size_t)r;
	}
	close(fd);
	if (srclen >= 2 && (unsigned char)src[0] == 0x1f && (unsigned char)src[1] == 0x8b)
		fail("'%s': gzip input; decompress it first (zcat)", in, (size_t)-1);

	/* Locate the event array: the bare array, or the top-level "traceEvents". */
	p = ws(0);
	if (p < srclen && src[p] == '[') {
		arr0 = p;
	} else if (p < srclen && src[p] == '{') {
		p++;
		for (;;) {
			size_t k0, k1;
			p = ws(p);
			if (p >= srclen || src[p] != '"')
				fail("'%s': no \"traceEvents\" array", in, p);
			k0 = p;
			k1 = skip_str(p);
			p = ws(k1);
			if (p >= srclen || src[p] != ':')
				fail("'%s': expected ':'", in, p);
			p = ws(p + 1);
			if (key_is(k0, k1, "traceEvents") && src[p] == '[') {
				arr0 = p;
				break;
			}
			p = ws(skip_value(p));
			if (p < srclen && src[p] == ',')
				p++;
		}
	} else {
		fail("'%s': not a JSON trace", in, p);
	}
	arr1 = skip_value(arr0) - 1;  /* the closing ']' */

	/* Split the array into events. */
	p = arr0 + 1;
	for (;;) {
		size_t e;
		p = ws(p);
		if (p < arr1 && src[p] == ',') {
			p++;
			continue;
		}
		if (p >= arr1)
			break;
		if (src[p] != '{')
			fail("'%s': event is not an object", in, p);
		e = skip_value(p);
		if (nev == evcap) {
			evcap = evcap ? evcap * 2 : 4096;
			evs = realloc(evs, evcap * sizeof(*evs));
			if (!evs)
				fail("out of memory%s", "", (size_t)-1);
		}
		evs[nev].start = p;
		evs[nev].end = e;
		nev++;
		p = e;
	}
	if (nev == 0)
		fail("'%s': no events", in, arr0);
	if (nev >= 2) {  /* the source's own separator, e.g. ",\n  " */
		sep0 = evs[0].end;
		sep1 = evs[1].start;
	}

	/* Scan events: slots, lanes, time span, steps, ids. */
	for (size_t k = 0; k < nev; k++) {
		double ts, dur;
		int is_step;
		size_t pid[2], tid[2];
		struct event *ev = &evs[k];

		scan_event(ev, &ts, &dur, &is_step, pid, tid);
		qsort(ev->slots, ev->nslots, sizeof(*ev->slots), cmp_slot);
		for (size_t j = 0; j < ev->nslots; j++) {
			if (ev->slots[j].kind == S_ID && ev->slots[j].val > idmax)
				idmax = ev->slots[j].val;
			if (ev->slots[j].kind == S_STEP) {
				if (ev->slots[j].val < stepmin)
					stepmin = ev->slots[j].val;
				if (ev->slots[j].val > stepmax)
					stepmax = ev->slots[j].val;
			}
		}
		if (ev->once || ts < 0)
			continue;
		if (ts < tmin)
			tmin = ts;
		if (ts + dur > tmax)
			tmax = ts + dur;
		if (is_step) {
			if (ts < smin)
				smin = ts;
			if (ts + dur > smax)
				smax = ts + dur;
		}
		lane_note(pid[0], pid[1], tid[0], tid[1], ts, ts + dur);
		rep_bytes += ev->end - ev->start + (sep1 - sep0 ? sep1 - sep0 : 2);
	}
	if (tmax < tmin)
		fail("'%s': no timed events to repeat", in, arr0);
	/* Shift: the step span (consecutive steps, as a real multi-step trace
	 * has them), widened if some lane's events last longer than that, so no
	 * thread or stream ever overlaps itself across repetitions. */
	span = smax > smin ? smax - smin : tmax - tmin;
	for (size_t l = 0; l < nlanes; l++)
		if (lanes[l].last - lanes[l].first > span)
			span = lanes[l].last - lanes[l].first;
	shift = (int64_t)span;
	if ((double)shift < span)
		shift++;
	if (shift < 1)
		shift = 1;
	mid = (tmin + tmax) / 2;
	idstep = idmax + 1;
	nsteps = stepmax >= stepmin ? stepmax - stepmin + 1 : 0;

	fixed_bytes = (arr0 + 1) + (srclen - arr1);
	for (size_t k = 0; k < nev; k++) {
		if (evs[k].once) {
			nonce++;
			fixed_bytes += evs[k].end - evs[k].start + 4;
			for (size_t j = 0; j < evs[k].nslots; j++)
				if (evs[k].slots[j].kind == S_TS &&
				    (double)evs[k].slots[j].val > mid)
					evs[k].late = 1;
		}
	}
	if (!reps)
		reps = target > fixed_bytes ? (target - fixed_bytes + rep_bytes / 2) / rep_bytes : 1;
	if (reps < 1)
		reps = 1;

	if (!out || !strcmp(out, "-"))
		ofd = 1;
	else if ((ofd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0)
		fail("'%s': cannot create", out, (size_t)-1);
	obuf = malloc(OUTBUF);
	if (!obuf)
		fail("out of memory%s", "", (size_t)-1);

	oput(src, arr0 + 1);
	{
		int first = 1;
		const char *sep = sep1 > sep0 ? src + sep0 : ",\n";
		size_t seplen = sep1 > sep0 ? sep1 - sep0 : 2;
		size_t lead = ws(arr0 + 1) - (arr0 + 1);

		oput(src + arr0 + 1, lead);
		for (uint64_t r = 0; r < reps; r++) {
			int last = r + 1 == reps;
			for (size_t k = 0; k < nev; k++) {
				const struct event *ev = &evs[k];
				size_t pos = ev->start;
				int64_t tshift;

				if (ev->once && !last)
					continue;
				tshift = ev->once ? (ev->late ? (int64_t)r * shift : 0) : (int64_t)r * shift;
				if (!first)
					oput(sep, seplen);
				first = 0;
				for (size_t j = 0; j < ev->nslots; j++) {
					const struct slot *s = &ev->slots[j];
					oput(src + pos, s->off - pos);
					switch (s->kind) {
					case S_TS: oint(s->val + tshift); break;
					case S_STEP: oint(s->val + (int64_t)r * nsteps); break;
					case S_ID: oint(ev->once ? s->val : s->val + (int64_t)r * idstep); break;
					case S_DUR_TRACE: oint(s->val + (int64_t)(reps - 1) * shift); break;
					}
					pos = s->off + s->len;
				}
				oput(src + pos, ev->end - pos);
			}
		}
		/* Whitespace after the last event, then "]" and the trailer. */
		for (size_t q = evs[nev - 1].end; q < arr1; q++)
			if (src[q] != ',')
				oput(src + q, 1);
		oput(src + arr1, srclen - arr1);
	}
	oflush();
	if (ofd != 1 && close(ofd))
		fail("'%s': close failed", out, (size_t)-1);
	fprintf(stderr, "%s: %s: %zu events (%zu once), %llu repetitions, shift %lld us, "
		"%lld steps/rep, %llu bytes\n", prog, in, nev, nonce, (unsigned long long)reps,
		(long long)shift, (long long)nsteps, (unsigned long long)written);
	free(obuf);
	for (size_t k = 0; k < nev; k++)
		free(evs[k].slots);
	free(evs);
	free(lanes);
	free((char *)src);
	return 0;
}
