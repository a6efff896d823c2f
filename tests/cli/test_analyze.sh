#!/bin/bash
# CLI tests for `perftracker analyze` and `perftracker diagnose` on the real
# 8-rank DLRM traces (tests/data/dlrm): the report has every key, 8 workers
# with ranks 0..7 and no false alarm, and the "display" key of the page;
# index.html is the self-contained PerfDisplay page with the report in it,
# next to app.py; an unreadable trace among them is listed and warned about
# while the other 8 are still reported; kept summaries diagnosed again give
# the same report.
. "$(dirname "$0")/lib.sh"

DLRM=$PT_DATA/dlrm
N=$(ls "$DLRM"/*.json | wc -l)
[ "$N" -eq 8 ] || { echo "FATAL: expected 8 DLRM traces in $DLRM, found $N"; exit 1; }

# pyjson FILE EXPR: evaluate a Python expression over r = the parsed report;
# the command fails when the expression is false or raises.
pyjson() {
	"$PYTHON" -c 'import json, sys
r = json.load(open(sys.argv[1]))
ok = eval(sys.argv[2])
if not ok:
    print("false:", sys.argv[2]); sys.exit(1)' "$1" "$2"
}

check "analyze the DLRM traces" "$PT_BIN" analyze "$DLRM" -o "$TMP/out" -j2
"$PT_BIN" analyze "$DLRM" -o "$TMP/out" -j2 >"$TMP/stdout" 2>"$TMP/stderr"
R=$TMP/out/PerfDisplay/report.json

check "report.json, index.html and app.py written" test -s "$R" -a -s "$TMP/out/PerfDisplay/index.html" -a -x "$TMP/out/PerfDisplay/app.py"
check "no stray temporary files" bash -c "[ \"\$(ls '$TMP/out/PerfDisplay' | tr '\n' ' ')\" = 'app.py index.html report.json timeline.json.gz ' ]"
check "nothing on stderr" test ! -s "$TMP/stderr"
check "top-level keys, in order" pyjson "$R" 'list(r) == ["GPU Compute", "GPU memory operations", "Communication", "CUDA Runtime", "Python functions", "Lockstep", "Critical path", "workers", "findings", "display", "Time breakdown", "timeline"]'
check "GPU Compute keys" pyjson "$R" 'list(r["GPU Compute"]) == ["min/median/max GPU utilization (in [0,1])", "workers with abnormal GPU utilization", "major_kernel_executions", "workers with potential GPU issues", "detailed report", "min/median/max GPU compute utilization (in [0,1])"]'
check "utilization min <= median <= max in [0,1]" pyjson "$R" '(lambda u: len(u) == 3 and 0 <= u[0] <= u[1] <= u[2] <= 1)(r["GPU Compute"]["min/median/max GPU utilization (in [0,1])"])'
check "5 major kernels with cost and ratio" pyjson "$R" 'len(r["GPU Compute"]["major_kernel_executions"]) == 5 and all(list(v) == ["median cost per execution (ms)", "bottleneck ratio (in [0,1])"] for v in r["GPU Compute"]["major_kernel_executions"].values())'
check "major kernels carry their launch shape" pyjson "$R" 'all("|" in k for k in r["GPU Compute"]["major_kernel_executions"])'
check "8 workers with ranks 0..7" pyjson "$R" 'sorted(w["rank"] for w in r["workers"].values()) == list(range(8))'
check "worker fields" pyjson "$R" 'all(list(w) == ["rank", "host", "pid", "file", "steps", "window (ms)", "gpu utilization", "gpu compute utilization"] for w in r["workers"].values())'
check "worker ids are the trace file names" pyjson "$R" 'sorted(r["workers"]) == sorted(__import__("os").listdir("'"$DLRM"'"))'
check "step 10 profiled everywhere" pyjson "$R" 'all(w["steps"] == [10] for w in r["workers"].values())'
check "no false alarm: no GPU issues" pyjson "$R" 'r["GPU Compute"]["workers with potential GPU issues"] == [] and r["GPU Compute"]["detailed report"] == {}'
check "no false alarm: no abnormal utilization" pyjson "$R" 'r["GPU Compute"]["workers with abnormal GPU utilization"] == {}'
# The one finding: rank 7 is the worker the others wait for (lockstep; the
# cause lies before the profiled step); rank 1, the main victim, is named nowhere.
check "one finding: rank 7 is the straggler" pyjson "$R" 'len(r["findings"]) == 1 and r["findings"][0]["category"] == "Lockstep" and r["findings"][0]["workers"] == ["worker7_step_12.1694128201553.pt.trace.json"]'
check "no false alarm: rank 1 blamed nowhere" pyjson "$R" 'all("worker1_" not in w for f in r["findings"] for w in f["workers"]) and not r["GPU Compute"]["detailed report"]'
check "no abnormal workers in any section" pyjson "$R" 'all(not v["abnormal_workers"] for s in ("GPU memory operations", "CUDA Runtime") for v in r[s].values()) and all(not k["abnormal_workers"] for g in r["Communication"].values() for k in g.values())'
check "communication groups from kernel names" pyjson "$R" '"sendrecv" in r["Communication"] and "ring allreduce" in r["Communication"]'
check "normal example has the reference keys" pyjson "$R" 'all(list(k["example_of_normal_worker"]) == ["worker", "different from other workers", "features"] for g in r["Communication"].values() for k in g.values())'
check "runtime entries have the reference keys" pyjson "$R" 'all(list(v) == ["avg bottleneck ratio (in [0,1])", "avg execution time / monitoring duration (in [0,1])", "abnormal_workers"] for v in r["CUDA Runtime"].values())'
check "Python stacks listed above 1%, sorted" pyjson "$R" 'all(all(x > 0.01 for x in v.values()) and list(v.values()) == sorted(v.values(), reverse=True) for v in r["Python functions"].values()) and len(r["Python functions"]) > 0'
# The "display" key (docs/display.md), checked against the kept summaries.
"$PT_BIN" analyze "$DLRM" -o "$TMP/sout" --keep-summaries "$TMP/dsums" -q
D='r["display"]'
check "display: version and classes" pyjson "$R" "$D"'["version"] == 1 and '"$D"'["classes"] == ["compute", "communication", "memory", "runtime", "python", "idle"]'
check "display: the 8 workers, in the order of workers" pyjson "$R" 'list('"$D"'["workers"]) == list(r["workers"]) and len(r["workers"]) == 8'
check "display: worker fields" pyjson "$R" 'all(list(v) == ["step_ms", "step_numbers", "class_ms", "slow"] and list(v["class_ms"]) == '"$D"'["classes"] for v in '"$D"'["workers"].values())'
check "display: step_ms and class_ms are the summaries'" "$PYTHON" -c 'import json, sys, glob, os
r = json.load(open(sys.argv[1])); d = r["display"]["workers"]; n = 0
for f in glob.glob(os.path.join(sys.argv[2], "*.summary.json")):
    s = json.load(open(f)); w = d[s["worker"]]; n += 1
    assert w["step_ms"] == [x["ms"] for x in s["steps"]], f
    assert w["step_numbers"] == [x["number"] for x in s["steps"]] == r["workers"][s["worker"]]["steps"], f
    assert w["class_ms"] == s["class_ms"], f
    assert abs(sum(w["class_ms"].values()) - r["workers"][s["worker"]]["window (ms)"]) < 1e-6, f
sys.exit(n != 8)' "$R" "$TMP/dsums"
check "display: one ProfilerStep of 14.455 ms on rank 0" pyjson "$R" "$D"'["workers"]["worker0_step_12.1694128201545.pt.trace.json"]["step_ms"] == [14.455]'
check "display: heatmap of 50 functions x 8 workers, ms per step" pyjson "$R" '(lambda h: h["metric"] == "ms per step" and len(h["functions"]) == 50 and h["workers"] == list(r["workers"]) and len(h["value"]) == 8 and all(len(v) == 50 for v in h["value"]))('"$D"'["heatmap"])'
check "display: heatmap cells are the summaries' total_ms / steps" "$PYTHON" -c 'import json, sys, glob, os, statistics
r = json.load(open(sys.argv[1])); h = r["display"]["heatmap"]
tot = {}
for f in glob.glob(os.path.join(sys.argv[2], "*.summary.json")):
    s = json.load(open(f))
    tot[s["worker"]] = {(p["class"], p["key"]): p["total_ms"] / max(len(s["steps"]), 1) for p in s["patterns"]}
cols = [(f["class"], f["key"]) for f in h["functions"]]
for i, w in enumerate(h["workers"]):
    for j, c in enumerate(cols):
        want = tot[w].get(c)
        assert (h["value"][i][j] is None) if want is None else h["value"][i][j] == round(want, 4), (w, c)
# columns: the 50 largest by median over workers (0 where absent), largest first
med = {c: statistics.median(t.get(c, 0) for t in tot.values()) for t in tot.values() for c in t}
best = sorted(med.values(), reverse=True)
sys.exit(not ([med[c] for c in cols] == best[:50]))' "$R" "$TMP/dsums"
check "display: identical with or without --keep-summaries" cmp "$TMP/sout/PerfDisplay/report.json" "$R"

check "report.json uses 4-space indent" bash -c "sed -n 2p '$R' | grep -q '^    \"GPU Compute\": {\$'"
# ... all but the "timeline" key, last, each of whose arrays of numbers is one line
# (docs/display.md "The `timeline` key")
check "report.json is json.dumps(indent=4), the timeline's arrays on one line" "$PYTHON" -c 'import json, re, sys
t = open(sys.argv[1]).read(); d = json.loads(t); tl = d.pop("timeline")
head, tail = t.split(",\n    \"timeline\": ", 1)
assert head + "\n}\n" == json.dumps(d, indent=4) + "\n"
assert json.loads(tail[:-2]) == tl and tail.endswith("\n}\n")
assert re.search(r"\"coll\": \[[0-9,-]+\],?\n", tail)' "$R"

# The text report for people: summary, findings, then the sections as tables.
check "text: summary first" bash -c "head -n 1 '$TMP/stdout' | grep -qx 'PerfTracker report: 8 workers, step 10 profiled'"
check "text: step time by rank" grep -qx '  Step time        min 12.5 ms (rank 7), median 16.1 ms, max 19.9 ms (rank 1)' "$TMP/stdout"
check "text: where the time goes" grep -q '^  Time goes to     Python/CPU 45.4%, communication 38.9%, ' "$TMP/stdout"
check "text: GPU utilization as %" grep -qx '  GPU utilization  min 21.1% (rank 7), median 41.7%, max 61.8% (rank 1)' "$TMP/stdout"
check "text: says where the page is" grep -qx "  Page             $TMP/out/PerfDisplay/index.html (perftracker display $TMP/out)" "$TMP/stdout"
check "text: the one finding names rank 7, the worker the others waited for" bash -c "grep -qx 'Findings (1, most time lost first)' '$TMP/stdout' && grep -q '^  1\. rank 7 is the worker the others waited for' '$TMP/stdout'"
check "text: sections in order after the findings" bash -c "grep -n '^[A-Z]' '$TMP/stdout' | cut -d: -f2 | sed 's/ (.*//; s/:.*//' | tr '\n' '/' | grep -qx 'PerfTracker report/Findings/GPU Compute/GPU memory operations/Communication/CUDA Runtime/Python functions/Lockstep/Critical path/Time breakdown/'"
check "text: every line under 120 columns" "$PYTHON" -c 'import sys
sys.exit(max(len(l.rstrip("\n")) for l in open(sys.argv[1], encoding="utf-8")) >= 120)' "$TMP/stdout"
check "text: summary and findings fit a screen" bash -c "[ \$(sed -n '1,/^GPU Compute\$/p' '$TMP/stdout' | wc -l) -le 24 ]"
check "text: no file names, no long decimals, no [0,1]" bash -c "! grep -q 'pt.trace.json\|[0-9]\.[0-9]\{5,\}\|in \[0,1\]' '$TMP/stdout'"
check "text: kernel names that differ stay different" bash -c "grep -q '^    vectorized_elementwise_kernel<…sqrt_kernel_cuda…> ' '$TMP/stdout' && grep -q '^    vectorized_elementwise_kernel<…FillFunctor…> ' '$TMP/stdout'"
check "text: µs-scale kernels in µs" grep -q '^    linearize_index_kernel<…> *17.0 µs *0.23%$' "$TMP/stdout"
check "text: communication row by rank and unit" grep -q '^  ncclKernel_SendRecv.*sendrecv *rank 0 .* 25.6% *27.7% *514 µs  none$' "$TMP/stdout"
check "text: no display key" bash -c "! grep -q 'step_ms\|heatmap\|display\"' '$TMP/stdout'"
check "text: --width 80" bash -c "'$PT_BIN' analyze '$DLRM' -q --width 80 >/dev/null && '$PT_BIN' analyze '$DLRM' --width 80 | awk '{ if (length(\$0) >= 90) bad=1 } END { exit bad }'"
"$PT_BIN" analyze "$DLRM" >"$TMP/nopage" 2>"$TMP/nopage.err"
check "text without -o: says no page was written" grep -qx '  Page             none written (add -o DIR for DIR/PerfDisplay/index.html and report.json)' "$TMP/nopage"

# --format json: the seed's text (each section's JSON, then the findings).
"$PT_BIN" analyze "$DLRM" --format json >"$TMP/jstdout" 2>/dev/null
check "--format json: sections in order" bash -c "grep -n '^[A-Za-z].*:\$' '$TMP/jstdout' | cut -d: -f2 | tr '\n' '/' | grep -qx 'GPU Compute/GPU memory operations/Communication/CUDA Runtime/Python functions/Findings/'"
check "--format json: section JSON is the report's" "$PYTHON" -c 'import json, sys
t = open(sys.argv[1]).read(); r = json.load(open(sys.argv[2]))
body = t.split("GPU Compute:\n", 1)[1].split("\n\nGPU memory operations:\n", 1)[0]
sys.exit(json.loads(body) != r["GPU Compute"])' "$TMP/jstdout" "$R"
check "--format json: ends with the findings" bash -c "tail -n 2 '$TMP/jstdout' | head -n 1 | grep -qx 'Findings:'"
check "--json: report.json on stdout" bash -c "'$PT_BIN' analyze '$DLRM' --json 2>/dev/null | cmp - '$R'"
check "diagnose --json too" bash -c "'$PT_BIN' analyze '$DLRM' -q --keep-summaries '$TMP/jsums' && '$PT_BIN' diagnose '$TMP/jsums' --json | cmp - '$R'"
check_fails "--format other" "option '--format': 'xml' is not 'text' or 'json'" "$PT_BIN" analyze "$DLRM" --format xml
check "--format json: names rank 7" grep -q '^1\. rank 7 (worker7_step_12.1694128201553.pt.trace.json) is the worker the others waited for' "$TMP/jstdout"

# Reproducible: any thread count gives the same bytes.
"$PT_BIN" analyze "$DLRM" -o "$TMP/out1" -j1 -q
check "same report with -j1 and -j2" cmp "$TMP/out1/PerfDisplay/report.json" "$R"

# One garbage file among the traces.
mkdir -p "$TMP/mixed/sub"
cp "$DLRM"/*.json "$TMP/mixed/sub/"
printf '{"traceEvents": [ {"ph": "X", garbage' >"$TMP/mixed/bad_rank.json"
"$PT_BIN" analyze "$TMP/mixed" -o "$TMP/mout" >"$TMP/mstdout" 2>"$TMP/mstderr"
rc=$?
M=$TMP/mout/PerfDisplay/report.json
check "garbage among traces: exit 0" test "$rc" -eq 0
check "garbage: one warning line naming the file" bash -c "[ \$(wc -l <'$TMP/mstderr') -eq 1 ] && grep -q \"^perftracker: warning: '.*bad_rank.json': .*(at byte [0-9]*)\" '$TMP/mstderr'"
check "garbage: 9 workers, the bad one with an error" pyjson "$M" 'len(r["workers"]) == 9 and "error" in r["workers"]["bad_rank.json"] and sum("error" in w for w in r["workers"].values()) == 1'
check "garbage: the 8 good workers analysed" pyjson "$M" 'sorted(w["rank"] for w in r["workers"].values() if "error" not in w) == list(range(8))'
check "garbage: a summary finding names it, first" pyjson "$M" 'r["findings"][0]["category"] == "summary" and r["findings"][0]["workers"] == ["bad_rank.json"] and [f["category"] for f in r["findings"]] == ["summary", "Lockstep"]'
check "garbage: sections as without it" "$PYTHON" -c 'import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
sys.exit(any(a[k] != b[k] for k in ("GPU Compute", "GPU memory operations", "Communication", "CUDA Runtime", "Python functions")))' "$R" "$M"
check "garbage: text report names it" grep -q '^  1\. 1 of 9 traces could not be analysed.*bad_rank.json' "$TMP/mstdout"
check "garbage: summary counts it" grep -qx 'PerfTracker report: 8 workers (+1 unreadable), step 10 profiled' "$TMP/mstdout"

# Nothing readable: one-line error, non-zero exit.
mkdir -p "$TMP/allbad"
echo 'not json' >"$TMP/allbad/a.json"
printf '\x1f\x8b\x08\x00garbage' >"$TMP/allbad/b.json.gz"
check_fails "all traces unreadable" "no worker could be analysed" "$PT_BIN" analyze "$TMP/allbad" -o "$TMP/aout"
check "all unreadable: no report written" test ! -e "$TMP/aout/PerfDisplay/report.json"
check_fails "missing path" "'$TMP/nope': No such file or directory" "$PT_BIN" analyze "$TMP/nope" -o "$TMP/x"
mkdir -p "$TMP/empty"
check_fails "folder without traces" "^perftracker: '$TMP/empty': no \*.json, \*.json.gz or \*.sqlite traces found$" "$PT_BIN" analyze "$TMP/empty" -o "$TMP/x"
check "folder without traces: one message" bash -c "[ \$('$PT_BIN' analyze '$TMP/empty' 2>&1 | wc -l) -eq 1 ]"
check_fails "no traces given" "analyze: no traces given" "$PT_BIN" analyze -o "$TMP/x"
check_fails "bad option value" "option '--z'" "$PT_BIN" analyze "$DLRM" --z abc
check_fails "unknown option" "unknown option '--frobnicate'" "$PT_BIN" analyze "$DLRM" --frobnicate
check "analyze --help" bash -c "'$PT_BIN' analyze --help | grep -q -- '--keep-summaries'"
check "diagnose --help lists every threshold" bash -c "'$PT_BIN' diagnose --help | grep -c -- '--z \|--rel \|--min-impact \|--memop-threshold \|--runtime-threshold \|--python-threshold \|--top-kernels \|--fixed-only' | grep -qx 8"

# The output folder inside the input folder is not read back as traces.
mkdir -p "$TMP/self"
cp "$DLRM"/*.json "$TMP/self/"
"$PT_BIN" analyze "$TMP/self" -o "$TMP/self" -q
check "re-analyze with output inside the input" bash -c "'$PT_BIN' analyze '$TMP/self' -o '$TMP/self' -q 2>&1 | wc -c | grep -qx 0"
check "re-analyze: still 8 workers" pyjson "$TMP/self/PerfDisplay/report.json" 'len(r["workers"]) == 8'

# Kept summaries diagnosed again: the same report.
check "analyze --keep-summaries" "$PT_BIN" analyze "$DLRM" -o "$TMP/kout" --keep-summaries "$TMP/sums" -q
check "8 summaries kept" bash -c "[ \$(ls '$TMP/sums'/*.summary.json | wc -l) -eq 8 ]"
check "diagnose the kept summaries" "$PT_BIN" diagnose "$TMP/sums"/*.summary.json -o "$TMP/dout" -q
check "diagnose gives the analyze report" cmp "$TMP/dout/PerfDisplay/report.json" "$TMP/kout/PerfDisplay/report.json"
check "diagnose a folder of summaries" "$PT_BIN" diagnose "$TMP/sums" -o "$TMP/dout2" -q
check "folder gives the same report" cmp "$TMP/dout2/PerfDisplay/report.json" "$TMP/kout/PerfDisplay/report.json"
cp "$TMP/sums"/*.summary.json "$TMP/"
echo '{"format": "perftracker-summary", "version": 1, "worker": ' >"$TMP/broken.summary.json"
"$PT_BIN" diagnose "$TMP"/*.summary.json -o "$TMP/bout" -q 2>"$TMP/berr"
check "diagnose with a broken summary: exit 0" test $? -eq 0
check "broken summary: one warning naming it" bash -c "[ \$(wc -l <'$TMP/berr') -eq 1 ] && grep -q \"warning: '.*broken.summary.json'\" '$TMP/berr'"
check "broken summary: listed with an error" pyjson "$TMP/bout/PerfDisplay/report.json" '"error" in r["workers"]["broken.summary.json"] and len(r["workers"]) == 9'
check_fails "diagnose without summaries" "no summary files" "$PT_BIN" diagnose -o "$TMP/x"
check_fails "diagnose: only broken summaries" "no worker could be analysed" "$PT_BIN" diagnose "$TMP/broken.summary.json" -o "$TMP/x"

# index.html is the PerfDisplay page with the report embedded, self-contained.
P=$TMP/out/PerfDisplay/index.html
check "index.html is the PerfDisplay page" grep -q '<script type="application/json" id="pt-report">{"GPU Compute":' "$P"
check "index.html: the report embedded once" bash -c "[ \$(grep -o '<script type=\"application/json\" id=\"pt-report\">' '$P' | wc -l) -eq 1 ]"
check "index.html: the embedded report is report.json" "$PYTHON" -c 'import json, sys, re
t = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r"<script type=\"application/json\" id=\"pt-report\">(.*?)</script>", t, re.S)
sys.exit(json.loads(m.group(1)) != json.load(open(sys.argv[2])))' "$P" "$R"
check "index.html: no external URL in src or href" bash -c "! grep -qiE '(src|href)[[:space:]]*=[[:space:]]*[\"'\'']?[[:space:]]*(https?:)?//' '$P'"
check "index.html: no external stylesheet or script" bash -c "! grep -qiE '<link[^>]*stylesheet|<script[^>]*src=' '$P'"
check "index.html: the content security policy forbids the network" grep -q "default-src 'none'" "$P"
check "app.py is the page's server" grep -q 'http.server' "$TMP/out/PerfDisplay/app.py"
check "display --rebuild gives the same page" bash -c "cp -r '$TMP/out' '$TMP/rb' && '$PT_BIN' display '$TMP/rb' --rebuild --no-serve && cmp '$TMP/rb/PerfDisplay/index.html' '$P' && cmp '$TMP/rb/PerfDisplay/app.py' '$TMP/out/PerfDisplay/app.py'"
check "diagnose writes the same page" cmp "$TMP/dout/PerfDisplay/index.html" "$TMP/kout/PerfDisplay/index.html"
