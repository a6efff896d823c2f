#!/usr/bin/python3
"""gen_legacy_trace.py - make tests/data/legacy/legacy_gloo.json.

A bare-array Chrome trace from the legacy (non-Kineto) autograd profiler of
torch 1.13 (/usr/bin/python3 here): a tiny MLP trained 3 steps with a
world-size-1 gloo process group, so the file has ProfilerStep#N spans,
gloo:all_reduce and c10d::allreduce_ events, no "cat" and a string pid
("CPU functions").  usage: gen_legacy_trace.py OUT.json
"""
import os
import sys

import torch
import torch.distributed as dist

os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29533")
dist.init_process_group("gloo", rank=0, world_size=1)
m = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
opt = torch.optim.SGD(m.parameters(), lr=0.1)
x = torch.randn(4, 16)
with torch.autograd.profiler.profile(use_kineto=False) as prof:
    for i in range(3):
        with torch.autograd.profiler.record_function("ProfilerStep#%d" % (i + 1)):
            loss = m(x).sum()
            loss.backward()
            for p in m.parameters():
                dist.all_reduce(p.grad)
            opt.step()
            opt.zero_grad()
prof.export_chrome_trace(sys.argv[1] if len(sys.argv) > 1 else "legacy_gloo.json")
