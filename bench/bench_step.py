"""Cost of the collector to a training process, all measured in one run:

1. step() when idle: median ns per call of PerfTracker.step() beside an empty
   Python method call (and an empty loop, subtracted from both).
2. Training step time without the collector versus with it idle: the same
   small model, blocks of steps alternating without and with step() (the
   background thread runs throughout; its own CPU use is reported apart).
3. During profiling: step time inside the collector's window (torch.profiler
   plus, where torch has no Kineto, the C Python tracer) versus torch.profiler
   alone, windows alternating; plus the end-of-window (export) step.

usage: PYTHONPATH=python /usr/bin/python3 bench/bench_step.py [--quick] [--json OUT]
Prints a table (markdown).  Nothing here needs a node agent.
"""
import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))


def thread_cpu_seconds(tid):
    """utime+stime of one thread from /proc (clock ticks -> s)."""
    try:
        with open("/proc/self/task/%d/stat" % tid) as f:
            parts = f.read().rsplit(")", 1)[1].split()
        return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def per_call_ns(fn, n, repeat):
    """Median over `repeat` runs of the time per iteration of fn(n)."""
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter_ns()
        fn(n)
        out.append((time.perf_counter_ns() - t0) / n)
    return statistics.median(out)


class Empty(object):
    def step(self):
        pass


def micro(tracer, n, repeat):
    e = Empty()

    def loop_empty(k):
        for _ in range(k):
            pass

    def loop_method(k):
        s = e
        for _ in range(k):
            s.step()

    def loop_step(k):
        s = tracer
        for _ in range(k):
            s.step()

    # Interleave so that frequency changes hit all three alike.
    base, meth, step = [], [], []
    for _ in range(repeat):
        base.append(per_call_ns(loop_empty, n, 1))
        meth.append(per_call_ns(loop_method, n, 1))
        step.append(per_call_ns(loop_step, n, 1))
    b, m, s = statistics.median(base), statistics.median(meth), statistics.median(step)
    return {"loop_ns": b, "empty_method_ns": m, "step_ns": s,
            "empty_method_net_ns": m - b, "step_net_ns": s - b}


