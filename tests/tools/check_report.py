#!/usr/bin/env python3
"""check_report.py - a report's numbers agree (docs/testing.md "Reports
the suite writes", docs/diagnose.md "Numbers that agree").

    check_report.py [--tap] PATH...

Reads each report.json (a file, or every report.json under a folder) and
checks every finding (top-level "findings" and compare's "Compare"
"findings"), its sentence, its confidence and its evidence, for what a
reader would take as a contradiction:

  * "X ms instead of X ms" (equal numbers) under a strong or moderate level;
  * a share above 100%: "N% of its time" (of the window, of the step) in a
    sentence, or a "time lost (share of window)" (the confidence's, a
    metric's) outside [0, 1];
  * a level that contradicts its own numbers: strong with under 3% of the
    time lost (a poor cue rules strong out; not compare's findings, graded
    by their own rule, docs/compare.md); a what-if whose share is not
    the confidence's time lost, or that saves nothing shown at 0.01 ms or
    no more than the noise, under a level other than weak; a what-if step
    longer than the step it replaces (shorter, for compare's "got faster",
    whose what-if undoes a gain); "loses N%" in the evidence that is
    not the time lost;
  * "none is above the ... threshold of T ms" beside a step it says takes
    more than T ms;
  * a negative time where a cost is stated ("about -0.5 ms", "loses -2%",
    a negative "impact (ms)");
  * NaN or infinity: "nan"/"inf" in a sentence, a number that is not
    finite.

Prints one line per problem ("PATH: finding N: what") and exits 1 when
there is one, 0 when none, 2 on a file it cannot read.  With --tap, one
TAP line per report ("ok N - PATH", "not ok N - PATH" and the problems as
"# " lines) for tests/run's counting, and exit 0 unless a line failed.
Stdlib only.
"""
import json
import math
import os
import re
import sys

NUM = r"(-?\d+(?:\.\d+)?)"
INSTEAD = re.compile(NUM + r" ?(ms|µs|s)? instead of " + NUM + r" ?(ms|µs|s)?")
SHARE = re.compile(NUM + r"% of (?:its|the|their|this worker's|the worker's) "
                   r"(?:own )?(?:time|window|step|steps)\b")
LOSES = re.compile(r"\bloses " + NUM + r"% of its time")
WHAT_IF_PCT = re.compile(r"instead of " + NUM + r" ms \(-" + NUM + r" ms, -" + NUM + r"%\)")
NONE_ABOVE = re.compile(r"none is above the [^.;]*?threshold of " + NUM + r" ms")
TAKES = re.compile(r"\b(?:takes?|took) " + NUM + r" ms")
NEG_COST = re.compile(r"\b(?:about|losing|loses|lost|costs?|saves?|saving|waited|waits) "
                      r"(?:about |up to |for )?-\d")
NAN_WORD = re.compile(r"\b(?:nan|inf|infinity)\b", re.I)


