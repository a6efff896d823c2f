/*
 * collector_export.c - the raw trace of one window: at the window's end
 * the background thread (collector_bg.c) turns torch.profiler's export into
 * <spool>/<trigger>/<worker>.json for the node agent to summarise.  Both
 * forms get our "perftracker" member (trigger, steps, torch version, the
 * Flight Recorder's collectives): first in a Kineto export ('{'), in a
 * header around the legacy bare array, into which the C tracer's
 * python_function events (collector_tracer.c) are spliced.
 * No GIL: the tracer's buffer is the background thread's by then.
 */
#include "collector_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/file.h"
#include "util/strbuf.h"

static int copy_fd(int in, FILE *out, off_t from, off_t to)
{
	char buf[1 << 16];

	while (from < to) {
		size_t want = (size_t)(to - from) < sizeof(buf) ? (size_t)(to - from) : sizeof(buf);
		ssize_t r = pread(in, buf, want, from);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		if (fwrite(buf, 1, (size_t)r, out) != (size_t)r)
			return -1;
		from += r;
	}
	return 0;
}

/* Our member of the raw trace: "perftracker":{...} (no comma): the trigger,
 * the steps, torch's version, where the Python frames came from, and
 * torch's Flight Recorder entries of the window ("collectives", each with
 * its process group and sequence number: docs/collector.md "The raw
 * trace"). */
static void add_member(pt_sb *hdr, const window *w)
{
	const char *py = w->use_tracer ? "c" : !w->legacy ? "kineto" : "none";

	pt_sb_adds(hdr, "\"perftracker\":{\"version\":1,\"trigger\":");
	pt_sb_add_json_str(hdr, w->tid, strlen(w->tid));
	pt_sb_adds(hdr, ",\"host\":");
	pt_sb_add_json_str(hdr, G.host, strlen(G.host));
	pt_sb_addf(hdr, ",\"pid\":%ld,\"rank\":%lld,\"world_size\":%lld,\"start_step\":%lld,"
		   "\"end_step\":%lld,\"torch\":", (long)G.pid, (long long)w->rank,
		   (long long)w->world, (long long)w->actual_start, (long long)w->end);
	pt_sb_add_json_str(hdr, w->torch_version, strlen(w->torch_version));
	pt_sb_addf(hdr, ",\"python_tracer\":\"%s\",\"python_events_dropped\":%llu", py,
		   (unsigned long long)tracer_dropped());
	if (w->colls) {
		/* Python's json.dumps of the entries (_window.flight_recorder) */
		pt_sb_adds(hdr, ",\"collectives_source\":\"flight recorder\",\"collectives\":");
		pt_sb_adds(hdr, w->colls);
	}
	pt_sb_adds(hdr, "}");
}

/* ---- The C tracer's events in a Kineto export (PERFTRACKER_PYTHON_TRACER=c
 * on a torch with Kineto; docs/collector.md) ------------------------------ */

typedef struct kineto_layout {
	off_t open, close;  /* the traceEvents array's '[' and matching ']' */
	int empty;          /* no event between them */
	int64_t base_ns;    /* top-level baseTimeNanoseconds, 0 when absent */
} kineto_layout;

/* One pass over torch's object, string-aware: where the top-level
 * "traceEvents" array starts and ends, and the top-level
 * "baseTimeNanoseconds" (Kineto writes ts in µs relative to it). */
