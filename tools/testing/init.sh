#!/bin/busybox sh
# /init of the kwq test VM. Runs the steps in /kwq/plan, reports every
# result as KTAP between KWQ-KTAP-BEGIN/END markers on the console (which
# report.py parses), triggers a kmemleak scan, and reboots (with -no-reboot
# and reboot=t that ends QEMU; poweroff would hang without ACPI).
# The initramfs is packed without device nodes (no root needed to build it),
# so the console comes from devtmpfs.
/bin/busybox mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
# vm.sh: a console without this line is a boot that never reached us.
echo "kwq-harness: init started"
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mkdir -p /proc /sys /tmp /run
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tmpfs tmpfs /tmp 2>/dev/null
echo 1 >/proc/sys/kernel/panic_on_oops 2>/dev/null
# The debug kernels report a task blocked over 30 s (their config's
# CONFIG_DEFAULT_HUNG_TASK_TIMEOUT). KUnit's insmod waits uninterruptibly
# for each case, and under QEMU TCG on a loaded host one case of
# kwq_stress or kwq_wheel on debug 7.2 has taken longer. 120 s still
# names a deadlocked task long before the VM's own timeout.
HUNG=/proc/sys/kernel/hung_task_timeout_secs
[ -w $HUNG ] && echo 120 >$HUNG
KMEMLEAK=/sys/kernel/debug/kmemleak
# Leaks from before the tests (boot) are not ours.
[ -w $KMEMLEAK ] && echo clear >$KMEMLEAK

STEPS=/tmp/kwq-steps
NSTEPS=0
: >$STEPS

# step_result OK|FAIL NAME [DETAIL]: one case of the VM's own "vm" suite.
step_result() {
	NSTEPS=$((NSTEPS + 1))
	if [ "$1" = OK ]; then
		echo "    ok $NSTEPS $2" >>$STEPS
	else
		echo "    not ok $NSTEPS $2" >>$STEPS
		[ -n "$3" ] && echo "    # $3" >>$STEPS
		echo "kwq-harness: step failed: $2 $3"
	fi
}

# ktap_block NAME FILE: hand a KTAP document to the host parser.
ktap_block() {
	echo "KWQ-KTAP-BEGIN $1"
	cat "$2"
	echo "KWQ-KTAP-END $1"
}

# load_module PATH [PARAM...]
load_module() {
	local m=$1 out
	shift
	if out=$(insmod "$m" "$@" 2>&1); then
		step_result OK "insmod $(basename "$m")"
	else
		step_result FAIL "insmod $(basename "$m")" "$out"
	fi
}

# unload_module NAME
unload_module() {
	local out
	if out=$(rmmod "$1" 2>&1); then
		step_result OK "rmmod $1"
	else
		step_result FAIL "rmmod $1" "$out"
	fi
}

