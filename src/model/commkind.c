/*
 * commkind.c - which kernels are communication, and their role
 * (commkind.h): the built-in rule table, the user's rules, the role a
 * kernel name spells ("auto"), and the per-reader memo; and the host
 * frames and calls that wait rather than work (the waits: lockstep_blame.c,
 * compare.c).
 *
 * Flow: src/trace readers -> pt_commkind_memo -> PT_K_COMM_KERNEL;
 * src/analysis/patterns.c -> pt_commkind_classify -> pattern role;
 * src/diagnose/comm.c -> group by role.
 *
 * Names are matched without a leading "void " and without their parameter
 * list, so that "*deep_ep::*dispatch*" does not match a combine kernel
 * that takes a dispatch handle.  Sources of the built-in names (public
 * code, checked 2026-12): DeepEP csrc/kernels/{intranode,internode,
 * internode_ll}.cu (deep_ep::intranode::notify_dispatch, dispatch,
 * cached_notify_dispatch, cached_notify_combine, combine;
 * deep_ep::internode::notify_dispatch, dispatch, cached_notify, combine;
 * deep_ep::internode_ll::dispatch, combine, clean_low_latency_buffer;
 * deep_ep::layout::get_dispatch_layout is local work, not communication),
 * forks that keep the names under another namespace (uccl::, nccl_ep::,
 * mscclpp::ep::, primus_turbo::deep_ep::), and by structure the same
 * layout under any other namespace (ep_by_structure); NVSHMEM's nvshmemi_*_kernel and
 * nvshmemi_proxy_*_entrypoint; MSCCL's mscclKernel_<op>_<type>_<proto>;
 * vLLM/SGLang/AITER cross_device_reduce_{1,2}stage; TensorRT-LLM
 * oneShot/twoShotAllReduceKernel and allreduce_fusion_kernel_*; PyTorch
 * c10d::symmetric_memory kernels.
 */
#include "commkind.h"
#include "../util/file.h"
#include "../util/xalloc.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROLE_AUTO (-2)

static const char *const role_names[PT_ROLE_COUNT] = {
	"compute", "allreduce", "allgather", "reducescatter", "alltoall",
	"alltoall dispatch", "alltoall combine", "alltoall notify", "broadcast", "reduce",
	"sendrecv", "barrier", "collective",
};

const char *pt_commkind_role_name(int role)
{
	if (role < 0 || role >= PT_ROLE_COUNT)
		return "collective";
	return role_names[role];
}

int pt_commkind_role_parse(const char *s, size_t n)
{
	int i;

	for (i = 0; i < PT_ROLE_COUNT; i++)
		if (strlen(role_names[i]) == n && !memcmp(role_names[i], s, n))
			return i;
	return -1;
}

/* ---- globs ------------------------------------------------------------- */

/* '*' any run, '?' one byte; iterative with one backtrack point (linear
 * for the patterns used here, at worst O(n*m)). */
static int glob_match(const char *g, const char *s, size_t n)
{
	const char *star = NULL;
	size_t i = 0, mark = 0;

	while (i < n) {
		if (*g == '*') {
			star = ++g;
			mark = i;
		} else if (*g && (*g == '?' || *g == s[i])) {
			g++;
			i++;
		} else if (star) {
			g = star;
			i = ++mark;
		} else {
			return 0;
		}
	}
	while (*g == '*')
		g++;
	return *g == 0;
}

/* The part of a kernel name rules see: no "void ", no parameter list, no
 * Kineto launch shape (which follows the parameter list). */
static void rule_view(const char **s, size_t *n)
{
	const char *p = *s, *e;
	size_t len = *n, i;
	int depth = 0;

	if (len >= 5 && !memcmp(p, "void ", 5)) {
		p += 5;
		len -= 5;
	}
	for (i = 0; i < len; i++) {
		if (p[i] == '<')
			depth++;
		else if (p[i] == '>' && depth)
			depth--;
		else if (p[i] == '(' && depth == 0 && i > 0) {
			if (len - i >= 21 && !memcmp(p + i, "(anonymous namespace)", 21)) {
				i += 20;
				continue;
			}
			break;
		}
	}
	e = p + i;
	*s = p;
	*n = (size_t)(e - p);
}

/* ---- roles spelt in names ---------------------------------------------- */

