#!/bin/bash
# test_digest.sh - digests and the two-phase diagnosis (docs/summary.md
# "Digests", docs/diagnose.md "Two phases"): analyze --keep-summaries writes
# a digest beside each summary; `perftracker digest` writes them for old
# summaries and names a bad file; diagnose reads digests first and the
# suspects' full summaries second, and names the same findings as reading
# every summary in full, on the 8 real DLRM ranks and on 10,000 workers made
# from them by bench/gen_summaries.py (10 planted DtoD workers, 10 slow GPUs).
. "$(dirname "$0")/lib.sh"
cd "$PT_ROOT" || exit 1
trap 'rm -rf "$TMP"' EXIT

K=$TMP/keep
"$PT_BIN" analyze tests/data/dlrm -q -o "$TMP/r0" --keep-summaries "$K" >/dev/null 2>&1 ||
	not_ok "analyze --keep-summaries"
n=$(ls "$K"/*.summary.json | wc -l); d=$(ls "$K"/*.summary.digest | wc -l)
[ "$n" = 8 ] && [ "$d" = 8 ] && ok "8 summaries, 8 digests beside them" ||
	not_ok "8 summaries, 8 digests beside them" "$n summaries, $d digests"

# Each digest: a summary whose digest_of is its summary's size, hashed keys,
# no critical path, smaller.
if "$PYTHON" - "$K" <<'PY'
import json, os, re, sys
k = sys.argv[1]
for f in sorted(os.listdir(k)):
    if not f.endswith(".summary.json"):
        continue
    full = os.path.join(k, f)
    dg = full[:-5] + ".digest"
    d = json.load(open(dg))
    s = json.load(open(full))
    assert d["format"] == "perftracker-summary" and d["version"] == 5, dg
    assert d["digest_of"] == os.path.getsize(full), (d["digest_of"], os.path.getsize(full))
    assert "digest_of" not in s
    # a collective is an object, every other pattern a row of 8 values:
    # key, class, kind, count, total_ms, median_ms, bottleneck, exec_ratio
    rows = [p for p in d["patterns"] if isinstance(p, list)]
    objs = [p for p in d["patterns"] if isinstance(p, dict)]
    assert rows and all(len(p) == 8 for p in rows), dg
    assert all(p["class"] == "communication" for p in objs), dg
    keys = [p[0] for p in rows] + [p["key"] for p in objs]
    assert all(re.fullmatch(r"~[0-9a-f]{16}", k) for k in keys), dg
    assert "critical_path" not in d and "timeline" not in d, dg
    assert all("p10_ms" not in p and "step_ms" not in p for p in objs)
    assert sorted(p[1] for p in rows) == sorted(p["class"] for p in s["patterns"] if p["class"] != "communication" and (p["class"] != "python" or p["bottleneck"] >= 0.001 or p["exec_ratio"] >= 0.001)), dg
    assert d["worker"] == s["worker"] and d["steps"] == s["steps"], dg
    # every pattern but small Python stacks
    big = [p for p in s["patterns"] if p["class"] != "python" or
           p["bottleneck"] >= 0.001 or p["exec_ratio"] >= 0.001]
    assert len(d["patterns"]) == len(big), (dg, len(d["patterns"]), len(big))
    assert os.path.getsize(dg) * 4 < os.path.getsize(full), dg
PY
then ok "digest_of, hashed keys, rows of 8 values, every pattern but Python stacks under 0.1%, under a quarter of the size"
else not_ok "digest contents"; fi

# Findings as (category, function, workers, cause), and the whole text.
cat >"$TMP/findings.py" <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1]))
assert not re.search(r'"~[0-9a-f]{16}"', json.dumps(r)), "a hashed key in the report"
for f in r["findings"]:
    print(f["category"], "|", f.get("function", ""), "|", ",".join(sorted(f.get("workers", [f.get("worker") or ""]))),
          "|", json.dumps(f.get("cause")), "|", f["explanation"] if len(sys.argv) > 2 else "")
PY
"$PT_BIN" diagnose "$K" -q -o "$TMP/full8" --digests never --no-timeline
"$PT_BIN" diagnose "$K" -q -o "$TMP/two8" --digests always --no-timeline --time 2>"$TMP/two8.err"
"$PYTHON" "$TMP/findings.py" "$TMP/full8/PerfDisplay/report.json" x >"$TMP/full8.f"
"$PYTHON" "$TMP/findings.py" "$TMP/two8/PerfDisplay/report.json" x >"$TMP/two8.f"
if [ -s "$TMP/full8.f" ] && cmp -s "$TMP/full8.f" "$TMP/two8.f" &&
   grep -q "8 summaries, 8 of them digests" "$TMP/two8.err"; then
	ok "8 DLRM ranks: two phases name the same findings, word for word"
else
	not_ok "8 DLRM ranks: same findings" "$(diff "$TMP/full8.f" "$TMP/two8.f" | head -5; cat "$TMP/two8.err")"
fi

# A digest that does not read, and summaries without digests: full summaries.
O=$TMP/old; mkdir -p "$O"; cp "$K"/*.summary.json "$O"/
first=$(ls "$K"/*.summary.digest | head -1)
cp "$K"/*.summary.digest "$O"/; echo '{"format":"perftracker-summary","version":5,' >"$O/$(basename "$first")"
rm "$O/$(basename "$(ls "$K"/*.summary.digest | tail -1)")"
"$PT_BIN" diagnose "$O" -q -o "$TMP/old8" --digests always --no-timeline --time 2>"$TMP/old8.err"
"$PYTHON" "$TMP/findings.py" "$TMP/old8/PerfDisplay/report.json" x >"$TMP/old8.f"
if cmp -s "$TMP/full8.f" "$TMP/old8.f" && grep -q "8 summaries, 6 of them digests" "$TMP/old8.err"; then
	ok "a cut digest and a missing one: those workers are read in full, same findings"
else
	not_ok "cut and missing digests" "$(diff "$TMP/full8.f" "$TMP/old8.f" | head -5; cat "$TMP/old8.err")"
fi

# A digest's rows are checked like the patterns they stand for.
SEED=tests/fuzz/seeds/summary/digest.json
"$PYTHON" - "$SEED" "$TMP" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); t = sys.argv[2]
def put(name, f):
    x = json.loads(json.dumps(d)); f(x)
    open(t + "/" + name, "w").write(json.dumps(x, separators=(",", ":")))
put("short.json", lambda x: x["patterns"][0].pop())
put("long.json", lambda x: x["patterns"][0].append(1))
put("negcount.json", lambda x: x["patterns"][1].__setitem__(3, -2))
put("notdigest.json", lambda x: x.pop("digest_of"))
PY
check_fails "a digest row with 7 values" "pattern 0: 7 values, 8 expected" "$PT_BIN" diagnose "$TMP/short.json" -q
check_fails "a digest row with 9 values" "pattern 0: 9 values, 8 expected" "$PT_BIN" diagnose "$TMP/long.json" -q
check_fails "a negative count in a row" "pattern 1: 'count' is not a non-negative integer" "$PT_BIN" diagnose "$TMP/negcount.json" -q
check_fails "a row in a summary that is no digest" "pattern 0: is not an object" "$PT_BIN" diagnose "$TMP/notdigest.json" -q

# perftracker digest: old summaries get digests; a bad file is one line, exit 1.
rm -f "$O"/*.digest
printf '{"format":"perftracker-summary","version":5,"worker":1}\n' >"$O/bad.json"
"$PT_BIN" digest "$O" >"$TMP/dg.out" 2>"$TMP/dg.err"; rc=$?
if [ $rc = 1 ] && [ "$(ls "$O"/*.digest | wc -l)" = 8 ] && [ "$(wc -l <"$TMP/dg.err")" = 1 ] &&
   grep -q "bad.json" "$TMP/dg.err" && grep -q "wrote 8 digests (1 of 9 summaries could not be read)" "$TMP/dg.out"; then
	ok "perftracker digest: 8 written, the bad file named in one line, exit 1"
else
	not_ok "perftracker digest" "rc $rc; $(cat "$TMP/dg.out" "$TMP/dg.err")"
fi
check_fails "perftracker digest of a digest" "is a digest" "$PT_BIN" digest "$first"

# 10,000 workers: the same findings with and without digests.
W=$TMP/w10k
"$PYTHON" bench/gen_summaries.py "$K" 10000 "$W" && "$PT_BIN" digest "$W" >/dev/null ||
	not_ok "10,000 summaries and digests"
"$PT_BIN" diagnose "$W" -q -o "$TMP/full" --digests never --no-timeline
"$PT_BIN" diagnose "$W" -q -o "$TMP/two" --no-timeline --time 2>"$TMP/two.err"
"$PYTHON" "$TMP/findings.py" "$TMP/full/PerfDisplay/report.json" >"$TMP/full.f"
"$PYTHON" "$TMP/findings.py" "$TMP/two/PerfDisplay/report.json" >"$TMP/two.f"
if [ "$(wc -l <"$TMP/full.f")" -ge 3 ] && cmp -s "$TMP/full.f" "$TMP/two.f" &&
   grep -q "10000 summaries, 10000 of them digests" "$TMP/two.err"; then
	ok "10,000 workers: the same findings with and without digests ($(wc -l <"$TMP/two.f"))"
else
	not_ok "10,000 workers: same findings" "$(diff "$TMP/full.f" "$TMP/two.f" | head -8; cat "$TMP/two.err")"
fi
# The planted workers: all 10 DtoD and all 10 slow GPUs named.
if "$PYTHON" - "$TMP/two/PerfDisplay/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
named = {}
for f in r["findings"]:
    for w in f.get("workers", []):
        named.setdefault(f["category"], set()).add(w)
dtod = {"node%05d_0_%d.json" % (i * 125, 10000 + i * 1000) for i in range(10)}
slow = {"node%05d_4_%d.json" % ((i * 1000 + 500) // 8, 10000 + i * 1000 + 500) for i in range(10)}
assert dtod <= named.get("GPU memory operations", set()), named
assert slow <= named.get("GPU Compute", set()), named
PY
then ok "10,000 workers, two phases: the 10 DtoD and the 10 slow-GPU workers named"
else not_ok "planted workers named"; fi
# Word for word: every sentence, every number.
"$PYTHON" "$TMP/findings.py" "$TMP/full/PerfDisplay/report.json" x >"$TMP/fullx.f"
"$PYTHON" "$TMP/findings.py" "$TMP/two/PerfDisplay/report.json" x >"$TMP/twox.f"
cmp -s "$TMP/fullx.f" "$TMP/twox.f" && ok "10,000 workers: every finding word for word" ||
	not_ok "10,000 workers: word for word" "$(diff "$TMP/fullx.f" "$TMP/twox.f" | head -6)"
# At scale the report keeps every worker in "workers" and per-worker rows
# for at most 1,000 (docs/diagnose.md "At scale"): the named ones among them.
if "$PYTHON" - "$TMP/two/PerfDisplay/report.json" "$TMP/full/PerfDisplay/report.json" <<'PY'
import json, sys
for path in sys.argv[1:]:
    r = json.load(open(path))
    assert len(r["workers"]) == 10000, len(r["workers"])
    named = {w for f in r["findings"] for w in f.get("workers", [])}
    rows = {
        "Time breakdown": set(r["Time breakdown"]),
        "display": set(r["display"]["workers"]),
        "Lockstep": set(r["Lockstep"]["workers"]),
        "timeline": {w["worker"] for w in r["timeline"]["workers"]},
    }
    for k, v in rows.items():
        assert 20 <= len(v) <= 1000, (path, k, len(v))
    for k in ("Time breakdown", "display", "timeline"):
        assert named <= rows[k], (path, k, named - rows[k])
    for fn, ws in r["Python functions"].items():
        assert len(ws) <= 1000, (fn, len(ws))
PY
then ok "10,000 workers: every one in \"workers\", at most 1,000 rows per section, the named ones among them"
else not_ok "bounded sections"; fi

