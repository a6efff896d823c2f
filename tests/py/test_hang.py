"""Hang diagnosis and automatic profiling with real torch and real processes.

* Three DDP workers on gloo; rank 1 blocks inside a Python function at step
  10 while ranks 0 and 2 wait in all_reduce: `perftracker --trigger-on`, run
  while they hang, switches to hang diagnosis and names rank 1 and its
  function; `hang-check` and `status` agree.
* A worker spinning in C with the GIL held still gets its stacks dumped
  (on request and by the watchdog itself).
* A killed worker is reported as dead, the others as hung.
* A worker stopped with SIGSTOP (no step, no heartbeat, no stacks) in a job
  of 2 is the first suspect.
* A job whose steps take twice as long after a while is profiled by the
  agent on its own (--auto-profile), once, and the report says why.

The job script is written to the test's temporary folder; hang timeouts are
a few seconds so that the whole file runs in about two minutes.
"""
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import PYTHON, binary, read_json, read_text, run_dir_of  # noqa: E402


def wait_for(pred, timeout, what, step=0.1):
    """harness.wait_for, polling every 0.1 s unless told otherwise."""
    return harness.wait_for(pred, timeout, what, step)


JOB = textwrap.dedent('''
    """A small training job that can hang on purpose (tests/py/test_hang.py)."""
    import argparse
    import os
    import time

    from perftracker import PerfTracker, _collector
    tracer = PerfTracker()

    import torch
    import torch.distributed as dist
    import torch.nn as nn


    def stuck_in_python(seconds):
        """Blocked in Python code: the planted hang."""
        end = time.time() + seconds
        while time.time() < end:
            time.sleep(0.05)


    def spin_in_c(seconds):
        """Blocked in C with the GIL held."""
        _collector._test_spin_gil(seconds)


    def main():
        p = argparse.ArgumentParser()
        p.add_argument("--ddp", action="store_true")
        p.add_argument("--hang-ranks", default="")
        p.add_argument("--hang-step", type=int, default=10)
        p.add_argument("--hang-how", default="python")
        p.add_argument("--hang-seconds", type=float, default=300)
        p.add_argument("--step-ms", type=float, default=20)
        p.add_argument("--slow-after", type=int, default=0)
        p.add_argument("--slow-factor", type=float, default=2.0)
        p.add_argument("--seconds", type=float, default=120)
        a = p.parse_args()
        rank = int(os.environ["RANK"])
        torch.set_num_threads(1)
        if a.ddp:
            dist.init_process_group("gloo", rank=rank, world_size=int(os.environ["WORLD_SIZE"]))
        model = nn.Linear(16, 16)
        hang = rank in [int(r) for r in a.hang_ranks.split(",") if r]
        end = time.time() + a.seconds
        step = 0
        while time.time() < end:
            if hang and step == a.hang_step:
                (spin_in_c if a.hang_how == "spin" else stuck_in_python)(a.hang_seconds)
            loss = model(torch.randn(8, 16)).sum()
            loss.backward()
            if a.ddp:
                t = torch.ones(4)
                dist.all_reduce(t)
            ms = a.step_ms
            if a.slow_after and step >= a.slow_after:
                ms *= a.slow_factor
            time.sleep(ms / 1000.0)
            step += 1
            tracer.step()


    main()
''')


# The line of the job's dist.all_reduce (the call site hang-check names).
ALL_REDUCE_LINE = JOB.splitlines().index("            dist.all_reduce(t)") + 1
# Measured numbers, printed after all tests (printing inside a test would
# split unittest's "name ... ok" line, which tests/run counts).
MEASURED = []


def tearDownModule():
    if MEASURED:
        print("\nmeasured:\n    " + "\n    ".join(MEASURED))


