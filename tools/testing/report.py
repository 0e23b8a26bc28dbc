#!/usr/bin/env python3
"""Read a kwq test VM's console log and judge it.

The VM's /init (init.sh) wraps every KTAP document it hands over in
KWQ-KTAP-BEGIN/END markers; anything else on the console is kernel output,
scanned for splats. A run passes only if every KTAP case passed, the VM
reached KWQ-HARNESS-DONE, kmemleak found nothing and no splat appeared.

usage: report.py [--label L] [--counts FILE] [--failures FILE] LOG
  --counts FILE    append "passed failed skipped" for the caller's summary
  --failures FILE  write one line per failure ("case SUITE.CASE",
                   "splat KIND", "missing ...") for the harness self-test
  --kcsan-only-kwq count a KCSAN report only if its stacks name kwq
                   ("[kwq]" or a kwq_ function) and its racing accesses are
                   not all in KCSAN_OUTSIDE (the kernel's own races, each
                   explained); others are listed, not failed
Exit status: 0 pass, 1 fail.
"""
import argparse
import re
import sys

# Kernel splats. Each is a (kind, regex) pair; the kind names the failure.
SPLATS = [
    ("KASAN", r"BUG: KASAN:"),
    ("UBSAN", r"UBSAN:"),
    ("KCSAN", r"BUG: KCSAN:"),
    ("lockdep", r"WARNING: (possible (circular|recursive) locking|inconsistent lock state"
                r"|bad unlock balance|held lock freed|lock held when returning)"
                r"|INFO: (trying to register non-static key|possible irq lock inversion)"
                r"|DEBUG_LOCKS_WARN_ON"),
    ("sleep-in-atomic", r"BUG: sleeping function called from invalid context"
                        r"|BUG: scheduling while atomic"),
    ("hung-task", r"INFO: task .* blocked for more than"),
    ("rcu-stall", r"rcu: INFO: .* detected stalls"),
    ("refcount", r"refcount_t: "),
    ("debugobjects", r"ODEBUG: "),
    ("list-corruption", r"list_(add|del) corruption"),
    ("kmemleak", r"kmemleak: \d+ new suspected memory leaks|unreferenced object 0x"),
    ("Oops", r"Oops: |general protection fault|kernel BUG at"),
    ("BUG", r"BUG: (?!KASAN|KCSAN|sleeping function|scheduling while)"),
    ("WARN", r"WARNING: CPU: \d+ PID: \d+ at "),
    ("panic", r"Kernel panic - not syncing"),
]
SPLAT_RES = [(k, re.compile(r)) for k, r in SPLATS]
# Strip a printk timestamp/caller prefix such as "[    1.234567] ".
PREFIX = re.compile(r"^\[\s*\d+\.\d+\]\s?")
RESULT = re.compile(r"^(ok|not ok) (\d+)\s*(?:-\s*)?([^#]*?)\s*(#\s*(.*))?$")


class Node:
    def __init__(self, name):
        self.name = name
        self.children = []
        self.ok = None
        self.skip = False
        self.why = ""
        self.diag = []
        self.pending = []  # diagnostics seen before the next result line


def parse_ktap(lines):
    """Parse (possibly nested) KTAP into a tree of Nodes; returns the root.

    Nesting is by 4-space indentation (KTAP v1); "# Subtest: X" names the
    subtest whose result line closes it.
    """
    root = Node("")
    stack = [(0, root)]  # (indent, node)
    for raw in lines:
        line = raw.rstrip("\n")
        if not line.strip():
            continue
        indent = (len(line) - len(line.lstrip(" "))) // 4
        text = line.strip()
        # Close deeper levels that ended without a result line.
        while len(stack) > 1 and indent < stack[-1][0]:
            stack.pop()
        parent = stack[-1][1]
        if indent > stack[-1][0]:
            sub = Node("?")
            parent.children.append(sub)
            stack.append((indent, sub))
            parent = sub
        m = RESULT.match(text)
        if m:
            name = m.group(3).strip() or "#%s" % m.group(2)
            directive = (m.group(5) or "").strip()
            # The result line of a subtest closes the node opened for it.
            node = None
            if parent.children and parent.children[-1].ok is None \
                    and parent.children[-1].name in (name, "?") \
                    and parent.children[-1].children:
                node = parent.children[-1]
                node.name = name
            if node is None:
                node = Node(name)
                parent.children.append(node)
            node.ok = m.group(1) == "ok"
            node.skip = directive.upper().startswith("SKIP")
            node.why = directive[4:].strip() if node.skip else ""
            node.diag += parent.pending
            parent.pending = []
            continue
        if text.startswith("# Subtest:"):
            parent.name = text.split(":", 1)[1].strip()
            continue
        if text.startswith("KTAP version") or re.match(r"^\d+\.\.\d+$", text):
            continue
        parent.pending.append(text)
    return root


