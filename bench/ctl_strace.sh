#!/bin/sh
# ctl_strace.sh - operations on the shared control directory of one real
# node: 4 training processes (examples/train_gloo.py, DDP on gloo, real
# torch) with the collector, idle (no trigger), and their node agent, each
# traced with `strace -f -e trace=%file` for SECONDS (10).  An operation is
# a traced call that names a path under the control directory (open,
# stat, rename, unlink, mkdir, access, ...).  Run once with the agent (the
# default) and once as before the node channel (PERFTRACKER_AUTO_AGENT=0:
# every worker talks to the directory itself), the baseline of the same
# run.  Checks the issue's bounds: every worker <= 0.5 ops/s, the agent
# <= 3 ops/s.  docs/bench.md, "Control plane at scale".
#
#   sh bench/ctl_strace.sh [SECONDS]        (from the repository root, after make)
set -eu

SECS=${1:-10}
ROOT=$(pwd)
PY=${PYTHON:-$ROOT/.venv/bin/python}
[ -x "$PY" ] || PY=/usr/bin/python3
BIN=$ROOT/build/perftracker
[ -x "$BIN" ] || { echo "ctl_strace: build first (make)" >&2; exit 2; }
command -v strace >/dev/null || { echo "ctl_strace: strace not found" >&2; exit 2; }
TMP=$(mktemp -d)
PIDS=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null || true; done
	for l in "$TMP"/*/control/agents/*.lock; do
		[ -f "$l" ] && kill "$(sed 's/.*"pid":\([0-9]*\).*/\1/' "$l")" 2>/dev/null || true
	done
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

# run LABEL AUTO_AGENT: start 4 ranks, wait for steps, strace, print counts.
run() {
	label=$1
	auto=$2
	D=$TMP/$label
	mkdir -p "$D"
	port=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	PIDS=""
	for r in 0 1 2 3; do
		env PYTHONPATH="$ROOT/python" PERFTRACKER_CONTROL_DIR="$D/control" \
		    PERFTRACKER_SPOOL_DIR="$D/spool" PERFTRACKER_BIN="$BIN" PERFTRACKER_AUTO_AGENT="$auto" \
		    PERFTRACKER_AGENT_IDLE_EXIT=10 RANK=$r LOCAL_RANK=$r WORLD_SIZE=4 LOCAL_WORLD_SIZE=4 \
		    MASTER_ADDR=127.0.0.1 MASTER_PORT=$port OMP_NUM_THREADS=1 \
		    "$PY" "$ROOT/examples/train_gloo.py" --seconds 600 --stop-file "$D/stop" \
		    --slow-rank -1 --load-ms 10 >"$D/rank$r.log" 2>&1 &
		PIDS="$PIDS $!"
	done
	# Training: every rank past step 20 (status reads node files and
	# direct records alike).
	i=0
	while :; do
		n=$("$BIN" status --control-dir "$D/control" --json 2>/dev/null |
		    $PY -c 'import json,sys; print(sum(w["step"] >= 20 for w in json.load(sys.stdin)["workers"]))' \
		    2>/dev/null || echo 0)
		[ "$n" = 4 ] && break
		i=$((i + 1))
		[ $i -lt 600 ] || { echo "ctl_strace: workers did not start" >&2; tail "$D"/rank*.log >&2; exit 1; }
		sleep 0.5
	done
	sleep 3   # past the agent's start-up (published, direct records removed)
	agent=""
	if [ "$auto" = 1 ]; then
		agent=$(sed 's/.*"pid":\([0-9]*\).*/\1/' "$D"/control/agents/*.lock)
	fi
	k=0
	for p in $PIDS $agent; do
		timeout -s INT "$SECS" strace -f -qq -e trace=%file -o "$D/strace.$k" -p "$p" 2>/dev/null &
		k=$((k + 1))
	done
	wait_strace=$(jobs -p | tail -n "$k")
	sleep "$SECS"
	sleep 1
	k=0
	for p in $PIDS $agent; do
		what="worker"
		[ "$p" = "$agent" ] && what="agent"
		n=$(grep -F "$D/control" "$D/strace.$k" 2>/dev/null | grep -vc 'resumed>' || true)
		rate=$(awk -v n="$n" -v s="$SECS" 'BEGIN { printf "%.2f", n / s }')
		echo "$label $what pid $p: $n operations in $SECS s = $rate/s"
		# What the agent did, by call and file.
		[ "$what" = agent ] && grep -F "$D/control" "$D/strace.$k" | grep -v 'resumed>' |
			sed -E 's/^[0-9]+ +([a-z0-9_]+)\(([A-Z_]+, *)?"([^"]*)".*/\1 \3/' |
			sed -E "s|$D/control/||; s|\.[^ ]*\.tmp\$|.<tmp>|" | sort | uniq -c |
			sed 's/^/    /'
		k=$((k + 1))
	done
	touch "$D/stop"
	for p in $PIDS; do wait "$p" 2>/dev/null || true; done
	: "$wait_strace"
}

run agent 1 | tee "$TMP/agent.txt"
run direct 0 | tee "$TMP/direct.txt"
fail=0
awk '$2 == "worker" { r = $NF; sub("/s", "", r); if (r + 0 > 0.5) exit 1 }' "$TMP/agent.txt" || {
	echo "ctl_strace: FAIL: a worker makes more than 0.5 operations/s with its agent"; fail=1; }
awk '$2 == "agent" { r = $NF; sub("/s", "", r); if (r + 0 > 3) exit 1 }' "$TMP/agent.txt" || {
	echo "ctl_strace: FAIL: the agent makes more than 3 operations/s"; fail=1; }
[ $fail = 0 ] && echo "ctl_strace: ok (workers <= 0.5/s, agent <= 3/s)"
exit $fail
