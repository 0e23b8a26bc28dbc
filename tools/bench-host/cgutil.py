# SPDX-License-Identifier: GPL-2.0
"""What report.py (make bench-host) and tables.py (make bench-host-tables)
share: callgrind's event vectors, the lock-hold estimate, key=value lines.
"""
import os
import sys

# Callgrind events with --cache-sim=yes, in file order.
EVENTS = ["Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw"]
HOLD_GHZ = 3.0          # instruction-only estimate: 1 instruction/cycle
HOLD_MISS_US = 0.080    # and 80 ns per last-level miss, not overlapped


def die(msg):
    sys.stderr.write("%s: error: %s\n" % (os.path.basename(sys.argv[0]), msg))
    sys.exit(1)


def vec():
    return [0] * len(EVENTS)


def add(a, b):
    for i, v in enumerate(b):
        a[i] += v


def costs(tokens, events):
    v = vec()
    for name, tok in zip(events, tokens):
        if name in EVENTS:
            v[EVENTS.index(name)] = int(tok)
    return v


def llmiss(v):
    return v[EVENTS.index("DLmr")] + v[EVENTS.index("DLmw")]


def est_us(v):
    """A lock hold's estimate: instructions at HOLD_GHZ plus misses."""
    return v[0] / (HOLD_GHZ * 1000) + llmiss(v) * HOLD_MISS_US


def kv_lines(path, kind):
    """The key=value fields of each line of @path whose first word is @kind."""
    rows = []
    if not os.path.exists(path):
        return rows
    with open(path) as f:
        for line in f:
            tok = line.split()
            if tok and tok[0] == kind:
                rows.append(dict(t.partition("=")[::2] for t in tok[1:]))
    return rows
