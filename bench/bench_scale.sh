#!/bin/bash
# bench/bench_scale.sh - `perftracker diagnose` at 100,000 workers in two
# phases (docs/diagnose.md "Two phases"): N summaries made by
# bench/gen_summaries.py from the 8 real DLRM ranks (1 planted DtoD worker
# and 1 slow GPU per 1,000), their digests by `perftracker digest`; then
# `cat` of the digests and of the summaries beside `diagnose` of the same
# files (wall, CPU, peak RSS, the phases from --time), the report's file
# sizes and whether every planted worker is named.  With BENCH_SCALE_FULL=1
# also `diagnose --digests never` (every summary in full) as the baseline.
#
# env: BENCH_SCALE_N (100000), BENCH_REPEAT (2), BENCH_SCALE_DIR (where the
#      summaries go: bench/out/data/summaries_N, 16 GB at 100,000),
#      BENCH_SCALE_FULL, PT (build/perftracker), PYTHON (/usr/bin/python3)
set -u
cd "$(dirname "$0")/.."
. bench/lib.sh

PT=${PT:-build/perftracker}
PY=${PYTHON:-/usr/bin/python3}
N=${BENCH_SCALE_N:-100000}
R=${BENCH_REPEAT:-2}
DIR=${BENCH_SCALE_DIR:-bench/out/data/summaries_$N}
TPL=bench/out/data/summaries_dlrm
OUT=bench/out/scale

[ -x "$PT" ] || make -s "$PT" || { echo "bench_scale: cannot build $PT" >&2; exit 1; }
if [ ! -f "$DIR/.complete" ]; then
	rm -rf "$TPL" "$DIR"
	echo "generating $N summaries and their digests in $DIR ..."
	"$PT" analyze tests/data/dlrm -q -o bench/out/data/dlrm_report --keep-summaries "$TPL" ||
		{ echo "bench_scale: analyze of the DLRM set failed" >&2; exit 1; }
	"$PY" bench/gen_summaries.py "$TPL" "$N" "$DIR" &&
		"$PT" digest "$DIR" >/dev/null || { echo "bench_scale: generation failed" >&2; exit 1; }
	touch "$DIR/.complete"
fi
bytes() { find "$DIR" -name "$1" -print0 | du -cb --files0-from=- | tail -1 | cut -f1; }
CATALL='find "$0" -name "$1" -print0 | xargs -0 cat >/dev/null'
sb=$(bytes '*.summary.json')
db=$(bytes '*.summary.digest')
to=$((600 + N / 100))

md "" "### diagnose at scale: $N workers, summaries $(mb "$sb") MB, digests $(mb "$db") MB"
echo
echo "== diagnose of $N workers (best of $R runs; the page cache holds what the machine's memory allows)"
table "command" "wall s" "CPU s" "peak RSS MiB"
measure "$R" "$to" scale-cat-digests sh -c "$CATALL" "$DIR" '*.summary.digest'
row "cat of the digests" "$M_WALL" "$(calc "print $M_USER + $M_SYS")" ""
measure "$R" "$to" scale-cat-summaries sh -c "$CATALL" "$DIR" '*.summary.json'
row "cat of the summaries" "$M_WALL" "$(calc "print $M_USER + $M_SYS")" ""
rm -rf "$OUT"
if measure "$R" "$to" scale-diagnose "$PT" diagnose "$DIR" -o "$OUT" -q --time; then
	row "perftracker diagnose (two phases)" "$M_WALL" "$(calc "print $M_USER + $M_SYS")" \
		"$(mib "$M_RSS_KB")"
	say "phases (last run): $(sed 's/^perftracker: time: //' "$LOGS/scale-diagnose.err" | tr '\n' ';' | sed 's/;$//')"
	say "report: $(for f in report.json index.html timeline.json.gz; do printf '%s %s MB; ' "$f" "$(mb "$(stat -c %s "$OUT/PerfDisplay/$f")")"; done)"
	say "$("$PY" - "$OUT/PerfDisplay/report.json" "$N" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); n = int(sys.argv[2])
named = {}
for f in r["findings"]:
    for w in f.get("workers", []):
        named.setdefault(f["category"], set()).add(w)
dtod = {"node%05d_0_%d.json" % (i // 8, 10000 + i) for i in range(0, n, 1000)}
slow = {"node%05d_4_%d.json" % (i // 8, 10000 + i) for i in range(500, n, 1000)}
print("planted named: %d of %d DtoD workers, %d of %d slow GPUs; %d findings" % (
    len(dtod & named.get("GPU memory operations", set())), len(dtod),
    len(slow & named.get("GPU Compute", set())), len(slow), len(r["findings"])))
PY
)"
else
	row "perftracker diagnose (two phases)" "failed (rc $M_RC)" "" ""
	tail -5 "$LOGS/scale-diagnose.err"
fi
if [ -n "${BENCH_SCALE_FULL:-}" ]; then
	rm -rf "$OUT-full"
	if measure 1 "$to" scale-full "$PT" diagnose "$DIR" -o "$OUT-full" -q --time --digests never; then
		row "perftracker diagnose --digests never" "$M_WALL" "$(calc "print $M_USER + $M_SYS")" \
			"$(mib "$M_RSS_KB")"
	else
		row "perftracker diagnose --digests never" "failed (rc $M_RC)" "" ""
	fi
fi
