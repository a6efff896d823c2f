#!/bin/bash
# Collectives matched by what torch records (docs/diagnose.md "Lockstep"):
# tests/data/torch2_gloo_fr, 3 gloo ranks (rank 2 sleeps 80 ms a step) with
# the collector's "perftracker" member (torch version, Flight Recorder
# entries).  The summaries carry each gloo op's process group and seq and its
# bytes, the report says the instances were matched by them and names rank 2,
# the workers' torch version is in report.json and the text report's first
# line; the same summaries without the numbers are matched by position with
# the same result.
. "$(dirname "$0")/lib.sh"

D=$PT_DATA/torch2_gloo_fr

rq() {
	"$PYTHON" -c 'import json, sys
r = json.load(open(sys.argv[1])); L = r.get("Lockstep", {}); F = r["findings"]
S = {s["rank"]: s for s in L.get("stragglers", [])}
W = {w["rank"]: w for w in L.get("workers", {}).values()}
ok = eval(sys.argv[2])
if not ok:
    print("false:", sys.argv[2]); print(json.dumps(L, indent=1)[:3000]); sys.exit(1)' "$@"
}

# sq SUMMARY EXPR: a Python expression over s (the summary)
sq() {
	"$PYTHON" -c 'import json, sys
s = json.load(open(sys.argv[1])); c = s.get("collectives", {})
sys.exit(not eval(sys.argv[2]))' "$@"
}

mkdir -p "$TMP/sum"
for f in "$D"/*.json.gz; do
	"$PT_BIN" summarize "$f" -o "$TMP/sum/$(basename "$f" .json.gz).json" 2>>"$TMP/sum.err"
done
S2=$TMP/sum/vm_2_18243.json
check "summarize: 3 summaries" test -s "$S2" -a -s "$TMP/sum/vm_0_18241.json" -a -s "$TMP/sum/vm_1_18242.json"
check "summary: torch version" sq "$S2" 's["torch"] == "2.15.0+cu132"'
check "summary: 15 gloo ops, process group 0, seq 16-30" sq "$S2" \
	'c["channels"] == ["gloo:0"] and c["pgs"] == ["0"] and c["seq"] == [x for k in range(16, 31) for x in (0, k)]'
check "summary: gloo:all_reduce bytes from the Flight Recorder (median 256), group 3" sq "$S2" \
	'[(p["bytes"], p["group"], p["count"]) for p in s["patterns"] if p["key"] == "gloo:all_reduce"] == [(256, 3, 15)]'

"$PT_BIN" diagnose "$TMP/sum"/*.json -o "$TMP/out" >"$TMP/out.txt" 2>"$TMP/out.err"
R=$TMP/out/PerfDisplay/report.json
check "diagnose: report" test -s "$R"
check "lockstep: matched by process group and sequence number, 15 instances, 3 workers" rq "$R" \
	'L["matched by"] == "process group and sequence number" and L["instances"] == 15 and L["workers matched"] == 3 and "instances left out (ends disagree)" not in L'
check "lockstep: rank 2 the one straggler, 276.549 ms waited for it (138.274 per peer)" rq "$R" \
	'list(S) == [2] and S[2]["others waited for it (ms)"] == 276.549 and S[2]["per peer (ms)"] == 138.274 and S[2]["last arrivals"] == 4'
check "lockstep: waits 205.185 / 124.648 / 9.937 ms" rq "$R" \
	'[W[k]["waited for others (ms)"] for k in (0, 1, 2)] == [205.185, 124.648, 9.937]'
check "findings: rank 2 first, a Lockstep finding" rq "$R" 'F[0]["category"] == "Lockstep" and F[0]["workers"] == ["vm_2_18243.json.gz"]'
check "communication: gloo bus bandwidth from the bytes" rq "$R" \
	'r["Communication"]["gloo allreduce"]["gloo:all_reduce"]["example_of_normal_worker"]["features"]["bus bandwidth (GB/s)"] > 0'
check "workers: torch" rq "$R" 'all(w["torch"] == "2.15.0+cu132" for w in r["workers"].values())'
check "text: the first line names torch 2.15.0" grep -q '^PerfTracker report: 3 workers, steps 3-5 profiled (3 per worker), torch 2.15.0$' "$TMP/out.txt"
check "text: the Lockstep section says how" grep -q '^  matched by: process group and sequence number$' "$TMP/out.txt"

# The same summaries as written before "pgs" and "seq": matched by position,
# the same instances, waits and straggler.
mkdir -p "$TMP/old"
for f in "$TMP/sum"/*.json; do
	"$PYTHON" -c 'import json, sys
s = json.load(open(sys.argv[1])); c = s["collectives"]; del c["pgs"], c["seq"], s["torch"]
json.dump(s, open(sys.argv[2], "w"), separators=(",", ":"))' "$f" "$TMP/old/$(basename "$f")"
done
"$PT_BIN" diagnose "$TMP/old"/*.json -o "$TMP/old.out" -q 2>/dev/null
RO=$TMP/old.out/PerfDisplay/report.json
check "old summaries: matched by position, 15 instances" rq "$RO" 'L["matched by"] == "position" and L["instances"] == 15'
check "old summaries: the same waits and straggler" "$PYTHON" -c 'import json, sys
a, b = (json.load(open(p))["Lockstep"] for p in sys.argv[1:3])
k = ("waited for others (ms)", "others waited for it (ms)", "last arrivals", "straggler")
sys.exit(any(a["workers"][w][x] != b["workers"][w][x] for w in a["workers"] for x in k))' "$R" "$RO"
check "old summaries: no torch in workers" rq "$RO" 'all("torch" not in w for w in r["workers"].values())'

# Two process groups (tests/data/torch2_gloo_fr_2pg: the loss scalar on a
# second group with its own gloo threads): each op gets its group's numbers.
D2=$PT_DATA/torch2_gloo_fr_2pg
"$PT_BIN" summarize "$D2/vm_0_24681.json.gz" -o "$TMP/pg2.json" 2>/dev/null
check "2 groups: pgs 0 and 1, seq 13-24 and 4-6 in start order" sq "$TMP/pg2.json" \
	'c["pgs"] == ["0", "1"] and c["seq"] == [0, 13, 0, 14, 0, 15, 0, 16, 1, 4, 0, 17, 0, 18, 0, 19, 0, 20, 1, 5, 0, 21, 0, 22, 0, 23, 0, 24, 1, 6]'
"$PT_BIN" analyze "$D2" -o "$TMP/pg2.out" -q 2>/dev/null
R2=$TMP/pg2.out/PerfDisplay/report.json
check "2 groups: matched by seq, 15 instances, rank 2 the straggler (256.948 ms)" rq "$R2" \
	'L["matched by"] == "process group and sequence number" and L["instances"] == 15 and list(S) == [2] and S[2]["others waited for it (ms)"] == 256.948'

echo "1..$_n"
