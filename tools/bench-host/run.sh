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
. "$(dirname "$0")/cgjobs.sh"

out=${KWQ_BENCH_HOST_OUT:-$KWQ_OUT/bench-host}
sizes=${KWQ_BENCH_HOST_N:-1000 1000000}
loop=${KWQ_BENCH_HOST_LOOP:-100000}
after=${KWQ_BENCH_HOST_AFTER:-10000}
start=$(date +%s)

cg_need

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

cg_setup hostbench "$bin"
cg_run_all "$out" "${jobs[@]}"

python3 "$KWQ_ROOT/tools/bench-host/report.py" "$out"
"$KWQ_ROOT/tools/bench-host/gocount.sh"
cg_footer "$out"
