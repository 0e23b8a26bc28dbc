# SPDX-License-Identifier: GPL-2.0
# Sourced by run.sh (make bench-host) and tables.sh (make
# bench-host-tables): run a benchmark program's jobs once natively (times,
# for information) and once under callgrind, KWQ_JOBS at a time. Uses the
# caller's $start (date +%s).
#
# The program runs from a path and with an environment that are the same
# whatever the output directory is: their sizes move the initial stack
# (the path is also in the auxiliary vector), and with it which cache
# sets the stack's lines fall in. Callgrind's output path is valgrind's
# own and does not matter.

# The callgrind cache model (KWQ_BENCH_HOST_CACHE): a fixed 32 KiB D1/I1
# and 8 MiB LL, so the counts do not depend on the host CPU.
cache=${KWQ_BENCH_HOST_CACHE:---I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64}

# cg_need: what building and running a host benchmark needs.
cg_need() {
	need_pkg gcc gcc
	need_pkg make make
	need_pkg python3 python3
	need_pkg libc6-dev /usr/include/stdio.h
	need_pkg xz-utils xz
	need_pkg valgrind valgrind /usr/include/valgrind/callgrind.h
	need_pkg "$KWQ_SRC_PKG" /usr/src/linux-source-6.12.tar.xz
}

# cg_setup PROG BIN: BIN, copied to /tmp/kwq-PROG.XXXXXXXX/PROG, is what
# the jobs run; the directory goes at exit.
cg_setup() {
	cg_prog=$1
	cg_bin=$2
	cg_rundir=$(mktemp -d "/tmp/kwq-$1.XXXXXXXX")
	# shellcheck disable=SC2064
	trap "rm -rf '$cg_rundir'" EXIT
	cp "$2" "$cg_rundir/$1"
	cg_env=(env -i PATH=/usr/bin:/bin LC_ALL=C)
}

# cg_run_job NAME ARGS RES: one job; its output in RES/run/NAME/.
cg_run_job() {
	local name=$1 args=$2 dir=$3/run/$1
	mkdir -p "$dir"
	echo "$cg_bin" >"$dir/binary"
	# shellcheck disable=SC2086
	(cd "$cg_rundir" && "${cg_env[@]}" "./$cg_prog" $args) \
		>"$dir/native.out" 2>"$dir/native.err" || {
		cat "$dir/native.err" >&2
		die "$name failed natively"
	}
	# shellcheck disable=SC2086
	(cd "$cg_rundir" && "${cg_env[@]}" valgrind --tool=callgrind \
		--cache-sim=yes --compress-strings=no --compress-pos=no $cache \
		--callgrind-out-file="$dir/cg.%p" "./$cg_prog" $args) \
		>"$dir/vg.out" 2>"$dir/vg.err" || {
		tail -20 "$dir/vg.err" >&2
		die "$name failed under callgrind"
	}
	touch "$dir/ok"
	say "$name done ($(($(date +%s) - start)) s)"
}

# cg_run_all RES JOB...: every "NAME:ARGS" job, KWQ_JOBS at a time;
# dies if one failed.
cg_run_all() {
	local res=$1 job
	shift
	say "running $# jobs under callgrind, $KWQ_JOBS at a time"
	for job; do
		while [ "$(jobs -rp | wc -l)" -ge "$KWQ_JOBS" ]; do
			wait -n || true
		done
		cg_run_job "${job%%:*}" "${job#*:}" "$res" &
	done
	wait
	for job; do
		[ -f "$res/run/${job%%:*}/ok" ] || die "job ${job%%:*} failed (see above)"
	done
}

# cg_footer RES: which core was measured, where the results are.
cg_footer() {
	local src
	src=$(git -C "$KWQ_ROOT" log -1 --format='%h %s' -- src include 2>/dev/null || true)
	echo "core measured: ${src:-unknown}$(git -C "$KWQ_ROOT" diff --quiet HEAD -- src include 2>/dev/null || echo ' (with uncommitted changes)')"
	echo "results in $1; wall time $(($(date +%s) - start)) s"
}
