"""Tests of the collector in one process (python/perftracker): the import
paths, registration / heartbeats / unregistration in the control directory,
`perftracker status`, the Python function tracer (C), arming and disarming,
and that training runs unchanged when the control directory is unwritable
or its disk (or the spool's) is full.  Real processes, real torch where a
window is profiled.
"""
import glob
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import PYTHON, ROOT, binary, read_json, wait_for  # noqa: E402

TRAIN = os.path.join(ROOT, "examples", "train_gloo.py")
sys.path.insert(0, os.path.join(ROOT, "python"))

from perftracker import _collector  # noqa: E402


def env_for(control, **extra):
    e = dict(os.environ)
    e.update({"PYTHONPATH": os.path.join(ROOT, "python"), "PERFTRACKER_CONTROL_DIR": control,
              "PERFTRACKER_AUTO_AGENT": "0", "PERFTRACKER_HEARTBEAT_MS": "50",
              "PERFTRACKER_POLL_MS": "20", "RANK": "3", "LOCAL_RANK": "1", "WORLD_SIZE": "8",
              "LOCAL_WORLD_SIZE": "4", "PERFTRACKER_HOST": "hostx"})
    e.update(extra)
    return e


def write_trigger(control, **fields):
    t = {"format": "perftracker-trigger", "version": 1, "id": "T1", "state": "active",
         "start_step": 10, "steps": 2, "wait": 5, "save_raw_trace": "none",
         "created": time.time(), "deadline": time.time() + 120, "workers": []}
    t.update(fields)
    tmp = os.path.join(control, ".trigger.json.tmp")
    with open(tmp, "w") as f:
        json.dump(t, f)
    os.rename(tmp, os.path.join(control, "trigger.json"))


# A worker without torch: the collector only imports torch for a window.
STEPPER = textwrap.dedent("""
    import sys, time
    from c4d_perftracker_collector.PerfTracker import PerfTracker
    t = PerfTracker()
    n = int(sys.argv[1]); dt = float(sys.argv[2])
    for i in range(n):
        time.sleep(dt)
        t.step()
    print("done", n, t.info()["state"], flush=True)
    if len(sys.argv) > 3:
        time.sleep(float(sys.argv[3]))
""")


class ImportPaths(unittest.TestCase):
    def test_compat_path_is_the_same_class(self):
        from c4d_perftracker_collector.PerfTracker import PerfTracker as A
        import perftracker
        self.assertIs(A, perftracker.PerfTracker)
        self.assertTrue(issubclass(A, _collector.Collector))
        # step is the C method itself, not a Python wrapper.
        self.assertIs(A.step, _collector.Collector.step)
        self.assertEqual(A.__slots__, ())

    def test_reference_snippet_runs_unmodified(self):
        # The guide's try/except lines, in a fresh interpreter.
        tmp = tempfile.mkdtemp(prefix="pt_col_")
        try:
            code = ("try:\n"
                    "    from c4d_perftracker_collector.PerfTracker import PerfTracker\n"
                    "    my_tracer = PerfTracker()\n"
                    "except:\n"
                    "    my_tracer = None\n"
                    "assert my_tracer is not None\n"
                    "for i in range(3):\n"
                    "    my_tracer.step()\n"
                    "print(my_tracer.info()['step'])\n")
            r = subprocess.run([PYTHON, "-c", code], env=env_for(tmp), capture_output=True,
                               text=True, timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.strip(), "3")
            self.assertEqual(r.stderr, "")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


