#!/usr/bin/env python3
"""plant_critpath.py - plant one fault on the critical path of one step of a
real Kineto trace (Chrome-trace JSON, object form with "traceEvents"), so
that a per-step critical path analysis (docs/summary.md "Critical path") has
exactly one right answer: that step, and the function named on stdout.

usage: plant_critpath.py --fault F --step N --ms D [--annotation NAME]
                         [--kernel NAME] [--op NAME] [--pick K]
                         [--copies K] IN OUT
       plant_critpath.py --list F --step N IN     (the candidates, best first)
       plant_critpath.py --verify ORIG PLANTED --step N --ms D [--added K]
                         [--slack-us US]

IN may be .json or .json.gz; OUT is gzip when its name ends in .gz.  Prints
one JSON line: {"fault", "step", "function" (what a correct diagnosis must
name), "ms", "at" (the instant, trace us), "at_ms_into_step", and the
fault's details: "annotation", "call", "waits_for", "kernel", "op",
"added" (events added)}.  Standard library only; timestamps are kept
exact (decimal).

The one primitive is *insert D at X*: every event (any lane, any phase,
flows and instants too) starting at or after X moves D later; every CPU
event spanning X (start < X < end: the blocked call, its ancestors, the
ProfilerStep, the trace span) gets D longer; a GPU event spanning X is left
alone (the events after it on its stream move, so nothing overlaps).  The
planted step gets D longer, later steps move by D, nesting and stream order
are kept, kernels never start before their launches.

Faults (all in ProfilerStep#N):
  block-idle    a blocking runtime call R (cuda*Synchronize, or a memcpy
                whose own GPU copy - same correlation - ends inside it) in a
                user annotation A blocks D longer while the GPU is idle:
                D inserted at an instant inside R where no GPU event runs
                (preferably before R's GPU work starts) and no other CPU
                thread is inside a frame.  function: A (the innermost user
                annotation around R).
  block-busy    R's GPU work g is queued behind D ms more GPU work of
                kernels that run in every step: on g's stream, right before
                g, k copies (same name, grid, block; new correlation ids) of
                the non-NCCL kernel with the longest usual (median) run among
                those in every step, each at most that long (k = D / usual,
                rounded up; --copies 1: one copy of D ms; --kernel NAME: that
                kernel), back to back, each launched by a new
                cudaLaunchKernel on R's thread just before R, inside A (in
                the room before R, else room made there: "launch_room_us"),
                with flow pairs like the trace's own; D inserted at g's old
                start.  function: A ("kernel", "copies" name what it
                waited behind).  No instance runs longer than usual, so "the
                kernel ran longer" is not the answer.
  kernel-longer a kernel K on R's critical path (the chain of GPU events R
                waits for, followed backwards from R's target the way the
                critical path does: previous event on the stream, cross-
                stream wait, launch) runs D longer: K extended, D inserted at
                K's old end, where R is blocked and no other CPU thread is
                inside a frame; compute kernels before NCCL ones, longest
                first.  function: K.
  cpu-longer    a cpu_op O (not a step; no runtime calls under it) runs D
                longer while the GPU is idle: D inserted at O's end (O and
                its callers extended).  Chosen where no GPU event runs at
                that instant, the next GPU work is launched after it, and no
                other CPU thread is inside a frame; aten:: ops with no aten::
                caller first, longest first.  function: O.

Defaults: the best candidate by the ranking --list prints (--pick K takes
the K-th, 0-based, one per distinct name); --annotation/--kernel/--op pick
by name (exact, else the first name containing it).

--verify checks PLANTED against ORIG: the event count grew by --added (the
plant's "added"), step N grew by D (+ up to --slack-us: the plant's
"launch_room_us"), the other steps kept their durations and the later ones
moved by as much, no more nesting breaks per CPU thread, overlaps per GPU
stream or kernels before their launches than ORIG had.
"""
import argparse
import bisect
import decimal
import gzip
import json
import sys

Dec = decimal.Decimal
GPU_CATS = {"kernel", "gpu_memcpy", "memcpy", "gpu_memset", "memset"}
GPU_LANE_CATS = GPU_CATS | {"gpu_user_annotation"}
RUNTIME_CATS = {"cuda_runtime", "runtime", "cuda_driver", "driver"}
ANNOT_CATS = {"user_annotation"}
OP_CATS = {"cpu_op", "operator"}
KERNEL_CATS = {"kernel"}
CROSS_US = Dec(20)          # the critical path's cross-stream threshold


