#!/usr/bin/env python3
"""page_summaries.py - N worker summaries made from a few real ones (stdlib only).

For the PerfDisplay benchmark (bench/bench_page.sh): `perftracker diagnose`
needs one summary per worker; this copies real summaries (e.g. the 8 DLRM
ranks) round-robin into N workers named <host>_<rank>_<pid>.json, with every
duration scaled by a small random factor (sd 2%), and makes worker N*417/1000
slow in its largest compute kernel (x1.8) so the report has a finding.

usage: page_summaries.py -n N -o OUTDIR SUMMARY.json...
"""
import argparse
import json
import os
import random


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=1000)
    ap.add_argument("-o", "--outdir", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("summaries", nargs="+")
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    src = [json.load(open(p)) for p in a.summaries]
    os.makedirs(a.outdir, exist_ok=True)
    slow = a.n * 417 // 1000
    for i in range(a.n):
        s = json.loads(json.dumps(src[i % len(src)]))
        host = "node%03d" % (i // 8)
        pid = 10000 + i
        name = "%s_%d_%d.json" % (host, i, pid)
        s.update({"worker": name, "file": "raw_trace/" + name, "host": host, "rank": i, "pid": pid,
                  "world_size": a.n})
        f = rnd.gauss(1.0, 0.02)
        extra = 0.0
        if i == slow:
            comp = [p for p in s["patterns"] if p["class"] == "compute"]
            if comp:
                big = max(comp, key=lambda p: p["total_ms"])
                extra = big["total_ms"] * 0.8
                for k in ("total_ms", "median_ms", "p10_ms", "p90_ms", "mad_ms"):
                    big[k] *= 1.8
        for p in s["patterns"]:
            for k in ("total_ms", "median_ms", "p10_ms", "p90_ms", "mad_ms"):
                p[k] *= f
        s["window"]["ms"] = s["window"]["ms"] * f + extra
        for st in s.get("steps", []):
            st["ms"] = st["ms"] * f + extra / max(1, len(s["steps"]))
        for k in s["class_ms"]:
            s["class_ms"][k] *= f
        s["class_ms"]["compute"] = s["class_ms"].get("compute", 0) + extra
        w = s["window"]["ms"]
        for p in s["patterns"]:
            p["bottleneck"] = min(1.0, p["bottleneck"] * (1 + (extra / w if p["class"] == "compute" else 0)))
        with open(os.path.join(a.outdir, name), "w") as out:
            json.dump(s, out)


if __name__ == "__main__":
    main()
