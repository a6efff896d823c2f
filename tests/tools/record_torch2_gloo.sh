#!/bin/sh
# Records tests/data/torch2_gloo/: the raw traces of one trigger of the demo
# job on torch 2 (.venv, Kineto with Python events, torch's Flight Recorder
# in our "perftracker" member), 4 gloo ranks on this machine, rank 2's
# load_batch (which every rank runs) twice as long, 3 steps; gzipped.
#   sh tests/tools/record_torch2_gloo.sh [OUT_DIR]     (after make)
set -eu
cd "$(dirname "$0")/../.."
OUT=${1:-tests/data/torch2_gloo}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
DEMO_SERVE=0 DEMO_DIR=$WORK DEMO_SAVE_RAW=all DEMO_TRIGGER_ARGS="--steps 3" \
	DEMO_TRAIN_ARGS="--slow-rank -1 --slow-load-rank 2 --slow-load-factor 2 --load-ms 15 --hidden 64" \
	sh scripts/demo.sh >"$WORK/demo.log" 2>&1 || { cat "$WORK/demo.log" >&2; exit 1; }
mkdir -p "$OUT"
rm -f "$OUT"/*.json.gz
for f in "$WORK"/output/*/raw_trace/*_*_*.json; do
	gzip -9 -n -c "$f" >"$OUT/$(basename "$f").gz"
done
ls -l "$OUT"
