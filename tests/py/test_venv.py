"""The collector installed the way torch users install things: a virtual
environment made with `python3 -m venv --system-site-packages` (so it sees
the system torch), `pip install ./python` with no package index (offline),
then a 2-worker training job run by that environment's python, with no
PYTHONPATH and no PERFTRACKER_BIN: the workers find the installed package
and the installed `perftracker` command (the node agent), and the trigger
from the environment's bin/ finds both workers and reports them.  Also
`pip install .` at the repository root, `with PerfTracker() as t:`, info()
and the version shared with the CLI.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import SYSTEM_PYTHON, ROOT, read_json, run_dir_of, wait_for  # noqa: E402

TRAIN = os.path.join(ROOT, "examples", "train_gloo.py")


def make_venv(path):
    subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--system-site-packages", path], check=True,
                   capture_output=True, timeout=120)
    return os.path.join(path, "bin", "python")


class Venv(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.access(os.path.join(ROOT, "build", "perftracker"), os.X_OK):
            raise unittest.SkipTest("build/perftracker not built (run make)")
        cls.tmp = tempfile.mkdtemp(prefix="pt_venv_")
        cls.venv = os.path.join(cls.tmp, "venv")
        cls.py = make_venv(cls.venv)
        # The one documented command (README), offline.
        cls.pip = subprocess.run([cls.py, "-m", "pip", "install", "--no-index", "--no-cache-dir",
                                  os.path.join(ROOT, "python")],
                                 capture_output=True, text=True, timeout=300, cwd=cls.tmp)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def env(self, **kw):
        e = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PERFTRACKER_BIN")}
        e.update(kw)
        return e

    def test_1_pip_install_offline(self):
        self.assertEqual(self.pip.returncode, 0, self.pip.stdout + self.pip.stderr)
        self.assertTrue(os.access(os.path.join(self.venv, "bin", "perftracker"), os.X_OK))
        self.assertTrue(os.access(os.path.join(self.venv, "bin", "c4d_perftracker"), os.X_OK))

    def test_2_imports_from_the_venv_with_the_cli_version(self):
        code = ("import perftracker, perftracker._collector, torch, json, sys\n"
                "from c4d_perftracker_collector.PerfTracker import PerfTracker\n"
                "print(json.dumps([perftracker.__file__, perftracker._collector.__file__,"
                " perftracker.__version__, torch.__version__]))")
        r = subprocess.run([self.py, "-c", code], capture_output=True, text=True, timeout=60,
                           cwd=self.tmp, env=self.env())
        self.assertEqual(r.returncode, 0, r.stderr)
        f, ext, ver, tv = json.loads(r.stdout)
        site = os.path.join(self.venv, "lib")
        self.assertTrue(f.startswith(site) and ext.startswith(site), (f, ext))
        cli = subprocess.run([os.path.join(self.venv, "bin", "perftracker"), "--version"],
                             capture_output=True, text=True)
        self.assertEqual(cli.stdout.strip(), "perftracker " + ver)
        self.assertTrue(tv.split(".")[:2] >= ["1", "13"], tv)

    def test_3_with_statement_and_info(self):
        ctl = os.path.join(self.tmp, "ctl3")
        code = ("from perftracker import PerfTracker\n"
                "with PerfTracker(control_dir=%r) as t:\n"
                "    t.step(); t.step()\n"
                "    i = t.info()\n"
                "print(i['step'], i['next_action'], i['state'])\n" % ctl)
        r = subprocess.run([self.py, "-c", code], capture_output=True, text=True, timeout=60,
                           cwd=self.tmp, env=self.env(PERFTRACKER_AUTO_AGENT="0"))
        self.assertEqual(r.returncode, 0, r.stderr)
        step, nxt, _state = r.stdout.split()
        self.assertEqual((step, nxt), ("2", "None"))
        self.assertNotIn("9223372036854775807", r.stdout + r.stderr)

    def test_4_trigger_finds_the_venv_workers(self):
        job = harness.Job(os.path.join(self.tmp, "job"), 2)
        os.makedirs(job.tmp)
        stop = os.path.join(job.tmp, "stop")
        for r in range(2):
            job.spawn(r, [self.py, TRAIN, "--seconds", "120", "--stop-file", stop, "--hidden", "32"],
                      env={"PYTHONPATH": "", "PERFTRACKER_BIN": ""})
        try:
            def ready():
                for p in job.procs:
                    if p.poll() is not None:
                        raise AssertionError("worker exited early:\n" + job.log_text())
                ws = harness.control_workers(job.control)
                return len(ws) == 2 and all(w["hb"].get("step", 0) >= 3 for w in ws.values())
            wait_for(ready, 120, "2 venv workers at step 3", 0.2)
            pt = os.path.join(self.venv, "bin", "perftracker")
            st = subprocess.run([pt, "status", "--control-dir", job.control, "--json"],
                                capture_output=True, text=True, timeout=30)
            self.assertEqual(st.returncode, 0, st.stderr)
            res = subprocess.run([pt, "--trigger-on", "--auto-analyze", "--control-dir", job.control,
                                  "--output-dir", job.output, "--wait", "2", "--steps", "2"],
                                 capture_output=True, text=True, timeout=180)
            self.assertEqual(res.returncode, 0, res.stdout + res.stderr + job.log_text())
            rep = read_json(os.path.join(run_dir_of(res), "PerfDisplay", "report.json"))
            self.assertEqual(sorted(w["rank"] for w in rep["workers"].values()), [0, 1])
            self.assertFalse(any(w.get("error") for w in rep["workers"].values()), rep["workers"])
            self.assertIn("PerfTracker report: 2 workers", res.stdout)
            # the agent that summarised them is the venv's perftracker
            agents = os.path.join(job.control, "agents")
            logs = "".join(harness.read_text(os.path.join(agents, n)) for n in os.listdir(agents))
            self.assertNotIn("not found", logs)
        finally:
            open(stop, "w").close()
            for p in job.procs:
                try:
                    p.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    pass
            job.kill_all()

    def test_5_pip_install_of_the_repository_root(self):
        venv = os.path.join(self.tmp, "venv2")
        py = make_venv(venv)
        r = subprocess.run([py, "-m", "pip", "install", "--no-index", "--no-cache-dir", ROOT],
                           capture_output=True, text=True, timeout=300, cwd=self.tmp)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        r = subprocess.run([py, "-c", "import perftracker._collector, perftracker; "
                            "print(perftracker.PerfTracker.__name__)"],
                           capture_output=True, text=True, cwd=self.tmp, env=self.env())
        self.assertEqual((r.returncode, r.stdout.strip()), (0, "PerfTracker"), r.stderr)


if __name__ == "__main__":
    unittest.main()