class ControlDirectory(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="pt_col_")
        self.control = os.path.join(self.tmp, "control")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_register_heartbeat_unregister(self):
        t_start = time.time()
        p = subprocess.Popen([PYTHON, "-c", STEPPER, "40", "0.01", "1.0"],
                             env=env_for(self.control), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        wid = "hostx_3_%d" % p.pid
        reg = os.path.join(self.control, "workers", wid + ".json")
        hb = os.path.join(self.control, "heartbeats", wid + ".json")
        w = wait_for(lambda: read_json(reg), 30, "registration")
        self.assertEqual(w["format"], "perftracker-worker")
        self.assertEqual((w["host"], w["rank"], w["local_rank"], w["world_size"],
                          w["local_world_size"], w["pid"]), ("hostx", 3, 1, 8, 4, p.pid))
        # All 40 steps show up in the heartbeat (written every 50 ms).
        h = wait_for(lambda: (read_json(hb) or {}).get("step") == 40 and read_json(hb), 30,
                     "heartbeat at step 40")
        self.assertEqual(h["state"], "idle")
        # A rate and a wall-clock time of this run; how high the rate is
        # follows the machine's load, so only its sign is the test's.
        self.assertGreater(h["rate"], 0)
        self.assertTrue(t_start - 0.01 <= h["time"] <= time.time() + 0.01, (t_start, h))
        out, err = p.communicate(timeout=30)
        self.assertEqual(p.returncode, 0, err)
        self.assertEqual(out.strip(), "done 40 idle")
        self.assertEqual(err, "")
        # Exit removes the records; no temporary file is left behind.
        self.assertFalse(os.path.exists(reg))
        self.assertFalse(os.path.exists(hb))
        self.assertEqual(glob.glob(os.path.join(self.control, "*", ".*")), [])

    def test_status_command(self):
        t_start = time.time()
        p = subprocess.Popen([PYTHON, "-c", STEPPER, "400", "0.02"], env=env_for(self.control),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_for(lambda: (read_json(os.path.join(self.control, "heartbeats",
                                                     "hostx_3_%d.json" % p.pid)) or {})
                     .get("step", 0) > 60, 30, "60 steps")
            r = subprocess.run([binary(), "status", "--control-dir", self.control, "--json"],
                               capture_output=True, text=True, timeout=30)
            self.assertEqual(r.returncode, 0, r.stderr)
            st = json.loads(r.stdout)
            self.assertEqual(len(st["workers"]), 1)
            w = st["workers"][0]
            self.assertEqual((w["id"], w["rank"], w["pid"], w["liveness"], w["state"]),
                             ("hostx_3_%d" % p.pid, 3, p.pid, "alive", "idle"))
            # ~50 steps/s at most (20 ms sleep); how far below follows
            # the machine's load.  The last step was in this test.
            self.assertTrue(0 < w["rate"] < 55, w)
            self.assertTrue(0 <= w["since_last_step"] <= time.time() - t_start, w)
            r = subprocess.run([binary(), "status", "--control-dir", self.control],
                               capture_output=True, text=True, timeout=30)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("STEPS/S", r.stdout)
            self.assertIn("hostx_3_%d" % p.pid, r.stdout)
            self.assertIn("alive/idle", r.stdout)
        finally:
            p.kill()
            p.communicate()
        # Killed: its records stay, status says dead, --prune removes them.
        r = subprocess.run([binary(), "status", "--control-dir", self.control, "--json"],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(json.loads(r.stdout)["workers"][0]["liveness"], "dead")
        r = subprocess.run([binary(), "status", "--control-dir", self.control, "--prune"],
                           capture_output=True, text=True, timeout=30)
        self.assertIn("pruned 1 worker record", r.stdout)
        self.assertEqual(os.listdir(os.path.join(self.control, "workers")), [])

    def test_status_without_directory(self):
        r = subprocess.run([binary(), "status", "--control-dir", os.path.join(self.tmp, "none")],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 1)
        self.assertIn("no control directory", r.stderr)

    def test_trigger_without_workers(self):
        os.makedirs(self.control)
        r = subprocess.run([binary(), "--trigger-on", "--control-dir", self.control],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 1)
        self.assertIn("no live worker in '%s'" % self.control, r.stderr)
        r = subprocess.run([binary(), "--trigger-on", "--save-raw-trace", "some"],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 1)
        self.assertIn("'--save-raw-trace': 'some' is not 'none', 'master' or 'all'", r.stderr)

    def test_trigger_without_agent(self):
        # A trace nobody summarises: the trigger says why and times out.
        # torch imported first, as in training: importing it at the start
        # step took more than the 10 s timeout on a loaded CI machine.
        p = subprocess.Popen([PYTHON, "-c", "import torch\n" + STEPPER, "800", "0.02"],
                             env=env_for(self.control, PERFTRACKER_HEARTBEAT_MS="200"),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_for(lambda: (read_json(os.path.join(self.control, "heartbeats",
                                                     "hostx_3_%d.json" % p.pid)) or {})
                     .get("step", 0) > 10, 60, "steps")
            r = subprocess.run([binary(), "--trigger-on", "--auto-analyze", "--control-dir",
                                self.control, "--output-dir", os.path.join(self.tmp, "out"),
                                "--wait", "2", "--timeout", "15", "--start-wait", "0"],
                               capture_output=True, text=True, timeout=60)
        finally:
            p.kill()
            p.communicate()
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("no agent runs for host 'hostx'", r.stderr)
        self.assertIn("hostx_3_%d (rank 3 on hostx): trace not summarised" % p.pid, r.stderr)
        self.assertIn("no worker delivered a trace", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.control, "trigger.lock")))

    def test_disarm_when_trigger_cancelled(self):
        os.makedirs(self.control)
        p = subprocess.Popen([PYTHON, "-c", STEPPER, "300", "0.01"], env=env_for(self.control),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        hbp = os.path.join(self.control, "heartbeats", "hostx_3_%d.json" % p.pid)
        try:
            wait_for(lambda: read_json(hbp), 30, "heartbeat")
            write_trigger(self.control, start_step=100000)
            wait_for(lambda: (read_json(hbp) or {}).get("state") == "armed", 30, "armed")
            st = read_json(os.path.join(self.control, "status", "T1", "hostx_3_%d.json" % p.pid))
            self.assertEqual(st["state"], "armed")
            self.assertEqual(st["start_step"], 100000)
            write_trigger(self.control, start_step=100000, state="done")
            wait_for(lambda: (read_json(hbp) or {}).get("state") == "idle", 30, "disarmed")
        finally:
            p.kill()
            p.communicate()


TINY_TRACE = json.dumps([
    {"name": "ProfilerStep#5", "ph": "X", "ts": 100, "dur": 1000, "tid": 1,
     "pid": "CPU functions", "args": {}},
    {"name": "aten::mm", "ph": "X", "ts": 200, "dur": 300, "tid": 1,
     "pid": "CPU functions", "args": {}},
    {"ph": "X", "cat": "python_function", "name": "t.py(3): f", "pid": "CPU functions",
     "tid": 1, "ts": 150.5, "dur": 500.0, "args": {}}])


class AgentCommand(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="pt_agent_")
        self.control = os.path.join(self.tmp, "control")
        self.spool = os.path.join(self.tmp, "spool")
        # The job's folder of the spool (one per control directory and host).
        self.jspool = subprocess.run(self.agent("--print-spool-dir"), capture_output=True,
                                     text=True, check=True).stdout.strip()
        self.assertTrue(self.jspool.startswith(os.path.join(self.spool, "hostx-")))
        os.makedirs(os.path.join(self.jspool, "T1"))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def agent(self, *args):
        return [binary(), "agent", "--control-dir", self.control, "--spool-dir", self.spool,
                "--host", "hostx"] + list(args)

    def test_once_by_hand(self):
        os.makedirs(self.control)
        raw = os.path.join(self.tmp, "out", "raw_trace")
        write_trigger(self.control, save_raw_trace="all", raw_dir=raw)
        for wid in ("hostx_0_5", "hostx_1_6", "hosty_2_7"):
            with open(os.path.join(self.jspool, "T1", wid + ".json"), "w") as f:
                f.write(TINY_TRACE)
        r = subprocess.run(self.agent("--once"), capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        sums = sorted(os.listdir(os.path.join(self.control, "summaries", "T1")))
        # each with its digest (docs/summary.md "Digests")
        self.assertEqual(sums, ["hostx_0_5.digest", "hostx_0_5.json", "hostx_1_6.digest",
                                "hostx_1_6.json"])
        d = read_json(os.path.join(self.control, "summaries", "T1", "hostx_0_5.digest"))
        self.assertEqual(d["digest_of"], os.path.getsize(
            os.path.join(self.control, "summaries", "T1", "hostx_0_5.json")))
        s = read_json(os.path.join(self.control, "summaries", "T1", "hostx_0_5.json"))
        self.assertEqual(s["host"], "hostx")
        self.assertEqual(s["rank"], 0)
        # Policy all: kept next to the report; another host's trace untouched.
        self.assertEqual(sorted(os.listdir(raw)), ["hostx_0_5.json", "hostx_1_6.json"])
        self.assertEqual(os.listdir(os.path.join(self.jspool, "T1")), ["hosty_2_7.json"])
        # The lock is released after --once.
        self.assertFalse(os.path.exists(os.path.join(self.control, "agents", "hostx.lock")))

    def test_one_agent_per_host(self):
        first = subprocess.Popen(self.agent("--poll", "0.05"), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        lock = os.path.join(self.control, "agents", "hostx.lock")
        try:
            wait_for(lambda: os.path.exists(lock), 30, "agent lock")
            self.assertEqual(read_json(lock)["pid"], first.pid)
            r = subprocess.run(self.agent("--once"), capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 1)
            self.assertIn("an agent for host 'hostx' already runs", r.stderr)
            # --detach exits 0 quietly when one runs.
            r = subprocess.run(self.agent("--detach"), capture_output=True, text=True, timeout=60)
            self.assertEqual((r.returncode, r.stderr), (0, ""))
        finally:
            first.terminate()
            out, err = first.communicate(timeout=30)
        self.assertEqual(first.returncode, 0, err)
        self.assertIn("stopped", err)
        self.assertFalse(os.path.exists(lock))
        # A lock left by a dead agent is taken over.
        with open(lock, "w") as f:
            import socket
            json.dump({"host": "hostx", "node": socket.gethostname(), "pid": first.pid}, f)
        r = subprocess.run(self.agent("--once"), capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("removing stale agent lock", r.stderr)


class Tracer(unittest.TestCase):
    def trace(self, fn, cap=100000):
        tmp = tempfile.mkdtemp(prefix="pt_tr_")
        try:
            path = os.path.join(tmp, "t.json")
            _collector._trace_start(cap)
            try:
                fn()
            finally:
                n, dropped = _collector._trace_stop(path)
            with open(path) as f:
                ev = json.load(f)
            self.assertEqual(len(ev), n)
            return ev, dropped
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def assertNested(self, ev):
        """Complete events of one thread nest properly (no partial overlap)."""
        spans = sorted((e["ts"], -(e["ts"] + e["dur"]), e["name"]) for e in ev)
        stack = []
        for ts, neg_end, name in spans:
            end = -neg_end
            while stack and stack[-1][1] <= ts:
                stack.pop()
            if stack:
                self.assertLessEqual(end, stack[-1][1], (name, stack[-1]))
            stack.append((ts, end, name))

    def test_names_and_nesting(self):
        def leaf(x):
            return len(x)

        def middle():
            lst = []
            for i in range(3):
                lst.append(leaf("ab" * i))
            return lst

        def boom():
            raise ValueError("x")

        def outer():
            middle()
            try:
                boom()
            except ValueError:
                pass
            sorted([3, 1, 2])

        ev, dropped = self.trace(outer)
        self.assertEqual(dropped, 0)
        for e in ev:
            self.assertEqual((e["ph"], e["cat"], e["pid"], e["tid"]), ("X", "python_function", 1, 1))
        names = [e["name"] for e in ev]
        me = os.path.abspath(__file__)
        line = leaf.__code__.co_firstlineno
        self.assertEqual(names.count("%s(%d): leaf" % (me, line)), 3)
        self.assertIn("%s(%d): boom" % (me, boom.__code__.co_firstlineno), names)
        self.assertEqual(names.count("<built-in method append of list object at 0x>"), 3)
        self.assertEqual(names.count("<built-in function len>"), 3)
        self.assertIn("<built-in function sorted>", names)
        self.assertNested(ev)
        # Each leaf lies inside middle, middle inside outer.
        by = {n.split(": ")[-1]: e for n, e in zip(names, ev)}
        for inner, out in (("middle", "outer"), ("boom", "outer")):
            i, o = by[inner], by[out]
            self.assertTrue(o["ts"] <= i["ts"] and i["ts"] + i["dur"] <= o["ts"] + o["dur"])
        # Frames active at the start (this test method, unittest's) are
        # included and strictly contain everything else.
        active = [e for e in ev if e["name"].endswith(": test_names_and_nesting")]
        self.assertEqual(len(active), 1)
        first = min(ev, key=lambda e: (e["ts"], -e["dur"]))
        self.assertLess(first["ts"], active[0]["ts"])
        self.assertGreaterEqual(first["ts"] + first["dur"], active[0]["ts"] + active[0]["dur"])

    def test_generator(self):
        def gen():
            for i in range(4):
                yield i

        ev, _ = self.trace(lambda: list(gen()))
        # Each resume is one call of the generator's frame.
        self.assertEqual(sum(1 for e in ev if e["name"].endswith(": gen")), 5)
        self.assertNested(ev)

    def test_buffer_full(self):
        def many():
            for _ in range(20000):
                abs(-1)

        # 8192 events is the floor of the buffer; 4096 are kept for returns.
        ev, dropped = self.trace(many, cap=1)
        self.assertGreater(dropped, 15000)
        self.assertLess(len(ev), 8192)
        self.assertNested(ev)

    def test_not_started_twice(self):
        _collector._trace_start(100)
        try:
            with self.assertRaises(RuntimeError):
                _collector._trace_start(100)
        finally:
            _collector._trace_stop(os.devnull)
        with self.assertRaises(RuntimeError):
            _collector._trace_stop(os.devnull)


def can_mount():
    # PT_TEST_NO_MOUNT=1 exercises the fallback used without root.
    if os.geteuid() != 0 or os.environ.get("PT_TEST_NO_MOUNT") == "1":
        return False
    d = tempfile.mkdtemp(prefix="pt_mnt_")
    try:
        ok = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", d],
                            capture_output=True).returncode == 0
        if ok:
            subprocess.run(["umount", d])
        return ok
    finally:
        os.rmdir(d)


class Robustness(unittest.TestCase):
    """Training finishes normally whatever happens to the directories."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="pt_rob_")
        self.mounts = []

    def tearDown(self):
        for m in self.mounts:
            if subprocess.run(["umount", m], capture_output=True).returncode:
                subprocess.run(["umount", "-l", m])
        shutil.rmtree(self.tmp, ignore_errors=True)

    def full_dir(self, name):
        """A directory whose file system is full: a 64 KiB tmpfs filled up
        when we may mount; otherwise a file-size limit of 0 bytes does the
        same to every write of the worker (returned as preexec_fn)."""
        d = os.path.join(self.tmp, name)
        os.makedirs(d)
        if can_mount():
            subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", d], check=True)
            self.mounts.append(d)
            with open(os.path.join(d, "filler"), "wb") as f:
                try:
                    f.write(b"x" * (1 << 20))
                except OSError:
                    pass
            return d, None
        return d, lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))

    def train(self, env, steps=40, preexec=None, extra=()):
        t0 = time.time()
        r = subprocess.run([PYTHON, TRAIN, "--no-ddp", "--steps", str(steps), "--load-ms", "1",
                            "--slow-rank", "-1", "--hidden", "32"] + list(extra),
                           env=env, capture_output=True, text=True, timeout=120,
                           preexec_fn=preexec)
        return r, time.time() - t0

    def check_trained(self, r, steps=40):
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("rank 3: %d steps" % steps, r.stdout)

    def test_unwritable_control_dir(self):
        plain = os.path.join(self.tmp, "plain")
        open(plain, "w").close()
        r, _ = self.train(env_for(os.path.join(plain, "control")))
        self.check_trained(r)
        lines = [l for l in r.stderr.splitlines() if l.startswith("perftracker:")]
        # Logged once, naming the problem, then quiet.
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("cannot register", lines[0])
        self.assertIn("Not a directory", lines[0])

    def test_control_disk_full(self):
        d, preexec = self.full_dir("control")
        r, _ = self.train(env_for(d), preexec=preexec)
        self.check_trained(r)
        lines = [l for l in r.stderr.splitlines() if l.startswith("perftracker:")]
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("cannot register", lines[0])

    def test_spool_disk_full_during_window(self):
        # Registration and heartbeats work; the raw trace cannot be written.
        spool, preexec = self.full_dir("spool")
        control = os.path.join(self.tmp, "control")
        os.makedirs(control)
        if preexec:  # the worker itself cannot write; the control dir is ours
            preexec = lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))
        write_trigger(control, start_step=15, steps=3)
        r, _ = self.train(env_for(control, PERFTRACKER_SPOOL_DIR=spool), steps=60,
                          preexec=preexec)
        self.check_trained(r, 60)
        lines = [l for l in r.stderr.splitlines() if l.startswith("perftracker:")]
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("collector disabled", lines[0])
        sts = glob.glob(os.path.join(control, "status", "T1", "*.json"))
        self.assertEqual(len(sts), 1)
        st = read_json(sts[0])
        self.assertEqual(st["state"], "failed")
        self.assertTrue("No space left" in st["error"] or "too large" in st["error"], st)


if __name__ == "__main__":
    unittest.main()
