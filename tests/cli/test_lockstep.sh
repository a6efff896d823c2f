#!/bin/bash
# The lockstep diagnosis (docs/diagnose.md "Lockstep") on the real 8-rank
# DLRM traces and on copies with faults planted by
# tests/tools/plant_lockstep.py, the waiting propagated as in a synchronous
# job: the straggler is named with its cause function first and no victim is
# blamed, for every rank, several collectives, a new function and an
# existing one grown; clocks shifted by up to +-50 ms change nothing; a
# balanced job gets no finding; a worker with mismatched collectives is
# reported and the rest goes on.
. "$(dirname "$0")/lib.sh"

DLRM=$PT_DATA/dlrm
PLANT=$PT_ROOT/tests/tools/plant_lockstep.py
W7=worker7_step_12.1694128201553.pt.trace.json

# rq REPORT EXPR [INFO]: a Python expression over r (report), F (findings),
# L (the Lockstep section), S (stragglers by rank), I (planted.info or {}).
rq() {
	"$PYTHON" -c 'import json, sys
r = json.load(open(sys.argv[1])); F = r["findings"]; L = r.get("Lockstep", {})
S = {s["rank"]: s for s in L.get("stragglers", [])}
I = json.load(open(sys.argv[3])) if len(sys.argv) > 3 else {}
leaf = lambda k: k.split("|")[-1]
ok = eval(sys.argv[2])
if not ok:
    print("false:", sys.argv[2]); print(json.dumps([{k: f[k] for k in ("category", "workers", "function", "impact (ms)")} for f in F], indent=1)[:2500]); sys.exit(1)' "$@"
}

# --- the real set --------------------------------------------------------------
"$PT_BIN" analyze "$DLRM" -o "$TMP/real" >"$TMP/real.txt" 2>"$TMP/real.err"
R=$TMP/real/PerfDisplay/report.json
check "real: analyze" test -s "$R"
check "real: rank 7 is the one straggler" rq "$R" 'list(S) == [7] and [f["workers"] for f in F if f["category"] == "Lockstep"] == [["'$W7'"]]'
check "real: rank 7 arrived last at 5 of 8 collectives" rq "$R" 'S[7]["last arrivals"] == 5 and L["instances"] == 8 and L["workers matched"] == 8'
# at the first SendRecv rank 1 starts 7,624 us before rank 7, rank 3 6,122, ...
check "real: the others waited 35.5 ms for rank 7" rq "$R" '35.0 < S[7]["others waited for it (ms)"] < 36.0 and 5.0 < S[7]["per peer (ms)"] < 5.2'
check "real: the lateness predates the window" rq "$R" 'S[7]["predates window"] is True'
check "real: the finding says so and advises --steps 2" rq "$R" '"predates the profiled window" in F[0]["explanation"] and "--steps 2" in F[0]["explanation"]'
check "real: rank 1 waited most and is blamed nowhere" rq "$R" 'max(L["workers"].values(), key=lambda w: w["waited for others (ms)"])["rank"] == 1 and L["workers"]["worker1_step_12.1694128201556.pt.trace.json"]["others waited for it (ms)"] == 0 and not any("worker1_" in w for f in F for w in f["workers"])'
check "real: what-if in ms and %" rq "$R" '0 < S[7]["what if"]["saved (ms)"] < S[7]["what if"]["now (ms)"] and S[7]["what if"]["step (ms)"] == round(S[7]["what if"]["now (ms)"] - S[7]["what if"]["saved (ms)"], 3)'
check "real: clocks agree (same host): offsets and residual below 5 us" rq "$R" 'all(abs(w["clock offset (us)"]) < 5 for w in L["workers"].values()) and L["clock residual (us)"] < 5'
check "real: text report names rank 7" grep -q '^  1\. rank 7 is the worker the others waited for' "$TMP/real.txt"

