#!/usr/bin/env python3
"""Generate many worker summaries for benchmarking `perftracker diagnose`.

    gen_summaries.py TEMPLATE_DIR N OUT_DIR [--seed=S]

Reads the summary JSON files in TEMPLATE_DIR (written by `perftracker
summarize` or `analyze --keep-summaries`, e.g. of the 8 DLRM ranks) and
writes N summaries to OUT_DIR, named like the original tool's workers,
node<NNNNN>_<rank>_<pid>.json.summary.json (8 ranks per node).  Worker i
starts from template i % len(templates); every time and ratio is scaled by
a random factor (normal, 2% spread), so the workers differ the way real ones
do.  Every 1000th worker gets extra device-to-device copies (4% of its
window) and every 1000th + 500 a 1.5x slower GPU, so the diagnosis has
something to find at any scale.  Stdlib only; deterministic for a seed.
"""
import json
import os
import random
import sys

SPREAD = 0.02
DTOD = "Memcpy DtoD (Device -> Device)"


def load(dirname):
    out = []
    for name in sorted(os.listdir(dirname)):
        if name.endswith(".json"):
            with open(os.path.join(dirname, name)) as f:
                d = json.load(f)
            if d.get("format") == "perftracker-summary" and not d.get("error"):
                out.append(d)
    if not out:
        raise SystemExit("gen_summaries: no summaries in %s" % dirname)
    return out


def vary(t, i, rng):
    node, rank = divmod(i, 8)
    pid = 10000 + i
    name = "node%05d_%d_%d.json" % (node, rank, pid)
    d = dict(t)
    d["worker"] = name
    d["file"] = "/traces/" + name
    d["host"] = "node%05d" % node
    d["rank"] = i
    d["pid"] = pid
    d["world_size"] = -1
    win = t["window"]
    slow_gpu = i % 1000 == 500
    pats = []
    for p in t["patterns"]:
        q = dict(p)
        f = max(0.5, rng.gauss(1.0, SPREAD))
        if slow_gpu and p["class"] == "compute":
            f *= 1.5
        for k in ("total_ms", "median_ms", "p10_ms", "p90_ms", "mad_ms", "bottleneck", "exec_ratio"):
            if k in q:
                q[k] = q[k] * f
        pats.append(q)
    if i % 1000 == 0:
        ms = win["ms"]
        pats = [p for p in pats if p["key"] != DTOD]
        pats.append({"key": DTOD, "class": "memory", "kind": "memcpy", "count": 20,
                     "total_ms": 0.04 * ms, "median_ms": 0.002 * ms, "p10_ms": 0.002 * ms,
                     "p90_ms": 0.002 * ms, "mad_ms": 0.0, "bottleneck": 0.04, "exec_ratio": 0.04})
    d["patterns"] = pats
    d["gpu_util"] = min(1.0, t["gpu_util"] * max(0.5, rng.gauss(1.0, SPREAD)))
    return d


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--seed=")]
    seed = 1
    for a in sys.argv[1:]:
        if a.startswith("--seed="):
            seed = int(a.split("=", 1)[1])
    if len(args) != 3:
        raise SystemExit(__doc__.split("\n\n")[1])
    tdir, n, out = args[0], int(args[1]), args[2]
    templates = load(tdir)
    os.makedirs(out, exist_ok=True)
    rng = random.Random(seed)
    for i in range(n):
        d = vary(templates[i % len(templates)], i, rng)
        path = os.path.join(out, d["worker"] + ".summary.json")
        with open(path + ".tmp", "w") as f:
            json.dump(d, f, separators=(",", ":"))
        os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
