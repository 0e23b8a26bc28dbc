#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Summarise a table benchmark run (tools/bench-host/tables.sh).

Reads OUT/run/<job>/ (callgrind dumps cg.<pid>.<n>, native.out, vg.out)
and prints, per N, the cost per operation of kwq's table (through
kwq_add/kwq_remove) and of rhashtable (through rhtb.c) with hsiphash and
with jhash, the growth's work and longest critical section, and memory;
writes OUT/results.csv, OUT/holds.csv and OUT/table.txt.

An operation's cost is the inclusive cost of the calls to the function
its dump label names (groups=name:function,...), whoever the caller; each
must have been called exactly ops= times, or the report stops.
"""
import csv
import glob
import os
import re
import sys

from cgutil import EVENTS, add, costs, die, est_us, kv_lines as kv, vec
from cgutil import llmiss as ll

TABLES = [("kwq", "kwq (kwq_add/kwq_remove)"),
          ("rht-sip", "rhashtable, hsiphash"),
          ("rht-jhash", "rhashtable, jhash")]


def parse_dump(path):
    """A dump's label, summary and calls: callee -> [calls, inclusive]."""
    label = events = summary = None
    arcs = {}
    cfn = None
    pending = None
    with open(path) as f:
        for line in f:
            c = line[:1]
            if pending is not None and (c.isdigit() or c in "+-*"):
                a = arcs.setdefault(cfn.split(".")[0], [0, vec()])
                a[0] += pending
                add(a[1], costs(line.split()[1:], events))
                pending = None
            elif line.startswith("cfn="):
                cfn = line[4:].strip()
            elif line.startswith("calls="):
                pending = int(line[6:].split()[0])
            elif line.startswith("desc: Trigger: Client Request: "):
                label = line[len("desc: Trigger: Client Request: "):].strip()
            elif line.startswith("events:"):
                events = line.split()[1:]
            elif line.startswith("summary:"):
                summary = costs(line.split()[1:], events)
    return label, summary, arcs


# kwq's table, as lines of the sources: the hash, the bucket, the chain
# walks (locked and lockless), link, unlink and the grow check. Their self
# cost, wherever gcc inlined them, plus the calls to hsiphash and memcmp
# they make; not the queue's lock, node or FIFO. Each function is looked
# for in every file of KWQ_TABLE_FILES, and must be found in one.
KWQ_TABLE_FILES = ["src/table.h", "src/table.c", "src/queue.h", "src/queue.c"]
KWQ_TABLE_FNS = ["kwq_hash", "kwq_bucket", "kwq_chain_append",
                 "kwq_chain_link", "kwq_lookup", "kwq_lock_lookup",
                 "kwq_seen_lockless"]


def kwq_table_lines(root):
    """{file: set of 1-based lines} of kwq's table code under root."""
    out = {}
    found = set()

    def body(src, i):
        """A definition's lines, or none for a declaration."""
        j = i
        while src[j] != "{":
            if src[j].rstrip().endswith(";"):
                return range(0)
            j += 1
        while src[j] != "}":
            j += 1
        return range(i + 1, j + 2)      # 1-based, closing brace included

    def span(src, i, first, last, what, path):
        """Lines from the one holding first (at i or after) to last."""
        while i < len(src) and first not in src[i]:
            i += 1
        j = i
        while j < len(src) and last not in src[j]:
            j += 1
        if j >= len(src):
            die("%s not found in %s" % (what, path))
        return range(i + 1, j + 2)

    for rel in KWQ_TABLE_FILES:
        path = os.path.join(root, rel)
        src = open(path).read().split("\n")
        lines = set()
        for i, l in enumerate(src):
            for fn in KWQ_TABLE_FNS:
                # The definition: its name at the line's start or after
                # its return type, not a declaration (";").
                if re.match(r"^(\w.*[ *])?%s\(" % fn, l) and body(src, i):
                    lines.update(body(src, i))
                    found.add(fn)
            if re.match(r"^(static .*)?kwq_node_insert\(", l):
                # The grow check and the hash's store in the new node.
                lines.update(span(src, i, "q->grow_at", "}",
                                  "kwq_node_insert()'s grow check", path))
                lines.update(span(src, i, "atomic_set(&n->hword, hash);",
                                  "atomic_set(&n->hword, hash);",
                                  "kwq_node_insert()'s hash store", path))
                found.add("kwq_node_insert")
            if re.match(r"^static .*kwq_node_free\(", l):
                # The unlink, from "if (!pp) {" to the store.
                lines.update(span(src, i, "if (!pp) {",
                                  "WRITE_ONCE(*pp, n->hnext);",
                                  "kwq_node_free()'s unlink", path))
                found.add("kwq_node_free")
        if lines:
            out[rel] = lines
    missing = set(KWQ_TABLE_FNS + ["kwq_node_insert", "kwq_node_free"]) - found
    if missing:
        die("not found in %s: %s" % (", ".join(KWQ_TABLE_FILES),
                                     ", ".join(sorted(missing))))
    return out


