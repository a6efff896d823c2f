/*
 * store.h - the per-worker event store: what one worker ran, as compact
 * fixed-size events plus the trace's metadata.
 *
 * Flow: a reader in src/trace fills a pt_store from one raw trace; the
 * analysis in src/analysis reads it and produces a pt_summary; the store is
 * then freed.  Only complete (duration) events are stored; flows, counters,
 * instants and metadata are consumed by the reader.  Not thread-safe: one
 * store per worker, different stores may be used from different threads.
 */
#ifndef PT_STORE_H
#define PT_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "strtab.h"
#include "../util/api.h"

PT_API_BEGIN

/* What an event is.  The class used for attribution follows from the kind
 * (pt_kind_class) and is what docs/design.md's priority rule orders. */
typedef enum {
	PT_K_KERNEL = 0,      /* GPU compute kernel */
	PT_K_COMM_KERNEL,     /* NCCL/RCCL kernel */
	PT_K_MEMCPY,          /* gpu_memcpy / Memcpy */
	PT_K_MEMSET,          /* gpu_memset / Memset */
	PT_K_RUNTIME,         /* cuda_runtime / Runtime / hip* runtime */
	PT_K_DRIVER,          /* cuda_driver (cuLaunchKernel ...) */
	PT_K_CPU_COMM,        /* gloo:*, c10d::*, nccl:*, record_param_comms on the CPU */
	PT_K_CPU_OP,          /* cpu_op / Operator (aten::...) */
	PT_K_PYTHON,          /* python_function */
	PT_K_ANNOTATION,      /* user_annotation other than steps */
	PT_K_STEP,            /* ProfilerStep#N */
	PT_K_GPU_ANNOTATION,  /* gpu_user_annotation (not attributed) */
	PT_K_COUNT
} pt_kind;

/* Attribution classes, in increasing priority (docs/design.md "Classes and priority"). */
typedef enum {
	PT_C_IDLE = 0,
	PT_C_PYTHON,   /* Python/CPU function: deepest active frame on its thread */
	PT_C_RUNTIME,  /* CUDA runtime / driver call */
	PT_C_MEMORY,   /* GPU memcpy/memset */
	PT_C_COMM,     /* communication: NCCL kernels, CPU collectives */
	PT_C_COMPUTE,  /* GPU compute kernel */
	PT_C_COUNT,
	PT_C_NONE = 255 /* not attributed (steps, GPU annotations) */
} pt_class;

/* Class of a kind; PT_C_NONE for steps and GPU annotations.  CPU_OP,
 * PYTHON and ANNOTATION are frames of the Python/CPU class; CPU_COMM is a
 * communication item that is also a frame on its thread. */
int pt_kind_class(int kind);
const char *pt_kind_name(int kind);

/* Nesting order of CPU events that start together and last equally long:
 * the likelier caller first (a step wraps annotations, an annotation wraps
 * Python, Python calls ops, an op may be a collective's wrapper), every
 * other kind after them.  The frames' nesting (src/analysis/patterns.c) and
 * the critical path's thread order (src/analysis/critpath.c) share it. */
int pt_kind_nest_rank(int kind);
const char *pt_class_name(int cls);

#define PT_EV_GPU 0x01       /* lane is a GPU stream */
#define PT_EV_CLIPPED 0x02   /* duration was clamped by the reader */

typedef struct pt_event {
	int64_t ts;       /* start, absolute ns (epoch or trace clock) */
	int64_t dur;      /* duration in ns, >= 0 */
	uint64_t bytes;   /* memcpy/memset bytes; collectives: message bytes; 0 unknown */
	uint32_t name;    /* strtab id of the function name; kernels: name+grid|block */
	uint32_t lane;    /* index into store->lanes */
	union {
		uint32_t stack; /* CPU frames: strtab id of an old-style "Call stack" arg, 0 none */
		uint32_t corr;  /* runtime/driver calls and GPU events: correlation id (launch ->
		                   GPU event; low 32 bits), 0 none */
	};
	uint16_t group;   /* collective group size, 0 unknown */
	uint8_t kind;     /* pt_kind */
	uint8_t flags;    /* PT_EV_* */
} pt_event;

