#!/bin/bash
# A developer's loop: build kwq.ko and the userspace tests, boot one debug
# (or stock) kernel in QEMU and run only the suites named, judged as make
# check judges them (report.py: KTAP and every splat).
#
# usage: try.sh [-v 6.12|7.2|kcsan|stock-6.12|latency] [-c CPUS] [-k] [-t TIMEOUT] [-o NAME] [-P BUG] [-q QEMU_ARGS] [SUITE[:ARGS]...]
#   -v  the kernel (default: the debug 6.12 test kernel; kcsan: make
#       check-kcsan's KCSAN 6.12 kernel; latency: the latency kernel
#       walks_test runs on, one vCPU, its clock counting instructions:
#       lib.sh, KWQ_LATENCY_VM_QEMU)
#   -c  vCPUs of the VM (default 2, as make check; more interleave more:
#       TCG runs a host thread per vCPU, on however many host cores)
#   -k  also load kwq_test.ko (every KUnit suite; debug kernels only)
#   -o  a name for this run's build directory and log (default: try),
#       so that several runs can go on side by side
#   -P  load a deliberately broken kwq.ko: tools/testing/plant/BUG.patch
#       applied (torture_test must catch it)
#   -q  more QEMU arguments, as one word: a monitor to read a wedged
#       guest's vCPUs, say (-q '-monitor unix:/tmp/mon,server,nowait';
#       then 'info registers -a' through socat)
#   SUITE  a userspace test (userspace/tests/SUITE_test[.c|.sh]);
#          SUITE:ARGS passes ARGS (split on commas) to it
# Log: $KWQ_OUT/logs/vm-NAME.log. Exit 0 when every case passed.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

ver=6.12 kunit=0 timeout=1800 name=try append='' qemu_args='' plant='' cpus=''
usage="usage: try.sh [-v 6.12|7.2|kcsan|stock-6.12|latency] [-c CPUS] [-k] [-t S] [-o NAME] [-P BUG] [-q QEMU_ARGS] [SUITE[:ARGS]...]"
more_qemu=''
while getopts v:c:kt:o:P:q: opt; do
	case $opt in
	v) ver=$OPTARG ;;
	c) cpus=$OPTARG ;;
	k) kunit=1 ;;
	t) timeout=$OPTARG ;;
	o) name=$OPTARG ;;
	P) plant=$OPTARG ;;
	q) more_qemu=$OPTARG ;;
	*) die "$usage" ;;
	esac
done
[ -z "$cpus" ] || [[ "$cpus" =~ ^[1-9][0-9]?$ ]] || die "-c takes 1 to 99 vCPUs, not '$cpus'"
shift $((OPTIND - 1))
mkdir -p "$KWQ_OUT/logs"
KWQ_OUT=$(realpath "$KWQ_OUT")
export KWQ_OUT
need_pkgs "${KWQ_PKGS_BUILD[@]}" "${KWQ_PKGS_VM[@]}" "${KWQ_PKGS_KERNEL[@]}"

case $ver in
stock-6.12)
	kd=$("$KWQ_ROOT/tools/testing/stock-kernel.sh" 6.12) || die "no stock 6.12 kernel"
	kdir=$(echo "$kd" | sed -n 1p)
	image=$(echo "$kd" | sed -n 2p)
	;;
6.12 | 7.2)
	kdir=$("$KWQ_ROOT/tools/testing/build-kernel.sh" \
		"$KWQ_ROOT/tools/testing/config/debug.config" "$ver") || die "kernel build failed"
	image=$kdir/arch/x86/boot/bzImage
	;;
kcsan)
	kdir=$("$KWQ_ROOT/tools/testing/build-kernel.sh" \
		"$KWQ_ROOT/tools/testing/config/kcsan.config" 6.12) || die "kernel build failed"
	image=$kdir/arch/x86/boot/bzImage
	append=$KWQ_KCSAN_VM_APPEND
	;;
latency)
	kdir=$("$KWQ_ROOT/tools/testing/build-kernel.sh" \
		"$KWQ_ROOT/tools/testing/config/latency.config" 6.12) || die "kernel build failed"
	image=$kdir/arch/x86/boot/bzImage
	append=$KWQ_LATENCY_VM_APPEND qemu_args=$KWQ_LATENCY_VM_QEMU
	;;
*) die "unknown kernel $ver" ;;
esac
# After vm.sh's own -smp 2: QEMU takes the last.
[ -z "$cpus" ] || qemu_args+="${qemu_args:+ }-smp $cpus"
[ -z "$more_qemu" ] || qemu_args+="${qemu_args:+ }$more_qemu"
m=$KWQ_OUT/mod-$name
KWQ_PLANT=$plant "$KWQ_ROOT/tools/testing/build-module.sh" "$kdir" "$m" >/dev/null ||
	die "module build failed (log: $m/build.log)"
u=$KWQ_OUT/user-$name
make -s -C "$KWQ_ROOT/userspace" tests OUT="$u" >/dev/null || die "userspace build failed"

files=("$m/kwq.ko=/kwq/kwq.ko" "$u/ktap.sh=/kwq/tests/ktap.sh")
[ $kunit = 1 ] && files+=("$m/kwq_test.ko=/kwq/kwq_test.ko")
# namespace_test loads the example consumer (its published queue).
[ -f "$m/kwq_example.ko" ] && files+=("$m/kwq_example.ko=/kwq/kwq_example.ko")
# torture_test loads the kernel threads' module.
[ -f "$m/kwq_torture.ko" ] && files+=("$m/kwq_torture.ko=/kwq/kwq_torture.ko")
for t in "$u"/bin/*; do
	[ -f "$t" ] && files+=("$t=/usr/bin/$(basename "$t")")
done
plan=$KWQ_OUT/plan-$name
{
	echo "load_module /kwq/kwq.ko"
	[ "${ver#stock}" = "$ver" ] && [ "$ver" != latency ] && echo 'expect "fault attributes: fail-nth decides" fault_attrs'
	[ $kunit = 1 ] && echo "kunit_module /kwq/kwq_test.ko"
	for s in "$@"; do
		suite=${s%%:*} args=
		[ "$suite" = "$s" ] || args=$(echo "${s#*:}" | tr , ' ')
		[ -x "$u/${suite}_test" ] || die "no test program $u/${suite}_test"
		files+=("$u/${suite}_test=/kwq/tests/${suite}_test")
		echo "user_test $suite /kwq/tests/${suite}_test $args"
	done
	echo "unload_module kwq"
} >"$plan"
# a Debian kernel patches its text for jump labels: vm.sh -s says why
single=
[ "${ver#stock}" = "$ver" ] || single=1
log=$KWQ_OUT/logs/vm-$name.log
say "booting $(basename "$kdir") for: $* $([ $kunit = 1 ] && echo KUnit); log: $log"
"$KWQ_ROOT/tools/testing/vm.sh" -k "$image" -o "$log" -p "$plan" -t "$timeout" \
	${append:+-a "$append"} ${qemu_args:+-q "$qemu_args"} \
	${single:+-s} "${files[@]}"
# As make check-kcsan: a KCSAN report counts when its stacks name kwq.
report_args=()
[ "$ver" = kcsan ] && report_args+=(--kcsan-only-kwq)
"$KWQ_ROOT/tools/testing/report.py" --label "$name: $ver" "${report_args[@]}" "$log"