# kunit_module PATH: load a module whose KUnit suites run at load, report
# each suite's results from debugfs, unload it.
kunit_module() {
	local m=$1 name d before n=0
	name=$(basename "$m" .ko)
	before=$(ls /sys/kernel/debug/kunit 2>/dev/null)
	load_module "$m"
	for d in /sys/kernel/debug/kunit/*; do
		[ -f "$d/results" ] || continue
		case " $(echo $before) " in *" $(basename "$d") "*) continue ;; esac
		ktap_block "kunit:$(basename "$d")" "$d/results"
		n=$((n + 1))
	done
	if [ $n = 0 ]; then
		step_result FAIL "kunit suites of $name" "no suite appeared in debugfs"
	else
		step_result OK "kunit suites of $name ($n)"
	fi
	unload_module "$(echo "$name" | tr - _)"
}

# user_test NAME CMD [ARG...]: a userspace test program that prints KTAP.
user_test() {
	local name=$1 rc t0
	shift
	t0=$(cut -d' ' -f1 /proc/uptime)
	"$@" >/tmp/ut.ktap 2>/tmp/ut.err
	rc=$?
	# Where a run's time goes (make check's stage table is per VM).
	echo "kwq-harness: user_test $name ran from ${t0}s to $(cut -d' ' -f1 /proc/uptime)s"
	ktap_block "user:$name" /tmp/ut.ktap
	if [ $rc = 0 ]; then
		step_result OK "run $name"
	else
		step_result FAIL "run $name" "exit $rc: $(head -c 300 /tmp/ut.err)"
	fi
}

# fault_attrs: let /proc/<pid>/fail-nth alone decide which allocation
# fails (the KUnit suite kwq_fault and failnth_test use it): no random
# failures, no console dumps, sleeping allocations and order-0 pages
# failable too. failslab must exist; fail_page_alloc only where the
# kernel has it (the debug kernel).
fault_attrs() {
	local d=/sys/kernel/debug
	[ -d $d/failslab ] || { echo "no $d/failslab"; return 1; }
	for a in failslab fail_page_alloc; do
		[ -d $d/$a ] || continue
		echo 0 >$d/$a/probability && echo 0 >$d/$a/verbose &&
			echo N >$d/$a/task-filter &&
			echo N >$d/$a/ignore-gfp-wait || return 1
	done
	[ -d $d/fail_page_alloc ] || return 0
	echo N >$d/fail_page_alloc/ignore-gfp-highmem &&
		echo 0 >$d/fail_page_alloc/min-order
}

# export_files DIR: hand the files under DIR to the host, which has only
# the console: a gzipped tar in base64 between
# "KWQ-EXPORT-BEGIN NAME FILES SHA256" and "KWQ-EXPORT-END NAME", NAME
# being DIR's basename, decoded by tools/testing/console_export.py (for
# tools/testing/fuzz.sh and coverage.py). Kernel messages are held back
# meanwhile so that none splits a line. Nothing for an empty or missing
# DIR (status 1); a tar that fails is a failed step (status 2).
export_files() {
	local name n level
	name=$(basename "$1")
	n=$(find "$1" -type f 2>/dev/null | wc -l)
	[ "$n" -gt 0 ] || return 1
	if ! tar -C "$1" -czf /tmp/export.tgz .; then
		step_result FAIL "export $name" "tar of $1 failed"
		return 2
	fi
	level=$(cut -f1 /proc/sys/kernel/printk)
	echo 1 >/proc/sys/kernel/printk
	echo "KWQ-EXPORT-BEGIN $name $n $(sha256sum </tmp/export.tgz | cut -d' ' -f1)"
	base64 /tmp/export.tgz
	echo "KWQ-EXPORT-END $name"
	echo "$level" >/proc/sys/kernel/printk
	rm -f /tmp/export.tgz
}

# gcov_dump: hand the gcov data of the profiled objects (kwq.ko built
# with KWQ_GCOV=1; gcov_persist keeps it after rmmod) to the host with
# export_files, as the export "gcov" (coverage.py). Debugfs reports no
# size: each file is copied with cat before tar sees it.
gcov_dump() {
	local g=/sys/kernel/debug/gcov f n=0
	rm -rf /tmp/gcov
	mkdir -p /tmp/gcov
	for f in $(find $g -name '*.gcda' 2>/dev/null); do
		mkdir -p "/tmp/gcov$(dirname "${f#"$g"}")"
		cat "$f" >"/tmp/gcov${f#"$g"}" || break
		n=$((n + 1))
	done
	if [ $n = 0 ]; then
		step_result FAIL "gcov data dumped" "no .gcda under $g (CONFIG_GCOV_KERNEL, KWQ_GCOV=1?)"
		return
	fi
	export_files /tmp/gcov && step_result OK "gcov data dumped ($n files)"
}

# expect NAME CMD...: a shell check as one step.
expect() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		step_result OK "$name"
	else
		step_result FAIL "$name" "$out"
	fi
}

echo "kwq-harness: kernel $(uname -r), plan:"
cat /kwq/plan
. /kwq/plan

# Two scans: kmemleak reports an object only once its contents have been
# stable across a scan, and only when older than 5 s.
if [ -w $KMEMLEAK ]; then
	sleep 6
	echo scan >$KMEMLEAK
	echo scan >$KMEMLEAK
	cat $KMEMLEAK >/tmp/kmemleak
	ktap_block kmemleak /tmp/kmemleak
fi

{
	echo "KTAP version 1"
	echo "1..1"
	echo "    KTAP version 1"
	echo "    # Subtest: vm"
	echo "    1..$NSTEPS"
	cat $STEPS
	if grep -q '^    not ok' $STEPS; then echo "not ok 1 vm"; else echo "ok 1 vm"; fi
} >/tmp/vm.ktap
ktap_block vm /tmp/vm.ktap
echo "KWQ-HARNESS-DONE"
sync
reboot -f
