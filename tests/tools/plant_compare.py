#!/usr/bin/env python3
"""Make a "NEW" run from a real one, with known changes, for `perftracker compare`.

Used by tests/cli/test_compare.sh and bench/bench_compare.sh.  Stdlib only.

    plant_compare.py SRC DST [--slow NAME --factor F] [--new NAME --new-ms MS]
                             [--scale-kernels F --rank R] [--steps I,J]
                             [--rename NAME --to NEW --factor F]
                             [--grow-annotation NAME --grow-ms MS]

SRC and DST are both trace files (.json or .json.gz, written in the same form)
or both folders (every *.json / *.json.gz trace of SRC copied to DST under
the same name; changes apply to every trace, or to rank R only with --rank).

  --slow NAME --factor F   every GPU kernel (or event of category CAT with
  [--slow-cat CAT]         --slow-cat) whose name contains NAME lasts F
                           times longer; the time it gains is inserted into
                           the whole trace at its old end (every later event
                           moves, events spanning that instant grow), as when
                           a GPU-bound step waits for that kernel
  --new NAME --new-ms MS   a new GPU kernel NAME of MS ms in every profiled
  [--new-cat CAT]          step, on the busiest stream, 1 us into the
                           step's longest GPU-idle gap (with --new-cat: an
                           event of that category, e.g. user_annotation, on
                           the step annotation's thread); its time is
                           inserted the same way
  --scale-kernels F        every compute kernel (cat "kernel", not NCCL) lasts
                           F times longer, start times kept (the DLRM
                           "slower GPU" plant of plant_anomalies.py)
  --keep-overlap           GPU work running at an inserted instant keeps its
                           length (for a slower collective beside compute)
  --steps I,J              --slow, --rename and --grow-annotation only in
                           these profiled steps (0-based, in time order)
  --rename NAME --to NEW   every GPU kernel whose name contains NAME is
                           replaced by a kernel of another family: the k-th
                           distinct old name becomes NEW_<tile k> (tiles
                           from a fixed list, so one family of several
                           names), lasting --factor times as long (time
                           inserted as with --slow)
  --grow-annotation NAME   every user annotation whose name is NAME lasts
  --grow-ms MS             MS ms longer: the time is inserted at an instant
                           inside it where no GPU work runs (the latest
                           one), as when its thread waits longer there with
                           the GPU idle

DST.info (a file, or DST/planted.info for folders; JSON, not *.json so the
CLI skips it) records what was changed: kernel names, counts, time added.
"""
import argparse
import bisect
import gzip
import json
import os
import sys


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def save(doc, path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "wt", encoding="utf-8") as f:
        json.dump(doc, f, separators=(",", ":"))


def events_of(doc):
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def is_x(e):
    return e.get("ph") == "X" and isinstance(e.get("ts"), (int, float)) and \
        isinstance(e.get("dur"), (int, float))


def is_compute(e):
    return is_x(e) and e.get("cat") in ("kernel", "Kernel") and \
        not str(e.get("name", "")).lower().startswith(("nccl", "rccl"))


def num(v, like):
    # Keep integer timestamps integers, as the profiler wrote them.
    return int(round(v)) if isinstance(like, int) and not isinstance(like, bool) else round(v, 3)


GPU_CATS = ("kernel", "Kernel", "gpu_memcpy", "gpu_memset", "Memcpy", "Memset")


def insert_time(events, points, own_extra, keep_gpu=False):
    """Insert time into the whole trace.  points: [(t, extra)] on the old
    timeline; own_extra: id(event) -> extra its own end gains (the slowed
    kernels).  An event starting at or after t moves by extra; one spanning
    t grows by it (with keep_gpu, GPU work spanning t keeps its length: a
    slower collective does not slow the kernels beside it)."""
    points.sort()
    ts_sorted = [p[0] for p in points]
    cum = [0.0]
    for _, x in points:
        cum.append(cum[-1] + x)

    def before_or_at(t):
        return cum[bisect.bisect_right(ts_sorted, t)]

    def strictly_before(t):
        return cum[bisect.bisect_left(ts_sorted, t)]

    for e in events:
        ts = e.get("ts")
        if not isinstance(ts, (int, float)) or isinstance(ts, bool):
            continue
        if is_x(e):
            end = ts + e["dur"]
            nts = ts + before_or_at(ts)
            nend = end + strictly_before(end) + own_extra.get(id(e), 0.0)
            if keep_gpu and e.get("cat") in GPU_CATS and id(e) not in own_extra:
                nend = nts + e["dur"]
            e["ts"] = num(nts, ts)
            e["dur"] = num(nend - nts, e["dur"])
        else:
            e["ts"] = num(ts + before_or_at(ts), ts)


