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
		elif ! grep -qxF "$w" "$out/$name.failures"; then
			echo "  FAIL self-test $name: expected failure '$w', got: $(paste -sd';' "$out/$name.failures")"
			echo "0 1 0" >>"$counts"
		elif [ -n "$forbid" ] && grep -qxF "$forbid" "$out/$name.failures"; then
			echo "  FAIL self-test $name: '$forbid' was wrongly reported as failed"
			echo "0 1 0" >>"$counts"
		else
			echo "  PASS self-test $name: harness failed the run with '$w'"
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
exit 0
