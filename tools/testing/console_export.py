#!/usr/bin/env python3
"""Files the test VM handed to the host over its console.

The console is the VM's only channel out. Its /init (init.sh,
export_files DIR) prints the files under DIR as a gzipped tar in base64
between

    KWQ-EXPORT-BEGIN NAME FILES SHA256
    KWQ-EXPORT-END NAME

NAME being DIR's basename (kwq-repro: the fuzzer's reproducers,
tools/testing/fuzz.sh; gcov: the coverage data, coverage.py). This module
finds an export in a console log, drops the console's carriage returns,
checks the tarball against its sha256 and its file count, and gives its
files; any damage (a kernel message across a line, a log cut short) is
an ExportError that says what is wrong.

usage: console_export.py [--require] LOG NAME OUTDIR
  writes the files of the last export NAME in LOG under OUTDIR and
  prints "PATH BYTES" for each (PATH relative to OUTDIR). No export NAME:
  nothing printed, exit 0 (with --require: an error). Exit 1 with a
  message on stderr when the export is damaged.
"""
import argparse
import base64
import binascii
import hashlib
import io
import os
import re
import sys
import tarfile

B64 = re.compile(r"^[A-Za-z0-9+/=]+$")


class ExportError(Exception):
    """An export that is missing or damaged."""


class NoExport(ExportError):
    """No export of that name in the log."""


def read(log, name):
    """(tarball bytes, file count) of the last export NAME in LOG, checked."""
    data, want, files, inside, begun = [], None, 0, False, False
    with open(log, "rb") as f:
        for raw in f:
            line = raw.decode("latin-1").replace("\r", "").rstrip("\n")
            words = line.split()
            if len(words) >= 2 and words[0] == "KWQ-EXPORT-BEGIN" and words[1] == name:
                if len(words) != 4 or not words[2].isdigit():
                    raise ExportError("bad line in %s: %r" % (log, line))
                files, want = int(words[2]), words[3]
                data, inside, begun = [], True, True
            elif words[:2] == ["KWQ-EXPORT-END", name]:
                inside = False
            elif inside and B64.match(line):
                data.append(line)
    if not begun:
        raise NoExport("no export %s in %s" % (name, log))
    if inside:
        raise ExportError("export %s in %s is cut short (no KWQ-EXPORT-END)" % (name, log))
    try:
        blob = base64.b64decode("".join(data), validate=True)
    except (binascii.Error, ValueError) as e:
        raise ExportError("export %s in %s is damaged (base64: %s)" % (name, log, e))
    got = hashlib.sha256(blob).hexdigest()
    if got != want:
        raise ExportError("export %s in %s is damaged (sha256 %s, expected %s; "
                          "kernel output across a line?)" % (name, log, got, want))
    return blob, files


def members(blob, files):
    """[(relative path, bytes)] of the regular files in the tarball."""
    out = []
    try:
        with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tar:
            for m in tar.getmembers():
                if not m.isfile():
                    continue
                path = os.path.normpath(m.name)
                if path.startswith(("/", "..")):
                    raise ExportError("export holds a path outside it: %s" % m.name)
                out.append((path, tar.extractfile(m).read()))
    except (tarfile.TarError, OSError, EOFError) as e:
        raise ExportError("export tarball unreadable: %s" % e)
    if len(out) != files:
        raise ExportError("export holds %d files, its header says %d" % (len(out), files))
    return out


def files_of(log, name):
    """[(relative path, bytes)] of the last export NAME in LOG, checked."""
    return members(*read(log, name))


def main():
    ap = argparse.ArgumentParser(description="Write out the files a VM exported.")
    ap.add_argument("--require", action="store_true",
                    help="a missing export is an error")
    ap.add_argument("log")
    ap.add_argument("name")
    ap.add_argument("outdir")
    args = ap.parse_args()
    try:
        got = files_of(args.log, args.name)
    except NoExport as e:
        if not args.require:
            return 0
        print("console_export: %s" % e, file=sys.stderr)
        return 1
    except ExportError as e:
        print("console_export: %s" % e, file=sys.stderr)
        return 1
    for path, data in got:
        dest = os.path.join(args.outdir, path)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "wb") as f:
            f.write(data)
        print(path, len(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
