#!/usr/bin/env python3
"""make_nsys_fixture.py - write a small 8-worker job for the hardware-sample
tests (tests/cli/test_hw.sh), in two forms:

  --nsys DIR     one Nsight Systems SQLite export per worker
                 (node1_<rank>_<pid>.sqlite) with the documented export schema
                 (StringIds, TARGET_INFO_SESSION_START_TIME, TARGET_INFO_GPU,
                 CUPTI_ACTIVITY_KIND_KERNEL, CUPTI_ACTIVITY_KIND_RUNTIME,
                 NVTX_EVENTS, TARGET_INFO_GPU_METRICS, GPU_METRICS);
  --kineto DIR   one Kineto Chrome-trace JSON per worker plus the node's
                 samples as the sampler writes them: DIR/hw_node1.json
                 ("perftracker-hw", docs/hardware.md).

The job (the same as tests/unit/test_hwjoin.c): every worker runs 4 x (a
0.4 ms gemm on stream 7, a ring AllReduce on stream 20) in a 16 ms step on GPU
<rank>.  Ranks 0-5: AllReduce 1 ms, NVLink 70/80% alternating.  Rank 6 waits
for a late peer: 2 ms, idle for 1 ms, then 70/80%.  Rank 7 has a slow link:
2 ms at a steady 35/40%.  Rank 5's gemm takes 0.6 ms at 1200 MHz instead of
1980 MHz (SW thermal slowdown in the NVML throttle reasons).  Standard library
only (sqlite3, json); deterministic output.
"""
import argparse
import json
import os
import sqlite3
import sys

T0 = 1700000000000000000  # session start, ns since the epoch
US = 1000
MS = 1000000
NW = 8
NK = 4
PERIOD = 4 * MS
GIB = 1 << 30
CAP = 100 * GIB  # 100 GiB/s: 1% is exactly 2^30 B/s
AR = "ncclDevKernel_AllReduce_Sum_f16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
GEMM = "void gemm<float>(int)"


def comm_start(k):
    return k * PERIOD + 1 * MS


def comm_dur(r):
    return 2 * MS if r >= 6 else 1 * MS


def gemm_dur(r):
    return 600 * US if r == 5 else 400 * US


def link_pct(r, j, rx):
    if r == 7:
        return 40 if j % 2 else 35
    if r == 6 and j < 10:
        return 0
    if rx:
        return 78 if j % 2 else 72
    return 80 if j % 2 else 70


def sample_times():
    """Session-relative sample times: every 100 us from 50 us over the step."""
    return list(range(50 * US, NK * PERIOD, 100 * US))


def state(r, t):
    """(link % tx, link % rx, in gemm) of GPU r at session time t."""
    for k in range(NK):
        s = comm_start(k)
        if s <= t < s + comm_dur(r):
            j = (t - s) // (100 * US)
            return link_pct(r, j, 0), link_pct(r, j, 1), False
    for k in range(NK):
        if k * PERIOD <= t < k * PERIOD + gemm_dur(r):
            return 0, 0, True
    return 0, 0, False


SCHEMA = """
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT,
    busLocation TEXT, cuDevice INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
    deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,
    streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
    demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER,
    launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL,
    gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
    blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,
    staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
    localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL,
    gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER, graphNodeId INTEGER,
    sharedMemoryLimitConfig INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
    eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER,
    nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
    rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
    endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER,
    int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER,
    floatValue REAL, jsonTextId INTEGER, jsonText TEXT);
CREATE TABLE TARGET_INFO_GPU_METRICS (typeId INTEGER NOT NULL, sourceId INTEGER NOT NULL,
    typeName TEXT NOT NULL, metricId INTEGER NOT NULL, metricName TEXT NOT NULL);
CREATE TABLE GPU_METRICS (timestamp INTEGER, typeId INTEGER NOT NULL,
    metricId INTEGER NOT NULL, value INTEGER NOT NULL);
"""

METRICS = [
    (1, "SMs Active [Throughput %]"),
    (2, "NVLink TX Requests User Data [Throughput %]"),
    (3, "NVLink TX Responses User Data [Throughput %]"),
    (4, "NVLink RX Requests User Data [Throughput %]"),
    (5, "NVLink RX Responses User Data [Throughput %]"),
    (6, "NVLink TX Requests Protocol Data [Throughput %]"),
    (7, "GPC Clock Frequency [MHz]"),
]


