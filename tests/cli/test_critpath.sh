#!/bin/bash
# test_critpath.sh - the per-step critical path (summary "critical_path",
# docs/summary.md "Critical path") names the right step and function on REAL
# traces with one planted fault (tests/tools/plant_critpath.py): each fault
# in two steps and, where the trace has them, two different annotations,
# kernels or ops, D = 30 ms (HTA's TorchRec control trace: 6 steps
# 1009-1014 of ~76 ms; the Kineto ResNet50 sample: steps 5-10 of ~176 ms).
# `analyze` must give a "Steps" finding naming "step N" and the planted
# function in backquotes, and name no other step as slow; `summarize` must
# put the D ms on that function's path in that step.  The unplanted traces
# claim no slow step; every step's path split sums to the step's ms.
. "$(dirname "$0")/lib.sh"

PLANT="$PT_ROOT/tests/tools/plant_critpath.py"
CONTROL=$PT_DATA/HolisticTraceAnalysis/tests/data/trace_diff/control/control.json.gz
RESNET=$PT_DATA/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz
DLRM0=$PT_DATA/dlrm/worker0_step_12.1694128201545.pt.trace.json
D=30

# pycheck MODE ARGS...: the Python assertions (exit 0 when they hold; the
# reason on stdout otherwise, which check prints)
pycheck() {
	"$PYTHON" - "$@" <<'PY'
import json, re, statistics, sys

mode, args = sys.argv[1], sys.argv[2:]


def report(path):
    return json.load(open(path))


def steps_findings(r):
    return [f for f in r.get("findings", []) if f.get("category") == "Steps"]


def named_steps(text):
    """The step numbers a sentence names: "step 12", "steps 7 and 9",
    "steps 3, 4 and 5" (not "6 steps")."""
    out = set()
    for m in re.finditer(r"\bsteps? (\d+(?:(?:, |,? and )\d+)*)", text):
        out.update(int(x) for x in re.findall(r"\d+", m.group(1)))
    return out


def shown(name, kernel):
    """The name as the report prints it: a kernel's base name (no "void ",
    up to its first '<' or '(' that is not "(anonymous namespace)")."""
    if not kernel:
        return "`%s`" % name
    s = name[5:] if name.startswith("void ") else name
    i = 0
    while i < len(s):
        if i > 0 and (s[i] == "<" or (s[i] == "(" and not s.startswith("(anonymous namespace)", i))):
            break
        i += 1
    return "`" + s[:i][:117]


def fail(msg):
    print(msg)
    sys.exit(1)


if mode == "names":            # REPORT PLANT-JSON
    r, p = report(args[0]), json.loads(open(args[1]).read())
    n, fn = p["step"], p["function"]
    want = shown(fn, p["fault"] == "kernel-longer")
    F = steps_findings(r)
    hit = [f for f in F if n in named_steps(f["explanation"]) and want in f["explanation"]]
    if not hit:
        fail("no Steps finding names step %d and %s; Steps findings: %s" %
             (n, want, [f["explanation"] for f in F] or "none"))
elif mode == "only":           # REPORT PLANT-JSON: no other step named as slow
    r, p = report(args[0]), json.loads(open(args[1]).read())
    n = p["step"]
    bad = [f["explanation"] for f in steps_findings(r) if named_steps(f["explanation"]) - {n}]
    for w, s in (r.get("Steps") or {}).items():
        if isinstance(s, dict) and s.get("slow steps") not in (None, [n]):
            bad.append("report Steps[%s] slow steps = %s" % (w, s.get("slow steps")))
    if bad:
        fail("other steps named: %s" % bad)
elif mode == "path":           # SUMMARY PLANT-JSON: the path carries D on the function in step N
    d, p = report(args[0]), json.loads(open(args[1]).read())
    cp = d.get("critical_path")
    if not cp:
        fail("no critical_path in the summary")
    nums = [s["number"] for s in cp["steps"]]
    i = nums.index(p["step"])
    fn, D = p["function"], p["ms"]
    fs = [f for f in cp["functions"] if f["key"] == fn or
          (p["fault"] == "kernel-longer" and f["key"].startswith(fn))]
    if not fs:
        fail("%s is not among critical_path.functions: %s" % (fn, [f["key"][:60] for f in cp["functions"]]))
    best = max(f["ms"][i] - statistics.median(f["ms"][:i] + f["ms"][i + 1:]) for f in fs)
    if best < 0.9 * D:
        fail("%s: %.3f ms over its median on step %d's path, planted %g ms (%s)" %
             (fn, best, p["step"], D, [[round(x, 3) for x in f["ms"]] for f in fs]))
elif mode == "noslow":         # REPORT: no Steps finding claims a slow step
    r = report(args[0])
    bad = [f["explanation"] for f in steps_findings(r)
           if f.get("metric") in ("slow steps", "slow steps (job)")]
    for w, s in (r.get("Steps") or {}).items():
        if isinstance(s, dict) and s.get("slow steps"):
            bad.append("report Steps[%s] slow steps = %s" % (w, s["slow steps"]))
    if bad:
        fail("slow steps claimed: %s" % bad)
elif mode == "nosteps":        # REPORT: no per-step claim at all
    F = steps_findings(report(args[0]))
    if F:
        fail("Steps findings: %s" % [f["explanation"] for f in F])
elif mode == "split":          # SUMMARY [NSTEPS]: split sums to ms, the steps' ms
    d = report(args[0])
    cp = d.get("critical_path")
    if not cp:
        fail("no critical_path in the summary")
    st = cp["steps"]
    if len(args) > 1 and len(st) != int(args[1]):
        fail("%d steps on the path, want %s" % (len(st), args[1]))
    if [s["number"] for s in st] != [s["number"] for s in d["steps"]]:
        fail("path steps %s, summary steps %s" % ([s["number"] for s in st], [s["number"] for s in d["steps"]]))
    for s, t in zip(st, d["steps"]):
        tot = sum(s["split"].values())
        if abs(tot - s["ms"]) > 0.001 or abs(s["ms"] - t["ms"]) > 0.001:
            fail("step %d: split sums to %.4f, path ms %.4f, step ms %.4f (%s)" %
                 (s["number"], tot, s["ms"], t["ms"], s["split"]))
        if set(s["split"]) != {"cpu", "compute", "communication", "memory", "launch", "gap"} or \
                min(s["split"].values()) < 0:
            fail("step %d: split %s" % (s["number"], s["split"]))
elif mode == "field":          # PLANT-JSON KEY: print a member
    print(json.loads(open(args[0]).read()).get(args[1], ""))
elif mode == "label":          # PLANT-JSON: the function as the report shows it
    p = json.loads(open(args[0]).read())
    print(shown(p["function"], p["fault"] == "kernel-longer").strip("`"))
else:
    fail("unknown mode " + mode)
PY
}

