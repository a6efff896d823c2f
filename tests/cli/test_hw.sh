#!/bin/bash
# test_hw.sh - hardware samples and Nsight Systems input end to end
# (docs/hardware.md): `analyze` on a folder of nsys SQLite exports with
# GPU_METRICS, and on Kineto traces with the sampler's hw_<host>.json beside
# them (tests/tools/make_nsys_fixture.py: rank 7 has a slow link, rank 6
# waits for a late peer, rank 5's GPU is throttled); `summarize --hw`,
# `--hw-dir`, `--no-hw`; the real pipit exports; one-line errors for bad
# samples and bad .sqlite files; `trigger --nsys-gpu-metrics` through a node
# agent running a stand-in nsys (and without nsys: the report's note).
. "$(dirname "$0")/lib.sh"

json_check() {
	"$PYTHON" - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
}

# finding FILE WORKER CATEGORY PATTERN: the worker's finding in the category
# has an explanation matching PATTERN
finding() {
	"$PYTHON" - "$@" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
for f in d["findings"]:
    if f["category"] == sys.argv[3] and f["workers"] == [sys.argv[2]] and re.search(sys.argv[4], f["explanation"]):
        sys.exit(0)
sys.exit(1)
PY
}

check "fixture generator" "$PYTHON" "$PT_ROOT/tests/tools/make_nsys_fixture.py" --nsys "$TMP/n" --kineto "$TMP/k"

# ---- nsys exports with GPU_METRICS --------------------------------------------
check "analyze nsys exports" "$PT_BIN" analyze "$TMP/n" -q -o "$TMP/outn"
R=$TMP/outn/PerfDisplay/report.json
check "8 workers from 8 .sqlite files" json_check "$R" 'len(d["workers"]) == 8'
check "seed link groups" json_check "$R" \
	'sorted(d["Communication"]) == ["nvlink ring recv", "nvlink ring send"]'
AR='ncclDevKernel_AllReduce_Sum_f16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)'
check "normal worker's throughput features" json_check "$R" \
	"d['Communication']['nvlink ring send']['$AR']['example_of_normal_worker']['features']['avg throughput (%)'] == 75.0 and d['Communication']['nvlink ring send']['$AR']['example_of_normal_worker']['features']['throughput std (%)'] == 5.0"
check "slow link named (rank 7)" finding "$R" node1_7_4007.sqlite Communication 'slow link: the nvlink path'
check "waiting worker named (rank 6)" finding "$R" node1_6_4006.sqlite Communication 'waits for a late peer'
check "rank 6 is not called a slow link" bash -c "! $(printf '%q ' "$PYTHON") - <<'PY'
import json
d = json.load(open('$R'))
import sys
sys.exit(0 if any('slow link' in f['explanation'] and f['workers'] == ['node1_6_4006.sqlite'] for f in d['findings']) else 1)
PY"
check "slow GPU with its clock (rank 5, nsys GPC clock)" finding "$R" node1_5_4005.sqlite "GPU Compute" 'low SM clock 1200 MHz \(other workers 1980 MHz'

# ---- Kineto traces + the sampler's hw_<host>.json ---------------------------------
check "analyze kineto + hw_node1.json" "$PT_BIN" analyze "$TMP/k" -q -o "$TMP/outk"
R=$TMP/outk/PerfDisplay/report.json
check "hw_node1.json is not a worker" json_check "$R" 'len(d["workers"]) == 8 and "hw_node1.json" not in d["workers"]'
check "slow link named (kineto)" finding "$R" node1_7_4007.json Communication 'slow link'
check "waiting worker named (kineto)" finding "$R" node1_6_4006.json Communication 'waits for a late peer'
check "throttle reason named" finding "$R" node1_5_4005.json "GPU Compute" 'SW thermal slowdown'
check "analyze --no-hw: the name groups" "$PT_BIN" analyze "$TMP/k" -q --no-hw -o "$TMP/outk2"
check "no link groups without samples" json_check "$TMP/outk2/PerfDisplay/report.json" \
	'list(d["Communication"]) == ["ring allreduce"]'
mkdir -p "$TMP/hwonly" && cp "$TMP/k/hw_node1.json" "$TMP/hwonly/"
mkdir -p "$TMP/k2" && cp "$TMP"/k/node1_*.json "$TMP/k2/"
check "analyze --hw-dir" "$PT_BIN" analyze "$TMP/k2" -q --hw-dir "$TMP/hwonly" -o "$TMP/outk3"
check "--hw-dir samples joined" json_check "$TMP/outk3/PerfDisplay/report.json" \
	'"nvlink ring send" in d["Communication"]'

