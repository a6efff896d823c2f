#!/usr/bin/env python3
"""dlrm_reference.py - independent reference numbers for the analysis tests.

For each Kineto trace given, computes with the standard library only (no
PerfTracker code) the analysis window (ProfilerStep#N spans), the time with
at least one GPU kernel running inside it (union of `cat == "kernel"`
intervals clipped to the window) and the number of kernels overlapping the
window, split into NCCL/RCCL kernels and the others.  Times are integer
nanoseconds (the traces hold integer microseconds), so the C tests can
assert gpu_util = busy_ns / window_ns exactly.

Output, one line per trace:  <file name> <window_ns> <busy_ns> <kernels> <nccl_kernels>
Used by tests/unit/test_summary.c (reads tests/tools/dlrm_reference.txt) and
tests/cli/test_summarize.sh (checks that file is this script's output).
"""
import gzip
import json
import os
import sys
from decimal import Decimal


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        d = json.load(f, parse_float=Decimal)
    return d["traceEvents"] if isinstance(d, dict) else d


def ns(v):
    return int(Decimal(v) * 1000)


def reference(path):
    events = [e for e in load(path) if e.get("ph") == "X" and "ts" in e]
    steps = [e for e in events if str(e.get("name", "")).startswith("ProfilerStep#")
             and e.get("cat") != "gpu_user_annotation"]
    if steps:
        lo = min(ns(e["ts"]) for e in steps)
        hi = max(ns(e["ts"]) + ns(e.get("dur", 0)) for e in steps)
    else:
        lo = min(ns(e["ts"]) for e in events)
        hi = max(ns(e["ts"]) + ns(e.get("dur", 0)) for e in events)
    spans = []
    kernels = nccl = 0
    for e in events:
        if e.get("cat") != "kernel":
            continue
        s, t = ns(e["ts"]), ns(e["ts"]) + ns(e.get("dur", 0))
        if not (s < hi and t > lo):
            continue
        name = str(e.get("name", ""))
        if name.startswith("void "):
            name = name[5:]
        if name.startswith("nccl") or name.startswith("rccl"):
            nccl += 1
        else:
            kernels += 1
        spans.append((max(s, lo), min(t, hi)))
    spans.sort()
    busy = 0
    cur_s = cur_e = None
    for s, t in spans:
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                busy += cur_e - cur_s
            cur_s, cur_e = s, t
        elif t > cur_e:
            cur_e = t
    if cur_e is not None:
        busy += cur_e - cur_s
    return hi - lo, busy, kernels, nccl


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        print("usage: dlrm_reference.py TRACE...", file=sys.stderr)
        return 2
    for path in argv[1:]:
        w, busy, k, n = reference(path)
        print(os.path.basename(path), w, busy, k, n)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
