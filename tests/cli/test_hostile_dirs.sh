#!/bin/bash
# Another local user against the control and spool directories
# (docs/collector.md, "Directories and other users"; issue 11): a control
# directory made by someone else with a link planted for the agent's log, a
# link at the watchdog's and the records' temporary names in a directory
# others may write to, a link planted in the spool for the agent's cleanup.
# Every case runs twice: the job as root with `nobody` as the other user,
# and the job as `nobody` (setpriv) with root as the other user.  One skip
# (tests/run counts it as skipped) when this test cannot switch users (not
# root, no setpriv).
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null ||
	! setpriv --reuid=nobody --regid=nogroup --clear-groups true 2>/dev/null; then
	skip "another user against the control and spool directories" "needs root and setpriv to act as two users"
	exit 0
fi
PT_ROOT_ABS=$(cd "$PT_ROOT" && pwd)
# the binary itself, not tests/run's report keeper (another user runs it
# from a copy; this test writes no report)
PT_BIN=${PT_REAL_BIN:-$PT_BIN}
# A checkout nobody cannot reach (a private temporary clone, as in CI):
# run a copy of the binary and of the Python package from a folder it can.
if ! setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$PT_BIN" ||
	! setpriv --reuid=nobody --regid=nogroup --clear-groups test -r "$PT_ROOT_ABS/python/perftracker/__init__.py"; then
	COPY=$(mktemp -d)
	chmod 755 "$COPY"
	mkdir -p "$COPY/python"
	cp "$PT_BIN" "$COPY/perftracker"
	cp -r "$PT_ROOT_ABS/python/perftracker" "$PT_ROOT_ABS/python/c4d_perftracker_collector" "$COPY/python/"
	chmod -R a+rX "$COPY"
	PT_BIN=$COPY/perftracker
	PT_ROOT_ABS=$COPY
	trap 'rm -rf "$COPY"' EXIT
fi
# The job's interpreter (the repository's .venv) is inside that checkout
# too: the job needs no torch, so Debian's python3 (the same version, for
# which the extension is built) runs it then.
if ! setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$PYTHON"; then
	PYTHON=${SYSTEM_PYTHON:-/usr/bin/python3}
fi
if ! setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$PT_BIN"; then
	skip "another user against the control and spool directories" "user nobody cannot run '$PT_BIN'"
	exit 0
fi

# as USER CMD...: run CMD as root or as nobody
as() {
	local u=$1; shift
	if [ "$u" = root ]; then "$@"; else setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; fi
}

B=$(mktemp -d)
trap 'rm -rf "$TMP" "$B" ${COPY:+"$COPY"}; [ -n "$JOBPID" ] && kill -9 "$JOBPID" 2>/dev/null' EXIT
chmod 755 "$B"

# The job: waits for $GO before starting the collector (so that the other
# user can plant links at names made from its pid), then steps slowly.
cat >"$B/job.py" <<'EOF'
import os, sys, time
d = os.environ["JOBDIR"]
with open(os.path.join(d, "pid"), "w") as f:
    f.write(str(os.getpid()))
while not os.path.exists(os.path.join(d, "go")):
    time.sleep(0.02)
from perftracker import PerfTracker
t = PerfTracker()
end = time.time() + float(os.environ.get("JOB_SECONDS", "3"))
while time.time() < end:
    time.sleep(0.02)
    t.step()
print("job done")
EOF
chmod 644 "$B/job.py"

# start_job USER DIR: the job as USER with control DIR/control, spool
# DIR/spool; its pid in DIR/pid once it runs
start_job() {
	local u=$1 d=$2
	as "$u" env JOBDIR="$d" PYTHONPATH="$PT_ROOT_ABS/python" PERFTRACKER_CONTROL_DIR="$d/control" \
		PERFTRACKER_SPOOL_DIR="$d/spool" PERFTRACKER_HOST=node0 PERFTRACKER_BIN="$PT_BIN" \
		PERFTRACKER_AGENT_IDLE_EXIT=2 PERFTRACKER_HEARTBEAT_MS=50 RANK=0 WORLD_SIZE=1 \
		LOCAL_RANK=0 JOB_SECONDS=${JOB_SECONDS:-3} "$PYTHON" "$B/job.py" >"$d/job.log" 2>&1 &
	JOBPID=$!
	for _ in $(seq 200); do [ -s "$d/pid" ] && break; sleep 0.05; done
}

# stop the job's agent, if one started (pid in its lock)
stop_agent() {
	local lock pid
	for lock in "$1"/control/agents/*.lock; do
		[ -f "$lock" ] || continue
		pid=$(sed -n 's/.*"pid":\([0-9]*\).*/\1/p' "$lock")
		[ -n "$pid" ] && kill "$pid" 2>/dev/null
	done
}

victim_file() { # USER PATH: a file of USER holding "precious"
	echo precious >"$2"
	chown "$1" "$2"
	chmod 644 "$2"
}

