#!/bin/sh
# nodesim.sh - the control plane at scale (docs/bench.md, "Control plane at
# scale"): build/bench/nodesim for 10, 100 and 1,250 simulated nodes of 8
# workers with agents, 100 nodes of 1 and of 32 workers, and the protocol
# without agents (direct, the baseline of the same run, and fallback) at 10
# and 100 nodes; one markdown row per run (about 15 minutes).  Larger runs are time-dilated (--dilate) so that this machine keeps
# up; the "pass" column says it did (longest pass over the nodes, in the
# job's time, well under the 250 ms poll).
#
#   sh bench/nodesim.sh            (from the repository root, after make)
set -eu
SIM=${SIM:-build/bench/nodesim}
[ -x "$SIM" ] || make "$SIM" >/dev/null
SECS=${NODESIM_SECONDS:-32}

row() {
	"$SIM" --json --seconds "$SECS" "$@" | python3 -c '
import json, sys
r = json.load(sys.stdin)
print("| %s | %d x %d = %d | %.1f | %.1f | %.1f | %.3f | %.4f | %.2f / %.2f / %.2f | %.3f |" % (
    r["mode"], r["nodes"], r["workers_per_node"], r["workers"], r["shared_ops_per_s"],
    r["agent_ops_per_s"], r["worker_ops_per_s"], r["per_node_ops_per_s"],
    r["per_worker_ops_per_s"], r["latency_p50_s"], r["latency_p99_s"], r["latency_max_s"],
    r["pass_max_s"]))'
}

echo "| mode | nodes x workers | shared ops/s | by agents | by workers | per node | per worker | trigger to armed p50 / p99 / max (s) | pass (s) |"
echo "|---|---|---|---|---|---|---|---|---|"
row --mode agent --nodes 10 --procs 1
row --mode agent --nodes 100 --procs 2 --dilate 2
row --mode agent --nodes 1250 --procs 2 --dilate ${NODESIM_DILATE:-8}
# Workers per node: the shared directory sees nodes, not workers.
row --mode agent --nodes 100 --workers 1 --procs 2 --dilate 2
row --mode agent --nodes 100 --workers 32 --procs 2 --dilate 4
row --mode direct --nodes 10 --procs 1
row --mode direct --nodes 100 --procs 2 --dilate 4
row --mode fallback --nodes 10 --procs 1
row --mode fallback --nodes 100 --procs 2 --dilate 2