/* The one table of collective words: compounds before their parts
 * ("sendrecv" before "send", "allreduce" before "reduce"), then the
 * order decides for a name that spells two.  The label is how reports
 * spell the word's group. */
static const struct {
	const char *w, *label;
	int role;
} coll_words[] = {
	{ "reducescatter", "reducescatter", PT_ROLE_REDUCESCATTER },
	{ "allgather", "allgather", PT_ROLE_ALLGATHER },
	{ "alltoall", "alltoall", PT_ROLE_ALLTOALL },
	{ "allreduce", "allreduce", PT_ROLE_ALLREDUCE },
	{ "broadcast", "broadcast", PT_ROLE_BROADCAST },
	{ "bcast", "broadcast", PT_ROLE_BROADCAST },
	{ "sendrecv", "sendrecv", PT_ROLE_SENDRECV },
	{ "barrier", "barrier", PT_ROLE_BARRIER },
	{ "dispatch", "alltoall dispatch", PT_ROLE_DISPATCH },
	{ "combine", "alltoall combine", PT_ROLE_COMBINE },
	{ "reduce", "reduce", PT_ROLE_REDUCE },
	{ "gather", "gather", PT_ROLE_COLLECTIVE },
	{ "scatter", "scatter", PT_ROLE_COLLECTIVE },
	{ "send", "send", PT_ROLE_SENDRECV },
	{ "recv", "recv", PT_ROLE_SENDRECV },
	{ "rma", "sendrecv", PT_ROLE_SENDRECV },
	{ "put", "sendrecv", PT_ROLE_SENDRECV },
	{ "p2p", "sendrecv", PT_ROLE_SENDRECV },
	{ "quiet", "barrier", PT_ROLE_BARRIER },
	{ "fence", "barrier", PT_ROLE_BARRIER },
	{ "signal", "barrier", PT_ROLE_BARRIER },
	{ "waituntil", "barrier", PT_ROLE_BARRIER },
	{ "sync", "barrier", PT_ROLE_BARRIER },
};

const char *pt_commkind_coll_word(const char *name, size_t n, int *role)
{
	char low[256];
	size_t i, m = 0;

	/* Case-folded, '_' ' ' '-' dropped: all_reduce, AllReduce, allreduce. */
	for (i = 0; name && i < n && m < sizeof(low) - 1; i++) {
		unsigned char c = (unsigned char)name[i];
		if (c == '_' || c == ' ' || c == '-')
			continue;
		low[m++] = (char)tolower(c);
	}
	low[m] = 0;
	for (i = 0; i < sizeof(coll_words) / sizeof(coll_words[0]); i++)
		if (strstr(low, coll_words[i].w)) {
			if (role)
				*role = coll_words[i].role;
			return coll_words[i].label;
		}
	if (role)
		*role = PT_ROLE_COLLECTIVE;
	return NULL;
}

int pt_commkind_role_from_name(const char *name, size_t n)
{
	int role;

	pt_commkind_coll_word(name, n, &role);
	return role;
}

double pt_commkind_busbw_factor(const char *name, size_t n, uint32_t g)
{
	int role;
	double gd = g;

	if (!g || !pt_commkind_coll_word(name, n, &role))
		return 0;
	switch (role) {
	case PT_ROLE_ALLREDUCE:
		return 2.0 * (gd - 1) / gd;
	case PT_ROLE_REDUCESCATTER:
	case PT_ROLE_ALLGATHER:
	case PT_ROLE_ALLTOALL:
		return (gd - 1) / gd;
	case PT_ROLE_BROADCAST:
	case PT_ROLE_SENDRECV:
	case PT_ROLE_REDUCE:
		return 1;
	default:
		return 0;
	}
}

/* ---- point to point ------------------------------------------------------ */

int pt_commkind_p2p_dir(const char *name, size_t n)
{
	char sq[256];
	const char *v = name;
	size_t vn = n;

	if (!name)
		return PT_P2P_NONE;
	rule_view(&v, &vn);
	pt_commkind_squash(v, vn, sq, sizeof(sq));
	/* collectives whose name spells a send or receive are not p2p */
	if (strstr(sq, "alltoall") || strstr(sq, "allreduce") || strstr(sq, "allgather") ||
	    strstr(sq, "reducescatter") || strstr(sq, "broadcast"))
		return PT_P2P_NONE;
	if (strstr(sq, "sendrecv"))
		return PT_P2P_BOTH;
	if (strstr(sq, "send"))
		return PT_P2P_SEND;
	if (strstr(sq, "recv"))
		return PT_P2P_RECV;
	return PT_P2P_NONE;
}

