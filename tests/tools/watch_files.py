"""Write the watch files of N ranks (docs/watch.md's line format, as the
collector's watch thread writes them) into a node directory's watch/
folder: one all-reduce per step, every rank arriving mid-step, the ranks
given with --late arriving that many ms later.  Times end at now, so that
the agent sees a live job.  Used by tests/cli/test_metrics.sh.

    watch_files.py NODE_DIR --ranks 4 --steps 100 --late 2:30 [--host h]
"""
import argparse
import json
import os
import time


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("node_dir")
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--step-ms", type=float, default=100.0)
    p.add_argument("--late", action="append", default=[], help="RANK:MS")
    p.add_argument("--host", default="h")
    p.add_argument("--no-fr", type=int, action="append", default=[],
                   help="a rank whose Flight Recorder cannot be read (step times only)")
    a = p.parse_args()
    late = {int(r): float(ms) for r, ms in (x.split(":") for x in a.late)}
    d = os.path.join(a.node_dir, "watch")
    os.makedirs(d, exist_ok=True)
    step_us = int(a.step_ms * 1000)
    end = int(time.time() * 1e6)
    base = end - a.steps * step_us
    for r in range(a.ranks):
        wid = "%s_%d_%d" % (a.host, r, 1000 + r)
        lines = [{"format": "perftracker-watch", "version": 1, "id": wid, "rank": r,
                  "world": a.ranks, "local_rank": r, "host": a.host, "pid": 1000 + r}]
        if r in a.no_fr:
            lines.append({"fr": "none", "why": "no process group yet (init_process_group "
                                               "not called): step times only"})
        else:
            lines.append({"fr": "on", "why": ""})
        for s in range(1, a.steps + 1):
            t0 = base + (s - 1) * step_us
            line = {"s": s, "t0": t0, "t1": t0 + step_us}
            if r not in a.no_fr:
                arr = t0 + step_us // 2 + int(late.get(r, 0) * 1000)
                line["c"] = [["0", s, "gloo:all_reduce", arr, -1, -1]]
            lines.append(line)
        tmp = os.path.join(d, ".%s.tmp" % wid)
        with open(tmp, "w") as f:
            for x in lines:
                f.write(json.dumps(x, separators=(",", ":")) + "\n")
        os.rename(tmp, os.path.join(d, wid + ".jsonl"))


if __name__ == "__main__":
    main()