for V in root nobody; do
	if [ $V = root ]; then A=nobody; else A=root; fi
	# ---- 1. control directory made by the other user, log link planted
	d=$B/$V-foreign
	mkdir -p "$d" && chmod 1777 "$d" # like /tmp
	victim_file $V "$d/victim"
	as $A mkdir -m 777 "$d/control" "$d/control/agents"
	as $A ln -s "$d/victim" "$d/control/agents/node0.log"
	start_job $V "$d"
	touch "$d/go"
	wait "$JOBPID"; rc=$?
	JOBPID=
	stop_agent "$d"
	if [ $rc = 0 ] && grep -q "job done" "$d/job.log"; then
		ok "$V: training runs on beside a control directory of $A"
	else
		not_ok "$V: training runs on beside a control directory of $A" "rc $rc"
		sed 's/^/# /' "$d/job.log" | head
	fi
	if grep -q "control.*owned by another user.*refusing to use it; collector disabled" "$d/job.log" &&
		[ "$(grep -c perftracker "$d/job.log")" = 1 ]; then
		ok "$V: one line says the control directory of $A is refused"
	else
		not_ok "$V: one line says the control directory of $A is refused"
		sed 's/^/# /' "$d/job.log" | head
	fi
	if [ "$(cat "$d/victim")" = precious ] && [ ! -e "$d/control/workers" ]; then
		ok "$V: nothing written through $A's directory and link"
	else
		not_ok "$V: nothing written through $A's directory and link" \
			"victim now: $(head -c 200 "$d/victim" | tr '\n' ' ')"
	fi

	# ---- 2. our own directories, writable by everyone: links planted at
	# the names the watchdog and the record writers used to use
	d=$B/$V-planted
	mkdir -p "$d" && chown $V "$d" && chmod 755 "$d"
	victim_file $V "$d/victim"
	as $V mkdir -m 777 "$d/control" "$d/control/stacks" "$d/control/workers" \
		"$d/control/heartbeats" "$d/spool"
	chmod 777 "$d/control" "$d/control/stacks" "$d/control/workers" "$d/control/heartbeats"
	JOB_SECONDS=6 start_job $V "$d"
	pid=$(cat "$d/pid")
	node=$(hostname)
	wid=node0_0_$pid
	as $A ln -s "$d/victim" "$d/control/stacks/.$wid.tmp"
	for n in $(seq 1 40); do
		as $A ln -s "$d/victim" "$d/control/workers/.$wid.json.$node.$pid.$n.tmp"
		as $A ln -s "$d/victim" "$d/control/heartbeats/.$wid.json.$node.$pid.$n.tmp"
	done
	touch "$d/go"
	# the worker is visible: its own heartbeat, or its agent's node file
	for _ in $(seq 200); do
		{ [ -f "$d/control/heartbeats/$wid.json" ] ||
			grep -qs "$wid" "$d"/control/agents/*.json; } && break
		sleep 0.05
	done
	as $V env PERFTRACKER_CONTROL_DIR="$d/control" "$PT_BIN" hang-check --stack-wait 3 \
		>"$d/hang.out" 2>&1
	wait "$JOBPID"
	JOBPID=
	stop_agent "$d"
	if grep -q "stacks from 1 of 1 workers" "$d/hang.out"; then
		ok "$V: the watchdog still answers in a directory others can write"
	else
		not_ok "$V: the watchdog still answers in a directory others can write"
		sed 's/^/# /' "$d/job.log" "$d/hang.out" | head -20
	fi
	if [ "$(cat "$d/victim")" = precious ]; then
		ok "$V: no record or stacks written through $A's links"
	else
		not_ok "$V: no record or stacks written through $A's links" \
			"victim now: $(head -c 200 "$d/victim" | tr '\n' ' ')"
	fi

	# ---- 3. a group-writable directory of the job's user keeps working
	d=$B/$V-group
	mkdir -p "$d" && chown $V "$d" && chmod 755 "$d"
	as $V mkdir -m 770 "$d/control" "$d/spool"
	chmod 770 "$d/control" "$d/spool"
	start_job $V "$d"
	touch "$d/go"
	wait "$JOBPID"
	JOBPID=
	stop_agent "$d"
	# (the worker unregisters when it exits; its folders stay)
	# (the workers' records, or their agent's folder: its node file is
	# removed when it exits)
	if { [ -d "$d/control/workers" ] || [ -d "$d/control/agents" ]; } &&
		[ -d "$d/control/stacks" ] && ! grep -q refusing "$d/job.log"; then
		ok "$V: a group-writable control directory of the job's user is used"
	else
		not_ok "$V: a group-writable control directory of the job's user is used"
		sed 's/^/# /' "$d/job.log" | head
	fi

	# ---- 4. the agent's spool cleanup never follows a link
	d=$B/$V-spool
	mkdir -p "$d" && chown $V "$d" && chmod 755 "$d"
	as $V mkdir -m 700 "$d/control" "$d/keep"
	as $V mkdir -m 777 "$d/spool"
	chmod 777 "$d/spool"
	victim_file $V "$d/keep/node0_0_1.json"
	as $A ln -s "$d/keep" "$d/spool/20250101-000000-abcd"
	# ... and in place of the job's own folder of the spool.
	js=$(as $V "$PT_BIN" agent --control-dir "$d/control" --spool-dir "$d/spool" --host node0 \
		--print-spool-dir)
	as $A ln -s "$d/keep" "$js"
	as $V "$PT_BIN" agent --control-dir "$d/control" --spool-dir "$d/spool" --host node0 \
		--once --no-hw >"$d/agent.log" 2>&1
	if [ -f "$d/keep/node0_0_1.json" ]; then
		ok "$V: the spool cleanup does not follow $A's link"
	else
		not_ok "$V: the spool cleanup does not follow $A's link"
		sed 's/^/# /' "$d/agent.log" | head
	fi

	# ---- 5. the agent refuses a spool of the other user, in one line
	d=$B/$V-agent
	mkdir -p "$d" && chmod 1777 "$d"
	as $V mkdir -m 700 "$d/control"
	as $A mkdir -m 777 "$d/spool"
	check_fails "$V: the agent refuses a spool directory of $A" \
		"spool.*owned by another user" as $V "$PT_BIN" agent --control-dir "$d/control" \
		--spool-dir "$d/spool" --host node0 --once --no-hw
done
