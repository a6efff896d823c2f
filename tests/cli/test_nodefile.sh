#!/bin/bash
# test_nodefile.sh - `perftracker status` and `perftracker hang-check` on a
# control directory whose workers are published by node files
# (agents/<host>.json, docs/collector.md "Node channel"), written by hand:
# node A's agent publishes two workers (live `sleep` pids), node B has no
# agent and its worker registered directly; a worker listed in both places
# keeps the fresher heartbeat.  No per-worker records exist for the
# published ones.  Exact steps, states and flags.
. "$(dirname "$0")/lib.sh"

C=$TMP/control
sleep 300 & S0=$!
sleep 300 & S1=$!
sleep 300 & S2=$!
trap 'kill $S0 $S1 $S2 2>/dev/null; rm -rf "$TMP"' EXIT

"$PYTHON" - "$C" "$S0" "$S1" "$S2" <<'EOF'
import json, os, socket, sys, time
c, pids = sys.argv[1], [int(x) for x in sys.argv[2:]]
now = time.time()
node = socket.gethostname()
for sub in ("agents", "workers", "heartbeats"):
    os.makedirs(os.path.join(c, sub), exist_ok=True)
def reg(host, r, pid):
    return {"format": "perftracker-worker", "version": 1, "id": "%s_%d_%d" % (host, r, pid),
            "host": host, "node": node, "rank": r, "local_rank": r % 2, "world_size": 3,
            "local_world_size": 2, "pid": pid, "started": now - 600}
def hb(step, st, t, rate, state="idle"):
    return {"format": "perftracker-heartbeat", "step": step, "step_time": st, "time": t,
            "rate": rate, "state": state, "trigger": ""}
# Node A: rank 0 steps (step 400), rank 1 made no step for 100 s.
with open(os.path.join(c, "agents", "nodeA.json"), "w") as f:
    json.dump({"format": "perftracker-agent", "version": 1, "host": "nodeA", "node": node,
               "pid": os.getpid(), "started": now - 600, "time": now - 0.5, "processed": 3,
               "failed": 0, "workers": [
                   {"worker": reg("nodeA", 0, pids[0]), "hb": hb(400, now - 0.2, now - 0.6, 10.0)},
                   {"worker": reg("nodeA", 1, pids[1]), "hb": hb(390, now - 100, now - 0.6, 0.0)}]}, f)
# A stale direct record of rank 0 (before its agent came): older, loses.
w = reg("nodeA", 0, pids[0])
json.dump(w, open(os.path.join(c, "workers", w["id"] + ".json"), "w"))
json.dump(hb(5, now - 300, now - 299, 10.0), open(os.path.join(c, "heartbeats", w["id"] + ".json"), "w"))
# Node B: no agent, rank 2 registered directly.
w = reg("nodeB", 2, pids[2])
json.dump(w, open(os.path.join(c, "workers", w["id"] + ".json"), "w"))
json.dump(hb(401, now - 0.1, now - 0.3, 10.0), open(os.path.join(c, "heartbeats", w["id"] + ".json"), "w"))
EOF
W0=nodeA_0_$S0 W1=nodeA_1_$S1 W2=nodeB_2_$S2

"$PT_BIN" status --control-dir "$C" --json --silent 60 >"$TMP/st.json" 2>"$TMP/st.err"
check "status: exit 0" test $? -eq 0
"$PYTHON" - "$TMP/st.json" "$W0" "$W1" "$W2" >"$TMP/st.check" 2>&1 <<'EOF'
import json, sys
st = json.load(open(sys.argv[1]))
w0, w1, w2 = sys.argv[2:]
ws = {w["id"]: w for w in st["workers"]}
assert sorted(ws) == sorted([w0, w1, w2]), sorted(ws)
assert (ws[w0]["step"], ws[w0]["host"], ws[w0]["flags"]) == (400, "nodeA", []), ws[w0]
assert (ws[w1]["step"], ws[w1]["flags"]) == (390, ["silent"]), ws[w1]
assert (ws[w2]["step"], ws[w2]["host"], ws[w2]["flags"]) == (401, "nodeB", []), ws[w2]
ag = {a["host"]: a for a in st["agents"]}
assert list(ag) == ["nodeA"], ag
assert (ag["nodeA"]["processed"], ag["nodeA"]["running"]) == (3, False), ag
print("fine")
EOF
grep -qx fine "$TMP/st.check" && ok "status: node file and direct workers merged, fresher heartbeat kept" ||
	{ not_ok "status content"; sed 's/^/# /' "$TMP/st.check"; }

# hang-check: rank 1 (from the node file) is the silent one; nobody answers.
"$PT_BIN" hang-check --control-dir "$C" --hang-timeout 60 --stack-wait 0.2 --json \
	>"$TMP/hc.json" 2>"$TMP/hc.err"
check "hang-check: exit 0" test $? -eq 0
"$PYTHON" - "$TMP/hc.json" "$W0" "$W1" "$W2" >"$TMP/hc.check" 2>&1 <<'EOF'
import json, sys
h = json.load(open(sys.argv[1]))
w0, w1, w2 = sys.argv[2:]
ws = h["workers"]
assert h["hung"] is True, h
assert [ws[w + ".json"]["state"] for w in (w0, w1, w2)] == ["running", "hung", "running"], ws
assert ws[w1 + ".json"]["last step"] == 390, ws[w1 + ".json"]
print("fine")
EOF
grep -qx fine "$TMP/hc.check" && ok "hang-check: a published worker's silence found" ||
	{ not_ok "hang-check content"; sed 's/^/# /' "$TMP/hc.check"; }
