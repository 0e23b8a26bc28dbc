#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the RESULT lines of a kwq benchmark VM console into a table.

usage: report.py --out DIR --machine TEXT --reps N CONSOLE_LOG
       report.py --update-doc RST --out DIR

Writes DIR/results.csv (every measurement), DIR/summary.csv (median,
spread, ratio per figure), DIR/table.txt and DIR/table.rst,
DIR/targets.txt (one line per target: "target NAME MEASURED GOAL
met|missed"), and for gnuplot DIR/scaling.dat + DIR/scaling.gp (cost per
operation against queue size) and DIR/ratios.dat + DIR/ratios.gp (every
kwq/peer ratio as a bar with its min-max and its target); prints the
table and the target lines. Every ratio is taken within one repetition
(kwq and its peer ran back to back in the same VM) and then summarised
over the repetitions.
"""
import argparse
import csv
import math
import datetime
import os
import re
import statistics
import sys

RESULT = re.compile(r"RESULT (suite=\S+(?: \S+=\S+)*)")
SIZES = [1000, 10000, 100000, 1000000]
BEGIN, END = ".. BENCH-TABLE-BEGIN", ".. BENCH-TABLE-END"


def parse(path):
    rows = []
    with open(path, errors="replace") as f:
        for line in f:
            m = RESULT.search(line)
            if not m:
                continue
            kv = dict(p.split("=", 1) for p in m.group(1).split())
            if "error" in kv:
                continue
            rows.append(kv)
    return rows


class Stat:
    """Median and spread of per-repetition values."""

    def __init__(self, values):
        self.values = [v for v in values if v is not None]

    def __bool__(self):
        return bool(self.values)

    @property
    def med(self):
        return statistics.median(self.values)

    @property
    def lo(self):
        return min(self.values)

    @property
    def hi(self):
        return max(self.values)

    @property
    def spread(self):
        """(max - min) / median, in percent."""
        return 100.0 * (self.hi - self.lo) / self.med if self.med else 0.0


def fmt_num(v):
    if v >= 1e6:
        return "%.2fM" % (v / 1e6)
    if v >= 1e4:
        return "%.1fk" % (v / 1e3)
    if v >= 100:
        return "%.0f" % v
    return "%.3g" % v


def cell(s):
    return "%s ±%.0f%%" % (fmt_num(s.med), s.spread / 2) if s else "-"


def rcell(s):
    return "%.2fx (%.2f-%.2f)" % (s.med, s.lo, s.hi) if s else "-"


def by_rep(rows, **match):
    """{rep: row} of the rows matching every key=value given."""
    out = {}
    for r in rows:
        if all(r.get(k) == str(v) for k, v in match.items()):
            out[int(r["rep"])] = r
    return out


def ratio_stat(num, den):
    """Per-repetition num/den; a repetition where either is not positive
    (a lateness below zero: the item ran early) has no meaningful ratio."""
    reps = sorted(set(num) & set(den))
    return Stat([num[r] / den[r] for r in reps if num[r] > 0 and den[r] > 0])


# What each peer does not do that kwq does (or does better), so that its
# number is read for what it is: short in the table, in full below it.
HANDICAPS = {
    "workqueue": ("no dedup/lookup, preallocated",
                  "the bare workqueue: work items preallocated before the clock"
                  " starts, one per item; no per-key lookup, no allocation, no"
                  " dedup (distinct keys) and nothing like add_after or rate"
                  " limits: a lower bound on the cost of handing work to"
                  " threads, not a peer offering kwq's semantics"),
    "wq_rhash": ("allocs on first sight",
                 "what a kernel developer writes instead of kwq: one kmalloc'ed"
                 " work_struct per key in an rhashtable (16-byte key, jhash),"
                 " allocated and inserted when a key is first seen and kept for"
                 " reuse (so distinct keys allocate every time, hot keys never"
                 " after the first); PENDING is the dedup, non-reentrancy the"
                 " processing set; no priorities, rate limits or metrics, and"
                 " entries are never freed while the run lasts (freeing them"
                 " safely would need RCU and a per-entry state machine)"),
    "clientgo": ("in-process, nothing shared",
                 "client-go 0.36's workqueue in the benchmark's own process"
                 " (NewTypedRateLimitingQueue with the default controller"
                 " rate limiter): no system call, but nothing survives the"
                 " process, no other process can share it, and Go code runs"
                 " about 15 times slower under TCG while system calls run"
                 " about 3.5 times slower, which favours kwq; the host's"
                 " native client-go figure is in the note"),
    "mqueue": ("no dedup/processing set",
               "4096 deep (kwq bounded to the same 4096 keys):"
               " a message queue with no dedup, no processing set, no"
               " add_after; mq_send blocks when full, kwq's producer retries"
               " on ENOSPC"),
    "delayed_work": ("jiffies timer (HZ=250)",
                     "a timer-wheel timer per item, delays"
                     " rounded up to whole jiffies (4 ms at HZ=250) plus one"
                     " so that no item runs before its deadline (as none"
                     " does with kwq), so its lateness has a floor kwq's"
                     " hrtimer does not"),
}

# The target lines: name, goal as (operator, value), unit of MEASURED.
TARGETS = [
    ("kernel_distinct_vs_wq", (">=", 1.0)),
    ("kernel_batch_vs_wq", (">=", 2.0)),
    ("kernel_vs_wq_rhash", (">=", 1.5)),
    ("kernel_hotkey_vs_wq", (">=", 1.0)),
    ("kernel_hotkey_ref_vs_wq", (">=", 1.0)),
    ("kernel_hotkey_vs_wq_rhash", (">=", 1.0)),
    ("user_worker_vs_mqueue", (">=", 1.0)),
    ("user_batch64_vs_mqueue", (">=", 5.0)),
    ("user_ring_worker_vs_mqueue", (">=", 3.0)),
    ("user_ring_batch64_vs_mqueue", (">=", 5.0)),
    ("guest_instr_ring_add_get_done", ("<=", 1300)),
    ("scaling_add_1e6_over_1e3", ("<=", 2.0)),
    ("scaling_getdone_1e6_over_1e3", ("<=", 2.0)),
    ("scaling_addafter_1e6_over_1e3", ("<=", 2.0)),
    ("bytes_per_item", ("<=", 128)),
    ("timer_lateness_p99_vs_delayed_work", ("<=", 1.0)),
    ("go_batch_vs_clientgo", (">=", 6.0)),
    ("go_worker_vs_clientgo", (">=", 2.0)),
    # GOMAXPROCS + 5 in the benchmark VM's 2 vCPUs (go_rows checks).
    ("go_idle_worker_threads", ("<=", 7)),
    ("go_addafter_vs_clientgo", (">=", 1.5)),
    ("go_overhead_vs_libkwq", ("<=", 1.3)),
]
GOALS = dict(TARGETS)


def goal_met(tname, value):
    op, goal = GOALS[tname]
    return value >= goal if op == ">=" else value <= goal


def goal_text(tname, unit="x"):
    op, goal = GOALS[tname]
    return "%s %s%s" % (op, ("%.1f" % goal) if unit == "x" else goal, unit)


def build(rows):
    """Figures: list of dicts with name, unit, kwq, peer, ratio, target, met."""
    figs = []

    def tput(suite, impl, key="adds"):
        d = by_rep(rows, suite=suite, impl=impl)
        return {r: int(v[key]) / int(v["ns"]) * 1e9 for r, v in d.items()}

    def add(name, unit, kwq, peer_name, peer, ratio, tname=None, note="",
            lower_better=False, value=None, unit_goal="x", target=None,
            short=""):
        """One row; with @tname, judged on @value (default: the median ratio)."""
        if value is None and ratio:
            value = ratio.med
        ok = goal_met(tname, value) if tname and value is not None else None
        figs.append(dict(name=name, unit=unit, kwq=kwq, peer_name=peer_name,
                         peer=peer, ratio=ratio, tname=tname, value=value,
                         target=target or (goal_text(tname, unit_goal) if tname else ""),
                         met="" if ok is None else ("yes" if ok else "NO"),
                         note=note, lower_better=lower_better,
                         short=short))

    def run_note(suite, impls):
        parts = []
        for impl in impls:
            d = by_rep(rows, suite=suite, impl=impl)
            p = Stat(int(v["prod_ns"]) / int(v["ns"]) for v in d.values()
                     if "prod_ns" in v)
            ran = Stat(int(v["ran"]) for v in d.values() if "ran" in v)
            sl = Stat(int(v["sleeps"]) for v in d.values() if "sleeps" in v)
            al = Stat(int(v["allocs"]) for v in d.values() if "allocs" in v)
            bits = []
            if suite == "hotkey" and ran:
                bits.append("ran %s" % fmt_num(ran.med))
            if p:
                bits.append("producer busy %.0f%%" % (100 * p.med))
            if impl.startswith("kwq") and sl and sl.med:
                bits.append("short gets %s" % fmt_num(sl.med))
            if impl == "wq_rhash" and al:
                bits.append("allocs %s" % fmt_num(al.med))
            if bits:
                parts.append("%s %s" % (impl, ", ".join(bits)))
        return "; ".join(parts)

    kimpls = ("kwq", "kwq_batch", "kwq_ref", "workqueue", "wq_rhash")
    for suite, label, unit in (("throughput", "in-kernel distinct keys", "items/s"),
                               ("hotkey", "in-kernel hot keys (adds)", "adds/s")):
        t = {i: tput(suite, i) for i in kimpls}
        note = run_note(suite, kimpls)
        for impl, peer in (("kwq", "workqueue"), ("kwq_batch", "workqueue"),
                           ("kwq", "wq_rhash"), ("kwq_batch", "wq_rhash"),
                           ("kwq_ref", "workqueue"), ("kwq_ref", "wq_rhash")):
            # kwq_ref (key handles) runs in the hot-key suite only.
            if not t[impl]:
                continue
            tname = {("throughput", "kwq", "workqueue"): "kernel_distinct_vs_wq",
                     ("throughput", "kwq_batch", "workqueue"): "kernel_batch_vs_wq",
                     ("throughput", "kwq", "wq_rhash"): "kernel_vs_wq_rhash",
                     ("hotkey", "kwq", "workqueue"): "kernel_hotkey_vs_wq",
                     ("hotkey", "kwq", "wq_rhash"): "kernel_hotkey_vs_wq_rhash",
                     ("hotkey", "kwq_ref", "workqueue"): "kernel_hotkey_ref_vs_wq",
                     }.get((suite, impl, peer))
            name = label + {"kwq_batch": ", batched (64)",
                            "kwq_ref": ", key handles"}.get(impl, "")
            add(name, unit, Stat(t[impl].values()), peer,
                Stat(t[peer].values()), ratio_stat(t[impl], t[peer]), tname,
                note=note if (impl, peer) == ("kwq", "workqueue") else "",
                short="kernel %s: %s / %s" % (
                    "distinct" if suite == "throughput" else "hot keys",
                    impl, peer))

    # The add of a key already ready, alone (one thread, no consumer).
    red = {i: tput("redundant", i, "ops")
           for i in ("kwq", "kwq_ref", "workqueue", "wq_rhash")}
    for impl, peer in (("kwq", "workqueue"), ("kwq_ref", "workqueue"),
                       ("kwq", "wq_rhash")):
        if red[impl] and red[peer]:
            add("in-kernel redundant add (key ready)" +
                (", key handle" if impl == "kwq_ref" else ""), "adds/s",
                Stat(red[impl].values()), peer, Stat(red[peer].values()),
                ratio_stat(red[impl], red[peer]),
                note=("workqueue: queue_work() of a pending work"
                      if (impl, peer) == ("kwq", "workqueue") else ""),
                short="kernel redundant add: %s / %s" % (impl, peer))

    uimpls = ("kwq_single", "kwq_batch", "kwq_ring", "kwq_ring_batch")
    u = {i: tput("user", i, "items") for i in uimpls + ("mqueue",)}
    enospc = []
    for i in uimpls:
        e = Stat(int(v["enospc"]) for v in by_rep(rows, suite="user", impl=i).values()
                 if "enospc" in v)
        if e:
            enospc.append("%s %s" % (i, fmt_num(e.med)))
    note = ("producer retries at the 4096-key bound (ENOSPC, median): " +
            ", ".join(enospc)) if enospc else ""
    add("userspace worker (single-op)", "items/s", Stat(u["kwq_single"].values()),
        "mqueue", Stat(u["mqueue"].values()),
        ratio_stat(u["kwq_single"], u["mqueue"]), "user_worker_vs_mqueue",
        note=note, short="user: kwq_single / mqueue")
    add("userspace batched (64)", "items/s", Stat(u["kwq_batch"].values()),
        "mqueue", Stat(u["mqueue"].values()),
        ratio_stat(u["kwq_batch"], u["mqueue"]), "user_batch64_vs_mqueue",
        short="user: kwq_batch / mqueue")
    bells = []
    for i in ("kwq_ring", "kwq_ring_batch"):
        d = by_rep(rows, suite="user", impl=i)
        b = Stat(int(v["doorbells"]) for v in d.values() if "doorbells" in v)
        if b:
            bells.append("%s %s of %s" % (i, fmt_num(b.med), next(
                v["items"] for v in d.values())))
    for impl, label, tname in (
            ("kwq_ring", "userspace worker, ring (single-op)",
             "user_ring_worker_vs_mqueue"),
            ("kwq_ring_batch", "userspace batched (64), ring",
             "user_ring_batch64_vs_mqueue")):
        if u[impl]:
            add(label, "items/s", Stat(u[impl].values()), "mqueue",
                Stat(u["mqueue"].values()), ratio_stat(u[impl], u["mqueue"]),
                tname, short="user: %s / mqueue" % impl,
                note=("producer publishes that rang the doorbell, a getter"
                      " waiting (median): " + ", ".join(bells))
                if impl == "kwq_ring" and bells else "")
    insn = by_rep(rows, suite="insn", impl="kwq_ring")
    if insn:
        ic = Stat(float(v["instr"]) for v in insn.values())
        add("guest instructions per key, ring add+get+done", "instr", ic, "",
            None, None, "guest_instr_ring_add_get_done", value=ic.med,
            unit_goal="", lower_better=True,
            note="tools/bench/insnprof.sh, kwq_ubench phases kwq_ring;"
            " mqueue send + receive: about 2570")

    for impl, label in (("kwq_single", "single-op"), ("kwq_batch", "batched"),
                        ("kwq_ring", "ring"), ("kwq_ring_batch", "ring batched")):
        for side, what in (("put_ns", "add"), ("take_ns", "get+done")):
            def cost(i):
                return {rep: int(v[side]) / int(v["items"])
                        for rep, v in by_rep(rows, suite="uphases", impl=i).items()}
            kc, mc = cost(impl), cost("mqueue")
            if kc:
                add("userspace %s %s alone" % (label, what), "ns/item",
                    Stat(kc.values()), "mqueue", Stat(mc.values()),
                    ratio_stat(kc, mc), note="lower is better",
                    lower_better=True,
                    short="user %s alone: %s / mqueue" % (what, impl))

    scaling = {}
    for op, label, tname in (("add", "add", "scaling_add_1e6_over_1e3"),
                             ("get_done", "get+done", "scaling_getdone_1e6_over_1e3"),
                             ("add_after", "add_after", "scaling_addafter_1e6_over_1e3")):
        base = {rep: int(v["ns"]) / int(v["ops"])
                for rep, v in by_rep(rows, suite="scaling", op=op, n=SIZES[0]).items()}
        for n in SIZES:
            cost = {rep: int(v["ns"]) / int(v["ops"])
                    for rep, v in by_rep(rows, suite="scaling", op=op, n=n).items()}
            if not cost:
                continue
            scaling[(op, n)] = Stat(cost.values())
            r = ratio_stat(cost, base)
            last = n == SIZES[-1]
            add("%s, %s %s" % (label, "%.0e" % n,
                               "waiting" if op == "add_after" else "ready"),
                "ns/op", Stat(cost.values()), "", None, r,
                tname if last else None, note="ratio: vs 1e3",
                target=goal_text(tname, "x of 1e3") if last else None)

    mem = by_rep(rows, suite="memory")
    if mem:
        slab = Stat(int(v["slab_bytes"]) / int(v["items"]) for v in mem.values())
        osz = next(iter(mem.values()))
        add("memory per item, slab (16 B keys)", "bytes", slab, "", None, None,
            "bytes_per_item", value=slab.med, unit_goal="",
            note="kwq_node object_size %s, slab_size %s" %
            (osz["object_size"], osz["slab_size"]))

    go_rows(rows, add)

    early = []
    for impl in ("kwq", "delayed_work"):
        e = Stat(int(v["early"]) for v in
                 by_rep(rows, suite="timer", impl=impl).values() if "early" in v)
        if e:
            early.append("%s %d" % (impl, sum(e.values)))
    for q in ("p50", "p99", "max"):
        kk = {r: int(v[q + "_ns"]) / 1e3 for r, v in by_rep(rows, suite="timer", impl="kwq").items()}
        dd = {r: int(v[q + "_ns"]) / 1e3 for r, v in by_rep(rows, suite="timer", impl="delayed_work").items()}
        add("timer lateness %s" % q, "us", Stat(kk.values()), "delayed_work",
            Stat(dd.values()), ratio_stat(kk, dd),
            "timer_lateness_p99_vs_delayed_work" if q == "p99" else None,
            note=("items run before their deadline, all repetitions: " +
                  ", ".join(early)) if q == "p50" and early else "lower is better",
            lower_better=True,
            short="timer lateness %s: kwq / delayed_work" % q)
    return figs, scaling


def go_rows(rows, add):
    """The Go package against client-go in the same VM (suite=go), and the
    host's native client-go (suite=gohost) in the notes."""
    def tput(suite, impl, shape):
        return {r: int(v["items"]) / int(v["ns"]) * 1e9
                for r, v in by_rep(rows, suite=suite, impl=impl, shape=shape).items()}

    cg = tput("go", "clientgo", "pipeline")
    if not cg:
        return
    host = Stat(tput("gohost", "clientgo", "pipeline").values())
    hnote = ("client-go on the host, native: %s items/s" % fmt_num(host.med)
             if host else "")
    for impl, label, tname in (
            ("kwq_batch", "Go pipeline 1P/2C, batched (64)", "go_batch_vs_clientgo"),
            ("kwq_worker", "Go pipeline 1P/2C, DoneGet worker loop", "go_worker_vs_clientgo"),
            ("kwq", "Go pipeline 1P/2C, Get + Done", None)):
        k = tput("go", impl, "pipeline")
        add(label, "items/s", Stat(k.values()), "clientgo", Stat(cg.values()),
            ratio_stat(k, cg), tname, note=hnote if impl == "kwq_batch" else "",
            short="Go %s / client-go" % impl)
    idle = by_rep(rows, suite="goidle", impl="kwq", shape="idle50")
    if idle:
        th = Stat(int(v["threads"]) for v in idle.values())
        gm = sorted({int(v["gomaxprocs"]) for v in idle.values()})
        rings = sorted({v.get("rings", "?") for v in idle.values()})
        note = "GOMAXPROCS %s, rings %s; the worst repetition is judged" % (
            ",".join(map(str, gm)), ",".join(rings))
        if gm != [GOALS["go_idle_worker_threads"][1] - 5]:
            note += " (the goal assumes GOMAXPROCS 2: compare with GOMAXPROCS + 5)"
        add("Go, 50 idle workers in Get: OS threads", "threads", th, "", None,
            None, "go_idle_worker_threads", value=th.hi, unit_goal="",
            lower_better=True, note=note)
    ka, ca = tput("go", "kwq", "addafter"), tput("go", "clientgo", "addafter")
    host = Stat(tput("gohost", "clientgo", "addafter").values())
    add("Go AddAfter, distinct keys", "adds/s", Stat(ka.values()), "clientgo",
        Stat(ca.values()), ratio_stat(ka, ca), "go_addafter_vs_clientgo",
        note=("client-go on the host, native: %s adds/s" % fmt_num(host.med)
              if host else ""),
        short="Go AddAfter: kwq / client-go")
    kt = tput("go", "kwq_try", "addafter")
    if kt:
        add("Go TryAddAfter, one call a key", "adds/s", Stat(kt.values()), "clientgo",
            Stat(ca.values()), ratio_stat(kt, ca), None,
            note="AddAfter above gathers its calls into batches of 64",
            short="Go TryAddAfter / client-go")
    # The Go package's cost over libkwq's for one shape: kwq_ubench's
    # kwq_single (C) against kwq-gobench's p1c1 (Go), ns per item.
    def cost(suite, impl, field="ns", **m):
        return {r: int(v[field]) / int(v["items"])
                for r, v in by_rep(rows, suite=suite, impl=impl, **m).items()}
    g, c = cost("go", "kwq_worker", shape="p1c1"), cost("user", "kwq_single")
    if g and c:
        add("Go package over libkwq, 1P/1C worker loop", "ns/item",
            Stat(g.values()), "libkwq", Stat(c.values()), ratio_stat(g, c),
            "go_overhead_vs_libkwq", lower_better=True,
            note="lower is better; the same shape as kwq_single above",
            short="Go / libkwq, ns per item")
    # Each call alone, one goroutine against one C thread (no wake-ups).
    for side, what in (("put_ns", "Add"), ("take_ns", "DoneGetOne")):
        g, c = cost("gophases", "kwq", side), cost("uphases", "kwq_single", side)
        if g and c:
            add("Go package over libkwq, %s alone" % what, "ns/item",
                Stat(g.values()), "libkwq", Stat(c.values()), ratio_stat(g, c),
                lower_better=True, note="lower is better",
                short="Go / libkwq, %s alone" % what)


