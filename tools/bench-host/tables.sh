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
. "$(dirname "$0")/cgjobs.sh"

out=${KWQ_BENCH_HOST_OUT:-$KWQ_OUT/bench-host}
sizes=${KWQ_BENCH_HOST_N:-1000 1000000}
rounds=${KWQ_BENCH_TABLES_M:-100000}
start=$(date +%s)

cg_need

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

cg_setup tablebench "$bin"
cg_run_all "$res" "${jobs[@]}"

python3 "$KWQ_ROOT/tools/bench-host/tables.py" "$res"
cg_footer "$res"
