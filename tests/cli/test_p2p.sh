#!/bin/bash
# Point to point (docs/diagnose.md "Point to point"): tests/data/p2p_gloo4, a
# real 4-rank gloo run of send/recv, isend/irecv and all_to_all_single (3
# steps, 4 MiB messages), and p2p_gloo4_slow2, the same with every transfer
# into rank 2 3x slower (tests/tools/plant_p2p.py).  The summaries carry
# each peer's transfers (peer from c10d's "Concrete Inputs", bytes from
# gloo's "Input Dims"), report.json's "p2p" has one row per pair with the
# exact counts and bytes the run fixes, the planted run's one finding names
# destination rank 2 with its bandwidth against the others', a slow source and a
# slow pair planted the same way are named as such, and one slow link among
# the eight ranks of tests/data/p2p_gloo8 alone; the real runs have
# none, --p2p-slow moves the threshold, and summaries of version 4
# (no "p2p") still load.
. "$(dirname "$0")/lib.sh"

R=$PT_DATA/p2p_gloo4
P=$PT_DATA/p2p_gloo4_slow2

# q REPORT EXPR: a Python expression over r (report.json), p (its "p2p"
# rows by (source, destination)) and F (the p2p findings)
q() {
	"$PYTHON" -c 'import json, sys
r = json.load(open(sys.argv[1]))
p = {(x["source"], x["destination"]): x for x in r.get("p2p", {}).values()}
assert all(k == "%d->%d" % (x["source"], x["destination"]) for k, x in r.get("p2p", {}).items())
F = [f for f in r["findings"] if f.get("cause") == "slow p2p"]
ok = eval(sys.argv[2])
if not ok:
    print("false:", sys.argv[2]); print(json.dumps(r.get("p2p"), indent=1)[:2000])
    print(json.dumps(F, indent=1)[:2000]); sys.exit(1)' "$@"
}

"$PT_BIN" summarize "$R/rank2.json.gz" -o "$TMP/s2.json" 2>"$TMP/sum.err"
check "summary: version 5 with p2p rows" "$PYTHON" -c 'import json, sys
s = json.load(open(sys.argv[1])); rows = {(x["peer"], x["dir"]): x for x in s["p2p"]}
assert s["version"] == 5, s["version"]
assert sorted(rows) == [(0, "recv"), (0, "send"), (1, "recv"), (1, "send"), (3, "recv"), (3, "send")], rows
# the ring: rank 2 receives from 1 and sends to 3 twice a step (ring + all-pairs)
assert rows[(1, "recv")]["count"] == 6 and rows[(1, "recv")]["bytes"] == 25165824, rows[(1, "recv")]
assert rows[(3, "send")]["count"] == 6 and rows[(3, "send")]["bytes"] == 25165824
assert rows[(0, "send")]["count"] == 3 and rows[(0, "send")]["bytes"] == 12582912
assert all(x["nbytes"] == x["count"] and 0 < x["wall_ms"] <= x["ms_bytes"] + 1e-6 for x in rows.values())
' "$TMP/s2.json"
check "summary: sends and receives are no lockstep instances" "$PYTHON" -c 'import json, sys
s = json.load(open(sys.argv[1])); names = s["collectives"]["names"]
assert names == ["gloo:all_to_all"], names' "$TMP/s2.json"

"$PT_BIN" analyze "$R" -o "$TMP/real" >"$TMP/real.txt" 2>&1
check "real run: analyze exits 0" test -s "$TMP/real/PerfDisplay/report.json"
check "real run: 12 pairs, ring pairs 6 transfers of 25165824 bytes, the others 3 of 12582912" q \
	"$TMP/real/PerfDisplay/report.json" 'len(p) == 12 and all(
	(x["count"], x["bytes"]) == ((6, 25165824) if (s + 1) % 4 == d else (3, 12582912))
	for (s, d), x in p.items())'
check "real run: bandwidth is bytes over time, no pair slow" q "$TMP/real/PerfDisplay/report.json" \
	'all(abs(x["bandwidth (GB/s)"] - x["bytes"] / x["time (ms)"] / 1e6) < 1e-9 and not x["slow"]
	and x["time from"] in ("send", "recv") for x in p.values())'
check "real run: no p2p finding" q "$TMP/real/PerfDisplay/report.json" 'F == []'

"$PT_BIN" analyze "$P" -o "$TMP/slow" >"$TMP/slow.txt" 2>&1
J=$TMP/slow/PerfDisplay/report.json
check "planted: one p2p finding, destination rank 2, first" q "$J" \
	'len(F) == 1 and F[0] is r["findings"][0] and F[0]["labels"] == ["rank 2"] and F[0]["function"] == "p2p into 2"'
check "planted: 0.203 GB/s into rank 2 against 0.776 for the others, 3.83x, 12 transfers, 50331648 bytes" q "$J" \
	'[(m["name"], round(m["value"], 3) if m["unit"] != "count" else m["value"], m["unit"]) for m in F[0]["metrics"][:5]] == [
	("bandwidth (GB/s)", 0.203, "GB/s"), ("others", 0.776, "GB/s"), ("slower (x)", 3.831, "x"),
	("transfers", 12, "count"), ("bytes", 50331648.0, "bytes")]'
check "planted: strong, graded against the other destinations" q "$J" \
	'F[0]["confidence"]["level"] == "strong" and F[0]["confidence"]["evidence"].endswith("3.8x slower than the other destinations (median)")'
check "planted: the pairs into rank 2 are marked slow, the others not" q "$J" \
	'all(x["slow"] == (d == 2) for (s, d), x in p.items()) and (p[(1, 2)]["count"], p[(1, 2)]["bytes"]) == (6, 25165824)'