/* Digits at s[*i..n) into *v (at most 9 of them); 0 when none. */
static int p2p_int(const char *s, size_t n, size_t *i, int64_t *v)
{
	size_t k = 0;

	*v = 0;
	while (*i < n && k < 9 && s[*i] >= '0' && s[*i] <= '9') {
		*v = *v * 10 + (s[(*i)++] - '0');
		k++;
	}
	return k > 0;
}

int pt_commkind_p2p_title(const char *name, size_t n, int64_t *peer)
{
	int dir;
	size_t i = 10;
	int64_t self;

	if (!name || n < 14 || memcmp(name, "nccl:", 5))
		return 0;
	if (!memcmp(name + 5, "send ", 5))
		dir = PT_P2P_SEND;
	else if (!memcmp(name + 5, "recv ", 5))
		dir = PT_P2P_RECV;
	else
		return 0;
	if (!p2p_int(name, n, &i, &self) || i + 2 > n ||
	    memcmp(name + i, dir == PT_P2P_SEND ? "->" : "<-", 2))
		return 0;
	i += 2;
	if (!p2p_int(name, n, &i, peer) || i != n)
		return 0;
	return dir;
}

const char *pt_commkind_p2p_name(int dir)
{
	return dir == PT_P2P_SEND ? "send" : dir == PT_P2P_RECV ? "recv" : NULL;
}

int pt_commkind_p2p_parse(const char *s, size_t n)
{
	if (n == 4 && !memcmp(s, "send", 4))
		return PT_P2P_SEND;
	if (n == 4 && !memcmp(s, "recv", 4))
		return PT_P2P_RECV;
	return 0;
}

/* ---- rules --------------------------------------------------------------- */

typedef struct rule {
	const char *glob;
	int role; /* pt_comm_role or ROLE_AUTO */
} rule;

/* Namespaces under which DeepEP's kernels appear (DeepEP itself, the
 * forks that kept its kernel names). */
static const char *const ep_ns[] = { "deep_ep::", "uccl::", "nccl_ep::", "mscclpp::ep::" };

/* Rules inside those namespaces ("*<ns>" is put in front); first match wins,
 * so the notify kernels come before the plain dispatch/combine ones and
 * the layout kernel (local work) before everything. */
static const rule ep_rules[] = {
	{ "*get_dispatch_layout*", PT_ROLE_NONE },
	{ "*notify_dispatch*", PT_ROLE_DISPATCH },
	{ "*notify_combine*", PT_ROLE_COMBINE },
	{ "*notify*", PT_ROLE_NOTIFY },
	{ "*dispatch*", PT_ROLE_DISPATCH },
	{ "*combine*", PT_ROLE_COMBINE },
	{ "*clean_low_latency_buffer*", PT_ROLE_BARRIER },
	{ "*barrier*", PT_ROLE_BARRIER },
};

/* Other built-in rules, in order. */
static const rule builtin[] = {
	/* NCCL, RCCL (ncclKernel_*, ncclDevKernel_*, rccl*), MSCCL, MSCCL++ */
	{ "nccl*", ROLE_AUTO },
	{ "rccl*", ROLE_AUTO },
	{ "msccl*", ROLE_AUTO },
	{ "*mscclpp::*", ROLE_AUTO },
	/* NVSHMEM device-side collectives and proxies */
	{ "nvshmem*", ROLE_AUTO },
	{ "*::nvshmem*", ROLE_AUTO },
	/* PyTorch symmetric memory (one/two-shot all-reduce, barriers) */
	{ "*c10d::symmetric_memory::*", ROLE_AUTO },
	/* custom all-reduce: vLLM, SGLang, AITER */
	{ "*cross_device_reduce_1stage*", PT_ROLE_ALLREDUCE },
	{ "*cross_device_reduce_2stage*", PT_ROLE_ALLREDUCE },
	/* vLLM quick all-reduce (ROCm) */
	{ "*quickreduce::*", PT_ROLE_ALLREDUCE },
	/* TensorRT-LLM / FlashInfer custom and fused all-reduce */
	{ "*ShotAllReduceKernel*", PT_ROLE_ALLREDUCE },
	{ "*allreduce_fusion_kernel*", PT_ROLE_ALLREDUCE },
	/* TransformerEngine userbuffers */
	{ "*userbuffers_*", ROLE_AUTO },
};

