#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the RESULT lines of a kwq benchmark VM console into a table.

usage: report.py --out DIR --machine TEXT --reps N CONSOLE_LOG
       report.py --update-doc RST --out DIR

Writes DIR/results.csv (every measurement), DIR/summary.csv (median,
spread, ratio per figure), DIR/table.txt and DIR/table.rst, and
DIR/scaling.dat + DIR/scaling.gp for gnuplot; prints the table. Every
ratio is taken within one repetition (kwq and its peer ran back to back
in the same VM) and then summarised over the repetitions.
"""
import argparse
import csv
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
    reps = sorted(set(num) & set(den))
    return Stat([num[r] / den[r] for r in reps if den[r]])


def build(rows):
    """Figures: list of dicts with name, unit, kwq, peer, ratio, target, met."""
    figs = []

    def tput(suite, impl, key="adds"):
        d = by_rep(rows, suite=suite, impl=impl)
        return {r: int(v[key]) / int(v["ns"]) * 1e9 for r, v in d.items()}

    def add(name, unit, kwq, peer_name, peer, ratio, target=None, ok=None,
            note=""):
        figs.append(dict(name=name, unit=unit, kwq=kwq, peer_name=peer_name,
                         peer=peer, ratio=ratio, target=target or "",
                         met="" if ok is None else ("yes" if ok else "NO"),
                         note=note))

    def prod_note(suite):
        parts = []
        for impl in ("kwq", "workqueue"):
            d = by_rep(rows, suite=suite, impl=impl)
            p = Stat(int(v["prod_ns"]) / int(v["ns"]) for v in d.values()
                     if "prod_ns" in v)
            sl = Stat(int(v["sleeps"]) for v in d.values() if "sleeps" in v)
            if p:
                parts.append("%s producer busy %.0f%% of the run" %
                             (impl, 100 * p.med))
            if impl == "kwq" and sl and sl.med:
                parts.append("kwq consumer waits %s" % fmt_num(sl.med))
        return ", ".join(parts)

    k, w = tput("throughput", "kwq"), tput("throughput", "workqueue")
    r = ratio_stat(k, w)
    add("in-kernel distinct keys", "items/s", Stat(k.values()), "workqueue",
        Stat(w.values()), r, ">= 1.0x", r.med >= 1.0 if r else None,
        note=prod_note("throughput"))

    k, w = tput("hotkey", "kwq"), tput("hotkey", "workqueue")
    kr = Stat(int(v["ran"]) for v in by_rep(rows, suite="hotkey", impl="kwq").values())
    wr = Stat(int(v["ran"]) for v in by_rep(rows, suite="hotkey", impl="workqueue").values())
    note = ("items run: kwq %s, workqueue %s; " % (fmt_num(kr.med), fmt_num(wr.med))
            if kr and wr else "") + prod_note("hotkey")
    add("in-kernel hot keys (adds)", "adds/s", Stat(k.values()), "workqueue",
        Stat(w.values()), ratio_stat(k, w), note=note)

    u = {i: tput("user", i, "items") for i in ("kwq_single", "kwq_batch", "mqueue")}
    r = ratio_stat(u["kwq_single"], u["mqueue"])
    add("userspace single-op", "items/s", Stat(u["kwq_single"].values()),
        "mqueue", Stat(u["mqueue"].values()), r, ">= 0.7x",
        r.med >= 0.7 if r else None)
    r = ratio_stat(u["kwq_batch"], u["mqueue"])
    add("userspace batched (64)", "items/s", Stat(u["kwq_batch"].values()),
        "mqueue", Stat(u["mqueue"].values()), r, ">= 5x",
        r.med >= 5.0 if r else None)

    for impl, label in (("kwq_single", "single-op"), ("kwq_batch", "batched")):
        for side, what in (("put_ns", "add"), ("take_ns", "get+done")):
            def cost(i):
                return {rep: int(v[side]) / int(v["items"])
                        for rep, v in by_rep(rows, suite="uphases", impl=i).items()}
            kc, mc = cost(impl), cost("mqueue")
            if kc:
                add("userspace %s %s alone" % (label, what), "ns/item",
                    Stat(kc.values()), "mqueue", Stat(mc.values()),
                    ratio_stat(kc, mc), note="lower is better")

    scaling = {}
    for op, label in (("add", "add"), ("get_done", "get+done"),
                      ("add_after", "add_after")):
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
                "<= 1.5x of 1e3" if last else None,
                (r.med <= 1.5) if (last and r) else None,
                note="ratio: vs 1e3")

    mem = by_rep(rows, suite="memory")
    if mem:
        slab = Stat(int(v["slab_bytes"]) / int(v["items"]) for v in mem.values())
        osz = next(iter(mem.values()))
        add("memory per item, slab (16 B keys)", "bytes", slab, "", None, None,
            "<= 128", slab.med <= 128,
            note="kwq_node object_size %s, slab_size %s" %
            (osz["object_size"], osz["slab_size"]))

    for q in ("p50", "p99", "max"):
        kk = {r: int(v[q + "_ns"]) / 1e3 for r, v in by_rep(rows, suite="timer", impl="kwq").items()}
        dd = {r: int(v[q + "_ns"]) / 1e3 for r, v in by_rep(rows, suite="timer", impl="delayed_work").items()}
        add("timer lateness %s" % q, "us", Stat(kk.values()), "delayed_work",
            Stat(dd.values()), ratio_stat(kk, dd), note="lower is better")
    return figs, scaling


def table(figs, header):
    cols = ["figure", "unit", "kwq median ±spread/2", "peer", "peer median",
            "ratio (min-max)", "target", "met"]
    lines = [[f["name"], f["unit"], cell(f["kwq"]), f["peer_name"],
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
    out.append("note: spread = (max - min) / median over the repetitions, shown"
               " halved as ±. Ratios are kwq/peer per repetition (same VM run),"
               " median and range; for scaling against the 1e3 size; for"
               " ns/item and lateness rows lower is better.")
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
    ap.add_argument("log", nargs="?")
    a = ap.parse_args()
    if a.update_doc:
        update_doc(a.update_doc, a.out)
        return
    rows = parse(a.log)
    if not rows:
        sys.exit("report.py: no RESULT lines in %s" % a.log)
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
    lines = table(figs, header)
    text = "\n".join(lines) + "\n"
    with open(os.path.join(a.out, "table.txt"), "w") as f:
        f.write(text)
    with open(os.path.join(a.out, "table.rst"), "w") as f:
        f.write("::\n\n" + "".join("    " + ln + "\n" if ln else "\n"
                                   for ln in lines))
    write_csv(os.path.join(a.out, "summary.csv"), figs)
    gnuplot(a.out, scaling)
    sys.stdout.write("\n" + text)
    if a.reps and reps < a.reps:
        print("warning: only %d of %d repetitions finished" % (reps, a.reps),
              file=sys.stderr)


if __name__ == "__main__":
    main()
