#!/bin/bash
# make check: everything kwq's CI verifies, in one run.
#
#   1. static checks: checkpatch --strict, sparse (C=2), W=1 builds
#   2. the debug kernel (KUnit, KASAN, lockdep, kmemleak, UBSAN...) in QEMU:
#      kwq.ko + KUnit suites + userspace tests
#   3. Debian's stock kernels in QEMU (bookworm's 6.1 and 6.12, unstable's
#      7.2 through tools/testing/sid-kernel.sh): W=1 build, load,
#      userspace tests, unload
#   4. the harness self-test: deliberately broken modules must fail
#
# Each check is one or more test cases; the last line is the summary
# "N passed, N failed, N skipped". Logs stay in $KWQ_OUT (default build/).
# KWQ_CHECK_ONLY="static debug stock selftest" picks sections; "kcsan"
# (make check-kcsan) runs the suites on the KCSAN kernel.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

sections=${KWQ_CHECK_ONLY:-static debug stock selftest}
mkdir -p "$KWQ_OUT"
KWQ_OUT=$(realpath "$KWQ_OUT")
counts=$KWQ_OUT/counts
: >"$counts"
start=$(date +%s)

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

# run_check NAME CMD...: run CMD quietly as one case; show its output on failure.
run_check() {
	local name=$1 log
	shift
	log=$KWQ_OUT/logs/$(echo "$name" | tr -c 'A-Za-z0-9._-' _).log
	mkdir -p "$KWQ_OUT/logs"
	if "$@" >"$log" 2>&1; then
		case_result "$name" OK
	else
		case_result "$name" FAIL "log $log"
		tail -15 "$log" | sed 's/^/       | /'
	fi
}

section() { printf '\n=== %s\n' "$*"; }

# vm_run NAME KERNEL PLAN TIMEOUT FILES...: boot, then judge the log.
vm_run() {
	local name=$1 kernel=$2 plan=$3 timeout=$4 log
	shift 4
	log=$KWQ_OUT/logs/vm-$name.log
	mkdir -p "$KWQ_OUT/logs"
	say "booting $name ($(basename "$kernel")), console log: $log"
	"$KWQ_ROOT/tools/testing/vm.sh" -k "$kernel" -o "$log" -p "$plan" \
		-t "$timeout" "$@"
	"$KWQ_ROOT/tools/testing/report.py" ${report_args:-} --label "$name: $kernel" \
		--counts "$counts" --failures "$KWQ_OUT/logs/vm-$name.failures" "$log"
}

need_pkg gcc gcc
need_pkg make make
need_pkg python3 python3
need_pkg libc6-dev /usr/include/stdio.h
# The 32-bit ABI suite (abi32_test) needs gcc -m32 -static: without it the
# suite would silently not exist.
need_pkg gcc-multilib /usr/lib32/libc.a