def target_lines(figs):
    """One line per target, in TARGETS order: target NAME MEASURED GOAL met|missed."""
    by_name = {f["tname"]: f for f in figs if f.get("tname")}
    out = []
    for tname, (op, goal) in TARGETS:
        f = by_name.get(tname)
        v = f["value"] if f else None
        if v is None:
            measured, met = "n/a", "missed"
        else:
            measured = ("%.0f" % v) if isinstance(goal, int) else ("%.2f" % v)
            met = "met" if goal_met(tname, v) else "missed"
        goal_s = "%s%s" % (op, goal if isinstance(goal, int) else "%.1f" % goal)
        out.append("target %s %s %s %s" % (tname, measured, goal_s, met))
    return out


def table(figs, header, targets):
    cols = ["figure", "unit", "kwq median ±spread/2", "peer", "peer handicap",
            "peer median", "ratio (min-max)", "target", "met"]
    lines = [[f["name"], f["unit"], cell(f["kwq"]), f["peer_name"],
              HANDICAPS.get(f["peer_name"], ("",))[0],
              cell(f["peer"]) if f["peer"] is not None else "",
              rcell(f["ratio"]) if f["ratio"] is not None else "",
              f["target"], f["met"]] for f in figs]
    widths = [max(len(str(x)) for x in col) for col in zip(cols, *lines)]
    fmt = "  ".join("%%-%ds" % w for w in widths)
    out = header + [fmt % tuple(cols), fmt % tuple("-" * w for w in widths)]
    out += [(fmt % tuple(line)).rstrip() for line in lines]
    notes = ["%s: %s" % (f["name"], f["note"]) for f in figs
             if f["note"] and not f["note"].startswith(("ratio: vs", "lower"))]
    out += [""] + ["note: " + n for n in notes]
    peers = [p for p in HANDICAPS if any(f["peer_name"] == p for f in figs)]
    out += ["peer %s: %s." % (p, HANDICAPS[p][1]) for p in peers]
    out.append("note: spread = (max - min) / median over the repetitions, shown"
               " halved as ±. Ratios are kwq/peer per repetition (same VM run),"
               " median and range; for scaling against the 1e3 size; for"
               " ns/item and lateness rows lower is better.")
    out += [""] + targets
    return out


