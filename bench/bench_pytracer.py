"""Which tracer records Python functions on a torch with Kineto
(PERFTRACKER_PYTHON_TRACER, docs/collector.md): Kineto's own (with_stack=True)
or our C tracer merged into Kineto's export.  Measured on real jobs started by
hand (examples/train_gloo.py on gloo, slow_augment planted on rank 2), the
node agent started by the collector, `perftracker --trigger-on --auto-analyze
--save-raw-trace all` as a user runs it:

  (a) step time inside the profiled window (steps strictly inside it) vs the
      same job's 20 steps just before the window (no profiler: the baseline of
      the same run), medians over ranks and windows; wall time, and the
      training thread's CPU time (not inflated by other processes);
  (b) export: from the start of the step() call that ends the window to the
      raw trace written (its mtime; the agent moves it by rename), and how
      long that step() call stalled the training thread;
  (c) MB of raw trace per profiled step;
  (d) what the analysis gets: Python stacks and distinct Python frames in the
      worker summaries, and whether the report's finding names rank 2 and
      slow_augment; plus seconds from the window's end to the report.

Modes alternate job by job (ABBA), each job takes several triggers, so load
from others hits both modes alike.  Prints a markdown table.

usage: PYTHON=.venv/bin/python .venv/bin/python bench/bench_pytracer.py
         [--models demo,transformer] [--reps 2] [--triggers 2] [--steps 5] [--json OUT]
"""
import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "py"))
import harness  # noqa: E402
from harness import PYTHON, ROOT, binary  # noqa: E402

TRAIN = os.path.join(ROOT, "examples", "train_gloo.py")
MODES = ("kineto", "c")
# name: (ranks, extra train_gloo.py arguments)
MODELS = {
    "demo": (4, ["--slow-rank", "2", "--slow-ms", "30", "--load-ms", "10"]),
    "transformer": (2, ["--model", "transformer", "--layers", "4", "--slow-rank", "1",
                        "--slow-ms", "10", "--load-ms", "2"]),
}


class BenchJob(harness.Job):
    def __init__(self, tmp, model, mode):
        n, extra = MODELS[model]
        harness.Job.__init__(self, tmp, n)
        self.slow_rank = int(extra[extra.index("--slow-rank") + 1])
        self.stop_file = os.path.join(tmp, "stop")
        for r in range(n):
            argv = [PYTHON, TRAIN, "--seconds", "900", "--stop-file", self.stop_file,
                    "--step-log", os.path.join(tmp, "steps%d.json" % r)] + extra
            self.spawn(r, argv, env={"PERFTRACKER_PYTHON_TRACER": mode,
                                     "PERFTRACKER_HEARTBEAT_MS": "1000"})

    def workers(self):
        return {w["rank"]: w for w in harness.control_workers(self.control).values()}

    def wait_running(self, min_step=20, timeout=180):
        def ready():
            for p in self.procs:
                if p.poll() is not None:
                    raise RuntimeError("worker exited early:\n" + self.log_text())
            ws = self.workers()
            return len(ws) == self.n and all(w["hb"].get("step", 0) >= min_step
                                             for w in ws.values())
        harness.wait_for(ready, timeout, "workers running", 0.5)

    def trigger(self, steps):
        t0 = time.time()
        res = subprocess.run([binary(), "--trigger-on", "--auto-analyze", "--control-dir",
                              self.control, "--output-dir", self.output, "--wait", "3",
                              "--steps", str(steps), "--save-raw-trace", "all"],
                             capture_output=True, text=True, timeout=300)
        t1 = time.time()
        if res.returncode != 0:
            raise RuntimeError("trigger failed:\n%s\n%s" % (res.stderr[-3000:], self.log_text()))
        return harness.run_dir_of(res), t0, t1

    def finish(self):
        open(self.stop_file, "w").close()
        for p in self.procs:
            try:
                p.wait(timeout=120)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        logs = {}
        for r in range(self.n):
            d = harness.read_json(os.path.join(self.tmp, "steps%d.json" % r))
            if d:
                logs[r] = d
        return logs


def py_frames(key):
    return [f for f in key.split("|") if ".py: " in f or f.startswith("<built-in")]


