#!/bin/bash
# make check-system's test, run in the Debian guest by
# kwq-system-test.service at every boot from the test disk (mounted on
# /mnt/kwqtest by the unit; check-system.sh writes it): the packages of
# v1/ installed with apt, a reboot, then what an operator does with them,
# an upgrade to v2/ while a queue is in use and to v3/ while none is, and
# apt purge. KTAP goes to the second serial port (/dev/ttyS1), a line at
# a time, so the kernel's and systemd's messages on the console
# (/dev/ttyS0) never break a line; the state between boots lives in
# /var/lib/kwq-system-test (the root disk keeps it across the reboot).
# Each case prints "ok N - ..." or "not ok N - ..." and its reasons as
# "# " lines; the guest powers off at the end (and on an unexpected
# error, which leaves cases unprinted: the host counts them failed).
set -uo pipefail

T=/mnt/kwqtest
S=/var/lib/kwq-system-test
# The three versions of the packages (check-system.sh's builds); the
# short form (check-system.sh -s) has the first alone: its plan has no
# upgrade cases, and says so.
V1=$(cat $T/v1/version) V2=$(cat $T/v2/version 2>/dev/null) V3=$(cat $T/v3/version 2>/dev/null)
NCASES=13
[ -n "$V2" ] && [ -n "$V3" ] || NCASES=11
KREL=$(uname -r)
Q=svc
SVCUSER=kwqsvc

mkdir -p $S
exec 3>/dev/ttyS1
out() { printf '%s\n' "$*" >&3; printf 'kwq-system: %s\n' "$*" >/dev/console; }
state() { cat "$S/$1" 2>/dev/null || echo "${2:-0}"; }
setstate() { echo "$2" >"$S/$1"; }

# case_begin NAME: a case's diagnostics go to $S/diag until case_end.
case_begin() { CASE=$1; : >"$S/diag"; }
# fail MSG: ends the case (each runs in a subshell), failed.
fail() {
	echo "FAIL: $*"
	exit 1
}
# case_end STATUS: print the case's line, its diagnostics when it failed.
case_end() {
	local n
	n=$(($(state n) + 1))
	setstate n "$n"
	if [ "$1" = 0 ]; then
		out "ok $n - $CASE"
		setstate passed $(($(state passed) + 1))
	else
		sed 's/^/# /' "$S/diag" | while IFS= read -r l; do out "$l"; done
		out "not ok $n - $CASE"
		setstate failed $(($(state failed) + 1))
	fi
}
# run_case NAME FUNCTION: FUNCTION, in a subshell, decides (its status or
# its first fail); its output is the case's diagnostics.
run_case() {
	case_begin "$1"
	("$2") >>"$S/diag" 2>&1
	case_end $?
}
# wait_until SECONDS CMD...: true once CMD succeeds, polled every second.
wait_until() {
	local n=$1
	shift
	while ! "$@"; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 1
	done
}
# Loaded module's version, installed module's version.
loaded_version() { cat /sys/module/kwq/version 2>/dev/null; }
installed_version() { modinfo -F version kwq 2>/dev/null; }
apt_install() {
	DEBIAN_FRONTEND=noninteractive apt-get install -y "$@" 2>&1
}
debs() { echo "$T/$1"/kwq-dkms_*.deb "$T/$1"/kwqctl_*.deb "$T/$1"/libkwq1_*.deb "$T/$1"/libkwq-dev_*.deb; }

# --- first boot: install ---------------------------------------------------
t_install() {
	# shellcheck disable=SC2046 # the four package files
	apt_install $(debs v1) | tee "$S/apt-v1.log" | tail -15 || fail "apt-get install failed"
	dpkg-query -W -f '${Package} ${Version} ${Status}\n' kwq-dkms kwqctl libkwq1 libkwq-dev
	for p in kwq-dkms kwqctl libkwq1 libkwq-dev; do
		[ "$(dpkg-query -W -f '${Version} ${Status}' $p)" = "$V1 install ok installed" ] ||
			fail "$p is not installed at $V1"
	done
	dkms status kwq
	grep -q ': installed' <<<"$(dkms status -m kwq -v "$V1" -k "$KREL")" ||
		fail "DKMS did not build and install kwq $V1 for $KREL"
	[ -f "/usr/src/kwq-$V1/symvers/$KREL/Module.symvers" ] ||
		fail "no /usr/src/kwq-$V1/symvers/$KREL/Module.symvers"
	getent group kwq || fail "the package created no group kwq"
}