def write_csv(path, figs):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["figure", "unit", "kwq_median", "kwq_min", "kwq_max",
                    "kwq_spread_pct", "peer", "peer_median", "peer_min",
                    "peer_max", "ratio_median", "ratio_min", "ratio_max",
                    "target", "met"])
        for fg in figs:
            k, p, r = fg["kwq"], fg["peer"], fg["ratio"]
            w.writerow([fg["name"], fg["unit"]] +
                       (["%.6g" % k.med, "%.6g" % k.lo, "%.6g" % k.hi,
                         "%.1f" % k.spread] if k else ["", "", "", ""]) +
                       [fg["peer_name"]] +
                       (["%.6g" % p.med, "%.6g" % p.lo, "%.6g" % p.hi] if p else ["", "", ""]) +
                       (["%.4g" % r.med, "%.4g" % r.lo, "%.4g" % r.hi] if r else ["", "", ""]) +
                       [fg["target"], fg["met"]])


def gnuplot(out, scaling):
    dat = os.path.join(out, "scaling.dat")
    with open(dat, "w") as f:
        f.write("# n  add(med lo hi)  get_done(med lo hi)  add_after(med lo hi), ns/op\n")
        for n in SIZES:
            row = [str(n)]
            for op in ("add", "get_done", "add_after"):
                s = scaling.get((op, n))
                row += ["%.1f %.1f %.1f" % (s.med, s.lo, s.hi)] if s else ["NaN NaN NaN"]
            f.write(" ".join(row) + "\n")
    with open(os.path.join(out, "scaling.gp"), "w") as f:
        f.write("""set terminal png size 900,560
set output '%s'
set title 'kwq scaling: cost per operation vs keys in the queue (median, min-max)'
set logscale x
set xrange [500:2000000]
set xlabel 'keys ready (add, get+done) / waiting (add\\_after)'
set ylabel 'ns per operation (QEMU TCG)'
set yrange [0:*]
set key top left
set grid
plot '%s' using 1:2:3:4 with yerrorlines title 'add', \\
     '' using 1:5:6:7 with yerrorlines title 'get+done', \\
     '' using 1:8:9:10 with yerrorlines title 'add\\_after'
""" % (os.path.join(out, "scaling.png"), dat))


