"""PerfTracker demo job: a small MLP trained with DDP on gloo (CPU), one rank
slower than the others because of one Python function.

Start one process per rank with RANK, WORLD_SIZE, LOCAL_RANK,
LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT set (scripts/demo.sh does), then
run `perftracker --trigger-on --auto-analyze` while it trains: the report
names the slow rank and `slow_augment`.

The two PerfTracker lines are exactly the reference guide's.
"""
import argparse
import os
import time

try:
    from c4d_perftracker_collector.PerfTracker import PerfTracker
    my_tracer = PerfTracker()
except Exception:
    my_tracer = None

import torch
import torch.distributed as dist
import torch.nn as nn


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=60.0,
                   help="train this long (all ranks stop at the same step)")
    p.add_argument("--steps", type=int, default=0, help="or this many steps (0: by --seconds)")
    p.add_argument("--slow-rank", type=int, default=2, help="rank that runs slow_augment (-1: none)")
    p.add_argument("--slow-ms", type=float, default=30.0, help="extra time slow_augment costs")
    p.add_argument("--slow-after", type=float, default=0.0,
                   help="slow_augment starts this many seconds after training starts "
                        "(0: from the first step): a job that runs balanced, then slows")
    p.add_argument("--load-ms", type=float, default=10.0, help="simulated data loading per step")
    p.add_argument("--slow-load-rank", type=int, default=-1,
                   help="rank whose load_batch (which every rank runs) takes --slow-load-factor "
                        "times longer (-1: none)")
    p.add_argument("--slow-load-factor", type=float, default=2.0)
    p.add_argument("--cpu-ms", type=float, default=0.0,
                   help="CPU-bound Python work per step on every rank (busy loop, ms)")
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--stop-file", default="",
                   help="stop (all ranks at the same step) once this file exists")
    p.add_argument("--no-ddp", action="store_true",
                   help="no process group: ranks train independently (no collectives)")
    p.add_argument("--model", choices=("mlp", "transformer"), default="mlp",
                   help="mlp (the demo's), or a small transformer encoder: more Python frames "
                        "per step (bench/bench_pytracer.py)")
    p.add_argument("--layers", type=int, default=4, help="transformer layers")
    p.add_argument("--step-log", default="",
                   help="write each step's wall times (before/after tracer.step()) and the "
                        "thread's CPU time to this JSON file at the end "
                        "(bench/bench_pytracer.py)")
    return p.parse_args()


def load_batch(batch, dim, ms):
    """Stands in for a data loader: mostly waiting."""
    time.sleep(ms / 1000.0)
    return torch.randn(batch, dim), torch.randn(batch, 1)


def busy_python(ms):
    """CPU-bound Python work (tokenising, augmenting): spins, holding the GIL."""
    end = time.perf_counter() + ms / 1000.0
    n = 0
    while time.perf_counter() < end:
        n += 1
    return n


def slow_augment(x, ms):
    """The planted problem: a slow Python-side augmentation on one rank (it
    waits rather than spins, so that the demo stays light on small machines)."""
    time.sleep(ms / 1000.0)
    return x * 1.0


class TinyTransformer(nn.Module):
    """A small transformer encoder on (batch, 16 tokens, dim): written out
    module by module so that a step runs many Python frames."""

    def __init__(self, dim, layers):
        super().__init__()
        self.layers = nn.ModuleList(Block(dim) for _ in range(layers))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, 1)

    def forward(self, x):
        x = x.view(x.shape[0], 16, -1)
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x).mean(dim=1))


class Block(nn.Module):
    def __init__(self, dim, heads=4):
        super().__init__()
        self.heads = heads
        self.n1, self.n2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.ff = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def attend(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (z.reshape(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        a = torch.softmax(q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5, dim=-1)
        return self.proj((a @ v).transpose(1, 2).reshape(b, t, d))

    def forward(self, x):
        x = x + self.attend(self.n1(x))
        return x + self.ff(self.n2(x))


def main():
    args = parse_args()
    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    torch.set_num_threads(1)
    torch.manual_seed(0)
    ddp = not args.no_ddp and world > 1
    if ddp:
        dist.init_process_group("gloo", rank=rank, world_size=world)
    if args.model == "transformer":
        model = TinyTransformer(64, args.layers)
    else:
        model = nn.Sequential(nn.Linear(64, args.hidden), nn.ReLU(),
                              nn.Linear(args.hidden, args.hidden), nn.ReLU(),
                              nn.Linear(args.hidden, 1))
    if ddp:
        model = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.MSELoss()
    stop_at = time.time() + args.seconds
    slow_from = time.time() + args.slow_after
    step = 0
    dim = 16 * 64 if args.model == "transformer" else 64
    times = [] if args.step_log else None
    while True:
        x, y = load_batch(args.batch, dim, args.load_ms * (
            args.slow_load_factor if rank == args.slow_load_rank else 1.0))
        if args.cpu_ms > 0:
            busy_python(args.cpu_ms)
        if rank == args.slow_rank and (not args.slow_after or time.time() >= slow_from):
            x = slow_augment(x, args.slow_ms)
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        step += 1
        if times is not None:
            t0 = time.time()
        if my_tracer is not None:
            my_tracer.step()
        if times is not None:
            times.append((step, t0, time.time(), time.thread_time()))
        if args.steps:
            done = step >= args.steps
        else:
            done = time.time() >= stop_at or bool(args.stop_file and os.path.exists(args.stop_file))
            if ddp:  # every rank stops at the same step
                flag = torch.tensor([1.0 if done else 0.0])
                dist.all_reduce(flag, op=dist.ReduceOp.MAX)
                done = flag.item() > 0
        if done:
            break
    if ddp:
        dist.barrier()
        dist.destroy_process_group()
    if times is not None:
        import json
        with open(args.step_log + ".tmp", "w") as f:
            json.dump({"rank": rank, "pid": os.getpid(), "steps": times}, f)
        os.rename(args.step_log + ".tmp", args.step_log)
    print("rank %d: %d steps, loss %.4f" % (rank, step, loss.item()), flush=True)


if __name__ == "__main__":
    main()
