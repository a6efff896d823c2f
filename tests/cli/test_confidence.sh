#!/bin/bash
# How strong each finding is ("confidence", src/diagnose/confidence.c), on
# real data: the 4-worker CPU demo (a planted sleep on rank 2 among CPU
# contention noise, tests/data/demo_cpu4) and the DLRM set with planted
# anomalies.  The planted faults must not read weak, the contention must.
. "$(dirname "$0")/lib.sh"

OUT=$TMP/demo
"$PT_BIN" diagnose "$PT_DATA/demo_cpu4" -o "$OUT" >"$TMP/text" 2>"$TMP/err"
check "diagnose the demo summaries" test -f "$OUT/PerfDisplay/report.json"
R=$OUT/PerfDisplay/report.json
# q EXPR: a Python expression over r (the report $R); fails when false.
q() {
	"$PYTHON" -c 'import json, sys
r = json.load(open(sys.argv[1]))
if not eval(sys.argv[2]):
    print("false:", sys.argv[2]); print(json.dumps([f.get("confidence") for f in r["findings"]], indent=1)[:2000]); sys.exit(1)' "$R" "$1"
}
check "every worker finding has a level" q 'all(f["confidence"]["level"] in ("strong", "moderate", "weak") for f in r["findings"] if f["category"] != "summary")'
check "a fact about the traces is not graded" q 'all("confidence" not in f for f in r["findings"] if f["category"] == "summary")'
check "confidence members" q 'all(list(f["confidence"]) == ["level", "time lost (share of window)", "apart (x)", "other workers flagged", "calls", "noise (ms per step)", "noise", "evidence"] for f in r["findings"] if f["category"] != "summary")'
check "planted sleep on rank 2: strong" q '[f["confidence"]["level"] for f in r["findings"] if f["function"].endswith("<built-in function sleep>")] == ["strong"] and [f["workers"] for f in r["findings"] if f["function"].endswith("sleep>")] == [["vm_2_30071.json"]]'
check "aten::mm 12.5% vs 6.9% (CPU contention): weak" q '[f["confidence"]["level"] for f in r["findings"] if f["function"].endswith("|aten::mm")] == ["weak"]'
check "aten::mm: only some calls slower" q '[f["confidence"]["calls"] for f in r["findings"] if f["function"].endswith("|aten::mm")] == ["only some calls are slower"]'
check "aten::mm: lost share exact" q 'abs([f["confidence"]["time lost (share of window)"] for f in r["findings"] if f["function"].endswith("|aten::mm")][0] - 0.0612) < 0.0005'
check "same function on two workers: one finding, the spread said" q '[(sorted(f["workers"]), f["confidence"]["other workers flagged"], f["confidence"]["level"]) for f in r["findings"] if f["function"] == "c10d::allreduce_"] == [(["vm_0_30069.json", "vm_1_30070.json"], 0, "weak")] and [f["confidence"]["evidence"] for f in r["findings"] if f["function"] == "c10d::allreduce_"][0].startswith("loses 4.9% of its time (the worst of the 2 workers with it, more than a tenth of the job\x27s: a spread, not one outlier)")'
check "text: weak findings on one line after the causes" bash -c "grep -q '^  Possibly noise (5: weak evidence or within the job.s own noise; report.json has them): rank 0 aten::mm' '$TMP/text' && ! grep -q '^  [0-9]\. rank 0 spends 12.5% of its time in aten::mm' '$TMP/text'"
check "text: evidence line under a finding" grep -q '^     strong: loses 28.0% of its time' "$TMP/text"

# DLRM with planted anomalies: none of the four reads weak.
PL=$TMP/planted
"$PYTHON" "$PT_ROOT/tests/tools/plant_anomalies.py" "$PT_DATA/dlrm" "$PL" >/dev/null
"$PT_BIN" analyze "$PL" -o "$TMP/dl" -q
R=$TMP/dl/PerfDisplay/report.json
# (the planted rank's findings, without the Lockstep ones of test_lockstep.sh)
check "DLRM planted: stall, copies strong" q '[f["confidence"]["level"] for f in r["findings"] if f["workers"][0].startswith(("worker6", "worker3"))] == ["strong"] * 2'
# rank 5's slow launches: fixing them alone saves 0.57% of a step (rank 7
# arrives nearly as late), and the level says what the what-if says
check "DLRM planted: slow launches moderate, lost = the what-if's share" q '[(f["confidence"]["level"], round(f["confidence"]["time lost (share of window)"], 4), round(1 - f["what if"]["step (ms)"] / f["what if"]["instead of (ms)"], 4)) for f in r["findings"] if f["workers"][0].startswith("worker5")] == [("moderate", 0.0057, 0.0057)]'
check "DLRM planted: slower GPU (2.8% lost) moderate, every call slower" q '[(f["category"], f["confidence"]["level"], f["confidence"]["calls"]) for f in r["findings"] if f["workers"][0].startswith("worker1")] == [("GPU Compute", "moderate", "every call is slower")]'
