#!/bin/bash
# test_summarize.sh - `perftracker summarize TRACE -o SUMMARY.json` end to
# end: output to a file and to stdout, options, the summary JSON (checked
# with Python's json module), worker names, gzip input, truncated traces
# (warning + "truncated": true), one-line errors for bad input, atomic
# output, and that tests/tools/dlrm_reference.txt is still what the
# independent reference script computes.
. "$(dirname "$0")/lib.sh"

DLRM=$PT_DATA/dlrm
T0=$DLRM/worker0_step_12.1694128201545.pt.trace.json
T3=$DLRM/worker3_step_12.1694128201557.pt.trace.json

# json_check FILE PYTHON-EXPR: passes when the expression (over d, the
# parsed file) is true
json_check() {
	"$PYTHON" - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
}

check "help" "$PT_BIN" summarize --help
"$PT_BIN" summarize -h | grep -q -- '--min-python-ratio' && ok "help lists the options" || not_ok "help lists the options"

check "summarize dlrm rank 0" "$PT_BIN" summarize "$T0" -o "$TMP/s0.json"
check "summary is a v4 perftracker summary" json_check "$TMP/s0.json" \
	'd["format"] == "perftracker-summary" and d["version"] == 5 and d["rank"] == 0 and d["world_size"] == 8'
# DLRM rank 0's eight NCCL kernels on stream 84: the first SendRecv starts
# 3121 us into ProfilerStep#10 and runs 2146 us (the trace's own values).
check "collective instances of the NCCL stream" json_check "$TMP/s0.json" \
	'(c := d["collectives"])["channels"] == ["nccl:0"] and len(c["instances"]) == 32 and c["instances"][:4] == [0, 0, 3121.0, 5267.0] and [d_ for d_ in c["names"] if "AllReduce" in d_] and len(c["names"]) == 2'
check "span causes name kept patterns" json_check "$TMP/s0.json" \
	'len(c := d["collectives"]["causes"]) % 3 == 0 and all(0 <= c[i + 1] < len(d["patterns"]) and c[i + 2] > 0 for i in range(0, len(c), 3))'
check "window from the ProfilerStep span" json_check "$TMP/s0.json" \
	'd["window"]["from_steps"] and d["window"]["ms"] == 14.455 and d["steps"] == [{"number": 10, "ms": 14.455}]'
check "gpu_util is the reference's" json_check "$TMP/s0.json" 'abs(d["gpu_util"] - 6571000 / 14455000) < 1e-12'
check "class_ms sums to the window" json_check "$TMP/s0.json" \
	'abs(sum(d["class_ms"].values()) - d["window"]["ms"]) < 1e-9 and set(d["class_ms"]) == {"compute", "communication", "memory", "runtime", "python", "idle"}'
check "every class has patterns" json_check "$TMP/s0.json" \
	'{p["class"] for p in d["patterns"]} == {"compute", "communication", "memory", "runtime", "python"}'
check "patterns sorted by class then bottleneck" json_check "$TMP/s0.json" \
	'[(-["python","runtime","memory","communication","compute"].index(p["class"]), -p["bottleneck"]) for p in d["patterns"]] == sorted((-["python","runtime","memory","communication","compute"].index(p["class"]), -p["bottleneck"]) for p in d["patterns"])'
check "compact: one line" test "$(wc -l < "$TMP/s0.json")" -eq 1

"$PT_BIN" summarize "$T0" -o - > "$TMP/stdout.json" 2>"$TMP/err"
if cmp -s "$TMP/stdout.json" "$TMP/s0.json" && [ ! -s "$TMP/err" ]; then ok "-o - writes the same to stdout"; else not_ok "-o - writes the same to stdout"; fi
"$PT_BIN" summarize "$T0" > "$TMP/default.json"
cmp -s "$TMP/default.json" "$TMP/s0.json" && ok "stdout is the default" || not_ok "stdout is the default"

check "no python stacks with --max-python 0" "$PT_BIN" summarize "$T3" --max-python 0 -o "$TMP/np.json"
check "  none kept" json_check "$TMP/np.json" 'not [p for p in d["patterns"] if p["class"] == "python"]'
check "--max-python=2 --min-python-ratio=0" "$PT_BIN" summarize "$T3" --max-python=2 --min-python-ratio=0 -o "$TMP/p2.json"
check "  two kept" json_check "$TMP/p2.json" 'len([p for p in d["patterns"] if p["class"] == "python"]) == 2'
check "--min-python-ratio 0.05 keeps only big stacks" "$PT_BIN" summarize "$T3" --min-python-ratio 0.05 -o "$TMP/p5.json"
# and user annotations lasting 0.5% of the window, however little they own
check "  all >= 0.05, or annotations lasting 0.5% of the window" json_check "$TMP/p5.json" \
	'all(p["bottleneck"] >= 0.05 or (p["kind"] == "annotation" and p["exec_ratio"] >= 0.005) for p in d["patterns"] if p["class"] == "python") and any(p["class"] == "python" and p["bottleneck"] >= 0.05 for p in d["patterns"])'

# Worker id from the file name; distributedInfo's rank wins over the name's.
cp "$T0" "$TMP/node-a.b_c_5_321.json"
check "host_rank_pid name" "$PT_BIN" summarize "$TMP/node-a.b_c_5_321.json" -o "$TMP/named.json"
check "  host, pid from the name, rank from the trace" json_check "$TMP/named.json" \
	'd["worker"] == "node-a.b_c_5_321.json" and d["host"] == "node-a.b_c" and d["pid"] == 321 and d["rank"] == 0'