/* Namespaces that say "expert-parallel communication" by their name,
 * whoever wrote them: DeepEP's layout (intranode, internode, internode_ll)
 * kept by its forks and ports under their own outer namespaces
 * (xen_moe::internode_ll::, mori::moe::deepep::internode_ll::,
 * deep_ep::internode_ll_two_stage::, ...::intranode_ll_slave::), and the
 * ep:: / deepep:: namespaces of EP libraries.  A segment matches when it
 * starts with one of the first two words or is one of the others. */
static int ep_segment(const char *s, size_t n)
{
	return (n >= 9 && (!memcmp(s, "intranode", 9) || !memcmp(s, "internode", 9))) ||
	       (n == 2 && !memcmp(s, "ep", 2)) || (n == 6 && !memcmp(s, "deepep", 6));
}

/* The role of what follows an expert-parallel namespace (lower-cased:
 * SYCL ports name their kernels LowLatencyDispatchMergedKernel), or -1
 * when no ep_rule matches. */
static int ep_tail_role(const char *t, size_t n)
{
	char low[160];
	size_t i, m = n < sizeof(low) ? n : sizeof(low) - 1;

	for (i = 0; i < m; i++)
		low[i] = (char)tolower((unsigned char)t[i]);
	for (i = 0; i < sizeof(ep_rules) / sizeof(ep_rules[0]); i++)
		if (glob_match(ep_rules[i].glob, low, m))
			return ep_rules[i].role;
	return -1;
}

/* Structure: the first namespace segment of v[0..n) that ep_segment
 * accepts decides, by what follows it; -1 when none does. */
static int ep_by_structure(const char *v, size_t n)
{
	size_t i, seg = 0;

	for (i = 0; i + 1 < n; i++) {
		if (v[i] == '<' || v[i] == '(')
			break;  /* template arguments: not the name's namespaces */
		if (v[i] != ':' || v[i + 1] != ':')
			continue;
		if (ep_segment(v + seg, i - seg))
			return ep_tail_role(v + i + 2, n - i - 2);
		seg = i + 2;
		i++;
	}
	return -1;
}

typedef struct urule {
	char *glob;
	int role;
} urule;

static urule *user;
static size_t nuser, usercap;

void pt_commkind_reset(void)
{
	while (nuser)
		x_free(user[--nuser].glob);
	x_free(user);
	user = NULL;
	usercap = 0;
}

size_t pt_commkind_user_rules(void)
{
	return nuser;
}

static int apply(int role, const char *name, size_t n)
{
	return role == ROLE_AUTO ? pt_commkind_role_from_name(name, n) : role;
}

