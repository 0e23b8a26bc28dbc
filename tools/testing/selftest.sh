#!/bin/bash
# The gate must be able to fail: boot the debug kernel with deliberately
# broken modules and assert that the harness reports each breakage, for the
# right reason.
#
# usage: selftest.sh KDIR OUTDIR COUNTS
set -uo pipefail
. "$(dirname "$0")/lib.sh"

kdir=${1:?} out=${2:?} counts=${3:?}
mkdir -p "$out"
out=$(realpath "$out")

# The gate's own test reads nothing of kwq: the harness (these scripts),
# the broken modules, the debug kernel, QEMU and the compiler. Once it
# passed with all of them byte for byte the same, it would pass again;
# its cases are then replayed from $KWQ_CACHE/selftest (their lines say
# so) instead of three more boots. Any change to one of them runs it.
# KWQ_NO_MEMO=1 runs it anyway.
t=$KWQ_ROOT/tools/testing
key=$({ cat "$t"/selftest.sh "$t"/vm.sh "$t"/init.sh "$t"/lib.sh "$t"/*.py \
	"$t"/selftest/* "$kdir/arch/x86/boot/bzImage" "$kdir/.config" "$kdir/Module.symvers" &&
	qemu-system-x86_64 --version && gcc --version; } | sha256sum) || key=
memo=$KWQ_CACHE/selftest/${key%% *}
if [ -n "$key" ] && memo_hit "$memo" && [ -s "$memo" ]; then
	when=$(date -r "$memo" '+%F %R')
	while IFS= read -r line; do
		echo "$line (these inputs passed it $when)"
		echo "1 0 0" >>"$counts"
	done <"$memo"
	exit 0
fi
passes=() failed=0
rm -rf "$out/src"
cp -r "$KWQ_ROOT/tools/testing/selftest" "$out/src"
if ! make -C "$kdir" M="$out/src" modules >"$out/build.log" 2>&1; then
	tail -20 "$out/build.log"
	echo "0 1 0" >>"$counts"
	echo "  FAIL self-test modules build (log: $out/build.log)"
	exit 1
fi

# expect_failure NAME PLAN TIMEOUT EXPECTED-FAILURE-LINES [FORBIDDEN-LINE]
# One VM; each line of EXPECTED-FAILURE-LINES (one detector each) must be
# among the failures the harness reports, and is one case.
expect_failure() {
	local name=$1 plan=$2 timeout=$3 want=$4 forbid=${5:-} log w
	log=$out/vm-$name.log
	printf '%s\n' "$plan" >"$out/plan-$name"
	say "self-test $name: booting (console log: $log)"
	"$KWQ_ROOT/tools/testing/vm.sh" -k "$kdir/arch/x86/boot/bzImage" -o "$log" \
		-p "$out/plan-$name" -t "$timeout" \
		"$out"/src/kwq_broken_kunit.ko=/kwq/kwq_broken_kunit.ko \
		"$out"/src/kwq_broken_warn.ko=/kwq/kwq_broken_warn.ko \
		"$out"/src/kwq_broken_leak.ko=/kwq/kwq_broken_leak.ko 2>"$out/vm-$name.err"
	"$KWQ_ROOT/tools/testing/report.py" --failures "$out/$name.failures" \
		"$log" >"$out/$name.report"
	passed=$?
	while IFS= read -r w; do
		if [ $passed = 0 ]; then
			echo "  FAIL self-test $name: the harness passed a broken run ($log)"
			echo "0 1 0" >>"$counts"
			failed=1
		elif ! grep -qxF "$w" "$out/$name.failures"; then
			echo "  FAIL self-test $name: expected failure '$w', got: $(paste -sd';' "$out/$name.failures")"
			echo "0 1 0" >>"$counts"
			failed=1
		elif [ -n "$forbid" ] && grep -qxF "$forbid" "$out/$name.failures"; then
			echo "  FAIL self-test $name: '$forbid' was wrongly reported as failed"
			echo "0 1 0" >>"$counts"
			failed=1
		else
			passes+=("  PASS self-test $name: harness failed the run with '$w'")
			echo "${passes[-1]}"
			echo "1 0 0" >>"$counts"
		fi
	done <<<"$want"
}

# Three VMs for the four detectors. A failed KUnit case and a leak at
# unload (kmemleak's scan at the end of a run) share a VM that runs to
# its end; a WARN panics its VM (panic_on_warn) and a hang ends in the
# timeout, so each has its own.
expect_failure kunit-case+leak "kunit_module /kwq/kwq_broken_kunit.ko
load_module /kwq/kwq_broken_leak.ko
unload_module kwq_broken_leak" 300 "case kwq_broken.kwq_broken_fails
splat kmemleak" "case kwq_broken.kwq_broken_passes"
expect_failure warn "load_module /kwq/kwq_broken_warn.ko" 300 "splat WARN"
# A hung test: the VM timeout must end the run and report it. The debug
# kernel boots in about 10 s; a slower boot ends the same way.
expect_failure hang "sleep 100000" 30 "missing harness-done"
if [ $failed = 0 ] && [ -n "$key" ]; then
	mkdir -p "${memo%/*}" && printf '%s\n' "${passes[@]}" >"$memo"
fi
exit 0