# ---- summarize ---------------------------------------------------------------------
check "summarize --hw" "$PT_BIN" summarize "$TMP/k2/node1_7_4007.json" --hw "$TMP/hwonly/hw_node1.json" -o "$TMP/s7.json"
check "summary carries hw fields" json_check "$TMP/s7.json" \
	'd["hw_source"] == "nvml+proc" and [p["hw"][0] for p in d["patterns"] if p["class"] == "communication"] == [{"group": "nvlink ring send", "avg_tput_pct": 37.5, "std_tput_pct": 2.5, "peak_tput_pct": 40.0, "samples": 80, "kernels": 4}] and d["hw_gpu"]["sm_clock_mhz"] == 1980.0'
check "summarize finds hw_<host>.json beside the trace" "$PT_BIN" summarize "$TMP/k/node1_0_4000.json" -o "$TMP/s0.json"
check "auto-discovered samples joined" json_check "$TMP/s0.json" '"hw_gpu" in d'
check "summarize --no-hw" "$PT_BIN" summarize "$TMP/k/node1_0_4000.json" --no-hw -o "$TMP/s0n.json"
check "no hw fields with --no-hw" json_check "$TMP/s0n.json" '"hw_gpu" not in d and all("hw" not in p for p in d["patterns"])'
check "summarize an nsys export (own GPU metrics)" "$PT_BIN" summarize "$TMP/n/node1_6_4006.sqlite" -o "$TMP/s6.json"
check "nsys summary: rank from nothing, samples from GPU_METRICS" json_check "$TMP/s6.json" \
	'd["hw_source"] == "nsys" and d["window"]["from_steps"] and d["steps"] == [{"number": 3, "ms": 16.0}]'
check "summarize --hw FILE.sqlite (GPU metrics only)" "$PT_BIN" summarize "$TMP/k2/node1_6_4006.json" --hw "$TMP/n/node1_6_4006.sqlite" -o "$TMP/s6k.json"
check "GPU metrics of an export joined to a Kineto trace" json_check "$TMP/s6k.json" \
	'd["hw_source"] == "nsys" and any(h["group"] == "nvlink ring send" for p in d["patterns"] for h in p.get("hw", []))'

# ---- the real exports (pipit, MIT) --------------------------------------------------
check "summarize pipit saxpy (nsys 2022.2, schema 2.9.1)" "$PT_BIN" summarize "$PT_DATA/pipit/saxpy-mpi-cuda_nsys_perlmutter0.sqlite" -o "$TMP/saxpy.json"
check "saxpy: 99 events, device name" json_check "$TMP/saxpy.json" \
	'd["nevents"] == 99 and d["device"] == "NVIDIA A100-SXM4-40GB" and any(p["key"] == "Memcpy HtoD (Pageable -> Device)" and p["count"] == 10 for p in d["patterns"])'
check "summarize pipit cloverleaf (nsys 2024.5, schema 3.13.2)" "$PT_BIN" summarize "$PT_DATA/pipit/perlmutter-cloverleaf-cuda.sqlite" -o "$TMP/clover.json"
check "cloverleaf: 4639 events" json_check "$TMP/clover.json" \
	'd["nevents"] == 4639 and sum(p["count"] for p in d["patterns"] if p["class"] == "compute") == 1312'

# ---- bad input ------------------------------------------------------------------------
check_fails "--hw missing file" "nonexistent.json: cannot open" "$PT_BIN" summarize "$TMP/k/node1_0_4000.json" --hw "$TMP/nonexistent.json"
echo '{"format":"perftracker-summary","version":1}' > "$TMP/notsamples.json"
check_fails "--hw not samples" "notsamples.json: not a perftracker-hw file" "$PT_BIN" summarize "$TMP/k/node1_0_4000.json" --hw "$TMP/notsamples.json"
printf '{"format":"perftracker-hw","version":1,"series":[' > "$TMP/cut.hw.json"
check_fails "--hw cut file: byte offset" "cut.hw.json: unexpected end of input (at byte 49)" "$PT_BIN" summarize "$TMP/k/node1_0_4000.json" --hw "$TMP/cut.hw.json"
check_fails "--no-hw with --hw" "no-hw" "$PT_BIN" summarize "$TMP/k/node1_0_4000.json" --no-hw --hw "$TMP/k/hw_node1.json"
mkdir -p "$TMP/g"
{ printf 'SQLite format 3\000'; head -c 4000 /dev/zero | tr '\0' 'x'; } > "$TMP/g/garbage.sqlite"
check_fails "corrupt .sqlite" "garbage.sqlite: not a valid sqlite database" "$PT_BIN" summarize "$TMP/g/garbage.sqlite"
[ "$(grep -c . "$TMP/.err")" -eq 1 ] && ok "corrupt .sqlite: one line" || not_ok "corrupt .sqlite: one line" "$(cat "$TMP/.err")"
"$PYTHON" -c "import sqlite3; c = sqlite3.connect('$TMP/other.sqlite'); c.execute('create table t (a)'); c.commit()"
check_fails "sqlite that is not an export" "other.sqlite: not an nsys export" "$PT_BIN" summarize "$TMP/other.sqlite"
"$PYTHON" -c "
import sqlite3; c = sqlite3.connect('$TMP/badtype.sqlite')
c.executescript('''CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER,
 demangledName INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER);
INSERT INTO StringIds VALUES (1, 'k');
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1, 'late', 0, 7, 1, 1, 1, 1, 1, 1, 1);''')
c.commit()"
check_fails "wrong column type" "badtype.sqlite: CUPTI_ACTIVITY_KIND_KERNEL row 1: 'end' is text, not an integer" "$PT_BIN" summarize "$TMP/badtype.sqlite"
mkdir -p "$TMP/badhw" && cp "$TMP/k/node1_0_4000.json" "$TMP/badhw/" && echo '[]' > "$TMP/badhw/hw_broken.json"
"$PT_BIN" summarize "$TMP/badhw/node1_0_4000.json" -o "$TMP/sb.json" 2>"$TMP/sb.err"
[ $? -eq 0 ] && grep -q "hw_broken.json: not a perftracker-hw file.*samples file skipped" "$TMP/sb.err" \
	&& ok "unreadable samples beside a trace: warning, summary written" \
	|| not_ok "unreadable samples beside a trace: warning, summary written" "$(cat "$TMP/sb.err")"
