#!/usr/bin/env python3
"""breakdown_reference.py - an independent computation (standard library
only) of where one worker's GPU time goes, to check `perftracker
summarize`'s "gpu_breakdown", "gpu_util" and "gpu_compute_util"
(src/analysis/breakdown.c) on real traces, written from the definitions in
docs/summary.md "GPU breakdown", not from the C code.

Also prints HTA's temporal breakdown of the same trace, as HTA defines it
(kernel span of the rank instead of the ProfilerStep window; memory
operations and communication both "non-compute"), for docs/summary.md.

usage: breakdown_reference.py TRACE.json[.gz] [--json]
"""
import decimal
import gzip
import json
import sys

KERNEL_CATS = {"kernel", "Kernel"}
MEM_CATS = {"gpu_memcpy", "Memcpy", "gpu_memset", "Memset"}
RUNTIME_CATS = {"cuda_runtime", "Runtime", "cuda_driver"}
FRAME_CATS = {"cpu_op", "Operator", "python_function", "user_annotation"}


def load(path):
    with open(path, "rb") as f:
        head = f.read(2)
    op = gzip.open if head == b"\x1f\x8b" else open
    with op(path, "rt", encoding="utf-8") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def ns(v):
    """µs (int or Decimal) -> integer ns, exactly as written."""
    return int((decimal.Decimal(v) * 1000).to_integral_value(decimal.ROUND_HALF_EVEN))


def is_comm_kernel(name):
    n = name[5:] if name.startswith("void ") else name
    return (n.startswith("nccl") or n.startswith("rccl") or n.startswith("msccl")
            or "deep_ep::" in n and "get_dispatch_layout" not in n)


def union(iv):
    out = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1][1] = e
        else:
            out.append([s, e])
    return out


def measure(u):
    return sum(e - s for s, e in u)


def clip(iv, w0, w1):
    return [(max(s, w0), min(e, w1)) for s, e in iv if min(e, w1) > max(s, w0)]


def runtime_kind(name):
    if "Synchronize" in name or name in ("cudaMemcpy", "hipMemcpy", "cudaMemcpy2D") \
            or name.startswith("cuMemcpyDtoH"):
        return "sync"
    if any(k in name for k in ("LaunchKernel", "cuLaunch", "GraphLaunch",
                               "LaunchCooperativeKernel", "ModuleLaunchKernel")):
        return "launch"
    if "Async" in name:
        return "launch"
    return "host"


def is_dataloader(name):
    low = name.lower()
    return "dataloader" in low or "data_loader" in low or "_next_data" in low


