#!/bin/bash
# test_compare.sh - `perftracker compare BASELINE NEW -o DIR` on real traces
# with planted changes (tests/tools/plant_compare.py): HTA's trace_diff
# control with one kernel 3x slower and one new kernel (both named first,
# with their ms per step), the control against itself (no finding), the
# 8-rank DLRM set with one rank's GPU kernels 1.3x slower (that rank and its
# kernels, nothing else), a Python function 1.5x slower in TraceLens's BERT
# trace, a real DataLoader change (Kineto's ResNet50 samples with 0 and 4
# loader processes), every kind of side (traces, summaries, report
# folders with and without kept summaries), two unrelated models, bad input;
# GPU work grown 2.8x per call (tests/tools/plant_compare_growth.py: the
# all-reduce, an all-to-all, a side-stream copy and kernel, overlapped or
# waited for, in three real bases): named with its running and critical
# path ms per step, weak when the step did not follow.
. "$(dirname "$0")/lib.sh"

CTL=$PT_DATA/HolisticTraceAnalysis/tests/data/trace_diff/control/control.json.gz
DLRM=$PT_DATA/dlrm
PLANT="$PYTHON $PT_ROOT/tests/tools/plant_compare.py"
SLOW=split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_warp_per_row_1
NEWK=planted_all2all_pack_kernel

# py REPORT_DIR EXPR: evaluate a Python assertion on DIR's "Compare" section (c)
py() {
	local dir=$1; shift
	"$PYTHON" - "$dir/PerfDisplay/report.json" "$@" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))["Compare"]
f = c["findings"]
ok = eval(sys.argv[2])
if not ok:
    print("summary:", c["summary"])
    for x in f[:6]:
        print(" ", x["explanation"][:300])
sys.exit(0 if ok else 1)
EOF
}

# --- HTA trace_diff control: one kernel 3x slower, one new kernel -------------
$PLANT "$CTL" "$TMP/planted.json.gz" --slow $SLOW --factor 3 --new $NEWK --new-ms 3 --keep-overlap >"$TMP/plant.out" 2>&1 ||
	{ not_ok "plant the control trace" "$(cat "$TMP/plant.out")"; exit 0; }
check "compare control vs planted" "$PT_BIN" compare "$CTL" "$TMP/planted.json.gz" -o "$TMP/cp"
"$PT_BIN" compare "$CTL" "$TMP/planted.json.gz" -q -o "$TMP/cp" >/dev/null 2>&1
check "the planted changes: the new kernel first, the slowed one among the first three" py "$TMP/cp" \
	"f[0]['name'] == '$NEWK' and '$SLOW'[:40] in [x['name'][:40] for x in f[:3]]"
check "the new kernel: appeared, 3.00 ms per step" py "$TMP/cp" \
	"[x for x in f if x['name'] == '$NEWK'][0]['change'] == 'appeared' and abs([x for x in f if x['name'] == '$NEWK'][0]['delta_ms'] - 3.0) < 0.01"
# 1.2 ms per call becomes 3.6: +2.4 ms of its own time per step, of which the
# part another compute stream shares with it is not its alone.
check "the slowed kernel: slower, 3.00x per call, 1.5-2.4 ms per step" py "$TMP/cp" \
	"[(x['change'], round(x['new_per_call_ms'] / x['baseline_per_call_ms'], 2), 1.5 < x['delta_ms'] <= 2.41) for x in f if '$SLOW' in x['function']] == [('slower', 3.0, True)]"
check "no other finding but the annotations that wait for them" py "$TMP/cp" \
	"len(f) == 3 and [x['scope'] for x in f].count('span') == 1 and all(s['delta_ms'] > 0 for s in [x for x in f if x['scope'] == 'span'][0]['spans'])"
check "step times: 1 worker, 6 steps a side, NEW slower" py "$TMP/cp" \
	"c['baseline']['steps'] == 6 and c['new']['steps'] == 6 and c['baseline']['workers'] == 1 and c['delta_ms'] > 4 and c['pairing'] == 'rank'"
