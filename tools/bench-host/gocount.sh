#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The Go package's own instructions per call, counted by callgrind on the
# host (make bench-host runs it after the core): userspace/go built with
# -tags kwqcount, whose calls that never wait reach a stand-in kernel
# (ioctlnow_count.go) instead of an ioctl. Each operation runs N1 and N2
# times; the difference over N2 - N1 is the cost of one call without
# the program's start. Prints "figure host_go_instr_OP N" lines.
set -euo pipefail
. "$(dirname "$0")/../testing/lib.sh"

out=${KWQ_BENCH_HOST_OUT:-$KWQ_OUT/bench-host}/go
n1=100000 n2=300000
need_pkg valgrind valgrind
mkdir -p "$out"
out=$(realpath "$out")
"$KWQ_ROOT/tools/testing/go-env.sh" go build -tags kwqcount -trimpath \
	-o "$out/gocount" "$KWQ_ROOT/tools/bench-host/gocount/main.go"

# refs OP N: callgrind's instruction total for N calls of OP. Go's
# asynchronous preemption signals upset callgrind: off. One P: a
# contended runtime lock reads the TSC with RDTSCP (lock_spinbit.go),
# which valgrind 3.19 cannot decode (SIGILL, seen on a loaded host).
refs() {
	env -i PATH=/usr/bin:/bin LC_ALL=C GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 \
		valgrind --tool=callgrind --callgrind-out-file="$out/cg.$1.$2" \
		"$out/gocount" "$1" "$2" 2>"$out/vg.$1.$2" ||
		{ tail -20 "$out/vg.$1.$2" >&2; die "gocount $1 $2 failed under callgrind"; }
	awk '/I[ ]+refs:/ { gsub(",", "", $NF); print $NF }' "$out/vg.$1.$2"
}

echo "the Go package's own instructions per call (a stand-in kernel of a few tens included):"
for op in add donegetone addafter tryaddafter; do
	a=$(refs "$op" $n1)
	b=$(refs "$op" $n2)
	if [ -z "$a" ] || [ -z "$b" ]; then
		die "no instruction count for $op"
	fi
	echo "figure host_go_instr_$op $(((b - a) / (n2 - n1)))"
done
