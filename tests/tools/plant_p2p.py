#!/usr/bin/env python3
"""Plant a slow link in tests/data/p2p_gloo4 (the real 4-rank gloo p2p run
recorded by tests/tools/record_p2p_gloo.py): every transfer into rank DST
(--dst, default 2), out of rank SRC (--src) or from SRC to DST (both) takes
FACTOR (default 3) times as long, on both ends: the receiver's gloo:recv
ops and the sender's gloo:send ops, each end's peer read from the c10d op
around it ("Concrete Inputs"[2]).  Time after each planted
transfer's end moves on by what it gained: every later event of that rank
starts that much later, and the spans open across it (the step, the
record_function around it, the c10d op) end that much later, while the
other transfers open across it (gloo's work spans of other peers, which
run beside it) keep their length: as a slow link into DST would make it.

  python3 tests/tools/plant_p2p.py IN_DIR OUT_DIR [--dst 2] [--src 1] [--factor 3]"""
import argparse
import glob
import gzip
import json
import os


def plant(doc, rank, src, dst, factor):
    ev = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    # the c10d op around each gloo op's start, on its thread
    ops = sorted((e for e in ev if e["name"] in ("c10d::send", "c10d::recv_")),
                 key=lambda e: e["ts"])
    n = 0
    for e in ev:
        name = e["name"]
        if name not in ("gloo:send", "gloo:recv"):
            continue
        outer = [o for o in ops if o["tid"] == e["tid"] and o["ts"] <= e["ts"] <= o["ts"] + o["dur"]]
        if not outer:
            continue
        peer = int(outer[-1]["args"]["Concrete Inputs"][2])
        s, d = (rank, peer) if name == "gloo:send" else (peer, rank)
        if (src is not None and s != src) or (dst is not None and d != dst):
            continue
        e["_planted"] = True
        n += 1
    warp(ev, factor)
    return n


def warp(ev, factor):
    """Stretch the planted transfers by factor and move time after each
    one's end by what it gained (see the module comment)."""
    marks = sorted((e["ts"] + e["dur"], e["dur"] * (factor - 1)) for e in ev if e.get("_planted"))

    def shift(t):
        return sum(a for end, a in marks if end <= t)

    for e in ev:
        ts, end = e["ts"], e["ts"] + e["dur"]
        if e.pop("_planted", False):
            new_end = ts + shift(ts) + e["dur"] * factor
        elif e["name"] in ("gloo:send", "gloo:recv", "gloo:all_to_all"):
            new_end = ts + shift(ts) + e["dur"]
        else:
            new_end = end + shift(end)
        e["ts"] = round(ts + shift(ts), 3)
        e["dur"] = round(new_end - (ts + shift(ts)), 3)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("in_dir")
    ap.add_argument("out_dir")
    ap.add_argument("--dst", type=int)
    ap.add_argument("--src", type=int)
    ap.add_argument("--factor", type=float, default=3.0)
    a = ap.parse_args()
    if a.src is None and a.dst is None:
        a.dst = 2
    os.makedirs(a.out_dir, exist_ok=True)
    for path in sorted(glob.glob(os.path.join(a.in_dir, "*.json.gz"))):
        with gzip.open(path, "rt") as f:
            doc = json.load(f)
        rank = doc["distributedInfo"]["rank"]
        n = plant(doc, rank, a.src, a.dst, a.factor)
        out = os.path.join(a.out_dir, os.path.basename(path))
        with gzip.GzipFile(out, "wb", 9, mtime=0) as g:
            g.write(json.dumps(doc).encode())
        print("%s: rank %d, %d transfers (from %s to %s) x%g" % (out, rank, n, a.src, a.dst, a.factor))


if __name__ == "__main__":
    main()