"$PT_BIN" compare "$CTL" "$TMP/planted.json.gz" >"$TMP/cp.txt" 2>&1
if head -1 "$TMP/cp.txt" | grep -q "^NEW is 1\.0[0-9]x slower per step: [0-9.]* ms more, [0-9]*% of it in the new \`$NEWK\` (+3.00 ms) and \`${SLOW:0:30}"; then
	ok "text report: the summary sentence first, naming both"
else
	not_ok "text report: the summary sentence first, naming both" "$(head -1 "$TMP/cp.txt")"
fi
check "waterfall: BASELINE + bars = NEW" py "$TMP/cp" \
	"abs(sum(b['delta_ms'] for b in c['waterfall']) - c['delta_ms']) < 1e-6 and 'new: $NEWK' in [b['label'] for b in c['waterfall'][:2]]"

# --- issue 21's planted variants of the control ---------------------------------
# One GEMM family replaced by another (the A100's TF32 CUTLASS GEMMs by
# fp32 cuBLAS SGEMM tile variants, 2.5x as long): one finding for the new
# family, one for the one it replaced, the precision hint.
GEMM=cutlass_80_tensorop_s1688gemm
$PLANT "$CTL" "$TMP/fam.json.gz" --rename $GEMM --to volta_sgemm --factor 2.5 --keep-overlap >"$TMP/plant.out" 2>&1 ||
	not_ok "plant a GEMM family" "$(cat "$TMP/plant.out")"
"$PT_BIN" compare "$CTL" "$TMP/fam.json.gz" -q -o "$TMP/cf" >/dev/null 2>&1
check "family replaced: the new SGEMM family first, as one finding of 8 kernels" py "$TMP/cf" \
	"f[0]['name'] == 'volta_sgemm_*' and f[0]['change'] == 'appeared' and f[0]['kernels'] == 8 and f[0]['precision'] == 'fp32' and f[0]['tensor_cores'] is False and not any(x['name'].startswith('volta_sgemm_') and x['name'] != 'volta_sgemm_*' for x in f)"
check "family replaced: the TF32 family it replaced is one finding, gone" py "$TMP/cf" \
	"[(x['change'], x['kernels'], x['precision']) for x in f if x['name'] == '${GEMM}_*'] == [('disappeared', 46, 'tf32')] and not any('$GEMM' in x['name'] and x['name'] != '${GEMM}_*' for x in f)"
check "family replaced: the hint says the GEMMs moved from TF32 tensor cores to fp32 CUDA cores" py "$TMP/cf" \
	"c['hint'].startswith('the GEMMs run mostly in fp32 on CUDA cores in NEW') and 'in tf32 on tensor cores in BASELINE' in c['hint'] and 'Kernel families: ' + c['hint'] in c['summary']"
check "family replaced: no other kernel is named" py "$TMP/cf" \
	"all(x['scope'] != 'function' or x['name'] in ('volta_sgemm_*', '${GEMM}_*') for x in f)"

# An annotation made longer: its thread waits 8 ms more inside it, the GPU idle.
$PLANT "$CTL" "$TMP/ann.json.gz" --grow-annotation "## wait_sparse_data_dist ##" --grow-ms 8 >"$TMP/plant.out" 2>&1 ||
	not_ok "plant a longer annotation" "$(cat "$TMP/plant.out")"
"$PT_BIN" compare "$CTL" "$TMP/ann.json.gz" -q -o "$TMP/ca" >/dev/null 2>&1
check "annotation longer: named first with its 8 ms per step, and alone" py "$TMP/ca" \
	"len(f) == 1 and f[0]['name'] == '## wait_sparse_data_dist ##' and f[0]['kind'] == 'annotation' and abs(f[0]['delta_ms'] - 8.0) < 0.01 and abs(f[0]['share'] - 1.0) < 0.01"

# Two slow steps of six: 30 ms more inside `## sparse_data_dist ##` in
# steps 3 and 4 only.  The whole step's spread grows; the function's own
# does not.
$PLANT "$CTL" "$TMP/two.json.gz" --grow-annotation "## sparse_data_dist ##" --grow-ms 30 --steps 3,4 >"$TMP/plant.out" 2>&1 ||
	not_ok "plant two slow steps" "$(cat "$TMP/plant.out")"
