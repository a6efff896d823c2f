#!/bin/bash
# test_metrics.sh - the node agent's watch and /metrics (docs/watch.md): an
# agent reads the watch files of 4 ranks (tests/tools/watch_files.py: rank 2
# reaches every all-reduce 30 ms after the others, rank 3 without a Flight
# Recorder) and serves the Prometheus text format; exact lines; garbage
# requests and 50 slow clients stall neither /metrics nor the agent's own
# work; a port already taken is one log line, the agent runs on; `status`
# shows each rank's lateness and score; a real Prometheus server (Debian's
# package) scrapes the agent and answers topk(1, perftracker_straggler_score).
. "$(dirname "$0")/lib.sh"
cd "$PT_ROOT" || exit 1

free_port() { "$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# wait_for SECONDS CMD...: poll CMD until it succeeds (a limit, not a timing)
wait_for() {
	local n=$(($1 * 5)); shift
	while [ $n -gt 0 ]; do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; n=$((n - 1)); done
	return 1
}
get() { curl -s -m 5 "$@"; }

ctl=$TMP/control
nd=$TMP/node
mkdir -p "$nd"
port=$(free_port)
export PERFTRACKER_NODE_DIR=$nd
"$PT_BIN" agent --control-dir "$ctl" --host h --metrics-port "$port" --no-hw \
	2>"$TMP/agent.log" &
agent=$!
trap 'kill $agent $agent2 $prom 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT

wait_for 30 sh -c "ls -d '$nd'/perftracker-*/h-* 2>/dev/null | grep -q ." ||
	not_ok "the agent made its node directory" "$(cat "$TMP/agent.log")"
ndir=$(ls -d "$nd"/perftracker-*/h-* | head -1)
"$PYTHON" tests/tools/watch_files.py "$ndir" --ranks 4 --steps 100 --late 2:30 --no-fr 3 --host h
job=$(basename "$ctl")

score2="perftracker_straggler_score{job=\"$job\",host=\"h\",rank=\"2\"} 1"
if wait_for 30 sh -c "curl -s -m 5 http://127.0.0.1:$port/metrics | grep -qxF '$score2'"; then
	ok "rank 2's straggler score is 1 on /metrics"
else
	not_ok "rank 2's straggler score is 1 on /metrics" "$(get "http://127.0.0.1:$port/metrics" | head -40; cat "$TMP/agent.log")"
fi
get -D "$TMP/headers" "http://127.0.0.1:$port/metrics" >"$TMP/metrics"
check "content type is the text format 0.0.4" \
	grep -qi '^content-type: text/plain; version=0.0.4; charset=utf-8' "$TMP/headers"
for f in step_seconds collective_wait_seconds straggler_score lateness_seconds \
	 lost_gpu_seconds_per_minute straggler flight_recorder step; do
	check "family perftracker_$f has HELP, TYPE gauge and 4 ranks" sh -c "
		grep -q '^# HELP perftracker_$f ' '$TMP/metrics' &&
		grep -qx '# TYPE perftracker_$f gauge' '$TMP/metrics' &&
		[ \$(grep -c '^perftracker_$f{' '$TMP/metrics') = 4 ]"
done
# 100 ms steps; the other ranks wait 30 ms a step; rank 2 is 30 ms late
# (the median of 3 arrivals is the others'); 2 x 30 ms a step over 10 s of
# steps, blamed on rank 2 alone: 2 x 0.03 x 100 / 10 x 60 = 36 per minute
# (rank 3 has no collectives: its step times only).
for line in \
	"perftracker_step_seconds{job=\"$job\",host=\"h\",rank=\"0\"} 0.1" \
	"perftracker_collective_wait_seconds{job=\"$job\",host=\"h\",rank=\"0\"} 0.03" \
	"perftracker_collective_wait_seconds{job=\"$job\",host=\"h\",rank=\"2\"} 0" \
	"perftracker_lateness_seconds{job=\"$job\",host=\"h\",rank=\"2\"} 0.03" \
	"perftracker_straggler_score{job=\"$job\",host=\"h\",rank=\"0\"} 0" \
	"perftracker_lost_gpu_seconds_per_minute{job=\"$job\",host=\"h\",rank=\"2\"} 36" \
	"perftracker_flight_recorder{job=\"$job\",host=\"h\",rank=\"3\"} 0" \
	"perftracker_flight_recorder{job=\"$job\",host=\"h\",rank=\"2\"} 1" \
	"perftracker_step{job=\"$job\",host=\"h\",rank=\"1\"} 100"; do
	check "exact line: $line" grep -qxF "$line" "$TMP/metrics"
done
check "no function name or other label" sh -c "! grep '^perftracker' '$TMP/metrics' | grep -v '^perftracker_[a-z_]*{job=\"[^\"]*\",host=\"h\",rank=\"[0-9]*\"} '"
code=$(curl -s -o /dev/null -w '%{http_code}' -m 5 "http://127.0.0.1:$port/")
check "/ is 404" test "$code" = 404
code=$(curl -s -o /dev/null -w '%{http_code}' -m 5 -X POST -d x "http://127.0.0.1:$port/metrics")
check "POST is 405" test "$code" = 405

# The node file and status.
check "the node file names rank 2 with score 1" \
	"$PYTHON" -c "import json,sys; d=json.load(open('$ctl/watch/h.json')); r={x['rank']:x for x in d['ranks']}; sys.exit(not (r[2]['score']==1 and r[2]['late_s']==0.03 and r[0]['score']==0))"
"$PT_BIN" status --control-dir "$ctl" >"$TMP/status" 2>&1
check "status shows rank 2's lateness and score" grep -qE '^ +2 h +100 +100\.0 +0\.0 +30\.0 +1\.00 *$' "$TMP/status"
check "status says why rank 3 has step times only" \
	grep -qE '^ +3 h +100 +100\.0 +0\.0 +0\.0 +0\.00  no process group yet \(init_process_group not called\): step times only$' "$TMP/status"
"$PT_BIN" status --control-dir "$ctl" --json >"$TMP/status.json" 2>&1
check "status --json has the watch's ranks" \
	"$PYTHON" -c "import json,sys; d=json.load(open('$TMP/status.json')); w={x['rank']:x for x in d['watch']}; sys.exit(not (w[2]['score']==1 and w[3]['fr']=='none'))"

# Garbage and 50 slow clients, held open while /metrics is read and the
# agent goes on with its work (its node file's time moves on).
cat >"$TMP/hostile.py" <<'PY'
import os, socket, sys, time
port, hold = int(sys.argv[1]), float(sys.argv[2])
socks = []
for _ in range(50):   # slow clients: one byte a second
    s = socket.create_connection(("127.0.0.1", port)); s.send(b"G"); socks.append(s)
for junk in (os.urandom(4096), b"GET /metrics\r\n\r\n", b"GET /" + b"a" * 100000 + b" HTTP/1.1\r\n\r\n",
             b"GET /metrics HTTP/1.1\r\nX: " + b"b" * (1 << 20) + b"\r\n\r\n", b"\x00\xff" * 100):
    try:
        s = socket.create_connection(("127.0.0.1", port)); s.sendall(junk); socks.append(s)
    except OSError:
        pass
end = time.time() + hold
while time.time() < end:
    for s in socks[:50]:
        try: s.send(b"E")
        except OSError: pass
    time.sleep(1)
PY
"$PYTHON" "$TMP/hostile.py" "$port" 14 2>/dev/null &
hostile=$!
sleep 2
t_before=$("$PYTHON" -c "import json; print(json.load(open('$ctl/watch/h.json'))['time'])")
if get "http://127.0.0.1:$port/metrics" | grep -qxF "$score2"; then
	ok "/metrics answers while 50 slow clients and garbage are held"
else
	not_ok "/metrics answers while 50 slow clients and garbage are held"
fi
if wait_for 30 "$PYTHON" -c "import json,sys; sys.exit(not json.load(open('$ctl/watch/h.json'))['time'] > $t_before)"; then
	ok "the agent's watch goes on meanwhile (its node file is rewritten)"
else
	not_ok "the agent's watch goes on meanwhile (its node file is rewritten)"
fi
wait $hostile 2>/dev/null
check "the agent survived them" kill -0 $agent

# A port already taken: one line, and the agent runs on without /metrics.
"$PT_BIN" agent --control-dir "$TMP/control2" --host h2 --metrics-port "$port" --no-hw \
	2>"$TMP/agent2.log" &
agent2=$!
if wait_for 30 grep -q "metrics: not served: port $port on 127.0.0.1 is already in use" "$TMP/agent2.log"; then
	ok "a taken port is named in the agent's log"
else
	not_ok "a taken port is named in the agent's log" "$(cat "$TMP/agent2.log")"
fi
check "that agent runs on" kill -0 $agent2

# A real Prometheus scrapes the agent and answers the query.
if ! command -v prometheus >/dev/null 2>&1; then
	skip "Prometheus answers topk(1, perftracker_straggler_score) with rank 2" \
		"no prometheus binary (scripts/deps.sh installs Debian's package)"
else
	pport=$(free_port)
	cat >"$TMP/prom.yml" <<YML
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: perftracker
    honor_labels: true
    static_configs:
      - targets: ['127.0.0.1:$port']
YML
	prometheus --config.file="$TMP/prom.yml" --storage.tsdb.path="$TMP/tsdb" \
		--web.listen-address="127.0.0.1:$pport" >"$TMP/prom.log" 2>&1 &
	prom=$!
	q="http://127.0.0.1:$pport/api/v1/query?query=topk(1,perftracker_straggler_score)"
	if wait_for 60 sh -c "[ \"\$(curl -s -m 5 '$q' | '$PYTHON' -c \"import json,sys; r=json.load(sys.stdin)['data']['result']; print(r[0]['metric']['rank'] if r else '')\")\" = 2 ]"; then
		ok "Prometheus answers topk(1, perftracker_straggler_score) with rank 2"
	else
		not_ok "Prometheus answers topk(1, perftracker_straggler_score) with rank 2" "$(curl -s -m 5 "$q"; tail -5 "$TMP/prom.log")"
	fi
	check "its job label is the job's (honor_labels)" sh -c "curl -s -m 5 '$q' | grep -q '\"job\":\"$job\"'"
	kill $prom 2>/dev/null
fi
kill $agent $agent2 2>/dev/null
wait $agent 2>/dev/null
check "the agent stops on TERM" sh -c "! kill -0 $agent 2>/dev/null"
