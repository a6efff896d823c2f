/*
 * compare_keys.c - what one function is across two runs, for
 * `perftracker compare` (compare.c): kernels by name (launch shapes summed),
 * Python stacks without module instance numbers, collectives by group; and
 * which Python stacks are threads blocked in a wait (idle).
 */
#include "compare_internal.h"
#include "diagnose.h"

#include <string.h>

/* Length of a kernel key without its launch shape: the key is name + grid
 * + "|" + block ("...kernel7_16_1|128_1_1"); returns strlen(key) when it
 * does not end that way. */
static size_t kernel_name_len(const char *key)
{
	const char *bar = strrchr(key, '|'), *p;
	int us = 0;

	if (!bar || bar == key)
		return strlen(key);
	for (p = bar + 1; *p; p++)
		if (!((*p >= '0' && *p <= '9') || *p == '_'))
			return strlen(key);
	/* back over "gx_gy_gz": digits and exactly two '_' */
	for (p = bar - 1; p > key && ((*p >= '0' && *p <= '9') || (*p == '_' && us < 2)); p--)
		us += *p == '_';
	if (us != 2 || !(p[1] >= '0' && p[1] <= '9'))
		return strlen(key);
	return (size_t)(p + 1 - key);
}

/* A Python stack with module instance numbers dropped ("nn.Module:
 * BertLayer_3" -> "nn.Module: BertLayer"): the four layers of a BERT encoder
 * run the same code, and one function made slower must be one finding, not
 * four below the noise.  key itself when nothing changes or it does not fit. */
static const char *python_key(const char *key, char *buf, size_t cap)
{
	static const char mod[] = "nn.Module: ";
	const char *s = key, *m;
	size_t n = 0;
	int changed = 0;

	while ((m = strstr(s, mod))) {
		const char *e = m + sizeof(mod) - 1, *u = NULL, *q;

		while (*e && *e != '|')
			e++;
		for (q = e - 1; q > m + sizeof(mod) - 1 && *q >= '0' && *q <= '9'; q--)
			;
		if (q < e - 1 && *q == '_')
			u = q;
		if (n + (size_t)((u ? u : e) - s) + 1 > cap)
			return key;
		memcpy(buf + n, s, (size_t)((u ? u : e) - s));
		n += (size_t)((u ? u : e) - s);
		changed |= u != NULL;
		s = e;
	}
	if (!changed || n + strlen(s) + 1 > cap)
		return key;
	memcpy(buf + n, s, strlen(s) + 1);
	return buf;
}

/* Is the stack's innermost frame a thread blocked in a wait (a monitor
 * thread's Condition.wait, a sleep, a queue get)?  Such a thread is idle:
 * it "runs" exactly as long as the step lasts, so it would read as slower
 * whenever anything else is (the tqdm monitor thread of TraceLens's BERT
 * trace owns 42% of its step this way). */
int cmp_is_wait_stack(const char *key)
{
	static const char *const waits[] = {
		"threading.py: wait", "threading.py: _wait_for_tstate_lock", "threading.py: join",
		"queue.py: get", "selectors.py: select", "time.sleep", "<built-in function sleep>",
		"<built-in method acquire of _thread.lock object at 0x>",
		"<built-in method acquire of _thread.RLock object at 0x>",
	};
	const char *leaf = strrchr(key, '|');
	size_t i, n, m;

	leaf = leaf ? leaf + 1 : key;
	n = strlen(leaf);
	for (i = 0; i < sizeof(waits) / sizeof(waits[0]); i++) {
		m = strlen(waits[i]);
		if (n >= m && !strcmp(leaf + n - m, waits[i]))
			return 1;
	}
	return 0;
}

/* The key a pattern is compared by: collectives by group, kernels by name
 * (their launch shapes summed: data-dependent grids change from step to
 * step, e.g. HTA's trace_diff control runs its embedding backward kernel
 * with six different grids in six steps), the rest by key. */
const char *cmp_func_key(const pt_pattern *p, char *buf, size_t cap)
{
	size_t n;

	if (p->cls == PT_C_COMM) {
		pt_diag_comm_group(p->key, p->kind, buf, cap);
		return buf;
	}
	if (p->cls == PT_C_PYTHON)
		return python_key(p->key, buf, cap);
	if (p->cls != PT_C_COMPUTE)
		return p->key;
	n = kernel_name_len(p->key);
	if (n == strlen(p->key) || n >= cap)
		return p->key;
	memcpy(buf, p->key, n);
	buf[n] = 0;
	return buf;
}