# Userspace test programs (static, so the initramfs needs no libc).
section "userspace test programs"
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
user_plan=
debug_user_plan=
# Suites that need the debug kernel's options and are in its plan alone,
# not skipped elsewhere: failnth needs fail-nth, failslab and
# fail_page_alloc (CONFIG_FAULT_INJECTION_DEBUG_FS, CONFIG_FAILSLAB,
# CONFIG_FAIL_PAGE_ALLOC), which stock Debian kernels lack.
debug_only=" failnth "
# Helper programs (kwqctl, ...) go to /usr/bin; each *_test is one test.
for t in "$KWQ_OUT"/user/bin/*; do
	[ -f "$t" ] && user_files+=("$t=/usr/bin/$(basename "$t")")
done
# The shell suites source it from their own directory.
user_files+=("$KWQ_OUT/user/ktap.sh=/kwq/tests/ktap.sh")
for t in "$KWQ_OUT"/user/*_test; do
	[ -x "$t" ] || continue
	user_files+=("$t=/kwq/tests/$(basename "$t")")
	line="user_test $(basename "$t" _test) /kwq/tests/$(basename "$t")"$'\n'
	if [[ "$debug_only" == *" $(basename "$t" _test) "* ]]; then
		debug_user_plan+=$line
	else
		user_plan+=$line
	fi
done

# plan WITH_KUNIT [debug]: the VM plan for one kernel; "debug" (the debug
# kernel alone) adds the debug-only userspace suites.
plan() {
	echo "load_module /kwq/kwq.ko"
	echo 'expect "/dev/kwq is a character device" test -c /dev/kwq'
	if [ "$1" = yes ]; then
		# The suite kwq_fault drives fail-nth (init.sh: fault_attrs).
		echo 'expect "fault attributes: fail-nth decides" fault_attrs'
		echo "kunit_module /kwq/kwq_test.ko"
	fi
	# The example consumer reports at unload whether every key completed.
	echo "load_module /kwq/kwq_example.ko"
	echo "unload_module kwq_example"
	echo "expect \"example consumer completed every key once\" sh -c 'dmesg | grep -q \"kwq_example: PASS:\"'"
	printf '%s' "$user_plan"
	[ "${2:-}" = debug ] && printf '%s' "$debug_user_plan"
	# Every key reconciled exactly once, some after rate-limited retries.
	echo 'expect "Go example controller reconciles every key once" /usr/bin/go-example -keys 300 -workers 4'
	echo "unload_module kwq"
}

if [[ " $sections " == *" static "* ]]; then
	section "static checks"
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
		run_check "checkpatch ${f#"$KWQ_ROOT"/}" perl "$srcdir/scripts/checkpatch.pl" \
			--strict --no-tree --quiet --show-types $ignore -f "$f"
	done < <(find "$KWQ_ROOT/src" "$KWQ_ROOT/include" "$KWQ_ROOT/kunit" \
		"$KWQ_ROOT/tools/testing/selftest" "$KWQ_ROOT/tools/testing/memcg" \
		"$KWQ_ROOT/tools/example" -name '*.[ch]' | sort)
	# kwqctl too, but for what only the kernel has: C99's <stdint.h>
	# types and <inttypes.h>'s PRIu64 (libkwq's API), no __printf().
	for f in "$KWQ_ROOT"/userspace/kwqctl/*.[ch]; do
		run_check "checkpatch ${f#"$KWQ_ROOT"/}" perl "$srcdir/scripts/checkpatch.pl" \
			--strict --no-tree --quiet --show-types \
			--ignore PREFER_KERNEL_TYPES,CAMELCASE,PREFER_DEFINED_ATTRIBUTE_MACRO -f "$f"
	done
	run_check "shellcheck userspace/kwqctl/kwqctl.bash" \
		shellcheck "$KWQ_ROOT/userspace/kwqctl/kwqctl.bash"
	# libkwq's pure functions, and kwqctl's --help, usage errors and
	# completion: on the host, no kernel needed.
	run_check "host unit tests and kwqctl usage (make host-test)" \
		make -C "$KWQ_ROOT/userspace" host-test BUILD="$KWQ_OUT/host-user"
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
	run_check "go vet and host tests of the Go package kwq.dev/kwq (ABI against the C header)" sh -c \
		'mkdir -p "$2" && gcc -Wall -Wextra -Werror -I"$1/include/uapi" -o "$2/abi" "$1/userspace/go/testdata/abi.c" &&
		"$2/abi" >"$2/abi.txt" &&
		"$0" go vet kwq.dev/kwq kwq.dev/kwq/compat kwq.dev/kwq/cmd/kwq-gotest kwq.dev/kwq/example &&
		KWQ_ABI_FILE="$2/abi.txt" "$0" go test -count=1 -v kwq.dev/kwq' \
		"$goenv" "$KWQ_ROOT" "$KWQ_OUT/go"
	cgver=$(sid_pin golang-k8s-client-go-dev)
	run_check "*kwq.Queue is a client-go ${cgver%-*} workqueue.TypedRateLimitingInterface[string]" \
		"$goenv" go test -count=1 -v kwq.dev/kwq/compat
fi

# Kernels: the debug one is built once and cached; the stock ones come
# from Debian's packages.
if [[ " $sections " == *" debug "* || " $sections " == *" selftest "* ]]; then
	section "debug test kernel"
	if kdebug=$("$KWQ_ROOT/tools/testing/build-kernel.sh" \
		"$KWQ_ROOT/tools/testing/config/debug.config"); then
		case_result "debug kernel config + build ($(basename "$kdebug"))" OK
	else
		case_result "debug kernel config + build" FAIL
		kdebug=
	fi
fi

if [[ " $sections " == *" debug "* ]] && [ -n "$kdebug" ]; then
	section "debug kernel: KUnit + userspace tests"
	run_check "W=1 build against debug 6.12 kernel" \
		"$KWQ_ROOT/tools/testing/build-module.sh" "$kdebug" "$KWQ_OUT/mod-debug"
	# One direction between src/ files: no file calls into one that
	# calls it (Documentation/design.rst, "The map").
	run_check "no call cycles between src/ files" \
		"$KWQ_ROOT/tools/testing/layers.py" --src "$KWQ_ROOT/src" \
		--svg "$KWQ_OUT/map.svg" "$KWQ_OUT/mod-debug/src/src"
	# The picture in design.rst is that graph: redraw it when it changes
	# (tools/testing/layers.py --svg Documentation/map.svg OBJDIR).
	run_check "Documentation/map.svg is the call graph" \
		cmp "$KWQ_OUT/map.svg" "$KWQ_ROOT/Documentation/map.svg"
	# The kernel's semantic patches; remembered per source tree.
	need_pkg coccinelle spatch
	run_check "coccicheck reports nothing on src/, include/ and kunit/" \
		"$KWQ_ROOT/tools/testing/coccicheck.sh" "$kdebug"
	if [ -f "$KWQ_OUT/mod-debug/kwq_test.ko" ]; then
		plan yes debug >"$KWQ_OUT/plan-debug"
		# About 5 min alone on 2 cores; the timeout only catches a
		# hang, and another VM on the machine can double the time.
		vm_run debug "$kdebug/arch/x86/boot/bzImage" "$KWQ_OUT/plan-debug" 1200 \
			"$KWQ_OUT/mod-debug/kwq.ko=/kwq/kwq.ko" \
			"$KWQ_OUT/mod-debug/kwq_test.ko=/kwq/kwq_test.ko" \
			"$KWQ_OUT/mod-debug/kwq_example.ko=/kwq/kwq_example.ko" \
			"$KWQ_OUT/mod-debug/kwq_memcg_test.ko=/kwq/kwq_memcg_test.ko" \
			"${user_files[@]}"
	fi
fi

# make check-kcsan (not in the default sections: the KCSAN kernel is a
# second ~10 min build and its run is slow): the same plan under KCSAN,
# counting only reports that name kwq.
if [[ " $sections " == *" kcsan "* ]]; then
	section "KCSAN test kernel: KUnit + userspace tests"
	if kkcsan=$("$KWQ_ROOT/tools/testing/build-kernel.sh" \
		"$KWQ_ROOT/tools/testing/config/kcsan.config"); then
		case_result "KCSAN kernel config + build ($(basename "$kkcsan"))" OK
		run_check "W=1 build against KCSAN 6.12 kernel" \
			"$KWQ_ROOT/tools/testing/build-module.sh" "$kkcsan" "$KWQ_OUT/mod-kcsan"
	else
		case_result "KCSAN kernel config + build" FAIL
	fi
	if [ -f "$KWQ_OUT/mod-kcsan/kwq_test.ko" ]; then
		plan yes >"$KWQ_OUT/plan-kcsan"
		report_args=--kcsan-only-kwq vm_run kcsan "$kkcsan/arch/x86/boot/bzImage" \
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
		section "stock Debian $v kernel"
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
		plan no >"$KWQ_OUT/plan-$v"
		vm_run "stock-$v" "$image" "$KWQ_OUT/plan-$v" 600 \
			"$KWQ_OUT/mod-$v/kwq.ko=/kwq/kwq.ko" \
			"$example=/kwq/kwq_example.ko" \
			"$KWQ_OUT/mod-$v/kwq_memcg_test.ko=/kwq/kwq_memcg_test.ko" \
			"${user_files[@]}"
	done
fi

if [[ " $sections " == *" selftest "* ]] && [ -n "$kdebug" ]; then
	section "harness self-test (each run below must FAIL, and for the right reason)"
	"$KWQ_ROOT/tools/testing/selftest.sh" "$kdebug" "$KWQ_OUT/selftest" "$counts"
fi

read -r p f s < <(awk '{p+=$1; f+=$2; s+=$3} END {print p+0, f+0, s+0}' "$counts")
section "summary ($(($(date +%s) - start)) s; logs in $KWQ_OUT/logs)"
echo "$p passed, $f failed, $s skipped"
[ "$f" = 0 ]
