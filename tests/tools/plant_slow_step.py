#!/usr/bin/env python3
"""plant_slow_step.py - make one function slower in one step of a real
Kineto trace, as if that call had taken DELTA ms longer: the call (the
first CPU event named NAME that starts inside ProfilerStep#STEP) and every
CPU event around it (its callers, the step itself) grow by DELTA; every
event that starts after the call's end moves DELTA later (GPU work too:
the GPU waited for the late launches).  Nothing else changes, so a
step-to-step comparison should name exactly that step and that function.

usage: plant_slow_step.py IN.json[.gz] OUT.json STEP NAME DELTA_MS
Prints the planted call's name, step and new duration.  Standard library
only; timestamps are kept exact (decimal).
"""
import decimal
import gzip
import json
import sys

GPU_CATS = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset",
            "gpu_user_annotation"}


def load(path):
    with open(path, "rb") as f:
        head = f.read(2)
    op = gzip.open if head == b"\x1f\x8b" else open
    with op(path, "rt", encoding="utf-8") as f:
        return json.load(f, parse_float=decimal.Decimal)


def main(argv):
    if len(argv) != 6:
        print(__doc__, file=sys.stderr)
        return 2
    src, out, step, name, delta = argv[1], argv[2], int(argv[3]), argv[4], decimal.Decimal(argv[5])
    doc = load(src)
    evs = doc["traceEvents"] if isinstance(doc, dict) else doc
    d_us = delta * 1000
    stepname = "ProfilerStep#%d" % step
    st = [e for e in evs if isinstance(e, dict) and e.get("name") == stepname and e.get("ph") == "X"]
    if not st:
        print("plant_slow_step: no %s in %s" % (stepname, src), file=sys.stderr)
        return 1
    s0 = decimal.Decimal(st[0]["ts"])
    s1 = s0 + decimal.Decimal(st[0]["dur"])
    calls = sorted((e for e in evs if isinstance(e, dict) and e.get("ph") == "X" and
                    e.get("name") == name and e.get("cat") not in GPU_CATS and
                    s0 <= decimal.Decimal(e["ts"]) < s1), key=lambda e: decimal.Decimal(e["ts"]))
    if not calls:
        print("plant_slow_step: no CPU event '%s' in %s" % (name, stepname), file=sys.stderr)
        return 1
    call = calls[0]
    T = decimal.Decimal(call["ts"]) + decimal.Decimal(call["dur"])  # the call's end
    for e in evs:
        if not isinstance(e, dict) or "ts" not in e:
            continue
        ts = decimal.Decimal(e["ts"])
        if ts >= T:
            e["ts"] = ts + d_us
        elif e.get("ph") == "X" and e.get("cat") not in GPU_CATS and \
                ts + decimal.Decimal(e.get("dur", 0)) >= T:
            # the call and what encloses it (on any CPU thread: the step)
            e["dur"] = decimal.Decimal(e["dur"]) + d_us

    text = dumps_exact(doc)
    op = gzip.open if out.endswith(".gz") else open
    with op(out, "wt", encoding="utf-8") as f:
        f.write(text)
    print("planted: '%s' in %s, %s ms -> %s ms" % (
        name, stepname, decimal.Decimal(call["dur"]) / 1000 - delta, decimal.Decimal(call["dur"]) / 1000))
    return 0


def dumps_exact(o):
    if isinstance(o, dict):
        return "{" + ",".join(json.dumps(k) + ":" + dumps_exact(v) for k, v in o.items()) + "}"
    if isinstance(o, list):
        return "[" + ",".join(dumps_exact(v) for v in o) + "]"
    if isinstance(o, decimal.Decimal):
        return format(o, "f")
    return json.dumps(o)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