def write_nsys(path, r):
    if os.path.exists(path):
        os.unlink(path)
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    pid = 4000 + r
    gtid = (1 << 48) | (pid << 24) | pid
    db.executemany("INSERT INTO StringIds VALUES (?,?)",
                   [(1, AR), (2, GEMM), (3, "cudaLaunchKernel_v7000"), (4, "ProfilerStep#3")])
    db.execute("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (?,?,?)",
               (T0, "2023-11-14T22:13:20", "2023-11-14T22:13:20"))
    db.execute("INSERT INTO TARGET_INFO_GPU VALUES (0,?,?,?,?)",
               (r, "NVIDIA H100 80GB HBM3", "0000:%02x:00.0" % (0x18 + r), r))
    kern, rt = [], []
    corr = 1
    for k in range(NK):
        for (start, dur, name, stream, grid, block) in (
                (k * PERIOD, gemm_dur(r), 2, 7, (128, 2, 1), (256, 1, 1)),
                (comm_start(k), comm_dur(r), 1, 20, (8, 1, 1), (512, 1, 1))):
            kern.append((start, start + dur, r, 1, stream, corr, name, name) + grid + block)
            rt.append((start - 20 * US, start - 15 * US, 0, gtid, corr, 3, 0))
            corr += 1
    db.executemany(
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start,end,deviceId,contextId,streamId,"
        "correlationId,demangledName,shortName,gridX,gridY,gridZ,blockX,blockY,blockZ,"
        "registersPerThread,staticSharedMemory,dynamicSharedMemory,localMemoryPerThread,"
        "localMemoryTotal,gridId) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,32,0,0,0,0,0)", kern)
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start,end,eventClass,globalTid,"
                   "correlationId,nameId,returnValue) VALUES (?,?,?,?,?,?,?)", rt)
    db.execute("INSERT INTO NVTX_EVENTS (start,end,eventType,globalTid,textId) VALUES "
               "(0,?,59,?,4)", (NK * PERIOD, gtid))
    type_id = 0x10000 | r
    db.executemany("INSERT INTO TARGET_INFO_GPU_METRICS VALUES (?,1,?,?,?)",
                   [(type_id, "GPU %d - gh100" % r, mid, name) for mid, name in METRICS])
    rows = []
    for t in sample_times():
        tx, rx, g = state(r, t)
        clock = 1200 if (r == 5 and g) else 1980
        # Requests + responses of user data add up to the link's payload.
        rows += [(t, type_id, 1, 80 if g else 0),
                 (t, type_id, 2, max(tx - 10, 0)), (t, type_id, 3, min(tx, 10)),
                 (t, type_id, 4, max(rx - 10, 0)), (t, type_id, 5, min(rx, 10)),
                 (t, type_id, 6, 5), (t, type_id, 7, clock)]
    db.executemany("INSERT INTO GPU_METRICS VALUES (?,?,?,?)", rows)
    db.commit()
    db.close()


def kineto_trace(r):
    """A Kineto trace with absolute-us timestamps (no baseTimeNanoseconds)."""
    def us(ns):
        return (T0 + ns) / 1000.0
    ev = [{"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#3", "pid": 4000 + r,
           "tid": 4000 + r, "ts": us(0), "dur": NK * PERIOD / 1000.0}]
    for k in range(NK):
        ev.append({"ph": "X", "cat": "kernel", "name": GEMM, "pid": r, "tid": 7,
                   "ts": us(k * PERIOD), "dur": gemm_dur(r) / 1000.0,
                   "args": {"grid": [128, 2, 1], "block": [256, 1, 1]}})
        ev.append({"ph": "X", "cat": "kernel", "name": AR, "pid": r, "tid": 20,
                   "ts": us(comm_start(k)), "dur": comm_dur(r) / 1000.0,
                   "args": {"grid": [8, 1, 1], "block": [512, 1, 1]}})
    return {"schemaVersion": 1, "distributedInfo": {"rank": r, "world_size": NW,
                                                    "backend": "nccl"},
            "traceEvents": ev}


def series(name, dev, unit, mx, times, values):
    dt = [0] + [b - a for a, b in zip(times, times[1:])]
    return {"name": name, "device": dev, "label": "", "unit": unit, "max": mx,
            "t0": str(times[0]), "dt": dt, "v": values}


def hw_json(host):
    ts = [T0 + t for t in sample_times()]
    out = []
    for r in range(NW):
        st = [state(r, t) for t in sample_times()]
        out.append(series("nvlink_tx", r, "B/s", float(CAP), ts, [float(s[0] * GIB) for s in st]))
        out.append(series("nvlink_rx", r, "B/s", float(CAP), ts, [float(s[1] * GIB) for s in st]))
        out.append(series("sm_active", r, "%", 100.0, ts, [80.0 if s[2] else 0.0 for s in st]))
        out.append(series("sm_clock", r, "MHz", 0.0, ts,
                          [1200.0 if (r == 5 and s[2]) else 1980.0 for s in st]))
        out.append(series("throttle", r, "", 0.0, ts,
                          [float(0x20 if r == 5 else 0) if s[2] else 1.0 for s in st]))
    return {"format": "perftracker-hw", "version": 1, "host": host, "source": "nvml+proc",
            "note": "", "interval_ns": 100 * US, "series": out}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nsys", metavar="DIR", help="write nsys SQLite exports into DIR")
    ap.add_argument("--kineto", metavar="DIR", help="write Kineto traces + hw_node1.json into DIR")
    a = ap.parse_args()
    if not a.nsys and not a.kineto:
        ap.error("give --nsys DIR and/or --kineto DIR")
    for d in (a.nsys, a.kineto):
        if d:
            os.makedirs(d, exist_ok=True)
    for r in range(NW):
        name = "node1_%d_%d" % (r, 4000 + r)
        if a.nsys:
            write_nsys(os.path.join(a.nsys, name + ".sqlite"), r)
        if a.kineto:
            with open(os.path.join(a.kineto, name + ".json"), "w") as f:
                json.dump(kineto_trace(r), f)
    if a.kineto:
        tmp = os.path.join(a.kineto, "hw_node1.json.tmp")
        with open(tmp, "w") as f:
            json.dump(hw_json("node1"), f, separators=(",", ":"))
        os.rename(tmp, os.path.join(a.kineto, "hw_node1.json"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
