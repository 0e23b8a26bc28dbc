#!/bin/sh
# The deadline chapter's "controller": job-2's first attempt hangs for 4s
# (the queue's processing timeout is 1s); everything else is quick.
key=$1
n=$(cat "/tmp/jobs/$key" 2>/dev/null || echo 0)
n=$((n + 1))
mkdir -p /tmp/jobs
echo $n >"/tmp/jobs/$key"
if [ "$key" = job-2 ] && [ $n = 1 ]; then
	echo "  $key: attempt $n hangs..." | tee -a /tmp/jobs.log
	sleep 4
	echo "  $key: attempt $n returns at last" | tee -a /tmp/jobs.log
	exit 0
fi
echo "  $key: attempt $n ok" | tee -a /tmp/jobs.log
