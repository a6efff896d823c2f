#!/bin/bash
# bench/run.sh - the analyzer's benchmarks (`make bench` runs this).
#
# Generates large traces from the real 8-rank DLRM set (bench/gen_trace.c:
# the steps repeated with shifted timestamps) into bench/out/ (gitignored),
# then measures, all in one run so the ratios are fair:
#   summarize of a 200 MB trace (and 1 GB with --full) beside cat, a read()
#   loop and Python's json.load, and of its .json.gz beside zcat; the same
#   for a 200 MB trace made from a TraceLens python_function trace;
#   analyze of 8 traces with --jobs 1 and --jobs 2;
#   diagnose of 10,000 worker summaries beside cat of the same files
#   (bench/bench_diagnose.sh); compare of two such 8-trace runs beside
#   analyzing/diagnosing both (bench/bench_compare.sh); then, when their
#   tools are present, the
#   PerfDisplay page (bench/bench_page.sh) and the collector's cost to a
#   training step (bench/bench_step.py); the timeline file from 1,000
#   summaries and with the raw events of 8 copies of the 200 MB trace
#   (bench/bench_timeline.sh).
# Prints the tables and writes them to bench/out/results.md.
#
# usage: bench/run.sh [--full] [--no-python] [--only LIST] [--skip LIST]
#        [--wait-idle]
#   LIST: comma-separated of summarize,analyze,diagnose,compare,page,step,timeline,
#   pytracer (only when named: real 4-rank jobs with a Kineto torch, ~10 min)
#   --wait-idle: first wait (up to 10 min) for the 1-minute load average to
#   fall below 0.5, so that other work does not share the cores
# env:   BENCH_FULL=1 (= --full), BENCH_SIZE (default 200M), BENCH_FULL_SIZE
#        (1G), BENCH_ANALYZE_SIZE (per trace; 64M, 100M with --full),
#        BENCH_DIAG_N (10000), BENCH_REPEAT (3), BENCH_NO_PYTHON=1,
#        BENCH_SKIP / BENCH_ONLY (= --skip / --only), BENCH_TORCH2_PYTHON
#        (.venv/bin/python) and BENCH_PYTRACER_ARGS for pytracer
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
cd "$(dirname "$0")/.."

full=${BENCH_FULL:-0}
skip=${BENCH_SKIP:-}
only=${BENCH_ONLY:-}
wait_idle=0
while [ $# -gt 0 ]; do
	case $1 in
	--full) full=1 ;;
	--no-python) export BENCH_NO_PYTHON=1 ;;
	--skip) skip=${2:-}; shift ;;
	--only) only=${2:-}; shift ;;
	--wait-idle) wait_idle=1 ;;
	-h | --help) sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench/run.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
	shift
done
# want NAME : is this benchmark selected?
want() {
	case ",$skip," in *",$1,"*) return 1 ;; esac
	[ -z "$only" ] && return 0
	case ",$only," in *",$1,"*) return 0 ;; esac
	return 1
}

# The jobs' interpreter: the torch-2 venv (make venv) when there is one.
[ -x .venv/bin/python ] && : "${PYTHON:=$PWD/.venv/bin/python}"
export PYTHON=${PYTHON:-/usr/bin/python3}
export PT=${PT:-build/perftracker}
GEN=${GEN:-build/bench/gen_trace}
export RL=${RL:-build/bench/readloop}
SRC_DIR=tests/data/dlrm
[ -d "$SRC_DIR" ] || SRC_DIR=/work/shared/traces/param/et_replay/tests/inputs/dlrm_kineto
OUT=bench/out
DATA=$OUT/data
export RES=$OUT/results.md
export LOGS=$OUT/logs
size=${BENCH_SIZE:-200M}
full_size=${BENCH_FULL_SIZE:-1G}
if [ "$full" = 1 ]; then an_size=${BENCH_ANALYZE_SIZE:-100M}; else an_size=${BENCH_ANALYZE_SIZE:-64M}; fi
diag_n=${BENCH_DIAG_N:-10000}

mkdir -p "$DATA" "$LOGS"
. bench/lib.sh

# Binaries: `make bench` has built them; when run by hand, build what is missing.
for b in "$PT" "$GEN" "$RL"; do
	[ -x "$b" ] || make -s "$b" || { echo "bench/run.sh: cannot build $b" >&2; exit 1; }
done

bytes_of() {  # 200M -> 200000000
	awk -v s="$1" 'BEGIN { m = 1; u = substr(s, length(s));
		if (u == "K" || u == "k") m = 1e3; else if (u == "M" || u == "m") m = 1e6;
		else if (u == "G" || u == "g") m = 1e9;
		printf "%.0f", (m == 1 ? s : substr(s, 1, length(s) - 1)) * m }'
}