class Job(harness.Job):
    """n ranks of the job script above (args are its options); no agents
    unless the test starts one."""

    def __init__(self, tmp, n, args=(), env=None):
        harness.Job.__init__(self, tmp, n)
        self.script = os.path.join(tmp, "job.py")
        with open(self.script, "w") as f:
            f.write(JOB)
        own = {"PERFTRACKER_AUTO_AGENT": "0", "LOCAL_WORLD_SIZE": str(n)}
        own.update(env or {})
        for r in range(n):
            self.spawn(r, [PYTHON, self.script] + list(args), env=own)

    def ids(self):
        return {r: "node0_%d_%d" % (r, p.pid) for r, p in enumerate(self.procs)}

    def hb(self, r):
        return read_json(os.path.join(self.control, "heartbeats", self.ids()[r] + ".json")) or {}

    def wait_steps(self, step, timeout=90, exact=False):
        def ready():
            for p in self.procs:
                if p.poll() is not None:
                    raise AssertionError("worker exited early:\n" + self.log_text())
            s = [self.hb(r).get("step", 0) for r in range(self.n)]
            return all(x == step for x in s) if exact else all(x >= step for x in s)
        wait_for(ready, timeout, "%d workers at step %d" % (self.n, step), 0.2)


def run(*args, timeout=120):
    return subprocess.run([binary()] + list(args), capture_output=True, text=True,
                          timeout=timeout)