gzip -c "$T0" > "$TMP/g_0_1.json.gz"
check "gzip trace" "$PT_BIN" summarize "$TMP/g_0_1.json.gz" -o "$TMP/gz.json"
"$PYTHON" - "$TMP/gz.json" "$TMP/s0.json" <<'PY' && ok "  gzip gives the same patterns" || not_ok "  gzip gives the same patterns"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
sys.exit(0 if a["patterns"] == b["patterns"] and a["gpu_util"] == b["gpu_util"] else 1)
PY

# A trace cut off mid-write: warning, summary written, marked truncated.
head -c 600000 "$T0" > "$TMP/cut.json"
"$PT_BIN" summarize "$TMP/cut.json" -o "$TMP/cut.out.json" 2>"$TMP/cut.err"
rc=$?
if [ $rc -eq 0 ] && grep -q "^perftracker: warning: '.*cut.json'.*truncated" "$TMP/cut.err"; then
	ok "truncated trace: warning, exit 0"
else
	not_ok "truncated trace: warning, exit 0" "rc $rc: $(cat "$TMP/cut.err")"
fi
check "  \"truncated\": true" json_check "$TMP/cut.out.json" 'd["truncated"] is True and d["warning"] and d["patterns"]'

# Bad input: one line naming the file (with the byte offset), exit 1.
printf '{"traceEvents": [ {"ph": "X", "name": "k", ] }' > "$TMP/bad.json"
check_fails "malformed trace" "bad.json.*(at byte [0-9]*)" "$PT_BIN" summarize "$TMP/bad.json" -o "$TMP/bad.out.json"
[ "$(wc -l < "$TMP/.err")" -eq 1 ] && grep -q "^perftracker: .*bad.json" "$TMP/.err" && ok "  one line" || not_ok "  one line" "$(cat "$TMP/.err")"
[ ! -e "$TMP/bad.out.json" ] && ok "  no output written" || not_ok "  no output written"
printf 'hello' > "$TMP/text.json"
check_fails "not json" "text.json" "$PT_BIN" summarize "$TMP/text.json" -o "$TMP/x.json"
check_fails "missing trace" "nope.json" "$PT_BIN" summarize "$TMP/nope.json" -o "$TMP/x.json"
: > "$TMP/empty.json"
check_fails "empty trace" "empty.json" "$PT_BIN" summarize "$TMP/empty.json" -o "$TMP/x.json"
check_fails "unwritable output" "no/such/dir/out.json" "$PT_BIN" summarize "$T0" -o "$TMP/no/such/dir/out.json"
check_fails "no trace argument" "usage: perftracker summarize" "$PT_BIN" summarize
check_fails "two traces" "one trace at a time" "$PT_BIN" summarize "$T0" "$T3"
check_fails "unknown option" "unknown option '--frobnicate'" "$PT_BIN" summarize "$T0" --frobnicate
check_fails "bad --max-python" "max-python.*not a non-negative integer" "$PT_BIN" summarize "$T0" --max-python x
check_fails "bad --min-python-ratio" "min-python-ratio.*not a non-negative number" "$PT_BIN" summarize "$T0" --min-python-ratio -1
check_fails "-o without a value" "needs a value" "$PT_BIN" summarize "$T0" -o

# Output replaced atomically: nothing but the summaries in the directory.
mkdir "$TMP/out"
"$PT_BIN" summarize "$T0" -o "$TMP/out/a.json" && "$PT_BIN" summarize "$T3" -o "$TMP/out/a.json"
# (and the digest beside it, docs/summary.md "Digests", of the second one)
[ "$(ls -A "$TMP/out" | tr '\n' ' ')" = "a.digest a.json " ] && ok "no temporary files left" ||
	not_ok "no temporary files left" "$(ls -A "$TMP/out")"
check "the digest is of the summary beside it" "$PYTHON" -c '
import json, os, sys
d = json.load(open(sys.argv[1] + "/a.digest")); s = json.load(open(sys.argv[1] + "/a.json"))
assert d["digest_of"] == os.path.getsize(sys.argv[1] + "/a.json") and d["worker"] == s["worker"]' "$TMP/out"
check "  replaced by the second" json_check "$TMP/out/a.json" 'd["rank"] == 3'

# The reference numbers the C tests assert are still the script's output.
"$PYTHON" "$PT_ROOT/tests/tools/dlrm_reference.py" "$DLRM"/*.json > "$TMP/ref.txt"
cmp -s "$TMP/ref.txt" "$PT_ROOT/tests/tools/dlrm_reference.txt" && ok "dlrm_reference.txt is up to date" ||
	not_ok "dlrm_reference.txt is up to date" "$(diff "$TMP/ref.txt" "$PT_ROOT/tests/tools/dlrm_reference.txt")"

# -o a named pipe (as /dev/null or /dev/stdout): the summary goes into it,
# the pipe is not replaced by a file (a rename over /dev/null, as root,
# once made it a regular file).
mkfifo "$TMP/out.fifo"
timeout 20 cat "$TMP/out.fifo" >"$TMP/from_fifo.json" &
"$PT_BIN" summarize "$T0" -o "$TMP/out.fifo" 2>"$TMP/fifo.err"
wait
check "-o a named pipe: written into, still a pipe" bash -c "test -p '$TMP/out.fifo' && grep -q '\"format\":\"perftracker-summary\"\|\"format\": \"perftracker-summary\"' '$TMP/from_fifo.json'"
