"""Shared pieces of the Python tests (tests/py/test_*.py): where the tree
and the perftracker binary are, polling, reading the control directory's
JSON records, and a training job whose worker processes are started by
hand.  Not a test file itself (tests/run runs tests/py/test_*.py); the tests
put this folder on sys.path and import it.
"""
import glob
import json
import os
import signal
import socket
import subprocess
import time
import unittest

ROOT = os.environ.get("PT_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
_VENV_PY = os.path.join(ROOT, ".venv", "bin", "python")
# The torch the jobs run on: the repository's torch-2 venv (make venv), else
# what PYTHON names.  SYSTEM_PYTHON: Debian's interpreter (its torch 1.13),
# for what a user does outside the venv.
PYTHON = os.environ.get("PYTHON") or (_VENV_PY if os.access(_VENV_PY, os.X_OK) else "/usr/bin/python3")
SYSTEM_PYTHON = os.environ.get("SYSTEM_PYTHON", "/usr/bin/python3")


def binary():
    """The sanitizer build when the test runner built it (tests/run sets
    PT_BIN), else the optimised one."""
    for cand in (os.environ.get("PT_BIN"), os.environ.get("PT_BIN_OPT"),
                 os.path.join(ROOT, "build", "perftracker")):
        if cand and os.access(cand, os.X_OK):
            return cand
    raise unittest.SkipTest("perftracker binary not built (run make)")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_for(pred, timeout, what, step=0.05):
    """pred()'s first true value, polled every step seconds; fails the test
    after timeout seconds."""
    end = time.time() + timeout
    while time.time() < end:
        v = pred()
        if v:
            return v
        time.sleep(step)
    raise AssertionError("timed out after %.0f s waiting for %s" % (timeout, what))


def read_json(path):
    """The JSON in path, or None when it is missing or not (yet) whole."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def read_text(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def control_workers(control):
    """{worker id: registration record plus "hb": heartbeat record} of every
    worker the control directory knows: those the node agents publish in
    their node files (agents/<host>.json, "workers") and those registered
    directly (workers/ and heartbeats/, no agent on their node); the fresher
    heartbeat wins (docs/collector.md, "Control directory")."""
    out = {}

    def add(w, hb):
        old = out.get(w["id"])
        if old is None or (hb or {}).get("time", 0) > old["hb"].get("time", 0):
            out[w["id"]] = dict(w, **{"hb": hb or {}})
    for p in glob.glob(os.path.join(control, "agents", "*.json")):
        for e in (read_json(p) or {}).get("workers", []):
            add(e["worker"], e.get("hb"))
    for p in glob.glob(os.path.join(control, "workers", "*.json")):
        w = read_json(p)
        if w:
            add(w, read_json(os.path.join(control, "heartbeats", os.path.basename(p))))
    return out


def worker_status(control, tid, wid):
    """A worker's status record for trigger tid: its node file's "status"
    (its agent carries it) or status/<tid>/<wid>.json (written directly),
    the newer of the two; None when there is none yet."""
    best = read_json(os.path.join(control, "status", tid, wid + ".json"))
    for p in glob.glob(os.path.join(control, "agents", "*.json")):
        for e in (read_json(p) or {}).get("workers", []):
            s = e.get("status")
            if e["worker"]["id"] == wid and s and s.get("trigger") == tid and \
                    (best is None or s.get("time", 0) >= best.get("time", 0)):
                best = s
    return best


def run_dir_of(res):
    """The run directory named by the "perftracker: report: DIR/PerfDisplay/
    index.html" line of a finished trigger or hang-check."""
    for line in res.stderr.splitlines():
        if line.startswith("perftracker: report: "):
            return os.path.dirname(os.path.dirname(line.split(": ", 2)[2]))
    raise AssertionError("no report line in:\n" + res.stderr)


class Job(object):
    """The workers of one training job, started by hand (torchrun is broken
    under Python 3.11 here): one process per rank with RANK, WORLD_SIZE,
    LOCAL_RANK, ... and the collector's settings in its environment, its
    output in tmp/rank<r>.log.  Subclasses start the ranks with spawn()."""

    def __init__(self, tmp, n):
        self.tmp = tmp
        self.n = n
        self.control = os.path.join(tmp, "control")
        self.output = os.path.join(tmp, "output")
        self.procs = []
        self.logs = []
        self.port = free_port()

    def spawn(self, r, argv, host="node0", local_rank=None, spool="spool", env=None):
        """Start rank r running argv; env is added to the job's settings."""
        e = dict(os.environ)
        e.update({
            "PYTHONPATH": os.path.join(ROOT, "python"),
            "PERFTRACKER_CONTROL_DIR": self.control,
            "PERFTRACKER_SPOOL_DIR": os.path.join(self.tmp, spool),
            "PERFTRACKER_HOST": host,
            "PERFTRACKER_BIN": binary(),
            "PERFTRACKER_AGENT_IDLE_EXIT": "3",
            "PERFTRACKER_HEARTBEAT_MS": "200",
            "RANK": str(r), "WORLD_SIZE": str(self.n),
            "LOCAL_RANK": str(r if local_rank is None else local_rank),
            "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(self.port),
            "OMP_NUM_THREADS": "1",
        })
        e.update(env or {})
        log = open(os.path.join(self.tmp, "rank%d.log" % r), "w+")
        self.logs.append(log)
        self.procs.append(subprocess.Popen(argv, env=e, stdout=log, stderr=subprocess.STDOUT))

    def log_text(self):
        """The end of every rank's and every agent's log, for failure messages."""
        out = []
        for i, log in enumerate(self.logs):
            log.flush()
            log.seek(0)
            out.append("--- rank %d ---\n%s" % (i, log.read()[-3000:]))
        for p in glob.glob(os.path.join(self.control, "agents", "*.log")):
            with open(p) as f:
                out.append("--- %s ---\n%s" % (os.path.basename(p), f.read()[-3000:]))
        return "\n".join(out)

    def kill_all(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        # Agents were started detached by the collector: stop them by the
        # pid in their lock.
        for lock in glob.glob(os.path.join(self.control, "agents", "*.lock")):
            pid = (read_json(lock) or {}).get("pid")
            if pid:
                try:
                    os.kill(int(pid), signal.SIGTERM)
                except OSError:
                    pass
        for log in self.logs:
            log.close()
