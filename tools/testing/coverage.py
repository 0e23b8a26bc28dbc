#!/usr/bin/env python3
"""Line and branch coverage of kwq's src/ from test VMs' console logs.

Each VM's /init (init.sh, gcov_dump) hands the .gcda files of kwq.ko,
built with KWQ_GCOV=1 on the debug kernel (CONFIG_GCOV_KERNEL), to the
host over the console as the export "gcov" (init.sh export_files,
decoded and checked by console_export.py). For each log, this script
puts each .gcda beside the .gcno of the host build it came from and
captures it with lcov (gcov-12, the compiler's); the captures, of one
build and so of the same lines and branches, are added up (lcov -a).
genhtml makes the HTML, and the script prints per file of src/ the lines
and branches reached, the totals as figure lines:

    figure coverage_lines_src 91.3 >=90 met|missed
    figure coverage_branches_src 82.0 >=80 met|missed

and every error return never reached: a line of src/ with count 0 that
returns or sets a negative errno (return -E..., = -E..., ERR_PTR(),
PTR_ERR()), returns ret/err right after "if (ret)" (or "if (ret < 0)"),
or jumps to an unwinding label (goto err*/fail*/out_*) or, after one of
those tests or a "ret = -E...", to any label.

usage: coverage.py --objdir DIR --out DIR [--counts FILE] [--enforce LIST] LOG...
  LOG        the console log of a VM that ran that build of kwq.ko
  --objdir   the module's build directory (build-module.sh OUTDIR/src)
  --out      where the HTML (genhtml), coverage.info and lcov.log go
  --counts   append "passed failed skipped": the data as one case, and
             one case per enforced target
  --enforce  the targets that are test cases, "lines,branches": a figure
             below its goal fails; the others only print met or missed
Exit status: 0 when the data was read and every enforced target met, 1
otherwise.
"""
import argparse
import math
import os
import re
import shutil
import subprocess
import sys

import console_export

GOALS = (("lines", 90.0), ("branches", 80.0))
ERRNO = re.compile(r"\breturn\s+-E[A-Z0-9]+\b|=\s*-E[A-Z0-9]+\b|ERR_PTR\(|"
                   r"\breturn\s+PTR_ERR\(")
RET_VAR = re.compile(r"^\s*return\s+(ret|err|error|rc)\s*;")
ERR_TEST = re.compile(r"\bif\s*\(\s*(ret|err|error|rc)\s*(<\s*0\s*)?\)|"
                      r"\bif\s*\(\s*!|\bIS_ERR(_OR_NULL)?\(|<\s*0\s*\)|"
                      r"\b(ret|err|error|rc)\s*=\s*-E[A-Z0-9]+")
GOTO = re.compile(r"\bgoto\s+(\w+)\s*;")
ERR_LABEL = re.compile(r"^(err|fail|unwind|out_)")


def place(files, objdir):
    """Put each .gcda beside its .gcno in objdir; returns how many."""
    n = 0
    for f in os.listdir(objdir + "/src"):
        if f.endswith(".gcda"):
            os.unlink(os.path.join(objdir, "src", f))
    for name, data in files:
        # The VM's path is /sys/kernel/debug/gcov + the host's object path.
        path = "/" + name
        if os.path.dirname(path) != objdir + "/src":
            continue
        if not os.path.exists(path[:-len(".gcda")] + ".gcno"):
            continue
        with open(path, "wb") as out:
            out.write(data)
        n += 1
    return n


def run(cmd, log):
    with open(log, "a") as f:
        f.write("$ %s\n" % " ".join(cmd))
        f.flush()
        subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, check=True)


def parse_info(path):
    """{source: {"lines": {no: count}, "branches": [(no, taken)], "fns": [(no, name)]}}"""
    files, cur = {}, None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("SF:"):
                cur = files.setdefault(line[3:], {"lines": {}, "branches": [], "fns": []})
            elif line.startswith("DA:"):
                no, count = line[3:].split(",")[:2]
                cur["lines"][int(no)] = cur["lines"].get(int(no), 0) + int(count)
            elif line.startswith("BRDA:"):
                no, _, _, taken = line[5:].split(",")
                cur["branches"].append((int(no), 0 if taken == "-" else int(taken)))
            elif line.startswith("FN:"):
                no, name = line[3:].split(",", 1)
                cur["fns"].append((int(no), name))
    return files


