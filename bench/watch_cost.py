"""What the always-on watch costs the training (issue 32, docs/bench.md
"Always-on watch"): the demo job (examples/train_gloo.py, 4 DDP ranks on
gloo, CPU) for a fixed number of steps, alternately with the watch on
(PERFTRACKER_WATCH=1, the default) and off (PERFTRACKER_WATCH=0), in one
run: the median step time of each run (from the job's own --step-log),
the ratio on/off, the GIL the watch held per Flight Recorder read (its
debug log), the ranks' peak RSS, and the watch file's bytes per rank per
step.  A second part times the read itself on a full 2000-entry ring.

    .venv/bin/python bench/watch_cost.py [--pairs 3] [--steps 600]
"""
import argparse
import glob
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = os.environ.get("PYTHON") or os.path.join(ROOT, ".venv", "bin", "python")
TRAIN = os.path.join(ROOT, "examples", "train_gloo.py")
GIL_RE = re.compile(r"watch: (\d) dumps?, GIL held ([0-9.]+) ms")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def vm_hwm_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def run_job(tmp, n, steps, watch):
    """One run: the median step time (s) over all ranks' steps but the
    first 20, peak RSS per rank (kB), GIL times (ms), watch bytes per rank
    per step."""
    port = free_port()
    nd = os.path.join(tmp, "node")
    os.makedirs(nd, exist_ok=True)
    procs, logs = [], []
    for r in range(n):
        env = dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(n),
                   LOCAL_WORLD_SIZE=str(n), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                   OMP_NUM_THREADS="1", PYTHONPATH=os.path.join(ROOT, "python"),
                   PERFTRACKER_CONTROL_DIR=os.path.join(tmp, "control"),
                   PERFTRACKER_NODE_DIR=nd, PERFTRACKER_AUTO_AGENT="0",
                   PERFTRACKER_WATCH="1" if watch else "0", PERFTRACKER_DEBUG="1")
        log = open(os.path.join(tmp, "rank%d.log" % r), "w+")
        logs.append(log)
        procs.append(subprocess.Popen(
            [PY, TRAIN, "--steps", str(steps), "--slow-rank", "-1", "--load-ms", "10",
             "--step-log", os.path.join(tmp, "steps%d.json" % r)],
            env=env, stdout=log, stderr=subprocess.STDOUT))
    hwm = [0] * n
    wbytes = {}
    while any(p.poll() is None for p in procs):
        for i, p in enumerate(procs):
            hwm[i] = max(hwm[i], vm_hwm_kb(p.pid))
        for f in glob.glob(os.path.join(nd, "*", "*", "watch", "*.jsonl")):
            try:
                wbytes[f] = max(wbytes.get(f, 0), os.path.getsize(f))
            except OSError:
                pass
        time.sleep(0.2)
    times, gil = [], []
    for r in range(n):
        with open(os.path.join(tmp, "steps%d.json" % r)) as f:
            st = json.load(f)["steps"]
        # (step, before tracer.step(), after, thread cpu): step-to-step wall
        ends = [x[1] for x in st]
        times += [b - a for a, b in zip(ends[20:], ends[21:])]
        logs[r].seek(0)
        gil += [float(m.group(2)) for m in GIL_RE.finditer(logs[r].read()) if m.group(1) != "0"]
        logs[r].close()
    per_step = (sum(wbytes.values()) / n / steps) if wbytes else 0
    return statistics.median(times), hwm, gil, per_step


def full_ring_read(tmp):
    """A 2-rank job fills the 2000-entry ring (3000 small all-reduces),
    then steps while the watch reads: the GIL it held per read."""
    script = os.path.join(tmp, "ring.py")
    with open(script, "w") as f:
        f.write("import time, torch, torch.distributed as dist\n"
                "from perftracker import PerfTracker\n"
                "t = PerfTracker()\n"
                "dist.init_process_group('gloo')\n"
                "x = torch.ones(4)\n"
                "for i in range(3000):\n"
                "    dist.all_reduce(x)\n"
                "    if i % 10 == 0: t.step()\n"
                "for i in range(25):\n"
                "    time.sleep(0.5); dist.all_reduce(x); t.step()\n")
    port = free_port()
    procs = []
    for r in range(2):
        env = dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE="2",
                   LOCAL_WORLD_SIZE="2", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                   PYTHONPATH=os.path.join(ROOT, "python"), PERFTRACKER_DEBUG="1",
                   PERFTRACKER_CONTROL_DIR=os.path.join(tmp, "control-ring"),
                   PERFTRACKER_NODE_DIR=os.path.join(tmp, "node"),
                   PERFTRACKER_AUTO_AGENT="0")
        procs.append(subprocess.Popen([PY, script], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True))
    out = procs[0].communicate()[0]
    procs[1].wait()
    return [float(m.group(2)) for m in GIL_RE.finditer(out) if m.group(1) != "0"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--ranks", type=int, default=4)
    a = ap.parse_args()
    res = {True: [], False: []}
    for k in range(a.pairs):
        for watch in ((True, False) if k % 2 == 0 else (False, True)):
            tmp = tempfile.mkdtemp(prefix="pt_watch_cost_")
            try:
                res[watch].append(run_job(tmp, a.ranks, a.steps, watch))
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
            med, hwm, gil, bps = res[watch][-1]
            print("pair %d watch %-3s median step %.3f ms, peak RSS %s MB, %d reads "
                  "(GIL median %.3f ms), %.0f B/rank/step" %
                  (k + 1, "on" if watch else "off", med * 1e3,
                   "/".join("%.0f" % (h / 1024) for h in hwm), len(gil),
                   statistics.median(gil) if gil else 0, bps), flush=True)
    on = statistics.median(x[0] for x in res[True])
    off = statistics.median(x[0] for x in res[False])
    rss_on = statistics.median(statistics.median(x[1]) for x in res[True])
    rss_off = statistics.median(statistics.median(x[1]) for x in res[False])
    gil = [g for x in res[True] for g in x[2]]
    print("\nstep time, median of %d runs each: watch on %.3f ms, off %.3f ms: ratio %.4f" %
          (a.pairs, on * 1e3, off * 1e3, on / off))
    print("peak RSS per rank (median): on %.1f MB, off %.1f MB (+%.1f MB)" %
          (rss_on / 1024, rss_off / 1024, (rss_on - rss_off) / 1024))
    if gil:
        print("GIL held per read: median %.3f ms, max %.3f ms over %d reads" %
              (statistics.median(gil), max(gil), len(gil)))
    print("watch file: %.0f bytes per rank per step" %
          statistics.median(x[3] for x in res[True]))
    tmp = tempfile.mkdtemp(prefix="pt_watch_ring_")
    try:
        ring = full_ring_read(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if ring:
        print("full 2000-entry ring: GIL held per read median %.2f ms, max %.2f ms "
              "(%d reads)" % (statistics.median(ring), max(ring), len(ring)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
