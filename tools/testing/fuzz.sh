#!/bin/bash
# make fuzz: a long run of the ioctl fuzzer (userspace/tests/fuzz_test.c)
# on the debug kernel (KASAN, lockdep, kmemleak, ...) in QEMU; any splat,
# leak or failed invariant fails it. kwq.ko is built with KWQ_KCOV=1: on
# the debug kernel (CONFIG_KCOV) the fuzzer learns from kwq's coverage.
#
# usage: fuzz.sh [-t SECONDS] [-s SEED] [-p PROCS] [-j THREADS] [-c CONFIG]
#        fuzz.sh -r FILE [-c CONFIG]
#   -c  kernel config fragment (default tools/testing/config/debug.config;
#       kcsan.config runs it under KCSAN, reports filtered to kwq)
#   -r  replay reproducer FILE (one thread, each call's result printed)
# The seed is printed (and random when not given); rerun with -s SEED.
# Reproducers the fuzzer wrote in the VM land in $KWQ_OUT/fuzz/repro-*.
# Logs in $KWQ_OUT/logs/vm-fuzz*.log.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

secs=300 seed= procs=3 threads=3 replay=
config=$KWQ_ROOT/tools/testing/config/debug.config
while getopts t:s:p:j:c:r: opt; do
	case $opt in
	t) secs=$OPTARG ;;
	s) seed=$OPTARG ;;
	p) procs=$OPTARG ;;
	j) threads=$OPTARG ;;
	c) config=$(realpath "$OPTARG") ;;
	r) replay=$(realpath "$OPTARG") || exit 1 ;;
	*) die "usage: fuzz.sh [-t SECONDS] [-s SEED] [-p PROCS] [-j THREADS] [-c CONFIG] | -r FILE" ;;
	esac
done
[ -z "$replay" ] || [ -f "$replay" ] || die "no reproducer $replay"
[ -n "$seed" ] || seed=$(od -An -N6 -tu8 /dev/urandom | tr -d ' ')
mkdir -p "$KWQ_OUT/logs"
KWQ_OUT=$(realpath "$KWQ_OUT")
name=fuzz-$(basename "$config" .config)

need_pkgs "${KWQ_PKGS_BUILD[@]}" "${KWQ_PKGS_VM[@]}" "${KWQ_PKGS_KERNEL[@]}"
kdir=$("$KWQ_ROOT/tools/testing/build-kernel.sh" "$config") || die "kernel build failed"
"$KWQ_ROOT/tools/testing/build-module.sh" "$kdir" "$KWQ_OUT/mod-$name" KWQ_KCOV=1 >/dev/null ||
	die "module build failed (log: $KWQ_OUT/mod-$name/build.log)"
make -s -C "$KWQ_ROOT/userspace" OUT="$KWQ_OUT/user" "$KWQ_OUT/user/fuzz_test" >/dev/null ||
	die "fuzz_test build failed"

files=("$KWQ_OUT/mod-$name/kwq.ko=/kwq/kwq.ko" "$KWQ_OUT/user/fuzz_test=/kwq/tests/fuzz_test")
if [ -n "$replay" ]; then
	name+=-replay
	files+=("$replay=/kwq/repro.txt")
	secs=300
fi
plan=$KWQ_OUT/plan-$name
{
	echo "load_module /kwq/kwq.ko"
	if [ -n "$replay" ]; then
		echo "user_test replay /kwq/tests/fuzz_test -r /kwq/repro.txt"
	else
		echo "user_test fuzz /kwq/tests/fuzz_test -s $seed -t $secs -p $procs -j $threads -o /tmp/kwq-repro"
		echo "export_files /tmp/kwq-repro"
	fi
	echo "unload_module kwq"
} >"$plan"
log=$KWQ_OUT/logs/vm-$name.log
if [ -n "$replay" ]; then
	say "replaying $replay ($(basename "$kdir")); log: $log"
else
	say "fuzzing ${secs}s, seed $seed, $procs procs x $threads threads ($(basename "$kdir")); log: $log"
fi
# The TSC as the guest's clocksource (tools/bench/tsc_khz.c): on a microvm
# the guest cannot calibrate it and falls back to jiffies, whose seconds
# stretch when the host is loaded (ticks arrive late): -t 900 then lasted
# well over 1500 s of wall time, and calls/s counted per stretched second.
gcc -O2 -o "$KWQ_OUT/user/tsc_khz" "$KWQ_ROOT/tools/bench/tsc_khz.c" ||
	die "tsc_khz build failed"
tsc_khz=$("$KWQ_OUT/user/tsc_khz") || die "cannot measure the host's TSC"
"$KWQ_ROOT/tools/testing/vm.sh" -k "$kdir/arch/x86/boot/bzImage" -o "$log" -p "$plan" \
	-a "tsc_early_khz=$tsc_khz tsc=reliable" -t $((secs + 900)) "${files[@]}"
filter=
case $config in *kcsan*) filter=--kcsan-only-kwq ;; esac
label="$name (seed $seed)"
[ -z "$replay" ] || label="$name $replay"
"$KWQ_ROOT/tools/testing/report.py" $filter --label "$label" "$log"
rc=$?

if [ -n "$replay" ]; then
	# each replayed call and its result (fuzz_test prints them as KTAP comments)
	tr -d '\r' <"$log" | sed -n '/^KWQ-KTAP-BEGIN user:replay/,/^KWQ-KTAP-END/p' |
		grep -a '^    # ' | sed 's/^    # /  /'
	exit $rc
fi

# Reproducers: the export kwq-repro on the console (init.sh export_files),
# decoded and checked by console_export.py.
out=$KWQ_OUT/fuzz
mkdir -p "$out"
if repros=$("$KWQ_ROOT/tools/testing/console_export.py" "$log" kwq-repro "$out" 2>&1); then
	while read -r f size; do
		[ -n "$f" ] && say "reproducer $out/$f ($size bytes): make fuzz REPLAY=$out/$f"
	done <<<"$repros"
else
	say "reproducers lost: $repros"
	rc=1
fi

grep -a -E '# (seed|calls|kcov|VM CPU|thread time) ' "$log" | tr -d '\r' | sed 's/^.*# /  /'
calls=$(grep -a -oE '# calls [0-9]+ in' "$log" | grep -oE '[0-9]+' | tail -1)
rate=$(grep -a -oE '[0-9]+ calls/s' "$log" | grep -oE '[0-9]+' | tail -1)
if [ "$secs" = 900 ]; then
	met=missed
	[ "${calls:-0}" -ge 1000000 ] && met=met
	echo "figure fuzz_calls_900s ${calls:-0} >=1000000 $met"
else
	met=missed
	[ "${rate:-0}" -ge 1111 ] && met=met
	echo "figure fuzz_calls_per_s ${rate:-0} >=1111 $met"
fi
exit $rc
