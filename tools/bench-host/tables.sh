#!/bin/bash
# make bench-host-tables: the kernel's rhashtable against kwq's own hash
# table (tablebench.c, rhtb.c), on the host benchmark's keys, shims and
# callgrind cache model. Documentation/benchmarks.rst, "rhashtable
# against kwq's table", says what is measured and what came out.
#
# Builds tools/bench-host (make tables) into $KWQ_BENCH_HOST_OUT (default
# build/bench-host), runs each table at each size once natively (times,
# for information) and once under callgrind, KWQ_JOBS at a time, then
# prints the table (tables.py) and writes to tables/: results.csv,
# holds.csv, table.txt and run/<job>/ (callgrind dumps, driver output).
# Knobs (environment): KWQ_BENCH_HOST_N ("1000 1000000"),
# KWQ_BENCH_TABLES_M (100000: insert + remove rounds with N keys present,
# at most N), KWQ_BENCH_HOST_CACHE (as run.sh).
set -euo pipefail
. "$(dirname "$0")/../testing/lib.sh"

out=${KWQ_BENCH_HOST_OUT:-$KWQ_OUT/bench-host}
sizes=${KWQ_BENCH_HOST_N:-1000 1000000}
rounds=${KWQ_BENCH_TABLES_M:-100000}
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
say "building the table benchmark in $out"
make -s -j"$KWQ_JOBS" -C "$KWQ_ROOT/tools/bench-host" B="$out" tables
bin=$out/tablebench
res=$out/tables
rm -rf "$res"
mkdir -p "$res"

jobs=()
for n in $(tr ' ' '\n' <<<"$sizes" | sort -rn); do
	m=$((rounds < n ? rounds : n))
	for t in kwq rht-sip rht-jhash; do
		jobs+=("$t-$n:$t $n $m")
	done
done

# As run.sh: a fixed path and environment, so the stack does not move.
rundir=$(mktemp -d /tmp/kwq-tablebench.XXXXXXXX)
trap 'rm -rf "$rundir"' EXIT
cp "$bin" "$rundir/tablebench"
clean_env=(env -i PATH=/usr/bin:/bin LC_ALL=C)

run_job() {
	local name=$1 args=$2 dir=$res/run/$1
	mkdir -p "$dir"
	# shellcheck disable=SC2086
	(cd "$rundir" && "${clean_env[@]}" ./tablebench $args) \
		>"$dir/native.out" 2>"$dir/native.err" || {
		cat "$dir/native.err" >&2
		die "$name failed natively"
	}
	# shellcheck disable=SC2086
	(cd "$rundir" && "${clean_env[@]}" valgrind --tool=callgrind --cache-sim=yes \
		--compress-strings=no --compress-pos=no $cache \
		--callgrind-out-file="$dir/cg.%p" ./tablebench $args) \
		>"$dir/vg.out" 2>"$dir/vg.err" || {
		tail -20 "$dir/vg.err" >&2
		die "$name failed under callgrind"
	}
	touch "$dir/ok"
	say "$name done ($(($(date +%s) - start)) s)"
}

say "running ${#jobs[@]} jobs under callgrind, $KWQ_JOBS at a time"
for job in "${jobs[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$KWQ_JOBS" ]; do
		wait -n || true
	done
	run_job "${job%%:*}" "${job#*:}" &
done
wait
for job in "${jobs[@]}"; do
	[ -f "$res/run/${job%%:*}/ok" ] || die "job ${job%%:*} failed (see above)"
done

python3 "$KWQ_ROOT/tools/bench-host/tables.py" "$res"
src=$(git -C "$KWQ_ROOT" log -1 --format='%h %s' -- src include 2>/dev/null || true)
echo "core measured: ${src:-unknown}$(git -C "$KWQ_ROOT" diff --quiet HEAD -- src include 2>/dev/null || echo ' (with uncommitted changes)')"
echo "results in $res; wall time $(($(date +%s) - start)) s"