def die(msg):
    print("plant_critpath: " + msg, file=sys.stderr)
    sys.exit(1)


def load(path):
    with open(path, "rb") as f:
        head = f.read(2)
    op = gzip.open if head == b"\x1f\x8b" else open
    with op(path, "rt", encoding="utf-8") as f:
        doc = json.load(f, parse_float=Dec, parse_int=Dec)
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        die("%s: not a Chrome trace object with traceEvents" % path)
    return doc


def dumps_exact(o):
    if isinstance(o, dict):
        return "{" + ",".join(json.dumps(k) + ":" + dumps_exact(v) for k, v in o.items()) + "}"
    if isinstance(o, list):
        return "[" + ",".join(dumps_exact(v) for v in o) + "]"
    if isinstance(o, Dec):
        return format(o, "f")
    return json.dumps(o)


def save(doc, path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "wt", encoding="utf-8") as f:
        f.write(dumps_exact(doc))


def cat(e):
    return str(e.get("cat", "")).lower()


def is_x(e):
    return isinstance(e, dict) and e.get("ph") == "X" and "ts" in e and "dur" in e


def is_gpu_lane(e):
    return cat(e) in GPU_LANE_CATS


def end(e):
    return e["ts"] + e["dur"]


def corr(e):
    a = e.get("args")
    if isinstance(a, dict):
        c = a.get("correlation")
        if c is not None:
            return int(c)
    return None


def stream_of(e):
    a = e.get("args")
    if isinstance(a, dict) and a.get("stream") is not None:
        return (str(e.get("pid")), str(a.get("stream")))
    return (str(e.get("pid")), str(e.get("tid")))


def thread_of(e):
    return (str(e.get("pid")), str(e.get("tid")))


def kernel_key(e):
    a = e.get("args") if isinstance(e.get("args"), dict) else {}
    return (e.get("name"), json.dumps(a.get("grid"), default=str), json.dumps(a.get("block"), default=str))


def step_no(e):
    n = str(e.get("name", ""))
    if n.startswith("ProfilerStep#"):
        try:
            return int(n[len("ProfilerStep#"):])
        except ValueError:
            return None
    return None