# --- clocks shifted by up to +-50 ms -------------------------------------------
check "shift: plant" "$PYTHON" "$PLANT" shift "$DLRM" "$TMP/shift" --max-ms 50 --seed 7
"$PT_BIN" analyze "$TMP/shift" -o "$TMP/shift.out" -q 2>/dev/null
RS=$TMP/shift.out/PerfDisplay/report.json
check "shift: the same findings" "$PYTHON" -c 'import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
key = lambda r: [(f["category"], f["workers"], f["function"], round(f["impact (ms)"], 2)) for f in r["findings"]]
sys.exit(key(a) != key(b))' "$R" "$RS"
check "shift: the same waits, offsets found" "$PYTHON" -c 'import json, sys
a, b, i = (json.load(open(p)) for p in sys.argv[1:4])
wa, wb = a["Lockstep"]["workers"], b["Lockstep"]["workers"]
off = {int(k): v for k, v in i["offsets_ms"].items()}
r0 = off[wb[sorted(wb)[0]]["rank"]]
ok = all(abs(wa[k][m] - wb[k][m]) < 0.01 for k in wa for m in ("waited for others (ms)", "others waited for it (ms)"))
ok = ok and all(abs(wb[k]["clock offset (us)"] / 1e3 - (off[wb[k]["rank"]] - r0)) < 0.01 for k in wb)
sys.exit(not ok)' "$R" "$RS" "$TMP/shift/planted.info"

# --- planted stragglers: every rank, several collectives, both kinds -------------
nplant=0; nbad=0; bad=""
for rank in 0 1 2 3 4 5 6 7; do
	for k in 1 4 7; do
		for kind in new existing; do
			d=$TMP/p_${rank}_${k}_$kind
			if ! "$PYTHON" "$PLANT" straggler "$DLRM" "$d" --rank "$rank" --k "$k" --ms 6 --kind "$kind" >"$TMP/pl.err" 2>&1; then
				nbad=$((nbad + 1)); bad="$bad plant($rank,$k,$kind)"; continue
			fi
			"$PT_BIN" analyze "$d" -o "$d.out" -q 2>/dev/null
			nplant=$((nplant + 1))
			# the planted rank: one finding (one cause), the Lockstep one,
			# whose function is the planted one; no other rank named
			# except rank 7's own (pre-window) lateness
			if ! rq "$d.out/PerfDisplay/report.json" '(lambda P, fn: [leaf(f["function"]) for f in F if P in f["workers"]] == [fn] and any(f["category"] == "Lockstep" and f["workers"] == [P] and leaf(f["function"]) == fn for f in F) and leaf(S[I["rank"]]["causes"][0]["function"]) == fn and all(f["workers"] == [P] or (f["category"] == "Lockstep" and f["workers"] == ["'$W7'"] and S[7]["predates window"]) for f in F))(I["files"][str(I["rank"])], I["function"])' "$d/planted.info" >"$TMP/pl.out" 2>&1; then
				nbad=$((nbad + 1)); bad="$bad ($rank,$k,$kind)"; sed 's/^/# /' "$TMP/pl.out" | head -12
			fi
			rm -rf "$d" "$d.out"
		done
	done
done
[ "$nbad" -eq 0 ] && [ "$nplant" -eq 48 ] && ok "planted stragglers: 48 of 48 named in one finding with the cause function, no peer blamed" \
	|| not_ok "planted stragglers: $nbad of 48 wrong:$bad"

# planted and clocks shifted: the same answer
"$PYTHON" "$PLANT" straggler "$DLRM" "$TMP/ps" --rank 4 --k 5 --ms 6 --kind existing >/dev/null
"$PYTHON" "$PLANT" shift "$TMP/ps" "$TMP/pss" --max-ms 50 --seed 3 >/dev/null
"$PT_BIN" analyze "$TMP/ps" -o "$TMP/ps.out" -q 2>/dev/null
"$PT_BIN" analyze "$TMP/pss" -o "$TMP/pss.out" -q 2>/dev/null
check "planted + shifted: the same findings" "$PYTHON" -c 'import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
key = lambda r: [(f["category"], f["workers"], f["function"], round(f["impact (ms)"], 1)) for f in r["findings"]]
sys.exit(not (key(a) == key(b) and key(a)[0][1] == ["worker4_step_12.1694128201547.pt.trace.json"]))' "$TMP/ps.out/PerfDisplay/report.json" "$TMP/pss.out/PerfDisplay/report.json"

# --- a balanced job: no finding ----------------------------------------------------
check "balanced: plant" "$PYTHON" "$PLANT" balanced "$DLRM" "$TMP/bal" --copies 8 --jitter 0.01 --seed 5
"$PT_BIN" analyze "$TMP/bal" -o "$TMP/bal.out" -q 2>/dev/null
check "balanced: 8 matched workers, no straggler, no finding" rq "$TMP/bal.out/PerfDisplay/report.json" 'L["workers matched"] == 8 and S == {} and F == []'
for seed in 11 12 13; do
	"$PYTHON" "$PLANT" balanced "$DLRM" "$TMP/bal$seed" --copies 8 --jitter 0.01 --seed $seed >/dev/null
	"$PT_BIN" analyze "$TMP/bal$seed" -o "$TMP/bal$seed.out" -q 2>/dev/null
	check "balanced (seed $seed): no finding" rq "$TMP/bal$seed.out/PerfDisplay/report.json" 'S == {} and F == []'
