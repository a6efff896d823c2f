"""The report checker (tests/tools/check_report.py) that tests/run runs on
every report.json the suites write: it passes a report whose numbers agree
(the real DLRM set's, as perftracker writes it) and fails on each planted
contradiction of issue 31 ("Numbers that agree"), said in its message."""
import copy
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tools"))
sys.path.insert(0, os.path.dirname(__file__))
import check_report  # noqa: E402
from harness import ROOT, binary  # noqa: E402

CHECKER = os.path.join(ROOT, "tests", "tools", "check_report.py")

# A straggler finding whose numbers agree: the what-if saves 8.1% of the
# step, the time lost is 8.1%, moderate (the real DLRM rank 7's, shortened).
GOOD = {
    "rank": 1, "category": "Lockstep", "workers": ["w7.json"], "function": "f",
    "metric": "others_waited_ms", "value": 5.08, "others": 0.0, "impact (ms)": 1.310625,
    "explanation": "rank 7 (w7.json) is the worker the others waited for. If it arrived like "
                   "the median worker, a step would take 14.82 ms instead of 16.13 ms "
                   "(-1.31 ms, -8.1%).",
    "confidence": {"level": "moderate", "time lost (share of window)": 0.08127403,
                   "apart (x)": None, "other workers flagged": 0, "calls": "unknown",
                   "evidence": "loses 8.1% of its time; the others waited 5.08 ms each for it"},
    "what if": {"step (ms)": 14.815375, "instead of (ms)": 16.126},
}


def report(*findings):
    return {"findings": list(findings)}


def planted(**change):
    """GOOD with members replaced: a dotted key reaches into an object."""
    f = copy.deepcopy(GOOD)
    for k, v in change.items():
        o = f
        parts = k.split(".")
        for p in parts[:-1]:
            o = o[p]
        o[parts[-1]] = v
    return f


