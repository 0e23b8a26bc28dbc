#!/bin/sh
# The demo story, run inside the VM after kwq.ko is loaded.
set -e
say() { printf '\n### %s\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }
# settled [all]: nothing ready or processing (with "all", nothing waiting
# either), 30 s at most
settled() {
	i=0
	while [ $i -lt 300 ]; do
		case $1:$(kwqctl stats pods --json) in
		all:*'"len":0,'*'"waiting":0,'*'"processing":0,'*) return 0 ;;
		some:*'"len":0,'*'"processing":0,'*) return 0 ;;
		esac
		sleep 0.1
		i=$((i + 1))
	done
}

say "A queue for our controller: exponential backoff 100ms..2s per key, max-of a 50 qps bucket; a key that fails after 3 retries goes to the dead set"
run kwqctl create pods --limiter exponential:100ms:2s --limiter bucket:50:10 --mode 0600 --max-retries 3
run kwqctl list

say "The producer adds 11 keys; pod-1 twice (de-duplicated: still 11 queued)"
run kwqctl add pods pod-1 pod-2 pod-3 pod-4 pod-5 pod-6 pod-7 pod-8 pod-9 pod-10 pod-13
run kwqctl add pods pod-1
printf 'len: '
kwqctl len pods

say "Two workers reconcile them; pod-3 and pod-7 fail twice and back off (100ms, 200ms); pod-13 never succeeds"
kwqctl work pods -j 2 -- /demo/reconcile.sh &
worker=$!
settled all

say "pod-13 is a poison key: after its 3 retries the queue keeps it in the dead set instead of retrying it forever"
run kwqctl dead pods

say "kwqctl inspect shows where every key is: one due in 10 minutes, a slow one being processed (by the worker's pid), the dead one"
run kwqctl add pods --after 10m pod-20
run kwqctl add pods pod-30
sleep 1
run kwqctl inspect pods

say "The spec of pod-13 is fixed: revive it; it runs again with its failure count reset"
touch /tmp/fixed
run kwqctl revive pods pod-13
settled some
run kwqctl inspect pods

say "Everything reconciled: drain the queue (pod-20's delay is dropped), the workers exit"
run kwqctl shutdown pods --drain
wait $worker
echo "workers exited with status $?"

say "The queue's statistics: adds, retries, the dead set's counters, latency histograms"
run kwqctl stats pods

say "The same in Prometheus text (client-go workqueue_* names)"
run kwqctl stats pods --prometheus
run kwqctl destroy pods

say "The same controller in Go: client-go's sample-controller worker pool, kwq's constructor (userspace/go/example)"
say "Every third key fails twice: AddRateLimited backs off 5ms, 10ms; success Forgets"
run go-example -queue go-pods -keys 9 -workers 2 -v
sh /demo/deadline.sh
