#!/usr/bin/env python3
"""critpath_reference.py - an independent computation (Python standard library
only) of the per-step critical-path split, to check `perftracker summarize`'s
"critical_path" (src/analysis/critpath.c) on real traces. Written from the
text of docs/summary.md ("Critical path", "Frames") and docs/input.md (how
events are read), not from the C code.

usage: critpath_reference.py TRACE.json[.gz] [--segments STEP]
                             [--launch-ready spec|min] [--frame-order kind|file]

Prints one JSON line:
  {"steps":[{"number":N,"ms":...,"split":{"cpu":..,"compute":..,
             "communication":..,"memory":..,"launch":..,"gap":..}}, ...]}
Each split sums to its step's ms (the walk is done in integer ns and checked;
exit 1 if not). Compare with a summary: tests/tools/critpath_compare.py.

--segments STEP   also print (on stderr) the walk's segments of step number STEP
                  (-1 without steps), in walk order (time descending):
                  start_ns end_ns kind lane name  [offsets from the step start, µs]
                  lane is C:pid/tid (CPU thread) or G:device/stream.
--launch-ready    the ready time of a GPU event g's launch call L:
                  "spec" (default, the current text): L's end when L ended at or
                  before g's start, else L's start (a synchronous copy is queued
                  when its call starts); "min": min(L end, g start), the rule of
                  an earlier draft of the text, which can never see a synchronous
                  copy wait behind other work (kept to show the difference).
--frame-order     CPU frames that start together and last equally long nest
                  "kind" (default: step, annotation, python function, op,
                  collective, runtime/driver, then file order) or "file".

Where the spec leaves a choice open, this script takes (and the C agrees on
probes made for each):
* the event of a stream at t: the one with start < t <= end; if events of the
  stream overlap, the one that starts last of those containing t;
* wait target (1) when several GPU events carry the call's correlation: the
  one with the latest end in (r0, r1] (ties: file order);
* ties between streams (latest end on another stream, for Synchronize and for
  cross-stream waits) and between threads (joins): the lane seen first in the
  file;
* a GPU event with neither a previous event on its stream nor a recorded
  launch has no ready time: no cross-stream wait (the walk pops);
* a duplicated ProfilerStep#N is walked once (the first); the duplicate stays a
  CPU frame;
* only JSON numbers count as ts/dur (a quoted "ts" drops the event).
"""
import bisect
import decimal
import json
import re
import sys

from breakdown_reference import load   # the trace as json with Decimal floats

KERNEL_CATS = {"kernel", "Kernel"}
MEMCPY_CATS = {"gpu_memcpy", "Memcpy"}
MEMSET_CATS = {"gpu_memset", "Memset"}
RUNTIME_CATS = {"cuda_runtime", "Runtime"}
DRIVER_CATS = {"cuda_driver"}
OP_CATS = {"cpu_op", "Operator", None}          # None: legacy events without "cat"
ANNOT_CATS = {"user_annotation"}
PYTHON_CATS = {"python_function"}
GPU_ANNOT_CATS = {"gpu_user_annotation"}

GPU_KINDS = {"kernel", "comm_kernel", "memcpy", "memset"}
FRAME_KINDS = {"cpu_op", "python", "annotation", "step", "cpu_comm", "runtime", "driver"}
# Tie order for frames with the same start and the same length ("Frames":
# annotation, Python function, op, collective; step and runtime/driver are not
# named there: a step encloses everything, a runtime call is a leaf).
KIND_RANK = {"step": 0, "annotation": 1, "python": 2, "cpu_op": 3, "cpu_comm": 4,
             "runtime": 5, "driver": 5}
SPLIT_KINDS = ("cpu", "compute", "communication", "memory", "launch", "gap")

STEP_RE = re.compile(r"ProfilerStep#([0-9]+)\Z")
DAY_NS = 86400 * 10**9
CROSS_STREAM_NS = 20000      # 20 µs
BLOCK_NS = 100000            # a runtime call longer than 100 µs blocked
GUARD_MOVES = 64
NEG_INF = float("-inf")


# ---------------------------------------------------------------- reading

_ONE = decimal.Decimal(1)
decimal.getcontext().prec = 120      # exact products for any digits a trace carries


def ns(v):
    """µs (JSON int or Decimal) -> integer ns, exact, digits below 1 ns rounded half up."""
    if isinstance(v, bool):
        raise ValueError("bool")
    if isinstance(v, int):
        return v * 1000
    d = decimal.Decimal(v) * 1000
    return int(d.quantize(_ONE, rounding=decimal.ROUND_HALF_UP))


