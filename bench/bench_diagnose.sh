#!/bin/bash
# bench/bench_diagnose.sh - `perftracker diagnose` of N worker summaries
# (default 10,000) beside `cat` of the same files: wall time, MB/s,
# summaries/s, CPU and peak RSS, then the phase split (read / diagnose /
# write) from `diagnose --time`.  The summaries come from the real 8 DLRM
# ranks (analyze --keep-summaries) multiplied by bench/gen_summaries.py
# (2% jitter, 10 planted DtoD workers and 10 slow GPUs per 10,000).
# Called by bench/run.sh; prints a table and appends it to $RES.
#
# env: BENCH_DIAG_N (10000), BENCH_REPEAT (runs per command, best kept; 3),
#      PT (build/perftracker), PYTHON (/usr/bin/python3)
set -u
cd "$(dirname "$0")/.."
. bench/lib.sh

PT=${PT:-build/perftracker}
PY=${PYTHON:-/usr/bin/python3}
N=${BENCH_DIAG_N:-10000}
R=${BENCH_REPEAT:-3}
DATA=bench/out/data
DIR=$DATA/summaries_$N
TPL=$DATA/summaries_dlrm

[ -x "$PT" ] || make -s "$PT" || { echo "bench_diagnose: cannot build $PT" >&2; exit 1; }
if [ ! -f "$DIR/.complete" ]; then
	rm -rf "$TPL" "$DIR"
	echo "generating $N summaries in $DIR ..."
	"$PT" analyze tests/data/dlrm -q -o "$DATA/dlrm_report" --keep-summaries "$TPL" ||
		{ echo "bench_diagnose: analyze of the DLRM set failed" >&2; exit 1; }
	"$PY" bench/gen_summaries.py "$TPL" "$N" "$DIR" ||
		{ echo "bench_diagnose: gen_summaries.py failed" >&2; exit 1; }
	touch "$DIR/.complete"
fi
files=("$DIR"/*.summary.json)
total=$(cat "${files[@]}" | wc -c)
to=$((120 + N / 50))

md "" "### diagnose: $N summaries, $(mb "$total") MB in all"
echo
echo "== diagnose of $N summaries ($(mb "$total") MB, best of $R runs, warm page cache)"
table "command" "wall s" "MB/s" "summaries/s" "CPU s" "peak RSS MiB"

cat "${files[@]}" >/dev/null
measure "$R" "$to" diagnose-cat cat "${files[@]}"
row "cat > /dev/null" "$M_WALL" "$(mbps "$total" "$M_WALL")" \
	"$(calc "printf \"%.0f\", $N / $M_WALL")" "$(calc "print $M_USER + $M_SYS")" ""
cat_wall=$M_WALL

rm -rf bench/out/diagnose
if measure "$R" "$to" diagnose "$PT" diagnose "${files[@]}" -o bench/out/diagnose -q; then
	row "perftracker diagnose (-j all)" "$M_WALL" "$(mbps "$total" "$M_WALL")" \
		"$(calc "printf \"%.0f\", $N / $M_WALL")" "$(calc "print $M_USER + $M_SYS")" \
		"$(mib "$M_RSS_KB")"
	say "diagnose / cat wall: $(calc "printf \"%.1f\", $M_WALL / $cat_wall")x"
	# Phase split of one more run (read is parallel, diagnose single-threaded).
	"$PT" diagnose "${files[@]}" -o bench/out/diagnose -q --time 2>"$LOGS/diagnose-time.err"
	say "phases: $(sed 's/^perftracker: time: //' "$LOGS/diagnose-time.err" | tr '\n' ';' | sed 's/;$//')"
	say "findings: $("$PY" -c 'import json, sys; r = json.load(open(sys.argv[1])); print(len(r["findings"]), "(planted: 10 DtoD + 10 slow GPUs per 10,000)")' bench/out/diagnose/PerfDisplay/report.json)"
else
	row "perftracker diagnose" "failed (rc $M_RC)" "" "" "" ""
	sed 's/^/  /' "$LOGS/diagnose.err" | tail -5
fi