def kwq_file(path):
    """The KWQ_TABLE_FILES entry path names, or None."""
    for rel in KWQ_TABLE_FILES:
        if (path or "").endswith(rel):
            return rel
    return None


def parse_table_lines(path, lines):
    """Cost of kwq's table lines in a dump (see KWQ_TABLE_FNS)."""
    v = vec()
    events = None
    cur = fl = cfn = None
    pending = False
    with open(path) as f:
        for line in f:
            c = line[:1]
            if c.isdigit() or c in "+-*":
                tok = line.split()
                inq = int(tok[0]) in lines.get(kwq_file(cur), ())
                if pending:
                    pending = False
                    callee = cfn.split(".")[0]
                    if callee.startswith("__hsiphash") or (
                            inq and callee == "memcmp"):
                        add(v, costs(tok[1:], events))
                elif inq:
                    add(v, costs(tok[1:], events))
            elif line.startswith("fl="):
                fl = cur = line[3:].strip()
            elif line.startswith(("fi=", "fe=")):
                cur = line[3:].strip()
            elif line.startswith("fn="):
                cur = fl
            elif line.startswith("cfn="):
                cfn = line[4:].strip()
            elif line.startswith("calls="):
                pending = True
            elif line.startswith("events:"):
                events = line.split()[1:]
    return v


