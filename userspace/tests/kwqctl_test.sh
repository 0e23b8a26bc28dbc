#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# kwqctl end to end, in the test VM (busybox sh, kwqctl in PATH): every
# command, exit statuses, exact limiter delays, delay order, detached
# get/done across processes, drain, work (retries, -j, kill -9 returns
# its leases), batch (output as alone, stops, --force, no fd left open),
# stats --all as one Prometheus exposition. Prints KTAP (tests/ktap.sh).
K=${KWQCTL:-kwqctl}
T=/tmp/kwqctl-test.$$
mkdir -p $T
. "$(dirname "$0")/ktap.sh"
ktap_begin kwq_kwqctl 129 120

# run CMD...: stdout to $T/out, stderr to $T/err, status in $rc
run() { "$@" >$T/out 2>$T/err; rc=$?; }
# rc_is NAME WANT CMD...
rc_is() {
	name=$1 want=$2
	shift 2
	run "$@"
	if [ "$rc" = "$want" ]; then pass "$name"; else
		fail "$name" "exit $rc want $want; stderr: $(cat $T/err)"; fi
}
# out_is NAME EXPECTED CMD...: exit 0 and exactly EXPECTED on stdout
out_is() {
	name=$1 want=$2
	shift 2
	run "$@"
	got=$(cat $T/out)
	if [ "$rc" = 0 ] && [ "$got" = "$want" ]; then pass "$name"; else
		fail "$name" "exit $rc, stdout '$got' want '$want'; stderr: $(cat $T/err)"; fi
}
# err_is NAME RC ERRNAME CMD...: exit RC, one stderr line ending "(ERRNAME)"
err_is() {
	name=$1 want=$2 e=$3
	shift 3
	run "$@"
	lines=$(wc -l <$T/err)
	if [ "$rc" = "$want" ] && [ "$lines" = 1 ] &&
		grep -q "^kwqctl: .*: .* ($e)\$" $T/err; then pass "$name"; else
		fail "$name" "exit $rc want $want; stderr: $(cat $T/err)"; fi
}
# wait_for COUNT PATTERN FILE: until FILE has COUNT lines matching (20 s)
wait_for() {
	i=0
	while [ "$(grep -c "$2" "$3" 2>/dev/null)" -lt "$1" ] && [ $i -lt 200 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}
# stats_until PATTERN QUEUE: until QUEUE's stats --json match (20 s)
stats_until() {
	i=0
	until $K stats "$2" --json | grep -q "$1" || [ $i -ge 200 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}
nl='
'
Q=ctl-$$

# --- create, list, add, len, get, done ------------------------------
rc_is create 0 $K create $Q
err_is create_existing_eexist 1 EEXIST $K create $Q
rc_is create_existing_exist_ok 0 $K create $Q --exist-ok
# --exist-ok compares the options (KWQ_IOC_INFO), as kwq.New does.
run $K create $Q --exist-ok --max-items 7 --mode 0640
if [ $rc = 1 ] && grep -q "^kwqctl: .*queue $Q exists with --mode 0600, not 0640" $T/err &&
	grep -q "queue $Q exists with --max-items 0, not 7" $T/err &&
	grep -q "kwqctl info $Q" $T/err; then
	pass create_exist_ok_other_options_named
else
	fail create_exist_ok_other_options_named "exit $rc; stderr: $(cat $T/err)"
fi
rc_is create_exist_ok_explicit_defaults_match 0 $K create $Q --exist-ok \
	--mode 0600 --limiter exponential:5ms:1000s --limiter bucket:10:100
out_is info_defaults "mode                0600
limiter             default
max-wait            0
max-items           0
processing-timeout  0
max-retries         0
max-dead            0
ephemeral           no" $K info $Q
out_is info_options "mode                0640
limiter             fastslow:10ms:1s:3
limiter             bucket:0.5:5
max-wait            90s
max-items           7
processing-timeout  2m
max-retries         4
max-dead            9
ephemeral           no" sh -c "$K create $Q-info --mode 0640 --limiter fastslow:10ms:1s:3 \
	--limiter bucket:0.5:5 --max-wait 90s --max-items 7 --processing-timeout 2m \
	--max-retries 4 --max-dead 9 && $K info $Q-info && $K destroy $Q-info"
err_is info_missing_enoent 1 ENOENT $K info $Q-none
run $K list
if [ $rc = 0 ] && grep -qx "$Q" $T/out; then pass list; else fail list "exit $rc: $(cat $T/out)"; fi
rc_is add_three 0 $K add $Q a b c
rc_is add_duplicate 0 $K add $Q a
out_is len_dedups 3 $K len $Q
out_is get_one a $K get $Q
out_is get_n "b${nl}c" $K get $Q -n 5 --timeout 1s
rc_is get_timeout_zero_exit_3 3 $K get $Q --timeout 0
rc_is get_timeout_exit_3 3 $K get $Q --timeout 100ms
rc_is done_from_other_process 0 $K done $Q a b c
err_is done_not_processing_enoent 1 ENOENT $K done $Q a
run $K stats $Q --json
grep -q '"processing":0' $T/out && pass stats_processing_zero_after_done ||
	fail stats_processing_zero_after_done "$(cat $T/out)"

# --- priority and delay order ----------------------------------------
$K add $Q lo
$K add $Q --priority 5 hi
out_is priority_first "hi${nl}lo" $K get $Q -n 2
$K done $Q hi lo
# Deadlines 2 s apart and the ready key first: the order holds as long
# as the adds after "late" take less than 2 s (a kwqctl run under KCSAN
# on a busy host took over a second: 1 s apart was not enough).
$K add $Q now
$K add $Q --after 5s late
$K add $Q --after 1s early
$K add $Q mid --after=3s
out_is after_order "now${nl}early${nl}mid${nl}late" \
	sh -c "$K get $Q --timeout 20s; $K get $Q --timeout 20s; $K get $Q --timeout 20s; $K get $Q --timeout 20s"
$K done $Q now early mid late
out_is remove_waiting 0 sh -c "$K add $Q --after 1h gone && $K remove $Q gone && $K len $Q"
err_is remove_unknown_enoent 1 ENOENT $K remove $Q gone
# Replaceable deadlines: --replace moves a waiting key later, --later
# keeps the later one; the default keeps the earlier.
$K add $Q --after 1h deb
$K add $Q --after 1s deb
out_is after_earlier_wins deb $K get $Q --timeout 20s
$K done $Q deb
$K add $Q --after 1s deb
$K add $Q --after 1h --replace deb
rc_is after_replace_moves_later 3 $K get $Q --timeout 2s
$K add $Q --after 1s --replace deb
$K add $Q --after 1h --later deb
rc_is after_later_keeps_later 3 $K get $Q --timeout 2s
$K add $Q --after 10ms --replace deb
out_is after_replace_moves_earlier deb $K get $Q --timeout 20s
$K done $Q deb

# --- limiters: exact delays via add-rate-limited ---------------------
$K create $Q-exp --limiter exponential:5ms:1s
out_is exponential_delays "k 5ms${nl}k 10ms${nl}k 20ms${nl}k 40ms${nl}k 80ms" \
	$K add-rate-limited $Q-exp k k k k k
out_is requeues_counts 5 $K requeues $Q-exp k
rc_is forget 0 $K forget $Q-exp k
out_is forget_resets 0 $K requeues $Q-exp k
out_is exponential_restarts "k 5ms${nl}other 5ms" $K add-rate-limited $Q-exp k other
$K create $Q-fs --limiter fastslow:1ms:1s:2
out_is fastslow_delays "x 1ms${nl}x 1ms${nl}x 1s${nl}x 1s" $K add-rate-limited $Q-fs x x x x
$K create $Q-max --limiter exponential:5ms:1000s --limiter fastslow:20ms:30ms:1 --max-wait 35ms
out_is max_of_and_max_wait "k 20ms${nl}k 30ms${nl}k 30ms${nl}k 35ms${nl}k 35ms" \
	$K add-rate-limited $Q-max k k k k k
$K create $Q-b --limiter bucket:0.001:2
run $K add-rate-limited $Q-b a b c
third=$(sed -n 3p $T/out)
if [ $rc = 0 ] && [ "$(sed -n 1,2p $T/out)" = "a 0${nl}b 0" ] &&
	[ "${third%% *}" = c ] && [ "${third#c }" != 0 ]; then pass bucket_burst_then_delay; else
	fail bucket_burst_then_delay "exit $rc: $(cat $T/out) $(cat $T/err)"; fi
$K create $Q-d --limiter default
out_is default_limiter "k 5ms${nl}k 10ms${nl}k 20ms" $K add-rate-limited $Q-d k k k
rc_is bad_limiter_usage 2 $K create $Q-bad --limiter bucket:0:1
for s in exp fs max b d; do $K destroy $Q-$s; done

# --- item cap, stats ---------------------------------------------------
$K create $Q-cap --max-items 1 --mode 0644
err_is max_items_enospc 1 ENOSPC $K add $Q-cap a b
grep -qx "kwqctl: add: queue $Q-cap: key b (the queue's --max-items, 1, reached): .* (ENOSPC)" $T/err &&
	pass max_items_message_names_queue_key_cap || fail max_items_message_names_queue_key_cap "$(cat $T/err)"
out_is cap_kept_first 1 $K len $Q-cap
run $K stats $Q-cap
grep -q '^len  *1$' $T/out && grep -q '^shutting_down  *no$' $T/out && pass stats_table ||
	fail stats_table "$(cat $T/out)"
run $K stats $Q-cap --json
grep -q "^{\"name\":\"$Q-cap\",\"len\":1,.*\"shutting_down\":false}\$" $T/out &&
	pass stats_json || fail stats_json "$(cat $T/out)"
run $K stats $Q-cap --prometheus
bad=$(grep -v '^# HELP [a-z_]* .' $T/out |
	grep -v '^# TYPE [a-z_]* \(gauge\|counter\|histogram\)$' |
	grep -v "^[a-z_]*{name=\"$Q-cap\"\(,\(le\|priority\)=\"[0-9a-zI.+-]*\"\)\{0,1\}} [0-9][0-9.]*\$")
if [ $rc = 0 ] && [ -z "$bad" ] && grep -q "^workqueue_depth{name=\"$Q-cap\"} 1\$" $T/out &&
	grep -q '^# TYPE workqueue_adds_total counter$' $T/out &&
	grep -q "^workqueue_retries_total{name=\"$Q-cap\"} 0\$" $T/out &&
	grep -q "^kwq_waiting_depth{name=\"$Q-cap\"} 0\$" $T/out &&
	grep -q "^kwq_processing{name=\"$Q-cap\"} 0\$" $T/out; then pass stats_prometheus; else
	fail stats_prometheus "bad lines '$bad' in: $(cat $T/out)"; fi
rc_is stats_json_and_prometheus_usage 2 $K stats $Q-cap --json --prometheus
$K destroy $Q-cap

# --- stats --all: every queue the caller may open, one exposition -------
# prom_check FILE: FILE read strictly as Prometheus text (format 0.0.4):
# one HELP and one TYPE per family, before its samples; each family's
# samples together and its own (a histogram's _bucket, _sum, _count);
# labels name="value"; a number as value; no sample twice. Prints the
# first line that breaks a rule.
prom_check() {
	awk '
	function bad(m) { print "line " NR ": " m ": " $0; err = 1; exit 1 }
	/^# HELP / {
		if (NF < 4) bad("HELP without text")
		if ($3 in help) bad("second HELP of " $3)
		if ($3 in seen) bad("family " $3 " again")
		help[$3] = 1; seen[$3] = 1; fam = $3; next
	}
	/^# TYPE / {
		if ($3 != fam) bad("TYPE without its HELP before")
		if ($3 in type) bad("second TYPE of " $3)
		if (NF != 4 || $4 !~ /^(counter|gauge|histogram|summary|untyped)$/) bad("bad TYPE")
		type[$3] = $4; next
	}
	/^#/ { next }
	{
		if (!match($0, /^[a-zA-Z_:][a-zA-Z0-9_:]*/)) bad("no metric name")
		name = substr($0, 1, RLENGTH); rest = substr($0, RLENGTH + 1); base = name
		if (fam == "" || !(fam in type)) bad("sample before its TYPE")
		if (type[fam] == "histogram") sub(/_(bucket|sum|count)$/, "", base)
		if (base != fam) bad("sample of " name " in family " fam)
		labels = ""
		if (substr(rest, 1, 1) == "{") {
			if (!match(rest, /^[{][a-zA-Z_][a-zA-Z0-9_]*="[^"\\]*"(,[a-zA-Z_][a-zA-Z0-9_]*="[^"\\]*")*[}]/))
				bad("bad labels")
			labels = substr(rest, 1, RLENGTH); rest = substr(rest, RLENGTH + 1)
		}
		if (rest !~ /^ (-?[0-9]+([.][0-9]+)?([eE][-+]?[0-9]+)?|[-+]Inf|NaN)$/) bad("bad value")
		if ((name labels) in sample) bad("second sample")
		sample[name labels] = 1
	}
	END { if (!err && NR == 0) { print "empty"; exit 1 } }' "$1"
}
P=$Q-pa R=$Q-pb
$K create $P --mode 0600
$K create $R --mode 0666
$K add $P k1 k2
$K add $R k1
run $K stats --all --prometheus
why=$(prom_check $T/out)
if [ $rc = 0 ] && [ -z "$why" ] && grep -q "^workqueue_depth{name=\"$P\"} 2\$" $T/out &&
	grep -q "^workqueue_depth{name=\"$R\"} 1\$" $T/out &&
	grep -q "^workqueue_queue_duration_seconds_bucket{name=\"$R\",le=\"+Inf\"} 0\$" $T/out; then
	pass stats_all_prometheus_one_exposition