def lane_id(v):
    """pid/tid as the reader reads them: all-digit strings and "stream N" are N."""
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return v
    if isinstance(v, decimal.Decimal):
        return int(v) if v == v.to_integral_value() else str(v)
    if isinstance(v, str):
        if v.isdigit():
            return int(v)
        if v.startswith("stream ") and v[7:].isdigit():
            return int(v[7:])
    return str(v)


def _glob(pat):
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c)
                              for c in pat) + r"\Z", re.S)


# docs/input.md "Communication kernels", built-in rules, first match wins;
# True = communication, False = compute.
_EP = r"(?:deep_ep::|uccl::|nccl_ep::|mscclpp::ep::)"
COMM_RULES = [(_glob(p), True) for p in (
    "nccl*", "rccl*", "msccl*", "*mscclpp::*", "nvshmem*", "*::nvshmem*",
    "*c10d::symmetric_memory::*", "*cross_device_reduce_1stage*",
    "*cross_device_reduce_2stage*", "*quickreduce::*", "*ShotAllReduceKernel*",
    "*allreduce_fusion_kernel*", "*userbuffers_*")]
COMM_RULES += [
    (re.compile(r".*" + _EP + r".*get_dispatch_layout.*\Z", re.S), False),
    (re.compile(r".*" + _EP + r".*(?:notify|dispatch|combine|clean_low_latency_buffer|barrier).*\Z",
                re.S), True),
]


def strip_kernel_name(name):
    n = name[5:] if name.startswith("void ") else name
    if n.endswith(")"):
        depth = 0
        for i in range(len(n) - 1, -1, -1):
            c = n[i]
            if c == ")":
                depth += 1
            elif c == "(":
                depth -= 1
                if depth == 0:
                    return n[:i]
    return n


_comm_memo = {}


def is_comm_kernel(name):
    r = _comm_memo.get(name)
    if r is None:
        n = strip_kernel_name(name)
        r = False
        for rx, comm in COMM_RULES:
            if rx.match(n):
                r = comm
                break
        _comm_memo[name] = r
    return r


def is_cpu_comm(name):
    return (name.startswith("gloo:") or name.startswith("c10d::") or name.startswith("nccl:")
            or name == "record_param_comms")


def kind_of(cat, name):
    if cat in KERNEL_CATS:
        return "comm_kernel" if is_comm_kernel(name) else "kernel"
    if cat in MEMCPY_CATS:
        return "memcpy"
    if cat in MEMSET_CATS:
        return "memset"
    if cat in RUNTIME_CATS:
        return "runtime"
    if cat in DRIVER_CATS:
        return "driver"
    if cat in OP_CATS or cat in ANNOT_CATS:
        if STEP_RE.match(name):
            return "step"
        if is_cpu_comm(name):
            return "cpu_comm"
        return "annotation" if cat in ANNOT_CATS else "cpu_op"
    if cat in PYTHON_CATS:
        return "python"
    if cat in GPU_ANNOT_CATS:
        return "gpu_annotation"
    return None


class Ev:
    __slots__ = ("idx", "kind", "s", "e", "lane", "name", "corr", "parent", "ce", "pos")

    def __init__(self, idx, kind, s, e, lane, name, corr):
        self.idx, self.kind, self.s, self.e, self.lane, self.name, self.corr = \
            idx, kind, s, e, lane, name, corr
        self.parent = None
        self.ce = e          # end clipped to the parent's (CPU frames)
        self.pos = -1        # position in its stream (GPU events)


class Sync:
    """A cuda_sync record (newer Kineto): the call with correlation `corr`
    waited for stream lane `waited` (None: any); a "Stream Wait Event" also
    names the stream lane that waits."""
    __slots__ = ("kind", "corr", "ts", "waited", "waiting")

    def __init__(self, kind, corr, ts, waited, waiting):
        self.kind, self.corr, self.ts, self.waited, self.waiting = kind, corr, ts, waited, waiting


SYNCS = []   # filled by read_events


