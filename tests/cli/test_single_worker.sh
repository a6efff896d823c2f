#!/bin/bash
# CLI tests for one worker's trace on its own (issue 10): where the GPU time
# goes ("gpu_breakdown", GPU busy vs compute utilization) agrees exactly
# with an independent computation (tests/tools/breakdown_reference.py) on
# real single-rank traces from HTA, TraceLens, Kineto and the DLRM set;
# each gets a plain-sentence finding instead of "No worker differs"; the
# data loader is named on the resnet trace; the step-to-step differential
# names the slowest step of a real multi-step trace and a planted slow step
# (tests/tools/plant_slow_step.py) by number and function; user rules for
# communication kernels (--comm-kernels, PERFTRACKER_COMM_KERNELS).
. "$(dirname "$0")/lib.sh"

TOOLS=$PT_ROOT/tests/tools
NQ=$PT_DATA/HolisticTraceAnalysis/tests/data/negative_queue_length_values_check/rank0.json.gz
AMD=$PT_DATA/HolisticTraceAnalysis/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz
BERT=$PT_DATA/TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz
B200=$PT_DATA/TraceLens/tests/traces/b200/eager_trace.json.gz
RESNET=$PT_DATA/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz
DLRM1=$PT_DATA/dlrm/worker1_step_12.1694128201556.pt.trace.json

# same_as_reference TRACE: summarize's breakdown == the reference's, to 1 ns
same_as_reference() {
	"$PT_BIN" summarize "$1" -o "$TMP/s.json" || return 1
	"$PYTHON" - "$1" "$TMP/s.json" "$TOOLS" <<'EOF'
import json, sys
sys.path.insert(0, sys.argv[3])
import breakdown_reference as br
r = br.compute(br.load(sys.argv[1]))
s = json.load(open(sys.argv[2]))
b = s["gpu_breakdown"]
bad = []
for k in ("window_ms", "compute_ms", "communication_ms", "memory_ms", "idle_ms",
          "communication_total_ms"):
    if abs(b[k] - r[k]) > 1e-6:
        bad.append((k, b[k], r[k]))
for k, v in r["idle"].items():
    if abs(b["idle"][k] - v) > 1e-6:
        bad.append(("idle " + k, b["idle"][k], v))
for k in ("kernels", "short_kernels", "launches"):
    if b[k] != r[k]:
        bad.append((k, b[k], r[k]))
for k in ("gpu_util", "gpu_compute_util"):
    if abs(s[k] - r[k]) > 1e-9:
        bad.append((k, s[k], r[k]))
parts = b["compute_ms"] + b["communication_ms"] + b["memory_ms"] + b["idle_ms"]
if abs(parts - b["window_ms"]) > 1e-6 or abs(sum(b["idle"].values()) - b["idle_ms"]) > 1e-6:
    bad.append(("parts do not add up", parts, sum(b["idle"].values())))
if bad:
    print(bad)
    sys.exit(1)
EOF
}

for t in "$NQ" "$AMD" "$BERT" "$B200" "$RESNET" "$DLRM1"; do
	check "breakdown = independent computation: $(basename "$t")" same_as_reference "$t"
done

# The issue's example: DLRM rank 1 is 61.8% busy, its compute kernels 6.3%.
"$PT_BIN" summarize "$DLRM1" -o "$TMP/d1.json"
check "DLRM rank 1: GPU busy 61.8%, compute utilization 6.3%" "$PYTHON" -c '
import json, sys; s = json.load(open(sys.argv[1]))
assert round(s["gpu_util"], 3) == 0.618 and round(s["gpu_compute_util"], 3) == 0.063, (s["gpu_util"], s["gpu_compute_util"])' "$TMP/d1.json"

# Single traces get findings, not "No worker differs".  The findings are
# read in the seed text (--format json): one line each, unwrapped.
for t in "$NQ" "$BERT" "$RESNET"; do
	n=$(basename "$t")
	"$PT_BIN" analyze "$t" -o "$TMP/a_$n" --format json >"$TMP/a_$n.txt" 2>&1
	check "single trace $n: a where-the-time-goes finding" grep -q "^1\. $n: the GPU is idle [0-9.]*% of the" "$TMP/a_$n.txt"
	check "single trace $n: not 'No worker differs'" bash -c "! grep -q 'No worker differs' '$TMP/a_$n.txt'"
