#!/bin/sh
# The demo's "controller": reconciles one key. Keys ending in 3 or 7 fail
# their first two attempts (a flaky dependency), so kwq retries them with
# backoff; pod-13 is poison: it fails until /tmp/fixed exists; pod-30 is
# slow (3 s); everything else succeeds at once.
key=$1
n=$(cat "/tmp/attempts/$key" 2>/dev/null || echo 0)
n=$((n + 1))
mkdir -p /tmp/attempts
echo $n >"/tmp/attempts/$key"
case $key in
pod-13)
	if [ ! -e /tmp/fixed ]; then
		echo "  reconcile $key: attempt $n FAILED (bad spec)"
		exit 1
	fi
	;;
*3 | *7)
	if [ $n -le 2 ]; then
		echo "  reconcile $key: attempt $n FAILED (dependency not ready)"
		exit 1
	fi
	;;
pod-30)
	sleep 3
	;;
esac
echo "  reconcile $key: attempt $n ok (KWQ_KEY=$KWQ_KEY)"
