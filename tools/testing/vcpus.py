#!/usr/bin/env python3
"""Where a wedged test VM's vCPUs are: read through QEMU's human monitor.

usage: vcpus.py MONITOR_SOCKET [SYSTEM_MAP]

Prints one line a vCPU: its RIP (as a kernel symbol when SYSTEM_MAP is
given), whether it sits in HLT and whether interrupts are enabled. vm.sh
runs it shortly before a VM's timeout, so that a guest that went quiet
can be told apart: every vCPU idle in HLT with interrupts on (no timer
wakes it: the guest's clock or the emulator's), or one spinning, and
where.
"""
import bisect
import re
import socket
import sys
import time


def monitor(path, command):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    s.connect(path)
    out = b""

    def drain(until):
        nonlocal out
        end = time.monotonic() + 5
        while until not in out and time.monotonic() < end:
            try:
                data = s.recv(65536)
            except socket.timeout:
                break
            if not data:
                break
            out += data

    drain(b"(qemu)")
    out = b""
    s.sendall(command.encode() + b"\n")
    drain(b"\n(qemu)")
    s.close()
    return out.decode(errors="replace")


def load_map(path):
    addrs, names = [], []
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3 and parts[1] in "tTwW":
                    addrs.append(int(parts[0], 16))
                    names.append(parts[2])
    except OSError:
        return None
    order = sorted(range(len(addrs)), key=addrs.__getitem__)
    return [addrs[i] for i in order], [names[i] for i in order]


def symbol(table, addr):
    if not table:
        return ""
    addrs, names = table
    i = bisect.bisect_right(addrs, addr) - 1
    if i < 0:
        return ""
    return " (%s+%#x)" % (names[i], addr - addrs[i])


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: vcpus.py MONITOR_SOCKET [SYSTEM_MAP]")
    table = load_map(sys.argv[2]) if len(sys.argv) > 2 else None
    text = monitor(sys.argv[1], "info registers -a")
    cpu = None
    for line in text.splitlines():
        m = re.match(r"\s*CPU#(\d+)", line)
        if m:
            cpu = m.group(1)
        m = re.search(r"RIP=([0-9a-f]+) RFL=([0-9a-f]+).*HLT=(\d)", line)
        if m and cpu is not None:
            rip, rfl = int(m.group(1), 16), int(m.group(2), 16)
            print("vCPU %s: RIP %#x%s, %s, interrupts %s" % (
                cpu, rip, symbol(table, rip),
                "halted (HLT)" if m.group(3) == "1" else "running",
                "on" if rfl & 0x200 else "off"))
            cpu = None


if __name__ == "__main__":
    main()
