#!/bin/bash
# bench/bench_tb_folder.sh - `perftracker analyze` of a tensorboard folder
# of 4 ranks x 240 profiling cycles (bench/gen_tb_cycles.py, replicated
# from the real tests/data/torch2_tb), with --jobs 1 and 2, beside `cat`
# and `zcat` of the same files in the same run; checks it reads as 4
# workers of 480 steps (2 active steps a cycle).  Best of BENCH_REPEAT;
# wall time from bash's EPOCHREALTIME, CPU from time(1) (10 ms steps).
#
# usage: bench/bench_tb_folder.sh [CYCLES]   env: BENCH_REPEAT (3), PT
set -u
cd "$(dirname "$0")/.."
PT=${PT:-build/perftracker}
N=${BENCH_REPEAT:-3}
C=${1:-240}
D=bench/out/tb$C
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

if [ ! -d "$D" ] || [ bench/gen_tb_cycles.py -nt "$D" ]; then
	rm -rf "$D"
	python3 bench/gen_tb_cycles.py "$D" --cycles "$C" || exit 1
fi
nf=$(ls "$D" | wc -l)
bytes=$(cat "$D"/* | wc -c)
echo "== $D: $nf files, $bytes bytes (gzip), $(zcat "$D"/* | wc -c) bytes of JSON"

# best NAME CMD...: the fastest of N runs, "wall cpu" in seconds
best() {
	local name=$1 i w c bw=999999 bc=0
	shift
	for i in $(seq "$N"); do
		local t0=$EPOCHREALTIME
		/usr/bin/time -f "%U %S" -o "$OUT/t" "$@" >/dev/null 2>"$OUT/err" || { cat "$OUT/err"; exit 1; }
		w=$(echo "$EPOCHREALTIME - $t0" | bc)
		read -r u s <"$OUT/t"
		c=$(echo "$u + $s" | bc)
		if [ "$(echo "$w < $bw" | bc)" = 1 ]; then bw=$w; bc=$c; fi
	done
	printf '| %-28s | %7.3f | %6.2f |\n' "$name" "$bw" "$bc"
	echo "$bw" >"$OUT/$name"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) (2 cores)"
echo "| command | wall s | CPU s |"
echo "|---|---|---|"
best cat bash -c "cat $D/* >/dev/null"
best zcat bash -c "zcat $D/* >/dev/null"
best "analyze --jobs 1" "$PT" analyze "$D" -o "$OUT/a1" -q -j1
best "analyze --jobs 2" "$PT" analyze "$D" -o "$OUT/a2" -q -j2
echo "ratio analyze -j2 / cat: $(echo "scale=1; $(cat "$OUT/analyze --jobs 2") / $(cat "$OUT/cat")" | bc)x," \
	"/ zcat: $(echo "scale=2; $(cat "$OUT/analyze --jobs 2") / $(cat "$OUT/zcat")" | bc)x"
python3 - "$OUT/a2/PerfDisplay/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
w = r["workers"]
print("workers:", len(w), "steps each:", sorted({len(v["steps"]) for v in w.values()}),
      "files each:", sorted({len(v["files"]) for v in w.values()}),
      "first finding:", r["findings"][0]["workers"], r["findings"][0]["function"])
PY
