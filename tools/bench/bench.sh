#!/bin/bash
# make bench: kwq against its peers (the bare workqueue, a workqueue +
# rhashtable keyed peer, POSIX mqueue, delayed_work), side by side in one
# VM run of Debian's stock 6.12 kernel (production config) with 2 vCPUs
# under QEMU TCG. Prints one table (median and spread per figure, ratios
# against the peer of the same run) and ends with one line per target,
# "target NAME MEASURED GOAL met|missed"; writes, in $KWQ_BENCH_OUT
# (default build/bench):
#   results.csv   every measurement (one line per suite/impl/op/size/rep)
#   summary.csv   medians, spreads and ratios
#   table.txt     the table printed at the end; table.rst the same for
#                 Documentation/benchmarks.rst
#   targets.txt   the target lines
#   scaling.png   the scaling runs (gnuplot)
#   ratios.png    every kwq/peer ratio as a bar with its min-max and target
#   vm.log        the VM console
#   host.log      client-go on the host (native), beside the VM's figures
# Knobs (environment): KWQ_BENCH_REPS (5), KWQ_BENCH_ITEMS (kernel
# throughput items per run), KWQ_BENCH_UITEMS (userspace items per run),
# KWQ_BENCH_SCALE_MAX (1000000), KWQ_BENCH_TIMER_ITEMS,
# KWQ_BENCH_MEM_ITEMS, KWQ_BENCH_GO_ITEMS (200000: Go pipeline keys),
# KWQ_BENCH_GO_AFTER (1000000: Go AddAfter calls), KWQ_BENCH_SUITES
# (subset of "throughput hotkey redundant user scaling timer memory go"),
# KWQ_BENCH_RED_ITEMS (1000000: adds of the redundant suite),
# KWQ_BENCH_UIMPLS (the user suite's kwq shapes: a subset of "kwq_single
# kwq_batch kwq_ring kwq_ring_batch"; mqueue always runs), KWQ_BENCH_KARGS (kwq_bench.ko parameters,
# e.g. diag=1), KWQ_BENCH_INSNPROF=1 (also count guest instructions per
# key through the rings: guest_instr_ring_add_get_done), KWQ_BENCH_ARGS (kernel command line), KWQ_BENCH_UPDATE_DOC=1 (rewrite the table in
# Documentation/benchmarks.rst).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out=${KWQ_BENCH_OUT:-$KWQ_OUT/bench}
reps=${KWQ_BENCH_REPS:-5}
items=${KWQ_BENCH_ITEMS:-200000}
hot_items=${KWQ_BENCH_HOT_ITEMS:-$items}
red_items=${KWQ_BENCH_RED_ITEMS:-1000000}
uitems=${KWQ_BENCH_UITEMS:-50000}
ubitems=${KWQ_BENCH_UBITEMS:-$((uitems * 5))}
scale_max=${KWQ_BENCH_SCALE_MAX:-1000000}
timer_items=${KWQ_BENCH_TIMER_ITEMS:-5000}
mem_items=${KWQ_BENCH_MEM_ITEMS:-100000}
go_items=${KWQ_BENCH_GO_ITEMS:-200000}
go_after=${KWQ_BENCH_GO_AFTER:-1000000}
timeout=${KWQ_BENCH_TIMEOUT:-1800}
suites=" ${KWQ_BENCH_SUITES:-throughput hotkey redundant user scaling timer memory go} "
uimpls=${KWQ_BENCH_UIMPLS:-}
kargs=${KWQ_BENCH_KARGS:-}	# extra kwq_bench.ko parameters, e.g. diag=1
start=$(date +%s)

need_pkgs "${KWQ_PKGS_BUILD[@]}" "${KWQ_PKGS_VM[@]}" "${KWQ_PKGS_STOCK612[@]}" \
	gnuplot-nox:gnuplot

