"""The online path as it fails: real gloo jobs of CPU-bound workers, more
busy processes than cores, triggered fresh and back to back, two jobs on one
host with the default folders (docs/collector.md, "Jobs on one host").  Each
round says what a user would check: traces lost, workers that profiled other
steps than the trigger announced, seconds from the last trace written to the
report, and whether the job's node channel and spool folder are gone 10 s
after it ended.

Used by tests/py/test_soak.py (the short version CI runs) and bench/soak.py
(the long one, with a count; numbers in docs/bench.md).  Not a test file.
Everything lives under one temporary PERFTRACKER_ROOT and
PERFTRACKER_NODE_DIR, so nothing depends on what the machine already holds.
"""
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time

import harness
from harness import PYTHON, ROOT, binary

TRAIN = os.path.join(ROOT, "examples", "train_gloo.py")


def job_dirname(job_id):
    """src/control/job.c's folder name of a job id."""
    d = re.sub(r"[^A-Za-z0-9._-]", "-", job_id)[:128] or "-"
    return "-" + d[1:] if d.startswith(".") else d


class Host(object):
    """One machine's default folders: PERFTRACKER_ROOT and the node
    channel's base, both temporary."""

    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="pt_soak_")
        self.root = os.path.join(self.tmp, "root")
        self.shm = os.path.join(self.tmp, "shm")
        os.makedirs(self.shm)
        self.jobs = []

    def env(self):
        e = dict(os.environ)
        for k in list(e):
            if k.startswith("PERFTRACKER_") or k in ("MASTER_ADDR", "MASTER_PORT",
                                                      "TORCHELASTIC_RUN_ID", "SLURM_JOB_ID"):
                del e[k]
        e.update({"PERFTRACKER_ROOT": self.root, "PERFTRACKER_NODE_DIR": self.shm,
                  "PERFTRACKER_BIN": binary(), "PYTHONPATH": os.path.join(ROOT, "python"),
                  "OMP_NUM_THREADS": "1"})
        return e

    def close(self):
        for j in self.jobs:
            j.kill()
        # Agents still running (a failed test): by the pid in their lock.
        for lock in glob.glob(os.path.join(self.root, "jobs", "*", "agents", "*.lock")):
            pid = (harness.read_json(lock) or {}).get("pid")
            if pid:
                try:
                    os.kill(int(pid), signal.SIGTERM)
                except OSError:
                    pass
        shutil.rmtree(self.tmp, ignore_errors=True)


