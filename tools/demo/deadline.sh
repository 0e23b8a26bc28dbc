#!/bin/sh
# The demo's processing deadline chapter: a worker hangs, the queue takes
# its key back at the deadline and the other worker reconciles it. Run by
# story.sh inside the VM.
set -e
say() { printf '\n### %s\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }

say "A queue whose keys must be done within 1s (controller-runtime#798: a reconcile timeout)"
run kwqctl create jobs --processing-timeout 1s --limiter exponential:100ms:2s

say "Two workers; job-2's first attempt hangs (a call that never returns)"
run kwqctl add jobs job-1 job-2 job-3
kwqctl work jobs -j 2 -- /demo/job.sh &
worker=$!

# Until job-2 was reconciled by the other worker.
i=0
while [ $i -lt 200 ] && ! grep -q 'job-2: attempt 2' /tmp/jobs.log 2>/dev/null; do
	sleep 0.1
	i=$((i + 1))
done
say "At 1s the queue took job-2 back from the hung worker, as a failure (backoff 100ms), and the other worker did it"
run kwqctl stats jobs
run sh -c 'kwqctl stats jobs --prometheus | grep processing_timeouts'

say "When the hung attempt finally returns, its worker learns the key is no longer its own (ESTALE)"
run kwqctl shutdown jobs --drain
wait $worker
echo "workers exited with status $?"
run kwqctl destroy jobs
