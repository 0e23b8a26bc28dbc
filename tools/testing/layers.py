#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The call graph between kwq's source files, and a check that it has no
cycles (Documentation/design.rst, "The map").

usage: layers.py [--src SRCDIR] [--svg FILE] OBJDIR

OBJDIR holds the objects of src/ as Kbuild left them (*.o). A file A
depends on a file B when A's object needs a symbol B's object defines
(`nm`: undefined in A, defined in B): a call, or a variable or table of
B's that A names. Calls made through a function pointer that a lower
file was handed (the clock's expiry, the grow and wheel work items) are
not edges, which is the point: the lower file does not know the upper.

Prints one line per file with the files it depends on, in an order where
each file comes after everything it depends on. Exits 1, naming a cycle
and the symbols that close it, if there is one. --svg draws the layers
(Documentation/map.svg is this picture, drawn from the debug build).
"""
import argparse
import glob
import os
import subprocess
import sys


def symbols(obj):
    """(defined, undefined) global symbol names of one object."""
    out = subprocess.run(["nm", obj], check=True, capture_output=True,
                         text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBRGSVW":
            defined.add(parts[2])
    return defined, undefined


def graph(objdir):
    # Only objects of a src/*.c: not Kbuild's composite kwq.o or *.mod.o.
    objs = [o for o in sorted(glob.glob(os.path.join(objdir, "*.o")))
            if os.path.basename(o)[:-2] + ".c" in SOURCES]
    names = {o: os.path.basename(o)[:-2] for o in objs}
    syms = {names[o]: symbols(o) for o in objs}
    owner = {}
    for name, (defined, _) in syms.items():
        for s in defined:
            owner[s] = name
    edges = {name: {} for name in syms}
    for name, (_, undefined) in syms.items():
        for s in undefined:
            dep = owner.get(s)
            if dep and dep != name:
                edges[name].setdefault(dep, set()).add(s)
    return edges


SOURCES = set()


def find_cycle(edges):
    """A cycle as a list of files, or None (depth-first search)."""
    state, stack = {}, []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for d in sorted(edges[n]):
            if state.get(d) == 1:
                return stack[stack.index(d):] + [d]
            if not state.get(d):
                c = visit(d)
                if c:
                    return c
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(edges):
        if not state.get(n):
            c = visit(n)
            if c:
                return c
    return None


def layers(edges):
    """Files in dependency order, lowest first."""
    done, order = set(), []
    while len(order) < len(edges):
        ready = sorted(n for n in edges if n not in done
                       and set(edges[n]) <= done)
        order += ready
        done |= set(ready)
    return order


def svg(edges, path):
    """The files in rows by layer (lowest at the bottom), an arrow per
    dependency, as a standalone SVG."""
    depth = {}
    for n in layers(edges):
        depth[n] = 1 + max((depth[d] for d in edges[n]), default=-1)
    rows = {}
    for n in sorted(depth, key=lambda n: (depth[n], n)):
        rows.setdefault(depth[n], []).append(n)
    bw, bh, gx, gy, pad = 110, 30, 30, 60, 20
    width = max(len(r) for r in rows.values()) * (bw + gx) - gx + 2 * pad
    top = max(rows)
    height = (top + 1) * (bh + gy) - gy + 2 * pad
    pos = {}
    for d, row in rows.items():
        x0 = (width - (len(row) * (bw + gx) - gx)) / 2
        for i, n in enumerate(row):
            pos[n] = (x0 + i * (bw + gx), pad + (top - d) * (bh + gy))
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="monospace" font-size="13">' % (width, height),
           '<defs><marker id="a" markerWidth="8" markerHeight="8" refX="8" '
           'refY="4" orient="auto"><path d="M0,0 L8,4 L0,8 z" '
           'fill="#555"/></marker></defs>',
           '<rect width="100%" height="100%" fill="white"/>']
    for n in sorted(edges):
        x, y = pos[n]
        for d in sorted(edges[n]):
            dx, dy = pos[d]
            out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#999" '
                       'marker-end="url(#a)"/>' % (x + bw / 2, y + bh,
                                                   dx + bw / 2, dy))
    for n, (x, y) in sorted(pos.items()):
        out.append('<rect x="%d" y="%d" width="%d" height="%d" rx="4" '
                   'fill="#eef3fb" stroke="#335"/>' % (x, y, bw, bh))
        out.append('<text x="%d" y="%d" text-anchor="middle">%s.c</text>'
                   % (x + bw / 2, y + bh / 2 + 4, n))
    out.append('</svg>')
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("objdir")
    ap.add_argument("--src", help="the src/ directory (default: OBJDIR)")
    ap.add_argument("--svg", help="also draw the layers into this file")
    args = ap.parse_args()
    srcdir = args.src or args.objdir
    SOURCES.update(os.path.basename(p)
                   for p in glob.glob(os.path.join(srcdir, "*.c")))
    edges = graph(args.objdir)
    if len(edges) < 2:
        sys.exit("layers.py: no objects of src/ in %s" % args.objdir)
    cycle = find_cycle(edges)
    if cycle:
        print("call cycle between src/ files: " + " -> ".join(
            c + ".c" for c in cycle))
        for a, b in zip(cycle, cycle[1:]):
            print("  %s.c needs from %s.c: %s" % (
                a, b, ", ".join(sorted(edges[a][b]))))
        sys.exit(1)
    if args.svg:
        svg(edges, args.svg)
    for n in layers(edges):
        deps = ", ".join(d + ".c" for d in sorted(edges[n])) or "-"
        print("%-12s -> %s" % (n + ".c", deps))


if __name__ == "__main__":
    main()