# Room: the traces, their .gz (~2%), the analyze set, summaries; 20% slack.
need=$(( ($(bytes_of "$size") + 8 * $(bytes_of "$an_size")) / 1024 * 12 / 10 ))
[ "$full" = 1 ] && need=$((need + $(bytes_of "$full_size") / 1024 * 12 / 10))
avail=$(disk_avail_kb "$OUT")
if [ "$avail" -lt "$need" ]; then
	if [ "$full" = 1 ]; then
		echo "bench/run.sh: only $(mib "$avail") MiB free in $OUT, --full needs $(mib "$need"); running the default size" >&2
		full=0
		need=$(( ($(bytes_of "$size") + 8 * $(bytes_of "$an_size")) / 1024 * 12 / 10 ))
	fi
	if [ "$avail" -lt "$need" ]; then
		echo "bench/run.sh: only $(mib "$avail") MiB free in $OUT, need $(mib "$need")" >&2
		exit 1
	fi
fi

# gen SOURCE SIZE OUT : generate unless OUT is newer than the generator and source.
gen() {
	if [ -s "$3" ] && [ "$3" -nt "$GEN" ] && [ "$3" -nt "$1" ] && [ -f "$3.size" ] &&
	   [ "$(cat "$3.size")" = "$2" ]; then
		return 0
	fi
	"$GEN" -s "$2" -o "$3.tmp" "$1" 2>>"$LOGS/gen.log" && mv "$3.tmp" "$3" && echo "$2" >"$3.size"
}
gz() {
	if [ -s "$1.gz" ] && [ "$1.gz" -nt "$1" ]; then return 0; fi
	gzip -c "$1" >"$1.gz.tmp" && mv "$1.gz.tmp" "$1.gz"
}

if [ $wait_idle = 1 ]; then
	for _ in $(seq 120); do
		awk '{ exit !($1 < 0.5) }' /proc/loadavg && break
		sleep 5
	done
fi

rank0=$(ls "$SRC_DIR"/worker0_*.json | head -1)
# A second, Python-heavy source: a TraceLens trace with python_function
# events (with_stack), 42k of its 50k events; the small bert trace in
# tests/data when the shared copy is not there.
TL=/work/shared/traces/TraceLens/tests/traces/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz
tl_name=timesformer
if [ ! -f "$TL" ]; then
	TL=tests/data/TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz
	tl_name=bert_small
fi
t0=$(date +%s)
# The generator's self-check: one repetition must reproduce the source exactly.
"$GEN" -n 1 -o "$DATA/selfcheck.json" "$rank0" 2>/dev/null && cmp -s "$DATA/selfcheck.json" "$rank0" ||
	{ echo "bench/run.sh: $GEN -n 1 does not reproduce $rank0" >&2; exit 1; }
rm -f "$DATA/selfcheck.json"
{ want summarize || want analyze; } && echo "generating traces in $DATA (from $SRC_DIR) ..."
if want summarize; then
	gen "$rank0" "$size" "$DATA/dlrm0_$size.json" && gz "$DATA/dlrm0_$size.json" || exit 1
	if [ -f "$TL" ]; then
		[ -s "$DATA/$tl_name.src.json" ] && [ "$DATA/$tl_name.src.json" -nt "$TL" ] ||
			zcat "$TL" >"$DATA/$tl_name.src.json" || exit 1
		gen "$DATA/$tl_name.src.json" "$size" "$DATA/${tl_name}_$size.json" || exit 1
	fi
	if [ "$full" = 1 ]; then
		gen "$rank0" "$full_size" "$DATA/dlrm0_$full_size.json" && gz "$DATA/dlrm0_$full_size.json" || exit 1
	fi
fi
# analyze set: one trace per DLRM rank, named <host>_<rank>_<pid>.json
rm -rf "$DATA/analyze.tmp"
an_files=()
{ want analyze || want compare; } && for src in "$SRC_DIR"/worker*_*.json; do
	r=$(basename "$src" | sed 's/^worker\([0-9]*\)_.*/\1/')
	pid=$(grep -m1 -o '"pid": [0-9][0-9][0-9]*' "$src" | grep -o '[0-9]*$')
	f=$DATA/analyze/node0_${r}_${pid:-0}.json
	mkdir -p "$DATA/analyze"
	gen "$src" "$an_size" "$f" || exit 1
	an_files+=("$f")
done
# compare: the same set made from planted copies of its sources
# (tests/tools/plant_compare.py: a new 2 ms kernel in every rank's step,
# rank 5's GPU kernels 1.3x slower), named alike.
cmp_new=$DATA/compare_new
if want compare; then
	if [ ! -d "$DATA/planted" ] || [ tests/tools/plant_compare.py -nt "$DATA/planted" ]; then
		rm -rf "$DATA/planted" "$DATA/planted.tmp"
		/usr/bin/python3 tests/tools/plant_compare.py "$SRC_DIR" "$DATA/planted.tmp" --new planted_kernel --new-ms 2 &&
			/usr/bin/python3 tests/tools/plant_compare.py "$DATA/planted.tmp" "$DATA/planted" --scale-kernels 1.3 --rank 5 ||
			{ echo "bench/run.sh: cannot plant $SRC_DIR" >&2; exit 1; }
		rm -rf "$DATA/planted.tmp"
	fi
	mkdir -p "$cmp_new"
	for f in "${an_files[@]}"; do
		r=$(basename "$f" | sed 's/^node0_\([0-9]*\)_.*/\1/')
		gen "$(ls "$DATA"/planted/worker${r}_*.json | head -1)" "$an_size" "$cmp_new/$(basename "$f")" || exit 1
	done
