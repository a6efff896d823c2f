#!/usr/bin/env python3
"""Plant exposed communication in a real Kineto trace.

    plant_exposed_comm.py IN OUT --name SUBSTR --add-ms MS [--rename NEW]

Every GPU kernel whose name contains SUBSTR (e.g. ncclKernel_AllReduce) is
made MS ms longer, and the time it gains is inserted into the whole trace at
the kernel's original end: every event (CPU or GPU) that starts at or after
that instant moves MS later, and a CPU span around it (the ProfilerStep, the
annotation, the op that waits) grows by MS.  Kernels, copies and memsets on
other streams that span the instant keep their times, so during the inserted
time only the stretched collective runs on the GPU: the step waits for it, as
when an all-reduce is not overlapped with compute.  --rename gives the
stretched kernels another name (an RCCL spelling, say).  IN and OUT are JSON,
gzip when the name ends in .gz.  Stdlib only; deterministic.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plant_compare import load, save  # noqa: E402

GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset"}


def plant(d, name, add_us, rename):
    ev = d["traceEvents"] if isinstance(d, dict) else d
    targets = [e for e in ev if e.get("ph") == "X" and e.get("cat") in GPU_CATS
               and name in e.get("name", "")]
    # insert from the latest instant down: an insertion moves only what
    # lies after it, so the earlier ones still see their original times
    points = sorted((e["ts"] + e["dur"], id(e)) for e in targets)
    target_ids = {id(e) for e in targets}
    for t, tid in reversed(points):
        for e in ev:
            ts = e.get("ts")
            if ts is None:
                continue
            if id(e) == tid:
                e["dur"] += add_us
            elif ts >= t:
                e["ts"] = ts + add_us
            elif e.get("ph") == "X" and ts + e.get("dur", 0) > t and \
                    e.get("cat") not in GPU_CATS:
                e["dur"] += add_us
    if rename:
        for e in ev:
            if id(e) in target_ids:
                e["name"] = rename
    return len(targets)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("inp")
    ap.add_argument("out")
    ap.add_argument("--name", required=True)
    ap.add_argument("--add-ms", type=float, required=True)
    ap.add_argument("--rename")
    a = ap.parse_args()
    d = load(a.inp)
    n = plant(d, a.name, a.add_ms * 1000.0, a.rename)
    if not n:
        raise SystemExit("plant_exposed_comm: no GPU kernel named *%s* in %s" % (a.name, a.inp))
    save(d, a.out)
    print("%s: %d kernels %+g ms each" % (a.out, n, a.add_ms))


if __name__ == "__main__":
    main()