def busy(events):
    iv = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                if is_x(e) and e.get("cat") in ("kernel", "Kernel", "gpu_memcpy", "gpu_memset",
                                                "Memcpy", "Memset"))
    merged = []
    for a, b in iv:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return merged


TILES = ["128x64_nn", "128x128_tn", "64x64_nt", "32x128_tn", "128x32_nn", "64x32_tt",
         "256x64_nt", "64x128_nn"]


def step_spans(ev):
    return sorted((e["ts"], e["ts"] + e["dur"]) for e in ev
                  if is_x(e) and str(e.get("name", "")).startswith("ProfilerStep#"))


def in_steps(e, spans, which):
    """Is event e in one of the chosen steps (by its start)?"""
    if which is None:
        return True
    for i, (a, b) in enumerate(spans):
        if a <= e["ts"] < b:
            return i in which
    return False


def idle_instant(bz, a, b):
    """The latest instant in (a, b) where no GPU work runs, else the middle."""
    t = None
    last = a
    for x, y in bz:
        if y <= a:
            continue
        if x >= b:
            break
        if x > last:
            t = x - min(1.0, (x - last) / 2)
        last = max(last, y)
    if last < b:
        t = b - min(1.0, (b - last) / 2)
    return t if t is not None else a + (b - a) / 2


def plant(doc, args, info):
    ev = events_of(doc)
    points, own = [], {}
    spans = step_spans(ev)
    which = None if args.steps is None else set(int(x) for x in args.steps.split(","))
    if args.scale_kernels:
        n = 0
        for e in ev:
            if is_compute(e):
                e["dur"] = num(e["dur"] * args.scale_kernels, e["dur"])
                n += 1
        info["scaled_kernels"] = n
        info["scale"] = args.scale_kernels
    if args.slow:
        if args.slow_cat:
            hit = [e for e in ev if is_x(e) and e.get("cat") == args.slow_cat and
                   args.slow in str(e.get("name", ""))]
        else:
            hit = [e for e in ev if is_compute(e) and args.slow in str(e.get("name", ""))]
        hit = [e for e in hit if in_steps(e, spans, which)]
        if not hit:
            raise SystemExit("plant_compare: no %s named like '%s'" % (args.slow_cat or "kernel", args.slow))
        names = sorted(set(e["name"] for e in hit))
        for e in hit:
            extra = e["dur"] * (args.factor - 1.0)
            points.append((e["ts"] + e["dur"], extra))
            own[id(e)] = extra
        info["slowed"] = names
        info["slowed_calls"] = len(hit)
        info["slowed_added_us"] = sum(own.values())
    if args.rename:
        hit = [e for e in ev if is_compute(e) and args.rename in str(e.get("name", "")) and
               in_steps(e, spans, which)]
        if not hit:
            raise SystemExit("plant_compare: no kernel named like '%s'" % args.rename)
        olds = sorted(set(e["name"] for e in hit))
        to = {n: "%s_%s" % (args.to, TILES[i % len(TILES)]) for i, n in enumerate(olds)}
        added = 0.0
        for e in hit:
            e["name"] = to[e["name"]]
            extra = e["dur"] * (args.factor - 1.0)
            points.append((e["ts"] + e["dur"], extra))
            own[id(e)] = extra
            added += extra
        info["renamed"] = olds
        info["renamed_to"] = sorted(set(to.values()))
        info["renamed_calls"] = len(hit)
        info["renamed_added_us"] = added
    if args.grow_annotation:
        hit = [e for e in ev if is_x(e) and e.get("cat") == "user_annotation" and
               e.get("name") == args.grow_annotation and in_steps(e, spans, which)]
        if not hit:
            raise SystemExit("plant_compare: no annotation '%s'" % args.grow_annotation)
        bz = busy(ev)
        for e in hit:
            points.append((idle_instant(bz, e["ts"], e["ts"] + e["dur"]), args.grow_ms * 1000.0))
        info["grown"] = args.grow_annotation
        info["grown_calls"] = len(hit)
        info["grown_added_us"] = args.grow_ms * 1000.0 * len(hit)
    new, like = [], 0.0
    if args.new:
        steps = [e for e in ev if is_x(e) and str(e.get("name", "")).startswith("ProfilerStep#")]
        if not steps:
            raise SystemExit("plant_compare: no ProfilerStep in the trace")
        kern = [e for e in ev if is_compute(e)]
        lanes = {}
        for e in kern:
            lanes[(e["pid"], e["tid"])] = lanes.get((e["pid"], e["tid"]), 0) + 1
        pid, tid = max(lanes, key=lanes.get)
        bz = busy(ev)
        dur = args.new_ms * 1000.0
        for s in steps:
            s0, s1 = s["ts"], s["ts"] + s["dur"]
            best, t = None, s0
            for a, b in bz:
                if b <= s0:
                    continue
                if a >= s1:
                    break
                if a > t and (best is None or a - t > best[1] - best[0]):
                    best = (t, a)
                t = max(t, b)
            if t < s1 and (best is None or s1 - t > best[1] - best[0]):
                best = (t, s1)
            # 1 us into the gap: an event starting at the insertion point
            # moves after it, so at the step's own start the step would.
            at = best[0] + min(1.0, (best[1] - best[0]) / 2) if best else s0 + (s1 - s0) / 2
            points.append((at, dur))
            if args.new_cat:
                # on the thread of the step's annotation, nested in whatever
                # runs there at that instant
                new.append((at, {"ph": "X", "cat": args.new_cat, "name": args.new, "pid": s["pid"],
                                 "tid": s["tid"], "ts": at, "dur": dur, "args": {}}))
                continue
            new.append((at, {"ph": "X", "cat": "kernel", "name": args.new, "pid": pid, "tid": tid,
                             "ts": at, "dur": dur,
                             "args": {"stream": tid, "grid": [1, 1, 1], "block": [128, 1, 1],
                                      "correlation": 0}}))
        like = steps[0]["ts"]
        info["new"] = args.new
        info["new_calls"] = len(new)
        info["new_added_us"] = dur * len(new)
    if points:
        insert_time(ev, points, own, args.keep_overlap)
        points.sort()
        ts_sorted = [p[0] for p in points]
        cum = [0.0]
        for _, x in points:
            cum.append(cum[-1] + x)
        for at, e in new:
            e["ts"] = num(at + cum[bisect.bisect_left(ts_sorted, at)], like)
            e["dur"] = num(e["dur"], 0.0)
            ev.append(e)