static int kineto_scan(int in, off_t size, kineto_layout *k)
{
	char buf[1 << 16], key[32];
	int depth = 0, in_str = 0, esc = 0, want_key = 0, after_colon = 0, klen = -1;
	int in_events = 0, is_base = 0, num = 0;
	int64_t base = 0;
	off_t pos = 0;

	key[0] = 0;
	memset(k, 0, sizeof(*k));
	k->open = k->close = -1;
	k->empty = 1;
	while (pos < size) {
		ssize_t r = pread(in, buf, sizeof(buf), pos);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		for (ssize_t i = 0; i < r; i++) {
			char c = buf[i];
			off_t at = pos + i;

			if (in_str) {
				if (esc)
					esc = 0;
				else if (c == '\\')
					esc = 1;
				else if (c == '"') {
					in_str = 0;
					if (klen >= 0)
						key[klen < (int)sizeof(key) ? klen : (int)sizeof(key) - 1] = 0;
				} else if (klen >= 0 && klen < (int)sizeof(key) - 1)
					key[klen++] = c;
				else if (klen >= 0)
					klen = sizeof(key);  /* too long: matches nothing */
				continue;
			}
			if (num) {
				if (c >= '0' && c <= '9') {
					base = base * 10 + (c - '0');
					continue;
				}
				num = 0;
				k->base_ns = base;
			}
			if (in_events && depth > 2) {
				/* inside an event: only nesting and strings matter */
				if (c == '"')
					in_str = 1, klen = -1;
				else if (c == '{' || c == '[')
					depth++;
				else if (c == '}' || c == ']')
					depth--;
				continue;
			}
			switch (c) {
			case '"':
				in_str = 1;
				klen = depth == 1 && want_key ? 0 : -1;
				if (klen == 0)
					want_key = 0;
				break;
			case ':':
				if (depth == 1) {
					after_colon = 1;
					is_base = !strcmp(key, "baseTimeNanoseconds");
					if (!strcmp(key, "traceEvents"))
						in_events = -1;  /* its '[' comes next */
				}
				break;
			case '{':
			case '[':
				depth++;
				if (depth == 1)
					want_key = 1;
				if (depth == 2 && in_events == -1 && c == '[') {
					in_events = 1;
					k->open = at;
				} else if (in_events == 1 && depth == 3)
					k->empty = 0;
				after_colon = 0;
				break;
			case '}':
			case ']':
				if (depth == 2 && in_events == 1 && c == ']') {
					k->close = at;
					in_events = 0;
				}
				depth--;
				break;
			case ',':
				if (depth == 1) {
					want_key = 1;
					after_colon = 0;
					key[0] = 0;
				}
				break;
			default:
				if (depth == 1 && after_colon && is_base && c >= '0' && c <= '9') {
					num = 1;
					base = c - '0';
					is_base = 0;
				} else if (in_events == 1 && depth == 2 && !strchr(" \t\r\n", c))
					k->empty = 0;
				break;
			}
		}
		pos += r;
	}
	return k->open >= 0 && k->close > k->open ? 0 : -1;
}

/* Bytes [from, size) of Kineto's object into `out`, with the C tracer's
 * python_function events appended to its traceEvents, on its time base
 * (baseTimeNanoseconds), pid and the training thread's tid (from
 * _window.stop()); `from` lies before the traceEvents array.  Returns the
 * number of events written, -1 on a layout it cannot read or a failed
 * write. */
static long merge_kineto(const window *w, int in, off_t from, off_t size, FILE *out)
{
	kineto_layout k;
	size_t n;

	if (kineto_scan(in, size, &k) != 0 || k.open < from) {
		errno = EINVAL;  /* no top-level traceEvents array */
		return -1;
	}
	if (copy_fd(in, out, from, k.close) != 0)
		return -1;
	n = tracer_write(out, k.base_ns, w->pid_tok, w->tid_tok, k.empty);
	if (copy_fd(in, out, k.close, size) != 0)
		return -1;
	return (long)n;
}

/* A Kineto export ('{' at first): our member goes in first, the rest is
 * torch's file as it was (one copy, on the background thread). */
static int write_kineto(int in, FILE *out, off_t first, off_t size, const window *w,
			size_t *npy)
{
	pt_sb hdr = { 0 };
	off_t i;
	char c = 0;
	int rc = -1;

	for (i = first + 1; i < size && pread(in, &c, 1, i) == 1; i++)
		if (!strchr(" \t\r\n", c))
			break;
	pt_sb_adds(&hdr, "{");
	add_member(&hdr, w);
	if (c != '}')   /* an empty object takes no comma */
		pt_sb_adds(&hdr, ",");
	if (!hdr.oom && fwrite(hdr.buf, 1, hdr.len, out) == hdr.len) {
		if (w->use_tracer && tracer_has_events()) {
			/* PERFTRACKER_PYTHON_TRACER=c: our events into its traceEvents */
			long n = merge_kineto(w, in, first + 1, size, out);

			if (n >= 0) {
				*npy = (size_t)n;
				rc = 0;
			}
		} else if (copy_fd(in, out, first + 1, size) == 0) {
			rc = 0;
		}
	}
	pt_sb_free(&hdr);
	return rc;
}

/* The legacy export's bare array, wrapped in a header (base time,
 * distributed info, our member), with the C tracer's python_function
 * events spliced in; *npy: how many. */
