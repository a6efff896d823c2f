#!/usr/bin/env python3
"""Make a "NEW" run whose GPU work grew per call, for `perftracker compare`.

Used by tests/cli/test_compare.sh (docs/compare.md "Grown on the path").
Stdlib only.

    plant_compare_growth.py SRC DST --name NAME [--factor F] [--stream S]
                            [--wait-at NAME2] [--rename OLD=NEW,...] [--rank R]

SRC and DST are both trace files (.json or .json.gz) or both folders (every
trace copied; the change applies to every trace, or to rank R only).

  --name NAME       every GPU event (kernel, memcpy, memset) whose name
                    contains NAME lasts F times as long (--factor, 2.8)
  --stream S        only those on GPU stream (tid) S
  (default)         overlapped: nothing else moves, except the later events
                    of the same stream, which start no earlier than the
                    previous one's end (the stream's order forces it)
  --wait-at NAME2   the step waits for them: the first GPU event named like
                    NAME2 ("": any) on another stream that starts after a
                    grown event's old end, in the same step (the
                    optimizer's first kernel after the gradient
                    all-reduce), is launched only when the grown events
                    before it end: its launch's thread blocks in a new
                    cudaStreamSynchronize, from its first runtime call
                    after the waiter's old start (or the launch, when the
                    thread was not ahead of the GPU) to 1 us after the
                    grown events' new end, and that delay is inserted
                    into the whole trace there (every later event moves,
                    CPU spans over it grow, GPU work running then keeps
                    its length), as when the training loop waits for the
                    gradient all-reduce before the optimizer
  --rename OLD=NEW  in the grown events' names, OLD becomes NEW (an NCCL
                    kernel of another protocol or dtype: RING_LL=RING_LL128)

DST.info (or DST/planted.info) records what changed: names, calls, the
time added per call and the delays inserted.
"""
import argparse
import bisect
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plant_compare as pc  # noqa: E402
from plant_compare import GPU_CATS, events_of, is_x, num, step_spans  # noqa: E402

RUNTIME_CATS = ("cuda_runtime", "Runtime", "cuda_driver")


def is_gpu(e):
    return is_x(e) and e.get("cat") in GPU_CATS


def step_of(spans, t):
    for i, (a, b) in enumerate(spans):
        if a <= t < b:
            return i
    return -1


def cascade(ev, lanes, dur):
    """On each GPU stream of lanes, in start order, with the durations dur
    (id(event) -> duration) where given: each event starts no earlier than
    the previous one's end.  Returns id(event) -> (ts, dur) of the events
    that moved or changed."""
    out = {}
    for lane in lanes:
        lane_ev = sorted((e for e in ev if is_gpu(e) and (e["pid"], e["tid"]) == lane),
                         key=lambda e: e["ts"])
        end = None
        for e in lane_ev:
            ts, d = e["ts"], dur.get(id(e), e["dur"])
            if end is not None and ts < end:
                ts = end
            if ts != e["ts"] or d != e["dur"]:
                out[id(e)] = (ts, d)
            end = ts + d
    return out


class Lanes:
    """The grown events' streams on the new timeline, built as the delays
    are decided: an event's place depends only on the delays before its
    start, and each delay is decided at a later instant than the last, so
    the events before it are placed for good."""

    def __init__(self, ev, lanes, dur):
        self.ev = dict((lane, sorted((e for e in ev if is_gpu(e) and (e["pid"], e["tid"]) == lane),
                                     key=lambda e: e["ts"])) for lane in lanes)
        self.at = dict((lane, 0) for lane in lanes)
        self.last = dict((lane, None) for lane in lanes)
        self.dur = dur
        self.end = {}  # id(event) -> its end on the new timeline
        self.pts, self.cum = [], [0.0]

    def add(self, t, d):
        self.pts.append(t)
        self.cum.append(self.cum[-1] + d)

    def upto(self, limit):
        """Place every event starting before old instant limit."""
        for lane, evs in self.ev.items():
            i, end = self.at[lane], self.last[lane]
            while i < len(evs) and evs[i]["ts"] < limit:
                e = evs[i]
                ts = e["ts"] + self.cum[bisect.bisect_right(self.pts, e["ts"])]
                if end is not None and ts < end:
                    ts = end
                end = self.end[id(e)] = ts + self.dur.get(id(e), e["dur"])
                i += 1
            self.at[lane], self.last[lane] = i, end