check "analyze: bad samples file is not a failed worker" "$PT_BIN" analyze "$TMP/badhw" -q -o "$TMP/outb"
check "one worker" json_check "$TMP/outb/PerfDisplay/report.json" 'list(d["workers"]) == ["node1_0_4000.json"]'

# ---- --nsys-gpu-metrics: trigger -> agent -> stand-in nsys -> report ----------------
# A worker written by hand (its pid a live `sleep`, 16 steps/s), the node's
# agent with a stand-in `nsys` first on its PATH (profile: a short sleep;
# export: rank 0's export of the fixture above), the trace dropped in the
# spool once trigger.json names the trigger.  Then the same without nsys on
# the agent's PATH: the report's hardware note says so.
check_fails "trigger --nsys-gpu-metrics=5: a rate out of range" \
	"option '--nsys-gpu-metrics': '5' is not a rate in Hz from 10 to 200000" \
	"$PT_BIN" trigger --nsys-gpu-metrics=5
check_fails "agent --nsys-gpu-metrics=10k: not a number" \
	"option '--nsys-gpu-metrics': '10k' is not a rate in Hz" "$PT_BIN" agent --nsys-gpu-metrics=10k
C=$TMP/ctl
mkdir -p "$TMP/fakebin" "$TMP/nopath"
cat > "$TMP/fakebin/nsys" <<'SH'
#!/bin/sh
cmd=$1; shift
for a; do case $a in --output=*) out=${a#--output=};; esac; done
echo "$cmd $*" >> "$PT_FAKE_DIR/args"
case $cmd in
profile) sleep 0.3; : > "$out.nsys-rep";;
export) cp "$PT_FAKE_SRC" "$out";;
esac
SH
chmod 755 "$TMP/fakebin/nsys"
sleep 300 & WPID=$!
trap 'kill $WPID $APID 2>/dev/null; rm -rf "$TMP"' EXIT
WID=node1_0_$WPID
worker_hb() {
	"$PYTHON" - "$C" "$WPID" <<'PY'
import json, os, socket, sys, time
c, pid = sys.argv[1], int(sys.argv[2])
now, wid = time.time(), "node1_0_%d" % pid
for sub in ("workers", "heartbeats"):
    os.makedirs(os.path.join(c, sub), exist_ok=True)
with open(os.path.join(c, "workers", wid + ".json"), "w") as f:
    json.dump({"format": "perftracker-worker", "version": 1, "id": wid, "host": "node1",
               "node": socket.gethostname(), "rank": 0, "local_rank": 0, "world_size": 1,
               "local_world_size": 1, "pid": pid, "started": now - 60}, f)
with open(os.path.join(c, "heartbeats", wid + ".json"), "w") as f:
    json.dump({"format": "perftracker-heartbeat", "step": 100, "step_time": now, "time": now,
               "rate": 16.0, "state": "idle", "trigger": ""}, f)
PY
}
# trigger_run OUT TRACE ARGS...: run the trigger in the background, drop TRACE
# (a file, or "now": a trace of the last 0.3 s) as the worker's raw trace
# when trigger.json appears, wait for the trigger; its exit status.
trigger_run() {
	local out=$1 trace=$2 tid="" tpid rc i; shift 2
	rm -f "$C/trigger.json"
	"$PT_BIN" trigger --auto-analyze -q --no-progress --control-dir "$C" --output-dir "$out" \
		--wait 0 --steps 2 --save-raw-trace all --hang-timeout 0 --timeout 30 "$@" \
		>"$out.stdout" 2>"$out.stderr" &
	tpid=$!
	for i in $(seq 100); do
		tid=$("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' \
			"$C/trigger.json" 2>/dev/null) && [ -n "$tid" ] && break
		sleep 0.1
	done
	cp "$C/trigger.json" "$out.trigger.json" 2>/dev/null
	# The job's folder of the spool (per control directory and host).
	js=$("$PT_BIN" agent --control-dir "$C" --spool-dir "$TMP/spool" --host node1 --print-spool-dir)
	mkdir -p "$js/$tid"
	if [ "$trace" = now ]; then
		sleep 0.5
		"$PYTHON" - "$js/$tid/.$WID.tmp" <<'PY'
import json, sys, time
t = time.time() * 1e6
json.dump({"schemaVersion": 1, "traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#20", "pid": 1, "tid": 1,
     "ts": t - 300000, "dur": 200000},
    {"ph": "X", "cat": "kernel", "name": "void gemm<float>(int)", "pid": 0, "tid": 7,
     "ts": t - 250000, "dur": 100000, "args": {"device": 0, "stream": 7}}]}, open(sys.argv[1], "w"))
