#!/bin/bash
# bench/bench_page.sh - how fast the PerfDisplay page opens for a large job:
# a 1,000-worker report rendered in headless chromium (Debian's, through
# playwright-core; target: overview drawn in under 2 s).  Pages measured:
#   gen      bench/gen_report.py --workers N (every section, findings, hang,
#            and the "display" key: step times, class breakdown, heatmap);
#   gen-nodisplay  the same without the "display" key (fallback charts);
#   gen-timeline   gen plus a synthetic "timeline" key of N ranks
#            (tests/tools/gen_timeline_report.py): the Timeline view's draw
#            time against the Overview's on the same page (target: < 1 s);
#   diagnose N summaries made from the 8 real DLRM summaries
#            (bench/page_summaries.py), through `perftracker diagnose`.
# Each page is loaded BENCH_REPEAT times (default 5) in a fresh context;
# see bench/bench_page.mjs for what "ready", "paint" and "views" measure.
# Prints a table and appends it to $RES (bench/out/results.md).
#
# usage: bench/bench_page.sh      env: BENCH_PAGE_WORKERS (1000), BENCH_REPEAT, PT, PY
set -u
cd "$(dirname "$0")/.."
. bench/lib.sh

PT=${PT:-build/perftracker}
PY=${PY:-/usr/bin/python3}
N=${BENCH_REPEAT:-5}
W=${BENCH_PAGE_WORKERS:-1000}
OUT=bench/out/page
for need in "$PT" node_modules/playwright-core/package.json /usr/bin/chromium; do
	[ -e "$need" ] || { echo "bench_page: missing $need (make; apt-get install chromium)" >&2; exit 1; }
done
rm -rf "$OUT"
mkdir -p "$OUT"

pages=()
labels=()
# gen / gen-nodisplay
for v in gen gen-nodisplay; do
	mkdir -p "$OUT/$v/PerfDisplay"
	extra=()
	[ "$v" = gen-nodisplay ] && extra=(--no-display)
	"$PY" bench/gen_report.py --workers "$W" --hang "${extra[@]}" -o "$OUT/$v/PerfDisplay/report.json" || exit 1
	"$PT" display "$OUT/$v" --rebuild --no-serve >/dev/null || exit 1
	pages+=("$OUT/$v/PerfDisplay/index.html")
	labels+=("$v")
done
# gen-timeline: gen's report with a timeline of $W ranks
mkdir -p "$OUT/gen-timeline/PerfDisplay"
"$PY" tests/tools/gen_timeline_report.py "$OUT/gen/PerfDisplay/report.json" -n "$W" \
	-o "$OUT/gen-timeline/PerfDisplay/report.json" || exit 1
"$PT" display "$OUT/gen-timeline" --rebuild --no-serve >/dev/null || exit 1
pages+=("$OUT/gen-timeline/PerfDisplay/index.html")
labels+=("gen-timeline")
# diagnose: real summaries, replicated
mkdir -p "$OUT/src"
for t in tests/data/dlrm/worker*_*.json; do
	"$PT" summarize "$t" -o "$OUT/src/$(basename "$t" .json).summary.json" 2>>"$LOGS/page.err" || exit 1
done
"$PY" bench/page_summaries.py -n "$W" -o "$OUT/summaries" "$OUT"/src/*.summary.json || exit 1
if "$PT" diagnose "$OUT"/summaries/*.json -o "$OUT/diagnose" >/dev/null 2>>"$LOGS/page.err"; then
	# the report writer may still write its plain page: write this one
	"$PT" display "$OUT/diagnose" --rebuild --no-serve >/dev/null || exit 1
	pages+=("$OUT/diagnose/PerfDisplay/index.html")
	labels+=("diagnose")
else
	say "(diagnose of $W summaries failed; see $LOGS/page.err)"
fi

node bench/bench_page.mjs -n "$N" "${pages[@]}" >"$OUT/timing.jsonl" || exit 1

md "" "### PerfDisplay page, $W workers (headless chromium $(/usr/bin/chromium --version 2>/dev/null | grep -o '[0-9][0-9.]*' | head -1), $N cold loads each)"
echo
echo "== PerfDisplay page, $W workers ($N cold loads each; ms since navigation start)"
table "page" "report MB" "page MB" "ready med" "ready max" "paint med" "views med" "errors"
i=0
while read -r line; do
	p=${pages[$i]}
	rep=$(dirname "$p")/report.json
	vals=$(printf '%s' "$line" | "$PY" -c 'import json,sys; d=json.load(sys.stdin); e=d.get("each_ms",{}); print(d["ready_ms"]["median"], d["ready_ms"]["max"], d["paint_ms"]["median"], d["views_ms"]["median"], d["errors"], e.get("overview","-"), e.get("timeline","-"))')
	read -r rmed rmax pmed vmed errs ovw tlv <<<"$vals"
	row "${labels[$i]}" "$(mb "$(stat -c %s "$rep")")" "$(mb "$(stat -c %s "$p")")" "$rmed" "$rmax" "$pmed" "$vmed" "$errs"
	[ "$tlv" != - ] && tl_line="Timeline view, $W ranks (${labels[$i]}): ${tlv} ms median from the tab's activation to drawn (target: < 1000 ms); the Overview view on the same page ${ovw} ms, ratio $(calc "printf \"%.2f\", $tlv / ($ovw > 0 ? $ovw : 1)")."
	i=$((i + 1))
done <"$OUT/timing.jsonl"
[ -n "${tl_line:-}" ] && say "$tl_line"
say "ready: navigation start to the overview (findings, stats, GPU utilization and step-time charts) drawn; paint: the next frame; views: drawing the other tabs once, all together. Target: ready under 2000 ms for $W workers."