else fail stats_all_prometheus_one_exposition "exit $rc: $why; stderr: $(cat $T/err)"; fi
# The checker itself: two queues' texts one after the other are not one
# exposition.
{ $K stats $P --prometheus; $K stats $R --prometheus; } >$T/two
why=$(prom_check $T/two)
case $why in
*"second HELP of workqueue_depth"*) pass prom_check_refuses_two_expositions ;;
*) fail prom_check_refuses_two_expositions "checker said '$why'" ;;
esac
# -o FILE: the same text, through a new file renamed over FILE (a link
# to the old one keeps the old text), readable by node_exporter.
echo old >$T/kwq.prom
ln $T/kwq.prom $T/kwq.old
run $K stats --all --prometheus -o $T/kwq.prom
$K stats --all --prometheus >$T/again
left=
for f in $T/kwq.prom.*; do [ -e "$f" ] && left="$left $f"; done
if [ $rc = 0 ] && [ ! -s $T/out ] && [ "$(cat $T/kwq.old)" = old ] &&
	[ "$(grep "\"$Q-p" $T/kwq.prom)" = "$(grep "\"$Q-p" $T/again)" ] &&
	[ -z "$(prom_check $T/kwq.prom)" ] && [ "$(stat -c %a $T/kwq.prom)" = 644 ] &&
	[ -z "$left" ]; then pass stats_output_renamed_over_file