class SoakJob(object):
    """n ranks of examples/train_gloo.py with the default folders (no
    PERFTRACKER_CONTROL_DIR or _SPOOL_DIR): the job is told apart by its
    MASTER_ADDR:MASTER_PORT only."""

    def __init__(self, host, n=4, cpu_ms=15.0, load_ms=5.0):
        self.host, self.n = host, n
        self.port = harness.free_port()
        self.id = "127.0.0.1:%d" % self.port
        self.control = os.path.join(host.root, "jobs", job_dirname(self.id))
        self.stop_file = os.path.join(host.tmp, "stop-%d" % self.port)
        self.procs, self.logs = [], []
        self.started = time.time()
        for r in range(n):
            e = self.env()
            e.update({"RANK": str(r), "WORLD_SIZE": str(n), "LOCAL_RANK": str(r),
                      "LOCAL_WORLD_SIZE": str(n)})
            log = open(os.path.join(host.tmp, "job%d-rank%d.log" % (self.port, r)), "w+")
            self.logs.append(log)
            self.procs.append(subprocess.Popen(
                [PYTHON, TRAIN, "--seconds", "600", "--stop-file", self.stop_file,
                 "--slow-rank", "-1", "--cpu-ms", str(cpu_ms), "--load-ms", str(load_ms),
                 "--hidden", "64"], env=e, stdout=log, stderr=subprocess.STDOUT))
        host.jobs.append(self)

    def env(self):
        e = self.host.env()
        e.update({"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(self.port)})
        return e

    def registered(self):
        return len(harness.control_workers(self.control))

    def wait_registered(self, timeout=120):
        harness.wait_for(lambda: self.registered() >= self.n, timeout,
                         "%d workers of job %s registered" % (self.n, self.id), step=0.1)

    def trigger(self, wait=5, steps=2, by_job_option=False, timeout=300, extra=()):
        """`perftracker --trigger-on --auto-analyze --save-raw-trace all` as the
        user runs it on the master: in the job's environment, or from a
        plain shell with --job.  Returns a Round."""
        if by_job_option:
            env = self.host.env()
            argv = [binary(), "--trigger-on", "--job", self.id]
        else:
            env = self.env()
            argv = [binary(), "--trigger-on"]
        argv += ["--auto-analyze", "--save-raw-trace", "all", "--wait", str(wait), "--steps",
                 str(steps), "-q"] + list(extra)
        t0 = time.time()
        res = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)
        return Round(self, res, t0, time.time(), wait, steps)

    def stop(self, timeout=120):
        with open(self.stop_file, "w"):
            pass
        end = time.time() + timeout
        for p in self.procs:
            try:
                p.wait(max(1, end - time.time()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.ended = time.time()

    def kill(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        for log in self.logs:
            log.close()
        self.logs = []

    def leftovers(self):
        """What of the job is still in the node channel's base and the
        spool: paths (empty when nothing)."""
        mine = []
        for base in glob.glob(os.path.join(self.host.shm, "perftracker-*")):
            for n in os.listdir(base):
                if self._is_mine(n):
                    mine.append(os.path.join(base, n))
        spool = os.path.join(self.host.root, "spool")
        if os.path.isdir(spool):
            mine += [os.path.join(spool, n) for n in os.listdir(spool) if self._is_mine(n)]
        return mine

    def _is_mine(self, name):
        # <host>-<16 hex of the control directory>: ask the binary for ours.
        if not hasattr(self, "_key"):
            out = subprocess.run([binary(), "agent", "--control-dir", self.control,
                                  "--print-spool-dir"], env=self.env(), capture_output=True,
                                 text=True, check=True).stdout.strip()
            self._key = os.path.basename(out)
        return name == self._key

    def log_text(self):
        out = []
        for i, log in enumerate(self.logs):
            log.flush()
            log.seek(0)
            out.append("--- job %s rank %d ---\n%s" % (self.id, i, log.read()[-2000:]))
        for p in glob.glob(os.path.join(self.control, "agents", "*.log")):
            out.append("--- %s ---\n%s" % (p, harness.read_text(p)[-3000:]))
        return "\n".join(out)


class Round(object):
    """One trigger's result: announced steps (the last 'profiling steps A-B'
    line: re-armed rounds announce again), the steps each worker's report
    entry says, the workers the report lacks or lists as failed."""

    def __init__(self, job, res, t0, t1, wait, steps):
        self.job, self.res, self.wait, self.steps = job, res, wait, steps
        self.seconds = t1 - t0
        self.rc = res.returncode
        self.announced = None
        self.rearms = 0
        for m in re.finditer(r"profiling steps (\d+)-(\d+)", res.stderr):
            self.announced = list(range(int(m.group(1)), int(m.group(2)) + 1))
        self.rearms = len(re.findall(r"re-armed as ", res.stderr))
        self.report = None
        self.run_dir = None
        for line in res.stderr.splitlines():
            if line.startswith("perftracker: report: "):
                self.run_dir = os.path.dirname(os.path.dirname(line.split(": ", 2)[2]))
        if self.run_dir:
            self.report = harness.read_json(os.path.join(self.run_dir, "PerfDisplay",
                                                         "report.json"))
        self.workers = (self.report or {}).get("workers", {})
        self.lost = [w for w, v in self.workers.items() if v.get("error") or not v.get("steps")]
        self.lost += ["(missing)"] * max(0, job.n - len(self.workers))
        self.misaligned = [w for w, v in self.workers.items()
                           if v.get("steps") and v.get("steps") != self.announced]
        self.foreign = [w for w in self.workers if not any(
            w.endswith("_%d.json" % p.pid) for p in job.procs)]
        # Seconds from the last raw trace written (its mtime: the agents
        # move it into raw_trace/) to the trigger's exit.
        raws = glob.glob(os.path.join(self.run_dir or "/nonexistent", "raw_trace", "*_*_*.json"))
        raws = [r for r in raws if not os.path.basename(r).startswith("hw_")]
        self.after_last_trace = (t1 - max(os.path.getmtime(r) for r in raws)) if raws else None

    def ok(self):
        return (self.rc == 0 and not self.lost and not self.misaligned and not self.foreign
                and len(self.workers) == self.job.n)

    def line(self, what):
        return ("%-28s rc %d, workers %d, lost %d, other steps %d, foreign %d, re-arms %d, "
                "announced %s, %.1f s (%s s after the last trace)" % (
                    what, self.rc, len(self.workers), len(self.lost), len(self.misaligned),
                    len(self.foreign), self.rearms,
                    "%d-%d" % (self.announced[0], self.announced[-1]) if self.announced else "-",
                    self.seconds, "%.2f" % self.after_last_trace
                    if self.after_last_trace is not None else "-"))

    def explain(self):
        return "%s\nstderr:\n%s\nworkers: %s\n%s" % (
            self.line("round"), self.res.stderr[-4000:],
            json.dumps({w: {k: v.get(k) for k in ("steps", "error")}
                        for w, v in self.workers.items()}), self.job.log_text())


def fresh_job_round(host, age=2.0, wait=5, steps=3, n=4, by_job_option=False):
    """A job started now, triggered `age` s after its workers registered."""
    j = SoakJob(host, n=n)
    j.wait_registered()
    time.sleep(age)
    r = j.trigger(wait=wait, steps=steps, by_job_option=by_job_option)
    return j, r


def concurrent_rounds(host, steps=2, third=True):
    """Two 4-worker jobs triggered at the same moment; a third (2 workers)
    started while they are profiled.  Returns (rounds, jobs)."""
    a, b = SoakJob(host), SoakJob(host)
    a.wait_registered()
    b.wait_registered()
    time.sleep(2)
    out = [None, None]

    def go(i, j, opt):
        out[i] = j.trigger(wait=3, steps=steps, by_job_option=opt)
    ts = [threading.Thread(target=go, args=(0, a, False)),
          threading.Thread(target=go, args=(1, b, True))]
    for t in ts:
        t.start()
    c = None
    if third:
        time.sleep(1.0)
        c = SoakJob(host, n=2)
    for t in ts:
        t.join()
    return out, [x for x in (a, b, c) if x]


def gone_within(job, seconds=10.0):
    """After the job's workers ended: are its node channel and spool
    folder gone within `seconds`?  Returns what is left (empty: clean)."""
    end = job.ended + seconds
    left = job.leftovers()
    while left and time.time() < end:
        time.sleep(0.2)
        left = job.leftovers()
    return left