"$PT_BIN" compare "$CTL" "$TMP/two.json.gz" -q -o "$TMP/c2" >/dev/null 2>&1
check "two slow steps of six: the annotation first, 10 ms per step on average, alone" py "$TMP/c2" \
	"len(f) == 1 and f[0]['name'] == '## sparse_data_dist ##' and abs(f[0]['delta_ms'] - 10.0) < 0.01 and 'the time is in a few slow steps' in c['summary'] and abs(c['delta_ms'] - 10.0) < 0.01"

# A collective slower: the gradient all-reduce 2x as long, the kernels
# beside it unchanged.
$PLANT "$CTL" "$TMP/ar.json.gz" --slow ncclKernel_AllReduce --slow-cat kernel --factor 2 --keep-overlap >"$TMP/plant.out" 2>&1 ||
	not_ok "plant a slower all-reduce" "$(cat "$TMP/plant.out")"
"$PT_BIN" compare "$CTL" "$TMP/ar.json.gz" -q -o "$TMP/cr" >/dev/null 2>&1
check "collective slower: the all-reduce named first, 2x per call" py "$TMP/cr" \
	"f[0]['name'] == 'ring allreduce' and f[0]['change'] == 'slower' and round(f[0]['new_per_call_ms'] / f[0]['baseline_per_call_ms'], 2) == 2.0 and len(f) <= 2"

# --- issue 31: what grew on the critical path (tests/tools/plant_compare_growth.py) --
# The gradient all-reduce 2.8x as long per call.  Waited for: the next GPU
# work on another stream waits for each call (a planted stream sync), the
# step grows by what the path grew; the finding names the kernel, its
# running and path ms per step, and the what-if from the path's cost.
GROW="$PYTHON $PT_ROOT/tests/tools/plant_compare_growth.py"
$GROW "$CTL" "$TMP/arw.json.gz" --name ncclKernel_AllReduce --wait-at "" >"$TMP/plant.out" 2>&1 ||
	not_ok "plant a waited-for all-reduce" "$(cat "$TMP/plant.out")"
"$PT_BIN" compare "$CTL" "$TMP/arw.json.gz" -q -o "$TMP/carw" >/dev/null 2>&1
check "all-reduce waited for: named first, with its kernel, 5.48 -> 15.34 ms per step running, 2.80x per call, 3 calls" py "$TMP/carw" \
	"f[0]['name'] == 'ring allreduce' and f[0]['baseline_kernel'].startswith('ncclKernel_AllReduce_RING_LL_Sum_float') and (round(f[0]['baseline_running_ms'], 2), round(f[0]['new_running_ms'], 2), round(f[0]['new_per_call_ms'] / f[0]['baseline_per_call_ms'], 2), f[0]['new_calls']) == (5.48, 15.34, 2.8, 3.0)"
check "all-reduce waited for: on the path 1.10 -> 14.26 ms per step, costing the step's 4.87 ms, the what-if 82.36 -> 77.49 ms" py "$TMP/carw" \
	"(round(f[0]['baseline_path_ms'], 2), round(f[0]['new_path_ms'], 2), round(f[0]['path_cost_ms'], 2), round(c['delta_ms'], 2)) == (1.1, 14.26, 4.87, 4.87) and f[0]['what if'] == {'step (ms)': c['new']['step_ms']['mean'] - f[0]['path_cost_ms'], 'instead of (ms)': c['new']['step_ms']['mean']} and f[0]['confidence']['level'] in ('moderate', 'strong')"
check "all-reduce waited for: the sentence says it, and nothing else but the annotation that waits" py "$TMP/carw" \
	"'; on the critical path 1.10 -> 14.3 ms per step (+13.2 ms): if it took as long as in BASELINE, a step would take 77.5 ms instead of 82.4 ms (100% of the difference).' in f[0]['explanation'] and 'it runs 5.48 -> 15.3 ms per step' in f[0]['explanation'] and [x['scope'] for x in f[1:]] == ['span']"