int pt_commkind_classify(const char *name, size_t n)
{
	const char *v = name;
	size_t vn = n, i, j;
	char pat[64];

	if (!name)
		return PT_ROLE_NONE;
	rule_view(&v, &vn);
	for (i = 0; i < nuser; i++)
		if (glob_match(user[i].glob, v, vn))
			return apply(user[i].role, v, vn);
	/* cheap filters first: most kernels are neither */
	for (i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
		if (glob_match(builtin[i].glob, v, vn))
			return apply(builtin[i].role, v, vn);
	for (j = 0; j < sizeof(ep_ns) / sizeof(ep_ns[0]); j++) {
		snprintf(pat, sizeof(pat), "*%s*", ep_ns[j]);
		if (!glob_match(pat, v, vn))
			continue;
		for (i = 0; i < sizeof(ep_rules) / sizeof(ep_rules[0]); i++) {
			/* the rule applies to what follows the namespace */
			const char *p = strstr(v, ep_ns[j]);
			size_t off;

			if (!p || (size_t)(p - v) >= vn)
				break;
			off = (size_t)(p - v) + strlen(ep_ns[j]);
			if (glob_match(ep_rules[i].glob, v + off, vn - off))
				return ep_rules[i].role;
		}
	}
	/* the same kernels under a namespace this table does not name */
	{
		int r = ep_by_structure(v, vn);
		if (r >= 0)
			return r;
	}
	return PT_ROLE_NONE;
}

static int parse_role(const char *s, size_t n)
{
	if (n == 4 && !memcmp(s, "auto", 4))
		return ROLE_AUTO;
	return pt_commkind_role_parse(s, n);
}

int pt_commkind_add_rule(const char *glob, const char *role, pt_error *err)
{
	int r;

	if (!glob || !*glob)
		return pt_error_set(err, PT_EINVAL, -1, "empty kernel name pattern");
	r = role ? parse_role(role, strlen(role)) : -1;
	if (r == -1)
		return pt_error_set(err, PT_EINVAL, -1,
				    "unknown role '%s' for '%s' (one of: auto, compute, allreduce, "
				    "allgather, reducescatter, alltoall, alltoall dispatch, alltoall "
				    "combine, alltoall notify, broadcast, reduce, sendrecv, barrier, "
				    "collective)", role ? role : "", glob);
	if (X_GROW(user, usercap, nuser + 1) || !(user[nuser].glob = x_strndup(glob, strlen(glob))))
		return pt_error_set(err, PT_ENOMEM, -1, "out of memory");
	user[nuser++].role = r;
	return PT_OK;
}

int pt_commkind_load_file(const char *path, pt_error *err)
{
	char *buf = NULL, *p, *end;
	size_t len, first = nuser, line = 0;
	int rc;

	rc = pt_file_read(path, 16u << 20, &buf, &len, err);
	if (rc) {
		pt_error_subject(err, path);
		return rc;
	}
	p = buf;
	end = buf + len;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end, *g, *ge, *r, *re;

		line++;
		for (g = p; g < le && *g != '#'; g++)
			;
		le = g; /* comment cut */
		for (g = p; g < le && isspace((unsigned char)*g); g++)
			;
		for (ge = g; ge < le && !isspace((unsigned char)*ge); ge++)
			;
		for (r = ge; r < le && isspace((unsigned char)*r); r++)
			;
		for (re = le; re > r && isspace((unsigned char)re[-1]); re--)
			;
		p = nl ? nl + 1 : end;
		if (g == ge)
			continue;
		if (r == re) {
			rc = pt_error_set(err, PT_EFORMAT, (int64_t)(g - buf),
					  "line %zu: '%.*s' has no role (expected 'GLOB ROLE')", line,
					  (int)(ge - g > 80 ? 80 : ge - g), g);
			goto fail;
		}
		*ge = 0;
		*re = 0;
		if ((rc = pt_commkind_add_rule(g, r, err))) {
			if (rc == PT_EINVAL) {
				char msg[PT_ERROR_MSG_MAX];
				snprintf(msg, sizeof(msg), "%s", err ? err->msg : "");
				rc = pt_error_set(err, PT_EFORMAT, (int64_t)(g - buf), "line %zu: %s",
						  line, msg);
			}
			goto fail;
		}
	}
	x_free(buf);
	return PT_OK;
fail:
	while (nuser > first)
		x_free(user[--nuser].glob);
	x_free(buf);
	pt_error_subject(err, path);
	return rc;
}

/* ---- memo ---------------------------------------------------------------- */

int pt_commkind_memo(pt_commkind_cache *c, uint32_t id, const char *name, size_t n)
{
	if (id >= c->cap) {
		size_t old = c->cap;
		if (X_GROW(c->role, c->cap, (size_t)id + 1))
			return -1;
		memset(c->role + old, 0, c->cap - old);
	}
	if (!c->role[id])
		c->role[id] = (int8_t)(pt_commkind_classify(name, n) + 1);
	return c->role[id] - 1;
}

void pt_commkind_cache_free(pt_commkind_cache *c)
{
	if (!c)
		return;
	x_free(c->role);
	c->role = NULL;
	c->cap = 0;
}

/* ---- waits --------------------------------------------------------------- */

/* name contains one of pat[0..n) (case-folded; the first 255 bytes). */
static int has_ci(const char *name, const char *const *pat, size_t n)
{
	char buf[256];
	size_t i;

	for (i = 0; *name && i + 1 < sizeof(buf); name++)
		buf[i++] = (char)tolower((unsigned char)*name);
	buf[i] = 0;
	for (i = 0; i < n; i++)
		if (strstr(buf, pat[i]))
			return 1;
	return 0;
}