# --- second boot -------------------------------------------------------------
t_loaded() {
	grep '^kwq ' /proc/modules || fail "kwq is not loaded after the reboot"
	[ "$(loaded_version)" = "$V1" ] || fail "loaded kwq is '$(loaded_version)', not $V1"
	modinfo -n kwq
	case $(modinfo -n kwq) in
	"/lib/modules/$KREL/updates/dkms/kwq.ko"*) ;;
	*) fail "modprobe's kwq is $(modinfo -n kwq), not DKMS's" ;;
	esac
	journalctl -b -u systemd-modules-load --no-pager | tail -3
}

t_device() {
	local s msg
	s=$(stat -c '%U %G %a' /dev/kwq) || fail "no /dev/kwq"
	echo "/dev/kwq: $s"
	[ "$s" = "root kwq 660" ] || fail "/dev/kwq is '$s', not 'root kwq 660'"
	# Someone outside the group is refused at open().
	if msg=$(runuser -u nobody -- kwqctl list 2>&1); then
		fail "nobody (not in kwq) opened /dev/kwq: $msg"
	fi
	echo "nobody: $msg"
	grep -q 'Permission denied' <<<"$msg" || fail "nobody's refusal is not EACCES: $msg"
}

# The service: a system user in the group kwq, a queue it creates at each
# start (--exist-ok keeps what a previous run left), two workers whose
# command records each key it finishes.
setup_service() {
	useradd --system --no-create-home --groups kwq --shell /usr/sbin/nologin $SVCUSER
	cat >/usr/local/bin/kwq-handle <<'EOF'
#!/bin/sh
sleep 0.5
echo "$1" >>/var/lib/kwqsvc/done.log
EOF
	chmod 755 /usr/local/bin/kwq-handle
	cat >/etc/systemd/system/kwq-worker.service <<EOF
[Unit]
Description=kwq worker of the system test
After=systemd-modules-load.service

[Service]
User=$SVCUSER
StateDirectory=kwqsvc
ExecStartPre=/usr/bin/kwqctl create $Q --exist-ok
ExecStart=/usr/bin/kwqctl work $Q -j 2 -- /usr/local/bin/kwq-handle
Restart=on-failure
EOF
	systemctl daemon-reload
}

t_service() {
	setup_service || fail "cannot set up the service user and unit"
	systemctl start kwq-worker.service || fail "kwq-worker.service did not start"
	systemctl show -p MainPID -p ActiveState -p User kwq-worker.service
	id $SVCUSER
	runuser -u $SVCUSER -- kwqctl add $Q $(seq -f k%g 1 40) || fail "$SVCUSER cannot add"
	wait_until 120 sh -c "[ \$(sort -u /var/lib/kwqsvc/done.log 2>/dev/null | wc -l) -ge 4 ]" ||
		fail "the service finished no 4 keys in 120 s"
	ps -o user=,pid=,args= -C kwqctl
	[ "$(ps -o user= -C kwqctl | sort -u)" = $SVCUSER ] || fail "kwqctl work does not run as $SVCUSER"
}

