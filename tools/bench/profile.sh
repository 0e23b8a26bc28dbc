#!/bin/bash
# Where the kernel time goes in the benchmark VM. Boots the same VM as
# bench.sh (Debian's stock 6.12 kernel, production config, 2 vCPUs, QEMU
# TCG, kwq.ko and kwq_bench.ko built from this tree, lib.sh) with perf
# (the host's binary and the libraries ldd names) in the initramfs, and
# profiles each SHAPE twice, KWQ_PROFILE_RUNS (3) runs each time:
#  1. under perf record -e cpu-clock -F 4000 -a -g (software clock
#     sampling: TCG has no PMU), reported inside the VM with
#     kptr_restrict=0 so kwq.ko and kwq_bench.ko resolve from kallsyms;
#  2. under pcsample.py on the host, which stops the VM through QMP ~1000
#     times a second and reads each vCPU's RIP. cpu-clock is an ordinary
#     interrupt and cannot see inside IRQ-off regions: kwq's queue lock is
#     spin_lock_irqsave(), so perf charges the whole critical section, and
#     any spinning for the lock, to _raw_spin_unlock_irqrestore. The RIP
#     samples see inside them (no call chains).
# Writes build/profile/SHAPE.txt: the guest's CPU vulnerabilities
# (spectre_v2: retpolines?), the runs' RESULT lines, samples per dso and
# comm, the top symbols by self time (--no-children --sort sym) and by
# inclusive time (--children), the callers of the IRQ-enabling unlocks and
# of the top kwq symbols (-g callee), self time by category (pcsample.py
# categories: syscall entry, copy_*_user, kwq:queue.c, kwq:dev.c, slab,
# wake-ups, spinlock slowpath, idle, ...) for perf and for the RIP
# samples, and the top RIP-sampled symbols. Percentages are of all
# samples of both vCPUs, idle included. Documentation/benchmarks.rst,
# "Where the time goes in the VM", reads them.
#
# usage: profile.sh SHAPE...   (or "all"; one VM boot for all of them)
# Shapes (the sizes of make bench; hot keys 5x the adds):
#   kernel-distinct     kwq_bench suite=throughput impls=kwq
#   kernel-distinct-wq    its peer, impls=workqueue
#   kernel-hotkey       kwq_bench suite=hotkey impls=kwq (16 keys)
#   kernel-hotkey-wq      its peer, impls=workqueue
#   user-single         kwq_ubench throughput kwq_single
#   user-single-mq        its peer, kwq_ubench throughput mqueue
#   user-phases-single  kwq_ubench phases kwq_single
#   user-phases-mq        its peer, kwq_ubench phases mqueue
# Knobs (environment): KWQ_PROFILE_OUT (build/profile), KWQ_PROFILE_RUNS
# (3), KWQ_PROFILE_FREQ (4000 Hz), KWQ_PROFILE_PCHZ (1000 RIP samples/s),
# KWQ_PROFILE_TOP (40 symbols), KWQ_BENCH_ITEMS (200000),
# KWQ_BENCH_HOT_ITEMS (1000000), KWQ_BENCH_UITEMS (50000), KWQ_BENCH_KARGS
# (more kwq_bench.ko parameters), KWQ_BENCH_ARGS (kernel command line),
# KWQ_BENCH_TIMEOUT (VM timeout, 1800 s), KWQ_PROFILE_REPORT_ONLY=1 (redo
# the host's side from the last console and samples, no VM). Takes about
# 10 minutes for all.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

all="kernel-distinct kernel-distinct-wq kernel-hotkey kernel-hotkey-wq"
all+=" user-single user-single-mq user-phases-single user-phases-mq"
out=${KWQ_PROFILE_OUT:-$KWQ_OUT/profile}
freq=${KWQ_PROFILE_FREQ:-4000}
top=${KWQ_PROFILE_TOP:-40}
pchz=${KWQ_PROFILE_PCHZ:-1000}
runs=${KWQ_PROFILE_RUNS:-3}
items=${KWQ_BENCH_ITEMS:-200000}
hot_items=${KWQ_BENCH_HOT_ITEMS:-$((items * 5))}
uitems=${KWQ_BENCH_UITEMS:-50000}
kargs=${KWQ_BENCH_KARGS:-}
timeout=${KWQ_BENCH_TIMEOUT:-1800}

