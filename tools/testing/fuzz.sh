#!/bin/bash
# make fuzz: a long run of the ioctl fuzzer (userspace/tests/fuzz_test.c)
# on the debug kernel (KASAN, lockdep, kmemleak, ...) in QEMU; any splat,
# leak or failed invariant fails it.
#
# usage: fuzz.sh [-t SECONDS] [-s SEED] [-p PROCS] [-j THREADS] [-c CONFIG]
#   -c  kernel config fragment (default tools/testing/config/debug.config;
#       kcsan.config runs it under KCSAN, reports filtered to kwq)
# The seed is printed (and random when not given); rerun with -s SEED.
# Logs in $KWQ_OUT/logs/vm-fuzz.log.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

secs=300 seed= procs=3 threads=3
config=$KWQ_ROOT/tools/testing/config/debug.config
while getopts t:s:p:j:c: opt; do
	case $opt in
	t) secs=$OPTARG ;;
	s) seed=$OPTARG ;;
	p) procs=$OPTARG ;;
	j) threads=$OPTARG ;;
	c) config=$(realpath "$OPTARG") ;;
	*) die "usage: fuzz.sh [-t SECONDS] [-s SEED] [-p PROCS] [-j THREADS] [-c CONFIG]" ;;
	esac
done
[ -n "$seed" ] || seed=$(od -An -N6 -tu8 /dev/urandom | tr -d ' ')
mkdir -p "$KWQ_OUT/logs"
KWQ_OUT=$(realpath "$KWQ_OUT")
name=fuzz-$(basename "$config" .config)

need_pkgs "${KWQ_PKGS_BUILD[@]}" "${KWQ_PKGS_VM[@]}" "${KWQ_PKGS_KERNEL[@]}"
kdir=$("$KWQ_ROOT/tools/testing/build-kernel.sh" "$config") || die "kernel build failed"
"$KWQ_ROOT/tools/testing/build-module.sh" "$kdir" "$KWQ_OUT/mod-$name" >/dev/null ||
	die "module build failed (log: $KWQ_OUT/mod-$name/build.log)"
make -s -C "$KWQ_ROOT/userspace" OUT="$KWQ_OUT/user" "$KWQ_OUT/user/fuzz_test" >/dev/null ||
	die "fuzz_test build failed"

plan=$KWQ_OUT/plan-$name
{
	echo "load_module /kwq/kwq.ko"
	echo "user_test fuzz /kwq/tests/fuzz_test -s $seed -t $secs -p $procs -j $threads"
	echo "unload_module kwq"
} >"$plan"
log=$KWQ_OUT/logs/vm-$name.log
say "fuzzing ${secs}s, seed $seed, $procs procs x $threads threads ($(basename "$kdir")); log: $log"
"$KWQ_ROOT/tools/testing/vm.sh" -k "$kdir/arch/x86/boot/bzImage" -o "$log" -p "$plan" \
	-t $((secs + 400)) "$KWQ_OUT/mod-$name/kwq.ko=/kwq/kwq.ko" \
	"$KWQ_OUT/user/fuzz_test=/kwq/tests/fuzz_test"
filter=
case $config in *kcsan*) filter=--kcsan-only-kwq ;; esac
"$KWQ_ROOT/tools/testing/report.py" $filter --label "$name (seed $seed)" "$log"
rc=$?
grep -a -E '# (seed|calls) ' "$log" | sed 's/^.*# /  /'
exit $rc
