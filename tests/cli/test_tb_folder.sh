#!/bin/bash
# CLI tests for a folder torch's tensorboard_trace_handler wrote
# (tests/data/torch2_tb: 4 gloo DDP ranks, 3 profiling cycles of 2 steps
# each, one file per rank and cycle; rank 2 sleeps 20 ms in load_batch):
# read as 4 workers of 6 steps with torch's own step numbers, the files of
# each listed, no share of time above 100%, rank 2 named; a folder that
# mixes in another job, another run of a rank, a copy and a clock hours
# away names each file it left out and why; one file alone is read alone;
# our own collector's rounds (<host>_<rank>_<pid>.json per round folder) group
# the same way.
. "$(dirname "$0")/lib.sh"

TB=$PT_DATA/torch2_tb
OTHER=$PT_DATA/torch2_tb_other
N=$(ls "$TB"/*.pt.trace.json.gz | wc -l)
[ "$N" -eq 12 ] || { echo "FATAL: expected 12 traces in $TB, found $N"; exit 1; }

pyjson() {
	"$PYTHON" -c 'import json, re, sys
r = json.load(open(sys.argv[1]))
def shares(x, path=""):
    # every number whose key says it is a share of time: (path, value)
    if isinstance(x, dict):
        for k, v in x.items():
            if isinstance(v, (int, float)) and re.search(r"\b(ratio|share|utilization)\b", k):
                yield path + "/" + k, v
            yield from shares(v, path + "/" + k)
    elif isinstance(x, list):
        for v in x:
            yield from shares(v, path)
ok = eval(sys.argv[2])
if not ok:
    print("false:", sys.argv[2]); sys.exit(1)' "$1" "$2"
}

"$PT_BIN" analyze "$TB" -o "$TMP/tb" -q 2>"$TMP/tb.err"
R=$TMP/tb/PerfDisplay/report.json
W='["vm_0_10048", "vm_1_10049", "vm_2_10050", "vm_3_10051"]'
check "12 files read as 4 workers" pyjson "$R" 'sorted(r["workers"]) == '"$W"
check "the grouping said in one line" grep -qx 'perftracker: 12 trace files read as 4 workers: 4 of them from several files each (one file per profiling cycle; grouped by rank, host and pid), 0 files left out' "$TMP/tb.err"
check "nothing else on stderr" test "$(wc -l <"$TMP/tb.err")" -eq 1
check "ranks 0..3, host vm, pids from the file names" pyjson "$R" '[(w["rank"], w["host"], w["pid"]) for k, w in sorted(r["workers"].items())] == [(0, "vm", 10048), (1, "vm", 10049), (2, "vm", 10050), (3, "vm", 10051)]'
check "6 steps each (active 2 x repeat 3), numbered as torch did" pyjson "$R" 'all(w["steps"] == [2, 3, 6, 7, 10, 11] for w in r["workers"].values())'
check "each worker lists its 3 files in time order" pyjson "$R" '[[f.rsplit("/", 1)[1] for f in w["files"]] for k, w in sorted(r["workers"].items())][2] == ["vm_10050.1796428567134677367.pt.trace.json.gz", "vm_10050.1796428567378480420.pt.trace.json.gz", "vm_10050.1796428567672833462.pt.trace.json.gz"] and all(len(w["files"]) == 3 and w["file"] == w["files"][0] for w in r["workers"].values())'
check "grouped by rank+host+pid" pyjson "$R" 'all(w["grouped_by"] == "rank+host+pid" for w in r["workers"].values())'
check "the window is the steps, not the time between cycles" pyjson "$R" '[round(w["window (ms)"], 3) for k, w in sorted(r["workers"].items())] == [279.133, 273.028, 287.3, 273.6]'
check "no files left out" pyjson "$R" '"files left out" not in r'
check "no share of time above 100%" pyjson "$R" 'all(0 <= v <= 1 for p, v in shares(r) if "thresholds" not in p)'
check "no time lost above 100%" pyjson "$R" 'all(f["confidence"]["time lost (share of window)"] <= 1 for f in r["findings"] if f.get("confidence"))'
check "the first finding: rank 2 in load_batch, the others wait" pyjson "$R" 'r["findings"][0]["workers"] == ["vm_2_10050"] and r["findings"][0]["category"] == "Lockstep" and r["findings"][0]["function"] == "load_batch"'
check "rank 2 arrived last at 6 of 6 collectives" pyjson "$R" '"arrived last at 6 of 6 collectives" in r["findings"][0]["explanation"]'

# A mixed folder: the job, a rank of a 2-rank job, rank 1 of a second run,
# a copy of one cycle under another name, and that second run's rank 1
# again with its clock 3 hours later.
M=$TMP/mixed
mkdir -p "$M"
cp "$TB"/* "$OTHER"/* "$M"/
cp "$TB/vm_10049.1796428567365627772.pt.trace.json.gz" "$M/vm_10049.1796428567365627999.pt.trace.json.gz"
"$PYTHON" - "$OTHER/vm_11275.1796428605053276587.pt.trace.json.gz" "$M/vm_99999.1796439405053276587.pt.trace.json.gz" <<'PY'
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1]))
d["baseTimeNanoseconds"] += 3 * 3600 * 10**9
json.dump(d, gzip.open(sys.argv[2], "wt"))
PY
"$PT_BIN" analyze "$M" -o "$TMP/mx" -q 2>"$TMP/mx.err"
R=$TMP/mx/PerfDisplay/report.json
check "mixed: still the 4 workers of the job" pyjson "$R" 'sorted(r["workers"]) == '"$W"' and all(len(w["files"]) == 3 for w in r["workers"].values())'
check "mixed: 4 files left out, each with its reason" pyjson "$R" '[(x["file"].rsplit("/", 1)[1], x["reason"]) for x in r["files left out"]] == [
 ("vm_10049.1796428567365627999.pt.trace.json.gz", "overlaps vm_10049.1796428567365627772.pt.trace.json.gz, a file of the same worker, in time (a copy?)"),
 ("vm_10699.1796428585466145008.pt.trace.json.gz", "world_size 2, the other workers'"'"' 4 (another job?)"),
 ("vm_99999.1796439405053276587.pt.trace.json.gz", "its clock is 3.0 h after the other workers'"'"' (another run?)"),
 ("vm_11275.1796428605053276587.pt.trace.json.gz", "rank 1 again, in another process than worker vm_1_10049'"'"'s 3 files (another run?)")]'
check "mixed: one warning line per file left out, naming it" test "$(grep -c "^perftracker: warning: '$M/vm_.*' left out: " "$TMP/mx.err")" -eq 4
check "mixed: the grouping line counts them" grep -q '^perftracker: 16 trace files read as 4 workers: 4 of them from several files each (.*), 4 files left out$' "$TMP/mx.err"

# One file alone is read alone, as before: its own name, its 2 steps, no
# files list.
"$PT_BIN" analyze "$TB/vm_10050.1796428567134677367.pt.trace.json.gz" -o "$TMP/one" -q 2>"$TMP/one.err"
R=$TMP/one/PerfDisplay/report.json
check "one file: one worker named by its file" pyjson "$R" 'list(r["workers"]) == ["vm_10050.1796428567134677367.pt.trace.json.gz"] and r["workers"]["vm_10050.1796428567134677367.pt.trace.json.gz"]["steps"] == [2, 3]'
check "one file: no files list, no grouping line" pyjson "$R" '"files" not in r["workers"]["vm_10050.1796428567134677367.pt.trace.json.gz"]' && check "one file: nothing on stderr" test ! -s "$TMP/one.err"

# Our own collector's rounds: <host>_<rank>_<pid>.json in a folder per
# round (docs/collector.md); the same name in two rounds is one worker.
i=0
for pid in 10048 10049 10050 10051; do
	f=("$TB"/vm_$pid.*)
	mkdir -p "$TMP/rounds/r1" "$TMP/rounds/r2"
	cp "${f[0]}" "$TMP/rounds/r1/vm_${i}_$pid.json"
	cp "${f[1]}" "$TMP/rounds/r2/vm_${i}_$pid.json"
	i=$((i + 1))
done
"$PT_BIN" analyze "$TMP/rounds" -o "$TMP/ro" -q 2>"$TMP/ro.err"
R=$TMP/ro/PerfDisplay/report.json
check "rounds: 8 files read as 4 workers named as our collector names them" pyjson "$R" 'sorted(r["workers"]) == ["vm_0_10048.json", "vm_1_10049.json", "vm_2_10050.json", "vm_3_10051.json"]'
check "rounds: each with both rounds' steps and files" pyjson "$R" 'all(w["steps"] == [2, 3, 6, 7] and [f.split("/")[-2] for f in w["files"]] == ["r1", "r2"] and w["grouped_by"] == "rank+host+pid" for w in r["workers"].values())'

# Bad files in such a folder: a cycle cut off mid-write keeps the steps
# before the cut; files that are not JSON are failed workers, warned about;
# the other workers stand, nothing crashes (the ASan build).
B=$TMP/bad
mkdir -p "$B"
cp "$TB"/* "$B"/
head -c 3000 "$TB/vm_10051.1796428567361340744.pt.trace.json.gz" >"$B/vm_10051.1796428567361340744.pt.trace.json.gz"
echo garbage >"$B/vm_77777.1796428567361340744.pt.trace.json.gz"
"$PT_BIN" analyze "$B" -o "$TMP/bo" -q 2>"$TMP/bo.err"
R=$TMP/bo/PerfDisplay/report.json
check "bad files: the cut cycle keeps its first step" pyjson "$R" 'r["workers"]["vm_3_10051"]["steps"] == [2, 3, 6, 10, 11] and len(r["workers"]["vm_3_10051"]["files"]) == 3'
check "bad files: the others stand" pyjson "$R" 'all(r["workers"][w]["steps"] == [2, 3, 6, 7, 10, 11] for w in ["vm_0_10048", "vm_1_10049", "vm_2_10050"])'
check "bad files: not JSON is a failed worker, named" pyjson "$R" 'r["workers"]["vm_77777.1796428567361340744.pt.trace.json.gz"]["error"] == "unexpected character '"'"'g'"'"', expected '"'"'{'"'"' or '"'"'['"'"' (not json)"'
check "bad files: one warning for it" test "$(grep -c "^perftracker: warning: '$B/vm_77777.1796428567361340744.pt.trace.json.gz': unexpected character" "$TMP/bo.err")" -eq 1
