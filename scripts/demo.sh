#!/bin/sh
# `make demo`: the online flow end to end on this machine.  Starts 4 CPU
# workers (examples/train_gloo.py: DDP on gloo, rank 2 slowed by one Python
# function), waits until they train, runs `perftracker --trigger-on
# --auto-analyze` as the reference guide does on the master, stops the
# training and prints where the report is; serves it with `perftracker
# display` when run from a terminal (DEMO_SERVE=0 to skip, 1 to force).
# POSIX sh: the Makefile runs it with sh.
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BIN=$ROOT/build/perftracker
PYTHON=${PYTHON:-$ROOT/.venv/bin/python}
WORK=${DEMO_DIR:-/tmp/perftracker/demo}
NP=${DEMO_WORKERS:-4}
SECONDS_MAX=${DEMO_SECONDS:-300}
# DEMO_SAVE_RAW: the trigger's --save-raw-trace (master: rank 0's raw trace);
# DEMO_TRAIN_ARGS: more options of examples/train_gloo.py (the last one wins);
# DEMO_TRIGGER_ARGS: more options of the trigger

[ -x "$BIN" ] || { echo "demo: $BIN missing: run make first" >&2; exit 1; }
"$PYTHON" -c 'import torch' 2>/dev/null || {
	echo "demo: $PYTHON cannot import torch (make venv installs it into .venv/)" >&2; exit 1; }

rm -rf "$WORK/control" "$WORK/spool" "$WORK/stop"
mkdir -p "$WORK"
PYTHONPATH=$ROOT/python
PERFTRACKER_CONTROL_DIR=$WORK/control
PERFTRACKER_SPOOL_DIR=$WORK/spool
PERFTRACKER_BIN=$BIN
PERFTRACKER_AGENT_IDLE_EXIT=10
export PYTHONPATH PERFTRACKER_CONTROL_DIR PERFTRACKER_SPOOL_DIR PERFTRACKER_BIN \
	PERFTRACKER_AGENT_IDLE_EXIT
PORT=$("$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

pids=""
stop_training() {
	touch "$WORK/stop"
	for p in $pids; do wait "$p" 2>/dev/null || true; done
	pids=""
}
trap 'stop_training' EXIT INT TERM

echo "demo: starting $NP workers (logs in $WORK/rank*.log)"
r=0
while [ "$r" -lt "$NP" ]; do
	RANK=$r LOCAL_RANK=$r WORLD_SIZE=$NP LOCAL_WORLD_SIZE=$NP MASTER_ADDR=127.0.0.1 \
		MASTER_PORT=$PORT OMP_NUM_THREADS=1 \
		"$PYTHON" examples/train_gloo.py --seconds "$SECONDS_MAX" --stop-file "$WORK/stop" \
		--slow-rank 2 ${DEMO_TRAIN_ARGS:-} >"$WORK/rank$r.log" 2>&1 &
	pids="$pids $!"
	r=$((r + 1))
done

# Wait until every worker has registered and made a few steps.
i=0
until "$PYTHON" - "$WORK/control" "$NP" <<'EOF'
import glob, json, os, sys
d, n = sys.argv[1], int(sys.argv[2])
# Workers are seen through their node agent's file (agents/<host>.json),
# or by their own heartbeat when no agent runs (docs/collector.md).
steps = {}
for p in glob.glob(os.path.join(d, "agents", "*.json")):
    try:
        for e in json.load(open(p)).get("workers", []):
            steps[e["worker"]["id"]] = (e.get("hb") or {}).get("step", 0)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
for p in glob.glob(os.path.join(d, "heartbeats", "*.json")):
    try:
        w = os.path.basename(p)[:-5]
        steps[w] = max(steps.get(w, 0), json.load(open(p)).get("step", 0))
    except (OSError, ValueError, AttributeError):
        pass
sys.exit(0 if sum(s >= 5 for s in steps.values()) >= n else 1)
EOF
do
	i=$((i + 1))
	if [ "$i" -gt 240 ]; then
		echo "demo: workers did not start; see $WORK/rank*.log" >&2
		exit 1
	fi
	sleep 0.5
done
"$BIN" status

echo
RAW=${DEMO_SAVE_RAW:-master}
echo "demo: c4d_perftracker --trigger-on --auto-analyze --save-raw-trace $RAW --output-dir $WORK/output"
"$BIN" --trigger-on --auto-analyze --save-raw-trace "$RAW" --output-dir "$WORK/output" ${DEMO_TRIGGER_ARGS:-}
stop_training
RUN=$(ls -td "$WORK"/output/*/ | head -1)
RUN=${RUN%/}
echo
echo "demo: report:     $RUN/PerfDisplay/report.json"
echo "demo: page:       $RUN/PerfDisplay/index.html"
echo "demo: raw trace:  $RUN/raw_trace/ (rank 0 only)"
SERVE=${DEMO_SERVE:-auto}
if [ "$SERVE" = auto ]; then
	if [ -t 0 ] && [ -t 1 ]; then SERVE=1; else SERVE=0; fi
fi
if [ "$SERVE" = 1 ]; then
	echo "demo: serving it (Ctrl-C to stop)"
	exec "$BIN" display "$RUN"
fi
echo "demo: to view it: $BIN display $RUN"