t_restart() {
	local pid1 pid2 left n
	pid1=$(systemctl show -p MainPID --value kwq-worker.service)
	left=$(runuser -u $SVCUSER -- kwqctl len $Q)
	echo "before the restart: $left keys ready, $(sort -u /var/lib/kwqsvc/done.log | wc -l) done"
	runuser -u $SVCUSER -- kwqctl inspect $Q --state processing
	[ "$left" -gt 0 ] || fail "no key was left at the restart: nothing tested"
	systemctl restart kwq-worker.service || fail "systemctl restart failed"
	pid2=$(systemctl show -p MainPID --value kwq-worker.service)
	if [ "$pid1" = "$pid2" ] || [ "$pid2" = 0 ]; then
		fail "MainPID $pid1 -> $pid2: not restarted"
	fi
	wait_until 300 sh -c "[ \$(sort -u /var/lib/kwqsvc/done.log | wc -l) -ge 40 ]"
	n=$(sort -u /var/lib/kwqsvc/done.log | wc -l)
	echo "after the restart: $n of 40 keys done ($(wc -l </var/lib/kwqsvc/done.log) runs)"
	[ "$n" = 40 ] || fail "$((40 - n)) keys lost across the restart"
	wait_until 60 sh -c "[ -z \"\$(runuser -u $SVCUSER -- kwqctl inspect $Q)\" ]" ||
		fail "keys left in $Q: $(runuser -u $SVCUSER -- kwqctl inspect $Q)"
	systemctl is-active kwq-worker.service || fail "the service is not active after the restart"
}

t_metrics() {
	local m
	systemctl enable --now kwq-metrics.timer || fail "cannot enable kwq-metrics.timer"
	wait_until 120 grep -q "^workqueue_adds_total{name=\"$Q\"}" \
		/var/lib/prometheus/node-exporter/kwq.prom ||
		fail "kwq-metrics wrote no $Q in 120 s: $(systemctl status kwq-metrics.service --no-pager)"
	systemctl is-active prometheus-node-exporter.service || fail "node_exporter is not running"
	wait_until 120 sh -c "curl -sf http://localhost:9100/metrics >$S/metrics" ||
		fail "curl http://localhost:9100/metrics failed"
	m=$(grep "^workqueue_adds_total{name=\"$Q\"}" "$S/metrics") ||
		fail "node_exporter serves no workqueue_adds_total{name=\"$Q\"}"
	echo "$m"
	[ "${m##* }" -ge 40 ] || fail "workqueue_adds_total of $Q is ${m##* }, not at least 40"
	grep '^node_textfile_scrape_error' "$S/metrics"
	grep -q '^node_textfile_scrape_error 0' "$S/metrics" || fail "the textfile collector reports an error"
}

t_consumer() {
	local d=/root/consumer dir=/usr/src/kwq-$V1
	rm -rf $d
	mkdir -p $d
	cp $T/example/kwq_example.c $T/example/Kbuild $d/
	make -C "/lib/modules/$KREL/build" M=$d KWQ_DIR="$dir" modules >$d/build.log 2>&1 ||
		{ tail -20 $d/build.log; fail "the consumer did not build against $dir"; }
	! grep -E 'undefined|WARNING: modpost' $d/build.log || fail "unresolved symbols"
	grep -qF "$dir/include/linux/kwq.h" $d/.kwq_example.o.cmd || fail "not built against $dir/include"
	[ "$(modinfo -F depends $d/kwq_example.ko)" = kwq ] || fail "the consumer does not depend on kwq"
	insmod $d/kwq_example.ko keys=200 || fail "insmod kwq_example.ko failed"
	rmmod kwq_example || fail "rmmod kwq_example failed"
	dmesg | grep 'kwq_example: ' | tail -2
	grep -q 'kwq_example: PASS' <<<"$(dmesg)" || fail "the consumer did not PASS"
}

t_man() {
	local p page
	# The page whole, then grep: grep -q at the end of man's pipe exits
	# at its match, and man (col) fails writing the rest (EPIPE).
	for p in kwqctl libkwq "4 kwq"; do
		# shellcheck disable=SC2086 # "4 kwq" is a section and a name
		page=$(MANWIDTH=80 man $p 2>"$S/man.err") || fail "man $p failed: $(cat "$S/man.err")"
		[ ! -s "$S/man.err" ] || fail "man $p: $(cat "$S/man.err")"
		grep -q '^NAME' <<<"$page" || fail "man $p has no NAME"
		echo "man $p: $(echo "$page" | sed -n '4p' | sed 's/^ *//')"
		[ "$p" != kwqctl ] || grep -q 'kwqctl work' <<<"$page" ||
			fail "man kwqctl does not describe work"
	done
}

