#!/usr/bin/env python3
"""critpath_compare.py - compares the critical-path split of a summary written
by `perftracker summarize TRACE -o SUMMARY.json` ("critical_path.steps[i].split")
with the one tests/tools/critpath_reference.py computes from the same trace.

usage: critpath_compare.py SUMMARY.json REFERENCE.json [--tol 0.01]

Steps are matched in order (both list them in start order) and must carry the
same numbers. For every step and every kind (cpu, compute, communication,
memory, launch, gap) the two values may differ by at most tol x the step's ms
(the reference's); the step's ms itself likewise. Prints one line per
mismatch and exits 1 if there is any; otherwise prints
"critpath splits agree on N steps" and exits 0. Exit 2: bad usage or input.
"""
import json
import sys

KINDS = ("cpu", "compute", "communication", "memory", "launch", "gap")


def fail(msg):
    sys.stderr.write("critpath_compare: %s\n" % msg)
    sys.exit(2)


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail("%s: %s" % (path, e))


def main(argv):
    args = argv[1:]
    tol = 0.01
    paths = []
    i = 0
    while i < len(args):
        if args[i] == "--tol" and i + 1 < len(args):
            try:
                tol = float(args[i + 1])
            except ValueError:
                fail("--tol: not a number: %s" % args[i + 1])
            i += 2
        elif args[i].startswith("--tol="):
            tol = float(args[i][6:])
            i += 1
        elif args[i] in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            paths.append(args[i])
            i += 1
    if len(paths) != 2:
        sys.stderr.write(__doc__)
        return 2
    summ, ref = load(paths[0]), load(paths[1])
    cp = summ.get("critical_path") if isinstance(summ, dict) else None
    if not isinstance(cp, dict) or not isinstance(cp.get("steps"), list):
        print("%s: no critical_path.steps in the summary" % paths[0])
        return 1
    ssteps = cp["steps"]
    rsteps = ref.get("steps") if isinstance(ref, dict) else None
    if not isinstance(rsteps, list):
        fail("%s: no steps in the reference" % paths[1])
    bad = 0
    if len(ssteps) != len(rsteps):
        print("step count differs: summary %d, reference %d" % (len(ssteps), len(rsteps)))
        bad += 1
    for k, (s, r) in enumerate(zip(ssteps, rsteps)):
        num = r.get("number")
        if s.get("number") != num:
            print("step %d: number differs: summary %s, reference %s" % (k, s.get("number"), num))
            bad += 1
            continue
        ms = float(r.get("ms", 0))
        lim = tol * ms
        sms = float(s.get("ms", 0))
        if abs(sms - ms) > lim:
            print("step %s: ms differs: summary %.6f, reference %.6f" % (num, sms, ms))
            bad += 1
        ss, rs = s.get("split") or {}, r.get("split") or {}
        for kind in KINDS:
            a = ss.get(kind)
            b = rs.get(kind, 0.0)
            if a is None:
                print("step %s: %s missing in the summary's split" % (num, kind))
                bad += 1
                continue
            if abs(float(a) - float(b)) > lim:
                print("step %s: %s differs: summary %.6f ms, reference %.6f ms "
                      "(diff %.6f ms, %.2f%% of the step's %.3f ms; tol %.2f%%)"
                      % (num, kind, a, b, a - b, 100 * abs(a - b) / ms if ms else 0.0,
                         ms, 100 * tol))
                bad += 1
    if bad:
        return 1
    print("critpath splits agree on %d steps" % len(rsteps))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