# Overlapped: nothing else moves (only the stream's own order): the step
# time does not change, the finding is weak and says so, no what-if.
$GROW "$CTL" "$TMP/aro.json.gz" --name ncclKernel_AllReduce >"$TMP/plant.out" 2>&1 ||
	not_ok "plant an overlapped all-reduce" "$(cat "$TMP/plant.out")"
"$PT_BIN" compare "$CTL" "$TMP/aro.json.gz" -q -o "$TMP/caro" >/dev/null 2>&1
check "all-reduce overlapped: the only finding, weak, 2.80x per call, no cost on the step, no what-if" py "$TMP/caro" \
	"len(f) == 1 and f[0]['name'] == 'ring allreduce' and f[0]['confidence']['level'] == 'weak' and f[0]['path_cost_ms'] == 0 and 'what if' not in f[0] and round(f[0]['new_per_call_ms'] / f[0]['baseline_per_call_ms'], 2) == 2.8 and 'but the step time did not follow it' in f[0]['explanation'] and c['delta_ms'] == 0"
# Another protocol and dtype of the same collective (RING_LL -> RING_LL128,
# float -> bf16): matched by the collective, both kernels named.
$GROW "$CTL" "$TMP/arr.json.gz" --name ncclKernel_AllReduce --wait-at "" --rename RING_LL=RING_LL128,Sum_float=Sum_bf16 >"$TMP/plant.out" 2>&1 ||
	not_ok "plant a renamed all-reduce" "$(cat "$TMP/plant.out")"
"$PT_BIN" compare "$CTL" "$TMP/arr.json.gz" -q -o "$TMP/carr" >/dev/null 2>&1
check "all-reduce as RING_LL128 bf16: one collective, both kernels named, the same path cost" py "$TMP/carr" \
	"f[0]['name'] == 'ring allreduce' and f[0]['new_kernel'].startswith('ncclKernel_AllReduce_RING_LL128_Sum_bf16') and '\`ncclKernel_AllReduce_RING_LL_Sum_float\` in BASELINE, \`ncclKernel_AllReduce_RING_LL128_Sum_bf16\` in NEW' in f[0]['explanation'] and round(f[0]['path_cost_ms'], 2) == 4.87"
# A copy on a side stream and a compute kernel beside another stream, 2.8x
# per call, overlapped: each found, weak, the step unchanged.
$GROW "$CTL" "$TMP/mco.json.gz" --name "Memcpy HtoD" --stream 22 >"$TMP/plant.out" 2>&1 ||
	not_ok "plant a slower side-stream copy" "$(cat "$TMP/plant.out")"
"$PT_BIN" compare "$CTL" "$TMP/mco.json.gz" -q -o "$TMP/cmco" >/dev/null 2>&1
check "side-stream copy: the only finding, 8.44 -> 23.63 ms per step running, 2.79x per call, weak" py "$TMP/cmco" \
	"len(f) == 1 and f[0]['name'] == 'Memcpy HtoD (Pinned -> Device)' and (round(f[0]['baseline_running_ms'], 2), round(f[0]['new_running_ms'], 2)) == (8.44, 23.63) and round(f[0]['new_per_call_ms'] / f[0]['baseline_per_call_ms'], 2) == 2.79 and f[0]['confidence']['level'] == 'weak'"
$GROW "$CTL" "$TMP/ko.json.gz" --name permute_indices_weights_kernel >"$TMP/plant.out" 2>&1 ||
	not_ok "plant a slower side-stream kernel" "$(cat "$TMP/plant.out")"
"$PT_BIN" compare "$CTL" "$TMP/ko.json.gz" -q -o "$TMP/cko" >/dev/null 2>&1
check "side-stream kernel: the only finding, 2.80x per call, weak: it overlaps other work" py "$TMP/cko" \
	"len(f) == 1 and f[0]['name'] == 'fbgemm_gpu::permute_indices_weights_kernel' and round(f[0]['new_per_call_ms'] / f[0]['baseline_per_call_ms'], 2) == 2.8 and f[0]['confidence']['level'] == 'weak' and 'it overlaps other work' in f[0]['explanation']"
