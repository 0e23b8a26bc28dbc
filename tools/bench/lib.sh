# shellcheck shell=bash
# Shared by tools/bench/bench.sh and tools/bench/profile.sh: what the
# benchmark VM runs and how it boots. Sourced, never run.
. "$(dirname "${BASH_SOURCE[0]}")/../testing/lib.sh"

# bench_build OUT: against Debian's stock 6.12 kernel (fetched if needed),
# build OUT/mod/kwq.ko, OUT/benchmod/tools/bench/kwq_bench.ko, the static
# OUT/user/kwq_ubench and OUT/user/kwq-gobench (plus the host's
# OUT/user/tsc_khz). Sets
# BENCH_IMAGE (the kernel to boot) and BENCH_VM_ARGS (its command line).
bench_build() {
	local out=$1 stock kdir tsc_khz
	need_pkg gcc gcc
	need_pkg make make
	need_pkg libc6-dev /usr/include/stdio.h
	stock=$("$KWQ_ROOT/tools/testing/stock-kernel.sh" 6.12)
	kdir=$(sed -n 1p <<<"$stock")
	# shellcheck disable=SC2034 # for the caller
	BENCH_IMAGE=$(sed -n 2p <<<"$stock")

	say "building kwq.ko against $(basename "$kdir")"
	"$KWQ_ROOT/tools/testing/build-module.sh" "$kdir" "$out/mod"
	say "building kwq_bench.ko"
	rm -rf "$out/benchmod"
	mkdir -p "$out/benchmod/tools"
	cp -r "$KWQ_ROOT/tools/bench" "$out/benchmod/tools/"
	ln -s "$out/mod/src/include" "$out/benchmod/include"
	if ! make -C "$kdir" M="$out/benchmod/tools/bench" W=1 \
		KBUILD_EXTRA_SYMBOLS="$out/mod/src/Module.symvers" modules \
		>"$out/benchmod/build.log" 2>&1 ||
		grep -E '(warning|error):' "$out/benchmod/build.log" >&2; then
		die "kwq_bench.ko build failed (log: $out/benchmod/build.log)"
	fi
	say "building kwq_ubench"
	make -s -C "$KWQ_ROOT/tools/bench" OUT="$out/user" >&2
	say "building kwq-gobench (Go and client-go from Debian unstable)"
	"$KWQ_ROOT/tools/testing/go-env.sh" go build -trimpath -o "$out/user/kwq-gobench" \
		kwq.dev/kwq/cmd/kwq-gobench

	# Keep the TSC as the guest's clocksource (see tsc_khz.c): without it
	# the guest runs on jiffies (4 ms resolution, no high-resolution timers).
	tsc_khz=$("$out/user/tsc_khz")
	# shellcheck disable=SC2034 # for the caller
	BENCH_VM_ARGS="slab_nomerge tsc_early_khz=$tsc_khz tsc=reliable ${KWQ_BENCH_ARGS:-}"
}
