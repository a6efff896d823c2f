#!/usr/bin/env python3
"""long_functions.py - list C functions longer than a limit (150 lines).

The project's rule (docs/design.md, "Conventions"): no function over 150
lines.  A function is counted from the line of its opening brace to its
closing brace, both at column 0 (the kernel style every source here keeps),
both lines included.  Scans src/**/*.c and python/perftracker/*.c unless
files are given.

Usage: long_functions.py [--limit N] [--max M] [FILE...]
Prints "LINES FILE:LINE NAME" per function over N lines, longest first, and
exits 1 when more than M (default 0) are over, else 0.
"""
import argparse
import glob
import os
import re
import sys

IDENT = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)\s*\(')


def name_of(lines, brace):
    """The function's name: the identifier before the first '(' of the
    declaration that ends on the line before the opening brace."""
    start = brace - 1
    while start > 0:
        prev = lines[start - 1].rstrip()
        if (not prev or prev.endswith(';') or prev.endswith('}') or prev.endswith('*/')
                or prev.startswith('#')):
            break
        start -= 1
    m = IDENT.search(' '.join(l.strip() for l in lines[start:brace]))
    return m.group(1) if m else '?'


def functions(path):
    """(first line, line count, name) of every function in path."""
    with open(path, encoding='utf-8', errors='replace') as f:
        lines = f.read().split('\n')
    out = []
    i = 0
    while i < len(lines):
        if lines[i].rstrip() == '{':
            j = i + 1
            while j < len(lines) and not lines[j].startswith('}'):
                j += 1
            if j < len(lines):
                out.append((i + 1, j - i + 1, name_of(lines, i)))
            i = j
        i += 1
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--limit', type=int, default=150)
    ap.add_argument('--max', type=int, default=0)
    ap.add_argument('files', nargs='*')
    a = ap.parse_args()
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
    files = a.files or sorted(glob.glob(os.path.join(root, 'src', '**', '*.c'), recursive=True) +
                              glob.glob(os.path.join(root, 'python', 'perftracker', '*.c')))
    if not files:
        print('long_functions.py: no C files found', file=sys.stderr)
        return 2
    over = []
    for path in files:
        for line, n, name in functions(path):
            if n > a.limit:
                over.append((n, os.path.relpath(path, root), line, name))
    over.sort(key=lambda t: (-t[0], t[1], t[2]))
    for n, path, line, name in over:
        print('%d %s:%d %s' % (n, path, line, name))
    return 1 if len(over) > a.max else 0


if __name__ == '__main__':
    sys.exit(main())