done
check "resnet: 77.1% of the idle time in the data loader, named" grep -q "77.1% of that idle time the CPU is in enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__" "$TMP/a_$(basename "$RESNET").txt"
check "resnet: largest cause: data loader" grep -q "Largest cause: data loader" "$TMP/a_$(basename "$RESNET").txt"
check "bert: low-occupancy heavy kernel named" grep -q '`cutlass::Kernel2` takes 2.2% of the window at 4% estimated achieved occupancy' "$TMP/a_$(basename "$BERT").txt"
# A summary written before a rule named a kernel communication: diagnose
# applies the rule again and gives no occupancy advice for it.
"$PT_BIN" summarize "$BERT" -o "$TMP/bert_s.json" >/dev/null 2>&1
printf 'cutlass::Kernel2* alltoall\n' >"$TMP/bert_rules"
"$PT_BIN" diagnose "$TMP/bert_s.json" --comm-kernels "$TMP/bert_rules" --format json >"$TMP/bert_rule.txt" 2>&1
check "bert, kernel made communication after summarize: no occupancy advice" bash -c "! grep -q 'cutlass::Kernel2\` takes' '$TMP/bert_rule.txt' && grep -q 'the GPU is idle' '$TMP/bert_rule.txt'"
R=$TMP/a_$(basename "$RESNET")/PerfDisplay/report.json
check "report: Time breakdown and Steps for the worker" "$PYTHON" -c '
import json, sys; r = json.load(open(sys.argv[1])); w = list(r["workers"])[0]
t = r["Time breakdown"][w]; s = r["Steps"][w]
assert abs(t["compute (ms)"] + t["communication not overlapped (ms)"] + t["memory (ms)"] + t["idle (ms)"] - t["window (ms)"]) < 1e-6
assert [x["number"] for x in s["steps"]] == [5, 6, 7, 8, 9, 10] and s["slow steps"] == []
assert r["workers"][w]["gpu compute utilization"] <= r["workers"][w]["gpu utilization"]' "$R"

# Step-to-step: the real multi-step trace names its slowest step and cause.
# A step under the slow-step threshold has no extra time to explain: the
# sentence states the threshold and names no function.
check "negative_queue: slowest step 551, under the stated threshold" grep -q "the 5 steps take 209.7-216.5 ms (typical 216.1 ms); none is above the slow-step threshold of 237.7 ms (the typical steps' median plus the larger of 10% and 3.5 robust deviations, at most 25%); the slowest, step 551, takes 216.5 ms\.$" "$TMP/a_$(basename "$NQ").txt"

# Planted slow steps: one function made slower in one step of a real trace.
"$PYTHON" "$TOOLS/plant_slow_step.py" "$RESNET" "$TMP/resnet_slow.json" 7 "Optimizer.step#SGD.step" 40 >/dev/null
"$PT_BIN" analyze "$TMP/resnet_slow.json" -o "$TMP/rs" --format json >"$TMP/rs.txt" 2>&1
check "planted (resnet): step 7 and Optimizer.step named with ms, on the critical path" grep -q 'step 7 (1 of 6) takes 1.23x the others (216.9 vs 176.1 ms); on its critical path the extra time is in `Optimizer.step#SGD.step`, 57.8 ms there against at most 20.5 ms in the other steps' "$TMP/rs.txt"
check "planted (resnet): report lists step 7 as slow" "$PYTHON" -c '
import json, sys; r = json.load(open(sys.argv[1])); s = list(r["Steps"].values())[0]
assert s["slow steps"] == [7]
st = [x for x in s["steps"] if x["number"] == 7][0]
assert st["slow"] and st["function"].endswith("Optimizer.step#SGD.step"), st' "$TMP/rs/PerfDisplay/report.json"
"$PYTHON" "$TOOLS/plant_slow_step.py" "$NQ" "$TMP/nq_slow.json" 552 "## wait_sparse_data_dist ##" 45 >/dev/null
"$PT_BIN" analyze "$TMP/nq_slow.json" -o "$TMP/nqs" --format json >"$TMP/nqs.txt" 2>&1
check "planted (negative_queue): step 552 and ## wait_sparse_data_dist ## named" grep -q 'step 552 (1 of 5) takes 1.21x the others (261.1 vs 215.8 ms); the extra time is in `## wait_sparse_data_dist ##`, 47.9 ms there against at most 3.2 ms in the other steps' "$TMP/nqs.txt"

# User rules for communication kernels.
printf '# test rules\n*cutlass::Kernel2<cutlass_80_wmma*  alltoall dispatch\n' >"$TMP/rules.txt"
"$PT_BIN" summarize "$BERT" --comm-kernels "$TMP/rules.txt" -o "$TMP/ck.json"
check "--comm-kernels: the kernel becomes communication with its role" "$PYTHON" -c '
import json, sys; s = json.load(open(sys.argv[1]))
p = [p for p in s["patterns"] if "cutlass_80_wmma" in p["key"]]
assert p and all(x["class"] == "communication" and x["role"] == "alltoall dispatch" and x["kind"] == "comm_kernel" for x in p), p' "$TMP/ck.json"
PERFTRACKER_COMM_KERNELS=$TMP/rules.txt "$PT_BIN" summarize "$BERT" -o "$TMP/ck2.json"
check "PERFTRACKER_COMM_KERNELS: the same" cmp -s <(grep -o '"class":"communication"' "$TMP/ck.json") <(grep -o '"class":"communication"' "$TMP/ck2.json")
printf '*a*  allreduce\n*b*  sideways\n' >"$TMP/bad_rules.txt"
check_fails "--comm-kernels: a bad role names the file and line" "bad_rules.txt: line 2: unknown role 'sideways'" "$PT_BIN" summarize "$BERT" --comm-kernels "$TMP/bad_rules.txt" -o "$TMP/x.json"
check_fails "--comm-kernels: a missing file" "no_such_rules" "$PT_BIN" analyze "$BERT" --comm-kernels "$TMP/no_such_rules" -o "$TMP/x"