# planted NAME TRACE STEP FAULT [PLANT OPTIONS...]: plant the fault, check the
# planted trace is valid, then the diagnosis (analyze) and the path
# (summarize)
planted() {
	local name=$1 trace=$2 step=$3 fault=$4
	shift 4
	local t=$TMP/$name.json.gz info=$TMP/$name.plant
	if ! "$PYTHON" "$PLANT" --fault "$fault" --step "$step" --ms $D "$@" "$trace" "$t" >"$info" 2>"$TMP/$name.err"; then
		not_ok "$name: plant $fault in step $step" "$(cat "$TMP/$name.err")"
		return
	fi
	local fn added room
	fn=$(pycheck label "$info")
	added=$(pycheck field "$info" added)
	room=$(pycheck field "$info" launch_room_us)
	check "$name: plant $fault in step $step ($fn): the trace stays valid" \
		"$PYTHON" "$PLANT" --verify "$trace" "$t" --step "$step" --ms $D --added "${added:-0}" --slack-us "${room:-0}"
	"$PT_BIN" analyze "$t" -o "$TMP/$name.out" >"$TMP/$name.txt" 2>&1
	local r=$TMP/$name.out/PerfDisplay/report.json
	check "$name: a Steps finding names step $step and \`$fn\`" pycheck names "$r" "$info"
	check "$name:   and no other step as slow" pycheck only "$r" "$info"
	"$PT_BIN" summarize "$t" -o "$TMP/$name.sum.json" 2>/dev/null
	check "$name:   the path puts the $D ms on it in step $step" pycheck path "$TMP/$name.sum.json" "$info"
	rm -f "$t"
}