# Upgrade while the service holds /dev/kwq open (its queue in use): the
# package installs and builds the new module; the loaded one cannot go
# (and must not: unloading would drop the queue's keys), so it stays
# until no queue is left, and apt says so.
t_upgrade_busy() {
	local log
	systemctl is-active kwq-worker.service || fail "the service is not running"
	runuser -u $SVCUSER -- kwqctl add $Q busy1 busy2
	# shellcheck disable=SC2046
	log=$(apt_install $(debs v2)) || { echo "$log" | tail; fail "apt-get install of $V2 failed"; }
	echo "$log" | grep 'kwq-dkms:' || fail "the upgrade said nothing of the loaded module"
	[ "$(dpkg-query -W -f '${Version}' kwq-dkms)" = "$V2" ] || fail "kwq-dkms is not $V2"
	dkms status kwq
	[ "$(installed_version)" = "$V2" ] || fail "the installed module is $(installed_version), not $V2"
	[ "$(loaded_version)" = "$V1" ] || fail "the loaded module is $(loaded_version), not $V1 (in use)"
	wait_until 60 grep -qx busy2 /var/lib/kwqsvc/done.log ||
		fail "the queue stopped working across the upgrade"
	systemctl is-active kwq-worker.service || fail "the service died in the upgrade"
	[ ! -e "/usr/src/kwq-$V1" ] || fail "/usr/src/kwq-$V1 left after the upgrade"
}

# Upgrade with no queue and no open file: the new module replaces the
# loaded one at once, and the device keeps its group and mode.
t_upgrade_idle() {
	local log s
	systemctl stop kwq-worker.service
	runuser -u $SVCUSER -- kwqctl destroy $Q || fail "cannot destroy $Q"
	systemctl disable --now kwq-metrics.timer
	cat /sys/module/kwq/refcnt
	# shellcheck disable=SC2046
	log=$(apt_install $(debs v3)) || { echo "$log" | tail; fail "apt-get install of $V3 failed"; }
	echo "$log" | grep 'kwq-dkms:'
	[ "$(loaded_version)" = "$V3" ] || fail "the loaded module is $(loaded_version), not $V3"
	dmesg | grep "kwq: version" | tail -2
	wait_until 30 test -e /dev/kwq || fail "no /dev/kwq after the reload"
	# shellcheck disable=SC2016 # sh -c expands it
	wait_until 30 sh -c '[ "$(stat -c "%G %a" /dev/kwq)" = "kwq 660" ]' ||
		fail "/dev/kwq is $(stat -c '%G %a' /dev/kwq) after the reload"
	systemctl start kwq-worker.service || fail "the service does not start on $V3"
	runuser -u $SVCUSER -- kwqctl add $Q after-upgrade
	wait_until 60 grep -qx after-upgrade /var/lib/kwqsvc/done.log || fail "no work done on $V3"
	[ -f "/usr/src/kwq-$V3/symvers/$KREL/Module.symvers" ] || fail "no Module.symvers for $V3"
	[ "$(ls -d /usr/src/kwq-*)" = "/usr/src/kwq-$V3" ] || fail "sources left: $(ls -d /usr/src/kwq-*)"
}

