#!/usr/bin/env python3
"""gen_timeline_report.py - add a synthetic `timeline` key (docs/display.md,
"The `timeline` key", version 1) to an existing report.json, for the page's
Timeline view (tests/web/timeline.test.mjs, bench/bench_page.sh).

N ranks run STEPS lockstep steps of a DLRM-like model: a data-loader span,
"## forward ##" with two all_to_all collectives, "## backward ##" with three
all_reduce buckets, "## optimizer ##".  One straggler rank arrives late at
every collective (much later in the slow steps); the others wait for it.
GPU compute runs between the collectives.  With --unaligned R, rank R has no
collectives and is placed, not aligned (`"aligned": false`).  The bound of
the spec (at most --bound tuples over all workers) keeps the slow steps
first, then the steps in order, as many whole steps as fit.

The finding entry points at the report's finding --finding (default: the
first Lockstep finding, else 0), with the straggler and the slow steps.
Worker ids are the report's where a worker of that rank exists, else
synthetic.  Deterministic (--seed).  Python 3 stdlib only.

usage: gen_timeline_report.py REPORT.json -n RANKS [-o OUT.json] [--steps 6]
       [--straggler 7] [--unaligned R] [--seed 1] [--bound 100000]
"""
import argparse
import json
import random
import sys

SPAN_NAMES = ["## data loader ##", "## forward ##", "## backward ##", "## optimizer ##"]
COLL_NAMES = ["ncclDevKernel_SendRecv (all_to_all)",
              "ncclDevKernel_AllReduce_Sum_f32_RING_LL"]
