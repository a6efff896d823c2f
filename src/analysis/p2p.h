/*
 * p2p.h - one worker's point-to-point transfers per peer (docs/summary.md
 * "p2p"): how many sends to and receives from each peer, their bytes and
 * their time, for the master's pair matrix (src/diagnose/p2p.c).
 *
 * Flow: pt_store (its pt_peer records, the reader's) --pt_p2p_build-->
 *       pt_summary "p2p" --pt_p2p_write / pt_p2p_parse--> the master.
 * Internal (not installed).  Thread-safe for distinct summaries.
 */
#ifndef PT_P2P_H
#define PT_P2P_H

#include <stddef.h>

#include "analysis.h"
#include "summary.h"
#include "../util/error.h"

/* Rows kept per summary, at most (one per peer and direction). */
#define PT_P2P_MAX 65536

/* Fill s->p2p from st's p2p transfers that start in w: a NCCL send/recv
 * kernel (its peer from its own args, else from the op that launched it,
 * by correlation id: the innermost CPU op with a peer around the launch),
 * or a gloo send/recv (its peer from the c10d op around its start).  A
 * CPU op with a peer but no such transfer (NCCL's enqueue-only
 * annotations) adds nothing.  PT_OK or PT_ENOMEM. */
int pt_p2p_build(const pt_store *st, const pt_window *w, pt_summary *s);

/* The value of the "p2p" member (an array of rows). */
void pt_p2p_write(const pt_summary *s, pt_sb *out);
/* Parse the "p2p" value buf[0..len) into s (which holds no rows yet).
 * PT_OK, or PT_EFORMAT/PT_EPARSE/PT_ENOMEM with err filled (offset
 * relative to buf). */
int pt_p2p_parse(const char *buf, size_t len, pt_summary *s, pt_error *err);
/* Free and clear s's rows (NULL-safe). */
void pt_p2p_free(pt_summary *s);

#endif
