#!/usr/bin/python3
"""count_events.py - independent expected counts for tests/unit/test_kineto.c.

Reads Kineto traces with Python's json module (stdlib only) and applies the
reader's documented rules (docs/input.md) to count the events the C reader
must keep, per pt_kind, plus steps, lanes and header fields.  Run it with
/usr/bin/python3 on the files in tests/data and paste the numbers into the
C test; it is kept so the numbers can be recomputed.

usage: count_events.py FILE...        (prints one C-ish line per file)
"""
import decimal
import gzip
import json
import re
import sys

KINDS = ["kernel", "comm_kernel", "memcpy", "memset", "runtime", "driver",
         "cpu_comm", "cpu_op", "python", "annotation", "step", "gpu_annotation"]

CATS = {
    "kernel": "kernel", "Kernel": "kernel",
    "gpu_memcpy": "memcpy", "Memcpy": "memcpy",
    "gpu_memset": "memset", "Memset": "memset",
    "cuda_runtime": "runtime", "Runtime": "runtime",
    "cuda_driver": "driver",
    "cpu_op": "cpu", "Operator": "cpu", "user_annotation": "annot", None: "cpu",
    "python_function": "python",
    "gpu_user_annotation": "gpu_annotation",
}
DAY_US = 86400 * 10**6
DTYPE = {"float": 4, "float32": 4, "double": 8, "float64": 8, "half": 2, "float16": 2,
         "bfloat16": 2, "int": 4, "int32": 4, "long": 8, "int64": 8, "long int": 8,
         "short": 2, "int16": 2, "char": 1, "int8": 1, "signed char": 1, "byte": 1,
         "uint8": 1, "unsigned char": 1, "bool": 1}


def ns(v):
    """µs (Decimal or int) -> int ns, rounding half away from zero."""
    return int((decimal.Decimal(v) * 1000).quantize(decimal.Decimal(1),
                                                    rounding=decimal.ROUND_HALF_UP))


def normalize(name):
    name = re.sub(r"\(\d+\):", ":", name)
    return re.sub(r" at 0x[0-9a-fA-F]*", " at 0x", name)


def key_of(kind, ev):
    name = ev["name"]
    a = ev.get("args") or {}
    if kind == "kernel" and isinstance(a.get("grid"), list) and isinstance(a.get("block"), list):
        return name + "_".join(map(str, a["grid"])) + "|" + "_".join(map(str, a["block"]))
    if kind in ("cpu_op", "python", "annotation"):
        return normalize(name)
    if kind == "cpu_comm" and name == "record_param_comms" and a.get("Collective name"):
        return name + ":" + a["Collective name"]
    return name


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw, parse_float=decimal.Decimal)


def kind_of(ev):
    cat = ev.get("cat")
    c = CATS.get(cat)
    if c is None:
        return None
    name = ev.get("name", "")
    if c == "kernel":
        n = name[5:] if name.startswith("void ") else name
        return "comm_kernel" if n.startswith(("nccl", "rccl")) else "kernel"
    if c in ("cpu", "annot"):
        if name.startswith("ProfilerStep#"):
            rest = name[len("ProfilerStep#"):]
            if rest.isdigit() and len(rest) <= 18:
                return "step"
            return "annotation" if c == "annot" else "cpu_op"
        if name.startswith(("gloo:", "c10d::", "nccl:")) or name == "record_param_comms":
            return "cpu_comm"
        return "annotation" if c == "annot" else "cpu_op"
    return c


def count(path):
    d = load(path)
    evs = d if isinstance(d, list) else d.get("traceEvents", [])
    hdr = {} if isinstance(d, list) else d
    counts = {k: 0 for k in KINDS}
    steps = set()
    lanes = set()
    skipped_warn = 0
    dur_sum = mem_bytes = comm_bytes = 0
    ts_min = end_max = None
    names = set()
    for ev in evs:
        if not isinstance(ev, dict) or ev.get("ph") != "X":
            continue
        if CATS.get(ev.get("cat"), "skip") == "skip" and ev.get("cat") is not None:
            continue
        if "name" not in ev:
            skipped_warn += 1
            continue
        k = kind_of(ev)
        if "ts" not in ev or "dur" not in ev:
            skipped_warn += 1
            continue
        if ev["dur"] < 0 or ev["dur"] > DAY_US:
            skipped_warn += 1
            continue
        if k == "step":
            n = int(ev["name"][len("ProfilerStep#"):])
            if n in steps:
                continue
            steps.add(n)
        counts[k] += 1
        base = hdr.get("baseTimeNanoseconds", 0)
        ts = ns(ev["ts"]) + base
        dur = ns(ev["dur"])
        dur_sum += dur
        ts_min = ts if ts_min is None else min(ts_min, ts)
        end_max = ts + dur if end_max is None else max(end_max, ts + dur)
        names.add(key_of(k, ev))
        a = ev.get("args") or {}
        if k in ("memcpy", "memset") and isinstance(a.get("bytes"), int) and a["bytes"] > 0:
            mem_bytes += a["bytes"]
        if k in ("comm_kernel", "cpu_comm"):
            nel = max(a.get("In msg nelems", -1), a.get("Out msg nelems", -1))
            dt = str(a.get("dtype", "")).lower()
            dt = dt[5:] if dt.startswith("c10::") else dt
            if nel > 0 and dt in DTYPE:
                comm_bytes += nel * DTYPE[dt]
        gpu = k in ("kernel", "comm_kernel", "memcpy", "memset", "gpu_annotation")
        lanes.add((str(ev.get("pid", 0)), str(ev.get("tid", 0)), gpu))
    di = hdr.get("distributedInfo") or {}
    dev = hdr.get("deviceProperties") or []
    return {
        "n": sum(counts.values()), "counts": counts, "steps": len(steps),
        "lanes": len(lanes), "warnings": skipped_warn,
        "rank": di.get("rank", -1), "world_size": di.get("world_size", -1),
        "backend": di.get("backend", ""), "ndevices": len(dev),
        "device": dev[0].get("name", "") if dev else "",
        "base": hdr.get("baseTimeNanoseconds", 0),
        "dur_sum": dur_sum, "ts_min": ts_min or 0, "end_max": end_max or 0,
        "mem_bytes": mem_bytes, "comm_bytes": comm_bytes, "nnames": len(names),
    }


def main():
    for path in sys.argv[1:]:
        c = count(path)
        print("/* %s */" % path)
        print("{ \"%s\", %d, { %s }, %d, %d, %d, %d, %d, \"%s\", %d, \"%s\", %dLL,\n"
              "  %dLL, %dLL, %dLL, %dULL, %dULL, %d }," % (
                  path.split("tests/data/", 1)[-1],
                  c["n"], ", ".join(str(c["counts"][k]) for k in KINDS), c["steps"],
                  c["lanes"], c["warnings"], c["rank"], c["world_size"], c["backend"],
                  c["ndevices"], c["device"], c["base"], c["dur_sum"], c["ts_min"],
                  c["end_max"], c["mem_bytes"], c["comm_bytes"], c["nnames"]))


if __name__ == "__main__":
    main()
