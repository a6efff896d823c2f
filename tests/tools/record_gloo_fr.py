#!/usr/bin/env python3
"""record_gloo_fr.py - records tests/data/torch2_gloo_fr: a small gloo job on
CPU (N ranks, one of them slow), profiled for a few steps with torch.profiler,
each rank's chrome trace given the "perftracker" member the collector writes
(docs/collector.md): torch's Flight Recorder entries for the profiled window
(process group, collective_seq_id, creation time on the trace's time base).

Usage: record_gloo_fr.py OUTDIR [--ranks 3] [--slow 2] [--slow-ms 15]
       [--groups 2]
(--groups 2: the loss scalar is reduced on a second process group of the
same ranks, which has its own gloo worker threads.)
Run with TORCH_FR_BUFFER_SIZE unset: the script sets it before init.
"""
import argparse
import gzip
import json
import os
import pickle
import socket
import sys
import tempfile
import time

os.environ.setdefault("TORCH_FR_BUFFER_SIZE", "2000")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

WARM, ACTIVE = 3, 3


def fr_member(trace, start_step, end_step, t0_ns, t1_ns):
    """The "perftracker" member: the Flight Recorder entries created in
    [t0_ns, t1_ns] (CLOCK_REALTIME ns), ts on the trace's time base."""
    base = int(trace.get("baseTimeNanoseconds", 0))
    fr = pickle.loads(torch._C._distributed_c10d._dump_fr_trace())
    out = []
    for e in fr.get("entries", []):
        t = e["time_created_ns"]
        if t < t0_ns or t > t1_ns:
            continue
        ins = e.get("input_sizes") or [[]]
        outs = e.get("output_sizes") or [[]]
        n_in = 1
        for d in (ins[0] if ins else []):
            n_in *= d
        n_out = 1
        for d in (outs[0] if outs else []):
            n_out *= d
        dts = e.get("input_dtypes") or [""]
        out.append({"pg": e["process_group"][0], "pg_desc": e["process_group"][1],
                    "seq": e["collective_seq_id"], "name": e["profiling_name"],
                    "ts": (t - base) / 1000.0, "in_nelems": n_in, "out_nelems": n_out,
                    "dtype": dts[0] if dts else "", "p2p": bool(e.get("is_p2p", False))})
    return {"version": 1, "trigger": "test", "host": socket.gethostname().split(".")[0],
            "pid": os.getpid(), "start_step": start_step, "end_step": end_step,
            "torch": torch.__version__, "python_tracer": "kineto",
            "collectives_source": "flight recorder", "collectives": out}


def worker(rank, world, port, outdir, slow, slow_ms, groups):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    pg2 = dist.new_group(list(range(world))) if groups > 1 else None
    torch.manual_seed(rank)
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(32, 64)
    sched = torch.profiler.schedule(wait=0, warmup=WARM, active=ACTIVE, repeat=1)
    tmp = tempfile.mkdtemp()
    t0 = t1 = 0
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                schedule=sched, with_stack=False) as prof:
        for step in range(WARM + ACTIVE):
            if step == WARM:
                t0 = time.time_ns()
            loss = model(x).sum()
            loss.backward()
            if rank == slow:
                time.sleep(slow_ms / 1e3)
            for p in model.parameters():
                dist.all_reduce(p.grad)
            stat = torch.tensor([loss.item()])
            dist.all_reduce(stat, group=pg2)
            opt.step()
            opt.zero_grad()
            prof.step()
        t1 = time.time_ns()
    path = os.path.join(tmp, "t.json")
    prof.export_chrome_trace(path)
    with open(path) as f:
        trace = json.load(f)
    member = fr_member(trace, WARM, WARM + ACTIVE - 1, t0, t1)
    doc = {"perftracker": member}
    doc.update(trace)
    name = "%s_%d_%d.json.gz" % (member["host"], rank, os.getpid())
    with gzip.open(os.path.join(outdir, name), "wt") as f:
        json.dump(doc, f, separators=(",", ":"))
    dist.barrier()
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--ranks", type=int, default=3)
    ap.add_argument("--slow", type=int, default=2)
    ap.add_argument("--slow-ms", type=float, default=15)
    ap.add_argument("--groups", type=int, default=1, choices=(1, 2))
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(worker, args=(a.ranks, port, a.outdir, a.slow, a.slow_ms, a.groups), nprocs=a.ranks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