int pt_wait_blocking_frame(const char *name)
{
	static const char *const blocking[] = {
		"synchronize", "item", "_local_scalar_dense", "wait", "c10d::", "gloo:", "nccl:",
		"record_param_comms", "barrier", "all_reduce", "allreduce", "all_gather",
		"broadcast", "aten::copy_", "_to_copy",
	};

	return has_ci(name, blocking, sizeof(blocking) / sizeof(blocking[0]));
}

int pt_wait_blocking_runtime(const char *name)
{
	static const char *const rt[] = { "synchronize", "memcpy", "query", "waitevent" };

	return has_ci(name, rt, sizeof(rt) / sizeof(rt[0]));
}

int pt_wait_idle_frame(const char *leaf)
{
	static const char *const waits[] = {
		"threading.py: wait", "threading.py: _wait_for_tstate_lock", "threading.py: join",
		"queue.py: get", "selectors.py: select", "time.sleep", "<built-in function sleep>",
		"<built-in method acquire of _thread.lock object at 0x>",
		"<built-in method acquire of _thread.RLock object at 0x>",
	};
	size_t i, n = strlen(leaf), m;

	for (i = 0; i < sizeof(waits) / sizeof(waits[0]); i++) {
		m = strlen(waits[i]);
		if (n >= m && !strcmp(leaf + n - m, waits[i]))
			return 1;
	}
	return 0;
}

int pt_commkind_is_gloo_op(const char *name, size_t n)
{
	return name && n > 5 && !memcmp(name, "gloo:", 5);
}

static int starts(const char *s, size_t n, const char *pre)
{
	size_t l = strlen(pre);

	return n >= l && !memcmp(s, pre, l);
}

int pt_commkind_is_cpu_op(const char *name, size_t n)
{
	return name && (starts(name, n, "gloo:") || starts(name, n, "c10d::") ||
			starts(name, n, "nccl:") ||
			(n == 18 && !memcmp(name, "record_param_comms", 18)));
}

int pt_commkind_is_nccl_kernel(const char *key)
{
	const char *k = key && !strncmp(key, "void ", 5) ? key + 5 : key;

	return k && (!strncmp(k, "nccl", 4) || !strncmp(k, "rccl", 4));
}

void pt_commkind_squash(const char *name, size_t n, char *out, size_t cap)
{
	size_t i, j = 0;

	if (!cap)
		return;
	for (i = 0; i < n && j + 1 < cap; i++)
		if (name[i] != '_' && name[i] != ' ')
			out[j++] = (char)tolower((unsigned char)name[i]);
	out[j] = 0;
}

int pt_commkind_names_nccl(const char *name, size_t n)
{
	char sq[512];

	pt_commkind_squash(name, n, sq, sizeof(sq));
	return strstr(sq, "nccl") || strstr(sq, "rccl");
}

const char *pt_commkind_backend(const char *name, size_t n)
{
	static const char *const be[] = { "gloo", "nccl", "mpi", "ucc" };
	char sq[512];
	size_t i;

	pt_commkind_squash(name, n, sq, sizeof(sq));
	for (i = 0; i < sizeof(be) / sizeof(be[0]); i++)
		if (strstr(sq, be[i]))
			return be[i];
	return "cpu";
}

static const char *const chan_kinds[] = { "nccl", "gloo", "cpu" };

char *pt_commkind_chan_name(int kind, size_t i, char *out, size_t cap)
{
	snprintf(out, cap, "%s:%zu", chan_kinds[kind >= PT_CHAN_GPU && kind <= PT_CHAN_CPU ? kind : PT_CHAN_CPU], i);
	return out;
}

int pt_commkind_chan_parse(const char *chan, long *index)
{
	const char *c = strchr(chan, ':');
	int k;

	if (index)
		*index = c ? strtol(c + 1, NULL, 10) : 0;
	for (k = PT_CHAN_GPU; k < PT_CHAN_CPU; k++)
		if (c && (size_t)(c - chan) == strlen(chan_kinds[k]) &&
		    !memcmp(chan, chan_kinds[k], (size_t)(c - chan)))
			return k;
	return PT_CHAN_CPU;
}
