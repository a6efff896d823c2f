#!/usr/bin/python3
"""make_big_trace.py - build a large Kineto trace for reader benchmarks.

Repeats the traceEvents of a real trace (plain or .gz) until the output is
about SIZE bytes, keeping the original formatting and header, so the file
looks like a long profiling run of the same job.  The speed numbers in
docs/input.md were measured on files made this way, e.g.:

  make_big_trace.py tests/data/dlrm/worker0_step_12.1694128201545.pt.trace.json /tmp/big.json 200000000

Write the output under /tmp; do not commit it.
"""
import gzip
import json
import sys


def main():
    src, out = sys.argv[1], sys.argv[2]
    target = int(sys.argv[3]) if len(sys.argv) > 3 else 200_000_000
    with open(src, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    text = raw.decode()
    start = text.index("[", text.index('"traceEvents"')) + 1
    _, end = json.JSONDecoder().raw_decode(text, start - 1)
    body = text[start:end - 1].rstrip().rstrip(",")
    copies = max(1, target // len(body))
    with open(out, "w") as f:
        f.write(text[:start])
        f.write(body)
        for _ in range(copies - 1):
            f.write(",\n")
            f.write(body)
        f.write(text[end - 1:])
    print("%s: %d copies of %d bytes of events" % (out, copies, len(body)))


if __name__ == "__main__":
    main()
