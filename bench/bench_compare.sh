#!/bin/bash
# bench/bench_compare.sh - `perftracker compare` of two 8-worker runs beside
# diagnosing the same two runs: from traces (compare BASE NEW vs analyze
# BASE + analyze NEW) and from summaries (compare vs diagnose + diagnose).
# The question it answers: does comparing two runs cost about what
# diagnosing them does?  Called by bench/run.sh; prints a table and appends
# it to $RES.
#
# usage: bench/bench_compare.sh BASE_DIR NEW_DIR   (folders of traces)
# env:   BENCH_REPEAT (runs per command, best kept; default 3), PT
set -u
cd "$(dirname "$0")/.."
. bench/lib.sh

PT=${PT:-build/perftracker}
N=${BENCH_REPEAT:-3}
[ $# -eq 2 ] && [ -d "$1" ] && [ -d "$2" ] || { echo "usage: bench/bench_compare.sh BASE_DIR NEW_DIR" >&2; exit 2; }
BASE=$1 NEW=$2
W=bench/out/compare
rm -rf "$W"
mkdir -p "$W"
total=$(cat "$BASE"/*.json "$NEW"/*.json | wc -c)
nb=$(ls "$BASE"/*.json | wc -l)
nn=$(ls "$NEW"/*.json | wc -l)
to=$((60 + total / 5000000))
cat "$BASE"/*.json "$NEW"/*.json >/dev/null

# Summaries of both runs, for the summary-side rows.
"$PT" analyze "$BASE" -q -o "$W/a" --keep-summaries "$W/sa" >/dev/null 2>&1 &&
	"$PT" analyze "$NEW" -q -o "$W/b" --keep-summaries "$W/sb" >/dev/null 2>&1 ||
	{ say "compare benchmark FAILED: analyze of the inputs"; exit 0; }

md "" "### compare: two runs of $nb and $nn workers, $(mb "$total") MB of traces in all"
echo
echo "== compare of two runs ($nb + $nn traces, $(mb "$total") MB; best of $N runs, warm page cache)"
table "command" "wall s" "CPU s" "peak RSS MiB" "wall vs diagnosing" "CPU vs diagnosing"

# pair CMD_A CMD_B: run both, sum the best walls and CPU (the cost of
# diagnosing both runs one after the other)
sum_wall= sum_cpu= sum_rss=0
both() {
	local label=$1 w=0 c=0 r=0
	shift
	measure "$N" "$to" "$label-a" "$@" "$BASE" -q -o "$W/$label-a" || return 1
	w=$M_WALL c=$(calc "print $M_USER + $M_SYS") r=$M_RSS_KB
	measure "$N" "$to" "$label-b" "$@" "$NEW" -q -o "$W/$label-b" || return 1
	sum_wall=$(calc "printf \"%.3f\", $w + $M_WALL")
	sum_cpu=$(calc "printf \"%.3f\", $c + $M_USER + $M_SYS")
	sum_rss=$r
	[ "$M_RSS_KB" -gt "$sum_rss" ] && sum_rss=$M_RSS_KB
	return 0
}

# from traces
if both analyze "$PT" analyze; then
	row "analyze BASE + analyze NEW" "$sum_wall" "$sum_cpu" "$(mib "$sum_rss")" "1.00x" "1.00x"
	dw=$sum_wall dc=$sum_cpu
	if measure "$N" "$to" compare-traces "$PT" compare "$BASE" "$NEW" -q -o "$W/ct"; then
		row "compare BASE NEW (traces)" "$M_WALL" "$(calc "printf \"%.2f\", $M_USER + $M_SYS")" \
			"$(mib "$M_RSS_KB")" "$(calc "printf \"%.2fx\", $M_WALL / $dw")" \
			"$(calc "printf \"%.2fx\", ($M_USER + $M_SYS) / $dc")"
		tr_ratio=$(calc "printf \"%.2f\", $M_WALL / $dw")
		tr_cpu=$(calc "printf \"%.2f\", ($M_USER + $M_SYS) / $dc")
	else
		row "compare BASE NEW (traces)" "failed (rc $M_RC)" "" "" "" ""
	fi
fi
# from summaries (what the master holds after a trigger)
both_sums() {
	local w c r
	measure "$N" "$to" diagnose-a "$PT" diagnose "$W/sa" -q -o "$W/da" || return 1
	w=$M_WALL c=$(calc "print $M_USER + $M_SYS") r=$M_RSS_KB
	measure "$N" "$to" diagnose-b "$PT" diagnose "$W/sb" -q -o "$W/db" || return 1
	sum_wall=$(calc "printf \"%.3f\", $w + $M_WALL")
	sum_cpu=$(calc "printf \"%.3f\", $c + $M_USER + $M_SYS")
	sum_rss=$r
	[ "$M_RSS_KB" -gt "$sum_rss" ] && sum_rss=$M_RSS_KB
}
if both_sums; then
	row "diagnose BASE + diagnose NEW" "$sum_wall" "$sum_cpu" "$(mib "$sum_rss")" "1.00x" "1.00x"
	dw=$sum_wall dc=$sum_cpu
	if measure "$N" "$to" compare-sums "$PT" compare "$W/sa" "$W/sb" -q -o "$W/cs"; then
		row "compare (summaries)" "$M_WALL" "$(calc "printf \"%.3f\", $M_USER + $M_SYS")" \
			"$(mib "$M_RSS_KB")" "$(calc "printf \"%.2fx\", $M_WALL / $dw")" \
			"$(calc "d = $dc; if (d <= 0) d = 0.005; printf \"%.2fx\", ($M_USER + $M_SYS) / d")"
		su_ratio=$(calc "printf \"%.2f\", $M_WALL / $dw")
	else
		row "compare (summaries)" "failed (rc $M_RC)" "" "" "" ""
	fi
fi
echo
"$PT" compare "$BASE" "$NEW" -q -o "$W/ct" --time 2>"$W/time.txt" >/dev/null
say "compare / diagnosing both runs: from traces ${tr_ratio:-?}x the wall time and ${tr_cpu:-?}x the CPU time, from summaries ${su_ratio:-?}x the wall time (CPU times are the steadier number on a shared machine). Phases: $(sed 's/^perftracker: time: //' "$W/time.txt")"
say "first line: $("$PT" compare "$BASE" "$NEW" 2>/dev/null | head -1 | cut -c1-300)"
exit 0