def compute(events):
    steps, comp, comm, mem, runtime, frames = [], [], [], [], [], []
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X" or "dur" not in e or "ts" not in e:
            continue
        cat, name = e.get("cat", ""), e.get("name", "")
        s = ns(e["ts"])
        t = s + ns(e["dur"])
        tid = (e.get("pid"), e.get("tid"))
        if name.startswith("ProfilerStep#") and name[13:].isdigit() and cat in FRAME_CATS | {""}:
            steps.append((s, t))
        elif cat in KERNEL_CATS:
            (comm if is_comm_kernel(name) else comp).append((s, t))
        elif cat in MEM_CATS:
            mem.append((s, t))
        elif cat in RUNTIME_CATS:
            runtime.append((s, t, tid, name))
        elif cat in FRAME_CATS:
            frames.append((s, t, tid, name))
    if steps:
        w0, w1 = min(s for s, _ in steps), max(e for _, e in steps)
    else:
        allt = [(s, t) for s, t in comp + comm + mem] + [(x[0], x[1]) for x in runtime + frames]
        w0, w1 = min(s for s, _ in allt), max(e for _, e in allt)
    W = w1 - w0
    u_comp = union(clip(comp, w0, w1))
    u_kern = union(clip(comp + comm, w0, w1))
    u_all = union(clip(comp + comm + mem, w0, w1))
    u_comm = union(clip(comm, w0, w1))
    idle_gaps, prev = [], w0
    for s, e in u_all:
        if s > prev:
            idle_gaps.append((prev, s))
        prev = e
    if w1 > prev:
        idle_gaps.append((prev, w1))

    # The launching thread: most runtime calls, else most frames.
    count = {}
    for x in runtime:
        count[x[2]] = count.get(x[2], 0) + 1
    if not count:
        for x in frames:
            count[x[2]] = count.get(x[2], 0) + 1
    main = max(count, key=lambda k: count[k]) if count else None

    # Cause intervals on that thread: outermost frames (busy), outermost
    # data-loader frames, runtime calls by kind.
    causes = []
    mf = sorted(((s, -(t - s), t, n) for s, t, tid, n in frames if tid == main))
    stack = []  # (end, in_dataloader)
    for s, negd, t, n in mf:
        while stack and stack[-1][0] <= s:
            stack.pop()
        end = min(t, stack[-1][0]) if stack else t
        in_dl = bool(stack) and stack[-1][1]
        dl = is_dataloader(n)
        if not stack:
            causes.append((s, end, 3))          # host work
        if dl and not in_dl:
            causes.append((s, end, 1))          # data loader
        stack.append((end, in_dl or dl))
    for s, t, tid, n in runtime:
        if tid != main or not (t > w0 and s < w1 or (t == s and w0 <= s <= w1)):
            continue
        k = runtime_kind(n)
        causes.append((s, t, {"sync": 0, "launch": 2, "host": 3}[k]))
    # Priority sweep inside the idle gaps: sync > data loader > launch > host > none.
    pts = []
    for s, t, c in causes:
        s, t = max(s, w0), min(t, w1)
        if t > s:
            pts.append((s, 1, c))
            pts.append((t, -1, c))
    for s, t in idle_gaps:
        pts.append((s, 1, 5))
        pts.append((t, -1, 5))
    pts.sort(key=lambda p: p[0])
    cnt = [0] * 6
    by = [0] * 5
    prev = w0
    for t, d, c in pts:
        if t > prev:
            if cnt[5] > 0:
                top = next((k for k in range(4) if cnt[k] > 0), 4)
                by[top] += t - prev
            prev = t
        cnt[c] += d

    # kernels, short kernels, launches inside the window
    kern = [(s, t) for s, t in comp + comm if min(t, w1) > max(s, w0)]
    launches = sum(1 for s, t, tid, n in runtime
                   if ((t > w0 and s < w1) or (t == s and w0 <= s <= w1))
                   and runtime_kind(n) == "launch" and "Async" not in n)

    # HTA's temporal breakdown: over the rank's kernel span (all GPU
    # kernels incl. memory ones), compute = compute kernels' union,
    # non-compute = the rest of the kernels' union, idle = the rest.
    gpu_all = comp + comm + mem
    hta = {}
    if gpu_all:
        k0, k1 = min(s for s, _ in gpu_all), max(t for _, t in gpu_all)
        span = k1 - k0
        a = measure(union(gpu_all))
        c = measure(union(comp))
        hta = {"span_ms": span / 1e6, "compute_pct": 100 * c / span,
               "non_compute_pct": 100 * (a - c) / span, "idle_pct": 100 * (span - a) / span}
    return {
        "window_ms": W / 1e6,
        "gpu_util": measure(u_kern) / W if W else 0,
        "gpu_compute_util": measure(u_comp) / W if W else 0,
        "compute_ms": measure(u_comp) / 1e6,
        "communication_ms": (measure(u_kern) - measure(u_comp)) / 1e6,
        "memory_ms": (measure(u_all) - measure(u_kern)) / 1e6,
        "idle_ms": (W - measure(u_all)) / 1e6,
        "communication_total_ms": measure(u_comm) / 1e6,
        "idle": {k: v / 1e6 for k, v in zip(("sync", "dataloader", "launch", "host", "none"), by)},
        "kernels": len(kern),
        "short_kernels": sum(1 for s, t in kern if t - s < 10000),
        "launches": launches,
        "hta": hta,
    }


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    r = compute(load(argv[1]))
    if "--json" in argv:
        print(json.dumps(r))
    else:
        for k, v in r.items():
            print(f"{k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