# Other real bases: an all-to-all (NCCL send/recv, rank 0 of 16, A100) and
# the DLRM set below.
NQ=$PT_DATA/HolisticTraceAnalysis/tests/data/negative_queue_length_values_check/rank0.json.gz
$GROW "$NQ" "$TMP/nqw.json.gz" --name ncclKernel_SendRecv --wait-at "" >"$TMP/plant.out" 2>&1 ||
	not_ok "plant a waited-for all-to-all" "$(cat "$TMP/plant.out")"
"$PT_BIN" compare "$NQ" "$TMP/nqw.json.gz" -q -o "$TMP/cnqw" >/dev/null 2>&1
check "all-to-all waited for: first, 15 calls, 2.80x per call, path 31.80 -> 87.07 ms per step costing the step's 35.31 ms, strong" py "$TMP/cnqw" \
	"f[0]['name'] == 'sendrecv' and f[0]['new_calls'] == 15 and round(f[0]['new_per_call_ms'] / f[0]['baseline_per_call_ms'], 2) == 2.8 and (round(f[0]['baseline_path_ms'], 2), round(f[0]['new_path_ms'], 2), round(f[0]['path_cost_ms'], 2), round(c['delta_ms'], 2)) == (31.8, 87.07, 35.31, 35.31) and f[0]['confidence']['level'] == 'strong'"
$GROW "$NQ" "$TMP/nqo.json.gz" --name ncclKernel_SendRecv >"$TMP/plant.out" 2>&1 ||
	not_ok "plant an overlapped all-to-all" "$(cat "$TMP/plant.out")"
"$PT_BIN" compare "$NQ" "$TMP/nqo.json.gz" -q -o "$TMP/cnqo" >/dev/null 2>&1
check "all-to-all overlapped: first, weak, no what-if, the step unchanged" py "$TMP/cnqo" \
	"f[0]['name'] == 'sendrecv' and f[0]['confidence']['level'] == 'weak' and 'what if' not in f[0] and c['delta_ms'] == 0"
check "all-to-all base against itself: no finding" "$PT_BIN" compare "$NQ" "$NQ" -q -o "$TMP/cnqs"
check "all-to-all base against itself: empty findings" py "$TMP/cnqs" "f == []"
# The DLRM set (8 ranks, V100, one step each): every rank's all-reduce.
$GROW "$DLRM" "$TMP/dlw" --name ncclKernel_AllReduce --wait-at "" >"$TMP/plant.out" 2>&1 ||
	not_ok "plant a waited-for all-reduce on 8 ranks" "$(cat "$TMP/plant.out")"
"$PT_BIN" compare "$DLRM" "$TMP/dlw" -q -o "$TMP/cdlw" >/dev/null 2>&1
check "8 ranks, all-reduce waited for: first, 2.80x per call, running 1.71 -> 4.79 ms per step, path 0 -> 4.79, the what-if back to BASELINE's step" py "$TMP/cdlw" \
	"f[0]['name'] == 'ring allreduce' and f[0]['workers'] == ['all'] and round(f[0]['new_per_call_ms'] / f[0]['baseline_per_call_ms'], 2) == 2.8 and (round(f[0]['baseline_running_ms'], 2), round(f[0]['new_running_ms'], 2), round(f[0]['baseline_path_ms'], 2), round(f[0]['new_path_ms'], 2)) == (1.71, 4.79, 0, 4.79) and abs(f[0]['what if']['step (ms)'] - c['baseline']['step_ms']['mean']) < 1e-6 and not any(x['scope'] == 'function' and x['name'] == 'sendrecv' for x in f)"
$GROW "$DLRM" "$TMP/dlo" --name ncclKernel_AllReduce >"$TMP/plant.out" 2>&1 ||
	not_ok "plant an overlapped all-reduce on 8 ranks" "$(cat "$TMP/plant.out")"
"$PT_BIN" compare "$DLRM" "$TMP/dlo" -q -o "$TMP/cdlo" >/dev/null 2>&1
check "8 ranks, all-reduce overlapped: first, weak, off the path: the step does not wait for it" py "$TMP/cdlo" \
	"f[0]['name'] == 'ring allreduce' and f[0]['confidence']['level'] == 'weak' and f[0]['new_path_ms'] == 0 and 'the step does not wait for it' in f[0]['explanation'] and c['delta_ms'] == 0"

