#!/usr/bin/env python3
"""gen_report.py - write a synthetic PerfTracker report.json (standard library only).

Used by bench/bench_page.sh (PerfDisplay render time for 1,000 workers) and by
the browser tests as a stand-in when no real report is at hand.  The keys are
those of the reference guide plus "workers", "findings", "Hang" and the
"display" key documented in docs/display.md.  The numbers are made up but
shaped like a real job: one slow GPU, one worker stuck in
cudaStreamSynchronize, a slow link, and a few workers paying for host copies.

usage: gen_report.py [--workers N] [--seed S] [--hang] [--no-display]
                     [--markup] [-o report.json]
"""
import argparse
import json
import random
import statistics
import sys

KERNELS = [
    # (name+grid|block, class, median ms per execution, executions per step)
    ("volta_sgemm_128x64_nn256_1_1|256_1_1", "compute", 2.35, 24),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>, "
     "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<int>, at::detail::Array<char*, 1>)"
     "160_1_1|128_1_1", "compute", 0.21, 40),
    ("void split_embedding_backward_codegen_adagrad_unweighted_kernel_cta_per_row_1<float, float, "
     "float, 1ul, 8>(at::GenericPackedTensorAccessor<float, 2ul>)1024_1_1|256_1_1", "compute", 1.12, 8),
    ("void cub::DeviceRadixSortSingleTileKernel<cub::DeviceRadixSortPolicy<long, int, int>::Policy800, "
     "false, long, int, int>(long const*, long*, int const*, int*, int, int, int)1_1_1|256_1_1",
     "compute", 0.09, 16),
    ("volta_sgemm_32x32_sliced1x4_tn16_1_8|128_1_1", "compute", 0.65, 12),
    ("void at::native::reduce_kernel<128, 4, at::native::ReduceOp<float, at::native::func_wrapper_t<"
     "float, at::native::sum_functor<float, float, float>::operator()> > >(at::native::ReduceOp<float> )"
     "80_1_1|32_16_1", "compute", 0.05, 20),
]
COMM = [
    ("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", 0.21),
    ("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", 0.12),
]
RUNTIME = ["cudaLaunchKernel", "cudaStreamSynchronize", "cudaMemcpyAsync", "cudaEventQuery"]
MEMORY = ["Memcpy HtoD (Pageable -> Device)", "Memcpy DtoH (Device -> Pageable)",
          "Memcpy DtoD (Device -> Device)"]
PY_ROOT = ["dlrm_s_pytorch.py: <module>", "dlrm_s_pytorch.py: run", "dlrm_s_pytorch.py: train_loop"]
PY_LEAVES = [
    ["dlrm_s_pytorch.py: forward", "nn.Module: DLRM_Net_0", "dlrm_s_pytorch.py: apply_emb",
     "torchrec/distributed/embedding.py: forward", "<built-in method embedding_bag of type object at 0x>"],
    ["dlrm_s_pytorch.py: forward", "nn.Module: DLRM_Net_0", "dlrm_s_pytorch.py: apply_mlp",
     "nn.Module: Sequential_0", "torch/nn/modules/linear.py: forward", "aten::linear", "aten::addmm"],
    ["dlrm_s_pytorch.py: forward", "nn.Module: DLRM_Net_0", "dlrm_s_pytorch.py: interact_features",
     "<built-in method bmm of type object at 0x>", "aten::bmm"],
    ["torch/_tensor.py: backward", "torch/autograd/__init__.py: backward",
     "<built-in method run_backward of torch._C._EngineBase object at 0x>"],
    ["torch/optim/optimizer.py: wrapper", "torch/optim/adagrad.py: step", "torch/optim/adagrad.py: adagrad",
     "torch/optim/adagrad.py: _multi_tensor_adagrad", "<built-in method _foreach_addcmul_ of type object at 0x>"],
    ["dlrm_data_pytorch.py: __next__", "torch/utils/data/dataloader.py: __next__",
     "torch/utils/data/dataloader.py: _next_data", "torch/utils/data/_utils/fetch.py: fetch",
     "dlrm_data_pytorch.py: collate_wrapper_random_offset"],
    ["dlrm_s_pytorch.py: forward", "dlrm_s_pytorch.py: sequential_forward", "aten::to", "aten::_to_copy",
     "aten::copy_"],
]


def med(xs):
    return statistics.median(xs) if xs else 0.0


