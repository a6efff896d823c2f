/*
 * commkind.h - the one table that says which GPU kernels are communication
 * and what role they play (allreduce, alltoall dispatch, ...): NCCL, RCCL,
 * MSCCL, MSCCL++, DeepEP (intranode, internode, low-latency; their
 * namespaces differ between releases and forks), NVSHMEM, PyTorch
 * symmetric memory, and the custom all-reduce kernels of vLLM, SGLang,
 * AITER and TensorRT-LLM.  Users add rules without rebuilding
 * (pt_commkind_load_file: `--comm-kernels FILE`, PERFTRACKER_COMM_KERNELS).
 *
 * Flow: the trace readers (src/trace/kineto.c, nsys.c) ask "is this kernel
 * communication?" per distinct name (pt_commkind_cache); patterns.c gives
 * each communication pattern its role; src/diagnose/comm.c groups the
 * Communication section by role.  docs/summary.md lists the table.  Every
 * name test on collectives (CPU ops, NCCL/RCCL kernels, backends, lockstep's
 * channels) is here; no other file classifies a collective by its name.
 */
#ifndef PT_COMMKIND_H
#define PT_COMMKIND_H

#include <stddef.h>
#include <stdint.h>

#include "../util/error.h"

/* Roles.  PT_ROLE_NONE: not communication (a compute kernel). */
typedef enum {
	PT_ROLE_NONE = 0,
	PT_ROLE_ALLREDUCE,
	PT_ROLE_ALLGATHER,
	PT_ROLE_REDUCESCATTER,
	PT_ROLE_ALLTOALL,
	PT_ROLE_DISPATCH,      /* "alltoall dispatch": MoE tokens to their experts */
	PT_ROLE_COMBINE,       /* "alltoall combine": expert outputs back */
	PT_ROLE_NOTIFY,        /* "alltoall notify": sizes/layout exchange before either */
	PT_ROLE_BROADCAST,
	PT_ROLE_REDUCE,
	PT_ROLE_SENDRECV,      /* point to point, one-sided put/get */
	PT_ROLE_BARRIER,       /* barriers, signals, buffer clean with a barrier */
	PT_ROLE_COLLECTIVE,    /* communication, collective not named */
	PT_ROLE_COUNT
} pt_comm_role;

/* "allreduce", "alltoall dispatch", ...; "compute" for PT_ROLE_NONE;
 * "collective" for an out-of-range value. */
const char *pt_commkind_role_name(int role);
/* Role of a name as pt_commkind_role_name writes it (or "compute"); -1
 * when unknown.  s need not be NUL-terminated. */
int pt_commkind_role_parse(const char *s, size_t n);

/* The role of a kernel named name[0..n) (demangled, "void " prefix or not,
 * launch shape or not): the first matching rule, the user's rules before
 * the built-in ones; PT_ROLE_NONE when none matches.  A rule whose role is
 * "auto" takes the collective named in the kernel name (allreduce,
 * all_gather, ReduceScatter, ... ; PT_ROLE_COLLECTIVE when none).  Cost:
 * a few globs over the name; readers call it once per distinct name through
 * pt_commkind_cache.  Thread-safe while no rules are being added. */
int pt_commkind_classify(const char *name, size_t n);

/* A gloo collective as gloo's worker thread runs it ("gloo:<op>", the
 * instance lockstep matches; the training thread's "c10d::<op>" only
 * enqueues it).  Thread-safe. */
int pt_commkind_is_gloo_op(const char *name, size_t n);

/* A CPU-side collective as the profiler names it: gloo's worker-thread op
 * ("gloo:<op>"), the training thread's c10d op ("c10d::<op>"), a NCCL
 * process group's CPU op ("nccl:<op>") or record_param_comms.  The readers
 * give such events the CPU-collective kind.  Thread-safe. */
int pt_commkind_is_cpu_op(const char *name, size_t n);

/* Is a kernel key NCCL's or RCCL's own ("nccl..." or "rccl...", after an
 * optional "void ")?  Other communication kernels are grouped by role. */
int pt_commkind_is_nccl_kernel(const char *key);

/* name[0..n) case-folded with '_' and ' ' dropped, into out (cap bytes,
 * NUL-terminated, cut when short): the form the backend and algorithm
 * words are looked for in. */
void pt_commkind_squash(const char *name, size_t n, char *out, size_t cap);

/* Does name[0..n) (squashed, its first 511 bytes) spell "nccl" or "rccl"? */
int pt_commkind_names_nccl(const char *name, size_t n);

/* The backend name[0..n) (squashed, its first 511 bytes) spells, as the
 * Communication groups write it: "gloo", "nccl", "mpi", "ucc" (the first
 * found in that order), else "cpu".  Static strings. */
const char *pt_commkind_backend(const char *name, size_t n);

/* Lockstep's collective channels, "<kind>:<index>": a GPU stream of
 * collectives ("nccl"), gloo's worker threads ("gloo"), other CPU
 * collectives ("cpu"). */
enum { PT_CHAN_GPU, PT_CHAN_GLOO, PT_CHAN_CPU };
/* Write channel index i of kind (PT_CHAN_*) into out; returns out. */
char *pt_commkind_chan_name(int kind, size_t i, char *out, size_t cap);
/* The kind of a channel name (PT_CHAN_CPU when it is none of them) and its
 * index in *index (0 when it has none; index may be NULL). */
int pt_commkind_chan_parse(const char *chan, long *index);

