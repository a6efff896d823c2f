#!/usr/bin/env python3
"""Plant lockstep faults in copies of a multi-rank set of PyTorch profiler
traces (the 8 DLRM ranks), with the waiting propagated the way it happens in
a synchronous job.  Used by tests/cli/test_lockstep.sh.  Stdlib only.

    plant_lockstep.py straggler SRC DST --rank R --k K --ms D --kind new|existing
    plant_lockstep.py shift SRC DST [--max-ms 50] [--seed S]
    plant_lockstep.py balanced SRC DST [--copies 8] [--jitter 0.01] [--seed S]
    plant_lockstep.py mismatch SRC DST --rank R --k K --how missing|extra|reorder
    plant_lockstep.py candidates SRC          (print the plantable (rank, k))

Collective k is the k-th NCCL kernel (0-based, start order) of each rank.

straggler: rank R does D ms of extra work before collective k, on the CPU
  thread that launches it, after the previous collective has ended on its GPU:
  new       a new cpu_op "planted_straggler_work" of D ms right before the
            collective's outermost CPU op (c10d::..., record_param_comms);
  existing  the longest cpu_op on that thread ending in that span (a function
            every rank runs) lasts D ms longer.
  Everything of rank R from that point to its arrival moves D later; its
  kernel k then ends when it has done its own transfer (the shortest kernel
  k of all ranks); each other rank's kernel k stretches until then (its
  start kept), and everything of every rank after the old end moves by the
  same amount, so the ends stay aligned.
shift: every rank's timestamps move by its own offset in [-max, +max] ms
  (rank 0 by -max, the last by +max, the rest spread between, then
  shuffled with the seed), as on hosts with unsynchronised clocks.
balanced: rank 0's trace copied to `copies` ranks; each copy's timeline is
  stretched by a factor in [1 - jitter, 1 + jitter] around its first event.
mismatch: rank R's kernel k is removed (missing), doubled (extra), or
  swapped with the next kernel of another collective (reorder).

DST/planted.info (JSON, not *.json) records what was done, including the
planted function's name and, for existing, which function grew.
"""
import argparse
import json
import os
import random
import sys

NEW_FN = "planted_straggler_work"
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation")
COMM_PREFIX = ("c10d::", "record_param_comms", "nccl:", "gloo:")


def load(src):
    out = {}
    for name in sorted(os.listdir(src)):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(src, name)) as f:
            d = json.load(f)
        out[d["distributedInfo"]["rank"]] = (name, d)
    if not out:
        raise SystemExit("plant_lockstep: no *.json traces in %s" % src)
    return out


def save(dst, ranks, info):
    os.makedirs(dst, exist_ok=True)
    files = {}
    for r, (name, d) in ranks.items():
        with open(os.path.join(dst, name), "w") as f:
            json.dump(d, f)
        files[r] = name
    info["files"] = files
    with open(os.path.join(dst, "planted.info"), "w") as f:
        json.dump(info, f, indent=1)