def rank_of(doc):
    if isinstance(doc, dict):
        r = (doc.get("distributedInfo") or {}).get("rank")
        if isinstance(r, int):
            return r
    return None


def drive(args, plant_fn):
    """Plant with plant_fn(doc, args, info) into args.src (a trace, or a
    folder whose traces of rank args.rank, all when None, are planted and
    the rest copied) and write args.dst with what was planted beside it
    (DST.info, or DST/planted.info for a folder)."""
    info = {}
    if os.path.isdir(args.src):
        os.makedirs(args.dst, exist_ok=True)
        for name in sorted(os.listdir(args.src)):
            if not (name.endswith(".json") or name.endswith(".json.gz")):
                continue
            doc = load(os.path.join(args.src, name))
            if args.rank is None or rank_of(doc) == args.rank:
                one = {}
                plant_fn(doc, args, one)
                info[name] = one
            save(doc, os.path.join(args.dst, name))
        with open(os.path.join(args.dst, "planted.info"), "w") as f:
            json.dump(info, f, indent=1)
    else:
        doc = load(args.src)
        plant_fn(doc, args, info)
        save(doc, args.dst)
        with open(args.dst + ".info", "w") as f:
            json.dump(info, f, indent=1)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--slow")
    ap.add_argument("--factor", type=float, default=2.0)
    ap.add_argument("--slow-cat")
    ap.add_argument("--new")
    ap.add_argument("--new-ms", type=float, default=1.0)
    ap.add_argument("--new-cat")
    ap.add_argument("--scale-kernels", type=float)
    ap.add_argument("--rank", type=int)
    ap.add_argument("--steps")
    ap.add_argument("--keep-overlap", action="store_true")
    ap.add_argument("--rename")
    ap.add_argument("--to", default="volta_sgemm")
    ap.add_argument("--grow-annotation")
    ap.add_argument("--grow-ms", type=float, default=10.0)
    args = ap.parse_args()
    return drive(args, plant)


if __name__ == "__main__":
    sys.exit(main())