PY
	else
		cp "$trace" "$js/$tid/.$WID.tmp"
	fi
	mv "$js/$tid/.$WID.tmp" "$js/$tid/$WID.json"
	wait $tpid
}
worker_hb
PT_FAKE_DIR=$TMP PT_FAKE_SRC=$TMP/n/node1_0_4000.sqlite PERFTRACKER_NVML= PATH="$TMP/fakebin:$PATH" \
	"$PT_BIN" agent --control-dir "$C" --spool-dir "$TMP/spool" --host node1 --poll 0.1 \
	2>"$TMP/agent1.log" &
APID=$!
trigger_run "$TMP/nsout" "$TMP/k/node1_0_4000.json" --nsys-gpu-metrics
check "trigger with --nsys-gpu-metrics: report written" test $? -eq 0
kill $APID; wait $APID
check "trigger.json asks for 10000 Hz" json_check "$TMP/nsout.trigger.json" 'd["nsys_gpu_metrics"] == 10000'
grep -q "gpu-metrics-frequency=10000 .* sleep [0-9.]*\$" "$TMP/args" && grep -q "^export --type=sqlite" "$TMP/args" \
	&& ok "the agent ran nsys profile and export" || not_ok "nsys runs" "$(cat "$TMP/args" "$TMP/agent1.log")"
RUN=$(ls -d "$TMP"/nsout/*/ | head -1)
check "summary: nsys series joined (rank 0's 75% NVLink)" json_check "$RUN/summaries/$WID.json" \
	'd["hw_source"] == "proc+nsys" and [h for p in d["patterns"] for h in p.get("hw", []) if h["group"] == "nvlink ring send"][0]["avg_tput_pct"] == 75.0'
check "hw_node1.json: nsys and /proc series" json_check "$RUN/raw_trace/hw_node1.json" \
	'd["source"] == "proc+nsys" and any(s["label"] == "nsys" and s["name"] == "nvlink_tx" for s in d["series"]) and any(s["name"] == "mem_available" for s in d["series"])'
check "report: the worker's timelines come from nsys" json_check "$RUN/PerfDisplay/report.json" \
	'[w["source"] for w in d["display"]["hw"]["workers"].values()] == ["proc+nsys"]'
[ -z "$(ls -A "$js/.nsys-node1")" ] && ok "capture files removed from the spool" \
	|| not_ok "capture files left" "$(ls "$js/.nsys-node1")"

worker_hb
PERFTRACKER_NVML= PATH="$TMP/nopath" "$PT_BIN" agent --control-dir "$C" --spool-dir "$TMP/spool" \
	--host node1 --poll 0.1 2>"$TMP/agent2.log" &
APID=$!
trigger_run "$TMP/nsout2" now --nsys-gpu-metrics 500
check "trigger without nsys on the agent's PATH: report written" test $? -eq 0
kill $APID; wait $APID
grep -q "nsys gpu metrics at 500 Hz asked for, but 'nsys' is not on PATH: skipped" "$TMP/agent2.log" \
	&& ok "agent: missing nsys logged" || not_ok "missing nsys log" "$(cat "$TMP/agent2.log")"
RUN=$(ls -d "$TMP"/nsout2/*/ | head -1)
check "report: the hardware note names the missing nsys" json_check "$RUN/PerfDisplay/report.json" \
	'[w["source"] for w in d["display"]["hw"]["workers"].values()] == ["proc"] and all("nsys: not found on PATH: no GPU metrics at 500 Hz" in w["note"] for w in d["display"]["hw"]["workers"].values())'
