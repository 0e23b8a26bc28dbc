#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Guest PC sampling from the host, for tools/bench/profile.sh.

perf's cpu-clock in the guest is an ordinary timer interrupt: it cannot
fire while the guest has interrupts off, so time under
spin_lock_irqsave() (kwq's queue lock, spinning included) is charged to
the unlock that enables them again. This samples from outside instead:
through QEMU's QMP socket, stop the VM, read every vCPU's RIP (HMP "info
registers -a"), continue. The guest's clocks stand still while it is
stopped; a TCG vCPU stops at the start of a translation block, so a
sample lands on the block being run, interrupts on or off. Leaf only, no
call chains.

  pcsample.py sample --qmp SOCK --log VMLOG --raw RAW [--hz HZ]
      Sample while the console (VMLOG) says "PCSAMPLE-START TAG" until
      "PCSAMPLE-STOP TAG"; append "TAG CPU CPL HLT RIP" lines to RAW.
      Ends when QEMU closes the socket.
  pcsample.py report --log VMLOG --raw RAW --tag TAG [--top N]
      Name the samples of TAG with the guest's own /proc/kallsyms, which
      the console carries (PCSAMPLE-KALLSYMS, gzip + base64, at boot;
      PCSAMPLE-MODSYMS TAG, the modules' symbols after the run), and
      print the top N symbols.
  pcsample.py categories [--obj FILE.o ...] < TABLE
      Add up a table of "PCT% [k] SYMBOL" lines (perf report's or the
      report above) into the categories of Documentation/benchmarks.rst
      ("Where the time goes in the VM"); the .o files name the source file
      of each kwq symbol (kwq:queue.c, kwq:dev.c, ...). With --results
      (the runs' RESULT lines), also ns per item: the share of 2 vCPUs x
      the runs' timed ns / their items (adds).
"""
import argparse
import base64
import bisect
import collections
import gzip
import json
import os
import re
import socket
import sys
import time


class Qmp:
    def __init__(self, path, wait=120):
        deadline = time.time() + wait
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX)
                self.sock.connect(path)
                break
            except OSError:
                self.sock.close()
                if time.time() > deadline:
                    raise
                time.sleep(0.1)
        self.buf = b""
        self._line()  # greeting
        self.cmd("qmp_capabilities")

    def _line(self):
        while b"\n" not in self.buf:
            data = self.sock.recv(65536)
            if not data:
                raise EOFError
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def cmd(self, name, **args):
        msg = {"execute": name}
        if args:
            msg["arguments"] = args
        self.sock.sendall(json.dumps(msg).encode() + b"\n")
        while True:
            r = self._line()
            if "return" in r:
                return r["return"]
            if "error" in r:
                raise RuntimeError(r["error"])


REG_RE = re.compile(r"RIP=([0-9a-f]+) .*CPL=(\d) .*HLT=(\d)")


def sample(args):
    try:
        qmp = Qmp(args.qmp)
    except OSError as e:
        sys.exit(f"pcsample: no QMP socket {args.qmp}: {e}")
    period = 1.0 / args.hz
    tag, pos, n = None, 0, collections.Counter()
    out = open(args.raw, "a")
    try:
        while True:
            t0 = time.monotonic()
            # New console lines: start or stop a tag.
            try:
                with open(args.log, "rb") as f:
                    f.seek(pos)
                    data = f.read()
            except FileNotFoundError:
                data = b""
            last_nl = data.rfind(b"\n")
            if last_nl >= 0:
                pos += last_nl + 1
                for line in data[:last_nl].decode(errors="replace").splitlines():
                    line = line.strip()
                    if line.startswith("PCSAMPLE-START "):
                        tag = line.split()[1]
                    elif line.startswith("PCSAMPLE-STOP "):
                        tag = None
            if tag is None:
                qmp.cmd("query-status")  # notices QEMU's exit
                time.sleep(0.02)
                continue
            qmp.cmd("stop")
            regs = qmp.cmd("human-monitor-command",
                           **{"command-line": "info registers -a"})
            qmp.cmd("cont")
            cpu = 0
            for line in regs.splitlines():
                if line.startswith("CPU#"):
                    cpu = int(line[4:].split()[0])
                m = REG_RE.search(line)
                if m:
                    out.write(f"{tag} {cpu} {m.group(2)} {m.group(3)} {m.group(1)}\n")
                    n[tag] += 1
            time.sleep(max(0.0, period - (time.monotonic() - t0)))
    except (EOFError, OSError):
        pass
    out.close()
    for t, c in n.items():
        print(f"pcsample: {t}: {c} samples", file=sys.stderr)


def console(log):
    with open(log, "rb") as f:
        return f.read().decode(errors="replace").replace("\r", "").splitlines()


def between(lines, begin, end):
    on, got = False, []
    for line in lines:
        if line == end:
            on = False
        if on:
            got.append(line)
        if line == begin:
            on = True
    return got


def symbols(lines, tag):
    """(sorted addresses, names) of the guest's text symbols."""
    blob = "".join(between(lines, "PCSAMPLE-KALLSYMS-BEGIN", "PCSAMPLE-KALLSYMS-END"))
    text = gzip.decompress(base64.b64decode(blob)).decode().splitlines()
    text += between(lines, f"PCSAMPLE-MODSYMS-BEGIN {tag}", f"PCSAMPLE-MODSYMS-END {tag}")
    syms = {}
    for line in text:
        f = line.split()
        if len(f) >= 3 and f[1] in "tTwW":
            name = f[2] + (" " + f[3] if len(f) > 3 else "")
            syms[int(f[0], 16)] = name
    addrs = sorted(syms)
    return addrs, [syms[a] for a in addrs]


def report(args):
    lines = console(args.log)
    addrs, names = symbols(lines, args.tag)
    hist, total, idle, user = collections.Counter(), 0, 0, 0
    with open(args.raw) as f:
        for line in f:
            tag, _cpu, cpl, hlt, rip = line.split()
            if tag != args.tag:
                continue
            total += 1
            if cpl == "3":
                user += 1
                hist["[.] (user space)"] += 1
                continue
            if hlt == "1":
                idle += 1
            i = bisect.bisect_right(addrs, int(rip, 16)) - 1
            hist["[k] " + (names[i] if i >= 0 else rip)] += 1
    if not total:
        sys.exit(f"pcsample: no samples of {args.tag}")
    print(f"# Samples: {total} (vCPU RIPs; halted {100.0 * idle / total:.2f}%,"
          f" user {100.0 * user / total:.2f}%)")
    for name, c in hist.most_common(args.top or None):
        print(f"    {100.0 * c / total:6.2f}%  {name}")


# (category, regular expression on the symbol), first match wins. By
# name, so approximate: they follow the 6.12 kernel's symbols.
CATEGORIES = [
    ("idle", r"pv_native_safe_halt|default_idle|do_idle|cpu_startup_entry|"
     r"tick_nohz_idle|cpuidle|nohz_run_idle"),
    ("spinlock contention (slowpath)", r"queued_(spin|read|write)_lock_slowpath"),
    ("IRQ-enabling unlock (perf: charged with the IRQ-off time)",
     r"_raw_spin_unlock_irq(restore)?$"),
    ("syscall entry/exit, mitigations",
     r"entry_SYSCALL|do_syscall_64|syscall_(exit|enter|return)|x64_sys_call|"
     r"exit_to_user_mode|fpregs_assert|__x86_(indirect|return)_thunk|"
     r"clear_bhb|mds_clear|entry_untrain|srso_|retbleed|__pti"),
    ("ioctl dispatch, fd, LSM", r"__x64_sys_ioctl|do_vfs_ioctl|^fdget|fdput|"
     r"security_file_ioctl|tomoyo_|apparmor_|bpf_lsm_file|__fget"),
    ("copy_{to,from}_user, usercopy checks",
     r"copy_(to|from)_user|rep_movs_alternative|copy_user|__check_object_size|"
     r"__check_heap_object|__virt_addr_valid|check_stack_object|"
     r"(get|put)_user|copy_struct_from_user|check_zeroed_user|strncpy_from_user"),
    ("hsiphash, memcmp (key hash, compare)", r"hsiphash|^memcmp$"),
    ("clock reads (ktime_get)", r"^ktime_get|^read_tsc|native_sched_clock|sched_clock"),
    ("slab / page allocation, zeroing", r"kmem_cache|kmalloc|kfree|slab|^kvfree|"
     r"clear_page|get_page_from_freelist|alloc_pages|free_unref|rmqueue|"
     r"free_pcppages|__free_pages|memcg|obj_cgroup|refill_obj_stock|"
     r"consume_obj_stock|mod_objcg|lsm_blob_alloc|put_cpu_partial|memset"),
    ("wake-ups, scheduler, IPIs",
     r"wake_up|try_to_wake_up|ttwu|schedule|finish_task_switch|__switch_to|"
     r"switch_mm|switch_fpu|pick_next|(en|de)queue_(task|entity)|"
     r"__(en|de)queue_entity|update_curr|update_load_avg|select_task_rq|"
     r"psi_|sched_|prepare_to_wait|finish_wait|autoremove_wake|"
     r"send_IPI|call_function|smp_call|set_next_entity|put_prev|"
     r"avg_vruntime|reweight|resched|migrate|check_preempt|wakeup_preempt|"
     r"place_entity|kthread_data|wq_worker_(running|sleeping)|^__cond_resched|"
     r"dequeue_entit|_task_fair|update_sd_lb|update_rq_clock|load_balance"),
    ("timer/tick interrupt", r"apic_timer|lapic_next_event|hrtimer|tick_|"
     r"update_process_times|clockevents|update_wall_time|"
     r"timekeeping|update_vsyscall|get_jiffies|rcu_|softirq|irq_exit|"
     r"irq_enter|account_|cpuacct|run_timer|timer_"),
    ("list hardening checks", r"__list_(add|del)_.*valid"),
    ("spinlock fast path, other locks", r"_raw_spin_lock|_raw_spin_unlock|"
     r"_raw_spin_trylock|mutex_|_raw_(read|write)_"),
    ("mqueue (ipc/mqueue.c, msgutil.c)", r"mq_|_msg$|^msg_|load_msg|store_msg|"
     r"free_msg|security_msg|inode_set_ctime|simple_inode_init_ts|"
     r"current_time|__do_notify|wq_sleep|pipelined"),
    ("workqueue (kernel/workqueue.c)", r"queue_work|process_one_work|"
     r"worker_thread|pwq_|move_linked_works|insert_work|kick_pool|"
     r"worker_|need_more_worker|assign_work|__pwq_activate|"
     r"clear_pending_if_disabled|sized_strscpy|^strnlen$"),
    ("rbtree", r"^rb_|__rb_"),
    ("interrupt entry/exit", r"^asm_|irqentry|softirqentry|handle_edge_irq|"
     r"^irq_|_irq_|common_interrupt|error_entry|handle_irq"),
    ("page faults, mm", r"fault|page_range|_pte|pte_|do_wp_page|filemap|vma|"
     r"folio|^mm_|mmap|tlb"),
    ("module loading", r"text_poke|module|apply_relocate|mod_sysfs|kallsyms|"
     r"load_elf|simplify_symbols"),
]


def categories(args):
    owner = {}
    for obj in args.obj or []:
        nm = os.popen(f"nm --defined-only '{obj}'").read()
        for line in nm.splitlines():
            f = line.split()
            if len(f) == 3 and f[1] in "tTwW":
                owner[f[2]] = "kwq:" + os.path.basename(obj)[:-2] + ".c"
    rules = [(c, re.compile(r)) for c, r in CATEGORIES]
    sums = collections.Counter()
    line_re = re.compile(r"^\s*([0-9.]+)%\s+(?:[0-9.]+%\s+)?\[(.)\]\s+(\S+)(?:\s+\[(\S+)\])?")
    for line in sys.stdin:
        m = line_re.match(line)
        if not m:
            continue
        pct, kind, sym, mod = float(m.group(1)), m.group(2), m.group(3), m.group(4)
        if kind != "k":
            cat = "user space"
        elif sym in owner:
            cat = owner[sym]
        elif mod == "kwq_bench" or sym.startswith("bench_"):
            cat = "kwq_bench.ko (the benchmark)"
        else:
            cat = next((c for c, r in rules if r.search(sym)), "other kernel")
        sums[cat] += pct
    # ns per item: the share of 2 vCPUs x the timed ns of the runs.
    ns = n = 0
    for line in open(args.results) if args.results else []:
        f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
        if "put_ns" in f:
            ns += int(f["put_ns"]) + int(f["take_ns"])
        elif "ns" in f:
            ns += int(f["ns"])
        n += int(f.get("adds", f.get("items", 0)))
    if n:
        print(f"    (ns/item: share x 2 vCPUs x {ns / 1e6:.0f} ms timed / {n} items)")
    for cat, pct in sorted(sums.items(), key=lambda x: -x[1]):
        per = f"{pct / 100 * 2 * ns / n:7.0f} ns/item  " if n else ""
        print(f"    {pct:6.2f}%  {per}{cat}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="what", required=True)
    s = sub.add_parser("sample")
    s.add_argument("--qmp", required=True)
    s.add_argument("--log", required=True)
    s.add_argument("--raw", required=True)
    s.add_argument("--hz", type=float, default=1000)
    r = sub.add_parser("report")
    r.add_argument("--log", required=True)
    r.add_argument("--raw", required=True)
    r.add_argument("--tag", required=True)
    r.add_argument("--top", type=int, default=40)
    c = sub.add_parser("categories")
    c.add_argument("--obj", action="append")
    c.add_argument("--results", help="RESULT lines of the runs sampled: add ns/item")
    args = p.parse_args()
    {"sample": sample, "report": report, "categories": categories}[args.what](args)


if __name__ == "__main__":
    main()
