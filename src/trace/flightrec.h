/*
 * flightrec.h - the trace's "perftracker" member (docs/input.md): what the
 * collector adds to a raw trace, the torch version and torch's Flight
 * Recorder entries for the window, and their mapping to the gloo ops of the
 * trace, which carry no process group or sequence number of their own.
 *
 * Flow: kineto.c header --pt_fr_read--> store->torch, store->fr;
 *       kineto.c finish --pt_fr_map--> store->collids (+ bytes, group) of
 *       the gloo:* ops --> src/analysis/collectives.c.  Internal.
 */
#ifndef PT_FLIGHTREC_H
#define PT_FLIGHTREC_H

#include "../model/store.h"
#include "../util/json.h"

/* At most this many Flight Recorder entries are kept (torch's buffer is
 * TORCH_FR_BUFFER_SIZE, 2000 in the collector). */
#define PT_FR_MAX 1000000

/* Read the "perftracker" member's value j into st: "torch" and the entries
 * of "collectives" ("ts" in µs on the events' time base, kept in ns
 * without the base).  Entries that lack a field are skipped with a
 * warning.  PT_OK or PT_ENOMEM. */
int pt_fr_read(pt_store *st, const pt_json *j);
/* Give the gloo:* ops of st (after the base time is added) the (pg, seq)
 * and bytes of their Flight Recorder entries (per process group, FIFO: see
 * flightrec.c); keeps st->collids sorted by event.  PT_OK or PT_ENOMEM. */
int pt_fr_map(pt_store *st);
/* Bytes of one element of a dtype as torch names it ("float", "Float",
 * "c10::BFloat16", "int64"), 0 unknown (kineto.c). */
unsigned pt_kineto_dtype_size(const char *s, size_t n);

#endif
