"""End-to-end tests of online collection with real torch and real processes:
4 workers (examples/train_gloo.py, DDP on gloo, CPU), the collector in each,
the node agent(s) started by local rank 0, and `perftracker --trigger-on
--auto-analyze` on the "master".

Covered: the report names the slow rank and its slow Python function, all 4
workers are present, the raw-trace policies (none / master / all), a second
trigger while one runs is refused, a worker killed during the window is
listed as missing while the other 3 are reported, and two nodes simulated on
one machine (two agents, PERFTRACKER_HOST) share one control directory.
"""
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import PYTHON, ROOT, binary, read_json, run_dir_of, wait_for  # noqa: E402

TRAIN = os.path.join(ROOT, "examples", "train_gloo.py")


def raw_listing(d):
    """(raw traces, hardware sample files) in a raw_trace folder, sorted."""
    names = sorted(os.listdir(d))
    hw = [n for n in names if n.startswith("hw_") and n.endswith(".json")]
    return [n for n in names if n not in hw], hw


class Job(harness.Job):
    """n ranks of examples/train_gloo.py (rank 2 slow), the agents started
    by the collector on each host; hosts[r] is rank r's PERFTRACKER_HOST."""

    def __init__(self, tmp, n=4, ddp=True, hosts=None, extra=(), env=None, seconds=120):
        harness.Job.__init__(self, tmp, n)
        self.stop_file = os.path.join(tmp, "stop")
        self.hosts = hosts or ["node0"] * n
        local = {}
        for r in range(n):
            host = self.hosts[r]
            lr = local.get(host, 0)
            local[host] = lr + 1
            argv = [PYTHON, TRAIN, "--seconds", str(seconds), "--stop-file", self.stop_file,
                    "--slow-rank", "2", "--slow-ms", "30", "--load-ms", "10", "--hidden", "64"]
            if not ddp:
                argv.append("--no-ddp")
            argv += list(extra)
            self.spawn(r, argv, host=host, local_rank=lr, spool="spool-" + host, env=env)

    def workers(self):
        """{rank: heartbeat record} of the registered workers."""
        return {w["rank"]: w for w in harness.control_workers(self.control).values()}

    def wait_running(self, min_step=3, timeout=90):
        def ready():
            for p in self.procs:
                if p.poll() is not None:
                    raise AssertionError("worker exited early:\n" + self.log_text())
            ws = self.workers()
            return len(ws) == self.n and all(w["hb"].get("step", 0) >= min_step
                                             for w in ws.values())
        wait_for(ready, timeout, "%d workers at step %d" % (self.n, min_step), 0.2)

    def trigger(self, *args, timeout=120):
        cmd = [binary(), "--trigger-on", "--auto-analyze", "--control-dir", self.control,
               "--output-dir", self.output, "--wait", "2", "--steps", "2"] + list(args)
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)

    def finish(self, timeout=60):
        """Stop the training (all ranks at one step) and return the exit codes."""
        open(self.stop_file, "w").close()
        codes = []
        for p in self.procs:
            try:
                codes.append(p.wait(timeout=timeout))
            except subprocess.TimeoutExpired:
                p.kill()
                codes.append(p.wait())
        return codes


def report_of(run_dir):
    rep = read_json(os.path.join(run_dir, "PerfDisplay", "report.json"))
    assert rep is not None, "no report.json in %s" % run_dir
    return rep


def worker_ids(rep):
    return sorted(rep["workers"].keys())


