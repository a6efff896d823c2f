#!/bin/bash
# Terminal escapes (issue 11): names with ESC, BEL, CR and a C1 CSI, from a
# control directory (host, worker id), a stack dump (function and file) and a
# file name, reach stdout and stderr of `status`, `hang-check` (its text and
# the findings of the report it writes) and error messages only as visible
# escapes (util/term.c): no raw control byte is printed.
. "$(dirname "$0")/lib.sh"

C=$TMP/control
sleep 300 & S0=$!
sleep 300 & S1=$!
trap 'kill $S0 $S1 2>/dev/null; rm -rf "$TMP"' EXIT

# A host and a function whose names would clear the screen, retitle the
# window, ring the bell and rewrite the line; a C1 CSI (U+009B) too.
"$PYTHON" - "$C" "$S0" "$S1" <<'EOF'
import json, os, socket, sys, time
c, pids = sys.argv[1], [int(x) for x in sys.argv[2:]]
now = time.time()
evil = "h\x1b[2J\x1b]0;pwned\x07\r\u009b31m"
for sub in ("workers", "heartbeats", "stacks"):
    os.makedirs(os.path.join(c, sub), exist_ok=True)
for r, pid in enumerate(pids):
    wid = "%s_%d_%d" % (evil, r, pid)
    with open(os.path.join(c, "workers", wid + ".json"), "w") as f:
        json.dump({"format": "perftracker-worker", "version": 1, "id": wid, "host": evil,
                   "node": socket.gethostname(), "rank": r, "local_rank": r, "world_size": 2,
                   "local_world_size": 2, "pid": pid, "started": now - 600}, f)
    with open(os.path.join(c, "heartbeats", wid + ".json"), "w") as f:
        json.dump({"format": "perftracker-heartbeat", "step": 500 - r, "step_time": now - 120,
                   "time": now - 0.5, "rate": 0.0, "state": "idle", "trigger": ""}, f)
    fn = "wait_here" if r == 0 else "stuck\x1b[2J\x07\r_here"
    with open(os.path.join(c, "stacks", wid + ".txt"), "w", encoding="utf-8") as f:
        f.write("format: perftracker-stacks 1\nworker: %s\nhost: h\nrank: %d\npid: %d\n"
                "training_thread: 0x1\nreason: stalled\nrequest: \ntime: %.3f\nstep: %d\n"
                "step_time: %.3f\n\nThread 0x0000000000000001 (most recent call first):\n"
                '  File "/job/tr\x1bain.py", line 57 in %s\n'
                '  File "/job/train.py", line 99 in <module>\n'
                % (wid, r, pid, now - 60, 500 - r, now - 120, fn))
EOF

# raw: does FILE hold a raw ESC, BEL, CR or C1 CSI?
raw() { LC_ALL=C grep -q "$(printf '[\033\007\r]')" "$1" || LC_ALL=C grep -q "$(printf '\302\233')" "$1"; }

"$PT_BIN" status --control-dir "$C" >"$TMP/st.out" 2>"$TMP/st.err"
if ! raw "$TMP/st.out" && ! raw "$TMP/st.err" && grep -qF 'h\x1b[2J\x1b]0;pwned\x07\x0d\u009b31m' "$TMP/st.out"; then
	ok "status: host names escaped"
else
	not_ok "status: host names escaped"; od -c "$TMP/st.out" | head -20 | sed 's/^/# /'
fi

"$PT_BIN" hang-check --control-dir "$C" --hang-timeout 60 --stack-wait 0.3 -o "$TMP/out" \
	>"$TMP/hc.out" 2>"$TMP/hc.err"
rc=$?
if [ $rc = 0 ] && ! raw "$TMP/hc.out" && ! raw "$TMP/hc.err" &&
	grep -qF 'stuck\x1b[2J\x07\x0d_here' "$TMP/hc.out" && grep -qF '/job/tr\x1bain.py' "$TMP/hc.out"; then
	ok "hang-check: function and file names escaped"
else
	not_ok "hang-check: function and file names escaped" "rc $rc"; od -c "$TMP/hc.out" | head -30 | sed 's/^/# /'
fi
# the report keeps the names as they are (JSON escapes them its own way)
if grep -qF 'stuck\u001b[2J\u0007\r_here' "$TMP/out/PerfDisplay/report.json"; then
	ok "report.json keeps the exact name"
else
	not_ok "report.json keeps the exact name"
fi

# the report's text form (findings) as `diagnose` prints it
bad="$TMP/trace$(printf '\033[31m\007\r')x.json"
echo '{"traceEvents": [' >"$bad"
"$PT_BIN" analyze "$bad" -o "$TMP/an" >"$TMP/an.out" 2>"$TMP/an.err"
if ! raw "$TMP/an.out" && ! raw "$TMP/an.err" && grep -qF 'trace\x1b[31m\x07\x0dx.json' "$TMP/an.err"; then
	ok "error messages: file names escaped"
else
	not_ok "error messages: file names escaped"; od -c "$TMP/an.err" | head -20 | sed 's/^/# /'
fi
# UTF-8 names stay readable
good="$TMP/trace-ü-名.json"
echo '{"traceEvents": [' >"$good"
"$PT_BIN" analyze "$good" -o "$TMP/an2" >/dev/null 2>"$TMP/an2.err"
grep -qF 'trace-ü-名.json' "$TMP/an2.err" && ok "UTF-8 names printed as they are" ||
	{ not_ok "UTF-8 names printed as they are"; sed 's/^/# /' "$TMP/an2.err"; }
