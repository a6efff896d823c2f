"""A balanced job watched for minutes (issue 32, docs/bench.md "Always-on
watch"): the demo job (examples/train_gloo.py, 4 DDP ranks on gloo, no
slow rank) with the agent's watch, /metrics and PERFTRACKER_AUTO_PROFILE=1
for --seconds (300); /metrics scraped every second.  Prints the highest
straggler score each rank reached, whether any rank was ever flagged, and
whether a profile started (it should not).  Exit status 1 when a rank was
flagged or a profile started.

    .venv/bin/python bench/watch_balanced.py [--seconds 300] [--slow-rank R --slow-ms MS]
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from watch_cost import PY, ROOT, free_port  # noqa: E402

LINE = re.compile(r'^(perftracker_[a-z_]+)\{[^}]*rank="(\d+)"\} (\S+)$')


def scrape(port):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5) as r:
            text = r.read().decode()
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            out[(m.group(1), int(m.group(2)))] = float(m.group(3))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=300)
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--slow-rank", type=int, default=-1)
    ap.add_argument("--slow-ms", type=float, default=15)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="pt_watch_bal_")
    port, mport = free_port(), free_port()
    out = os.path.join(tmp, "auto-out")
    stop = os.path.join(tmp, "stop")
    procs = []
    try:
        for r in range(a.ranks):
            env = dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(a.ranks),
                       LOCAL_WORLD_SIZE=str(a.ranks), MASTER_ADDR="127.0.0.1",
                       MASTER_PORT=str(port), OMP_NUM_THREADS="1",
                       PYTHONPATH=os.path.join(ROOT, "python"),
                       PERFTRACKER_CONTROL_DIR=os.path.join(tmp, "control"),
                       PERFTRACKER_SPOOL_DIR=os.path.join(tmp, "spool"),
                       PERFTRACKER_BIN=os.path.join(ROOT, "build", "perftracker"),
                       PERFTRACKER_AUTO_PROFILE="1", PERFTRACKER_AUTO_OUTPUT_DIR=out,
                       PERFTRACKER_METRICS_PORT=str(mport))
            procs.append(subprocess.Popen(
                [PY, os.path.join(ROOT, "examples", "train_gloo.py"), "--seconds",
                 str(a.seconds + 60), "--stop-file", stop, "--slow-rank", str(a.slow_rank),
                 "--slow-ms", str(a.slow_ms)], env=env,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        t0 = time.time()
        best, flagged, samples = {}, set(), 0
        while time.time() < t0 + a.seconds:
            m = scrape(mport)
            if m:
                samples += 1
            for (f, r), v in m.items():
                if f == "perftracker_straggler_score" and samples > 30:
                    best[r] = max(best.get(r, 0), v)
                if f == "perftracker_straggler" and v:
                    flagged.add(r)
            time.sleep(1)
        profiles = glob.glob(os.path.join(out, "*"))
        print("%d ranks, %.0f s, %d scrapes" % (a.ranks, a.seconds, samples))
        print("highest straggler score per rank (after the first 30 s): %s" %
              ", ".join("%d: %.2f" % (r, best[r]) for r in sorted(best)))
        print("ranks ever flagged: %s; profiles started: %d" %
              (sorted(flagged) or "none", len(profiles)))
        return 1 if (flagged or profiles) and a.slow_rank < 0 else 0
    finally:
        open(stop, "w").close()
        for p in procs:
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