else fail stats_output_renamed_over_file "exit $rc, mode $(stat -c %a $T/kwq.prom), left:$left"; fi
err_is stats_output_missing_dir 1 ENOENT $K stats --all --prometheus -o $T/nodir/kwq.prom
# An unprivileged user sees the queues it may open: $R (0666), not root's
# $P (0600).
# su needs the user in /etc/passwd (and /etc/group): the VM has no /etc.
made_etc=
if [ ! -e /etc/passwd ]; then
	made_etc=1
	mkdir -p /etc
	echo 'kwqtest:x:64001:64001:kwq test:/tmp:/bin/sh' >/etc/passwd
	echo 'kwqtest:x:64001:' >/etc/group
fi
su -s /bin/sh kwqtest -c "$(command -v $K) stats --all --prometheus" >$T/user 2>$T/err
rc=$?
[ -z "$made_etc" ] || rm -f /etc/passwd /etc/group
why=$(prom_check $T/user)
if [ $rc = 0 ] && [ -z "$why" ] && grep -q "^workqueue_depth{name=\"$R\"} 1\$" $T/user &&
	! grep -q "\"$P\"" $T/user; then pass stats_all_unprivileged_sees_its_queues
else fail stats_all_unprivileged_sees_its_queues "exit $rc: $why; stderr: $(cat $T/err)"; fi
rc_is stats_all_and_queue_usage 2 $K stats $R --all
rc_is stats_no_queue_usage 2 $K stats --prometheus
$K destroy $P
$K destroy $R

