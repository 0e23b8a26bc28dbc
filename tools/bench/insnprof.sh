#!/bin/bash
# Guest instructions per operation, by symbol: where a kwq call's
# instructions go inside the benchmark VM (Debian's stock 6.12 kernel,
# production config, QEMU TCG, kwq.ko built from this tree; lib.sh).
# Exact counts, not samples: a TCG plugin (insnprof.c, built here with the
# host's gcc) adds up the instructions of every translation block run,
# kernel and user space alike. CMD runs twice, in two boots, with N1 and
# then N2 operations (each "{N}" in CMD replaced); insnprof.py names the
# addresses with each boot's own /proc/kallsyms (kwq.ko included) and the
# static user binaries' symbols, and divides the difference by N2 - N1,
# so the boot and the workload's setup cancel out. The host counts the
# core's instructions (make bench-host); this counts what only the VM
# has: system call entry, the ioctl layer, LSM hooks, slab, wake-ups,
# the Go runtime. Documentation/benchmarks.rst, "Counting guest
# instructions", has an example.
#
# Setup that grows with N (kwq-gobench's keys) would count as part of an
# operation: KWQ_INSNPROF_BASE, a command doing only that setup ({N} as
# in CMD), runs in two more boots, and its difference is taken off.
#
# usage: insnprof.sh N1 N2 CMD...
#   e.g. KWQ_INSNPROF_BASE="/kwq/kwq-gobench -only setup -items {N} -after 1" \
#        insnprof.sh 20000 40000 /kwq/kwq-gobench -only kwq_worker/pipeline -items {N} -after 1
#        insnprof.sh 50000 100000 /kwq/kwq_ubench phases kwq_single {N} 1
# In the VM: /kwq/kwq.ko (loaded), /kwq/kwq_bench.ko, /kwq/kwq_ubench,
# /kwq/kwq-gobench. Writes build/insnprof/report.txt (and the two boots'
# consoles and counts beside it). Knobs: KWQ_INSNPROF_OUT
# (build/insnprof), KWQ_INSNPROF_TOP (40 symbols), KWQ_INSNPROF_SMP (2
# vCPUs; 1 makes the counts exact), KWQ_BENCH_TIMEOUT (1800 s a boot).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -ge 3 ] || die "usage: insnprof.sh N1 N2 CMD... (CMD's {N} is the count)"
n1=$1 n2=$2
shift 2
if ! [[ $n1 =~ ^[0-9]+$ && $n2 =~ ^[0-9]+$ ]] || [ "$n2" -le "$n1" ]; then
	die "N1 and N2 must be numbers, N2 larger"
fi
out=${KWQ_INSNPROF_OUT:-$KWQ_OUT/insnprof}
top=${KWQ_INSNPROF_TOP:-40}
smp=${KWQ_INSNPROF_SMP:-2}
timeout=${KWQ_BENCH_TIMEOUT:-1800}
mkdir -p "$out"
out=$(realpath "$out")

bench_build "$out"
say "building the TCG plugin (insnprof.c)"
gcc -O2 -Wall -Wextra -Werror -shared -fPIC -pthread -o "$out/insnprof.so" \
	"$KWQ_ROOT/tools/bench/insnprof.c"

# boot LABEL N CMD...: one boot running CMD with N operations, counted.
boot() {
	local label=$1 n=$2 cmd
	shift 2
	cmd=${*//\{N\}/$n}
	cat >"$out/plan-$label" <<EOF2
load_module /kwq/kwq.ko
echo "INSNPROF-RUN $label: $cmd"
$cmd || echo "INSNPROF-ERROR \$?"
echo 0 >/proc/sys/kernel/kptr_restrict
echo INSNPROF-KALLSYMS-BEGIN
grep -i ' t ' /proc/kallsyms | gzip -c | base64
echo INSNPROF-KALLSYMS-END
EOF2
	say "booting: $cmd (TCG, $smp vCPUs, the plugin counting); console $out/vm-$label.log"
	rm -f "$out/counts-$label"
	"$KWQ_ROOT/tools/testing/vm.sh" -k "$BENCH_IMAGE" -o "$out/vm-$label.log" \
		-p "$out/plan-$label" -t "$timeout" -a "$BENCH_VM_ARGS" \
		-q "-smp $smp -plugin $out/insnprof.so,arg=out=$out/counts-$label" \
		"$out/mod/kwq.ko=/kwq/kwq.ko" \
		"$out/benchmod/tools/bench/kwq_bench.ko=/kwq/kwq_bench.ko" \
		"$out/user/kwq_ubench=/kwq/kwq_ubench" \
		"$out/user/kwq-gobench=/kwq/kwq-gobench" >"$out/vm-$label.out" 2>&1 ||
		die "the VM failed (console: $out/vm-$label.log)"
	if tr -d '\r' <"$out/vm-$label.log" | grep -q '^INSNPROF-ERROR'; then
		die "the command failed in the VM (console: $out/vm-$label.log)"
	fi
	[ -s "$out/counts-$label" ] || die "the plugin wrote no counts ($out/counts-$label)"
}

boot cmd-1 "$n1" "$@"
boot cmd-2 "$n2" "$@"
args=(--plus "$out/vm-cmd-2.log" "$out/counts-cmd-2"
	--minus "$out/vm-cmd-1.log" "$out/counts-cmd-1")
if [ -n "${KWQ_INSNPROF_BASE:-}" ]; then
	# shellcheck disable=SC2086 # a command line
	boot base-1 "$n1" $KWQ_INSNPROF_BASE
	# shellcheck disable=SC2086
	boot base-2 "$n2" $KWQ_INSNPROF_BASE
	args+=(--plus "$out/vm-base-1.log" "$out/counts-base-1"
		--minus "$out/vm-base-2.log" "$out/counts-base-2")
fi
# The user binary CMD runs (both are static at the same address).
for b in kwq-gobench kwq_ubench; do
	[[ " $* " == *"/$b "* ]] && args+=(--user "$out/user/$b")
done
python3 "$KWQ_ROOT/tools/bench/insnprof.py" --top "$top" --ops $((n2 - n1)) \
	--what "$* (N = $n1, $n2${KWQ_INSNPROF_BASE:+; less $KWQ_INSNPROF_BASE})" \
	"${args[@]}" >"$out/report.txt"
cat "$out/report.txt"
say "$out/report.txt"