static int write_legacy(int in, FILE *out, off_t first, off_t last, const window *w, size_t *npy)
{
	pt_sb hdr = { 0 };
	char c;
	int rc = -1;

	pt_sb_adds(&hdr, "{\"schemaVersion\":1,");
	/* The legacy export's ts are µs since the profiler's start on
	 * CLOCK_REALTIME: the base makes them absolute, so the agent can put the
	 * node's hardware samples (same clock) beside the window. */
	if (w->trace_start_ns > 0)
		pt_sb_addf(&hdr, "\"baseTimeNanoseconds\":%lld,", (long long)w->trace_start_ns);
	pt_sb_adds(&hdr, "\"distributedInfo\":{\"backend\":");
	pt_sb_add_json_str(&hdr, w->backend, strlen(w->backend));
	pt_sb_addf(&hdr, ",\"rank\":%lld,\"world_size\":%lld},", (long long)w->rank,
		   (long long)w->world);
	add_member(&hdr, w);
	pt_sb_adds(&hdr, ",\"traceEvents\":");
	if (hdr.oom || fwrite(hdr.buf, 1, hdr.len, out) != hdr.len)
		goto out;
	/* torch's array up to (not including) its closing ']' */
	if (copy_fd(in, out, first, last) != 0)
		goto out;
	if (w->use_tracer && tracer_has_events()) {
		/* An empty torch array ("[" only so far) needs no comma. */
		int empty = 1;

		for (off_t i = first + 1; i < last && pread(in, &c, 1, i) == 1; i++)
			if (!strchr(" \t\r\n", c)) {
				empty = 0;
				break;
			}
		*npy = tracer_write(out, w->trace_start_ns, w->pid_tok, w->tid_tok, empty);
	}
	fputs("]}\n", out);
	rc = 0;
out:
	pt_sb_free(&hdr);
	return rc;
}

/* Merge torch's export and the tracer's events into the raw trace
 * <spool>/<tid>/<id>.json (no GIL; runs in the background thread). */
int export_trace(window *w)
{
	char tmp[PT_CONTROL_PATH_MAX + 64];
	int in = -1, rc = -1, ofd;
	FILE *out = NULL;
	struct stat st;
	off_t first = -1, last = -1;
	char c;
	size_t npy = 0;
	int wr;

	in = open(w->torch_path, O_RDONLY | O_CLOEXEC);
	if (in < 0 || fstat(in, &st) != 0) {
		snprintf(w->error, sizeof(w->error), "cannot read torch trace '%.300s': %s",
			 w->torch_path, strerror(errno));
		goto out;
	}
	/* Find the first and last non-blank bytes: '[' ... ']' is the legacy
	 * (bare array) export we splice into; '{' is Kineto's, kept as is. */
	for (off_t i = 0; i < st.st_size && pread(in, &c, 1, i) == 1; i++)
		if (!strchr(" \t\r\n", c)) {
			first = i;
			break;
		}
	for (off_t i = st.st_size - 1; i >= 0 && pread(in, &c, 1, i) == 1; i--)
		if (!strchr(" \t\r\n", c)) {
			last = i;
			break;
		}
	if (first < 0 || last <= first) {
		snprintf(w->error, sizeof(w->error), "torch trace '%.300s' is empty", w->torch_path);
		goto out;
	}
	if (pread(in, &c, 1, first) != 1)
		goto out;
	/* A new file under an unguessable name (O_EXCL|O_NOFOLLOW). */
	ofd = pt_file_create_tmp(w->final_path, 0644, tmp, sizeof(tmp), NULL);
	out = ofd >= 0 ? fdopen(ofd, "w") : NULL;
	if (!out) {
		snprintf(w->error, sizeof(w->error), "cannot write beside '%.300s': %s",
			 w->final_path, strerror(errno));
		if (ofd >= 0) {
			close(ofd);
			unlink(tmp);
		}
		goto out;
	}
	wr = c == '{' ? write_kineto(in, out, first, st.st_size, w, &npy)
		      : write_legacy(in, out, first, last, w, &npy);
	if (wr != 0 || fflush(out) != 0 || ferror(out)) {
		snprintf(w->error, sizeof(w->error), "cannot write '%.300s': %s", tmp, strerror(errno));
		goto out;
	}
	if (fclose(out) != 0) {
		out = NULL;
		snprintf(w->error, sizeof(w->error), "cannot write '%.300s': %s", tmp, strerror(errno));
		goto out;
	}
	out = NULL;
	/* util/file.c's commit: the temporary goes if the rename fails. */
	if (pt_file_commit_tmp(tmp, w->final_path, NULL) != PT_OK) {
		snprintf(w->error, sizeof(w->error), "cannot move trace to '%.300s': %s",
			 w->final_path, strerror(errno));
		goto out;
	}
	dlog("trace %s written (%zu python events, %llu dropped)", w->final_path, npy,
	     (unsigned long long)tracer_dropped());
	rc = 0;
out:
	if (out) {
		fclose(out);
		unlink(tmp);
	}
	if (in >= 0)
		close(in);
	unlink(w->torch_path);
	return rc;
}
