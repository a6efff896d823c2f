"""The path our users take, on the torch they run (PyTorch 2 with Kineto, the
repository's .venv): a 4-rank gloo job whose rank 2 runs a function every
rank runs (load_batch) twice as long, triggered three times back to back
while it trains.  Each time: every worker profiles exactly the announced
steps and none is lost; rank 2 and load_batch come first; the raw traces
are Kineto's, with python_function events, torch's distributedInfo and our
"perftracker" member (torch's version, the Flight Recorder's collectives
with process group and sequence number); the collectives are matched by
sequence number and the report names the torch version.
"""
import glob
import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import PYTHON, ROOT, binary, read_json, run_dir_of, wait_for  # noqa: E402

TRAIN = os.path.join(ROOT, "examples", "train_gloo.py")
N = 4
TRIGGERS = 3


def torch_version():
    import subprocess
    r = subprocess.run([PYTHON, "-c", "import torch; print(torch.__version__, "
                        "torch.autograd.kineto_available())"],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        return None, False
    v, k = r.stdout.split()
    return v, k == "True"


class Job(harness.Job):
    def __init__(self, tmp):
        harness.Job.__init__(self, tmp, N)
        self.stop_file = os.path.join(tmp, "stop")
        for r in range(N):
            self.spawn(r, [PYTHON, TRAIN, "--seconds", "300", "--stop-file", self.stop_file,
                           "--slow-rank", "-1", "--slow-load-rank", "2",
                           "--slow-load-factor", "2", "--load-ms", "15", "--hidden", "64"])

    def trigger(self):
        import subprocess
        cmd = [binary(), "--trigger-on", "--auto-analyze", "--control-dir", self.control,
               "--output-dir", self.output, "--wait", "2", "--steps", "3",
               "--save-raw-trace", "all"]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


class Torch2(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.version, kineto = torch_version()
        if cls.version is None:
            raise unittest.SkipTest("%s cannot import torch (make venv)" % PYTHON)
        if not cls.version.startswith("2.") or not kineto:
            raise unittest.SkipTest("torch %s without Kineto: this test is for torch 2 "
                                    "(make venv)" % cls.version)
        cls.tmp = tempfile.mkdtemp(prefix="pt_torch2_")
        cls.job = Job(cls.tmp)
        cls.runs = []
        try:
            wait_for(lambda: len(harness.control_workers(cls.job.control)) == N and all(
                w["hb"].get("step", 0) >= 5
                for w in harness.control_workers(cls.job.control).values()), 120,
                "4 workers at step 5", 0.2)
            for _ in range(TRIGGERS):
                res = cls.job.trigger()
                cls.runs.append((res, run_dir_of(res) if res.returncode == 0 else None))
        except Exception:
            cls.job.kill_all()
            raise

    @classmethod
    def tearDownClass(cls):
        if os.environ.get("PT_KEEP"):
            print("kept", cls.tmp)
        open(cls.job.stop_file, "w").close()
        for p in cls.job.procs:
            try:
                p.wait(timeout=60)
            except Exception:
                p.kill()
        cls.job.kill_all()
        if not os.environ.get("PT_KEEP"):
            shutil.rmtree(cls.tmp, ignore_errors=True)

    def each_run(self):
        for i, (res, d) in enumerate(self.runs):
            self.assertEqual(res.returncode, 0, "trigger %d:\n%s\n%s" % (
                i, res.stderr[-3000:], self.job.log_text()))
            rep = read_json(os.path.join(d, "PerfDisplay", "report.json"))
            self.assertIsNotNone(rep)
            yield i, res, d, rep

    def test_1_every_worker_on_the_announced_steps(self):
        for i, res, d, rep in self.each_run():
            trig = rep["trigger"]
            want = list(range(trig["start step"], trig["start step"] + trig["steps"]))
            self.assertEqual(trig["steps"], 3)
            self.assertEqual(sorted(w["rank"] for w in rep["workers"].values()), [0, 1, 2, 3])
            for wid, w in rep["workers"].items():
                self.assertNotIn("error", w, (i, wid))
                self.assertEqual(w["steps"], want, (i, wid))
            self.assertNotIn("lost", res.stderr.lower(), res.stderr)

    def test_2_rank_2_and_the_function_first(self):
        for i, res, d, rep in self.each_run():
            f = rep["findings"][0]
            ranks = [rep["workers"][w]["rank"] for w in f["workers"]]
            self.assertEqual(ranks, [2], (i, f["explanation"]))
            self.assertIn("load_batch", f["function"], (i, f["explanation"]))
            strong = [g for g in rep["findings"]
                      if g["confidence"]["level"] in ("strong", "moderate")]
            for g in strong:
                self.assertEqual([rep["workers"][w]["rank"] for w in g["workers"]], [2],
                                 (i, g["explanation"], g["confidence"]))

    def test_3_raw_traces_are_kinetos_with_python_events(self):
        for i, res, d, rep in self.each_run():
            trig = rep["trigger"]
            raws = sorted(glob.glob(os.path.join(d, "raw_trace", "*_*_*.json")))
            self.assertEqual(len(raws), N, raws)
            for p in raws:
                with open(p) as fh:
                    t = json.load(fh)
                dist = t["distributedInfo"]
                self.assertEqual((dist["backend"], dist["world_size"]), ("gloo", N))
                me = t["perftracker"]
                self.assertEqual(me["rank"], dist["rank"])
                self.assertEqual(me["torch"], self.version)
                self.assertEqual(me["python_tracer"], "kineto")
                self.assertEqual(me["start_step"], trig["start step"])
                cats = {e.get("cat") for e in t["traceEvents"]}
                self.assertIn("python_function", cats)
                steps = sorted(int(e["name"].split("#")[1]) for e in t["traceEvents"]
                               if e.get("name", "").startswith("ProfilerStep#")
                               and e.get("ph") == "X")
                self.assertEqual(steps, list(range(trig["start step"],
                                                   trig["start step"] + trig["steps"])))
                # The Flight Recorder's collectives of the window: one process
                # group, consecutive sequence numbers, the same on every rank.
                seqs = [c["seq"] for c in me["collectives"]]
                self.assertTrue(seqs and seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs)
                self.assertEqual({c["pg"] for c in me["collectives"]}, {"0"})
                self.assertEqual(me["collectives_source"], "flight recorder")

    def test_4_collectives_matched_by_sequence_number(self):
        for i, res, d, rep in self.each_run():
            ls = rep["Lockstep"]
            self.assertEqual(ls["workers matched"], N)
            self.assertEqual(ls.get("matched by"), "process group and sequence number",
                             (i, {k: v for k, v in ls.items() if k != "workers"}))
            self.assertEqual([s["rank"] for s in ls["stragglers"]], [2], (i, ls["stragglers"]))

    def test_5_report_names_the_torch_version(self):
        for i, res, d, rep in self.each_run():
            for wid, w in rep["workers"].items():
                self.assertEqual(w.get("torch"), self.version, (i, wid))
            self.assertIn("torch " + self.version.split("+")[0], res.stdout, res.stdout[:600])


if __name__ == "__main__":
    unittest.main()