# --- the unplanted traces ---------------------------------------------------
check "summarize control" "$PT_BIN" summarize "$CONTROL" -o "$TMP/control.json"
check "control: path split per step sums to each step's ms" pycheck split "$TMP/control.json" 6
check "summarize resnet50" "$PT_BIN" summarize "$RESNET" -o "$TMP/resnet.json"
check "resnet50: path split per step sums to each step's ms" pycheck split "$TMP/resnet.json" 6
"$PT_BIN" analyze "$CONTROL" -o "$TMP/control.out" >/dev/null 2>&1
check "control unplanted: no Steps finding claims a slow step" pycheck noslow "$TMP/control.out/PerfDisplay/report.json"
"$PT_BIN" analyze "$RESNET" -o "$TMP/resnet.out" >/dev/null 2>&1
check "resnet50 unplanted: no Steps finding claims a slow step" pycheck noslow "$TMP/resnet.out/PerfDisplay/report.json"

# One step (DLRM rank 0, ProfilerStep#10 only): one path, whole; no per-step claim.
check "summarize dlrm rank 0 (one step)" "$PT_BIN" summarize "$DLRM0" -o "$TMP/dlrm0.json"
check "dlrm: one step on the path, split sums to its ms" pycheck split "$TMP/dlrm0.json" 1
"$PT_BIN" analyze "$DLRM0" -o "$TMP/dlrm0.out" >/dev/null 2>&1
check "dlrm: analyze makes no per-step claim" pycheck nosteps "$TMP/dlrm0.out/PerfDisplay/report.json"

# --- control (TorchRec; main thread + autograd thread; streams 7, 20-22) -----
# plant_critpath.py --fault block-idle --step 1010: the 4.0 ms blocking
# cudaMemcpyAsync (DtoH, pageable, stream 20, waiting for the NCCL all-to-all
# on stream 21) in `## all2all_tw_data:init ##` blocks 30 ms more, inserted
# 26.36 ms into the step, in the 3 us the GPU idles between stream 20's last
# kernel and the copy: the annotation is the answer.
planted c_idle_1010 "$CONTROL" 1010 block-idle
# --step 1012 --annotation '## all2all_id_list_score_data:init ##': the same
# kind of wait (2.1 ms copy behind the second all-to-all) in the other
# annotation, in another step.
planted c_idle_1012 "$CONTROL" 1012 block-idle --annotation "## all2all_id_list_score_data:init ##"
# plant_critpath.py --fault block-busy --step 1010: the 5.3 ms copy in
# `## all2all_tw_data:wait ##` (stream 20) is queued behind 12 more runs of
# split_embedding_codegen_forward_unweighted_kernel (the longest non-NCCL
# kernel that runs in every step; 2.5 ms each, its usual 2.54 ms; 30 ms in all),
# launched inside the annotation right before the copy: the annotation is
# the answer (the report may name the kernel it waits for too; no kernel
# ran longer than usual).
planted c_busy_1010 "$CONTROL" 1010 block-busy
# --step 1012 --annotation '## all2all_tw_data:init ##' --kernel
# CatArrayBatchedCopy: the 1.7 ms copy there, behind 49 runs (0.61 ms each,
# its usual 0.62 ms) of at::native::(anonymous namespace)::CatArrayBatchedCopy.
planted c_busy_1012 "$CONTROL" 1012 block-busy --annotation "## all2all_tw_data:init ##" --kernel CatArrayBatchedCopy
# plant_critpath.py --fault kernel-longer --step 1010: the 5.7 ms
# split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_cta_per_row_1
# on stream 7 (autograd's), which stream 20's permute kernels and so the
# copy in `## all2all_tw_data:wait ##` wait for (cross-stream), runs 30 ms
# longer while the main thread blocks in that copy.
planted c_kern_1010 "$CONTROL" 1010 kernel-longer
# --step 1012 --kernel permute_indices_weights_kernel: the 0.4 ms
# fbgemm_gpu::permute_indices_weights_kernel<false,...> right before the
# 0.6 ms blocking copy in `## sparse_data_dist ##`.
planted c_kern_1012 "$CONTROL" 1012 kernel-longer --kernel permute_indices_weights_kernel
# plant_critpath.py --fault cpu-longer --step 1010: an aten::empty (7 us,
# directly in `## all2all_tw_data:init ##`, GPU idle, the next GPU work
# launched after it) runs 30 ms longer.
planted c_cpu_1010 "$CONTROL" 1010 cpu-longer
# --step 1012 --op aten::to: an aten::to (13 us) inside aten::sum, GPU idle:
# the answer is the inner op, not its caller.
planted c_cpu_1012 "$CONTROL" 1012 cpu-longer --op aten::to

