#!/usr/bin/env python3
"""gen_tb_cycles.py - a tensorboard_trace_handler folder of many profiling
cycles per rank, replicated from the real ones in tests/data/torch2_tb
(4 gloo DDP ranks, 3 cycles of 2 active steps each, torch 2.15 on the CPU).

Usage: gen_tb_cycles.py OUTDIR [--cycles 240] [--src tests/data/torch2_tb]

Cycle c of rank r is the real cycle c % 3 of that rank, moved later by
(c // 3) times the span of the three real cycles, its ProfilerStep#N
renumbered to N + 12 * (c // 3) (4 steps per cycle: wait 1, warmup 1,
active 2), written as <host>_<pid>.<ns>.pt.trace.json.gz as torch names
it.  Every event stays as recorded: only times and step numbers move.
"""
import argparse
import glob
import gzip
import json
import os
import re
import sys

STEP = re.compile(r"^ProfilerStep#(\d+)$")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("outdir")
    p.add_argument("--cycles", type=int, default=240)
    p.add_argument("--src", default=os.path.join(os.path.dirname(__file__), "..", "tests",
                                                  "data", "torch2_tb"))
    a = p.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    ranks = {}
    for f in sorted(glob.glob(os.path.join(a.src, "*.pt.trace.json.gz"))):
        name = os.path.basename(f)
        worker, stamp = name.split(".")[0], int(name.split(".")[1])
        ranks.setdefault(worker, []).append((stamp, json.load(gzip.open(f))))
    # the span of the real cycles (µs): where the next three start
    lo = min(e["ts"] for w in ranks.values() for _, d in w for e in d["traceEvents"]
             if "ts" in e)
    hi = max(e["ts"] + e.get("dur", 0) for w in ranks.values() for _, d in w
             for e in d["traceEvents"] if "ts" in e)
    period_us = (hi - lo) * 1.1
    for worker, cyc in ranks.items():
        cyc.sort()
        for c in range(a.cycles):
            stamp, d = cyc[c % len(cyc)]
            k = c // len(cyc)
            dt = k * period_us
            out = dict(d)
            evs = []
            for e in d["traceEvents"]:
                e = dict(e)
                if "ts" in e and e.get("ph") != "M":
                    e["ts"] = e["ts"] + dt
                m = STEP.match(e.get("name", ""))
                if m:
                    e["name"] = "ProfilerStep#%d" % (int(m.group(1)) + 4 * len(cyc) * k)
                evs.append(e)
            out["traceEvents"] = evs
            path = os.path.join(a.outdir, "%s.%d.pt.trace.json.gz" %
                                (worker, stamp + int(dt * 1000)))
            with gzip.open(path, "wt", compresslevel=6) as g:
                json.dump(out, g)
    return 0


if __name__ == "__main__":
    sys.exit(main())