def is_num(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def nonfinite(x, path=""):
    """Paths of the numbers inside x that are not finite."""
    if is_num(x):
        return [path] if not math.isfinite(x) else []
    if isinstance(x, dict):
        return [p for k, v in x.items() for p in nonfinite(v, path + "/" + str(k))]
    if isinstance(x, list):
        return [p for i, v in enumerate(x) for p in nonfinite(v, path + "/%d" % i)]
    return []


def texts(f):
    """The sentences a finding says: its explanation, its confidence's
    evidence and its merged evidence's explanations."""
    out = []
    if isinstance(f.get("explanation"), str):
        out.append(("explanation", f["explanation"]))
    conf = f.get("confidence")
    if isinstance(conf, dict) and isinstance(conf.get("evidence"), str):
        out.append(("confidence", conf["evidence"]))
    for i, e in enumerate(f.get("evidence") or []):
        if isinstance(e, dict) and isinstance(e.get("explanation"), str):
            out.append(("evidence %d" % i, e["explanation"]))
    return out


def sentence_of(text, pos):
    """The sentence of text around position pos."""
    b = text.rfind(". ", 0, pos)
    e = text.find(". ", pos)
    return text[b + 2 if b >= 0 else 0:e if e >= 0 else len(text)]


def check_text(where, text, level, problems):
    for m in INSTEAD.finditer(text):
        if m.group(1) == m.group(3) and (m.group(2) or "ms") == (m.group(4) or "ms") \
                and level in ("strong", "moderate"):
            problems.append("%s says '%s' under a %s level" % (where, m.group(0), level))
    for m in SHARE.finditer(text):
        if float(m.group(1)) > 100:
            problems.append("%s: a share above 100%%: '%s'" % (where, m.group(0)))
    for m in NONE_ABOVE.finditer(text):
        t = float(m.group(1))
        for k in TAKES.finditer(sentence_of(text, m.start())):
            if float(k.group(1)) > t:
                problems.append("%s: 'none is above the threshold of %s ms' beside '%s'"
                                % (where, m.group(1), k.group(0)))
    for m in NEG_COST.finditer(text):
        problems.append("%s: a negative cost: '%s'" % (where, text[m.start():m.end() + 8]))
    for m in NAN_WORD.finditer(text):
        problems.append("%s: '%s' in the text" % (where, m.group(0)))


def check_finding(f, problems):
    conf = f.get("confidence") if isinstance(f.get("confidence"), dict) else {}
    level = conf.get("level")
    lost = conf.get("time lost (share of window)")
    for where, text in texts(f):
        check_text(where, text, level, problems)
    for p in nonfinite(f):
        problems.append("a number that is not finite at %s" % p)
    if is_num(f.get("impact (ms)")) and f["impact (ms)"] < 0:
        problems.append("a negative impact (ms): %r" % f["impact (ms)"])
    if is_num(lost):
        if lost > 1 or lost < 0:
            problems.append("time lost (share of window) %r is outside [0, 1]" % lost)
        # (compare grades by its own rule: docs/compare.md)
        if level == "strong" and lost < 0.03 and f.get("category") != "Compare":
            problems.append("strong with %.1f%% of the time lost (under 3%% is a poor cue)"
                            % (100 * lost))
        m = LOSES.search(conf.get("evidence") or "")
        if m and abs(float(m.group(1)) - 100 * lost) > 0.051 + 0.005 * 100 * lost:
            problems.append("the evidence says 'loses %s%%', the time lost is %.2f%%"
                            % (m.group(1), 100 * lost))
    for m in f.get("metrics") or []:
        if isinstance(m, dict) and is_num(m.get("value")) and \
                ("share of window" in str(m.get("name")) or str(m.get("name")).startswith("time lost")) \
                and not 0 <= m["value"] <= 1:
            problems.append("metric %r is %r, outside [0, 1]" % (m.get("name"), m["value"]))
    wi = f.get("what if")
    if isinstance(wi, dict) and is_num(wi.get("step (ms)")) and is_num(wi.get("instead of (ms)")):
        step, inst = wi["step (ms)"], wi["instead of (ms)"]
        # compare's "got faster": undoing the change makes the step longer
        # by what the change saved (docs/compare.md)
        faster = f.get("cause") == "got faster"
        if (step > inst + 1e-9) != faster and abs(step - inst) > 1e-9:
            problems.append("the what-if step %.3f ms is %s than the step it replaces "
                            "%.3f ms" % (step, "shorter" if faster else "longer", inst))
        saved = abs(inst - step)
        if round(step, 2) == round(inst, 2) and level in ("strong", "moderate"):
            problems.append("a what-if that saves nothing shown (%.2f ms instead of %.2f ms) "
                            "under a %s level" % (step, inst, level))
        noise = conf.get("noise (ms per step)")
        if is_num(noise) and noise > 0 and saved <= noise and level in ("strong", "moderate"):
            problems.append("a what-if of %.3f ms within the noise (%.3f ms per step) under a "
                            "%s level" % (saved, noise, level))
        if is_num(lost) and inst > 0 and abs(saved / inst - lost) > 5e-4:
            problems.append("two answers to what it costs: the what-if saves %.1f%%, the "
                            "time lost is %.1f%%" % (100 * saved / inst, 100 * lost))
        m = WHAT_IF_PCT.search(f.get("explanation") or "")
        if m and is_num(lost) and abs(float(m.group(3)) - 100 * lost) > 0.051:
            problems.append("the sentence's what-if says -%s%%, the time lost is %.2f%%"
                            % (m.group(3), 100 * lost))


def findings_of(rep):
    out = list(rep.get("findings") or []) if isinstance(rep, dict) else []
    cmp_ = rep.get("Compare") if isinstance(rep, dict) else None
    if isinstance(cmp_, dict):
        out += list(cmp_.get("findings") or [])
    return [f for f in out if isinstance(f, dict)]


def check_report(rep):
    """The problems of one report (a parsed report.json), as strings."""
    problems = []
    for i, f in enumerate(findings_of(rep)):
        mine = []
        check_finding(f, mine)
        rank = f.get("rank", i + 1)
        problems += ["finding %s: %s" % (rank, p) for p in mine]
    return problems


def reports_under(paths):
    for p in paths:
        if os.path.isdir(p):
            for d, dirs, files in sorted(os.walk(p)):
                dirs.sort()
                for n in sorted(files):
                    if n == "report.json" or n.endswith(".report.json"):
                        yield os.path.join(d, n)
        else:
            yield p


def main(argv):
    tap = "--tap" in argv
    paths = [a for a in argv if a != "--tap"]
    if not paths:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    bad = unreadable = n = 0
    for path in reports_under(paths):
        n += 1
        try:
            with open(path, encoding="utf-8") as fh:
                rep = json.load(fh)
            problems = check_report(rep)
        except (OSError, ValueError) as e:
            problems = ["unreadable: %s" % e]
            unreadable += 1
        if tap:
            print("%s %d - %s" % ("not ok" if problems else "ok", n, path))
            for p in problems:
                print("# " + p)
        else:
            for p in problems:
                print("%s: %s" % (path, p))
        bad += bool(problems)
    if tap:
        return 1 if bad else 0
    return 2 if unreadable else 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