class OneNode(unittest.TestCase):
    """One job of 4 DDP workers; several triggers against it."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="pt_e2e_")
        cls.job = Job(cls.tmp)
        try:
            cls.job.wait_running()
        except Exception:
            cls.job.kill_all()
            raise

    @classmethod
    def tearDownClass(cls):
        codes = cls.job.finish()
        log = cls.job.log_text()
        cls.job.kill_all()
        shutil.rmtree(cls.tmp, ignore_errors=True)
        # The collector never hurt the training: every rank ended normally.
        if codes != [0] * 4:
            raise AssertionError("training exit codes %s\n%s" % (codes, log))

    def expect_ok(self, res):
        if res.returncode != 0:
            self.fail("trigger failed (%d):\n%s\n%s\n%s" % (res.returncode, res.stdout,
                                                          res.stderr, self.job.log_text()))

    def ids(self):
        ws = self.job.workers()
        return {r: "node0_%d_%d" % (r, ws[r]["pid"]) for r in ws}

    def test_1_report_names_slow_rank_and_function(self):
        res = self.job.trigger()
        self.expect_ok(res)
        run = run_dir_of(res)
        rep = report_of(run)
        ids = self.ids()
        # All four workers, each with its rank, none failed.
        self.assertEqual(worker_ids(rep), sorted(i + ".json" for i in ids.values()))
        for r, wid in ids.items():
            w = rep["workers"][wid + ".json"]
            self.assertEqual(w.get("rank"), r)
            self.assertFalse(w.get("error"), w)
        # The slow rank and its slow Python function are named.
        slow = ids[2] + ".json"
        text = json.dumps(rep["findings"])
        self.assertIn(slow, text)
        self.assertIn("slow_augment", text)
        first = [f for f in rep["findings"] if "slow_augment" in json.dumps(f)][0]
        self.assertEqual(first["workers"], [slow])
        for other in (ids[0], ids[1], ids[3]):
            self.assertNotIn(other + ".json", first["explanation"])
            # other workers appear only as the waiting it caused on them
            for e in first.get("evidence", []):
                if e["worker"] == other + ".json":
                    self.assertEqual(e["kind"], "symptom on a worker that waited for it")
        # ... and no finding names them: they only waited
        for f in rep["findings"]:
            if f.get("confidence", {}).get("level") != "weak":
                self.assertEqual(f["workers"], [slow], f["explanation"])
        pyf = rep["Python functions"]
        keys = [k for k in pyf if "train_gloo.py: slow_augment" in k]
        self.assertTrue(keys, list(pyf)[:5])
        for k in keys:
            self.assertEqual(list(pyf[k].keys()), [slow])
            # Stacks start at the script's module frame: the C tracer names
            # the file by its path, Kineto (with_stack) by its name.
            self.assertTrue(any(k.startswith(f + ": <module>|" + f + ": main|")
                                for f in (TRAIN, os.path.basename(TRAIN))), k)
        # The text report on stdout, the page next to report.json.
        self.assertIn("Python functions (", res.stdout)
        self.assertIn("slow_augment", res.stdout)
        self.assertTrue(os.path.exists(os.path.join(run, "PerfDisplay", "index.html")))
        # Policy none: no raw trace anywhere, spool and control dir clean.
        self.assertFalse(os.path.exists(os.path.join(run, "raw_trace")))
        self.assertEqual(glob.glob(os.path.join(self.tmp, "spool-*", "*", "*.json")), [])
        self.assertEqual(os.listdir(os.path.join(self.job.control, "summaries")), [])
        # each summary with its digest (docs/summary.md "Digests")
        self.assertEqual(sorted(os.listdir(os.path.join(run, "summaries"))),
                         sorted(i + e for i in ids.values() for e in (".json", ".digest")))
        # Progress was shown and the trigger is marked done.
        self.assertIn("summarized 4", res.stderr)
        trig = read_json(os.path.join(self.job.control, "trigger.json"))
        self.assertEqual(trig["state"], "done")
        self.assertFalse(os.path.exists(os.path.join(self.job.control, "trigger.lock")))

    def test_2_master_keeps_rank0_only(self):
        # read in two phases, as from 1,000 workers (docs/diagnose.md "Two phases")
        res = self.job.trigger("--save-raw-trace", "master", "--digests", "always", "--time")
        self.expect_ok(res)
        run = run_dir_of(res)
        ids = self.ids()
        self.assertIn("(4 summaries, 4 of them digests)", res.stderr)
        rep = report_of(run)
        slow = ids[2] + ".json"
        first = [f for f in rep["findings"] if "slow_augment" in json.dumps(f)][0]
        self.assertEqual(first["workers"], [slow])
        self.assertNotIn('"~', json.dumps(rep["findings"]))
        traces, hw = raw_listing(os.path.join(run, "raw_trace"))
        self.assertEqual(traces, [ids[0] + ".json"])
        # The node's hardware samples are kept beside the traces it keeps.
        self.assertEqual(hw, ["hw_%s.json" % ids[0].rsplit("_", 2)[0]])
        self.assertEqual(len(report_of(run)["workers"]), 4)
        self.assertEqual(glob.glob(os.path.join(self.tmp, "spool-*", "*", "*.json")), [])

    def test_3_all_keeps_all(self):
        res = self.job.trigger("--save-raw-trace", "all", "--steps", "3")
        self.expect_ok(res)
        run = run_dir_of(res)
        ids = self.ids()
        raw = os.path.join(run, "raw_trace")
        self.assertEqual(raw_listing(raw)[0], sorted(i + ".json" for i in ids.values()))
        # Every worker profiled the same global steps, named by the trigger.
        steps = set()
        for r, wid in ids.items():
            t = read_json(os.path.join(raw, wid + ".json"))
            self.assertIsNotNone(t, wid)
            self.assertEqual(t["distributedInfo"]["rank"], r)
            self.assertEqual(t["distributedInfo"]["backend"], "gloo")
            steps.add(tuple(sorted(e["name"] for e in t["traceEvents"]
                                   if e["name"].startswith("ProfilerStep#"))))
        self.assertEqual(len(steps), 1, steps)
        self.assertEqual(len(steps.pop()), 3)
        # The Python tracer's events share the profiler's clock: on the slow
        # rank the one aten::mul of each slow_augment call lies inside its
        # frame (torch writes whole µs: 1 µs of slack).
        t = read_json(os.path.join(raw, ids[2] + ".json"))
        ev = t["traceEvents"]
        frames = [e for e in ev if e.get("cat") == "python_function" and
                  e["name"].endswith(": slow_augment")]
        self.assertEqual(len(frames), 3)
        win = [e for e in ev if e["name"].startswith("ProfilerStep#")]
        lo = min(e["ts"] for e in win)
        hi = max(e["ts"] + e["dur"] for e in win)
        for f in frames:
            self.assertTrue(lo <= f["ts"] and f["ts"] + f["dur"] <= hi, (f, lo, hi))
        for f in frames:
            inside = [e for e in ev if e["name"] == "aten::mul" and
                      f["ts"] - 1 <= e["ts"] and e["ts"] + e["dur"] <= f["ts"] + f["dur"] + 1]
            self.assertEqual(len(inside), 1, f)

    def test_4_second_trigger_refused(self):
        first = subprocess.Popen(
            [binary(), "--trigger-on", "--auto-analyze", "--control-dir", self.job.control,
             "--output-dir", self.job.output, "--wait", "100000"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_for(lambda: os.path.exists(os.path.join(self.job.control, "trigger.lock")), 30,
                     "the first trigger's lock")
            res = self.job.trigger()
            self.assertEqual(res.returncode, 1, res.stderr)
            self.assertIn("a trigger is already running", res.stderr)
            self.assertIn("trigger.lock", res.stderr)
            # Workers armed for the first trigger.
            wait_for(lambda: all(w["hb"].get("state") == "armed"
                                 for w in self.job.workers().values()), 30, "armed workers")
        finally:
            first.send_signal(signal.SIGINT)
            out, err = first.communicate(timeout=60)
        self.assertEqual(first.returncode, 1, err)
        self.assertIn("interrupted", err)
        self.assertFalse(os.path.exists(os.path.join(self.job.control, "trigger.lock")))
        # The cancelled trigger disarmed the workers: the next one works.
        wait_for(lambda: all(w["hb"].get("state") == "idle"
                             for w in self.job.workers().values()), 30, "disarmed workers")
        res = self.job.trigger()
        self.expect_ok(res)
        self.assertEqual(len(report_of(run_dir_of(res))["workers"]), 4)


class KilledWorker(unittest.TestCase):
    def test_killed_during_window(self):
        tmp = tempfile.mkdtemp(prefix="pt_e2e_kill_")
        job = Job(tmp, ddp=False)
        try:
            job.wait_running()
            pids = {r: w["pid"] for r, w in job.workers().items()}
            victim = "node0_3_%d" % pids[3]
            trig = subprocess.Popen(
                [binary(), "--trigger-on", "--auto-analyze", "--control-dir", job.control,
                 "--output-dir", job.output, "--wait", "2", "--steps", "300"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

            def profiling():
                t = read_json(os.path.join(job.control, "trigger.json"))
                if not t or t.get("state") != "active":
                    return False
                s = harness.worker_status(job.control, t["id"], victim)
                return s and s["state"] == "profiling"
            # The agent publishes a node's statuses at most once a second, so
            # the window must last seconds to be seen (40 steps of ~12 ms did
            # not, on a loaded CI machine): 300 steps.
            wait_for(profiling, 60, "rank 3 profiling", 0.01)
            job.procs[3].kill()
            out, err = trig.communicate(timeout=120)
            self.assertEqual(trig.returncode, 0, err + job.log_text())
            run = run_dir_of(subprocess.CompletedProcess([], 0, out, err))
            rep = report_of(run)
            self.assertEqual(len(rep["workers"]), 4)
            for r in range(3):
                w = rep["workers"]["node0_%d_%d.json" % (r, pids[r])]
                self.assertFalse(w.get("error"), w)
            dead = rep["workers"][victim + ".json"]
            self.assertIn("gone", json.dumps(dead))
            self.assertIn("1 of 4 workers never delivered", err)
            self.assertIn(victim, err)
            codes = job.finish()
            self.assertEqual(codes[:3], [0, 0, 0], job.log_text())
            self.assertEqual(codes[3], -signal.SIGKILL)
        finally:
            job.kill_all()
            shutil.rmtree(tmp, ignore_errors=True)


class TwoNodes(unittest.TestCase):
    def test_two_agents_one_report(self):
        tmp = tempfile.mkdtemp(prefix="pt_e2e_2n_")
        job = Job(tmp, hosts=["nodeA", "nodeA", "nodeB", "nodeB"])
        try:
            job.wait_running()
            # Local rank 0 of each "node" started that node's agent.
            wait_for(lambda: all(os.path.exists(os.path.join(job.control, "agents", h + ".lock"))
                                 for h in ("nodeA", "nodeB")), 30, "two agents")
            res = job.trigger("--save-raw-trace", "all")
            self.assertEqual(res.returncode, 0, res.stderr + job.log_text())
            run = run_dir_of(res)
            rep = report_of(run)
            ws = job.workers()
            want = sorted("%s_%d_%d.json" % (job.hosts[r], r, ws[r]["pid"]) for r in range(4))
            self.assertEqual(worker_ids(rep), want)
            self.assertEqual({rep["workers"][w]["host"] for w in want}, {"nodeA", "nodeB"})
            traces, hw = raw_listing(os.path.join(run, "raw_trace"))
            self.assertEqual(traces, want)
            self.assertEqual(hw, ["hw_nodeA.json", "hw_nodeB.json"])
            # Each agent summarised its own node's traces only.
            for h in ("nodeA", "nodeB"):
                with open(os.path.join(job.control, "agents", h + ".log")) as f:
                    log = f.read()
                mine = [w for w in want if w.startswith(h + "_")]
                other = [w for w in want if not w.startswith(h + "_")]
                for w in mine:
                    self.assertIn(w[:-5], log)
                for w in other:
                    self.assertNotIn(w[:-5], log)
                self.assertEqual(glob.glob(os.path.join(tmp, "spool-" + h, "*", "*.json")), [])
            self.assertIn("slow_augment", res.stdout)
            self.assertEqual(job.finish(), [0, 0, 0, 0], job.log_text())
        finally:
            job.kill_all()
            shutil.rmtree(tmp, ignore_errors=True)


class AgentKilled(unittest.TestCase):
    """The node agent dies while the job is idle (docs/collector.md, "Node
    channel"): a trigger still completes."""

    def node_file(self, job, host="node0"):
        return read_json(os.path.join(job.control, "agents", host + ".json")) or {}

    def direct_records(self, job):
        return sorted(os.path.basename(p)
                      for p in glob.glob(os.path.join(job.control, "workers", "*.json")))

    def test_collector_restarts_the_killed_agent(self):
        tmp = tempfile.mkdtemp(prefix="pt_e2e_ak_")
        job = Job(tmp, n=2, ddp=False)
        try:
            job.wait_running()
            # Idle: the workers are in their node file, not in workers/.
            wait_for(lambda: len(self.node_file(job).get("workers", [])) == 2 and
                     not self.direct_records(job), 30, "both workers published by the agent")
            lock = os.path.join(job.control, "agents", "node0.lock")
            old = read_json(lock)["pid"]
            os.kill(old, signal.SIGKILL)
            res = job.trigger("--save-raw-trace", "all", "--timeout", "90")
            self.assertEqual(res.returncode, 0, res.stderr + job.log_text())
            rep = report_of(run_dir_of(res))
            ws = job.workers()
            self.assertEqual(worker_ids(rep),
                             sorted("node0_%d_%d.json" % (r, ws[r]["pid"]) for r in range(2)))
            # Local rank 0 started a new agent, which summarised the traces.
            new = read_json(lock)["pid"]
            self.assertNotEqual(new, old)
            with open(os.path.join(job.control, "agents", "node0.log")) as f:
                log = f.read()
            for r in range(2):
                self.assertIn("node0_%d_%d in " % (r, ws[r]["pid"]), log)
            self.assertEqual(job.finish(), [0, 0], job.log_text())
        finally:
            job.kill_all()
            shutil.rmtree(tmp, ignore_errors=True)

    def test_workers_fall_back_while_no_agent_runs(self):
        # No local rank 0: nobody restarts the agent, so the workers reach
        # the trigger through the shared directory themselves (fallback),
        # and the traces wait for an agent started by hand.
        tmp = tempfile.mkdtemp(prefix="pt_e2e_fb_")
        job = harness.Job(tmp, 2)
        stop = os.path.join(tmp, "stop")
        spool = os.path.join(tmp, "spool-node0")

        def agent():
            return subprocess.Popen([binary(), "agent", "--control-dir", job.control,
                                     "--spool-dir", spool, "--host", "node0", "--no-hw"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        first = agent()
        second = None
        try:
            for r in range(2):
                job.spawn(r, [PYTHON, TRAIN, "--seconds", "120", "--stop-file", stop, "--no-ddp",
                              "--hidden", "64", "--load-ms", "10", "--slow-rank", "-1"],
                          host="node0", local_rank=r + 1, spool="spool-node0")
            wait_for(lambda: len(self.node_file(job).get("workers", [])) == 2 and
                     all(w["hb"].get("step", 0) >= 3 for w in self.node_file(job)["workers"]),
                     90, "both workers published by the agent")
            self.assertEqual(self.direct_records(job), [])
            first.kill()
            first.wait()
            # Fallback: the workers register in the shared directory again.
            wait_for(lambda: len(self.direct_records(job)) == 2, 30, "direct registrations")
            trig = subprocess.Popen(
                [binary(), "--trigger-on", "--auto-analyze", "--control-dir", job.control,
                 "--output-dir", job.output, "--wait", "2", "--steps", "2", "--timeout", "120"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            ids = sorted(w["id"] for w in harness.control_workers(job.control).values())

            def armed():
                t = read_json(os.path.join(job.control, "trigger.json"))
                return t and t.get("state") == "active" and all(
                    (harness.worker_status(job.control, t["id"], i) or {}).get("state")
                    in ("armed", "profiling", "traced") for i in ids)
            # Each worker polls trigger.json every 5 s without its agent.
            wait_for(armed, 60, "both workers armed without an agent", 0.1)
            second = agent()
            out, err = trig.communicate(timeout=180)
            self.assertEqual(trig.returncode, 0, err + job.log_text())
            rep = report_of(run_dir_of(subprocess.CompletedProcess([], 0, out, err)))
            self.assertEqual(worker_ids(rep), [i + ".json" for i in ids])
        finally:
            for p in (first, second):
                if p is not None and p.poll() is None:
                    p.kill()
                    p.wait()
            open(stop, "w").close()
            job.kill_all()
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
