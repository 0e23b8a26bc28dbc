#!/bin/bash
# Does multi-threaded TCG still leave stale patched text on a vCPU?
# Boots KERNEL N times (no kwq loaded) with a plan that enables and
# disables the sched and timer tracepoints 40 times, and prints one line
# a boot: ok, or what the console shows instead (an Oops and its RIP, a
# wedge the VM timed out on). vm.sh -s (single-threaded TCG, for the
# Debian kernels) exists because of what this showed with QEMU 7.2:
# Documentation/testing.rst, "Testing kwq". Re-run it when QEMU changes.
#
# usage: tcg-textpoke.sh KERNEL single|multi [N]   (N: 8)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -ge 2 ] || die "usage: tcg-textpoke.sh KERNEL single|multi [N]"
kernel=$1 mode=$2 n=${3:-8}
case $mode in
single) single=1 ;;
multi) single= ;;
*) die "tcg-textpoke.sh: single or multi, not $mode" ;;
esac
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/plan" <<'PLAN'
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
i=0
while [ $i -lt 40 ]; do
	echo 1 >/sys/kernel/tracing/events/sched/enable
	echo 1 >/sys/kernel/tracing/events/timer/enable
	sleep 0.1
	echo 0 >/sys/kernel/tracing/events/sched/enable
	echo 0 >/sys/kernel/tracing/events/timer/enable
	i=$((i + 1))
done
echo "tcg-textpoke: loop done"
PLAN
bad=0
for i in $(seq 1 "$n"); do
	log=$dir/boot-$i.log
	"$KWQ_ROOT/tools/testing/vm.sh" -k "$kernel" -o "$log" -p "$dir/plan" -t 300 \
		${single:+-s} >/dev/null 2>&1 || true
	# only the boot that reached init: vm.sh boots again one that did not
	what=$(tr -d '\r' <"$log" | grep -aE -m1 'Oops|BUG:|Kernel panic' || true)
	rip=$(tr -d '\r' <"$log" | grep -a -m1 -o 'RIP: 0010:[^ ]*' || true)
	if [ -n "$what" ]; then
		echo "boot $i: ${what#*] } ${rip#RIP: 0010:}"
	elif ! grep -aq '^tcg-textpoke: loop done' "$log"; then
		echo "boot $i: never finished (wedged or timed out)"
	else
		echo "boot $i: ok"
		continue
	fi
	bad=$((bad + 1))
done
echo "$bad of $n boots failed ($mode-threaded TCG, $(basename "$kernel"))"