def leaves(node, path):
    """Yield (path, node) for every leaf result (test case)."""
    kids = [c for c in node.children if c.ok is not None or c.children]
    if not kids:
        yield path, node
        return
    for c in kids:
        yield from leaves(c, path + [c.name])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--label", default="")
    ap.add_argument("--counts")
    ap.add_argument("--failures")
    ap.add_argument("--kcsan-only-kwq", action="store_true")
    ap.add_argument("log")
    args = ap.parse_args()

    with open(args.log, errors="replace") as f:
        lines = [PREFIX.sub("", l.rstrip("\r\n")) for l in f]

    failures = []  # (machine line, human line)
    passed = failed = skipped = 0
    suites = []  # (block name, suite name, passed, failed, skipped, fail lines)
    done = False
    block = None
    body = []
    splats = []
    kcsan = None  # (line no, title, body) of a KCSAN report being read
    kcsan_ignored = []
    for no, line in enumerate(lines, 1):
        if kcsan is not None:
            # A KCSAN report ends with a line of "=".
            if not line.strip().startswith("=========="):
                kcsan[2].append(line)
                continue
            judge_kcsan(kcsan, splats, kcsan_ignored)
            kcsan = None
            continue
        if args.kcsan_only_kwq and KCSAN_RE.search(line):
            kcsan = (no, line.strip(), [])
            continue
        if block is None:
            if line.startswith("KWQ-KTAP-BEGIN "):
                block = line.split(" ", 1)[1].strip()
                body = []
                continue
            if line.strip() == "KWQ-HARNESS-DONE":
                done = True
                continue
            for kind, rx in SPLAT_RES:
                if rx.search(line):
                    splats.append((kind, no, line.strip()))
                    break
            continue
        if line.startswith("KWQ-KTAP-END"):
            if block == "kmemleak":
                if any(l.strip() for l in body):
                    splats.append(("kmemleak", no, "kmemleak report not empty: "
                                   + body[0].strip()))
            else:
                suites.extend(judge_block(block, body))
            block = None
            continue
        body.append(line)
        # Splats can interleave with a block's lines too.
        for kind, rx in SPLAT_RES:
            if rx.search(line):
                splats.append((kind, no, line.strip()))
                break

    if kcsan is not None:
        judge_kcsan(kcsan, splats, kcsan_ignored)
    if block is not None:
        failures.append(("missing end of " + block,
                         "KTAP block %s never ended (VM crashed or hung?)" % block))
    if not done:
        failures.append(("missing harness-done",
                         "the VM never reached the end of its plan"))

    label = args.label or args.log
    print("--- %s" % label)
    for bname, sname, p, fl, s, flines, slines in suites:
        passed += p
        failed += fl
        skipped += s
        status = "PASS" if not fl else "FAIL"
        print("  %s %-28s %3d passed, %d failed%s" % (
            status, sname, p, fl, ", %d skipped" % s if s else ""))
        # A skip is named with its reason: make check fails on one.
        for line in slines:
            print("       %s" % line)
        for m, h in flines:
            print("       %s" % h)
            failures.append((m, None))
    for no, text in kcsan_ignored:
        print("  note: KCSAN report outside kwq ignored, log line %d: %s" % (no, text[:120]))
    seen = set()
    for kind, no, text in splats:
        failures.append(("splat " + kind, None))
        if (kind, text) in seen:
            continue
        seen.add((kind, text))
        print("  SPLAT %-10s log line %d: %s" % (kind, no, text[:160]))
    # The torture run's figure (issue 34): splats in its VM's log, goal 0
    # (each fails the run below as well, whatever its cases said).
    if any(sname == "kwq_torture" for _, sname, *_ in suites):
        print("  figure torture_splats %d 0 %s" % (
            len(splats), "missed" if splats else "met"))
    for m, h in failures:
        if h:
            print("  FAIL %s" % h)
    # Splats (one per kind) and harness errors count as failures on top of
    # the KTAP cases.
    failed += len({m for m, h in failures if not m.startswith("case ")})
    print("  log: %s" % args.log)
    if args.counts:
        with open(args.counts, "a") as f:
            f.write("%d %d %d\n" % (passed, failed, skipped))
    if args.failures:
        with open(args.failures, "w") as f:
            for m in dict.fromkeys(m for m, _ in failures):
                f.write(m + "\n")
    return 1 if failed else 0


