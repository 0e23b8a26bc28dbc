# SPDX-License-Identifier: GPL-2.0
# KTAP for the shell suites, as tests/ktap.h is for the C ones. Sourced:
#   ktap_begin SUITE PLAN WATCHDOG_SECONDS
#   pass NAME | fail NAME WHY | check NAME STATUS WHY
#   ktap_end	(the suite's line; returns non-zero if any case failed)
# Nothing may hang: the watchdog kills the suite once WATCHDOG_SECONDS pass
# with no case finished. A watchdog per case, not per suite: a slow machine
# (a debug kernel under TCG beside other VMs) stretches every case of a
# long suite, which is no hang; a hang is a case that never ends.

ktap_begin() {
	ktap_suite=$1 ktap_plan=$2 n=0 failed=0
	ktap_progress=$(mktemp "${TMPDIR:-/tmp}/ktap.XXXXXX")
	echo 0 >"$ktap_progress"
	(
		last=0 idle=0
		while sleep 1; do
			read -r now <"$ktap_progress" || now=$last
			if [ "$now" != "$last" ]; then
				last=$now idle=0
				continue
			fi
			idle=$((idle + 1))
			if [ "$idle" -ge "$3" ]; then
				echo "    # TIMEOUT: $1 hung: case $((last + 1)) ran $3 s"
				kill -9 $$
				exit
			fi
		done
	) 2>/dev/null &
	ktap_watchdog=$!
	echo "KTAP version 1"
	echo "1..1"
	echo "    KTAP version 1"
	echo "    # Subtest: $1"
	echo "    1..$2"
}

# Each finished case tells the watchdog.
ktap_case_done() { echo "$n" >"$ktap_progress"; }

pass() { n=$((n + 1)); echo "    ok $n $1"; ktap_case_done; }

fail() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "    # $1: $2" | head -c 600
	echo
	echo "    not ok $n $1"
	ktap_case_done
}

# check NAME STATUS WHY: pass if STATUS is 0.
check() { if [ "$2" = 0 ]; then pass "$1"; else fail "$1" "$3"; fi; }

ktap_end() {
	kill "$ktap_watchdog" 2>/dev/null
	rm -f "$ktap_progress"
	if [ "$n" != "$ktap_plan" ]; then
		echo "    # planned $ktap_plan cases, ran $n"
		failed=$((failed + 1))
	fi
	if [ "$failed" = 0 ]; then
		echo "ok 1 $ktap_suite"
	else
		echo "not ok 1 $ktap_suite"
	fi
	[ "$failed" = 0 ]
}
