#!/bin/bash
# The torture checker must be able to fail: run torture_test on kwq.ko
# builds with a planted bug each (tools/testing/plant/BUG.patch, applied
# by build-module.sh to a copy of the sources) and require that the run
# fails with that bug's violation. One VM per bug, one after the other.
#
# usage: [PLANTS="BUG..."] torture-plants.sh [SECONDS]
#   (SECONDS of workload per bug, default 60; PLANTS: only those)
set -uo pipefail
. "$(dirname "$0")/lib.sh"

secs=${1:-60} failed=0
mkdir -p "$KWQ_OUT/logs"
# BUG:the checker's name for the violation it must report, or
# BUG:=CASE for a bug of the faults' own checks (the torture case CASE
# must fail: the history is not where these show)
for p in lost_wakeup:lost_wakeup dropped_requeue:lost double_lease:two_holders \
	fifo_head:fifo limiter_count:limiter_delay destroyed_enoent:call \
	ring_release_drop:lost ns_reap_skip:=ipc_namespaces_freed \
	queue_limit_ignored:=faults_behaved release_owner_skip:lost \
	shutdown_gets_refused:shutdown_lost; do
	bug=${p%%:*} want=${p#*:}
	[ -z "${PLANTS:-}" ] || [[ " $PLANTS " == *" $bug "* ]] || continue
	log=$KWQ_OUT/logs/vm-plant-$bug.log
	if [ "${want#=}" != "$want" ]; then
		caught="not ok [0-9]* ${want#=}\$" first="^ *# ${want#=}: "
	else
		caught="# [0-9]* violations $want\$" first="VIOLATION $want"
	fi
	if "$KWQ_ROOT/tools/testing/try.sh" -o "plant-$bug" -P "$bug" \
		-t $((secs * 3 + 600)) "torture:-t,$secs" >/dev/null 2>&1; then
		echo "  FAIL planted $bug: torture_test passed (log: $log)"
		failed=1
	# (grep reads to the end: grep -q would stop at the match, and under
	# pipefail tr's SIGPIPE would read as no match: fifo_head's 4173
	# violations were reported as not caught)
	elif tr -d '\r' <"$log" | grep "$caught" >/dev/null; then
		echo "  PASS planted $bug: caught, $(tr -d '\r' <"$log" | grep -m1 "$first" | sed 's/^ *# //')"
	else
		echo "  FAIL planted $bug: not caught as '$want' (log: $log)"
		failed=1
	fi
done
exit $failed