mkdir -p "$out"
out=$(realpath "$out")
rm -f "$out"/vm.log "$out"/host.log "$out"/insn.log "$out"/*.csv "$out"/table.* "$out"/scaling.* \
	"$out"/ratios.* "$out"/targets.txt

bench_build "$out"

# The VM plan, sourced by tools/testing/init.sh. Each repetition runs
# every suite; results are RESULT lines on the console.
cat >"$out/plan" <<EOF
expect "insmod kwq.ko" insmod /kwq/kwq.ko
mkdir -p /dev/mqueue && mount -t mqueue none /dev/mqueue
echo "BENCH-INFO nproc=\$(nproc) kernel=\$(uname -r)"
bench_k() {
	if ! insmod /kwq/kwq_bench.ko "\$@"; then
		echo "BENCH-ERROR insmod kwq_bench \$*"
	fi
	rmmod kwq_bench
}
bench_u() {
	/kwq/kwq_ubench "\$@" || echo "BENCH-ERROR kwq_ubench \$*"
}
r=1
while [ \$r -le $reps ]; do
	echo "BENCH-REP \$r"
	case "$suites" in *" throughput "*) bench_k suite=throughput rep=\$r items=$items $kargs ;; esac
	case "$suites" in *" hotkey "*) bench_k suite=hotkey rep=\$r items=$hot_items $kargs ;; esac
	case "$suites" in *" redundant "*) bench_k suite=redundant rep=\$r items=$red_items ;; esac
	# Rotate the order of the userspace runs from one repetition to the next.
	case \$((r % 3)) in
	0) order="kwq_single kwq_batch kwq_ring kwq_ring_batch mqueue" ;;
	1) order="mqueue kwq_single kwq_ring kwq_batch kwq_ring_batch" ;;
	2) order="kwq_batch kwq_ring_batch mqueue kwq_ring kwq_single" ;;
	esac
	case "$suites" in *" user "*) ;; *) order= ;; esac
	# KWQ_BENCH_UIMPLS: only these userspace shapes (mqueue, their peer,
	# always runs).
	case "$uimpls" in ?*) order="mqueue $uimpls" ;; esac
	for impl in \$order; do
		case \$impl in
		kwq_batch|kwq_ring_batch) bench_u throughput \$impl $ubitems \$r ;;
		*) bench_u throughput \$impl $uitems \$r ;;
		esac
	done
	case "$suites" in *" user "*)
		for impl in \$order; do
			bench_u phases \$impl $uitems \$r
		done ;;
	esac
	case "$suites" in *" scaling "*) bench_k suite=scaling rep=\$r scale_max=$scale_max ;; esac
	case "$suites" in *" timer "*) bench_k suite=timer rep=\$r timer_items=$timer_items ;; esac
	case "$suites" in *" memory "*) bench_u memory $mem_items \$r ;; esac
	case "$suites" in *" go "*)
		/kwq/kwq-gobench -rep \$r -items $go_items -after $go_after ||
			echo "BENCH-ERROR kwq-gobench"
		# The Go package's calls alone, beside kwq_ubench's phases.
		/kwq/kwq-gobench -phases -rep \$r -items $uitems ||
			echo "BENCH-ERROR kwq-gobench -phases"
		# 50 idle workers' OS threads, in a process of their own.
		/kwq/kwq-gobench -idle -rep \$r ||
			echo "BENCH-ERROR kwq-gobench -idle" ;;
	esac
	r=\$((r + 1))
done
expect "rmmod kwq" rmmod kwq
echo "BENCH-END"
EOF

# Other jobs on the host's cores skew TCG timings: the report shows the
# load average when the VM starts and when it has ended.
load_start=$(cut -d' ' -f1 /proc/loadavg)
say "booting stock $(basename "$BENCH_IMAGE") (2 vCPUs, TCG): $reps repetitions, console $out/vm.log"
vm_rc=0
"$KWQ_ROOT/tools/testing/vm.sh" -k "$BENCH_IMAGE" -o "$out/vm.log" -p "$out/plan" \
	-t "$timeout" -a "$BENCH_VM_ARGS" \
	"$out/mod/kwq.ko=/kwq/kwq.ko" \
	"$out/benchmod/tools/bench/kwq_bench.ko=/kwq/kwq_bench.ko" \
	"$out/user/kwq_ubench=/kwq/kwq_ubench" \
	"$out/user/kwq-gobench=/kwq/kwq-gobench" || vm_rc=$?

# client-go natively on the host: what TCG's skew (Go code ~15x slower,
# system calls ~3.5x) does to the client-go figures of the VM.
if [[ "$suites" == *" go "* ]]; then
	say "client-go on the host (native), $reps repetitions"
	for ((r = 1; r <= reps; r++)); do
		"$out/user/kwq-gobench" -host -rep "$r" -items "$go_items" \
			-after "$go_after" >>"$out/host.log" ||
			echo "BENCH-ERROR kwq-gobench -host" >>"$out/host.log"
	done
fi

# Guest instructions per key through the rings (add + get + done),
# counted exactly by insnprof.sh's TCG plugin in two more boots.
if [ "${KWQ_BENCH_INSNPROF:-}" = 1 ]; then
	say "guest instructions per key, rings (insnprof.sh, two boots)"
	KWQ_INSNPROF_OUT="$out/insnprof" "$KWQ_ROOT/tools/bench/insnprof.sh" \
		20000 40000 /kwq/kwq_ubench phases kwq_ring '{N}' 1 >"$out/insnprof.log" 2>&1 ||
		die "insnprof.sh failed (log: $out/insnprof.log)"
	insn=$(sed -n 's/^guest instructions per operation: \([0-9.]*\).*/\1/p' \
		"$out/insnprof/report.txt")
	echo "RESULT suite=insn impl=kwq_ring rep=1 instr=$insn" >"$out/insn.log"
