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

# expect_failure NAME PLAN TIMEOUT EXPECTED-FAILURE-LINE [FORBIDDEN-LINE]
expect_failure() {
	local name=$1 plan=$2 timeout=$3 want=$4 forbid=${5:-} log
	log=$out/vm-$name.log
	printf '%s\n' "$plan" >"$out/plan-$name"
	say "self-test $name: booting (console log: $log)"
	"$KWQ_ROOT/tools/testing/vm.sh" -k "$kdir/arch/x86/boot/bzImage" -o "$log" \
		-p "$out/plan-$name" -t "$timeout" \
		"$out"/src/kwq_broken_kunit.ko=/kwq/kwq_broken_kunit.ko \
		"$out"/src/kwq_broken_warn.ko=/kwq/kwq_broken_warn.ko \
		"$out"/src/kwq_broken_leak.ko=/kwq/kwq_broken_leak.ko 2>"$out/vm-$name.err"
	if "$KWQ_ROOT/tools/testing/report.py" --failures "$out/$name.failures" \
		"$log" >"$out/$name.report"; then
		echo "  FAIL self-test $name: the harness passed a broken run ($log)"
		echo "0 1 0" >>"$counts"
	elif ! grep -qxF "$want" "$out/$name.failures"; then
		echo "  FAIL self-test $name: expected failure '$want', got: $(paste -sd';' "$out/$name.failures")"
		echo "0 1 0" >>"$counts"
	elif [ -n "$forbid" ] && grep -qxF "$forbid" "$out/$name.failures"; then
		echo "  FAIL self-test $name: '$forbid' was wrongly reported as failed"
		echo "0 1 0" >>"$counts"
	else
		echo "  PASS self-test $name: harness failed the run with '$want'"
		echo "1 0 0" >>"$counts"
	fi
}

expect_failure kunit-case "kunit_module /kwq/kwq_broken_kunit.ko" 300 \
	"case kwq_broken.kwq_broken_fails" "case kwq_broken.kwq_broken_passes"
expect_failure warn "load_module /kwq/kwq_broken_warn.ko" 300 "splat WARN"
expect_failure leak "load_module /kwq/kwq_broken_leak.ko
unload_module kwq_broken_leak" 300 "splat kmemleak"
# A hung test: the VM timeout must end the run and report it.
expect_failure hang "sleep 100000" 60 "missing harness-done"
exit 0