fi
{ want summarize || want analyze || want compare; } && echo "generated in $(($(date +%s) - t0)) s"

# Header of the results file.
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
os=$(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")
ccv=$(${CC:-cc} --version 2>/dev/null | head -1)
{
	echo "# PerfTracker benchmark results"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores ($cpu), $(mib "$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)") MiB RAM; $os, kernel $(uname -r); $ccv, -O2."
	echo "Load average at start: $(cut -d' ' -f1-3 /proc/loadavg). Best of ${BENCH_REPEAT:-3} runs, warm page cache; MB = 10^6 bytes, MiB = 2^20."
	echo "Inputs made by build/bench/gen_trace from $SRC_DIR (the real 8-rank DLRM traces, one step each) and $TL (\`$tl_name\`: python_function events), their steps repeated with shifted timestamps."
} >"$RES"
cat "$RES"

if want summarize; then
	bash bench/bench_summarize.sh "$DATA/dlrm0_$size.json" "$DATA/dlrm0_$size.json.gz"
	[ -f "$DATA/${tl_name}_$size.json" ] && bash bench/bench_summarize.sh "$DATA/${tl_name}_$size.json"
	if [ "$full" = 1 ]; then
		bash bench/bench_summarize.sh "$DATA/dlrm0_$full_size.json" "$DATA/dlrm0_$full_size.json.gz"
	else
		say "(1 GB trace not run: use \`make bench BENCH_FULL=1\` or \`bench/run.sh --full\`.)"
	fi
fi

want analyze && bash bench/bench_analyze.sh "${an_files[@]}"

want compare && bash bench/bench_compare.sh "$DATA/analyze" "$cmp_new"

if want diagnose; then
	if [ -f bench/bench_diagnose.sh ]; then
		BENCH_DIAG_N=$diag_n bash bench/bench_diagnose.sh
	else
		say "(diagnose benchmark not present: bench/bench_diagnose.sh)"
	fi
fi

if want timeline; then
	gen "$rank0" "$size" "$DATA/dlrm0_$size.json" || exit 1
	bash bench/bench_timeline.sh "$DATA/dlrm0_$size.json"
fi

if want page; then
	if [ -f bench/bench_page.sh ] && [ -x /usr/bin/chromium ] && [ -f node_modules/playwright-core/package.json ]; then
		bash bench/bench_page.sh
	else
		say "(PerfDisplay page benchmark skipped: needs bench/bench_page.sh, /usr/bin/chromium and node_modules/playwright-core)"
	fi
fi

if want step; then
	if [ -f bench/bench_step.py ] && PYTHONPATH=python "$PYTHON" -c 'import torch, perftracker' 2>/dev/null; then
		echo
		echo "== collector cost to a training step (bench/bench_step.py)"
		md ""
		PYTHONPATH=python timeout 600 "$PYTHON" bench/bench_step.py >"$OUT/step.md" 2>"$LOGS/step.err" ||
			echo "(bench_step.py failed, status $?; see $LOGS/step.err)" >>"$OUT/step.md"
		cat "$OUT/step.md"
		cat "$OUT/step.md" >>"$RES"
	else
		say "(collector step benchmark skipped: needs torch and the perftracker package in python/)"
	fi
fi

if want pytracer; then
	# Not in the default set (real jobs, minutes): `bench/run.sh --only pytracer`.
	PYBIN=${BENCH_TORCH2_PYTHON:-.venv/bin/python}
	if [ -n "$only" ] && [ -f bench/bench_pytracer.py ] && [ -x "$PYBIN" ] &&
	   "$PYBIN" -c 'import torch, sys; sys.exit(not torch.autograd.kineto_available())' 2>/dev/null; then
		echo
		echo "== Python tracer on Kineto torch: kineto vs c (bench/bench_pytracer.py)"
		md ""
		PYTHON=$PYBIN timeout 3000 "$PYBIN" bench/bench_pytracer.py ${BENCH_PYTRACER_ARGS:-} \
			>"$OUT/pytracer.md" 2>"$LOGS/pytracer.err" ||
			echo "(bench_pytracer.py failed, status $?; see $LOGS/pytracer.err)" >>"$OUT/pytracer.md"
		cat "$OUT/pytracer.md"
		cat "$OUT/pytracer.md" >>"$RES"
	elif [ -n "$only" ]; then
		say "(Python tracer benchmark skipped: needs a torch with Kineto at $PYBIN (BENCH_TORCH2_PYTHON) and build/perftracker)"
	fi
fi

md "" "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "total $(($(date +%s) - t0)) s; results in $RES"