# --- resnet50 (2021 Kineto sample: no user annotations, and the main thread
# waits only for its input copies, never for a kernel, so only CPU faults lie
# on the path) ------------------------------------------------------------------
# plant_critpath.py --fault cpu-longer --step 7: aten::stack (4.5 ms, the
# batch collation in the DataLoader, GPU idle) runs 30 ms longer.
planted r_cpu_7 "$RESNET" 7 cpu-longer
# --step 9 --op aten::div: one of the per-image normalisations (0.2 ms).
planted r_cpu_9 "$RESNET" 9 cpu-longer --op aten::div
# block-idle needs a user annotation: refused on resnet50, with a reason.
check_fails "resnet50: block-idle refused (no annotation)" "no user annotation" \
	"$PYTHON" "$PLANT" --fault block-idle --step 7 --ms $D "$RESNET" "$TMP/x.json"

# --- the split against an independent computation ------------------------------
# tests/tools/critpath_reference.py walks the same graph from docs/summary.md's
# text alone (Python, no code shared): every step's split within 1% of the step
# on four real traces (TorchRec NCCL, the 2021 ResNet50, HTA's negative-queue
# NCCL trace with CUDA graphs, one DLRM rank).
NQ=$PT_DATA/HolisticTraceAnalysis/tests/data/negative_queue_length_values_check/rank0.json.gz
for t in "$CONTROL" "$RESNET" "$NQ" "$DLRM0"; do
	n=$(basename "$t")
	"$PT_BIN" summarize "$t" -o "$TMP/ref_$n.summary.json" 2>/dev/null
	"$PYTHON" "$PT_ROOT/tests/tools/critpath_reference.py" "$t" >"$TMP/ref_$n.json"
	check "$n: split per step matches the independent computation (1%)" \
		"$PYTHON" "$PT_ROOT/tests/tools/critpath_compare.py" "$TMP/ref_$n.summary.json" "$TMP/ref_$n.json" --tol 0.01
done

# --- Nsight Systems: the same walk from an nsys export (correlationId) ----------
# saxpy-mpi: the host's blocking cudaMemcpy waits for its device-to-host copy,
# which is queued behind the saxpy kernel on the same stream (the export's own
# rows).
"$PT_BIN" summarize "$PT_DATA/pipit/saxpy-mpi-cuda_nsys_perlmutter0.sqlite" -o "$TMP/nsys.json" 2>/dev/null
check "nsys: the blocking cudaMemcpy waits for its DtoH copy queued behind saxpy" "$PYTHON" -c '
import json, sys
cp = json.load(open(sys.argv[1]))["critical_path"]
s = cp["steps"][0]
assert abs(sum(s["split"].values()) - s["ms"]) < 1e-3, s
w = s["waits"][0]
assert w["call"] == "cudaMemcpy" and w["target"].startswith("Memcpy DtoH") and w["behind"].startswith("saxpy"), w
assert w["target_stream"] == w["behind_stream"] == 7, w' "$TMP/nsys.json"