def nccl(d):
    ks = [e for e in d["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "kernel" and
          str(e.get("name", "")).lower().startswith(("nccl", "rccl"))]
    return sorted(ks, key=lambda e: e["ts"])


def remap(d, f):
    """Apply the monotonic time map f to every event of trace d."""
    for e in d["traceEvents"]:
        if "ts" not in e:
            continue
        ts = float(e["ts"])
        if e.get("ph") == "X":
            end = ts + float(e.get("dur", 0))
            e["ts"], e["dur"] = round(f(ts), 3), round(max(0.0, f(end) - f(ts)), 3)
        else:
            e["ts"] = round(f(ts), 3)


def launch_of(d, k):
    corr = k["args"].get("correlation")
    for e in d["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") == "cuda_runtime" and \
                e.get("args", {}).get("correlation") == corr:
            return e
    raise SystemExit("plant_lockstep: no launch for kernel at %s" % k["ts"])


def plan(d, k):
    """(thread, t0 for new, span start) for collective k of trace d, or None
    when its launch comes before the previous collective ended on the GPU."""
    ks = nccl(d)
    prev_end = ks[k - 1]["ts"] + ks[k - 1]["dur"] if k else None
    lau = launch_of(d, ks[k])
    if prev_end is None or lau["ts"] <= prev_end:
        return None
    tid = lau["tid"]
    t0 = lau["ts"]
    # before the outermost collective op around the launch, which must
    # itself start after the previous collective ended
    for e in d["traceEvents"]:
        if e.get("ph") == "X" and e.get("tid") == tid and \
                str(e.get("name", "")).startswith(COMM_PREFIX) and \
                e["ts"] <= lau["ts"] <= e["ts"] + e["dur"]:
            t0 = min(t0, e["ts"])
    if t0 <= prev_end:
        return None
    return tid, t0, prev_end


def existing_fn(d, tid, span0, t0):
    best = None
    for e in d["traceEvents"]:
        if e.get("ph") != "X" or e.get("tid") != tid or e.get("cat") != "cpu_op" or \
                str(e["name"]).startswith(COMM_PREFIX):
            continue
        end = e["ts"] + e["dur"]
        if span0 < end <= t0 and e["ts"] >= span0 and (best is None or e["dur"] > best["dur"]):
            best = e
    return best


def do_straggler(a, ranks):
    name, d = ranks[a.rank]
    p = plan(d, a.k)
    if p is None:
        raise SystemExit("plant_lockstep: collective %d of rank %d is launched before the "
                         "previous one ends on its GPU; pick another k" % (a.k, a.rank))
    tid, t0, span0 = p
    D = a.ms * 1000.0
    info = {"mode": "straggler", "rank": a.rank, "k": a.k, "ms": a.ms, "kind": a.kind}
    fn = None
    if a.kind == "existing":
        fn = existing_fn(d, tid, span0, t0)
        if fn is None:
            raise SystemExit("plant_lockstep: no cpu_op ends before collective %d on rank %d"
                             % (a.k, a.rank))
        t0 = fn["ts"] + fn["dur"]
        info["function"] = fn["name"]
    else:
        info["function"] = NEW_FN
    kr = nccl(d)[a.k]
    A, old_end = float(kr["ts"]), float(kr["ts"]) + float(kr["dur"])
    tau = min(float(nccl(x)[a.k]["dur"]) for _, x in ranks.values())
    new_end = max(max(float(nccl(x)[a.k]["ts"]) + float(nccl(x)[a.k]["dur"])
                      for _, x in ranks.values()), A + D + tau)
    info["new_end_us"] = new_end

    def f_r(t, t0=t0, A=A, old_end=old_end):
        if t < t0:
            return t
        if t <= A:
            return t + D
        if t <= old_end:
            return A + D + (t - A) * (new_end - A - D) / (old_end - A)
        return t + (new_end - old_end)
    # The CPU side and the collective itself follow f_r; other GPU work
    # keeps its duration: work launched before t0 is already queued and
    # runs on time, work launched later starts as f_r says.
    launch = {e["args"]["correlation"]: float(e["ts"]) for e in d["traceEvents"]
              if e.get("ph") == "X" and e.get("cat") == "cuda_runtime" and
              "correlation" in e.get("args", {})}
    for e in d["traceEvents"]:
        if "ts" not in e:
            continue
        ts = float(e["ts"])
        if e.get("ph") == "X" and e.get("cat") in GPU_CATS and e is not kr:
            lt = launch.get(e.get("args", {}).get("correlation"), ts)
            if lt >= t0:
                e["ts"] = round(f_r(ts), 3)
            continue
        if e.get("ph") == "X":
            end = ts + float(e.get("dur", 0))
            e["ts"], e["dur"] = round(f_r(ts), 3), round(max(0.0, f_r(end) - f_r(ts)), 3)
        else:
            e["ts"] = round(f_r(ts), 3)
    if a.kind == "new":
        d["traceEvents"].append({"ph": "X", "cat": "cpu_op", "name": NEW_FN,
                                 "pid": launch_of(d, kr)["pid"],
                                 "tid": tid, "ts": round(t0, 3), "dur": round(D, 3),
                                 "args": {}})
    for r, (_, x) in ranks.items():
        if r == a.rank:
            continue
        kx = nccl(x)[a.k]
        oe = float(kx["ts"]) + float(kx["dur"])
        delta = new_end - oe

        def g(t, oe=oe, delta=delta):
            return t if t < oe else t + delta
        # kernel k and the host calls straddling its old end (syncs) stretch;
        # GPU work of other streams running across it does not
        for e in x["traceEvents"]:
            if "ts" not in e:
                continue
            ts = float(e["ts"])
            if e.get("ph") == "X":
                end = ts + float(e.get("dur", 0))
                if ts < oe <= end and e is not kx and e.get("cat") in GPU_CATS:
                    continue
                e["ts"], e["dur"] = round(g(ts), 3), round(g(end) - g(ts), 3)
            else:
                e["ts"] = round(g(ts), 3)
    save(a.dst, ranks, info)


def do_shift(a, ranks):
    rs = sorted(ranks)
    n = len(rs)
    offs = [-a.max_ms + 2 * a.max_ms * i / (n - 1) for i in range(n)] if n > 1 else [a.max_ms]
    random.Random(a.seed).shuffle(offs)
    info = {"mode": "shift", "offsets_ms": {}}
    for r, o in zip(rs, offs):
        remap(ranks[r][1], lambda t, o=o: t + o * 1000.0)
        info["offsets_ms"][r] = o
    save(a.dst, ranks, info)


def do_balanced(a, ranks):
    name0, d0 = ranks[min(ranks)]
    rng = random.Random(a.seed)
    text = json.dumps(d0)
    out = {}
    info = {"mode": "balanced", "factors": {}}
    t0 = min(float(e["ts"]) for e in d0["traceEvents"] if "ts" in e)
    for r in range(a.copies):
        d = json.loads(text)
        d["distributedInfo"]["rank"] = r
        fac = 1 + rng.uniform(-a.jitter, a.jitter)
        remap(d, lambda t, fac=fac: t0 + (t - t0) * fac)
        info["factors"][r] = fac
        out[r] = ("worker%d_balanced.pt.trace.json" % r, d)
    save(a.dst, out, info)


def do_mismatch(a, ranks):
    name, d = ranks[a.rank]
    ks = nccl(d)
    k = ks[a.k]
    info = {"mode": "mismatch", "rank": a.rank, "k": a.k, "how": a.how}
    if a.how == "missing":
        d["traceEvents"].remove(k)
    elif a.how == "extra":
        x = dict(k)
        x["args"] = dict(k["args"])
        x["ts"] = k["ts"] + k["dur"] + 1
        x["dur"] = 2
        d["traceEvents"].append(x)
    else:
        def op(e):
            return "AllReduce" if "AllReduce" in e["name"] else "SendRecv"
        j = next(i for i in range(a.k + 1, len(ks)) if op(ks[i]) != op(k))
        k["name"], ks[j]["name"] = ks[j]["name"], k["name"]
        info["swapped_with"] = j
    save(a.dst, ranks, info)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("mode", choices=["straggler", "shift", "balanced", "mismatch", "candidates"])
    p.add_argument("src")
    p.add_argument("dst", nargs="?")
    p.add_argument("--rank", type=int, default=0)
    p.add_argument("--k", type=int, default=1)
    p.add_argument("--ms", type=float, default=6.0)
    p.add_argument("--kind", choices=["new", "existing"], default="new")
    p.add_argument("--max-ms", type=float, default=50.0)
    p.add_argument("--copies", type=int, default=8)
    p.add_argument("--jitter", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--how", choices=["missing", "extra", "reorder"], default="missing")
    a = p.parse_args()
    ranks = load(a.src)
    if a.mode == "candidates":
        for r, (_, d) in sorted(ranks.items()):
            ok = [k for k in range(len(nccl(d))) if plan(d, k)]
            ex = [k for k in ok if existing_fn(d, plan(d, k)[0], plan(d, k)[2], plan(d, k)[1])]
            print("rank %d: new %s existing %s" % (r, ok, ex))
        return 0
    if not a.dst:
        p.error("DST is required")
    {"straggler": do_straggler, "shift": do_shift, "balanced": do_balanced,
     "mismatch": do_mismatch}[a.mode](a, ranks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