def build(n, seed, hang=False, display=True, markup=False):
    rnd = random.Random(seed)
    gpus = 8
    workers = []
    for r in range(n):
        host = "dlrm-a100-node%03d" % (r // gpus) if n > 8 else "dlrm-v100-node000"
        pid = 4100 + r * 7 + rnd.randrange(5)
        workers.append(("%s_%d_%d.json" % (host, r, pid), r, host, pid))
    ids = [w[0] for w in workers]
    slow_gpu = ids[min(n - 1, (n * 417) // 1000 if n > 8 else 5)]
    sync_worker = ids[min(n - 1, (n * 3) // 4 if n > 8 else 3)]
    slow_link = ids[min(n - 1, 1)]
    pageable = set(ids[i] for i in range(0, n, max(1, n // 6)))
    steps = 3

    kernels = list(KERNELS)
    if markup:
        kernels.append(('<img src=x onerror="window.__ptXss=1"><b>evil</b>_kernel<T>1_1_1|32_1_1',
                        "compute", 0.4, 10))
    # per worker per function: ms per step
    per = {}
    base_step = 14.0 * max(1.0, n / 64) ** 0.15
    for wid in ids:
        f = {}
        for k, _c, m, cnt in kernels:
            x = m * cnt * rnd.gauss(1.0, 0.02)
            if wid == slow_gpu and k.startswith("volta_sgemm_128x64"):
                x *= 1.85
            f[k] = max(0.0, x)
        for k, share in COMM:
            x = base_step * share * rnd.gauss(1.0, 0.03)
            if wid == slow_link and k.startswith("ncclKernel_AllReduce"):
                x *= 1.6
            f[k] = x
        for k in RUNTIME:
            x = {"cudaLaunchKernel": 0.9, "cudaStreamSynchronize": 0.3, "cudaMemcpyAsync": 0.25,
                 "cudaEventQuery": 0.04}[k] * rnd.gauss(1.0, 0.05)
            if wid == sync_worker and k == "cudaStreamSynchronize":
                x *= 9
            f[k] = x
        for k in MEMORY:
            x = {"Memcpy HtoD (Pageable -> Device)": 0.08, "Memcpy DtoH (Device -> Pageable)": 0.05,
                 "Memcpy DtoD (Device -> Device)": 0.03}[k] * rnd.gauss(1.0, 0.05)
            if wid in pageable and "Pageable" in k:
                x *= 4
            f[k] = x
        per[wid] = f

    class_of = {k: c for k, c, _m, _n in kernels}
    class_of.update({k: "communication" for k, _ in COMM})
    class_of.update({k: "runtime" for k in RUNTIME})
    class_of.update({k: "memory" for k in MEMORY})

    wrec = {}
    disp_workers = {}
    utils = {}
    step_med = {}
    for wid, r, host, pid in workers:
        f = per[wid]
        cls = {c: 0.0 for c in ("compute", "communication", "memory", "runtime", "python", "idle")}
        for k, v in f.items():
            cls[class_of[k]] += v
        cls["python"] = 1.6 * rnd.gauss(1.0, 0.05)
        cls["idle"] = max(0.2, 1.1 * rnd.gauss(1.0, 0.1))
        step = sum(cls.values())
        st = [step * rnd.gauss(1.0, 0.015) for _ in range(steps)]
        window = sum(st)
        scale = window / step
        cls = {c: v * scale for c, v in cls.items()}
        util = cls["compute"] / window + 0.004 * rnd.random()
        utils[wid] = util
        step_med[wid] = med(st)
        wrec[wid] = {"rank": r, "host": host, "pid": pid, "file": "raw_trace/" + wid,
                     "steps": steps, "window (ms)": round(window, 4), "gpu utilization": util}
        disp_workers[wid] = {"step_ms": [round(x, 4) for x in st],
                             "class_ms": {c: round(v, 4) for c, v in cls.items()}}
    if n >= 4:
        bad = ids[-1]
        wrec[bad]["error"] = "'%s': truncated trace (at byte 81920)" % wrec[bad]["file"]

    umed = med(list(utils.values()))
    abnormal_util = {w: u for w, u in utils.items() if abs(u - umed) > 0.05}

    def ratio(w, k):
        return per[w][k] * steps / wrec[w]["window (ms)"]

    major = {}
    for k, _c, m, cnt in sorted(kernels, key=lambda x: -x[2] * x[3])[:5]:
        major[k] = {"median cost per execution (ms)": round(med([per[w][k] / cnt for w in ids]), 4),
                    "bottleneck ratio (in [0,1])": med([ratio(w, k) for w in ids])}
    detailed = {}
    for k, _c, m, cnt in kernels:
        others = med([per[w][k] / cnt for w in ids])
        for w in ids:
            mine = per[w][k] / cnt
            if mine > others * 1.3:
                detailed.setdefault(w, {})[k] = {
                    "median cost per execution (ms)": round(mine, 4),
                    "median of other workers (ms)": round(others, 4),
                    "slower by": "%.0f%%" % ((mine / others - 1) * 100)}
    gpu = {"min/median/max GPU utilization (in [0,1])": [min(utils.values()), umed, max(utils.values())],
           "workers with abnormal GPU utilization": abnormal_util,
           "major_kernel_executions": major,
           "workers with potential GPU issues": sorted(detailed),
           "detailed report": detailed}

    mem = {}
    for k in MEMORY:
        rs = {w: ratio(w, k) for w in ids}
        mem[k] = {"avg bottleneck ratio (in [0,1])": sum(rs.values()) / n,
                  "abnormal_workers": {w: v for w, v in sorted(rs.items(), key=lambda x: -x[1]) if v > 0.01}}

    comm = {}
    for group, (k, _s) in (("nvlink ring send", COMM[0]), ("nvlink ring recv", COMM[0]),
                           ("pcie sendrecv send", COMM[1])):
        rs = {w: ratio(w, k) for w in ids}
        mr = med(list(rs.values()))
        normal = min(ids, key=lambda w: abs(rs[w] - mr))

        def feat(w):
            thr = 74.0 / (rs[w] / mr) if mr else 0
            return {"bottleneck ratio (in [0,1])": rs[w], "avg throughput (%)": round(thr, 3),
                    "throughput std (%)": round(11.0 + rnd.random() * 3, 3)}
        ab = [{"worker": w, "different from other workers": round((rs[w] - mr) / mr * 100, 1),
               "features": feat(w)} for w in ids if rs[w] > mr * 1.3]
        comm.setdefault(group, {})[k] = {
            "example_of_normal_worker": {"worker": normal, "different from other workers": 0,
                                         "features": feat(normal)},
            "abnormal_workers": ab}

    rt = {}
    for k in RUNTIME:
        rs = {w: ratio(w, k) for w in ids}
        rt[k] = {"avg bottleneck ratio (in [0,1])": sum(rs.values()) / n,
                 "avg execution time / monitoring duration (in [0,1])": sum(rs.values()) / n * 1.7,
                 "abnormal_workers": {w: v for w, v in sorted(rs.items(), key=lambda x: -x[1]) if v > 0.01}}

    py = {}
    stacks = []
    for i, leaf in enumerate(PY_LEAVES):
        for depth in range(2, len(leaf) + 1):
            stacks.append(PY_ROOT + leaf[:depth])
    py_vals = {}
    for i, s in enumerate(stacks):
        key = "|".join(s)
        base = 0.004 + 0.03 * rnd.random() * (1 if i % 3 else 0.3)
        vals = {}
        for w in ids:
            v = base * rnd.gauss(1.0, 0.08)
            if w == sync_worker and "backward" in key:
                v *= 2.5
            vals[w] = v
        py_vals[key] = vals
        listed = {w: v for w, v in vals.items() if v > 0.01}
        if listed:
            py[key] = dict(sorted(listed.items(), key=lambda x: -x[1]))

    smed = med(list(step_med.values()))
    findings = []

    def add(cat, ws, fn, metric, value, others, impact, expl):
        findings.append({"rank": 0, "category": cat, "workers": ws, "function": fn, "metric": metric,
                         "value": value, "others": others, "impact (ms)": round(impact, 3),
                         "explanation": expl})
    k0 = kernels[0][0]
    c0 = kernels[0][3]
    add("GPU Compute", [slow_gpu], k0, "median cost per execution (ms)", round(per[slow_gpu][k0] / c0, 4),
        round(med([per[w][k0] / c0 for w in ids]), 4),
        per[slow_gpu][k0] - med([per[w][k0] for w in ids]),
        "This worker's GPU runs the same GEMM kernel much slower than every other worker "
        "(thermal throttling, a degraded GPU or a slower clock); every step waits for it at the next collective.")
    add("CUDA Runtime", [sync_worker], "cudaStreamSynchronize", "bottleneck ratio (in [0,1])",
        ratio(sync_worker, "cudaStreamSynchronize"), med([ratio(w, "cudaStreamSynchronize") for w in ids]),
        per[sync_worker]["cudaStreamSynchronize"] - med([per[w]["cudaStreamSynchronize"] for w in ids]),
        "The host waits on the GPU far more often than on other workers: look for .item(), .cpu() or "
        "print of a tensor inside the training step.")
    if len(ids) > 2:
        add("Communication", [slow_link], COMM[0][0], "bottleneck ratio (in [0,1])",
            ratio(slow_link, COMM[0][0]), med([ratio(w, COMM[0][0]) for w in ids]),
            per[slow_link][COMM[0][0]] - med([per[w][COMM[0][0]] for w in ids]),
            "All-reduce takes longer on this worker than on its peers at the same message size: "
            "check its NVLink/PCIe link and NIC.")
    add("GPU memory operations", sorted(pageable)[:20], "Memcpy HtoD (Pageable -> Device)",
        "bottleneck ratio (in [0,1])", med([ratio(w, MEMORY[0]) for w in pageable]),
        med([ratio(w, MEMORY[0]) for w in ids if w not in pageable]),
        med([per[w][MEMORY[0]] for w in pageable]) - med([per[w][MEMORY[0]] for w in ids]),
        "Copies from pageable host memory are slow and block the stream: pin the data loader's memory "
        "(pin_memory=True).")
    findings.sort(key=lambda f: -f["impact (ms)"])
    for i, f in enumerate(findings):
        f["rank"] = i + 1

    rep = {"GPU Compute": gpu, "GPU memory operations": mem, "Communication": comm,
           "CUDA Runtime": rt, "Python functions": py, "workers": wrec, "findings": findings}
    if hang:
        stuck = ids[min(n - 1, 2)]
        rep["Hang"] = {
            "hung": True,
            "detected at": "2025-03-04 06:10:02",
            "seconds since last step": 612.4,
            "suspects": [stuck],
            "groups": [
                {"workers": [w for w in ids if w != stuck], "count": n - 1,
                 "stack": "dlrm_s_pytorch.py: train_loop|torch/distributed/distributed_c10d.py: all_reduce|"
                          "<built-in method allreduce of ProcessGroupNCCL object at 0x>"},
                {"workers": [stuck], "count": 1,
                 "stack": "dlrm_s_pytorch.py: train_loop|dlrm_data_pytorch.py: __next__|"
                          "torch/utils/data/dataloader.py: _next_data|<built-in method acquire of _thread.lock>"},
            ],
            "explanation": "All workers but one wait in all_reduce; the odd one out is blocked in the data "
                           "loader and is the likely cause."}
    if display:
        funcs = sorted(class_of, key=lambda k: -med([per[w][k] for w in ids]))
        for key, vals in sorted(py_vals.items(), key=lambda kv: -med(list(kv[1].values()) or [0]))[:12]:
            funcs.append(key)
            class_of[key] = "python"
            for w in ids:
                per[w][key] = vals.get(w, 0.0) * wrec[w]["window (ms)"] / steps
        rep["display"] = {
            "version": 1,
            "classes": ["compute", "communication", "memory", "runtime", "python", "idle"],
            "workers": disp_workers,
            "heatmap": {
                "metric": "ms per step",
                "functions": [{"key": k, "class": class_of[k]} for k in funcs],
                "workers": ids,
                "value": [[round(per[w][k], 5) if per[w].get(k) is not None else None for k in funcs]
                          for w in ids],
            },
        }
        if n >= 4:
            rep["display"]["heatmap"]["value"][-1] = [None] * len(funcs)
    return rep


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--hang", action="store_true", help="add a Hang section")
    ap.add_argument("--no-display", action="store_true", help="leave out the display key")
    ap.add_argument("--markup", action="store_true", help="add a kernel whose name is HTML markup")
    ap.add_argument("-o", "--output", default="-")
    a = ap.parse_args()
    if a.workers < 1:
        ap.error("--workers must be at least 1")
    rep = build(a.workers, a.seed, a.hang, not a.no_display, a.markup)
    text = json.dumps(rep, indent=1)
    if a.output == "-":
        sys.stdout.write(text + "\n")
    else:
        with open(a.output, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