class HungDDP(unittest.TestCase):
    """Rank 1 of 3 blocks in stuck_in_python at step 10; 0 and 2 wait in
    all_reduce."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="pt_hang_")
        cls.job = Job(cls.tmp, 3, ["--ddp", "--hang-ranks", "1", "--hang-step", "10"])
        try:
            cls.job.wait_steps(10, exact=True)
        except Exception:
            cls.job.kill_all()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.job.kill_all()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_1_trigger_diagnoses_the_hang(self):
        ids = self.job.ids()
        t0 = time.time()
        res = run("--trigger-on", "--auto-analyze", "--control-dir", self.job.control,
                  "--output-dir", self.job.output, "--wait", "2", "--steps", "2",
                  "--hang-timeout", "3", "--stack-wait", "3")
        took = time.time() - t0
        self.assertEqual(res.returncode, 0, res.stderr + self.job.log_text())
        self.assertIn("diagnosing a hang", res.stderr)
        run_dir = run_dir_of(res)
        rep = read_json(os.path.join(run_dir, "PerfDisplay", "report.json"))
        h = rep["Hang"]
        stuck = ids[1] + ".json"
        self.assertTrue(h["hung"])
        self.assertEqual(h["suspect_workers"], [stuck])
        # Groups: the suspect first, alone, in its function; the two others
        # together in all_reduce.
        self.assertEqual(len(h["groups"]), 2, h["groups"])
        g0, g1 = h["groups"]
        self.assertEqual((g0["suspect"], g0["workers"]), (1, [stuck]))
        self.assertEqual(g0["function"], self.job.script + ": stuck_in_python")
        self.assertTrue(g0["stack"].endswith("|" + self.job.script + ": stuck_in_python"),
                        g0["stack"])
        self.assertEqual((g1["suspect"], g1["workers"]), (0, [ids[0] + ".json", ids[2] + ".json"]))
        self.assertTrue(g1["where"].endswith(": all_reduce"), g1)
        self.assertEqual(g1["function"], self.job.script + ": main")
        for r in range(3):
            w = h["workers"][ids[r] + ".json"]
            self.assertEqual((w["state"], w["last step"], w["stacks"]), ("hung", 10, "on request"))
            self.assertGreaterEqual(w["seconds since last step"], 3)
        self.assertIn(stuck, h["explanation"])
        self.assertIn("stuck_in_python", h["explanation"])
        # ...and, from the Flight Recorder, the collective it never entered.
        self.assertEqual([x["worker"] for x in h["never entered"]], [stuck])
        self.assertIn("%s never entered gloo:all_reduce" % stuck, h["explanation"])
        self.assertEqual(h["hang timeout (s)"], 3)
        # One finding naming the worker and the function; the report says
        # which trigger found it; the page and the raw stacks are there.
        self.assertEqual(len(rep["findings"]), 1)
        f = rep["findings"][0]
        self.assertEqual((f["category"], f["workers"], f["function"]),
                         ("Hang", [stuck], self.job.script + ": stuck_in_python"))
        # Alone in its stack while the two others share one (all_reduce).
        self.assertEqual(f["confidence"]["level"], "strong", f["confidence"])
        self.assertEqual(rep["trigger"]["reason"], "requested on the command line")
        self.assertTrue(os.path.exists(os.path.join(run_dir, "PerfDisplay", "index.html")))
        self.assertEqual(sorted(os.listdir(os.path.join(run_dir, "stacks"))),
                         sorted(i + ".txt" for i in ids.values()))
        # The text report on stdout.
        self.assertIn("Hang:", res.stdout)
        self.assertIn("1. worker " + stuck + " is stuck in", res.stdout)
        # The trigger ended: workers are not left armed.
        self.assertEqual(read_json(os.path.join(self.job.control, "trigger.json"))["state"], "done")
        for line in res.stderr.splitlines():
            if "diagnosing a hang" in line or "stacks from" in line:
                MEASURED.append(line)
        MEASURED.append("trigger to hang report: %.2f s (hang timeout 3 s)" % took)

    def test_2_hang_check_and_status(self):
        ids = self.job.ids()
        t0 = time.time()
        res = run("hang-check", "--control-dir", self.job.control, "--hang-timeout", "3",
                  "--json")
        took = time.time() - t0
        self.assertEqual(res.returncode, 0, res.stderr)
        h = json.loads(res.stdout)
        self.assertTrue(h["hung"])
        self.assertEqual(h["suspect_workers"], [ids[1] + ".json"])
        self.assertEqual(h["detected by"], "hang-check")
        # The Flight Recorder (the collectors' watch, docs/hang.md): rank 1
        # never entered the all-reduce of step 10 that ranks 0 and 2 wait
        # in; one all-reduce a step, so the others' is its last + 1.
        ne = h["never entered"]
        self.assertEqual(len(ne), 1, ne)
        ne = ne[0]
        self.assertEqual((ne["worker"], ne["process group"], ne["description"],
                          ne["collective"], ne["workers in it"]),
                         (ids[1] + ".json", "0", "default_pg", "gloo:all_reduce", 2), ne)
        self.assertEqual(ne["sequence"], ne["its last sequence"] + 1, ne)
        self.assertEqual(ne["call site"], "%s:%d in main" % (self.job.script, ALL_REDUCE_LINE),
                         ne)
        self.assertIn("Worker %s.json never entered gloo:all_reduce (process group 0 "
                      "'default_pg', sequence %d) that 2 others entered at %s" %
                      (ids[1], ne["sequence"], ne["call site"]), h["explanation"])
        MEASURED.append("hang-check: %.2f s" % took)
        res = run("hang-check", "--control-dir", self.job.control, "--hang-timeout", "3")
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertIn("group 1 (suspect): 1 worker, steps 10-10: " + ids[1] + ".json", res.stdout)
        self.assertIn(self.job.script + ": stuck_in_python", res.stdout)
        # status: every worker silent (no step for 2 s), none behind.
        res = run("status", "--control-dir", self.job.control, "--json", "--silent", "2")
        st = json.loads(res.stdout)
        self.assertEqual(sorted(w["id"] for w in st["workers"]), sorted(ids.values()))
        for w in st["workers"]:
            self.assertEqual((w["step"], w["flags"]), (10, ["silent"]), w)
        res = run("status", "--control-dir", self.job.control, "--silent", "2")
        self.assertIn("3 silent (no step for 2 s), 0 laggards", res.stdout)
        MEASURED.append("hang-check: %.2f s" % took)


class GilHeld(unittest.TestCase):
    def test_spinning_in_c_with_the_gil(self):
        tmp = tempfile.mkdtemp(prefix="pt_hang_gil_")
        job = Job(tmp, 1, ["--hang-ranks", "0", "--hang-step", "10", "--hang-how", "spin",
                           "--hang-seconds", "40"], env={"PERFTRACKER_HANG_S": "2"})
        try:
            job.wait_steps(10, exact=True)
            wid = job.ids()[0]
            path = os.path.join(job.control, "stacks", wid + ".txt")
            # The watchdog's own dump after 2 s without a step.
            wait_for(lambda: "reason: stalled" in read_text(path), 15, "automatic dump")
            text = read_text(path)
            self.assertIn("in spin_in_c", text)
            self.assertIn("step: 10\n", text)
            # On request, while the GIL is still held.
            res = run("hang-check", "--control-dir", job.control, "--hang-timeout", "2", "--json")
            self.assertEqual(res.returncode, 0, res.stderr)
            h = json.loads(res.stdout)
            w = h["workers"][wid + ".json"]
            self.assertEqual((w["state"], w["stacks"], w["function"]),
                             ("hung", "on request", job.script + ": spin_in_c"))
            self.assertTrue(w["where"].startswith(job.script + ":"), w)
            self.assertIn("spin_in_c", h["explanation"])
            self.assertIsNone(job.procs[0].poll(), "still spinning")
        finally:
            job.kill_all()
            shutil.rmtree(tmp, ignore_errors=True)


class DeadWorker(unittest.TestCase):
    def test_killed_worker_is_dead_not_hung(self):
        tmp = tempfile.mkdtemp(prefix="pt_hang_dead_")
        job = Job(tmp, 3, ["--hang-ranks", "0,1,2", "--hang-step", "10"])
        try:
            job.wait_steps(10, exact=True)
            # Every rank silent for longer than --hang-timeout before the
            # trigger looks: a rank that reached step 10 later than the
            # first (0.4 s on a loaded CI machine) was still "running"
            # when the first one's silence started the hang diagnosis.
            time.sleep(2.5)
            ids = job.ids()
            job.procs[2].kill()
            job.procs[2].wait()
            res = run("--trigger-on", "--auto-analyze", "--control-dir", job.control,
                      "--output-dir", job.output, "--hang-timeout", "2", "--stack-wait", "3")
            self.assertEqual(res.returncode, 0, res.stderr)
            rep = read_json(os.path.join(run_dir_of(res), "PerfDisplay", "report.json"))
            h = rep["Hang"]
            dead = ids[2] + ".json"
            self.assertTrue(h["hung"])
            self.assertEqual(h["workers"][dead]["state"], "dead")
            self.assertEqual(h["workers"][dead]["stacks"], "none: the process is gone")
            for r in (0, 1):
                self.assertEqual(h["workers"][ids[r] + ".json"]["state"], "hung")
            self.assertEqual(h["suspect_workers"], [dead])
            self.assertIn("Worker %s is dead" % dead, h["explanation"])
            # The two live ones are together, in the same function.
            self.assertEqual(len(h["groups"]), 1)
            self.assertEqual(h["groups"][0]["workers"], [ids[0] + ".json", ids[1] + ".json"])
            self.assertEqual(h["groups"][0]["function"], job.script + ": stuck_in_python")
            self.assertEqual(rep["findings"][0]["workers"], [dead])
        finally:
            job.kill_all()
            shutil.rmtree(tmp, ignore_errors=True)


class StoppedWorker(unittest.TestCase):
    """Two DDP workers, rank 1 stopped with SIGSTOP while training: no
    step, no heartbeat and no stacks from it, rank 0 waits in all_reduce.
    The stopped one is the first suspect, in a job of 2."""

    def test_stopped_worker_is_the_suspect(self):
        tmp = tempfile.mkdtemp(prefix="pt_hang_stop_")
        job = Job(tmp, 2, ["--ddp", "--seconds", "120"])
        try:
            job.wait_steps(10)
            ids = job.ids()
            os.kill(job.procs[1].pid, signal.SIGSTOP)
            res = run("--trigger-on", "--auto-analyze", "--control-dir", job.control,
                      "--output-dir", job.output, "--hang-timeout", "2", "--stack-wait", "2")
            self.assertEqual(res.returncode, 0, res.stderr + job.log_text())
            self.assertIn("diagnosing a hang", res.stderr)
            rep = read_json(os.path.join(run_dir_of(res), "PerfDisplay", "report.json"))
            h = rep["Hang"]
            stopped = ids[1] + ".json"
            self.assertTrue(h["hung"])
            self.assertEqual(h["suspect_workers"][:1], [stopped], h["explanation"])
            self.assertEqual(h["workers"][stopped]["state"], "hung")
            self.assertTrue(h["workers"][stopped]["stacks"].startswith("none"), h["workers"])
            self.assertEqual(h["workers"][ids[0] + ".json"]["stacks"], "on request")
            self.assertIn("Worker %s" % stopped, h["explanation"])
            self.assertIn("gave no stacks", h["explanation"])
            self.assertEqual(rep["findings"][0]["workers"], [stopped])
        finally:
            for p in job.procs:
                try:
                    os.kill(p.pid, signal.SIGCONT)
                except OSError:
                    pass
            job.kill_all()
            shutil.rmtree(tmp, ignore_errors=True)


class AutoProfile(unittest.TestCase):
    def test_slowdown_triggers_profiling_once(self):
        tmp = tempfile.mkdtemp(prefix="pt_hang_auto_")
        out = os.path.join(tmp, "auto-out")
        job = Job(tmp, 1, ["--step-ms", "40", "--slow-after", "80", "--slow-factor", "2",
                           "--seconds", "60"],
                  env={"PERFTRACKER_AUTO_AGENT": "1", "PERFTRACKER_AUTO_PROFILE": "1",
                       "PERFTRACKER_AUTO_WINDOW": "20", "PERFTRACKER_AUTO_COOLDOWN": "1",
                       # +50%: well above the noise of a loaded 2-core machine,
                       # well below the planted 2x.
                       "PERFTRACKER_AUTO_SLOWDOWN": "0.5",
                       "PERFTRACKER_AUTO_OUTPUT_DIR": out, "PERFTRACKER_POLL_MS": "50"})
        try:
            def report():
                r = glob.glob(os.path.join(out, "*", "PerfDisplay", "report.json"))
                return r and read_json(r[0])
            rep = wait_for(report, 60, "an automatic report\n" + job.log_text(), 0.5)
            reason = rep["trigger"]["reason"]
            self.assertTrue(reason.startswith("auto-profile: worker %s slowed down" %
                                              job.ids()[0]), reason)
            # It fires as soon as the window crosses +50%: more than the
            # threshold, at most the full slowdown (2x), in a window that
            # reaches into the slow steps (from step 80).
            ratio = float(reason.split(" its best")[0].rsplit(", ", 1)[1].rstrip("x"))
            self.assertGreater(ratio, 1.5, reason)
            self.assertTrue(reason.endswith("; threshold +50%"), reason)
            self.assertLess(ratio, 2.3, reason)
            last = int(reason.split(" s over steps ")[1].split("-")[1].split(",")[0])
            self.assertGreater(last, 80, reason)
            MEASURED.append(reason)
            self.assertEqual(list(rep["workers"].keys()), [job.ids()[0] + ".json"])
            first = rep["trigger"]["start step"]
            self.assertGreater(first, 80)
            # Once: the same slowdown does not trigger again after the
            # cool-down (1 s); give it 8 s more.
            time.sleep(8)
            self.assertEqual(len(glob.glob(os.path.join(out, "*"))), 1,
                             os.listdir(out))
            with open(glob.glob(os.path.join(job.control, "agents", "*.log"))[0]) as f:
                log = f.read()
            self.assertEqual(log.count("auto-profile: worker"), 1, log)
            self.assertIn("auto-profile: trigger (pid", log)
        finally:
            job.kill_all()
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