def _int_arg(args, key):
    v = args.get(key)
    if isinstance(v, decimal.Decimal) and v == v.to_integral_value():
        v = int(v)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def read_sync(x):
    args = x.get("args")
    if not isinstance(args, dict):
        return None
    corr, stream, wait = _int_arg(args, "correlation"), _int_arg(args, "stream"), \
        _int_arg(args, "wait_on_stream")
    if corr is None or corr <= 0 or not isinstance(x.get("ts"), (int, decimal.Decimal)):
        return None
    pid = lane_id(x.get("pid"))
    name = x.get("name")
    lane = lambda sid: ("G", pid, sid) if sid is not None and sid >= 0 else None
    if name == "Stream Wait Event":
        return Sync("wait", corr, ns(x["ts"]), lane(wait), lane(stream))
    if name == "Event Sync":
        return Sync("event", corr, ns(x["ts"]), lane(wait), None)
    if name == "Stream Sync":
        return Sync("stream", corr, ns(x["ts"]), lane(stream), None)
    if name == "Context Sync":
        return Sync("context", corr, ns(x["ts"]), None, None)
    return None


def read_events(raw):
    evs = []
    for x in raw:
        if not isinstance(x, dict) or x.get("ph") != "X":
            continue
        if x.get("cat") == "cuda_sync":
            y = read_sync(x)
            if y is not None:
                SYNCS.append(y)
            continue
        ts, dur = x.get("ts"), x.get("dur")
        # JSON numbers only (a quoted "ts" is not read as a time, as in the C reader)
        if not isinstance(ts, (int, decimal.Decimal)) or isinstance(ts, bool) \
                or not isinstance(dur, (int, decimal.Decimal)) or isinstance(dur, bool):
            continue
        name = x.get("name", "")
        if not isinstance(name, str):
            name = str(name)
        kind = kind_of(x.get("cat"), name)
        if kind is None:
            continue
        try:
            s = ns(ts)
            d = ns(dur)
        except (ValueError, TypeError, decimal.InvalidOperation):
            continue
        if d < 0 or d > DAY_NS:
            continue
        gpu = kind in GPU_KINDS or kind == "gpu_annotation"
        lane = ("G" if gpu else "C", lane_id(x.get("pid")), lane_id(x.get("tid")))
        args = x.get("args")
        corr = args.get("correlation") if isinstance(args, dict) else None
        if isinstance(corr, decimal.Decimal):
            corr = int(corr)
        evs.append(Ev(len(evs), kind, s, s + d, lane, name, corr))
    return evs


# ---------------------------------------------------------------- graph

