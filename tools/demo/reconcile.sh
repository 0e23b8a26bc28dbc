#!/bin/sh
# The demo's "controller": reconciles one key. Keys ending in 3 or 7 fail
# their first two attempts (a flaky dependency), so kwq retries them with
# backoff; everything else succeeds at once.
key=$1
n=$(cat "/tmp/attempts/$key" 2>/dev/null || echo 0)
n=$((n + 1))
mkdir -p /tmp/attempts
echo $n >"/tmp/attempts/$key"
case $key in
*3 | *7)
	if [ $n -le 2 ]; then
		echo "  reconcile $key: attempt $n FAILED (dependency not ready)"
		exit 1
	fi
	;;
esac
echo "  reconcile $key: attempt $n ok (KWQ_KEY=$KWQ_KEY)"
