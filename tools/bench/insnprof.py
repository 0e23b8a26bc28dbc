#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Guest instructions per operation, by symbol, for tools/bench/insnprof.sh.

  insnprof.py --ops N --plus VMLOG COUNTS ... --minus VMLOG COUNTS ...
              [--user BINARY ...] [--what TEXT] [--top K]

Each run is one VM boot whose console (VMLOG) carries the guest's own
/proc/kallsyms at its end (INSNPROF-KALLSYMS-BEGIN/END, gzip + base64;
module symbols included) and whose counts (insnprof.c's "ADDRESS COUNT"
lines) cover the whole boot. The boots differ only in their workloads:
(sum of --plus - sum of --minus) / N leaves what one operation costs,
boot and setup cancelling out. Addresses in user space are named from
the static, non-PIE --user binary (nm), else "<user>". Idle-loop and
boot-time symbols do not cancel exactly (the runs wait for different
times), nor does spinning for a contended lock: the first are listed
as "idle/boot" and left out of the total.
"""
import argparse
import base64
import bisect
import collections
import gzip
import re
import subprocess

IDLE = re.compile(r'^(default_idle|default_idle_call|do_idle|cpu_idle_poll|'
                  r'mwait_idle|acpi_idle|delay_loop|delay_tsc|read_current_timer|'
                  r'native_safe_halt|pv_native_safe_halt|arch_cpu_idle|'
                  r'setup_boot_APIC_clock|check_tsc_warp|calibrate_delay\w*|'
                  r'native_calibrate\w*|tsc_\w*calibrat\w*|rest_init)')
CATEGORIES = [
    ('syscall entry/exit', re.compile(
        r'entry_SYSCALL|do_syscall_64|x64_sys_call|syscall_(exit|return)|'
        r'exit_to_user_mode|fpregs_assert|__x64_sys_ioctl|do_vfs_ioctl|fdget|'
        r'fput|__x86_indirect_thunk|__x86_return_thunk|srso_|entry_')),
    ('LSM (ioctl hooks)', re.compile(r'tomoyo|apparmor|selinux|security_|'
                                     r'hook_file|bpf_lsm')),
    ('slab and pages', re.compile(r'kmem_cache|slab|kfree|kmalloc|__kmalloc|'
                                  r'build_detached_freelist|setup_object|'
                                  r'clear_page|page|folio|rmqueue|pcp')),
    ('spinlocks', re.compile(r'spin_lock|spin_unlock|queued_spin|'
                             r'native_queued')),
    ('scheduler and wake-ups', re.compile(
        r'schedule|wake|sched|enqueue|dequeue|update_(curr|load|rq)|'
        r'switch_to|pick_next|select_task|psi_|finish_task|futex|'
        r'hrtimer|nanosleep|ttwu|smp_call_function|ipi|IPI')),
    ('hash', re.compile(r'siphash')),
    ('interrupts and console', re.compile(
        r'serial|irq|interrupt|fast_mix|error_entry|apic|tick|timer')),
]


def kallsyms(log):
    """The text symbols of a boot, from its console."""
    lines, on = [], False
    with open(log, errors='replace') as f:
        for line in f:
            line = line.rstrip('\r\n')
            if line == 'INSNPROF-KALLSYMS-END':
                break
            if on:
                lines.append(line)
            if line == 'INSNPROF-KALLSYMS-BEGIN':
                on = True
    text = gzip.decompress(base64.b64decode(''.join(lines))).decode()
    syms = []
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 3 and f[1] in 'tTwW':
            name = f[2] if len(f) == 3 else f[2] + ' ' + f[3]
            syms.append((int(f[0], 16), name))
    if not syms:
        raise SystemExit(f'{log}: no kallsyms between the INSNPROF markers')
    return syms


def user_syms(binaries):
    syms = []
    for b in binaries:
        out = subprocess.run(['nm', '-n', b], capture_output=True, text=True,
                             check=True).stdout
        name = b.rsplit('/', 1)[-1]
        for line in out.splitlines():
            f = line.split()
            if len(f) == 3 and f[1] in 'tT':
                syms.append((int(f[0], 16), name + ':' + f[2]))
    return syms


def named(counts, log, usyms):
    syms = sorted(kallsyms(log) + usyms)
    addrs = [a for a, _ in syms]
    lo_user = min((a for a, _ in usyms), default=None)
    hi_user = max((a for a, _ in usyms), default=None)
    c = collections.Counter()
    with open(counts) as f:
        for line in f:
            a, n = line.split()
            a, n = int(a, 16), int(n)
            if a < 1 << 47 and (lo_user is None or not lo_user <= a <= hi_user + 4096):
                c['<user>'] += n
                continue
            i = bisect.bisect_right(addrs, a) - 1
            c[syms[i][1] if i >= 0 else '<unknown>'] += n
    return c


def category(sym):
    if sym.startswith('<user>'):
        return 'user space (other)'
    m = re.search(r' \[(\S+)\]$', sym)
    if m:
        return 'module ' + m.group(1)
    if ':' in sym:
        return 'user: ' + sym.split(':', 1)[0]
    if IDLE.match(sym):
        return 'idle/boot'
    for name, rx in CATEGORIES:
        if rx.search(sym):
            return 'kernel: ' + name
    return 'kernel: other'


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--ops', type=int, required=True)
    p.add_argument('--plus', nargs=2, action='append', default=[])
    p.add_argument('--minus', nargs=2, action='append', default=[])
    p.add_argument('--user', action='append', default=[])
    p.add_argument('--what', default='')
    p.add_argument('--top', type=int, default=40)
    a = p.parse_args()
    if a.ops <= 0 or not a.plus:
        raise SystemExit('need --ops > 0 and a --plus run')
    usyms = user_syms(a.user)
    net = collections.Counter()
    for runs, sign in ((a.plus, 1), (a.minus, -1)):
        for log, counts in runs:
            for k, v in named(counts, log, usyms).items():
                net[k] += sign * v
    per = {k: v / a.ops for k, v in net.items()}
    cats = collections.Counter()
    for k, v in per.items():
        cats[category(k)] += v
    total = sum(v for k, v in cats.items() if k != 'idle/boot')
    print(f'guest instructions per operation: {total:.0f} (idle/boot left out)')
    if a.what:
        print(f'of: {a.what}')
    print()
    print('by category:')
    for k, v in sorted(cats.items(), key=lambda x: -x[1]):
        print(f'  {v:9.1f}  {k}')
    print()
    print(f'top {a.top} symbols (idle/boot left out):')
    shown = 0
    for k, v in sorted(per.items(), key=lambda x: -x[1]):
        if category(k) == 'idle/boot':
            continue
        print(f'  {v:9.1f}  {k}')
        shown += 1
        if shown == a.top:
            break


if __name__ == '__main__':
    main()
