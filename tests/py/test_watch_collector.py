"""The collector's side of the always-on watch (issue 32, docs/watch.md
"The watch file", docs/collector.md "The watch"): a real 4-rank gloo DDP
job (examples/train_gloo.py, CPU) with PERFTRACKER_WATCH_MS=200.  Every
rank's file starts with its header, has one line per step in order, and
the same step carries the same default-group sequence numbers on all four
ranks; a clean exit removes the files.  test_watch.py covers the 2-rank
file, the Flight Recorder off or absent and PERFTRACKER_WATCH=0.
"""
import glob
import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import wait_for  # noqa: E402
import test_end_to_end as e2e  # noqa: E402


def watch_files(nd):
    return sorted(glob.glob(os.path.join(nd, "*", "*", "watch", "*.jsonl*")))


class FourRanks(unittest.TestCase):
    def test_four_ranks_agree_and_files_removed_at_exit(self):
        tmp = tempfile.mkdtemp(prefix="pt_watchc_")
        self.addCleanup(shutil.rmtree, tmp, True)
        nd = os.path.join(tmp, "node")
        os.makedirs(nd)
        env = {"PERFTRACKER_AUTO_AGENT": "0", "PERFTRACKER_NODE_DIR": nd,
               "PERFTRACKER_WATCH_MS": "200"}
        job = e2e.Job(tmp, n=4, extra=["--slow-rank", "-1"], env=env, seconds=120)
        self.addCleanup(job.kill_all)

        def lines(rank):
            f = glob.glob(os.path.join(nd, "*", "*", "watch", "node0_%d_*.jsonl" % rank))
            if not f:
                return None
            with open(f[0]) as fh:
                ls = [json.loads(x) for x in fh.read().splitlines()[:-1]]
            return ls if sum(bool(x.get("c")) for x in ls) >= 30 else None

        per = [wait_for(lambda r=r: lines(r), 120, "30 steps of rank %d" % r, 0.3)
               for r in range(4)]
        self.assertEqual(len(watch_files(nd)), 4)
        seqs = []
        for r, ls in enumerate(per):
            self.assertEqual((ls[0]["format"], ls[0]["version"], ls[0]["rank"],
                              ls[0]["world"], ls[0]["local_rank"]),
                             ("perftracker-watch", 1, r, 4, r))
            steps = [x["s"] for x in ls if "s" in x]
            self.assertEqual(steps, list(range(steps[0], steps[0] + len(steps))))
            seqs.append({x["s"]: [(c[0], c[1], c[2]) for c in x["c"]]
                         for x in ls if x.get("c")})
        common = set(seqs[0]).intersection(*seqs[1:])
        self.assertGreater(len(common), 10)
        for s in common:
            self.assertEqual(seqs[1][s], seqs[0][s], s)
            self.assertEqual(seqs[2][s], seqs[0][s], s)
            self.assertEqual(seqs[3][s], seqs[0][s], s)
        # DDP broadcasts (its parameters, its rebuilt buckets) only in its
        # first two steps with collectives; every later instance is an
        # all-reduce of group "0".
        early = sorted(seqs[0])[:2]
        for s, cs in seqs[0].items():
            for pg, _, name in cs:
                self.assertEqual(pg, "0")
                if name != "gloo:all_reduce":
                    self.assertIn(s, early, name)
                    self.assertEqual(name, "gloo:broadcast")
        self.assertEqual(job.finish(), [0, 0, 0, 0])
        self.assertEqual(watch_files(nd), [])


if __name__ == "__main__":
    unittest.main()