def main():
    if len(sys.argv) != 2:
        die("usage: tables.py OUT")
    out = sys.argv[1]
    jobs = sorted(glob.glob(os.path.join(out, "run", "*")))
    if not jobs:
        die("no runs under %s/run" % out)
    phases = {}     # (scen, n, phase) -> {"ops", "groups", "arcs"}
    grow = {}       # (scen, n) -> cost of all deferred work, fill
    works = {}      # (scen, n, work) -> cost of one work item
    holds = []      # (scen, n, work, chain, buckets, cost)
    mem = {}
    native = {}
    here = os.path.dirname(os.path.abspath(__file__))
    tlines = kwq_table_lines(os.path.join(here, "..", ".."))
    kwq_lines = {}  # (n, phase) -> cost vector of kwq's table lines
    for job in jobs:
        if not any(l.startswith("ok ") for l in open(os.path.join(job, "vg.out"))):
            die("%s did not finish" % job)
        dumps = []
        for path in glob.glob(os.path.join(job, "cg.*.*")):
            m = re.match(r".*/cg\.(\d+)\.(\d+)$", path)
            if m:
                dumps.append((int(m.group(2)), path))
        for _, path in sorted(dumps):
            label, summary, arcs = parse_dump(path)
            if not label or not label.startswith("tb "):
                die("%s: not a tablebench dump (%s)" % (path, label))
            lab = dict(t.partition("=")[::2] for t in label.split()[1:])
            scen, n, phase = lab["scen"], int(lab["n"]), lab["phase"]
            if phase == "setup":
                continue
            if phase in ("grow", "grow_hold"):
                # Less the driver's lock hook (tablebench.c), called for
                # every lock the work takes, dumped or not.
                hook = arcs.get("tb_lock_hook", [0, vec()])[1]
                summary = [a - b for a, b in zip(summary, hook)]
                add(grow.setdefault((scen, n), vec()), summary)
                add(works.setdefault((scen, n, int(lab["work"])), vec()),
                    summary)
                if phase == "grow_hold":
                    holds.append((scen, n, int(lab["work"]),
                                  int(lab["chain"]), int(lab["buckets"]),
                                  summary))
                continue
            if scen == "kwq" and phase in ("fill", "at_n"):
                add(kwq_lines.setdefault((n, phase), vec()),
                    parse_table_lines(path, tlines))
            p = phases.setdefault((scen, n, phase),
                                  {"ops": 0, "groups": lab["groups"],
                                   "arcs": {}})
            p["ops"] += int(lab["ops"])
            for callee, (calls, v) in arcs.items():
                a = p["arcs"].setdefault(callee, [0, vec()])
                a[0] += calls
                add(a[1], v)
        for r in kv(os.path.join(job, "vg.out"), "mem"):
            mem[(r["scen"], int(r["n"]))] = r
        for r in kv(os.path.join(job, "native.out"), "holdmax"):
            native[(r["scen"], int(r["n"]), r["phase"])] = int(r["ns"])

    # (scen, n, phase, name) -> per-op cost vector
    ops = {}
    for (scen, n, phase), p in phases.items():
        for g in p["groups"].split(","):
            name, _, fn = g.partition(":")
            calls, v = p["arcs"].get(fn, [0, vec()])
            if calls != p["ops"]:
                die("%s n=%d %s: %s called %d times, expected %d"
                    % (scen, n, phase, fn, calls, p["ops"]))
            ops[(scen, n, phase, name)] = ([x / calls for x in v], calls)

    ns = sorted({k[1] for k in ops})
    rows = []
    holdrows = []
    lines = []
    P = lines.append
    P("kwq's hash table against the kernel's rhashtable, under callgrind "
      "(deterministic counts)")
    P("cache model: D1 32 KiB 8-way, LL 8 MiB 16-way, 64 B lines; "
      "LL = DLmr + DLmw per operation")
    for n in ns:
        P("")
        hdr = "%-36s" % ("N=%d" % n) + "".join(
            "%22s" % t[1][:21] for t in TABLES)
        P(hdr)
        P("%-36s" % "" + "".join("%13s %8s" % ("Ir/op", "LL/op")
                                 for _ in TABLES))

        def row(label, get):
            cells = []
            for scen, _ in TABLES:
                v = get(scen)
                if v is None:
                    cells.append("%13s %8s" % ("-", "-"))
                    continue
                cells.append("%13.1f %8.2f" % (v[0], ll(v)))
                rows.append({"n": n, "table": scen, "operation": label,
                             "ir": round(v[0], 2), "ll": round(ll(v), 4),
                             "d1": round(v[EVENTS.index("D1mr")] +
                                         v[EVENTS.index("D1mw")], 4)})
            P("%-36s" % label + "".join(cells))

        def op(phase, name):
            return lambda s: ops.get((s, n, phase, name), (None,))[0]

        def growth(s):
            g = grow.get((s, n))
            f = ops.get((s, n, "fill", "insert"))
            if not f:
                return None
            return [x / f[1] for x in (g or vec())]

        def fill_total(s):
            f = op("fill", "insert")(s)
            g = growth(s)
            return [a + b for a, b in zip(f, g)] if f and g else None

        def both(s):
            a = op("at_n", "insert")(s)
            b = op("at_n", "remove")(s)
            return [x + y for x, y in zip(a, b)] if a and b else None

        def table_both(s):
            a = op("at_n", "table_insert")(s)
            b = op("at_n", "table_remove")(s)
            return [x + y for x, y in zip(a, b)] if a and b else None

        row("insert, fill 0->N", op("fill", "insert"))
        row("  growth work per insert", growth)
        row("  fill, growth included", fill_total)
        row("insert new key, N present", op("at_n", "insert"))
        row("remove a key, N present", op("at_n", "remove"))
        row("insert + remove, N present", both)
        def kwq_alone(phase, ops_name):
            def get(s):
                if s != "kwq":
                    return op(phase, ops_name)(s) if ops_name != "both" \
                        else table_both(s)
                o = ops.get(("kwq", n, phase, "insert"))
                v = kwq_lines.get((n, phase))
                return [x / o[1] for x in v] if o and v else None
            return get

        row("  table alone: insert", op("at_n", "table_insert"))
        row("  table alone: remove", op("at_n", "table_remove"))
        row("  table alone: insert + remove", kwq_alone("at_n", "both"))
        row("  table alone: insert, fill", kwq_alone("fill", "table_insert"))

        P("growth, fill 0->N (estimate: Ir/3000 us + 0.08 us per LL miss):")
        for scen, name in TABLES:
            hs = [h for h in holds if h[0] == scen and h[1] == n]
            ws = {k[2]: v for k, v in works.items() if k[0] == scen and k[1] == n}
            if not hs:
                P("  %-24s no critical section dumped" % name)
                continue
            m = max(hs, key=lambda h: est_us(h[5]))
            lw = max(ws, key=lambda w: ws[w][0])
            nat = native.get((scen, n, "fill"))
            P("  %-24s %d growths; longest section: %s Ir, %s LL = %.1f us "
              "(%s); longest work item: %s Ir, %s LL = %.0f us; native "
              "longest hold %s us"
              % (name, len(ws), "{:,}".format(m[5][0]), "{:,}".format(ll(m[5])),
                 est_us(m[5]),
                 "%d sections dumped" % len(hs) if scen == "kwq" else
                 "chain of %d, %d sections of longest chains dumped"
                 % (m[3], len(hs)),
                 "{:,}".format(ws[lw][0]), "{:,}".format(ll(ws[lw])),
                 est_us(ws[lw]),
                 "%.1f" % (nat / 1000) if nat is not None else "-"))
            for h in hs:
                holdrows.append({"table": scen, "n": n, "work": h[2],
                                 "chain": h[3], "old_buckets": h[4],
                                 "ir": h[5][0], "ll": ll(h[5]),
                                 "est_us": round(est_us(h[5]), 2)})
        P("memory at N, per key:")
        for scen, name in TABLES:
            m = mem.get((scen, n))
            if not m:
                continue
            items = int(m["items"])
            P("  %-24s %.1f B object + %.1f B table = %.1f B"
              % (name, int(m["obj_bytes"]) / items,
                 int(m["table_bytes"]) / items,
                 (int(m["obj_bytes"]) + int(m["table_bytes"])) / items))
    P("")
    P("(kwq: the whole kwq_add/kwq_remove, the queue's own work included; "
      "rhashtable: node allocation, key copy and free included. \"table "
      "alone\": rhashtable's calls (hash, bucket lock, walk, link/unlink); "
      "for kwq, the lines of %s, of kwq_node_insert()'s grow check and "
      "hash store and of kwq_node_free()'s unlink, with "
      "the hsiphash and memcmp calls they make, wherever inlined: no lock, "
      "q->lock being the queue's)" % ", ".join(KWQ_TABLE_FNS))
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    with open(os.path.join(out, "table.txt"), "w") as f:
        f.write(text)
    for name, fields, data in (
            ("results.csv", ["n", "table", "operation", "ir", "ll", "d1"], rows),
            ("holds.csv", ["table", "n", "work", "chain", "old_buckets", "ir",
                           "ll", "est_us"], holdrows)):
        with open(os.path.join(out, name), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            w.writerows(data)


if __name__ == "__main__":
    main()