class Graph:
    def __init__(self, evs, frame_order="kind"):
        self.evs = evs
        lanes_order = {}
        for ev in evs:
            lanes_order.setdefault(ev.lane, len(lanes_order))
        self.lane_rank = lanes_order

        # CPU frames per thread, nested as in "Frames".
        by_thread = {}
        for ev in evs:
            if ev.kind in FRAME_KINDS and ev.e > ev.s:
                by_thread.setdefault(ev.lane, []).append(ev)
        self.threads = sorted(by_thread, key=lambda l: lanes_order[l])
        self.seg = {}        # thread -> (starts, ends, frames): exclusive segments (s, e]
        self.top = {}        # thread -> (starts, ends): top-level frames
        for th, fr in by_thread.items():
            if frame_order == "kind":
                fr.sort(key=lambda f: (f.s, -(f.e - f.s), KIND_RANK[f.kind], f.idx))
            else:
                fr.sort(key=lambda f: (f.s, -(f.e - f.s), f.idx))
            ss, es, fs = [], [], []
            ts_, te_ = [], []

            def emit(a, b, f):
                if b > a:
                    ss.append(a)
                    es.append(b)
                    fs.append(f)

            stack = []       # [frame, cursor]
            for f in fr:
                while stack and stack[-1][0].ce <= f.s:
                    g, cur = stack.pop()
                    emit(cur, g.ce, g)
                    if stack:
                        stack[-1][1] = g.ce
                if stack:
                    p = stack[-1]
                    f.parent = p[0]
                    f.ce = min(f.e, p[0].ce)
                    emit(p[1], f.s, p[0])
                    p[1] = f.ce
                else:
                    f.parent = None
                    f.ce = f.e
                    ts_.append(f.s)
                    te_.append(f.e)
                stack.append([f, f.s])
            while stack:
                g, cur = stack.pop()
                emit(cur, g.ce, g)
                if stack:
                    stack[-1][1] = g.ce
            self.seg[th] = (ss, es, fs)
            self.top[th] = (ts_, te_)

        # GPU events per stream, in start order.
        by_stream = {}
        for ev in evs:
            if ev.kind in GPU_KINDS and ev.e > ev.s:
                by_stream.setdefault(ev.lane, []).append(ev)
        self.streams = sorted(by_stream, key=lambda l: lanes_order[l])
        self.gpu = {}        # stream -> (starts, events, running max of ends)
        self.gpu_ends = {}   # stream -> sorted ends
        for st, gl in by_stream.items():
            gl.sort(key=lambda g: (g.s, g.idx))
            pm, m = [], None
            for g in gl:
                m = g.e if m is None or g.e > m else m
                pm.append(m)
            self.gpu[st] = ([g.s for g in gl], gl, pm)
            self.gpu_ends[st] = sorted(g.e for g in gl)
        for st, (_, gl, _) in self.gpu.items():
            for i, g in enumerate(gl):
                g.pos = i

        # Correlation: launch call <-> GPU events.
        self.launch_of = {}      # corr -> runtime/driver event (first in file order)
        self.gpu_of = {}         # corr -> [GPU events]
        for ev in evs:
            if ev.corr is None:
                continue
            if ev.kind in ("runtime", "driver"):
                self.launch_of.setdefault(ev.corr, ev)
            elif ev.kind in GPU_KINDS and ev.e > ev.s:
                self.gpu_of.setdefault(ev.corr, []).append(ev)
        self._wait = {}
        # cuda_sync records: by correlation id, and the stream waits per
        # waiting stream in time order
        self.sync_of = {}
        self.swaits = {}
        for y in SYNCS:
            self.sync_of.setdefault(y.corr, y)
            if y.kind == "wait" and y.waiting is not None:
                self.swaits.setdefault(y.waiting, []).append(y)
        for l in self.swaits.values():
            l.sort(key=lambda y: y.ts)

    def stream_wait(self, stream, lts, pts):
        """The stream that `stream` was told to wait for by the latest stream
        wait recorded in [pts, lts], or None."""
        best = None
        for y in self.swaits.get(stream, ()):
            if pts <= y.ts <= lts:
                best = y
        return best.waited if best is not None else None

    def latest_end_on(self, st, lo, hi):
        es = self.gpu_ends.get(st)
        if not es:
            return None
        j = bisect.bisect_right(es, hi) - 1
        return (st, es[j]) if j >= 0 and es[j] > lo else None

    # -- CPU
    def deepest(self, th, t):
        """(frame, a) for the deepest frame at t on thread th, or None."""
        seg = self.seg.get(th)
        if seg is None:
            return None
        ss, es, fs = seg
        i = bisect.bisect_left(es, t)
        if i < len(es) and ss[i] < t:
            return fs[i], ss[i]
        return None

    def prev_frame_end(self, th, t):
        top = self.top.get(th)
        if not top:
            return None
        j = bisect.bisect_right(top[1], t) - 1
        return top[1][j] if j >= 0 else None

    def latest_end_other_streams(self, lo, hi, exclude=None):
        """(stream, end) of the GPU event of a stream other than `exclude` with
        the latest end in (lo, hi]; ties: the stream seen first in the file."""
        best = None
        for st in self.streams:
            if st == exclude:
                continue
            es = self.gpu_ends[st]
            j = bisect.bisect_right(es, hi) - 1
            if j >= 0 and es[j] > lo and (best is None or es[j] > best[1]):
                best = (st, es[j])
        return best

    def wait_target(self, r):
        """(stream, end) of the wait target of runtime/driver call r, or None."""
        if r.idx in self._wait:
            return self._wait[r.idx]
        res = None
        if r.corr is not None:
            for g in self.gpu_of.get(r.corr, ()):
                if r.s < g.e <= r.e and (res is None or g.e > res[1]):
                    res = (g.lane, g.e)
        if res is None and ("Synchronize" in r.name or r.e - r.s > BLOCK_NS):
            y = self.sync_of.get(r.corr) if r.corr is not None else None
            if y is not None and y.kind in ("event", "stream") and y.waited is not None:
                res = self.latest_end_on(y.waited, r.s, r.e)
            else:
                res = self.latest_end_other_streams(r.s, r.e)
        self._wait[r.idx] = res
        return res

    def join(self, th, f, a, t):
        """(thread, end) of the latest-ending top-level frame of another thread
        that starts at or after f's start and ends in (a, t]; None if none."""
        best = None
        for b in self.threads:
            if b == th:
                continue
            ts_, te_ = self.top[b]
            j = bisect.bisect_right(te_, t) - 1
            if j >= 0 and te_[j] > a and ts_[j] >= f.s and (best is None or te_[j] > best[1]):
                best = (b, te_[j])
        return best

    # -- GPU
    def gpu_at(self, st, t):
        """The event of stream st with start < t <= end. Events of one stream
        should not overlap; where they do (real traces have a few), the one that
        starts last of those containing t."""
        g = self.gpu.get(st)
        if g is None:
            return None
        starts, gl, prefmax = g
        i = bisect.bisect_left(starts, t) - 1
        while i >= 0 and prefmax[i] >= t:
            if gl[i].e >= t:
                return gl[i]
            i -= 1
        return None

    def prev_on_stream(self, g):
        i = g.pos
        return self.gpu[g.lane][1][i - 1] if i > 0 else None


