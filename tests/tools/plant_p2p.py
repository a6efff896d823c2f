#!/usr/bin/env python3
"""Plant a slow destination in tests/data/p2p_gloo4 (the real 4-rank gloo
p2p run recorded by tests/tools/record_p2p_gloo.py): every transfer into
rank DST (default 2) takes FACTOR (default 3) times as long, on both ends:
rank DST's gloo:recv ops and the other ranks' gloo:send ops whose c10d::send
names DST as its peer ("Concrete Inputs"[2]).  Time after each planted
transfer's end moves on by what it gained: every later event of that rank
starts that much later, and the spans open across it (the step, the
record_function around it, the c10d op) end that much later, while the
other transfers open across it (gloo's work spans of other peers, which
run beside it) keep their length: as a slow link into DST would make it.

  python3 tests/tools/plant_p2p.py SRC_DIR OUT_DIR [--dst 2] [--factor 3]"""
import argparse
import glob
import gzip
import json
import os


def plant(doc, rank, dst, factor):
    ev = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    # the c10d op around each gloo op's start, on its thread
    ops = sorted((e for e in ev if e["name"] in ("c10d::send", "c10d::recv_")),
                 key=lambda e: e["ts"])
    n = 0
    for e in ev:
        name = e["name"]
        if name not in ("gloo:send", "gloo:recv"):
            continue
        if name == "gloo:recv" and rank != dst:
            continue
        if name == "gloo:send" and rank == dst:
            continue
        outer = [o for o in ops if o["tid"] == e["tid"] and o["ts"] <= e["ts"] <= o["ts"] + o["dur"]]
        if not outer:
            continue
        peer = int(outer[-1]["args"]["Concrete Inputs"][2])
        if name == "gloo:send" and peer != dst:
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
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--dst", type=int, default=2)
    ap.add_argument("--factor", type=float, default=3.0)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for path in sorted(glob.glob(os.path.join(a.src, "*.json.gz"))):
        with gzip.open(path, "rt") as f:
            doc = json.load(f)
        rank = doc["distributedInfo"]["rank"]
        n = plant(doc, rank, a.dst, a.factor)
        out = os.path.join(a.out, os.path.basename(path))
        with gzip.GzipFile(out, "wb", 9, mtime=0) as g:
            g.write(json.dumps(doc).encode())
        print("%s: rank %d, %d transfers into rank %d x%g" % (out, rank, n, a.dst, a.factor))


if __name__ == "__main__":
    main()
