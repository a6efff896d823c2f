#!/usr/bin/env python3
"""record_tb_folder.py - record a real torch.profiler folder the way torch
writes it: N gloo DDP ranks on the CPU, each profiled with
schedule(wait, warmup, active, repeat) and tensorboard_trace_handler(DIR,
use_gzip=True), one <host>_<pid>.<ms>.pt.trace.json.gz per rank and cycle.

Usage: record_tb_folder.py OUTDIR [--world-size 4] [--repeat 3] [--active 2]
       [--slow-rank 2] [--slow-ms 20]
Starts the ranks itself (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
MASTER_ADDR=127.0.0.1, MASTER_PORT=<a free port>); tests/data/SOURCES.md
says which call recorded tests/data/torch2_tb.
"""
import argparse
import os
import socket
import subprocess
import sys
import time


def worker(a):
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    rank = int(os.environ["RANK"])
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = DDP(torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(),
                                    torch.nn.Linear(64, 8)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(32, 64), torch.randn(32, 8)

    def load_batch():
        # the planted straggler: one rank is slow to get its batch
        with torch.profiler.record_function("load_batch"):
            if rank == a.slow_rank:
                time.sleep(a.slow_ms / 1000.0)
            return x, y

    sched = torch.profiler.schedule(wait=a.wait, warmup=a.warmup, active=a.active,
                                    repeat=a.repeat)
    steps = (a.wait + a.warmup + a.active) * a.repeat + 1
    with torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU], schedule=sched,
            on_trace_ready=torch.profiler.tensorboard_trace_handler(a.outdir, use_gzip=True),
            record_shapes=False, with_stack=False) as prof:
        for _ in range(steps):
            bx, by = load_batch()
            loss = torch.nn.functional.mse_loss(model(bx), by)
            opt.zero_grad()
            loss.backward()
            opt.step()
            prof.step()
    dist.barrier()
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("outdir")
    p.add_argument("--world-size", type=int, default=4)
    p.add_argument("--wait", type=int, default=1)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--active", type=int, default=2)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--slow-rank", type=int, default=2)
    p.add_argument("--slow-ms", type=float, default=20)
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.worker:
        worker(a)
        return 0
    os.makedirs(a.outdir, exist_ok=True)
    port = str(free_port())
    procs = []
    for r in range(a.world_size):
        env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(a.world_size), LOCAL_RANK=str(r),
                   LOCAL_WORLD_SIZE=str(a.world_size), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=port)
        procs.append(subprocess.Popen([sys.executable, __file__, "--worker"] + sys.argv[1:],
                                      env=env))
    rc = 0
    for q in procs:
        rc |= q.wait()
    return rc


if __name__ == "__main__":
    sys.exit(main())
