#!/bin/bash
# A trigger that is killed while it waits (issue 11): with SIGTERM or
# Ctrl-C it cleans up (trigger.json done, lock released); with SIGKILL it
# cannot, and its trigger.json reads as done at once (its owner is gone),
# not active until its deadline.  Either way no empty output folder is left.
# The worker is written by hand (a live `sleep` pid with fresh heartbeats)
# and never answers, so the trigger waits until it is killed.
. "$(dirname "$0")/lib.sh"

C=$TMP/control
O=$TMP/output
sleep 300 & S0=$!
trap 'kill $S0 $HB 2>/dev/null; rm -rf "$TMP"' EXIT

# keep the worker's heartbeat fresh while the test runs
"$PYTHON" - "$C" "$S0" <<'EOF' &
import json, os, socket, sys, time
c, pid = sys.argv[1], int(sys.argv[2])
wid = "h_0_%d" % pid
for sub in ("workers", "heartbeats"):
    os.makedirs(os.path.join(c, sub), exist_ok=True)
with open(os.path.join(c, "workers", wid + ".json"), "w") as f:
    json.dump({"format": "perftracker-worker", "version": 1, "id": wid, "host": "h",
               "node": socket.gethostname(), "rank": 0, "local_rank": 0, "world_size": 1,
               "local_world_size": 1, "pid": pid, "started": time.time() - 60}, f)
step, end = 100, time.time() + 120
while time.time() < end:
    now = time.time()
    tmp = os.path.join(c, "heartbeats", ".hb.tmp")
    with open(tmp, "w") as f:
        json.dump({"format": "perftracker-heartbeat", "step": step, "step_time": now, "time": now,
                   "rate": 10.0, "state": "idle", "trigger": ""}, f)
    os.rename(tmp, os.path.join(c, "heartbeats", wid + ".json"))
    step += 2
    time.sleep(0.2)
EOF
HB=$!
for _ in $(seq 100); do [ -f "$C/heartbeats/h_0_$S0.json" ] && break; sleep 0.05; done

# start_trigger: in the background, until trigger.json is active
start_trigger() {
	"$PT_BIN" --trigger-on --control-dir "$C" --output-dir "$O" --wait 1000 --steps 2 \
		--timeout 600 >"$TMP/tr.out" 2>"$TMP/tr.err" &
	TP=$!
	for _ in $(seq 200); do
		grep -q '"state":"active"' "$C/trigger.json" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}
state() { "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["trigger"]["state"])' < <("$PT_BIN" status --control-dir "$C" --json 2>/dev/null); }
# (A hidden .<name>.claim may stay after SIGKILL: the run directory's name
# claim, docs/collector.md; the next trigger sweeps it.)
no_run_dir() { [ -z "$(ls -A "$O" 2>/dev/null | grep -v '^\..*\.claim$')" ]; }

for sig in TERM INT KILL; do
	if ! start_trigger; then
		not_ok "SIG$sig: trigger started" "$(cat "$TMP/tr.err")"
		kill -9 $TP 2>/dev/null
		continue
	fi
	[ "$(state)" = active ] && ok "SIG$sig: the trigger is active while it waits" ||
		not_ok "SIG$sig: the trigger is active while it waits" "$(state)"
	kill -$sig $TP
	wait $TP 2>/dev/null
	s=$(state)
	if [ "$s" = done ]; then
		ok "SIG$sig: trigger.json is no longer active"
	else
		not_ok "SIG$sig: trigger.json is no longer active" "state $s; $(cat "$C/trigger.json")"
	fi
	if no_run_dir; then
		ok "SIG$sig: no empty output folder"
	else
		not_ok "SIG$sig: no empty output folder" "$(ls -laR "$O" | head)"
	fi
	# the next trigger is not refused (the lock is released or stale)
	if [ $sig != KILL ] && [ -e "$C/trigger.lock" ]; then
		not_ok "SIG$sig: the lock is released"
	else
		ok "SIG$sig: the lock is released or stale"
	fi
	rm -rf "$O"
done