def gnuplot_ratios(out, figs, reps):
    """Every kwq/peer ratio as a bar (median) with its min-max, the target as a line."""
    bars = [f for f in figs if f["peer_name"] and f["ratio"]]
    if not bars:
        return
    ys = [v for f in bars for v in (f["ratio"].lo, f["ratio"].hi) if v > 0]
    ys += [GOALS[f["tname"]][1] for f in bars if f["tname"]]
    ymin = 2 ** math.floor(math.log2(min(ys) / 1.2))
    ymax = 2 ** math.ceil(math.log2(max(ys) * 2.5))
    dat = os.path.join(out, "ratios.dat")
    with open(dat, "w") as f:
        f.write("# i label median min max target colour (kwq/peer, same run)\n")
        for i, fg in enumerate(bars):
            r = fg["ratio"]
            label = (fg["short"] or "%s / %s" % (fg["name"], fg["peer_name"])) + \
                (" (lower=better)" if fg["lower_better"] else "")
            goal = GOALS[fg["tname"]][1] if fg["tname"] else "NaN"
            colour = {"yes": 0x2ca02c, "NO": 0xd62728}.get(fg["met"], 0x7f9fbf)
            f.write('%d "%s" %.4g %.4g %.4g %s %d\n' %
                    (i, label.replace('"', "'"), r.med, r.lo, r.hi, goal, colour))
    with open(os.path.join(out, "ratios.gp"), "w") as f:
        f.write("""set terminal png size 1280,760 noenhanced
set output '%s'
set title "kwq / peer, same VM run: bar = median of %d repetitions, whiskers = min-max, black line = target\\n(green: target met, red: missed, blue: no target; ns/item and lateness rows: lower is better)"
set logscale y 2
set yrange [%g:%g]
set ylabel 'ratio kwq / peer (log scale)'
set xrange [-0.7:%f]
set xtics rotate by 35 right font ',9' nomirror
set bmargin 16
set lmargin 24
set rmargin 4
set grid ytics
set key top left opaque
set style fill solid 0.7 border -1
plot '%s' using 1:3:($1-0.35):($1+0.35):(%g):3:7:xtic(2) with boxxyerror lc rgb variable notitle, \\
     '' using 1:3:4:5 with yerrorbars lc rgb 'black' pt 0 lw 1.5 notitle, \\
     '' using ($1-0.45):6:(0.9):(0) with vectors nohead lw 3 lc rgb 'black' title 'target', \\
     '' using 1:($5*1.12):(sprintf('%%.2f', $3)) with labels font ',8' notitle, \\
     1 with lines dt 2 lc rgb 'gray40' title 'parity (1.0x)'
""" % (os.path.join(out, "ratios.png"), reps, ymin, ymax, len(bars) - 0.3,
       dat, ymin))


