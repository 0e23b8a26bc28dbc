#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Summarise a host benchmark run (tools/bench-host/run.sh).

Reads OUT/run/<job>/ (callgrind dumps cg.<pid>.<n>, native.out, vg.out),
prints the table and the target lines, and writes OUT/results.csv,
OUT/holds.csv, OUT/memory.csv, OUT/functions.csv, OUT/targets.csv and
OUT/table.txt (the same text as printed).

Costs of an operation are inclusive costs of the calls the driver's hb_*
functions make to the kwq functions a dump's label names (groups=), so
the driver's own instructions are never counted; every such function
must have been called exactly ops= times, or the report stops: a core
whose API changed shape is not silently measured as something else.
"""
import csv
import glob
import os
import re
import sys

from cgutil import (EVENTS, HOLD_GHZ, HOLD_MISS_US, add, costs, die,
                    est_us, kv_lines as parse_kv_lines, llmiss, vec)


def parse_label(label):
    out = {}
    for tok in label.split()[1:]:
        k, _, v = tok.partition("=")
        out[k] = v
    return out


def parse_dump(path, binary):
    """One dump: its label, summary, arcs from hb_* and self costs."""
    label = None
    events = None
    summary = None
    arcs = {}           # callee -> [calls, cost vector]
    selfcost = {}       # function -> cost vector (not the driver's)
    fn = caller_ok = None
    ob = fl = None
    cfn = None
    pending_calls = None
    core_fn = False
    # Inclusive cost of the delay wheel's cascade: its self cost and the
    # arcs it calls (whole: no dump falls inside it).
    cascade = vec()
    in_cascade = False
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            c = line[0]
            if c.isdigit() or c in "+-*":
                tok = line.split()
                if in_cascade:
                    add(cascade, costs(tok[1:], events))
                if pending_calls is not None:
                    if caller_ok:
                        a = arcs.setdefault(cfn, [0, vec()])
                        a[0] += pending_calls
                        add(a[1], costs(tok[1:], events))
                    pending_calls = None
                elif core_fn:
                    add(selfcost.setdefault(fn, vec()), costs(tok[1:], events))
                continue
            if line.startswith("fn="):
                fn = line[3:]
                # (gcc may clone it: kwq_wheel_cascade.constprop.0)
                in_cascade = fn.split(".")[0] == "kwq_wheel_cascade"
                # The driver's functions, in hostbench.c, are all hb_*.
                caller_ok = fn.startswith("hb_")
                core_fn = (os.path.basename(ob or "") == binary and
                           os.path.basename(fl or "") != "hostbench.c")
            elif line.startswith("ob="):
                ob = line[3:]
            elif line.startswith("fl="):
                fl = line[3:]
            elif line.startswith("cfn="):
                cfn = line[4:]
            elif line.startswith("calls="):
                pending_calls = int(line[6:].split()[0])
            elif line.startswith("desc: Trigger: Client Request: "):
                label = line[len("desc: Trigger: Client Request: "):]
            elif line.startswith("events:"):
                events = line.split()[1:]
            elif line.startswith("summary:"):
                summary = costs(line.split()[1:], events)
    return label, summary, arcs, selfcost, cascade


def per_op(v, ops):
    return [x / ops for x in v] if ops else [0.0] * len(v)


def d1miss(v):
    return v[EVENTS.index("D1mr")] + v[EVENTS.index("D1mw")]


def fmt(x, nd=2):
    if x is None:
        return "-"
    if abs(x) >= 100:
        return "%.0f" % x
    return ("%%.%df" % nd) % x


def main():
    if len(sys.argv) != 2:
        die("usage: report.py OUT")
    out = sys.argv[1]
    jobs = sorted(glob.glob(os.path.join(out, "run", "*")))
    if not jobs:
        die("no runs under %s/run" % out)

    phases = {}     # (scen, n, phase) -> dict
    holds = []      # per (scen, n): list of cost vectors, in order
    grow = {}       # (scen, n) -> cost vector of all deferred work
    native = {}     # (scen, n, phase) -> ns
    native_holds = {}
    native_holdmax = {}
    mem = {}
    caches = {}
    expire = {}     # (scen, n) -> {"cost", "cascade", "keys", "moves"}
    expire_holds = []   # (scen, n, cost vector), in order
    for job in jobs:
        vgout = os.path.join(job, "vg.out")
        if not any(l.startswith("ok ") for l in open(vgout)):
            die("%s did not finish" % job)
        dumps = []
        for path in glob.glob(os.path.join(job, "cg.*.*")):
            m = re.match(r".*/cg\.(\d+)\.(\d+)$", path)
            if m:
                dumps.append((int(m.group(2)), path))
        if not dumps:
            die("no callgrind dumps in %s" % job)
        with open(os.path.join(job, "binary")) as f:
            binary = os.path.basename(f.read().strip())
        for _, path in sorted(dumps):
            label, summary, arcs, selfcost, cascade = parse_dump(path, binary)
            if not label or not label.startswith("hb "):
                die("%s: not a hostbench dump (%s)" % (path, label))
            lab = parse_label(label)
            key = (lab["scen"], int(lab["n"]), lab["phase"])
            if lab["phase"] in ("expire", "expire_hold"):
                e = expire.setdefault(key[:2], {"cost": vec(),
                                                "cascade": vec(),
                                                "keys": 0, "moves": 0})
                add(e["cost"], summary)
                add(e["cascade"], cascade)
                if "keys" in lab:
                    e["keys"] = int(lab["keys"])
                    e["moves"] = int(lab["moves"])
                if lab["phase"] == "expire_hold":
                    expire_holds.append((key[0], key[1], summary))
                continue
            if lab["phase"] in ("grow", "grow_hold"):
                add(grow.setdefault(key[:2], vec()), summary)
                if lab["phase"] == "grow_hold":
                    holds.append((key[0], key[1], summary))
                continue
            p = phases.setdefault(key, {"ops": 0, "groups": lab["groups"],
                                        "arcs": {}, "self": {}})
            p["ops"] += int(lab["ops"])
            for callee, (calls, v) in arcs.items():
                a = p["arcs"].setdefault(callee, [0, vec()])
                a[0] += calls
                add(a[1], v)
            for name, v in selfcost.items():
                add(p["self"].setdefault(name, vec()), v)
        for r in parse_kv_lines(os.path.join(job, "native.out"), "native"):
            native[(r["scen"], int(r["n"]), r["phase"])] = int(r["ns"])
        for r in parse_kv_lines(os.path.join(job, "native.out"), "hold"):
            native_holds.setdefault((r["scen"], int(r["n"]), r["phase"]),
                                    []).append(int(r["ns"]))
        for r in parse_kv_lines(os.path.join(job, "native.out"), "holdmax"):
            native_holdmax[(r["scen"], int(r["n"]), r["phase"])] = r
        for r in parse_kv_lines(os.path.join(job, "vg.out"), "mem"):
            mem[(r["scen"], int(r["n"]))] = r
        for r in parse_kv_lines(os.path.join(job, "vg.out"), "cache"):
            caches.setdefault((r["scen"], int(r["n"])), []).append(r)

    # Per operation group: inclusive cost of the named kwq functions.
    groups = {}     # (scen, n, phase, group) -> (ops, vector)
    for key, p in phases.items():
        if p["groups"] == "-":
            continue
        for g in p["groups"].split(","):
            name, _, fns = g.partition(":")
            v = vec()
            for fnname in fns.split("+"):
                calls, cv = p["arcs"].get(fnname, [0, vec()])
                if calls != p["ops"]:
                    die("%s n=%d %s: %s called %d times from the driver, "
                        "expected %d (did the kwq API change?)"
                        % (key[0], key[1], key[2], fnname, calls, p["ops"]))
                add(v, cv)
            groups[key + (name,)] = (p["ops"], v)

    ns = sorted({k[1] for k in groups})
    if not ns:
        die("no measured phases")
    small, big = ns[0], ns[-1]

    # Table rows: label, scen, phase, group(s), native phase
    specs = [
        ("add, fill 0->N", "fill", "add", ["add"], "add"),
        ("get+done, drain N->0", "fill", "get_done", ["get_done"], "get_done"),
        ("add, N queued", "steady", "loop", ["add"], None),
        ("get+done, N queued", "steady", "loop", ["get_done"], None),
        ("add+get+done, N queued", "steady", "loop", ["add", "get_done"], "loop"),
        ("add_after near, fill 0->N", "after-near", "fill", ["add_after"], "fill"),
        ("add_after near, N waiting", "after-near", "at_n", ["add_after"], None),
        ("remove near, N waiting", "after-near", "at_n", ["remove"], None),
        ("add_after far, fill 0->N", "after-far", "fill", ["add_after"], "fill"),
        ("add_after far, N waiting", "after-far", "at_n", ["add_after"], None),
        ("remove far, N waiting", "after-far", "at_n", ["remove"], None),
    ]
    rows = []
    byname = {}
    for label, scen, phase, gl, nphase in specs:
        for n in ns:
            ops = None
            v = vec()
            for g in gl:
                k = (scen, n, phase, g)
                if k not in groups:
                    break
                ops, gv = groups[k]
                add(v, gv)
            else:
                po = per_op(v, ops)
                nat = native.get((scen, n, nphase)) if nphase else None
                r = {"label": label, "scenario": scen, "phase": phase,
                     "ops_group": "+".join(gl), "n": n, "ops": ops,
                     "ir": po[0], "ll": llmiss(po), "d1": d1miss(po),
                     "il": po[EVENTS.index("ILmr")],
                     "dlmr": po[EVENTS.index("DLmr")],
                     "dlmw": po[EVENTS.index("DLmw")],
                     "native_ns": nat / ops if nat is not None else None}
                rows.append(r)
                byname[(label, n)] = r
    # The deferred hash growth, per add of the fill.
    for n in ns:
        gv = grow.get(("fill", n))
        fa = groups.get(("fill", n, "add", "add"))
        if gv and fa:
            po = per_op(gv, fa[0])
            r = {"label": "hash growth work per add", "scenario": "fill",
                 "phase": "grow", "ops_group": "grow", "n": n, "ops": fa[0],
                 "ir": po[0], "ll": llmiss(po), "d1": d1miss(po),
                 "il": po[EVENTS.index("ILmr")],
                 "dlmr": po[EVENTS.index("DLmr")],
                 "dlmw": po[EVENTS.index("DLmw")], "native_ns": None}
            rows.append(r)
            byname[(r["label"], n)] = r

    # The delay wheel: the expiry of every waiting key, per key made
    # ready, and the cascade alone, per key moved.
    for scen, word in (("after-near", "near"), ("after-far", "far")):
        for n in ns:
            e = expire.get((scen, n))
            if not e or not e["keys"]:
                continue
            for label, v, ops in (
                    ("expiry %s, per key" % word, e["cost"], e["keys"]),
                    ("cascade %s, per key moved" % word, e["cascade"],
                     e["moves"])):
                po = per_op(v, ops)
                r = {"label": label, "scenario": scen, "phase": "expire",
                     "ops_group": label.split(",")[0].split()[0], "n": n,
                     "ops": ops, "ir": po[0], "ll": llmiss(po),
                     "d1": d1miss(po), "il": po[EVENTS.index("ILmr")],
                     "dlmr": po[EVENTS.index("DLmr")],
                     "dlmw": po[EVENTS.index("DLmw")], "native_ns": None}
                rows.append(r)
                byname[(label, n)] = r

    lines = []
    P = lines.append
    P("kwq host benchmark: the unmodified core under callgrind "
      "(deterministic counts; native times are noisy and only informative)")
    P("cache model: D1 32 KiB 8-way, LL 8 MiB 16-way, 64 B lines; "
      "LL miss = DLmr + DLmw (data read + write misses at the last level)")
    P("")
    hdr = ("%-28s %9s %8s %9s %8s %8s %8s %8s %8s %10s"
           % ("operation", "N", "ops", "Ir/op", "LLmiss", "D1miss",
              "ILmr", "Ir x", "LL x", "native ns"))
    P(hdr)
    P("-" * len(hdr))
    for r in rows:
        base = byname.get((r["label"], small))
        rx = lx = None
        if r["n"] != small and base:
            rx = r["ir"] / base["ir"] if base["ir"] else None
            lx = r["ll"] / base["ll"] if base["ll"] >= 0.01 else None
        r["ir_ratio"], r["ll_ratio"] = rx, lx
        P("%-28s %9d %8d %9s %8s %8s %8s %8s %8s %10s"
          % (r["label"], r["n"], r["ops"], fmt(r["ir"], 1), fmt(r["ll"]),
             fmt(r["d1"]), fmt(r["il"], 3),
             fmt(rx) if rx is not None else ("-" if r["n"] == small else "n/a"),
             fmt(lx) if lx is not None else ("-" if r["n"] == small else "n/a"),
             fmt(r["native_ns"], 0) if r["native_ns"] is not None else "-"))
    P("(per op: Ir instructions, LLmiss/D1miss data misses, ILmr instruction "
      "misses at LL; x = cost at N=%d / cost at N=%d, n/a where the small "
      "N has no misses)" % (big, small))

    # Hash growth critical sections.
    P("")
    P("hash growth: critical sections of the deferred grow work "
      "(q->lock held), fill 0->N")
    hrows = []
    for n in ns:
        hs = [h[2] for h in holds if h[0] == "fill" and h[1] == n]
        nat = native_holds.get(("fill", n, "add"), [])
        for i, h in enumerate(hs):
            hrows.append({"scenario": "fill", "n": n, "seq": i, "ir": h[0],
                          "dlmr": h[EVENTS.index("DLmr")],
                          "dlmw": h[EVENTS.index("DLmw")], "ll": llmiss(h),
                          "est_us_instr": h[0] / (HOLD_GHZ * 1000),
                          "est_us": est_us(h),
                          "native_ns": nat[i] if i < len(nat) else None})
    maxhold = {}
    for n in ns:
        hs = [h for h in hrows if h["n"] == n]
        if not hs:
            hm = native_holdmax.get(("fill", n, "add"))
            P("  N=%-8d no deferred work ran%s" % (
                n, "; native longest hold of any lock during the fill: %s us"
                % fmt(int(hm["ns"]) / 1000, 1) if hm else ""))
            continue
        m = max(hs, key=lambda h: h["ir"])
        maxhold[n] = m
        nat = [h["native_ns"] for h in hs if h["native_ns"] is not None]
        P("  N=%-8d %2d sections; longest: %s instructions, %s LL misses; "
          "estimate %s us (instructions at 1/cycle, 3 GHz) or %s us "
          "(+ %.0f ns per LL miss); native %s us"
          % (n, len(hs), "{:,}".format(m["ir"]), "{:,}".format(m["ll"]),
             fmt(m["est_us_instr"], 1), fmt(m["est_us"], 1),
             HOLD_MISS_US * 1000,
             fmt(m["native_ns"] / 1000, 1) if m["native_ns"] is not None else "-"))
    P("  (estimates, not measurements: the model is Ir/3000 us + 0.08 us per "
      "LL miss, the second figure is the one held against the target; native "
      "figures are one noisy wall-clock run)")
    if big not in maxhold:
        hm = native_holdmax.get(("fill", big, "add"))
        P("warning: no deferred work ran while filling to N=%d: the core no "
          "longer grows its table from a work item, so the hold is not "
          "counted; host_rehash_max_hold_us falls back to the native longest "
          "hold of any lock during the fill (one noisy wall-clock figure: "
          "preemption shows up in it)" % big)
        if hm:
            maxhold[big] = {"est_us": int(hm["ns"]) / 1000}

    # The delay wheel's expiry: moves and critical sections.
    P("")
    P("delay wheel: the fake clock run from one armed deadline to the next "
      "until all N keys are ready (after-near, after-far)")
    erows = []
    for scen in ("after-near", "after-far"):
        for n in ns:
            e = expire.get((scen, n))
            if not e or not e["keys"]:
                continue
            hs = [h[2] for h in expire_holds if h[0] == scen and h[1] == n]
            nat = native_holds.get((scen, n, "expire"), [])
            for i, h in enumerate(hs):
                erows.append({"scenario": scen, "n": n, "seq": i, "ir": h[0],
                              "dlmr": h[EVENTS.index("DLmr")],
                              "dlmw": h[EVENTS.index("DLmw")], "ll": llmiss(h),
                              "est_us_instr": h[0] / (HOLD_GHZ * 1000),
                              "est_us": est_us(h),
                              "native_ns": nat[i] if i < len(nat) else None})
            mine = [h for h in erows if h["scenario"] == scen and h["n"] == n]
            m = max(mine, key=lambda h: h["est_us"]) if mine else None
            hm = native_holdmax.get((scen, n, "expire"))
            P("  %-10s N=%-8d %.2f moves per key; %d critical sections "
              "dumped, longest: %s instructions, %s LL misses, estimate "
              "%s us; native longest of all: %s us"
              % (scen, n, e["moves"] / e["keys"], len(mine),
                 "{:,}".format(m["ir"]) if m else "-",
                 "{:,}".format(m["ll"]) if m else "-",
                 fmt(m["est_us"], 1) if m else "-",
                 fmt(int(hm["ns"]) / 1000, 1) if hm else "-"))
            if m and n == big:
                prev = maxhold.get(("expire", big))
                if not prev or m["est_us"] > prev["est_us"]:
                    maxhold[("expire", big)] = m
    P("  (a move is a key taken out of a slot and placed again, in a finer "
      "slot or the tree; sections beyond the first 8192 of a run are not "
      "dumped one by one)")

    # Memory.
    P("")
    P("memory per queued item (as the slab model counts it), at the end "
      "of fill 0->N")
    mrows = []
    for n in ns:
        m = mem.get(("fill", n))
        if not m:
            continue
        items = int(m["items"])
        obj = int(m["obj_bytes"]) / items
        table = int(m["table_bytes"]) / items
        slab = int(m["slab_bytes"]) / items
        mr = {"n": n, "items": items, "object_bytes": obj,
              "table_bytes": table, "bytes_per_item": obj + table,
              "slab_page_bytes": slab, "slab_bytes_per_item": slab + table}
        mrows.append(mr)
        cs = ", ".join("%s %sx%s B (%s per %s B slab)"
                       % (c["name"], c["live"], c["object_size"],
                          c["per_slab"], c["slab_bytes"])
                       for c in caches.get(("fill", n), []) if int(c["live"]))
        P("  N=%-8d %.1f B/item = %.1f B node objects + %.1f B hash table; "
          "with slab page waste %.1f B/item [%s]"
          % (n, obj + table, obj, table, slab + table, cs))

    # Where the instructions go: self cost per function, worker loop.
    frows = []
    k = ("steady", small, "loop")
    if k in phases:
        p = phases[k]
        tot = sum(v[0] for v in p["self"].values())
        P("")
        P("where the instructions of add+get+done go (self Ir/op, worker "
          "loop, N=%d; core, kernel lib and shims only)" % small)
        for name, v in sorted(p["self"].items(), key=lambda x: -x[1][0]):
            ir = v[0] / p["ops"]
            frows.append({"function": name, "ir_per_op": ir,
                          "ll_per_op": llmiss(v) / p["ops"]})
        for fr in frows[:12]:
            P("  %-32s %7.1f" % (fr["function"], fr["ir_per_op"]))
        P("  %-32s %7.1f" % ("(all)", tot / p["ops"]))

    # Targets.
    def row(label, n):
        return byname.get((label, n))

    targets = []
    r = row("add+get+done, N queued", small)
    if r:
        targets.append(("host_instr_add_get_done", r["ir"], 600, "%.0f"))
    for name, label in (("host_llmiss_add_1e6", "add, N queued"),
                        ("host_llmiss_get_done_1e6", "get+done, N queued")):
        r = row(label, big)
        if r:
            targets.append((name, r["ll"], {"host_llmiss_add_1e6": 1.5,
                                            "host_llmiss_get_done_1e6": 2}[name],
                            "%.2f"))
    ra = [row(l, big) for l in ("add_after near, N waiting",
                                "add_after far, N waiting")]
    ra = [x for x in ra if x]
    if ra:
        targets.append(("host_llmiss_add_after_1e6",
                        max(x["ll"] for x in ra), 2.5, "%.2f"))
    if big in maxhold:
        targets.append(("host_rehash_max_hold_us", maxhold[big]["est_us"], 50,
                        "%.1f"))
    allholds = [maxhold[k]["est_us"] for k in (big, ("expire", big))
                if k in maxhold]
    if allholds:
        targets.append(("host_max_hold_us", max(allholds), 50, "%.1f"))
    mb = [m for m in mrows if m["n"] == big]
    if mb:
        targets.append(("host_bytes_per_item", mb[0]["bytes_per_item"], 128,
                        "%.1f"))
    P("")
    P("targets: instructions at N=%d (worker loop); misses, rehash and "
      "memory at N=%d; add_after is the worse of near and far"
      % (small, big))
    if big != 1000000:
        P("warning: the largest N is %d, not 1e6: the _1e6 targets are "
          "measured at N=%d" % (big, big))
    trows = []
    for name, val, goal, f in targets:
        met = "met" if val <= goal else "missed"
        trows.append({"name": name, "measured": f % val, "goal": "<=%g" % goal,
                      "status": met})
        P("target %s %s <=%g %s" % (name, f % val, goal, met))

    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    with open(os.path.join(out, "table.txt"), "w") as f:
        f.write(text)

    def write(name, fields, data):
        with open(os.path.join(out, name), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
            w.writeheader()
            for d in data:
                w.writerow({k: round(v, 4) if isinstance(v, float) else v
                            for k, v in d.items()})

    write("results.csv", ["label", "scenario", "phase", "ops_group", "n", "ops",
                          "ir", "ll", "dlmr", "dlmw", "d1", "il", "ir_ratio",
                          "ll_ratio", "native_ns"], rows)
    write("holds.csv", ["scenario", "n", "seq", "ir", "dlmr", "dlmw", "ll",
                        "est_us_instr", "est_us", "native_ns"], hrows + erows)
    write("memory.csv", ["n", "items", "object_bytes", "table_bytes",
                         "bytes_per_item", "slab_page_bytes",
                         "slab_bytes_per_item"], mrows)
    write("functions.csv", ["function", "ir_per_op", "ll_per_op"], frows)
    write("targets.csv", ["name", "measured", "goal", "status"], trows)


if __name__ == "__main__":
    main()
