/*
 * compare_keys.c - what one function and one class are across two runs,
 * for `perftracker compare` (compare.c, compare_report.c): kernels by name
 * (launch shapes summed), Python stacks without module instance numbers,
 * collectives by group; which Python stacks are threads blocked in a wait
 * (idle); the classes in report order, their medians and the names of the
 * changes.  Both the matching (compare.c) and the report (compare_report.c)
 * depend on this file, never on each other's.
 */
#include "compare_internal.h"
#include "../diagnose/diagnose.h"
#include "../analysis/stats.h"
#include "../model/keys.h"
#include "../model/commkind.h"

#include <string.h>

const char *const cmp_change_name[4] = { "slower", "faster", "appeared", "disappeared" };
const int cmp_class_order[NCLS] = { PT_C_COMPUTE, PT_C_COMM, PT_C_MEMORY, PT_C_RUNTIME,
				    PT_C_PYTHON, PT_C_IDLE };

/* Median over one side's workers of the owned ms per step of class cls. */
double cmp_class_median(cctx *c, int side, int cls)
{
	size_t wi, n = 0;

	for (wi = 0; wi < c->nw; wi++)
		if (c->w[wi].side == side)
			c->tmp[n++] = c->w[wi].own[cls];
	return pt_robust_median(c->tmp, n, 0);
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
	const char *leaf = strrchr(key, '|');

	return pt_wait_idle_frame(leaf ? leaf + 1 : key);
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
	/* the launch shape as keys.c reads it; a key that is all shape keeps it */
	n = pt_key_strip_shape(p->key, strlen(p->key));
	if (n == strlen(p->key) || n == 0 || n >= cap)
		return p->key;
	memcpy(buf, p->key, n);
	buf[n] = 0;
	return buf;
}