def error_exits(src, lines, fns):
    """(line, function, text) of each error exit with count 0."""
    with open(src, errors="replace") as f:
        text = f.read().split("\n")
    fns = sorted(fns)
    out = []
    for no, count in sorted(lines.items()):
        if count or no > len(text):
            continue
        line = text[no - 1]
        before = " ".join(text[max(0, no - 4):no - 1])
        hit = ERRNO.search(line)
        if not hit and RET_VAR.search(line):
            prev = text[no - 2] if no > 1 else ""
            hit = re.search(r"\bif\s*\(\s*(ret|err|error|rc)\s*(<\s*0\s*)?\)", prev)
        if not hit:
            g = GOTO.search(line)
            hit = g and (ERR_LABEL.match(g.group(1)) or ERR_TEST.search(line + " " + before))
        if hit:
            fn = [n for start, n in fns if start <= no]
            out.append((no, fn[-1] if fn else "?", line.strip()))
    return out


def pct(hit, found):
    """Percent, rounded down to 0.1: 89.96 is not 90.0."""
    return math.floor(1000.0 * hit / found) / 10 if found else 100.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--objdir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--counts")
    ap.add_argument("--enforce", default="")
    ap.add_argument("logs", nargs="+")
    args = ap.parse_args()
    objdir = os.path.realpath(args.objdir)
    out = os.path.realpath(args.out)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    lcov_log = out + "/lcov.log"
    rc = ["--rc", "lcov_branch_coverage=1"]

    def count(p, f):
        if args.counts:
            with open(args.counts, "a") as c:
                c.write("%d %d 0\n" % (p, f))

    n = 0
    try:
        adds = []
        for i, log in enumerate(args.logs):
            try:
                files = console_export.files_of(log, "gcov")
            except console_export.NoExport as e:
                raise SystemExit("coverage: %s: %s (was gcov_dump in the plan?)" % (log, e))
            except console_export.ExportError as e:
                raise SystemExit("coverage: %s: %s" % (log, e))
            m = place(files, objdir)
            if m == 0:
                raise SystemExit("coverage: none of the %d .gcda files in %s belongs to %s"
                                 % (len(files), log, objdir))
            n += m
            part = "%s/vm%d.info" % (out, i)
            run(["lcov", "--quiet", "--capture", "--directory", objdir + "/src",
                 "--gcov-tool", "gcov-12", "--output-file", part] + rc, lcov_log)
            adds += ["--add-tracefile", part]
        run(["lcov", "--quiet"] + adds + ["--output-file", out + "/all.info"] + rc, lcov_log)
        run(["lcov", "--quiet", "--extract", out + "/all.info", objdir + "/src/*",
             "--output-file", out + "/coverage.info"] + rc, lcov_log)
        run(["genhtml", "--quiet", "--branch-coverage", "--prefix", objdir,
             "--title", "kwq src/", "--output-directory", out,
             out + "/coverage.info"] + rc, lcov_log)
    except (SystemExit, subprocess.CalledProcessError, OSError, ValueError) as e:
        print("  FAIL coverage data from the VMs: %s" % (e if str(e) else type(e).__name__))
        print("       (lcov log: %s)" % lcov_log)
        count(0, 1)
        return 1
    print("  PASS coverage data from the VMs (%d .gcda files from %d)" % (n, len(args.logs)))
    count(1, 0)

    info = parse_info(out + "/coverage.info")
    tot = [0, 0, 0, 0]
    unreached = []
    print("  %-22s %22s %22s" % ("file", "lines", "branches"))
    for src in sorted(info):
        d = info[src]
        name = os.path.relpath(src, objdir)
        lh = sum(1 for c in d["lines"].values() if c)
        lf = len(d["lines"])
        bh = sum(1 for _, t in d["branches"] if t)
        bf = len(d["branches"])
        for i, v in enumerate((lh, lf, bh, bf)):
            tot[i] += v
        print("  %-22s %6.1f%% (%5d of %5d) %6.1f%% (%5d of %5d)" % (
            name, pct(lh, lf), lh, lf, pct(bh, bf), bh, bf))
        unreached += [(name, no, fn, t) for no, fn, t in error_exits(src, d["lines"], d["fns"])]
    print("  %-22s %6.1f%% (%5d of %5d) %6.1f%% (%5d of %5d)" % (
        "total", pct(tot[0], tot[1]), tot[0], tot[1], pct(tot[2], tot[3]), tot[2], tot[3]))
    print("  error returns never reached: %d" % len(unreached))
    for name, no, fn, t in unreached:
        print("    %s:%d %s(): %s" % (name, no, fn, t))
    print("  html: %s/index.html" % out)
    failed = 0
    for (what, goal), value in zip(GOALS, (pct(tot[0], tot[1]), pct(tot[2], tot[3]))):
        met = value >= goal
        print("figure coverage_%s_src %.1f >=%g %s" % (what, value, goal,
                                                      "met" if met else "missed"))
        if what in args.enforce.split(","):
            print("  %s coverage of src/ %s >= %g %%" % ("PASS" if met else "FAIL", what, goal))
            count(1 if met else 0, 0 if met else 1)
            failed += not met
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