done

# --- mismatched collectives on one worker -----------------------------------------
for how in missing extra reorder; do
	"$PYTHON" "$PLANT" mismatch "$DLRM" "$TMP/mm_$how" --rank 2 --k 3 --how $how >/dev/null
	"$PT_BIN" analyze "$TMP/mm_$how" -o "$TMP/mm_$how.out" -q 2>"$TMP/mm.err"
	case $how in missing) word="missing" ;; extra) word="extra" ;; reorder) word="different order" ;; esac
	check "mismatch ($how): rank 2 reported, the other 7 analysed, rank 7 still named" rq "$TMP/mm_$how.out/PerfDisplay/report.json" '[m["rank"] for m in L["mismatched"]] == [2] and "'"$word"'" in L["mismatched"][0]["problem"] and L["workers matched"] == 7 and any(f["metric"] == "collectives_mismatch" and f["workers"] == ["worker2_step_12.1694128201554.pt.trace.json"] for f in F) and list(S) == [7]'
done

# --- a loaded host (real summaries, tests/data/demo_loaded) -------------------------
# 4 gloo ranks on 2 cores with a CPU hog beside them, rank 0 stalled 30 ms
# per step in slow_augment: rank 2 lacks the window's last collective (3 of
# 4), and one rank's ring ended 3.9 ms before the others' in the instance
# that holds the step's whole wait.  Rank 2 is matched unshifted (a fit on
# one pair has no spread, but proves nothing), the inside instance counts,
# and rank 0 is the straggler and the job's critical path in both steps.
"$PT_BIN" diagnose "$PT_DATA/demo_loaded" -o "$TMP/loaded.out" -q 2>/dev/null
check "loaded host: 4 matched, 3 instances, none left out, the clocks agree" rq "$TMP/loaded.out/PerfDisplay/report.json" 'L["workers matched"] == 4 and L["instances"] == 3 and "instances left out (ends disagree)" not in L and len({w["clock offset (us)"] for w in L["workers"].values()}) == 1'
check "loaded host: rank 0 the straggler, slow_augment its cause, the job path through it" rq "$TMP/loaded.out/PerfDisplay/report.json" 'list(S) == [0] and S[0]["causes"][0]["function"].endswith("slow_augment|<built-in function sleep>") and [r["workers"][j["through"]]["rank"] for j in r["Critical path"]["job"]] == [0, 0]'

# --- old summaries (version 1) still load: no lockstep for them ----------------------
mkdir -p "$TMP/v1"
for f in "$DLRM"/*.json; do
	b=$(basename "$f" .json)
	"$PT_BIN" summarize "$f" -o "$TMP/v1/$b.summary.json" 2>/dev/null
	"$PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1])); d["version"] = 1; d.pop("collectives")
json.dump(d, open(sys.argv[1], "w"))' "$TMP/v1/$b.summary.json"
done
"$PT_BIN" diagnose "$TMP/v1" -o "$TMP/v1.out" -q 2>"$TMP/v1.err"
check "version-1 summaries: diagnose runs, no Lockstep section, no finding" rq "$TMP/v1.out/PerfDisplay/report.json" '"Lockstep" not in r and F == []'

# --- Nsight Systems exports: NCCL kernels from the SQLite schema --------------------
# (tests/tools/make_nsys_fixture.py: 8 workers on one host, 4 AllReduces on
# stream 20 that all start together; nobody waits for anybody)
"$PYTHON" "$PT_ROOT/tests/tools/make_nsys_fixture.py" --nsys "$TMP/nsys" >/dev/null
"$PT_BIN" analyze "$TMP/nsys" -o "$TMP/nsys.out" -q 2>/dev/null
check "nsys: 4 NCCL instances on nccl:0 matched on 8 workers, no straggler" rq "$TMP/nsys.out/PerfDisplay/report.json" 'L["workers matched"] == 8 and L["instances"] == 4 and L["channels"] == ["nccl:0"] and S == {} and L["waiting in all (ms)"] == 0 and not any(f["category"] == "Lockstep" for f in F)'
