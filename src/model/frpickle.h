/*
 * frpickle.h - torch's Flight Recorder dump read in C (issue 32, the
 * always-on watch; docs/watch.md).  torch hands its ring buffer of
 * collectives out as a pickle (torch._C._distributed_c10d._dump_fr_trace,
 * _dump_nccl_trace); unpickling it in Python costs about as long as the
 * dump itself (12 ms for 2000 entries, measured) with the GIL held, so the
 * collector's watch thread copies the bytes and reads them here, without
 * the GIL.  Only the opcodes torch's pickler emits (protocol 2: dicts,
 * lists, tuples, str, int, float, bool, None, memo); anything else is a
 * clean error.  Never reads past len; sizes checked before allocating.
 * Thread-safe (no shared state); never prints.
 */
#ifndef PT_FRPICKLE_H
#define PT_FRPICKLE_H

#include <stddef.h>
#include <stdint.h>

#include "../util/error.h"

/* One collective instance of the ring buffer (strings truncated to fit). */
typedef struct pt_fr_entry {
	int64_t record_id;
	char pg[48];           /* process_group[0]: the group's name */
	char desc[48];         /* process_group[1], e.g. "default_pg" */
	char name[48];         /* profiling_name, e.g. "gloo:all_reduce" */
	int64_t seq;           /* collective_seq_id (p2p_seq_id when p2p) */
	int p2p;               /* is_p2p */
	int64_t created_ns;    /* time_created_ns, CLOCK_REALTIME; -1 none */
	int64_t started_ns;    /* time_discovered_started_ns; -1 None */
	int64_t done_ns;       /* time_discovered_completed_ns; -1 None */
	char state[16];        /* "scheduled", "started", "completed" */
} pt_fr_entry;

/* Read a dump's "entries" into *out (a new array, x_free; NULL and 0 when
 * none).  Entries without a process group or a creation time are
 * skipped.  PT_EPARSE (a malformed pickle or an unknown opcode, offset
 * set), PT_EFORMAT (no dict with "entries" at the top), PT_ENOMEM; err
 * filled. */
int pt_frpickle_entries(const void *buf, size_t len, pt_fr_entry **out, size_t *n,
			pt_error *err);

#endif
