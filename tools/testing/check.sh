#!/bin/bash
# make check: everything kwq's CI verifies, in one run.
#
#   1. static checks: checkpatch --strict, sparse (C=2), W=1 builds
#   2. the debug kernels (KUnit, KASAN, lockdep, kmemleak, UBSAN,
#      failslab...), 6.12 and 7.2, built from Debian's sources, in QEMU:
#      kwq.ko + KUnit suites on both; on 6.12 the userspace, Go and
#      fail-nth tests (in two VMs side by side: those in $debug612b in
#      the second), on 7.2 those in $debug72 (lifecycle's 100 cycles)
#   3. Debian's stock kernels in QEMU (bookworm's 6.1 and 6.12, unstable's
#      7.2 through tools/testing/sid-kernel.sh): W=1 build, load,
#      userspace tests, unload
#   4. the harness self-test: deliberately broken modules must fail
#   5. make demo: its own terminal output tells the story
#
# Each check is one or more test cases; the last line is the summary
# "N passed, N failed, N skipped" (a skip fails the run unless
# KWQ_ALLOW_SKIP=1). Logs stay in $KWQ_OUT (default build/).
# KWQ_CHECK_ONLY="static debug stock selftest demo" picks sections;
# "kcsan" (make check-kcsan) runs the suites on the KCSAN kernel;
# "coverage" (make coverage) the debug 6.12 VMs alone. checkpatch,
# coccicheck and the self-test remember their passes by their inputs'
# bytes (lib.sh: memo_hit); KWQ_NO_MEMO=1 runs them anyway.
#
# Coverage: the debug 6.12 VMs run kwq.ko built with KWQ_GCOV=1 and
# hand their gcov data over the console at the end; coverage.py adds
# the two up (one build: the same lines and branches) and reports
# lines and branches of src/ per file, the unreached error returns and
# one "figure" line per target (HTML in $KWQ_OUT/coverage/).
#
# The VMs run in the background, KWQ_VM_JOBS (2) at a time while the
# host builds and checks go on and KWQ_VM_JOBS_IDLE (4) at a time once
# they are done; their reports follow in a fixed order.
# Every stage says what it does and how long it usually takes, and the
# run ends with a table of the time each stage took.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

sections=${KWQ_CHECK_ONLY:-static debug stock selftest demo}
mkdir -p "$KWQ_OUT"
KWQ_OUT=$(realpath "$KWQ_OUT")
export KWQ_OUT
counts=$KWQ_OUT/counts
stages=$KWQ_OUT/stages
jobs=$KWQ_OUT/jobs
: >"$counts"
: >"$stages"
: >"$KWQ_OUT/checks"
rm -rf "$jobs"
mkdir -p "$jobs"
: >"$jobs/queue"
start=$(date +%s)
KWQ_VM_JOBS=${KWQ_VM_JOBS:-2}
KWQ_VM_JOBS_IDLE=${KWQ_VM_JOBS_IDLE:-4}
# How many VMs may run now: KWQ_VM_JOBS, then KWQ_VM_JOBS_IDLE from
# "waiting for the VMs" on. A VM keeps about one of its two vCPUs busy
# (the debug 6.12 VM: 333 CPU s in 413 s), so two VMs and the host
# checks fill 2 cores. Once the host is done, four: the three debug VMs
# (about 380, 380 and 270 s) and the stock VMs one after another beside
# them, instead of the three stock VMs after the debug ones on cores
# they leave half idle (a warm run, the same tree, same directory: 484 s
# with 3, 404 s with 4; with 3 the stock VMs ran from 355 to 470 s).
echo "$KWQ_VM_JOBS" >"$jobs/slots"

# case_result NAME OK|FAIL [DETAIL]: a host-side check as one test case.
case_result() {
	if [ "$2" = OK ]; then
		printf '  PASS %s\n' "$1"
		echo "1 0 0" >>"$counts"
	else
		printf '  FAIL %s%s\n' "$1" "${3:+: $3}"
		echo "0 1 0" >>"$counts"
	fi
}

# times_ms FILE: the children's CPU time (user + system, ms) in FILE, an
# output of bash's times (its second line).
times_ms() {
	awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/)
		printf "%d", (u[1] * 60 + u[2] + s[1] * 60 + s[2]) * 1000 }' "$1"
}

# children_ms VAR: set VAR to the CPU time (ms) of this shell's
# waited-for children so far (times taken here: a $(...) subshell would
# count its own children only).
children_ms() {
	local f=$jobs/.times.$BASHPID
	times >"$f"
	printf -v "$1" '%s' "$(times_ms "$f")"
	rm -f "$f"
}

# run_check NAME CMD...: run CMD quietly as one case; show its output on
# failure. Its wall and CPU time go to $KWQ_OUT/checks (where a warm
# run's host time goes).
run_check() {
	local name=$1 log t0 c0 c1 rc
	shift
	log=$KWQ_OUT/logs/$(echo "$name" | tr -c 'A-Za-z0-9._-' _).log
	mkdir -p "$KWQ_OUT/logs"
	t0=$(date +%s%N)
	children_ms c0
	if "$@" >"$log" 2>&1; then
		case_result "$name" OK
		rc=0
	else
		case_result "$name" FAIL "log $log"
		tail -15 "$log" | sed 's/^/       | /'
		rc=1
	fi
	children_ms c1
	printf '%d\t%d\t%s\n' $((($(date +%s%N) - t0) / 1000000)) \
		$((c1 - c0)) "$name" >>"$KWQ_OUT/checks"
	return $rc
}