# --- drain, shutdown, destroy ------------------------------------------
$K add $Q x
$K get $Q >/dev/null
$K shutdown $Q --drain &
drain=$!
sleep 0.5
if kill -0 $drain 2>/dev/null; then pass drain_waits; else fail drain_waits "returned early"; fi
$K done $Q x
wait $drain
drc=$?
[ $drc = 0 ] && pass drain_returns_after_done || fail drain_returns_after_done "exit $drc"
err_is add_after_shutdown_eshutdown 1 ESHUTDOWN $K add $Q y
rc_is get_shut_down_exit_4 4 $K get $Q
rc_is destroy 0 $K destroy $Q
err_is len_after_destroy_enoent 1 ENOENT $K len $Q

# --- work --------------------------------------------------------------
W=$Q-work
cat >$T/cmd <<EOF
#!/bin/sh
echo "\$1 \$KWQ_KEY" >>$T/ran
case "\$1" in
fail*) exit 3 ;;
slow*) echo \$\$ >>$T/slowpid; exec sleep 60 ;;
nap*) sleep 2 ;;
esac
exit 0
EOF
chmod 755 $T/cmd
: >$T/ran
$K create $W
$K add $W w1 w2 w3 fail1
$K work $W -j 2 --max-retries 2 -- $T/cmd 2>$T/work.err &
wpid=$!
wait_for 3 '^fail1 fail1$' $T/ran
wait_for 1 'giving up' $T/work.err
wait_for 3 '^w[123] ' $T/ran
sleep 0.5
run grep -c '^w[123] w[123]$' $T/ran
[ "$(cat $T/out)" = 3 ] && pass work_runs_cmd_with_key_arg_and_env ||
	fail work_runs_cmd_with_key_arg_and_env "$(cat $T/ran)"
[ "$(grep -c '^fail1 fail1$' $T/ran)" = 3 ] && pass work_retries_then_gives_up ||
	fail work_retries_then_gives_up "$(cat $T/ran)"
grep -q 'fail1.*giving up after 2 retries' $T/work.err && pass work_give_up_message ||
	fail work_give_up_message "$(cat $T/work.err)"
out_is work_forgets_given_up 0 $K requeues $W fail1
$K shutdown $W --drain
wait $wpid
wrc=$?
[ $wrc = 0 ] && pass work_exits_0_when_shut_down_and_drained || fail work_exits_0_when_shut_down_and_drained "exit $wrc"
$K destroy $W

