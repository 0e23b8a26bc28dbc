#!/bin/bash
# Pack an initramfs and boot one kwq test VM under QEMU TCG.
#
# usage: vm.sh -k KERNEL -o LOG -p PLAN [-t TIMEOUT] [-a EXTRA_ARGS]
#              [-q QEMU_ARGS] [-s] [SRC=DEST ...]
# Each SRC=DEST copies a host file into the initramfs at DEST. PLAN is a
# shell fragment run by init.sh (load_module, kunit_module, user_test, ...).
# QEMU_ARGS: more QEMU options (split on spaces), e.g. a QMP socket.
# -s: single-threaded TCG (one host thread runs every vCPU in turn), for
# a kernel built with CONFIG_JUMP_LABEL: the Debian kernels. Under
# multi-threaded TCG a vCPU can run a stale translation of kernel text
# that text_poke_bp() has already finished patching, and the kernel
# dies on an int3 no patch owns ("Oops: int3" in call_timer_fn(),
# __run_timers(), ttwu_do_activate(), ...), or stock 6.1 wedges with
# both vCPUs spinning, interrupts off. Toggling tracepoints 40 times
# killed 7 boots of 12 on stock 7.2, 8 of 11 on stock 6.12 and wedged 2
# of 3 on stock 6.1 so; single-threaded none of 12, 12 and 8
# (tcg-textpoke.sh). The debug kernels, without jump labels, patch no
# text for a tracepoint and keep their vCPUs parallel.
# The console goes to LOG. Exit 0 when QEMU ended by itself, 1 otherwise
# (timeout, QEMU error); judging the log is report.py's job.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

accel=tcg
timeout=300 extra= kernel= log= plan= qemu_args=
while getopts k:o:p:t:a:q:s opt; do
	case $opt in
	k) kernel=$OPTARG ;;
	o) log=$OPTARG ;;
	p) plan=$OPTARG ;;
	t) timeout=$OPTARG ;;
	a) extra=$OPTARG ;;
	q) qemu_args=$OPTARG ;;
	s) accel=tcg,thread=single ;;
	*) die "usage: vm.sh -k KERNEL -o LOG -p PLAN [-t S] [-a ARGS] [-q QEMU_ARGS] [-s] [SRC=DEST...]" ;;
	esac
done
shift $((OPTIND - 1))
[ -n "$kernel" ] && [ -n "$log" ] && [ -n "$plan" ] || die "vm.sh: -k, -o and -p are required"
need_pkg qemu-system-x86 qemu-system-x86_64
need_pkg busybox-static /bin/busybox
need_pkg cpio cpio

stage=$(mktemp -d)
chmod 755 "$stage" # the VM's / must be searchable by non-root tests
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,dev,proc,sys,tmp,kwq}
cp /bin/busybox "$stage/bin/busybox"
file /bin/busybox 2>/dev/null | grep -q 'dynamically linked' &&
	die "/bin/busybox is not static: install busybox-static"
cp "$KWQ_ROOT/tools/testing/init.sh" "$stage/init"
chmod 755 "$stage/init"
cp "$plan" "$stage/kwq/plan"
for f in "$@"; do
	src=${f%%=*} dst=${f#*=}
	mkdir -p "$stage/$(dirname "$dst")"
	cp "$src" "$stage/$dst"
done
cpio_file=${log%.log}.cpio
(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$cpio_file"

# no_timer_check, as a KVM guest sets it: on a busy host the vCPU can miss
# the ticks that check_timer() waits for at boot, and the kernel then
# panics ("IO-APIC + timer doesn't work") or falls back to the 8259A,
# after which the debug 7.2 kernel took a KASAN wild-memory-access in
# handle_edge_irq(); both seen at load 12-20, not on a quiet host.
args="console=ttyS0 reboot=t panic=-1 panic_on_warn=1 oops=panic"
args+=" loglevel=7 printk.time=1 rdinit=/init no_timer_check $extra"
# A boot that never reaches init.sh (no "kwq-harness: init started" on
# the console) cannot be kwq's doing, which loads only from init: a TCG
# flake of early boot, as the stock 6.12 kernel's int3 Oops in
# enqueue_timer() while patching static keys (seen once in an ad-hoc
# VM). It is booted once more, its console kept beside the log.
#
# 30 s before the timeout a watcher reads the vCPUs through a monitor
# socket (vcpus.py: each one's RIP as a symbol, halted or running,
# interrupts on or off) into $log.vcpus, which a timeout prints: a guest
# gone quiet with every vCPU halted and interrupts on waits for a timer
# that never fires, one spinning shows where.
mon=$log.mon
sysmap=$(dirname "$kernel")/../../../System.map
watch_vcpus() {
	local s=
	trap 'kill $s 2>/dev/null; exit 0' TERM
	sleep "$1" &
	s=$!
	wait $s
	[ -S "$mon" ] && python3 "$KWQ_ROOT/tools/testing/vcpus.py" "$mon" \
		"$sysmap" >"$log.vcpus" 2>&1
}
boot() {
	rc=0
	rm -f "$mon" "$log.vcpus"
	watch_vcpus $((timeout > 60 ? timeout - 30 : timeout / 2)) &
	watcher=$!
	# shellcheck disable=SC2086 # QEMU_ARGS are several words
	timeout -k 10 "$timeout" qemu-system-x86_64 -accel "$accel" -cpu max -smp 2 -m 1536 \
		-machine microvm,acpi=off -nodefaults -no-reboot -display none \
		-serial "file:$log" -kernel "$kernel" -initrd "$cpio_file" \
		-monitor "unix:$mon,server,nowait" \
		-append "$args" $qemu_args </dev/null >"$log.qemu" 2>&1 || rc=$?
	kill "$watcher" 2>/dev/null || true
	wait "$watcher" 2>/dev/null || true
	rm -f "$mon"
}
boot
# (grep reads the file itself: grep -q at the end of a pipe would stop
# early, and under pipefail the writer's SIGPIPE reads as no match.)
if [ -f "$log" ] && ! grep -aq '^kwq-harness: init started' "$log"; then
	mv "$log" "$log.boot-failed"
	echo "vm.sh: the kernel never reached init (QEMU exit $rc); booting once more" \
		"(first console: $log.boot-failed)" >&2
	{ tr -d '\r' <"$log.boot-failed" | grep -aE 'Kernel panic|Oops|BUG:|RIP:' ||
		tr -d '\r' <"$log.boot-failed" | tail -3; } | head -3 | sed 's/^/    | /' >&2
	boot
fi
if [ $rc = 124 ] || [ $rc = 137 ]; then
	echo "error: VM timed out after ${timeout}s; last console lines ($log):" >&2
	tail -25 "$log" | sed 's/^/    | /' >&2
	if [ -s "$log.vcpus" ]; then
		echo "  its vCPUs 30 s before the timeout (vcpus.py):" >&2
		sed 's/^/    | /' "$log.vcpus" >&2
	fi
	exit 1
elif [ $rc != 0 ]; then
	echo "error: QEMU failed (exit $rc): $(tail -3 "$log.qemu")" >&2
	exit 1
fi
exit 0