class Trace:
    """Indexes over one trace (read only; rebuilt after a change)."""

    def __init__(self, doc):
        self.doc = doc
        self.evs = doc["traceEvents"]
        xs = [e for e in self.evs if is_x(e) and e["dur"] >= 0]
        self.steps = {}
        for e in xs:
            n = step_no(e)
            if n is not None and cat(e) not in GPU_LANE_CATS:
                self.steps[n] = e
        self.gpu = sorted((e for e in xs if cat(e) in GPU_CATS and e["dur"] > 0), key=lambda e: e["ts"])
        self.cpu = [e for e in xs if not is_gpu_lane(e) and e.get("ph") == "X" and cat(e) != "trace"]
        self.by_stream = {}
        for e in self.gpu:
            self.by_stream.setdefault(stream_of(e), []).append(e)
        self.stream_pos = {}
        for s, l in self.by_stream.items():
            for i, e in enumerate(l):
                self.stream_pos[id(e)] = (s, i)
        self.gpu_by_corr = {}
        for e in self.gpu:
            c = corr(e)
            if c is not None:
                self.gpu_by_corr.setdefault(c, e)
        self.launch_by_corr = {}
        for e in self.cpu:
            if cat(e) in RUNTIME_CATS:
                c = corr(e)
                if c is not None:
                    self.launch_by_corr.setdefault(c, e)
        # CPU frames per thread, nested: start ascending, longer first
        self.by_thread = {}
        for e in self.cpu:
            if e["dur"] > 0:
                self.by_thread.setdefault(thread_of(e), []).append(e)
        self.parent = {}
        for t, l in self.by_thread.items():
            l.sort(key=lambda e: (e["ts"], -e["dur"]))
            st = []
            for e in l:
                while st and end(st[-1]) <= e["ts"]:
                    st.pop()
                self.parent[id(e)] = st[-1] if st else None
                st.append(e)
        # union of GPU busy intervals, all streams
        iv = []
        for e in self.gpu:
            a, b = e["ts"], end(e)
            if iv and a <= iv[-1][1]:
                if b > iv[-1][1]:
                    iv[-1][1] = b
            else:
                iv.append([a, b])
        self.busy = iv
        self.busy_starts = [a for a, _ in iv]
        self.gpu_starts = [e["ts"] for e in self.gpu]
        self._tops_cache = {}
        self._key_steps = None
        self._starts = {}

    def step(self, n):
        s = self.steps.get(n)
        if s is None:
            die("no ProfilerStep#%d in the trace (steps: %s)" % (n, sorted(self.steps)))
        return s

    def ancestors(self, e):
        out = []
        p = self.parent.get(id(e))
        while p is not None:
            out.append(p)
            p = self.parent.get(id(p))
        return out

    def innermost_annotation(self, e):
        for a in self.ancestors(e):
            if cat(a) in ANNOT_CATS:
                return a
        return None

    def gpu_running(self, x):
        """Is some GPU event running at instant x (start < x < end)?"""
        i = bisect.bisect_left(self.busy_starts, x) - 1
        return i >= 0 and self.busy[i][1] > x

    def idle_gaps(self, a, b):
        """GPU-idle intervals inside (a, b)."""
        out = []
        cur = a
        i = max(bisect.bisect_right(self.busy_starts, a) - 1, 0)
        while i < len(self.busy) and self.busy[i][0] < b:
            s, e = self.busy[i]
            if e > cur:
                if s > cur:
                    out.append((cur, min(s, b)))
                cur = max(cur, e)
            i += 1
        if cur < b:
            out.append((cur, b))
        return out

    def _tops(self, t):
        """Thread t's outermost frames below the steps: sorted starts and
        the running max of their ends."""
        c = self._tops_cache.get(t)
        if c is None:
            tops = [e for e in self.by_thread.get(t, []) if step_no(e) is None and
                    all(step_no(a) is not None for a in self.ancestors(e))]
            starts = [e["ts"] for e in tops]
            mx, m = [], None
            for e in tops:
                m = end(e) if m is None or end(e) > m else m
                mx.append(m)
            c = self._tops_cache[t] = (starts, mx)
        return c

    def other_threads_busy(self, x, thread):
        """Is another CPU thread than `thread` inside a frame (below its
        steps) at instant x?"""
        for t in self.by_thread:
            if t == thread:
                continue
            starts, mx = self._tops(t)
            i = bisect.bisect_left(starts, x)
            if i > 0 and mx[i - 1] > x:
                return True
        return False

    def deepest_at(self, thread, x):
        """The innermost frame of `thread` with start < x < end."""
        l = self.by_thread.get(thread, [])
        starts = self._starts.get(thread)
        if starts is None:
            starts = self._starts[thread] = [e["ts"] for e in l]
        i = bisect.bisect_left(starts, x)
        e = l[i - 1] if i > 0 else None
        while e is not None and not (e["ts"] < x < end(e)):
            e = self.parent.get(id(e))
        return e

    def wait_target(self, r):
        """The critical path's wait target of runtime call r (or None)."""
        r0, r1 = r["ts"], end(r)
        c = corr(r)
        g = self.gpu_by_corr.get(c) if c is not None else None
        if g is not None and r0 < end(g) <= r1:
            return g
        if "Synchronize" in str(r.get("name", "")):
            best = None
            for e in self.gpu:
                if e["ts"] >= r1:
                    break
                if r0 < end(e) <= r1 and (best is None or end(e) > end(best)):
                    best = e
            return best
        return None

    def blocking_calls(self, n):
        s = self.step(n)
        s0, s1 = s["ts"], end(s)
        out = []
        for e in self.cpu:
            if cat(e) in RUNTIME_CATS and s0 <= e["ts"] < s1 and e["dur"] > 0:
                nm = str(e.get("name", ""))
                if "Synchronize" in nm or "Memcpy" in nm or "Memset" in nm:
                    g = self.wait_target(e)
                    if g is not None:
                        out.append((e, g))
        out.sort(key=lambda p: p[0]["ts"])
        return out

    def prev_on_stream(self, g):
        s, i = self.stream_pos[id(g)]
        return self.by_stream[s][i - 1] if i > 0 else None

    def gpu_chain(self, g, floor):
        """GPU events the critical path walks through backwards from g
        (g first), choosing at each start as the walk does: the previous
        event on the stream (ready at its end), a cross-stream wait (when
        the event starts more than 20 us after both that and its launch's
        ready time: the latest other-stream end in between) or the launch
        (ready at its end, or at its start when it was still running: a
        synchronous copy queues its work at its start); the latest ready
        wins, ties in that order.  Stops at a launch, or at an event that
        ends at or before floor."""
        chain = [g]
        cur = g
        for _ in range(100000):
            t = cur["ts"]
            prev = self.prev_on_stream(cur)
            pe = min(end(prev), t) if prev is not None else None
            L = self.launch_by_corr.get(corr(cur)) if corr(cur) is not None else None
            lr = (end(L) if end(L) <= t else L["ts"]) if L is not None else None
            ready = max([v for v in (pe, lr) if v is not None], default=None)
            cross = None
            if ready is None or t - ready > CROSS_US:
                s = stream_of(cur)
                for e in self.gpu[:bisect.bisect_left(self.gpu_starts, t)]:
                    if stream_of(e) == s or str(e.get("pid")) != str(cur.get("pid")):
                        continue
                    if (ready is None or ready < end(e)) and end(e) <= t and \
                            (cross is None or end(e) > end(cross)):
                        cross = e
            xe = end(cross) if cross is not None else None
            NEG = Dec("-Infinity")
            if prev is not None and pe >= (xe if xe is not None else NEG) and pe >= (lr if lr is not None else NEG):
                nxt = prev
            elif cross is not None and xe >= (lr if lr is not None else NEG):
                nxt = cross
            else:
                break
            if end(nxt) <= floor:
                break
            chain.append(nxt)
            cur = nxt
        return chain

    def runs_every_step(self, key):
        """Does a kernel with this (name, grid, block) start in every step?"""
        if self._key_steps is None:
            spans = sorted((s["ts"], end(s), n) for n, s in self.steps.items())
            starts = [a for a, _, _ in spans]
            ks = {}
            for e in self.gpu:
                if cat(e) in KERNEL_CATS:
                    i = bisect.bisect_right(starts, e["ts"]) - 1
                    if i >= 0 and e["ts"] < spans[i][1]:
                        ks.setdefault(kernel_key(e), set()).add(spans[i][2])
            self._key_steps = ks
        return len(self._key_steps.get(key, ())) == len(self.steps)