check "planted: every pair into rank 2 is slower than every other pair" q "$J" \
	'max(x["bandwidth (GB/s)"] for (s, d), x in p.items() if d == 2) < min(x["bandwidth (GB/s)"] for (s, d), x in p.items() if d != 2)'
check "planted: the text report names the destination and both bandwidths" grep -q \
	"transfers into rank 2 run at 0.203 GB/s against 0.776 GB/s for the other destinations (median): 3.83x slower; 12" \
	"$TMP/slow.txt"

"$PT_BIN" analyze "$P" -o "$TMP/slow5" --p2p-slow 5 >/dev/null 2>&1
check "--p2p-slow 5: 3.83x is no finding" q "$TMP/slow5/PerfDisplay/report.json" 'F == [] and not any(x["slow"] for x in p.values())'

# an old summary (version 4, no "p2p") loads: the same summary without the member
"$PYTHON" -c 'import json, sys
s = json.load(open(sys.argv[1])); s["version"] = 4; del s["p2p"]
json.dump(s, open(sys.argv[2], "w"))' "$TMP/s2.json" "$TMP/old.json"
check "a version-4 summary without p2p diagnoses" "$PT_BIN" diagnose "$TMP/old.json" -o "$TMP/old"
check "bad p2p member: a one-line error naming the file" bash -c '
"$1" -c "import json, sys
s = json.load(open(sys.argv[1])); s[\"p2p\"] = [{\"peer\": -1, \"dir\": \"send\"}]
json.dump(s, open(sys.argv[2], \"w\"))" "$2" "$3/bad.json"
! "$4" diagnose "$3/bad.json" -o "$3/bad" 2>"$3/bad.err" && grep -q "bad.json" "$3/bad.err" && grep -q "p2p" "$3/bad.err"' \
	_ "$PYTHON" "$TMP/s2.json" "$TMP" "$PT_BIN"

# the other planted variants, made here from the real run by the same script:
# a slow source (every transfer out of rank 1) and one slow pair (3 -> 1)
"$PYTHON" "$PT_ROOT/tests/tools/plant_p2p.py" "$R" "$TMP/src1" --src 1 >/dev/null
"$PYTHON" "$PT_ROOT/tests/tools/plant_p2p.py" "$R" "$TMP/pair31" --src 3 --dst 1 >/dev/null
"$PT_BIN" analyze "$TMP/src1" -o "$TMP/src1.out" >"$TMP/src1.txt" 2>&1
"$PT_BIN" analyze "$TMP/pair31" -o "$TMP/pair31.out" >"$TMP/pair31.txt" 2>&1
check "planted slow source: one finding, out of rank 1, its 3 pairs slow" q "$TMP/src1.out/PerfDisplay/report.json" \
	'(len(F) == 1 and F[0]["function"] == "p2p out of 1" and F[0]["labels"] == ["rank 1"] and
	F[0]["metrics"][3]["value"] == 12 and F[0]["metrics"][4]["value"] == 50331648 and
	sorted(k for k, x in p.items() if x["slow"]) == [(1, 0), (1, 2), (1, 3)])'
check "planted slow source: the text names it against the other sources" grep -q \
	"transfers out of rank 1 run at 0.211 GB/s against 0.724 GB/s for the other sources (median): 3.43x slower" "$TMP/src1.txt"
check "planted slow pair: one finding, 3 -> 1 only, 3 transfers of 12582912 bytes" q "$TMP/pair31.out/PerfDisplay/report.json" \
	'(len(F) == 1 and F[0]["function"] == "p2p 3->1" and F[0]["labels"] == ["rank 1"] and
	F[0]["metrics"][3]["value"] == 3 and F[0]["metrics"][4]["value"] == 12582912 and
	[k for k, x in p.items() if x["slow"]] == [(3, 1)])'
check "planted slow pair: the text names both ranks" grep -q \
	"transfers from rank 3 to rank 1 run at 0.186 GB/s against 0.682 GB/s for the other pairs (median): 3.67x slower; 3" "$TMP/pair31.txt"

# eight ranks (tests/data/p2p_gloo8, real, 1 MiB messages): 56 pairs, none slow;
# one slow link among them (5 -> 2, planted here) is the one finding
R8=$PT_DATA/p2p_gloo8
"$PT_BIN" analyze "$R8" -o "$TMP/r8" >/dev/null 2>&1
check "8 ranks: 56 pairs, ring pairs 6 transfers of 6291456 bytes, the others 3 of 3145728, no finding" q \
	"$TMP/r8/PerfDisplay/report.json" '(len(p) == 56 and F == [] and all(
	(x["count"], x["bytes"]) == ((6, 6291456) if (s + 1) % 8 == d else (3, 3145728)) and not x["slow"]
	for (s, d), x in p.items()))'
"$PYTHON" "$PT_ROOT/tests/tools/plant_p2p.py" "$R8" "$TMP/r8s" --src 5 --dst 2 >/dev/null
"$PT_BIN" analyze "$TMP/r8s" -o "$TMP/r8s.out" >"$TMP/r8s.txt" 2>&1
check "8 ranks, one slow link planted: the pair 5 -> 2 alone" q "$TMP/r8s.out/PerfDisplay/report.json" \
	'(len(F) == 1 and F[0]["function"] == "p2p 5->2" and F[0]["labels"] == ["rank 2"] and
	[k for k, x in p.items() if x["slow"]] == [(5, 2)])'
check "8 ranks, one slow link planted: the sentence" grep -q \
	"transfers from rank 5 to rank 2 run at 0.0223 GB/s against 0.0787 GB/s for the other pairs (median): 3.53x slower;" "$TMP/r8s.txt"