def gpu_split_kind(g):
    if g.kind == "kernel":
        return "compute"
    if g.kind == "comm_kernel":
        return "communication"
    return "memory"


def walk(G, T0, T1, step_thread, start_lane=None, segments=None, launch_ready="spec"):
    """Walks [T0, T1] backwards; returns {kind: ns}."""
    split = dict.fromkeys(SPLIT_KINDS, 0)

    def add(kind, a, b, lane, name):
        a, b = max(a, T0), min(b, T1)
        if b > a:
            split[kind] += b - a
            if segments is not None:
                segments.append((a, b, kind, lane, name))

    lane = start_lane if start_lane is not None else step_thread
    t = T1
    waiters = []         # (thread, frame)
    still = 0

    def pop(lane, t):
        """A gap on `lane` at t: returns the next (lane, t)."""
        waiters[:] = [w for w in waiters if w[1].s < t]
        if waiters:
            th, _ = waiters.pop()
            return th, t
        if lane != step_thread and step_thread is not None:
            return step_thread, t
        p = G.prev_frame_end(lane, t) if lane is not None else None
        if p is None or p < T0:
            p = T0
        add("gap", p, t, lane, "")
        return lane, p

    while t > T0:
        told = t
        if lane is not None and lane[0] == "C":
            d = G.deepest(lane, t)
            if d is None:
                lane, t = pop(lane, t)
            else:
                f, a = d
                if f.kind in ("runtime", "driver"):
                    w = G.wait_target(f)
                    if w is not None and a < w[1] <= t:
                        add("launch", w[1], t, lane, f.name)
                        waiters.append((lane, f))
                        lane, t = w[0], w[1]
                    else:
                        add("launch", a, t, lane, f.name)
                        t = a
                elif f.kind == "cpu_comm":
                    add("communication", a, t, lane, f.name)
                    t = a
                else:
                    j = G.join(lane, f, a, t)
                    if j is not None:
                        add("cpu", j[1], t, lane, f.name)
                        waiters.append((lane, f))
                        lane, t = j[0], j[1]
                    else:
                        add("cpu", a, t, lane, f.name)
                        t = a
        elif lane is not None:
            g = G.gpu_at(lane, t)
            if g is None:
                lane, t = pop(lane, t)
            else:
                add(gpu_split_kind(g), g.s, t, lane, g.name)
                gs = g.s
                cands = []   # (ready, tie order, lane, kind, name)
                P = G.prev_on_stream(g)
                p = min(P.e, gs) if P is not None else NEG_INF
                L = G.launch_of.get(g.corr) if g.corr is not None else None
                if L is None:
                    r = NEG_INF
                elif launch_ready == "min":
                    r = min(L.e, gs)    # the earlier draft's rule: see --launch-ready
                else:
                    # the call's end when it ended at or before g's start, else its
                    # start (a synchronous copy is queued when its call starts)
                    r = L.e if L.e <= gs else L.s
                if P is not None:
                    cands.append((p, 0, lane, "gap", P.name))
                ready = max(p, r)
                # Without a previous event and a launch there is no ready time
                # to wait from: no cross-stream wait.
                W = None
                if L is not None:
                    PL = G.launch_of.get(P.corr) if P is not None and P.corr is not None else None
                    W = G.stream_wait(lane, L.s, PL.s if PL is not None else NEG_INF)
                if W is not None:
                    X = G.latest_end_on(W, ready, gs) if ready != NEG_INF else None
                    if X is not None:
                        cands.append((X[1], 1, X[0], "gap", "stream wait"))
                elif (P is not None or L is not None) and gs - ready > CROSS_STREAM_NS:
                    X = G.latest_end_other_streams(ready, gs, exclude=lane)
                    if X is not None:
                        cands.append((X[1], 1, X[0], "gap", "cross-stream"))
                if L is not None:
                    cands.append((r, 2, L.lane, "launch", L.name))
                if not cands:
                    lane, t = pop(lane, gs)
                else:
                    best = max(cands, key=lambda c: (c[0], -c[1]))
                    add(best[3], best[0], gs, lane if best[3] == "gap" else best[2], best[4])
                    lane, t = best[2], best[0]
        else:
            add("gap", T0, t, None, "")
            t = T0
        if t < told:
            still = 0
        else:
            still += 1
            if still >= GUARD_MOVES:
                add("gap", T0, t, lane, "guard")
                t = T0
    return split


