#!/bin/bash
# Communication-bound workers (docs/diagnose.md "Communication-bound"): real
# traces with exposed communication planted by tests/tools/plant_exposed_comm.py
# (each chosen collective kernel made longer, the time it gains inserted into
# the whole trace, so that the step waits for it): TorchRec's rank 3 of 8
# (trace_diff/control, all-reduce +36 ms a call), the same with an RCCL
# kernel name, rank 0 of 16 (negative_queue_length, its all-to-all SendRecv
# +12 ms a call) and all 8 DLRM ranks (all-reduce +10 ms a call).  Each gets
# the communication-bound finding first, with the exposed ms per step the
# plant fixes, the collective that holds it, advice for its kind, and
# never the compute advice; the unplanted traces get none, --comm-bound
# moves the threshold, and on DLRM the finding is no symptom of a straggler.
. "$(dirname "$0")/lib.sh"

H=$PT_DATA/HolisticTraceAnalysis/tests/data
PLANT="$PYTHON $PT_ROOT/tests/tools/plant_exposed_comm.py"

# q REPORT EXPR: a Python expression over r (report.json), F (its findings),
# C (the communication-bound ones) and m(f, name) (a metric's value)
q() {
	"$PYTHON" -c 'import json, sys
r = json.load(open(sys.argv[1])); F = r["findings"]
C = [f for f in F if f.get("cause") == "communication bound"]
def m(f, name):
    return [x["value"] for x in f["metrics"] if x["name"] == name][0]
ok = eval("(" + sys.argv[2] + "\n)")
if not ok:
    print("false:", sys.argv[2]); print(json.dumps(C, indent=1)[:3000]); sys.exit(1)' "$@"
}

mkdir -p "$TMP/ctl" "$TMP/rccl" "$TMP/nql" "$TMP/dlrm"
$PLANT "$H/trace_diff/control/control.json.gz" "$TMP/ctl/control.json.gz" \
	--name ncclKernel_AllReduce --add-ms 36 >/dev/null
$PLANT "$H/trace_diff/control/control.json.gz" "$TMP/rccl/control.json.gz" \
	--name ncclKernel_AllReduce --add-ms 36 \
	--rename 'ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)' >/dev/null
$PLANT "$H/negative_queue_length_values_check/rank0.json.gz" "$TMP/nql/rank0.json.gz" \
	--name ncclKernel_SendRecv --add-ms 12 >/dev/null
for f in "$PT_DATA"/dlrm/*.json; do
	$PLANT "$f" "$TMP/dlrm/${f##*/}" --name ncclKernel_AllReduce --add-ms 10 >/dev/null
done

"$PT_BIN" analyze "$TMP/ctl" -o "$TMP/ctl.out" >"$TMP/ctl.txt" 2>&1
J=$TMP/ctl.out/PerfDisplay/report.json
check "TorchRec all-reduce exposed: the first finding is communication-bound, on rank 3" q "$J" \
	'F[0]["cause"] == "communication bound" and F[0]["labels"] == ["rank 3"] and len(C) == 1'
check "TorchRec: 119.85 of 185.53 ms per step exposed (64.6%), 70.5% of GPU busy time" q "$J" \
	'round(m(C[0], "exposed communication (ms per step)"), 2) == 119.85 and
	round(m(C[0], "step (ms)"), 2) == 185.53 and round(C[0]["value"], 3) == 0.646 and
	round(m(C[0], "share of GPU busy time"), 3) == 0.705'
check "TorchRec: overlapping it saves at most 50.27 ms per step (the communication still runs), the level says the same" q "$J" \
	'round(m(C[0], "at most won by overlapping it (ms per step)"), 2) == 50.27 and
	abs(C[0]["confidence"]["time lost (share of window)"] - 50.27 / 185.53) < 1e-3'
check "TorchRec: names the all-reduce first, 3 calls per step of 37.8 ms, with DDP's bucket advice" q "$J" \
	'"mostly in `ncclKernel_AllReduce_RING_LL_Sum_float` (ring allreduce, 3 calls per step of 37.8 ms each" in C[0]["explanation"]
	and "bucket_cap_mb" in C[0]["explanation"]'
check "TorchRec: one rank's trace, so it asks for all ranks" grep -q "profile all ranks" "$TMP/ctl.txt"
check "TorchRec: never the compute advice" sh -c '! grep -q "heaviest kernels" "$1" "$2"' - "$TMP/ctl.txt" "$J"

"$PT_BIN" analyze "$TMP/rccl" -o "$TMP/rccl.out" >/dev/null 2>&1
check "RCCL kernel name: the same finding, naming ncclDevKernel_Generic_4" q \
	"$TMP/rccl.out/PerfDisplay/report.json" \
	'F[0]["cause"] == "communication bound" and "`ncclDevKernel_Generic_4`" in F[0]["explanation"]
	and round(m(F[0], "exposed communication (ms per step)"), 2) == 119.85'

"$PT_BIN" analyze "$TMP/nql" -o "$TMP/nql.out" >/dev/null 2>&1
check "rank 0 of 16, all-to-all exposed: first, 190.8 ms per step, the exchange's advice" q \
	"$TMP/nql.out/PerfDisplay/report.json" \
	'F[0]["cause"] == "communication bound" and
	round(m(F[0], "exposed communication (ms per step)"), 1) == 190.8 and
	"`ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t` (sendrecv" in F[0]["explanation"] and
	"pipelining the exchange" in F[0]["explanation"] and "bucket_cap_mb" not in F[0]["explanation"]'

"$PT_BIN" analyze "$TMP/dlrm" -o "$TMP/dlrm.out" >/dev/null 2>&1
J=$TMP/dlrm.out/PerfDisplay/report.json
check "DLRM, all 8 ranks exposed: one communication-bound finding listing all 8, first" q "$J" \
	'F[0]["cause"] == "communication bound" and len(C) == 1 and
	sorted(C[0]["workers"]) == sorted(r["workers"]) and len(r["workers"]) == 8'
check "DLRM: its what-if is the worst rank's 11.55 ms per step, and the level's time lost agrees" q "$J" \
	'round(m(C[0], "at most won by overlapping it (ms per step)"), 2) == 11.55 and
	"a step of the worst one would take 36.25 ms instead of 47.80 ms" in C[0]["explanation"]
	and abs(C[0]["confidence"]["time lost (share of window)"] - 11.55 / 47.80) < 1e-3'
check "DLRM: the finding is no symptom of the straggler, nor its evidence" q "$J" \
	'all(not f.get("caused by") for f in C) and not any(e.get("function") == "" and
	e.get("category") == "Communication" for f in F if f not in C for e in f.get("evidence", []))'
check "DLRM: no rank is told to profile all ranks" q "$J" \
	'all("profile all ranks" not in f["explanation"] for f in C)'

for d in "$H/trace_diff/control" "$H/negative_queue_length_values_check" "$PT_DATA/dlrm"; do
	"$PT_BIN" analyze "$d" -o "$TMP/real" >/dev/null 2>&1
	check "unplanted ${d##*/}: not communication-bound" q "$TMP/real/PerfDisplay/report.json" 'C == []'
	rm -rf "$TMP/real"
done

"$PT_BIN" analyze --comm-bound 0.8 "$TMP/ctl" -o "$TMP/ctl80" >/dev/null 2>&1
check "--comm-bound 0.8: 70.5% of busy time is not enough" q "$TMP/ctl80/PerfDisplay/report.json" 'C == []'