KCSAN_RE = dict(SPLAT_RES)["KCSAN"]
# A kwq frame in a stack ("kwq_get+0x1a/0x90 [kwq]"), or kwq in the title.
KWQ_FRAME = re.compile(r"\[kwq\]|\bkwq_\w+\+0x")
KWQ_TITLE = re.compile(r"\bkwq_\w+")


# Races inside the kernel that kwq only calls into, by the function that
# makes the racing access (the first frame of a stack), on memory kwq does
# not own. A report is ignored for this only if every access it shows is
# in one of them. Each says why (Documentation/testing.rst, "KCSAN").
KCSAN_OUTSIDE = {
    "obj_to_index":
        "SLUB's slab page flags: PG_workingset (the node partial list mark) "
        "cleared by another CPU under the list lock while the memcg free "
        "hook reads the same word for its section bits, which never change",
}
KCSAN_ACCESS = re.compile(r"\b(read|write)( \(marked\))? to 0x[0-9a-f]+ of \d+ bytes by ")
KCSAN_FRAME = re.compile(r"^(?:\[[ \d.]+\])?\s+([\w.]+)\+0x")


def kcsan_accessors(body):
    """The function of each access a KCSAN report shows (first frames)."""
    out, want = [], False
    for line in body:
        if KCSAN_ACCESS.search(line):
            want = True
            continue
        m = KCSAN_FRAME.match(line) if want else None
        if m:
            out.append(m.group(1))
            want = False
    return out


def judge_kcsan(report, splats, ignored):
    """A KCSAN report counts only if kwq's code is in it, and not known outside."""
    no, title, body = report
    if not (KWQ_TITLE.search(title) or any(KWQ_FRAME.search(l) for l in body)):
        ignored.append((no, title))
        return
    acc = kcsan_accessors(body)
    if acc and all(a in KCSAN_OUTSIDE for a in acc):
        ignored.append((no, "%s (kwq only calls in: %s)" % (title, KCSAN_OUTSIDE[acc[0]])))
        return
    splats.append(("KCSAN", no, title))


def judge_block(bname, body):
    root = parse_ktap(body)
    out = []
    tops = [c for c in root.children if c.ok is not None or c.children]
    if not tops:
        return [(bname, bname, 0, 1, 0,
                 [("missing results " + bname, "no KTAP results in " + bname)], [])]
    for top in tops:
        p = fl = s = 0
        flines, slines = [], []
        for path, leaf in leaves(top, [top.name]):
            name = ".".join(path)
            if leaf.ok is None:
                fl += 1
                flines.append(("case " + name, "no result: " + name))
            elif leaf.skip:
                s += 1
                slines.append("skipped: %s%s" % (name, ": " + leaf.why if leaf.why else ""))
            elif leaf.ok:
                p += 1
            else:
                fl += 1
                why = " | ".join(d.lstrip("# ") for d in leaf.diag[:4])
                flines.append(("case " + name, "not ok: %s %s" % (name, why)))
        # A suite whose own result says failed must not pass on its cases.
        if top.ok is False and not fl:
            fl += 1
            flines.append(("case " + top.name, "suite %s reported not ok" % top.name))
        out.append((bname, top.name, p, fl, s, flines, slines))
    return out


if __name__ == "__main__":
    sys.exit(main())
