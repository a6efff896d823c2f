#!/bin/bash
# bench/bench_timeline.sh - what PerfDisplay/timeline.json.gz costs
# (docs/display.md "The timeline"): `diagnose` of N summaries (default
# 1,000, the DLRM ranks multiplied by bench/gen_summaries.py) with and
# without the file (--no-timeline), the file's own seconds (--time) and
# size; then `perftracker timeline` with the raw events of 8 copies of a
# big trace beside `cat` of the same bytes (the plain read it must do).
# Called by bench/run.sh (--only timeline) with the 8 trace paths; prints a
# table and appends it to $RES.
#
# env: BENCH_TL_N (1000), BENCH_REPEAT (3), PT (build/perftracker), PYTHON
set -u
cd "$(dirname "$0")/.."
. bench/lib.sh

PT=${PT:-build/perftracker}
PY=${PYTHON:-/usr/bin/python3}
N=${BENCH_TL_N:-1000}
R=${BENCH_REPEAT:-3}
DATA=bench/out/data
DIR=$DATA/summaries_$N
TPL=$DATA/summaries_dlrm

[ -x "$PT" ] || make -s "$PT" || { echo "bench_timeline: cannot build $PT" >&2; exit 1; }
if [ ! -f "$DIR/.complete" ]; then
	rm -rf "$TPL" "$DIR"
	"$PT" analyze tests/data/dlrm -q -o "$DATA/dlrm_report" --keep-summaries "$TPL" ||
		{ echo "bench_timeline: analyze of the DLRM set failed" >&2; exit 1; }
	"$PY" bench/gen_summaries.py "$TPL" "$N" "$DIR" >/dev/null ||
		{ echo "bench_timeline: gen_summaries.py failed" >&2; exit 1; }
	touch "$DIR/.complete"
fi

md "" "### timeline.json.gz: $N summaries, then 8 raw traces"
echo
echo "== the timeline (best of $R runs)"
table "command" "wall s" "CPU s" "peak RSS MiB" "file MB"
rm -rf bench/out/tl
measure "$R" 600 tl-none "$PT" diagnose "$DIR" -o bench/out/tl -q --no-timeline
row "diagnose $N summaries --no-timeline" "$M_WALL" "$(calc "print $M_USER + $M_SYS")" "$(mib "$M_RSS_KB")" ""
base=$(calc "print $M_USER + $M_SYS")
measure "$R" 600 tl-with "$PT" diagnose "$DIR" -o bench/out/tl -q
row "diagnose $N summaries (with the file)" "$M_WALL" "$(calc "print $M_USER + $M_SYS")" "$(mib "$M_RSS_KB")" \
	"$(mb "$(stat -c %s bench/out/tl/PerfDisplay/timeline.json.gz)")"
say "with / without the file, CPU: $(calc "printf \"%.2f\", ($M_USER + $M_SYS) / $base")x"
"$PT" diagnose "$DIR" -o bench/out/tl -q --time 2>"$LOGS/tl-time.err"
say "phases: $(sed 's/^perftracker: time: //' "$LOGS/tl-time.err" | tr '\n' ';' | sed 's/;$//')"

if [ $# -ge 1 ]; then
	[ -s "$1" ] || { echo "bench_timeline: '$1': no such trace" >&2; exit 1; }
	rm -rf bench/out/tlraw && mkdir -p bench/out/tlraw/in
	for r in 0 1 2 3 4 5 6 7; do ln -sf "$(realpath "$1")" "bench/out/tlraw/in/node_${r}_100$r.json"; done
	mkdir -p bench/out/tlraw/run/summaries
	"$PT" analyze bench/out/tlraw/in -q -o bench/out/tlraw/run --keep-summaries bench/out/tlraw/run/summaries
	total=$(($(stat -L -c %s "$1") * 8))
	measure "$R" 900 tl-cat cat bench/out/tlraw/in/*.json
	row "cat of the 8 traces ($(mb "$total") MB)" "$M_WALL" "$(calc "print $M_USER + $M_SYS")" "" ""
	cat_cpu=$(calc "print $M_USER + $M_SYS")
	measure "$R" 900 tl-raw "$PT" timeline bench/out/tlraw/run bench/out/tlraw/in -q
	row "perftracker timeline, raw events of the 8" "$M_WALL" "$(calc "print $M_USER + $M_SYS")" \
		"$(mib "$M_RSS_KB")" "$(mb "$(stat -c %s bench/out/tlraw/run/PerfDisplay/timeline.json.gz)")"
	say "slices: $("$PY" tests/tools/timeline_check.py structure bench/out/tlraw/run/PerfDisplay/timeline.json.gz)"
fi
