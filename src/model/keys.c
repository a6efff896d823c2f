/*
 * keys.c - the function key's rules (keys.h): a kernel's key and whether
 * it is communication, step numbers, the normalised frame name, and the
 * reading of a key's launch shape.  Written by the trace readers and the
 * pattern builder, read by the diagnosis sentences and the report's short
 * names, so every stage and every profiler agree on one key.
 */
#include "keys.h"

#include <string.h>

static inline int is_digit(char c) { return (unsigned char)(c - '0') < 10; }

int pt_key_kernel_role(pt_commkind_cache *ck, int64_t id, const char *name, size_t n)
{
	if (id >= 0 && id < (int64_t)UINT32_MAX)
		return pt_commkind_memo(ck, (uint32_t)id, name, n);
	return pt_commkind_classify(name, n);
}

/* Decimal v at o, by hand: sprintf here showed in the Kineto reader's
 * profile (docs/bench.md, "Code shaped for speed"). */
static size_t put_i64(char *o, int64_t v)
{
	char t[24];
	size_t n = 0, i;
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

	do {
		t[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	i = 0;
	if (v < 0)
		o[i++] = '-';
	while (n)
		o[i++] = t[--n];
	return i;
}

/* "x_y_z" */
static size_t put_dims(char *o, const int64_t d[3])
{
	size_t n = put_i64(o, d[0]);

	o[n++] = '_';
	n += put_i64(o + n, d[1]);
	o[n++] = '_';
	n += put_i64(o + n, d[2]);
	return n;
}

size_t pt_key_kernel(char *out, const char *name, size_t n, int role, const int64_t grid[3],
		     const int64_t block[3])
{
	size_t o = n;

	memcpy(out, name, n);
	if (role > 0 || !grid || !block)
		return o;
	o += put_dims(out + o, grid);
	out[o++] = PT_KEY_SEP;
	o += put_dims(out + o, block);
	return o;
}

int64_t pt_key_step_number(const char *name, size_t n)
{
	int64_t v = 0;
	size_t k;

	if (n <= 13 || n - 13 > 18 || memcmp(name, "ProfilerStep#", 13))
		return -1;
	for (k = 13; k < n; k++) {
		if (!is_digit(name[k]))
			return -1;
		v = v * 10 + (name[k] - '0');
	}
	return v;
}

size_t pt_key_normalize_name(const char *s, size_t n, char *out, size_t cap)
{
	size_t i = 0, o = 0;

	if (!cap)
		return 0;
	while (i < n && o + 1 < cap) {
		char c = s[i];

		/* "file.py(123): func" -> "file.py: func" */
		if (c == '(') {
			size_t j = i + 1;
			while (j < n && is_digit(s[j]))
				j++;
			if (j > i + 1 && j + 1 < n && s[j] == ')' && s[j + 1] == ':') {
				i = j + 1;
				continue;
			}
		}
		/* "... object at 0x7f12ab>" -> "... object at 0x>" */
		if (c == '0' && i + 1 < n && s[i + 1] == 'x' && i >= 4 && !memcmp(s + i - 4, " at ", 4)) {
			size_t j = i + 2;
			while (j < n && ((s[j] >= '0' && s[j] <= '9') || (s[j] >= 'a' && s[j] <= 'f') ||
					 (s[j] >= 'A' && s[j] <= 'F')))
				j++;
			if (o + 3 > cap)
				break;
			out[o++] = '0';
			out[o++] = 'x';
			i = j;
			continue;
		}
		out[o++] = c;
		i++;
	}
	out[o] = 0;
	return o;
}

size_t pt_key_strip_shape(const char *s, size_t n)
{
	size_t i = n, part;

	for (part = 0; part < 2; part++) {
		int k;

		for (k = 0; k < 3; k++) {
			size_t digits = 0;

			while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9') {
				i--;
				digits++;
			}
			if (!digits)
				return n;
			if (k < 2) {
				if (i == 0 || s[i - 1] != '_')
					return n;
				i--;
			}
		}
		if (part == 0) {
			if (i == 0 || s[i - 1] != PT_KEY_SEP)
				return n;
			i--;
		}
	}
	return i;
}

int pt_key_runtime_kind(const char *s, size_t n)
{
	char buf[128];
	size_t m = n < sizeof(buf) - 1 ? n : sizeof(buf) - 1;

	memcpy(buf, s, m);
	buf[m] = 0;
	if (strstr(buf, "Synchronize"))
		return PT_RT_SYNC;
	/* Synchronous copies block the host until the GPU is done. */
	if (!strcmp(buf, "cudaMemcpy") || !strcmp(buf, "hipMemcpy") ||
	    !strncmp(buf, "cuMemcpyDtoH", 12) || !strcmp(buf, "cudaMemcpy2D"))
		return PT_RT_SYNC_COPY;
	if (strstr(buf, "LaunchKernel") || strstr(buf, "cuLaunch") || strstr(buf, "GraphLaunch") ||
	    strstr(buf, "LaunchCooperativeKernel") || strstr(buf, "ModuleLaunchKernel"))
		return PT_RT_LAUNCH;
	/* async copies and memsets: launches too for the idle causes, not
	 * counted as kernel launches */
	if (strstr(buf, "Async"))
		return PT_RT_ENQUEUE;
	return PT_RT_OTHER;
}