/* A lane is one CPU thread (pid, tid) or one GPU stream (device, stream). */
typedef struct pt_lane {
	int64_t pid, tid;
	uint32_t name;    /* strtab id of thread_name metadata, 0 unknown */
	uint8_t gpu;
} pt_lane;

typedef struct pt_step {
	int64_t number;   /* N of ProfilerStep#N */
	int64_t ts, dur;  /* ns */
} pt_step;

/* Launch efficiency of one kernel event, as Kineto records it in the
 * event's args ("est. achieved occupancy %", "blocks per SM", "registers
 * per thread", "shared memory"); negative = not recorded. */
typedef struct pt_kinfo {
	uint32_t ev;        /* index into store->ev */
	float occupancy;    /* percent */
	float blocks_per_sm;
	int32_t registers;  /* per thread */
	int32_t shared_mem; /* bytes per block */
} pt_kinfo;

/* A CUDA synchronisation as newer Kineto records it (category "cuda_sync"):
 * which call (by correlation id) waited for which stream.  The critical
 * path (src/analysis/critpath.c) uses it to pick the stream a blocking call
 * or a stream-wait waited for; traces without it fall back on rules. */
enum { PT_SYNC_STREAM_WAIT = 1, PT_SYNC_EVENT, PT_SYNC_STREAM, PT_SYNC_CONTEXT };

typedef struct pt_sync {
	int64_t ts;       /* ns */
	uint32_t corr;    /* the runtime call's correlation id (low 32 bits) */
	uint32_t lane;    /* the stream waited for (a GPU lane), UINT32_MAX: any */
	uint32_t wlane;   /* PT_SYNC_STREAM_WAIT: the stream that waits, else UINT32_MAX */
	uint8_t kind;     /* PT_SYNC_* */
} pt_sync;

/* A collective's process group and sequence number, as torch records them
 * (the "Process Group Name" and "Seq" args of record_param_comms and NCCL
 * kernels), or as the Flight Recorder gives them for a gloo op
 * (src/trace/flightrec.c): matched across workers by (pg, seq)
 * (docs/design.md "Lockstep"). */
typedef struct pt_collid {
	uint32_t ev;      /* index into store->ev */
	uint32_t pg;      /* strtab id of the process group's name, 0 unknown */
	int64_t seq;      /* -1 unknown */
} pt_collid;

/* One Flight Recorder entry of the trace's "perftracker" member
 * (docs/input.md): a collective the process created in the window. */
typedef struct pt_frent {
	int64_t ts;       /* creation, ns on the events' clock */
	int64_t seq;      /* collective_seq_id of its process group */
	uint64_t bytes;   /* message bytes (larger side), 0 unknown */
	uint32_t pg, name; /* strtab ids: process group name, op ("gloo:all_reduce") */
	uint16_t group;   /* group size, 0 unknown */
	uint8_t p2p;
	uint8_t dflt;     /* the default group ("pg_desc" "default_pg"): world_size ranks */
} pt_frent;

/* A point-to-point op's peer (src/analysis/p2p.c): the other end of a
 * send or receive, as torch records it ("Dst Rank"/"Src Rank" of
 * record_param_comms or a NCCL kernel, the "nccl:send 0->1" title, the
 * peer argument of c10d::send/recv_ in "Concrete Inputs"). */
typedef struct pt_peer {
	uint32_t ev;      /* index into store->ev */
	int32_t peer;     /* rank as recorded (global for Dst/Src Rank, else group) */
	uint8_t dir;      /* PT_P2P_SEND or PT_P2P_RECV (model/commkind.h) */
} pt_peer;