# ---------------------------------------------------------------- candidates

def cand_block(T, n, need_idle):
    """(R, g, A, X) for block-idle (need_idle) or block-busy, best first."""
    out = []
    thr_main = thread_of(T.step(n))
    for r, g in T.blocking_calls(n):
        A = T.innermost_annotation(r)
        if A is None:
            continue
        th = thread_of(r)
        if T.deepest_at(th, r["ts"] + Dec("0.0001")) is not r:
            continue
        if need_idle:
            r0, r1 = r["ts"], end(r)
            gaps = T.idle_gaps(r0, r1)
            gs = g["ts"]
            before = [(a, b) for a, b in gaps if b <= gs or a < gs]
            before = [(a, min(b, gs)) for a, b in before if min(b, gs) > a]
            pool = before or gaps
            X = None
            for a, b in sorted(pool, key=lambda ab: (ab[1] - ab[0], ab[0]), reverse=True):
                x = a if a > r0 else (r0 + 1 if r0 + 1 < b else (a + b) / 2)
                if not (r0 < x < r1 and a <= x < b):
                    continue
                if T.gpu_running(x) or T.other_threads_busy(x, th):
                    continue
                if T.deepest_at(th, x) is not r:
                    continue
                X = x
                break
            if X is None:
                continue
            score = (th == thr_main, bool(before), r["dur"])
            out.append((score, r, g, A, X))
        else:
            if g["ts"] < r["ts"]:
                continue
            X = g["ts"]
            score = (th == thr_main, r["dur"])
            out.append((score, r, g, A, X))
    out.sort(key=lambda c: c[0], reverse=True)
    return [c[1:] for c in out]