# Purge: nothing of kwq left on the system.
t_purge() {
	local left
	systemctl stop kwq-worker.service
	runuser -u $SVCUSER -- kwqctl destroy $Q
	systemctl enable --now kwq-metrics.timer
	wait_until 60 test -e /var/lib/prometheus/node-exporter/kwq.prom || fail "no kwq.prom to purge"
	DEBIAN_FRONTEND=noninteractive apt-get purge -y kwq-dkms kwqctl libkwq1 libkwq-dev 2>&1 | tail -12
	# What the test itself made goes first.
	userdel $SVCUSER
	rm -rf /etc/systemd/system/kwq-worker.service /usr/local/bin/kwq-handle /var/lib/kwqsvc
	systemctl daemon-reload
	dpkg -l | grep -E ' (kwq-dkms|kwqctl|libkwq1|libkwq-dev) ' && fail "packages left in dpkg"
	# /var/cache/man is man-db's: the cat pages t_man's man wrote there
	# go with its daily cron job, as every package's do.
	left=$(find / -xdev -name '*kwq*' -not -path "$S" -not -path "$S/*" \
		-not -path '/root/*' -not -path /mnt/kwqtest \
		-not -path '/var/cache/man/*' \
		-not -path '/etc/systemd/system/*kwq-system-test.service' 2>/dev/null)
	[ -z "$left" ] || fail "left behind: $(echo "$left" | tr '\n' ' ')"
	[ ! -e /var/lib/dkms/kwq ] || fail "/var/lib/dkms/kwq left"
	! getent group kwq || fail "the group kwq is left"
	! grep '^kwq ' /proc/modules || fail "kwq is still loaded"
	[ ! -e /dev/kwq ] || fail "/dev/kwq is left"
}

finish() {
	local n
	n=$(state n)
	while [ "$n" -lt $NCASES ]; do
		n=$((n + 1))
		setstate n "$n"
		out "not ok $n - not run (the guest test stopped early)"
		setstate failed $(($(state failed) + 1))
	done
	out "# $(state passed) passed, $(state failed) failed, $(state skipped) skipped"
	out "# kwq-system-test: done"
	systemctl --no-block poweroff
	exit 0
}

stage=$(state stage)
if [ "$stage" = 0 ]; then
	out "KTAP version 1"
	out "1..$NCASES"
	[ "$NCASES" = 13 ] ||
		out "# the short form: no upgrade cases (make check-system runs them)"
fi
out "# kwq-system-test: boot $((stage + 1)) ($KREL)"
case $stage in
0)
	setstate stage 1
	run_case "apt install of the four packages ($V1): DKMS builds kwq for $KREL, group kwq" t_install
	[ "$(state failed)" = 0 ] || finish
	out "# rebooting"
	systemctl --no-block reboot
	;;
1)
	setstate stage 2
	run_case "kwq $V1 loaded at boot (modules-load.d), DKMS's module" t_loaded
	run_case "/dev/kwq is root:kwq 0660; a user outside kwq gets EACCES" t_device
	run_case "a service user in kwq runs kwqctl work as a systemd service" t_service
	run_case "systemctl restart of the service loses no key" t_restart
	run_case "kwq-metrics.timer: node_exporter serves workqueue_adds_total{name=\"$Q\"}" t_metrics
	run_case "a consumer module builds against /usr/src/kwq-$V1 alone, loads, PASSes" t_consumer
	run_case "man kwqctl, man libkwq, man 4 kwq render" t_man
	if [ -n "$V2" ] && [ -n "$V3" ]; then
		run_case "upgrade to $V2 while a queue is in use: $V1 stays loaded, the queue works" t_upgrade_busy
		run_case "upgrade to $V3 with no queue: rebuilt and reloaded, /dev/kwq kwq 0660" t_upgrade_idle
	fi
	run_case "apt purge: no module, file, group or DKMS tree left" t_purge
	# Case 12: the module never splatted; case 13: the journal holds no
	# error of the packages' units.
	case_begin "no kernel warning, oops or BUG in this boot's log"
	dmesg | grep -E 'WARNING:|BUG:|Oops|Call Trace|general protection' >>"$S/diag"
	! [ -s "$S/diag" ]
	case_end $?
	case_begin "no failed systemd unit"
	systemctl --failed --no-legend >>"$S/diag"
	! [ -s "$S/diag" ]
	case_end $?
	finish
	;;
*)
	finish
	;;
esac