def window_numbers(run, logs, slow_rank, t1):
    """The numbers of one trigger's window, from its run folder and the
    ranks' step logs."""
    rep = harness.read_json(os.path.join(run, "PerfDisplay", "report.json"))
    out = {"inside": [], "before": [], "cpu_inside": [], "cpu_before": [], "export_s": [], "stop_call_s": [], "mb_per_step": [],
           "py_stacks": [], "py_frames": [], "py_events": [], "end_wall": []}
    for wid, w in rep["workers"].items():
        r = w.get("rank")
        start, end = w.get("start_step"), w.get("end_step")
        if start is None or end is None:
            steps = w.get("steps") or []
            start, end = steps[0], steps[-1] + 1
        log = {s: (a, b, c) for s, a, b, c in logs[r]["steps"]}
        # step c's period: from the end of step() c-1 to the end of step() c
        # (wall, and CPU time of the training thread: what other processes
        # on the cores do not inflate)
        per = {c: log[c][1] - log[c - 1][1] for c in log if c - 1 in log}
        cpu = {c: log[c][2] - log[c - 1][2] for c in log if c - 1 in log}
        out["inside"] += [per[c] for c in range(start + 1, end) if c in per]
        out["before"] += [per[c] for c in range(start - 20, start) if c in per]
        out["cpu_inside"] += [cpu[c] for c in range(start + 1, end) if c in cpu]
        out["cpu_before"] += [cpu[c] for c in range(start - 20, start) if c in cpu]
        raw = os.path.join(run, "raw_trace", wid)
        st = os.stat(raw)
        out["export_s"].append(st.st_mtime - log[end][0])
        out["stop_call_s"].append(log[end][1] - log[end][0])
        out["end_wall"].append(log[end][0])
        out["mb_per_step"].append(st.st_size / 1e6 / (end - start))
        with open(raw) as f:
            ev = json.load(f)["traceEvents"]
        out["py_events"].append(sum(1 for e in ev if e.get("cat") == "python_function"))
        summ = harness.read_json(os.path.join(run, "summaries", wid))
        keys = [p["key"] for p in summ.get("patterns", []) if p.get("class") == "python" and p.get("kind") == "python"]
        out["py_stacks"].append(len(keys))
        out["py_frames"].append(len(set(f for k in keys for f in py_frames(k))))
    slow = [wid for wid, w in rep["workers"].items() if w.get("rank") == slow_rank]
    named = [f for f in rep.get("findings", []) if "slow_augment" in json.dumps(f)]
    out["names_slow"] = bool(named) and named[0].get("workers") == slow
    out["report_s"] = t1 - max(out["end_wall"])
    return out


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def run(models, reps, triggers, steps):
    res = {}
    for model in models:
        per = {m: [] for m in MODES}
        for rep in range(reps):
            order = MODES if rep % 2 == 0 else tuple(reversed(MODES))
            for mode in order:
                tmp = tempfile.mkdtemp(prefix="pt_pytr_")
                job = BenchJob(tmp, model, mode)
                try:
                    job.wait_running()
                    runs = [job.trigger(steps) for _ in range(triggers)]
                    logs = job.finish()
                    for run_dir, t0, t1 in runs:
                        w = window_numbers(run_dir, logs, job.slow_rank, t1)
                        w["trigger_s"] = t1 - t0
                        w["rep"] = rep
                        per[mode].append(w)
                        print("# %s %s rep %d: inside %.2f ms before %.2f ms export %.3f s "
                              "%.2f MB/step %d stacks %d frames names_slow %s report %.1f s" % (
                                  model, mode, rep, med(w["inside"]) * 1e3,
                                  med(w["before"]) * 1e3, med(w["export_s"]),
                                  med(w["mb_per_step"]), med(w["py_stacks"]),
                                  med(w["py_frames"]), w["names_slow"], w["report_s"]),
                              file=sys.stderr, flush=True)
                finally:
                    job.kill_all()
                    shutil.rmtree(tmp, ignore_errors=True)
        res[model] = per
    return res


