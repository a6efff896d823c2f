"""bench/soak.py - the online path, many times: the long version of
tests/py/test_soak.py (docs/bench.md, "Online collection soak").

  PYTHONPATH=python .venv/bin/python bench/soak.py [--count N] [--json OUT]

Per count: a fresh 4-worker job (CPU-bound gloo ranks, more busy processes
than cores) triggered 2 s after its workers registered, then the same job
triggered back to back with varying --wait and --steps; every fifth count
also two jobs triggered at the same moment with a third starting meanwhile.
All with the default folders under one temporary PERFTRACKER_ROOT.  Prints
one line per trigger and a summary: triggers, traces lost, workers that
profiled other steps than announced, workers of another job, re-arms,
seconds from the last trace to the report (median, p90, max), and jobs whose
node channel or spool folder outlived them by 10 s.  Exit 1 when anything
was lost or misaligned.
"""
import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "py"))
import soaklib  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=10, help="fresh jobs (10)")
    ap.add_argument("--back-to-back", type=int, default=2,
                    help="triggers of each fresh job after its first (2)")
    ap.add_argument("--json", help="write the numbers here")
    a = ap.parse_args()
    rounds, leftovers, t0 = [], [], time.time()
    plan = [(0, 2), (5, 3), (2, 4), (10, 2)]

    def record(r, what):
        rounds.append(r)
        print(r.line(what), flush=True)
        if not r.ok():
            print(r.explain()[:3000], flush=True)

    for i in range(a.count):
        host = soaklib.Host()
        try:
            w, s = plan[i % len(plan)]
            j, r = soaklib.fresh_job_round(host, age=2.0 + (i % 2), wait=w, steps=s,
                                           by_job_option=bool(i % 2))
            record(r, "%d fresh (%.0f s old)" % (i, 2.0 + (i % 2)))
            for k in range(a.back_to_back):
                w, s = plan[(i + k + 1) % len(plan)]
                record(j.trigger(wait=w, steps=s, by_job_option=bool(k % 2)),
                       "%d back to back %d" % (i, k + 1))
            j.stop()
            left = soaklib.gone_within(j, 10.0)
            if left:
                leftovers.append(left)
            if i % 5 == 4:
                (ra, rb), jobs = soaklib.concurrent_rounds(host, steps=2 + (i % 2))
                record(ra, "%d concurrent A" % i)
                record(rb, "%d concurrent B" % i)
                for x in jobs:
                    x.stop()
                for x in jobs:
                    left = soaklib.gone_within(x, 10.0)
                    if left:
                        leftovers.append(left)
        finally:
            host.close()
    lat = sorted(r.after_last_trace for r in rounds if r.after_last_trace is not None)
    out = {
        "triggers": len(rounds),
        "ok": sum(r.ok() for r in rounds),
        "traces lost": sum(len(r.lost) for r in rounds),
        "workers on other steps": sum(len(r.misaligned) for r in rounds),
        "workers of another job": sum(len(r.foreign) for r in rounds),
        "re-arms": sum(r.rearms for r in rounds),
        "triggers re-armed": sum(r.rearms > 0 for r in rounds),
        "report after last trace s (median)": statistics.median(lat) if lat else None,
        "report after last trace s (p90)": lat[int(0.9 * (len(lat) - 1))] if lat else None,
        "report after last trace s (max)": lat[-1] if lat else None,
        "trigger s (median)": statistics.median(r.seconds for r in rounds) if rounds else None,
        "jobs with leftovers after 10 s": len(leftovers),
        "wall s": time.time() - t0,
    }
    for k, v in out.items():
        print("%-38s %s" % (k, "%.2f" % v if isinstance(v, float) else v))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    bad = out["traces lost"] or out["workers on other steps"] or out["workers of another job"]
    return 1 if bad or out["ok"] != out["triggers"] else 0


if __name__ == "__main__":
    sys.exit(main())