# kill -9 of work returns its in-flight keys
$K create $W
$K add $W slow1
: >$T/ran
$K work $W -- $T/cmd &
wpid=$!
wait_for 1 '^slow1' $T/ran
run $K stats $W --json
grep -q '"processing":1' $T/out && pass work_leases_key || fail work_leases_key "$(cat $T/out)"
kill -9 $wpid
wait $wpid 2>/dev/null
kill -9 $(cat $T/slowpid) 2>/dev/null
: >$T/slowpid
run $K stats $W --json
grep -q '"len":1,' $T/out && grep -q '"processing":0' $T/out && grep -q '"lease_returns":1' $T/out &&
	pass work_kill9_returns_key || fail work_kill9_returns_key "$(cat $T/out)"
$K destroy $W

# --- the dead set -------------------------------------------------------
D=$Q-dead
rc_is create_max_retries_out_of_range 2 $K create $D --max-retries 1000001
rc_is create_with_dead_set 0 $K create $D --max-retries 1 --limiter exponential:1ms:1ms
: >$T/ran
$K add $D fail2 w4
$K work $D -- $T/cmd 2>$T/work.err &
wpid=$!
wait_for 1 'fail2: dead after' $T/work.err
wait_for 1 '^w4 ' $T/ran
[ "$(grep -c '^fail2 fail2$' $T/ran)" = 2 ] && pass work_dead_set_decides ||
	fail work_dead_set_decides "$(cat $T/ran)"
grep -q 'fail2: dead after 1 retries (last exit status 3); kwqctl revive' $T/work.err &&
	pass work_dead_message || fail work_dead_message "$(cat $T/work.err)"
run $K stats $D --json
grep -q '"dead":1,"dead_total":1,' $T/out && pass stats_dead || fail stats_dead "$(cat $T/out)"
run $K dead $D
grep -q '^fail2 dead prio=0 failures=2 since=[0-9]*\.[0-9]*s$' $T/out && [ "$(wc -l <$T/out)" = 1 ] &&
	pass dead_lists_dead_key || fail dead_lists_dead_key "$(cat $T/out)"
err_is revive_not_dead_enoent 1 ENOENT $K revive $D w4
rc_is revive_needs_key_or_all 2 $K revive $D
rc_is revive_not_key_and_all 2 $K revive $D fail2 --all
rc_is revive_dead_key 0 $K revive $D fail2
wait_for 2 'fail2: dead after' $T/work.err
[ "$(grep -c '^fail2 fail2$' $T/ran)" = 4 ] && pass revived_key_gets_its_retries_again ||
	fail revived_key_gets_its_retries_again "$(cat $T/ran)"
out_is purge_all_prints_count 1 $K purge $D --all
err_is purge_not_dead_enoent 1 ENOENT $K purge $D fail2
$K shutdown $D --drain
wait $wpid
$K destroy $D

# --- inspect ------------------------------------------------------------
I=$Q-insp
$K create $I
$K add $I a b
$K add $I --after 1h c
$K get $I >/dev/null
run $K inspect $I a
grep -q '^a processing prio=0 failures=0 since=' $T/out && pass inspect_processing_key ||
	fail inspect_processing_key "$(cat $T/out)"
run $K inspect $I c
grep -q '^c waiting prio=0 failures=0 due=3[56][0-9][0-9]\.[0-9]*s$' $T/out &&
	pass inspect_waiting_key_time_left || fail inspect_waiting_key_time_left "$(cat $T/out)"
run $K inspect $I
[ "$rc" = 0 ] && [ "$(sort $T/out | cut -d' ' -f1,2 | tr '\n' ' ')" = "a processing b ready c waiting " ] &&
	pass inspect_lists_every_key || fail inspect_lists_every_key "$(cat $T/out)"
run $K inspect $I --state ready,waiting
[ "$(cut -d' ' -f1 $T/out | sort | tr '\n' ' ')" = "b c " ] && pass inspect_state_filter ||
	fail inspect_state_filter "$(cat $T/out)"
run $K inspect $I --limit 2
[ "$(wc -l <$T/out)" = 2 ] && pass inspect_limit || fail inspect_limit "$(cat $T/out)"
err_is inspect_unknown_key_enoent 1 ENOENT $K inspect $I zz
rc_is inspect_bad_state_usage 2 $K inspect $I --state nope
$K destroy $I
# processing deadlines: a hung CMD's key is taken back and runs again on
# the other worker; a heartbeat keeps a slow CMD's key
$K create $W --processing-timeout 300ms --limiter exponential:10ms:1s
$K add $W slow2
: >$T/ran
$K work $W -j 2 -- $T/cmd 2>$T/work.err &
wpid=$!
wait_for 2 '^slow2' $T/ran
run $K stats $W --json
grep -q '"processing_timeouts_total":[1-9]' $T/out &&
	pass work_hung_key_taken_back_by_deadline || fail work_hung_key_taken_back_by_deadline "$(cat $T/out)"
run $K requeues $W slow2
grep -qx '[1-9][0-9]*' $T/out && pass deadline_counts_a_failure ||
	fail deadline_counts_a_failure "$(cat $T/out)"