# checkpatch_file FILE OPTION...: checkpatch --strict FILE, unless these
# very bytes passed it before: the same file, the same checkpatch.pl
# and data files, the same options. A pass is remembered under
# $KWQ_CACHE/checkpatch by the SHA-256 of all of them, a failure never;
# so a second make check does not check an unchanged file again (its
# line says so), and any change to the file or to checkpatch runs it.
# KWQ_NO_MEMO=1 runs every file.
checkpatch_file() {
	local f=$1 name="checkpatch ${1#"$KWQ_ROOT"/}" key memo
	shift
	key=$({ cat "$srcdir/scripts/checkpatch.pl" "$srcdir/scripts/spelling.txt" \
		"$srcdir/scripts/const_structs.checkpatch" "$f" && printf '%s\n' "$@"; } |
		sha256sum) || key=
	memo=$KWQ_CACHE/checkpatch/${key%% *}
	if [ -n "$key" ] && memo_hit "$memo"; then
		case_result "$name (these bytes passed it $(date -r "$memo" '+%F %R'))" OK
		return
	fi
	run_check "$name" perl "$srcdir/scripts/checkpatch.pl" --strict --no-tree \
		--quiet --show-types "$@" -f "$f" || return 0
	[ -z "$key" ] || { mkdir -p "${memo%/*}" && touch "$memo"; }
}

# section TITLE [TYPICAL]: a foreground stage: what it does and how long
# it usually takes on 2 cores; the previous stage's time is printed and
# goes to the table.
stage='' stage_t0=''
section() {
	stage_done
	stage=$1 stage_t0=$(date +%s)
	printf '\n=== %s%s\n' "$1" "${2:+ (on 2 cores usually $2)}"
}
stage_done() {
	[ -n "$stage" ] || return 0
	local d=$(($(date +%s) - stage_t0))
	printf '  (%s: %d s)\n' "$stage" "$d"
	printf '%s\t%s\n' "$d" "$stage" >>"$stages"
	stage=
}

# bg_start NAME CMD...: queue CMD for the background and go on at once.
# The jobs start in the order queued (queue the longest first), at most
# $jobs/slots at a time (each is a VM, or a few in a row); so a VM starts
# as soon as its inputs exist and a slot is free, and never holds up the
# host checks. Output to $jobs/NAME.out, exit status to $jobs/NAME.rc,
# wall and CPU time (user + system of all its processes, which says
# something even on a busy machine) to the stage table. bg_finish NAME
# waits for it and prints its output.
bg_names=()
# bg_turn NAME: true when every job queued before NAME has started and
# fewer than $jobs/slots of them still run. Only the first job not
# started can see its turn, so two never start on one free slot.
bg_turn() {
	local j n=0 slots
	while IFS= read -r j; do
		[ "$j" = "$1" ] && break
		[ -e "$jobs/$j.started" ] || return 1
		[ -e "$jobs/$j.rc" ] || n=$((n + 1))
	done <"$jobs/queue"
	read -r slots <"$jobs/slots"
	[ "$n" -lt "$slots" ]
}
bg_start() {
	local name=$1
	shift
	bg_names+=("$name")
	echo "$name" >>"$jobs/queue"
	(
		while ! bg_turn "$name"; do sleep 1; done
		: >"$jobs/$name.started"
		say "started in the background: $name"
		t0=$(date +%s)
		"$@" >"$jobs/$name.out" 2>&1
		rc=$?
		# The second line of times: the children's user and system time.
		times >"$jobs/$name.times"
		cpu=$(($(times_ms "$jobs/$name.times") / 1000))
		printf '%s\t%s (background; CPU %s s)\n' "$(($(date +%s) - t0))" "$name" "$cpu" >>"$stages"
		echo $rc >"$jobs/$name.rc"
	) &
}
bg_finish() {
	while [ ! -e "$jobs/$1.rc" ]; do sleep 1; done
	cat "$jobs/$1.out"
	return "$(cat "$jobs/$1.rc")"
}

# vm_run NAME KERNEL PLAN TIMEOUT FILES...: boot, then judge the log.
# $vm_append, if set, goes on the kernel command line, $vm_qemu on
# QEMU's; $vm_single set boots with single-threaded TCG (vm.sh -s).
vm_run() {
	local name=$1 kernel=$2 plan=$3 timeout=$4 log
	shift 4
	log=$KWQ_OUT/logs/vm-$name.log
	mkdir -p "$KWQ_OUT/logs"
	say "booting $name ($(basename "$kernel")), console log: $log"
	"$KWQ_ROOT/tools/testing/vm.sh" -k "$kernel" -o "$log" -p "$plan" \
		-t "$timeout" ${vm_append:+-a "$vm_append"} ${vm_qemu:+-q "$vm_qemu"} \
		${vm_single:+-s} "$@"
	"$KWQ_ROOT/tools/testing/report.py" ${report_args:-} --label "$name: $kernel" \
		--counts "$counts" --failures "$KWQ_OUT/logs/vm-$name.failures" "$log"
	local rc=$?
	# Figures with goals that suites print as KTAP diagnostics
	# ("# figure NAME MEASURED GOAL met|missed", walks_test): a missed
	# one fails its case already; here they reach make check's output.
	grep -a -oE '# figure [A-Za-z0-9_]+ [^ ]+ [^ ]+ (met|missed)' "$log" |
		tr -d '\r' | sed 's/^# /  /'
	return $rc
}

# vm_bg NAME KERNEL PLAN TIMEOUT FILES...: vm_run in the background;
# vm_finish NAME prints its report under a heading.
vm_order=()
vm_bg() {
	vm_order+=("$1")
	bg_start "vm-$1" vm_run "$@"
}
vm_finish() {
	printf '\n=== %s VM (ran in the background)\n' "$1"
	bg_finish "vm-$1"
}

# Everything at once (lib.sh, KWQ_PKGS_CHECK): as root one apt-get
# install, otherwise one message naming every missing package. The 32-bit
# ABI suite (abi32_test) needs gcc-multilib (gcc -m32 -static): without
# it the suite would silently not exist.
section "Debian packages" "a second when installed; 2-4 min to install on a fresh machine"
need_pkgs "${KWQ_PKGS_CHECK[@]}"
kwq_ccache

