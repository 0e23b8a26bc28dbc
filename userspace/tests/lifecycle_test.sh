#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Module lifecycle, in the test VM (root, busybox sh, kwqctl in PATH,
# modules in /kwq): rmmod kwq is refused while an fd of /dev/kwq is open
# and while another module (kwq_example, which uses kwq's exported
# symbols) holds a queue; then CYCLES (100) insmod/rmmod cycles, each
# with a short workload and a queue left behind with keys ready,
# processing and waiting (the unload destroys it). The harness loaded
# kwq.ko before this test and unloads it after, so it leaves kwq loaded.
# kmemleak is checked by the harness at the end of the run. make check
# runs the 100 cycles on the debug 7.2 kernel and 10 elsewhere
# (tools/testing/check.sh, lifecycle_few). Prints KTAP (tests/ktap.sh).
#
# Where a cycle's time goes on the KASAN kernels (debug 7.2 after KUnit,
# ad-hoc VM, 10 cycles each way): rmmod 0.72-0.77 s when the nine
# SLAB_TYPESAFE_BY_RCU node caches were destroyed one after the other
# (0.47 s of it: kmem_cache_destroy() waits for kfree_rcu and RCU
# barriers and flushes KASAN's quarantine, per cache), 0.60 s since they
# end side by side (0.29 s; src/table.c); insmod 0.28-0.30 s; the
# workload 0.83 s as 13 kwqctl runs (mostly fork and exec: 10 runs of
# /bin/true take 0.6-1 s there), 0.20 s as one kwqctl batch.
CYCLES=${CYCLES:-100}
MOD=${KWQ_MOD:-/kwq/kwq.ko}
EXAMPLE=${KWQ_EXAMPLE:-/kwq/kwq_example.ko}
# A cycle takes 0.5 s on an idle host, 3 s on the KASAN kernels with the
# VMs of make check sharing 2 busy cores: 6 s each catches a hang without
# failing a slow machine.
. "$(dirname "$0")/ktap.sh"
ktap_begin kwq_lifecycle 8 $((CYCLES * 6 + 60))

loaded() { grep -q "^kwq " /proc/modules; }
# wait_dev: devtmpfs creates /dev/kwq at misc_register
wait_dev() {
	w=0
	while [ ! -c /dev/kwq ] && [ $w -lt 50 ]; do sleep 0.1; w=$((w + 1)); done
	[ -c /dev/kwq ]
}

loaded
check kwq_loaded_at_start $? "kwq is not loaded"

# 1. an open fd pins the module
exec 3<>/dev/kwq
out=$(rmmod kwq 2>&1)
r=$?
loaded
[ $r != 0 ] && loaded
check rmmod_refused_while_fd_open $? "rmmod exit $r: $out"
exec 3>&-

# 2. a module using kwq's symbols (and holding a queue) pins it
if [ -f "$EXAMPLE" ]; then
	insmod "$EXAMPLE"
	r1=$?
	out=$(rmmod kwq 2>&1)
	r=$?
	[ $r1 = 0 ] && [ $r != 0 ] && loaded
	check rmmod_refused_while_module_holds_queue $? "insmod example $r1, rmmod kwq $r: $out"
	rmmod kwq_example
	check rmmod_example_then_ok $? "rmmod kwq_example failed"
else
	n=$((n + 1)); echo "    ok $n rmmod_refused_while_module_holds_queue # SKIP no $EXAMPLE"
	n=$((n + 1)); echo "    ok $n rmmod_example_then_ok # SKIP no $EXAMPLE"
fi

# 3. cycles: load, short workload, leave a populated queue, unload
bad=0 why=
i=0
while [ $i -lt "$CYCLES" ]; do
	i=$((i + 1))
	if ! out=$(rmmod kwq 2>&1); then bad=1; why="cycle $i: rmmod: $out"; break; fi
	if ! out=$(insmod "$MOD" 2>&1); then bad=1; why="cycle $i: insmod: $out"; break; fi
	if ! wait_dev; then bad=1; why="cycle $i: no /dev/kwq"; break; fi
	# The workload, one kwqctl process (batch) instead of 13: a queue
	# left with keys ready, processing and waiting, and a second one
	# destroyed (both paths of teardown). len's line is last.
	q=cyc$i
	printf '%s\n' "create $q --max-items 1000" "add $q a b c d e f" \
		"add $q --after 1h later" "get $q --timeout 0 -n 2" "done $q a" \
		"add-rate-limited $q g" "create tmp$i" "add tmp$i x" \
		"destroy tmp$i" "len $q" >/tmp/lc.in
	out=$(kwqctl batch /tmp/lc.in 2>&1) || { bad=1; why="cycle $i: workload: $out"; break; }
	len=${out##*
}
	[ "$len" -ge 4 ] 2>/dev/null || { bad=1; why="cycle $i: len $len: $out"; break; }
done
# one more unload (of cycle $CYCLES's queues) and load
[ $bad = 0 ] && { out=$(rmmod kwq 2>&1 && insmod "$MOD" 2>&1 && wait_dev) ||
	{ bad=1; why="final reload: $out"; }; }
check "insmod_rmmod_${CYCLES}_cycles_with_workload" $bad "$why"
echo "    # $i cycles"

# the module left loaded for the harness, and working
loaded
check kwq_loaded_at_end $? "kwq not loaded after the cycles"
kwqctl create lc-final >/dev/null 2>&1 && kwqctl add lc-final k >/dev/null 2>&1 &&
	[ "$(kwqctl len lc-final)" = 1 ] && kwqctl destroy lc-final
check kwq_works_after_cycles $? "final workload failed"
# rmmod must drop every queue it destroyed: nothing lingers in /dev/kwq's list
[ -z "$(kwqctl list 2>/dev/null | grep '^cyc')" ]
check no_queue_survives_unload $? "$(kwqctl list 2>&1 | head -3)"

ktap_end
