#!/bin/bash
# One finding per cause (issue 20; src/diagnose/merge.c, noise.c), on the
# summaries of real `make demo` runs (tests/data/demo_runs/{a,b,c},
# demo_loaded: one planted stall in `slow_augment`, 4 workers on 2 cores,
# a loaded host): the stalled rank is the one cause, its Python finding,
# its own longer collective and its victims' waiting are the evidence of
# that one finding, and the CPU contention findings are grouped as
# possibly noise against the job's measured noise.
. "$(dirname "$0")/lib.sh"

# q REPORT EXPR: a Python expression over r (the report) and F (its
# findings); fails when false, printing the findings.
q() {
	"$PYTHON" -c 'import json, sys
r = json.load(open(sys.argv[1]))
F = r["findings"]
W = {w: v.get("rank") for w, v in r["workers"].items()}
causes = [f for f in F if f.get("confidence", {}).get("level") != "weak" and f["category"] != "summary"]
if not eval(sys.argv[2]):
    print("false:", sys.argv[2])
    for f in F:
        print(f["rank"], f["category"], f["workers"], f.get("confidence", {}).get("level"), f["function"][-60:], [e["kind"] for e in f.get("evidence", [])])
    sys.exit(1)' "$1" "$2"
}

for set in demo_runs/a demo_runs/b demo_loaded; do
	OUT=$TMP/${set//\//_}
	"$PT_BIN" diagnose "$PT_DATA/$set" -o "$OUT" >"$OUT.txt" 2>"$OUT.err"
	R=$OUT/PerfDisplay/report.json
	check "$set: diagnosed" test -f "$R"
	# the stalled rank (2 in the demo runs, 0 in demo_loaded)
	S=2
	[ "$set" = demo_loaded ] && S=0
	check "$set: one cause, the stalled rank, first" q "$R" "len(causes) == 1 and F[0] is causes[0] and W[F[0]['workers'][0]] == $S"
	check "$set: it names slow_augment's sleep" q "$R" "F[0]['function'].endswith('slow_augment|<built-in function sleep>')"
	check "$set: the lockstep and Python findings of it are one" q "$R" "F[0]['category'] == 'Lockstep' and any(e['kind'] == 'same cause' and e['category'] == 'Python functions' and e['function'] == F[0]['function'] for e in F[0]['evidence']) and not any(f['category'] == 'Python functions' and f['function'] == F[0]['function'] for f in F)"
	check "$set: no finding names a worker for its waiting" q "$R" "all(W[f['workers'][0]] == $S for f in causes) and not any(f.get('caused by') for f in F)"
	check "$set: every other finding is possibly noise, with its noise" q "$R" "all(f['confidence']['level'] == 'weak' and f['confidence']['noise (ms per step)'] > 0 for f in F[1:])"
	check "$set: text: one numbered finding, then the possibly-noise line if any" "$PYTHON" -c '
import json, re, sys
r = json.load(open(sys.argv[1])); t = open(sys.argv[2]).read()
weak = len(r["findings"]) - 1
m = re.search(r"^  Possibly noise \((\d+): weak evidence or within the job.s own noise", t, re.M)
assert "\nFindings (1, most time lost first)\n" in t and re.search(r"^  1\. rank %s is the worker the others waited for" % sys.argv[3], t, re.M) and not re.search(r"^  2\. ", t, re.M)
assert (int(m.group(1)) if m else 0) == weak, (m, weak)' "$R" "$OUT.txt" "$S"
done

A=$TMP/demo_runs_a/PerfDisplay/report.json
B=$TMP/demo_runs_b/PerfDisplay/report.json
# (a) rank 2's own c10d::allreduce_, longer as it arrives last: evidence
check "a: the straggler's own longer collective is its evidence" q "$A" "[e['function'] for e in F[0]['evidence'] if e['kind'] == 'its own collectives'] == ['c10d::allreduce_'] and not any(f['category'] == 'Communication' for f in F)"
# the victims' symptoms: evidence of the straggler, and linked in "explained"
check "a: three symptoms of rank 3's waiting, linked to rank 2" q "$A" "[(W[e['worker']], e['category']) for e in F[0]['evidence'] if e['kind'].startswith('symptom')] == [(3, 'Communication'), (3, 'Communication'), (3, 'Python functions')] and len(r['Lockstep']['explained']) == 3 and all(x['caused by'] == F[0]['workers'][0] for x in r['Lockstep']['explained'])"
check "a: the waiting workers' collectives stay out of Communication's abnormal_workers, counted in Lockstep" q "$A" "r['Lockstep']['Communication entries of waiting workers removed'] == 2 and [(g, k, [W[a['worker']] for a in e['abnormal_workers']]) for g, v in r['Communication'].items() if isinstance(v, dict) for k, e in v.items() if isinstance(e, dict) and 'abnormal_workers' in e] == [('gloo allreduce', 'gloo:all_reduce', []), ('cpu allreduce', 'c10d::allreduce_', [2])]"
check "b: symptoms on ranks 0 and 3" q "$B" "sorted(set(W[e['worker']] for e in F[0]['evidence'] if e['kind'].startswith('symptom'))) == [0, 3]"
# the other functions the straggler finding names as where its lateness
# comes from (rank 2's aten::addmm, slower while the host was loaded) are
# that finding's, not findings of their own
check "a: the straggler's other cause functions are its evidence" q "$A" "[e['function'].split('|')[-1] for e in F[0]['evidence'] if e['kind'] == 'same cause' and e['function'] != F[0]['function']] == ['aten::addmm', 'aten::addmm'] and len(F) == 1"
check "a: text: the evidence line" bash -c "tr -s ' \\n' ' ' <'$TMP/demo_runs_a.txt' | grep -q 'also: seen as Python functions, aten::addmm, aten::addmm; its own longer collectives c10d::allreduce_; 3 symptoms on the workers that waited for it (rank 3)'"
# the contention findings on the loaded host: CPU contention is their noise
check "demo_loaded: contention measured from psi_cpu" q "$TMP/demo_loaded/PerfDisplay/report.json" "[(f['confidence']['noise'], round(f['confidence']['noise (ms per step)'], 2)) for f in F[1:]] == [('CPU contention on its host', 5.59), ('CPU contention on its host', 5.23)]"

# (c) a function every rank runs (load_batch), 2x longer on rank 1: one
# finding; aten::mm slower on ranks 0 and 2 alike of a host whose tasks
# waited for a core 44% of the time is contention, and rank 1's own
# c10d::allreduce_ (it waited too, for nobody) its own collective.
"$PT_BIN" diagnose "$PT_DATA/demo_runs/c" -o "$TMP/c" >"$TMP/c.txt" 2>&1
C=$TMP/c/PerfDisplay/report.json
check "c: one cause, rank 1's load_batch" q "$C" "len(causes) == 1 and W[F[0]['workers'][0]] == 1 and F[0]['category'] == 'Lockstep' and F[0]['function'].endswith('load_batch|<built-in function sleep>')"
check "c: aten::mm slower on two workers of a contended host: one finding, weak, said why" q "$C" "[sorted(W[w] for w in f['workers']) for f in F if f['function'].endswith('|aten::mm')] == [[0, 2]] and all(f['confidence']['level'] == 'weak' and f['confidence']['evidence'].endswith('slower on 1 other worker too, on a host whose tasks waited for a core 44% of the time: CPU contention') for f in F if f['function'].endswith('|aten::mm'))"
check "c: the straggler's own collective, not a symptom of itself" q "$C" "[(W[e['worker']], e['function']) for e in F[0]['evidence'] if e['kind'] == 'its own collectives'] == [(1, 'c10d::allreduce_')] and all(x.get('caused by') == F[0]['workers'][0] for x in r['Lockstep']['explained'])"

# Without lockstep data (summary version 1): the job's step-to-step spread
# is the noise; the planted stall stays strong, contention is grouped.
"$PT_BIN" diagnose "$PT_DATA/demo_cpu4" -o "$TMP/c4" >"$TMP/c4.txt" 2>&1
check "demo_cpu4: the stall strong, the contention within the step spread" q "$TMP/c4/PerfDisplay/report.json" "[f['confidence']['level'] for f in F if f['function'].endswith('slow_augment|<built-in function sleep>')] == ['strong'] and all(f['confidence']['noise'] == \"the job's step-to-step spread\" for f in F if f['category'] == 'Python functions' and f['confidence']['level'] == 'weak') and len([f for f in F if f['category'] == 'Python functions' and f['confidence']['level'] == 'weak']) == 4"