def table(res, steps):
    lines = []
    for model, per in res.items():
        n, _ = MODELS[model]
        lines.append("\n### %s (%d ranks, %d profiled steps per window)\n" % (model, n, steps))
        lines.append("| measure | " + " | ".join(MODES) + " |")
        lines.append("|---|" + "---|" * len(MODES))

        def agg(mode, k):
            return med([x for w in per[mode] for x in w[k]])
        row = {}
        for m in MODES:
            b, i = agg(m, "before"), agg(m, "inside")
            row[m] = (b, i)
        lines.append("| windows (jobs x triggers) | " + " | ".join(
            "%d" % len(per[m]) for m in MODES) + " |")
        lines.append("| step before the window (baseline, no profiler) | " + " | ".join(
            "%.2f ms" % (row[m][0] * 1e3) for m in MODES) + " |")
        lines.append("| step inside the window | " + " | ".join(
            "%.2f ms (x%.3f)" % (row[m][1] * 1e3, row[m][1] / row[m][0]) for m in MODES) + " |")
        # paired per window: inside / before of the same window and ranks
        lines.append("| inside / before, median of windows | " + " | ".join(
            "x%.3f" % med([med(w["inside"]) / med(w["before"]) for w in per[m]])
            for m in MODES) + " |")
        lines.append("| CPU time of the training thread per step, before / inside | " +
                     " | ".join("%.2f / %.2f ms (x%.3f)" % (
                         agg(m, "cpu_before") * 1e3, agg(m, "cpu_inside") * 1e3,
                         agg(m, "cpu_inside") / agg(m, "cpu_before")) for m in MODES) + " |")
        lines.append("| CPU inside / before, median of windows | " + " | ".join(
            "x%.3f" % med([med(w["cpu_inside"]) / med(w["cpu_before"]) for w in per[m]])
            for m in MODES) + " |")
        lines.append("| step() that ends the window (stop + torch export) | " + " | ".join(
            "%.3f s" % agg(m, "stop_call_s") for m in MODES) + " |")
        lines.append("| window end to raw trace written | " + " | ".join(
            "%.3f s" % agg(m, "export_s") for m in MODES) + " |")
        lines.append("| raw trace per profiled step | " + " | ".join(
            "%.2f MB" % agg(m, "mb_per_step") for m in MODES) + " |")
        lines.append("| python_function events per worker | " + " | ".join(
            "%.0f" % agg(m, "py_events") for m in MODES) + " |")
        lines.append("| Python stacks in a summary | " + " | ".join(
            "%.0f" % agg(m, "py_stacks") for m in MODES) + " |")
        lines.append("| distinct Python frames in a summary | " + " | ".join(
            "%.0f" % agg(m, "py_frames") for m in MODES) + " |")
        lines.append("| finding names the slow rank and slow_augment | " + " | ".join(
            "%d of %d" % (sum(w["names_slow"] for w in per[m]), len(per[m])) for m in MODES) +
            " |")
        lines.append("| window end to report (trigger exits) | " + " | ".join(
            "%.1f s" % med([w["report_s"] for w in per[m]]) for m in MODES) + " |")
        lines.append("| trigger command, start to exit (--wait 3) | " + " | ".join(
            "%.1f s" % med([w["trigger_s"] for w in per[m]]) for m in MODES) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="demo,transformer")
    ap.add_argument("--reps", type=int, default=2, help="jobs per mode and model (ABBA)")
    ap.add_argument("--triggers", type=int, default=2, help="triggers per job")
    ap.add_argument("--steps", type=int, default=5, help="profiled steps per window")
    ap.add_argument("--json", help="also write the raw numbers here")
    a = ap.parse_args()
    import torch  # noqa: F401  (the interpreter must be the jobs' own)
    res = run(a.models.split(","), a.reps, a.triggers, a.steps)
    print("## Python tracer on Kineto torch (Python %s, torch %s, %d CPUs, load %s)" % (
        sys.version.split()[0], subprocess.run(
            [PYTHON, "-c", "import torch; print(torch.__version__)"], capture_output=True,
            text=True).stdout.strip(), os.cpu_count(), open("/proc/loadavg").read().split()[0]))
    print(table(res, a.steps))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f)


if __name__ == "__main__":
    main()