class CheckReport(unittest.TestCase):
    def problems(self, f):
        return check_report.check_report(report(f))

    def assertFlags(self, f, words):
        p = self.problems(f)
        self.assertTrue(any(words in x for x in p), "%r not in %r" % (words, p))

    def test_agreeing_finding_passes(self):
        self.assertEqual(self.problems(GOOD), [])

    def test_x_instead_of_x_under_strong(self):
        f = planted(**{"explanation": "a step would take 16.13 ms instead of 16.13 ms "
                                      "(-0.00 ms, -0.0%).",
                       "what if": {"step (ms)": 16.126, "instead of (ms)": 16.126},
                       "confidence.level": "strong",
                       "confidence.time lost (share of window)": 0.355,
                       "confidence.evidence": "loses 35.5% of its time"})
        self.assertFlags(f, "says '16.13 ms instead of 16.13 ms' under a strong level")
        self.assertFlags(f, "a what-if that saves nothing shown")
        self.assertFlags(f, "two answers to what it costs: the what-if saves 0.0%, the time "
                            "lost is 35.5%")

    def test_x_instead_of_x_weak_is_said_as_it_is(self):
        f = planted(**{"explanation": "a step would take no less (16.13 ms).",
                       "what if": {"step (ms)": 16.126, "instead of (ms)": 16.126},
                       "confidence.level": "weak",
                       "confidence.time lost (share of window)": 0.0,
                       "confidence.evidence": "loses 0.0% of its time"})
        self.assertEqual(self.problems(f), [])

    def test_level_against_its_what_if(self):
        # the real DLRM straggler before: strong, 40.6% lost, the what-if 8.1%
        f = planted(**{"confidence.level": "strong",
                       "confidence.time lost (share of window)": 0.406,
                       "confidence.evidence": "loses 40.6% of its time"})
        self.assertFlags(f, "two answers to what it costs: the what-if saves 8.1%, the time "
                            "lost is 40.6%")
        self.assertFlags(f, "the sentence's what-if says -8.1%")

    def test_share_above_100(self):
        f = planted(**{"explanation": "worker w spends 4214.6% of its time in f",
                       "confidence.evidence": "loses 8.1% of its time"})
        self.assertFlags(f, "a share above 100%: '4214.6% of its time'")
        f = planted(**{"confidence.time lost (share of window)": 42.146})
        self.assertFlags(f, "outside [0, 1]")

    def test_strong_with_little_lost(self):
        f = copy.deepcopy(GOOD)
        del f["what if"]
        f["confidence"].update({"level": "strong", "time lost (share of window)": 0.005,
                                "evidence": "loses 0.5% of its time"})
        self.assertFlags(f, "strong with 0.5% of the time lost")

    def test_evidence_loses_against_lost(self):
        f = planted(**{"confidence.evidence": "loses 12.0% of its time"})
        self.assertFlags(f, "the evidence says 'loses 12.0%', the time lost is 8.13%")

    def test_what_if_within_noise_not_weak(self):
        f = planted(**{"confidence.noise (ms per step)": 2.0,
                       "confidence.noise": "the job's step-to-step spread"})
        self.assertFlags(f, "within the noise")

    def test_what_if_longer_than_now(self):
        f = planted(**{"what if": {"step (ms)": 17.0, "instead of (ms)": 16.126}})
        self.assertFlags(f, "longer than the step it replaces")

    def test_what_if_of_a_gain_undoes_it(self):
        # compare's "got faster" (the demo's gloo allreduce, a -> c): undoing
        # the gain makes the step longer, by the share its time lost states
        f = planted(**{"cause": "got faster", "what if": {"step (ms)": 60.69275,
                                                          "instead of (ms)": 40.3275},
                       "confidence.time lost (share of window)": 20.36525 / 40.3275,
                       "confidence.evidence": "its time on the critical path changed",
                       "explanation": "a step would take 60.7 ms instead of 40.3 ms"})
        self.assertEqual(self.problems(f), [])
        f = planted(**{"cause": "got faster", "what if": {"step (ms)": 14.0,
                                                          "instead of (ms)": 16.126}})
        self.assertFlags(f, "shorter than the step it replaces")

    def test_none_above_beside_a_step_above(self):
        f = planted(**{"explanation": "the 6 steps take 115.0-166.0 ms; none is above the "
                                      "slow-step threshold of 171.4 ms. Step 1014 takes 172.0 "
                                      "ms; none is above the slow-step threshold of 171.4 ms "
                                      "while step 1011 takes 180.5 ms"})
        self.assertFlags(f, "'none is above the threshold of 171.4 ms' beside 'takes 180.5 ms'")

    def test_negative_cost(self):
        f = planted(**{"explanation": "spends 2% of its time in f (about -0.52 ms per step)"})
        self.assertFlags(f, "a negative cost")
        f = planted(**{"impact (ms)": -1.0})
        self.assertFlags(f, "a negative impact (ms)")

    def test_nan_and_inf(self):
        f = planted(**{"explanation": "takes nan ms per execution, other workers inf ms"})
        self.assertFlags(f, "'nan' in the text")
        self.assertFlags(f, "'inf' in the text")
        f = planted(**{"value": float("inf")})
        self.assertFlags(f, "not finite at /value")

    def test_compare_findings_checked_too(self):
        rep = {"findings": [], "Compare": {"findings": [
            planted(**{"explanation": "grew 240.0% of its time"})]}}
        self.assertTrue(any("share above 100%" in p for p in check_report.check_report(rep)))

    def test_tap_lines_and_exit_status(self):
        with tempfile.TemporaryDirectory() as d:
            for name, f in (("a", GOOD), ("b", planted(**{"impact (ms)": -1.0}))):
                os.makedirs(os.path.join(d, name, "PerfDisplay"))
                with open(os.path.join(d, name, "PerfDisplay", "report.json"), "w") as fh:
                    json.dump(report(f), fh)
            p = subprocess.run([sys.executable, CHECKER, "--tap", d], capture_output=True,
                               text=True)
        lines = p.stdout.splitlines()
        self.assertEqual(p.returncode, 1)
        self.assertEqual([x.split(" - ")[0] for x in lines if not x.startswith("#")],
                         ["ok 1", "not ok 2"])
        self.assertIn("# finding 1: a negative impact (ms): -1.0", lines)

    def test_real_dlrm_report_agrees(self):
        with tempfile.TemporaryDirectory() as d:
            subprocess.run([binary(), "analyze", os.path.join(ROOT, "tests", "data", "dlrm"),
                            "-o", d, "-q"], check=True)
            with open(os.path.join(d, "PerfDisplay", "report.json")) as fh:
                rep = json.load(fh)
        self.assertEqual(check_report.check_report(rep), [])
        # and the straggler's level says what its what-if says: 8.1%
        f = rep["findings"][0]
        self.assertEqual(f["cause"], "straggler")
        self.assertEqual(round(f["confidence"]["time lost (share of window)"], 4), 0.0813)
        self.assertEqual(f["confidence"]["level"], "moderate")


if __name__ == "__main__":
    unittest.main()
