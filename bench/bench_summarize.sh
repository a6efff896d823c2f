#!/bin/bash
# bench/bench_summarize.sh - `perftracker summarize` speed and memory on one
# large trace, beside the baselines measured in the same run: `cat` and a
# read()+memchr loop (plain reads, warm page cache) and Python's json.load;
# and, given the .json.gz of the same trace, summarize of it beside `zcat`.
# Called by bench/run.sh; prints a table and appends it to $RES.
#
# usage: bench/bench_summarize.sh TRACE.json [TRACE.json.gz]
# env:   BENCH_REPEAT (runs per command, best kept; default 3), PT, PY,
#        BENCH_NO_PYTHON=1 (skip json.load)
set -u
cd "$(dirname "$0")/.."
. bench/lib.sh

PT=${PT:-build/perftracker}
RL=${RL:-build/bench/readloop}
PY=${PY:-/usr/bin/python3}
N=${BENCH_REPEAT:-3}
# Python's json.load of a Kineto trace peaks at about 6x the file size
# (measured: 1149 MiB for the 202 MB DLRM trace); ask for 8x before trying.
PY_MEM_FACTOR=8

f=$1
gz=${2:-}
[ -f "$f" ] || { echo "bench_summarize: '$f': no such file" >&2; exit 1; }
size=$(stat -c %s "$f")
name=$(basename "$f")
mkdir -p bench/out/summaries
sumout=bench/out/summaries/${name%.json}.summary.json
# generous per-run limits: 30 s + 1 s per 10 MB (summarize at 10 MB/s would still finish)
to=$((30 + size / 10000000))
pyto=$((60 + size / 2000000))

sz=$(mb "$size")
md "" "### summarize: \`$name\` ($sz MB)"
echo
echo "== $name ($sz MB, best of $N runs, warm page cache)"
table "command" "wall s" "MB/s" "CPU s" "MB/CPU-s" "peak RSS MiB" "RSS / file"

# one row from the M_* variables: LABEL BYTES
result_row() {
	local label=$1 bytes=$2
	if [ "$M_RC" -ne 0 ]; then
		row "$label" "failed (rc $M_RC)" "" "" "" "" ""
		return 1
	fi
	local cpu
	cpu=$(calc "printf \"%.2f\", $M_USER + $M_SYS")
	row "$label" "$M_WALL" "$(mbps "$bytes" "$M_WALL")" "$cpu" \
		"$(calc "print ($cpu > 0) ? sprintf(\"%.0f\", $bytes / 1e6 / $cpu) : \"-\"")" "$(mib "$M_RSS_KB")" \
		"$(calc "printf \"%.3f\", $M_RSS_KB * 1024 / $size")"
}

cat "$f" >/dev/null  # warm the page cache

measure "$N" "$to" cat cat "$f"
result_row "cat > /dev/null" "$size"
cat_wall=$M_WALL

rl_wall=
if [ -x "$RL" ]; then
	measure "$N" "$to" readloop "$RL" "$f"
	result_row "read() + memchr loop" "$size" && rl_wall=$M_WALL
fi

sum_ok=0
measure "$N" "$to" "summarize-$name" "$PT" summarize "$f" -o "$sumout"
sum_rc=$M_RC
if result_row "perftracker summarize" "$size"; then
	sum_ok=1
	sum_wall=$M_WALL sum_rss=$M_RSS_KB sum_cpu=$(calc "print $M_USER + $M_SYS")
fi

py_ok=0
need=$((size / 1024 * PY_MEM_FACTOR))
avail=$(mem_avail_kb)
if [ "${BENCH_NO_PYTHON:-0}" = 1 ]; then
	py_note="json.load skipped (BENCH_NO_PYTHON=1)"
elif [ "$avail" -lt "$need" ]; then
	py_note="json.load skipped: needs about $(mib "$need") MiB, $(mib "$avail") MiB available"
else
	py_note=
	# one run: it is slow and its time is stable
	measure 1 "$pyto" "jsonload-$name" "$PY" -c \
		'import json, sys; f = open(sys.argv[1], "rb"); json.load(f)' "$f"
	result_row "python3 json.load" "$size" && { py_ok=1; py_wall=$M_WALL py_rss=$M_RSS_KB; }
fi

if [ -n "$gz" ] && [ -f "$gz" ]; then
	gsize=$(stat -c %s "$gz")
	cat "$gz" >/dev/null
	measure "$N" "$to" zcat zcat "$gz"
	result_row "zcat .gz > /dev/null" "$size"
	zcat_wall=$M_WALL
	measure "$N" "$to" "summarize-gz-$name" "$PT" summarize "$gz" -o "${sumout%.summary.json}.gz.summary.json"
	result_row "perftracker summarize .gz" "$size" && gz_wall=$M_WALL
fi

echo
md ""
[ -n "$py_note" ] && say "$py_note."
say "MB/s are uncompressed bytes ($sz MB) / wall time$( [ -n "$gz" ] && echo "; the .gz file is $(mb "$gsize") MB")."
if [ $sum_ok = 1 ]; then
	rate=$(mbps "$size" "$sum_wall")
	r_cat=$(calc "printf \"%.2f\", $cat_wall / $sum_wall")
	r_rss=$(calc "printf \"%.3f\", $sum_rss * 1024 / $size")
	r_cpu=$(calc "printf \"%.0f\", 100 * $sum_cpu / $sum_wall")
	t_rate=$(calc "print ($rate >= 400) ? \"met\" : \"MISSED\"")
	t_mem=$(calc "print ($r_rss < 1/3) ? \"met\" : \"MISSED\"")
	say "summarize: $rate MB/s on one core ($(calc "printf \"%.0f\", $size / 1e6 / $sum_cpu") MB per CPU-second; CPU $r_cpu% of wall): $r_cat x the speed of cat ($(mbps "$size" "$cat_wall") MB/s)$( [ -n "$rl_wall" ] && echo ", $(calc "printf \"%.2f\", $rl_wall / $sum_wall") x the read()+memchr loop ($(mbps "$size" "$rl_wall") MB/s)"). Target >= 400 MB/s: $t_rate."
	say "summarize peak RSS: $(mib "$sum_rss") MiB = $r_rss x the file size. Target < 1/3: $t_mem."
	if [ $py_ok = 1 ]; then
		say "python3 json.load takes $(calc "printf \"%.1f\", $py_wall / $sum_wall") x as long as summarize ($py_wall s vs $sum_wall s) and peaks at $(calc "printf \"%.1f\", $py_rss / $sum_rss") x its memory ($(mib "$py_rss") MiB)."
	fi
	# what summarize found: a check that it read the whole trace
	if [ -x "$PY" ]; then
		say "$("$PY" -c 'import json, sys
s = json.load(open(sys.argv[1]))
print("summary: %d events, %d steps, window %.1f ms, %d patterns, GPU util %.3f" % (
    s["nevents"], len(s["steps"]), s["window"]["ms"], len(s["patterns"]), s["gpu_util"]))' "$sumout" 2>&1 | tail -1)."
	fi
	if [ -n "${gz_wall:-}" ]; then
		say "summarize of the .gz: $(mbps "$size" "$gz_wall") MB/s uncompressed, $(calc "printf \"%.2f\", $zcat_wall / $gz_wall") x the speed of zcat alone ($(mbps "$size" "$zcat_wall") MB/s)."
	fi
else
	say "summarize FAILED (status $sum_rc); see bench/out/logs/summarize-$name.err."
fi
exit 0