def cand_kernel(T, n):
    """(K, R, X) kernels on a blocking call's GPU chain, compute kernels
    before NCCL ones, longest first."""
    out = []
    seen = set()
    for r, g in T.blocking_calls(n):
        th = thread_of(r)
        r0, r1 = r["ts"], end(r)
        for k in T.gpu_chain(g, r0):
            if id(k) in seen or cat(k) not in KERNEL_CATS:
                continue
            X = end(k)
            if not (r0 < X < r1):
                continue
            if T.deepest_at(th, X) is not r or T.other_threads_busy(X, th):
                continue
            seen.add(id(k))
            comm = str(k.get("name", "")).lower().startswith("nccl")
            out.append(((not comm, k["dur"]), k, r, X))
    out.sort(key=lambda c: c[0], reverse=True)
    return [c[1:] for c in out]


def cand_op(T, n):
    """(O, X) cpu_ops with the GPU idle at their end, longest first."""
    s = T.step(n)
    s0, s1 = s["ts"], end(s)
    th_main = thread_of(s)
    has_rt = set()
    for e in T.cpu:
        if cat(e) in RUNTIME_CATS and s0 <= e["ts"] < s1:
            for a in T.ancestors(e):
                has_rt.add(id(a))
    out = []
    for e in T.cpu:
        if cat(e) not in OP_CATS or step_no(e) is not None or not (s0 <= e["ts"] and end(e) < s1):
            continue
        if e["dur"] <= 0 or id(e) in has_rt:
            continue
        X = end(e)
        th = thread_of(e)
        if T.gpu_running(X) or T.other_threads_busy(X, th):
            continue
        # the GPU waits for the CPU: its next event is launched after X
        i = bisect.bisect_left(T.busy_starts, X)
        if i < len(T.busy):
            j = bisect.bisect_left(T.gpu_starts, T.busy[i][0])
            nxt = T.gpu[j]
            L = T.launch_by_corr.get(corr(nxt)) if corr(nxt) is not None else None
            if L is None or L["ts"] < X:
                continue
        aten = str(e.get("name", "")).startswith("aten::")
        outer = not any(str(a.get("name", "")).startswith("aten::") for a in T.ancestors(e))
        out.append(((th == th_main, aten, aten and outer, e["dur"]), e, X))
    out.sort(key=lambda c: c[0], reverse=True)
    return [c[1:] for c in out]


def by_name(cands, name, getname, pick, what):
    names = []
    for c in cands:
        nm = getname(c)
        if nm not in names:
            names.append(nm)
    if name is not None:
        exact = [c for c in cands if getname(c) == name]
        if not exact:
            sub = [nm for nm in names if name in nm]
            if not sub:
                die("no %s named '%s' fits in that step (candidates: %s)" % (what, name, names[:12]))
            exact = [c for c in cands if getname(c) == sub[0]]
        return exact[0]
    if pick >= len(names):
        die("no %s candidate #%d in that step (%d: %s)" % (what, pick, len(names), names[:12]))
    return [c for c in cands if getname(c) == names[pick]][0]


# ---------------------------------------------------------------- planting

def insert(evs, X, D, extend=(), keep=()):
    """Insert D us at instant X (see the module doc).  extend: ids of events
    to lengthen though they do not span X (a kernel ending at X, a cpu_op
    and its callers ending at X); keep: ids to leave alone."""
    extend = set(extend)
    keep = set(keep)
    for e in evs:
        if not isinstance(e, dict) or "ts" not in e or id(e) in keep:
            continue
        if e.get("ph") == "M":
            continue
        ts = e["ts"]
        if id(e) in extend:
            e["dur"] = e["dur"] + D
        elif ts >= X:
            e["ts"] = ts + D
        elif is_x(e) and not is_gpu_lane(e) and ts + e["dur"] > X:
            e["dur"] = e["dur"] + D
        elif is_x(e) and cat(e) == "gpu_user_annotation" and ts + e["dur"] > X:
            e["dur"] = e["dur"] + D


def fresh_id(evs):
    m = 0
    for e in evs:
        if not isinstance(e, dict):
            continue
        if e.get("ph") in ("s", "f", "t") and isinstance(e.get("id"), (int, Dec)):
            m = max(m, int(e["id"]))
        a = e.get("args")
        if isinstance(a, dict):
            for k in ("correlation", "External id", "external id"):
                v = a.get(k)
                if isinstance(v, (int, Dec)):
                    m = max(m, int(v))
    return m + 1


