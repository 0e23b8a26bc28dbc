#!/bin/sh
# Host checks of kwqctl that need no kernel: --help of every command,
# usage errors (exit 2), a missing device (exit 1 naming ENOENT), and the
# bash completion (COMPLETION, default kwqctl/kwqctl.bash beside tests/).
K=${KWQCTL:-kwqctl}
COMPLETION=${COMPLETION:-$(dirname "$0")/../kwqctl/kwqctl.bash}
n=0 failed=0
check() {	# check NAME WANT_RC CMD...
	name=$1 want=$2
	shift 2
	n=$((n + 1))
	"$@" >/tmp/hk.out.$$ 2>/tmp/hk.err.$$
	rc=$?
	if [ "$rc" = "$want" ]; then
		echo "ok $n $name"
	else
		echo "not ok $n $name  # exit $rc want $want: $(head -c 200 /tmp/hk.err.$$)"
		failed=$((failed + 1))
	fi
}
echo "TAP version 13"
for c in create destroy list add add-rate-limited forget requeues remove len get "done" shutdown stats work; do
	check "help_$c" 0 "$K" $c --help
	cp /tmp/hk.out.$$ /tmp/hk.help.$$
	check "help_${c}_text" 0 grep -q "^usage: kwqctl \[-d DEVICE\] $c " /tmp/hk.help.$$
done
check help_global 0 "$K" --help
check no_command 2 "$K"
check unknown_command 2 "$K" frobnicate
check unknown_option 2 "$K" add q --frob k
check add_missing_key 2 "$K" add q
check create_bad_spec 2 "$K" create q --limiter exponential:5ms
check create_bad_mode 2 "$K" create q --mode 0999
check add_bad_after 2 "$K" add q --after 5 k
check add_replace_without_after 2 "$K" add q --replace k
check add_replace_and_later 2 "$K" add q --after 1s --replace --later k
check add_later_zero_after 2 "$K" add q --after 0s --later k
check work_zero_heartbeat 2 "$K" work q --heartbeat 0 -- true
check get_bad_count 2 "$K" get q -n 0
check work_missing_cmd 2 "$K" work q -j 2
check five_limiters 2 "$K" create q --limiter default --limiter default --limiter default
check abbreviated_option 2 "$K" add q --aft 1s k
check flag_with_value 2 "$K" stats q --json=1
check option_cluster 2 "$K" get q -hx
check option_missing_value 2 "$K" get q --timeout
check missing_device 1 "$K" -d /nonexistent/kwq len q
n=$((n + 1))
if grep -q '^kwqctl: len: /nonexistent/kwq: No such file or directory (ENOENT)$' /tmp/hk.err.$$; then
	echo "ok $n error_line_names_errno"
else
	echo "not ok $n error_line_names_errno # $(cat /tmp/hk.err.$$)"
	failed=$((failed + 1))
fi
# comp LINE: what completing the last word of LINE offers, space-separated.
comp() {
	bash -c '. "$1"; read -ra COMP_WORDS <<<"$2"
		case $2 in *" ") COMP_WORDS+=("") ;; esac
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _kwqctl; echo "${COMPREPLY[*]}"' \
		_ "$COMPLETION" "$1"
}
check completion_commands 0 test "$(comp "$K ")" = \
	"create destroy list add add-rate-limited forget requeues remove len get done touch shutdown stats work inspect dead revive purge"
check completion_create_options 0 test "$(comp "$K create q --")" = \
	"--limiter --max-wait --max-items --mode --processing-timeout --max-retries --max-dead --help"
check completion_get_options 0 test "$(comp "$K -d /nonexistent get q -")" = "--timeout -n --help"
check completion_touch_options 0 test "$(comp "$K touch q --")" = "--processing-timeout --help"
check completion_touch_no_option_value 0 test "$(comp "$K touch q --processing-timeout ")" = ""
check completion_no_option_value 0 test "$(comp "$K add q --after ")" = ""
check completion_work_cmd 0 test "$(comp "$K work q -j 2 -- kwqctl_no_such_comman")" = ""
echo "1..$n"
rm -f /tmp/hk.out.$$ /tmp/hk.err.$$ /tmp/hk.help.$$
[ $failed = 0 ]