# Userspace test programs (static, so the initramfs needs no libc).
section "userspace test programs, Go tests and example" "10-20 s, a few when built before; cold adds ~1 min to fetch Go"
run_check "build userspace tests" make -C "$KWQ_ROOT/userspace" tests OUT="$KWQ_OUT/user"
if [ -x "$KWQ_OUT/user/abi32_test" ]; then
	case_result "32-bit ABI suite built (gcc -m32 -static)" OK
else
	case_result "32-bit ABI suite built (gcc -m32 -static)" FAIL "gcc-multilib missing or broken"
fi
# The Go package's behaviour tests (userspace/go/cmd/kwq-gotest) as one
# more static test program, built with Go and client-go from Debian
# unstable (tools/testing/go-env.sh; versions in tools/testing/sid-pins).
run_check "build Go behaviour tests (go_test, Go and client-go from Debian unstable)" \
	"$KWQ_ROOT/tools/testing/go-env.sh" go build -trimpath -o "$KWQ_OUT/user/go_test" \
	kwq.dev/kwq/cmd/kwq-gotest
# The Go example controller (userspace/go/example), a helper in /usr/bin
# that each plan runs once.
run_check "build the Go example controller (go-example)" \
	"$KWQ_ROOT/tools/testing/go-env.sh" go build -trimpath -o "$KWQ_OUT/user/bin/go-example" \
	kwq.dev/kwq/example