# ---------------------------------------------------------------- main

def compute(evs, frame_order="kind", seg_step=None, launch_ready="spec"):
    G = Graph(evs, frame_order)
    steps, seen = [], set()
    for ev in evs:
        if ev.kind == "step":
            n = int(STEP_RE.match(ev.name).group(1))
            if n not in seen:
                seen.add(n)
                steps.append(ev)
    steps.sort(key=lambda e: (e.s, e.idx))
    out = []
    segs_out = None
    work = []
    if steps:
        for st in steps:
            work.append((int(STEP_RE.match(st.name).group(1)), st.s, st.e, st.lane, st.lane))
    elif evs:
        w0 = min(e.s for e in evs)
        w1 = max(e.e for e in evs)
        last = max(evs, key=lambda e: (e.e, -e.idx))
        cnt = {}
        for e in evs:
            if e.lane[0] == "C":
                cnt[e.lane] = cnt.get(e.lane, 0) + 1
        order = {}
        for e in evs:
            order.setdefault(e.lane, e.idx)
        th = max(cnt, key=lambda l: (cnt[l], -order[l])) if cnt else None
        work.append((-1, w0, w1, th, last.lane))
    for number, T0, T1, th, lane0 in work:
        segs = [] if seg_step is not None and number == seg_step else None
        split = walk(G, T0, T1, th, lane0, segs, launch_ready)
        total = sum(split.values())
        if total != T1 - T0:
            raise SystemExit("critpath_reference: step %d: split sums to %d ns, step is %d ns"
                             % (number, total, T1 - T0))
        ms = (T1 - T0) / 1e6
        sp = {k: split[k] / 1e6 for k in SPLIT_KINDS}
        if abs(sum(sp.values()) - ms) > 1e-6:
            raise SystemExit("critpath_reference: step %d: split does not sum to ms" % number)
        out.append({"number": number, "ms": ms, "split": sp})
        if segs is not None:
            segs_out = (T0, segs)
    return out, segs_out


def lane_str(lane):
    if lane is None:
        return "-"
    return "%s:%s/%s" % lane


def main(argv):
    args = argv[1:]
    seg_step = None
    frame_order = "kind"
    launch_ready = "spec"
    paths = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--segments" and i + 1 < len(args):
            seg_step = int(args[i + 1])
            i += 2
        elif a == "--frame-order" and i + 1 < len(args) and args[i + 1] in ("kind", "file"):
            frame_order = args[i + 1]
            i += 2
        elif a == "--launch-ready" and i + 1 < len(args) and args[i + 1] in ("spec", "min"):
            launch_ready = args[i + 1]
            i += 2
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        elif a.startswith("-"):
            sys.stderr.write("critpath_reference: unknown option %s\n" % a)
            return 2
        else:
            paths.append(a)
            i += 1
    if len(paths) != 1:
        sys.stderr.write(__doc__)
        return 2
    evs = read_events(load(paths[0]))
    if not evs:
        sys.stderr.write("critpath_reference: %s: no complete events of a known category\n"
                         % paths[0])
        return 1
    steps, segs = compute(evs, frame_order, seg_step, launch_ready)
    print(json.dumps({"steps": steps}))
    if seg_step is not None:
        if segs is None:
            sys.stderr.write("critpath_reference: no step %d\n" % seg_step)
            return 1
        T0, sl = segs
        for a, b, kind, lane, name in sl:
            sys.stderr.write("%d %d %s %s %s    [+%.3f .. +%.3f us, %.3f us]\n"
                             % (a, b, kind, lane_str(lane), name,
                                (a - T0) / 1e3, (b - T0) / 1e3, (b - a) / 1e3))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