/* The collective named in a CPU collective's or kernel's name (auto rule),
 * PT_ROLE_COLLECTIVE when none. */
int pt_commkind_role_from_name(const char *name, size_t n);

/* The one vocabulary of collective words, which every reader and section
 * uses (lockstep's matching, the Communication groups, the hardware join's
 * algorithm, bus bandwidth): the first collective word in name[0..n)
 * (case-folded, '_' ' ' '-' dropped), as reports spell its group
 * ("allreduce", "send", "gather", "broadcast" for "bcast", "barrier" for
 * "fence"), and its role in *role (NULL: not wanted).  NULL, role
 * PT_ROLE_COLLECTIVE, when the name spells none.  Static strings. */
const char *pt_commkind_coll_word(const char *name, size_t n, int *role);

/* Point to point (docs/summary.md "p2p"): which way a CPU op or kernel
 * named name[0..n) moves data.  PT_P2P_SEND for a send ("c10d::send",
 * "gloo:send", "nccl:send 0->1", record_param_comms' "send", isend),
 * PT_P2P_RECV for a receive ("c10d::recv_", "gloo:recv", "nccl:recv 1<-0",
 * irecv, recv_any_source), PT_P2P_BOTH for a kernel that does both
 * (ncclKernel_SendRecv, ncclDevKernel_SendRecv), 0 for anything else
 * (sendrecv inside an all-to-all's name is not point to point: the caller
 * knows the op).  Thread-safe. */
enum { PT_P2P_NONE = 0, PT_P2P_SEND = 1, PT_P2P_RECV = 2, PT_P2P_BOTH = 3 };
int pt_commkind_p2p_dir(const char *name, size_t n);
/* A NCCL process group's p2p op title, as ProcessGroupNCCL names it
 * ("nccl:send <rank>-><peer>", "nccl:recv <rank><-<peer>"; group ranks):
 * its direction (PT_P2P_SEND or PT_P2P_RECV) and the peer in *peer; 0 when
 * name[0..n) is not one. */
int pt_commkind_p2p_title(const char *name, size_t n, int64_t *peer);
/* "send" / "recv" for PT_P2P_SEND / PT_P2P_RECV, else NULL; and back (0
 * when s[0..n) is neither). */
const char *pt_commkind_p2p_name(int dir);
int pt_commkind_p2p_parse(const char *s, size_t n);

/* Bus bandwidth over algorithm bandwidth for a collective named
 * name[0..n) among g ranks (NCCL's factors: 2(g-1)/g for all-reduce,
 * (g-1)/g for reduce-scatter, all-gather and all-to-all, 1 for broadcast,
 * reduce and point to point); 0 for others or g == 0. */
double pt_commkind_busbw_factor(const char *name, size_t n, uint32_t g);

/* Add one user rule: glob ('*' any run, '?' one character, matched against
 * the whole name, case-sensitive) and role (a role name, "auto", or
 * "compute" to keep matching kernels out of communication).  User rules
 * are tried in the order added, before the built-in table.  Not
 * thread-safe: add rules before any reader runs.  PT_OK, PT_EINVAL (bad
 * role, empty glob) or PT_ENOMEM, err filled. */
int pt_commkind_add_rule(const char *glob, const char *role, pt_error *err);
/* Add the rules of a file: one per line, "GLOB ROLE..." (the glob is the
 * first blank-separated word, the rest of the line the role), '#' starts a
 * comment, blank lines are skipped.  All or nothing: on error (PT_EIO,
 * PT_EFORMAT naming the line, PT_ENOMEM) no rule of the file is kept. */
int pt_commkind_load_file(const char *path, pt_error *err);
/* Forget every user rule (tests). */
void pt_commkind_reset(void);
/* Number of user rules. */
size_t pt_commkind_user_rules(void);

/* A per-reader memo of classify results by an id the caller gives each
 * distinct name (a string-table id: the names of one trace repeat
 * thousands of times, and the reader interns them anyway, so a lookup is
 * one array load).  Zero it before first use; not thread-safe. */
typedef struct pt_commkind_cache {
	int8_t *role;   /* role + 1 by id, 0 not classified yet */
	size_t cap;
} pt_commkind_cache;

/* pt_commkind_classify(name, n) for the name with this id, memoised; -1
 * only when out of memory. */
int pt_commkind_memo(pt_commkind_cache *c, uint32_t id, const char *name, size_t n);
/* Free the memo (a zeroed one is a no-op). */
void pt_commkind_cache_free(pt_commkind_cache *c);

/* ---- waits ------------------------------------------------------------
 * The other half of the vocabulary: host frames and calls that wait rather
 * than work.  lockstep_blame.c asks which findings waiting for a peer can make;
 * compare.c leaves idle threads out.  name need not be a whole key: the
 * callers pass a stack's innermost frame. */

/* Does this host frame block on the GPU or on a collective (a sync,
 * .item(), a wait, a CPU collective, a copy to the host)?  Case-folded
 * substrings. */
int pt_wait_blocking_frame(const char *name);
/* Is this runtime call one that waits for the GPU (a synchronisation, a
 * copy, a query, an event wait)?  Case-folded substrings. */
int pt_wait_blocking_runtime(const char *name);
/* Is this innermost frame a thread idle in a wait (a monitor thread's
 * Condition.wait, a sleep, a queue get, a lock)?  Such a thread "runs" as
 * long as the step lasts.  Suffixes of the frame. */
int pt_wait_idle_frame(const char *leaf);

#endif