kill -9 $wpid
wait $wpid 2>/dev/null
kill -9 $(cat $T/slowpid) 2>/dev/null
: >$T/slowpid
$K destroy $W
# A 2 s run under a 1 s deadline, kept by heartbeats every 200 ms: 800 ms
# of slack for a slow heartbeat on a busy machine (KCSAN, TCG).
$K create $W --processing-timeout 1s
$K add $W nap1
: >$T/ran
$K work $W --heartbeat 200ms -- $T/cmd 2>$T/work.err &
wpid=$!
wait_for 1 '^nap1' $T/ran
# Its lease is work's: another process cannot touch it (2 s of CMD left).
err_is touch_leased_key_eperm 1 EPERM $K touch $W nap1
# Until CMD is over and its key done (or, failing, taken back: then not
# processing either), at most 20 s.
stats_until '"processing":0' $W
run $K stats $W --json
grep -q '"processing_timeouts_total":0' $T/out && grep -q '"processing":0' $T/out &&
	[ "$(grep -c '^nap1' $T/ran)" = 1 ] &&
	pass work_heartbeat_keeps_slow_key || fail work_heartbeat_keeps_slow_key "$(cat $T/out) $(cat $T/ran)"
$K shutdown $W --drain
wait $wpid
$K destroy $W
# Out of range: a usage error naming the range, before the kernel is asked.
rc_is create_bad_processing_timeout 2 $K create $W --processing-timeout 1us

# --- touch: the deadline of keys taken by get, from the shell -----------
# "kept" is touched 1 h ahead well before its 3 s deadline and "freed"
# loses its deadline; "lost", taken with them, is not touched and is
# taken back: once it was (at most 20 s), and 0.5 s more, only "lost"
# timed out.
H=$Q-touch
$K create $H --processing-timeout 3s
$K add $H kept lost freed
$K get $H -n 3 >/dev/null
rc_is touch_before_deadline 0 $K touch $H --processing-timeout 1h kept
rc_is touch_none_clears_deadline 0 $K touch $H --processing-timeout none freed
stats_until '"processing_timeouts_total":[1-9]' $H
sleep 0.5
run $K inspect $H kept
grep -q '^kept processing ' $T/out && pass touched_key_not_timed_out ||
	fail touched_key_not_timed_out "$(cat $T/out)"
run $K inspect $H freed
grep -q '^freed processing ' $T/out && pass untimed_key_not_timed_out ||
	fail untimed_key_not_timed_out "$(cat $T/out)"
run $K stats $H --json
grep -q '"processing_timeouts_total":1[,}]' $T/out && pass untouched_key_timed_out ||
	fail untouched_key_timed_out "$(cat $T/out)"
err_is touch_not_held_enoent 1 ENOENT $K touch $H nope
$K destroy $H

# --- batch: commands from a file or stdin, in one process -------------
# The same commands alone (on queue B1) and in a batch (on B2): the same
# output. Then a failing line stops a batch with its status and line.
for b in B1 B2; do
	cat >$T/$b <<EOF
create $Q-$b --limiter exponential:5ms:1s
add $Q-$b x y --priority 3
add $Q-$b --after 1h later
len $Q-$b
get $Q-$b -n 2
add-rate-limited $Q-$b z z2
done $Q-$b x
requeues $Q-$b z
inspect $Q-$b y
list
destroy $Q-$b
EOF
done
: >$T/alone
while read -r line; do
	# shellcheck disable=SC2086 # the words of the line, as batch splits them
	$K $line >>$T/alone 2>&1 || echo "exit $?" >>$T/alone
done <$T/B1
sed "s/$Q-B1/$Q-B2/g" $T/alone >$T/alone2
run $K batch $T/B2
# inspect's since= is a time (left out under 1 ms): not compared
sed -i 's/ since=[0-9.]*s//' $T/out $T/alone2
if [ "$rc" = 0 ] && [ ! -s $T/err ] && cmp -s $T/out $T/alone2 &&
	grep -q "^z 5ms$" $T/out; then pass batch_output_as_alone; else
	fail batch_output_as_alone "exit $rc: $(cat $T/err) $(diff $T/alone2 $T/out)"; fi
out_is batch_from_stdin 1 sh -c "printf '%s\n' 'create $Q-B3' 'add $Q-B3 \"k 1\"' 'len $Q-B3' 'destroy $Q-B3' | $K batch -"
printf '%s\n' "create $Q-B4" "# a comment" "" "add $Q-B4 k" "done $Q-B4 k" "add $Q-B4 m" \
	"destroy $Q-B4" >$T/B4
