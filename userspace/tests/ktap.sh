# SPDX-License-Identifier: GPL-2.0
# KTAP for the shell suites, as tests/ktap.h is for the C ones. Sourced:
#   ktap_begin SUITE PLAN WATCHDOG_SECONDS
#   pass NAME | fail NAME WHY | check NAME STATUS WHY
#   ktap_end	(the suite's line; returns non-zero if any case failed)
# Nothing may hang: the watchdog kills the suite after WATCHDOG_SECONDS.

ktap_begin() {
	ktap_suite=$1 ktap_plan=$2 n=0 failed=0
	(sleep "$3"; echo "    # TIMEOUT: $1 hung"; kill -9 $$) 2>/dev/null &
	ktap_watchdog=$!
	echo "KTAP version 1"
	echo "1..1"
	echo "    KTAP version 1"
	echo "    # Subtest: $1"
	echo "    1..$2"
}

pass() { n=$((n + 1)); echo "    ok $n $1"; }

fail() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "    # $1: $2" | head -c 600
	echo
	echo "    not ok $n $1"
}

# check NAME STATUS WHY: pass if STATUS is 0.
check() { if [ "$2" = 0 ]; then pass "$1"; else fail "$1" "$3"; fi; }

ktap_end() {
	kill "$ktap_watchdog" 2>/dev/null
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