[ $# -gt 0 ] || die "usage: profile.sh SHAPE... | all (shapes: $all)"
# shellcheck disable=SC2086 # the list of shapes
[ "$*" = all ] && set -- $all
for s in "$@"; do
	case " $all " in *" $s "*) ;; *) die "unknown shape '$s' (shapes: $all)" ;; esac
done

# The VM command of one shape.
shape_cmd() {
	case $1 in
	kernel-distinct) echo "insmod $mods/kwq_bench.ko suite=throughput impls=kwq items=$items $kargs" ;;
	kernel-distinct-wq) echo "insmod $mods/kwq_bench.ko suite=throughput impls=workqueue items=$items $kargs" ;;
	kernel-hotkey) echo "insmod $mods/kwq_bench.ko suite=hotkey impls=kwq items=$hot_items $kargs" ;;
	kernel-hotkey-wq) echo "insmod $mods/kwq_bench.ko suite=hotkey impls=workqueue items=$hot_items $kargs" ;;
	user-single) echo "/kwq/kwq_ubench throughput kwq_single $uitems 1" ;;
	user-single-mq) echo "/kwq/kwq_ubench throughput mqueue $uitems 1" ;;
	user-phases-single) echo "/kwq/kwq_ubench phases kwq_single $uitems 1" ;;
	user-phases-mq) echo "/kwq/kwq_ubench phases mqueue $uitems 1" ;;
	esac
}

# perf_files: SRC=DEST pairs for vm.sh, the perf binary and every shared
# library it loads, at the host's paths. Debian's /usr/bin/perf may be a
# wrapper script that execs perf_VERSION: take the first ELF binary.
perf_files() {
	local bin="" f
	for f in "$(command -v perf || true)" /usr/bin/perf_[0-9]*; do
		if [ -f "$f" ] && [ "$(head -c4 "$f" | tail -c3)" = ELF ]; then
			bin=$f
			break
		fi
	done
	[ -n "$bin" ] || die "no perf binary found (linux-perf installs /usr/bin/perf)"
	echo "$bin=/usr/bin/perf"
	ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3 "=" $3 }
		$1 ~ /^\// { print $1 "=" $1 }'
}

