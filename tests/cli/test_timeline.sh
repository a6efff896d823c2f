#!/bin/bash
# PerfDisplay/timeline.json.gz and report.json's "timeline" key
# (docs/display.md "The timeline") on real data: the 8-rank DLRM traces
# (rank 7 the straggler) and demo summaries (rank 2).  The file passes an
# independent structural check (tests/tools/timeline_check.py), shows the
# straggler's late spans with every peer's wait ending at the same instant
# and the finding as a slice, and reads back through our own reader
# (`summarize --pid`): the same collective instances, and diagnosing the
# read-back summaries gives the same waits and straggler.  `perftracker
# timeline` writes the same file again, with raw events within the bound.
. "$(dirname "$0")/lib.sh"

DLRM=$PT_DATA/dlrm
CHK=$PT_ROOT/tests/tools/timeline_check.py
W7=worker7_step_12.1694128201553.pt.trace.json
W0=worker0_step_12.1694128201545.pt.trace.json

# tq FILE EXPR: a Python expression over d (the timeline document), X (its
# slices), T (thread names by (pid, tid)), P (process names by pid).
tq() {
	"$PYTHON" -c 'import gzip, json, sys
d = json.load(gzip.open(sys.argv[1], "rt"))
X = [e for e in d["traceEvents"] if e["ph"] == "X"]
T = {(e["pid"], e["tid"]): e["args"]["name"] for e in d["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
P = {e["pid"]: e["args"]["name"] for e in d["traceEvents"] if e["ph"] == "M" and e["name"] == "process_name"}
on = lambda prefix: [e for e in X if T.get((e["pid"], e["tid"]), "").startswith(prefix)]
if not eval(sys.argv[2]):
    print("false:", sys.argv[2]); sys.exit(1)' "$@"
}
# rq REPORT EXPR: over r (report.json), t (its "timeline"), W (workers by rank).
rq() {
	"$PYTHON" -c 'import json, sys
r = json.load(open(sys.argv[1])); t = r.get("timeline", {})
W = {w["rank"]: w for w in t.get("workers", [])}
if not eval(sys.argv[2]):
    print("false:", sys.argv[2]); print(json.dumps(t)[:1500]); sys.exit(1)' "$@"
}

# --- DLRM: analyze writes it --------------------------------------------------
"$PT_BIN" analyze "$DLRM" -o "$TMP/a" -q --keep-summaries "$TMP/ks" 2>"$TMP/a.err"
F=$TMP/a/PerfDisplay/timeline.json.gz
R=$TMP/a/PerfDisplay/report.json
check "dlrm: analyze writes timeline.json.gz" test -s "$F"
check "dlrm: the file passes the structural check" "$PYTHON" "$CHK" structure "$F"
check "dlrm: one process per rank, named, sorted by rank, and the findings" tq "$F" \
	'sorted(P.values()) == ["PerfTracker findings"] + ["rank %d" % i for i in range(8)] and [e["args"]["sort_index"] for e in d["traceEvents"] if e["ph"] == "M" and e["name"] == "process_sort_index" and e["pid"] != 1000000000] == list(range(8))'
# rank 7 arrived last at 5 of the 8 collectives (tests/cli/test_lockstep.sh);
# at the 5th, 2 peers came within 50 us of it (no wait drawn)
"$PYTHON" "$CHK" marks "$F" 7 >"$TMP/marks7"
check "dlrm: rank 7's 5 late arrivals, every peer's wait ending at the same instant" \
	bash -c "test \$(wc -l <'$TMP/marks7') = 5 && test \$(grep -c '7 waits, 7 end at its arrival' '$TMP/marks7') = 4 && grep -q '5 waits, 5 end at its arrival' '$TMP/marks7'"
check "dlrm: rank 7 has the most late time" tq "$F" \
	'max({p: sum(e["dur"] for e in on("lockstep: late") if e["pid"] == p) for p in P}.items(), key=lambda kv: kv[1])[0] == [p for p in P if P[p] == "rank 7"][0]'
check "dlrm: the straggler finding is a slice with its sentence, category, confidence" tq "$F" \
	'any(e["cat"] == "finding" and e["args"]["category"] == "Lockstep" and e["args"]["workers"] == ["'$W7'"] and "waited" in e["args"]["sentence"] and e["args"]["confidence"] in ("strong", "moderate", "weak") for e in X)'
check "dlrm: the critical path runs through the last arrivers as flows" tq "$F" \
	'sum(1 for e in d["traceEvents"] if e["ph"] == "s") == sum(1 for e in d["traceEvents"] if e["ph"] == "f") >= 4'
check "dlrm: steps, spans of the main thread and GPU compute per rank" tq "$F" \
	'len(on("steps")) == 8 and {e["name"] for e in on("main thread")} >= {"## forward ##", "## backward ##", "## optimizer ##"} and len(on("GPU compute")) >= 8 * 10'
check "dlrm: report.json's timeline key: rank 7 the straggler, 5 late, peers wait" rq "$R" \
	'W[7]["straggler"] and len(W[7]["late"]) == 15 and all(len(W[k]["wait"]) >= 3 for k in range(7)) and t["kept"] == "all 1 step" and len(t["instances"]) == 4 * 8'
check "dlrm: arrays of numbers are on one line" bash -c "grep -q '\"coll\": \[0,' '$R'"

# --- read back through our reader ------------------------------------------------
mkdir -p "$TMP/rb"
for r in 0 1 2 3 4 5 6 7; do
	ln -s "$F" "$TMP/rb/tl_${r}_1.json.gz"
	"$PT_BIN" summarize --pid $((r + 1)) "$TMP/rb/tl_${r}_1.json.gz" -o "$TMP/rb/tl_${r}_1.json" 2>>"$TMP/rb.err"
done
rm -f "$TMP"/rb/*.gz
check "read back: every rank's collective instances, names and durations as analysed" "$PYTHON" -c '
import json, sys, glob
ks = sorted(glob.glob(sys.argv[1] + "/*.json")); rb = sorted(glob.glob(sys.argv[2] + "/*.json"), key=lambda p: int(p.split("_")[-2]))
assert len(ks) == len(rb) == 8, (len(ks), len(rb))
def inst(p):
    c = json.load(open(p))["collectives"]; n = c["names"]
    return [(n[i[1]], round(i[3] - i[2], 3)) for i in [c["instances"][k:k + 4] for k in range(0, len(c["instances"]), 4)]]
ks = sorted(ks, key=lambda p: int(json.load(open(p))["rank"]))
for a, b in zip(ks, rb):
    x, y = inst(a), inst(b)
    assert len(x) == len(y) and [n for n, _ in x] == [n for n, _ in y], (a, len(x), len(y))
    assert all(abs(u - v) <= 0.002 for (_, u), (_, v) in zip(x, y)), (a, x, y)
' "$TMP/ks" "$TMP/rb"
"$PT_BIN" diagnose "$TMP/rb" -o "$TMP/rbd" -q 2>/dev/null
check "read back: the same waits and the same straggler, clocks already aligned" "$PYTHON" -c '
import json, sys
a = json.load(open(sys.argv[1]))["Lockstep"]; b = json.load(open(sys.argv[2]))["Lockstep"]
wa = {w["rank"]: w for w in a["workers"].values()}; wb = {w["rank"]: w for w in b["workers"].values()}
assert sorted(wa) == sorted(wb) == list(range(8))
for k in wa:
    assert abs(wa[k]["waited for others (ms)"] - wb[k]["waited for others (ms)"]) <= 0.002, k
    assert wa[k]["straggler"] == wb[k]["straggler"] and abs(wb[k]["clock offset (us)"]) < 0.01, k
assert [s["rank"] for s in a["stragglers"]] == [s["rank"] for s in b["stragglers"]] == [7]
' "$R" "$TMP/rbd/PerfDisplay/report.json"

# --- perftracker timeline, raw events, the bound ---------------------------------
mkdir -p "$TMP/t1"
check "timeline: from traces, the same file as analyze's" bash -c \
	"\"$PT_BIN\" timeline \"$TMP/t1\" \"$DLRM\" --no-raw -q && cmp \"$TMP/t1/PerfDisplay/timeline.json.gz\" \"$F\""
check "timeline: with raw events, bounded to 4,000 over 8 ranks" bash -c \
	"\"$PT_BIN\" timeline \"$TMP/t1\" \"$DLRM\" --max-raw-events 4000 -q && \"$PYTHON\" \"$CHK\" structure \"$TMP/t1/PerfDisplay/timeline.json.gz\""
check "timeline: raw slices within the bound, short ones merged" tq "$TMP/t1/PerfDisplay/timeline.json.gz" \
	'3000 < len([e for e in X if e["cat"].startswith("raw ")]) <= 4000 and any(e["cat"] == "raw merged" for e in X) and len({(e["pid"], e["tid"]) for e in X if e["tid"] >= 10000}) >= 8 * 3'
check "analyze --timeline-raw: the traces' own events, structure kept" bash -c \
	"\"$PT_BIN\" analyze \"$DLRM\" -o \"$TMP/a2\" -q --timeline-raw && \"$PYTHON\" \"$CHK\" structure \"$TMP/a2/PerfDisplay/timeline.json.gz\""
# --max-raw-mb: the finding's worker first (rank 7), then the reference (rank
# 0); each DLRM trace is 0.9-1.0 MB
"$PT_BIN" analyze "$DLRM" -o "$TMP/mb1" -q --timeline-raw --max-raw-mb 1 2>"$TMP/mb1.err"
check "--max-raw-mb 1: rank 7's raw events only, the finding names it" tq "$TMP/mb1/PerfDisplay/timeline.json.gz" \
	'{P[e["pid"]] for e in X if e["cat"].startswith("raw")} == {"rank 7"}'
check "--max-raw-mb 1: one line says what was left out and how to add it" grep -q \
	"the timeline has the raw events of 1 of 8 traces (1 of 7 MB, the workers the findings name first); 'perftracker timeline $TMP/mb1 --max-raw-mb 0' adds the others" "$TMP/mb1.err"
"$PT_BIN" analyze "$DLRM" -o "$TMP/mb2" -q --timeline-raw --max-raw-mb 2 2>/dev/null
check "--max-raw-mb 2: then the reference worker, rank 0" tq "$TMP/mb2/PerfDisplay/timeline.json.gz" \
	'{P[e["pid"]] for e in X if e["cat"].startswith("raw")} == {"rank 0", "rank 7"}'
check "--max-raw-mb 0: every trace, no line" bash -c \
	"\"$PT_BIN\" analyze \"$DLRM\" -o \"$TMP/mb0\" -q --timeline-raw --max-raw-mb 0 2>\"$TMP/mb0.err\" && ! grep -q 'raw events of' \"$TMP/mb0.err\" && cmp \"$TMP/mb0/PerfDisplay/timeline.json.gz\" \"$TMP/a2/PerfDisplay/timeline.json.gz\""
check "analyze --no-timeline writes none" bash -c \
	"\"$PT_BIN\" analyze \"$DLRM\" -o \"$TMP/a3\" -q --no-timeline && test -s \"$TMP/a3/PerfDisplay/report.json\" && ! test -e \"$TMP/a3/PerfDisplay/timeline.json.gz\""
# a trigger's run folder: summaries/ and raw_trace/
mkdir -p "$TMP/run/summaries" "$TMP/run/raw_trace"
cp "$TMP"/ks/*.json "$TMP/run/summaries/"
cp "$DLRM/$W7" "$TMP/run/raw_trace/"
check "timeline RUN_DIR: summaries/ and raw_trace/ (one rank's events)" bash -c \
	"\"$PT_BIN\" timeline \"$TMP/run\" -q && \"$PYTHON\" \"$CHK\" structure \"$TMP/run/PerfDisplay/timeline.json.gz\""
check "timeline RUN_DIR: the raw events are rank 7's only" tq "$TMP/run/PerfDisplay/timeline.json.gz" \
	'{P[e["pid"]] for e in X if e["cat"].startswith("raw")} == {"rank 7"}'

# --- the demo: rank 2 came last ----------------------------------------------------
"$PT_BIN" diagnose "$PT_DATA/demo_runs/a" -o "$TMP/demo" -q 2>/dev/null
check "demo: rank 2's late spans and its peers' waits at the same instants" bash -c \
	"\"$PYTHON\" \"$CHK\" structure \"$TMP/demo/PerfDisplay/timeline.json.gz\" >/dev/null && \"$PYTHON\" \"$CHK\" marks \"$TMP/demo/PerfDisplay/timeline.json.gz\" 2 | grep -q '3 waits, 3 end at its arrival'"

# --- one worker, errors ----------------------------------------------------------------
"$PT_BIN" analyze "$DLRM/worker0_step_12.1694128201545.pt.trace.json" -o "$TMP/one" -q 2>/dev/null
check "one worker: a timeline, not aligned, no waits" tq "$TMP/one/PerfDisplay/timeline.json.gz" \
	'list(P.values()) == ["PerfTracker findings", "rank 0, not aligned"] and not on("lockstep")'
check_fails "timeline: a missing folder is one error" "'$TMP/nope': not a folder" "$PT_BIN" timeline "$TMP/nope"
mkdir -p "$TMP/empty"
check_fails "timeline: a folder without summaries or traces" "no summaries/ folder and no trace given" "$PT_BIN" timeline "$TMP/empty"
# cut off, under rank 0's file name (a trace that names no worker is not read)
mkdir -p "$TMP/bad"
printf '{"traceEvents":[{"ph":"X"' >"$TMP/bad/$W0"
printf '{"traceEvents":[{"ph":"X"' >"$TMP/bad/no_worker.json"
check "timeline: a bad raw trace is a warning, the rest goes on" bash -c \
	"\"$PT_BIN\" timeline \"$TMP/run\" \"$TMP/bad\" -q 2>\"$TMP/w.err\"; grep -q \"/$W0' left out of the timeline\" \"$TMP/w.err\" && ! grep -q no_worker \"$TMP/w.err\" && test -s \"$TMP/run/PerfDisplay/timeline.json.gz\""
check_fails "summarize --pid on an nsys export is refused" "not an Nsight Systems export" \
	"$PT_BIN" summarize --pid 1 "$(ls "$PT_DATA"/*/*.sqlite 2>/dev/null | head -1 || echo /dev/null)"
# a timeline that cannot be written costs the report nothing
mkdir -p "$TMP/blocked/PerfDisplay/timeline.json.gz"
"$PT_BIN" analyze "$DLRM" -o "$TMP/blocked" -q 2>"$TMP/blocked.err"
rc=$?
[ $rc -eq 0 ] && grep -q "warning: the timeline was not written: .*timeline.json.gz" "$TMP/blocked.err" &&
	test -s "$TMP/blocked/PerfDisplay/report.json" && ok "an unwritable timeline is a warning, the report is written" ||
	{ not_ok "an unwritable timeline is a warning, the report is written" "rc $rc"; sed 's/^/# /' "$TMP/blocked.err"; }
echo "1..$_n"