run $K batch $T/B4
if [ "$rc" = 1 ] && [ "$(cat $T/err)" = "kwqctl: done: queue $Q-B4: key k: No such file or directory (ENOENT)
kwqctl: batch: $T/B4:5: 'done' failed (exit status 1), stopped" ]; then pass batch_stops_at_failing_line
else fail batch_stops_at_failing_line "exit $rc: $(cat $T/err)"; fi
out_is batch_stopped_before_next_line 1 $K len $Q-B4
# --force: every line; the status is the first failure's (get's 3 here)
printf '%s\n' "create $Q-B5" "get $Q-B5 --timeout 0" "done $Q-B5 nope" "add $Q-B5 n" >$T/B5
run $K batch --force $T/B5
if [ "$rc" = 3 ] && grep -q "B5:2: 'get' failed (exit status 3)\$" $T/err &&
	grep -q "B5:3: 'done' failed (exit status 1)\$" $T/err; then pass batch_force_first_status
else fail batch_force_first_status "exit $rc: $(cat $T/err)"; fi
out_is batch_force_ran_last_line 1 $K len $Q-B5
# Every command's error paths, in one batch: none may leave an fd open
# (batch checks after each command and stops on a leak). All but the
# first create, list and shutdown fail.
M=$Q-missing B=$Q-B6
printf '%s\n' "create $B" "destroy $M" "add $M k" "add-rate-limited $M k" "forget $M k" \
	"requeues $M k" "remove $M k" "len $M" "get $M" "get $B --timeout 0" "done $B nope" \
	"touch $B nope" "shutdown $M" "stats $M" "work $M -- true" "inspect $B nope" \
	"inspect $M" "dead $M" "revive $B nope" "purge $B nope" \
	"add $B --after 1s --replace --later k" "create $B" "list" "shutdown $B" \
	"add-rate-limited $B k" "add $B k" >$T/B6
run $K batch --force $T/B6
lines=$(grep -c "B6:[0-9]*: '[a-z-]*' failed" $T/err)
if [ "$rc" = 1 ] && [ "$lines" = $(($(wc -l <$T/B6) - 3)) ] && ! grep -q 'fd open' $T/err; then
	pass batch_error_paths_close_fds
else fail batch_error_paths_close_fds "exit $rc, $lines failures: $(grep -v "^kwqctl: [a-z-]*: " $T/err)"; fi
$K destroy $B
$K destroy $Q-B5
$K destroy $Q-B4

# --- long keys: 1..1024 bytes (a Kubernetes namespace/name is up to 317) ---
L=$Q-long
k1024=k
for i in 1 2 3 4 5 6 7 8 9 10; do k1024=$k1024$k1024; done
k317=$(echo "$k1024" | cut -c1-63)/$(echo "$k1024" | cut -c1-253)
$K create $L
rc_is add_1024_and_317_byte_keys 0 $K add $L "$k1024" "$k317"
out_is get_1024_byte_key "$k1024" $K get $L --timeout 5s
run $K inspect $L "$k1024"
[ "$(cut -d' ' -f1-2 $T/out)" = "$k1024 processing" ] && pass inspect_1024_byte_key ||
	fail inspect_1024_byte_key "exit $rc: $(cut -c1-80 $T/out)"
rc_is done_1024_byte_key 0 $K done $L "$k1024"
out_is get_317_byte_key "$k317" $K get $L --timeout 5s
run $K add $L "${k1024}k"
if [ "$rc" = 2 ] && grep -q "key of 1025 bytes is too long (keys are 1..1024 bytes)" $T/err &&
	[ "$($K len $L)" = 0 ]; then pass add_1025_byte_key_usage_names_length
else fail add_1025_byte_key_usage_names_length "exit $rc: $(cut -c1-120 $T/err)"; fi
$K destroy $L

# --- an operator's view: dead keys, big batches, days, deadlines ------
# A rate-limited add that uses up max-retries says the key is dead (stdout
# "KEY dead", stderr why and how to revive it), not a delay of 2^64-1 ns.
Z=$Q-plain
$K create $Z --max-retries 1 --limiter exponential:1ms:1ms
run $K add-rate-limited $Z k k
if [ "$rc" = 0 ] && [ "$(cat $T/out)" = "k 1ms${nl}k dead" ]; then pass add_rate_limited_prints_dead
else fail add_rate_limited_prints_dead "exit $rc, stdout '$(cat $T/out)'"; fi
if [ "$(cat $T/err)" = "kwqctl: add-rate-limited: queue $Z: key k: dead after 2 failures (max-retries 1); kwqctl revive $Z k requeues it" ]; then
	pass add_rate_limited_dead_message_names_queue_key_limit
else fail add_rate_limited_dead_message_names_queue_key_limit "stderr '$(cat $T/err)'"; fi
$K destroy $Z
# More keys than one call takes (KWQ_BATCH_MAX, 4096): several calls.
$K create $Z
seq 1 5000 | sed 's/^/b/' >$T/keys
# shellcheck disable=SC2046 # a word a key
run $K add $Z $(cat $T/keys)
if [ "$rc" = 0 ] && [ "$($K len $Z)" = 5000 ]; then pass add_5000_keys_in_chunks
else fail add_5000_keys_in_chunks "exit $rc, len $($K len $Z): $(cat $T/err)"; fi
$K get $Z -n 5000 --timeout 5s >/dev/null
# shellcheck disable=SC2046 # a word a key
run $K done $Z $(cat $T/keys)
run2=$rc
run $K stats $Z --json
if [ "$run2" = 0 ] && grep -q '"processing":0,' $T/out; then pass done_5000_keys_in_chunks
else fail done_5000_keys_in_chunks "exit $run2: $(cat $T/out)"; fi
# The stats table's columns hold a long name (processing_timeouts_total)
# and counters of 4 digits (adds_total 5000) beside 1-digit ones: every
# counter's row is as long as the others, its number right-aligned.
run $K stats $Z
widths=$(grep -E '^[a-z_]+ +[0-9]+$' $T/out | awk '{ print length($0) }' | sort -u)
if [ "$rc" = 0 ] && [ "$(grep -cE '^[a-z_]+ +[0-9]+$' $T/out)" -ge 16 ] &&
	[ "$(echo "$widths" | wc -l)" = 1 ] && grep -q '^adds_total  *5000$' $T/out; then
	pass stats_table_columns_aligned
else fail stats_table_columns_aligned "row widths $(echo $widths): $(cat $T/out)"; fi
$K destroy $Z
# --max-items over the module's max_items_per_queue (a parameter, so the
# kernel's EINVAL): the message names the parameter and its value.
run $K create $Z --max-items 4000000
if [ "$rc" = 1 ] && grep -qx "kwqctl: create: queue $Z: --max-items 4000000 over the module's max_items_per_queue, $(cat /sys/module/kwq/parameters/max_items_per_queue): .* (EINVAL)" $T/err; then
	pass create_max_items_over_module_cap_named
else fail create_max_items_over_module_cap_named "exit $rc: $(cat $T/err)"; fi
# Durations in days: the processing timeout's bound is 365d.
rc_is create_processing_timeout_365d 0 $K create $Z --processing-timeout 365d
$K destroy $Z
# touch --processing-timeout 0: the queue's timeout from now (as the
# kernel's TOUCH takes 0), here 2s after a touch of 1h.
$K create $Z --processing-timeout 2s
$K add $Z t
$K get $Z >/dev/null
$K touch $Z --processing-timeout 1h t
rc_is touch_zero_is_queue_timeout 0 $K touch $Z --processing-timeout 0 t
run $K inspect $Z t
grep -q '^t processing .* timeout=[0-2]\.[0-9]*s' $T/out && pass touch_zero_deadline_is_queue_timeout ||
	fail touch_zero_deadline_is_queue_timeout "$(cat $T/out)"
$K destroy $Z
# get --processing-timeout: the keys' deadline, from the get; none: no
# deadline on a queue that has one.
$K create $Z --processing-timeout 2s
$K add $Z g1 g2
run $K get $Z --processing-timeout 1h
run $K inspect $Z g1
grep -q '^g1 processing .* timeout=35[0-9][0-9]\.[0-9]*s' $T/out && pass get_processing_timeout_sets_deadline ||
	fail get_processing_timeout_sets_deadline "$(cat $T/out) $(cat $T/err)"
run $K get $Z --processing-timeout none
run $K inspect $Z g2
if grep -q '^g2 processing ' $T/out && ! grep -q 'timeout=' $T/out; then pass get_processing_timeout_none
else fail get_processing_timeout_none "$(cat $T/out)"; fi
$K destroy $Z
# A shell worker that lost its key at the deadline (kwqctl.rst, "A lost
# deadline"): its done is ENOENT while the key waits again; once another
# get took it, the done finishes the new holder's key. inspect's since=
# tells them apart: the new holder has held it less long (under 1 s here)
# than the first worker has been at it (2 s).
$K create $Z --processing-timeout 300ms --limiter exponential:1ms:1ms
$K add $Z lost
$K get $Z >/dev/null
sleep 2
stats_until '"processing_timeouts_total":1,' $Z
err_is done_after_lost_deadline_enoent 1 ENOENT $K done $Z lost
$K get $Z --timeout 5s --processing-timeout 1h >/dev/null
run $K inspect $Z lost
since=$(sed -n 's/.* since=\([0-9]*\)\..*/\1/p' $T/out)
if grep -q '^lost processing ' $T/out && [ "${since:-0}" -lt 2 ]; then pass inspect_since_tells_new_holder
else fail inspect_since_tells_new_holder "$(cat $T/out)"; fi
rc_is done_after_lost_deadline_finishes_new_holder 0 $K done $Z lost
err_is new_holder_done_enoent 1 ENOENT $K done $Z lost
$K destroy $Z

# --- usage and help ----------------------------------------------------
rc_is help_global 0 $K --help
rc_is help_work 0 $K work --help
rc_is help_get 0 $K get -h
rc_is usage_unknown_command 2 $K nope
rc_is usage_missing_queue 2 $K len
err_is bad_device_enoent 1 ENOENT $K -d /dev/nope list

rm -rf $T
ktap_end