# host_reports SHAPE...: build/profile/SHAPE.txt from the console and
# the RIP samples.
host_reports() {
	# cut_log BEGIN END: the console's lines between two marker lines.
	cut_log() {
		tr -d '\r' <"$out/vm.log" | awk -v b="$1" -v e="$2" '
			$0 == e { on = 0 }
			on { print }
			$0 == b { on = 1 }'
	}
	objs=()
	for o in "$out"/mod/src/src/*.o; do objs+=(--obj "$o"); done
	for s in "$@"; do
		f=$out/$s.txt
		cut_log "PROFILE-BEGIN $s" "PROFILE-END $s" >"$f"
		[ -s "$f" ] || { rm -f "$f"; die "no profile of $s (console: $out/vm.log)"; }
		cut_log "PROFILE-SELF-BEGIN $s" "PROFILE-SELF-END $s" >"$out/$s.perf-self"
		python3 "$KWQ_ROOT/tools/bench/pcsample.py" report --log "$out/vm.log" \
			--raw "$out/pcsample.raw" --tag "$s" --top 0 >"$out/$s.pc-self"
		tr -d '\r' <"$out/vm.log" | sed -n "s/^PCSAMPLE-RESULT $s //p" >"$out/$s.pc-results"
		sed -n '/^==== runs under perf/,/^$/p' "$f" | grep RESULT >"$out/$s.perf-results" || true
		{
			echo
			echo "==== self time by category, perf (all symbols; by name, approximate)"
			python3 "$KWQ_ROOT/tools/bench/pcsample.py" categories "${objs[@]}" \
				--results "$out/$s.perf-results" <"$out/$s.perf-self"
			echo
			echo "==== top $top symbols, guest RIPs sampled from the host (pcsample.py;"
			echo "     other runs of the shape, interrupts on or off)"
			cat "$out/$s.pc-results"
			head -$((top + 1)) "$out/$s.pc-self"
			echo
			echo "==== self time by category, guest RIPs (all symbols)"
			python3 "$KWQ_ROOT/tools/bench/pcsample.py" categories "${objs[@]}" \
				--results "$out/$s.pc-results" <"$out/$s.pc-self"
		} >>"$f"
		say "$f"
	done
}

if [ "${KWQ_PROFILE_REPORT_ONLY:-}" = 1 ]; then
	out=$(realpath "$out")
	host_reports "$@"
	exit 0
fi

need_pkg linux-perf perf
mkdir -p "$out"
out=$(realpath "$out")
bench_build "$out"
krel=$(modinfo -F vermagic "$out/mod/kwq.ko" | cut -d' ' -f1)
mods=/lib/modules/$krel/extra

# One script per shape: KWQ_PROFILE_RUNS runs of its command, back to
# back (kwq_bench stays loaded after the last, for its symbols).
rm -rf "$out/run"
mkdir -p "$out/run"
run_files=()
for s in "$@"; do
	{
		echo "#!/bin/sh"
		echo "for i in \$(seq $runs); do"
		echo "	grep -q '^kwq_bench ' /proc/modules && rmmod kwq_bench"
		echo "	$(shape_cmd "$s") || exit 1"
		echo "done"
	} >"$out/run/$s"
	chmod 755 "$out/run/$s"
	run_files+=("$out/run/$s=/kwq/run/$s")
done

# The VM plan, sourced by tools/testing/init.sh. The .ko files go to
# /lib/modules/RELEASE/extra, where perf looks for module symbols.
cat >"$out/plan" <<EOF
expect "insmod kwq.ko" insmod $mods/kwq.ko
mkdir -p /dev/mqueue && mount -t mqueue none /dev/mqueue
echo 0 >/proc/sys/kernel/kptr_restrict
echo -1 >/proc/sys/kernel/perf_event_paranoid
export HOME=/tmp	# perf's ~/.debug
cd /tmp
# quiet CMD...: CMD with printk off the console, so that no kernel
# message lands inside a block the host cuts out of it.
quiet() {
	local s=\$(cat /proc/sys/kernel/printk)
	echo 1 >/proc/sys/kernel/printk
	"\$@"
	echo "\$s" >/proc/sys/kernel/printk
}
# The guest's text symbols for pcsample.py (Debian's System.map is a stub).
kallsyms() {
	echo PCSAMPLE-KALLSYMS-BEGIN
	awk '\$2 ~ /^[tTwW]\$/ && \$4 == ""' /proc/kallsyms | gzip -c | base64
	echo PCSAMPLE-KALLSYMS-END
}
quiet kallsyms
# The RESULT lines of the last runs into /tmp/results; unload kwq_bench.
results() {
	{ grep -h RESULT /tmp/run.out; dmesg | grep -o 'RESULT.*'; } >/tmp/results
}
unload() {
	if grep -q '^kwq_bench ' /proc/modules; then rmmod kwq_bench; fi
}
# pcsample SHAPE: the shape's runs while the host samples the vCPUs'
# RIPs; then their results and the modules' symbols.
modsyms() {
	sed "s/^/PCSAMPLE-RESULT \$1 /" /tmp/results
	echo "PCSAMPLE-MODSYMS-BEGIN \$1"
	grep '\[' /proc/kallsyms
	echo "PCSAMPLE-MODSYMS-END \$1"
}
pcsample() {
	dmesg -c >/dev/null
	echo "PCSAMPLE-START \$1"
	/kwq/run/\$1 >/tmp/run.out 2>&1 || echo "PROFILE-ERROR \$1: \$(tail -3 /tmp/run.out)"
	echo "PCSAMPLE-STOP \$1"
	results
	quiet modsyms \$1
	unload
}
# profile SHAPE: the shape's runs under perf record; the report in
# /tmp/SHAPE.txt, printed between PROFILE-BEGIN/END, then the whole self
# table between PROFILE-SELF-BEGIN/END (for the categories).
report() {
	local syms
	echo "shape: \$1 ($runs runs of: \$(sed -n 's/^	\(.*\) || exit 1\$/\1/p' /kwq/run/\$1))"
	echo "kernel: \$(uname -r); perf record -e cpu-clock -F $freq -a -g"
	grep -H . /sys/devices/system/cpu/vulnerabilities/* |
		sed 's,^/sys/devices/system/cpu/vulnerabilities/,vulnerability ,'
	echo
	echo "==== runs under perf"
	cat /tmp/results
	grep '^\[ perf' /tmp/run.out
	echo
	echo "==== samples per dso"
	perf report -i /tmp/perf.data --stdio --no-children --sort dso -g none 2>&1 |
		grep -v '^#' | grep . | head -15
	echo
	echo "==== samples per comm"
	perf report -i /tmp/perf.data --stdio --no-children --sort comm -g none 2>&1 |
		grep -v '^#' | grep . | head -15
	echo
	echo "==== top $top symbols, self (--no-children --sort sym)"
	perf report -i /tmp/perf.data --stdio --no-children --sort sym -g none 2>&1 |
		grep -E '^# (Samples|Event count)|^ ' >/tmp/self
	head -$((top + 2)) /tmp/self
	echo
	echo "==== top $top symbols, inclusive (--children --sort sym)"
	perf report -i /tmp/perf.data --stdio --children --sort sym -g none 2>&1 |
		grep -v '^#' | grep . | head -$top
	# Callers of the IRQ-enabling unlocks (cpu-clock is an ordinary
	# interrupt: time with IRQs off, spinning in spin_lock_irqsave()
	# included, is sampled where they are enabled again), and of the top
	# 5 symbols of kwq.ko / kwq_bench.ko.
	awk '\$4 ~ /^\[kwq(_bench)?\]\$/ { print \$3 }' /proc/kallsyms | sort -u >/tmp/kwq.syms
	syms=\$(awk '\$2 == "[k]" { print \$3 }' /tmp/self | grep -Fxf /tmp/kwq.syms |
		head -5 | tr '\n' ',')
	syms=_raw_spin_unlock_irqrestore,_raw_spin_unlock_irq,\${syms%,}
	echo
	echo "==== callers of \$syms (-g callee, >= 1%)"
	perf report -i /tmp/perf.data --stdio --no-children --sort sym \\
		--symbols="\$syms" -g graph,1,callee --max-stack 10 2>&1 |
		grep -v '^#' | grep . | head -250
}
cat_report() {
	echo "PROFILE-BEGIN \$1"
	cat /tmp/\$1.txt
	echo "PROFILE-END \$1"
	echo "PROFILE-SELF-BEGIN \$1"
	cat /tmp/self
	echo "PROFILE-SELF-END \$1"
}
profile() {
	dmesg -c >/dev/null
	echo "PROFILE-RUN \$1"
	perf record -e cpu-clock -F $freq -a -g -o /tmp/perf.data -- /kwq/run/\$1 \\
		>/tmp/run.out 2>&1 || echo "PROFILE-ERROR \$1: \$(tail -3 /tmp/run.out)"
	results
	report \$1 >/tmp/\$1.txt 2>&1
	quiet cat_report \$1
	rm -f /tmp/perf.data /tmp/perf.data.old
	unload
}
EOF
{
	for s in "$@"; do
		echo "pcsample $s"
		echo "profile $s"
	done
	echo 'expect "rmmod kwq" rmmod kwq'
	echo 'echo "PROFILE-DONE"'
} >>"$out/plan"

mapfile -t perf_pairs < <(perf_files)
rm -f "$out/pcsample.raw" "$out/qmp.sock"
python3 "$KWQ_ROOT/tools/bench/pcsample.py" sample --qmp "$out/qmp.sock" \
	--log "$out/vm.log" --raw "$out/pcsample.raw" --hz "$pchz" &
sampler=$!
say "booting stock $(basename "$BENCH_IMAGE") (2 vCPUs, TCG) for: $*; console $out/vm.log"
vm_rc=0
"$KWQ_ROOT/tools/testing/vm.sh" -k "$BENCH_IMAGE" -o "$out/vm.log" -p "$out/plan" \
	-t "$timeout" -a "$BENCH_VM_ARGS" -q "-qmp unix:$out/qmp.sock,server=on,wait=off" \
	"$out/mod/kwq.ko=$mods/kwq.ko" \
	"$out/benchmod/tools/bench/kwq_bench.ko=$mods/kwq_bench.ko" \
	"$out/user/kwq_ubench=/kwq/kwq_ubench" "${run_files[@]}" "${perf_pairs[@]}" ||
	vm_rc=$?
wait "$sampler" || true
host_reports "$@"
if grep -q '^PROFILE-ERROR' "$out/vm.log"; then
	grep '^PROFILE-ERROR' "$out/vm.log" >&2
	die "some runs failed (console: $out/vm.log)"
fi
grep -q PROFILE-DONE "$out/vm.log" || die "the VM did not finish (console: $out/vm.log)"
[ "$vm_rc" = 0 ] || die "the VM failed (console: $out/vm.log)"
