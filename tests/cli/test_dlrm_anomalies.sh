#!/bin/bash
# End-to-end check of the differential diagnosis: plant one known anomaly per
# rank in copies of the 8 DLRM traces (tests/tools/plant_anomalies.py) and
# check that `perftracker analyze` names each planted worker in the right
# section and finding, and flags no untouched rank (0, 2, 4, 7) anywhere.
#   rank 1: compute kernels x1.5          -> GPU Compute
#   rank 3: extra Memcpy DtoD (5% step)   -> GPU memory operations
#   rank 5: cudaLaunchKernel x4           -> CUDA Runtime
#   rank 6: one cpu_op stalls 5 ms        -> Python functions
. "$(dirname "$0")/lib.sh"

DLRM=$PT_DATA/dlrm
PL=$TMP/planted
check "plant anomalies" "$PYTHON" "$PT_ROOT/tests/tools/plant_anomalies.py" "$DLRM" "$PL"
[ -f "$PL/planted.info" ] || { echo "FATAL: planting failed"; exit 1; }
check "analyze the planted traces" "$PT_BIN" analyze "$PL" -o "$TMP/out" -q
R=$TMP/out/PerfDisplay/report.json
[ -f "$R" ] || { echo "FATAL: no report"; exit 1; }

# w RANK: the worker id of a rank (the trace's file name).
w() { "$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["files"][sys.argv[2]])' "$PL/planted.info" "$1"; }
W1=$(w 1); W3=$(w 3); W5=$(w 5); W6=$(w 6)
STALL_OP=$("$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["rank6_stall_op"])' "$PL/planted.info")

# q EXPR: a Python expression over r (the report), W (rank -> worker id) and
# F (findings); fails when false.
q() {
	"$PYTHON" -c 'import json, sys
r = json.load(open(sys.argv[1])); info = json.load(open(sys.argv[2]))
W = {int(k): v for k, v in info["files"].items()}; F = r["findings"]; STALL = info["rank6_stall_op"]
ok = eval(sys.argv[3])
if not ok:
    print("false:", sys.argv[3]); print(json.dumps(F, indent=1)[:3000]); sys.exit(1)' "$R" "$PL/planted.info" "$1"
}

check "8 workers analysed" q 'len(r["workers"]) == 8 and all("error" not in x for x in r["workers"].values())'

# rank 1: slower GPU
check "rank 1 in workers with potential GPU issues" q 'r["GPU Compute"]["workers with potential GPU issues"] == [W[1]]'
check "rank 1 detailed report: kernels 50% slower" q 'all(v["slower by"] != "n/a" and float(v["slower by"].rstrip("%")) > 20 for v in r["GPU Compute"]["detailed report"][W[1]].values())'
check "rank 1 in a GPU Compute finding" q 'any(f["category"] == "GPU Compute" and f["workers"] == [W[1]] and f["metric"] == "median cost per execution (ms)" for f in F)'

# rank 3: extra device-to-device copies
check "rank 3 abnormal for Memcpy DtoD" q 'list(r["GPU memory operations"]["Memcpy DtoD (Device -> Device)"]["abnormal_workers"]) == [W[3]]'
check "rank 3 DtoD ratio about 5%" q '0.04 < r["GPU memory operations"]["Memcpy DtoD (Device -> Device)"]["abnormal_workers"][W[3]] < 0.06'
check "rank 3 in a memory finding" q 'any(f["category"] == "GPU memory operations" and f["workers"] == [W[3]] and f["function"].startswith("Memcpy DtoD") and "device-to-device" in f["explanation"] for f in F)'

# rank 5: slower kernel launches
check "rank 5 abnormal for cudaLaunchKernel" q 'list(r["CUDA Runtime"]["cudaLaunchKernel"]["abnormal_workers"]) == [W[5]]'
# one finding per cause: the launches make rank 5 the worker the others
# wait for, and the CUDA Runtime finding of them is that finding's evidence
check "rank 5's launches: one finding, the CUDA Runtime one its evidence" q '[f["category"] for f in F if f["workers"] == [W[5]]] == ["Lockstep"] and any(e["category"] == "CUDA Runtime" and e["function"] == "cudaLaunchKernel" and e["kind"] == "same cause" for f in F if f["workers"] == [W[5]] for e in f["evidence"])'

# rank 6: CPU-side stall in one op
check "rank 6 in a Python finding naming the stalled op" q 'any(f["category"] == "Python functions" and f["workers"] == [W[6]] and f["function"].split("|")[-1] == STALL for f in F)'
check "rank 6 stall costs about 5 ms" q 'any(f["workers"] == [W[6]] and 4.5 < f["impact (ms)"] <= 5.01 for f in F if f["category"] == "Python functions")'
check "rank 6 stack listed in Python functions" q 'any(k.split("|")[-1] == STALL and W[6] in v for k, v in r["Python functions"].items())'

# Every finding is about a planted rank, one per rank, largest impact first;
# besides them, "Lockstep" findings (tests/cli/test_lockstep.sh): rank 7 is
# the worker the others wait for, as in the unplanted set, and rank 5, whose
# slowed launches make it arrive late, may be one too (rank 6's stall is not
# propagated to its peers here, so the first collective's ends disagree and
# it is left out).
check "one finding per planted rank, and rank 7's lockstep one" q 'sorted(f["workers"][0] for f in F) == sorted([W[1], W[3], W[5], W[6], W[7]]) and [W[7]] in [f["workers"] for f in F if f["category"] == "Lockstep"] and all(f["workers"][0] in (W[5], W[7]) for f in F if f["category"] == "Lockstep")'
check "findings ranked by impact" q '[f["impact (ms)"] for f in F] == sorted((f["impact (ms)"] for f in F), reverse=True) and [f["rank"] for f in F] == list(range(1, len(F) + 1))'
check "findings: every field present" q 'all(list(f)[:10] == ["rank", "category", "workers", "function", "metric", "value", "others", "impact (ms)", "explanation", "confidence"] and [k for k in list(f)[10:] if k not in ("evidence", "steps", "what if")] == ["view", "labels", "cause", "metrics"] and f["labels"] == ["rank %d" % [k for k in W if W[k] == f["workers"][0]][0]] and f["metrics"][0] == {"name": f["metric"], "value": f["value"], "unit": f["metrics"][0]["unit"]} for f in F)'

# No untouched rank anywhere.
check "no untouched rank flagged anywhere" q 'not any(W[k] in json.dumps({s: r[s] for s in ("GPU Compute", "GPU memory operations", "CUDA Runtime")}) for k in (0, 2, 4, 7)) and not any(W[k] in json.dumps([g[n]["abnormal_workers"] for g in r["Communication"].values() for n in g]) for k in (0, 2, 4, 7)) and not any(W[k] in f["workers"] for f in F for k in (0, 2, 4)) and not any(W[7] in f["workers"] for f in F if f["category"] != "Lockstep")'
check "no communication false alarm" q 'all(not k["abnormal_workers"] for g in r["Communication"].values() for k in g.values())'

# The text report tells the same story.
"$PT_BIN" analyze "$PL" -o "$TMP/out2" >"$TMP/text" 2>/dev/null
check "text report: five numbered findings, one per planted rank and rank 7's" bash -c "[ \$(grep -c '^  [1-5]\. rank [136] \(spends\|runs\)' '$TMP/text') -eq 3 ] && grep -q '^  [1-5]\. rank 5 is the worker the others waited for' '$TMP/text' && grep -q '^  [1-5]\. rank 7 is the worker the others waited for' '$TMP/text' && ! grep -q '^  6\. ' '$TMP/text'"
check "text report: stall sentence names rank 6 and the op" grep -q "^  [1-4]\. rank 6 spends .* in $STALL_OP" "$TMP/text"
check "text report: per step, not per window" bash -c "grep -q 'ms per step' '$TMP/text' && ! grep -q 'per window' '$TMP/text'"
check "text report: findings before the sections, on one screen" bash -c "[ \$(sed -n '1,/^GPU Compute\$/p' '$TMP/text' | wc -l) -le 40 ] && sed -n '1,/^GPU Compute\$/p' '$TMP/text' | grep -q '^  4\. '"
