#!/usr/bin/env python3
"""plant_slow_steps.py - make chosen steps of a real Kineto trace slow the
way a training step usually gets slow: the main thread waits longer in a
user annotation, blocked in a copy or a synchronisation inside it.

usage: plant_slow_steps.py --steps N[,N...] --ms D[,D...] --annotation NAME
                           --gpu busy|idle IN OUT

In each step N (ProfilerStep#N), the first CPU event named NAME that starts
in it (a user annotation, e.g. `## wait_sparse_data_dist ##`, or any CPU
frame, e.g. `aten::to`) and holds a blocking runtime call R (cudaMemcpy*, cudaStreamSynchronize, ...: a call
whose GPU work g ends inside it; the longest such call in the annotation).
R, the annotation, the step and every CPU frame around them get D ms longer
and every later event (CPU and GPU, flows, the later ProfilerStep spans)
moves D later (tests/tools/plant_critpath.py's "insert D at X"):

  busy  the GPU works meanwhile: D is inserted at g's start and an NCCL
        kernel K of another stream that runs during R (or the last one
        before g) is stretched to end 1 us before g's new start, so g is
        queued behind K (the critical path's cross-stream wait).  K is the
        one NCCL kernel of the latest end before g whose stream has nothing
        else until g.  "waits_for": K.
  idle  the GPU is idle meanwhile: D is inserted at an instant inside R
        where no GPU event runs and no other CPU thread is inside a frame,
        after g's end when there is such an instant, else before g.
        "waits_for": null.

D may be one value for every step or one per step.  Prints one JSON line:
{"annotation", "gpu", "steps": [{"step", "ms", "call", "target", "waits_for",
"kernel_ms_before", "kernel_ms_after", "at_ms_into_step"}]}.  Standard
library only (plant_critpath.py's reader, writer and insert); timestamps
stay exact (decimal).
"""
import argparse
import decimal
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plant_critpath as pc  # noqa: E402

Dec = decimal.Decimal


def die(msg):
    print("plant_slow_steps: " + msg, file=sys.stderr)
    sys.exit(1)


def is_nccl(e):
    return pc.cat(e) in pc.KERNEL_CATS and "nccl" in str(e.get("name", "")).lower()


def find_call(T, n, ann):
    """(A, R, g): the annotation's first instance in step n and the longest
    blocking call inside it with its GPU work."""
    s = T.step(n)
    s0, s1 = s["ts"], pc.end(s)
    As = sorted((e for e in T.cpu if e.get("name") == ann and s0 <= e["ts"] < s1),
                key=lambda e: (pc.thread_of(e) != pc.thread_of(s), e["ts"]))
    if not As:
        die("no CPU event '%s' starts in ProfilerStep#%d" % (ann, n))
    blocking = T.blocking_calls(n)
    for A in As:
        calls = [(r, g) for r, g in blocking
                 if A["ts"] <= r["ts"] and pc.end(r) <= pc.end(A) and pc.thread_of(r) == pc.thread_of(A)]
        if calls:
            R, g = max(calls, key=lambda c: (c[0]["dur"], -c[0]["ts"]))
            return A, R, g
    die("no '%s' in step %d holds a blocking call (copy or synchronisation) whose GPU work "
        "ends inside it" % (ann, n))


def busy_kernel(T, R, g):
    """The NCCL kernel g gets queued behind: on another stream, ending at or
    before g's start, nothing else on its stream from its end to g's start;
    one running during R first, then the latest end."""
    X = g["ts"]
    best = None
    for k in T.gpu:
        if k["ts"] >= X:
            break
        if not is_nccl(k) or pc.stream_of(k) == pc.stream_of(g) or pc.end(k) > X:
            continue
        s, i = T.stream_pos[id(k)]
        nxt = T.by_stream[s][i + 1] if i + 1 < len(T.by_stream[s]) else None
        if nxt is not None and nxt["ts"] < X:
            continue
        score = (pc.end(k) > R["ts"], pc.end(k))
        if best is None or score > best[0]:
            best = (score, k)
    if best is None:
        die("busy: no NCCL kernel of another stream ends before the copy in %s with its stream "
            "free until then" % R["name"])
    return best[1]


def idle_instant(T, R, g):
    """An instant inside R with the GPU idle and no other CPU thread inside a
    frame: after g's end first, else before g's start."""
    r0, r1 = R["ts"], pc.end(R)
    th = pc.thread_of(R)
    after = [(a, b) for a, b in T.idle_gaps(r0, r1) if a >= pc.end(g)]
    before = [(a, b) for a, b in T.idle_gaps(r0, r1) if b <= g["ts"]]
    for pool in (after, before):
        for a, b in sorted(pool, key=lambda ab: ab[1] - ab[0], reverse=True):
            for x in (a, (a + b) / 2):
                if not (r0 < x < r1) or T.gpu_running(x) or T.other_threads_busy(x, th):
                    continue
                if T.deepest_at(th, x) is not R:
                    continue
                return x
    die("idle: no instant inside %s has the GPU idle" % R["name"])


def plant_one(doc, n, ann, D_ms, gpu):
    T = pc.Trace(doc)
    D = D_ms * 1000
    s0 = T.step(n)["ts"]
    A, R, g = find_call(T, n, ann)
    res = {"step": n, "ms": float(D_ms), "call": R["name"], "target": g["name"], "waits_for": None}
    if gpu == "busy":
        K = busy_kernel(T, R, g)
        X = g["ts"]
        before = K["dur"]
        pc.insert(T.evs, X, D)
        K["dur"] = X + D - Dec(1) - K["ts"]
        res.update(waits_for=K["name"], kernel_ms_before=float(before / 1000),
                   kernel_ms_after=float(K["dur"] / 1000))
    else:
        X = idle_instant(T, R, g)
        pc.insert(T.evs, X, D)
    res["at_ms_into_step"] = float((X - s0) / 1000)
    return res


def main(argv):
    p = argparse.ArgumentParser(description="plant slow steps (a longer wait in an annotation)")
    p.add_argument("--steps", required=True)
    p.add_argument("--ms", required=True)
    p.add_argument("--annotation", required=True)
    p.add_argument("--gpu", choices=["busy", "idle"], required=True)
    p.add_argument("files", nargs=2)
    a = p.parse_args(argv[1:])
    try:
        steps = [int(x) for x in a.steps.split(",")]
        ms = [Dec(x) for x in a.ms.split(",")]
    except (ValueError, decimal.InvalidOperation):
        p.error("--steps and --ms: comma-separated numbers")
    if len(ms) == 1:
        ms = ms * len(steps)
    if len(ms) != len(steps) or any(d <= 0 for d in ms):
        p.error("--ms: one positive value, or one per step")
    doc = pc.load(a.files[0])
    out = []
    # the last step first: a plant moves only what comes after it
    for n, d in sorted(zip(steps, ms), reverse=True):
        out.append(plant_one(doc, n, a.annotation, d, a.gpu))
    pc.save(doc, a.files[1])
    print(json.dumps({"annotation": a.annotation, "gpu": a.gpu,
                      "steps": sorted(out, key=lambda r: r["step"])}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
