#!/bin/bash
# make bench-host: the unmodified queue core (src/) built against userspace
# shims and measured under valgrind's callgrind with its cache simulator:
# instructions and last-level cache misses per operation, which, unlike
# times on a shared machine, repeat exactly from run to run.
# Documentation/benchmarks.rst ("Host benchmark") explains the scenarios.
#
# Builds tools/bench-host (Makefile) into $KWQ_BENCH_HOST_OUT (default
# build/bench-host), runs every scenario once natively (times, for
# information) and once under callgrind, KWQ_JOBS at a time (default: one
# per core), then prints the table and the target lines and writes:
#   results.csv    per operation and N: Ir, LL and D1 misses, ratios
#   holds.csv      every critical section of the hash table growth and
#                  the first 8192 of the delay wheel's expiry
#   memory.csv     bytes per queued item
#   functions.csv  self instructions per function, worker loop
#   targets.csv    the target lines
#   table.txt      what was printed
#   run/<job>/     callgrind dumps and the driver's output
# Knobs (environment): KWQ_BENCH_HOST_N ("1000 1000000": the sizes),
# KWQ_BENCH_HOST_LOOP (100000: worker loop rounds), KWQ_BENCH_HOST_AFTER
# (10000: add_after calls with N waiting), KWQ_BENCH_HOST_CACHE (callgrind
# cache options, default a fixed 32 KiB D1/I1 and 8 MiB LL so the counts
# do not depend on the host CPU).
set -euo pipefail
. "$(dirname "$0")/../testing/lib.sh"

out=${KWQ_BENCH_HOST_OUT:-$KWQ_OUT/bench-host}
sizes=${KWQ_BENCH_HOST_N:-1000 1000000}
loop=${KWQ_BENCH_HOST_LOOP:-100000}
after=${KWQ_BENCH_HOST_AFTER:-10000}
cache=${KWQ_BENCH_HOST_CACHE:---I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64}
start=$(date +%s)

need_pkg gcc gcc
need_pkg make make
need_pkg python3 python3
need_pkg libc6-dev /usr/include/stdio.h
need_pkg xz-utils xz
need_pkg valgrind valgrind /usr/include/valgrind/callgrind.h
need_pkg "$KWQ_SRC_PKG" /usr/src/linux-source-6.12.tar.xz

mkdir -p "$out"
out=$(realpath "$out")
say "building the host benchmark in $out"
make -s -j"$KWQ_JOBS" -C "$KWQ_ROOT/tools/bench-host" B="$out"
bin=$out/hostbench
rm -rf "$out/run" "$out"/*.csv "$out"/table.txt

# Largest first, so the two cores finish together.
jobs=()
for n in $(tr ' ' '\n' <<<"$sizes" | sort -rn); do
	jobs+=("fill-$n:fill $n" "far-$n:after-far $n $after"
		"near-$n:after-near $n $after" "steady-$n:steady $n $loop")
done

# The program runs from a path and with an environment that are the same
# whatever $out is: their sizes move the initial stack (the path is also
# in the auxiliary vector), and with it which cache sets the stack's lines
# fall in. Callgrind's output path is valgrind's own and does not matter.
rundir=$(mktemp -d /tmp/kwq-hostbench.XXXXXXXX)
trap 'rm -rf "$rundir"' EXIT
cp "$bin" "$rundir/hostbench"
clean_env=(env -i PATH=/usr/bin:/bin LC_ALL=C)

run_job() {
	local name=$1 args=$2 dir=$out/run/$1
	mkdir -p "$dir"
	echo "$bin" >"$dir/binary"
	# shellcheck disable=SC2086
	(cd "$rundir" && "${clean_env[@]}" ./hostbench $args) \
		>"$dir/native.out" 2>"$dir/native.err" || {
		cat "$dir/native.err" >&2
		die "$name failed natively"
	}
	# shellcheck disable=SC2086
	(cd "$rundir" && "${clean_env[@]}" valgrind --tool=callgrind --cache-sim=yes \
		--compress-strings=no --compress-pos=no $cache \
		--callgrind-out-file="$dir/cg.%p" ./hostbench $args) \
		>"$dir/vg.out" 2>"$dir/vg.err" || {
		tail -20 "$dir/vg.err" >&2
		die "$name failed under callgrind"
	}
	touch "$dir/ok"
	say "$name done ($(($(date +%s) - start)) s)"
}

say "running ${#jobs[@]} scenarios under callgrind, $KWQ_JOBS at a time"
for job in "${jobs[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$KWQ_JOBS" ]; do
		wait -n || true
	done
	run_job "${job%%:*}" "${job#*:}" &
done
wait
for job in "${jobs[@]}"; do
	[ -f "$out/run/${job%%:*}/ok" ] || die "scenario ${job%%:*} failed (see above)"
done

python3 "$KWQ_ROOT/tools/bench-host/report.py" "$out"
src=$(git -C "$KWQ_ROOT" log -1 --format='%h %s' -- src include 2>/dev/null || true)
echo "core measured: ${src:-unknown}$(git -C "$KWQ_ROOT" diff --quiet HEAD -- src include 2>/dev/null || echo ' (with uncommitted changes)')"
echo "results in $out; wall time $(($(date +%s) - start)) s"
