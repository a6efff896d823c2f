"""Writes tests/data/fr_pickle/nccl_like_p4.pkl: a Flight Recorder dump in
the shape torch's NCCL one has (time_discovered_started_ns and _completed_ns
set, duration_ms a float, a p2p entry, a None), pickled by Python's own
pickler at protocol 4 (FRAME, SHORT_BINUNICODE, MEMOIZE), so that the C
reader (src/model/frpickle.c) is tested on both picklers.  The gloo dump
beside it (gloo2_rank0.pkl) is a real one, from torch 2.15's
_dump_fr_trace on a 2-rank gloo job."""
import os
import pickle

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "fr_pickle",
                   "nccl_like_p4.pkl")
BASE = 1796485796000000000


def entry(rid, pg, desc, seq, name, p2p=False, started=True, done=True):
    t = BASE + rid * 1000000
    return {"record_id": rid, "pg_id": int(pg), "process_group": (pg, desc),
            "collective_seq_id": 0 if p2p else seq, "p2p_seq_id": seq if p2p else 0,
            "op_id": rid, "profiling_name": name, "time_created_ns": t,
            "duration_ms": 1.25, "input_sizes": [[1024]], "input_dtypes": ["Float"],
            "output_sizes": [[1024]], "output_dtypes": ["Float"],
            "state": "completed" if done else ("started" if started else "scheduled"),
            "time_discovered_started_ns": t + 500000 if started else None,
            "time_discovered_completed_ns": t + 750000 if done else None,
            "retired": done, "timeout_ms": 600000, "is_p2p": p2p}


d = {"version": "2.10", "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1]"}},
     "pg_status": {"0": {"last_enqueued_collective": 3, "last_started_collective": 3,
                         "last_completed_collective": 2}},
     "entries": [entry(0, "0", "default_pg", 1, "nccl:all_reduce"),
                 entry(1, "0", "default_pg", 1, "nccl:send 0->1", p2p=True),
                 entry(2, "0", "default_pg", 2, "nccl:all_reduce"),
                 entry(3, "0", "default_pg", 3, "nccl:reduce_scatter", done=False)]}
with open(OUT, "wb") as f:
    pickle.dump(d, f, protocol=4)