# --- the control against itself ------------------------------------------------
check "control vs itself" "$PT_BIN" compare "$CTL" "$CTL" -o "$TMP/cc"
check "control vs itself: no finding, same step time" py "$TMP/cc" \
	"f == [] and c['delta_ms'] == 0 and c['summary'].startswith(\"NEW runs at BASELINE's speed\")"

# --- DLRM: rank 5's GPU kernels 1.3x slower -------------------------------------
$PLANT "$DLRM" "$TMP/dlrm_r5" --scale-kernels 1.3 --rank 5 >"$TMP/plant.out" 2>&1 ||
	{ not_ok "plant DLRM rank 5" "$(cat "$TMP/plant.out")"; }
check "compare DLRM vs DLRM rank 5 slower" "$PT_BIN" compare "$DLRM" "$TMP/dlrm_r5" -q -o "$TMP/cd"
check "rank 5's GPU compute is the first finding, kernels 1.30x per call" py "$TMP/cd" \
	"f[0]['ranks'] == [5] and f[0]['class'] == 'compute' and f[0]['change'] == 'slower' and 1.28 <= f[0]['per_call_ratio'] <= 1.32 and len(f[0]['functions']) == 5"
check "no other rank or class named" py "$TMP/cd" \
	"all(x.get('ranks') == [5] and x['class'] == 'compute' for x in f) and c['pairing'] == 'rank' and c['pairs'] == 8"
check "the summary sentence names rank 5" py "$TMP/cd" "'rank 5: GPU compute got slower' in c['summary']"
check "DLRM vs itself: no finding" "$PT_BIN" compare "$DLRM" "$DLRM" -q -o "$TMP/dd"
check "DLRM vs itself: empty findings" py "$TMP/dd" "f == []"

# --- every kind of side ----------------------------------------------------------
"$PT_BIN" analyze "$DLRM" -q -o "$TMP/rep" --keep-summaries "$TMP/rep/summaries" >/dev/null 2>&1
"$PT_BIN" analyze "$TMP/dlrm_r5" -q -o "$TMP/rep5" >/dev/null 2>&1
check "report folder (kept summaries) vs report folder (traces it names)" \
	"$PT_BIN" compare "$TMP/rep" "$TMP/rep5" -q -o "$TMP/cr"
check "report folders: inputs and the same finding" py "$TMP/cr" \
	"c['baseline']['input'] == 'report' and c['new']['input'] == 'report' and f[0]['ranks'] == [5] and f[0]['class'] == 'compute'"
check "summaries folder vs traces" "$PT_BIN" compare "$TMP/rep/summaries" "$DLRM" -q -o "$TMP/cs"
check "summaries vs their traces: no finding" py "$TMP/cs" \
	"c['baseline']['input'] == 'summaries' and c['new']['input'] == 'traces' and f == []"
check "report.json as a side" "$PT_BIN" compare "$TMP/rep5/PerfDisplay/report.json" "$DLRM" -q -o "$TMP/cj"
check "report.json side: rank 5 got faster" py "$TMP/cj" "f[0]['ranks'] == [5] and f[0]['change'] == 'faster'"

# --- populations: 4 ranks against 8 ----------------------------------------------
mkdir -p "$TMP/half"
cp "$DLRM"/worker[0-3]_* "$TMP/half/"
check "4 workers vs 8" "$PT_BIN" compare "$TMP/half" "$DLRM" -q -o "$TMP/ch"
check "4 vs 8: compared as populations" py "$TMP/ch" "c['pairing'] == 'population' and c['pairs'] == 0 and c['new']['workers'] == 8"

# --- a Python function 1.5x slower in a Python-heavy trace (TraceLens BERT) --------
BERT=$PT_DATA/TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz
$PLANT "$BERT" "$TMP/bert_slow.json.gz" --slow "modeling_bert.py(573): forward" --slow-cat python_function \
	--factor 1.5 >"$TMP/plant.out" 2>&1 || not_ok "plant BERT" "$(cat "$TMP/plant.out")"