def plant(doc, args, info):
    ev = events_of(doc)
    hit = [e for e in ev if is_gpu(e) and args.name in str(e.get("name", "")) and
           (args.stream is None or str(e.get("tid")) == args.stream)]
    if not hit:
        raise SystemExit("plant_compare_growth: no GPU event named like '%s'" % args.name)
    spans = step_spans(ev)
    lanes = set((e["pid"], e["tid"]) for e in hit)
    grown = dict((id(e), e["dur"] * args.factor) for e in hit)
    new = cascade(ev, lanes, grown)  # where they would end, on the old timeline
    points, syncs = [], []
    if args.wait_at is not None:
        waiters = sorted((e for e in ev if is_gpu(e) and args.wait_at in str(e.get("name", "")) and
                          (e["pid"], e["tid"]) not in lanes), key=lambda e: e["ts"])
        starts = [e["ts"] for e in waiters]
        waits = {}  # id(waiter) -> (waiter, the grown events it waits for)
        for e in hit:
            s = step_of(spans, e["ts"])
            i = bisect.bisect_left(starts, e["ts"] + e["dur"])
            if s < 0 or i == len(waiters) or step_of(spans, waiters[i]["ts"]) != s:
                continue
            waits.setdefault(id(waiters[i]), (waiters[i], []))[1].append(e)
        launch, calls = {}, {}
        for e in ev:  # the runtime call that queued each GPU event, and each thread's calls
            if is_x(e) and e.get("cat") in RUNTIME_CATS:
                c = (e.get("args") or {}).get("correlation")
                if c is not None:
                    launch[c] = e
                calls.setdefault((e["pid"], e["tid"]), []).append(e["ts"])
        for v in calls.values():
            v.sort()
        placed = Lanes(ev, lanes, grown)
        for w, before in sorted(waits.values(), key=lambda x: x[0]["ts"]):
            lc = launch.get((w.get("args") or {}).get("correlation"))
            if lc is None:
                continue
            # the launching thread blocks at its first runtime call once
            # the GPU reached the waiter (at its launch when it was not ahead)
            lane = calls[(lc["pid"], lc["tid"])]
            i = bisect.bisect_left(lane, w["ts"])
            t = lc["ts"] if lc["ts"] >= w["ts"] or i == len(lane) else lane[i]
            if points and t <= points[-1][0]:
                continue
            # on the new timeline, with the delays so far; 1 us past the
            # grown events' end, so that the latest GPU end inside the
            # blocking call is theirs
            placed.upto(t)
            d = math.ceil(max(placed.end[id(e)] for e in before) - t - placed.cum[-1]) + 1
            if d > 1:
                points.append((t, d))
                syncs.append((t, d, lc))
                placed.add(t, d)
    info["grown"] = sorted(set(e["name"] for e in hit))
    info["grown_calls"] = len(hit)
    info["added_us"] = sum(e["dur"] * (args.factor - 1.0) for e in hit)
    info["waits_us"] = [round(x, 3) for _, x in sorted(points)]
    info["wait_steps"] = len(points)
    # GPU work over an inserted instant keeps its length (it was queued before)
    pc.insert_time(ev, points, {}, keep_gpu=True)
    for e in hit:
        e["dur"] = num(grown[id(e)], e["dur"])
    byid = dict((id(e), e) for e in ev if is_gpu(e) and (e["pid"], e["tid"]) in lanes)
    for i, (ts, d) in cascade(ev, lanes, {}).items():
        byid[i]["ts"] = num(ts, byid[i]["ts"])
    ts_sorted = [p[0] for p in points]  # sorted by pc.insert_time
    cum = [0.0]
    for _, x in points:
        cum.append(cum[-1] + x)
    for t, d, lc in syncs:
        # the blocking call sits where the launch began, the launch after it
        at = t + cum[bisect.bisect_left(ts_sorted, t)]
        ev.append({"ph": "X", "cat": lc.get("cat"), "name": "cudaStreamSynchronize",
                   "pid": lc["pid"], "tid": lc["tid"], "ts": num(at, t), "dur": num(d, t),
                   "args": {"planted": 1}})
    for old, to in args.renames:
        for e in hit:
            e["name"] = e["name"].replace(old, to)
    if args.renames:
        info["renamed"] = sorted(set(e["name"] for e in hit))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--name", required=True)
    ap.add_argument("--factor", type=float, default=2.8)
    ap.add_argument("--stream")
    ap.add_argument("--wait-at")
    ap.add_argument("--rename", default="")
    ap.add_argument("--rank", type=int)
    args = ap.parse_args()
    args.renames = [tuple(x.split("=", 1)) for x in args.rename.split(",") if "=" in x]
    return pc.drive(args, plant)


if __name__ == "__main__":
    sys.exit(main())