def make_model():
    import torch
    import torch.nn as nn
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                          nn.Linear(256, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(64, 64), torch.randn(64, 1)
    loss_fn = nn.MSELoss()

    def train_step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    return train_step


def block_ms(train_step, tracer, steps):
    """(wall ms, CPU ms of this thread) per step; CPU time is not inflated
    when other processes take the core, so it resolves smaller differences."""
    t0, c0 = time.perf_counter(), time.thread_time()
    if tracer is None:
        for _ in range(steps):
            train_step()
    else:
        for _ in range(steps):
            train_step()
            tracer.step()
    return ((time.perf_counter() - t0) * 1000.0 / steps,
            (time.thread_time() - c0) * 1000.0 / steps)


def write_trigger(control, tid, start, steps):
    t = {"format": "perftracker-trigger", "version": 1, "id": tid, "state": "active",
         "start_step": start, "steps": steps, "wait": 0, "save_raw_trace": "none",
         "created": time.time(), "deadline": time.time() + 600, "workers": []}
    tmp = os.path.join(control, ".trigger.json.tmp")
    with open(tmp, "w") as f:
        json.dump(t, f)
    os.rename(tmp, os.path.join(control, "trigger.json"))


def profiled_window(train_step, tracer, col, control, tid, steps):
    """Run one collector window of `steps` steps; returns (per-step ms of
    the steps fully inside the window, ms of the step that exports)."""
    cur = col.info()["step"]
    start = cur + 5
    write_trigger(control, tid, start, steps)
    # Wait until armed (the default poll interval is 250 ms).
    t_end = time.time() + 10
    while col.info()["state"] != "armed" and time.time() < t_end:
        time.sleep(0.005)
    if col.info()["state"] != "armed":
        raise RuntimeError("collector did not arm: %s" % col.info())
    start = col.info()["next_action"]  # no step ran while waiting: cur + 5
    times = []
    while True:
        c = col.info()["step"]
        if c >= start + steps + 1:
            break
        t0 = time.perf_counter()
        train_step()
        tracer.step()
        times.append((c + 1, (time.perf_counter() - t0) * 1000.0))
    inside = [ms for s, ms in times if start < s < start + steps]
    export = [ms for s, ms in times if s == start + steps]
    return inside, export[0] if export else float("nan")


def torch_window(train_step, steps):
    """The same window with torch.profiler alone (no Python stacks)."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    acts = [ProfilerActivity.CPU]
    p = profile(activities=acts, record_shapes=False)
    times = []
    p.start()
    rec = torch.autograd.profiler.record_function("ProfilerStep#0")
    rec.__enter__()
    for i in range(steps):
        t0 = time.perf_counter()
        train_step()
        if i < steps - 1:
            rec.__exit__(None, None, None)
            rec = torch.autograd.profiler.record_function("ProfilerStep#%d" % (i + 1))
            rec.__enter__()
        times.append((time.perf_counter() - t0) * 1000.0)
    rec.__exit__(None, None, None)
    t0 = time.perf_counter()
    p.stop()
    d = tempfile.mkdtemp(prefix="pt_bench_")
    try:
        p.export_chrome_trace(os.path.join(d, "t.json"))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    export = (time.perf_counter() - t0) * 1000.0
    return times[1:-1], export


def pct(a, b):
    return (a - b) / b * 100.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke run)")
    ap.add_argument("--json", help="also write the numbers here")
    args = ap.parse_args()
    q = args.quick
    tmp = tempfile.mkdtemp(prefix="pt_bench_")
    control = os.path.join(tmp, "control")
    os.environ.update({"PERFTRACKER_CONTROL_DIR": control,
                       "PERFTRACKER_SPOOL_DIR": os.path.join(tmp, "spool"),
                       "PERFTRACKER_AUTO_AGENT": "0", "RANK": "0", "WORLD_SIZE": "1"})
    before = set(t.native_id for t in threading.enumerate())
    tasks_before = set(int(t) for t in os.listdir("/proc/self/task"))
    from perftracker import PerfTracker, _collector
    tracer = PerfTracker()
    time.sleep(0.2)
    bg = [int(t) for t in os.listdir("/proc/self/task") if int(t) not in tasks_before]
    del before
    res = {"python": sys.version.split()[0]}

    # 1. step() idle
    res["micro"] = micro(tracer, 200000 if q else 2000000, 5 if q else 15)

    # 2. training step: without vs with the collector idle
    import torch
    res["torch"] = torch.__version__
    res["kineto"] = bool(torch.autograd.kineto_available())
    train_step = make_model()
    for _ in range(50):
        train_step()
    nblocks, bsteps = (6, 50) if q else (40, 100)
    bg_cpu0 = [thread_cpu_seconds(t) for t in bg]
    w0 = time.time()
    without, with_, cwithout, cwith = [], [], [], []
    for i in range(nblocks):
        # ABBA order cancels slow drifts.
        order = (None, tracer) if i % 2 == 0 else (tracer, None)
        for tr in order:
            ms, cms = block_ms(train_step, tr, bsteps)
            (without if tr is None else with_).append(ms)
            (cwithout if tr is None else cwith).append(cms)
    wall = time.time() - w0
    bg_cpu1 = [thread_cpu_seconds(t) for t in bg]
    bg_cpu = sum((b - a) for a, b in zip(bg_cpu0, bg_cpu1) if a is not None and b is not None)
    m0, m1 = statistics.median(without), statistics.median(with_)
    # Paired differences of neighbouring blocks; 95% interval of their mean.
    def paired(a_list, b_list):
        d = [pct(b, a) for a, b in zip(a_list, b_list)]
        return statistics.mean(d), (1.96 * statistics.stdev(d) / len(d) ** 0.5
                                    if len(d) > 1 else float("nan"))
    dmean, ci = paired(without, with_)
    cmean, cci = paired(cwithout, cwith)
    res["idle"] = {"blocks": nblocks, "steps_per_block": bsteps,
                   "step_ms_without": m0, "step_ms_with": m1, "diff_pct": pct(m1, m0),
                   "paired_diff_pct_mean": dmean, "paired_diff_pct_ci95": ci,
                   "cpu_ms_without": statistics.median(cwithout),
                   "cpu_ms_with": statistics.median(cwith),
                   "cpu_paired_diff_pct_mean": cmean, "cpu_paired_diff_pct_ci95": cci,
                   "step_cost_pct": res["micro"]["step_net_ns"] / (m0 * 1e6) * 100.0,
                   "bg_thread_cpu_pct": bg_cpu / wall * 100.0 if wall > 0 else None}

    # 3. profiling window: collector vs torch.profiler alone
    nwin, wsteps = (2, 10) if q else (6, 20)
    col_in, col_exp, t_in, t_exp = [], [], [], []
    for i in range(nwin):
        inside, exp = profiled_window(train_step, tracer, _collector, control, "B%d" % i, wsteps)
        col_in += inside
        col_exp.append(exp)
        inside, exp = torch_window(train_step, wsteps)
        t_in += inside
        t_exp.append(exp)
    base = statistics.median(without)
    res["window"] = {"windows": nwin, "steps": wsteps,
                     "step_ms_no_profiler": base,
                     "step_ms_torch_profiler": statistics.median(t_in),
                     "step_ms_collector": statistics.median(col_in),
                     "collector_vs_torch_pct": pct(statistics.median(col_in),
                                                   statistics.median(t_in)),
                     "export_ms_torch": statistics.median(t_exp),
                     "export_step_ms_collector": statistics.median(col_exp)}
    _collector.shutdown()
    shutil.rmtree(tmp, ignore_errors=True)

    mi, idle, win = res["micro"], res["idle"], res["window"]
    print("## Collector cost (Python %s, torch %s, Kineto %s, %d CPUs)\n" % (
        res["python"], res["torch"], "yes" if res["kineto"] else "no", os.cpu_count()))
    print("| measure | value |\n|---|---|")
    print("| empty loop iteration | %.1f ns |" % mi["loop_ns"])
    print("| empty Python method call (net) | %.1f ns |" % mi["empty_method_net_ns"])
    print("| `tracer.step()` idle (net) | %.1f ns |" % mi["step_net_ns"])
    print("| training step, no collector | %.3f ms |" % idle["step_ms_without"])
    print("| training step, collector idle | %.3f ms (median %+.2f%%; paired blocks "
          "%+.2f%% +- %.2f%% (95%%)) |" % (idle["step_ms_with"], idle["diff_pct"],
                                           idle["paired_diff_pct_mean"],
                                           idle["paired_diff_pct_ci95"]))
    print("| training step CPU time, no collector / idle | %.3f / %.3f ms (paired blocks "
          "%+.2f%% +- %.2f%% (95%%)) |" % (idle["cpu_ms_without"], idle["cpu_ms_with"],
                                           idle["cpu_paired_diff_pct_mean"],
                                           idle["cpu_paired_diff_pct_ci95"]))
    print("| step() cost / training step | %.5f%% |" % idle["step_cost_pct"])
    print("| background thread CPU | %.4f%% of one core |" % (idle["bg_thread_cpu_pct"] or 0))
    print("| step in window, torch.profiler alone | %.3f ms |" % win["step_ms_torch_profiler"])
    print("| step in window, collector (%s) | %.3f ms (%+.1f%% vs torch.profiler) |" % (
        "torch.profiler + C Python tracer" if not res["kineto"] else "torch.profiler with_stack",
        win["step_ms_collector"], win["collector_vs_torch_pct"]))
    print("| export, torch.profiler alone | %.1f ms |" % win["export_ms_torch"])
    print("| stop + export in the last window step, collector | %.1f ms |" %
          (win["export_step_ms_collector"] - win["step_ms_collector"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=2)


if __name__ == "__main__":
    main()