def flow_template(T):
    """The trace's own launch flow pair (s on the CPU, f on the GPU)."""
    byid = {}
    for e in T.evs:
        if isinstance(e, dict) and e.get("ph") in ("s", "f") and "id" in e:
            byid.setdefault(str(e["id"]), {})[e["ph"]] = e
    for k in T.gpu:
        c = corr(k)
        if cat(k) in KERNEL_CATS and c is not None and str(c) in byid:
            p = byid[str(c)]
            if "s" in p and "f" in p:
                return p["s"], p["f"]
    return None, None


def typical_launch_us(T):
    d = sorted(e["dur"] for e in T.cpu if e.get("name") == "cudaLaunchKernel" and e["dur"] > 0)
    return min(d[len(d) // 2], Dec(5)) if d else Dec(5)


def busy_kernel(T, name=None):
    """The kernel block-busy queues: of the kernels (not NCCL) that run in
    every step (same name, grid, block), the one with the longest median
    run (or the first whose name contains `name`); with that median."""
    runs = {}
    for e in T.gpu:
        if cat(e) in KERNEL_CATS and not str(e.get("name", "")).lower().startswith("nccl"):
            runs.setdefault(kernel_key(e), []).append(e)
    best = None
    for key, l in runs.items():
        if name is not None and name not in str(key[0]):
            continue
        d = sorted(e["dur"] for e in l)
        med = d[len(d) // 2]
        if (best is None or med > best[1]) and T.runs_every_step(key):
            best = (l[0], med)
    if best is None:
        die("block-busy: no kernel%s runs in every step" % (" named '%s'" % name if name else ""))
    return best


def plant(doc, args):
    T = Trace(doc)
    n, D = args.step, Dec(str(args.ms)) * 1000
    step = T.step(n)
    res = {"fault": args.fault, "step": n, "ms": float(args.ms)}
    if args.fault == "block-idle":
        cands = cand_block(T, n, True)
        if not cands:
            die("block-idle: no user annotation in step %d holds a blocking call with the GPU idle" % n)
        R, g, A, X = by_name(cands, args.annotation, lambda c: c[2]["name"], args.pick, "annotation")
        insert(T.evs, X, D)
        res.update(function=A["name"], annotation=A["name"], call=R["name"], waits_for=g["name"],
                   at=float(X))
    elif args.fault == "block-busy":
        cands = cand_block(T, n, False)
        if not cands:
            die("block-busy: no user annotation in step %d holds a blocking call" % n)
        R, g, A, X = by_name(cands, args.annotation, lambda c: c[2]["name"], args.pick, "annotation")
        src, typical = busy_kernel(T, args.kernel)
        # copies of it at its usual length (one of D ms with --copies 1)
        k = args.copies if args.copies else max(1, int((D / typical).to_integral_value(decimal.ROUND_CEILING)))
        q = (D / k).to_integral_value(decimal.ROUND_FLOOR)
        rem = D - q * k                  # spread over the first copies, 1 us or less each
        durs = [q + min(Dec(1), max(Dec(0), rem - i)) for i in range(k)]
        # room for the k launches right before R, inside R's parent
        th = thread_of(R)
        P = T.parent.get(id(R))
        lo = P["ts"] if P is not None else A["ts"]
        anc = set(id(a) for a in T.ancestors(R))
        for e in T.by_thread[th]:
            if e["ts"] >= R["ts"]:
                break
            if id(e) not in anc and end(e) <= R["ts"]:
                lo = max(lo, end(e))
        l = typical_launch_us(T)
        need = l * k
        r0 = R["ts"]
        added_room = Dec(0)
        if R["ts"] - lo >= need:
            l0 = r0 - need
        else:
            # no room: make some (everything from R's start on moves later)
            insert(T.evs, r0, need)
            X = X + need
            l0 = r0
            added_room = need
        # D at g's old start; the copies fill [X, X + D] on g's stream
        insert(T.evs, X, D)
        fs, ff = flow_template(T)
        cid = fresh_id(T.evs)
        base = R["args"] if isinstance(R.get("args"), dict) else {}
        ga = g["args"] if isinstance(g.get("args"), dict) else {}
        new, t = [], X
        for i in range(k):
            c = Dec(cid + i)
            kern = json.loads(dumps_exact(src), parse_float=Dec, parse_int=Dec)
            kern.update(ts=t, dur=durs[i], pid=g.get("pid"), tid=g.get("tid"))
            ka = kern.setdefault("args", {})
            for key in ("correlation", "External id", "external id"):
                if key in ka:
                    ka[key] = c
            ka["correlation"] = c
            if "stream" in ga:
                ka["stream"] = ga["stream"]
            la = {}
            if "External id" in base or "external id" in base:
                la["External id" if "External id" in base else "external id"] = c
            la["cbid"] = Dec(211)
            la["correlation"] = c
            launch = {"ph": "X", "cat": R.get("cat"), "name": "cudaLaunchKernel", "pid": R.get("pid"),
                      "tid": R.get("tid"), "ts": l0 + l * i, "dur": l, "args": la}
            new += [launch, kern]
            if fs is not None:
                s_ev, f_ev = dict(fs), dict(ff)
                s_ev.update(id=c, ts=launch["ts"], pid=R.get("pid"), tid=R.get("tid"))
                f_ev.update(id=c, ts=t, pid=g.get("pid"), tid=g.get("tid"))
                new += [s_ev, f_ev]
            t += durs[i]
        T.evs.extend(new)      # the readers sort; appended at the end
        res.update(function=A["name"], annotation=A["name"], call=R["name"], waits_for=g["name"],
                   kernel=src["name"], copies=k, copy_ms=float(durs[0] / 1000),
                   usual_ms=float(typical / 1000), added=len(new),
                   launch_room_us=float(added_room), at=float(X))
    elif args.fault == "kernel-longer":
        cands = cand_kernel(T, n)
        if not cands:
            die("kernel-longer: no kernel on a blocking call's GPU chain in step %d" % n)
        K, R, X = by_name(cands, args.kernel, lambda c: c[0]["name"], args.pick, "kernel")
        insert(T.evs, X, D, extend=[id(K)])
        A = T.innermost_annotation(R)
        res.update(function=K["name"], kernel=K["name"], call=R["name"],
                   annotation=A["name"] if A is not None else None, at=float(X))
    elif args.fault == "cpu-longer":
        cands = cand_op(T, n)
        if not cands:
            die("cpu-longer: no cpu_op in step %d ends with the GPU idle" % n)
        O, X = by_name(cands, args.op, lambda c: c[0]["name"], args.pick, "op")
        # O and the callers ending with it grow; nothing else spans X
        ext = [id(O)] + [id(a) for a in T.ancestors(O) if end(a) == X]
        insert(T.evs, X, D, extend=ext)
        res.update(function=O["name"], op=O["name"], at=float(X))
    else:
        die("unknown fault '%s'" % args.fault)
    res["at_ms_into_step"] = float((Dec(str(res["at"])) - step["ts"]) / 1000)
    return res


# ---------------------------------------------------------------- listing

def list_cands(doc, args):
    T = Trace(doc)
    n = args.step
    if args.list in ("block-idle", "block-busy"):
        for R, g, A, X in cand_block(T, n, args.list == "block-idle"):
            print("%s\t%s\t%.0f us\t%s\tX=+%s us" % (A["name"], R["name"], R["dur"], g["name"][:60],
                                                   X - T.step(n)["ts"]))
    elif args.list == "kernel-longer":
        for K, R, X in cand_kernel(T, n):
            print("%s\t%.0f us\t%s\tX=+%s us" % (K["name"][:100], K["dur"], R["name"], X - T.step(n)["ts"]))
    elif args.list == "cpu-longer":
        for O, X in cand_op(T, n):
            print("%s\t%.0f us\t%s\tX=+%s us" % (O["name"][:100], O["dur"], O.get("tid"), X - T.step(n)["ts"]))
    else:
        die("unknown fault '%s'" % args.list)


# ---------------------------------------------------------------- verifying

def problems(doc):
    """(nesting breaks, stream overlaps, kernels before launch) counts."""
    T = Trace(doc)
    nest = 0
    for t, l in T.by_thread.items():
        st = []
        for e in l:
            while st and end(st[-1]) <= e["ts"]:
                st.pop()
            if st and end(e) > end(st[-1]):
                nest += 1
            st.append(e)
    over = 0
    for s, l in T.by_stream.items():
        for a, b in zip(l, l[1:]):
            if b["ts"] < end(a):
                over += 1
    early = 0
    for c, g in T.gpu_by_corr.items():
        L = T.launch_by_corr.get(c)
        if L is not None and g["ts"] < L["ts"]:
            early += 1
    return T, nest, over, early


def verify(args):
    a, b = load(args.verify[0]), load(args.verify[1])
    errs = []
    na, nb = len(a["traceEvents"]), len(b["traceEvents"])
    if nb != na + args.added:
        errs.append("event count %d, expected %d + %d" % (nb, na, args.added))
    Ta, nest_a, over_a, early_a = problems(a)
    Tb, nest_b, over_b, early_b = problems(b)
    for what, x, y in (("nesting breaks", nest_a, nest_b), ("stream overlaps", over_a, over_b),
                       ("kernels before their launch", early_a, early_b)):
        if y > x:
            errs.append("%s: %d, the original has %d" % (what, y, x))
    D = Dec(str(args.ms)) * 1000
    if sorted(Ta.steps) != sorted(Tb.steps):
        errs.append("steps differ")
    n0 = args.step
    if n0 not in Ta.steps or n0 not in Tb.steps:
        errs.append("no step %d" % n0)
    else:
        grow = Tb.steps[n0]["dur"] - Ta.steps[n0]["dur"]
        if not (D <= grow <= D + Dec(args.slack_us)):
            errs.append("step %d grew by %s us, expected %s" % (n0, grow, D))
        t0 = Ta.steps[n0]["ts"]
        for n, sa in Ta.steps.items():
            sb = Tb.steps.get(n)
            if sb is None or n == n0:
                continue
            if sb["dur"] != sa["dur"]:
                errs.append("step %d grew by %s us" % (n, sb["dur"] - sa["dur"]))
            want = grow if sa["ts"] > t0 else 0
            if sb["ts"] - sa["ts"] != want:
                errs.append("step %d moved by %s us, expected %s" % (n, sb["ts"] - sa["ts"], want))
    # GPU events: the same multiset of durations except the planted ones
    da = sorted(e["dur"] for e in Ta.gpu)
    db = sorted(e["dur"] for e in Tb.gpu)
    if not 0 <= len(db) - len(da) <= args.added:
        errs.append("GPU events %d -> %d" % (len(da), len(db)))
    for e in errs:
        print("verify: " + e, file=sys.stderr)
    print(json.dumps({"ok": not errs, "nesting": [nest_a, nest_b], "overlaps": [over_a, over_b],
                      "early": [early_a, early_b]}))
    return 0 if not errs else 1


def main(argv):
    p = argparse.ArgumentParser(description="plant a critical-path fault in one step of a Kineto trace")
    p.add_argument("--fault", choices=["block-idle", "block-busy", "kernel-longer", "cpu-longer"])
    p.add_argument("--list", choices=["block-idle", "block-busy", "kernel-longer", "cpu-longer"])
    p.add_argument("--verify", nargs=2, metavar=("ORIG", "PLANTED"))
    p.add_argument("--step", type=int, required=True)
    p.add_argument("--ms", type=str, default="30")
    p.add_argument("--annotation")
    p.add_argument("--kernel")
    p.add_argument("--op")
    p.add_argument("--pick", type=int, default=0)
    p.add_argument("--copies", type=int, default=0)
    p.add_argument("--slack-us", type=str, default="0")
    p.add_argument("--added", type=int, default=0)
    p.add_argument("files", nargs="*")
    args = p.parse_args(argv[1:])
    if args.verify:
        return verify(args)
    if args.list:
        if len(args.files) != 1:
            p.error("--list needs IN")
        list_cands(load(args.files[0]), args)
        return 0
    if not args.fault or len(args.files) != 2:
        p.error("need --fault F, IN and OUT")
    try:
        if Dec(args.ms) <= 0:
            raise decimal.InvalidOperation
    except decimal.InvalidOperation:
        p.error("--ms: not a positive number")
    doc = load(args.files[0])
    res = plant(doc, args)
    save(doc, args.files[1])
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