user_files=()
user_suites=()
# Suites that need the debug kernel's options and are in its plan alone,
# not skipped elsewhere: failnth needs fail-nth, failslab and
# fail_page_alloc (CONFIG_FAULT_INJECTION_DEBUG_FS, CONFIG_FAILSLAB,
# CONFIG_FAIL_PAGE_ALLOC), which stock Debian kernels lack. torture
# (issue 34) runs its workload under KASAN, lockdep and kmemleak alone,
# for $torture_secs s in the debug-6.12b VM (make torture for longer).
debug_only=" failnth torture "
torture_secs=60
# Suites that run on the latency kernel (config/latency.config) alone,
# and nothing else there: walks measures, with the kernel's latency
# tracers, how long kwq's whole-queue calls on $walks_keys keys hold
# interrupts off and go without a scheduling point (issue 30, finding 5),
# on Debian's preemption model and without the debug kernels'
# sanitizers, which would multiply every section (the debug 6.12 kernel
# under TCG took 12-14 min for 50000 keys).
latency_only=" walks "
# The debug 7.2 VM runs KUnit and, of the userspace suites, only these;
# every suite runs on debug 6.12 (KASAN, lockdep, kmemleak over the ioctl
# paths) and every one but the debug-only ones on the stock 6.1, 6.12
# and 7.2 kernels. lifecycle: module load and unload, whose teardown
# (kmem_cache_destroy of the node caches, misc device, debugfs) is where
# 7.2 differs most, under kmemleak; it does its 100 cycles here and
# $lifecycle_few elsewhere. namespace: the IPC namespace references
# (src/compat.h), whose misuse KASAN or kmemleak would see. leak, batch,
# dev and fuzz: the debug 7.2 kernel leaves the stack uninitialised
# (config/debug-7.2.config), so a record or argument the kernel reads
# without having copied it in holds what an earlier call left there, as
# on a production kernel without INIT_STACK_ALL_ZERO. ring: the shared
# rings (mmap, vm_insert_pages, vma_set_file), whose mm API moves most
# between versions, under KASAN and kmemleak. Not here:
# failnth (KUnit's kwq_fault fails the core's allocations on 7.2 too;
# the ioctl paths' failures run on debug 6.12) and the rest (the same
# code as on 6.12; without KASAN on stock 7.2).
debug72=" lifecycle namespace leak batch dev fuzz ring "
# The debug 6.12 suites take about 400 s one after the other, most on one
# vCPU: these run in a second VM of the same kernel and the same kwq.ko
# (debug-6.12b), beside the first, so that no VM holds up the end of the
# run. The two longest (failnth 86 s, limits 80 s of guest time) and
# torture (71 s: its workload, then the drain and the check); coverage
# adds up the gcov data of both VMs.
debug612b=" failnth limits torture "
# walks_test's keys per queue: every whole-queue call on that many keys,
# once under each latency tracer (the issue's figure). Then, under each
# tracer again, a load (-x): walks_test -B, the longest batch calls (4096
# keys of 1024 bytes in one call, a few seconds), and the fuzzer for
# $walks_fuzz_secs s, every ioctl path with hostile arguments as root and
# as other users: the figures cover what any caller can do.
walks_keys=1000000
walks_fuzz_secs=20
# Repetition finds leaks and load/unload races: once, under kmemleak, is
# enough for 100 cycles; elsewhere a few show that the cycle works.
lifecycle_few=10
# The fuzzer runs for a time (fuzz_test -t): 25 s on the debug kernels,
# where KASAN, lockdep and kmemleak see what a bad call does (about 20k
# calls there); 15 s on the stock ones, which make 7-11 times as many
# calls in that time (about 140-220k each) and see only crashes and the
# fuzzer's own invariants. make fuzz runs it for longer.
fuzz_secs_stock=15
# Helper programs (kwqctl, ...) go to /usr/bin; each *_test is one test.
for t in "$KWQ_OUT"/user/bin/*; do
	[ -f "$t" ] && user_files+=("$t=/usr/bin/$(basename "$t")")
done
# The shell suites source it from their own directory.
user_files+=("$KWQ_OUT/user/ktap.sh=/kwq/tests/ktap.sh")
for t in "$KWQ_OUT"/user/*_test; do
	[ -x "$t" ] || continue
	user_files+=("$t=/kwq/tests/$(basename "$t")")
	user_suites+=("$(basename "$t" _test)")
done

# user_tests KIND: the plan's userspace suites for one kind of VM (see
# plan), the debug-only ones last.
user_tests() {
	local s cycles=$lifecycle_few
	[ "$1" = debug-7.2 ] || [ "$1" = kcsan ] && cycles=100
	{
		for s in "${user_suites[@]}"; do
			if [ "$1" = latency ]; then
				[[ "$latency_only" != *" $s "* ]] || echo "$s"
			else
				[[ "$debug_only$latency_only" == *" $s "* ]] || echo "$s"
			fi
		done
		if [ "${1%b}" = debug-6.12 ]; then
			for s in "${user_suites[@]}"; do
				[[ "$debug_only" != *" $s "* ]] || echo "$s"
			done
		fi
	} |
		while read -r s; do
			[ "$1" != debug-7.2 ] || [[ "$debug72" == *" $s "* ]] || continue
			[ "$1" != debug-6.12 ] || [[ "$debug612b" != *" $s "* ]] || continue
			[ "$1" != debug-6.12b ] || [[ "$debug612b" == *" $s "* ]] || continue
			if [ "$s" = lifecycle ]; then
				echo "user_test $s env CYCLES=$cycles /kwq/tests/${s}_test"
			elif [ "$s" = walks ]; then
				echo "user_test $s /kwq/tests/${s}_test -n $walks_keys" \
					"-x '/kwq/tests/walks_test -B &&" \
					"/kwq/tests/fuzz_test -t $walks_fuzz_secs'"
			elif [ "$s" = torture ]; then
				echo "user_test $s /kwq/tests/${s}_test -t $torture_secs"
			elif [ "$s" = fuzz ] && [ "$1" = stock ]; then
				echo "user_test $s /kwq/tests/${s}_test -t $fuzz_secs_stock"
			else
				echo "user_test $s /kwq/tests/${s}_test"
			fi
		done
}

# plan KIND: the VM plan for one kernel. KIND: debug-6.12 (KUnit, every
# userspace suite but those in $debug612b), debug-6.12b (the suites in
# $debug612b alone), debug-7.2 (KUnit, the suites in $debug72), stock
# (every suite but the debug-only ones), kcsan (KUnit and what stock
# runs, lifecycle's 100 cycles too), latency (the suites in
# $latency_only alone). The debug 6.12 VMs run kwq.ko built
# with KWQ_GCOV=1 and dump its coverage data once it is unloaded.
plan() {
	echo "load_module /kwq/kwq.ko"
	echo 'expect "/dev/kwq is a character device" test -c /dev/kwq'
	if [ "$1" = latency ]; then
		user_tests latency
		echo "unload_module kwq"
		return 0
	fi
	if [ "$1" != stock ]; then
		# kwq_fault and failnth drive fail-nth (init.sh: fault_attrs).
		echo 'expect "fault attributes: fail-nth decides" fault_attrs'
	fi
	if [ "$1" != stock ] && [ "$1" != debug-6.12b ]; then
		echo "kunit_module /kwq/kwq_test.ko"
	fi
	if [ "$1" != debug-6.12b ]; then
		# The example consumer reports at unload whether every key completed.
		echo "load_module /kwq/kwq_example.ko"
		echo "unload_module kwq_example"
		echo "expect \"example consumer completed every key once\" sh -c 'dmesg | grep -q \"kwq_example: PASS:\"'"
	fi
	user_tests "$1"
	if [ "$1" != debug-6.12b ]; then
		# Every key reconciled exactly once, some after rate-limited retries.
		echo 'expect "Go example controller reconciles every key once" /usr/bin/go-example -keys 300 -workers 4'
	fi
	echo "unload_module kwq"
	[ "${1%b}" = debug-6.12 ] && echo "gcov_dump"
	return 0
}

# test_kernel FRAGMENT NAME LABEL: the 6.12 test kernel of
# config/FRAGMENT.config, built or reused (build-kernel.sh), and kwq
# built against it (W=1) into $KWQ_OUT/mod-NAME; its tree in $ktree.
test_kernel() {
	if ktree=$("$KWQ_ROOT/tools/testing/build-kernel.sh" \
		"$KWQ_ROOT/tools/testing/config/$1.config" 6.12); then
		case_result "$3 kernel config + build ($(basename "$ktree"))" OK
		run_check "W=1 build against the $3 kernel" \
			"$KWQ_ROOT/tools/testing/build-module.sh" "$ktree" "$KWQ_OUT/mod-$2"
	else
		case_result "$3 kernel config + build" FAIL
	fi
}

# Kernels: the debug ones are built once and cached (build-kernel.sh);
# the stock ones come from Debian's packages. Each debug kernel's VM
# starts in the background as soon as its module is built, so a cold
# 7.2 build overlaps the 6.12 VM.
kdebug=
debug612_files=()
if [[ " $sections " == *" debug "* || " $sections " == *" selftest "* ||
	" $sections " == *" coverage "* ]]; then
	for v in 6.12 7.2; do
		[ $v = 6.12 ] || [[ " $sections " == *" debug "* ]] || continue
		typical="20 s"
		[ $v = 6.12 ] || typical="45 s"
		section "debug $v test kernel: build or reuse, W=1 module build" \
			"$typical with the kernel cached; 7-10 min to build it, with a progress line every 30 s"
		if kd=$("$KWQ_ROOT/tools/testing/build-kernel.sh" \
			"$KWQ_ROOT/tools/testing/config/debug.config" $v); then
			case_result "debug $v kernel config + build ($(basename "$kd"))" OK
		else
			case_result "debug $v kernel config + build" FAIL
			continue
		fi
		[ $v = 6.12 ] && kdebug=$kd
		[[ " $sections " == *" debug "* || " $sections " == *" coverage "* ]] || continue
		# On 6.12 kwq.ko is profiled (KWQ_GCOV=1: src/*.o only) for
		# the coverage report; 7.2 runs the module as it ships.
		gcov=
		[ $v = 6.12 ] && gcov=KWQ_GCOV=1
		run_check "W=1 build against debug $v kernel${gcov:+ ($gcov)}" \
			"$KWQ_ROOT/tools/testing/build-module.sh" "$kd" "$KWQ_OUT/mod-debug-$v" $gcov
		m=$KWQ_OUT/mod-debug-$v
		if [ -f "$m/kwq_test.ko" ]; then
			plan debug-$v >"$KWQ_OUT/plan-debug-$v"
			# 7-8 (6.12) and 5.5-6 min (7.2) on 2 cores; the timeout
			# only catches a hang. Other VMs on the machine can make it
			# six times that: at load 14-16 the 6.12 VM took 1786 s.
			vm_bg "debug-$v" "$kd/arch/x86/boot/bzImage" "$KWQ_OUT/plan-debug-$v" 2700 \
				"$m/kwq.ko=/kwq/kwq.ko" "$m/kwq_test.ko=/kwq/kwq_test.ko" \
				"$m/kwq_example.ko=/kwq/kwq_example.ko" \
				"$m/kwq_memcg_test.ko=/kwq/kwq_memcg_test.ko" \
				"${user_files[@]}"
			# torture_test runs there and loads kwq_torture.ko
			[ $v = 6.12 ] && debug612_files=("$m/kwq.ko=/kwq/kwq.ko" \
				"$m/kwq_torture.ko=/kwq/kwq_torture.ko" "${user_files[@]}")
		else
			case_result "KUnit module kwq_test.ko built against debug $v kernel" FAIL
		fi
	done
	# The second debug 6.12 VM ($debug612b), the same kernel and kwq.ko
	# as the first: queued behind the debug 7.2 VM, which is longer.
	if [ ${#debug612_files[@]} -gt 0 ]; then
		plan debug-6.12b >"$KWQ_OUT/plan-debug-6.12b"
		vm_bg debug-6.12b "$kdebug/arch/x86/boot/bzImage" "$KWQ_OUT/plan-debug-6.12b" 2700 \
			"${debug612_files[@]}"
	fi
	# The latency kernel (config/latency.config): walks_test's figures,
	# on one vCPU whose clock counts instructions (lib.sh,
	# KWQ_LATENCY_VM_QEMU).
	if [[ " $sections " == *" debug "* ]]; then
		section "latency test kernel: build or reuse, W=1 module build" \
			"15 s with the kernel cached; 7-18 min to build it"
		test_kernel latency latency "latency 6.12"
		if [ -f "$KWQ_OUT/mod-latency/kwq.ko" ]; then
			plan latency >"$KWQ_OUT/plan-latency"
			vm_append=$KWQ_LATENCY_VM_APPEND vm_qemu=$KWQ_LATENCY_VM_QEMU \
				vm_bg latency "$ktree/arch/x86/boot/bzImage" "$KWQ_OUT/plan-latency" 2700 \
				"$KWQ_OUT/mod-latency/kwq.ko=/kwq/kwq.ko" "${user_files[@]}"
		fi
	fi
	# The self-test needs only the debug 6.12 kernel: queued behind the
	# debug VMs, before the stock ones (it is longer).
	if [[ " $sections " == *" selftest "* ]] && [ -n "$kdebug" ]; then
		bg_start selftest "$KWQ_ROOT/tools/testing/selftest.sh" "$kdebug" "$KWQ_OUT/selftest" "$counts"
	fi
fi
# The checks on the debug 6.12 objects, while the VMs run.
if [[ " $sections " == *" debug "* ]] && [ -d "$KWQ_OUT/mod-debug-6.12/src/src" ]; then
	section "call graph and coccicheck (debug 6.12 objects)" \
		"5 s when coccicheck passed these sources before; 1-2 min a changed .c file, 3-7 min a changed header"
	# One direction between src/ files: no file calls into one
	# that calls it (Documentation/design.rst, "The map").
	run_check "no call cycles between src/ files" \
		"$KWQ_ROOT/tools/testing/layers.py" --src "$KWQ_ROOT/src" \
		--svg "$KWQ_OUT/map.svg" "$KWQ_OUT/mod-debug-6.12/src/src"
	# The picture in design.rst is that graph: redraw it when it
	# changes (tools/testing/layers.py --svg Documentation/map.svg OBJDIR).
	run_check "Documentation/map.svg is the call graph" \
		cmp "$KWQ_OUT/map.svg" "$KWQ_ROOT/Documentation/map.svg"
	# The kernel's semantic patches; remembered per source tree.
	need_pkg coccinelle spatch
	run_check "coccicheck reports nothing on src/, include/ and kunit/" \
		"$KWQ_ROOT/tools/testing/coccicheck.sh" "$kdebug"
fi

if [[ " $sections " == *" static "* ]]; then
	section "static checks (checkpatch, kernel-doc, shellcheck, host tests, Go vet and client-go proof)" "1 min"
	tarball=/usr/src/linux-source-6.12.tar.xz
	need_pkg linux-source-6.12 "$tarball"
	need_pkg sparse sparse
	need_pkg shellcheck shellcheck
	srcdir=$KWQ_CACHE/src/$(kwq_src_version | tr -c 'A-Za-z0-9.+\n-' _)
	if [ ! -f "$srcdir/scripts/checkpatch.pl" ]; then
		mkdir -p "$srcdir"
		tar -C "$srcdir" --strip-components=1 -xf "$tarball" \
			--wildcards '*/scripts/*' '*/Documentation/*' '*/tools/testing/kunit/*'
	fi
	while IFS= read -r f; do
		# src/compat.h exists to compare LINUX_VERSION_CODE (out-of-tree
		# code must span kernel versions); only there is that allowed.
		ignore=
		[ "$f" = "$KWQ_ROOT/src/compat.h" ] && ignore=--ignore=LINUX_VERSION_CODE,CONSTANT_COMPARISON
		checkpatch_file "$f" $ignore
	done < <(find "$KWQ_ROOT/src" "$KWQ_ROOT/include" "$KWQ_ROOT/kunit" \
		"$KWQ_ROOT/tools/testing/selftest" "$KWQ_ROOT/tools/testing/memcg" \
		"$KWQ_ROOT/tools/testing/torture" \
		"$KWQ_ROOT/tools/example" -name '*.[ch]' | sort)
	# kwqctl too, but for what only the kernel has: C99's <stdint.h>
	# types and <inttypes.h>'s PRIu64 (libkwq's API), no __printf().
	for f in "$KWQ_ROOT"/userspace/kwqctl/*.[ch]; do
		checkpatch_file "$f" \
			--ignore PREFER_KERNEL_TYPES,CAMELCASE,PREFER_DEFINED_ATTRIBUTE_MACRO
	done
	run_check "shellcheck userspace/kwqctl/kwqctl.bash" \
		shellcheck "$KWQ_ROOT/userspace/kwqctl/kwqctl.bash"
	# libkwq's pure functions, and kwqctl's --help, usage errors and
	# completion: on the host, no kernel needed.
	run_check "host unit tests and kwqctl usage (make host-test)" \
		make -C "$KWQ_ROOT/userspace" host-test BUILD="$KWQ_OUT/host-user"
	# make bench-host's core builds against its shims (the Makefile's
	# "core": without the driver, which needs valgrind's header).
	run_check "src/ builds against make bench-host's kernel shims" \
		make -s -C "$KWQ_ROOT/tools/bench-host" core B="$KWQ_OUT/bench-host-core" \
		KSRC_TARBALL="$tarball"
fi

if [[ " $sections " == *" static "* ]]; then
	# The Debian packages (make deb, about 1.5 min): built and lintian
	# clean without a file written in the tree, then what each holds and
	# that their man pages render (tools/testing/deb-check.sh). The stock
	# 6.12 section builds kwq-dkms's own tree through DKMS.
	need_pkgs "${KWQ_PKGS_DEB[@]}"
	run_check "make deb: kwq-dkms, libkwq1, libkwq-dev, kwqctl build, lintian clean, the tree untouched" \
		"$KWQ_ROOT/tools/testing/deb-check.sh" build
	run_check "the packages hold what they must (dpkg-deb -c), their man pages render (man -l)" \
		"$KWQ_ROOT/tools/testing/deb-check.sh" contents
fi

if [[ " $sections " == *" static "* ]]; then
	# Every symbol other modules can call is documented where they look.
	run_check "kernel-doc for every exported symbol" sh -c '
		missing=
		for f in $(sed -n "s/^EXPORT_SYMBOL_GPL(\(.*\));$/\1/p" "$0"/src/*.c); do
			grep -q "^ \* $f() - " "$0"/include/linux/kwq.h "$0"/src/*.c ||
				missing="$missing $f"
		done
		[ -z "$missing" ] || { echo "no kernel-doc:$missing"; exit 1; }' "$KWQ_ROOT"
	# kernel-doc comments are the API documentation: they must parse clean.
	run_check "kernel-doc -Wall on the headers and sources" sh -c \
		'out=$(perl "$0/scripts/kernel-doc" -none -Wall "$@" 2>&1); echo "$out"; [ -z "$out" ]' \
		"$srcdir" "$KWQ_ROOT"/include/linux/kwq.h "$KWQ_ROOT"/include/uapi/linux/kwq.h \
		"$KWQ_ROOT"/src/*.c
fi

if [[ " $sections " == *" static "* ]]; then
	# The Go package: gofmt, vet, its host tests (the ABI numbers) and the
	# compile-time proof that a *kwq.Queue is a client-go workqueue.
	goenv=$KWQ_ROOT/tools/testing/go-env.sh
	# shellcheck disable=SC2016 # sh -c expands them
	run_check "gofmt -l userspace/go prints nothing" sh -c \
		'out=$("$0" gofmt -l "$1"); echo "$out"; [ -z "$out" ]' "$goenv" "$KWQ_ROOT/userspace/go"
	# The host tests compare the Go mirror of the ABI with what gcc makes
	# of include/uapi/linux/kwq.h (userspace/go/testdata/abi.c).
	# shellcheck disable=SC2016 # sh -c expands them
	run_check "go vet and host tests of the Go package kwq.dev/kwq (ABI against the C header; vet of its kwqcount build too)" sh -c \
		'mkdir -p "$2" && gcc -Wall -Wextra -Werror -I"$1/include/uapi" -o "$2/abi" "$1/userspace/go/testdata/abi.c" &&
		"$2/abi" >"$2/abi.txt" &&
		"$0" go vet kwq.dev/kwq kwq.dev/kwq/compat kwq.dev/kwq/cmd/kwq-gotest kwq.dev/kwq/example \
			kwq.dev/kwq/kwqtest kwq.dev/kwq/internal/behave kwq.dev/kwq/kwqprom &&
		"$0" go vet -tags kwqcount kwq.dev/kwq &&
		"$0" go vet -tags kwqcount "$1/tools/bench-host/gocount/main.go" &&
		KWQ_ABI_FILE="$2/abi.txt" "$0" go test -count=1 -v kwq.dev/kwq' \
		"$goenv" "$KWQ_ROOT" "$KWQ_OUT/go"
	cgver=$(sid_pin golang-k8s-client-go-dev)
	run_check "*kwq.Queue is a client-go ${cgver%-*} workqueue.TypedRateLimitingInterface[string]" \
		"$goenv" go test -count=1 -v kwq.dev/kwq/compat
	# The in-process queue for controllers' unit tests: the behaviour
	# cases go_test runs against the module in the VM (internal/behave),
	# here on a fake clock, and its own cases (waits, Close, drain).
	run_check "package kwqtest: kwq's semantics in the process on a fake clock (the behave cases go_test runs against the module)" \
		"$goenv" go test -count=1 -v kwq.dev/kwq/kwqtest
	run_check "package kwqprom: a queue's kernel metrics in the process's Prometheus registry under client-go's workqueue_* names" \
		"$goenv" go test -count=1 -v kwq.dev/kwq/kwqprom
	# Module mode: userspace/go/go.mod's requirements, resolved offline
	# from the same Debian sources (go-env.sh, KWQ_GO_MODULES).
	run_check "go build and vet of module kwq.dev/kwq in module mode (userspace/go/go.mod)" sh -c \
		'cd "$1/userspace/go" && KWQ_GO_MODULES=1 "$0" go build -o /dev/null ./... &&
		KWQ_GO_MODULES=1 "$0" go vet ./...' "$goenv" "$KWQ_ROOT"
fi

# make check-kcsan (not in the default sections: the KCSAN kernel is a
# second ~10 min build and its run is slow): the same plan under KCSAN,
# counting only reports that name kwq.
if [[ " $sections " == *" kcsan "* ]]; then
	section "KCSAN test kernel: KUnit + userspace tests"
	test_kernel kcsan kcsan "KCSAN 6.12"
	kkcsan=$ktree
	if [ -f "$KWQ_OUT/mod-kcsan/kwq_test.ko" ]; then
		plan kcsan >"$KWQ_OUT/plan-kcsan"
		vm_append=$KWQ_KCSAN_VM_APPEND report_args=--kcsan-only-kwq \
			vm_run kcsan "$kkcsan/arch/x86/boot/bzImage" \
			"$KWQ_OUT/plan-kcsan" 1500 \
			"$KWQ_OUT/mod-kcsan/kwq.ko=/kwq/kwq.ko" \
			"$KWQ_OUT/mod-kcsan/kwq_test.ko=/kwq/kwq_test.ko" \
			"$KWQ_OUT/mod-kcsan/kwq_example.ko=/kwq/kwq_example.ko" \
			"$KWQ_OUT/mod-kcsan/kwq_memcg_test.ko=/kwq/kwq_memcg_test.ko" \
			"${user_files[@]}"
	fi
fi

if [[ " $sections " == *" stock "* ]]; then
	# 7.2 is fetched from Debian unstable (versions in
	# tools/testing/sid-pins) and its build tree prepared once; a
	# failure to do so is a failed case like any other.
	for v in 6.1 6.12 7.2; do
		case $v in
		6.1) what='' typical="25 s" ;;
		6.12) what=", sparse, DKMS, make install" typical="2 min" ;;
		7.2) what='' typical="25 s; cold ~3 min to fetch and prepare its tree" ;;
		esac
		section "stock Debian $v kernel: W=1 build$what" "$typical"
		if ! out=$("$KWQ_ROOT/tools/testing/stock-kernel.sh" $v); then
			case_result "stock $v kernel available" FAIL
			continue
		fi
		kdir=$(sed -n 1p <<<"$out") image=$(sed -n 2p <<<"$out")
		run_check "W=1 build against $(basename "$kdir")" \
			"$KWQ_ROOT/tools/testing/build-module.sh" "$kdir" "$KWQ_OUT/mod-$v"
		if [ "$v" = 6.12 ] && [[ " $sections " == *" static "* ]]; then
			# sparse: C=2 checks every file; any warning fails.
			run_check "sparse (C=2) against $(basename "$kdir")" \
				"$KWQ_ROOT/tools/testing/build-module.sh" "$kdir" \
				"$KWQ_OUT/sparse-$v" C=2
		fi
		if [ "$v" = 6.12 ]; then
			krel=${kdir#/usr/src/linux-headers-}
			run_check "DKMS build against $krel" \
				"$KWQ_ROOT/tools/testing/dkms-check.sh" "$krel" "$KWQ_OUT/dkms"
			[[ " $sections " == *" static "* ]] &&
				run_check "DKMS build of the kwq-dkms package's tree against $krel" \
					"$KWQ_ROOT/tools/testing/dkms-check.sh" "$krel" "$KWQ_OUT/dkms-deb" \
					"$KWQ_OUT"/deb/kwq-dkms_*_all.deb
			run_check "make install/uninstall with DESTDIR and PREFIX" \
				"$KWQ_ROOT/tools/testing/install-check.sh" "$kdir" "$krel" "$KWQ_OUT/install"
		fi
		[ -f "$KWQ_OUT/mod-$v/kwq.ko" ] || continue
		example=$KWQ_OUT/mod-$v/kwq_example.ko
		if [ "$v" = 6.12 ] && [ -f "$KWQ_OUT/install/kwq_example.ko" ]; then
			# On 6.12 the example (the plan's and the lifecycle
			# test's) is the one install-check.sh built outside the
			# tree against the installed header and Module.symvers.
			say "stock-$v: example consumer built against the installed kwq"
			example=$KWQ_OUT/install/kwq_example.ko
		fi
		plan stock >"$KWQ_OUT/plan-$v"
		# Queued at once: it starts when a VM slot is free. Debian's
		# kernels patch their text for jump labels, which multi-
		# threaded TCG can leave stale on a vCPU (vm.sh -s).
		vm_single=1 vm_bg "stock-$v" "$image" "$KWQ_OUT/plan-$v" 900 \
			"$KWQ_OUT/mod-$v/kwq.ko=/kwq/kwq.ko" \
			"$example=/kwq/kwq_example.ko" \
			"$KWQ_OUT/mod-$v/kwq_memcg_test.ko=/kwq/kwq_memcg_test.ko" \
			"${user_files[@]}"
	done
fi

# make demo as a user runs it; its own terminal output (stdout) must tell
# the story: the narrated kwqctl commands, the retries with backoff, the
# Prometheus text, and the Go example controller's retries.
if [[ " $sections " == *" demo "* ]]; then
	# shellcheck disable=SC2016 # sh -c expands them
	bg_start demo sh -c '"$0"/tools/demo/demo.sh >"$1/demo.stdout"' "$KWQ_ROOT" "$jobs"
fi

section "waiting for the VMs" \
	"debug 6.12 ~6 min and ~3 (two VMs), debug 7.2 ~5.5, stock 6.1, 6.12, 7.2 and the self-test 1.5 each, the demo 0.5; $KWQ_VM_JOBS_IDLE at a time now"
# The host is done: its share of the cores goes to more VMs (KWQ_VM_JOBS_IDLE).
echo "$KWQ_VM_JOBS_IDLE" >"$jobs/slots"
for n in "${vm_order[@]}"; do
	vm_finish "$n"
	[ "$n" = debug-6.12b ] || continue
	printf '\n=== coverage of src/ in the debug 6.12 VMs (KWQ_GCOV=1)\n'
	# Both targets are test cases: a drop below one fails
	# (Documentation/testing.rst, "Coverage").
	"$KWQ_ROOT/tools/testing/coverage.py" --enforce lines,branches \
		--objdir "$KWQ_OUT/mod-debug-6.12/src" --out "$KWQ_OUT/coverage" \
		--counts "$counts" "$KWQ_OUT/logs/vm-debug-6.12.log" "$KWQ_OUT/logs/vm-$n.log"
done
if [[ " ${bg_names[*]} " == *" selftest "* ]]; then
	printf '\n=== harness self-test (each run below must FAIL, and for the right reason)\n'
	bg_finish selftest
fi
if [[ " ${bg_names[*]} " == *" demo "* ]]; then
	printf '\n=== make demo: what its terminal shows\n'
	demo_out=$jobs/demo.stdout
	if ! bg_finish demo >"$jobs/demo.log"; then
		case_result "make demo runs" FAIL "log $jobs/demo.log"
		tail -15 "$jobs/demo.log" | sed 's/^/       | /'
	else
		case_result "make demo runs" OK
	fi
	# demo_shows NAME FIXED-LINE...: every line appears, whole, in its
	# stdout; a line given as "TEXT..." need only start with TEXT.
	demo_shows() {
		local name=$1 l found missing=
		shift
		for l in "$@"; do
			if [ "${l%...}" != "$l" ]; then
				found=$(cut -c1-$((${#l} - 3)) "$demo_out" 2>/dev/null | grep -cxF -- "${l%...}")
			else
				found=$(grep -cxF -- "$l" "$demo_out" 2>/dev/null)
			fi
			[ "${found:-0}" -gt 0 ] || missing+=" '$l'"
		done
		if [ -z "$missing" ]; then
			case_result "make demo shows $name" OK
		else
			case_result "make demo shows $name" FAIL "missing:$missing ($demo_out)"
		fi
	}
	# What the story does, not its every figure: the story may change.
	demo_shows "the narrated kwqctl commands" \
		'$ kwqctl create pods --limiter exponential:100ms:2s --limiter bucket:50:10 ...' \
		'$ kwqctl add pods pod-1' '$ kwqctl shutdown pods --drain' \
		'$ kwqctl stats pods --prometheus' '$ kwqctl destroy pods'
	demo_shows "the retries with backoff" \
		'  reconcile pod-3: attempt 1 FAILED (dependency not ready)' \
		'  reconcile pod-3: attempt 2 FAILED (dependency not ready)' \
		'  reconcile pod-3: attempt 3 ok (KWQ_KEY=pod-3)' \
		'  reconcile pod-7: attempt 3 ok (KWQ_KEY=pod-7)'
	demo_shows "the Prometheus lines" \
		'# TYPE workqueue_adds_total counter' 'workqueue_adds_total{name="pods"} ...' \
		'workqueue_retries_total{name="pods"} ...'
	demo_shows "the Go example controller's retries with backoff" \
		'$ go-example -queue go-pods -keys 9 -workers 2 -v' \
		'  default/object-0000: transient failure 1; AddRateLimited (requeue 1, backoff 5ms)' \
		'  default/object-0000: transient failure 2; AddRateLimited (requeue 2, backoff 10ms)' \
		'  default/object-0000: reconciled; Forget' \
		'example: 9 keys, 2 workers, 4 retries, 0 not reconciled exactly once, ...'
fi
stage_done

read -r p f s < <(awk '{p+=$1; f+=$2; s+=$3} END {print p+0, f+0, s+0}' "$counts")
total=$(($(date +%s) - start))
printf '\n=== time per stage (s; background VMs overlap the stages after them)\n'
awk -F'\t' '{ printf "  %5d  %s\n", $1, $2 }' "$stages"
printf '  %5d  total (wall clock; load average now %s)\n' "$total" \
	"$(cut -d' ' -f1-3 /proc/loadavg)"
printf '\n=== the host checks that took most CPU (s: CPU, wall; all in %s)\n' "$KWQ_OUT/checks"
sort -t"$(printf '\t')" -k2,2nr "$KWQ_OUT/checks" | head -8 |
	awk -F'\t' '{ printf "  %5.1f %5.1f  %s\n", $2 / 1000, $1 / 1000, substr($3, 1, 64) }'
section "summary ($total s; logs in $KWQ_OUT/logs)"
stage=
echo "$p passed, $f failed, $s skipped"
if [ "$s" != 0 ] && [ "${KWQ_ALLOW_SKIP:-0}" != 1 ]; then
	echo "error: $s cases skipped (their suites say \"skipped\" above); KWQ_ALLOW_SKIP=1 accepts that"
	exit 1
fi
[ "$f" = 0 ]
