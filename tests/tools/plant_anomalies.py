#!/usr/bin/env python3
"""Plant one known anomaly per rank in copies of PyTorch profiler traces.

Used by tests/cli/test_dlrm_anomalies.sh to check that `perftracker analyze`
names the right worker and function, and nothing else.  Stdlib only.

    plant_anomalies.py SRC_DIR DST_DIR

Every *.json trace in SRC_DIR is copied to DST_DIR (same file name); the rank
comes from distributedInfo.rank.  Changes, one per rank:

  rank 1  slower GPU: every compute kernel (cat "kernel", not nccl*) lasts
          1.5 times longer (start times kept)
  rank 3  extra device-to-device copies: "Memcpy DtoD (Device -> Device)"
          gpu_memcpy events on its busiest GPU stream, placed in GPU idle gaps
          of the profiled step, totalling 5% of the step
  rank 5  slower kernel launches: every cudaLaunchKernel lasts 4 times longer
  rank 6  CPU-side stall: one leaf cpu_op on the main thread, ending while
          the GPU is idle, lasts 5 ms longer; every event of the rank that
          starts after its old end moves 5 ms later and the frames around it
          on that thread (parents, ProfilerStep) grow by 5 ms

DST_DIR/planted.info (JSON, not named *.json so that analyze skips it) records what was done (the stalled op's name, etc.).
"""
import collections
import json
import os
import sys

SLOW_GPU = 1.5
DTOD_SHARE = 0.05
DTOD_CHUNK_US = 40.0
LAUNCH_FACTOR = 4.0
STALL_US = 5000.0


def step_of(events):
    steps = [e for e in events if e.get("ph") == "X" and
             str(e.get("name", "")).startswith("ProfilerStep#")]
    if not steps:
        raise SystemExit("no ProfilerStep in trace")
    return min(steps, key=lambda e: e["ts"])


def is_compute(e):
    return e.get("ph") == "X" and e.get("cat") == "kernel" and \
        not str(e.get("name", "")).lower().startswith(("nccl", "rccl"))


def gpu_events(events):
    return [e for e in events if e.get("ph") == "X" and
            e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]


def busy_intervals(events):
    iv = sorted((e["ts"], e["ts"] + e["dur"]) for e in gpu_events(events))
    merged = []
    for a, b in iv:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return merged


def slow_gpu(events, info):
    n = 0
    for e in events:
        if is_compute(e):
            e["dur"] = e["dur"] * SLOW_GPU
            n += 1
    info["rank1_kernels_slowed"] = n


def extra_dtod(events, info, rank):
    step = step_of(events)
    s0, s1 = step["ts"], step["ts"] + step["dur"]
    kern = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"]
    lanes = {}
    for e in kern:
        lanes[(e["pid"], e["tid"])] = lanes.get((e["pid"], e["tid"]), 0) + 1
    pid, tid = max(lanes, key=lanes.get)
    want = DTOD_SHARE * step["dur"]
    added, t, busy = 0.0, s0, busy_intervals(events)
    new = []
    # Walk the idle gaps between GPU activity inside the step.
    gaps = []
    for a, b in busy:
        if a > t:
            gaps.append((t, min(a, s1)))
        t = max(t, b)
    if t < s1:
        gaps.append((t, s1))
    for a, b in gaps:
        a += 2.0
        while added < want and b - a >= DTOD_CHUNK_US + 2.0:
            dur = min(DTOD_CHUNK_US, want - added)
            new.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD (Device -> Device)",
                        "pid": pid, "tid": tid, "ts": a, "dur": dur,
                        "args": {"device": rank, "context": 1, "stream": tid,
                                 "bytes": int(dur * 1e5), "memory bandwidth (GB/s)": 100.0}})
            added += dur
            a += dur + 2.0
        if added >= want:
            break
    events.extend(new)
    info["rank3_dtod_us"] = added
    info["rank3_dtod_events"] = len(new)


def slow_launch(events, info):
    n = 0
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "cuda_runtime" and e.get("name") == "cudaLaunchKernel":
            e["dur"] = e["dur"] * LAUNCH_FACTOR
            n += 1
    info["rank5_launches_slowed"] = n


def stall(events, info, main_pid):
    step = step_of(events)
    s0, s1 = step["ts"], step["ts"] + step["dur"]
    busy = busy_intervals(events)
    ops = [e for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op" and
           e.get("pid") == main_pid and e.get("tid") == main_pid]
    ops.sort(key=lambda e: (e["ts"], -e["dur"]))

    def gpu_idle(t):
        return not any(a < t < b for a, b in busy)

    def is_leaf(i):
        e = ops[i]
        end = e["ts"] + e["dur"]
        return not (i + 1 < len(ops) and ops[i + 1]["ts"] < end)

    def runtime_inside(e):
        end = e["ts"] + e["dur"]
        return any(x.get("cat") == "cuda_runtime" and x.get("tid") == main_pid and
                   e["ts"] <= x["ts"] < end for x in events if x.get("ph") == "X")

    chosen = None
    for i, e in enumerate(ops):
        end = e["ts"] + e["dur"]
        if e["ts"] < s0 + 0.3 * (s1 - s0) or end > s1 - 1000:
            continue
        if not str(e["name"]).startswith("aten::") or not is_leaf(i):
            continue
        if runtime_inside(e) or not gpu_idle(end):
            continue
        chosen = e
        break
    if chosen is None:
        raise SystemExit("no op to stall")
    t = chosen["ts"] + chosen["dur"]
    for e in events:
        if "ts" not in e or e.get("ph") == "M":
            continue
        if e is chosen:
            e["dur"] += STALL_US
        elif e["ts"] >= t:
            e["ts"] += STALL_US
        elif e.get("ph") == "X" and e["ts"] + e.get("dur", 0) >= t and \
                e.get("pid") in (main_pid, "Spans") and e.get("tid") in (main_pid, "PyTorch Profiler"):
            e["dur"] += STALL_US
    info["rank6_stall_op"] = chosen["name"]
    info["rank6_stall_ts"] = chosen["ts"]
    info["rank6_stall_us"] = STALL_US


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__.split("\n\n")[1])
    src, dst = sys.argv[1], sys.argv[2]
    os.makedirs(dst, exist_ok=True)
    info = {}
    for name in sorted(os.listdir(src)):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(src, name)) as f:
            d = json.load(f)
        ev = d["traceEvents"]
        rank = d.get("distributedInfo", {}).get("rank")
        ops = collections.Counter(e["pid"] for e in ev if e.get("cat") == "cpu_op")
        main_pid = ops.most_common(1)[0][0]
        if rank == 1:
            slow_gpu(ev, info)
        elif rank == 3:
            extra_dtod(ev, info, rank)
        elif rank == 5:
            slow_launch(ev, info)
        elif rank == 6:
            stall(ev, info, main_pid)
        info.setdefault("files", {})[str(rank)] = name
        with open(os.path.join(dst, name), "w") as f:
            json.dump(d, f)
    with open(os.path.join(dst, "planted.info"), "w") as f:
        json.dump(info, f, indent=1)
    print(json.dumps(info))


if __name__ == "__main__":
    main()