typedef struct pt_store {
	pt_strtab *strs;
	pt_event *ev;
	size_t n, cap;
	pt_lane *lanes;
	size_t nlanes, lanecap;
	pt_step *steps;
	size_t nsteps, stepcap;
	pt_kinfo *kinfo;        /* kernels with launch efficiency, by ev ascending */
	size_t nkinfo, kinfocap;
	pt_sync *syncs;         /* in file order */
	size_t nsyncs, synccap;
	pt_collid *collids;     /* collectives with a process group or seq, by ev ascending */
	size_t ncollids, collidcap;
	pt_frent *fr;           /* Flight Recorder entries, in file order */
	size_t nfr, frcap;
	pt_peer *peers;         /* p2p ops' peers, by ev ascending */
	size_t npeers, peercap;

	/* Metadata from the trace header; -1 / 0 when absent. */
	int64_t rank, world_size;
	uint32_t backend;       /* strtab id ("nccl", "gloo"), 0 unknown */
	uint32_t device_name;   /* strtab id of deviceProperties[0].name, 0 none */
	int ndevices;
	int64_t base_ns;        /* baseTimeNanoseconds, 0 if absent */
	uint32_t torch;         /* strtab id of the torch version ("perftracker" member), 0 unknown */

	/* Set before reading (Kineto JSON): keep only the events of process
	 * keep_pid, for a trace that merges several workers, one process each
	 * (PerfDisplay/timeline.json.gz, `summarize --pid`). */
	int keep_pid_set;
	int64_t keep_pid;
	/* Reader diagnostics. */
	int truncated;          /* input ended early: analysed up to the cut */
	uint64_t nwarnings;     /* events skipped or repaired */
	char warning[512];      /* first warning, "" if none */
	uint64_t bytes_read;    /* uncompressed JSON bytes consumed */
} pt_store;

/* Initialise an empty store; returns PT_OK or PT_ENOMEM. */
int pt_store_init(pt_store *s);
/* Free everything the store owns (NULL and a zeroed store are no-ops). */
void pt_store_free(pt_store *s);

/* Append a copy of e; returns PT_OK or PT_ENOMEM. */
int pt_store_add(pt_store *s, const pt_event *e);
/* Lane index for (pid, tid, gpu), creating it if needed; UINT32_MAX on
 * allocation failure.  Linear in lanes only on a miss of the last hit. */
uint32_t pt_store_lane(pt_store *s, int64_t pid, int64_t tid, int gpu);
int pt_store_add_step(pt_store *s, int64_t number, int64_t ts, int64_t dur);
/* Append the launch efficiency of event k->ev (the last one added). */
int pt_store_add_kinfo(pt_store *s, const pt_kinfo *k);
/* Append a synchronisation record; PT_OK or PT_ENOMEM. */
int pt_store_add_sync(pt_store *s, const pt_sync *y);
/* Append the events, lanes, steps, launch records and synchronisations
 * of src to dst, with the (pg, seq) of its collectives and its torch
 * version, strings re-interned into dst's table, times minus
 * shift_ns; an event that ends before keep_from or starts after keep_to
 * (ns, before the shift) is left out, one that crosses them is clipped
 * (PT_EV_CLIPPED).  dst takes src's header (rank, backend, ...) when it
 * has none yet; warnings and truncation add up.  One worker's files,
 * torch's profiling cycles, become one store this way
 * (src/diagnose/wfiles.c).  PT_OK or PT_ENOMEM (dst then half filled). */
int pt_store_append(pt_store *dst, const pt_store *src, int64_t shift_ns, int64_t keep_from,
		    int64_t keep_to);
/* Append a collective's (pg, seq), or a Flight Recorder entry; PT_OK or
 * PT_ENOMEM. */
int pt_store_add_collid(pt_store *s, const pt_collid *c);
int pt_store_add_fr(pt_store *s, const pt_frent *f);
/* Append a p2p op's peer (ev ascending); PT_OK or PT_ENOMEM. */
int pt_store_add_peer(pt_store *s, const pt_peer *p);
/* The (pg, seq) of event ev, NULL when none (binary search). */
const pt_collid *pt_store_collid(const pt_store *s, uint32_t ev);
/* Record a warning: counted, and the first message is kept. */
void pt_store_warn(pt_store *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

PT_API_END

#endif
