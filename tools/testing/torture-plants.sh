#!/bin/bash
# The torture checker must be able to fail: run torture_test on kwq.ko
# builds with a planted bug each (tools/testing/plant/BUG.patch, applied
# by build-module.sh to a copy of the sources) and require that the run
# fails with that bug's violation. One VM per bug, one after the other.
#
# usage: torture-plants.sh [SECONDS]    (of workload per bug, default 60)
set -uo pipefail
. "$(dirname "$0")/lib.sh"

secs=${1:-60} failed=0
mkdir -p "$KWQ_OUT/logs"
# BUG:the checker's name for the violation it must report
for p in lost_wakeup:lost_wakeup dropped_requeue:lost double_lease:two_holders \
	fifo_head:fifo limiter_count:limiter_delay destroyed_enoent:call \
	ring_release_drop:lost; do
	bug=${p%%:*} want=${p#*:}
	log=$KWQ_OUT/logs/vm-plant-$bug.log
	if "$KWQ_ROOT/tools/testing/try.sh" -o "plant-$bug" -P "$bug" \
		-t $((secs * 3 + 600)) "torture:-t,$secs" >/dev/null 2>&1; then
		echo "  FAIL planted $bug: torture_test passed (log: $log)"
		failed=1
	elif tr -d '\r' <"$log" | grep -q "# [0-9]* violations $want\$"; then
		echo "  PASS planted $bug: caught, $(tr -d '\r' <"$log" | grep -m1 "VIOLATION $want" | sed 's/^ *# //')"
	else
		echo "  FAIL planted $bug: no '$want' violation (log: $log)"
		failed=1
	fi
done
exit $failed
