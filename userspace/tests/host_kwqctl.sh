#!/bin/sh
# Host checks of kwqctl that need no kernel: --help of every command,
# usage errors (exit 2), a missing device (exit 1 naming ENOENT), batch's
# parsing of its lines and its stops, and the bash completion (COMPLETION, default kwqctl/kwqctl.bash beside tests/).
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
for c in create destroy list add add-rate-limited forget requeues remove len get "done" shutdown stats work batch; do
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
# batch: each line a command (here failing to open a missing device, so
# every line that runs says so on stderr); NAME RC LINES: stdin LINES
batch() {	# batch NAME WANT_RC LINES [BATCH OPTION]...
	name=$1 want=$2 lines=$3
	shift 3
	printf '%s' "$lines" >/tmp/hk.in.$$
	check "$name" "$want" "$K" -d /nonexistent/kwq batch "$@" /tmp/hk.in.$$
}
# err_has NAME PATTERN: the last stderr matches PATTERN (grep -x)
err_has() {
	n=$((n + 1))
	if grep -qx -- "$2" /tmp/hk.err.$$; then echo "ok $n $1"; else
		printf 'not ok %s %s # %s\n' "$n" "$1" "$(cat /tmp/hk.err.$$)"
		failed=$((failed + 1))
	fi
}
# Ranges checked before the kernel is asked: usage errors (exit 2) that
# name the queue, the option and the range (uapi's constants).
check create_processing_timeout_below_min 2 "$K" -d /nonexistent/kwq create q --processing-timeout 500us
err_has create_processing_timeout_range_named \
	"kwqctl: create: queue q: --processing-timeout 500us out of range (1ms..365d, 0: none) (see kwqctl create --help)"
check create_processing_timeout_above_max 2 "$K" -d /nonexistent/kwq create q --processing-timeout 366d
check create_max_dead_without_max_retries 2 "$K" -d /nonexistent/kwq create q --max-dead 5
err_has create_max_dead_needs_max_retries_named \
	"kwqctl: create: queue q: --max-dead 5 needs --max-retries 1..1000000 (a dead set) (see kwqctl create --help)"
check create_max_dead_over_max 2 "$K" create q --max-retries 1 --max-dead 1048577
err_has create_max_dead_range_named "kwqctl: create: bad --max-dead '1048577' (0..1048576) .*"
check touch_processing_timeout_below_min 2 "$K" -d /nonexistent/kwq touch q --processing-timeout 999us k
err_has touch_processing_timeout_range_named \
	"kwqctl: touch: queue q: --processing-timeout 999us out of range (1ms..365d, 0: the queue's, none: no deadline) .*"
# touch --processing-timeout 0 is the queue's timeout: it reaches the
# device (missing here: exit 1).
check touch_processing_timeout_zero_taken 1 "$K" -d /nonexistent/kwq touch q --processing-timeout 0 k
check get_processing_timeout_above_max 2 "$K" -d /nonexistent/kwq get q --processing-timeout 8761h
err_has get_processing_timeout_range_named \
	"kwqctl: get: queue q: --processing-timeout 8761h out of range (1ms..365d, 0: the queue's, none: no deadline) .*"
check get_processing_timeout_none_taken 1 "$K" -d /nonexistent/kwq get q --processing-timeout none
# Durations in days.
check add_after_days_taken 1 "$K" -d /nonexistent/kwq add q --after 2d k
"$K" --help >/tmp/hk.help.$$
check help_dur_names_days 0 grep -q 'ns, us, ms, s, m, h or d' /tmp/hk.help.$$
"$K" inspect --help >/tmp/hk.help.$$
check help_inspect_names_timeout 0 grep -q 'timeout= (processing' /tmp/hk.help.$$
batch batch_help_lines 0 '# a comment

  len --help   # then a comment
'
cp /tmp/hk.out.$$ /tmp/hk.help.$$
check batch_help_lines_out 0 grep -q '^usage: kwqctl \[-d DEVICE\] len ' /tmp/hk.help.$$
batch batch_stops_at_first_failure 1 'len q
len r
'
err_has batch_names_failing_line "kwqctl: batch: /tmp/hk.in.$$:1: 'len' failed (exit status 1), stopped"
check batch_ran_one_line 0 test "$(grep -c '^kwqctl: len: ' /tmp/hk.err.$$)" = 1
batch batch_force_runs_every_line 2 'len --help
add q --frob k
len q
' --force
err_has batch_force_names_line_2 "kwqctl: batch: /tmp/hk.in.$$:2: 'add' failed (exit status 2)"
err_has batch_force_names_line_3 "kwqctl: batch: /tmp/hk.in.$$:3: 'len' failed (exit status 1)"
batch batch_unterminated_quote 2 'len --help
add q "k
' --force
err_has batch_quote_message "kwqctl: batch: /tmp/hk.in.$$:2: unterminated \" (see kwqctl batch --help)"
batch batch_words_quoted 2 "add q --after 'a b'\\ \"c\\\"d\" k
"
err_has batch_words_unquoted "kwqctl: add: bad duration 'a b c\"d' for --after .*"
batch batch_unknown_command 2 'frob q
'
err_has batch_unknown_command_message "kwqctl: unknown command 'frob' (see kwqctl --help)"
batch batch_in_batch 2 'batch -
'
check batch_missing_file 1 "$K" batch /nonexistent/batch
check batch_missing_arg 2 "$K" batch
# comp LINE: what completing the last word of LINE offers, space-separated.
comp() {
	bash -c '. "$1"; read -ra COMP_WORDS <<<"$2"
		case $2 in *" ") COMP_WORDS+=("") ;; esac
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _kwqctl; echo "${COMPREPLY[*]}"' \
		_ "$COMPLETION" "$1"
}
check completion_commands 0 test "$(comp "$K ")" = \
	"create destroy list info add add-rate-limited forget requeues remove len get done touch shutdown stats work inspect dead revive purge batch"
check completion_create_options 0 test "$(comp "$K create q --")" = \
	"--limiter --max-wait --max-items --mode --processing-timeout --max-retries --max-dead --exist-ok --help"
check completion_get_options 0 test "$(comp "$K -d /nonexistent get q -")" = \
	"--timeout -n --processing-timeout --help"
check completion_touch_options 0 test "$(comp "$K touch q --")" = "--processing-timeout --help"
check completion_touch_no_option_value 0 test "$(comp "$K touch q --processing-timeout ")" = ""
check completion_no_option_value 0 test "$(comp "$K add q --after ")" = ""
check completion_batch_file 0 test "$(comp "$K batch $(dirname "$0")/host_kwqctl.s")" = \
	"$(dirname "$0")/host_kwqctl.sh"
check completion_work_cmd 0 test "$(comp "$K work q -j 2 -- kwqctl_no_such_comman")" = ""
echo "1..$n"
rm -f /tmp/hk.out.$$ /tmp/hk.err.$$ /tmp/hk.help.$$ /tmp/hk.in.$$
[ $failed = 0 ]
