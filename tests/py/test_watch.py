"""The always-on watch end to end (issue 32, docs/watch.md): a real 4-rank
gloo job (examples/train_gloo.py, DDP, CPU) runs balanced, then rank 2
slows by about 1.5x in one Python function (slow_augment, --slow-after).
The collectors read torch's Flight Recorder, the node agent scores the
ranks and serves /metrics; with PERFTRACKER_AUTO_PROFILE=1 the persistent
straggler starts the profile by itself, and its report's first finding
names rank 2 and slow_augment and cites the watch; a Prometheus server
(Debian's package) scraping the agent answers topk(1,
perftracker_straggler_score) with rank 2.  Nothing is timed: the
time from the slowdown to the score is printed as a measurement.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import read_json, wait_for  # noqa: E402
import test_end_to_end as e2e  # noqa: E402

METRIC_RE = re.compile(r'^(perftracker_[a-z_]+)\{([^}]*)\} (\S+)$')
LABEL_RE = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
MEASURED = []


def scrape(port):
    """{(family, rank): value} from the agent's /metrics, None while it
    does not answer."""
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5) as r:
            text = r.read().decode()
    except OSError:
        return None
    out = {}
    for line in text.splitlines():
        m = METRIC_RE.match(line)
        if not m:
            continue
        labels = dict(LABEL_RE.findall(m.group(2)))
        if "rank" in labels:
            out[(m.group(1), int(labels["rank"]))] = float(m.group(3))
    return out


def family(metrics, name):
    return {r: v for (f, r), v in metrics.items() if f == name}


def start_prometheus(tmp, port):
    """Debian's Prometheus scraping the agent at port every second (keeping
    our job label), or None without the package."""
    exe = shutil.which("prometheus")
    if not exe:
        return None, None
    pport = harness.free_port()
    cfg = os.path.join(tmp, "prom.yml")
    with open(cfg, "w") as f:
        f.write("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: perftracker\n"
                "    honor_labels: true\n    static_configs:\n"
                "      - targets: ['127.0.0.1:%d']\n" % port)
    log = open(os.path.join(tmp, "prom.log"), "w")
    p = subprocess.Popen([exe, "--config.file=" + cfg, "--storage.tsdb.path=" +
                          os.path.join(tmp, "tsdb"), "--web.listen-address=127.0.0.1:%d" % pport],
                         stdout=log, stderr=subprocess.STDOUT)
    return p, pport


def prometheus_top(pport):
    """The rank label of topk(1, perftracker_straggler_score), "" when none."""
    q = "http://127.0.0.1:%d/api/v1/query?query=topk(1,perftracker_straggler_score)" % pport
    try:
        with urllib.request.urlopen(q, timeout=5) as r:
            res = json.load(r)["data"]["result"]
    except (OSError, ValueError, KeyError):
        return ""
    return res[0]["metric"].get("rank", "") if res else ""


class BalancedThenSlow(unittest.TestCase):
    def test_watch_names_the_straggler_and_profiles_it(self):
        tmp = tempfile.mkdtemp(prefix="pt_watch_")
        out = os.path.join(tmp, "auto-out")
        port = harness.free_port()
        slow_after = 30.0
        env = {"PERFTRACKER_AUTO_PROFILE": "1", "PERFTRACKER_AUTO_OUTPUT_DIR": out,
               "PERFTRACKER_METRICS_PORT": str(port)}
        # The balanced steps take about 25-30 ms here (10 ms of loading, a
        # small MLP, an all-reduce); 15 ms more in slow_augment is ~1.5x.
        t0 = time.time()
        job = e2e.Job(tmp, extra=["--slow-after", str(slow_after), "--slow-ms", "15"],
                      env=env, seconds=240)
        prom, pport = start_prometheus(tmp, port)
        try:
            job.wait_running()
            # Balanced: no rank flagged, no profile started.
            seen = 0
            while time.time() < t0 + slow_after - 2:
                m = scrape(port)
                if m:
                    seen += 1
                    flagged = family(m, "perftracker_straggler")
                    self.assertFalse(any(flagged.values()), m)
                self.assertFalse(os.path.isdir(out) and os.listdir(out), os.listdir(out)
                                 if os.path.isdir(out) else "")
                time.sleep(1)
            self.assertGreater(seen, 0, "no /metrics answer while balanced\n" + job.log_text())

            def straggler():
                m = scrape(port) or {}
                s = family(m, "perftracker_straggler_score")
                if len(s) == 4 and s[2] >= 0.5 and s[2] == max(s.values()):
                    return s
                return None
            scores = wait_for(straggler, 120, "rank 2's straggler score\n" + job.log_text(), 0.5)
            MEASURED.append("score %s %.1f s after the slowdown began" %
                            (scores, time.time() - (t0 + slow_after)))
            if prom is None:
                MEASURED.append("no prometheus binary: its query not checked")
            else:
                # A Prometheus server scraping the agent names the same rank.
                wait_for(lambda: prometheus_top(pport) == "2", 60,
                         "Prometheus's topk(1, perftracker_straggler_score) = rank 2", 0.5)

            def report():
                r = glob.glob(os.path.join(out, "*", "PerfDisplay", "report.json"))
                return r and read_json(r[0])
            rep = wait_for(report, 180, "the automatic report\n" + job.log_text(), 0.5)
            ids = {r: "node0_%d_%d.json" % (r, w["pid"]) for r, w in job.workers().items()}
            reason = rep["trigger"]["reason"]
            self.assertTrue(reason.startswith("auto-profile: the always-on watch names rank 2 "),
                            reason)
            first = rep["findings"][0]
            self.assertEqual(first["workers"][0], ids[2], first)
            self.assertIn("slow_augment", first.get("function", ""), first)
            kinds = [e.get("kind") for e in first.get("evidence", [])]
            self.assertIn("the always-on watch", kinds, first)
            MEASURED.append("reason: " + reason)
        finally:
            if prom is not None:
                prom.kill()
                prom.wait()
            job.finish()
            job.kill_all()
            shutil.rmtree(tmp, ignore_errors=True)


class WatchFiles(unittest.TestCase):
    """What the collector's watch thread writes (docs/watch.md "The watch
    file"), read while a real 2-rank job trains."""

    def run_job(self, env, extra=()):
        tmp = tempfile.mkdtemp(prefix="pt_watchf_")
        nd = os.path.join(tmp, "node")
        os.makedirs(nd)
        e = {"PERFTRACKER_AUTO_AGENT": "0", "PERFTRACKER_NODE_DIR": nd,
             "PERFTRACKER_WATCH_MS": "200"}
        e.update(env)
        job = e2e.Job(tmp, n=2, extra=["--slow-rank", "-1"] + list(extra), env=e, seconds=120)
        self.addCleanup(shutil.rmtree, tmp, True)
        self.addCleanup(job.kill_all)
        return job, nd

    def lines(self, nd, rank, want_steps):
        """rank's watch lines once it has want_steps step lines."""
        def ready():
            f = glob.glob(os.path.join(nd, "*", "*", "watch", "node0_%d_*.jsonl" % rank))
            if not f:
                return None
            with open(f[0]) as fh:
                ls = [json.loads(x) for x in fh.read().splitlines()[:-1]]
            return ls if sum("s" in x for x in ls) >= want_steps else None
        return wait_for(ready, 120, "%d watch steps of rank %d" % (want_steps, rank), 0.3)

    def test_steps_and_collectives_match_across_ranks(self):
        job, nd = self.run_job({})
        a, b = self.lines(nd, 0, 40), self.lines(nd, 1, 40)
        self.assertEqual(a[0]["format"], "perftracker-watch")
        self.assertEqual((a[0]["rank"], a[0]["world"], b[0]["rank"]), (0, 2, 1))
        self.assertIn({"fr": "on", "why": ""}, a)
        steps = [x for x in a if "s" in x]
        nums = [x["s"] for x in steps]
        self.assertEqual(nums, list(range(nums[0], nums[0] + len(nums))))
        for x in steps:
            self.assertLessEqual(x["t0"], x["t1"])
        # Once the process group is there, every step has its DDP
        # all-reduce and the stop flag's, numbered on in the default group,
        # the same numbers for the same step on both ranks (DDP's broadcasts of its
        # rebuilt buckets aside, in its second iteration).
        with_c = [x for x in steps if x.get("c")]
        self.assertGreater(len(with_c), 20)
        seqs = [c[1] for x in with_c for c in x["c"]]
        self.assertEqual(seqs, list(range(seqs[0], seqs[0] + len(seqs))))
        names = [c[2] for x in with_c[2:] for c in x["c"]]
        self.assertEqual(set(names), {"gloo:all_reduce"}, names)
        for x in with_c:
            for c in x["c"]:
                self.assertEqual((c[0], c[4], c[5]), ("0", -1, -1))
                self.assertTrue(x["t0"] <= c[3] < x["t1"], (x, c))
        bs = {x["s"]: [c[1] for c in x["c"]] for x in b if x.get("c")}
        common = [x for x in with_c if x["s"] in bs]
        self.assertGreater(len(common), 10)
        for x in common:
            self.assertEqual([c[1] for c in x["c"]], bs[x["s"]], x["s"])

    def test_flight_recorder_off_or_absent(self):
        job, nd = self.run_job({"PERFTRACKER_FLIGHT_RECORDER": "0"})
        a = self.lines(nd, 0, 10)
        self.assertIn({"fr": "off", "why": "PERFTRACKER_FLIGHT_RECORDER=0: step times only"}, a)
        self.assertFalse(any("c" in x for x in a))
        job.kill_all()
        job, nd = self.run_job({}, ["--no-ddp"])
        a = self.lines(nd, 0, 10)
        self.assertIn({"fr": "none", "why": "no process group yet (init_process_group not "
                                            "called): step times only"}, a)
        self.assertFalse(any("c" in x for x in a))

    def test_watch_off_writes_nothing(self):
        job, nd = self.run_job({"PERFTRACKER_WATCH": "0"})
        job.wait_running(min_step=30)
        self.assertEqual(glob.glob(os.path.join(nd, "*", "*", "watch", "*.jsonl")), [])


def tearDownModule():
    for m in MEASURED:
        sys.stderr.write("measured: %s\n" % m)


if __name__ == "__main__":
    unittest.main()