fi

machine="host: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
machine+=" ($(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo));"
machine+=" guest: Debian $(basename "$BENCH_IMAGE" | sed 's/^vmlinuz-//'),"
machine+=" QEMU $(qemu-system-x86_64 --version | sed -n '1s/.*version \([^ ]*\).*/\1/p') TCG, 2 vCPUs, 1.5 GiB"
machine+="; host load average $load_start at the start, $(cut -d' ' -f1 /proc/loadavg) at the end"
logs=("$out/vm.log")
[ -f "$out/host.log" ] && logs+=("$out/host.log")
[ -f "$out/insn.log" ] && logs+=("$out/insn.log")
python3 "$KWQ_ROOT/tools/bench/report.py" --out "$out" --machine "$machine" \
	--reps "$reps" "${logs[@]}"
if grep -qE '^BENCH-ERROR|RESULT .*(error=|errors=[1-9])' "$out/vm.log" "$out/host.log" 2>/dev/null; then
	grep -hE '^BENCH-ERROR|RESULT .*(error=|errors=[1-9])' "$out/vm.log" "$out/host.log" 2>/dev/null >&2
	die "some benchmark runs failed (console: $out/vm.log)"
fi
# At the start of a line: the plan, echoed on the console, has it too.
grep -q '^BENCH-END' "$out/vm.log" || die "the VM did not finish (console: $out/vm.log)"
[ "$vm_rc" = 0 ] || die "the VM failed (console: $out/vm.log)"

if [ -f "$out/scaling.gp" ]; then
	gnuplot "$out/scaling.gp" && say "chart: $out/scaling.png"
fi
if [ -f "$out/ratios.gp" ]; then
	# Long rotated labels: gnuplot warns it had "difficulty making room".
	gnuplot "$out/ratios.gp" 2>"$out/ratios.err" && say "chart: $out/ratios.png"
	grep -v 'difficulty making room' "$out/ratios.err" >&2 || true
fi
if [ "${KWQ_BENCH_UPDATE_DOC:-}" = 1 ]; then
	python3 "$KWQ_ROOT/tools/bench/report.py" --update-doc \
		"$KWQ_ROOT/Documentation/benchmarks.rst" --out "$out"
	say "updated Documentation/benchmarks.rst"
fi
say "make bench took $(($(date +%s) - start)) s; results in $out"
# The last lines: one per target (also at the end of table.txt).
cat "$out/targets.txt"