check "BERT vs BERT with BertLayer.forward 1.5x slower" "$PT_BIN" compare "$BERT" "$TMP/bert_slow.json.gz" -q -o "$TMP/cbert"
# The four layers' stacks differ only in module instance numbers: one
# finding, 4 calls per step.  The tqdm monitor thread blocked in
# threading.py: wait shares the inserted time but is idle, not a finding.
check "BERT: the layer forward is the only finding, 4 calls, 1.50x per call" py "$TMP/cbert" \
	"len(f) == 1 and f[0]['name'] == 'transformers/models/bert/modeling_bert.py: forward' and 'BertLayer|' in f[0]['function'] and f[0]['new_calls'] == 4 and round(f[0]['new_per_call_ms'] / f[0]['baseline_per_call_ms'], 2) == 1.5 and f[0]['change'] == 'slower'"

# --- a real data-pipeline change: ResNet50 with a 4-process DataLoader ------------
R0=$PT_DATA/kineto/tb_plugin/samples/resnet50_num_workers_0
R4=$PT_DATA/kineto/tb_plugin/samples/resnet50_num_workers_4
check "ResNet50: DataLoader 0 vs 4 workers" "$PT_BIN" compare "$R0" "$R4" -q -o "$TMP/rn"
check "ResNet50: 1.25x faster per step on average (the median 49.7 ms), the single-process DataLoader named first" py "$TMP/rn" \
	"c['summary'].startswith('NEW is 1.25x faster per step: 35.1 ms less on average (the median step: 49.7 ms less)') and f[0]['change'] == 'disappeared' and f[0]['name'] == 'enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__' and 38 < -f[0]['delta_ms'] < 39 and c['pairing'] == 'population'"

# --- nothing in common -------------------------------------------------------------
check "BERT vs DLRM" "$PT_BIN" compare "$BERT" "$DLRM" -o "$TMP/cu"
check "BERT vs DLRM: says they have nothing in common, lists no function" py "$TMP/cu" \
	"c['unrelated'] is True and f == [] and 'little in common' in c['summary']"

# --- page ---------------------------------------------------------------------------
check "the page is written" test -s "$TMP/cp/PerfDisplay/index.html"

# --- bad input ----------------------------------------------------------------------
printf '{"traceEvents": [' >"$TMP/cut.json"
check_fails "unreadable BASELINE: one line naming the file" "BASELINE '$TMP/cut.json': " \
	"$PT_BIN" compare "$TMP/cut.json" "$DLRM"
[ "$(wc -l <"$TMP/.err")" -eq 1 ] && ok "unreadable side: exactly one line" || not_ok "unreadable side: exactly one line" "$(cat "$TMP/.err")"
mkdir -p "$TMP/bad"
cp "$TMP/cut.json" "$TMP/bad/a.json"
printf 'not json' >"$TMP/bad/b.json"
check_fails "NEW folder with no readable worker" "NEW '$TMP/bad': no readable worker among 2 files (first: '$TMP/bad/a.json'" \
	"$PT_BIN" compare "$DLRM" "$TMP/bad"
check_fails "missing side" "NEW '$TMP/nope': No such file" "$PT_BIN" compare "$DLRM" "$TMP/nope"
check_fails "one run only" "give two runs" "$PT_BIN" compare "$DLRM"
mkdir -p "$TMP/empty"
check_fails "empty folder" "no summaries, traces" "$PT_BIN" compare "$TMP/empty" "$DLRM"
mkdir -p "$TMP/onebad"
cp "$DLRM"/*.json "$TMP/onebad/"
cp "$TMP/cut.json" "$TMP/onebad/worker9_broken.json"
if "$PT_BIN" compare "$DLRM" "$TMP/onebad" -q -o "$TMP/cb" 2>"$TMP/cb.err" &&
	grep -q "warning: '$TMP/onebad/worker9_broken.json'" "$TMP/cb.err" &&
	py "$TMP/cb" "c['new']['failed'] == 1 and c['new']['workers'] == 8 and f == []" >/dev/null; then
	ok "one bad worker: a warning, the others compared"
else
	not_ok "one bad worker: a warning, the others compared" "$(cat "$TMP/cb.err")"
fi
check "--help" "$PT_BIN" compare --help
