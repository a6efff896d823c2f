#!/usr/bin/env python3
"""timeline_check.py - an independent check of PerfDisplay/timeline.json.gz
(docs/display.md "The file"), written without the C code's help.

  timeline_check.py structure FILE      the Trace Event Format rules Perfetto
                                        relies on; prints a one-line summary
  timeline_check.py marks FILE RANK     the late spans of rank RANK and the
                                        waits of its peers at the same instants

structure checks: a JSON object with traceEvents; phases only X, M, s, f;
every pid has a process_name and every (pid, tid) with a slice a
thread_name; ts and dur finite, dur >= 0; flow ids paired (one s, one f,
the f not before the s), each inside a slice of its track; on every track
the slices are nested or disjoint (1 ns slack for the 3-decimal ts).
Exit 1 with one line per problem (at most 20).
"""
import gzip
import json
import sys


def load(path):
    with gzip.open(path, 'rt', encoding='utf-8') as f:
        return json.load(f)


def structure(doc):
    probs = []
    if not isinstance(doc, dict) or not isinstance(doc.get('traceEvents'), list):
        return ['not an object with a traceEvents array'], {}
    ev = doc['traceEvents']
    pnames, tnames = set(), set()
    slices, flows = {}, {}
    for i, e in enumerate(ev):
        ph = e.get('ph')
        if ph not in ('X', 'M', 's', 'f'):
            probs.append('event %d: phase %r' % (i, ph))
            continue
        pid, tid = e.get('pid'), e.get('tid')
        if not isinstance(pid, int) or not isinstance(tid, int):
            probs.append('event %d: pid/tid not integers' % i)
            continue
        if ph == 'M':
            if e.get('name') == 'process_name':
                pnames.add(pid)
            elif e.get('name') == 'thread_name':
                tnames.add((pid, tid))
            continue
        ts = e.get('ts')
        if not isinstance(ts, (int, float)) or ts != ts or ts < 0:
            probs.append('event %d: ts %r' % (i, ts))
            continue
        if ph == 'X':
            d = e.get('dur')
            if not isinstance(d, (int, float)) or d != d or d < 0:
                probs.append('event %d: dur %r' % (i, d))
                continue
            if not isinstance(e.get('name'), str):
                probs.append('event %d: no name' % i)
            slices.setdefault((pid, tid), []).append((ts, ts + d, i))
        else:
            flows.setdefault(e.get('id'), []).append((ph, pid, tid, ts, i))
    for (pid, tid) in slices:
        if pid not in pnames:
            probs.append('pid %d has no process_name' % pid)
        if (pid, tid) not in tnames:
            probs.append('track %d/%d has no thread_name' % (pid, tid))
    nested = 0
    for key, v in slices.items():
        v.sort(key=lambda x: (x[0], -(x[1] - x[0])))
        stack = []
        for a, b, i in v:
            while stack and stack[-1] <= a + 1e-3:
                stack.pop()
            if stack and b > stack[-1] + 1e-3:
                probs.append('track %d/%d: event %d [%.3f, %.3f] overlaps its '
                             'enclosing slice ending at %.3f' % (key[0], key[1], i, a, b, stack[-1]))
            if stack:
                nested += 1
            stack.append(b)
    npairs = 0
    for fid, v in flows.items():
        kinds = sorted(x[0] for x in v)
        if kinds != ['f', 's']:
            probs.append('flow %r: %s' % (fid, ' '.join(kinds)))
            continue
        s = [x for x in v if x[0] == 's'][0]
        f = [x for x in v if x[0] == 'f'][0]
        if f[3] < s[3]:
            probs.append('flow %r ends before it starts' % fid)
        for ph, pid, tid, ts, i in (s, f):
            if not any(a <= ts <= b for a, b, _ in slices.get((pid, tid), [])):
                probs.append('flow %r: its %s at %.3f is inside no slice of track %d/%d'
                             % (fid, ph, ts, pid, tid))
        npairs += 1
    stats = {'events': len(ev), 'processes': len(pnames), 'tracks': len(slices),
             'slices': sum(len(v) for v in slices.values()), 'nested': nested,
             'flows': npairs}
    return probs, stats


def rank_pid(doc, rank):
    for e in doc['traceEvents']:
        if e.get('ph') == 'M' and e.get('name') == 'process_name' and \
                str(e['args'].get('name', '')).split(' (')[0].split(',')[0] == 'rank %d' % rank:
            return e['pid']
    return None


def marks(doc, rank):
    """Late spans of rank's process and, per late span, the peers whose wait
    ends at that rank's arrival (the same instant)."""
    pid = rank_pid(doc, rank)
    tn = {(e['pid'], e['tid']): e['args']['name'] for e in doc['traceEvents']
          if e.get('ph') == 'M' and e.get('name') == 'thread_name'}
    late, waits = [], {}
    for e in doc['traceEvents']:
        if e.get('ph') != 'X':
            continue
        name = tn.get((e['pid'], e['tid']), '')
        if name.startswith('lockstep: late') and e['pid'] == pid:
            late.append((e['args']['instance'], e['ts'] + e['dur']))
        elif name.startswith('lockstep: waits'):
            waits.setdefault(e['args']['instance'], []).append((e['pid'], e['ts'] + e['dur']))
    out = []
    for inst, arrive in sorted(late):
        w = waits.get(inst, [])
        same = [p for p, end in w if abs(end - arrive) < 1.0]
        out.append((inst, round(arrive, 3), len(w), len(same)))
    return out


def main(argv):
    if len(argv) >= 3 and argv[1] == 'structure':
        doc = load(argv[2])
        probs, st = structure(doc)
        for p in probs[:20]:
            print('timeline_check: %s: %s' % (argv[2], p))
        if not probs:
            print(' '.join('%s=%d' % kv for kv in st.items()))
        return 1 if probs else 0
    if len(argv) >= 4 and argv[1] == 'marks':
        doc = load(argv[2])
        for inst, arrive, nwait, nsame in marks(doc, int(argv[3])):
            print('instance %d: late until %.3f; %d waits, %d end at its arrival'
                  % (inst, arrive, nwait, nsame))
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv))