def update_doc(rst, out):
    with open(os.path.join(out, "table.rst")) as f:
        block = f.read()
    with open(rst) as f:
        text = f.read()
    if BEGIN not in text or END not in text:
        sys.exit("%s: no %s / %s markers" % (rst, BEGIN, END))
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(rst, "w") as f:
        f.write(head + BEGIN + "\n\n" + block + "\n" + END + tail)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--machine", default="")
    ap.add_argument("--reps", type=int, default=0)
    ap.add_argument("--update-doc")
    ap.add_argument("log", nargs="*")
    a = ap.parse_args()
    if a.update_doc:
        update_doc(a.update_doc, a.out)
        return
    rows = [r for log in a.log for r in parse(log)]
    if not rows:
        sys.exit("report.py: no RESULT lines in %s" % " ".join(a.log))
    keys = ["suite", "impl", "op", "n", "rep"]
    extra = sorted({k for r in rows for k in r} - set(keys))
    with open(os.path.join(a.out, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys + extra)
        w.writeheader()
        for r in rows:
            w.writerow(r)
    figs, scaling = build(rows)
    date = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    reps = len({r["rep"] for r in rows})
    header = ["kwq benchmarks, %s, %d repetitions" % (date, reps),
              a.machine, ""]
    targets = target_lines(figs)
    lines = table(figs, header, targets)
    text = "\n".join(lines) + "\n"
    with open(os.path.join(a.out, "table.txt"), "w") as f:
        f.write(text)
    with open(os.path.join(a.out, "table.rst"), "w") as f:
        f.write("::\n\n" + "".join("    " + ln + "\n" if ln else "\n"
                                   for ln in lines))
    write_csv(os.path.join(a.out, "summary.csv"), figs)
    with open(os.path.join(a.out, "targets.txt"), "w") as f:
        f.write("\n".join(targets) + "\n")
    gnuplot(a.out, scaling)
    gnuplot_ratios(a.out, figs, reps)
    # The target lines are the last of table.txt; bench.sh prints them
    # last of all, so that make bench ends with them (once).
    shown = lines[:len(lines) - len(targets) - 1] if targets else lines
    sys.stdout.write("\n" + "\n".join(shown) + "\n")
    if a.reps and reps < a.reps:
        print("warning: only %d of %d repetitions finished" % (reps, a.reps),
              file=sys.stderr)


if __name__ == "__main__":
    main()
