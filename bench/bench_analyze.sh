#!/bin/bash
# bench/bench_analyze.sh - `perftracker analyze` of several traces with
# --jobs 1 and --jobs 2: wall time, CPU use ((user+sys)/wall) and speedup,
# beside `cat` of the same files.  Shows whether analyze keeps both cores
# busy.  Called by bench/run.sh; prints a table and appends it to $RES.
#
# usage: bench/bench_analyze.sh TRACE...
# env:   BENCH_REPEAT (runs per command, best kept; default 3), PT
set -u
cd "$(dirname "$0")/.."
. bench/lib.sh

PT=${PT:-build/perftracker}
N=${BENCH_REPEAT:-3}
[ $# -gt 0 ] || { echo "usage: bench/bench_analyze.sh TRACE..." >&2; exit 2; }
total=0
for f in "$@"; do
	[ -f "$f" ] || { echo "bench_analyze: '$f': no such file" >&2; exit 1; }
	total=$((total + $(stat -c %s "$f")))
done
to=$((60 + total / 5000000))

md "" "### analyze: $# traces, $(mb "$total") MB in all"
echo
echo "== analyze of $# traces ($(mb "$total") MB, best of $N runs, warm page cache)"
table "command" "wall s" "MB/s" "CPU s" "CPU / wall" "peak RSS MiB" "speedup"

cat "$@" >/dev/null

measure "$N" "$to" analyze-cat cat "$@"
cat_wall=$M_WALL
row "cat > /dev/null" "$M_WALL" "$(mbps "$total" "$M_WALL")" "" "" "" ""

declare -A wall
for j in 1 2; do
	rm -rf "bench/out/analyze-j$j"
	if measure "$N" "$to" "analyze-j$j" "$PT" analyze "$@" -o "bench/out/analyze-j$j" --jobs "$j"; then
		cpu=$(calc "print $M_USER + $M_SYS")
		wall[$j]=$M_WALL
		sp=
		[ $j = 2 ] && [ -n "${wall[1]:-}" ] && sp=$(calc "printf \"%.2fx\", ${wall[1]} / $M_WALL")
		row "perftracker analyze --jobs $j" "$M_WALL" "$(mbps "$total" "$M_WALL")" \
			"$(calc "printf \"%.2f\", $cpu")" "$(calc "printf \"%.0f%%\", 100 * $cpu / $M_WALL")" \
			"$(mib "$M_RSS_KB")" "$sp"
	else
		row "perftracker analyze --jobs $j" "failed (rc $M_RC)" "" "" "" "" ""
	fi
done
echo
md ""
if [ -n "${wall[1]:-}" ] && [ -n "${wall[2]:-}" ]; then
	say "analyze --jobs 2 is $(calc "printf \"%.2f\", ${wall[1]} / ${wall[2]}") x as fast as --jobs 1 on $(nproc) cores. CPU / wall above 100% means more than one core busy."
else
	say "analyze FAILED; see bench/out/logs/analyze-j*.err."
fi
exit 0