# the collectives of a step: (name index into COLL_NAMES, compute before it in µs)
STEP_COLLS = [(0, 9000), (0, 14000), (1, 12000), (1, 11000), (1, 10000)]
COLL_US = [900, 1600]       # how long each kind runs once all arrived
OPT_US = 9000               # optimizer after the last collective
LOADER_US = 1500


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("report")
    ap.add_argument("-n", "--ranks", type=int, required=True)
    ap.add_argument("-o", "--out")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--first-step", type=int, default=10)
    ap.add_argument("--straggler", type=int, default=7)
    ap.add_argument("--unaligned", type=int, default=-1)
    ap.add_argument("--finding", type=int, default=-1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bound", type=int, default=100000)
    a = ap.parse_args()
    n = a.ranks
    if n < 2:
        sys.exit("gen_timeline_report: need 2 ranks or more")
    strag = min(a.straggler, n - 1)
    with open(a.report, encoding="utf-8") as f:
        rep = json.load(f)
    rnd = random.Random(a.seed)

    ids = {}
    hosts = {}
    for wid, w in (rep.get("workers") or {}).items():
        if isinstance(w, dict) and isinstance(w.get("rank"), int):
            ids.setdefault(w["rank"], wid)
            hosts[w["rank"]] = w.get("host") or ""
    names = COLL_NAMES + SPAN_NAMES
    span_name = {s: len(COLL_NAMES) + i for i, s in enumerate(SPAN_NAMES)}
    workers = []
    for r in range(n):
        host = hosts.get(r) or "node%d" % (r // 8)
        workers.append({"worker": ids.get(r, "rank%d_synthetic.json" % r),
                        "label": "rank %d (%s)" % (r, host), "rank": r,
                        "aligned": r != a.unaligned, "straggler": r == strag,
                        "steps": [], "spans": [], "gpu": [], "coll": [], "late": [], "wait": []})
    # slow steps: the second and, with 5 steps or more, the fifth
    slow_idx = {1, 4} if a.steps >= 5 else {1} if a.steps >= 2 else set()
    members = [r for r in range(n) if r != a.unaligned]

    # simulate every step; per step the tuples of each worker
    per_step = []          # [(step number, start, end, {r: {key: [tuples]}}, [instances])]
    t = 0
    for s in range(a.steps):
        num = a.first_step + s
        delay = 22000 if s in slow_idx else 2500 + rnd.randint(0, 1000)
        out = {r: {"steps": [], "spans": [], "gpu": [], "coll": [], "late": [], "wait": []} for r in range(n)}
        insts = []
        cur = {r: t + rnd.randint(0, 80) for r in range(n)}
        start = dict(cur)
        for r in range(n):
            out[r]["spans"].append([cur[r], LOADER_US + rnd.randint(0, 200), span_name["## data loader ##"]])
            cur[r] += out[r]["spans"][-1][1]
        fwd_start = dict(cur)
        bwd_start = {}
        for k, (ni, compute) in enumerate(STEP_COLLS):
            arr = {}
            for r in range(n):
                c = compute + rnd.randint(0, 400)
                if r == strag:
                    c += delay // len(STEP_COLLS) + rnd.randint(0, 300)
                # GPU compute in two kernels' runs with a small gap
                g0 = cur[r] + 150
                g1 = cur[r] + c - 100
                mid = (g0 + g1) // 2
                out[r]["gpu"].append([g0, mid - 60])
                out[r]["gpu"].append([mid + 60, g1])
                arr[r] = cur[r] + c
            ms = sorted(arr[r] for r in members)
            last_r = max(members, key=lambda r: arr[r])
            med = ms[(len(ms) - 1) // 2]
            end = arr[last_r] + COLL_US[ni] + rnd.randint(0, 100)
            inst = len(insts)
            insts.append([ni, 0, last_r, arr[last_r] - med])
            for r in range(n):
                if r not in members:
                    cur[r] = arr[r] + COLL_US[ni]      # runs alone, its own pace
                    continue
                out[r]["coll"].append([inst, arr[r], end])
                if r == last_r:
                    out[r]["late"].append([inst, med, arr[r]])
                elif arr[last_r] - arr[r] >= 50:
                    out[r]["wait"].append([inst, arr[r], arr[last_r]])
                cur[r] = end
            if k == 1:
                for r in range(n):
                    out[r]["spans"].append([fwd_start[r], cur[r] - fwd_start[r], span_name["## forward ##"]])
                    bwd_start[r] = cur[r]
        for r in range(n):
            out[r]["spans"].append([bwd_start[r], cur[r] - bwd_start[r], span_name["## backward ##"]])
            o = OPT_US + rnd.randint(0, 500)
            out[r]["spans"].append([cur[r], o, span_name["## optimizer ##"]])
            out[r]["gpu"].append([cur[r] + 100, cur[r] + o - 200])
            cur[r] += o
            out[r]["steps"].append([num, start[r], cur[r]])
        end = max(cur.values())
        per_step.append((num, min(start.values()), end, out, insts, s in slow_idx))
        t = end + 200

    def size(st):
        return sum(len(v) for r in st[3].values() for v in r.values())
    order = [st for st in per_step if st[5]] + [st for st in per_step if not st[5]]
    kept, total = [], 0
    for st in order:
        if total + size(st) > a.bound:
            break
        kept.append(st)
        total += size(st)
    kept.sort(key=lambda st: st[0])
    if len(kept) == len(per_step):
        kept_phrase = "all %d steps" % len(per_step)
    else:
        kept_phrase = "steps %s of %d (the bound: %s entries)" % (
            ", ".join(str(st[0]) for st in kept), len(per_step), format(a.bound, ","))

    instances = []
    steps = []
    for st in kept:
        base = len(instances) // 4
        for q in st[4]:
            instances.extend(q)
        for r in range(n):
            w, o = workers[r], st[3][r]
            for key in ("steps", "spans", "gpu"):
                for tup in o[key]:
                    w[key].extend(tup)
            for key in ("coll", "late", "wait"):
                for tup in o[key]:
                    w[key].extend([tup[0] + base] + tup[1:])
        steps.append({"step": st[0], "start_us": st[1], "end_us": st[2],
                      "slow": [strag] if st[5] else []})

    fi = a.finding
    finds = rep.get("findings") or []
    if fi < 0:
        fi = next((i for i, f in enumerate(finds)
                   if isinstance(f, dict) and "lockstep" in str(f.get("category", "")).lower()), 0)
    tl_find = []
    if fi < len(finds):
        tl_find.append([fi, [strag], [st["step"] for st in steps if st["slow"]] or [steps[0]["step"]]])

    rep["timeline"] = {
        "version": 1,
        "clock": "µs on rank 0's clock from its window start; lockstep offsets applied",
        "reference": workers[0]["worker"],
        "names": names,
        "channels": ["nccl:0"],
        "steps": steps,
        "steps_total": len(per_step),
        "kept": kept_phrase,
        "instances": instances,
        "workers": workers,
        "findings": tl_find,
    }
    text = json.dumps(rep, ensure_ascii=False, separators=(",", ":"))
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
