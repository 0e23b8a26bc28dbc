#!/bin/sh
# The demo story, run inside the VM after kwq.ko is loaded.
set -e
say() { printf '\n### %s\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }

say "A queue for our controller: exponential backoff 100ms..2s per key, max-of a 50 qps bucket"
run kwqctl create pods --limiter exponential:100ms:2s --limiter bucket:50:10 --mode 0600
run kwqctl list

say "The producer adds 10 keys; pod-1 twice (de-duplicated: still 10 queued)"
run kwqctl add pods pod-1 pod-2 pod-3 pod-4 pod-5 pod-6 pod-7 pod-8 pod-9 pod-10
run kwqctl add pods pod-1
printf 'len: '
kwqctl len pods

say "Two workers reconcile them; pod-3 and pod-7 fail twice and back off (100ms, 200ms)"
kwqctl work pods -j 2 --max-retries 5 -- /demo/reconcile.sh &
worker=$!

# Wait until every key is through: nothing ready, waiting or processing.
i=0
while [ $i -lt 300 ]; do
	s=$(kwqctl stats pods --json)
	case $s in
	*'"len": 0,'*'"waiting": 0,'*'"processing": 0,'*) break ;;
	esac
	sleep 0.1
	i=$((i + 1))
done

say "Everything reconciled: drain the queue, the workers exit"
run kwqctl shutdown pods --drain
wait $worker
echo "workers exited with status $?"

say "The queue's statistics: 14 adds (10 keys + 4 retries), latency histograms"
run kwqctl stats pods

say "The same in Prometheus text (client-go workqueue_* names)"
run kwqctl stats pods --prometheus
run kwqctl destroy pods

say "The same controller in Go: client-go's sample-controller worker pool, kwq's constructor (userspace/go/example)"
say "Every third key fails twice: AddRateLimited backs off 5ms, 10ms; success Forgets"
run go-example -queue go-pods -keys 9 -workers 2 -v