# --- across workers: the DLRM set (8 ranks, rank 7 the natural straggler) ------
# The victims' paths wait on rank 7 inside the collectives; the job's path of
# step 10 runs through rank 7, and its what-if is the Lockstep section's.
"$PT_BIN" analyze "$PT_DATA/dlrm" -q -o "$TMP/dlrm" 2>/dev/null
check "DLRM: the job path runs through rank 7, what-if as the Lockstep straggler's" "$PYTHON" -c '
import json, sys
r = json.load(open(sys.argv[1]))
cp, lk = r["Critical path"], r["Lockstep"]
w7 = [w for w, v in r["workers"].items() if v["rank"] == 7][0]
job = cp["job"]
assert len(job) == 1 and job[0]["number"] == 10 and job[0]["through"] == w7, job
st = lk["stragglers"][0]
assert st["worker"] == w7 and abs(job[0]["what-if (ms)"] - st["what if"]["step (ms)"]) < 0.01, (job, st)
assert abs(job[0]["others waited for it (ms)"] - st["others waited for it (ms)"]) < 0.01
for w, v in cp["workers"].items():
    s = v["steps"][0]
    assert abs(sum(s["split (ms)"].values()) - s["ms"]) < 1e-6, (w, s)
    if w == w7:
        assert s["split (ms)"]["wait"] == 0 and "waited for" not in s, s
    elif s["split (ms)"]["wait"] > 0.1:
        assert s["waited for"] == w7, (w, s)
assert sum(v["steps"][0]["split (ms)"]["wait"] > 1 for v in cp["workers"].values()) >= 5' "$TMP/dlrm/PerfDisplay/report.json"

# --- cuda_sync records (newer Kineto): which stream a wait was for -------------
# A trace in the shape of kineto's docs traces: stream 21 is told to wait for
# stream 7 (Stream Wait Event) before kernel c, while stream 13's kernel b ends
# later: the path must go c -> a (stream 7), as the record says, and so must
# the independent computation; without the record both fall back on "the
# latest end on another stream" (b).
"$PYTHON" - "$TMP/sync.json" "$TMP/nosync.json" <<'PY'
import json, sys
ev = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 9, "tid": 9, "ts": 0, "dur": 1000}]
def rt(name, ts, dur, corr): ev.append({"ph": "X", "cat": "cuda_runtime", "name": name, "pid": 9, "tid": 9, "ts": ts, "dur": dur, "args": {"correlation": corr}})
def k(name, stream, ts, dur, corr): ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream, "ts": ts, "dur": dur, "args": {"stream": stream, "correlation": corr}})
rt("cudaLaunchKernel", 0, 10, 1); k("a", 7, 20, 300, 1)
rt("cudaLaunchKernel", 10, 10, 2); k("b", 13, 20, 400, 2)
rt("cudaLaunchKernel", 30, 10, 4); k("c", 21, 430, 100, 4)
rt("cudaStreamSynchronize", 50, 500, 5)
sync = {"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": 0, "tid": 21, "ts": 25, "dur": 1,
        "args": {"wait_on_stream": 7, "wait_on_cuda_event_record_corr_id": 3, "stream": 21, "correlation": 9}}
json.dump({"traceEvents": ev + [sync]}, open(sys.argv[1], "w"))
json.dump({"traceEvents": ev}, open(sys.argv[2], "w"))
PY
for v in sync nosync; do
	"$PT_BIN" summarize "$TMP/$v.json" -o "$TMP/$v.summary.json" 2>/dev/null
	"$PYTHON" "$PT_ROOT/tests/tools/critpath_reference.py" "$TMP/$v.json" >"$TMP/$v.ref.json"
	check "cuda_sync ($v): the split matches the independent computation" \
		"$PYTHON" "$PT_ROOT/tests/tools/critpath_compare.py" "$TMP/$v.summary.json" "$TMP/$v.ref.json"
done
check "cuda_sync: the recorded stream wait decides what kernel c waited for" "$PYTHON" -c '
import json, sys
w1 = json.load(open(sys.argv[1]))["critical_path"]["steps"][0]["waits"][0]
w2 = json.load(open(sys.argv[2]))["critical_path"]["steps"][0]["waits"][0]
assert w1["target"] == "c" and w1["behind"] == "a" and w1["behind_stream"] == 7, w1
assert w2["target"] == "c" and w2["behind"] == "b" and w2["behind_stream"] == 13, w2' "$TMP/sync.summary.json" "$TMP/nosync.summary.json"
