#!/bin/bash
# report_diff.sh - behaviour kept: run two perftracker binaries (before and
# after a change) on every real trace in tests/data and shared/traces and
# diff what they say: report.json (keys sorted, run-dependent values blanked)
# and the text report, for analyze (each trace folder), diagnose (each folder
# of summaries), compare (the real pairs) and hang-check (a fixed control
# directory).  Exit 0 when both say the same, 1 with a unified diff when not.
# Then the after side's reports are checked for contradictions
# (tests/tools/check_report.py), said on a "check_report:" line.
#
#   tests/tools/report_diff.sh BEFORE_BIN AFTER_BIN [OUT_DIR]
#
# Build BEFORE_BIN from the revision to compare against, e.g.
#   git worktree add /tmp/base HEAD~ && make -C /tmp/base build/perftracker
set -u
[ $# -ge 2 ] || { echo "usage: $0 BEFORE_BIN AFTER_BIN [OUT_DIR]" >&2; exit 2; }
BEFORE=$(readlink -f "$1") AFTER=$(readlink -f "$2")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${3:-$(mktemp -d /tmp/report_diff.XXXXXX)}
PY=${PYTHON:-python3}
SHARED=${SHARED:-$ROOT/../shared/traces}
# In a worktree beside the main checkout: the shared folder beside that one.
[ -d "$SHARED" ] || SHARED=$(cd "$(git -C "$ROOT" rev-parse --git-common-dir)/../.." 2>/dev/null && pwd)/shared/traces
mkdir -p "$OUT"

# Every folder that directly holds traces, in both trees.
cases() {
	for top in "$ROOT/tests/data" "$SHARED"; do
		[ -d "$top" ] || continue
		find "$top" -type f \( -name '*.json' -o -name '*.json.gz' -o -name '*.sqlite' \) \
			! -name '*.summary.json' ! -path '*/_history/*' -printf '%h\n'
	done | sort -u
}

# Blank what changes from run to run (times, paths, versions), sort keys.
norm_json() {
	"$PY" - "$1" <<'EOF'
import json, re, sys
VOL = re.compile(r"(time|seconds|elapsed|took|generated|created|version|path|dir|file|host_time)", re.I)
def walk(x, k=""):
    if isinstance(x, dict) and x.get("category") == "Hang":
        # a hang's numbers are its seconds without a step: the clock's
        x = {a: ("-" if a in ("value", "others", "impact (ms)") else b) for a, b in x.items()}
        if isinstance(x.get("metrics"), list):
            x["metrics"] = [dict(m, value="-") if isinstance(m, dict) and m.get("unit") == "s"
                            else m for m in x["metrics"]]
    if isinstance(x, dict):
        return {a: ("-" if VOL.search(a) and not isinstance(b, (dict, list)) else walk(b, a))
                for a, b in x.items()}
    if isinstance(x, list):
        return [walk(v, k) for v in x]
    if isinstance(x, str):
        x = re.sub(r"/(tmp|work)/[^\s\"',)]*", "<path>", x)
        return re.sub(r"[0-9.]+ ?s\b", "<s>", x)
    return x
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("unreadable: %s" % e)
    sys.exit(0)
print(json.dumps(walk(d), indent=1, sort_keys=True))
EOF
}

norm_text() {
	sed -E 's#/(tmp|work)/[^ "'"'"',)]*#<path>#g; s/[0-9.]+ ?s\b/<s>/g' "$1"
}

# run NAME BIN SIDE ARGS...: one command, its report and text into OUT/NAME/SIDE.
run() {
	local name=$1 bin=$2 side=$3
	shift 3
	local d=$OUT/$name/$side w=$OUT/$name/w
	# Both sides run in the same folder: paths in the output agree.
	rm -rf "$d" "$w"
	mkdir -p "$w"
	(cd "$w" && "$bin" "$@" -o "$w/run" >"$w/stdout" 2>"$w/stderr"; echo "exit $?" >"$w/rc")
	mv "$w" "$d"
	norm_text "$d/stdout" >"$d/text.txt"
	norm_text "$d/stderr" >"$d/err.txt"
	if [ -f "$d/run/PerfDisplay/report.json" ]; then
		norm_json "$d/run/PerfDisplay/report.json" >"$d/report.txt"
	else
		: >"$d/report.txt"
	fi
	: >"$d/timeline.txt"
	if [ -f "$d/run/PerfDisplay/timeline.json.gz" ]; then
		gzip -dc "$d/run/PerfDisplay/timeline.json.gz" >"$d/timeline.json"
		norm_json "$d/timeline.json" >"$d/timeline.txt"
	fi
}

both() { # NAME ARGS...
	local name=$1
	shift
	run "$name" "$BEFORE" before "$@"
	run "$name" "$AFTER" after "$@"
}

n=0
while read -r dir; do
	name=$(echo "${dir#"$ROOT"/}" | sed 's#^\.\./##; s#[/ ]#_#g')
	both "analyze_$name" analyze "$dir" --no-timeline -j 1
	n=$((n + 1))
done < <(cases)
for dir in "$ROOT"/tests/data/demo_*; do
	ls "$dir"/*.summary.json >/dev/null 2>&1 || continue
	both "diagnose_$(basename "$dir")" diagnose "$dir"/*.summary.json --no-timeline
	n=$((n + 1))
done
# The timeline too, where findings and collectives mark it.
both timeline_dlrm analyze "$ROOT/tests/data/dlrm" -j 1
both timeline_torch2_gloo_fr analyze "$ROOT/tests/data/torch2_gloo_fr" -j 1
n=$((n + 2))
R=$ROOT/tests/data/demo_runs
both compare_demo_a_b compare "$R/a" "$R/b"
both compare_demo_a_c compare "$R/a" "$R/c"
H=$ROOT/tests/data/HolisticTraceAnalysis/tests/data
both compare_hta_control_filter compare "$H/trace_diff/control" "$H/trace_filter"
n=$((n + 3))

# hang-check on a control directory written by hand: three live `sleep`
# processes as workers, no step for 100 s, one in stuck_here, two in
# all_reduce (their automatic dumps; a sleep answers no request).
C=$OUT/.hang_control
rm -rf "$C"
sleep 300 & P0=$!
sleep 300 & P1=$!
sleep 300 & P2=$!
"$PY" - "$C" $P0 $P1 $P2 <<'EOF'
import json, os, socket, sys, time
c, pids = sys.argv[1], [int(x) for x in sys.argv[2:]]
now = time.time()
for sub in ("workers", "heartbeats", "stacks"):
    os.makedirs(os.path.join(c, sub), exist_ok=True)
for r, pid in enumerate(pids):
    wid = "h_%d" % r
    with open(os.path.join(c, "workers", wid + ".json"), "w") as f:
        json.dump({"format": "perftracker-worker", "version": 1, "id": wid, "host": "h",
                   "node": socket.gethostname(), "rank": r, "local_rank": r, "world_size": 3,
                   "local_world_size": 3, "pid": pid, "started": now - 600}, f)
    with open(os.path.join(c, "heartbeats", wid + ".json"), "w") as f:
        json.dump({"format": "perftracker-heartbeat", "step": 500, "step_time": now - 100,
                   "time": now - 1, "rate": 10.0, "state": "idle", "trigger": ""}, f)
    fn = "stuck_here" if r == 1 else "all_reduce"
    with open(os.path.join(c, "stacks", wid + ".txt"), "w") as f:
        f.write("format: perftracker-stacks 1\nworker: %s\nhost: h\nrank: %d\npid: %d\n"
                "training_thread: 0x1\nreason: stalled\nrequest: \ntime: %.3f\nstep: 500\n"
                "step_time: %.3f\n\nThread 0x0000000000000001 (most recent call first):\n"
                '  File "/job/train.py", line 57 in %s\n'
                '  File "/job/train.py", line 99 in <module>\n'
                % (wid, r, pid, now - 60, now - 100, fn))
EOF
both hang_check hang-check --control-dir "$C" --hang-timeout 30 --stack-wait 1
kill $P0 $P1 $P2 2>/dev/null
n=$((n + 1))

status=0
for c in "$OUT"/*/; do
	[ -d "$c/before" ] || continue
	for f in rc text.txt err.txt report.txt timeline.txt; do
		if ! diff -q "$c/before/$f" "$c/after/$f" >/dev/null 2>&1; then
			echo "=== $(basename "$c") $f"
			diff -u "$c/before/$f" "$c/after/$f" | head -${DIFF_LINES:-60}
			status=1
		fi
	done
done
# The after side's reports, checked for contradictions (tests/tools/check_report.py:
# "X instead of X" under a strong level, shares above 100%, ...): said, not
# part of the exit status, which is about before against after.
"$PY" "$ROOT/tests/tools/check_report.py" "$OUT"/*/after >"$OUT/check_report.txt" 2>&1
echo "check_report: $(sed 's/: finding .*//' "$OUT/check_report.txt" | sort -u | grep -c .) of the after side's reports with contradictions$([ -s "$OUT/check_report.txt" ] && echo ":" && sed 's/^/  /' "$OUT/check_report.txt" | head -20)"
echo "report_diff: $n cases in $OUT: $([ $status = 0 ] && echo same || echo DIFFERENT)"
exit $status
