#!/usr/bin/env python3
"""Record tests/data/p2p_gloo4/: a real 4-rank torch 2 gloo job on this
machine's CPU doing point-to-point transfers each step, profiled by
torch.profiler (Kineto) for 3 steps (ProfilerStep spans), one gzipped trace
per rank.  Each step: a ring of blocking dist.send/dist.recv (rank r sends to
r+1, receives from r-1; even ranks send first), an all-pairs exchange of
isend/irecv (every rank to every other), and an all_to_all_single with equal
splits.  Messages are --nelems float32 elements (default 1 Mi: 4 MiB).

  .venv/bin/python tests/tools/record_p2p_gloo.py [OUT_DIR] [WORLD]

It starts the ranks itself (RANK, WORLD_SIZE, MASTER_ADDR=127.0.0.1,
MASTER_PORT); Debian's torchrun does not work here.  The slow link is planted
afterwards by tests/tools/plant_p2p.py (these ranks share one host's
loopback, whose links are all alike)."""
import gzip
import os
import shutil
import subprocess
import sys
import tempfile

WORLD = int(os.environ.get("WORLD_SIZE") or (sys.argv[2] if len(sys.argv) > 2 else 4))


def rank_main(out):
    import torch
    import torch.distributed as dist
    from torch.profiler import ProfilerActivity, profile, schedule

    rank = int(os.environ["RANK"])
    nel = int(os.environ.get("P2P_NELEMS", 1 << 20))
    dist.init_process_group("gloo")
    torch.set_num_threads(1)
    nxt, prv = (rank + 1) % WORLD, (rank - 1) % WORLD
    src = torch.full((nel,), float(rank))
    bufs = [torch.empty(nel) for _ in range(WORLD)]
    a2a_in = torch.arange(nel * WORLD, dtype=torch.float32) + rank
    a2a_out = torch.empty(nel * WORLD)

    def step():
        with torch.profiler.record_function("ring"):
            if rank % 2 == 0:
                dist.send(src, nxt)
                dist.recv(bufs[prv], prv)
            else:
                dist.recv(bufs[prv], prv)
                dist.send(src, nxt)
        with torch.profiler.record_function("all_pairs"):
            reqs = []
            for peer in range(WORLD):
                if peer != rank:
                    reqs.append(dist.irecv(bufs[peer], peer))
                    reqs.append(dist.isend(src, peer))
            for r in reqs:
                r.wait()
        with torch.profiler.record_function("all_to_all"):
            dist.all_to_all_single(a2a_out, a2a_in)
        src.add_(1)

    def ready(p):
        p.export_chrome_trace(os.path.join(out, "rank%d.json" % rank))

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True,
                 schedule=schedule(wait=1, warmup=1, active=3, repeat=1),
                 on_trace_ready=ready) as p:
        for _ in range(6):
            step()
            p.step()
    dist.barrier()
    dist.destroy_process_group()


def main():
    if os.environ.get("RANK") is not None:
        rank_main(os.environ["P2P_OUT"])
        return
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/data/p2p_gloo4"
    work = tempfile.mkdtemp()
    try:
        procs = []
        for r in range(WORLD):
            env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(WORLD), MASTER_ADDR="127.0.0.1",
                       MASTER_PORT=os.environ.get("MASTER_PORT", "29533"), P2P_OUT=work)
            procs.append(subprocess.Popen([sys.executable, __file__], env=env))
        if any(p.wait() for p in procs):
            sys.exit("a rank failed")
        os.makedirs(out, exist_ok=True)
        for r in range(WORLD):
            with open(os.path.join(work, "rank%d.json" % r), "rb") as f, \
                    gzip.GzipFile(os.path.join(out, "rank%d.json.gz" % r), "wb", 9, mtime=0) as g:
                shutil.copyfileobj(f, g)
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
