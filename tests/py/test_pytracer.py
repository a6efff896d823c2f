"""PERFTRACKER_PYTHON_TRACER on a torch with Kineto (docs/collector.md): a
2-rank gloo job (examples/train_gloo.py, rank 1 slowed by slow_augment) per
mode, triggered once with --save-raw-trace all.  Each raw trace must keep
Kineto's object (distributedInfo), hold Python functions recorded by the
chosen tracer (kineto: torch's python_function events, with their "Python
id"; c: ours, merged into traceEvents) on the worker's pid and the thread
that runs its steps, ProfilerStep#<n> for exactly the announced steps, and
`perftracker summarize` of it must give Python stacks down to slow_augment.
Skipped where torch has no Kineto (the C tracer is then the only one,
covered by test_collector.py and test_end_to_end.py).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import PYTHON, ROOT, binary, read_json, run_dir_of, wait_for  # noqa: E402

TRAIN = os.path.join(ROOT, "examples", "train_gloo.py")


def kineto_available():
    r = subprocess.run([PYTHON, "-c", "import torch; print(int(torch.autograd.kineto_available()))"],
                       capture_output=True, text=True, timeout=120)
    return r.returncode == 0 and r.stdout.strip().endswith("1")


class PyTracerJob(harness.Job):
    def __init__(self, tmp, mode):
        harness.Job.__init__(self, tmp, 2)
        self.stop_file = os.path.join(tmp, "stop")
        for r in range(2):
            self.spawn(r, [PYTHON, TRAIN, "--seconds", "120", "--stop-file", self.stop_file,
                           "--slow-rank", "1", "--slow-ms", "20", "--load-ms", "5",
                           "--hidden", "64"],
                       env={"PERFTRACKER_PYTHON_TRACER": mode})

    def workers(self):
        return {w["rank"]: w for w in harness.control_workers(self.control).values()}


def frames(key):
    return key.split("|")


class Base(object):
    mode = None

    @classmethod
    def setUpClass(cls):
        binary()
        if not kineto_available():
            raise unittest.SkipTest("torch at %s has no Kineto" % PYTHON)
        cls.tmp = tempfile.mkdtemp(prefix="pt_pytr_")
        cls.job = PyTracerJob(cls.tmp, cls.mode)
        try:
            def ready():
                for p in cls.job.procs:
                    if p.poll() is not None:
                        raise AssertionError("worker exited early:\n" + cls.job.log_text())
                ws = cls.job.workers()
                return len(ws) == 2 and all(w["hb"].get("step", 0) >= 3 for w in ws.values())
            wait_for(ready, 120, "2 workers at step 3", 0.2)
            cls.res = subprocess.run(
                [binary(), "--trigger-on", "--auto-analyze", "--control-dir", cls.job.control,
                 "--output-dir", cls.job.output, "--wait", "2", "--steps", "3",
                 "--save-raw-trace", "all"], capture_output=True, text=True, timeout=180)
            cls.trig = read_json(os.path.join(cls.job.control, "trigger.json"))
            cls.ws = cls.job.workers()
        finally:
            open(cls.job.stop_file, "w").close()
            codes = []
            for p in cls.job.procs:
                try:
                    codes.append(p.wait(timeout=60))
                except subprocess.TimeoutExpired:
                    p.kill()
                    codes.append(p.wait())
            cls.log = cls.job.log_text()
            cls.codes = codes
            cls.job.kill_all()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        if self.res.returncode != 0:
            self.fail("trigger failed (%d):\n%s\n%s" % (self.res.returncode, self.res.stderr,
                                                        self.log))

    def raw(self, r):
        run = run_dir_of(self.res)
        wid = "node0_%d_%d" % (r, self.ws[r]["pid"])
        path = os.path.join(run, "raw_trace", wid + ".json")
        with open(path) as f:
            return path, json.load(f)

    def test_training_unharmed(self):
        self.assertEqual(self.codes, [0, 0], self.log)

    def test_raw_trace(self):
        first, n = self.trig["start_step"], self.trig["steps"]
        for r in range(2):
            path, d = self.raw(r)
            pid = self.ws[r]["pid"]
            self.assertIsInstance(d, dict)
            self.assertIn("baseTimeNanoseconds", d)
            self.assertEqual(d["distributedInfo"]["backend"], "gloo")
            self.assertEqual(d["distributedInfo"]["rank"], r)
            self.assertEqual(d["distributedInfo"]["world_size"], 2)
            ev = d["traceEvents"]
            steps = [e for e in ev if e.get("name", "").startswith("ProfilerStep#")]
            self.assertEqual(sorted(int(e["name"].split("#")[1]) for e in steps),
                             list(range(first, first + n)))
            # The steps run on one thread of this process: the training one.
            self.assertEqual(set((e["pid"], e["tid"]) for e in steps), {(pid, steps[0]["tid"])})
            tid = steps[0]["tid"]
            py = [e for e in ev if e.get("cat") == "python_function"]
            self.assertTrue(py)
            on_main = [e for e in py if (e["pid"], e["tid"]) == (pid, tid)]
            if self.mode == "c":
                # Only ours (no "Python id"), all on the training thread.
                self.assertEqual(len(on_main), len(py))
                self.assertFalse([e for e in py if "Python id" in e.get("args", {})])
            else:
                self.assertTrue(all("Python id" in e.get("args", {}) for e in py))
            # The script's main() encloses every profiled step.  (Kineto
            # names a frame active at its start by its current line, ours by
            # its first line.)
            mains = [e for e in on_main if re.search(r"train_gloo\.py\(\d+\): main$", e["name"])]
            self.assertEqual(len(mains), 1, [e["name"] for e in on_main][:20])
            m = mains[0]
            if self.mode == "c":
                self.assertTrue(m["name"].endswith("train_gloo.py(%d): main" % main_line()))
            for s in steps:
                self.assertLessEqual(m["ts"], s["ts"])
                self.assertGreaterEqual(m["ts"] + m["dur"], s["ts"] + s["dur"])
            # The planted function on rank 1 only, once per profiled step
            # (the last step's runs before the window ends).
            slow = [e for e in on_main if e["name"].endswith(": slow_augment")]
            self.assertEqual(len(slow), n if r == 1 else 0)
            for e in slow:
                self.assertTrue(m["ts"] <= e["ts"] and e["ts"] + e["dur"] <= m["ts"] + m["dur"])

    def test_summarize_has_python_stacks(self):
        for r in range(2):
            path, _ = self.raw(r)
            out = subprocess.run([binary(), "summarize", path, "-o", "-"], capture_output=True,
                                 text=True, timeout=120)
            self.assertEqual(out.returncode, 0, out.stderr)
            s = json.loads(out.stdout)
            keys = [p["key"] for p in s["patterns"]
                    if p["class"] == "python" and p["kind"] == "python"]
            self.assertTrue(keys)
            # Stacks start at the script: <module>, then main.
            mk = [k for k in keys if len(frames(k)) >= 2 and
                  frames(k)[0].endswith("train_gloo.py: <module>") and
                  frames(k)[1].endswith("train_gloo.py: main")]
            self.assertTrue(mk, keys[:5])
            # slow_augment (and what it calls) on rank 1 only, under main.
            slow = [k for k in keys if any(f.endswith("train_gloo.py: slow_augment")
                                           for f in frames(k))]
            self.assertEqual(bool(slow), r == 1, keys)
            for k in slow:
                self.assertTrue(frames(k)[1].endswith("train_gloo.py: main"), k)
                self.assertTrue(frames(k)[2].endswith("train_gloo.py: slow_augment"), k)


def main_line():
    with open(TRAIN) as f:
        for i, line in enumerate(f, 1):
            if line.startswith("def main("):
                return i
    raise AssertionError("no main() in " + TRAIN)


class Setting(unittest.TestCase):
    """PERFTRACKER_PYTHON_TRACER's values (no job)."""

    def test_values(self):
        code = ("import sys; sys.path.insert(0, %r)\n"
                "from perftracker import _window as w\n"
                "print(w.configure('auto'), w.configure(' C '), w.configure('kineto'),"
                " w.configure(None), w.AUTO_MODE)\n"
                "try:\n    w.configure('yes')\nexcept ValueError:\n    print('refused')\n"
                % os.path.join(ROOT, "python"))
        r = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split(), ["kineto", "c", "kineto", "kineto", "kineto", "refused"])


class KinetoMode(Base, unittest.TestCase):
    mode = "kineto"


class CMode(Base, unittest.TestCase):
    mode = "c"


if __name__ == "__main__":
    unittest.main()