# Across workers: step 7 slowed on three workers is the job's slow step,
# said once; the worker with a second slow step of its own keeps its
# finding, which names both steps and the function.
mkdir -p "$TMP/job"
for r in 0 1 2; do
	"$PYTHON" "$TOOLS/plant_slow_step.py" "$RESNET" "$TMP/job/node0_${r}_100$r.json" 7 "Optimizer.step#SGD.step" 40 >/dev/null
done
"$PYTHON" "$TOOLS/plant_slow_step.py" "$TMP/job/node0_2_1002.json" "$TMP/x.json" 9 "Optimizer.step#SGD.step" 30 >/dev/null && mv "$TMP/x.json" "$TMP/job/node0_2_1002.json"
"$PT_BIN" analyze "$TMP/job" -o "$TMP/jo" --format json >"$TMP/jo.txt" 2>&1
check "job: step 7 slow on all 3 workers, said once" grep -q '^1\. step 7 is slow on 3 of the 3 workers with several steps: 216.9 ms' "$TMP/jo.txt"
check "job: the worker with its own slow step 9 named with both and the function" grep -q '^2\. node0_2_1002.json: steps 7 and 9 (2 of 6) take 1.21x the others (211.7 vs 175.0 ms); on their critical paths the extra time is in `Optimizer.step#SGD.step`' "$TMP/jo.txt"
check "job: no per-worker finding for the workers slow only in the job's step" bash -c "! grep -q 'node0_[01]_100[01].json: step' '$TMP/jo.txt'"

# A CPU-only trace says so instead of "idle 100%".
CPU=$PT_DATA/HolisticTraceAnalysis/tests/data/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz
"$PT_BIN" analyze "$CPU" -o "$TMP/cpu" --format json >"$TMP/cpu.txt" 2>&1
check "CPU-only trace: said in one sentence" grep -q 'the trace records no GPU kernel or memory operation in its step (210.1 ms): a CPU-only run' "$TMP/cpu.txt"
# ... as a numbered finding of the text report, not filed as possibly noise:
# a statement with no time lost is not graded
"$PT_BIN" analyze "$CPU" -o "$TMP/cpu2" >"$TMP/cpu2.txt" 2>&1
check "CPU-only trace: numbered, ungraded, not possibly noise" bash -c "grep -q '^  1\. rank 34: the trace records no GPU kernel' '$TMP/cpu2.txt' && ! grep -q 'Possibly noise' '$TMP/cpu2.txt' && \"$PYTHON\" -c 'import json,sys; f=json.load(open(sys.argv[1]))[\"findings\"]; sys.exit(not (len(f) == 1 and \"confidence\" not in f[0]))' '$TMP/cpu2/PerfDisplay/report.json'"

# The text report wraps findings without losing or gluing words: each
# numbered finding's explanation, its lines joined, reads as in report.json
# (a "(weak) " prefix once shifted the wrap so "than the" printed
# "thanthe"); the weak ones are on the "Possibly noise" line after them.
"$PT_BIN" analyze "$RESNET" -o "$TMP/wrap" >"$TMP/wrap.txt" 2>&1
check "text: wrapped findings keep every word" "$PYTHON" -c '
import json, re, sys
r = json.load(open(sys.argv[1])); text = open(sys.argv[2]).read()
block = text.split("Findings (", 1)[1].split("\n\n", 1)[0]
body = block.split("\n", 1)[1].split("\n  Possibly noise", 1)[0]
items = re.split(r"\n +\d+\. ", "\n" + body)[1:]
causes = [f for f in r["findings"] if f.get("confidence", {}).get("level") != "weak"]
assert len(items) == len(causes) >= 1 and len(r["findings"]) >= 2, items
for f, t in zip(causes, items):
    body = " ".join(l.strip() for l in t.split("\n") if not re.match(r" *(weak|moderate|strong):", l))
    assert " ".join(f["explanation"].split()) == body, (f["explanation"], body)' "$TMP/wrap/PerfDisplay/report.json" "$TMP/wrap.txt"
